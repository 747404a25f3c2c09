//! `catalog lint DIR --service ID --values FILE --set a.b=c`: one service rendered with a
//! config and its manifests printed, as `helm template --values --set` prints a chart's
//! (issue 23). The render is lint's own (`lint::render_with`), so what it prints is what lint
//! checked.
//!
//! `--set` reads as Helm's `strvals` does for dotted keys and scalars: `a.b=c,d=e` (a comma
//! separates assignments, `\,` and `\.` escape), `true`/`false` become booleans, `null`
//! removes the key, a decimal integer without a leading zero becomes a number, anything else
//! (floats included, as in Helm) a string; `--set-string` keeps every value a string. List
//! indexes (`a[0]=x`) and list values (`{a,b}`) are refused: use `--values`.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde_json::{Map, Value, json};

use super::{CliError, Stdout};
use crate::catalog::{Catalog, CatalogError};
use crate::lint::{self, Failed};
use crate::logger::say;
use crate::results::Severity;

/// The most `.`-separated keys of one `--set` path.
const MAX_SET_DEPTH: usize = 32;

/// The render options of `catalog lint`.
#[derive(Debug, Args, Clone, Default)]
pub(super) struct RenderArgs {
    /// Render only this service (its ID) and print its manifests, as `helm template` prints a
    /// chart's; needed when the catalog has several services and `--values` or `--set` is given
    #[arg(long, value_name = "ID")]
    service: Option<String>,
    /// A YAML file of the service's config (repeatable; later files win, maps are merged)
    #[arg(short = 'f', long = "values", value_name = "FILE")]
    values: Vec<PathBuf>,
    /// Set a config value, `a.b=c` (repeatable, or comma-separated), after `--values`, typed as
    /// Helm's `--set` types it: true/false, integers, null (removes the key), else a string
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// As `--set`, every value a string
    #[arg(long = "set-string", value_name = "KEY=VALUE")]
    set_string: Vec<String>,
}

impl RenderArgs {
    /// Whether one service is to be rendered and printed instead of linting them all.
    pub(super) fn wanted(&self) -> bool {
        self.service.is_some()
            || !self.values.is_empty()
            || !self.set.is_empty()
            || !self.set_string.is_empty()
    }

    /// Render the chosen service of the linted catalog (the last one merged: a catalog that
    /// lends it a pattern comes first) with the config given; `problems` are the load's.
    /// `paths`: how many catalogs were named.
    pub(super) fn run(
        &self,
        paths: usize,
        catalog: &Catalog,
        problems: &[CatalogError],
        cluster: &Map<String, Value>,
    ) -> Result<(), CliError> {
        let linted = catalog
            .bundles
            .last()
            .map(|b| b.origin.label())
            .unwrap_or_default();
        let linted = linted.as_str();
        if paths != 1 {
            return Err(CliError::Usage(
                "--service, --values and --set render one service: name one catalog".to_owned(),
            ));
        }
        for e in problems {
            say(e.severity, e);
        }
        if problems.iter().any(|e| !e.is_warning()) {
            return Err(CliError::Reported);
        }
        let own: Vec<&crate::catalog::Service> = catalog
            .services()
            .iter()
            .filter(|s| catalog.bundle_of(s).origin.label() == linted)
            .collect();
        let ids: Vec<&str> = own.iter().map(|s| s.definition.id.as_str()).collect();
        let service = match (&self.service, own.as_slice()) {
            (Some(id), _) => own.iter().find(|s| s.definition.id == *id).ok_or_else(|| {
                CliError::Usage(format!(
                    "--service {id}: {linted} has no such service{} (it has: {})",
                    crate::suggest::hint(id, ids.iter().copied()),
                    ids.join(", ")
                ))
            })?,
            (None, [one]) => one,
            (None, []) => {
                return Err(CliError::Usage(format!(
                    "{linted} has no services to render (ServiceDefinitions go in services/)"
                )));
            }
            (None, _) => {
                return Err(CliError::Usage(format!(
                    "{linted} has {} services: choose one with --service ({})",
                    own.len(),
                    ids.join(", ")
                )));
            }
        };
        let config = self.config()?;
        let id = &service.definition.id;
        let request = json!({"status": "enabled", "config": config});
        let renderer = crate::render::Renderer::new(catalog);
        let schemas = crate::service::Schemas::new();
        let cluster = Value::Object(cluster.clone());
        match lint::render_with(&renderer, &schemas, &cluster, service, &request) {
            Ok(done) => {
                for w in &done.warnings {
                    say(
                        Severity::Warning,
                        format_args!("service \"{id}\": {}: {}", w.path, w.message),
                    );
                }
                let mut out = String::new();
                for g in &done.objects {
                    let _ = write!(
                        out,
                        "---\n# Source: {}\n{}",
                        g.template,
                        crate::yaml::emit(&g.object)
                    );
                }
                Stdout::print(&out)
            }
            Err(Failed::Invalid(problems)) => {
                for p in &problems {
                    say(
                        Severity::Error,
                        format_args!("service \"{id}\": {}: {}", p.path, p.message),
                    );
                }
                Err(CliError::Reported)
            }
            Err(Failed::Render(errors)) => {
                for e in errors {
                    let at = e
                        .line
                        .map_or_else(|| e.template.clone(), |l| format!("{}:{l}", e.template));
                    say(
                        Severity::Error,
                        format_args!("{at}: rendering \"{id}\": {}", e.message),
                    );
                }
                Err(CliError::Reported)
            }
        }
    }

    /// The config: the `--values` files merged in order, then `--set` and `--set-string`.
    fn config(&self) -> Result<Value, CliError> {
        let mut config = Map::new();
        for path in &self.values {
            let label = path.display().to_string();
            let text = read_values(path)?;
            let docs = crate::yaml::parse_stream(&text)
                .map_err(|e| CliError::Usage(format!("--values {label}: {e}")))?;
            let mut docs: Vec<Value> = docs
                .into_iter()
                .map(|d| d.value)
                .filter(|v| !v.is_null())
                .collect();
            if docs.len() > 1 {
                return Err(CliError::Usage(format!(
                    "--values {label}: {} YAML documents; a values file is one map of config values",
                    docs.len()
                )));
            }
            // An empty file is no values, as for Helm.
            match docs.pop().unwrap_or_else(|| Value::Object(Map::new())) {
                Value::Object(map) => merge(&mut config, map),
                other => {
                    return Err(CliError::Usage(format!(
                        "--values {label}: must be a map of config values, not {}",
                        crate::strict::type_name(&other)
                    )));
                }
            }
        }
        for (list, typed) in [(&self.set, true), (&self.set_string, false)] {
            let flag = if typed { "--set" } else { "--set-string" };
            for text in list {
                for (keys, value) in parse_set(text, typed)
                    .map_err(|e| CliError::Usage(format!("{flag} {text}: {e}")))?
                {
                    set(&mut config, &keys, value)
                        .map_err(|e| CliError::Usage(format!("{flag} {text}: {e}")))?;
                }
            }
        }
        Ok(Value::Object(config))
    }
}

/// A values file, bounded as every input is (`KRM_CATALOG_MAX_INPUT_BYTES`).
fn read_values(path: &std::path::Path) -> Result<String, CliError> {
    use std::io::Read as _;
    let limit = crate::yaml::max_input_bytes();
    let mut text = String::new();
    fs_err::File::open(path)?
        .take(limit as u64 + 1)
        .read_to_string(&mut text)
        .map_err(|e| CliError::Usage(format!("--values {}: {e}", path.display())))?;
    if text.len() > limit {
        return Err(CliError::Usage(format!(
            "--values {}: larger than {limit} bytes (KRM_CATALOG_MAX_INPUT_BYTES)",
            path.display()
        )));
    }
    Ok(text)
}

/// Helm's coalescing of values files: maps merge key by key, anything else is replaced.
fn merge(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(Value::Object(a)), Value::Object(b)) => merge(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

/// Why a `--set` does not read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum SetError {
    #[error("expected KEY=VALUE in \"{0}\"")]
    NoValue(String),
    #[error("empty key in \"{0}\"")]
    EmptyKey(String),
    #[error("list indexes (\"{0}\") are not supported: give the list in a --values file")]
    Index(String),
    #[error("list values ({{…}}) are not supported: give the list in a --values file")]
    List,
    #[error("more than {MAX_SET_DEPTH} keys in \"{0}\"")]
    TooDeep(String),
    #[error("{0} is not a map, so {1} cannot be set in it")]
    NotAMap(String, String),
}

/// Split one `--set` text into its assignments: `(keys, value)`.
pub(super) fn parse_set(text: &str, typed: bool) -> Result<Vec<(Vec<String>, Value)>, SetError> {
    let mut out = Vec::new();
    for assignment in split_unescaped(text, ',') {
        let Some((key, raw)) = split_once_unescaped(&assignment, '=') else {
            return Err(SetError::NoValue(unescape(&assignment)));
        };
        if key.contains('[') {
            return Err(SetError::Index(unescape(&key)));
        }
        let keys: Vec<String> = split_unescaped(&key, '.')
            .iter()
            .map(|k| unescape(k))
            .collect();
        if keys.iter().any(String::is_empty) {
            return Err(SetError::EmptyKey(unescape(&key)));
        }
        if keys.len() > MAX_SET_DEPTH {
            return Err(SetError::TooDeep(unescape(&key)));
        }
        let raw = unescape(&raw);
        if typed && raw.starts_with('{') {
            return Err(SetError::List);
        }
        let value = if typed {
            typed_value(&raw)
        } else {
            Value::String(raw)
        };
        out.push((keys, value));
    }
    Ok(out)
}

/// Helm `strvals.typedVal` (pkg/strvals/parser.go): `true`, `false` and `null` in any case,
/// `0`, an int64 that does not start with `0`; else a string.
fn typed_value(raw: &str) -> Value {
    if raw.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if raw.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if raw.eq_ignore_ascii_case("null") {
        return Value::Null;
    }
    if raw == "0" {
        return json!(0);
    }
    if !raw.is_empty()
        && !raw.starts_with('0')
        && let Ok(n) = raw.parse::<i64>()
    {
        return json!(n);
    }
    Value::String(raw.to_owned())
}

/// Set `keys` to `value` (null removes the key, as Helm's `--set a=null` does).
fn set(config: &mut Map<String, Value>, keys: &[String], value: Value) -> Result<(), SetError> {
    let Some((last, parents)) = keys.split_last() else {
        return Ok(());
    };
    let mut at = config;
    for (i, key) in parents.iter().enumerate() {
        let entry = at
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if entry.is_null() {
            *entry = Value::Object(Map::new());
        }
        at = match entry {
            Value::Object(m) => m,
            _ => return Err(SetError::NotAMap(keys[..=i].join("."), keys.join("."))),
        };
    }
    if value.is_null() {
        at.remove(last);
    } else {
        at.insert(last.clone(), value);
    }
    Ok(())
}

/// Split at `sep` where it is not escaped by a backslash (escapes are kept).
fn split_unescaped(text: &str, sep: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut escaped = false;
    for c in text.chars() {
        let last = parts.last_mut();
        match (escaped, c, last) {
            (false, '\\', Some(p)) => {
                escaped = true;
                p.push(c);
            }
            (false, c, _) if c == sep => parts.push(String::new()),
            (_, c, Some(p)) => {
                escaped = false;
                p.push(c);
            }
            (_, _, None) => {}
        }
    }
    parts
}

fn split_once_unescaped(text: &str, sep: char) -> Option<(String, String)> {
    let mut parts = split_unescaped(text, sep).into_iter();
    let key = parts.next()?;
    let rest: Vec<String> = parts.collect();
    if rest.is_empty() {
        return None;
    }
    Some((key, rest.join(&sep.to_string())))
}

/// Drop the escaping backslashes.
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut escaped = false;
    for c in text.chars() {
        if c == '\\' && !escaped {
            escaped = true;
            continue;
        }
        escaped = false;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(sets: &[&str]) -> Result<Value, SetError> {
        let mut map = Map::new();
        for s in sets {
            for (keys, value) in parse_set(s, true)? {
                set(&mut map, &keys, value)?;
            }
        }
        Ok(Value::Object(map))
    }

    /// Helm's `strvals` typing (pkg/strvals/parser.go `typedVal`) for the forms we read.
    #[test]
    fn issue23_set_types_values_as_helm_does() {
        assert_eq!(
            config(&["a.b=c,n=10,t=TRUE,f=false,z=0,lead=007,fl=1.5,neg=-03,plus=+4,big=9223372036854775808,s=\"x\""]).unwrap(),
            json!({"a": {"b": "c"}, "n": 10, "t": true, "f": false, "z": 0, "lead": "007",
                "fl": "1.5", "neg": -3, "plus": 4, "big": "9223372036854775808", "s": "\"x\""})
        );
        assert_eq!(
            config(&["a.b=1", "a.c=2", "a.b=null"]).unwrap(),
            json!({"a": {"c": 2}})
        );
        assert_eq!(
            config(&[r"labels.app\.kubernetes\.io/name=web,msg=a\,b,eq=x=y"]).unwrap(),
            json!({"labels": {"app.kubernetes.io/name": "web"}, "msg": "a,b", "eq": "x=y"})
        );
        assert_eq!(
            parse_set("a=1", false).unwrap(),
            vec![(vec!["a".to_owned()], json!("1"))]
        );
    }

    #[test]
    fn issue23_set_refuses_what_it_does_not_read() {
        assert_eq!(config(&["a"]), Err(SetError::NoValue("a".into())));
        assert_eq!(config(&["a..b=1"]), Err(SetError::EmptyKey("a..b".into())));
        assert_eq!(config(&["a[0]=1"]), Err(SetError::Index("a[0]".into())));
        assert_eq!(config(&["a={x,y}"]), Err(SetError::List));
        assert_eq!(
            config(&["a=1", "a.b=2"]),
            Err(SetError::NotAMap("a".into(), "a.b".into()))
        );
        let deep = vec!["k"; MAX_SET_DEPTH + 1].join(".") + "=1";
        assert!(matches!(config(&[&deep]), Err(SetError::TooDeep(_))));
    }
}

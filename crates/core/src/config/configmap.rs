//! The kpt `ConfigMap` form of the function config (`kpt fn eval -- key=value`): the typed
//! config's settings under kebab-case keys in `data`, every value a string.

use serde_json::Value;

use super::{ApplyOrder, CONFIGMAP_KEYS, CatalogEntry, CatalogRef, Mode, Settings, UnknownFields};
use crate::diagnostics::FieldPath;
use crate::strict::{Problem, Reader};
use crate::suggest;

fn parse_bool(value: &str, path: &FieldPath, problems: &mut Vec<Problem>) -> Option<bool> {
    match value.trim() {
        "true" => Some(true),
        "false" => Some(false),
        other => {
            problems.push(Problem::new(
                path,
                format!("must be \"true\" or \"false\", not \"{other}\""),
            ));
            None
        }
    }
}

fn split_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// kpt `ConfigMap` form: kebab-case keys in `data`, lists comma-separated, `cluster.<key>` for
/// free-form cluster values.
pub(super) fn read_configmap(config: &Value, problems: &mut Vec<Problem>) -> Settings {
    let mut s = Settings::default();
    let data = config.get("data").cloned().unwrap_or(Value::Null);
    let r = Reader::new(&data, "data", problems);
    let map = r.map().clone();
    drop(r);
    for (key, value) in &map {
        let path = FieldPath::parse("data").key(key);
        let Some(text) = value.as_str() else {
            problems.push(Problem::new(
                &path,
                format!("must be a string, not {}", crate::strict::type_name(value)),
            ));
            continue;
        };
        if let Some(name) = key.strip_prefix("cluster.") {
            s.cluster
                .insert(name.to_owned(), Value::String(text.to_owned()));
            continue;
        }
        match key.as_str() {
            "catalogs" => {
                for (i, entry) in split_list(text).into_iter().enumerate() {
                    let field = path.index(i);
                    let source = match entry.parse::<CatalogRef>() {
                        Ok(source) => source,
                        Err(e) => {
                            problems.push(Problem::new(&field, e.to_string()));
                            continue;
                        }
                    };
                    s.catalogs.push(CatalogEntry {
                        source,
                        field,
                        standard_pattern: None,
                    });
                }
            }
            "trusted-catalogs" => s.trusted_catalogs = split_list(text),
            "builtin" => s.builtin = parse_bool(text, &path, problems).unwrap_or(s.builtin),
            "catalog-overwrite" => {
                s.catalog_overwrite = parse_bool(text, &path, problems).unwrap_or(false);
            }
            "cluster-type" => {
                s.cluster_type = Some(text.trim().to_owned()).filter(|t| !t.is_empty());
            }
            "offline" => s.offline = parse_bool(text, &path, problems).unwrap_or(false),
            "unknown-fields" => match UnknownFields::parse(text.trim()) {
                Some(mode) => s.unknown_fields = mode,
                None => problems.push(Problem::new(
                    &path,
                    format!(
                        "Unsupported value: \"{}\": supported values: \"Strict\", \"Warn\", \"Prune\"",
                        text.trim()
                    ),
                )),
            },
            "apply-order" => match ApplyOrder::parse(text.trim()) {
                Some(order) => s.apply_order = order,
                None => problems.push(Problem::new(
                    &path,
                    format!(
                        "Unsupported value: \"{}\": supported values: \"none\", \"kpt\"",
                        text.trim()
                    ),
                )),
            },
            "mode" => match text.trim() {
                "run" => s.functions.mode = Mode::Run,
                "pin" => s.functions.mode = Mode::Pin,
                other => problems.push(Problem::new(
                    &path,
                    format!("Unsupported value: \"{other}\": supported values: \"run\", \"pin\""),
                )),
            },
            "allow-exec" => {
                s.functions.allow_exec = parse_bool(text, &path, problems).unwrap_or(false);
            }
            "allow-inline-exec" => {
                s.functions.allow_inline_exec = parse_bool(text, &path, problems).unwrap_or(false);
            }
            "allow-network" => {
                s.functions.allow_network = parse_bool(text, &path, problems).unwrap_or(false);
            }
            "mounts" => s.functions.mounts = super::mounts::read_flags(text, &path, problems),
            "verify-tags" => {
                s.functions.verify_tags = parse_bool(text, &path, problems).unwrap_or(false);
            }
            "allow-unpinned" => {
                s.functions.allow_unpinned = parse_bool(text, &path, problems).unwrap_or(false);
            }
            "container-engine" => match text.trim() {
                e @ ("docker" | "podman") => e.clone_into(&mut s.functions.container_engine),
                other => problems.push(Problem::new(
                    &path,
                    format!(
                        "Unsupported value: \"{other}\": supported values: \"docker\", \"podman\""
                    ),
                )),
            },
            _ => {
                let hint = suggest::hint(key, CONFIGMAP_KEYS.iter().copied());
                problems.push(Problem::new(&path, format!("unknown key \"{key}\"{hint}; free-form cluster values are written cluster.<key>")));
            }
        }
    }
    s
}

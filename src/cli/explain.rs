//! `krm-catalog explain KIND[.field.path]`, in the shape of `kubectl explain`: service kinds,
//! `ServiceSet`, `ResolveCatalog`, and the function kinds of the catalogs given (their
//! versions' `openAPIV3Schema`).

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Value};

use super::catalog_view::Format;
use super::{CatalogArgs, CliError, ExplainError, Stdout, load_for_command};
use crate::catalog::schema::{self, Flavor};
use crate::catalog::{Catalog, Kind};
use crate::gvk::Gvk;

/// The schema of a kind given by name (case-insensitive), or a service ID.
pub fn schema_for_kind(
    catalog: &Catalog,
    kind: &str,
    flavor: Flavor,
) -> Result<Value, ExplainError> {
    if kind.eq_ignore_ascii_case("ServiceSet") {
        return Ok(schema::service_set(catalog, flavor));
    }
    if kind.eq_ignore_ascii_case(crate::config::KIND) {
        return Ok(crate::config::json_schema());
    }
    let found = catalog
        .services()
        .iter()
        .find(|s| s.definition.gvk.kind.eq_ignore_ascii_case(kind) || s.definition.id == kind);
    if let Some(s) = found {
        return Ok(schema::service_object(s, flavor));
    }
    if let Some(found) = function_kind(catalog, kind, flavor) {
        return found;
    }
    let mut kinds: Vec<&str> = vec!["ServiceSet", crate::config::KIND];
    kinds.extend(
        catalog
            .services()
            .iter()
            .map(|s| s.definition.gvk.kind.as_str()),
    );
    for (gvk, k) in catalog.kinds() {
        if matches!(k, Kind::Function { .. }) && !kinds.contains(&gvk.kind.as_str()) {
            kinds.push(gvk.kind.as_str());
        }
    }
    Err(ExplainError::UnknownKind {
        kind: kind.to_owned(),
        hint: crate::suggest::hint(kind, kinds.iter().copied()),
        known: kinds.join(", "),
    })
}

/// The schema of the function kind of that name (case-insensitive): of its versions, the
/// preferred one (kubectl's order: GA, then beta, then alpha, higher numbers first) among
/// those with a schema. `None`: no function kind of that name; `Some(Err)`: none of its
/// versions has a schema.
fn function_kind(
    catalog: &Catalog,
    kind: &str,
    flavor: Flavor,
) -> Option<Result<Value, ExplainError>> {
    let versions: Vec<(&Gvk, Option<_>)> = catalog
        .kinds()
        .into_iter()
        .filter_map(|(gvk, k)| match k {
            Kind::Function { schema, .. } if gvk.kind.eq_ignore_ascii_case(kind) => {
                Some((gvk, schema.as_deref()))
            }
            _ => None,
        })
        .collect();
    let first = versions.first()?.0;
    let preferred = versions
        .iter()
        .filter_map(|(gvk, s)| s.map(|s| (*gvk, s)))
        .min_by_key(|(gvk, _)| version_priority(&gvk.version));
    let preferred = preferred.map(|(gvk, s)| schema::function_object(gvk, s, flavor));
    Some(preferred.ok_or_else(|| {
        ExplainError::NoSchema {
            kind: first.kind.clone(),
            versions: versions
                .iter()
                .map(|(gvk, _)| gvk.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }))
}

/// Sort key of a Kubernetes version, smallest first: `v2` < `v1` < `v1beta2` < `v1beta1` <
/// `v1alpha1` < anything else (by name) (apimachinery `CompareKubeAwareVersionStrings`).
fn version_priority(version: &str) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, String) {
    let parsed = version.strip_prefix('v').and_then(|rest| {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        let (class, minor) = if tail.is_empty() {
            (0, "0")
        } else if let Some(n) = tail.strip_prefix("beta") {
            (1, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (2, n)
        } else {
            return None;
        };
        Some((class, major, minor.parse::<u64>().ok()?))
    });
    match parsed {
        Some((class, major, minor)) => (
            class,
            std::cmp::Reverse(major),
            std::cmp::Reverse(minor),
            String::new(),
        ),
        None => (
            3,
            std::cmp::Reverse(0),
            std::cmp::Reverse(0),
            version.to_owned(),
        ),
    }
}

fn type_of(node: &Value) -> String {
    if node
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return "IntOrString".into();
    }
    let t = match node.get("type") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .find(|s| *s != "null")
            .unwrap_or("")
            .to_owned(),
        _ => String::new(),
    };
    match t.as_str() {
        "object" => match node.get("additionalProperties") {
            Some(ap @ Value::Object(_)) if node.get("properties").is_none() => {
                format!("map[string]{}", type_of(ap))
            }
            _ => "Object".into(),
        },
        "array" => format!(
            "[]{}",
            node.get("items").map_or_else(|| "Object".into(), type_of)
        ),
        "" => {
            if node.get("enum").is_some() {
                "string".into()
            } else {
                "Object".into()
            }
        }
        other => other.into(),
    }
}

fn describe(node: &Value) -> String {
    let mut text = node
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("<empty>")
        .to_owned();
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        let list: Vec<String> = values.iter().map(Value::to_string).collect();
        let _ = write!(text, "\nValues: {}", list.join(", "));
    }
    if let Some(format) = node.get("format").and_then(Value::as_str) {
        let _ = write!(text, "\nFormat: {format}");
    }
    if let Some(default) = node.get("default") {
        let _ = write!(text, "\nDefault: {default}");
    }
    text
}

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How deep `--recursive` goes (schemas are trees; this only bounds a pathological one).
const MAX_RECURSIVE_DEPTH: usize = 64;

/// The fields under `node` as `kubectl explain --recursive` lists them (kubectl's
/// `plaintext.tmpl`, `fieldList` with `short`): one line each, `name<TAB><type>` with
/// ` -required-` and an `enum:` line, indented two spaces per level, no descriptions; array
/// items and map values are followed at the same level. In schema order, as `explain` lists
/// fields here (kubectl sorts them by name).
fn field_tree(node: &Value, depth: usize, out: &mut String) {
    let Some((props, required)) = fields_below(node) else {
        return;
    };
    if depth >= MAX_RECURSIVE_DEPTH {
        let _ = writeln!(out, "{}...", "  ".repeat(depth + 1));
        return;
    }
    for (name, prop) in props {
        let req = if required.contains(&name.as_str()) {
            " -required-"
        } else {
            ""
        };
        let pad = "  ".repeat(depth + 1);
        let _ = writeln!(out, "{pad}{name}\t<{}>{req}", type_of(prop));
        // kubectl's short enum line: the first four values, then `, ....`.
        if let Some(values) = prop.get("enum").and_then(Value::as_array) {
            let shown: Vec<String> = values
                .iter()
                .take(4)
                .map(|v| match v {
                    Value::String(s) if s.is_empty() => "\"\"".to_owned(),
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            let more = if values.len() > 4 { ", ...." } else { "" };
            let _ = writeln!(out, "{pad}enum: {}{more}", shown.join(", "));
        }
        field_tree(prop, depth + 1, out);
    }
}

/// The fields below `node` and the names of those required: its own, else those of its array
/// items or map values (followed at the same level, as `kubectl explain --recursive` does).
fn fields_below(node: &Value) -> Option<(&Map<String, Value>, Vec<&str>)> {
    let node = node
        .get("items")
        .filter(|_| node.get("properties").is_none())
        .unwrap_or(node);
    let node = match node.get("additionalProperties") {
        Some(ap @ Value::Object(_)) if node.get("properties").is_none() => ap,
        _ => node,
    };
    let props = node.get("properties").and_then(Value::as_object)?;
    let required = node
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    Some((props, required))
}

/// `explain -o yaml|json`: what the text says, as data, and the schema below the field.
#[derive(Debug, Serialize)]
struct Explained<'a> {
    /// The API group (`null` for the core group).
    group: Option<&'a str>,
    kind: &'a str,
    version: &'a str,
    /// The field path asked for below the kind (`spec.config`), `null` for the kind itself.
    field: Option<String>,
    /// Its type as `kubectl explain` names it (`Object`, `string`, `[]Object`, `map[string]string`).
    #[serde(rename = "type")]
    type_name: String,
    description: Option<&'a str>,
    /// Its fields; with `--recursive`, each with its own.
    fields: Vec<Field<'a>>,
    /// The OpenAPI v3 schema of the kind or field, defaults included.
    schema: &'a Value,
}

/// One field of an [`Explained`].
#[derive(Debug, Serialize)]
struct Field<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    type_name: String,
    required: bool,
    description: Option<&'a str>,
    default: Option<&'a Value>,
    /// The values it allows (`[]`: any).
    #[serde(rename = "enum")]
    values: &'a [Value],
    format: Option<&'a str>,
    /// Its own fields (`[]` without `--recursive`).
    fields: Vec<Field<'a>>,
}

/// The fields below `node`, down to `depth` levels more (bounded by [`MAX_RECURSIVE_DEPTH`]).
fn fields(node: &Value, depth: usize) -> Vec<Field<'_>> {
    let Some((props, required)) = fields_below(node).filter(|_| depth > 0) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| Field {
            name,
            type_name: type_of(prop),
            required: required.contains(&name.as_str()),
            description: prop.get("description").and_then(Value::as_str),
            default: prop.get("default"),
            values: prop
                .get("enum")
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice),
            format: prop.get("format").and_then(Value::as_str),
            fields: fields(prop, depth - 1),
        })
        .collect()
}

/// Run `explain`.
pub fn run(
    target: &str,
    recursive: bool,
    output: Format,
    args: &CatalogArgs,
) -> Result<(), CliError> {
    let catalog = load_for_command(args)?;
    let mut parts = target.split('.');
    let kind = parts.next().unwrap_or_default();
    let root = schema_for_kind(&catalog, kind, Flavor::Explain)?;
    let mut node = &root;
    let mut walked = Vec::new();
    for part in parts {
        let mut next = node.get("properties").and_then(|p| p.get(part));
        if next.is_none()
            && let Some(items) = node.get("items")
        {
            next = items.get("properties").and_then(|p| p.get(part));
        }
        if next.is_none()
            && let Some(ap @ Value::Object(_)) = node.get("additionalProperties")
        {
            next = Some(ap);
        }
        if let Some(n) = next {
            node = n;
            walked.push(part);
        } else {
            let fields: Vec<&str> = node
                .get("properties")
                .and_then(Value::as_object)
                .map(|m| m.keys().map(String::as_str).collect())
                .unwrap_or_default();
            return Err(ExplainError::UnknownField {
                field: part.to_owned(),
                kind: kind.to_owned(),
                walked: walked.join("."),
                hint: crate::suggest::hint(part, fields.iter().copied()),
            }
            .into());
        }
    }
    let api_version = root
        .get("properties")
        .and_then(|p| p.get("apiVersion"))
        .and_then(|a| a.get("enum"))
        .and_then(|e| e.get(0))
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind_name = root.get("title").and_then(Value::as_str).unwrap_or(kind);
    let (group, version) = crate::gvk::split_api_version(api_version);
    if output != Format::Text {
        let document = Explained {
            group: Some(group).filter(|g| !g.is_empty()),
            kind: kind_name,
            version,
            field: Some(walked.join(".")).filter(|w| !w.is_empty()),
            type_name: type_of(node),
            description: node.get("description").and_then(Value::as_str),
            fields: fields(node, if recursive { MAX_RECURSIVE_DEPTH } else { 1 }),
            schema: node,
        };
        return Stdout::print(&super::catalog_view::render(&document, output));
    }
    let mut out = String::new();
    if !group.is_empty() {
        let _ = writeln!(out, "GROUP:      {group}");
    }
    let _ = writeln!(out, "KIND:       {kind_name}");
    let _ = writeln!(out, "VERSION:    {version}\n");
    if let Some(last) = walked.last() {
        let _ = writeln!(out, "FIELD: {last} <{}>\n", type_of(node));
    }
    let _ = writeln!(out, "DESCRIPTION:\n{}\n", indent(&describe(node), 4));
    if recursive {
        let _ = writeln!(out, "FIELDS:");
        field_tree(node, 0, &mut out);
        return Stdout::print(&out);
    }
    let fields_node = node
        .get("items")
        .filter(|_| node.get("properties").is_none())
        .unwrap_or(node);
    if let Some(props) = fields_node.get("properties").and_then(Value::as_object) {
        let required: Vec<&str> = fields_node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let _ = writeln!(out, "FIELDS:");
        for (name, prop) in props {
            let req = if required.contains(&name.as_str()) {
                " -required-"
            } else {
                ""
            };
            let _ = writeln!(out, "  {name}\t<{}>{req}", type_of(prop));
            let _ = writeln!(out, "{}\n", indent(&describe(prop), 4));
        }
    }
    Stdout::print(&out)
}

#[cfg(test)]
mod tests {
    use super::version_priority;

    /// Issue 11: `explain Resize` shows the version kubectl would prefer.
    #[test]
    fn issue11_versions_sort_as_kubectl_prefers_them() {
        let mut versions = vec![
            "v1alpha1",
            "v1",
            "foo",
            "v2beta1",
            "v1beta2",
            "v2",
            "v1beta1",
            "v10alpha2",
            "bar",
        ];
        versions.sort_by_key(|v| version_priority(v));
        assert_eq!(
            versions,
            [
                "v2",
                "v1",
                "v2beta1",
                "v1beta2",
                "v1beta1",
                "v10alpha2",
                "v1alpha1",
                "bar",
                "foo"
            ]
        );
    }
}

//! Conversion of a CRD schema to a JSON Schema (draft 7) that behaves like the kube-openapi
//! validator.
//!
//! Imports `structural` and `formats`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::formats::{FORMAT_PREFIX, string_format};
use super::structural::map_subschemas;

/// Convert a (checked) CRD schema to JSON Schema. Also used for whole generated schemas.
///
/// Only CRD constructs are rewritten; other keywords (`$ref`, `$defs`, `$schema`, `const`, ...)
/// pass through, and sub-schemas under them are converted too. Converting twice is a no-op.
#[must_use]
pub fn to_json_schema(raw: &Value) -> Value {
    convert(raw)
}

fn convert(v: &Value) -> Value {
    let Value::Object(m) = v else {
        return v.clone();
    };
    let flag = |k: &str| m.get(k).and_then(Value::as_bool).unwrap_or(false);
    let nullable = flag("nullable");
    let int_or_string = flag("x-kubernetes-int-or-string");
    let embedded = flag("x-kubernetes-embedded-resource");
    let exclusive_min = m.get("exclusiveMinimum").and_then(Value::as_bool);
    let exclusive_max = m.get("exclusiveMaximum").and_then(Value::as_bool);
    let types = node_types(m.get("type"), int_or_string);

    let mut out = Map::new();
    if int_or_string && !m.contains_key("type") {
        out.insert("type".to_owned(), convert_type(None, nullable, true));
    }
    for (k, val) in m {
        match k.as_str() {
            "nullable" | "default" | "example" | "externalDocs" => {}
            // What yaml-language-server shows on a deprecated field (an annotation to draft-07
            // validators, which ignore it).
            super::DEPRECATED_KEYWORD => {
                out.insert("deprecationMessage".to_owned(), val.clone());
            }
            _ if k.starts_with("x-kubernetes-") => {}
            "type" => {
                out.insert(k.clone(), convert_type(Some(val), nullable, int_or_string));
            }
            "format" => insert_format(&mut out, val, &types),
            // OpenAPI 3.0 boolean exclusives become the numeric draft-6+ form.
            "minimum" if exclusive_min == Some(true) => {
                out.insert("exclusiveMinimum".to_owned(), val.clone());
            }
            "maximum" if exclusive_max == Some(true) => {
                out.insert("exclusiveMaximum".to_owned(), val.clone());
            }
            "exclusiveMinimum" | "exclusiveMaximum" if val.is_boolean() => {}
            // Subschemas are converted too; anything else passes through.
            _ => {
                let converted = map_subschemas(k, val, convert).unwrap_or_else(|| val.clone());
                out.insert(k.clone(), converted);
            }
        }
    }
    if int_or_string {
        drop_int_or_string_patterns(&mut out);
    }
    if embedded {
        add_embedded_requirements(&mut out);
    }
    // CRD nodes (typed, or untyped int-or-string / preserve-unknown-fields ones).
    let crd_node = nullable
        || int_or_string
        || flag("x-kubernetes-preserve-unknown-fields")
        || m.get("type").is_some_and(Value::is_string);
    if crd_node {
        skip_junctors_for_null(&mut out);
    }
    Value::Object(out)
}

/// Keep a Kubernetes format under our checker's name; drop the ones Kubernetes ignores.
fn insert_format(out: &mut Map<String, Value>, val: &Value, types: &BTreeSet<String>) {
    let Some(f) = val.as_str() else {
        out.insert("format".to_owned(), val.clone());
        return;
    };
    if let Some(name) = convert_format(f, types) {
        out.insert("format".to_owned(), Value::String(name));
    }
}

/// The validator's `type`: int-or-string becomes `[integer, string]`, nullable adds `null`.
fn convert_type(t: Option<&Value>, nullable: bool, int_or_string: bool) -> Value {
    let mut types: Vec<Value> = if int_or_string {
        vec!["integer".into(), "string".into()]
    } else {
        match t {
            Some(Value::String(s)) => vec![Value::String(s.clone())],
            Some(Value::Array(a)) => a.clone(),
            Some(other) => return other.clone(),
            None => Vec::new(),
        }
    };
    if nullable && !types.iter().any(|t| t == "null") {
        types.push("null".into());
    }
    match types.len() {
        1 if !matches!(t, Some(Value::Array(_))) => types.swap_remove(0),
        _ => Value::Array(types),
    }
}

/// The non-null types a node accepts (empty for untyped nodes).
pub(super) fn node_types(t: Option<&Value>, int_or_string: bool) -> BTreeSet<String> {
    if int_or_string {
        return ["integer", "string"]
            .into_iter()
            .map(str::to_owned)
            .collect();
    }
    match t {
        Some(Value::String(s)) => std::iter::once(s.clone()).collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .filter(|s| *s != "null")
            .map(str::to_owned)
            .collect(),
        _ => BTreeSet::new(),
    }
}

/// Our checker's name for a `format` value on a node of `types`; `None` when Kubernetes does
/// not check it.
///
/// kube-openapi applies a format to strings only (`pkg/validation/validate/formats.go`,
/// `formatValidator.Applies`: `kind == reflect.String && KnownFormats.ContainsName(...)`), and
/// its registry (`pkg/validation/strfmt/default.go`) has no `int32`, `int64`, `float` or
/// `double`: `format: int32` on an integer is documentation, never a range check.
pub(super) fn convert_format(format: &str, types: &BTreeSet<String>) -> Option<String> {
    // Already converted (idempotence for generated documents).
    if let Some(rest) = format.strip_prefix(FORMAT_PREFIX)
        && string_format(rest).is_some()
    {
        return Some(format.to_owned());
    }
    // go-openapi normalises format names by dropping dashes (`date-time` ≡ `datetime`).
    let normalized = format.replace('-', "");
    ((types.is_empty() || types.contains("string")) && string_format(&normalized).is_some())
        .then(|| format!("{FORMAT_PREFIX}{normalized}"))
}

fn drop_int_or_string_patterns(out: &mut Map<String, Value>) {
    let is_pattern = |v: Option<&Value>| {
        v.and_then(Value::as_array)
            .is_some_and(|a| is_int_or_string_pattern(&a.iter().collect::<Vec<_>>()))
    };
    // The `type` already says integer-or-string; the pattern's branches would reject `null`.
    if is_pattern(out.get("anyOf")) {
        out.shift_remove("anyOf");
    }
    if let Some(Value::Array(all_of)) = out.get_mut("allOf")
        && let Some(Value::Object(first)) = all_of.first_mut()
        && is_pattern(first.get("anyOf"))
    {
        first.shift_remove("anyOf");
    }
}

fn add_embedded_requirements(out: &mut Map<String, Value>) {
    let required = out
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = required {
        for name in ["apiVersion", "kind"] {
            if !list.iter().any(|v| v == name) {
                list.push(Value::String(name.to_owned()));
            }
        }
    }
    let properties = out
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(props) = properties {
        for name in ["apiVersion", "kind"] {
            props
                .entry(name)
                .or_insert_with(|| serde_json::json!({"type": "string"}));
        }
    }
}

/// kube-openapi runs only the type and enum checks on `null`; keep junctors away from it.
///
/// Only applied to CRD nodes: an untyped generated node may rely on its junctors for typing.
fn skip_junctors_for_null(out: &mut Map<String, Value>) {
    if out.contains_key("if") || out.contains_key("else") {
        return;
    }
    let mut junctors = Map::new();
    for k in ["allOf", "anyOf", "oneOf", "not"] {
        if let Some(v) = out.shift_remove(k) {
            junctors.insert(k.to_owned(), v);
        }
    }
    if !junctors.is_empty() {
        out.insert("if".to_owned(), serde_json::json!({"type": "null"}));
        out.insert("else".to_owned(), Value::Object(junctors));
    }
}

/// `anyOf: [{type: integer}, {type: string}]` exactly (upstream `intOrStringAnyOf`).
pub(super) fn is_int_or_string_pattern(list: &[&Value]) -> bool {
    let only_type = |v: &Value, t: &str| {
        v.as_object()
            .is_some_and(|m| m.len() == 1 && m.get("type").and_then(Value::as_str) == Some(t))
    };
    list.len() == 2 && only_type(list[0], "integer") && only_type(list[1], "string")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::*;
    use serde_json::json;

    // --- Conversion ---

    #[test]
    fn conversion_nullable() {
        assert_eq!(
            to_json_schema(&json!({"type": "string", "nullable": true})),
            json!({"type": ["string", "null"]})
        );
        // Enums stay as they are: Kubernetes rejects null on a nullable enum.
        assert_eq!(
            to_json_schema(&json!({"type": "string", "nullable": true, "enum": ["a"]})),
            json!({"type": ["string", "null"], "enum": ["a"]})
        );
        assert_eq!(
            to_json_schema(&json!({"type": "string", "nullable": false})),
            json!({"type": "string"})
        );
        // Junctors do not run on null in kube-openapi.
        assert_eq!(
            to_json_schema(
                &json!({"type": "string", "nullable": true, "anyOf": [{"minLength": 2}, {"maxLength": 0}]})
            ),
            json!({"type": ["string", "null"], "if": {"type": "null"}, "else": {"anyOf": [{"minLength": 2}, {"maxLength": 0}]}})
        );
    }

    #[test]
    fn conversion_int_or_string() {
        assert_eq!(
            to_json_schema(&json!({"x-kubernetes-int-or-string": true})),
            json!({"type": ["integer", "string"]})
        );
        assert_eq!(
            to_json_schema(
                &json!({"x-kubernetes-int-or-string": true, "nullable": true, "anyOf": [{"type": "integer"}, {"type": "string"}]})
            ),
            json!({"type": ["integer", "string", "null"]})
        );
        assert_eq!(
            to_json_schema(
                &json!({"x-kubernetes-int-or-string": true, "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "^x"}]})
            ),
            json!({"type": ["integer", "string"], "if": {"type": "null"}, "else": {"allOf": [{}, {"pattern": "^x"}]}})
        );
        assert_eq!(
            to_json_schema(&json!({"type": "string", "x-kubernetes-int-or-string": true})),
            json!({"type": ["integer", "string"]})
        );
    }

    #[test]
    fn conversion_exclusive_bounds() {
        assert_eq!(
            to_json_schema(&json!({"type": "integer", "minimum": 1, "exclusiveMinimum": true})),
            json!({"type": "integer", "exclusiveMinimum": 1})
        );
        assert_eq!(
            to_json_schema(&json!({"type": "integer", "exclusiveMaximum": true, "maximum": 9})),
            json!({"type": "integer", "exclusiveMaximum": 9})
        );
        assert_eq!(
            to_json_schema(&json!({"type": "integer", "minimum": 1, "exclusiveMinimum": false})),
            json!({"type": "integer", "minimum": 1})
        );
        assert_eq!(
            to_json_schema(&json!({"type": "integer", "exclusiveMaximum": true})),
            json!({"type": "integer"})
        );
    }

    #[test]
    fn conversion_formats() {
        let f = |t: Value, format: &str| to_json_schema(&json!({"type": t, "format": format}));
        assert_eq!(
            f(json!("string"), "email"),
            json!({"type": "string", "format": "krm-email"})
        );
        assert_eq!(
            f(json!("string"), "date-time"),
            json!({"type": "string", "format": "krm-datetime"})
        );
        assert_eq!(
            f(json!("string"), "datetime"),
            json!({"type": "string", "format": "krm-datetime"})
        );
        assert_eq!(
            f(json!("string"), "k8s-short-name"),
            json!({"type": "string", "format": "krm-k8sshortname"})
        );
        assert_eq!(
            f(json!("string"), "uri-reference"),
            json!({"type": "string"})
        );
        assert_eq!(f(json!("string"), "int32"), json!({"type": "string"}));
        // Formats constrain strings only (kube-openapi formatValidator.Applies).
        assert_eq!(f(json!("integer"), "int32"), json!({"type": "integer"}));
        assert_eq!(f(json!("integer"), "email"), json!({"type": "integer"}));
        assert_eq!(f(json!("integer"), "double"), json!({"type": "integer"}));
        assert_eq!(f(json!("number"), "float"), json!({"type": "number"}));
        assert_eq!(
            to_json_schema(&json!({"format": "uuid"})),
            json!({"format": "krm-uuid"})
        );
    }

    #[test]
    fn conversion_strips_crd_only_keywords() {
        assert_eq!(
            to_json_schema(
                &json!({"type": "object", "title": "T", "description": "D", "default": {}, "example": {}, "externalDocs": {"url": "u"},
                "x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-map-type": "atomic",
                "x-kubernetes-validations": [{"rule": "true"}],
                "properties": {"a": {"type": "string", "default": "x"}}})
            ),
            json!({"type": "object", "title": "T", "description": "D", "properties": {"a": {"type": "string"}}})
        );
    }

    #[test]
    fn conversion_embedded_resource() {
        assert_eq!(
            to_json_schema(
                &json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true})
            ),
            json!({"type": "object", "required": ["apiVersion", "kind"], "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}}})
        );
    }

    #[test]
    fn conversion_recurses_everywhere() {
        let n = json!({"type": "string", "nullable": true});
        let want = json!({"type": ["string", "null"]});
        let raw = json!({"properties": {"p": n}, "additionalProperties": n, "items": n,
            "allOf": [n], "anyOf": [n], "oneOf": [n], "not": n});
        assert_eq!(
            to_json_schema(&raw),
            json!({"properties": {"p": want}, "additionalProperties": want, "items": want,
                "allOf": [want], "anyOf": [want], "oneOf": [want], "not": want})
        );
        // Typed CRD nodes keep their junctors away from null.
        assert_eq!(
            to_json_schema(&json!({"type": "object", "not": {"required": ["a"]}})),
            json!({"type": "object", "if": {"type": "null"}, "else": {"not": {"required": ["a"]}}})
        );
    }

    #[test]
    fn conversion_of_generated_documents() {
        let doc = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "mem://config.schema.json",
            "$ref": "#/$defs/Config",
            "$defs": {"Config": {"type": "object", "additionalProperties": false, "properties": {
                "services": {"$ref": "#/$defs/Services"}}},
                "Services": {"type": "object", "properties": {"a": {"type": "string", "nullable": true, "format": "email"}}}},
            "definitions": {"X": {"const": 1}}
        });
        let converted = to_json_schema(&doc);
        assert_eq!(converted["$schema"], doc["$schema"]);
        assert_eq!(converted["$ref"], doc["$ref"]);
        assert_eq!(converted["$defs"]["Config"], doc["$defs"]["Config"]);
        assert_eq!(converted["definitions"], doc["definitions"]);
        assert_eq!(
            converted["$defs"]["Services"]["properties"]["a"],
            json!({"type": ["string", "null"], "format": "krm-email"})
        );
        assert_eq!(
            to_json_schema(&converted),
            converted,
            "conversion is idempotent"
        );
        let v = compile(&converted).unwrap();
        let errs = validate_with(
            &v,
            &converted,
            &json!({"services": {"a": "nope"}, "servics": {}}),
        );
        assert_eq!(
            errs.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                r#"services.a: Invalid value: "nope": services.a in body must be of type email: "nope""#,
                r#"servics: unknown field "servics" (did you mean "services"?)"#
            ]
        );
    }

    #[test]
    fn conversion_is_idempotent_for_crd_nodes() {
        let raw = json!({"type": "object", "properties": {
            "a": {"x-kubernetes-int-or-string": true, "nullable": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "b": {"type": "integer", "format": "int64", "minimum": 0, "exclusiveMinimum": true},
            "c": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
            "d": {"type": "string", "nullable": true, "oneOf": [{"minLength": 1}], "format": "date"}}});
        let once = to_json_schema(&raw);
        assert_eq!(to_json_schema(&once), once);
    }
}

//! Deprecation warnings (issue 23, KEP-5975's warnings): a deprecated service
//! (`spec.deprecated`, `spec.deprecationWarning`) and a deprecated config field (the schema
//! keyword [`DEPRECATED_KEYWORD`]) give a warning result when used, as the apiserver warns
//! for a deprecated CRD version or a deprecated field of a built-in type.

use serde_json::Value;

use super::definition::ServiceDefinition;
use crate::diagnostics::FieldPath;
pub use crate::schema::DEPRECATED_KEYWORD;
use crate::strict::Problem;

/// The warnings of one instance as the user wrote it (`raw`: before defaulting, so a default
/// the catalog fills in never warns), at `path` (`spec`, `spec.services.<id>`). `enabled`:
/// whether the instance renders (a disabled service is not used).
pub fn warnings(
    def: &ServiceDefinition,
    raw: &Value,
    path: &FieldPath,
    enabled: bool,
) -> Vec<Problem> {
    let mut out = Vec::new();
    if !enabled {
        return out;
    }
    if let Some(w) = &def.deprecation {
        out.push(Problem::new(path, w.clone()));
    }
    if let (Some(schema), Some(config), true) =
        (&def.config_schema, raw.get("config"), def.deprecated_fields)
    {
        fields(schema.raw(), config, &path.key("config"), &mut out);
    }
    out
}

/// The deprecated fields set in `value`, following its schema's `properties`,
/// `additionalProperties` and `items` (so at most as deep as the schema).
pub fn fields(schema: &Value, value: &Value, path: &FieldPath, out: &mut Vec<Problem>) {
    if let Some(w) = schema.get(DEPRECATED_KEYWORD).and_then(Value::as_str) {
        out.push(Problem::new(path, format!("deprecated: {w}")));
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (key, v) in map {
                let sub = properties.and_then(|p| p.get(key)).or(additional);
                if let Some(sub) = sub {
                    fields(sub, v, &path.key(key), out);
                }
            }
        }
        Value::Array(list) => {
            if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
                for (i, v) in list.iter().enumerate() {
                    fields(items, v, &path.index(i), out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn issue23_deprecated_fields_are_found_where_they_are_set() {
        let schema = json!({"type": "object", "properties": {
            "old": {"type": "string", "x-krm-catalog-deprecated": "use new"},
            "new": {"type": "string"},
            "ports": {"type": "array", "items": {"type": "object", "properties": {
                "proto": {"type": "string", "x-krm-catalog-deprecated": "always TCP"}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string", "x-krm-catalog-deprecated": "use tags"}},
        }});
        let value =
            json!({"new": "x", "old": "y", "ports": [{}, {"proto": "UDP"}], "labels": {"a": "b"}});
        let mut out = Vec::new();
        fields(&schema, &value, &FieldPath::parse("spec.config"), &mut out);
        let found: Vec<String> = out
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect();
        assert_eq!(
            found,
            [
                "spec.config.old: deprecated: use new",
                "spec.config.ports[1].proto: deprecated: always TCP",
                "spec.config.labels.a: deprecated: use tags",
            ]
        );
        let mut none = Vec::new();
        fields(&schema, &json!({"new": "x"}), &FieldPath::root(), &mut none);
        assert!(none.is_empty());
    }
}

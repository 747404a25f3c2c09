//! A config made from a schema alone, for `catalog lint` (issue 22): when a service's defaults
//! leave required values unset and its schema has no `example`s for them, lint still renders
//! its templates, with a placeholder of the right type for each value a user must choose
//! (its `example`, else its `default`, else the first `enum` value, else a value of its type
//! within its bounds). A string with a `pattern` gets no placeholder: none can be guessed
//! that surely matches, and lint says to add an `example`.

use serde_json::{Value, json};

use super::definition::fill_chosen;

/// How deep objects and arrays are followed (schemas are bounded when loaded; this keeps a
/// recursive walk shallow whatever they hold).
const MAX_DEPTH: usize = 32;

/// The most items a placeholder list gets for its `minItems`.
const MAX_ITEMS: u64 = 16;

/// A value for an object `schema` holding a placeholder at every value a user must choose;
/// `None` when one cannot be made (a `pattern`, an unknown type, too deep).
pub fn minimal_value(schema: &Value) -> Option<Value> {
    object(schema, 0)
}

fn object(schema: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    fill_chosen(schema, |sub| placeholder(sub, depth + 1))
}

fn placeholder(schema: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    if let Some(v) = schema.get("example").or_else(|| schema.get("default")) {
        return Some(v.clone());
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return Some(first.clone());
    }
    if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return Some(number(schema, true));
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => string(schema),
        Some("integer") => Some(number(schema, true)),
        Some("number") => Some(number(schema, false)),
        Some("boolean") => Some(Value::Bool(false)),
        Some("array") => {
            let count = schema
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(MAX_ITEMS);
            let items = schema.get("items").unwrap_or(&Value::Null);
            (0..count)
                .map(|_| placeholder(items, depth + 1))
                .collect::<Option<Vec<_>>>()
                .map(Value::Array)
        }
        Some("object") => object(schema, depth),
        _ if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) => {
            Some(json!({}))
        }
        _ => None,
    }
}

fn string(schema: &Value) -> Option<Value> {
    if schema.get("pattern").is_some() {
        return None;
    }
    let by_format = match schema.get("format").and_then(Value::as_str) {
        Some("email") => Some("user@example.com"),
        Some("hostname") => Some("example.com"),
        Some("uri" | "url") => Some("https://example.com"),
        Some("date-time") => Some("2000-01-01T00:00:00Z"),
        Some("date") => Some("2000-01-01"),
        Some("duration") => Some("1s"),
        Some("uuid") => Some("00000000-0000-0000-0000-000000000000"),
        Some("ipv4") => Some("192.0.2.1"),
        Some("ipv6") => Some("2001:db8::1"),
        Some("cidr") => Some("192.0.2.0/24"),
        Some("byte") => Some("eA=="),
        Some("quantity") => Some("1"),
        _ => None,
    };
    if let Some(text) = by_format {
        return Some(Value::String(text.to_owned()));
    }
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(1);
    let max = schema.get("maxLength").and_then(Value::as_u64);
    let word = "example";
    let len = word.len() as u64;
    if min <= len && max.is_none_or(|m| m >= len) {
        return Some(Value::String(word.to_owned()));
    }
    let n = usize::try_from(min.clamp(1, 253)).ok()?;
    Some(Value::String("x".repeat(n)))
}

fn number(schema: &Value, integer: bool) -> Value {
    let min = schema.get("minimum").and_then(Value::as_f64);
    let max = schema.get("maximum").and_then(Value::as_f64);
    let exclusive_min = schema.get("exclusiveMinimum") == Some(&Value::Bool(true));
    let exclusive_max = schema.get("exclusiveMaximum") == Some(&Value::Bool(true));
    let value = match (min, max) {
        (Some(lo), _) if exclusive_min => lo + 1.0,
        (Some(lo), _) => lo,
        (None, Some(hi)) if hi < 0.0 || (hi <= 0.0 && exclusive_max) => hi - 1.0,
        _ => 0.0,
    };
    if integer {
        // Bounds in schemas are small integers; anything else is not a placeholder.
        #[allow(clippy::cast_possible_truncation)]
        let n = value.ceil() as i64;
        json!(n)
    } else {
        json!(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue16_required_values_get_placeholders_of_their_type() {
        let schema = json!({"type": "object", "required": ["name", "port", "tls", "owner", "tier", "hosts", "db", "mode"],
        "properties": {
            "name": {"type": "string"},
            "port": {"type": "integer", "minimum": 1024},
            "tls": {"type": "boolean"},
            "owner": {"type": "string", "format": "email"},
            "tier": {"type": "string", "enum": ["dev", "prod"]},
            "hosts": {"type": "array", "minItems": 2, "items": {"type": "string", "format": "hostname"}},
            "db": {"type": "object", "required": ["size"], "properties": {"size": {"type": "integer", "exclusiveMinimum": true, "minimum": 0}, "extra": {"type": "string"}}},
            "mode": {"type": "string", "default": "fast"},
            "optional": {"type": "string"}
        }});
        assert_eq!(
            minimal_value(&schema),
            Some(
                json!({"name": "example", "port": 1024, "tls": false, "owner": "user@example.com",
                "tier": "dev", "hosts": ["example.com", "example.com"], "db": {"size": 1}})
            )
        );
    }

    #[test]
    fn a_pattern_or_an_unknown_type_gets_no_placeholder() {
        let schema = json!({"type": "object", "required": ["id"],
            "properties": {"id": {"type": "string", "pattern": "^[a-z]{3}$"}}});
        assert_eq!(minimal_value(&schema), None);
        let schema = json!({"type": "object", "required": ["x"], "properties": {"x": {}}});
        assert_eq!(minimal_value(&schema), None);
        // Nothing to choose: the empty config.
        assert_eq!(minimal_value(&json!({"type": "object"})), Some(json!({})));
        let long = json!({"type": "object", "required": ["k"],
            "properties": {"k": {"type": "string", "minLength": 12}}});
        assert_eq!(minimal_value(&long), Some(json!({"k": "xxxxxxxxxxxx"})));
    }
}

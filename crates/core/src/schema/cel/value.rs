//! The CEL value of a JSON value, typed by its structural schema (apiserver
//! `pkg/cel/common/values.go`, `pkg/cel/escaping.go`): `format: byte` as bytes, `date-time`
//! as a timestamp, `duration` as a duration, as upstream.
//!
//! Imports nothing of the folder.

use std::collections::HashMap;
use std::sync::Arc;

use kube_cel::cel::Value as Cel;
use kube_cel::cel::objects::{Key, Map};
use serde_json::Value;

use crate::schema::duration::go_parse_duration;
use crate::schema::structural::Structural;

/// CEL reserved words: a property named so is `__name__` in CEL (apiserver `cel.Escape`).
pub(super) const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A property name as CEL sees it (apiserver `pkg/cel/escaping.go` `Escape`); `None` when the
/// name cannot be used in CEL at all.
pub(super) fn escape(name: &str) -> Option<String> {
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '.' | '-' | '/'));
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
    {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("__") {
            out.push_str("__underscores__");
            rest = r;
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// The CEL value of `v` typed by its schema (apiserver `model.UnstructuredToVal`): declared
/// properties under their escaped names, map keys as they are, `integer` as int, `number` as
/// double, `format: byte` as bytes.
pub(super) fn to_cel(v: &Value, s: Option<&Structural>) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => {
            let integer = s.is_some_and(|s| s.type_ == "integer" || s.x_int_or_string);
            match n.as_i64() {
                Some(i) if integer || s.is_none() => Cel::Int(i),
                _ => match n.as_u64() {
                    Some(u) if integer => Cel::UInt(u),
                    _ => Cel::Float(n.as_f64().unwrap_or(f64::NAN)),
                },
            }
        }
        Value::String(text) => {
            let format = s
                .filter(|s| s.type_ == "string")
                .and_then(|s| s.format.as_deref());
            match format {
                Some("byte") => {
                    if let Ok(bytes) = base64_decode(text) {
                        return Cel::Bytes(Arc::new(bytes));
                    }
                }
                Some("date-time") => {
                    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
                        return Cel::Timestamp(t);
                    }
                }
                Some("duration") => {
                    if let Some(d) = duration(text) {
                        return Cel::Duration(d);
                    }
                }
                _ => {}
            }
            Cel::String(Arc::new(text.clone()))
        }
        Value::Array(a) => {
            let item = s.and_then(|s| s.items.as_deref());
            Cel::List(Arc::new(a.iter().map(|x| to_cel(x, item)).collect()))
        }
        Value::Object(m) => {
            let mut out: HashMap<Key, Cel> = HashMap::with_capacity(m.len());
            for (k, x) in m {
                let declared = s.and_then(|s| s.property(k));
                let key = match (s, declared) {
                    (_, Some(_)) => match escape(k) {
                        Some(e) => e,
                        None => continue,
                    },
                    (Some(s), None) if !s.properties.is_empty() => match escape(k) {
                        Some(e) => e,
                        None => continue,
                    },
                    _ => k.clone(),
                };
                let sub = declared.or_else(|| {
                    s.and_then(|s| s.additional_properties.as_ref())
                        .and_then(|a| a.schema())
                });
                out.insert(Key::String(Arc::new(key)), to_cel(x, sub));
            }
            Cel::Map(Map { map: Arc::new(out) })
        }
    }
}

/// A `format: duration` string as a duration (Go `time.ParseDuration`, signed).
fn duration(text: &str) -> Option<chrono::Duration> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let nanos = i64::try_from(go_parse_duration(unsigned)?).ok()?;
    let d = chrono::Duration::nanoseconds(nanos);
    Some(if negative { -d } else { d })
}

/// A value's CEL type name, for `type()`.
pub(super) fn type_name(v: &Cel) -> &'static str {
    match v {
        Cel::List(_) => "list",
        Cel::Map(_) => "map",
        Cel::Int(_) => "int",
        Cel::UInt(_) => "uint",
        Cel::Float(_) => "double",
        Cel::String(_) => "string",
        Cel::Bytes(_) => "bytes",
        Cel::Bool(_) => "bool",
        Cel::Timestamp(_) => "google.protobuf.Timestamp",
        Cel::Duration(_) => "google.protobuf.Duration",
        Cel::Null => "null_type",
        _ => "type",
    }
}

pub(super) fn base64_decode(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text)
}

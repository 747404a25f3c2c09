//! Fixtures shared by the schema unit tests (they build schemas through the public API).

use serde_json::{Value, json};

use super::{ConfigSchema, SchemaProblem};

pub(super) fn problems(raw: &Value) -> Vec<SchemaProblem> {
    ConfigSchema::parse(raw).err().unwrap_or_default()
}

/// A root object schema with the given properties.
#[allow(clippy::needless_pass_by_value)] // callers pass json! literals
pub(super) fn obj(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

/// Problems of a schema with one property `a`.
#[allow(clippy::needless_pass_by_value)] // callers pass json! literals
pub(super) fn field_problems(a: Value) -> Vec<SchemaProblem> {
    problems(&obj(json!({"a": a})))
}

#[track_caller]
pub(super) fn assert_problem(found: &[SchemaProblem], path: &str, needle: &str) {
    assert!(
        found
            .iter()
            .any(|p| p.path == path && p.message.contains(needle)),
        "no problem at {path:?} containing {needle:?} in {found:#?}"
    );
}

pub(super) fn parsed(raw: &Value) -> ConfigSchema {
    match ConfigSchema::parse(raw) {
        Ok(c) => c,
        Err(p) => panic!("unexpected problems: {p:#?}"),
    }
}

pub(super) fn errors(schema: &Value, instance: &Value) -> Vec<String> {
    parsed(schema)
        .validate(instance)
        .iter()
        .map(ToString::to_string)
        .collect()
}

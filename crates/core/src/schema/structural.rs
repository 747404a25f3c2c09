//! The structural schema model: `Structural` (the port of apiextensions-apiserver
//! `schema.Structural`), schema problems and field errors (located by [`FieldPath`]s).
//!
//! Imports `gofmt`.

use std::fmt;

use serde_json::Value;

use super::gofmt::go_quote;
use crate::diagnostics::FieldPath;

/// A JSON Schema (draft 7) keyword's value with `f` applied to each subschema it holds: a map
/// of schemas (`properties`, `dependencies`, ...), or a schema or list of schemas (`items`,
/// `allOf`, ...). `None` when the keyword holds no subschema. What the conversion and the
/// compiler's pattern rewrite both walk, so they descend into the same places.
pub(super) fn map_subschemas(key: &str, value: &Value, f: fn(&Value) -> Value) -> Option<Value> {
    match key {
        // `dependencies` values may also be lists of names; `f` leaves non-objects as they are.
        "properties" | "patternProperties" | "definitions" | "$defs" | "dependencies" => {
            Some(match value {
                Value::Object(m) => {
                    Value::Object(m.iter().map(|(k, s)| (k.clone(), f(s))).collect())
                }
                other => other.clone(),
            })
        }
        "items"
        | "additionalItems"
        | "additionalProperties"
        | "not"
        | "contains"
        | "propertyNames"
        | "if"
        | "then"
        | "else"
        | "allOf"
        | "anyOf"
        | "oneOf" => Some(match value {
            Value::Array(a) => Value::Array(a.iter().map(f).collect()),
            other => f(other),
        }),
        _ => None,
    }
}

/// `additionalProperties` of a structural schema: a boolean or a schema.
#[derive(Debug, Clone, PartialEq)]
pub enum AdditionalProperties {
    /// `additionalProperties: true|false` (no schema).
    Bool(bool),
    /// `additionalProperties: {...}` (Kubernetes reads this as "allowed, with this schema").
    Schema(Box<Structural>),
}

impl AdditionalProperties {
    /// The schema for additional properties; `None` for the boolean forms.
    #[must_use]
    pub fn schema(&self) -> Option<&Structural> {
        match self {
            Self::Schema(s) => Some(s),
            Self::Bool(_) => None,
        }
    }
}

/// Port of apiextensions-apiserver `schema.Structural` (only what defaulting, pruning, explain
/// and list-type validation need).
#[allow(clippy::struct_excessive_bools)] // mirrors the upstream Generic/Extensions flags one to one
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Structural {
    /// `type`; empty when absent.
    pub type_: String,
    /// `title`.
    pub title: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `default`; `None` also for `default: null` (Kubernetes treats it as no default).
    pub default: Option<Value>,
    /// `nullable`.
    pub nullable: bool,
    /// `format` as written.
    pub format: Option<String>,
    /// `enum` values.
    pub enum_: Vec<Value>,
    /// `required` property names.
    pub required: Vec<String>,
    /// `properties` in source order.
    pub properties: Vec<(String, Structural)>,
    /// `additionalProperties`.
    pub additional_properties: Option<AdditionalProperties>,
    /// `items`.
    pub items: Option<Box<Structural>>,
    /// `x-kubernetes-preserve-unknown-fields`.
    pub x_preserve_unknown_fields: bool,
    /// `x-kubernetes-int-or-string`.
    pub x_int_or_string: bool,
    /// `x-kubernetes-embedded-resource`.
    pub x_embedded_resource: bool,
    /// `x-kubernetes-list-type` (`atomic`, `set`, `map`).
    pub x_list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub x_list_map_keys: Vec<String>,
}

impl Structural {
    /// The declared property `name`, if any.
    #[must_use]
    pub fn property(&self, name: &str) -> Option<&Structural> {
        self.properties
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, s)| s)
    }
}

/// A problem in a schema, located by its path in the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaProblem {
    /// Path from the schema root (`properties.a.items`, `allOf[0].type`); empty for the root.
    pub path: FieldPath,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// A validation error at a path of the validated instance.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FieldError {
    /// Path relative to the validated instance; nil ([`FieldPath::nil`]) for the errors the
    /// apiserver reports with no field (`<nil>: …`), still naming the field they are about.
    pub path: FieldPath,
    /// Kubernetes field-error style message.
    pub message: String,
    /// Where the message names the field itself, as kube-openapi's messages do, filled in with
    /// the field's full path by [`FieldError::message_at`] (the path here is relative to the
    /// validated instance): the byte offset in `message` where `<field> in body ` goes
    /// (`Invalid value: -1: spec.replicas in body should be greater than or equal to 0`), or,
    /// for an error at a nil path, `"<field>" ` (a composite error: `Invalid value: "":
    /// "spec.port" must validate at least one schema (anyOf)`, `""` at the root).
    pub in_body: Option<usize>,
}

impl FieldError {
    /// An error whose message does not name its field.
    #[must_use]
    pub fn new(path: FieldPath, message: impl Into<String>) -> Self {
        FieldError {
            path,
            message: message.into(),
            in_body: None,
        }
    }

    /// The message for the field at `full` (this error's path under whatever the validated
    /// instance sits in), as the apiserver prints it.
    #[must_use]
    pub fn message_at(&self, full: &FieldPath) -> String {
        match self.in_body {
            Some(at) if at <= self.message.len() && self.message.is_char_boundary(at) => {
                let (head, tail) = self.message.split_at(at);
                if full.is_nil() {
                    format!("{head}{} {tail}", go_quote(&full.field().to_string()))
                } else if full.is_empty() {
                    format!("{head}{tail}")
                } else {
                    format!("{head}{full} in body {tail}")
                }
            }
            _ => self.message.clone(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = self.message_at(&self.path);
        if self.path.is_empty() {
            f.write_str(&message)
        } else {
            write!(f, "{}: {}", self.path, message)
        }
    }
}

/// A string as a JSON string literal (`"a.b"`), for messages.
pub(super) fn quote(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_display_with_their_path() {
        let p = SchemaProblem {
            path: "properties.a.type".into(),
            message: "m".into(),
        };
        assert_eq!(p.to_string(), "properties.a.type: m");
        assert_eq!(
            SchemaProblem {
                path: FieldPath::root(),
                message: "m".into()
            }
            .to_string(),
            "m"
        );
        assert_eq!(
            FieldError::new(FieldPath::root(), "Required value").to_string(),
            "Required value"
        );
    }

    /// The errors the apiserver reports with no field print `<nil>` for it (apimachinery's
    /// nil `*field.Path`); a composite error names its field quoted in the message (issue 22).
    #[test]
    fn issue16_errors_at_a_nil_path_print_as_the_apiserver_prints_them() {
        let head = "Invalid value: \"\": ";
        let composite = FieldError {
            path: FieldPath::parse("port").nil(),
            message: format!("{head}must validate at least one schema (anyOf)"),
            in_body: Some(head.len()),
        };
        assert_eq!(
            composite.to_string(),
            r#"<nil>: Invalid value: "": "port" must validate at least one schema (anyOf)"#
        );
        let full = FieldPath::parse("spec.config").join(&composite.path);
        assert_eq!(
            composite.message_at(&full),
            r#"Invalid value: "": "spec.config.port" must validate at least one schema (anyOf)"#
        );
        let at_root = FieldError {
            path: FieldPath::root().nil(),
            ..composite
        };
        assert_eq!(
            at_root.to_string(),
            r#"<nil>: Invalid value: "": "" must validate at least one schema (anyOf)"#
        );
        assert_eq!(
            FieldError::new(FieldPath::root().nil(), "Invalid value: null: m").to_string(),
            "<nil>: Invalid value: null: m"
        );
    }
}

//! Compiling a converted schema (Kubernetes formats, Go patterns) and mapping validation errors
//! to Kubernetes-style field errors.
//!
//! Imports `structural`, `formats` and `goregex`.

use std::fmt::Write as _;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::Location;
use jsonschema::{Draft, Keyword, ValidationError, Validator};
use regex::Regex;
use serde_json::{Map, Value};

use super::formats::{FORMAT_PREFIX, STRING_FORMATS};
use super::structural::{FieldError, map_subschemas, quote};
use crate::diagnostics::FieldPath;
use crate::suggest;

/// Keyword our Go-regexp `pattern` check is registered under (see `with_go_patterns`).
const GO_PATTERN_KEYWORD: &str = "x-krm-go-pattern";

/// Longest rendering of a value inside a field error message.
const MAX_SHOWN_VALUE: usize = 64;

/// A converted schema the validator compiler refuses (its message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CompileError(String);

/// Compile a converted JSON Schema with Kubernetes formats registered (Draft 7, Go patterns).
///
/// # Errors
/// The compiler's message when the schema is not a valid draft-7 schema.
pub fn compile(json_schema: &Value) -> Result<Validator, CompileError> {
    let mut options = jsonschema::options()
        .with_draft(Draft::Draft7)
        .should_validate_formats(true)
        .with_keyword(GO_PATTERN_KEYWORD, go_pattern_keyword);
    for (name, check) in STRING_FORMATS {
        options = options.with_format(format!("{FORMAT_PREFIX}{name}"), *check);
    }
    options
        .build(&with_go_patterns(json_schema))
        .map_err(|e| CompileError(e.to_string()))
}

/// The schema with every `pattern` keyword renamed to [`GO_PATTERN_KEYWORD`]: the crate checks
/// a schema against the draft-07 meta-schema, whose `format: regex` is ECMA 262 and refuses
/// Go patterns such as `^(?i)(abort|warn)?$` before any custom keyword could take over.
fn with_go_patterns(v: &Value) -> Value {
    let Value::Object(m) = v else {
        return v.clone();
    };
    m.iter()
        .map(|(k, val)| match k.as_str() {
            "pattern" if val.is_string() => (GO_PATTERN_KEYWORD.to_owned(), val.clone()),
            _ => (
                k.clone(),
                map_subschemas(k, val, with_go_patterns).unwrap_or_else(|| val.clone()),
            ),
        })
        .collect::<Map<String, Value>>()
        .into()
}

/// `pattern` with Go's regexp semantics (kube-openapi `pkg/validation/validate/rexp.go` compiles
/// with Go's `regexp`); the crate's own keyword reads patterns as ECMA 262, which rejects `(?i)`
/// in the middle and reads `\d`, `\w`, `\s` differently.
struct GoPattern {
    regex: Regex,
    pattern: String,
}

impl<'i> Keyword<'i> for GoPattern {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if self.is_valid(instance) {
            Ok(())
        } else {
            Err(ValidationError::custom(format!(
                "must match the regular expression {}",
                quote(&self.pattern)
            )))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        instance.as_str().is_none_or(|s| self.regex.is_match(s))
    }
}

fn go_pattern_keyword<'a>(
    _parent: &'a Map<String, Value>,
    value: &'a Value,
    _path: Location,
) -> Result<Box<dyn for<'i> Keyword<'i>>, ValidationError<'a>> {
    let Some(pattern) = value.as_str() else {
        return Err(ValidationError::schema("`pattern` must be a string"));
    };
    match super::goregex::compile(pattern) {
        Ok(regex) => Ok(Box::new(GoPattern {
            regex,
            pattern: pattern.to_owned(),
        })),
        Err(e) => Err(ValidationError::schema(format!(
            "`pattern` {} is not a valid Go (RE2) regular expression: {e}",
            quote(pattern)
        ))),
    }
}

/// Validate with any compiled validator and map errors to `FieldError`s (sorted by path, then message).
#[must_use]
pub fn validate_with(validator: &Validator, schema: &Value, instance: &Value) -> Vec<FieldError> {
    let mut out = Vec::new();
    for err in validator.iter_errors(instance) {
        map_error(&err, schema, instance, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// Whether an error the apiserver counts as blocking CEL validation is among the errors
/// (apiextensions-apiserver `pkg/registry/customresource/strategy.go` `hasBlockingErr` at
/// 1aa2717a552ee6ca1e2a18f1f8ffccde981db923: wrong type, unsupported enum value, required,
/// too long, too many items or properties).
#[must_use]
pub fn has_blocking_error(validator: &Validator, instance: &Value) -> bool {
    validator.iter_errors(instance).any(|e| {
        matches!(
            e.kind(),
            ValidationErrorKind::Type { .. }
                | ValidationErrorKind::Enum { .. }
                | ValidationErrorKind::Required { .. }
                | ValidationErrorKind::MaxLength { .. }
                | ValidationErrorKind::MaxItems { .. }
                | ValidationErrorKind::MaxProperties { .. }
        )
    })
}

#[allow(clippy::too_many_lines)] // one arm per error kind reads best as a single table
fn map_error(
    err: &ValidationError<'_>,
    schema: &Value,
    instance: &Value,
    out: &mut Vec<FieldError>,
) {
    let mut path = instance_path(err.instance_path().as_str(), instance);
    let shown = render_value(err.instance());
    let invalid = |what: String| format!("Invalid value: {shown}: {what}");
    let message = match err.kind() {
        ValidationErrorKind::Type { kind } => {
            let declared = schema.pointer(err.schema_path().as_str());
            invalid(format!(
                "must be of type {}",
                describe_types(declared, kind)
            ))
        }
        ValidationErrorKind::Enum { options } => {
            let supported: Vec<String> = options
                .as_array()
                .map(|a| a.iter().map(render_value).collect())
                .unwrap_or_default();
            format!(
                "Unsupported value: {shown}: supported values: {}",
                supported.join(", ")
            )
        }
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            path.push_key(name);
            "Required value".to_owned()
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let declared = declared_properties(schema, err.schema_path().as_str());
            for key in unexpected {
                let mut message = format!("unknown field {}", quote(key));
                if let Some(hint) = suggest::closest(key, declared.iter().map(String::as_str)) {
                    let _ = write!(message, " (did you mean {}?)", quote(hint));
                }
                out.push(FieldError {
                    path: path.key(key.clone()),
                    message,
                });
            }
            return;
        }
        ValidationErrorKind::Format { format } => {
            invalid(format!("must be a valid {}", format_display_name(format)))
        }
        ValidationErrorKind::MinLength { limit } => {
            invalid(format!("must be at least {limit} characters long"))
        }
        ValidationErrorKind::MaxLength { limit } => {
            invalid(format!("must be at most {limit} characters long"))
        }
        ValidationErrorKind::MinItems { limit } => {
            invalid(format!("must have at least {limit} items"))
        }
        ValidationErrorKind::MaxItems { limit } => {
            invalid(format!("must have at most {limit} items"))
        }
        ValidationErrorKind::MinProperties { limit } => {
            invalid(format!("must have at least {limit} properties"))
        }
        ValidationErrorKind::MaxProperties { limit } => {
            invalid(format!("must have at most {limit} properties"))
        }
        ValidationErrorKind::Minimum { limit } => {
            invalid(format!("must be greater than or equal to {limit}"))
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            invalid(format!("must be greater than {limit}"))
        }
        ValidationErrorKind::Maximum { limit } => {
            invalid(format!("must be less than or equal to {limit}"))
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            invalid(format!("must be less than {limit}"))
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            invalid(format!("must be a multiple of {multiple_of}"))
        }
        ValidationErrorKind::Pattern { pattern } => invalid(format!(
            "must match the regular expression {}",
            quote(pattern)
        )),
        ValidationErrorKind::AnyOf { .. } => {
            invalid("must match at least one of the schemas in anyOf".to_owned())
        }
        ValidationErrorKind::OneOfNotValid { .. } => {
            invalid("must match exactly one of the schemas in oneOf, but matches none".to_owned())
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => invalid(
            "must match exactly one of the schemas in oneOf, but matches more than one".to_owned(),
        ),
        ValidationErrorKind::Not { .. } => invalid("must not match the schema in not".to_owned()),
        ValidationErrorKind::Custom { message, .. } => invalid(message.clone()),
        ValidationErrorKind::Constant { expected_value } => {
            invalid(format!("must be equal to {}", render_value(expected_value)))
        }
        ValidationErrorKind::UniqueItems => invalid("must not contain duplicate items".to_owned()),
        ValidationErrorKind::FalseSchema => "Forbidden: no value is allowed here".to_owned(),
        _ => invalid(err.masked().to_string()),
    };
    out.push(FieldError { path, message });
}

/// Turn a JSON pointer into path segments, using the instance to tell keys from indexes.
fn instance_path(pointer: &str, instance: &Value) -> FieldPath {
    let mut segments = FieldPath::root();
    let mut current = Some(instance);
    for raw in pointer.split('/').skip(1) {
        let token = raw.replace("~1", "/").replace("~0", "~");
        let index = token.parse::<usize>().ok();
        match (current, index) {
            (Some(Value::Array(a)), Some(i)) => {
                current = a.get(i);
                segments.push_index(i);
            }
            (Some(Value::Object(m)), _) => {
                current = m.get(&token);
                segments.push_key(token);
            }
            _ => {
                current = None;
                segments.push_key(token);
            }
        }
    }
    segments
}

/// Compact JSON, cut to about 64 characters.
pub(super) fn render_value(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= MAX_SHOWN_VALUE {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_SHOWN_VALUE - 3).collect();
    cut.push_str("...");
    cut
}

/// `integer`, `integer or null`, `integer, string or null`.
fn describe_types(declared: Option<&Value>, kind: &TypeKind) -> String {
    let names: Vec<String> = match declared {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => match kind {
            TypeKind::Single(t) => vec![t.to_string()],
            TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
        },
    };
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// The `properties` names next to the `additionalProperties` keyword that failed.
fn declared_properties(schema: &Value, schema_path: &str) -> Vec<String> {
    let parent = schema_path
        .strip_suffix("/additionalProperties")
        .unwrap_or(schema_path);
    schema
        .pointer(parent)
        .and_then(|node| node.get("properties"))
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn format_display_name(format: &str) -> &str {
    match format.strip_prefix(FORMAT_PREFIX).unwrap_or(format) {
        "datetime" => "date-time",
        "k8sshortname" => "k8s-short-name",
        "k8slongname" => "k8s-long-name",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::testutil::*;
    use crate::schema::*;
    use serde_json::json;

    // --- Field errors ---

    #[test]
    fn field_error_type() {
        let schema = obj(
            json!({"n": {"type": "integer"}, "m": {"type": "integer", "nullable": true}, "i": {"x-kubernetes-int-or-string": true, "nullable": true}}),
        );
        assert_eq!(
            errors(&schema, &json!({"n": "abc", "m": "abc", "i": true})),
            [
                r"i: Invalid value: true: must be of type integer, string or null",
                r#"m: Invalid value: "abc": must be of type integer or null"#,
                r#"n: Invalid value: "abc": must be of type integer"#,
            ]
        );
        assert!(errors(&schema, &json!({"m": null, "i": "50%"})).is_empty());
        assert!(errors(&schema, &json!({"i": 5})).is_empty());
        assert_eq!(
            errors(&schema, &json!({"n": null})),
            [r"n: Invalid value: null: must be of type integer"]
        );
    }

    #[test]
    fn field_error_enum() {
        let schema = obj(
            json!({"status": {"type": "string", "enum": ["enabled", "disabled"]},
            "n": {"type": "string", "nullable": true, "enum": ["a"]}}),
        );
        assert_eq!(
            errors(&schema, &json!({"status": "x"})),
            [r#"status: Unsupported value: "x": supported values: "enabled", "disabled""#]
        );
        // As in Kubernetes, null fails a nullable enum.
        assert_eq!(
            errors(&schema, &json!({"n": null})),
            [r#"n: Unsupported value: null: supported values: "a""#]
        );
    }

    #[test]
    fn field_error_required() {
        let schema = obj(
            json!({"clusterIssuer": {"type": "object", "required": ["email"], "properties": {"email": {"type": "string"}}}}),
        );
        let errs = parsed(&schema).validate(&json!({"clusterIssuer": {}}));
        assert_eq!(
            errs,
            [FieldError {
                path: FieldPath::parse("clusterIssuer.email"),
                message: "Required value".into()
            }]
        );
    }

    #[test]
    fn field_error_unknown_field() {
        let config = to_json_schema(&obj(
            json!({"clusterIssuer": {"type": "object"}, "name": {"type": "string"}}),
        ));
        let mut generated = config.clone();
        generated["additionalProperties"] = json!(false);
        let v = compile(&generated).unwrap();
        let errs: Vec<String> = validate_with(
            &v,
            &generated,
            &json!({"clusterIsuer": {}, "Name": "x", "zzz": 1}),
        )
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            errs,
            [
                r#"Name: unknown field "Name" (did you mean "name"?)"#,
                r#"clusterIsuer: unknown field "clusterIsuer" (did you mean "clusterIssuer"?)"#,
                r#"zzz: unknown field "zzz""#,
            ]
        );
    }

    #[test]
    fn field_error_format() {
        let schema = obj(
            json!({"e": {"type": "string", "format": "email"}, "d": {"type": "string", "format": "date-time"},
            "i": {"type": "integer", "format": "int32"}, "f": {"type": "number", "format": "float"}}),
        );
        assert_eq!(
            errors(
                &schema,
                &json!({"e": "x", "d": "yesterday", "i": 3_000_000_000_i64, "f": 1e300})
            ),
            [
                r#"d: Invalid value: "yesterday": must be a valid date-time"#,
                r#"e: Invalid value: "x": must be a valid email"#,
            ]
        );
        assert!(
            errors(
                &schema,
                &json!({"e": "a@b.c", "d": "2024-01-02T03:04:05Z", "i": -5, "f": 1.5})
            )
            .is_empty()
        );
    }

    #[test]
    fn field_error_lengths_and_counts() {
        let schema = obj(json!({
            "s": {"type": "string", "minLength": 1, "maxLength": 3},
            "l": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
            "o": {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1, "maxProperties": 1}
        }));
        assert_eq!(
            errors(&schema, &json!({"s": "", "l": [], "o": {}})),
            [
                r"l: Invalid value: []: must have at least 1 items",
                r"o: Invalid value: {}: must have at least 1 properties",
                r#"s: Invalid value: "": must be at least 1 characters long"#,
            ]
        );
        assert_eq!(
            errors(
                &schema,
                &json!({"s": "abcd", "l": [1, 2, 3], "o": {"a": 1, "b": 2}})
            ),
            [
                r"l: Invalid value: [1,2,3]: must have at most 2 items",
                r#"o: Invalid value: {"a":1,"b":2}: must have at most 1 properties"#,
                r#"s: Invalid value: "abcd": must be at most 3 characters long"#,
            ]
        );
    }

    #[test]
    fn field_error_bounds() {
        let schema = obj(json!({
            "port": {"type": "integer", "minimum": 1, "maximum": 65535},
            "x": {"type": "integer", "minimum": 0, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": true},
            "m": {"type": "number", "multipleOf": 0.5},
            "p": {"type": "string", "pattern": "^a$"}
        }));
        assert_eq!(
            errors(
                &schema,
                &json!({"port": 70000, "x": 10, "m": 0.7, "p": "x"})
            ),
            [
                r"m: Invalid value: 0.7: must be a multiple of 0.5",
                r#"p: Invalid value: "x": must match the regular expression "^a$""#,
                r"port: Invalid value: 70000: must be less than or equal to 65535",
                r"x: Invalid value: 10: must be less than 10",
            ]
        );
        assert_eq!(
            errors(&schema, &json!({"port": 0, "x": 0})),
            [
                r"port: Invalid value: 0: must be greater than or equal to 1",
                r"x: Invalid value: 0: must be greater than 0"
            ]
        );
    }

    #[test]
    fn field_error_junctors() {
        let schema = obj(json!({
            "a": {"type": "integer", "anyOf": [{"minimum": 10}, {"maximum": 0}]},
            "o": {"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}]},
            "n": {"type": "string", "not": {"pattern": "^x"}}
        }));
        assert_eq!(
            errors(&schema, &json!({"a": 5, "o": 5, "n": "xy"})),
            [
                r"a: Invalid value: 5: must match at least one of the schemas in anyOf",
                r#"n: Invalid value: "xy": must not match the schema in not"#,
                r"o: Invalid value: 5: must match exactly one of the schemas in oneOf, but matches more than one",
            ]
        );
        assert_eq!(
            errors(&schema, &json!({"o": null})),
            [r"o: Invalid value: null: must be of type integer"]
        );
    }

    #[test]
    fn field_errors_are_sorted_and_paths_typed() {
        use crate::diagnostics::PathSegment::{Index, Key};
        let schema = obj(
            json!({"l": {"type": "array", "items": {"type": "object", "properties": {"0": {"type": "string"}}}}}),
        );
        let errs = parsed(&schema).validate(&json!({"l": [{"0": 1}, {"0": 2}]}));
        assert_eq!(
            errs.iter()
                .map(|e| e.path.segments().to_vec())
                .collect::<Vec<_>>(),
            [
                vec![Key("l".into()), Index(0), Key("0".into())],
                vec![Key("l".into()), Index(1), Key("0".into())],
            ]
        );
        assert_eq!(
            errs[0].to_string(),
            "l[0][\"0\"]: Invalid value: 1: must be of type string".replace("[\"0\"]", ".0")
        );
    }

    #[test]
    fn long_values_are_truncated() {
        let schema = obj(json!({"s": {"type": "integer"}}));
        let long = "x".repeat(100);
        let errs = errors(&schema, &json!({"s": long}));
        let shown = format!("\"{}...", "x".repeat(60));
        assert_eq!(
            errs,
            [format!(
                "s: Invalid value: {shown}: must be of type integer"
            )]
        );
    }
}

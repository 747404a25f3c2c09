//! Compiling a converted schema (Kubernetes formats, Go patterns) and mapping validation errors
//! to Kubernetes-style field errors.
//!
//! Imports `structural`, `formats` and `goregex`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::Location;
use jsonschema::{Draft, Keyword, ValidationError, Validator};
use regex::Regex;
use serde_json::{Map, Value};

use super::formats::{FORMAT_PREFIX, STRING_FORMATS};
use super::gofmt::{go_number, go_quote};
use super::structural::{FieldError, map_subschemas, quote};
use crate::diagnostics::FieldPath;
use crate::suggest;

/// Keyword our Go-regexp `pattern` check is registered under (see `with_go_patterns`).
const GO_PATTERN_KEYWORD: &str = "x-krm-go-pattern";

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
            // kube-openapi's `patternFail`, which quotes with '…'.
            Err(ValidationError::custom(format!(
                "should match '{}'",
                self.pattern
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
    let mut all_of = BTreeMap::new();
    for err in validator.iter_errors(instance) {
        note_all_of(&err, &mut all_of);
        map_error(&err, schema, instance, &mut out);
    }
    // kube-openapi adds one composite error to the errors of the branches of a failed `allOf`
    // (`schema_props.go`, `mustValidateAllSchemasMsg`); the crate reports the branches only.
    // Written as the other composite errors are (see `map_error`).
    for ((at, pointer), failed) in all_of {
        let branches = schema
            .pointer(&format!("{at}/allOf"))
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let none = if failed.len() >= branches {
            ". None validated"
        } else {
            ""
        };
        out.push(composite(
            &instance_path(&pointer, instance),
            &format!("must validate all the schemas (allOf){none}"),
        ));
    }
    out.sort();
    out.dedup();
    out
}

/// Record which `allOf` branch an error comes from: the `allOf`'s schema location and the
/// instance it applies to (the error's instance path, cut to the levels the schema path
/// descends through before the `allOf`), with the branch's index.
fn note_all_of(err: &ValidationError<'_>, acc: &mut BTreeMap<(String, String), BTreeSet<usize>>) {
    let schema_path: Vec<&str> = err.schema_path().as_str().split('/').skip(1).collect();
    let instance = err.instance_path().as_str().to_owned();
    let instance: Vec<&str> = instance.split('/').skip(1).collect();
    let (mut i, mut depth) = (0, 0);
    while i < schema_path.len() {
        match schema_path[i] {
            "properties" | "patternProperties" => (i, depth) = (i + 2, depth + 1),
            "additionalProperties" | "items" => (i, depth) = (i + 1, depth + 1),
            "allOf" => {
                if let Some(n) = schema_path.get(i + 1).and_then(|s| s.parse().ok()) {
                    let pointer_of = |parts: &[&str]| -> String {
                        parts.iter().flat_map(|s| ["/", s]).collect()
                    };
                    let at = pointer_of(&schema_path[..i]);
                    let pointer = pointer_of(&instance[..depth.min(instance.len())]);
                    acc.entry((at, pointer)).or_default().insert(n);
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
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

/// One error as apiextensions-apiserver reports it for a custom resource: kube-openapi's
/// message (`<field> in body should be …`) inside the field error that
/// `kubeOpenAPIResultToFieldErrors` (`pkg/apiserver/validation/validation.go`) makes of it:
/// `Required value`, `Unsupported value`, `Too long`, `Too many`, else `Invalid value` with the
/// value kube-openapi reports (for a type error, the name of the value's type).
#[allow(clippy::too_many_lines)] // one arm per error kind reads best as a single table
fn map_error(
    err: &ValidationError<'_>,
    schema: &Value,
    instance: &Value,
    out: &mut Vec<FieldError>,
) {
    let mut path = instance_path(err.instance_path().as_str(), instance);
    let value = err.instance();
    // `Invalid value: <value>: <field> in body <detail>`; the field goes in at `in_body`.
    let in_body = |shown: String, detail: String| {
        let head = format!("Invalid value: {shown}: ");
        let at = head.len();
        (format!("{head}{detail}"), Some(at))
    };
    let count = |n: usize| n.to_string();
    let plural = |n: u64, one: &str, many: &str| {
        if n == 1 {
            one.to_owned()
        } else {
            many.to_owned()
        }
    };
    let (message, at) = match err.kind() {
        ValidationErrorKind::Type { kind } => {
            let declared = schema.pointer(err.schema_path().as_str());
            let actual = go_quote(type_name(value));
            in_body(
                actual.clone(),
                format!(
                    "must be of type {}: {actual}",
                    declared_types(declared, kind)
                ),
            )
        }
        ValidationErrorKind::Enum { options } => {
            let supported: Vec<String> = options
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|v| match v {
                            Value::String(s) => go_quote(s),
                            other => go_quote(&other.to_string()),
                        })
                        .collect()
                })
                .unwrap_or_default();
            (
                format!(
                    "Unsupported value: {}: supported values: {}",
                    go_value(value),
                    supported.join(", ")
                ),
                None,
            )
        }
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            path.push_key(name);
            ("Required value".to_owned(), None)
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let declared = declared_properties(schema, err.schema_path().as_str());
            for key in unexpected {
                let mut message = format!("unknown field {}", quote(key));
                if let Some(hint) = suggest::closest(key, declared.iter().map(String::as_str)) {
                    let _ = write!(message, " (did you mean {}?)", quote(hint));
                }
                out.push(FieldError::new(path.key(key.clone()), message));
            }
            return;
        }
        ValidationErrorKind::Format { format } => {
            let shown = go_value(value);
            in_body(
                shown.clone(),
                format!("must be of type {}: {shown}", format_display_name(format)),
            )
        }
        ValidationErrorKind::MinLength { limit } => in_body(
            go_value(value),
            format!("should be at least {limit} chars long"),
        ),
        ValidationErrorKind::MaxLength { limit } => (
            format!(
                "Too long: may not be more than {limit} {}",
                plural(*limit, "byte", "bytes")
            ),
            None,
        ),
        ValidationErrorKind::MinItems { limit } => in_body(
            count(value.as_array().map_or(0, Vec::len)),
            format!("should have at least {limit} items"),
        ),
        ValidationErrorKind::MaxItems { limit } => (
            format!(
                "Too many: {}: must have at most {limit} {}",
                count(value.as_array().map_or(0, Vec::len)),
                plural(*limit, "item", "items")
            ),
            None,
        ),
        ValidationErrorKind::MinProperties { limit } => in_body(
            count(value.as_object().map_or(0, Map::len)),
            format!("should have at least {limit} properties"),
        ),
        // kube-openapi's TooManyProperties becomes `field.TooMany`, which says "items".
        ValidationErrorKind::MaxProperties { limit } => (
            format!(
                "Too many: {}: must have at most {limit} {}",
                count(value.as_object().map_or(0, Map::len)),
                plural(*limit, "item", "items")
            ),
            None,
        ),
        ValidationErrorKind::Minimum { limit } => in_body(
            go_value(value),
            format!("should be greater than or equal to {}", go_limit(limit)),
        ),
        ValidationErrorKind::ExclusiveMinimum { limit } => in_body(
            go_value(value),
            format!("should be greater than {}", go_limit(limit)),
        ),
        ValidationErrorKind::Maximum { limit } => in_body(
            go_value(value),
            format!("should be less than or equal to {}", go_limit(limit)),
        ),
        ValidationErrorKind::ExclusiveMaximum { limit } => in_body(
            go_value(value),
            format!("should be less than {}", go_limit(limit)),
        ),
        ValidationErrorKind::MultipleOf { multiple_of } => in_body(
            go_value(value),
            format!("should be a multiple of {}", go_float(*multiple_of)),
        ),
        ValidationErrorKind::Pattern { pattern } => {
            in_body(go_value(value), format!("should match '{pattern}'"))
        }
        // kube-openapi's composite errors (`schema_props.go`), reported at no field.
        ValidationErrorKind::AnyOf { .. } => {
            out.push(composite(
                &path,
                "must validate at least one schema (anyOf)",
            ));
            return;
        }
        ValidationErrorKind::OneOfNotValid { .. } => {
            out.push(composite(
                &path,
                "must validate one and only one schema (oneOf). Found none valid",
            ));
            return;
        }
        ValidationErrorKind::OneOfMultipleValid { context } => {
            // The branches that validated are those without errors.
            let valid = context.iter().filter(|errors| errors.is_empty()).count();
            out.push(composite(
                &path,
                &format!("must validate one and only one schema (oneOf). Found {valid} valid alternatives"),
            ));
            return;
        }
        ValidationErrorKind::Not { .. } => {
            out.push(composite(&path, "must not validate the schema (not)"));
            return;
        }
        // `pattern` (the only custom keyword, Go's regexp): kube-openapi's message.
        ValidationErrorKind::Custom { message, .. } => in_body(go_value(value), message.clone()),
        ValidationErrorKind::Constant { expected_value } => in_body(
            go_value(value),
            format!("should be one of [{}]", go_value(expected_value)),
        ),
        ValidationErrorKind::UniqueItems => {
            in_body("\"\"".to_owned(), "shouldn't contain duplicates".to_owned())
        }
        ValidationErrorKind::FalseSchema => {
            ("Forbidden: no value is allowed here".to_owned(), None)
        }
        _ => (
            format!("Invalid value: {}: {}", go_value(value), err.masked()),
            None,
        ),
    };
    out.push(FieldError {
        path,
        message,
        in_body: at,
    });
}

/// A kube-openapi composite error (`anyOf`, `oneOf`, `allOf`, `not`; `schema_messages.go`) about
/// the field at `path`: not a `*errors.Validation`, so apiextensions-apiserver's
/// `kubeOpenAPIResultToFieldErrors` reports it at no field (`<nil>`) with the value `""`, the
/// field named quoted in the message: `<nil>: Invalid value: "": "spec.port" must validate at
/// least one schema (anyOf)`.
fn composite(path: &FieldPath, detail: &str) -> FieldError {
    let head = "Invalid value: \"\": ";
    FieldError {
        path: path.nil(),
        message: format!("{head}{detail}"),
        in_body: Some(head.len()),
    }
}

/// kube-openapi's name for a value's type (`schemaInfoForType`).
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A bad value as `field.Error.ErrorBody` prints it: strings quoted as Go's `%q`, numbers and
/// booleans as `%v`, anything else as JSON (Go's `json.Marshal`: keys sorted); whole, as the
/// apiserver shows it.
pub(super) fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Number(n) => go_number(n),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_owned(),
        Value::Array(_) | Value::Object(_) => sorted_json(v),
    }
}

fn sorted_json(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), sorted_json(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(sorted_json).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// A schema bound as kube-openapi prints it: `%v` of a float64 (`1`, not `1.0`).
fn go_limit(limit: &Value) -> String {
    match limit {
        Value::Number(n) => go_float(n.as_f64().unwrap_or_default()),
        other => other.to_string(),
    }
}

fn go_float(f: f64) -> String {
    // (Rust prints an integral float without a fraction, as Go's %v does: `1`, not `1.0`.)
    serde_json::Number::from_f64(f).map_or_else(|| f.to_string(), |n| go_number(&n))
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

/// The declared type as kube-openapi names it: the schema's `type` (a converted CRD schema
/// says `["integer", "null"]` for `nullable: true`, which kube-openapi keeps apart).
fn declared_types(declared: Option<&Value>, kind: &TypeKind) -> String {
    let names: Vec<String> = match declared {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .map(str::to_owned)
            .collect(),
        _ => match kind {
            TypeKind::Single(t) => vec![t.to_string()],
            TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
        },
    };
    names.join(",")
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
                // kube-openapi reports the value's type, not the value; `nullable` is not a type.
                r#"i: Invalid value: "boolean": i in body must be of type integer,string: "boolean""#,
                r#"m: Invalid value: "string": m in body must be of type integer: "string""#,
                r#"n: Invalid value: "string": n in body must be of type integer: "string""#,
            ]
        );
        assert!(errors(&schema, &json!({"m": null, "i": "50%"})).is_empty());
        assert!(errors(&schema, &json!({"i": 5})).is_empty());
        assert_eq!(
            errors(&schema, &json!({"n": null})),
            [r#"n: Invalid value: "null": n in body must be of type integer: "null""#]
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
            [FieldError::new(
                FieldPath::parse("clusterIssuer.email"),
                "Required value"
            )]
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
                r#"d: Invalid value: "yesterday": d in body must be of type date-time: "yesterday""#,
                r#"e: Invalid value: "x": e in body must be of type email: "x""#,
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
                // kube-openapi reports the count for these, not the value.
                r"l: Invalid value: 0: l in body should have at least 1 items",
                r"o: Invalid value: 0: o in body should have at least 1 properties",
                r#"s: Invalid value: "": s in body should be at least 1 chars long"#,
            ]
        );
        assert_eq!(
            errors(
                &schema,
                &json!({"s": "abcd", "l": [1, 2, 3], "o": {"a": 1, "b": 2}})
            ),
            [
                // field.TooMany and field.TooLong, which omit the value (and say "items" for
                // properties too).
                r"l: Too many: 3: must have at most 2 items",
                r"o: Too many: 2: must have at most 1 item",
                r"s: Too long: may not be more than 3 bytes",
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
                r"m: Invalid value: 0.7: m in body should be a multiple of 0.5",
                r#"p: Invalid value: "x": p in body should match '^a$'"#,
                r"port: Invalid value: 70000: port in body should be less than or equal to 65535",
                r"x: Invalid value: 10: x in body should be less than 10",
            ]
        );
        assert_eq!(
            errors(&schema, &json!({"port": 0, "x": 0})),
            [
                r"port: Invalid value: 0: port in body should be greater than or equal to 1",
                r"x: Invalid value: 0: x in body should be greater than 0"
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
                // kube-openapi's composite errors carry no value (`field.Invalid(…, "", …)`)
                // and no field: they name it in the message (issue 22).
                r#"<nil>: Invalid value: "": "a" must validate at least one schema (anyOf)"#,
                r#"<nil>: Invalid value: "": "n" must not validate the schema (not)"#,
                r#"<nil>: Invalid value: "": "o" must validate one and only one schema (oneOf). Found 2 valid alternatives"#,
            ]
        );
        assert_eq!(
            errors(&schema, &json!({"o": null})),
            [r#"o: Invalid value: "null": o in body must be of type integer: "null""#]
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
            r#"l[0].0: Invalid value: "integer": l[0].0 in body must be of type string: "integer""#
        );
    }

    #[test]
    fn a_failed_all_of_adds_kube_openapis_composite_error() {
        // envoy gateway's `bufferLimit`: two patterns under `allOf`, as int-or-string.
        let schema = obj(json!({"b": {"x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "allOf": [{"pattern": "^[0-9]+[a-z]?$"}, {"pattern": "^[1-9]+[0-9]*([EPTGMK]i|[EPTGMk])?$"}]},
            "l": {"type": "array", "items": {"type": "string", "allOf": [{"pattern": "^a"}, {"pattern": "b$"}]}}}));
        assert_eq!(
            errors(&schema, &json!({"b": "1m", "l": ["ab", "xy"]})),
            [
                // The composite error after its branches' errors, as kube-openapi adds it.
                r#"b: Invalid value: "1m": b in body should match '^[1-9]+[0-9]*([EPTGMK]i|[EPTGMk])?$'"#,
                r#"<nil>: Invalid value: "": "b" must validate all the schemas (allOf)"#,
                r#"l[1]: Invalid value: "xy": l[1] in body should match '^a'"#,
                r#"l[1]: Invalid value: "xy": l[1] in body should match 'b$'"#,
                r#"<nil>: Invalid value: "": "l[1]" must validate all the schemas (allOf). None validated"#,
            ]
        );
        assert!(errors(&schema, &json!({"b": "10k", "l": ["ab"]})).is_empty());
    }

    #[test]
    fn long_values_are_shown_whole() {
        // `field.Error.ErrorBody` prints the bad value as it is (envoy gateway's 124-character
        // unix socket path comes back whole from the apiserver).
        let schema = obj(json!({"s": {"type": "string", "pattern": "^a"}}));
        let long = "x".repeat(100);
        let errs = errors(&schema, &json!({"s": long}));
        assert_eq!(
            errs,
            [format!(
                "s: Invalid value: \"{long}\": s in body should match '^a'"
            )]
        );
    }
}

#[cfg(test)]
mod issue16 {
    use crate::diagnostics::FieldPath;
    use crate::schema::testutil::*;
    use serde_json::json;

    /// Issue 22: the message of a custom resource's schema error, word for word as the
    /// apiserver prints it, with the field's full path inside the message.
    #[test]
    fn issue16_schema_errors_read_as_the_apiserver_prints_them() {
        let schema = obj(json!({
            "replicas": {"type": "integer", "minimum": 0},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "name": {"type": "string", "maxLength": 1},
            "ports": {"type": "array", "maxItems": 1, "items": {"type": "integer"}}
        }));
        let errors = parsed(&schema)
            .validate(&json!({"replicas": -1, "mode": "c", "name": "ab", "ports": [1, 2]}));
        let base = FieldPath::parse("spec.config");
        let printed: Vec<String> = errors
            .iter()
            .map(|e| {
                let full = base.join(&e.path);
                format!("{full}: {}", e.message_at(&full))
            })
            .collect();
        assert_eq!(
            printed,
            [
                r#"spec.config.mode: Unsupported value: "c": supported values: "a", "b""#,
                "spec.config.name: Too long: may not be more than 1 byte",
                "spec.config.ports: Too many: 2: must have at most 1 item",
                "spec.config.replicas: Invalid value: -1: spec.config.replicas in body should be greater than or equal to 0",
            ]
        );
    }

    /// Issue 22: kube-openapi's composite errors (`anyOf`, `oneOf`, `allOf`, `not`) are no
    /// `*errors.Validation`, so the apiserver reports them at no field, `<nil>`, naming the
    /// field in the message at its full path (`""` at the root), as apiextensions-apiserver's
    /// `validation_test.go` shows (`<nil>: Invalid value: "": "field" must validate at least
    /// one schema (anyOf)`).
    #[test]
    fn issue16_composite_errors_are_at_no_field_and_name_it_in_the_message() {
        let schema = obj(json!({"field": {"type": "integer",
            "anyOf": [{"minimum": 10}, {"maximum": 0}]}}));
        let errors = parsed(&schema).validate(&json!({"field": 5}));
        let composite: Vec<_> = errors.iter().filter(|e| e.path.is_nil()).collect();
        assert_eq!(
            composite
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#]
        );
        // Under a base (a service's config), the message names the full path; the error
        // stays at no field.
        let full = FieldPath::parse("spec.config").join(&composite[0].path);
        assert!(full.is_nil());
        assert_eq!(full.to_string(), "<nil>");
        assert_eq!(
            composite[0].message_at(&full),
            r#"Invalid value: "": "spec.config.field" must validate at least one schema (anyOf)"#
        );
        // At the root of the validated value, kube-openapi's path is "".
        let root = parsed(&json!({"type": "object", "not": {"required": ["a"]}}));
        assert_eq!(
            root.validate(&json!({"a": 1}))
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [r#"<nil>: Invalid value: "": "" must not validate the schema (not)"#]
        );
    }
}

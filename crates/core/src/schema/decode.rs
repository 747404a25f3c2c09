//! Decoding one CRD schema node like `JSONSchemaProps` (wrong JSON types, unsupported and
//! unknown keywords, value validations), and the `Checker` that collects the problems.
//!
//! Imports `structural` and `goregex`.

use std::collections::BTreeSet;

use serde_json::Value;

use super::structural::{SchemaProblem, quote};
use crate::diagnostics::FieldPath;

/// The `type` values a CRD schema may use.
const SCHEMA_TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "array", "object"];
/// Keywords `NewStructural` rejects outright.
const UNSUPPORTED_KEYWORDS: [&str; 7] = [
    "id",
    "$schema",
    "$ref",
    "definitions",
    "dependencies",
    "patternProperties",
    "additionalItems",
];

/// Read a schema as Go's decoder reads `JSONSchemaProps` (issue 22): a keyword whose value is
/// `null` is absent (Go leaves a string, number or boolean at its zero value and sets a
/// pointer, slice or map to nil, without an error), and a `null` schema among `properties`,
/// `allOf`, `anyOf`, `oneOf` or a list of `items` is the empty schema. Values (`default`,
/// `example`, `enum`) are data and kept as they are.
pub(super) fn drop_null_keywords(node: &mut Value) {
    let Value::Object(m) = node else {
        return;
    };
    m.retain(|_, v| !v.is_null());
    for (k, v) in m.iter_mut() {
        match (k.as_str(), v) {
            ("properties" | "patternProperties" | "definitions", Value::Object(props)) => {
                props.values_mut().for_each(schema_or_empty);
            }
            ("allOf" | "anyOf" | "oneOf" | "items", Value::Array(list)) => {
                list.iter_mut().for_each(schema_or_empty);
            }
            ("items" | "additionalProperties" | "not", v @ Value::Object(_)) => {
                drop_null_keywords(v);
            }
            ("x-kubernetes-validations", Value::Array(rules)) => {
                for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                    rule.retain(|_, v| !v.is_null());
                }
            }
            ("externalDocs", Value::Object(docs)) => docs.retain(|_, v| !v.is_null()),
            _ => {}
        }
    }
}

/// A schema in a map or list of schemas: `null` is Go's zero `JSONSchemaProps`, `{}`.
fn schema_or_empty(v: &mut Value) {
    if v.is_null() {
        *v = Value::Object(serde_json::Map::new());
    }
    drop_null_keywords(v);
}

/// Where a structural node sits (upstream `level`): decides the "type must not be empty" wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Level {
    Root,
    Item,
    Field,
}

/// One schema node decoded like `JSONSchemaProps` (borrowing from the raw JSON).
#[allow(clippy::struct_excessive_bools)] // one flag per boolean CRD keyword
#[derive(Default)]
pub(super) struct Props<'a> {
    pub(super) type_: Option<&'a str>,
    pub(super) type_given: bool,
    pub(super) format: Option<&'a str>,
    pub(super) title: Option<&'a str>,
    pub(super) description: Option<&'a str>,
    pub(super) default: Option<&'a Value>,
    pub(super) enum_: Option<&'a Vec<Value>>,
    pub(super) required: Vec<&'a str>,
    pub(super) items: Option<&'a Value>,
    pub(super) items_given: bool,
    pub(super) properties: Vec<(&'a str, &'a Value)>,
    pub(super) additional_properties: Option<&'a Value>,
    pub(super) all_of: Vec<&'a Value>,
    pub(super) any_of: Vec<&'a Value>,
    pub(super) one_of: Vec<&'a Value>,
    pub(super) not: Option<&'a Value>,
    pub(super) nullable: bool,
    pub(super) external_docs: bool,
    pub(super) preserve_unknown_fields: bool,
    pub(super) embedded_resource: bool,
    pub(super) int_or_string: bool,
    pub(super) list_type: Option<&'a str>,
    pub(super) list_map_keys: Vec<&'a str>,
    pub(super) map_type: Option<&'a str>,
    pub(super) has_validations: bool,
}

/// Collects problems while walking a schema.
#[derive(Default)]
pub(super) struct Checker {
    /// `false` reproduces `NewStructural` only: decode problems, no structural rules or warnings.
    pub(super) full: bool,
    pub(super) problems: Vec<SchemaProblem>,
    pub(super) warnings: Vec<SchemaProblem>,
    /// Nesting depth below `additionalProperties` schemas (their defaults are not checked).
    pub(super) under_additional_properties: usize,
}

impl Checker {
    /// A problem `NewStructural` (or the JSON decode before it) would also report.
    pub(super) fn decode_problem(&mut self, path: &FieldPath, message: String) {
        self.problems.push(SchemaProblem {
            path: path.clone(),
            message,
        });
    }

    /// A CRD-validation / structural-rule problem (only in full mode).
    pub(super) fn problem(&mut self, path: &FieldPath, message: String) {
        if self.full {
            self.decode_problem(path, message);
        }
    }

    pub(super) fn warning(&mut self, path: &FieldPath, message: String) {
        if self.full {
            self.warnings.push(SchemaProblem {
                path: path.clone(),
                message,
            });
        }
    }

    pub(super) fn string<'a>(
        &mut self,
        v: &'a Value,
        path: &FieldPath,
        keyword: &str,
    ) -> Option<&'a str> {
        if let Value::String(s) = v {
            Some(s)
        } else {
            self.decode_problem(path, format!("`{keyword}` must be a string"));
            None
        }
    }

    pub(super) fn boolean(&mut self, v: &Value, path: &FieldPath, keyword: &str) -> bool {
        if let Value::Bool(b) = v {
            *b
        } else {
            self.decode_problem(path, format!("`{keyword}` must be a boolean"));
            false
        }
    }

    pub(super) fn string_list<'a>(
        &mut self,
        v: &'a Value,
        path: &FieldPath,
        keyword: &str,
    ) -> Vec<&'a str> {
        let strings: Option<Vec<&str>> = v
            .as_array()
            .and_then(|a| a.iter().map(Value::as_str).collect());
        strings.unwrap_or_else(|| {
            self.decode_problem(path, format!("`{keyword}` must be a list of strings"));
            Vec::new()
        })
    }

    pub(super) fn schema_list<'a>(
        &mut self,
        v: &'a Value,
        path: &FieldPath,
        keyword: &str,
    ) -> Vec<&'a Value> {
        if let Value::Array(a) = v {
            a.iter().collect()
        } else {
            self.decode_problem(path, format!("`{keyword}` must be a list of schemas"));
            Vec::new()
        }
    }

    /// Decode one node's keywords, reporting wrong JSON types, unsupported and unknown keywords.
    #[allow(clippy::too_many_lines)] // one arm per CRD keyword reads best as a single table
    pub(super) fn decode<'a>(&mut self, node: &'a Value, path: &FieldPath) -> Option<Props<'a>> {
        let Value::Object(m) = node else {
            self.decode_problem(path, "must be a schema object".to_owned());
            return None;
        };
        let mut p = Props::default();
        for (k, v) in m {
            let kp = path.key(k);
            match k.as_str() {
                "type" => {
                    p.type_given = true;
                    match v {
                        Value::String(t) if t == "null" => self.decode_problem(
                            &kp,
                            "`type: null` is not supported; use `nullable: true` instead".to_owned(),
                        ),
                        Value::String(t) if SCHEMA_TYPES.contains(&t.as_str()) => p.type_ = Some(t),
                        Value::String(t) => self.decode_problem(
                            &kp,
                            format!(
                                "unsupported `type` {}: must be one of {}",
                                quote(t),
                                SCHEMA_TYPES.join(", ")
                            ),
                        ),
                        Value::Array(_) => self.decode_problem(
                            &kp,
                            "`type` must be a single type name; use `nullable: true` instead of a type list"
                                .to_owned(),
                        ),
                        _ => self.decode_problem(&kp, "`type` must be a string".to_owned()),
                    }
                }
                "format" => p.format = self.string(v, &kp, k),
                "title" => p.title = self.string(v, &kp, k),
                "description" => p.description = self.string(v, &kp, k),
                // The apiserver compiles patterns with Go's regexp (RE2 syntax): a pattern Go
                // rejects fails the CRD, one Go accepts (`(?i)` inside, `\d`) must not.
                "pattern" => {
                    if let Some(pattern) = self.string(v, &kp, k)
                        && let Err(e) = super::goregex::compile(pattern)
                    {
                        self.problem(
                            &kp,
                            format!(
                                "`pattern` {} is not a valid Go (RE2) regular expression: {e}",
                                quote(pattern)
                            ),
                        );
                    }
                }
                // `default: null` decodes to "no default" upstream.
                "default" => p.default = Some(v).filter(|v| !v.is_null()),
                "example" => {}
                "externalDocs" => {
                    p.external_docs = true;
                    self.external_docs(v, &kp);
                }
                "enum" => match v {
                    Value::Array(a) => p.enum_ = Some(a),
                    _ => self.decode_problem(&kp, "`enum` must be a list".to_owned()),
                },
                "maximum" | "minimum" => {
                    if !v.is_number() {
                        self.decode_problem(&kp, format!("`{k}` must be a number"));
                    }
                }
                "multipleOf" => match v.as_f64() {
                    Some(n) if n > 0.0 => {}
                    Some(_) => self.problem(&kp, "`multipleOf` must be greater than 0".to_owned()),
                    None => self.decode_problem(&kp, "`multipleOf` must be a number".to_owned()),
                },
                "exclusiveMaximum" | "exclusiveMinimum" => {
                    if !v.is_boolean() {
                        let bound = if k == "exclusiveMinimum" {
                            "minimum"
                        } else {
                            "maximum"
                        };
                        self.decode_problem(
                            &kp,
                            format!(
                                "`{k}` must be a boolean (OpenAPI v3.0 form, used with `{bound}`)"
                            ),
                        );
                    }
                }
                "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties"
                | "minProperties" => {
                    if !v.is_u64() {
                        self.decode_problem(&kp, format!("`{k}` must be a non-negative integer"));
                    }
                }
                "uniqueItems" => match v {
                    Value::Bool(true) => self.problem(
                        &kp,
                        "`uniqueItems: true` is not supported (its runtime cost is quadratic)"
                            .to_owned(),
                    ),
                    Value::Bool(false) => {}
                    _ => self.decode_problem(&kp, "`uniqueItems` must be a boolean".to_owned()),
                },
                "required" => {
                    p.required = self.string_list(v, &kp, k);
                    let mut seen = BTreeSet::new();
                    for name in &p.required {
                        if !seen.insert(*name) {
                            self.problem(
                                &kp,
                                format!("`required` lists {} more than once", quote(name)),
                            );
                        }
                    }
                }
                "items" => {
                    p.items_given = true;
                    match v {
                        Value::Object(_) => p.items = Some(v),
                        Value::Array(_) => self.decode_problem(
                            &kp,
                            "`items` must be a single schema, not an array".to_owned(),
                        ),
                        _ => self.decode_problem(&kp, "`items` must be a schema object".to_owned()),
                    }
                }
                "properties" => match v {
                    Value::Object(props) => {
                        p.properties = props.iter().map(|(pk, pv)| (pk.as_str(), pv)).collect();
                    }
                    _ => {
                        self.decode_problem(
                            &kp,
                            "`properties` must be a map of schemas".to_owned(),
                        );
                    }
                },
                "additionalProperties" => match v {
                    Value::Bool(_) | Value::Object(_) => p.additional_properties = Some(v),
                    _ => self.decode_problem(
                        &kp,
                        "`additionalProperties` must be a boolean or a schema object".to_owned(),
                    ),
                },
                "allOf" => p.all_of = self.schema_list(v, &kp, k),
                "anyOf" => p.any_of = self.schema_list(v, &kp, k),
                "oneOf" => p.one_of = self.schema_list(v, &kp, k),
                "not" => p.not = Some(v),
                "nullable" => p.nullable = self.boolean(v, &kp, k),
                "x-kubernetes-preserve-unknown-fields" => match v {
                    Value::Bool(true) => p.preserve_unknown_fields = true,
                    Value::Bool(false) => self.decode_problem(
                        &kp,
                        "`x-kubernetes-preserve-unknown-fields` must be true or undefined"
                            .to_owned(),
                    ),
                    _ => self.decode_problem(&kp, format!("`{k}` must be a boolean")),
                },
                "x-kubernetes-embedded-resource" => p.embedded_resource = self.boolean(v, &kp, k),
                "x-kubernetes-int-or-string" => p.int_or_string = self.boolean(v, &kp, k),
                "x-kubernetes-list-type" => p.list_type = self.string(v, &kp, k),
                "x-kubernetes-list-map-keys" => p.list_map_keys = self.string_list(v, &kp, k),
                "x-kubernetes-map-type" => p.map_type = self.string(v, &kp, k),
                "x-kubernetes-validations" => p.has_validations = self.validations(v, &kp),
                // Our marker of a deprecated field (issue 23): its warning text.
                super::DEPRECATED_KEYWORD => match v {
                    Value::String(w) if !w.trim().is_empty() && w.len() <= 256 => {}
                    _ => self.decode_problem(
                        &kp,
                        format!("`{k}` must be the warning text (1 to 256 characters)"),
                    ),
                },
                _ if UNSUPPORTED_KEYWORDS.contains(&k.as_str()) => {
                    self.decode_problem(&kp, format!("`{k}` is not supported"));
                }
                _ => self.problem(
                    &kp,
                    format!("unknown keyword `{k}`: CRD schemas do not support it"),
                ),
            }
        }
        Some(p)
    }

    pub(super) fn external_docs(&mut self, v: &Value, path: &FieldPath) {
        let Value::Object(m) = v else {
            self.decode_problem(path, "`externalDocs` must be an object".to_owned());
            return;
        };
        for (k, f) in m {
            match k.as_str() {
                "description" | "url" => {
                    self.string(f, &path.key(k), k);
                }
                _ => self.problem(
                    &path.key(k),
                    format!("unknown field `{k}` in `externalDocs`"),
                ),
            }
        }
    }

    /// Syntax of `x-kubernetes-validations`; returns whether any rule is present.
    pub(super) fn validations(&mut self, v: &Value, path: &FieldPath) -> bool {
        let Value::Array(rules) = v else {
            self.decode_problem(
                path,
                "`x-kubernetes-validations` must be a list of rules".to_owned(),
            );
            return false;
        };
        for (i, rule) in rules.iter().enumerate() {
            let rp = path.index(i);
            let Value::Object(m) = rule else {
                self.decode_problem(&rp, "must be an object with a `rule`".to_owned());
                continue;
            };
            if !m.contains_key("rule") {
                self.problem(&rp.key("rule"), "`rule` is required".to_owned());
            }
            for (k, f) in m {
                let fp = rp.key(k);
                match k.as_str() {
                    "rule" | "message" | "messageExpression" | "fieldPath" => {
                        self.string(f, &fp, k);
                    }
                    "reason" => {
                        const REASONS: [&str; 4] = [
                            "FieldValueInvalid",
                            "FieldValueForbidden",
                            "FieldValueRequired",
                            "FieldValueDuplicate",
                        ];
                        if let Some(r) = self.string(f, &fp, k)
                            && !REASONS.contains(&r)
                        {
                            self.problem(
                                &fp,
                                format!("`reason` must be one of {}", REASONS.join(", ")),
                            );
                        }
                    }
                    "optionalOldSelf" => {
                        self.boolean(f, &fp, k);
                    }
                    _ => self.problem(&fp, format!("unknown field `{k}` in a validation rule")),
                }
            }
        }
        !rules.is_empty()
    }
}

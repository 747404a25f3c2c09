//! CRD `openAPIV3Schema` handling for service config schemas.
//!
//! A port of the apiextensions-apiserver structural-schema rules (`NewStructural`,
//! `ValidateStructural`, CRD keyword validation, `ValidateDefaults`), the conversion to a
//! JSON Schema (draft 7) that behaves like the kube-openapi validator, the Kubernetes
//! (go-openapi strfmt) format checkers, and the mapping of validation errors to
//! Kubernetes-style field errors.

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};
use std::sync::LazyLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::Location;
use jsonschema::{Draft, Keyword, ValidationError, Validator};
use regex::Regex;
use serde_json::{Map, Value};

/// Prefix of the format names we register, so the crate's built-in (non-Kubernetes) checkers
/// never run for a CRD format.
const FORMAT_PREFIX: &str = "krm-";
/// Keyword our Go-regexp `pattern` check is registered under (see `with_go_patterns`).
const GO_PATTERN_KEYWORD: &str = "x-krm-go-pattern";
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
/// Where a junctor-only restriction applies, for messages.
const IN_JUNCTOR: &str =
    "inside allOf/anyOf/oneOf/not (structural schemas allow only value validations there)";
/// Longest rendering of a value inside a field error message.
const MAX_SHOWN_VALUE: usize = 64;

// ---------------------------------------------------------------------------------------------
// Public data types
// ---------------------------------------------------------------------------------------------

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

/// Port of apiextensions-apiserver `schema.Structural` (only what defaulting, pruning and explain need).
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

    /// Port of `NewStructural`: build the structural part without the structural-schema checks.
    ///
    /// Fails only where upstream fails (unsupported keywords, array `items`,
    /// `x-kubernetes-preserve-unknown-fields: false`) or where the JSON could not be decoded into
    /// `JSONSchemaProps` (wrong JSON types). Unknown keywords are ignored, as a Go decode drops them.
    ///
    /// # Errors
    /// Every problem found, with its schema path.
    pub fn from_json(raw: &Value) -> Result<Structural, Vec<SchemaProblem>> {
        let mut checker = Checker::default();
        let s = checker.structural(raw, &SPath::default(), Level::Root);
        if checker.problems.is_empty() {
            Ok(s)
        } else {
            Err(checker.problems)
        }
    }
}

/// A problem in a schema, located by its dotted schema path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaProblem {
    /// Dotted path from the schema root (`properties.a.items`, `allOf[0].type`); "" for the root.
    pub path: String,
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

/// One step of an instance path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathSegment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A validation error at a path of the validated instance.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FieldError {
    /// Path relative to the validated instance.
    pub path: Vec<PathSegment>,
    /// Kubernetes field-error style message.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", render_path(&self.path), self.message)
        }
    }
}

/// Render a path as `a.b[0].c`; keys that would be ambiguous are quoted (`a["x.y"]`).
#[must_use]
pub fn render_path(path: &[PathSegment]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            PathSegment::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
            PathSegment::Key(k) => {
                let plain = !k.is_empty()
                    && k.chars()
                        .all(|c| !matches!(c, '.' | '[' | ']' | '"') && !c.is_whitespace());
                if plain {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                } else {
                    out.push('[');
                    out.push_str(&quote(k));
                    out.push(']');
                }
            }
        }
    }
    out
}

/// A checked CRD-style config schema with its converted JSON Schema and compiled validator.
#[derive(Debug, Clone)]
pub struct ConfigSchema {
    raw: Value,
    structural: Structural,
    json_schema: Value,
    warnings: Vec<SchemaProblem>,
    validator: Validator,
}

impl ConfigSchema {
    /// Parse and check a CRD-style schema; returns ALL problems found (not just the first).
    ///
    /// # Errors
    /// Every structural-schema, keyword and default problem, each with its schema path.
    pub fn parse(raw: &Value) -> Result<ConfigSchema, Vec<SchemaProblem>> {
        let mut checker = Checker {
            full: true,
            ..Checker::default()
        };
        let structural = checker.structural(raw, &SPath::default(), Level::Root);
        let json_schema = to_json_schema(raw);
        if !checker.problems.is_empty() {
            return Err(checker.problems);
        }
        match compile(&json_schema) {
            Ok(validator) => Ok(ConfigSchema {
                raw: raw.clone(),
                structural,
                json_schema,
                warnings: checker.warnings,
                validator,
            }),
            // Our checks should catch everything the compiler rejects; report it if they did not.
            Err(e) => Err(vec![SchemaProblem {
                path: String::new(),
                message: format!("does not compile as a JSON Schema: {e}"),
            }]),
        }
    }

    /// The schema as given.
    #[must_use]
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// The structural schema (defaulting, pruning, explain).
    #[must_use]
    pub fn structural(&self) -> &Structural {
        &self.structural
    }

    /// The converted JSON Schema (draft-07 keywords) used for validation and editor schemas.
    #[must_use]
    pub fn json_schema(&self) -> &Value {
        &self.json_schema
    }

    /// Non-fatal findings (e.g. a `default` on the root, which Kubernetes never applies).
    #[must_use]
    pub fn warnings(&self) -> &[SchemaProblem] {
        &self.warnings
    }

    /// Validate an instance (e.g. a service's `config`) and return every error.
    #[must_use]
    pub fn validate(&self, instance: &Value) -> Vec<FieldError> {
        validate_with(&self.validator, &self.json_schema, instance)
    }
}

// ---------------------------------------------------------------------------------------------
// Checking (NewStructural + CRD validation + ValidateStructural + ValidateDefaults)
// ---------------------------------------------------------------------------------------------

/// A schema path under construction.
#[derive(Debug, Clone, Default)]
struct SPath(Vec<PathSegment>);

impl SPath {
    fn key(&self, k: &str) -> SPath {
        let mut v = self.0.clone();
        v.push(PathSegment::Key(k.to_owned()));
        SPath(v)
    }

    fn index(&self, i: usize) -> SPath {
        let mut v = self.0.clone();
        v.push(PathSegment::Index(i));
        SPath(v)
    }

    fn render(&self) -> String {
        render_path(&self.0)
    }
}

/// Where a structural node sits (upstream `level`): decides the "type must not be empty" wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// One schema node decoded like `JSONSchemaProps` (borrowing from the raw JSON).
#[allow(clippy::struct_excessive_bools)] // one flag per boolean CRD keyword
#[derive(Default)]
struct Props<'a> {
    type_: Option<&'a str>,
    type_given: bool,
    format: Option<&'a str>,
    title: Option<&'a str>,
    description: Option<&'a str>,
    default: Option<&'a Value>,
    enum_: Option<&'a Vec<Value>>,
    required: Vec<&'a str>,
    items: Option<&'a Value>,
    items_given: bool,
    properties: Vec<(&'a str, &'a Value)>,
    additional_properties: Option<&'a Value>,
    all_of: Vec<&'a Value>,
    any_of: Vec<&'a Value>,
    one_of: Vec<&'a Value>,
    not: Option<&'a Value>,
    nullable: bool,
    external_docs: bool,
    preserve_unknown_fields: bool,
    embedded_resource: bool,
    int_or_string: bool,
    list_type: Option<&'a str>,
    list_map_keys: Vec<&'a str>,
    map_type: Option<&'a str>,
    has_validations: bool,
}

/// Collects problems while walking a schema.
#[derive(Default)]
struct Checker {
    /// `false` reproduces `NewStructural` only: decode problems, no structural rules or warnings.
    full: bool,
    problems: Vec<SchemaProblem>,
    warnings: Vec<SchemaProblem>,
    /// Nesting depth below `additionalProperties` schemas (their defaults are not checked).
    under_additional_properties: usize,
}

impl Checker {
    /// A problem `NewStructural` (or the JSON decode before it) would also report.
    fn decode_problem(&mut self, path: &SPath, message: String) {
        self.problems.push(SchemaProblem {
            path: path.render(),
            message,
        });
    }

    /// A CRD-validation / structural-rule problem (only in full mode).
    fn problem(&mut self, path: &SPath, message: String) {
        if self.full {
            self.decode_problem(path, message);
        }
    }

    fn warning(&mut self, path: &SPath, message: String) {
        if self.full {
            self.warnings.push(SchemaProblem {
                path: path.render(),
                message,
            });
        }
    }

    fn string<'a>(&mut self, v: &'a Value, path: &SPath, keyword: &str) -> Option<&'a str> {
        if let Value::String(s) = v {
            Some(s)
        } else {
            self.decode_problem(path, format!("`{keyword}` must be a string"));
            None
        }
    }

    fn boolean(&mut self, v: &Value, path: &SPath, keyword: &str) -> bool {
        if let Value::Bool(b) = v {
            *b
        } else {
            self.decode_problem(path, format!("`{keyword}` must be a boolean"));
            false
        }
    }

    fn string_list<'a>(&mut self, v: &'a Value, path: &SPath, keyword: &str) -> Vec<&'a str> {
        let strings: Option<Vec<&str>> = v
            .as_array()
            .and_then(|a| a.iter().map(Value::as_str).collect());
        strings.unwrap_or_else(|| {
            self.decode_problem(path, format!("`{keyword}` must be a list of strings"));
            Vec::new()
        })
    }

    fn schema_list<'a>(&mut self, v: &'a Value, path: &SPath, keyword: &str) -> Vec<&'a Value> {
        if let Value::Array(a) = v {
            a.iter().collect()
        } else {
            self.decode_problem(path, format!("`{keyword}` must be a list of schemas"));
            Vec::new()
        }
    }

    /// Decode one node's keywords, reporting wrong JSON types, unsupported and unknown keywords.
    #[allow(clippy::too_many_lines)] // one arm per CRD keyword reads best as a single table
    fn decode<'a>(&mut self, node: &'a Value, path: &SPath) -> Option<Props<'a>> {
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

    fn external_docs(&mut self, v: &Value, path: &SPath) {
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
    fn validations(&mut self, v: &Value, path: &SPath) -> bool {
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

    /// Walk a structural (non-junctor) node and build its `Structural`.
    fn structural(&mut self, node: &Value, path: &SPath, level: Level) -> Structural {
        let Some(p) = self.decode(node, path) else {
            return Structural::default();
        };
        let items = p
            .items
            .map(|v| Box::new(self.structural(v, &path.key("items"), Level::Item)));
        let props_path = path.key("properties");
        let mut properties = Vec::with_capacity(p.properties.len());
        for (k, v) in &p.properties {
            properties.push((
                (*k).to_owned(),
                self.structural(v, &props_path.key(k), Level::Field),
            ));
        }
        let additional_properties = match p.additional_properties {
            Some(Value::Bool(b)) => Some(AdditionalProperties::Bool(*b)),
            Some(v) => {
                // Upstream ValidateDefaults never follows additionalProperties.
                self.under_additional_properties += 1;
                let ap = self.structural(v, &path.key("additionalProperties"), Level::Field);
                self.under_additional_properties -= 1;
                Some(AdditionalProperties::Schema(Box::new(ap)))
            }
            None => None,
        };
        let s = Structural {
            type_: p.type_.unwrap_or_default().to_owned(),
            title: p.title.map(str::to_owned),
            description: p.description.map(str::to_owned),
            default: p.default.cloned(),
            nullable: p.nullable,
            format: p.format.map(str::to_owned),
            enum_: p.enum_.cloned().unwrap_or_default(),
            required: p.required.iter().map(|r| (*r).to_owned()).collect(),
            properties,
            additional_properties,
            items,
            x_preserve_unknown_fields: p.preserve_unknown_fields,
            x_int_or_string: p.int_or_string,
            x_embedded_resource: p.embedded_resource,
        };
        self.junctors(&p, &s, path);
        if self.full {
            self.structural_rules(&p, &s, path, level);
            self.list_rules(&p, &s, path);
            if self.under_additional_properties == 0 {
                self.check_default(node, &s, path);
            }
        }
        s
    }

    /// `validateStructuralInvariants` plus the CRD keyword rules that need the whole node.
    fn structural_rules(&mut self, p: &Props<'_>, s: &Structural, path: &SPath, level: Level) {
        if !p.type_given
            && !s.x_int_or_string
            && !s.x_preserve_unknown_fields
            && !s.x_embedded_resource
        {
            let place = match level {
                Level::Root => "at the root",
                Level::Item => "for array items",
                Level::Field => "for object fields",
            };
            self.problem(
                &path.key("type"),
                format!("`type` must not be empty {place} (unless x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields is true)"),
            );
        }
        if s.type_ == "array" && !p.items_given {
            self.problem(
                &path.key("items"),
                "`items` must be specified when `type` is array".to_owned(),
            );
        }
        if level == Level::Root {
            if !s.type_.is_empty() && s.type_ != "object" {
                self.problem(
                    &path.key("type"),
                    "`type` must be object at the root".to_owned(),
                );
            }
            if s.nullable {
                self.problem(
                    &path.key("nullable"),
                    "`nullable` must be false at the root".to_owned(),
                );
            }
            if s.additional_properties.is_some() {
                self.problem(
                    &path.key("additionalProperties"),
                    "`additionalProperties` must not be used at the root".to_owned(),
                );
            }
            if s.default.is_some() {
                self.warning(
                    &path.key("default"),
                    "a `default` on the root is never applied by Kubernetes; it has no effect"
                        .to_owned(),
                );
            }
        }
        if let Some(ap) = &s.additional_properties
            && !s.properties.is_empty()
            && *ap != AdditionalProperties::Bool(true)
        {
            self.problem(
                &path.key("additionalProperties"),
                "`additionalProperties` and `properties` are mutually exclusive (only `additionalProperties: true` may accompany `properties`)".to_owned(),
            );
        }
        if s.x_int_or_string && s.x_preserve_unknown_fields {
            self.problem(
                &path.key("x-kubernetes-preserve-unknown-fields"),
                "`x-kubernetes-preserve-unknown-fields` must be false if `x-kubernetes-int-or-string` is true".to_owned(),
            );
        }
        if s.x_int_or_string && s.x_embedded_resource {
            self.problem(
                &path.key("x-kubernetes-embedded-resource"),
                "`x-kubernetes-embedded-resource` must be false if `x-kubernetes-int-or-string` is true".to_owned(),
            );
        }
        if s.x_embedded_resource {
            self.embedded_rules(s, path);
        }
        if p.has_validations {
            self.warning(
                &path.key("x-kubernetes-validations"),
                "CEL rules are not evaluated by krm-catalog".to_owned(),
            );
        }
        // OpenAPI's numeric formats on their own types (kubebuilder writes `int32`/`int64` on
        // every Go integer field) only document the width; kube-openapi ignores them, and so do
        // we, without a warning on every run for every real CRD.
        let numeric_format = matches!(
            (p.format, p.type_),
            (Some("int32" | "int64"), Some("integer")) | (Some("float" | "double"), Some("number"))
        );
        if let Some(f) = p.format
            && !numeric_format
            && convert_format(
                f,
                &node_types(
                    p.type_.map(|t| Value::String(t.to_owned())).as_ref(),
                    s.x_int_or_string,
                ),
            )
            .is_none()
        {
            self.warning(
                &path.key("format"),
                format!(
                    "format {} is not validated by Kubernetes for this type and is ignored",
                    quote(f)
                ),
            );
        }
    }

    fn embedded_rules(&mut self, s: &Structural, path: &SPath) {
        if s.type_ != "object" {
            self.problem(
                &path.key("type"),
                "`type` must be object if `x-kubernetes-embedded-resource` is true".to_owned(),
            );
        }
        if s.additional_properties.is_some() {
            self.problem(
                &path.key("additionalProperties"),
                "`additionalProperties` must not be used if `x-kubernetes-embedded-resource` is true".to_owned(),
            );
        }
        if !s.x_preserve_unknown_fields && s.properties.is_empty() {
            self.problem(
                &path.key("properties"),
                "`properties` must not be empty if `x-kubernetes-embedded-resource` is true without `x-kubernetes-preserve-unknown-fields`".to_owned(),
            );
        }
        for (name, want) in [
            ("apiVersion", "string"),
            ("kind", "string"),
            ("metadata", "object"),
        ] {
            if let Some(field) = s.property(name)
                && field.type_ != want
            {
                self.problem(
                    &path.key("properties").key(name).key("type"),
                    format!("`type` must be {want} for `{name}` of an embedded resource"),
                );
            }
        }
    }

    /// `x-kubernetes-list-type`, `-list-map-keys` and `-map-type` rules.
    fn list_rules(&mut self, p: &Props<'_>, s: &Structural, path: &SPath) {
        let lt_path = path.key("x-kubernetes-list-type");
        if let Some(lt) = p.list_type {
            if !matches!(lt, "atomic" | "set" | "map") {
                self.problem(
                    &lt_path,
                    "`x-kubernetes-list-type` must be one of atomic, set, map".to_owned(),
                );
            }
            if s.type_ != "array" {
                self.problem(
                    &lt_path,
                    "`x-kubernetes-list-type` must only be used on type array".to_owned(),
                );
            }
        }
        if let Some(mt) = p.map_type {
            if !matches!(mt, "atomic" | "granular") {
                self.problem(
                    &path.key("x-kubernetes-map-type"),
                    "`x-kubernetes-map-type` must be one of atomic, granular".to_owned(),
                );
            }
            if s.type_ != "object" {
                self.problem(
                    &path.key("type"),
                    "`type` must be object if `x-kubernetes-map-type` is specified".to_owned(),
                );
            }
        }
        if !p.list_map_keys.is_empty() && p.list_type != Some("map") {
            self.problem(
                &lt_path,
                "`x-kubernetes-list-type` must be map if `x-kubernetes-list-map-keys` is non-empty"
                    .to_owned(),
            );
        }
        let raw_items = p.items.and_then(Value::as_object);
        if p.list_type == Some("set")
            && let (Some(item), Some(raw)) = (&s.items, raw_items)
        {
            let items_path = path.key("items");
            match item.type_.as_str() {
                "array"
                    if raw
                        .get("x-kubernetes-list-type")
                        .is_some_and(|t| t.as_str() != Some("atomic")) =>
                {
                    self.problem(
                        &items_path.key("x-kubernetes-list-type"),
                        "must be atomic as item of a list with x-kubernetes-list-type=set"
                            .to_owned(),
                    );
                }
                "object"
                    if raw.get("x-kubernetes-map-type").and_then(Value::as_str)
                        != Some("atomic") =>
                {
                    self.problem(
                        &items_path.key("x-kubernetes-map-type"),
                        "must be atomic as item of a list with x-kubernetes-list-type=set"
                            .to_owned(),
                    );
                }
                _ => {}
            }
        }
        if p.list_type == Some("map") {
            self.map_list_rules(p, s, path);
        }
    }

    fn map_list_rules(&mut self, p: &Props<'_>, s: &Structural, path: &SPath) {
        let keys_path = path.key("x-kubernetes-list-map-keys");
        if p.list_map_keys.is_empty() {
            self.problem(
                &keys_path,
                "`x-kubernetes-list-map-keys` must not be empty if `x-kubernetes-list-type` is map"
                    .to_owned(),
            );
        }
        let items_path = path.key("items");
        let Some(item) = &s.items else {
            if p.items_given {
                return;
            }
            self.problem(
                &items_path,
                "must have a schema if `x-kubernetes-list-type` is map".to_owned(),
            );
            return;
        };
        if item.type_ != "object" {
            self.problem(
                &items_path.key("type"),
                "must be object if parent array's `x-kubernetes-list-type` is map".to_owned(),
            );
            return;
        }
        let mut seen = BTreeSet::new();
        for key in &p.list_map_keys {
            if !seen.insert(*key) {
                self.problem(
                    &keys_path,
                    format!("must not contain {} more than once", quote(key)),
                );
            }
            let key_path = items_path.key("properties").key(key);
            let Some(field) = item.property(key) else {
                self.problem(
                    &keys_path,
                    format!("entry {} must name a property of the items", quote(key)),
                );
                continue;
            };
            if matches!(field.type_.as_str(), "array" | "object") {
                self.problem(
                    &key_path.key("type"),
                    "must be a scalar type because it is a key of a map list".to_owned(),
                );
            }
            if !item.required.iter().any(|r| r == key) && field.default.is_none() {
                self.problem(
                    &key_path,
                    "must be required or have a default because it is a key of a map list"
                        .to_owned(),
                );
            }
            if field.nullable {
                self.problem(
                    &key_path.key("nullable"),
                    "must be false because it is a key of a map list".to_owned(),
                );
            }
        }
    }

    /// Junctors of a structural node: their own rules, then completeness against `s`.
    fn junctors(&mut self, p: &Props<'_>, s: &Structural, path: &SPath) {
        // The two int-or-string exceptions (`isIntOrStringAnyOfPattern` / `...AllOfPattern`);
        // upstream detects the pattern without looking at x-kubernetes-int-or-string.
        let skip_any_of = is_int_or_string_pattern(&p.any_of);
        let skip_first_all_of_any_of = p
            .all_of
            .first()
            .and_then(|first| first.get("anyOf"))
            .and_then(Value::as_array)
            .is_some_and(|a| is_int_or_string_pattern(&a.iter().collect::<Vec<_>>()));
        for (name, list) in [
            ("allOf", &p.all_of),
            ("anyOf", &p.any_of),
            ("oneOf", &p.one_of),
        ] {
            for (i, j) in list.iter().enumerate() {
                let jp = path.key(name).index(i);
                match name {
                    "allOf" => self.nested(j, &jp, skip_first_all_of_any_of && i == 0, true),
                    "anyOf" if skip_any_of => {}
                    _ => self.nested(j, &jp, false, false),
                }
                if self.full {
                    self.completeness(j, s, path, &jp);
                }
            }
        }
        if let Some(n) = p.not {
            let np = path.key("not");
            self.nested(n, &np, false, false);
            if self.full {
                self.completeness(n, s, path, &np);
            }
        }
    }

    /// `validateNestedValueValidation`: a node inside a junctor.
    fn nested(&mut self, node: &Value, path: &SPath, skip_any_of: bool, cel_allowed: bool) {
        let Some(p) = self.decode(node, path) else {
            return;
        };
        let forbidden: [(&str, bool); 12] = [
            ("type", p.type_given),
            ("default", p.default.is_some()),
            ("title", p.title.is_some_and(|t| !t.is_empty())),
            ("description", p.description.is_some_and(|d| !d.is_empty())),
            ("nullable", p.nullable),
            ("externalDocs", p.external_docs),
            (
                "x-kubernetes-preserve-unknown-fields",
                p.preserve_unknown_fields,
            ),
            ("x-kubernetes-embedded-resource", p.embedded_resource),
            ("x-kubernetes-int-or-string", p.int_or_string),
            ("x-kubernetes-list-map-keys", !p.list_map_keys.is_empty()),
            ("x-kubernetes-list-type", p.list_type.is_some()),
            ("x-kubernetes-map-type", p.map_type.is_some()),
        ];
        for (keyword, present) in forbidden {
            if present {
                self.problem(
                    &path.key(keyword),
                    format!("`{keyword}` must not be used {IN_JUNCTOR}"),
                );
            }
        }
        if p.has_validations {
            if cel_allowed {
                self.warning(
                    &path.key("x-kubernetes-validations"),
                    "CEL rules are not evaluated by krm-catalog".to_owned(),
                );
            } else {
                self.problem(
                    &path.key("x-kubernetes-validations"),
                    "`x-kubernetes-validations` inside anyOf/oneOf/not is not allowed (only under allOf)".to_owned(),
                );
            }
        }
        if p.properties.iter().any(|(k, _)| *k == "metadata") {
            self.problem(
                &path.key("properties").key("metadata"),
                format!("`metadata` must not be specified {IN_JUNCTOR}"),
            );
        }
        if p.additional_properties.is_some() {
            self.problem(
                &path.key("additionalProperties"),
                format!("`additionalProperties` must not be used {IN_JUNCTOR}"),
            );
        }
        if !skip_any_of {
            for (i, j) in p.any_of.iter().enumerate() {
                self.nested(j, &path.key("anyOf").index(i), false, false);
            }
        }
        for (i, j) in p.all_of.iter().enumerate() {
            self.nested(j, &path.key("allOf").index(i), false, cel_allowed);
        }
        for (i, j) in p.one_of.iter().enumerate() {
            self.nested(j, &path.key("oneOf").index(i), false, false);
        }
        if let Some(n) = p.not {
            self.nested(n, &path.key("not"), false, false);
        }
        for (k, v) in &p.properties {
            self.nested(v, &path.key("properties").key(k), false, cel_allowed);
        }
        if let Some(items) = p.items {
            self.nested(items, &path.key("items"), false, cel_allowed);
        }
    }

    /// `validateNestedValueValidationCompleteness`: what a junctor names must exist in `s`.
    fn completeness(&mut self, v: &Value, s: &Structural, s_path: &SPath, v_path: &SPath) {
        let Value::Object(m) = v else {
            return;
        };
        for name in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(list)) = m.get(name) {
                for (i, j) in list.iter().enumerate() {
                    self.completeness(j, s, s_path, &v_path.key(name).index(i));
                }
            }
        }
        if let Some(n) = m.get("not") {
            self.completeness(n, s, s_path, &v_path.key("not"));
        }
        if let Some(items @ Value::Object(_)) = m.get("items") {
            let (sp, vp) = (s_path.key("items"), v_path.key("items"));
            match &s.items {
                Some(si) => self.completeness(items, si, &sp, &vp),
                None => self.missing_in_structure(&sp, &vp),
            }
        }
        if let Some(Value::Object(props)) = m.get("properties") {
            for (k, pv) in props {
                let (sp, vp) = (
                    s_path.key("properties").key(k),
                    v_path.key("properties").key(k),
                );
                match s.property(k) {
                    Some(sf) => self.completeness(pv, sf, &sp, &vp),
                    None => self.missing_in_structure(&sp, &vp),
                }
            }
        }
    }

    fn missing_in_structure(&mut self, s_path: &SPath, v_path: &SPath) {
        self.problem(
            s_path,
            format!(
                "must be declared here because `{}` uses it (everything named inside allOf/anyOf/oneOf/not must also exist outside them)",
                v_path.render()
            ),
        );
    }

    /// `ValidateDefaults` for one node: pruned, and valid against the node's own schema.
    fn check_default(&mut self, node: &Value, s: &Structural, path: &SPath) {
        let Some(default) = &s.default else {
            return;
        };
        let dpath = path.key("default");
        let mut pruned = default.clone();
        let removed = prune(&mut pruned, Some(s), s.x_embedded_resource);
        if !removed.is_empty() {
            let names: Vec<String> = removed.iter().map(|p| quote(&render_path(p))).collect();
            self.problem(
                &dpath,
                format!("must not have unknown fields: {}", names.join(", ")),
            );
        }
        // Deviation: the default is validated after its own children's defaults cascade into it
        // (as they do at runtime), so `default: {}` above required-but-defaulted fields passes.
        let mut effective = default.clone();
        super::defaulting::default(&mut effective, Some(s));
        let js = to_json_schema(node);
        // A node that does not compile already has a problem of its own (e.g. its pattern).
        if let Ok(validator) = compile(&js) {
            for e in validate_with(&validator, &js, &effective) {
                self.problem(&dpath, format!("invalid default: {e}"));
            }
        }
    }
}

/// `anyOf: [{type: integer}, {type: string}]` exactly (upstream `intOrStringAnyOf`).
fn is_int_or_string_pattern(list: &[&Value]) -> bool {
    let only_type = |v: &Value, t: &str| {
        v.as_object()
            .is_some_and(|m| m.len() == 1 && m.get("type").and_then(Value::as_str) == Some(t))
    };
    list.len() == 2 && only_type(list[0], "integer") && only_type(list[1], "string")
}

// ---------------------------------------------------------------------------------------------
// Pruning (pkg/apiserver/schema/pruning/algorithm.go)
// ---------------------------------------------------------------------------------------------

/// Port of `pruning.Prune`: drop fields the schema does not know; returns the dropped paths.
///
/// `is_resource_root` keeps `apiVersion`, `kind` and `metadata` at the top, as for a resource.
pub fn prune(
    x: &mut Value,
    s: Option<&Structural>,
    is_resource_root: bool,
) -> Vec<Vec<PathSegment>> {
    let mut removed = Vec::new();
    let empty = Structural::default();
    // Upstream substitutes an empty embedded-resource schema when the root has none.
    let s = if is_resource_root {
        Some(s.unwrap_or(&empty))
    } else {
        s
    };
    prune_rec(x, s, is_resource_root, &mut Vec::new(), &mut removed);
    removed
}

fn prune_rec(
    x: &mut Value,
    s: Option<&Structural>,
    force_embedded: bool,
    path: &mut Vec<PathSegment>,
    removed: &mut Vec<Vec<PathSegment>>,
) {
    if let Some(s) = s
        && s.x_preserve_unknown_fields
    {
        skip_prune(x, s, force_embedded, path, removed);
        return;
    }
    match x {
        Value::Object(m) => {
            let Some(s) = s else {
                for k in m.keys() {
                    removed.push(child(path, PathSegment::Key(k.clone())));
                }
                m.clear();
                return;
            };
            let embedded = s.x_embedded_resource || force_embedded;
            let mut unknown = Vec::new();
            for (k, v) in m.iter_mut() {
                if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    if k == "metadata" {
                        prune_object_meta(v, path, removed);
                    }
                    continue;
                }
                path.push(PathSegment::Key(k.clone()));
                if let Some(prop) = s.property(k) {
                    prune_rec(v, Some(prop), false, path, removed);
                } else if let Some(ap) = &s.additional_properties {
                    prune_rec(v, ap.schema(), false, path, removed);
                } else {
                    unknown.push(k.clone());
                }
                path.pop();
            }
            for k in unknown {
                removed.push(child(path, PathSegment::Key(k.clone())));
                // shift_remove keeps the order of the remaining keys.
                m.shift_remove(&k);
            }
        }
        Value::Array(a) => {
            let items = s.and_then(|s| s.items.as_deref());
            for (i, v) in a.iter_mut().enumerate() {
                path.push(PathSegment::Index(i));
                prune_rec(v, items, false, path, removed);
                path.pop();
            }
        }
        _ => {}
    }
}

/// `skipPrune`: keep unknown fields here, but prune inside what the schema declares.
fn skip_prune(
    x: &mut Value,
    s: &Structural,
    force_embedded: bool,
    path: &mut Vec<PathSegment>,
    removed: &mut Vec<Vec<PathSegment>>,
) {
    match x {
        Value::Object(m) => {
            let embedded = s.x_embedded_resource || force_embedded;
            for (k, v) in m.iter_mut() {
                if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    if k == "metadata" {
                        prune_object_meta(v, path, removed);
                    }
                    continue;
                }
                path.push(PathSegment::Key(k.clone()));
                if let Some(prop) = s.property(k) {
                    prune_rec(v, Some(prop), false, path, removed);
                } else if let Some(ap) = &s.additional_properties {
                    prune_rec(v, ap.schema(), false, path, removed);
                }
                path.pop();
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for (i, v) in a.iter_mut().enumerate() {
                    path.push(PathSegment::Index(i));
                    skip_prune(v, items, false, path, removed);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

/// The JSON fields of `metav1.ObjectMeta` (k8s.io/apimachinery `pkg/apis/meta/v1/types.go`).
pub(crate) const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// The `metadata` of an embedded resource is read as an `ObjectMeta`: a field it does not
/// have is dropped, and reported as unknown under strict field validation (apiextensions-
/// apiserver `pkg/apiserver/schema/objectmeta/algorithm.go` `coerce` →
/// `GetObjectMetaWithOptions` with `ReturnUnknownFieldPaths`, then `SetObjectMeta`).
fn prune_object_meta(
    metadata: &mut Value,
    path: &[PathSegment],
    removed: &mut Vec<Vec<PathSegment>>,
) {
    let Value::Object(m) = metadata else {
        return;
    };
    let unknown: Vec<String> = m
        .keys()
        .filter(|k| !OBJECT_META_FIELDS.contains(&k.as_str()))
        .cloned()
        .collect();
    let mut meta_path = path.to_vec();
    meta_path.push(PathSegment::Key("metadata".into()));
    for k in unknown {
        removed.push(child(&meta_path, PathSegment::Key(k.clone())));
        m.shift_remove(&k);
    }
}

fn child(path: &[PathSegment], seg: PathSegment) -> Vec<PathSegment> {
    let mut p = path.to_vec();
    p.push(seg);
    p
}

// ---------------------------------------------------------------------------------------------
// Conversion to JSON Schema
// ---------------------------------------------------------------------------------------------

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
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                out.insert(k.clone(), convert_map(val));
            }
            "dependencies" => {
                let converted = match val {
                    Value::Object(deps) => Value::Object(
                        deps.iter()
                            .map(|(dk, dv)| {
                                (
                                    dk.clone(),
                                    if dv.is_object() {
                                        convert(dv)
                                    } else {
                                        dv.clone()
                                    },
                                )
                            })
                            .collect(),
                    ),
                    _ => val.clone(),
                };
                out.insert(k.clone(), converted);
            }
            "additionalProperties"
            | "additionalItems"
            | "not"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "items"
            | "allOf"
            | "anyOf"
            | "oneOf" => {
                out.insert(k.clone(), convert_schema_or_list(val));
            }
            _ => {
                out.insert(k.clone(), val.clone());
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

fn convert_map(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, s)| (k.clone(), convert(s))).collect()),
        _ => v.clone(),
    }
}

fn convert_schema_or_list(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(convert).collect()),
        _ => convert(v),
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
fn node_types(t: Option<&Value>, int_or_string: bool) -> BTreeSet<String> {
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
fn convert_format(format: &str, types: &BTreeSet<String>) -> Option<String> {
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

// ---------------------------------------------------------------------------------------------
// Compilation and error mapping
// ---------------------------------------------------------------------------------------------

/// Compile a converted JSON Schema with Kubernetes formats registered (Draft 7, Go patterns).
///
/// # Errors
/// The compiler's message when the schema is not a valid draft-7 schema.
pub fn compile(json_schema: &Value) -> Result<Validator, String> {
    let mut options = jsonschema::options()
        .with_draft(Draft::Draft7)
        .should_validate_formats(true)
        .with_keyword(GO_PATTERN_KEYWORD, go_pattern_keyword);
    for (name, check) in STRING_FORMATS {
        options = options.with_format(format!("{FORMAT_PREFIX}{name}"), *check);
    }
    options
        .build(&with_go_patterns(json_schema))
        .map_err(|e| e.to_string())
}

/// The schema with every `pattern` keyword renamed to [`GO_PATTERN_KEYWORD`]: the crate checks
/// a schema against the draft-07 meta-schema, whose `format: regex` is ECMA 262 and refuses
/// Go patterns such as `^(?i)(abort|warn)?$` before any custom keyword could take over.
fn with_go_patterns(v: &Value) -> Value {
    let Value::Object(m) = v else {
        return v.clone();
    };
    let schemas = |v: &Value| match v {
        Value::Array(a) => Value::Array(a.iter().map(with_go_patterns).collect()),
        other => with_go_patterns(other),
    };
    let schema_map = |v: &Value| match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, s)| (k.clone(), with_go_patterns(s)))
                .collect(),
        ),
        other => other.clone(),
    };
    m.iter()
        .map(|(k, val)| match k.as_str() {
            "pattern" if val.is_string() => (GO_PATTERN_KEYWORD.to_owned(), val.clone()),
            "properties" | "patternProperties" | "definitions" | "$defs" | "dependencies" => {
                (k.clone(), schema_map(val))
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
            | "oneOf" => (k.clone(), schemas(val)),
            _ => (k.clone(), val.clone()),
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

/// Check `value` against a Kubernetes string format (names as in CRDs, dashes ignored).
///
/// `None` when Kubernetes does not validate that format.
#[must_use]
pub fn check_format(format: &str, value: &str) -> Option<bool> {
    string_format(&format.replace('-', "")).map(|check| check(value))
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
            path.push(PathSegment::Key(name));
            "Required value".to_owned()
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let declared = declared_properties(schema, err.schema_path().as_str());
            for key in unexpected {
                let mut message = format!("unknown field {}", quote(key));
                if let Some(hint) = suggest(key, &declared) {
                    let _ = write!(message, " (did you mean {}?)", quote(hint));
                }
                out.push(FieldError {
                    path: child(&path, PathSegment::Key(key.clone())),
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
fn instance_path(pointer: &str, instance: &Value) -> Vec<PathSegment> {
    let mut segments = Vec::new();
    let mut current = Some(instance);
    for raw in pointer.split('/').skip(1) {
        let token = raw.replace("~1", "/").replace("~0", "~");
        let index = token.parse::<usize>().ok();
        match (current, index) {
            (Some(Value::Array(a)), Some(i)) => {
                current = a.get(i);
                segments.push(PathSegment::Index(i));
            }
            (Some(Value::Object(m)), _) => {
                current = m.get(&token);
                segments.push(PathSegment::Key(token));
            }
            _ => {
                current = None;
                segments.push(PathSegment::Key(token));
            }
        }
    }
    segments
}

/// Compact JSON, cut to about 64 characters.
fn render_value(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= MAX_SHOWN_VALUE {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_SHOWN_VALUE - 3).collect();
    cut.push_str("...");
    cut
}

fn quote(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
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

/// The closest declared name within edit distance 2 (case-insensitive).
fn suggest<'a>(key: &str, declared: &'a [String]) -> Option<&'a str> {
    let key = key.to_lowercase();
    declared
        .iter()
        .map(|d| (edit_distance(&key, &d.to_lowercase()), d))
        .filter(|(dist, _)| *dist <= 2)
        .min_by_key(|(dist, _)| *dist)
        .map(|(_, d)| d.as_str())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

fn format_display_name(format: &str) -> &str {
    match format.strip_prefix(FORMAT_PREFIX).unwrap_or(format) {
        "datetime" => "date-time",
        "k8sshortname" => "k8s-short-name",
        "k8slongname" => "k8s-long-name",
        other => other,
    }
}

// ---------------------------------------------------------------------------------------------
// String formats (kube-openapi strfmt / govalidator semantics)
// ---------------------------------------------------------------------------------------------

/// A string format checker.
type FormatCheck = fn(&str) -> bool;

/// The string formats Kubernetes validates, by normalised name.
const STRING_FORMATS: &[(&str, FormatCheck)] = &[
    ("bsonobjectid", is_bson_object_id),
    ("uri", is_request_uri),
    ("email", is_email),
    ("hostname", is_hostname),
    ("ipv4", is_ipv4),
    ("ipv6", is_ipv6),
    ("cidr", is_cidr),
    ("mac", is_mac),
    ("uuid", is_uuid),
    ("uuid3", is_uuid3),
    ("uuid4", is_uuid4),
    ("uuid5", is_uuid5),
    ("isbn", is_isbn),
    ("isbn10", is_isbn10),
    ("isbn13", is_isbn13),
    ("creditcard", is_credit_card),
    ("ssn", is_ssn),
    ("hexcolor", is_hex_color),
    ("rgbcolor", is_rgb_color),
    ("byte", is_base64),
    ("password", |_| true),
    ("date", is_date),
    ("duration", is_duration),
    ("datetime", is_datetime),
    ("k8sshortname", is_k8s_short_name),
    ("k8slongname", is_k8s_long_name),
];

fn string_format(normalized: &str) -> Option<FormatCheck> {
    STRING_FORMATS
        .iter()
        .find(|(name, _)| *name == normalized)
        .map(|(_, check)| *check)
}

/// A constant pattern compiled once; `None` would mean a bug in the pattern (tests cover each).
type StaticRegex = LazyLock<Option<Regex>>;

macro_rules! static_regex {
    ($name:ident, $re:expr) => {
        static $name: StaticRegex = LazyLock::new(|| Regex::new($re).ok());
    };
}

// strfmt HostnamePattern (unicode symbols and letters are accepted, as upstream).
static_regex!(
    RX_HOSTNAME,
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$"
);
static_regex!(
    RX_UUID,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
static_regex!(
    RX_UUID3,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
static_regex!(
    RX_UUID4,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
static_regex!(
    RX_UUID5,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
static_regex!(
    RX_CREDIT_CARD,
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$"
);
static_regex!(RX_SSN, r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$");
static_regex!(RX_HEX_COLOR, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$");
static_regex!(
    RX_RGB_COLOR,
    r"^rgb\([\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*,[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*,[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*\)$"
);
static_regex!(
    RX_BASE64,
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
);
static_regex!(
    RX_TIME,
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
);
static_regex!(RX_SHORT_NAME, r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
static_regex!(
    RX_LONG_NAME,
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
);
// strfmt `durationMatcher` `((\d+)\s*([A-Za-zµ]+))`; Go's \s and \d are ASCII.
static_regex!(RX_DURATION_PART, r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)");

fn matches(rx: &StaticRegex, s: &str) -> bool {
    rx.as_ref().is_some_and(|r| r.is_match(s))
}

fn is_bson_object_id(s: &str) -> bool {
    s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_hostname(s: &str) -> bool {
    matches(&RX_HOSTNAME, s) && s.len() <= 255 && s.split('.').all(|label| label.len() <= 63)
}

/// strfmt `isIPv4` (kube-openapi `pkg/validation/strfmt/default.go`):
/// `netutils.ParseIPSloppy(s) != nil && strings.Contains(s, ".")`, which tolerates leading zeros
/// (`010.0.0.1`) for compatibility with Go before 1.17.
fn is_ipv4(s: &str) -> bool {
    parse_ip_sloppy(s.as_bytes()) && s.contains('.')
}

/// govalidator.IsIPv6: `net.ParseIP` succeeds and the text has a colon.
fn is_ipv6(s: &str) -> bool {
    s.parse::<std::net::IpAddr>().is_ok() && s.contains(':')
}

/// strfmt `isCIDR`: `netutils.ParseCIDRSloppy` (k8s.io/utils `net/ipnet.go`, Go 1.16
/// `net.ParseCIDR`): an address with leading zeros allowed, `/`, and a decimal prefix length.
fn is_cidr(s: &str) -> bool {
    let Some((addr, bits)) = s.split_once('/') else {
        return false;
    };
    let (addr, bits) = (addr.as_bytes(), bits.as_bytes());
    let max = if parse_ipv4_sloppy(addr) {
        32
    } else if parse_ipv6_sloppy(addr) {
        128
    } else {
        return false;
    };
    matches!(go_dtoi(bits), Some((n, len)) if len == bits.len() && n <= max)
}

/// Go 1.16 `net.ParseIP`, as k8s.io/utils `net.ParseIPSloppy` keeps it: the first `.` or `:`
/// decides the family.
fn parse_ip_sloppy(s: &[u8]) -> bool {
    match s.iter().find(|c| matches!(c, b'.' | b':')) {
        Some(b'.') => parse_ipv4_sloppy(s),
        Some(_) => parse_ipv6_sloppy(s),
        None => false,
    }
}

/// Go `net.dtoi`: a decimal prefix and its length; `None` without digits or past 0xFFFFFF.
fn go_dtoi(s: &[u8]) -> Option<(u32, usize)> {
    const BIG: u32 = 0x00FF_FFFF;
    let mut n: u32 = 0;
    let mut i = 0;
    while let Some(c) = s.get(i).filter(|c| c.is_ascii_digit()) {
        n = n * 10 + u32::from(c - b'0');
        if n >= BIG {
            return None;
        }
        i += 1;
    }
    (i > 0).then_some((n, i))
}

/// Go `net.xtoi`: a hexadecimal prefix and its length.
fn go_xtoi(s: &[u8]) -> Option<(u32, usize)> {
    const BIG: u32 = 0x00FF_FFFF;
    let mut n: u32 = 0;
    let mut i = 0;
    while let Some(d) = s.get(i).and_then(|c| char::from(*c).to_digit(16)) {
        n = n * 16 + d;
        if n >= BIG {
            return None;
        }
        i += 1;
    }
    (i > 0).then_some((n, i))
}

/// Go 1.16 `net.parseIPv4` (no leading-zero check): four decimal octets up to 255.
fn parse_ipv4_sloppy(mut s: &[u8]) -> bool {
    for i in 0..4 {
        if i > 0 {
            let Some(rest) = s.strip_prefix(b".") else {
                return false;
            };
            s = rest;
        }
        match go_dtoi(s) {
            Some((n, len)) if n <= 0xFF => s = &s[len..],
            _ => return false,
        }
    }
    s.is_empty()
}

/// Go 1.16 `net.parseIPv6` (without zone), with a sloppy embedded IPv4 part.
fn parse_ipv6_sloppy(mut s: &[u8]) -> bool {
    const LEN: usize = 16;
    let mut ellipsis = false;
    if let Some(rest) = s.strip_prefix(b"::") {
        ellipsis = true;
        s = rest;
        if s.is_empty() {
            return true;
        }
    }
    let mut i = 0;
    while i < LEN {
        let Some((n, len)) = go_xtoi(s) else {
            return false;
        };
        if n > 0xFFFF {
            return false;
        }
        if s.get(len) == Some(&b'.') {
            if (!ellipsis && i != LEN - 4) || i + 4 > LEN || !parse_ipv4_sloppy(s) {
                return false;
            }
            s = &[];
            i += 4;
            break;
        }
        i += 2;
        s = &s[len..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' || s.len() == 1 {
            return false;
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis {
                return false;
            }
            ellipsis = true;
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    s.is_empty() && (i == LEN) != ellipsis
}

/// `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx..`, `xx-xx..` or `xxxx.xxxx..`.
fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let valid_count = |n: usize| matches!(n, 6 | 8 | 20);
    let hex2 = |i: usize| {
        b.get(i..i + 2)
            .is_some_and(|p| p.iter().all(u8::is_ascii_hexdigit))
    };
    if b[2] == b':' || b[2] == b'-' {
        let sep = b[2];
        if !(b.len() + 1).is_multiple_of(3) || !valid_count((b.len() + 1) / 3) {
            return false;
        }
        (0..b.len())
            .step_by(3)
            .all(|x| hex2(x) && (x + 2 == b.len() || b[x + 2] == sep))
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) || !valid_count(2 * (b.len() + 1) / 5) {
            return false;
        }
        (0..b.len())
            .step_by(5)
            .all(|x| hex2(x) && hex2(x + 2) && (x + 4 == b.len() || b[x + 4] == b'.'))
    } else {
        false
    }
}

fn is_uuid(s: &str) -> bool {
    matches(&RX_UUID, s)
}

fn is_uuid3(s: &str) -> bool {
    matches(&RX_UUID3, s)
}

fn is_uuid4(s: &str) -> bool {
    matches(&RX_UUID4, s)
}

fn is_uuid5(s: &str) -> bool {
    matches(&RX_UUID5, s)
}

/// govalidator drops `[\s-]` before checking an ISBN.
fn isbn_digits(s: &str) -> Vec<u8> {
    s.bytes()
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'-'))
        .collect()
}

fn is_isbn10(s: &str) -> bool {
    let d = isbn_digits(s);
    if d.len() != 10
        || !d[..9].iter().all(u8::is_ascii_digit)
        || !(d[9].is_ascii_digit() || d[9] == b'X')
    {
        return false;
    }
    let mut sum: u32 = (0u32..9)
        .zip(&d[..9])
        .map(|(i, c)| (i + 1) * u32::from(c - b'0'))
        .sum();
    sum += 10
        * if d[9] == b'X' {
            10
        } else {
            u32::from(d[9] - b'0')
        };
    sum.is_multiple_of(11)
}

fn is_isbn13(s: &str) -> bool {
    let d = isbn_digits(s);
    if d.len() != 13 || !d.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = d[..12]
        .iter()
        .enumerate()
        .map(|(i, c)| if i % 2 == 0 { 1 } else { 3 } * u32::from(c - b'0'))
        .sum();
    u32::from(d[12] - b'0') == (10 - sum % 10) % 10
}

fn is_isbn(s: &str) -> bool {
    is_isbn10(s) || is_isbn13(s)
}

/// govalidator.IsCreditCard: digits only (others dropped), a known issuer pattern, and Luhn.
fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !matches(&RX_CREDIT_CARD, &digits) {
        return false;
    }
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, c)| {
            let n = u32::from(c - b'0');
            if i % 2 == 1 {
                let doubled = n * 2;
                if doubled >= 10 {
                    doubled % 10 + 1
                } else {
                    doubled
                }
            } else {
                n
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

fn is_ssn(s: &str) -> bool {
    s.len() == 11 && matches(&RX_SSN, s)
}

fn is_hex_color(s: &str) -> bool {
    matches(&RX_HEX_COLOR, s)
}

fn is_rgb_color(s: &str) -> bool {
    matches(&RX_RGB_COLOR, s)
}

/// govalidator.IsBase64: standard alphabet, padded.
fn is_base64(s: &str) -> bool {
    matches(&RX_BASE64, s)
}

fn is_k8s_short_name(s: &str) -> bool {
    s.len() <= 63 && matches(&RX_SHORT_NAME, s)
}

fn is_k8s_long_name(s: &str) -> bool {
    s.len() <= 253 && matches(&RX_LONG_NAME, s)
}

/// `time.Parse("2006-01-02")`: fixed widths and a day that exists in that month.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = &b[r];
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0, |acc, c| acc * 10 + u32::from(c - b'0')))
    };
    let (Some(year), Some(month), Some(day)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// strfmt.IsDateTime: a date, `T`, and `hh:mm:ss[.frac](Z|±hh:mm)`, case-insensitively.
fn is_datetime(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let Some(caps) = RX_TIME.as_ref().and_then(|r| r.captures(time)) else {
        return false;
    };
    let field = |i: usize| caps.get(i).map_or("", |m| m.as_str());
    field(1) <= "23" && field(2) <= "59" && field(3) <= "59"
}

/// strfmt.IsDuration: Go `time.ParseDuration`, else the Scala-style fallback.
fn is_duration(s: &str) -> bool {
    go_parse_duration(s).is_some() || strfmt_duration_fallback(s)
}

/// Go `time.ParseDuration`; `None` on any error (including overflow).
fn go_parse_duration(s: &str) -> Option<u64> {
    const LIMIT: u64 = 1 << 63;
    let mut rest = s.as_bytes();
    let mut negative = false;
    if let Some((&c, tail)) = rest.split_first()
        && (c == b'-' || c == b'+')
    {
        negative = c == b'-';
        rest = tail;
    }
    if rest == b"0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        if !(rest[0] == b'.' || rest[0].is_ascii_digit()) {
            return None;
        }
        let int_len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut value: u64 = 0;
        for &c in &rest[..int_len] {
            if value > LIMIT / 10 {
                return None;
            }
            value = value * 10 + u64::from(c - b'0');
            if value > LIMIT {
                return None;
            }
        }
        rest = &rest[int_len..];
        let mut fraction: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut frac_len = 0;
        if rest.first() == Some(&b'.') {
            rest = &rest[1..];
            frac_len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            let mut overflow = false;
            for &c in &rest[..frac_len] {
                // Like Go's leadingFraction: stop accumulating once precision runs out.
                if overflow || fraction > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                fraction = fraction * 10 + u64::from(c - b'0');
                scale *= 10.0;
            }
            rest = &rest[frac_len..];
        }
        if int_len == 0 && frac_len == 0 {
            return None;
        }
        let unit_len = rest
            .iter()
            .take_while(|c| !(**c == b'.' || c.is_ascii_digit()))
            .count();
        if unit_len == 0 {
            return None;
        }
        let unit: u64 = match &rest[..unit_len] {
            b"ns" => 1,
            // `µs` is U+00B5 and `μs` U+03BC, both accepted by Go.
            b"us" | b"\xc2\xb5s" | b"\xce\xbcs" => 1_000,
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            _ => return None,
        };
        rest = &rest[unit_len..];
        if value > LIMIT / unit {
            return None;
        }
        value *= unit;
        if fraction > 0 {
            #[allow(
                clippy::cast_precision_loss,
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss
            )]
            // Go does this step in float64 as well.
            let extra = (fraction as f64 * (unit as f64 / scale)) as u64;
            value = value.checked_add(extra)?;
            if value > LIMIT {
                return None;
            }
        }
        total = total.checked_add(value)?;
        if total > LIMIT {
            return None;
        }
    }
    if !negative && total > LIMIT - 1 {
        return None;
    }
    Some(total)
}

/// The strfmt fallback (kube-openapi `pkg/validation/strfmt/duration.go`, `ParseDuration`):
/// every `<n><space>*<letters>` found ANYWHERE in the text is read, and the text is a duration
/// when one of them names a unit (`3 days`, `2 hours`, even `in 3 days please`); a count that
/// overflows `strconv.Atoi` fails the whole text.
fn strfmt_duration_fallback(s: &str) -> bool {
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let Some(parts) = RX_DURATION_PART.as_ref() else {
        return false;
    };
    let mut ok = false;
    for caps in parts.captures_iter(s) {
        if caps
            .get(1)
            .is_none_or(|m| m.as_str().parse::<i64>().is_err())
        {
            return false;
        }
        let unit = caps
            .get(2)
            .map_or(String::new(), |m| m.as_str().trim().to_lowercase());
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, variant) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(variant)) || variant.eq_ignore_ascii_case(&unit) {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// Go `url.ParseRequestURI`: an absolute URI or an absolute path (no fragment handling).
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if s == "*" {
        return true;
    }
    let Some((scheme, rest)) = split_scheme(s) else {
        return false;
    };
    let rest = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        &rest[..rest.len() - 1]
    } else {
        rest.split_once('?').map_or(rest, |(before, _)| before)
    };
    if !rest.starts_with('/') {
        // Rootless paths after a scheme are opaque (`mailto:x@y`); without a scheme, invalid.
        return !scheme.is_empty();
    }
    let mut path = rest;
    if !scheme.is_empty()
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, tail) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        if !valid_authority(authority) {
            return false;
        }
        path = tail;
    }
    unescape_ok(path, EscapeMode::Path)
}

/// Go `getScheme`: `Some((scheme, rest))`, scheme empty when there is none; `None` for `:x`.
fn split_scheme(s: &str) -> Option<(&str, &str)> {
    for (i, c) in s.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return None,
            b':' => return Some((&s[..i], &s[i + 1..])),
            _ => return Some(("", s)),
        }
    }
    Some(("", s))
}

fn valid_authority(authority: &str) -> bool {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    if !valid_host(host) {
        return false;
    }
    userinfo.is_none_or(|u| {
        u.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    '-' | '.'
                        | '_'
                        | ':'
                        | '~'
                        | '!'
                        | '$'
                        | '&'
                        | '\''
                        | '('
                        | ')'
                        | '*'
                        | '+'
                        | ','
                        | ';'
                        | '='
                        | '%'
                        | '@'
                )
        }) && unescape_ok(u, EscapeMode::Other)
    })
}

/// Go `parseHost`: bracketed IP literal with optional zone, or name with optional `:port`.
fn valid_host(host: &str) -> bool {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return false;
        };
        if !valid_optional_port(&host[close + 1..]) {
            return false;
        }
        if let Some(zone) = host[..close].find("%25") {
            return unescape_ok(&host[..zone], EscapeMode::Host)
                && unescape_ok(&host[zone..close], EscapeMode::Zone)
                && unescape_ok(&host[close..], EscapeMode::Host);
        }
    } else if let Some(colon) = host.rfind(':')
        && !valid_optional_port(&host[colon..])
    {
        return false;
    }
    unescape_ok(host, EscapeMode::Host)
}

fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EscapeMode {
    Host,
    Zone,
    Path,
    Other,
}

/// Go `unescape` error checks: well-formed `%XX`, and host/zone character rules.
fn unescape_ok(s: &str, mode: EscapeMode) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if i + 2 >= b.len() || !b[i + 1].is_ascii_hexdigit() || !b[i + 2].is_ascii_hexdigit() {
                return false;
            }
            let hex = |c: u8| char::from(c).to_digit(16).unwrap_or(0);
            let is_25 = &b[i..i + 3] == b"%25";
            if mode == EscapeMode::Host && hex(b[i + 1]) < 8 && !is_25 {
                return false;
            }
            if mode == EscapeMode::Zone {
                let v = u8::try_from(hex(b[i + 1]) << 4 | hex(b[i + 2])).unwrap_or(0);
                if !is_25 && v != b' ' && host_byte_needs_escape(v) {
                    return false;
                }
            }
            i += 3;
        } else {
            if matches!(mode, EscapeMode::Host | EscapeMode::Zone)
                && b[i] < 0x80
                && host_byte_needs_escape(b[i])
            {
                return false;
            }
            i += 1;
        }
    }
    true
}

/// Go `shouldEscape(c, encodeHost)`.
fn host_byte_needs_escape(c: u8) -> bool {
    !(c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
                | b'-'
                | b'_'
                | b'.'
                | b'~'
        ))
}

/// strfmt.IsEmail: Go `net/mail.ParseAddress` accepts it (group syntax and RFC 2047 words aside).
fn is_email(s: &str) -> bool {
    let mut p = MailParser { s };
    p.parse_single_address()
}

/// A port of the parts of Go's `net/mail` address parser that `ParseAddress` uses.
struct MailParser<'a> {
    s: &'a str,
}

impl MailParser<'_> {
    fn parse_single_address(&mut self) -> bool {
        if !self.parse_address() {
            return false;
        }
        self.skip_cfws() && self.s.is_empty()
    }

    fn parse_address(&mut self) -> bool {
        self.skip_space();
        if self.s.is_empty() {
            return false;
        }
        // addr-spec first, then name-addr.
        let saved = self.s;
        if self.consume_addr_spec() {
            self.skip_space();
            if self.s.starts_with('(') {
                self.s = &self.s[1..];
                return self.consume_comment();
            }
            return true;
        }
        self.s = saved;
        if !self.s.starts_with('<') && !self.consume_phrase() {
            return false;
        }
        self.skip_space();
        let Some(rest) = self.s.strip_prefix('<') else {
            return false;
        };
        self.s = rest;
        if !self.consume_addr_spec() {
            return false;
        }
        match self.s.strip_prefix('>') {
            Some(rest) => {
                self.s = rest;
                true
            }
            None => false,
        }
    }

    fn skip_space(&mut self) {
        self.s = self.s.trim_start_matches([' ', '\t']);
    }

    fn skip_cfws(&mut self) -> bool {
        self.skip_space();
        while let Some(rest) = self.s.strip_prefix('(') {
            self.s = rest;
            if !self.consume_comment() {
                return false;
            }
            self.skip_space();
        }
        true
    }

    /// After `(`: consume up to the matching `)`; false when unclosed.
    fn consume_comment(&mut self) -> bool {
        let mut depth = 1;
        let b = self.s.as_bytes();
        let mut i = 0;
        while i < b.len() && depth > 0 {
            match b[i] {
                b'\\' if i + 1 < b.len() => i += 1,
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        self.s = self.s.get(i..).unwrap_or("");
        depth == 0
    }

    fn consume_addr_spec(&mut self) -> bool {
        let saved = self.s;
        let ok = self.addr_spec();
        if !ok {
            self.s = saved;
        }
        ok
    }

    fn addr_spec(&mut self) -> bool {
        self.skip_space();
        if self.s.is_empty() {
            return false;
        }
        let local_ok = if self.s.starts_with('"') {
            self.consume_quoted_string().is_some_and(|q| !q.is_empty())
        } else {
            self.consume_atom(true, false)
        };
        if !local_ok {
            return false;
        }
        let Some(rest) = self.s.strip_prefix('@') else {
            return false;
        };
        self.s = rest;
        self.skip_space();
        if self.s.is_empty() {
            return false;
        }
        if self.s.starts_with('[') {
            self.consume_domain_literal()
        } else {
            self.consume_atom(true, false)
        }
    }

    fn consume_atom(&mut self, dot: bool, permissive: bool) -> bool {
        let end = self
            .s
            .char_indices()
            .find(|(_, c)| !is_atext(*c, dot))
            .map_or(self.s.len(), |(i, _)| i);
        if end == 0 {
            return false;
        }
        let atom = &self.s[..end];
        if !permissive && (atom.starts_with('.') || atom.ends_with('.') || atom.contains("..")) {
            return false;
        }
        self.s = &self.s[end..];
        true
    }

    fn consume_quoted_string(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut escaped = false;
        for (i, c) in self.s.char_indices().skip(1) {
            if escaped {
                if !is_vchar(c) && !matches!(c, ' ' | '\t') {
                    return None;
                }
                out.push(c);
                escaped = false;
            } else if c == '"' {
                self.s = &self.s[i + 1..];
                return Some(out);
            } else if c == '\\' {
                escaped = true;
            } else if is_vchar(c) || matches!(c, ' ' | '\t') {
                out.push(c);
            } else {
                return None;
            }
        }
        None
    }

    fn consume_domain_literal(&mut self) -> bool {
        let Some(rest) = self.s.strip_prefix('[') else {
            return false;
        };
        let Some(close) = rest.find(']') else {
            return false;
        };
        let dtext = &rest[..close];
        if !dtext
            .chars()
            .all(|c| !matches!(c, '[' | ']' | '\\') && is_vchar(c))
        {
            return false;
        }
        self.s = &rest[close + 1..];
        dtext.parse::<std::net::IpAddr>().is_ok()
    }

    /// A display name: one or more words (atoms or quoted strings), comments allowed between.
    fn consume_phrase(&mut self) -> bool {
        let mut words = 0;
        loop {
            if words > 0 && !self.skip_cfws() {
                return false;
            }
            self.skip_space();
            if self.s.is_empty() {
                break;
            }
            let ok = if self.s.starts_with('"') {
                self.consume_quoted_string().is_some()
            } else {
                self.consume_atom(true, true)
            };
            if !ok {
                break;
            }
            words += 1;
        }
        words > 0
    }
}

fn is_vchar(c: char) -> bool {
    ('!'..='~').contains(&c) || !c.is_ascii()
}

fn is_atext(c: char, dot: bool) -> bool {
    match c {
        '.' => dot,
        '(' | ')' | '<' | '>' | '[' | ']' | ':' | ';' | '@' | '\\' | ',' | '"' => false,
        _ => is_vchar(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(raw: &Value) -> Vec<SchemaProblem> {
        ConfigSchema::parse(raw).err().unwrap_or_default()
    }

    /// A root object schema with the given properties.
    #[allow(clippy::needless_pass_by_value)] // callers pass json! literals
    fn obj(props: Value) -> Value {
        json!({"type": "object", "properties": props})
    }

    /// Problems of a schema with one property `a`.
    #[allow(clippy::needless_pass_by_value)] // callers pass json! literals
    fn field_problems(a: Value) -> Vec<SchemaProblem> {
        problems(&obj(json!({"a": a})))
    }

    #[track_caller]
    fn assert_problem(found: &[SchemaProblem], path: &str, needle: &str) {
        assert!(
            found
                .iter()
                .any(|p| p.path == path && p.message.contains(needle)),
            "no problem at {path:?} containing {needle:?} in {found:#?}"
        );
    }

    fn parsed(raw: &Value) -> ConfigSchema {
        match ConfigSchema::parse(raw) {
            Ok(c) => c,
            Err(p) => panic!("unexpected problems: {p:#?}"),
        }
    }

    fn errors(schema: &Value, instance: &Value) -> Vec<String> {
        parsed(schema)
            .validate(instance)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    // --- forbidden keywords (NewStructural / CRD validation) ---

    #[test]
    fn unsupported_keywords_are_problems() {
        for (k, v) in [
            ("id", json!("x")),
            ("$schema", json!("http://json-schema.org/draft-07/schema#")),
            ("$ref", json!("#/definitions/x")),
            ("definitions", json!({"x": {"type": "string"}})),
            ("dependencies", json!({"a": ["b"]})),
            ("patternProperties", json!({"^a": {"type": "string"}})),
            ("additionalItems", json!(false)),
        ] {
            let mut a = json!({"type": "string"});
            a[k] = v;
            let found = field_problems(a.clone());
            assert_problem(
                &found,
                &format!("properties.a.{k}"),
                &format!("`{k}` is not supported"),
            );
            // NewStructural fails on these too.
            assert!(Structural::from_json(&obj(json!({"a": a}))).is_err(), "{k}");
        }
    }

    #[test]
    fn type_null_and_type_lists_are_problems() {
        assert_problem(
            &field_problems(json!({"type": "null"})),
            "properties.a.type",
            "use `nullable: true`",
        );
        assert_problem(
            &field_problems(json!({"type": ["string", "null"]})),
            "properties.a.type",
            "single type name",
        );
        assert_problem(
            &field_problems(json!({"type": "text"})),
            "properties.a.type",
            "unsupported `type` \"text\"",
        );
    }

    #[test]
    fn array_items_are_a_problem() {
        let found = field_problems(json!({"type": "array", "items": [{"type": "string"}]}));
        assert_problem(&found, "properties.a.items", "single schema, not an array");
    }

    #[test]
    fn unique_items_true_is_a_problem() {
        assert_problem(
            &field_problems(
                json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
            ),
            "properties.a.uniqueItems",
            "not supported",
        );
        assert!(
            field_problems(
                json!({"type": "array", "items": {"type": "string"}, "uniqueItems": false})
            )
            .is_empty()
        );
    }

    #[test]
    fn nullable_at_root_is_a_problem() {
        assert_problem(
            &problems(&json!({"type": "object", "nullable": true})),
            "nullable",
            "at the root",
        );
    }

    #[test]
    fn additional_properties_with_properties() {
        for ap in [json!(false), json!({"type": "string"})] {
            let found = field_problems(
                json!({"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": ap}),
            );
            assert_problem(
                &found,
                "properties.a.additionalProperties",
                "mutually exclusive",
            );
        }
        assert!(field_problems(json!({"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": true})).is_empty());
        assert!(
            field_problems(json!({"type": "object", "additionalProperties": {"type": "string"}}))
                .is_empty()
        );
    }

    #[test]
    fn additional_properties_at_root_is_a_problem() {
        let found =
            problems(&json!({"type": "object", "additionalProperties": {"type": "string"}}));
        assert_problem(
            &found,
            "additionalProperties",
            "must not be used at the root",
        );
    }

    #[test]
    fn preserve_unknown_fields_false_is_a_problem() {
        let found = field_problems(
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": false}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-preserve-unknown-fields",
            "must be true or undefined",
        );
    }

    #[test]
    fn unknown_keywords_are_problems() {
        let found = field_problems(json!({"type": "string", "const": "x"}));
        assert_eq!(
            found,
            vec![SchemaProblem {
                path: "properties.a.const".into(),
                message: "unknown keyword `const`: CRD schemas do not support it".into()
            }]
        );
        for k in [
            "$defs",
            "if",
            "examples",
            "prefixItems",
            "contains",
            "propertyNames",
        ] {
            let mut a = json!({"type": "string"});
            a[k] = json!({});
            assert_problem(
                &field_problems(a.clone()),
                &format!("properties.a.{k}"),
                "unknown keyword",
            );
            // A Go decode drops unknown fields, so NewStructural accepts them.
            assert!(Structural::from_json(&obj(json!({"a": a}))).is_ok());
        }
    }

    #[test]
    fn wrong_keyword_types_are_problems() {
        assert_problem(
            &field_problems(json!({"type": "object", "required": "a"})),
            "properties.a.required",
            "list of strings",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "minLength": -1})),
            "properties.a.minLength",
            "non-negative integer",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "minLength": "x"})),
            "properties.a.minLength",
            "non-negative integer",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "maxLength": 1.5})),
            "properties.a.maxLength",
            "non-negative integer",
        );
        assert_problem(
            &field_problems(json!({"type": "integer", "minimum": "1"})),
            "properties.a.minimum",
            "must be a number",
        );
        assert_problem(
            &field_problems(json!({"type": "integer", "exclusiveMinimum": 1})),
            "properties.a.exclusiveMinimum",
            "must be a boolean",
        );
        assert_problem(
            &field_problems(json!({"type": "integer", "multipleOf": 0})),
            "properties.a.multipleOf",
            "greater than 0",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "enum": "a"})),
            "properties.a.enum",
            "must be a list",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "nullable": "yes"})),
            "properties.a.nullable",
            "must be a boolean",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "description": 1})),
            "properties.a.description",
            "must be a string",
        );
        assert_problem(
            &field_problems(json!({"type": "object", "properties": []})),
            "properties.a.properties",
            "map of schemas",
        );
        assert_problem(
            &field_problems(json!({"type": "object", "additionalProperties": "x"})),
            "properties.a.additionalProperties",
            "boolean or a schema",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "allOf": {}})),
            "properties.a.allOf",
            "list of schemas",
        );
        assert_problem(
            &field_problems(json!({"type": "object", "required": ["x", "x"]})),
            "properties.a.required",
            "more than once",
        );
        assert_problem(
            &field_problems(json!("string")),
            "properties.a",
            "must be a schema object",
        );
        assert_problem(&problems(&json!(true)), "", "must be a schema object");
    }

    #[test]
    fn all_problems_are_reported() {
        let found = problems(&json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "const": 1},
                "b": {"$ref": "#/x"},
                "c": {"type": "array"},
                "d": {"type": "integer", "default": "x"}
            }
        }));
        assert_problem(&found, "properties.a.const", "unknown keyword");
        assert_problem(&found, "properties.b.$ref", "not supported");
        assert_problem(&found, "properties.b.type", "must not be empty");
        assert_problem(&found, "properties.c.items", "must be specified");
        assert_problem(&found, "properties.d.default", "must be of type integer");
        assert_eq!(found.len(), 5, "{found:#?}");
    }

    // --- ValidateStructural ---

    #[test]
    fn type_is_required_at_root_items_and_fields() {
        assert_problem(
            &problems(&json!({"properties": {}})),
            "type",
            "must not be empty at the root",
        );
        assert_problem(
            &field_problems(json!({"description": "x"})),
            "properties.a.type",
            "for object fields",
        );
        assert_problem(
            &field_problems(json!({"type": "array", "items": {}})),
            "properties.a.items.type",
            "for array items",
        );
        assert_problem(
            &field_problems(json!({"type": "object", "additionalProperties": {"minLength": 1}})),
            "properties.a.additionalProperties.type",
            "for object fields",
        );
        assert!(field_problems(json!({"x-kubernetes-int-or-string": true})).is_empty());
        assert!(field_problems(json!({"x-kubernetes-preserve-unknown-fields": true})).is_empty());
        assert!(problems(&json!({"x-kubernetes-preserve-unknown-fields": true})).is_empty());
    }

    #[test]
    fn root_must_be_an_object() {
        assert_problem(
            &problems(&json!({"type": "string"})),
            "type",
            "must be object at the root",
        );
    }

    #[test]
    fn array_requires_items() {
        assert_problem(
            &field_problems(json!({"type": "array"})),
            "properties.a.items",
            "must be specified",
        );
    }

    #[test]
    fn junctors_forbid_structural_keywords() {
        for (k, v) in [
            ("type", json!("string")),
            ("default", json!("x")),
            ("title", json!("t")),
            ("description", json!("d")),
            ("nullable", json!(true)),
            ("x-kubernetes-preserve-unknown-fields", json!(true)),
            ("x-kubernetes-embedded-resource", json!(true)),
            ("x-kubernetes-int-or-string", json!(true)),
            ("x-kubernetes-list-type", json!("atomic")),
            ("x-kubernetes-list-map-keys", json!(["a"])),
            ("x-kubernetes-map-type", json!("atomic")),
            ("additionalProperties", json!({"type": "string"})),
            ("externalDocs", json!({"url": "https://example.com"})),
        ] {
            for junctor in ["allOf", "anyOf", "oneOf"] {
                let mut inner = json!({});
                inner[k] = v.clone();
                let mut a = json!({"type": "string"});
                a[junctor] = json!([inner]);
                let found = field_problems(a);
                assert_problem(
                    &found,
                    &format!("properties.a.{junctor}[0].{k}"),
                    "must not be used inside allOf/anyOf/oneOf/not",
                );
            }
            let mut inner = json!({});
            inner[k] = v.clone();
            let found = field_problems(json!({"type": "string", "not": inner}));
            assert_problem(
                &found,
                &format!("properties.a.not.{k}"),
                "must not be used inside",
            );
        }
        // Empty title/description and `nullable: false` are fine.
        assert!(field_problems(json!({"type": "string", "allOf": [{"title": "", "nullable": false, "minLength": 1}]})).is_empty());
        let found = field_problems(
            json!({"type": "object", "properties": {"metadata": {"type": "object"}},
            "anyOf": [{"properties": {"metadata": {"required": ["x"]}}}]}),
        );
        assert_problem(
            &found,
            "properties.a.anyOf[0].properties.metadata",
            "must not be specified inside",
        );
        // Nested deeper too.
        let found = field_problems(
            json!({"type": "object", "properties": {"b": {"type": "string"}},
            "oneOf": [{"properties": {"b": {"type": "string"}}}]}),
        );
        assert_problem(
            &found,
            "properties.a.oneOf[0].properties.b.type",
            "must not be used inside",
        );
    }

    #[test]
    fn int_or_string_patterns_may_carry_types() {
        let any_of = json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]});
        assert!(field_problems(any_of).is_empty());
        let all_of = json!({"x-kubernetes-int-or-string": true,
            "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"anyOf": [{"minimum": 1}, {"pattern": "^[0-9]+%$"}]}]});
        assert!(field_problems(all_of).is_empty());
        // Upstream spots the pattern alone, but such a node still needs a type of its own.
        let found = field_problems(json!({"anyOf": [{"type": "integer"}, {"type": "string"}]}));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_problem(&found, "properties.a.type", "must not be empty");
        // Only the first allOf entry may carry the pattern.
        let found = field_problems(json!({"x-kubernetes-int-or-string": true,
            "allOf": [{"minimum": 0}, {"anyOf": [{"type": "integer"}, {"type": "string"}]}]}));
        assert_problem(
            &found,
            "properties.a.allOf[1].anyOf[0].type",
            "must not be used inside",
        );
        // And only the exact pattern.
        let found = field_problems(json!({"x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "integer"}, {"type": "string", "minLength": 1}]}));
        assert_problem(
            &found,
            "properties.a.anyOf[1].type",
            "must not be used inside",
        );
    }

    #[test]
    fn junctor_completeness() {
        let found = field_problems(
            json!({"type": "object", "properties": {"b": {"type": "string"}},
            "allOf": [{"properties": {"c": {"minLength": 1}}}]}),
        );
        assert_problem(
            &found,
            "properties.a.properties.c",
            "`properties.a.allOf[0].properties.c` uses it",
        );
        let found =
            field_problems(json!({"type": "string", "anyOf": [{"items": {"minLength": 1}}]}));
        assert_problem(
            &found,
            "properties.a.items",
            "`properties.a.anyOf[0].items` uses it",
        );
        let found = field_problems(
            json!({"type": "object", "properties": {"b": {"type": "object"}},
            "not": {"anyOf": [{"properties": {"b": {"properties": {"z": {"minLength": 1}}}}}]}}),
        );
        assert_problem(
            &found,
            "properties.a.properties.b.properties.z",
            "not.anyOf[0].properties.b.properties.z",
        );
        assert!(
            field_problems(
                json!({"type": "object", "properties": {"b": {"type": "string"}},
            "oneOf": [{"required": ["b"]}, {"properties": {"b": {"minLength": 2}}}]})
            )
            .is_empty()
        );
    }

    #[test]
    fn int_or_string_excludes_other_extensions() {
        let found = field_problems(
            json!({"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-preserve-unknown-fields",
            "must be false if `x-kubernetes-int-or-string`",
        );
        let found = field_problems(json!({"type": "object", "x-kubernetes-int-or-string": true,
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}));
        assert_problem(
            &found,
            "properties.a.x-kubernetes-embedded-resource",
            "must be false if `x-kubernetes-int-or-string`",
        );
    }

    #[test]
    fn embedded_resource_rules() {
        let found = field_problems(
            json!({"type": "string", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}),
        );
        assert_problem(
            &found,
            "properties.a.type",
            "must be object if `x-kubernetes-embedded-resource`",
        );
        let found = field_problems(
            json!({"type": "object", "x-kubernetes-embedded-resource": true, "additionalProperties": {"type": "string"}}),
        );
        assert_problem(
            &found,
            "properties.a.additionalProperties",
            "must not be used if `x-kubernetes-embedded-resource`",
        );
        assert_problem(&found, "properties.a.properties", "must not be empty");
        let found = field_problems(
            json!({"type": "object", "x-kubernetes-embedded-resource": true,
            "properties": {"kind": {"type": "integer"}, "metadata": {"type": "string"}}}),
        );
        assert_problem(
            &found,
            "properties.a.properties.kind.type",
            "must be string",
        );
        assert_problem(
            &found,
            "properties.a.properties.metadata.type",
            "must be object",
        );
        assert!(field_problems(json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true})).is_empty());
    }

    #[test]
    fn pattern_must_compile() {
        let found = field_problems(json!({"type": "string", "pattern": "(a"}));
        assert_problem(
            &found,
            "properties.a.pattern",
            "`pattern` \"(a\" is not a valid Go (RE2) regular expression: missing closing ): `(a`",
        );
        // Look-around is not RE2 (nor regex-crate) syntax.
        assert_problem(
            &field_problems(json!({"type": "string", "pattern": "(?=a)"})),
            "properties.a.pattern",
            "invalid or unsupported Perl syntax: `(?=`",
        );
        // Go rejects what the regex crate would take.
        assert_problem(
            &field_problems(json!({"type": "string", "pattern": "^a{1001}$"})),
            "properties.a.pattern",
            "invalid repeat count: `{1001}`",
        );
        assert!(field_problems(json!({"type": "string", "pattern": "^[a-z]+$"})).is_empty());
    }

    #[test]
    fn issue8_go_patterns_load_and_validate() {
        // prometheus-operator PrometheusRule `partial_response_strategy` writes `(?i)` inside.
        let schema = obj(json!({
            "s": {"type": "string", "pattern": "^(?i)(abort|warn)?$"},
            "d": {"type": "string", "pattern": "^\\d+$"},
        }));
        let c = parsed(&schema);
        assert!(c.validate(&json!({"s": "Warn", "d": "42"})).is_empty());
        assert_eq!(
            errors(&schema, &json!({"s": "fail", "d": "\u{663}"})),
            [
                "d: Invalid value: \"\u{663}\": must match the regular expression \"^\\\\d+$\"",
                r#"s: Invalid value: "fail": must match the regular expression "^(?i)(abort|warn)?$""#,
            ]
        );
    }

    #[test]
    fn list_and_map_types() {
        let found = field_problems(
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-list-type",
            "one of atomic, set, map",
        );
        let found = field_problems(json!({"type": "object", "x-kubernetes-list-type": "set"}));
        assert_problem(
            &found,
            "properties.a.x-kubernetes-list-type",
            "only be used on type array",
        );
        let found = field_problems(json!({"type": "object", "x-kubernetes-map-type": "deep"}));
        assert_problem(
            &found,
            "properties.a.x-kubernetes-map-type",
            "one of atomic, granular",
        );
        let found = field_problems(json!({"type": "string", "x-kubernetes-map-type": "atomic"}));
        assert_problem(
            &found,
            "properties.a.type",
            "must be object if `x-kubernetes-map-type`",
        );
        let found = field_problems(
            json!({"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "map"}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-list-map-keys",
            "must not be empty",
        );
        let found = field_problems(
            json!({"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}},
            "x-kubernetes-list-map-keys": ["k"], "x-kubernetes-list-type": "atomic"}),
        );
        assert_problem(&found, "properties.a.x-kubernetes-list-type", "must be map");
        let found = field_problems(
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k", "o", "n", "k"],
            "items": {"type": "object", "required": ["o"], "properties": {
                "k": {"type": "string"}, "o": {"type": "object"}, "n": {"type": "string", "nullable": true, "default": "x"}}}}),
        );
        assert_problem(
            &found,
            "properties.a.items.properties.k",
            "must be required or have a default",
        );
        assert_problem(
            &found,
            "properties.a.items.properties.o.type",
            "must be a scalar type",
        );
        assert_problem(
            &found,
            "properties.a.items.properties.n.nullable",
            "must be false",
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-list-map-keys",
            "more than once",
        );
        let found = field_problems(
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["z"],
            "items": {"type": "object", "properties": {"k": {"type": "string"}}}}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-list-map-keys",
            "must name a property of the items",
        );
        let found = field_problems(
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "string"}}),
        );
        assert_problem(&found, "properties.a.items.type", "must be object");
        let found = field_problems(
            json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}),
        );
        assert_problem(
            &found,
            "properties.a.items.x-kubernetes-map-type",
            "must be atomic",
        );
        let found = field_problems(json!({"type": "array", "x-kubernetes-list-type": "set",
            "items": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}}));
        assert_problem(
            &found,
            "properties.a.items.x-kubernetes-list-type",
            "must be atomic",
        );
        assert!(field_problems(json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"],
            "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "port": {"type": "integer", "default": 80}}}})).is_empty());
        assert!(field_problems(json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}})).is_empty());
    }

    #[test]
    fn cel_rules_are_accepted_with_a_warning() {
        let schema = obj(json!({"a": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self.size() > 1", "message": "too short", "reason": "FieldValueInvalid", "fieldPath": ".a", "optionalOldSelf": true}]}}));
        let c = parsed(&schema);
        assert_eq!(
            c.warnings(),
            [SchemaProblem {
                path: "properties.a.x-kubernetes-validations".into(),
                message: "CEL rules are not evaluated by krm-catalog".into()
            }]
        );
        // Allowed under allOf, not under anyOf/oneOf/not.
        assert!(field_problems(json!({"type": "string", "allOf": [{"x-kubernetes-validations": [{"rule": "true"}]}]})).is_empty());
        let found = field_problems(
            json!({"type": "string", "anyOf": [{"x-kubernetes-validations": [{"rule": "true"}]}]}),
        );
        assert_problem(
            &found,
            "properties.a.anyOf[0].x-kubernetes-validations",
            "only under allOf",
        );
        let found = field_problems(
            json!({"type": "string", "x-kubernetes-validations": [{"message": "m", "bogus": 1, "reason": "Nope"}]}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-validations[0].rule",
            "is required",
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-validations[0].bogus",
            "unknown field",
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-validations[0].reason",
            "must be one of",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "x-kubernetes-validations": {}})),
            "properties.a.x-kubernetes-validations",
            "list of rules",
        );
    }

    #[test]
    fn unknown_format_is_a_warning() {
        let c = parsed(&obj(
            json!({"a": {"type": "string", "format": "int-or-string"}, "b": {"type": "string", "format": "date-time"}}),
        ));
        assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
        assert_eq!(c.warnings()[0].path, "properties.a.format");
    }

    /// Issue 8 point 2 (acceptance review): kubebuilder's `int32`/`int64` on integers and
    /// `float`/`double` on numbers are OpenAPI's own numeric formats; a real CRD schema has
    /// dozens of them and got a warning for each on every run. A string format on a number
    /// is still a warning.
    #[test]
    fn issue8_numeric_formats_on_their_types_are_no_warning() {
        let c = parsed(&obj(json!({
            "a": {"type": "integer", "format": "int32"},
            "b": {"type": "integer", "format": "int64"},
            "c": {"type": "number", "format": "double"},
            "d": {"type": "number", "format": "float"},
            "e": {"type": "integer", "format": "email"},
            "f": {"type": "string", "format": "int32"}
        })));
        let paths: Vec<&str> = c.warnings().iter().map(|w| w.path.as_str()).collect();
        assert_eq!(paths, ["properties.e.format", "properties.f.format"]);
    }

    // --- ValidateDefaults ---

    #[test]
    fn good_defaults_pass() {
        let c = parsed(&obj(json!({
            "a": {"type": "object", "default": {"x": "1", "m": {"k": "v"}}, "properties": {
                "x": {"type": "string", "pattern": "^[0-9]+$"},
                "m": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "b": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": {"anything": {"goes": 1}}},
            "c": {"type": "string", "format": "email", "default": "a@b.example"},
            "d": {"type": "integer", "default": 3, "minimum": 1, "exclusiveMinimum": true},
            "e": {"x-kubernetes-int-or-string": true, "default": "50%"},
            "f": {"type": "string", "nullable": true, "default": null},
            "g": {"type": "array", "items": {"type": "object", "properties": {"p": {"type": "integer", "default": 1}}}, "default": [{"p": 2}]}
        })));
        assert!(c.warnings().is_empty(), "{:?}", c.warnings());
    }

    #[test]
    fn defaults_must_validate_against_their_schema() {
        let found = field_problems(json!({"type": "integer", "default": "x"}));
        assert_eq!(
            found,
            vec![SchemaProblem {
                path: "properties.a.default".into(),
                message: "invalid default: Invalid value: \"x\": must be of type integer".into()
            }]
        );
        let found = field_problems(
            json!({"type": "object", "default": {"n": 70000}, "properties": {"n": {"type": "integer", "maximum": 65535}}}),
        );
        assert_problem(
            &found,
            "properties.a.default",
            "n: Invalid value: 70000: must be less than or equal to 65535",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "format": "email", "default": "nope"})),
            "properties.a.default",
            "must be a valid email",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "enum": ["x"], "default": "y"})),
            "properties.a.default",
            "Unsupported value",
        );
        // Items defaults are checked too.
        let found =
            field_problems(json!({"type": "array", "items": {"type": "string", "default": 1}}));
        assert_problem(
            &found,
            "properties.a.items.default",
            "must be of type string",
        );
        // Root defaults are validated as upstream does (and warned about).
        assert_problem(
            &problems(&json!({"type": "object", "default": 1})),
            "default",
            "must be of type object",
        );
    }

    #[test]
    fn defaults_are_checked_after_their_children_cascade() {
        // `default: {}` is fine when every required child has a default of its own ...
        assert!(
            field_problems(json!({"type": "object", "default": {}, "required": ["x"],
            "properties": {"x": {"type": "string", "default": "d"}}}))
            .is_empty()
        );
        // ... but not when one of them has none.
        let found = field_problems(
            json!({"type": "object", "default": {}, "required": ["x", "y"],
            "properties": {"x": {"type": "string", "default": "d"}, "y": {"type": "string"}}}),
        );
        assert_eq!(
            found,
            vec![SchemaProblem {
                path: "properties.a.default".into(),
                message: "invalid default: y: Required value".into()
            }]
        );
    }

    #[test]
    fn defaults_must_not_have_unknown_fields() {
        let found = field_problems(
            json!({"type": "object", "default": {"x": 1, "y": 2, "z": {"w": 1}},
            "properties": {"x": {"type": "integer"}, "z": {"type": "object", "properties": {}}}}),
        );
        assert_problem(
            &found,
            "properties.a.default",
            r#"must not have unknown fields: "z.w", "y""#,
        );
        // additionalProperties: true keeps keys but prunes inside nested objects (upstream semantics).
        let found = field_problems(
            json!({"type": "object", "additionalProperties": true, "default": {"k": {"n": 1}, "s": "x"}}),
        );
        assert_problem(
            &found,
            "properties.a.default",
            r#"must not have unknown fields: "k.n""#,
        );
    }

    #[test]
    fn defaults_inside_additional_properties_are_not_validated() {
        assert!(
            field_problems(
                json!({"type": "object", "additionalProperties": {"type": "string", "default": 1}})
            )
            .is_empty()
        );
    }

    #[test]
    fn root_default_is_a_warning() {
        let c = parsed(&json!({"type": "object", "default": {}}));
        assert_eq!(c.warnings().len(), 1);
        assert_eq!(c.warnings()[0].path, "default");
        assert!(c.warnings()[0].message.contains("never applied"));
    }

    // --- Structural model ---

    #[test]
    fn structural_keeps_source_order_and_fields() {
        let c = parsed(&json!({"type": "object", "properties": {
            "z": {"type": "string", "title": "Z", "description": "zed", "format": "email", "enum": ["a@b.c"], "default": "a@b.c"},
            "a": {"type": "object", "required": ["q"], "properties": {"q": {"type": "string"}}},
            "m": {"type": "object", "additionalProperties": {"type": "integer", "nullable": true}},
            "l": {"type": "array", "items": {"x-kubernetes-int-or-string": true}},
            "e": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
        }}));
        let s = c.structural();
        let names: Vec<&str> = s.properties.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["z", "a", "m", "l", "e"]);
        let z = s.property("z").unwrap();
        assert_eq!(
            (
                z.type_.as_str(),
                z.title.as_deref(),
                z.description.as_deref(),
                z.format.as_deref()
            ),
            ("string", Some("Z"), Some("zed"), Some("email"))
        );
        assert_eq!(z.enum_, [json!("a@b.c")]);
        assert_eq!(s.property("a").unwrap().required, ["q"]);
        let ap = s
            .property("m")
            .unwrap()
            .additional_properties
            .as_ref()
            .unwrap()
            .schema()
            .unwrap();
        assert!(ap.nullable);
        assert!(
            s.property("l")
                .unwrap()
                .items
                .as_ref()
                .unwrap()
                .x_int_or_string
        );
        let e = s.property("e").unwrap();
        assert!(e.x_embedded_resource && e.x_preserve_unknown_fields);
        assert_eq!(c.raw()["properties"]["z"]["title"], json!("Z"));
    }

    #[test]
    fn prune_follows_upstream() {
        let s = Structural::from_json(&json!({"properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}},
            "p": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"q": {"type": "object", "properties": {}}}},
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
            "t": {"type": "object", "additionalProperties": true},
            "r": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object", "properties": {}}}}
        }})).unwrap();
        let mut x = json!({"a": {"b": "x", "c": 1}, "p": {"keep": {"deep": 1}, "q": {"gone": 1}},
            "m": {"k": {"v": "1", "w": 2}}, "t": {"k": {"n": 1}, "s": 1},
            "r": {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {"x": 1}, "status": {}}, "top": 1});
        let removed: Vec<String> = prune(&mut x, Some(&s), false)
            .iter()
            .map(|p| render_path(p))
            .collect();
        assert_eq!(
            x,
            json!({"a": {"b": "x"}, "p": {"keep": {"deep": 1}, "q": {}}, "m": {"k": {"v": "1"}},
            "t": {"k": {}, "s": 1}, "r": {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {}}})
        );
        assert_eq!(
            removed,
            [
                "a.c", "p.q.gone", "m.k.w", "t.k.n", "r.spec.x", "r.status", "top"
            ]
        );
        // With no schema everything inside objects goes; resource roots keep their type fields.
        let mut y = json!([{"a": 1}, {"b": 2}]);
        prune(&mut y, None, false);
        assert_eq!(y, json!([{}, {}]));
        let mut z = json!({"apiVersion": "v1", "kind": "K", "metadata": {}, "spec": 1});
        prune(&mut z, None, true);
        assert_eq!(z, json!({"apiVersion": "v1", "kind": "K", "metadata": {}}));
    }

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
                r#"services.a: Invalid value: "nope": must be a valid email"#,
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
                path: vec![
                    PathSegment::Key("clusterIssuer".into()),
                    PathSegment::Key("email".into())
                ],
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
        let schema = obj(
            json!({"l": {"type": "array", "items": {"type": "object", "properties": {"0": {"type": "string"}}}}}),
        );
        let errs = parsed(&schema).validate(&json!({"l": [{"0": 1}, {"0": 2}]}));
        assert_eq!(
            errs.iter().map(|e| e.path.clone()).collect::<Vec<_>>(),
            [
                vec![
                    PathSegment::Key("l".into()),
                    PathSegment::Index(0),
                    PathSegment::Key("0".into())
                ],
                vec![
                    PathSegment::Key("l".into()),
                    PathSegment::Index(1),
                    PathSegment::Key("0".into())
                ],
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

    #[test]
    fn problems_display_with_their_path() {
        let p = SchemaProblem {
            path: "properties.a.type".into(),
            message: "m".into(),
        };
        assert_eq!(p.to_string(), "properties.a.type: m");
        assert_eq!(
            SchemaProblem {
                path: String::new(),
                message: "m".into()
            }
            .to_string(),
            "m"
        );
        assert_eq!(
            FieldError {
                path: vec![],
                message: "Required value".into()
            }
            .to_string(),
            "Required value"
        );
    }

    #[test]
    fn from_json_reports_only_new_structural_errors() {
        // Structural-schema rules are not NewStructural's business ...
        let s = Structural::from_json(&json!({"properties": {"a": {"items": {}}}})).unwrap();
        assert!(s.property("a").unwrap().items.is_some());
        // ... but forbidden keywords, array items and wrong JSON types are.
        let err = Structural::from_json(&json!({"properties": {"a": {"items": [{}]}, "b": {"x-kubernetes-preserve-unknown-fields": false},
            "c": {"allOf": [{"$ref": "#/x"}]}, "d": {"minLength": "1"}}})).unwrap_err();
        let paths: Vec<&str> = err.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "properties.a.items",
                "properties.b.x-kubernetes-preserve-unknown-fields",
                "properties.c.allOf[0].$ref",
                "properties.d.minLength"
            ]
        );
    }

    #[test]
    fn render_path_quotes_odd_keys() {
        let p = [
            PathSegment::Key("a".into()),
            PathSegment::Key("b.c".into()),
            PathSegment::Index(2),
            PathSegment::Key("d".into()),
        ];
        assert_eq!(render_path(&p), r#"a["b.c"][2].d"#);
    }

    // --- Format checkers ---

    #[track_caller]
    fn check(format: &str, good: &[&str], bad: &[&str]) {
        for v in good {
            assert_eq!(
                check_format(format, v),
                Some(true),
                "{format} should accept {v:?}"
            );
        }
        for v in bad {
            assert_eq!(
                check_format(format, v),
                Some(false),
                "{format} should reject {v:?}"
            );
        }
    }

    #[test]
    fn format_bsonobjectid() {
        check(
            "bsonobjectid",
            &["507f1f77bcf86cd799439011"],
            &["507f1f77bcf86cd79943901", "507f1f77bcf86cd79943901z"],
        );
    }

    #[test]
    fn format_uri() {
        check(
            "uri",
            &[
                "https://acme-staging-v02.api.letsencrypt.org/directory",
                "/abs/path",
                "mailto:a@b.c",
                "http://[::1]:8080/x",
                "http://user:pa%20ss@host:1/p?q=1",
                "s3://bucket",
                "*",
                "http://h/a b",
            ],
            &[
                "",
                "relative/path",
                "example.com",
                ":nope",
                "http://host:port/",
                "http://a b.com/",
                "http://h/%zz",
                "http://[::1/",
            ],
        );
    }

    #[test]
    fn format_email() {
        check(
            "email",
            &[
                "yourname@your-domain.de",
                "a.b+c@d",
                "\"quoted name\"@x.org",
                "Name <n@x.org>",
                "<n@x.org>",
                "a@[127.0.0.1]",
                "a@b (comment)",
                " a@b ",
            ],
            &[
                "",
                "plain",
                "a@",
                "@b",
                "a..b@c",
                ".a@b",
                "a@b.",
                "Name <n@x.org",
                "a@b c",
                "a@[not-ip]",
                "a@b, c@d",
            ],
        );
    }

    #[test]
    fn format_hostname() {
        check(
            "hostname",
            &[
                "example.com",
                "a",
                "my-host.example.org",
                "xn--bcher-kva.example",
                "1.2.3.example",
            ],
            &[
                "-bad.com",
                "bad-.com",
                "a..b",
                "a_b.com",
                &format!("{}.com", "a".repeat(64)),
                "ex ample.com",
            ],
        );
    }

    #[test]
    fn format_ip_and_cidr() {
        // ParseIPSloppy: leading zeros are fine (read as decimal), as in Go before 1.17.
        check(
            "ipv4",
            &[
                "192.168.0.1",
                "::ffff:1.2.3.4",
                "01.2.3.4",
                "010.000.000.001",
                "::ffff:01.2.3.4",
            ],
            &[
                "256.1.1.1",
                "::1",
                "1.2.3",
                "1.2.3.4.5",
                "1.2.3.",
                "0x1.2.3.4",
                " 1.2.3.4",
            ],
        );
        check(
            "ipv6",
            &["::1", "2001:db8::ff00:42:8329"],
            &["1.2.3.4", "2001:db8::g", "::1%eth0"],
        );
        check(
            "cidr",
            &["10.0.0.0/8", "2001:db8::/32", "10.0.0.0/032", "010.0.0.0/8"],
            &[
                "10.0.0.0",
                "10.0.0.0/33",
                "10.0.0.0/",
                "10.0.0.0/+1",
                "::/129",
            ],
        );
    }

    #[test]
    fn format_mac() {
        check(
            "mac",
            &[
                "00:00:5e:00:53:01",
                "00-00-5E-00-53-01",
                "0000.5e00.5301",
                "00:00:00:00:fe:80:00:00",
                "0000.0000.fe80.0000",
            ],
            &[
                "00:00:5e:00:53",
                "00:00:5e:00:53:0g",
                "00:00-5e:00:53:01",
                "0000.5e00.530",
                "00005e005301",
            ],
        );
    }

    #[test]
    fn format_uuids() {
        check(
            "uuid",
            &[
                "123e4567-e89b-12d3-a456-426614174000",
                "123E4567E89B12D3A456426614174000",
            ],
            &[
                "123e4567-e89b-12d3-a456",
                "x23e4567-e89b-12d3-a456-426614174000",
            ],
        );
        check(
            "uuid3",
            &["a3bb189e-8bf9-3888-9912-ace4e6543002"],
            &["a3bb189e-8bf9-4888-9912-ace4e6543002"],
        );
        check(
            "uuid4",
            &["123e4567-e89b-42d3-a456-426614174000"],
            &["123e4567-e89b-42d3-c456-426614174000"],
        );
        check(
            "uuid5",
            &["74738ff5-5367-5958-9aee-98fffdcd1876"],
            &["74738ff5-5367-4958-9aee-98fffdcd1876"],
        );
    }

    #[test]
    fn format_isbn() {
        check(
            "isbn10",
            &["0321751043", "0-321-75104-3", "080442957X"],
            &["0321751044", "032175104"],
        );
        check(
            "isbn13",
            &["978-0321751041", "9780321751041"],
            &["9780321751042", "978032175104"],
        );
        check("isbn", &["0321751043", "978-0321751041"], &["123"]);
    }

    #[test]
    fn format_misc_patterns() {
        check(
            "creditcard",
            &["4111 1111 1111 1111", "5500-0000-0000-0004"],
            &["4111 1111 1111 1112", "1234"],
        );
        check(
            "ssn",
            &["123-45-6789", "123 45 6789"],
            &["123456789", "123-45-678"],
        );
        check(
            "hexcolor",
            &["#fff", "FFFFFF", "#a1b2c3"],
            &["#ffff", "#ggg"],
        );
        check(
            "rgbcolor",
            &["rgb(255,255,255)", "rgb( 0 , 10 , 200 )"],
            &["rgb(256,0,0)", "rgba(0,0,0,0)"],
        );
        check(
            "byte",
            &["aGVsbG8=", "aGVsbG8h", "aGk="],
            &["aGVsbG8", "aGVsbG8=!", "", "a-_b"],
        );
        check("password", &["", "anything"], &[]);
    }

    #[test]
    fn format_date_and_datetime() {
        check(
            "date",
            &["2024-02-29", "2023-12-31", "0001-01-01"],
            &[
                "2023-02-29",
                "2024-13-01",
                "2024-1-01",
                "2024-01-00",
                "2024-04-31",
                "20240101",
            ],
        );
        check(
            "date-time",
            &[
                "2024-01-02T03:04:05Z",
                "2024-01-02t03:04:05.123+01:00",
                "2024-01-02T23:59:59-08:00",
            ],
            &[
                "2024-01-02",
                "2024-01-02T24:00:00Z",
                "2024-01-02T03:04:05",
                "2024-01-02 03:04:05Z",
                "2024-02-30T00:00:00Z",
                "x",
            ],
        );
        assert_eq!(check_format("datetime", "2024-01-02T03:04:05Z"), Some(true));
    }

    #[test]
    fn format_duration() {
        check(
            "duration",
            &[
                "1h30m",
                "-1.5h",
                "300ms",
                "2\u{b5}s",
                "2\u{3bc}s",
                "0",
                ".5s",
                "1.s",
                "1h 30m",
                "3 days",
                "2 hours 5 min",
                "1w",
                "22 ns",
                // Upstream finds `<n> <unit>` anywhere in the text.
                "in 3 days please",
                "1 h 30 x y",
            ],
            &[
                "",
                "1",
                "h",
                ".s",
                "1x",
                "-",
                "99999999999999999999h",
                "9223372036854775808ns",
                "3 months",
            ],
        );
        assert_eq!(
            check_format("duration", "9223372036854775807ns"),
            Some(true)
        );
    }

    #[test]
    fn format_k8s_names() {
        check(
            "k8s-short-name",
            &["my-name", "a", "0abc"],
            &["My-name", "-a", "a.b", &"a".repeat(64)],
        );
        check(
            "k8s-long-name",
            &["my.name-1", "a.b.c", &"a".repeat(64)],
            &["a..b", "A.b", "a.", &format!("{}.b", "a".repeat(252))],
        );
    }

    #[test]
    fn unknown_formats_are_not_checked() {
        assert_eq!(check_format("uri-reference", "x"), None);
        assert_eq!(check_format("int32", "x"), None);
    }

    #[test]
    fn issue8_numeric_formats_do_not_range_check() {
        // kube-openapi has no int32/int64/float/double checker: 2^40 is a valid `int32` there.
        let schema = obj(json!({"i": {"type": "integer", "format": "int32"},
            "l": {"type": "integer", "format": "int64"}, "f": {"type": "number", "format": "float"}}));
        assert!(
            errors(
                &schema,
                &json!({"i": 1_099_511_627_776_i64, "l": u64::MAX, "f": 1e300})
            )
            .is_empty()
        );
    }

    // --- Corpus (kubara-io/catalogs@e383e84 general/services/*.yaml configSchema) ---

    fn corpus_cert_manager() -> Value {
        json!({
            "type": "object",
            "required": ["clusterIssuer"],
            "properties": {"clusterIssuer": {
                "type": "object",
                "default": {},
                "required": ["name", "email", "server"],
                "properties": {
                    "name": {"type": "string", "default": "letsencrypt-staging", "minLength": 1},
                    "email": {"type": "string", "format": "email", "default": "yourname@your-domain.de"},
                    "server": {"type": "string", "format": "uri", "default": "https://acme-staging-v02.api.letsencrypt.org/directory"}
                }
            }}
        })
    }

    fn corpus_velero() -> Value {
        json!({
            "type": "object",
            "properties": {
                "backupMode": {"type": "string", "default": "fs-backup", "enum": ["fs-backup", "csi-snapshot", "csi-data-mover"],
                    "description": "Volume backup strategy. fs-backup uses file-system backups via the node agent. csi-snapshot uses CSI snapshots. csi-data-mover uses CSI snapshots and moves snapshot data to object storage."},
                "backupStorage": {"type": "object", "default": {},
                    "description": "Backup storage configuration. Set create to true to let kubara create the backup bucket and credentials where supported. Set create to false to use an existing S3-compatible bucket. Set s3Url explicitly to the S3-compatible endpoint Velero should use.",
                    "properties": {
                        "create": {"type": "boolean", "default": true},
                        "bucketName": {"type": "string", "minLength": 1},
                        "region": {"type": "string", "default": "eu01", "minLength": 1},
                        "s3Url": {"type": "string", "format": "uri", "description": "S3-compatible endpoint URL used by Velero. Must be set when Velero is enabled."}
                    }}
            }
        })
    }

    fn corpus_metallb() -> Value {
        json!({
            "type": "object",
            "required": ["publicLoadBalancerIPs", "loadBalancerAddressPool"],
            "properties": {
                "publicLoadBalancerIPs": {"type": "string",
                    "description": "Specifies a comma-separated list of IPs to be used for public DNS record targets https://kubernetes-sigs.github.io/external-dns/latest/docs/annotations/annotations/#external-dnsalphakubernetesiotarget"},
                "loadBalancerAddressPool": {"type": "array", "items": {"type": "string"},
                    "description": "MetalLB will allocate IPs from any configured address pool with free addresses. https://metallb.universe.tf/configuration/_advanced_ipaddresspool_configuration/"}
            }
        })
    }

    #[test]
    fn corpus_schemas_parse_cleanly() {
        for raw in [corpus_cert_manager(), corpus_velero(), corpus_metallb()] {
            let c = parsed(&raw);
            assert!(c.warnings().is_empty(), "{:?}", c.warnings());
            assert_eq!(Structural::from_json(&raw).as_ref(), Ok(c.structural()));
        }
    }

    #[test]
    fn corpus_defaulted_configs_validate() {
        use super::super::defaulting::default_config;
        let cert = parsed(&corpus_cert_manager());
        let config = default_config(None, cert.structural()).unwrap();
        assert!(cert.validate(&config).is_empty());
        let bad = json!({"clusterIssuer": {"name": "", "email": "not-an-email", "server": "acme"}});
        assert_eq!(
            cert.validate(&bad)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [
                r#"clusterIssuer.email: Invalid value: "not-an-email": must be a valid email"#,
                r#"clusterIssuer.name: Invalid value: "": must be at least 1 characters long"#,
                r#"clusterIssuer.server: Invalid value: "acme": must be a valid uri"#,
            ]
        );
        assert_eq!(
            cert.validate(&json!({}))
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["clusterIssuer: Required value"]
        );
        let velero = parsed(&corpus_velero());
        let config = default_config(None, velero.structural()).unwrap();
        assert!(velero.validate(&config).is_empty());
        let metallb = parsed(&corpus_metallb());
        assert_eq!(default_config(None, metallb.structural()), None);
        assert_eq!(
            metallb
                .validate(&json!({"loadBalancerAddressPool": ["10.0.0.0/24", 1]}))
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [
                r"loadBalancerAddressPool[1]: Invalid value: 1: must be of type string",
                "publicLoadBalancerIPs: Required value"
            ]
        );
    }
}

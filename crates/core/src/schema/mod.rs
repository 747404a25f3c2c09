//! CRD `openAPIV3Schema` handling, shared by service config schemas and (next) function kinds.
//!
//! A port of the apiextensions-apiserver structural-schema rules (`NewStructural`,
//! `ValidateStructural`, CRD keyword validation, `ValidateDefaults`), structural defaulting and
//! pruning, the conversion to a JSON Schema (draft 7) that behaves like the kube-openapi
//! validator, the Kubernetes (go-openapi strfmt) format checkers, and the mapping of validation
//! errors to Kubernetes-style field errors.
//!
//! The files, bottom to top; a file imports only files listed before it (unit tests may also
//! build fixtures through the public API below, see `testutil`):
//! - `gofmt`: values as Go prints them (`%q`, `%v`), for the apiserver's messages;
//! - `structural`: the model (`Structural`, `SchemaProblem`, `FieldError`; uses `gofmt`);
//! - `goregex`: Go RE2 patterns on the `regex` crate;
//! - `duration`, `email`: Go `time.ParseDuration` and `net/mail.ParseAddress`;
//! - `formats`: the Kubernetes string formats (uses `duration`, `email`);
//! - `defaulting`, `prune`: structural defaulting and pruning (use `structural`);
//! - `convert`: CRD schema → JSON Schema (uses `structural`, `formats`);
//! - `validate`: compile and map errors to field errors, worded as apiextensions-apiserver
//!   words them (uses `structural`, `formats`, `gofmt`, `goregex`);
//! - `listtype`: `x-kubernetes-list-type` set and map uniqueness (uses `structural`, `gofmt`,
//!   `validate`);
//! - `decode`: one node read like `JSONSchemaProps`, the problem collector (uses `structural`,
//!   `goregex`);
//! - `check`: the structural-schema checks (uses all of the above);
//! - `cel/`: `x-kubernetes-validations` compiled and evaluated (uses `structural`, `duration`,
//!   `validate`);
//! - this file: `ConfigSchema`, the public entry point, and the re-exports.

mod cel;
mod check;
mod convert;
mod decode;
pub mod defaulting;
mod duration;
mod email;
mod formats;
mod gofmt;
mod goregex;
mod listtype;
mod prune;
mod structural;
#[cfg(test)]
mod testutil;
mod validate;

use std::sync::Arc;

use jsonschema::Validator;
use serde_json::Value;

use decode::{Checker, Level};

use crate::diagnostics::FieldPath;

pub use cel::{CelRules, PER_CALL_LIMIT, VALIDATION_BUDGET};
pub use convert::to_json_schema;
pub use formats::check_format;
pub use listtype::validate as validate_list_types;
pub use prune::{OBJECT_META_FIELDS, prune};
pub use structural::{AdditionalProperties, FieldError, SchemaProblem, Structural};
pub use validate::{CompileError, compile, has_blocking_error, validate_with};

/// The schema keyword that marks a field deprecated, with its warning text (issue 23). CRD
/// schemas have none (`x-kubernetes-deprecated` does not exist upstream; built-in types warn
/// from Go code): a value set under it gives a warning result, as the apiserver's field
/// deprecation warnings do.
pub const DEPRECATED_KEYWORD: &str = "x-krm-catalog-deprecated";

/// The field error the apiserver adds instead of evaluating CEL rules on an object with blocking
/// errors (apiextensions-apiserver `pkg/registry/customresource/strategy.go` `hasBlockingErr`:
/// `field.Invalid(nil, nil, …)`, at no field: `<nil>: Invalid value: null: some validation …`).
pub const CEL_NOT_CHECKED: &str = "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

/// A checked CRD-style config schema with its converted JSON Schema and compiled validator.
#[derive(Debug, Clone)]
pub struct ConfigSchema {
    raw: Value,
    structural: Structural,
    json_schema: Value,
    warnings: Vec<SchemaProblem>,
    validator: Validator,
    /// Its compiled `x-kubernetes-validations`, if it has any.
    cel: Option<Arc<CelRules>>,
}

impl ConfigSchema {
    /// Parse and check a CRD-style schema; returns ALL problems found (not just the first).
    ///
    /// # Errors
    /// Every structural-schema, keyword and default problem, each with its schema path.
    pub fn parse(raw: &Value) -> Result<ConfigSchema, Vec<SchemaProblem>> {
        let mut raw = raw.clone();
        decode::drop_null_keywords(&mut raw);
        let raw = &raw;
        let mut checker = Checker {
            full: true,
            ..Checker::default()
        };
        let structural = checker.structural(raw, &FieldPath::root(), Level::Root);
        let json_schema = to_json_schema(raw);
        if !checker.problems.is_empty() {
            return Err(checker.problems);
        }
        let cel = CelRules::compile(raw, &structural)?.map(Arc::new);
        match compile(&json_schema) {
            Ok(validator) => Ok(ConfigSchema {
                raw: raw.clone(),
                structural,
                json_schema,
                warnings: checker.warnings,
                validator,
                cel,
            }),
            // Our checks should catch everything the compiler rejects; report it if they did not.
            Err(e) => Err(vec![SchemaProblem {
                path: FieldPath::root(),
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

    /// Whether the schema carries `x-kubernetes-validations` rules.
    #[must_use]
    pub fn has_cel_rules(&self) -> bool {
        self.cel.is_some()
    }

    /// Validate an instance (e.g. a service's `config`) and return every error: the OpenAPI
    /// validation, the uniqueness of `x-kubernetes-list-type` sets and maps, then the CEL
    /// rules, as the apiserver does (`strategy.go` `Validate`): the rules run only when no
    /// blocking error (wrong type, enum, required, too long, too many) was found, else one
    /// error says they were not checked.
    #[must_use]
    pub fn validate(&self, instance: &Value) -> Vec<FieldError> {
        let mut errors = validate_with(&self.validator, &self.json_schema, instance);
        let blocked = !errors.is_empty() && has_blocking_error(&self.validator, instance);
        errors.extend(listtype::validate(&self.structural, instance));
        errors.extend(self.validate_rules(instance, blocked));
        errors
    }

    /// [`Self::validate`] for a whole object (a custom resource, a function config): the
    /// apiserver validates one from a nil path (`strategy.go` passes `nil` to kube-openapi and
    /// the CEL validator), so an error at the object's root is at no field, `<nil>` (a CEL rule
    /// of the root: `<nil>: Invalid value: …`). The messages that name their field (`in body`)
    /// keep the root's empty path.
    #[must_use]
    pub fn validate_object(&self, object: &Value) -> Vec<FieldError> {
        let mut errors = self.validate(object);
        for e in &mut errors {
            if e.path.is_empty() && e.in_body.is_none() {
                e.path = e.path.nil();
            }
        }
        errors
    }

    /// The CEL rules' errors on `instance`, for a caller that ran the OpenAPI validation itself
    /// (a service instance validates its config inside a larger schema): `blocked` says whether
    /// that found a blocking error, in which case one error says the rules were not checked.
    #[must_use]
    pub fn validate_rules(&self, instance: &Value, blocked: bool) -> Vec<FieldError> {
        match &self.cel {
            None => Vec::new(),
            Some(_) if blocked => vec![FieldError::new(FieldPath::root().nil(), CEL_NOT_CHECKED)],
            Some(cel) => cel.validate(&self.structural, instance),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;
    use serde_json::json;

    #[test]
    fn corpus_schemas_parse_cleanly() {
        for raw in [corpus_cert_manager(), corpus_velero(), corpus_metallb()] {
            let c = parsed(&raw);
            assert!(c.warnings().is_empty(), "{:?}", c.warnings());
            assert_eq!(Structural::from_json(&raw).as_ref(), Ok(c.structural()));
        }
    }

    /// A schema whose `description:` (or another keyword) is `null` failed to load ("`description`
    /// must be a string"); Go's decoder reads `null` as absent (issue 22).
    #[test]
    fn issue16_null_keywords_are_absent_as_go_decodes_them() {
        let raw = json!({
            "type": "object",
            "description": null,
            "title": null,
            "required": null,
            "x-kubernetes-validations": [{"rule": "self.name != 'root'", "message": null}],
            "properties": {
                "name": {"type": "string", "description": null, "format": null, "pattern": null,
                         "maxLength": null, "enum": null, "default": "demo", "nullable": null},
                "tags": {"type": "array", "items": {"type": "string", "description": null}},
                "labels": {"type": "object", "additionalProperties": {"type": "string", "title": null},
                           "x-kubernetes-map-type": null},
            },
        });
        let c = ConfigSchema::parse(&raw).expect("a schema with null keywords loads");
        assert!(c.warnings().is_empty(), "{:?}", c.warnings());
        assert!(c.raw().get("description").is_none());
        assert!(
            c.validate(&json!({"name": "x", "tags": ["a"], "labels": {"a": "b"}}))
                .is_empty()
        );
        assert_eq!(
            c.validate(&json!({"name": "x", "tags": [1]}))
                .first()
                .map(ToString::to_string)
                .as_deref(),
            Some(
                r#"tags[0]: Invalid value: "integer": tags[0] in body must be of type string: "integer""#
            )
        );
        assert_eq!(
            c.validate_rules(&json!({"name": "root"}), false)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["Invalid value: failed rule: self.name != 'root'"]
        );
    }

    #[test]
    fn corpus_defaulted_configs_validate() {
        use super::defaulting::default_config;
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
                r#"clusterIssuer.email: Invalid value: "not-an-email": clusterIssuer.email in body must be of type email: "not-an-email""#,
                r#"clusterIssuer.name: Invalid value: "": clusterIssuer.name in body should be at least 1 chars long"#,
                r#"clusterIssuer.server: Invalid value: "acme": clusterIssuer.server in body must be of type uri: "acme""#,
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
                r#"loadBalancerAddressPool[1]: Invalid value: "integer": loadBalancerAddressPool[1] in body must be of type string: "integer""#,
                "publicLoadBalancerIPs: Required value"
            ]
        );
    }

    #[test]
    fn cel_rules_run_after_openapi_validation_unless_it_found_a_blocking_error() {
        let c = parsed(&json!({"type": "object", "properties": {
            "min": {"type": "integer", "maximum": 10}, "max": {"type": "integer"},
            "mode": {"type": "string", "enum": ["a", "b"]}},
            "x-kubernetes-validations": [{"rule": "self.min <= self.max", "message": "min must not exceed max"}]}));
        let shown =
            |v: Value| -> Vec<String> { c.validate(&v).iter().map(ToString::to_string).collect() };
        assert!(shown(json!({"min": 1, "max": 2})).is_empty());
        assert_eq!(
            shown(json!({"min": 3, "max": 2})),
            ["Invalid value: min must not exceed max"]
        );
        // A maximum violation does not block the rules (upstream: ErrorTypeInvalid).
        assert_eq!(
            shown(json!({"min": 11, "max": 2})),
            [
                "min: Invalid value: 11: min in body should be less than or equal to 10",
                "Invalid value: min must not exceed max"
            ]
        );
        // An enum violation does (ErrorTypeNotSupported): one error says so instead.
        assert_eq!(
            shown(json!({"min": 3, "max": 2, "mode": "c"})),
            [
                r#"mode: Unsupported value: "c": supported values: "a", "b""#,
                format!("<nil>: {CEL_NOT_CHECKED}").as_str(),
            ]
        );
    }

    /// Issue 22: the apiserver validates a custom resource from a nil path, so the errors at
    /// its root (a rule on the whole object) and the rules not checked are at no field,
    /// `<nil>`; a value's errors keep their field.
    #[test]
    fn issue16_a_whole_objects_root_errors_are_at_no_field() {
        let c = parsed(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"min": {"type": "integer", "maximum": 10},
                "mode": {"type": "string", "enum": ["a"]}}}},
            "x-kubernetes-validations": [{"rule": "!has(self.spec) || !has(self.spec.min) || self.spec.min > 0", "message": "min must be positive"}]}));
        let shown = |v: Value| -> Vec<String> {
            c.validate_object(&v)
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        assert_eq!(
            shown(json!({"spec": {"min": 11}})),
            ["spec.min: Invalid value: 11: spec.min in body should be less than or equal to 10"]
        );
        assert_eq!(
            shown(json!({"spec": {"min": -1}})),
            ["<nil>: Invalid value: min must be positive"]
        );
        assert_eq!(
            shown(json!({"spec": {"min": 0, "mode": "b"}})),
            [
                r#"spec.mode: Unsupported value: "b": supported values: "a""#,
                format!("<nil>: {CEL_NOT_CHECKED}").as_str(),
            ]
        );
        // The same rule on a value that is not a whole object (a service's config) is at its root.
        assert_eq!(
            c.validate(&json!({"spec": {"min": -1}}))
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["Invalid value: min must be positive"]
        );
    }
}

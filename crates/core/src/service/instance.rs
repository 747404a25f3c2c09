//! Service instances: the `{status, storage, networking, config}` a user writes for a service,
//! taken through status defaulting, structural defaulting of `config` and validation against
//! the kubara instance schema, in that order (SPEC §5).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};

use super::definition::{ServiceDefinition, Status, instance_json_schema, instance_structural};
use crate::diagnostics::{FieldPath, PathSegment};
use crate::schema::defaulting;
use crate::schema::{self, AdditionalProperties, ConfigSchema, FieldError, Structural};
use crate::strict::Problem;

/// What to do with fields an instance's schema does not declare: the apiserver's
/// `fieldValidation` (kubectl `--validate=strict|warn|ignore`). The apiserver prunes them in
/// every mode (apiextensions-apiserver `pkg/apiserver/schema/pruning`); Strict fails the request
/// with `unknown field "spec.x"`, Warn returns that text as a warning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UnknownFields {
    /// An error at the field's path (kubectl's default, `--validate=strict`).
    #[default]
    Strict,
    /// A warning, and the field is dropped.
    Warn,
    /// Dropped silently (`fieldValidation=Ignore`).
    Prune,
}

impl UnknownFields {
    /// The names in the function config, in order.
    pub const NAMES: [&'static str; 3] = ["Strict", "Warn", "Prune"];

    /// Parse a setting value.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "Strict" => Some(Self::Strict),
            "Warn" => Some(Self::Warn),
            "Prune" => Some(Self::Prune),
            _ => None,
        }
    }
}

/// A compiled instance schema of one service.
#[derive(Debug)]
pub struct InstanceSchema {
    /// The JSON Schema (draft-07) of an instance.
    pub json_schema: Value,
    /// The structural schema of an instance (pruning finds unknown fields with it).
    pub structural: Structural,
    validator: jsonschema::Validator,
}

impl InstanceSchema {
    /// Every validation error of an instance value: the OpenAPI validation, then the
    /// uniqueness of `x-kubernetes-list-type` sets and maps.
    pub fn validate(&self, instance: &Value) -> Vec<FieldError> {
        let mut errors = schema::validate_with(&self.validator, &self.json_schema, instance);
        errors.extend(schema::validate_list_types(&self.structural, instance));
        errors
    }

    /// Whether the errors of [`Self::validate`] include one the apiserver lets block CEL rules.
    pub fn has_blocking_error(&self, instance: &Value) -> bool {
        schema::has_blocking_error(&self.validator, instance)
    }
}

/// The compiled instance schemas of one catalog's services, each built on first use and kept:
/// whoever prepares instances (a run, `catalog lint`, the built-in catalog's test) makes one and lends it,
/// so a service's schema is compiled once however many of its instances there are. Keyed by
/// service ID, which is unique in a merged catalog: one cache serves one catalog.
#[derive(Debug, Default)]
pub struct Schemas {
    compiled: Mutex<HashMap<String, Arc<Result<InstanceSchema, schema::CompileError>>>>,
}

impl Schemas {
    /// An empty cache: nothing is compiled until an instance needs it.
    pub fn new() -> Self {
        Self::default()
    }

    /// The compiled instance schema of a service (built on first use; a schema that does not
    /// compile is remembered too, so its error is the same every time).
    pub fn get(
        &self,
        def: &ServiceDefinition,
    ) -> Arc<Result<InstanceSchema, schema::CompileError>> {
        // A panic while compiling cannot leave a half-written entry: the map is only
        // written with a finished result, so a poisoned lock is still a good one.
        let mut compiled = self.compiled.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(schema) = compiled.get(&def.id) {
            return Arc::clone(schema);
        }
        let schema = Arc::new(InstanceSchema::compile(def));
        compiled.insert(def.id.clone(), Arc::clone(&schema));
        schema
    }
}

impl InstanceSchema {
    /// Compile the instance schema of a service.
    fn compile(def: &ServiceDefinition) -> Result<Self, schema::CompileError> {
        let json_schema = instance_json_schema(def);
        let validator = schema::compile(&json_schema)?;
        Ok(Self {
            json_schema,
            structural: instance_structural(def),
            validator,
        })
    }
}

/// An instance after defaulting and validation.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// The effective status.
    pub status: Status,
    /// The full instance value after defaulting (what templates see).
    pub value: Map<String, Value>,
    /// Non-fatal findings (unknown fields under `unknownFields: Warn`).
    pub warnings: Vec<Problem>,
}

impl Instance {
    /// `storage`, or `{}`.
    pub fn storage(&self) -> Value {
        self.value
            .get("storage")
            .cloned()
            .unwrap_or_else(|| json!({}))
    }
    /// `networking`, or `{}`.
    pub fn networking(&self) -> Value {
        self.value
            .get("networking")
            .cloned()
            .unwrap_or_else(|| json!({}))
    }
    /// `config` after defaulting, or `{}`.
    pub fn config(&self) -> Value {
        self.value
            .get("config")
            .cloned()
            .unwrap_or_else(|| json!({}))
    }
}

/// Why [`prepare`] refused an instance: its errors, and the warnings found before them
/// (unknown fields dropped under `unknownFields: Warn`), which often explain the errors (a
/// dropped `emial` is why `email` is missing) and so must not be lost with the instance.
#[derive(Debug)]
pub struct Rejected {
    pub errors: Vec<Problem>,
    pub warnings: Vec<Problem>,
}

impl From<Vec<Problem>> for Rejected {
    fn from(errors: Vec<Problem>) -> Self {
        Self {
            errors,
            warnings: Vec::new(),
        }
    }
}

/// Prune, default and validate one instance value of the service `def`, with its schema from
/// `schemas`. `path` is where the instance sits in its source object (`spec`,
/// `spec.services.cert-manager`) and prefixes every problem.
///
/// The order is the apiserver's (see [`admit`]): unknown fields are pruned (and reported as
/// `unknown` says), then defaults are applied (`status`, and `config` the kubara way), then the
/// result is validated.
pub fn prepare(
    schemas: &Schemas,
    def: &ServiceDefinition,
    raw: &Value,
    path: &FieldPath,
    unknown: UnknownFields,
) -> Result<Instance, Rejected> {
    let compiled = schemas.get(def);
    let schema = compiled.as_ref().as_ref().map_err(|e| {
        Rejected::from(vec![Problem::new(
            path,
            format!("service \"{}\" has an unusable schema: {e}", def.id),
        )])
    })?;
    let value = match raw {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        other => {
            return Err(Rejected::from(vec![Problem::new(
                path,
                format!("must be an object, not {}", crate::strict::type_name(other)),
            )]));
        }
    };
    let target = Target {
        structural: &schema.structural,
        validate: &|v| validate_instance(schema, def, v),
        resource_root: false,
    };
    let (value, warnings) = admit(&target, value, path, unknown, |value| {
        default_instance(def, value);
    })?;
    let status = value
        .get("status")
        .and_then(Value::as_str)
        .and_then(Status::parse)
        .unwrap_or(def.status);
    let mut warnings = warnings;
    warnings.extend(super::deprecation::warnings(
        def,
        raw,
        path,
        status == Status::Enabled,
    ));
    Ok(Instance {
        status,
        value,
        warnings,
    })
}

/// Every validation error of a defaulted service instance: its instance schema, then its
/// config schema's CEL rules on `config`, as the apiserver runs rules after its schema
/// validation (issue 11).
fn validate_instance(
    schema: &InstanceSchema,
    def: &ServiceDefinition,
    instance: &Value,
) -> Vec<FieldError> {
    let mut errors = schema.validate(instance);
    if let (Some(config_schema), Some(config)) = (&def.config_schema, instance.get("config"))
        && config_schema.has_cel_rules()
    {
        let blocked = !errors.is_empty() && schema.has_blocking_error(instance);
        let config_path = FieldPath::root().key("config");
        let rules = config_schema.validate_rules(config, blocked);
        errors.extend(rules.into_iter().map(|e| FieldError {
            path: config_path.join(&e.path),
            ..e
        }));
    }
    errors
}

/// The defaulting step of a service instance: `status` from the definition when missing
/// (kubara: also when empty), and `config` defaulted the kubara way (`applySchemaDefaults`).
fn default_instance(def: &ServiceDefinition, value: &mut Map<String, Value>) {
    let missing_status = matches!(value.get("status"), None | Some(Value::Null))
        || value.get("status") == Some(&json!(""));
    if missing_status {
        value.insert("status".into(), json!(def.status.as_str()));
    }
    let Some(config_schema) = &def.config_schema else {
        if value.get("config") == Some(&Value::Null) {
            value.shift_remove("config");
        }
        return;
    };
    // kubara drops a config that defaults to `{}`; when an enabled service's schema requires
    // keys that have no default, keep `{}` so validation names them instead of a template
    // failing later (or rendering without them), whether `config` was left out, null or `{}`
    // (issue 22: a given `{}` skipped validation).
    // So are CEL rules: the apiserver runs a rule of the config's root on `{}` (issue 22).
    let requires = value.get("status") == Some(&json!("enabled"))
        && (config_schema.has_cel_rules()
            || config_schema
                .raw()
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| !r.is_empty()));
    let given = match value.get("config") {
        None | Some(Value::Null) => None,
        Some(config @ Value::Object(_)) => Some(config.clone()),
        // A config of the wrong type is left for validation to name.
        Some(_) => return,
    };
    match defaulting::default_config(given, config_schema.structural()) {
        Some(config) => {
            value.insert("config".into(), config);
        }
        None if requires => {
            value.insert("config".into(), json!({}));
        }
        None => {
            value.shift_remove("config");
        }
    }
}

/// The schema an object is admitted with (see [`admit`]).
struct Target<'a> {
    /// Finds unknown fields (pruning) and their "did you mean".
    structural: &'a Structural,
    /// Every validation error of the defaulted object.
    validate: &'a dyn Fn(&Value) -> Vec<FieldError>,
    /// A whole Kubernetes object: `apiVersion`, `kind` and `metadata` (as `ObjectMeta`) are
    /// the object's own, not the schema's (apiextensions-apiserver prunes a custom resource
    /// this way).
    resource_root: bool,
}

/// What the apiserver does to an object of a structural schema, in its order, shared by
/// service instances ([`prepare`]) and function configs ([`admit_object`]): unknown fields are
/// pruned and reported as `unknown` says (with a "did you mean"), `defaults` runs, and the
/// result is validated. Every problem is under `path`; errors come sorted, with the warnings
/// found before them (a dropped `emial` explains a missing `email`).
fn admit(
    target: &Target<'_>,
    value: Map<String, Value>,
    path: &FieldPath,
    unknown: UnknownFields,
    defaults: impl FnOnce(&mut Map<String, Value>),
) -> Result<(Map<String, Value>, Vec<Problem>), Rejected> {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let mut pruned = Value::Object(value);
    for removed in schema::prune(&mut pruned, Some(target.structural), target.resource_root) {
        let problem = unknown_field_in(path, target.structural, &removed, target.resource_root);
        match unknown {
            UnknownFields::Strict => problems.push(problem),
            UnknownFields::Warn => warnings.push(problem),
            UnknownFields::Prune => {}
        }
    }
    // Pruning never changes the type of the value it is given.
    let Value::Object(mut value) = pruned else {
        return Err(Rejected {
            errors: vec![Problem::new(path, "must be an object")],
            warnings,
        });
    };
    defaults(&mut value);
    let value = Value::Object(value);
    problems.extend(
        (target.validate)(&value)
            .iter()
            .map(|e| field_problem(path, e)),
    );
    if !problems.is_empty() {
        problems.sort();
        return Err(Rejected {
            errors: problems,
            warnings,
        });
    }
    match value {
        Value::Object(value) => Ok((value, warnings)),
        other => Err(Rejected {
            errors: vec![Problem::new(
                path,
                format!(
                    "must be an object, not {}",
                    crate::strict::type_name(&other)
                ),
            )],
            warnings,
        }),
    }
}

/// A whole object admitted by the schema of its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Admitted {
    /// The object after pruning and defaulting (what an apiserver would store).
    pub value: Value,
    /// Non-fatal findings (unknown fields under `unknownFields: Warn`).
    pub warnings: Vec<Problem>,
}

/// Admit a whole object (a KEP-2906 function config, `kind: Resize`) with its kind's
/// `openAPIV3Schema`, the schema of the whole object as in a CRD: the same steps as a service
/// instance ([`admit`]), with `apiVersion`, `kind` and `metadata` kept as a custom resource's
/// (metadata read as `ObjectMeta`), and the structural defaulting of a custom resource
/// (`PruneNonNullableNullsWithoutDefaults`, then `Default`). Problems carry paths from the
/// object's root (`spec.size`).
pub fn admit_object(
    schema: &ConfigSchema,
    object: &Value,
    unknown: UnknownFields,
) -> Result<Admitted, Rejected> {
    let Value::Object(map) = object else {
        return Err(Rejected::from(vec![Problem::new(
            "",
            format!(
                "must be an object, not {}",
                crate::strict::type_name(object)
            ),
        )]));
    };
    let target = Target {
        structural: schema.structural(),
        validate: &|v| schema.validate_object(v),
        resource_root: true,
    };
    let (value, warnings) = admit(&target, map.clone(), &FieldPath::root(), unknown, |value| {
        let mut object = Value::Object(std::mem::take(value));
        defaulting::prune_non_nullable_nulls_without_defaults(
            &mut object,
            Some(schema.structural()),
        );
        defaulting::default(&mut object, Some(schema.structural()));
        if let Value::Object(m) = object {
            *value = m;
        }
    })?;
    // The deprecated fields the object sets (before defaulting: a default never warns).
    let mut warnings = warnings;
    super::deprecation::fields(schema.raw(), object, &FieldPath::root(), &mut warnings);
    Ok(Admitted {
        value: Value::Object(value),
        warnings,
    })
}

/// kubectl's strict-validation message for a pruned field (a path [`schema::prune`] returned,
/// under `base`), with a "did you mean" among the fields declared next to it:
/// `unknown field "spec.config.clusterIssuer.emial" (did you mean "email"?)`.
pub fn unknown_field(base: &FieldPath, structural: &Structural, removed: &FieldPath) -> Problem {
    unknown_field_in(base, structural, removed, false)
}

/// [`unknown_field`]; `resource_root`: `structural` is the schema of a whole object, whose
/// `metadata` is `ObjectMeta` (see [`schema::prune`]).
fn unknown_field_in(
    base: &FieldPath,
    structural: &Structural,
    removed: &FieldPath,
    resource_root: bool,
) -> Problem {
    let full = base.join(removed);
    let removed = removed.segments();
    let mut parent = Some(structural);
    // The schema of the object holding the last ancestor: an embedded resource's `metadata`
    // has no schema of its own, its fields are ObjectMeta's.
    let mut holder = None;
    if let Some((_, ancestors)) = removed.split_last() {
        for seg in ancestors {
            holder = parent;
            parent = parent.and_then(|s| match seg {
                PathSegment::Key(k) | PathSegment::MapKey(k) => s.property(k).or_else(|| {
                    s.additional_properties
                        .as_ref()
                        .and_then(AdditionalProperties::schema)
                }),
                PathSegment::Index(_) => s.items.as_deref(),
            });
        }
    }
    let at_root = resource_root && removed.len() == 2;
    let in_object_meta = (at_root || holder.is_some_and(|h| h.x_embedded_resource))
        && matches!(removed.iter().rev().nth(1), Some(PathSegment::Key(k)) if k == "metadata");
    let hint = match (removed.last(), parent) {
        (Some(PathSegment::Key(k)), _) if in_object_meta => {
            crate::suggest::hint(k, schema::OBJECT_META_FIELDS.iter().copied())
        }
        (Some(PathSegment::Key(k)), Some(p)) => {
            crate::suggest::hint(k, p.properties.iter().map(|(name, _)| name.as_str()))
        }
        _ => String::new(),
    };
    Problem::new(&full, format!("unknown field \"{full}\"{hint}"))
}

/// Turn a schema field error into a problem under `base`.
pub fn field_problem(base: &FieldPath, error: &FieldError) -> Problem {
    let full = base.join(&error.path);
    let message = error.message_at(&full);
    Problem::new(full, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function kind's schema (the whole object, as in a CRD).
    fn resize() -> ConfigSchema {
        ConfigSchema::parse(&json!({
            "type": "object",
            "required": ["spec"],
            "properties": {
                "metadata": {"type": "object"},
                "spec": {
                    "type": "object",
                    "required": ["size"],
                    "properties": {
                        "size": {"type": "string", "enum": ["small", "large"]},
                        "replicas": {"type": "integer", "minimum": 1, "default": 2},
                        "selector": {"type": "object", "default": {},
                            "properties": {"kind": {"type": "string", "default": "Deployment"}}},
                    },
                },
            },
        }))
        .unwrap()
    }

    fn messages(problems: &[Problem]) -> Vec<String> {
        problems.iter().map(ToString::to_string).collect()
    }

    /// Issue 22: a whole object is validated from a nil path, as the apiserver validates a
    /// custom resource: a rule of its root and the rules not checked are at no field (`<nil>`),
    /// a composite error names its field in the message.
    #[test]
    fn issue16_a_whole_objects_errors_at_no_field_print_nil() {
        let schema = ConfigSchema::parse(&json!({
            "type": "object",
            "x-kubernetes-validations": [{"rule": "has(self.spec)", "message": "spec is required"}],
            "properties": {"spec": {"type": "object", "properties": {
                "size": {"type": "string", "enum": ["small", "large"]},
                "port": {"type": "integer", "anyOf": [{"minimum": 1024}, {"maximum": 80}]}}}},
        }))
        .unwrap();
        let rejected = |item: Value| {
            admit_object(&schema, &item, UnknownFields::Strict)
                .err()
                .map(|r| messages(&r.errors))
                .unwrap_or_default()
        };
        let meta = json!({"name": "r"});
        assert_eq!(
            rejected(json!({"apiVersion": "fn.acme.dev/v1", "kind": "Resize", "metadata": meta})),
            ["<nil>: Invalid value: spec is required"]
        );
        assert_eq!(
            rejected(
                json!({"apiVersion": "fn.acme.dev/v1", "kind": "Resize", "metadata": meta,
                "spec": {"size": "tiny", "port": 443}})
            ),
            // Sorted by the field each is about (the root's first).
            [
                "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
                r#"<nil>: Invalid value: "": "spec.port" must validate at least one schema (anyOf)"#,
                r#"spec.size: Unsupported value: "tiny": supported values: "small", "large""#,
            ]
        );
    }

    /// Issue 11: a function config is pruned, defaulted (nulls without defaults dropped,
    /// defaults cascading) and validated like a custom resource; apiVersion, kind and
    /// metadata are the object's own.
    #[test]
    fn issue11_admit_object_defaults_a_whole_object_like_a_custom_resource() {
        let item = json!({"apiVersion": "fn.acme.dev/v1", "kind": "Resize",
            "metadata": {"name": "r", "annotations": {"a": "b"}},
            "spec": {"size": "small", "replicas": null}});
        let admitted = admit_object(&resize(), &item, UnknownFields::Strict).unwrap();
        assert_eq!(
            admitted.value,
            json!({"apiVersion": "fn.acme.dev/v1", "kind": "Resize",
                "metadata": {"name": "r", "annotations": {"a": "b"}},
                "spec": {"size": "small", "replicas": 2, "selector": {"kind": "Deployment"}}})
        );
        assert!(admitted.warnings.is_empty());
        // Idempotent.
        assert_eq!(
            admit_object(&resize(), &admitted.value, UnknownFields::Strict)
                .unwrap()
                .value,
            admitted.value
        );
    }

    /// Issue 11: every error at its field path, sorted; a missing required field and a wrong
    /// type together.
    #[test]
    fn issue11_admit_object_reports_every_error_at_its_field_path() {
        let missing = json!({"apiVersion": "fn.acme.dev/v1", "kind": "Resize", "metadata": {"name": "r"}, "spec": {"replicas": "two"}});
        let rejected = admit_object(&resize(), &missing, UnknownFields::Strict).unwrap_err();
        assert_eq!(
            messages(&rejected.errors),
            [
                r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
                "spec.size: Required value",
            ]
        );
        let no_spec = json!({"apiVersion": "fn.acme.dev/v1", "kind": "Resize"});
        assert_eq!(
            messages(
                &admit_object(&resize(), &no_spec, UnknownFields::Strict)
                    .unwrap_err()
                    .errors
            ),
            ["spec: Required value"]
        );
        assert_eq!(
            messages(
                &admit_object(&resize(), &json!([1]), UnknownFields::Strict)
                    .unwrap_err()
                    .errors
            ),
            ["must be an object, not array"]
        );
    }

    /// Issue 11: unknown fields per `unknownFields`, with "did you mean" among the fields
    /// declared beside them, and ObjectMeta's fields for `metadata`.
    #[test]
    fn issue11_admit_object_handles_unknown_fields_as_configured() {
        let item = json!({"apiVersion": "fn.acme.dev/v1", "kind": "Resize",
            "metadata": {"name": "r", "lables": {}},
            "spec": {"size": "small", "replica": 3}, "status": {}});
        let strict = admit_object(&resize(), &item, UnknownFields::Strict).unwrap_err();
        assert_eq!(
            messages(&strict.errors),
            [
                r#"metadata.lables: unknown field "metadata.lables" (did you mean "labels"?)"#,
                r#"spec.replica: unknown field "spec.replica" (did you mean "replicas"?)"#,
                r#"status: unknown field "status""#,
            ]
        );
        let warn = admit_object(&resize(), &item, UnknownFields::Warn).unwrap();
        assert_eq!(warn.warnings.len(), 3);
        assert_eq!(
            warn.value["spec"],
            json!({"size": "small", "replicas": 2, "selector": {"kind": "Deployment"}})
        );
        assert_eq!(warn.value["metadata"], json!({"name": "r"}));
        assert!(warn.value.get("status").is_none());
        let prune = admit_object(&resize(), &item, UnknownFields::Prune).unwrap();
        assert!(prune.warnings.is_empty());
        assert_eq!(prune.value, warn.value);
        // A warning dropped under Warn is kept beside the errors it explains.
        let mut typo = item.clone();
        typo["spec"] = json!({"sise": "small"});
        let rejected = admit_object(&resize(), &typo, UnknownFields::Warn).unwrap_err();
        assert_eq!(messages(&rejected.errors), ["spec.size: Required value"]);
        assert!(messages(&rejected.warnings).contains(
            &r#"spec.sise: unknown field "spec.sise" (did you mean "size"?)"#.to_owned()
        ));
    }
}

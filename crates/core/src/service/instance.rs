//! Service instances: the `{status, storage, networking, config}` a user writes for a service,
//! taken through status defaulting, structural defaulting of `config` and validation against
//! the kubara instance schema, in that order (SPEC §5).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};

use super::definition::{ServiceDefinition, Status, instance_json_schema, instance_structural};
use crate::diagnostics::{FieldPath, PathSegment};
use crate::schema::defaulting;
use crate::schema::{self, AdditionalProperties, FieldError, Structural};
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
    /// Every validation error of an instance value.
    pub fn validate(&self, instance: &Value) -> Vec<FieldError> {
        schema::validate_with(&self.validator, &self.json_schema, instance)
    }

    /// Whether the errors of [`Self::validate`] include one the apiserver lets block CEL rules.
    pub fn has_blocking_error(&self, instance: &Value) -> bool {
        schema::has_blocking_error(&self.validator, instance)
    }
}

/// The compiled instance schemas of one catalog's services, each built on first use and kept:
/// whoever prepares instances (a run, `catalog lint`, the build script) makes one and lends it,
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
/// The order is the apiserver's: unknown fields are pruned (and reported as `unknown` says),
/// then defaults are applied, then the result is validated.
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
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let mut pruned = Value::Object(value);
    for removed in schema::prune(&mut pruned, Some(&schema.structural), false) {
        let problem = unknown_field(path, &schema.structural, &removed);
        match unknown {
            UnknownFields::Strict => problems.push(problem),
            UnknownFields::Warn => warnings.push(problem),
            UnknownFields::Prune => {}
        }
    }
    let Value::Object(mut value) = pruned else {
        return Err(Rejected {
            errors: vec![Problem::new(path, "must be an object")],
            warnings,
        });
    };
    // status from spec.status when missing (kubara: also when empty).
    let missing_status = matches!(value.get("status"), None | Some(Value::Null))
        || value.get("status") == Some(&json!(""));
    if missing_status {
        value.insert("status".into(), json!(def.status.as_str()));
    }
    if let Some(config_schema) = &def.config_schema {
        // kubara drops a config that defaults to `{}`; when an enabled service's schema
        // requires keys that have no default, keep `{}` so validation names them instead of a
        // template failing later (or rendering without them).
        let requires = value.get("status") == Some(&json!("enabled"))
            && config_schema
                .raw()
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| !r.is_empty());
        match value.get("config") {
            None | Some(Value::Null) => {
                match defaulting::default_config(None, config_schema.structural()) {
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
            Some(Value::Object(_)) => {
                let config = value.get("config").cloned();
                match defaulting::default_config(config, config_schema.structural()) {
                    Some(config) => {
                        value.insert("config".into(), config);
                    }
                    None => {
                        value.shift_remove("config");
                    }
                }
            }
            // A config of the wrong type is left for validation to name.
            Some(_) => {}
        }
    } else if value.get("config") == Some(&Value::Null) {
        value.shift_remove("config");
    }

    let instance = Value::Object(value);
    let errors = schema.validate(&instance);
    problems.extend(errors.iter().map(|e| field_problem(path, e)));
    // The config schema's CEL rules (issue 11), on the config after the OpenAPI validation of
    // the whole instance, as the apiserver runs them after its schema validation.
    if let (Some(config_schema), Some(config)) = (&def.config_schema, instance.get("config"))
        && config_schema.has_cel_rules()
    {
        let blocked = !errors.is_empty() && schema.has_blocking_error(&instance);
        let config_path = FieldPath::root().key("config");
        problems.extend(
            config_schema
                .validate_rules(config, blocked)
                .into_iter()
                .map(|e| {
                    field_problem(
                        path,
                        &FieldError {
                            path: config_path.join(&e.path),
                            message: e.message,
                        },
                    )
                }),
        );
    }
    if !problems.is_empty() {
        problems.sort();
        return Err(Rejected {
            errors: problems,
            warnings,
        });
    }
    let status = instance
        .get("status")
        .and_then(Value::as_str)
        .and_then(Status::parse)
        .unwrap_or(def.status);
    match instance {
        Value::Object(value) => Ok(Instance {
            status,
            value,
            warnings,
        }),
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

/// kubectl's strict-validation message for a pruned field (a path [`schema::prune`] returned,
/// under `base`), with a "did you mean" among the fields declared next to it:
/// `unknown field "spec.config.clusterIssuer.emial" (did you mean "email"?)`.
pub fn unknown_field(base: &FieldPath, structural: &Structural, removed: &FieldPath) -> Problem {
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
                PathSegment::Key(k) => s.property(k).or_else(|| {
                    s.additional_properties
                        .as_ref()
                        .and_then(AdditionalProperties::schema)
                }),
                PathSegment::Index(_) => s.items.as_deref(),
            });
        }
    }
    let in_object_meta = holder.is_some_and(|h| h.x_embedded_resource)
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
    Problem::new(base.join(&error.path), error.message.clone())
}

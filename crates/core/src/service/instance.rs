//! Service instances: the `{status, storage, networking, config}` a user writes for a service,
//! taken through status defaulting, structural defaulting of `config` and validation against
//! the kubara instance schema, in that order (SPEC §5).

use serde_json::{Map, Value, json};

use super::definition::{ServiceDefinition, Status};
use crate::catalog::Service;
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
}

impl Service {
    /// The compiled instance schema (built once).
    pub fn instance_schema(&self) -> Result<&InstanceSchema, schema::CompileError> {
        self.instance_schema
            .get_or_init(|| {
                let json_schema = instance_json_schema(&self.definition);
                let validator = schema::compile(&json_schema)?;
                Ok(InstanceSchema {
                    json_schema,
                    structural: instance_structural(&self.definition),
                    validator,
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// The JSON Schema of one service instance, as kubara generates it (ADR-0002 §"schema"), with
/// the config schema properly converted from CRD dialect.
pub fn instance_json_schema(def: &ServiceDefinition) -> Value {
    let mut properties = Map::new();
    properties.insert(
        "status".into(),
        json!({
            "type": "string",
            "title": "Service Status",
            "description": "The desired status of the service.",
            "enum": ["enabled", "disabled"],
            "default": def.status.as_str(),
        }),
    );
    properties.insert(
        "storage".into(),
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"className": {
                "type": "string",
                "title": "Storage Class Name",
                "description": "Optional storage class name override for persistent volumes.",
                "minLength": 1,
            }},
        }),
    );
    properties.insert(
        "networking".into(),
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"annotations": {
                "type": "object",
                "title": "Ingress Annotations",
                "description": "Optional ingress annotation overrides for this service.",
                "additionalProperties": {"type": "string"},
            }},
        }),
    );
    if let Some(config) = &def.config_schema {
        let mut config_schema = config.json_schema().clone();
        if let Value::Object(map) = &mut config_schema {
            map.entry("title")
                .or_insert_with(|| json!("Service Config"));
        }
        properties.insert("config".into(), config_schema);
    }
    json!({
        "type": "object",
        "title": def.id,
        "additionalProperties": false,
        "required": ["status"],
        "properties": properties,
    })
}

/// The structural schema matching [`instance_json_schema`].
fn instance_structural(def: &ServiceDefinition) -> Structural {
    let typed = |t: &str| Structural {
        type_: t.to_owned(),
        ..Structural::default()
    };
    let object = |properties: Vec<(String, Structural)>| Structural {
        properties,
        ..typed("object")
    };
    let mut properties = vec![
        ("status".to_owned(), typed("string")),
        (
            "storage".to_owned(),
            object(vec![("className".to_owned(), typed("string"))]),
        ),
        (
            "networking".to_owned(),
            object(vec![(
                "annotations".to_owned(),
                Structural {
                    additional_properties: Some(AdditionalProperties::Schema(Box::new(typed(
                        "string",
                    )))),
                    ..typed("object")
                },
            )]),
        ),
    ];
    if let Some(config) = &def.config_schema {
        properties.push(("config".to_owned(), config.structural().clone()));
    }
    object(properties)
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

/// Prune, default and validate one instance value of `service`. `path` is where the instance
/// sits in its source object (`spec`, `spec.services.cert-manager`) and prefixes every problem.
///
/// The order is the apiserver's: unknown fields are pruned (and reported as `unknown` says),
/// then defaults are applied, then the result is validated.
pub fn prepare(
    service: &Service,
    raw: &Value,
    path: &FieldPath,
    unknown: UnknownFields,
) -> Result<Instance, Rejected> {
    let def = &service.definition;
    let schema = service.instance_schema().map_err(|e| {
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
    problems.extend(
        schema
            .validate(&instance)
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

//! `ServiceDefinition` documents (kubara ADR-0002), read strictly.
//!
//! The checks and their messages follow kubara's `ServiceDefinition.Validate()` so that users of
//! kubara see the same words. Unlike kubara we also reject unknown fields (a typo such as
//! `chartpath` is named, not turned into "missing spec.chartPath") and check `configSchema`
//! when the catalog loads instead of at first use.
//!
//! A definition also implies the schema of its instances ([`instance_json_schema`],
//! [`instance_structural`]): data, which the catalog's editor schemas show and
//! `instance::Schemas` compiles.

use serde_json::{Map, Value, json};

use crate::diagnostics::FieldPath;
use crate::gvk::{self, Gvk};
use crate::schema::{AdditionalProperties, ConfigSchema, Structural};
use crate::strict::{Problem, Reader};

/// The API version of kubara documents.
pub const KUBARA_API_VERSION: &str = "kubara.io/v1alpha1";
/// The group single service objects live in unless a definition projects them elsewhere.
pub const SERVICES_GROUP: &str = "services.krm-catalog.dev";
/// The version single service objects use by default.
pub const SERVICES_VERSION: &str = "v1alpha1";

/// Whether a service is deployed when the user says nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Rendered.
    Enabled,
    /// Expands to nothing.
    Disabled,
}

impl Status {
    /// Parse the kubara spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "enabled" => Some(Self::Enabled),
            "disabled" => Some(Self::Disabled),
            _ => None,
        }
    }

    /// The kubara spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enabled => "enabled",
            Self::Disabled => "disabled",
        }
    }
}

/// One service of a catalog.
#[derive(Debug, Clone)]
pub struct ServiceDefinition {
    /// `metadata.name`: the service ID users write in a `ServiceSet`.
    pub id: String,
    /// `metadata.labels`.
    pub labels: Map<String, Value>,
    /// `metadata.annotations` (string values), exposed to templates.
    pub annotations: Map<String, Value>,
    /// `spec.chartPath`: where the per-service templates live under `charts/`.
    pub chart_path: String,
    /// `spec.status`: the default status.
    pub status: Status,
    /// `spec.clusterTypes`; empty means every cluster type.
    pub cluster_types: Vec<String>,
    /// `spec.configSchema`, checked.
    pub config_schema: Option<ConfigSchema>,
    /// The kind single service objects use (projection extensions applied).
    pub gvk: Gvk,
    /// `spec.templates`: inline templates, file name → text.
    pub templates: Vec<(String, String)>,
    /// `spec.dependsOn`: the IDs of the services this one needs (SPEC §6.5); checked against
    /// the merged catalog by `catalog::depends`.
    pub depends_on: Vec<String>,
    /// Non-fatal findings (e.g. schema warnings), with paths relative to the document.
    pub warnings: Vec<Problem>,
    /// `spec.deprecated` (with `spec.deprecationWarning`, KEP-5975 and CRD versions): the
    /// warning every use of the service gets.
    pub deprecation: Option<String>,
    /// `spec.examples`: configs that must validate and render (`catalog lint` checks them).
    pub examples: Vec<Example>,
    /// Whether its config schema marks any field deprecated (so instances of the many
    /// services that mark none are not walked for it).
    pub deprecated_fields: bool,
    /// `spec.patches`: the catalog's own patches on the service's output, applied before the
    /// user's (SPEC §6.6).
    pub patches: Vec<crate::patch::Patch>,
}

/// One entry of `spec.examples`.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// `name`, if given (lint names the example by it, else by its index).
    pub name: Option<String>,
    /// `config`: the service's config, as a user writes it.
    pub config: Value,
}

/// The most `spec.examples` a definition may carry (each is rendered by `catalog lint`).
pub const MAX_EXAMPLES: usize = 64;

impl ServiceDefinition {
    /// Whether the service applies to a cluster type (no cluster type: every service applies).
    pub fn applies_to(&self, cluster_type: Option<&str>) -> bool {
        match cluster_type {
            None => true,
            Some(t) => self.cluster_types.is_empty() || self.cluster_types.iter().any(|c| c == t),
        }
    }
}

/// The values under a CRD-style schema that a user must choose: required keys without a
/// `default`, followed into required objects without a default of their own. Each is a path of
/// keys relative to `schema`; an empty list when defaults cover everything.
pub fn must_choose(schema: &Value) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        .unwrap_or_default();
    for key in required {
        let sub = schema
            .get("properties")
            .and_then(|p| p.get(key))
            .unwrap_or(&Value::Null);
        if sub.get("default").is_some() {
            continue;
        }
        let inner = must_choose(sub);
        if inner.is_empty() {
            out.push(vec![key.to_owned()]);
        } else {
            out.extend(inner.into_iter().map(|mut path| {
                path.insert(0, key.to_owned());
                path
            }));
        }
    }
    out
}

/// The subschema at a path of property keys.
pub fn subschema<'a>(schema: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(schema, |s, key| {
        s.get("properties").and_then(|p| p.get(key))
    })
}

/// A value for `schema` made of its `example`s: the example itself, else (for an object) every
/// value a user must choose, from their examples. None when an example is missing. Used to
/// render catalogs whose services have values without defaults (the built-in catalog's test, lint).
pub fn example_value(schema: &Value) -> Option<Value> {
    if let Some(example) = schema.get("example") {
        return Some(example.clone());
    }
    if must_choose(schema).is_empty() {
        return None;
    }
    fill_chosen(schema, example_value)
}

/// An object holding, at every value a user must choose under `schema` ([`must_choose`]), the
/// value `leaf` makes from its subschema; `None` when `leaf` makes none for one of them.
pub fn fill_chosen(schema: &Value, mut leaf: impl FnMut(&Value) -> Option<Value>) -> Option<Value> {
    let mut object = Map::new();
    for path in must_choose(schema) {
        let value = leaf(subschema(schema, &path)?)?;
        let (last, parents) = path.split_last()?;
        let mut at = &mut object;
        for key in parents {
            let entry = at
                .entry(key.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            at = entry.as_object_mut()?;
        }
        at.insert(last.clone(), value);
    }
    Some(Value::Object(object))
}

/// Whether a document is a kubara `ServiceDefinition` (by apiVersion group and kind).
pub fn is_service_definition(doc: &Value) -> bool {
    doc.get("kind").and_then(Value::as_str) == Some("ServiceDefinition")
        && doc
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with("kubara.io/"))
}

fn is_rfc1123_label_starting_with_letter(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty() && b.len() <= 63 && b[0].is_ascii_lowercase() && gvk::is_dns_label(name)
}

/// Why a path is not a relative path inside its root.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelativePathError {
    /// The path is empty.
    #[error("must not be empty")]
    Empty,
    /// Absolute, or with a backslash or a colon.
    #[error("\"{0}\" must be a relative slash-separated path")]
    NotRelative(String),
    /// A `..`, `.` or empty segment.
    #[error("\"{0}\" must stay inside the catalog root (no \"..\", \".\" or empty segments)")]
    Escapes(String),
}

/// Check that a relative path stays inside its root: no absolute path, no `..`, no backslash.
///
/// # Errors
/// What is wrong with the path.
pub fn check_relative_path(path: &str) -> Result<(), RelativePathError> {
    if path.is_empty() {
        return Err(RelativePathError::Empty);
    }
    if path.starts_with('/') || path.contains('\\') || path.contains(':') {
        return Err(RelativePathError::NotRelative(path.to_owned()));
    }
    if path
        .split('/')
        .any(|seg| seg == ".." || seg.is_empty() || seg == ".")
    {
        return Err(RelativePathError::Escapes(path.to_owned()));
    }
    Ok(())
}

/// Read and check a `ServiceDefinition` document. Returns every problem found.
pub fn parse(doc: &Value) -> Result<ServiceDefinition, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();

    // kubara's checks, in kubara's order and words.
    let api_version = doc
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_owned();
    if api_version.is_empty() {
        problems.push(Problem::new("apiVersion", "missing apiVersion"));
    } else if api_version != KUBARA_API_VERSION {
        problems.push(Problem::new(
            "apiVersion",
            format!("apiVersion must be \"{KUBARA_API_VERSION}\""),
        ));
    }
    if doc.get("kind").and_then(Value::as_str).map(str::trim) != Some("ServiceDefinition") {
        problems.push(Problem::new("kind", "kind must be ServiceDefinition"));
    }

    let mut top = Reader::new(doc, "", &mut problems);
    top.deny_unknown(&["apiVersion", "kind", "metadata", "spec"]);
    let metadata = doc.get("metadata").cloned().unwrap_or(Value::Null);
    let spec = doc.get("spec").cloned().unwrap_or(Value::Null);

    let mut meta = Reader::new(&metadata, "metadata", &mut problems);
    meta.deny_unknown(&["name", "labels", "annotations"]);
    let id = meta.string("name").unwrap_or_default();
    let labels = meta.string_map("labels").unwrap_or_default();
    let annotations = meta.string_map("annotations").unwrap_or_default();
    if id.trim().is_empty() {
        problems.push(Problem::new("metadata.name", "missing metadata.name"));
    } else if !is_rfc1123_label_starting_with_letter(&id) {
        problems.push(Problem::new(
            "metadata.name",
            format!(
                "metadata.name \"{id}\" must be an rfc 1123 label that starts with a letter \
                 (lower case letters, digits and '-', at most 63 characters)"
            ),
        ));
    }

    let mut s = Reader::new(&spec, "spec", &mut problems);
    s.deny_unknown(&[
        "chartPath",
        "status",
        "clusterTypes",
        "configSchema",
        "group",
        "version",
        "names",
        "templates",
        "deprecated",
        "deprecationWarning",
        "examples",
        "dependsOn",
        "patches",
    ]);
    let chart_path = s.string("chartPath").unwrap_or_default();
    let status_text = s.string("status");
    let cluster_types = s.strings("clusterTypes").unwrap_or_default();
    let group = s.string("group");
    let version = s.string("version");
    let names = s.get("names").cloned();
    let templates_value = s.object("templates").cloned();
    let schema_value = s.get("configSchema").cloned();
    let deprecated = s.boolean("deprecated").unwrap_or(false);
    let deprecation_warning = s.string("deprecationWarning");
    let examples_value = s.get("examples").cloned();
    let depends_on = s.strings("dependsOn").unwrap_or_default();
    let patches_value = s.get("patches").cloned().unwrap_or(Value::Null);

    if chart_path.trim().is_empty() {
        problems.push(Problem::new("spec.chartPath", "missing spec.chartPath"));
    } else if let Err(e) = check_relative_path(chart_path.trim()) {
        problems.push(Problem::new("spec.chartPath", e.to_string()));
    }
    let status = status_text.as_deref().and_then(Status::parse);
    if status.is_none() {
        problems.push(Problem::new(
            "spec.status",
            "spec.status must be either \"enabled\" or \"disabled\"",
        ));
    }
    for (i, t) in cluster_types.iter().enumerate() {
        if t.trim().is_empty() {
            problems.push(Problem::new(
                FieldPath::parse("spec.clusterTypes").index(i),
                "must not be empty",
            ));
        }
    }

    let mut kind = gvk::pascal_case(&id);
    if let Some(names) = &names {
        let mut n = Reader::new(names, "spec.names", &mut problems);
        n.deny_unknown(&["kind"]);
        if let Some(k) = n.string("kind") {
            kind = k;
        }
    }
    let pascal = kind.starts_with(|c: char| c.is_ascii_uppercase())
        && kind.chars().all(|c| c.is_ascii_alphanumeric());
    if !kind.is_empty() && !pascal {
        problems.push(Problem::new(
            "spec.names.kind",
            format!("kind \"{kind}\" must be PascalCase letters and digits"),
        ));
    }
    let group = group.unwrap_or_else(|| SERVICES_GROUP.to_owned());
    if !gvk::is_dns_subdomain(&group) {
        problems.push(Problem::new(
            "spec.group",
            format!("group \"{group}\" must be a DNS subdomain"),
        ));
    }
    let version = version.unwrap_or_else(|| SERVICES_VERSION.to_owned());
    if !gvk::is_dns_label(&version) || !version.starts_with(|c: char| c.is_ascii_lowercase()) {
        problems.push(Problem::new(
            "spec.version",
            format!("version \"{version}\" must be a DNS label such as v1alpha1"),
        ));
    }

    let mut templates = Vec::new();
    if let Some(map) = templates_value {
        for (name, text) in map {
            let path = FieldPath::parse("spec.templates").key(&name);
            if let Err(e) = check_relative_path(&name) {
                problems.push(Problem::new(path, e.to_string()));
                continue;
            }
            match text {
                Value::String(text) => templates.push((name, text)),
                other => problems.push(Problem::new(
                    path,
                    format!(
                        "must be the template text (a string), not {}",
                        crate::strict::type_name(&other)
                    ),
                )),
            }
        }
    }

    let deprecated_fields = schema_value.as_ref().is_some_and(marks_deprecated);
    check_depends_on(&id, &depends_on, &mut problems);

    let config_schema = match schema_value {
        None => None,
        Some(raw) => match ConfigSchema::parse(&raw) {
            Ok(schema) => {
                for w in schema.warnings() {
                    warnings.push(Problem::new(schema_path(&w.path), w.message.clone()));
                }
                Some(schema)
            }
            Err(schema_problems) => {
                for p in schema_problems {
                    problems.push(Problem::new(schema_path(&p.path), p.message));
                }
                None
            }
        },
    };

    let deprecation = deprecation_of(&id, deprecated, deprecation_warning, &mut problems);
    let examples = examples_value.map_or_else(Vec::new, |v| parse_examples(&v, &mut problems));
    let patches = crate::patch::parse_list(&patches_value, &FieldPath::parse("spec.patches"))
        .unwrap_or_else(|p| {
            problems.extend(p);
            Vec::new()
        });

    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(ServiceDefinition {
        gvk: Gvk::new(group, version, kind),
        id,
        labels,
        annotations,
        chart_path: chart_path.trim().to_owned(),
        status: status.unwrap_or(Status::Disabled),
        cluster_types,
        config_schema,
        templates,
        depends_on,
        warnings,
        deprecation,
        examples,
        deprecated_fields,
        patches,
    })
}

/// The warning of a deprecated service: its `deprecationWarning`, or the apiserver's default
/// for a deprecated CRD version ("… is deprecated"). A warning without `deprecated: true` is
/// refused, as apiextensions refuses `deprecationWarning` on a version that is not deprecated.
fn deprecation_of(
    id: &str,
    deprecated: bool,
    warning: Option<String>,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    match (deprecated, warning) {
        (false, None) => None,
        (false, Some(_)) => {
            problems.push(Problem::new(
                "spec.deprecationWarning",
                "may only be set when spec.deprecated is true",
            ));
            None
        }
        (true, Some(w)) if w.trim().is_empty() || w.len() > 256 => {
            problems.push(Problem::new(
                "spec.deprecationWarning",
                "must be between 1 and 256 characters (as a CRD version's deprecationWarning)",
            ));
            None
        }
        (true, Some(w)) => Some(format!("service \"{id}\" is deprecated: {w}")),
        (true, None) => Some(format!("service \"{id}\" is deprecated")),
    }
}

/// `spec.examples`: a list of `{name?, config}`, names unique.
fn parse_examples(value: &Value, problems: &mut Vec<Problem>) -> Vec<Example> {
    let Value::Array(list) = value else {
        problems.push(Problem::new(
            "spec.examples",
            format!(
                "must be a list of {{name, config}}, not {}",
                crate::strict::type_name(value)
            ),
        ));
        return Vec::new();
    };
    if list.len() > MAX_EXAMPLES {
        problems.push(Problem::new(
            "spec.examples",
            format!(
                "{} examples: at most {MAX_EXAMPLES} (each is rendered by catalog lint)",
                list.len()
            ),
        ));
        return Vec::new();
    }
    let mut examples: Vec<Example> = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let path = FieldPath::parse("spec.examples").index(i);
        let mut r = Reader::new(entry, &path, problems);
        r.deny_unknown(&["name", "config"]);
        let name = r.string("name");
        let Some(config) = entry.get("config").cloned() else {
            problems.push(Problem::new(
                path.key("config"),
                "missing config (the service's config, `{}` for its defaults)",
            ));
            continue;
        };
        if !matches!(config, Value::Object(_)) {
            problems.push(Problem::new(
                path.key("config"),
                format!(
                    "must be the service's config (an object), not {}",
                    crate::strict::type_name(&config)
                ),
            ));
            continue;
        }
        if let Some(n) = &name
            && examples.iter().any(|e| e.name.as_ref() == Some(n))
        {
            problems.push(Problem::new(
                path.key("name"),
                format!("duplicate example name \"{n}\""),
            ));
            continue;
        }
        examples.push(Example { name, config });
    }
    examples
}

/// The most entries `spec.dependsOn` may list: a service that needs more is not one service.
pub const MAX_DEPENDS_ON: usize = 64;

/// `spec.dependsOn` on its own: service IDs, each once, not the service itself, bounded.
/// Whether each names a service of the merged catalog is `catalog::depends`'s check.
fn check_depends_on(id: &str, depends_on: &[String], problems: &mut Vec<Problem>) {
    let field = FieldPath::parse("spec.dependsOn");
    if depends_on.len() > MAX_DEPENDS_ON {
        problems.push(Problem::new(
            field.clone(),
            format!(
                "Too many: {} entries, at most {MAX_DEPENDS_ON} are allowed",
                depends_on.len()
            ),
        ));
        return;
    }
    for (i, dep) in depends_on.iter().enumerate() {
        let path = field.index(i);
        if !is_rfc1123_label_starting_with_letter(dep) {
            problems.push(Problem::new(
                path,
                format!(
                    "\"{dep}\" is not a service ID (an rfc 1123 label that starts with a letter)"
                ),
            ));
        } else if dep == id {
            problems.push(Problem::new(
                path,
                format!(
                    "service \"{id}\" cannot depend on itself; remove \"{dep}\" from spec.dependsOn"
                ),
            ));
        } else if depends_on[..i].contains(dep) {
            problems.push(Problem::new(
                path,
                format!("\"{dep}\" is listed twice; list each service once"),
            ));
        }
    }
}

/// Whether a schema marks any field deprecated, anywhere in it.
fn marks_deprecated(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            map.contains_key(crate::schema::DEPRECATED_KEYWORD)
                || map.values().any(marks_deprecated)
        }
        Value::Array(list) => list.iter().any(marks_deprecated),
        _ => false,
    }
}

fn schema_path(path: &FieldPath) -> FieldPath {
    FieldPath::parse("spec.configSchema").join(path)
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
    properties.insert("patches".into(), patches_json_schema());
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
pub fn instance_structural(def: &ServiceDefinition) -> Structural {
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
    let strings = |names: &[&str]| {
        names
            .iter()
            .map(|n| ((*n).to_owned(), typed("string")))
            .collect()
    };
    let booleans = |names: &[&str]| {
        names
            .iter()
            .map(|n| ((*n).to_owned(), typed("boolean")))
            .collect()
    };
    properties.push((
        "patches".to_owned(),
        Structural {
            // Unknown fields are kept for `patch::parse_list`, which names them with a hint
            // (and refuses `path` saying why) beside every other problem of the patch.
            items: Some(Box::new(Structural {
                x_preserve_unknown_fields: true,
                ..object(vec![
                    (
                        "target".to_owned(),
                        Structural {
                            x_preserve_unknown_fields: true,
                            ..object(strings(&crate::patch::TARGET_FIELDS))
                        },
                    ),
                    ("patch".to_owned(), typed("string")),
                    ("path".to_owned(), typed("string")),
                    (
                        "options".to_owned(),
                        Structural {
                            x_preserve_unknown_fields: true,
                            ..object(booleans(&["allowNameChange", "allowKindChange"]))
                        },
                    ),
                ])
            })),
            ..typed("array")
        },
    ));
    if let Some(config) = &def.config_schema {
        properties.push(("config".to_owned(), config.structural().clone()));
    }
    object(properties)
}

/// The JSON Schema of `patches` (kustomize's `patches:` entries; `patch::parse_list` reads
/// them and names what is wrong, `path` included).
fn patches_json_schema() -> Value {
    let target: Map<String, Value> = crate::patch::TARGET_FIELDS
        .iter()
        .map(|f| ((*f).to_owned(), json!({"type": "string"})))
        .collect();
    json!({
        "type": "array",
        "title": "Patches",
        "description": "kustomize-style patches applied to this service's generated objects after templating (after the catalog's own): each has `patch` (a strategic-merge patch or a JSON 6902 list, as a string) and an optional `target` (group, version, kind, name, namespace as anchored regular expressions; labelSelector, annotationSelector). A patch that matches nothing is an error.",
        "items": {
            "type": "object",
            "properties": {
                "target": {
                    "type": "object",
                    "description": "Which generated objects the patch applies to; without it a strategic-merge patch names its object by apiVersion, kind and metadata.name.",
                    "properties": target,
                },
                "patch": {"type": "string", "description": "A strategic-merge patch (YAML map) or a JSON 6902 patch (list of operations)."},
                "path": {"type": "string", "description": "Not supported: patch files are not read; write the patch inline under `patch`."},
                "options": {
                    "type": "object",
                    "description": "kustomize's patch options: a strategic-merge patch keeps the object's name and kind unless these allow a change.",
                    "properties": {
                        "allowNameChange": {"type": "boolean", "description": "The patch's metadata.name renames the object."},
                        "allowKindChange": {"type": "boolean", "description": "The patch's kind changes the object's kind."},
                    },
                },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn must_choose_follows_required_objects_without_defaults() {
        let schema = json!({
            "type": "object",
            "required": ["clusterIssuer", "replicas"],
            "properties": {
                "replicas": {"type": "integer", "default": 1},
                "clusterIssuer": {
                    "type": "object",
                    "required": ["name", "email"],
                    "properties": {
                        "name": {"type": "string", "default": "x"},
                        "email": {"type": "string", "example": "a@example.com"},
                    },
                },
            },
        });
        assert_eq!(
            must_choose(&schema),
            vec![vec!["clusterIssuer".to_owned(), "email".to_owned()]]
        );
        assert_eq!(
            example_value(&schema),
            Some(json!({"clusterIssuer": {"email": "a@example.com"}}))
        );
        // A value to choose without an example cannot be filled in.
        let mut no_example = schema.clone();
        no_example["properties"]["clusterIssuer"]["properties"]["email"]
            .as_object_mut()
            .map(|m| m.remove("example"));
        assert_eq!(example_value(&no_example), None);
        // Defaults cover everything: nothing to choose.
        assert!(
            must_choose(&json!({"properties": {"a": {"default": 1}}, "required": ["a"]}))
                .is_empty()
        );
    }

    fn messages(doc: &Value) -> Vec<String> {
        parse(doc)
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|p| p.message)
            .collect()
    }

    #[test]
    fn kubara_messages() {
        let base = json!({"apiVersion": "kubara.io/v1alpha1", "kind": "ServiceDefinition",
            "metadata": {"name": "argocd"}, "spec": {"chartPath": "argo-cd", "status": "disabled"}});
        assert!(parse(&base).is_ok());
        let mut d = base.clone();
        d["apiVersion"] = json!("kubara.io/v2");
        assert_eq!(messages(&d), ["apiVersion must be \"kubara.io/v1alpha1\""]);
        d["apiVersion"] = json!(" ");
        assert_eq!(messages(&d), ["missing apiVersion"]);
        let mut d = base.clone();
        d["kind"] = json!("Service");
        assert_eq!(messages(&d), ["kind must be ServiceDefinition"]);
        let mut d = base.clone();
        d["metadata"]["name"] = json!("");
        assert_eq!(messages(&d), ["missing metadata.name"]);
        d["metadata"]["name"] = json!("9lives");
        assert!(messages(&d)[0].contains("rfc 1123"));
        let mut d = base.clone();
        d["spec"]["chartPath"] = json!("  ");
        assert_eq!(messages(&d), ["missing spec.chartPath"]);
        let mut d = base.clone();
        d["spec"]["status"] = json!("on");
        assert_eq!(
            messages(&d),
            ["spec.status must be either \"enabled\" or \"disabled\""]
        );
    }

    #[test]
    fn typos_are_named_not_silently_dropped() {
        let d = json!({"apiVersion": "kubara.io/v1alpha1", "kind": "ServiceDefinition",
            "metadata": {"name": "x"}, "spec": {"chartpath": "x", "status": "enabled"}});
        let m = messages(&d);
        assert!(
            m.contains(
                &"unknown field \"spec.chartpath\" (did you mean \"chartPath\"?)".to_owned()
            ),
            "{m:?}"
        );
        assert!(m.contains(&"missing spec.chartPath".to_owned()));
    }

    /// Issue 23: `spec.deprecated` + `deprecationWarning` (as a CRD version) and
    /// `spec.examples`, read strictly.
    #[test]
    fn issue23_deprecation_and_examples() {
        let base = json!({"apiVersion": "kubara.io/v1alpha1", "kind": "ServiceDefinition",
            "metadata": {"name": "old"}, "spec": {"chartPath": "old", "status": "enabled"}});
        let mut d = base.clone();
        d["spec"]["deprecated"] = json!(true);
        assert_eq!(
            parse(&d).unwrap().deprecation.as_deref(),
            Some("service \"old\" is deprecated")
        );
        d["spec"]["deprecationWarning"] = json!("use new");
        assert_eq!(
            parse(&d).unwrap().deprecation.as_deref(),
            Some("service \"old\" is deprecated: use new")
        );
        d["spec"]["deprecated"] = json!(false);
        assert_eq!(
            messages(&d),
            ["may only be set when spec.deprecated is true"]
        );
        let mut d = base.clone();
        d["spec"]["examples"] = json!([
            {"name": "a", "config": {"x": 1}},
            {"config": {}},
            {"name": "a", "config": {}},
            {"config": "x"},
            {"name": "b", "confg": {}},
        ]);
        let found: Vec<String> = parse(&d)
            .err()
            .unwrap_or_default()
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect();
        assert_eq!(
            found,
            [
                "spec.examples[2].name: duplicate example name \"a\"",
                "spec.examples[3].config: must be the service's config (an object), not string",
                "spec.examples[4].confg: unknown field \"spec.examples[4].confg\" (did you mean \"config\"?)",
                "spec.examples[4].config: missing config (the service's config, `{}` for its defaults)",
            ]
        );
        let mut d = base;
        d["spec"]["examples"] = json!([{"config": {"x": 1}}, {"name": "two", "config": {}}]);
        let examples = parse(&d).unwrap().examples;
        assert_eq!(examples.len(), 2);
        assert_eq!(examples[1].name.as_deref(), Some("two"));
    }

    #[test]
    fn issue23_depends_on_lists_other_services_once() {
        let with = |deps: Value| {
            json!({"apiVersion": "kubara.io/v1alpha1", "kind": "ServiceDefinition",
                "metadata": {"name": "app"}, "spec": {"chartPath": "app", "status": "enabled",
                "dependsOn": deps}})
        };
        let def = parse(&with(json!(["db", "cache"]))).expect("valid");
        assert_eq!(def.depends_on, ["db", "cache"]);
        assert_eq!(
            messages(&with(json!(["db", "app", "db", "Not_An_Id"]))),
            [
                "service \"app\" cannot depend on itself; remove \"app\" from spec.dependsOn",
                "\"db\" is listed twice; list each service once",
                "\"Not_An_Id\" is not a service ID (an rfc 1123 label that starts with a letter)",
            ]
        );
        let many: Vec<String> = (0..=MAX_DEPENDS_ON).map(|i| format!("s{i}")).collect();
        assert_eq!(
            messages(&with(json!(many))),
            ["Too many: 65 entries, at most 64 are allowed"]
        );
        let problems = parse(&with(json!("db"))).err().unwrap_or_default();
        assert_eq!(problems[0].path.to_string(), "spec.dependsOn");
    }

    #[test]
    fn chart_paths_stay_inside_the_root() {
        let d = json!({"apiVersion": "kubara.io/v1alpha1", "kind": "ServiceDefinition",
            "metadata": {"name": "x"}, "spec": {"chartPath": "../etc", "status": "enabled"}});
        assert!(messages(&d)[0].contains("inside the catalog root"));
    }

    #[test]
    fn projection_extensions() {
        let d = json!({"apiVersion": "kubara.io/v1alpha1", "kind": "ServiceDefinition",
            "metadata": {"name": "my-app"}, "spec": {"chartPath": "my-app", "status": "enabled",
            "group": "apps.example.com", "version": "v1", "names": {"kind": "App"}}});
        let def = parse(&d).unwrap();
        assert_eq!(def.gvk.to_string(), "apps.example.com/v1/App");
        let d = json!({"apiVersion": "kubara.io/v1alpha1", "kind": "ServiceDefinition",
            "metadata": {"name": "my-app"}, "spec": {"chartPath": "my-app", "status": "enabled"}});
        assert_eq!(
            parse(&d).unwrap().gvk.to_string(),
            "services.krm-catalog.dev/v1alpha1/MyApp"
        );
    }
}

//! JSON Schemas of the kinds a catalog defines, for editors (`schema`) and `explain`:
//! one per service object kind, the `ServiceSet`, our own function config, and every function
//! kind whose catalog gives its version a schema (KEP-2906 `versions[].schema.openAPIV3Schema`).

use serde_json::{Map, Value, json};

use super::{Catalog, Kind, Service};
use crate::gvk::Gvk;
use crate::schema::ConfigSchema;
use crate::service::definition::{SERVICES_GROUP, SERVICES_VERSION, instance_json_schema};

const DRAFT: &str = "http://json-schema.org/draft-07/schema#";

fn metadata_schema() -> Value {
    json!({
        "type": "object",
        "description": "Standard object metadata; `name` names the instance.",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "namespace": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    })
}

fn cluster_settings() -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("clusterType".into(), json!({"type": "string", "description": "Cluster type (hub or spoke, or another type a loaded catalog declares): services whose clusterTypes exclude it are left out unless listed with status: enabled."}));
    p.insert("cluster".into(), json!({"type": "object", "description": "Free-form cluster values exposed to templates as `cluster` (name, ingressClassName, ...)."}));
    p
}

/// Whether to describe the config with its raw CRD schema (defaults, descriptions) or the
/// converted validation schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Converted JSON Schema, for validation and editors.
    Validation,
    /// Raw CRD schema for the config part, for `explain` (keeps `default`).
    Explain,
}

fn instance_schema(service: &Service, flavor: Flavor) -> Value {
    let mut schema = instance_json_schema(&service.definition);
    if flavor == Flavor::Explain
        && let (Some(raw), Some(props)) = (
            service.definition.config_schema.as_ref(),
            schema.get_mut("properties").and_then(Value::as_object_mut),
        )
    {
        let mut raw = raw.raw().clone();
        if let Value::Object(m) = &mut raw {
            m.entry("description").or_insert_with(|| {
                json!(
                    "Service-specific configuration, defaulted and validated like a Kubernetes CRD."
                )
            });
        }
        props.insert("config".into(), raw);
    }
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut)
        && let Some(status) = props.get_mut("status").and_then(Value::as_object_mut)
    {
        status.insert(
            "description".into(),
            json!(format!(
                "The desired status of the service (default: {}).",
                service.definition.status.as_str()
            )),
        );
    }
    schema
}

/// Schema of one service object kind.
pub fn service_object(service: &Service, flavor: Flavor) -> Value {
    let def = &service.definition;
    let mut spec = instance_schema(service, flavor);
    if let Some(props) = spec.get_mut("properties").and_then(Value::as_object_mut) {
        props.extend(cluster_settings());
    }
    if let Some(m) = spec.as_object_mut() {
        m.shift_remove("required");
        m.insert(
            "description".into(),
            json!(format!("Settings of the {} service.", def.id)),
        );
    }
    json!({
        "$schema": DRAFT,
        "title": def.gvk.kind,
        "description": format!("One instance of the {} service ({}).", def.id, def.annotations.get("kubara.io/category").and_then(Value::as_str).unwrap_or("service")),
        "type": "object",
        "required": ["apiVersion", "kind", "metadata"],
        "properties": {
            "apiVersion": {"type": "string", "enum": [def.gvk.api_version()]},
            "kind": {"type": "string", "enum": [def.gvk.kind]},
            "metadata": metadata_schema(),
            "spec": spec,
        },
    })
}

/// What a function config's `metadata` is: an `ObjectMeta` (its other fields are allowed, as
/// the function admits them; nothing is required).
fn object_meta_schema() -> Value {
    json!({
        "type": "object",
        "description": "Standard object metadata (ObjectMeta).",
        "properties": {
            "name": {"type": "string"},
            "namespace": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    })
}

/// Schema of one version of a function kind (its config, `kind: Resize`) from the version's
/// `openAPIV3Schema`, the schema of the whole object as in a CRD: the converted JSON Schema
/// ([`Flavor::Validation`]) or the schema as written ([`Flavor::Explain`], which keeps
/// `default`s), with `apiVersion` and `kind` fixed to the kind's and `metadata` an
/// `ObjectMeta` where the schema says nothing more of them.
pub fn function_object(gvk: &Gvk, schema: &ConfigSchema, flavor: Flavor) -> Value {
    let mut root = match flavor {
        Flavor::Validation => schema.json_schema().clone(),
        Flavor::Explain => schema.raw().clone(),
    };
    let Value::Object(m) = &mut root else {
        return root;
    };
    let description = m
        .get("description")
        .cloned()
        .unwrap_or_else(|| json!(format!("The config of the function kind {gvk}.")));
    let mut out = Map::new();
    out.insert("$schema".into(), json!(DRAFT));
    out.insert("title".into(), json!(gvk.kind));
    out.insert("description".into(), description);
    for (k, v) in std::mem::take(m) {
        if !matches!(k.as_str(), "$schema" | "title" | "description") {
            out.insert(k, v);
        }
    }
    out.entry("type").or_insert_with(|| json!("object"));
    let props = out.entry("properties").or_insert_with(|| json!({}));
    if let Value::Object(props) = props {
        for (field, value) in [
            ("apiVersion", gvk.api_version()),
            ("kind", gvk.kind.clone()),
        ] {
            let node = props
                .entry(field)
                .or_insert_with(|| json!({"type": "string"}));
            if let Value::Object(node) = node {
                node.insert("enum".into(), json!([value]));
            }
        }
        props.entry("metadata").or_insert_with(object_meta_schema);
    }
    Value::Object(out)
}

/// Every function kind (and version) of the catalog that has a schema, sorted by
/// group/version/kind.
pub fn function_kinds(catalog: &Catalog) -> Vec<(&Gvk, &ConfigSchema)> {
    catalog
        .kinds()
        .into_iter()
        .filter_map(|(gvk, kind)| match kind {
            Kind::Function {
                schema: Some(schema),
                ..
            } => Some((gvk, schema.as_ref())),
            _ => None,
        })
        .collect()
}

/// Schema of a `ServiceSet` over every service of the catalog.
pub fn service_set(catalog: &Catalog, flavor: Flavor) -> Value {
    let mut services = Map::new();
    for s in catalog.services() {
        services.insert(s.definition.id.clone(), instance_schema(s, flavor));
    }
    let mut spec_props = cluster_settings();
    spec_props.insert(
        "services".into(),
        json!({
            "type": "object",
            "title": "Services",
            "description": "Configuration for deployed services, by service ID. Services left out get their defaults.",
            "additionalProperties": false,
            "properties": services,
        }),
    );
    json!({
        "$schema": DRAFT,
        "title": "ServiceSet",
        "description": "The services of one cluster (the kubara model): every catalog service that applies to the cluster type is materialised with its defaults; a service whose clusterTypes exclude it only when listed with status: enabled.",
        "type": "object",
        "required": ["apiVersion", "kind", "metadata"],
        "properties": {
            "apiVersion": {"type": "string", "enum": [format!("{SERVICES_GROUP}/{SERVICES_VERSION}")]},
            "kind": {"type": "string", "enum": ["ServiceSet"]},
            "metadata": metadata_schema(),
            "spec": {"type": "object", "additionalProperties": false, "properties": spec_props},
        },
    })
}

/// Every kind, dispatched on `kind` (for a single editor schema over many files).
pub fn all(catalog: &Catalog) -> Value {
    let mut definitions = Map::new();
    let mut branches = Vec::new();
    let mut add = |kind: String, api_version: String, schema: Value| {
        let mut schema = schema;
        if let Some(m) = schema.as_object_mut() {
            m.shift_remove("$schema");
        }
        let key = format!("{api_version}/{kind}");
        branches.push(json!({
            "if": {"properties": {"apiVersion": {"const": api_version}, "kind": {"const": kind}}, "required": ["apiVersion", "kind"]},
            "then": {"$ref": format!("#/definitions/{}", key.replace('/', "~1"))},
        }));
        definitions.insert(key, schema);
    };
    add(
        "ServiceSet".into(),
        format!("{SERVICES_GROUP}/{SERVICES_VERSION}"),
        service_set(catalog, Flavor::Validation),
    );
    for s in catalog.services() {
        add(
            s.definition.gvk.kind.clone(),
            s.definition.gvk.api_version(),
            service_object(s, Flavor::Validation),
        );
    }
    for (gvk, schema) in function_kinds(catalog) {
        add(
            gvk.kind.clone(),
            gvk.api_version(),
            function_object(gvk, schema, Flavor::Validation),
        );
    }
    add(
        crate::config::KIND.into(),
        crate::config::API_VERSION.into(),
        crate::config::json_schema(),
    );
    json!({
        "$schema": DRAFT,
        "title": "krm-catalog",
        "description": "Service objects, ServiceSets, ResolveCatalog configs and the configs of the catalogs' function kinds.",
        "type": "object",
        "allOf": branches,
        "definitions": definitions,
    })
}

/// Strip JSON-Schema-only keys so a schema reads as a structural `openAPIV3Schema` (the form
/// catalogs are checked against): no `$schema`/`title`, and no `additionalProperties: false`
/// next to `properties`, since structural schemas prune unknown fields instead (and the
/// function rejects them in its config anyway).
fn openapi(mut schema: Value) -> Value {
    fn structural(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if m.contains_key("properties")
                    && m.get("additionalProperties") == Some(&Value::Bool(false))
                {
                    m.shift_remove("additionalProperties");
                }
                m.values_mut().for_each(structural);
            }
            Value::Array(list) => list.iter_mut().for_each(structural),
            _ => {}
        }
    }
    if let Some(m) = schema.as_object_mut() {
        m.shift_remove("$schema");
        m.shift_remove("title");
    }
    structural(&mut schema);
    schema
}

/// The function's own KEP-2906 metadata: a `KRMFunctionCatalog` with entries for
/// `ResolveCatalog` and `ServiceSet` (the latter's schema from this catalog's services).
pub fn krm_function_catalog(catalog: &Catalog) -> Value {
    let version = env!("CARGO_PKG_VERSION");
    let image = format!("ghcr.io/krm-catalog/krm-catalog:{version}");
    let runtime = json!({
        "container": {"image": image},
        "exec": {"platforms": [
            {"bin": "krm-catalog", "os": "linux", "arch": "amd64",
             "uri": format!("https://github.com/krm-catalog/krm-catalog/releases/download/v{version}/krm-catalog-x86_64-unknown-linux-gnu")},
            {"bin": "krm-catalog", "os": "linux", "arch": "arm64",
             "uri": format!("https://github.com/krm-catalog/krm-catalog/releases/download/v{version}/krm-catalog-aarch64-unknown-linux-gnu")},
        ]},
    });
    let entry =
        |group: &str, kind: &str, description: &str, usage: &str, schema: Value, example: &str| {
            json!({
                "group": group,
                "names": {"kind": kind},
                "description": description,
                "publisher": "krm-catalog.dev",
                "versions": [{
                    "name": "v1alpha1",
                    "schema": {"openAPIV3Schema": openapi(schema)},
                    "idempotent": true,
                    "usage": usage,
                    "examples": [example],
                    "license": "Apache-2.0",
                    "runtime": runtime,
                }],
                "home": "https://github.com/krm-catalog/krm-catalog",
                "maintainers": ["krm-catalog maintainers"],
                "tags": ["generator", "transformer", "catalog", "kubara"],
            })
        };
    json!({
        "apiVersion": "config.kubernetes.io/v1alpha1",
        "kind": "KRMFunctionCatalog",
        "metadata": {"name": "krm-catalog", "annotations": {"config.kubernetes.io/local-config": "true"}},
        "spec": {"krmFunctions": [
            entry(
                crate::config::GROUP,
                crate::config::KIND,
                "Resolve kinds through catalogs and expand service objects and ServiceSets into manifests.",
                "Use as the function config of kpt fn eval/render or as a kustomize transformer; spec names extra catalogs and cluster settings.",
                crate::config::json_schema(),
                "functions/examples/kustomize-transformer/krm-catalog.yaml",
            ),
            entry(
                SERVICES_GROUP,
                "ServiceSet",
                "The services of one cluster: every catalog service that applies to the cluster type, defaulted and validated, rendered to manifests.",
                "List it under kustomize generators (with the function annotation) or keep it in a kpt package; settings of ResolveCatalog are allowed in its spec when it is the function config.",
                service_set(catalog, Flavor::Explain),
                "functions/examples/kustomize-generator/services.yaml",
            ),
        ]},
    })
}

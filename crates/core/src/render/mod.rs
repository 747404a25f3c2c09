//! Rendering services into manifests: a [`Renderer`] holds one catalog's template environments
//! for a run (one per bundle, built on first use) and renders a service's outputs with the
//! context [`context`] builds. The sandbox itself (limits, helpers, checks) is `crate::template`.

use std::sync::OnceLock;

use minijinja::Environment;
use minijinja::value::Serde;
use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, Service, TemplateRef};
use crate::service::Instance;
use crate::service::definition::Status;
use crate::template::{self, RenderError};

/// One object a template produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// The template (or static manifest) it came from.
    pub template: String,
    /// The object.
    pub object: Value,
}

/// Renders the services of one catalog. It is made by whoever renders (a run, a command, the
/// built-in catalog's test) and lives as long as they do, so each bundle's environment is compiled once
/// for all its services, and never for a bundle nothing renders from.
#[derive(Debug)]
pub struct Renderer<'c> {
    catalog: &'c Catalog,
    /// One template environment per bundle (by index): its standard pattern and its chart
    /// files. The templates are borrowed from the catalog, which outlives the renderer.
    environments: Vec<OnceLock<Environment<'c>>>,
    /// The `catalog` entry of the template context per bundle (by index), as every instance
    /// outside a `ServiceSet` sees it (each service with its own status): the same for all of
    /// them, so it is built and converted for the template engine once, not per instance.
    catalog_contexts: Vec<OnceLock<minijinja::Value>>,
}

impl<'c> Renderer<'c> {
    /// A renderer of `catalog`'s services; builds nothing yet.
    pub fn new(catalog: &'c Catalog) -> Self {
        Self {
            catalog,
            environments: (0..catalog.bundles.len())
                .map(|_| OnceLock::new())
                .collect(),
            catalog_contexts: (0..catalog.bundles.len())
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    /// Render every template of a service instance with its [`context`], in template path
    /// order. The same as `render(service, &context(..))`, with the catalog-wide part of the
    /// context built once per bundle.
    pub fn render_instance(
        &self,
        service: &Service,
        instance: &Instance,
        scope: &Scope<'_>,
    ) -> Result<Vec<Generated>, Vec<RenderError>> {
        let catalog_context = || {
            minijinja::Value::from(Serde(catalog_context(
                self.catalog,
                service,
                scope.statuses,
            )))
        };
        let catalog = match self.catalog_contexts.get(service.bundle) {
            Some(slot) if scope.statuses.is_empty() => slot.get_or_init(catalog_context).clone(),
            _ => catalog_context(),
        };
        // The same map `Serde(context)` would make, entry by entry, `catalog` last.
        let ctx = minijinja::Value::from_pairs(
            instance_context(service, instance, scope)
                .into_iter()
                .map(|(key, value)| (key, minijinja::Value::from(Serde(value))))
                .chain([("catalog".to_owned(), catalog)]),
        );
        self.render_with(service, &ctx)
    }

    /// The catalog it renders.
    pub fn catalog(&self) -> &'c Catalog {
        self.catalog
    }

    /// The template environment of a bundle's services: its standard pattern and its chart
    /// templates, built once per bundle on first use.
    fn environment(&self, bundle: usize) -> Option<&Environment<'c>> {
        let slot = self.environments.get(bundle)?;
        Some(slot.get_or_init(|| {
            let mut env = template::new_environment();
            for (name, text) in self.catalog.environment_templates(bundle) {
                // Every template compiled at load; a failure here cannot happen, and would
                // surface as "template not found" at render time anyway.
                let _ = env.add_template(name, text);
            }
            env
        }))
    }

    /// Render every template of a service with a context, in template path order.
    pub fn render(
        &self,
        service: &Service,
        context: &Value,
    ) -> Result<Vec<Generated>, Vec<RenderError>> {
        self.render_with(service, &minijinja::Value::from(Serde(context)))
    }

    /// [`Renderer::render`] with the context already converted for the template engine.
    fn render_with(
        &self,
        service: &Service,
        ctx: &minijinja::Value,
    ) -> Result<Vec<Generated>, Vec<RenderError>> {
        let Some(env) = self.environment(service.bundle) else {
            return Err(vec![RenderError {
                template: String::new(),
                line: None,
                message: "the catalog has no template environment (it was not merged)".to_owned(),
            }]);
        };
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for output in self.catalog.outputs_for(service) {
            match output {
                TemplateRef::Static(name, file) => {
                    out.extend(file.objects.iter().map(|o| Generated {
                        template: name.to_owned(),
                        object: o.clone(),
                    }));
                }
                TemplateRef::Template(name) => match template::render_one(env, name, ctx) {
                    Ok(objects) => out.extend(objects.into_iter().map(|object| Generated {
                        template: name.to_owned(),
                        object,
                    })),
                    Err(e) => errors.push(e),
                },
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }
}

/// Everything a template sees besides the catalog and service (SPEC §6.3).
#[derive(Debug, Clone)]
pub struct Scope<'a> {
    /// The input object (its metadata, apiVersion and kind).
    pub source: &'a Value,
    /// Namespace outputs of a one-object instance default to.
    pub instance_namespace: Option<&'a str>,
    /// The merged `cluster` values.
    pub cluster: &'a Value,
    /// Effective status of every service in this scope (a `ServiceSet`), by ID.
    pub statuses: &'a std::collections::BTreeMap<String, Status>,
}

/// The `catalog` entry of the template context: the service's bundle, and every service's
/// ID, effective status, chart path and cluster types.
fn catalog_context(
    catalog: &Catalog,
    service: &Service,
    statuses: &std::collections::BTreeMap<String, Status>,
) -> Value {
    let bundle = catalog.bundle_of(service);
    let mut services = Map::new();
    for s in catalog.services() {
        let d = &s.definition;
        let status = statuses.get(&d.id).copied().unwrap_or(d.status);
        services.insert(
            d.id.clone(),
            json!({"id": d.id, "status": status.as_str(), "chartPath": d.chart_path, "clusterTypes": d.cluster_types, "dependsOn": d.depends_on, "phase": s.phase}),
        );
    }
    json!({
        "name": bundle.name,
        "version": bundle.version,
        "reference": bundle.reference,
        "services": services,
    })
}

/// The template context of one service instance.
pub fn context(
    catalog: &Catalog,
    service: &Service,
    instance: &Instance,
    scope: &Scope<'_>,
) -> Value {
    let mut context = instance_context(service, instance, scope);
    context.insert(
        "catalog".to_owned(),
        catalog_context(catalog, service, scope.statuses),
    );
    Value::Object(context)
}

/// The template context without its `catalog` entry.
fn instance_context(
    service: &Service,
    instance: &Instance,
    scope: &Scope<'_>,
) -> Map<String, Value> {
    let def = &service.definition;
    let namespace = scope
        .instance_namespace
        .map(str::to_owned)
        .or_else(|| {
            def.annotations
                .get("krm-catalog.dev/namespace")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| def.id.clone());
    let metadata = scope.source.get("metadata");
    let mut instance_meta = Map::new();
    instance_meta.insert(
        "apiVersion".into(),
        scope
            .source
            .get("apiVersion")
            .cloned()
            .unwrap_or(Value::Null),
    );
    instance_meta.insert(
        "kind".into(),
        scope.source.get("kind").cloned().unwrap_or(Value::Null),
    );
    for key in ["name", "namespace", "labels", "annotations"] {
        if let Some(v) = metadata.and_then(|metadata| metadata.get(key)) {
            instance_meta.insert(key.into(), v.clone());
        }
    }
    for key in ["labels", "annotations"] {
        instance_meta.entry(key).or_insert_with(|| json!({}));
    }
    let context = json!({
        "service": {
            "id": def.id,
            "kind": def.gvk.kind,
            "apiVersion": def.gvk.api_version(),
            "chartPath": def.chart_path,
            "status": instance.status.as_str(),
            "clusterTypes": def.cluster_types,
            "annotations": def.annotations,
            "labels": def.labels,
            "namespace": namespace,
            "dependsOn": def.depends_on,
            "phase": service.phase,
        },
        "instance": instance_meta,
        "status": instance.status.as_str(),
        "storage": instance.storage(),
        "networking": instance.networking(),
        "config": instance.config(),
        "cluster": scope.cluster,
    });
    match context {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::catalog::{Bundle, Origin};
    use crate::service::Schemas;

    const DEFINITION: &str = "apiVersion: kubara.io/v1alpha1\nkind: ServiceDefinition\nmetadata:\n  name: demo\nspec:\n  chartPath: demo\n  status: enabled\n  configSchema:\n    type: object\n";
    const TEMPLATE: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ service.id }}\n";

    /// The run's caches are built once and reused: one environment per bundle however many
    /// services render from it, one compiled schema per service however many instances.
    #[test]
    fn issue10_caches_are_built_once_per_bundle_and_per_service() {
        let files = vec![
            ("services/demo.yaml".to_owned(), DEFINITION.as_bytes()),
            ("templates/app.yaml.j2".to_owned(), TEMPLATE.as_bytes()),
        ];
        let (catalog, errors) = Catalog::merge(
            vec![Bundle::from_files(Origin::Path("test".into()), &files)],
            false,
        );
        assert!(errors.is_empty(), "{errors:?}");
        let renderer = Renderer::new(&catalog);
        let first = renderer.environment(0).map(std::ptr::from_ref);
        assert!(first.is_some());
        assert_eq!(first, renderer.environment(0).map(std::ptr::from_ref));
        assert!(renderer.environment(1).is_none());
        let service = &catalog.services()[0];
        let generated = renderer
            .render(service, &json!({"service": {"id": "demo"}}))
            .expect("renders");
        assert_eq!(generated[0].object["metadata"]["name"], "demo");

        let schemas = Schemas::new();
        let schema = schemas.get(&service.definition);
        assert!(schema.is_ok());
        assert!(Arc::ptr_eq(&schema, &schemas.get(&service.definition)));
    }
}

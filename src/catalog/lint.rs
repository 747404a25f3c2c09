//! `catalog lint`: every load-time check, plus a render of every service with its defaults,
//! so a catalog author finds a broken template before a user does. `build.rs` runs the same
//! checks on the built-in catalog.

use serde_json::{Map, Value, json};

use super::{Catalog, CatalogError, Kind};
use crate::render::{self, Scope};
use crate::service::definition::{Status, example_value, must_choose};
use crate::service::instance;

/// Render every service of a merged catalog as enabled, with default config and the given
/// cluster values, and report what fails. Load errors are reported by the loader already.
pub fn lint(catalog: &Catalog, cluster: &Map<String, Value>) -> Vec<CatalogError> {
    let mut errors = Vec::new();
    let cluster = Value::Object(cluster.clone());
    let statuses = catalog
        .services()
        .iter()
        .map(|s| (s.definition.id.clone(), Status::Enabled))
        .collect();
    let source = json!({"apiVersion": "services.krm-catalog.dev/v1alpha1", "kind": "ServiceSet", "metadata": {"name": "lint"}});
    for service in catalog.services() {
        let label = catalog.bundle_of(service).origin.label();
        let located = |e: CatalogError| {
            let mut e = e;
            e.file.clone_from(&service.file);
            e.item = service.item;
            e
        };
        if let Err(e) = service.instance_schema() {
            errors.push(located(
                CatalogError::new(&label, format!("instance schema does not compile: {e}"))
                    .at("spec.configSchema"),
            ));
            continue;
        }
        // Values a user must choose (required, no default) are filled from their schema
        // `example`s, so the templates are still rendered. Without examples there is nothing
        // to render with: the missing values are the user's to set, not a catalog error.
        let mut raw = json!({"status": "enabled"});
        if let Some(schema) = &service.definition.config_schema
            && !must_choose(schema.raw()).is_empty()
        {
            match example_value(schema.raw()) {
                Some(config) => raw["config"] = config,
                None => continue,
            }
        }
        let prepared = match instance::prepare(service, &raw, "") {
            Ok(p) => p,
            Err(problems) => {
                for p in problems {
                    errors.push(located(
                        CatalogError::new(
                            &label,
                            format!(
                                "the default config of \"{}\" is invalid: {}",
                                service.definition.id, p.message
                            ),
                        )
                        .at(format!(
                            "config{}",
                            p.path.strip_prefix("config").unwrap_or(&p.path)
                        )),
                    ));
                }
                continue;
            }
        };
        let scope = Scope {
            source: &source,
            instance_namespace: None,
            cluster: &cluster,
            statuses: &statuses,
        };
        let context = render::context(catalog, service, &prepared, &scope);
        if let Err(render_errors) = render::render(catalog, service, &context) {
            for e in render_errors {
                let mut err = CatalogError::new(
                    &label,
                    format!(
                        "rendering \"{}\" with its defaults: {}",
                        service.definition.id, e.message
                    ),
                );
                err.file = Some(match e.line {
                    Some(line) => format!("{}:{line}", e.template),
                    None => e.template.clone(),
                });
                errors.push(err);
            }
        }
    }
    errors.extend(unpinned_runtimes(catalog));
    errors
}

/// Warnings for function runtimes without a digest: function mode refuses them (images unless
/// `allowUnpinned`, binaries always), so a catalog should be locked before it is published.
fn unpinned_runtimes(catalog: &Catalog) -> Vec<CatalogError> {
    use crate::catalog::kep::Runtime;
    let mut warnings = Vec::new();
    for (gvk, kind) in catalog.kinds() {
        let Kind::Function {
            runtime, bundle, ..
        } = kind
        else {
            continue;
        };
        let label = catalog
            .bundles
            .get(*bundle)
            .map(|b| b.origin.label())
            .unwrap_or_default();
        for part in runtime.parts() {
            let missing: Vec<String> = match part {
                Runtime::Container {
                    image,
                    sha256: None,
                    ..
                } if !image.contains("@sha256:") => {
                    vec![format!("image {image}")]
                }
                Runtime::Exec { platforms } => platforms
                    .iter()
                    .filter(|p| p.sha256.is_none())
                    .map(|p| format!("{}/{} binary {}", p.os, p.arch, p.uri))
                    .collect(),
                _ => Vec::new(),
            };
            for what in missing {
                warnings.push(
                    CatalogError::new(
                        &label,
                        format!("{gvk}: {what} has no sha256; function mode refuses it until `krm-catalog catalog lock` pins it"),
                    )
                    .warning(),
                );
            }
        }
    }
    warnings
}

//! `catalog lint`: every load-time check, plus a render of every service with its defaults,
//! so a catalog author finds a broken template before a user does. `builtin`'s test runs the
//! same checks on the built-in catalog. It sits above `catalog`, `service` and `render`: it
//! uses all three, and the catalog model does not know it.

use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, CatalogError, Kind, Service};
use crate::diagnostics::{FieldPath, PathSegment};
use crate::patch;
use crate::render::{self, Generated, Renderer, Scope};
use crate::schema::CEL_NOT_CHECKED;
use crate::service::Schemas;
use crate::service::definition::{Status, example_value};
use crate::service::instance;
use crate::service::placeholder;
use crate::strict::Problem;
use crate::template::RenderError;

/// Render every service of the renderer's merged catalog as enabled, with default config and
/// the given cluster values, and report what fails. Load errors are reported by the loader
/// already. `schemas` is the instance schema cache of that catalog.
pub fn lint(
    renderer: &Renderer<'_>,
    schemas: &Schemas,
    cluster: &Map<String, Value>,
) -> Vec<CatalogError> {
    lint_only(renderer, schemas, cluster, |_| true)
}

/// [`lint`] of the services whose catalog label `only` accepts: a catalog loaded only to lend
/// its standard pattern is not what is being linted, so its own findings are not reported.
pub fn lint_only(
    renderer: &Renderer<'_>,
    schemas: &Schemas,
    cluster: &Map<String, Value>,
    only: impl Fn(&str) -> bool,
) -> Vec<CatalogError> {
    let catalog = renderer.catalog();
    let mut errors = Vec::new();
    let cluster = Value::Object(cluster.clone());
    for service in catalog.services() {
        let label = catalog.bundle_of(service).origin.label();
        if !only(&label) {
            continue;
        }
        let located = |e: CatalogError| {
            let mut e = e;
            e.file.clone_from(&service.file);
            e.item = service.item;
            e
        };
        if let Err(e) = schemas.get(&service.definition).as_ref() {
            errors.push(located(
                CatalogError::new(&label, format!("instance schema does not compile: {e}"))
                    .at("spec.configSchema"),
            ));
            continue;
        }
        // The defaults alone first: what they leave unset or get wrong is reported (see
        // `default_config_problems`). Values a user must choose (required, no default) are
        // then filled from their schema `example`s, else with placeholders of their type
        // (`service::placeholder`), so the templates are still rendered.
        let prepare = |request: &Value| {
            instance::prepare(
                schemas,
                &service.definition,
                request,
                &FieldPath::root(),
                instance::UnknownFields::Strict,
            )
        };
        // A schema whose defaults give an empty config: whatever `{}` fails (a CEL rule of its
        // root, `minProperties`) is the user's to give, as a required value is (issue 22:
        // the rules now run on `{}`, as the apiserver runs them).
        let defaults_empty = service.definition.config_schema.as_ref().is_some_and(|s| {
            crate::schema::defaulting::default_config(None, s.structural()).is_none()
        });
        let users_to_give = |p: &Problem| {
            p.message == "Required value" || (defaults_empty && p.message != CEL_NOT_CHECKED)
        };
        let report = |problems: &[Problem]| {
            default_config_problems(&label, service, problems, defaults_empty)
                .into_iter()
                .map(located)
        };
        let prepared = match prepare(&json!({"status": "enabled"})) {
            Ok(p) => p,
            Err(instance::Rejected {
                errors: problems, ..
            }) => {
                let only_missing = problems
                    .iter()
                    .all(|p| users_to_give(p) || p.message == CEL_NOT_CHECKED);
                errors.extend(report(&problems));
                let schema = service.definition.config_schema.as_ref();
                let example = schema.and_then(|s| example_value(s.raw()));
                // Without examples, placeholders of each value's type (issue 22: the
                // templates were not rendered at all).
                let made = example.is_none();
                let config =
                    example.or_else(|| schema.and_then(|s| placeholder::minimal_value(s.raw())));
                let not_rendered = |why: &str| {
                    located(
                        CatalogError::new(
                            &label,
                            format!(
                                "\"{}\" was not rendered: its defaults leave required values unset, and {why}; give those fields an `example` so lint can render its templates",
                                service.definition.id
                            ),
                        )
                        .warning(),
                    )
                };
                let (true, Some(config)) = (only_missing, config) else {
                    if only_missing {
                        errors.push(not_rendered(
                            "lint can make no placeholder for some of them (a `pattern`, or no type)",
                        ));
                    }
                    continue;
                };
                match prepare(&json!({"status": "enabled", "config": config})) {
                    Ok(p) => p,
                    Err(instance::Rejected { .. }) if made => {
                        errors.push(not_rendered(
                            "the placeholders lint made for them from the schema do not validate",
                        ));
                        continue;
                    }
                    Err(instance::Rejected {
                        errors: problems, ..
                    }) => {
                        errors.extend(report(&problems));
                        continue;
                    }
                }
            }
        };
        let output = render_prepared(renderer, &cluster, service, &prepared);
        if let Ok(generated) = &output {
            errors.extend(catalog_patches(&label, service, generated).map(located));
        }
        if let Err(render_errors) = output {
            for e in render_errors {
                errors.push(render_error(
                    &label,
                    &service.definition.id,
                    "its defaults",
                    &e,
                ));
            }
        }
        errors.extend(examples(renderer, schemas, &cluster, service, &label));
    }
    errors.extend(unfetchable_runtimes(catalog));
    errors.extend(unpinned_runtimes(catalog));
    errors
}

/// Why a test render of one service failed.
#[derive(Debug)]
pub enum Failed {
    /// The instance did not validate: the problems at their instance paths (`config.x`).
    Invalid(Vec<Problem>),
    /// Templates failed.
    Render(Vec<RenderError>),
}

/// What a test render produced: the objects, and the warnings of the instance (deprecated
/// service or fields, unknown fields dropped).
#[derive(Debug)]
pub struct Rendered {
    /// The objects, in template order.
    pub objects: Vec<Generated>,
    /// The instance's warnings, at their instance paths.
    pub warnings: Vec<Problem>,
}

/// Prepare `request` (an instance of `service`, `{status: enabled, config: …}`) and render it
/// as `lint` renders every service: the one test render of `catalog lint`, its
/// `spec.examples` and `catalog lint --values/--set`.
///
/// # Errors
/// The instance's validation problems, or the templates' errors.
pub fn render_with(
    renderer: &Renderer<'_>,
    schemas: &Schemas,
    cluster: &Value,
    service: &Service,
    request: &Value,
) -> Result<Rendered, Failed> {
    let prepared = instance::prepare(
        schemas,
        &service.definition,
        request,
        &FieldPath::root(),
        instance::UnknownFields::Strict,
    )
    .map_err(|r| {
        // The rules not checked because of another error say nothing of their own.
        let errors = r
            .errors
            .into_iter()
            .filter(|p| p.message != CEL_NOT_CHECKED);
        Failed::Invalid(errors.collect())
    })?;
    let objects = render_prepared(renderer, cluster, service, &prepared).map_err(Failed::Render)?;
    Ok(Rendered {
        objects,
        warnings: prepared.warnings,
    })
}

/// Render a prepared instance in lint's scope: a `ServiceSet` named `lint` that enables every
/// service, with the given cluster values.
fn render_prepared(
    renderer: &Renderer<'_>,
    cluster: &Value,
    service: &Service,
    prepared: &instance::Instance,
) -> Result<Vec<Generated>, Vec<RenderError>> {
    let catalog = renderer.catalog();
    let statuses = catalog
        .services()
        .iter()
        .map(|s| (s.definition.id.clone(), Status::Enabled))
        .collect();
    let source = json!({"apiVersion": "services.krm-catalog.dev/v1alpha1", "kind": "ServiceSet", "metadata": {"name": "lint"}});
    let scope = Scope {
        source: &source,
        instance_namespace: None,
        cluster,
        statuses: &statuses,
    };
    let context = render::context(catalog, service, prepared, &scope);
    renderer.render(service, &context)
}

/// A template error of a test render, named by the template file and line.
fn render_error(label: &str, id: &str, with: &str, e: &RenderError) -> CatalogError {
    let mut err = CatalogError::new(
        label,
        format!("rendering \"{id}\" with {with}: {}", e.message),
    );
    err.file = Some(match e.line {
        Some(line) => format!("{}:{line}", e.template),
        None => e.template.clone(),
    });
    err
}

/// Every `spec.examples` entry of a service must validate and render (issue 23); a failure
/// names the example by its name, else its index.
fn examples(
    renderer: &Renderer<'_>,
    schemas: &Schemas,
    cluster: &Value,
    service: &Service,
    label: &str,
) -> Vec<CatalogError> {
    let id = &service.definition.id;
    let mut errors = Vec::new();
    for (i, example) in service.definition.examples.iter().enumerate() {
        let at = FieldPath::parse("spec.examples").index(i);
        let named = example
            .name
            .as_ref()
            .map_or_else(|| format!("example {i}"), |n| format!("example \"{n}\""));
        let request = json!({"status": "enabled", "config": example.config});
        match render_with(renderer, schemas, cluster, service, &request) {
            Ok(_) => {}
            Err(Failed::Invalid(problems)) => {
                for p in &problems {
                    let mut e = CatalogError::new(
                        label,
                        format!("{named} of \"{id}\" is invalid: {}", p.message),
                    )
                    .at(at.join(&p.path))
                    .for_item(service.item);
                    e.file.clone_from(&service.file);
                    errors.push(e);
                }
            }
            Err(Failed::Render(render_errors)) => {
                for e in &render_errors {
                    errors.push(render_error(label, id, &named, e));
                }
            }
        }
    }
    errors
}

/// Every function kind of the catalog with its catalog's label and its runtime.
fn function_runtimes(
    catalog: &Catalog,
) -> impl Iterator<Item = (String, String, &crate::catalog::kep::Runtime)> {
    catalog.kinds().into_iter().filter_map(|(gvk, kind)| {
        let Kind::Function {
            runtime, bundle, ..
        } = kind
        else {
            return None;
        };
        let label = catalog
            .bundles
            .get(*bundle)
            .map(|b| b.origin.label())
            .unwrap_or_default();
        Some((gvk.to_string(), label, runtime))
    })
}

/// Errors for runtime sources a run cannot fetch (issue 23): an exec `uri` or a Starlark `url`
/// that [`RuntimeSource::parse`](crate::catalog_ref::RuntimeSource::parse) refuses (another
/// scheme, a Git source without a commit or a file, a reference that does not parse), so that
/// lint passes only what the runtime can run.
fn unfetchable_runtimes(catalog: &Catalog) -> Vec<CatalogError> {
    use crate::catalog::kep::Runtime;
    use crate::catalog_ref::RuntimeSource;
    let mut errors = Vec::new();
    for (gvk, label, runtime) in function_runtimes(catalog) {
        for part in runtime.parts() {
            let sources: Vec<(String, &str)> = match part {
                Runtime::Exec { platforms } => platforms
                    .iter()
                    .map(|p| (format!("{}/{} binary uri", p.os, p.arch), p.uri.as_str()))
                    .collect(),
                Runtime::Starlark {
                    source,
                    local: false,
                    ..
                } => vec![("starlark url".to_owned(), source.as_str())],
                _ => Vec::new(),
            };
            for (what, uri) in sources {
                if let Err(reason) = RuntimeSource::parse(uri) {
                    errors.push(CatalogError::new(
                        &label,
                        format!("{gvk}: {what} {uri} {reason}"),
                    ));
                }
            }
        }
    }
    errors
}

/// The catalog's own patches of a service (`spec.patches`) on what it rendered with its
/// defaults: one that matches nothing or does not apply would fail every user of the service.
fn catalog_patches(
    label: &str,
    service: &Service,
    generated: &[render::Generated],
) -> Option<CatalogError> {
    let def = &service.definition;
    if def.patches.is_empty() {
        return None;
    }
    let mut objects: Vec<Value> = generated.iter().map(|g| g.object.clone()).collect();
    patch::apply(&def.patches, &mut objects, &def.id)
        .err()
        .map(|e| {
            CatalogError::new(
                label,
                format!("patch of \"{}\" with its defaults: {e}", def.id),
            )
            .at(e.at().clone())
        })
}

/// What the defaulted config of a service tells its author. Each default was already checked
/// against its own subschema at load (apiserver `ValidateDefaults`, apiextensions-apiserver
/// `pkg/apiserver/schema/defaulting/validation.go`), so what is left here is the whole config:
/// a `required` value without a default is the user's to give (a warning, and only for a
/// service enabled by default, which a user gets without asking); anything else is an error.
fn default_config_problems(
    label: &str,
    service: &Service,
    problems: &[Problem],
    defaults_empty: bool,
) -> Vec<CatalogError> {
    let id = &service.definition.id;
    let enabled_by_default = service.definition.status == Status::Enabled;
    let mut out = Vec::new();
    for p in problems {
        // Instance paths of a config value start at `config` already; an error the apiserver
        // reports at no field (`<nil>`) names its field in the message.
        let at = match p.path.segments().first() {
            _ if p.path.is_nil() => FieldPath::root(),
            Some(PathSegment::Key(k)) if k == "config" => p.path.clone(),
            _ => FieldPath::parse("config").join(&p.path),
        };
        // The rules not checked because something else is wrong (a missing value) say
        // nothing of their own: the other problems are reported (issue 22: a required value
        // without a default beside any CEL rule failed lint).
        if p.message == CEL_NOT_CHECKED {
            continue;
        }
        if p.message == "Required value" {
            if enabled_by_default {
                out.push(
                    CatalogError::new(
                        label,
                        format!(
                            "\"{id}\" is enabled by default, but its defaults leave {at} unset: every user must set it (or give it a default)"
                        ),
                    )
                    .at(at)
                    .warning(),
                );
            }
        } else if defaults_empty {
            if enabled_by_default {
                out.push(
                    CatalogError::new(
                        label,
                        format!(
                            "\"{id}\" is enabled by default, but its schema has no defaults and an empty config does not validate ({}): every user must set a config",
                            p.message
                        ),
                    )
                    .at(at)
                    .warning(),
                );
            }
        } else {
            out.push(
                CatalogError::new(
                    label,
                    format!("the default config of \"{id}\" is invalid: {}", p.message),
                )
                .at(at),
            );
        }
    }
    out
}

/// Warnings for function runtimes without a digest: function mode refuses them (images unless
/// `allowUnpinned`, binaries always), so a catalog should be locked before it is published.
fn unpinned_runtimes(catalog: &Catalog) -> Vec<CatalogError> {
    use crate::catalog::kep::Runtime;
    let mut warnings = Vec::new();
    for (gvk, label, runtime) in function_runtimes(catalog) {
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
                // A script from a URL runs only with its sha256; a `path` is the catalog's own.
                Runtime::Starlark {
                    source,
                    local: false,
                    sha256: None,
                } => {
                    warnings.push(
                        CatalogError::new(
                            &label,
                            format!("{gvk}: starlark script {source} has no sha256; function mode refuses a script from a URL without one: write `starlark: {{url: {source}, sha256: <sha256 of the script>}}`"),
                        )
                        .warning(),
                    );
                    Vec::new()
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Bundle, Origin};
    use crate::diagnostics::Severity;

    fn catalog(status: &str, schema: &str) -> (Catalog, Vec<CatalogError>) {
        let definition = format!(
            "apiVersion: kubara.io/v1alpha1\nkind: ServiceDefinition\nmetadata:\n  name: demo\nspec:\n  chartPath: demo\n  status: {status}\n  configSchema:\n{schema}"
        );
        let files = vec![("services/demo.yaml".to_owned(), definition.as_bytes())];
        Catalog::merge(
            vec![Bundle::from_files(Origin::Path("test".into()), &files)],
            false,
        )
    }

    fn lint(catalog: &Catalog, cluster: &Map<String, Value>) -> Vec<CatalogError> {
        super::lint(&Renderer::new(catalog), &Schemas::new(), cluster)
    }

    const NEEDS_EMAIL: &str = "    type: object\n    required: [email]\n    properties:\n      email:\n        type: string\n      name:\n        type: string\n        default: demo\n";

    #[test]
    fn issue8_missing_required_value_is_a_warning_for_enabled_services() {
        let (c, load) = catalog("enabled", NEEDS_EMAIL);
        assert!(load.is_empty(), "{load:?}");
        let found = lint(&c, &Map::new());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].severity, Severity::Warning, "{found:?}");
        assert_eq!(
            found[0].to_string(),
            "catalog test: services/demo.yaml: config.email: \"demo\" is enabled by default, but its defaults leave config.email unset: every user must set it (or give it a default)"
        );
    }

    /// A required value without a default and any CEL rule failed lint with "the default
    /// config … is invalid: some validation rules were not checked" (over 30 real CRDs): the
    /// rules not checked are the missing value's consequence, so it stays a warning.
    #[test]
    fn issue16_required_without_default_stays_a_warning_beside_cel_rules() {
        let schema = format!(
            "{NEEDS_EMAIL}    x-kubernetes-validations:\n    - rule: self.name != 'root'\n      message: name must not be root\n"
        );
        let (c, load) = catalog("enabled", &schema);
        assert!(load.is_empty(), "{load:?}");
        let found = lint(&c, &Map::new());
        assert_eq!(
            found.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "catalog test: services/demo.yaml: config.email: \"demo\" is enabled by default, but its defaults leave config.email unset: every user must set it (or give it a default)"
            ]
        );
        assert_eq!(found[0].severity, Severity::Warning, "{found:?}");
        // A rule the defaults break is still an error, found with the value's `example`.
        let schema = format!(
            "{}    x-kubernetes-validations:",
            NEEDS_EMAIL.replace(
                "      email:\n        type: string\n",
                "      email:\n        type: string\n        example: ops@example.com\n"
            )
        );
        let schema = format!(
            "{schema}\n    - rule: self.name != 'demo'\n      message: name must not be demo\n"
        );
        let (c, _) = catalog("enabled", &schema);
        let found: Vec<String> = lint(&c, &Map::new())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            found.contains(
                &"catalog test: services/demo.yaml: config: the default config of \"demo\" is invalid: Invalid value: name must not be demo".to_owned()
            ),
            "{found:?}"
        );
    }

    /// The rules of a config's root now run on `{}` (issue 22): a schema with no defaults
    /// whose root rule asks for a value is the user's to satisfy, a warning as a required value
    /// is, not "the default config is invalid".
    #[test]
    fn issue16_a_root_rule_on_a_schema_without_defaults_is_a_warning() {
        let schema = "    type: object\n    x-kubernetes-validations:\n    - rule: has(self.a) || has(self.b)\n      message: either a or b must be used\n    properties:\n      a:\n        type: string\n      b:\n        type: string\n";
        let (c, load) = catalog("enabled", schema);
        assert!(load.is_empty(), "{load:?}");
        let found = lint(&c, &Map::new());
        assert_eq!(
            found[0].to_string(),
            "catalog test: services/demo.yaml: config: \"demo\" is enabled by default, but its schema has no defaults and an empty config does not validate (Invalid value: either a or b must be used): every user must set a config"
        );
        // Lint cannot make a config the rule accepts: it says so, and fails nothing.
        assert!(
            found[1].to_string().contains("\"demo\" was not rendered"),
            "{found:?}"
        );
        assert!(
            found.iter().all(|e| e.severity == Severity::Warning),
            "{found:?}"
        );
        // Disabled by default: nobody gets it without choosing a config; lint still says it
        // could not render it.
        let (c, _) = catalog("disabled", schema);
        let found = lint(&c, &Map::new());
        assert!(
            found
                .iter()
                .all(|e| e.severity == Severity::Warning
                    && e.to_string().contains("was not rendered")),
            "{found:?}"
        );
    }

    #[test]
    fn issue8_missing_required_value_is_silent_for_disabled_services() {
        let (c, load) = catalog("disabled", NEEDS_EMAIL);
        assert!(load.is_empty(), "{load:?}");
        assert!(lint(&c, &Map::new()).is_empty());
    }

    #[test]
    fn issue8_a_pattern_go_rejects_fails_the_load_at_its_schema_path() {
        let (_, load) = catalog(
            "enabled",
            "    type: object\n    properties:\n      level:\n        type: string\n        pattern: '^a{1001}$'\n",
        );
        assert_eq!(
            load.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "catalog test: services/demo.yaml: spec.configSchema.properties.level.pattern: `pattern` \"^a{1001}$\" is not a valid Go (RE2) regular expression: invalid repeat count: `{1001}`"
            ]
        );
    }

    #[test]
    fn issue8_default_invalid_against_its_own_subschema_is_a_load_error() {
        let (_, load) = catalog(
            "enabled",
            "    type: object\n    properties:\n      level:\n        type: string\n        pattern: '^(?i)(abort|warn)?$'\n        default: fail\n",
        );
        assert_eq!(load.len(), 1, "{load:?}");
        assert_eq!(load[0].severity, Severity::Error);
        assert_eq!(
            load[0].to_string(),
            "catalog test: services/demo.yaml: spec.configSchema.properties.level.default: invalid default: Invalid value: \"fail\": should match '^(?i)(abort|warn)?$'"
        );
    }
}

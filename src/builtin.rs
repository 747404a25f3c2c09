//! The built-in catalog (`catalogs/builtin/`), embedded at compile time by `build.rs`. The
//! build only embeds it: `tests::issue20_the_builtin_catalog_lints_and_renders` checks it with
//! the code a run uses (load, merge, lint, and a render of every service).

use crate::catalog::{Bundle, Origin};
use crate::service::definition::SERVICES_GROUP;

include!(concat!(env!("OUT_DIR"), "/builtin_catalog.rs"));

/// The API groups the built-in catalog claims: a run whose items touch none of them (and that
/// has no other catalog) never loads it. Its services all live in the group of service
/// objects; `tests::issue20_the_builtin_groups_are_the_catalogs` holds this list to the catalog.
static GROUPS: &[&str] = &[SERVICES_GROUP];

/// The API groups the built-in catalog claims.
pub fn groups() -> &'static [&'static str] {
    GROUPS
}

/// The kinds the built-in catalog defines: an item of one of them under another group
/// (`apps/v1`, a typo of the group) loads the catalog, so the mistake is reported (issue 22);
/// `tests::issue16_the_builtin_kinds_are_the_catalogs` holds this list to the catalog.
static KINDS: &[&str] = &[
    "Argocd",
    "CertManager",
    "ExternalDns",
    "ExternalSecrets",
    "KubePrometheusStack",
    "MetricsServer",
    "ServiceSet",
    "Traefik",
];

/// The kinds the built-in catalog defines.
pub fn kinds() -> &'static [&'static str] {
    KINDS
}

/// Load the built-in catalog.
pub fn bundle() -> Bundle {
    let files: Vec<(String, &[u8])> = FILES.iter().map(|(p, b)| ((*p).to_owned(), *b)).collect();
    Bundle::from_files(Origin::Builtin, &files)
}

#[cfg(test)]
mod tests {
    use super::{GROUPS, KINDS, bundle};
    use crate::catalog::{self, Catalog, CatalogError};
    use crate::diagnostics::{FieldPath, Severity};
    use crate::service::definition::{SERVICES_GROUP, Status, example_value, must_choose};
    use crate::{lint, render, service};

    /// A service with values a user must choose (required, no default, e.g. cert-manager's
    /// ACME email): its default config is invalid, which lint reports. The built-in catalog
    /// gives each such value an `example`, and the service is rendered here with those, so its
    /// templates are still checked; `problem` says what failed.
    struct Chosen {
        file: Option<String>,
        id: String,
        fields: Vec<FieldPath>,
        problem: Option<String>,
    }

    impl Chosen {
        /// Whether a lint finding is only the missing value (or a render without it). Lint may
        /// report the missing value as a warning (defaulted config misses a required value);
        /// any warning on this service's file is taken to be that one, since the render here
        /// checks the rest.
        fn covers(&self, e: &CatalogError) -> bool {
            let in_file = e.file.is_some() && e.file == self.file;
            let missing = self.fields.iter().any(|f| e.path.starts_with(f));
            (in_file && (missing || e.severity == Severity::Warning))
                || e.message
                    .contains(&format!("rendering \"{}\" with its defaults", self.id))
        }
    }

    /// Lint's findings and the services with values a user must choose, each rendered with the
    /// examples of those values.
    fn user_chosen(merged: &Catalog) -> (Vec<CatalogError>, Vec<Chosen>) {
        // One renderer and one schema cache for lint and the renders below, as a run has.
        let renderer = render::Renderer::new(merged);
        let schemas = service::Schemas::new();
        let lint = lint::lint(&renderer, &schemas, &serde_json::Map::new());
        let statuses = merged
            .services()
            .iter()
            .map(|s| (s.definition.id.clone(), Status::Enabled))
            .collect();
        let source = serde_json::json!({"apiVersion": "services.krm-catalog.dev/v1alpha1", "kind": "ServiceSet", "metadata": {"name": "build"}});
        let cluster = serde_json::json!({});
        let mut chosen = Vec::new();
        for s in merged.services() {
            let Some(schema) = &s.definition.config_schema else {
                continue;
            };
            let paths = must_choose(schema.raw());
            if paths.is_empty() {
                continue;
            }
            let id = s.definition.id.clone();
            let mut fields: Vec<FieldPath> = paths
                .iter()
                .map(|p| FieldPath::root().key("config").key(&p[0]))
                .collect();
            fields.dedup();
            let problem = match example_value(schema.raw()) {
                None => Some(format!(
                    "{id}: give every required value without a default an `example` ({}), so the test can render it",
                    paths
                        .iter()
                        .map(|p| p.join("."))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                Some(config) => {
                    let raw = serde_json::json!({"status": "enabled", "config": config});
                    match service::instance::prepare(
                        &schemas,
                        &s.definition,
                        &raw,
                        &FieldPath::root(),
                        service::instance::UnknownFields::Strict,
                    ) {
                        Err(rejected) => Some(format!(
                            "{id}: the config made of its examples is invalid: {}",
                            rejected
                                .errors
                                .iter()
                                .map(|p| format!("{}: {}", p.path, p.message))
                                .collect::<Vec<_>>()
                                .join("; ")
                        )),
                        Ok(prepared) => {
                            let scope = render::Scope {
                                source: &source,
                                instance_namespace: None,
                                cluster: &cluster,
                                statuses: &statuses,
                            };
                            let context = render::context(merged, s, &prepared, &scope);
                            renderer.render(s, &context).err().map(|errors| {
                                format!(
                                    "{id}: rendering with the examples of its required values: {}",
                                    errors
                                        .iter()
                                        .map(ToString::to_string)
                                        .collect::<Vec<_>>()
                                        .join("; ")
                                )
                            })
                        }
                    }
                }
            };
            chosen.push(Chosen {
                file: s.file.clone(),
                id,
                fields,
                problem,
            });
        }
        (lint, chosen)
    }

    /// Every problem of the built-in catalog as it is embedded, each with its file and schema
    /// path: load and merge errors, then lint (warnings count too: the built-in catalog is the
    /// example every other catalog copies) and the renders of services with chosen values.
    fn problems() -> Vec<String> {
        let (merged, errors) = Catalog::merge(vec![bundle()], false);
        let mut problems: Vec<String> = errors.into_iter().map(|e| e.to_string()).collect();
        if problems.is_empty() {
            let (lint, chosen) = user_chosen(&merged);
            problems.extend(
                lint.into_iter()
                    .filter(|e| !chosen.iter().any(|c| c.covers(e)))
                    .map(|e| e.to_string()),
            );
            problems.extend(chosen.into_iter().filter_map(|c| c.problem));
        }
        problems
    }

    /// Issue 20: the build only embeds `catalogs/builtin/`; this is the check it used to make,
    /// so a broken built-in catalog (bad schema, bad template, a service that does not render
    /// with its defaults or examples) fails the tests with the file and schema path.
    #[test]
    fn issue20_the_builtin_catalog_lints_and_renders() {
        let problems = problems();
        assert!(
            problems.is_empty(),
            "the built-in catalog (catalogs/builtin) is invalid:\n  {}",
            problems.join("\n  ")
        );
    }

    /// Issue 20: `GROUPS`, written out by hand, is every group the built-in catalog's services
    /// claim, plus the group of service objects.
    #[test]
    fn issue20_the_builtin_groups_are_the_catalogs() {
        let (merged, _) = Catalog::merge(vec![bundle()], false);
        let mut groups: Vec<String> = merged
            .services()
            .iter()
            .map(|s| s.definition.gvk.group.clone())
            .chain([SERVICES_GROUP.to_owned()])
            .collect();
        groups.sort();
        groups.dedup();
        let mut ours: Vec<&str> = GROUPS.to_vec();
        ours.sort_unstable();
        assert_eq!(ours, groups, "src/builtin.rs GROUPS");
    }

    #[test]
    fn issue16_the_builtin_kinds_are_the_catalogs() {
        let (merged, _) = Catalog::merge(vec![bundle()], false);
        let mut kinds: Vec<String> = merged
            .claimed_groups()
            .flat_map(|g| merged.known_kinds(g))
            .filter_map(|vk| vk.split_once('/').map(|(_, k)| k.to_owned()))
            .collect();
        kinds.sort();
        kinds.dedup();
        assert_eq!(KINDS.to_vec(), kinds, "src/builtin.rs KINDS");
    }

    /// The embedded file list is the directory's (less its README), by the names catalogs use.
    #[test]
    fn issue20_the_embedded_files_are_the_directorys() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs/builtin");
        let mut expected = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in fs_err::read_dir(&dir).expect("read_dir") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_none_or(|e| e != "md") {
                    expected.push(catalog::relative_name(&root, &path));
                }
            }
        }
        expected.sort();
        let mut embedded: Vec<&str> = super::FILES.iter().map(|(name, _)| *name).collect();
        embedded.sort_unstable();
        assert_eq!(embedded, expected);
    }
}

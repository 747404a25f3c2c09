//! The catalog stage: load and merge the catalogs a run resolves through (built-in, baked into
//! the image, `spec.catalogs`, inline), skip them on the hot path, and keep a catalog that
//! cannot be fetched from failing a run that does not need it (KEP-2906 "Dependencies").

use std::collections::HashSet;

use serde_json::Value;

use super::input::{
    RunContext, gvk_of, hydrate, is_inline_catalog_item, is_kubernetes_group, is_service_set,
};
use super::output::GENERATED_FROM;
use crate::catalog::{Bundle, Catalog, CatalogError, Origin};
use crate::catalog_ref::{CatalogRef, CatalogRefError};
use crate::config::{self, ConfigKind, FunctionConfig, Settings};
use crate::remote::LazyRemote;
use crate::resource_list::{self, Fields, Item};
use crate::results::{Diagnostic as _, KrmResult, Results, Severity};
use crate::service::definition::SERVICES_GROUP;

/// Load the catalogs the run needs and report their problems. The config item and inline
/// catalogs among `items` are read in full first (they may be skeletons). `None` when a
/// catalog failed.
pub(super) fn load(
    fc: &FunctionConfig,
    items: &mut [Item],
    verbatim: Option<&resource_list::Verbatim>,
    config_ref: Option<&Value>,
    ctx: &RunContext,
    remote: &LazyRemote,
    results: &mut Results,
) -> Option<Catalog> {
    // Items read by `resource_list::read_owned` are skeletons: read the bodies of those the
    // run may need before anything looks at them (inline catalogs, the config as an item).
    let early_identity = config_ref.map(resource_list::identity);
    // Files of a configured local catalog that the orchestrator read as package resources
    // (`kpt fn render` of a package holding its catalog) are that catalog, not an inline one:
    // read twice, every definition was a duplicate (issue 22).
    let roots = local_catalog_roots(&fc.settings, ctx.package());
    let inline = |item: &Item| {
        is_inline_catalog_item(item)
            && !resource_list::has_function_annotation(item)
            && !resource_list::file_of(item).is_some_and(|f| under_any(&roots, &f.path))
    };
    hydrate(items, verbatim, |_, item| {
        inline(item)
            || early_identity
                .as_deref()
                .is_some_and(|id| resource_list::has_identity(item, id))
    });
    let items: &[Item] = items;
    // Inline catalogs were read in full just above (a skeleton only if that failed).
    let inline_items: Vec<(usize, std::borrow::Cow<'_, Value>)> = items
        .iter()
        .enumerate()
        .filter(|(_, item)| inline(item))
        .map(|(i, item)| (i, item.value()))
        .collect();
    let inline: Vec<(usize, &Value)> = inline_items.iter().map(|(i, v)| (*i, &**v)).collect();
    let (catalog, mut catalog_errors) = if catalogs_needed(fc, items, &inline) {
        load_catalogs(&fc.settings, &inline, ctx, remote)
    } else {
        (Catalog::default(), Vec::new())
    };
    if catalog_errors.iter().any(|(e, _)| e.unavailable) {
        let need = item_needing_more_catalogs(items, &catalog, fc, config_ref);
        for (e, _) in catalog_errors.iter_mut().filter(|(e, _)| e.unavailable) {
            match &need {
                Some(why) => e.message = format!("{}; it may be needed: {why}", e.message),
                None => {
                    e.severity = Severity::Warning;
                    e.message = format!(
                        "{}; continuing without it, as no item needs it (every item is of a kind a loaded catalog or Kubernetes defines)",
                        e.message
                    );
                }
            }
        }
    }
    if !catalog.bundles.is_empty() {
        crate::log!(
            crate::logger::Level::Info,
            "catalogs: {} ({} services)",
            catalog.describe(),
            catalog.services().len()
        );
    }
    let catalog_failed = catalog_errors.iter().any(|(e, _)| !e.is_warning());
    for (error, field) in catalog_errors {
        results.push(catalog_result(&error, field.as_deref(), items, config_ref));
    }
    (!catalog_failed).then_some(catalog)
}

/// Load the catalogs a run resolves through, in resolution order. Errors are catalog errors;
/// the catalog is still usable for what loaded. Remote catalogs are fetched through `remote`
/// (made on the first one).
pub fn load_catalogs(
    settings: &Settings,
    inline: &[(usize, &Value)],
    ctx: &RunContext,
    remote: &LazyRemote,
) -> (Catalog, Vec<(CatalogError, Option<String>)>) {
    let mut bundles = Vec::new();
    let mut errors: Vec<(CatalogError, Option<String>)> = Vec::new();
    if settings.builtin {
        bundles.push(crate::builtin::bundle());
    }
    let (trusted, keys) = (
        &settings.trusted_catalogs,
        trust_keys(settings, ctx, &mut errors),
    );
    // Catalogs baked into the image (environment) come right after the built-in one.
    let env_catalogs = config::env_catalogs();
    let mut pattern_fields: Vec<(String, String)> = Vec::new();
    for (index, entry) in env_catalogs.iter().chain(&settings.catalogs).enumerate() {
        let mut bundle = match &entry.source {
            // `config::env_catalogs` keeps an environment entry that starts like a Git source
            // but does not parse as a path (it has no other way to say so): say why it is not
            // a Git source, as an error even when no kind of it is needed.
            CatalogRef::Path(p) if index < env_catalogs.len() && p.starts_with("git:") => {
                let reason = match p.parse::<CatalogRef>() {
                    Err(CatalogRefError::Git { field, message, .. }) => {
                        format!("{field} {message}")
                    }
                    Err(e) => e.standalone(),
                    Ok(_) => "it did not parse when the environment was read".to_owned(),
                };
                let origin = Origin::Path(p.clone());
                let message = format!("not a Git catalog source: {reason}");
                Bundle::failed(origin.clone(), CatalogError::new(&origin.label(), message))
            }
            CatalogRef::Path(p) => {
                let path = crate::env::resolve_path(&ctx.cwd, p);
                let mut bundle = Bundle::from_path(p, &path);
                if !path.exists() {
                    // A config whose file nobody named (`kpt fn eval`, a ResourceList on
                    // stdin) has its relative paths read from where the function runs
                    // (issue 22): say which directory was read and what to do.
                    let relative =
                        std::path::Path::new(p).is_relative() && ctx.config_dir.is_none();
                    for e in &mut bundle.problems {
                        e.unavailable = true;
                        if relative {
                            e.message.push_str(
                                " in the current directory (a relative path resolves against the function config's file when `kpt fn render` or `render --fn-config` names it; nothing named it here, so it was read from where the function runs: run from the directory it is relative to, or give an absolute path)",
                            );
                        }
                    }
                }
                bundle
            }
            // A Git source baked into the image (environment) is trusted as the image is.
            CatalogRef::Git(_) if index < env_catalogs.len() => {
                let own: Vec<String> = entry.source.trust_entry().into_iter().collect();
                remote.get().load(&entry.source, &own, &[])
            }
            CatalogRef::Url { .. } | CatalogRef::Oci(_) | CatalogRef::Git(_) => {
                remote.get().load(&entry.source, trusted, &keys)
            }
        };
        if entry.standard_pattern.is_some() {
            bundle.standard_pattern.clone_from(&entry.standard_pattern);
            pattern_fields.push((
                bundle.origin.label(),
                entry.field.key("standardPattern").to_string(),
            ));
        }
        let failed = bundle.problems.iter().any(|e| !e.is_warning());
        // Problems of a configured source point at its entry in the function config.
        errors.extend(
            std::mem::take(&mut bundle.problems)
                .into_iter()
                .map(|e| (e, Some(entry.field.to_string()))),
        );
        // The same catalog named twice (baked into the image and listed in the config) is
        // loaded once: same content digest, same catalog.
        if let Some(first) = bundles
            .iter_mut()
            .find(|b: &&mut Bundle| !failed && b.digest == bundle.digest)
        {
            crate::log!(
                crate::logger::Level::Info,
                "{} ({}) is the same catalog as {}: loaded once",
                bundle.origin.label(),
                entry.field,
                first.origin.label()
            );
            if first.standard_pattern.is_none() {
                first.standard_pattern = bundle.standard_pattern;
            }
            continue;
        }
        bundles.push(bundle);
    }
    if !inline.is_empty() {
        bundles.push(Bundle::from_items(inline));
    }
    let (catalog, merge_errors) = Catalog::merge(bundles, settings.catalog_overwrite);
    errors.extend(merge_errors.into_iter().map(|e| {
        // A standardPattern set in the function config is reported at that field.
        let field = pattern_fields
            .iter()
            .find(|(label, _)| e.message.starts_with("standardPattern ") && *label == e.source)
            .map(|(_, field)| field.clone());
        (e, field)
    }));
    (catalog, errors)
}

/// The public keys of `spec.trustedCatalogs` entries (SPEC §7.5), read and parsed; a key that
/// cannot be read is an error at its entry, which fails the run before any catalog is used.
fn trust_keys(
    settings: &Settings,
    ctx: &RunContext,
    errors: &mut Vec<(CatalogError, Option<String>)>,
) -> Vec<crate::remote::cosign::TrustedKey> {
    let mut keys = Vec::new();
    for entry in &settings.trust_keys {
        let label = format!("trusted catalog {}", entry.source);
        let (key, what, field) = match &entry.key {
            config::KeySource::Pem(pem) => {
                let source = format!("{}.publicKey", entry.field);
                (
                    read_key(Ok(pem.clone()), &source),
                    format!("public key {source}"),
                    entry.field.key("publicKey"),
                )
            }
            config::KeySource::File(file) => (
                read_key(
                    fs_err::read_to_string(crate::env::resolve_path(&ctx.cwd, file))
                        .map_err(|e| e.to_string()),
                    file,
                ),
                format!("public key {file}"),
                entry.field.key("publicKeyFile"),
            ),
            config::KeySource::Keyless(k) => (
                keyless_policy(k, ctx),
                "keyless".to_owned(),
                entry.field.key("keyless"),
            ),
        };
        match key {
            Ok(key) => keys.push(crate::remote::cosign::TrustedKey {
                source: entry.source.clone(),
                key,
            }),
            Err(message) => {
                errors.push((
                    CatalogError::new(&label, format!("{what}: {message}")),
                    Some(field.to_string()),
                ));
            }
        }
    }
    keys
}

/// A PEM public key (its text, or why it could not be read) named `source`.
fn read_key(
    pem: Result<String, String>,
    source: &str,
) -> Result<crate::remote::cosign::Verifier, String> {
    pem.and_then(|pem| {
        crate::remote::cosign::PublicKey::from_pem(&pem, source)
            .map(crate::remote::cosign::Verifier::Key)
            .map_err(|e| {
                let text = e.to_string();
                text.strip_prefix(&format!("{source}: "))
                    .map_or_else(|| text.clone(), str::to_owned)
            })
    })
}

/// Files a keyless policy reads (a trust root, a Rekor key) are at most this large.
const MAX_KEYLESS_FILE_BYTES: u64 = 256 * 1024;

/// A trust entry's `keyless` policy: its trust root and Rekor key read, its regexp compiled.
fn keyless_policy(
    k: &config::KeylessSource,
    ctx: &RunContext,
) -> Result<crate::remote::cosign::Verifier, String> {
    use crate::remote::cosign::{Identity, KeylessPolicy, Verifier};
    let read = |file: &str| -> Result<String, String> {
        let path = crate::env::resolve_path(&ctx.cwd, file);
        let size = fs_err::metadata(&path).map_err(|e| e.to_string())?.len();
        if size > MAX_KEYLESS_FILE_BYTES {
            return Err(format!(
                "{file}: {size} bytes, more than {MAX_KEYLESS_FILE_BYTES} (a PEM file of certificates or a key)"
            ));
        }
        fs_err::read_to_string(&path).map_err(|e| e.to_string())
    };
    let identity = match (&k.identity, &k.identity_regexp) {
        (Some(exact), _) => Identity::Exact(exact.clone()),
        (None, Some(re)) => {
            Identity::Regexp(regex::Regex::new(re).map_err(|e| format!("identityRegexp: {e}"))?)
        }
        (None, None) => return Err("no identity".to_owned()),
    };
    let root = read(&k.trust_root)?;
    let rekor = read(&k.rekor_public_key)?;
    KeylessPolicy::new(
        identity,
        &k.issuer,
        (&root, &k.trust_root),
        (&rekor, &k.rekor_public_key),
    )
    .map(|p| Verifier::Keyless(Box::new(p)))
    .map_err(|e| e.to_string())
}

/// Whether a run can need any catalog: the hot path (a pipeline of ordinary resources) skips
/// loading the built-in catalog entirely. Any item in a group the built-in catalog claims, any
/// other catalog, or a service object as the config makes it load, so unknown kinds in claimed
/// groups are still caught.
/// An item of one of the built-in catalog's kinds under another group, or of a near miss of
/// one of its groups, loads it too: classify reports the mistake (issue 22).
fn catalogs_needed(fc: &FunctionConfig, items: &[Item], inline: &[(usize, &Value)]) -> bool {
    let builtin_groups = crate::builtin::groups();
    let builtin_kinds = crate::builtin::kinds();
    // Groups already found far from every built-in group: each is compared once.
    let mut far: HashSet<String> = HashSet::new();
    let mut touches_builtin = |item: &Item| {
        let gvk = gvk_of(item);
        if builtin_groups.contains(&gvk.group.as_str())
            || builtin_kinds.contains(&gvk.kind.as_str())
        {
            return true;
        }
        if is_kubernetes_group(&gvk.group) || far.contains(&gvk.group) {
            return false;
        }
        let near = crate::suggest::closest(&gvk.group, builtin_groups.iter().copied()).is_some();
        if !near {
            far.insert(gvk.group);
        }
        near
    };
    !fc.settings.catalogs.is_empty()
        || crate::env::catalogs_set()
        || !inline.is_empty()
        || matches!(fc.kind, ConfigKind::ServiceSet | ConfigKind::Other)
        || (fc.settings.builtin && items.iter().any(&mut touches_builtin))
}

/// The first item that may need a catalog that could not be loaded (KEP-2906
/// "Dependencies": a referenced catalog that nothing needs must not fail the run), saying why.
fn item_needing_more_catalogs<T: Fields>(
    items: &[T],
    catalog: &Catalog,
    fc: &FunctionConfig,
    config: Option<&Value>,
) -> Option<String> {
    let config_item =
        config.filter(|_| matches!(fc.kind, ConfigKind::ServiceSet | ConfigKind::Other));
    let mut candidates = items
        .iter()
        .map(|item| item as &dyn Fields)
        .chain(config_item.map(|c| c as &dyn Fields));
    candidates.find_map(|item| {
        if resource_list::has_function_annotation(item)
            || resource_list::annotation(item, GENERATED_FROM).is_some()
            || is_inline_catalog_item(item)
        {
            return None;
        }
        let gvk = gvk_of(item);
        let name = resource_list::str_at(item, &["metadata", "name"]);
        if is_service_set(item) {
            return Some(format!(
                "{gvk}/{name} materialises the services of every catalog"
            ));
        }
        // The orchestrators' own objects (a Kptfile, kpt's and kustomize's configs) never
        // need a catalog: blaming them for a missing one pointed users at the wrong file.
        if (gvk.group == config::GROUP && gvk.kind == config::KIND)
            || catalog.kind_for(&gvk).is_some()
            || is_kubernetes_group(&gvk.group)
            || is_orchestrator_group(&gvk.group)
        {
            return None;
        }
        if gvk.group == SERVICES_GROUP {
            return Some(format!(
                "{gvk}/{name} is a service kind no loaded catalog defines"
            ));
        }
        (!catalog.claims_group(&gvk.group)).then(|| {
            format!(
                "{gvk}/{name} is of group \"{}\", which no loaded catalog claims",
                gvk.group
            )
        })
    })
}

/// The configured local catalog paths that are relative, normalised (`./team/` → `team`):
/// package files under them belong to that catalog.
fn local_catalog_roots(
    settings: &crate::config::Settings,
    package: &std::path::Path,
) -> Vec<String> {
    let Some(package) = absolute(package) else {
        return Vec::new();
    };
    settings
        .catalogs
        .iter()
        .filter_map(|entry| match &entry.source {
            // Paths were rebased onto the config file's directory: take them relative to the
            // package again, as the orchestrator writes the files' own paths.
            CatalogRef::Path(p) => {
                let path = absolute(std::path::Path::new(p))?;
                let parts: Vec<&str> = path
                    .strip_prefix(&package)
                    .ok()?
                    .iter()
                    .map(|part| part.to_str())
                    .collect::<Option<_>>()?;
                (!parts.is_empty()).then(|| parts.join("/"))
            }
            _ => None,
        })
        .collect()
}

/// `path` joined to the working directory when relative, `.` and `..` taken out by their text
/// (the catalog may not exist yet: nothing is read).
fn absolute(path: &std::path::Path) -> Option<std::path::PathBuf> {
    use std::path::Component;
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let mut out = std::path::PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// Whether a package file path (relative, slash-separated) is one of `roots` or under one.
fn under_any(roots: &[String], path: &str) -> bool {
    let path = path.strip_prefix("./").unwrap_or(path);
    roots.iter().any(|root| {
        path == root
            || path
                .strip_prefix(root.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Groups of kpt's and kustomize's own kinds (`kpt.dev/v1` Kptfile, `fn.kpt.dev`,
/// `kustomize.config.k8s.io` is already a Kubernetes group).
fn is_orchestrator_group(group: &str) -> bool {
    group == "kpt.dev" || group.ends_with(".kpt.dev")
}

fn catalog_result(
    e: &CatalogError,
    field: Option<&str>,
    items: &[Item],
    config: Option<&Value>,
) -> KrmResult {
    if let Some(item) = e.item.and_then(|i| items.get(i)) {
        return KrmResult::of(e, Some(item));
    }
    // Not about an item: the message names the catalog, file and path itself.
    let mut r = KrmResult::new(e.severity(), e.to_string()).tag("catalog", e.source.clone());
    if let Some(file) = &e.file {
        r = r.tag("file", file.clone());
    }
    if let Some(cfg) = config {
        r = r.about(cfg);
    }
    if let Some(field) = field {
        r = r.at(field);
    }
    r
}

/// Issue 8 point 4: which items may need a catalog that could not be fetched.
#[cfg(test)]
mod unneeded_catalogs {
    use super::*;
    use serde_json::json;

    #[test]
    fn issue8_p4_an_unfetchable_catalog_is_needed_only_by_items_nothing_else_resolves() {
        let (catalog, errors) = Catalog::merge(vec![crate::builtin::bundle()], false);
        assert!(errors.is_empty(), "{errors:?}");
        let fc = config::parse(None);
        let need = |items: &[Value]| item_needing_more_catalogs(items, &catalog, &fc, None);
        let item = |api: &str, kind: &str| json!({"apiVersion": api, "kind": kind, "metadata": {"name": "x"}});
        let not_needed = [
            item("v1", "ConfigMap"),
            item("apps/v1", "Deployment"),
            item("networking.k8s.io/v1", "Ingress"),
            item("services.krm-catalog.dev/v1alpha1", "CertManager"),
            item("krm-catalog.dev/v1alpha1", "ResolveCatalog"),
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x",
                "annotations": {"config.kubernetes.io/function": "container: {image: x}"}}}),
        ];
        assert_eq!(need(&not_needed), None);
        assert_eq!(
            need(&[item("example.com/v1", "Widget")]).as_deref(),
            Some(
                "example.com/v1/Widget/x is of group \"example.com\", which no loaded catalog claims"
            )
        );
        assert_eq!(
            need(&[item("services.krm-catalog.dev/v1alpha1", "Greeter")]).as_deref(),
            Some(
                "services.krm-catalog.dev/v1alpha1/Greeter/x is a service kind no loaded catalog defines"
            )
        );
        assert_eq!(
            need(&[item("services.krm-catalog.dev/v1alpha1", "ServiceSet")]).as_deref(),
            Some(
                "services.krm-catalog.dev/v1alpha1/ServiceSet/x materialises the services of every catalog"
            )
        );
    }
}

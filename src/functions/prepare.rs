//! What a function-backed item becomes (SPEC §7.3): in `pin` mode the verified runtime is
//! written onto the item as the annotation kustomize and kpt run natively; in `run` mode it
//! becomes a [`Program`] that runs as a step over the current items (`run`); a runtime that
//! cannot be used is an error result.

use serde_json::Value;

use std::path::{Path, PathBuf};

use super::run::Program;
use super::{RegistryCheck, describe, exec, image, starlark};
use crate::catalog::Origin;
use crate::catalog::kep::Runtime;
use crate::config::{Mode, Mount, Settings};
use crate::remote::Remote;
use crate::resource_list;
use crate::results::{KrmResult, Results};

/// What a function-backed item becomes.
pub enum Step {
    /// Pin mode: the item with its runtime annotation.
    Pinned(Value),
    /// Run mode: run this program with the item as function config.
    Run(Program),
    /// It cannot be used; the results say why.
    Failed,
}

/// Where a run's relative paths resolve. They differ under `kpt fn render PKG` started
/// elsewhere: kpt runs exec functions in its own directory and names the package in
/// `internal.config.kubernetes.io/package-path` (`pipeline::input::RunContext`).
#[derive(Debug, Clone, Copy)]
pub struct Dirs<'a> {
    /// The working directory: paths of the function config (rebased to the file declaring
    /// it), and where an exec function runs.
    pub cwd: &'a Path,
    /// The package the items are files of: what inline catalogs, an item's own runtime and
    /// mounts may name.
    pub package: &'a Path,
}

/// Where the `file://` URIs of a catalog's exec runtimes may point (SPEC §7.3): inside the
/// directory of a local catalog (the directory of a single-file one); inside the package for
/// inline catalogs; nowhere for remote and built-in catalogs.
fn exec_root(origin: &Origin, dirs: Dirs<'_>) -> Option<PathBuf> {
    match origin {
        Origin::Path(label) => {
            let path = crate::env::resolve_path(dirs.cwd, label);
            if path.is_dir() {
                Some(path)
            } else {
                path.parent().map(Path::to_path_buf)
            }
        }
        // `/` is no package (a container kpt or kustomize runs without mounts), and reading
        // the image's own files is not what a package meant.
        Origin::Inline if dirs.package != Path::new("/") => Some(dirs.package.to_path_buf()),
        Origin::Inline | Origin::Builtin | Origin::Url(_) | Origin::Oci(_) | Origin::Git { .. } => {
            None
        }
    }
}

/// `file` relative to the package directory, `/`-separated, when it is inside it (links
/// resolved on both sides).
pub(super) fn package_path(file: &Path, package: &Path) -> Option<String> {
    let file = fs_err::canonicalize(file).ok()?;
    let package = fs_err::canonicalize(package).ok()?;
    let relative = file.strip_prefix(&package).ok()?;
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_str().map(str::to_owned))
        .collect::<Option<_>>()?;
    Some(parts.join("/"))
}

/// Verify a runtime and decide what to do with the item, per `functions` settings. `origin`
/// is the catalog that maps the item's kind to the runtime.
pub fn prepare(
    item: &Value,
    runtime: &Runtime,
    origin: &Origin,
    settings: &Settings,
    remote: &Remote,
    dirs: Dirs<'_>,
    results: &mut Results,
) -> Step {
    let f = &settings.functions;
    // Package contents may not choose a binary to run unless the config says they may.
    let exec_allowed = f.allow_exec && (f.allow_inline_exec || *origin != Origin::Inline);
    if let Runtime::Choice { container, exec } = runtime {
        // The binary only where it may and can run here; the image everywhere else.
        let exec_fits = f.mode == Mode::Run
            && exec_allowed
            && matches!(exec.as_ref(), Runtime::Exec { platforms } if exec::select(platforms).is_ok());
        let chosen = if exec_fits { exec } else { container };
        return prepare(item, chosen, origin, settings, remote, dirs, results);
    }
    let fail = |results: &mut Results, message: String| {
        results.push(
            KrmResult::error(message)
                .about(item)
                .at("kind")
                .tag("runtime", describe(runtime)),
        );
        Step::Failed
    };
    match runtime {
        Runtime::Service { .. } | Runtime::Choice { .. } => Step::Failed,
        Runtime::Starlark {
            source,
            local,
            sha256,
        } => {
            // A `path` is a file of a catalog on this machine (the root exec `file://` URIs
            // have); a remote or built-in catalog names its script by URL and sha256.
            let root = exec_root(origin, dirs);
            if *local && root.is_none() {
                return fail(
                    results,
                    format!(
                        "starlark path {source}: a script named by path must be a file of a local catalog (a path in the function config, or an inline catalog); the {} must name it by url with its sha256",
                        origin.label()
                    ),
                );
            }
            if f.mode == Mode::Run && *origin == Origin::Inline && !f.allow_inline_exec {
                return fail(
                    results,
                    "this kind runs a Starlark script named by an inline catalog (an item of the input), so the package chooses what runs on this machine; set functions.allowInlineExec: true to allow it, or move the catalog out of the package into spec.catalogs".to_owned(),
                );
            }
            if f.mode == Mode::Pin && !*local {
                return fail(
                    results,
                    format!(
                        "starlark script {source} comes from a URL, which cannot be pinned: kustomize loads pinned Starlark scripts by path only (and without checking a digest); use functions.mode: run, which verifies the script's sha256 and runs it here, sandboxed"
                    ),
                );
            }
            let text = match starlark::load_script(
                source,
                *local,
                sha256.as_deref(),
                remote,
                root.as_deref(),
            ) {
                Ok(text) => text,
                Err(e) => return fail(results, e.to_string()),
            };
            match f.mode {
                Mode::Run => Step::Run(Program::Starlark {
                    script: source.clone(),
                    source: text,
                    // A file the package points at may be anything: its errors quote none of it.
                    redact: *origin == Origin::Inline,
                }),
                Mode::Pin => {
                    let in_package = root
                        .as_deref()
                        .and_then(|root| package_path(&root.join(source), dirs.package));
                    let Some(path) = in_package else {
                        return fail(
                            results,
                            format!(
                                "starlark path {source} is outside the package {}: kustomize loads Starlark scripts only from inside the kustomization directory; use functions.mode: run",
                                dirs.package.display()
                            ),
                        );
                    };
                    results.push(
                        KrmResult::warning(format!(
                            "pinned starlark script {path} runs only under the standalone `kustomize build --enable-alpha-plugins --enable-star` of kustomize v5.4 or older (v5.5.0 removed Starlark functions, kustomize PR #5768; kubectl kustomize has no --enable-star and kpt does not read the annotation); functions.mode: run runs it here"
                        ))
                        .about(item)
                        .at("kind")
                        .tag("runtime", describe(runtime)),
                    );
                    let mut pinned_item = item.clone();
                    resource_list::set_annotation(
                        &mut pinned_item,
                        resource_list::FUNCTION,
                        &starlark::function_annotation(&path),
                    );
                    Step::Pinned(pinned_item)
                }
            }
        }
        Runtime::Container {
            image,
            sha256,
            require_network,
            require_storage_mount,
            public_key,
            keyless,
        } => {
            if *require_network && !f.allow_network {
                return fail(
                    results,
                    format!(
                        "{image} requires the network; set functions.allowNetwork: true to allow it"
                    ),
                );
            }
            // The same rule pins and runs (issue 22): a runtime that requires storage gets the
            // mounts the config lists, and without one it is refused.
            if *require_storage_mount && f.mounts.is_empty() {
                return fail(results, mount_refused(image));
            }
            let mounts: &[Mount] = if *require_storage_mount {
                &f.mounts
            } else {
                &[]
            };
            let pinned =
                match image::verify_container(image, sha256.as_deref(), f.allow_unpinned, None) {
                    Ok(p) => p,
                    Err(e) => return fail(results, e.to_string()),
                };
            // verifyTags is our own registry access, not the network of the containers we run
            // (allowNetwork): it never depends on allowNetwork and is never skipped.
            if f.verify_tags
                && let Err(e) = image::check_registry(&pinned, remote)
            {
                return fail(results, verify_tags_failed(e));
            }
            // A runtime that names a public key runs (or is pinned) only when signed by it.
            match image::check_signature(&pinned, public_key.as_deref(), keyless.as_ref(), remote) {
                Ok(signers) => {
                    for signer in signers {
                        crate::log!(
                            crate::logger::Level::Info,
                            "{}: signed by {signer}",
                            pinned.reference()
                        );
                    }
                }
                Err(e) => return fail(results, e),
            }
            for w in &pinned.warnings {
                results.push(KrmResult::warning(w.clone()).about(item).at("kind"));
            }
            match f.mode {
                Mode::Pin => {
                    let mut pinned_item = item.clone();
                    let annotation = image::function_annotation(
                        &pinned,
                        *require_network && f.allow_network,
                        mounts,
                    );
                    resource_list::set_annotation(
                        &mut pinned_item,
                        resource_list::FUNCTION,
                        &annotation,
                    );
                    Step::Pinned(pinned_item)
                }
                Mode::Run => {
                    let mounts = match bind_sources(mounts, dirs.package) {
                        Ok(mounts) => mounts,
                        Err(message) => return fail(results, message),
                    };
                    Step::Run(Program::Container {
                        engine: f.container_engine.clone(),
                        image: pinned.reference(),
                        network: *require_network && f.allow_network,
                        mounts,
                    })
                }
            }
        }
        Runtime::Exec { platforms } => {
            if f.mode == Mode::Pin {
                return fail(results, "exec runtimes cannot be pinned portably (kustomize and kpt resolve exec paths on their own machine); use functions.mode: run with allowExec".to_owned());
            }
            if !f.allow_exec {
                return fail(
                    results,
                    "this kind runs an exec binary; set functions.allowExec: true to allow it"
                        .to_owned(),
                );
            }
            if !exec_allowed {
                return fail(
                    results,
                    "this kind runs an exec binary named by an inline catalog (an item of the input), so the package chooses what runs on this machine; set functions.allowInlineExec: true to allow it, or move the catalog out of the package into spec.catalogs".to_owned(),
                );
            }
            let platform = match exec::select(platforms) {
                Ok(p) => p,
                Err(e) => return fail(results, e.to_string()),
            };
            let root = exec_root(origin, dirs);
            if root.is_none() && platform.uri.starts_with("file://") {
                return fail(
                    results,
                    format!(
                        "{}: `file://` URIs are allowed only in local catalogs (a path in the function config, or an inline catalog); the {} cannot name a file on this machine",
                        platform.uri,
                        origin.label()
                    ),
                );
            }
            match exec::prepare(platform, remote, root.as_deref()) {
                Ok(path) => Step::Run(Program::Exec {
                    path,
                    cwd: dirs.cwd.to_path_buf(),
                }),
                Err(e) => fail(results, e.to_string()),
            }
        }
    }
}

/// Why a runtime that requires a storage mount is refused, in pin and run mode alike.
pub(super) fn mount_refused(image: &str) -> String {
    format!(
        "{image} requires a storage mount; allow it by giving one: functions.mounts: [{{type: bind, src: DIR, dst: PATH}}] (ConfigMap key mounts: type=bind,src=DIR,dst=PATH, as kpt's --mount), DIR a directory of the package, read-only unless rw: true"
    )
}

/// The mounts of a run: each source a directory inside the `package` (links resolved),
/// as kustomize allows only directories of the kustomization.
fn bind_sources(mounts: &[Mount], package: &Path) -> Result<Vec<(PathBuf, String, bool)>, String> {
    mounts
        .iter()
        .map(|m| {
            let path = package.join(&m.src);
            let inside = package_path(&path, package).is_some() && path.is_dir();
            if !inside {
                return Err(format!(
                    "functions.mounts: src \"{}\" is not a directory inside the package {}",
                    m.src,
                    package.display()
                ));
            }
            let abs = fs_err::canonicalize(&path).map_err(|e| e.to_string())?;
            Ok((abs, m.dst.clone(), m.rw))
        })
        .collect()
}

/// The message of a failed `functions.verifyTags` check: a moved tag as it is; a registry
/// that could not be asked with what to do instead, since no cache can stand in for a tag
/// lookup (tags move; that is what the check is for).
fn verify_tags_failed(e: RegistryCheck) -> String {
    match e {
        RegistryCheck::Lookup(m) => format!(
            "functions.verifyTags: {m}; tag checks need the registry (allowNetwork, the network of the functions, does not matter): run `krm-catalog catalog verify CATALOG` where the registry is reachable, and leave verifyTags off in offline and network-less runs (kpt and kustomize run container functions without network)"
        ),
        moved => moved.to_string(),
    }
}

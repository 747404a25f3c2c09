//! `catalog pull`: a cache prepared for offline and network-less container runs (SPEC §7.2):
//! the catalogs, and the runtimes a run would fetch (exec binaries for the chosen platforms,
//! Starlark scripts named by URL).

use std::fmt::Write as _;
use std::path::PathBuf;

use super::error::{parse_reference, problems};
use super::{CliError, Stdout, error};
use crate::catalog::{self, Bundle};
use crate::catalog_ref::CatalogRef;
use crate::logger::Level;

/// `os/arch` of `--platform`, checked against the KEP's names.
pub(super) fn parse_platform(text: &str) -> Result<(String, String), CliError> {
    const OS: [&str; 3] = ["linux", "darwin", "windows"];
    const ARCH: [&str; 2] = ["amd64", "arm64"];
    match text.split_once('/') {
        Some((os, arch)) if OS.contains(&os) && ARCH.contains(&arch) => {
            Ok((os.to_owned(), arch.to_owned()))
        }
        _ => Err(CliError::Usage(format!(
            "--platform {text}: expected OS/ARCH with OS one of {} and ARCH one of {}, e.g. linux/amd64",
            OS.join(", "),
            ARCH.join(", ")
        ))),
    }
}

/// A pulled catalog (remote: fetched into the cache; local: loaded) and the root its
/// `file://` URIs resolve in (none for remote and built-in catalogs).
fn load_for_pull(
    reference: &str,
    remote: &crate::remote::Remote,
) -> Result<(Bundle, Option<PathBuf>), CliError> {
    let source = parse_reference(reference)?;
    let (bundle, root) = match &source {
        _ if reference == "builtin" => (crate::builtin::bundle(), None),
        CatalogRef::Path(p) => {
            let path = std::path::Path::new(p);
            (
                Bundle::from_path(p, path),
                Some(crate::functions::lock::catalog_root(path)),
            )
        }
        _ => (remote.pull(&source)?, None),
    };
    if bundle
        .problems
        .iter()
        .all(catalog::CatalogError::is_warning)
    {
        Ok((bundle, root))
    } else {
        let errors = problems(&bundle).into_iter();
        Err(CliError::Problems(
            errors
                .filter(|(s, _)| *s == crate::results::Severity::Error)
                .collect(),
        ))
    }
}

/// Download, verify and install in the cache the exec binaries of `bundle`'s kinds for
/// `platforms` and its Starlark scripts named by URL, as a run would
/// (`runtime::exec::prepare`, `starlark::load_script`), so an offline run finds them.
/// Returns a line per binary; failures are said on stderr and counted in `failed`.
fn pull_runtimes(
    bundle: &Bundle,
    root: Option<&std::path::Path>,
    platforms: &crate::functions::exec::PullPlatforms,
    remote: &crate::remote::Remote,
    failed: &mut bool,
) -> Vec<String> {
    use crate::catalog::kep::Runtime;
    let mut lines = Vec::new();
    // An entry-level runtime is every version's: each binary once.
    let mut seen = std::collections::BTreeSet::new();
    for entry in &bundle.functions {
        let f = &entry.function;
        for version in &f.versions {
            let gvk = f.gvk(version);
            for part in version.runtime.parts() {
                // A script named by URL is fetched by a run: cache it now (a `path` is a
                // file of the catalog itself).
                if let Runtime::Starlark {
                    source,
                    local: false,
                    sha256,
                } = part
                {
                    if !seen.insert((source.clone(), sha256.clone(), String::new())) {
                        continue;
                    }
                    match crate::functions::starlark::load_script(
                        source,
                        false,
                        sha256.as_deref(),
                        remote,
                        root,
                    ) {
                        Ok(_) => lines.push(format!("pulled starlark script of {gvk} ({source})")),
                        Err(error) => {
                            crate::log!(Level::Error, "{gvk}: starlark script {source}: {error}");
                            *failed = true;
                        }
                    }
                    continue;
                }
                let Runtime::Exec { platforms: list } = part else {
                    continue;
                };
                let (chosen, missing) = platforms.select(list);
                for m in missing {
                    crate::log!(
                        Level::Warn,
                        "{gvk}: no exec binary for {m} (the catalog has {}); a run on {m} cannot use this runtime",
                        list.iter()
                            .map(|p| format!("{}/{}", p.os, p.arch))
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
                for p in chosen {
                    if !seen.insert((p.uri.clone(), p.sha256.clone(), p.bin.clone())) {
                        continue;
                    }
                    match crate::functions::exec::prepare(p, remote, root) {
                        Ok(path) => lines.push(format!(
                            "pulled exec binary of {gvk} for {}/{} ({}) into {}",
                            p.os,
                            p.arch,
                            p.uri,
                            path.display()
                        )),
                        Err(error) => {
                            error::print(&CliError::ExecBinary {
                                kind: gvk.to_string(),
                                platform: format!("{}/{}", p.os, p.arch),
                                error: Box::new(error),
                            });
                            *failed = true;
                        }
                    }
                }
            }
        }
    }
    lines
}

pub(super) fn catalog_pull(
    references: &[String],
    platforms: &crate::functions::exec::PullPlatforms,
) -> Result<(), CliError> {
    let remote = crate::remote::Remote::new(false);
    // Pulling is filling the cache: one that cannot be written fails before any download.
    remote
        .cache()
        .check_writable()
        .map_err(crate::remote::RemoteError::from)?;
    let mut failed = false;
    let mut out = String::new();
    for reference in references {
        // Each reference on its own: one that fails is said, and the others are pulled.
        match load_for_pull(reference, &remote) {
            Ok((bundle, root)) => {
                let what = format!(
                    "{} services, {} function kinds, content sha256:{}",
                    bundle.definitions.len(),
                    bundle.functions.len(),
                    bundle.digest
                );
                if root.is_none() && reference != "builtin" {
                    let _ = writeln!(
                        out,
                        "pulled {reference} ({what}) into {}",
                        remote.cache().describe()
                    );
                    // A cosign signature comes along, for an offline run's key to check.
                    if let Ok(CatalogRef::Oci(r)) = reference.parse::<CatalogRef>()
                        && let (Ok(parsed), Some(pin)) =
                            (crate::catalog_ref::OciRef::parse(&r), &bundle.pin)
                    {
                        match remote.fetch_signature(&parsed.name(), &pin.to_string()) {
                            Ok(Some(_)) => {
                                let tag = crate::remote::cosign::signature_tag(&pin.to_string());
                                let _ = writeln!(
                                    out,
                                    "  cosign signature {tag}: cached (checked by a run whose trustedCatalogs entry names its key)"
                                );
                            }
                            Ok(None) => {}
                            Err(e) => {
                                error::print(&CliError::from(e));
                                failed = true;
                            }
                        }
                    }
                } else {
                    let _ = writeln!(
                        out,
                        "loaded {reference} ({what}): local, nothing to fetch but exec binaries"
                    );
                }
                for line in pull_runtimes(&bundle, root.as_deref(), platforms, &remote, &mut failed)
                {
                    let _ = writeln!(out, "{line}");
                }
            }
            Err(e) => {
                error::print(&e);
                failed = true;
            }
        }
    }
    Stdout::print(&out)?;
    if failed {
        Err(CliError::Reported)
    } else {
        Ok(())
    }
}

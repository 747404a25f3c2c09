//! `catalog lock` and `catalog verify` (SPEC §7.4): fill in every missing digest of a catalog
//! (images from their registry, binaries and Starlark scripts from their download; KEP
//! catalogs and `KRMFunctionDefinition`s alike) by inserting `sha256:` lines next to what they
//! pin, so comments and layout survive, and the commits of a function config's Git sources
//! ([`super::lock_git`]); and check every digest, one line per runtime, failing on any
//! mismatch — the CI gate.

use std::path::{Path, PathBuf};

use super::edit::{Locked, expand_scalar, insert_sibling_where};
use super::{EditProof, RegistryCheck, RuntimeError};
use crate::catalog::kep::{self, Runtime};
use crate::catalog_ref::OciRef;
use crate::remote::Remote;
use crate::verify::sha256_hex;

/// One runtime's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// `ok`, `MISMATCH`, `UNPINNED` or `ERROR`.
    pub status: &'static str,
    /// The kind (group/version/kind) it backs.
    pub kind: String,
    /// `os/arch` of an exec binary.
    pub platform: Option<String>,
    /// The `sha256:<hex>` digest the catalog pins it to, when it pins one.
    pub digest: Option<String>,
    /// What was checked and what was found.
    pub detail: String,
}

impl Check {
    /// A check of `kind` without platform or pinned digest (those are set where known).
    fn new(status: &'static str, kind: String, detail: String) -> Self {
        Self {
            status,
            kind,
            platform: None,
            digest: None,
            detail,
        }
    }
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:<8} {}", self.status, self.kind)?;
        if let Some(platform) = &self.platform {
            write!(f, " ({platform})")?;
        }
        write!(f, "  {}", self.detail)
    }
}

/// Check a Starlark runtime: a script from a URL needs its sha256 and must match it; a `path`
/// must be a readable file of the catalog (and match its sha256 when one is declared).
fn verify_starlark(
    source: &str,
    local: bool,
    sha256: Option<&str>,
    kind: String,
    remote: &Remote,
    root: Option<&Path>,
) -> Check {
    let uri = if local {
        format!("file://{source}")
    } else {
        source.to_owned()
    };
    let Some(declared) = sha256 else {
        if !local {
            return Check::new(
                "UNPINNED",
                kind,
                format!("starlark {source}: no sha256; run `krm-catalog catalog lock`"),
            );
        }
        return match super::exec::fetch(&uri, remote, root, None) {
            Ok(_) => Check::new(
                "ok",
                kind,
                format!("starlark {source} (a file of this catalog)"),
            ),
            Err(e) => Check::new("ERROR", kind, format!("starlark {source}: {e}")),
        };
    };
    let declared = declared.trim_start_matches("sha256:").to_owned();
    let check = match super::exec::fetch(&uri, remote, root, None) {
        Ok(bytes) if sha256_hex(&bytes) == declared => {
            Check::new("ok", kind, format!("starlark {source} sha256:{declared}"))
        }
        Ok(bytes) => Check::new(
            "MISMATCH",
            kind,
            format!(
                "starlark {source}: expected sha256:{declared}, downloaded sha256:{}",
                sha256_hex(&bytes)
            ),
        ),
        Err(e) => Check::new("ERROR", kind, format!("starlark {source}: {e}")),
    };
    Check {
        digest: Some(format!("sha256:{declared}")),
        ..check
    }
}

/// Check every runtime of KEP entries (the bundle's `functions`).
/// `services` are the ServiceDefinition names of the same catalog (for `service` runtimes);
/// `root` is the catalog's root for `file://` URIs, `None` for a remote catalog (see
/// [`super::exec::fetch`]).
pub fn verify(
    functions: &[kep::Function],
    services: &[String],
    remote: &Remote,
    root: Option<&Path>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    for function in functions {
        for version in &function.versions {
            for runtime in version.runtime.parts() {
                let kind = function.gvk(version).to_string();
                match runtime {
                    Runtime::Service { name } if services.contains(name) => checks.push(
                        Check::new("ok", kind, format!("service {name} (part of this catalog)")),
                    ),
                    Runtime::Service { name } => checks.push(Check::new(
                        "ERROR",
                        kind,
                        format!(
                            "service {name}: no ServiceDefinition of that name in this catalog"
                        ),
                    )),
                    Runtime::Choice { .. } => {}
                    Runtime::Starlark {
                        source,
                        local,
                        sha256,
                    } => checks.push(verify_starlark(
                        source,
                        *local,
                        sha256.as_deref(),
                        kind,
                        remote,
                        root,
                    )),
                    Runtime::Container {
                        image,
                        sha256,
                        public_key,
                        keyless,
                        ..
                    } => {
                        let has_digest = sha256.is_some() || image.contains("@sha256:");
                        let pinned = sha256
                            .as_deref()
                            .and_then(|d| super::normalize_digest(d).ok())
                            .or_else(|| {
                                OciRef::parse(image.trim())
                                    .ok()
                                    .and_then(|r| r.digest().map(ToString::to_string))
                            });
                        let check = if has_digest {
                            match super::verify_container(
                                image,
                                sha256.as_deref(),
                                false,
                                Some(remote),
                            ) {
                                Ok(p) => match super::image::check_signature(
                                    &p,
                                    public_key.as_deref(),
                                    keyless.as_ref(),
                                    remote,
                                ) {
                                    Ok(signers) if signers.is_empty() => Check::new(
                                        "ok",
                                        kind,
                                        format!("container {}", p.reference()),
                                    ),
                                    Ok(signers) => Check::new(
                                        "ok",
                                        kind,
                                        format!(
                                            "container {}, signed: {}",
                                            p.reference(),
                                            signers
                                                .iter()
                                                .map(ToString::to_string)
                                                .collect::<Vec<_>>()
                                                .join(", ")
                                        ),
                                    ),
                                    Err(e) => Check::new("UNSIGNED", kind, e),
                                },
                                Err(
                                    e @ (RuntimeError::PinConflict { .. }
                                    | RuntimeError::Registry(RegistryCheck::TagMoved { .. })),
                                ) => Check::new("MISMATCH", kind, e.to_string()),
                                Err(e) => Check::new("ERROR", kind, e.to_string()),
                            }
                        } else {
                            Check::new(
                                "UNPINNED",
                                kind,
                                format!(
                                    "container {image}: no digest; run `krm-catalog catalog lock`"
                                ),
                            )
                        };
                        checks.push(Check {
                            digest: pinned,
                            ..check
                        });
                    }
                    Runtime::Exec { platforms } => {
                        for p in platforms {
                            let kind = kind.clone();
                            let platform = Some(format!("{}/{}", p.os, p.arch));
                            let Some(declared) = &p.sha256 else {
                                checks.push(Check {
                                    status: "UNPINNED",
                                    kind,
                                    platform,
                                    digest: None,
                                    detail: format!(
                                        "exec {}: no sha256; run `krm-catalog catalog lock`",
                                        p.uri
                                    ),
                                });
                                continue;
                            };
                            let declared = declared.trim_start_matches("sha256:").to_owned();
                            let check = match super::exec::fetch(&p.uri, remote, root, Some(p)) {
                                Ok(bytes) if sha256_hex(&bytes) == declared => Check::new(
                                    "ok",
                                    kind,
                                    format!("exec {} sha256:{declared}", p.uri),
                                ),
                                Ok(bytes) => Check::new(
                                    "MISMATCH",
                                    kind,
                                    format!(
                                        "exec {}: expected sha256:{declared}, downloaded sha256:{}",
                                        p.uri,
                                        sha256_hex(&bytes)
                                    ),
                                ),
                                Err(e) => Check::new("ERROR", kind, format!("exec {}: {e}", p.uri)),
                            };
                            checks.push(Check {
                                platform,
                                digest: Some(format!("sha256:{declared}")),
                                ..check
                            });
                        }
                    }
                }
            }
        }
    }
    checks
}

/// A file [`lock`] reads.
struct LockFile {
    path: PathBuf,
    /// Picked only because it may be a function config with Git sources (it mentions
    /// `catalogs` and `git`): a file that is not YAML after all is passed over, not an error.
    maybe: bool,
}

/// The YAML files of a local catalog or package that hold KEP documents, and those that may be
/// function configs with Git catalog sources. The walk stays inside `root`: symbolic links are
/// not followed (a link could lead the edit out of the catalog, or into a loop), and each
/// directory is entered once (by device and inode, against bind-mount loops).
fn lock_files(root: &Path) -> Result<Vec<LockFile>, RuntimeError> {
    let meta = fs_err::metadata(root)?;
    if !meta.is_dir() {
        return Ok(vec![LockFile {
            path: root.to_path_buf(),
            maybe: false,
        }]);
    }
    let mut files = Vec::new();
    let mut visited = std::collections::HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if !visited.insert(crate::walk::dir_id(&dir)?) {
            continue;
        }
        for entry in fs_err::read_dir(&dir)? {
            let entry = entry.map_err(|e| at(&dir, e))?;
            let path = entry.path();
            let kind = entry.file_type().map_err(|e| at(&path, e))?;
            let yaml = crate::yaml::is_yaml_file(&path.to_string_lossy());
            if kind.is_symlink() {
                if yaml || fs_err::metadata(&path).is_ok_and(|m| m.is_dir()) {
                    crate::log!(
                        crate::logger::Level::Warn,
                        "{}: a symbolic link; `catalog lock` does not follow links (lock the catalog it points to on its own)",
                        path.display()
                    );
                }
            } else if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && yaml {
                let text = fs_err::read_to_string(&path)?;
                // KEP catalogs and KRMFunctionDefinitions (one function each).
                if text.contains("krmFunctions") || text.contains(kep::DEFINITION_KIND) {
                    files.push(LockFile { path, maybe: false });
                } else if text.contains("catalogs") && text.contains("git") {
                    files.push(LockFile { path, maybe: true });
                }
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The root `file://` URIs of a local catalog resolve in: the catalog directory, or the
/// directory of a single-file catalog.
pub fn catalog_root(path: &Path) -> PathBuf {
    if path.is_dir() {
        return path.to_path_buf();
    }
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The functions of a KEP catalog document or a `KRMFunctionDefinition`, `None` for another
/// document.
fn kep_functions(doc: &serde_json::Value) -> Option<Result<Vec<kep::Function>, String>> {
    fn problems<T: std::fmt::Display>(list: &[T]) -> String {
        let list: Vec<String> = list.iter().map(ToString::to_string).collect();
        list.join("; ")
    }
    if kep::is_kep_catalog(doc) {
        Some(kep::parse(doc).map(|(_, f)| f).map_err(|p| problems(&p)))
    } else if kep::is_function_definition(doc) {
        Some(
            kep::parse_definition(doc)
                .map(|(_, f)| vec![f])
                .map_err(|p| problems(&p)),
        )
    } else {
        None
    }
}

/// The edits of one file so far.
struct FileEdit<'a> {
    file: &'a Path,
    text: String,
    /// Lines added so far, all in this or earlier documents: where a document starts now.
    added: usize,
}

/// Fill in missing pins at `root`: in a catalog (a directory or file), the digests of its
/// runtimes (KEP catalogs and `KRMFunctionDefinition`s); in a function config file, the
/// commits of its Git sources ([`super::lock_git`]). Every edit is made and proven before any
/// file is written, so an error writes nothing. Returns one line per pin written or found.
pub fn lock(root: &Path, remote: &Remote) -> Result<Vec<Locked>, RuntimeError> {
    let mut report = Vec::new();
    let mut writes = Vec::new();
    let catalog_root = catalog_root(root);
    let locked = |report: &[Locked]| report.iter().filter(|l| l.status == "locked").count();
    for LockFile { path: file, maybe } in lock_files(root)? {
        let original = fs_err::read_to_string(&file)?;
        let docs = match crate::yaml::parse_stream(&original) {
            Ok(docs) => docs,
            Err(e) if maybe => {
                crate::log!(
                    crate::logger::Level::Info,
                    "{}: not YAML ({e}), passed over",
                    file.display()
                );
                continue;
            }
            Err(e) => return Err(at(&file, e)),
        };
        let mut edit = FileEdit {
            file: &file,
            text: original.clone(),
            added: 0,
        };
        let before = locked(&report);
        let mut git = false;
        for doc in &docs {
            let from = (doc.line + edit.added).saturating_sub(1);
            if let Some(functions) = kep_functions(&doc.value) {
                let functions = functions.map_err(|p| at(&file, p))?;
                lock_runtimes(
                    &functions,
                    from,
                    &mut edit,
                    remote,
                    &catalog_root,
                    &mut report,
                )?;
            } else if let Some(config) = super::lock_git::config_of(&doc.value) {
                let pins = locked(&report);
                edit.added += super::lock_git::lock(
                    &file,
                    &config,
                    &mut edit.text,
                    from,
                    remote,
                    &mut report,
                )?;
                git |= locked(&report) > pins;
            }
        }
        if edit.text != original {
            // Prove the edit before writing: the file must still parse to the same documents
            // plus the new pins.
            let edited = crate::yaml::parse_stream(&edit.text).map_err(|e| {
                RuntimeError::LockedUnparsable {
                    file: file.display().to_string(),
                    reason: e.to_string(),
                }
            })?;
            prove_edit(&docs, &edited, locked(&report) - before, git).map_err(|reason| {
                RuntimeError::Unproven {
                    file: file.display().to_string(),
                    reason,
                }
            })?;
            super::edit::check_writable(&file)?;
            writes.push((file.clone(), edit.text));
        }
    }
    for (file, text) in writes {
        super::edit::replace_file(&file, &text)?;
    }
    Ok(report)
}

/// Pin the runtimes of one KEP document (lines from `from` on): image digests from their
/// registry, exec binaries and Starlark scripts from a URL by the sha256 of their download.
/// A Starlark `path` is left alone: a file of the catalog, trusted as the catalog is.
fn lock_runtimes(
    functions: &[kep::Function],
    from: usize,
    edit: &mut FileEdit<'_>,
    remote: &Remote,
    catalog_root: &Path,
    report: &mut Vec<Locked>,
) -> Result<(), RuntimeError> {
    let file = edit.file;
    let pin = |edit: &mut FileEdit<'_>,
               report: &mut Vec<Locked>,
               key: &'static str,
               value: &str,
               hex: &str|
     -> Result<(), RuntimeError> {
        edit.text = insert_sibling_where(&edit.text, from, key, value, "sha256", hex, |_| true)
            .ok_or_else(|| not_in_block_style(file, key, value))?;
        edit.added += 1;
        report.push(Locked::written(format!(
            "{}: {value} → sha256:{hex}",
            file.display()
        )));
        Ok(())
    };
    for function in functions {
        for runtime in function.versions.iter().flat_map(|v| v.runtime.parts()) {
            match runtime {
                Runtime::Container {
                    image,
                    sha256: None,
                    ..
                } if !image.contains("@sha256:") => {
                    let parsed = crate::catalog_ref::OciRef::parse(image.trim())?;
                    let digest = remote.net_manifest_digest(&parsed.tagged())?;
                    let hex = digest.trim_start_matches("sha256:").to_owned();
                    pin(edit, report, "image", image, &hex)?;
                }
                Runtime::Exec { platforms } => {
                    for p in platforms.iter().filter(|p| p.sha256.is_none()) {
                        let bytes =
                            super::exec::fetch(&p.uri, remote, Some(catalog_root), Some(p))?;
                        pin(edit, report, "uri", &p.uri, &sha256_hex(&bytes))?;
                    }
                }
                Runtime::Starlark {
                    source,
                    local: false,
                    sha256: None,
                } => {
                    // The download a run makes (bounded, https or loopback http, `file://`
                    // inside the catalog), and the text a run would accept.
                    let bytes = super::exec::fetch(source, remote, Some(catalog_root), None)?;
                    if std::str::from_utf8(&bytes).is_err() {
                        return Err(RuntimeError::StarlarkNotUtf8(source.clone()));
                    }
                    let hex = sha256_hex(&bytes);
                    // The KEP's URL string becomes `{url, sha256}`; `{url}` gains `sha256`.
                    if let Some(text) =
                        expand_scalar(&edit.text, from, "starlark", source, "url", "sha256", &hex)
                    {
                        edit.text = text;
                        edit.added += 2;
                        report.push(Locked::written(format!(
                            "{}: {source} → sha256:{hex}",
                            file.display()
                        )));
                    } else {
                        pin(edit, report, "url", source, &hex)?;
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Something wrong at a path, said after it.
fn at(path: &Path, reason: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::At {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

fn not_in_block_style(file: &Path, key: &'static str, value: &str) -> RuntimeError {
    RuntimeError::NotInBlockStyle {
        file: file.display().to_string(),
        key,
        value: value.to_owned(),
    }
}

/// The edited documents must be the original ones with exactly `added` new pins and nothing
/// else changed, and nothing they pin may still lack its pin: a text edit that landed
/// elsewhere (the same `uri:` line in a template's block scalar) would otherwise change a
/// template and report the runtime locked while it is not. A pin is a `sha256` key beside
/// `image`, `uri` or `url`; a `starlark` URL string turned into `{url: <it>, sha256}`; a
/// `commit` key beside a Git source's `url` and `ref`; `&commit=<id>` added to an entry of
/// a `catalogs` string list. `git`: whether Git sources were pinned (the message then says
/// so).
fn prove_edit(
    original: &[crate::yaml::Document],
    edited: &[crate::yaml::Document],
    added: usize,
    git: bool,
) -> Result<(), EditProof> {
    use serde_json::Value;
    /// How many `&commit=<id>` `new` adds to `old`, with nothing else changed.
    fn commits_added(old: &str, new: &str) -> Option<usize> {
        let (old, new) = (old.as_bytes(), new.as_bytes());
        let (mut i, mut j, mut count) = (0, 0, 0);
        while j < new.len() {
            if i < old.len() && old[i] == new[j] {
                i += 1;
                j += 1;
                continue;
            }
            let rest = new[j..].strip_prefix(b"&commit=")?;
            let id = rest.iter().take_while(|b| b.is_ascii_hexdigit()).count();
            if !crate::catalog_ref::is_commit_id(std::str::from_utf8(&rest[..id]).ok()?) {
                return None;
            }
            j += "&commit=".len() + id;
            count += 1;
        }
        (i == old.len()).then_some(count)
    }
    fn same_but_new_pins(old: &Value, new: &Value, key: &str, count: &mut usize) -> bool {
        match (old, new) {
            (Value::Object(o), Value::Object(n)) => {
                for k in n.keys().filter(|k| !o.contains_key(*k)) {
                    let beside = |a: &str| o.contains_key(a);
                    let pin = match k.as_str() {
                        "sha256" => beside("image") || beside("uri") || beside("url"),
                        "commit" => beside("url") && beside("ref"),
                        _ => false,
                    };
                    if !pin {
                        return false;
                    }
                    *count += 1;
                }
                o.iter().all(|(k, v)| {
                    n.get(k)
                        .is_some_and(|nv| same_but_new_pins(v, nv, k, count))
                })
            }
            (Value::Array(o), Value::Array(n)) => {
                o.len() == n.len()
                    && o.iter()
                        .zip(n)
                        .all(|(a, b)| same_but_new_pins(a, b, key, count))
            }
            (Value::String(url), Value::Object(n)) if key == "starlark" => {
                let pinned = n.len() == 2
                    && n.get("url") == Some(old)
                    && n.get("sha256").is_some_and(Value::is_string)
                    && !url.is_empty();
                *count += usize::from(pinned);
                pinned
            }
            (Value::String(o), Value::String(n)) if key == "catalogs" && o != n => {
                let added = commits_added(o, n);
                *count += added.unwrap_or(0);
                added.is_some()
            }
            (a, b) => a == b,
        }
    }
    let misplaced = if git {
        EditProof::CommitMisplaced
    } else {
        EditProof::Misplaced
    };
    let mut count = 0;
    let same = original.len() == edited.len()
        && original
            .iter()
            .zip(edited)
            .all(|(a, b)| same_but_new_pins(&a.value, &b.value, "", &mut count));
    if !same || count != added {
        return Err(misplaced);
    }
    for doc in edited {
        if let Some(config) = super::lock_git::config_of(&doc.value) {
            if super::lock_git::still_unpinned(&config) {
                return Err(EditProof::CommitMisplaced);
            }
            continue;
        }
        let Some(functions) = kep_functions(&doc.value) else {
            continue;
        };
        let Ok(functions) = functions else {
            return Err(EditProof::NoLongerLoads);
        };
        let unpinned = functions
            .iter()
            .flat_map(|f| f.versions.iter().flat_map(|v| v.runtime.parts()))
            .any(|r| match r {
                Runtime::Container { image, sha256, .. } => {
                    sha256.is_none() && !image.contains("@sha256:")
                }
                Runtime::Exec { platforms } => platforms.iter().any(|p| p.sha256.is_none()),
                Runtime::Starlark { local, sha256, .. } => !local && sha256.is_none(),
                _ => false,
            });
        if unpinned {
            return Err(EditProof::StillUnpinned);
        }
    }
    Ok(())
}

/// Exit status of a verification: every check ok.
pub fn all_ok(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.status == "ok")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> Vec<crate::yaml::Document> {
        crate::yaml::parse_stream(text).unwrap()
    }

    const CONFIG: &str = "apiVersion: krm-catalog.dev/v1alpha1\nkind: ResolveCatalog\nmetadata:\n  name: fn\n  annotations:\n    note: |\n      url: https://h/r\n      ref: v1\nspec:\n  catalogs:\n  - git:\n      url: https://h/r\n      ref: v1\n  trustedCatalogs: [\"https://h/*\"]\n";
    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn a_commit_proves_only_in_the_git_mapping() {
        let right = CONFIG.replace(
            "      ref: v1\n  trusted",
            &format!("      ref: v1\n      commit: {SHA}\n  trusted"),
        );
        assert_eq!(prove_edit(&docs(CONFIG), &docs(&right), 1, true), Ok(()));
        // The same text in a block scalar: the annotation changes, the source stays unpinned.
        let wrong = CONFIG.replacen(
            "      ref: v1\n",
            &format!("      ref: v1\n      commit: {SHA}\n"),
            1,
        );
        assert_eq!(
            prove_edit(&docs(CONFIG), &docs(&wrong), 1, true),
            Err(EditProof::CommitMisplaced)
        );
    }

    #[test]
    fn a_string_list_proves_only_added_commits() {
        let cm = |list: &str| {
            docs(&format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\ndata:\n  catalogs: \"{list}\"\n"
            ))
        };
        let before = cm("git::https://h/r?ref=v1, other");
        let after = cm(&format!("git::https://h/r?ref=v1&commit={SHA}, other"));
        assert_eq!(prove_edit(&before, &after, 1, true), Ok(()));
        let changed = cm(&format!("git::https://h/r?ref=v2&commit={SHA}, other"));
        assert_eq!(
            prove_edit(&before, &changed, 1, true),
            Err(EditProof::CommitMisplaced)
        );
        let short = cm("git::https://h/r?ref=v1&commit=abc, other");
        assert_eq!(
            prove_edit(&before, &short, 1, true),
            Err(EditProof::CommitMisplaced)
        );
    }
}

//! `catalog lock` and `catalog verify` (SPEC §7.4): fill in every missing digest of a catalog
//! (images from their registry, binaries from their download) by inserting `sha256:` lines
//! next to what they pin, so comments and layout survive; and check every digest, one line per
//! runtime, failing on any mismatch — the CI gate.

use std::path::{Path, PathBuf};

use super::{EditProof, RegistryCheck, RuntimeError};
use crate::catalog::kep::{self, Runtime};
use crate::remote::Remote;
use crate::verify::sha256_hex;

/// One runtime's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// `ok`, `MISMATCH`, `UNPINNED` or `ERROR`.
    pub status: &'static str,
    /// The kind (group/version/kind) it backs.
    pub kind: String,
    /// What was checked and what was found.
    pub detail: String,
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:<8} {}  {}", self.status, self.kind, self.detail)
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
            return Check {
                status: "UNPINNED",
                kind,
                detail: format!(
                    "starlark {source}: no sha256; write the sha256 of the script beside its url"
                ),
            };
        }
        return match super::exec::fetch(&uri, remote, root) {
            Ok(_) => Check {
                status: "ok",
                kind,
                detail: format!("starlark {source} (a file of this catalog)"),
            },
            Err(e) => Check {
                status: "ERROR",
                kind,
                detail: format!("starlark {source}: {e}"),
            },
        };
    };
    let declared = declared.trim_start_matches("sha256:").to_owned();
    match super::exec::fetch(&uri, remote, root) {
        Ok(bytes) if sha256_hex(&bytes) == declared => Check {
            status: "ok",
            kind,
            detail: format!("starlark {source} sha256:{declared}"),
        },
        Ok(bytes) => Check {
            status: "MISMATCH",
            kind,
            detail: format!(
                "starlark {source}: expected sha256:{declared}, downloaded sha256:{}",
                sha256_hex(&bytes)
            ),
        },
        Err(e) => Check {
            status: "ERROR",
            kind,
            detail: format!("starlark {source}: {e}"),
        },
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
                    Runtime::Service { name } if services.contains(name) => checks.push(Check {
                        status: "ok",
                        kind,
                        detail: format!("service {name} (part of this catalog)"),
                    }),
                    Runtime::Service { name } => checks.push(Check {
                        status: "ERROR",
                        kind,
                        detail: format!(
                            "service {name}: no ServiceDefinition of that name in this catalog"
                        ),
                    }),
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
                    Runtime::Container { image, sha256, .. } => {
                        let has_digest = sha256.is_some() || image.contains("@sha256:");
                        let check = if has_digest {
                            match super::verify_container(
                                image,
                                sha256.as_deref(),
                                false,
                                Some(remote),
                            ) {
                                Ok(p) => Check {
                                    status: "ok",
                                    kind,
                                    detail: format!("container {}", p.reference()),
                                },
                                Err(
                                    e @ (RuntimeError::PinConflict { .. }
                                    | RuntimeError::Registry(RegistryCheck::TagMoved { .. })),
                                ) => Check {
                                    status: "MISMATCH",
                                    kind,
                                    detail: e.to_string(),
                                },
                                Err(e) => Check {
                                    status: "ERROR",
                                    kind,
                                    detail: e.to_string(),
                                },
                            }
                        } else {
                            Check {
                                status: "UNPINNED",
                                kind,
                                detail: format!(
                                    "container {image}: no digest; run `krm-catalog catalog lock`"
                                ),
                            }
                        };
                        checks.push(check);
                    }
                    Runtime::Exec { platforms } => {
                        for p in platforms {
                            let kind = format!("{kind} ({}/{})", p.os, p.arch);
                            let Some(declared) = &p.sha256 else {
                                checks.push(Check {
                                    status: "UNPINNED",
                                    kind,
                                    detail: format!(
                                        "exec {}: no sha256; run `krm-catalog catalog lock`",
                                        p.uri
                                    ),
                                });
                                continue;
                            };
                            let declared = declared.trim_start_matches("sha256:").to_owned();
                            let check = match super::exec::fetch(&p.uri, remote, root) {
                                Ok(bytes) if sha256_hex(&bytes) == declared => Check {
                                    status: "ok",
                                    kind,
                                    detail: format!("exec {} sha256:{declared}", p.uri),
                                },
                                Ok(bytes) => Check {
                                    status: "MISMATCH",
                                    kind,
                                    detail: format!(
                                        "exec {}: expected sha256:{declared}, downloaded sha256:{}",
                                        p.uri,
                                        sha256_hex(&bytes)
                                    ),
                                },
                                Err(e) => Check {
                                    status: "ERROR",
                                    kind,
                                    detail: format!("exec {}: {e}", p.uri),
                                },
                            };
                            checks.push(check);
                        }
                    }
                }
            }
        }
    }
    checks
}

/// The YAML files of a local catalog that hold KEP documents. The walk stays inside `root`:
/// symbolic links are not followed (a link could lead the edit out of the catalog, or into a
/// loop), and each directory is entered once (by device and inode, against bind-mount loops).
fn kep_files(root: &Path) -> Result<Vec<PathBuf>, RuntimeError> {
    let meta = fs_err::metadata(root)?;
    if !meta.is_dir() {
        return Ok(vec![root.to_path_buf()]);
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
                if text.contains("krmFunctions") {
                    files.push(path);
                }
            }
        }
    }
    files.sort();
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

/// Replace `file` with `text` atomically, never writing through a link: the new content goes
/// to a temporary file created exclusively (`O_EXCL`, a random name, so nothing planted at a
/// predictable path is followed) in the same directory, then renamed over `file`. A `file`
/// that is itself a symbolic link is refused: renaming over it would silently turn a link
/// into a copy, and writing through it would edit a file outside the catalog.
fn replace_file(file: &Path, text: &str) -> Result<(), RuntimeError> {
    let meta = fs_err::symlink_metadata(file)?;
    if meta.file_type().is_symlink() {
        let target =
            fs_err::read_link(file).map_or_else(|_| "?".to_owned(), |t| t.display().to_string());
        return Err(RuntimeError::Symlink {
            file: file.display().to_string(),
            target,
        });
    }
    if !meta.is_file() {
        return Err(RuntimeError::NotAFile(file.display().to_string()));
    }
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (tmp, mut out) = create_exclusive(&dir, &name)?;
    let result = (|| {
        use std::io::Write as _;
        out.write_all(text.as_bytes())?;
        out.sync_all()?;
        drop(out);
        // The lock changes the content, not who may read it.
        fs_err::set_permissions(&tmp, meta.permissions())?;
        fs_err::rename(&tmp, file)
    })();
    result.map_err(|e| {
        let _ = fs_err::remove_file(&tmp);
        e.into()
    })
}

/// A new file `.<name>.<random>.lock-tmp` in `dir`, created with `O_EXCL` (`create_new`), so
/// an existing file or link at that path is an error, never opened.
fn create_exclusive(dir: &Path, name: &str) -> Result<(PathBuf, fs_err::File), RuntimeError> {
    super::create_with_random_name(
        |random| dir.join(format!(".{name}.{random:016x}.lock-tmp")),
        |tmp| {
            fs_err::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(tmp)
        },
    )
    .map_err(|e| match e {
        super::Unnamed::Failed(e) => e.into(),
        // fs_err's message names the file.
        super::Unnamed::Taken(_, e) => RuntimeError::TempFile(e.to_string()),
    })
}

/// Fill in missing digests in the catalog at `root` (a directory or file). Returns one line per
/// digest written; files are rewritten only when something changed.
pub fn lock(root: &Path, remote: &Remote) -> Result<Vec<String>, RuntimeError> {
    let mut written = Vec::new();
    let catalog_root = catalog_root(root);
    for file in kep_files(root)? {
        let original = fs_err::read_to_string(&file)?;
        let docs = crate::yaml::parse_stream(&original).map_err(|e| at(&file, e))?;
        let mut text = original.clone();
        // Lines added so far, all in this or earlier documents: where `doc` starts now.
        let mut added = 0;
        for doc in docs.iter().filter(|d| kep::is_kep_catalog(&d.value)) {
            let from = (doc.line + added).saturating_sub(1);
            let (_, functions) = kep::parse(&doc.value).map_err(|p| {
                let list: Vec<String> = p.iter().map(ToString::to_string).collect();
                at(&file, list.join("; "))
            })?;
            for function in &functions {
                for runtime in function.versions.iter().flat_map(|v| v.runtime.parts()) {
                    match runtime {
                        Runtime::Container {
                            image,
                            sha256: None,
                            ..
                        } if !image.contains("@sha256:") => {
                            let parsed = super::image::ImageRef::parse(image)?;
                            let digest = remote.net_manifest_digest(&parsed.tagged())?;
                            let hex = digest.trim_start_matches("sha256:").to_owned();
                            text = insert_sibling_from(&text, from, "image", image, "sha256", &hex)
                                .ok_or_else(|| not_in_block_style(&file, "image", image))?;
                            added += 1;
                            written.push(format!("{}: {image} → sha256:{hex}", file.display()));
                        }
                        Runtime::Exec { platforms } => {
                            for p in platforms.iter().filter(|p| p.sha256.is_none()) {
                                let bytes =
                                    super::exec::fetch(&p.uri, remote, Some(&catalog_root))?;
                                let hex = sha256_hex(&bytes);
                                text =
                                    insert_sibling_from(&text, from, "uri", &p.uri, "sha256", &hex)
                                        .ok_or_else(|| not_in_block_style(&file, "uri", &p.uri))?;
                                added += 1;
                                written.push(format!(
                                    "{}: {} → sha256:{hex}",
                                    file.display(),
                                    p.uri
                                ));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        if text != original {
            // Prove the edit before writing: the file must still parse to the same documents
            // plus the new digests.
            let edited =
                crate::yaml::parse_stream(&text).map_err(|e| RuntimeError::LockedUnparsable {
                    file: file.display().to_string(),
                    reason: e.to_string(),
                })?;
            prove_edit(&docs, &edited, added).map_err(|reason| RuntimeError::Unproven {
                file: file.display().to_string(),
                reason,
            })?;
            replace_file(&file, &text)?;
        }
    }
    Ok(written)
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

/// The edited documents must be the original ones with exactly `added` new `sha256` keys and
/// nothing else changed, and no runtime of theirs may still lack a pin: a text edit that
/// landed elsewhere (the same `uri:` line in a template's block scalar) would otherwise
/// change a template and report the runtime locked while it is not.
fn prove_edit(
    original: &[crate::yaml::Document],
    edited: &[crate::yaml::Document],
    added: usize,
) -> Result<(), EditProof> {
    fn same_but_new_pins(
        old: &serde_json::Value,
        new: &serde_json::Value,
        count: &mut usize,
    ) -> bool {
        use serde_json::Value;
        match (old, new) {
            (Value::Object(o), Value::Object(n)) => {
                for key in n.keys() {
                    if key == "sha256" && !o.contains_key(key) {
                        *count += 1;
                    }
                }
                o.iter()
                    .all(|(k, v)| n.get(k).is_some_and(|nv| same_but_new_pins(v, nv, count)))
                    && n.keys().all(|k| o.contains_key(k) || k == "sha256")
            }
            (Value::Array(o), Value::Array(n)) => {
                o.len() == n.len() && o.iter().zip(n).all(|(a, b)| same_but_new_pins(a, b, count))
            }
            (a, b) => a == b,
        }
    }
    let mut count = 0;
    let same = original.len() == edited.len()
        && original
            .iter()
            .zip(edited)
            .all(|(a, b)| same_but_new_pins(&a.value, &b.value, &mut count));
    if !same || count != added {
        return Err(EditProof::Misplaced);
    }
    for doc in edited.iter().filter(|d| kep::is_kep_catalog(&d.value)) {
        let Ok((_, functions)) = kep::parse(&doc.value) else {
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
                _ => false,
            });
        if unpinned {
            return Err(EditProof::StillUnpinned);
        }
    }
    Ok(())
}

/// After the first block-style `key: value` line whose mapping has no `new_key` yet, insert
/// `new_key: new_value` at the same indentation.
pub fn insert_sibling(
    text: &str,
    key: &str,
    value: &str,
    new_key: &str,
    new_value: &str,
) -> Option<String> {
    insert_sibling_from(text, 0, key, value, new_key, new_value)
}

/// [`insert_sibling`], looking only at lines from index `from` (0-based) on: the document
/// being locked, not the same text earlier in the file (a template, say).
fn insert_sibling_from(
    text: &str,
    from: usize,
    key: &str,
    value: &str,
    new_key: &str,
    new_value: &str,
) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let key_of = |line: &str| -> Option<(usize, String, String)> {
        let indent = line.len() - line.trim_start().len();
        let body = line.trim();
        let (col, body) = match body.strip_prefix("- ") {
            Some(rest) => (indent + 2, rest),
            None => (indent, body),
        };
        let (k, v) = body.split_once(':')?;
        let v = v
            .split(" #")
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches(|c| c == '"' || c == '\'')
            .to_owned();
        Some((col, k.trim().to_owned(), v))
    };
    for (i, line) in lines.iter().enumerate().skip(from) {
        let Some((col, k, v)) = key_of(line) else {
            continue;
        };
        if k != key || v != value {
            continue;
        }
        let sibling_has = |range: &mut dyn Iterator<Item = &&str>| {
            for l in range {
                if l.trim().is_empty() || l.trim_start().starts_with('#') {
                    continue;
                }
                match key_of(l) {
                    Some((c, k2, _)) if c == col && !l.trim_start().starts_with("- ") => {
                        if k2 == new_key {
                            return true;
                        }
                    }
                    Some((c, k2, _)) if c == col => return k2 == new_key,
                    _ => {
                        let indent = l.len() - l.trim_start().len();
                        if indent < col {
                            return false;
                        }
                    }
                }
            }
            false
        };
        let after_has = sibling_has(&mut lines[i + 1..].iter());
        let before_has =
            !line.trim_start().starts_with("- ") && sibling_has(&mut lines[..i].iter().rev());
        if after_has || before_has {
            continue;
        }
        let mut out: String = lines[..=i].concat();
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&" ".repeat(col));
        out.push_str(new_key);
        out.push_str(": ");
        out.push_str(new_value);
        out.push('\n');
        out.push_str(&lines[i + 1..].concat());
        return Some(out);
    }
    None
}

/// Exit status of a verification: every check ok.
pub fn all_ok(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.status == "ok")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_a_sibling_and_keeps_comments() {
        let text = "runtime:\n  container:\n    # the labeller\n    image: ghcr.io/acme/fn:v1 # pinned below\n    requireNetwork: false\n";
        let out = insert_sibling(text, "image", "ghcr.io/acme/fn:v1", "sha256", "abc").unwrap();
        assert_eq!(
            out,
            "runtime:\n  container:\n    # the labeller\n    image: ghcr.io/acme/fn:v1 # pinned below\n    sha256: abc\n    requireNetwork: false\n"
        );
        // Already pinned (before or after): nothing to do.
        assert!(insert_sibling(&out, "image", "ghcr.io/acme/fn:v1", "sha256", "abc").is_none());
        let list = "platforms:\n- bin: fn\n  os: linux\n  uri: https://x/fn\n- bin: fn\n  os: darwin\n  uri: https://x/fn-mac\n";
        let out = insert_sibling(list, "uri", "https://x/fn-mac", "sha256", "def").unwrap();
        assert!(
            out.ends_with("  uri: https://x/fn-mac\n  sha256: def\n"),
            "{out}"
        );
        let out2 = insert_sibling(&out, "uri", "https://x/fn", "sha256", "123").unwrap();
        assert!(
            out2.contains("  uri: https://x/fn\n  sha256: 123\n- bin: fn\n"),
            "{out2}"
        );
    }
}

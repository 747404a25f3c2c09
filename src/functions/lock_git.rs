//! `catalog lock` of a function config (issue 12): every Git catalog source without a pin
//! (`git: {url, ref}` without `commit`, `git::<url>?ref=…` without `&commit=`) gets the commit
//! its ref resolves to now, fetched with the client and the trust rules of a run. The object
//! form gains a `commit:` line beside `ref:` (or `, commit: …` in a one-line flow mapping), the
//! string form `&commit=<sha>`; the caller proves the edit and writes the file.

use std::path::Path;

use serde_json::Value;

use super::RuntimeError;
use super::edit::{self, Locked};
use crate::catalog_ref::{CatalogRef, GitRef};
use crate::config::{self, ConfigKind};
use crate::remote::Remote;

/// A function config found in a document.
pub(super) struct Config<'a> {
    /// The config object.
    value: &'a Value,
    /// Where it is in the document (`functionConfig.` in a ResourceList), for messages.
    prefix: &'static str,
    /// A kpt ConfigMap: catalogs are the string form in `data.catalogs`.
    configmap: bool,
}

/// The function config a document is or holds (a `ResourceList`'s `functionConfig`): a
/// `ResolveCatalog`, a `ServiceSet` with `spec.catalogs`, or a `v1 ConfigMap` with
/// `data.catalogs`.
pub(super) fn config_of(doc: &Value) -> Option<Config<'_>> {
    let (value, prefix) = if doc.get("kind").and_then(Value::as_str) == Some("ResourceList") {
        (doc.get("functionConfig")?, "functionConfig.")
    } else {
        (doc, "")
    };
    let kind = config::parse(Some(value)).kind;
    let has = |pointer: &str| value.pointer(pointer).is_some();
    match kind {
        ConfigKind::ResolveCatalog => {}
        ConfigKind::ServiceSet if has("/spec/catalogs") => {}
        ConfigKind::ConfigMap if has("/data/catalogs") => {}
        _ => return None,
    }
    Some(Config {
        value,
        prefix,
        configmap: kind == ConfigKind::ConfigMap,
    })
}

/// The Git sources of a config, each with its field path, and its trust list.
struct Sources {
    git: Vec<(String, GitRef)>,
    trusted: Vec<String>,
}

/// The [`Sources`] of a config; `Err` with the config's problems.
fn git_sources(config: &Config<'_>) -> Result<Sources, String> {
    let parsed = config::parse(Some(config.value));
    if !parsed.problems.is_empty() {
        let list: Vec<String> = parsed
            .problems
            .iter()
            .map(|p| format!("{}{p}", config.prefix))
            .collect();
        return Err(list.join("; "));
    }
    let git = parsed
        .settings
        .catalogs
        .into_iter()
        .filter_map(|entry| match entry.source {
            CatalogRef::Git(g) => Some((format!("{}{}", config.prefix, entry.field), g)),
            _ => None,
        })
        .collect();
    Ok(Sources {
        git,
        trusted: parsed.settings.trusted_catalogs,
    })
}

/// Whether a Git source of the (edited) config is still without a pin.
pub(super) fn still_unpinned(config: &Config<'_>) -> bool {
    match git_sources(config) {
        Ok(sources) => sources.git.iter().any(|(_, g)| g.pin().is_none()),
        Err(_) => true,
    }
}

/// Pin every unpinned Git source of `config` in `text`, looking from line `from` (0-based) on.
/// Returns the lines added; says what it did in `report`.
pub(super) fn lock(
    file: &Path,
    config: &Config<'_>,
    text: &mut String,
    from: usize,
    remote: &Remote,
    report: &mut Vec<Locked>,
) -> Result<usize, RuntimeError> {
    let Sources { git, trusted } = git_sources(config).map_err(|problems| RuntimeError::At {
        path: file.display().to_string(),
        reason: format!(
            "the function config has problems (fix them first; nothing was written): {problems}"
        ),
    })?;
    let mut added = 0;
    for (field, source) in git {
        if source.pin().is_some() {
            report.push(Locked::ok(format!(
                "{}: {field} {source} (pinned)",
                file.display()
            )));
            continue;
        }
        // The trust rules of a run: nothing is fetched from a repository the config does not
        // trust (`file://` is a local path).
        if !crate::remote::is_trusted_git(&source.url, &trusted) {
            return Err(RuntimeError::UntrustedGit {
                file: file.display().to_string(),
                field,
                reference: source.to_string(),
                url: source.display_url(),
                trust_field: if config.configmap {
                    "data.trusted-catalogs"
                } else {
                    "spec.trustedCatalogs"
                },
            });
        }
        let commit = crate::remote::git::load(
            &source,
            remote.cache(),
            remote.offline(),
            crate::remote::git::Credentials::Scoped,
        )
        .map_err(|e| RuntimeError::At {
            path: format!("{}: {field}", file.display()),
            reason: format!("{e} (nothing was written)"),
        })?
        .commit;
        let edited = if config.configmap {
            written_entry(config, &source)
                .and_then(|needle| insert_commit_in_string(text, from, &needle, &commit))
        } else {
            pin_object_form(text, from, &source, &commit)
        };
        let Some((new_text, lines)) = edited else {
            return Err(RuntimeError::GitEntryNotFound {
                file: file.display().to_string(),
                field,
                reference: source.to_string(),
                commit,
            });
        };
        *text = new_text;
        added += lines;
        report.push(Locked::written(format!(
            "{}: {field} {source} → commit {commit}",
            file.display()
        )));
    }
    Ok(added)
}

/// `commit: <sha>` beside the block-style `ref:` of the mapping whose `url` is the source's
/// (one line more), else `, commit: <sha>` after `ref: …` in a one-line flow mapping that
/// names the URL.
fn pin_object_form(
    text: &str,
    from: usize,
    source: &GitRef,
    commit: &str,
) -> Option<(String, usize)> {
    let same_url = |v: &str| v.trim().trim_end_matches('/') == source.url;
    let block = edit::insert_sibling_where(
        text,
        from,
        "ref",
        &source.reference,
        "commit",
        commit,
        |others| others.iter().any(|(k, v)| k == "url" && same_url(v)),
    );
    if let Some(out) = block {
        return Some((out, 1));
    }
    let r = &source.reference;
    for needle in [
        format!("ref: {r}"),
        format!("ref: \"{r}\""),
        format!("ref: '{r}'"),
    ] {
        let flow = edit::insert_after(
            text,
            from,
            &needle,
            &format!(", commit: {commit}"),
            |line, begin, end| {
                let before = line[..begin].chars().next_back();
                let after = line[end..].chars().next();
                let mapping = &line[line[..begin].rfind('{').unwrap_or(0)..];
                matches!(before, Some('{' | ',' | ' '))
                    && matches!(after, Some(',' | '}' | ' '))
                    && mapping.contains(source.url.as_str())
                    && !mapping.contains("commit:")
            },
        );
        if let Some(out) = flow {
            return Some((out, 0));
        }
    }
    None
}

/// The entry of `data.catalogs` (a comma-separated list) that is `source`, as written.
fn written_entry(config: &Config<'_>, source: &GitRef) -> Option<String> {
    let list = config.value.pointer("/data/catalogs")?.as_str()?;
    list.split(',')
        .map(str::trim)
        .find(|piece| matches!(piece.parse::<CatalogRef>(), Ok(CatalogRef::Git(g)) if g == *source))
        .map(str::to_owned)
}

/// `&commit=<sha>` after the entry `needle` of a string list, where it stands alone (between
/// separators, not followed by more query).
fn insert_commit_in_string(
    text: &str,
    from: usize,
    needle: &str,
    commit: &str,
) -> Option<(String, usize)> {
    let out = edit::insert_after(
        text,
        from,
        needle,
        &format!("&commit={commit}"),
        |line, begin, end| {
            let before = line[..begin].chars().next_back();
            let after = line[end..].chars().next();
            matches!(before, None | Some(',' | ' ' | '\t' | '"' | '\'' | ':'))
                && matches!(
                    after,
                    None | Some(',' | ' ' | '\t' | '"' | '\'' | '\n' | '\r')
                )
        },
    )?;
    Some((out, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commit_goes_into_the_git_mapping_not_a_block_scalar() {
        let text = "metadata:\n  annotations:\n    note: |\n      url: https://h/r\n      ref: v1\nspec:\n  catalogs:\n  - git:\n      url: https://h/r\n      ref: v1\n";
        let source = GitRef::new("https://h/r", Some("v1"), None, None).unwrap();
        let (out, lines) = pin_object_form(text, 0, &source, "c0").unwrap();
        assert_eq!(lines, 1);
        // The block scalar's `ref: v1` also has a `url` sibling of the same value: the first
        // match wins, and the proof (`lock::prove_edit`) refuses it; with the search starting
        // at `spec` it lands right.
        assert!(
            out.contains("      ref: v1\n      commit: c0\nspec:"),
            "{out}"
        );
        let (out, _) = pin_object_form(text, 5, &source, "c0").unwrap();
        assert!(out.ends_with("      ref: v1\n      commit: c0\n"), "{out}");
        // A one-line flow mapping.
        let flow = "  - git: {url: \"https://h/r/\", ref: v1, path: c}  # team\n";
        let (out, lines) = pin_object_form(flow, 0, &source, "c0").unwrap();
        assert_eq!(lines, 0);
        assert_eq!(
            out,
            "  - git: {url: \"https://h/r/\", ref: v1, commit: c0, path: c}  # team\n"
        );
    }
}

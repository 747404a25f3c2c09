//! Reading a fetched Git commit (SPEC §4.2, issue 23): the catalog files of the source's
//! subtree, or the one file a runtime names, from the object database with the bundle bounds;
//! and how Git errors are worded. `git` fetches; this reads what it fetched.

use crate::catalog_ref::GitRef;

use super::archive::{Bounds, MAX_ENTRIES};
use super::error::GitError;

/// A commit id and the catalog files of its subtree.
pub(super) type Tree = (String, Vec<(String, Vec<u8>)>);

/// What to read from the commit at the source's `path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Select {
    /// The catalog files of the subtree (a catalog source).
    Catalog,
    /// The one file (an exec binary or a Starlark script, issue 23).
    File,
}

/// An error and its causes, `a: b: c` (gix says the useful part in a cause).
pub(super) fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        let next = c.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = c.source();
    }
    text
}

pub(super) fn fetch_error(source: &GitRef, reason: impl std::fmt::Display) -> GitError {
    let url = source.display_url();
    // gix names the URL it was given: never print the credentials in it.
    let reason = reason
        .to_string()
        .replace(&source.url, &url)
        .replace(&parsed_url(source), &url);
    // gix's allocation limit (`gitoxide.objects.allocLimit`) was hit while resolving the pack
    // or reading an object.
    if reason.contains("too large to fit in memory") {
        return GitError::ObjectTooBig {
            url,
            bytes: crate::env::max_git_object_bytes(),
        };
    }
    GitError::Fetch {
        url,
        reference: source.reference.clone(),
        reason,
    }
}

/// The URL as the trust list read it (the WHATWG parser's serialisation), which is what gix is
/// given: gix's own parser could read another host out of the text as written (issue 21 L4).
pub(super) fn parsed_url(source: &GitRef) -> String {
    reqwest::Url::parse(&source.url).map_or_else(|_| source.url.clone(), String::from)
}

/// The commit `id` (an annotated tag is peeled) and the files of its `path` subtree, or the
/// one file at `path` ([`Select::File`]).
pub(super) fn read_commit(
    repo: &gix::Repository,
    source: &GitRef,
    id: gix::ObjectId,
    select: Select,
) -> Result<Tree, GitError> {
    let e = |err: &dyn std::error::Error| fetch_error(source, chain(err));
    check_size(repo, source, id)?;
    let commit = repo
        .find_object(id)
        .map_err(|err| e(&err))?
        .peel_to_commit()
        .map_err(|err| e(&err))?;
    let commit_id = commit.id.to_string();
    let tree = commit.tree().map_err(|err| e(&err))?;
    let mut reader = TreeReader {
        repo,
        source,
        commit: &commit_id,
        bounds: Bounds::catalog(),
        files: Vec::new(),
        total: 0,
        entries: 0,
    };
    if select == Select::File {
        let file = reader.file(tree.id, source.path.as_deref().unwrap_or_default())?;
        return Ok((commit_id, vec![file]));
    }
    let root = match &source.path {
        Some(path) => reader.descend(tree.id, path)?,
        None => tree.id,
    };
    reader.walk(root, "", 0)?;
    let files = reader.files;
    Ok((commit_id, files))
}

/// An object's size from its header, before it is read: past the allocation limit, an error
/// (gix refuses it too; this names the limit without unpacking anything).
pub(super) fn check_size(
    repo: &gix::Repository,
    source: &GitRef,
    id: gix::ObjectId,
) -> Result<(), GitError> {
    let size = repo
        .find_header(id)
        .map_err(|err| fetch_error(source, chain(&err)))?
        .size();
    let bytes = crate::env::max_git_object_bytes();
    if size > bytes {
        return Err(GitError::ObjectTooBig {
            url: source.display_url(),
            bytes,
        });
    }
    Ok(())
}

struct TreeReader<'a> {
    repo: &'a gix::Repository,
    source: &'a GitRef,
    commit: &'a str,
    bounds: Bounds,
    files: Vec<(String, Vec<u8>)>,
    total: u64,
    entries: usize,
}

/// Directories deeper than this are not a catalog.
const MAX_DEPTH: usize = 32;

impl TreeReader<'_> {
    fn path_error(&self, reason: impl Into<String>) -> GitError {
        GitError::Path {
            url: self.source.display_url(),
            commit: self.commit.to_owned(),
            path: self.source.path.clone().unwrap_or_default(),
            reason: reason.into(),
        }
    }

    fn tree_error(&self, reason: impl Into<String>) -> GitError {
        GitError::Tree {
            url: self.source.display_url(),
            commit: self.commit.to_owned(),
            reason: reason.into(),
        }
    }

    fn entries(
        &self,
        tree: gix::ObjectId,
    ) -> Result<Vec<(String, gix::objs::tree::EntryMode, gix::ObjectId)>, GitError> {
        check_size(self.repo, self.source, tree)?;
        let id = tree;
        let tree = self
            .repo
            .find_tree(id)
            .map_err(|e| self.tree_error(e.to_string()))?;
        let decoded = tree.decode().map_err(|e| self.tree_error(e.to_string()))?;
        // Git itself never writes these; a crafted tree may (issue 21 L4): a name that is not
        // one file name, or one that is there twice, would make the files read depend on who
        // reads them.
        let mut seen = std::collections::HashSet::new();
        let mut entries = Vec::with_capacity(decoded.entries.len());
        for entry in &decoded.entries {
            let raw: &[u8] = entry.filename.as_ref();
            let name = entry.filename.to_string();
            if raw.is_empty()
                || raw == b"."
                || raw == b".."
                || raw.contains(&b'/')
                || raw.contains(&0)
            {
                return Err(self.tree_error(format!(
                    "tree {id} has an entry named {name:?}, which is not a file name (a crafted tree: Git never writes one)"
                )));
            }
            if !seen.insert(raw.to_vec()) {
                return Err(self.tree_error(format!(
                    "tree {id} has two entries named {name:?} (a crafted tree: Git never writes one)"
                )));
            }
            entries.push((name, entry.mode, entry.oid.to_owned()));
        }
        Ok(entries)
    }

    /// The tree at `path` (already normalised: no `.`/`..`); a link on the way is refused,
    /// wherever it points, since following it could leave the repository.
    fn descend(&self, mut tree: gix::ObjectId, path: &str) -> Result<gix::ObjectId, GitError> {
        for component in path.split('/') {
            let Some((_, mode, oid)) = self
                .entries(tree)?
                .into_iter()
                .find(|(name, _, _)| name == component)
            else {
                return Err(self.path_error(format!(
                    "does not exist in this commit (no \"{component}\")"
                )));
            };
            if mode.is_link() {
                let target = self
                    .repo
                    .find_blob(oid)
                    .map(|b| String::from_utf8_lossy(&b.data).into_owned())
                    .unwrap_or_default();
                return Err(self.path_error(format!(
                    "goes through the symbolic link \"{component}\" (to \"{target}\"); name the directory itself"
                )));
            }
            if !mode.is_tree() {
                return Err(
                    self.path_error(format!("is not a directory (\"{component}\" is a file)"))
                );
            }
            tree = oid;
        }
        Ok(tree)
    }

    /// The file at `path` under `tree`: a blob (not a link, a directory or a submodule), no
    /// larger than the download limit, read from the object database.
    fn file(&self, tree: gix::ObjectId, path: &str) -> Result<(String, Vec<u8>), GitError> {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        let tree = if dir.is_empty() {
            tree
        } else {
            self.descend(tree, dir)?
        };
        let Some((_, mode, oid)) = self
            .entries(tree)?
            .into_iter()
            .find(|(entry, _, _)| entry == name)
        else {
            return Err(self.path_error(format!("does not exist in this commit (no \"{name}\")")));
        };
        if mode.is_link() {
            return Err(self
                .path_error("is a symbolic link (links are not followed); name the file itself"));
        }
        if mode.is_tree() || mode.is_commit() {
            return Err(self.path_error("is a directory or a submodule, not a file"));
        }
        let size = self
            .repo
            .find_header(oid)
            .map_err(|e| self.tree_error(e.to_string()))?
            .size();
        let limit = super::net::max_download_bytes() as u64;
        if size > limit {
            return Err(self.path_error(format!(
                "is {size} bytes, more than {limit}; raise {} if this is expected",
                crate::env::MAX_DOWNLOAD_BYTES
            )));
        }
        check_size(self.repo, self.source, oid)?;
        let blob = self
            .repo
            .find_blob(oid)
            .map_err(|e| self.tree_error(e.to_string()))?;
        Ok((path.to_owned(), blob.data.clone()))
    }

    /// Every catalog file (YAML, `.j2`) under `tree`, bounded like a bundle archive. Links
    /// inside the catalog are refused: a catalog file must be a file.
    fn walk(&mut self, tree: gix::ObjectId, prefix: &str, depth: usize) -> Result<(), GitError> {
        if depth > MAX_DEPTH {
            return Err(self.tree_error(format!(
                "{prefix} is nested deeper than {MAX_DEPTH} directories"
            )));
        }
        for (name, mode, oid) in self.entries(tree)? {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            self.entries += 1;
            if self.entries > MAX_ENTRIES {
                return Err(
                    self.tree_error(format!("the catalog has more than {MAX_ENTRIES} entries"))
                );
            }
            if mode.is_tree() {
                self.walk(oid, &path, depth + 1)?;
                continue;
            }
            let catalog_file =
                crate::yaml::is_yaml_file(&path) || crate::yaml::has_extension(&path, &["j2"]);
            if !catalog_file || mode.is_commit() {
                continue;
            }
            if mode.is_link() {
                return Err(self.tree_error(format!(
                    "{path} is a symbolic link; a catalog file must be a file (links are not followed)"
                )));
            }
            let size = self
                .repo
                .find_header(oid)
                .map_err(|e| self.tree_error(e.to_string()))?
                .size();
            if size > self.bounds.file {
                return Err(self.tree_error(self.bounds.file_error(&path).to_string()));
            }
            self.total = self.total.saturating_add(size);
            if self.total > self.bounds.total {
                return Err(self.tree_error(format!(
                    "the catalog's files are larger than {} bytes together; raise {}",
                    self.bounds.total, self.bounds.total_env
                )));
            }
            let blob = self
                .repo
                .find_blob(oid)
                .map_err(|e| self.tree_error(e.to_string()))?;
            self.files.push((path, blob.data.clone()));
        }
        Ok(())
    }
}

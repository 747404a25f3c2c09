//! The content-addressed cache (SPEC §7.2): blobs stored under their sha256 after
//! verification, written atomically (temp file + rename, so concurrent runs and killed
//! processes never leave a half-written blob), and re-hashed on every read. References (URLs,
//! OCI tags) map to blob digests, so a warm run needs no network.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::verify::sha256_hex;

/// A temp file this old in `tmp/` belongs to a writer that was killed: no write (at most the
/// download limit, synced) takes this long.
pub const STALE_TMP: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// What a reference resolved to when it was fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefEntry {
    /// Hex sha256 of the blob the reference names (for OCI: the manifest).
    pub digest: String,
    /// `file` (one YAML file), `bundle` (a .tar.gz) or `oci` (a manifest).
    pub kind: String,
    /// File name to load a single file under.
    pub name: String,
    /// The redirect hops the download went through (URLs), so that a run checks them against
    /// its trust list before using a copy that `catalog view` or `pull` stored (issue 9, F5).
    pub via: Vec<String>,
}

/// A cache directory that cannot be used (a container without a writable home).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    /// The cache directory cannot be written.
    #[error("cannot write the cache directory {dir}: {reason}; {}", cache_hint())]
    NotWritable {
        /// The directory, and the variable it came from.
        dir: String,
        /// What writing it said.
        reason: String,
    },
    /// No cache directory is known.
    #[error("no cache directory: {reason}; {}", cache_hint())]
    NoDirectory {
        /// Why (`$HOME is /nonexistent …`).
        reason: String,
    },
}

/// What to do about a cache directory that cannot be written: the variable to set, and how to
/// mount a writable one into the container (docker, kpt).
pub fn cache_hint() -> String {
    let var = crate::env::CACHE;
    format!(
        "set {var} to a writable directory; in a container, mount one and point {var} at it: \
         `docker run --mount type=bind,src=\"$HOME/.cache/krm-catalog\",dst=/cache -e {var}=/cache …`, \
         `kpt fn eval --image … --as-current-user --mount type=bind,src=\"$HOME/.cache/krm-catalog\",dst=/cache,rw=true -e {var}=/cache` \
         (`krm-catalog catalog pull` on the host fills it; read-only is enough when it is full)"
    )
}

/// The cache; `root` is `None` when no directory is known (no `KRM_CATALOG_CACHE`, no HOME).
#[derive(Debug, Clone)]
pub struct Cache {
    root: Option<PathBuf>,
    /// The variable `root` came from, for messages (`None`: given by the caller).
    origin: Option<&'static str>,
}

impl Cache {
    /// A cache rooted at a directory.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self {
            root: Some(root.into()),
            origin: None,
        }
    }

    /// `$KRM_CATALOG_CACHE`, else `$XDG_CACHE_HOME/krm-catalog`, else `$HOME/.cache/krm-catalog`.
    pub fn from_env() -> Self {
        let (root, origin) = crate::env::cache_dir_with_origin().unzip();
        Self { root, origin }
    }

    /// The error for a cache directory that cannot be written, `error` being what writing
    /// `path` (inside it) said: which directory, where it came from, what to mount and set.
    pub fn not_writable(&self, error: &std::io::Error) -> CacheError {
        let Some(root) = &self.root else {
            return self.no_directory();
        };
        let from = match self.origin {
            Some(crate::env::CACHE) => format!(" (from ${})", crate::env::CACHE),
            Some(crate::env::XDG_CACHE_HOME) => {
                format!(" (${}/krm-catalog)", crate::env::XDG_CACHE_HOME)
            }
            Some(crate::env::HOME) => format!(" (${}/.cache/krm-catalog)", crate::env::HOME),
            _ => String::new(),
        };
        CacheError::NotWritable {
            dir: format!("{}{from}", root.display()),
            reason: error.to_string(),
        }
    }

    /// The error for no cache directory at all (see [`crate::env::no_cache_reason`]).
    pub fn no_directory(&self) -> CacheError {
        CacheError::NoDirectory {
            reason: crate::env::no_cache_reason(),
        }
    }

    /// Whether the cache can be written: its directories are made and a probe file is
    /// written and removed (what `catalog pull` checks before it fetches anything).
    pub fn check_writable(&self) -> Result<(), CacheError> {
        let Some(root) = &self.root else {
            return Err(self.no_directory());
        };
        let tmp = root.join("tmp");
        let probe = tmp.join(format!("probe.{}", std::process::id()));
        let result = fs_err::create_dir_all(&tmp).and_then(|()| {
            fs_err::File::options()
                .write(true)
                .create_new(true)
                .open(&probe)
                .map(drop)
        });
        let _ = fs_err::remove_file(&probe);
        result.map_err(|e| self.not_writable(&e))
    }

    /// The directory, if any.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// How messages name the cache.
    pub fn describe(&self) -> String {
        match &self.root {
            Some(r) => format!("the cache at {}", r.display()),
            None => format!(
                "no cache ({}; set {})",
                crate::env::no_cache_reason(),
                crate::env::CACHE
            ),
        }
    }

    /// Only a well-formed digest names a blob: anything else (`../../x` from an OCI reference
    /// `@sha256:../../x`) would read, and on a hash mismatch remove, a file outside the cache.
    fn blob_path(&self, hex: &str) -> Option<PathBuf> {
        if !crate::catalog_ref::is_sha256_hex(hex) {
            return None;
        }
        self.root.as_ref().map(|r| r.join("blobs/sha256").join(hex))
    }

    fn ref_path(&self, reference: &str) -> Option<PathBuf> {
        self.root.as_ref().map(|r| {
            r.join("refs")
                .join(format!("{}.json", sha256_hex(reference.as_bytes())))
        })
    }

    /// A blob by hex digest, re-hashed; a corrupt blob is removed and reported as missing.
    pub fn get_blob(&self, hex: &str) -> Option<Vec<u8>> {
        let path = self.blob_path(hex)?;
        let bytes = fs_err::read(&path).ok()?;
        if sha256_hex(&bytes) == hex {
            Some(bytes)
        } else {
            crate::log!(
                crate::logger::Level::Warn,
                "cache blob {} does not match its name; removing it",
                path.display()
            );
            let _ = fs_err::remove_file(&path);
            None
        }
    }

    /// Store a blob (its digest is computed here, never trusted from outside); returns the hex.
    pub fn put_blob(&self, bytes: &[u8]) -> std::io::Result<String> {
        let hex = sha256_hex(bytes);
        let Some(path) = self.blob_path(&hex) else {
            return Ok(hex);
        };
        if path.exists() && self.get_blob(&hex).is_some() {
            return Ok(hex);
        }
        self.write_atomically(&path, bytes)?;
        Ok(hex)
    }

    /// What a reference resolved to when it was last fetched.
    pub fn get_ref(&self, reference: &str) -> Option<RefEntry> {
        let text = fs_err::read_to_string(self.ref_path(reference)?).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        if v.get("reference").and_then(Value::as_str) != Some(reference) {
            return None;
        }
        Some(RefEntry {
            digest: v.get("digest")?.as_str()?.to_owned(),
            kind: v.get("kind")?.as_str()?.to_owned(),
            name: v
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("catalog.yaml")
                .to_owned(),
            via: v
                .get("via")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|h| h.as_str().map(str::to_owned))
                .collect(),
        })
    }

    /// Record what a reference resolved to.
    pub fn put_ref(&self, reference: &str, entry: &RefEntry) -> std::io::Result<()> {
        let Some(path) = self.ref_path(reference) else {
            return Ok(());
        };
        let text = json!({"reference": reference, "digest": entry.digest, "kind": entry.kind, "name": entry.name, "via": entry.via}).to_string();
        self.write_atomically(&path, text.as_bytes())
    }

    /// Remove temp files left in `tmp/` by killed writers (older than [`STALE_TMP`]); a
    /// fresh one may be another process's write in progress. Best effort: called before
    /// writing, failures are ignored.
    pub fn clean_stale_tmp(&self) {
        let Some(root) = &self.root else {
            return;
        };
        let Ok(entries) = fs_err::read_dir(root.join("tmp")) else {
            return;
        };
        for entry in entries.flatten() {
            // The temporary repositories of Git fetches (`git-*` directories) too; a link is
            // neither a file nor a directory here (the entry's own metadata), and stays.
            let git_dir = entry.file_name().to_string_lossy().starts_with("git-");
            let Some(meta) = entry
                .metadata()
                .ok()
                .filter(|m| m.is_file() || (git_dir && m.is_dir()))
            else {
                continue;
            };
            let stale = meta
                .modified()
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > STALE_TMP);
            if stale && meta.is_dir() {
                let _ = fs_err::remove_dir_all(entry.path());
            } else if stale {
                let _ = fs_err::remove_file(entry.path());
            }
        }
    }

    fn write_atomically(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        // Once per process, where the process writes anyway (a read-only cache is never
        // touched).
        static CLEANED: std::sync::Once = std::sync::Once::new();
        let Some(root) = &self.root else {
            return Ok(());
        };
        CLEANED.call_once(|| self.clean_stale_tmp());
        let tmp_dir = root.join("tmp");
        let parent = path.parent().unwrap_or(root);
        for dir in [&tmp_dir, &parent.to_path_buf()] {
            fs_err::create_dir_all(dir)?;
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let tmp = tmp_dir.join(format!(
            "{}.{}.{nanos}",
            std::process::id(),
            sha256_hex(path.to_string_lossy().as_bytes())
        ));
        let result = (|| {
            use std::io::Write as _;
            let mut file = fs_err::File::create(&tmp)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            fs_err::rename(&tmp, path)
        })();
        if let Err(e) = result {
            let _ = fs_err::remove_file(&tmp);
            return Err(e);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_verified_on_read_and_refs_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path());
        let hex = cache.put_blob(b"hello").unwrap();
        assert_eq!(hex, sha256_hex(b"hello"));
        assert_eq!(cache.get_blob(&hex).as_deref(), Some(&b"hello"[..]));
        // Corrupt it: the read notices, removes it and reports a miss.
        fs_err::write(dir.path().join("blobs/sha256").join(&hex), b"tampered").unwrap();
        assert_eq!(cache.get_blob(&hex), None);
        assert!(!dir.path().join("blobs/sha256").join(&hex).exists());
        let entry = RefEntry {
            digest: hex.clone(),
            kind: "file".into(),
            name: "catalog.yaml".into(),
            via: vec!["https://cdn.example.com/c.yaml".into()],
        };
        cache.put_ref("https://example.com/c.yaml", &entry).unwrap();
        assert_eq!(cache.get_ref("https://example.com/c.yaml"), Some(entry));
        assert_eq!(cache.get_ref("https://example.com/other.yaml"), None);
        // Nothing is left in tmp/.
        assert_eq!(fs_err::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
    }

    #[test]
    fn issue9_f3_blob_names_that_are_not_digests_never_reach_the_file_system() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().join("cache"));
        cache.put_blob(b"hello").unwrap();
        let victim = dir.path().join("victim");
        fs_err::write(&victim, b"precious").unwrap();
        for name in ["../../../victim", "../../../victim\0", "", "ABC"] {
            assert_eq!(cache.get_blob(name), None, "{name}");
        }
        assert_eq!(fs_err::read(&victim).unwrap(), b"precious");
    }

    #[test]
    fn issue9_stale_temp_files_of_killed_writers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path());
        let tmp = dir.path().join("tmp");
        fs_err::create_dir_all(&tmp).unwrap();
        let old = std::time::SystemTime::now() - STALE_TMP - std::time::Duration::from_secs(60);
        let stale = tmp.join("1234.abc.1");
        fs_err::write(&stale, vec![0u8; 1024]).unwrap();
        fs_err::File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let fresh = tmp.join("5678.def.2");
        fs_err::write(&fresh, b"a write in progress").unwrap();
        cache.clean_stale_tmp();
        assert!(!stale.exists(), "a killed writer's file stays forever");
        assert!(
            fresh.exists(),
            "another process's write in progress was removed"
        );
    }

    #[test]
    fn issue12_stale_git_fetch_directories_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path());
        let tmp = dir.path().join("tmp");
        let stale = tmp.join("git-1-2");
        fs_err::create_dir_all(stale.join("objects")).unwrap();
        let old = std::time::SystemTime::now() - STALE_TMP - std::time::Duration::from_secs(60);
        fs_err::File::open(&stale)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let fresh = tmp.join("git-3-4");
        let other = tmp.join("not-ours");
        fs_err::create_dir_all(&fresh).unwrap();
        fs_err::create_dir_all(&other).unwrap();
        fs_err::File::open(&other)
            .unwrap()
            .set_modified(old)
            .unwrap();
        cache.clean_stale_tmp();
        assert!(!stale.exists(), "a killed fetch's repository stays forever");
        assert!(fresh.exists() && other.exists());
    }

    #[test]
    fn no_root_means_no_storage() {
        let cache = Cache {
            root: None,
            origin: None,
        };
        assert!(cache.put_blob(b"x").is_ok());
        assert_eq!(cache.get_blob(&sha256_hex(b"x")), None);
    }
}

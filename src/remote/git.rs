//! Git catalog sources (SPEC §4.2): a shallow fetch (depth 1) of one ref with `gix`, pure Rust,
//! no `git` binary and no credential helpers; the catalog's subtree is read from the object
//! database (never checked out, so no link on disk is followed) with the bundle bounds, cached
//! as a `.tar.gz` blob under the commit, and loaded like any bundle.
//!
//! Bounds: the whole fetch runs on its own thread and is abandoned at its deadline; the pack on
//! disk is watched and the fetch interrupted past the download limit; the files read from the
//! tree obey the catalog bundle limits. `file://` repositories are opened in place (gix would
//! spawn `git-upload-pack` for them).

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::catalog::{Bundle, CatalogError, Origin};
use crate::catalog_ref::{GitRef, is_commit_id};

use super::archive::{self, Bounds};
use super::cache::{Cache, RefEntry};
use super::git_credentials::Scope;
use super::git_transport::{anon_memory, dir_size};

pub use super::error::GitError;
use super::git_tree::{Select, Tree, chain, fetch_error, parsed_url, read_commit};

/// A Git catalog loaded from the cache or the network: its files and the commit they are of.
pub struct Fetched {
    /// The commit the files were read from.
    pub commit: String,
    /// The catalog files (paths relative to `path`).
    pub files: Vec<(String, Vec<u8>)>,
    /// A warning to report with the bundle (an unpinned ref, an offline resolution).
    pub warning: Option<String>,
}

/// The cache key of a commit's subtree (content-addressed by the commit id).
fn commit_key(source: &GitRef, commit: &str) -> String {
    source.at_commit(commit)
}

/// The cache key of the last resolution of an unpinned ref.
fn ref_key(source: &GitRef) -> String {
    let mut key = format!("git:{}?ref={}", source.display_url(), source.reference);
    if let Some(p) = &source.path {
        key.push_str("&path=");
        key.push_str(p);
    }
    key
}

/// Whether a fetch may answer a server that asks for credentials: only for a source the run
/// trusts (or that the user named on the command line to pull it), never for one being viewed
/// before it is trusted (issue 21 H6). Even then a credential goes only to the host it is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credentials {
    /// `KRM_CATALOG_GIT_TOKEN` to the host of `KRM_CATALOG_GIT_TOKEN_HOST`, a `.netrc`
    /// `machine` entry to its host.
    Scoped,
    /// None at all (`catalog view`: the source is not trusted yet).
    Withheld,
}

/// Load `source`: a pinned commit from the cache when it is there (the commit id names the
/// content), else by a shallow fetch; offline, an unpinned ref is taken at its last resolution
/// the cache recorded, with a warning.
pub fn load(
    source: &GitRef,
    cache: &Cache,
    offline: bool,
    credentials: Credentials,
) -> Result<Fetched, GitError> {
    let url = source.display_url();
    if let Some(pin) = source.pin()
        && let Some(files) = cached_tree(cache, &commit_key(source, pin))
    {
        crate::log!(
            crate::logger::Level::Info,
            "{url}@{pin}: from {}",
            cache.describe()
        );
        return Ok(Fetched {
            commit: pin.to_owned(),
            files,
            warning: None,
        });
    }
    if offline {
        // An unpinned ref offline: the last resolution the cache recorded, with a warning
        // (the ref may have moved since).
        if source.pin().is_none()
            && let Some(entry) = cache.get_ref(&ref_key(source))
            && let Some(files) = blob_files(cache, &entry.digest)
        {
            return Ok(Fetched {
                warning: Some(format!(
                    "offline: ref \"{}\" is taken as commit {}, its last resolution in {}; it may have moved since (pin it with commit: {})",
                    source.reference,
                    entry.name,
                    cache.describe(),
                    entry.name
                )),
                commit: entry.name,
                files,
            });
        }
        return Err(GitError::NotPulled {
            reference: source.to_string(),
            cache: cache.describe(),
        });
    }
    let (commit, files) = if let Some(dir) = source.url.strip_prefix("file://") {
        read_local(source, Path::new(dir), Select::Catalog)?
    } else {
        fetch_remote(source, cache, credentials, Select::Catalog)?
    };
    if let Some(pin) = source.pin()
        && pin != commit
    {
        return Err(GitError::Moved {
            url,
            reference: source.reference.clone(),
            expected: pin.to_owned(),
            got: commit,
        });
    }
    store(cache, source, &commit, &files);
    let warning = source.pin().is_none().then(|| {
        format!(
            "ref \"{}\" is not pinned: it resolved to commit {commit} now, and may move; pin it with {}",
            source.reference,
            source.pinned_entry(&commit)
        )
    });
    Ok(Fetched {
        commit,
        files,
        warning,
    })
}

/// The file at `source.path` in the commit `source` pins (an exec binary or a Starlark
/// script, issue 23): fetched like a catalog (the same bounds, the isolated configuration,
/// credentials only for their host), read from the object database (a link or a directory
/// is refused), no larger than `KRM_CATALOG_MAX_DOWNLOAD_BYTES`. Not cached here: the caller
/// verifies the bytes against the runtime's sha256 and caches them under it.
pub fn load_file(source: &GitRef, cache: &Cache) -> Result<Vec<u8>, GitError> {
    let url = source.display_url();
    let Some(pin) = source.pin() else {
        return Err(GitError::Fetch {
            url,
            reference: source.reference.clone(),
            reason: "a runtime must pin its commit: add &commit=<full commit id>".to_owned(),
        });
    };
    let (commit, files) = if let Some(dir) = source.url.strip_prefix("file://") {
        read_local(source, Path::new(dir), Select::File)?
    } else {
        fetch_remote(source, cache, Credentials::Scoped, Select::File)?
    };
    if pin != commit {
        return Err(GitError::Moved {
            url,
            reference: source.reference.clone(),
            expected: pin.to_owned(),
            got: commit,
        });
    }
    files
        .into_iter()
        .next()
        .map(|(_, bytes)| bytes)
        .ok_or_else(|| fetch_error(source, "the commit has no such file"))
}

/// Load `source` as a bundle (problems in the bundle).
pub fn bundle(fetched: Fetched, source: &GitRef) -> Bundle {
    let origin = Origin::Git {
        source: source.clone(),
        commit: Some(fetched.commit.clone()),
    };
    let label = origin.label();
    let borrowed: Vec<(String, &[u8])> = fetched
        .files
        .iter()
        .map(|(p, c)| (p.clone(), c.as_slice()))
        .collect();
    let mut bundle = Bundle::from_files(origin, &borrowed);
    if let Some(w) = fetched.warning {
        bundle.problems.push(CatalogError::new(&label, w).warning());
    }
    bundle
}

fn cached_tree(cache: &Cache, key: &str) -> Option<Vec<(String, Vec<u8>)>> {
    let entry = cache.get_ref(key)?;
    blob_files(cache, &entry.digest)
}

fn blob_files(cache: &Cache, hex: &str) -> Option<Vec<(String, Vec<u8>)>> {
    let bytes = cache.get_blob(hex)?;
    // Exactly as stored: a single directory at the top is the commit's, not a wrapper.
    archive::unpack_exact(&bytes, &Bounds::catalog()).ok()
}

/// Store the subtree under its commit (and an unpinned ref's resolution); a cache that cannot
/// be written does not fail the run.
fn store(cache: &Cache, source: &GitRef, commit: &str, files: &[(String, Vec<u8>)]) {
    let borrowed: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_slice()))
        .collect();
    // A file the archive cannot hold as named leaves the commit uncached (fetched again next
    // time) rather than cached without it; the copy must read back as the very files (names,
    // order, bytes) of the commit.
    let result = archive::try_pack(&borrowed).and_then(|packed| {
        if archive::unpack_exact(&packed, &Bounds::catalog()).ok().as_deref() != Some(files) {
            return Err(std::io::Error::other(format!(
                "the files of commit {commit} do not read back the same from an archive (a name it cannot hold); not cached"
            )));
        }
        let hex = cache.put_blob(&packed)?;
        let entry = RefEntry {
            digest: hex,
            kind: "git".into(),
            name: commit.to_owned(),
            via: Vec::new(),
        };
        cache.put_ref(&commit_key(source, commit), &entry)?;
        cache.put_ref(&ref_key(source), &entry)
    });
    if let Err(e) = result {
        crate::log!(
            crate::logger::Level::Warn,
            "cannot write {}: {e}",
            cache.describe()
        );
    }
}

/// A `file://` repository, opened in place: the ref resolved locally, no process spawned.
fn read_local(source: &GitRef, dir: &Path, select: Select) -> Result<Tree, GitError> {
    let repo = gix::open_opts(
        dir,
        gix::open::Options::isolated().config_overrides([alloc_limit()]),
    )
    .map_err(|e| fetch_error(source, chain(&e)))?;
    let id = if is_commit_id(&source.reference) {
        gix::ObjectId::from_hex(source.reference.as_bytes()).map_err(|e| fetch_error(source, e))?
    } else {
        let candidates = [
            format!("refs/tags/{}", source.reference),
            format!("refs/heads/{}", source.reference),
            source.reference.clone(),
        ];
        let found = candidates
            .iter()
            .find_map(|name| repo.try_find_reference(name.as_str()).ok().flatten());
        let Some(mut reference) = found else {
            return Err(GitError::NoSuchRef {
                url: source.display_url(),
                reference: source.reference.clone(),
            });
        };
        reference
            .peel_to_id()
            .map_err(|e| fetch_error(source, e))?
            .detach()
    };
    read_commit(&repo, source, id, select)
}

/// A shallow fetch of the ref into a temporary bare repository, on a thread of its own that is
/// abandoned at the deadline, with the pack size watched.
fn fetch_remote(
    source: &GitRef,
    cache: &Cache,
    credentials: Credentials,
    select: Select,
) -> Result<Tree, GitError> {
    let url = source.display_url();
    if source.url.starts_with("http://") && !loopback(&source.url) {
        return Err(GitError::PlainHttp { url });
    }
    if source.url.starts_with("git://") && source.pin().is_none() && !loopback(&source.url) {
        return Err(GitError::PlainGit { url });
    }
    let dir = temp_dir(cache);
    let interrupt = Arc::new(AtomicBool::new(false));
    let deadline = crate::env::http_timeout().saturating_mul(4);
    let limit = crate::env::max_download_bytes() as u64;
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let (source, dir, interrupt) = (source.clone(), dir.clone(), interrupt.clone());
        std::thread::spawn(move || {
            let _ = tx.send(fetch_into(&source, &dir, &interrupt, credentials, select));
        });
    }
    let started = Instant::now();
    // Resolving a pack holds one object per level of a delta chain: the allocation limit bounds
    // each, this bounds them together (issue 21 H5), looked at every 10 ms.
    let memory_budget = crate::env::max_git_object_bytes().saturating_mul(8);
    let memory_before = anon_memory();
    // What has come so far is the pack being written under `objects/` (issue 22: a fetch
    // slower than a second says how it goes, as downloads do).
    let mut progress = super::net::Progress::new(&url, None);
    let received = || usize::try_from(dir_size(&dir.join("objects"), 0)).unwrap_or(usize::MAX);
    let mut ticks = 0u32;
    let result = loop {
        match rx.recv_timeout(Duration::from_millis(10)) {
            Ok(r) => break r,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                break Err(fetch_error(
                    source,
                    "the fetch thread ended without an answer",
                ));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        if started.elapsed() > deadline {
            interrupt.store(true, Ordering::Relaxed);
            break Err(GitError::Timeout {
                url: url.clone(),
                seconds: deadline.as_secs(),
            });
        }
        if let (Some(before), Some(now)) = (memory_before, anon_memory())
            && now.saturating_sub(before) > memory_budget
        {
            interrupt.store(true, Ordering::Relaxed);
            break Err(GitError::MemoryBudget {
                url: url.clone(),
                bytes: memory_budget,
            });
        }
        ticks = ticks.wrapping_add(1);
        if ticks.is_multiple_of(10) {
            let size = received();
            progress.update(size);
            if size as u64 > limit {
                interrupt.store(true, Ordering::Relaxed);
                break Err(GitError::PackTooBig {
                    url: url.clone(),
                    bytes: limit,
                });
            }
        }
    };
    progress.done(received());
    // A fetch that ended between two looks is measured once more.
    let result = match result {
        Ok(_) if dir_size(&dir.join("objects"), 0) > limit => Err(GitError::PackTooBig {
            url: url.clone(),
            bytes: limit,
        }),
        other => other,
    };
    // An abandoned fetch may still be writing: removing the directory under it makes it fail.
    let _ = fs_err::remove_dir_all(&dir);
    result
}

fn loopback(url: &str) -> bool {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(super::net::is_loopback_host))
        .unwrap_or(false)
}

fn temp_dir(cache: &Cache) -> PathBuf {
    let base = cache
        .root()
        .map_or_else(std::env::temp_dir, |r| r.join("tmp"));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    base.join(format!("git-{}-{nanos}", std::process::id()))
}

fn fetch_into(
    source: &GitRef,
    dir: &Path,
    interrupt: &AtomicBool,
    credentials: Credentials,
    select: Select,
) -> Result<Tree, GitError> {
    // Why a server that asked for credentials got none, added to the error it then gives.
    let withheld = Arc::new(std::sync::Mutex::new(None::<String>));
    let budget = Arc::new(super::git_transport::Budget::default());
    let e = |err: &dyn std::error::Error| {
        if budget.exhausted() {
            return GitError::TooManyRefs {
                url: source.display_url(),
                lines: super::git_transport::MAX_LINES,
                bytes: super::git_transport::MAX_LINE_BYTES,
            };
        }
        let note = withheld.lock().ok().and_then(|n| n.clone());
        match note {
            Some(note) => fetch_error(source, format!("{} ({note})", chain(err))),
            None => fetch_error(source, chain(err)),
        }
    };
    fs_err::create_dir_all(dir).map_err(|err| e(&err))?;
    gix::init_bare(dir).map_err(|err| e(&err))?;
    // Isolated: no system or user Git configuration (no url rewrites, no credential helpers,
    // no proxies of theirs); redirects are not followed (the trust list was checked for the
    // URL as written, and is not asked again for a hop).
    // gix's allocation limit bounds every object it unpacks (resolving the pack's deltas,
    // reading objects): the pack limit counts compressed bytes, and a few KB of deltas can
    // describe gigabytes (issue 21 H5).
    let options = gix::open::Options::isolated().config_overrides([
        "http.followRedirects=false".to_owned(),
        "http.lowSpeedLimit=1".to_owned(),
        "http.lowSpeedTime=30".to_owned(),
        "protocol.version=2".to_owned(),
        "protocol.allow=always".to_owned(),
        "protocol.file.allow=never".to_owned(),
        "protocol.ext.allow=never".to_owned(),
        "protocol.ssh.allow=never".to_owned(),
        alloc_limit(),
    ]);
    let repo = gix::open_opts(dir, options).map_err(|err| e(&err))?;
    let want_id = is_commit_id(&source.reference);
    let refspecs: Vec<String> = if want_id {
        vec![source.reference.clone()]
    } else {
        vec![
            format!("+refs/tags/{0}:refs/krm/tags/{0}", source.reference),
            format!("+refs/heads/{0}:refs/krm/heads/{0}", source.reference),
        ]
    };
    let remote = repo
        .remote_at(parsed_url(source).as_str())
        .map_err(|err| e(&err))?
        .with_fetch_tags(gix::remote::fetch::Tags::None)
        .with_refspecs(
            refspecs.iter().map(String::as_str),
            gix::remote::Direction::Fetch,
        )
        .map_err(|err| e(&err))?;
    let scope = Scope {
        withheld: credentials == Credentials::Withheld,
        token: crate::env::git_token(),
        token_host: crate::env::git_token_host(),
        note: withheld.clone(),
    };
    // gix's own transport for the URL, with the lines it reads counted (issue 21 M4).
    let (url, version) = remote
        .sanitized_url_and_version(gix::remote::Direction::Fetch)
        .map_err(|err| e(&err))?;
    let inner = gix::protocol::transport::client::blocking_io::connect::connect(
        url,
        gix::protocol::transport::client::blocking_io::connect::Options {
            version,
            ..Default::default()
        },
    )
    .map_err(|err| e(&err))?;
    let transport = super::git_transport::Bounded {
        inner,
        budget: budget.clone(),
    };
    let mut connection = remote
        .to_connection_with_transport(transport)
        .with_credentials(move |action| Ok(scope.answer(action)));
    if source.url.starts_with("https://") || source.url.starts_with("http://") {
        let options = http_options(&repo, source)?;
        connection.set_transport_options(options);
    }
    let outcome = connection
        .prepare_fetch(
            gix::progress::Discard,
            gix::remote::ref_map::Options::default(),
        )
        .map_err(|err| {
            let reason = chain(&err);
            match e(&err) {
                GitError::Fetch { reason: noted, .. } if noted != reason => {
                    return fetch_error(source, noted);
                }
                too_many @ GitError::TooManyRefs { .. } => return too_many,
                _ => {}
            }
            if reason.contains("matched any of") && !want_id {
                GitError::NoSuchRef {
                    url: source.display_url(),
                    reference: source.reference.clone(),
                }
            } else if reason.contains("'smart' protocol") {
                fetch_error(
                    source,
                    format!(
                        "{reason} (redirects are not followed: write the repository's final URL, and trust that)"
                    ),
                )
            } else {
                fetch_error(source, reason)
            }
        })?
        .with_shallow(gix::remote::fetch::Shallow::DepthAtRemote(NonZeroU32::MIN))
        .receive(gix::progress::Discard, interrupt)
        .map_err(|err| e(&err))?;
    // A tag wins over a branch of the same name, as `git fetch <name>` resolves it.
    let mut mapped: Vec<(String, gix::ObjectId)> = outcome
        .ref_map
        .mappings
        .iter()
        .filter_map(|m| {
            let name = m
                .remote
                .as_name()
                .map_or_else(String::new, ToString::to_string);
            m.remote.as_id().map(|id| (name, id.to_owned()))
        })
        .collect();
    mapped.sort_by_key(|(name, _)| !name.starts_with("refs/tags/"));
    let Some((_, id)) = mapped.into_iter().next() else {
        if want_id {
            return Err(fetch_error(
                source,
                "the server sent no such commit (it may not allow fetching a commit by id: set ref to the tag or branch and commit to the id)",
            ));
        }
        return Err(GitError::NoSuchRef {
            url: source.display_url(),
            reference: source.reference.clone(),
        });
    };
    read_commit(&repo, source, id, select)
}

/// The `gitoxide.objects.allocLimit` override: no single allocation for an object's data (a
/// pack entry, a resolved delta, an object read) above `KRM_CATALOG_MAX_GIT_OBJECT_BYTES`.
fn alloc_limit() -> String {
    format!(
        "gitoxide.objects.allocLimit={}",
        crate::env::max_git_object_bytes()
    )
}

/// The HTTP options the isolated configuration gives, plus the client of the rest of the
/// remote module: rustls on ring, the extra CA of `KRM_CATALOG_CA_FILE`, our user agent.
fn http_options(
    repo: &gix::Repository,
    source: &GitRef,
) -> Result<Box<dyn std::any::Any>, GitError> {
    use gix::protocol::transport::client::blocking_io::http;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut options = repo
        .transport_options(parsed_url(source).as_str(), None)
        .map_err(|err| fetch_error(source, err))?
        .unwrap_or_else(|| Box::new(http::Options::default()));
    let certs = match crate::env::ca_file() {
        Some(path) => {
            let pem = fs_err::read(&path).map_err(|err| fetch_error(source, err))?;
            Some(reqwest::Certificate::from_pem_bundle(&pem).map_err(|err| {
                fetch_error(
                    source,
                    format!(
                        "{}: {} is not a PEM bundle: {err}",
                        crate::env::CA_FILE,
                        path.to_string_lossy()
                    ),
                )
            })?)
        }
        None => None,
    };
    if let Some(http_options) = options.downcast_mut::<http::Options>() {
        http_options.user_agent =
            Some(concat!("krm-catalog/", env!("CARGO_PKG_VERSION")).to_owned());
        let backend = http::reqwest::Options {
            configure_client: Some(Box::new(move |builder| {
                Ok(match &certs {
                    Some(certs) => builder.tls_certs_merge(certs.clone()),
                    None => builder,
                })
            })),
            configure_request: None,
        };
        http_options.backend = Some(std::sync::Arc::new(std::sync::Mutex::new(backend)));
    }
    Ok(options)
}

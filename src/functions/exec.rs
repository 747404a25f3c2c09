//! Exec runtimes: pick the platform of this machine, fetch `uri` (HTTPS, `file://`, an OCI
//! artifact or a file of a pinned Git commit), require its sha256, unpack `bin` from a
//! `.tar.gz`, a `.zip` or a tar layer, and keep the verified binary in the cache so a warm run
//! needs no network.

use std::path::{Path, PathBuf};

use super::RuntimeError;
use crate::catalog::kep::Platform;
use crate::catalog_ref::RuntimeSource;
use crate::remote::RuntimeWant;
use crate::remote::archive::{self, ArchiveError};
use crate::remote::{Remote, RemoteError};
use crate::verify::sha256_hex;

/// The KEP's name for this machine's OS and architecture.
pub fn this_platform() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    (os, arch)
}

/// The platform entry for this machine.
pub fn select(platforms: &[Platform]) -> Result<&Platform, RuntimeError> {
    let (os, arch) = this_platform();
    platforms
        .iter()
        .find(|p| p.os == os && p.arch == arch)
        .ok_or_else(|| {
            let have: Vec<String> = platforms
                .iter()
                .map(|p| format!("{}/{}", p.os, p.arch))
                .collect();
            RuntimeError::NoPlatform {
                platform: format!("{os}/{arch}"),
                have: have.join(", "),
            }
        })
}

/// Which platforms `catalog pull` prepares exec binaries for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullPlatforms {
    /// This machine's ([`this_platform`]): what a run here needs.
    This,
    /// These `os`/`arch` pairs (`--platform`, e.g. the platform of the container a cache is
    /// mounted into).
    These(Vec<(String, String)>),
    /// Every platform a runtime lists (`--all-platforms`).
    All,
}

impl PullPlatforms {
    /// The entries of `platforms` to pull, and each asked-for `os/arch` that has none.
    pub fn select<'a>(&self, platforms: &'a [Platform]) -> (Vec<&'a Platform>, Vec<String>) {
        let wanted: Vec<(String, String)> = match self {
            Self::All => return (platforms.iter().collect(), Vec::new()),
            Self::This => {
                let (os, arch) = this_platform();
                vec![(os.to_owned(), arch.to_owned())]
            }
            Self::These(list) => list.clone(),
        };
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for (os, arch) in &wanted {
            match platforms.iter().find(|p| p.os == *os && p.arch == *arch) {
                Some(p) => found.push(p),
                None => missing.push(format!("{os}/{arch}")),
            }
        }
        (found, missing)
    }
}

/// Download (or read from the cache) and verify a platform's binary; returns the path of a
/// verified executable copy in the cache. `root` is the root of the catalog that names it
/// (see [`fetch`]).
pub fn prepare(
    platform: &Platform,
    remote: &Remote,
    root: Option<&Path>,
) -> Result<PathBuf, RuntimeError> {
    let declared = platform
        .sha256
        .as_deref()
        .ok_or_else(|| RuntimeError::NoSha256(platform.uri.clone()))?;
    let binary = fetch_verified(
        &platform.uri,
        declared,
        remote,
        root,
        Some(platform),
        |bytes| {
            extract(bytes, &platform.bin).map_err(|error| RuntimeError::Archive {
                uri: platform.uri.clone(),
                error,
            })
        },
    )?;
    install(&binary, remote)
}

/// The bytes of `uri`, whose sha256 must be `declared` (hex or `sha256:hex`), made usable by
/// `accept` (unpacked, decoded): from the cache when it holds them (the cache re-hashes what
/// it reads), else fetched ([`fetch`]), verified and accepted before they are cached, so a
/// download that fails its bounds leaves nothing in the cache. Exec binaries and Starlark
/// scripts come this way.
pub fn fetch_verified<T>(
    uri: &str,
    declared: &str,
    remote: &Remote,
    root: Option<&Path>,
    platform: Option<&Platform>,
    accept: impl Fn(&[u8]) -> Result<T, RuntimeError>,
) -> Result<T, RuntimeError> {
    let declared = super::normalize_digest(declared)?;
    let hex = declared.trim_start_matches("sha256:").to_owned();
    if let Some(bytes) = remote.cache().get_blob(&hex) {
        return accept(&bytes);
    }
    let download = fetch(uri, remote, root, platform)?;
    let got = sha256_hex(&download);
    if got != hex {
        return Err(RemoteError::Mismatch {
            url: uri.to_owned(),
            expected: hex,
            got,
        }
        .into());
    }
    let accepted = accept(&download)?;
    if let Err(e) = remote.cache().put_blob(&download) {
        crate::log!(
            crate::logger::Level::Warn,
            "{}",
            remote.cache().not_writable(&e)
        );
    }
    Ok(accepted)
}

/// Fetch a URI: `https://` (or loopback `http://`) through the network stack, `file://` from
/// disk, confined to `root`, the root of the local catalog that names it (SPEC §7.3), an
/// `oci://` artifact (the layer for `platform`, this machine's when `None`, titled by its
/// `bin`), or a file of a pinned Git commit (`git::<repo>//<path>?…&commit=<sha>`; a
/// `file://` repository, like a `file://` URI, only inside `root`). A remote (or built-in)
/// catalog has no root (`None`): it cannot name anything on this machine.
pub fn fetch(
    uri: &str,
    remote: &Remote,
    root: Option<&Path>,
    platform: Option<&Platform>,
) -> Result<Vec<u8>, RuntimeError> {
    let source = RuntimeSource::parse(uri).map_err(|reason| RuntimeError::Source {
        uri: uri.to_owned(),
        reason,
    })?;
    match source {
        RuntimeSource::File(_) => {
            let path = uri.trim().strip_prefix("file://").unwrap_or_default();
            let path = resolve_file_uri(uri, path, root)?;
            Ok(fs_err::read(&path)?)
        }
        RuntimeSource::Url(url) => Ok(remote.fetch_url(&url)?),
        RuntimeSource::Oci(_) => {
            let (os, arch): (&str, &str) = match platform {
                Some(p) => (&p.os, &p.arch),
                None => this_platform(),
            };
            let want = RuntimeWant {
                os,
                arch,
                bin: platform.map(|p| p.bin.as_str()),
            };
            let reference = uri.trim().trim_start_matches("oci://");
            Ok(remote.fetch_oci_runtime(reference, want)?)
        }
        RuntimeSource::Git(mut source) => {
            if let Some(dir) = source.url.strip_prefix("file://") {
                let repository = local_repository(uri, dir, root)?;
                source.url = format!("file://{}", repository.display());
            }
            Ok(remote.fetch_git_runtime(&source)?)
        }
    }
}

/// The directory of a `git::file://` repository: relative paths resolve against `root`, and
/// the result, links resolved, must be inside it (as for `file://` URIs).
fn local_repository(uri: &str, dir: &str, root: Option<&Path>) -> Result<PathBuf, RuntimeError> {
    let fail = |reason: String| RuntimeError::GitFileNotLocal {
        uri: uri.to_owned(),
        reason,
    };
    let Some(root) = root else {
        return Err(fail("the catalog is not local".to_owned()));
    };
    let root = fs_err::canonicalize(root)?;
    let real = fs_err::canonicalize(root.join(dir)).map_err(|e| fail(format!("{dir}: {e}")))?;
    if !real.starts_with(&root) || !real.is_dir() {
        return Err(fail(format!(
            "{} is not a directory inside {}",
            real.display(),
            root.display()
        )));
    }
    Ok(real)
}

/// The regular file a `file://` URI names: relative paths resolve against `root`, and the
/// result, with every link resolved, must lie inside `root` (no `..`, no absolute path or
/// link leading out), so a catalog can only run binaries it ships.
pub(super) fn resolve_file_uri(
    uri: &str,
    path: &str,
    root: Option<&Path>,
) -> Result<PathBuf, RuntimeError> {
    let Some(root) = root else {
        return Err(RuntimeError::FileUriNotLocal(uri.to_owned()));
    };
    let relative = Path::new(path);
    if relative
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(RuntimeError::FileUriParent {
            uri: uri.to_owned(),
            root: root.display().to_string(),
        });
    }
    let root = fs_err::canonicalize(root)?;
    let candidate = root.join(relative);
    let real = fs_err::canonicalize(&candidate)?;
    if !real.starts_with(&root) {
        return Err(RuntimeError::FileUriOutside {
            uri: uri.to_owned(),
            real: real.display().to_string(),
            root: root.display().to_string(),
        });
    }
    let meta = fs_err::metadata(&real)?;
    if !meta.is_file() {
        return Err(RuntimeError::FileUriNotAFile {
            uri: uri.to_owned(),
            path: real.display().to_string(),
        });
    }
    let limit = crate::remote::net::max_download_bytes();
    if usize::try_from(meta.len()).unwrap_or(usize::MAX) > limit {
        return Err(RuntimeError::FileUriTooBig {
            uri: uri.to_owned(),
            bytes: meta.len(),
            limit,
            env: crate::env::MAX_DOWNLOAD_BYTES,
        });
    }
    Ok(real)
}

/// The binary named `bin` inside an archive, or the download itself. Archives are bounded
/// as [`archive::Bounds::exec`] says, zip the same as tar (issue 9, F10): entry count, bytes
/// of the entry, and the unpacked/packed ratio, all checked while reading.
pub fn extract(download: &[u8], bin: &str) -> Result<Vec<u8>, ArchiveError> {
    let wanted = |name: &str| name == bin || name.rsplit('/').next() == Some(bin);
    let bounds = archive::Bounds::exec();
    if archive::is_gzip(download) {
        let files = archive::unpack(download, &bounds)?;
        return files
            .into_iter()
            .find(|(n, _)| wanted(n))
            .map(|(_, c)| c)
            .ok_or_else(|| ArchiveError::Missing(bin.to_owned()));
    }
    if download.starts_with(b"PK\x03\x04") {
        // Before the central directory is parsed: the zip reader reads as many headers as the
        // end record declares.
        let max = u64::try_from(archive::MAX_ENTRIES).unwrap_or(u64::MAX);
        if archive::zip_declared_entries(download).is_some_and(|n| n > max) {
            return Err(ArchiveError::TooManyEntries);
        }
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(download))
            .map_err(|e| ArchiveError::NotZip(e.to_string()))?;
        if zip.len() > archive::MAX_ENTRIES {
            return Err(ArchiveError::TooManyEntries);
        }
        for i in 0..zip.len() {
            let file = zip
                .by_index(i)
                .map_err(|e| ArchiveError::CorruptZip(e.to_string()))?;
            let name = file
                .name()
                .map_err(|e| ArchiveError::CorruptZip(e.to_string()))?
                .into_owned();
            if name.split('/').any(|s| s == "..") || name.starts_with('/') {
                return Err(ArchiveError::Escapes {
                    name,
                    root: "archive",
                });
            }
            if file.is_file() && wanted(&name) {
                // The declared size fails early; reading is bounded whatever it declares.
                if file.size() > bounds.file {
                    return Err(bounds.file_error(&name));
                }
                return archive::read_bounded(
                    file,
                    &name,
                    "the archive",
                    0,
                    &bounds,
                    download.len(),
                );
            }
        }
        return Err(ArchiveError::Missing(bin.to_owned()));
    }
    // An uncompressed tar: an OCI layer of type `application/vnd.oci.image.layer.v1.tar` that
    // holds a file tree (a single file pushed by `oras push` is stored as itself).
    if archive::is_tar(download) {
        return archive::unpack_tar(download, &archive::Bounds::exec())?
            .into_iter()
            .find(|(n, _)| wanted(n))
            .map(|(_, c)| c)
            .ok_or_else(|| ArchiveError::Missing(bin.to_owned()));
    }
    Ok(download.to_vec())
}

/// Put a verified binary in the cache as an executable named after its own hash; an existing
/// copy is re-hashed before use.
fn install(binary: &[u8], remote: &Remote) -> Result<PathBuf, RuntimeError> {
    let hex = sha256_hex(binary);
    // The temporary copy lives outside `bin/`, so a process killed mid-write leaves nothing
    // there that looks like a binary.
    let (dir, tmp_dir) = match remote.cache().root() {
        Some(root) => (root.join("bin"), root.join("tmp")),
        None => {
            let dir = private_temp_dir()?;
            (dir.clone(), dir)
        }
    };
    let path = dir.join(&hex);
    if let Ok(existing) = fs_err::read(&path) {
        if sha256_hex(&existing) == hex {
            return Ok(path);
        }
        let _ = fs_err::remove_file(&path);
    }
    let tmp = tmp_dir.join(format!("bin.{hex}.{}", std::process::id()));
    let result = (|| {
        use std::io::Write as _;
        for d in [&dir, &tmp_dir] {
            fs_err::create_dir_all(d)?;
        }
        let mut file = fs_err::File::create(&tmp)?;
        file.write_all(binary)?;
        file.sync_all()?;
        drop(file);
        set_executable(&tmp)?;
        fs_err::rename(&tmp, &path)
    })();
    if let Err(error) = result {
        let _ = fs_err::remove_file(&tmp);
        if remote.cache().root().is_some() {
            // The cache directory (a container's missing home, a read-only mount): say which,
            // and what to mount and set.
            return Err(RemoteError::from(remote.cache().not_writable(&error)).into());
        }
        return Err(RuntimeError::Install {
            dir: dir.display().to_string(),
            error,
        });
    }
    Ok(path)
}

/// A new directory in the temp directory that only we can use (created exclusively, mode
/// 0700, a random name), for binaries when there is no cache. A fixed name in a shared temp
/// directory could be created first by another user, who could then swap the binary between
/// its check and its run.
fn private_temp_dir() -> Result<PathBuf, RuntimeError> {
    let base = std::env::temp_dir();
    let made = super::create_with_random_name(
        |random| base.join(format!("krm-catalog-bin-{random:016x}")),
        |dir| {
            #[expect(
                clippy::disallowed_types,
                reason = "fs_err has no DirBuilder; the errors below name the path"
            )]
            let mut builder = std::fs::DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(dir)
        },
    );
    let reason = match made {
        Ok((dir, ())) => return Ok(dir),
        Err(super::Unnamed::Failed(e)) => format!(": {e}"),
        Err(super::Unnamed::Taken(dir, e)) => format!(" ({}: {e})", dir.display()),
    };
    Err(RuntimeError::TempDir {
        base: base.display().to_string(),
        reason,
        no_cache: crate::env::no_cache_reason(),
        hint: crate::remote::cache_hint(),
    })
}

#[cfg(unix)]
fn set_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn set_executable(_: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_from_tar_gz_and_zip() {
        let tgz = archive::pack(&[("dist/fn", b"#!/bin/sh\n"), ("README", b"x")]);
        assert_eq!(extract(&tgz, "fn").unwrap(), b"#!/bin/sh\n");
        assert!(
            extract(&tgz, "other")
                .unwrap_err()
                .to_string()
                .contains("no \"other\"")
        );
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut buf);
            w.start_file("fn", zip::write::SimpleFileOptions::default())
                .unwrap();
            std::io::Write::write_all(&mut w, b"zipped").unwrap();
            w.finish().unwrap();
        }
        assert_eq!(extract(buf.get_ref(), "fn").unwrap(), b"zipped");
        assert_eq!(extract(b"plain", "fn").unwrap(), b"plain");
    }

    /// A zip whose end record declares more entries than allowed is refused before its
    /// central directory is read (the zip reader would read as many headers as declared),
    /// with or without a comment after the record; a zip that declares few is read.
    #[test]
    fn a_zip_declaring_too_many_entries_is_refused_before_it_is_parsed() {
        let zip_with = |comment: &str| {
            let mut buf = std::io::Cursor::new(Vec::new());
            {
                let mut w = zip::ZipWriter::new(&mut buf);
                w.set_comment(comment.to_owned()).unwrap();
                w.start_file("fn", zip::write::SimpleFileOptions::default())
                    .unwrap();
                std::io::Write::write_all(&mut w, b"zipped").unwrap();
                w.finish().unwrap();
            }
            buf.into_inner()
        };
        for comment in ["", "PK\u{5}\u{6} a comment that looks like a record"] {
            let good = zip_with(comment);
            assert_eq!(archive::zip_declared_entries(&good), Some(1));
            assert_eq!(extract(&good, "fn").unwrap(), b"zipped");
            // Declare 20,000 entries (both counts of the end record).
            let at = good.len() - 22 - comment.len();
            assert_eq!(&good[at..at + 4], b"PK\x05\x06");
            let mut bad = good.clone();
            for field in [at + 8, at + 10] {
                bad[field..field + 2].copy_from_slice(&20_000u16.to_le_bytes());
            }
            assert_eq!(archive::zip_declared_entries(&bad), Some(20_000));
            assert!(
                matches!(extract(&bad, "fn"), Err(ArchiveError::TooManyEntries)),
                "{:?}",
                extract(&bad, "fn")
            );
        }
        assert_eq!(
            archive::zip_declared_entries(b"PK\x03\x04 no end record"),
            None
        );
    }

    /// Issue 23: a `git::file://` repository is, like a `file://` URI, only for local
    /// catalogs, and only inside their root; an uncompressed tar layer is unpacked.
    #[test]
    fn issue23_git_file_repositories_stay_local_and_plain_tars_unpack() {
        let dir = tempfile::tempdir().unwrap();
        let remote = Remote::with_cache(
            crate::remote::cache::Cache::at(dir.path().join("cache")),
            false,
        );
        let uri = format!("git::file://repo//fn?commit={}", "a".repeat(40));
        let err = fetch(&uri, &remote, None, None).unwrap_err().to_string();
        assert!(err.contains("must be a directory inside the local catalog that names it (the catalog is not local)"), "{err}");
        let root = dir.path().join("catalog");
        fs_err::create_dir_all(&root).unwrap();
        let outside = format!("git::file://../cache//fn?commit={}", "a".repeat(40));
        fs_err::create_dir_all(dir.path().join("cache")).unwrap();
        let err = fetch(&outside, &remote, Some(&root), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not a directory inside"), "{err}");

        let mut tar = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(4);
        header.set_mode(0o755);
        header.set_cksum();
        tar.append_data(&mut header, "bin/fn", &b"echo"[..])
            .unwrap();
        let tar = tar.into_inner().unwrap();
        assert!(archive::is_tar(&tar));
        assert_eq!(extract(&tar, "fn").unwrap(), b"echo");
        assert!(matches!(
            extract(&tar, "other"),
            Err(ArchiveError::Missing(_))
        ));
    }

    #[test]
    fn issue11_pull_selects_this_the_named_or_every_platform() {
        let (os, arch) = this_platform();
        let p = |os: &str, arch: &str| Platform {
            bin: "fn".into(),
            os: os.into(),
            arch: arch.into(),
            uri: format!("https://example.com/fn-{os}-{arch}"),
            sha256: None,
        };
        let platforms = vec![p("windows", "amd64"), p(os, arch), p("darwin", "arm64")];
        let (found, missing) = PullPlatforms::This.select(&platforms);
        assert_eq!((found.len(), found[0].os.as_str()), (1, os));
        assert!(missing.is_empty());
        let these = PullPlatforms::These(vec![
            ("darwin".into(), "arm64".into()),
            ("linux".into(), "arm64".into()),
        ]);
        let (found, missing) = these.select(&platforms[..1]);
        assert!(found.is_empty());
        assert_eq!(missing, ["darwin/arm64", "linux/arm64"]);
        let (found, _) = these.select(&platforms);
        assert_eq!(found[0].uri, "https://example.com/fn-darwin-arm64");
        assert_eq!(PullPlatforms::All.select(&platforms).0.len(), 3);
    }

    #[test]
    fn selects_this_platform() {
        let (os, arch) = this_platform();
        let p = |os: &str, arch: &str| Platform {
            bin: "fn".into(),
            os: os.into(),
            arch: arch.into(),
            uri: "file:///x".into(),
            sha256: None,
        };
        let platforms = vec![p("windows", "amd64"), p(os, arch)];
        assert_eq!(select(&platforms).unwrap().os, os);
        assert!(
            select(&platforms[..1])
                .unwrap_err()
                .to_string()
                .contains("no exec runtime for")
        );
    }
}

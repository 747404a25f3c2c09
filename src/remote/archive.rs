//! `.tar.gz` catalog bundles, unpacked in memory: every entry must stay inside the bundle
//! root (no absolute paths, no `..`, no links), and the total size is bounded.

use std::io::Read as _;

/// Whether bytes start like gzip.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Whether bytes are a (POSIX or GNU) tar archive: `ustar` at offset 257 of the first header.
/// An OCI layer of media type `application/vnd.oci.image.layer.v1.tar` may be one, or (as
/// `oras push` stores a single file) the file itself.
pub fn is_tar(bytes: &[u8]) -> bool {
    bytes.get(257..262) == Some(b"ustar".as_slice())
}

/// Entries in one archive (tar or zip).
pub const MAX_ENTRIES: usize = 10_000;

/// The entry count a zip archive declares in its end-of-central-directory record (and its
/// zip64 record, the larger of them), so an archive that declares too many is refused before
/// its central directory is parsed (the zip crate reads as many headers as declared). `None`
/// when no end record is found (the zip reader then says what is wrong).
pub fn zip_declared_entries(bytes: &[u8]) -> Option<u64> {
    const EOCD: &[u8] = b"PK\x05\x06";
    const EOCD_LEN: usize = 22;
    let le16 = |at: usize| {
        bytes
            .get(at..at + 2)
            .map(|b| u64::from(u16::from_le_bytes([b[0], b[1]])))
    };
    let le64 = |at: usize| {
        bytes
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    // The record ends the file but for a comment of at most 65,535 bytes: the last signature
    // whose comment length reaches the end exactly, else the last signature at all.
    let from = bytes.len().saturating_sub(EOCD_LEN + usize::from(u16::MAX));
    let tail = bytes.get(from..)?;
    let mut found = None;
    for (i, window) in tail.windows(EOCD.len()).enumerate().rev() {
        if window != EOCD {
            continue;
        }
        let at = from + i;
        let comment = le16(at + 20).and_then(|c| usize::try_from(c).ok());
        if comment.is_some_and(|c| at + EOCD_LEN + c == bytes.len()) {
            found = Some(at);
            break;
        }
        found.get_or_insert(at);
    }
    let at = found?;
    let declared = le16(at + 8).max(le16(at + 10))?;
    // A zip64 locator right before the record points at the zip64 end record.
    let zip64 = at
        .checked_sub(20)
        .filter(|&loc| bytes.get(loc..loc + 4) == Some(b"PK\x06\x07"))
        .and_then(|loc| le64(loc + 8))
        .and_then(|offset| usize::try_from(offset).ok())
        .filter(|&rec| bytes.get(rec..rec + 4) == Some(b"PK\x06\x06"))
        .and_then(|rec| le64(rec + 24).max(le64(rec + 32)));
    Some(declared.max(zip64.unwrap_or(0)))
}
/// Output below this size is never a bomb, whatever the ratio.
pub const RATIO_FLOOR: u64 = 8 * 1024 * 1024;

/// Bounds for unpacking one archive; messages name the variable that raises each.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// All files together.
    pub total: u64,
    /// Variable for `total`.
    pub total_env: &'static str,
    /// One file.
    pub file: u64,
    /// Variable for `file`.
    pub file_env: &'static str,
    /// Keep only catalog files (YAML, `.j2` templates), skipping the rest unread, as local
    /// catalog directories do (so both digest the same files).
    pub catalog_only: bool,
}

impl Bounds {
    /// Catalog bundles: `KRM_CATALOG_MAX_CATALOG_BYTES`, `KRM_CATALOG_MAX_CATALOG_FILE_BYTES`.
    pub fn catalog() -> Self {
        Self {
            total: crate::env::max_catalog_bytes(),
            total_env: crate::env::MAX_CATALOG_BYTES,
            file: crate::env::max_catalog_file_bytes(),
            file_env: crate::env::MAX_CATALOG_FILE_BYTES,
            catalog_only: true,
        }
    }

    /// Exec archives: four times the download limit, for all entries and for one.
    pub fn exec() -> Self {
        let limit = (super::net::max_download_bytes() as u64).saturating_mul(4);
        Self {
            total: limit,
            total_env: crate::env::MAX_DOWNLOAD_BYTES,
            file: limit,
            file_env: crate::env::MAX_DOWNLOAD_BYTES,
            catalog_only: false,
        }
    }

    /// The most a `packed`-byte archive may unpack to (the ratio bound).
    fn ratio_cap(packed: usize) -> u64 {
        (packed as u64)
            .saturating_mul(crate::env::max_unpack_ratio())
            .max(RATIO_FLOOR)
    }

    fn total_error(&self, what: &str) -> ArchiveError {
        ArchiveError::TotalTooBig {
            what: what.to_owned(),
            bytes: self.total,
            env: self.total_env,
        }
    }

    /// One entry passes the per-file bound.
    pub fn file_error(&self, name: &str) -> ArchiveError {
        ArchiveError::FileTooBig {
            name: name.to_owned(),
            bytes: self.file,
            env: self.file_env,
        }
    }
}

/// Why an archive could not be unpacked (the caller names the archive).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    /// The gzip or tar framing is wrong from the start.
    #[error("not a tar.gz bundle: {0}")]
    NotTarGz(String),
    /// A tar entry cannot be read.
    #[error("corrupt tar.gz bundle: {0}")]
    CorruptTarGz(String),
    /// Not a zip archive.
    #[error("not a zip archive: {0}")]
    NotZip(String),
    /// A zip entry cannot be read.
    #[error("corrupt zip archive: {0}")]
    CorruptZip(String),
    /// More than [`MAX_ENTRIES`] entries.
    #[error("the archive has more than {MAX_ENTRIES} entries")]
    TooManyEntries,
    /// An absolute path or one with `..`; `root` names the archive's kind.
    #[error("entry \"{name}\" escapes the {root} root")]
    Escapes {
        /// The entry as written.
        name: String,
        /// "bundle" or "archive".
        root: &'static str,
    },
    /// A symbolic or hard link in a catalog bundle.
    #[error("entry \"{0}\" is a link; catalog bundles may only contain files")]
    Link(String),
    /// The entry's bytes cannot be read.
    #[error("corrupt archive at \"{name}\": {reason}")]
    Corrupt {
        /// The entry.
        name: String,
        /// What the decoder said.
        reason: String,
    },
    /// One entry passes the per-file bound.
    #[error("entry \"{name}\" unpacks to more than {bytes} bytes; raise {env} if this is expected")]
    FileTooBig {
        /// The entry.
        name: String,
        /// The bound.
        bytes: u64,
        /// The variable that raises it.
        env: &'static str,
    },
    /// All entries together pass the total bound.
    #[error("{what} unpacks to more than {bytes} bytes; raise {env} if this is expected")]
    TotalTooBig {
        /// The archive ("the bundle", "the archive").
        what: String,
        /// The bound.
        bytes: u64,
        /// The variable that raises it.
        env: &'static str,
    },
    /// The unpacked size passes the ratio bound: a likely decompression bomb.
    #[error(
        "{what} unpacks to more than {out} bytes from {packed}, more than {ratio} times its size (a likely decompression bomb); raise {env} if this is expected"
    )]
    Ratio {
        /// The archive.
        what: String,
        /// The bound reached.
        out: u64,
        /// The packed size.
        packed: usize,
        /// The ratio allowed.
        ratio: u64,
        /// The variable that raises it.
        env: &'static str,
    },
    /// The file an exec runtime names is not in its archive.
    #[error("the archive has no \"{0}\"")]
    Missing(String),
}

/// Unpack a `.tar.gz` into relative paths and contents. A single top-level directory that
/// wraps the whole bundle (`catalog/services/...`) is stripped. Bounded in entries, in bytes
/// per file and in total, and in the unpacked/packed ratio, all checked while reading.
pub fn unpack(bytes: &[u8], bounds: &Bounds) -> Result<Vec<(String, Vec<u8>)>, ArchiveError> {
    Ok(strip_wrapper(unpack_exact(bytes, bounds)?))
}

/// [`unpack`] without stripping a wrapping directory: the files exactly as [`try_pack`] stored
/// them (the Git cache, whose copy must be the commit's tree as read, issue 21 M3).
pub fn unpack_exact(bytes: &[u8], bounds: &Bounds) -> Result<Vec<(String, Vec<u8>)>, ArchiveError> {
    unpack_from(flate2::read::GzDecoder::new(bytes), bytes.len(), bounds)
}

/// An uncompressed tar (an OCI `...layer.v1.tar` layer), bounded as [`unpack_exact`] is.
pub fn unpack_tar(bytes: &[u8], bounds: &Bounds) -> Result<Vec<(String, Vec<u8>)>, ArchiveError> {
    unpack_from(bytes, bytes.len(), bounds)
}

/// The files of the tar stream `decoder` yields from `packed` bytes.
fn unpack_from(
    decoder: impl std::io::Read,
    packed: usize,
    bounds: &Bounds,
) -> Result<Vec<(String, Vec<u8>)>, ArchiveError> {
    let ratio_cap = Bounds::ratio_cap(packed);
    // The tar stream (headers and padding included) is bounded too, so a gzip bomb of
    // headers or padding stops early.
    let stream_cap = bounds
        .total
        .min(ratio_cap)
        .saturating_mul(2)
        .saturating_add(1 << 20);
    let mut archive = tar::Archive::new(decoder.take(stream_cap));
    let mut files = Vec::new();
    let mut total = 0u64;
    let entries = archive
        .entries()
        .map_err(|e| ArchiveError::NotTarGz(e.to_string()))?;
    for (count, entry) in entries.enumerate() {
        if count >= MAX_ENTRIES {
            return Err(ArchiveError::TooManyEntries);
        }
        let entry = entry.map_err(|e| ArchiveError::CorruptTarGz(e.to_string()))?;
        let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        let path = raw.trim_start_matches("./").to_owned();
        if path.starts_with('/') || path.split('/').any(|s| s == "..") {
            return Err(ArchiveError::Escapes {
                name: raw,
                root: "bundle",
            });
        }
        if kind.is_symlink() || kind.is_hard_link() {
            return Err(ArchiveError::Link(raw));
        }
        if !kind.is_file()
            || (bounds.catalog_only
                && !(crate::yaml::is_yaml_file(&path)
                    || crate::yaml::has_extension(&path, &["j2"])))
        {
            continue;
        }
        let content = read_bounded(entry, &raw, "the bundle", total, bounds, packed)?;
        total += content.len() as u64;
        files.push((path, content));
    }
    Ok(files)
}

/// Read one entry, failing as soon as it passes the per-file bound, the total (with what
/// came before) or the ratio cap for an archive of `packed` bytes; `what` names the archive.
pub fn read_bounded(
    entry: impl std::io::Read,
    name: &str,
    what: &str,
    before: u64,
    bounds: &Bounds,
    packed: usize,
) -> Result<Vec<u8>, ArchiveError> {
    let ratio_cap = Bounds::ratio_cap(packed);
    let room = bounds
        .file
        .min(bounds.total.saturating_sub(before))
        .min(ratio_cap.saturating_sub(before));
    let mut content = Vec::new();
    entry
        .take(room.saturating_add(1))
        .read_to_end(&mut content)
        .map_err(|e| ArchiveError::Corrupt {
            name: name.to_owned(),
            reason: e.to_string(),
        })?;
    let size = content.len() as u64;
    if size > bounds.file {
        return Err(bounds.file_error(name));
    }
    if before + size > bounds.total {
        return Err(bounds.total_error(what));
    }
    if before + size > ratio_cap {
        return Err(ArchiveError::Ratio {
            what: what.to_owned(),
            out: ratio_cap,
            packed,
            ratio: crate::env::max_unpack_ratio(),
            env: crate::env::MAX_UNPACK_RATIO,
        });
    }
    Ok(content)
}

fn strip_wrapper(files: Vec<(String, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
    let at_root = |p: &str| {
        !p.contains('/')
            || ["services/", "templates/", "charts/"]
                .iter()
                .any(|d| p.starts_with(d))
    };
    if files.iter().any(|(p, _)| at_root(p)) {
        return files;
    }
    let first = files
        .first()
        .and_then(|(p, _)| p.split('/').next())
        .map(str::to_owned);
    match first {
        Some(top) if files.iter().all(|(p, _)| p.starts_with(&format!("{top}/"))) => files
            .into_iter()
            .map(|(p, c)| (p[top.len() + 1..].to_owned(), c))
            .collect(),
        _ => files,
    }
}

/// Build a `.tar.gz` from files, failing when one of them cannot be stored as named (so a
/// cache never holds fewer files than it was given).
pub fn try_pack(files: &[(&str, &[u8])]) -> std::io::Result<Vec<u8>> {
    gz_tar(files, Err)
}

/// Build a `.tar.gz` from files (tests and `catalog pull` fixtures); a file that cannot be
/// stored as named is left out.
pub fn pack(files: &[(&str, &[u8])]) -> Vec<u8> {
    gz_tar(files, |_| Ok(())).unwrap_or_default()
}

/// The one archive writer of [`try_pack`] and [`pack`]: `on_error` decides whether a file that
/// cannot be stored fails the archive or is skipped.
fn gz_tar(
    files: &[(&str, &[u8])],
    on_error: impl Fn(std::io::Error) -> std::io::Result<()>,
) -> std::io::Result<Vec<u8>> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for (path, content) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        if let Err(e) = builder.append_data(&mut header, path, *content) {
            on_error(e)?;
        }
    }
    builder
        .into_inner()
        .and_then(flate2::write::GzEncoder::finish)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpacks_and_strips_a_wrapping_directory() {
        let tgz = pack(&[
            ("acme/services/a.yaml", b"a"),
            ("acme/catalog.yaml", b"c"),
            ("acme/README.md", b"skipped unread"),
        ]);
        assert!(is_gzip(&tgz));
        let files = unpack(&tgz, &Bounds::catalog()).unwrap();
        let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, ["services/a.yaml", "catalog.yaml"]);
    }

    #[test]
    fn refuses_escapes_and_oversize() {
        // tar::Builder refuses `..` itself, so write the header name by hand.
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        ));
        let mut header = tar::Header::new_gnu();
        header.as_gnu_mut().unwrap().name[..16].copy_from_slice(b"../../etc/passwd");
        header.set_size(1);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append(&header, &b"x"[..]).unwrap();
        let tgz = builder.into_inner().unwrap().finish().unwrap();
        assert_eq!(
            unpack(&tgz, &Bounds::catalog()).unwrap_err().to_string(),
            "entry \"../../etc/passwd\" escapes the bundle root"
        );
        let big = pack(&[("services/a.yaml", &[b'a'; 2048])]);
        let small = |total, file| Bounds {
            total,
            total_env: "TOTAL",
            file,
            file_env: "FILE",
            catalog_only: true,
        };
        assert_eq!(
            unpack(&big, &small(1 << 20, 1024)).unwrap_err().to_string(),
            "entry \"services/a.yaml\" unpacks to more than 1024 bytes; raise FILE if this is expected"
        );
        let two = pack(&[("a.yaml", &[b'a'; 800]), ("b.yaml", &[b'b'; 800])]);
        assert_eq!(
            unpack(&two, &small(1024, 1024)).unwrap_err().to_string(),
            "the bundle unpacks to more than 1024 bytes; raise TOTAL if this is expected"
        );
    }

    #[test]
    fn issue9_f8_bombs_stop_at_the_ratio_and_entry_count() {
        // 64 MiB of zeros packs to about 64 KiB: far above the ratio, stopped early.
        let zeros = vec![0u8; 64 << 20];
        let bomb = pack(&[("services/a.yaml", &zeros)]);
        assert!(bomb.len() < 1 << 20, "{}", bomb.len());
        let generous = Bounds {
            total: u64::MAX,
            total_env: "TOTAL",
            file: u64::MAX,
            file_env: "FILE",
            catalog_only: false,
        };
        let e = unpack(&bomb, &generous).unwrap_err().to_string();
        assert!(
            e.contains("a likely decompression bomb); raise KRM_CATALOG_MAX_UNPACK_RATIO"),
            "{e}"
        );
        let names: Vec<String> = (0..=MAX_ENTRIES).map(|i| format!("f{i}")).collect();
        let many: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
        assert_eq!(
            unpack(&pack(&many), &generous).unwrap_err().to_string(),
            format!("the archive has more than {MAX_ENTRIES} entries")
        );
    }
}

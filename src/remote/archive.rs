//! `.tar.gz` catalog bundles, unpacked in memory: every entry must stay inside the bundle
//! root (no absolute paths, no `..`, no links), and the total size is bounded.

use std::io::Read as _;

/// Whether bytes start like gzip.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Unpack a `.tar.gz` into relative paths and contents. A single top-level directory that
/// wraps the whole bundle (`catalog/services/...`) is stripped.
pub fn unpack(bytes: &[u8], limit: usize) -> Result<Vec<(String, Vec<u8>)>, String> {
    let decoder = flate2::read::GzDecoder::new(bytes);
    // The tar stream (headers included) is bounded too, so a gzip bomb stops early.
    let mut archive =
        tar::Archive::new(decoder.take((limit as u64).saturating_mul(2).saturating_add(1 << 16)));
    let mut files = Vec::new();
    let mut total = 0usize;
    let entries = archive
        .entries()
        .map_err(|e| format!("not a tar.gz bundle: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("corrupt tar.gz bundle: {e}"))?;
        let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        let path = raw.trim_start_matches("./").to_owned();
        if path.starts_with('/') || path.split('/').any(|s| s == "..") {
            return Err(format!("entry \"{raw}\" escapes the bundle root"));
        }
        if kind.is_symlink() || kind.is_hard_link() {
            return Err(format!(
                "entry \"{raw}\" is a link; catalog bundles may only contain files"
            ));
        }
        if !kind.is_file() {
            continue;
        }
        let mut content = Vec::new();
        entry
            .read_to_end(&mut content)
            .map_err(|e| format!("corrupt tar.gz bundle at \"{raw}\": {e}"))?;
        total += content.len();
        if total > limit {
            return Err(format!("bundle unpacks to more than {limit} bytes"));
        }
        files.push((path, content));
    }
    Ok(strip_wrapper(files))
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

/// Build a `.tar.gz` from files (tests and `catalog pull` fixtures).
pub fn pack(files: &[(&str, &[u8])]) -> Vec<u8> {
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
        let _ = builder.append_data(&mut header, path, *content);
    }
    builder
        .into_inner()
        .and_then(flate2::write::GzEncoder::finish)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpacks_and_strips_a_wrapping_directory() {
        let tgz = pack(&[("acme/services/a.yaml", b"a"), ("acme/catalog.yaml", b"c")]);
        assert!(is_gzip(&tgz));
        let files = unpack(&tgz, 1 << 20).unwrap();
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
            unpack(&tgz, 1 << 20).unwrap_err(),
            "entry \"../../etc/passwd\" escapes the bundle root"
        );
        let big = pack(&[("services/a.yaml", &[b'a'; 2048])]);
        assert!(
            unpack(&big, 1024)
                .unwrap_err()
                .contains("more than 1024 bytes")
        );
    }
}

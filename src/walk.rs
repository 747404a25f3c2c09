//! What the directory walks (`render -f DIR`, `catalog lock DIR`) share: the identity of a
//! directory, so a walk enters each directory once and ends on symlink loops.

use std::path::Path;

/// Device and inode of a directory (links resolved).
#[cfg(unix)]
pub fn dir_id(dir: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = fs_err::metadata(dir)?;
    Ok((meta.dev(), meta.ino()))
}

/// Elsewhere, the canonical path stands for the inode; the hasher has fixed keys so the same
/// directory always gets the same identity within a walk.
#[cfg(not(unix))]
pub fn dir_id(dir: &Path) -> std::io::Result<(u64, u64)> {
    use std::hash::{Hash as _, Hasher as _};
    let canonical = fs_err::canonicalize(dir)?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    canonical.hash(&mut h);
    Ok((0, h.finish()))
}

//! The built-in catalog (`catalogs/builtin/`), embedded at compile time by `build.rs`, which
//! also validated it: a binary with a broken built-in catalog cannot be built.

use crate::catalog::{Bundle, Origin};

include!(concat!(env!("OUT_DIR"), "/builtin_catalog.rs"));

/// The API groups the built-in catalog claims (computed at build time).
pub fn groups() -> &'static [&'static str] {
    GROUPS
}

/// Load the built-in catalog.
pub fn bundle() -> Bundle {
    let files: Vec<(String, &[u8])> = FILES.iter().map(|(p, b)| ((*p).to_owned(), *b)).collect();
    Bundle::from_files(Origin::Builtin, &files)
}

//! Embeds `catalogs/builtin/` (the file list `src/builtin.rs` includes) and packs the bins'
//! relative relocations. It checks nothing: `builtin::tests` lints and renders the catalog,
//! so the build compiles no catalog code for the host.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const ROOT: &str = "catalogs/builtin";

/// The files under `dir`, sorted, as `(path relative to root with '/', path)`.
fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<PathBuf> = fs_err::read_dir(dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .map(|e| {
            e.unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
                .path()
        })
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(root, &path, out);
        } else if path.is_file() {
            // The same name `catalog::relative_name` gives a file of a catalog directory.
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, path));
        }
    }
}

/// Pack the bins' relative relocations (`DT_RELR`): a PIE carries ~80,000 of them, 1.9 MB of
/// `.rela.dyn` the loader reads at every start, a few KB packed. glibc reads `DT_RELR` since
/// 2.36, so a dynamic binary linked so needs it where it runs: `KRM_CATALOG_PACK_RELOCS=0`
/// links without (older targets). x86_64 and aarch64 Linux glibc only, where GNU ld and lld
/// take the flag. CI holds it (`readelf -d` in `.ci/run` and `.ci/image`).
fn pack_relocations() {
    println!("cargo:rerun-if-env-changed=KRM_CATALOG_PACK_RELOCS");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let arch = var("CARGO_CFG_TARGET_ARCH");
    if var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && (arch == "x86_64" || arch == "aarch64")
        && var("KRM_CATALOG_PACK_RELOCS") != "0"
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

fn main() {
    // Cargo scans a directory named here for any change below it (added files too).
    println!("cargo:rerun-if-changed={ROOT}");
    pack_relocations();
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    let root = manifest.join(ROOT);
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    // README and other docs are not part of the catalog content.
    files.retain(|(rel, _)| {
        !Path::new(rel)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("md"))
    });
    let mut table = String::from(
        "/// Files of the built-in catalog, sorted by path.\nstatic FILES: &[(&str, &[u8])] = &[\n",
    );
    for (rel, path) in &files {
        let abs = path.canonicalize().unwrap_or_else(|_| path.clone());
        let _ = writeln!(
            table,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.to_string_lossy()
        );
    }
    table.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into()))
        .join("builtin_catalog.rs");
    fs_err::write(&out, table).unwrap_or_else(|e| panic!("{e}"));
}

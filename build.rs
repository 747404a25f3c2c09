//! Embeds `catalogs/builtin/` and validates it at build time with the same code the binary
//! runs: the catalog modules are compiled into this build script through `#[path]`, so a
//! broken built-in catalog (bad schema, bad template, a service that does not render with its
//! defaults) fails `cargo build` with the file and schema path, instead of failing users.

#![allow(dead_code, unused_imports, clippy::all, clippy::pedantic)]

#[path = "src/catalog/mod.rs"]
mod catalog;
#[path = "src/config.rs"]
mod config;
#[path = "src/gvk.rs"]
mod gvk;
#[path = "src/render/mod.rs"]
mod render;
#[path = "src/service/mod.rs"]
mod service;
#[path = "src/strict.rs"]
mod strict;
#[path = "src/suggest.rs"]
mod suggest;
#[path = "src/verify.rs"]
mod verify;
#[path = "src/yaml.rs"]
mod yaml;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const ROOT: &str = "catalogs/builtin";

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
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
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, path));
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed={ROOT}");
    for module in [
        "src/catalog",
        "src/render",
        "src/service",
        "src/config.rs",
        "src/gvk.rs",
        "src/strict.rs",
        "src/suggest.rs",
        "src/verify.rs",
        "src/yaml.rs",
    ] {
        println!("cargo:rerun-if-changed={module}");
    }
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    let root = manifest.join(ROOT);
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    // README and other docs are not part of the catalog content.
    files.retain(|(rel, _)| !rel.ends_with(".md"));
    let contents: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(rel, path)| {
            (
                rel.clone(),
                std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display())),
            )
        })
        .collect();
    let borrowed: Vec<(String, &[u8])> = contents
        .iter()
        .map(|(r, b)| (r.clone(), b.as_slice()))
        .collect();

    let bundle = catalog::Bundle::from_files(catalog::Origin::Builtin, &borrowed);
    let (merged, errors) = catalog::Catalog::merge(vec![bundle], false);
    // Warnings count too: the built-in catalog is the example every other catalog copies.
    let mut problems: Vec<String> = errors.into_iter().map(|e| e.to_string()).collect();
    if problems.is_empty() {
        let lint = catalog::lint(&merged, &serde_json::Map::new());
        problems.extend(lint.into_iter().map(|e| e.to_string()));
    }
    if !problems.is_empty() {
        panic!(
            "the built-in catalog ({ROOT}) is invalid:\n  {}",
            problems.join("\n  ")
        );
    }

    // The groups the built-in catalog claims: a run whose items touch none of them (and that
    // has no other catalog) never needs to load it.
    let mut groups: Vec<String> = merged
        .services()
        .iter()
        .map(|s| s.definition.gvk.group.clone())
        .collect();
    groups.push(service::definition::SERVICES_GROUP.to_owned());
    groups.sort();
    groups.dedup();
    let mut table = format!(
        "/// Groups claimed by the built-in catalog.\nstatic GROUPS: &[&str] = &{groups:?};\n"
    );
    table.push_str(
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
    std::fs::write(&out, table).unwrap_or_else(|e| panic!("write {}: {e}", out.display()));
}

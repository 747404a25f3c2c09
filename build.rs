//! Embeds `catalogs/builtin/` and validates it at build time with the same code the binary
//! runs (`krm-catalog-core`, a build-dependency), so a
//! broken built-in catalog (bad schema, bad template, a service that does not render with its
//! defaults) fails `cargo build` with the file and schema path, instead of failing users.

use krm_catalog_core::diagnostics::{FieldPath, Severity};
use krm_catalog_core::{catalog, lint, render, service};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const ROOT: &str = "catalogs/builtin";

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
            out.push((catalog::relative_name(root, &path), path));
        }
    }
}

/// A service with values a user must choose (required, no default, e.g. cert-manager's ACME
/// email): its default config is invalid, which lint reports. The built-in catalog gives each
/// such value an `example`, and the service is rendered here with those, so its templates are
/// still checked; `problem` says what failed.
struct Chosen {
    file: Option<String>,
    id: String,
    fields: Vec<FieldPath>,
    problem: Option<String>,
}

impl Chosen {
    /// Whether a lint finding is only the missing value (or a render without it). Lint may
    /// report the missing value as a warning (defaulted config misses a required value); any
    /// warning on this service's file is taken to be that one, since the render here checks
    /// the rest.
    fn covers(&self, e: &catalog::CatalogError) -> bool {
        let in_file = e.file.is_some() && e.file == self.file;
        let missing = self.fields.iter().any(|f| e.path.starts_with(f));
        (in_file && (missing || e.severity == Severity::Warning))
            || e.message
                .contains(&format!("rendering \"{}\" with its defaults", self.id))
    }
}

fn user_chosen(merged: &catalog::Catalog) -> (Vec<catalog::CatalogError>, Vec<Chosen>) {
    use service::definition::{Status, example_value, must_choose};
    // One renderer and one schema cache for lint and the renders below: each bundle's
    // environment and each service's schema is compiled once.
    let renderer = render::Renderer::new(merged);
    let schemas = service::Schemas::new();
    let lint = lint::lint(&renderer, &schemas, &serde_json::Map::new());
    let mut chosen = Vec::new();
    let statuses = merged
        .services()
        .iter()
        .map(|s| (s.definition.id.clone(), Status::Enabled))
        .collect();
    let source = serde_json::json!({"apiVersion": "services.krm-catalog.dev/v1alpha1", "kind": "ServiceSet", "metadata": {"name": "build"}});
    let cluster = serde_json::json!({});
    for s in merged.services() {
        let Some(schema) = &s.definition.config_schema else {
            continue;
        };
        let paths = must_choose(schema.raw());
        if paths.is_empty() {
            continue;
        }
        let id = s.definition.id.clone();
        let mut fields: Vec<FieldPath> = paths
            .iter()
            .map(|p| FieldPath::root().key("config").key(&p[0]))
            .collect();
        fields.dedup();
        let problem = match example_value(schema.raw()) {
            None => Some(format!(
                "{id}: give every required value without a default an `example` ({}), so the build can render it",
                paths
                    .iter()
                    .map(|p| p.join("."))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Some(config) => {
                let raw = serde_json::json!({"status": "enabled", "config": config});
                match service::instance::prepare(
                    &schemas,
                    &s.definition,
                    &raw,
                    &FieldPath::root(),
                    service::instance::UnknownFields::Strict,
                ) {
                    Err(rejected) => Some(format!(
                        "{id}: the config made of its examples is invalid: {}",
                        rejected
                            .errors
                            .iter()
                            .map(|p| format!("{}: {}", p.path, p.message))
                            .collect::<Vec<_>>()
                            .join("; ")
                    )),
                    Ok(prepared) => {
                        let scope = render::Scope {
                            source: &source,
                            instance_namespace: None,
                            cluster: &cluster,
                            statuses: &statuses,
                        };
                        let context = render::context(merged, s, &prepared, &scope);
                        renderer.render(s, &context).err().map(|errors| {
                            format!(
                                "{id}: rendering with the examples of its required values: {}",
                                errors
                                    .iter()
                                    .map(ToString::to_string)
                                    .collect::<Vec<_>>()
                                    .join("; ")
                            )
                        })
                    }
                }
            }
        };
        chosen.push(Chosen {
            file: s.file.clone(),
            id,
            fields,
            problem,
        });
    }
    (lint, chosen)
}

/// Whether the bins are linked for a target whose linkers (GNU ld, lld) take the link
/// arguments below: Linux with glibc on x86_64 or aarch64.
fn linux_gnu_target() -> bool {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let arch = var("CARGO_CFG_TARGET_ARCH");
    var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && (arch == "x86_64" || arch == "aarch64")
}

/// Lay out the code the common runs execute in one place (issue 13): `link/hot-code.ld`, made
/// by `bench/hot-code`, gathers those functions into `.text.hot` before `.text`. The kernel maps
/// code 64 KiB around each page a run touches; spread over 19 MiB of `.text`, the code an empty
/// run executes kept ~5 MiB resident. The script only adds an output section (`INSERT BEFORE
/// .text`, which GNU ld and lld read; mold and gold do not), and its patterns leave out what
/// differs between builds, so a stale script costs memory, never correctness. Matching ~4,600
/// patterns against every section costs lld ~10 s on a debug binary, so debug builds take it
/// only with `KRM_CATALOG_HOT_CODE=1` (as `scripts/test` sets); `=0` never. What was decided
/// reaches the tests as `KRM_CATALOG_HOT_CODE_LINKED` (`limits::issue13_the_binary_gathers_its_hot_code`).
fn hot_code(manifest: &Path) {
    println!("cargo:rerun-if-env-changed=KRM_CATALOG_HOT_CODE");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let script = manifest.join("link/hot-code.ld");
    println!("cargo:rerun-if-changed={}", script.display());
    let setting = std::env::var("KRM_CATALOG_HOT_CODE").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let skip = if !linux_gnu_target() {
        Some("not a Linux glibc target on x86_64 or aarch64".to_owned())
    } else if setting == "0" {
        Some("KRM_CATALOG_HOT_CODE=0".to_owned())
    } else if std::env::var("OPT_LEVEL").as_deref() == Ok("0") && setting != "1" {
        Some("a debug build (KRM_CATALOG_HOT_CODE=1 links it)".to_owned())
    } else if !script.is_file() {
        Some(format!("{} is missing", script.display()))
    } else {
        unreadable_linker(&flags).map(|linker| {
            println!(
                "cargo:warning=linking without link/hot-code.ld: {linker} does not read its SECTIONS … INSERT (an empty run keeps ~4 MiB more code resident)"
            );
            format!("the linker is {linker}")
        })
    };
    if let Some(reason) = skip {
        println!("cargo:rustc-env=KRM_CATALOG_HOT_CODE_LINKED=no: {reason}");
        return;
    }
    if !flags.contains("symbol-mangling-version=v0") {
        // RUSTFLAGS, or a `target.*.rustflags` in any config, replaces `.cargo/config.toml`'s
        // `build.rustflags`: legacy names match only std's part of the layout.
        println!(
            "cargo:warning=symbols are not v0-mangled (RUSTFLAGS or a target rustflags setting replaced .cargo/config.toml): link/hot-code.ld matches only part of the code; add -C symbol-mangling-version=v0"
        );
    }
    // -Xlinker, not -Wl: -Wl splits its argument at commas, and a path may hold one.
    for arg in ["-T", &script.display().to_string()] {
        println!("cargo:rustc-link-arg-bins=-Xlinker");
        println!("cargo:rustc-link-arg-bins={arg}");
    }
    println!("cargo:rustc-env=KRM_CATALOG_HOT_CODE_LINKED=yes");
}

/// The linker this build names, if it is one that cannot read `link/hot-code.ld`: mold or gold,
/// chosen by `-fuse-ld=`, `--ld-path=` or `-C linker=` in the flags, or as the configured
/// linker (cargo passes it to build scripts as `RUSTC_LINKER`).
fn unreadable_linker(encoded_flags: &str) -> Option<&'static str> {
    let named = |value: &str| {
        let base = Path::new(value).file_name()?.to_str()?.to_owned();
        ["mold", "gold"].into_iter().find(|l| {
            base == *l || base == format!("ld.{l}") || base.ends_with(&format!("-ld.{l}"))
        })
    };
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_default();
    encoded_flags
        .split('\u{1f}')
        .filter_map(|f| {
            f.strip_prefix("link-arg=")
                .or_else(|| f.strip_prefix("-Clink-arg="))
                .unwrap_or(f)
                .split(',')
                .find_map(|part| {
                    part.strip_prefix("-fuse-ld=")
                        .or_else(|| part.strip_prefix("--ld-path="))
                        .or_else(|| part.strip_prefix("linker="))
                        .or_else(|| part.strip_prefix("-Clinker="))
                })
        })
        .chain(std::iter::once(linker.as_str()))
        .find_map(named)
}

/// Pack the binary's relative relocations (`DT_RELR`, issue 13). A PIE carries ~80,000 of them,
/// and as `.rela.dyn` entries (24 bytes each) the loader reads 1.9 MB at every start, a fifth
/// of what an empty run keeps resident; packed they take a few KB. The binary stays position
/// independent (ASLR of our code and data is worth more than the 1 MB of `.data.rel.ro` the
/// loader still writes). glibc reads `DT_RELR` since 2.36 (dynamic and static-pie), and a
/// dynamic binary linked so needs glibc >= 2.36 where it runs: `KRM_CATALOG_PACK_RELOCS=0` at
/// build time links without it (for older targets). x86_64 and aarch64 only, where GNU ld and
/// lld support the flag. `limits::issue13_the_binary_packs_its_relocations` checks it (told by
/// `KRM_CATALOG_RELOCS_PACKED`).
fn pack_relocations() {
    println!("cargo:rerun-if-env-changed=KRM_CATALOG_PACK_RELOCS");
    let decision = if !linux_gnu_target() {
        "no: not a Linux glibc target on x86_64 or aarch64"
    } else if std::env::var("KRM_CATALOG_PACK_RELOCS").as_deref() == Ok("0") {
        "no: KRM_CATALOG_PACK_RELOCS=0"
    } else {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
        "yes"
    };
    println!("cargo:rustc-env=KRM_CATALOG_RELOCS_PACKED={decision}");
}

fn main() {
    println!("cargo:rerun-if-changed={ROOT}");
    pack_relocations();
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    hot_code(&manifest);
    let root = manifest.join(ROOT);
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    // README and other docs are not part of the catalog content.
    files.retain(|(rel, _)| {
        !Path::new(rel)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("md"))
    });
    let contents: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(rel, path)| {
            (
                rel.clone(),
                fs_err::read(path).unwrap_or_else(|e| panic!("{e}")),
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
        let (lint, chosen) = user_chosen(&merged);
        problems.extend(
            lint.into_iter()
                .filter(|e| !chosen.iter().any(|c| c.covers(e)))
                .map(|e| e.to_string()),
        );
        problems.extend(chosen.into_iter().filter_map(|c| c.problem));
    }
    assert!(
        problems.is_empty(),
        "the built-in catalog ({ROOT}) is invalid:\n  {}",
        problems.join("\n  ")
    );

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
    fs_err::write(&out, table).unwrap_or_else(|e| panic!("{e}"));
}

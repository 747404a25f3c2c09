//! Function-backed kinds (SPEC §7): items whose kind a catalog maps to a container image, an
//! exec binary or a Starlark script. One capability in one folder, in the order a run uses it:
//!
//! - `prepare`: verify an item's runtime and decide what it becomes, per the `functions`
//!   settings: pinned (the annotation kustomize and kpt run natively), run now, or refused;
//! - `explicit`: an item's own `runtime` (KEP-2906), which short-circuits the catalog;
//! - `image`, `exec`, `starlark`: what each kind of runtime is and how it is verified (images
//!   pinned by digest and, when asked, checked against their registry; binaries and scripts
//!   hashed after download and cached);
//! - `run`: the one process runner (process group, deadline, bounded stdout and stderr) for
//!   exec binaries, containers and `krm-catalog-starlark`, and the steps over the items;
//! - `lock`, `lock_git`, `edit`: `catalog lock` and `catalog verify`.

mod edit;
mod error;
pub mod exec;
mod explicit;
pub mod image;
pub mod lock;
mod lock_git;
mod prepare;
pub mod run;
pub mod starlark;

use crate::catalog::kep::Runtime;
pub use edit::Locked;
pub use error::{EditProof, RegistryCheck, RuntimeError};
pub use explicit::prepare_explicit;
pub use image::{PinnedImage, check_registry, verify_container};
pub use prepare::{Dirs, Step, prepare};
pub use run::run_steps;

/// Normalise a declared sha256 (`hex` or `sha256:hex`) to `sha256:hex`.
pub fn normalize_digest(declared: &str) -> Result<String, RuntimeError> {
    crate::catalog_ref::Digest::parse_declared(declared)
        .map(|d| d.to_string())
        .map_err(|_| RuntimeError::NotADigest(declared.to_owned()))
}

/// Why [`create_with_random_name`] failed.
#[derive(Debug)]
enum Unnamed {
    /// `create` failed for another reason than a taken name.
    Failed(std::io::Error),
    /// Every name tried was taken: the last one, and its error.
    Taken(std::path::PathBuf, std::io::Error),
}

/// Create something (a directory, a file) under a random name, so nothing planted at a
/// predictable path is used: `create` must fail with `AlreadyExists` on a taken name (create
/// exclusively), and a few names are tried. `RandomState` is seeded from the OS's randomness;
/// a counter keeps retries distinct.
fn create_with_random_name<T>(
    name: impl Fn(u64) -> std::path::PathBuf,
    create: impl Fn(&std::path::Path) -> std::io::Result<T>,
) -> Result<(std::path::PathBuf, T), Unnamed> {
    use std::hash::{BuildHasher as _, Hasher as _};
    let state = std::collections::hash_map::RandomState::new();
    let mut last = None;
    for attempt in 0u32..16 {
        let mut h = state.build_hasher();
        h.write_u32(attempt);
        h.write_u32(std::process::id());
        let path = name(h.finish());
        match create(&path) {
            Ok(made) => return Ok((path, made)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some((path, e)),
            Err(e) => return Err(Unnamed::Failed(e)),
        }
    }
    Err(match last {
        Some((path, e)) => Unnamed::Taken(path, e),
        None => Unnamed::Failed(std::io::ErrorKind::AlreadyExists.into()),
    })
}

/// One line describing a runtime, for messages.
pub fn describe(runtime: &Runtime) -> String {
    match runtime {
        Runtime::Container { image, .. } => format!("container {image}"),
        Runtime::Exec { platforms } => {
            let list: Vec<String> = platforms
                .iter()
                .map(|p| format!("{}/{}", p.os, p.arch))
                .collect();
            format!("exec ({})", list.join(", "))
        }
        Runtime::Service { name } => format!("service {name}"),
        Runtime::Starlark { source, .. } => format!("starlark {source}"),
        Runtime::Choice { container, exec } => {
            format!("{} or {}", describe(container), describe(exec))
        }
    }
}

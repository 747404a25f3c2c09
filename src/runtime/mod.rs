//! Function runtimes (SPEC §7): container images and exec binaries that catalog kinds point
//! at. Everything is verified before use: images are pinned by digest (and, when asked, the tag
//! is checked against the registry), binaries are hashed after download and cached.

mod edit;
mod error;
pub mod exec;
pub mod lock;
mod lock_git;
pub mod run;
pub mod starlark;

use crate::catalog::kep::Runtime;
use crate::catalog_ref::OciRef;
use crate::remote::Remote;
pub use edit::Locked;
pub use error::{EditProof, RegistryCheck, RuntimeError};

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

/// A container runtime after verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedImage {
    /// The parsed reference.
    pub image: OciRef,
    /// The digest to pin, when there is one (only `allowUnpinned` lets it be missing).
    pub digest: Option<String>,
    /// Non-fatal findings (an unpinned image under `allowUnpinned`).
    pub warnings: Vec<String>,
}

impl PinnedImage {
    /// What to hand to a container engine: `name@sha256:…`, or the tag when unpinned.
    pub fn reference(&self) -> String {
        match &self.digest {
            Some(d) => self.image.pinned(d),
            None => self.image.tagged(),
        }
    }
}

/// Check a container runtime: the digest in the reference and the declared `sha256` must
/// agree; an image with no digest at all is an error unless `allow_unpinned`. With a `remote`,
/// the tag is also resolved in the registry and must name the same digest.
pub fn verify_container(
    image: &str,
    sha256: Option<&str>,
    allow_unpinned: bool,
    remote: Option<&Remote>,
) -> Result<PinnedImage, RuntimeError> {
    // Blanks around the reference are the YAML's, not the reference's.
    let parsed = OciRef::parse(image.trim())?;
    let declared = sha256.map(normalize_digest).transpose()?;
    let in_reference = parsed.digest().map(ToString::to_string);
    if let (Some(in_ref), Some(declared)) = (&in_reference, &declared)
        && in_ref != declared
    {
        return Err(RuntimeError::PinConflict {
            image: image.to_owned(),
            in_reference: in_ref.clone(),
            declared: declared.clone(),
        });
    }
    let digest = declared.or(in_reference);
    let mut warnings = Vec::new();
    if digest.is_none() {
        if !allow_unpinned {
            return Err(RuntimeError::Unpinned(image.to_owned()));
        }
        warnings.push(format!(
            "image {image} is not pinned by digest (allowed by functions.allowUnpinned)"
        ));
    }
    let pinned = PinnedImage {
        image: parsed,
        digest,
        warnings,
    };
    if let Some(remote) = remote {
        check_registry(&pinned, remote)?;
    }
    Ok(pinned)
}

/// Resolve the image's tag in its registry (or, without a tag, its pinned digest) and require
/// the digest it names to be the pinned one. Manifests only, never layers.
pub fn check_registry(pinned: &PinnedImage, remote: &Remote) -> Result<(), RegistryCheck> {
    let parsed = &pinned.image;
    match (parsed.tag(), &pinned.digest) {
        (Some(tag), digest) => {
            let tagged = format!("{}:{tag}", parsed.name());
            let in_registry = remote
                .net_manifest_digest(&tagged)
                .map_err(RegistryCheck::Lookup)?;
            if let Some(d) = digest
                && *d != in_registry
            {
                return Err(RegistryCheck::TagMoved {
                    tagged,
                    in_registry,
                    pinned: d.clone(),
                });
            }
        }
        // No tag to compare: the registry must still hold the pinned manifest.
        (None, Some(d)) => {
            let reference = parsed.pinned(d);
            let got = remote
                .net_manifest_digest(&reference)
                .map_err(RegistryCheck::Lookup)?;
            if got != *d {
                return Err(RegistryCheck::ManifestMismatch { reference, got });
            }
        }
        (None, None) => {}
    }
    Ok(())
}

/// The `config.kubernetes.io/function` annotation kustomize v5 and kpt parse for a pinned
/// image (kustomize rejects unknown keys, so nothing else goes in).
pub fn function_annotation(image: &PinnedImage, network: bool) -> String {
    let mut text = format!("container:\n  image: {}\n", image.reference());
    if network {
        text.push_str("  network: true\n");
    }
    text
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

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "2f2b9a1f6b0b7c5b4d7e0f3c5a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e";

    #[test]
    fn digests_must_agree_and_be_present() {
        let p = verify_container("ghcr.io/acme/fn:v1", Some(HEX), false, None).unwrap();
        assert_eq!(p.reference(), format!("ghcr.io/acme/fn@sha256:{HEX}"));
        let p = verify_container(
            &format!("ghcr.io/acme/fn:v1@sha256:{HEX}"),
            None,
            false,
            None,
        )
        .unwrap();
        assert_eq!(p.digest.as_deref(), Some(&*format!("sha256:{HEX}")));
        let other = "a".repeat(64);
        let e = verify_container(
            &format!("ghcr.io/acme/fn@sha256:{HEX}"),
            Some(&other),
            false,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("but sha256 declares"), "{e}");
        let e = verify_container("ghcr.io/acme/fn:v1", None, false, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no digest"), "{e}");
        let p = verify_container("ghcr.io/acme/fn:v1", None, true, None).unwrap();
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(p.reference(), "ghcr.io/acme/fn:v1");
    }

    #[test]
    fn annotation_is_what_kustomize_parses() {
        let p = verify_container("fn", Some(HEX), false, None).unwrap();
        assert_eq!(
            function_annotation(&p, true),
            format!("container:\n  image: docker.io/library/fn@sha256:{HEX}\n  network: true\n")
        );
    }
}

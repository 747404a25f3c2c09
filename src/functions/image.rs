//! Container runtimes: an image reference pinned by digest, its declared `sha256` in
//! agreement, and, when asked, its tag checked against the registry (manifests only); the
//! annotation kustomize and kpt run a pinned image by.

use super::{RegistryCheck, RuntimeError, normalize_digest};
use crate::catalog_ref::OciRef;
use crate::remote::Remote;

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

/// Require cosign signatures of the pinned image by the runtime's `publicKey` (a PEM) and
/// `keyless` policy (SPEC §7.5): the image must be pinned by digest, and the registry (or the
/// cache) must hold the signature tag of that digest. The message of an error names the
/// image, digest and key or policy. Nothing is required (and `Ok` is empty) without either.
pub fn check_signature(
    pinned: &PinnedImage,
    public_key: Option<&str>,
    keyless: Option<&crate::config::KeylessSource>,
    remote: &Remote,
) -> Result<Vec<crate::remote::cosign::Signer>, String> {
    use crate::remote::cosign::{Identity, KeylessPolicy, PublicKey, Verifier};
    let image = pinned.image.tagged();
    let mut verifiers = Vec::new();
    if let Some(pem) = public_key {
        let key = PublicKey::from_pem(pem, "the runtime's publicKey")
            .map_err(|e| format!("image {image}: {e}"))?;
        verifiers.push(Verifier::Key(key));
    }
    if let Some(k) = keyless {
        let identity = match (&k.identity, &k.identity_regexp) {
            (Some(exact), _) => Identity::Exact(exact.clone()),
            (None, Some(re)) => Identity::Regexp(regex::Regex::new(re).map_err(|e| {
                format!("image {image}: the runtime's keyless.identityRegexp: {e}")
            })?),
            (None, None) => {
                return Err(format!(
                    "image {image}: the runtime's keyless names no identity"
                ));
            }
        };
        let policy = KeylessPolicy::new(
            identity,
            &k.issuer,
            (&k.trust_root, "the runtime's keyless.trustRoot"),
            (&k.rekor_public_key, "the runtime's keyless.rekorPublicKey"),
        )
        .map_err(|e| format!("image {image}: {e}"))?;
        verifiers.push(Verifier::Keyless(Box::new(policy)));
    }
    if verifiers.is_empty() {
        return Ok(Vec::new());
    }
    let Some(digest) = &pinned.digest else {
        return Err(format!(
            "image {image} is not pinned by digest, so its cosign signature cannot be checked; pin it (`krm-catalog catalog lock`): the runtime names a {}",
            if public_key.is_some() {
                "publicKey"
            } else {
                "keyless signer"
            }
        ));
    };
    remote
        .check_signatures(
            &pinned.reference(),
            &pinned.image.name(),
            digest,
            &verifiers,
        )
        .map_err(|e| e.to_string())
}

/// The `config.kubernetes.io/function` annotation kustomize v5 and kpt parse for a pinned
/// image (kustomize rejects unknown keys, so nothing else goes in).
/// A storage mount (`functions.mounts`) goes in as kustomize's `mounts` (`{type: bind, src,
/// dst, rw}`, sources relative to the kustomization).
pub fn function_annotation(
    image: &PinnedImage,
    network: bool,
    mounts: &[crate::config::Mount],
) -> String {
    let mut container = serde_json::Map::new();
    container.insert("image".into(), image.reference().into());
    if network {
        container.insert("network".into(), true.into());
    }
    if !mounts.is_empty() {
        let list = mounts
            .iter()
            .map(|m| serde_json::json!({"type": "bind", "src": m.src, "dst": m.dst, "rw": m.rw}))
            .collect();
        container.insert("mounts".into(), serde_json::Value::Array(list));
    }
    crate::yaml::emit(&serde_json::json!({ "container": container }))
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
            function_annotation(&p, true, &[]),
            format!("container:\n  image: docker.io/library/fn@sha256:{HEX}\n  network: true\n")
        );
        let mount = crate::config::Mount {
            src: "data".into(),
            dst: "/data".into(),
            rw: false,
        };
        assert_eq!(
            function_annotation(&p, false, &[mount]),
            format!(
                "container:\n  image: docker.io/library/fn@sha256:{HEX}\n  mounts:\n  - type: bind\n    src: data\n    dst: /data\n    rw: false\n"
            )
        );
    }
}

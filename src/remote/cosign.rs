//! Cosign signatures (SPEC §7.5): an OCI catalog or container image that a trust entry (or a
//! catalog's container runtime) names a public key for must carry a cosign signature of its
//! manifest digest D, under cosign's tag convention: the tag `sha256-<hex of D>.sig` in the
//! same repository, a manifest whose `application/vnd.dev.cosign.simplesigning.v1+json` layers
//! each hold a simple-signing JSON document (whose `critical.image.docker-manifest-digest` is D)
//! and, in the annotation `dev.cosignproject.cosign/signature`, the base64 signature of that
//! document's bytes. Keys are what `cosign generate-key-pair` writes (ECDSA P-256, SHA-256,
//! ASN.1 signatures) or Ed25519, as PEM `PUBLIC KEY`s; `ring` verifies both. Keyless
//! signatures (Fulcio certificates, Rekor bundles) are checked by `keyless.rs`; a `Verifier`
//! is either.
//!
//! Fail closed: no signature tag, no layer that verifies with the key, a verified payload that
//! signs another digest or is not a simple-signing document: each is an error naming the
//! reference, the digest and the key. Signature manifests and layers go through the bounded
//! registry client (`oci.rs`) and are cached like catalog artifacts, so an offline run checks
//! the cached signature again with the key.

use base64::Engine as _;
use serde_json::Value;

pub use super::error::CosignError;
pub use super::keyless::{Identity, KeylessPolicy};
use super::net::{Artifact, Layer};
use super::signing::signed_digest;
pub use super::signing::{
    KeylessSigner, MAX_SIGNATURE_LAYERS, PublicKey, SIGNATURE_ANNOTATION, SIGNATURE_TYPE,
    SIMPLE_SIGNING_MEDIA_TYPE, Signer, signature_layers, signature_tag,
};
use super::{Remote, RemoteError};

/// What a signature must verify with: a public key, or a keyless policy (a certificate
/// identity and issuer under a trust root, logged by a Rekor log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verifier {
    /// `publicKey`, `publicKeyFile`, `--public-key`.
    Key(PublicKey),
    /// `keyless`, `--certificate-identity` and its companions.
    Keyless(Box<KeylessPolicy>),
}

impl Verifier {
    /// Who requires the signature, for messages: `the key …` or `the keyless identity …`.
    fn requirement(&self) -> String {
        match self {
            Self::Key(key) => format!("the key {key}"),
            Self::Keyless(policy) => format!("the keyless {policy}"),
        }
    }

    /// How such a signature is made.
    fn how(&self) -> &'static str {
        match self {
            Self::Key(_) => "cosign sign --key",
            Self::Keyless(_) => "cosign sign",
        }
    }

    /// Check a signature manifest with this key or policy.
    pub fn verify(
        &self,
        reference: &str,
        digest: &str,
        signature: &Artifact,
    ) -> Result<Signer, CosignError> {
        match self {
            Self::Key(key) => verify(reference, digest, key, signature),
            Self::Keyless(policy) => super::keyless::verify(reference, digest, policy, signature),
        }
    }
}

/// A `spec.trustedCatalogs` entry's key or keyless policy, read: what the entry covers must be
/// signed so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedKey {
    /// The entry's source (an exact reference or a prefix ending in `*`).
    pub source: String,
    /// The key or policy.
    pub key: Verifier,
}

/// Check a signature manifest (`signature`, pulled from the tag `tag`) against `key`: some
/// simple-signing layer's annotation must be the key's signature of the layer's bytes, and
/// those bytes a simple-signing document of `digest`.
pub fn verify(
    reference: &str,
    digest: &str,
    key: &PublicKey,
    signature: &Artifact,
) -> Result<Signer, CosignError> {
    let tag = signature_tag(digest);
    let manifest: Value = serde_json::from_slice(&signature.manifest).unwrap_or(Value::Null);
    let mut count = 0;
    let mut closest: Option<CosignError> = None;
    for descriptor in signature_layers(&manifest) {
        count += 1;
        let Some(layer) = descriptor
            .get("digest")
            .and_then(Value::as_str)
            .and_then(|d| signature.layers.iter().find(|l| l.digest == d))
        else {
            continue;
        };
        let Some(sig) = descriptor
            .get("annotations")
            .and_then(|a| a.get(SIGNATURE_ANNOTATION))
            .and_then(Value::as_str)
            .and_then(|s| {
                base64::engine::general_purpose::STANDARD
                    .decode(s.trim().as_bytes())
                    .ok()
            })
        else {
            continue;
        };
        if !key.verifies(&layer.data, &sig) {
            continue;
        }
        match signed_digest(&layer.data) {
            Ok(signed) if signed == digest => {
                return Ok(Signer {
                    key: key.to_string(),
                    digest: digest.to_owned(),
                    keyless: None,
                });
            }
            Ok(signed) => {
                closest = Some(CosignError::OtherDigest {
                    reference: reference.to_owned(),
                    digest: digest.to_owned(),
                    tag: tag.clone(),
                    key: key.to_string(),
                    signed,
                });
            }
            Err(reason) => {
                closest.get_or_insert(CosignError::Malformed {
                    reference: reference.to_owned(),
                    digest: digest.to_owned(),
                    tag: tag.clone(),
                    key: key.to_string(),
                    reason,
                });
            }
        }
    }
    Err(closest.unwrap_or(CosignError::Unverified {
        reference: reference.to_owned(),
        digest: digest.to_owned(),
        tag,
        key: key.to_string(),
        count,
    }))
}

impl Remote {
    /// Require a cosign signature of `name@digest` (`name` is `registry/repository`,
    /// `digest` `sha256:<hex>`) by every key in `keys`; `reference` names it in messages.
    /// A cached signature is checked first (no request when it verifies); otherwise the
    /// signature tag is fetched (and cached), unless offline.
    pub fn check_signatures(
        &self,
        reference: &str,
        name: &str,
        digest: &str,
        keys: &[Verifier],
    ) -> Result<Vec<Signer>, RemoteError> {
        let Some(first) = keys.first() else {
            return Ok(Vec::new());
        };
        let tag = signature_tag(digest);
        let cache_ref = format!("oci://{name}:{tag}");
        let all = |artifact: &Artifact| -> Result<Vec<Signer>, CosignError> {
            keys.iter()
                .map(|k| k.verify(reference, digest, artifact))
                .collect()
        };
        let cached = self.cached_signature(&cache_ref);
        if let Some(artifact) = &cached {
            let checked = all(artifact);
            if checked.is_ok() || self.offline {
                return Ok(checked?);
            }
        } else if self.offline {
            return Err(CosignError::NotCached {
                reference: reference.to_owned(),
                digest: digest.to_owned(),
                tag,
                required: first.requirement(),
                cache: self.cache.describe(),
            }
            .into());
        }
        let Some(artifact) = self.fetch_signature(name, digest)? else {
            return Err(CosignError::NoSignature {
                reference: reference.to_owned(),
                digest: digest.to_owned(),
                tag,
                required: first.requirement(),
                how: first.how(),
            }
            .into());
        };
        Ok(all(&artifact)?)
    }

    /// Fetch the cosign signature manifest of `name@digest` and its layers into the cache
    /// (`catalog pull`: so that an offline run can check it); `None` when there is none.
    pub fn fetch_signature(
        &self,
        name: &str,
        digest: &str,
    ) -> Result<Option<Artifact>, RemoteError> {
        let Some(artifact) = self.net()?.pull_signature(name, digest)? else {
            return Ok(None);
        };
        let cache_ref = format!("oci://{name}:{}", signature_tag(digest));
        self.cache_artifact(&artifact, &cache_ref, "cosign", signature_tag(digest));
        Ok(Some(artifact))
    }

    /// The cached signature manifest of a signature tag and its cached layers, if all are
    /// there.
    fn cached_signature(&self, cache_ref: &str) -> Option<Artifact> {
        let entry = self.cache.get_ref(cache_ref)?;
        let manifest = self.cache.get_blob(&entry.digest)?;
        let value: Value = serde_json::from_slice(&manifest).ok()?;
        let mut layers = Vec::new();
        for descriptor in signature_layers(&value).take(MAX_SIGNATURE_LAYERS) {
            let digest = descriptor.get("digest")?.as_str()?;
            let data = self.cache.get_blob(digest.strip_prefix("sha256:")?)?;
            layers.push(Layer {
                media_type: SIMPLE_SIGNING_MEDIA_TYPE.to_owned(),
                digest: digest.to_owned(),
                data,
                title: None,
            });
        }
        Some(Artifact {
            manifest_digest: format!("sha256:{}", entry.digest),
            manifest,
            layers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::signing::P256_SPKI_PREFIX;
    use super::*;
    use crate::verify::sha256_hex;
    use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _};

    /// A fresh P-256 key pair (what `cosign generate-key-pair` makes) and its public PEM.
    fn key_pair() -> (EcdsaKeyPair, String) {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let mut der = P256_SPKI_PREFIX.to_vec();
        der.extend_from_slice(pair.public_key().as_ref());
        let pem = format!(
            "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(der)
        );
        (pair, pem)
    }

    fn sign(pair: &EcdsaKeyPair, data: &[u8]) -> String {
        let rng = ring::rand::SystemRandom::new();
        base64::engine::general_purpose::STANDARD.encode(pair.sign(&rng, data).unwrap())
    }

    fn payload(digest: &str, kind: &str) -> Vec<u8> {
        format!(
            "{{\"critical\":{{\"identity\":{{\"docker-reference\":\"r/x\"}},\"image\":{{\"docker-manifest-digest\":\"{digest}\"}},\"type\":\"{kind}\"}},\"optional\":null}}"
        )
        .into_bytes()
    }

    fn artifact(layers: &[(&[u8], &str)]) -> Artifact {
        let descriptors: Vec<Value> = layers
            .iter()
            .map(|(data, signature)| {
                serde_json::json!({"mediaType": SIMPLE_SIGNING_MEDIA_TYPE,
                    "digest": format!("sha256:{}", sha256_hex(data)), "size": data.len(),
                    "annotations": {SIGNATURE_ANNOTATION: signature}})
            })
            .collect();
        let manifest = serde_json::json!({"schemaVersion": 2, "layers": descriptors});
        Artifact {
            manifest: manifest.to_string().into_bytes(),
            manifest_digest: String::new(),
            layers: layers
                .iter()
                .map(|(data, _)| Layer {
                    media_type: SIMPLE_SIGNING_MEDIA_TYPE.to_owned(),
                    digest: format!("sha256:{}", sha256_hex(data)),
                    data: data.to_vec(),
                    title: None,
                })
                .collect(),
        }
    }

    #[test]
    fn issue24_cosign_tag_and_key_parsing() {
        assert_eq!(signature_tag("sha256:abcd"), "sha256-abcd.sig");
        let (_, pem) = key_pair();
        let key = PublicKey::from_pem(&pem, "k.pub").unwrap();
        let shown = key.to_string();
        assert!(
            shown.starts_with("sha256:") && shown.ends_with(" (k.pub)"),
            "{shown}"
        );
        let e = PublicKey::from_pem("hello", "k.pub")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("k.pub: not a PEM public key"), "{e}");
        // An X25519 key: a PEM public key, but not one signatures are made with.
        let x25519 = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VuAyEAhSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=\n-----END PUBLIC KEY-----\n";
        let e = PublicKey::from_pem(x25519, "x.pub")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not an ECDSA P-256 or Ed25519 public key"),
            "{e}"
        );
    }

    #[test]
    fn issue24_cosign_signatures_verify_only_for_their_key_and_digest() {
        let (pair, pem) = key_pair();
        let key = PublicKey::from_pem(&pem, "k.pub").unwrap();
        let (other_pair, _) = key_pair();
        let digest = format!("sha256:{}", "a".repeat(64));
        let good = payload(&digest, SIGNATURE_TYPE);
        let signer = verify(
            "oci://r/x",
            &digest,
            &key,
            &artifact(&[(&good, &sign(&pair, &good))]),
        )
        .unwrap();
        assert_eq!(signer.to_string(), format!("key {key}"));
        // Any layer may verify: a bad one before a good one.
        let two = artifact(&[
            (&good, &sign(&other_pair, &good)),
            (&good, &sign(&pair, &good)),
        ]);
        assert!(verify("oci://r/x", &digest, &key, &two).is_ok());
        let tag = signature_tag(&digest);
        // Another key's signature.
        let e = verify(
            "oci://r/x",
            &digest,
            &key,
            &artifact(&[(&good, &sign(&other_pair, &good))]),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            format!(
                "oci://r/x: no cosign signature of {digest} verifies with the key {key} (1 signature(s) in {tag})"
            )
        );
        // A tampered payload.
        let mut tampered = good.clone();
        tampered[3] ^= 1;
        let a = artifact(&[(&tampered, &sign(&pair, &good))]);
        assert!(matches!(
            verify("oci://r/x", &digest, &key, &a),
            Err(CosignError::Unverified { .. })
        ));
        // A signature of another digest.
        let other = format!("sha256:{}", "b".repeat(64));
        let elsewhere = payload(&other, SIGNATURE_TYPE);
        let e = verify(
            "oci://r/x",
            &digest,
            &key,
            &artifact(&[(&elsewhere, &sign(&pair, &elsewhere))]),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            format!(
                "oci://r/x: the cosign signature in {tag} verifies with the key {key} but signs {other}, not {digest}"
            )
        );
        // A signed document that is not a simple-signing one.
        let odd = payload(&digest, "something else");
        let e = verify(
            "oci://r/x",
            &digest,
            &key,
            &artifact(&[(&odd, &sign(&pair, &odd))]),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            format!(
                "oci://r/x: the cosign signature in {tag} for {digest} verifies with the key {key} but its payload is not a cosign simple-signing document: critical.type is \"something else\", not \"{SIGNATURE_TYPE}\""
            )
        );
        assert!(signed_digest(b"{").unwrap_err().starts_with("not JSON"));
    }
}

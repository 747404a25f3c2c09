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
pub use super::keyless::{Identity, KeylessPolicy, KeylessSigner};
use super::net::{Artifact, Layer};
use super::{Remote, RemoteError};
use crate::verify::sha256_hex;

/// The media type of a cosign simple-signing layer.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// `critical.type` of a simple-signing document.
pub const SIGNATURE_TYPE: &str = "cosign container image signature";
/// Signature layers checked at most in one signature manifest (each is one request).
pub const MAX_SIGNATURE_LAYERS: usize = 64;

/// cosign's signature tag of a digest: `sha256:<hex>` → `sha256-<hex>.sig`.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// The simple-signing layer descriptors of a signature manifest, in order.
pub fn signature_layers(manifest: &Value) -> impl Iterator<Item = &Value> {
    manifest
        .get("layers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|l| l.get("mediaType").and_then(Value::as_str) == Some(SIMPLE_SIGNING_MEDIA_TYPE))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    /// ECDSA P-256 with SHA-256, ASN.1 DER signatures (`cosign generate-key-pair`).
    EcdsaP256,
    /// Ed25519.
    Ed25519,
}

/// The DER prefix of a P-256 SubjectPublicKeyInfo (id-ecPublicKey, prime256v1, a 66-byte
/// bit string): the uncompressed point (65 bytes, `04 ‖ x ‖ y`) follows.
pub(super) const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];
/// The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the key's 32 bytes follow.
const ED25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// A public key that signatures must verify with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    algorithm: Algorithm,
    /// The key as `ring` takes it.
    raw: Vec<u8>,
    /// Hex sha256 of the DER SubjectPublicKeyInfo (`openssl pkey -pubin -outform DER |
    /// sha256sum`).
    fingerprint: String,
    /// Where it was given: a file path, or the config field of an inline key.
    source: String,
}

impl PublicKey {
    /// Read a PEM `PUBLIC KEY` (ECDSA P-256 or Ed25519); `source` names it in messages.
    pub fn from_pem(pem: &str, source: &str) -> Result<Self, CosignError> {
        let not_a_key = |reason: &str| CosignError::NotAKey {
            source_name: source.to_owned(),
            reason: reason.to_owned(),
        };
        let mut lines = pem.lines().map(str::trim);
        if !lines.any(|l| l == "-----BEGIN PUBLIC KEY-----") {
            return Err(not_a_key(
                "not a PEM public key (-----BEGIN PUBLIC KEY-----, what `cosign generate-key-pair` writes to cosign.pub)",
            ));
        }
        let body: String = lines
            .take_while(|l| *l != "-----END PUBLIC KEY-----")
            .collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(body.as_bytes())
            .map_err(|e| not_a_key(&format!("the PEM body is not base64: {e}")))?;
        let (algorithm, raw) = if let Some(point) = der.strip_prefix(&P256_SPKI_PREFIX)
            && point.len() == 65
            && point[0] == 0x04
        {
            (Algorithm::EcdsaP256, point.to_vec())
        } else if let Some(key) = der.strip_prefix(&ED25519_SPKI_PREFIX)
            && key.len() == 32
        {
            (Algorithm::Ed25519, key.to_vec())
        } else {
            return Err(not_a_key(
                "not an ECDSA P-256 or Ed25519 public key (the keys cosign generate-key-pair and openssl genpkey -algorithm ed25519 make)",
            ));
        };
        Ok(Self {
            algorithm,
            raw,
            fingerprint: sha256_hex(&der),
            source: source.to_owned(),
        })
    }

    /// `sha256:<hex>`: the sha256 of the key's DER SubjectPublicKeyInfo.
    pub fn fingerprint(&self) -> String {
        format!("sha256:{}", self.fingerprint)
    }

    /// Where the key was given.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// An ECDSA P-256 key's uncompressed point and DER SubjectPublicKeyInfo.
    pub(super) fn p256_point(&self) -> Option<(&[u8], Vec<u8>)> {
        (self.algorithm == Algorithm::EcdsaP256).then(|| {
            let mut der = P256_SPKI_PREFIX.to_vec();
            der.extend_from_slice(&self.raw);
            (self.raw.as_slice(), der)
        })
    }

    /// Whether `signature` is this key's signature of `message`.
    fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        let algorithm: &dyn ring::signature::VerificationAlgorithm = match self.algorithm {
            Algorithm::EcdsaP256 => &ring::signature::ECDSA_P256_SHA256_ASN1,
            Algorithm::Ed25519 => &ring::signature::ED25519,
        };
        ring::signature::UnparsedPublicKey::new(algorithm, &self.raw)
            .verify(message, signature)
            .is_ok()
    }
}

/// `sha256:<fingerprint> (<source>)`.
impl std::fmt::Display for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.fingerprint(), self.source)
    }
}

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

/// What a verified signature says: who signed (the key, or the keyless identity) what (the
/// digest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signer {
    /// The key it verifies with (or, keyless, the policy it satisfies).
    pub key: String,
    /// The digest signed.
    pub digest: String,
    /// A keyless signature's certificate identity, issuer and Rekor log index.
    pub keyless: Option<KeylessSigner>,
}

/// `key sha256:<fingerprint> (<source>)` or `keyless <identity> (issuer <issuer>, Rekor log
/// index <n>)`: what `catalog view` and `verify` print.
impl std::fmt::Display for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.keyless {
            Some(k) => write!(
                f,
                "keyless {} (issuer {}, Rekor log index {})",
                k.identity, k.issuer, k.log_index
            ),
            None => write!(f, "key {}", self.key),
        }
    }
}

/// The digest a simple-signing document signs, or why it is not one.
pub(super) fn signed_digest(payload: &[u8]) -> Result<String, String> {
    let value: Value = serde_json::from_slice(payload).map_err(|e| format!("not JSON ({e})"))?;
    let critical = value.get("critical").ok_or("no \"critical\" section")?;
    let kind = critical.get("type").and_then(Value::as_str);
    if kind != Some(SIGNATURE_TYPE) {
        return Err(format!(
            "critical.type is {}, not \"{SIGNATURE_TYPE}\"",
            kind.map_or_else(|| "missing".to_owned(), |k| format!("\"{k}\""))
        ));
    }
    critical
        .get("image")
        .and_then(|i| i.get("docker-manifest-digest"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| "no critical.image.docker-manifest-digest".to_owned())
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
    use super::*;
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

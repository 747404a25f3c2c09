//! What key-based and keyless cosign signatures share (SPEC §7.5): the signature tag, the
//! simple-signing layers and payload, public keys (ECDSA P-256, Ed25519) and the signer a
//! verified signature names. Below both `cosign.rs` and `keyless.rs`.

use base64::Engine as _;
use serde_json::Value;

use super::error::CosignError;
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
    pub(super) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
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

/// The signer a verified keyless signature names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeylessSigner {
    /// The certificate's subject alternative name that matched.
    pub identity: String,
    /// Its OIDC issuer.
    pub issuer: String,
    /// The Rekor entry's log index.
    pub log_index: i64,
}

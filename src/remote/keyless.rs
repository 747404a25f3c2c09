//! Keyless cosign signatures (SPEC §7.5), verified offline against the trust root the user
//! gives: a Fulcio certificate instead of a key, and a Rekor bundle (the log's signed entry
//! timestamp) instead of an online log look-up. What `cosign sign` (keyless) writes, and what
//! `cosign verify --certificate-identity … --certificate-oidc-issuer …` checks offline, followed
//! from sigstore/cosign at d6d86c224e5899b54f56cbb063b79dc43abc11c2:
//! - `pkg/oci/static/signature.go`, `pkg/oci/internal/signature/layer.go`: the layer
//!   annotations `dev.cosignproject.cosign/signature` (base64 signature of the simple-signing
//!   layer), `dev.sigstore.cosign/certificate` (PEM leaf), `dev.sigstore.cosign/chain` (PEM
//!   intermediates and root), `dev.sigstore.cosign/bundle` (JSON `{SignedEntryTimestamp,
//!   Payload: {body, integratedTime, logIndex, logID}}`, `pkg/cosign/bundle/rekor.go`);
//! - `pkg/cosign/verify.go`: `TrustedCert` (the chain with the code-signing EKU),
//!   `CheckCertificatePolicy` (an identity is a subject alternative name, exact or a Go regexp
//!   matched anywhere, `regexp.MatchString`; the issuer exact), `CheckExpiry` (the chain valid
//!   at `integratedTime`), `VerifyBundle` (`compareSigs`, `comparePublicKey`, `bundleHash`: the
//!   Rekor body's signature, certificate and sha256 of the payload; the log's key picked by
//!   `logID`) and `VerifySET` (ECDSA over sha256 of the RFC 8785 canonical JSON of the
//!   `Payload`: keys sorted, so `body`, `integratedTime`, `logID`, `logIndex`);
//! - `pkg/cosign/certextensions.go`: the OIDC issuer extension 1.3.6.1.4.1.57264.1.1
//!   (sigstore-go reads 1.8 first, a DER UTF8String, then 1.1).
//!
//! Not checked (SECURITY.md): a Rekor inclusion proof (that needs the log online; the SET is
//! the log's promise to include the entry), RFC 3161 timestamps, revocation, TUF (the user
//! gives the roots and the Rekor key), the other Fulcio extensions (workflow, ref).

use base64::Engine as _;
use serde_json::Value;

use super::error::CosignError;
use super::net::Artifact;
use super::signing::{KeylessSigner, Signer, signature_layers, signed_digest};
use super::x509;
use crate::verify::sha256_hex;

/// The layer annotation holding the PEM leaf certificate.
pub const CERTIFICATE_ANNOTATION: &str = "dev.sigstore.cosign/certificate";
/// The layer annotation holding the PEM chain (intermediates, root).
pub const CHAIN_ANNOTATION: &str = "dev.sigstore.cosign/chain";
/// The layer annotation holding the Rekor bundle (JSON).
pub const BUNDLE_ANNOTATION: &str = "dev.sigstore.cosign/bundle";
/// Bytes at most of a bundle annotation and of the Rekor body it carries.
pub const MAX_BUNDLE_BYTES: usize = 64 * 1024;
/// Certificates at most in a chain annotation or a trust root file.
pub const MAX_CHAIN: usize = 8;
/// The code-signing extended key usage, 1.3.6.1.5.5.7.3.3 (DER contents).
const EKU_CODE_SIGNING: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x03];

/// Which signer identity (a subject alternative name: an email or a URI) is accepted.
#[derive(Debug, Clone)]
pub enum Identity {
    /// Exactly this name (`--certificate-identity`).
    Exact(String),
    /// A name this regular expression matches somewhere, as cosign's
    /// `--certificate-identity-regexp` does (anchor it with `^…$`).
    Regexp(regex::Regex),
}

impl Identity {
    fn matches(&self, name: &str) -> bool {
        match self {
            Self::Exact(s) => s == name,
            Self::Regexp(r) => r.is_match(name),
        }
    }
}

impl PartialEq for Identity {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Exact(a), Self::Exact(b)) => a == b,
            (Self::Regexp(a), Self::Regexp(b)) => a.as_str() == b.as_str(),
            _ => false,
        }
    }
}
impl Eq for Identity {}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exact(s) => write!(f, "{s}"),
            Self::Regexp(r) => write!(f, "~{}", r.as_str()),
        }
    }
}

/// Who may sign keylessly: an identity and OIDC issuer, certified by a root of the trust root,
/// logged by the Rekor log of the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeylessPolicy {
    identity: Identity,
    issuer: String,
    /// Self-issued certificates of the trust root (DER): the anchors.
    roots: Vec<Vec<u8>>,
    /// The other certificates of the trust root (DER): intermediates.
    intermediates: Vec<Vec<u8>>,
    /// The Rekor key's uncompressed P-256 point.
    rekor_key: Vec<u8>,
    /// Hex sha256 of the Rekor key's DER SubjectPublicKeyInfo: the `logID` of its entries.
    log_id: String,
    /// The trust root file, as given.
    trust_root: String,
}

impl KeylessPolicy {
    /// A policy from its parts: `trust_root` is the text of a PEM file of Fulcio root (and
    /// intermediate) certificates named `trust_root_name`, `rekor` that of the Rekor log's PEM
    /// public key (ECDSA P-256) named `rekor_name`.
    pub fn new(
        identity: Identity,
        issuer: &str,
        (trust_root, trust_root_name): (&str, &str),
        (rekor, rekor_name): (&str, &str),
    ) -> Result<Self, CosignError> {
        let bad = |name: &str, reason: String| CosignError::NotAKey {
            source_name: name.to_owned(),
            reason,
        };
        if issuer.trim().is_empty() {
            return Err(bad(
                trust_root_name,
                "no OIDC issuer is given; name the issuer the certificate must carry (cosign's --certificate-oidc-issuer, e.g. https://token.actions.githubusercontent.com)".to_owned(),
            ));
        }
        let certificates =
            x509::pem_certificates(trust_root, MAX_CHAIN).map_err(|e| bad(trust_root_name, e))?;
        let (mut roots, mut intermediates) = (Vec::new(), Vec::new());
        for (i, der) in certificates.into_iter().enumerate() {
            let Some(fields) = x509::fields(&der) else {
                return Err(bad(
                    trust_root_name,
                    format!("certificate {} is not an X.509 certificate", i + 1),
                ));
            };
            let anchor = rustls::pki_types::CertificateDer::from(der.as_slice());
            if let Err(e) = webpki::anchor_from_trusted_cert(&anchor) {
                return Err(bad(
                    trust_root_name,
                    format!("certificate {} is not usable as a trust root: {e}", i + 1),
                ));
            }
            if fields.self_issued() {
                roots.push(der);
            } else {
                intermediates.push(der);
            }
        }
        if roots.is_empty() {
            return Err(bad(
                trust_root_name,
                "holds no root certificate (-----BEGIN CERTIFICATE----- of a self-issued CA: Fulcio's root, e.g. from `cosign initialize`'s trusted_root.json or your own Fulcio's)".to_owned(),
            ));
        }
        let key = super::signing::PublicKey::from_pem(rekor, rekor_name)?;
        let Some((point, der)) = key.p256_point() else {
            return Err(bad(
                rekor_name,
                "not an ECDSA P-256 public key (Rekor's log key is one)".to_owned(),
            ));
        };
        Ok(Self {
            identity,
            issuer: issuer.to_owned(),
            roots,
            intermediates,
            rekor_key: point.to_vec(),
            log_id: sha256_hex(&der),
            trust_root: trust_root_name.to_owned(),
        })
    }

    /// The identity accepted.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The OIDC issuer accepted.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }
}

/// `identity <identity> (issuer <issuer>, trust root <file>)`.
impl std::fmt::Display for KeylessPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "identity {} (issuer {}, trust root {})",
            self.identity, self.issuer, self.trust_root
        )
    }
}

/// The Rekor bundle of a layer, read.
struct Bundle {
    set: Vec<u8>,
    body: String,
    integrated_time: i64,
    log_index: i64,
    log_id: String,
}

fn read_bundle(text: &str) -> Result<Bundle, String> {
    if text.len() > MAX_BUNDLE_BYTES {
        return Err(format!(
            "the Rekor bundle ({BUNDLE_ANNOTATION}) has {} bytes, more than {MAX_BUNDLE_BYTES}",
            text.len()
        ));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("the Rekor bundle ({BUNDLE_ANNOTATION}) is not JSON: {e}"))?;
    let field = |path: &[&str]| {
        path.iter()
            .try_fold(&value, |v, k| v.get(k))
            .ok_or_else(|| format!("the Rekor bundle has no {}", path.join(".")))
    };
    let string = |path: &[&str]| {
        field(path)?
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("the Rekor bundle's {} is not a string", path.join(".")))
    };
    let integer = |path: &[&str]| {
        field(path)?
            .as_i64()
            .ok_or_else(|| format!("the Rekor bundle's {} is not an integer", path.join(".")))
    };
    let set = base64::engine::general_purpose::STANDARD
        .decode(string(&["SignedEntryTimestamp"])?.as_bytes())
        .map_err(|e| format!("the Rekor bundle's SignedEntryTimestamp is not base64: {e}"))?;
    Ok(Bundle {
        set,
        body: string(&["Payload", "body"])?,
        integrated_time: integer(&["Payload", "integratedTime"])?,
        log_index: integer(&["Payload", "logIndex"])?,
        log_id: string(&["Payload", "logID"])?,
    })
}

/// The RFC 8785 canonical JSON of a bundle's `Payload`: what the log signed (the SET). Its
/// strings are base64 and hex (checked), which canonical JSON writes as they are.
fn canonical_payload(bundle: &Bundle) -> Result<String, String> {
    let base64ish = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
    };
    if !base64ish(&bundle.body) {
        return Err("the Rekor bundle's Payload.body is not base64".to_owned());
    }
    if !bundle.log_id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("the Rekor bundle's Payload.logID is not hex".to_owned());
    }
    Ok(format!(
        "{{\"body\":\"{}\",\"integratedTime\":{},\"logID\":\"{}\",\"logIndex\":{}}}",
        bundle.body, bundle.integrated_time, bundle.log_id, bundle.log_index
    ))
}

/// What a `hashedrekord` entry says was logged: (sha256 hex of the payload, signature,
/// certificate DER).
fn read_rekor_body(body: &str) -> Result<(String, Vec<u8>, Vec<u8>), String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let bytes = b64
        .decode(body.as_bytes())
        .map_err(|e| format!("the Rekor entry (Payload.body) is not base64: {e}"))?;
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("the Rekor entry (Payload.body) is not JSON: {e}"))?;
    let text = |path: &[&str]| {
        path.iter()
            .try_fold(&value, |v, k| v.get(k))
            .and_then(Value::as_str)
            .ok_or_else(|| format!("the Rekor entry has no {}", path.join(".")))
    };
    let kind = text(&["kind"])?;
    if kind != "hashedrekord" {
        return Err(format!(
            "the Rekor entry is a \"{kind}\" entry, not \"hashedrekord\" (what cosign sign logs)"
        ));
    }
    let algorithm = text(&["spec", "data", "hash", "algorithm"])?;
    if algorithm != "sha256" {
        return Err(format!(
            "the Rekor entry hashes with \"{algorithm}\", not \"sha256\""
        ));
    }
    let hash = text(&["spec", "data", "hash", "value"])?.to_ascii_lowercase();
    let signature = b64
        .decode(text(&["spec", "signature", "content"])?.as_bytes())
        .map_err(|e| format!("the Rekor entry's signature is not base64: {e}"))?;
    let pem = b64
        .decode(text(&["spec", "signature", "publicKey", "content"])?.as_bytes())
        .map_err(|e| format!("the Rekor entry's certificate is not base64: {e}"))?;
    let certificate = x509::pem_certificates(&String::from_utf8_lossy(&pem), 1)
        .ok()
        .and_then(|mut c| c.pop())
        .ok_or("the Rekor entry's spec.signature.publicKey is not a PEM certificate")?;
    Ok((hash, signature, certificate))
}

/// `1970-01-01T00:00:00Z` form of a Unix time, for messages.
fn rfc3339(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Check one keyless layer: `payload` the simple-signing bytes, `signature` the decoded
/// signature annotation, `annotations` the layer's. `Err` says why it does not verify.
fn verify_layer(
    policy: &KeylessPolicy,
    digest: &str,
    payload: &[u8],
    signature: &[u8],
    annotations: &Value,
) -> Result<KeylessSigner, String> {
    let annotation = |name: &str| annotations.get(name).and_then(Value::as_str);
    let leaf = annotation(CERTIFICATE_ANNOTATION)
        .map(|pem| x509::pem_certificates(pem, 1))
        .transpose()
        .map_err(|e| format!("the certificate ({CERTIFICATE_ANNOTATION}): {e}"))?
        .and_then(|mut c| c.pop())
        .ok_or_else(|| format!("{CERTIFICATE_ANNOTATION} holds no PEM certificate"))?;
    let chain = annotation(CHAIN_ANNOTATION)
        .map(|pem| x509::pem_certificates(pem, MAX_CHAIN))
        .transpose()
        .map_err(|e| format!("the chain ({CHAIN_ANNOTATION}): {e}"))?
        .unwrap_or_default();
    let Some(bundle) = annotation(BUNDLE_ANNOTATION) else {
        return Err(format!(
            "it has no Rekor bundle ({BUNDLE_ANNOTATION}), so when it was signed cannot be checked offline (sign without --tlog-upload=false)"
        ));
    };
    let bundle = read_bundle(bundle)?;

    // The log's promise (SET), by the log the user trusts.
    if !bundle.log_id.eq_ignore_ascii_case(&policy.log_id) {
        return Err(format!(
            "its Rekor bundle is from the log {}, not the log of the given Rekor key ({})",
            bundle.log_id, policy.log_id
        ));
    }
    let canonical = canonical_payload(&bundle)?;
    ring::signature::UnparsedPublicKey::new(
        &ring::signature::ECDSA_P256_SHA256_ASN1,
        &policy.rekor_key,
    )
    .verify(canonical.as_bytes(), &bundle.set)
    .map_err(|_| {
        "its Rekor bundle's SignedEntryTimestamp does not verify with the given Rekor key (the bundle was altered, or another log signed it)".to_owned()
    })?;
    let time = u64::try_from(bundle.integrated_time).map_err(|_| {
        format!(
            "its Rekor integratedTime {} is negative",
            bundle.integrated_time
        )
    })?;
    let when = rfc3339(bundle.integrated_time);

    // The certificate: a code-signing leaf of the trust root, valid when the log saw it.
    let leaf_der = rustls::pki_types::CertificateDer::from(leaf.as_slice());
    let cert = webpki::EndEntityCert::try_from(&leaf_der)
        .map_err(|e| format!("the certificate is not a valid X.509 certificate: {e}"))?;
    let anchors = policy
        .roots
        .iter()
        .map(|der| {
            webpki::anchor_from_trusted_cert(&rustls::pki_types::CertificateDer::from(
                der.as_slice(),
            ))
            .map(|a| a.to_owned())
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("the trust root {}: {e}", policy.trust_root))?;
    let intermediates: Vec<rustls::pki_types::CertificateDer<'_>> = policy
        .intermediates
        .iter()
        .chain(&chain)
        .map(|der| rustls::pki_types::CertificateDer::from(der.as_slice()))
        .collect();
    let algorithms = [
        webpki::ring::ECDSA_P256_SHA256,
        webpki::ring::ECDSA_P256_SHA384,
        webpki::ring::ECDSA_P384_SHA256,
        webpki::ring::ECDSA_P384_SHA384,
        webpki::ring::ED25519,
    ];
    cert.verify_for_usage(
        &algorithms,
        &anchors,
        &intermediates,
        rustls::pki_types::UnixTime::since_unix_epoch(std::time::Duration::from_secs(time)),
        webpki::KeyUsage::required(EKU_CODE_SIGNING),
        None,
        None,
    )
    .map_err(|e| match e {
        webpki::Error::CertExpired { .. } => format!(
            "its certificate (or a CA above it) had expired at the Rekor integratedTime {when}"
        ),
        webpki::Error::CertNotValidYet { .. } => format!(
            "its certificate (or a CA above it) was not yet valid at the Rekor integratedTime {when}"
        ),
        webpki::Error::UnknownIssuer => format!(
            "its certificate does not chain to a root of the trust root {}",
            policy.trust_root
        ),
        webpki::Error::RequiredEkuNotFoundContext(_) => {
            "its certificate is not for code signing (no extended key usage 1.3.6.1.5.5.7.3.3)"
                .to_owned()
        }
        e => format!(
            "its certificate does not verify against the trust root {} at {when}: {e}",
            policy.trust_root
        ),
    })?;

    // Who: a subject alternative name and the OIDC issuer the user names.
    let fields =
        x509::fields(&leaf).ok_or("the certificate's extensions cannot be read (not DER)")?;
    let issuer = fields.oidc_issuer.clone().unwrap_or_default();
    let Some(identity) = fields.names.iter().find(|n| policy.identity.matches(n)) else {
        return Err(format!(
            "its certificate is for [{}], not {}",
            fields.names.join(", "),
            policy.identity
        ));
    };
    if issuer != policy.issuer {
        return Err(format!(
            "its certificate's OIDC issuer is {}, not {}",
            if issuer.is_empty() {
                "missing (no extension 1.3.6.1.4.1.57264.1.8 or 1.1)"
            } else {
                &issuer
            },
            policy.issuer
        ));
    }

    // What: the signature by the certificate's key over the payload, which names the digest.
    let verified = [
        webpki::ring::ECDSA_P256_SHA256,
        webpki::ring::ECDSA_P384_SHA384,
        webpki::ring::ED25519,
    ]
    .iter()
    .any(|alg| cert.verify_signature(*alg, payload, signature).is_ok());
    if !verified {
        return Err("its signature does not verify with the certificate's key".to_owned());
    }
    match signed_digest(payload) {
        Ok(signed) if signed == digest => {}
        Ok(signed) => return Err(format!("it signs {signed}, not {digest}")),
        Err(reason) => {
            return Err(format!(
                "its payload is not a cosign simple-signing document: {reason}"
            ));
        }
    }

    // The log entry is of this signature, this certificate and this payload.
    let (hash, logged_signature, logged_certificate) = read_rekor_body(&bundle.body)?;
    if hash != sha256_hex(payload) {
        return Err(format!(
            "its Rekor entry logs the sha256 {hash}, not that of the signed payload ({})",
            sha256_hex(payload)
        ));
    }
    if logged_signature != signature {
        return Err("its Rekor entry logs another signature".to_owned());
    }
    if logged_certificate != leaf {
        return Err("its Rekor entry logs another certificate".to_owned());
    }
    Ok(KeylessSigner {
        identity: identity.clone(),
        issuer,
        log_index: bundle.log_index,
    })
}

/// Check a signature manifest against a keyless policy: some simple-signing layer with a
/// certificate must verify (`verify_layer`).
pub fn verify(
    reference: &str,
    digest: &str,
    policy: &KeylessPolicy,
    signature: &Artifact,
) -> Result<Signer, CosignError> {
    let tag = super::signing::signature_tag(digest);
    let manifest: Value = serde_json::from_slice(&signature.manifest).unwrap_or(Value::Null);
    let mut count = 0;
    let mut first_reason: Option<String> = None;
    for descriptor in signature_layers(&manifest) {
        count += 1;
        let annotations = descriptor.get("annotations").unwrap_or(&Value::Null);
        if annotations.get(CERTIFICATE_ANNOTATION).is_none() {
            continue;
        }
        let layer = descriptor
            .get("digest")
            .and_then(Value::as_str)
            .and_then(|d| signature.layers.iter().find(|l| l.digest == d));
        let sig = annotations
            .get(super::signing::SIGNATURE_ANNOTATION)
            .and_then(Value::as_str)
            .and_then(|s| {
                base64::engine::general_purpose::STANDARD
                    .decode(s.trim().as_bytes())
                    .ok()
            });
        let result = match (layer, sig) {
            (Some(layer), Some(sig)) => {
                verify_layer(policy, digest, &layer.data, &sig, annotations)
            }
            (None, _) => Err("its layer was not fetched".to_owned()),
            (_, None) => Err(format!(
                "its {} annotation is missing or not base64",
                super::signing::SIGNATURE_ANNOTATION
            )),
        };
        match result {
            Ok(signer) => {
                return Ok(Signer {
                    key: format!("keyless {} (issuer {})", signer.identity, signer.issuer),
                    digest: digest.to_owned(),
                    keyless: Some(signer),
                });
            }
            Err(reason) => {
                first_reason.get_or_insert(reason);
            }
        }
    }
    Err(match first_reason {
        Some(reason) => CosignError::KeylessRejected {
            reference: reference.to_owned(),
            digest: digest.to_owned(),
            tag,
            policy: policy.to_string(),
            reason,
        },
        None => CosignError::KeylessNone {
            reference: reference.to_owned(),
            digest: digest.to_owned(),
            tag,
            policy: policy.to_string(),
            count,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue24_keyless_set_is_signed_over_rfc8785_canonical_json() {
        let bundle = read_bundle(
            r#"{"SignedEntryTimestamp":"AA==","Payload":{"logID":"ab12","logIndex":7,"integratedTime":1700000000,"body":"eyJ9"}}"#,
        )
        .unwrap();
        assert_eq!(
            canonical_payload(&bundle).unwrap(),
            r#"{"body":"eyJ9","integratedTime":1700000000,"logID":"ab12","logIndex":7}"#
        );
        let odd = read_bundle(
            r#"{"SignedEntryTimestamp":"AA==","Payload":{"logID":"ab12","logIndex":7,"integratedTime":1,"body":"\"x"}}"#,
        )
        .unwrap();
        assert!(canonical_payload(&odd).is_err());
        assert_eq!(
            read_bundle(r#"{"Payload":{}}"#).err().unwrap(),
            "the Rekor bundle has no SignedEntryTimestamp"
        );
        assert!(read_bundle(&" ".repeat(MAX_BUNDLE_BYTES + 1)).is_err());
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    const ROOT: &str = include_str!("../../testdata/keyless/root.pem");
    const REKOR: &str = include_str!("../../testdata/keyless/rekor.pub");

    fn policy() -> KeylessPolicy {
        KeylessPolicy::new(
            Identity::Exact("dev@acme.example".into()),
            "https://accounts.google.com",
            (ROOT, "root.pem"),
            (REKOR, "rekor.pub"),
        )
        .unwrap()
    }

    #[test]
    fn issue24_keyless_policy_needs_a_root_and_a_p256_rekor_key() {
        let p = policy();
        assert_eq!(p.roots.len(), 1);
        assert!(p.intermediates.is_empty());
        assert_eq!(p.log_id.len(), 64);
        assert_eq!(
            p.to_string(),
            "identity dev@acme.example (issuer https://accounts.google.com, trust root root.pem)"
        );
        let make = |root: &str, rekor: &str, issuer: &str| {
            KeylessPolicy::new(
                Identity::Exact("x".into()),
                issuer,
                (root, "root.pem"),
                (rekor, "rekor.pub"),
            )
            .unwrap_err()
            .to_string()
        };
        assert!(make("", REKOR, "i").starts_with("root.pem: holds no root certificate"));
        assert!(make(ROOT, REKOR, " ").starts_with("root.pem: no OIDC issuer is given"));
        assert_eq!(
            make(&ROOT.repeat(MAX_CHAIN + 1), REKOR, "i"),
            "root.pem: more than 8 certificates"
        );
        let bogus = "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n";
        assert_eq!(
            make(bogus, REKOR, "i"),
            "root.pem: certificate 1 is not an X.509 certificate"
        );
        let ed25519 = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n";
        assert_eq!(
            make(ROOT, ed25519, "i"),
            "rekor.pub: not an ECDSA P-256 public key (Rekor's log key is one)"
        );
        assert!(make(ROOT, "x", "i").starts_with("rekor.pub: not a PEM public key"));
    }

    #[test]
    fn issue24_keyless_needs_a_layer_with_a_certificate() {
        use crate::remote::net::Layer;
        let digest = format!("sha256:{}", "a".repeat(64));
        let payload = b"{}".to_vec();
        let layer_digest = format!("sha256:{}", sha256_hex(&payload));
        let manifest = serde_json::json!({"schemaVersion": 2, "layers": [
            {"mediaType": super::super::signing::SIMPLE_SIGNING_MEDIA_TYPE,
             "digest": layer_digest, "size": 2,
             "annotations": {super::super::signing::SIGNATURE_ANNOTATION: "AA=="}}]});
        let mut artifact = Artifact {
            manifest: manifest.to_string().into_bytes(),
            manifest_digest: String::new(),
            layers: vec![Layer {
                media_type: super::super::signing::SIMPLE_SIGNING_MEDIA_TYPE.to_owned(),
                digest: layer_digest,
                data: payload,
                title: None,
            }],
        };
        let e = verify("oci://r/x", &digest, &policy(), &artifact)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "oci://r/x: no keyless cosign signature of {digest} in sha256-{}.sig (1 signature(s), none with a certificate in dev.sigstore.cosign/certificate); the keyless identity dev@acme.example (issuer https://accounts.google.com, trust root root.pem) requires one (sign it with `cosign sign`)",
                "a".repeat(64)
            )
        );
        // A certificate but no bundle: refused before anything else is believed.
        let mut m = manifest;
        m["layers"][0]["annotations"][CERTIFICATE_ANNOTATION] = ROOT.into();
        artifact.manifest = m.to_string().into_bytes();
        let e = verify("oci://r/x", &digest, &policy(), &artifact)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("it has no Rekor bundle (dev.sigstore.cosign/bundle), so when it was signed cannot be checked offline (sign without --tlog-upload=false)"),
            "{e}"
        );
    }

    #[test]
    fn issue24_keyless_identity_matches_as_cosign_does() {
        assert!(Identity::Exact("a@b".into()).matches("a@b"));
        assert!(!Identity::Exact("a@b".into()).matches("xa@b"));
        let r = Identity::Regexp(regex::Regex::new("^https://github.com/o/").unwrap());
        assert!(r.matches("https://github.com/o/r/.github/workflows/w.yml@refs/heads/main"));
        assert!(!r.matches("https://github.com/other/r"));
        assert_eq!(r.to_string(), "~^https://github.com/o/");
    }
}

//! Detached signatures: the Ed25519 signatures `scripts/release` makes of the release files
//! (`openssl pkeyutl -sign -rawin`), checked by `krm-catalog verify-signature` with the
//! publisher's public key, as `openssl pkeyutl -verify -rawin` checks them. The key is a PEM
//! `PUBLIC KEY` (SubjectPublicKeyInfo); the signature the 64 raw bytes openssl writes (or
//! their base64).

use base64::Engine as _;

/// Why a signature is not good.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SignatureError {
    /// The key is not a PEM public key.
    #[error("{0}: not a PEM public key (-----BEGIN PUBLIC KEY-----)")]
    NotPem(String),
    /// The key is another algorithm's.
    #[error("{0}: not an Ed25519 public key (make one with `openssl genpkey -algorithm ed25519`)")]
    NotEd25519(String),
    /// The signature file is neither 64 bytes nor their base64.
    #[error("{0}: not an Ed25519 signature (64 bytes, or their base64)")]
    NotASignature(String),
    /// The signature does not verify.
    #[error("{file}: the signature {signature} does not verify with the key {key}")]
    Mismatch {
        /// The signed file.
        file: String,
        /// The signature file.
        signature: String,
        /// The key file.
        key: String,
    },
}

/// The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the key's 32 bytes follow.
const ED25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// The 32 bytes of an Ed25519 public key in PEM (`key` names it in errors).
pub fn ed25519_public_key(pem: &str, key: &str) -> Result<[u8; 32], SignatureError> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|l| *l != "-----BEGIN PUBLIC KEY-----")
        .skip(1)
        .take_while(|l| *l != "-----END PUBLIC KEY-----")
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body.as_bytes())
        .ok()
        .filter(|d| !d.is_empty())
        .ok_or_else(|| SignatureError::NotPem(key.to_owned()))?;
    der.strip_prefix(&ED25519_SPKI_PREFIX)
        .and_then(|raw| <[u8; 32]>::try_from(raw).ok())
        .ok_or_else(|| SignatureError::NotEd25519(key.to_owned()))
}

/// Check the detached signature `sig` of `data` with the PEM public key `pem`; the names are
/// for messages.
pub fn verify(
    pem: &str,
    sig: &[u8],
    data: &[u8],
    names: (&str, &str, &str),
) -> Result<(), SignatureError> {
    let (key, signature, file) = names;
    let public = ed25519_public_key(pem, key)?;
    let raw = if sig.len() == 64 {
        sig.to_vec()
    } else {
        base64::engine::general_purpose::STANDARD
            .decode(String::from_utf8_lossy(sig).trim().as_bytes())
            .ok()
            .filter(|d| d.len() == 64)
            .ok_or_else(|| SignatureError::NotASignature(signature.to_owned()))?
    };
    ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, public)
        .verify(data, &raw)
        .map_err(|_| SignatureError::Mismatch {
            file: file.to_owned(),
            signature: signature.to_owned(),
            key: key.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 8032 test 2: a one-byte message.
    const PUBLIC_PEM: &str = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAPUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw=\n-----END PUBLIC KEY-----\n";
    const SIGNATURE_HEX: &str = "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00";

    fn signature() -> Vec<u8> {
        (0..SIGNATURE_HEX.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&SIGNATURE_HEX[i..i + 2], 16).unwrap())
            .collect()
    }

    const NAMES: (&str, &str, &str) = ("k.pem", "f.sig", "f");

    #[test]
    fn rfc8032_signatures_verify_raw_and_base64() {
        let sig = signature();
        assert_eq!(verify(PUBLIC_PEM, &sig, &[0x72], NAMES), Ok(()));
        let b64 = base64::engine::general_purpose::STANDARD.encode(&sig);
        assert_eq!(verify(PUBLIC_PEM, b64.as_bytes(), &[0x72], NAMES), Ok(()));
    }

    #[test]
    fn a_flipped_byte_anywhere_fails() {
        let sig = signature();
        assert_eq!(
            verify(PUBLIC_PEM, &sig, &[0x73], NAMES)
                .unwrap_err()
                .to_string(),
            "f: the signature f.sig does not verify with the key k.pem"
        );
        let mut bad = sig.clone();
        bad[10] ^= 1;
        assert!(verify(PUBLIC_PEM, &bad, &[0x72], NAMES).is_err());
        assert_eq!(
            verify(PUBLIC_PEM, &sig[..63], &[0x72], NAMES),
            Err(SignatureError::NotASignature("f.sig".into()))
        );
    }

    #[test]
    fn keys_must_be_pem_ed25519() {
        assert_eq!(
            ed25519_public_key("hello", "k.pem"),
            Err(SignatureError::NotPem("k.pem".into()))
        );
        // A P-256 key (SubjectPublicKeyInfo of id-ecPublicKey).
        let p256 = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE2pGob1MM7NNV4Rl5AkaWIODDcYxc
koSMUmsuxJtvdBuK3raQ8kCghCU92BBhZsGEqizqSuYi0WRUp/1UWLJp4g==
-----END PUBLIC KEY-----
";
        assert_eq!(
            ed25519_public_key(p256, "k.pem"),
            Err(SignatureError::NotEd25519("k.pem".into()))
        );
    }
}

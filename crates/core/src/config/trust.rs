//! `spec.trustedCatalogs` (SPEC §7.5): sources trusted as they are, or an OCI source whose
//! cosign signature must verify with a public key or satisfy a keyless policy.

use serde_json::Value;

use crate::diagnostics::FieldPath;
use crate::strict::{Problem, Reader};

/// A `spec.trustedCatalogs` entry in its object form with a public key (SPEC §7.5): an OCI
/// catalog it covers must carry a cosign signature of its manifest digest by that key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustKey {
    /// The entry's `source`, matched as a string entry is (exactly, by repository, or a prefix
    /// ending in `*`).
    pub source: String,
    /// The key.
    pub key: KeySource,
    /// Field path of the entry, e.g. `spec.trustedCatalogs[1]`.
    pub field: FieldPath,
}

/// Where a public key is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `publicKey`: the PEM text itself.
    Pem(String),
    /// `publicKeyFile`: a PEM file, relative to the working directory as catalog paths are.
    File(String),
    /// `keyless`: a certificate identity and issuer under a trust root, logged by a Rekor log.
    Keyless(KeylessSource),
}

/// A trust entry's `keyless: {identity | identityRegexp, issuer, trustRoot, rekorPublicKey}`
/// (cosign's `--certificate-identity[-regexp]`, `--certificate-oidc-issuer`; the files
/// relative to the working directory as catalog paths are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeylessSource {
    /// `identity`: the certificate's email or URI subject alternative name, exactly.
    pub identity: Option<String>,
    /// `identityRegexp`: a regular expression the name must match (somewhere, as cosign's).
    pub identity_regexp: Option<String>,
    /// `issuer`: the OIDC issuer, exactly.
    pub issuer: String,
    /// `trustRoot`: a PEM file of Fulcio root (and intermediate) certificates (a runtime's: the
    /// PEM text).
    pub trust_root: String,
    /// `rekorPublicKey`: a PEM file of the Rekor log's public key (a runtime's: the PEM text).
    pub rekor_public_key: String,
}

/// Read a `keyless` object: a trust entry's (`inline` false: `trustRoot` and `rekorPublicKey`
/// are files) or a container runtime's (`inline`: they are PEM text); problems at its fields.
pub fn read_keyless(
    value: &Value,
    path: &FieldPath,
    inline: bool,
    problems: &mut Vec<Problem>,
) -> Option<KeylessSource> {
    if !value.is_object() {
        problems.push(Problem::new(
            path,
            format!(
                "must be {{identity | identityRegexp, issuer, trustRoot, rekorPublicKey}}, not {}",
                crate::strict::type_name(value)
            ),
        ));
        return None;
    }
    let mut r = Reader::new(value, path, problems);
    r.deny_unknown(&[
        "identity",
        "identityRegexp",
        "issuer",
        "trustRoot",
        "rekorPublicKey",
    ]);
    let identity = r.string("identity");
    let identity_regexp = r.string("identityRegexp");
    let issuer = r.string("issuer");
    let trust_root = r.string("trustRoot");
    let rekor = r.string("rekorPublicKey");
    drop(r);
    let before = problems.len();
    if identity.is_some() == identity_regexp.is_some() {
        problems.push(Problem::new(
            path,
            "must set one of identity, identityRegexp: the signer's email or URI (the certificate's subject alternative name)",
        ));
    }
    let mut required = |value: Option<String>, key: &str, what: &str| {
        let value = value.filter(|v| !v.trim().is_empty());
        if value.is_none() {
            problems.push(Problem::new(path.key(key), format!("is required: {what}")));
        }
        value
    };
    let issuer = required(
        issuer,
        "issuer",
        "the OIDC issuer of the signer's certificate, e.g. https://token.actions.githubusercontent.com",
    );
    let trust_root = required(
        trust_root,
        "trustRoot",
        if inline {
            "the PEM text of the Fulcio root certificate(s)"
        } else {
            "a PEM file of the Fulcio root certificate(s)"
        },
    );
    let rekor = required(
        rekor,
        "rekorPublicKey",
        if inline {
            "the PEM text of the Rekor log's public key"
        } else {
            "a PEM file of the Rekor log's public key"
        },
    );
    if problems.len() > before {
        return None;
    }
    Some(KeylessSource {
        identity,
        identity_regexp,
        issuer: issuer?,
        trust_root: trust_root?,
        rekor_public_key: rekor?,
    })
}

/// `spec.trustedCatalogs`: strings (a reference, or a prefix ending in `*`), or objects
/// `{source, publicKey | publicKeyFile}` whose key a covered OCI catalog's signature must
/// verify with.
pub(super) fn read_trusted(
    value: &Value,
    path: &FieldPath,
    problems: &mut Vec<Problem>,
) -> (Vec<String>, Vec<TrustKey>) {
    let Value::Array(list) = value else {
        problems.push(Problem::new(
            path,
            format!(
                "must be a list of strings or {{source, publicKey | publicKeyFile}}, not {}",
                crate::strict::type_name(value)
            ),
        ));
        return (Vec::new(), Vec::new());
    };
    let (mut sources, mut keys) = (Vec::new(), Vec::new());
    for (i, entry) in list.iter().enumerate() {
        let field = path.index(i);
        if let Value::String(s) = entry {
            sources.push(s.clone());
            continue;
        }
        if !entry.is_object() {
            problems.push(Problem::new(
                &field,
                format!(
                    "must be a string or {{source, publicKey | publicKeyFile}}, not {}",
                    crate::strict::type_name(entry)
                ),
            ));
            continue;
        }
        let mut r = Reader::new(entry, &field, problems);
        r.deny_unknown(&["source", "publicKey", "publicKeyFile", "keyless"]);
        let source = r.string("source");
        let pem = r.string("publicKey");
        let file = r.string("publicKeyFile");
        let keyless = entry.get("keyless");
        drop(r);
        let Some(source) = source.filter(|s| !s.trim().is_empty()) else {
            problems.push(Problem::new(
                field.key("source"),
                "is required: the reference or prefix (ending in *) this entry trusts",
            ));
            continue;
        };
        let key = match (pem, file) {
            (Some(_), Some(_)) => {
                problems.push(Problem::new(
                    &field,
                    "must set at most one of publicKey, publicKeyFile",
                ));
                continue;
            }
            (Some(_), None) | (None, Some(_)) if keyless.is_some() => {
                problems.push(Problem::new(
                    &field,
                    "must set at most one of publicKey, publicKeyFile, keyless (one entry per signer; add another entry for the same source to require both)",
                ));
                continue;
            }
            (None, None) if keyless.is_some() => {
                match keyless.and_then(|k| read_keyless(k, &field.key("keyless"), false, problems))
                {
                    Some(k) => Some(KeySource::Keyless(k)),
                    None => continue,
                }
            }
            (Some(pem), None) => Some(KeySource::Pem(pem)),
            (None, Some(file)) if file.trim().is_empty() => {
                problems.push(Problem::new(
                    field.key("publicKeyFile"),
                    "must not be empty",
                ));
                continue;
            }
            (None, Some(file)) => Some(KeySource::File(file)),
            (None, None) => None,
        };
        let trimmed = source.trim();
        if key.is_some()
            && ["https://", "http://", "git::", "git://", "file://"]
                .iter()
                .any(|p| trimmed.starts_with(p))
        {
            problems.push(Problem::new(
                field.key("source"),
                "a public key checks cosign signatures, which only OCI catalogs carry (oci://registry/repository…); pin an https or Git source by sha256 or commit instead",
            ));
            continue;
        }
        if let Some(key) = key {
            keys.push(TrustKey {
                source: source.clone(),
                key,
                field: field.clone(),
            });
        }
        sources.push(source);
    }
    (sources, keys)
}

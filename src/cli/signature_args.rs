//! The signature options of `catalog view` and `verify` (SPEC §7.5): public keys and a keyless
//! policy (cosign's flag names), and the check of an OCI catalog's cosign signatures by them.

use std::path::PathBuf;

use super::CliError;
use crate::catalog::Bundle;
use crate::catalog_ref::CatalogRef;

/// The cosign signatures `catalog view` and `verify` require of an OCI catalog (SPEC §7.5).
#[derive(Debug, Default, clap::Args)]
pub(super) struct SignatureArgs {
    /// Require a cosign signature of the OCI catalog's digest by this PEM public key
    /// (`cosign.pub`; repeatable), as a `trustedCatalogs` entry with `publicKeyFile` does,
    /// and show the signer
    #[arg(long = "public-key", value_name = "FILE")]
    public_keys: Vec<PathBuf>,
    /// Require a keyless cosign signature whose certificate names exactly this identity (an
    /// email or URI subject alternative name), as cosign's flag of the same name; needs
    /// --certificate-oidc-issuer, --trust-root and --rekor-public-key
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "certificate_identity_regexp"
    )]
    certificate_identity: Option<String>,
    /// The same, with a regular expression matched anywhere in the name (anchor it: `^…$`)
    #[arg(long, value_name = "REGEXP")]
    certificate_identity_regexp: Option<String>,
    /// The OIDC issuer the keyless certificate must carry, exactly
    #[arg(long, value_name = "URL")]
    certificate_oidc_issuer: Option<String>,
    /// PEM file of the Fulcio root certificate(s) (and intermediates) the keyless certificate
    /// must chain to
    #[arg(long, value_name = "FILE")]
    trust_root: Option<PathBuf>,
    /// PEM file of the Rekor log's public key that signed the bundle (the SET)
    #[arg(long, value_name = "FILE")]
    rekor_public_key: Option<PathBuf>,
}

impl SignatureArgs {
    /// Whether any signature is required.
    pub(super) fn is_empty(&self) -> bool {
        self.public_keys.is_empty()
            && self.certificate_identity.is_none()
            && self.certificate_identity_regexp.is_none()
            && self.certificate_oidc_issuer.is_none()
            && self.trust_root.is_none()
            && self.rekor_public_key.is_none()
    }

    /// The keys and the keyless policy given.
    fn verifiers(&self) -> Result<Vec<crate::remote::cosign::Verifier>, CliError> {
        use crate::remote::cosign::{Identity, KeylessPolicy, PublicKey, Verifier};
        let mut out = Vec::new();
        for path in &self.public_keys {
            let text = fs_err::read_to_string(path)?;
            let key = PublicKey::from_pem(&text, &path.display().to_string())
                .map_err(crate::remote::RemoteError::from)?;
            out.push(Verifier::Key(key));
        }
        let identity =
            match (
                &self.certificate_identity,
                &self.certificate_identity_regexp,
            ) {
                (Some(exact), _) => Some(Identity::Exact(exact.clone())),
                (None, Some(re)) => Some(Identity::Regexp(regex::Regex::new(re).map_err(|e| {
                    CliError::Usage(format!("--certificate-identity-regexp: {e}"))
                })?)),
                (None, None) => None,
            };
        let keyless = (
            identity,
            &self.certificate_oidc_issuer,
            &self.trust_root,
            &self.rekor_public_key,
        );
        match keyless {
            (None, None, None, None) => {}
            (Some(identity), Some(issuer), Some(root), Some(rekor)) => {
                let root_text = read_bounded(root)?;
                let rekor_text = read_bounded(rekor)?;
                let policy = KeylessPolicy::new(
                    identity,
                    issuer,
                    (&root_text, &root.display().to_string()),
                    (&rekor_text, &rekor.display().to_string()),
                )
                .map_err(crate::remote::RemoteError::from)?;
                out.push(Verifier::Keyless(Box::new(policy)));
            }
            _ => {
                return Err(CliError::Usage(
                    "a keyless signature needs all of --certificate-identity (or --certificate-identity-regexp), --certificate-oidc-issuer, --trust-root and --rekor-public-key".to_owned(),
                ));
            }
        }
        Ok(out)
    }
}

/// A trust root or key file, at most 256 KiB.
fn read_bounded(path: &std::path::Path) -> Result<String, CliError> {
    const MAX: u64 = 256 * 1024;
    let size = fs_err::metadata(path)?.len();
    if size > MAX {
        return Err(CliError::Usage(format!(
            "{}: {size} bytes, more than {MAX} (a PEM file of certificates or a key)",
            path.display()
        )));
    }
    Ok(fs_err::read_to_string(path)?)
}

/// The cosign signers of an OCI catalog by the keys of `--public-key` (none without one); a
/// missing or bad signature is an error, as in a run.
pub(super) fn check_signed(
    source: &CatalogRef,
    bundle: &Bundle,
    signature: &SignatureArgs,
    remote: &crate::remote::Remote,
) -> Result<Vec<crate::remote::cosign::Signer>, CliError> {
    if signature.is_empty() {
        return Ok(Vec::new());
    }
    let public = signature.verifiers()?;
    let (CatalogRef::Oci(reference), Some(pin)) = (source, &bundle.pin) else {
        let flag = if signature.public_keys.is_empty() {
            "--certificate-identity"
        } else {
            "--public-key"
        };
        return Err(CliError::Usage(format!(
            "{flag}: {source} is not an OCI catalog; cosign signatures are checked for oci:// catalogs only"
        )));
    };
    let name = crate::catalog_ref::OciRef::parse(reference)
        .map_err(|e| CliError::Usage(format!("oci://{reference}: {}", e.kind)))?
        .name();
    Ok(remote.check_signatures(
        &format!("oci://{reference}"),
        &name,
        &pin.to_string(),
        &public,
    )?)
}

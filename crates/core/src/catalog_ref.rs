//! Catalog references: the one type for "where a catalog comes from", parsed and printed here
//! for every place one is written (typed `spec.catalogs`, the ConfigMap `catalogs` list, the
//! command line, `KRM_CATALOG_CATALOGS`), and the sha256 [`Digest`] that pins one.

use std::fmt;
use std::str::FromStr;

/// Whether `s` is 64 lowercase hex characters (a sha256 digest without its `sha256:` prefix).
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A sha256 digest: 64 lowercase hex characters, checked when parsed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Digest(String);

/// A string that is not a sha256 digest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"{found}\" is not a sha256 digest (64 lowercase hex characters)")]
pub struct DigestError {
    /// What was given instead.
    pub found: String,
}

impl Digest {
    /// The 64 hex characters, without `sha256:`.
    pub fn hex(&self) -> &str {
        &self.0
    }

    /// The sha256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(crate::verify::sha256_hex(bytes))
    }

    /// A digest as catalogs declare one and registries answer one: `sha256:<hex>` or the bare
    /// hex, surrounding blanks ignored.
    pub fn parse_declared(s: &str) -> Result<Self, DigestError> {
        let trimmed = s.trim();
        trimmed
            .strip_prefix("sha256:")
            .unwrap_or(trimmed)
            .parse()
            .map_err(|_| DigestError {
                found: s.to_owned(),
            })
    }
}

/// Parses the bare hex form (`sha256:` is not accepted: a pin field holds the hex alone).
impl FromStr for Digest {
    type Err = DigestError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if is_sha256_hex(s) {
            Ok(Self(s.to_owned()))
        } else {
            Err(DigestError {
                found: s.to_owned(),
            })
        }
    }
}

/// `sha256:<hex>`, the form registries and bundle pins use.
impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.0)
    }
}

/// Where a catalog comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogRef {
    /// A local file or directory, relative to the working directory.
    Path(String),
    /// An HTTPS URL, optionally pinned by the sha256 of its bytes.
    Url {
        /// The URL.
        url: String,
        /// Expected sha256 of the fetched bytes.
        sha256: Option<Digest>,
    },
    /// An OCI artifact reference, without `oci://`.
    Oci(String),
}

/// A catalog reference that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogRefError {
    /// `https://…#sha256=<pin>` whose pin is not a digest. The message follows a field path
    /// (which locates the entry); [`CatalogRefError::standalone`] names the URL instead.
    #[error("\"{}\" after #sha256= is not a sha256 digest (64 lowercase hex characters)", .pin.found)]
    Pin {
        /// The URL before `#sha256=`.
        url: String,
        /// The pin's error.
        pin: DigestError,
    },
}

impl CatalogRefError {
    /// The message where no field path says which reference is meant (the command line).
    pub fn standalone(&self) -> String {
        match self {
            Self::Pin { url, pin } => format!("{url}: sha256 pin {pin}"),
        }
    }
}

impl CatalogRef {
    /// The name a remote catalog is known by (and trusted under): the URL without its pin, or
    /// `oci://ref`; `None` for a local path.
    pub fn remote_name(&self) -> Option<String> {
        match self {
            Self::Url { url, .. } => Some(url.clone()),
            Self::Oci(r) => Some(format!("oci://{r}")),
            Self::Path(_) => None,
        }
    }

    /// Whether this is a local path.
    pub fn is_path(&self) -> bool {
        matches!(self, Self::Path(_))
    }

    /// The `trustedCatalogs` entry `catalog view` suggests: one that trusts the reference as
    /// given and the pinned form it recommends (`repo:tag@sha256:…` for OCI, which an entry
    /// with the tag would not match, so the repository alone; the URL without `#sha256=` for
    /// HTTPS); `None` for a local path, which needs no trust.
    pub fn trust_entry(&self) -> Option<String> {
        match self {
            Self::Url { url, .. } => Some(url.clone()),
            Self::Oci(r) => {
                let name = r.split('@').next().unwrap_or(r);
                let repository = match name.rfind(':') {
                    Some(i) if !name[i..].contains('/') => &name[..i],
                    _ => name,
                };
                Some(format!("oci://{repository}"))
            }
            Self::Path(_) => None,
        }
    }

    /// How a `spec.catalogs` entry pins this catalog to `pin`, the digest it was loaded at:
    /// `url: …, sha256: …` or `oci: …@sha256:…` (`None` for a local path, which is not
    /// pinned).
    pub fn pinned_entry(&self, pin: &Digest) -> Option<String> {
        match self {
            Self::Url { url, .. } => Some(format!("url: {url}, sha256: {}", pin.hex())),
            Self::Oci(r) => Some(format!("oci: {}@{pin}", r.split('@').next().unwrap_or(r))),
            Self::Path(_) => None,
        }
    }
}

/// The string form: a URL (`https://…` or `http://…`) with an optional `#sha256=<hex>` pin, an
/// `oci://` reference, or else a local path.
impl FromStr for CatalogRef {
    type Err = CatalogRefError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.starts_with("https://") || s.starts_with("http://") {
            match s.split_once("#sha256=") {
                Some((url, pin)) => match pin.parse::<Digest>() {
                    Ok(digest) => Ok(Self::Url {
                        url: url.to_owned(),
                        sha256: Some(digest),
                    }),
                    Err(pin) => Err(CatalogRefError::Pin {
                        url: url.to_owned(),
                        pin,
                    }),
                },
                None => Ok(Self::Url {
                    url: s.to_owned(),
                    sha256: None,
                }),
            }
        } else if let Some(reference) = s.strip_prefix("oci://") {
            Ok(Self::Oci(reference.to_owned()))
        } else {
            Ok(Self::Path(s.to_owned()))
        }
    }
}

/// The string form [`FromStr`] reads back.
impl fmt::Display for CatalogRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Path(p) => f.write_str(p),
            Self::Url { url, sha256: None } => f.write_str(url),
            Self::Url {
                url,
                sha256: Some(d),
            } => write!(f, "{url}#sha256={}", d.hex()),
            Self::Oci(r) => write!(f, "oci://{r}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_forms_round_trip() {
        let pin = "ab".repeat(32);
        for s in [
            "catalogs/team".to_owned(),
            "https://example.com/c.yaml".to_owned(),
            format!("https://example.com/c.yaml#sha256={pin}"),
            "oci://localhost:5000/platform:v2".to_owned(),
        ] {
            let parsed: CatalogRef = s.parse().expect("parses");
            assert_eq!(parsed.to_string(), s);
        }
        assert_eq!(
            format!("https://x/c.yaml#sha256={pin}").parse(),
            Ok(CatalogRef::Url {
                url: "https://x/c.yaml".into(),
                sha256: Some(pin.parse().expect("digest")),
            })
        );
        assert_eq!(
            "oci://r/p".parse::<CatalogRef>().map(|r| r.remote_name()),
            Ok(Some("oci://r/p".to_owned()))
        );
    }

    #[test]
    fn issue10_pins_are_checked_in_one_place() {
        for bad in ["", "xyz", &"A".repeat(64), &"a".repeat(63)] {
            let e = format!("https://x/c.yaml#sha256={bad}")
                .parse::<CatalogRef>()
                .expect_err("a bad pin is refused");
            assert_eq!(
                e.to_string(),
                format!(
                    "\"{bad}\" after #sha256= is not a sha256 digest (64 lowercase hex characters)"
                )
            );
            assert_eq!(
                e.standalone(),
                format!(
                    "https://x/c.yaml: sha256 pin \"{bad}\" is not a sha256 digest (64 lowercase hex characters)"
                )
            );
        }
        assert_eq!(
            "sha256:00".parse::<Digest>(),
            Err(DigestError {
                found: "sha256:00".into()
            })
        );
        assert_eq!(
            "0".repeat(64).parse::<Digest>().map(|d| d.to_string()),
            Ok(format!("sha256:{}", "0".repeat(64)))
        );
    }
}

//! Catalog references: the one type for "where a catalog comes from", parsed and printed here
//! for every place one is written (typed `spec.catalogs`, the ConfigMap `catalogs` list, the
//! command line, `KRM_CATALOG_CATALOGS`), the sha256 [`Digest`] that pins one, and the OCI
//! reference ([`OciRef`]) of an artifact or a container image.

mod oci;
mod runtime;

use std::fmt;
use std::str::FromStr;

pub use oci::{OciRef, OciRefError, OciRefErrorKind};
pub use runtime::RuntimeSource;

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
    /// A Git repository: one ref (or commit) and a subdirectory of it.
    Git(GitRef),
}

/// A Git catalog source: `git: {url, ref, commit, path}`; the string form is
/// `git::<url>[//<path>]?ref=<ref>[&commit=<sha>]` (go-getter's and kustomize's spelling of a
/// remote Git base; `git://` URLs may leave out `git::`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitRef {
    /// The repository: `https://`, `http://` (loopback only, checked when fetched), `git://`
    /// or `file://`.
    pub url: String,
    /// A tag, a branch or a full commit id; the commit itself when only `commit` was given.
    pub reference: String,
    /// The full commit id the fetched ref must resolve to.
    pub commit: Option<String>,
    /// The catalog's directory inside the repository (normalised, relative, no `..`).
    pub path: Option<String>,
}

/// Whether a Git repository URL names a local repository (`file://`): a local path, trusted
/// like one, needing no `trustedCatalogs` entry. The one trust rule for `file://` Git sources
/// that a run (`remote::is_trusted_git`) and `catalog view` ([`CatalogRef::trust_entry`])
/// both apply (issue 22).
pub fn is_local_git_url(url: &str) -> bool {
    url.starts_with("file://")
}

/// Whether `s` is a full commit id: 40 (sha1) or 64 (sha256 repositories) lowercase hex.
pub fn is_commit_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64)
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl GitRef {
    /// Check the parts of a Git source; each error names its field (`url`, `ref`, `commit`,
    /// `path`).
    pub fn new(
        url: &str,
        reference: Option<&str>,
        commit: Option<&str>,
        path: Option<&str>,
    ) -> Result<Self, CatalogRefError> {
        let fail = |field: &'static str, message: String| {
            Err(CatalogRefError::Git {
                url: redact_userinfo(url),
                field,
                message,
            })
        };
        let url = url.trim();
        if !["https://", "http://", "git://", "file://"]
            .iter()
            .any(|s| url.starts_with(s) && url.len() > s.len())
        {
            return fail(
                "url",
                format!(
                    "\"{}\" is not a Git repository URL (https://, git:// or file://)",
                    redact_userinfo(url)
                ),
            );
        }
        // URL parsers disagree on `\`: the WHATWG parser that checks trust reads
        // `http://a\@b/` as host `a`, gix as host `b` (issue 21 L4). Refused, so that trust,
        // messages and the fetch all name the same host.
        if url.contains('\\') && !url.starts_with("file://") {
            return fail(
                "url",
                "must not contain a backslash: URL parsers read it differently (write / or %5C)"
                    .to_owned(),
            );
        }
        if url.contains(['?', '#', ' ']) {
            return fail(
                "url",
                "must not carry a query, a fragment or blanks: write ref, commit and path as \
                 fields"
                    .to_owned(),
            );
        }
        if let Some(c) = commit
            && !is_commit_id(c)
        {
            return fail(
                "commit",
                format!(
                    "\"{c}\" is not a full commit id (40 lowercase hex characters); `git rev-parse <ref>` prints it"
                ),
            );
        }
        let reference = match (reference.map(str::trim), commit) {
            (Some(r), _) if !r.is_empty() => r.to_owned(),
            (_, Some(c)) => c.to_owned(),
            _ => {
                return fail(
                    "ref",
                    "is required: a tag, a branch or a full commit id (or set commit)".to_owned(),
                );
            }
        };
        if let Some(reason) = bad_ref_name(&reference) {
            return fail(
                "ref",
                format!("\"{reference}\" is not a Git ref name: {reason}"),
            );
        }
        if let Some(c) = commit
            && is_commit_id(&reference)
            && reference != c
        {
            return fail(
                "commit",
                format!("{c} differs from ref {reference}, which is a commit id itself"),
            );
        }
        let path = match path.map(normalise_repo_path).transpose() {
            Ok(p) => p.filter(|p| !p.is_empty()),
            Err(message) => return fail("path", message),
        };
        Ok(Self {
            url: url.trim_end_matches('/').to_owned(),
            reference,
            commit: commit.map(str::to_owned),
            path,
        })
    }

    /// The commit the fetched ref must be: `commit`, or `ref` when it is a full commit id.
    pub fn pin(&self) -> Option<&str> {
        self.commit
            .as_deref()
            .or_else(|| is_commit_id(&self.reference).then_some(self.reference.as_str()))
    }

    /// The URL as messages print it: without user name or password.
    pub fn display_url(&self) -> String {
        redact_userinfo(&self.url)
    }

    /// `git:<url>@<commit>[//<path>]`: how generated objects name a catalog loaded from this
    /// source at `commit`.
    pub fn at_commit(&self, commit: &str) -> String {
        let mut s = format!("git:{}@{commit}", self.display_url());
        if let Some(p) = &self.path {
            s.push_str("//");
            s.push_str(p);
        }
        s
    }

    /// The same source pinned to `commit`, as a `spec.catalogs` entry.
    pub fn pinned_entry(&self, commit: &str) -> String {
        let mut s = format!(
            "git: {{url: {}, ref: {}, commit: {commit}",
            self.display_url(),
            self.reference
        );
        if let Some(p) = &self.path {
            s.push_str(", path: ");
            s.push_str(p);
        }
        s.push('}');
        s
    }

    fn parse(text: &str) -> Result<Self, CatalogRefError> {
        let body = text.strip_prefix("git::").unwrap_or(text);
        let (location, query) = body.split_once('?').unwrap_or((body, ""));
        let scheme_end = location.find("://").map_or(0, |i| i + 3);
        let (url, path) = match location[scheme_end..].find("//") {
            Some(i) => (
                &location[..scheme_end + i],
                Some(&location[scheme_end + i + 2..]),
            ),
            None => (location, None),
        };
        let (mut reference, mut commit) = (None, None);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("ref" | "version", v)) => reference = Some(v),
                Some(("commit", v)) => commit = Some(v),
                _ => {
                    return Err(CatalogRefError::Git {
                        url: redact_userinfo(url),
                        field: "query",
                        message: format!(
                            "unknown parameter \"{pair}\": the query takes ref=<ref> and commit=<sha>"
                        ),
                    });
                }
            }
        }
        Self::new(url, reference, commit, path)
    }
}

/// The string form [`GitRef::parse`] reads back (the URL without credentials, so that the
/// form can go into messages).
impl fmt::Display for GitRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.url.starts_with("git://") {
            f.write_str("git::")?;
        }
        f.write_str(&self.display_url())?;
        if let Some(p) = &self.path {
            write!(f, "//{p}")?;
        }
        match &self.commit {
            Some(c) if *c == self.reference => write!(f, "?commit={c}"),
            Some(c) => write!(f, "?ref={}&commit={c}", self.reference),
            None => write!(f, "?ref={}", self.reference),
        }
    }
}

/// Why `name` cannot be a ref (`git check-ref-format`, and nothing that reads as an option or
/// a refspec), or `None`.
// `.lock` is a suffix Git reserves for its lock files, compared as Git does: case-sensitively.
#[allow(clippy::case_sensitive_file_extension_comparisons)]
fn bad_ref_name(name: &str) -> Option<&'static str> {
    if name.starts_with('-') {
        Some("it starts with \"-\"")
    } else if name.contains("..") || name.contains("@{") || name.contains("//") {
        Some("it contains \"..\", \"@{\" or \"//\"")
    } else if name
        .chars()
        .any(|c| c.is_ascii_control() || " ~^:?*[\\".contains(c))
    {
        Some("it contains a blank or one of ~ ^ : ? * [ \\")
    } else if name.starts_with('/')
        || name.ends_with('/')
        || name.ends_with(".lock")
        || name.ends_with('.')
        || name.split('/').any(|c| c.starts_with('.'))
    {
        Some(
            "a component starts with \".\", or it starts or ends with \"/\" or ends with \".lock\"",
        )
    } else {
        None
    }
}

/// A path inside a repository, relative and without `.`/`..` components.
fn normalise_repo_path(path: &str) -> Result<String, String> {
    let trimmed = path.trim();
    if trimmed.starts_with('/') || trimmed.contains('\\') {
        return Err(format!(
            "\"{trimmed}\" must be a relative path inside the repository (slashes, no leading /)"
        ));
    }
    let mut parts = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(format!(
                    "\"{trimmed}\" climbs out with \"..\": the catalog must be inside the repository"
                ));
            }
            p => parts.push(p),
        }
    }
    Ok(parts.join("/"))
}

/// `url` without `user:password@`, so that no credential reaches a message or a log.
pub fn redact_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
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
    /// A Git source with a bad part; `field` is `url`, `ref`, `commit`, `path` or `query` (of
    /// the string form). The message follows the field path.
    #[error("{message}")]
    Git {
        /// The repository URL (without credentials).
        url: String,
        /// Which part is wrong.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
}

impl CatalogRefError {
    /// The message where no field path says which reference is meant (the command line).
    pub fn standalone(&self) -> String {
        match self {
            Self::Pin { url, pin } => format!("{url}: sha256 pin {pin}"),
            Self::Git {
                url,
                field,
                message,
            } => format!("git {url}: {field} {message}"),
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
            Self::Git(g) => Some(g.display_url()),
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
    /// HTTPS); `None` for a local source (a path, a `file://` Git repository:
    /// [`is_local_git_url`]), which needs no trust.
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
            Self::Git(g) if is_local_git_url(&g.url) => None,
            Self::Git(g) => Some(g.display_url()),
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
            // A Git source is pinned by its commit ([`GitRef::pinned_entry`]), not by a digest.
            Self::Git(_) | Self::Path(_) => None,
        }
    }
}

/// The string form: a URL (`https://…` or `http://…`) with an optional `#sha256=<hex>` pin, an
/// `oci://` reference, a Git source (`git::<url>[//<path>]?ref=…[&commit=…]`, or a `git://`
/// URL in the same form), or else a local path.
impl FromStr for CatalogRef {
    type Err = CatalogRefError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.starts_with("git::") || s.starts_with("git://") {
            GitRef::parse(s).map(Self::Git)
        } else if s.starts_with("https://") || s.starts_with("http://") {
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
            Self::Git(g) => g.fmt(f),
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
    #[test]
    fn issue12_git_string_form_round_trips_and_checks_each_part() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        for s in [
            "git::https://example.com/org/repo.git?ref=v1.2.0".to_owned(),
            format!("git::https://example.com/org/repo.git//catalogs/team?ref=v1&commit={sha}"),
            format!("git://127.0.0.1:9418/repo//c?commit={sha}"),
            "git::file:///srv/repo//catalogs/team?ref=main".to_owned(),
        ] {
            let parsed: CatalogRef = s.parse().expect("parses");
            assert_eq!(parsed.to_string(), s);
        }
        let Ok(CatalogRef::Git(g)) =
            format!("git::https://u:secret@h/r.git//a/./b/?ref={sha}").parse::<CatalogRef>()
        else {
            panic!("a git source");
        };
        assert_eq!(g.path.as_deref(), Some("a/b"));
        assert_eq!(g.pin(), Some(sha));
        assert_eq!(g.display_url(), "https://h/r.git");
        assert!(!g.to_string().contains("secret"));
        assert_eq!(g.at_commit(sha), format!("git:https://h/r.git@{sha}//a/b"));
        for (text, standalone) in [
            (
                "git::ftp://h/r?ref=v1",
                "git ftp://h/r: url \"ftp://h/r\" is not a Git repository URL (https://, git:// or file://)",
            ),
            (
                "git::https://h/r",
                "git https://h/r: ref is required: a tag, a branch or a full commit id (or set commit)",
            ),
            (
                "git::https://h/r?ref=v1&commit=abc",
                "git https://h/r: commit \"abc\" is not a full commit id (40 lowercase hex characters); `git rev-parse <ref>` prints it",
            ),
            (
                "git::https://h/r//../x?ref=v1",
                "git https://h/r: path \"../x\" climbs out with \"..\": the catalog must be inside the repository",
            ),
            (
                "git::https://h/r?ref=--upload-pack=x",
                "git https://h/r: ref \"--upload-pack=x\" is not a Git ref name: it starts with \"-\"",
            ),
            (
                "git::https://h/r?ref=a:b",
                "git https://h/r: ref \"a:b\" is not a Git ref name: it contains a blank or one of ~ ^ : ? * [ \\",
            ),
            (
                "git::https://h/r?tag=v1",
                "git https://h/r: query unknown parameter \"tag=v1\": the query takes ref=<ref> and commit=<sha>",
            ),
        ] {
            let e = text.parse::<CatalogRef>().expect_err(text);
            assert_eq!(e.standalone(), standalone, "{text}");
        }
        assert_eq!(
            GitRef::new("https://h/r", Some(sha), Some(&"f".repeat(40)), None)
                .map_err(|e| e.to_string()),
            Err(format!(
                "{} differs from ref {sha}, which is a commit id itself",
                "f".repeat(40)
            ))
        );
    }
}

//! Where an exec binary or a Starlark script comes from (SPEC §7.3, KEP-2906 `uri`): the
//! sources a run can fetch, parsed once so that `catalog lint` accepts exactly what the runtime
//! fetches. `https://` (and loopback `http://`, refused elsewhere when fetched), `file://` (in
//! local catalogs), `oci://registry/repo[:tag][@sha256:…]` (an artifact as `oras push`
//! publishes it) and `git::<repo>//<file>?ref=…&commit=<sha>` (a file of a pinned commit; the
//! string form Git catalog sources use).

use super::{GitRef, OciRef};

/// A runtime source a run can fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeSource {
    /// `https://…` or `http://…` (loopback only, checked when fetched).
    Url(String),
    /// `file://…`: a file of the local catalog (confined to its root when fetched).
    File(String),
    /// `oci://…`: an OCI artifact (a single-layer manifest or a per-platform index).
    Oci(OciRef),
    /// `git::…`: a file of a Git commit; the commit is always pinned, the path always set.
    Git(GitRef),
}

/// The sources the message of an unsupported one lists.
pub const SOURCES: &str = "https://, file:// (local catalogs), oci://registry/repository[:tag][@sha256:…] (an OCI artifact) or git::https://host/repo//path/to/file?ref=<ref>&commit=<sha> (a file of a pinned Git commit)";

impl RuntimeSource {
    /// Parse a runtime `uri` (or Starlark `url`); the error says what is wrong and what to
    /// write instead (it does not repeat the URI: the caller names it).
    pub fn parse(uri: &str) -> Result<Self, String> {
        let uri = uri.trim();
        if uri.starts_with("git::") || uri.starts_with("git://") {
            let source = GitRef::parse(uri).map_err(|e| match e {
                super::CatalogRefError::Git { field, message, .. } => {
                    format!("{field} {message}")
                }
                pin @ super::CatalogRefError::Pin { .. } => pin.to_string(),
            })?;
            if source.path.is_none() {
                return Err(
                    "names no file: write the file's path in the repository after `//`, as in git::https://host/repo//bin/fn?ref=v1&commit=<sha>"
                        .to_owned(),
                );
            }
            if source.pin().is_none() {
                return Err(format!(
                    "is not pinned to a commit: add &commit=<full commit id> (`git rev-parse {}` prints it); a runtime runs only bytes a commit proves",
                    source.reference
                ));
            }
            return Ok(Self::Git(source));
        }
        if let Some(reference) = uri.strip_prefix("oci://") {
            return OciRef::parse(reference)
                .map(Self::Oci)
                .map_err(|e| format!("is not an OCI reference: {}", e.kind));
        }
        if uri.starts_with("https://") || uri.starts_with("http://") {
            return Ok(Self::Url(uri.to_owned()));
        }
        if uri.starts_with("file://") {
            return Ok(Self::File(uri.to_owned()));
        }
        let scheme = uri
            .split_once("://")
            .map_or("", |(scheme, _)| scheme)
            .to_owned();
        if scheme.is_empty() {
            return Err(format!("is not a URL; use {SOURCES}"));
        }
        Err(format!(
            "has the unsupported scheme \"{scheme}\"; use {SOURCES}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue23_runtime_sources_parse_or_say_what_to_write() {
        let commit = "a".repeat(40);
        assert!(matches!(
            RuntimeSource::parse("https://example.com/fn"),
            Ok(RuntimeSource::Url(_))
        ));
        assert!(matches!(
            RuntimeSource::parse("file://bin/fn"),
            Ok(RuntimeSource::File(_))
        ));
        let digest = format!("sha256:{}", "b".repeat(64));
        match RuntimeSource::parse(&format!("oci://ghcr.io/acme/fn:v1@{digest}")) {
            Ok(RuntimeSource::Oci(r)) => {
                assert_eq!(r.repository(), "acme/fn");
                assert_eq!(r.digest().map(ToString::to_string), Some(digest.clone()));
            }
            other => panic!("{other:?}"),
        }
        match RuntimeSource::parse(&format!(
            "git::https://example.com/repo//bin/fn?ref=v1&commit={commit}"
        )) {
            Ok(RuntimeSource::Git(g)) => {
                assert_eq!(g.path.as_deref(), Some("bin/fn"));
                assert_eq!(g.pin(), Some(commit.as_str()));
            }
            other => panic!("{other:?}"),
        }
        for (uri, error) in [
            (
                "ftp://example.com/fn",
                "has the unsupported scheme \"ftp\"; use https://",
            ),
            ("bin/fn", "is not a URL; use https://"),
            ("oci://Bad Name", "is not an OCI reference: "),
            (
                "git::https://example.com/repo//bin/fn?ref=v1",
                "is not pinned to a commit: add &commit=<full commit id> (`git rev-parse v1` prints it)",
            ),
            (
                "git::https://example.com/repo?ref=v1&commit=aaaa",
                "commit \"aaaa\" is not a full commit id",
            ),
        ] {
            let got = RuntimeSource::parse(uri).expect_err(uri);
            assert!(got.starts_with(error), "{uri}: {got}");
        }
        let got = RuntimeSource::parse(&format!("git::https://example.com/repo?commit={commit}"))
            .expect_err("no path");
        assert!(got.starts_with("names no file"), "{got}");
    }
}

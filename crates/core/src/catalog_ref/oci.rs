//! OCI references, `registry/repository[:tag][@digest]`, of container images and of catalog
//! artifacts: one parser for both. The grammar is distribution/reference's (`regexp.go`,
//! `reference.go`) with Docker's normalisation of familiar names (`normalize.go`,
//! `ParseNormalizedNamed`: `nginx` is `docker.io/library/nginx`), written out by hand rather
//! than as upstream's regular expression so that an error can say which part is wrong.
//! <https://github.com/distribution/reference>

use std::fmt;
use std::str::FromStr;

use super::{Digest, is_sha256_hex};

/// Docker Hub's name in references.
const DOCKER_HUB: &str = "docker.io";
/// Docker Hub's old name ("the Docker Index"): the same registry, and the host its registry
/// API is asked at.
const DOCKER_HUB_LEGACY: &str = "index.docker.io";
/// Where Docker Hub keeps its official images: `nginx` is `library/nginx`.
const OFFICIAL_PREFIX: &str = "library/";
/// The longest repository, without its registry (`RepositoryNameTotalLengthMax`).
const MAX_REPOSITORY_LEN: usize = 255;
/// The longest tag.
const MAX_TAG_LEN: usize = 128;

/// A parsed OCI reference. Registry and repository are normalised as Docker normalises them
/// (`nginx` is `docker.io` + `library/nginx`, `index.docker.io` is `docker.io`); a tag is
/// there only when one was written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OciRef {
    registry: String,
    repository: String,
    tag: Option<String>,
    digest: Option<Digest>,
}

/// A string that is not an OCI reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid reference \"{reference}\": {kind}")]
pub struct OciRefError {
    /// The reference as given.
    pub reference: String,
    /// What is wrong with it.
    pub kind: OciRefErrorKind,
}

/// What is wrong with a reference: distribution's errors, and where distribution says only
/// "invalid reference format", the part that breaks the grammar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OciRefErrorKind {
    /// Nothing before the tag or digest (distribution's `ErrNameEmpty`).
    #[error("repository name must have at least one component")]
    Empty,
    /// 64 hex characters alone read as an image id (`ParseNormalizedNamed`).
    #[error("64 hexadecimal characters are an image id, not a repository name")]
    Identifier,
    /// A registry outside the grammar.
    #[error(
        "registry \"{0}\" must be a host name (letters, digits, inner - and .), an IPv4 address or an [IPv6] address, with an optional :port"
    )]
    Registry(String),
    /// A repository that would be valid in lowercase (`ErrNameContainsUppercase`).
    #[error("repository name must be lowercase")]
    Uppercase,
    /// A repository outside the grammar.
    #[error(
        "repository \"{0}\" must be /-separated parts of lowercase letters and digits, joined inside a part by . _ __ or -"
    )]
    Repository(String),
    /// More than 255 characters of repository (`ErrNameTooLong`).
    #[error("repository name must not be more than {MAX_REPOSITORY_LEN} characters")]
    TooLong,
    /// A tag outside the grammar.
    #[error(
        "tag \"{0}\" must be 1 to 128 letters, digits and ._- starting with a letter, digit or _"
    )]
    Tag(String),
    /// A digest outside the grammar (`ErrDigestInvalidFormat`).
    #[error("digest \"{0}\" must be <algorithm>:<at least 32 hex characters>")]
    DigestFormat(String),
    /// A well-formed digest of another algorithm than sha256 (`ErrDigestUnsupported`).
    #[error("digest \"{0}\": only sha256 digests are supported")]
    DigestUnsupported(String),
    /// A sha256 digest of the wrong length or with uppercase hex (`ErrDigestInvalidLength`,
    /// `ErrDigestInvalidFormat`).
    #[error("digest \"{0}\" must be sha256:<64 lowercase hex characters>")]
    Sha256(String),
}

impl OciRef {
    /// Parse a reference as Docker does (`ParseNormalizedNamed`).
    pub fn parse(reference: &str) -> Result<Self, OciRefError> {
        parse(reference).map_err(|kind| OciRefError {
            reference: reference.to_owned(),
            kind,
        })
    }

    /// The registry, with its port: `docker.io` for Docker Hub.
    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// The host (and port) to send registry requests to: Docker Hub's API is asked at
    /// `index.docker.io`, as oci-client (which this parser replaces) asked it.
    pub fn resolve_registry(&self) -> &str {
        if self.registry == DOCKER_HUB {
            DOCKER_HUB_LEGACY
        } else {
            &self.registry
        }
    }

    /// The repository (`library/nginx` for Docker Hub's official images).
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// The tag, when one was written (a registry lookup without tag or digest asks for
    /// `latest`).
    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }

    /// The digest, when one was written.
    pub fn digest(&self) -> Option<&Digest> {
        self.digest.as_ref()
    }

    /// `registry/repository`, without tag or digest.
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// The form container engines enforce: `registry/repository@sha256:…`.
    pub fn pinned(&self, digest: &str) -> String {
        format!("{}@{digest}", self.name())
    }

    /// The reference with its tag (or `latest`) and no digest, for registry lookups.
    pub fn tagged(&self) -> String {
        format!("{}:{}", self.name(), self.tag().unwrap_or("latest"))
    }
}

/// The grammar, in upstream's order: the parts' syntax (the repository's case first), then the
/// repository's length, then the digest's algorithm and length.
fn parse(s: &str) -> Result<OciRef, OciRefErrorKind> {
    use OciRefErrorKind as E;
    if s.is_empty() {
        return Err(E::Empty);
    }
    if is_sha256_hex(s) {
        return Err(E::Identifier);
    }
    // No part but the digest follows an `@`, and the digest holds none: the first one splits.
    let (rest, digest) = match s.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (s, None),
    };
    // A tag follows the last `:` that no `/` follows (a port's `:` comes before a `/`).
    let (name, tag) = match rest.rfind(':') {
        Some(i) if !rest[i..].contains('/') => (&rest[..i], Some(&rest[i + 1..])),
        _ => (rest, None),
    };
    if name.is_empty() {
        return Err(E::Empty);
    }
    let (written_registry, path) = split_registry(name);
    if let Some(registry) = written_registry
        && !valid_registry(registry)
    {
        return Err(E::Registry(registry.to_owned()));
    }
    if !path.split('/').all(valid_path_component) {
        let lowercase = path.to_ascii_lowercase();
        return Err(if lowercase.split('/').all(valid_path_component) {
            E::Uppercase
        } else {
            E::Repository(path.to_owned())
        });
    }
    if let Some(t) = tag
        && !valid_tag(t)
    {
        return Err(E::Tag(t.to_owned()));
    }
    let digest = match digest {
        Some(d) => Some((
            d,
            digest_parts(d).ok_or_else(|| E::DigestFormat(d.to_owned()))?,
        )),
        None => None,
    };
    let registry = match written_registry {
        None | Some(DOCKER_HUB_LEGACY) => DOCKER_HUB,
        Some(r) => r,
    };
    let repository = if registry == DOCKER_HUB && !path.contains('/') {
        format!("{OFFICIAL_PREFIX}{path}")
    } else {
        path.to_owned()
    };
    if repository.len() > MAX_REPOSITORY_LEN {
        return Err(E::TooLong);
    }
    let digest = match digest {
        Some((d, (algorithm, _))) if algorithm != "sha256" => {
            return Err(E::DigestUnsupported(d.to_owned()));
        }
        Some((d, (_, hex))) => Some(hex.parse().map_err(|_| E::Sha256(d.to_owned()))?),
        None => None,
    };
    Ok(OciRef {
        registry: registry.to_owned(),
        repository,
        tag: tag.map(str::to_owned),
        digest,
    })
}

/// The registry as written and the path (`splitDockerDomain`): the first `/`-separated part is
/// a registry when it is `localhost`, holds a `.` or a `:`, or has an uppercase letter
/// (repositories are lowercase); otherwise the name is a Docker Hub path (`None`).
fn split_registry(name: &str) -> (Option<&str>, &str) {
    match name.split_once('/') {
        Some((first, path))
            if first == "localhost"
                || first.contains(['.', ':'])
                || first.chars().any(char::is_uppercase) =>
        {
            (Some(first), path)
        }
        _ => (None, name),
    }
}

/// `host [":" port]`, the host a domain name (`domainNameComponent`s joined by `.`: letters and
/// digits, `-` inside) or an IPv6 address in brackets (hex digits and `:`, no zone).
fn valid_registry(registry: &str) -> bool {
    let (host, port) = match registry.strip_prefix('[').and_then(|r| r.find(']')) {
        // `[` + the address + `]`.
        Some(end) => registry.split_at(end + 2),
        None => registry.split_at(registry.find(':').unwrap_or(registry.len())),
    };
    let host_ok = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.strip_suffix(']').is_some_and(|address| {
            !address.is_empty() && address.bytes().all(|b| b.is_ascii_hexdigit() || b == b':')
        }),
        None => host.split('.').all(|component| {
            let b = component.as_bytes();
            b.first().is_some_and(u8::is_ascii_alphanumeric)
                && b.last().is_some_and(u8::is_ascii_alphanumeric)
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        }),
    };
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    host_ok && port_ok
}

/// `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`: runs of lowercase letters and digits, joined by
/// one `.`, one or two `_`, or any number of `-`.
fn valid_path_component(component: &str) -> bool {
    let b = component.as_bytes();
    let alphanumeric = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let mut i = 0;
    loop {
        let run = i;
        while i < b.len() && alphanumeric(b[i]) {
            i += 1;
        }
        // Every component starts with, and every separator is followed by, a run.
        if i == run {
            return false;
        }
        if i == b.len() {
            return true;
        }
        let separator = i;
        while i < b.len() && matches!(b[i], b'.' | b'_' | b'-') {
            i += 1;
        }
        // An empty separator (any other character) fails at the next run.
        let joined_by = &b[separator..i];
        if !(matches!(joined_by, b"." | b"_" | b"__") || joined_by.iter().all(|c| *c == b'-')) {
            return false;
        }
    }
}

/// `[\w][\w.-]{0,127}` (`\w` is ASCII letters, digits and `_`).
fn valid_tag(tag: &str) -> bool {
    let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
    let b = tag.as_bytes();
    b.len() <= MAX_TAG_LEN
        && b.first().is_some_and(word)
        && b.iter().all(|c| word(c) || *c == b'.' || *c == b'-')
}

/// `algorithm:hex` per the grammar (`[A-Za-z][A-Za-z0-9]*` components joined by one of
/// `-_+.`, at least 32 hex digits of either case), or `None`.
fn digest_parts(digest: &str) -> Option<(&str, &str)> {
    let (algorithm, hex) = digest.split_once(':')?;
    let algorithm_ok = algorithm.split(['-', '_', '+', '.']).all(|component| {
        component
            .as_bytes()
            .first()
            .is_some_and(u8::is_ascii_alphabetic)
            && component.bytes().all(|b| b.is_ascii_alphanumeric())
    });
    let hex_ok = hex.len() >= 32 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    (algorithm_ok && hex_ok).then_some((algorithm, hex))
}

impl FromStr for OciRef {
    type Err = OciRefError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The normalised form, which parses back to the same reference:
/// `registry/repository[:tag][@sha256:…]`.
impl fmt::Display for OciRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use proptest::prelude::*;
    use regex::Regex;

    use super::OciRefErrorKind as E;
    use super::*;

    const F: &str = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";
    const D: &str = "sha256:2f2b9a1f6b0b7c5b4d7e0f3c5a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e";

    /// Registry, repository, tag and digest.
    type Parts = (String, String, Option<String>, Option<String>);
    /// What a parse gives: the parts, or the kind of error.
    type Parsed = Result<Parts, OciRefErrorKind>;

    fn parsed(s: &str) -> Parsed {
        OciRef::parse(s)
            .map(|r| {
                (
                    r.registry().to_owned(),
                    r.repository().to_owned(),
                    r.tag().map(str::to_owned),
                    r.digest().map(ToString::to_string),
                )
            })
            .map_err(|e| e.kind)
    }

    #[allow(clippy::unnecessary_wraps)] // a row's expected outcome, compared with `parsed`
    fn ok(registry: &str, repository: &str, tag: Option<&str>, digest: Option<&str>) -> Parsed {
        Ok((
            registry.to_owned(),
            repository.to_owned(),
            tag.map(str::to_owned),
            digest.map(str::to_owned),
        ))
    }

    fn check(cases: &[(String, Parsed)]) {
        let mut wrong = Vec::new();
        for (input, expected) in cases {
            let got = parsed(input);
            if got != *expected {
                wrong.push(format!("{input:?}: got {got:?}, expected {expected:?}"));
            }
            // Whatever parses prints a form that parses back to the same reference.
            if let Ok(r) = OciRef::parse(input) {
                assert_eq!(OciRef::parse(&r.to_string()), Ok(r), "{input}");
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// distribution/reference `reference_test.go` `TestReferenceParse`, through the
    /// normalisation (`ParseNormalizedNamed`) our callers use: a first part without `.`, `:`
    /// or uppercase is a Docker Hub path. Where distribution says only "invalid reference
    /// format", the kind names the part; sha256 is the one algorithm (upstream registers only
    /// sha256 in these tests too).
    #[test]
    fn issue20_upstream_reference_cases() {
        let hub = |repository: &str, tag: Option<&str>| ok("docker.io", repository, tag, None);
        let f = format!("sha256:{F}");
        let cases: Vec<(String, Parsed)> = vec![
            ("test_com".into(), hub("library/test_com", None)),
            ("test.com:tag".into(), hub("library/test.com", Some("tag"))),
            (
                "test.com:5000".into(),
                hub("library/test.com", Some("5000")),
            ),
            (
                "test.com/repo:tag".into(),
                ok("test.com", "repo", Some("tag"), None),
            ),
            ("test:5000/repo".into(), ok("test:5000", "repo", None, None)),
            (
                "test:5000/repo:tag".into(),
                ok("test:5000", "repo", Some("tag"), None),
            ),
            (
                format!("test:5000/repo@{f}"),
                ok("test:5000", "repo", None, Some(&f)),
            ),
            (
                format!("test:5000/repo:tag@{f}"),
                ok("test:5000", "repo", Some("tag"), Some(&f)),
            ),
            (String::new(), Err(E::Empty)),
            (":justtag".into(), Err(E::Empty)),
            (format!("@{f}"), Err(E::Empty)),
            (
                "repo@sha256:ffffffffffffffffffffffffffffffffff".into(),
                Err(E::Sha256(
                    "sha256:ffffffffffffffffffffffffffffffffff".into(),
                )),
            ),
            (
                format!("validname@invaliddigest:{F}"),
                Err(E::DigestUnsupported(format!("invaliddigest:{F}"))),
            ),
            (
                format!("validname@sha512:{F}{F}"),
                Err(E::DigestUnsupported(format!("sha512:{F}{F}"))),
            ),
            ("Uppercase:tag".into(), Err(E::Uppercase)),
            (
                "test:5000/Uppercase/lowercase:tag".into(),
                Err(E::Uppercase),
            ),
            // Normalised, an uppercase first part is a registry (upstream's FIXME case).
            (
                "Uppercase/lowercase:tag".into(),
                ok("Uppercase", "lowercase", Some("tag"), None),
            ),
            (
                "lowercase:Uppercase".into(),
                hub("library/lowercase", Some("Uppercase")),
            ),
            (format!("domain/{}:tag", "a".repeat(256)), Err(E::TooLong)),
            (
                format!("{}a:tag-puts-this-over-max", "a/".repeat(127)),
                hub(
                    &format!("{}a", "a/".repeat(127)),
                    Some("tag-puts-this-over-max"),
                ),
            ),
            (
                "aa/asdf$$^/aa".into(),
                Err(E::Repository("aa/asdf$$^/aa".into())),
            ),
            (
                "sub-dom1.foo.com/bar/baz/quux".into(),
                ok("sub-dom1.foo.com", "bar/baz/quux", None, None),
            ),
            (
                "sub-dom1.foo.com/bar/baz/quux:some-long-tag".into(),
                ok(
                    "sub-dom1.foo.com",
                    "bar/baz/quux",
                    Some("some-long-tag"),
                    None,
                ),
            ),
            (
                "b.gcr.io/test.example.com/my-app:test.example.com".into(),
                ok(
                    "b.gcr.io",
                    "test.example.com/my-app",
                    Some("test.example.com"),
                    None,
                ),
            ),
            // ☃.com and 🐳.com in punycode.
            (
                "xn--n3h.com/myimage:xn--n3h.com".into(),
                ok("xn--n3h.com", "myimage", Some("xn--n3h.com"), None),
            ),
            (
                format!("xn--7o8h.com/myimage:xn--7o8h.com@{f}"),
                ok("xn--7o8h.com", "myimage", Some("xn--7o8h.com"), Some(&f)),
            ),
            (
                "foo_bar.com:8080".into(),
                hub("library/foo_bar.com", Some("8080")),
            ),
            (
                "foo/foo_bar.com:8080".into(),
                hub("foo/foo_bar.com", Some("8080")),
            ),
            ("192.168.1.1".into(), hub("library/192.168.1.1", None)),
            (
                "192.168.1.1:tag".into(),
                hub("library/192.168.1.1", Some("tag")),
            ),
            (
                "192.168.1.1:5000".into(),
                hub("library/192.168.1.1", Some("5000")),
            ),
            (
                "192.168.1.1/repo".into(),
                ok("192.168.1.1", "repo", None, None),
            ),
            (
                "192.168.1.1:5000/repo".into(),
                ok("192.168.1.1:5000", "repo", None, None),
            ),
            (
                "192.168.1.1:5000/repo:5050".into(),
                ok("192.168.1.1:5000", "repo", Some("5050"), None),
            ),
            // Without a `/`, an IPv6 address is a (bad) Docker Hub name before a tag.
            (
                "[2001:db8::1]".into(),
                Err(E::Repository("[2001:db8:".into())),
            ),
            (
                "[2001:db8::1]:5000".into(),
                Err(E::Repository("[2001:db8::1]".into())),
            ),
            (
                "[2001:db8::1]:tag".into(),
                Err(E::Repository("[2001:db8::1]".into())),
            ),
            (
                "[2001:db8::1]/repo".into(),
                ok("[2001:db8::1]", "repo", None, None),
            ),
            (
                "[2001:db8:1:2:3:4:5:6]/repo:tag".into(),
                ok("[2001:db8:1:2:3:4:5:6]", "repo", Some("tag"), None),
            ),
            (
                "[2001:db8::1]:5000/repo".into(),
                ok("[2001:db8::1]:5000", "repo", None, None),
            ),
            (
                "[2001:db8::1]:5000/repo:tag".into(),
                ok("[2001:db8::1]:5000", "repo", Some("tag"), None),
            ),
            (
                format!("[2001:db8::1]:5000/repo@{f}"),
                ok("[2001:db8::1]:5000", "repo", None, Some(&f)),
            ),
            (
                format!("[2001:db8::1]:5000/repo:tag@{f}"),
                ok("[2001:db8::1]:5000", "repo", Some("tag"), Some(&f)),
            ),
            (
                "[2001:db8::]:5000/repo".into(),
                ok("[2001:db8::]:5000", "repo", None, None),
            ),
            (
                "[::1]:5000/repo".into(),
                ok("[::1]:5000", "repo", None, None),
            ),
            (
                "[fe80::1%eth0]:5000/repo".into(),
                Err(E::Registry("[fe80::1%eth0]:5000".into())),
            ),
            (
                "[fe80::1%@invalidzone]:5000/repo".into(),
                Err(E::Repository("[fe80:".into())),
            ),
            (
                format!("example.com/{}:tag", "a".repeat(255)),
                ok("example.com", &"a".repeat(255), Some("tag"), None),
            ),
        ];
        check(&cases);
    }

    /// distribution/reference `normalize_test.go`: `TestValidateReferenceName`,
    /// `TestValidateRemoteName`, `TestParseRepositoryInfo`, `TestNormalizedSplitHostname`,
    /// `TestParseReferenceWithTagAndDigest`, `TestInvalidReferenceComponents` and the named
    /// cases of `TestParseAnyReference`.
    #[test]
    fn issue20_upstream_normalize_cases() {
        let hex = "1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a";
        let song = "thisisthesongthatneverendsitgoesonandonandonthisisthesongthatnev";
        let hex_path = format!("docker.io/{hex}");
        let valid = [
            "docker/docker",
            "library/debian",
            "debian",
            "localhost/library/debian",
            "localhost/debian",
            "LOCALDOMAIN/library/debian",
            "LOCALDOMAIN/debian",
            "docker.io/docker/docker",
            "docker.io/library/debian",
            "docker.io/debian",
            "index.docker.io/docker/docker",
            "index.docker.io/library/debian",
            "index.docker.io/debian",
            "127.0.0.1:5000/docker/docker",
            "127.0.0.1:5000/library/debian",
            "127.0.0.1:5000/debian",
            "192.168.0.1",
            "192.168.0.1:80",
            "192.168.0.1:8/debian",
            "192.168.0.2:25000/debian",
            song,
            "[fc00::1]:5000/docker",
            "[fc00::1]:5000/docker/docker",
            "[fc00:1:2:3:4:5:6:7]:5000/library/debian",
            // A 64-hex path is no image id once a registry is written.
            hex_path.as_str(),
            "Docker/docker",
            "DOCKER/docker",
            "docker-rules/docker",
            "docker---rules/docker",
            "doc/docker",
            "d/docker",
            "jess/t",
            "dock__er/docker",
        ];
        for name in valid {
            assert!(OciRef::parse(name).is_ok(), "{name}: {:?}", parsed(name));
        }
        let long_namespace =
            ["this_is_not_a_valid_namespace_because_its_lenth_is_greater_than_255"; 4].join("_");
        let cases: Vec<(String, Parsed)> = vec![
            (
                "https://github.com/docker/docker".into(),
                Err(E::Registry("https:".into())),
            ),
            ("docker/Docker".into(), Err(E::Uppercase)),
            ("-docker".into(), Err(E::Repository("-docker".into()))),
            (
                "-docker/docker".into(),
                Err(E::Repository("-docker/docker".into())),
            ),
            (
                "-docker.io/docker/docker".into(),
                Err(E::Registry("-docker.io".into())),
            ),
            (
                "docker///docker".into(),
                Err(E::Repository("docker///docker".into())),
            ),
            ("docker.io/docker/Docker".into(), Err(E::Uppercase)),
            (
                "docker.io/docker///docker".into(),
                Err(E::Repository("docker///docker".into())),
            ),
            ("[fc00::1]".into(), Err(E::Repository("[fc00:".into()))),
            (
                "[fc00::1]:5000".into(),
                Err(E::Repository("[fc00::1]".into())),
            ),
            (
                "fc00::1:5000/debian".into(),
                Err(E::Registry("fc00::1:5000".into())),
            ),
            (
                "[fe80::1%eth0]:5000/debian".into(),
                Err(E::Registry("[fe80::1%eth0]:5000".into())),
            ),
            (
                "[2001:db8:3:4::192.0.2.33]:5000/debian".into(),
                Err(E::Registry("[2001:db8:3:4::192.0.2.33]:5000".into())),
            ),
            (hex.into(), Err(E::Identifier)),
            (
                "docker-/docker".into(),
                Err(E::Repository("docker-/docker".into())),
            ),
            (
                "-docker-/docker".into(),
                Err(E::Repository("-docker-/docker".into())),
            ),
            ("____/____".into(), Err(E::Repository("____/____".into()))),
            (
                "_docker/_docker".into(),
                Err(E::Repository("_docker/_docker".into())),
            ),
            (
                "dock..er/docker".into(),
                Err(E::Registry("dock..er".into())),
            ),
            (
                "dock_.er/docker".into(),
                Err(E::Registry("dock_.er".into())),
            ),
            (
                "dock-.er/docker".into(),
                Err(E::Registry("dock-.er".into())),
            ),
            ("docker/".into(), Err(E::Repository("docker/".into()))),
            (format!("{long_namespace}/docker"), Err(E::TooLong)),
            ("-foo".into(), Err(E::Repository("-foo".into()))),
            // TestParseRepositoryInfo: familiar, full and ambiguous names of one repository.
            ("localhost/fooo".into(), ok("localhost", "fooo", None, None)),
            (
                "localhost/fooo/bar".into(),
                ok("localhost", "fooo/bar", None, None),
            ),
            (
                "LOCALDOMAIN/fooo".into(),
                ok("LOCALDOMAIN", "fooo", None, None),
            ),
            ("fooo/bar".into(), ok("docker.io", "fooo/bar", None, None)),
            (
                "docker.io/fooo/bar".into(),
                ok("docker.io", "fooo/bar", None, None),
            ),
            (
                "index.docker.io/fooo/bar".into(),
                ok("docker.io", "fooo/bar", None, None),
            ),
            (
                "ubuntu".into(),
                ok("docker.io", "library/ubuntu", None, None),
            ),
            (
                "library/ubuntu".into(),
                ok("docker.io", "library/ubuntu", None, None),
            ),
            (
                "docker.io/library/ubuntu".into(),
                ok("docker.io", "library/ubuntu", None, None),
            ),
            (
                "nonlibrary/ubuntu".into(),
                ok("docker.io", "nonlibrary/ubuntu", None, None),
            ),
            (
                "other/library".into(),
                ok("docker.io", "other/library", None, None),
            ),
            (
                "127.0.0.1:8000/private/moonbase".into(),
                ok("127.0.0.1:8000", "private/moonbase", None, None),
            ),
            (
                "example.com:8000/privatebasee".into(),
                ok("example.com:8000", "privatebasee", None, None),
            ),
            (
                "ubuntu-12.04-base".into(),
                ok("docker.io", "library/ubuntu-12.04-base", None, None),
            ),
            (
                "index.docker.io/library/ubuntu-12.04-base".into(),
                ok("docker.io", "library/ubuntu-12.04-base", None, None),
            ),
            (
                "docker.io/foo".into(),
                ok("docker.io", "library/foo", None, None),
            ),
            (
                "library/foo/bar".into(),
                ok("docker.io", "library/foo/bar", None, None),
            ),
            (
                "store/foo/bar".into(),
                ok("docker.io", "store/foo/bar", None, None),
            ),
            ("Foo/bar".into(), ok("Foo", "bar", None, None)),
            ("FOO/bar".into(), ok("FOO", "bar", None, None)),
            // TestNormalizedSplitHostname.
            ("test.com/foo".into(), ok("test.com", "foo", None, None)),
            (
                "test_com/foo".into(),
                ok("docker.io", "test_com/foo", None, None),
            ),
            (
                "docker/migrator".into(),
                ok("docker.io", "docker/migrator", None, None),
            ),
            (
                "test.com:8080/foo".into(),
                ok("test.com:8080", "foo", None, None),
            ),
            (
                "test-com:8080/foo".into(),
                ok("test-com:8080", "foo", None, None),
            ),
            (
                "xn--n3h.com:18080/foo".into(),
                ok("xn--n3h.com:18080", "foo", None, None),
            ),
            (
                "docker.io/library/foo/bar".into(),
                ok("docker.io", "library/foo/bar", None, None),
            ),
            // TestParseReferenceWithTagAndDigest: both are kept.
            (
                format!("busybox:latest@{D}"),
                ok("docker.io", "library/busybox", Some("latest"), Some(D)),
            ),
            // TestParseAnyReference, the cases with a name.
            (
                "redis:latest".into(),
                ok("docker.io", "library/redis", Some("latest"), None),
            ),
            (
                format!("redis@{D}"),
                ok("docker.io", "library/redis", None, Some(D)),
            ),
            (
                "dmcgowan/myapp:latest".into(),
                ok("docker.io", "dmcgowan/myapp", Some("latest"), None),
            ),
            (
                hex[..63].into(),
                ok("docker.io", &format!("library/{}", &hex[..63]), None, None),
            ),
            ("dbcc1".into(), ok("docker.io", "library/dbcc1", None, None)),
            // Deliberately stricter than upstream, which takes this with an empty domain (its
            // regular expression falls back to reading the whole name as a path).
            ("a_b.com/foo".into(), Err(E::Registry("a_b.com".into()))),
        ];
        check(&cases);
    }

    /// The forms `runtime` tests used to hold for its own parser, and the issue 9 cases: each
    /// would reach a container engine's command line starting with `-`, or is not a reference
    /// the engine takes anyway.
    #[test]
    fn issue9_option_like_and_malformed_references_are_rejected() {
        for bad in [
            "",
            "a b",
            "Upper/Case",
            "x@md5:abc",
            "x@sha256:123",
            "x:",
            "--privileged.evil/x",
            "-v.x:1/y",
            "--network=host.io/x",
            "reg-.io/x",
            "reg.io:/x",
            "reg.io:12a/x",
            "acme/-x",
            "acme/x-",
            "acme//x",
            "acme/x._y",
            "x:-tag",
            "x:.tag",
        ] {
            let e = OciRef::parse(bad).expect_err(bad).to_string();
            assert!(
                e.starts_with(&format!("invalid reference \"{bad}\": ")),
                "{e}"
            );
        }
        let cases: Vec<(String, Parsed)> = vec![
            ("nginx".into(), ok("docker.io", "library/nginx", None, None)),
            ("acme/app".into(), ok("docker.io", "acme/app", None, None)),
            (
                format!("ghcr.io/acme/set-labels:v1@{D}"),
                ok("ghcr.io", "acme/set-labels", Some("v1"), Some(D)),
            ),
            (
                "127.0.0.1:5000/fn/noop:dev".into(),
                ok("127.0.0.1:5000", "fn/noop", Some("dev"), None),
            ),
            (
                "localhost/a__b/c--d/e.f:_x".into(),
                ok("localhost", "a__b/c--d/e.f", Some("_x"), None),
            ),
            (
                "my-registry.example.com:443/team/app:1.0.0-rc.1".into(),
                ok(
                    "my-registry.example.com:443",
                    "team/app",
                    Some("1.0.0-rc.1"),
                    None,
                ),
            ),
        ];
        check(&cases);
    }

    #[test]
    fn issue20_messages_name_the_reference_and_the_part() {
        let message = |s: &str| OciRef::parse(s).expect_err(s).to_string();
        assert_eq!(
            message("docker/Docker"),
            "invalid reference \"docker/Docker\": repository name must be lowercase"
        );
        assert_eq!(
            message("x:-tag"),
            "invalid reference \"x:-tag\": tag \"-tag\" must be 1 to 128 letters, digits and ._- starting with a letter, digit or _"
        );
        assert_eq!(
            message("x@sha256:ABC"),
            "invalid reference \"x@sha256:ABC\": digest \"sha256:ABC\" must be <algorithm>:<at least 32 hex characters>"
        );
        assert_eq!(
            message(&format!("x@sha256:{}", F.to_uppercase())),
            format!(
                "invalid reference \"x@sha256:{0}\": digest \"sha256:{0}\" must be sha256:<64 lowercase hex characters>",
                F.to_uppercase()
            )
        );
        assert_eq!(
            message(""),
            "invalid reference \"\": repository name must have at least one component"
        );
    }

    #[test]
    fn issue20_printing_and_the_registry_asked() {
        let r = OciRef::parse("nginx:1.27").expect("parses");
        assert_eq!(r.to_string(), "docker.io/library/nginx:1.27");
        assert_eq!(r.resolve_registry(), "index.docker.io");
        assert_eq!(r.tagged(), "docker.io/library/nginx:1.27");
        let r = OciRef::parse(&format!("ghcr.io/acme/fn@{D}")).expect("parses");
        assert_eq!(r.to_string(), format!("ghcr.io/acme/fn@{D}"));
        assert_eq!((r.tag(), r.resolve_registry()), (None, "ghcr.io"));
        assert_eq!(r.tagged(), "ghcr.io/acme/fn:latest");
        assert_eq!(r.pinned(D), format!("ghcr.io/acme/fn@{D}"));
        assert_eq!(
            OciRef::parse("localhost:5000/platform").map(|r| r.to_string()),
            Ok("localhost:5000/platform".to_owned())
        );
    }

    /// distribution's `ParseNormalizedNamed` from upstream's own regular expressions
    /// (`regexp.go`, `\w` spelled out: RE2's is ASCII), with sha256 the only algorithm:
    /// (registry, repository, tag, digest), or `None` where it refuses.
    fn upstream(s: &str) -> Option<Parts> {
        static RES: OnceLock<[Regex; 3]> = OnceLock::new();
        let [reference, anchored_name, identifier] = RES.get_or_init(|| {
            let component = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
            let host = format!(r"(?:{component}(?:\.{component})*|\[(?:[a-fA-F0-9:]+)\])");
            let domain = format!("{host}(?::[0-9]+)?");
            let path = "[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*";
            let remote = format!("{path}(?:/{path})*");
            let tag = "[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}";
            let digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}";
            let re = |p: &str| Regex::new(p).expect("upstream pattern");
            [
                re(&format!(
                    "^((?:{domain}/)?{remote})(?::({tag}))?(?:@({digest}))?$"
                )),
                re(&format!("^(?:({domain})/)?({remote})$")),
                re("^[a-f0-9]{64}$"),
            ]
        });
        if identifier.is_match(s) {
            return None;
        }
        // splitDockerDomain
        let (domain, mut remainder) = match s.split_once('/') {
            Some(("index.docker.io", rest)) => ("docker.io".to_owned(), rest.to_owned()),
            Some((first, rest))
                if first == "localhost"
                    || first.contains(['.', ':'])
                    || first.to_lowercase() != first =>
            {
                (first.to_owned(), rest.to_owned())
            }
            None | Some(_) => ("docker.io".to_owned(), s.to_owned()),
        };
        if domain == "docker.io" && !remainder.contains('/') {
            remainder = format!("library/{remainder}");
        }
        let remote = remainder.split(':').next().unwrap_or_default();
        if remote.to_lowercase() != remote {
            return None;
        }
        let full = format!("{domain}/{remainder}");
        let captures = reference.captures(&full)?;
        let name = anchored_name.captures(&captures[1])?;
        // Upstream falls back to an empty domain here; we refuse (see the normalize cases).
        if name.get(1).map(|m| m.as_str()) != Some(domain.as_str()) || name[2].len() > 255 {
            return None;
        }
        let digest = captures.get(3).map(|m| m.as_str().to_owned());
        if let Some(d) = &digest
            && !d
                .strip_prefix("sha256:")
                .is_some_and(|h| identifier.is_match(h))
        {
            return None;
        }
        Some((
            domain,
            name[2].to_owned(),
            captures.get(2).map(|m| m.as_str().to_owned()),
            digest,
        ))
    }

    /// Pieces that make up references and near misses.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[a-z0-9]{1,4}",
            1 => "[A-Za-z0-9]{1,3}",
            4 => prop::sample::select(vec![
                ".", "_", "__", "-", "--", "/", "/", ":", "@", "[", "]", "::", "5000",
                "localhost", "docker.io", "index.docker.io", "library", "sha256:", "sha512:",
                "A", "%", " ",
            ])
            .prop_map(str::to_owned),
            1 => "[a-f0-9]{64}",
            1 => "[a-fA-F0-9]{31,33}",
        ]
    }

    /// A reference our grammar accepts, with every part's options.
    fn reference() -> impl Strategy<Value = String> {
        let component = "[a-z0-9]{1,3}(([._]|__|-{1,3})[a-z0-9]{1,3}){0,2}";
        let registry = prop_oneof![
            Just(String::new()),
            Just("localhost/".to_owned()),
            Just("index.docker.io/".to_owned()),
            "[a-zA-Z0-9]([a-zA-Z0-9-]{0,3}[a-zA-Z0-9])?(\\.[a-z0-9]{1,4}){1,2}(:[0-9]{1,5})?/",
            // A `:` makes the first part a registry.
            "\\[[a-f0-9]{0,4}:[a-f0-9:]{0,8}\\](:[0-9]{1,5})?/",
            "[A-Z][a-z]{0,3}/",
        ];
        (
            registry,
            prop::collection::vec(component, 1..4),
            prop::option::of("[0-9A-Za-z_][0-9A-Za-z_.-]{0,20}"),
            prop::option::of("[a-f0-9]{64}"),
        )
            .prop_map(|(registry, path, tag, digest)| {
                // Without a registry, a first part with a `.` would be read as one.
                let registry = if registry.is_empty() && path.len() > 1 && path[0].contains('.') {
                    "docker.io/".to_owned()
                } else {
                    registry
                };
                let mut s = format!("{registry}{}", path.join("/"));
                if let Some(t) = tag {
                    s.push(':');
                    s.push_str(&t);
                }
                if let Some(d) = digest {
                    s.push_str("@sha256:");
                    s.push_str(&d);
                }
                s
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The hand-written parser accepts what upstream's regular expressions accept, and
        /// splits it the same way.
        #[test]
        fn issue20_the_parser_is_upstreams_grammar(pieces in prop::collection::vec(piece(), 0..10)) {
            let s = pieces.concat();
            prop_assert_eq!(parsed(&s).ok(), upstream(&s), "{:?}", s);
        }

        #[test]
        fn issue20_valid_references_match_upstream_and_print_back(s in reference()) {
            let r = OciRef::parse(&s);
            prop_assert!(r.is_ok(), "{:?}: {:?}", s, r);
            prop_assert_eq!(parsed(&s).ok(), upstream(&s), "{:?}", s);
            let r = r.expect("checked");
            prop_assert_eq!(OciRef::parse(&r.to_string()), Ok(r.clone()), "{}", r);
        }
    }
}

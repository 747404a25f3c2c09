//! Container image references in every form users write: `name`, `name:tag`,
//! `name@sha256:…`, `name:tag@sha256:…`, a registry with a port, Docker Hub short names.

use std::fmt;

use super::RuntimeError;

/// A parsed image reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// Registry host (with port), `docker.io` for Docker Hub.
    pub registry: String,
    /// Repository path (`library/nginx` for Docker Hub short names).
    pub repository: String,
    /// Tag, if any.
    pub tag: Option<String>,
    /// Digest (`sha256:<hex>`), if any.
    pub digest: Option<String>,
}

impl ImageRef {
    /// Parse a reference.
    pub fn parse(reference: &str) -> Result<Self, RuntimeError> {
        let reference = reference.trim();
        if reference.is_empty() || reference.chars().any(char::is_whitespace) {
            return Err(RuntimeError::NotAnImage(reference.to_owned()));
        }
        let (rest, digest) = match reference.split_once('@') {
            Some((rest, digest)) => {
                let hex = digest
                    .strip_prefix("sha256:")
                    .ok_or_else(|| RuntimeError::OnlySha256(reference.to_owned()))?;
                if !crate::catalog_ref::is_sha256_hex(hex) {
                    return Err(RuntimeError::ImageDigest {
                        reference: reference.to_owned(),
                        digest: digest.to_owned(),
                    });
                }
                (rest, Some(digest.to_owned()))
            }
            None => (reference, None),
        };
        let (name, tag) = match rest.rfind(':') {
            Some(i) if !rest[i..].contains('/') => (&rest[..i], Some(rest[i + 1..].to_owned())),
            _ => (rest, None),
        };
        if let Some(t) = tag.as_deref()
            && !valid_tag(t)
        {
            return Err(RuntimeError::ImageTag {
                reference: reference.to_owned(),
                tag: t.to_owned(),
            });
        }
        let mut parts = name.splitn(2, '/');
        let first = parts.next().unwrap_or_default();
        let (registry, repository) = match parts.next() {
            Some(path) if first.contains('.') || first.contains(':') || first == "localhost" => {
                (first.to_owned(), path.to_owned())
            }
            Some(_) => ("docker.io".to_owned(), name.to_owned()),
            None => ("docker.io".to_owned(), format!("library/{name}")),
        };
        let registry = if registry == "index.docker.io" {
            "docker.io".to_owned()
        } else {
            registry
        };
        // A reference is handed to a container engine's command line: nothing in it may
        // start with `-`, or the engine would read it as an option.
        if !valid_registry(&registry) {
            return Err(RuntimeError::ImageRegistry {
                reference: reference.to_owned(),
                registry,
            });
        }
        if !repository.split('/').all(valid_path_component) {
            return Err(RuntimeError::ImageRepository {
                reference: reference.to_owned(),
                repository,
            });
        }
        Ok(Self {
            registry,
            repository,
            tag,
            digest,
        })
    }

    /// `registry/repository` without tag or digest.
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// The form container engines enforce: `registry/repository@sha256:…`.
    pub fn pinned(&self, digest: &str) -> String {
        format!("{}@{digest}", self.name())
    }

    /// The reference with its tag (or `latest`) and no digest, for registry lookups.
    pub fn tagged(&self) -> String {
        format!(
            "{}:{}",
            self.name(),
            self.tag.as_deref().unwrap_or("latest")
        )
    }
}

/// A registry host as the distribution reference grammar has it (`domainComponent`s joined
/// by `.`, an optional `:port`): letters and digits at both ends of each component.
/// <https://github.com/distribution/reference/blob/main/regexp.go>
fn valid_registry(registry: &str) -> bool {
    let (host, port) = match registry.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (registry, None),
    };
    let component = |c: &str| {
        !c.is_empty()
            && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-')
            && !c.starts_with('-')
            && !c.ends_with('-')
    };
    host.split('.').all(component)
        && port.is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// A repository path component (`[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`).
fn valid_path_component(part: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let bytes: Vec<char> = part.chars().collect();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if !alnum(*first) || !alnum(*last) || !part.chars().all(|c| alnum(c) || "._-".contains(c)) {
        return false;
    }
    // Separators: one `.`, one or two `_`, or any run of `-`; never mixed.
    let mut run = String::new();
    for c in part.chars() {
        if alnum(c) {
            let ok = run.is_empty()
                || run == "."
                || run == "_"
                || run == "__"
                || run.chars().all(|r| r == '-');
            if !ok {
                return false;
            }
            run.clear();
        } else {
            run.push(c);
        }
    }
    true
}

/// A tag (`[\w][\w.-]{0,127}`).
fn valid_tag(tag: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    tag.len() <= 128
        && tag.chars().next().is_some_and(word)
        && tag.chars().all(|c| word(c) || c == '.' || c == '-')
}

impl fmt::Display for ImageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())?;
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
    use super::*;

    const D: &str = "sha256:2f2b9a1f6b0b7c5b4d7e0f3c5a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e";

    #[test]
    fn every_form() {
        let r = ImageRef::parse("nginx").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()),
            ("docker.io", "library/nginx", None)
        );
        let r = ImageRef::parse("nginx:1.27").unwrap();
        assert_eq!(r.tag.as_deref(), Some("1.27"));
        assert_eq!(r.tagged(), "docker.io/library/nginx:1.27");
        let r = ImageRef::parse("acme/app").unwrap();
        assert_eq!(r.name(), "docker.io/acme/app");
        let r = ImageRef::parse(&format!("ghcr.io/acme/set-labels@{D}")).unwrap();
        assert_eq!((r.tag.as_deref(), r.digest.as_deref()), (None, Some(D)));
        let r = ImageRef::parse(&format!("ghcr.io/acme/set-labels:v1@{D}")).unwrap();
        assert_eq!(r.to_string(), format!("ghcr.io/acme/set-labels:v1@{D}"));
        assert_eq!(r.pinned(D), format!("ghcr.io/acme/set-labels@{D}"));
        let r = ImageRef::parse("127.0.0.1:5000/fn/noop:dev").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()),
            ("127.0.0.1:5000", "fn/noop", Some("dev"))
        );
        let r = ImageRef::parse("localhost/krm-catalog:dev").unwrap();
        assert_eq!(r.registry, "localhost");
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "a b", "Upper/Case", "x@md5:abc", "x@sha256:123", "x:"] {
            assert!(ImageRef::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn issue9_option_like_references_are_rejected() {
        // Each would reach the engine's command line starting with `-`, or is not a
        // reference the engine accepts anyway.
        for bad in [
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
            let e = ImageRef::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("\"{bad}\": ")), "{bad}: {e}");
        }
        for good in [
            "ghcr.io/acme/set-labels:v1",
            "127.0.0.1:5000/fn/noop:dev",
            "localhost/a__b/c--d/e.f:_x",
            "my-registry.example.com:443/team/app:1.0.0-rc.1",
        ] {
            assert!(ImageRef::parse(good).is_ok(), "{good}");
        }
    }
}

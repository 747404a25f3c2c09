//! What every finding carries, whichever stage makes it: how bad it is ([`Severity`]) and where
//! it is ([`FieldPath`]). The main crate turns findings into KRM results; this module knows
//! nothing of those.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Fails the run (exit 1).
    Error,
    /// Worth reading; does not fail.
    Warning,
    /// For information.
    Info,
}

impl Severity {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Info => "info",
        }
    }
}

/// A line for stderr as cargo and rustc write theirs: `error: …`, `warning: …`, `info: …`.
/// The one place a line's prefix is chosen from its severity: the logger, `catalog lint`, and
/// the results echoed on stderr all print through it.
#[derive(Debug, Clone, Copy)]
pub struct Line<T>(pub Severity, pub T);

impl<T: fmt::Display> fmt::Display for Line<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.as_str(), self.1)
    }
}

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathSegment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
    /// A key of a map (a schema's `additionalProperties`) as the apiserver's CEL validator
    /// writes it, `fldPath.Key(k)`: always in brackets (`ports[http]`), where the OpenAPI
    /// validator joins the same key with a dot (`ports.http`).
    MapKey(String),
}

impl PathSegment {
    /// The key of an object or map step, `None` for an index.
    #[must_use]
    pub fn as_key(&self) -> Option<&str> {
        match self {
            Self::Key(k) | Self::MapKey(k) => Some(k),
            Self::Index(_) => None,
        }
    }
}

/// Where in a document a finding is: object keys and array indexes from the document root (or
/// from the schema root, for problems of a schema).
///
/// It renders one way everywhere, the way Kubernetes field paths read (apimachinery
/// `field.Path`): keys joined with dots, indexes in brackets, and keys that are not identifiers
/// (anything but ASCII letters, digits, `-`, `_` and `$`) in brackets without quotes:
/// `spec.services.cert-manager`, `spec.catalogs[0].path`,
/// `metadata.annotations[cert-manager.io/issuer]`. (`$` is in because schema keywords such as
/// `$ref` are fields, which Kubernetes joins with a dot: `properties[a].$ref`.)
///
/// Paths order as their renderings do (then by segments), so sorted findings read in the order
/// a reader expects.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(Vec<PathSegment>);

impl FieldPath {
    /// The root (renders as the empty string).
    #[must_use]
    pub fn root() -> Self {
        Self::default()
    }

    /// This path with `key` appended.
    #[must_use]
    pub fn key(&self, key: impl AsRef<str>) -> Self {
        let mut p = self.clone();
        p.push_key(key.as_ref());
        p
    }

    /// This path with the map key `key` appended (rendered in brackets, see
    /// [`PathSegment::MapKey`]).
    #[must_use]
    pub fn map_key(&self, key: impl AsRef<str>) -> Self {
        let mut p = self.clone();
        p.0.push(PathSegment::MapKey(key.as_ref().to_owned()));
        p
    }

    /// This path with index `i` appended.
    #[must_use]
    pub fn index(&self, i: usize) -> Self {
        let mut p = self.clone();
        p.push_index(i);
        p
    }

    /// This path with every segment of `rest` appended.
    #[must_use]
    pub fn join(&self, rest: &FieldPath) -> Self {
        let mut p = self.clone();
        p.0.extend(rest.0.iter().cloned());
        p
    }

    /// Append a key in place (for walkers that push and pop).
    pub fn push_key(&mut self, key: impl Into<String>) {
        self.0.push(PathSegment::Key(key.into()));
    }

    /// Append an index in place.
    pub fn push_index(&mut self, i: usize) {
        self.0.push(PathSegment::Index(i));
    }

    /// Remove the last segment.
    pub fn pop(&mut self) -> Option<PathSegment> {
        self.0.pop()
    }

    /// The segments, root first.
    #[must_use]
    pub fn segments(&self) -> &[PathSegment] {
        &self.0
    }

    /// Whether `prefix` is this path or one of its ancestors.
    #[must_use]
    pub fn starts_with(&self, prefix: &FieldPath) -> bool {
        self.0.starts_with(&prefix.0)
    }

    /// Whether this is the root.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `key` renders after a dot (`a.b`) rather than in brackets (`a[b.c]`).
    fn is_identifier(key: &str) -> bool {
        !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '$'))
    }

    /// Read a path written in the rendered notation (`spec.catalogs[0].path`,
    /// `data[cluster.name]`): for paths written as literals in the source. A bracket holding
    /// only digits is an index, anything else in brackets a key (up to the first `]`).
    #[must_use]
    pub fn parse(text: &str) -> Self {
        let mut segments = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            if let Some(inner) = rest.strip_prefix('[') {
                let end = inner.find(']').unwrap_or(inner.len());
                let token = &inner[..end];
                segments.push(match token.parse::<usize>() {
                    Ok(i) if token.bytes().all(|b| b.is_ascii_digit()) => PathSegment::Index(i),
                    _ => PathSegment::Key(token.to_owned()),
                });
                rest = inner.get(end + 1..).unwrap_or("");
            } else {
                let body = rest.strip_prefix('.').unwrap_or(rest);
                let end = body.find(['.', '[']).unwrap_or(body.len());
                segments.push(PathSegment::Key(body[..end].to_owned()));
                rest = &body[end..];
            }
        }
        Self(segments)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                PathSegment::Index(n) => write!(f, "[{n}]")?,
                PathSegment::Key(k) if Self::is_identifier(k) => {
                    if i > 0 {
                        f.write_char('.')?;
                    }
                    f.write_str(k)?;
                }
                PathSegment::Key(k) | PathSegment::MapKey(k) => write!(f, "[{k}]")?,
            }
        }
        Ok(())
    }
}

impl Ord for FieldPath {
    fn cmp(&self, other: &Self) -> Ordering {
        self.to_string()
            .cmp(&other.to_string())
            .then_with(|| self.0.cmp(&other.0))
    }
}

impl PartialOrd for FieldPath {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl From<&str> for FieldPath {
    /// A literal path, see [`FieldPath::parse`].
    fn from(text: &str) -> Self {
        Self::parse(text)
    }
}

impl From<&FieldPath> for FieldPath {
    fn from(path: &FieldPath) -> Self {
        path.clone()
    }
}

impl From<Vec<PathSegment>> for FieldPath {
    fn from(segments: Vec<PathSegment>) -> Self {
        Self(segments)
    }
}

impl PartialEq<&str> for FieldPath {
    /// Whether the path renders as `other` (without rendering it into a new string).
    fn eq(&self, other: &&str) -> bool {
        /// Consumes the expected text as the rendering is written; fails at the first mismatch.
        struct Expect<'a>(&'a str);
        impl fmt::Write for Expect<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.0 = self.0.strip_prefix(s).ok_or(fmt::Error)?;
                Ok(())
            }
        }
        let mut expect = Expect(other);
        write!(expect, "{self}").is_ok() && expect.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue16_map_keys_render_in_brackets_as_the_cel_validator_writes_them() {
        let p = FieldPath::root().key("spec").key("ports").map_key("http");
        assert_eq!(p.to_string(), "spec.ports[http]");
        assert_eq!(
            p.segments().last().and_then(PathSegment::as_key),
            Some("http")
        );
        assert_eq!(
            FieldPath::root().key("ports").key("http").to_string(),
            "ports.http"
        );
    }

    #[test]
    fn renders_like_kubernetes_field_paths() {
        let p = FieldPath::root()
            .key("metadata")
            .key("annotations")
            .key("cert-manager.io/issuer");
        assert_eq!(
            p.to_string(),
            "metadata.annotations[cert-manager.io/issuer]"
        );
        let p = FieldPath::root()
            .key("spec")
            .key("services")
            .key("cert-manager")
            .key("l")
            .index(2)
            .key("b.c")
            .key("d");
        assert_eq!(p.to_string(), "spec.services.cert-manager.l[2][b.c].d");
        assert_eq!(FieldPath::root().to_string(), "");
        assert_eq!(FieldPath::root().key("x.y").to_string(), "[x.y]");
        assert_eq!(FieldPath::root().index(0).key("a").to_string(), "[0].a");
        assert_eq!(FieldPath::root().key("a").key("").to_string(), "a[]");
        assert_eq!(
            FieldPath::root()
                .key("allOf")
                .index(0)
                .key("$ref")
                .to_string(),
            "allOf[0].$ref"
        );
    }

    #[test]
    fn parse_reads_what_display_writes() {
        for text in [
            "spec.catalogs[0].path",
            "data[cluster.name]",
            "metadata.annotations[cert-manager.io/issuer]",
            "[0].a",
            "a.b-c_d",
            "",
        ] {
            assert_eq!(FieldPath::parse(text).to_string(), text);
        }
        assert_eq!(
            FieldPath::parse("a[1][x.y]").segments(),
            [
                PathSegment::Key("a".into()),
                PathSegment::Index(1),
                PathSegment::Key("x.y".into())
            ]
        );
    }

    #[test]
    fn paths_order_as_they_read() {
        let mut paths = [
            FieldPath::parse("x.a.c"),
            FieldPath::parse("x.a-b"),
            FieldPath::parse("x[1]"),
        ];
        paths.sort();
        let text: Vec<String> = paths.iter().map(ToString::to_string).collect();
        assert_eq!(text, ["x.a-b", "x.a.c", "x[1]"]);
    }
}

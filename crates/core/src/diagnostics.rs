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
///
/// A path may also be *nil*: a finding the apiserver reports with no field, which apimachinery
/// prints as `<nil>` (a nil `*field.Path`): kube-openapi's composite errors (`anyOf`, `oneOf`,
/// `allOf`, `not`), which name their field inside the message, and the error that says CEL
/// rules were not checked. A nil path still knows the field it is about (its segments, empty for
/// the root), so joining it under a base extends that field and keeps it nil, and messages can
/// name it; it renders as `<nil>`, orders right after the field it is about, and a KRM result
/// made of it has no field. [`FieldPath::nil`] is the one way to make one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath {
    segments: Vec<PathSegment>,
    /// Reported with no field (`<nil>`).
    nil: bool,
}

impl FieldPath {
    /// The root (renders as the empty string).
    #[must_use]
    pub fn root() -> Self {
        Self::default()
    }

    /// This field, reported with no field path (renders as `<nil>`; see [`FieldPath`]).
    #[must_use]
    pub fn nil(&self) -> Self {
        Self {
            segments: self.segments.clone(),
            nil: true,
        }
    }

    /// Whether the apiserver reports this path as no path (`<nil>`).
    #[must_use]
    pub fn is_nil(&self) -> bool {
        self.nil
    }

    /// The field this path is about, nil or not (the path itself when it is not nil).
    #[must_use]
    pub fn field(&self) -> Self {
        Self {
            segments: self.segments.clone(),
            nil: false,
        }
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
        p.segments
            .push(PathSegment::MapKey(key.as_ref().to_owned()));
        p
    }

    /// This path with index `i` appended.
    #[must_use]
    pub fn index(&self, i: usize) -> Self {
        let mut p = self.clone();
        p.push_index(i);
        p
    }

    /// This path with every segment of `rest` appended; nil when either is.
    #[must_use]
    pub fn join(&self, rest: &FieldPath) -> Self {
        let mut p = self.clone();
        p.segments.extend(rest.segments.iter().cloned());
        p.nil |= rest.nil;
        p
    }

    /// Append a key in place (for walkers that push and pop).
    pub fn push_key(&mut self, key: impl Into<String>) {
        self.segments.push(PathSegment::Key(key.into()));
    }

    /// Append an index in place.
    pub fn push_index(&mut self, i: usize) {
        self.segments.push(PathSegment::Index(i));
    }

    /// Remove the last segment.
    pub fn pop(&mut self) -> Option<PathSegment> {
        self.segments.pop()
    }

    /// The segments, root first.
    #[must_use]
    pub fn segments(&self) -> &[PathSegment] {
        &self.segments
    }

    /// Whether `prefix` is this path or one of its ancestors.
    #[must_use]
    pub fn starts_with(&self, prefix: &FieldPath) -> bool {
        self.segments.starts_with(&prefix.segments)
    }

    /// Whether this is the root (and not nil: a nil path is never empty, it renders `<nil>`).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty() && !self.nil
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
        Self::from(segments)
    }
}

impl FieldPath {
    /// The rendering of the field (of a nil path too), see [`FieldPath`].
    fn write_field(&self, f: &mut impl fmt::Write) -> fmt::Result {
        for (i, seg) in self.segments.iter().enumerate() {
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

    /// [`FieldPath::write_field`] into a string.
    fn field_text(&self) -> String {
        let mut s = String::new();
        let _ = self.write_field(&mut s);
        s
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nil {
            f.write_str("<nil>")
        } else {
            self.write_field(f)
        }
    }
}

impl Ord for FieldPath {
    /// By the rendering of the field, then segments; a nil path right after its field's.
    fn cmp(&self, other: &Self) -> Ordering {
        self.field_text()
            .cmp(&other.field_text())
            .then_with(|| self.segments.cmp(&other.segments))
            .then_with(|| self.nil.cmp(&other.nil))
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
        Self {
            segments,
            nil: false,
        }
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

    /// Issue 22: the apiserver prints the field of some errors as `<nil>` (a nil
    /// `*field.Path`); such a path still knows its field, stays nil under a base, is never the
    /// empty root, and orders right after its field.
    #[test]
    fn issue16_nil_paths_render_as_the_apiserver_prints_them() {
        let nil = FieldPath::parse("port").nil();
        assert!(nil.is_nil());
        assert!(!nil.is_empty());
        assert_eq!(nil.to_string(), "<nil>");
        assert_eq!(nil.field().to_string(), "port");
        assert!(!nil.field().is_nil());
        let full = FieldPath::parse("spec.config").join(&nil);
        assert!(full.is_nil());
        assert_eq!(full.field().to_string(), "spec.config.port");
        assert_eq!(FieldPath::root().nil().to_string(), "<nil>");
        assert!(!FieldPath::root().nil().is_empty());
        assert_ne!(FieldPath::root().nil(), FieldPath::root());
        let mut paths = [
            FieldPath::parse("q"),
            nil.clone(),
            FieldPath::parse("port"),
            FieldPath::parse("a"),
        ];
        paths.sort();
        assert_eq!(
            paths,
            [
                FieldPath::parse("a"),
                FieldPath::parse("port"),
                nil,
                FieldPath::parse("q")
            ]
        );
    }
}

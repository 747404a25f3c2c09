//! KRM function results: every problem attributable to an input, as data.
//!
//! Results carry `resourceRef`, `field.path` and `file{path,index}` taken from the item's
//! annotations, so kpt prints `[error] group/v1/Kind/ns/name field.path: message`. They are
//! sorted before output so runs are byte-identical, and each error is echoed as one line on
//! stderr because kustomize ignores `results` entirely, in our one stderr form
//! (`error: group/v1/Kind/ns/name field.path: message (file)`).

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value, json};

use crate::diagnostics::{FieldPath, Line};
use crate::resource_list::{self, FileRef};

pub use crate::diagnostics::Severity;

/// A problem a stage found, as it becomes a KRM result: each stage's error says how bad it is
/// and where, and [`KrmResult::of`] is the one conversion.
pub trait Diagnostic: fmt::Display {
    /// How bad it is: an error unless the problem says otherwise.
    fn severity(&self) -> Severity {
        Severity::Error
    }

    /// The message next to the resource and field it is about (its `Display` says it alone).
    fn message(&self) -> String {
        self.to_string()
    }

    /// The field path in the resource (the root: none).
    fn field_path(&self) -> FieldPath {
        FieldPath::root()
    }

    /// Extra labels (template, line, ...).
    fn tags(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

/// A problem a stage keeps as a warning (notes, warnings beside the errors).
#[derive(Debug, Clone)]
pub struct Warning<D>(pub D);

impl<D: fmt::Display> fmt::Display for Warning<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<D: Diagnostic> Diagnostic for Warning<D> {
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn message(&self) -> String {
        self.0.message()
    }
    fn field_path(&self) -> FieldPath {
        self.0.field_path()
    }
    fn tags(&self) -> Vec<(&'static str, String)> {
        self.0.tags()
    }
}

/// A config or schema problem: the path is the field, the message what is wrong there.
impl Diagnostic for crate::strict::Problem {
    fn message(&self) -> String {
        self.message.clone()
    }
    fn field_path(&self) -> FieldPath {
        self.path.clone()
    }
}

/// A catalog problem: about an inline catalog item, the message names the file in it.
impl Diagnostic for crate::catalog::CatalogError {
    fn severity(&self) -> Severity {
        self.severity
    }
    fn message(&self) -> String {
        match &self.file {
            Some(file) => format!("{file}: {}", self.message),
            None => self.message.clone(),
        }
    }
    fn field_path(&self) -> FieldPath {
        self.path.clone()
    }
    fn tags(&self) -> Vec<(&'static str, String)> {
        vec![("catalog", self.source.clone())]
    }
}

/// A template that failed to render.
impl Diagnostic for crate::template::RenderError {
    fn tags(&self) -> Vec<(&'static str, String)> {
        let mut tags = vec![("template", self.template.clone())];
        if let Some(line) = self.line {
            tags.push(("line", line.to_string()));
        }
        tags
    }
}

/// `resourceRef` of a result.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceRef {
    /// apiVersion of the resource.
    pub api_version: String,
    /// kind of the resource.
    pub kind: String,
    /// metadata.name.
    pub name: String,
    /// metadata.namespace, if any.
    pub namespace: Option<String>,
}

impl ResourceRef {
    /// The reference of an item (missing fields read as empty strings).
    pub fn of<T: resource_list::Fields + ?Sized>(item: &T) -> Self {
        Self {
            api_version: resource_list::str_at(item, &["apiVersion"]).to_owned(),
            kind: resource_list::str_at(item, &["kind"]).to_owned(),
            name: resource_list::str_at(item, &["metadata", "name"]).to_owned(),
            namespace: Some(resource_list::str_at(item, &["metadata", "namespace"]).to_owned())
                .filter(|s| !s.is_empty()),
        }
    }
}

impl fmt::Display for ResourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.api_version, self.kind)?;
        if let Some(ns) = &self.namespace {
            write!(f, "/{ns}")?;
        }
        write!(f, "/{}", self.name)
    }
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KrmResult {
    /// Severity.
    pub severity: Severity,
    /// What happened.
    pub message: String,
    /// The resource it is about.
    pub resource_ref: Option<ResourceRef>,
    /// Field path in that resource (dots and `[i]`).
    pub field: Option<String>,
    /// File of the resource (from its path/index annotations).
    pub file: Option<FileRef>,
    /// Extra labels: template, catalog, stage.
    pub tags: BTreeMap<String, String>,
}

impl KrmResult {
    /// A result of a severity.
    pub fn new(severity: Severity, message: impl Into<String>) -> Self {
        Self {
            severity,
            message: message.into(),
            resource_ref: None,
            field: None,
            file: None,
            tags: BTreeMap::new(),
        }
    }

    /// The one conversion from a stage's problem: its severity, message, field path and tags,
    /// about `item` when there is one.
    pub fn of<T: resource_list::Fields + ?Sized>(
        problem: &(impl Diagnostic + ?Sized),
        item: Option<&T>,
    ) -> Self {
        // A problem the apiserver reports at no field (`<nil>`) has none here either.
        let path = problem.field_path();
        let field = if path.is_nil() {
            String::new()
        } else {
            path.to_string()
        };
        let mut r = Self::new(problem.severity(), problem.message()).at(field);
        if let Some(item) = item {
            r = r.about(item);
        }
        for (key, value) in problem.tags() {
            r = r.tag(key, value);
        }
        r
    }

    /// An error.
    pub fn error(message: impl Into<String>) -> Self {
        Self::new(Severity::Error, message)
    }

    /// A warning.
    pub fn warning(message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, message)
    }

    /// About an item: sets `resourceRef` and `file` from it.
    #[must_use]
    pub fn about<T: resource_list::Fields + ?Sized>(mut self, item: &T) -> Self {
        self.resource_ref = Some(ResourceRef::of(item));
        self.file = resource_list::file_of(item);
        self
    }

    /// At a field path (empty means none).
    #[must_use]
    pub fn at(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.field = Some(path).filter(|p| !p.is_empty());
        self
    }

    /// With a tag.
    #[must_use]
    pub fn tag(mut self, key: &str, value: impl Into<String>) -> Self {
        self.tags.insert(key.to_owned(), value.into());
        self
    }

    /// Read a result another function wrote (kpt's legacy shapes included).
    pub fn from_value(v: &Value) -> Option<Self> {
        let message = v.get("message")?.as_str()?.to_owned();
        let severity = match v.get("severity").and_then(Value::as_str) {
            Some("warning") => Severity::Warning,
            Some("info") => Severity::Info,
            _ => Severity::Error,
        };
        let mut r = Self::new(severity, message);
        if let Some(rr) = v.get("resourceRef") {
            let s = |k: &str| rr.get(k).and_then(Value::as_str).map(str::to_owned);
            let meta = |k: &str| {
                rr.get("metadata")
                    .and_then(|m| m.get(k))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            r.resource_ref = Some(ResourceRef {
                api_version: s("apiVersion").unwrap_or_default(),
                kind: s("kind").unwrap_or_default(),
                name: s("name").or_else(|| meta("name")).unwrap_or_default(),
                namespace: s("namespace").or_else(|| meta("namespace")),
            });
        }
        r.field = v
            .get("field")
            .and_then(|f| f.get("path"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(f) = v.get("file")
            && let Some(path) = f.get("path").and_then(Value::as_str)
        {
            r.file = Some(FileRef {
                path: path.to_owned(),
                index: f.get("index").and_then(Value::as_u64).unwrap_or(0),
            });
        }
        if let Some(Value::Object(tags)) = v.get("tags") {
            for (k, t) in tags {
                if let Some(t) = t.as_str() {
                    r.tags.insert(k.clone(), t.to_owned());
                }
            }
        }
        Some(r)
    }

    fn sort_key(&self) -> impl Ord + '_ {
        (
            self.file.as_ref().map(|f| (f.path.clone(), f.index)),
            self.severity,
            self.resource_ref.clone(),
            self.field.clone(),
            self.message.clone(),
        )
    }

    /// The wire form.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("message".into(), json!(self.message));
        map.insert("severity".into(), json!(self.severity.as_str()));
        if let Some(r) = &self.resource_ref {
            let mut rr = Map::new();
            rr.insert("apiVersion".into(), json!(r.api_version));
            rr.insert("kind".into(), json!(r.kind));
            rr.insert("name".into(), json!(r.name));
            if let Some(ns) = &r.namespace {
                rr.insert("namespace".into(), json!(ns));
            }
            map.insert("resourceRef".into(), Value::Object(rr));
        }
        if let Some(path) = &self.field {
            map.insert("field".into(), json!({ "path": path }));
        }
        if let Some(file) = &self.file {
            map.insert(
                "file".into(),
                json!({"path": file.path, "index": file.index}),
            );
        }
        if !self.tags.is_empty() {
            map.insert("tags".into(), json!(self.tags));
        }
        Value::Object(map)
    }
}

impl KrmResult {
    /// The result without its severity: `v1/Kind/ns/name field: message (file#index)`.
    pub fn located(&self) -> Located<'_> {
        Located(self)
    }
}

/// A result said without its severity (see [`KrmResult::located`]), for a line that has its
/// own prefix.
#[derive(Debug, Clone, Copy)]
pub struct Located<'a>(&'a KrmResult);

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        match (&r.resource_ref, &r.field) {
            (Some(resource), Some(field)) => write!(f, "{resource} {field}: ")?,
            (Some(resource), None) => write!(f, "{resource}: ")?,
            (None, Some(field)) => write!(f, "{field}: ")?,
            (None, None) => {}
        }
        f.write_str(&r.message)?;
        if let Some(file) = &r.file {
            write!(f, " ({}", file.path)?;
            if file.index > 0 {
                write!(f, "#{}", file.index)?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

impl fmt::Display for KrmResult {
    /// One line as cargo and rustc write theirs (the stderr [`Line`]):
    /// `error: v1/Kind/ns/name field: message (file)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Line(self.severity, self.located()).fmt(f)
    }
}

/// All results of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Results(Vec<KrmResult>);

impl Results {
    /// Add one.
    pub fn push(&mut self, result: KrmResult) {
        self.0.push(result);
    }

    /// Whether any result is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|r| r.severity == Severity::Error)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Sorted, deduplicated results.
    pub fn sorted(&self) -> Vec<KrmResult> {
        let mut v = self.0.clone();
        v.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        v.dedup();
        v
    }

    /// Iterate in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = &KrmResult> {
        self.0.iter()
    }
}

impl Extend<KrmResult> for Results {
    fn extend<T: IntoIterator<Item = KrmResult>>(&mut self, iter: T) {
        self.0.extend(iter);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue16_one_line_form_reads_as_every_stderr_line() {
        let item = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns",
            "annotations": {"internal.config.kubernetes.io/path": "cm.yaml", "internal.config.kubernetes.io/index": "2"}}});
        let r = KrmResult::error("boom").about(&item).at("data.x");
        assert_eq!(
            r.to_string(),
            "error: v1/ConfigMap/ns/cm data.x: boom (cm.yaml#2)"
        );
        assert_eq!(
            r.to_value(),
            json!({"message": "boom", "severity": "error",
                "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "namespace": "ns"},
                "field": {"path": "data.x"}, "file": {"path": "cm.yaml", "index": 2}})
        );
    }

    #[test]
    fn results_sort_by_file_then_severity() {
        let mut rs = Results::default();
        rs.push(KrmResult::warning("w"));
        rs.push(KrmResult::error("b"));
        rs.push(KrmResult::error("a"));
        let sorted: Vec<String> = rs.sorted().into_iter().map(|r| r.message).collect();
        assert_eq!(sorted, ["a", "b", "w"]);
        assert!(rs.has_errors());
    }

    /// Issue 22: a problem the apiserver reports at no field (`<nil>`) is a result without
    /// `field` (kpt reads `field.path` as a path), its message unchanged.
    #[test]
    fn issue16_a_problem_at_no_field_is_a_result_without_one() {
        let item =
            json!({"apiVersion": "fn.acme.dev/v1", "kind": "Resize", "metadata": {"name": "r"}});
        let problem = crate::strict::Problem::new(
            FieldPath::parse("spec.size").nil(),
            "Invalid value: \"\": \"spec.size\" must validate at least one schema (anyOf)",
        );
        assert_eq!(
            problem.to_string(),
            "<nil>: Invalid value: \"\": \"spec.size\" must validate at least one schema (anyOf)"
        );
        let r = KrmResult::of(&problem, Some(&item));
        assert_eq!(r.field, None);
        assert_eq!(
            r.to_string(),
            "error: fn.acme.dev/v1/Resize/r: Invalid value: \"\": \"spec.size\" must validate at least one schema (anyOf)"
        );
        assert!(r.to_value().get("field").is_none());
    }
}

//! Catalogs: where service kinds come from.
//!
//! A catalog is loaded from one source into a [`Bundle`] (ServiceDefinitions, catalog metadata,
//! templates, static manifests), then the bundles of a run are merged into one [`Catalog`] in
//! resolution order: built-in, `spec.catalogs` in order, inline. Conflicts between bundles are
//! errors unless `catalogOverwrite` lets the later bundle replace the earlier entry.

mod bundle;
mod charts;
mod depends;
mod inline;
pub mod kep;
mod merge;
pub mod requires;
pub mod schema;

pub use bundle::{Bundle, DefinitionEntry, FunctionEntry, Origin, StaticFile};
pub use merge::{BundleInfo, Catalog, Kind, Service, TemplateRef};

use std::fmt;
use std::path::Path;

use serde_json::Value;

use crate::diagnostics::{FieldPath, Severity};
use crate::strict::{Problem, Reader};

/// Catalog documents that name a catalog root (kubara `Catalog`).
pub const KUBARA_CATALOG_KIND: &str = "Catalog";

/// A problem with a catalog, attributed to its source, file and (for inline catalogs) item.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CatalogError {
    /// The catalog source, e.g. `built-in catalog`, `catalog ./platform`, `inline catalog`.
    pub source: String,
    /// File inside the catalog root, when the problem is in one.
    pub file: Option<String>,
    /// Index of the input item, for inline catalogs.
    pub item: Option<usize>,
    /// Field or schema path inside the document; empty when not known.
    pub path: FieldPath,
    /// What is wrong.
    pub message: String,
    /// [`Severity::Error`] fails the run, [`Severity::Warning`] does not.
    pub severity: Severity,
    /// The catalog could not be fetched at all (missing path, network, not cached): an error
    /// only when some item may need that catalog (KEP-2906 "Dependencies").
    pub unavailable: bool,
}

impl CatalogError {
    /// An error of a catalog source, not tied to a file.
    pub fn new(source: &str, message: impl Into<String>) -> Self {
        Self {
            source: source.to_owned(),
            file: None,
            item: None,
            path: FieldPath::root(),
            message: message.into(),
            severity: Severity::Error,
            unavailable: false,
        }
    }

    /// Attach the file inside the catalog.
    #[must_use]
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// Attach a field path.
    #[must_use]
    pub fn at(mut self, path: impl Into<FieldPath>) -> Self {
        self.path = path.into();
        self
    }

    /// Attach the inline item it came from.
    #[must_use]
    pub fn for_item(mut self, item: Option<usize>) -> Self {
        self.item = item;
        self
    }

    /// Mark it as a source that could not be fetched.
    #[must_use]
    pub fn unavailable(mut self) -> Self {
        self.unavailable = true;
        self
    }

    /// Make it a warning.
    #[must_use]
    pub fn warning(mut self) -> Self {
        self.severity = Severity::Warning;
        self
    }

    /// Whether it is only a warning (does not fail the run).
    pub fn is_warning(&self) -> bool {
        self.severity == Severity::Warning
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if let Some(file) = &self.file {
            write!(f, ": {file}")?;
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Whether a template or manifest file name is a partial (only included, never rendered alone).
pub fn is_partial(name: &str) -> bool {
    name.rsplit('/')
        .next()
        .is_some_and(|base| base.starts_with('_'))
}

/// The name of a file below `root` as catalogs and packages name their files: the path
/// relative to `root` with `/` separators on every platform (the path itself when it is not
/// below `root`).
pub fn relative_name(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Read what every catalog document (KEP-2906 and kubara `Catalog`) has around its `spec`:
/// no top-level field but `apiVersion`, `kind`, `metadata` and `spec`, `apiVersion` equal to
/// `api_version`, and `metadata` of `name`, `labels` and `annotations`. Returns the name and
/// the `spec` (null when absent), whose fields are the caller's.
fn read_frame(
    doc: &Value,
    api_version: &str,
    problems: &mut Vec<Problem>,
) -> (Option<String>, Value) {
    let mut r = Reader::new(doc, "", problems);
    r.deny_unknown(&["apiVersion", "kind", "metadata", "spec"]);
    if r.string("apiVersion").as_deref() != Some(api_version) {
        r.problem(
            "apiVersion",
            format!("apiVersion must be \"{api_version}\""),
        );
    }
    let metadata = doc.get("metadata").cloned().unwrap_or(Value::Null);
    let spec = doc.get("spec").cloned().unwrap_or(Value::Null);
    let mut m = Reader::new(&metadata, "metadata", problems);
    m.deny_unknown(&["name", "labels", "annotations"]);
    let name = m.string("name");
    m.string_map("labels");
    m.string_map("annotations");
    (name, spec)
}

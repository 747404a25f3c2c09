//! One catalog as loaded from one source: a directory, a file, the embedded built-in tree, or
//! the inline `Catalog`/`ServiceDefinition` items of a ResourceList.
//!
//! Layout (kubara catalogs are valid bundles as they are):
//! `catalog.yaml|Catalog.yaml`, `services/**/*.yaml`, `templates/**/*.j2` (rendered for every
//! enabled service), `charts/<chartPath>/**` (`*.j2` rendered for that service, `*.yaml` static
//! manifests). A directory without `services/` is itself a services directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::charts::{ChartUser, chart_path_typos};
use super::{CatalogError, is_partial};
use crate::diagnostics::FieldPath;
use crate::service::definition::{self, KUBARA_API_VERSION, ServiceDefinition};
use crate::strict::{Problem, Reader};
use crate::yaml;

/// Where a bundle came from; decides trust and how it is named in messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The catalog embedded in the binary.
    Builtin,
    /// A local file or directory, as the user wrote it.
    Path(String),
    /// `Catalog`/`ServiceDefinition` items of the input.
    Inline,
    /// An HTTPS (or loopback HTTP) URL.
    Url(String),
    /// An OCI artifact reference (without `oci://`).
    Oci(String),
    /// A Git repository at a ref; `commit` is what the ref resolved to, once fetched.
    Git {
        /// The source as configured (its URL printed without credentials).
        source: crate::catalog_ref::GitRef,
        /// The commit the tree was read from.
        commit: Option<String>,
    },
}

/// Where a catalog reference's bundle comes from.
impl From<&crate::catalog_ref::CatalogRef> for Origin {
    fn from(source: &crate::catalog_ref::CatalogRef) -> Self {
        use crate::catalog_ref::CatalogRef;
        match source {
            CatalogRef::Url { url, .. } => Self::Url(url.clone()),
            CatalogRef::Oci(r) => Self::Oci(r.clone()),
            CatalogRef::Path(p) => Self::Path(p.clone()),
            CatalogRef::Git(g) => Self::Git {
                source: g.clone(),
                commit: None,
            },
        }
    }
}

impl Origin {
    /// How messages name this source.
    pub fn label(&self) -> String {
        match self {
            Self::Builtin => "built-in catalog".to_owned(),
            Self::Path(p) => format!("catalog {p}"),
            Self::Inline => "inline catalog".to_owned(),
            Self::Url(u) => format!("catalog {u}"),
            Self::Oci(r) => format!("catalog oci://{r}"),
            Self::Git { source, .. } => {
                let url = source.display_url();
                let mut label = if url.starts_with("git://") {
                    format!("catalog {url}")
                } else {
                    format!("catalog git {url}")
                };
                if let Some(p) = &source.path {
                    label.push_str("//");
                    label.push_str(p);
                }
                label.push('@');
                label.push_str(&source.reference);
                label
            }
        }
    }
}

/// A ServiceDefinition with where it was read from.
#[derive(Debug, Clone)]
pub struct DefinitionEntry {
    /// The checked definition.
    pub definition: ServiceDefinition,
    /// File inside the catalog (or the item's file for inline catalogs).
    pub file: Option<String>,
    /// Input item index for inline definitions.
    pub item: Option<usize>,
}

/// A KEP-2906 function entry with where it was read from.
#[derive(Debug, Clone)]
pub struct FunctionEntry {
    /// The entry.
    pub function: super::kep::Function,
    /// File inside the catalog.
    pub file: Option<String>,
    /// Input item index for inline catalogs.
    pub item: Option<usize>,
}

/// A static manifest file of a chart: its documents.
#[derive(Debug, Clone)]
pub struct StaticFile {
    /// The KRM objects in the file, in order.
    pub objects: Vec<Value>,
}

/// One loaded catalog.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// Where it came from.
    pub origin: Origin,
    /// `metadata.name` of its kubara `Catalog` document, if any.
    pub name: Option<String>,
    /// `spec.version` of its kubara `Catalog` document, if any.
    pub version: Option<String>,
    /// Whose standard pattern renders its services when it has no `templates/` of its own:
    /// `spec.standardPattern` of its kubara `Catalog` document, or the function config's entry.
    pub standard_pattern: Option<String>,
    /// sha256 of the catalog content (paths and bytes), hex.
    pub digest: String,
    /// ServiceDefinitions in file order.
    pub definitions: Vec<DefinitionEntry>,
    /// Templates by name (path relative to the catalog root), partials included.
    pub templates: BTreeMap<String, String>,
    /// Static manifests by name.
    pub statics: BTreeMap<String, StaticFile>,
    /// KEP-2906 function entries, in document order.
    pub functions: Vec<FunctionEntry>,
    /// For remote catalogs, what pins the fetched bytes: `sha256:` of a URL's body, or the OCI
    /// manifest digest.
    pub pin: Option<crate::catalog_ref::Digest>,
    /// Problems found while loading (errors and warnings). A bundle with errors still holds
    /// everything that loaded, so one run reports every problem.
    pub problems: Vec<CatalogError>,
}

impl Bundle {
    /// How generated objects name this catalog: `name@version`, else the content digest.
    /// A Git catalog is named by the commit it was read from, `git:<url>@<commit>[//path]`.
    pub fn reference(&self) -> String {
        if let Origin::Git {
            source,
            commit: Some(commit),
        } = &self.origin
        {
            return source.at_commit(commit);
        }
        match (&self.name, &self.version) {
            (Some(n), Some(v)) => format!("{n}@{v}"),
            (Some(n), None) => format!("{n}@sha256:{}", self.digest),
            _ => format!("sha256:{}", self.digest),
        }
    }

    /// Load a local path (directory, or a single YAML file). `path` is resolved by the caller;
    /// `label` is what the user wrote.
    pub fn from_path(label: &str, path: &Path) -> Bundle {
        let origin = Origin::Path(label.to_owned());
        let source = origin.label();
        let meta = match fs_err::metadata(path) {
            Ok(m) => m,
            Err(e) => {
                let message = if e.kind() == std::io::ErrorKind::NotFound {
                    format!("catalog directory \"{label}\" does not exist")
                } else {
                    e.to_string()
                };
                return Loader::new(origin).fail(CatalogError::new(&source, message));
            }
        };
        if meta.is_file() {
            let name = path
                .file_name()
                .map_or_else(|| label.to_owned(), |n| n.to_string_lossy().into_owned());
            return match read_catalog_file(path) {
                Ok(bytes) => {
                    let mut bundle = Self::from_single_file(origin, &name, &bytes);
                    // The source label already names the file ("catalog cat.yaml"): saying it
                    // again reads "catalog cat.yaml: cat.yaml: …".
                    for e in &mut bundle.problems {
                        if e.file.as_deref() == Some(name.as_str()) {
                            e.file = None;
                        }
                    }
                    bundle
                }
                Err(e) => Loader::new(origin).fail(CatalogError::new(&source, e)),
            };
        }
        let (files, errors) = read_tree(&source, path);
        let borrowed: Vec<(String, &[u8])> = files
            .iter()
            .map(|(n, b)| (n.clone(), b.as_slice()))
            .collect();
        let mut bundle = Self::from_files(origin, &borrowed);
        bundle.problems.extend(errors);
        bundle
    }

    /// Load a catalog that is one YAML file (KEP and/or kubara documents).
    pub fn from_single_file(origin: Origin, name: &str, bytes: &[u8]) -> Bundle {
        let mut loader = Loader::new(origin);
        loader.digest_file(name, bytes);
        loader.read_documents(name, bytes);
        loader.finish()
    }

    /// An empty bundle that carries one error (a source that could not be read at all).
    pub fn failed(origin: Origin, error: CatalogError) -> Bundle {
        Loader::new(origin).fail(error)
    }

    /// Load a catalog from its files (relative slash paths and contents, any order).
    pub fn from_files(origin: Origin, files: &[(String, &[u8])]) -> Bundle {
        let mut files: Vec<&(String, &[u8])> = files.iter().collect();
        files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut loader = Loader::new(origin);
        // A catalog root has services/, templates/, charts/ or a catalog file; anything else is
        // itself a services directory (kubara ADR).
        let bundle_layout = files.iter().any(|(p, _)| {
            let lower = p.to_ascii_lowercase();
            ["services/", "templates/", "charts/"]
                .iter()
                .any(|d| p.starts_with(d))
                || lower == "catalog.yaml"
                || lower == "catalog.yml"
        });
        if bundle_layout {
            loader.misspelled_folders(&files);
        }
        // One rule for what belongs to a catalog, so the same tree has the same digest however
        // it is named (`builtin`, `catalogs/builtin`): the files it reads, nothing else.
        for (name, bytes) in &files {
            if belongs_to_catalog(name, bundle_layout) {
                loader.digest_file(name, bytes);
            }
        }
        for (name, bytes) in files {
            let lower = name.to_ascii_lowercase();
            let is_yaml = yaml::is_yaml_file(name);
            if !bundle_layout {
                // kubara ADR: a path without `services/` is itself the services directory.
                if is_yaml {
                    loader.read_documents(name, bytes);
                }
                continue;
            }
            let catalog_file =
                !name.contains('/') && matches!(lower.as_str(), "catalog.yaml" | "catalog.yml");
            if catalog_file || (name.starts_with("services/") && is_yaml) {
                loader.read_documents(name, bytes);
            } else if name.starts_with("templates/") && yaml::has_extension(name, &["j2"]) {
                loader.add_template(name, bytes, None);
            } else if name.starts_with("charts/") {
                if yaml::has_extension(name, &["j2"]) {
                    loader.add_template(name, bytes, None);
                } else if is_yaml {
                    loader.add_static(name, bytes);
                }
            }
        }
        loader.chart_path_typos();
        loader.finish()
    }

    /// Build the inline catalog from input items (index, item) that are kubara documents.
    pub fn from_items(items: &[(usize, &Value)]) -> Bundle {
        let mut loader = Loader::new(Origin::Inline);
        let digested = super::inline::documents_to_digest(items);
        for (id, text) in &digested {
            loader.digest_file(id, text);
        }
        for (index, item) in items {
            loader.read_document(None, Some(*index), item);
        }
        loader.finish()
    }
}

struct Loader {
    origin: Origin,
    source: String,
    hasher: Sha256,
    name: Option<String>,
    version: Option<String>,
    standard_pattern: Option<String>,
    catalog_doc_seen: Option<String>,
    definitions: Vec<DefinitionEntry>,
    templates: BTreeMap<String, String>,
    statics: BTreeMap<String, StaticFile>,
    functions: Vec<FunctionEntry>,
    kep_name: Option<String>,
    errors: Vec<CatalogError>,
}

impl Loader {
    fn new(origin: Origin) -> Self {
        let source = origin.label();
        Self {
            origin,
            source,
            hasher: Sha256::new(),
            name: None,
            version: None,
            standard_pattern: None,
            catalog_doc_seen: None,
            definitions: Vec::new(),
            templates: BTreeMap::new(),
            statics: BTreeMap::new(),
            functions: Vec::new(),
            kep_name: None,
            errors: Vec::new(),
        }
    }

    fn error(
        &mut self,
        file: Option<&str>,
        item: Option<usize>,
        path: impl Into<FieldPath>,
        message: impl Into<String>,
    ) {
        let mut e = CatalogError::new(&self.source, message)
            .at(path)
            .for_item(item);
        e.file = file.map(str::to_owned);
        self.errors.push(e);
    }

    /// [`Self::error`] for each problem a document reader found.
    fn problems(&mut self, file: Option<&str>, item: Option<usize>, problems: Vec<Problem>) {
        for Problem { path, message } in problems {
            self.error(file, item, path, message);
        }
    }

    fn digest_file(&mut self, name: &str, bytes: &[u8]) {
        self.hasher.update(name.as_bytes());
        self.hasher.update([0]);
        self.hasher.update((bytes.len() as u64).to_be_bytes());
        self.hasher.update(bytes);
    }

    fn text<'b>(&mut self, name: &str, bytes: &'b [u8]) -> Option<&'b str> {
        match std::str::from_utf8(bytes) {
            Ok(t) => Some(t),
            Err(e) => {
                self.error(Some(name), None, "", format!("not UTF-8 text: {e}"));
                None
            }
        }
    }

    fn read_documents(&mut self, name: &str, bytes: &[u8]) {
        let Some(text) = self.text(name, bytes) else {
            return;
        };
        match yaml::parse_stream(text) {
            Ok(docs) => {
                let several = docs.len() > 1;
                for (i, doc) in docs.iter().enumerate() {
                    if doc.value.is_null() {
                        continue;
                    }
                    let file = if several {
                        format!("{name} (document {}, line {})", i + 1, doc.line)
                    } else {
                        name.to_owned()
                    };
                    self.read_document(Some(&file), None, &doc.value);
                }
            }
            Err(e) => self.error(Some(name), None, "", format!("invalid YAML: {e}")),
        }
    }

    fn read_document(&mut self, file: Option<&str>, item: Option<usize>, doc: &Value) {
        let api_version = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
        let group = api_version.split('/').next().unwrap_or("");
        match (group, kind) {
            (_, "ServiceDefinition") if api_version.starts_with("kubara.io/") || api_version.trim().is_empty() => {
                self.read_definition(file, item, doc);
            }
            ("kubara.io", "Catalog") => self.read_kubara_catalog(file, item, doc),
            ("config.kubernetes.io", "Catalog" | "KRMFunctionCatalog") => self.read_kep_catalog(file, item, doc),
            ("config.kubernetes.io", super::kep::DEFINITION_KIND) => self.read_kep_definition(file, item, doc),
            _ => self.error(
                file,
                item,
                "",
                format!(
                    "unexpected document \"{api_version}/{kind}\" in a catalog (expected kubara.io/v1alpha1 \
                     ServiceDefinition or Catalog, or config.kubernetes.io/v1alpha1 KRMFunctionCatalog, Catalog \
                     or KRMFunctionDefinition)"
                ),
            ),
        }
    }

    fn read_definition(&mut self, file: Option<&str>, item: Option<usize>, doc: &Value) {
        match definition::parse(doc) {
            Ok(def) => {
                for w in &def.warnings {
                    let mut e = CatalogError::new(&self.source, w.message.clone())
                        .at(w.path.clone())
                        .for_item(item)
                        .warning();
                    e.file = file.map(str::to_owned);
                    self.errors.push(e);
                }
                let chart = def.chart_path.clone();
                for (name, text) in &def.templates {
                    let full = format!("charts/{chart}/{name}");
                    self.add_template(&full, text.as_bytes(), item);
                }
                if let Some(prev) = self.definitions.iter().find(|d| d.definition.id == def.id) {
                    let first = prev
                        .file
                        .as_ref()
                        .map_or_else(|| "an earlier item".to_owned(), |f| format!("\"{f}\""));
                    let message = format!(
                        "duplicate service definition \"{}\" (first defined in {first})",
                        def.id
                    );
                    self.error(file, item, "metadata.name", message);
                    return;
                }
                self.definitions.push(DefinitionEntry {
                    definition: def,
                    file: file.map(str::to_owned),
                    item,
                });
            }
            Err(problems) => self.problems(file, item, problems),
        }
    }

    fn read_kep_catalog(&mut self, file: Option<&str>, item: Option<usize>, doc: &Value) {
        let mut refused = Vec::new();
        super::requires::check(doc.get("spec").unwrap_or(&Value::Null), &mut refused);
        if !refused.is_empty() {
            return self.problems(file, item, refused);
        }
        match super::kep::parse(doc) {
            Ok((name, functions)) => {
                if self.kep_name.is_none() {
                    self.kep_name = name;
                }
                self.functions
                    .extend(functions.into_iter().map(|function| FunctionEntry {
                        function,
                        file: file.map(str::to_owned),
                        item,
                    }));
            }
            Err(problems) => self.problems(file, item, problems),
        }
    }

    /// A `KRMFunctionDefinition`: one more function of this catalog, beside those of its
    /// catalog documents (its name does not name the catalog: a directory holds many).
    fn read_kep_definition(&mut self, file: Option<&str>, item: Option<usize>, doc: &Value) {
        match super::kep::parse_definition(doc) {
            Ok((_, function)) => self.functions.push(FunctionEntry {
                function,
                file: file.map(str::to_owned),
                item,
            }),
            Err(problems) => self.problems(file, item, problems),
        }
    }

    fn read_kubara_catalog(&mut self, file: Option<&str>, item: Option<usize>, doc: &Value) {
        let mut problems = Vec::new();
        let (name, spec) = super::read_frame(doc, KUBARA_API_VERSION, &mut problems);
        let mut s = Reader::new(&spec, "spec", &mut problems);
        // `standardPattern` is our extension (kubara catalogs bring no templates/).
        s.deny_unknown(&["version", "standardPattern", "requires"]);
        super::requires::check(&spec, s.problems());
        let version = s.string("version");
        let standard_pattern = s.string("standardPattern");
        match &name {
            Some(n) if crate::gvk::is_dns_subdomain(n) => {}
            Some(n) => problems.push(Problem::new(
                "metadata.name",
                format!("catalog name \"{n}\" must be a DNS subdomain"),
            )),
            None => problems.push(Problem::new("metadata.name", "missing metadata.name")),
        }
        match &version {
            Some(v) if is_strict_semver(v) => {}
            Some(v) => problems.push(Problem::new(
                "spec.version",
                format!("spec.version \"{v}\" must be a strict x.y.z version"),
            )),
            None => problems.push(Problem::new("spec.version", "missing spec.version")),
        }
        let here = file.map_or_else(|| "an item".to_owned(), str::to_owned);
        if let Some(prev) = &self.catalog_doc_seen {
            problems.push(Problem::new(
                "",
                format!("a second Catalog document; the catalog is already named in {prev}"),
            ));
        }
        self.catalog_doc_seen = Some(here);
        if standard_pattern
            .as_deref()
            .is_some_and(|p| p.trim().is_empty())
        {
            problems.push(Problem::new(
                "spec.standardPattern",
                "must name a catalog (\"builtin\" or a loaded catalog's name), not be empty",
            ));
        }
        if problems.is_empty() {
            self.name = name;
            self.version = version;
            self.standard_pattern = standard_pattern;
        }
        self.problems(file, item, problems);
    }

    fn add_template(&mut self, name: &str, bytes: &[u8], item: Option<usize>) {
        let Some(text) = self.text(name, bytes) else {
            return;
        };
        if let Err(e) = crate::template::check_syntax(name, text) {
            self.error(Some(name), item, "", e.to_string());
            return;
        }
        if self
            .templates
            .insert(name.to_owned(), text.to_owned())
            .is_some()
        {
            self.error(
                Some(name),
                item,
                "",
                format!("template \"{name}\" is defined twice"),
            );
        }
    }

    fn add_static(&mut self, name: &str, bytes: &[u8]) {
        let Some(text) = self.text(name, bytes) else {
            return;
        };
        let docs = match yaml::parse_stream(text) {
            Ok(docs) => docs,
            Err(e) => {
                self.error(Some(name), None, "", format!("invalid YAML: {e}"));
                return;
            }
        };
        let mut objects = Vec::new();
        for doc in docs {
            if doc.value.is_null() {
                continue;
            }
            match crate::template::check_krm_object(&doc.value) {
                Ok(()) => objects.push(doc.value),
                Err(e) => self.error(
                    Some(name),
                    None,
                    "",
                    format!("document at line {}: {e}", doc.line),
                ),
            }
        }
        if !is_partial(name) {
            self.statics.insert(name.to_owned(), StaticFile { objects });
        }
    }

    fn fail(mut self, error: CatalogError) -> Bundle {
        self.errors.push(error);
        self.finish()
    }

    /// A top-level folder of a catalog that is a near miss of `services/`, `templates/` or
    /// `charts/` is not read, and its services would be missing without a word ("ok: 0
    /// services", issue 22): an error with a "did you mean".
    fn misspelled_folders(&mut self, files: &[&(String, &[u8])]) {
        const FOLDERS: [&str; 3] = ["services", "templates", "charts"];
        let mut seen = std::collections::BTreeSet::new();
        for (name, _) in files {
            let Some((folder, _)) = name.split_once('/') else {
                continue;
            };
            if FOLDERS.contains(&folder) || !seen.insert(folder.to_owned()) {
                continue;
            }
            if let Some(meant) = crate::suggest::closest(folder, FOLDERS) {
                self.error(
                    None,
                    None,
                    FieldPath::root(),
                    format!(
                        "folder {folder}/ is not read (did you mean \"{meant}/\"?): a catalog reads services/, templates/ and charts/"
                    ),
                );
            }
        }
    }

    fn chart_path_typos(&mut self) {
        let users: Vec<ChartUser<'_>> = self
            .definitions
            .iter()
            .map(|d| ChartUser {
                id: &d.definition.id,
                chart_path: &d.definition.chart_path,
                file: d.file.as_deref(),
                item: d.item,
            })
            .collect();
        let files = self.templates.keys().chain(self.statics.keys());
        let errors = chart_path_typos(&self.source, &users, files.map(String::as_str));
        self.errors.extend(errors);
    }

    fn finish(self) -> Bundle {
        let digest = crate::verify::hex(&self.hasher.finalize());
        Bundle {
            origin: self.origin,
            // A kubara Catalog names and versions the root; a KEP catalog's name is the
            // fallback.
            name: self.name.or(self.kep_name),
            version: self.version,
            standard_pattern: self.standard_pattern,
            digest,
            definitions: self.definitions,
            templates: self.templates,
            statics: self.statics,
            functions: self.functions,
            pin: None,
            problems: self.errors,
        }
    }
}

/// Whether a file (relative slash path) is part of a catalog: what [`Bundle::from_files`] reads.
fn belongs_to_catalog(name: &str, bundle_layout: bool) -> bool {
    let is_yaml = yaml::is_yaml_file(name);
    if !bundle_layout {
        return is_yaml;
    }
    let lower = name.to_ascii_lowercase();
    (!name.contains('/') && matches!(lower.as_str(), "catalog.yaml" | "catalog.yml"))
        || (name.starts_with("services/") && is_yaml)
        || (name.starts_with("templates/") && yaml::has_extension(name, &["j2"]))
        || (name.starts_with("charts/") && (is_yaml || yaml::has_extension(name, &["j2"])))
}

fn is_strict_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
        })
}

/// Read every regular file under `root` (following symlinks that stay inside it), as relative
/// slash paths. A symlink that leads outside the root is an error, not a silent skip.
/// Read one catalog file, refusing it by its size before reading (and bounding the read, in
/// case it grows meanwhile).
/// Errors leave naming the file to the caller (the label or `in_file` does).
fn read_catalog_file(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let limit = crate::env::max_catalog_file_bytes();
    let too_big = |size: u64| {
        format!(
            "{size} bytes is more than the limit of {limit} bytes per catalog file; raise {} if this is expected",
            crate::env::MAX_CATALOG_FILE_BYTES
        )
    };
    let file = fs_err::File::open(path).map_err(|e| e.to_string())?;
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    if size > limit {
        return Err(too_big(size));
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > limit {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

fn read_tree(source: &str, root: &Path) -> (Vec<(String, Vec<u8>)>, Vec<CatalogError>) {
    let canonical_root = match fs_err::canonicalize(root) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), vec![CatalogError::new(source, e.to_string())]),
    };
    let services = root.join("services");
    if services.exists() && !services.is_dir() {
        return (
            Vec::new(),
            vec![CatalogError::new(
                source,
                format!(
                    "catalog services path \"{}\" is not a directory",
                    services.display()
                ),
            )],
        );
    }
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut visited = std::collections::HashSet::new();
    let mut stack: Vec<(PathBuf, String)> = vec![(canonical_root.clone(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        if !visited.insert(dir.clone()) {
            continue;
        }
        let entries = match fs_err::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                errors.push(CatalogError::new(source, e.to_string()));
                continue;
            }
        };
        let mut names: Vec<(String, PathBuf)> = Vec::new();
        for entry in entries {
            match entry {
                Ok(entry) => names.push((
                    entry.file_name().to_string_lossy().into_owned(),
                    entry.path(),
                )),
                Err(e) => errors.push(CatalogError::new(source, e.to_string())),
            }
        }
        names.sort();
        for (name, path) in names {
            let rel_path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let target = match fs_err::canonicalize(&path) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(CatalogError::new(source, e.to_string()).in_file(rel_path));
                    continue;
                }
            };
            if !target.starts_with(&canonical_root) {
                errors.push(
                    CatalogError::new(
                        source,
                        format!("\"{rel_path}\" is a symlink that escapes the catalog root"),
                    )
                    .in_file(rel_path),
                );
                continue;
            }
            if target.is_dir() {
                stack.push((target, rel_path));
            } else if target.is_file() {
                // Only YAML and templates are ever used: skip the rest by name, unread, so a
                // huge unrelated file costs nothing (issue 9, F10).
                if !(yaml::is_yaml_file(&name) || yaml::has_extension(&name, &["j2"])) {
                    continue;
                }
                match read_catalog_file(&target) {
                    Ok(bytes) => out.push((rel_path, bytes)),
                    Err(e) => errors.push(CatalogError::new(source, e).in_file(rel_path)),
                }
            }
        }
    }
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_semver() {
        assert!(is_strict_semver("2.2.0"));
        assert!(!is_strict_semver("2.2"));
        assert!(!is_strict_semver("v2.2.0"));
        assert!(!is_strict_semver("2.02.0"));
    }

    /// Issue 8 acceptance 3b: the label of a one-file catalog names the file already.
    #[test]
    fn issue8_a3b_a_single_file_catalog_is_named_once() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("cat.yaml");
        fs_err::write(
            &file,
            "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionCatalog\nmetadata:\n  name: c\nspec:\n  krmFunctions:\n  - group: example.com\n    names: {kind: G}\n    versoins: []\n",
        )?;
        let bundle = Bundle::from_path("cat.yaml", &file);
        let text: Vec<String> = bundle.problems.iter().map(ToString::to_string).collect();
        assert!(
            text.iter().any(|t| t.starts_with("catalog cat.yaml: spec.krmFunctions[0].versoins: unknown field \"spec.krmFunctions[0].versoins\"")),
            "{text:?}"
        );
        assert!(
            text.iter().all(|t| !t.contains("cat.yaml: cat.yaml")),
            "{text:?}"
        );
        Ok(())
    }
}

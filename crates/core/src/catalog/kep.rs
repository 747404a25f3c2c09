//! KEP-2906 `Catalog` / `KRMFunctionCatalog` documents (`config.kubernetes.io/v1alpha1`), and
//! `KRMFunctionDefinition` documents (one function, its `spec` one `krmFunctions` entry):
//! group/kind/versions mapped to a runtime, read strictly except where the KEP contradicts
//! itself (`platform` vs `platforms`, `requireFilesystem`, `kind` written on the entry instead of
//! `names.kind`, `runtime` written beside `versions` instead of in each version).
//!
//! Source: kubernetes/enhancements keps/sig-cli/2906-kustomize-function-catalog/README.md.
//! Most of its examples (Summary, Stories 1, 5, 6, 7) put `runtime` at the entry level; its
//! "example representation" writes `kind` on the entry. `KRMFunctionDefinition` is defined by
//! the KEP's "Function Metadata Schema"; its examples are in KEP-2985 (public KRM functions
//! registry, "Function Metadata"), which adds `configMap` to a version.

use serde_json::Value;

use crate::diagnostics::FieldPath;
use crate::gvk::{self, Gvk};
use crate::schema::ConfigSchema;
use crate::strict::{Problem, Reader};

/// The API version of KEP catalog documents.
pub const API_VERSION: &str = "config.kubernetes.io/v1alpha1";

/// How a kind is run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runtime {
    /// A container image.
    Container {
        /// Image reference as written.
        image: String,
        /// Declared digest (hex or `sha256:hex`).
        sha256: Option<String>,
        /// Needs the network.
        require_network: bool,
        /// Needs a storage mount.
        require_storage_mount: bool,
        /// A PEM public key (`publicKey`): the image must carry a cosign signature of its
        /// digest by it (SPEC §7.5).
        public_key: Option<String>,
        /// `keyless`: the image must carry a keyless cosign signature by this identity and
        /// issuer, under the trust root and Rekor key given as PEM text (SPEC §7.5).
        keyless: Option<crate::config::KeylessSource>,
    },
    /// A binary per platform.
    Exec {
        /// One per OS/arch.
        platforms: Vec<Platform>,
    },
    /// A container image and binaries of the same function: run mode takes the binary when
    /// exec is allowed and one fits this machine, otherwise (and always in pin mode) the image.
    Choice {
        /// The [`Runtime::Container`].
        container: Box<Runtime>,
        /// The [`Runtime::Exec`].
        exec: Box<Runtime>,
    },
    /// A Starlark program run in-process with kpt's `ctx.resource_list` contract: the KEP's
    /// URL string, or `{path | url, sha256}`.
    Starlark {
        /// Where the program is, as written: a URL, or (`local`) a path relative to the
        /// catalog's root.
        source: String,
        /// `path`: a file of the catalog, trusted as the catalog is.
        local: bool,
        /// Declared sha256 of the script (required for a URL).
        sha256: Option<String>,
    },
    /// Our extension: a ServiceDefinition of the same catalog.
    Service {
        /// `metadata.name` of the ServiceDefinition.
        name: String,
    },
}

impl Runtime {
    /// The runtimes this one consists of: both sides of a [`Runtime::Choice`], else itself.
    pub fn parts(&self) -> Vec<&Runtime> {
        match self {
            Self::Choice { container, exec } => vec![container, exec],
            other => vec![other],
        }
    }
}

/// One platform of an exec runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    /// Name of the binary (inside an archive, or the download itself).
    pub bin: String,
    /// linux | darwin | windows.
    pub os: String,
    /// amd64 | arm64.
    pub arch: String,
    /// Where to download it: `https://`, `file://`, `oci://` or `git::` ([`crate::catalog_ref::RuntimeSource`]).
    pub uri: String,
    /// Declared sha256 of the download.
    pub sha256: Option<String>,
}

/// One version of a function kind.
#[derive(Debug, Clone)]
pub struct Version {
    /// Version name (`v1alpha1`).
    pub name: String,
    /// Schema of the whole object, when given.
    pub schema: Option<ConfigSchema>,
    /// How it runs.
    pub runtime: Runtime,
    /// `idempotent`.
    pub idempotent: Option<bool>,
    /// `usage`.
    pub usage: Option<String>,
    /// `license`.
    pub license: Option<String>,
    /// `examples`: links to READMEs of examples.
    pub examples: Vec<String>,
    /// `maintainers` of this version (when they differ from the entry's).
    pub maintainers: Vec<String>,
    /// `deprecated: true` (as a CRD version): the warning every use of this version gets,
    /// its `deprecationWarning` or none for the apiserver's default text (issue 23).
    pub deprecation: Option<Option<String>>,
}

/// One `spec.krmFunctions[]` entry.
#[derive(Debug, Clone)]
pub struct Function {
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// `description`.
    pub description: Option<String>,
    /// `publisher`.
    pub publisher: Option<String>,
    /// Versions, each with its own schema and runtime.
    pub versions: Vec<Version>,
    /// `home`: the function's home page.
    pub home: Option<String>,
    /// `maintainers`.
    pub maintainers: Vec<String>,
    /// `tags` (keywords: mutator, validator…).
    pub tags: Vec<String>,
    /// Field path of this entry in its document (`spec.krmFunctions[2]`).
    pub path: FieldPath,
}

impl Function {
    /// The group/version/kind of one version.
    pub fn gvk(&self, version: &Version) -> Gvk {
        Gvk::new(self.group.clone(), version.name.clone(), self.kind.clone())
    }
}

/// The kind of a document that defines one function (KEP-2906 "Function Metadata Schema").
pub const DEFINITION_KIND: &str = "KRMFunctionDefinition";

/// Whether a document is a `KRMFunctionDefinition`.
pub fn is_function_definition(doc: &Value) -> bool {
    let api = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
    api.starts_with("config.kubernetes.io/") && kind == DEFINITION_KIND
}

/// Read a `KRMFunctionDefinition` document: its name and its one function (the `spec` is one
/// `spec.krmFunctions[]` entry of a catalog, read the same way). Returns every problem.
pub fn parse_definition(doc: &Value) -> Result<(Option<String>, Function), Vec<Problem>> {
    let mut problems = Vec::new();
    let (name, spec) = super::read_frame(doc, API_VERSION, &mut problems);
    let function = match &spec {
        Value::Object(_) => parse_function(&spec, &FieldPath::parse("spec"), &mut problems),
        Value::Null => {
            problems.push(Problem::new(
                "spec",
                "missing spec (one function: group, names.kind, versions)",
            ));
            None
        }
        other => {
            problems.push(Problem::new(
                "spec",
                format!("must be an object, not {}", crate::strict::type_name(other)),
            ));
            None
        }
    };
    match function {
        Some(f) if problems.is_empty() => Ok((name, f)),
        _ => Err(problems),
    }
}

/// Whether a document is a KEP catalog.
pub fn is_kep_catalog(doc: &Value) -> bool {
    let api = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
    api.starts_with("config.kubernetes.io/") && (kind == "Catalog" || kind == "KRMFunctionCatalog")
}

/// Read a KEP catalog document: its name and its functions. Returns every problem.
pub fn parse(doc: &Value) -> Result<(Option<String>, Vec<Function>), Vec<Problem>> {
    let mut problems = Vec::new();
    let (name, spec) = super::read_frame(doc, API_VERSION, &mut problems);
    let mut s = Reader::new(&spec, "spec", &mut problems);
    // `requires` is read by the bundle loader (issue 23, `spec.requires.krmCatalog`).
    s.deny_unknown(&["krmFunctions", "requires"]);
    let mut functions = Vec::new();
    match spec.get("krmFunctions") {
        Some(Value::Array(list)) => {
            for (i, entry) in list.iter().enumerate() {
                if let Some(f) = parse_function(
                    entry,
                    &FieldPath::parse("spec.krmFunctions").index(i),
                    &mut problems,
                ) {
                    functions.push(f);
                }
            }
        }
        Some(Value::Null) | None => problems.push(Problem::new(
            "spec.krmFunctions",
            "missing spec.krmFunctions",
        )),
        Some(other) => problems.push(Problem::new(
            "spec.krmFunctions",
            format!("must be a list, not {}", crate::strict::type_name(other)),
        )),
    }
    if problems.is_empty() {
        Ok((name, functions))
    } else {
        Err(problems)
    }
}

fn parse_function(
    entry: &Value,
    path: &FieldPath,
    problems: &mut Vec<Problem>,
) -> Option<Function> {
    let before = problems.len();
    let mut r = Reader::new(entry, path, problems);
    // `kind` at the top is the KEP's "example representation" spelling of `names.kind`;
    // `runtime` at the top is how most KEP examples write it (for every version).
    r.deny_unknown(&[
        "group",
        "names",
        "kind",
        "description",
        "publisher",
        "versions",
        "runtime",
        "home",
        "maintainers",
        "tags",
    ]);
    let group = r.string("group").unwrap_or_default();
    let description = r.string("description");
    let publisher = r.string("publisher");
    let home = r.string("home");
    let maintainers = r.strings("maintainers").unwrap_or_default();
    let tags = r.strings("tags").unwrap_or_default();
    let legacy_kind = r.string("kind");
    let names = entry.get("names").cloned();
    let versions_value = entry.get("versions").cloned();
    let mut kind = legacy_kind.clone().unwrap_or_default();
    if let Some(names) = &names {
        let mut n = Reader::new(names, path.key("names"), problems);
        n.deny_unknown(&["kind"]);
        if let Some(k) = n.string("kind") {
            if let Some(direct) = legacy_kind.as_ref().filter(|d| **d != k) {
                problems.push(Problem::new(
                    path.key("kind"),
                    format!(
                        "kind \"{direct}\" disagrees with names.kind \"{k}\"; write the kind once, as names.kind"
                    ),
                ));
            }
            kind = k;
        }
    }
    // An entry-level runtime is the runtime of every version that has none of its own.
    let entry_runtime = entry
        .get("runtime")
        .and_then(|rt| parse_runtime(rt, &path.key("runtime"), problems));
    let parent = EntryRuntime {
        runtime: entry_runtime.as_ref(),
        has_runtime: entry.get("runtime").is_some(),
    };
    if !gvk::is_dns_subdomain(&group) {
        problems.push(Problem::new(
            path.key("group"),
            format!("group \"{group}\" must be a DNS subdomain"),
        ));
    }
    if kind.is_empty() || !kind.starts_with(|c: char| c.is_ascii_uppercase()) {
        problems.push(Problem::new(
            path.key("names").key("kind"),
            format!("kind \"{kind}\" must be set and PascalCase"),
        ));
    }
    let mut versions = Vec::new();
    match &versions_value {
        Some(Value::Array(list)) if !list.is_empty() => {
            for (i, v) in list.iter().enumerate() {
                let vpath = path.key("versions").index(i);
                if let Some(v) = parse_version(v, &vpath, &parent, problems) {
                    if versions.iter().any(|x: &Version| x.name == v.name) {
                        problems.push(Problem::new(
                            path.key("versions").index(i).key("name"),
                            format!("version \"{}\" is defined twice", v.name),
                        ));
                    }
                    versions.push(v);
                }
            }
        }
        _ => problems.push(Problem::new(
            path.key("versions"),
            "must be a non-empty list of versions",
        )),
    }
    (problems.len() == before).then(|| Function {
        group,
        kind,
        description,
        publisher,
        versions,
        home,
        maintainers,
        tags,
        path: path.clone(),
    })
}

/// The runtime written beside `versions`, if any.
struct EntryRuntime<'a> {
    runtime: Option<&'a Runtime>,
    has_runtime: bool,
}

fn parse_version(
    v: &Value,
    path: &FieldPath,
    parent: &EntryRuntime<'_>,
    problems: &mut Vec<Problem>,
) -> Option<Version> {
    let entry_runtime = parent.runtime;
    let before = problems.len();
    let mut r = Reader::new(v, path, problems);
    r.deny_unknown(&[
        "name",
        "schema",
        "idempotent",
        "usage",
        "examples",
        "license",
        "maintainers",
        "runtime",
        // KEP-2985's KRMFunctionDefinition examples: whether a ConfigMap may be the config.
        "configMap",
        // As a CRD version (issue 23).
        "deprecated",
        "deprecationWarning",
    ]);
    let deprecated = r.boolean("deprecated").unwrap_or(false);
    let deprecation_warning = r.string("deprecationWarning");
    let name = r.string("name").unwrap_or_default();
    r.boolean("configMap");
    let idempotent = r.boolean("idempotent");
    let usage = r.string("usage");
    let license = r.string("license");
    let examples = r.strings("examples").unwrap_or_default();
    let maintainers = r.strings("maintainers").unwrap_or_default();
    let schema_value = v.get("schema").cloned();
    let runtime_value = v.get("runtime").cloned();
    if !gvk::is_dns_label(&name) || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        problems.push(Problem::new(
            path.key("name"),
            format!("version \"{name}\" must be a DNS label such as v1alpha1"),
        ));
    }
    let deprecation = match (deprecated, deprecation_warning) {
        (true, w) => Some(w),
        (false, None) => None,
        (false, Some(_)) => {
            problems.push(Problem::new(
                path.key("deprecationWarning"),
                "may only be set when deprecated is true",
            ));
            None
        }
    };
    let mut schema = None;
    if let Some(s) = schema_value {
        let spath = path.key("schema");
        let mut sr = Reader::new(&s, &spath, problems);
        sr.deny_unknown(&["openAPIV3Schema"]);
        if let Some(raw) = s.get("openAPIV3Schema") {
            match ConfigSchema::parse(raw) {
                Ok(parsed) => schema = Some(parsed),
                Err(errs) => {
                    for e in errs {
                        let p = spath.key("openAPIV3Schema").join(&e.path);
                        problems.push(Problem::new(p, e.message));
                    }
                }
            }
        }
    }
    let runtime = match (runtime_value, entry_runtime) {
        (Some(rt), _) => parse_runtime(&rt, &path.key("runtime"), problems),
        (None, Some(rt)) => Some(rt.clone()),
        // An entry-level runtime that did not parse has its own error already.
        (None, None) if parent.has_runtime => None,
        (None, None) => {
            problems.push(Problem::new(
                path.key("runtime"),
                "missing runtime (container, exec or service), in this version or beside versions",
            ));
            None
        }
    };
    match runtime {
        Some(runtime) if problems.len() == before => Some(Version {
            name,
            schema,
            runtime,
            idempotent,
            usage,
            license,
            examples,
            maintainers,
            deprecation,
        }),
        _ => None,
    }
}

fn parse_runtime(rt: &Value, path: &FieldPath, problems: &mut Vec<Problem>) -> Option<Runtime> {
    let mut r = Reader::new(rt, path, problems);
    r.deny_unknown(&["container", "exec", "service", "starlark"]);
    let kinds: Vec<&str> = ["container", "exec", "service", "starlark"]
        .into_iter()
        .filter(|k| rt.get(k).is_some())
        .collect();
    if kinds == ["container", "exec"] {
        // A publisher ships both an image and binaries (the KEP lists both forms).
        let container = parse_one_runtime("container", rt, path, problems);
        let exec = parse_one_runtime("exec", rt, path, problems);
        return Some(Runtime::Choice {
            container: Box::new(container?),
            exec: Box::new(exec?),
        });
    }
    if kinds.len() != 1 {
        problems.push(Problem::new(
            path,
            "must set exactly one of container, exec (or both), service, starlark",
        ));
        return None;
    }
    parse_one_runtime(kinds[0], rt, path, problems)
}

/// The KEP's `runtime` field on a function config item ("Determining the Function to
/// Execute"): an explicit runtime that short-circuits the catalog for that item, in the shapes
/// of kustomize's function annotation (`container.image`, `exec.path`, `starlark.path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Explicit {
    /// `container` (as a catalog writes it: `image`, `sha256`, `requireNetwork`,
    /// `requireStorageMount`, `publicKey`, `keyless`) or `starlark` (`path`, or `url` and
    /// `sha256`).
    Runtime(Runtime),
    /// `exec.path`: a binary of the package, as kustomize's annotation names one.
    ExecPath(String),
}

/// Read an item's explicit `runtime` (at `path`, `runtime`): exactly one of `container`,
/// `exec` (`{path}`) or `starlark`. Returns every problem.
pub fn parse_explicit(rt: &Value, path: &FieldPath) -> Result<Explicit, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut r = Reader::new(rt, path, &mut problems);
    r.deny_unknown(&["container", "exec", "starlark"]);
    drop(r);
    if !problems.is_empty() || !rt.is_object() {
        if problems.is_empty() {
            problems.push(Problem::new(
                path,
                "must be an object with one of container, exec, starlark",
            ));
        }
        return Err(problems);
    }
    let kinds: Vec<&str> = ["container", "exec", "starlark"]
        .into_iter()
        .filter(|k| rt.get(k).is_some())
        .collect();
    let explicit = match kinds.as_slice() {
        ["exec"] => {
            let e = rt.get("exec").cloned().unwrap_or(Value::Null);
            let epath = path.key("exec");
            if e.get("platforms").or_else(|| e.get("platform")).is_some() {
                problems.push(Problem::new(
                    &epath,
                    "an item's own exec runtime names a binary of the package by path (exec.path, as kustomize's annotation); platforms with uri and sha256 belong in a catalog",
                ));
                return Err(problems);
            }
            let mut r = Reader::new(&e, &epath, &mut problems);
            r.deny_unknown(&["path"]);
            let bin = r.string("path");
            drop(r);
            match bin {
                Some(bin) if !bin.trim().is_empty() => Some(Explicit::ExecPath(bin)),
                _ => {
                    problems.push(Problem::new(
                        epath.key("path"),
                        "missing path (a binary of the package, as kustomize's exec.path)",
                    ));
                    None
                }
            }
        }
        [one] => parse_one_runtime(one, rt, path, &mut problems).map(Explicit::Runtime),
        _ => {
            problems.push(Problem::new(
                path,
                "must set exactly one of container, exec, starlark",
            ));
            None
        }
    };
    match explicit {
        Some(explicit) if problems.is_empty() => Ok(explicit),
        _ => Err(problems),
    }
}

fn parse_one_runtime(
    kind: &str,
    rt: &Value,
    path: &FieldPath,
    problems: &mut Vec<Problem>,
) -> Option<Runtime> {
    match kind {
        "starlark" => {
            let spath = path.key("starlark");
            match rt.get("starlark") {
                // The KEP writes a URL string.
                Some(Value::String(url)) if !url.trim().is_empty() => Some(Runtime::Starlark {
                    source: url.clone(),
                    local: false,
                    sha256: None,
                }),
                Some(s @ Value::Object(_)) => {
                    let mut r = Reader::new(s, &spath, problems);
                    r.deny_unknown(&["path", "url", "sha256"]);
                    let path = r.string("path");
                    let url = r.string("url");
                    let sha256 = r.string("sha256");
                    match (path, url) {
                        (Some(_), Some(_)) => {
                            problems.push(Problem::new(
                                spath,
                                "set path (a file of the catalog) or url, not both",
                            ));
                            None
                        }
                        (Some(source), None) if !source.trim().is_empty() => {
                            Some(Runtime::Starlark {
                                source,
                                local: true,
                                sha256,
                            })
                        }
                        (None, Some(source)) if !source.trim().is_empty() => {
                            Some(Runtime::Starlark {
                                source,
                                local: false,
                                sha256,
                            })
                        }
                        _ => {
                            problems.push(Problem::new(spath, "must set path or url"));
                            None
                        }
                    }
                }
                _ => {
                    problems.push(Problem::new(spath, "must be a URL or {path | url, sha256}"));
                    None
                }
            }
        }
        "container" => {
            let c = rt.get("container").cloned().unwrap_or(Value::Null);
            let cpath = path.key("container");
            let mut r = Reader::new(&c, &cpath, problems);
            r.deny_unknown(&[
                "image",
                "sha256",
                "requireNetwork",
                "requireStorageMount",
                "requireFilesystem",
                "publicKey",
                "keyless",
            ]);
            let image = r.string("image");
            let public_key = r.string("publicKey");
            let keyless_value = c.get("keyless").cloned();
            let sha256 = r.string("sha256");
            let require_network = r.boolean("requireNetwork").unwrap_or(false);
            let require_storage_mount = r
                .boolean("requireStorageMount")
                .or_else(|| r.boolean("requireFilesystem"))
                .unwrap_or(false);
            drop(r);
            let keyless = keyless_value.as_ref().and_then(|k| {
                crate::config::read_keyless(k, &cpath.key("keyless"), true, problems)
            });
            match image {
                Some(image) if !image.trim().is_empty() => Some(Runtime::Container {
                    image,
                    sha256,
                    require_network,
                    require_storage_mount,
                    public_key,
                    keyless,
                }),
                _ => {
                    problems.push(Problem::new(cpath.key("image"), "missing image"));
                    None
                }
            }
        }
        "exec" => {
            let e = rt.get("exec").cloned().unwrap_or(Value::Null);
            let epath = path.key("exec");
            let mut r = Reader::new(&e, &epath, problems);
            r.deny_unknown(&["platforms", "platform"]);
            let key = if e.get("platforms").is_some() {
                "platforms"
            } else {
                "platform"
            };
            let Some(Value::Array(list)) = e.get(key) else {
                problems.push(Problem::new(
                    epath.key("platforms"),
                    "must be a non-empty list of platforms",
                ));
                return None;
            };
            let mut platforms = Vec::new();
            for (i, p) in list.iter().enumerate() {
                let ppath = epath.key(key).index(i);
                if !p.is_object() {
                    // One problem per bad entry, not "missing bin" and "missing uri" beside it.
                    problems.push(Problem::new(
                        &ppath,
                        format!(
                            "must be an object with bin, os, arch, uri and sha256, not {}",
                            crate::strict::type_name(p)
                        ),
                    ));
                    continue;
                }
                let mut r = Reader::new(p, &ppath, problems);
                r.deny_unknown(&["bin", "os", "arch", "uri", "sha256"]);
                let bin = r.string("bin").unwrap_or_default();
                let os = r
                    .one_of("os", &["linux", "darwin", "windows"])
                    .unwrap_or_default();
                let arch = r.one_of("arch", &["amd64", "arm64"]).unwrap_or_default();
                let uri = r.string("uri").unwrap_or_default();
                let sha256 = r.string("sha256");
                if uri.is_empty() {
                    problems.push(Problem::new(ppath.key("uri"), "missing uri"));
                }
                if bin.is_empty() {
                    problems.push(Problem::new(ppath.key("bin"), "missing bin"));
                }
                platforms.push(Platform {
                    bin,
                    os,
                    arch,
                    uri,
                    sha256,
                });
            }
            if list.is_empty() {
                problems.push(Problem::new(
                    epath.key(key),
                    "must be a non-empty list of platforms",
                ));
            }
            Some(Runtime::Exec { platforms })
        }
        _ => {
            let s = rt.get("service").cloned().unwrap_or(Value::Null);
            let spath = path.key("service");
            let mut r = Reader::new(&s, &spath, problems);
            r.deny_unknown(&["name"]);
            match r.string("name") {
                Some(name) if !name.trim().is_empty() => Some(Runtime::Service { name }),
                _ => {
                    problems.push(Problem::new(
                        spath.key("name"),
                        "missing name of the ServiceDefinition",
                    ));
                    None
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The problems of a document that does not parse, as printed.
    fn messages(doc: &Value) -> Vec<String> {
        parse(doc)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn doc(functions: &Value) -> Value {
        json!({"apiVersion": API_VERSION, "kind": "KRMFunctionCatalog", "metadata": {"name": "c"}, "spec": {"krmFunctions": functions}})
    }

    #[test]
    fn reads_every_runtime_and_tolerates_the_keps_spellings() {
        let d = doc(&json!([
            {"group": "example.com", "names": {"kind": "SetLabels"}, "description": "d", "publisher": "p", "home": "h",
             "maintainers": ["m"], "tags": ["t"], "versions": [
                {"name": "v1", "idempotent": true, "usage": "u", "examples": ["e"], "license": "Apache-2.0",
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}},
                 "runtime": {"container": {"image": "example.com/set-labels:v1", "sha256": "abc", "requireFilesystem": true}}},
                {"name": "v2", "runtime": {"exec": {"platform": [{"bin": "fn", "os": "linux", "arch": "amd64", "uri": "file:///fn", "sha256": "x"}]}}},
             ]},
            {"group": "apps.example.com", "kind": "App", "versions": [{"name": "v1", "runtime": {"service": {"name": "app"}}}]},
        ]));
        let (name, fns) = parse(&d).unwrap();
        assert_eq!(name.as_deref(), Some("c"));
        assert_eq!(fns.len(), 2);
        assert!(matches!(
            &fns[0].versions[0].runtime,
            Runtime::Container {
                require_storage_mount: true,
                ..
            }
        ));
        assert!(
            matches!(&fns[0].versions[1].runtime, Runtime::Exec { platforms } if platforms.len() == 1)
        );
        assert_eq!(fns[1].kind, "App");
        assert_eq!(
            fns[1].gvk(&fns[1].versions[0]).to_string(),
            "apps.example.com/v1/App"
        );
    }

    #[test]
    fn rejects_unknown_fields() {
        let d = doc(
            &json!([{"group": "example.com", "names": {"kind": "X"}, "versoins": [], "versions": [
            {"name": "v1", "runtime": {"container": {"image": "x"}}}]}]),
        );
        let msgs = messages(&d);
        assert!(
            msgs.iter().any(|m| m.contains(
                "unknown field \"spec.krmFunctions[0].versoins\" (did you mean \"versions\"?)"
            )),
            "{msgs:?}"
        );
    }

    /// Issue 8 point 1: the KEP's Summary and Stories write `runtime` beside `versions`.
    #[test]
    fn issue8_p1_entry_level_runtime_is_the_runtime_of_versions_without_one() {
        let d = doc(
            &json!([{"group": "example.com", "names": {"kind": "JavaApplication"},
            "versions": [{"name": "v1"}, {"name": "v2", "runtime": {"service": {"name": "java"}}}],
            "runtime": {"container": {"image": "example/java:v1.0.0"}}}]),
        );
        let (_, fns) = parse(&d).unwrap();
        assert!(
            matches!(&fns[0].versions[0].runtime, Runtime::Container { image, sha256: None, .. } if image == "example/java:v1.0.0")
        );
        assert!(matches!(&fns[0].versions[1].runtime, Runtime::Service { name } if name == "java"));
        let missing = doc(
            &json!([{"group": "example.com", "names": {"kind": "J"}, "versions": [{"name": "v1"}]}]),
        );
        let msgs = messages(&missing);
        assert_eq!(
            msgs,
            [
                "spec.krmFunctions[0].versions[0].runtime: missing runtime (container, exec or service), in this version or beside versions"
            ]
        );
    }

    /// Issue 8 point 1: the KEP's example representation writes `kind` on the entry.
    #[test]
    fn issue8_p1_kind_on_the_entry_is_names_kind_and_must_agree() {
        let d = doc(&json!([{"group": "example.com", "kind": "SetLogger",
            "versions": [{"name": "v1", "runtime": {"container": {"image": "x"}}}]}]));
        assert_eq!(parse(&d).unwrap().1[0].kind, "SetLogger");
        let both = doc(
            &json!([{"group": "example.com", "kind": "SetLogger", "names": {"kind": "SetLogger"},
            "versions": [{"name": "v1", "runtime": {"container": {"image": "x"}}}]}]),
        );
        assert_eq!(parse(&both).unwrap().1[0].kind, "SetLogger");
        let disagree = doc(
            &json!([{"group": "example.com", "kind": "SetLogger", "names": {"kind": "SetLogs"},
            "versions": [{"name": "v1", "runtime": {"container": {"image": "x"}}}]}]),
        );
        let msgs = messages(&disagree);
        assert_eq!(
            msgs,
            [
                "spec.krmFunctions[0].kind: kind \"SetLogger\" disagrees with names.kind \"SetLogs\"; write the kind once, as names.kind"
            ]
        );
    }

    /// The KEP's Proposal lists a Starlark function by URL: it loads (and fails only when used).
    #[test]
    fn issue8_p1_starlark_runtime_loads() {
        let d = doc(
            &json!([{"group": "example.com", "names": {"kind": "GroovyApplication"},
            "versions": [{"name": "v1"}], "runtime": {"starlark": "https://example.co/module_providers/starlark-func:v1.0.0"}}]),
        );
        let (_, fns) = parse(&d).unwrap();
        assert!(
            matches!(&fns[0].versions[0].runtime, Runtime::Starlark { source, local: false, sha256: None } if source.ends_with("starlark-func:v1.0.0"))
        );
        let object = doc(&json!([{"group": "example.com", "names": {"kind": "G"},
            "versions": [{"name": "v1", "runtime": {"starlark": {"path": "fn/set.star", "sha256": "ab"}}}]}]));
        let (_, fns) = parse(&object).unwrap();
        assert_eq!(
            fns[0].versions[0].runtime,
            Runtime::Starlark {
                source: "fn/set.star".into(),
                local: true,
                sha256: Some("ab".into())
            }
        );
        let both = doc(&json!([{"group": "example.com", "names": {"kind": "G"},
            "versions": [{"name": "v1", "runtime": {"starlark": {"path": "a.star", "url": "https://x/a.star"}}}]}]));
        assert_eq!(
            messages(&both),
            [
                "spec.krmFunctions[0].versions[0].runtime.starlark: set path (a file of the catalog) or url, not both"
            ]
        );
        let bad = doc(&json!([{"group": "example.com", "names": {"kind": "G"},
            "versions": [{"name": "v1", "runtime": {"starlark": {"sha256": "x"}}}]}]));
        let msgs = messages(&bad);
        assert_eq!(
            msgs,
            ["spec.krmFunctions[0].versions[0].runtime.starlark: must set path or url"]
        );
    }

    /// Issue 8 acceptance 3c: a bad `exec.platforms` entry is one error, not three.
    #[test]
    fn issue8_a3c_a_bad_exec_platform_entry_is_reported_once() {
        let bad = doc(&json!([{"group": "example.com", "names": {"kind": "G"},
            "versions": [{"name": "v1", "runtime": {"exec": {"platforms": ["fn-linux-amd64"]}}}]}]));
        let msgs = messages(&bad);
        assert_eq!(
            msgs,
            [
                "spec.krmFunctions[0].versions[0].runtime.exec.platforms[0]: must be an object with bin, os, arch, uri and sha256, not string"
            ]
        );
    }

    /// Issue 11 (`catalog view`): the KEP's metadata fields are kept, not only accepted.
    #[test]
    fn issue11_metadata_fields_are_kept_for_catalog_view() {
        let d = doc(&json!([
            {"group": "example.com", "names": {"kind": "SetNamespace"}, "home": "https://example.com/set-namespace",
             "maintainers": ["a@example.com", "b@example.com"], "tags": ["mutator", "namespace"], "versions": [
                {"name": "v1", "examples": ["https://example.com/ex1", "https://example.com/ex2"],
                 "maintainers": ["c@example.com"], "usage": "https://example.com/usage",
                 "runtime": {"container": {"image": "x", "requireNetwork": true}}},
                {"name": "v2", "runtime": {"container": {"image": "y"}}},
             ]},
        ]));
        let (_, fns) = parse(&d).unwrap();
        let f = &fns[0];
        assert_eq!(f.home.as_deref(), Some("https://example.com/set-namespace"));
        assert_eq!(f.maintainers, ["a@example.com", "b@example.com"]);
        assert_eq!(f.tags, ["mutator", "namespace"]);
        assert_eq!(
            f.versions[0].examples,
            ["https://example.com/ex1", "https://example.com/ex2"]
        );
        assert_eq!(f.versions[0].maintainers, ["c@example.com"]);
        assert!(f.versions[1].examples.is_empty() && f.versions[1].maintainers.is_empty());
        let bad = doc(
            &json!([{"group": "example.com", "names": {"kind": "G"}, "tags": ["ok", 3],
            "versions": [{"name": "v1", "runtime": {"container": {"image": "x"}}}]}]),
        );
        assert_eq!(
            messages(&bad),
            ["spec.krmFunctions[0].tags[1]: must be a string, not integer"]
        );
    }

    /// Issue 11: a KRMFunctionDefinition is one function; its `spec` reads as one
    /// `krmFunctions` entry (KEP-2985's `configMap` included), problems at `spec.…` paths.
    #[test]
    fn issue11_a_function_definition_is_one_function() {
        let d = json!({"apiVersion": API_VERSION, "kind": DEFINITION_KIND, "metadata": {"name": "set-namespace"},
            "spec": {"group": "example.com", "names": {"kind": "SetNamespace"}, "description": "d", "publisher": "p",
                "versions": [{"name": "v1", "configMap": true, "license": "Apache 2.0",
                    "runtime": {"container": {"image": "example.com/set-namespace:v1"}}}],
                "maintainers": ["m"], "tags": ["t"], "home": "h"}});
        assert!(is_function_definition(&d));
        assert!(!is_kep_catalog(&d));
        let (name, f) = parse_definition(&d).unwrap();
        assert_eq!(name.as_deref(), Some("set-namespace"));
        assert_eq!(
            f.gvk(&f.versions[0]).to_string(),
            "example.com/v1/SetNamespace"
        );
        assert_eq!(f.path.to_string(), "spec");
        let mut bad = d.clone();
        bad["spec"]["versoins"] = json!([]);
        bad["spec"]["versions"][0]["configMap"] = json!("true|false");
        let msgs: Vec<String> = parse_definition(&bad)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            msgs,
            [
                "spec.versoins: unknown field \"spec.versoins\" (did you mean \"versions\"?)",
                "spec.versions[0].configMap: must be a boolean, not string",
            ]
        );
        let mut no_spec = d.clone();
        no_spec.as_object_mut().unwrap().shift_remove("spec");
        assert_eq!(
            parse_definition(&no_spec)
                .unwrap_err()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["spec: missing spec (one function: group, names.kind, versions)"]
        );
    }
}

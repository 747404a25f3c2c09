//! The function config (SPEC §3): a typed `ResolveCatalog`, a kpt `ConfigMap`
//! (`kpt fn eval -- key=value`), or a `ServiceSet`/service object carrying the same settings in
//! its `spec` (kustomize generator style).

use serde_json::{Map, Value};

use crate::catalog_ref::{CatalogRef, CatalogRefError, Digest, GitRef};
use crate::diagnostics::FieldPath;
use crate::service::instance::UnknownFields;
use crate::strict::{Problem, Reader};

mod configmap;
use configmap::read_configmap;

mod mounts;
pub use mounts::Mount;

mod trust;
use trust::read_trusted;
pub use trust::{KeySource, KeylessSource, TrustKey, read_keyless};

/// Our own API group.
pub const GROUP: &str = "krm-catalog.dev";
/// The typed config's apiVersion.
pub const API_VERSION: &str = "krm-catalog.dev/v1alpha1";
/// The typed config's kind.
pub const KIND: &str = "ResolveCatalog";

/// Setting keys of a config `spec` (also allowed in a `ServiceSet` or service object used as
/// the function config).
pub const SETTING_KEYS: &[&str] = &[
    "catalogs",
    "trustedCatalogs",
    "builtin",
    "catalogOverwrite",
    "clusterType",
    "cluster",
    "functions",
    "offline",
    "unknownFields",
    "applyOrder",
];
/// Settings that any service object or `ServiceSet` item may carry for itself.
pub const ITEM_SETTING_KEYS: &[&str] = &["clusterType", "cluster"];

/// The keys a kpt `ConfigMap` function config may carry (besides `cluster.<key>`).
pub const CONFIGMAP_KEYS: &[&str] = &[
    "catalogs",
    "trusted-catalogs",
    "builtin",
    "catalog-overwrite",
    "cluster-type",
    "mode",
    "allow-exec",
    "allow-inline-exec",
    "allow-network",
    "mounts",
    "container-engine",
    "verify-tags",
    "allow-unpinned",
    "offline",
    "unknown-fields",
    "apply-order",
];

/// A catalog source with the field path it was configured at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogEntry {
    /// The source.
    pub source: CatalogRef,
    /// Field path in the function config, e.g. `spec.catalogs[1]`.
    pub field: FieldPath,
    /// `standardPattern`: whose `templates/` render this catalog's services when it has none
    /// of its own (`builtin`, or another loaded catalog's name).
    pub standard_pattern: Option<String>,
}

/// What to do with function-backed kinds (SPEC §7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Run the runtime now, as a step.
    Run,
    /// Pin the verified runtime onto the item for kustomize/kpt to run.
    Pin,
}

/// `spec.functions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Functions {
    /// run | pin.
    pub mode: Mode,
    /// Allow exec runtimes in run mode.
    pub allow_exec: bool,
    /// Allow exec runtimes that inline catalogs (items of the input) name: package contents
    /// then choose which local binary runs, so this is a separate, explicit opt-in.
    pub allow_inline_exec: bool,
    /// Allow runtimes that require the network to have it.
    pub allow_network: bool,
    /// The mounts runtimes that require a storage mount get (`mounts`, kpt's `--mount`):
    /// none, and such runtimes are refused.
    pub mounts: Vec<Mount>,
    /// docker | podman.
    pub container_engine: String,
    /// Check tag/digest agreement against the registry in function mode.
    pub verify_tags: bool,
    /// Images without a digest are warnings instead of errors.
    pub allow_unpinned: bool,
}

impl Default for Functions {
    fn default() -> Self {
        Self {
            mode: Mode::Run,
            allow_exec: false,
            allow_inline_exec: false,
            allow_network: false,
            mounts: Vec::new(),
            container_engine: "docker".into(),
            verify_tags: false,
            allow_unpinned: false,
        }
    }
}

/// Effective settings of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `spec.catalogs`, in order.
    pub catalogs: Vec<CatalogEntry>,
    /// `spec.trustedCatalogs`: every entry's source (object entries' included).
    pub trusted_catalogs: Vec<String>,
    /// The `spec.trustedCatalogs` entries that name a public key.
    pub trust_keys: Vec<TrustKey>,
    /// Include the embedded catalog.
    pub builtin: bool,
    /// Later catalogs may replace earlier definitions.
    pub catalog_overwrite: bool,
    /// hub | spoke (or a catalog's own cluster types).
    pub cluster_type: Option<String>,
    /// Free-form values for templates.
    pub cluster: Map<String, Value>,
    /// Function-backed kinds.
    pub functions: Functions,
    /// Never touch the network.
    pub offline: bool,
    /// Fields of a service instance its schema does not declare: Strict | Warn | Prune.
    pub unknown_fields: UnknownFields,
    /// What generated objects say about their apply order (SPEC §6.5).
    pub apply_order: ApplyOrder,
}

/// `applyOrder`: how generated objects carry the dependencies of their services.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ApplyOrder {
    /// Nothing beyond `service.phase` in the templates (the built-in catalog's sync waves).
    #[default]
    None,
    /// `config.kubernetes.io/depends-on` on generated objects, for `kpt live apply`.
    Kpt,
}

impl ApplyOrder {
    /// The spellings, as the config writes them.
    pub const NAMES: [&'static str; 2] = ["none", "kpt"];

    /// Parse the config spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(Self::None),
            "kpt" => Some(Self::Kpt),
            _ => None,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            catalogs: Vec::new(),
            trusted_catalogs: Vec::new(),
            trust_keys: Vec::new(),
            builtin: true,
            catalog_overwrite: false,
            cluster_type: None,
            cluster: Map::new(),
            functions: Functions::default(),
            offline: false,
            unknown_fields: UnknownFields::Strict,
            apply_order: ApplyOrder::None,
        }
    }
}

impl Settings {
    /// Resolve the relative local paths the function config names (catalog directories and
    /// files, public-key and trust-root files) against `base`, the directory of the file that
    /// declares them, whatever the current directory is (issue 22). `~/` paths, absolute paths
    /// and remote sources are left as written; an empty or `.` base changes nothing.
    pub fn rebase(&mut self, base: &std::path::Path) {
        if base.as_os_str().is_empty() || base == std::path::Path::new(".") {
            return;
        }
        let rebase = |p: &mut String| {
            let path = std::path::Path::new(p.as_str());
            if path.is_relative() && !p.starts_with("~/") {
                let mut rest = p.as_str();
                while let Some(r) = rest.strip_prefix("./") {
                    rest = r;
                }
                let joined = if rest.is_empty() || rest == "." {
                    base.to_path_buf()
                } else {
                    base.join(rest)
                };
                *p = joined.to_string_lossy().into_owned();
            }
        };
        for entry in &mut self.catalogs {
            if let CatalogRef::Path(p) = &mut entry.source {
                rebase(p);
            }
        }
        for entry in &mut self.trust_keys {
            match &mut entry.key {
                trust::KeySource::File(file) => rebase(file),
                trust::KeySource::Keyless(k) => {
                    rebase(&mut k.trust_root);
                    rebase(&mut k.rekor_public_key);
                }
                trust::KeySource::Pem(_) => {}
            }
        }
    }
}

/// What kind of object the function config is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigKind {
    /// No function config.
    None,
    /// `krm-catalog.dev/v1alpha1 ResolveCatalog`.
    ResolveCatalog,
    /// A kpt-style `ConfigMap`.
    ConfigMap,
    /// A `ServiceSet`: settings plus services to expand.
    ServiceSet,
    /// Anything else: possibly a single service object (decided once catalogs are loaded).
    Other,
}

/// The parsed function config.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionConfig {
    /// Effective settings.
    pub settings: Settings,
    /// What the config object is.
    pub kind: ConfigKind,
    /// Problems found, with field paths in the config object.
    pub problems: Vec<Problem>,
}

/// Classify and read a function config.
pub fn parse(config: Option<&Value>) -> FunctionConfig {
    let mut problems = Vec::new();
    let Some(config) = config else {
        return FunctionConfig {
            settings: Settings::default(),
            kind: ConfigKind::None,
            problems,
        };
    };
    let api_version = config
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind_name = config.get("kind").and_then(Value::as_str).unwrap_or("");
    let (kind, settings) = match (api_version, kind_name) {
        ("v1", "ConfigMap") => (ConfigKind::ConfigMap, read_configmap(config, &mut problems)),
        (_, KIND) if api_version.starts_with(&format!("{GROUP}/")) => {
            if api_version != API_VERSION {
                problems.push(Problem::new(
                    "apiVersion",
                    format!("apiVersion must be \"{API_VERSION}\""),
                ));
            }
            let spec = config.get("spec").cloned().unwrap_or(Value::Null);
            let mut r = Reader::new(&spec, "spec", &mut problems);
            r.deny_unknown(SETTING_KEYS);
            (ConfigKind::ResolveCatalog, read_spec(&spec, &mut problems))
        }
        (_, "ServiceSet")
            if api_version.starts_with(crate::service::definition::SERVICES_GROUP) =>
        {
            let spec = config.get("spec").cloned().unwrap_or(Value::Null);
            (ConfigKind::ServiceSet, read_spec(&spec, &mut problems))
        }
        _ => {
            let spec = config.get("spec").cloned().unwrap_or(Value::Null);
            (ConfigKind::Other, read_spec(&spec, &mut problems))
        }
    };
    FunctionConfig {
        settings,
        kind,
        problems,
    }
}

/// Read the setting keys of a `spec` (other keys are left to the caller).
pub fn read_spec(spec: &Value, problems: &mut Vec<Problem>) -> Settings {
    let mut settings = Settings::default();
    let mut r = Reader::new(spec, "spec", problems);
    if let Some(v) = r.get("catalogs") {
        let path = r.field_path("catalogs");
        settings.catalogs = read_catalogs(v, &path, r.problems());
    }
    if let Some(v) = r.get("trustedCatalogs") {
        let path = r.field_path("trustedCatalogs");
        (settings.trusted_catalogs, settings.trust_keys) = read_trusted(v, &path, r.problems());
    }
    if let Some(b) = r.boolean("builtin") {
        settings.builtin = b;
    }
    if let Some(b) = r.boolean("catalogOverwrite") {
        settings.catalog_overwrite = b;
    }
    settings.cluster_type = r.string("clusterType");
    if settings
        .cluster_type
        .as_deref()
        .is_some_and(|t| t.trim().is_empty())
    {
        r.problem("clusterType", "must not be empty");
        settings.cluster_type = None;
    }
    if let Some(cluster) = r.object("cluster") {
        settings.cluster.clone_from(cluster);
    }
    if let Some(b) = r.boolean("offline") {
        settings.offline = b;
    }
    if let Some(mode) = r.one_of("unknownFields", &UnknownFields::NAMES) {
        settings.unknown_fields = UnknownFields::parse(&mode).unwrap_or_default();
    }
    if let Some(order) = r.one_of("applyOrder", &ApplyOrder::NAMES) {
        settings.apply_order = ApplyOrder::parse(&order).unwrap_or_default();
    }
    if let Some(functions) = r.get("functions") {
        let path = r.field_path("functions");
        settings.functions = read_functions(functions, &path, r.problems());
    }
    settings
}

fn read_catalogs(
    value: &Value,
    path: &FieldPath,
    problems: &mut Vec<Problem>,
) -> Vec<CatalogEntry> {
    let Value::Array(list) = value else {
        problems.push(Problem::new(
            path,
            "must be a list of catalog sources ({path|url|oci: ...})",
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let field = path.index(i);
        let mut r = Reader::new(entry, &field, problems);
        r.deny_unknown(&["path", "url", "sha256", "oci", "git", "standardPattern"]);
        let standard_pattern = r.string("standardPattern");
        let p = r.string("path");
        let url = r.string("url");
        let sha256 = r.string("sha256");
        let oci = r.string("oci");
        let git = r.get("git").cloned();
        let given = [p.is_some(), url.is_some(), oci.is_some(), git.is_some()]
            .iter()
            .filter(|b| **b)
            .count();
        if given != 1 {
            problems.push(Problem::new(
                &field,
                "must set exactly one of path, url, oci, git",
            ));
            continue;
        }
        if sha256.is_some() && url.is_none() {
            problems.push(Problem::new(
                field.key("sha256"),
                "sha256 pins a url source; pin OCI sources with @sha256: in the reference",
            ));
        }
        let sha256 = match sha256.map(|s| s.parse::<Digest>()).transpose() {
            Ok(digest) => digest,
            Err(e) => {
                // The run stops at config problems: this entry is never loaded.
                problems.push(Problem::new(field.key("sha256"), e.to_string()));
                None
            }
        };
        let source = if let Some(git) = git {
            let Some(g) = read_git(&git, &field.key("git"), problems) else {
                continue;
            };
            CatalogRef::Git(g)
        } else if let Some(p) = p {
            if p.trim().is_empty() {
                problems.push(Problem::new(field.key("path"), "must not be empty"));
                continue;
            }
            CatalogRef::Path(p)
        } else if let Some(url) = url {
            CatalogRef::Url { url, sha256 }
        } else if let Some(oci) = oci {
            // `oci://` is the command line's and the environment's spelling of the same
            // reference: accepted here too, never doubled into `oci://oci://` (issue 22).
            let reference = oci.strip_prefix("oci://").unwrap_or(&oci);
            if let Some((scheme, _)) = reference.split_once("://") {
                problems.push(Problem::new(
                    field.key("oci"),
                    format!(
                        "must be an OCI reference (registry/repository:tag or @sha256:…), not a {scheme}:// URL; use url: for an archive over HTTPS"
                    ),
                ));
                continue;
            }
            CatalogRef::Oci(reference.to_owned())
        } else {
            continue;
        };
        if standard_pattern
            .as_deref()
            .is_some_and(|s| s.trim().is_empty())
        {
            problems.push(Problem::new(
                field.key("standardPattern"),
                "must name a catalog (\"builtin\" or a loaded catalog's name), not be empty",
            ));
            continue;
        }
        out.push(CatalogEntry {
            source,
            field,
            standard_pattern,
        });
    }
    out
}

/// `git: {url, ref, commit, path}`, every part checked by [`GitRef::new`].
fn read_git(value: &Value, path: &FieldPath, problems: &mut Vec<Problem>) -> Option<GitRef> {
    let mut r = Reader::new(value, path, problems);
    r.deny_unknown(&["url", "ref", "commit", "path"]);
    let url = r.string("url");
    let reference = r.string("ref");
    let commit = r.string("commit");
    let dir = r.string("path");
    drop(r);
    let Some(url) = url else {
        problems.push(Problem::new(
            path.key("url"),
            "is required: the repository (https://, git:// or file://)",
        ));
        return None;
    };
    match GitRef::new(
        &url,
        reference.as_deref(),
        commit.as_deref(),
        dir.as_deref(),
    ) {
        Ok(g) => Some(g),
        Err(e) => {
            let field = match &e {
                CatalogRefError::Git { field, .. } => path.key(field),
                CatalogRefError::Pin { .. } => path.clone(),
            };
            problems.push(Problem::new(field, e.to_string()));
            None
        }
    }
}

/// `KRM_CATALOG_CATALOGS` split at `:`, except the colons of a Git source's `git::`, its
/// `scheme://` and its host's port.
fn split_env_catalogs(value: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for piece in value.split(':') {
        let join = out.last().is_some_and(|cur: &String| {
            let git = cur.starts_with("git:");
            cur == "git"
                || cur == "git:"
                || (git && piece.starts_with("//"))
                || (git
                    && cur.contains("://")
                    && !cur.rsplit("://").next().unwrap_or_default().contains('/')
                    && piece.starts_with(|c: char| c.is_ascii_digit()))
        });
        match out.last_mut() {
            Some(cur) if join => {
                cur.push(':');
                cur.push_str(piece);
            }
            _ => out.push(piece.to_owned()),
        }
    }
    out
}

/// The catalogs named by [`crate::env::CATALOGS`].
pub fn env_catalogs() -> Vec<CatalogEntry> {
    split_env_catalogs(&crate::env::catalogs())
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .enumerate()
        .map(|(i, p)| {
            // `:` separates entries, so no entry is an https URL: each is a path or a Git
            // source (`git::…`, `git://…`), whose colons the split keeps. A Git source that
            // does not parse stays a path here; the catalog stage fails it with the reason.
            let source = if p.starts_with("git:") {
                p.parse::<CatalogRef>()
                    .unwrap_or_else(|_| CatalogRef::Path(p.to_owned()))
            } else {
                CatalogRef::Path(p.to_owned())
            };
            CatalogEntry {
                source,
                field: FieldPath::root().key(crate::env::CATALOGS).index(i),
                standard_pattern: None,
            }
        })
        .collect()
}

fn read_functions(value: &Value, path: &FieldPath, problems: &mut Vec<Problem>) -> Functions {
    let mut f = Functions::default();
    let mut r = Reader::new(value, path, problems);
    r.deny_unknown(&[
        "mode",
        "allowExec",
        "allowInlineExec",
        "allowNetwork",
        "mounts",
        "containerEngine",
        "verifyTags",
        "allowUnpinned",
    ]);
    if let Some(mode) = r.one_of("mode", &["run", "pin"]) {
        f.mode = if mode == "pin" { Mode::Pin } else { Mode::Run };
    }
    if let Some(b) = r.boolean("allowExec") {
        f.allow_exec = b;
    }
    if let Some(b) = r.boolean("allowInlineExec") {
        f.allow_inline_exec = b;
    }
    if let Some(b) = r.boolean("allowNetwork") {
        f.allow_network = b;
    }
    if let Some(list) = r.get("mounts") {
        let field = r.field_path("mounts");
        f.mounts = mounts::read_list(list, &field, r.problems());
    }
    if let Some(e) = r.one_of("containerEngine", &["docker", "podman"]) {
        f.container_engine = e;
    }
    if let Some(b) = r.boolean("verifyTags") {
        f.verify_tags = b;
    }
    if let Some(b) = r.boolean("allowUnpinned") {
        f.allow_unpinned = b;
    }
    f
}

/// JSON Schema of `ResolveCatalog` (editors, `explain`, the function's KEP-2906 metadata).
pub fn json_schema() -> Value {
    serde_json::json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": KIND,
        "description": "Configuration of the krm-catalog function: which catalogs to resolve kinds through and how.",
        "type": "object",
        "required": ["apiVersion", "kind"],
        "properties": {
            "apiVersion": {"type": "string", "enum": [API_VERSION]},
            "kind": {"type": "string", "enum": [KIND]},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "catalogs": {
                        "type": "array",
                        "description": "Catalog sources searched after the built-in catalog, in this order.",
                        "items": {
                            "type": "object",
                            "additionalProperties": false,
                            "properties": {
                                "path": {"type": "string", "description": "A catalog directory or file, relative to the working directory."},
                                "url": {"type": "string", "description": "An HTTPS URL of a catalog file or .tar.gz bundle."},
                                "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Pin of the fetched bytes of a url source."},
                                "oci": {"type": "string", "description": "An OCI artifact reference (tag or digest)."},
                                "git": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "required": ["url"],
                                    "description": "A Git repository, fetched shallow at one ref by a pure-Rust client.",
                                    "properties": {
                                        "url": {"type": "string", "description": "The repository: https://, git:// or file://."},
                                        "ref": {"type": "string", "description": "A tag, a branch or a full commit id."},
                                        "commit": {"type": "string", "pattern": "^([0-9a-f]{40}|[0-9a-f]{64})$", "description": "The full commit id the ref must resolve to (the pin)."},
                                        "path": {"type": "string", "description": "The catalog's directory inside the repository."},
                                    },
                                },
                                "standardPattern": {"type": "string", "description": "For a catalog without templates/ of its own (kubara catalogs): render its services with the standard pattern of this catalog (builtin, or a loaded catalog's name)."},
                            },
                        },
                    },
                    "trustedCatalogs": {"type": "array", "description": "Remote catalogs allowed to load: exact references or a trailing * prefix; the object form also names a public key whose cosign signature a covered OCI catalog must carry.", "items": {
                        "x-kubernetes-preserve-unknown-fields": true,
                        "description": "A string (an exact reference, or a prefix ending in *), or {source, publicKey | publicKeyFile}: source is matched as the string form; publicKey is a PEM public key (ECDSA P-256 as cosign generate-key-pair makes, or Ed25519), publicKeyFile the same in a file relative to the working directory; a covered OCI catalog must carry a cosign signature of its digest by it. Or {source, keyless: {identity | identityRegexp, issuer, trustRoot, rekorPublicKey}}: a keyless cosign signature whose Fulcio certificate names that identity (email or URI; identityRegexp matched as cosign matches it) and OIDC issuer, chains to a root in the PEM file trustRoot, and carries a Rekor bundle signed by the PEM key rekorPublicKey (files relative to the working directory), checked offline.",
                    }},
                    "builtin": {"type": "boolean", "default": true, "description": "Include the embedded catalog."},
                    "catalogOverwrite": {"type": "boolean", "default": false, "description": "Let a later catalog replace a service, template or manifest of an earlier one instead of failing."},
                    "clusterType": {"type": "string", "description": "Cluster type (hub, spoke, or another type a loaded catalog declares): services whose clusterTypes exclude it render only when listed with status: enabled."},
                    "cluster": {"type": "object", "description": "Free-form values exposed to templates as `cluster`."},
                    "functions": {
                        "type": "object",
                        "additionalProperties": false,
                        "description": "What to do with function-backed kinds.",
                        "properties": {
                            "mode": {"type": "string", "enum": ["run", "pin"], "default": "run"},
                            "allowExec": {"type": "boolean", "default": false},
                            "allowInlineExec": {"type": "boolean", "default": false, "description": "Also run exec runtimes named by inline catalogs (items of the input), whose binaries the package contents choose."},
                            "allowNetwork": {"type": "boolean", "default": false},
                            "mounts": {"type": "array", "description": "Bind mounts for runtimes that declare requireStorageMount, which are refused without one (in pin and run mode): {type: bind, src, dst, rw} or kpt's --mount string type=bind,src=DIR,dst=PATH[,rw=true]; src is a directory of the package, relative to it; read-only unless rw: true.", "items": {"x-kubernetes-preserve-unknown-fields": true}},
                            "containerEngine": {"type": "string", "enum": ["docker", "podman"], "default": "docker"},
                            "verifyTags": {"type": "boolean", "default": false},
                            "allowUnpinned": {"type": "boolean", "default": false},
                        },
                    },
                    "offline": {"type": "boolean", "default": false, "description": "Never touch the network; fail if anything is not cached."},
                    "applyOrder": {"type": "string", "enum": ApplyOrder::NAMES, "default": "none", "description": "kpt: generated objects carry config.kubernetes.io/depends-on naming every object generated for the services their service depends on (spec.dependsOn), for kpt live apply. none: only service.phase (the built-in catalog's Argo CD sync waves)."},
                    "unknownFields": {"type": "string", "enum": UnknownFields::NAMES, "default": "Strict", "description": "Fields of a service's config (or instance) that its schema does not declare: Strict fails with `unknown field \"spec.config.x\"` (kubectl's default), Warn drops them with a warning, Prune drops them silently."},
                },
            },
        },
    })
}

#[cfg(test)]
mod unknown_fields_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn issue23_apply_order_setting() {
        let typed = parse(Some(&json!({"apiVersion": API_VERSION, "kind": KIND,
            "spec": {"applyOrder": "kpt"}})));
        assert_eq!(typed.settings.apply_order, ApplyOrder::Kpt);
        assert!(typed.problems.is_empty(), "{:?}", typed.problems);
        let cm = parse(Some(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "data": {"apply-order": "kpt"}})));
        assert_eq!(cm.settings.apply_order, ApplyOrder::Kpt);
        assert_eq!(parse(None).settings.apply_order, ApplyOrder::None);
        let bad = parse(Some(&json!({"apiVersion": API_VERSION, "kind": KIND,
            "spec": {"applyOrder": "kpr"}})));
        assert_eq!(
            bad.problems[0].message,
            "Unsupported value: \"kpr\": supported values: \"none\", \"kpt\" (did you mean \"kpt\"?)"
        );
        let bad = parse(Some(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "data": {"apply-order": "helm"}})));
        assert_eq!(
            bad.problems[0].message,
            "Unsupported value: \"helm\": supported values: \"none\", \"kpt\""
        );
    }

    #[test]
    fn issue8_unknown_fields_setting() {
        let typed = parse(Some(&json!({"apiVersion": API_VERSION, "kind": KIND,
            "spec": {"unknownFields": "Warn"}})));
        assert!(typed.problems.is_empty(), "{:?}", typed.problems);
        assert_eq!(typed.settings.unknown_fields, UnknownFields::Warn);
        let cm = parse(Some(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "data": {"unknown-fields": "Prune"}})));
        assert!(cm.problems.is_empty(), "{:?}", cm.problems);
        assert_eq!(cm.settings.unknown_fields, UnknownFields::Prune);
        assert_eq!(parse(None).settings.unknown_fields, UnknownFields::Strict);
        let bad = parse(Some(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "data": {"unknown-fields": "Ignore"}})));
        assert_eq!(
            bad.problems,
            [Problem::new(
                "data.unknown-fields",
                "Unsupported value: \"Ignore\": supported values: \"Strict\", \"Warn\", \"Prune\""
            )]
        );
        let bad = parse(Some(&json!({"apiVersion": API_VERSION, "kind": KIND,
            "spec": {"unknownFields": "strict"}})));
        assert_eq!(bad.problems.len(), 1, "{:?}", bad.problems);
        assert_eq!(bad.problems[0].path.to_string(), "spec.unknownFields");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue24_cosign_trust_entries_may_name_a_public_key() {
        let fc = parse(Some(
            &serde_json::json!({"apiVersion": API_VERSION, "kind": KIND,
            "spec": {"trustedCatalogs": [
                "oci://r.example/plain/*",
                {"source": "oci://r.example/signed/*", "publicKeyFile": "keys/cosign.pub"},
                {"source": "r.example/inline", "publicKey": "-----BEGIN PUBLIC KEY-----"},
                {"source": "oci://r.example/no-key"},
            ]}}),
        ));
        assert!(fc.problems.is_empty(), "{:?}", fc.problems);
        assert_eq!(
            fc.settings.trusted_catalogs,
            [
                "oci://r.example/plain/*",
                "oci://r.example/signed/*",
                "r.example/inline",
                "oci://r.example/no-key"
            ]
        );
        assert_eq!(
            fc.settings.trust_keys,
            [
                TrustKey {
                    source: "oci://r.example/signed/*".into(),
                    key: KeySource::File("keys/cosign.pub".into()),
                    field: FieldPath::parse("spec.trustedCatalogs[1]"),
                },
                TrustKey {
                    source: "r.example/inline".into(),
                    key: KeySource::Pem("-----BEGIN PUBLIC KEY-----".into()),
                    field: FieldPath::parse("spec.trustedCatalogs[2]"),
                },
            ]
        );
        let bad = parse(Some(
            &serde_json::json!({"apiVersion": API_VERSION, "kind": KIND,
            "spec": {"trustedCatalogs": [
                {"source": "https://h/c.yaml", "publicKeyFile": "k.pub"},
                {"source": "oci://r/x", "publicKey": "a", "publicKeyFile": "k.pub"},
                {"publicKeyFile": "k.pub"},
                {"source": "oci://r/x", "key": "k.pub"},
                7,
            ]}}),
        ));
        let problems: Vec<String> = bad
            .problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect();
        assert_eq!(
            problems,
            [
                "spec.trustedCatalogs[0].source: a public key checks cosign signatures, which only OCI catalogs carry (oci://registry/repository…); pin an https or Git source by sha256 or commit instead",
                "spec.trustedCatalogs[1]: must set at most one of publicKey, publicKeyFile",
                "spec.trustedCatalogs[2].source: is required: the reference or prefix (ending in *) this entry trusts",
                "spec.trustedCatalogs[3].key: unknown field \"spec.trustedCatalogs[3].key\"",
                "spec.trustedCatalogs[4]: must be a string or {source, publicKey | publicKeyFile}, not integer",
            ]
        );
        assert!(bad.settings.trust_keys.is_empty());
    }

    #[test]
    fn issue24_keyless_trust_entries_name_identity_issuer_root_and_rekor_key() {
        let fc = parse(Some(
            &serde_json::json!({"apiVersion": API_VERSION, "kind": KIND,
            "spec": {"trustedCatalogs": [
                {"source": "oci://r.example/kl/*", "keyless": {"identity": "dev@acme.example",
                    "issuer": "https://accounts.google.com", "trustRoot": "fulcio.pem",
                    "rekorPublicKey": "rekor.pub"}},
            ]}}),
        ));
        assert!(fc.problems.is_empty(), "{:?}", fc.problems);
        assert_eq!(
            fc.settings.trust_keys[0].key,
            KeySource::Keyless(KeylessSource {
                identity: Some("dev@acme.example".into()),
                identity_regexp: None,
                issuer: "https://accounts.google.com".into(),
                trust_root: "fulcio.pem".into(),
                rekor_public_key: "rekor.pub".into(),
            })
        );
        let bad = parse(Some(
            &serde_json::json!({"apiVersion": API_VERSION, "kind": KIND,
            "spec": {"trustedCatalogs": [
                {"source": "oci://r/a", "keyless": {"identity": "x", "identityRegexp": "y",
                    "issuer": "i", "trustRoot": "t", "rekorPublicKey": "k"}},
                {"source": "oci://r/b", "keyless": {"identity": "x", "trustRoot": "t"}},
                {"source": "oci://r/c", "publicKeyFile": "k.pub", "keyless": {}},
                {"source": "oci://r/d", "keyless": "x"},
            ]}}),
        ));
        let problems: Vec<String> = bad
            .problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect();
        assert_eq!(
            problems,
            [
                "spec.trustedCatalogs[0].keyless: must set one of identity, identityRegexp: the signer's email or URI (the certificate's subject alternative name)",
                "spec.trustedCatalogs[1].keyless.issuer: is required: the OIDC issuer of the signer's certificate, e.g. https://token.actions.githubusercontent.com",
                "spec.trustedCatalogs[1].keyless.rekorPublicKey: is required: a PEM file of the Rekor log's public key",
                "spec.trustedCatalogs[2]: must set at most one of publicKey, publicKeyFile, keyless (one entry per signer; add another entry for the same source to require both)",
                "spec.trustedCatalogs[3].keyless: must be {identity | identityRegexp, issuer, trustRoot, rekorPublicKey}, not string",
            ]
        );
        assert!(bad.settings.trust_keys.is_empty());
    }

    #[test]
    fn issue12_env_catalogs_keep_the_colons_of_git_sources() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(
            split_env_catalogs(&format!(
                "team:git::https://h:8443/r.git//c?ref=v1:git://127.0.0.1:9418/r//c?commit={sha}:/opt/x"
            )),
            vec![
                "team".to_owned(),
                "git::https://h:8443/r.git//c?ref=v1".to_owned(),
                format!("git://127.0.0.1:9418/r//c?commit={sha}"),
                "/opt/x".to_owned(),
            ]
        );
        assert_eq!(split_env_catalogs("a:b"), vec!["a", "b"]);
    }

    /// `oci: oci://…` was doubled into `oci://oci://…`; the prefix is accepted, another
    /// scheme is a clear error.
    #[test]
    fn issue16_oci_entries_accept_the_oci_prefix() {
        let mut problems = Vec::new();
        let entries = read_catalogs(
            &serde_json::json!([
                {"oci": "oci://ghcr.io/acme/catalog:v1"},
                {"oci": "ghcr.io/acme/catalog:v1"},
                {"oci": "https://ghcr.io/acme/catalog:v1"},
            ]),
            &FieldPath::parse("spec.catalogs"),
            &mut problems,
        );
        let names: Vec<String> = entries.iter().map(|e| e.source.to_string()).collect();
        assert_eq!(
            names,
            [
                "oci://ghcr.io/acme/catalog:v1",
                "oci://ghcr.io/acme/catalog:v1"
            ]
        );
        assert_eq!(
            problems,
            [Problem::new(
                "spec.catalogs[2].oci",
                "must be an OCI reference (registry/repository:tag or @sha256:…), not a https:// URL; use url: for an archive over HTTPS"
            )]
        );
    }

    #[test]
    fn issue12_git_entries_are_read_strictly() {
        let mut problems = Vec::new();
        let entries = read_catalogs(
            &serde_json::json!([
                {"git": {"url": "https://h/r.git", "ref": "v1", "path": "catalogs/team"}},
                {"git": {"url": "https://h/r.git", "ref": "v1", "tag": "v1"}},
                {"git": {"ref": "v1"}},
                {"git": {"url": "https://h/r.git", "ref": "v1"}, "url": "https://h/c.yaml"},
                {"git": {"url": "https://h/r.git", "commit": "abc"}},
            ]),
            &FieldPath::parse("spec.catalogs"),
            &mut problems,
        );
        assert_eq!(entries.len(), 2, "{problems:?}");
        assert_eq!(
            entries[0].source.to_string(),
            "git::https://h/r.git//catalogs/team?ref=v1"
        );
        let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("spec.catalogs[1].git.tag: unknown field")),
            "{texts:?}"
        );
        assert!(texts.contains(
            &"spec.catalogs[2].git.url: is required: the repository (https://, git:// or file://)"
                .to_owned()
        ));
        assert!(
            texts.contains(
                &"spec.catalogs[3]: must set exactly one of path, url, oci, git".to_owned()
            )
        );
        assert!(
            texts
                .iter()
                .any(|t| t
                    .starts_with("spec.catalogs[4].git.commit: \"abc\" is not a full commit id")),
            "{texts:?}"
        );
    }
}

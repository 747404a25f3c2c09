//! What `catalog view` shows about each kind for a trust decision: the model behind `-o yaml`
//! and `-o json` (its field names are stable, see docs/reference/commands.md, "catalog view") and
//! the detailed text sections of the default output.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use crate::catalog::kep::{self, Runtime};
use crate::catalog::{BundleInfo, Catalog};
use crate::catalog_ref::CatalogRef;

/// How `catalog view`, `catalog lint`, `catalog verify`, `explain` and `version` print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Format {
    /// A readable text form.
    Text,
    /// YAML, for machines.
    Yaml,
    /// JSON, for machines.
    Json,
}

/// The whole view. Absent values are `null` and absent lists `[]`, so every field is always
/// there.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct View {
    /// How the catalog was named (`catalog ./dir`, `catalog https://…`, `built-in catalog`).
    source: String,
    /// `metadata.name` of its kubara or KEP `Catalog` document.
    name: Option<String>,
    /// `spec.version` of its kubara `Catalog` document.
    version: Option<String>,
    /// `sha256:` of the catalog content.
    digest: String,
    /// The publishers its KEP entries name, sorted.
    publishers: Vec<String>,
    /// How a `spec.catalogs` entry pins a remote catalog to what was viewed.
    pin: Option<String>,
    /// The `spec.trustedCatalogs` entry a run needs for it; `null` for a local catalog.
    trust_entry: Option<String>,
    /// Who signed the OCI catalog's digest, `key sha256:<fingerprint> (<file>)`, one per
    /// `--public-key`; `[]` when none was given.
    signed: Vec<String>,
    /// The catalog whose standard pattern its services borrow (`spec.standardPattern`).
    standard_pattern: Option<String>,
    /// kubara services.
    services: Vec<ServiceView>,
    /// KEP-2906 function kinds, in document order.
    functions: Vec<FunctionView>,
    /// Template names (`partial` for `_*.j2` files).
    templates: Vec<TemplateView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ServiceView {
    /// `metadata.name`: the service ID.
    name: String,
    /// `apiVersion/Kind` of its single service objects.
    kind: String,
    /// `enabled` or `disabled`.
    status: String,
    /// `spec.chartPath`.
    chart: String,
    /// Empty: every cluster type.
    cluster_types: Vec<String>,
    /// The config schema's top-level fields.
    config: Vec<Field>,
    /// The warning its use gives (`spec.deprecated`); left out when it is not deprecated.
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecated: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct FunctionView {
    group: String,
    kind: String,
    description: Option<String>,
    publisher: Option<String>,
    home: Option<String>,
    maintainers: Vec<String>,
    tags: Vec<String>,
    versions: Vec<VersionView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionView {
    /// `v1`.
    name: String,
    /// `group/v1`: what items write.
    api_version: String,
    runtime: RuntimeView,
    idempotent: Option<bool>,
    license: Option<String>,
    usage: Option<String>,
    examples: Vec<String>,
    /// This version's own maintainers (when they differ from the kind's).
    maintainers: Vec<String>,
    /// Whether the version has a schema (`versions[].schema.openAPIV3Schema`).
    has_schema: bool,
    /// The schema's top-level fields (`spec.*` for a schema of the whole object).
    config: Vec<Field>,
    /// The warning its use gives (`deprecated: true`); left out when it is not deprecated.
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecated: Option<String>,
}

/// The KEP's runtime shape; the keys that do not apply are left out.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct RuntimeView {
    #[serde(skip_serializing_if = "Option::is_none")]
    container: Option<ContainerView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exec: Option<ExecView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    starlark: Option<StarlarkView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<ServiceRef>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ContainerView {
    /// As written.
    image: String,
    /// `sha256:…` the run pins it to (declared, or in the reference); `null`: not pinned.
    digest: Option<String>,
    /// `name@sha256:…`, what runs.
    pinned_image: Option<String>,
    require_network: bool,
    require_storage_mount: bool,
    /// `key sha256:<fingerprint>` whose cosign signature the image must carry (its
    /// `publicKey`); `null`: none required.
    signed_by: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ExecView {
    platforms: Vec<PlatformView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PlatformView {
    os: String,
    arch: String,
    bin: String,
    uri: String,
    /// `sha256:…` of the download; `null`: not pinned (a run refuses it).
    sha256: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct StarlarkView {
    /// The script's path, relative to the catalog's root (trusted as the catalog is).
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// The script's URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    /// Its declared sha256 (required for a URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    sha256: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ServiceRef {
    /// The ServiceDefinition it renders.
    name: String,
}

/// One top-level field of a config schema.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Field {
    /// `replicas`, or `spec.replicas` under a schema of the whole object.
    name: String,
    /// `string`, `integer`, `[]string`, `map[string]string`, `object`, `int-or-string`, `any`.
    #[serde(rename = "type")]
    type_: String,
    required: bool,
    default: Option<Value>,
    /// The first line of its `description`.
    description: Option<String>,
    /// Its deprecation warning (`x-krm-catalog-deprecated`); left out when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecated: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplateView {
    name: String,
    partial: bool,
}

/// The view of the one catalog `catalog` holds (`info` is its bundle), its function entries
/// as loaded (`functions`), viewed as `source`.
pub(super) fn view(
    source: &CatalogRef,
    info: &BundleInfo,
    borrows: Option<&str>,
    catalog: &Catalog,
    functions: &[kep::Function],
    signers: &[crate::remote::cosign::Signer],
) -> View {
    View {
        source: info.origin.label(),
        name: info.name.clone(),
        version: info.version.clone(),
        digest: format!("sha256:{}", info.digest),
        publishers: info.publishers.clone(),
        pin: info
            .pin
            .as_ref()
            .map(|pin| source.pinned_entry(pin).unwrap_or_else(|| pin.to_string())),
        trust_entry: source.trust_entry(),
        signed: signers.iter().map(ToString::to_string).collect(),
        standard_pattern: borrows.map(str::to_owned),
        services: catalog
            .services()
            .iter()
            .map(|s| {
                let d = &s.definition;
                ServiceView {
                    name: d.id.clone(),
                    kind: d.gvk.to_string(),
                    status: d.status.as_str().to_owned(),
                    chart: d.chart_path.clone(),
                    cluster_types: d.cluster_types.clone(),
                    config: d
                        .config_schema
                        .as_ref()
                        .map(|c| fields(c.raw(), ""))
                        .unwrap_or_default(),
                    deprecated: d.deprecation.clone(),
                }
            })
            .collect(),
        functions: functions
            .iter()
            .map(|f| function_view(f, catalog))
            .collect(),
        templates: catalog
            .templates()
            .map(|(n, _)| TemplateView {
                name: n.to_owned(),
                partial: crate::catalog::is_partial(n),
            })
            .collect(),
    }
}

fn function_view(f: &kep::Function, catalog: &Catalog) -> FunctionView {
    FunctionView {
        group: f.group.clone(),
        kind: f.kind.clone(),
        description: f.description.clone(),
        publisher: f.publisher.clone(),
        home: f.home.clone(),
        maintainers: f.maintainers.clone(),
        tags: f.tags.clone(),
        versions: f
            .versions
            .iter()
            .map(|v| VersionView {
                name: v.name.clone(),
                api_version: f.gvk(v).api_version(),
                runtime: runtime_view(&v.runtime),
                idempotent: v.idempotent,
                license: v.license.clone(),
                usage: v.usage.clone(),
                examples: v.examples.clone(),
                maintainers: v.maintainers.clone(),
                has_schema: v.schema.is_some(),
                config: v
                    .schema
                    .as_ref()
                    .map(|s| object_fields(s.raw()))
                    .unwrap_or_default(),
                deprecated: catalog.deprecation(&f.gvk(v)).map(str::to_owned),
            })
            .collect(),
    }
}

fn runtime_view(runtime: &Runtime) -> RuntimeView {
    let mut view = RuntimeView::default();
    for part in runtime.parts() {
        match part {
            Runtime::Container {
                image,
                sha256,
                require_network,
                require_storage_mount,
                public_key,
                keyless,
            } => {
                let pinned =
                    crate::functions::verify_container(image, sha256.as_deref(), false, None)
                        .ok()
                        .filter(|p| p.digest.is_some());
                view.container = Some(ContainerView {
                    image: image.clone(),
                    digest: pinned.as_ref().and_then(|p| p.digest.clone()),
                    pinned_image: pinned
                        .as_ref()
                        .map(crate::functions::PinnedImage::reference),
                    require_network: *require_network,
                    require_storage_mount: *require_storage_mount,
                    signed_by: required_signers(public_key.as_deref(), keyless.as_ref()),
                });
            }
            Runtime::Exec { platforms } => {
                view.exec = Some(ExecView {
                    platforms: platforms
                        .iter()
                        .map(|p| PlatformView {
                            os: p.os.clone(),
                            arch: p.arch.clone(),
                            bin: p.bin.clone(),
                            uri: p.uri.clone(),
                            sha256: p.sha256.as_deref().map(|d| {
                                crate::functions::normalize_digest(d)
                                    .unwrap_or_else(|_| d.to_owned())
                            }),
                        })
                        .collect(),
                });
            }
            Runtime::Starlark {
                source,
                local,
                sha256,
            } => {
                view.starlark = Some(StarlarkView {
                    path: local.then(|| source.clone()),
                    url: (!local).then(|| source.clone()),
                    sha256: sha256.as_deref().map(|d| {
                        crate::functions::normalize_digest(d).unwrap_or_else(|_| d.to_owned())
                    }),
                });
            }
            Runtime::Service { name } => {
                view.service = Some(ServiceRef { name: name.clone() });
            }
            // `parts` never returns a choice.
            Runtime::Choice { .. } => {}
        }
    }
    view
}

/// The fields of a schema of the whole object (a KEP version's): `spec`'s properties as
/// `spec.*`, and any other top-level field but `apiVersion`, `kind` and `metadata`.
fn object_fields(schema: &Value) -> Vec<Field> {
    let mut out = Vec::new();
    for field in fields(schema, "") {
        match field.name.as_str() {
            "apiVersion" | "kind" | "metadata" => {}
            "spec" => {
                let spec = schema.pointer("/properties/spec").unwrap_or(&Value::Null);
                let inner = fields(spec, "spec.");
                if inner.is_empty() {
                    out.push(field);
                } else {
                    out.extend(inner);
                }
            }
            _ => out.push(field),
        }
    }
    out
}

/// The properties of an object schema, named `{prefix}{key}`, in schema order.
fn fields(schema: &Value, prefix: &str) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(key, sub)| Field {
            name: format!("{prefix}{key}"),
            type_: type_name(sub),
            required: required.contains(&key.as_str()),
            default: sub.get("default").cloned(),
            description: sub
                .get("description")
                .and_then(Value::as_str)
                .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
                .map(str::to_owned),
            deprecated: sub
                .get(crate::service::deprecation::DEPRECATED_KEYWORD)
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
        .collect()
}

/// A schema's type as `kubectl explain` writes it.
fn type_name(schema: &Value) -> String {
    let flag = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
    if flag("x-kubernetes-int-or-string") {
        return "int-or-string".to_owned();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("array") => format!(
            "[]{}",
            schema
                .get("items")
                .map_or_else(|| "any".to_owned(), type_name)
        ),
        Some("object") => match schema.get("additionalProperties") {
            Some(items @ Value::Object(_)) => format!("map[string]{}", type_name(items)),
            _ => "object".to_owned(),
        },
        Some(t) => t.to_owned(),
        None => "any".to_owned(),
    }
}

/// A command's document (the view, lint's and verify's reports, an explained schema) as
/// `-o yaml` or `-o json` prints it.
pub(super) fn render(document: &impl Serialize, format: Format) -> String {
    // One value for both forms, so YAML and JSON are the same document.
    render_value(&serde_json::to_value(document).unwrap_or_default(), format)
}

/// A document as `-o yaml` or `-o json` prints it (pretty JSON, or our YAML emitter).
pub(super) fn render_value(value: &serde_json::Value, format: Format) -> String {
    match format {
        Format::Json => {
            let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
            text.push('\n');
            text
        }
        _ => crate::yaml::emit(value),
    }
}

const NOT_DECLARED: &str = "(not declared)";

/// The column where values start.
const VALUE_COLUMN: usize = 24;

/// A label and its values (one a line), at `indent`, the values in one column; an empty list
/// says "(not declared)".
fn row(out: &mut String, indent: usize, label: &str, values: &[String]) {
    let pad = " ".repeat(indent);
    let width = VALUE_COLUMN.saturating_sub(indent);
    let first = values.first().map_or(NOT_DECLARED, String::as_str);
    let _ = writeln!(out, "{pad}{:<width$}{first}", format!("{label}:"));
    for v in values.iter().skip(1) {
        let _ = writeln!(out, "{pad}{:<width$}{v}", "");
    }
}

fn opt(value: Option<&String>) -> Vec<String> {
    value.cloned().into_iter().collect()
}

fn yes_no(value: bool) -> String {
    if value { "yes" } else { "no" }.to_owned()
}

/// The detailed text sections: every function kind per version, then every service's config.
pub(super) fn details(view: &View) -> String {
    let mut out = String::new();
    if !view.functions.is_empty() {
        let _ = writeln!(out, "\nFunctions ({}):", view.functions.len());
    }
    for f in &view.functions {
        let _ = writeln!(out, "  {} ({})", f.kind, f.group);
        row(&mut out, 4, "Description", &opt(f.description.as_ref()));
        row(&mut out, 4, "Publisher", &opt(f.publisher.as_ref()));
        row(&mut out, 4, "Home", &opt(f.home.as_ref()));
        row(&mut out, 4, "Maintainers", &f.maintainers);
        let tags: Vec<String> = (!f.tags.is_empty())
            .then(|| f.tags.join(", "))
            .into_iter()
            .collect();
        row(&mut out, 4, "Tags", &tags);
        for v in &f.versions {
            let _ = writeln!(
                out,
                "    Version {} (apiVersion: {}):",
                v.name, v.api_version
            );
            if let Some(w) = &v.deprecated {
                row(&mut out, 6, "Deprecated", std::slice::from_ref(w));
            }
            runtime_text(&mut out, &v.runtime);
            let idempotent = v.idempotent.map(yes_no);
            row(&mut out, 6, "Idempotent", &opt(idempotent.as_ref()));
            row(&mut out, 6, "License", &opt(v.license.as_ref()));
            row(&mut out, 6, "Usage", &opt(v.usage.as_ref()));
            row(&mut out, 6, "Examples", &v.examples);
            if !v.maintainers.is_empty() {
                row(&mut out, 6, "Maintainers", &v.maintainers);
            }
            if v.has_schema {
                config_text(&mut out, 6, &v.config);
            } else {
                row(
                    &mut out,
                    6,
                    "Config",
                    &["(no schema: not validated)".to_owned()],
                );
            }
        }
    }
    let deprecated: Vec<String> = view
        .services
        .iter()
        .filter_map(|s| s.deprecated.clone())
        .collect();
    if !deprecated.is_empty() {
        let _ = writeln!(out, "\nDeprecated services:");
        for w in deprecated {
            let _ = writeln!(out, "  {w}");
        }
    }
    if view.services.iter().any(|s| !s.config.is_empty()) {
        let _ = writeln!(out, "\nService config:");
        for s in view.services.iter().filter(|s| !s.config.is_empty()) {
            let _ = writeln!(out, "  {} (chart {}):", s.name, s.chart);
            config_text(&mut out, 4, &s.config);
        }
    }
    out
}

/// What a runtime's `publicKey` and `keyless` require, joined (`None`: neither).
pub(super) fn required_signers(
    public_key: Option<&str>,
    keyless: Option<&crate::config::KeylessSource>,
) -> Option<String> {
    let keyless = keyless.map(|k| {
        let identity = k
            .identity
            .clone()
            .unwrap_or_else(|| format!("~{}", k.identity_regexp.as_deref().unwrap_or_default()));
        format!("keyless {identity} (issuer {})", k.issuer)
    });
    match (public_key.map(required_signer), keyless) {
        (None, None) => None,
        (Some(a), Some(b)) => Some(format!("{a} and {b}")),
        (a, b) => a.or(b),
    }
}

/// `key sha256:<fingerprint>` of a runtime's `publicKey`, or why it is not a key.
pub(super) fn required_signer(pem: &str) -> String {
    crate::remote::cosign::PublicKey::from_pem(pem, "publicKey").map_or_else(
        |e| format!("NOT A KEY ({e})"),
        |k| format!("key {}", k.fingerprint()),
    )
}

fn runtime_text(out: &mut String, runtime: &RuntimeView) {
    if let Some(c) = &runtime.container {
        row(out, 6, "Runtime", &[format!("container {}", c.image)]);
        let digest = c.digest.clone().unwrap_or_else(|| {
            "NOT PINNED (no sha256: a run refuses it unless functions.allowUnpinned)".to_owned()
        });
        row(out, 6, "Image digest", &[digest]);
        if let Some(signer) = &c.signed_by {
            row(
                out,
                6,
                "Signed by",
                &[format!("{signer} (cosign, required)")],
            );
        }
        row(out, 6, "Requires network", &[yes_no(c.require_network)]);
        row(
            out,
            6,
            "Requires storage",
            &[yes_no(c.require_storage_mount)],
        );
    }
    if let Some(e) = &runtime.exec {
        let label = if runtime.container.is_some() {
            "Or exec"
        } else {
            "Runtime"
        };
        row(
            out,
            6,
            label,
            &["exec, one binary per platform:".to_owned()],
        );
        let lines: Vec<String> = e
            .platforms
            .iter()
            .flat_map(|p| {
                [
                    format!("{}/{} {} (bin {})", p.os, p.arch, p.uri, p.bin),
                    format!(
                        "  {}",
                        p.sha256.clone().unwrap_or_else(|| {
                            "NOT PINNED (no sha256: a run refuses it)".to_owned()
                        })
                    ),
                ]
            })
            .collect();
        for line in lines {
            let _ = writeln!(out, "{:VALUE_COLUMN$}{line}", "");
        }
    }
    if let Some(s) = &runtime.starlark {
        let (source, trust) = match (&s.path, &s.url) {
            (Some(path), _) => (
                format!("starlark {path}"),
                "a file of this catalog, trusted as it is",
            ),
            (None, url) => (
                format!("starlark {}", url.as_deref().unwrap_or_default()),
                "NOT PINNED (no sha256: a run refuses it)",
            ),
        };
        let digest = s.sha256.clone().unwrap_or_else(|| trust.to_owned());
        row(out, 6, "Runtime", &[source, format!("  {digest}")]);
    }
    if let Some(s) = &runtime.service {
        row(
            out,
            6,
            "Runtime",
            &[format!("service {} (templates of this catalog)", s.name)],
        );
    }
}

fn config_text(out: &mut String, indent: usize, config: &[Field]) {
    let pad = " ".repeat(indent);
    if config.is_empty() {
        row(out, indent, "Config", &["(no fields)".to_owned()]);
        return;
    }
    let _ = writeln!(out, "{pad}Config:");
    let name_w = config.iter().map(|f| f.name.len()).max().unwrap_or(0);
    let type_w = config.iter().map(|f| f.type_.len()).max().unwrap_or(0);
    let any_required = config.iter().any(|f| f.required);
    for f in config {
        let mut notes = Vec::new();
        if let Some(d) = &f.default {
            notes.push(format!("default {d}"));
        }
        if let Some(d) = &f.description {
            notes.push(d.clone());
        }
        if let Some(w) = &f.deprecated {
            notes.push(format!("DEPRECATED: {w}"));
        }
        let required = match (f.required, any_required) {
            (true, _) => "required  ",
            (false, true) => "          ",
            (false, false) => "",
        };
        let line = format!(
            "{pad}  {:<name_w$}  {:<type_w$}  {required}{}",
            f.name,
            f.type_,
            notes.join("; ")
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_of_a_whole_object_schema_are_specs_marked_required() {
        let schema = json!({"type": "object", "required": ["spec"], "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
            "spec": {"type": "object", "required": ["size"], "properties": {
                "size": {"x-kubernetes-int-or-string": true, "description": "New size.\nMore."},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "names": {"type": "array", "items": {"type": "string"}, "default": ["a"]},
            }},
            "data": {"type": "object"},
        }});
        let got: Vec<(String, String, bool)> = object_fields(&schema)
            .into_iter()
            .map(|f| (f.name, f.type_, f.required))
            .collect();
        assert_eq!(
            got,
            [
                ("spec.size".into(), "int-or-string".into(), true),
                ("spec.labels".into(), "map[string]string".into(), false),
                ("spec.names".into(), "[]string".into(), false),
                ("data".into(), "object".into(), false),
            ]
        );
        let f = &fields(&schema["properties"]["spec"], "")[0];
        assert_eq!(f.description.as_deref(), Some("New size."));
    }
}

//! The `catalog` subcommands: view, lock, verify, pull and lint a catalog, and how a catalog
//! reference on the command line is read.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use clap::Subcommand;

use super::catalog_pull::{catalog_pull, parse_platform};
use super::catalog_view::Format;
use super::error::{parse_reference, problems};
use super::report::{CatalogLint, Counts, LintReport};
use super::signature_args::{SignatureArgs, check_signed};
use super::{CliError, Stdout, error};
use crate::catalog::{self, Bundle, Catalog};
use crate::catalog_ref::CatalogRef;
use crate::results::{Diagnostic as _, Severity};

#[derive(Debug, Subcommand)]
pub(super) enum CatalogCommand {
    /// Show what a catalog holds before you trust it: name, version, digest, publisher,
    /// services, kinds with their runtimes and pins, templates
    ///
    /// Per function kind and version: description, publisher, license, home, maintainers,
    /// tags, usage and example links, the runtime with its digests (image, exec binaries per
    /// platform), requireNetwork, requireStorageMount, idempotent and the config schema's
    /// top-level fields; per service: chart, cluster types and config fields.
    View {
        /// A directory or file, `https://…` (optionally `#sha256=<hex>`), `oci://…`, or `builtin`
        reference: String,
        /// `text` (for people), `yaml` or `json` (for machines: stable field names, see the
        /// README)
        #[arg(short, long, value_enum, default_value = "text")]
        output: super::catalog_view::Format,
        #[command(flatten)]
        signature: SignatureArgs,
    },
    /// Fill in every missing pin, editing the files in place: the sha256 of a local catalog's
    /// runtimes (images from their registry, binaries and Starlark scripts from their
    /// download), or the commit of each Git source of a function config
    Lock {
        /// A catalog directory or file, a function config file (ResolveCatalog, ConfigMap,
        /// ServiceSet, or a ResourceList holding one), or a directory holding any of these
        path: PathBuf,
    },
    /// Check every runtime digest of a catalog against registries and downloads; exits 1 on any
    /// mismatch, unpinned runtime or error (the CI gate)
    Verify {
        /// A directory or file, `https://…`, `oci://…`, or `builtin`
        reference: String,
        /// `text` (one line per runtime), `yaml` or `json` (for machines: the catalog and each
        /// runtime with its digest and verdict, see docs/reference/commands.md)
        #[arg(short, long, value_enum, default_value = "text")]
        output: super::catalog_view::Format,
        #[command(flatten)]
        signature: SignatureArgs,
    },
    /// Prepare the cache for offline runs and network-less containers: fetch remote catalogs,
    /// and download, verify (sha256) and install the exec binaries of every catalog given
    /// (remote or local) for this machine's platform, or those `--platform` names
    Pull {
        /// `https://…` (optionally `#sha256=<hex>`), `oci://registry/repo:tag[@sha256:…]`, or a
        /// local catalog directory or file (for its exec binaries)
        #[arg(required = true)]
        references: Vec<String>,
        /// Also or instead prepare binaries for this platform, `OS/ARCH` (repeatable), e.g.
        /// `linux/amd64` for the container a cache is mounted into
        #[arg(long = "platform", value_name = "OS/ARCH")]
        platforms: Vec<String>,
        /// Prepare the binaries of every platform the catalogs list
        #[arg(long, conflicts_with = "platforms")]
        all_platforms: bool,
    },
    /// Run every load-time check on a catalog and render every service with its defaults
    Lint {
        /// Catalog directories or files
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Lint together with the built-in catalog (as a run with `builtin: true` would load it)
        #[arg(long)]
        with_builtin: bool,
        /// Render the services with the standard pattern of this catalog (`builtin`, or a
        /// catalog's name), as `standardPattern` on a `spec.catalogs` entry does
        #[arg(long, value_name = "CATALOG")]
        standard_pattern: Option<String>,
        /// Cluster values for the test render, `key=value` (repeatable)
        #[arg(long = "cluster", value_name = "KEY=VALUE")]
        cluster: Vec<String>,
        /// `text` (errors and warnings on stderr), `yaml` or `json` (for machines: per catalog
        /// and per service, errors and warnings with file, path and message, on stdout)
        #[arg(short, long, value_enum, default_value = "text")]
        output: super::catalog_view::Format,
        #[command(flatten)]
        render: super::lint_render::RenderArgs,
    },
    /// Write a new team catalog to start from into DIR (new or empty), which lint passes
    Init(super::catalog_init::InitArgs),
}

/// Run a `catalog` subcommand.
pub(super) fn run(command: CatalogCommand) -> Result<(), CliError> {
    match command {
        CatalogCommand::View {
            reference,
            output,
            signature,
        } => catalog_view(&reference, output, &signature),
        CatalogCommand::Pull {
            references,
            platforms,
            all_platforms,
        } => {
            let platforms = if all_platforms {
                crate::functions::exec::PullPlatforms::All
            } else if platforms.is_empty() {
                crate::functions::exec::PullPlatforms::This
            } else {
                crate::functions::exec::PullPlatforms::These(
                    platforms
                        .iter()
                        .map(|p| parse_platform(p))
                        .collect::<Result<_, _>>()?,
                )
            };
            catalog_pull(&references, &platforms)
        }
        CatalogCommand::Lock { path } => catalog_lock(&path),
        CatalogCommand::Verify {
            reference,
            output,
            signature,
        } => catalog_verify(&reference, output, &signature),
        CatalogCommand::Lint {
            paths,
            with_builtin,
            standard_pattern,
            cluster,
            output,
            render,
        } => catalog_lint(
            &paths,
            LintOptions {
                with_builtin,
                standard_pattern: standard_pattern.as_deref(),
                output,
            },
            &cluster,
            &render,
        ),
        CatalogCommand::Init(args) => super::catalog_init::run(&args),
    }
}

/// How `catalog view` shows a kind's runtime and whether its digest is pinned.
fn describe_runtime(catalog: &Catalog, kind: &catalog::Kind) -> (String, String) {
    match kind {
        catalog::Kind::Service { index, .. } => {
            let id = catalog
                .services()
                .get(*index)
                .map_or("?", |s| s.definition.id.as_str());
            (
                format!("service {id}"),
                "(templates of this catalog)".to_owned(),
            )
        }
        catalog::Kind::Function { runtime, .. } => describe_function_runtime(runtime),
    }
}

fn describe_function_runtime(runtime: &crate::catalog::kep::Runtime) -> (String, String) {
    use crate::catalog::kep::Runtime;
    match runtime {
        Runtime::Container {
            image,
            sha256,
            public_key,
            keyless,
            ..
        } => {
            let mut pinned = match (image.contains("@sha256:"), sha256) {
                (_, Some(d)) => format!("pinned sha256:{}", d.trim_start_matches("sha256:")),
                (true, None) => "pinned in the image reference".to_owned(),
                (false, None) => "NOT PINNED (no sha256)".to_owned(),
            };
            if let Some(signer) =
                super::catalog_view::required_signers(public_key.as_deref(), keyless.as_ref())
            {
                let _ = write!(pinned, ", signed by {signer}");
            }
            (format!("container {image}"), pinned)
        }
        Runtime::Exec { platforms } => {
            let list: Vec<String> = platforms
                .iter()
                .map(|p| {
                    let pin = if p.sha256.is_some() {
                        "pinned"
                    } else {
                        "NOT PINNED"
                    };
                    format!("{}/{} {pin}", p.os, p.arch)
                })
                .collect();
            ("exec".to_owned(), list.join(", "))
        }
        Runtime::Service { name } => (format!("service {name}"), String::new()),
        Runtime::Starlark {
            source,
            local,
            sha256,
        } => (
            format!("starlark {source}"),
            match (local, sha256) {
                (_, Some(d)) => format!("pinned sha256:{}", d.trim_start_matches("sha256:")),
                (true, None) => "a file of the catalog".to_owned(),
                (false, None) => "NOT PINNED (no sha256)".to_owned(),
            },
        ),
        Runtime::Choice { container, exec } => {
            let (c, cp) = describe_function_runtime(container);
            let (e, ep) = describe_function_runtime(exec);
            (format!("{c} | {e}"), format!("{cp} | {ep}"))
        }
    }
}

fn catalog_lock(path: &std::path::Path) -> Result<(), CliError> {
    let remote = crate::remote::Remote::new(false);
    let report = crate::functions::lock::lock(path, &remote)?;
    let mut out = String::new();
    for line in &report {
        let _ = writeln!(out, "{line}");
    }
    if report.iter().all(|l| l.status != "locked") {
        let _ = writeln!(
            out,
            "{}: every runtime and Git catalog is already pinned",
            path.display()
        );
    }
    Stdout::print(&out)
}

fn catalog_verify(
    reference: &str,
    output: Format,
    signature: &SignatureArgs,
) -> Result<(), CliError> {
    let source = parse_reference(reference)?;
    let remote = crate::remote::Remote::new(false);
    let bundle = match &source {
        _ if reference == "builtin" => crate::builtin::bundle(),
        CatalogRef::Path(p) => Bundle::from_path(p, std::path::Path::new(p)),
        _ => remote.pull(&source)?,
    };
    let signers = check_signed(&source, &bundle, signature, &remote)?;
    // A catalog that did not load cleanly is still checked, and fails at the end.
    let failed_load = bundle.problems.iter().any(|p| !p.is_warning());
    if output == Format::Text {
        error::print_problems(&problems(&bundle));
    }
    // `file://` URIs resolve inside a local catalog's root; remote catalogs cannot name files.
    let root = match &source {
        CatalogRef::Path(p) if reference != "builtin" => Some(
            crate::functions::lock::catalog_root(std::path::Path::new(p)),
        ),
        _ => None,
    };
    let functions: Vec<crate::catalog::kep::Function> = bundle
        .functions
        .iter()
        .map(|f| f.function.clone())
        .collect();
    let services: Vec<String> = bundle
        .definitions
        .iter()
        .map(|d| d.definition.id.clone())
        .collect();
    let checks = crate::functions::lock::verify(&functions, &services, &remote, root.as_deref());
    if output != Format::Text {
        let signed = signers.iter().map(ToString::to_string).collect();
        let report = super::report::VerifyReport::new(reference, &bundle, signed, &checks);
        Stdout::print(&super::catalog_view::render(&report, output))?;
        return if report.ok() {
            Ok(())
        } else {
            Err(CliError::Reported)
        };
    }
    let mut out = String::new();
    for signer in &signers {
        let _ = writeln!(out, "{} signed: {signer}", signer.digest);
    }
    for check in &checks {
        let _ = writeln!(out, "{check}");
    }
    let bad = checks.iter().filter(|c| c.status != "ok").count();
    let _ = writeln!(out, "{} runtimes checked, {bad} not ok", checks.len());
    Stdout::print(&out)?;
    if bad == 0 && !failed_load {
        Ok(())
    } else {
        Err(CliError::Reported)
    }
}

fn catalog_view(
    reference: &str,
    format: super::catalog_view::Format,
    signature: &SignatureArgs,
) -> Result<(), CliError> {
    let source = parse_reference(reference)?;
    let remote = !source.is_path();
    let client = crate::remote::Remote::new(false);
    let bundle = if reference == "builtin" {
        crate::builtin::bundle()
    } else if remote {
        // Viewing is how a user decides to trust: it loads without the trust check, and
        // sends no credentials.
        client.view(&source)?
    } else {
        Bundle::from_path(reference, std::path::Path::new(reference))
    };
    let signers = check_signed(&source, &bundle, signature, &client)?;
    // The catalog is shown alone: a pattern it borrows (its Catalog document's
    // standardPattern) is named, not loaded, so asking for one does not fail the view.
    let mut bundle = bundle;
    let borrows = bundle.standard_pattern.take();
    let functions: Vec<crate::catalog::kep::Function> = bundle
        .functions
        .iter()
        .map(|f| f.function.clone())
        .collect();
    let (catalog, errors) = Catalog::merge(vec![bundle], false);
    error::fail_on_errors(
        errors
            .iter()
            .map(|e| (e.severity(), e.to_string()))
            .collect(),
    )?;
    let Some(info) = catalog.bundles.first() else {
        return Err(CliError::Reported);
    };
    let view = super::catalog_view::view(
        &source,
        info,
        borrows.as_deref(),
        &catalog,
        &functions,
        &signers,
    );
    if format != super::catalog_view::Format::Text {
        return Stdout::print(&super::catalog_view::render(&view, format));
    }
    let mut out = String::new();
    let _ = writeln!(out, "Source:    {}", info.origin.label());
    let _ = writeln!(
        out,
        "Name:      {}",
        info.name.as_deref().unwrap_or("(unnamed)")
    );
    let _ = writeln!(
        out,
        "Version:   {}",
        info.version.as_deref().unwrap_or("(none)")
    );
    let _ = writeln!(out, "Digest:    sha256:{}", info.digest);
    if let Some(lender) = &borrows {
        let _ = writeln!(
            out,
            "Pattern:   borrows the standard pattern of \"{lender}\" (spec.standardPattern)"
        );
    }
    let publisher = if info.publishers.is_empty() {
        "(not declared)".to_owned()
    } else {
        info.publishers.join(", ")
    };
    let _ = writeln!(out, "Publisher: {publisher}");
    if let Some(pin) = &info.pin {
        let pinned = source.pinned_entry(pin).unwrap_or_else(|| pin.to_string());
        let _ = writeln!(out, "Pin:       {pinned}");
    }
    if let catalog::Origin::Git {
        source: g,
        commit: Some(commit),
    } = &info.origin
    {
        let _ = writeln!(out, "Pin:       {}", g.pinned_entry(commit));
    }
    for signer in &signers {
        let _ = writeln!(out, "Signed:    {signer}");
    }
    let trust = if let Some(entry) = source.trust_entry() {
        format!(
            "remote: loaded only when spec.trustedCatalogs lists it, e.g. trustedCatalogs: [\"{entry}\"]"
        )
    } else {
        "local source, trusted".to_owned()
    };
    let _ = writeln!(out, "Trust:     {trust}\n");
    let _ = writeln!(out, "Services ({}):", catalog.services().len());
    let rows: Vec<[String; 5]> = catalog
        .services()
        .iter()
        .map(|s| {
            let d = &s.definition;
            let keys = d
                .config_schema
                .as_ref()
                .and_then(|c| {
                    c.raw()
                        .get("properties")
                        .and_then(serde_json::Value::as_object)
                })
                .map(|p| p.keys().cloned().collect::<Vec<_>>().join(","))
                .unwrap_or_default();
            [
                d.id.clone(),
                d.gvk.to_string(),
                d.status.as_str().to_owned(),
                if d.cluster_types.is_empty() {
                    "*".to_owned()
                } else {
                    d.cluster_types.join(",")
                },
                if keys.is_empty() {
                    "-".to_owned()
                } else {
                    keys
                },
            ]
        })
        .collect();
    let header = ["ID", "KIND", "STATUS", "CLUSTER TYPES", "CONFIG"];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: &[&str]| {
        let mut l = String::from("  ");
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                l.push_str(cell);
            } else {
                let _ = write!(l, "{cell:<w$}  ");
            }
        }
        l.push('\n');
        l
    };
    // A catalog of functions only has no service rows: no header over nothing.
    if !rows.is_empty() {
        out.push_str(&line(&header));
    }
    for row in &rows {
        out.push_str(&line(&row.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    let templates: Vec<&str> = catalog.templates().map(|(n, _)| n).collect();
    let kinds = catalog.kinds();
    let _ = writeln!(out, "\nKinds ({}):", kinds.len());
    for (gvk, kind) in kinds {
        let (runtime, pinned) = describe_runtime(&catalog, kind);
        let _ = writeln!(out, "  {gvk}  {runtime}  {pinned}");
    }
    out.push_str(&super::catalog_view::details(&view));
    let _ = writeln!(out, "\nTemplates ({}):", templates.len());
    for t in templates {
        let kind = if catalog::is_partial(t) {
            " (partial)"
        } else {
            ""
        };
        let _ = writeln!(out, "  {t}{kind}");
    }
    Stdout::print(&out)
}

/// How `catalog lint` runs: with the built-in catalog, with whose standard pattern, and how it
/// reports.
#[derive(Debug, Clone, Copy)]
struct LintOptions<'a> {
    with_builtin: bool,
    standard_pattern: Option<&'a str>,
    output: Format,
}

fn catalog_lint(
    paths: &[PathBuf],
    options: LintOptions<'_>,
    cluster: &[String],
    render: &super::lint_render::RenderArgs,
) -> Result<(), CliError> {
    let LintOptions {
        with_builtin,
        standard_pattern,
        output,
    } = options;
    if output != Format::Text && render.wanted() {
        return Err(CliError::Usage(
            "-o yaml|json prints lint's report; --service, --values and --set print a service's manifests: use one or the other".to_owned(),
        ));
    }
    let mut cluster_values = serde_json::Map::new();
    for kv in cluster {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(CliError::Usage(format!(
                "--cluster {kv}: expected KEY=VALUE"
            )));
        };
        cluster_values.insert(k.to_owned(), serde_json::Value::String(v.to_owned()));
    }
    let mut failed = false;
    let mut report = LintReport::default();
    let mut err = std::io::stderr().lock();
    for path in paths {
        let label = path.display().to_string();
        // A Git source (`git::…`, `git://…`) is fetched; anything else is a local path.
        let mut bundle = match label.parse::<CatalogRef>() {
            Ok(source @ CatalogRef::Git(_)) => crate::remote::Remote::new(false).pull(&source)?,
            _ => Bundle::from_path(&label, path),
        };
        let bundle_label = bundle.origin.label();
        if let Some(p) = standard_pattern {
            bundle.standard_pattern = Some(p.to_owned());
        }
        // The pattern asked for by --standard-pattern, else by the catalog's own Catalog
        // document (`spec.standardPattern: builtin`), which lint honours without a flag.
        let pattern = bundle.standard_pattern.clone();
        let mut bundles = Vec::new();
        if with_builtin || pattern.as_deref() == Some("builtin") {
            bundles.push(crate::builtin::bundle());
        }
        bundles.push(bundle);
        // A catalog loaded only to lend its pattern is not what is linted: the linted
        // catalog's services replace its equal ones (as catalogOverwrite does in a run).
        let lend_only = pattern.is_some() && !with_builtin;
        let (catalog, mut problems) = Catalog::merge(bundles, lend_only);
        if render.wanted() {
            return render.run(paths.len(), &catalog, &problems, &cluster_values);
        }
        // Rendering a catalog that did not load cleanly would only repeat its errors.
        if !problems.iter().any(|e| !e.is_warning()) {
            let linted = bundle_label.as_str();
            let renderer = crate::render::Renderer::new(&catalog);
            let schemas = crate::service::Schemas::new();
            problems.extend(crate::lint::lint_only(
                &renderer,
                &schemas,
                &cluster_values,
                |l| !lend_only || l == linted,
            ));
        }
        for e in &mut problems {
            failed |= !e.is_warning();
            // A template that needs a cluster value (the built-in pattern's cluster.repoURL
            // for kubara charts) is no fault of the catalog: say how to give one.
            if !e.is_warning() && cluster_values.is_empty() && e.message.contains("cluster.") {
                e.message.push_str(
                    "; this test render has no cluster values: give them with `--cluster KEY=VALUE`",
                );
            }
            if output == Format::Text {
                crate::logger::say(e.severity, &*e);
            }
        }
        // Only the linted catalog counts, not one loaded to lend it a pattern.
        let linted = catalog
            .bundles
            .iter()
            .position(|b| b.origin.label() == bundle_label)
            .filter(|_| lend_only);
        let services: Vec<usize> = catalog
            .services()
            .iter()
            .enumerate()
            .filter(|(_, s)| linted.is_none_or(|i| s.bundle == i))
            .map(|(i, _)| i)
            .collect();
        let counts = Counts {
            services: services.len(),
            function_kinds: catalog
                .kinds()
                .iter()
                .filter(|(_, k)| matches!(k, catalog::Kind::Function { .. }))
                .count(),
            templates: match linted {
                Some(i) => catalog.own_template_count(i),
                None => catalog.templates().count(),
            },
        };
        let mut linted = CatalogLint::new(
            &label,
            &bundle_label,
            &catalog,
            &services,
            &problems,
            counts,
        );
        if !problems.iter().any(|e| !e.is_warning()) {
            if counts.services == 0 && counts.function_kinds == 0 {
                let empty =
                    "no services and no function kinds (ServiceDefinitions go in services/)";
                linted.warn(empty.to_owned());
                if output == Format::Text {
                    crate::logger::say(Severity::Warning, format_args!("{label}: {empty}"));
                }
            }
            if output == Format::Text {
                let _ = writeln!(
                    err,
                    "ok: {label}: {} services, {} function kinds, {} templates",
                    counts.services, counts.function_kinds, counts.templates
                );
            }
        }
        report.push(linted);
    }
    // Lint's report is its output: on stderr, every catalog's problems and counts; with
    // `-o yaml|json`, the document on stdout (written before a failure's exit code).
    if output != Format::Text {
        Stdout::print(&super::catalog_view::render(&report, output))?;
    }
    if failed {
        Err(CliError::Reported)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 8 point 4: the entry `catalog view` suggests trusts the reference as viewed and
    /// the pinned form it recommends (the entry `oci://r/c:v2` alone does not match
    /// `r/c:v2@sha256:…`).
    #[test]
    fn issue8_p4_suggested_trust_entry_trusts_the_recommended_pin() {
        let digest = format!("sha256:{}", "a".repeat(64));
        for (viewed, pinned) in [
            (
                "oci://registry.example.com/catalogs/platform:v2",
                format!("oci://registry.example.com/catalogs/platform:v2@{digest}"),
            ),
            (
                "oci://localhost:5000/platform:v2",
                format!("oci://localhost:5000/platform:v2@{digest}"),
            ),
            (
                "oci://localhost:5000/platform",
                format!("oci://localhost:5000/platform@{digest}"),
            ),
            (
                // A valid pin: since issue 10 a bad one is refused when parsed.
                "https://example.co/kustomize/catalog.yaml#sha256=babababababababababababababababababababababababababababababababa",
                "https://example.co/kustomize/catalog.yaml".to_owned(),
            ),
        ] {
            let source: CatalogRef = viewed.parse().expect("a valid reference");
            let entry = source.trust_entry().expect("remote");
            let trusted = vec![entry.clone()];
            let as_loaded = source.remote_name().expect("remote");
            assert!(
                crate::remote::is_trusted(&as_loaded, &trusted),
                "{entry} must trust {as_loaded}"
            );
            assert!(
                crate::remote::is_trusted(&pinned, &trusted),
                "{entry} must trust {pinned}"
            );
        }
        assert_eq!(CatalogRef::Path("x".into()).trust_entry(), None);
    }
}

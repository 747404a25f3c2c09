//! The command line: function mode (no subcommand) and the human commands.
//!
//! `cli()` declares, `exec()` runs (cargo's split). Everything that writes to stdout goes
//! through [`Stdout`], so a stray print can never corrupt the KRM protocol.

mod explain;
mod render_cmd;

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::catalog::{self, Bundle, Catalog};
use crate::catalog_ref::CatalogRef;
use crate::config::{self, CatalogEntry, Settings};
use crate::logger::Level;
use crate::pipeline::{self, RunContext};
use crate::resource_list;
use crate::results::{Results, Severity};

const ABOUT: &str =
    "Resolve kinds through catalogs and expand service objects into manifests (a KRM function)";

const LONG_ABOUT: &str = "\
krm-catalog is a KRM function. With no subcommand it reads a ResourceList on stdin and writes one
on stdout, as kpt and kustomize expect:

  kpt fn eval --exec krm-catalog DIR
  kpt fn eval --image krm-catalog:latest DIR -- cluster-type=hub
  kustomize build --enable-alpha-plugins --enable-exec DIR

Service objects (one per service, e.g. `kind: CertManager`) and ServiceSets
(`apiVersion: services.krm-catalog.dev/v1alpha1`) among the items are defaulted and validated
against their catalog's schema, exactly as the Kubernetes apiserver defaults CRDs, and rendered
into manifests placed next to them. Every other item passes through untouched.

The function config is a `krm-catalog.dev/v1alpha1 ResolveCatalog`, a kpt ConfigMap
(keys: catalogs, trusted-catalogs, builtin, catalog-overwrite, cluster-type, offline,
unknown-fields, mode, allow-exec, allow-inline-exec, allow-network, container-engine,
verify-tags, allow-unpinned, cluster.<key>), or a
ServiceSet/service object carrying the same settings in its spec.

Exit codes: 0 success (warnings allowed); 1 error results or unreadable input; 2 usage error.";

/// Command line.
#[derive(Debug, Parser)]
#[command(name = "krm-catalog", version, about = ABOUT, long_about = LONG_ABOUT, disable_help_subcommand = true)]
pub struct Cli {
    /// More logging on stderr (-v info, -vv debug, -vvv trace); RUST_LOG works too
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Expand services in plain YAML files and print the manifests (standalone mode)
    Render(render_cmd::RenderArgs),
    /// Print a JSON Schema for editors (yaml-language-server): one kind, or all kinds
    Schema {
        /// A kind (`ServiceSet`, `CertManager`, `ResolveCatalog`); all kinds when omitted
        kind: Option<String>,
        /// Print the function's own KEP-2906 metadata (a KRMFunctionCatalog, YAML) instead
        #[arg(long, conflicts_with = "kind")]
        function_catalog: bool,
        #[command(flatten)]
        catalogs: CatalogArgs,
    },
    /// Describe a kind or one of its fields, like `kubectl explain`
    Explain {
        /// `KIND` or `KIND.field.path`, e.g. `CertManager.spec.config.clusterIssuer`
        target: String,
        #[command(flatten)]
        catalogs: CatalogArgs,
    },
    /// Inspect and check catalogs
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Print the version and the built-in catalog
    Version,
}

#[derive(Debug, Subcommand)]
enum CatalogCommand {
    /// Show what a catalog holds before you trust it: name, version, digest, publisher,
    /// services, kinds with their runtimes and pins, templates
    View {
        /// A directory or file, `https://…` (optionally `#sha256=<hex>`), `oci://…`, or `builtin`
        reference: String,
    },
    /// Fill in every missing sha256 of a local catalog's runtimes (images from their registry,
    /// binaries from their download), editing the files in place
    Lock {
        /// A catalog directory or file
        path: PathBuf,
    },
    /// Check every runtime digest of a catalog against registries and downloads; exits 1 on any
    /// mismatch, unpinned runtime or error (the CI gate)
    Verify {
        /// A directory or file, `https://…`, `oci://…`, or `builtin`
        reference: String,
    },
    /// Fetch remote catalogs into the cache (for offline runs and network-less containers)
    Pull {
        /// `https://…` (optionally `#sha256=<hex>`) or `oci://registry/repo:tag[@sha256:…]`
        #[arg(required = true)]
        references: Vec<String>,
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
    },
}

/// Which catalogs a human command looks at.
#[derive(Debug, Args, Clone, Default)]
pub struct CatalogArgs {
    /// A function config to take catalogs from (ResolveCatalog, ConfigMap or ServiceSet)
    #[arg(long, value_name = "FILE")]
    fn_config: Option<PathBuf>,
    /// An extra catalog directory or file (repeatable), searched after the built-in catalog
    #[arg(long = "catalog", value_name = "PATH")]
    catalogs: Vec<String>,
    /// Leave out the built-in catalog
    #[arg(long)]
    no_builtin: bool,
    /// Let later catalogs replace earlier definitions
    #[arg(long)]
    catalog_overwrite: bool,
}

/// Writes to stdout: the one place that does.
pub struct Stdout;

impl Stdout {
    /// Write everything, ignoring a closed pipe (`| head` is not an error).
    pub fn write(text: &str) -> bool {
        let mut out = std::io::stdout().lock();
        match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => true,
            Err(e) => {
                crate::log!(Level::Error, "cannot write to stdout: {e}");
                false
            }
        }
    }
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            // clap prints help/version to stdout and usage errors to stderr itself.
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    crate::logger::init(cli.verbose);
    exec(cli)
}

/// Run a parsed command line.
pub fn exec(cli: Cli) -> ExitCode {
    match cli.command {
        None => function_mode(),
        Some(Command::Render(args)) => render_cmd::run(&args),
        Some(Command::Schema {
            kind,
            function_catalog,
            catalogs,
        }) => {
            if function_catalog {
                function_catalog_yaml(&catalogs)
            } else {
                schema(kind.as_deref(), &catalogs)
            }
        }
        Some(Command::Explain { target, catalogs }) => explain::run(&target, &catalogs),
        Some(Command::Catalog(CatalogCommand::View { reference })) => catalog_view(&reference),
        Some(Command::Catalog(CatalogCommand::Pull { references })) => catalog_pull(&references),
        Some(Command::Catalog(CatalogCommand::Lock { path })) => catalog_lock(&path),
        Some(Command::Catalog(CatalogCommand::Verify { reference })) => catalog_verify(&reference),
        Some(Command::Catalog(CatalogCommand::Lint {
            paths,
            with_builtin,
            standard_pattern,
            cluster,
        })) => catalog_lint(&paths, with_builtin, standard_pattern.as_deref(), &cluster),
        Some(Command::Version) => version(),
    }
}

/// Print results on stderr, one line each (kustomize ignores `results`; stderr is all it shows).
pub fn report(results: &Results) {
    let mut err = std::io::stderr().lock();
    for r in results.sorted() {
        if r.severity != Severity::Info || crate::logger::enabled(Level::Info) {
            let _ = writeln!(err, "{r}");
        }
    }
}

fn function_mode() -> ExitCode {
    let mut input = String::new();
    let limit = crate::yaml::max_input_bytes() as u64 + 1;
    if let Err(e) = std::io::stdin()
        .lock()
        .take(limit)
        .read_to_string(&mut input)
    {
        crate::log!(Level::Error, "cannot read the ResourceList from stdin: {e}");
        return ExitCode::from(1);
    }
    let list = match resource_list::read_owned(input) {
        Ok(list) => list,
        Err(e) => {
            crate::log!(Level::Error, "{e}");
            return ExitCode::from(1);
        }
    };
    let outcome = pipeline::run(list, &RunContext::default());
    let sorted: Vec<serde_json::Value> = outcome
        .results
        .sorted()
        .iter()
        .map(crate::results::KrmResult::to_value)
        .collect();
    let text = resource_list::write(outcome.list, Some(sorted));
    let written = Stdout::write(&text);
    report(&outcome.results);
    if outcome.results.has_errors() || !written {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The one YAML document of a `--fn-config` file. A file of several documents is refused by
/// name (the parser's own message points at its Rust API).
pub(crate) fn parse_fn_config(
    path: &std::path::Path,
    text: &str,
) -> Result<serde_json::Value, String> {
    let docs = crate::yaml::parse_stream(text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut docs: Vec<serde_json::Value> = docs
        .into_iter()
        .map(|d| d.value)
        .filter(|v| !v.is_null())
        .collect();
    match docs.len() {
        1 => Ok(docs.remove(0)),
        n => Err(format!(
            "{}: expected one YAML document (the function config), found {n}; give the function config a file of its own",
            path.display()
        )),
    }
}

/// Load the catalogs a human command asked for; errors are printed.
fn load_for_command(args: &CatalogArgs) -> Option<Catalog> {
    let mut settings = Settings::default();
    if let Some(path) = &args.fn_config {
        let text = match fs_err::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                crate::log!(Level::Error, "{e}");
                return None;
            }
        };
        let doc = match parse_fn_config(path, &text) {
            Ok(d) => d,
            Err(e) => {
                crate::log!(Level::Error, "{e}");
                return None;
            }
        };
        let fc = config::parse(Some(&doc));
        for p in &fc.problems {
            crate::log!(Level::Error, "{}: {p}", path.display());
        }
        if !fc.problems.is_empty() {
            return None;
        }
        settings = fc.settings;
    }
    for (i, c) in args.catalogs.iter().enumerate() {
        settings.catalogs.push(CatalogEntry {
            source: CatalogRef::Path(c.clone()),
            field: format!("--catalog[{i}]"),
            standard_pattern: None,
        });
    }
    if args.no_builtin {
        settings.builtin = false;
    }
    settings.catalog_overwrite |= args.catalog_overwrite;
    let (catalog, errors) = pipeline::load_catalogs(&settings, &[], &RunContext::default());
    let mut failed = false;
    for (e, _) in errors {
        let level = if e.warning { Level::Warn } else { Level::Error };
        failed |= !e.warning;
        crate::log!(level, "{e}");
    }
    if failed { None } else { Some(catalog) }
}

fn print_json(value: &serde_json::Value) -> ExitCode {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    if Stdout::write(&(text + "\n")) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn schema(kind: Option<&str>, args: &CatalogArgs) -> ExitCode {
    let Some(catalog) = load_for_command(args) else {
        return ExitCode::from(1);
    };
    let value = match kind {
        None => catalog::schema::all(&catalog),
        Some(k) => match explain::schema_for_kind(&catalog, k, catalog::schema::Flavor::Validation)
        {
            Ok(v) => v,
            Err(e) => {
                crate::log!(Level::Error, "{e}");
                return ExitCode::from(1);
            }
        },
    };
    print_json(&value)
}

fn function_catalog_yaml(args: &CatalogArgs) -> ExitCode {
    let Some(catalog) = load_for_command(args) else {
        return ExitCode::from(1);
    };
    let text = crate::yaml::emit(&catalog::schema::krm_function_catalog(&catalog));
    if Stdout::write(&text) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A catalog reference on the command line (see [`CatalogRef`]); a bad one is logged, naming
/// the URL (no field path does here), before any request.
fn parse_reference(reference: &str) -> Option<CatalogRef> {
    match reference.parse::<CatalogRef>() {
        Ok(source) => Some(source),
        Err(e) => {
            crate::log!(Level::Error, "{}", e.standalone());
            None
        }
    }
}

/// The `trustedCatalogs` entry `catalog view` suggests: one that trusts the reference as
/// given and the pinned form it recommends (`repo:tag@sha256:…` for OCI, which an entry with
/// the tag would not match; the URL without `#sha256=` for HTTPS).
fn trust_entry(source: &CatalogRef) -> Option<String> {
    match source {
        CatalogRef::Url { url, .. } => Some(url.clone()),
        CatalogRef::Oci(r) => {
            let name = r.split('@').next().unwrap_or(r);
            let repository = match name.rfind(':') {
                Some(i) if !name[i..].contains('/') => &name[..i],
                _ => name,
            };
            Some(format!("oci://{repository}"))
        }
        CatalogRef::Path(_) => None,
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
        Runtime::Container { image, sha256, .. } => {
            let pinned = match (image.contains("@sha256:"), sha256) {
                (_, Some(d)) => format!("pinned sha256:{}", d.trim_start_matches("sha256:")),
                (true, None) => "pinned in the image reference".to_owned(),
                (false, None) => "NOT PINNED (no sha256)".to_owned(),
            };
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
        Runtime::Starlark { source } => (
            format!("starlark {source}"),
            "NOT SUPPORTED (items of this kind fail)".to_owned(),
        ),
        Runtime::Choice { container, exec } => {
            let (c, cp) = describe_function_runtime(container);
            let (e, ep) = describe_function_runtime(exec);
            (format!("{c} | {e}"), format!("{cp} | {ep}"))
        }
    }
}

fn catalog_lock(path: &std::path::Path) -> ExitCode {
    let remote = crate::remote::Remote::new(false);
    match crate::runtime::lock::lock(path, &remote) {
        Ok(written) => {
            let mut out = String::new();
            for line in &written {
                let _ = writeln!(out, "locked {line}");
            }
            if written.is_empty() {
                let _ = writeln!(out, "{}: every runtime is already pinned", path.display());
            }
            if Stdout::write(&out) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            crate::log!(Level::Error, "{e}");
            ExitCode::from(1)
        }
    }
}

fn catalog_verify(reference: &str) -> ExitCode {
    let Some(source) = parse_reference(reference) else {
        return ExitCode::from(1);
    };
    let remote = crate::remote::Remote::new(false);
    let bundle = match &source {
        _ if reference == "builtin" => crate::builtin::bundle(),
        CatalogRef::Path(p) => Bundle::from_path(p, std::path::Path::new(p)),
        _ => match remote.pull(&source) {
            Ok(b) => b,
            Err(e) => {
                crate::log!(Level::Error, "{e}");
                return ExitCode::from(1);
            }
        },
    };
    let failed_load = bundle.problems.iter().any(|p| !p.warning);
    for p in &bundle.problems {
        crate::log!(if p.warning { Level::Warn } else { Level::Error }, "{p}");
    }
    // `file://` URIs resolve inside a local catalog's root; remote catalogs cannot name files.
    let root = match &source {
        CatalogRef::Path(p) if reference != "builtin" => {
            Some(crate::runtime::lock::catalog_root(std::path::Path::new(p)))
        }
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
    let checks = crate::runtime::lock::verify(&functions, &services, &remote, root.as_deref());
    let mut out = String::new();
    for check in &checks {
        let _ = writeln!(out, "{check}");
    }
    let bad = checks.iter().filter(|c| c.status != "ok").count();
    let _ = writeln!(out, "{} runtimes checked, {bad} not ok", checks.len());
    if Stdout::write(&out) && bad == 0 && !failed_load {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn catalog_pull(references: &[String]) -> ExitCode {
    let remote = crate::remote::Remote::new(false);
    let mut failed = false;
    let mut out = String::new();
    for reference in references {
        let Some(source) = parse_reference(reference) else {
            failed = true;
            continue;
        };
        if source.is_path() {
            crate::log!(
                Level::Error,
                "{reference}: not a remote catalog (https://… or oci://…)"
            );
            failed = true;
            continue;
        }
        match remote.pull(&source) {
            Ok(bundle) if bundle.problems.iter().all(|p| p.warning) => {
                let _ = writeln!(
                    out,
                    "pulled {reference} ({} services, content sha256:{}) into {}",
                    bundle.definitions.len(),
                    bundle.digest,
                    remote.cache().describe()
                );
            }
            Ok(bundle) => {
                for p in bundle.problems.iter().filter(|p| !p.warning) {
                    crate::log!(Level::Error, "{p}");
                }
                failed = true;
            }
            Err(e) => {
                crate::log!(Level::Error, "{e}");
                failed = true;
            }
        }
    }
    if remote.cache().root().is_none() {
        crate::log!(
            Level::Warn,
            "no cache directory: set {} so that pulled catalogs are kept",
            crate::remote::cache::CACHE_ENV
        );
    }
    if Stdout::write(&out) && !failed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn catalog_view(reference: &str) -> ExitCode {
    let Some(source) = parse_reference(reference) else {
        return ExitCode::from(1);
    };
    let remote = !source.is_path();
    let bundle = if reference == "builtin" {
        crate::builtin::bundle()
    } else if remote {
        // Viewing is how a user decides to trust: it loads without the trust check.
        match crate::remote::Remote::new(false).pull(&source) {
            Ok(b) => b,
            Err(e) => {
                crate::log!(Level::Error, "{e}");
                return ExitCode::from(1);
            }
        }
    } else {
        Bundle::from_path(reference, std::path::Path::new(reference))
    };
    // The catalog is shown alone: a pattern it borrows (its Catalog document's
    // standardPattern) is named, not loaded, so asking for one does not fail the view.
    let mut bundle = bundle;
    let borrows = bundle.standard_pattern.take();
    let (catalog, errors) = Catalog::merge(vec![bundle], false);
    for e in &errors {
        crate::log!(if e.warning { Level::Warn } else { Level::Error }, "{e}");
    }
    if errors.iter().any(|e| !e.warning) {
        return ExitCode::from(1);
    }
    let Some(info) = catalog.bundles.first() else {
        return ExitCode::from(1);
    };
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
        let pinned = match &source {
            CatalogRef::Url { url, .. } => {
                format!("url: {url}, sha256: {}", pin.trim_start_matches("sha256:"))
            }
            CatalogRef::Oci(r) => format!("oci: {}@{pin}", r.split('@').next().unwrap_or(r)),
            CatalogRef::Path(_) => pin.clone(),
        };
        let _ = writeln!(out, "Pin:       {pinned}");
    }
    let trust = if let Some(entry) = trust_entry(&source) {
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
    out.push_str(&line(&header));
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
    let _ = writeln!(out, "\nTemplates ({}):", templates.len());
    for t in templates {
        let kind = if catalog::is_partial(t) {
            " (partial)"
        } else {
            ""
        };
        let _ = writeln!(out, "  {t}{kind}");
    }
    if Stdout::write(&out) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn catalog_lint(
    paths: &[PathBuf],
    with_builtin: bool,
    standard_pattern: Option<&str>,
    cluster: &[String],
) -> ExitCode {
    let mut cluster_values = serde_json::Map::new();
    for kv in cluster {
        if let Some((k, v)) = kv.split_once('=') {
            cluster_values.insert(k.to_owned(), serde_json::Value::String(v.to_owned()));
        } else {
            crate::log!(Level::Error, "--cluster {kv}: expected KEY=VALUE");
            return ExitCode::from(2);
        }
    }
    let mut failed = false;
    let mut err = std::io::stderr().lock();
    for path in paths {
        let label = path.display().to_string();
        let mut bundle = Bundle::from_path(&label, path);
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
        // Rendering a catalog that did not load cleanly would only repeat its errors.
        if !problems.iter().any(|e| !e.warning) {
            let linted = bundle_label.as_str();
            problems.extend(catalog::lint_only(&catalog, &cluster_values, |l| {
                !lend_only || l == linted
            }));
        }
        for e in &mut problems {
            failed |= !e.warning;
            // A template that needs a cluster value (the built-in pattern's cluster.repoURL
            // for kubara charts) is no fault of the catalog: say how to give one.
            if !e.warning && cluster_values.is_empty() && e.message.contains("cluster.") {
                e.message.push_str(
                    "; this test render has no cluster values: give them with `--cluster KEY=VALUE`",
                );
            }
            let _ = writeln!(err, "{}: {e}", if e.warning { "warning" } else { "error" });
        }
        if !problems.iter().any(|e| !e.warning) {
            // Only the linted catalog counts, not one loaded to lend it a pattern.
            let linted = catalog
                .bundles
                .iter()
                .position(|b| b.origin.label() == bundle_label)
                .filter(|_| lend_only);
            let services = catalog
                .services()
                .iter()
                .filter(|s| linted.is_none_or(|i| s.bundle == i))
                .count();
            let templates = match linted {
                Some(i) => catalog.own_template_count(i),
                None => catalog.templates().count(),
            };
            let functions = catalog
                .kinds()
                .iter()
                .filter(|(_, k)| matches!(k, catalog::Kind::Function { .. }))
                .count();
            let _ = writeln!(
                err,
                "ok: {label}: {services} services, {functions} function kinds, {templates} templates"
            );
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn version() -> ExitCode {
    let (catalog, _) = Catalog::merge(vec![crate::builtin::bundle()], false);
    let builtin = catalog
        .bundles
        .first()
        .map(|b| format!("{} sha256:{}", b.reference, b.digest))
        .unwrap_or_default();
    let text = format!(
        "krm-catalog {}\nbuilt-in catalog: {builtin}\n",
        env!("CARGO_PKG_VERSION")
    );
    if Stdout::write(&text) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 8 point 3 (acceptance review): `--help` lists every ConfigMap key the function
    /// accepts; `unknown-fields`, `verify-tags` and `allow-unpinned` were missing.
    #[test]
    fn issue8_help_lists_every_configmap_key() {
        let help: String = LONG_ABOUT.split_whitespace().collect::<Vec<_>>().join(" ");
        for key in crate::config::CONFIGMAP_KEYS {
            assert!(
                help.contains(&format!(" {key},")) || help.contains(&format!(" {key})")),
                "{key} is missing from the help text"
            );
        }
    }

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
            let entry = trust_entry(&source).expect("remote");
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
        assert_eq!(trust_entry(&CatalogRef::Path("x".into())), None);
    }
}

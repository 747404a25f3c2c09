//! `krm-catalog import kubara CONFIG [-o DIR]`: a kubara `config.yaml` into one `ServiceSet`
//! per cluster. The conversion is `service::kubara_config`; this file reads, checks each set
//! by rendering it as `render` would, and writes.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::Value;

use super::{CatalogArgs, CliError, ReadError, Stdout, load_for_command};
use crate::logger::Level;
use crate::pipeline::{self, RunContext};
use crate::resource_list::ResourceList;
use crate::results::Severity;
use crate::service::kubara_config;

/// `import`: move in from another tool.
#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Turn a kubara config.yaml into one ServiceSet per cluster (stdout, or one file per
    /// cluster with -o)
    #[command(long_about = KUBARA_ABOUT)]
    Kubara(KubaraArgs),
}

const KUBARA_ABOUT: &str = "\
Turn a kubara config.yaml into one ServiceSet per cluster.

A file without `version` is migrated as kubara migrates it (camelCase service keys,
storageClassName, ingress.annotations, cert-manager's clusterIssuer, cluster type `worker`),
with a warning per rewrite. kubara's defaults are filled in (stage, ingressClassName,
targetRevision). Unknown keys and values kubara's schema rejects are errors naming the file and
the path. Each ServiceSet is then rendered with the catalogs of --fn-config (the built-in
catalog without it), as `krm-catalog render --fn-config FILE` will render it; nothing is
written unless all of them render.

Without -o, the ServiceSets go to stdout as one multi-document YAML stream. With -o DIR, each
goes to DIR/<cluster name>.yaml; existing files are left alone and the import fails, unless
--force.";

/// Arguments of `import kubara`.
#[derive(Debug, Args)]
pub struct KubaraArgs {
    /// The kubara config file (`config.yaml`)
    config: PathBuf,
    /// Write one file per cluster, `<cluster name>.yaml`, into this directory (made if missing)
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// Replace files that exist in the -o directory
    #[arg(long, requires = "output")]
    force: bool,
    /// The function config the ServiceSets will be rendered with (its catalogs define the
    /// services; ResolveCatalog, ConfigMap or ServiceSet)
    #[arg(long, value_name = "FILE")]
    fn_config: Option<PathBuf>,
}

/// Run `import`.
pub fn run(command: &ImportCommand) -> Result<(), CliError> {
    match command {
        ImportCommand::Kubara(args) => kubara(args),
    }
}

fn kubara(args: &KubaraArgs) -> Result<(), CliError> {
    let label = args.config.display().to_string();
    let doc = read_config(&args.config)?;
    let catalog = load_for_command(&CatalogArgs {
        fn_config: args.fn_config.clone(),
        ..CatalogArgs::default()
    })?;
    let ids: Vec<&str> = catalog
        .services()
        .iter()
        .map(|s| s.definition.id.as_str())
        .collect();
    let imported = kubara_config::convert(&doc, &ids).map_err(|e| {
        CliError::Problems(
            e.problems
                .iter()
                .map(|p| (Severity::Error, format!("{label}: {p}")))
                .collect(),
        )
    })?;
    let mut problems: Vec<(Severity, String)> = imported
        .notes
        .iter()
        .map(|p| (Severity::Warning, format!("{label}: {p}")))
        .collect();
    for (i, (name, _)) in imported.sets.iter().enumerate() {
        if !crate::names::is_dns1123_subdomain(name) {
            problems.push((
                Severity::Error,
                format!(
                    "{label}: clusters[{i}].name: Invalid value: \"{name}\": a cluster name becomes the ServiceSet's metadata.name and its file name: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
                ),
            ));
        }
    }
    problems.extend(outside_cluster_type(&label, &catalog, &imported.sets));
    if imported.sets.is_empty() {
        problems.push((
            Severity::Warning,
            format!("{label}: clusters: empty, nothing to import"),
        ));
    }
    super::error::fail_on_errors(problems)?;
    let function_config = match &args.fn_config {
        None => None,
        Some(path) => Some(super::parse_fn_config(
            path,
            &fs_err::read_to_string(path)?,
        )?),
    };
    // Each set alone, as `render` will see it: generated objects of two clusters (the same
    // Namespace) must not meet in one run.
    let ctx = args
        .fn_config
        .as_deref()
        .map_or_else(RunContext::default, RunContext::for_config_file);
    let mut found = Vec::new();
    for (i, (name, set)) in imported.sets.iter().enumerate() {
        let outcome = pipeline::run(
            ResourceList {
                items: vec![set.clone()],
                function_config: function_config.clone(),
                verbatim: None,
            },
            &ctx,
        );
        for result in outcome.results.sorted() {
            if result.severity != Severity::Info {
                found.push((result.severity, in_config(&label, i, name, &result)));
            }
        }
    }
    if found.iter().any(|(s, _)| *s == Severity::Error) {
        found.push((
            Severity::Error,
            format!(
                "{label}: nothing written: the ServiceSets do not render{}",
                if args.fn_config.is_none() {
                    " with the built-in catalog alone (name the catalogs that define your services with --fn-config)"
                } else {
                    ""
                }
            ),
        ));
    }
    super::error::fail_on_errors(found)?;
    match &args.output {
        None => Stdout::print(&crate::yaml::emit_stream(
            imported.sets.iter().map(|(_, set)| set),
        )),
        Some(dir) => write_files(dir, &imported.sets, args.force),
    }
}

/// kubara's ADR-0002 release materialised every catalog service on every cluster; a
/// `ServiceSet` leaves out the services whose `clusterTypes` do not name its cluster type (as
/// kubara does since ADR-0003). Say so for each service that kubara would have deployed there
/// and the set will not.
fn outside_cluster_type(
    label: &str,
    catalog: &crate::catalog::Catalog,
    sets: &[(String, Value)],
) -> Vec<(Severity, String)> {
    let mut out = Vec::new();
    for (i, (_, set)) in sets.iter().enumerate() {
        let cluster_type = set["spec"]["clusterType"].as_str();
        for service in catalog.services() {
            let def = &service.definition;
            if def.applies_to(cluster_type)
                || def.status != crate::service::Status::Enabled
                || set["spec"]["services"].get(&def.id).is_some()
            {
                continue;
            }
            out.push((
                Severity::Warning,
                format!(
                    "{label}: clusters[{i}].services: \"{}\" is left out on a {} cluster (its clusterTypes: {}), as kubara does since ADR-0003; kubara's ADR-0002 release deployed it: set its status: enabled to keep it",
                    def.id,
                    cluster_type.unwrap_or_default(),
                    def.cluster_types.join(", "),
                ),
            ));
        }
    }
    out
}

/// A result of rendering cluster `i`'s set, said where the user wrote it: a finding under
/// `spec.services` is at `clusters[i].services` of the kubara file; any other (a template's,
/// a catalog's) as the run says it.
fn in_config(label: &str, i: usize, name: &str, result: &crate::results::KrmResult) -> String {
    let ours = result
        .resource_ref
        .as_ref()
        .is_some_and(|r| r.kind == "ServiceSet" && r.name == name);
    match result.field.as_deref() {
        Some(field) if ours && field.starts_with("spec.services") => {
            let to = format!("clusters[{i}].services");
            let field = field.replacen("spec.services", &to, 1);
            // The message names the field too (`unknown field "spec.services.…"`, kube-openapi's
            // `spec.services.… in body`).
            let message = result.message.replace("spec.services.", &format!("{to}."));
            format!("{label}: {field}: {message}")
        }
        _ => format!(
            "{label}: clusters[{i}] (ServiceSet {name}): {}",
            result.located()
        ),
    }
}

/// Read and parse the config, bounded as every input is.
fn read_config(path: &Path) -> Result<Value, CliError> {
    let limit = crate::yaml::max_input_bytes();
    let mut text = String::new();
    fs_err::File::open(path)?
        .take(limit as u64 + 1)
        .read_to_string(&mut text)?;
    if text.len() > limit {
        return Err(ReadError::in_file(
            path,
            format!("larger than {limit} bytes (KRM_CATALOG_MAX_INPUT_BYTES)"),
        )
        .into());
    }
    let docs = crate::yaml::parse_stream(&text).map_err(|e| ReadError::in_file(path, e))?;
    let mut docs: Vec<Value> = docs
        .into_iter()
        .map(|d| d.value)
        .filter(|v| !v.is_null())
        .collect();
    match docs.len() {
        0 => Ok(Value::Null),
        1 => Ok(docs.remove(0)),
        n => Err(ReadError::in_file(
            path,
            format!("holds {n} YAML documents; a kubara config is one (version, clusters)"),
        )
        .into()),
    }
}

/// Write `<name>.yaml` per set into `dir`: every existing file is named before anything is
/// written (unless `force`), and each file is written beside its place and renamed, so none is
/// ever half written.
fn write_files(dir: &Path, sets: &[(String, Value)], force: bool) -> Result<(), CliError> {
    let targets: Vec<PathBuf> = sets
        .iter()
        .map(|(name, _)| dir.join(format!("{name}.yaml")))
        .collect();
    if !force {
        let existing: Vec<(Severity, String)> = targets
            .iter()
            .filter(|t| t.symlink_metadata().is_ok())
            .map(|t| {
                (
                    Severity::Error,
                    format!(
                        "{}: exists; nothing written (--force replaces it)",
                        t.display()
                    ),
                )
            })
            .collect();
        if !existing.is_empty() {
            return Err(CliError::Problems(existing));
        }
    }
    fs_err::create_dir_all(dir)?;
    for ((name, set), target) in sets.iter().zip(&targets) {
        let temp = dir.join(format!(".{name}.yaml.{}.tmp", std::process::id()));
        fs_err::write(&temp, crate::yaml::emit(set))?;
        if let Err(e) = fs_err::rename(&temp, target) {
            let _ = fs_err::remove_file(&temp);
            return Err(e.into());
        }
        crate::log!(Level::Info, "wrote {}", target.display());
    }
    Ok(())
}

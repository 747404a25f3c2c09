//! `krm-catalog render`: the pipeline over plain YAML files, for local debugging and CI jobs
//! without kpt. Output is what kustomize would print: no local-config source objects, no
//! orchestrator annotations.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::Value;

use super::{CliError, ReadError, Stdout, report};
use crate::logger::Level;
use crate::pipeline::{self, RunContext};
use crate::resource_list::{self, ResourceList};

/// Arguments of `render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Input files or directories (`-` for stdin); stdin when none are given
    #[arg(short = 'f', long = "filename", value_name = "FILE|DIR|-")]
    files: Vec<String>,
    /// Input files or directories, as positional arguments
    #[arg(value_name = "FILE|DIR")]
    paths: Vec<String>,
    /// The function config (ResolveCatalog, ConfigMap or ServiceSet)
    #[arg(long, value_name = "FILE")]
    fn_config: Option<PathBuf>,
    /// Keep the source objects (service objects, ServiceSets, inline catalogs) in the output
    #[arg(long)]
    keep_sources: bool,
    /// Output order: `kustomize` sorts as `kustomize build` does (Namespaces, CRDs, service
    /// accounts, RBAC, ConfigMaps, … webhooks last); `input` keeps the function's order (each
    /// generated object right after its source)
    #[arg(long, value_enum, default_value_t = Order::Kustomize)]
    order: Order,
}

/// The order `render` prints objects in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Order {
    /// `kustomize build`'s default (legacy) sort.
    Kustomize,
    /// The function's order: input items in input order, generated objects after their source.
    Input,
}

/// What the input files hold: items, and the function config of a ResourceList file.
#[derive(Default)]
struct Inputs {
    items: Vec<Value>,
    /// The `functionConfig` of a ResourceList input, with the file it came from.
    function_config: Option<(String, Value)>,
    /// `ResolveCatalog` documents among the plain inputs: what the message calls them, and
    /// their file (`None` for stdin).
    configs: Vec<(String, Option<PathBuf>)>,
}

/// Whether a document is a ResourceList (`config.kubernetes.io/v1` or `v1alpha1`).
fn is_resource_list(doc: &Value) -> bool {
    resource_list::str_at(doc, &["kind"]) == "ResourceList"
        && resource_list::str_at(doc, &["apiVersion"]).starts_with("config.kubernetes.io/")
}

/// Our own source kinds, which stay in a directory's input even when marked local-config:
/// service objects and ServiceSets, catalogs, ServiceDefinitions and our function config.
fn is_ours(item: &Value) -> bool {
    let api = resource_list::str_at(item, &["apiVersion"]);
    let kind = resource_list::str_at(item, &["kind"]);
    let group = api.rsplit_once('/').map_or("", |(g, _)| g);
    group == crate::service::definition::SERVICES_GROUP
        || (group == crate::config::GROUP && kind == crate::config::KIND)
        || (group == "kubara.io" && matches!(kind, "ServiceDefinition" | "Catalog"))
        || crate::catalog::kep::is_kep_catalog(item)
        || crate::catalog::kep::is_function_definition(item)
}

/// Files of a directory that belong to an orchestrator, not to the package's resources.
fn is_orchestrator_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        matches!(
            n,
            "kustomization.yaml" | "kustomization.yml" | "Kustomization" | "Kptfile"
        )
    })
}

/// Read the YAML documents of one input. `path` names the file in annotations (`None` for
/// stdin); `label` names it in messages. In a directory (`from_dir`), objects marked
/// local-config that are not ours are orchestrator configuration and are left out.
fn read_docs(
    text: &str,
    path: Option<&str>,
    (label, file): (&str, Option<&Path>),
    from_dir: bool,
    inputs: &mut Inputs,
) -> Result<(), CliError> {
    let docs = crate::yaml::parse_stream(text).map_err(|e| ReadError::at(label, e))?;
    for (index, doc) in docs.into_iter().filter(|d| !d.value.is_null()).enumerate() {
        let mut item = doc.value;
        if !item.is_object() {
            return Err(ReadError::NotAnObject {
                label: label.to_owned(),
                index,
                line: doc.line,
            }
            .into());
        }
        let missing: Vec<&str> = ["apiVersion", "kind"]
            .into_iter()
            .filter(|k| resource_list::str_at(&item, &[k]).trim().is_empty())
            .collect();
        if !missing.is_empty() {
            return Err(ReadError::NotAKubernetesObject {
                label: label.to_owned(),
                index,
                line: doc.line,
                missing: missing.join("` or `"),
            }
            .into());
        }
        if is_resource_list(&item) {
            read_resource_list(item, label, from_dir, inputs)?;
            continue;
        }
        if resource_list::str_at(&item, &["apiVersion"])
            .rsplit_once('/')
            .map(|(g, _)| g)
            == Some(crate::config::GROUP)
            && resource_list::str_at(&item, &["kind"]) == crate::config::KIND
        {
            inputs.configs.push((
                format!("{label}: document {index} (line {})", doc.line),
                file.map(Path::to_path_buf),
            ));
        }
        if from_dir && resource_list::is_local_config(&item) && !is_ours(&item) {
            crate::log!(
                Level::Info,
                "{label}: left out document {index} ({}): local-config of another tool",
                resource_list::identity(&item)
            );
            continue;
        }
        if let Some(path) = path {
            let index = index.to_string();
            resource_list::set_annotation(&mut item, resource_list::PATH, path);
            resource_list::set_annotation(&mut item, resource_list::INDEX, &index);
            resource_list::set_annotation(&mut item, resource_list::LEGACY_PATH, path);
            resource_list::set_annotation(&mut item, resource_list::LEGACY_INDEX, &index);
        }
        inputs.items.push(item);
    }
    Ok(())
}

/// A ResourceList input (what `kpt fn source` writes, or a saved function input): its items as
/// they are (annotations included), and its function config.
/// A ResourceList found in a directory (`from_dir`) is a file of the package, which must not
/// choose the settings (it could allow exec runtimes of its own inline catalogs, issue 9 F4):
/// only a file named on the command line may carry the function config.
fn read_resource_list(
    mut list: Value,
    label: &str,
    from_dir: bool,
    inputs: &mut Inputs,
) -> Result<(), ReadError> {
    match list.get_mut("items").map(Value::take) {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.into_iter().enumerate() {
                if !item.is_object() {
                    return Err(ReadError::ItemNotAnObject {
                        label: label.to_owned(),
                        index: i,
                    });
                }
                inputs.items.push(item);
            }
        }
        Some(other) => {
            return Err(ReadError::WrongType {
                label: label.to_owned(),
                field: "items",
                expected: "a list",
                found: crate::strict::type_name(&other),
            });
        }
    }
    match list.get_mut("functionConfig").map(Value::take) {
        None | Some(Value::Null) => {}
        Some(Value::Object(_)) if from_dir => {
            return Err(ReadError::ConfigInDirectory(label.to_owned()));
        }
        Some(config @ Value::Object(_)) => {
            if let Some((first, _)) = &inputs.function_config {
                return Err(ReadError::SecondConfig {
                    label: label.to_owned(),
                    first: first.clone(),
                });
            }
            inputs.function_config = Some((label.to_owned(), config));
        }
        Some(other) => {
            return Err(ReadError::WrongType {
                label: label.to_owned(),
                field: "functionConfig",
                expected: "an object",
                found: crate::strict::type_name(&other),
            });
        }
    }
    Ok(())
}

/// The YAML and JSON files under `dir`, sorted, with their paths relative to `root`. Links
/// are followed (a package may link shared files in), but each directory is read once, by
/// device and inode, so a link loop ends.
fn collect_dir(
    root: &Path,
    dir: &Path,
    visited: &mut std::collections::HashSet<(u64, u64)>,
    fn_config: Option<&Path>,
    out: &mut Vec<(String, PathBuf)>,
) -> Result<(), CliError> {
    if !visited.insert(crate::walk::dir_id(dir)?) {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = fs_err::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_dir(root, &path, visited, fn_config, out)?;
        } else if fn_config.is_some_and(|c| fs_err::canonicalize(&path).is_ok_and(|p| p == c)) {
            // The settings, not a resource: rendered out it would be applied with the
            // manifests (an Argo CD plugin runs `render --fn-config F -f .` where F lives).
            crate::log!(
                Level::Info,
                "{}: left out (the --fn-config file)",
                path.display()
            );
        } else if is_orchestrator_file(&path) {
            crate::log!(
                Level::Info,
                "{}: left out (an orchestrator's file)",
                path.display()
            );
        } else {
            let lower = path.to_string_lossy().to_ascii_lowercase();
            if !crate::yaml::has_extension(&lower, &["yaml", "yml", "json"]) {
                continue;
            }
            // A pipe or a device (a link to /dev/zero) is not a file of the package: reading
            // it would block or never end.
            if !path.is_file() {
                crate::log!(
                    Level::Warn,
                    "{}: left out (not a regular file: a pipe, a device or a broken link)",
                    path.display()
                );
                continue;
            }
            out.push((crate::catalog::relative_name(root, &path), path));
        }
    }
    Ok(())
}

/// Read one input, bounded like the function's stdin: all inputs together may hold at most
/// `KRM_CATALOG_MAX_INPUT_BYTES` (`total` counts what was read before), so a link to
/// `/dev/zero` or a huge file fails early instead of filling memory.
fn read_text(
    reader: impl std::io::Read,
    label: &str,
    total: &mut usize,
) -> Result<String, ReadError> {
    let limit = crate::yaml::max_input_bytes();
    let room = limit.saturating_sub(*total);
    let mut text = String::new();
    reader
        .take(room as u64 + 1)
        .read_to_string(&mut text)
        .map_err(|e| ReadError::at(label, e))?;
    if text.len() > room {
        return Err(ReadError::TooBig {
            label: label.to_owned(),
            limit,
        });
    }
    *total += text.len();
    Ok(text)
}

fn read_inputs(inputs: &[String], fn_config: Option<&Path>) -> Result<Inputs, CliError> {
    let fn_config = fn_config.and_then(|c| fs_err::canonicalize(c).ok());
    let mut read = Inputs::default();
    let mut total = 0;
    let inputs: Vec<String> = if inputs.is_empty() {
        vec!["-".to_owned()]
    } else {
        inputs.to_vec()
    };
    for input in inputs {
        if input == "-" {
            let text = read_text(std::io::stdin().lock(), "stdin", &mut total)?;
            read_docs(&text, None, ("stdin", None), false, &mut read)?;
            continue;
        }
        let path = Path::new(&input);
        if path.is_dir() {
            let mut files = Vec::new();
            collect_dir(
                path,
                path,
                &mut std::collections::HashSet::new(),
                fn_config.as_deref(),
                &mut files,
            )?;
            for (rel, file) in files {
                let label = file.display().to_string();
                let opened = fs_err::File::open(&file)?;
                let text = read_text(opened, &label, &mut total)?;
                read_docs(&text, Some(&rel), (&label, Some(&file)), true, &mut read)?;
            }
        } else {
            let opened = fs_err::File::open(path)?;
            let text = read_text(opened, &input, &mut total)?;
            let rel = input.trim_start_matches("./").to_owned();
            read_docs(&text, Some(&rel), (&input, Some(path)), false, &mut read)?;
        }
    }
    Ok(read)
}

/// Run `render`.
pub fn run(args: &RenderArgs) -> Result<(), CliError> {
    let mut inputs = args.files.clone();
    inputs.extend(args.paths.iter().cloned());
    let Inputs {
        items,
        function_config: listed_config,
        configs,
    } = read_inputs(&inputs, args.fn_config.as_deref())?;
    // A ResolveCatalog among the inputs is not read as the function config (only
    // --fn-config or a ResourceList's functionConfig are): rendering without it would
    // succeed with other settings than the user wrote, so it must be the --fn-config file.
    let same_file = |file: &Option<PathBuf>| {
        let canonical = |p: &Path| fs_err::canonicalize(p).ok();
        match (file, &args.fn_config) {
            (Some(f), Some(c)) => canonical(f).is_some_and(|f| Some(f) == canonical(c)),
            _ => false,
        }
    };
    let stray: Vec<CliError> = configs
        .iter()
        .filter(|(_, file)| !same_file(file))
        .map(|(label, _)| {
            ReadError::StrayConfig {
                label: label.clone(),
                fn_config: args.fn_config.as_ref().map(|c| c.display().to_string()),
            }
            .into()
        })
        .collect();
    if !stray.is_empty() {
        return Err(CliError::Several(stray));
    }
    // Relative paths of the config resolve against the directory of its file; the package is
    // the one directory given (its files' paths are relative to it), else the working directory.
    let mut ctx = match (&args.fn_config, &listed_config) {
        (Some(file), _) => RunContext::for_config_file(file),
        (None, Some((label, _))) if label != "stdin" => {
            RunContext::for_config_file(Path::new(label))
        }
        (None, _) => RunContext::default(),
    };
    if let [only] = inputs.as_slice()
        && Path::new(only).is_dir()
    {
        ctx.package = Some(ctx.cwd.join(only));
    }
    let function_config = match &args.fn_config {
        None => listed_config.map(|(_, config)| config),
        Some(path) if listed_config.is_some() => {
            let from = listed_config.map(|(from, _)| from).unwrap_or_default();
            return Err(ReadError::TwoConfigs {
                from,
                fn_config: path.display().to_string(),
            }
            .into());
        }
        Some(path) => match super::parse_fn_config(path, &fs_err::read_to_string(path)?)? {
            Value::Object(m) => Some(Value::Object(m)),
            _ => return Err(ReadError::FnConfigNotAnObject(path.display().to_string()).into()),
        },
    };
    let outcome = pipeline::run(
        ResourceList {
            items,
            function_config,
            verbatim: None,
        },
        &ctx,
    );
    let mut objects: Vec<Value> = outcome
        .list
        .items
        .into_iter()
        .filter(|item| args.keep_sources || !resource_list::is_local_config(item))
        .map(resource_list::Item::into_value)
        .map(|mut item| {
            resource_list::remove_annotations(&mut item, resource_list::ORCHESTRATOR_ANNOTATIONS);
            item
        })
        .collect();
    if args.order == Order::Kustomize {
        resource_list::sort_like_kustomize(&mut objects);
    }
    // On error nothing is written: half a package on stdout would be applied or committed by
    // a pipeline that does not check the exit code (issue 22). Function mode still writes its
    // ResourceList with the results, as kpt expects.
    if outcome.results.has_errors() {
        report(&outcome.results);
        return Err(CliError::Reported);
    }
    let written = Stdout::write(&crate::yaml::emit_stream(&objects));
    report(&outcome.results);
    if written {
        Ok(())
    } else {
        Err(CliError::Reported)
    }
}

#[cfg(test)]
mod tests {
    use super::is_ours;
    use serde_json::json;

    /// Our source objects stay in a directory input even when marked local-config (they are
    /// catalogs the run loads); KEP function definitions are among them (issue 11).
    #[test]
    fn issue11_function_definitions_are_our_sources() {
        for (api, kind) in [
            ("config.kubernetes.io/v1alpha1", "KRMFunctionDefinition"),
            ("config.kubernetes.io/v1alpha1", "KRMFunctionCatalog"),
            ("config.kubernetes.io/v1alpha1", "Catalog"),
            ("kubara.io/v1alpha1", "ServiceDefinition"),
        ] {
            assert!(is_ours(&json!({"apiVersion": api, "kind": kind})), "{kind}");
        }
        assert!(!is_ours(
            &json!({"apiVersion": "config.kubernetes.io/v1alpha1", "kind": "Kptfile"})
        ));
        assert!(!is_ours(&json!({"apiVersion": "v1", "kind": "ConfigMap"})));
    }
}

//! `krm-catalog render`: the pipeline over plain YAML files, for local debugging and CI jobs
//! without kpt. Output is what kustomize would print: no local-config source objects, no
//! orchestrator annotations.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::{Stdout, report};
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
}

fn read_docs(text: &str, path: Option<&str>, items: &mut Vec<Value>) -> Result<(), String> {
    let docs =
        crate::yaml::parse_stream(text).map_err(|e| format!("{}: {e}", path.unwrap_or("stdin")))?;
    for (index, doc) in docs.into_iter().filter(|d| !d.value.is_null()).enumerate() {
        let mut item = doc.value;
        if !item.is_object() {
            return Err(format!(
                "{}: document at line {} is not an object",
                path.unwrap_or("stdin"),
                doc.line
            ));
        }
        if let Some(path) = path {
            let index = index.to_string();
            resource_list::set_annotation(&mut item, resource_list::PATH, path);
            resource_list::set_annotation(&mut item, resource_list::INDEX, &index);
            resource_list::set_annotation(&mut item, resource_list::LEGACY_PATH, path);
            resource_list::set_annotation(&mut item, resource_list::LEGACY_INDEX, &index);
        }
        items.push(item);
    }
    Ok(())
}

fn collect_dir(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<(), String> {
    let mut entries: Vec<PathBuf> = fs_err::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_dir(root, &path, out)?;
        } else {
            let lower = path.to_string_lossy().to_ascii_lowercase();
            if crate::yaml::has_extension(&lower, &["yaml", "yml", "json"]) {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, path));
            }
        }
    }
    Ok(())
}

fn read_inputs(inputs: &[String]) -> Result<Vec<Value>, String> {
    let mut items = Vec::new();
    let inputs: Vec<String> = if inputs.is_empty() {
        vec!["-".to_owned()]
    } else {
        inputs.to_vec()
    };
    for input in inputs {
        if input == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("stdin: {e}"))?;
            read_docs(&text, None, &mut items)?;
            continue;
        }
        let path = Path::new(&input);
        if path.is_dir() {
            let mut files = Vec::new();
            collect_dir(path, path, &mut files)?;
            for (rel, file) in files {
                let text = fs_err::read_to_string(&file).map_err(|e| e.to_string())?;
                read_docs(&text, Some(&rel), &mut items)?;
            }
        } else {
            let text = fs_err::read_to_string(path).map_err(|e| e.to_string())?;
            let rel = input.trim_start_matches("./").to_owned();
            read_docs(&text, Some(&rel), &mut items)?;
        }
    }
    Ok(items)
}

/// Run `render`.
pub fn run(args: &RenderArgs) -> ExitCode {
    let mut inputs = args.files.clone();
    inputs.extend(args.paths.iter().cloned());
    let items = match read_inputs(&inputs) {
        Ok(items) => items,
        Err(e) => {
            crate::log!(Level::Error, "{e}");
            return ExitCode::from(1);
        }
    };
    let function_config = match &args.fn_config {
        None => None,
        Some(path) => match fs_err::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| crate::yaml::parse(&t).map_err(|e| format!("{}: {e}", path.display())))
        {
            Ok(Value::Object(m)) => Some(Value::Object(m)),
            Ok(_) => {
                crate::log!(
                    Level::Error,
                    "{}: the function config must be an object",
                    path.display()
                );
                return ExitCode::from(1);
            }
            Err(e) => {
                crate::log!(Level::Error, "{e}");
                return ExitCode::from(1);
            }
        },
    };
    let outcome = pipeline::run(
        ResourceList {
            items,
            function_config,
            verbatim: None,
        },
        &RunContext::default(),
    );
    let objects: Vec<Value> = outcome
        .list
        .items
        .into_iter()
        .filter(|item| args.keep_sources || !resource_list::is_local_config(item))
        .map(|mut item| {
            resource_list::remove_annotations(&mut item, resource_list::ORCHESTRATOR_ANNOTATIONS);
            item
        })
        .collect();
    let written = Stdout::write(&crate::yaml::emit_stream(&objects));
    report(&outcome.results);
    if outcome.results.has_errors() || !written {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

//! A tiny KRM function used by the runtime tests and the README's run-mode walkthrough: it
//! adds `spec.labels` of its function config to every item and reports one info result.
//! Built statically (`.ci/image`), it is what the test images `FROM scratch` run.
//!
//!     cargo run --example set_labels < resource-list.yaml

use std::io::{Read as _, Write as _};
use std::process::ExitCode;

use krm_catalog::resource_list;
use serde_json::{Value, json};

fn main() -> ExitCode {
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("set_labels: cannot read stdin: {e}");
        return ExitCode::from(1);
    }
    let mut list = match resource_list::read(&input) {
        Ok(list) => list,
        Err(e) => {
            eprintln!("set_labels: {}", e.0);
            return ExitCode::from(1);
        }
    };
    let labels = list
        .function_config
        .as_ref()
        .and_then(|c| c.pointer("/spec/labels"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for item in &mut list.items {
        for (key, value) in &labels {
            resource_list::set_label(item, key, value.as_str().unwrap_or_default());
        }
    }
    let message = format!("set {} labels on {} items", labels.len(), list.items.len());
    list.verbatim = None;
    let out = resource_list::write(
        list,
        Some(vec![json!({"message": message, "severity": "info"})]),
    );
    if std::io::stdout().write_all(out.as_bytes()).is_err() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

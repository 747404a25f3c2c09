//! An item's own `runtime` (KEP-2906 "Determining the Function to Execute"): an explicit
//! runtime short-circuits the catalog for that item. The package chose it, so it gets the
//! opt-ins of what the package chooses (an inline catalog's runtimes): an image is pinned by
//! digest and checked as any image (`allowUnpinned`, `verifyTags`, signatures); a Starlark
//! script or an exec binary runs only with `allowInlineExec` (and `allowExec` for a binary).
//! In pin mode it becomes the `config.kubernetes.io/function` annotation of the same shape.

use std::path::Path;

use serde_json::{Value, json};

use super::prepare::{Dirs, Step, package_path, prepare};
use super::run::Program;
use crate::catalog::Origin;
use crate::catalog::kep::{Explicit, Runtime};
use crate::config::{Mode, Settings};
use crate::remote::Remote;
use crate::resource_list;
use crate::results::{KrmResult, Results};

/// What an item with an explicit runtime becomes, per the `functions` settings.
pub fn prepare_explicit(
    item: &Value,
    explicit: &Explicit,
    settings: &Settings,
    remote: &Remote,
    dirs: Dirs<'_>,
    results: &mut Results,
) -> Step {
    let f = &settings.functions;
    let fail = |results: &mut Results, field: &str, message: String| {
        results.push(KrmResult::error(message).about(item).at(field));
        Step::Failed
    };
    match explicit {
        Explicit::Runtime(Runtime::Starlark { source, .. })
            if f.mode == Mode::Run && !f.allow_inline_exec =>
        {
            fail(
                results,
                "runtime.starlark",
                format!(
                    "the item's own runtime runs the Starlark script {source}, which the package chooses; set functions.allowInlineExec: true to allow it (as for runtimes of inline catalogs), or leave runtime out to use the catalog's"
                ),
            )
        }
        // Named as an inline catalog names it: files of the package only, every check of an
        // image. Its problems are at the item's runtime, not at its kind.
        Explicit::Runtime(runtime) => {
            let mut own = Results::default();
            let step = prepare(
                item,
                runtime,
                &Origin::Inline,
                settings,
                remote,
                dirs,
                &mut own,
            );
            let field = match runtime {
                Runtime::Starlark { .. } => "runtime.starlark",
                _ => "runtime.container",
            };
            results.extend(own.iter().cloned().map(|mut result| {
                if result.field.as_deref() == Some("kind") {
                    result.field = Some(field.to_owned());
                }
                result
            }));
            step
        }
        Explicit::ExecPath(path) => {
            let lexical_escape =
                path.starts_with('/') || path.split(['/', '\\']).any(|part| part == "..");
            match f.mode {
                Mode::Pin => {
                    if lexical_escape {
                        return fail(
                            results,
                            "runtime.exec.path",
                            format!(
                                "exec path {path} must be relative and inside the package: kustomize resolves it against the kustomization directory"
                            ),
                        );
                    }
                    results.push(
                        KrmResult::warning(format!(
                            "pinned exec path {path} runs only under the standalone `kustomize build --enable-alpha-plugins --enable-exec` (kubectl kustomize skips exec functions without a word); functions.mode: run with allowExec and allowInlineExec runs it here"
                        ))
                        .about(item)
                        .at("runtime.exec.path"),
                    );
                    let mut pinned = item.clone();
                    resource_list::set_annotation(
                        &mut pinned,
                        resource_list::FUNCTION,
                        &crate::yaml::emit(&json!({"exec": {"path": path}})),
                    );
                    Step::Pinned(pinned)
                }
                Mode::Run => {
                    if !f.allow_exec {
                        return fail(
                            results,
                            "runtime.exec.path",
                            format!(
                                "the item's own runtime runs the binary {path}; set functions.allowExec: true to allow it"
                            ),
                        );
                    }
                    if !f.allow_inline_exec {
                        return fail(
                            results,
                            "runtime.exec.path",
                            format!(
                                "the item's own runtime runs the binary {path}, which the package chooses; set functions.allowInlineExec: true to allow it (as for exec runtimes of inline catalogs), or leave runtime out to use the catalog's"
                            ),
                        );
                    }
                    let file = dirs.package.join(path);
                    let inside = !lexical_escape
                        && dirs.package != Path::new("/")
                        && package_path(&file, dirs.package).is_some()
                        && file.is_file();
                    if !inside {
                        return fail(
                            results,
                            "runtime.exec.path",
                            format!(
                                "exec path {path} is not a file inside the package {}",
                                dirs.package.display()
                            ),
                        );
                    }
                    match fs_err::canonicalize(&file) {
                        Ok(path) => Step::Run(Program::Exec {
                            path,
                            cwd: dirs.cwd.to_path_buf(),
                        }),
                        Err(e) => fail(results, "runtime.exec.path", e.to_string()),
                    }
                }
            }
        }
    }
}

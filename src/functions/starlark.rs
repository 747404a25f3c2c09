//! Starlark runtimes (issue 12, issue 20): a script of a catalog runs in
//! `krm-catalog-starlark`, a KRM function of its own (`crates/starlark`, the released
//! starlark-rust crate), through the same process runner as exec binaries (`run.rs`):
//! its own process group, the function timeout (plus a second, so the script's own deadline,
//! which names the line, comes first), bounded stdout and stderr, and an address-space limit
//! the binary sets on itself ([`crate::env::STARLARK_MAX_MEMORY_BYTES`]). What the script
//! cannot be stopped from doing (allocate past the limit, overflow the native stack) ends that
//! process, and the step fails with one error naming the script; krm-catalog and the other
//! items are untouched.
//!
//! This module loads and verifies the script, finds the binary, and reads what the binary's
//! failure means.

use std::path::PathBuf;
use std::process::ExitStatus;

use serde_json::{Value, json};

use super::RuntimeError;

/// The binary's name.
pub const BINARY: &str = "krm-catalog-starlark";

/// The text of a script: a `path` (`local`) is a file of the catalog under `root`, read like a
/// `file://` URI ([`super::exec::fetch`]: no `..`, no link out of the root, bounded); a URL
/// (`https://`, or `file://` in a local catalog) must carry `sha256`. A declared sha256 is
/// always checked, through the cache exec binaries use ([`super::exec::fetch_verified`]).
pub fn load_script(
    source: &str,
    local: bool,
    sha256: Option<&str>,
    remote: &crate::remote::Remote,
    root: Option<&std::path::Path>,
) -> Result<String, RuntimeError> {
    let uri = if local {
        format!("file://{source}")
    } else {
        source.to_owned()
    };
    let text = |bytes: &[u8]| {
        String::from_utf8(bytes.to_vec())
            .map_err(|_| RuntimeError::StarlarkNotUtf8(source.to_owned()))
    };
    match sha256 {
        Some(declared) => super::exec::fetch_verified(&uri, declared, remote, root, None, text),
        None if local => text(&super::exec::fetch(&uri, remote, root, None)?),
        None => Err(RuntimeError::StarlarkNoSha256(source.to_owned())),
    }
}

/// The `config.kubernetes.io/function` annotation of kustomize v5.0 to v5.4 for a script at
/// `path` (relative to the kustomization directory): `starlark: {path}`, nothing else
/// (kustomize parses it strictly).
pub fn function_annotation(path: &str) -> String {
    crate::yaml::emit(&json!({"starlark": {"path": path}}))
}

/// The function config the binary takes: krm-catalog's `StarlarkRun`, the script's name and
/// text, whether its errors may quote it, and the function config the script sees (the item
/// of the catalog kind).
pub fn function_config(script: &str, source: &str, redact: bool, function_config: &Value) -> Value {
    json!({
        "apiVersion": "krm-catalog.dev/v1alpha1",
        "kind": "StarlarkRun",
        "metadata": {"name": script},
        "source": source,
        "redact": redact,
        "functionConfig": function_config,
    })
}

/// Where `krm-catalog-starlark` is: beside this executable (the release tarball and the image
/// ship them together), else on `PATH`.
pub fn binary() -> Result<PathBuf, RuntimeError> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(BINARY)));
    if let Some(path) = beside.as_ref().filter(|p| p.is_file()) {
        return Ok(path.clone());
    }
    crate::env::path()
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(BINARY))
                .find(|p| p.is_file())
        })
        .ok_or_else(|| RuntimeError::StarlarkMissing {
            beside: beside
                .as_ref()
                .and_then(|p| p.parent())
                .map_or_else(|| "krm-catalog".to_owned(), |d| d.display().to_string()),
        })
}

/// What a failed run of the binary means: its own error (the last `error: ` line of its
/// stderr, which names the script and line), running out of its address space, or a crash.
pub fn failure(script: &str, status: ExitStatus, stderr: &str) -> RuntimeError {
    let own = stderr
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("error: "));
    if status.code() == Some(1)
        && let Some(message) = own
    {
        return RuntimeError::StarlarkFailed(message.to_owned());
    }
    if stderr.contains("memory allocation of") || stderr.contains("out of memory") {
        return RuntimeError::StarlarkOutOfMemory {
            script: script.to_owned(),
            bytes: crate::env::starlark_max_memory_bytes(),
            env: crate::env::STARLARK_MAX_MEMORY_BYTES,
        };
    }
    let how = if stderr.contains("has overflowed its stack") {
        "overflowed its stack (values or calls nested too deeply); build values less deeply nested"
            .to_owned()
    } else {
        match (status.code(), own) {
            (_, Some(message)) => format!("failed: {message}"),
            (Some(code), None) => format!("ended with exit code {code}"),
            (None, None) => {
                #[cfg(unix)]
                let signal = std::os::unix::process::ExitStatusExt::signal(&status);
                #[cfg(not(unix))]
                let signal: Option<i32> = None;
                format!(
                    "was ended by signal {}",
                    signal.map_or_else(|| "?".to_owned(), |s| s.to_string())
                )
            }
        }
    };
    RuntimeError::StarlarkCrashed {
        script: script.to_owned(),
        how,
    }
}

/// The lines the script printed (`[starlark SCRIPT] …`), to pass on to our stderr.
pub fn printed(stderr: &str) -> impl Iterator<Item = &str> {
    stderr.lines().filter(|line| line.starts_with("[starlark "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn status(raw: i32) -> ExitStatus {
        std::os::unix::process::ExitStatusExt::from_raw(raw)
    }

    #[cfg(unix)]
    #[test]
    fn failures_say_what_happened() {
        let exit1 = status(1 << 8);
        let aborted = status(6);
        let e = failure(
            "t.star",
            exit1,
            "[starlark t.star] hi\nerror: starlark script t.star:2:1: fail: no\n",
        );
        assert_eq!(e.to_string(), "starlark script t.star:2:1: fail: no");
        let e = failure(
            "t.star",
            aborted,
            "memory allocation of 1600000000 bytes failed\n",
        );
        assert_eq!(
            e.to_string(),
            "starlark script t.star: ran out of memory: a script may use 536870912 bytes of address space (KRM_CATALOG_STARLARK_MAX_MEMORY_BYTES); build less at once, or raise the limit"
        );
        let e = failure(
            "t.star",
            aborted,
            "\nthread 'starlark' has overflowed its stack\nfatal runtime error: stack overflow\n",
        );
        assert_eq!(
            e.to_string(),
            "starlark script t.star: the interpreter overflowed its stack (values or calls nested too deeply); build values less deeply nested"
        );
        let e = failure("t.star", status(9), "");
        assert_eq!(
            e.to_string(),
            "starlark script t.star: the interpreter was ended by signal 9"
        );
        let e = failure("t.star", aborted, "error: panicked at x.rs:1:1: boom\n");
        assert_eq!(
            e.to_string(),
            "starlark script t.star: the interpreter failed: panicked at x.rs:1:1: boom"
        );
    }
}

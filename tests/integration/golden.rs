//! Golden cases: `testdata/golden/<case>/input.yaml` is a ResourceList as kpt or kustomize
//! sends it; `expected.yaml` is our stdout (results included) and `expected.stderr` our
//! stderr when there is any. Cases named `err-…` must exit 1, the others 0. The case
//! directory is the working directory, so cases can carry their own catalogs.
//! `UPDATE_GOLDEN=1 cargo test --test integration golden` rewrites the expectations.

use std::path::Path;

use crate::util::{TestContext, diff, root, stderr, stdout};

/// A case runs in its own directory. Remote cases must not depend on a user's cache: this one
/// is never created (offline), and its relative name keeps the expected messages portable.
fn case(dir: &Path) -> TestContext {
    TestContext::new()
        .in_dir(dir)
        .with_env("KRM_CATALOG_CACHE", ".cache-that-golden-cases-never-write")
}

fn check_case(dir: &Path, update: bool) -> Result<(), String> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let input = fs_err::read_to_string(dir.join("input.yaml")).map_err(|e| e.to_string())?;
    let args: Vec<String> = match fs_err::read_to_string(dir.join("args")) {
        Ok(text) => text.split_whitespace().map(str::to_owned).collect(),
        Err(_) => Vec::new(),
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = case(dir).run(&args, &input);
    let (stdout, stderr) = (stdout(&out), stderr(&out));
    let code = out.status.code().unwrap_or(-1);
    let expected_code = i32::from(name.starts_with("err-"));
    let stdout_file = dir.join("expected.yaml");
    let stderr_file = dir.join("expected.stderr");
    if update {
        fs_err::write(&stdout_file, &stdout).map_err(|e| e.to_string())?;
        if stderr.is_empty() {
            let _ = fs_err::remove_file(&stderr_file);
        } else {
            fs_err::write(&stderr_file, &stderr).map_err(|e| e.to_string())?;
        }
    }
    let mut problems = Vec::new();
    if code != expected_code {
        problems.push(format!(
            "exit code {code}, expected {expected_code}\nstderr:\n{stderr}"
        ));
    }
    let expected_stdout = fs_err::read_to_string(&stdout_file).unwrap_or_default();
    if expected_stdout != stdout {
        problems.push(format!(
            "stdout differs from expected.yaml:\n{}",
            diff(&expected_stdout, &stdout)
        ));
    }
    let expected_stderr = fs_err::read_to_string(&stderr_file).unwrap_or_default();
    if expected_stderr != stderr {
        problems.push(format!(
            "stderr differs from expected.stderr:\n{}",
            diff(&expected_stderr, &stderr)
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{name}:\n{}", problems.join("\n")))
    }
}

#[test]
fn golden_cases() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let base = root().join("testdata/golden");
    let mut dirs: Vec<_> = fs_err::read_dir(&base)
        .expect("testdata/golden")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 20,
        "expected the golden cases, found {}",
        dirs.len()
    );
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| check_case(d, update).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} golden cases failed:\n\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n\n")
    );
}

/// Running the function on its own output changes nothing (SPEC §6.4: running twice gives
/// the same package).
#[test]
fn golden_outputs_are_fixed_points() {
    let base = root().join("testdata/golden");
    let mut checked = 0;
    for entry in fs_err::read_dir(&base)
        .expect("testdata/golden")
        .filter_map(Result::ok)
    {
        let dir = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("err-")
            || !dir.join("args").exists() && !dir.join("expected.yaml").exists()
        {
            continue;
        }
        if dir.join("args").exists() {
            continue;
        }
        // A case whose results are, on purpose, not repeated on a second run (a pinned item
        // is passed through then) says why in this file.
        if dir.join("not-a-fixed-point").exists() {
            continue;
        }
        let first = fs_err::read_to_string(dir.join("expected.yaml")).expect("expected.yaml");
        let out = case(&dir).run(&[], &first);
        assert!(
            out.status.success(),
            "{name}: second run failed: {}",
            stderr(&out)
        );
        assert_eq!(
            stdout(&out),
            first,
            "{name}: a second run changed the output:\n{}",
            diff(&first, &stdout(&out))
        );
        checked += 1;
    }
    assert!(checked >= 10, "checked only {checked} cases");
}

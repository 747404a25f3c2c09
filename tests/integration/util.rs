//! Helpers shared by the integration tests.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_krm-catalog"))
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run the binary with args and stdin in a directory.
pub fn run(args: &[&str], stdin: &str, cwd: &Path) -> Output {
    run_env(args, stdin, cwd, &[])
}

/// Run the binary with args, stdin and extra environment.
pub fn run_env(args: &[&str], stdin: &str, cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.env_remove("RUST_LOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn krm-catalog");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    out
}

/// Run an external tool that must succeed; returns its stdout. A failure shows the command
/// line, its stdout and its stderr.
pub fn succeed(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Whether an external tool is on PATH; prints a visible skip line when it is not.
pub fn have(tool: &str, test: &str) -> bool {
    let found = Command::new(tool)
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        skipped(test, &format!("`{tool}` is not installed on this machine"));
    }
    found
}

/// Report a skipped test: on stderr, and appended to the file `KRM_CATALOG_SKIP_LOG` names, so
/// the test command (`scripts/test`) lists every skip with its reason after the run (cargo
/// hides the stderr of passing tests).
pub fn skipped(test: &str, reason: &str) {
    let line = format!("SKIPPED {test}: {reason}");
    eprintln!("{line}");
    if let Some(path) = std::env::var_os("KRM_CATALOG_SKIP_LOG") {
        let file = fs_err::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path);
        if let Ok(mut file) = file {
            let _ = writeln!(file, "{line}");
        }
    }
}

/// A line-by-line diff for failure messages.
pub fn diff(expected: &str, actual: &str) -> String {
    let want: Vec<&str> = expected.lines().collect();
    let got: Vec<&str> = actual.lines().collect();
    let mut out = String::new();
    let mut shown = 0;
    for i in 0..want.len().max(got.len()) {
        let (x, y) = (want.get(i).copied(), got.get(i).copied());
        if x != y {
            let _ = writeln!(
                out,
                "line {}:\n  - {}\n  + {}",
                i + 1,
                x.unwrap_or("<none>"),
                y.unwrap_or("<none>")
            );
            shown += 1;
            if shown > 12 {
                out.push_str("  ...\n");
                break;
            }
        }
    }
    out
}

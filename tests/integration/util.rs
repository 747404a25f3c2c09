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
    cmd.args(args).current_dir(cwd);
    feed(&mut cmd, stdin, env)
}

/// Spawn `cmd` with piped stdio, without `RUST_LOG` and with `env` added, write `stdin` on a
/// thread (a child that never reads cannot block the test) and wait for its output.
pub fn feed(cmd: &mut Command, stdin: &str, env: &[(&str, &str)]) -> Output {
    cmd.env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn");
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

/// The name of the enclosing test function, for skip lines and messages (instead of writing
/// the name out by hand). Taken from the type name of a local item, which works whatever
/// thread the test harness runs the test on.
macro_rules! test_name {
    () => {{
        fn here() {}
        let full = std::any::type_name_of_val(&here);
        let full = full.strip_suffix("::here").unwrap_or(full);
        let full = full.trim_end_matches("::{{closure}}");
        full.rsplit("::").next().unwrap_or(full)
    }};
}
pub(crate) use test_name;

/// One test's world (the uv way): a temporary working directory, a private cache, and the
/// environment every run of the binary gets. Files are written into the working directory;
/// `run` starts the binary there with the context's environment.
pub struct TestContext {
    dir: tempfile::TempDir,
    cache: tempfile::TempDir,
    cwd: Option<PathBuf>,
    env: Vec<(String, String)>,
}

impl TestContext {
    /// A fresh context: empty working directory and cache, no extra CA, a 5 s HTTP timeout.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = tempfile::tempdir().expect("cache");
        let env = vec![
            (
                "KRM_CATALOG_CACHE".to_owned(),
                cache.path().to_string_lossy().into_owned(),
            ),
            ("KRM_CATALOG_CA_FILE".to_owned(), String::new()),
            ("KRM_CATALOG_HTTP_TIMEOUT".to_owned(), "5".to_owned()),
        ];
        Self {
            dir,
            cache,
            cwd: None,
            env,
        }
    }

    /// Trust the test CA in `ca` (a PEM file) for HTTPS.
    #[must_use]
    pub fn with_ca(self, ca: &Path) -> Self {
        self.with_env("KRM_CATALOG_CA_FILE", &ca.to_string_lossy())
    }

    /// Set (or replace) an environment variable for every run in this context.
    #[must_use]
    pub fn with_env(mut self, key: &str, value: &str) -> Self {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Run in the repository root instead of the temporary directory (for inputs that name
    /// files of the repository by relative path).
    #[must_use]
    pub fn in_repo_root(mut self) -> Self {
        self.cwd = Some(root());
        self
    }

    /// The temporary working directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The private cache (`KRM_CATALOG_CACHE`).
    pub fn cache(&self) -> &Path {
        self.cache.path()
    }

    /// Write `bytes` to `name` in the working directory; returns the full path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path().join(name);
        fs_err::write(&path, bytes).expect("write");
        path
    }

    /// The environment every run gets, for starting other commands (kpt, a shell) the same way.
    pub fn env(&self) -> Vec<(String, String)> {
        self.env.clone()
    }

    /// Run the binary with args and stdin.
    pub fn run(&self, args: &[&str], stdin: &str) -> Output {
        self.run_with(args, stdin, &[])
    }

    /// Run the binary with args, stdin, and extra environment for this run only.
    pub fn run_with(&self, args: &[&str], stdin: &str, extra: &[(&str, &str)]) -> Output {
        let mut all: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        all.extend_from_slice(extra);
        let cwd = self.cwd.as_deref().unwrap_or(self.dir.path());
        run_env(args, stdin, cwd, &all)
    }
}

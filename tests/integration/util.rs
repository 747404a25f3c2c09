//! Helpers shared by the integration tests.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_krm-catalog"))
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run the binary with args, stdin and extra environment in `cwd` (outside a [`TestContext`]).
pub fn run_env(args: &[&str], stdin: &str, cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args).current_dir(cwd);
    feed(&mut cmd, stdin, env)
}

/// Spawn `cmd` with piped stdio, without `RUST_LOG` and with `env` added, write `stdin` on a
/// thread (a child that never reads cannot block the test) and wait for its output.
pub fn feed(cmd: &mut Command, stdin: &str, env: &[(&str, &str)]) -> Output {
    for (k, v) in env {
        cmd.env(k, v);
    }
    Running::start(cmd, stdin, None).wait()
}

/// A started process whose stdin is written on a thread; see [`feed`] and [`TestContext::start`].
pub struct Running {
    child: Child,
    writer: std::thread::JoinHandle<()>,
    what: String,
    deadline: Option<(Instant, Duration)>,
}

impl Running {
    /// Spawn `cmd` with piped stdio and without `RUST_LOG`, and write `stdin` on a thread. With a
    /// `deadline`, [`Running::wait`] kills a run that takes longer and fails the test (a walk
    /// that loops must not hang the suite).
    fn start(cmd: &mut Command, stdin: &str, deadline: Option<Duration>) -> Self {
        cmd.env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        let mut pipe = child.stdin.take().expect("stdin");
        let input = stdin.to_owned();
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(input.as_bytes());
        });
        Self {
            what: format!("{cmd:?}"),
            child,
            writer,
            deadline: deadline.map(|d| (Instant::now(), d)),
        }
    }

    /// Whether the process still runs.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    /// Kill the process and reap it.
    pub fn kill(mut self) {
        self.child.kill().expect("kill");
        let _ = self.child.wait();
        let _ = self.writer.join();
    }

    /// Wait for the process (killed at its deadline, if it has one) and return its output.
    pub fn wait(mut self) -> Output {
        let Some((started, limit)) = self.deadline else {
            let out = self.child.wait_with_output().expect("wait");
            let _ = self.writer.join();
            return out;
        };
        // Read both pipes on threads while polling, so a chatty run cannot block on a full pipe.
        let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                bytes
            })
        };
        let stdout = drain(self.child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = drain(self.child.stderr.take().map(|p| Box::new(p) as _));
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("{} did not finish in {limit:?}", self.what);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = self.writer.join();
        Output {
            status,
            stdout: stdout.join().expect("stdout"),
            stderr: stderr.join().expect("stderr"),
        }
    }
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

/// The run succeeded and wrote `needle` on stdout.
#[track_caller]
pub fn assert_output(out: &Output, needle: &str) {
    assert!(out.status.success(), "{}", stderr(out));
    assert!(
        stdout(out).contains(needle),
        "no {needle:?} in:\n{}",
        stdout(out)
    );
}

/// The run failed (exit 1) and said `needle` on stderr.
#[track_caller]
pub fn assert_fails_with(out: &Output, needle: &str) {
    assert_eq!(out.status.code(), Some(1), "{}", stderr(out));
    assert!(
        stderr(out).contains(needle),
        "no {needle:?} in:\n{}",
        stderr(out)
    );
}

/// What began at `started` ended within `limit`: it failed fast instead of waiting out a
/// timeout.
#[track_caller]
pub fn assert_within(started: Instant, limit: Duration) {
    let took = started.elapsed();
    assert!(took < limit, "took {took:?}");
}

/// Whether an external tool is on PATH; prints a visible skip line for `test` when it is not.
pub fn have(tool: &str, test: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()));
    if !found {
        skipped(test, &format!("`{tool}` is not installed on this machine"));
    }
    found
}

/// Whether `krm-catalog-starlark` is built beside the binary under test (`scripts/test` builds
/// it: `cargo build --manifest-path crates/starlark/Cargo.toml --target-dir target`); prints a
/// visible skip line for `test` when it is not, and fails instead when
/// `KRM_CATALOG_REQUIRE_STARLARK` is set (as `scripts/test` sets it), so CI cannot skip them.
pub fn have_starlark(test: &str) -> bool {
    let path = bin().with_file_name("krm-catalog-starlark");
    let found = path.is_file();
    if !found {
        let reason = format!(
            "{} is not built (cargo build --manifest-path crates/starlark/Cargo.toml --target-dir target)",
            path.display()
        );
        assert!(
            std::env::var_os("KRM_CATALOG_REQUIRE_STARLARK").is_none(),
            "{test}: {reason}"
        );
        skipped(test, &reason);
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
/// `run` starts the binary there (or in the directory `in_dir` names) with the context's
/// environment, under the context's address-space limit and deadline when it has them.
pub struct TestContext {
    dir: tempfile::TempDir,
    cache: tempfile::TempDir,
    cwd: Option<PathBuf>,
    env: Vec<(String, String)>,
    address_space: Option<u64>,
    deadline: Option<Duration>,
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
            address_space: None,
            deadline: None,
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
    pub fn in_repo_root(self) -> Self {
        self.in_dir(root())
    }

    /// Run in `dir`: a path relative to the temporary directory, or an absolute one.
    #[must_use]
    pub fn in_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(self.path().join(dir));
        self
    }

    /// Run the binary under an address-space limit of `bytes` (`ulimit -v`), so a run that
    /// would take unbounded memory fails the test instead of taking the machine down.
    #[must_use]
    pub fn with_address_space(mut self, bytes: u64) -> Self {
        self.address_space = Some(bytes);
        self
    }

    /// Kill a run that takes longer than `limit` and fail the test (for runs that could loop).
    #[must_use]
    pub fn with_deadline(mut self, limit: Duration) -> Self {
        self.deadline = Some(limit);
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

    /// Write `bytes` to `name` (relative to the temporary directory; missing parent
    /// directories are created); returns the full path.
    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path().join(name);
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent).expect("mkdir");
        }
        fs_err::write(&path, bytes).expect("write");
        path
    }

    /// Create the directory `name` (relative to the temporary directory); returns its path.
    pub fn mkdir(&self, name: &str) -> PathBuf {
        let path = self.path().join(name);
        fs_err::create_dir_all(&path).expect("mkdir");
        path
    }

    /// Another program (kpt, kubectl, docker) in the working directory with the context's
    /// environment, so a binary it starts sees the same world.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(self.cwd.as_deref().unwrap_or(self.path()))
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// Run the binary with args and stdin.
    pub fn run(&self, args: &[&str], stdin: &str) -> Output {
        self.run_with(args, stdin, &[])
    }

    /// Run the binary with args, stdin, and extra environment for this run only.
    pub fn run_with(&self, args: &[&str], stdin: &str, extra: &[(&str, &str)]) -> Output {
        self.start_with(args, stdin, extra).wait()
    }

    /// Start the binary with args and stdin; the caller waits for it (or kills it).
    pub fn start(&self, args: &[&str], stdin: &str) -> Running {
        self.start_with(args, stdin, &[])
    }

    fn start_with(&self, args: &[&str], stdin: &str, extra: &[(&str, &str)]) -> Running {
        let mut cmd = match self.address_space {
            // `ulimit -v` counts KiB; `exec` leaves the binary alone under the limit.
            Some(bytes) => {
                let mut cmd = self.command("/bin/sh");
                cmd.arg("-c")
                    .arg(format!("ulimit -v {} && exec \"$@\"", bytes / 1024))
                    .arg("sh")
                    .arg(bin());
                cmd
            }
            None => self.command(bin()),
        };
        cmd.args(args).envs(extra.iter().copied());
        Running::start(&mut cmd, stdin, self.deadline)
    }
}

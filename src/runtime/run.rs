//! Run mode (SPEC §7.3): a verified runtime runs now as a step over the current items. Exec
//! binaries run with no shell, a minimal environment, a defined working directory and a
//! timeout; containers run through docker or podman the way kpt runs them (`--network none`
//! unless required and allowed, `--user nobody`, no new privileges, no mounts).

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::resource_list::{self, ResourceList};

/// Runs started by this process, for unique container names.
static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Seconds a function may run (default 300, as kpt).
pub const TIMEOUT_ENV: &str = "KRM_CATALOG_FUNCTION_TIMEOUT";

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// A verified binary from the cache.
    Exec {
        /// Path of the binary.
        path: PathBuf,
        /// Working directory.
        cwd: PathBuf,
    },
    /// A pinned image through a container engine.
    Container {
        /// docker | podman.
        engine: String,
        /// `name@sha256:…`.
        image: String,
        /// Give it the host network (only when required and allowed).
        network: bool,
    },
}

impl Program {
    /// How results name this runtime.
    pub fn tag(&self) -> String {
        match self {
            Self::Exec { path, .. } => format!("exec {}", path.display()),
            Self::Container { image, .. } => format!("container {image}"),
        }
    }

    /// The command line that runs it; a container gets `name`, so a timeout can stop the
    /// container itself (killing the engine's client would leave it running).
    pub fn command(&self, name: &str) -> Command {
        match self {
            Self::Exec { path, cwd } => {
                let mut cmd = Command::new(path);
                cmd.current_dir(cwd)
                    .env_clear()
                    .env("LOG_TO_STDERR", "true")
                    .env("STRUCTURED_RESULTS", "true");
                cmd
            }
            Self::Container {
                engine,
                image,
                network,
            } => {
                let mut cmd = Command::new(engine);
                cmd.args([
                    "run",
                    "--rm",
                    "-i",
                    "--network",
                    if *network { "host" } else { "none" },
                ])
                .args(["--name", name])
                .args(["--user", "nobody", "--security-opt=no-new-privileges"])
                .arg(image);
                cmd
            }
        }
    }
}

/// What a function returned.
#[derive(Debug, Clone, PartialEq)]
pub struct Returned {
    /// Its output items.
    pub items: Vec<Value>,
    /// Its results (as it wrote them).
    pub results: Vec<Value>,
}

fn timeout() -> Duration {
    let secs = std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(300u64);
    Duration::from_secs(secs.max(1))
}

/// Run a function over items with a function config; an error names the runtime and carries
/// its stderr.
pub fn run(
    program: &Program,
    function_config: &Value,
    items: Vec<Value>,
) -> Result<Returned, String> {
    let input = resource_list::write(
        ResourceList {
            items,
            function_config: Some(function_config.clone()),
            verbatim: None,
        },
        None,
    );
    let name = format!(
        "krm-catalog-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut cmd = program.command(&name);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| match program {
        Program::Container { engine, .. } if e.kind() == std::io::ErrorKind::NotFound => format!(
            "no container engine: `{engine}` is not installed; use functions.mode: pin to let kustomize or kpt run the function"
        ),
        _ => format!("cannot start {}: {e}", program.tag()),
    })?;
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(pipe) = stdin.as_mut() {
            let _ = pipe.write_all(input.as_bytes());
        }
    });
    let mut stdout_pipe = child.stdout.take();
    let mut stderr_pipe = child.stderr.take();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(p) = stdout_pipe.as_mut() {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(p) = stderr_pipe.as_mut() {
            let _ = p.take(1 << 20).read_to_end(&mut buf);
        }
        buf
    });
    let limit = timeout();
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > limit => {
                if let Program::Container { engine, .. } = program {
                    let _ = Command::new(engine)
                        .args(["kill", &name])
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .status();
                }
                let _ = child.kill();
                let _ = child.wait();
                let _ = writer.join();
                return Err(format!(
                    "{} timed out after {}s ({TIMEOUT_ENV})",
                    program.tag(),
                    limit.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("{}: {e}", program.tag())),
        }
    };
    let _ = writer.join();
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap_or_default())
        .trim()
        .to_owned();
    if !status.success() {
        let code = status
            .code()
            .map_or_else(|| "a signal".to_owned(), |c| format!("exit code {c}"));
        let tail = if stderr.is_empty() {
            String::new()
        } else {
            format!(": {stderr}")
        };
        return Err(format!("{} failed with {code}{tail}", program.tag()));
    }
    let text = String::from_utf8(stdout)
        .map_err(|_| format!("{} wrote output that is not UTF-8", program.tag()))?;
    let results = crate::yaml::parse(&text)
        .ok()
        .and_then(|v| v.get("results").and_then(Value::as_array).cloned())
        .unwrap_or_default();
    let list = resource_list::read(&text).map_err(|e| {
        format!(
            "{} wrote something that is not a ResourceList: {e}",
            program.tag()
        )
    })?;
    Ok(Returned {
        items: list.items,
        results,
    })
}

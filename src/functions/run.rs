//! Run mode (SPEC §7.3): a verified runtime runs now as a step over the current items. Exec
//! binaries run with no shell, a minimal environment, a defined working directory and a
//! timeout; containers run through docker or podman the way kpt runs them (`--network none`
//! unless required and allowed, `--user nobody`, no new privileges, no mounts but the
//! read-only-by-default bind mounts of `functions.mounts` for a runtime that requires one).

use std::io::{Read, Write as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::RuntimeError;
use crate::resource_list::{self, ResourceList};
use crate::results::{KrmResult, Results};

/// Runs started by this process, for unique container names.
static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

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
        /// Bind mounts (only for a runtime that requires storage, from `functions.mounts`):
        /// the directory on this machine, where the container sees it, writable.
        mounts: Vec<(PathBuf, String, bool)>,
    },
    /// A verified Starlark script, run by `krm-catalog-starlark` ([`super::starlark`]).
    Starlark {
        /// How messages name it (its path or URL as the catalog writes it).
        script: String,
        /// Its text.
        source: String,
        /// Whether its errors may not quote it (a script an inline catalog names).
        redact: bool,
    },
}

impl Program {
    /// How results name this runtime.
    pub fn tag(&self) -> String {
        match self {
            Self::Exec { path, .. } => format!("exec {}", path.display()),
            Self::Container { image, .. } => format!("container {image}"),
            Self::Starlark { script, .. } => format!("starlark {script}"),
        }
    }

    /// The command line that runs it; a container gets `name`, so a timeout can stop the
    /// container itself (killing the engine's client would leave it running).
    pub fn command(&self, name: &str) -> Result<Command, RuntimeError> {
        Ok(match self {
            Self::Starlark { .. } => {
                let mut cmd = Command::new(super::starlark::binary()?);
                // Its bounds, and nothing else of our environment (no secrets for the script).
                cmd.env_clear()
                    .env(
                        crate::env::FUNCTION_TIMEOUT,
                        timeout().as_secs().to_string(),
                    )
                    .env(
                        crate::env::STARLARK_MAX_MEMORY_BYTES,
                        crate::env::starlark_max_memory_bytes().to_string(),
                    )
                    .env(
                        crate::env::MAX_INPUT_BYTES,
                        crate::yaml::max_input_bytes().to_string(),
                    );
                cmd
            }
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
                mounts,
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
                .args(["--user", "nobody", "--security-opt=no-new-privileges"]);
                // As kustomize mounts them: read-only unless rw.
                for (src, dst, rw) in mounts {
                    let mut spec = std::ffi::OsString::from("type=bind,source=");
                    spec.push(src);
                    spec.push(format!(",target={dst}"));
                    if !rw {
                        spec.push(",readonly");
                    }
                    cmd.arg("--mount").arg(spec);
                }
                // The end of options: whatever the image reference is, it is not one.
                cmd.arg("--").arg(image);
                cmd
            }
        })
    }

    /// What the function reads as its function config: the item, or, for a Starlark script,
    /// the `StarlarkRun` that carries the script and the item.
    fn function_config(&self, item: &Value) -> Value {
        match self {
            Self::Starlark {
                script,
                source,
                redact,
            } => super::starlark::function_config(script, source, *redact, item),
            Self::Exec { .. } | Self::Container { .. } => item.clone(),
        }
    }

    /// How long it may run: the function timeout; a Starlark script gets a second more, so
    /// that its own deadline, which names the line, comes first.
    fn deadline(&self) -> Duration {
        match self {
            Self::Starlark { .. } => timeout().saturating_add(Duration::from_secs(1)),
            Self::Exec { .. } | Self::Container { .. } => timeout(),
        }
    }

    /// The error of a run that exited unsuccessfully.
    fn failed(&self, status: std::process::ExitStatus, stderr: &str) -> RuntimeError {
        if let Self::Starlark { script, .. } = self {
            return super::starlark::failure(script, status, stderr);
        }
        let code = status
            .code()
            .map_or_else(|| "a signal".to_owned(), |c| format!("exit code {c}"));
        let tail = if stderr.is_empty() {
            String::new()
        } else {
            format!(": {stderr}")
        };
        RuntimeError::Failed {
            program: self.tag(),
            code,
            stderr: tail,
        }
    }
}

/// Why an item is not a KRM object (`apiVersion`, `kind`, `metadata.name`: non-empty
/// strings), if it is not.
fn not_krm(item: &Value) -> Option<&'static str> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).is_some_and(|s| !s.is_empty());
    if !text(item.get("apiVersion")) {
        Some("apiVersion is missing or not a non-empty string")
    } else if !text(item.get("kind")) {
        Some("kind is missing or not a non-empty string")
    } else if !text(item.get("metadata").and_then(|m| m.get("name"))) {
        Some("metadata.name is missing or not a non-empty string")
    } else {
        None
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
    crate::env::function_timeout()
}

/// The most of a function's stderr kept for messages; the rest is read and dropped, so a
/// chatty function cannot block on a full pipe.
const STDERR_KEPT: usize = 1 << 20;

/// What the threads around a running function report.
enum Event {
    /// Everything it wrote to stdout (at most the limit).
    Stdout(Vec<u8>),
    /// It wrote more than the limit to stdout; reading stopped.
    StdoutTooLong,
    /// The first [`STDERR_KEPT`] bytes of its stderr.
    Stderr(Vec<u8>),
}

/// Kill the function's whole process group (it is the group leader): processes it started
/// would otherwise keep its pipes open, or keep running, after it is gone.
#[cfg(unix)]
fn kill_group(child: &std::process::Child) {
    if let Some(pid) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        // ESRCH (the group is gone already) is what we want anyway.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_: &std::process::Child) {}

/// Stop a run: the container (killing the engine's client would leave it running), the
/// process group, then reap the child.
fn stop(program: &Program, name: &str, child: &mut std::process::Child) {
    if let Program::Container { engine, .. } = program {
        let _ = Command::new(engine)
            .args(["kill", "--", name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    kill_group(child);
    let _ = child.kill();
    let _ = child.wait();
}

/// Read a pipe to its end, keeping at most `limit` bytes. `Err` carries what was kept when
/// more came (the reading stops there only if `stop_at_limit`).
fn read_bounded(pipe: &mut impl Read, limit: usize, stop_at_limit: bool) -> Result<Vec<u8>, ()> {
    let mut kept = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut over = false;
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                let room = limit.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
                if n > room {
                    over = true;
                    if stop_at_limit {
                        break;
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if over && stop_at_limit {
        Err(())
    } else {
        Ok(kept)
    }
}

/// Run a function over items with a function config; an error names the runtime and carries
/// its stderr.
///
/// The deadline ([`crate::env::FUNCTION_TIMEOUT`]) holds whatever the function does: it runs as the leader of
/// its own process group, and the whole group is killed at the deadline, after the leader
/// exits (so a background process cannot hold stdout open), and when stdout exceeds the input
/// limit (`KRM_CATALOG_MAX_INPUT_BYTES`, what we would refuse to read anyway). Its stdin is
/// written by a thread that is never waited for, so a function that does not read cannot block
/// us.
pub fn run(
    program: &Program,
    function_config: &Value,
    items: Vec<Value>,
) -> Result<Returned, RuntimeError> {
    let input = resource_list::write(
        ResourceList {
            items,
            function_config: Some(program.function_config(function_config)),
            verbatim: None,
        },
        None,
    );
    let name = format!(
        "krm-catalog-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut cmd = program.command(&name)?;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let limit = program.deadline();
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|error| match program {
        Program::Container { engine, .. } if error.kind() == std::io::ErrorKind::NotFound => {
            RuntimeError::NoEngine(engine.clone())
        }
        _ => RuntimeError::Start {
            program: program.tag(),
            error,
        },
    })?;
    if let Some(mut pipe) = child.stdin.take() {
        // Detached on purpose: the write ends when the function reads everything or its
        // process group is killed (the pipe then breaks).
        std::thread::spawn(move || {
            let _ = pipe.write_all(input.as_bytes());
        });
    }
    let (tx, rx) = std::sync::mpsc::channel::<Event>();
    let max_stdout = crate::yaml::max_input_bytes();
    if let Some(mut pipe) = child.stdout.take() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let event = match read_bounded(&mut pipe, max_stdout, true) {
                Ok(bytes) => Event::Stdout(bytes),
                Err(()) => Event::StdoutTooLong,
            };
            let _ = tx.send(event);
        });
    } else {
        let _ = tx.send(Event::Stdout(Vec::new()));
    }
    if let Some(mut pipe) = child.stderr.take() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let kept = read_bounded(&mut pipe, STDERR_KEPT, false).unwrap_or_default();
            let _ = tx.send(Event::Stderr(kept));
        });
    } else {
        let _ = tx.send(Event::Stderr(Vec::new()));
    }
    drop(tx);
    let timed_out = || match program {
        Program::Starlark { script, .. } => RuntimeError::StarlarkTimedOut {
            at: script.clone(),
            secs: timeout().as_secs(),
            env: crate::env::FUNCTION_TIMEOUT,
        },
        _ => RuntimeError::TimedOut {
            program: program.tag(),
            secs: limit.as_secs(),
            env: crate::env::FUNCTION_TIMEOUT,
        },
    };
    let too_long = || RuntimeError::TooMuchOutput {
        program: program.tag(),
        bytes: max_stdout,
    };
    let mut stdout = None;
    let mut stderr = None;
    let mut status = None;
    loop {
        if status.is_none() {
            match child.try_wait() {
                Ok(Some(s)) => {
                    // The function is done; whatever it left running goes with it.
                    kill_group(&child);
                    status = Some(s);
                }
                Ok(None) => {}
                Err(error) => {
                    stop(program, &name, &mut child);
                    return Err(RuntimeError::Wait {
                        program: program.tag(),
                        error,
                    });
                }
            }
        }
        if status.is_some() && stdout.is_some() && stderr.is_some() {
            break;
        }
        if started.elapsed() > limit {
            stop(program, &name, &mut child);
            return Err(timed_out());
        }
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok(Event::Stdout(bytes)) => stdout = Some(bytes),
            Ok(Event::StdoutTooLong) => {
                stop(program, &name, &mut child);
                return Err(too_long());
            }
            Ok(Event::Stderr(bytes)) => stderr = Some(bytes),
            Err(_) => {}
        }
    }
    let (Some(status), Some(stdout), Some(stderr)) = (status, stdout, stderr) else {
        return Err(timed_out());
    };
    let stderr = String::from_utf8_lossy(&stderr).trim().to_owned();
    if let Program::Starlark { .. } = program {
        // What the script printed is the user's, as under kpt.
        let mut err = std::io::stderr().lock();
        for line in super::starlark::printed(&stderr) {
            let _ = writeln!(err, "{line}");
        }
    }
    if !status.success() {
        return Err(program.failed(status, &stderr));
    }
    let text = String::from_utf8(stdout).map_err(|_| RuntimeError::NotUtf8(program.tag()))?;
    let results = crate::yaml::parse(&text)
        .ok()
        .and_then(|v| v.get("results").and_then(Value::as_array).cloned())
        .unwrap_or_default();
    let list = resource_list::read(&text).map_err(|e| RuntimeError::NotAResourceList {
        program: program.tag(),
        reason: e.to_string(),
    })?;
    // Whatever the function, what comes back must be KRM objects: anything else would be
    // written out as if it were one.
    if let Some((i, what)) = list
        .items
        .iter()
        .enumerate()
        .find_map(|(i, item)| not_krm(item).map(|what| (i, what)))
    {
        return Err(RuntimeError::NotAResourceList {
            program: program.tag(),
            reason: format!("items[{i}] is not a KRM object: {what}"),
        });
    }
    Ok(Returned {
        items: list.items,
        results,
    })
}

/// Run the steps in order over the items: each sees every item except the steps' own configs,
/// and its output replaces them. A failed step leaves the items as they were.
pub fn run_steps(
    items: Vec<Value>,
    steps: &[(usize, Program)],
    results: &mut Results,
) -> Vec<Value> {
    let configs: Vec<usize> = steps.iter().map(|(i, _)| *i).collect();
    let mut config_items = Vec::new();
    let mut current = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if configs.contains(&i) {
            config_items.push((i, item));
        } else {
            current.push(item);
        }
    }
    for (index, program) in steps {
        let Some((_, config)) = config_items.iter().find(|(i, _)| i == index) else {
            continue;
        };
        let tag = program.tag();
        match run(program, config, current.clone()) {
            Ok(returned) => {
                current = returned.items;
                for r in returned.results {
                    if let Some(result) = KrmResult::from_value(&r) {
                        results.push(result.tag("runtime", tag.clone()));
                    }
                }
            }
            Err(e) => results.push(KrmResult::of(&e, Some(config)).tag("runtime", tag)),
        }
    }
    // The function configs stay, as sources, ahead of what they produced.
    let mut out: Vec<Value> = config_items.into_iter().map(|(_, v)| v).collect();
    out.extend(current);
    out
}

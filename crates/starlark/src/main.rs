//! `krm-catalog-starlark`: krm-catalog's Starlark runtime, a KRM function of its own. It reads
//! a ResourceList on stdin, runs the one Starlark script its function config names, and writes
//! the ResourceList the script leaves on stdout (SPEC §7.3).
//!
//! It is a process apart from krm-catalog so that a script can never take krm-catalog down:
//! the address space of this process is limited ([`error::MAX_MEMORY_BYTES`], 512 MiB by
//! default) before anything is read, so a script that allocates without bound ends this
//! process with an allocation failure, which krm-catalog reports as one error naming the
//! script; krm-catalog also kills it at the function timeout. On any error the items are
//! written back unchanged with the error as a result, the error goes to stderr as the last
//! line (`error: …`), and the exit code is 1.

mod convert;
mod error;
mod script;
mod wire;

use std::io::{Read as _, Write as _};
use std::process::ExitCode;
use std::time::Duration;

use error::Error;

const HELP: &str = "krm-catalog-starlark: run one Starlark script as a KRM function

Reads a ResourceList on stdin and writes one on stdout. The function config names the script:
kpt's StarlarkRun (apiVersion fn.kpt.dev/v1alpha1, the script in `source`; the script sees the
StarlarkRun as its functionConfig), or krm-catalog's (apiVersion krm-catalog.dev/v1alpha1, with
`source` and the `functionConfig` the script sees). The script gets kpt's `ctx.resource_list`;
`load(\"krmfn.star\", \"krmfn\")` is the only load; no files, no network, no environment.

Environment:
  KRM_CATALOG_FUNCTION_TIMEOUT           seconds a script may run (default 300)
  KRM_CATALOG_STARLARK_MAX_MEMORY_BYTES  address space of this process (default 536870912)
  KRM_CATALOG_MAX_INPUT_BYTES            bytes of input, and of output (default 268435456)

krm-catalog runs it for catalog kinds with a starlark runtime; it is found beside the
krm-catalog binary, else on PATH.
";

/// Default address space: room for the 256 MiB Starlark heap, the 128 MiB stack of the
/// evaluating thread, the input and the output.
const DEFAULT_MAX_MEMORY_BYTES: u64 = 512 << 20;

fn main() -> ExitCode {
    if let Some(arg) = std::env::args().nth(1) {
        let (text, code) = match arg.as_str() {
            "-h" | "--help" => (HELP.to_owned(), ExitCode::SUCCESS),
            "-V" | "--version" => (
                format!("krm-catalog-starlark {}\n", env!("CARGO_PKG_VERSION")),
                ExitCode::SUCCESS,
            ),
            other => (
                format!(
                    "error: unexpected argument {other:?}; run with no arguments (see --help)\n"
                ),
                ExitCode::from(2),
            ),
        };
        let _ = if code == ExitCode::SUCCESS {
            std::io::stdout().write_all(text.as_bytes())
        } else {
            std::io::stderr().write_all(text.as_bytes())
        };
        return code;
    }
    // A panic is a bug of the interpreter or of this binary: one line that krm-catalog shows.
    std::panic::set_hook(Box::new(|info| {
        let text = info.to_string().replace('\n', " ");
        let _ = writeln!(std::io::stderr(), "error: {text}");
    }));
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(()) => ExitCode::FAILURE,
    }
}

/// The whole function: bounds, input, script, output. `Err` after the error is written.
fn run() -> Result<(), ()> {
    let fail = |e: &Error| {
        let _ = writeln!(std::io::stderr(), "error: {e}");
    };
    let limits = Limits::from_env().map_err(|e| fail(&e))?;
    limit_address_space(limits.memory).map_err(|e| fail(&e))?;
    let text = read_stdin(limits.input).map_err(|e| fail(&e))?;
    let input = wire::read(&text).map_err(|e| fail(&e))?;
    drop(text);
    let bounds = script::Bounds {
        ticks: script::MAX_TICKS,
        heap: script::MAX_HEAP_BYTES.min(usize::try_from(limits.memory / 2).unwrap_or(usize::MAX)),
        time: limits.time,
        // Built as JSON values before it is written: a quarter of the address space at most.
        output: limits
            .input
            .min(usize::try_from(limits.memory / 4).unwrap_or(usize::MAX)),
    };
    let (output, error) = match script::run(&input.script, &input.source, &input.list, bounds) {
        Ok(output) => (output, None),
        Err(e) => {
            let e = if input.redact { e.redacted() } else { e };
            (wire::failed(&input.list, &e), Some(e))
        }
    };
    let written = wire::write(&output).and_then(|text| {
        std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(|e| Error::Setup(format!("cannot write to stdout: {e}")))
    });
    match (error, written) {
        (None, Ok(())) => Ok(()),
        (Some(e), _) | (None, Err(e)) => {
            fail(&e);
            Err(())
        }
    }
}

/// What the environment sets.
struct Limits {
    memory: u64,
    time: Duration,
    input: usize,
}

impl Limits {
    fn from_env() -> Result<Self, Error> {
        Ok(Self {
            memory: number(error::MAX_MEMORY_BYTES)?.unwrap_or(DEFAULT_MAX_MEMORY_BYTES),
            time: Duration::from_secs(number(error::FUNCTION_TIMEOUT)?.unwrap_or(300).max(1)),
            input: number(error::MAX_INPUT_BYTES)?
                .map_or(256 << 20, |n: u64| usize::try_from(n).unwrap_or(usize::MAX)),
        })
    }
}

/// A variable's number, `None` when unset or empty.
fn number(name: &'static str) -> Result<Option<u64>, Error> {
    let Some(value) = std::env::var_os(name).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    value
        .to_str()
        .and_then(|v| v.trim().parse().ok())
        .map(Some)
        .ok_or_else(|| Error::Variable {
            name,
            value: value.to_string_lossy().into_owned(),
        })
}

/// Limit this process's address space (`RLIMIT_AS`): past it an allocation fails and the
/// process ends, which is what keeps a script from taking the machine's memory.
fn limit_address_space(bytes: u64) -> Result<(), Error> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    // The hard limit stays: an unprivileged process cannot raise it, and a lower one wins.
    let hard = getrlimit(Resource::As).maximum;
    let limit = Rlimit {
        current: Some(hard.map_or(bytes, |hard| hard.min(bytes))),
        maximum: hard,
    };
    setrlimit(Resource::As, limit).map_err(|e| {
        Error::Setup(format!(
            "cannot limit the address space to {bytes} bytes ({}): {e}",
            error::MAX_MEMORY_BYTES
        ))
    })
}

/// stdin, at most `limit` bytes.
fn read_stdin(limit: usize) -> Result<String, Error> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Error::Read)?;
    if bytes.len() > limit {
        return Err(Error::TooLarge { limit });
    }
    String::from_utf8(bytes).map_err(|_| Error::NotAResourceList("it is not UTF-8".to_owned()))
}

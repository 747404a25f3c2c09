//! One script, evaluated by starlark-rust with kpt's Starlark function contract
//! (`krm-functions-catalog` `functions/go/starlark`, kyaml `fn/runtime/starlark`):
//!
//! - the global `ctx.resource_list` is the ResourceList as a dict (`apiVersion`, `kind`,
//!   `items`, `functionConfig`); the script mutates it, or reassigns
//!   `ctx.resource_list["items"]`, and what it holds at the end is written back (items keep
//!   the order the script leaves them in; comments are not kept, as in kpt);
//! - `ctx.resource_list["results"]`, a list of dicts (`message`, `severity`, `resourceRef`,
//!   `field`, `file`), are written as the ResourceList's results;
//! - `ctx.environment` is an empty dict: kpt passes the process environment, which would hand
//!   the script the caller's secrets; `ctx.open_api` is not offered (kyaml's whole OpenAPI
//!   document);
//! - `load("krmfn.star", "krmfn")` gives kpt's `krmfn.match_gvk`, `match_name` and
//!   `match_namespace`; every other `load` is refused (no file system, no network, no
//!   starlib); `print` writes to stderr; `fail` fails the step;
//! - of kpt's non-standard features `set`, recursion and top-level `for`/`if` are on; `while`
//!   is not Starlark-in-Rust's (a reserved word): loop over `range(n)` instead.
//!
//! Bounds: [`MAX_TICKS`] (one tick is a function call or a loop iteration), the Starlark heap
//! (checked every thousand ticks and at the end), the function timeout, nesting checked on
//! the tokens before parsing ([`MAX_BRACKET_DEPTH`] and the limits after it), and, around all
//! of it, the address space of this process (`main.rs`): what the interpreter cannot bound
//! itself (one huge allocation, a deep recursion in a native call) ends this process, not
//! krm-catalog.

use std::cell::Cell;
use std::io::Write as _;
use std::time::{Duration, Instant};

use serde_json::Value;
use starlark::PrintHandler;
use starlark::codemap::{CodeMap, FileSpanRef, Span};
use starlark::environment::{FrozenModule, Globals, GlobalsBuilder, LibraryExtension, Module};
use starlark::eval::{BeforeStmtFunc, Evaluator, FileLoader};
use starlark::syntax::{AstModule, Dialect};
use starlark::values::structs::AllocStruct;

use crate::error::Error;

/// Function calls plus loop iterations one script may make: a hundred times what a script
/// that walks every container of ten thousand Deployments needs, and a fraction of a second to
/// a few seconds of work.
pub const MAX_TICKS: u64 = 50_000_000;

/// Bytes of Starlark heap one script may hold, at most (half the address space, if less).
pub const MAX_HEAP_BYTES: usize = 256 << 20;

/// What one evaluation may use.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Function calls plus loop iterations.
    pub ticks: u64,
    /// Bytes of Starlark heap.
    pub heap: usize,
    /// Wall time.
    pub time: Duration,
    /// Bytes of output (the input limit of whoever reads it).
    pub output: usize,
}

/// Bytes of `print` output per script; the rest is dropped (with one note).
const MAX_PRINT_BYTES: usize = 1 << 20;

/// Native stack of the evaluating thread: deep expressions in the parser and deep Starlark
/// recursion (bounded by the interpreter's own call-stack limit) fit, and the address-space
/// limit leaves room for the heap.
const STACK_BYTES: usize = 128 << 20;

/// Nesting bounds of a script, checked on its tokens before it is parsed: the parser, the
/// compiler and the evaluator recurse once per bracket, operator, `lambda`, indented block or
/// `elif`, and overflowing even the 256 MiB stack aborts the process. Measured in a debug
/// build (2026-11-25): 5,000 nested lambdas, 10,000 nested lists, dicts, indented `if` blocks
/// or `elif` branches, and 30,000 unary minus signs, `not`s, `+`/`and` operands, calls,
/// attributes, indexes or conditional expressions overflowed it; 4,000 lambdas, 8,000 lists,
/// blocks or elifs and 10,000 of the rest did not. Each limit is at least 10 times below
/// what survived (40 times for all but operators), and a script at all of them at once uses
/// about a sixth; real scripts nest under 10.
const MAX_BRACKET_DEPTH: usize = 100;
/// Operators, brackets, calls, attributes and keywords on one path of an expression (items
/// between commas are counted apart, so a long list literal is fine).
const MAX_OPERATORS: usize = 1_000;
/// `lambda`s in one statement.
const MAX_LAMBDAS: usize = 100;
/// Indented blocks inside each other.
const MAX_BLOCK_DEPTH: usize = 100;
/// `elif` branches of one `if` (the parser nests each in the one before).
const MAX_ELIFS: usize = 200;

/// One open bracket (or the statement itself) while checking an expression's depth.
#[derive(Default)]
struct Group {
    /// Operators of the current comma-separated item.
    operators: usize,
    /// Deepest bracket closed inside the current item.
    inner: usize,
    /// Deepest finished item.
    best: usize,
}

impl Group {
    fn item(&self) -> usize {
        self.operators.saturating_add(self.inner)
    }
}

/// Refuse a script nested deeper than the interpreter's stack takes ([`MAX_BRACKET_DEPTH`] and
/// the limits after it), naming the script, line and column where a limit is passed. It reads
/// the tokens of starlark's own lexer, so strings (raw, triple-quoted) and comments count
/// exactly as the parser sees them; every token that is not a name, literal or separator
/// counts as an operator, which over-counts (`:` of a dict does not count, `if` does).
fn check_nesting(script: &str, source: &str) -> Result<(), Error> {
    use starlark_syntax::lexer::{Lexer, Token};

    let codemap = CodeMap::new(script.to_owned(), source.to_owned());
    let too_deep = |offset: usize, what: String| {
        let pos = starlark::codemap::Pos::new(u32::try_from(offset).unwrap_or(u32::MAX));
        let begin = codemap.resolve_span(Span::new(pos, pos)).begin;
        Error::Script {
            at: format!("{script}:{}:{}", begin.line + 1, begin.column + 1),
            message: format!(
                "nested too deeply ({what}); the interpreter would overflow its stack: split it into smaller expressions or functions"
            ),
        }
    };
    // Bracket groups of the current logical line; the first is the line itself.
    let mut groups = vec![Group::default()];
    let mut lambdas = 0usize;
    // `elif`s since the `if` that began the chain, one counter per open block.
    let mut elifs = vec![0usize];
    let mut line_start = true;
    for lexeme in Lexer::new(source, &dialect(), codemap.clone()) {
        // The parser stops at the first lexer error too: nothing after it is parsed.
        let Ok((at, token, _)) = lexeme else {
            break;
        };
        let starts_line = std::mem::replace(&mut line_start, false);
        let mut operator = false;
        match token {
            Token::Comment(_) | Token::Tabs => line_start = starts_line,
            Token::Newline => {
                groups.truncate(1);
                groups[0] = Group::default();
                lambdas = 0;
                line_start = true;
            }
            Token::Indent => {
                elifs.push(0);
                if elifs.len() - 1 > MAX_BLOCK_DEPTH {
                    return Err(too_deep(
                        at,
                        format!("more than {MAX_BLOCK_DEPTH} indented blocks"),
                    ));
                }
                line_start = true;
            }
            Token::Dedent => {
                if elifs.len() > 1 {
                    elifs.pop();
                }
                line_start = true;
            }
            Token::If if starts_line => {
                if let Some(chain) = elifs.last_mut() {
                    *chain = 0;
                }
                operator = true;
            }
            Token::Elif => {
                if let Some(chain) = elifs.last_mut() {
                    *chain += 1;
                    if *chain > MAX_ELIFS {
                        return Err(too_deep(
                            at,
                            format!("more than {MAX_ELIFS} elif branches in one if"),
                        ));
                    }
                }
            }
            Token::Lambda => {
                lambdas += 1;
                if lambdas > MAX_LAMBDAS {
                    return Err(too_deep(
                        at,
                        format!("more than {MAX_LAMBDAS} lambdas in one statement"),
                    ));
                }
                operator = true;
            }
            Token::OpeningRound | Token::OpeningSquare | Token::OpeningCurly => {
                // The bracket itself is one level of its enclosing item (a call, an index or
                // a literal).
                operator = true;
            }
            Token::ClosingRound | Token::ClosingSquare | Token::ClosingCurly => {
                if groups.len() > 1
                    && let Some(closed) = groups.pop()
                    && let Some(outer) = groups.last_mut()
                {
                    outer.inner = outer.inner.max(closed.best.max(closed.item()));
                }
            }
            Token::Comma => {
                if let Some(group) = groups.last_mut() {
                    group.best = group.best.max(group.item());
                    group.operators = 0;
                    group.inner = 0;
                }
            }
            Token::Identifier(_)
            | Token::Int(_)
            | Token::RawDecInt
            | Token::RawHexInt
            | Token::RawBinInt
            | Token::RawOctInt
            | Token::Float(_)
            | Token::String(_)
            | Token::Bytes(_)
            | Token::Colon
            | Token::Semicolon
            | Token::Pass
            | Token::Break
            | Token::Continue
            | Token::Ellipsis => {}
            _ => operator = true,
        }
        if operator && let Some(group) = groups.last_mut() {
            group.operators += 1;
        }
        if matches!(
            token,
            Token::OpeningRound | Token::OpeningSquare | Token::OpeningCurly
        ) {
            groups.push(Group::default());
            if groups.len() - 1 > MAX_BRACKET_DEPTH {
                return Err(too_deep(
                    at,
                    format!("more than {MAX_BRACKET_DEPTH} brackets inside each other"),
                ));
            }
        }
        // The deepest path so far: a closed bracket's depth is known only when it closes.
        if groups.iter().any(|g| g.item() > MAX_OPERATORS) {
            return Err(too_deep(
                at,
                format!(
                    "more than {MAX_OPERATORS} operators, calls and brackets in one expression"
                ),
            ));
        }
    }
    Ok(())
}

/// The one module a script may load, written in Starlark: kpt's `krmfn` helpers. kpt compares
/// `apiVersion` as a version with an empty group, so `apps/v1` never matches there; here
/// `match_gvk(r, "apps/v1", "Deployment")` means what it says.
const KRMFN: &str = r#"
def _meta(resource):
    return resource.get("metadata") or {}

def match_gvk(resource, api_version, kind):
    return resource.get("apiVersion") == api_version and resource.get("kind") == kind

def match_name(resource, name):
    return _meta(resource).get("name") == name

def match_namespace(resource, namespace):
    return (_meta(resource).get("namespace") or "") == namespace

krmfn = struct(
    match_gvk = match_gvk,
    match_name = match_name,
    match_namespace = match_namespace,
)
"#;

/// kpt's dialect: top-level statements (for, if); `load` for `krmfn.star` only.
fn dialect() -> Dialect {
    Dialect {
        enable_top_level_stmt: true,
        enable_load: true,
        ..Dialect::Extended
    }
}

/// The standard library and the harmless extensions: no `breakpoint` (it reads stdin), no
/// `debug`/call-stack introspection.
fn globals() -> Globals {
    GlobalsBuilder::extended_by(&[
        LibraryExtension::StructType,
        LibraryExtension::Map,
        LibraryExtension::Filter,
        LibraryExtension::Partial,
        LibraryExtension::Print,
        LibraryExtension::Json,
        LibraryExtension::SetType,
    ])
    .build()
}

/// `load` refuses every module but `krmfn.star`.
struct Loader;

impl FileLoader for Loader {
    fn load(&self, path: &str) -> starlark::Result<FrozenModule> {
        if path != "krmfn.star" {
            return Err(starlark::Error::new_other(LoadRefused(path.to_owned())));
        }
        let ast = AstModule::parse("krmfn.star", KRMFN.to_owned(), &dialect())?;
        let globals = globals();
        let module = Module::with_temp_heap(|module| {
            let mut eval = Evaluator::new(&module);
            eval.eval_module(ast, &globals)?;
            drop(eval);
            module.freeze().map_err(starlark::Error::new_other)
        })?;
        Ok(module)
    }
}

/// Why a `load` failed (the interpreter adds the script and line).
#[derive(Debug, thiserror::Error)]
#[error(
    "load(\"{0}\") is refused: Starlark scripts run sandboxed, without files or network; only load(\"krmfn.star\", \"krmfn\") is available"
)]
struct LoadRefused(String);

/// `print` goes to stderr, prefixed with the script, at most [`MAX_PRINT_BYTES`].
struct Printer<'a> {
    script: &'a str,
    written: Cell<usize>,
}

impl PrintHandler for Printer<'_> {
    fn println(&self, text: &str) -> starlark::Result<()> {
        let before = self.written.get();
        let after = before.saturating_add(text.len());
        self.written.set(after);
        let mut err = std::io::stderr().lock();
        if after <= MAX_PRINT_BYTES {
            let _ = writeln!(err, "[starlark {}] {text}", self.script);
        } else if before <= MAX_PRINT_BYTES {
            let _ = writeln!(
                err,
                "[starlark {}] (more print output dropped: over {MAX_PRINT_BYTES} bytes)",
                self.script
            );
        }
        Ok(())
    }
}

/// Where an error happened, `LINE:COLUMN` (1-based), from its own span or else the innermost
/// frame of its call stack that has a location.
fn location(e: &starlark::Error) -> Option<String> {
    let span = e.span().cloned().or_else(|| {
        e.call_stack()
            .frames
            .iter()
            .rev()
            .find_map(|f| f.location.clone())
    })?;
    let begin = span.resolve_span().begin;
    Some(format!("{}:{}", begin.line + 1, begin.column + 1))
}

/// A script error as one message: script, line, what; the deadline named when it passed.
fn script_error(
    script: &str,
    e: &starlark::Error,
    deadline: Option<(Instant, Duration)>,
    last: Option<String>,
) -> Error {
    let at = location(e)
        .or(last)
        .map_or_else(|| script.to_owned(), |l| format!("{script}:{l}"));
    if let Some((deadline, limit)) = deadline
        && Instant::now() >= deadline
    {
        return Error::TimedOut {
            at,
            secs: limit.as_secs(),
        };
    }
    // The kind alone, first line: the full rendering repeats the source line with carets,
    // and the heap error adds a line on its own timing.
    let kind = e.kind().to_string();
    let first = kind
        .trim()
        .lines()
        .next()
        .unwrap_or_default()
        .trim_end_matches('.');
    let message = if first.contains("ticks has been exceeded") {
        format!("{first} (function calls and loop iterations); is there an endless loop?")
    } else if first.starts_with("Heap memory limit") {
        format!("{first}; the script holds too much data")
    } else {
        first.to_owned()
    };
    Error::Script { at, message }
}

/// Run `source` (named `script` in messages) over the ResourceList `input` (whose
/// `functionConfig` is what the script sees) by kpt's contract (module docs), on a thread with
/// a large stack. What the script left in `ctx.resource_list`, checked and converted
/// ([`crate::convert`]); a script error or a bound reached is an error naming the script and,
/// where the interpreter knows it, the line.
pub fn run(script: &str, source: &str, input: &Value, bounds: Bounds) -> Result<Value, Error> {
    let owned_script = script.to_owned();
    let owned_source = source.to_owned();
    let owned_input = input.clone();
    let (done, result) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("starlark".to_owned())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            // The receiver is gone only when the step was given up as timed out.
            let _ = done.send(evaluate(&owned_script, owned_source, &owned_input, bounds));
        })
        .map_err(|e| Error::Setup(format!("cannot start the interpreter's thread: {e}")))?;
    // The interpreter checks the deadline between bytecode ticks; a native call (comparing or
    // hashing values that share structure, `max(range(…))`) can run for hours without one.
    // Past the deadline and a grace the step fails; the thread ends with the process.
    let grace = (bounds.time / 10).clamp(Duration::from_millis(100), Duration::from_millis(500));
    match result.recv_timeout(bounds.time.saturating_add(grace)) {
        Ok(output) => output,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(Error::TimedOut {
            at: script.to_owned(),
            secs: bounds.time.as_secs(),
        }),
        // A panic (the hook has printed it); with panic = "abort" the process is gone already.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(Error::Script {
            at: script.to_owned(),
            message: "the interpreter failed".to_owned(),
        }),
    }
}

/// Parse and evaluate on the current thread; the ResourceList as the script left it.
fn evaluate(script: &str, source: String, input: &Value, bounds: Bounds) -> Result<Value, Error> {
    let limit = bounds.time;
    let deadline = Instant::now() + limit;
    check_nesting(script, &source)?;
    let codemap = CodeMap::new(script.to_owned(), source.clone());
    let ast = AstModule::parse(script, source, &dialect())
        .map_err(|e| script_error(script, &e, None, None))?;
    let globals = globals();
    let loader = Loader;
    let printer = Printer {
        script,
        written: Cell::new(0),
    };
    // The last statement of the script that began: the interpreter's errors for the tick,
    // heap and time bounds carry no location, and "which line" is what the author needs.
    let last = Cell::new(None::<Span>);
    let track = |at: FileSpanRef, _: bool, _: &mut Evaluator| {
        if at.file.filename() == script {
            last.set(Some(at.span));
        }
    };
    let last_line = || {
        last.get().map(|span| {
            let begin = codemap.resolve_span(span).begin;
            format!("{}:{}", begin.line + 1, begin.column + 1)
        })
    };
    Module::with_temp_heap(|module| {
        let heap = module.heap();
        let resource_list = heap.alloc(input);
        let environment = heap.alloc(serde_json::Map::new());
        let ctx = heap.alloc(AllocStruct([
            ("resource_list", resource_list),
            ("environment", environment),
        ]));
        module.set("ctx", ctx);
        // The collector moves values: a `Value` held here is stale after any collection, so
        // the output is read back through a root the collector updates. The script may rebind
        // `ctx`; this one is what it was handed.
        module.set_extra_value(resource_list);
        let mut eval = Evaluator::new(&module);
        eval.set_loader(&loader);
        eval.set_print_handler(&printer);
        eval.before_stmt_for_dap(BeforeStmtFunc::Fn(&track));
        let set = eval
            .set_max_tick_count(bounds.ticks)
            .and_then(|()| eval.set_max_heap_size(bounds.heap));
        if let Err(e) = set {
            return Err(Error::Setup(e.to_string()));
        }
        eval.set_check_cancelled(Box::new(move || Instant::now() >= deadline));
        eval.eval_module(ast, &globals)
            .map_err(|e| script_error(script, &e, Some((deadline, limit)), last_line()))?;
        // The heap is checked every thousand ticks; a script that ends soon after a big
        // allocation is caught here.
        drop(eval);
        let used = heap.allocated_bytes();
        if used > bounds.heap {
            return Err(Error::Script {
                at: script.to_owned(),
                message: format!(
                    "holds {used} bytes of Starlark heap at its end, more than the limit of {}",
                    bounds.heap
                ),
            });
        }
        let bad = |reason: String| Error::Output {
            script: script.to_owned(),
            reason,
        };
        let Some(resource_list) = module.extra_value() else {
            return Err(bad("ctx.resource_list was lost".to_owned()));
        };
        crate::convert::resource_list(resource_list, bounds.output).map_err(bad)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config() -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": {"team": "a"}})
    }

    fn cm(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
    }

    fn list(items: &[Value]) -> Value {
        json!({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items, "functionConfig": config()})
    }

    /// What `source` leaves: its items and results.
    struct Output {
        items: Vec<Value>,
        results: Vec<Value>,
    }

    fn run_bounded(
        script: &str,
        source: &str,
        _config: &Value,
        items: &[Value],
        bounds: Bounds,
    ) -> Result<Output, Error> {
        let out = super::run(script, source, &list(items), bounds)?;
        let field = |name: &str| {
            out.get(name)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        Ok(Output {
            items: field("items"),
            results: field("results"),
        })
    }

    fn defaults() -> Bounds {
        Bounds {
            ticks: MAX_TICKS,
            heap: MAX_HEAP_BYTES,
            time: Duration::from_secs(300),
            output: 256 << 20,
        }
    }

    fn run(script: &str, source: &str, config: &Value, items: &[Value]) -> Result<Output, Error> {
        run_bounded(script, source, config, items, defaults())
    }

    fn err(source: &str) -> String {
        run_bounded("t.star", source, &config(), &[cm("a")], small())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn mutations_and_results_are_written_back() {
        let source = r#"
team = ctx.resource_list["functionConfig"]["data"]["team"]
for r in ctx.resource_list["items"]:
    r["metadata"].setdefault("labels", {})["team"] = team
ctx.resource_list["items"].append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "new"}})
ctx.resource_list["results"] = [{"message": "hello", "severity": "info"}]
"#;
        let out = run("t.star", source, &config(), &[cm("a"), cm("b")]).unwrap();
        assert_eq!(out.items.len(), 3);
        assert_eq!(out.items[1]["metadata"]["labels"]["team"], "a");
        assert_eq!(out.items[2]["metadata"]["name"], "new");
        assert_eq!(
            out.results,
            vec![json!({"message": "hello", "severity": "info"})]
        );
    }

    #[test]
    fn items_can_be_reassigned_and_keep_key_order() {
        let source = r#"
ctx.resource_list["items"] = [r for r in ctx.resource_list["items"] if r["metadata"]["name"] != "a"]
"#;
        let out = run("t.star", source, &config(), &[cm("a"), cm("b")]).unwrap();
        assert_eq!(out.items, vec![cm("b")]);
        let keys: Vec<&String> = out.items[0].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["apiVersion", "kind", "metadata"]);
    }

    #[test]
    fn kpt_features_and_krmfn_helpers() {
        let source = r#"
load("krmfn.star", "krmfn")
def fact(n):
    return 1 if n < 2 else n * fact(n - 1)
i = 0
for _ in range(3):
    i += 1
s = set(["x", "x"])
for r in ctx.resource_list["items"]:
    if krmfn.match_gvk(r, "v1", "ConfigMap") and krmfn.match_name(r, "a") and krmfn.match_namespace(r, ""):
        r["data"] = {"n": str(fact(5)), "i": str(i), "s": str(len(s)), "env": str(len(ctx.environment))}
"#;
        let out = run("t.star", source, &config(), &[cm("a")]).unwrap();
        assert_eq!(
            out.items[0]["data"],
            json!({"n": "120", "i": "3", "s": "1", "env": "0"})
        );
    }

    #[test]
    fn errors_name_the_script_and_line() {
        let e = err("x = 1\nfail(\"no good\")\n");
        assert!(e.starts_with("starlark script t.star:2:"), "{e}");
        assert!(e.contains("no good"), "{e}");
        let e = err("x = 1\n\ndata = open(\"/etc/passwd\")\n");
        assert!(e.starts_with("starlark script t.star:3:"), "{e}");
        assert!(e.contains("open"), "{e}");
        let e = err("load(\"/etc/passwd\", \"x\")\n");
        assert!(e.contains("t.star:1:"), "{e}");
        assert!(e.contains("load(\"/etc/passwd\") is refused"), "{e}");
        let e = err("def f(:\n");
        assert!(e.starts_with("starlark script t.star:1:"), "{e}");
    }

    #[test]
    fn endless_loops_and_memory_hogs_are_bounded() {
        let e = err("x = 0\nfor i in range(2147483647):\n    x += 1\n");
        assert_eq!(
            e,
            "starlark script t.star:3:5: Execution duration limit of 200000 ticks has been exceeded (function calls and loop iterations); is there an endless loop?"
        );
        let e = err("big = []\nfor i in range(2147483647):\n    big.append(\"x\" * 100000)\n");
        assert_eq!(
            e,
            "starlark script t.star:3:5: Heap memory limit of 33554432 bytes exceeded; the script holds too much data"
        );
        let e = err(
            "def spin():\n    x = 0\n    for i in range(2147483647):\n        x += 1\nspin()\n",
        );
        assert!(e.starts_with("starlark script t.star:4:9: "), "{e}");
        let e = err("def f(n):\n    return f(n + 1)\nf(0)\n");
        assert_eq!(
            e,
            "starlark script t.star:2:12: Starlark call stack overflow"
        );
    }

    /// Run `source` under `bounds`; the error's message, or `None` when it ran.
    fn under(source: &str, bounds: Bounds) -> Option<String> {
        run_bounded("t.star", source, &config(), &[cm("a")], bounds)
            .err()
            .map(|e| e.to_string())
    }

    /// A native call that runs for minutes without a tick (comparing two lists that share
    /// structure: 2^27 element comparisons at a depth of 27) is given up at the deadline plus
    /// the grace, not when it ends.
    #[test]
    fn the_function_timeout_stops_a_native_call_without_ticks() {
        stopped_after_one_second(
            "a = []\nb = []\nfor i in range(27):\n    a = [a, a]\n    b = [b, b]\nsame = a == b\n",
            "t.star",
        );
    }

    #[test]
    fn the_function_timeout_stops_a_script_the_ticks_would_not() {
        stopped_after_one_second(
            "x = 0\nfor i in range(2147483647):\n    x += 1\n",
            "t.star:3:5",
        );
    }

    /// `source`, with ticks to spare and a 1 s timeout, fails with the timeout error at `at`,
    /// well before it would end.
    fn stopped_after_one_second(source: &str, at: &str) {
        let started = Instant::now();
        let e = under(
            source,
            Bounds {
                ticks: u64::MAX / 2,
                heap: 32 << 20,
                time: Duration::from_secs(1),
                output: 256 << 20,
            },
        );
        assert_eq!(
            e,
            Some(format!(
                "starlark script {at}: still running after 1s (KRM_CATALOG_FUNCTION_TIMEOUT); is there an endless loop?"
            ))
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    /// SECURITY.md "Known limits": the heap limit counts the Starlark heap, checked every
    /// thousand ticks; a dict's entry table lives in the Rust heap and is not counted (its keys
    /// and values are). 300,000 small-int entries take well over 2 MiB (at least 16 bytes
    /// each) and pass a 2 MiB limit. If this fails, the limit got stricter: update the known
    /// limit.
    #[test]
    fn known_limit_dict_entries_are_not_counted_by_the_heap_limit() {
        let bounds = Bounds {
            ticks: MAX_TICKS,
            heap: 2 << 20,
            time: Duration::from_secs(60),
            output: 256 << 20,
        };
        let e = under("d = {i: None for i in range(300000)}\nn = len(d)\n", bounds);
        assert_eq!(e, None);
        // The same number of values in a list is counted.
        let e = under("l = [str(i) for i in range(300000)]\n", bounds);
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("Heap memory limit of 2097152 bytes exceeded")),
            "{e:?}"
        );
    }

    /// A script at every nesting limit at once (100 blocks, 200 elifs, 100 lambdas, 100
    /// brackets and 990 operators on one path) parses and runs on the large stack (2,000
    /// nested lists alone overflowed a 2 MiB stack in a debug build); one past each limit is
    /// refused before parsing, with the line and column where it is passed.
    #[test]
    fn nesting_is_bounded_before_parsing_and_the_limits_run() {
        let ifs = |n: usize| {
            (0..n)
                .map(|depth| format!("{}if True:\n", " ".repeat(depth)))
                .collect::<Vec<_>>()
                .concat()
        };
        let indent = " ".repeat(MAX_BLOCK_DEPTH);
        let elifs = (0..MAX_ELIFS)
            .map(|i| format!("{indent}elif x == {}: pass\n", i + 10))
            .collect::<Vec<_>>()
            .concat();
        let source = format!(
            "{}{indent}x = 7\n{indent}if x == 0: pass\n{elifs}{indent}else: y = {}{}{}1{}\n",
            ifs(MAX_BLOCK_DEPTH),
            "lambda: ".repeat(MAX_LAMBDAS),
            "[".repeat(MAX_BRACKET_DEPTH),
            "-".repeat(790),
            "]".repeat(MAX_BRACKET_DEPTH)
        );
        assert_eq!(
            check_nesting("t.star", &source)
                .err()
                .map(|e| e.to_string()),
            None
        );
        let bounds = Bounds {
            ticks: MAX_TICKS,
            heap: 256 << 20,
            time: Duration::from_secs(60),
            output: 256 << 20,
        };
        assert_eq!(under(&source, bounds), None);

        let refused = |source: &str| {
            check_nesting("t.star", source)
                .map_err(|e| e.to_string())
                .err()
                .unwrap_or_default()
        };
        let e = refused(&format!(
            "x = 1\nx = {}1{}\n",
            "(".repeat(101),
            ")".repeat(101)
        ));
        assert!(
            e.starts_with("starlark script t.star:2:105: nested too deeply (more than 100 brackets inside each other)"),
            "{e}"
        );
        let e = refused(&format!("x = {}1\n", "-".repeat(50_000)));
        assert!(e.starts_with("starlark script t.star:1:"), "{e}");
        assert!(e.contains("more than 1000 operators"), "{e}");
        let e = refused(&format!("x = 1{}\n", " + 1".repeat(1_000)));
        assert!(e.contains("more than 1000 operators"), "{e}");
        let e = refused(&format!(
            "def f():\n    return f\nx = f{}\n",
            "()".repeat(1_000)
        ));
        assert!(e.starts_with("starlark script t.star:3:"), "{e}");
        let e = refused(&format!("x = {}1\n", "1 if False else ".repeat(600)));
        assert!(e.contains("more than 1000 operators"), "{e}");
        let e = refused(&format!("x = {}1\n", "lambda: ".repeat(101)));
        assert!(e.contains("more than 100 lambdas in one statement"), "{e}");
        let deep = format!(
            "{}{}pass\n",
            ifs(MAX_BLOCK_DEPTH + 1),
            " ".repeat(MAX_BLOCK_DEPTH + 1)
        );
        let e = refused(&deep);
        assert!(e.starts_with("starlark script t.star:102:"), "{e}");
        assert!(e.contains("more than 100 indented blocks"), "{e}");
        let chain = (0..=MAX_ELIFS)
            .map(|i| format!("elif x == {}:\n    pass\n", i + 10))
            .collect::<Vec<_>>()
            .concat();
        let chain = format!("x = 1\nif x == 0:\n    pass\n{chain}");
        let e = refused(&chain);
        assert!(e.starts_with("starlark script t.star:404:1: "), "{e}");
        assert!(e.contains("more than 200 elif branches in one if"), "{e}");
    }

    /// Brackets and operators inside strings (raw, triple-quoted, with escaped quotes) and
    /// comments are not counted; items between commas are counted apart; a normal script and
    /// a script that merely has many `if`s or statements pass.
    #[test]
    fn the_nesting_check_counts_code_only() {
        let brackets = "(".repeat(5_000);
        let items = vec!["-(1 + 2) * 3"; 5_000].join(",\n    ");
        let entries: Vec<String> = (0..3_000)
            .map(|i| format!("\"k{i}\": [a.b(c) for c in d if c]"))
            .collect();
        for source in [
            format!("x = \"{brackets}\"\n"),
            format!("x = '{brackets}'\n"),
            format!("x = r\"\\\" {brackets}\"\n"),
            format!("x = \"\\\" {brackets} \\\"\"\n"),
            format!("x = \"\"\"\n{brackets}\n\"\n\"\"\"\n"),
            format!("x = '''{brackets}\n'''\n"),
            format!("x = 1  # {brackets}\n# {brackets}\n"),
            format!("x = [{items}]\n"),
            format!("x = {{{}}}\n", entries.join(", ")),
            "if x:\n    pass\n".repeat(1_000),
            "x = 1\n".repeat(10_000),
        ] {
            let head: String = source.chars().take(60).collect();
            assert!(check_nesting("t.star", &source).is_ok(), "{head}");
        }
        // The same characters outside a string are refused.
        assert!(check_nesting("t.star", &format!("x = {brackets}")).is_err());
        // A lexer error ends the check, as it ends the parse (the parser reports it).
        assert!(check_nesting("t.star", &format!("x = \"\n{brackets}")).is_ok());
        let normal = r#"load("krmfn.star", "krmfn")
def fact(n):
    return 1 if n < 2 else n * fact(n - 1)
for r in ctx.resource_list["items"]:
    if krmfn.match_name(r, "a") and not r.get("x"):
        r["data"] = {"n": str(fact(5)), "l": [lambda: x for x in range(3)]}
"#;
        assert!(check_nesting("t.star", normal).is_ok());
        assert!(check_nesting("krmfn.star", KRMFN).is_ok());
    }

    /// A function that wraps a list `n` times (`n + 1` lists) and then runs `body` (line 5),
    /// called by the last statement: the collector runs only between top-level statements.
    fn nested(n: usize, body: &str) -> String {
        format!(
            "def f():\n    x = []\n    for i in range({n}):\n        x = [x]\n    {body}\nf()\n"
        )
    }

    /// Small tick and heap bounds. The time bound is not what these tests check: on a loaded
    /// machine (2 cores, load 7) a debug build took 12 s to reach the heap limit of
    /// `endless_loops_and_memory_hogs_are_bounded` and 7 s for 200,000 ticks, and 20 s failed it.
    fn small() -> Bounds {
        Bounds {
            ticks: 200_000,
            heap: 32 << 20,
            time: Duration::from_secs(120),
            output: 256 << 20,
        }
    }

    /// Items written back nest at most 126 levels (the ResourceList's map and `items` make
    /// the YAML limit of 128).
    #[test]
    fn items_written_back_nest_at_most_the_yaml_limit() {
        // The item is one level, its list `d` of n + 1 lists the rest.
        let store = "ctx.resource_list[\"items\"][0][\"d\"] = x\n";
        let out = run_bounded(
            "t.star",
            &nested(124, store),
            &config(),
            &[cm("a")],
            small(),
        )
        .unwrap();
        let mut v = &out.items[0]["d"];
        let mut depth = 2;
        while let Some(inner) = v.get(0) {
            v = inner;
            depth += 1;
        }
        assert_eq!(depth, 125 + 1, "the item plus 125 lists");
        let e = err(&nested(125, store));
        assert_eq!(
            e,
            "starlark script t.star: cannot write back ctx.resource_list: ctx.resource_list[\"items\"][0] is nested more than 126 levels deep (the YAML nesting depth limit is 128, and the ResourceList takes two)"
        );
    }

    /// The output is read through a root the collector updates: a script that allocates
    /// enough to be collected still writes back its items (it failed "assertion failed:
    /// !self.is_forward()" before, and read moved memory in a release build).
    #[test]
    fn output_survives_garbage_collection() {
        let source = "junk = []\nfor i in range(100000):\n    junk.append(str(i))\njunk = None\nctx.resource_list[\"items\"][0][\"data\"] = {\"k\": \"v\"}\nctx = None\n";
        let out = run_bounded("t.star", source, &config(), &[cm("a")], small()).unwrap();
        assert_eq!(out.items[0]["data"], json!({"k": "v"}));
        assert_eq!(out.items[0]["metadata"]["name"], "a");
    }

    #[test]
    fn bad_output_is_an_error() {
        let e = err("ctx.resource_list[\"items\"] = 3\n");
        assert!(e.contains("must be a list of dicts, not an int"), "{e}");
        let e = err("ctx.resource_list[\"items\"] = [1]\n");
        assert!(e.contains("[\"items\"][0] must be a dict"), "{e}");
    }
}

//! What a CEL call costs, charged before it runs (issue 21 H2, H3): the meter, the per-call and
//! per-validation budgets, and the size of what each function reads or builds.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kube_cel::cel::common::ast::{CallExpr, Expr, IdedExpr, LiteralValue};
use kube_cel::cel::objects::{Key, Opaque};
use kube_cel::cel::{ExecutionError, FunctionContext, ResolveResult, Value as Cel};

use super::compile::{ACC_PUSH, CALL_FN, STEP_FN};

/// The limits of one validation.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) per_call: u64,
    pub(super) budget: u64,
    pub(super) timeout: Duration,
}

/// Cost charged to the current call, its limit, and the validation's deadline.
#[derive(Debug, Default)]
pub(super) struct Meter {
    pub(super) used: AtomicU64,
    pub(super) limit: AtomicU64,
    pub(super) deadline: Option<Instant>,
    pub(super) timed_out: AtomicBool,
}

impl Meter {
    pub(super) fn charge(&self, steps: u64) -> Result<(), ExecutionError> {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.timed_out.store(true, Ordering::Relaxed);
            return Err(ExecutionError::function_error(
                STEP_FN,
                "operation interrupted",
            ));
        }
        let used = self
            .used
            .fetch_add(steps, Ordering::Relaxed)
            .saturating_add(steps);
        if used > self.limit.load(Ordering::Relaxed) {
            Err(ExecutionError::function_error(
                STEP_FN,
                "actual cost limit exceeded",
            ))
        } else {
            Ok(())
        }
    }

    /// What the current call may still cost.
    pub(super) fn left(&self) -> u64 {
        self.limit
            .load(Ordering::Relaxed)
            .saturating_sub(self.used.load(Ordering::Relaxed))
    }
}

/// The in-place result of a `map` or `filter` (see `compile::ACC_NEW`). Rules cannot name it.
#[derive(Debug, Default)]
pub(super) struct Accumulator(Mutex<Vec<Cel>>);

impl PartialEq for Accumulator {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for Accumulator {}

impl Opaque for Accumulator {
    fn runtime_type_name(&self) -> &'static str {
        "krm.accumulator"
    }
}

pub(super) fn accumulator(
    acc: &Cel,
) -> Result<std::sync::MutexGuard<'_, Vec<Cel>>, ExecutionError> {
    let list = match acc {
        Cel::Opaque(o) => o.downcast_ref::<Accumulator>(),
        _ => None,
    };
    list.and_then(|a| a.0.lock().ok())
        .ok_or_else(|| ExecutionError::function_error(ACC_PUSH, "not an accumulator"))
}

/// [`CALL_FN`]: evaluate the call's target and arguments, charge what the call will cost, then
/// make it with those values (bound to names no rule can write).
pub(super) fn guarded_call(meter: &Meter, ftx: &FunctionContext) -> ResolveResult {
    let bad = || ExecutionError::function_error(CALL_FN, "malformed call");
    let (how, rest) = ftx.args.split_first().ok_or_else(bad)?;
    let Expr::Literal(LiteralValue::String(how)) = &how.expr else {
        return Err(bad());
    };
    let mut values = Vec::with_capacity(rest.len());
    for a in rest {
        values.push(Cel::resolve(a, ftx.ptx)?);
    }
    let ident = |name: &str| IdedExpr {
        id: 0,
        expr: Expr::Ident(name.to_owned()),
    };
    let (func, target, this, args) = match how.inner().split_once(':') {
        Some(("g", f)) => (f, None, None, &values[..]),
        Some(("m", f)) => {
            let (this, args) = values.split_first().ok_or_else(bad)?;
            (f, Some(ident("@t")), Some(this.clone()), args)
        }
        Some(("q", nf)) => {
            let (name, f) = nf.split_once(':').ok_or_else(bad)?;
            // A variable (`self.lowerAscii()`) is charged like a target; a namespace is none.
            let this = Cel::resolve(&ident(name), ftx.ptx).ok();
            (f, Some(ident(name)), this, &values[..])
        }
        _ => return Err(bad()),
    };
    meter.charge(call_cost(func, this.as_ref(), args, meter.left())?)?;
    let mut scope = ftx.ptx.new_inner_scope();
    if how.inner().starts_with("m:")
        && let Some(t) = this
    {
        scope.add_variable_from_value("@t", t);
    }
    let mut arg_exprs = Vec::with_capacity(args.len());
    for (i, v) in args.iter().enumerate() {
        let name = format!("@{i}");
        arg_exprs.push(ident(&name));
        scope.add_variable_from_value(name, v.clone());
    }
    let call = IdedExpr {
        id: 0,
        expr: Expr::Call(CallExpr {
            func_name: func.to_owned(),
            target: target.map(Box::new),
            args: arg_exprs,
        }),
    };
    Cel::resolve(&call, &scope)
}

/// What a call costs, from its target and arguments, before it runs: one, plus a tenth of
/// every byte, element and entry it is given (it may read them all), plus what it builds and
/// what it does beyond one pass (see the match below). `left` is what the call may still
/// cost: walks over the values stop past it.
pub(super) fn call_cost(
    func: &str,
    this: Option<&Cel>,
    args: &[Cel],
    left: u64,
) -> Result<u64, ExecutionError> {
    let cap = left.saturating_add(1).saturating_mul(10);
    let deep = |v: &Cel| deep_size(v, cap);
    let read = this
        .into_iter()
        .chain(args)
        .fold(0u64, |sum, v| sum.saturating_add(deep(v)));
    let subject = this.or(args.first());
    let text = |v: Option<&Cel>| match v {
        Some(Cel::String(s)) => Some(s.clone()),
        _ => None,
    };
    let len = |v: Option<&Cel>| match v {
        Some(Cel::String(s)) => as_u64(s.len()),
        Some(Cel::Bytes(b)) => as_u64(b.len()),
        Some(Cel::List(l)) => as_u64(l.len()),
        _ => 0,
    };
    let int = |v: Option<&Cel>| match v {
        Some(Cel::Int(n)) => Some(*n),
        _ => None,
    };
    // `extra` is in bytes (charged a tenth) and `elements` in list elements (charged one each).
    let (mut extra, mut elements) = (0u64, 0u64);
    match func {
        // The result's size, counted before it is built.
        "replace" => {
            if let (Some(s), Some(from), Some(to)) =
                (text(subject), text(args.first()), text(args.get(1)))
            {
                let found = if from.is_empty() {
                    as_u64(s.chars().count()) + 1
                } else {
                    as_u64(s.matches(from.as_str()).count())
                };
                let times = match int(args.get(2)) {
                    Some(n) => found.min(u64::try_from(n).unwrap_or(0)),
                    None => found,
                };
                let grow = as_u64(to.len()).saturating_sub(as_u64(from.len()));
                extra = as_u64(s.len()).saturating_add(times.saturating_mul(grow));
            }
        }
        "split" => {
            if let (Some(s), Some(sep)) = (text(subject), text(args.first())) {
                let parts = if sep.is_empty() {
                    as_u64(s.chars().count()) + 2
                } else {
                    as_u64(s.matches(sep.as_str()).count()) + 1
                };
                elements = match int(args.get(1)) {
                    Some(n) if n >= 0 => parts.min(u64::try_from(n).unwrap_or(0)),
                    _ => parts,
                };
                extra = as_u64(s.len());
            }
        }
        "join" => {
            if let Some(Cel::List(l)) = subject {
                let sep = len(args.first());
                extra = l.iter().fold(0u64, |sum, v| {
                    sum.saturating_add(match v {
                        Cel::String(s) => as_u64(s.len()),
                        other => render_bound(other, cap),
                    })
                });
                extra = extra.saturating_add(sep.saturating_mul(as_u64(l.len())));
            }
        }
        "format" => {
            if let Some(f) = text(subject) {
                let precision = max_precision(&f);
                if precision > MAX_FORMAT_PRECISION {
                    return Err(ExecutionError::function_error(
                        "format",
                        format!("precision over {MAX_FORMAT_PRECISION} is not supported"),
                    ));
                }
                let verbs = as_u64(f.matches('%').count());
                extra = as_u64(f.len())
                    .saturating_add(args.first().map_or(0, |a| render_bound(a, cap)))
                    .saturating_add(verbs.saturating_mul(as_u64(precision) + 400));
            }
        }
        "quote" | "escapeKey" => extra = 2 * len(subject) + 2,
        "encode" => extra = len(subject).saturating_mul(4) / 3 + 4,
        "lowerAscii" | "upperAscii" | "trim" | "reverse" | "string" | "decode" => {
            extra = len(subject);
        }
        // `charAt`, `substring` and `indexOf` copy the string into characters (4 bytes each);
        // a string `indexOf` compares at every position.
        "charAt" | "substring" => extra = len(subject).saturating_mul(4),
        "indexOf" | "lastIndexOf" => {
            if let (Some(s), Some(sub)) = (text(subject), text(args.first())) {
                extra = as_u64(s.len())
                    .saturating_mul(4)
                    .saturating_add(as_u64(s.len()).saturating_mul(as_u64(sub.len())));
            }
        }
        "matches" | "find" | "findAll" => {
            let (s, re) = match this {
                Some(t) => (Some(t), args.first()),
                None => (args.first(), args.get(1)),
            };
            extra = len(s)
                .saturating_add(1)
                .saturating_mul(len(re).saturating_add(1));
        }
        "_+_" => match (args.first(), args.get(1)) {
            (Some(Cel::List(a)), Some(Cel::List(b))) => {
                elements = as_u64(a.len()).saturating_add(as_u64(b.len()));
            }
            (a @ Some(Cel::String(_)), b @ Some(Cel::String(_))) => {
                extra = len(a).saturating_add(len(b));
            }
            _ => {}
        },
        "range" => elements = int(args.first()).map_or(0, |n| u64::try_from(n).unwrap_or(0)),
        "flatten" | "slice" => elements = subject.map_or(0, deep),
        "sort" => {
            let n = len(subject);
            let rounds = u64::from(64 - n.leading_zeros());
            extra = subject.map_or(0, deep).saturating_mul(rounds);
            elements = n;
        }
        // Each element compared with the others (kube-cel compares pairs).
        "distinct" => {
            let d = subject.map_or(0, deep);
            extra = d.saturating_mul(d);
            elements = len(subject);
        }
        "contains" | "equivalent" | "intersects" if this.is_none() => {
            let (a, b) = (args.first().map_or(0, deep), args.get(1).map_or(0, deep));
            extra = a.saturating_mul(b).saturating_mul(2);
        }
        _ => {}
    }
    Ok(1u64
        .saturating_add(read / 10)
        .saturating_add(extra / 10)
        .saturating_add(elements))
}

pub(super) fn as_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Bytes of strings and bytes, elements of lists and entries of maps in `v`, all levels, each
/// time a shared value is met; the walk stops once past `cap`.
pub(super) fn deep_size(v: &Cel, cap: u64) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Cel::String(s) => total = total.saturating_add(as_u64(s.len())),
            Cel::Bytes(b) => total = total.saturating_add(as_u64(b.len())),
            Cel::List(l) => {
                total = total.saturating_add(as_u64(l.len()));
                stack.extend(l.iter().filter(|x| is_sized(x)));
            }
            Cel::Map(m) => {
                total = total.saturating_add(as_u64(m.map.len()));
                for (k, x) in m.map.iter() {
                    if let Key::String(s) = k {
                        total = total.saturating_add(as_u64(s.len()));
                    }
                    if is_sized(x) {
                        stack.push(x);
                    }
                }
            }
            _ => {}
        }
        if total > cap {
            break;
        }
    }
    total
}

pub(super) fn is_sized(v: &Cel) -> bool {
    matches!(
        v,
        Cel::String(_) | Cel::Bytes(_) | Cel::List(_) | Cel::Map(_)
    )
}

/// An upper bound of the text that printing `v` (`format`'s `%s`, `join` of a non-string)
/// makes: strings escaped (up to 10 bytes a byte), 40 bytes for every other value.
pub(super) fn render_bound(v: &Cel, cap: u64) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(40);
        match v {
            Cel::String(s) => total = total.saturating_add(as_u64(s.len()).saturating_mul(10)),
            Cel::Bytes(b) => total = total.saturating_add(as_u64(b.len()).saturating_mul(10)),
            Cel::List(l) => stack.extend(l.iter()),
            Cel::Map(m) => {
                for (k, x) in m.map.iter() {
                    if let Key::String(s) = k {
                        total = total.saturating_add(as_u64(s.len()).saturating_mul(10));
                    }
                    stack.push(x);
                }
            }
            _ => {}
        }
        if total > cap.saturating_mul(10) {
            break;
        }
    }
    total
}

/// Largest `format` precision allowed (`%.Nf`).
pub(super) const MAX_FORMAT_PRECISION: usize = 1000;

/// The largest precision a format string asks for.
pub(super) fn max_precision(f: &str) -> usize {
    let mut max = 0;
    let mut rest = f;
    while let Some(i) = rest.find("%.") {
        let digits: String = rest[i + 2..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if !digits.is_empty() {
            max = max.max(digits.parse::<usize>().unwrap_or(usize::MAX));
        }
        rest = &rest[i + 2..];
    }
    max
}

/// What a value costs to make, for [`SIZE_FN`].
pub(super) fn size_of(v: &Cel) -> u64 {
    let n = match v {
        Cel::String(s) => s.len(),
        Cel::Bytes(b) => b.len(),
        Cel::List(l) => l.len(),
        Cel::Map(m) => m.map.len(),
        _ => 0,
    };
    u64::try_from(n).unwrap_or(u64::MAX)
}

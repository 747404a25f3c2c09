//! krm-catalog patch: a memory and time budget for one render.
//!
//! Fuel bounds the number of instructions, but one instruction can allocate without bound
//! (`s ~ s` doubles a string, `l + l` a list) and a template can run for minutes within its
//! fuel. The embedder enters a budget around a render; string and sequence operations charge
//! what they create against it, and the fuel tracker checks the deadline. Without a budget,
//! single values are capped at [`DEFAULT_MAX_VALUE_BYTES`].
use std::cell::Cell;
use std::fmt;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind};

/// Cap on the size of one value created outside any budget (constant folding at compile time).
pub const DEFAULT_MAX_VALUE_BYTES: usize = 16 * 1024 * 1024;

/// The limits of one render.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes the render may allocate for strings and sequences, counted when created.
    pub max_bytes: usize,
    /// Bytes one value (a string, a list's values, a serialization) may have.
    pub max_value_bytes: usize,
    /// Bytes the render may write to its output.
    pub max_output_bytes: usize,
    /// Wall-clock time the render may take.
    pub max_duration: Option<Duration>,
}

#[derive(Clone, Copy)]
struct Active {
    limits: Limits,
    used: usize,
    deadline: Option<Instant>,
    exhausted: bool,
    output: usize,
    output_exceeded: bool,
}

thread_local! {
    static ACTIVE: Cell<Option<Active>> = const { Cell::new(None) };
    static TICKS: Cell<u32> = const { Cell::new(0) };
}

/// Restores the previous budget when dropped.
pub struct Guard {
    previous: Option<Active>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(self.previous.take()));
    }
}

/// Enter a budget for the current thread until the guard is dropped.
#[must_use]
pub fn enter(limits: Limits) -> Guard {
    let active = Active {
        limits,
        used: 0,
        deadline: limits.max_duration.map(|d| Instant::now() + d),
        exhausted: false,
        output: 0,
        output_exceeded: false,
    };
    Guard {
        previous: ACTIVE.with(|a| a.replace(Some(active))),
    }
}

/// Bytes charged so far in the current budget.
pub fn used() -> usize {
    ACTIVE.with(|a| a.get().map_or(0, |a| a.used))
}

/// Count `bytes` written to the render's output; an error past its output limit.
pub fn charge_output(bytes: usize) -> Result<(), Error> {
    ACTIVE.with(|cell| {
        let Some(mut active) = cell.get() else {
            return Ok(());
        };
        active.output = active.output.saturating_add(bytes);
        let over = active.output > active.limits.max_output_bytes;
        active.output_exceeded |= over;
        cell.set(Some(active));
        if over {
            Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "template output exceeded its limit of {} bytes",
                    active.limits.max_output_bytes
                ),
            ))
        } else {
            Ok(())
        }
    })
}

/// Whether the output limit was exceeded in the current budget (a failed write surfaces as a
/// write error without the budget's message).
pub fn output_exceeded() -> bool {
    ACTIVE.with(|a| a.get().is_some_and(|a| a.output_exceeded))
}

/// Whether a charge failed in the current budget (a write that failed for this reason
/// surfaces as a write error without the budget's message).
pub fn exhausted() -> bool {
    ACTIVE.with(|a| a.get().is_some_and(|a| a.exhausted))
}

fn too_large(bytes: usize, max: usize) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("template exceeded its memory budget: a value of {bytes} bytes is larger than the limit of {max} bytes for one value"),
    )
}

/// Charge `bytes` (one value's size) against the current budget; an error once it is
/// exhausted or when the value alone is over the limit for one value.
pub fn charge(bytes: usize) -> Result<(), Error> {
    ACTIVE.with(|cell| match cell.get() {
        None if bytes > DEFAULT_MAX_VALUE_BYTES => {
            Err(too_large(bytes, DEFAULT_MAX_VALUE_BYTES))
        }
        None => Ok(()),
        Some(mut active) if bytes > active.limits.max_value_bytes => {
            active.exhausted = true;
            cell.set(Some(active));
            Err(too_large(bytes, active.limits.max_value_bytes))
        }
        Some(mut active) => {
            let used = active.used.saturating_add(bytes);
            if used > active.limits.max_bytes {
                active.exhausted = true;
                cell.set(Some(active));
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "template exceeded its memory budget of {} bytes",
                        active.limits.max_bytes
                    ),
                ));
            }
            active.used = used;
            cell.set(Some(active));
            Ok(())
        }
    })
}

/// An error if `extra` more bytes would exceed the budget (nothing is charged).
pub fn fits(extra: usize) -> Result<(), Error> {
    let over = ACTIVE.with(|cell| match cell.get() {
        None => extra > DEFAULT_MAX_VALUE_BYTES,
        Some(active) => {
            extra > active.limits.max_value_bytes
                || active.used.saturating_add(extra) > active.limits.max_bytes
        }
    });
    if over {
        // Charging reports the error in the budget's words.
        charge(extra)
    } else {
        Ok(())
    }
}

/// Charge what a value returned by a filter, function or method holds at its top level.
pub(crate) fn charge_value(value: &crate::value::Value) -> Result<(), Error> {
    use crate::value::ValueKind;
    let size = match value.kind() {
        ValueKind::String | ValueKind::Bytes => value.as_bytes().map_or(0, <[u8]>::len),
        ValueKind::Seq | ValueKind::Map => value
            .len()
            .unwrap_or(0)
            .saturating_mul(core::mem::size_of::<crate::value::Value>()),
        _ => 0,
    };
    charge(size)
}

/// Called per instruction: checks the deadline every 256 instructions (a counter of its own,
/// so the common case touches one small cell).
pub(crate) fn tick() -> Result<(), Error> {
    let ticks = TICKS.with(|t| {
        let n = t.get().wrapping_add(1);
        t.set(n);
        n
    });
    if ticks % 256 == 0 {
        check_time()
    } else {
        Ok(())
    }
}

/// Check the deadline now (for long-running filters).
pub fn check_time() -> Result<(), Error> {
    ACTIVE.with(|cell| cell.get().map_or(Ok(()), |a| check_deadline(&a)))
}

fn check_deadline(active: &Active) -> Result<(), Error> {
    match (active.deadline, active.limits.max_duration) {
        (Some(deadline), Some(max)) if Instant::now() > deadline => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "template ran longer than its time limit of {} seconds",
                max.as_secs_f64()
            ),
        )),
        _ => Ok(()),
    }
}

/// A string buffer that charges every write against the budget, so formatting a value whose
/// text is huge (a deeply shared nested list) stops at the budget instead of exhausting memory.
#[derive(Default)]
pub struct BoundedString {
    text: String,
    error: Option<Error>,
}

impl BoundedString {
    /// Format `args` into a new string, charging as it grows.
    pub fn format(args: fmt::Arguments<'_>) -> Result<String, Error> {
        let mut out = BoundedString::default();
        match fmt::Write::write_fmt(&mut out, args) {
            Ok(()) => Ok(out.text),
            Err(_) => Err(out
                .error
                .unwrap_or_else(|| Error::new(ErrorKind::WriteFailure, "formatting failed"))),
        }
    }
}

impl fmt::Write for BoundedString {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if let Err(err) = charge(s.len()) {
            self.error = Some(err);
            return Err(fmt::Error);
        }
        self.text.push_str(s);
        Ok(())
    }
}

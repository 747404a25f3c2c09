//! krm-catalog patch: a memory and time budget for one render.
//!
//! Fuel bounds the number of instructions, but one instruction can allocate without bound
//! (`s ~ s` doubles a string, `l + l` a list) and a template can run for minutes within its
//! fuel. The embedder enters a budget around a render; string and sequence operations charge
//! what they create against it, and the fuel tracker checks the deadline. Without a budget,
//! single values are capped at [`DEFAULT_MAX_VALUE_BYTES`].
//!
//! Walks over values (comparing, hashing, printing, serializing) are bounded too (issue 21 H4):
//! a list built from itself in a loop (`l = [l, l]`) is small, but walking it visits every
//! path, 2^n for n doublings. Each container a walk enters is counted ([`walk`]): its items
//! are work checked against the deadline, its depth against [`MAX_WALK_DEPTH`], and a printed
//! value's text against the budget before it is written. A walk that cannot return an error
//! (`==`, `Ord`, `Hash`, `Display`) stops with a meaningless result and marks the budget
//! stopped: every later charge fails and the next instruction reports the error.
use std::cell::{Cell, RefCell};
use std::fmt;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind};

/// Cap on the size of one value created outside any budget (constant folding at compile time).
pub const DEFAULT_MAX_VALUE_BYTES: usize = 16 * 1024 * 1024;

/// Containers a walk over values may enter inside each other (each is a few stack frames;
/// YAML input nests at most 128 deep).
pub const MAX_WALK_DEPTH: usize = 256;

/// Work (items of containers walked) between two looks at the clock.
const WORK_PER_CHECK: u64 = 4096;

/// Objects dropped inside each other before the rest waits (see [`drop_object`]).
const MAX_DROP_DEPTH: usize = 128;

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
    /// Work of walks so far, when to look at the clock next, containers entered now.
    work: u64,
    next_check: u64,
    depth: usize,
    /// Why a walk stopped, if one did (a failed charge sets `exhausted` instead).
    stopped: Option<Stop>,
}

#[derive(Clone, Copy)]
enum Stop {
    Time,
    Depth,
}

thread_local! {
    static ACTIVE: Cell<Option<Active>> = const { Cell::new(None) };
    static TICKS: Cell<u32> = const { Cell::new(0) };
    /// Whether a value is being printed (inside [`print`]: its writes are counted there).
    static PRINTING: Cell<bool> = const { Cell::new(false) };
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
        work: 0,
        next_check: WORK_PER_CHECK,
        depth: 0,
        stopped: None,
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

fn over_budget(max: usize) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("template exceeded its memory budget of {max} bytes"),
    )
}

/// The error of a budget that a failed charge or a stopped walk ended.
fn ended(active: &Active) -> Option<Error> {
    match active.stopped {
        Some(Stop::Time) => Some(out_of_time(active)),
        Some(Stop::Depth) => Some(Error::new(
            ErrorKind::InvalidOperation,
            format!("template values are nested more than {MAX_WALK_DEPTH} levels deep"),
        )),
        None if active.exhausted => Some(over_budget(active.limits.max_bytes)),
        None => None,
    }
}

/// Mark the budget ended: later charges fail, and the next instruction reports it (an error
/// inside `Display` or `Ord` cannot be returned).
fn end(cell: &Cell<Option<Active>>, mut active: Active, stopped: Option<Stop>) {
    if stopped.is_some() {
        active.stopped = stopped;
    } else {
        active.exhausted = true;
    }
    cell.set(Some(active));
    TICKS.with(|t| t.set(255));
}

/// Charge `bytes` (one value's size) against the current budget; an error once it is
/// exhausted or when the value alone is over the limit for one value.
pub fn charge(bytes: usize) -> Result<(), Error> {
    ACTIVE.with(|cell| match cell.get() {
        None if bytes > DEFAULT_MAX_VALUE_BYTES => {
            Err(too_large(bytes, DEFAULT_MAX_VALUE_BYTES))
        }
        None => Ok(()),
        Some(active) => {
            // krm-catalog patch (issue 21 H4): an ended budget fails every charge.
            if let Some(err) = ended(&active) {
                return Err(err);
            }
            let err = if bytes > active.limits.max_value_bytes {
                too_large(bytes, active.limits.max_value_bytes)
            } else {
                let used = active.used.saturating_add(bytes);
                if used <= active.limits.max_bytes {
                    cell.set(Some(Active { used, ..active }));
                    return Ok(());
                }
                over_budget(active.limits.max_bytes)
            };
            end(cell, active, None);
            Err(err)
        }
    })
}

/// An error if `extra` more bytes would exceed the budget (nothing is charged).
pub fn fits(extra: usize) -> Result<(), Error> {
    if would_fit(extra) {
        Ok(())
    } else {
        // Charging reports the error in the budget's words.
        charge(extra)
    }
}

/// Whether `extra` more bytes would fit (the budget stays usable: a cheap bound may be
/// checked before an exact one).
pub fn would_fit(extra: usize) -> bool {
    ACTIVE.with(|cell| match cell.get() {
        None => extra <= DEFAULT_MAX_VALUE_BYTES,
        Some(active) => {
            ended(&active).is_none()
                && extra <= active.limits.max_value_bytes
                && active.used.saturating_add(extra) <= active.limits.max_bytes
        }
    })
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

/// Check the deadline now (for long-running filters), and whether the budget ended.
pub fn check_time() -> Result<(), Error> {
    ACTIVE.with(|cell| cell.get().map_or(Ok(()), |a| check_deadline(&a)))
}

fn check_deadline(active: &Active) -> Result<(), Error> {
    if let Some(err) = ended(active) {
        return Err(err);
    }
    match active.deadline {
        Some(deadline) if Instant::now() > deadline => Err(out_of_time(active)),
        _ => Ok(()),
    }
}

fn out_of_time(active: &Active) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!(
            "template ran longer than its time limit of {} seconds",
            active.limits.max_duration.unwrap_or_default().as_secs_f64()
        ),
    )
}

/// Whether a walk stopped or a charge failed in the current budget: the render has failed
/// even if its error has not surfaced yet.
pub fn stopped() -> bool {
    ACTIVE.with(|a| a.get().is_some_and(|a| ended(&a).is_some()))
}

/// The error that ended the current budget, if one did (it may surface as a bare write
/// failure, or not at all in the last instruction).
pub fn error() -> Option<Error> {
    ACTIVE.with(|a| a.get().and_then(|a| ended(&a)))
}

/// krm-catalog patch (issue 21 H4): one container entered by a walk over values, until
/// dropped. See [`walk`].
pub struct Walk {
    counted: bool,
}

impl Drop for Walk {
    fn drop(&mut self) {
        if self.counted {
            ACTIVE.with(|cell| {
                if let Some(mut active) = cell.get() {
                    active.depth = active.depth.saturating_sub(1);
                    cell.set(Some(active));
                }
            });
        }
    }
}

/// Enter a container of `items` items in a walk over values (comparing, hashing, printing,
/// serializing): the items are work, checked against the deadline every [`WORK_PER_CHECK`],
/// and the containers entered inside each other against [`MAX_WALK_DEPTH`]. `None`: stop
/// walking, return anything; the budget has ended (see [`error`]). Outside a budget nothing
/// is counted (constant folding at compile time walks literals only).
pub fn walk(items: usize) -> Option<Walk> {
    ACTIVE.with(|cell| {
        let Some(mut active) = cell.get() else {
            return Some(Walk { counted: false });
        };
        if ended(&active).is_some() {
            return None;
        }
        let stop = if active.depth >= MAX_WALK_DEPTH {
            Some(Stop::Depth)
        } else {
            count(&mut active, items.saturating_add(1))
        };
        if stop.is_some() {
            end(cell, active, stop);
            return None;
        }
        active.depth += 1;
        cell.set(Some(active));
        Some(Walk { counted: true })
    })
}

/// Add `units` of work; the clock is read every [`WORK_PER_CHECK`] units.
fn count(active: &mut Active, units: usize) -> Option<Stop> {
    active.work = active
        .work
        .saturating_add(u64::try_from(units).unwrap_or(u64::MAX));
    if active.work < active.next_check {
        return None;
    }
    active.next_check = active.work.saturating_add(WORK_PER_CHECK);
    active
        .deadline
        .filter(|deadline| Instant::now() > *deadline)
        .map(|_| Stop::Time)
}

/// Count `len` bytes of a string that a walk compares, hashes or case-folds as work (a list
/// may hold one long string a million times); `false`: stop, as for [`walk`]. Short strings
/// are not counted (their items were).
#[inline]
pub(crate) fn bytes(len: usize) -> bool {
    len < 1024
        || ACTIVE.with(|cell| {
            let Some(mut active) = cell.get() else {
                return true;
            };
            if ended(&active).is_some() {
                return false;
            }
            match count(&mut active, len / 64) {
                Some(stop) => {
                    end(cell, active, Some(stop));
                    false
                }
                None => {
                    cell.set(Some(active));
                    true
                }
            }
        })
}

/// [`walk`] for walks that can return an error.
pub fn walk_checked(items: usize) -> Result<Walk, Error> {
    walk(items).ok_or_else(|| {
        error().unwrap_or_else(|| Error::new(ErrorKind::InvalidOperation, "walk stopped"))
    })
}

/// krm-catalog patch (issue 21 H4): print an object (list, map, tuple, ...) as `Display` and
/// `Debug` do, within the budget. The outermost object printed checks its text against the
/// budget before each write (a list doubled 26 times prints 2^26 items); every object is a
/// step of a walk. When the budget ends, the text is cut short and the outermost object
/// returns what an empty write to its writer returns: an error where the writer charges the
/// budget (the output, `~`), `Ok` into a plain `String` (`to_string` panics on an error), and
/// the render fails at its next instruction.
pub(crate) fn print(obj: &crate::value::DynObject, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    struct Render<'a>(&'a crate::value::DynObject);
    impl fmt::Debug for Render<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            self.0.render(f)
        }
    }
    /// Counts what the outermost object writes.
    struct Counted<'a, 'b> {
        f: &'a mut fmt::Formatter<'b>,
        written: usize,
        failed: bool,
    }
    impl fmt::Write for Counted<'_, '_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.written = self.written.saturating_add(s.len());
            if fits(self.written).is_err() {
                return Err(fmt::Error);
            }
            self.f.write_str(s).inspect_err(|_| self.failed = true)
        }
    }

    let items = obj.enumerator_len().unwrap_or(0);
    if PRINTING.with(Cell::get) {
        // Inside the outermost object: an error unwinds to it.
        let Some(_walk) = walk(items) else {
            return Err(fmt::Error);
        };
        return obj.render(f);
    }
    let Some(walk) = walk(items) else {
        return f.write_str("");
    };
    if !walk.counted {
        return obj.render(f);
    }
    PRINTING.with(|p| p.set(true));
    let mut out = Counted {
        f,
        written: 0,
        failed: false,
    };
    let rv = if out.f.alternate() {
        fmt::write(&mut out, format_args!("{:#?}", Render(obj)))
    } else {
        fmt::write(&mut out, format_args!("{:?}", Render(obj)))
    };
    PRINTING.with(|p| p.set(false));
    drop(walk);
    match rv {
        Err(err) if out.failed => Err(err),
        Err(_) => out.f.write_str(""),
        Ok(()) => Ok(()),
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

thread_local! {
    static DROPPING: Cell<usize> = const { Cell::new(0) };
    static DEFERRED: RefCell<Vec<(*const (), fn(*const ()))>> = const { RefCell::new(Vec::new()) };
}

/// krm-catalog patch (issue 21 H4): drop an object (`decref` of its pointer). Dropping a list
/// drops its items inside, so a list nested a million times in a loop overflowed the stack
/// when freed; objects deeper than [`MAX_DROP_DEPTH`] wait in a list that the outermost drop
/// empties.
pub(crate) fn drop_object(ptr: *const (), decref: fn(*const ())) {
    let depth = DROPPING.with(Cell::get);
    if depth >= MAX_DROP_DEPTH
        && DEFERRED
            .try_with(|d| d.borrow_mut().push((ptr, decref)))
            .is_ok()
    {
        return;
    }
    DROPPING.with(|d| d.set(depth + 1));
    decref(ptr);
    if depth == 0 {
        while let Some((ptr, decref)) = DEFERRED.try_with(|d| d.borrow_mut().pop()).ok().flatten() {
            decref(ptr);
        }
    }
    DROPPING.with(|d| d.set(depth));
}

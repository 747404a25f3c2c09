//! A tiny stderr logger: stdout is the protocol, so logs never go there. Every line reads as
//! cargo's and rustc's do, `error: …`, `warning: …`, `info: …` ([`Line`]).
//!
//! Level from `-v` (info), `-vv` (debug), `-vvv` (trace), or `RUST_LOG` (error, warn, info,
//! debug, trace); warnings by default.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::diagnostics::{Line, Severity};

static LEVEL: AtomicU8 = AtomicU8::new(2);

/// Log levels, most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Errors.
    Error = 1,
    /// Warnings (the default threshold).
    Warn = 2,
    /// Progress.
    Info = 3,
}

/// Set the level from `-v` count and `RUST_LOG`.
pub fn init(verbose: u8) {
    let from_env = crate::env::rust_log().and_then(|v| match v.to_ascii_lowercase().as_str() {
        "off" => Some(0),
        "error" => Some(1),
        "warn" => Some(2),
        "info" => Some(3),
        "debug" => Some(4),
        "trace" => Some(5),
        _ => None,
    });
    let level = if verbose > 0 {
        2 + verbose.min(3)
    } else {
        from_env.unwrap_or(2)
    };
    LEVEL.store(level, Ordering::Relaxed);
}

/// Whether a level is enabled.
pub fn enabled(level: Level) -> bool {
    level as u8 <= LEVEL.load(Ordering::Relaxed)
}

impl Level {
    /// The severity a line of this level is said with.
    fn severity(self) -> Severity {
        match self {
            Self::Error => Severity::Error,
            Self::Warn => Severity::Warning,
            Self::Info => Severity::Info,
        }
    }
}

/// Write a log line to stderr (used by [`log!`](crate::log)).
pub fn write(level: Level, args: std::fmt::Arguments<'_>) {
    if enabled(level) {
        say(level.severity(), args);
    }
}

/// A line on stderr whatever the level, `error: …`, `warning: …` or `info: …` ([`Line`]):
/// what a command reports as its output (lint's findings, results), and what logs print.
pub fn say(severity: Severity, args: impl std::fmt::Display) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{}", Line(severity, args));
}

/// A progress line on stderr (`info: …`), whatever the level: the caller decides when it is
/// wanted.
pub fn progress(args: std::fmt::Arguments<'_>) {
    say(Severity::Info, args);
}

/// `log!(Level::Info, "loaded {n} services")`.
#[macro_export]
macro_rules! log {
    ($level:expr, $($arg:tt)*) => {
        $crate::logger::write($level, format_args!($($arg)*))
    };
}

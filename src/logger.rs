//! A tiny stderr logger: stdout is the protocol, so logs never go there.
//!
//! Level from `-v` (info), `-vv` (debug), `-vvv` (trace), or `RUST_LOG` (error, warn, info,
//! debug, trace); warnings by default.

use std::sync::atomic::{AtomicU8, Ordering};

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

/// Write a log line to stderr (used by [`log!`](crate::log)).
pub fn write(level: Level, args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    if enabled(level) {
        let tag = match level {
            Level::Error => "error",
            Level::Warn => "warn",
            Level::Info => "info",
        };
        let _ = writeln!(std::io::stderr().lock(), "krm-catalog {tag}: {args}");
    }
}

/// A progress line on stderr, whatever the level: the caller decides when it is wanted.
pub fn progress(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "krm-catalog info: {args}");
}

/// `log!(Level::Info, "loaded {n} services")`.
#[macro_export]
macro_rules! log {
    ($level:expr, $($arg:tt)*) => {
        $crate::logger::write($level, format_args!($($arg)*))
    };
}

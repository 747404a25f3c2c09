//! What can go wrong, one enum; the `#[error]` texts are the messages krm-catalog shows (it
//! prints the last `error: ` line of this process's stderr as the step's error).

/// The variable that sets the function timeout (shared with krm-catalog).
pub const FUNCTION_TIMEOUT: &str = "KRM_CATALOG_FUNCTION_TIMEOUT";
/// The variable that sets the address-space limit of this process.
pub const MAX_MEMORY_BYTES: &str = "KRM_CATALOG_STARLARK_MAX_MEMORY_BYTES";
/// The variable that bounds the input (shared with krm-catalog).
pub const MAX_INPUT_BYTES: &str = "KRM_CATALOG_MAX_INPUT_BYTES";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A syntax error, `fail`, a runtime error, a bound reached.
    #[error("starlark script {at}: {message}")]
    Script {
        /// `SCRIPT:LINE:COLUMN`, or the script alone when the interpreter has no location.
        at: String,
        /// The interpreter's message.
        message: String,
    },
    /// The script ran past the function timeout.
    #[error(
        "starlark script {at}: still running after {secs}s ({FUNCTION_TIMEOUT}); is there an endless loop?"
    )]
    TimedOut {
        /// `SCRIPT:LINE:COLUMN` where it was stopped.
        at: String,
        /// The deadline.
        secs: u64,
    },
    /// What the script left in `ctx.resource_list` is not a ResourceList of KRM objects.
    #[error("starlark script {script}: cannot write back ctx.resource_list: {reason}")]
    Output {
        /// The script.
        script: String,
        /// What is wrong, at which path.
        reason: String,
    },
    /// The interpreter refused a bound.
    #[error("cannot set the bounds of the Starlark interpreter: {0}")]
    Setup(String),
    /// A variable holds something that is not a number.
    #[error("{name}={value:?} is not a number of bytes or seconds")]
    Variable {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// stdin could not be read.
    #[error("cannot read the ResourceList from stdin: {0}")]
    Read(std::io::Error),
    /// stdin holds more than [`MAX_INPUT_BYTES`].
    #[error("the input is larger than {limit} bytes ({MAX_INPUT_BYTES})")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// stdin is not a ResourceList.
    #[error("the input is not a ResourceList: {0}")]
    NotAResourceList(String),
    /// The function config does not name a script.
    #[error(
        "functionConfig must be a StarlarkRun with the script in `source` (apiVersion fn.kpt.dev/v1alpha1, as kpt's starlark function takes it): {0}"
    )]
    Config(String),
}

impl Error {
    /// The error with whatever it quotes of the script (`'secret'`, `` `name` ``, `"text"`)
    /// replaced by `…`: for a file that may not be a script at all, its content stays out of
    /// logs.
    #[must_use]
    pub fn redacted(self) -> Self {
        match self {
            Self::Script { at, message } => Self::Script {
                at,
                message: redact(&message),
            },
            other => other,
        }
    }
}

/// `text` with every quoted span emptied to `…`; an unmatched quote is kept as it is.
fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(['\'', '`', '"']) {
        let quote = rest[start..].chars().next().unwrap_or('"');
        let after = &rest[start + 1..];
        let Some(end) = after.find(quote) else {
            break;
        };
        out.push_str(&rest[..=start]);
        out.push('…');
        out.push(quote);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn redaction_empties_quoted_spans() {
        assert_eq!(
            super::redact("Parse error: unexpected identifier 'hunter2', expected new line"),
            "Parse error: unexpected identifier '…', expected new line"
        );
        assert_eq!(
            super::redact("Variable `hunter2` not found in \"x\" or 'y"),
            "Variable `…` not found in \"…\" or 'y"
        );
        assert_eq!(super::redact("no quotes"), "no quotes");
    }
}

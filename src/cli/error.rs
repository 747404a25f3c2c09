//! How a command fails: commands return [`CliError`], and [`finish`] is the one place that
//! prints it and picks the exit code (the cargo/ripgrep way).

use std::path::Path;
use std::process::ExitCode;

use crate::catalog_ref::CatalogRefError;
use crate::functions::RuntimeError;
use crate::logger::Level;
use crate::remote::RemoteError;
use crate::results::Severity;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// An input file, `--fn-config` or stdin could not be read as asked.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A ResourceList that does not read.
    #[error(transparent)]
    ResourceList(#[from] crate::resource_list::InputError),
    /// A catalog reference on the command line.
    #[error("{}", .0.standalone())]
    Reference(CatalogRefError),
    /// `catalog pull` could not prepare an exec binary.
    #[error("{kind}: exec binary for {platform}: {error}")]
    ExecBinary {
        /// The kind whose runtime it is.
        kind: String,
        /// `os/arch`.
        platform: String,
        /// Why (boxed: a runtime error is large, and commands return this type).
        error: Box<RuntimeError>,
    },
    /// A detached signature that does not verify.
    #[error(transparent)]
    Signature(#[from] crate::signature::SignatureError),
    /// A remote catalog could not be had.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// A runtime could not be locked.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// `explain` or `schema` was asked for something the catalogs do not have.
    #[error(transparent)]
    Explain(#[from] ExplainError),
    /// A file system error (the message names the path).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Problems found together, each with its severity (a config's, the catalogs'); printed
    /// in order.
    #[error("{} problems", .0.len())]
    Problems(Vec<(Severity, String)>),
    /// Several errors, each printed.
    #[error("{} errors", .0.len())]
    Several(Vec<CliError>),
    /// A bad argument the parser could not see (exit 2).
    #[error("{0}")]
    Usage(String),
    /// Already said on stderr (results, one line per failed item, a failed write to stdout).
    #[error("failed")]
    Reported,
}

/// What reading a command's files found.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Stdin could not be read in function mode.
    #[error("cannot read the ResourceList from stdin: {0}")]
    Stdin(std::io::Error),
    /// Something about an input, said after its name (a YAML error, a read error).
    #[error("{label}: {reason}")]
    At {
        /// The file (or `stdin`).
        label: String,
        /// What is wrong.
        reason: String,
    },
    /// A document that is not a mapping.
    #[error(
        "{label}: document {index} (line {line}) is not an object; every document must be a Kubernetes object with `apiVersion` and `kind`"
    )]
    NotAnObject {
        /// The file.
        label: String,
        /// The document's index.
        index: usize,
        /// Its first line.
        line: usize,
    },
    /// A document without `apiVersion` or `kind`.
    #[error(
        "{label}: document {index} (line {line}) has no `{missing}`; every document must be a Kubernetes object with `apiVersion` and `kind`"
    )]
    NotAKubernetesObject {
        /// The file.
        label: String,
        /// The document's index.
        index: usize,
        /// Its first line.
        line: usize,
        /// `apiVersion`, `kind`, or both joined by "` or `".
        missing: String,
    },
    /// An item of a ResourceList that is not a mapping.
    #[error("{label}: items[{index}] is not an object; a ResourceList holds Kubernetes objects")]
    ItemNotAnObject {
        /// The file.
        label: String,
        /// The item's index.
        index: usize,
    },
    /// A ResourceList's `items` or `functionConfig` of the wrong type.
    #[error("{label}: ResourceList {field} must be {expected}, found {found}")]
    WrongType {
        /// The file.
        label: String,
        /// `items` or `functionConfig`.
        field: &'static str,
        /// `a list`, `an object`.
        expected: &'static str,
        /// The type found.
        found: &'static str,
    },
    /// A ResourceList found in a directory carries the settings.
    #[error(
        "{0}: a ResourceList in a directory carries a functionConfig, and files of a package do not choose the settings; name the file itself with `-f {0}`, or give the function config with `--fn-config`"
    )]
    ConfigInDirectory(String),
    /// Two ResourceLists with a function config.
    #[error(
        "{label}: a second ResourceList with a functionConfig (the first is in {first}); give one function config"
    )]
    SecondConfig {
        /// The second file.
        label: String,
        /// The first.
        first: String,
    },
    /// The inputs together pass the input limit.
    #[error(
        "{label}: the inputs hold more than the limit of {limit} bytes; raise KRM_CATALOG_MAX_INPUT_BYTES if this is expected"
    )]
    TooBig {
        /// The input that passed it.
        label: String,
        /// The limit.
        limit: usize,
    },
    /// A `--fn-config` file of several documents.
    #[error(
        "{path}: expected one YAML document (the function config), found {found}; give the function config a file of its own"
    )]
    FnConfigDocuments {
        /// The file.
        path: String,
        /// How many it has.
        found: usize,
    },
    /// A `--fn-config` that is not a mapping.
    #[error("{0}: the function config must be an object")]
    FnConfigNotAnObject(String),
    /// A ResolveCatalog among `render`'s inputs that is not the function config.
    #[error(
        "{label}: a ResolveCatalog among the inputs is not used as the function config; {}",
        stray_hint(.fn_config.as_deref())
    )]
    StrayConfig {
        /// Which document.
        label: String,
        /// The `--fn-config` given, if any.
        fn_config: Option<String>,
    },
    /// A ResourceList's function config and `--fn-config` both.
    #[error(
        "{from}: the ResourceList has a functionConfig and --fn-config {fn_config} is given too; use one of them"
    )]
    TwoConfigs {
        /// The ResourceList's file.
        from: String,
        /// The `--fn-config` file.
        fn_config: String,
    },
}

fn stray_hint(fn_config: Option<&str>) -> String {
    match fn_config {
        Some(c) => format!("this run's function config is --fn-config {c}: remove one of them"),
        None => "give its file with `--fn-config FILE` (it may stay among the inputs)".to_owned(),
    }
}

impl ReadError {
    /// Something wrong with the input `label`.
    pub fn at(label: impl std::fmt::Display, reason: impl std::fmt::Display) -> Self {
        Self::At {
            label: label.to_string(),
            reason: reason.to_string(),
        }
    }

    /// Something wrong with the file at `path`.
    pub fn in_file(path: &Path, reason: impl std::fmt::Display) -> Self {
        Self::at(path.display(), reason)
    }
}

/// What `explain` and `schema` cannot find.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExplainError {
    /// No kind of that name.
    #[error("unknown kind \"{kind}\"{hint}; known kinds: {known}")]
    UnknownKind {
        /// The kind asked for.
        kind: String,
        /// "; did you mean …", or empty.
        hint: String,
        /// The kinds there are, joined.
        known: String,
    },
    /// A function kind whose catalog gives none of its versions a schema.
    #[error(
        "function kind \"{kind}\" ({versions}) has no schema: its catalog sets no versions[].schema.openAPIV3Schema, so its config is neither checked nor explained; the function's own documentation (usage) describes it"
    )]
    NoSchema {
        /// The kind.
        kind: String,
        /// Its group/version/kinds, joined.
        versions: String,
    },
    /// No field of that name.
    #[error("field \"{field}\" does not exist in {kind}.{walked}{hint}")]
    UnknownField {
        /// The field asked for.
        field: String,
        /// The kind.
        kind: String,
        /// The path walked so far.
        walked: String,
        /// "; did you mean …", or empty.
        hint: String,
    },
}

/// The log level a severity is printed at.
fn level(severity: Severity) -> Level {
    match severity {
        Severity::Error => Level::Error,
        Severity::Warning => Level::Warn,
        Severity::Info => Level::Info,
    }
}

/// Print problems, each at its severity's level.
pub fn print_problems(problems: &[(Severity, String)]) {
    for (severity, message) in problems {
        crate::log!(level(*severity), "{message}");
    }
}

/// Problems found together: printed when none is an error, else the command's failure.
pub fn fail_on_errors(problems: Vec<(Severity, String)>) -> Result<(), CliError> {
    if problems.iter().any(|(s, _)| *s == Severity::Error) {
        return Err(CliError::Problems(problems));
    }
    print_problems(&problems);
    Ok(())
}

/// Print an error on stderr.
pub fn print(e: &CliError) {
    match e {
        CliError::Reported => {}
        CliError::Problems(problems) => print_problems(problems),
        CliError::Several(all) => all.iter().for_each(print),
        other => crate::log!(Level::Error, "{other}"),
    }
}

/// The one printer: a command's outcome as its exit code, the error said on stderr.
pub fn finish(outcome: Result<(), CliError>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            print(&e);
            ExitCode::from(if matches!(e, CliError::Usage(_)) {
                2
            } else {
                1
            })
        }
    }
}

/// A catalog reference on the command line (see [`crate::catalog_ref::CatalogRef`]); a bad one fails before any
/// request, naming the URL (no field path does here).
pub(super) fn parse_reference(reference: &str) -> Result<crate::catalog_ref::CatalogRef, CliError> {
    reference
        .parse::<crate::catalog_ref::CatalogRef>()
        .map_err(CliError::Reference)
}

/// A bundle's load problems, each at its severity.
pub(super) fn problems(bundle: &crate::catalog::Bundle) -> Vec<(crate::results::Severity, String)> {
    bundle
        .problems
        .iter()
        .map(|p| (crate::results::Diagnostic::severity(p), p.to_string()))
        .collect()
}

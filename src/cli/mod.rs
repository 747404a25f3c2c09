//! The command line: function mode (no subcommand) and the human commands.
//!
//! `cli()` declares, `exec()` runs (cargo's split). Everything that writes to stdout goes
//! through [`Stdout`], so a stray print can never corrupt the KRM protocol.

mod catalog_cmd;
mod catalog_init;
mod catalog_pull;
mod catalog_view;
mod error;
mod explain;
mod import;
mod lint_render;
mod render_cmd;
mod report;
mod signature_args;

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::catalog::{self, Catalog};
use crate::catalog_ref::CatalogRef;
use crate::config::{self, CatalogEntry, Settings};
use crate::logger::Level;
use crate::pipeline::{self, RunContext};
use crate::remote::LazyRemote;
use crate::resource_list;
use crate::results::{Diagnostic as _, Results, Severity};
pub use error::{CliError, ExplainError, ReadError};

const ABOUT: &str =
    "Resolve kinds through catalogs and expand service objects into manifests (a KRM function)";

const LONG_ABOUT: &str = "\
krm-catalog is a KRM function. With no subcommand it reads a ResourceList on stdin and writes one
on stdout, as kpt and kustomize expect:

  kpt fn eval --exec krm-catalog DIR
  kpt fn eval --image krm-catalog:latest DIR -- cluster-type=hub
  kustomize build --enable-alpha-plugins --enable-exec DIR

Service objects (one per service, e.g. `kind: CertManager`) and ServiceSets
(`apiVersion: services.krm-catalog.dev/v1alpha1`) among the items are defaulted and validated
against their catalog's schema, exactly as the Kubernetes apiserver defaults CRDs, and rendered
into manifests placed next to them. Every other item passes through untouched.

The function config is a `krm-catalog.dev/v1alpha1 ResolveCatalog`, a kpt ConfigMap
(keys: catalogs, trusted-catalogs, builtin, catalog-overwrite, cluster-type, offline,
unknown-fields, apply-order, mode, allow-exec, allow-inline-exec, allow-network,
mounts, container-engine, verify-tags, allow-unpinned, cluster.<key>), or a
ServiceSet/service object carrying the same settings in its spec.

Exit codes: 0 success (warnings allowed); 1 error results or unreadable input; 2 usage error.";

/// Command line.
#[derive(Debug, Parser)]
#[command(name = "krm-catalog", version, about = ABOUT, long_about = LONG_ABOUT, disable_help_subcommand = true)]
pub struct Cli {
    /// More logging on stderr (-v info, -vv debug, -vvv trace); RUST_LOG works too
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Expand services in plain YAML files and print the manifests (standalone mode)
    Render(render_cmd::RenderArgs),
    /// Print a JSON Schema for editors (yaml-language-server): one kind, or all kinds
    Schema {
        /// A kind (`ServiceSet`, `CertManager`, `ResolveCatalog`); all kinds when omitted
        kind: Option<String>,
        /// Print the function's own KEP-2906 metadata (a KRMFunctionCatalog, YAML) instead
        #[arg(long, conflicts_with = "kind")]
        function_catalog: bool,
        #[command(flatten)]
        catalogs: CatalogArgs,
    },
    /// Describe a kind or one of its fields, like `kubectl explain`
    Explain {
        /// `KIND` or `KIND.field.path`, e.g. `CertManager.spec.config.clusterIssuer`
        target: String,
        /// Print every field below, with its type, as a tree (no descriptions), as `kubectl
        /// explain --recursive` does
        #[arg(long)]
        recursive: bool,
        /// `text` (as kubectl prints it), `yaml` or `json` (for machines: the kind, the field
        /// path and the schema below it, with its fields' names, types and `required`)
        #[arg(short, long, value_enum, default_value = "text")]
        output: catalog_view::Format,
        #[command(flatten)]
        catalogs: CatalogArgs,
    },
    /// Inspect and check catalogs
    #[command(subcommand)]
    Catalog(catalog_cmd::CatalogCommand),
    /// Move in from another tool (kubara): its config into ServiceSets
    #[command(subcommand)]
    Import(import::ImportCommand),
    /// Print the version and the built-in catalog
    Version {
        /// `text` (for people), `yaml` or `json` (for machines: `version`, `builtinCatalog`
        /// with `reference` and `digest`)
        #[arg(short, long, value_enum, default_value = "text")]
        output: catalog_view::Format,
    },
    /// Check a detached Ed25519 signature of a file, such as a release's (what `openssl
    /// pkeyutl -verify -rawin` checks); exit 1 when it does not verify
    VerifySignature {
        /// The publisher's public key (PEM `PUBLIC KEY`)
        #[arg(long, value_name = "PEM")]
        key: PathBuf,
        /// The signature: the 64 bytes openssl writes, or their base64
        #[arg(long, value_name = "FILE")]
        signature: PathBuf,
        /// The signed file
        file: PathBuf,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
    /// Write the man pages, one per command, into DIR (scripts/release ships them)
    #[command(hide = true)]
    ManPages {
        /// Where to write them
        dir: PathBuf,
    },
}

/// Which catalogs a human command looks at.
#[derive(Debug, Args, Clone, Default)]
pub struct CatalogArgs {
    /// A function config to take catalogs from (ResolveCatalog, ConfigMap or ServiceSet)
    #[arg(long, value_name = "FILE")]
    fn_config: Option<PathBuf>,
    /// An extra catalog (repeatable), searched after the built-in catalog: a directory or
    /// file, an `https://` URL (optionally `#sha256=<hex>`) or `oci://REF`, as in a function
    /// config's `spec.catalogs`. A remote catalog named here is trusted because you typed it
    /// (a function config must list it in `trustedCatalogs`); a redirect elsewhere is not
    #[arg(long = "catalog", value_name = "REF")]
    catalogs: Vec<String>,
    /// Leave out the built-in catalog
    #[arg(long)]
    no_builtin: bool,
    /// Let later catalogs replace earlier definitions
    #[arg(long)]
    catalog_overwrite: bool,
}

/// Writes to stdout: the one place that does.
pub struct Stdout;

impl Stdout {
    /// Write everything, ignoring a closed pipe (`| head` is not an error).
    pub fn write(text: &str) -> bool {
        Self::write_pieces(|put| put(text))
    }

    /// Write the text `produce` hands over in pieces, in order, so that a large output need
    /// not be whole in memory. After a failure the remaining pieces are dropped; a closed pipe
    /// is not an error, as in [`Stdout::write`].
    pub fn write_pieces(produce: impl FnOnce(&mut dyn FnMut(&str))) -> bool {
        let mut out = std::io::stdout().lock();
        let mut written = Ok(());
        produce(&mut |piece: &str| {
            if written.is_ok() {
                written = out.write_all(piece.as_bytes());
            }
        });
        match written.and_then(|()| out.flush()) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => true,
            Err(e) => {
                crate::log!(Level::Error, "cannot write to stdout: {e}");
                false
            }
        }
    }

    /// Write a command's output; a failed write is reported here and fails the command.
    pub fn print(text: &str) -> Result<(), CliError> {
        if Self::write(text) {
            Ok(())
        } else {
            Err(CliError::Reported)
        }
    }
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            // clap prints help/version to stdout and usage errors to stderr itself.
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    crate::logger::init(cli.verbose);
    exec(cli)
}

/// Run a parsed command line.
pub fn exec(cli: Cli) -> ExitCode {
    error::finish(run(cli))
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        None => function_mode(),
        Some(Command::Render(args)) => render_cmd::run(&args),
        Some(Command::Import(command)) => import::run(&command),
        Some(Command::Schema {
            kind,
            function_catalog,
            catalogs,
        }) => {
            if function_catalog {
                function_catalog_yaml(&catalogs)
            } else {
                schema(kind.as_deref(), &catalogs)
            }
        }
        Some(Command::Explain {
            target,
            recursive,
            output,
            catalogs,
        }) => explain::run(&target, recursive, output, &catalogs),
        Some(Command::Catalog(command)) => catalog_cmd::run(command),
        Some(Command::Version { output }) => version(output),
        Some(Command::Completions { shell }) => completions(shell),
        Some(Command::ManPages { dir }) => man_pages(&dir),
        Some(Command::VerifySignature {
            key,
            signature,
            file,
        }) => verify_signature(&key, &signature, &file),
    }
}

/// The man pages of every command (`krm-catalog.1`, `krm-catalog-catalog-lint.1`, …) into
/// `dir`, hidden commands left out.
fn man_pages(dir: &std::path::Path) -> Result<(), CliError> {
    // After `build`, every subcommand's display name is its full path (`krm-catalog-catalog-
    // lint`), which is the page's title and file name.
    fn write(command: &clap::Command, dir: &std::path::Path) -> Result<(), std::io::Error> {
        let name = command
            .get_display_name()
            .unwrap_or_else(|| command.get_name())
            .to_owned();
        let mut text = Vec::new();
        clap_mangen::Man::new(command.clone()).render(&mut text)?;
        fs_err::write(dir.join(format!("{name}.1")), text)?;
        for sub in command.get_subcommands().filter(|c| !c.is_hide_set()) {
            write(sub, dir)?;
        }
        Ok(())
    }
    let mut command = <Cli as clap::CommandFactory>::command();
    command.build();
    fs_err::create_dir_all(dir)
        .and_then(|()| write(&command, dir))
        .map_err(|e| {
            CliError::Read(ReadError::At {
                label: dir.display().to_string(),
                reason: e.to_string(),
            })
        })
}

/// `verify-signature`: one line on success, the error otherwise.
fn verify_signature(
    key: &std::path::Path,
    signature: &std::path::Path,
    file: &std::path::Path,
) -> Result<(), CliError> {
    let read = |path: &std::path::Path| {
        fs_err::read(path).map_err(|e| {
            CliError::Read(ReadError::At {
                label: path.display().to_string(),
                reason: e.to_string(),
            })
        })
    };
    let pem = String::from_utf8_lossy(&read(key)?).into_owned();
    let names = (
        key.display().to_string(),
        signature.display().to_string(),
        file.display().to_string(),
    );
    crate::signature::verify(
        &pem,
        &read(signature)?,
        &read(file)?,
        (&names.0, &names.1, &names.2),
    )?;
    Stdout::print(&format!("ok {}: signed by the key {}\n", names.2, names.0))
}

/// The completion script for `shell`, from the same definitions as the parser.
fn completions(shell: clap_complete::Shell) -> Result<(), CliError> {
    let mut command = <Cli as clap::CommandFactory>::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "krm-catalog", &mut script);
    Stdout::print(&String::from_utf8_lossy(&script))
}

/// Print results on stderr, one line each (kustomize ignores `results`; stderr is all it shows).
pub fn report(results: &Results) {
    let mut err = std::io::stderr().lock();
    for r in results.sorted() {
        if r.severity != Severity::Info || crate::logger::enabled(Level::Info) {
            let _ = writeln!(err, "{r}");
        }
    }
}

/// Function mode always writes the ResourceList (results included), then fails on errors.
fn function_mode() -> Result<(), CliError> {
    let limit = crate::yaml::max_input_bytes() as u64 + 1;
    let size = stdin_file_size().map_or(0, |n| n.min(limit));
    let mut input = String::with_capacity(usize::try_from(size).unwrap_or(0));
    std::io::stdin()
        .lock()
        .take(limit)
        .read_to_string(&mut input)
        .map_err(ReadError::Stdin)?;
    let mut list = resource_list::read_owned_keeping(input, pipeline::read_whole)?;
    // The item vector grew by doubling as it was read and is held for the whole run.
    list.items.shrink_to_fit();
    let outcome = pipeline::run(list, &RunContext::default());
    let sorted: Vec<serde_json::Value> = outcome
        .results
        .sorted()
        .iter()
        .map(crate::results::KrmResult::to_value)
        .collect();
    // Always the whole ResourceList first, then the verdict (results, exit status).
    let written =
        Stdout::write_pieces(|put| resource_list::write_pieces(outcome.list, Some(sorted), put));
    report(&outcome.results);
    if outcome.results.has_errors() || !written {
        Err(CliError::Reported)
    } else {
        Ok(())
    }
}

/// The size of stdin when it is a regular file (`< input.yaml`, what kpt's `--exec` and the
/// benchmark do), so the input is read into a buffer of its exact size: a buffer grown by
/// doubling holds up to twice the input at its peak. `None` for pipes and when `/dev/stdin`
/// cannot be looked at (the buffer then grows as it reads).
fn stdin_file_size() -> Option<u64> {
    let meta = fs_err::metadata("/dev/stdin").ok()?;
    meta.is_file().then_some(meta.len())
}

/// The one YAML document of a `--fn-config` file. A file of several documents is refused by
/// name (the parser's own message points at its Rust API).
pub(crate) fn parse_fn_config(
    path: &std::path::Path,
    text: &str,
) -> Result<serde_json::Value, ReadError> {
    let docs = crate::yaml::parse_stream(text).map_err(|e| ReadError::in_file(path, e))?;
    let mut docs: Vec<serde_json::Value> = docs
        .into_iter()
        .map(|d| d.value)
        .filter(|v| !v.is_null())
        .collect();
    match docs.len() {
        1 => Ok(docs.remove(0)),
        found => Err(ReadError::FnConfigDocuments {
            path: path.display().to_string(),
            found,
        }),
    }
}

/// Load the catalogs a human command asked for; warnings are printed.
fn load_for_command(args: &CatalogArgs) -> Result<Catalog, CliError> {
    let mut settings = Settings::default();
    if let Some(path) = &args.fn_config {
        let text = fs_err::read_to_string(path)?;
        let doc = parse_fn_config(path, &text)?;
        let fc = config::parse(Some(&doc));
        if !fc.problems.is_empty() {
            return Err(CliError::Problems(
                fc.problems
                    .iter()
                    .map(|p| (Severity::Error, format!("{}: {p}", path.display())))
                    .collect(),
            ));
        }
        settings = fc.settings;
        // As in a run: the config's relative paths resolve against its file's directory.
        settings.rebase(path.parent().unwrap_or(std::path::Path::new("")));
    }
    for (i, c) in args.catalogs.iter().enumerate() {
        let source: CatalogRef = c.parse().map_err(CliError::Reference)?;
        // The user who typed a remote reference trusts it (and nothing it redirects to).
        settings.trusted_catalogs.extend(source.trust_entry());
        settings.catalogs.push(CatalogEntry {
            source,
            field: crate::diagnostics::FieldPath::root()
                .key("--catalog")
                .index(i),
            standard_pattern: None,
        });
    }
    if args.no_builtin {
        settings.builtin = false;
    }
    settings.catalog_overwrite |= args.catalog_overwrite;
    let remote = LazyRemote::new(settings.offline);
    let (catalog, errors) =
        pipeline::load_catalogs(&settings, &[], &RunContext::default(), &remote);
    error::fail_on_errors(
        errors
            .iter()
            .map(|(e, _)| (e.severity(), e.to_string()))
            .collect(),
    )?;
    Ok(catalog)
}

fn schema(kind: Option<&str>, args: &CatalogArgs) -> Result<(), CliError> {
    let catalog = load_for_command(args)?;
    let value = match kind {
        None => catalog::schema::all(&catalog),
        Some(k) => explain::schema_for_kind(&catalog, k, catalog::schema::Flavor::Validation)?,
    };
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    Stdout::print(&(text + "\n"))
}

fn function_catalog_yaml(args: &CatalogArgs) -> Result<(), CliError> {
    let catalog = load_for_command(args)?;
    Stdout::print(&crate::yaml::emit(&catalog::schema::krm_function_catalog(
        &catalog,
    )))
}

fn version(output: catalog_view::Format) -> Result<(), CliError> {
    let (catalog, _) = Catalog::merge(vec![crate::builtin::bundle()], false);
    let (reference, digest) = catalog
        .bundles
        .first()
        .map(|b| (b.reference.clone(), format!("sha256:{}", b.digest)))
        .unwrap_or_default();
    let version = env!("CARGO_PKG_VERSION");
    if output == catalog_view::Format::Text {
        return Stdout::print(&format!(
            "krm-catalog {version}\nbuilt-in catalog: {reference} {digest}\n"
        ));
    }
    // Machines read the same document in either form (issue 22).
    let value = serde_json::json!({
        "version": version,
        "builtinCatalog": {"reference": reference, "digest": digest},
    });
    Stdout::print(&catalog_view::render_value(&value, output))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 8 point 3 (acceptance review): `--help` lists every ConfigMap key the function
    /// accepts; `unknown-fields`, `verify-tags` and `allow-unpinned` were missing.
    #[test]
    fn issue8_help_lists_every_configmap_key() {
        let help: String = LONG_ABOUT.split_whitespace().collect::<Vec<_>>().join(" ");
        for key in crate::config::CONFIGMAP_KEYS {
            assert!(
                help.contains(&format!(" {key},")) || help.contains(&format!(" {key})")),
                "{key} is missing from the help text"
            );
        }
    }
}

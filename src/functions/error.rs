//! Why a runtime could not be verified, fetched, locked or run: one type for the module.

use crate::diagnostics::FieldPath;
use crate::remote::RemoteError;
use crate::remote::archive::ArchiveError;

/// A failed runtime step. Messages name the image, URI, file or function they are about.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// An image reference outside the grammar (`invalid reference "…": …`).
    #[error(transparent)]
    Image(#[from] crate::catalog_ref::OciRefError),
    /// A declared `sha256` that is not one.
    #[error("\"{0}\" is not a sha256 digest (64 lowercase hex characters)")]
    NotADigest(String),
    /// The digest in the reference and the declared `sha256` differ.
    #[error("image {image} is pinned to {in_reference} but sha256 declares {declared}")]
    PinConflict {
        /// The image.
        image: String,
        /// `sha256:…` of the reference.
        in_reference: String,
        /// `sha256:…` declared.
        declared: String,
    },
    /// No digest at all, and `allowUnpinned` is off.
    #[error(
        "image {0} has no digest; add sha256 (`krm-catalog catalog lock` fills it in) or set functions.allowUnpinned"
    )]
    Unpinned(String),
    /// The registry check failed.
    #[error(transparent)]
    Registry(#[from] RegistryCheck),
    /// No platform entry for this machine.
    #[error("no exec runtime for {platform} (the catalog has {have})")]
    NoPlatform {
        /// `os/arch` of this machine.
        platform: String,
        /// The catalog's platforms, `os/arch, …`.
        have: String,
    },
    /// An exec platform without `sha256`.
    #[error(
        "{0} has no sha256; KEP-2906 requires one for exec runtimes (`krm-catalog catalog lock` fills it in)"
    )]
    NoSha256(String),
    /// A download, a pin or a registry lookup failed.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// The download does not unpack.
    #[error("{uri}: {error}")]
    Archive {
        /// The download.
        uri: String,
        /// Why.
        error: ArchiveError,
    },
    /// A runtime source a run cannot fetch (an unsupported scheme, a Git source without a
    /// commit or a file, an OCI reference that does not parse); `catalog lint` says the same.
    #[error("{uri} {reason}")]
    Source {
        /// The URI as written.
        uri: String,
        /// What is wrong and what to write instead.
        reason: String,
    },
    /// A `git::file://` repository outside the local catalog that names it, or named by a
    /// remote catalog.
    #[error(
        "{uri}: a `git::file://` repository must be a directory inside the local catalog that names it ({reason}); a remote catalog names a repository by https://"
    )]
    GitFileNotLocal {
        /// The URI.
        uri: String,
        /// Why.
        reason: String,
    },
    /// A `file://` URI in a catalog that has no root on this machine.
    #[error(
        "{0}: `file://` URIs are allowed only in local catalogs (a path in the function config, or an inline catalog); a remote catalog cannot name a file on this machine"
    )]
    FileUriNotLocal(String),
    /// A `file://` URI with `..`.
    #[error(
        "{uri}: `..` is not allowed in `file://` URIs; name a file inside the catalog root {root}"
    )]
    FileUriParent {
        /// The URI.
        uri: String,
        /// The catalog root.
        root: String,
    },
    /// A `file://` URI that resolves outside the catalog root.
    #[error(
        "{uri}: resolves to {real}, outside the catalog root {root}; `file://` URIs must name a file inside the catalog that names them"
    )]
    FileUriOutside {
        /// The URI.
        uri: String,
        /// Where it resolves to.
        real: String,
        /// The catalog root.
        root: String,
    },
    /// A `file://` URI naming a directory, pipe or device.
    #[error("{uri}: {path} is not a regular file")]
    FileUriNotAFile {
        /// The URI.
        uri: String,
        /// The resolved path.
        path: String,
    },
    /// A `file://` URI naming a file above the download limit.
    #[error("{uri}: {bytes} bytes is more than the limit of {limit} ({env})")]
    FileUriTooBig {
        /// The URI.
        uri: String,
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: usize,
        /// The variable that raises it.
        env: &'static str,
    },
    /// A file system error (the message names the path).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The verified binary could not be written.
    #[error("cannot install the binary in {dir}: {error}")]
    Install {
        /// The directory.
        dir: String,
        /// Why.
        error: std::io::Error,
    },
    /// No cache, and no private temporary directory could be made.
    #[error(
        "no cache directory ({no_cache}) and no directory for the binary in {base}{reason}; {hint}"
    )]
    TempDir {
        /// The system's temporary directory.
        base: String,
        /// `: error`, or ` (last name taken)` after every attempt.
        reason: String,
        /// Why there is no cache directory (`$HOME is /nonexistent …`).
        no_cache: String,
        /// What to set and mount.
        hint: String,
    },
    /// Something at a path: a YAML error, a directory entry, the KEP problems of a file.
    #[error("{path}: {reason}")]
    At {
        /// The file or directory.
        path: String,
        /// What is wrong there.
        reason: String,
    },
    /// `catalog lock` found the runtime in the data but not its line in block style.
    #[error("{file}: cannot find `{key}: {value}` in block style to add its sha256")]
    NotInBlockStyle {
        /// The file.
        file: String,
        /// `image` or `uri`.
        key: &'static str,
        /// The value.
        value: String,
    },
    /// `catalog lock` of a function config: a Git source its trust list does not name is not
    /// fetched.
    #[error(
        "{file}: {field}: {url} is not trusted, so it is not fetched; review it with `krm-catalog catalog view '{reference}'`, then add {url} to {trust_field} (exactly, or a prefix ending in *); nothing was written"
    )]
    UntrustedGit {
        /// The file.
        file: String,
        /// The entry's field path.
        field: String,
        /// The source's string form.
        reference: String,
        /// The repository URL, without credentials.
        url: String,
        /// `spec.trustedCatalogs` or `data.trusted-catalogs`.
        trust_field: &'static str,
    },
    /// `catalog lock` found a Git source in the data but not its text.
    #[error(
        "{file}: cannot find the ref of {field} ({reference}) in block style or in a one-line flow mapping; add commit: {commit} by hand (nothing was written)"
    )]
    GitEntryNotFound {
        /// The file.
        file: String,
        /// The entry's field path.
        field: String,
        /// The source's string form.
        reference: String,
        /// The commit its ref resolved to.
        commit: String,
    },
    /// The edited text does not parse.
    #[error("{file}: the locked file would not parse: {reason}")]
    LockedUnparsable {
        /// The file.
        file: String,
        /// The parser's message.
        reason: String,
    },
    /// The edited text is not the original plus the pins.
    #[error(
        "{file}: {reason}; nothing was written: add the pins by hand (`krm-catalog catalog verify` checks runtimes)"
    )]
    Unproven {
        /// The file.
        file: String,
        /// What the proof found.
        reason: EditProof,
    },
    /// `catalog lock` does not write through links.
    #[error(
        "{file}: is a symbolic link to \"{target}\"; `catalog lock` does not write through links: lock the file it points to"
    )]
    Symlink {
        /// The link.
        file: String,
        /// Where it points.
        target: String,
    },
    /// Not a regular file.
    #[error("{0}: not a regular file")]
    NotAFile(String),
    /// Every temporary name was taken.
    #[error("cannot create a temporary file: {0}")]
    TempFile(String),
    /// The container engine is not installed.
    #[error(
        "no container engine: `{0}` is not installed; use functions.mode: pin to let kustomize or kpt run the function"
    )]
    NoEngine(String),
    /// The function did not start.
    #[error("cannot start {program}: {error}")]
    Start {
        /// The function's tag.
        program: String,
        /// Why.
        error: std::io::Error,
    },
    /// Waiting for the function failed.
    #[error("{program}: {error}")]
    Wait {
        /// The function's tag.
        program: String,
        /// Why.
        error: std::io::Error,
    },
    /// The function ran past its deadline.
    #[error("{program} timed out after {secs}s ({env})")]
    TimedOut {
        /// The function's tag.
        program: String,
        /// The deadline.
        secs: u64,
        /// The variable that sets it.
        env: &'static str,
    },
    /// The function wrote more than the input limit.
    #[error(
        "{program} wrote more than {bytes} bytes to stdout; raise KRM_CATALOG_MAX_INPUT_BYTES if that much output is expected"
    )]
    TooMuchOutput {
        /// The function's tag.
        program: String,
        /// The limit.
        bytes: usize,
    },
    /// The function exited with an error.
    #[error("{program} failed with {code}{stderr}")]
    Failed {
        /// The function's tag.
        program: String,
        /// `exit code N` or `a signal`.
        code: String,
        /// `: <its stderr>`, or empty.
        stderr: String,
    },
    /// A Starlark script failed in `krm-catalog-starlark`: a syntax error, `fail`, a runtime
    /// error, a bound reached, output that is not KRM; its message names the script and line.
    #[error("{0}")]
    StarlarkFailed(String),
    /// A Starlark script ran past the function timeout and its process was stopped.
    #[error("starlark script {at}: still running after {secs}s ({env}); is there an endless loop?")]
    StarlarkTimedOut {
        /// The script.
        at: String,
        /// The deadline.
        secs: u64,
        /// The variable that sets it.
        env: &'static str,
    },
    /// A Starlark script's process ran out of its address space.
    #[error(
        "starlark script {script}: ran out of memory: a script may use {bytes} bytes of address space ({env}); build less at once, or raise the limit"
    )]
    StarlarkOutOfMemory {
        /// The script.
        script: String,
        /// The limit.
        bytes: u64,
        /// The variable that sets it.
        env: &'static str,
    },
    /// A Starlark script's process ended otherwise (a stack overflow, a signal).
    #[error("starlark script {script}: the interpreter {how}")]
    StarlarkCrashed {
        /// The script.
        script: String,
        /// What happened.
        how: String,
    },
    /// `krm-catalog-starlark` is not installed.
    #[error(
        "Starlark runtimes run in krm-catalog-starlark, which is neither in {beside} nor on PATH: install it beside krm-catalog (the release tarball and the container image carry both), or build it with `cargo install --locked --path crates/starlark`"
    )]
    StarlarkMissing {
        /// The directory of this binary.
        beside: String,
    },
    /// A Starlark script from a URL without `sha256`.
    #[error(
        "starlark script {0} has no sha256; a script fetched from a URL runs only when pinned: write `starlark: {{url: {0}, sha256: <sha256 of the script>}}`"
    )]
    StarlarkNoSha256(String),
    /// A Starlark script that is not UTF-8 text.
    #[error("starlark script {0} is not UTF-8 text")]
    StarlarkNotUtf8(String),
    /// The function's output is not UTF-8.
    #[error("{0} wrote output that is not UTF-8")]
    NotUtf8(String),
    /// The function's output is not a ResourceList.
    #[error("{program} wrote something that is not a ResourceList: {reason}")]
    NotAResourceList {
        /// The function's tag.
        program: String,
        /// The reader's message.
        reason: String,
    },
}

/// A runtime failure is about the item whose kind chose the runtime.
impl crate::results::Diagnostic for RuntimeError {
    fn field_path(&self) -> FieldPath {
        FieldPath::parse("kind")
    }
}

/// Why a registry check of an image failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryCheck {
    /// The registry could not be asked (offline, unreachable, not found, refused).
    #[error(transparent)]
    Lookup(RemoteError),
    /// The tag names another digest than the pinned one.
    #[error("tag {tagged} moved: the registry has {in_registry}, the catalog pins {pinned}")]
    TagMoved {
        /// `name:tag`.
        tagged: String,
        /// What the registry has.
        in_registry: String,
        /// What the catalog pins.
        pinned: String,
    },
    /// The registry's manifest for the pinned digest hashes to another one.
    #[error("{reference}: the registry returned a manifest that hashes to {got}")]
    ManifestMismatch {
        /// `name@sha256:…`.
        reference: String,
        /// What it hashed to.
        got: String,
    },
}

/// Why an edit of `catalog lock` is not proven to add only the pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EditProof {
    /// Something else changed, or another number of pins was added.
    #[error(
        "the sha256 lines did not land where the runtimes are (the same text appears elsewhere in the file, e.g. in a template)"
    )]
    Misplaced,
    /// The edited catalog does not parse as KEP-2906.
    #[error("the locked catalog no longer loads")]
    NoLongerLoads,
    /// A runtime still has no pin.
    #[error(
        "a runtime is still without sha256 after the edit (its `image:` or `uri:` line also appears in another mapping)"
    )]
    StillUnpinned,
    /// A commit landed elsewhere, or a Git source is still without a pin.
    #[error(
        "the commit pins did not land in the Git sources (the same url and ref appear elsewhere in the file)"
    )]
    CommitMisplaced,
}

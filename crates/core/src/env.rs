//! The environment: every variable the program reads, named once, with its default and meaning
//! (docs/reference/environment.md and SECURITY.md's limits table follow this list), and typed
//! accessors that apply the defaults. Nothing else reads the environment.
//!
//! Numbers are read trimmed; a value that does not parse is ignored and the default applies,
//! with a warning on stderr (once per variable), so a typo in a limit is never silent.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// Cache directory (default `$XDG_CACHE_HOME/krm-catalog`, else `~/.cache/krm-catalog`; none
/// for a home of `/` or [`NO_HOME`]).
pub const CACHE: &str = "KRM_CATALOG_CACHE";
/// Catalog paths (`:`-separated) loaded right after the built-in catalog and before
/// `spec.catalogs`: how a derived container image bakes in a team's catalog (default none).
pub const CATALOGS: &str = "KRM_CATALOG_CATALOGS";
/// Extra CA certificates (a PEM file) for private HTTPS servers and registries (default none).
pub const CA_FILE: &str = "KRM_CATALOG_CA_FILE";
/// A token for HTTPS Git catalog sources that need one (default none): sent as the password
/// (user `x-access-token`, which GitHub, GitLab and Gitea accept) to the host
/// [`GIT_TOKEN_HOST`] names only, never logged.
pub const GIT_TOKEN: &str = "KRM_CATALOG_GIT_TOKEN";
/// The one host (`host[:port]`; without a port, port 443) that [`GIT_TOKEN`] is sent to
/// (default none: the token is not sent at all).
pub const GIT_TOKEN_HOST: &str = "KRM_CATALOG_GIT_TOKEN_HOST";
/// The largest object of a fetched Git pack, unpacked (default 16 MiB): gix's allocation
/// limit, so a pack of small deltas cannot expand without bound; a fetch may grow the
/// process's memory by 8 times it while it unpacks.
pub const MAX_GIT_OBJECT_BYTES: &str = "KRM_CATALOG_MAX_GIT_OBJECT_BYTES";
/// Seconds per HTTP request (default 30, at least 1).
pub const HTTP_TIMEOUT: &str = "KRM_CATALOG_HTTP_TIMEOUT";
/// Retries of an HTTP request on transient failures (default 3).
pub const HTTP_RETRIES: &str = "KRM_CATALOG_HTTP_RETRIES";
/// The largest download accepted (default 64 MiB); exec archives may unpack to 4 times it.
pub const MAX_DOWNLOAD_BYTES: &str = "KRM_CATALOG_MAX_DOWNLOAD_BYTES";
/// The largest OCI manifest accepted (default 4 MiB).
pub const MAX_MANIFEST_BYTES: &str = "KRM_CATALOG_MAX_MANIFEST_BYTES";
/// The largest input read at once: a ResourceList, a catalog file, a template output, a
/// function's stdout, all `render` inputs together (default 256 MiB).
pub const MAX_INPUT_BYTES: &str = "KRM_CATALOG_MAX_INPUT_BYTES";
/// Catalog content unpacked from a `.tar.gz` (remote bundles, OCI tar+gzip layers), all files
/// together (default 64 MiB).
pub const MAX_CATALOG_BYTES: &str = "KRM_CATALOG_MAX_CATALOG_BYTES";
/// One catalog file, unpacked or read from a local catalog directory (default 16 MiB).
pub const MAX_CATALOG_FILE_BYTES: &str = "KRM_CATALOG_MAX_CATALOG_FILE_BYTES";
/// Unpacked bytes per packed byte of an archive beyond 8 MiB of output (default 200, at
/// least 1): real catalogs and binaries stay far below it, decompression bombs far above.
pub const MAX_UNPACK_RATIO: &str = "KRM_CATALOG_MAX_UNPACK_RATIO";
/// Seconds a run-mode function may take, and the CEL rules of one validation (default 300, at
/// least 1).
pub const FUNCTION_TIMEOUT: &str = "KRM_CATALOG_FUNCTION_TIMEOUT";
/// Bytes of address space of a Starlark script's process, `krm-catalog-starlark` (default
/// 512 MiB): the Starlark heap, its stack, the items it holds.
pub const STARLARK_MAX_MEMORY_BYTES: &str = "KRM_CATALOG_STARLARK_MAX_MEMORY_BYTES";
/// Bytes one template render may create for strings, lists and output (default 128 MiB).
pub const TEMPLATE_MAX_BYTES: &str = "KRM_CATALOG_TEMPLATE_MAX_BYTES";
/// Seconds one template render may take (default 10).
pub const TEMPLATE_TIMEOUT: &str = "KRM_CATALOG_TEMPLATE_TIMEOUT";
/// Log level on stderr (`off`, `error`, `warn`, `info`, `debug`, `trace`; default by `-v`).
pub const RUST_LOG: &str = "RUST_LOG";
/// Base of the default cache directory.
pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
/// The home directory: `~/` in catalog paths, the last default of the cache directory, and
/// where `.netrc` is.
pub const HOME: &str = "HOME";
/// Where `krm-catalog-starlark` is looked for when it is not beside this binary.
pub const PATH: &str = "PATH";
/// The `.netrc` file for HTTPS Git catalog sources (default `$HOME/.netrc`), as curl reads it.
pub const NETRC: &str = "NETRC";

const MIB: u64 = 1024 * 1024;

/// A number from `name`, trimmed; `None` when unset or not a number (then a warning).
fn number<T: std::str::FromStr>(name: &str) -> Option<T> {
    let value = std::env::var_os(name).filter(|v| !v.is_empty())?;
    let parsed = value.to_str().and_then(|v| v.trim().parse().ok());
    if parsed.is_none() {
        warn_once(name, &value);
    }
    parsed
}

/// The logger lives in `krm-catalog`, above this crate, so this writes its line itself (the
/// logger's [`Line`](crate::diagnostics::Line)); accessors run many times per process, the warning once per variable.
fn warn_once(name: &str, value: &std::ffi::OsStr) {
    use std::io::Write as _;
    static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let Ok(mut warned) = WARNED.lock() else {
        return;
    };
    if warned.iter().any(|w| w == name) {
        return;
    }
    warned.push(name.to_owned());
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        crate::diagnostics::Line(
            crate::diagnostics::Severity::Warning,
            format_args!(
                "{name}={:?} is not a number; using the default",
                value.to_string_lossy()
            )
        )
    );
}

/// A variable's value when set and not empty.
fn non_empty(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// [`MAX_INPUT_BYTES`], read once per process.
pub fn max_input_bytes() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| number(MAX_INPUT_BYTES).unwrap_or(256 << 20))
}

/// [`TEMPLATE_MAX_BYTES`].
pub fn template_max_bytes() -> usize {
    number(TEMPLATE_MAX_BYTES).unwrap_or(128 << 20)
}

/// [`TEMPLATE_TIMEOUT`].
pub fn template_timeout() -> Duration {
    Duration::from_secs(number(TEMPLATE_TIMEOUT).unwrap_or(10u64))
}

/// [`FUNCTION_TIMEOUT`].
pub fn function_timeout() -> Duration {
    Duration::from_secs(number(FUNCTION_TIMEOUT).unwrap_or(300u64).max(1))
}

/// [`STARLARK_MAX_MEMORY_BYTES`].
pub fn starlark_max_memory_bytes() -> u64 {
    number(STARLARK_MAX_MEMORY_BYTES).unwrap_or(512 * MIB)
}

/// [`HTTP_TIMEOUT`].
pub fn http_timeout() -> Duration {
    Duration::from_secs(number(HTTP_TIMEOUT).unwrap_or(30u64).max(1))
}

/// [`HTTP_RETRIES`].
pub fn http_retries() -> usize {
    usize::try_from(number(HTTP_RETRIES).unwrap_or(3u64)).unwrap_or(3)
}

/// [`MAX_DOWNLOAD_BYTES`].
pub fn max_download_bytes() -> usize {
    usize::try_from(number(MAX_DOWNLOAD_BYTES).unwrap_or(64 * MIB)).unwrap_or(usize::MAX)
}

/// [`MAX_MANIFEST_BYTES`].
pub fn max_manifest_bytes() -> usize {
    usize::try_from(number(MAX_MANIFEST_BYTES).unwrap_or(4 * MIB)).unwrap_or(usize::MAX)
}

/// [`MAX_CATALOG_BYTES`].
pub fn max_catalog_bytes() -> u64 {
    number(MAX_CATALOG_BYTES).unwrap_or(64 * MIB)
}

/// [`MAX_CATALOG_FILE_BYTES`].
pub fn max_catalog_file_bytes() -> u64 {
    number(MAX_CATALOG_FILE_BYTES).unwrap_or(16 * MIB)
}

/// [`MAX_UNPACK_RATIO`].
pub fn max_unpack_ratio() -> u64 {
    number(MAX_UNPACK_RATIO).unwrap_or(200u64).max(1)
}

/// [`CA_FILE`], when set and not empty.
pub fn ca_file() -> Option<OsString> {
    non_empty(CA_FILE)
}

/// [`GIT_TOKEN`], when set and not empty.
pub fn git_token() -> Option<String> {
    non_empty(GIT_TOKEN).and_then(|t| t.into_string().ok())
}

/// [`GIT_TOKEN_HOST`], trimmed and lowercased, when set and not empty.
pub fn git_token_host() -> Option<String> {
    non_empty(GIT_TOKEN_HOST)
        .and_then(|h| h.into_string().ok())
        .map(|h| h.trim().to_ascii_lowercase())
        .filter(|h| !h.is_empty())
}

/// [`MAX_GIT_OBJECT_BYTES`].
pub fn max_git_object_bytes() -> u64 {
    number(MAX_GIT_OBJECT_BYTES).unwrap_or(16 * MIB)
}

/// [`CATALOGS`] as written (empty when unset or not UTF-8).
pub fn catalogs() -> String {
    std::env::var(CATALOGS).unwrap_or_default()
}

/// Whether [`CATALOGS`] is set and not empty.
pub fn catalogs_set() -> bool {
    non_empty(CATALOGS).is_some()
}

/// The cache directory: `$KRM_CATALOG_CACHE`, else `$XDG_CACHE_HOME/krm-catalog`, else
/// `$HOME/.cache/krm-catalog` (not for a home of `/` or [`NO_HOME`]); `None` when none is
/// known.
pub fn cache_dir() -> Option<PathBuf> {
    cache_dir_with_origin().map(|(dir, _)| dir)
}

/// The home directory of users that have none (Debian's and distroless' `nobody`, the user
/// the container image runs as): never created, never a cache.
pub const NO_HOME: &str = "/nonexistent";

/// [`cache_dir`] and the variable it came from ([`CACHE`], [`XDG_CACHE_HOME`] or [`HOME`]),
/// so messages can say which one to change.
pub fn cache_dir_with_origin() -> Option<(PathBuf, &'static str)> {
    let dir = |k: &str| non_empty(k).map(PathBuf::from);
    dir(CACHE)
        .map(|d| (d, CACHE))
        .or_else(|| dir(XDG_CACHE_HOME).map(|d| (d.join("krm-catalog"), XDG_CACHE_HOME)))
        .or_else(|| {
            dir(HOME)
                .filter(|h| h != Path::new("/") && h != Path::new(NO_HOME))
                .map(|h| (h.join(".cache/krm-catalog"), HOME))
        })
}

/// Why there is no cache directory: `$HOME is /nonexistent`, `HOME is not set`…
pub fn no_cache_reason() -> String {
    match home() {
        Some(h) if h == NO_HOME => format!(
            "${HOME} is {NO_HOME} (this user has no home directory, as in the container image)"
        ),
        Some(h) if h == "/" => format!("${HOME} is /"),
        Some(h) if h.is_empty() => format!("{HOME} is empty"),
        Some(_) => format!("{CACHE} is not set"),
        None => format!("{HOME} is not set"),
    }
}

/// [`HOME`] as set (possibly empty).
pub fn home() -> Option<OsString> {
    std::env::var_os(HOME)
}

/// [`PATH`].
pub fn path() -> Option<OsString> {
    non_empty(PATH)
}

/// [`NETRC`], when set and not empty.
pub fn netrc() -> Option<OsString> {
    non_empty(NETRC)
}

/// [`RUST_LOG`] when set and UTF-8.
pub fn rust_log() -> Option<String> {
    std::env::var(RUST_LOG).ok()
}

/// A path as the user wrote it in a config or variable, as the run resolves it: `~/` is the
/// home directory, a relative path is relative to `cwd`.
pub fn resolve_path(cwd: &Path, path: &str) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = home()
    {
        return PathBuf::from(home).join(rest);
    }
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

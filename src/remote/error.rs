//! Why a remote catalog or download could not be had: one type for the module, each message
//! naming the reference and saying what to do.

use super::net::{FetchError, Refusal, SetupError};

/// A failed remote load, fetch or registry lookup.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// A required cosign signature is missing or does not verify.
    #[error(transparent)]
    Signature(Box<super::cosign::CosignError>),
    /// The text does not parse as a URL.
    #[error("{url} is not a URL: {reason}")]
    NotAUrl {
        /// The text.
        url: String,
        /// What the URL parser said.
        reason: String,
    },
    /// A path segment hides `/` or `\` behind percent-encoding.
    #[error(
        "{url}: the path segment \"{segment}\" hides a separator (%2f or %5c); write the path without encoded separators"
    )]
    HiddenSeparator {
        /// The URL.
        url: String,
        /// The segment as written.
        segment: String,
    },
    /// A `.` or `..` segment.
    #[error("{url}: the path has a \"{segment}\" segment; write the path without dot segments")]
    DotSegment {
        /// The URL.
        url: String,
        /// The segment as written.
        segment: String,
    },
    /// `..;x`: a dot segment with path parameters, `..` to Tomcat, Jetty and Spring.
    #[error(
        "{url}: the path has a \"{segment}\" segment, a dot segment with parameters (some servers read it as \"{dots}\"); write the path without dot segments"
    )]
    DotSegmentWithParameters {
        /// The URL.
        url: String,
        /// The segment as written.
        segment: String,
        /// The dots it stands for.
        dots: String,
    },
    /// The URL's transport is refused; `hint` is what else the caller may use.
    #[error("{url}: {refusal}{hint}")]
    Refused {
        /// The URL.
        url: String,
        /// Why.
        refusal: Refusal,
        /// Added to the message (may be empty).
        hint: &'static str,
    },
    /// `url: …#sha256=…` looks pinned but is not.
    #[error(
        "{url}: the fragment \"#{fragment}\" pins nothing (it is never sent or checked); set the entry's sha256 field instead"
    )]
    FragmentPin {
        /// The URL.
        url: String,
        /// The fragment, without `#`.
        fragment: String,
    },
    /// Offline, and the download is not in the cache.
    #[error("offline: {reference} is not in {cache}")]
    NotCached {
        /// What was asked for.
        reference: String,
        /// The cache, described.
        cache: String,
    },
    /// Offline, and the catalog is not in the cache: say how to pull it.
    #[error(
        "offline: {reference} is not in {cache}; run `krm-catalog catalog pull {reference}` where the network is available"
    )]
    NotPulled {
        /// The catalog reference.
        reference: String,
        /// The cache, described.
        cache: String,
    },
    /// Offline: a registry cannot be asked.
    #[error("offline: cannot check {0} against its registry")]
    OfflineRegistry(String),
    /// Offline, and the cached copy came through a redirect hop the trust list does not cover.
    #[error(
        "offline: the copy in {cache} came through the redirect to {hop}, which is not trusted; add it to spec.trustedCatalogs if you trust it, or pin the catalog with sha256"
    )]
    UntrustedCachedHop {
        /// The cache, described.
        cache: String,
        /// The hop.
        hop: String,
    },
    /// The network stack could not be set up.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// A Git catalog could not be had.
    #[error(transparent)]
    Git(#[from] super::git::GitError),
    /// A request failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The network could not be reached: say how to prepare a cache for `reference`.
    #[error("{error}; {}", prepare_hint(.reference))]
    Unreachable {
        /// The failed request.
        error: FetchError,
        /// What to pull where the network is available.
        reference: String,
    },
    /// The bytes do not hash to the pin.
    #[error("{url}: sha256 mismatch: expected {expected}, downloaded {got}")]
    Mismatch {
        /// Where they came from.
        url: String,
        /// The pinned hex digest.
        expected: String,
        /// The hex digest of what came.
        got: String,
    },
    /// A local path where a remote source was expected.
    #[error("{0} is a local path")]
    LocalPath(String),
    /// The cache directory cannot be written, or there is none.
    #[error(transparent)]
    Cache(#[from] super::cache::CacheError),
    /// A bundle that does not unpack.
    #[error("{label}: {reason}")]
    Archive {
        /// The catalog (and layer) it came from.
        label: String,
        /// What the unpacker said.
        reason: String,
    },
}

/// How to run where container functions have no network.
pub(super) fn prepare_hint(reference: &str) -> String {
    format!(
        "kpt and kustomize run container functions without network: run `krm-catalog catalog pull {reference}` where the \
         network is available and mount that cache at ${} (read-only is fine), or set offline: true to fail without trying",
        crate::env::CACHE
    )
}

impl From<super::cosign::CosignError> for RemoteError {
    fn from(error: super::cosign::CosignError) -> Self {
        Self::Signature(Box::new(error))
    }
}

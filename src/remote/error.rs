//! Why a remote catalog or download could not be had: one type for the module, each message
//! naming the reference and saying what to do.

use super::net::{FetchError, Refusal, SetupError};

/// A failed remote load, fetch or registry lookup.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// A required cosign signature is missing or does not verify.
    #[error(transparent)]
    Signature(Box<CosignError>),
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
    Git(#[from] GitError),
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

impl From<CosignError> for RemoteError {
    fn from(error: CosignError) -> Self {
        Self::Signature(Box::new(error))
    }
}

/// Why a signature check failed (`remote::cosign`; here so that the two files do not import
/// each other).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CosignError {
    /// The key is not a PEM public key of a supported algorithm.
    #[error("{source_name}: {reason}")]
    NotAKey {
        /// Where the key was given (a file, or the config field of an inline key).
        source_name: String,
        /// What is wrong.
        reason: String,
    },
    /// The registry has no signature tag for the digest.
    #[error(
        "{reference}: no cosign signature of {digest}: the registry has no tag {tag}; {required} requires one (sign it with `{how}`)"
    )]
    NoSignature {
        /// The artifact or image.
        reference: String,
        /// Its manifest digest.
        digest: String,
        /// The signature tag looked for.
        tag: String,
        /// What requires it: `the key …`, `the keyless identity …`.
        required: String,
        /// The cosign command that makes one.
        how: &'static str,
    },
    /// No signature layer verifies with the key.
    #[error(
        "{reference}: no cosign signature of {digest} verifies with the key {key} ({count} signature(s) in {tag})"
    )]
    Unverified {
        /// The artifact or image.
        reference: String,
        /// Its manifest digest.
        digest: String,
        /// The signature tag.
        tag: String,
        /// The key.
        key: String,
        /// Signature layers found.
        count: usize,
    },
    /// A signature verifies, but its payload signs another digest.
    #[error(
        "{reference}: the cosign signature in {tag} verifies with the key {key} but signs {signed}, not {digest}"
    )]
    OtherDigest {
        /// The artifact or image.
        reference: String,
        /// Its manifest digest.
        digest: String,
        /// The signature tag.
        tag: String,
        /// The key.
        key: String,
        /// The digest the payload names.
        signed: String,
    },
    /// A signature verifies, but its payload is not a simple-signing document.
    #[error(
        "{reference}: the cosign signature in {tag} for {digest} verifies with the key {key} but its payload is not a cosign simple-signing document: {reason}"
    )]
    Malformed {
        /// The artifact or image.
        reference: String,
        /// Its manifest digest.
        digest: String,
        /// The signature tag.
        tag: String,
        /// The key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Offline, and no signature is cached.
    #[error(
        "{reference}: offline and no cosign signature of {digest} ({tag}) is in {cache}; {required} requires one (run `krm-catalog catalog pull` for it while online)"
    )]
    NotCached {
        /// The artifact or image.
        reference: String,
        /// Its manifest digest.
        digest: String,
        /// The signature tag.
        tag: String,
        /// What requires it: `the key …`, `the keyless identity …`.
        required: String,
        /// The cache.
        cache: String,
    },
    /// No layer of the signature manifest is a keyless signature (none has a certificate).
    #[error(
        "{reference}: no keyless cosign signature of {digest} in {tag} ({count} signature(s), none with a certificate in dev.sigstore.cosign/certificate); the keyless {policy} requires one (sign it with `cosign sign`)"
    )]
    KeylessNone {
        /// The artifact or image.
        reference: String,
        /// Its manifest digest.
        digest: String,
        /// The signature tag.
        tag: String,
        /// The policy, shown.
        policy: String,
        /// Signature layers found.
        count: usize,
    },
    /// No keyless signature satisfies the policy: why the first one does not.
    #[error(
        "{reference}: the keyless cosign signature of {digest} in {tag} does not satisfy the keyless {policy}: {reason}"
    )]
    KeylessRejected {
        /// The artifact or image.
        reference: String,
        /// Its manifest digest.
        digest: String,
        /// The signature tag.
        tag: String,
        /// The policy, shown.
        policy: String,
        /// Why not.
        reason: String,
    },
}

/// Why a Git catalog could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    /// The fetch (or opening a `file://` repository) failed.
    #[error("cannot fetch {reference} from {url}: {reason}")]
    Fetch {
        /// The URL, without credentials.
        url: String,
        /// The ref.
        reference: String,
        /// What gix said (credentials removed).
        reason: String,
    },
    /// The fetch took longer than its deadline.
    #[error(
        "fetching {url} took longer than {seconds} s; raise {} (a Git fetch may take 4 times one request's seconds) for a slow server",
        crate::env::HTTP_TIMEOUT
    )]
    Timeout {
        /// The URL.
        url: String,
        /// The deadline.
        seconds: u64,
    },
    /// The pack grew past the download limit.
    #[error(
        "{url}: the fetched pack is larger than {bytes} bytes; raise {} if the repository is that big, or keep catalogs in a smaller repository",
        crate::env::MAX_DOWNLOAD_BYTES
    )]
    PackTooBig {
        /// The URL.
        url: String,
        /// The limit.
        bytes: u64,
    },
    /// The server does not have the ref.
    #[error(
        "{url} has no ref \"{reference}\" (looked for the tag, the branch and a full ref name); check the name with `git ls-remote {url}`"
    )]
    NoSuchRef {
        /// The URL.
        url: String,
        /// The ref.
        reference: String,
    },
    /// The ref resolved to another commit than the pin.
    #[error(
        "{url}: ref \"{reference}\" is now commit {got}, but commit pins {expected}: the ref moved (or the pin is wrong); check the new commit, then set commit: {got} if you trust it"
    )]
    Moved {
        /// The URL.
        url: String,
        /// The ref.
        reference: String,
        /// The pin.
        expected: String,
        /// What the ref is now.
        got: String,
    },
    /// `path` names no directory of the commit, or leaves the tree through a link.
    #[error("{url}@{commit}: path \"{path}\" {reason}")]
    Path {
        /// The URL.
        url: String,
        /// The commit.
        commit: String,
        /// The path.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The catalog's files are too many or too large.
    #[error("{url}@{commit}: {reason}")]
    Tree {
        /// The URL.
        url: String,
        /// The commit.
        commit: String,
        /// The bound that was hit.
        reason: String,
    },
    /// An object of the pack (or of a `file://` repository) unpacks past the allocation limit.
    #[error(
        "{url}: an object of the repository unpacks to more than {bytes} bytes (a pack of small deltas can expand without bound); raise {} if the repository holds files that big",
        crate::env::MAX_GIT_OBJECT_BYTES
    )]
    ObjectTooBig {
        /// The URL.
        url: String,
        /// The limit.
        bytes: u64,
    },
    /// The server advertised more refs than a fetch reads.
    #[error(
        "{url}: the server advertised more than {lines} refs or {bytes} bytes of them; a catalog repository needs a few (ask for a tag or a branch that fewer refs start with)"
    )]
    TooManyRefs {
        /// The URL.
        url: String,
        /// The line bound.
        lines: u64,
        /// The byte bound.
        bytes: u64,
    },
    /// `http://` to a host that is not loopback: the rule of `url:` catalogs.
    #[error("{url}: plain HTTP is refused except for loopback hosts; use https://")]
    PlainHttp {
        /// The URL.
        url: String,
    },
    /// Resolving the pack grew the process past its memory budget.
    #[error(
        "{url}: unpacking the fetched pack took more than {bytes} bytes of memory (a pack of deltas can expand without bound); raise {} (the budget is 8 times it) if the repository holds files that big",
        crate::env::MAX_GIT_OBJECT_BYTES
    )]
    MemoryBudget {
        /// The URL.
        url: String,
        /// The budget.
        bytes: u64,
    },
    /// `git://` without a commit pin to a host that is not loopback.
    #[error(
        "{url}: git:// is unauthenticated; pin the catalog with commit: <full sha> (the commit id proves the content), or use https://"
    )]
    PlainGit {
        /// The URL.
        url: String,
    },
    /// Offline and not in the cache.
    #[error(
        "offline: {reference} is not in {cache}; run `krm-catalog catalog pull '{reference}'` where the network is available"
    )]
    NotPulled {
        /// The source's string form.
        reference: String,
        /// The cache, described.
        cache: String,
    },
}

impl GitError {
    /// Whether the catalog could just not be reached (then a run that does not need it goes
    /// on, KEP-2906 "Dependencies"); a moved ref, a bad path or a bound is always an error.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            Self::Fetch { .. } | Self::Timeout { .. } | Self::NotPulled { .. }
        )
    }
}

//! The network: one current-thread tokio runtime and one reqwest client (rustls on ring) for
//! HTTPS catalogs, exec downloads and OCI registries (`oci.rs`). Bounded time, bounded size of
//! every body, bounded retries with backoff, every redirect hop checked; every error says
//! which reference failed and what to do.

use std::time::Duration;

use crate::env::{CA_FILE, HTTP_RETRIES, HTTP_TIMEOUT, MAX_DOWNLOAD_BYTES};

use backon::{ExponentialBuilder, Retryable as _};

/// The KEP media type of a single catalog file in an OCI artifact.
pub const CATALOG_LAYER_MEDIA_TYPE: &str =
    "application/vnd.cncf.kubernetes.krm-func-catalog.layer.v1+yaml";
/// Layer media types that hold a tar+gzip bundle.
pub const BUNDLE_LAYER_MEDIA_TYPES: &[&str] = &[
    "application/vnd.oci.image.layer.v1.tar+gzip",
    "application/vnd.docker.image.rootfs.diff.tar.gzip",
    "application/gzip",
    "application/x-gzip",
    "application/vnd.cncf.kubernetes.krm-func-catalog.bundle.v1.tar+gzip",
];

/// A failed fetch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FetchError {
    /// What went wrong, naming the reference.
    pub message: String,
    /// Worth another attempt (connection trouble, 429, 5xx, truncated body).
    pub transient: bool,
    /// The network itself could not be reached (no route, no DNS): say how to prepare a cache.
    pub unreachable: bool,
}

impl FetchError {
    pub(super) fn fatal(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            transient: false,
            unreachable: false,
        }
    }
    pub(super) fn transient(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            transient: true,
            unreachable: false,
        }
    }
}

/// The largest download accepted.
pub fn max_download_bytes() -> usize {
    crate::env::max_download_bytes()
}

/// The largest OCI manifest accepted.
pub fn max_manifest_bytes() -> usize {
    crate::env::max_manifest_bytes()
}

/// Whether a host is loopback (plain HTTP is allowed only there).
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Redirects followed before giving up (as browsers and reqwest do).
const MAX_REDIRECTS: usize = 10;

/// A size bound for one body: how many bytes, and where the bound comes from.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// Bytes accepted.
    pub bytes: usize,
    /// Where the number comes from (what a message tells the user).
    pub source: LimitSource,
}

/// Where a [`Limit`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSource {
    /// An environment variable that raises it.
    Env(&'static str),
    /// A size the server declared for the body (an OCI descriptor's `size`).
    Declared,
    /// A fixed bound for bodies that are small by nature (token answers, error bodies).
    Fixed,
}

impl Limit {
    /// The download limit (`KRM_CATALOG_MAX_DOWNLOAD_BYTES`).
    pub fn download() -> Self {
        Self {
            bytes: max_download_bytes(),
            source: LimitSource::Env(MAX_DOWNLOAD_BYTES),
        }
    }

    /// A size the server declared (an OCI descriptor's `size`), within this limit.
    #[must_use]
    pub fn declared(self, size: u64) -> Self {
        match usize::try_from(size) {
            Ok(n) if n <= self.bytes => Self {
                bytes: n,
                source: LimitSource::Declared,
            },
            _ => self,
        }
    }

    /// "the limit of N bytes; raise VAR if this is expected", or the declared size.
    pub fn describe(&self) -> String {
        match self.source {
            LimitSource::Env(env) => format!(
                "the limit of {} bytes; raise {env} if this is expected",
                self.bytes
            ),
            LimitSource::Declared => format!("the {} bytes its descriptor declares", self.bytes),
            LimitSource::Fixed => format!("the limit of {} bytes", self.bytes),
        }
    }
}

/// Why a URL or a redirect hop is refused (the message names no URL: the caller does).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// `http://` to a host that is not loopback.
    #[error("plain HTTP is refused except for loopback hosts; use https://")]
    PlainHttp,
    /// Neither `https://` nor `http://`.
    #[error("unsupported scheme \"{0}\"; use https://")]
    Scheme(String),
    /// A hop of an unpinned catalog that the trust list does not cover.
    #[error(
        "not trusted; add it to spec.trustedCatalogs if you trust it, or pin the catalog with sha256"
    )]
    Untrusted,
    /// A manifest by tag redirected away from its registry.
    #[error(
        "a manifest by tag is read only from its registry {0} (another host could change what the tag names); pin the reference by digest (@sha256:...) to allow the redirect"
    )]
    OtherRegistry(String),
}

/// What each redirect hop must satisfy besides the HTTPS/loopback rule (e.g. trust); `Err`
/// says why a hop is refused.
pub type HopCheck<'a> = &'a dyn Fn(&reqwest::Url) -> Result<(), Refusal>;

/// Any hop that passes the HTTPS/loopback rule (content pinned by a digest, or viewed only).
pub fn any_hop(_: &reqwest::Url) -> Result<(), Refusal> {
    Ok(())
}

/// The transport rule for the first URL and every redirect hop: `https://`, or `http://` on
/// a loopback host.
pub fn check_transport(url: &reqwest::Url) -> Result<(), Refusal> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if url.host_str().is_some_and(is_loopback_host) => Ok(()),
        "http" => Err(Refusal::PlainHttp),
        other => Err(Refusal::Scheme(other.to_owned())),
    }
}

/// Why the network stack of a run could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// The tokio runtime did not start.
    #[error("cannot start the network runtime: {0}")]
    Runtime(String),
    /// `KRM_CATALOG_CA_FILE` could not be read.
    #[error("{CA_FILE}: {0}")]
    CaFile(String),
    /// `KRM_CATALOG_CA_FILE` is not a PEM bundle.
    #[error("{CA_FILE}: {path} is not a PEM bundle: {reason}")]
    CaPem {
        /// The file.
        path: String,
        /// What the parser said.
        reason: String,
    },
    /// reqwest refused the client configuration.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// The network stack of a run, built on first use.
pub struct Net {
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) http: reqwest::Client,
    timeout: Duration,
    retries: usize,
}

impl Net {
    /// Build the runtime and the client (installs rustls' ring provider once). Redirects are
    /// followed by hand ([`Net::send`]) so that every hop is checked.
    pub fn new() -> Result<Self, SetupError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| SetupError::Runtime(e.to_string()))?;
        let timeout = crate::env::http_timeout();
        let retries = crate::env::http_retries();
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("krm-catalog/", env!("CARGO_PKG_VERSION")));
        if let Some(path) = crate::env::ca_file() {
            let pem = fs_err::read(&path).map_err(|e| SetupError::CaFile(e.to_string()))?;
            let certs =
                reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| SetupError::CaPem {
                    path: path.to_string_lossy().into_owned(),
                    reason: e.to_string(),
                })?;
            builder = builder.tls_certs_merge(certs);
        }
        let http = builder
            .build()
            .map_err(|e| SetupError::Client(e.to_string()))?;
        Ok(Self {
            runtime,
            http,
            timeout,
            retries,
        })
    }

    /// Run one request to its end on the runtime, again with backoff while it fails
    /// transiently; a transient error that outlives every retry says so.
    pub(super) fn with_retries<T, Fut>(&self, op: impl FnMut() -> Fut) -> Result<T, FetchError>
    where
        Fut: Future<Output = Result<T, FetchError>>,
    {
        let backoff = ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(200))
            .with_max_delay(Duration::from_secs(2))
            .with_max_times(self.retries);
        self.runtime
            .block_on(op.retry(backoff).when(|e: &FetchError| e.transient))
            .map_err(|e| self.gave_up(e))
    }

    /// A transient error that outlived every retry: say so, and what to do.
    fn gave_up(&self, mut e: FetchError) -> FetchError {
        if e.transient && !e.unreachable {
            use std::fmt::Write as _;
            let _ = write!(
                e.message,
                " (gave up after {} attempts; try again later, or raise {HTTP_RETRIES})",
                self.retries + 1
            );
        }
        e
    }

    /// GET a URL (https, or http on loopback), bounded in time, size and attempts; every
    /// redirect hop must pass the transport rule and `hop`.
    pub fn get(&self, url: &str, hop: HopCheck<'_>) -> Result<Vec<u8>, FetchError> {
        let limit = Limit::download();
        self.with_retries(|| self.get_once(url, limit, hop))
    }

    async fn get_once(
        &self,
        url: &str,
        limit: Limit,
        hop: HopCheck<'_>,
    ) -> Result<Vec<u8>, FetchError> {
        let start = reqwest::Url::parse(url)
            .map_err(|e| FetchError::fatal(format!("{url} is not a URL: {e}")))?;
        check_transport(&start).map_err(|e| FetchError::fatal(format!("{url}: {e}")))?;
        let response = self
            .send(url, &start, &reqwest::header::HeaderMap::new(), None, hop)
            .await?;
        let status = response.status();
        if !status.is_success() {
            let message = format!("{url}: HTTP {status}");
            return Err(if status.as_u16() == 429 || status.is_server_error() {
                FetchError::transient(message)
            } else if status.as_u16() == 404 {
                FetchError::fatal(format!("{url}: not found (HTTP 404); check the URL"))
            } else {
                FetchError::fatal(message)
            });
        }
        read_body(response, url, limit).await.map(|(body, _)| body)
    }

    /// Send a GET and follow redirects by hand: every hop must pass the transport rule and
    /// `hop`, and `authorization` is only sent to the origin of `start` (never to the host a
    /// registry redirects blob downloads to). The refusal names the hop.
    pub(super) async fn send(
        &self,
        what: &str,
        start: &reqwest::Url,
        headers: &reqwest::header::HeaderMap,
        authorization: Option<&reqwest::header::HeaderValue>,
        hop: HopCheck<'_>,
    ) -> Result<reqwest::Response, FetchError> {
        let mut current = start.clone();
        for _ in 0..=MAX_REDIRECTS {
            let mut request = self.http.get(current.clone()).headers(headers.clone());
            if let Some(value) = authorization
                && current.origin() == start.origin()
            {
                request = request.header(reqwest::header::AUTHORIZATION, value.clone());
            }
            let response = request
                .send()
                .await
                .map_err(|e| self.request_error(what, &e))?;
            let status = response.status();
            if !status.is_redirection() {
                return Ok(response);
            }
            let Some(location) = response.headers().get(reqwest::header::LOCATION) else {
                return Ok(response);
            };
            let next = location
                .to_str()
                .ok()
                .and_then(|l| current.join(l).ok())
                .ok_or_else(|| {
                    FetchError::fatal(format!(
                        "{what}: HTTP {status} redirect with an unusable Location header"
                    ))
                })?;
            if let Err(reason) = check_transport(&next).and_then(|()| hop(&next)) {
                return Err(FetchError::fatal(format!(
                    "{what}: refused the redirect to {next}: {reason}"
                )));
            }
            current = next;
        }
        Err(FetchError::fatal(format!(
            "{what}: more than {MAX_REDIRECTS} redirects"
        )))
    }

    pub(super) fn request_error(&self, what: &str, e: &reqwest::Error) -> FetchError {
        if e.is_timeout() {
            return FetchError::transient(format!(
                "{what}: no answer within {}s ({HTTP_TIMEOUT})",
                self.timeout.as_secs()
            ));
        }
        if e.is_connect() {
            return FetchError {
                message: format!("{what}: cannot connect ({})", error_chain(e)),
                transient: true,
                unreachable: true,
            };
        }
        FetchError::transient(format!("{what}: {}", error_chain(e)))
    }
}

/// Read a response body of at most `limit` bytes, hashing while it streams: a declared
/// length above the limit fails before reading, an endless body fails at the limit. Returns
/// the body and its hex sha256.
pub(super) async fn read_body(
    mut response: reqwest::Response,
    what: &str,
    limit: Limit,
) -> Result<(Vec<u8>, String), FetchError> {
    use sha2::Digest as _;
    let too_big = |size: String| {
        FetchError::fatal(format!("{what}: {size} is more than {}", limit.describe()))
    };
    let expected = response.content_length();
    if let Some(n) = expected
        && n > limit.bytes as u64
    {
        return Err(too_big(format!("{n} bytes")));
    }
    let mut hasher = sha2::Sha256::new();
    let mut body = Vec::new();
    let mut progress = Progress::new(what, expected);
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len().saturating_add(chunk.len()) > limit.bytes {
                    return Err(too_big("the body".to_owned()));
                }
                hasher.update(&chunk);
                body.extend_from_slice(&chunk);
                progress.update(body.len());
            }
            Ok(None) => break,
            // reqwest's timeout covers the body too: a server that trickles it is slow, not
            // broken, and the variable that allows more time is what helps.
            Err(e) if e.is_timeout() => {
                return Err(FetchError::transient(format!(
                    "{what}: the body was still arriving when the time limit ran out ({} bytes so far); raise {HTTP_TIMEOUT} (seconds) for a slow server",
                    body.len()
                )));
            }
            Err(e) => {
                return Err(FetchError::transient(format!(
                    "{what}: the body was cut off after {} bytes ({})",
                    body.len(),
                    error_chain(&e)
                )));
            }
        }
    }
    progress.done(body.len());
    if let Some(n) = expected
        && body.len() as u64 != n
    {
        return Err(FetchError::transient(format!(
            "{what}: the body was cut off: {} of {n} bytes",
            body.len()
        )));
    }
    Ok((body, crate::verify::hex(&hasher.finalize())))
}

/// One layer of an artifact.
#[derive(Debug, Clone)]
pub struct Layer {
    /// Media type.
    pub media_type: String,
    /// `sha256:` digest.
    pub digest: String,
    /// Content (verified).
    pub data: Vec<u8>,
    /// `org.opencontainers.image.title`, if any.
    pub title: Option<String>,
}

/// A pulled OCI artifact.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// Raw manifest bytes.
    pub manifest: Vec<u8>,
    /// `sha256:` digest of the manifest.
    pub manifest_digest: String,
    /// Catalog layers.
    pub layers: Vec<Layer>,
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

/// Progress of a download that takes longer than a second, on stderr (issue 22): a user who
/// waits sees what is fetched, how much has come and for how long. Only when stderr is a
/// terminal or with `-v`: under kpt and kustomize stderr is the function's report.
pub(super) struct Progress<'a> {
    what: &'a str,
    expected: Option<u64>,
    start: std::time::Instant,
    /// When the last line was written; `None` while nothing has been.
    last: Option<std::time::Instant>,
    shown: bool,
}

impl<'a> Progress<'a> {
    const FIRST: std::time::Duration = std::time::Duration::from_secs(1);

    pub(super) fn new(what: &'a str, expected: Option<u64>) -> Self {
        use std::io::IsTerminal as _;
        Self {
            what,
            expected,
            start: std::time::Instant::now(),
            last: None,
            shown: crate::logger::enabled(crate::logger::Level::Info)
                || std::io::stderr().is_terminal(),
        }
    }

    pub(super) fn update(&mut self, bytes: usize) {
        if !self.shown {
            return;
        }
        let now = std::time::Instant::now();
        let due = match self.last {
            None => now.duration_since(self.start) >= Self::FIRST,
            Some(last) => now.duration_since(last) >= Self::FIRST,
        };
        if due {
            self.last = Some(now);
            let of = self
                .expected
                .map_or_else(String::new, |n| format!(" of {n}"));
            crate::logger::progress(format_args!(
                "fetching {}: {bytes}{of} bytes, {:.1} s",
                self.what,
                now.duration_since(self.start).as_secs_f64()
            ));
        }
    }

    /// The closing line, when a progress line was written.
    pub(super) fn done(&self, bytes: usize) {
        if self.last.is_some() {
            crate::logger::progress(format_args!(
                "fetched {}: {bytes} bytes in {:.1} s",
                self.what,
                self.start.elapsed().as_secs_f64()
            ));
        }
    }
}

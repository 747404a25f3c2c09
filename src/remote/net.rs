//! The network: one current-thread tokio runtime, one reqwest client (rustls on ring) for
//! HTTPS catalogs and the same TLS setup for the OCI client. Bounded time, bounded size,
//! bounded retries with backoff; every error says which reference failed and what to do.

use std::fmt;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable as _};
use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

use crate::verify::sha256_hex;

/// Extra CA certificates (PEM bundle) to trust, for private servers and registries.
pub const CA_FILE_ENV: &str = "KRM_CATALOG_CA_FILE";
/// Seconds one request may take (default 30).
pub const TIMEOUT_ENV: &str = "KRM_CATALOG_HTTP_TIMEOUT";
/// Attempts after the first one on transient failures (default 3).
pub const RETRIES_ENV: &str = "KRM_CATALOG_HTTP_RETRIES";
/// Largest download accepted (default 64 MiB).
pub const MAX_DOWNLOAD_ENV: &str = "KRM_CATALOG_MAX_DOWNLOAD_BYTES";

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchError {
    /// What went wrong, naming the reference.
    pub message: String,
    /// Worth another attempt (connection trouble, 429, 5xx, truncated body).
    pub transient: bool,
    /// The network itself could not be reached (no route, no DNS): say how to prepare a cache.
    pub unreachable: bool,
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl FetchError {
    fn fatal(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            transient: false,
            unreachable: false,
        }
    }
    fn transient(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            transient: true,
            unreachable: false,
        }
    }
}

fn env_number(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// The largest download accepted.
pub fn max_download_bytes() -> usize {
    usize::try_from(env_number(MAX_DOWNLOAD_ENV, 64 * 1024 * 1024)).unwrap_or(usize::MAX)
}

/// Whether a host is loopback (plain HTTP is allowed only there).
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The network stack of a run, built on first use.
pub struct Net {
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
    timeout: Duration,
    retries: usize,
    extra_roots: Vec<Vec<u8>>,
}

impl Net {
    /// Build the runtime and clients (installs rustls' ring provider once).
    pub fn new() -> Result<Self, String> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the network runtime: {e}"))?;
        let timeout = Duration::from_secs(env_number(TIMEOUT_ENV, 30).max(1));
        let retries = usize::try_from(env_number(RETRIES_ENV, 3)).unwrap_or(3);
        let mut extra_roots = Vec::new();
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("krm-catalog/", env!("CARGO_PKG_VERSION")));
        if let Some(path) = std::env::var_os(CA_FILE_ENV).filter(|p| !p.is_empty()) {
            let pem = fs_err::read(&path).map_err(|e| format!("{CA_FILE_ENV}: {e}"))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                format!(
                    "{CA_FILE_ENV}: {} is not a PEM bundle: {e}",
                    path.to_string_lossy()
                )
            })?;
            builder = builder.tls_certs_merge(certs);
            extra_roots.push(pem);
        }
        let http = builder
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Self {
            runtime,
            http,
            timeout,
            retries,
            extra_roots,
        })
    }

    fn backoff(&self) -> ExponentialBuilder {
        ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(200))
            .with_max_delay(Duration::from_secs(2))
            .with_max_times(self.retries)
    }

    /// A transient error that outlived every retry: say so, and what to do.
    fn gave_up(&self, mut e: FetchError) -> FetchError {
        if e.transient && !e.unreachable {
            use std::fmt::Write as _;
            let _ = write!(
                e.message,
                " (gave up after {} attempts; try again later, or raise {RETRIES_ENV})",
                self.retries + 1
            );
        }
        e
    }

    /// GET a URL (https, or http on loopback), bounded in time, size and attempts.
    pub fn get(&self, url: &str) -> Result<Vec<u8>, FetchError> {
        let limit = max_download_bytes();
        let op = || self.get_once(url, limit);
        self.runtime
            .block_on(op.retry(self.backoff()).when(|e: &FetchError| e.transient))
            .map_err(|e| self.gave_up(e))
    }

    async fn get_once(&self, url: &str, limit: usize) -> Result<Vec<u8>, FetchError> {
        let mut response = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| self.request_error(url, &e))?;
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
        let expected = response.content_length();
        if expected.is_some_and(|n| n > limit as u64) {
            return Err(FetchError::fatal(format!(
                "{url}: {} bytes is more than the limit of {limit} ({MAX_DOWNLOAD_ENV})",
                expected.unwrap_or(0)
            )));
        }
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    body.extend_from_slice(&chunk);
                    if body.len() > limit {
                        return Err(FetchError::fatal(format!(
                            "{url}: the download exceeds the limit of {limit} bytes ({MAX_DOWNLOAD_ENV})"
                        )));
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    return Err(FetchError::transient(format!(
                        "{url}: the body was cut off after {} bytes ({})",
                        body.len(),
                        error_chain(&e)
                    )));
                }
            }
        }
        if let Some(n) = expected
            && body.len() as u64 != n
        {
            return Err(FetchError::transient(format!(
                "{url}: the body was cut off: {} of {n} bytes",
                body.len()
            )));
        }
        Ok(body)
    }

    fn request_error(&self, what: &str, e: &reqwest::Error) -> FetchError {
        if e.is_timeout() {
            return FetchError::transient(format!(
                "{what}: no answer within {}s ({TIMEOUT_ENV})",
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

    fn oci_client(&self, registry: &str) -> Client {
        let protocol = if is_loopback_host(registry.rsplit_once(':').map_or(registry, |(h, _)| h)) {
            ClientProtocol::HttpsExcept(vec![registry.to_owned()])
        } else {
            ClientProtocol::Https
        };
        let config = ClientConfig {
            protocol,
            extra_root_certificates: self
                .extra_roots
                .iter()
                .map(|pem| Certificate {
                    encoding: CertificateEncoding::Pem,
                    data: pem.clone(),
                })
                .collect(),
            read_timeout: Some(self.timeout),
            connect_timeout: Some(self.timeout.min(Duration::from_secs(10))),
            ..ClientConfig::default()
        };
        Client::new(config)
    }

    /// The digest of what a tag (or digest) names in its registry: the manifest, or the index of
    /// a multi-arch image. The bytes are hashed here, not taken from a header.
    pub fn manifest_digest(&self, reference: &str) -> Result<String, FetchError> {
        let op = || self.manifest_digest_once(reference);
        self.runtime
            .block_on(op.retry(self.backoff()).when(|e: &FetchError| e.transient))
            .map_err(|e| self.gave_up(e))
    }

    async fn manifest_digest_once(&self, reference: &str) -> Result<String, FetchError> {
        let parsed: Reference = reference
            .parse()
            .map_err(|e| FetchError::fatal(format!("{reference}: not an image reference: {e}")))?;
        let registry = parsed.resolve_registry().to_owned();
        let client = self.oci_client(&registry);
        let auth = registry_auth(&registry);
        let accepted = [
            oci_client::manifest::OCI_IMAGE_MEDIA_TYPE,
            oci_client::manifest::IMAGE_MANIFEST_MEDIA_TYPE,
            oci_client::manifest::OCI_IMAGE_INDEX_MEDIA_TYPE,
            oci_client::manifest::IMAGE_MANIFEST_LIST_MEDIA_TYPE,
        ];
        let (bytes, _) = client
            .pull_manifest_raw(&parsed, &auth, &accepted)
            .await
            .map_err(|e| self.oci_error(reference, &registry, e))?;
        Ok(format!("sha256:{}", sha256_hex(&bytes)))
    }

    /// Pull an OCI catalog artifact: the raw manifest (verified against its digest and any
    /// digest in the reference) and every layer (verified against its descriptor).
    pub fn pull_artifact(&self, reference: &str) -> Result<Artifact, FetchError> {
        let op = || self.pull_once(reference);
        self.runtime
            .block_on(op.retry(self.backoff()).when(|e: &FetchError| e.transient))
            .map_err(|e| self.gave_up(e))
    }

    async fn pull_once(&self, reference: &str) -> Result<Artifact, FetchError> {
        let parsed: Reference = reference.parse().map_err(|e| {
            FetchError::fatal(format!("oci://{reference}: not an OCI reference: {e}"))
        })?;
        let registry = parsed.resolve_registry().to_owned();
        let client = self.oci_client(&registry);
        let auth = registry_auth(&registry);
        let accepted = [
            oci_client::manifest::OCI_IMAGE_MEDIA_TYPE,
            oci_client::manifest::IMAGE_MANIFEST_MEDIA_TYPE,
        ];
        let (bytes, digest) = client
            .pull_manifest_raw(&parsed, &auth, &accepted)
            .await
            .map_err(|e| self.oci_error(reference, &registry, e))?;
        let computed = format!("sha256:{}", sha256_hex(&bytes));
        if !digest.is_empty() && digest != computed {
            return Err(FetchError::fatal(format!(
                "oci://{reference}: the registry says the manifest is {digest}, its bytes hash to {computed}"
            )));
        }
        if let Some(pinned) = parsed.digest()
            && pinned != computed
        {
            return Err(FetchError::fatal(format!(
                "oci://{reference}: digest mismatch: expected {pinned}, the manifest is {computed}"
            )));
        }
        let manifest: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
            FetchError::fatal(format!("oci://{reference}: the manifest is not JSON: {e}"))
        })?;
        if manifest.get("manifests").is_some() {
            return Err(FetchError::fatal(format!(
                "oci://{reference}: is an image index, not a catalog artifact"
            )));
        }
        let limit = max_download_bytes();
        let mut layers = Vec::new();
        for layer in manifest
            .get("layers")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
        {
            let media_type = layer
                .get("mediaType")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("")
                .to_owned();
            let layer_digest = layer
                .get("digest")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("")
                .to_owned();
            if media_type != CATALOG_LAYER_MEDIA_TYPE
                && !BUNDLE_LAYER_MEDIA_TYPES.contains(&media_type.as_str())
            {
                continue;
            }
            let size = layer
                .get("size")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0);
            if size > limit as u64 {
                return Err(FetchError::fatal(format!(
                    "oci://{reference}: layer {layer_digest} is {size} bytes, more than {limit} ({MAX_DOWNLOAD_ENV})"
                )));
            }
            let mut data: Vec<u8> = Vec::new();
            client
                .pull_blob(&parsed, layer_digest.as_str(), &mut data)
                .await
                .map_err(|e| self.oci_error(reference, &registry, e))?;
            let got = format!("sha256:{}", sha256_hex(&data));
            if got != layer_digest {
                return Err(FetchError::fatal(format!(
                    "oci://{reference}: layer digest mismatch: expected {layer_digest}, got {got}"
                )));
            }
            let title = layer
                .get("annotations")
                .and_then(|a| a.get("org.opencontainers.image.title"))
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned);
            layers.push(Layer {
                media_type,
                digest: layer_digest,
                data,
                title,
            });
        }
        if layers.is_empty() {
            return Err(FetchError::fatal(format!(
                "oci://{reference}: no catalog layer (media type {CATALOG_LAYER_MEDIA_TYPE}, or a tar+gzip bundle)"
            )));
        }
        Ok(Artifact {
            manifest: bytes.to_vec(),
            manifest_digest: computed,
            layers,
        })
    }

    fn oci_error(
        &self,
        reference: &str,
        registry: &str,
        e: oci_client::errors::OciDistributionError,
    ) -> FetchError {
        use oci_client::errors::OciDistributionError as E;
        let what = format!("oci://{reference}");
        match e {
            E::RequestError(r) => self.request_error(&format!("{what} (registry {registry})"), &r),
            E::ServerError { code, .. } if code == 429 || code >= 500 => {
                FetchError::transient(format!("{what}: registry {registry} answered HTTP {code}"))
            }
            E::ImageManifestNotFoundError(_) => {
                FetchError::fatal(format!("{what}: not found in registry {registry}"))
            }
            E::RegistryError { envelope, .. }
                if envelope.errors.iter().any(|e| {
                    format!("{:?}", e.code).contains("NotFound")
                        || format!("{:?}", e.code).contains("Unknown")
                }) =>
            {
                FetchError::fatal(format!(
                    "{what}: not found in registry {registry} ({envelope})"
                ))
            }
            E::UnauthorizedError { .. } | E::AuthenticationFailure(_) => {
                FetchError::fatal(format!(
                    "{what}: registry {registry} refused access; log in with `docker login {registry}` (credentials come from $DOCKER_CONFIG/config.json)"
                ))
            }
            E::ServerError { code: 404, .. } => FetchError::fatal(format!(
                "{what}: not found in registry {registry} (HTTP 404); check the repository, tag and digest"
            )),
            other => FetchError::fatal(format!("{what}: {other}")),
        }
    }
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

/// Credentials from the Docker config (`$DOCKER_CONFIG/config.json`), else anonymous.
fn registry_auth(registry: &str) -> RegistryAuth {
    let server = if registry == "docker.io" || registry == "index.docker.io" {
        "https://index.docker.io/v1/"
    } else {
        registry
    };
    match docker_credential::get_credential(server) {
        Ok(docker_credential::DockerCredential::UsernamePassword(user, pass)) => {
            RegistryAuth::Basic(user, pass)
        }
        Ok(docker_credential::DockerCredential::IdentityToken(_)) => {
            crate::log!(
                crate::logger::Level::Warn,
                "identity tokens for {registry} are not supported; pulling anonymously"
            );
            RegistryAuth::Anonymous
        }
        Err(_) => RegistryAuth::Anonymous,
    }
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

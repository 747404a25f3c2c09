//! A minimal OCI distribution client on the shared reqwest client: manifests and blobs by
//! digest or tag, anonymous, basic or bearer-token auth (the Docker token flow). Written here
//! rather than using `oci-client`'s `Client` because that reads manifests and token answers
//! with unbounded `bytes()`/`text()` (oci-client 0.18 `src/client.rs`, `_pull_manifest_raw`,
//! `_auth`): an endless manifest took 4.2 GB. Here every body is bounded (manifests by
//! `KRM_CATALOG_MAX_MANIFEST_BYTES`, blobs by their declared size and the download limit),
//! hashed while it streams, and every redirect hop passes the transport rule. References are
//! parsed by `catalog_ref::OciRef`, the one parser for catalog artifacts and images.

use reqwest::header::{ACCEPT, HeaderMap, HeaderValue, WWW_AUTHENTICATE};

use crate::catalog_ref::OciRef;
use crate::env::MAX_MANIFEST_BYTES;

use super::net::{
    Artifact, BUNDLE_LAYER_MEDIA_TYPES, CATALOG_LAYER_MEDIA_TYPE, FetchError, Layer, Limit,
    LimitSource, Net, Refusal, any_hop, check_transport, is_loopback_host, max_manifest_bytes,
    read_body,
};

/// Token answers are small JSON documents; a bound keeps a hostile token service harmless.
const MAX_TOKEN_BYTES: usize = 1024 * 1024;
/// Error bodies are only read for their error codes.
const MAX_ERROR_BYTES: usize = 64 * 1024;

pub(super) const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub(super) const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub(super) const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub(super) const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";

impl Net {
    /// The digest of what a tag (or digest) names in its registry: the manifest, or the index of
    /// a multi-arch image. The bytes are hashed here, not taken from a header.
    pub fn manifest_digest(&self, reference: &str) -> Result<String, FetchError> {
        self.with_retries(|| self.manifest_digest_once(reference))
    }

    async fn manifest_digest_once(&self, reference: &str) -> Result<String, FetchError> {
        let parsed = OciRef::parse(reference).map_err(|e| {
            FetchError::fatal(format!("{reference}: not an image reference: {}", e.kind))
        })?;
        let mut session = Session::new(self, reference.to_owned(), &parsed);
        let (_, hex, _) = session
            .get(
                &manifest_path(&parsed),
                "manifest",
                &[OCI_MANIFEST, DOCKER_MANIFEST, OCI_INDEX, DOCKER_LIST],
                manifest_limit(),
            )
            .await?;
        Ok(format!("sha256:{hex}"))
    }

    /// Pull an OCI catalog artifact: the raw manifest (verified against any digest in the
    /// reference) and every catalog layer (verified against its descriptor's digest and size).
    pub fn pull_artifact(&self, reference: &str) -> Result<Artifact, FetchError> {
        self.with_retries(|| self.pull_once(reference))
    }

    /// Pull the cosign signature manifest of `digest` (`sha256:<hex>`) in the repository `name`
    /// (`registry/repository`): the tag `sha256-<hex>.sig`, with its simple-signing layers.
    /// `None` when the registry has no such tag.
    pub fn pull_signature(&self, name: &str, digest: &str) -> Result<Option<Artifact>, FetchError> {
        self.with_retries(|| self.pull_signature_once(name, digest))
    }

    async fn pull_signature_once(
        &self,
        name: &str,
        digest: &str,
    ) -> Result<Option<Artifact>, FetchError> {
        let tag = super::cosign::signature_tag(digest);
        let reference = format!("{name}:{tag}");
        let what = format!("oci://{reference}");
        let parsed = OciRef::parse(&reference)
            .map_err(|e| FetchError::fatal(format!("{what}: not an OCI reference: {}", e.kind)))?;
        let mut session = Session::new(self, what.clone(), &parsed);
        let Some((bytes, hex, _)) = session
            .get_or_missing(
                &manifest_path(&parsed),
                "signature manifest",
                &[OCI_MANIFEST, DOCKER_MANIFEST],
                manifest_limit(),
                true,
            )
            .await?
        else {
            return Ok(None);
        };
        let manifest: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| FetchError::fatal(format!("{what}: the manifest is not JSON: {e}")))?;
        let count = super::cosign::signature_layers(&manifest).count();
        if count > super::cosign::MAX_SIGNATURE_LAYERS {
            return Err(FetchError::fatal(format!(
                "{what}: {count} signature layers, more than the {} checked",
                super::cosign::MAX_SIGNATURE_LAYERS
            )));
        }
        let layers = fetch_layers(&mut session, &what, &manifest, "signature", |media_type| {
            media_type == super::cosign::SIMPLE_SIGNING_MEDIA_TYPE
        })
        .await?;
        Ok(Some(Artifact {
            manifest: bytes,
            manifest_digest: format!("sha256:{hex}"),
            layers,
        }))
    }

    async fn pull_once(&self, reference: &str) -> Result<Artifact, FetchError> {
        let what = format!("oci://{reference}");
        let parsed = OciRef::parse(reference)
            .map_err(|e| FetchError::fatal(format!("{what}: not an OCI reference: {}", e.kind)))?;
        let mut session = Session::new(self, what.clone(), &parsed);
        let (bytes, hex, headers) = session
            .get(
                &manifest_path(&parsed),
                "manifest",
                &[OCI_MANIFEST, DOCKER_MANIFEST],
                manifest_limit(),
            )
            .await?;
        let computed = format!("sha256:{hex}");
        if let Some(said) = headers
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            && said.starts_with("sha256:")
            && said != computed
        {
            return Err(FetchError::fatal(format!(
                "{what}: the registry says the manifest is {said}, its bytes hash to {computed}"
            )));
        }
        if let Some(pinned) = parsed.digest()
            && pinned.hex() != hex
        {
            return Err(FetchError::fatal(format!(
                "{what}: digest mismatch: expected {pinned}, the manifest is {computed}"
            )));
        }
        let manifest: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| FetchError::fatal(format!("{what}: the manifest is not JSON: {e}")))?;
        if manifest.get("manifests").is_some() {
            return Err(FetchError::fatal(format!(
                "{what}: is an image index, not a catalog artifact"
            )));
        }
        let layers = fetch_layers(&mut session, &what, &manifest, "catalog", |media_type| {
            media_type == CATALOG_LAYER_MEDIA_TYPE || BUNDLE_LAYER_MEDIA_TYPES.contains(&media_type)
        })
        .await?;
        if layers.is_empty() {
            return Err(FetchError::fatal(format!(
                "{what}: no catalog layer (media type {CATALOG_LAYER_MEDIA_TYPE}, or a tar+gzip bundle)"
            )));
        }
        Ok(Artifact {
            manifest: bytes,
            manifest_digest: computed,
            layers,
        })
    }
}

/// Fetch the layers of `manifest` whose media type is `wanted` (`kind` names them), each checked against its
/// descriptor (digest and size); together no larger than the download limit.
pub(super) async fn fetch_layers(
    session: &mut Session<'_>,
    what: &str,
    manifest: &serde_json::Value,
    kind: &str,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<Layer>, FetchError> {
    let limit = Limit::download();
    let mut total: u64 = 0;
    let mut layers = Vec::new();
    for layer in manifest
        .get("layers")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
    {
        let text = |key: &str| {
            layer
                .get(key)
                .and_then(serde_json::Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let media_type = text("mediaType");
        if !wanted(&media_type) {
            continue;
        }
        let layer_digest = text("digest");
        // The digest becomes part of a URL path: only a well-formed sha256 gets there.
        if !layer_digest
            .strip_prefix("sha256:")
            .is_some_and(crate::catalog_ref::is_sha256_hex)
        {
            return Err(FetchError::fatal(format!(
                "{what}: layer digest \"{layer_digest}\" is not sha256:<64 lowercase hex characters>"
            )));
        }
        let Some(size) = layer.get("size").and_then(serde_json::Value::as_u64) else {
            return Err(FetchError::fatal(format!(
                "{what}: layer {layer_digest} has no size; OCI descriptors must declare one"
            )));
        };
        total = total.saturating_add(size);
        if total > limit.bytes as u64 {
            return Err(FetchError::fatal(format!(
                "{what}: the {kind} layers declare {total} bytes, more than {}",
                limit.describe()
            )));
        }
        // A blob may be no longer than its descriptor says (the limit above bounds that).
        let blob_limit = limit.declared(size);
        let (data, got, _) = session
            .get(
                &format!("blobs/{layer_digest}"),
                &format!("layer {layer_digest}"),
                &[],
                blob_limit,
            )
            .await?;
        if data.len() as u64 != size {
            return Err(FetchError::fatal(format!(
                "{what}: layer {layer_digest} is {} bytes, its descriptor says {size}",
                data.len()
            )));
        }
        if format!("sha256:{got}") != layer_digest {
            return Err(FetchError::fatal(format!(
                "{what}: layer digest mismatch: expected {layer_digest}, got sha256:{got}"
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
    Ok(layers)
}

pub(super) fn manifest_limit() -> Limit {
    Limit {
        bytes: max_manifest_bytes(),
        source: LimitSource::Env(MAX_MANIFEST_BYTES),
    }
}

pub(super) fn manifest_path(parsed: &OciRef) -> String {
    match (parsed.digest(), parsed.tag()) {
        (Some(digest), _) => format!("manifests/{digest}"),
        (None, tag) => format!("manifests/{}", tag.unwrap_or("latest")),
    }
}

/// Requests to one repository of one registry, with the authorization it earned.
pub(super) struct Session<'a> {
    net: &'a Net,
    /// How messages name the reference.
    what: String,
    registry: String,
    /// `scheme://registry/v2/repository/`.
    base: String,
    repository: String,
    credentials: Option<(String, String)>,
    authorization: Option<HeaderValue>,
    challenged: bool,
}

impl<'a> Session<'a> {
    pub(super) fn new(net: &'a Net, what: String, parsed: &OciRef) -> Self {
        let registry = parsed.resolve_registry().to_owned();
        let host = registry
            .rsplit_once(':')
            .map_or(registry.as_str(), |(h, p)| {
                if p.bytes().all(|b| b.is_ascii_digit()) {
                    h
                } else {
                    registry.as_str()
                }
            });
        // Plain HTTP only for a registry on loopback (test and local registries).
        let scheme = if is_loopback_host(host) {
            "http"
        } else {
            "https"
        };
        let repository = parsed.repository().to_owned();
        Self {
            net,
            base: format!("{scheme}://{registry}/v2/{repository}/"),
            credentials: registry_credentials(&registry),
            what,
            registry,
            repository,
            authorization: None,
            challenged: false,
        }
    }

    /// GET `path` under the repository, authenticating once when challenged; returns the
    /// body, its hex sha256 and the response headers. `part` names the body in messages.
    pub(super) async fn get(
        &mut self,
        path: &str,
        part: &str,
        accept: &[&str],
        limit: Limit,
    ) -> Result<(Vec<u8>, String, HeaderMap), FetchError> {
        self.get_or_missing(path, part, accept, limit, false)
            .await?
            .ok_or_else(|| FetchError::fatal(format!("{}: {part} not found", self.what)))
    }

    /// [`Session::get`], answering `None` for HTTP 404 when `missing_ok` (a cosign signature
    /// tag that does not exist is an answer, not a failure).
    async fn get_or_missing(
        &mut self,
        path: &str,
        part: &str,
        accept: &[&str],
        limit: Limit,
        missing_ok: bool,
    ) -> Result<Option<(Vec<u8>, String, HeaderMap)>, FetchError> {
        let url = reqwest::Url::parse(&format!("{}{path}", self.base)).map_err(|e| {
            FetchError::fatal(format!("{}: cannot build a registry URL: {e}", self.what))
        })?;
        let mut headers = HeaderMap::new();
        if !accept.is_empty()
            && let Ok(value) = HeaderValue::from_str(&accept.join(", "))
        {
            headers.insert(ACCEPT, value);
        }
        // A manifest by tag is what the trust decision is about: a redirect to another host
        // would let that host say what the tag names (issue 9, F5). Blobs and manifests by
        // digest are proven by their bytes, so they may come from wherever the registry sends
        // them (registries hand blob downloads to CDNs).
        let pinned = path.starts_with("blobs/") || path.starts_with("manifests/sha256:");
        let origin = url.origin();
        let registry = self.registry.clone();
        let same_registry = move |hop: &reqwest::Url| {
            if pinned || hop.origin() == origin {
                Ok(())
            } else {
                Err(Refusal::OtherRegistry(registry.clone()))
            }
        };
        loop {
            let response = self
                .net
                .send(
                    &self.what,
                    &url,
                    &headers,
                    self.authorization.as_ref(),
                    &same_registry,
                )
                .await?;
            let status = response.status();
            if status.as_u16() == 401 && !self.challenged {
                self.challenged = true;
                let challenge = response
                    .headers()
                    .get(WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                self.authenticate(challenge.as_deref()).await?;
                continue;
            }
            if missing_ok && status.as_u16() == 404 {
                return Ok(None);
            }
            if !status.is_success() {
                return Err(self.status_error(response).await);
            }
            let headers = response.headers().clone();
            let (body, hex) = read_body(response, &format!("{}: {part}", self.what), limit).await?;
            return Ok(Some((body, hex, headers)));
        }
    }

    fn refused(&self) -> FetchError {
        FetchError::fatal(format!(
            "{}: registry {} refused access; log in with `docker login {}` (credentials come from $DOCKER_CONFIG/config.json)",
            self.what, self.registry, self.registry
        ))
    }

    /// Answer a `WWW-Authenticate` challenge: basic credentials, or a bearer token from the
    /// realm the registry names (the Docker token flow, pull scope only).
    async fn authenticate(&mut self, challenge: Option<&str>) -> Result<(), FetchError> {
        use base64::Engine as _;
        let Some((scheme, params)) = challenge.and_then(parse_challenge) else {
            return Err(self.refused());
        };
        let basic = self.credentials.as_ref().and_then(|(user, pass)| {
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
            HeaderValue::from_str(&format!("Basic {encoded}")).ok()
        });
        if scheme.eq_ignore_ascii_case("basic") {
            self.authorization = Some(basic.ok_or_else(|| self.refused())?);
            return Ok(());
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(self.refused());
        }
        let realm = params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("realm"))
            .map(|(_, v)| v.clone())
            .ok_or_else(|| self.refused())?;
        let mut url = reqwest::Url::parse(&realm).map_err(|e| {
            FetchError::fatal(format!(
                "{}: the registry's token service \"{realm}\" is not a URL: {e}",
                self.what
            ))
        })?;
        check_transport(&url).map_err(|e| {
            FetchError::fatal(format!(
                "{}: the registry's token service {realm} is refused: {e}",
                self.what
            ))
        })?;
        {
            let mut query = url.query_pairs_mut();
            if let Some((_, service)) = params
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("service"))
            {
                query.append_pair("service", service);
            }
            query.append_pair("scope", &format!("repository:{}:pull", self.repository));
        }
        let response = self
            .net
            .send(
                &self.what,
                &url,
                &HeaderMap::new(),
                basic.as_ref(),
                &any_hop,
            )
            .await?;
        let status = response.status();
        if status.as_u16() == 429 || status.is_server_error() {
            return Err(FetchError::transient(format!(
                "{}: the registry's token service {realm} answered HTTP {status}",
                self.what
            )));
        }
        if !status.is_success() {
            return Err(self.refused());
        }
        let limit = Limit {
            bytes: MAX_TOKEN_BYTES,
            source: LimitSource::Fixed,
        };
        let (body, _) = read_body(
            response,
            &format!("{}: the registry's token service {realm}", self.what),
            limit,
        )
        .await?;
        let value: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
            FetchError::fatal(format!(
                "{}: the registry's token service {realm} did not answer JSON: {e}",
                self.what
            ))
        })?;
        let token = ["token", "access_token"]
            .iter()
            .find_map(|k| value.get(*k).and_then(serde_json::Value::as_str))
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                FetchError::fatal(format!(
                    "{}: the registry's token service {realm} answered without a token",
                    self.what
                ))
            })?;
        self.authorization = Some(
            HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                FetchError::fatal(format!(
                    "{}: the registry's token service {realm} answered a token that is not a header value",
                    self.what
                ))
            })?,
        );
        Ok(())
    }

    async fn status_error(&self, response: reqwest::Response) -> FetchError {
        let status = response.status();
        let code = status.as_u16();
        // The error envelope's codes (`MANIFEST_UNKNOWN`) say more than the status.
        let limit = Limit {
            bytes: MAX_ERROR_BYTES,
            source: LimitSource::Fixed,
        };
        let codes: Vec<String> = read_body(response, &self.what, limit)
            .await
            .ok()
            .and_then(|(body, _)| serde_json::from_slice::<serde_json::Value>(&body).ok())
            .and_then(|v| {
                v.get("errors")
                    .and_then(serde_json::Value::as_array)
                    .cloned()
            })
            .into_iter()
            .flatten()
            .filter_map(|e| {
                e.get("code")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned)
            })
            .take(4)
            .collect();
        let detail = if codes.is_empty() {
            String::new()
        } else {
            format!(", {}", codes.join(", "))
        };
        let (what, registry) = (&self.what, &self.registry);
        match code {
            404 => FetchError::fatal(format!(
                "{what}: not found in registry {registry} (HTTP 404{detail}); check the repository, tag and digest"
            )),
            401 | 403 => self.refused(),
            429 | 500..=599 => FetchError::transient(format!(
                "{what}: registry {registry} answered HTTP {code}{detail}"
            )),
            _ => FetchError::fatal(format!(
                "{what}: registry {registry} answered HTTP {code}{detail}"
            )),
        }
    }
}

/// `Bearer realm="…",service="…"` → (`Bearer`, [(realm, …), (service, …)]).
fn parse_challenge(text: &str) -> Option<(String, Vec<(String, String)>)> {
    let text = text.trim();
    let (scheme, rest) = text.split_once(' ').unwrap_or((text, ""));
    let mut params = Vec::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=') {
            key.push(c);
        }
        if key.is_empty() || chars.next().is_none() {
            break;
        }
        let mut value = String::new();
        if chars.next_if_eq(&'"').is_some() {
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => value.extend(chars.next()),
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                value.push(c);
            }
        }
        params.push((key.trim().to_owned(), value.trim().to_owned()));
    }
    (!scheme.is_empty()).then(|| (scheme.to_owned(), params))
}

/// Credentials from the Docker config (`$DOCKER_CONFIG/config.json`), else anonymous.
fn registry_credentials(registry: &str) -> Option<(String, String)> {
    let server = if registry == "docker.io" || registry == "index.docker.io" {
        "https://index.docker.io/v1/"
    } else {
        registry
    };
    match docker_credential::get_credential(server) {
        Ok(docker_credential::DockerCredential::UsernamePassword(user, pass)) => Some((user, pass)),
        Ok(docker_credential::DockerCredential::IdentityToken(_)) => {
            crate::log!(
                crate::logger::Level::Warn,
                "identity tokens for {registry} are not supported; pulling anonymously"
            );
            None
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed() {
        let (scheme, params) = parse_challenge(
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull""#,
        )
        .unwrap();
        assert_eq!(scheme, "Bearer");
        assert_eq!(
            params,
            [
                (
                    "realm".to_owned(),
                    "https://auth.docker.io/token".to_owned()
                ),
                ("service".to_owned(), "registry.docker.io".to_owned()),
                (
                    "scope".to_owned(),
                    "repository:library/nginx:pull".to_owned()
                ),
            ]
        );
        let (scheme, params) = parse_challenge("Basic realm=registry").unwrap();
        assert_eq!(scheme, "Basic");
        assert_eq!(params, [("realm".to_owned(), "registry".to_owned())]);
        assert_eq!(parse_challenge(""), None);
    }
}

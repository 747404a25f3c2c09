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

const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";

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

/// What an OCI artifact that carries a runtime must hold for this run: the platform whose
/// manifest an image index answers with, and the file a layer's title may name.
#[derive(Debug, Clone, Copy)]
pub struct RuntimeWant<'a> {
    /// The KEP's OS name (`linux`, `darwin`), the index's `platform.os`.
    pub os: &'a str,
    /// The KEP's architecture (`amd64`, `arm64`), the index's `platform.architecture`.
    pub arch: &'a str,
    /// The runtime's `bin`: the layer titled so (`org.opencontainers.image.title`, which
    /// `oras push` writes), when the artifact has several.
    pub bin: Option<&'a str>,
}

const TITLE: &str = "org.opencontainers.image.title";

impl Net {
    /// Pull the layer of an OCI artifact that holds an exec binary or a Starlark script (issue
    /// 23): the manifest (verified against any digest in the reference), or the manifest for
    /// `want`'s platform from an image index (verified against the index's descriptor), then
    /// the one layer titled `want.bin` or the only layer, verified against its descriptor's
    /// digest and size and bounded by the download limit. Any layer media type is accepted
    /// (`oras push` writes `application/vnd.oci.image.layer.v1.tar` for a plain file, `+gzip`
    /// for a directory, or whatever `file:type` says); the caller checks the runtime's sha256.
    pub fn pull_runtime(
        &self,
        reference: &str,
        want: RuntimeWant<'_>,
    ) -> Result<Layer, FetchError> {
        self.with_retries(|| self.pull_runtime_once(reference, want))
    }

    async fn pull_runtime_once(
        &self,
        reference: &str,
        want: RuntimeWant<'_>,
    ) -> Result<Layer, FetchError> {
        let what = format!("oci://{reference}");
        let parsed = OciRef::parse(reference)
            .map_err(|e| FetchError::fatal(format!("{what}: not an OCI reference: {}", e.kind)))?;
        let mut session = Session::new(self, what.clone(), &parsed);
        let (bytes, hex, _) = session
            .get(
                &manifest_path(&parsed),
                "manifest",
                &[OCI_MANIFEST, DOCKER_MANIFEST, OCI_INDEX, DOCKER_LIST],
                manifest_limit(),
            )
            .await?;
        if let Some(pinned) = parsed.digest()
            && pinned.hex() != hex
        {
            return Err(FetchError::fatal(format!(
                "{what}: digest mismatch: expected {pinned}, the manifest is sha256:{hex}"
            )));
        }
        let json = |bytes: &[u8], part: &str| {
            serde_json::from_slice::<serde_json::Value>(bytes)
                .map_err(|e| FetchError::fatal(format!("{what}: the {part} is not JSON: {e}")))
        };
        let mut manifest = json(&bytes, "manifest")?;
        if let Some(list) = manifest
            .get("manifests")
            .and_then(serde_json::Value::as_array)
        {
            let digest = platform_manifest(&what, list, want)?;
            let (bytes, got, _) = session
                .get(
                    &format!("manifests/{digest}"),
                    &format!("manifest {digest}"),
                    &[OCI_MANIFEST, DOCKER_MANIFEST],
                    manifest_limit(),
                )
                .await?;
            if format!("sha256:{got}") != digest {
                return Err(FetchError::fatal(format!(
                    "{what}: digest mismatch: the index names {digest}, the manifest is sha256:{got}"
                )));
            }
            manifest = json(&bytes, "platform manifest")?;
            if manifest.get("manifests").is_some() {
                return Err(FetchError::fatal(format!(
                    "{what}: the index for {}/{} names another index; push the binary as a manifest with one layer",
                    want.os, want.arch
                )));
            }
        }
        let layer = runtime_layer(&what, &manifest, want.bin)?;
        let one = serde_json::json!({ "layers": [layer] });
        let mut layers = fetch_layers(&mut session, &what, &one, "runtime", |_| true).await?;
        layers
            .pop()
            .ok_or_else(|| FetchError::fatal(format!("{what}: no runtime layer")))
    }
}

/// The digest of the manifest an image index lists for `want`'s platform.
fn platform_manifest(
    what: &str,
    list: &[serde_json::Value],
    want: RuntimeWant<'_>,
) -> Result<String, FetchError> {
    let field = |m: &serde_json::Value, key: &str| {
        m.get("platform")
            .and_then(|p| p.get(key))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let Some(chosen) = list
        .iter()
        .find(|m| field(m, "os") == want.os && field(m, "architecture") == want.arch)
    else {
        let have: Vec<String> = list
            .iter()
            .take(16)
            .map(|m| format!("{}/{}", field(m, "os"), field(m, "architecture")))
            .collect();
        return Err(FetchError::fatal(format!(
            "{what}: the image index has no manifest for {}/{} (it has: {}); push one for this platform (`oras push --artifact-platform {}/{}`)",
            want.os,
            want.arch,
            if have.is_empty() {
                "none".to_owned()
            } else {
                have.join(", ")
            },
            want.os,
            want.arch
        )));
    };
    let digest = chosen
        .get("digest")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    // The digest becomes part of a URL path: only a well-formed sha256 gets there.
    if !digest
        .strip_prefix("sha256:")
        .is_some_and(crate::catalog_ref::is_sha256_hex)
    {
        return Err(FetchError::fatal(format!(
            "{what}: the index's manifest digest \"{digest}\" is not sha256:<64 lowercase hex characters>"
        )));
    }
    Ok(digest.to_owned())
}

/// The layer of a runtime artifact: the one titled `bin` (or ending in `/bin`), else the only
/// one.
fn runtime_layer(
    what: &str,
    manifest: &serde_json::Value,
    bin: Option<&str>,
) -> Result<serde_json::Value, FetchError> {
    let layers = manifest
        .get("layers")
        .and_then(serde_json::Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let title = |l: &serde_json::Value| {
        l.get("annotations")
            .and_then(|a| a.get(TITLE))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let titled: Vec<&serde_json::Value> = match bin {
        Some(bin) => layers
            .iter()
            .filter(|l| title(l).is_some_and(|t| t == bin || t.rsplit('/').next() == Some(bin)))
            .collect(),
        None => Vec::new(),
    };
    let chosen: &serde_json::Value = match (titled.as_slice(), layers) {
        ([one], _) => one,
        ([], [one]) => one,
        ([], []) => {
            return Err(FetchError::fatal(format!(
                "{what}: the manifest has no layers; push the binary with `oras push REFERENCE FILE`"
            )));
        }
        _ => {
            let names: Vec<String> = layers
                .iter()
                .take(16)
                .map(|l| title(l).unwrap_or_else(|| "(untitled)".to_owned()))
                .collect();
            return Err(FetchError::fatal(format!(
                "{what}: {} layers ({}) and {}; name the file with bin, as the layer's {TITLE} annotation has it",
                layers.len(),
                names.join(", "),
                match bin {
                    Some(bin) => format!("not exactly one titled \"{bin}\""),
                    None => "no file name to choose one by".to_owned(),
                }
            )));
        }
    };
    let media_type = chosen
        .get("mediaType")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    if media_type.ends_with("+zstd") {
        return Err(FetchError::fatal(format!(
            "{what}: the layer is {media_type}; zstd layers are not read: push the file itself, a .tar.gz or a .zip"
        )));
    }
    Ok(chosen.clone())
}

/// Fetch the layers of `manifest` whose media type is `wanted` (`kind` names them), each checked against its
/// descriptor (digest and size); together no larger than the download limit.
async fn fetch_layers(
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

fn manifest_limit() -> Limit {
    Limit {
        bytes: max_manifest_bytes(),
        source: LimitSource::Env(MAX_MANIFEST_BYTES),
    }
}

fn manifest_path(parsed: &OciRef) -> String {
    match (parsed.digest(), parsed.tag()) {
        (Some(digest), _) => format!("manifests/{digest}"),
        (None, tag) => format!("manifests/{}", tag.unwrap_or("latest")),
    }
}

/// Requests to one repository of one registry, with the authorization it earned.
struct Session<'a> {
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
    fn new(net: &'a Net, what: String, parsed: &OciRef) -> Self {
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
    async fn get(
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

    /// Issue 23: the layer of a runtime artifact is the one titled `bin` (or `…/bin`), else
    /// the only one; several and none titled so, no layers, or a zstd layer are errors that
    /// say what to do. An index answers with the manifest of the wanted platform.
    #[test]
    fn issue23_runtime_layers_and_platform_manifests_are_chosen_by_title_and_platform() {
        let layer = |title: &str, media: &str| {
            serde_json::json!({"mediaType": media, "digest": format!("sha256:{}", "a".repeat(64)), "size": 1,
                "annotations": {TITLE: title}})
        };
        let plain = "application/vnd.oci.image.layer.v1.tar";
        let two = serde_json::json!({"layers": [layer("README.md", "text/markdown"), layer("dist/fn", plain)]});
        assert_eq!(
            runtime_layer("r", &two, Some("fn")).unwrap(),
            two["layers"][1]
        );
        let err = runtime_layer("r", &two, Some("other")).unwrap_err().message;
        assert_eq!(
            err,
            "r: 2 layers (README.md, dist/fn) and not exactly one titled \"other\"; name the file with bin, as the layer's org.opencontainers.image.title annotation has it"
        );
        assert!(
            runtime_layer("r", &two, None)
                .unwrap_err()
                .message
                .contains("no file name to choose one by")
        );
        let one = serde_json::json!({"layers": [layer("set_labels", "application/octet-stream")]});
        assert_eq!(
            runtime_layer("r", &one, Some("fn")).unwrap(),
            one["layers"][0]
        );
        assert_eq!(runtime_layer("r", &one, None).unwrap(), one["layers"][0]);
        assert!(
            runtime_layer("r", &serde_json::json!({"layers": []}), Some("fn"))
                .unwrap_err()
                .message
                .contains("has no layers")
        );
        let zstd = serde_json::json!({"layers": [layer("fn", "application/vnd.oci.image.layer.v1.tar+zstd")]});
        assert!(
            runtime_layer("r", &zstd, Some("fn"))
                .unwrap_err()
                .message
                .contains("zstd layers are not read")
        );

        let entry = |os: &str, arch: &str, digest: &str| serde_json::json!({"mediaType": OCI_MANIFEST, "digest": digest, "size": 1, "platform": {"os": os, "architecture": arch}});
        let (a, b) = (
            format!("sha256:{}", "a".repeat(64)),
            format!("sha256:{}", "b".repeat(64)),
        );
        let list = vec![entry("linux", "amd64", &a), entry("linux", "arm64", &b)];
        let want = |os, arch| RuntimeWant {
            os,
            arch,
            bin: None,
        };
        assert_eq!(
            platform_manifest("r", &list, want("linux", "arm64")).unwrap(),
            b
        );
        assert_eq!(
            platform_manifest("r", &list, want("darwin", "arm64"))
                .unwrap_err()
                .message,
            "r: the image index has no manifest for darwin/arm64 (it has: linux/amd64, linux/arm64); push one for this platform (`oras push --artifact-platform darwin/arm64`)"
        );
        let bad = vec![entry("linux", "amd64", "sha256:../../x")];
        assert!(
            platform_manifest("r", &bad, want("linux", "amd64"))
                .unwrap_err()
                .message
                .contains("is not sha256:")
        );
    }

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

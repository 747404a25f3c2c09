//! Remote catalogs (SPEC §4.2, §4.3 trust, §7.2 cache): HTTPS files and `.tar.gz` bundles,
//! OCI artifacts by tag or digest. Fail closed on anything that cannot be proven: an
//! untrusted source, a pin that does not match, a download that was cut off.

pub mod archive;
pub mod cache;
pub mod net;

use std::cell::OnceCell;

use crate::catalog::{Bundle, CatalogError, Origin};
use crate::config::CatalogSource;
use crate::verify::sha256_hex;
use cache::{Cache, RefEntry};
use net::{Net, is_loopback_host};

/// Whether a remote reference matches a `trustedCatalogs` entry: exactly, by its repository
/// (an OCI reference without tag or digest), or by a prefix ending in `*`.
pub fn is_trusted(reference: &str, trusted: &[String]) -> bool {
    // URLs are compared as they will be fetched: `a/trusted/../b` is `b`.
    let normalized = normalize_url(reference);
    let reference = normalized.as_deref().unwrap_or(reference);
    let bare = reference.strip_prefix("oci://").unwrap_or(reference);
    let repository = bare.split('@').next().map(|r| match r.rfind(':') {
        Some(i) if !r[i..].contains('/') => &r[..i],
        _ => r,
    });
    trusted.iter().any(|entry| {
        let entry = entry.trim();
        let normalized = match entry.strip_suffix('*') {
            Some(prefix) => normalize_url(prefix).map(|p| format!("{p}*")),
            None => normalize_url(entry),
        };
        let entry = normalized.as_deref().unwrap_or(entry);
        let e = entry.strip_prefix("oci://").unwrap_or(entry);
        match e.strip_suffix('*') {
            Some(prefix) => bare.starts_with(prefix),
            None => e == bare || Some(e) == repository,
        }
    })
}

/// An `http(s)://` URL in the form it is requested (dot segments resolved, host lowercased);
/// `None` for anything else.
fn normalize_url(text: &str) -> Option<String> {
    if !(text.starts_with("https://") || text.starts_with("http://")) {
        return None;
    }
    reqwest::Url::parse(text).ok().map(String::from)
}

/// The name a source is known by: the URL, or `oci://ref`.
pub fn reference_of(source: &CatalogSource) -> Option<String> {
    match source {
        CatalogSource::Url { url, .. } => Some(url.clone()),
        CatalogSource::Oci(r) => Some(format!("oci://{r}")),
        CatalogSource::Path(_) => None,
    }
}

/// Loads remote catalogs through the cache; the network is set up on first need.
pub struct Remote {
    cache: Cache,
    offline: bool,
    net: OnceCell<Result<Net, String>>,
}

fn prepare_hint(reference: &str) -> String {
    format!(
        "kpt and kustomize run container functions without network: run `krm-catalog catalog pull {reference}` where the \
         network is available and mount that cache at ${} (read-only is fine), or set offline: true to fail without trying",
        cache::CACHE_ENV
    )
}

impl Remote {
    /// A loader over the cache from the environment.
    pub fn new(offline: bool) -> Self {
        Self {
            cache: Cache::from_env(),
            offline,
            net: OnceCell::new(),
        }
    }

    /// A loader over a given cache.
    pub fn with_cache(cache: Cache, offline: bool) -> Self {
        Self {
            cache,
            offline,
            net: OnceCell::new(),
        }
    }

    /// The cache.
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// Whether the network may be used.
    pub fn offline(&self) -> bool {
        self.offline
    }

    /// GET a URL (runtimes: exec downloads), refusing plain HTTP except on loopback.
    pub fn fetch_url(&self, url: &str) -> Result<Vec<u8>, String> {
        if self.offline {
            return Err(format!(
                "offline: {url} is not in {}",
                self.cache.describe()
            ));
        }
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url} is not a URL: {e}"))?;
        match parsed.scheme() {
            "https" => {}
            "http" if parsed.host_str().is_some_and(is_loopback_host) => {}
            _ => {
                return Err(format!(
                    "{url}: only https:// (or http:// on loopback) and file:// are allowed"
                ));
            }
        }
        self.net()?.get(url).map_err(|e| e.message)
    }

    /// The digest a registry has for an image reference (the index of a multi-arch image).
    pub fn net_manifest_digest(&self, reference: &str) -> Result<String, String> {
        if self.offline {
            return Err(format!(
                "offline: cannot check {reference} against its registry"
            ));
        }
        self.net()?
            .manifest_digest(reference)
            .map_err(|e| e.message)
    }

    fn net(&self) -> Result<&Net, String> {
        self.net
            .get_or_init(Net::new)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Load a remote source as a bundle, checking trust first. Problems are in the bundle.
    pub fn load(&self, source: &CatalogSource, trusted: &[String]) -> Bundle {
        let Some(reference) = reference_of(source) else {
            return Bundle::failed(
                Origin::Path(String::new()),
                CatalogError::new("catalog", "not a remote source"),
            );
        };
        let origin = origin_of(source);
        let label = origin.label();
        if !is_trusted(&reference, trusted) {
            return Bundle::failed(
                origin,
                CatalogError::new(
                    &label,
                    format!(
                        "not trusted; review it with `krm-catalog catalog view {reference}`, then add it \
                         to spec.trustedCatalogs (exactly, or a prefix ending in *)"
                    ),
                ),
            );
        }
        match self.resolve(source, false) {
            Ok(bundle) => bundle,
            Err(message) => {
                // The label already names the reference; don't say it twice.
                let bare = reference.trim_start_matches("oci://");
                let message = message
                    .strip_prefix(&format!("{reference}: "))
                    .or_else(|| message.strip_prefix(&format!("oci://{bare}: ")))
                    .map_or_else(|| message.clone(), str::to_owned);
                Bundle::failed(origin, CatalogError::new(&label, message).unavailable())
            }
        }
    }

    /// Fetch a source even when cached (refreshing tags and unpinned URLs) and store it.
    pub fn pull(&self, source: &CatalogSource) -> Result<Bundle, String> {
        self.resolve(source, true)
    }

    fn resolve(&self, source: &CatalogSource, refresh: bool) -> Result<Bundle, String> {
        match source {
            CatalogSource::Url { url, sha256 } => self.resolve_url(url, sha256.as_deref(), refresh),
            CatalogSource::Oci(r) => self.resolve_oci(r, refresh),
            CatalogSource::Path(p) => Err(format!("{p} is a local path")),
        }
    }

    fn unreachable_or_offline(&self, reference: &str, what: &str) -> String {
        if self.offline {
            format!(
                "offline: {reference} is not in {}; {what}",
                self.cache.describe()
            )
        } else {
            what.to_owned()
        }
    }

    fn resolve_url(&self, url: &str, pin: Option<&str>, refresh: bool) -> Result<Bundle, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url} is not a URL: {e}"))?;
        match parsed.scheme() {
            "https" => {}
            "http" if parsed.host_str().is_some_and(is_loopback_host) => {}
            "http" => {
                return Err(format!(
                    "{url}: plain HTTP is refused except for loopback hosts; use https://"
                ));
            }
            other => return Err(format!("{url}: unsupported scheme {other}; use https://")),
        }
        let origin = Origin::Url(url.to_owned());
        let name = parsed
            .path_segments()
            .and_then(|mut s| s.next_back())
            .filter(|n| !n.is_empty())
            .unwrap_or("catalog.yaml")
            .to_owned();
        // A pinned URL is content-addressed: the pin alone finds it in the cache.
        if !refresh {
            let cached = match pin {
                Some(hex) => self.cache.get_blob(hex),
                None => self
                    .cache
                    .get_ref(url)
                    .and_then(|e| self.cache.get_blob(&e.digest)),
            };
            if let Some(bytes) = cached {
                crate::log!(
                    crate::logger::Level::Info,
                    "{url}: from {}",
                    self.cache.describe()
                );
                return bundle_from_bytes(origin, &name, &bytes);
            }
            if self.offline {
                return Err(format!(
                    "offline: {url} is not in {}; run `krm-catalog catalog pull {url}` where the network is available",
                    self.cache.describe()
                ));
            }
        }
        let net = self.net()?;
        let bytes = net.get(url).map_err(|e| {
            if e.unreachable {
                format!("{e}; {}", prepare_hint(url))
            } else {
                e.message.clone()
            }
        })?;
        let digest = sha256_hex(&bytes);
        if let Some(pin) = pin
            && digest != pin
        {
            return Err(format!(
                "{url}: sha256 mismatch: expected {pin}, downloaded {digest}"
            ));
        }
        // The cache is a convenience for later runs: failing to write it does not fail this one.
        if let Err(e) = self.cache.put_blob(&bytes).and_then(|_| {
            let kind = if archive::is_gzip(&bytes) {
                "bundle"
            } else {
                "file"
            };
            self.cache.put_ref(
                url,
                &RefEntry {
                    digest: digest.clone(),
                    kind: kind.into(),
                    name: name.clone(),
                },
            )
        }) {
            crate::log!(
                crate::logger::Level::Warn,
                "cannot write {}: {e}",
                self.cache.describe()
            );
        }
        bundle_from_bytes(origin, &name, &bytes)
    }

    fn resolve_oci(&self, reference: &str, refresh: bool) -> Result<Bundle, String> {
        let origin = Origin::Oci(reference.to_owned());
        let full = format!("oci://{reference}");
        if !refresh {
            let manifest_hex = reference
                .rsplit_once("@sha256:")
                .map(|(_, hex)| hex.to_owned())
                .or_else(|| self.cache.get_ref(&full).map(|e| e.digest));
            if let Some(hex) = manifest_hex
                && let Some(bundle) = self.bundle_from_cached_manifest(origin.clone(), &hex)
            {
                crate::log!(
                    crate::logger::Level::Info,
                    "{full}: from {}",
                    self.cache.describe()
                );
                return bundle;
            }
            if self.offline {
                return Err(self.unreachable_or_offline(
                    &full,
                    &format!(
                        "run `krm-catalog catalog pull {full}` where the network is available"
                    ),
                ));
            }
        }
        let net = self.net()?;
        let artifact = net.pull_artifact(reference).map_err(|e| {
            if e.unreachable {
                format!("{e}; {}", prepare_hint(&full))
            } else {
                e.message.clone()
            }
        })?;
        let store = || -> Result<(), String> {
            for layer in &artifact.layers {
                self.cache.put_blob(&layer.data)?;
            }
            let hex = self.cache.put_blob(&artifact.manifest)?;
            self.cache.put_ref(
                &full,
                &RefEntry {
                    digest: hex,
                    kind: "oci".into(),
                    name: "catalog.yaml".into(),
                },
            )
        };
        if let Err(e) = store() {
            crate::log!(
                crate::logger::Level::Warn,
                "cannot write {}: {e}",
                self.cache.describe()
            );
        }
        let mut bundle = bundle_from_layers(origin, &artifact.layers)?;
        bundle.pin = Some(artifact.manifest_digest.clone());
        Ok(bundle)
    }

    /// Rebuild a bundle from a cached manifest and its cached layers; `None` if anything is
    /// missing (then the network decides).
    fn bundle_from_cached_manifest(
        &self,
        origin: Origin,
        manifest_hex: &str,
    ) -> Option<Result<Bundle, String>> {
        let manifest = self.cache.get_blob(manifest_hex)?;
        let value: serde_json::Value = serde_json::from_slice(&manifest).ok()?;
        let mut layers = Vec::new();
        for layer in value.get("layers")?.as_array()? {
            let media_type = layer.get("mediaType")?.as_str()?.to_owned();
            if media_type != net::CATALOG_LAYER_MEDIA_TYPE
                && !net::BUNDLE_LAYER_MEDIA_TYPES.contains(&media_type.as_str())
            {
                continue;
            }
            let digest = layer.get("digest")?.as_str()?.to_owned();
            let data = self.cache.get_blob(digest.strip_prefix("sha256:")?)?;
            let title = layer
                .get("annotations")
                .and_then(|a| a.get("org.opencontainers.image.title"))
                .and_then(|t| t.as_str())
                .map(str::to_owned);
            layers.push(net::Layer {
                media_type,
                digest,
                data,
                title,
            });
        }
        Some(bundle_from_layers(origin, &layers).map(|mut b| {
            b.pin = Some(format!("sha256:{manifest_hex}"));
            b
        }))
    }
}

fn origin_of(source: &CatalogSource) -> Origin {
    match source {
        CatalogSource::Url { url, .. } => Origin::Url(url.clone()),
        CatalogSource::Oci(r) => Origin::Oci(r.clone()),
        CatalogSource::Path(p) => Origin::Path(p.clone()),
    }
}

fn bundle_from_bytes(origin: Origin, name: &str, bytes: &[u8]) -> Result<Bundle, String> {
    let mut bundle = unpinned_bundle_from_bytes(origin, name, bytes)?;
    bundle.pin = Some(format!("sha256:{}", sha256_hex(bytes)));
    Ok(bundle)
}

fn unpinned_bundle_from_bytes(origin: Origin, name: &str, bytes: &[u8]) -> Result<Bundle, String> {
    if archive::is_gzip(bytes) {
        let files = archive::unpack(bytes, net::max_download_bytes().saturating_mul(4))
            .map_err(|e| format!("{}: {e}", origin.label()))?;
        let borrowed: Vec<(String, &[u8])> = files
            .iter()
            .map(|(p, c)| (p.clone(), c.as_slice()))
            .collect();
        Ok(Bundle::from_files(origin, &borrowed))
    } else {
        Ok(Bundle::from_single_file(origin, name, bytes))
    }
}

fn bundle_from_layers(origin: Origin, layers: &[net::Layer]) -> Result<Bundle, String> {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for (i, layer) in layers.iter().enumerate() {
        if layer.media_type == net::CATALOG_LAYER_MEDIA_TYPE {
            let name = layer
                .title
                .clone()
                .filter(|t| !t.contains('/') && !t.is_empty())
                .unwrap_or_else(|| {
                    if i == 0 {
                        "catalog.yaml".to_owned()
                    } else {
                        format!("catalog-{i}.yaml")
                    }
                });
            files.push((name, layer.data.clone()));
        } else {
            files.extend(
                archive::unpack(&layer.data, net::max_download_bytes().saturating_mul(4))
                    .map_err(|e| format!("{}: {e}", origin.label()))?,
            );
        }
    }
    if files.len() == 1
        && layers.len() == 1
        && layers[0].media_type == net::CATALOG_LAYER_MEDIA_TYPE
    {
        let (name, data) = &files[0];
        return Ok(Bundle::from_single_file(origin, name, data));
    }
    let borrowed: Vec<(String, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.clone(), c.as_slice()))
        .collect();
    Ok(Bundle::from_files(origin, &borrowed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_matches_exactly_by_repository_or_by_prefix() {
        let trusted = vec![
            "https://example.co/kustomize/catalog.yaml".to_owned(),
            "registry.example.co/catalogs/*".to_owned(),
            "oci://ghcr.io/acme/catalog".to_owned(),
        ];
        assert!(is_trusted(
            "https://example.co/kustomize/catalog.yaml",
            &trusted
        ));
        assert!(!is_trusted(
            "https://example.co/kustomize/other.yaml",
            &trusted
        ));
        assert!(is_trusted(
            "oci://registry.example.co/catalogs/platform:v2@sha256:abc",
            &trusted
        ));
        assert!(!is_trusted(
            "oci://registry.example.co/other/platform:v2",
            &trusted
        ));
        assert!(is_trusted("oci://ghcr.io/acme/catalog:1.0", &trusted));
        assert!(is_trusted(
            "oci://ghcr.io/acme/catalog@sha256:abc",
            &trusted
        ));
        assert!(!is_trusted("oci://ghcr.io/acme/catalog-evil:1.0", &trusted));
        // Dot segments cannot climb out of a trusted prefix (the fetch resolves them).
        let prefix = vec!["https://example.co/trusted/*".to_owned()];
        assert!(is_trusted("https://example.co/trusted/a.yaml", &prefix));
        assert!(is_trusted(
            "https://example.co/trusted/x/../a.yaml",
            &prefix
        ));
        for escape in [
            "https://example.co/trusted/../evil.yaml",
            "https://example.co/trusted/%2e%2e/evil.yaml",
            "https://example.co/trusted/./../evil.yaml",
        ] {
            assert!(!is_trusted(escape, &prefix), "{escape}");
        }
        assert!(is_trusted(
            "oci://127.0.0.1:5000/c:v1",
            &["127.0.0.1:5000/c".to_owned()]
        ));
    }
}

//! Remote catalogs (SPEC §4.2, §4.3 trust, §7.2 cache): HTTPS files and `.tar.gz` bundles,
//! OCI artifacts by tag or digest. Fail closed on anything that cannot be proven: an
//! untrusted source, a pin that does not match, a download that was cut off.

pub mod archive;
pub mod cache;
pub mod cosign;
mod error;
pub mod git;
mod git_credentials;
mod git_transport;
mod git_tree;
mod keyless;
pub mod net;
mod netrc;
pub mod oci;
mod runtime;
mod signing;
mod x509;

use std::cell::OnceCell;

use crate::catalog::{Bundle, CatalogError, Origin};
use crate::catalog_ref::{CatalogRef, Digest};
use crate::verify::sha256_hex;
pub use cache::cache_hint;
use cache::{Cache, RefEntry};
pub use error::RemoteError;
use net::{Net, Refusal, SetupError, check_transport};
pub use runtime::RuntimeWant;

/// Whether a remote reference matches a `trustedCatalogs` entry: exactly, by its repository
/// (an OCI reference without tag or digest), or by a prefix ending in `*`. URLs are compared
/// as parsed URLs: scheme, host and port exactly, the percent-decoded path segment by segment
/// (a prefix's last segment may be the start of the URL's), so `trusted/..%2fevil.yaml` is not
/// under `trusted/*`. A URL that [`check_url_path`] refuses is never trusted.
pub fn is_trusted(reference: &str, trusted: &[String]) -> bool {
    if reference.starts_with("https://") || reference.starts_with("http://") {
        let Ok(url) = check_url_path(reference) else {
            return false;
        };
        return trusted.iter().any(|entry| url_matches(&url, entry.trim()));
    }
    let bare = reference.strip_prefix("oci://").unwrap_or(reference);
    let repository = bare.split('@').next().map(|r| match r.rfind(':') {
        Some(i) if !r[i..].contains('/') => &r[..i],
        _ => r,
    });
    trusted.iter().any(|entry| {
        let entry = entry.trim();
        let e = entry.strip_prefix("oci://").unwrap_or(entry);
        match e.strip_suffix('*') {
            Some(prefix) => bare.starts_with(prefix),
            None => e == bare || Some(e) == repository,
        }
    })
}

/// Whether a Git repository URL is trusted: `file://` is a local path (trusted like one);
/// `https://`, `http://` and `git://` must match an entry as URLs do ([`is_trusted`]), entries
/// written with or without `git::`.
pub fn is_trusted_git(url: &str, trusted: &[String]) -> bool {
    // The rule `catalog view` applies too (`CatalogRef::trust_entry`).
    if crate::catalog_ref::is_local_git_url(url) {
        return true;
    }
    let Ok(parsed) = check_url_path(url) else {
        return false;
    };
    trusted.iter().any(|entry| {
        let entry = entry.trim();
        url_matches(&parsed, entry.strip_prefix("git::").unwrap_or(entry))
    })
}

fn url_matches(url: &reqwest::Url, entry: &str) -> bool {
    let (text, prefix) = match entry.strip_suffix('*') {
        Some(p) => (p, true),
        None => (entry, false),
    };
    if !(text.starts_with("https://") || text.starts_with("http://") || text.starts_with("git://"))
    {
        return false;
    }
    let Ok(e) = check_url_path(text) else {
        return false;
    };
    if e.scheme() != url.scheme()
        || e.host_str() != url.host_str()
        || e.port_or_known_default() != url.port_or_known_default()
    {
        return false;
    }
    let (ours, theirs) = (decoded_segments(url), decoded_segments(&e));
    if !prefix {
        return ours == theirs && e.query() == url.query();
    }
    if e.query().is_some() {
        // A prefix with a query: the path must be the same, the query starts the URL's.
        return ours == theirs
            && url
                .query()
                .is_some_and(|q| q.starts_with(e.query().unwrap_or_default()));
    }
    let Some((last, whole)) = theirs.split_last() else {
        return false;
    };
    ours.len() > whole.len()
        && ours[..whole.len()] == *whole
        && ours[whole.len()].starts_with(last.as_str())
}

fn decoded_segments(url: &reqwest::Url) -> Vec<String> {
    url.path_segments()
        .map(|s| s.map(percent_decode).collect())
        .unwrap_or_default()
}

fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            // Two hex digits: the value fits a byte.
            out.push(u8::try_from(h * 16 + l).unwrap_or(b'%'));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse an `http(s)://` URL, refusing paths that servers may read differently from us:
/// encoded separators (`%2f`, `%5c`) and dot segments (`.`, `..`, `%2e%2e`), which the URL
/// parser or a static server would resolve to a path outside a trusted prefix.
pub fn check_url_path(text: &str) -> Result<reqwest::Url, RemoteError> {
    let url = parse_url(text)?;
    let after_scheme = text.split_once("://").map_or(text, |(_, rest)| rest);
    let before_query = after_scheme
        .split(['?', '#'])
        .next()
        .unwrap_or(after_scheme);
    let path_start = before_query.find(['/', '\\']).unwrap_or(before_query.len());
    let path = &before_query[path_start..];
    for segment in path.split(['/', '\\']) {
        let decoded = percent_decode(segment);
        if decoded.contains(['/', '\\']) {
            return Err(RemoteError::HiddenSeparator {
                url: text.to_owned(),
                segment: segment.to_owned(),
            });
        }
        if decoded == "." || decoded == ".." {
            return Err(RemoteError::DotSegment {
                url: text.to_owned(),
                segment: segment.to_owned(),
            });
        }
        // `..;x` is `..` with path parameters to Tomcat, Jetty and Spring: the same escape.
        if let Some((dots, _)) = decoded.split_once(';')
            && (dots == "." || dots == "..")
        {
            return Err(RemoteError::DotSegmentWithParameters {
                url: text.to_owned(),
                segment: segment.to_owned(),
                dots: dots.to_owned(),
            });
        }
    }
    Ok(url)
}

fn parse_url(text: &str) -> Result<reqwest::Url, RemoteError> {
    reqwest::Url::parse(text).map_err(|e| RemoteError::NotAUrl {
        url: text.to_owned(),
        reason: e.to_string(),
    })
}

/// The transport rule ([`check_transport`]) for the first URL, the refusal naming it; `hint`
/// is added to the message.
fn refused_transport(
    url: &str,
    parsed: &reqwest::Url,
    hint: &'static str,
) -> Result<(), RemoteError> {
    check_transport(parsed).map_err(|refusal| RemoteError::Refused {
        url: url.to_owned(),
        refusal,
        hint,
    })
}

/// Loads remote catalogs through the cache; the network is set up on first need.
pub struct Remote {
    cache: Cache,
    offline: bool,
    net: OnceCell<Result<Net, SetupError>>,
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

    /// GET a URL (runtimes: exec downloads), refusing plain HTTP except on loopback, on the
    /// first URL and on every redirect hop. Any https hop is followed: the caller verifies the
    /// bytes against the sha256 it requires.
    pub fn fetch_url(&self, url: &str) -> Result<Vec<u8>, RemoteError> {
        if self.offline {
            return Err(RemoteError::NotCached {
                reference: url.to_owned(),
                cache: self.cache.describe(),
            });
        }
        refused_transport(
            url,
            &parse_url(url)?,
            " (exec runtimes may also use file://)",
        )?;
        Ok(self.net()?.get(url, &net::any_hop)?)
    }

    /// The digest a registry has for an image reference (the index of a multi-arch image).
    pub fn net_manifest_digest(&self, reference: &str) -> Result<String, RemoteError> {
        if self.offline {
            return Err(RemoteError::OfflineRegistry(reference.to_owned()));
        }
        Ok(self.net()?.manifest_digest(reference)?)
    }

    fn net(&self) -> Result<&Net, RemoteError> {
        self.net
            .get_or_init(Net::new)
            .as_ref()
            .map_err(|e| RemoteError::Setup(e.clone()))
    }

    /// Load a remote source as a bundle, checking trust first, and then, for an OCI catalog
    /// that an entry of `keys` covers, its cosign signature by each such key. Problems are in
    /// the bundle.
    pub fn load(
        &self,
        source: &CatalogRef,
        trusted: &[String],
        keys: &[cosign::TrustedKey],
    ) -> Bundle {
        let Some(reference) = source.remote_name() else {
            return Bundle::failed(
                Origin::Path(String::new()),
                CatalogError::new("catalog", "not a remote source"),
            );
        };
        let origin = Origin::from(source);
        let label = origin.label();
        if let CatalogRef::Git(g) = source {
            if !is_trusted_git(&g.url, trusted) {
                return Bundle::failed(
                    origin,
                    CatalogError::new(
                        &label,
                        format!(
                            "not trusted; review it with `krm-catalog catalog view '{source}'`, then add \
                             {reference} to spec.trustedCatalogs (exactly, or a prefix ending in *)"
                        ),
                    ),
                );
            }
            return match git::load(g, &self.cache, self.offline, git::Credentials::Scoped) {
                Ok(fetched) => git::bundle(fetched, g),
                Err(e) => {
                    let error = CatalogError::new(&label, e.to_string());
                    let error = if e.is_unavailable() {
                        error.unavailable()
                    } else {
                        error
                    };
                    Bundle::failed(origin, error)
                }
            };
        }
        if let CatalogRef::Url { url, .. } = source
            && let Err(e) = check_url_path(url)
        {
            let e = e.to_string();
            let message = e.strip_prefix(&format!("{url}: ")).unwrap_or(&e).to_owned();
            return Bundle::failed(origin, CatalogError::new(&label, message));
        }
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
        let resolved = self
            .resolve(source, false, Some(trusted), git::Credentials::Scoped)
            .and_then(|bundle| {
                self.check_catalog_signature(source, &reference, &bundle, keys)?;
                Ok(bundle)
            });
        match resolved {
            Ok(bundle) => bundle,
            Err(e @ RemoteError::Signature(_)) => {
                let message = e.to_string();
                let message = message
                    .strip_prefix(&format!("{reference}: "))
                    .map_or_else(|| message.clone(), str::to_owned);
                Bundle::failed(origin, CatalogError::new(&label, message))
            }
            Err(e) => {
                let message = e.to_string();
                // The label already names the reference; don't say it twice.
                let bare = reference.trim_start_matches("oci://");
                let message = message
                    .strip_prefix(&format!("{reference}: "))
                    .or_else(|| message.strip_prefix(&format!("oci://{bare}: ")))
                    .or_else(|| message.strip_prefix(&format!("{label}: ")))
                    .map_or_else(|| message.clone(), str::to_owned);
                Bundle::failed(origin, CatalogError::new(&label, message).unavailable())
            }
        }
    }

    /// The cosign signatures an OCI catalog needs: one by the key of every entry of `keys`
    /// that covers `reference` (none for other sources, which no keyed entry covers).
    fn check_catalog_signature(
        &self,
        source: &CatalogRef,
        reference: &str,
        bundle: &Bundle,
        keys: &[cosign::TrustedKey],
    ) -> Result<Vec<cosign::Signer>, RemoteError> {
        let needed: Vec<cosign::Verifier> = keys
            .iter()
            .filter(|k| is_trusted(reference, std::slice::from_ref(&k.source)))
            .map(|k| k.key.clone())
            .collect();
        if needed.is_empty() {
            return Ok(Vec::new());
        }
        let (CatalogRef::Oci(r), Some(pin)) = (source, &bundle.pin) else {
            return Ok(Vec::new());
        };
        let name = crate::catalog_ref::OciRef::parse(r)
            .map(|p| p.name())
            .map_err(|e| {
                RemoteError::Fetch(net::FetchError::fatal(format!(
                    "{reference}: not an OCI reference: {}",
                    e.kind
                )))
            })?;
        let signers = self.check_signatures(reference, &name, &pin.to_string(), &needed)?;
        for signer in &signers {
            crate::log!(
                crate::logger::Level::Info,
                "{reference}: {} signed by {signer}",
                signer.digest
            );
        }
        Ok(signers)
    }

    /// Fetch a source even when cached (refreshing tags and unpinned URLs) and store it.
    /// Redirects must stay on https (or loopback http); there is no trust list to check them
    /// against (`catalog view` is how a user decides to trust).
    pub fn pull(&self, source: &CatalogRef) -> Result<Bundle, RemoteError> {
        self.resolve(source, true, None, git::Credentials::Scoped)
    }

    /// [`Remote::pull`] for `catalog view`, which is how a user decides to trust a source: a
    /// Git server that asks for credentials gets none (issue 21 H6).
    pub fn view(&self, source: &CatalogRef) -> Result<Bundle, RemoteError> {
        self.resolve(source, true, None, git::Credentials::Withheld)
    }

    fn resolve(
        &self,
        source: &CatalogRef,
        refresh: bool,
        trusted: Option<&[String]>,
        credentials: git::Credentials,
    ) -> Result<Bundle, RemoteError> {
        match source {
            CatalogRef::Url { url, sha256 } => {
                self.resolve_url(url, sha256.as_ref().map(Digest::hex), refresh, trusted)
            }
            CatalogRef::Oci(r) => self.resolve_oci(r, refresh),
            CatalogRef::Git(g) => Ok(git::bundle(
                git::load(g, &self.cache, self.offline, credentials)?,
                g,
            )),
            CatalogRef::Path(p) => Err(RemoteError::LocalPath(p.clone())),
        }
    }

    /// `trusted`: when loading for a run, an unpinned URL's redirect hops must be trusted too
    /// (a pinned one is proven by its bytes, so any https hop will do).
    fn resolve_url(
        &self,
        url: &str,
        pin: Option<&str>,
        refresh: bool,
        trusted: Option<&[String]>,
    ) -> Result<Bundle, RemoteError> {
        let parsed = check_url_path(url)?;
        refused_transport(url, &parsed, "")?;
        // `url: …#sha256=…` looks pinned but is not: a fragment never reaches the server and
        // nothing here would check it.
        if let Some(fragment) = parsed.fragment() {
            return Err(RemoteError::FragmentPin {
                url: url.to_owned(),
                fragment: fragment.to_owned(),
            });
        }
        let origin = Origin::Url(url.to_owned());
        let name = parsed
            .path_segments()
            .and_then(|mut s| s.next_back())
            .filter(|n| !n.is_empty())
            .unwrap_or("catalog.yaml")
            .to_owned();
        // A pinned URL is content-addressed: the pin alone finds it in the cache. An unpinned
        // copy that came through a redirect (stored by `catalog view` or `pull`, which have no
        // trust list) is used only when every hop is trusted; otherwise it is fetched again,
        // and the hops are checked then.
        let mut untrusted_hop = None;
        if !refresh {
            let cached = match pin {
                Some(hex) => self.cache.get_blob(hex),
                None => self.cache.get_ref(url).and_then(|e| {
                    untrusted_hop = trusted
                        .and_then(|list| e.via.iter().find(|h| !is_trusted(h, list)).cloned());
                    if untrusted_hop.is_some() {
                        return None;
                    }
                    self.cache.get_blob(&e.digest)
                }),
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
                if let Some(hop) = untrusted_hop {
                    return Err(RemoteError::UntrustedCachedHop {
                        cache: self.cache.describe(),
                        hop,
                    });
                }
                return Err(RemoteError::NotPulled {
                    reference: url.to_owned(),
                    cache: self.cache.describe(),
                });
            }
        }
        let net = self.net()?;
        let hops = std::cell::RefCell::new(Vec::<String>::new());
        let hop_trusted = |hop: &reqwest::Url| {
            // Every hop of every attempt: more than the last attempt took is only stricter.
            if !hops.borrow().iter().any(|h| h == hop.as_str()) {
                hops.borrow_mut().push(hop.as_str().to_owned());
            }
            match trusted {
                Some(list) if pin.is_none() && !is_trusted(hop.as_str(), list) => {
                    Err(Refusal::Untrusted)
                }
                _ => Ok(()),
            }
        };
        let bytes = net
            .get(url, &hop_trusted)
            .map_err(|e| unreachable_hint(e, url))?;
        let digest = sha256_hex(&bytes);
        if let Some(pin) = pin
            && digest != pin
        {
            return Err(RemoteError::Mismatch {
                url: url.to_owned(),
                expected: pin.to_owned(),
                got: digest,
            });
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
                    via: hops.take(),
                },
            )
        }) {
            crate::log!(
                crate::logger::Level::Warn,
                "{}",
                self.cache.not_writable(&e)
            );
        }
        bundle_from_bytes(origin, &name, &bytes)
    }

    fn resolve_oci(&self, reference: &str, refresh: bool) -> Result<Bundle, RemoteError> {
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
                return Err(RemoteError::NotPulled {
                    reference: full,
                    cache: self.cache.describe(),
                });
            }
        }
        let net = self.net()?;
        let artifact = net
            .pull_artifact(reference)
            .map_err(|e| unreachable_hint(e, &full))?;
        self.cache_artifact(&artifact, &full, "oci", "catalog.yaml".into());
        let mut bundle = bundle_from_layers(origin, &artifact.layers)?;
        bundle.pin = Some(Digest::of(&artifact.manifest));
        Ok(bundle)
    }

    /// Keep an artifact pulled from a registry (its layers, its manifest, and `cache_ref`
    /// naming it) for offline runs; a cache that cannot be written is a warning.
    pub(crate) fn cache_artifact(
        &self,
        artifact: &net::Artifact,
        cache_ref: &str,
        kind: &str,
        name: String,
    ) {
        let store = || -> std::io::Result<()> {
            for layer in &artifact.layers {
                self.cache.put_blob(&layer.data)?;
            }
            let hex = self.cache.put_blob(&artifact.manifest)?;
            self.cache.put_ref(
                cache_ref,
                &RefEntry {
                    digest: hex,
                    kind: kind.into(),
                    name,
                    via: Vec::new(),
                },
            )
        };
        if let Err(e) = store() {
            crate::log!(
                crate::logger::Level::Warn,
                "{}",
                self.cache.not_writable(&e)
            );
        }
    }

    /// Rebuild a bundle from a cached manifest and its cached layers; `None` if anything is
    /// missing (then the network decides).
    fn bundle_from_cached_manifest(
        &self,
        origin: Origin,
        manifest_hex: &str,
    ) -> Option<Result<Bundle, RemoteError>> {
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
            b.pin = Some(Digest::of(&manifest));
            b
        }))
    }
}

/// The [`Remote`] of one run or command, made on first need: every stage that fetches (catalogs,
/// runtimes) borrows the same one, so a run sets up at most one cache and one network client
/// (one tokio runtime), and a run that fetches nothing (the hot path) sets up none.
pub struct LazyRemote {
    offline: bool,
    remote: OnceCell<Remote>,
}

impl LazyRemote {
    /// Nothing is made until [`LazyRemote::get`].
    pub fn new(offline: bool) -> Self {
        Self {
            offline,
            remote: OnceCell::new(),
        }
    }

    /// The remote, made on the first call.
    pub fn get(&self) -> &Remote {
        self.remote.get_or_init(|| Remote::new(self.offline))
    }
}

/// A failed request, with how to prepare a cache for `reference` when the network could not be
/// reached.
fn unreachable_hint(error: net::FetchError, reference: &str) -> RemoteError {
    if error.unreachable {
        RemoteError::Unreachable {
            error,
            reference: reference.to_owned(),
        }
    } else {
        RemoteError::Fetch(error)
    }
}

fn bundle_from_bytes(origin: Origin, name: &str, bytes: &[u8]) -> Result<Bundle, RemoteError> {
    let mut bundle = unpinned_bundle_from_bytes(origin, name, bytes)?;
    bundle.pin = Some(Digest::of(bytes));
    Ok(bundle)
}

fn unpinned_bundle_from_bytes(
    origin: Origin,
    name: &str,
    bytes: &[u8],
) -> Result<Bundle, RemoteError> {
    if archive::is_gzip(bytes) {
        let files = archive::unpack(bytes, &archive::Bounds::catalog()).map_err(|e| {
            RemoteError::Archive {
                label: origin.label(),
                reason: e.to_string(),
            }
        })?;
        let borrowed: Vec<(String, &[u8])> = files
            .iter()
            .map(|(p, c)| (p.clone(), c.as_slice()))
            .collect();
        Ok(Bundle::from_files(origin, &borrowed))
    } else {
        Ok(Bundle::from_single_file(origin, name, bytes))
    }
}

fn bundle_from_layers(origin: Origin, layers: &[net::Layer]) -> Result<Bundle, RemoteError> {
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
                archive::unpack(&layer.data, &archive::Bounds::catalog()).map_err(|e| {
                    RemoteError::Archive {
                        label: format!("{}: layer {}", origin.label(), layer.digest),
                        reason: e.to_string(),
                    }
                })?,
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
        // Nothing climbs out of a trusted prefix: dot segments and encoded separators are
        // refused (issue 9, F6), and the comparison is by decoded segment.
        let prefix = vec!["https://example.co/trusted/*".to_owned()];
        assert!(is_trusted("https://example.co/trusted/a.yaml", &prefix));
        assert!(is_trusted("https://example.co/trusted/sub/a.yaml", &prefix));
        assert!(is_trusted("https://example.co/%74rusted/a.yaml", &prefix));
        for escape in [
            "https://example.co/trusted/../evil.yaml",
            "https://example.co/trusted/%2e%2e/evil.yaml",
            "https://example.co/trusted/%2E%2e/evil.yaml",
            "https://example.co/trusted/./../evil.yaml",
            "https://example.co/trusted/x/../a.yaml",
            "https://example.co/trusted/..%2fevil.yaml",
            "https://example.co/trusted/..%2Fevil.yaml",
            "https://example.co/trusted/..%5cevil.yaml",
            "https://example.co/trusted\\..\\evil.yaml",
            "https://example.co/trusted-evil/a.yaml",
            "https://example.co:8443/trusted/a.yaml",
            "http://example.co/trusted/a.yaml",
            "https://example.co.evil/trusted/a.yaml",
        ] {
            assert!(!is_trusted(escape, &prefix), "{escape}");
        }
        let partial = vec!["https://example.co/trusted/team-*".to_owned()];
        assert!(is_trusted(
            "https://example.co/trusted/team-a/c.yaml",
            &partial
        ));
        assert!(!is_trusted(
            "https://example.co/trusted/other/c.yaml",
            &partial
        ));
        let exact = vec!["https://example.co/c.yaml".to_owned()];
        assert!(is_trusted("https://EXAMPLE.co:443/c.yaml", &exact));
        assert!(!is_trusted("https://example.co/c.yaml?x=1", &exact));
        assert!(is_trusted(
            "oci://127.0.0.1:5000/c:v1",
            &["127.0.0.1:5000/c".to_owned()]
        ));
    }

    #[test]
    fn issue9_f6_encoded_separators_and_dot_segments_are_refused_with_a_reason() {
        for (url, needle) in [
            (
                "https://h/t/..%2fevil.yaml",
                "hides a separator (%2f or %5c)",
            ),
            ("https://h/t/a%5Cb.yaml", "hides a separator (%2f or %5c)"),
            ("https://h/t/../evil.yaml", "has a \"..\" segment"),
            ("https://h/t/%2e%2e/evil.yaml", "has a \"%2e%2e\" segment"),
            ("https://h/t/./a.yaml", "has a \".\" segment"),
        ] {
            let e = check_url_path(url).unwrap_err().to_string();
            assert!(e.starts_with(url) && e.contains(needle), "{url}: {e}");
        }
        assert!(check_url_path("https://h/t/a.yaml?next=..%2f").is_ok());
        assert!(check_url_path("https://h/t/a;v=1.yaml").is_ok());
    }

    /// Java servers read `..;` (and `..;jsessionid=x`, `%2e%2e;`) as `..`.
    #[test]
    fn issue9_f6_dot_segments_with_path_parameters_are_refused() {
        let prefix = vec!["https://h/trusted/*".to_owned()];
        for url in [
            "https://h/trusted/..;/evil.yaml",
            "https://h/trusted/..;jsessionid=x/evil.yaml",
            "https://h/trusted/%2e%2e;/evil.yaml",
            "https://h/trusted/.;/a.yaml",
        ] {
            let e = check_url_path(url).unwrap_err().to_string();
            assert!(e.contains("a dot segment with parameters"), "{url}: {e}");
            assert!(!is_trusted(url, &prefix), "{url}");
        }
        assert!(check_url_path("https://h?next=/../x").is_ok());
        assert!(check_url_path("https://h/t/a%20b.yaml").is_ok());
    }

    #[test]
    fn issue12_git_repositories_are_trusted_as_urls() {
        let trusted = vec![
            "git::https://git.example.co/platform/*".to_owned(),
            "git://127.0.0.1:9418/repo".to_owned(),
        ];
        assert!(is_trusted_git(
            "https://git.example.co/platform/catalogs.git",
            &trusted
        ));
        assert!(is_trusted_git(
            "https://u:t@git.example.co/platform/c.git",
            &trusted
        ));
        assert!(is_trusted_git("git://127.0.0.1:9418/repo", &trusted));
        assert!(is_trusted_git("file:///srv/repo", &[]));
        for untrusted in [
            "https://git.example.co/platform/../evil.git",
            "https://git.example.co/platform%2f..%2fevil.git",
            "https://git.example.co/other/c.git",
            "git://127.0.0.1:9418/repo2",
            "git://127.0.0.1:9419/repo",
            "http://git.example.co/platform/c.git",
        ] {
            assert!(!is_trusted_git(untrusted, &trusted), "{untrusted}");
        }
    }
}

//! Exec binaries and Starlark scripts from an OCI artifact or a pinned Git commit (SPEC §7.3,
//! issue 23): the network side. The caller (`functions::exec::fetch`) checks the bytes against
//! the runtime's sha256 and caches them under it, as for HTTPS downloads, so an offline run
//! finds them in the cache and never gets here.

use crate::catalog_ref::{GitRef, OciRef};

use super::net::{FetchError, Layer, Net};
use super::oci::{
    DOCKER_LIST, DOCKER_MANIFEST, OCI_INDEX, OCI_MANIFEST, Session, fetch_layers, manifest_limit,
    manifest_path,
};
use super::{Remote, RemoteError, git};

impl Remote {
    /// The layer of the OCI artifact `reference` (without `oci://`) that holds the runtime
    /// for `want` (see [`super::net::Net::pull_runtime`]).
    pub fn fetch_oci_runtime(
        &self,
        reference: &str,
        want: RuntimeWant<'_>,
    ) -> Result<Vec<u8>, RemoteError> {
        if self.offline() {
            return Err(RemoteError::NotCached {
                reference: format!("oci://{reference}"),
                cache: self.cache().describe(),
            });
        }
        Ok(self.net()?.pull_runtime(reference, want)?.data)
    }

    /// The file `source.path` of the commit `source` pins (see [`git::load_file`]).
    pub fn fetch_git_runtime(&self, source: &GitRef) -> Result<Vec<u8>, RemoteError> {
        if self.offline() {
            return Err(RemoteError::NotCached {
                reference: source.to_string(),
                cache: self.cache().describe(),
            });
        }
        Ok(git::load_file(source, self.cache())?)
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
}

//! Signed OCI catalogs (issue 24, SPEC §7.5): catalogs pushed to Debian's `docker-registry`
//! and signed the way `cosign sign --key` signs them: a simple-signing payload naming the
//! manifest digest, signed by an ECDSA P-256 key (`openssl dgst -sha256 -sign`, the ASN.1
//! signature cosign makes), pushed as the tag `sha256-<hex>.sig` whose layer carries the
//! base64 signature in `dev.cosignproject.cosign/signature`. Tests print `SKIPPED …` when
//! docker-registry, skopeo, openssl or python3 are missing (`.ci/run` installs them).

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use krm_catalog::verify::sha256_hex;

use crate::remote::{CATALOG, OFFLINE, ONLINE, push, resource_list};
use crate::servers::Registry;
use crate::util::{TestContext, assert_fails_with, have, stderr, stdout, succeed, test_name};

const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";

/// Push blobs (POST, then PUT with the digest) and a manifest with the registry API.
pub(crate) const PUSH: &str = r#"
import hashlib, json, sys, urllib.error, urllib.parse, urllib.request
registry, repo, tag, manifest = sys.argv[1:5]
for path in sys.argv[5:]:
    data = open(path, "rb").read()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    started = urllib.request.urlopen(urllib.request.Request(
        f"http://{registry}/v2/{repo}/blobs/uploads/", data=b"", method="POST"))
    location = urllib.parse.urljoin(f"http://{registry}/", started.headers["Location"])
    separator = "&" if "?" in location else "?"
    urllib.request.urlopen(urllib.request.Request(
        f"{location}{separator}digest={digest}", data=data, method="PUT",
        headers={"Content-Type": "application/octet-stream"}))
body = open(manifest, "rb").read()
try:
    urllib.request.urlopen(urllib.request.Request(
        f"http://{registry}/v2/{repo}/manifests/{tag}", data=body, method="PUT",
        headers={"Content-Type": json.loads(body)["mediaType"]}))
except urllib.error.HTTPError as e:
    sys.exit(f"PUT manifest {tag}: {e}: {e.read().decode()}")
"#;

/// A P-256 key pair made by openssl in `dir`: (private key, public key) paths.
fn key_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let private = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub"));
    succeed(
        Command::new("openssl")
            .args([
                "ecparam",
                "-genkey",
                "-name",
                "prime256v1",
                "-noout",
                "-out",
            ])
            .arg(&private),
    );
    succeed(
        Command::new("openssl")
            .args(["ec", "-pubout", "-in"])
            .arg(&private)
            .arg("-out")
            .arg(&public),
    );
    (private, public)
}

/// `sha256:<hex>` of the key's DER SubjectPublicKeyInfo, as openssl computes it.
fn fingerprint(public: &Path) -> String {
    let der = Command::new("openssl")
        .args(["pkey", "-pubin", "-outform", "DER", "-in"])
        .arg(public)
        .output()
        .expect("openssl");
    assert!(der.status.success());
    format!("sha256:{}", sha256_hex(&der.stdout))
}

/// cosign's simple-signing payload for `digest`.
fn payload(repository: &str, digest: &str) -> Vec<u8> {
    format!(
        "{{\"critical\":{{\"identity\":{{\"docker-reference\":\"{repository}\"}},\"image\":{{\"docker-manifest-digest\":\"{digest}\"}},\"type\":\"cosign container image signature\"}},\"optional\":null}}"
    )
    .into_bytes()
}

/// Sign `payload` with `private` (`openssl dgst -sha256 -sign`: ASN.1 DER) and push it as the
/// cosign signature of `digest` in `repo`.
fn push_signature(registry: &str, repo: &str, digest: &str, payload: &[u8], private: &Path) {
    let dir = tempfile::tempdir().expect("tempdir");
    let body = dir.path().join("payload.json");
    fs_err::write(&body, payload).expect("write");
    let signature = Command::new("openssl")
        .args(["dgst", "-sha256", "-sign"])
        .arg(private)
        .arg(&body)
        .output()
        .expect("openssl");
    assert!(signature.status.success());
    let config = dir.path().join("config.json");
    fs_err::write(&config, b"{}").expect("write");
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": format!("sha256:{}", sha256_hex(b"{}")), "size": 2},
        "layers": [{"mediaType": SIMPLE_SIGNING,
            "digest": format!("sha256:{}", sha256_hex(payload)), "size": payload.len(),
            "annotations": {"dev.cosignproject.cosign/signature":
                base64::engine::general_purpose::STANDARD.encode(&signature.stdout)}}],
    });
    let manifest_path = dir.path().join("manifest.json");
    fs_err::write(&manifest_path, manifest.to_string()).expect("write");
    let tag = format!("{}.sig", digest.replacen(':', "-", 1));
    succeed(
        Command::new("python3")
            .args(["-c", PUSH, registry, repo, &tag])
            .arg(&manifest_path)
            .arg(&config)
            .arg(&body),
    );
}

/// The function config's trust entry for `source` with the key file `key`.
fn keyed(source: &str, key: &str) -> String {
    format!("{{source: \"{source}\", publicKeyFile: \"{key}\"}}")
}

fn input(reference: &str, trust: &str) -> String {
    resource_list(&format!("{{oci: \"{reference}\"}}"), &[], "").replace(
        "trustedCatalogs: []",
        &format!("trustedCatalogs: [{trust}]"),
    )
}

#[test]
fn issue24_cosign_signed_oci_catalogs_are_checked_with_the_trust_entrys_key() {
    let test = test_name!();
    for tool in ["docker-registry", "skopeo", "openssl", "python3"] {
        if !have(tool, test) {
            return;
        }
    }
    let registry = Registry::start();
    let addr = registry.addr.clone();
    let addr = addr.as_str();
    let ctx = TestContext::new();
    let (private, public) = key_pair(ctx.path(), "cosign");
    let (other_private, _) = key_pair(ctx.path(), "other");
    let key = fingerprint(&public);
    let shown_key = format!("{key} (cosign.pub)");
    let signed = push(
        addr,
        "catalogs/signed:v1",
        CATALOG.as_bytes(),
        "catalog.yaml",
    );
    push_signature(
        addr,
        "catalogs/signed",
        &signed,
        &payload(&format!("{addr}/catalogs/signed"), &signed),
        &private,
    );
    let trust = keyed(&format!("{addr}/catalogs/*"), "cosign.pub");

    // A good signature: the run loads the catalog (the key file relative to the working
    // directory), and view and verify name the signer.
    let out = ctx.run(&[], &input(&format!("{addr}/catalogs/signed:v1"), &trust));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("greeting: hello"), "{}", stdout(&out));
    let reference = format!("oci://{addr}/catalogs/signed:v1");
    let out = ctx.run(
        &["catalog", "view", &reference, "--public-key", "cosign.pub"],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("\nSigned:    key {shown_key}\n")),
        "{}",
        stdout(&out)
    );
    let out = ctx.run(
        &[
            "catalog",
            "view",
            &reference,
            "--public-key",
            "cosign.pub",
            "-o",
            "json",
        ],
        "",
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(json["signed"][0], format!("key {shown_key}"));
    let out = ctx.run(
        &[
            "catalog",
            "verify",
            &reference,
            "--public-key",
            "cosign.pub",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with(&format!("{signed} signed: key {shown_key}\n")),
        "{}",
        stdout(&out)
    );
    // The key inline, by digest: the same.
    let pem = fs_err::read_to_string(&public).expect("key");
    let inline = format!(
        "{{source: \"oci://{addr}/catalogs/signed\", publicKey: \"{}\"}}",
        pem.replace('\n', "\\n")
    );
    let out = ctx.run(
        &[],
        &input(&format!("{addr}/catalogs/signed@{signed}"), &inline),
    );
    assert!(out.status.success(), "{}", stderr(&out));

    // No signature tag: fails closed, naming the reference, the digest and the key.
    let unsigned = push(
        addr,
        "catalogs/unsigned:v1",
        CATALOG.as_bytes(),
        "catalog.yaml",
    );
    let tag = |d: &str| format!("{}.sig", d.replacen(':', "-", 1));
    let out = ctx.run(&[], &input(&format!("{addr}/catalogs/unsigned:v1"), &trust));
    assert_fails_with(
        &out,
        &format!(
            "catalog oci://{addr}/catalogs/unsigned:v1: no cosign signature of {unsigned}: the registry has no tag {}; the key {shown_key} requires one (sign it with `cosign sign --key`)",
            tag(&unsigned)
        ),
    );
    let out = ctx.run(
        &[
            "catalog",
            "view",
            &format!("oci://{addr}/catalogs/unsigned:v1"),
            "--public-key",
            "cosign.pub",
        ],
        "",
    );
    assert_fails_with(&out, "no cosign signature of");
    assert_eq!(stdout(&out), "");
    // String trust entries are unchanged: the unsigned catalog loads under one.
    let out = ctx.run(
        &[],
        &input(
            &format!("{addr}/catalogs/unsigned:v1"),
            &format!("\"{addr}/catalogs/*\""),
        ),
    );
    assert!(out.status.success(), "{}", stderr(&out));

    // Signed by another key.
    let by_other = push(
        addr,
        "catalogs/other-key:v1",
        CATALOG.as_bytes(),
        "catalog.yaml",
    );
    push_signature(
        addr,
        "catalogs/other-key",
        &by_other,
        &payload(&format!("{addr}/catalogs/other-key"), &by_other),
        &other_private,
    );
    let out = ctx.run(
        &[],
        &input(&format!("{addr}/catalogs/other-key:v1"), &trust),
    );
    assert_fails_with(
        &out,
        &format!(
            "catalog oci://{addr}/catalogs/other-key:v1: no cosign signature of {by_other} verifies with the key {shown_key} (1 signature(s) in {})",
            tag(&by_other)
        ),
    );

    // A good signature of another digest, copied under this digest's tag.
    let replayed = push(
        addr,
        "catalogs/replayed:v1",
        format!("{CATALOG}\n").as_bytes(),
        "catalog.yaml",
    );
    push_signature(
        addr,
        "catalogs/replayed",
        &replayed,
        &payload(&format!("{addr}/catalogs/signed"), &signed),
        &private,
    );
    let out = ctx.run(&[], &input(&format!("{addr}/catalogs/replayed:v1"), &trust));
    assert_fails_with(
        &out,
        &format!(
            "catalog oci://{addr}/catalogs/replayed:v1: the cosign signature in {} verifies with the key {shown_key} but signs {signed}, not {replayed}",
            tag(&replayed)
        ),
    );

    // A key file that is not a key: an error at its entry.
    ctx.write("bad.pub", "not a key\n");
    let out = ctx.run(
        &[],
        &input(
            &format!("{addr}/catalogs/signed:v1"),
            &keyed(&format!("{addr}/catalogs/*"), "bad.pub"),
        ),
    );
    assert_fails_with(
        &out,
        "public key bad.pub: not a PEM public key (-----BEGIN PUBLIC KEY-----",
    );

    // `catalog pull` caches the signature with the catalog, for offline runs.
    let pulled = TestContext::new();
    pulled.write("cosign.pub", &pem);
    let out = pulled.run(&["catalog", "pull", &reference], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!(
            "\n  cosign signature {}: cached (checked by a run whose trustedCatalogs entry names its key)\n",
            tag(&signed)
        )),
        "{}",
        stdout(&out)
    );

    // Offline, the signature cached by the online run (or the pull) is checked again with the
    // key.
    drop(registry);
    let out = pulled.run(
        &[],
        &input(&format!("{addr}/catalogs/signed:v1"), &trust).replace(ONLINE, OFFLINE),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let offline = input(&format!("{addr}/catalogs/signed:v1"), &trust).replace(ONLINE, OFFLINE);
    let out = ctx.run(&[], &offline);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = ctx.run(
        &[],
        &input(
            &format!("{addr}/catalogs/signed:v1"),
            &keyed(&format!("{addr}/catalogs/*"), "other.pub"),
        )
        .replace(ONLINE, OFFLINE),
    );
    assert_fails_with(&out, "verifies with the key");
}

/// A KEP catalog with one container kind, `fn.acme.dev/v1 <kind>`, pinned to `digest` and
/// naming the PEM `public_key`.
fn signed_image_catalog(kind: &str, image: &str, digest: &str, public_key: &str) -> String {
    let pem = public_key.lines().fold(String::new(), |mut pem, line| {
        pem.push_str("            ");
        pem.push_str(line);
        pem.push('\n');
        pem
    });
    crate::runtimes::image_catalog(&[format!(
        "  - group: fn.acme.dev
    names:
      kind: {kind}
    versions:
    - name: v1
      runtime:
        container:
          image: {image}
          sha256: {}
          publicKey: |
{pem}",
        digest.trim_start_matches("sha256:")
    )])
}

#[test]
fn issue24_cosign_container_runtimes_with_a_public_key_must_be_signed() {
    let test = test_name!();
    for tool in ["docker-registry", "skopeo", "openssl", "python3"] {
        if !have(tool, test) {
            return;
        }
    }
    let registry = Registry::start();
    let addr = registry.addr.as_str();
    let pkg = TestContext::new();
    let (private, public) = key_pair(pkg.path(), "cosign");
    let pem = fs_err::read_to_string(&public).expect("key");
    let key = fingerprint(&public);
    // Any manifest will do as the image: only its digest and signature are looked at.
    let signed = push(addr, "fn/signed:v1", b"image one", "catalog.yaml");
    push_signature(
        addr,
        "fn/signed",
        &signed,
        &payload(&format!("{addr}/fn/signed"), &signed),
        &private,
    );
    let unsigned = push(addr, "fn/unsigned:v1", b"image two", "catalog.yaml");
    let catalog = [
        signed_image_catalog("Signed", &format!("{addr}/fn/signed:v1"), &signed, &pem),
        signed_image_catalog(
            "Unsigned",
            &format!("{addr}/fn/unsigned:v1"),
            &unsigned,
            &pem,
        )
        .split_once("  krmFunctions:\n")
        .map(|(_, kinds)| kinds.to_owned())
        .unwrap_or_default(),
    ]
    .concat();
    pkg.write("catalog.yaml", &catalog);

    let out = pkg.run(&[], &crate::runtimes::input("Signed", "{mode: pin}"));
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains(&format!("image: {addr}/fn/signed@{signed}")),
        "{}",
        stdout(&out)
    );
    let out = pkg.run(&[], &crate::runtimes::input("Unsigned", "{mode: pin}"));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let tag = format!("{}.sig", unsigned.replacen(':', "-", 1));
    let expected = format!(
        "{addr}/fn/unsigned@{unsigned}: no cosign signature of {unsigned}: the registry has no tag {tag}; the key {key} (the runtime's publicKey) requires one"
    );
    assert!(stdout(&out).contains(&expected), "{}", stdout(&out));

    // catalog verify names the signer, and fails on the unsigned image; view shows the key.
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let lines = stdout(&out);
    assert!(
        lines.contains(&format!(
            "container {addr}/fn/signed@{signed}, signed: key {key} (the runtime's publicKey)"
        )) && lines.contains("UNSIGNED")
            && lines.contains(&expected),
        "{lines}"
    );
    let out = pkg.run(&["catalog", "view", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Signed by:")
            && stdout(&out).contains(&format!("key {key} (cosign, required)")),
        "{}",
        stdout(&out)
    );
}

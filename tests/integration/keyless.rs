//! Keyless cosign signatures (issue 24, SPEC §7.5), verified offline against a trust root the
//! user gives. The fixtures are made here with openssl the way Fulcio and Rekor make theirs: a
//! P-384 root, a P-384 intermediate, a P-256 leaf valid for one day with a URI subject
//! alternative name, Fulcio's OIDC issuer extension (1.3.6.1.4.1.57264.1.8) and the
//! code-signing EKU; a P-256 "Rekor" key that signs the SET over the canonical JSON of the
//! bundle's payload, whose body is a `hashedrekord` entry. The signature manifest is pushed to
//! Debian's `docker-registry` as `cosign sign` (keyless) pushes it: the layer annotations
//! `dev.cosignproject.cosign/signature`, `dev.sigstore.cosign/certificate`,
//! `dev.sigstore.cosign/chain` and `dev.sigstore.cosign/bundle`. Tests print `SKIPPED …` when
//! docker-registry, skopeo, openssl or python3 are missing (`.ci/run` installs them).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use krm_catalog::verify::sha256_hex;

use crate::cosign::PUSH;
use crate::remote::{CATALOG, OFFLINE, ONLINE, push, resource_list};
use crate::servers::Registry;
use crate::util::{TestContext, assert_fails_with, have, stderr, stdout, succeed, test_name};

const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
const IDENTITY: &str =
    "https://github.com/acme/catalogs/.github/workflows/release.yml@refs/heads/main";
const ISSUER: &str = "https://token.actions.githubusercontent.com";

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

fn openssl(dir: &Path, args: &[&str]) {
    succeed(Command::new("openssl").current_dir(dir).args(args));
}

/// `openssl dgst -sha256 -sign key` of `data`: an ASN.1 ECDSA signature.
fn sign(dir: &Path, key: &str, data: &[u8]) -> Vec<u8> {
    let file = dir.join("to-sign");
    fs_err::write(&file, data).expect("write");
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(["dgst", "-sha256", "-sign", key])
        .arg(&file)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A CA (`root` self-signed, or issued by `issuer`) named `name` in `dir`: `name.key`,
/// `name.pem`.
fn ca(dir: &Path, name: &str, issuer: Option<&str>) {
    openssl(
        dir,
        &[
            "ecparam",
            "-genkey",
            "-name",
            "secp384r1",
            "-noout",
            "-out",
            &format!("{name}.key"),
        ],
    );
    let ext = format!("{name}.ext");
    fs_err::write(
        dir.join(&ext),
        "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nextendedKeyUsage=codeSigning\nsubjectKeyIdentifier=hash\n",
    )
    .expect("write");
    match issuer {
        None => openssl(
            dir,
            &[
                "req",
                "-x509",
                "-new",
                "-key",
                &format!("{name}.key"),
                "-subj",
                &format!("/O=test/CN={name}"),
                "-days",
                "30",
                "-extensions",
                "v3",
                "-config",
                &ext_config(dir, &ext),
                "-out",
                &format!("{name}.pem"),
            ],
        ),
        Some(issuer) => {
            openssl(
                dir,
                &[
                    "req",
                    "-new",
                    "-key",
                    &format!("{name}.key"),
                    "-subj",
                    &format!("/O=test/CN={name}"),
                    "-out",
                    &format!("{name}.csr"),
                ],
            );
            openssl(
                dir,
                &[
                    "x509",
                    "-req",
                    "-in",
                    &format!("{name}.csr"),
                    "-CA",
                    &format!("{issuer}.pem"),
                    "-CAkey",
                    &format!("{issuer}.key"),
                    "-CAcreateserial",
                    "-days",
                    "30",
                    "-extfile",
                    &ext,
                    "-out",
                    &format!("{name}.pem"),
                ],
            );
        }
    }
}

/// An openssl config whose section `v3` holds the extensions of `ext` (for `req -x509`).
fn ext_config(dir: &Path, ext: &str) -> String {
    let body = fs_err::read_to_string(dir.join(ext)).expect("read");
    let config = format!("{ext}.cnf");
    fs_err::write(
        dir.join(&config),
        format!("[req]\ndistinguished_name=dn\n[dn]\n[v3]\n{body}"),
    )
    .expect("write");
    config
}

/// A Fulcio-like leaf `name` issued by `issuer`, valid from now for a day.
fn leaf(dir: &Path, name: &str, issuer: &str, san: &str, oidc_issuer_ext: &str) {
    openssl(
        dir,
        &[
            "ecparam",
            "-genkey",
            "-name",
            "prime256v1",
            "-noout",
            "-out",
            &format!("{name}.key"),
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-new",
            "-key",
            &format!("{name}.key"),
            "-subj",
            "/O=sigstore.dev",
            "-out",
            &format!("{name}.csr"),
        ],
    );
    fs_err::write(
        dir.join(format!("{name}.ext")),
        format!(
            "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=codeSigning\nsubjectAltName=critical,{san}\n{oidc_issuer_ext}\n"
        ),
    )
    .expect("write");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            &format!("{issuer}.pem"),
            "-CAkey",
            &format!("{issuer}.key"),
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            &format!("{name}.ext"),
            "-out",
            &format!("{name}.pem"),
        ],
    );
}

/// Everything a test signs with, in `dir`: root, intermediate, leaf, another root and its
/// leaf, the Rekor key.
struct Fixtures {
    dir: PathBuf,
    log_id: String,
    now: i64,
}

impl Fixtures {
    fn new(dir: &Path) -> Self {
        ca(dir, "root", None);
        ca(dir, "intermediate", Some("root"));
        leaf(
            dir,
            "leaf",
            "intermediate",
            &format!("URI:{IDENTITY}"),
            &format!("1.3.6.1.4.1.57264.1.8=ASN1:UTF8String:{ISSUER}"),
        );
        // Only the V1 issuer extension (raw bytes) and an email name.
        let raw = ISSUER.bytes().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02X}");
            s
        });
        leaf(
            dir,
            "leaf-v1",
            "intermediate",
            "email:dev@acme.example",
            &format!("1.3.6.1.4.1.57264.1.1=DER:{raw}"),
        );
        ca(dir, "other-root", None);
        leaf(
            dir,
            "other-leaf",
            "other-root",
            &format!("URI:{IDENTITY}"),
            &format!("1.3.6.1.4.1.57264.1.8=ASN1:UTF8String:{ISSUER}"),
        );
        openssl(
            dir,
            &[
                "ecparam",
                "-genkey",
                "-name",
                "prime256v1",
                "-noout",
                "-out",
                "rekor.key",
            ],
        );
        openssl(
            dir,
            &["ec", "-pubout", "-in", "rekor.key", "-out", "rekor.pub"],
        );
        let der = Command::new("openssl")
            .current_dir(dir)
            .args(["pkey", "-pubin", "-outform", "DER", "-in", "rekor.pub"])
            .output()
            .expect("openssl");
        assert!(der.status.success());
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("time")
            .as_secs();
        Self {
            dir: dir.to_path_buf(),
            log_id: sha256_hex(&der.stdout),
            now: i64::try_from(now).expect("time"),
        }
    }

    fn read(&self, file: &str) -> String {
        fs_err::read_to_string(self.dir.join(file)).expect("read")
    }
}

/// How a test signature departs from a good one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Twist {
    None,
    /// Signed by `other-leaf` (another root).
    OtherRoot,
    /// Logged at this many seconds from now.
    At(i64),
    /// The SET signed over another integratedTime than the bundle says.
    TamperedSet,
    /// The Rekor body logs another signature of the same payload.
    OtherSignatureLogged,
    /// No bundle annotation.
    NoBundle,
    /// The V1 issuer extension and an email identity.
    V1Leaf,
    /// A good signature whose payload names another digest.
    OtherDigest,
}

/// Sign `digest` of `repo` keylessly as `twist` says and push the signature manifest.
fn push_keyless(registry: &str, repo: &str, digest: &str, f: &Fixtures, twist: Twist) {
    let dir = &f.dir;
    let other = format!("sha256:{}", "0".repeat(64));
    let named = if twist == Twist::OtherDigest {
        other.as_str()
    } else {
        digest
    };
    let payload = format!(
        "{{\"critical\":{{\"identity\":{{\"docker-reference\":\"{registry}/{repo}\"}},\"image\":{{\"docker-manifest-digest\":\"{named}\"}},\"type\":\"cosign container image signature\"}},\"optional\":null}}"
    );
    let payload = payload.as_bytes();
    let (leaf, chain) = match twist {
        Twist::OtherRoot => ("other-leaf", f.read("other-root.pem")),
        Twist::V1Leaf => ("leaf-v1", f.read("intermediate.pem") + &f.read("root.pem")),
        _ => ("leaf", f.read("intermediate.pem") + &f.read("root.pem")),
    };
    let certificate = f.read(&format!("{leaf}.pem"));
    let signature = sign(dir, &format!("{leaf}.key"), payload);
    let logged = if twist == Twist::OtherSignatureLogged {
        sign(dir, &format!("{leaf}.key"), payload)
    } else {
        signature.clone()
    };
    let body = serde_json::json!({"apiVersion": "0.0.1", "kind": "hashedrekord", "spec": {
        "data": {"hash": {"algorithm": "sha256", "value": sha256_hex(payload)}},
        "signature": {"content": b64(&logged), "publicKey": {"content": b64(certificate.as_bytes())}}}});
    let body = b64(body.to_string().as_bytes());
    let time = f.now + if let Twist::At(s) = twist { s } else { 0 };
    let canonical = |t: i64| {
        format!(
            "{{\"body\":\"{body}\",\"integratedTime\":{t},\"logID\":\"{}\",\"logIndex\":42}}",
            f.log_id
        )
    };
    let set = sign(dir, "rekor.key", canonical(time).as_bytes());
    let shown_time = if twist == Twist::TamperedSet {
        time + 1
    } else {
        time
    };
    let bundle = serde_json::json!({"SignedEntryTimestamp": b64(&set), "Payload": {
        "body": body, "integratedTime": shown_time, "logIndex": 42, "logID": f.log_id}});
    let mut annotations = serde_json::json!({
        "dev.cosignproject.cosign/signature": b64(&signature),
        "dev.sigstore.cosign/certificate": certificate,
        "dev.sigstore.cosign/chain": chain,
        "dev.sigstore.cosign/bundle": bundle.to_string(),
    });
    if twist == Twist::NoBundle {
        annotations
            .as_object_mut()
            .expect("object")
            .remove("dev.sigstore.cosign/bundle");
    }
    let work = tempfile::tempdir().expect("tempdir");
    let layer = work.path().join("payload.json");
    fs_err::write(&layer, payload).expect("write");
    let config = work.path().join("config.json");
    fs_err::write(&config, b"{}").expect("write");
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": format!("sha256:{}", sha256_hex(b"{}")), "size": 2},
        "layers": [{"mediaType": SIMPLE_SIGNING,
            "digest": format!("sha256:{}", sha256_hex(payload)), "size": payload.len(),
            "annotations": annotations}],
    });
    let manifest_path = work.path().join("manifest.json");
    fs_err::write(&manifest_path, manifest.to_string()).expect("write");
    let tag = format!("{}.sig", digest.replacen(':', "-", 1));
    succeed(
        Command::new("python3")
            .args(["-c", PUSH, registry, repo, &tag])
            .arg(&manifest_path)
            .arg(&config)
            .arg(&layer),
    );
}

/// `catalog verify` of `reference` with the keyless flags (`identity` exact, or `~regexp`).
fn verify_args<'a>(
    reference: &'a str,
    identity: &'a str,
    issuer: &'a str,
    root: &'a str,
) -> Vec<&'a str> {
    let mut args = vec!["catalog", "verify", reference];
    match identity.strip_prefix('~') {
        Some(re) => args.extend(["--certificate-identity-regexp", re]),
        None => args.extend(["--certificate-identity", identity]),
    }
    args.extend([
        "--certificate-oidc-issuer",
        issuer,
        "--trust-root",
        root,
        "--rekor-public-key",
        "rekor.pub",
    ]);
    args
}

#[test]
fn issue24_keyless_signatures_are_verified_offline_against_the_given_trust_root() {
    let test = test_name!();
    for tool in ["docker-registry", "skopeo", "openssl", "python3"] {
        if !have(tool, test) {
            return;
        }
    }
    let registry = Registry::start();
    let addr = registry.addr.as_str();
    let ctx = TestContext::new();
    let f = Fixtures::new(ctx.path());
    // One catalog per case: a signature tag belongs to a digest.
    let signed = |case: &str, twist: Twist| {
        let repo = format!("catalogs/{case}");
        let digest = push(
            addr,
            &format!("{repo}:v1"),
            format!("{CATALOG}# {case}\n").as_bytes(),
            "catalog.yaml",
        );
        push_keyless(addr, &repo, &digest, &f, twist);
        (format!("oci://{addr}/{repo}:v1"), digest)
    };
    let policy = format!("identity {IDENTITY} (issuer {ISSUER}, trust root root.pem)");
    let rejected = |reference: &str, digest: &str, policy: &str, reason: &str| {
        format!(
            "{reference}: the keyless cosign signature of {digest} in {}.sig does not satisfy the keyless {policy}: {reason}",
            digest.replacen(':', "-", 1)
        )
    };

    // Good: verify and view name the signer; a regexp identity matches too.
    let (good, digest) = signed("good", Twist::None);
    let out = ctx.run(&verify_args(&good, IDENTITY, ISSUER, "root.pem"), "");
    assert!(out.status.success(), "{}", stderr(&out));
    let shown = format!("keyless {IDENTITY} (issuer {ISSUER}, Rekor log index 42)");
    assert!(
        stdout(&out).starts_with(&format!("{digest} signed: {shown}\n")),
        "{}",
        stdout(&out)
    );
    let out = ctx.run(
        &verify_args(&good, "~^https://github\\.com/acme/", ISSUER, "root.pem"),
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let mut view = verify_args(&good, IDENTITY, ISSUER, "root.pem");
    view[1] = "view";
    let out = ctx.run(&view, "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("\nSigned:    {shown}\n")),
        "{}",
        stdout(&out)
    );
    view.extend(["-o", "json"]);
    let out = ctx.run(&view, "");
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(json["signed"][0], shown);

    // The V1 issuer extension and an email identity.
    let (v1, _) = signed("v1", Twist::V1Leaf);
    let out = ctx.run(
        &verify_args(&v1, "dev@acme.example", ISSUER, "root.pem"),
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));

    // Wrong identity, wrong issuer: the same signature, another policy.
    let out = ctx.run(
        &verify_args(&good, "https://github.com/evil/x", ISSUER, "root.pem"),
        "",
    );
    assert_fails_with(
        &out,
        &rejected(
            &good,
            &digest,
            &format!("identity https://github.com/evil/x (issuer {ISSUER}, trust root root.pem)"),
            &format!("its certificate is for [{IDENTITY}], not https://github.com/evil/x"),
        ),
    );
    let out = ctx.run(
        &verify_args(&good, IDENTITY, "https://accounts.google.com", "root.pem"),
        "",
    );
    assert_fails_with(
        &out,
        &format!("its certificate's OIDC issuer is {ISSUER}, not https://accounts.google.com"),
    );
    // A regexp is matched as cosign matches it: anchor it.
    let out = ctx.run(
        &verify_args(&good, "~^https://github\\.com/acme$", ISSUER, "root.pem"),
        "",
    );
    assert_fails_with(
        &out,
        &format!("its certificate is for [{IDENTITY}], not ~^https://github\\.com/acme$"),
    );

    // A leaf of another root; the good signature against another trust root.
    let (other, other_digest) = signed("other-root", Twist::OtherRoot);
    let out = ctx.run(&verify_args(&other, IDENTITY, ISSUER, "root.pem"), "");
    assert_fails_with(
        &out,
        &rejected(
            &other,
            &other_digest,
            &policy,
            "its certificate does not chain to a root of the trust root root.pem",
        ),
    );
    let out = ctx.run(&verify_args(&good, IDENTITY, ISSUER, "other-root.pem"), "");
    assert_fails_with(
        &out,
        "its certificate does not chain to a root of the trust root other-root.pem",
    );

    // Logged after the leaf expired, or before it was issued.
    let (late, _) = signed("late", Twist::At(3 * 86_400));
    let out = ctx.run(&verify_args(&late, IDENTITY, ISSUER, "root.pem"), "");
    assert_fails_with(
        &out,
        "its certificate (or a CA above it) had expired at the Rekor integratedTime",
    );
    let (early, _) = signed("early", Twist::At(-2 * 86_400));
    let out = ctx.run(&verify_args(&early, IDENTITY, ISSUER, "root.pem"), "");
    assert_fails_with(
        &out,
        "its certificate (or a CA above it) was not yet valid at the Rekor integratedTime",
    );

    // A bundle whose integratedTime was changed after the log signed it.
    let (tampered, _) = signed("tampered", Twist::TamperedSet);
    let out = ctx.run(&verify_args(&tampered, IDENTITY, ISSUER, "root.pem"), "");
    assert_fails_with(
        &out,
        "its Rekor bundle's SignedEntryTimestamp does not verify with the given Rekor key",
    );
    // The log entry is of another signature.
    let (swapped, _) = signed("swapped", Twist::OtherSignatureLogged);
    let out = ctx.run(&verify_args(&swapped, IDENTITY, ISSUER, "root.pem"), "");
    assert_fails_with(&out, "its Rekor entry logs another signature");
    // A good signature of another digest.
    let (replayed, replayed_digest) = signed("replayed", Twist::OtherDigest);
    let out = ctx.run(&verify_args(&replayed, IDENTITY, ISSUER, "root.pem"), "");
    assert_fails_with(
        &out,
        &format!("it signs sha256:{}, not {replayed_digest}", "0".repeat(64)),
    );
    // No bundle: nothing says when it was signed.
    let (bare, _) = signed("no-bundle", Twist::NoBundle);
    let out = ctx.run(&verify_args(&bare, IDENTITY, ISSUER, "root.pem"), "");
    assert_fails_with(&out, "it has no Rekor bundle (dev.sigstore.cosign/bundle)");
    // Another log's key.
    openssl(
        ctx.path(),
        &[
            "ecparam",
            "-genkey",
            "-name",
            "prime256v1",
            "-noout",
            "-out",
            "log2.key",
        ],
    );
    openssl(
        ctx.path(),
        &["ec", "-pubout", "-in", "log2.key", "-out", "log2.pub"],
    );
    let mut args = verify_args(&good, IDENTITY, ISSUER, "root.pem");
    *args.last_mut().expect("arg") = "log2.pub";
    let out = ctx.run(&args, "");
    assert_fails_with(
        &out,
        &format!(
            "its Rekor bundle is from the log {}, not the log of the given Rekor key",
            f.log_id
        ),
    );
    // An incomplete policy is a usage error.
    let out = ctx.run(
        &[
            "catalog",
            "verify",
            &good,
            "--certificate-identity",
            IDENTITY,
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("a keyless signature needs all of"),
        "{}",
        stderr(&out)
    );

    // A run: a trust entry's keyless policy admits the good catalog and refuses the rest.
    let entry = |identity: &str| {
        format!(
            "{{source: \"{addr}/catalogs/*\", keyless: {{identity: \"{identity}\", issuer: \"{ISSUER}\", trustRoot: root.pem, rekorPublicKey: rekor.pub}}}}"
        )
    };
    let input = |reference: &str, trust: &str| {
        resource_list(
            &format!("{{oci: \"{}\"}}", reference.trim_start_matches("oci://")),
            &[],
            "",
        )
        .replace(
            "trustedCatalogs: []",
            &format!("trustedCatalogs: [{trust}]"),
        )
    };
    let out = ctx.run(&[], &input(&good, &entry(IDENTITY)));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("greeting: hello"), "{}", stdout(&out));
    // Offline: the cached signature is checked again with the same policy.
    let offline = input(&good, &entry(IDENTITY)).replace(ONLINE, OFFLINE);
    let out = ctx.run(&[], &offline);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = ctx.run(
        &[],
        &input(&good, &entry("someone@else")).replace(ONLINE, OFFLINE),
    );
    assert_fails_with(&out, "not someone@else");
    let out = ctx.run(&[], &input(&good, &entry("someone@else")));
    assert_fails_with(
        &out,
        &format!("its certificate is for [{IDENTITY}], not someone@else"),
    );
    let out = ctx.run(&[], &input(&tampered, &entry(IDENTITY)));
    assert_fails_with(&out, "SignedEntryTimestamp does not verify");
    // A catalog with no signature at all.
    let unsigned = push(
        addr,
        "catalogs/unsigned:v1",
        CATALOG.as_bytes(),
        "catalog.yaml",
    );
    let out = ctx.run(
        &[],
        &input(
            &format!("oci://{addr}/catalogs/unsigned:v1"),
            &entry(IDENTITY),
        ),
    );
    assert_fails_with(
        &out,
        &format!(
            "no cosign signature of {unsigned}: the registry has no tag {}.sig; the keyless {policy} requires one (sign it with `cosign sign`)",
            unsigned.replacen(':', "-", 1)
        ),
    );
    // A missing trust root file is an error at the entry.
    let out = ctx.run(
        &[],
        &input(&good, &entry(IDENTITY).replace("root.pem", "missing.pem")),
    );
    assert_fails_with(&out, "keyless: ");
    assert_fails_with(&out, "missing.pem");
}

/// A KEP catalog with one container kind `fn.acme.dev/v1 <kind>` pinned to `digest` whose
/// runtime requires a keyless signature by `identity` under the fixtures' root and Rekor key.
fn keyless_image_catalog(
    kind: &str,
    image: &str,
    digest: &str,
    identity: &str,
    f: &Fixtures,
) -> String {
    let indent = |pem: String| {
        pem.lines().fold(String::new(), |mut out, line| {
            out.push_str("              ");
            out.push_str(line);
            out.push('\n');
            out
        })
    };
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
          keyless:
            identity: \"{identity}\"
            issuer: {ISSUER}
            trustRoot: |
{}            rekorPublicKey: |
{}",
        digest.trim_start_matches("sha256:"),
        indent(f.read("root.pem")),
        indent(f.read("rekor.pub")),
    )])
}

#[test]
fn issue24_keyless_container_runtimes_must_carry_the_named_signers_signature() {
    let test = test_name!();
    for tool in ["docker-registry", "skopeo", "openssl", "python3"] {
        if !have(tool, test) {
            return;
        }
    }
    let registry = Registry::start();
    let addr = registry.addr.as_str();
    let pkg = TestContext::new();
    let f = Fixtures::new(pkg.path());
    // Any manifest will do as the image: only its digest and signature are looked at.
    let image = push(addr, "fn/kl:v1", b"image one", "catalog.yaml");
    push_keyless(addr, "fn/kl", &image, &f, Twist::None);
    let catalog = [
        keyless_image_catalog("Good", &format!("{addr}/fn/kl:v1"), &image, IDENTITY, &f),
        keyless_image_catalog(
            "Other",
            &format!("{addr}/fn/kl:v1"),
            &image,
            "someone@else",
            &f,
        )
        .split_once("  krmFunctions:\n")
        .map(|(_, kinds)| kinds.to_owned())
        .unwrap_or_default(),
    ]
    .concat();
    pkg.write("catalog.yaml", &catalog);
    let out = pkg.run(&[], &crate::runtimes::input("Good", "{mode: pin}"));
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains(&format!("image: {addr}/fn/kl@{image}")),
        "{}",
        stdout(&out)
    );
    let out = pkg.run(&[], &crate::runtimes::input("Other", "{mode: pin}"));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(&format!(
            "its certificate is for [{IDENTITY}], not someone@else"
        )),
        "{}",
        stdout(&out)
    );
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert!(
        stdout(&out).contains(&format!(
            "container {addr}/fn/kl@{image}, signed: keyless {IDENTITY} (issuer {ISSUER}, Rekor log index 42)"
        )),
        "{}",
        stdout(&out)
    );
    let out = pkg.run(&["catalog", "view", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("keyless {IDENTITY} (issuer {ISSUER})")),
        "{}",
        stdout(&out)
    );
}

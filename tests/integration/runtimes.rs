//! Function runtimes (SPEC §7, issue #4) for real: exec binaries served over local HTTPS and
//! `file://` (plain, `.tar.gz`, `.zip`; right and wrong sha256; binaries that fail, hang or
//! write garbage), images pushed with `skopeo` to Debian's `docker-registry` and checked by
//! `catalog lock`/`catalog verify` (right and wrong digests, moved tags, index vs manifest), a
//! `FROM scratch` function image run through Docker in run mode and pinned for `kubectl
//! kustomize` and `kpt`, and eight processes sharing one cold cache. Each test prints
//! `SKIPPED …` when a tool it needs is missing.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use krm_catalog::remote::archive;
use krm_catalog::verify::sha256_hex;

use crate::remote::{OFFLINE, ONLINE};
use crate::servers::{Registry, Server, Tls, tls};
use crate::util::{TestContext, have, root, skipped, stderr, stdout, succeed, test_name};

/// An echo function that changes one value and reports one result, so a test sees that its
/// output replaced the items and that its results were merged.
pub(crate) const ECHO: &[u8] = b"#!/bin/sh\n\
/bin/sed 's/greeting: hello$/greeting: hello-from-exec/'\n\
printf 'results:\\n- message: hello from the function\\n  severity: info\\n'\n";

const FAILS: &[u8] = b"#!/bin/sh\n/usr/bin/env >&2\necho boom >&2\nexit 3\n";
const HANGS: &[u8] = b"#!/bin/sh\nexec /bin/sleep 30\n";
const GARBAGE: &[u8] = b"#!/bin/sh\n/bin/cat >/dev/null\necho 'this is: [not a resource list'\n";

/// A KEP catalog with one exec kind `fn.acme.dev/v1 Echo`.
pub(crate) fn exec_catalog(uri: &str, bin: &str, sha256: Option<&str>) -> String {
    let (os, arch) = krm_catalog::functions::exec::this_platform();
    let pin = sha256.map_or(String::new(), |s| format!("\n            sha256: {s}"));
    format!(
        "apiVersion: config.kubernetes.io/v1alpha1
kind: KRMFunctionCatalog
metadata:
  name: acme-functions
spec:
  krmFunctions:
  - group: fn.acme.dev
    names:
      kind: Echo
    versions:
    - name: v1
      runtime:
        exec:
          platforms:
          # the machine the tests run on
          - bin: {bin}
            os: {os}
            arch: {arch}
            uri: {uri}{pin}
"
    )
}

/// A ResourceList with a ConfigMap and one item of `kind`, resolved through `catalog.yaml`.
pub(crate) fn input(kind: &str, functions: &str) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: demo
    annotations:
      internal.config.kubernetes.io/path: demo.yaml
  data:
    greeting: hello
- apiVersion: fn.acme.dev/v1
  kind: {kind}
  metadata:
    name: step
    annotations:
      internal.config.kubernetes.io/path: fn.yaml
  spec:
    labels:
      team: platform
functionConfig:
  apiVersion: krm-catalog.dev/v1alpha1
  kind: ResolveCatalog
  metadata:
    name: fns
  spec:
    builtin: false
    catalogs:
    - path: catalog.yaml
    functions: {functions}
"
    )
}

pub(crate) const RUN_EXEC: &str = "{mode: run, allowExec: true}";

fn https(case: &str) -> Option<(Tls, Server)> {
    if !have("python3", case) || !have("openssl", case) {
        return None;
    }
    let tls = tls();
    let server = Server::start(Some(&tls), None);
    Some((tls, server))
}

fn zip_of(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut w = zip::ZipWriter::new(&mut buf);
        w.start_file(
            name,
            zip::write::SimpleFileOptions::default().unix_permissions(0o755),
        )
        .expect("zip");
        w.write_all(bytes).expect("zip");
        w.finish().expect("zip");
    }
    buf.into_inner()
}

fn assert_ran(out: &Output) {
    let text = stdout(out);
    assert!(
        out.status.success(),
        "exit {:?}\n{}\n{text}",
        out.status.code(),
        stderr(out)
    );
    assert!(text.contains("greeting: hello-from-exec"), "{text}");
    assert!(text.contains("message: hello from the function"), "{text}");
    assert!(text.contains("runtime: exec "), "{text}");
    // The step's own config stays as a source, marked local-config.
    assert!(
        text.contains("kind: Echo") && text.contains("config.kubernetes.io/local-config"),
        "{text}"
    );
}

#[test]
fn exec_runtimes_from_file_and_https_plain_and_archived() {
    let case = test_name!();
    // file://, relative to the working directory, a plain binary.
    let pkg = TestContext::new();
    pkg.write("echo-fn", ECHO);
    pkg.write(
        "catalog.yaml",
        exec_catalog("file://echo-fn", "echo-fn", Some(&sha256_hex(ECHO))).as_bytes(),
    );
    assert_ran(&pkg.run(&[], &input("Echo", RUN_EXEC)));

    let Some((tls, server)) = https(case) else {
        return;
    };
    let tgz = archive::pack(&[("dist/echo-fn", ECHO), ("README.md", b"docs")]);
    server.put("echo.tar.gz", &tgz);
    let zip = zip_of("bin/echo-fn", ECHO);
    server.put("echo.zip", &zip);
    for (file, bytes) in [("echo.tar.gz", &tgz), ("echo.zip", &zip)] {
        let pkg = TestContext::new().with_ca(&tls.ca);
        pkg.write(
            "catalog.yaml",
            exec_catalog(&server.url(file), "echo-fn", Some(&sha256_hex(bytes))).as_bytes(),
        );
        let before = server.requests();
        assert_ran(&pkg.run(&[], &input("Echo", RUN_EXEC)));
        assert_eq!(server.requests(), before + 1, "{file}: one download");
        // Warm cache: offline, and no request at all.
        let offline = input("Echo", RUN_EXEC).replace(ONLINE, OFFLINE);
        assert_ran(&pkg.run(&[], &offline));
        assert_eq!(
            server.requests(),
            before + 1,
            "{file}: the warm run made a request"
        );
        // The cached download re-hashes to its name; the binary is executable.
        let blobs = pkg.cache().join("blobs/sha256");
        assert!(blobs.join(sha256_hex(bytes)).is_file());
        let installed = pkg.cache().join("bin").join(sha256_hex(ECHO));
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &fs_err::metadata(&installed)
                .expect("installed binary")
                .permissions(),
        );
        assert_eq!(mode & 0o111, 0o111, "{}", installed.display());
    }
}

/// Run `kind` through a catalog with one exec runtime serving `binary`; return the output.
fn run_exec_binary(
    binary: &[u8],
    sha256: Option<&str>,
    functions: &str,
    extra: &[(&str, &str)],
) -> Output {
    let pkg = TestContext::new();
    pkg.write("fn", binary);
    let declared = sha256.map_or_else(|| sha256_hex(binary), str::to_owned);
    let pin = if sha256 == Some("") {
        None
    } else {
        Some(declared.as_str())
    };
    pkg.write(
        "catalog.yaml",
        exec_catalog("file://fn", "fn", pin).as_bytes(),
    );
    pkg.run_with(&[], &input("Echo", functions), extra)
}

/// The run failed with one error result containing `needle`, and lost no item.
fn assert_error(out: &Output, needle: &str) {
    let text = stdout(out);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", stderr(out));
    assert!(text.contains(needle), "no {needle:?} in\n{text}");
    assert!(
        stderr(out).contains(needle),
        "stderr lacks {needle:?}:\n{}",
        stderr(out)
    );
    // Nothing lost or half-changed: the ConfigMap is as it came.
    assert!(text.contains("greeting: hello\n"), "{text}");
    assert!(text.contains("kind: Echo"), "{text}");
}

#[test]
fn exec_runtime_errors_are_results_and_lose_nothing() {
    let wrong = "bad0".repeat(16);
    assert_error(
        &run_exec_binary(ECHO, Some(&wrong), RUN_EXEC, &[]),
        &format!(
            "sha256 mismatch: expected {wrong}, downloaded {}",
            sha256_hex(ECHO)
        ),
    );
    assert_error(
        &run_exec_binary(ECHO, Some(""), RUN_EXEC, &[]),
        "file://fn has no sha256; KEP-2906 requires one for exec runtimes",
    );
    assert_error(
        &run_exec_binary(ECHO, None, "{mode: run}", &[]),
        "this kind runs an exec binary; set functions.allowExec: true to allow it",
    );
    assert_error(
        &run_exec_binary(ECHO, None, "{mode: pin, allowExec: true}", &[]),
        "exec runtimes cannot be pinned portably",
    );
    // A failing binary: its exit code and stderr, and it saw a minimal environment only.
    let out = run_exec_binary(FAILS, None, RUN_EXEC, &[("KRM_TEST_SECRET", "leaked")]);
    assert_error(&out, "failed with exit code 3");
    assert!(stdout(&out).contains("boom"), "{}", stdout(&out));
    assert!(
        !stdout(&out).contains("leaked"),
        "the environment leaked:\n{}",
        stdout(&out)
    );
    assert!(
        !stdout(&out).contains("HOME="),
        "the environment leaked:\n{}",
        stdout(&out)
    );
    let started = std::time::Instant::now();
    assert_error(
        &run_exec_binary(
            HANGS,
            None,
            RUN_EXEC,
            &[("KRM_CATALOG_FUNCTION_TIMEOUT", "1")],
        ),
        "timed out after 1s (KRM_CATALOG_FUNCTION_TIMEOUT)",
    );
    assert!(
        started.elapsed().as_secs() < 20,
        "the timeout did not stop the binary"
    );
    assert_error(
        &run_exec_binary(GARBAGE, None, RUN_EXEC, &[]),
        "wrote something that is not a ResourceList",
    );
}

#[test]
fn catalog_lock_and_verify_exec_downloads() {
    let case = test_name!();
    let Some((tls, server)) = https(case) else {
        return;
    };
    server.put("echo-fn", ECHO);
    let pkg = TestContext::new().with_ca(&tls.ca);
    let catalog = exec_catalog(&server.url("echo-fn"), "echo-fn", None);
    pkg.write("catalog.yaml", catalog.as_bytes());

    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("UNPINNED"), "{}", stdout(&out));

    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let hex = sha256_hex(ECHO);
    assert!(
        stdout(&out).contains(&format!("→ sha256:{hex}")),
        "{}",
        stdout(&out)
    );
    let locked = fs_err::read_to_string(pkg.path().join("catalog.yaml")).expect("read");
    let expected = catalog.replace(
        &format!("uri: {}\n", server.url("echo-fn")),
        &format!(
            "uri: {}\n            sha256: {hex}\n",
            server.url("echo-fn")
        ),
    );
    assert_eq!(
        locked, expected,
        "lock must only add the digest (comments stay)"
    );
    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert!(stdout(&out).contains("already pinned"), "{}", stdout(&out));

    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).starts_with("ok "), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("1 runtimes checked, 0 not ok"),
        "{}",
        stdout(&out)
    );

    // The binary changed on the server: verify fails and says so.
    server.put("echo-fn", FAILS);
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains("MISMATCH")
            && text.contains(&format!(
                "expected sha256:{hex}, downloaded sha256:{}",
                sha256_hex(FAILS)
            )),
        "{text}"
    );
}

// --- images --------------------------------------------------------------------------------

/// A blob in an OCI layout; returns `sha256:<hex>` and its size.
fn blob(layout: &Path, bytes: &[u8]) -> (String, usize) {
    let hex = sha256_hex(bytes);
    let dir = layout.join("blobs/sha256");
    fs_err::create_dir_all(&dir).expect("mkdir");
    fs_err::write(dir.join(&hex), bytes).expect("symlink");
    (format!("sha256:{hex}"), bytes.len())
}

/// Build an image (one layer holding `content`) as an OCI layout, optionally wrapped in an
/// image index; returns the layout, the manifest digest and the index digest.
fn image_layout(content: &[u8], index: bool) -> (tempfile::TempDir, String, Option<String>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let layout = dir.path();
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(content.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(&mut header, "content.txt", content)
        .expect("tar");
    let tar = tar.into_inner().expect("tar");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).expect("gzip");
    let layer = gz.finish().expect("gzip");
    let (layer_digest, layer_size) = blob(layout, &layer);
    let config = format!(
        r#"{{"architecture":"amd64","os":"linux","config":{{}},"rootfs":{{"type":"layers","diff_ids":["sha256:{}"]}}}}"#,
        sha256_hex(&tar)
    );
    let (config_digest, config_size) = blob(layout, config.as_bytes());
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"{config_digest}","size":{config_size}}},"layers":[{{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"{layer_digest}","size":{layer_size}}}]}}"#
    );
    let (manifest_digest, manifest_size) = blob(layout, manifest.as_bytes());
    let (top_type, top_digest, top_size, index_digest) = if index {
        let list = format!(
            r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{manifest_digest}","size":{manifest_size},"platform":{{"architecture":"amd64","os":"linux"}}}}]}}"#
        );
        let (d, s) = blob(layout, list.as_bytes());
        (
            "application/vnd.oci.image.index.v1+json",
            d.clone(),
            s,
            Some(d),
        )
    } else {
        (
            "application/vnd.oci.image.manifest.v1+json",
            manifest_digest.clone(),
            manifest_size,
            None,
        )
    };
    fs_err::write(
        layout.join("index.json"),
        format!(
            r#"{{"schemaVersion":2,"manifests":[{{"mediaType":"{top_type}","digest":"{top_digest}","size":{top_size},"annotations":{{"org.opencontainers.image.ref.name":"latest"}}}}]}}"#
        ),
    )
    .expect("index.json");
    fs_err::write(
        layout.join("oci-layout"),
        r#"{"imageLayoutVersion":"1.0.0"}"#,
    )
    .expect("oci-layout");
    (dir, manifest_digest, index_digest)
}

/// Push the OCI layout's `latest` (every manifest of an index, digests kept) to `target`.
pub(crate) fn push_image(layout: &Path, target: &str) {
    succeed(
        Command::new("skopeo")
            .args([
                "copy",
                "--quiet",
                "--all",
                "--preserve-digests",
                "--dest-tls-verify=false",
            ])
            .arg(format!("oci:{}:latest", layout.display()))
            .arg(format!("docker://{target}")),
    );
}

pub(crate) fn image_kind(kind: &str, image: &str, sha256: Option<&str>) -> String {
    let pin = sha256.map_or(String::new(), |s| {
        format!("\n          sha256: {}", s.trim_start_matches("sha256:"))
    });
    format!(
        "  - group: fn.acme.dev
    names:
      kind: {kind}
    versions:
    - name: v1
      runtime:
        container:
          image: {image}{pin}
"
    )
}

pub(crate) fn image_catalog(kinds: &[String]) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1alpha1
kind: KRMFunctionCatalog
metadata:
  name: acme-images
spec:
  krmFunctions:
{}",
        kinds.concat()
    )
}

fn registry(case: &str) -> Option<Registry> {
    (have("docker-registry", case) && have("skopeo", case)).then(Registry::start)
}

#[test]
fn images_are_verified_against_the_registry() {
    let Some(reg) = registry(test_name!()) else {
        return;
    };
    let r = &reg.addr;
    let (v1, v1_digest, _) = image_layout(b"one", false);
    push_image(v1.path(), &format!("{r}/fn/noop:v1"));
    let (multi, platform_digest, index_digest) = image_layout(b"multi", true);
    let index_digest = index_digest.expect("index");
    push_image(multi.path(), &format!("{r}/fn/multi:v1"));
    let wrong = format!("sha256:{}", "bad0".repeat(16));

    let pkg = TestContext::new();
    let check = |kinds: &[String]| {
        pkg.write("catalog.yaml", image_catalog(kinds).as_bytes());
        let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
        (out.status.code(), stdout(&out), stderr(&out))
    };
    // Right digests: by tag + sha256, digest in the reference, and an index by its own digest.
    let (code, text, err) = check(&[
        image_kind("Tagged", &format!("{r}/fn/noop:v1"), Some(&v1_digest)),
        image_kind("Digest", &format!("{r}/fn/noop@{v1_digest}"), None),
        image_kind(
            "Both",
            &format!("{r}/fn/noop:v1@{v1_digest}"),
            Some(&v1_digest),
        ),
        image_kind("Index", &format!("{r}/fn/multi:v1"), Some(&index_digest)),
    ]);
    assert_eq!(code, Some(0), "{text}{err}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("ok ")).count(),
        4,
        "{text}"
    );
    assert!(text.contains("4 runtimes checked, 0 not ok"), "{text}");

    // Wrong digest, the platform manifest where the tag names the index, a digest the
    // registry does not have, an unpinned tag: one line each, exit 1.
    let (code, text, _) = check(&[
        image_kind("Wrong", &format!("{r}/fn/noop:v1"), Some(&wrong)),
        image_kind(
            "Platform",
            &format!("{r}/fn/multi:v1"),
            Some(&platform_digest),
        ),
        image_kind("Missing", &format!("{r}/fn/noop@{wrong}"), None),
        image_kind("Unpinned", &format!("{r}/fn/noop:v1"), None),
    ]);
    assert_eq!(code, Some(1), "{text}");
    let line = |kind: &str| {
        text.lines()
            .find(|l| l.contains(&format!("/{kind}")))
            .unwrap_or_else(|| panic!("no line for {kind} in\n{text}"))
            .to_owned()
    };
    assert!(
        line("Wrong").starts_with("MISMATCH")
            && line("Wrong").contains(&format!("the registry has {v1_digest}")),
        "{text}"
    );
    assert!(
        line("Platform").starts_with("MISMATCH")
            && line("Platform").contains(&format!("the registry has {index_digest}")),
        "{text}"
    );
    assert!(line("Missing").starts_with("ERROR"), "{text}");
    assert!(line("Unpinned").starts_with("UNPINNED"), "{text}");
    assert!(text.contains("4 runtimes checked, 4 not ok"), "{text}");

    // lock fills in digests from the registry (the index digest for a multi-arch tag)…
    pkg.write(
        "catalog.yaml",
        format!(
            "# team functions\n{}",
            image_catalog(&[
                image_kind("Tagged", &format!("{r}/fn/noop:v1"), None),
                image_kind("Index", &format!("{r}/fn/multi:v1"), None),
            ])
        )
        .as_bytes(),
    );
    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let locked = fs_err::read_to_string(pkg.path().join("catalog.yaml")).expect("read");
    assert!(locked.starts_with("# team functions\n"), "{locked}");
    assert_eq!(
        locked,
        format!(
            "# team functions\n{}",
            image_catalog(&[
                image_kind("Tagged", &format!("{r}/fn/noop:v1"), Some(&v1_digest)),
                image_kind("Index", &format!("{r}/fn/multi:v1"), Some(&index_digest)),
            ])
        )
    );
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stdout(&out));

    // …and when the tag moves, verify fails (the CI gate) and so does a function-mode run
    // that checks tags, while pinning alone needs no registry.
    let (v2, v2_digest, _) = image_layout(b"two", false);
    push_image(v2.path(), &format!("{r}/fn/noop:v1"));
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(&format!(
            "tag {r}/fn/noop:v1 moved: the registry has {v2_digest}, the catalog pins {v1_digest}"
        )),
        "{}",
        stdout(&out)
    );
    let out = pkg.run(
        &[],
        &input(
            "Tagged",
            "{mode: pin, verifyTags: true, allowNetwork: true}",
        ),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("moved"), "{}", stdout(&out));
    let out = pkg.run(&[], &input("Tagged", "{mode: pin}"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("image: {r}/fn/noop@{v1_digest}")),
        "{}",
        stdout(&out)
    );
}

/// issue 8, point 6: `functions.verifyTags` is the function's own registry access. Before, it
/// was skipped without a word unless `allowNetwork` was also set (a moved tag was pinned with
/// exit 0), and an unreachable registry under `allowNetwork` gave a bare connection error.
#[test]
fn issue8_f6_verify_tags_needs_no_allow_network_and_never_skips() {
    let case = test_name!();
    let pkg = TestContext::new();
    // No registry listens on port 1 of loopback: the check fails and says what to do instead.
    pkg.write(
        "catalog.yaml",
        image_catalog(&[image_kind(
            "Tagged",
            "127.0.0.1:1/fn/noop:v1",
            Some(&"ab".repeat(32)),
        )])
        .as_bytes(),
    );
    let out = pkg.run_with(
        &[],
        &input("Tagged", "{mode: pin, verifyTags: true}"),
        &[("KRM_CATALOG_HTTP_RETRIES", "0")],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stderr(&out);
    assert!(
        text.contains("functions.verifyTags: 127.0.0.1:1/fn/noop:v1: cannot connect")
            && text.contains(
                "run `krm-catalog catalog verify CATALOG` where the registry is reachable"
            ),
        "{text}"
    );

    let Some(reg) = registry(case) else {
        return;
    };
    let r = &reg.addr;
    let (v1, v1_digest, _) = image_layout(b"one", false);
    push_image(v1.path(), &format!("{r}/fn/noop:v1"));
    pkg.write(
        "catalog.yaml",
        image_catalog(&[image_kind(
            "Tagged",
            &format!("{r}/fn/noop:v1"),
            Some(&v1_digest),
        )])
        .as_bytes(),
    );
    let out = pkg.run(&[], &input("Tagged", "{mode: pin, verifyTags: true}"));
    assert!(out.status.success(), "{}", stderr(&out));
    // The tag moves: without allowNetwork the run still checks, and fails.
    let (v2, v2_digest, _) = image_layout(b"two", false);
    push_image(v2.path(), &format!("{r}/fn/noop:v1"));
    let out = pkg.run(&[], &input("Tagged", "{mode: pin, verifyTags: true}"));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(&format!(
            "tag {r}/fn/noop:v1 moved: the registry has {v2_digest}, the catalog pins {v1_digest}"
        )),
        "{}",
        stderr(&out)
    );
}

// --- a real function image through Docker ----------------------------------------------------

/// The static `set_labels` example as a `FROM scratch` image pushed to the registry; returns
/// the tag, or None (with a visible skip) when Docker or the static build is missing.
fn function_image(case: &str, reg: &Registry) -> Option<String> {
    let docker = Command::new("docker")
        .arg("info")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !docker {
        skipped(case, "no Docker engine runs on this machine");
        return None;
    }
    let static_bin = root().join("dist/set_labels");
    if !static_bin.is_file() {
        skipped(
            case,
            "dist/set_labels is missing (.ci/image builds it; scripts/test runs .ci/image)",
        );
        return None;
    }
    let tag = format!("{}/fn/set-labels:v1", reg.addr);
    succeed(
        Command::new(root().join("scripts/function-image"))
            .arg(&static_bin)
            .arg(&tag),
    );
    Some(tag)
}

/// A registry, the function image pushed to it, and an empty package; None when skipped.
fn docker_setup(case: &str) -> Option<(Registry, String, TestContext)> {
    let reg = registry(case)?;
    let tag = function_image(case, &reg)?;
    Some((reg, tag, TestContext::new()))
}

/// A `docker` on PATH that logs its arguments and runs the real one.
fn logging_docker(dir: &Path) -> (String, PathBuf) {
    let real = Command::new("sh")
        .args(["-c", "command -v docker"])
        .output()
        .expect("sh");
    let real = String::from_utf8_lossy(&real.stdout).trim().to_owned();
    let log = dir.join("docker.log");
    let wrapper = dir.join("docker");
    fs_err::write(
        &wrapper,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{real}' \"$@\"\n",
            log.display()
        ),
    )
    .expect("wrapper");
    Command::new("chmod")
        .args(["+x"])
        .arg(&wrapper)
        .status()
        .expect("chmod");
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (path, log)
}

#[test]
fn container_runtimes_run_through_docker_and_pin_for_kustomize_and_kpt() {
    let case = test_name!();
    let Some((reg, tag, pkg)) = docker_setup(case) else {
        return;
    };
    pkg.write(
        "catalog.yaml",
        image_catalog(&[image_kind("SetLabels", &tag, None)]).as_bytes(),
    );
    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stdout(&out));

    // Run mode: through the engine, network off, as nobody, no new privileges.
    let (path, log) = logging_docker(&pkg.mkdir("tools"));
    let out = pkg.run_with(&[], &input("SetLabels", "{mode: run}"), &[("PATH", &path)]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("team: platform"),
        "labels not applied:\n{text}"
    );
    assert!(text.contains("message: set 1 labels on 1 items"), "{text}");
    assert!(text.contains("runtime: container "), "{text}");
    let argv = fs_err::read_to_string(&log).expect("docker was not called");
    assert!(
        argv.starts_with("run --rm -i --network none --name krm-catalog-")
            && argv.contains(" --user nobody --security-opt=no-new-privileges -- "),
        "{argv}"
    );
    assert!(!argv.contains("-v ") && !argv.contains("--mount"), "{argv}");
    assert!(
        argv.contains(&format!("{}/fn/set-labels@sha256:", reg.addr)),
        "{argv}"
    );

    // Pin mode: the annotated item is what kustomize runs as a transformer…
    let out = pkg.run(&[], &input("SetLabels", "{mode: pin}"));
    assert!(out.status.success(), "{}", stderr(&out));
    let list: serde_json::Value = krm_catalog::yaml::parse(&stdout(&out)).expect("yaml");
    let step = list["items"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["kind"] == "SetLabels"))
        .cloned()
        .expect("pinned item");
    let annotation = step["metadata"]["annotations"]["config.kubernetes.io/function"]
        .as_str()
        .expect("function annotation")
        .to_owned();
    let pinned = annotation
        .lines()
        .find_map(|l| l.trim().strip_prefix("image: "))
        .expect("image")
        .to_owned();
    assert!(pinned.contains("@sha256:"), "{annotation}");
    let mut clean = step.clone();
    krm_catalog::resource_list::remove_annotations(
        &mut clean,
        &["internal.config.kubernetes.io/path"],
    );
    let step_yaml = krm_catalog::yaml::emit(&clean);

    if have("kubectl", case) {
        pkg.write(
            "kustomize/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  greeting: hello\n",
        );
        pkg.write("kustomize/labels.yaml", &step_yaml);
        pkg.write(
            "kustomize/kustomization.yaml",
            "resources: [cm.yaml]\ntransformers: [labels.yaml]\n",
        );
        let text = succeed(pkg.command("kubectl").args([
            "kustomize",
            "--enable-alpha-plugins",
            "kustomize",
        ]));
        assert!(text.contains("team: platform"), "{text}");
    }
    // …and what kpt runs from the same pinned reference with the item as its config.
    if have("kpt", case) {
        // The function config stays outside the package kpt evaluates.
        let cm = pkg.write("kpt/cm.yaml", "# kept\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  greeting: hello\n");
        pkg.write("kpt-fn-config.yaml", &step_yaml);
        succeed(pkg.command("kpt").args([
            "fn",
            "eval",
            "--image-pull-policy",
            "never",
            "--image",
            &pinned,
            "--fn-config",
            "kpt-fn-config.yaml",
            "kpt",
        ]));
        let cm = fs_err::read_to_string(cm).expect("cm");
        assert!(
            cm.contains("team: platform") && cm.starts_with("# kept"),
            "{cm}"
        );
    }
}

// --- concurrency ---------------------------------------------------------------------------

#[test]
fn parallel_runs_share_a_cold_cache_and_a_killed_one_leaves_nothing_half_written() {
    let case = test_name!();
    let Some((tls, server)) = https(case) else {
        return;
    };
    // Big enough that the slow download is still running when one process is killed.
    let mut big = ECHO.to_vec();
    big.extend(std::iter::repeat_n(b'#', 256 * 1024));
    big.push(b'\n');
    server.put("echo-fn", &big);
    // The slow download takes two seconds; leave room for a loaded CI machine.
    let pkg = TestContext::new()
        .with_ca(&tls.ca)
        .with_env("KRM_CATALOG_HTTP_TIMEOUT", "60");
    pkg.write(
        "catalog.yaml",
        exec_catalog(
            &server.url("slow/echo-fn"),
            "echo-fn",
            Some(&sha256_hex(&big)),
        )
        .as_bytes(),
    );
    let input = input("Echo", RUN_EXEC);
    let mut victim = pkg.start(&[], &input);
    let children: Vec<_> = (0..8).map(|_| pkg.start(&[], &input)).collect();
    // Kill the first one while every download is under way (each takes two seconds).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while server.requests() < 9 {
        assert!(
            std::time::Instant::now() < deadline,
            "the downloads did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(victim.is_running(), "it finished before the kill");
    victim.kill();
    for child in children {
        assert_ran(&child.wait());
    }
    // Every cache file is complete: blobs and binaries re-hash to their names, and no
    // temporary file is left behind.
    let mut files = Vec::new();
    let mut stack = vec![pkg.cache().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs_err::read_dir(&dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    assert!(!files.is_empty());
    for file in &files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let parent = file
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        match parent {
            "sha256" | "bin" => assert_eq!(
                sha256_hex(&fs_err::read(file).expect("read")),
                name,
                "{} does not hash to its name",
                file.display()
            ),
            "refs" => {}
            _ => panic!("unexpected file in the cache: {}", file.display()),
        }
    }
    assert!(
        files
            .iter()
            .any(|f| f.ends_with(format!("blobs/sha256/{}", sha256_hex(&big)))),
        "{files:?}"
    );
}

/// The walkthrough of docs/how-to/function-runtimes.md on `functions/examples/function-runtimes/`, with the registry of
/// this test in place of 127.0.0.1:5000: verify fails unpinned, lock pins both runtimes, verify
/// passes, pin mode feeds `kubectl kustomize`, run mode runs the exec binary.
#[test]
fn the_documented_runtime_walkthrough() {
    let case = test_name!();
    let Some((_registry, tag, pkg)) = docker_setup(case) else {
        return;
    };
    crate::container::copy_dir(
        &root().join("functions/examples/function-runtimes"),
        pkg.path(),
    );
    let catalog = pkg.path().join("catalog/functions.yaml");
    let text = fs_err::read_to_string(&catalog).expect("catalog");
    assert!(
        text.contains("image: 127.0.0.1:5000/fn/set-labels:v1"),
        "{text}"
    );
    fs_err::write(
        &catalog,
        text.replace("127.0.0.1:5000/fn/set-labels:v1", &tag),
    )
    .expect("write");
    // `file://bin/set_labels` resolves inside the catalog's root.
    fs_err::create_dir_all(pkg.path().join("catalog/bin")).expect("mkdir");
    fs_err::copy(
        root().join("dist/set_labels"),
        pkg.path().join("catalog/bin/set_labels"),
    )
    .expect("copy");

    let out = pkg.run(&["catalog", "verify", "catalog"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("2 runtimes checked, 2 not ok"),
        "{}",
        stdout(&out)
    );
    let out = pkg.run(&["catalog", "lock", "catalog"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 2, "{}", stdout(&out));
    let out = pkg.run(&["catalog", "verify", "catalog"], "");
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("2 runtimes checked, 0 not ok"),
        "{}",
        stdout(&out)
    );

    let out = pkg.run(
        &["render", "--fn-config", "pin.yaml", "src/labels.yaml"],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("config.kubernetes.io/function: |"),
        "{}",
        stdout(&out)
    );
    fs_err::create_dir_all(pkg.path().join("pinned")).expect("mkdir");
    fs_err::write(pkg.path().join("pinned/labels.yaml"), stdout(&out)).expect("write");
    if have("kubectl", case) {
        let built =
            succeed(
                pkg.command("kubectl")
                    .args(["kustomize", "--enable-alpha-plugins", "."]),
            );
        assert!(
            built.contains("team: payments") && built.contains("name: payments-settings"),
            "{built}"
        );
    }

    let args = [
        "render",
        "--fn-config",
        "run.yaml",
        "src/app.yaml",
        "src/labels-local.yaml",
    ];
    let out = pkg.run(&args, "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("team: payments"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("SetLabelsLocal"), "{}", stdout(&out));
}

#[test]
fn steps_run_in_input_order_over_the_current_items() {
    // The second step only changes what the first one wrote: run the other way round, the
    // ConfigMap would end up with `hello-from-exec`.
    let second: &[u8] =
        b"#!/bin/sh\n/bin/sed 's/greeting: hello-from-exec$/greeting: hello-from-exec-twice/'\n";
    let pkg = TestContext::new();
    pkg.write("echo-fn", ECHO);
    pkg.write("second-fn", second);
    let first = exec_catalog("file://echo-fn", "echo-fn", Some(&sha256_hex(ECHO)));
    let then = exec_catalog("file://second-fn", "second-fn", Some(&sha256_hex(second)));
    let then = then
        .split_once("  krmFunctions:\n")
        .map(|(_, kinds)| kinds.replace("kind: Echo", "kind: Second"))
        .expect("kinds");
    pkg.write("catalog.yaml", format!("{first}{then}").as_bytes());
    let input = input("Echo", RUN_EXEC).replace(
        "functionConfig:",
        "- apiVersion: fn.acme.dev/v1\n  kind: Second\n  metadata:\n    name: then\nfunctionConfig:",
    );
    let out = pkg.run(&[], &input);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("greeting: hello-from-exec-twice\n"), "{text}");
}

#[test]
fn run_mode_without_a_container_engine_suggests_pin_mode() {
    let pkg = TestContext::new();
    let digest = "2f2b9a1f6b0b7c5b4d7e0f3c5a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e";
    pkg.write(
        "catalog.yaml",
        image_catalog(&[image_kind("Echo", "ghcr.io/acme/echo:v1", Some(digest))]).as_bytes(),
    );
    let path = pkg.mkdir("empty").to_string_lossy().into_owned();
    for engine in ["docker", "podman"] {
        let out = pkg.run_with(
            &[],
            &input("Echo", &format!("{{mode: run, containerEngine: {engine}}}")),
            &[("PATH", &path)],
        );
        assert_error(
            &out,
            &format!("no container engine: `{engine}` is not installed; use functions.mode: pin"),
        );
    }
}

#[test]
fn an_image_and_binaries_side_by_side_pick_by_mode_and_permission() {
    let digest = "2f2b9a1f6b0b7c5b4d7e0f3c5a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e";
    let pkg = TestContext::new();
    pkg.write("echo-fn", ECHO);
    let catalog = exec_catalog("file://echo-fn", "echo-fn", Some(&sha256_hex(ECHO))).replace(
        "        exec:\n",
        &format!("        container:\n          image: ghcr.io/acme/echo:v1\n          sha256: {digest}\n        exec:\n"),
    );
    pkg.write("catalog.yaml", catalog.as_bytes());
    // Pin mode: the image (binaries cannot be pinned portably).
    let out = pkg.run(&[], &input("Echo", "{mode: pin}"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("image: ghcr.io/acme/echo@sha256:{digest}")),
        "{}",
        stdout(&out)
    );
    // Run mode with exec allowed: the binary.
    assert_ran(&pkg.run(&[], &input("Echo", RUN_EXEC)));
    // Run mode without it: the image, through a container engine (none here).
    let path = pkg.mkdir("empty").to_string_lossy().into_owned();
    let out = pkg.run_with(&[], &input("Echo", "{mode: run}"), &[("PATH", &path)]);
    assert_error(&out, "no container engine: `docker` is not installed");
}

/// docs/how-to/function-runtimes.md, "Checked before it runs" on `functions/examples/function-runtimes/`: an exec
/// kind's schema and CEL rule refuse both configs of `src/labels-invalid.yaml` before any
/// binary runs (there is none here: a run would fail differently), with these exact lines.
#[test]
fn issue11_the_documented_schema_and_cel_errors() {
    let pkg = TestContext::new();
    crate::container::copy_dir(
        &root().join("functions/examples/function-runtimes"),
        pkg.path(),
    );
    let out = pkg.run(
        &[
            "render",
            "--fn-config",
            "run.yaml",
            "src/app.yaml",
            "src/labels-invalid.yaml",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let expected = [
        "error: fn.acme.dev/v1/SetLabelsLocal/typo: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation (src/labels-invalid.yaml)",
        "error: fn.acme.dev/v1/SetLabelsLocal/typo spec.labels: Required value (src/labels-invalid.yaml)",
        "error: fn.acme.dev/v1/SetLabelsLocal/typo spec.lables: unknown field \"spec.lables\" (did you mean \"labels\"?) (src/labels-invalid.yaml)",
        "error: fn.acme.dev/v1/SetLabelsLocal/reserved spec.labels: Invalid value: the kubernetes.io/ and k8s.io/ prefixes are reserved for Kubernetes (src/labels-invalid.yaml#1)",
    ];
    assert_eq!(stderr(&out).lines().collect::<Vec<_>>(), expected);
    let page = fs_err::read_to_string(root().join("docs/how-to/function-runtimes.md"))
        .expect("docs/how-to/function-runtimes.md");
    for line in expected {
        assert!(
            page.contains(line),
            "docs/how-to/function-runtimes.md must show: {line}"
        );
    }
    // Nothing ran, and standalone `render` writes nothing on error (issue 22).
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
}

//! Exec runtimes from an OCI artifact and from a pinned Git commit (issue 23, SPEC §7.3,
//! KEP-2906): artifacts laid out as `oras push` writes them (a plain file as a
//! `application/vnd.oci.image.layer.v1.tar` layer titled by its name, beside a README layer;
//! a per-platform image index whose manifests hold a `.tar.gz`), pushed with `skopeo` to
//! Debian's `docker-registry`; a binary committed to a repository served by `git
//! http-backend`. Each is run in `mode: run` with `allowExec`, locked, pulled and run offline.
//! Tests print `SKIPPED …` when a tool is missing.

use std::path::Path;
use std::process::Output;

use krm_catalog::remote::archive;
use krm_catalog::verify::sha256_hex;

use crate::git::git;
use crate::remote::{OFFLINE, ONLINE};
use crate::runtimes::{ECHO, RUN_EXEC, exec_catalog, input, push_image};
use crate::servers::{Registry, Server};
use crate::util::{TestContext, have, stderr, stdout, test_name};

const FAILS: &[u8] = b"#!/bin/sh\necho wrong platform >&2\nexit 3\n";

/// The echo function ran: its change and its result are in the output.
#[track_caller]
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
}

/// The run failed with one error result that says `needle`, and lost nothing.
#[track_caller]
fn assert_error(out: &Output, needle: &str) {
    let text = stdout(out);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", stderr(out));
    assert!(
        stderr(out).contains(needle),
        "no {needle:?} in\n{}",
        stderr(out)
    );
    assert!(text.contains("severity: error"), "{text}");
    assert!(text.contains("greeting: hello\n"), "{text}");
}

/// A blob of an OCI layout; returns `sha256:<hex>` and its size.
fn blob(layout: &Path, bytes: &[u8]) -> (String, usize) {
    let hex = sha256_hex(bytes);
    let dir = layout.join("blobs/sha256");
    fs_err::create_dir_all(&dir).expect("mkdir");
    fs_err::write(dir.join(&hex), bytes).expect("blob");
    (format!("sha256:{hex}"), bytes.len())
}

/// An artifact manifest as `oras push --artifact-type application/vnd.acme.krm-fn.v1 REF
/// FILE:TYPE…` writes it: the empty config, one layer per file, titled by its name. Returns
/// the manifest's digest and size.
fn artifact(layout: &Path, files: &[(&str, &str, &[u8])]) -> (String, usize) {
    let (config, config_size) = blob(layout, b"{}");
    let layers: Vec<String> = files
        .iter()
        .map(|(title, media, bytes)| {
            let (digest, size) = blob(layout, bytes);
            format!(
                r#"{{"mediaType":"{media}","digest":"{digest}","size":{size},"annotations":{{"org.opencontainers.image.title":"{title}"}}}}"#
            )
        })
        .collect();
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.acme.krm-fn.v1","config":{{"mediaType":"application/vnd.oci.empty.v1+json","digest":"{config}","size":{config_size}}},"layers":[{}],"annotations":{{"org.opencontainers.image.created":"2026-11-27T00:00:00Z"}}}}"#,
        layers.join(",")
    );
    blob(layout, manifest.as_bytes())
}

/// Point the layout's `latest` at `digest` and push it (every manifest of an index too, with
/// the digests kept) to `target`.
fn push(layout: &Path, media: &str, (digest, size): &(String, usize), target: &str) {
    fs_err::write(
        layout.join("index.json"),
        format!(
            r#"{{"schemaVersion":2,"manifests":[{{"mediaType":"{media}","digest":"{digest}","size":{size},"annotations":{{"org.opencontainers.image.ref.name":"latest"}}}}]}}"#
        ),
    )
    .expect("index.json");
    fs_err::write(
        layout.join("oci-layout"),
        r#"{"imageLayoutVersion":"1.0.0"}"#,
    )
    .expect("oci-layout");
    push_image(layout, target);
}

const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const INDEX: &str = "application/vnd.oci.image.index.v1+json";
const PLAIN: &str = "application/vnd.oci.image.layer.v1.tar";
const TGZ: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

#[test]
fn issue23_exec_runtime_from_an_oci_artifact_layer_and_index() {
    let test = test_name!();
    if !have("docker-registry", test) || !have("skopeo", test) {
        return;
    }
    let registry = Registry::start();
    let reg = &registry.addr;
    // A plain file beside a README, as `oras push REF echo-fn README.md` stores them.
    let dir = tempfile::tempdir().expect("tempdir");
    let single = artifact(
        dir.path(),
        &[
            ("README.md", "text/markdown", b"# echo\n"),
            ("echo-fn", PLAIN, ECHO),
        ],
    );
    push(dir.path(), MANIFEST, &single, &format!("{reg}/fns/echo:v1"));
    // A per-platform index: this machine's manifest holds a .tar.gz, another's a failing
    // binary.
    let (os, arch) = krm_catalog::functions::exec::this_platform();
    let tgz = archive::pack(&[("dist/echo-fn", ECHO)]);
    let dir2 = tempfile::tempdir().expect("tempdir");
    let mine = artifact(dir2.path(), &[("echo-fn.tar.gz", TGZ, &tgz)]);
    let other = artifact(dir2.path(), &[("echo-fn", PLAIN, FAILS)]);
    let index = format!(
        r#"{{"schemaVersion":2,"mediaType":"{INDEX}","manifests":[{{"mediaType":"{MANIFEST}","digest":"{}","size":{},"platform":{{"os":"windows","architecture":"{arch}"}}}},{{"mediaType":"{MANIFEST}","digest":"{}","size":{},"platform":{{"os":"{os}","architecture":"{arch}"}}}}]}}"#,
        other.0, other.1, mine.0, mine.1
    );
    let index = blob(dir2.path(), index.as_bytes());
    push(
        dir2.path(),
        INDEX,
        &index,
        &format!("{reg}/fns/echo-multi:v1"),
    );

    let by_digest = format!("oci://{reg}/fns/echo@{}", single.0);
    let by_tag = format!("oci://{reg}/fns/echo:v1");
    let multi = format!("oci://{reg}/fns/echo-multi:v1@{}", index.0);
    for (uri, sha256) in [
        (&by_digest, sha256_hex(ECHO)),
        (&by_tag, sha256_hex(ECHO)),
        (&multi, sha256_hex(&tgz)),
    ] {
        let pkg = TestContext::new();
        pkg.write("catalog.yaml", exec_catalog(uri, "echo-fn", Some(&sha256)));
        let out = pkg.run(&["catalog", "lint", "catalog.yaml"], "");
        assert!(out.status.success(), "{uri}: {}", stderr(&out));
        assert_ran(&pkg.run(&[], &input("Echo", RUN_EXEC)));
        // Cached under its sha256 like an HTTPS download: offline runs it again.
        assert!(pkg.cache().join("blobs/sha256").join(&sha256).is_file());
        let offline = input("Echo", RUN_EXEC).replace(ONLINE, OFFLINE);
        assert_ran(&pkg.run(&[], &offline));
    }

    // The runtime's sha256 is not the layer's: nothing runs.
    let wrong = "bad0".repeat(16);
    let pkg = TestContext::new();
    pkg.write(
        "catalog.yaml",
        exec_catalog(&by_tag, "echo-fn", Some(&wrong)),
    );
    assert_error(
        &pkg.run(&[], &input("Echo", RUN_EXEC)),
        &format!(
            "{by_tag}: sha256 mismatch: expected {wrong}, downloaded {}",
            sha256_hex(ECHO)
        ),
    );
    // A manifest digest in the reference that is not the tag's: refused before any layer.
    let moved = format!("oci://{reg}/fns/echo:v1@{}", index.0);
    pkg.write(
        "catalog.yaml",
        exec_catalog(&moved, "echo-fn", Some(&sha256_hex(ECHO))),
    );
    let out = pkg.run(&[], &input("Echo", RUN_EXEC));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains(&moved), "{}", stdout(&out));
    // Two layers and a bin that names neither.
    pkg.write(
        "catalog.yaml",
        exec_catalog(&by_tag, "other-fn", Some(&sha256_hex(ECHO))),
    );
    assert_error(
        &pkg.run(&[], &input("Echo", RUN_EXEC)),
        "2 layers (README.md, echo-fn) and not exactly one titled \"other-fn\"",
    );

    // `catalog lock` fills in the sha256 of the layer; `verify` checks it; `pull` caches it
    // and an offline run finds it with the registry gone.
    let pkg = TestContext::new();
    pkg.write("catalog.yaml", exec_catalog(&multi, "echo-fn", None));
    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let locked = fs_err::read_to_string(pkg.path().join("catalog.yaml")).expect("read");
    assert_eq!(
        locked,
        exec_catalog(&multi, "echo-fn", Some(&sha256_hex(&tgz))),
        "{}",
        stdout(&out)
    );
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let out = pkg.run(&["catalog", "pull", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!(
            "pulled exec binary of fn.acme.dev/v1/Echo for {os}/{arch} ({multi})"
        )),
        "{}",
        stdout(&out)
    );
    drop(registry);
    assert_ran(&pkg.run(&[], &input("Echo", RUN_EXEC).replace(ONLINE, OFFLINE)));
}

/// A repository at `dir` with the echo function at `bin/echo-fn`, tagged `v1`; returns the
/// commit.
fn function_repo(dir: &Path) -> String {
    fs_err::create_dir_all(dir.join("bin")).expect("mkdir");
    git(dir, &["init", "-q"]);
    fs_err::write(dir.join("bin/echo-fn"), ECHO).expect("write");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "echo function"]);
    git(dir, &["tag", "-a", "v1", "-m", "v1"]);
    git(dir, &["rev-parse", "HEAD"])
}

#[test]
fn issue23_exec_runtime_from_a_pinned_git_commit() {
    let test = test_name!();
    if !have("git", test) || !have("python3", test) {
        return;
    }
    let http = Server::git_http(None);
    let commit = function_repo(&http.root().join("fns"));
    let repo = http.url("fns");
    let hex = sha256_hex(ECHO);
    let uri = format!("git::{repo}//bin/echo-fn?ref=v1&commit={commit}");
    let pkg = TestContext::new();
    pkg.write("catalog.yaml", exec_catalog(&uri, "echo-fn", None));
    let out = pkg.run(&["catalog", "lint", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        fs_err::read_to_string(pkg.path().join("catalog.yaml")).expect("read"),
        exec_catalog(&uri, "echo-fn", Some(&hex))
    );
    assert_ran(&pkg.run(&[], &input("Echo", RUN_EXEC)));
    // The commit alone (fetched by id), and a `file://` repository inside the package.
    let local = TestContext::new();
    let local_commit = function_repo(&local.path().join("repo"));
    for (pkg, uri) in [
        (
            TestContext::new(),
            format!("git::{repo}//bin/echo-fn?commit={commit}"),
        ),
        (
            local,
            format!("git::file://repo//bin/echo-fn?commit={local_commit}"),
        ),
    ] {
        pkg.write("catalog.yaml", exec_catalog(&uri, "echo-fn", Some(&hex)));
        assert_ran(&pkg.run(&[], &input("Echo", RUN_EXEC)));
    }
    // A tag that no longer names the pinned commit (a cache of its own: the sha256 of the
    // file would find the copy above).
    let other = "1".repeat(40);
    let moved = format!("git::{repo}//bin/echo-fn?ref=v1&commit={other}");
    let fresh = TestContext::new();
    fresh.write("catalog.yaml", exec_catalog(&moved, "echo-fn", Some(&hex)));
    assert_error(
        &fresh.run(&[], &input("Echo", RUN_EXEC)),
        &format!("is now commit {commit}, but commit pins {other}"),
    );
    // A file the commit does not have; a directory.
    for (path, needle) in [
        (
            "bin/missing",
            "path \"bin/missing\" does not exist in this commit (no \"missing\")",
        ),
        (
            "bin",
            "path \"bin\" is a directory or a submodule, not a file",
        ),
    ] {
        let uri = format!("git::{repo}//{path}?commit={commit}");
        pkg.write(
            "catalog.yaml",
            exec_catalog(&uri, "echo-fn", Some(&"c3".repeat(32))),
        );
        assert_error(&pkg.run(&[], &input("Echo", RUN_EXEC)), needle);
    }
}

#[test]
fn issue23_lint_and_run_refuse_sources_a_run_cannot_fetch() {
    let commit = "a".repeat(40);
    let sha = "b".repeat(64);
    for (uri, reason) in [
        (
            "ftp://example.com/echo-fn".to_owned(),
            "has the unsupported scheme \"ftp\"; use https://, file:// (local catalogs), oci://",
        ),
        (
            "git::https://example.com/fns//bin/echo-fn?ref=v1".to_owned(),
            "is not pinned to a commit: add &commit=<full commit id> (`git rev-parse v1` prints it)",
        ),
        (
            format!("git::https://example.com/fns?commit={commit}"),
            "names no file: write the file's path in the repository after `//`",
        ),
        (
            "oci://example.com/Fns:v1".to_owned(),
            "is not an OCI reference: ",
        ),
    ] {
        let pkg = TestContext::new();
        pkg.write("catalog.yaml", exec_catalog(&uri, "echo-fn", Some(&sha)));
        let out = pkg.run(&["catalog", "lint", "catalog.yaml"], "");
        assert_eq!(out.status.code(), Some(1), "{uri}: {}", stdout(&out));
        let (os, arch) = krm_catalog::functions::exec::this_platform();
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            said.contains(&format!(
                "fn.acme.dev/v1/Echo: {os}/{arch} binary uri {uri} {reason}"
            )),
            "{said}"
        );
        // The run says the same, as an error result.
        assert_error(
            &pkg.run(&[], &input("Echo", RUN_EXEC)),
            &format!("{uri} {reason}"),
        );
    }
}

/// A script that reports one result.
const SCRIPT: &str = "ctx.resource_list[\"results\"] = [{\"message\": \"hello from the script\", \"severity\": \"info\"}]\n";

/// Starlark scripts come the same ways (issue 23): a file of a pinned commit, and the only
/// layer of an artifact; run without `allowExec`, cached under their sha256.
#[test]
fn issue23_starlark_scripts_from_a_git_commit_and_an_oci_artifact() {
    let test = test_name!();
    if !have("git", test) || !have("python3", test) || !crate::util::have_starlark(test) {
        return;
    }
    let hex = sha256_hex(SCRIPT.as_bytes());
    let http = Server::git_http(None);
    let dir = http.root().join("scripts");
    fs_err::create_dir_all(&dir).expect("mkdir");
    git(&dir, &["init", "-q"]);
    fs_err::write(dir.join("hello.star"), SCRIPT).expect("write");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "script"]);
    let commit = git(&dir, &["rev-parse", "HEAD"]);
    let mut urls = vec![format!(
        "git::{}//hello.star?commit={commit}",
        http.url("scripts")
    )];
    let registry = (have("docker-registry", test) && have("skopeo", test)).then(Registry::start);
    let layout = tempfile::tempdir().expect("tempdir");
    if let Some(registry) = &registry {
        let manifest = artifact(
            layout.path(),
            &[(
                "hello.star",
                "application/vnd.acme.starlark",
                SCRIPT.as_bytes(),
            )],
        );
        let target = format!("{}/scripts/hello:v1", registry.addr);
        push(layout.path(), MANIFEST, &manifest, &target);
        urls.push(format!("oci://{target}"));
    }
    for url in urls {
        let pkg = TestContext::new();
        pkg.write(
            "catalog.yaml",
            format!(
                "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionCatalog\nmetadata:\n  name: scripts\nspec:\n  krmFunctions:\n  - group: fn.acme.dev\n    names:\n      kind: Hello\n    versions:\n    - name: v1\n      runtime:\n        starlark: {{url: \"{url}\", sha256: {hex}}}\n"
            ),
        );
        // `catalog pull` caches the script, so the first run may be offline.
        let out = pkg.run(&["catalog", "pull", "catalog.yaml"], "");
        assert!(out.status.success(), "{url}: pull: {}", stderr(&out));
        assert!(
            stdout(&out).contains(&format!(
                "pulled starlark script of fn.acme.dev/v1/Hello ({url})"
            )),
            "{}",
            stdout(&out)
        );
        let offline = input("Hello", "{mode: run}").replace(ONLINE, OFFLINE);
        let out = pkg.run(&[], &offline);
        assert!(out.status.success(), "{url}: offline: {}", stderr(&out));
        assert!(
            stdout(&out).contains("message: hello from the script"),
            "{}",
            stdout(&out)
        );
        let out = pkg.run(&[], &input("Hello", "{mode: run}"));
        assert!(
            out.status.success(),
            "{url}: {}\n{}",
            stdout(&out),
            stderr(&out)
        );
    }
}

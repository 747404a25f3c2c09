//! `catalog view` (text for people, `-o yaml|json` for machines) on the KEP-2906 example
//! catalogs and on `testdata/catalogs/kpt-fn`, `catalog pull` of exec binaries followed by an
//! offline run with the server gone, and the message for a cache directory that cannot be
//! written (issue #11).

use serde_json::Value;

use krm_catalog::remote::archive;
use krm_catalog::verify::sha256_hex;

use crate::remote::{OFFLINE, ONLINE};
use crate::runtimes::{ECHO, RUN_EXEC, exec_catalog, input};
use crate::servers::{Server, tls};
use crate::util::{TestContext, diff, have, root, stderr, stdout, test_name};

const KPT_FN: &str = "testdata/catalogs/kpt-fn/catalog.yaml";

fn view(args: &[&str]) -> String {
    let out = TestContext::new()
        .in_repo_root()
        .run(&[&["catalog", "view"], args].concat(), "");
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// The text view of a catalog with every KEP metadata field is the expected file (rewrite it
/// with `UPDATE_GOLDEN=1` and read the diff).
#[test]
fn issue11_catalog_view_text_shows_every_field_for_a_trust_decision() {
    let text = view(&[KPT_FN]);
    let path = root().join("testdata/catalogs/kpt-fn/view.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs_err::write(&path, &text).expect("write");
    }
    let expected = fs_err::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == text,
        "catalog view changed (UPDATE_GOLDEN=1 rewrites {}):\n{}",
        path.display(),
        diff(&expected, &text)
    );
    // What the expected file must hold whatever its layout: each field of the catalog.
    for needle in [
        "Publisher:          kpt.dev",
        "Home:               https://github.com/kptdev/krm-functions-catalog/tree/master/functions/go/set-namespace",
        "Maintainers:        kpt-team@google.com",
        "Tags:               mutator",
        "Image digest:     sha256:2d0bcba5bbf5d2e4c5d1b8c9e2a3f4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1",
        "Image digest:     NOT PINNED (no sha256",
        "Requires network: no",
        "Idempotent:       yes",
        "License:          Apache-2.0",
        "Usage:            https://github.com/kptdev/krm-functions-catalog/blob/master/functions/go/set-namespace/README.md",
        "https://github.com/kptdev/krm-functions-catalog/tree/master/examples/set-namespace-depends-on",
        "sha256:8f14e45fceea167a5a36dedd4bea2543b0e0b5d0e5c0e6b5f0a2d7c3b1e9f4a2",
        "darwin/arm64 https://example.com/kpt-fn/set-namespace_darwin_arm64.tar.gz (bin set-namespace)",
        "NOT PINNED (no sha256: a run refuses it)",
        "namespace         string  required  The new namespace",
        "labels  map[string]string  The labels to add.",
    ] {
        assert!(text.contains(needle), "view lacks {needle:?}:\n{text}");
    }
}

/// `-o json` and `-o yaml` carry the same document with the documented field names.
#[test]
fn issue11_catalog_view_yaml_and_json_are_the_same_document() {
    let json: Value = serde_json::from_str(&view(&[KPT_FN, "-o", "json"])).expect("JSON");
    let yaml = krm_catalog::yaml::parse(&view(&[KPT_FN, "--output", "yaml"])).expect("YAML");
    assert_eq!(json, yaml);
    assert_eq!(json["name"], "kpt-functions");
    assert_eq!(json["trustEntry"], Value::Null);
    let set_namespace = &json["functions"][0];
    assert_eq!(set_namespace["kind"], "SetNamespace");
    assert_eq!(set_namespace["tags"][0], "mutator");
    let v1 = &set_namespace["versions"][0];
    assert_eq!(v1["apiVersion"], "fn.kpt.dev/v1alpha1");
    assert_eq!(v1["idempotent"], true);
    assert_eq!(v1["examples"].as_array().map(Vec::len), Some(3));
    let container = &v1["runtime"]["container"];
    assert_eq!(
        container["pinnedImage"],
        "gcr.io/kpt-fn/set-namespace@sha256:2d0bcba5bbf5d2e4c5d1b8c9e2a3f4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1"
    );
    let platforms = &v1["runtime"]["exec"]["platforms"];
    assert_eq!(platforms[0]["os"], "linux");
    assert_eq!(
        platforms[0]["sha256"],
        "sha256:8f14e45fceea167a5a36dedd4bea2543b0e0b5d0e5c0e6b5f0a2d7c3b1e9f4a2"
    );
    assert_eq!(platforms[1]["sha256"], Value::Null);
    assert_eq!(v1["config"][0]["name"], "namespace");
    assert_eq!(v1["config"][0]["required"], true);
    assert_eq!(v1["config"][1]["required"], false);
    // A kubara catalog: services with chart, cluster types and config fields.
    let builtin: Value = serde_json::from_str(&view(&["builtin", "-o", "json"])).expect("JSON");
    let cert_manager = builtin["services"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "cert-manager"))
        .expect("cert-manager");
    assert_eq!(
        cert_manager["kind"],
        "services.krm-catalog.dev/v1alpha1/CertManager"
    );
    assert_eq!(cert_manager["chart"], "cert-manager");
    assert_eq!(cert_manager["clusterTypes"][0], "hub");
    let issuer = cert_manager["config"]
        .as_array()
        .and_then(|c| c.iter().find(|f| f["name"] == "clusterIssuer"))
        .expect("clusterIssuer");
    assert_eq!(issuer["required"], true);
}

/// Every KEP-2906 example catalog (`testdata/golden/kep-2906-*`, verbatim from the KEP) shows
/// each kind's runtime, image and network/storage needs as the catalog declares them.
#[test]
fn issue11_catalog_view_of_the_kep_example_catalogs() {
    let base = root().join("testdata/golden");
    let mut dirs: Vec<_> = fs_err::read_dir(&base)
        .expect("testdata/golden")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("kep-2906-"))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    let mut seen = 0;
    for dir in dirs {
        let text = fs_err::read_to_string(dir.join("catalog.yaml")).expect("catalog.yaml");
        let doc = krm_catalog::yaml::parse(&text).expect("YAML");
        let out = TestContext::new()
            .in_dir(&dir)
            .run(&["catalog", "view", "catalog.yaml", "-o", "json"], "");
        assert!(out.status.success(), "{}: {}", dir.display(), stderr(&out));
        let view: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        let declared = doc["spec"]["krmFunctions"].as_array().expect("functions");
        let shown = view["functions"].as_array().expect("functions");
        assert_eq!(declared.len(), shown.len(), "{}", dir.display());
        for (d, s) in declared.iter().zip(shown) {
            assert_eq!(d["names"]["kind"], s["kind"]);
            assert_eq!(d["description"], s["description"]);
            let runtime = &s["versions"][0]["runtime"];
            let container = &d["runtime"]["container"];
            if let Some(image) = container["image"].as_str() {
                assert_eq!(runtime["container"]["image"], image);
                assert_eq!(runtime["container"]["digest"], Value::Null);
                let flag = |k: &str| container[k].as_bool().unwrap_or(false);
                assert_eq!(
                    runtime["container"]["requireNetwork"],
                    flag("requireNetwork")
                );
                // The KEP's `requireFilesystem` spelling is `requireStorageMount`.
                assert_eq!(
                    runtime["container"]["requireStorageMount"],
                    flag("requireStorageMount") || flag("requireFilesystem")
                );
            } else {
                assert_eq!(runtime["starlark"]["url"], d["runtime"]["starlark"]);
            }
            seen += 1;
        }
    }
    assert_eq!(seen, 11);
    // Story 7's JavaApplication needs network and storage: the text says so.
    let out = TestContext::new()
        .in_dir(base.join("kep-2906-story-7"))
        .run(&["catalog", "view", "catalog.yaml"], "");
    let text = stdout(&out);
    let java = text
        .split("  JavaApplication (example.com)")
        .nth(1)
        .expect("JavaApplication");
    assert!(
        java.contains("Requires network: yes\n      Requires storage: yes\n"),
        "{text}"
    );
    assert!(java.contains("License:          (not declared)"), "{text}");
}

/// `catalog pull` of a remote catalog downloads, verifies and installs its exec binary; with
/// the server gone, an offline run-mode exec step succeeds from the cache alone.
#[test]
fn issue11_pull_then_offline_exec_run_with_the_server_gone() {
    let case = test_name!();
    if !have("python3", case) || !have("openssl", case) {
        return;
    }
    let tls = tls();
    let server = Server::start(Some(&tls), None);
    let tgz = archive::pack(&[("dist/echo-fn", ECHO)]);
    server.put("echo.tar.gz", &tgz);
    let catalog = exec_catalog(
        &server.url("echo.tar.gz"),
        "echo-fn",
        Some(&sha256_hex(&tgz)),
    );
    server.put("catalog.yaml", catalog.as_bytes());
    let url = server.url("catalog.yaml");
    let pkg = TestContext::new().with_ca(&tls.ca);
    let out = pkg.run(&["catalog", "pull", &url], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains(&format!("pulled {url} (0 services, 1 function kinds")),
        "{said}"
    );
    assert!(
        said.contains("pulled exec binary of fn.acme.dev/v1/Echo for ")
            && said.contains("echo.tar.gz"),
        "{said}"
    );
    let installed = pkg.cache().join("bin").join(sha256_hex(ECHO));
    assert!(installed.is_file(), "{said}");
    assert!(
        pkg.cache()
            .join("blobs/sha256")
            .join(sha256_hex(&tgz))
            .is_file()
    );
    drop(server);
    let run = input("Echo", RUN_EXEC)
        .replace(
            "    - path: catalog.yaml\n",
            &format!("    - url: {url}\n    trustedCatalogs: [\"{url}\"]\n"),
        )
        .replace(ONLINE, OFFLINE);
    let out = pkg.run(&[], &run);
    let text = stdout(&out);
    assert!(out.status.success(), "{}\n{text}", stderr(&out));
    assert!(text.contains("greeting: hello-from-exec"), "{text}");
    assert!(text.contains("message: hello from the function"), "{text}");
    // Without the pull, the same offline run fails and says how to prepare the cache.
    let cold = TestContext::new().with_ca(&tls.ca);
    let out = cold.run(&[], &run);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(&format!("krm-catalog catalog pull {url}")),
        "{}",
        stdout(&out)
    );
}

/// A local catalog is pulled for its exec binaries: this platform by default, the named ones
/// with `--platform`, a platform the catalog lacks is a warning, a wrong digest an error.
#[test]
fn issue11_pull_of_a_local_catalog_installs_its_exec_binaries() {
    let pkg = TestContext::new();
    pkg.write("echo-fn", ECHO);
    pkg.write(
        "catalog.yaml",
        exec_catalog("file://echo-fn", "echo-fn", Some(&sha256_hex(ECHO))).as_bytes(),
    );
    let out = pkg.run(&["catalog", "pull", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("loaded catalog.yaml (0 services, 1 function kinds"),
        "{}",
        stdout(&out)
    );
    assert!(pkg.cache().join("bin").join(sha256_hex(ECHO)).is_file());
    // The binary is in the cache: an offline run needs neither the file nor the network.
    let out = pkg.run(&[], &input("Echo", RUN_EXEC).replace(ONLINE, OFFLINE));
    assert!(out.status.success(), "{}", stderr(&out));

    let out = pkg.run(
        &[
            "catalog",
            "pull",
            "catalog.yaml",
            "--platform",
            "windows/arm64",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("fn.acme.dev/v1/Echo: no exec binary for windows/arm64 (the catalog has "),
        "{}",
        stderr(&out)
    );
    let out = pkg.run(
        &["catalog", "pull", "catalog.yaml", "--platform", "linux"],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--platform linux: expected OS/ARCH"),
        "{}",
        stderr(&out)
    );

    let wrong = "bad0".repeat(16);
    pkg.write(
        "catalog.yaml",
        exec_catalog("file://echo-fn", "echo-fn", Some(&wrong)).as_bytes(),
    );
    let out = pkg.run(&["catalog", "pull", "--all-platforms", "catalog.yaml"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!(
            "fn.acme.dev/v1/Echo: exec binary for {}: file://echo-fn: sha256 mismatch: expected {wrong}",
            {
                let (os, arch) = krm_catalog::functions::exec::this_platform();
                format!("{os}/{arch}")
            }
        )),
        "{}",
        stderr(&out)
    );
}

/// The container image runs as `nobody`, whose home is `/nonexistent`: a cache directory that
/// cannot be written, or none at all, is said with the directory, the variable it came from,
/// what to mount and what to set, never as a bare `Permission denied`.
#[test]
fn issue11_an_unwritable_cache_dir_says_what_to_mount_and_set() {
    let pkg = TestContext::new();
    pkg.write("echo-fn", ECHO);
    pkg.write(
        "catalog.yaml",
        exec_catalog("file://echo-fn", "echo-fn", Some(&sha256_hex(ECHO))).as_bytes(),
    );
    // A path under a regular file cannot be created, whoever runs the test (root too).
    let file = pkg.write("not-a-dir", b"x");
    let cache = file.join("cache");
    let cache = cache.to_string_lossy();
    let hints = [
        "set KRM_CATALOG_CACHE to a writable directory",
        // (the function's results quote the message, so no `"` here)
        "--mount type=bind,src=",
        "dst=/cache",
        "-e KRM_CATALOG_CACHE=/cache",
        "`krm-catalog catalog pull` on the host fills it",
    ];
    let out = pkg.run_with(
        &[],
        &input("Echo", RUN_EXEC),
        &[("KRM_CATALOG_CACHE", &cache)],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let said = format!("cannot write the cache directory {cache} (from $KRM_CATALOG_CACHE): ");
    assert!(text.contains(&said), "{text}");
    for hint in hints {
        assert!(text.contains(hint), "no {hint:?} in\n{text}");
    }
    // `catalog pull` checks the cache before fetching anything.
    let out = pkg.run_with(
        &["catalog", "pull", "catalog.yaml"],
        "",
        &[("KRM_CATALOG_CACHE", &cache)],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(&said), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    // No cache variable and the image's home: no directory is guessed (or created).
    let existed = std::path::Path::new("/nonexistent").exists();
    let out = pkg.run_with(
        &["catalog", "pull", "catalog.yaml"],
        "",
        &[
            ("KRM_CATALOG_CACHE", ""),
            ("XDG_CACHE_HOME", ""),
            ("HOME", "/nonexistent"),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(
            "no cache directory: $HOME is /nonexistent (this user has no home directory, as in the container image); set KRM_CATALOG_CACHE"
        ),
        "{err}"
    );
    for hint in hints {
        assert!(err.contains(hint), "no {hint:?} in\n{err}");
    }
    assert_eq!(std::path::Path::new("/nonexistent").exists(), existed);
    // A run in that world with no writable temporary directory either (the `scratch` image
    // under kpt): the binary has nowhere to go, and the error says what to mount and set.
    let out = pkg.run_with(
        &[],
        &input("Echo", RUN_EXEC),
        &[
            ("KRM_CATALOG_CACHE", ""),
            ("XDG_CACHE_HOME", ""),
            ("HOME", "/nonexistent"),
            ("TMPDIR", &file.join("tmp").to_string_lossy()),
        ],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("no cache directory ($HOME is /nonexistent (this user has no home directory, as in the container image)) and no directory for the binary in "),
        "{text}"
    );
    for hint in hints {
        assert!(text.contains(hint), "no {hint:?} in\n{text}");
    }
    assert_eq!(std::path::Path::new("/nonexistent").exists(), existed);
}

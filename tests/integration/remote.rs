//! Remote catalogs against real servers on loopback: an HTTPS server with a test CA
//! (`tests/support/catalog_server.py`, which also injects failures and counts requests) and
//! Debian's `docker-registry`, with artifacts pushed by `skopeo` from OCI layouts built here.
//! Tests print `SKIPPED …` when python3, openssl, docker-registry or skopeo are missing
//! (`.ci/run` installs them).

use std::process::Command;
use std::time::{Duration, Instant};

use krm_catalog::remote::archive;
use krm_catalog::verify::sha256_hex;

use crate::container::DOCKER_RUN;
use crate::servers::{Registry, Server, Tls, tls};
use crate::util::{
    TestContext, assert_fails_with, assert_output, assert_within, feed, have, root, skipped,
    stderr, stdout, succeed, test_name,
};

pub(crate) const CATALOG: &str = "\
apiVersion: kubara.io/v1alpha1
kind: Catalog
metadata:
  name: remote-team
spec:
  version: 1.0.0
---
apiVersion: kubara.io/v1alpha1
kind: ServiceDefinition
metadata:
  name: remote-app
spec:
  chartPath: remote-app
  status: enabled
  configSchema:
    type: object
    properties:
      greeting: {type: string, default: hello}
  templates:
    cm.yaml.j2: |
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: {{ instance.name }}
      data:
        greeting: {{ config.greeting | quote }}
";

const BUNDLE_SERVICE: &str = "\
apiVersion: kubara.io/v1alpha1
kind: ServiceDefinition
metadata:
  name: remote-app
spec:
  chartPath: remote-app
  status: enabled
";

const BUNDLE_TEMPLATE: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ instance.name }}-from-bundle\n";

/// Package a catalog file with `scripts/oci-layout` (what the README documents) and push it
/// with skopeo; returns the manifest digest. `title` decides the layer type (`.tar.gz`: bundle).
pub(crate) fn push(registry: &str, repo_tag: &str, layer: &[u8], title: &str) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(title);
    fs_err::write(&file, layer).expect("write");
    let layout = dir.path().join("layout");
    let manifest_digest = succeed(
        Command::new(root().join("scripts/oci-layout"))
            .arg(&file)
            .arg(&layout),
    )
    .trim()
    .to_owned();
    succeed(
        Command::new("skopeo")
            .args(["copy", "--quiet", "--dest-tls-verify=false"])
            .arg(format!("oci:{}:latest", layout.display()))
            .arg(format!("docker://{registry}/{repo_tag}")),
    );
    manifest_digest
}

pub(crate) fn resource_list(catalog: &str, trusted: &[&str], extra: &str) -> String {
    let trusted: Vec<String> = trusted.iter().map(|t| format!("\"{t}\"")).collect();
    format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: services.krm-catalog.dev/v1alpha1\n  kind: RemoteApp\n  metadata:\n    name: demo\n    annotations:\n      internal.config.kubernetes.io/path: demo.yaml\nfunctionConfig:\n  apiVersion: krm-catalog.dev/v1alpha1\n  kind: ResolveCatalog\n  metadata:\n    name: remote\n  spec:\n    builtin: false\n    catalogs:\n    - {catalog}\n    trustedCatalogs: [{}]\n{extra}",
        trusted.join(", ")
    )
}

/// What [`resource_list`] writes for `builtin`, and the same with `offline: true` beside it:
/// `input.replace(ONLINE, OFFLINE)` is the same run offline.
pub(crate) const ONLINE: &str = "    builtin: false\n";
pub(crate) const OFFLINE: &str = "    builtin: false\n    offline: true\n";

/// [`resource_list`] for the catalog at `url`, trusted by exactly that URL.
pub(crate) fn trusted_url(url: &str) -> String {
    resource_list(&format!("{{url: \"{url}\"}}"), &[url], "")
}

/// The catalog server over HTTPS with the test catalogs, and a context in the repository root
/// that trusts its CA (which lives as long as the returned `Tls`).
fn https_setup(test: &str) -> Option<(Tls, Server, TestContext)> {
    if !have("python3", test) || !have("openssl", test) {
        return None;
    }
    let tls = tls();
    let server = Server::start(Some(&tls), None);
    server.put("catalog.yaml", CATALOG.as_bytes());
    server.put(
        "bundle.tar.gz",
        &archive::pack(&[
            ("team/services/remote-app.yaml", BUNDLE_SERVICE.as_bytes()),
            (
                "team/charts/remote-app/cm.yaml.j2",
                BUNDLE_TEMPLATE.as_bytes(),
            ),
        ]),
    );
    server.put("escape.tar.gz", &escaping_bundle());
    let env = TestContext::new().with_ca(&tls.ca).in_repo_root();
    Some((tls, server, env))
}

fn escaping_bundle() -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    let mut header = tar::Header::new_gnu();
    header.as_gnu_mut().expect("gnu").name[..21].copy_from_slice(b"../services/evil.yaml");
    header.set_size(1);
    header.set_mode(0o644);
    header.set_cksum();
    builder.append(&header, &b"x"[..]).expect("append");
    builder.into_inner().expect("tar").finish().expect("gzip")
}

#[test]
fn https_file_pinned_then_offline_from_the_warm_cache_with_zero_requests() {
    let Some((_tls, server, env)) = https_setup(test_name!()) else {
        return;
    };
    let url = server.url("catalog.yaml");
    let pin = sha256_hex(CATALOG.as_bytes());
    let input = resource_list(
        &format!("{{url: \"{url}\", sha256: \"{pin}\"}}"),
        &[&url],
        "",
    );
    let out = env.run(&[], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("greeting: hello")
            && stdout(&out).contains("krm-catalog.dev/catalog: remote-team@1.0.0"),
        "{}",
        stdout(&out)
    );
    let fetched = server.requests();
    assert_eq!(fetched, 1);
    // Warm and offline: the same output, and the server sees nothing.
    let offline = input.replace(ONLINE, OFFLINE);
    let again = env.run(&[], &offline);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(
        stdout(&again).replace("    offline: true\n", ""),
        stdout(&out)
    );
    // A warm run without offline makes no request either.
    let warm = env.run(&[], &input);
    assert!(warm.status.success());
    assert_eq!(server.requests(), fetched, "a warm run touched the network");
}

#[test]
fn https_bundle_and_unpinned_urls() {
    let Some((_tls, server, env)) = https_setup(test_name!()) else {
        return;
    };
    let url = server.url("bundle.tar.gz");
    let out = env.run(
        &[],
        &resource_list(&format!("{{url: \"{url}\"}}"), &[&server.url("*")], ""),
    );
    assert_output(&out, "name: demo-from-bundle");
}

#[test]
fn https_errors_are_clear() {
    let Some((_tls, server, env)) = https_setup(test_name!()) else {
        return;
    };
    let cases: Vec<(String, Vec<String>, &str)> = vec![
        (
            format!("{{url: \"{}\"}}", server.url("catalog.yaml")),
            vec![],
            "not trusted; review it with `krm-catalog catalog view",
        ),
        (
            format!(
                "{{url: \"{}\", sha256: \"{}\"}}",
                server.url("catalog.yaml"),
                "0".repeat(64)
            ),
            vec![server.url("*")],
            "sha256 mismatch: expected 0000",
        ),
        (
            format!("{{url: \"{}\"}}", server.url("missing.yaml")),
            vec![server.url("*")],
            "not found (HTTP 404); check the URL",
        ),
        (
            format!("{{url: \"{}\"}}", server.url("escape.tar.gz")),
            vec![server.url("*")],
            "entry \"../services/evil.yaml\" escapes the bundle root",
        ),
        (
            format!("{{url: \"{}\"}}", server.url("truncate/catalog.yaml")),
            vec![server.url("*")],
            "was cut off",
        ),
        (
            "{url: \"http://example.com/catalog.yaml\"}".to_owned(),
            vec!["http://example.com/*".to_owned()],
            "plain HTTP is refused except for loopback hosts",
        ),
    ];
    for (catalog, trusted, expected) in cases {
        let trusted: Vec<&str> = trusted.iter().map(String::as_str).collect();
        let out = env.run_with(
            &[],
            &resource_list(&catalog, &trusted, ""),
            &[("KRM_CATALOG_HTTP_RETRIES", "1")],
        );
        assert_eq!(out.status.code(), Some(1), "{catalog}");
        assert!(
            stderr(&out).contains(expected),
            "{catalog}: expected {expected:?} in:\n{}",
            stderr(&out)
        );
        assert!(
            stdout(&out).contains("field:\n    path: spec.catalogs[0]"),
            "{catalog}: the result points at the config entry:\n{}",
            stdout(&out)
        );
    }
}

#[test]
fn https_5xx_is_retried_and_a_hanging_server_times_out() {
    let Some((_tls, server, env)) = https_setup(test_name!()) else {
        return;
    };
    let url = server.url("fail/2/retry/catalog.yaml");
    let out = env.run(&[], &trusted_url(&url));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests(), 3, "two 503s, then the file");
    // More failures than retries: the error says it gave up and what to do.
    let url = server.url("fail/9/exhaust/catalog.yaml");
    let out = env.run_with(
        &[],
        &trusted_url(&url),
        &[("KRM_CATALOG_HTTP_RETRIES", "1")],
    );
    assert_fails_with(
        &out,
        "HTTP 503 Service Unavailable (gave up after 2 attempts; try again later, or raise KRM_CATALOG_HTTP_RETRIES)",
    );
    let url = server.url("hang/catalog.yaml");
    let started = Instant::now();
    let out = env.run_with(
        &[],
        &trusted_url(&url),
        &[
            ("KRM_CATALOG_HTTP_TIMEOUT", "1"),
            ("KRM_CATALOG_HTTP_RETRIES", "0"),
        ],
    );
    assert_fails_with(&out, "no answer within 1s");
    assert_within(started, Duration::from_secs(10));
}

#[test]
fn offline_with_an_empty_cache_lists_what_it_could_not_prove() {
    let env = TestContext::new().in_repo_root();
    let input = resource_list(
        "{url: \"https://catalogs.invalid/a.yaml\"}",
        &["https://catalogs.invalid/*", "oci://registry.invalid/*"],
        "",
    );
    let input = input.replace("    - {url: \"https://catalogs.invalid/a.yaml\"}\n", "    - {url: \"https://catalogs.invalid/a.yaml\"}\n    - {oci: \"registry.invalid/c:v1\"}\n");
    let input = input.replace(ONLINE, OFFLINE);
    let out = env.run(&[], &input);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("offline: https://catalogs.invalid/a.yaml is not in the cache at"),
        "{text}"
    );
    assert!(
        text.contains("offline: oci://registry.invalid/c:v1 is not in the cache at"),
        "{text}"
    );
    assert!(text.contains("catalog pull"), "{text}");
}

#[test]
fn a_network_less_run_fails_fast_and_says_how_to_prepare_a_cache() {
    let env = TestContext::new().in_repo_root();
    // Port 1 on loopback refuses connections at once, as a container without network does.
    let url = "https://127.0.0.1:1/catalog.yaml";
    let started = Instant::now();
    let out = env.run(&[], &trusted_url(url));
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("cannot connect")
            && text.contains("krm-catalog catalog pull https://127.0.0.1:1/catalog.yaml"),
        "{text}"
    );
    assert_within(started, Duration::from_secs(10));
}

#[test]
fn oci_artifacts_by_tag_and_by_digest() {
    let test = test_name!();
    if !have("docker-registry", test) || !have("skopeo", test) {
        return;
    }
    let registry = Registry::start();
    let file_digest = push(
        &registry.addr,
        "catalogs/team:v1",
        CATALOG.as_bytes(),
        "catalog.yaml",
    );
    let bundle = archive::pack(&[
        ("services/remote-app.yaml", BUNDLE_SERVICE.as_bytes()),
        ("charts/remote-app/cm.yaml.j2", BUNDLE_TEMPLATE.as_bytes()),
    ]);
    let bundle_digest = push(
        &registry.addr,
        "catalogs/bundle:v1",
        &bundle,
        "bundle.tar.gz",
    );
    let env = TestContext::new().in_repo_root();
    let trusted = format!("{}/catalogs/*", registry.addr);
    for (reference, expected) in [
        (
            format!("{}/catalogs/team:v1", registry.addr),
            "greeting: hello",
        ),
        (
            format!("{}/catalogs/team@{file_digest}", registry.addr),
            "greeting: hello",
        ),
        (
            format!("{}/catalogs/bundle:v1", registry.addr),
            "name: demo-from-bundle",
        ),
        (
            format!("{}/catalogs/bundle:v1@{bundle_digest}", registry.addr),
            "name: demo-from-bundle",
        ),
    ] {
        let out = env.run(
            &[],
            &resource_list(&format!("{{oci: \"{reference}\"}}"), &[&trusted], ""),
        );
        assert!(out.status.success(), "{reference}: {}", stderr(&out));
        assert!(
            stdout(&out).contains(expected),
            "{reference}: {}",
            stdout(&out)
        );
    }
    // A digest that is not the manifest's: fail closed.
    let wrong = format!("{}/catalogs/team@sha256:{}", registry.addr, "1".repeat(64));
    let out = TestContext::new().in_repo_root().run(
        &[],
        &resource_list(&format!("{{oci: \"{wrong}\"}}"), &[&trusted], ""),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("catalog oci://")
            && (stderr(&out).contains("not found") || stderr(&out).contains("mismatch")),
        "{}",
        stderr(&out)
    );
    // Pull for offline use (into a cache of its own), then resolve offline with the registry
    // gone.
    let pulled = TestContext::new().in_repo_root();
    let tag = format!("oci://{}/catalogs/team:v1", registry.addr);
    let out = pulled.run(&["catalog", "pull", &tag], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with(&format!("pulled {tag}")),
        "{}",
        stdout(&out)
    );
    drop(registry);
    let input = resource_list(
        &format!("{{oci: \"{}\"}}", tag.trim_start_matches("oci://")),
        &[&trusted],
        "",
    )
    .replace(ONLINE, OFFLINE);
    let out = pulled.run(&[], &input);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn oci_registry_5xx_is_retried() {
    let test = test_name!();
    if !have("docker-registry", test) || !have("skopeo", test) || !have("python3", test) {
        return;
    }
    let registry = Registry::start();
    push(
        &registry.addr,
        "catalogs/team:v1",
        CATALOG.as_bytes(),
        "catalog.yaml",
    );
    // The proxy answers 503 to the first two manifest requests.
    let proxy = Server::start(None, Some((&registry.addr, 2)));
    let env = TestContext::new().in_repo_root();
    let reference = format!("127.0.0.1:{}/catalogs/team:v1", proxy.port);
    let out = env.run(
        &[],
        &resource_list(
            &format!("{{oci: \"{reference}\"}}"),
            &[&format!("127.0.0.1:{}/*", proxy.port)],
            "",
        ),
    );
    assert_output(&out, "greeting: hello");
    let log = proxy.log();
    assert!(
        log.lines().filter(|l| l.contains("/manifests/")).count() >= 3,
        "two 503s, then the manifest:\n{log}"
    );
}

#[test]
fn resolution_order_builtin_local_remote_inline() {
    let Some((_tls, server, env)) = https_setup(test_name!()) else {
        return;
    };
    let url = server.url("catalog.yaml");
    // A local catalog and a remote one both define remote-app: an error naming both...
    env.write("local/services/remote-app.yaml", BUNDLE_SERVICE);
    let local = env.path().join("local");
    let catalogs = format!(
        "{{path: \"{}\"}}\n    - {{url: \"{url}\"}}",
        local.display()
    );
    let out = env.run(&[], &resource_list(&catalogs, &[&url], ""));
    assert_fails_with(
        &out,
        &format!(
            "service definition \"remote-app\" already exists in catalog {}",
            local.display()
        ),
    );
    // ...and with catalogOverwrite the later (remote) catalog wins.
    let out = env.run(
        &[],
        &resource_list(&catalogs, &[&url], "    catalogOverwrite: true\n"),
    );
    assert_output(&out, "greeting: hello");
    // An inline definition comes last of all and, with catalogOverwrite, replaces the remote one.
    let inline = "- apiVersion: kubara.io/v1alpha1\n  kind: ServiceDefinition\n  metadata:\n    name: remote-app\n  spec:\n    chartPath: remote-app\n    status: enabled\n    templates:\n      cm.yaml.j2: |\n        apiVersion: v1\n        kind: ConfigMap\n        metadata:\n          name: inline-wins\nfunctionConfig:";
    let input = resource_list(&catalogs, &[&url], "    catalogOverwrite: true\n").replacen(
        "functionConfig:",
        inline,
        1,
    );
    let out = env.run(&[], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("name: inline-wins") && !stdout(&out).contains("greeting: hello"),
        "{}",
        stdout(&out)
    );
}

/// Inside a container without network (as kpt and kustomize run functions): a remote catalog
/// fails fast with the message that says how to prepare a cache, and a cache prepared with
/// `catalog pull` and mounted read-only makes the same run succeed.
#[test]
fn network_less_container_uses_a_mounted_cache() {
    let test = test_name!();
    let Ok(image) = std::env::var("KRM_CATALOG_IMAGE") else {
        skipped(
            test,
            "KRM_CATALOG_IMAGE is not set (scripts/test builds the image)",
        );
        return;
    };
    if !have("docker", test) || !have("python3", test) {
        return;
    }
    let server = Server::start(None, None);
    server.put("catalog.yaml", CATALOG.as_bytes());
    let url = server.url("catalog.yaml");
    let pin = sha256_hex(CATALOG.as_bytes());
    let input = resource_list(
        &format!("{{url: \"{url}\", sha256: \"{pin}\"}}"),
        &[&url],
        "",
    );
    let docker = |cache: Option<&std::path::Path>| {
        let mut cmd = Command::new("docker");
        cmd.args(DOCKER_RUN);
        if let Some(c) = cache {
            cmd.arg("-v")
                .arg(format!("{}:/cache:ro", c.display()))
                .args(["-e", "KRM_CATALOG_CACHE=/cache"]);
        }
        feed(cmd.arg(&image), &input, &[])
    };
    let started = Instant::now();
    let out = docker(None);
    assert_eq!(out.status.code(), Some(1));
    assert_within(started, Duration::from_secs(15));
    assert!(
        stderr(&out).contains(&format!("krm-catalog catalog pull {url}")),
        "{}",
        stderr(&out)
    );

    let pulling = TestContext::new().in_repo_root();
    let pulled = pulling.run(&["catalog", "pull", &format!("{url}#sha256={pin}")], "");
    assert!(pulled.status.success(), "{}", stderr(&pulled));
    // The container runs as nobody: the mounted cache must be readable by it.
    let _ = Command::new("chmod")
        .arg("-R")
        .arg("a+rX")
        .arg(pulling.cache())
        .status();
    let out = docker(Some(pulling.cache()));
    assert_output(&out, "greeting: hello");
}

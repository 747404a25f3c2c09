//! Remote catalogs against real servers on loopback: an HTTPS server with a test CA
//! (`tests/support/catalog_server.py`, which also injects failures and counts requests) and
//! Debian's `docker-registry`, with artifacts pushed by `skopeo` from OCI layouts built here.
//! Tests print `SKIPPED …` when python3, openssl, docker-registry or skopeo are missing
//! (`.ci/run` installs them).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use krm_catalog::remote::archive;
use krm_catalog::verify::sha256_hex;

use crate::util::{TestContext, root, run_env, stderr, stdout, succeed, test_name};

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

pub(crate) fn tool(name: &str, test: &str) -> bool {
    let ok = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        crate::util::skipped(
            test,
            &format!("`{name}` is not installed (.ci/run installs it)"),
        );
    }
    ok
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// A test CA and a server certificate for 127.0.0.1 and localhost.
pub(crate) struct Tls {
    _dir: tempfile::TempDir,
    pub(crate) ca: PathBuf,
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
}

pub(crate) fn tls() -> Tls {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let sh = format!(
        "set -e; cd {}; \
         openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=krm-catalog-test-ca 2>/dev/null; \
         openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null; \
         printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > ext; \
         openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext 2>/dev/null",
        d.display()
    );
    let status = Command::new("sh")
        .arg("-c")
        .arg(sh)
        .status()
        .expect("openssl");
    assert!(status.success(), "creating the test CA failed");
    Tls {
        ca: d.join("ca.pem"),
        cert: d.join("server.pem"),
        key: d.join("server.key"),
        _dir: dir,
    }
}

/// `tests/support/catalog_server.py` on a random port.
pub(crate) struct Server {
    child: Child,
    port: u16,
    scheme: &'static str,
    log: PathBuf,
    root: tempfile::TempDir,
}

impl Server {
    pub(crate) fn start(tls: Option<&Tls>, proxy: Option<(&str, usize)>) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("requests.log");
        fs_err::write(&log, "").expect("log");
        let mut cmd = Command::new("python3");
        cmd.arg(root().join("tests/support/catalog_server.py"))
            .arg(dir.path())
            .arg(&log);
        if let Some(t) = tls {
            cmd.arg("--cert").arg(&t.cert).arg("--key").arg(&t.key);
        }
        if let Some((p, failures)) = proxy {
            cmd.arg("--proxy")
                .arg(p)
                .arg("--fail-manifests")
                .arg(failures.to_string());
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3");
        let mut line = String::new();
        {
            use std::io::BufRead as _;
            let out = child.stdout.take().expect("stdout");
            std::io::BufReader::new(out)
                .read_line(&mut line)
                .expect("port");
        }
        let port = line.trim().parse().expect("port number");
        Self {
            child,
            port,
            scheme: if tls.is_some() { "https" } else { "http" },
            log,
            root: dir,
        }
    }

    pub(crate) fn put(&self, name: &str, bytes: &[u8]) {
        fs_err::write(self.root.path().join(name), bytes).expect("write");
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}://127.0.0.1:{}/{path}", self.scheme, self.port)
    }

    pub(crate) fn requests(&self) -> usize {
        fs_err::read_to_string(&self.log).map_or(0, |t| t.lines().count())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Debian's docker-registry on a random port with a temp store.
pub(crate) struct Registry {
    child: Child,
    pub(crate) addr: String,
    _dir: tempfile::TempDir,
}

impl Registry {
    pub(crate) fn start() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let addr = format!("127.0.0.1:{}", free_port());
        let config = dir.path().join("config.yml");
        fs_err::write(
            &config,
            format!("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n", dir.path().join("store").display()),
        )
        .expect("config");
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(Instant::now() < deadline, "docker-registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            child,
            addr,
            _dir: dir,
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Package a catalog file with `scripts/oci-layout` (what the README documents) and push it
/// with skopeo; returns the manifest digest. `title` decides the layer type (`.tar.gz`: bundle).
fn push(registry: &str, repo_tag: &str, layer: &[u8], title: &str) -> String {
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

fn https_setup(test: &str) -> Option<(Tls, Server)> {
    if !tool("python3", test) || !tool("openssl", test) {
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
    Some((tls, server))
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
    let Some((tls, server)) = https_setup(test_name!()) else {
        return;
    };
    let env = TestContext::new().with_ca(&tls.ca).in_repo_root();
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
    let offline = input.replace(
        "    builtin: false\n",
        "    builtin: false\n    offline: true\n",
    );
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
    let Some((tls, server)) = https_setup(test_name!()) else {
        return;
    };
    let env = TestContext::new().with_ca(&tls.ca).in_repo_root();
    let url = server.url("bundle.tar.gz");
    let out = env.run(
        &[],
        &resource_list(&format!("{{url: \"{url}\"}}"), &[&server.url("*")], ""),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("name: demo-from-bundle"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn https_errors_are_clear() {
    let Some((tls, server)) = https_setup(test_name!()) else {
        return;
    };
    let env = TestContext::new().with_ca(&tls.ca).in_repo_root();
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
    let Some((tls, server)) = https_setup(test_name!()) else {
        return;
    };
    let env = TestContext::new().with_ca(&tls.ca).in_repo_root();
    let url = server.url("fail/2/retry/catalog.yaml");
    let out = env.run(
        &[],
        &resource_list(&format!("{{url: \"{url}\"}}"), &[&url], ""),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests(), 3, "two 503s, then the file");
    // More failures than retries: the error says it gave up and what to do.
    let url = server.url("fail/9/exhaust/catalog.yaml");
    let out = env.run_with(
        &[],
        &resource_list(&format!("{{url: \"{url}\"}}"), &[&url], ""),
        &[("KRM_CATALOG_HTTP_RETRIES", "1")],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("HTTP 503 Service Unavailable (gave up after 2 attempts; try again later, or raise KRM_CATALOG_HTTP_RETRIES)"),
        "{}",
        stderr(&out)
    );
    let url = server.url("hang/catalog.yaml");
    let started = Instant::now();
    let out = env.run_with(
        &[],
        &resource_list(&format!("{{url: \"{url}\"}}"), &[&url], ""),
        &[
            ("KRM_CATALOG_HTTP_TIMEOUT", "1"),
            ("KRM_CATALOG_HTTP_RETRIES", "0"),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no answer within 1s"),
        "{}",
        stderr(&out)
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
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
    let input = input.replace(
        "    builtin: false\n",
        "    builtin: false\n    offline: true\n",
    );
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
    let out = env.run(
        &[],
        &resource_list(&format!("{{url: \"{url}\"}}"), &[url], ""),
    );
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("cannot connect")
            && text.contains("krm-catalog catalog pull https://127.0.0.1:1/catalog.yaml"),
        "{text}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn oci_artifacts_by_tag_and_by_digest() {
    let test = test_name!();
    if !tool("docker-registry", test) || !tool("skopeo", test) {
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
    // Pull for offline use, then resolve offline with the registry gone.
    let cache = tempfile::tempdir().expect("cache");
    let tag = format!("oci://{}/catalogs/team:v1", registry.addr);
    let out = run_env(
        &["catalog", "pull", &tag],
        "",
        &root(),
        &[("KRM_CATALOG_CACHE", &cache.path().to_string_lossy())],
    );
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
    .replace(
        "    builtin: false\n",
        "    builtin: false\n    offline: true\n",
    );
    let out = run_env(
        &[],
        &input,
        &root(),
        &[("KRM_CATALOG_CACHE", &cache.path().to_string_lossy())],
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn oci_registry_5xx_is_retried() {
    let test = test_name!();
    if !tool("docker-registry", test) || !tool("skopeo", test) || !tool("python3", test) {
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
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("greeting: hello"), "{}", stdout(&out));
    let log = fs_err::read_to_string(&proxy.log).unwrap_or_default();
    assert!(
        log.lines().filter(|l| l.contains("/manifests/")).count() >= 3,
        "two 503s, then the manifest:\n{log}"
    );
}

#[test]
fn resolution_order_builtin_local_remote_inline() {
    let Some((tls, server)) = https_setup(test_name!()) else {
        return;
    };
    let env = TestContext::new().with_ca(&tls.ca).in_repo_root();
    let url = server.url("catalog.yaml");
    // A local catalog and a remote one both define remote-app: an error naming both...
    let local = tempfile::tempdir().expect("local");
    fs_err::create_dir_all(local.path().join("services")).expect("mkdir");
    fs_err::write(
        local.path().join("services/remote-app.yaml"),
        BUNDLE_SERVICE,
    )
    .expect("write");
    let catalogs = format!(
        "{{path: \"{}\"}}\n    - {{url: \"{url}\"}}",
        local.path().display()
    );
    let out = env.run(&[], &resource_list(&catalogs, &[&url], ""));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!(
            "service definition \"remote-app\" already exists in catalog {}",
            local.path().display()
        )),
        "{}",
        stderr(&out)
    );
    // ...and with catalogOverwrite the later (remote) catalog wins.
    let out = env.run(
        &[],
        &resource_list(&catalogs, &[&url], "    catalogOverwrite: true\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("greeting: hello"), "{}", stdout(&out));
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
        crate::util::skipped(
            test,
            "KRM_CATALOG_IMAGE is not set (scripts/test builds the image)",
        );
        return;
    };
    if !tool("docker", test) || !tool("python3", test) {
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
        cmd.args([
            "run",
            "--rm",
            "-i",
            "--network",
            "none",
            "--user",
            "nobody",
            "--read-only",
        ]);
        if let Some(c) = cache {
            cmd.arg("-v")
                .arg(format!("{}:/cache:ro", c.display()))
                .args(["-e", "KRM_CATALOG_CACHE=/cache"]);
        }
        cmd.arg(&image)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("docker");
        {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("stdin");
        }
        child.wait_with_output().expect("docker")
    };
    let started = Instant::now();
    let out = docker(None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        stderr(&out).contains(&format!("krm-catalog catalog pull {url}")),
        "{}",
        stderr(&out)
    );

    let cache = tempfile::tempdir().expect("cache");
    let pulled = run_env(
        &["catalog", "pull", &format!("{url}#sha256={pin}")],
        "",
        &root(),
        &[("KRM_CATALOG_CACHE", &cache.path().to_string_lossy())],
    );
    assert!(pulled.status.success(), "{}", stderr(&pulled));
    // The container runs as nobody: the mounted cache must be readable by it.
    let _ = Command::new("chmod")
        .arg("-R")
        .arg("a+rX")
        .arg(cache.path())
        .status();
    let out = docker(Some(cache.path()));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("greeting: hello"), "{}", stdout(&out));
}

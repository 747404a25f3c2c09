//! Issue 9, the network and download findings, against hostile servers on loopback
//! (`tests/support/hostile_server.py`: redirects, endless bodies, a fake OCI registry that
//! lies about sizes) and a stock `python3 -m http.server`. Memory-sensitive runs go under an
//! address-space limit (`prlimit --as`), so a regression fails the test instead of taking the
//! machine down. Tests print `SKIPPED …` when python3, openssl or prlimit are missing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use krm_catalog::verify::sha256_hex;

use crate::remote::{CATALOG, Tls, free_port, resource_list, tls, tool};
use crate::util::{TestContext, bin, root, stderr, stdout, test_name};

/// Address space for a run that must stay bounded: far above what a bounded run needs, far
/// below what the unbounded code took (gigabytes).
const ADDRESS_SPACE: u64 = 1 << 30;

/// A catalog that must never load: its default greeting says so.
fn evil_catalog() -> String {
    CATALOG.replace("default: hello", "default: evil-was-loaded")
}

/// `tests/support/hostile_server.py` on a random port, serving files from a temp dir.
struct Hostile {
    child: Child,
    port: u16,
    scheme: &'static str,
    host: &'static str,
    root: tempfile::TempDir,
}

impl Hostile {
    fn start(tls: Option<&Tls>) -> Self {
        let root_dir = tempfile::tempdir().expect("tempdir");
        let mut cmd = Command::new("python3");
        cmd.arg(root().join("tests/support/hostile_server.py"))
            .arg(root_dir.path());
        if let Some(t) = tls {
            cmd.arg("--cert").arg(&t.cert).arg("--key").arg(&t.key);
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
        Self {
            child,
            port: line.trim().parse().expect("port number"),
            scheme: if tls.is_some() { "https" } else { "http" },
            host: if tls.is_some() {
                "localhost"
            } else {
                "127.0.0.1"
            },
            root: root_dir,
        }
    }

    fn put(&self, name: &str, bytes: &[u8]) {
        fs_err::write(self.root.path().join(name), bytes).expect("write");
    }

    fn url(&self, path: &str) -> String {
        format!("{}://{}:{}/{path}", self.scheme, self.host, self.port)
    }

    /// The registry address (`host:port`) for `oci://` references.
    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run the binary in `cwd` with the given environment, under an address-space limit.
fn bounded(args: &[&str], stdin: &str, cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={ADDRESS_SPACE}"))
        .arg("--")
        .arg(bin())
        .args(args)
        .current_dir(cwd);
    crate::util::feed(&mut cmd, stdin, env)
}

fn assert_failed_with(out: &Output, needle: &str, context: &str) {
    assert_eq!(
        out.status.code(),
        Some(1),
        "{context}: expected exit 1 (a crash under the memory limit is the regression):\n{}",
        stderr(out)
    );
    assert!(
        stderr(out).contains(needle),
        "{context}: expected {needle:?} in:\n{}",
        stderr(out)
    );
}

/// Every regular file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs_err::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn issue9_f5_redirect_to_untrusted_host_is_refused() {
    let test = test_name!();
    if !tool("python3", test) || !tool("openssl", test) {
        return;
    }
    let tls = tls();
    let trusted_server = Hostile::start(Some(&tls));
    // The "other host": plain HTTP on another port (loopback, so only trust can refuse it).
    let other = Hostile::start(None);
    let evil = evil_catalog();
    other.put("evil.yaml", evil.as_bytes());
    let env = TestContext::new().with_ca(&tls.ca).in_repo_root();
    let trusted = trusted_server.url("*");
    let hop = other.url("evil.yaml");
    let url = trusted_server.url(&format!("redirect/301?to={hop}"));

    // Unpinned: the hop must be trusted too.
    let out = env.run(
        &[],
        &resource_list(&format!("{{url: \"{url}\"}}"), &[&trusted], ""),
    );
    assert_failed_with(
        &out,
        &format!("refused the redirect to {hop}: not trusted; add it to spec.trustedCatalogs"),
        "untrusted hop",
    );
    assert!(
        !stdout(&out).contains("evil-was-loaded"),
        "{}",
        stdout(&out)
    );

    // A trusted hop is followed.
    let out = env.run(
        &[],
        &resource_list(
            &format!("{{url: \"{url}\"}}"),
            &[&trusted, &other.url("*")],
            "",
        ),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("evil-was-loaded"), "{}", stdout(&out));

    // Pinned: the bytes prove themselves, so any https-or-loopback hop will do.
    let pinned = format!(
        "{{url: \"{url}\", sha256: \"{}\"}}",
        sha256_hex(evil.as_bytes())
    );
    let out = TestContext::new()
        .with_ca(&tls.ca)
        .in_repo_root()
        .run(&[], &resource_list(&pinned, &[&trusted], ""));
    assert!(out.status.success(), "{}", stderr(&out));

    // Plain HTTP to a host that is not loopback: refused whatever is trusted, without a try.
    let plain = "http://example.invalid/evil.yaml";
    let url = trusted_server.url(&format!("redirect/302?to={plain}"));
    let out = env.run(
        &[],
        &resource_list(
            &format!("{{url: \"{url}\"}}"),
            &[&trusted, "http://example.invalid/*"],
            "",
        ),
    );
    assert_failed_with(
        &out,
        &format!(
            "refused the redirect to {plain}: plain HTTP is refused except for loopback hosts"
        ),
        "plain-http hop",
    );

    // `catalog view` (no trust list: it is how trust is decided) still keeps to https.
    let ca = tls.ca.to_string_lossy().into_owned();
    let cache = tempfile::tempdir().expect("cache");
    let view_env = [
        ("KRM_CATALOG_CA_FILE", ca.as_str()),
        ("KRM_CATALOG_HTTP_TIMEOUT", "5"),
        ("KRM_CATALOG_CACHE", cache.path().to_str().expect("utf-8")),
    ];
    let out = bounded(&["catalog", "view", &url], "", &root(), &view_env);
    assert_failed_with(
        &out,
        &format!("refused the redirect to {plain}: plain HTTP"),
        "catalog view",
    );
}

#[test]
fn issue9_f5_exec_download_redirect_to_plain_http_is_refused() {
    let test = test_name!();
    if !tool("python3", test) || !tool("openssl", test) {
        return;
    }
    let tls = tls();
    let server = Hostile::start(Some(&tls));
    let plain = "http://example.invalid/fn";
    let uri = server.url(&format!("redirect/307?to={plain}"));
    let (os, arch) = krm_catalog::runtime::exec::this_platform();
    let dir = tempfile::tempdir().expect("dir");
    fs_err::write(
        dir.path().join("catalog.yaml"),
        format!(
            "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionCatalog\nmetadata:\n  name: acme\nspec:\n  krmFunctions:\n  - group: fn.acme.dev\n    names:\n      kind: Echo\n    versions:\n    - name: v1\n      runtime:\n        exec:\n          platforms:\n          - bin: fn\n            os: {os}\n            arch: {arch}\n            uri: \"{uri}\"\n"
        ),
    )
    .expect("write");
    let ca = tls.ca.to_string_lossy().into_owned();
    let cache = tempfile::tempdir().expect("cache");
    let out = bounded(
        &["catalog", "lock", "catalog.yaml"],
        "",
        dir.path(),
        &[
            ("KRM_CATALOG_CA_FILE", ca.as_str()),
            ("KRM_CATALOG_HTTP_TIMEOUT", "5"),
            ("KRM_CATALOG_CACHE", cache.path().to_str().expect("utf-8")),
        ],
    );
    assert_failed_with(
        &out,
        &format!(
            "refused the redirect to {plain}: plain HTTP is refused except for loopback hosts"
        ),
        "exec download",
    );
}

/// `python3 -m http.server` on a free port, serving `dir`.
struct Static(Child);

impl Drop for Static {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn issue9_f6_encoded_dot_dot_cannot_escape_a_trusted_prefix() {
    let test = test_name!();
    if !tool("python3", test) {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    fs_err::create_dir_all(dir.path().join("trusted")).expect("mkdir");
    fs_err::write(dir.path().join("trusted/ok.yaml"), CATALOG).expect("write");
    fs_err::write(dir.path().join("evil.yaml"), evil_catalog()).expect("write");
    let port = free_port();
    let _server = Static(
        Command::new("python3")
            .args([
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                &port.to_string(),
            ])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3"),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "http.server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let base = format!("http://127.0.0.1:{port}");
    let trusted = format!("{base}/trusted/*");
    let env = TestContext::new().in_repo_root();
    // The stock server resolves the escape to /evil.yaml (the attack works against it).
    let out = env.run(
        &[],
        &resource_list(
            &format!("{{url: \"{base}/trusted/ok.yaml\"}}"),
            &[&trusted],
            "",
        ),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for (escape, needle) in [
        ("trusted/..%2fevil.yaml", "hides a separator (%2f or %5c)"),
        ("trusted/..%2Fevil.yaml", "hides a separator (%2f or %5c)"),
        ("trusted/%2e%2e/evil.yaml", "has a \"%2e%2e\" segment"),
        ("trusted/../evil.yaml", "has a \"..\" segment"),
    ] {
        let out = env.run(
            &[],
            &resource_list(&format!("{{url: \"{base}/{escape}\"}}"), &[&trusted], ""),
        );
        assert_failed_with(&out, needle, escape);
        assert!(
            !stdout(&out).contains("evil-was-loaded"),
            "{escape}: {}",
            stdout(&out)
        );
    }
}

#[test]
fn issue9_f7_oci_manifests_and_blobs_are_bounded() {
    let test = test_name!();
    if !tool("python3", test) || !tool("prlimit", test) {
        return;
    }
    let registry = Hostile::start(None);
    let addr = registry.addr();
    let cache = tempfile::tempdir().expect("cache");
    let cache_path = cache.path().to_str().expect("utf-8");
    let env = [
        ("KRM_CATALOG_CACHE", cache_path),
        ("KRM_CATALOG_HTTP_TIMEOUT", "20"),
        ("KRM_CATALOG_HTTP_RETRIES", "0"),
    ];
    let cases = [
        (
            "view",
            "endless-manifest",
            "is more than the limit of 4194304 bytes; raise KRM_CATALOG_MAX_MANIFEST_BYTES if this is expected",
        ),
        (
            "view",
            "endless-blob",
            "the body is more than the 100 bytes its descriptor declares",
        ),
        (
            "pull",
            "lying-blob",
            "16777216 bytes is more than the 100 bytes its descriptor declares",
        ),
        (
            "pull",
            "huge-blob",
            "the catalog layers declare 1099511627776 bytes, more than the limit of 67108864 bytes; raise KRM_CATALOG_MAX_DOWNLOAD_BYTES",
        ),
    ];
    for (command, mode, needle) in cases {
        let reference = format!("oci://{addr}/{mode}/catalog:v1");
        let started = Instant::now();
        let out = bounded(&["catalog", command, &reference], "", &root(), &env);
        assert_failed_with(&out, needle, &format!("catalog {command} {mode}"));
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{mode}: took {:?}",
            started.elapsed()
        );
    }
    // A run that loads a trusted catalog from the same registry.
    let input = resource_list(
        &format!("{{oci: \"{addr}/endless-blob/catalog:v1\"}}"),
        &[&format!("{addr}/*")],
        "",
    );
    let out = bounded(&[], &input, &root(), &env);
    assert_failed_with(&out, "its descriptor declares", "function run");
    // Image digests for `catalog verify`/`lock`/verifyTags go through the same bound.
    let dir = tempfile::tempdir().expect("dir");
    fs_err::write(
        dir.path().join("catalog.yaml"),
        format!(
            "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionCatalog\nmetadata:\n  name: acme\nspec:\n  krmFunctions:\n  - group: fn.acme.dev\n    names:\n      kind: Echo\n    versions:\n    - name: v1\n      runtime:\n        container:\n          image: {addr}/endless-manifest/fn:v1\n          sha256: {}\n",
            "ab".repeat(32)
        ),
    )
    .expect("write");
    let out = bounded(&["catalog", "verify", "catalog.yaml"], "", dir.path(), &env);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("raise KRM_CATALOG_MAX_MANIFEST_BYTES"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    // `catalog lock` asks the registry for the digest of an unpinned tag: bounded the same way.
    let catalog = fs_err::read_to_string(dir.path().join("catalog.yaml")).expect("read");
    let unpinned = catalog
        .lines()
        .filter(|l| !l.contains("sha256:"))
        .collect::<Vec<_>>()
        .join("\n");
    fs_err::write(dir.path().join("catalog.yaml"), unpinned).expect("write");
    let out = bounded(&["catalog", "lock", "catalog.yaml"], "", dir.path(), &env);
    assert_failed_with(&out, "raise KRM_CATALOG_MAX_MANIFEST_BYTES", "catalog lock");
    // Nothing that failed was cached.
    assert!(
        !files_under(cache.path())
            .iter()
            .any(|p| p.starts_with(cache.path().join("blobs"))),
        "{:?}",
        files_under(cache.path())
    );
}

/// Run python3 code with arguments; it must succeed.
fn python(code: &str, args: &[&str]) {
    crate::util::succeed(Command::new("python3").arg("-c").arg(code).args(args));
}

/// A 3 MB zip whose one entry `fn` unpacks to 3 GiB of zeros: one deflate chunk repeated
/// (a full flush makes every chunk compress to the same bytes), written by hand.
const ZIP_BOMB: &str = r#"
import struct, sys, zlib
chunk = bytes(1 << 20)
co = zlib.compressobj(9, zlib.DEFLATED, -15)
block = co.compress(chunk) + co.flush(zlib.Z_FULL_FLUSH)
end = co.flush(zlib.Z_FINISH)
n = 3072
crc = 0
for _ in range(n):
    crc = zlib.crc32(chunk, crc)
size, csize, name = n << 20, len(block) * n + len(end), b"fn"
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 8, 0, 0x21, crc, csize, size, len(name), 0) + name)
    for _ in range(n):
        f.write(block)
    f.write(end)
    offset = f.tell()
    cd = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 0x031e, 20, 0, 8, 0, 0x21, crc, csize, size, len(name), 0, 0, 0, 0, 0o100755 << 16, 0) + name
    f.write(cd)
    f.write(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 1, 1, len(cd), offset, 0))
"#;

/// A `.tar.gz` of about 200 KB holding one 200 MB YAML file (a valid list).
const TAR_BOMB: &str = r#"
import io, sys, tarfile
class Yaml(io.RawIOBase):
    def __init__(self, size):
        self.left = size
    def readable(self):
        return True
    def readinto(self, b):
        n = min(len(b), self.left)
        line = b"- value\n" * (n // 8 + 1)
        b[:n] = line[:n]
        self.left -= n
        return n
size = 200 * 1000 * 1000
with tarfile.open(sys.argv[1], "w:gz", compresslevel=9) as t:
    info = tarfile.TarInfo("services/big.yaml")
    info.size = size
    t.addfile(info, io.BufferedReader(Yaml(size), 1 << 20))
"#;

#[test]
fn issue9_f10_zip_bomb_exec_archive_fails_and_leaves_nothing_in_the_cache() {
    let test = test_name!();
    if !tool("python3", test) || !tool("openssl", test) || !tool("prlimit", test) {
        return;
    }
    let tls = tls();
    let server = Hostile::start(Some(&tls));
    let bomb = server.root.path().join("fn.zip");
    python(ZIP_BOMB, &[bomb.to_str().expect("utf-8")]);
    let bytes = fs_err::read(&bomb).expect("read");
    assert!(bytes.len() < 4 << 20, "{} bytes", bytes.len());
    let (os, arch) = krm_catalog::runtime::exec::this_platform();
    let dir = tempfile::tempdir().expect("dir");
    fs_err::write(
        dir.path().join("catalog.yaml"),
        format!(
            "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionCatalog\nmetadata:\n  name: acme\nspec:\n  krmFunctions:\n  - group: fn.acme.dev\n    names:\n      kind: Echo\n    versions:\n    - name: v1\n      runtime:\n        exec:\n          platforms:\n          - bin: fn\n            os: {os}\n            arch: {arch}\n            uri: \"{}\"\n            sha256: {}\n",
            server.url("fn.zip"),
            sha256_hex(&bytes)
        ),
    )
    .expect("write");
    let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: demo\n  data:\n    greeting: hello\n- apiVersion: fn.acme.dev/v1\n  kind: Echo\n  metadata:\n    name: step\nfunctionConfig:\n  apiVersion: krm-catalog.dev/v1alpha1\n  kind: ResolveCatalog\n  metadata:\n    name: fns\n  spec:\n    builtin: false\n    catalogs:\n    - path: catalog.yaml\n    functions: {mode: run, allowExec: true}\n";
    let ca = tls.ca.to_string_lossy().into_owned();
    let cache = tempfile::tempdir().expect("cache");
    let started = Instant::now();
    let out = bounded(
        &[],
        input,
        dir.path(),
        &[
            ("KRM_CATALOG_CA_FILE", ca.as_str()),
            ("KRM_CATALOG_HTTP_TIMEOUT", "20"),
            ("KRM_CATALOG_CACHE", cache.path().to_str().expect("utf-8")),
        ],
    );
    assert_failed_with(
        &out,
        "fn.zip: entry \"fn\" unpacks to more than 268435456 bytes; raise KRM_CATALOG_MAX_DOWNLOAD_BYTES",
        "zip bomb",
    );
    assert!(
        stdout(&out).contains("greeting: hello"),
        "lost the input: {}",
        stdout(&out)
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(files_under(cache.path()), Vec::<PathBuf>::new());
}

#[test]
fn issue9_f8_tar_gz_bundle_of_200_mb_yaml_fails_fast() {
    let test = test_name!();
    if !tool("python3", test) || !tool("openssl", test) || !tool("prlimit", test) {
        return;
    }
    let tls = tls();
    let server = Hostile::start(Some(&tls));
    let bomb = server.root.path().join("big.tar.gz");
    python(TAR_BOMB, &[bomb.to_str().expect("utf-8")]);
    let size = fs_err::metadata(&bomb).expect("stat").len();
    assert!(size < 1 << 20, "{size} bytes");
    let url = server.url("big.tar.gz");
    let ca = tls.ca.to_string_lossy().into_owned();
    let cache = tempfile::tempdir().expect("cache");
    let env = [
        ("KRM_CATALOG_CA_FILE", ca.as_str()),
        ("KRM_CATALOG_HTTP_TIMEOUT", "20"),
        ("KRM_CATALOG_CACHE", cache.path().to_str().expect("utf-8")),
    ];
    let needle = "entry \"services/big.yaml\" unpacks to more than 16777216 bytes; raise KRM_CATALOG_MAX_CATALOG_FILE_BYTES if this is expected";
    let started = Instant::now();
    let input = resource_list(&format!("{{url: \"{url}\"}}"), &[&url], "");
    let out = bounded(&[], &input, &root(), &env);
    assert_failed_with(&out, &format!("catalog {url}: {needle}"), "function run");
    assert!(
        !stderr(&out).contains(&format!("catalog {url}: catalog {url}")),
        "the source is named twice:\n{}",
        stderr(&out)
    );
    let out = bounded(&["catalog", "view", &url], "", &root(), &env);
    assert_failed_with(&out, &format!("catalog {url}: {needle}"), "catalog view");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    // The total is bounded too, and says how to raise it.
    let out = bounded(
        &["catalog", "view", &url],
        "",
        &root(),
        &[
            env[0],
            env[1],
            env[2],
            ("KRM_CATALOG_MAX_CATALOG_BYTES", "1000000"),
        ],
    );
    assert_failed_with(
        &out,
        "the bundle unpacks to more than 1000000 bytes; raise KRM_CATALOG_MAX_CATALOG_BYTES",
        "total",
    );
}

#[test]
fn issue9_f10_local_catalog_skips_other_files_unread_and_bounds_yaml_files() {
    let test = test_name!();
    if !tool("prlimit", test) {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    fs_err::write(dir.path().join("catalog.yaml"), CATALOG).expect("write");
    // 3 GiB that takes no disk (sparse): reading it is the regression.
    fs_err::File::create(dir.path().join("image.bin"))
        .and_then(|f| f.set_len(3 << 30))
        .expect("sparse file");
    let input = resource_list(&format!("{{path: \"{}\"}}", dir.path().display()), &[], "");
    let out = bounded(&[], &input, &root(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("greeting: hello"), "{}", stdout(&out));
    // A YAML file above the per-file limit: refused by its size, unread.
    fs_err::create_dir_all(dir.path().join("services")).expect("mkdir");
    fs_err::File::create(dir.path().join("services/huge.yaml"))
        .and_then(|f| f.set_len(20 << 20))
        .expect("sparse file");
    let out = bounded(&[], &input, &root(), &[]);
    assert_failed_with(
        &out,
        "services/huge.yaml: 20971520 bytes is more than the limit of 16777216 bytes per catalog file; raise KRM_CATALOG_MAX_CATALOG_FILE_BYTES if this is expected",
        "huge yaml",
    );
}

#[test]
fn issue9_sha256_pins_are_checked_when_read() {
    // ConfigMap form: at parse time, pointing at the entry.
    let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn\n  data:\n    catalogs: https://example.invalid/c.yaml#sha256=\n    trusted-catalogs: https://example.invalid/*\n";
    let out = crate::util::run(&[], input, &root());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("data.catalogs[0]: \"\" after #sha256= is not a sha256 digest"),
        "{}",
        stderr(&out)
    );
    // Structured form: a pin written into the URL would pin nothing; refused, not ignored.
    let pin = "ab".repeat(32);
    let input = resource_list(
        &format!("{{url: \"https://example.invalid/c.yaml#sha256={pin}\"}}"),
        &["https://example.invalid/*"],
        "",
    );
    let out = crate::util::run(&[], &input, &root());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "the fragment \"#sha256={pin}\" pins nothing (it is never sent or checked); set the entry's sha256 field instead"
        )),
        "{}",
        stderr(&out)
    );
    // Command line: refused before any request (the host does not even resolve).
    for pin in ["", "xyz", &"A".repeat(64)] {
        let reference = format!("https://example.invalid/c.yaml#sha256={pin}");
        let out = crate::util::run(&["catalog", "pull", &reference], "", &root());
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "https://example.invalid/c.yaml: sha256 pin \"{pin}\" is not a sha256 digest"
            )),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn issue9_stale_temp_files_in_the_cache_are_cleaned() {
    let test = test_name!();
    if !tool("python3", test) {
        return;
    }
    let server = Hostile::start(None);
    server.put("catalog.yaml", CATALOG.as_bytes());
    let cache = tempfile::tempdir().expect("cache");
    let tmp = cache.path().join("tmp");
    fs_err::create_dir_all(&tmp).expect("mkdir");
    // What a writer killed an hour ago left behind.
    let stale = tmp.join("4242.deadbeef.1");
    fs_err::write(&stale, vec![0u8; 1 << 20]).expect("write");
    fs_err::File::options()
        .write(true)
        .open(&stale)
        .and_then(|f| f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600)))
        .expect("mtime");
    let out = crate::util::run_env(
        &["catalog", "pull", &server.url("catalog.yaml")],
        "",
        &root(),
        &[("KRM_CATALOG_CACHE", cache.path().to_str().expect("utf-8"))],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stale.exists(),
        "the killed writer's temp file is still there"
    );
    assert_eq!(files_under(&tmp), Vec::<PathBuf>::new());
}

/// A trusted registry that redirects a manifest request by tag to another host lets that
/// host say what the tag names: refused for runs, `catalog view` and `pull`. A reference
/// pinned by digest (proven by its bytes) may follow the redirect, as blobs do (CDNs).
#[test]
fn issue9_f5_oci_manifest_by_tag_redirected_to_another_host_is_refused() {
    let test = test_name!();
    if !tool("python3", test) || !tool("prlimit", test) {
        return;
    }
    let registry = Hostile::start(None);
    let addr = registry.addr();
    let evil = evil_catalog();
    let blob = format!("sha256:{}", sha256_hex(evil.as_bytes()));
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2}},"layers":[{{"mediaType":"application/vnd.cncf.kubernetes.krm-func-catalog.layer.v1+yaml","digest":"{blob}","size":{},"annotations":{{"org.opencontainers.image.title":"catalog.yaml"}}}}]}}"#,
        evil.len()
    );
    for dir in ["registry/cat/manifests", "registry/cat/blobs"] {
        fs_err::create_dir_all(registry.root.path().join(dir)).expect("mkdir");
    }
    registry.put("registry/cat/manifests/v1", manifest.as_bytes());
    registry.put(&format!("registry/cat/blobs/{blob}"), evil.as_bytes());
    let manifest_digest = sha256_hex(manifest.as_bytes());
    registry.put(
        &format!("registry/cat/manifests/sha256:{manifest_digest}"),
        manifest.as_bytes(),
    );
    let cache = tempfile::tempdir().expect("cache");
    let env = [
        ("KRM_CATALOG_CACHE", cache.path().to_str().expect("utf-8")),
        ("KRM_CATALOG_HTTP_TIMEOUT", "5"),
        ("KRM_CATALOG_HTTP_RETRIES", "0"),
    ];
    let needle = format!(
        "refused the redirect to http://localhost:{}/v2/files/cat/manifests/v1: a manifest by tag is read only from its registry {addr}",
        registry.port
    );
    let input = resource_list(
        &format!("{{oci: \"{addr}/to-localhost/cat:v1\"}}"),
        &[&format!("{addr}/*")],
        "",
    );
    let out = bounded(&[], &input, &root(), &env);
    assert_failed_with(&out, &needle, "function run");
    assert!(
        stdout(&out).contains("kind: ResourceList"),
        "{}",
        stdout(&out)
    );
    assert!(
        !stdout(&out).contains("evil-was-loaded"),
        "{}",
        stdout(&out)
    );
    for command in ["view", "pull"] {
        let reference = format!("oci://{addr}/to-localhost/cat:v1");
        let out = bounded(&["catalog", command, &reference], "", &root(), &env);
        assert_failed_with(&out, &needle, &format!("catalog {command}"));
    }
    // Pinned by digest: the bytes prove the manifest, the redirect may be followed.
    let input = resource_list(
        &format!("{{oci: \"{addr}/to-localhost/cat@sha256:{manifest_digest}\"}}"),
        &[&format!("{addr}/*")],
        "",
    );
    let out = bounded(&[], &input, &root(), &env);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("evil-was-loaded"), "{}", stdout(&out));
}

/// `catalog view` and `catalog pull` have no trust list, so they follow a redirect to any
/// https (or loopback) host and keep the copy. A run must not take that copy for the trusted
/// URL: it fetches again (and refuses the hop), and offline it says why the copy is not used.
#[test]
fn issue9_f5_a_copy_viewed_through_an_untrusted_redirect_is_not_used_by_a_run() {
    let test = test_name!();
    if !tool("python3", test) || !tool("prlimit", test) {
        return;
    }
    let server = Hostile::start(None);
    server.put("evil.yaml", evil_catalog().as_bytes());
    // Same server, another host name: trusted as 127.0.0.1, not as localhost.
    let hop = format!("http://localhost:{}/evil.yaml", server.port);
    let url = server.url(&format!("redirect/301?to={hop}"));
    let trusted = server.url("*");
    for command in ["view", "pull"] {
        let cache = tempfile::tempdir().expect("cache");
        let env = [
            ("KRM_CATALOG_CACHE", cache.path().to_str().expect("utf-8")),
            ("KRM_CATALOG_HTTP_TIMEOUT", "5"),
            ("KRM_CATALOG_HTTP_RETRIES", "0"),
        ];
        let out = bounded(&["catalog", command, &url], "", &root(), &env);
        assert!(out.status.success(), "catalog {command}: {}", stderr(&out));
        let input = resource_list(&format!("{{url: \"{url}\"}}"), &[&trusted], "");
        let out = bounded(&[], &input, &root(), &env);
        assert_failed_with(
            &out,
            &format!("refused the redirect to {hop}: not trusted"),
            &format!("run after catalog {command}"),
        );
        assert!(
            !stdout(&out).contains("evil-was-loaded"),
            "{}",
            stdout(&out)
        );
        let offline = resource_list(
            &format!("{{url: \"{url}\"}}"),
            &[&trusted],
            "    offline: true\n",
        );
        let out = bounded(&[], &offline, &root(), &env);
        assert_failed_with(
            &out,
            &format!("came through the redirect to {hop}, which is not trusted"),
            &format!("offline run after catalog {command}"),
        );
        assert!(
            !stdout(&out).contains("evil-was-loaded"),
            "{}",
            stdout(&out)
        );
        // Trusting the hop makes the copy usable, offline too.
        let offline = resource_list(
            &format!("{{url: \"{url}\"}}"),
            &[&trusted, &format!("http://localhost:{}/*", server.port)],
            "    offline: true\n",
        );
        let out = bounded(&[], &offline, &root(), &env);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("evil-was-loaded"), "{}", stdout(&out));
    }
}

/// A server that sends its body one byte a second runs into the request time limit: the
/// message says so and names the variable that allows more time (before: "the body was cut
/// off … operation timed out", which reads like a broken connection).
#[test]
fn issue9_f7_a_trickling_body_fails_at_the_time_limit_and_says_which() {
    let test = test_name!();
    if !tool("python3", test) || !tool("prlimit", test) {
        return;
    }
    let server = Hostile::start(None);
    let url = server.url("slow/catalog.yaml");
    let cache = tempfile::tempdir().expect("cache");
    let env = [
        ("KRM_CATALOG_CACHE", cache.path().to_str().expect("utf-8")),
        ("KRM_CATALOG_HTTP_TIMEOUT", "2"),
        ("KRM_CATALOG_HTTP_RETRIES", "0"),
    ];
    let started = Instant::now();
    let out = bounded(&["catalog", "view", &url], "", &root(), &env);
    assert_failed_with(
        &out,
        "the body was still arriving when the time limit ran out",
        "catalog view",
    );
    assert!(stderr(&out).contains("raise KRM_CATALOG_HTTP_TIMEOUT (seconds) for a slow server"));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

//! Issue 9, the network and download findings, against hostile servers on loopback
//! (`tests/support/hostile_server.py`: redirects, endless bodies, a fake OCI registry that
//! lies about sizes) and a stock `python3 -m http.server`. Memory-sensitive runs go under an
//! address-space limit (`TestContext::with_address_space`), so a regression fails the test
//! instead of taking the machine down. Tests print `SKIPPED …` when python3 or openssl are
//! missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use krm_catalog::verify::sha256_hex;

use crate::remote::{CATALOG, resource_list, trusted_url};
use crate::runtimes::{RUN_EXEC, exec_catalog, image_catalog, image_kind, input};
use crate::servers::{Process, Server, free_port, tls, wait_for_port};
use crate::util::{TestContext, have, stderr, stdout, succeed, test_name};

/// Address space for a run that must stay bounded: far above what a bounded run needs, far
/// below what the unbounded code took (gigabytes).
const ADDRESS_SPACE: u64 = 1 << 30;

/// A catalog that must never load: its default greeting says so.
fn evil_catalog() -> String {
    CATALOG.replace("default: hello", "default: evil-was-loaded")
}

/// A context whose runs of the binary go under the address-space limit.
fn bounded() -> TestContext {
    TestContext::new().with_address_space(ADDRESS_SPACE)
}

/// The run failed with `needle` (as [`assert_failed_with`]) and did not load the evil catalog.
fn assert_refused_evil(out: &Output, needle: &str, context: &str) {
    assert_failed_with(out, needle, context);
    assert!(
        !stdout(out).contains("evil-was-loaded"),
        "{context}: {}",
        stdout(out)
    );
}

/// The run succeeded and loaded the evil catalog.
fn assert_loaded_evil(out: &Output) {
    assert!(out.status.success(), "{}", stderr(out));
    assert!(stdout(out).contains("evil-was-loaded"), "{}", stdout(out));
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
    if !have("python3", test) || !have("openssl", test) {
        return;
    }
    let tls = tls();
    let trusted_server = Server::hostile(Some(&tls));
    // The "other host": plain HTTP on another port (loopback, so only trust can refuse it).
    let other = Server::hostile(None);
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
    assert_refused_evil(
        &out,
        &format!("refused the redirect to {hop}: not trusted; add it to spec.trustedCatalogs"),
        "untrusted hop",
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
    assert_loaded_evil(&out);

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
    let out = bounded()
        .with_ca(&tls.ca)
        .in_repo_root()
        .run(&["catalog", "view", &url], "");
    assert_failed_with(
        &out,
        &format!("refused the redirect to {plain}: plain HTTP"),
        "catalog view",
    );
}

#[test]
fn issue9_f5_exec_download_redirect_to_plain_http_is_refused() {
    let test = test_name!();
    if !have("python3", test) || !have("openssl", test) {
        return;
    }
    let tls = tls();
    let server = Server::hostile(Some(&tls));
    let plain = "http://example.invalid/fn";
    let uri = server.url(&format!("redirect/307?to={plain}"));
    let pkg = bounded().with_ca(&tls.ca);
    pkg.write("catalog.yaml", exec_catalog(&uri, "fn", None));
    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert_failed_with(
        &out,
        &format!(
            "refused the redirect to {plain}: plain HTTP is refused except for loopback hosts"
        ),
        "exec download",
    );
}

#[test]
fn issue9_f6_encoded_dot_dot_cannot_escape_a_trusted_prefix() {
    let test = test_name!();
    if !have("python3", test) {
        return;
    }
    // The served files are those of the context's directory.
    let env = TestContext::new().in_repo_root();
    env.write("trusted/ok.yaml", CATALOG);
    env.write("evil.yaml", evil_catalog());
    let port = free_port();
    let _server = Process::spawn(
        Command::new("python3")
            .args([
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                &port.to_string(),
            ])
            .current_dir(env.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    wait_for_port(("127.0.0.1", port), "http.server");
    let base = format!("http://127.0.0.1:{port}");
    let trusted = format!("{base}/trusted/*");
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
        assert_refused_evil(&out, needle, escape);
    }
}

#[test]
fn issue9_f7_oci_manifests_and_blobs_are_bounded() {
    let test = test_name!();
    if !have("python3", test) {
        return;
    }
    let registry = Server::hostile(None);
    let addr = registry.addr();
    let pkg = bounded()
        .with_env("KRM_CATALOG_HTTP_TIMEOUT", "20")
        .with_env("KRM_CATALOG_HTTP_RETRIES", "0");
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
        let out = pkg.run(&["catalog", command, &reference], "");
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
    let out = pkg.run(&[], &input);
    assert_failed_with(&out, "its descriptor declares", "function run");
    // Image digests for `catalog verify`/`lock`/verifyTags go through the same bound.
    pkg.write(
        "catalog.yaml",
        image_catalog(&[image_kind(
            "Echo",
            &format!("{addr}/endless-manifest/fn:v1"),
            Some(&"ab".repeat(32)),
        )]),
    );
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("raise KRM_CATALOG_MAX_MANIFEST_BYTES"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    // `catalog lock` asks the registry for the digest of an unpinned tag: bounded the same way.
    let catalog = fs_err::read_to_string(pkg.path().join("catalog.yaml")).expect("read");
    let unpinned = catalog
        .lines()
        .filter(|l| !l.contains("sha256:"))
        .collect::<Vec<_>>()
        .join("\n");
    pkg.write("catalog.yaml", unpinned);
    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert_failed_with(&out, "raise KRM_CATALOG_MAX_MANIFEST_BYTES", "catalog lock");
    // Nothing that failed was cached.
    assert!(
        !files_under(pkg.cache())
            .iter()
            .any(|p| p.starts_with(pkg.cache().join("blobs"))),
        "{:?}",
        files_under(pkg.cache())
    );
}

/// Run python3 code with arguments; it must succeed.
fn python(code: &str, args: &[&str]) {
    succeed(Command::new("python3").arg("-c").arg(code).args(args));
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
    if !have("python3", test) || !have("openssl", test) {
        return;
    }
    let tls = tls();
    let server = Server::hostile(Some(&tls));
    let bomb = server.root().join("fn.zip");
    python(ZIP_BOMB, &[bomb.to_str().expect("utf-8")]);
    let bytes = fs_err::read(&bomb).expect("read");
    assert!(bytes.len() < 4 << 20, "{} bytes", bytes.len());
    let pkg = bounded()
        .with_ca(&tls.ca)
        .with_env("KRM_CATALOG_HTTP_TIMEOUT", "20");
    pkg.write(
        "catalog.yaml",
        exec_catalog(&server.url("fn.zip"), "fn", Some(&sha256_hex(&bytes))),
    );
    let started = Instant::now();
    let out = pkg.run(&[], &input("Echo", RUN_EXEC));
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
    assert_eq!(files_under(pkg.cache()), Vec::<PathBuf>::new());
}

#[test]
fn issue9_f8_tar_gz_bundle_of_200_mb_yaml_fails_fast() {
    let test = test_name!();
    if !have("python3", test) || !have("openssl", test) {
        return;
    }
    let tls = tls();
    let server = Server::hostile(Some(&tls));
    let bomb = server.root().join("big.tar.gz");
    python(TAR_BOMB, &[bomb.to_str().expect("utf-8")]);
    let size = fs_err::metadata(&bomb).expect("stat").len();
    assert!(size < 1 << 20, "{size} bytes");
    let url = server.url("big.tar.gz");
    let pkg = bounded()
        .with_ca(&tls.ca)
        .with_env("KRM_CATALOG_HTTP_TIMEOUT", "20")
        .in_repo_root();
    let needle = "entry \"services/big.yaml\" unpacks to more than 16777216 bytes; raise KRM_CATALOG_MAX_CATALOG_FILE_BYTES if this is expected";
    let started = Instant::now();
    let input = trusted_url(&url);
    let out = pkg.run(&[], &input);
    assert_failed_with(&out, &format!("catalog {url}: {needle}"), "function run");
    assert!(
        !stderr(&out).contains(&format!("catalog {url}: catalog {url}")),
        "the source is named twice:\n{}",
        stderr(&out)
    );
    let out = pkg.run(&["catalog", "view", &url], "");
    assert_failed_with(&out, &format!("catalog {url}: {needle}"), "catalog view");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    // The total is bounded too, and says how to raise it.
    let out = pkg.run_with(
        &["catalog", "view", &url],
        "",
        &[("KRM_CATALOG_MAX_CATALOG_BYTES", "1000000")],
    );
    assert_failed_with(
        &out,
        "the bundle unpacks to more than 1000000 bytes; raise KRM_CATALOG_MAX_CATALOG_BYTES",
        "total",
    );
}

#[test]
fn issue9_f10_local_catalog_skips_other_files_unread_and_bounds_yaml_files() {
    // The context's directory is the catalog.
    let pkg = bounded().in_repo_root();
    pkg.write("catalog.yaml", CATALOG);
    // 3 GiB that takes no disk (sparse): reading it is the regression.
    fs_err::File::create(pkg.path().join("image.bin"))
        .and_then(|f| f.set_len(3 << 30))
        .expect("sparse file");
    let input = resource_list(&format!("{{path: \"{}\"}}", pkg.path().display()), &[], "");
    let out = pkg.run(&[], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("greeting: hello"), "{}", stdout(&out));
    // A YAML file above the per-file limit: refused by its size, unread.
    fs_err::File::create(pkg.mkdir("services").join("huge.yaml"))
        .and_then(|f| f.set_len(20 << 20))
        .expect("sparse file");
    let out = pkg.run(&[], &input);
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
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(&[], input);
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
    let out = repo.run(&[], &input);
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
        let out = repo.run(&["catalog", "pull", &reference], "");
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
    if !have("python3", test) {
        return;
    }
    let server = Server::hostile(None);
    server.put("catalog.yaml", CATALOG.as_bytes());
    let pkg = TestContext::new().in_repo_root();
    let tmp = pkg.cache().join("tmp");
    fs_err::create_dir_all(&tmp).expect("mkdir");
    // What a writer killed an hour ago left behind.
    let stale = tmp.join("4242.deadbeef.1");
    fs_err::write(&stale, vec![0u8; 1 << 20]).expect("write");
    fs_err::File::options()
        .write(true)
        .open(&stale)
        .and_then(|f| f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600)))
        .expect("mtime");
    let out = pkg.run(&["catalog", "pull", &server.url("catalog.yaml")], "");
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
    if !have("python3", test) {
        return;
    }
    let registry = Server::hostile(None);
    let addr = registry.addr();
    let evil = evil_catalog();
    let blob = format!("sha256:{}", sha256_hex(evil.as_bytes()));
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2}},"layers":[{{"mediaType":"application/vnd.cncf.kubernetes.krm-func-catalog.layer.v1+yaml","digest":"{blob}","size":{},"annotations":{{"org.opencontainers.image.title":"catalog.yaml"}}}}]}}"#,
        evil.len()
    );
    for dir in ["registry/cat/manifests", "registry/cat/blobs"] {
        fs_err::create_dir_all(registry.root().join(dir)).expect("mkdir");
    }
    registry.put("registry/cat/manifests/v1", manifest.as_bytes());
    registry.put(&format!("registry/cat/blobs/{blob}"), evil.as_bytes());
    let manifest_digest = sha256_hex(manifest.as_bytes());
    registry.put(
        &format!("registry/cat/manifests/sha256:{manifest_digest}"),
        manifest.as_bytes(),
    );
    let pkg = bounded()
        .with_env("KRM_CATALOG_HTTP_RETRIES", "0")
        .in_repo_root();
    let needle = format!(
        "refused the redirect to http://localhost:{}/v2/files/cat/manifests/v1: a manifest by tag is read only from its registry {addr}",
        registry.port
    );
    let input = resource_list(
        &format!("{{oci: \"{addr}/to-localhost/cat:v1\"}}"),
        &[&format!("{addr}/*")],
        "",
    );
    let out = pkg.run(&[], &input);
    assert_refused_evil(&out, &needle, "function run");
    assert!(
        stdout(&out).contains("kind: ResourceList"),
        "{}",
        stdout(&out)
    );
    for command in ["view", "pull"] {
        let reference = format!("oci://{addr}/to-localhost/cat:v1");
        let out = pkg.run(&["catalog", command, &reference], "");
        assert_failed_with(&out, &needle, &format!("catalog {command}"));
    }
    // Pinned by digest: the bytes prove the manifest, the redirect may be followed.
    let input = resource_list(
        &format!("{{oci: \"{addr}/to-localhost/cat@sha256:{manifest_digest}\"}}"),
        &[&format!("{addr}/*")],
        "",
    );
    let out = pkg.run(&[], &input);
    assert_loaded_evil(&out);
}

/// `catalog view` and `catalog pull` have no trust list, so they follow a redirect to any
/// https (or loopback) host and keep the copy. A run must not take that copy for the trusted
/// URL: it fetches again (and refuses the hop), and offline it says why the copy is not used.
#[test]
fn issue9_f5_a_copy_viewed_through_an_untrusted_redirect_is_not_used_by_a_run() {
    let test = test_name!();
    if !have("python3", test) {
        return;
    }
    let server = Server::hostile(None);
    server.put("evil.yaml", evil_catalog().as_bytes());
    // Same server, another host name: trusted as 127.0.0.1, not as localhost.
    let hop = format!("http://localhost:{}/evil.yaml", server.port);
    let url = server.url(&format!("redirect/301?to={hop}"));
    let trusted = server.url("*");
    for command in ["view", "pull"] {
        let pkg = bounded()
            .with_env("KRM_CATALOG_HTTP_RETRIES", "0")
            .in_repo_root();
        let out = pkg.run(&["catalog", command, &url], "");
        assert!(out.status.success(), "catalog {command}: {}", stderr(&out));
        let input = resource_list(&format!("{{url: \"{url}\"}}"), &[&trusted], "");
        let out = pkg.run(&[], &input);
        assert_refused_evil(
            &out,
            &format!("refused the redirect to {hop}: not trusted"),
            &format!("run after catalog {command}"),
        );
        let offline = resource_list(
            &format!("{{url: \"{url}\"}}"),
            &[&trusted],
            "    offline: true\n",
        );
        let out = pkg.run(&[], &offline);
        assert_refused_evil(
            &out,
            &format!("came through the redirect to {hop}, which is not trusted"),
            &format!("offline run after catalog {command}"),
        );
        // Trusting the hop makes the copy usable, offline too.
        let offline = resource_list(
            &format!("{{url: \"{url}\"}}"),
            &[&trusted, &format!("http://localhost:{}/*", server.port)],
            "    offline: true\n",
        );
        let out = pkg.run(&[], &offline);
        assert_loaded_evil(&out);
    }
}

/// A server that sends its body one byte a second runs into the request time limit: the
/// message says so and names the variable that allows more time (before: "the body was cut
/// off … operation timed out", which reads like a broken connection).
#[test]
fn issue9_f7_a_trickling_body_fails_at_the_time_limit_and_says_which() {
    let test = test_name!();
    if !have("python3", test) {
        return;
    }
    let server = Server::hostile(None);
    let url = server.url("slow/catalog.yaml");
    let pkg = bounded()
        .with_env("KRM_CATALOG_HTTP_TIMEOUT", "2")
        .with_env("KRM_CATALOG_HTTP_RETRIES", "0")
        .in_repo_root();
    let started = Instant::now();
    let out = pkg.run(&["catalog", "view", &url], "");
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

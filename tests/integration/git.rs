//! Git catalog sources (issue 12) against real servers on loopback: a repository made here with
//! `git`, served by `git daemon` (git://) and by `git http-backend` behind
//! `tests/support/git_http_server.py` (smart HTTP). The binary fetches with gix, in process:
//! `git` is only the test's tool. Tests print `SKIPPED …` when git or python3 is missing.

use std::path::Path;
use std::process::Command;

use crate::remote::{CATALOG, OFFLINE, ONLINE, resource_list};
use crate::servers::{GitDaemon, Server, tls};
use crate::util::{
    TestContext, assert_fails_with, assert_output, have, stderr, stdout, succeed, test_name,
};

/// `git` in `dir` with a fixed identity and no user or system configuration.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    succeed(
        Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args([
                "-c",
                "user.name=krm-catalog test",
                "-c",
                "user.email=test@krm-catalog.invalid",
                "-c",
                "init.defaultBranch=main",
                "-c",
                "tag.gpgSign=false",
                "-c",
                "commit.gpgSign=false",
            ])
            .args(args),
    )
    .trim()
    .to_owned()
}

/// A repository `repo` under `base`: the catalog at `catalogs/team` (with a link `up` that
/// climbs out of the tree), committed on `main` and tagged `v1` (annotated). Returns the commit.
fn make_repo(base: &Path) -> String {
    let dir = base.join("repo");
    fs_err::create_dir_all(dir.join("catalogs/team")).expect("mkdir");
    git(&dir, &["init", "-q"]);
    fs_err::write(dir.join("catalogs/team/catalog.yaml"), CATALOG).expect("write");
    fs_err::write(dir.join("README.md"), "not a catalog\n").expect("write");
    std::os::unix::fs::symlink("../..", dir.join("catalogs/up")).expect("symlink");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "team catalog"]);
    git(&dir, &["tag", "-a", "v1", "-m", "v1"]);
    git(&dir, &["rev-parse", "HEAD"])
}

/// A second commit that changes the greeting, with `v1` moved onto it. Returns the commit.
fn move_tag(base: &Path) -> String {
    let dir = base.join("repo");
    fs_err::write(
        dir.join("catalogs/team/catalog.yaml"),
        CATALOG.replace("default: hello", "default: moved"),
    )
    .expect("write");
    git(&dir, &["commit", "-q", "-a", "-m", "changed"]);
    git(&dir, &["tag", "-f", "-a", "v1", "-m", "v1 again"]);
    git(&dir, &["rev-parse", "HEAD"])
}

fn tools(test: &str) -> bool {
    have("git", test) && have("python3", test)
}

/// A `spec.catalogs` entry for the team catalog of `url`.
fn entry(url: &str, fields: &str) -> String {
    format!("{{git: {{url: \"{url}\", {fields}path: catalogs/team}}}}")
}

/// The annotation generated objects carry for the team catalog of `url` at `commit`.
fn annotation(url: &str, commit: &str) -> String {
    format!("krm-catalog.dev/catalog: git:{url}@{commit}//catalogs/team")
}

#[test]
fn issue12_git_by_tag_branch_and_commit_over_git_daemon_and_smart_http() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    let commit = make_repo(http.root());
    let daemon = GitDaemon::start(http.root());
    let http_url = http.url("repo");
    for (url, trust) in [
        (
            daemon.url("repo"),
            format!("git://127.0.0.1:{}/*", daemon.port),
        ),
        (http_url.clone(), http.url("*")),
    ] {
        for (fields, pinned) in [
            ("ref: v1, ".to_owned(), false),
            ("ref: main, ".to_owned(), false),
            (format!("ref: {commit}, "), true),
            (format!("ref: v1, commit: {commit}, "), true),
        ] {
            // A cache of its own: each case fetches.
            let env = TestContext::new();
            let out = env.run(&[], &resource_list(&entry(&url, &fields), &[&trust], ""));
            let what = format!("{url} {fields}");
            assert!(out.status.success(), "{what}: {}", stderr(&out));
            let output = stdout(&out);
            assert!(output.contains("greeting: hello"), "{what}: {output}");
            assert!(
                output.contains(&annotation(&url, &commit)),
                "{what}: {output}"
            );
            let suggestion = format!("is not pinned: it resolved to commit {commit} now");
            assert_eq!(output.contains(&suggestion), !pinned, "{what}: {output}");
            if !pinned {
                assert!(
                    output.contains(&format!("pin it with git: {{url: {url}, ref: ")),
                    "{output}"
                );
            }
        }
    }
    // Smart HTTP really served it (protocol v2: the ref advertisement, then the fetch).
    assert!(
        http.log().contains("POST /repo/git-upload-pack"),
        "{}",
        http.log()
    );
}

#[test]
fn issue12_git_moved_tag_is_an_error_naming_both_commits() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    let old = make_repo(http.root());
    let new = move_tag(http.root());
    let url = http.url("repo");
    let env = TestContext::new();
    let out = env.run(
        &[],
        &resource_list(
            &entry(&url, &format!("ref: v1, commit: {old}, ")),
            &[&http.url("*")],
            "",
        ),
    );
    assert_fails_with(
        &out,
        &format!(
            "ref \"v1\" is now commit {new}, but commit pins {old}: the ref moved (or the pin is wrong)"
        ),
    );
    // Unpinned, the moved tag is simply the new content (with the pin suggestion).
    let out = env.run(
        &[],
        &resource_list(&entry(&url, "ref: v1, "), &[&http.url("*")], ""),
    );
    assert_output(&out, "greeting: moved");
    assert_output(&out, &annotation(&url, &new));
}

#[test]
fn issue12_git_untrusted_url_is_refused_before_any_request() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    make_repo(http.root());
    let url = http.url("repo");
    let env = TestContext::new();
    for trust in [
        "http://127.0.0.1:1/*",
        "http://127.0.0.1/repo",
        &http.url("rep"),
    ] {
        let out = env.run(&[], &resource_list(&entry(&url, "ref: v1, "), &[trust], ""));
        assert_fails_with(
            &out,
            "not trusted; review it with `krm-catalog catalog view 'git::",
        );
    }
    // A trusted prefix does not reach a repository through a dot segment.
    let escape = http.url("trusted/../repo");
    let out = env.run(
        &[],
        &resource_list(&entry(&escape, "ref: v1, "), &[&http.url("trusted/*")], ""),
    );
    assert_fails_with(&out, "not trusted");
    assert_eq!(http.requests(), 0, "{}", http.log());
    // A redirect is not followed (the trust list was asked about the URL as written).
    let moved = http.url("moved/repo");
    let out = env.run(
        &[],
        &resource_list(&entry(&moved, "ref: v1, "), &[&http.url("*")], ""),
    );
    assert_fails_with(
        &out,
        "(redirects are not followed: write the repository's final URL, and trust that)",
    );
    assert!(!http.log().contains("GET /repo/"), "{}", http.log());
}

#[test]
fn issue12_git_path_escape_is_refused() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    let commit = make_repo(http.root());
    let url = http.url("repo");
    let trust = http.url("*");
    let env = TestContext::new();
    let run = |git: String| env.run(&[], &resource_list(&git, &[&trust], ""));
    // `..` is refused where the config is read.
    let out = run(format!(
        "{{git: {{url: \"{url}\", ref: v1, path: catalogs/../..}}}}"
    ));
    assert_fails_with(
        &out,
        "spec.catalogs[0].git.path: \"catalogs/../..\" climbs out with \"..\": the catalog must be inside the repository",
    );
    let out = run(format!("{{git: {{url: \"{url}\", ref: v1, path: /etc}}}}"));
    assert_fails_with(&out, "must be a relative path inside the repository");
    // A link on the way is refused wherever it points.
    let out = run(format!(
        "{{git: {{url: \"{url}\", ref: v1, path: catalogs/up/catalogs/team}}}}"
    ));
    assert_fails_with(
        &out,
        &format!(
            "{url}@{commit}: path \"catalogs/up/catalogs/team\" goes through the symbolic link \"up\" (to \"../..\"); name the directory itself"
        ),
    );
    // A catalog file that is a link (to a file outside the catalog) is not followed.
    let dir = http.root().join("repo");
    std::os::unix::fs::symlink("../../../etc/passwd", dir.join("catalogs/team/evil.yaml"))
        .expect("symlink");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "link"]);
    let out = run(format!(
        "{{git: {{url: \"{url}\", ref: main, path: catalogs/team}}}}"
    ));
    assert_fails_with(
        &out,
        "evil.yaml is a symbolic link; a catalog file must be a file (links are not followed)",
    );
}

#[test]
fn issue12_git_offline_warm_cache_after_the_server_is_stopped() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    let commit = make_repo(http.root());
    let url = http.url("repo");
    let trust = http.url("*");
    let env = TestContext::new();
    let pinned = resource_list(
        &entry(&url, &format!("ref: v1, commit: {commit}, ")),
        &[&trust],
        "",
    );
    let unpinned = resource_list(&entry(&url, "ref: v1, "), &[&trust], "");
    let online = env.run(&[], &pinned);
    assert!(online.status.success(), "{}", stderr(&online));
    assert!(env.run(&[], &unpinned).status.success());
    let requests = http.requests();
    // A warm pinned run does not ask the server again.
    let warm = env.run(&[], &pinned);
    assert_eq!(stdout(&warm), stdout(&online));
    assert_eq!(
        http.requests(),
        requests,
        "a warm pinned run touched the network"
    );
    drop(http);
    let offline = env.run(&[], &pinned.replace(ONLINE, OFFLINE));
    assert!(offline.status.success(), "{}", stderr(&offline));
    assert_eq!(
        stdout(&offline).replace("    offline: true\n", ""),
        stdout(&online)
    );
    // Unpinned and offline: the last resolution recorded, with a warning that says so.
    let out = env.run(&[], &unpinned.replace(ONLINE, OFFLINE));
    assert_output(&out, &annotation(&url, &commit));
    assert_output(
        &out,
        &format!("is taken as commit {commit}, its last resolution in the cache at"),
    );
    // Not in the cache at all: a clear error saying how to prepare one.
    let cold = TestContext::new();
    let out = cold.run(&[], &pinned.replace(ONLINE, OFFLINE));
    assert_fails_with(
        &out,
        &format!(
            "offline: git::{url}//catalogs/team?ref=v1&commit={commit} is not in the cache at"
        ),
    );
    assert_fails_with(&out, "run `krm-catalog catalog pull 'git::");
}

#[test]
fn issue12_git_string_forms_configmap_environment_and_catalog_view() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    let commit = make_repo(http.root());
    let daemon = GitDaemon::start(http.root());
    let url = http.url("repo");
    let env = TestContext::new();
    // The kpt ConfigMap form: the string form in a comma-separated list.
    let configmap = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: services.krm-catalog.dev/v1alpha1\n  kind: RemoteApp\n  metadata:\n    name: demo\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: remote\n  data:\n    builtin: \"false\"\n    catalogs: git::{url}//catalogs/team?ref=v1&commit={commit}\n    trusted-catalogs: {}\n",
        http.url("*")
    );
    let out = env.run(&[], &configmap);
    assert_output(&out, &annotation(&url, &commit));
    // KRM_CATALOG_CATALOGS: `:` separates entries, and a git:// URL with a port is one entry.
    let git_url = daemon.url("repo");
    let baked = format!("{git_url}//catalogs/team?commit={commit}");
    let input = resource_list("{path: no-such-dir}", &[], "")
        .replace("    - {path: no-such-dir}\n", "      []\n");
    let out = env.run_with(&[], &input, &[("KRM_CATALOG_CATALOGS", &baked)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_output(&out, &annotation(&git_url, &commit));
    // `catalog view` names the commit and the pinned entry.
    let out = env.run(
        &[
            "catalog",
            "view",
            &format!("git::{url}//catalogs/team?ref=v1"),
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!(
            "Pin:       git: {{url: {url}, ref: v1, commit: {commit}, path: catalogs/team}}"
        )),
        "{}",
        stdout(&out)
    );
    // A bad string form says which part is wrong.
    let out = env.run(&["catalog", "view", "git::ftp://h/r.git?ref=v1"], "");
    assert_fails_with(
        &out,
        "git ftp://h/r.git: url \"ftp://h/r.git\" is not a Git repository URL (https://, git:// or file://)",
    );
}

#[test]
fn issue12_git_fetches_are_bounded_in_time_and_size() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    // A git:// server that accepts and never answers: the fetch ends at its deadline
    // (4 times KRM_CATALOG_HTTP_TIMEOUT).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let url = format!("git://127.0.0.1:{port}/repo");
    let env = TestContext::new()
        .with_env("KRM_CATALOG_HTTP_TIMEOUT", "1")
        .with_deadline(std::time::Duration::from_secs(30));
    let started = std::time::Instant::now();
    let out = env.run(
        &[],
        &resource_list(
            &entry(&url, "ref: v1, "),
            &[&format!("git://127.0.0.1:{port}/*")],
            "",
        ),
    );
    assert_fails_with(
        &out,
        &format!("fetching {url} took longer than 4 s; raise KRM_CATALOG_HTTP_TIMEOUT"),
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    // A pack larger than the download limit is refused.
    let http = Server::git_http(None);
    make_repo(http.root());
    let dir = http.root().join("repo");
    // xorshift: bytes zlib cannot shrink.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let noise: Vec<u8> = (0..200_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect();
    fs_err::write(dir.join("noise.bin"), noise).expect("write");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "noise"]);
    let url = http.url("repo");
    let out = TestContext::new()
        .with_env("KRM_CATALOG_MAX_DOWNLOAD_BYTES", "100000")
        .run(
            &[],
            &resource_list(&entry(&url, "ref: main, "), &[&http.url("*")], ""),
        );
    assert_fails_with(
        &out,
        &format!(
            "{url}: the fetched pack is larger than 100000 bytes; raise KRM_CATALOG_MAX_DOWNLOAD_BYTES"
        ),
    );
}

#[test]
fn issue12_git_over_https_with_a_private_ca() {
    let test = test_name!();
    if !tools(test) || !have("openssl", test) {
        return;
    }
    let tls = tls();
    let https = Server::git_http(Some(&tls));
    let commit = make_repo(https.root());
    let url = https.url("repo");
    let input = resource_list(&entry(&url, "ref: v1, "), &[&https.url("*")], "");
    // Without the CA the certificate is refused, and the message says so.
    let out = TestContext::new().run(&[], &input);
    assert_fails_with(&out, &format!("cannot fetch v1 from {url}"));
    let out = TestContext::new().with_ca(&tls.ca).run(&[], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_output(&out, &annotation(&url, &commit));
}

/// A function config file for `catalog lock`: comments and both layouts of a Git entry (the
/// first in block style, the second a one-line flow mapping), trusting `trust`.
fn lock_config(url: &str, trust: &str) -> String {
    format!(
        "# The platform's catalogs: `catalog lock` pins them.
apiVersion: krm-catalog.dev/v1alpha1
kind: ResolveCatalog
metadata:
  name: platform # the team's
spec:
  builtin: false
  catalogs:
  # the team catalog, by tag
  - git:
      url: \"{url}\"   # served on loopback
      ref: v1
      path: catalogs/team
  - git: {{url: \"{url}\", ref: main, path: catalogs/team}}  # by branch
  trustedCatalogs: [\"{trust}\"]
"
    )
}

const APP: &str =
    "apiVersion: services.krm-catalog.dev/v1alpha1\nkind: RemoteApp\nmetadata:\n  name: demo\n";

#[test]
fn issue12_lock_writes_the_commit_over_git_daemon_and_smart_http() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    let commit = make_repo(http.root());
    let daemon = GitDaemon::start(http.root());
    for (url, trust) in [
        (
            daemon.url("repo"),
            format!("git://127.0.0.1:{}/*", daemon.port),
        ),
        (http.url("repo"), http.url("*")),
    ] {
        let env = TestContext::new();
        let original = lock_config(&url, &trust);
        let file = env.write("fn.yaml", &original);
        env.write("app.yaml", APP);
        let render = ["render", "--fn-config", "fn.yaml", "-f", "app.yaml"];
        let before = env.run(&render, "");
        assert!(before.status.success(), "{url}: {}", stderr(&before));
        assert!(
            stderr(&before).contains(&format!("is not pinned: it resolved to commit {commit}")),
            "{url}: {}",
            stderr(&before)
        );

        let out = env.run(&["catalog", "lock", "fn.yaml"], "");
        assert!(out.status.success(), "{url}: {}", stderr(&out));
        for (i, reference) in ["v1", "main"].iter().enumerate() {
            let line = format!(
                "locked fn.yaml: spec.catalogs[{i}] git::{url}//catalogs/team?ref={reference} → commit {commit}\n"
            )
            .replace("git::git://", "git://");
            assert!(stdout(&out).contains(&line), "{url}: {}", stdout(&out));
        }
        // Exactly the two pins were added; every other byte (comments, quotes, the flow
        // mapping, the blank-free layout) is as it was.
        let expected = original
            .replace(
                "      ref: v1\n",
                &format!("      ref: v1\n      commit: {commit}\n"),
            )
            .replace(
                "ref: main, path",
                &format!("ref: main, commit: {commit}, path"),
            );
        assert_ne!(expected, original);
        let locked = fs_err::read_to_string(&file).expect("read");
        assert_eq!(locked, expected, "{url}");

        // A second lock changes nothing and says the entries are pinned.
        let out = env.run(&["catalog", "lock", "fn.yaml"], "");
        assert!(out.status.success(), "{url}: {}", stderr(&out));
        assert_eq!(fs_err::read(&file).expect("read"), expected.as_bytes());
        assert!(
            stdout(&out).contains("ok fn.yaml: spec.catalogs[1] ")
                && stdout(&out)
                    .contains("fn.yaml: every runtime and Git catalog is already pinned"),
            "{}",
            stdout(&out)
        );

        // The locked config renders the same, without the warning.
        let after = env.run(&render, "");
        assert!(after.status.success(), "{url}: {}", stderr(&after));
        assert_eq!(stdout(&after), stdout(&before), "{url}");
        assert!(stdout(&after).contains(&annotation(&url, &commit)));
        assert!(
            !stderr(&after).contains("not pinned"),
            "{url}: {}",
            stderr(&after)
        );
    }
}

/// `catalog lock DIR` pins the Git sources of the function configs in a package directory
/// too, as `catalog lock FILE` does; a file that only mentions catalogs and Git but is not
/// YAML (a template) is passed over, and files that are not function configs are untouched.
#[test]
fn issue12_lock_of_a_directory_pins_its_function_configs() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    let commit = make_repo(http.root());
    let url = http.url("repo");
    let env = TestContext::new();
    let original = lock_config(&url, &http.url("*"));
    let file = env.write("pkg/fn.yaml", &original);
    env.write("pkg/app.yaml", APP);
    let template = "# catalogs from git: {{ .Values.catalogs }}\nspec: {{ if }}: [\n";
    env.write("pkg/sub/template.yaml", template);
    let other =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata: {text: catalogs in git}\n";
    env.write("pkg/sub/notes.yaml", other);
    let out = env.run(&["catalog", "lock", "pkg"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let line = format!(
        "locked pkg/fn.yaml: spec.catalogs[0] git::{url}//catalogs/team?ref=v1 → commit {commit}\n"
    );
    assert!(stdout(&out).contains(&line), "{}", stdout(&out));
    let locked = fs_err::read_to_string(&file).expect("read");
    assert!(
        locked.contains(&format!("      ref: v1\n      commit: {commit}\n")),
        "{locked}"
    );
    assert_eq!(
        fs_err::read_to_string(env.path().join("pkg/sub/template.yaml")).expect("read"),
        template
    );
    assert_eq!(
        fs_err::read_to_string(env.path().join("pkg/sub/notes.yaml")).expect("read"),
        other
    );
    assert_eq!(
        fs_err::read_to_string(env.path().join("pkg/app.yaml")).expect("read"),
        APP
    );
}

#[test]
fn issue12_lock_refuses_an_untrusted_url_and_writes_nothing() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    make_repo(http.root());
    let url = http.url("repo");
    let env = TestContext::new();
    // The first entry (file://, a local path) is trusted and resolves; the second is not
    // trusted: the lock fails naming it, and the first pin is not written either.
    let local = format!("file://{}", http.root().join("repo").display());
    let original = lock_config(&url, "http://127.0.0.1:1/*").replacen(
        &format!("url: \"{url}\"   #"),
        &format!("url: \"{local}\"   #"),
        1,
    );
    let file = env.write("fn.yaml", &original);
    let out = env.run(&["catalog", "lock", "fn.yaml"], "");
    assert_fails_with(
        &out,
        &format!(
            "fn.yaml: spec.catalogs[1]: {url} is not trusted, so it is not fetched; review it with `krm-catalog catalog view 'git::{url}//catalogs/team?ref=main'`, then add {url} to spec.trustedCatalogs"
        ),
    );
    assert_eq!(fs_err::read_to_string(&file).expect("read"), original);
    assert_eq!(http.requests(), 0, "{}", http.log());
    // The ConfigMap form names its own trust key.
    let configmap = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\ndata:\n  catalogs: git::{url}?ref=v1\n"
    );
    let file = env.write("cm.yaml", &configmap);
    let out = env.run(&["catalog", "lock", "cm.yaml"], "");
    assert_fails_with(&out, "then add");
    assert_fails_with(&out, "to data.trusted-catalogs");
    assert_eq!(fs_err::read_to_string(&file).expect("read"), configmap);
    // A link is not written through.
    let target = env.write("real.yaml", lock_config(&local, "x"));
    std::os::unix::fs::symlink(&target, env.path().join("link.yaml")).expect("symlink");
    let out = env.run(&["catalog", "lock", "link.yaml"], "");
    assert_fails_with(&out, "`catalog lock` does not write through links");
    assert_eq!(
        fs_err::read_to_string(&target).expect("read"),
        lock_config(&local, "x")
    );
}

#[test]
fn issue12_lock_pins_the_string_form_of_a_configmap_in_a_resource_list() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    let commit = make_repo(http.root());
    let url = http.url("repo");
    let input = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {}\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: remote\n  data:\n    builtin: \"false\"\n    # kpt's key=value form\n    catalogs: \"git::{url}//catalogs/team?ref=v1, git::{url}//catalogs/team?ref=main&commit={commit}\"\n    trusted-catalogs: {}\n",
        APP.replace('\n', "\n  ").trim_end(),
        http.url("*")
    );
    let env = TestContext::new();
    let file = env.write("input.yaml", &input);
    let before = env.run(&[], &input);
    assert_output(&before, "is not pinned");
    let out = env.run(&["catalog", "lock", "input.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!(
            "locked input.yaml: functionConfig.data.catalogs[0] git::{url}//catalogs/team?ref=v1 → commit {commit}"
        )) && stdout(&out).contains("ok input.yaml: functionConfig.data.catalogs[1] "),
        "{}",
        stdout(&out)
    );
    let locked = fs_err::read_to_string(&file).expect("read");
    assert_eq!(
        locked,
        input.replacen("?ref=v1,", &format!("?ref=v1&commit={commit},"), 1)
    );
    let after = env.run(&[], &locked);
    assert!(after.status.success(), "{}", stderr(&after));
    assert!(!stdout(&after).contains("not pinned"), "{}", stdout(&after));
    assert_eq!(
        stdout(&after),
        stdout(&before)
            .split("results:\n")
            .next()
            .unwrap_or_default()
            .replace("?ref=v1,", &format!("?ref=v1&commit={commit},"))
    );
}

/// A `KRM_CATALOG_CATALOGS` entry that starts like a Git source but is not one fails the run
/// with the reason, even when no item needs it (it used to be loaded as a path and "not
/// found" only warned); no server is needed to say so.
#[test]
fn issue12_a_malformed_git_entry_in_the_environment_says_why() {
    let env = TestContext::new();
    let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n";
    for (entry, reason) in [
        (
            "git::https://127.0.0.1:1/repo",
            "not a Git catalog source: ref is required: a tag, a branch or a full commit id",
        ),
        (
            "git::https://127.0.0.1:1/repo?ref=v1&commit=abc",
            "not a Git catalog source: commit \"abc\" is not a full commit id",
        ),
        (
            "git::https://127.0.0.1:1/repo?tag=v1",
            "not a Git catalog source: query unknown parameter \"tag=v1\"",
        ),
    ] {
        let out = env.run_with(&[], input, &[("KRM_CATALOG_CATALOGS", entry)]);
        assert_fails_with(
            &out,
            &format!("KRM_CATALOG_CATALOGS[0]: catalog {entry}: {reason}"),
        );
        // The ResourceList is written all the same, with the error among its results.
        assert!(stdout(&out).contains("name: a"), "{}", stdout(&out));
    }
}

/// The token `tests/support/git_http_server.py` wants for `/private/…`.
const TOKEN: &str = "s3cret-test-token";

/// Credentials come only from `KRM_CATALOG_GIT_TOKEN`, and the repository is opened isolated
/// from the user's Git configuration: a credential helper there that would answer with the
/// right password is not asked, and a URL rewrite there is not applied.
#[test]
fn issue12_git_credentials_only_from_the_token_and_no_user_git_config() {
    let test = test_name!();
    if !tools(test) || !have("openssl", test) {
        return;
    }
    let tls = tls();
    let https = Server::git_http(Some(&tls));
    let commit = make_repo(https.root());
    let public = https.url("repo");
    let private = https.url("private/repo");
    let env = TestContext::new().with_ca(&tls.ca);
    let home = env.mkdir("home");
    let config = format!(
        "[credential]\n\thelper = \"!f() {{ echo username=x-access-token; echo password={TOKEN}; }}; f\"\n[url \"http://127.0.0.1:1/\"]\n\tinsteadOf = {public}\n"
    );
    env.write("home/.gitconfig", &config);
    env.write("home/.config/git/config", &config);
    let env = env
        .with_env("HOME", &home.to_string_lossy())
        .with_env("XDG_CONFIG_HOME", &home.join(".config").to_string_lossy())
        .with_env(
            "GIT_CONFIG_GLOBAL",
            &home.join(".gitconfig").to_string_lossy(),
        );
    let trust = https.url("*");
    let out = env.run(
        &[],
        &resource_list(&entry(&public, "ref: v1, "), &[&trust], ""),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_output(&out, &annotation(&public, &commit));
    let input = resource_list(&entry(&private, "ref: v1, "), &[&trust], "");
    let out = env.run(&[], &input);
    assert_fails_with(&out, &format!("cannot fetch v1 from {private}"));
    let host = format!("127.0.0.1:{}", https.port);
    let out = env.run_with(
        &[],
        &input,
        &[
            ("KRM_CATALOG_GIT_TOKEN", "wrong"),
            ("KRM_CATALOG_GIT_TOKEN_HOST", &host),
        ],
    );
    assert_fails_with(&out, &format!("cannot fetch v1 from {private}"));
    let out = env.run_with(
        &[],
        &input,
        &[
            ("KRM_CATALOG_GIT_TOKEN", TOKEN),
            ("KRM_CATALOG_GIT_TOKEN_HOST", &host),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_output(&out, &annotation(&private, &commit));
    assert!(
        !stdout(&out).contains(TOKEN) && !stderr(&out).contains(TOKEN),
        "the token was printed"
    );
}

/// HTTPS credentials from the user's `.netrc` (`$NETRC`, else `~/.netrc`), curl's format: the
/// server's entry, matched by host name; `KRM_CATALOG_GIT_TOKEN` comes first; another host's
/// entry gives nothing; the password never reaches the output.
#[test]
fn issue12_git_credentials_from_netrc() {
    let test = test_name!();
    if !tools(test) || !have("openssl", test) {
        return;
    }
    let tls = tls();
    let https = Server::git_http(Some(&tls));
    let commit = make_repo(https.root());
    let private = https.url("private/repo");
    let env = TestContext::new().with_ca(&tls.ca);
    let home = env.mkdir("home");
    let trust = https.url("*");
    let input = resource_list(&entry(&private, "ref: v1, "), &[&trust], "");
    let env = env.with_env("HOME", &home.to_string_lossy());
    // Another machine's entry: not sent.
    env.write(
        "home/.netrc",
        format!("machine git.example.com login x-access-token password {TOKEN}\n"),
    );
    let out = env.run(&[], &input);
    assert_fails_with(&out, &format!("cannot fetch v1 from {private}"));
    // This server's entry (macdef and default around it), as curl reads the file.
    env.write(
        "home/.netrc",
        format!(
            "macdef init\nmachine 127.0.0.1 login evil password evil\n\n\
             machine 127.0.0.1\n  login x-access-token\n  password \"{TOKEN}\"\n\
             default login anonymous password nothing\n"
        ),
    );
    let out = env.run(&[], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_output(&out, &annotation(&private, &commit));
    assert!(
        !stdout(&out).contains(TOKEN) && !stderr(&out).contains(TOKEN),
        "the password was printed"
    );
    // The token, when set for this host, is what is sent.
    let out = env.run_with(
        &[],
        &input,
        &[
            ("KRM_CATALOG_GIT_TOKEN", "wrong"),
            (
                "KRM_CATALOG_GIT_TOKEN_HOST",
                &format!("127.0.0.1:{}", https.port),
            ),
        ],
    );
    assert_fails_with(&out, &format!("cannot fetch v1 from {private}"));
    // `$NETRC` names the file instead of `~/.netrc`.
    env.write("home/.netrc", "");
    let netrc = env.write(
        "other-netrc",
        format!("machine 127.0.0.1 login x-access-token password {TOKEN}\n"),
    );
    let out = env.run_with(&[], &input, &[("NETRC", &netrc.to_string_lossy())]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// The tree of a commit is read with the bundle bounds (one file, all files, entries, depth),
/// and a `file://` repository is opened in place: no `git` program is needed.
#[test]
fn issue12_git_tree_read_obeys_the_bundle_limits_and_file_urls_need_no_git() {
    let test = test_name!();
    if !have("git", test) {
        return;
    }
    let env = TestContext::new();
    let base = env.mkdir("repos");
    let commit = make_repo(&base);
    let dir = base.join("repo");
    let url = format!("file://{}", dir.display());
    let input =
        |reference: &str| resource_list(&entry(&url, &format!("ref: {reference}, ")), &[], "");
    let out = env.run_with(&[], &input("v1"), &[("PATH", "/nonexistent")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_output(&out, &annotation(&url, &commit));
    let out = env.run_with(
        &[],
        &input("v1"),
        &[("KRM_CATALOG_MAX_CATALOG_FILE_BYTES", "100")],
    );
    assert_fails_with(
        &out,
        &format!(
            "{url}@{commit}: entry \"catalog.yaml\" unpacks to more than 100 bytes; raise KRM_CATALOG_MAX_CATALOG_FILE_BYTES"
        ),
    );
    let out = env.run_with(
        &[],
        &input("v1"),
        &[("KRM_CATALOG_MAX_CATALOG_BYTES", "100")],
    );
    assert_fails_with(
        &out,
        &format!(
            "{url}@{commit}: the catalog's files are larger than 100 bytes together; raise KRM_CATALOG_MAX_CATALOG_BYTES"
        ),
    );
    // More than 10,000 entries (files that are not catalog files count too).
    git(&dir, &["checkout", "-q", "-b", "many", "v1"]);
    for i in 0..10_001 {
        fs_err::write(dir.join(format!("catalogs/team/f{i}.txt")), "").expect("write");
    }
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "many"]);
    let out = env.run(&[], &input("many"));
    assert_fails_with(&out, "the catalog has more than 10000 entries");
    // Deeper than 32 directories.
    git(&dir, &["checkout", "-q", "-b", "deep", "v1"]);
    let deep = dir.join(format!("catalogs/team/{}", ["d"; 33].join("/")));
    fs_err::create_dir_all(&deep).expect("mkdir");
    fs_err::write(deep.join("x.yaml"), "a: 1\n").expect("write");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "deep"]);
    let out = env.run(&[], &input("deep"));
    assert_fails_with(&out, "is nested deeper than 32 directories");
}

/// Issue 21 H6: `KRM_CATALOG_GIT_TOKEN` goes only to the host `KRM_CATALOG_GIT_TOKEN_HOST`
/// names (never without it), a `.netrc` `default` entry to no host, and `catalog view` sends no
/// credentials at all. Two HTTPS Git servers in one run; their logs say which requests carried
/// an `Authorization` header.
#[test]
fn issue15_h6_token_only_to_named_host() {
    let test = test_name!();
    if !tools(test) || !have("openssl", test) {
        return;
    }
    let tls = tls();
    let (a, b) = (Server::git_http(Some(&tls)), Server::git_http(Some(&tls)));
    let commit_a = make_repo(a.root());
    make_repo(b.root());
    let (private_a, private_b) = (a.url("private/repo"), b.url("private/repo"));
    let (host_a, host_b) = (
        format!("127.0.0.1:{}", a.port),
        format!("127.0.0.1:{}", b.port),
    );
    let env = TestContext::new().with_ca(&tls.ca);
    let home = env.mkdir("home");
    let env = env.with_env("HOME", &home.to_string_lossy());
    let input = resource_list(
        &format!(
            "{}\n    - {}",
            entry(&private_a, "ref: v1, "),
            entry(&private_b, "ref: v1, ")
        ),
        &[&a.url("*"), &b.url("*")],
        "",
    );
    let authorized = |server: &Server| server.log().contains("[Authorization]");
    let said = |out: &std::process::Output| format!("{}{}", stdout(out), stderr(out));
    // The token and the host it is for: A gets it, B (which asks all the same) does not.
    let out = env.run_with(
        &[],
        &input,
        &[
            ("KRM_CATALOG_GIT_TOKEN", TOKEN),
            ("KRM_CATALOG_GIT_TOKEN_HOST", &host_a),
        ],
    );
    assert!(
        stdout(&out).contains(&annotation(&private_a, &commit_a)),
        "{}",
        said(&out)
    );
    assert!(authorized(&a), "{}", a.log());
    assert!(!authorized(&b), "the token went to B: {}", b.log());
    assert!(
        said(&out).contains(&format!(
            "{host_b} asked for credentials; KRM_CATALOG_GIT_TOKEN is not sent: it is for {host_a} (KRM_CATALOG_GIT_TOKEN_HOST)"
        )),
        "{}",
        said(&out)
    );
    // Without KRM_CATALOG_GIT_TOKEN_HOST the token goes nowhere, and the error says why.
    let before_a = a.log();
    let out = env.run_with(&[], &input, &[("KRM_CATALOG_GIT_TOKEN", TOKEN)]);
    assert!(
        !a.log()[before_a.len()..].contains("[Authorization]"),
        "{}",
        a.log()
    );
    assert!(!authorized(&b), "{}", b.log());
    assert!(
        said(&out).contains(&format!(
            "cannot fetch v1 from {private_a}"
        )) && said(&out).contains(&format!(
            "{host_a} asked for credentials; KRM_CATALOG_GIT_TOKEN is not sent, since KRM_CATALOG_GIT_TOKEN_HOST is not set: set KRM_CATALOG_GIT_TOKEN_HOST={host_a} if the token is for this host"
        )),
        "{}",
        said(&out)
    );
    // A `.netrc` `default` entry is never sent; a `machine` entry only to its host (by name,
    // so here both servers would match one: none is written).
    env.write(
        "home/.netrc",
        format!("default login x-access-token password {TOKEN}\n"),
    );
    let before_a = a.log();
    let out = env.run(&[], &input);
    assert!(
        !a.log()[before_a.len()..].contains("[Authorization]"),
        "{}",
        a.log()
    );
    assert!(!authorized(&b), "{}", b.log());
    assert!(
        said(&out).contains(&format!(
            "{host_b} asked for credentials and none are set for it: KRM_CATALOG_GIT_TOKEN with KRM_CATALOG_GIT_TOKEN_HOST={host_b}, or a `machine 127.0.0.1` entry in .netrc; the .netrc `default` entry is never sent"
        )),
        "{}",
        said(&out)
    );
    // `catalog view` of a source (not trusted yet) sends nothing, even to the token's host.
    let before_a = a.log();
    let out = env.run_with(
        &[
            "catalog",
            "view",
            &format!("git::{private_a}//catalogs/team?ref=v1"),
        ],
        "",
        &[
            ("KRM_CATALOG_GIT_TOKEN", TOKEN),
            ("KRM_CATALOG_GIT_TOKEN_HOST", &host_a),
        ],
    );
    assert!(!out.status.success(), "{}", said(&out));
    assert!(
        a.log()[before_a.len()..].contains("GET /private/repo"),
        "{}",
        a.log()
    );
    assert!(
        !a.log()[before_a.len()..].contains("[Authorization]"),
        "{}",
        a.log()
    );
    assert!(
        stderr(&out).contains(&format!(
            "{host_a} asked for credentials; `catalog view` sends none, since the source is not trusted yet"
        )),
        "{}",
        said(&out)
    );
    assert!(!said(&out).contains(TOKEN), "the token was printed");
}

/// Issue 21 H5: a pack of a few KB whose deltas unpack to 256 MiB each (8 of them:
/// `tests/support/git_delta_bomb.py`, served as stored by `git http-backend`) fails at gix's
/// allocation limit (`KRM_CATALOG_MAX_GIT_OBJECT_BYTES`, 16 MiB) with an error naming it; a
/// chain of 48 deltas of 15 MiB each, which gix holds at once, fails at the memory budget (8
/// times the limit); the run stays small in memory; below the limit the same shape loads.
#[test]
fn issue15_h5_git_delta_bomb_is_refused_bounded_in_memory() {
    const MEASURE: &str = "import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdin=sys.stdin, stdout=sys.stdout, stderr=sys.stderr)
sys.stderr.write('peak-kib=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(p.returncode)
";
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    make_repo(http.root());
    let dir = http.root().join("repo");
    let bomb = |branch: &str, args: &[&str]| {
        let ids = succeed(
            Command::new("python3")
                .arg(crate::util::root().join("tests/support/git_delta_bomb.py"))
                .arg(dir.join(".git/objects"))
                .args(args),
        );
        git(&dir, &["checkout", "-q", "-b", branch, "main"]);
        for (i, id) in ids.lines().enumerate() {
            git(
                &dir,
                &[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("100644,{id},big{i}.bin"),
                ],
            );
        }
        git(&dir, &["commit", "-q", "-m", branch]);
    };
    bomb("bomb", &["8", "256"]);
    bomb("chain", &["48", "3", "chain"]);
    bomb("small", &["2", "1"]);
    let url = http.url("repo");
    let env = TestContext::new();
    let input = |branch: &str| {
        resource_list(
            &entry(&url, &format!("ref: {branch}, ")),
            &[&http.url("*")],
            "",
        )
    };
    // The run under a Python parent that reports the peak resident memory of its child.
    let measured = |branch: &str, extra: &[(&str, &str)]| {
        let mut cmd = env.command("python3");
        cmd.envs(extra.iter().copied())
            .args(["-c", MEASURE])
            .arg(crate::util::bin())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("python3");
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(input(branch).as_bytes()).expect("stdin");
        }
        let out = child.wait_with_output().expect("wait");
        let peak_kib: u64 = stderr(&out)
            .lines()
            .find_map(|l| l.strip_prefix("peak-kib="))
            .and_then(|n| n.parse().ok())
            .expect("peak line");
        (out, peak_kib / 1024)
    };
    // Each delta past the allocation limit.
    let (out, peak_mib) = measured("bomb", &[]);
    assert_fails_with(
        &out,
        &format!(
            "{url}: an object of the repository unpacks to more than 16777216 bytes (a pack of small deltas can expand without bound); raise KRM_CATALOG_MAX_GIT_OBJECT_BYTES if the repository holds files that big"
        ),
    );
    assert!(
        peak_mib < 128,
        "peak {peak_mib} MiB for a pack that unpacks to 2 GiB"
    );
    // Each delta under it, 48 levels held at once: the memory budget. At a limit of 4 MiB
    // (a budget of 32 MiB) and levels of 3 MiB (144 MiB), so that a debug build gets there
    // well within the deadline.
    let (out, peak_mib) = measured(
        "chain",
        &[
            ("KRM_CATALOG_MAX_GIT_OBJECT_BYTES", "4194304"),
            ("KRM_CATALOG_HTTP_TIMEOUT", "30"),
        ],
    );
    assert_fails_with(
        &out,
        &format!(
            "{url}: unpacking the fetched pack took more than 33554432 bytes of memory (a pack of deltas can expand without bound); raise KRM_CATALOG_MAX_GIT_OBJECT_BYTES (the budget is 8 times it) if the repository holds files that big"
        ),
    );
    assert!(peak_mib < 100, "peak {peak_mib} MiB for a chain of 144 MiB");
    // A limit of 1 MiB refuses the 1 MiB blobs plus one byte; the default takes them.
    let out = env.run_with(
        &[],
        &input("small"),
        &[("KRM_CATALOG_MAX_GIT_OBJECT_BYTES", "1048576")],
    );
    assert_fails_with(&out, "unpacks to more than 1048576 bytes");
    let out = env.run(&[], &input("small"));
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Issue 21 M2: plain `http://` Git to a host that is not loopback is refused before any
/// request, pinned or not, as a `url:` catalog at the same address is.
#[test]
fn issue15_m2_plain_http_git_to_a_remote_host_is_refused() {
    let env = TestContext::new();
    let url = "http://192.0.2.1/repo";
    for fields in [
        "ref: v1, ".to_owned(),
        format!("ref: v1, commit: {}, ", "a".repeat(40)),
    ] {
        let out = env.run(&[], &resource_list(&entry(url, &fields), &[url], ""));
        assert_fails_with(
            &out,
            &format!("{url}: plain HTTP is refused except for loopback hosts; use https://"),
        );
        assert!(!stderr(&out).contains("cannot fetch"), "{}", stderr(&out));
    }
}

/// `git hash-object --literally` of a tree written byte by byte: `(mode, name, id)`.
fn crafted_tree(dir: &Path, entries: &[(&str, &[u8], &str)]) -> String {
    use std::io::Write as _;
    let mut raw = Vec::new();
    for (mode, name, id) in entries {
        raw.extend_from_slice(mode.as_bytes());
        raw.push(b' ');
        raw.extend_from_slice(name);
        raw.push(0);
        let hex = id.as_bytes();
        for pair in hex.chunks(2) {
            let text = std::str::from_utf8(pair).expect("hex");
            raw.push(u8::from_str_radix(text, 16).expect("hex"));
        }
    }
    let mut child = Command::new("git")
        .current_dir(dir)
        .args(["hash-object", "-t", "tree", "--literally", "-w", "--stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("git hash-object");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&raw)
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Issue 21 L4: tree entries named `..`, `/etc/abs.yaml` or twice the same name (which Git
/// never writes) are an error naming the tree and the entry; a URL with a backslash (which
/// parsers read as different hosts) is refused as written.
#[test]
fn issue15_l4_crafted_tree_entries_and_backslash_urls_are_refused() {
    let test = test_name!();
    if !have("git", test) {
        return;
    }
    let env = TestContext::new();
    let base = env.mkdir("repos");
    make_repo(&base);
    let dir = base.join("repo");
    let url = format!("file://{}", dir.display());
    let blob = git(&dir, &["rev-parse", "HEAD:catalogs/team/catalog.yaml"]);
    let other = git(&dir, &["hash-object", "-w", "README.md"]);
    for (branch, team, bad) in [
        (
            "dotdot",
            vec![
                ("100644", &b"catalog.yaml"[..], blob.as_str()),
                ("100644", &b".."[..], other.as_str()),
            ],
            "has an entry named \"..\", which is not a file name (a crafted tree: Git never writes one)",
        ),
        (
            "absolute",
            vec![
                ("100644", &b"/etc/abs.yaml"[..], blob.as_str()),
                ("100644", &b"catalog.yaml"[..], blob.as_str()),
            ],
            "has an entry named \"/etc/abs.yaml\", which is not a file name (a crafted tree: Git never writes one)",
        ),
        (
            "twice",
            vec![
                ("100644", &b"catalog.yaml"[..], blob.as_str()),
                ("100644", &b"catalog.yaml"[..], other.as_str()),
            ],
            "has two entries named \"catalog.yaml\" (a crafted tree: Git never writes one)",
        ),
    ] {
        let team_tree = crafted_tree(&dir, &team);
        let catalogs = crafted_tree(&dir, &[("40000", b"team", &team_tree)]);
        let root = crafted_tree(&dir, &[("40000", b"catalogs", &catalogs)]);
        let commit = git(&dir, &["commit-tree", &root, "-m", branch]);
        git(
            &dir,
            &["update-ref", &format!("refs/heads/{branch}"), &commit],
        );
        let out = env.run(
            &[],
            &resource_list(&entry(&url, &format!("ref: {branch}, ")), &[], ""),
        );
        assert_fails_with(&out, &format!("{url}@{commit}: tree {team_tree} {bad}"));
    }
    // `http://A\@B/`: the WHATWG parser (trust) reads host A, gix read host B.
    let backslash = "http://127.0.0.1:1\\\\@example.com/repo";
    let out = env.run(
        &[],
        &resource_list(
            &format!("{{git: {{url: \"{backslash}\", ref: v1}}}}"),
            &["http://127.0.0.1:1/*"],
            "",
        ),
    );
    assert_fails_with(
        &out,
        "spec.catalogs[0].git.url: must not contain a backslash: URL parsers read it differently (write / or %5C)",
    );
    let out = env.run(
        &[
            "catalog",
            "view",
            &format!("git::{}?ref=v1", backslash.replace("\\\\", "\\")),
        ],
        "",
    );
    assert!(!out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("url must not contain a backslash"),
        "{}",
        stderr(&out)
    );
}

/// Issue 21 M4: the ref advertisement is bounded: a server that advertises 100,001 refs (an
/// honest `git http-backend` over a repository that has that many tags starting with `v1`)
/// ends the fetch with an error naming the bound, before gix holds them all.
#[test]
fn issue15_m4_ref_advertisement_is_bounded() {
    use std::fmt::Write as _;
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    let commit = make_repo(http.root());
    let dir = http.root().join("repo");
    let mut packed = String::from("# pack-refs with: peeled fully-peeled sorted \n");
    let mut names: Vec<String> = (0..100_001)
        .map(|i| format!("refs/tags/v1-{i:06}"))
        .collect();
    names.push("refs/heads/main".to_owned());
    names.sort();
    for name in &names {
        let _ = writeln!(packed, "{commit} {name}");
    }
    fs_err::write(dir.join(".git/packed-refs"), packed).expect("packed-refs");
    fs_err::remove_file(dir.join(".git/refs/heads/main")).expect("loose main");
    let url = http.url("repo");
    // `v1`: ls-refs asks for the prefixes `refs/tags/v1` and `refs/heads/v1`, which every tag
    // matches.
    let input = resource_list(&entry(&url, "ref: v1, "), &[&http.url("*")], "");
    let out = TestContext::new().run(&[], &input);
    assert_fails_with(
        &out,
        &format!(
            "{url}: the server advertised more than 100000 refs or 16777216 bytes of them; a catalog repository needs a few"
        ),
    );
}

/// Issue 21 M3: the Git cache is a faithful copy of the commit's subtree: a catalog whose
/// files sit in one directory (`path: catalogs`, all under `team/`) reads the same cold, warm
/// and offline: the same `catalog view` (digest included) and the same run output.
#[test]
fn issue15_m3_git_cache_is_a_faithful_copy() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    let commit = make_repo(http.root());
    let url = http.url("repo");
    let source = format!("git::{url}//catalogs?ref=v1&commit={commit}");
    let env = TestContext::new();
    let cold = env.run(&["catalog", "view", &source], "");
    assert!(cold.status.success(), "{}", stderr(&cold));
    let requests = http.requests();
    let warm = env.run(&["catalog", "view", &source], "");
    assert_eq!(http.requests(), requests, "the warm view fetched");
    assert_eq!(stdout(&warm), stdout(&cold));
    let input = resource_list(
        &format!("{{git: {{url: \"{url}\", ref: v1, commit: {commit}, path: catalogs}}}}"),
        &[&http.url("*")],
        "",
    );
    let fresh = TestContext::new();
    let online = fresh.run(&[], &input);
    assert!(online.status.success(), "{}", stderr(&online));
    let warm = fresh.run(&[], &input);
    assert_eq!(stdout(&warm), stdout(&online));
    drop(http);
    let offline = fresh.run(&[], &input.replace(ONLINE, OFFLINE));
    assert_eq!(
        stdout(&offline).replace("    offline: true\n", ""),
        stdout(&online)
    );
}

/// Issue 22: `catalog view` and a run apply one trust rule to `file://` Git sources
/// (`catalog_ref::is_local_git_url`): a run loads one without a `trustedCatalogs` entry, so the
/// view calls it local and trusted (it said a run needs `trustedCatalogs: ["git::file://…"]`),
/// and what a run refuses the view refuses with the same message.
#[test]
fn issue16_catalog_view_and_a_run_agree_on_file_git_sources() {
    let test = test_name!();
    if !have("git", test) {
        return;
    }
    let env = TestContext::new();
    let base = env.mkdir("repos");
    let commit = make_repo(&base);
    let url = format!("file://{}", base.join("repo").display());
    // Allowed: the run loads it with no trusted entry, and the view shows it as trusted.
    let out = env.run(&[], &resource_list(&entry(&url, "ref: v1, "), &[], ""));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_output(&out, &annotation(&url, &commit));
    let source = format!("git::{url}//catalogs/team?ref=v1");
    let out = env.run(&["catalog", "view", &source], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Trust:     local source, trusted"),
        "{}",
        stdout(&out)
    );
    let out = env.run(&["catalog", "view", &source, "-o", "yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("trustEntry: null"),
        "{}",
        stdout(&out)
    );
    // Refused: a ref the repository does not have, with the same message both ways.
    let run = env.run(&[], &resource_list(&entry(&url, "ref: nope, "), &[], ""));
    let view = env.run(
        &[
            "catalog",
            "view",
            &format!("git::{url}//catalogs/team?ref=nope"),
        ],
        "",
    );
    assert!(!run.status.success() && !view.status.success());
    let message =
        format!("{url} has no ref \"nope\" (looked for the tag, the branch and a full ref name)");
    for out in [&run, &view] {
        assert!(
            stderr(out).contains(&message),
            "{message:?} in {}",
            stderr(out)
        );
    }
}

/// Issue 22: a Git fetch slower than a second says how it goes with `-v`, as downloads do
/// (source, bytes received, elapsed), and a closing line; without `-v` (stderr a pipe) none.
#[test]
fn issue16_a_slow_git_fetch_reports_progress_with_v() {
    let test = test_name!();
    if !tools(test) {
        return;
    }
    let http = Server::git_http(None);
    make_repo(http.root());
    let url = http.url("slow/repo");
    let input = resource_list(&entry(&url, "ref: main, "), &[&http.url("*")], "");
    let out = TestContext::new().run(&["-v"], &input);
    assert_output(&out, "greeting: hello");
    let err = stderr(&out);
    assert!(
        err.contains(&format!("info: fetching {url}: ")) && err.contains(" bytes, "),
        "{err}"
    );
    assert!(err.contains(&format!("info: fetched {url}: ")), "{err}");
    let out = TestContext::new().run(&[], &input);
    assert_output(&out, "greeting: hello");
    assert!(!stderr(&out).contains("fetching"), "{}", stderr(&out));
}

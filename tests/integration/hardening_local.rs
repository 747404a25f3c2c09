//! Issue 9, the local part: processes, the file system and local input. Exec functions that
//! outlive their deadline or flood their output (F9), `catalog lock` writing through planted
//! links or out of its root (F3), package contents choosing binaries to run (F4), symlink
//! loops (F10), and the small ones (option-like image references, generated paths).

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use krm_catalog::verify::sha256_hex;

use crate::runtimes::{ECHO, RUN_EXEC, exec_catalog, input};
use crate::servers::Server;
use crate::util::{TestContext, have, stderr, stdout, succeed, test_name};

// --- F9: the function timeout holds -----------------------------------------------------------

/// Run an exec function `binary` (resolved through `catalog.yaml`) over `input` with a 2 s
/// timeout; returns the output, how long the run took, and the package.
fn run_exec(binary: &[u8], input: &str, extra: &[(&str, &str)]) -> (Output, Duration, TestContext) {
    let pkg = TestContext::new();
    pkg.write("fn", binary);
    pkg.write(
        "catalog.yaml",
        exec_catalog("file://fn", "fn", Some(&sha256_hex(binary))).as_bytes(),
    );
    let mut env = vec![("KRM_CATALOG_FUNCTION_TIMEOUT", "2")];
    env.extend_from_slice(extra);
    let started = Instant::now();
    let out = pkg.run_with(&[], input, &env);
    (out, started.elapsed(), pkg)
}

/// Whether a process is gone (or a zombie nobody has reaped yet).
fn process_gone(pid: &str) -> bool {
    match fs_err::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn issue9_f9_background_process_holding_stdout_does_not_hold_the_run() {
    // The function answers at once, but leaves a `sleep` behind that inherited its stdout:
    // before the fix the run waited for the sleep (60 s) to close the pipe.
    let script = b"#!/bin/sh\n/bin/sleep 60 &\necho $! > sleeper.pid\n\
exec /bin/sed 's/greeting: hello$/greeting: hello-from-exec/'\n";
    let (out, took, pkg) = run_exec(script, &input("Echo", RUN_EXEC), &[]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("greeting: hello-from-exec"),
        "{}",
        stdout(&out)
    );
    assert!(took < Duration::from_secs(15), "the run took {took:?}");
    // What the function left running was killed with its process group.
    let pid = fs_err::read_to_string(pkg.path().join("sleeper.pid")).expect("sleeper.pid");
    let pid = pid.trim();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !process_gone(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(process_gone(pid), "the background sleep {pid} still runs");
}

#[test]
fn issue9_f9_function_that_never_reads_a_large_input_times_out() {
    // 1 MiB of input to a function whose child never reads stdin: before the fix the writer
    // blocked on the full pipe and the run waited for the child (60 s), far past the deadline.
    let script = b"#!/bin/sh\n/bin/sleep 60\n";
    let big = "x".repeat(1 << 20);
    let input = input("Echo", RUN_EXEC).replace(
        "    greeting: hello\n",
        &format!("    greeting: hello\n    big: {big}\n"),
    );
    let (out, took, _pkg) = run_exec(script, &input, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("timed out after 2s (KRM_CATALOG_FUNCTION_TIMEOUT)"),
        "{}",
        stderr(&out)
    );
    assert!(took < Duration::from_secs(15), "the run took {took:?}");
    // Nothing lost: the items come back as they were.
    assert!(stdout(&out).contains(&big[..1000]), "the big item is gone");
}

#[test]
fn issue9_f9_endless_writer_fails_with_bounded_memory() {
    // `yes` writes forever. Before the fix stdout was read without a bound: under this
    // address-space limit the run aborted on a failed allocation instead of saying why.
    let pkg = TestContext::new()
        .with_address_space(2_000_000 * 1024)
        .with_env("KRM_CATALOG_FUNCTION_TIMEOUT", "5")
        .with_env("KRM_CATALOG_MAX_INPUT_BYTES", "8388608");
    let script: &[u8] = b"#!/bin/sh\nexec /usr/bin/yes\n";
    pkg.write("fn", script);
    pkg.write(
        "catalog.yaml",
        exec_catalog("file://fn", "fn", Some(&sha256_hex(script))).as_bytes(),
    );
    let started = Instant::now();
    let out = pkg.run(&[], &input("Echo", RUN_EXEC));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "wrote more than 8388608 bytes to stdout; raise KRM_CATALOG_MAX_INPUT_BYTES if that much output is expected"
        ),
        "{}",
        stderr(&out)
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        stdout(&out).contains("greeting: hello\n"),
        "{}",
        stdout(&out)
    );
}

// --- F3 and F10: `catalog lock` writes only its own files ------------------------------------

/// A context whose runs still going after 20 s are killed and fail the test (a walk that
/// loops must not hang the suite).
fn deadline() -> TestContext {
    TestContext::new().with_deadline(Duration::from_secs(20))
}

/// A context with `catalog/functions.yaml` (one unpinned exec runtime, `file://fn`, whose
/// binary sits beside it) and an empty directory `outside` beside the catalog; runs go in
/// `catalog`.
fn lockable() -> TestContext {
    let pkg = deadline().in_dir("catalog");
    pkg.write("catalog/fn", ECHO);
    pkg.write(
        "catalog/functions.yaml",
        exec_catalog("file://fn", "fn", None),
    );
    pkg.mkdir("outside");
    pkg
}

fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).expect("symlink");
}

#[test]
fn issue9_f3_a_planted_lock_tmp_link_is_not_written_through() {
    let pkg = lockable();
    let catalog = pkg.path().join("catalog");
    let victim = pkg.write("outside/bashrc", "precious\n");
    // Before the fix the lock wrote its temporary file to this fixed name, through the link.
    symlink(&victim, &catalog.join("functions.lock-tmp"));
    let out = pkg.run(&["catalog", "lock", "."], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        fs_err::read_to_string(&victim).expect("victim"),
        "precious\n",
        "the lock wrote through the planted link"
    );
    let locked = fs_err::read_to_string(catalog.join("functions.yaml")).expect("catalog");
    assert!(
        locked.contains(&format!("sha256: {}", sha256_hex(ECHO))),
        "{locked}"
    );
    // The planted link is left alone, and no temporary file is left behind.
    assert!(
        fs_err::symlink_metadata(catalog.join("functions.lock-tmp"))
            .expect("link")
            .file_type()
            .is_symlink()
    );
    let names: Vec<String> = fs_err::read_dir(&catalog)
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with(".functions.yaml.")),
        "{names:?}"
    );
}

#[test]
fn issue9_f3_links_out_of_the_catalog_are_not_followed() {
    let pkg = lockable();
    let catalog = pkg.path().join("catalog");
    let outside = pkg.path().join("outside");
    // A linked directory and a linked file, both leading out of the catalog to catalogs
    // that would need a lock.
    let ext = outside.join("ext");
    let unlocked = exec_catalog("file://fn", "fn", None);
    pkg.write("outside/ext/other.yaml", &unlocked);
    pkg.write("outside/single.yaml", &unlocked);
    symlink(&ext, &catalog.join("ext"));
    symlink(&outside.join("single.yaml"), &catalog.join("single.yaml"));
    let out = pkg.run(&["catalog", "lock", "."], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        fs_err::read_to_string(ext.join("other.yaml")).expect("other"),
        unlocked,
        "the lock edited a file outside the catalog"
    );
    assert_eq!(
        fs_err::read_to_string(outside.join("single.yaml")).expect("single"),
        unlocked
    );
    assert!(
        fs_err::symlink_metadata(catalog.join("single.yaml"))
            .expect("link")
            .file_type()
            .is_symlink(),
        "the link was replaced"
    );
    assert!(
        stderr(&out).contains("a symbolic link; `catalog lock` does not follow links"),
        "{}",
        stderr(&out)
    );
    // Named directly, a linked file is refused with a message naming its target.
    let out = pkg.run(&["catalog", "lock", "single.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(&format!(
            "single.yaml: is a symbolic link to \"{}\"; `catalog lock` does not write through links: lock the file it points to",
            outside.join("single.yaml").display()
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs_err::read_to_string(outside.join("single.yaml")).expect("single"),
        unlocked
    );
}

#[test]
fn issue9_f10_catalog_lock_finishes_on_symlink_loops() {
    let pkg = lockable();
    let catalog = pkg.path().join("catalog");
    // Two links back to the directory itself: following them is 2^40 paths.
    symlink(Path::new("."), &catalog.join("a"));
    symlink(Path::new("../catalog"), &catalog.join("b"));
    let out = pkg.run(&["catalog", "lock", "."], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 1, "{}", stdout(&out));
}

// --- F4: package files cannot choose a local binary ---------------------------------------------

/// `input("Echo", functions)` with the catalog as an item of the input instead of a path.
fn inline_input(catalog: &str, functions: &str) -> String {
    let item: String = catalog
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("- {l}\n")
            } else {
                format!("  {l}\n")
            }
        })
        .collect();
    input("Echo", functions)
        .replace("    catalogs:\n    - path: catalog.yaml\n", "")
        .replace("functionConfig:\n", &format!("{item}functionConfig:\n"))
}

/// The run failed with `needle` in stdout and stderr and kept the ConfigMap as it came.
fn assert_refused(out: &Output, needle: &str) {
    let text = stdout(out);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", stderr(out));
    assert!(text.contains(needle), "no {needle:?} in\n{text}");
    assert!(stderr(out).contains(needle), "{}", stderr(out));
    assert!(text.contains("greeting: hello\n"), "{text}");
}

#[test]
fn issue9_f4_exec_runtimes_from_inline_catalogs_need_an_explicit_opt_in() {
    let pkg = TestContext::new();
    pkg.write("fn", ECHO);
    let catalog = exec_catalog("file://fn", "fn", Some(&sha256_hex(ECHO)));
    // allowExec alone no longer lets the package pick the binary.
    let out = pkg.run(&[], &inline_input(&catalog, RUN_EXEC));
    assert_refused(
        &out,
        "this kind runs an exec binary named by an inline catalog (an item of the input), so the package chooses what runs on this machine; set functions.allowInlineExec: true to allow it",
    );
    let opted_in = "{mode: run, allowExec: true, allowInlineExec: true}";
    let out = pkg.run(&[], &inline_input(&catalog, opted_in));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("greeting: hello-from-exec"),
        "{}",
        stdout(&out)
    );
    // The ConfigMap form of the same opt-in.
    let configmap = inline_input(&catalog, opted_in).replace(
        "functionConfig:\n  apiVersion: krm-catalog.dev/v1alpha1\n  kind: ResolveCatalog\n  metadata:\n    name: fns\n  spec:\n    builtin: false\n    functions: {mode: run, allowExec: true, allowInlineExec: true}\n",
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fns\n  data:\n    builtin: \"false\"\n    mode: run\n    allow-exec: \"true\"\n    allow-inline-exec: \"true\"\n",
    );
    assert!(configmap.contains("allow-inline-exec"), "{configmap}");
    let out = pkg.run(&[], &configmap);
    assert!(out.status.success(), "{}", stderr(&out));
    // Opted in, an inline catalog still cannot reach out of the package: the attack of the
    // issue maps a kind onto the shell, with its own sha256.
    let shell = fs_err::read("/bin/sh").expect("/bin/sh");
    let catalog = exec_catalog("file:///bin/sh", "sh", Some(&sha256_hex(&shell)));
    let out = pkg.run(&[], &inline_input(&catalog, opted_in));
    assert_refused(&out, "outside the catalog root");
}

/// `kpt fn render PKG` started elsewhere runs us in its own directory and names the package
/// in `package-path`: an inline catalog's `file://` runtime is a file of that package, as it
/// is when kpt runs inside it (it was looked for in kpt's directory).
#[test]
fn issue20_inline_exec_runtimes_are_files_of_the_package_kpt_names() {
    let pkg = TestContext::new();
    pkg.write("fn", ECHO);
    let catalog = exec_catalog("file://fn", "fn", Some(&sha256_hex(ECHO)));
    let opted_in = "{mode: run, allowExec: true, allowInlineExec: true}";
    let input = inline_input(&catalog, opted_in).replace(
        "  metadata:\n    name: fns\n",
        &format!(
            "  metadata:\n    name: fns\n    annotations:\n      internal.config.kubernetes.io/package-path: {}\n",
            pkg.path().display()
        ),
    );
    assert!(input.contains("package-path"), "{input}");
    let parent = pkg.path().parent().expect("parent").to_path_buf();
    let elsewhere = pkg.in_dir(&parent);
    let out = elsewhere.run(&[], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("greeting: hello-from-exec"),
        "{}",
        stdout(&out)
    );
}

/// A package with `catalog/functions.yaml` naming `uri` (pinned to ECHO) and ECHO at
/// `catalog/fn` and at `fn` beside the catalog directory.
fn confined(uri: &str) -> TestContext {
    let pkg = TestContext::new();
    fs_err::create_dir_all(pkg.path().join("catalog")).expect("mkdir");
    pkg.write("catalog/fn", ECHO);
    pkg.write("fn", ECHO);
    pkg.write(
        "catalog/functions.yaml",
        exec_catalog(uri, "fn", Some(&sha256_hex(ECHO))).as_bytes(),
    );
    pkg
}

fn confined_input() -> String {
    input("Echo", RUN_EXEC).replace("- path: catalog.yaml", "- path: catalog/functions.yaml")
}

#[test]
fn issue9_f4_file_uris_resolve_inside_the_catalog_root() {
    // Relative to the catalog's own directory.
    let pkg = confined("file://fn");
    let out = pkg.run(&[], &confined_input());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("greeting: hello-from-exec"));

    let pkg = confined("file://../fn");
    assert_refused(
        &pkg.run(&[], &confined_input()),
        "file://../fn: `..` is not allowed in `file://` URIs; name a file inside the catalog root",
    );

    let outside = TestContext::new();
    let abs = outside.write("fn", ECHO);
    let pkg = confined(&format!("file://{}", abs.display()));
    assert_refused(&pkg.run(&[], &confined_input()), "outside the catalog root");

    // A link inside the catalog that leads out of it.
    let pkg = confined("file://link");
    symlink(&abs, &pkg.path().join("catalog/link"));
    assert_refused(
        &pkg.run(&[], &confined_input()),
        &format!(
            "file://link: resolves to {}, outside the catalog root",
            fs_err::canonicalize(&abs).expect("canonical").display()
        ),
    );
}

#[test]
fn issue9_f4_remote_catalogs_cannot_name_local_files() {
    let case = test_name!();
    if !have("python3", case) {
        return;
    }
    let pkg = TestContext::new();
    let abs = pkg.write("fn", ECHO);
    // Plain HTTP is allowed on loopback.
    let server = Server::start(None, None);
    let catalog = exec_catalog(
        &format!("file://{}", abs.display()),
        "fn",
        Some(&sha256_hex(ECHO)),
    );
    server.put("fns.yaml", catalog.as_bytes());
    let url = server.url("fns.yaml");
    let input = input("Echo", RUN_EXEC).replace(
        "    catalogs:\n    - path: catalog.yaml\n",
        &format!("    catalogs:\n    - url: {url}\n    trustedCatalogs: [\"{url}\"]\n"),
    );
    let out = pkg.run(&[], &input);
    assert_refused(
        &out,
        &format!(
            "file://{}: `file://` URIs are allowed only in local catalogs (a path in the function config, or an inline catalog); the catalog {url} cannot name a file on this machine",
            abs.display()
        ),
    );
    // `catalog verify` of the remote catalog refuses it too.
    let out = pkg.run(&["catalog", "verify", &url], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("a remote catalog cannot name a file on this machine"),
        "{}",
        stdout(&out)
    );
}

// --- F10 and issue 8 point 6: `render -f` -------------------------------------------------------

#[test]
fn issue9_f10_render_dir_finishes_on_symlink_loops() {
    let work = deadline();
    work.write(
        "pkg/sub/app.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n",
    );
    let dir = work.path().join("pkg");
    // Links back up: following them is 2^40 paths (until ELOOP) before the fix.
    symlink(Path::new(".."), &dir.join("sub/up"));
    symlink(Path::new("../sub"), &dir.join("sub/again"));
    let out = work.run(&["render", "-f", "pkg"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n"
    );
}

#[test]
fn issue8_render_resourcelist_file_and_fn_config_exclude_each_other() {
    let pkg = deadline();
    pkg.write(
        "list.yaml",
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: krm-catalog.dev/v1alpha1\n  kind: ResolveCatalog\n  metadata:\n    name: a\n",
    );
    pkg.write(
        "fn.yaml",
        "apiVersion: krm-catalog.dev/v1alpha1\nkind: ResolveCatalog\nmetadata:\n  name: b\n",
    );
    let out = pkg.run(&["render", "--fn-config", "fn.yaml", "-f", "list.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(
            "list.yaml: the ResourceList has a functionConfig and --fn-config fn.yaml is given too; use one of them"
        ),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}

/// `render -f DIR` reads every file of the package; a ResourceList among them must not supply
/// the function config, or the package opts itself in to running its own binary
/// (`allowInlineExec` and an inline catalog naming a file it ships).
#[test]
fn issue9_f4_a_resource_list_inside_a_render_directory_cannot_choose_the_settings() {
    let work = deadline();
    let pkg = work.mkdir("pkg");
    let marker = work.path().join("ran");
    let binary = format!("#!/bin/sh\necho ran > {}\ncat\n", marker.display());
    work.write("pkg/fn", &binary);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        fs_err::set_permissions(pkg.join("fn"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    let catalog = exec_catalog("file://pkg/fn", "fn", Some(&sha256_hex(binary.as_bytes())));
    let list = inline_input(
        &catalog,
        "{mode: run, allowExec: true, allowInlineExec: true}",
    );
    work.write("pkg/list.yaml", &list);
    let out = work.run(&["render", "-f", "pkg"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "list.yaml: a ResourceList in a directory carries a functionConfig, and files of a package do not choose the settings"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!marker.exists(), "the package's binary ran");
    // Named on the command line, the same file is the user's choice.
    let out = work.run(&["render", "-f", "pkg/list.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(marker.exists(), "{}", stderr(&out));
}

/// `catalog lock` edits text: the `uri:` line of a runtime may appear earlier in the file (a
/// template's block scalar). The digest goes to the runtime, and an edit that cannot be
/// placed there fails and writes nothing, rather than changing the template and reporting
/// the runtime locked while it is not.
#[test]
fn issue9_f3_lock_never_edits_a_template_that_repeats_the_uri() {
    let pkg = deadline();
    pkg.write("fn", ECHO);
    let template = "apiVersion: kubara.io/v1alpha1\nkind: ServiceDefinition\nmetadata:\n  name: notes\nspec:\n  chartPath: notes\n  status: enabled\n  templates:\n    notes.yaml.j2: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata:\n        name: notes\n      data:\n        uri: file://fn\n";
    let catalog = exec_catalog("file://fn", "fn", None);
    let file = pkg.write("catalog.yaml", format!("{template}---\n{catalog}"));
    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let locked = fs_err::read_to_string(&file).expect("read");
    assert!(
        locked.starts_with(template),
        "the template changed:\n{locked}"
    );
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));

    // The same text inside the catalog document, before the runtime: refused, nothing written.
    let annotated = catalog.replacen(
        "metadata:\n",
        "metadata:\n  annotations:\n    notes: |\n      uri: file://fn\n",
        1,
    );
    assert_ne!(annotated, catalog);
    fs_err::write(&file, &annotated).expect("write");
    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the sha256 lines did not land where the runtimes are"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs_err::read_to_string(&file).expect("read"), annotated);
}

/// `render -f DIR` reads the package's files: a link to `/dev/zero` or a pipe among them is
/// left out with a warning (before, the first filled memory, the second blocked forever), and
/// what it reads is bounded like the function's stdin.
#[test]
fn issue9_f10_render_leaves_out_pipes_and_devices_and_bounds_what_it_reads() {
    let case = test_name!();
    if !have("mkfifo", case) {
        return;
    }
    let work = deadline()
        .with_address_space(1 << 30)
        .with_env("KRM_CATALOG_MAX_INPUT_BYTES", "1000000");
    let pkg = work.write(
        "pkg/app.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n",
    );
    let pkg = pkg.parent().expect("pkg");
    symlink(Path::new("/dev/zero"), &pkg.join("zero.yaml"));
    succeed(Command::new("mkfifo").arg(pkg.join("pipe.yaml")));
    let out = work.run(&["render", "-f", "pkg"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n"
    );
    for name in ["zero.yaml", "pipe.yaml"] {
        assert!(
            stderr(&out).contains(&format!("{name}: left out (not a regular file")),
            "{}",
            stderr(&out)
        );
    }
    // Named on the command line, a device is read, but only up to the input limit.
    let out = work.run(&["render", "-f", "/dev/zero"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "/dev/zero: the inputs hold more than the limit of 1000000 bytes; raise KRM_CATALOG_MAX_INPUT_BYTES"
        ),
        "{}",
        stderr(&out)
    );
}

/// Without a cache (no `KRM_CATALOG_CACHE`, `XDG_CACHE_HOME` or `HOME`), the verified binary
/// goes to a directory of the temp directory that only this user can enter. Before, it was a
/// world-readable `krm-catalog-bin-<pid>`, a name another user could create first and so
/// swap the binary between its check and its run.
#[cfg(unix)]
#[test]
fn issue9_small_binary_without_a_cache_goes_to_a_private_directory() {
    use std::os::unix::fs::PermissionsExt as _;
    let pkg = TestContext::new();
    pkg.write("fn", ECHO);
    pkg.write(
        "catalog.yaml",
        exec_catalog("file://fn", "fn", Some(&sha256_hex(ECHO))).as_bytes(),
    );
    let tmp = pkg.mkdir("tmp");
    let tmp_path = tmp.to_str().expect("utf-8");
    let out = pkg.run_with(
        &[],
        &input("Echo", RUN_EXEC),
        &[
            ("KRM_CATALOG_CACHE", ""),
            ("XDG_CACHE_HOME", ""),
            ("HOME", "/"),
            ("TMPDIR", tmp_path),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("greeting: hello-from-exec"));
    let dirs: Vec<_> = fs_err::read_dir(&tmp)
        .expect("read")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("krm-catalog-bin-")
        })
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let mode = dirs[0].metadata().expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{:?} has mode {mode:o}", dirs[0].path());
}

//! Starlark runtimes (issue 12): scripts of a catalog run in-process with kpt's
//! `ctx.resource_list` contract, in run mode without `allowExec`, bounded in ticks, heap and
//! time; a script from a URL only with its sha256 (served on loopback HTTPS); pin mode writes
//! kustomize's `starlark` annotation for a script inside the package, or says why it cannot.

use std::process::Output;
use std::time::{Duration, Instant};

use krm_catalog::verify::sha256_hex;

use crate::remote::{OFFLINE, ONLINE};
use crate::servers::{Server, tls};
use crate::util::{TestContext, assert_within, have, have_starlark, stderr, stdout, test_name};

/// Sets the labels of the step's `spec.labels` on every item, and reports how many.
const SET_LABELS: &str = r#"# Set the labels of the function config on every item.
labels = ctx.resource_list["functionConfig"]["spec"]["labels"]
for r in ctx.resource_list["items"]:
    r["metadata"].setdefault("labels", {}).update(labels)
ctx.resource_list["results"] = [{
    "message": "labelled %d items" % len(ctx.resource_list["items"]),
    "severity": "info",
}]
"#;

/// Reports a warning about every ConfigMap without `data.owner`, changes nothing.
const CHECK_OWNER: &str = r#"load("krmfn.star", "krmfn")
results = []
for r in ctx.resource_list["items"]:
    if krmfn.match_gvk(r, "v1", "ConfigMap") and "owner" not in r.get("data", {}):
        results.append({
            "message": "ConfigMap has no owner",
            "severity": "warning",
            "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": r["metadata"]["name"]},
            "field": {"path": "data.owner"},
        })
ctx.resource_list["results"] = results
"#;

/// A KEP catalog with one Starlark kind `fn.acme.dev/v1 SetLabels`; `runtime` is the value of
/// `starlark:`.
fn catalog(runtime: &str) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1alpha1
kind: KRMFunctionCatalog
metadata:
  name: acme-starlark
spec:
  krmFunctions:
  - group: fn.acme.dev
    names:
      kind: SetLabels
    versions:
    - name: v1
      runtime:
        starlark: {runtime}
"
    )
}

/// A package with `catalog.yaml` for `runtime` and the script `file` holding `script`.
fn package(runtime: &str, file: &str, script: &str) -> TestContext {
    let pkg = TestContext::new();
    pkg.write("catalog.yaml", catalog(runtime));
    pkg.write(file, script);
    pkg
}

fn run_mode(pkg: &TestContext) -> Output {
    pkg.run(&[], &crate::runtimes::input("SetLabels", "{mode: run}"))
}

/// The run failed with an error result containing `needle` (also on stderr), and lost no item.
fn assert_error(out: &Output, needle: &str) {
    let text = stdout(out);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", stderr(out));
    assert!(text.contains(needle), "no {needle:?} in\n{text}");
    assert!(
        stderr(out).contains(needle),
        "stderr lacks {needle:?}:\n{}",
        stderr(out)
    );
    assert!(text.contains("greeting: hello\n"), "{text}");
    assert!(text.contains("kind: SetLabels"), "{text}");
}

#[test]
fn issue12_starlark_label_setting_script_runs_without_allow_exec() {
    if !have_starlark(test_name!()) {
        return;
    }
    let pkg = package("{path: set-labels.star}", "set-labels.star", SET_LABELS);
    let out = run_mode(&pkg);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    // The ConfigMap got the label; the step's own config stays, as a local-config source.
    let cm = &text[text.find("kind: ConfigMap").expect("ConfigMap")..];
    assert!(
        cm.contains("labels:\n      team: platform"),
        "no label on the ConfigMap:\n{text}"
    );
    assert!(text.contains("greeting: hello\n"), "{text}");
    assert!(text.contains("config.kubernetes.io/local-config"), "{text}");
    assert!(text.contains("message: labelled 1 items"), "{text}");
    assert!(text.contains("runtime: starlark set-labels.star"), "{text}");
    // A declared sha256 of a local script is checked too.
    let wrong = "bad0".repeat(16);
    let pkg = package(
        &format!("{{path: set-labels.star, sha256: {wrong}}}"),
        "set-labels.star",
        SET_LABELS,
    );
    assert_error(&run_mode(&pkg), "sha256 mismatch");
    let pkg = package(
        &format!(
            "{{path: set-labels.star, sha256: {}}}",
            sha256_hex(SET_LABELS.as_bytes())
        ),
        "set-labels.star",
        SET_LABELS,
    );
    assert!(run_mode(&pkg).status.success());
}

#[test]
fn issue12_starlark_results_are_merged() {
    if !have_starlark(test_name!()) {
        return;
    }
    let pkg = package("{path: check.star}", "check.star", CHECK_OWNER);
    let out = run_mode(&pkg);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    let at = text.find("- message: ConfigMap has no owner").expect(&text);
    let result = &text[at..];
    for line in [
        "severity: warning",
        "kind: ConfigMap",
        "name: demo",
        "path: data.owner",
        "runtime: starlark check.star",
    ] {
        assert!(result.contains(line), "no {line:?} in\n{result}");
    }
}

#[test]
fn issue12_starlark_endless_loop_is_bounded() {
    if !have_starlark(test_name!()) {
        return;
    }
    let pkg = package(
        "{path: loop.star}",
        "loop.star",
        "x = 0\nfor i in range(2147483647):\n    x += 1\n",
    )
    .with_env("KRM_CATALOG_FUNCTION_TIMEOUT", "2")
    .with_deadline(Duration::from_secs(60));
    let started = Instant::now();
    let out = run_mode(&pkg);
    assert_within(started, Duration::from_secs(30));
    // Whichever bound comes first, the time or the ticks, the message names line 3.
    assert_error(&out, "starlark script loop.star:3:5: ");
    let text = stdout(&out);
    assert!(
        text.contains("still running after 2s (KRM_CATALOG_FUNCTION_TIMEOUT)")
            || text.contains("is there an endless loop?"),
        "{text}"
    );
}

#[test]
fn issue12_starlark_memory_hog_is_bounded() {
    if !have_starlark(test_name!()) {
        return;
    }
    let hog =
        "s = \"x\" * 1000000\nbig = []\nfor i in range(100000):\n    big.append(s + str(i))\n";
    let pkg = package("{path: hog.star}", "hog.star", hog)
        // The heap limit is 256 MiB: a run that kept 100 GB would die here first.
        .with_address_space(4 << 30)
        .with_deadline(Duration::from_secs(120));
    let out = run_mode(&pkg);
    // The interpreter's heap check (every thousand ticks) or the address space of
    // krm-catalog-starlark (issue 20), whichever comes first.
    let text = stdout(&out);
    if text.contains("Heap memory limit") {
        assert_error(
            &out,
            "starlark script hog.star:4:5: Heap memory limit of 268435456 bytes exceeded",
        );
    } else {
        assert_error(
            &out,
            "starlark script hog.star: ran out of memory: a script may use 536870912 bytes of address space (KRM_CATALOG_STARLARK_MAX_MEMORY_BYTES)",
        );
    }
}

/// SECURITY.md "Starlark sandbox": a script nested past what the interpreter's stack takes
/// (each of these aborted the process with exit 134 before the nesting check) fails the step
/// with an error naming the script and line; the ResourceList is written, items unchanged.
#[test]
fn issue12_starlark_deep_nesting_fails_the_step() {
    if !have_starlark(test_name!()) {
        return;
    }
    let cases = [
        (
            "brackets.star",
            format!("x = 1\ny = {}1{}\n", "[".repeat(20_000), "]".repeat(20_000)),
            "starlark script brackets.star:2:105: nested too deeply (more than 100 brackets",
        ),
        (
            "minus.star",
            format!("# a chain of unary minus\nx = {}1\n", "-".repeat(100_000)),
            "starlark script minus.star:2:",
        ),
        (
            "plus.star",
            format!("x = 1\n\ny = 1{}\n", " + 1".repeat(100_000)),
            "starlark script plus.star:3:",
        ),
    ];
    for (file, script, needle) in cases {
        let pkg = package(&format!("{{path: {file}}}"), file, &script)
            .with_deadline(Duration::from_secs(120));
        let out = run_mode(&pkg);
        assert_error(&out, needle);
        assert!(
            stdout(&out).contains("nested too deeply"),
            "{}",
            stdout(&out)
        );
    }
}

/// SECURITY.md "Starlark sandbox": a value nested deeply at run time (a list wrapped 100,000
/// times in a loop) fails the step with an error naming the script; the ResourceList is
/// written and its items are unchanged (the label each script sets first is not kept). What
/// the interpreter guards itself (`==`) fails with the line; what it does not (`json.encode`,
/// the collector between top-level statements) overflows the stack of `krm-catalog-starlark`
/// (issue 20: before, of krm-catalog itself), which ends that process only.
#[test]
fn issue12_starlark_deeply_nested_value_fails_the_step() {
    if !have_starlark(test_name!()) {
        return;
    }
    let label = "ctx.resource_list[\"items\"][0][\"metadata\"][\"labels\"] = {\"deep\": \"yes\"}\n";
    let nested = |n: usize, body: &str| {
        format!(
            "{label}def f():\n    x = []\n    for i in range({n}):\n        x = [x]\n    {body}\nf()\n"
        )
    };
    let overflow = "the interpreter overflowed its stack (values or calls nested too deeply)";
    let cases = [
        (
            "encode.star",
            nested(100_000, "return json.encode(x)"),
            "starlark script encode.star: ",
            overflow,
        ),
        (
            "equal.star",
            nested(100_000, "return [x] == [[x]]"),
            "starlark script equal.star:6:",
            "Too many recursion levels",
        ),
        (
            "store.star",
            nested(
                100_000,
                "ctx.resource_list[\"items\"][0][\"data\"] = {\"deep\": x}",
            ),
            "starlark script store.star: cannot write back ctx.resource_list: ",
            "is nested more than 126 levels deep",
        ),
        (
            "store200.star",
            nested(
                200,
                "ctx.resource_list[\"items\"][0][\"data\"] = {\"deep\": x}",
            ),
            "starlark script store200.star: cannot write back ctx.resource_list: ",
            "is nested more than 126 levels deep (the YAML nesting depth limit is 128",
        ),
        (
            "collect.star",
            format!("{label}x = []\nfor i in range(100000):\n    x = [x]\ny = 1\n"),
            "starlark script collect.star: ",
            overflow,
        ),
    ];
    for (file, script, at, message) in cases {
        let pkg = package(&format!("{{path: {file}}}"), file, &script)
            .with_deadline(Duration::from_secs(120));
        let out = run_mode(&pkg);
        assert_error(&out, at);
        let text = stdout(&out);
        assert!(text.contains(message), "{file}: {text}");
        assert!(!text.contains("deep: yes"), "{file}: {text}");
    }
}

#[test]
fn issue12_starlark_script_cannot_read_files() {
    if !have_starlark(test_name!()) {
        return;
    }
    let pkg = package(
        "{path: read.star}",
        "read.star",
        "# tries to read a file\ndata = open(\"/etc/passwd\").read()\n",
    );
    let out = run_mode(&pkg);
    assert_error(&out, "starlark script read.star:2:8: ");
    assert!(stdout(&out).contains("`open`"), "{}", stdout(&out));
    let pkg = package(
        "{path: load.star}",
        "load.star",
        "load(\"/etc/passwd\", \"root\")\n",
    );
    assert_error(
        &run_mode(&pkg),
        "is refused: Starlark scripts run sandboxed, without files or network",
    );
    // A path out of the catalog's root is not read either.
    let pkg = package("{path: ../outside.star}", "x.star", SET_LABELS);
    assert_error(&run_mode(&pkg), "`..` is not allowed");
}

#[test]
fn issue12_starlark_script_from_url_needs_its_sha256() {
    let case = test_name!();
    if !have("python3", case) || !have("openssl", case) || !have_starlark(case) {
        return;
    }
    let tls = tls();
    let server = Server::start(Some(&tls), None);
    server.put("set-labels.star", SET_LABELS.as_bytes());
    let url = server.url("set-labels.star");
    let right = sha256_hex(SET_LABELS.as_bytes());
    let with = |runtime: String| {
        let pkg = TestContext::new().with_ca(&tls.ca);
        pkg.write("catalog.yaml", catalog(&runtime));
        pkg
    };
    // The KEP's form, a bare URL: fail closed.
    let out = run_mode(&with(url.clone()));
    assert_error(
        &out,
        &format!(
            "starlark script {url} has no sha256; a script fetched from a URL runs only when pinned"
        ),
    );
    // A wrong sha256.
    let wrong = "bad0".repeat(16);
    let out = run_mode(&with(format!("{{url: \"{url}\", sha256: {wrong}}}")));
    assert_error(
        &out,
        &format!("{url}: sha256 mismatch: expected {wrong}, downloaded {right}"),
    );
    // The right one: it runs, and a warm cache runs offline with no request.
    let pkg = with(format!("{{url: \"{url}\", sha256: {right}}}"));
    let before = server.requests();
    let out = run_mode(&pkg);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("message: labelled 1 items"));
    assert_eq!(server.requests(), before + 1);
    let offline = crate::runtimes::input("SetLabels", "{mode: run}").replace(ONLINE, OFFLINE);
    let out = pkg.run(&[], &offline);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(server.requests(), before + 1, "the warm run made a request");
    // Pin mode cannot pin a URL.
    let out = pkg.run(&[], &crate::runtimes::input("SetLabels", "{mode: pin}"));
    assert_error(&out, "comes from a URL, which cannot be pinned");
    assert!(stdout(&out).contains("use functions.mode: run"));
}

#[test]
fn issue12_starlark_pin_mode_writes_the_kustomize_annotation() {
    let pkg = package(
        "{path: fns/set-labels.star}",
        "fns/set-labels.star",
        SET_LABELS,
    );
    let out = pkg.run(&[], &crate::runtimes::input("SetLabels", "{mode: pin}"));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("config.kubernetes.io/function: |\n        starlark:\n          path: fns/set-labels.star\n"),
        "{text}"
    );
    assert!(text.contains("v5.5.0 removed Starlark functions"), "{text}");
    // The ConfigMap is untouched: nothing ran.
    assert!(!text.contains("team: platform\n  data"), "{text}");
    // A script of a catalog outside the package cannot be pinned.
    let pkg = TestContext::new();
    pkg.write("shared/catalog.yaml", catalog("{path: set-labels.star}"));
    pkg.write("shared/set-labels.star", SET_LABELS);
    pkg.mkdir("pkg");
    let pkg = pkg.in_dir("pkg");
    let input = crate::runtimes::input("SetLabels", "{mode: pin}")
        .replace("- path: catalog.yaml", "- path: ../shared/catalog.yaml");
    let out = pkg.run(&[], &input);
    assert_error(&out, "is outside the package");
}

#[test]
fn issue12_starlark_catalog_verify_checks_the_script() {
    let pkg = package("{path: set-labels.star}", "set-labels.star", SET_LABELS);
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("starlark set-labels.star (a file of this catalog)"),
        "{}",
        stdout(&out)
    );
    let wrong = "bad0".repeat(16);
    let pkg = package(
        &format!("{{path: set-labels.star, sha256: {wrong}}}"),
        "set-labels.star",
        SET_LABELS,
    );
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains(&format!(
            "MISMATCH fn.acme.dev/v1/SetLabels  starlark set-labels.star: expected sha256:{wrong}, downloaded sha256:{}",
            sha256_hex(SET_LABELS.as_bytes())
        )),
        "{}",
        stdout(&out)
    );
}

/// `catalog lock` pins a Starlark script from a URL by the sha256 of its download (the KEP's
/// URL string becomes `{url, sha256}`, `{url}` gains `sha256`), leaves a `path` alone (a file
/// of the catalog, trusted as the catalog is), and keeps everything else byte for byte.
#[test]
fn issue12_starlark_lock_fills_the_sha256_of_url_scripts() {
    let case = test_name!();
    if !have("python3", case) || !have("openssl", case) || !have_starlark(case) {
        return;
    }
    let tls = tls();
    let server = Server::start(Some(&tls), None);
    server.put("set-labels.star", SET_LABELS.as_bytes());
    server.put("check.star", CHECK_OWNER.as_bytes());
    let url = server.url("set-labels.star");
    let check = server.url("check.star");
    let hex = sha256_hex(SET_LABELS.as_bytes());
    let check_hex = sha256_hex(CHECK_OWNER.as_bytes());
    let pkg = TestContext::new().with_ca(&tls.ca);
    let original = format!(
        "{}  # the owner check\n  - group: fn.acme.dev\n    names:\n      kind: CheckOwner\n    versions:\n    - name: v1\n      runtime:\n        starlark:\n          url: {check} # by URL\n  - group: fn.acme.dev\n    names:\n      kind: Local\n    versions:\n    - name: v1\n      runtime:\n        starlark: {{path: local.star}}\n",
        catalog(&format!("{url} # the KEP's form"))
    );
    let file = pkg.write("catalog.yaml", &original);
    pkg.write("local.star", SET_LABELS);
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));

    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "locked catalog.yaml: {url} → sha256:{hex}\nlocked catalog.yaml: {check} → sha256:{check_hex}\n"
        )
    );
    let expected = original
        .replace(
            &format!("        starlark: {url} # the KEP's form\n"),
            &format!(
                "        starlark: # the KEP's form\n          url: {url}\n          sha256: {hex}\n"
            ),
        )
        .replace(
            &format!("          url: {check} # by URL\n"),
            &format!("          url: {check} # by URL\n          sha256: {check_hex}\n"),
        );
    assert_ne!(expected, original);
    assert_eq!(fs_err::read_to_string(&file).expect("read"), expected);
    // Now it verifies, runs, and a second lock changes nothing.
    let out = pkg.run(&["catalog", "verify", "catalog.yaml"], "");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("3 runtimes checked, 0 not ok"),
        "{}",
        stdout(&out)
    );
    let out = run_mode(&pkg);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("message: labelled 1 items"));
    let out = pkg.run(&["catalog", "lock", "catalog.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("already pinned"), "{}", stdout(&out));
    assert_eq!(fs_err::read_to_string(&file).expect("read"), expected);
    // A script that cannot be downloaded fails the lock, and nothing is written.
    let missing = server.url("missing.star");
    let broken = catalog(&missing);
    let file = pkg.write("broken.yaml", &broken);
    let out = pkg.run(&["catalog", "lock", "broken.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains(&missing), "{}", stderr(&out));
    assert_eq!(fs_err::read_to_string(&file).expect("read"), broken);
}

/// KEP-2985's `KRMFunctionDefinition` (one function per document) is locked and verified
/// like a catalog's functions: in a catalog directory, beside a catalog document.
#[test]
fn issue12_lock_and_verify_krm_function_definitions() {
    let case = test_name!();
    if !have("python3", case) || !have("openssl", case) {
        return;
    }
    let tls = tls();
    let server = Server::start(Some(&tls), None);
    server.put("set-labels.star", SET_LABELS.as_bytes());
    let url = server.url("set-labels.star");
    let hex = sha256_hex(SET_LABELS.as_bytes());
    let pkg = TestContext::new().with_ca(&tls.ca);
    let definition = format!(
        "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionDefinition\nmetadata:\n  name: set-labels\nspec:\n  group: fn.acme.dev\n  names:\n    kind: SetLabels\n  versions:\n  - name: v1\n    runtime:\n      starlark:\n        url: {url}\n---\napiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionDefinition\nmetadata:\n  name: echo\nspec:\n  group: fn.acme.dev\n  names:\n    kind: Echo\n  versions:\n  - name: v1\n    runtime:\n      exec:\n        platforms:\n        - bin: echo.sh\n          os: linux\n          arch: amd64\n          uri: file://bin/echo.sh\n"
    );
    let file = pkg.write("catalog/definitions.yaml", &definition);
    pkg.write("catalog/bin/echo.sh", "#!/bin/sh\ncat\n");
    let echo_hex = sha256_hex(b"#!/bin/sh\ncat\n");
    let out = pkg.run(&["catalog", "verify", "catalog"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("UNPINNED fn.acme.dev/v1/SetLabels  starlark")
            && stdout(&out)
                .contains("UNPINNED fn.acme.dev/v1/Echo (linux/amd64)  exec file://bin/echo.sh"),
        "{}",
        stdout(&out)
    );
    let out = pkg.run(&["catalog", "lock", "catalog"], "");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let locked = fs_err::read_to_string(&file).expect("read");
    assert_eq!(
        locked,
        definition
            .replace(
                &format!("        url: {url}\n"),
                &format!("        url: {url}\n        sha256: {hex}\n")
            )
            .replace(
                "          uri: file://bin/echo.sh\n",
                &format!("          uri: file://bin/echo.sh\n          sha256: {echo_hex}\n")
            )
    );
    let out = pkg.run(&["catalog", "verify", "catalog"], "");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains(&format!(
            "ok       fn.acme.dev/v1/SetLabels  starlark {url} sha256:{hex}"
        )) && stdout(&out).contains("2 runtimes checked, 0 not ok"),
        "{}",
        stdout(&out)
    );
    // A changed script is a mismatch.
    server.put("set-labels.star", CHECK_OWNER.as_bytes());
    let out = pkg.run(&["catalog", "verify", "catalog"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("MISMATCH fn.acme.dev/v1/SetLabels  starlark"),
        "{}",
        stdout(&out)
    );
}

/// Issue 20: run `script` (file `file`) in run mode under a Python parent that reports the peak
/// resident memory of every process it waited for (krm-catalog, and krm-catalog-starlark,
/// which krm-catalog waits for): `RUSAGE_CHILDREN` takes the largest. The output, and that
/// peak in KiB.
fn run_measured(pkg: &TestContext, case: &str) -> Option<(Output, u64)> {
    const MEASURE: &str = "import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdin=sys.stdin, stdout=sys.stdout, stderr=sys.stderr)
sys.stderr.write('peak-kib=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(p.returncode)
";
    if !have("python3", case) {
        return None;
    }
    let input = crate::runtimes::input("SetLabels", "{mode: run}");
    let mut cmd = pkg.command("python3");
    cmd.args(["-c", MEASURE])
        .arg(crate::util::bin())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("python3");
    let mut stdin = child.stdin.take().expect("stdin");
    std::thread::spawn(move || {
        use std::io::Write as _;
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    let peak = stderr(&out)
        .lines()
        .find_map(|l| l.strip_prefix("peak-kib="))
        .and_then(|n| n.parse().ok())
        .expect("peak line");
    Some((out, peak))
}

/// A script that allocates without bound (a list of 200 million ints, dict copies, one huge
/// string, `str()` of a list that shares itself) is one error result naming the script; the
/// run writes its ResourceList with every other item unchanged and exits 1; no process of the
/// run holds more than 512 MiB (so the tree stays under 1 GiB).
#[test]
fn issue20_starlark_memory_exhaustion_is_one_error_and_bounded() {
    let case = test_name!();
    if !have_starlark(case) {
        return;
    }
    for script in [
        "x = list(range(200000000))\n",
        "d = {str(i): i for i in range(1000)}\nx = [dict(d) for i in range(10000000)]\n",
        "s = \"x\" * 2000000000\n",
        "a = [\"x\" * 100]\nfor i in range(40):\n    a = [a, a]\ns = str(a)\n",
    ] {
        let pkg =
            package("{path: hog.star}", "hog.star", script).with_deadline(Duration::from_secs(120));
        let Some((out, peak)) = run_measured(&pkg, case) else {
            return;
        };
        let text = stdout(&out);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{script}\n{text}\n{}",
            stderr(&out)
        );
        // The heap check, the address space, or a crash where the interpreter does not
        // check an allocation (starlark_map copies a dict without checking): each is one error
        // naming the script.
        assert!(
            text.contains("message: \"starlark script hog.star"),
            "{script}\n{text}"
        );
        assert_eq!(text.matches("severity: error").count(), 1, "{text}");
        assert!(text.contains("greeting: hello\n"), "{text}");
        assert!(!text.contains("team: platform\n  data"), "{text}");
        assert!(peak <= 512 * 1024, "{script}: peak {peak} KiB");
    }
}

/// A script that recurses, loops, or hangs in one native call ends within the function
/// timeout plus a second (plus the time to start), with one error naming the script.
#[test]
fn issue20_starlark_recursion_and_time_are_bounded() {
    if !have_starlark(test_name!()) {
        return;
    }
    let pkg = package(
        "{path: rec.star}",
        "rec.star",
        "def f(n):\n    return f(n + 1)\nf(0)\n",
    );
    assert_error(
        &run_mode(&pkg),
        "starlark script rec.star:2:12: Starlark call stack overflow",
    );
    for (script, at) in [
        (
            "x = 0\nfor i in range(2147483647):\n    x += 1\n",
            "loop.star:3:5",
        ),
        (
            "a = []\nb = []\nfor i in range(40):\n    a = [a, a]\n    b = [b, b]\nsame = a == b\n",
            "loop.star",
        ),
    ] {
        let pkg = package("{path: loop.star}", "loop.star", script)
            .with_env("KRM_CATALOG_FUNCTION_TIMEOUT", "2")
            .with_deadline(Duration::from_secs(60));
        let started = Instant::now();
        let out = run_mode(&pkg);
        // 2 s of timeout, 1 s of grace, and room for two debug binaries to start on a loaded
        // machine.
        assert_within(started, Duration::from_secs(5));
        assert_error(
            &out,
            &format!("starlark script {at}: still running after 2s (KRM_CATALOG_FUNCTION_TIMEOUT)"),
        );
    }
}

/// What a script writes back is checked like any function's output: every item a KRM object,
/// numbers as they were (no float for an integer), nothing YAML cannot hold exactly.
#[test]
fn issue20_starlark_output_is_checked() {
    if !have_starlark(test_name!()) {
        return;
    }
    for (script, needle) in [
        (
            "ctx.resource_list[\"items\"].append({\"a\": 1})\n",
            "is not a KRM object: apiVersion is missing",
        ),
        (
            "ctx.resource_list[\"items\"][0][\"data\"][\"n\"] = 1 << 64\n",
            "the integer 18446744073709551616 does not fit in 64 bits",
        ),
        (
            "ctx.resource_list[\"items\"][0][\"data\"][\"n\"] = float(\"inf\")\n",
            "inf is not a number YAML and JSON can hold",
        ),
        (
            "ctx.resource_list[\"results\"] = \"done\"\n",
            "must be a list of dicts, not a string",
        ),
    ] {
        let pkg = package("{path: out.star}", "out.star", script);
        assert_error(&run_mode(&pkg), needle);
    }
    let numbers = "for r in ctx.resource_list[\"items\"]:\n    r[\"data\"] = {\"i\": 9007199254740993, \"f\": 0.5, \"w\": 2.0, \"m\": -3}\n";
    let pkg = package("{path: n.star}", "n.star", numbers);
    let out = run_mode(&pkg);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("    i: 9007199254740993\n    f: 0.5\n    w: 2.0\n    m: -3\n"),
        "{text}"
    );
}

/// A script an inline catalog (an item of the package) names runs only with
/// `allowInlineExec`, as an inline exec binary does; what it cannot parse is reported without
/// quoting it.
#[test]
fn issue20_starlark_inline_scripts_need_the_opt_in_and_are_not_quoted() {
    if !have_starlark(test_name!()) {
        return;
    }
    let inline = |functions: &str| {
        let catalog = "- apiVersion: config.kubernetes.io/v1alpha1
  kind: KRMFunctionCatalog
  metadata:
    name: in-the-package
    annotations:
      internal.config.kubernetes.io/path: catalog.yaml
  spec:
    krmFunctions:
    - group: fn.acme.dev
      names:
        kind: SetLabels
      versions:
      - name: v1
        runtime:
          starlark: {path: secret.txt}
functionConfig:";
        crate::runtimes::input("SetLabels", functions)
            .replace("functionConfig:", catalog)
            .replace("    catalogs:\n    - path: catalog.yaml\n", "")
    };
    let pkg = TestContext::new();
    pkg.write("secret.txt", "password hunter2 for production\n");
    let out = pkg.run(&[], &inline("{mode: run}"));
    assert_error(
        &out,
        "runs a Starlark script named by an inline catalog (an item of the input), so the package chooses what runs on this machine; set functions.allowInlineExec: true",
    );
    let out = pkg.run(&[], &inline("{mode: run, allowInlineExec: true}"));
    assert_error(
        &out,
        "starlark script secret.txt:1:10: Parse error: unexpected identifier '…'",
    );
    assert!(!stdout(&out).contains("hunter2"), "{}", stdout(&out));
    assert!(!stderr(&out).contains("hunter2"), "{}", stderr(&out));
}

/// Without krm-catalog-starlark beside the binary or on PATH, a Starlark kind fails with
/// what to install; the run writes its ResourceList and the other items.
#[test]
fn issue20_starlark_missing_runtime_says_what_to_install() {
    let pkg = package("{path: set-labels.star}", "set-labels.star", SET_LABELS);
    let lonely = pkg.path().join("bin");
    fs_err::create_dir_all(&lonely).expect("mkdir");
    fs_err::copy(crate::util::bin(), lonely.join("krm-catalog")).expect("copy");
    let input = crate::runtimes::input("SetLabels", "{mode: run}");
    let mut child = pkg
        .command(lonely.join("krm-catalog"))
        .env("PATH", "/nonexistent")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    std::thread::spawn(move || {
        use std::io::Write as _;
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    assert_error(
        &out,
        &format!(
            "Starlark runtimes run in krm-catalog-starlark, which is neither in {} nor on PATH: install it beside krm-catalog",
            lonely.display()
        ),
    );
}

//! Issue 22: the KEP-2906 `runtime` field of a function config item short-circuits the
//! catalog (it was ignored, and the catalog's image pinned), and a runtime that requires a
//! storage mount has one rule in pin and run mode: `functions.mounts` (kpt's `--mount`)
//! allows it, and without it both modes refuse it with the same message. A `docker` on
//! `PATH` that logs its arguments and copies stdin to stdout stands in for the engine.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::runtimes::{ECHO, image_catalog, input};
use crate::util::{TestContext, have_starlark, stderr, stdout, test_name};

const DIGEST: &str = "2f2b9a1f6b0b7c5b4d7e0f3c5a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e";
const OTHER: &str = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e2f2b9a1f6b0b7c5b4d7e0f3c5a";

/// A `docker` that logs its arguments and passes the ResourceList through; the PATH to use.
fn echo_docker(pkg: &TestContext) -> (String, PathBuf) {
    let dir = pkg.mkdir("tools");
    let log = dir.join("docker.log");
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec /bin/cat\n",
        log.display()
    );
    let docker = pkg.write("tools/docker", script);
    make_executable(&docker);
    (format!("{}:/usr/bin:/bin", dir.display()), log)
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The catalog: `Echo` runs `ghcr.io/acme/echo:v1` and needs storage when `storage`.
fn catalog(pkg: &TestContext, storage: bool) {
    let mut kind = format!(
        "  - group: fn.acme.dev
    names:
      kind: Echo
    versions:
    - name: v1
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                labels:
                  type: object
                  additionalProperties: {{type: string}}
      runtime:
        container:
          image: ghcr.io/acme/echo:v1
          sha256: {DIGEST}
"
    );
    if storage {
        kind.push_str("          requireStorageMount: true\n");
    }
    pkg.write("catalog.yaml", image_catalog(&[kind]));
}

/// `input` with the Echo item carrying `runtime` (YAML lines at the item's indentation).
fn with_runtime(functions: &str, runtime: &str) -> String {
    input("Echo", functions).replace(
        "  spec:\n    labels:",
        &format!("{runtime}  spec:\n    labels:"),
    )
}

fn errors(out: &Output) -> String {
    format!("{}\n{}", stdout(out), stderr(out))
}

#[test]
fn issue16_explicit_runtime_field_short_circuits_the_catalog() {
    let pkg = TestContext::new();
    catalog(&pkg, false);
    let runtime =
        format!("  runtime:\n    container:\n      image: ghcr.io/acme/other@sha256:{OTHER}\n");
    // Pin mode: the item's own image, pinned; the schema neither prunes nor rejects `runtime`.
    let out = pkg.run(&[], &with_runtime("{mode: pin}", &runtime));
    let text = stdout(&out);
    assert!(out.status.success(), "{}", errors(&out));
    assert!(
        text.contains(&format!("image: ghcr.io/acme/other@sha256:{OTHER}")),
        "{text}"
    );
    assert!(!text.contains("ghcr.io/acme/echo"), "{text}");
    assert!(text.contains("  runtime:\n    container:\n"), "{text}");
    // Run mode: the same image through the engine.
    let (path, log) = echo_docker(&pkg);
    let out = pkg.run_with(
        &[],
        &with_runtime("{mode: run}", &runtime),
        &[("PATH", &path)],
    );
    assert!(out.status.success(), "{}", errors(&out));
    let argv = fs_err::read_to_string(&log).expect("docker was not called");
    assert!(
        argv.contains(&format!("-- ghcr.io/acme/other@sha256:{OTHER}")),
        "{argv}"
    );
    // An image without a digest is refused as any image is.
    let out = pkg.run(
        &[],
        &with_runtime(
            "{mode: pin}",
            "  runtime:\n    container:\n      image: ghcr.io/acme/other:v2\n",
        ),
    );
    assert_eq!(out.status.code(), Some(1), "{}", errors(&out));
    assert!(errors(&out).contains("has no digest"), "{}", errors(&out));
    // A runtime that does not read is an error at its field.
    let out = pkg.run(
        &[],
        &with_runtime(
            "{mode: pin}",
            "  runtime:\n    container:\n      imgae: x\n",
        ),
    );
    assert_eq!(out.status.code(), Some(1), "{}", errors(&out));
    assert!(
        errors(&out).contains(
            "explicit runtime: unknown field \"runtime.container.imgae\" (did you mean \"image\"?)"
        ),
        "{}",
        errors(&out)
    );
}

#[test]
fn issue16_explicit_exec_path_needs_the_inline_opt_ins() {
    let pkg = TestContext::new();
    catalog(&pkg, false);
    let bin = pkg.write("bin/echo-fn", ECHO);
    make_executable(&bin);
    let runtime = "  runtime:\n    exec:\n      path: bin/echo-fn\n";
    let out = pkg.run(&[], &with_runtime("{mode: run}", runtime));
    assert_eq!(out.status.code(), Some(1), "{}", errors(&out));
    assert!(
        errors(&out).contains("the item's own runtime runs the binary bin/echo-fn; set functions.allowExec: true to allow it"),
        "{}",
        errors(&out)
    );
    let out = pkg.run(&[], &with_runtime("{mode: run, allowExec: true}", runtime));
    assert_eq!(out.status.code(), Some(1), "{}", errors(&out));
    assert!(
        errors(&out).contains("which the package chooses; set functions.allowInlineExec: true"),
        "{}",
        errors(&out)
    );
    let all = "{mode: run, allowExec: true, allowInlineExec: true}";
    let out = pkg.run(&[], &with_runtime(all, runtime));
    assert!(out.status.success(), "{}", errors(&out));
    assert!(
        stdout(&out).contains("greeting: hello-from-exec"),
        "{}",
        stdout(&out)
    );
    // Outside the package: refused even with both.
    let out = pkg.run(
        &[],
        &with_runtime(all, "  runtime:\n    exec:\n      path: ../echo-fn\n"),
    );
    assert_eq!(out.status.code(), Some(1), "{}", errors(&out));
    assert!(
        errors(&out).contains("is not a file inside the package"),
        "{}",
        errors(&out)
    );
    // Pin mode: kustomize's own annotation, with what it takes to run it.
    let out = pkg.run(&[], &with_runtime("{mode: pin}", runtime));
    assert!(out.status.success(), "{}", errors(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "config.kubernetes.io/function: |\n        exec:\n          path: bin/echo-fn\n"
        ),
        "{text}"
    );
    assert!(text.contains("--enable-exec"), "{text}");
}

#[test]
fn issue16_storage_mounts_one_rule_in_pin_and_run_mode() {
    let pkg = TestContext::new();
    catalog(&pkg, true);
    pkg.mkdir("data");
    let (path, log) = echo_docker(&pkg);
    let refused =
        "ghcr.io/acme/echo:v1 requires a storage mount; allow it by giving one: functions.mounts";
    for mode in ["pin", "run"] {
        let out = pkg.run_with(
            &[],
            &input("Echo", &format!("{{mode: {mode}}}")),
            &[("PATH", &path)],
        );
        assert_eq!(out.status.code(), Some(1), "{mode}: {}", errors(&out));
        assert!(errors(&out).contains(refused), "{mode}: {}", errors(&out));
    }
    assert!(!log.exists(), "docker ran without the mount allowed");
    // Allowed: pinned with kustomize's mounts, run with docker's --mount (read-only).
    let mounts = "mounts: [{type: bind, src: data, dst: /data}]";
    let out = pkg.run(&[], &input("Echo", &format!("{{mode: pin, {mounts}}}")));
    assert!(out.status.success(), "{}", errors(&out));
    assert!(
        stdout(&out).contains("          mounts:\n          - type: bind\n            src: data\n            dst: /data\n            rw: false\n"),
        "{}",
        stdout(&out)
    );
    let out = pkg.run_with(
        &[],
        &input("Echo", &format!("{{mode: run, {mounts}}}")),
        &[("PATH", &path)],
    );
    assert!(out.status.success(), "{}", errors(&out));
    let argv = fs_err::read_to_string(&log).expect("docker was not called");
    let data = fs_err::canonicalize(pkg.path().join("data")).expect("data");
    assert!(
        argv.contains(&format!(
            "--mount type=bind,source={},target=/data,readonly -- ",
            data.display()
        )),
        "{argv}"
    );
    // The ConfigMap form takes kpt's --mount string; rw=true makes it writable.
    let cm = input("Echo", "{}").replace(
        "functionConfig:\n  apiVersion: krm-catalog.dev/v1alpha1\n  kind: ResolveCatalog\n  metadata:\n    name: fns\n  spec:\n    builtin: false\n    catalogs:\n    - path: catalog.yaml\n    functions: {}\n",
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fns\n  data:\n    builtin: \"false\"\n    catalogs: catalog.yaml\n    mounts: type=bind,src=data,dst=/data,rw=true\n",
    );
    let out = pkg.run_with(&[], &cm, &[("PATH", &path)]);
    assert!(out.status.success(), "{}", errors(&out));
    let argv = fs_err::read_to_string(&log).expect("docker log");
    assert!(
        argv.contains(&format!(
            "--mount type=bind,source={},target=/data -- ",
            data.display()
        )),
        "{argv}"
    );
    // A source that is not a directory of the package is refused before anything runs.
    let out = pkg.run_with(
        &[],
        &input("Echo", "{mode: run, mounts: [{src: missing, dst: /data}]}"),
        &[("PATH", &path)],
    );
    assert_eq!(out.status.code(), Some(1), "{}", errors(&out));
    assert!(
        errors(&out)
            .contains("functions.mounts: src \"missing\" is not a directory inside the package"),
        "{}",
        errors(&out)
    );
}

/// A Starlark script of the package named by the item's own runtime runs with
/// `allowInlineExec` (no `allowExec`: it runs sandboxed), as an inline catalog's script does.
#[test]
fn issue16_explicit_starlark_path_runs_with_the_inline_opt_in() {
    if !have_starlark(test_name!()) {
        return;
    }
    let pkg = TestContext::new();
    catalog(&pkg, false);
    pkg.write(
        "greet.star",
        "for r in ctx.resource_list[\"items\"]:\n    if r[\"kind\"] == \"ConfigMap\":\n        r[\"data\"][\"greeting\"] = \"hello-from-starlark\"\n",
    );
    let runtime = "  runtime:\n    starlark:\n      path: greet.star\n";
    let out = pkg.run(&[], &with_runtime("{mode: run}", runtime));
    assert_eq!(out.status.code(), Some(1), "{}", errors(&out));
    assert!(
        errors(&out).contains("set functions.allowInlineExec: true to allow it"),
        "{}",
        errors(&out)
    );
    let out = pkg.run(
        &[],
        &with_runtime("{mode: run, allowInlineExec: true}", runtime),
    );
    assert!(out.status.success(), "{}", errors(&out));
    assert!(
        stdout(&out).contains("greeting: hello-from-starlark"),
        "{}",
        stdout(&out)
    );
}

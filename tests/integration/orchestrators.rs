//! End to end under the real orchestrators, when they are installed: `kpt fn eval --exec`
//! on a package and `kpt fn render --allow-exec` with the function in a Kptfile pipeline.
//! Each test prints `SKIPPED …` and passes when its tool is missing.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use crate::util::{TestContext, bin, have, have_starlark, stderr, stdout, test_name};

const SERVICES: &str = "\
# The services of the hub cluster.
apiVersion: services.krm-catalog.dev/v1alpha1
kind: ServiceSet
metadata:
  name: platform # the ServiceSet's name prefixes the generated files
spec:
  services:
    cert-manager:
      config:
        clusterIssuer:
          email: ops@example.com # who Let's Encrypt writes to
    external-dns:
      status: disabled
    external-secrets:
      status: disabled
    kube-prometheus-stack:
      status: disabled
";

const UNRELATED: &str = "\
# Not ours: must come out byte for byte.
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings # trailing comment
  namespace: apps
data:
  flag: 'on'
  version: \"1.10\"
";

fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs_err::read_dir(&d)
            .expect("read_dir")
            .filter_map(Result::ok)
        {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .expect("prefix")
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, fs_err::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    out
}

fn package() -> TestContext {
    let pkg = TestContext::new();
    pkg.write("clusters/hub/services.yaml", SERVICES);
    pkg.write("unrelated.yaml", UNRELATED);
    pkg
}

/// kpt in the package, with the context's environment for the function it runs.
fn kpt(pkg: &TestContext, args: &[&str]) -> Output {
    pkg.command("kpt").args(args).output().expect("run kpt")
}

/// `kpt fn eval --exec` with the binary under test on the package, with `fn_args` after `--`.
fn eval_exec(pkg: &TestContext, fn_args: &[&str]) -> Output {
    let exe = bin();
    let exe = exe.to_string_lossy();
    let mut argv = vec!["fn", "eval", "--exec", &exe, "."];
    if !fn_args.is_empty() {
        argv.push("--");
        argv.extend_from_slice(fn_args);
    }
    kpt(pkg, &argv)
}

#[test]
fn kpt_fn_eval_exec_writes_generated_files_beside_the_source() {
    if !have("kpt", test_name!()) {
        return;
    }
    let pkg = package();
    let hub = ["cluster-type=hub", "cluster.name=hub-1"];
    let out = eval_exec(&pkg, &hub);
    assert!(
        out.status.success(),
        "kpt fn eval failed:\n{}",
        stderr(&out)
    );

    let files = snapshot(pkg.path());
    let generated = files
        .get("clusters/hub/platform.cert-manager.yaml")
        .unwrap_or_else(|| panic!("no generated file; files: {:?}", files.keys()));
    assert!(
        generated.contains("kind: ClusterIssuer") && generated.contains("kind: Application"),
        "{generated}"
    );
    assert!(generated.contains("email: ops@example.com"), "{generated}");
    assert!(
        files.contains_key("clusters/hub/platform.traefik.yaml"),
        "{:?}",
        files.keys()
    );
    assert!(
        !files.keys().any(|k| k.contains("external-dns")),
        "disabled services generate nothing: {:?}",
        files.keys()
    );
    assert_eq!(
        files["unrelated.yaml"], UNRELATED,
        "an unrelated file changed"
    );
    let source = &files["clusters/hub/services.yaml"];
    assert!(
        source.contains("config.kubernetes.io/local-config: \"true\"")
            || source.contains("config.kubernetes.io/local-config: 'true'"),
        "{source}"
    );
    for comment in [
        "# The services of the hub cluster.",
        "# the ServiceSet's name prefixes",
        "# who Let's Encrypt writes to",
    ] {
        assert!(
            source.contains(comment),
            "comment {comment:?} lost:\n{source}"
        );
    }

    // A second run changes no file.
    let out = eval_exec(&pkg, &hub);
    assert!(
        out.status.success(),
        "second kpt fn eval failed:\n{}",
        stderr(&out)
    );
    assert_eq!(
        snapshot(pkg.path()),
        files,
        "a second run changed the package"
    );
}

#[test]
fn kpt_fn_eval_fails_on_error_results() {
    if !have("kpt", test_name!()) {
        return;
    }
    let pkg = package();
    pkg.write(
        "clusters/hub/services.yaml",
        SERVICES.replace("cert-manager:", "cert-manger:"),
    );
    let before = snapshot(pkg.path());
    let out = eval_exec(&pkg, &[]);
    assert!(!out.status.success());
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        text.contains("unknown service \"cert-manger\" (did you mean \"cert-manager\"?)"),
        "{text}"
    );
    assert_eq!(
        snapshot(pkg.path()),
        before,
        "a failed run must not change the package"
    );
}

#[test]
fn kpt_fn_render_runs_the_function_from_a_kptfile_pipeline() {
    if !have("kpt", test_name!()) {
        return;
    }
    let pkg = package();
    let exe = bin();
    let kptfile = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: hub\npipeline:\n  mutators:\n  - exec: {}\n    configMap:\n      cluster-type: spoke\n      cluster.name: edge-1\n",
        exe.to_string_lossy()
    );
    pkg.write("Kptfile", &kptfile);
    let out = kpt(&pkg, &["fn", "render", "--allow-exec", "."]);
    assert!(
        out.status.success(),
        "kpt fn render failed:\n{}",
        stderr(&out)
    );
    let files = snapshot(pkg.path());
    let generated = &files["clusters/hub/platform.cert-manager.yaml"];
    assert!(
        generated.contains("name: edge-1-cert-manager"),
        "{generated}"
    );
    assert!(
        !files.keys().any(|k| k.contains("argocd")),
        "argocd is hub-only: {:?}",
        files.keys()
    );
    assert_eq!(files["unrelated.yaml"], UNRELATED);
    assert_eq!(files["Kptfile"], kptfile, "the Kptfile must stay as it was");
    let out = kpt(&pkg, &["fn", "render", "--allow-exec", "."]);
    assert!(out.status.success());
    assert_eq!(
        snapshot(pkg.path()),
        files,
        "a second render changed the package"
    );
}

/// Issue 20: `krm-catalog-starlark` is a KRM function of its own: kpt runs it with kpt's
/// `StarlarkRun` function config (the example of kpt's starlark function), and the
/// Deployment's replicas change in the package file. Like every function that writes its items
/// back as values (kpt takes scalar styles from the function's output), the other file keeps
/// its comments and values but not its quoting style: `'on'` comes back as `"on"`.
#[test]
fn kpt_fn_eval_exec_runs_the_starlark_runtime_with_a_starlark_run() {
    let case = test_name!();
    if !have("kpt", case) || !have_starlark(case) {
        return;
    }
    let pkg = TestContext::new();
    pkg.write(
        "deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx # the web server\nspec:\n  replicas: 3\n",
    );
    pkg.write("unrelated.yaml", UNRELATED);
    pkg.write(
        "fn-config/set-replicas.yaml",
        r#"apiVersion: fn.kpt.dev/v1alpha1
kind: StarlarkRun
metadata:
  name: set-replicas
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  replicas: 5
source: |
  for r in ctx.resource_list["items"]:
    if r["kind"] == "Deployment":
      r["spec"]["replicas"] = ctx.resource_list["functionConfig"]["data"]["replicas"]
"#,
    );
    let exe = bin().with_file_name("krm-catalog-starlark");
    let out = kpt(
        &pkg,
        &[
            "fn",
            "eval",
            "--exec",
            &exe.to_string_lossy(),
            "--fn-config",
            "fn-config/set-replicas.yaml",
            ".",
        ],
    );
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let files = snapshot(pkg.path());
    assert_eq!(
        files["deployment.yaml"],
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx # the web server\nspec:\n  replicas: 5\n"
    );
    assert_eq!(files["unrelated.yaml"], UNRELATED.replace("'on'", "\"on\""));
}

/// Issue 20 (noticed at stop 29): kpt runs exec functions in its own directory, so an inline
/// catalog's `file://` runtime is looked for in the package kpt names (`package-path`), not
/// there. Started from the parent, it used to fail with "failed to canonicalize path".
#[test]
fn issue20_kpt_render_from_elsewhere_runs_an_inline_catalogs_exec_runtime() {
    if !have("kpt", test_name!()) {
        return;
    }
    let pkg = TestContext::new();
    pkg.write("fn", crate::runtimes::ECHO);
    let catalog = crate::runtimes::exec_catalog(
        "file://fn",
        "fn",
        Some(&krm_catalog::verify::sha256_hex(crate::runtimes::ECHO)),
    );
    pkg.write("catalog.yaml", catalog.as_bytes());
    pkg.write(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  greeting: hello\n",
    );
    pkg.write(
        "step.yaml",
        "apiVersion: fn.acme.dev/v1\nkind: Echo\nmetadata:\n  name: step\nspec: {}\n",
    );
    pkg.write(
        "fns/fn.yaml",
        "apiVersion: krm-catalog.dev/v1alpha1\nkind: ResolveCatalog\nmetadata:\n  name: fns\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nspec:\n  builtin: false\n  functions: {mode: run, allowExec: true, allowInlineExec: true}\n",
    );
    pkg.write(
        "Kptfile",
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n  - exec: {}\n    configPath: fns/fn.yaml\n",
            bin().to_string_lossy()
        ),
    );
    let parent = pkg.path().parent().expect("parent");
    let out = pkg
        .command("kpt")
        .current_dir(parent)
        .args(["fn", "render", "--allow-exec"])
        .arg(pkg.path())
        .output()
        .expect("run kpt");
    assert!(
        out.status.success(),
        "kpt fn render failed:\n{}",
        stderr(&out)
    );
    let files = snapshot(pkg.path());
    assert!(
        files["cm.yaml"].contains("greeting: hello-from-exec"),
        "{}",
        files["cm.yaml"]
    );
}

/// Issue 22: a package that holds its own catalog. kpt reads the catalog's ServiceDefinitions
/// as package resources; read again as an inline catalog, every definition was a duplicate
/// ("set catalogOverwrite"). A relative path resolves against the directory of the file that
/// declares it (`fns/fn.yaml` says `../team`), whatever kpt's directory is: kpt runs exec
/// functions where it was started, and names the package in `package-path`.
#[test]
fn issue16_kpt_render_of_a_package_holding_its_catalog() {
    if !have("kpt", test_name!()) {
        return;
    }
    let pkg = TestContext::new();
    pkg.write(
        "team/services/hello.yaml",
        "apiVersion: kubara.io/v1alpha1\nkind: ServiceDefinition\nmetadata:\n  name: hello\nspec:\n  chartPath: hello\n  status: enabled\n  configSchema:\n    type: object\n    properties:\n      message: {type: string, default: hi}\n",
    );
    pkg.write(
        "team/charts/hello/cm.yaml.j2",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ instance.name }}\ndata:\n  m: {{ config.message }}\n",
    );
    pkg.write(
        "app.yaml",
        "apiVersion: services.krm-catalog.dev/v1alpha1\nkind: Hello\nmetadata:\n  name: h\n",
    );
    pkg.write(
        "fns/fn.yaml",
        "apiVersion: krm-catalog.dev/v1alpha1\nkind: ResolveCatalog\nmetadata:\n  name: c\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nspec:\n  catalogs:\n  - path: ../team\n",
    );
    let exe = bin();
    pkg.write(
        "Kptfile",
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n  - exec: {}\n    configPath: fns/fn.yaml\n",
            exe.to_string_lossy()
        ),
    );
    // From outside: kpt's directory is the parent.
    let parent = pkg.path().parent().expect("parent");
    let out = pkg
        .command("kpt")
        .current_dir(parent)
        .args(["fn", "render", "--allow-exec"])
        .arg(pkg.path())
        .output()
        .expect("run kpt");
    assert!(
        out.status.success(),
        "kpt fn render failed:\n{}",
        stderr(&out)
    );
    let files = snapshot(pkg.path());
    assert!(
        files["h.hello.yaml"].contains("m: hi"),
        "{:?}",
        files.keys()
    );
    assert!(
        files["team/services/hello.yaml"].contains("config.kubernetes.io/local-config: \"true\""),
        "{}",
        files["team/services/hello.yaml"]
    );
    // From inside: the catalog is read once. The first render marked the catalog's files
    // local-config (so `kpt live apply` leaves them out) and kpt wrote them in its own style,
    // so the catalog digest settles from the second render on: a fixed point from there.
    let render_inside = || {
        let out = kpt(&pkg, &["fn", "render", "--allow-exec", "."]);
        assert!(
            out.status.success(),
            "kpt fn render failed:\n{}",
            stderr(&out)
        );
        snapshot(pkg.path())
    };
    let second = render_inside();
    assert_eq!(
        second.keys().collect::<Vec<_>>(),
        files.keys().collect::<Vec<_>>()
    );
    assert_eq!(render_inside(), second);
    // `kpt fn eval --fn-config` names no file: the path is read from kpt's directory, and the
    // result says so (a warning here: the catalog's files came as items, an inline catalog).
    let out = pkg
        .command("kpt")
        .current_dir(parent)
        .args(["fn", "eval", "--exec"])
        .arg(&exe)
        .arg("--fn-config")
        .arg(pkg.path().join("fns/fn.yaml"))
        .arg(pkg.path())
        .output()
        .expect("run kpt");
    let err = stderr(&out);
    assert!(
        err.contains("catalog directory \\\"../team\\\" does not exist in the current directory (a relative path resolves against the function config's file when `kpt fn render` or `render --fn-config` names it; nothing named it here"),
        "{err}"
    );
    assert!(!err.contains("Kptfile/pkg is of group"), "{err}");
}

/// Issue 22: `render --fn-config DIR/fn.yaml -f DIR` from elsewhere reads the config's
/// relative catalog path from the config's directory, and the catalog's files in `DIR` are that
/// catalog (not a second, inline one).
#[test]
fn issue16_render_resolves_config_paths_against_the_config_file() {
    let ctx = TestContext::new();
    ctx.write(
        "pkg/team/services/hello.yaml",
        "apiVersion: kubara.io/v1alpha1\nkind: ServiceDefinition\nmetadata:\n  name: hello\nspec:\n  chartPath: hello\n  status: enabled\n  configSchema:\n    type: object\n    properties:\n      message: {type: string, default: hi}\n",
    );
    ctx.write(
        "pkg/team/charts/hello/cm.yaml.j2",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ instance.name }}\ndata:\n  m: {{ config.message }}\n",
    );
    ctx.write(
        "pkg/app.yaml",
        "apiVersion: services.krm-catalog.dev/v1alpha1\nkind: Hello\nmetadata:\n  name: h\n",
    );
    ctx.write(
        "pkg/fn.yaml",
        "apiVersion: krm-catalog.dev/v1alpha1\nkind: ResolveCatalog\nmetadata:\n  name: c\nspec:\n  catalogs:\n  - path: team\n",
    );
    let out = ctx.run(&["render", "--fn-config", "pkg/fn.yaml", "-f", "pkg"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("kind: ConfigMap") && text.contains("m: hi"),
        "{text}"
    );
}

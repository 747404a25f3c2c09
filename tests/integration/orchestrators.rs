//! End to end under the real orchestrators, when they are installed: `kpt fn eval --exec`
//! on a package and `kpt fn render --allow-exec` with the function in a Kptfile pipeline.
//! Each test prints `SKIPPED …` and passes when its tool is missing.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::util::{bin, have, test_name};

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

fn package() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    fs_err::create_dir_all(dir.path().join("clusters/hub")).expect("mkdir");
    fs_err::write(dir.path().join("clusters/hub/services.yaml"), SERVICES).expect("write");
    fs_err::write(dir.path().join("unrelated.yaml"), UNRELATED).expect("write");
    dir
}

fn kpt(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new("kpt")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run kpt")
}

#[test]
fn kpt_fn_eval_exec_writes_generated_files_beside_the_source() {
    if !have("kpt", test_name!()) {
        return;
    }
    let pkg = package();
    let exe = bin();
    let exe = exe.to_string_lossy();
    let out = kpt(
        &[
            "fn",
            "eval",
            "--exec",
            &exe,
            ".",
            "--",
            "cluster-type=hub",
            "cluster.name=hub-1",
        ],
        pkg.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "kpt fn eval failed:\n{stderr}");

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
    let out = kpt(
        &[
            "fn",
            "eval",
            "--exec",
            &exe,
            ".",
            "--",
            "cluster-type=hub",
            "cluster.name=hub-1",
        ],
        pkg.path(),
    );
    assert!(
        out.status.success(),
        "second kpt fn eval failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
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
    fs_err::write(
        pkg.path().join("clusters/hub/services.yaml"),
        SERVICES.replace("cert-manager:", "cert-manger:"),
    )
    .expect("write");
    let before = snapshot(pkg.path());
    let exe = bin();
    let out = kpt(
        &["fn", "eval", "--exec", &exe.to_string_lossy(), "."],
        pkg.path(),
    );
    assert!(!out.status.success());
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
    fs_err::write(pkg.path().join("Kptfile"), &kptfile).expect("write Kptfile");
    let out = kpt(&["fn", "render", "--allow-exec", "."], pkg.path());
    assert!(
        out.status.success(),
        "kpt fn render failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
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
    let out = kpt(&["fn", "render", "--allow-exec", "."], pkg.path());
    assert!(out.status.success());
    assert_eq!(
        snapshot(pkg.path()),
        files,
        "a second render changed the package"
    );
}

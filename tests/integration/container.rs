//! The container image under the real orchestrators: `docker run` as kpt and kustomize do it,
//! `kpt fn eval --image`, `kpt fn render` with the image in a Kptfile, and `kubectl kustomize
//! --enable-alpha-plugins` with the image as a transformer and as a generator.
//!
//! `.ci/run` builds the image (`.ci/image`) and sets `KRM_CATALOG_IMAGE`; without it, or
//! without the tools, each test reports `SKIPPED …` (see `util::skipped`) and passes.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::{have, root, test_name};

fn image(test: &str) -> Option<String> {
    match std::env::var("KRM_CATALOG_IMAGE") {
        Ok(image) if !image.is_empty() => Some(image),
        _ => {
            crate::util::skipped(
                test,
                "KRM_CATALOG_IMAGE is not set (scripts/test builds the image with .ci/image)",
            );
            None
        }
    }
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().expect("spawn");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn docker_run_with_stdin(args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = Command::new("docker")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("docker");
    {
        use std::io::Write as _;
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(stdin.as_bytes()).expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn image_is_small_runs_as_nobody_and_needs_no_writable_fs() {
    let Some(image) = image(test_name!()) else {
        return;
    };
    if !have("docker", test_name!()) {
        return;
    }
    let (_, size, _) =
        run(Command::new("docker").args(["image", "inspect", "-f", "{{.Size}}", &image]));
    let size: u64 = size.trim().parse().expect("image size");
    assert!(
        size <= 20 * 1024 * 1024,
        "image is {size} bytes, more than 20 MB"
    );
    let (_, user, _) =
        run(Command::new("docker").args(["image", "inspect", "-f", "{{.Config.User}}", &image]));
    assert_eq!(user.trim(), "65534:65534");

    let input = fs_err::read_to_string(root().join("functions/examples/resourcelist.yaml"))
        .expect("example");
    // Exactly the flags kpt uses, plus a read-only root file system.
    let (ok, stdout, stderr) = docker_run_with_stdin(
        &[
            "run",
            "--rm",
            "-i",
            "--network",
            "none",
            "--user",
            "nobody",
            "--security-opt=no-new-privileges",
            "--read-only",
            &image,
        ],
        &input,
    );
    assert!(ok, "container run failed: {stderr}");
    assert!(stdout.contains("kind: ClusterIssuer"), "{stdout}");
    let (ok, stdout, _) = run(Command::new("docker").args([
        "run",
        "--rm",
        "--read-only",
        "--user",
        "nobody",
        &image,
        "--help",
    ]));
    assert!(
        ok && stdout.contains("ResourceList"),
        "--help in the image (what `kpt fn doc` shows): {stdout}"
    );
}

const SERVICES: &str = "\
# Services of the edge cluster.
apiVersion: services.krm-catalog.dev/v1alpha1
kind: ServiceSet
metadata:
  name: platform # names the generated files
spec:
  clusterType: spoke
  cluster: {name: edge-1}
  services:
    cert-manager:
      config:
        clusterIssuer: {email: ops@example.com}
    external-dns: {status: disabled}
    external-secrets: {status: disabled}
    kube-prometheus-stack: {status: disabled}
    traefik: {status: disabled}
";

const UNRELATED: &str = "# untouched\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings # keep me\ndata:\n  flag: 'on'\n";

fn package(dir: &Path) {
    fs_err::write(dir.join("services.yaml"), SERVICES).expect("write");
    fs_err::write(dir.join("unrelated.yaml"), UNRELATED).expect("write");
}

#[test]
fn kpt_fn_eval_with_the_image() {
    let Some(image) = image(test_name!()) else {
        return;
    };
    if !have("kpt", test_name!()) {
        return;
    }
    let pkg = tempfile::tempdir().expect("tempdir");
    package(pkg.path());
    let (ok, _, stderr) = run(Command::new("kpt").current_dir(pkg.path()).args([
        "fn",
        "eval",
        ".",
        "--image",
        &image,
        "--image-pull-policy",
        "never",
    ]));
    assert!(ok, "kpt fn eval --image failed: {stderr}");
    let generated = fs_err::read_to_string(pkg.path().join("platform.cert-manager.yaml"))
        .expect("generated file");
    assert!(
        generated.contains("kind: ClusterIssuer")
            && generated.contains("name: edge-1-cert-manager"),
        "{generated}"
    );
    assert_eq!(
        fs_err::read_to_string(pkg.path().join("unrelated.yaml")).expect("read"),
        UNRELATED
    );
    let source = fs_err::read_to_string(pkg.path().join("services.yaml")).expect("read");
    assert!(
        source.contains("# Services of the edge cluster.") && source.contains("local-config"),
        "{source}"
    );
}

#[test]
fn kpt_fn_render_with_the_image_in_a_kptfile() {
    let Some(image) = image(test_name!()) else {
        return;
    };
    if !have("kpt", test_name!()) {
        return;
    }
    let pkg = tempfile::tempdir().expect("tempdir");
    package(pkg.path());
    let kptfile = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: edge\npipeline:\n  mutators:\n  - image: {image}\n    configMap:\n      cluster.argocdNamespace: gitops\n"
    );
    fs_err::write(pkg.path().join("Kptfile"), &kptfile).expect("write");
    let (ok, _, stderr) = run(Command::new("kpt").current_dir(pkg.path()).args([
        "fn",
        "render",
        ".",
        "--image-pull-policy",
        "never",
    ]));
    assert!(ok, "kpt fn render failed: {stderr}");
    let generated = fs_err::read_to_string(pkg.path().join("platform.cert-manager.yaml"))
        .expect("generated file");
    assert!(generated.contains("namespace: gitops"), "{generated}");
    assert_eq!(
        fs_err::read_to_string(pkg.path().join("unrelated.yaml")).expect("read"),
        UNRELATED
    );
}

fn kustomize(dir: &Path) -> (bool, String, String) {
    run(Command::new("kubectl")
        .args(["kustomize", "--enable-alpha-plugins"])
        .arg(dir))
}

#[test]
fn kubectl_kustomize_runs_the_image_as_a_transformer() {
    let Some(image) = image(test_name!()) else {
        return;
    };
    if !have("kubectl", test_name!()) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    package(dir.path());
    fs_err::write(
        dir.path().join("fn.yaml"),
        format!(
            "apiVersion: krm-catalog.dev/v1alpha1\nkind: ResolveCatalog\nmetadata:\n  name: platform\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: {image}\nspec:\n  cluster: {{argocdNamespace: gitops}}\n"
        ),
    )
    .expect("write");
    fs_err::write(
        dir.path().join("kustomization.yaml"),
        "resources:\n- services.yaml\n- unrelated.yaml\ntransformers:\n- fn.yaml\n",
    )
    .expect("write");
    let (ok, stdout, stderr) = kustomize(dir.path());
    assert!(ok, "kubectl kustomize failed: {stderr}");
    assert!(
        stdout.contains("kind: ClusterIssuer") && stdout.contains("namespace: gitops"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("kind: ServiceSet"),
        "the local-config source must not reach the build output:\n{stdout}"
    );
    assert!(stdout.contains("name: settings"), "{stdout}");
}

#[test]
fn kubectl_kustomize_runs_the_image_as_a_generator() {
    let Some(image) = image(test_name!()) else {
        return;
    };
    if !have("kubectl", test_name!()) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let generator = SERVICES.replacen(
        "  name: platform # names the generated files\n",
        &format!("  name: platform\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: {image}\n"),
        1,
    );
    fs_err::write(dir.path().join("services.yaml"), generator).expect("write");
    fs_err::write(
        dir.path().join("kustomization.yaml"),
        "generators:\n- services.yaml\n",
    )
    .expect("write");
    let (ok, stdout, stderr) = kustomize(dir.path());
    assert!(ok, "kubectl kustomize failed: {stderr}");
    assert!(
        stdout.contains("kind: ClusterIssuer") && stdout.contains("kind: Application"),
        "{stdout}"
    );
    assert!(!stdout.contains("kind: ServiceSet"), "{stdout}");
}

#[test]
fn kubectl_kustomize_shows_our_errors() {
    let Some(image) = image(test_name!()) else {
        return;
    };
    if !have("kubectl", test_name!()) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let generator = SERVICES
        .replacen("  name: platform # names the generated files\n", &format!("  name: platform\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: {image}\n"), 1)
        .replace("cert-manager:", "cert-manger:");
    fs_err::write(dir.path().join("services.yaml"), generator).expect("write");
    fs_err::write(
        dir.path().join("kustomization.yaml"),
        "generators:\n- services.yaml\n",
    )
    .expect("write");
    let (ok, _, stderr) = kustomize(dir.path());
    assert!(!ok);
    assert!(
        stderr.contains("unknown service \"cert-manger\" (did you mean \"cert-manager\"?)"),
        "kustomize ignores results; the stderr line must carry the error:\n{stderr}"
    );
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    fs_err::create_dir_all(to).expect("mkdir");
    for entry in fs_err::read_dir(from)
        .expect("read_dir")
        .filter_map(Result::ok)
    {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs_err::copy(entry.path(), target).expect("copy");
        }
    }
}

#[test]
fn a_derived_image_bakes_in_a_team_catalog() {
    let Some(image) = image(test_name!()) else {
        return;
    };
    if !have("docker", test_name!()) {
        return;
    }
    let ctx = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &root().join("testdata/golden/local-path-catalog/catalog"),
        &ctx.path().join("acme"),
    );
    fs_err::write(
        ctx.path().join("Dockerfile"),
        format!(
            "FROM {image}\nCOPY acme /catalogs/acme\nENV KRM_CATALOG_CATALOGS=/catalogs/acme\n"
        ),
    )
    .expect("write");
    let tag = "krm-catalog-derived:test";
    let (ok, _, stderr) = run(Command::new("docker")
        .env("DOCKER_BUILDKIT", "0")
        .args(["build", "-q", "-t", tag])
        .arg(ctx.path()));
    assert!(ok, "docker build of the derived image failed: {stderr}");
    let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: services.krm-catalog.dev/v1alpha1\n  kind: Podinfo\n  metadata: {name: demo}\n  spec: {config: {message: baked}}\n";
    let (ok, stdout, stderr) = docker_run_with_stdin(
        &[
            "run",
            "--rm",
            "-i",
            "--network",
            "none",
            "--user",
            "nobody",
            "--read-only",
            tag,
        ],
        input,
    );
    let _ = run(Command::new("docker").args(["rmi", "-f", tag]));
    assert!(ok, "derived image run failed: {stderr}");
    assert!(
        stdout.contains("kind: NetworkPolicy") && stdout.contains("message: baked"),
        "{stdout}"
    );
    assert!(
        stdout.contains("krm-catalog.dev/catalog: acme@1.2.0"),
        "{stdout}"
    );
}

/// The runnable examples under `functions/examples/` work as documented (with the image
/// under test in place of `localhost/krm-catalog:dev`).
#[test]
fn the_documented_examples_run() {
    let Some(image) = image(test_name!()) else {
        return;
    };
    let has_kpt = have("kpt", "the_documented_examples_run (kpt examples)");
    let has_kubectl = have(
        "kubectl",
        "the_documented_examples_run (kustomize examples)",
    );
    let examples = root().join("functions/examples");
    let prepare = |name: &str| {
        let dir = tempfile::tempdir().expect("tempdir");
        copy_dir(&examples.join(name), dir.path());
        for entry in fs_err::read_dir(dir.path())
            .expect("read_dir")
            .filter_map(Result::ok)
        {
            let text = fs_err::read_to_string(entry.path()).unwrap_or_default();
            fs_err::write(
                entry.path(),
                text.replace("localhost/krm-catalog:dev", &image),
            )
            .expect("write");
        }
        dir
    };
    if has_kpt {
        let dir = prepare("kpt-eval");
        let (ok, _, stderr) = run(Command::new("kpt")
            .arg("fn")
            .arg("eval")
            .arg(dir.path())
            .args(["--image", &image, "--image-pull-policy", "never"]));
        assert!(ok, "kpt-eval: {stderr}");
        assert!(
            dir.path().join("hub.cert-manager.yaml").exists()
                && dir.path().join("hub.external-dns.yaml").exists()
        );
        let dir = prepare("kpt-render");
        let (ok, _, stderr) = run(Command::new("kpt")
            .arg("fn")
            .arg("render")
            .arg(dir.path())
            .args(["--image-pull-policy", "never"]));
        assert!(ok, "kpt-render: {stderr}");
        assert!(dir.path().join("hub.cert-manager.yaml").exists());
    }
    if has_kubectl {
        for name in ["kustomize-transformer", "kustomize-generator"] {
            let dir = prepare(name);
            let (ok, stdout, stderr) = kustomize(dir.path());
            assert!(ok, "{name}: {stderr}");
            assert!(stdout.contains("kind: Application"), "{name}: {stdout}");
        }
        // The CMP component on a stand-in for Argo CD's repo server.
        let argocd = tempfile::tempdir().expect("tempdir");
        fs_err::write(
            argocd.path().join("repo-server.yaml"),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: argocd-repo-server\nspec:\n  template:\n    spec:\n      containers:\n      - name: argocd-repo-server\n        image: quay.io/argoproj/argocd:v2.13.3\n",
        )
        .expect("write");
        copy_dir(&examples.join("argocd-cmp"), &argocd.path().join("cmp"));
        fs_err::write(
            argocd.path().join("kustomization.yaml"),
            "namespace: argocd\nresources:\n- repo-server.yaml\ncomponents:\n- cmp\n",
        )
        .expect("write");
        let (ok, stdout, stderr) = run(Command::new("kubectl").arg("kustomize").arg(argocd.path()));
        assert!(ok, "argocd-cmp: {stderr}");
        assert!(
            stdout.contains("name: krm-catalog-plugin")
                && stdout.contains("kind: ConfigManagementPlugin"),
            "{stdout}"
        );
        assert!(
            stdout.contains("/var/run/argocd/argocd-cmp-server")
                && stdout.contains("name: argocd-repo-server"),
            "{stdout}"
        );
    }
}

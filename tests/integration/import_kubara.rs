//! `krm-catalog import kubara` (issue 23, "Moving in from kubara"), golden style: each
//! `testdata/import/<case>/` holds a kubara `config.yaml` and the function config `fn.yaml` the
//! sets render with; `expected.yaml` is the import's stdout, `expected.stderr` its stderr,
//! `expected-render.yaml` what `render --fn-config fn.yaml` prints for the imported files.
//! Cases named `err-…` must exit 1 with nothing on stdout.
//! `UPDATE_GOLDEN=1 cargo test --test integration import_kubara` rewrites the expectations.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::util::{TestContext, diff, root, stderr, stdout};

fn compare(file: &Path, actual: &str, update: bool, problems: &mut Vec<String>) {
    if update {
        if actual.is_empty() {
            let _ = fs_err::remove_file(file);
        } else {
            fs_err::write(file, actual).expect("write expectation");
        }
    }
    let expected = fs_err::read_to_string(file).unwrap_or_default();
    if expected != actual {
        problems.push(format!(
            "{} differs:\n{}",
            file.display(),
            diff(&expected, actual)
        ));
    }
}

fn check_case(dir: &Path, update: bool) -> Vec<String> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ctx = TestContext::new().in_dir(dir);
    let import = ["import", "kubara", "config.yaml", "--fn-config", "fn.yaml"];
    let out = ctx.run(&import, "");
    let mut problems = Vec::new();
    let expected_code = i32::from(name.starts_with("err-"));
    if out.status.code() != Some(expected_code) {
        problems.push(format!(
            "{name}: exit {:?}, expected {expected_code}\n{}",
            out.status.code(),
            stderr(&out)
        ));
    }
    compare(
        &dir.join("expected.yaml"),
        &stdout(&out),
        update,
        &mut problems,
    );
    compare(
        &dir.join("expected.stderr"),
        &stderr(&out),
        update,
        &mut problems,
    );
    if expected_code == 0 {
        // The files -o writes hold the same sets, and they render.
        let written = tempfile::tempdir().expect("tempdir");
        let to = written.path().join("clusters");
        let to = to.to_string_lossy();
        let out = ctx.run(&[&import[..], &["-o", &to]].concat(), "");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let rendered = ctx.run(&["render", "--fn-config", "fn.yaml", &to], "");
        if rendered.status.code() != Some(0) {
            problems.push(format!("{name}: render failed:\n{}", stderr(&rendered)));
        }
        compare(
            &dir.join("expected-render.yaml"),
            &stdout(&rendered),
            update,
            &mut problems,
        );
    }
    problems
}

#[test]
fn issue23_import_kubara_cases() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut dirs: Vec<_> = fs_err::read_dir(root().join("testdata/import"))
        .expect("testdata/import")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 3, "{dirs:?}");
    let problems: Vec<String> = dirs.iter().flat_map(|d| check_case(d, update)).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The services kubara deploys for the legacy case, worked out from kubara's own rules and
/// files rather than from our output: every service of its ADR-0002 catalog is materialised
/// with the definition's `spec.status` unless the config sets one (`applyServiceCatalogDefaults`),
/// and its argo-cd values template lists every service as an app at
/// `<managed repo>/managed-service-catalog/helm/<chartPath>`, deployed where the cluster's
/// label says `enabled`. The one deliberate difference is a service whose `clusterTypes` leave
/// out the cluster's type (homer-dashboard on a spoke): not deployed, as since kubara's
/// ADR-0003, and the import says so.
#[test]
fn issue23_import_kubara_deploys_what_kubara_deploys() {
    let case = root().join("testdata/import/kubara-legacy");
    let catalog = root().join(
        "testdata/corpus/kubara/kubara-io_kubara@2d5d5a91/src/internal/catalog/built-in/services",
    );
    // (id, status, chartPath, clusterTypes) of kubara's catalog.
    let mut definitions = Vec::new();
    for entry in fs_err::read_dir(&catalog).expect("corpus") {
        let text = fs_err::read_to_string(entry.expect("entry").path()).expect("read");
        let doc = krm_catalog::yaml::parse(&text).expect("YAML");
        let spec = &doc["spec"];
        let types: Vec<String> = spec["clusterTypes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect();
        definitions.push((
            doc["metadata"]["name"].as_str().expect("name").to_owned(),
            spec["status"].as_str().expect("status") == "enabled",
            spec["chartPath"].as_str().expect("chartPath").to_owned(),
            types,
        ));
    }
    assert_eq!(definitions.len(), 15);
    // The statuses config.yaml sets, under kubara's canonical names (legacy_aliases.go).
    let clusters = [
        (
            "hub-1",
            "hub",
            "v2.1.0",
            vec![
                ("argocd", true),
                ("cert-manager", true),
                ("metallb", true),
                ("longhorn", false),
            ],
        ),
        (
            "edge-1",
            "spoke",
            "main",
            vec![("kyverno-policies", false), ("external-dns", false)],
        ),
    ];
    let ctx = TestContext::new().in_dir(&case);
    let written = tempfile::tempdir().expect("tempdir");
    let to = written.path().to_string_lossy();
    let out = ctx.run(
        &[
            "import",
            "kubara",
            "config.yaml",
            "--fn-config",
            "fn.yaml",
            "-o",
            &to,
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("clusters[1].services: \"homer-dashboard\" is left out on a spoke cluster")
    );
    let rendered = ctx.run(&["render", "--fn-config", "fn.yaml", &to], "");
    assert_eq!(rendered.status.code(), Some(0), "{}", stderr(&rendered));
    let objects: Vec<Value> = krm_catalog::yaml::parse_stream(&stdout(&rendered))
        .expect("YAML")
        .into_iter()
        .map(|d| d.value)
        .collect();
    for (cluster, cluster_type, revision, set) in clusters {
        let mut expected = BTreeSet::new();
        for (id, enabled, chart, types) in &definitions {
            let status = set
                .iter()
                .find(|(s, _)| s == id)
                .map_or(*enabled, |(_, on)| *on);
            if status && types.iter().any(|t| t == cluster_type) {
                expected.insert((
                    format!("{cluster}-{id}"),
                    format!("managed-service-catalog/helm/{chart}"),
                ));
            }
        }
        let actual: BTreeSet<(String, String)> = objects
            .iter()
            .filter(|o| o["kind"] == "Application")
            .filter(|o| o["spec"]["destination"]["name"] == cluster)
            .map(|o| {
                assert_eq!(
                    o["spec"]["source"]["repoURL"],
                    "https://git.example.com/platform/managed.git"
                );
                assert_eq!(o["spec"]["source"]["targetRevision"], revision);
                (
                    o["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    o["spec"]["source"]["path"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                )
            })
            .collect();
        assert_eq!(actual, expected, "{cluster}");
    }
    // The config kubara's migration gives (TestConfigStore_LoadMigratesLegacyConfig).
    let hub = krm_catalog::yaml::parse(
        &fs_err::read_to_string(written.path().join("hub-1.yaml")).expect("hub-1.yaml"),
    )
    .expect("YAML");
    let services = &hub["spec"]["services"];
    assert_eq!(
        services["cert-manager"]["config"]["clusterIssuer"]["name"],
        "letsencrypt-prod"
    );
    assert_eq!(
        services["kube-prometheus-stack"]["storage"]["className"],
        "metrics-rwo"
    );
    assert_eq!(services["loki"]["storage"]["className"], "logs-rwo");
    assert!(services["oauth2-proxy"]["networking"]["annotations"].is_object());
}

/// -o refuses to replace files unless --force, and writes nothing when one exists.
#[test]
fn issue23_import_kubara_output_dir_and_force() {
    let case = root().join("testdata/import/kubara-legacy");
    let ctx = TestContext::new().in_dir(&case);
    let written = tempfile::tempdir().expect("tempdir");
    let hub = written.path().join("hub-1.yaml");
    fs_err::write(&hub, "mine\n").expect("write");
    let to = written.path().to_string_lossy();
    let args = [
        "import",
        "kubara",
        "config.yaml",
        "--fn-config",
        "fn.yaml",
        "-o",
        &to,
    ];
    let out = ctx.run(&args, "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("hub-1.yaml: exists; nothing written (--force replaces it)"),
        "{}",
        stderr(&out)
    );
    assert!(!written.path().join("edge-1.yaml").exists());
    assert_eq!(fs_err::read_to_string(&hub).expect("read"), "mine\n");
    let out = ctx.run(&[&args[..], &["--force"]].concat(), "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        fs_err::read_to_string(&hub)
            .expect("read")
            .contains("kind: ServiceSet")
    );
    assert!(written.path().join("edge-1.yaml").exists());
    // Nothing but the two files (no temporary file left behind).
    assert_eq!(fs_err::read_dir(written.path()).expect("dir").count(), 2);
}

/// Files that are not one kubara config, and names that cannot be a ServiceSet's: clear
/// errors naming the file, nothing on stdout.
#[test]
fn issue23_import_kubara_refuses_what_it_cannot_import() {
    let ctx = TestContext::new();
    let cluster = "clusters: [{name: NAME, dnsName: a.example.com, argocd: {repo: {https: {customer: {url: 'https://g/c'}, managed: {url: 'https://g/m'}}}}}]\n";
    let cases = [
        (
            "big.yaml",
            "clusters: []\n".repeat(10),
            "big.yaml: larger than 64 bytes (KRM_CATALOG_MAX_INPUT_BYTES)",
        ),
        (
            "two.yaml",
            "clusters: []\n---\nclusters: []\n".to_owned(),
            "two.yaml: holds 2 YAML documents; a kubara config is one (version, clusters)",
        ),
        (
            "list.yaml",
            "- clusters: []\n".to_owned(),
            "list.yaml: must be an object with clusters, not array",
        ),
        (
            "name.yaml",
            cluster.replace("NAME", "Hub_1"),
            "name.yaml: clusters[0].name: Invalid value: \"Hub_1\": a cluster name becomes the ServiceSet's metadata.name and its file name",
        ),
    ];
    for (file, text, needle) in cases {
        ctx.write(file, &text);
        // The bound is every input's (catalog files too): only the big file's case sets it low.
        let limit: &[(&str, &str)] = if file == "big.yaml" {
            &[("KRM_CATALOG_MAX_INPUT_BYTES", "64")]
        } else {
            &[]
        };
        let out = ctx.run_with(&["import", "kubara", file], "", limit);
        assert_eq!(out.status.code(), Some(1), "{file}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{file}");
        assert!(stderr(&out).contains(needle), "{file}: {}", stderr(&out));
    }
}

/// The settings of a legacy kubara file reach the objects as kubara's values templates pass
/// them on (`customer-service-catalog/helm/example/*/values.yaml.tplt` at 2d5d5a91): the
/// cert-manager ClusterIssuer's name, email and server; Prometheus' `storageClassName` from
/// kube-prometheus-stack's `storage.className`; `networking.annotations` on the Traefik Service.
#[test]
fn issue23_import_kubara_config_reaches_the_objects() {
    let case = root().join("testdata/import/kubara-legacy-builtin-catalog");
    let ctx = TestContext::new().in_dir(&case);
    let written = tempfile::tempdir().expect("tempdir");
    let to = written.path().to_string_lossy();
    let out = ctx.run(
        &[
            "import",
            "kubara",
            "config.yaml",
            "--fn-config",
            "fn.yaml",
            "-o",
            &to,
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rendered = ctx.run(&["render", "--fn-config", "fn.yaml", &to], "");
    assert_eq!(rendered.status.code(), Some(0), "{}", stderr(&rendered));
    let objects: Vec<Value> = krm_catalog::yaml::parse_stream(&stdout(&rendered))
        .expect("YAML")
        .into_iter()
        .map(|d| d.value)
        .collect();
    let find = |kind: &str, name: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    };
    let acme = &find("ClusterIssuer", "letsencrypt-prod")["spec"]["acme"];
    assert_eq!(acme["email"], "platform@example.com");
    assert_eq!(
        acme["server"],
        "https://acme-v02.api.letsencrypt.org/directory"
    );
    let values =
        |app: &str| find("Application", app)["spec"]["source"]["helm"]["valuesObject"].clone();
    let prometheus = values("hub-1-kube-prometheus-stack");
    assert_eq!(
        prometheus["prometheus"]["prometheusSpec"]["storageSpec"]["volumeClaimTemplate"]["spec"]["storageClassName"],
        "metrics-rwo"
    );
    let traefik = values("hub-1-traefik");
    assert_eq!(
        traefik["service"]["annotations"]["service.beta.kubernetes.io/stackit-load-balancer-external-address"],
        "203.0.113.10"
    );
    // external-dns, disabled in the file, renders nothing.
    assert!(
        !objects
            .iter()
            .any(|o| o["metadata"]["name"] == "hub-1-external-dns")
    );
}

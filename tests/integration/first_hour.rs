//! Issue 22, "The first hour": traps where the tool said yes and was wrong.

use serde_json::json;

use crate::remote::{CATALOG, trusted_url};
use crate::servers::{Server, tls};
use crate::util::{TestContext, have, stderr, stdout, test_name};

/// Two services, one invalid (`replicas: -1`), and a plain object of the package.
const HALF_VALID: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
---
apiVersion: services.krm-catalog.dev/v1alpha1
kind: MetricsServer
metadata:
  name: metrics
---
apiVersion: services.krm-catalog.dev/v1alpha1
kind: ExternalSecrets
metadata:
  name: eso
spec:
  config:
    replicas: -1
";

/// Standalone `render` exited 1 but wrote the valid half of the package to stdout, where a
/// pipeline (`render > out.yaml`, `| kubectl apply -f -`) takes it; it writes nothing now.
/// Function mode still writes the ResourceList with its results, as kpt expects.
#[test]
fn issue16_render_writes_nothing_to_stdout_on_error() {
    let ctx = TestContext::new();
    ctx.write("services.yaml", HALF_VALID);
    let out = ctx.run(&["render", "-f", "services.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        out.stdout.is_empty(),
        "render wrote to stdout on error:\n{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains(
            "error: services.krm-catalog.dev/v1alpha1/ExternalSecrets/eso spec.config.replicas: Invalid value: -1: spec.config.replicas in body should be greater than or equal to 1 (services.yaml#2)"
        ),
        "{}",
        stderr(&out)
    );

    // The same items as a ResourceList on stdin (function mode): the list and its results.
    let mut list =
        String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
    for doc in HALF_VALID.split("---\n") {
        for (i, line) in doc.lines().enumerate() {
            list.push_str(if i == 0 { "- " } else { "  " });
            list.push_str(line);
            list.push('\n');
        }
    }
    let out = ctx.run(&[], &list);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"),
        "{text}"
    );
    assert!(
        text.contains("results:\n- message: \"Invalid value: -1"),
        "{text}"
    );
}

/// A typo in the group of the only service object rendered nothing, exit 0: with no item in
/// a group of the built-in catalog, the run skipped loading it (the hot path). A near miss of
/// its group, or one of its kinds under another group, loads it and is an error.
#[test]
fn issue16_a_typo_in_the_api_group_is_an_error() {
    let ctx = TestContext::new();
    for (api, expected) in [
        (
            "service.krm-catalog.dev/v1alpha1",
            "error: service.krm-catalog.dev/v1alpha1/CertManager/certs apiVersion: unknown API group service.krm-catalog.dev (did you mean \"services.krm-catalog.dev/v1alpha1\"?): no loaded catalog claims it, and CertManager is a kind of services.krm-catalog.dev (certs.yaml)\n",
        ),
        (
            "services.krm-catalog.io/v1alpha1",
            "error: services.krm-catalog.io/v1alpha1/CertManager/certs apiVersion: unknown API group services.krm-catalog.io (did you mean \"services.krm-catalog.dev/v1alpha1\"?): no loaded catalog claims it, and CertManager is a kind of services.krm-catalog.dev (certs.yaml)\n",
        ),
        (
            "apps/v1",
            "error: apps/v1/CertManager/certs apiVersion: kind CertManager of the loaded catalogs is not in apps/v1 (did you mean \"services.krm-catalog.dev/v1alpha1\"?) (certs.yaml)\n",
        ),
    ] {
        ctx.write(
            "certs.yaml",
            format!("apiVersion: {api}\nkind: CertManager\nmetadata:\n  name: certs\n"),
        );
        let out = ctx.run(&["render", "-f", "certs.yaml"], "");
        assert_eq!(out.status.code(), Some(1), "{api}: {}", stderr(&out));
        assert_eq!(stderr(&out), expected, "{api}");
        assert!(out.stdout.is_empty(), "{api}: {}", stdout(&out));
    }
    // A kind the catalog does not define passes through, under any group.
    ctx.write(
        "app.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n---\napiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: app\n",
    );
    let out = ctx.run(&["render", "-f", "app.yaml"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

const DEMO_SERVICE: &str = "\
apiVersion: kubara.io/v1alpha1
kind: ServiceDefinition
metadata:
  name: demo
spec:
  chartPath: demo
  status: enabled
  configSchema:
    type: object
    properties:
      image:
        type: string
        default: nginx
";

/// `catalog lint` said "ok: 0 services" for a catalog whose services folder is misspelled
/// (`service/`): the folder is an error with a "did you mean", and a catalog with nothing in
/// it a warning. A template reading an undefined variable fails lint, naming the variable.
#[test]
fn issue16_lint_fails_on_a_misspelled_services_folder_and_undefined_variables() {
    let ctx = TestContext::new();
    ctx.write(
        "team/templates/configmap.yaml.j2",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ service.id }}\n",
    );
    ctx.write("team/service/demo.yaml", DEMO_SERVICE);
    let out = ctx.run(&["catalog", "lint", "team"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: catalog team: folder service/ is not read (did you mean \"services/\"?): a catalog reads services/, templates/ and charts/\n"
    );

    fs_err::remove_dir_all(ctx.path().join("team/service")).expect("rm");
    let out = ctx.run(&["catalog", "lint", "team"], "");
    assert_eq!(
        stderr(&out),
        "warning: team: no services and no function kinds (ServiceDefinitions go in services/)\nok: team: 0 services, 0 function kinds, 1 templates\n"
    );

    ctx.write("team/services/demo.yaml", DEMO_SERVICE);
    ctx.write(
        "team/charts/demo/deployment.yaml.j2",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  port: \"{{ config.containerPort }}\"\n",
    );
    let out = ctx.run(&["catalog", "lint", "team"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "charts/demo/deployment.yaml.j2:6: rendering \"demo\" with its defaults: undefined value: `config.containerPort` is undefined"
        ),
        "{}",
        stderr(&out)
    );
}

/// `render --fn-config F -f DIR` with F inside DIR (how the Argo CD plugin runs it, and the
/// kustomize example's layout) printed the `ResolveCatalog` itself among the manifests, which
/// Argo CD would then try to apply; the function config is settings, not a resource.
#[test]
fn issue16_render_dir_leaves_out_its_fn_config_file() {
    let ctx = TestContext::new();
    ctx.write(
        "krm-catalog.yaml",
        "apiVersion: krm-catalog.dev/v1alpha1\nkind: ResolveCatalog\nmetadata:\n  name: platform\nspec:\n  clusterType: hub\n  cluster:\n    name: hub-1\n",
    );
    let services = fs_err::read_to_string(
        crate::util::root().join("functions/examples/kustomize-transformer/services.yaml"),
    )
    .expect("the example's services");
    ctx.write("services.yaml", &services);
    let out = ctx.run(
        &["render", "--fn-config", "krm-catalog.yaml", "-f", "."],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(printed.contains("kind: Application"), "{printed}");
    assert!(!printed.contains("kind: ResolveCatalog"), "{printed}");
}

/// A duplicate key said "set DuplicateKeyPolicy in Options if acceptable", serde-saphyr's own
/// option; it names the key and both lines now, as kubectl's go-yaml does.
#[test]
fn issue16_a_duplicate_key_names_the_key_and_both_lines() {
    let ctx = TestContext::new();
    ctx.write(
        "app.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  x: \"1\"\n  x: \"2\"\n",
    );
    let out = ctx.run(&["render", "-f", "app.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("app.yaml: line 7: mapping key \"x\" already defined at line 6"),
        "{}",
        stderr(&out)
    );
    let list = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    name: b\n";
    let out = ctx.run(&[], list);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("line 8: mapping key \"name\" already defined at line 7"),
        "{}",
        stderr(&out)
    );
}

/// An object of a service that is disabled by default, which does not enable it, rendered
/// nothing, exit 0, without a word: a warning says so and what to set. Disabling it
/// explicitly stays quiet.
#[test]
fn issue16_an_object_of_a_disabled_by_default_service_says_it_renders_nothing() {
    let ctx = TestContext::new();
    ctx.write(
        "metrics.yaml",
        "apiVersion: services.krm-catalog.dev/v1alpha1\nkind: MetricsServer\nmetadata:\n  name: metrics\n",
    );
    let out = ctx.run(&["render", "-f", "metrics.yaml"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "warning: services.krm-catalog.dev/v1alpha1/MetricsServer/metrics spec.status: service \"metrics-server\" is disabled by default and this MetricsServer object does not enable it: nothing is rendered; set spec.status: enabled (metrics.yaml)\n"
    );
    ctx.write(
        "metrics.yaml",
        "apiVersion: services.krm-catalog.dev/v1alpha1\nkind: MetricsServer\nmetadata:\n  name: metrics\nspec:\n  status: disabled\n",
    );
    let out = ctx.run(&["render", "-f", "metrics.yaml"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

/// A fetch slower than a second said nothing until it ended: with `-v` (or on a terminal) it
/// reports what it fetches, how much has come and for how long; quiet otherwise, since under
/// kpt and kustomize stderr is the function's report.
#[test]
fn issue16_a_slow_fetch_reports_progress_with_v() {
    let case = test_name!();
    if !have("python3", case) || !have("openssl", case) {
        return;
    }
    let tls = tls();
    let server = Server::start(Some(&tls), None);
    server.put("catalog.yaml", CATALOG.as_bytes());
    let ctx = TestContext::new().with_ca(&tls.ca);
    let url = server.url("slow/catalog.yaml");
    let input = trusted_url(&url);
    let out = ctx.run(&["-v"], &input);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let size = CATALOG.len();
    assert!(
        err.contains(&format!("info: fetching {url}: "))
            && err.contains(&format!(" of {size} bytes, ")),
        "{err}"
    );
    assert!(
        err.contains(&format!("info: fetched {url}: {size} bytes in ")),
        "{err}"
    );
    // Without -v (stderr is a pipe here): no progress.
    let quiet = TestContext::new().with_ca(&tls.ca);
    let out = quiet.run(&[], &input);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("fetching"), "{}", stderr(&out));
}

/// A service whose defaults leave a required value unset, with no `example` for it, was not
/// rendered by lint at all ("ok" for a template that cannot render): lint renders it with
/// placeholders of each value's type; a value no placeholder fits (a `pattern`) says to add
/// an example.
#[test]
fn issue16_lint_renders_required_values_without_examples_with_placeholders() {
    let ctx = TestContext::new();
    let service = "apiVersion: kubara.io/v1alpha1\nkind: ServiceDefinition\nmetadata:\n  name: web\nspec:\n  chartPath: web\n  status: enabled\n  configSchema:\n    type: object\n    required: [host, port]\n    properties:\n      host: {type: string, format: hostname}\n      port: {type: integer, minimum: 1024}\n";
    ctx.write("team/services/web.yaml", service);
    ctx.write(
        "team/charts/web/cm.yaml.j2",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  url: \"{{ config.hots }}:{{ config.port }}\"\n",
    );
    let out = ctx.run(&["catalog", "lint", "team"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("charts/web/cm.yaml.j2:6: rendering \"web\" with its defaults: undefined value: `config.hots` is undefined"),
        "{}",
        stderr(&out)
    );
    ctx.write(
        "team/charts/web/cm.yaml.j2",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  url: \"{{ config.host }}:{{ config.port }}\"\n",
    );
    let out = ctx.run(&["catalog", "lint", "team"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    ctx.write(
        "team/services/web.yaml",
        service.replace("format: hostname", "pattern: '^[a-z]+[.]example[.]com$'"),
    );
    let out = ctx.run(&["catalog", "lint", "team"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: catalog team: services/web.yaml: \"web\" was not rendered: its defaults leave required values unset, and lint can make no placeholder for some of them (a `pattern`, or no type); give those fields an `example` so lint can render its templates"),
        "{}",
        stderr(&out)
    );
}

/// Issue 22: `catalog lint -o json|yaml` is lint's report for machines, on stdout: per
/// catalog and per service, errors and warnings with file, path and message, `ok`; lint still
/// exits 1 on an error, after writing it, and says nothing else.
#[test]
fn issue16_lint_prints_its_report_as_json_or_yaml() {
    let ctx = TestContext::new();
    ctx.write("team/services/demo.yaml", DEMO_SERVICE);
    ctx.write(
        "team/charts/demo/deployment.yaml.j2",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  port: \"{{ config.containerPort }}\"\n",
    );
    ctx.write(
        "empty/templates/cm.yaml.j2",
        "apiVersion: v1\nkind: ConfigMap\n",
    );
    let out = ctx.run(&["catalog", "lint", "team", "empty", "-o", "json"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(doc["ok"], false, "{doc}");
    let team = &doc["catalogs"][0];
    assert_eq!(
        (&team["path"], &team["source"], &team["ok"]),
        (&json!("team"), &json!("catalog team"), &json!(false)),
        "{doc}"
    );
    assert_eq!(
        team["counts"],
        json!({"services": 1, "functionKinds": 0, "templates": 1})
    );
    let demo = &team["services"][0];
    assert_eq!(
        (&demo["id"], &demo["file"], &demo["ok"]),
        (&json!("demo"), &json!("services/demo.yaml"), &json!(false)),
        "{doc}"
    );
    // The render of its template is the service's, at the template's file and line.
    let error = &demo["errors"][0];
    assert_eq!(error["source"], "catalog team");
    assert_eq!(error["file"], "charts/demo/deployment.yaml.j2:6");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("`config.containerPort` is undefined")),
        "{doc}"
    );
    assert_eq!(team["errors"], json!([]), "{doc}");
    // The empty catalog passes, with its warning at the catalog.
    let empty = &doc["catalogs"][1];
    assert_eq!(empty["ok"], true, "{doc}");
    assert_eq!(empty["services"], json!([]), "{doc}");
    assert_eq!(
        empty["warnings"],
        json!([{"source": "catalog empty", "file": null, "path": null,
            "message": "no services and no function kinds (ServiceDefinitions go in services/)"}])
    );
    // YAML is the same document.
    let yaml = ctx.run(&["catalog", "lint", "team", "empty", "-o", "yaml"], "");
    assert_eq!(yaml.status.code(), Some(1), "{}", stderr(&yaml));
    assert_eq!(krm_catalog::yaml::parse(&stdout(&yaml)).expect("yaml"), doc);
    // The text report is unchanged, and a render of one service prints manifests, not a report.
    let text = ctx.run(&["catalog", "lint", "empty"], "");
    assert_eq!(stdout(&text), "");
    assert!(
        stderr(&text).contains("ok: empty: 0 services"),
        "{}",
        stderr(&text)
    );
    let both = ctx.run(
        &["catalog", "lint", "team", "--set", "a=1", "-o", "json"],
        "",
    );
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    assert_eq!(stdout(&both), "");
}

/// Issue 22: `catalog verify -o json|yaml`: the catalog (digest, signers, verdict) and each
/// runtime with its platform, pinned digest and verdict; exit 1 on any runtime not `ok`, after
/// the document.
#[test]
fn issue16_verify_prints_each_runtime_with_digest_and_verdict() {
    let ctx = TestContext::new();
    ctx.write("fn", crate::runtimes::ECHO);
    let hex = krm_catalog::verify::sha256_hex(crate::runtimes::ECHO);
    let digest = format!("sha256:{hex}");
    ctx.write(
        "catalog.yaml",
        crate::runtimes::exec_catalog("file://fn", "fn", Some(&digest)),
    );
    let out = ctx.run(&["catalog", "verify", "catalog.yaml", "-o", "json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let (os, arch) = krm_catalog::functions::exec::this_platform();
    assert_eq!(doc["ok"], true, "{doc}");
    assert_eq!(doc["catalog"]["reference"], "catalog.yaml");
    assert_eq!(doc["catalog"]["status"], "ok");
    assert!(
        doc["catalog"]["digest"]
            .as_str()
            .is_some_and(|d| d.starts_with("sha256:") && d.len() == 71),
        "{doc}"
    );
    assert_eq!(
        doc["runtimes"],
        json!([{"kind": "fn.acme.dev/v1/Echo", "platform": format!("{os}/{arch}"),
            "status": "ok", "digest": digest, "detail": format!("exec file://fn {digest}")}])
    );
    assert_eq!((&doc["checked"], &doc["notOk"]), (&json!(1), &json!(0)));

    ctx.write(
        "catalog.yaml",
        crate::runtimes::exec_catalog("file://fn", "fn", None),
    );
    let out = ctx.run(&["catalog", "verify", "catalog.yaml", "-o", "yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = krm_catalog::yaml::parse(&stdout(&out)).expect("yaml");
    assert_eq!(doc["ok"], false, "{doc}");
    assert_eq!(doc["runtimes"][0]["status"], "UNPINNED", "{doc}");
    assert_eq!(doc["runtimes"][0]["digest"], json!(null), "{doc}");
    assert_eq!((&doc["checked"], &doc["notOk"]), (&json!(1), &json!(1)));
}

/// Issue 22: `explain -o json|yaml`: the kind, the field path and the schema below it, with
/// its fields' names, types, `required` and defaults (and with `--recursive`, theirs).
#[test]
fn issue16_explain_prints_the_schema_as_json_or_yaml() {
    let repo = TestContext::new().in_repo_root();
    let target = "CertManager.spec.config.clusterIssuer";
    let out = repo.run(&["explain", target, "-o", "json"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(doc["kind"], "CertManager");
    assert_eq!(doc["group"], "services.krm-catalog.dev");
    assert_eq!(doc["field"], "spec.config.clusterIssuer");
    assert_eq!(doc["type"], "Object");
    let fields = doc["fields"].as_array().expect("fields");
    let email = fields.iter().find(|f| f["name"] == "email").expect("email");
    assert_eq!(
        (&email["type"], &email["required"]),
        (&json!("string"), &json!(true))
    );
    assert!(
        fields.iter().any(|f| f["default"] == "letsencrypt-staging"),
        "{doc}"
    );
    assert_eq!(
        doc["schema"]["properties"]["email"]["type"], "string",
        "{doc}"
    );
    let yaml = repo.run(&["explain", target, "-o", "yaml"], "");
    assert_eq!(krm_catalog::yaml::parse(&stdout(&yaml)).expect("yaml"), doc);
    // --recursive nests each field's own fields.
    let out = repo.run(
        &["explain", "CertManager.spec", "--recursive", "-o", "json"],
        "",
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let config = doc["fields"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["name"] == "config"))
        .expect("config");
    assert!(
        config["fields"].as_array().is_some_and(|f| !f.is_empty()),
        "{doc}"
    );
}

//! Issue 23, for catalog authors: `catalog init` → `catalog lint` → render, `catalog lint
//! --service/--values/--set`, `spec.examples`, `spec.requires.krmCatalog`, and `explain
//! --recursive`. (Deprecation warnings are the golden case `issue23-deprecations`.)

use crate::util::{TestContext, stderr, stdout};

/// A service with a CEL rule, an enum, a deprecated field and two examples (one `bad`, which
/// breaks the rule), beside a second service: what the lint tests read.
const WEB: &str = r"apiVersion: kubara.io/v1alpha1
kind: ServiceDefinition
metadata:
  name: web
spec:
  chartPath: web
  status: enabled
  configSchema:
    type: object
    x-kubernetes-validations:
    - rule: self.tier != 'dev' || self.replicas <= 1
      message: a dev tier runs one replica
      fieldPath: .replicas
    properties:
      replicas:
        type: integer
        default: 1
      tier:
        type: string
        enum: [dev, prod]
        default: prod
      size:
        type: string
        x-krm-catalog-deprecated: set replicas instead
      labels:
        type: object
        additionalProperties:
          type: string
  examples:
  - name: production
    config: {tier: prod, replicas: 3}
  - config: {tier: dev, replicas: 1}
  - name: bad
    config: {tier: dev, replicas: 2}
  templates:
    deployment.yaml.j2: |
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: web
        labels: {{ config.labels | default({}) | tojson }}
      spec:
        replicas: {{ config.replicas }}
";

const WORKER: &str = "apiVersion: kubara.io/v1alpha1\nkind: ServiceDefinition\nmetadata:\n  name: worker\nspec:\n  chartPath: worker\n  status: disabled\n  templates:\n    cm.yaml.j2: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata:\n        name: worker\n";

fn team(ctx: &TestContext, web: &str) {
    ctx.write("team/services/web.yaml", web);
    ctx.write("team/services/worker.yaml", WORKER);
}

/// The scaffold passes lint (its example included) and renders, in a run as with `--set`;
/// a second init never overwrites, and a bad service name is refused before anything is
/// written.
#[test]
fn issue23_catalog_init_then_lint_then_render() {
    let ctx = TestContext::new();
    let out = ctx.run(
        &["catalog", "init", "team-catalog", "--service", "web-shop"],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).lines().take(3).collect::<Vec<_>>(),
        [
            "created team-catalog/catalog.yaml",
            "created team-catalog/services/web-shop.yaml",
            "created team-catalog/charts/web-shop/deployment.yaml.j2",
        ]
    );
    let lint = ctx.run(&["catalog", "lint", "team-catalog"], "");
    assert!(lint.status.success(), "{}", stderr(&lint));
    assert_eq!(
        stderr(&lint),
        "ok: team-catalog: 1 services, 0 function kinds, 1 templates\n"
    );
    // The CEL rule of the scaffold holds in lint --set as in a run.
    let set = ctx.run(
        &[
            "catalog",
            "lint",
            "team-catalog",
            "--set",
            "tier=dev,replicas=2",
        ],
        "",
    );
    assert_eq!(set.status.code(), Some(1));
    assert_eq!(
        stderr(&set),
        "error: service \"web-shop\": config.replicas: Invalid value: a dev tier runs one replica\n"
    );
    ctx.write(
        "fn.yaml",
        "apiVersion: krm-catalog.dev/v1alpha1\nkind: ResolveCatalog\nmetadata:\n  name: fn\nspec:\n  builtin: false\n  catalogs:\n  - path: team-catalog\n",
    );
    ctx.write(
        "app.yaml",
        "apiVersion: services.krm-catalog.dev/v1alpha1\nkind: WebShop\nmetadata:\n  name: shop\n  namespace: prod\nspec:\n  config:\n    replicas: 2\n",
    );
    let render = ctx.run(&["render", "--fn-config", "fn.yaml", "-f", "app.yaml"], "");
    assert!(render.status.success(), "{}", stderr(&render));
    let text = stdout(&render);
    for needle in [
        "kind: Deployment",
        "  namespace: prod",
        "  replicas: 2",
        "krm-catalog.dev/catalog: team-catalog@0.1.0",
        "image: nginxinc/nginx-unprivileged:1.27",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    // Never overwrite; the name follows the service ID rules.
    let again = ctx.run(&["catalog", "init", "team-catalog"], "");
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("team-catalog is not empty"),
        "{}",
        stderr(&again)
    );
    let bad = ctx.run(&["catalog", "init", "other", "--service", "Web_Shop"], "");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("must be an rfc 1123 label that starts with a letter"),
        "{}",
        stderr(&bad)
    );
    assert!(!ctx.path().join("other").exists());
}

/// An example that breaks the schema fails lint, named by its name (else its index), at its
/// field; the good examples pass.
#[test]
fn issue23_lint_checks_every_example() {
    let ctx = TestContext::new();
    team(&ctx, WEB);
    let out = ctx.run(&["catalog", "lint", "team"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: catalog team: services/web.yaml: spec.examples[2].config.replicas: example \"bad\" of \"web\" is invalid: Invalid value: a dev tier runs one replica\n"
    );
    // Without the bad example the catalog lints.
    let good = WEB.replace("  - name: bad\n    config: {tier: dev, replicas: 2}\n", "");
    team(&ctx, &good);
    let out = ctx.run(&["catalog", "lint", "team"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    // An example that does not render names the template and the example's index.
    let broken = good.replace("{{ config.replicas }}", "{{ config.replicas.nope }}");
    team(&ctx, &broken);
    let out = ctx.run(&["catalog", "lint", "team"], "");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("rendering \"web\" with example 1: ")
            && err.contains("charts/web/deployment.yaml.j2:7"),
        "{err}"
    );
}

/// `--set` as Helm's: dotted keys, typed scalars, escaped dots; the manifests on stdout with
/// the template they came from; a deprecated field warns.
#[test]
fn issue23_lint_set_renders_one_service() {
    let ctx = TestContext::new();
    let good = WEB.replace("  - name: bad\n    config: {tier: dev, replicas: 2}\n", "");
    team(&ctx, &good);
    let out = ctx.run(
        &[
            "catalog",
            "lint",
            "team",
            "--service",
            "web",
            "--set",
            r"replicas=3,labels.app\.kubernetes\.io/part-of=shop",
            "--set",
            "size=large",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "---\n# Source: charts/web/deployment.yaml.j2\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app.kubernetes.io/part-of: shop\nspec:\n  replicas: 3\n"
    );
    assert_eq!(
        stderr(&out),
        "warning: service \"web\": config.size: deprecated: set replicas instead\n"
    );
    // Several services: --service is needed, and a wrong one gets a hint.
    let out = ctx.run(&["catalog", "lint", "team", "--set", "replicas=2"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("has 2 services: choose one with --service (web, worker)"),
        "{}",
        stderr(&out)
    );
    let out = ctx.run(&["catalog", "lint", "team", "--service", "wbe"], "");
    assert!(
        stderr(&out).contains("did you mean \"web\""),
        "{}",
        stderr(&out)
    );
    // A value of the wrong type is the apiserver's message at its field.
    let out = ctx.run(
        &[
            "catalog",
            "lint",
            "team",
            "--service",
            "web",
            "--set-string",
            "replicas=3",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: service \"web\": config.replicas: Invalid value: \"string\": config.replicas in body must be of type integer: \"string\"\n"
    );
    let out = ctx.run(
        &[
            "catalog",
            "lint",
            "team",
            "--service",
            "web",
            "--set",
            "a[0]=1",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("list indexes (\"a[0]\") are not supported"),
        "{}",
        stderr(&out)
    );
}

/// `--values` files merge in order (maps key by key), then `--set` wins.
#[test]
fn issue23_lint_values_then_set() {
    let ctx = TestContext::new();
    let good = WEB.replace("  - name: bad\n    config: {tier: dev, replicas: 2}\n", "");
    team(&ctx, &good);
    ctx.write("base.yaml", "replicas: 2\nlabels:\n  team: a\n  tier: x\n");
    ctx.write("prod.yaml", "labels:\n  tier: prod\n");
    let out = ctx.run(
        &[
            "catalog",
            "lint",
            "team",
            "--service",
            "web",
            "-f",
            "base.yaml",
            "--values",
            "prod.yaml",
            "--set",
            "replicas=4",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "---\n# Source: charts/web/deployment.yaml.j2\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    team: a\n    tier: prod\nspec:\n  replicas: 4\n"
    );
    ctx.write("list.yaml", "- 1\n");
    let out = ctx.run(
        &[
            "catalog",
            "lint",
            "team",
            "--service",
            "web",
            "-f",
            "list.yaml",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: --values list.yaml: must be a map of config values, not array\n"
    );
    // An empty values file is no values; several documents are refused.
    ctx.write("empty.yaml", "");
    ctx.write("two.yaml", "a: 1\n---\nb: 2\n");
    let out = ctx.run(
        &[
            "catalog",
            "lint",
            "team",
            "--service",
            "web",
            "-f",
            "empty.yaml",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = ctx.run(
        &[
            "catalog",
            "lint",
            "team",
            "--service",
            "web",
            "-f",
            "two.yaml",
        ],
        "",
    );
    assert_eq!(
        stderr(&out),
        "error: --values two.yaml: 2 YAML documents; a values file is one map of config values\n"
    );
}

/// A catalog written for a later release is refused, naming the release to install; an
/// invalid range is a clear error.
#[test]
fn issue23_catalog_requiring_a_newer_version_is_refused() {
    let ctx = TestContext::new();
    team(
        &ctx,
        &WEB.replace("  - name: bad\n    config: {tier: dev, replicas: 2}\n", ""),
    );
    ctx.write(
        "team/catalog.yaml",
        "apiVersion: kubara.io/v1alpha1\nkind: Catalog\nmetadata:\n  name: team\nspec:\n  version: 1.0.0\n  requires:\n    krmCatalog: \">=99.1.0\"\n",
    );
    let version = env!("CARGO_PKG_VERSION");
    let out = ctx.run(&["catalog", "lint", "team"], "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: catalog team: catalog.yaml: spec.requires.krmCatalog: this catalog requires krm-catalog >=99.1.0, but this is krm-catalog {version}: install krm-catalog 99.1.0 or later\n"
        )
    );
    // A run refuses it too.
    ctx.write(
        "app.yaml",
        "apiVersion: services.krm-catalog.dev/v1alpha1\nkind: Web\nmetadata:\n  name: shop\n",
    );
    ctx.write(
        "fn.yaml",
        "apiVersion: krm-catalog.dev/v1alpha1\nkind: ResolveCatalog\nmetadata:\n  name: fn\nspec:\n  builtin: false\n  catalogs:\n  - path: team\n",
    );
    let out = ctx.run(&["render", "--fn-config", "fn.yaml", "-f", "app.yaml"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("install krm-catalog 99.1.0 or later"),
        "{}",
        stderr(&out)
    );
    ctx.write(
        "team/catalog.yaml",
        "apiVersion: kubara.io/v1alpha1\nkind: Catalog\nmetadata:\n  name: team\nspec:\n  version: 1.0.0\n  requires:\n    krmCatalog: \"newer\"\n",
    );
    let out = ctx.run(&["catalog", "lint", "team"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("spec.requires.krmCatalog: \"newer\" is not a semver range ("),
        "{}",
        stderr(&out)
    );
}

/// `explain --recursive` prints the field tree with types, as `kubectl explain --recursive`.
#[test]
fn issue23_explain_recursive() {
    let ctx = TestContext::new();
    team(&ctx, WEB);
    let out = ctx.run(
        &[
            "explain",
            "Web.spec.config",
            "--recursive",
            "--no-builtin",
            "--catalog",
            "team",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.ends_with(
            "FIELDS:\n  replicas\t<integer>\n  tier\t<string>\n  enum: dev, prod\n  size\t<string>\n  labels\t<map[string]string>\n"
        ),
        "{text}"
    );
    let out = ctx.run(
        &[
            "explain",
            "Web",
            "--recursive",
            "--no-builtin",
            "--catalog",
            "team",
        ],
        "",
    );
    let text = stdout(&out);
    assert!(
        text.contains("FIELDS:\n  apiVersion\t<string> -required-\n  enum: services.krm-catalog.dev/v1alpha1\n  kind\t<string> -required-\n  enum: Web\n  metadata\t<Object> -required-\n    name\t<string> -required-\n"),
        "{text}"
    );
    assert!(
        text.contains("\n  spec\t<Object>\n    status\t<string>\n    enum: enabled, disabled\n"),
        "{text}"
    );
    assert!(
        text.contains("\n    config\t<Object>\n      replicas\t<integer>\n"),
        "{text}"
    );
}

/// `catalog view` shows what is deprecated: services, config fields, KEP versions (text, and
/// a `deprecated` field in `-o yaml|json` only where there is one).
#[test]
fn issue23_catalog_view_shows_deprecations() {
    const ACME: &str = "testdata/golden/issue23-deprecations/acme";
    let view = |args: &[&str]| {
        let out = TestContext::new()
            .in_repo_root()
            .run(&[&["catalog", "view", ACME], args].concat(), "");
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let text = view(&[]);
    for needle in [
        "Deprecated services:\n  service \"legacy\" is deprecated: use podinfo instead; legacy is removed in acme 3.0\n",
        "      color    string  The color of the page; DEPRECATED: color is ignored since 2.0; set theme instead\n",
        "    Version v1beta1 (apiVersion: apps.acme.dev/v1beta1):\n      Deprecated:       apps.acme.dev/v1beta1 Podinfo is deprecated; use apps.acme.dev/v1 Podinfo\n",
        "      Deprecated:       apps.acme.dev/v1alpha1 Legacy is deprecated\n",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    let json: serde_json::Value = serde_json::from_str(&view(&["-o", "json"])).expect("json");
    assert_eq!(
        json["services"][0]["deprecated"],
        "service \"legacy\" is deprecated: use podinfo instead; legacy is removed in acme 3.0"
    );
    assert!(json["services"][1].get("deprecated").is_none());
    assert_eq!(
        json["services"][1]["config"][1]["deprecated"],
        "color is ignored since 2.0; set theme instead"
    );
    assert_eq!(
        json["functions"][1]["versions"][0]["deprecated"],
        "apps.acme.dev/v1alpha1 Legacy is deprecated"
    );
    // Editors (yaml-language-server) show the field's warning too.
    let out = TestContext::new().in_repo_root().run(
        &["schema", "Podinfo", "--no-builtin", "--catalog", ACME],
        "",
    );
    assert!(
        stdout(&out)
            .contains("\"deprecationMessage\": \"color is ignored since 2.0; set theme instead\""),
        "{}",
        stdout(&out)
    );
}

//! Patches on generated output (issue 23, SPEC §6.6) against `kubectl kustomize` (kustomize
//! v5.5): each case is an object and `patches:` entries, written once as a kustomization and
//! built by kubectl, and once applied by `krm_catalog::patch`; the objects must be equal (maps
//! compared as maps: kustomize sorts keys). Skipped, with a visible line, without kubectl.
//! kustomize wants apiVersion, kind and metadata.name in every strategic-merge patch, even
//! one with a target (krm-catalog does not), so the targeted ones here carry them.

use krm_catalog::diagnostics::FieldPath;
use krm_catalog::patch;
use serde_json::Value;

use crate::util::{TestContext, have, test_name};

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
  finalizers: [a.example.com/x]
spec:
  replicas: 1
  template:
    spec:
      initContainers:
      - name: init
        image: busybox
      containers:
      - name: app
        image: app:1
        env:
        - {name: X, value: "1"}
        - {name: Y, value: "2"}
        ports:
        - {containerPort: 8080, protocol: TCP, name: http}
        - {containerPort: 53, protocol: UDP}
        volumeMounts:
        - {name: data, mountPath: /data}
      - name: sidecar
        image: side:1
      volumes:
      - name: data
        emptyDir: {}
      imagePullSecrets:
      - name: regcred
"#;

const WIDGET: &str = r"apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  items:
  - {name: a, size: 1}
  - {name: b, size: 2}
  settings: {color: red, shape: round}
";

/// `(name, resources, patches)`: the `patches:` entries as a kustomization holds them.
const CASES: [(&str, &str, &str); 9] = [
    (
        "containers merge by name, the patch's first",
        DEPLOYMENT,
        r#"- patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      template:
        spec:
          containers:
          - name: sidecar
            image: side:2
          - name: new
            image: new:1
          - name: app
            resources: {limits: {cpu: "1"}}
"#,
    ),
    (
        "env merges by name, null deletes a key",
        DEPLOYMENT,
        r#"- target: {kind: Deployment, name: web}
  patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: any
      labels: {tier: front}
    spec:
      replicas: null
      template:
        spec:
          containers:
          - name: app
            env:
            - {name: Y, value: "9"}
            - {name: Z, value: "3"}
"#,
    ),
    (
        "$patch: delete of a container, $patch: replace of a list",
        DEPLOYMENT,
        r"- target: {group: apps, version: v1, kind: Deployment}
  patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: any}
    spec:
      template:
        spec:
          containers:
          - {name: sidecar, $patch: delete}
          initContainers:
          - $patch: replace
          - {name: other, image: busybox:2}
",
    ),
    (
        "ports by containerPort and protocol, volumes and volumeMounts, imagePullSecrets, finalizers",
        DEPLOYMENT,
        r"- target: {kind: Deploy.*}
  patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: any
      finalizers: [b.example.com/y]
    spec:
      template:
        spec:
          imagePullSecrets: [{name: other}]
          volumes:
          - name: cache
            emptyDir: {medium: Memory}
          containers:
          - name: app
            ports:
            - {containerPort: 8080, protocol: TCP, name: web}
            - {containerPort: 9090, protocol: TCP}
            volumeMounts:
            - {name: cache, mountPath: /cache}
",
    ),
    (
        "json6902 add, replace, remove, copy, move, test",
        DEPLOYMENT,
        r#"- target: {kind: Deployment, name: web}
  patch: |
    - {op: test, path: /spec/replicas, value: 1}
    - {op: replace, path: /spec/replicas, value: 3}
    - {op: add, path: /metadata/annotations, value: {a: b}}
    - {op: add, path: /metadata/annotations/example.com~1x, value: x1}
    - {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: W, value: "4"}}
    - {op: add, path: /spec/template/spec/containers/1, value: {name: mid, image: mid:1}}
    - {op: remove, path: /spec/template/spec/imagePullSecrets}
    - {op: copy, from: /metadata/labels, path: /spec/template/metadata}
    - {op: move, from: /spec/template/spec/volumes, path: /spec/template/spec/extraVolumes}
"#,
    ),
    (
        "json6902 written as JSON",
        DEPLOYMENT,
        r#"- target: {kind: Deployment}
  patch: '[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "app:2"}]'
"#,
    ),
    (
        "a custom resource merges as a JSON merge patch",
        WIDGET,
        r"- target: {group: example.com, kind: Widget}
  patch: |
    apiVersion: example.com/v1
    kind: Widget
    metadata: {name: any}
    spec:
      items:
      - {name: b, size: 3}
      settings: {shape: null, size: large}
",
    ),
    (
        "$patch: delete of the whole object",
        WIDGET,
        r"- patch: |
    apiVersion: example.com/v1
    kind: Widget
    metadata: {name: w}
    $patch: delete
",
    ),
    (
        "a strategic-merge patch keeps the name and namespace unless allowed",
        DEPLOYMENT,
        r"- target: {kind: Deployment}
  patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: renamed, namespace: elsewhere}
    spec: {replicas: 2}
- target: {kind: Deployment}
  options: {allowNameChange: true}
  patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: renamed-too}
",
    ),
];

fn parse_docs(text: &str) -> Vec<Value> {
    krm_catalog::yaml::parse_stream(text)
        .expect("YAML")
        .into_iter()
        .map(|d| d.value)
        .filter(|v| !v.is_null())
        .collect()
}

#[test]
fn issue23_patches_match_kubectl_kustomize() {
    if !have("kubectl", test_name!()) {
        return;
    }
    for (name, resources, patches) in CASES {
        let ctx = TestContext::new();
        ctx.write("resources.yaml", resources);
        ctx.write(
            "kustomization.yaml",
            format!("resources: [resources.yaml]\npatches:\n{patches}"),
        );
        let out = ctx
            .command("kubectl")
            .args(["kustomize", "."])
            .current_dir(ctx.path())
            .output()
            .expect("kubectl runs");
        assert!(
            out.status.success(),
            "{name}: kubectl kustomize failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs = parse_docs(&String::from_utf8_lossy(&out.stdout));

        let entries = krm_catalog::yaml::parse(patches).expect("patches YAML");
        let parsed = patch::parse_list(&entries, &FieldPath::parse("spec.patches"))
            .unwrap_or_else(|p| panic!("{name}: {p:?}"));
        let mut ours = parse_docs(resources);
        patch::apply(&parsed, &mut ours, "case").unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            ours,
            theirs,
            "{name}: ours (left) differs from kubectl kustomize (right):\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// A catalog whose own patch targets a kind its service does not render.
const CATALOG_WITH_BAD_PATCH: &str = r"apiVersion: kubara.io/v1alpha1
kind: ServiceDefinition
metadata:
  name: web-app
spec:
  chartPath: web-app
  status: enabled
  patches:
  - target:
      kind: StatefulSet
    patch: |
      spec:
        replicas: 3
  templates:
    deployment.yaml.j2: |
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: {{ instance.name }}
      spec:
        replicas: 1
";

#[test]
fn issue23_catalog_lint_applies_the_catalogs_own_patches() {
    let ctx = TestContext::new();
    ctx.write("catalog/web-app.yaml", CATALOG_WITH_BAD_PATCH);
    let out = ctx.run(&["catalog", "lint", "catalog"], "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        crate::util::stderr(&out),
        "error: catalog catalog: web-app.yaml: spec.patches[0]: patch of \"web-app\" with its defaults: its target {kind: StatefulSet} matches none of the objects service \"web-app\" generated (Deployment/lint)\n"
    );
    ctx.write(
        "catalog/web-app.yaml",
        CATALOG_WITH_BAD_PATCH.replace("kind: StatefulSet", "kind: Deployment"),
    );
    let out = ctx.run(&["catalog", "lint", "catalog"], "");
    assert_eq!(out.status.code(), Some(0), "{}", crate::util::stderr(&out));
}

#[test]
fn issue23_a_failing_catalog_patch_names_the_service_definition() {
    let definition: String = CATALOG_WITH_BAD_PATCH
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
    let input = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{definition}- apiVersion: services.krm-catalog.dev/v1alpha1\n  kind: WebApp\n  metadata:\n    name: shop\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: function-input\n  data:\n    builtin: \"false\"\n"
    );
    let out = TestContext::new().run(&[], &input);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        crate::util::stderr(&out),
        "error: services.krm-catalog.dev/v1alpha1/WebApp/shop spec: the catalog's patch spec.patches[0] of ServiceDefinition \"web-app\" does not apply: its target {kind: StatefulSet} matches none of the objects service \"web-app\" generated (Deployment/shop); the catalog must be fixed\n"
    );
}

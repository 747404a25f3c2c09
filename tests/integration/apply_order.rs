//! Issue 23, apply order (SPEC §6.5): `render` prints objects in `kustomize build`'s order, so
//! every Namespace comes before the objects in it and every CRD before its custom resources;
//! `--order input` keeps the function's order; the order is kustomize's own (checked against
//! `kubectl kustomize` when it is installed).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::util::{TestContext, have, root, stderr, stdout, test_name};

fn documents(text: &str) -> Vec<Value> {
    krm_catalog::yaml::parse_stream(text)
        .expect("YAML")
        .into_iter()
        .map(|d| d.value)
        .filter(|v| !v.is_null())
        .collect()
}

fn at<'a>(doc: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(doc, |v, k| v.get(*k))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Every Namespace comes before the first object in it, and every CRD before the first object
/// of its group and kind. Returns what is out of order.
fn order_problems(docs: &[Value]) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        let describe = |d: &Value| format!("{}/{}", at(d, &["kind"]), at(d, &["metadata", "name"]));
        if at(doc, &["kind"]) == "Namespace" {
            let ns = at(doc, &["metadata", "name"]);
            if let Some(first) = docs[..i]
                .iter()
                .find(|d| at(d, &["metadata", "namespace"]) == ns)
            {
                problems.push(format!(
                    "{} comes after {} in it",
                    describe(doc),
                    describe(first)
                ));
            }
        }
        if at(doc, &["kind"]) == "CustomResourceDefinition" {
            let group = at(doc, &["spec", "group"]);
            let kind = at(doc, &["spec", "names", "kind"]);
            if let Some(first) = docs[..i].iter().find(|d| {
                at(d, &["kind"]) == kind
                    && at(d, &["apiVersion"]).rsplit_once('/').map(|(g, _)| g) == Some(group)
            }) {
                problems.push(format!(
                    "{} comes after its resource {}",
                    describe(doc),
                    describe(first)
                ));
            }
        }
    }
    problems
}

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
";

/// A package whose custom resource and ConfigMap come before their CRD and Namespace, beside
/// the built-in catalog's services (every one enabled, argocd's Applications in its own
/// namespace).
fn package(ctx: &TestContext) -> std::path::PathBuf {
    let dir = ctx.mkdir("pkg");
    ctx.write(
        "pkg/a-resources.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: shop\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: argocd\n",
    );
    ctx.write("pkg/b-crd.yaml", CRD);
    ctx.write(
        "pkg/c-namespace.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n",
    );
    ctx.write(
        "pkg/d-services.yaml",
        "apiVersion: services.krm-catalog.dev/v1alpha1
kind: ServiceSet
metadata:
  name: hub
spec:
  clusterType: hub
  cluster: {name: hub-1}
  services:
    argocd: {status: enabled, config: {domain: argocd.example.com}}
    metrics-server: {status: enabled}
    cert-manager:
      config:
        clusterIssuer: {email: ops@example.com}
",
    );
    dir
}

#[test]
fn issue23_render_puts_namespaces_and_crds_before_what_they_hold() {
    let ctx = TestContext::new();
    let pkg = package(&ctx);
    let mut inputs: Vec<String> = vec![pkg.display().to_string()];
    for example in [
        "functions/examples/serviceset.yaml",
        "functions/examples/resourcelist.yaml",
        "functions/examples/kpt-eval",
        "functions/examples/kpt-render",
        "functions/examples/kustomize-generator",
        "functions/examples/function-runtimes/src",
    ] {
        inputs.push(root().join(example).display().to_string());
    }
    let mut checked = 0;
    for input in &inputs {
        let out = ctx.run(&["render", "-f", input], "");
        assert!(out.status.success(), "render {input}:\n{}", stderr(&out));
        let docs = documents(&stdout(&out));
        assert!(!docs.is_empty(), "render {input} printed nothing");
        let problems = order_problems(&docs);
        assert!(
            problems.is_empty(),
            "render {input}:\n{}",
            problems.join("\n")
        );
        checked += docs.len();
    }
    // The same package in the function's order breaks both rules: the check is not vacuous.
    let out = ctx.run(
        &[
            "render",
            "--order",
            "input",
            "-f",
            &pkg.display().to_string(),
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let problems = order_problems(&documents(&stdout(&out)));
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("Namespace/shop comes after"))
            && problems
                .iter()
                .any(|p| p.starts_with("CustomResourceDefinition/widgets.example.com")),
        "{problems:?}"
    );
    assert!(checked > 40, "only {checked} objects checked");
}

/// `--order input` prints what function mode writes, in its order: each item where it was,
/// generated objects right after their source.
#[test]
fn issue23_order_input_keeps_the_function_order() {
    let ctx = TestContext::new();
    let pkg = package(&ctx);
    let pkg = pkg.display().to_string();
    let kinds = |args: &[&str]| -> Vec<String> {
        let out = ctx.run(args, "");
        assert!(out.status.success(), "{}", stderr(&out));
        documents(&stdout(&out))
            .iter()
            .map(|d| format!("{}/{}", at(d, &["kind"]), at(d, &["metadata", "name"])))
            .collect()
    };
    let input = kinds(&["render", "--order", "input", "-f", &pkg]);
    assert_eq!(
        input[..4],
        [
            "Widget/w",
            "ConfigMap/settings",
            "CustomResourceDefinition/widgets.example.com",
            "Namespace/shop"
        ]
    );
    // The ServiceSet's objects follow in the function's order: argocd's Application, then its
    // Namespace (the standard pattern's template path order).
    assert_eq!(
        input[4..6],
        ["Application/hub-1-argocd", "Namespace/argocd"]
    );
    let sorted = kinds(&["render", "-f", &pkg]);
    assert_eq!(
        input.iter().collect::<BTreeSet<_>>(),
        sorted.iter().collect::<BTreeSet<_>>(),
        "the same objects either way"
    );
    assert_eq!(sorted[0], "Namespace/argocd");
    let explicit = kinds(&["render", "--order", "kustomize", "-f", &pkg]);
    assert_eq!(sorted, explicit, "kustomize is the default");
    let out = ctx.run(&["render", "--order", "apply", "-f", &pkg], "");
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown order is a usage error"
    );
    assert!(
        stderr(&out).contains("[possible values: kustomize, input]"),
        "{}",
        stderr(&out)
    );
}

/// Our order is `kubectl kustomize`'s, object for object, on the rendered built-in catalog and
/// the package's own objects.
#[test]
fn issue23_render_order_is_kustomize_builds() {
    if !have("kubectl", test_name!()) {
        return;
    }
    let ctx = TestContext::new();
    let pkg = package(&ctx);
    let out = ctx.run(
        &[
            "render",
            "--order",
            "input",
            "-f",
            &pkg.display().to_string(),
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    ctx.write("k/resources.yaml", stdout(&out));
    ctx.write("k/kustomization.yaml", "resources:\n- resources.yaml\n");
    let built = ctx
        .command("kubectl")
        .args(["kustomize", "k"])
        .output()
        .expect("kubectl kustomize");
    assert!(built.status.success(), "{}", stderr(&built));
    let names = |docs: Vec<Value>| -> Vec<String> {
        docs.iter()
            .map(|d| {
                format!(
                    "{} {}/{}/{}",
                    at(d, &["apiVersion"]),
                    at(d, &["kind"]),
                    at(d, &["metadata", "namespace"]),
                    at(d, &["metadata", "name"])
                )
            })
            .collect()
    };
    let ours = ctx.run(&["render", "-f", &pkg.display().to_string()], "");
    assert_eq!(
        names(documents(&stdout(&ours))),
        names(documents(&stdout(&built)))
    );
}

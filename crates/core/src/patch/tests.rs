use super::*;
use proptest::prelude::*;
use serde_json::json;

#[allow(clippy::needless_pass_by_value)]
fn patches(v: Value) -> Vec<Patch> {
    parse_list(&v, &FieldPath::parse("spec.patches")).unwrap()
}

#[allow(clippy::needless_pass_by_value)]
fn problems(v: Value) -> Vec<String> {
    parse_list(&v, &FieldPath::parse("spec.patches"))
        .unwrap_err()
        .into_iter()
        .map(|p| format!("{}: {}", p.path, p.message))
        .collect()
}

fn objects() -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web"}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "web", "labels": {"app": "web"}},
               "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web-env", "namespace": "web"}, "data": {"a": "1"}}),
    ]
}

#[test]
fn issue23_strategic_patch_with_and_without_target() {
    let mut out = objects();
    let p = patches(json!([
        {"patch": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n        - name: A\n          value: b\n"},
        {"target": {"kind": "ConfigMap", "name": "web-.*"}, "patch": "data:\n  a: null\n  b: '2'\nmetadata:\n  name: renamed\n"},
    ]));
    apply(&p, &mut out, "web").unwrap();
    assert_eq!(
        out[1]["spec"]["template"]["spec"]["containers"],
        json!([{"name": "app", "image": "nginx", "env": [{"name": "A", "value": "b"}]}])
    );
    // kustomize keeps the name unless options.allowNameChange.
    assert_eq!(
        out[2],
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web-env", "namespace": "web"}, "data": {"b": "2"}})
    );
}

#[test]
fn issue23_json6902_and_its_errors() {
    let mut out = objects();
    let p = patches(
        json!([{"target": {"group": "apps", "kind": "Deployment"}, "patch": "- op: replace\n  path: /spec/replicas\n  value: 3\n- op: add\n  path: /metadata/annotations\n  value: {a~b/c: x}\n"}]),
    );
    apply(&p, &mut out, "web").unwrap();
    assert_eq!(out[1]["spec"]["replicas"], json!(3));
    let p = patches(
        json!([{"target": {"kind": "Deployment"}, "patch": "[{\"op\": \"test\", \"path\": \"/spec/replicas\", \"value\": 3}, {\"op\": \"remove\", \"path\": \"/spec/paused\"}]"}]),
    );
    let err = apply(&p, &mut out, "web").unwrap_err();
    assert_eq!(err.at().to_string(), "spec.patches[0].patch");
    assert_eq!(
        err.to_string(),
        "op 1 (remove \"/spec/paused\") failed on Deployment/web/web: \"paused\" does not exist"
    );
}

#[test]
fn issue23_a_patch_that_matches_nothing_is_an_error() {
    let p = patches(json!([{"target": {"kind": "StatefulSet"}, "patch": "spec: {replicas: 2}"}]));
    let err = apply(&p, &mut objects(), "web").unwrap_err();
    assert_eq!(
        err.to_string(),
        "its target {kind: StatefulSet} matches none of the objects service \"web\" generated (Namespace/web, Deployment/web/web, ConfigMap/web/web-env)"
    );
    let p = patches(
        json!([{"patch": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: wbe\n"}]),
    );
    let err = apply(&p, &mut objects(), "web").unwrap_err();
    assert!(
        err.to_string().starts_with(
            "the patch (apiVersion: apps/v1, kind: Deployment, name: wbe) matches none"
        ),
        "{err}"
    );
    assert!(
        err.to_string().ends_with(" (did you mean \"web\"?)"),
        "{err}"
    );
    // Namespace: `default` is what an object without one is in, as in kustomize.
    let p = patches(
        json!([{"target": {"kind": "Deployment", "namespace": "default"}, "patch": "spec: {replicas: 2}"}]),
    );
    assert!(apply(&p, &mut objects(), "web").is_err());
    let p = patches(
        json!([{"target": {"kind": "Namespace", "namespace": "web"}, "patch": "metadata: {labels: {a: b}}"}]),
    );
    assert!(
        apply(&p, &mut objects(), "web").is_err(),
        "a Namespace is in no namespace"
    );
}

#[test]
fn issue23_bad_patch_input_is_named() {
    assert_eq!(
        problems(json!([{"path": "patch.yaml"}])),
        [
            "spec.patches[0].path: patch files are not read (a catalog or package is rendered without file access): write the patch inline under `patch:` as a string (`patch: |` and the YAML below it)"
        ]
    );
    assert_eq!(
        problems(json!([{"patch": "- op: add\n  path: /x\n  value: 1\n"}])),
        [
            "spec.patches[0].target: a JSON 6902 patch needs a target (kind and name of the objects it applies to)"
        ]
    );
    assert_eq!(
        problems(json!([{"patch": "spec:\n  replicas: 2\n"}])),
        [
            "spec.patches[0].patch: a strategic-merge patch without target must name its object: give it apiVersion, kind and metadata.name, or add a target"
        ]
    );
    let p = problems(json!([{"target": {"kind": "X"}, "patch": "a: [", "optons": {}}]));
    assert_eq!(
        p[0],
        "spec.patches[0].optons: unknown field \"optons\" in a patch (did you mean \"options\"?); a patch has target, patch and options"
    );
    assert!(
        p[1].starts_with(
            "spec.patches[0].patch: is neither a strategic-merge patch nor a JSON 6902 patch: "
        ),
        "{p:?}"
    );
    assert_eq!(
        problems(json!([{"target": {"kind": "X"}, "patch": "- op: replace\n  path: /a\n"}])),
        ["spec.patches[0].patch[0].value: missing value: a \"replace\" operation needs it"]
    );
    assert_eq!(
        problems(json!({"a": 1})),
        [
            "spec.patches: must be a list of patches (each with patch and an optional target), not object"
        ]
    );
    assert_eq!(
        problems(json!([{"target": {"kind": "X"}, "patch": "a: 1\n---\nb: 2\n"}])),
        ["spec.patches[0].patch: holds 2 YAML documents; write one patches entry per document"]
    );
}

#[test]
fn issue23_delete_directive_removes_the_object() {
    let mut out = objects();
    let p = patches(json!([{"target": {"kind": "ConfigMap"}, "patch": "$patch: delete"}]));
    apply(&p, &mut out, "web").unwrap();
    assert_eq!(out.len(), 2);
}

fn arb_json(depth: u32) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0..5_i64).prop_map(|n| json!(n)),
        "[a-c]{0,2}".prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-c$]{1,2}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// RFC 7386 merge patch, the oracle for kinds without merge keys and without directives.
fn merge_patch(target: &Value, patch: &Value) -> Value {
    let Value::Object(p) = patch else {
        return patch.clone();
    };
    let mut out = match target {
        Value::Object(t) => t.clone(),
        _ => Map::new(),
    };
    for (k, v) in p {
        if v.is_null() {
            out.shift_remove(k);
        } else {
            let merged = merge_patch(out.get(k).unwrap_or(&Value::Null), v);
            out.insert(k.clone(), merged);
        }
    }
    Value::Object(out)
}

/// Arrays in the oracle's patch replace wholesale, but our merge drops nulls inside the maps
/// of a new value (as a merge into nothing does): compare against a patch without those.
fn without_nested_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nested_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_nested_nulls).collect()),
        other => other.clone(),
    }
}

fn has_directive(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.keys().any(|k| k.starts_with('$')) || m.values().any(has_directive),
        Value::Array(a) => a.iter().any(has_directive),
        _ => false,
    }
}

proptest! {
    /// For a custom resource, a strategic-merge patch without directives is a JSON merge patch.
    #[test]
    fn issue23_custom_resources_merge_as_rfc7386(spec in arb_json(3), patch in arb_json(3)) {
        prop_assume!(!has_directive(&patch) && !has_directive(&spec));
        let object = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec});
        let p = json!({"spec": patch});
        let Value::Object(pm) = p.clone() else { unreachable!() };
        let mut ours = object.clone();
        let kept = strategic::apply(&mut ours, &pm).unwrap();
        prop_assert!(kept);
        let expected = merge_patch(&object, &p);
        // Nulls inside arrays of the patch stay (they are values, not deletions).
        let ours_cmp = without_nested_nulls(&ours);
        prop_assert_eq!(ours_cmp, without_nested_nulls(&expected));
    }

    /// No patch text panics the parser or the merge.
    #[test]
    fn issue23_no_patch_panics(text in "[a-z:$\\[\\]{}\\-/ \n]{0,40}", object in arb_json(3)) {
        let entry = json!([{"target": {"kind": ".*"}, "patch": text}]);
        if let Ok(p) = parse_list(&entry, &FieldPath::parse("spec.patches")) {
            let mut objects = vec![json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": object})];
            let _ = apply(&p, &mut objects, "s");
        }
    }
}

#[test]
fn issue23_a_target_matches_the_name_before_a_rename() {
    let mut out = objects();
    let p = patches(json!([
        {"target": {"kind": "ConfigMap"}, "options": {"allowNameChange": true}, "patch": "metadata:\n  name: renamed\n"},
        {"target": {"kind": "ConfigMap", "name": "web-env"}, "patch": "data:\n  c: '3'\n"},
        {"target": {"kind": "ConfigMap", "name": "renamed"}, "patch": "data:\n  d: '4'\n"},
    ]));
    apply(&p, &mut out, "web").unwrap();
    assert_eq!(out[2]["metadata"]["name"], json!("renamed"));
    assert_eq!(out[2]["data"], json!({"a": "1", "c": "3", "d": "4"}));
}

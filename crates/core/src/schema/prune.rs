//! Pruning: a port of apiextensions-apiserver `pkg/apiserver/schema/pruning/algorithm.go`.
//!
//! Imports `structural`.

use serde_json::{Map, Value};

use super::structural::Structural;
use crate::diagnostics::FieldPath;

/// Port of `pruning.Prune`: drop fields the schema does not know; returns the dropped paths.
///
/// `is_resource_root` keeps `apiVersion`, `kind` and `metadata` at the top, as for a resource.
pub fn prune(x: &mut Value, s: Option<&Structural>, is_resource_root: bool) -> Vec<FieldPath> {
    let mut removed = Vec::new();
    let empty = Structural::default();
    // Upstream substitutes an empty embedded-resource schema when the root has none.
    let s = if is_resource_root {
        Some(s.unwrap_or(&empty))
    } else {
        s
    };
    prune_rec(x, s, is_resource_root, &mut FieldPath::root(), &mut removed);
    removed
}

fn prune_rec(
    x: &mut Value,
    s: Option<&Structural>,
    force_embedded: bool,
    path: &mut FieldPath,
    removed: &mut Vec<FieldPath>,
) {
    if let Some(s) = s
        && s.x_preserve_unknown_fields
    {
        skip_prune(x, s, force_embedded, path, removed);
        return;
    }
    match x {
        Value::Object(m) => {
            let Some(s) = s else {
                for k in m.keys() {
                    removed.push(path.key(k.clone()));
                }
                m.clear();
                return;
            };
            for k in prune_fields(m, s, force_embedded, path, removed) {
                removed.push(path.key(k.clone()));
                // shift_remove keeps the order of the remaining keys.
                m.shift_remove(&k);
            }
        }
        Value::Array(a) => {
            let items = s.and_then(|s| s.items.as_deref());
            for (i, v) in a.iter_mut().enumerate() {
                path.push_index(i);
                prune_rec(v, items, false, path, removed);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Prune inside each field of `m` that `s` declares (a property, or `additionalProperties`
/// with a schema); an embedded resource's `metadata` is pruned as `ObjectMeta`. Returns the
/// fields `s` declares nothing for: the caller removes or keeps them.
fn prune_fields(
    m: &mut Map<String, Value>,
    s: &Structural,
    force_embedded: bool,
    path: &mut FieldPath,
    removed: &mut Vec<FieldPath>,
) -> Vec<String> {
    let embedded = s.x_embedded_resource || force_embedded;
    let mut unknown = Vec::new();
    for (k, v) in m.iter_mut() {
        if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
            if k == "metadata" {
                prune_object_meta(v, path, removed);
            }
            continue;
        }
        path.push_key(k.clone());
        if let Some(prop) = s.property(k) {
            prune_rec(v, Some(prop), false, path, removed);
        } else if let Some(ap) = &s.additional_properties {
            prune_rec(v, ap.schema(), false, path, removed);
        } else {
            unknown.push(k.clone());
        }
        path.pop();
    }
    unknown
}

/// `skipPrune`: keep unknown fields here, but prune inside what the schema declares.
fn skip_prune(
    x: &mut Value,
    s: &Structural,
    force_embedded: bool,
    path: &mut FieldPath,
    removed: &mut Vec<FieldPath>,
) {
    match x {
        Value::Object(m) => {
            // The fields the schema does not declare stay.
            prune_fields(m, s, force_embedded, path, removed);
        }
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for (i, v) in a.iter_mut().enumerate() {
                    path.push_index(i);
                    skip_prune(v, items, false, path, removed);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

/// The JSON fields of `metav1.ObjectMeta` (k8s.io/apimachinery `pkg/apis/meta/v1/types.go`).
pub const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// The `metadata` of an embedded resource is read as an `ObjectMeta`: a field it does not
/// have is dropped, and reported as unknown under strict field validation (apiextensions-
/// apiserver `pkg/apiserver/schema/objectmeta/algorithm.go` `coerce` →
/// `GetObjectMetaWithOptions` with `ReturnUnknownFieldPaths`, then `SetObjectMeta`).
fn prune_object_meta(metadata: &mut Value, path: &FieldPath, removed: &mut Vec<FieldPath>) {
    let Value::Object(m) = metadata else {
        return;
    };
    let unknown: Vec<String> = m
        .keys()
        .filter(|k| !OBJECT_META_FIELDS.contains(&k.as_str()))
        .cloned()
        .collect();
    let meta_path = path.key("metadata");
    for k in unknown {
        removed.push(meta_path.key(k.clone()));
        m.shift_remove(&k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prune_follows_upstream() {
        let s = Structural::from_json(&json!({"properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}},
            "p": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"q": {"type": "object", "properties": {}}}},
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
            "t": {"type": "object", "additionalProperties": true},
            "r": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object", "properties": {}}}}
        }})).unwrap();
        let mut x = json!({"a": {"b": "x", "c": 1}, "p": {"keep": {"deep": 1}, "q": {"gone": 1}},
            "m": {"k": {"v": "1", "w": 2}}, "t": {"k": {"n": 1}, "s": 1},
            "r": {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {"x": 1}, "status": {}}, "top": 1});
        let removed: Vec<String> = prune(&mut x, Some(&s), false)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            x,
            json!({"a": {"b": "x"}, "p": {"keep": {"deep": 1}, "q": {}}, "m": {"k": {"v": "1"}},
            "t": {"k": {}, "s": 1}, "r": {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {}}})
        );
        assert_eq!(
            removed,
            [
                "a.c", "p.q.gone", "m.k.w", "t.k.n", "r.spec.x", "r.status", "top"
            ]
        );
        // With no schema everything inside objects goes; resource roots keep their type fields.
        let mut y = json!([{"a": 1}, {"b": 2}]);
        prune(&mut y, None, false);
        assert_eq!(y, json!([{}, {}]));
        let mut z = json!({"apiVersion": "v1", "kind": "K", "metadata": {}, "spec": 1});
        prune(&mut z, None, true);
        assert_eq!(z, json!({"apiVersion": "v1", "kind": "K", "metadata": {}}));
    }
}

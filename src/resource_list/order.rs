//! `kustomize build`'s default output order (its "legacy" sort), ported from kustomize's
//! `api/internal/builtins/SortOrderTransformer.go` (`legacyIDSorter`, `defaultOrderFirst`,
//! `defaultOrderLast`; the same lists as `api/resid/gvk.go`'s `orderFirst`/`orderLast` plus
//! `Endpoints`, which kustomize v5 added before `Service`):
//!
//! - kinds in `ORDER_FIRST` come first in that order, kinds in `ORDER_LAST` last in that
//!   order, every other kind in between;
//! - within one rank, by `group_version_kind` with `~G`/`~V`/`~K` for empty parts (byte-wise,
//!   as Go compares strings);
//! - within one group/version/kind, by `namespace|name` with `~X`/`~N` for empty parts.
//!
//! kustomize sorts with Go's unstable `sort.Sort`; its resource map never holds two objects of
//! the same id, so the order is total there. Ours is stable, so objects with equal ids keep
//! their input order.

use std::cmp::Ordering;

use serde_json::Value;

use super::str_at;

/// `defaultOrderFirst` of kustomize's `SortOrderTransformer` ("DO NOT CHANGE!" upstream).
const ORDER_FIRST: [&str; 22] = [
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];

/// `defaultOrderLast`.
const ORDER_LAST: [&str; 2] = [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// kustomize's `typeOrders`: `-len(orderFirst) + i` for the first list, `1 + i` for the last,
/// 0 for every other kind.
fn rank(kind: &str) -> i64 {
    let signed = |i: usize| i64::try_from(i).unwrap_or(i64::MAX);
    if let Some(i) = ORDER_FIRST.iter().position(|k| *k == kind) {
        return signed(i) - signed(ORDER_FIRST.len());
    }
    if let Some(i) = ORDER_LAST.iter().position(|k| *k == kind) {
        return 1 + signed(i);
    }
    0
}

/// What an object is sorted by: its rank, `legacyGVKSortString`, and the namespace and name
/// part of `legacyResIDSortString` (the gvk part is equal whenever it is compared).
struct Key {
    rank: i64,
    gvk: String,
    id: String,
}

fn or_else<'a>(s: &'a str, empty: &'a str) -> &'a str {
    if s.is_empty() { empty } else { s }
}

fn key(object: &Value) -> Key {
    let api_version = str_at(object, &["apiVersion"]);
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = str_at(object, &["kind"]);
    let namespace = str_at(object, &["metadata", "namespace"]);
    let name = str_at(object, &["metadata", "name"]);
    Key {
        rank: rank(kind),
        gvk: format!(
            "{}_{}_{}",
            or_else(group, "~G"),
            or_else(version, "~V"),
            or_else(kind, "~K")
        ),
        id: format!("{}|{}", or_else(namespace, "~X"), or_else(name, "~N")),
    }
}

fn compare(a: &Key, b: &Key) -> Ordering {
    if a.gvk != b.gvk {
        return a.rank.cmp(&b.rank).then_with(|| a.gvk.cmp(&b.gvk));
    }
    a.id.cmp(&b.id)
}

/// Sort objects as `kustomize build` prints them by default.
pub fn sort_like_kustomize(objects: &mut Vec<Value>) {
    let mut keyed: Vec<(Key, Value)> = objects.drain(..).map(|o| (key(&o), o)).collect();
    keyed.sort_by(|a, b| compare(&a.0, &b.0));
    objects.extend(keyed.into_iter().map(|(_, o)| o));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(api: &str, kind: &str, ns: &str, name: &str) -> Value {
        let mut meta = json!({"name": name});
        if !ns.is_empty() {
            meta["namespace"] = json!(ns);
        }
        json!({"apiVersion": api, "kind": kind, "metadata": meta})
    }

    fn order(objects: &[Value]) -> Vec<String> {
        let mut objects = objects.to_vec();
        sort_like_kustomize(&mut objects);
        objects
            .iter()
            .map(|o| {
                format!(
                    "{}/{}",
                    str_at(o, &["kind"]),
                    str_at(o, &["metadata", "name"])
                )
            })
            .collect()
    }

    /// kustomize's own `TestLegacyOrderTransformer`-style expectations: the first list in
    /// order, unknown kinds in the middle by group_version_kind, webhooks last.
    #[test]
    fn issue23_kustomize_legacy_order() {
        let input = [
            obj(
                "admissionregistration.k8s.io/v1",
                "ValidatingWebhookConfiguration",
                "",
                "v",
            ),
            obj("apps/v1", "Deployment", "a", "d"),
            obj("argoproj.io/v1alpha1", "Application", "argocd", "app"),
            obj("v1", "Service", "a", "s"),
            obj("v1", "Endpoints", "a", "e"),
            obj("cert-manager.io/v1", "ClusterIssuer", "", "ci"),
            obj(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                "",
                "crd",
            ),
            obj("v1", "ConfigMap", "b", "cm"),
            obj("v1", "ConfigMap", "a", "cm"),
            obj("v1", "Namespace", "", "a"),
            obj(
                "admissionregistration.k8s.io/v1",
                "MutatingWebhookConfiguration",
                "",
                "m",
            ),
        ];
        assert_eq!(
            order(&input),
            [
                "Namespace/a",
                "CustomResourceDefinition/crd",
                "ConfigMap/cm",
                "ConfigMap/cm",
                "Endpoints/e",
                "Service/s",
                "Deployment/d",
                "Application/app",
                "ClusterIssuer/ci",
                "MutatingWebhookConfiguration/m",
                "ValidatingWebhookConfiguration/v",
            ]
        );
        // Within one kind: namespace|name, "~X" (no namespace) after letters, '|' after them.
        let names = order(&[
            obj("v1", "ConfigMap", "ab", "x"),
            obj("v1", "ConfigMap", "", "y"),
            obj("v1", "ConfigMap", "a", "z"),
        ]);
        assert_eq!(names, ["ConfigMap/x", "ConfigMap/z", "ConfigMap/y"]);
    }

    /// Same kind in two groups or versions: by group_version_kind, "~G" (core) after
    /// lower-case groups.
    #[test]
    fn issue23_same_kind_sorts_by_group_then_version() {
        let names = order(&[
            obj("v1", "Widget", "", "core"),
            obj("b.example/v1", "Widget", "", "b1"),
            obj("a.example/v2", "Widget", "", "a2"),
            obj("a.example/v1", "Widget", "", "a1"),
        ]);
        assert_eq!(
            names,
            ["Widget/a1", "Widget/a2", "Widget/b1", "Widget/core"]
        );
    }
}

//! The inline catalog's digest: of what its documents say, in an order of their own, not of
//! where the orchestrator put them or what it and the function annotate (file, index,
//! local-config), which change from one render to the next (SPEC §6.4: a second render is a
//! fixed point).

use serde_json::Value;

/// Each document as it is digested: its `apiVersion/kind/name` and its JSON without the
/// orchestrators' annotations, sorted.
pub(super) fn documents_to_digest(items: &[(usize, &Value)]) -> Vec<(String, Vec<u8>)> {
    let mut digested: Vec<(String, Vec<u8>)> = items
        .iter()
        .map(|(_, item)| {
            let mut item = (*item).clone();
            strip_orchestrator_annotations(&mut item);
            let text = |pointer: &str| {
                item.pointer(pointer)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            };
            let id = format!(
                "{}/{}/{}",
                text("/apiVersion"),
                text("/kind"),
                text("/metadata/name")
            );
            (id, serde_json::to_vec(&item).unwrap_or_default())
        })
        .collect();
    digested.sort();
    digested
}

/// Take out the annotations orchestrators and functions keep on items (`config.kubernetes.io/`,
/// `internal.config.kubernetes.io/`, `config.k8s.io/`, `kustomize.config.k8s.io/`), and
/// `metadata.annotations` itself when nothing else is left.
fn strip_orchestrator_annotations(item: &mut Value) {
    let Some(metadata) = item.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(annotations) = metadata
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    annotations.retain(|key, _| {
        ![
            "config.kubernetes.io/",
            "internal.config.kubernetes.io/",
            "config.k8s.io/",
            "kustomize.config.k8s.io/",
        ]
        .iter()
        .any(|prefix| key.starts_with(prefix))
    });
    if annotations.is_empty() {
        metadata.remove("annotations");
    }
}

#[cfg(test)]
mod tests {
    /// Issue 22 (noticed at stop 28): an inline catalog's digest is a fixed point across
    /// renders: the orchestrator's file and index annotations, the local-config mark the first
    /// render adds and the order of the files do not change it; what the documents say does.
    #[test]
    fn issue16_inline_catalog_digest_ignores_orchestrator_annotations_and_order() {
        let def = |name: &str, annotations: serde_json::Value| {
            serde_json::json!({"apiVersion": "kubara.io/v1alpha1", "kind": "ServiceDefinition",
                "metadata": {"name": name, "annotations": annotations},
                "spec": {"chartPath": name, "status": "enabled"}})
        };
        let a = def(
            "a",
            serde_json::json!({"internal.config.kubernetes.io/index": "0"}),
        );
        let b = def(
            "b",
            serde_json::json!({"config.kubernetes.io/path": "b.yaml"}),
        );
        let first = crate::catalog::Bundle::from_items(&[(0, &a), (1, &b)]);
        let a2 = def(
            "a",
            serde_json::json!({"config.kubernetes.io/local-config": "true",
            "internal.config.kubernetes.io/index": "3"}),
        );
        let second = crate::catalog::Bundle::from_items(&[(4, &b), (7, &a2)]);
        assert_eq!(first.digest, second.digest);
        let owned = def("a", serde_json::json!({"team": "x"}));
        let third = crate::catalog::Bundle::from_items(&[(0, &owned), (1, &b)]);
        assert_ne!(first.digest, third.digest);
    }
}

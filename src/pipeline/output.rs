//! What a generated object carries and what the output may hold: the provenance stamped on
//! every generated object, the instance namespace on namespaced kinds (cluster scope), the file
//! each object is written to, names the apiserver accepts, one object per identity.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::names;
use crate::resource_list::{self, Fields};
use crate::results::{KrmResult, Results};

/// Annotation naming the service a generated object belongs to.
pub const SERVICE_ANNOTATION: &str = "krm-catalog.dev/service";
/// Annotation naming the catalog (`name@version` or digest) a generated object came from.
pub const CATALOG_ANNOTATION: &str = "krm-catalog.dev/catalog";
/// Annotation naming the source object of a generated object; marks objects to replace.
pub const GENERATED_FROM: &str = "krm-catalog.dev/generated-from";
/// Label on every generated object.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "krm-catalog");

/// Kinds that are never namespaced, so an instance's namespace is not stamped on them.
pub(super) const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CSIDriver",
    "CSINode",
    "CertificateSigningRequest",
    "ClusterExternalSecret",
    "ClusterIssuer",
    "ClusterPolicy",
    "ClusterPolicyReport",
    "ClusterRole",
    "ClusterRoleBinding",
    "ClusterSecretStore",
    "CustomResourceDefinition",
    "FlowSchema",
    "GatewayClass",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "RuntimeClass",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
];

/// Where a generated object came from, stamped on it.
pub(super) struct Provenance<'a> {
    /// The instance's `metadata.namespace`, set on namespaced kinds that have none.
    pub instance_namespace: Option<&'a str>,
    pub service_id: &'a str,
    /// The catalog (`name@version` or digest).
    pub catalog: &'a str,
    /// The identity of the source object.
    pub source: &'a str,
    /// The file the object is written to.
    pub path: &'a str,
}

/// Stamp the `index`th object of a generated file: the instance namespace unless the kind is
/// cluster-scoped or the template set one, the managed-by label, provenance annotations, and
/// the file path and index (current and legacy annotations).
pub(super) fn stamp(object: &mut Value, provenance: &Provenance<'_>, index: usize) {
    if let Some(ns) = provenance.instance_namespace {
        let kind = resource_list::str_at(object, &["kind"]);
        let has_ns = !resource_list::str_at(object, &["metadata", "namespace"]).is_empty();
        if !has_ns
            && !CLUSTER_SCOPED.contains(&kind)
            && let Some(Value::Object(meta)) = object.get_mut("metadata")
        {
            meta.insert("namespace".into(), Value::String(ns.to_owned()));
        }
    }
    resource_list::set_label(object, MANAGED_BY.0, MANAGED_BY.1);
    let index = index.to_string();
    let path = provenance.path;
    resource_list::set_annotations(
        object,
        &[
            (SERVICE_ANNOTATION, provenance.service_id),
            (CATALOG_ANNOTATION, provenance.catalog),
            (GENERATED_FROM, provenance.source),
            (resource_list::PATH, path),
            (resource_list::INDEX, &index),
            (resource_list::LEGACY_PATH, path),
            (resource_list::LEGACY_INDEX, &index),
        ],
    );
}

/// What the apiserver stores one object under: API group, kind, namespace, name (kustomize's
/// resource id, whose version does not make a second object either).
fn object_id<T: Fields + ?Sized>(object: &T) -> (String, String, String, String) {
    let (group, _) = crate::gvk::split_api_version(resource_list::str_at(object, &["apiVersion"]));
    let at = |path: &[&str]| resource_list::str_at(object, path).to_owned();
    (
        group.to_owned(),
        at(&["kind"]),
        at(&["metadata", "namespace"]),
        at(&["metadata", "name"]),
    )
}

/// Annotations we stamp (provenance, file path and index): not part of what an object is.
fn is_stamped_annotation(key: &str) -> bool {
    key.starts_with("krm-catalog.dev/")
        || key.starts_with("internal.config.kubernetes.io/")
        || key == resource_list::LEGACY_PATH
        || key == resource_list::LEGACY_INDEX
}

/// Labels that do not make two generated objects different.
fn is_ignored_label(key: &str) -> bool {
    key == "app.kubernetes.io/part-of"
}

/// Whether two objects are equal but for what we stamp on them (provenance annotations, file
/// path and index) and the `app.kubernetes.io/part-of` label, an `annotations` or `labels` map
/// left empty without those counting as absent: then they are the same object (the Namespace
/// two services share). Compared in place, without building a copy of either.
fn same_but_provenance(a: &Value, b: &Value) -> bool {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return a == b;
    };
    a.len() == b.len()
        && a.iter().all(|(key, va)| {
            b.get(key).is_some_and(|vb| {
                if key == "metadata" {
                    same_metadata(va, vb)
                } else {
                    va == vb
                }
            })
        })
}

fn same_metadata(a: &Value, b: &Value) -> bool {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return a == b;
    };
    let filtered = ["annotations", "labels"];
    let others =
        |m: &Map<String, Value>| m.len() - filtered.iter().filter(|k| m.contains_key(**k)).count();
    others(a) == others(b)
        && a.iter()
            .filter(|(k, _)| !filtered.contains(&k.as_str()))
            .all(|(k, va)| b.get(k) == Some(va))
        && same_filtered(
            a.get("annotations"),
            b.get("annotations"),
            is_stamped_annotation,
        )
        && same_filtered(a.get("labels"), b.get("labels"), is_ignored_label)
}

/// Two `annotations` (or `labels`) fields, equal once the `ignored` keys are left out and a map
/// left empty counts as no field.
fn same_filtered(a: Option<&Value>, b: Option<&Value>, ignored: fn(&str) -> bool) -> bool {
    fn kept(v: Option<&Value>, ignored: fn(&str) -> bool) -> Option<(Option<&Value>, usize)> {
        match v {
            Some(Value::Object(m)) => {
                let n = m.keys().filter(|k| !ignored(k)).count();
                (n > 0).then_some((v, n))
            }
            other => other.map(|v| (Some(v), 0)),
        }
    }
    match (kept(a, ignored), kept(b, ignored)) {
        (None, None) => true,
        (Some((Some(Value::Object(x)), nx)), Some((Some(Value::Object(y)), ny))) => {
            nx == ny
                && x.iter()
                    .filter(|(k, _)| !ignored(k))
                    .all(|(k, v)| y.get(k) == Some(v))
        }
        (Some((x, _)), Some((y, _))) => x == y,
        _ => false,
    }
}

/// Keep one of each generated object: the apiserver (and `kustomize build`, "may not add
/// resource with an already registered id") holds one object per identity. A second copy
/// equal but for our provenance is dropped; a different one, or one that would replace an
/// input item we did not generate, is an error on the later source, and is dropped too.
pub(super) fn drop_duplicates<'a, T: Fields + 'a>(
    inputs: impl Iterator<Item = &'a T>,
    batches: Vec<(&dyn Fields, &mut Vec<Value>)>,
    templates: &HashMap<(String, String), String>,
    results: &mut Results,
) {
    enum Seen<'v> {
        Input(String),
        Generated {
            first: &'v Value,
            source: &'v dyn Fields,
        },
    }
    // Only identities that something generates can collide: a pass-through package (no
    // generated objects) costs nothing here, and no per-item record is kept for the others.
    let generated: std::collections::HashSet<_> = batches
        .iter()
        .flat_map(|(_, objects)| objects.iter().map(object_id))
        .collect();
    if generated.is_empty() {
        return;
    }
    let mut seen: HashMap<(String, String, String, String), Seen<'_>> = HashMap::new();
    for item in inputs {
        let id = object_id(item);
        if !generated.contains(&id) {
            continue;
        }
        let from = format!("the input item {}", describe(item));
        seen.insert(id, Seen::Input(from));
    }
    let template_of = |object: &Value| -> String {
        templates
            .get(&(
                resource_list::annotation(object, resource_list::PATH)
                    .unwrap_or_default()
                    .to_owned(),
                resource_list::annotation(object, resource_list::INDEX)
                    .unwrap_or_default()
                    .to_owned(),
            ))
            .map_or_else(|| "?".to_owned(), String::clone)
    };
    // Decide while the objects are only read (the first of each identity is compared in
    // place), then drop.
    let mut keep: Vec<Vec<bool>> = Vec::with_capacity(batches.len());
    for (source, objects) in &batches {
        let source: &dyn Fields = *source;
        let mut kept = Vec::with_capacity(objects.len());
        for object in objects.iter() {
            let id = object_id(object);
            let message = match seen.get(&id) {
                None => {
                    seen.insert(
                        id,
                        Seen::Generated {
                            first: object,
                            source,
                        },
                    );
                    kept.push(true);
                    continue;
                }
                Some(Seen::Generated { first, .. }) if same_but_provenance(first, object) => {
                    kept.push(false);
                    continue;
                }
                Some(earlier) => earlier,
            };
            kept.push(false);
            let template = template_of(object);
            let from = format!("{} (template {template})", describe(source));
            let shown = if id.2.is_empty() {
                id.3.clone()
            } else {
                format!("{}/{}", id.2, id.3)
            };
            let kind = &id.1;
            let message = match message {
                Seen::Generated {
                    first,
                    source: first_source,
                } => format!(
                    "generated {kind} \"{shown}\" twice with different content: from {} (template {}) and from {from}; the templates name both the same: keep one of them, or give them values the templates build distinct names from (such as a different `cluster.name` each)",
                    describe(*first_source),
                    template_of(first),
                ),
                // A package that brings its own Namespace (labels for pod security, quotas)
                // is the common layout: the user's copy is the one they meant.
                Seen::Input(input) if kind == "Namespace" && id.0.is_empty() => {
                    results.push(
                        KrmResult::warning(format!(
                            "{from} generates Namespace \"{shown}\", which {input} defines already: the package's own Namespace is kept and the generated one left out"
                        ))
                        .about(source)
                        .tag("template", template),
                    );
                    continue;
                }
                Seen::Input(input) => format!(
                    "generated {kind} \"{shown}\" from {from}, but {input} is that object already and was not generated by this function; remove or rename one of them"
                ),
            };
            results.push(
                KrmResult::error(message)
                    .about(source)
                    .tag("template", template),
            );
        }
        keep.push(kept);
    }
    drop(seen);
    for ((_, objects), kept) in batches.into_iter().zip(keep) {
        let mut kept = kept.into_iter();
        objects.retain(|_| kept.next().unwrap_or(true));
    }
}

/// `MetricsServer "ns/a"`: how messages name a source object or input item.
fn describe<T: Fields + ?Sized>(item: &T) -> String {
    let kind = resource_list::str_at(item, &["kind"]);
    let name = resource_list::str_at(item, &["metadata", "name"]);
    let object = match resource_list::str_at(item, &["metadata", "namespace"]) {
        "" => format!("{kind} \"{name}\""),
        ns => format!("{kind} \"{ns}/{name}\""),
    };
    // Both sources of a duplicate are named with their files (issue 22): the result's own
    // file is only one of them.
    match resource_list::file_of(item) {
        Some(file) => format!("{object} in {}", file.path),
        None => object,
    }
}

/// Generated names the apiserver would refuse (see `names`), one message each.
pub(super) fn invalid_names(object: &Value, template: &str, source: &Value) -> Vec<String> {
    let kind = resource_list::str_at(object, &["kind"]);
    let (group, _) = crate::gvk::split_api_version(resource_list::str_at(object, &["apiVersion"]));
    // Described only for a message: this runs on every generated object.
    let from = || describe(source);
    let mut out = Vec::new();
    let name = resource_list::str_at(object, &["metadata", "name"]);
    let rule = names::Rule::for_name(group, kind);
    if !rule.accepts(name) {
        let from = from();
        out.push(format!(
            "template {template} of {from} generates {kind} \"{name}\", which the apiserver would refuse: metadata.name of kind {kind} must be {}, not \"{name}\"; change the values the template builds the name from (such as `cluster.name`, the source's name or namespace)",
            rule.describe()
        ));
    }
    if let Some(ns) = object
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
        && !names::is_dns1123_label(ns)
    {
        let from = from();
        out.push(format!(
            "template {template} of {from} generates {kind} \"{name}\", which the apiserver would refuse: metadata.namespace must be {}, not \"{ns}\"; change the values the template builds the namespace from (such as the source's `metadata.namespace` or `cluster` values)",
            names::Rule::Dns1123Label.describe()
        ));
    }
    out
}

/// A source's `metadata.name` that cannot name the files generated from it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "metadata.name \"{0}\" is not a valid Kubernetes name: expected a DNS-1123 subdomain (lowercase letters, digits, - and ., starting and ending with a letter or digit, at most 253 characters); generated files are named after it"
)]
pub(super) struct InvalidName(String);

impl crate::results::Diagnostic for InvalidName {
    fn field_path(&self) -> crate::diagnostics::FieldPath {
        crate::diagnostics::FieldPath::parse("metadata.name")
    }
}

/// `<dir of the source file>/<source name>.<service id>.yaml`: one file per service, beside
/// the source, so kpt writes generated files next to what produced them. The name must be
/// what the apiserver accepts for a custom resource (a DNS-1123 subdomain), so no `/` or `..`
/// can move the file elsewhere (service IDs are RFC 1123 labels already).
pub(super) fn generated_path(source: &Value, service_id: &str) -> Result<String, InvalidName> {
    let name = resource_list::str_at(source, &["metadata", "name"]);
    let name = if name.is_empty() { "generated" } else { name };
    if !crate::gvk::is_dns_subdomain(name) {
        return Err(InvalidName(name.to_owned()));
    }
    let file = format!("{name}.{service_id}.yaml");
    Ok(match resource_list::file_of(source) {
        Some(f) => match f.path.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/{file}"),
            None => file,
        },
        None => file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// The normal form the duplicate check used to build (a copy of each object): the oracle
    /// of `same_but_provenance`.
    fn without_provenance(object: &Value) -> Value {
        let mut object = object.clone();
        if let Some(Value::Object(meta)) = object.get_mut("metadata") {
            if let Some(Value::Object(a)) = meta.get_mut("annotations") {
                a.retain(|k, _| !is_stamped_annotation(k));
            }
            if let Some(Value::Object(l)) = meta.get_mut("labels") {
                l.remove("app.kubernetes.io/part-of");
            }
            meta.retain(|k, v| {
                !(matches!(k.as_str(), "annotations" | "labels")
                    && v.as_object().is_some_and(Map::is_empty))
            });
        }
        object
    }

    fn small() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            Just(json!("a")),
            Just(json!("b")),
            Just(json!(1)),
            Just(json!({})),
            Just(json!([])),
        ]
    }

    fn keyed(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
        prop_oneof![
            3 => prop::collection::vec((prop::sample::select(keys), small()), 0..4).prop_map(
                |kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            ),
            1 => small(),
        ]
    }

    fn object() -> impl Strategy<Value = Value> {
        let meta = (
            prop::option::of(keyed(&[
                "krm-catalog.dev/service",
                "internal.config.kubernetes.io/path",
                "config.kubernetes.io/path",
                "config.kubernetes.io/index",
                "x",
                "y",
            ])),
            prop::option::of(keyed(&["app.kubernetes.io/part-of", "app", "tier"])),
            prop::option::of(small()),
        )
            .prop_map(|(annotations, labels, name)| {
                let mut meta = Map::new();
                if let Some(v) = annotations {
                    meta.insert("annotations".into(), v);
                }
                if let Some(v) = labels {
                    meta.insert("labels".into(), v);
                }
                if let Some(v) = name {
                    meta.insert("name".into(), v);
                }
                Value::Object(meta)
            });
        prop_oneof![
            6 => (prop::option::of(prop_oneof![4 => meta, 1 => small()]), prop::option::of(small()))
                .prop_map(|(metadata, spec)| {
                    let mut object = Map::new();
                    object.insert("kind".into(), json!("Namespace"));
                    if let Some(v) = metadata {
                        object.insert("metadata".into(), v);
                    }
                    if let Some(v) = spec {
                        object.insert("spec".into(), v);
                    }
                    Value::Object(object)
                }),
            1 => small(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn issue13_duplicates_compare_in_place_as_the_copies_did(a in object(), b in object()) {
            prop_assert_eq!(
                same_but_provenance(&a, &b),
                without_provenance(&a) == without_provenance(&b),
                "{} vs {}", a, b
            );
            prop_assert!(same_but_provenance(&a, &a));
        }
    }

    #[test]
    fn issue13_stamped_copies_are_the_same_object() {
        let a = json!({"kind": "Namespace", "metadata": {"name": "x",
            "annotations": {"krm-catalog.dev/service": "a", "config.kubernetes.io/path": "p"},
            "labels": {"app.kubernetes.io/part-of": "a", "team": "t"}}});
        let b = json!({"kind": "Namespace", "metadata": {"labels": {"team": "t"}, "name": "x"}});
        let c = json!({"kind": "Namespace", "metadata": {"labels": {"team": "u"}, "name": "x"}});
        assert!(same_but_provenance(&a, &b));
        assert!(!same_but_provenance(&a, &c));
    }
}

//! `krm-catalog import kubara`: a kubara `config.yaml` (`version`, `clusters[]`) turned into
//! one `ServiceSet` per cluster.
//!
//! kubara (ADR-0002 era, `src/internal/config`) reads the file in this order: the legacy
//! migrations when the file has no `version` key (`migrateLegacyConfig`: the cluster `type`,
//! then the services through [`legacy::migrate`], the same code a `ServiceSet` runs), the
//! struct defaults (`applyDefaults`), then its generated JSON Schema. The schema of the
//! cluster fields is written here as a CRD-style schema ([`config_schema`]), so a value kubara
//! rejects is rejected with the words every other schema error of krm-catalog uses
//! (kube-openapi's), and unknown keys, which kubara's decoder drops without a word, are errors
//! with a "did you mean" ([`instance::unknown_field`], the run's own message).
//!
//! The services themselves (their IDs, `status` and `config`) are checked by the run: the
//! caller renders each `ServiceSet` with the user's catalogs.

use serde_json::{Map, Value, json};

use super::instance;
use super::legacy;
use crate::diagnostics::FieldPath;
use crate::schema::{ConfigSchema, prune};
use crate::strict::{Problem, type_name};

/// The only config version kubara's ADR-0002 schema accepts (`Config.Version`'s enum).
pub const VERSION: &str = "v1alpha1";

/// Said after a version other than [`VERSION`]: kubara's later formats (`v1alpha2`: the load
/// balancer IPs under `services.metallb.config`; `v1alpha3`: `platform-components` and
/// `platform-configs`; `v1alpha4`: per-cluster `catalogs` and `argocd.selfManaged`) are not
/// read yet.
const LATER_VERSIONS: &str = " (krm-catalog imports the config of kubara's ADR-0002 releases, v1alpha1 or without version; kubara's later formats are not read yet)";

/// At most this many clusters in one file (each becomes a file of its own).
pub const MAX_CLUSTERS: usize = 1000;

/// Where kubara's managed repository keeps the charts (`managed-service-catalog/helm/<chart>`,
/// its `--managed-catalog` default), the built-in catalog's `cluster.chartsPath`.
pub const CHARTS_PATH: &str = "managed-service-catalog/helm";

/// One `ServiceSet` per cluster, in file order, and the notes of what the legacy migrations
/// rewrote (warnings: the user may want to update the file).
#[derive(Debug, Default, PartialEq)]
pub struct Imported {
    /// `(cluster name, ServiceSet)`.
    pub sets: Vec<(String, Value)>,
    /// What the legacy migrations rewrote, at the paths of the kubara file.
    pub notes: Vec<Problem>,
    /// Whether the file had no `version` (the legacy migrations ran).
    pub legacy: bool,
}

/// Everything wrong with a kubara config, sorted, each at its path in the file.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct ImportError {
    /// The problems.
    pub problems: Vec<Problem>,
}

/// kubara's `Config` as a CRD-style schema: the `jsonschema` tags of `Cluster`, `Terraform`,
/// `DNS`, `ArgoCD`, `RepoProto`, `RepoType`, `Repository` and `HelmRepository`
/// (`src/internal/config/types.go` at 2d5d5a91) and the per-service instance schema
/// (`storage.className`, `networking.annotations`). A `required` string field that kubara
/// always writes (it has no `omitempty`) is also `minLength: 1` where kubara's format or
/// length check rejects the empty string it would write.
#[must_use]
pub fn config_schema() -> Value {
    let text = |min: bool| {
        if min {
            json!({"type": "string", "minLength": 1})
        } else {
            json!({"type": "string"})
        }
    };
    let repository = json!({
        "type": "object",
        "required": ["url"],
        "properties": {
            "url": {"type": "string", "format": "uri", "minLength": 1},
            "targetRevision": text(true),
        },
    });
    let repo_type = json!({
        "type": "object",
        "required": ["customer", "managed"],
        "properties": {"customer": repository, "managed": repository},
    });
    let service = json!({
        "type": "object",
        "nullable": true,
        "properties": {
            "status": {"type": "string", "enum": ["enabled", "disabled"]},
            "storage": {
                "type": "object",
                "properties": {"className": text(true)},
            },
            "networking": {
                "type": "object",
                "properties": {
                    "annotations": {"type": "object", "additionalProperties": text(false)},
                },
            },
            "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        },
    });
    let cluster = json!({
        "type": "object",
        "required": ["name", "dnsName", "argocd"],
        "properties": {
            "name": text(true),
            "stage": text(true),
            "type": {"type": "string", "enum": ["hub", "spoke"]},
            "dnsName": {"type": "string", "format": "hostname", "minLength": 1},
            "ssoOrg": text(true),
            "ssoTeam": text(true),
            "ingressClassName": text(true),
            "privateLoadBalancerIP": {"type": "string", "format": "ipv4"},
            "publicLoadBalancerIP": {"type": "string", "format": "ipv4"},
            "terraform": {
                "type": "object",
                "required": ["projectId", "kubernetesVersion", "dns"],
                "properties": {
                    "provider": text(true),
                    "projectId": text(true),
                    "kubernetesType": {"type": "string", "enum": ["edge", "ske"]},
                    "kubernetesVersion": {"type": "string", "pattern": "^[0-9]\\.[0-9]+(\\.[0-9]+)?$"},
                    "dns": {
                        "type": "object",
                        "required": ["name", "email"],
                        "properties": {
                            "name": {"type": "string", "format": "hostname", "minLength": 1},
                            "email": {"type": "string", "format": "email", "minLength": 1},
                        },
                    },
                },
            },
            "argocd": {
                "type": "object",
                "required": ["repo"],
                "properties": {
                    "repo": {
                        "type": "object",
                        "minProperties": 1,
                        "properties": {"https": repo_type, "oci": repo_type},
                    },
                    "helmRepo": {
                        "type": "object",
                        "required": ["url"],
                        "properties": {"url": text(true)},
                    },
                },
            },
            "services": {"type": "object", "additionalProperties": service},
        },
    });
    json!({
        "type": "object",
        "required": ["clusters"],
        "properties": {
            "version": {"type": "string", "enum": [VERSION]},
            "clusters": {"type": "array", "items": cluster},
        },
    })
}

/// Convert a parsed kubara config. `known_ids` are the service IDs of the catalogs the sets
/// will render with (kubara's canonical names count as well, [`legacy::canonical_name`]).
///
/// # Errors
/// Every problem of the file: wrong shapes, legacy conflicts, unknown keys, values kubara's
/// schema rejects, clusters that share a name.
pub fn convert(doc: &Value, known_ids: &[&str]) -> Result<Imported, ImportError> {
    let fail = |problems: Vec<Problem>| {
        let mut problems = problems;
        problems.sort();
        problems.dedup();
        Err(ImportError { problems })
    };
    let Value::Object(root) = doc else {
        return fail(vec![Problem::new(
            FieldPath::root(),
            format!("must be an object with clusters, not {}", type_name(doc)),
        )]);
    };
    let schema = match ConfigSchema::parse(&config_schema()) {
        Ok(schema) => schema,
        Err(problems) => {
            return fail(
                problems
                    .into_iter()
                    .map(|p| Problem::new(FieldPath::root(), format!("internal schema: {p}")))
                    .collect(),
            );
        }
    };
    if let Some(Value::Array(clusters)) = root.get("clusters")
        && clusters.len() > MAX_CLUSTERS
    {
        return fail(vec![Problem::new(
            "clusters",
            format!(
                "Too many: {}: must have at most {MAX_CLUSTERS} items",
                clusters.len()
            ),
        )]);
    }
    let mut doc = Value::Object(root.clone());
    let mut out = Imported {
        legacy: !root.contains_key("version"),
        ..Imported::default()
    };
    let mut problems = Vec::new();
    if out.legacy {
        migrate_legacy(&mut doc, known_ids, &mut problems, &mut out.notes);
    }
    for removed in prune(&mut doc, Some(schema.structural()), false) {
        problems.push(instance::unknown_field(
            &FieldPath::root(),
            schema.structural(),
            &removed,
        ));
    }
    apply_defaults(&mut doc);
    problems.extend(schema.validate(&doc).iter().map(|e| {
        let mut p = instance::field_problem(&FieldPath::root(), e);
        if p.path == FieldPath::root().key("version") && p.message.starts_with("Unsupported") {
            p.message.push_str(LATER_VERSIONS);
        }
        p
    }));
    let clusters = match doc.get("clusters") {
        Some(Value::Array(clusters)) => clusters.as_slice(),
        _ => &[],
    };
    let mut seen: Vec<&str> = Vec::new();
    for (i, cluster) in clusters.iter().enumerate() {
        let Some(name) = cluster.get("name").and_then(Value::as_str) else {
            continue;
        };
        if seen.contains(&name) {
            problems.push(Problem::new(
                FieldPath::root().key("clusters").index(i).key("name"),
                format!("Duplicate value: \"{name}\": each cluster becomes a ServiceSet and a file of that name"),
            ));
        }
        seen.push(name);
    }
    if !problems.is_empty() {
        return fail(problems);
    }
    for cluster in clusters {
        if let Value::Object(cluster) = cluster {
            out.sets.push(service_set(cluster));
        }
    }
    out.notes.sort();
    Ok(out)
}

/// kubara's `migrateLegacyCluster` over every cluster that is an object.
fn migrate_legacy(
    doc: &mut Value,
    known_ids: &[&str],
    problems: &mut Vec<Problem>,
    notes: &mut Vec<Problem>,
) {
    let Some(Value::Array(clusters)) = doc.get_mut("clusters") else {
        return;
    };
    for (i, cluster) in clusters.iter_mut().enumerate() {
        let Value::Object(cluster) = cluster else {
            continue;
        };
        let at = FieldPath::root().key("clusters").index(i);
        match cluster.get("type") {
            None | Some(Value::Null) => {}
            Some(Value::String(old)) => {
                // kubara's quirk, kept: only "worker" is a spoke; anything else, "spoke"
                // included, becomes "hub".
                let new = if old == "worker" { "spoke" } else { "hub" };
                if old != new {
                    let why = if old == "spoke" {
                        " (in a file without version, kubara reads only \"worker\" as a spoke; add version: v1alpha1 to keep \"spoke\")"
                    } else {
                        ""
                    };
                    notes.push(Problem::new(
                        at.key("type"),
                        format!("legacy type \"{old}\" was migrated to \"{new}\"{why}"),
                    ));
                }
                cluster.insert("type".into(), Value::String(new.into()));
            }
            Some(_) => {
                problems.push(Problem::new(
                    at.key("type"),
                    "cluster.type must be a string",
                ));
                // kubara stops here; the schema need not say it again.
                cluster.shift_remove("type");
            }
        }
        // A `services` that is not an object is the schema's finding (`must be of type object`).
        if let Some(Value::Object(services)) = cluster.get_mut("services") {
            let migration = legacy::migrate(services, &at.key("services"), known_ids);
            problems.extend(migration.errors);
            notes.extend(migration.notes);
        }
    }
}

/// kubara's `applyDefaults`: the `default=` tags fill fields that are missing or empty (Go's
/// zero value), in the structs kubara always has (`Cluster`, `ArgoCD`, the repositories) and in
/// `terraform` when it is given.
fn apply_defaults(doc: &mut Value) {
    fn fill(map: &mut Map<String, Value>, key: &str, default: &str) {
        match map.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.is_empty() => {}
            Some(_) => return,
        }
        map.insert(key.to_owned(), Value::String(default.to_owned()));
    }
    if let Value::Object(root) = doc {
        fill(root, "version", VERSION);
    }
    let Some(Value::Array(clusters)) = doc.get_mut("clusters") else {
        return;
    };
    for cluster in clusters {
        let Value::Object(cluster) = cluster else {
            continue;
        };
        fill(cluster, "stage", "dev");
        fill(cluster, "type", "hub");
        fill(cluster, "ingressClassName", "traefik");
        if let Some(Value::Object(terraform)) = cluster.get_mut("terraform") {
            fill(terraform, "provider", "stackit");
            fill(terraform, "kubernetesType", "ske");
        }
        let Some(Value::Object(repo)) = cluster.get_mut("argocd").and_then(|a| a.get_mut("repo"))
        else {
            continue;
        };
        for proto in repo.values_mut() {
            for side in ["customer", "managed"] {
                if let Some(Value::Object(r)) = proto.get_mut(side) {
                    fill(r, "targetRevision", "main");
                }
            }
        }
    }
}

/// The `ServiceSet` of one checked, defaulted cluster. `spec.cluster` is what kubara's
/// templates see as `.cluster` (every field but `type` and `services`, which are the set's
/// `clusterType` and `services`), plus the keys the built-in standard pattern reads:
/// `repoURL` and `targetRevision` of the managed repository (HTTPS, else OCI) and
/// `chartsPath`, where kubara keeps the charts there.
fn service_set(cluster: &Map<String, Value>) -> (String, Value) {
    let name = cluster
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut context = Map::new();
    for (key, value) in cluster {
        if key != "type" && key != "services" {
            context.insert(key.clone(), value.clone());
        }
    }
    let managed = ["https", "oci"].iter().find_map(|proto| {
        cluster
            .get("argocd")?
            .get("repo")?
            .get(proto)?
            .get("managed")
    });
    if let Some(managed) = managed {
        for (from, to) in [("url", "repoURL"), ("targetRevision", "targetRevision")] {
            if let Some(v) = managed.get(from) {
                context.insert(to.into(), v.clone());
            }
        }
        context.insert("chartsPath".into(), Value::String(CHARTS_PATH.into()));
    }
    let mut services = Map::new();
    if let Some(Value::Object(given)) = cluster.get("services") {
        for (id, service) in given {
            let service = if service.is_null() {
                Value::Object(Map::new())
            } else {
                service.clone()
            };
            services.insert(id.clone(), service);
        }
    }
    let set = json!({
        "apiVersion": format!("{}/v1alpha1", super::definition::SERVICES_GROUP),
        "kind": "ServiceSet",
        "metadata": {"name": name},
        "spec": {
            "clusterType": cluster.get("type").cloned().unwrap_or_else(|| json!("hub")),
            "cluster": context,
            "services": services,
        },
    });
    (name, set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(result: Result<Imported, ImportError>) -> Vec<String> {
        match result {
            Ok(i) => panic!("expected errors, got {i:?}"),
            Err(e) => e.problems.iter().map(ToString::to_string).collect(),
        }
    }

    fn cluster(name: &str) -> Value {
        json!({
            "name": name,
            "dnsName": format!("{name}.example.com"),
            "argocd": {"repo": {"https": {
                "customer": {"url": "https://git.example.com/customer.git"},
                "managed": {"url": "https://git.example.com/managed.git", "targetRevision": "v2"},
            }}},
        })
    }

    #[test]
    fn issue23_schema_is_a_valid_crd_schema() {
        ConfigSchema::parse(&config_schema()).expect("kubara's config schema parses");
    }

    #[test]
    fn issue23_versioned_cluster_becomes_a_service_set() {
        let mut c = cluster("hub-1");
        c["services"] = json!({"cert-manager": {"config": {"clusterIssuer": {"email": "a@b.co"}}}, "loki": null});
        let got = convert(&json!({"version": "v1alpha1", "clusters": [c]}), &[]).expect("ok");
        assert!(!got.legacy);
        assert!(got.notes.is_empty());
        assert_eq!(
            got.sets,
            [(
                "hub-1".to_owned(),
                json!({
                    "apiVersion": "services.krm-catalog.dev/v1alpha1",
                    "kind": "ServiceSet",
                    "metadata": {"name": "hub-1"},
                    "spec": {
                        "clusterType": "hub",
                        "cluster": {
                            "name": "hub-1",
                            "dnsName": "hub-1.example.com",
                            "argocd": {"repo": {"https": {
                                "customer": {"url": "https://git.example.com/customer.git", "targetRevision": "main"},
                                "managed": {"url": "https://git.example.com/managed.git", "targetRevision": "v2"},
                            }}},
                            "stage": "dev",
                            "ingressClassName": "traefik",
                            "repoURL": "https://git.example.com/managed.git",
                            "targetRevision": "v2",
                            "chartsPath": "managed-service-catalog/helm",
                        },
                        "services": {
                            "cert-manager": {"config": {"clusterIssuer": {"email": "a@b.co"}}},
                            "loki": {},
                        },
                    },
                })
            )]
        );
    }

    // kubara TestConfigStore_LoadMigratesLegacyConfig, per cluster, and the `type` migration.
    #[test]
    fn issue23_legacy_file_is_migrated() {
        let mut hub = cluster("hub");
        hub["services"] = json!({
            "certManager": {"clusterIssuer": {"name": "prod"}},
            "kubePrometheusStack": {"storageClassName": "metrics-rwo"},
            "oauth2Proxy": {"ingress": {"annotations": {"foo": "bar"}}},
        });
        let mut worker = cluster("edge");
        worker["type"] = json!("worker");
        let mut spoke = cluster("spoke");
        spoke["type"] = json!("spoke");
        let got = convert(&json!({"clusters": [hub, worker, spoke]}), &[]).expect("ok");
        assert!(got.legacy);
        let spec = |i: usize| &got.sets[i].1["spec"];
        assert_eq!(
            spec(0)["services"],
            json!({
                "cert-manager": {"config": {"clusterIssuer": {"name": "prod"}}},
                "kube-prometheus-stack": {"storage": {"className": "metrics-rwo"}},
                "oauth2-proxy": {"networking": {"annotations": {"foo": "bar"}}},
            })
        );
        assert_eq!(spec(1)["clusterType"], "spoke");
        assert_eq!(spec(2)["clusterType"], "hub");
        let notes: Vec<String> = got.notes.iter().map(ToString::to_string).collect();
        assert!(
            notes.contains(&"clusters[2].type: legacy type \"spoke\" was migrated to \"hub\" (in a file without version, kubara reads only \"worker\" as a spoke; add version: v1alpha1 to keep \"spoke\")".to_owned()),
            "{notes:#?}"
        );
        assert!(notes.contains(
            &"clusters[0].services.certManager: legacy service key \"certManager\" was migrated to \"cert-manager\"".to_owned()
        ));
    }

    #[test]
    fn issue23_versioned_file_is_not_migrated() {
        let mut c = cluster("a");
        c["type"] = json!("worker");
        assert_eq!(
            messages(convert(
                &json!({"version": "v1alpha1", "clusters": [c]}),
                &[]
            )),
            [
                "clusters[0].type: Unsupported value: \"worker\": supported values: \"hub\", \"spoke\""
            ]
        );
    }

    #[test]
    fn issue23_unknown_keys_name_the_path_and_the_near_miss() {
        let mut c = cluster("b");
        c["servces"] = json!({});
        c["argocd"]["repo"]["https"]["managed"]["targetRevison"] = json!("x");
        let mut s = cluster("a");
        s["services"] = json!({"traefik": {"storageClassName": "x"}});
        assert_eq!(
            messages(convert(
                &json!({"version": "v1alpha1", "clusters": [s, c], "clustrs": []}),
                &[]
            )),
            [
                "clusters[0].services.traefik.storageClassName: unknown field \"clusters[0].services.traefik.storageClassName\"",
                "clusters[1].argocd.repo.https.managed.targetRevison: unknown field \"clusters[1].argocd.repo.https.managed.targetRevison\" (did you mean \"targetRevision\"?)",
                "clusters[1].servces: unknown field \"clusters[1].servces\" (did you mean \"services\"?)",
                "clustrs: unknown field \"clustrs\" (did you mean \"clusters\"?)",
            ]
        );
    }

    // kubara TestConfigStore_Validate's rejections, in the run's (kube-openapi's) words.
    #[test]
    fn issue23_values_kubara_rejects() {
        let mut bad = cluster("");
        bad["dnsName"] = json!("not a host");
        bad["privateLoadBalancerIP"] = json!("not-an-ip");
        bad["publicLoadBalancerIP"] = json!("999.999.999.999");
        bad["terraform"] = json!({"projectId": "", "kubernetesVersion": "v1.34", "dns": {"name": "x.example", "email": "nope"}});
        bad["services"] = json!({"loki": {"status": "on", "storage": {"className": ""}}});
        let got = messages(convert(
            &json!({"version": "v1alpha2", "clusters": [bad]}),
            &[],
        ));
        assert_eq!(
            got,
            [
                "clusters[0].dnsName: Invalid value: \"not a host\": clusters[0].dnsName in body must be of type hostname: \"not a host\"",
                "clusters[0].name: Invalid value: \"\": clusters[0].name in body should be at least 1 chars long",
                "clusters[0].privateLoadBalancerIP: Invalid value: \"not-an-ip\": clusters[0].privateLoadBalancerIP in body must be of type ipv4: \"not-an-ip\"",
                "clusters[0].publicLoadBalancerIP: Invalid value: \"999.999.999.999\": clusters[0].publicLoadBalancerIP in body must be of type ipv4: \"999.999.999.999\"",
                "clusters[0].services.loki.status: Unsupported value: \"on\": supported values: \"enabled\", \"disabled\"",
                "clusters[0].services.loki.storage.className: Invalid value: \"\": clusters[0].services.loki.storage.className in body should be at least 1 chars long",
                "clusters[0].terraform.dns.email: Invalid value: \"nope\": clusters[0].terraform.dns.email in body must be of type email: \"nope\"",
                "clusters[0].terraform.kubernetesVersion: Invalid value: \"v1.34\": clusters[0].terraform.kubernetesVersion in body should match '^[0-9]\\.[0-9]+(\\.[0-9]+)?$'",
                "clusters[0].terraform.projectId: Invalid value: \"\": clusters[0].terraform.projectId in body should be at least 1 chars long",
                "version: Unsupported value: \"v1alpha2\": supported values: \"v1alpha1\" (krm-catalog imports the config of kubara's ADR-0002 releases, v1alpha1 or without version; kubara's later formats are not read yet)",
            ]
        );
    }

    #[test]
    fn issue23_required_and_shapes() {
        let got = messages(convert(
            &json!({"version": "v1alpha1", "clusters": [{"name": "a", "argocd": {"repo": {}}}, "x"]}),
            &[],
        ));
        assert_eq!(
            got,
            [
                "clusters[0].argocd.repo: Invalid value: 0: clusters[0].argocd.repo in body should have at least 1 properties",
                "clusters[0].dnsName: Required value",
                "clusters[1]: Invalid value: \"string\": clusters[1] in body must be of type object: \"string\"",
            ]
        );
        assert_eq!(
            messages(convert(&json!([1]), &[])),
            ["must be an object with clusters, not array"]
        );
    }

    #[test]
    fn issue23_legacy_conflicts_and_duplicate_names() {
        let mut a = cluster("a");
        a["services"] = json!({"certManager": {}, "cert-manager": {}});
        a["type"] = json!(3);
        let b = cluster("a");
        assert_eq!(
            messages(convert(&json!({"clusters": [a, b]}), &[])),
            [
                "clusters[0].services: has conflicting keys \"certManager\" and \"cert-manager\" for canonical service \"cert-manager\"",
                "clusters[0].type: cluster.type must be a string",
                "clusters[1].name: Duplicate value: \"a\": each cluster becomes a ServiceSet and a file of that name",
            ]
        );
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Values shaped like kubara configs (the keys it knows, some it does not, any type).
    fn value() -> impl Strategy<Value = Value> {
        let key = prop::sample::select(vec![
            "version",
            "clusters",
            "name",
            "type",
            "services",
            "status",
            "config",
            "argocd",
            "repo",
            "https",
            "oci",
            "managed",
            "url",
            "storageClassName",
            "ingress",
            "annotations",
            "clusterIssuer",
            "certManager",
            "cert-manager",
            "terraform",
            "x",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            prop::sample::select(vec![
                "hub",
                "worker",
                "spoke",
                "",
                "v1alpha1",
                "enabled",
                "a.example.com"
            ])
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..6).prop_map(|kv| {
                    Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        /// No input panics the conversion; what it accepts is one object per cluster.
        #[test]
        fn issue23_no_config_panics_the_import(doc in value()) {
            if let Ok(imported) = convert(&doc, &["velero"]) {
                for (_, set) in imported.sets {
                    prop_assert_eq!(&set["kind"], "ServiceSet");
                }
            }
        }
    }
}

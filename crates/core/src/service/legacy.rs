//! Legacy shapes of kubara service configs, migrated with kubara's rules and conflict errors
//! (ADR-0002 era `migrateLegacyConfig`): camelCase service keys, `storageClassName`,
//! `ingress.annotations` and cert-manager's top-level `clusterIssuer`.

use serde_json::{Map, Value};

use crate::diagnostics::FieldPath;
use crate::strict::Problem;

/// kubara's alias table (`legacy_aliases.go`): canonical names map to themselves.
const ALIASES: &[(&str, &str)] = &[
    ("argocd", "argocd"),
    ("cert-manager", "cert-manager"),
    ("external-dns", "external-dns"),
    ("external-secrets", "external-secrets"),
    ("homer-dashboard", "homer-dashboard"),
    ("kube-prometheus-stack", "kube-prometheus-stack"),
    ("kyverno", "kyverno"),
    ("kyverno-policies", "kyverno-policies"),
    ("kyverno-policy-reporter", "kyverno-policy-reporter"),
    ("loki", "loki"),
    ("longhorn", "longhorn"),
    ("metallb", "metallb"),
    ("metrics-server", "metrics-server"),
    ("oauth2-proxy", "oauth2-proxy"),
    ("traefik", "traefik"),
    ("certmanager", "cert-manager"),
    ("externaldns", "external-dns"),
    ("externalsecrets", "external-secrets"),
    ("kubeprometheusstack", "kube-prometheus-stack"),
    ("kyvernopolicies", "kyverno-policies"),
    ("kyvernopolicyreport", "kyverno-policy-reporter"),
    ("homerdashboard", "homer-dashboard"),
    ("oauth2proxy", "oauth2-proxy"),
    ("metricsserver", "metrics-server"),
    ("metalb", "metallb"),
    ("metallb-old", "metallb"),
    ("metallb_legacy", "metallb"),
    ("metal-lb", "metallb"),
    ("metalLb", "metallb"),
];

/// kubara's `CanonicalServiceName`: exact alias, then lower-case alias, else the trimmed key.
/// Service IDs of the loaded catalogs count as canonical names too.
pub fn canonical_name(key: &str, known_ids: &[&str]) -> String {
    let lookup = |k: &str| {
        ALIASES
            .iter()
            .find(|(a, _)| *a == k)
            .map(|(_, c)| (*c).to_owned())
            .or_else(|| {
                known_ids
                    .iter()
                    .find(|id| **id == k)
                    .map(|id| (*id).to_owned())
            })
    };
    let trimmed = key.trim();
    lookup(trimmed)
        .or_else(|| lookup(&trimmed.to_lowercase()))
        .unwrap_or_else(|| trimmed.to_owned())
}

/// What a migration did: errors (conflicts, wrong shapes) and notes (each rewrite made).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Migration {
    /// Conflicts and wrong shapes; the set is not usable.
    pub errors: Vec<Problem>,
    /// One note per rewrite, so users can update their files.
    pub notes: Vec<Problem>,
}

/// Migrate a `ServiceSet`'s `spec.services` map in place. `path` is its field path.
pub fn migrate(
    services: &mut Map<String, Value>,
    path: &FieldPath,
    known_ids: &[&str],
) -> Migration {
    let mut out = Migration::default();
    let mut renamed: Map<String, Value> = Map::new();
    let mut origin: Vec<(String, String)> = Vec::new();
    for (key, value) in std::mem::take(services) {
        let canonical = canonical_name(&key, known_ids);
        if let Some((first, _)) = origin.iter().find(|(_, c)| *c == canonical) {
            out.errors.push(Problem::new(
                path,
                format!("has conflicting keys \"{first}\" and \"{key}\" for canonical service \"{canonical}\""),
            ));
            continue;
        }
        if canonical != key {
            out.notes.push(Problem::new(
                path.key(&key),
                format!("legacy service key \"{key}\" was migrated to \"{canonical}\""),
            ));
        }
        origin.push((key, canonical.clone()));
        renamed.insert(canonical, value);
    }
    for (id, value) in &mut renamed {
        let Value::Object(service) = value else {
            continue;
        };
        let ctx = path.key(id);
        if id == "cert-manager" {
            move_into(
                service,
                &ctx,
                "clusterIssuer",
                "config",
                "clusterIssuer",
                &mut out,
            );
        }
        if id == "kube-prometheus-stack" || id == "loki" {
            move_into(
                service,
                &ctx,
                "storageClassName",
                "storage",
                "className",
                &mut out,
            );
        }
        migrate_ingress(service, &ctx, &mut out);
    }
    *services = renamed;
    out
}

/// Move `service[legacy]` to `service[parent][child]`, creating `parent` when absent or null.
fn move_into(
    service: &mut Map<String, Value>,
    ctx: &FieldPath,
    legacy: &str,
    parent: &str,
    child: &str,
    out: &mut Migration,
) {
    let Some(value) = service.get(legacy).cloned() else {
        return;
    };
    match service.get_mut(parent) {
        None | Some(Value::Null) => {
            service.insert(parent.to_owned(), Value::Object(Map::new()));
        }
        Some(Value::Object(_)) => {}
        Some(_) => {
            out.errors.push(Problem::new(
                ctx.key(parent),
                format!("{parent} must be an object"),
            ));
            return;
        }
    }
    let Some(Value::Object(target)) = service.get_mut(parent) else {
        return;
    };
    if target.contains_key(child) {
        out.errors.push(Problem::new(
            ctx,
            format!("has both legacy {legacy} and {parent}.{child}"),
        ));
        return;
    }
    target.insert(child.to_owned(), value);
    service.shift_remove(legacy);
    out.notes.push(Problem::new(
        ctx.key(legacy),
        format!("legacy {legacy} was migrated to {parent}.{child}"),
    ));
}

fn migrate_ingress(service: &mut Map<String, Value>, ctx: &FieldPath, out: &mut Migration) {
    let Some(ingress) = service.get("ingress") else {
        return;
    };
    let Value::Object(ingress) = ingress.clone() else {
        out.errors.push(Problem::new(
            ctx.key("ingress"),
            "ingress must be an object",
        ));
        return;
    };
    let Some(annotations) = ingress.get("annotations").cloned() else {
        return;
    };
    match service.get("networking") {
        None | Some(Value::Null) => {
            service.insert("networking".into(), Value::Object(Map::new()));
        }
        Some(Value::Object(n)) if n.contains_key("annotations") => {
            out.errors.push(Problem::new(
                ctx,
                "has both legacy ingress.annotations and networking.annotations",
            ));
            return;
        }
        Some(Value::Object(_)) => {}
        Some(_) => {
            out.errors.push(Problem::new(
                ctx.key("networking"),
                "networking must be an object",
            ));
            return;
        }
    }
    if let Some(Value::Object(networking)) = service.get_mut("networking") {
        networking.insert("annotations".into(), annotations);
    }
    let mut rest = ingress;
    rest.shift_remove("annotations");
    if rest.is_empty() {
        service.shift_remove("ingress");
    } else {
        service.insert("ingress".into(), Value::Object(rest));
    }
    out.notes.push(Problem::new(
        ctx.key("ingress"),
        "legacy ingress.annotations was migrated to networking.annotations",
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(services: Value) -> (Value, Migration) {
        let Value::Object(mut map) = services else {
            panic!("object")
        };
        let m = migrate(&mut map, &FieldPath::parse("spec.services"), &["velero"]);
        (Value::Object(map), m)
    }

    #[test]
    fn canonical_names() {
        assert_eq!(canonical_name("certManager", &[]), "cert-manager");
        assert_eq!(canonical_name("metalLb", &[]), "metallb");
        assert_eq!(canonical_name("external-dns", &[]), "external-dns");
        assert_eq!(canonical_name("Velero", &["velero"]), "velero");
        assert_eq!(canonical_name(" custom ", &[]), "custom");
    }

    // kubara TestConfigStore_LoadMigratesLegacyConfig
    #[test]
    fn migrates_legacy_config() {
        let (out, m) = run(json!({
            "certManager": {"status": "enabled", "clusterIssuer": {"name": "prod", "email": "a@b.c", "server": "https://x"}},
            "kubePrometheusStack": {"storageClassName": "metrics-rwo"},
            "loki": {"storageClassName": "logs-rwo"},
            "oauth2Proxy": {"ingress": {"annotations": {"foo": "bar"}}},
        }));
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        assert_eq!(
            out,
            json!({
                "cert-manager": {"status": "enabled", "config": {"clusterIssuer": {"name": "prod", "email": "a@b.c", "server": "https://x"}}},
                "kube-prometheus-stack": {"storage": {"className": "metrics-rwo"}},
                "loki": {"storage": {"className": "logs-rwo"}},
                "oauth2-proxy": {"networking": {"annotations": {"foo": "bar"}}},
            })
        );
        assert_eq!(m.notes.len(), 7);
    }

    // kubara TestConfigStore_LoadRejectsLegacyMigrationConflicts
    #[test]
    fn rejects_conflicts() {
        let cases = [
            (
                json!({"certManager": {}, "cert-manager": {}}),
                "has conflicting keys \"certManager\" and \"cert-manager\" for canonical service \"cert-manager\"",
            ),
            (
                json!({"cert-manager": {"clusterIssuer": {}, "config": {"clusterIssuer": {}}}}),
                "has both legacy clusterIssuer and config.clusterIssuer",
            ),
            (
                json!({"loki": {"storageClassName": "a", "storage": {"className": "b"}}}),
                "has both legacy storageClassName and storage.className",
            ),
            (
                json!({"oauth2Proxy": {"ingress": {"annotations": {}}, "networking": {"annotations": {}}}}),
                "has both legacy ingress.annotations and networking.annotations",
            ),
            (
                json!({"cert-manager": {"clusterIssuer": {}, "config": "x"}}),
                "config must be an object",
            ),
            (
                json!({"traefik": {"ingress": "x"}}),
                "ingress must be an object",
            ),
        ];
        for (input, message) in cases {
            let (_, m) = run(input);
            assert_eq!(
                m.errors
                    .iter()
                    .map(|p| p.message.as_str())
                    .collect::<Vec<_>>(),
                [message]
            );
        }
    }

    #[test]
    fn storage_class_name_only_moves_for_kubara_services() {
        let (out, m) = run(json!({"traefik": {"storageClassName": "x"}}));
        assert!(m.errors.is_empty());
        assert_eq!(out, json!({"traefik": {"storageClassName": "x"}}));
    }

    #[test]
    fn ingress_keeps_other_keys() {
        let (out, _) =
            run(json!({"traefik": {"ingress": {"annotations": {"a": "b"}, "host": "h"}}}));
        assert_eq!(
            out,
            json!({"traefik": {"ingress": {"host": "h"}, "networking": {"annotations": {"a": "b"}}}})
        );
    }
}

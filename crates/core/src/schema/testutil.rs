//! Fixtures shared by the schema unit tests (they build schemas through the public API).

use serde_json::{Value, json};

use super::{ConfigSchema, SchemaProblem};

pub(super) fn problems(raw: &Value) -> Vec<SchemaProblem> {
    ConfigSchema::parse(raw).err().unwrap_or_default()
}

/// A root object schema with the given properties.
#[allow(clippy::needless_pass_by_value)] // callers pass json! literals
pub(super) fn obj(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

/// Problems of a schema with one property `a`.
#[allow(clippy::needless_pass_by_value)] // callers pass json! literals
pub(super) fn field_problems(a: Value) -> Vec<SchemaProblem> {
    problems(&obj(json!({"a": a})))
}

#[track_caller]
pub(super) fn assert_problem(found: &[SchemaProblem], path: &str, needle: &str) {
    assert!(
        found
            .iter()
            .any(|p| p.path == path && p.message.contains(needle)),
        "no problem at {path:?} containing {needle:?} in {found:#?}"
    );
}

pub(super) fn parsed(raw: &Value) -> ConfigSchema {
    match ConfigSchema::parse(raw) {
        Ok(c) => c,
        Err(p) => panic!("unexpected problems: {p:#?}"),
    }
}

pub(super) fn errors(schema: &Value, instance: &Value) -> Vec<String> {
    parsed(schema)
        .validate(instance)
        .iter()
        .map(ToString::to_string)
        .collect()
}

// --- Corpus: kubara-io/catalogs@e383e84 general/services/*.yaml configSchema, as written there ---

pub(super) fn corpus_cert_manager() -> Value {
    json!({
        "type": "object",
        "required": ["clusterIssuer"],
        "properties": {"clusterIssuer": {
            "type": "object",
            "default": {},
            "required": ["name", "email", "server"],
            "properties": {
                "name": {"type": "string", "default": "letsencrypt-staging", "minLength": 1},
                "email": {"type": "string", "format": "email", "default": "yourname@your-domain.de"},
                "server": {"type": "string", "format": "uri", "default": "https://acme-staging-v02.api.letsencrypt.org/directory"}
            }
        }}
    })
}

pub(super) fn corpus_velero() -> Value {
    json!({
        "type": "object",
        "properties": {
            "backupMode": {"type": "string", "default": "fs-backup", "enum": ["fs-backup", "csi-snapshot", "csi-data-mover"],
                "description": "Volume backup strategy. fs-backup uses file-system backups via the node agent. csi-snapshot uses CSI snapshots. csi-data-mover uses CSI snapshots and moves snapshot data to object storage."},
            "backupStorage": {"type": "object", "default": {},
                "description": "Backup storage configuration. Set create to true to let kubara create the backup bucket and credentials where supported. Set create to false to use an existing S3-compatible bucket. Set s3Url explicitly to the S3-compatible endpoint Velero should use.",
                "properties": {
                    "create": {"type": "boolean", "default": true},
                    "bucketName": {"type": "string", "minLength": 1},
                    "region": {"type": "string", "default": "eu01", "minLength": 1},
                    "s3Url": {"type": "string", "format": "uri", "description": "S3-compatible endpoint URL used by Velero. Must be set when Velero is enabled."}
                }}
        }
    })
}

pub(super) fn corpus_metallb() -> Value {
    json!({
        "type": "object",
        "required": ["publicLoadBalancerIPs", "loadBalancerAddressPool"],
        "properties": {
            "publicLoadBalancerIPs": {"type": "string",
                "description": "Specifies a comma-separated list of IPs to be used for public DNS record targets https://kubernetes-sigs.github.io/external-dns/latest/docs/annotations/annotations/#external-dnsalphakubernetesiotarget"},
            "loadBalancerAddressPool": {"type": "array", "items": {"type": "string"},
                "description": "MetalLB will allocate IPs from any configured address pool with free addresses. https://metallb.universe.tf/configuration/_advanced_ipaddresspool_configuration/"}
        }
    })
}

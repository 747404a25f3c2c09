//! Group, version and kind: how items are matched to catalog entries.

use std::fmt;

/// A Kubernetes group/version/kind. The core group is the empty string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gvk {
    /// API group, empty for the core group.
    pub group: String,
    /// API version within the group.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl Gvk {
    /// Build from parts.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    /// Build from an `apiVersion` string and a kind.
    pub fn from_api_version(api_version: &str, kind: &str) -> Self {
        let (group, version) = split_api_version(api_version);
        Self::new(group, version, kind)
    }

    /// The `apiVersion` string: `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

impl fmt::Display for Gvk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.api_version(), self.kind)
    }
}

/// Split `group/version` (or a bare core `version`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    }
}

/// Whether `s` is a DNS-1123 subdomain (what Kubernetes accepts as an API group).
pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// Whether `s` is a DNS-1123 label.
pub fn is_dns_label(s: &str) -> bool {
    let bytes = s.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// `cert-manager` → `CertManager`: the kind a service ID is exposed as by default.
pub fn pascal_case(id: &str) -> String {
    id.split(['-', '_', '.'])
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions_split_on_the_last_slash() {
        assert_eq!(Gvk::from_api_version("v1", "ConfigMap").group, "");
        let g = Gvk::from_api_version("services.krm-catalog.dev/v1alpha1", "CertManager");
        assert_eq!(
            (g.group.as_str(), g.version.as_str()),
            ("services.krm-catalog.dev", "v1alpha1")
        );
        assert_eq!(
            g.to_string(),
            "services.krm-catalog.dev/v1alpha1/CertManager"
        );
    }

    #[test]
    fn pascal_case_of_service_ids() {
        assert_eq!(pascal_case("cert-manager"), "CertManager");
        assert_eq!(pascal_case("kube-prometheus-stack"), "KubePrometheusStack");
        assert_eq!(pascal_case("oauth2-proxy"), "Oauth2Proxy");
        assert_eq!(pascal_case("argocd"), "Argocd");
    }
}

//! The apiserver's rules for `metadata.name` and `metadata.namespace`, so a generated object
//! the cluster would refuse fails here instead of at apply time.
//!
//! Ported from k8s.io/apimachinery `pkg/util/validation/validation.go` (`IsDNS1123Label`,
//! `IsDNS1123Subdomain`, `IsDNS1035Label`), `pkg/api/validation/generic.go` (`NameIsDNSLabel`,
//! `NameIsDNSSubdomain`, `NameIsDNS1035Label`, `ValidateNamespaceName`) and
//! `pkg/api/validation/path/name.go` (`IsValidPathSegmentName`). Which rule a kind gets is
//! from k8s.io/kubernetes `pkg/apis/core/validation` (`ValidateNamespaceName` for Namespace,
//! `ValidateServiceName` = DNS-1035 label), `pkg/apis/rbac/validation` (`ValidateRBACName` =
//! path segment) and apiextensions-apiserver `pkg/registry/customresource/validator.go`
//! (custom resources: `NameIsDNSSubdomain`); everything else is a DNS-1123 subdomain.

/// The rule a name is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// `IsDNS1123Label`.
    Dns1123Label,
    /// `IsDNS1123Subdomain`.
    Dns1123Subdomain,
    /// `IsDNS1035Label`.
    Dns1035Label,
    /// `IsValidPathSegmentName`.
    PathSegment,
}

impl Rule {
    /// The rule the apiserver applies to `metadata.name` of `kind` in API group `group`.
    pub fn for_name(group: &str, kind: &str) -> Self {
        match (group, kind) {
            ("", "Namespace") => Self::Dns1123Label,
            ("", "Service") => Self::Dns1035Label,
            ("rbac.authorization.k8s.io", _) => Self::PathSegment,
            _ => Self::Dns1123Subdomain,
        }
    }

    /// What the rule asks for, in the words of the upstream messages.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Dns1123Label => {
                "a DNS-1123 label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)"
            }
            Self::Dns1123Subdomain => {
                "a DNS-1123 subdomain (at most 253 lowercase letters, digits, '-' and '.', each part starting and ending with a letter or digit)"
            }
            Self::Dns1035Label => {
                "a DNS-1035 label (at most 63 lowercase letters, digits and '-', starting with a letter and ending with a letter or digit)"
            }
            Self::PathSegment => "a path segment name (not \".\" or \"..\", without '/' and '%')",
        }
    }

    /// Whether `value` passes.
    pub fn accepts(self, value: &str) -> bool {
        match self {
            Self::Dns1123Label => is_dns1123_label(value),
            Self::Dns1123Subdomain => is_dns1123_subdomain(value),
            Self::Dns1035Label => is_dns1035_label(value),
            Self::PathSegment => is_path_segment_name(value),
        }
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` without the length limit.
fn label_shape(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// `IsDNS1123Label`: at most 63 characters.
pub fn is_dns1123_label(s: &str) -> bool {
    s.len() <= 63 && label_shape(s)
}

/// `IsDNS1123Subdomain`: labels joined by dots, at most 253 characters in all (the parts
/// have no limit of their own, unlike DNS).
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(label_shape)
}

/// `IsDNS1035Label`: a DNS-1123 label that starts with a letter.
pub fn is_dns1035_label(s: &str) -> bool {
    is_dns1123_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

/// `IsValidPathSegmentName`: the name is a URL path segment of the API.
pub fn is_path_segment_name(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '%'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_as_upstream_tests_them() {
        // Cases from apimachinery pkg/util/validation/validation_test.go.
        for good in [
            "a",
            "ab",
            "abc",
            "a1",
            "a-1",
            "a--1--2--b",
            "0",
            "01",
            "1-2",
        ] {
            assert!(is_dns1123_label(good), "{good}");
        }
        for bad in [
            "", "A", "ABC", "aBc", "A1", "a_1", "a.1", "a 1", "-1", "a-", "_",
        ] {
            assert!(!is_dns1123_label(bad), "{bad}");
        }
        assert!(!is_dns1123_label(&"a".repeat(64)));
        for good in [
            "a.b.c",
            "1.2.3",
            "a-1.b-2",
            &format!("{}.b", "a".repeat(70)),
        ] {
            assert!(is_dns1123_subdomain(good), "{good}");
        }
        for bad in [
            "Hub_1-metrics-server",
            "a..b",
            ".a",
            "a.",
            "a-.b",
            &"a".repeat(254),
        ] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
        assert!(is_dns1035_label("a-1"));
        assert!(!is_dns1035_label("1-a"));
        assert!(is_path_segment_name("system:controller:x"));
        for bad in ["", ".", "..", "a/b", "a%2F"] {
            assert!(!is_path_segment_name(bad), "{bad}");
        }
    }

    #[test]
    fn kinds_get_the_apiservers_rule() {
        assert_eq!(Rule::for_name("", "Namespace"), Rule::Dns1123Label);
        assert_eq!(Rule::for_name("", "Service"), Rule::Dns1035Label);
        assert_eq!(
            Rule::for_name("rbac.authorization.k8s.io", "ClusterRole"),
            Rule::PathSegment
        );
        assert_eq!(
            Rule::for_name("argoproj.io", "Application"),
            Rule::Dns1123Subdomain
        );
        assert_eq!(Rule::for_name("", "ConfigMap"), Rule::Dns1123Subdomain);
    }
}

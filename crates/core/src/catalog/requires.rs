//! `spec.requires.krmCatalog` of a catalog document (kubara `Catalog`, KEP `Catalog`): the
//! versions of krm-catalog that can read the catalog, as a semver range (issue 23). A binary
//! outside the range refuses the catalog and names the version to install, instead of failing
//! later on a field it does not know.
//!
//! Ranges are read by the `semver` crate (`VersionReq`, Cargo's syntax: `>=0.2.0`,
//! `>=0.2, <0.4`, `^0.2`, `~0.2.1`, `0.2.*`; a bare `0.2.0` means `^0.2.0`).

use serde_json::Value;

use crate::diagnostics::FieldPath;
use crate::strict::{Problem, Reader};

/// The version of this binary (the workspace version; core and the CLI share it).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The longest range read (ranges are a comparison or two).
const MAX_RANGE_LEN: usize = 256;

/// Check `spec.requires` of a catalog document's `spec` against this binary.
pub fn check(spec: &Value, problems: &mut Vec<Problem>) {
    check_against(spec, VERSION, problems);
}

/// [`check`] against a given binary version (tests).
pub fn check_against(spec: &Value, version: &str, problems: &mut Vec<Problem>) {
    let Some(requires) = spec.get("requires") else {
        return;
    };
    let mut r = Reader::new(requires, "spec.requires", problems);
    r.deny_unknown(&["krmCatalog"]);
    let Some(range) = r.string("krmCatalog") else {
        return;
    };
    let path = FieldPath::parse("spec.requires.krmCatalog");
    if range.len() > MAX_RANGE_LEN {
        problems.push(Problem::new(
            path,
            format!("a range of at most {MAX_RANGE_LEN} characters"),
        ));
        return;
    }
    let req = match semver::VersionReq::parse(&range) {
        Ok(req) => req,
        Err(e) => {
            problems.push(Problem::new(
                path,
                format!(
                    "\"{range}\" is not a semver range ({e}); write e.g. \">=0.2.0\" or \">=0.2, <0.4\""
                ),
            ));
            return;
        }
    };
    let Ok(current) = semver::Version::parse(version) else {
        return;
    };
    if req.matches(&current) {
        return;
    }
    let install = lowest_match(&req, &current).map_or_else(
        || format!("a krm-catalog release that satisfies \"{range}\""),
        |v| format!("krm-catalog {v} or later"),
    );
    problems.push(Problem::new(
        path,
        format!(
            "this catalog requires krm-catalog {range}, but this is krm-catalog {version}: install {install}"
        ),
    ));
}

/// The lowest version above `current` the range admits, among the versions its comparators
/// name (a `>` comparator admits the next one), if any.
fn lowest_match(req: &semver::VersionReq, current: &semver::Version) -> Option<semver::Version> {
    use semver::{Op, Prerelease, Version};
    req.comparators
        .iter()
        .map(|c| {
            let mut v = Version::new(c.major, c.minor.unwrap_or(0), c.patch.unwrap_or(0));
            v.pre = c.pre.clone();
            if c.op == Op::Greater {
                v.pre = Prerelease::EMPTY;
                match (c.minor, c.patch) {
                    (None, _) => v = Version::new(c.major.saturating_add(1), 0, 0),
                    (Some(m), None) => v = Version::new(c.major, m.saturating_add(1), 0),
                    (Some(_), Some(p)) => v.patch = p.saturating_add(1),
                }
            }
            v
        })
        .filter(|v| v > current && req.matches(v))
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(range: &str, version: &str) -> Vec<String> {
        let mut problems = Vec::new();
        check_against(
            &json!({"requires": {"krmCatalog": range}}),
            version,
            &mut problems,
        );
        problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect()
    }

    #[test]
    fn issue23_requires_names_the_version_to_install() {
        assert!(messages(">=0.1.0", "0.1.0").is_empty());
        assert!(messages(">=0.1, <0.3", "0.2.5").is_empty());
        assert_eq!(
            messages(">=0.2.0", "0.1.0"),
            [
                "spec.requires.krmCatalog: this catalog requires krm-catalog >=0.2.0, but this is krm-catalog 0.1.0: install krm-catalog 0.2.0 or later"
            ]
        );
        assert_eq!(
            messages(">0.2", "0.1.0")[0],
            "spec.requires.krmCatalog: this catalog requires krm-catalog >0.2, but this is krm-catalog 0.1.0: install krm-catalog 0.3.0 or later"
        );
        assert_eq!(
            messages("^1.2.3", "0.9.0")[0],
            "spec.requires.krmCatalog: this catalog requires krm-catalog ^1.2.3, but this is krm-catalog 0.9.0: install krm-catalog 1.2.3 or later"
        );
        // Only older releases fit: no "or later" to promise.
        assert_eq!(
            messages("<0.1.0", "0.2.0")[0],
            "spec.requires.krmCatalog: this catalog requires krm-catalog <0.1.0, but this is krm-catalog 0.2.0: install a krm-catalog release that satisfies \"<0.1.0\""
        );
    }

    #[test]
    fn issue23_an_invalid_range_is_a_clear_error() {
        let m = messages(">= zero", "0.1.0");
        assert_eq!(m.len(), 1);
        assert!(
            m[0].starts_with("spec.requires.krmCatalog: \">= zero\" is not a semver range ("),
            "{m:?}"
        );
        let mut problems = Vec::new();
        check_against(
            &json!({"requires": {"krmcatalog": ">=1"}}),
            "0.1.0",
            &mut problems,
        );
        assert!(
            problems[0].message.contains("did you mean \"krmCatalog\""),
            "{problems:?}"
        );
        let mut problems = Vec::new();
        check_against(
            &json!({"requires": {"krmCatalog": 2}}),
            "0.1.0",
            &mut problems,
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
    }
}

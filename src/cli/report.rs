//! What `catalog lint` and `catalog verify` found, as the documents `-o yaml` and `-o json`
//! print (issue 22): one per command, every field always there (absent values `null`, absent
//! lists `[]`), the field names stable (docs/reference/commands.md).

use serde::Serialize;

use crate::catalog::{Catalog, CatalogError};
use crate::functions::lock::Check;

/// One problem of a catalog: where it is and what is wrong.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Finding {
    /// The catalog it is in, as lint names it (`catalog ./team`, `built-in catalog`).
    source: String,
    /// The file in that catalog, relative to its root.
    file: Option<String>,
    /// The field or schema path in that file.
    path: Option<String>,
    /// What is wrong.
    message: String,
}

impl Finding {
    fn of(e: &CatalogError) -> Self {
        Self {
            source: e.source.clone(),
            file: e.file.clone(),
            path: Some(e.path.to_string()).filter(|p| !p.is_empty()),
            message: e.message.clone(),
        }
    }
}

/// Errors and warnings, each list in the order found.
#[derive(Debug, Default, Serialize)]
pub(super) struct Findings {
    errors: Vec<Finding>,
    warnings: Vec<Finding>,
}

impl Findings {
    fn push(&mut self, e: &CatalogError) {
        if e.is_warning() {
            self.warnings.push(Finding::of(e));
        } else {
            self.errors.push(Finding::of(e));
        }
    }

    /// Problems split by severity.
    pub(super) fn of(problems: &[CatalogError]) -> Self {
        let mut findings = Self::default();
        for e in problems {
            findings.push(e);
        }
        findings
    }
}

/// `catalog lint -o yaml|json`: every catalog linted, in the order given.
#[derive(Debug, Default, Serialize)]
pub(super) struct LintReport {
    /// No catalog has an error (lint exits 0).
    ok: bool,
    catalogs: Vec<CatalogLint>,
}

impl LintReport {
    /// Add a catalog's report.
    pub(super) fn push(&mut self, catalog: CatalogLint) {
        self.catalogs.push(catalog);
        self.ok = self.catalogs.iter().all(|c| c.ok);
    }
}

/// What lint found in one catalog.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CatalogLint {
    /// The path (or Git source) as given on the command line.
    path: String,
    /// How problems name the catalog (`catalog ./team`).
    source: String,
    /// No error in it or in any of its services.
    ok: bool,
    /// How many services, function kinds and templates it has.
    counts: Counts,
    /// Its services, each with its problems (in its file, or naming it: the renders of its
    /// templates, its examples and patches).
    services: Vec<ServiceLint>,
    /// The problems that are about no one service (the catalog's layout, its templates, its
    /// function kinds).
    #[serde(flatten)]
    findings: Findings,
}

/// What lint found about one service.
#[derive(Debug, Serialize)]
pub(super) struct ServiceLint {
    /// The service ID.
    id: String,
    /// `group/version/Kind`.
    kind: String,
    /// Its ServiceDefinition's file in the catalog.
    file: Option<String>,
    /// No error.
    ok: bool,
    #[serde(flatten)]
    findings: Findings,
}

/// The counts of a linted catalog: services, function kinds, templates.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Counts {
    pub(super) services: usize,
    pub(super) function_kinds: usize,
    pub(super) templates: usize,
}

impl CatalogLint {
    /// The report of one catalog: `services` those linted (by index in the merged catalog),
    /// `problems` all lint found, each under the service whose file it is in, if any;
    /// `extra` warnings lint adds about the catalog as a whole.
    pub(super) fn new(
        path: &str,
        source: &str,
        catalog: &Catalog,
        services: &[usize],
        problems: &[CatalogError],
        counts: Counts,
    ) -> Self {
        let mut linted: Vec<ServiceLint> = services
            .iter()
            .filter_map(|&i| catalog.services().get(i))
            .map(|s| ServiceLint {
                id: s.definition.id.clone(),
                kind: s.definition.gvk.to_string(),
                file: s.file.clone(),
                ok: true,
                findings: Findings::default(),
            })
            .collect();
        let mut findings = Findings::default();
        for e in problems {
            // A problem of the service's catalog is that service's when it is in the service's
            // file, else when it names the service as lint names it, `"ID"` (a render of its
            // templates, its examples, its patches): the first service that fits.
            let of = |s: &crate::catalog::Service, in_file: bool| {
                catalog.bundle_of(s).origin.label() == e.source
                    && if in_file {
                        s.file.is_some() && s.file == e.file
                    } else {
                        e.message.contains(&format!("\"{}\"", s.definition.id))
                    }
            };
            let owner = [true, false].into_iter().find_map(|in_file| {
                services
                    .iter()
                    .position(|&i| catalog.services().get(i).is_some_and(|s| of(s, in_file)))
            });
            let owner = owner.and_then(|at| linted.get_mut(at));
            match owner {
                Some(service) => {
                    service.ok &= e.is_warning();
                    service.findings.push(e);
                }
                None => findings.push(e),
            }
        }
        Self {
            path: path.to_owned(),
            source: source.to_owned(),
            ok: !problems.iter().any(|e| !e.is_warning()),
            counts,
            services: linted,
            findings,
        }
    }

    /// A warning about the catalog as a whole.
    pub(super) fn warn(&mut self, message: String) {
        self.findings.warnings.push(Finding {
            source: self.source.clone(),
            file: None,
            path: None,
            message,
        });
    }
}

/// `catalog verify -o yaml|json`: the catalog and every runtime checked.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct VerifyReport {
    /// Every runtime is `ok` and the catalog loaded without error (verify exits 0).
    ok: bool,
    catalog: CatalogVerdict,
    runtimes: Vec<RuntimeVerdict>,
    /// How many runtimes were checked, and how many of them are not `ok`.
    checked: usize,
    not_ok: usize,
}

/// The catalog itself.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CatalogVerdict {
    /// As given on the command line.
    reference: String,
    /// How problems name it.
    source: String,
    /// `sha256:` of its content.
    digest: String,
    /// `ok`, or `ERROR` when it did not load cleanly.
    status: &'static str,
    /// Who signed the OCI catalog (one per `--public-key` or keyless policy; `[]` without).
    signed: Vec<String>,
    #[serde(flatten)]
    findings: Findings,
}

/// One runtime's verdict.
#[derive(Debug, Serialize)]
struct RuntimeVerdict {
    /// `group/version/Kind` it backs.
    kind: String,
    /// `os/arch` of an exec binary, else `null`.
    platform: Option<String>,
    /// `ok`, `MISMATCH`, `UNPINNED`, `UNSIGNED` or `ERROR`, as the text says.
    status: &'static str,
    /// The `sha256:` digest it is pinned to, when it names one (`null`: unpinned, a service
    /// runtime, a catalog file without a pin).
    digest: Option<String>,
    /// What was checked and what was found, as the text line says it.
    detail: String,
}

impl RuntimeVerdict {
    fn of(check: &Check) -> Self {
        Self {
            kind: check.kind.clone(),
            platform: check.platform.clone(),
            status: check.status,
            digest: check.digest.clone(),
            detail: check.detail.clone(),
        }
    }
}

impl VerifyReport {
    /// Whether verify passes.
    pub(super) fn ok(&self) -> bool {
        self.ok
    }

    /// The report of a verified catalog: `problems` its load's, `signed` its signers.
    pub(super) fn new(
        reference: &str,
        bundle: &crate::catalog::Bundle,
        signed: Vec<String>,
        checks: &[Check],
    ) -> Self {
        let failed_load = bundle.problems.iter().any(|p| !p.is_warning());
        let not_ok = checks.iter().filter(|c| c.status != "ok").count();
        Self {
            ok: not_ok == 0 && !failed_load,
            catalog: CatalogVerdict {
                reference: reference.to_owned(),
                source: bundle.origin.label(),
                digest: format!("sha256:{}", bundle.digest),
                status: if failed_load { "ERROR" } else { "ok" },
                signed,
                findings: Findings::of(&bundle.problems),
            },
            runtimes: checks.iter().map(RuntimeVerdict::of).collect(),
            checked: checks.len(),
            not_ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON verdict carries the check's own platform and pinned digest (it once read them
    /// back from the text line); the text line still says the platform after the kind.
    #[test]
    fn issue16_verify_report_carries_platform_and_digest_of_a_check() {
        let hex = "ab".repeat(32);
        let check = Check {
            status: "MISMATCH",
            kind: "fn.example/v1/Set".to_owned(),
            platform: Some("linux/amd64".to_owned()),
            digest: Some(format!("sha256:{hex}")),
            detail: format!(
                "exec https://x/y: expected sha256:{hex}, downloaded sha256:{}",
                "cd".repeat(32)
            ),
        };
        let v = RuntimeVerdict::of(&check);
        assert_eq!(v.kind, "fn.example/v1/Set");
        assert_eq!(v.platform.as_deref(), Some("linux/amd64"));
        assert_eq!(v.digest, Some(format!("sha256:{hex}")));
        assert!(
            check
                .to_string()
                .starts_with("MISMATCH fn.example/v1/Set (linux/amd64)  exec https://x/y: "),
            "{check}"
        );
        let v = RuntimeVerdict::of(&Check {
            status: "UNPINNED",
            kind: "fn.example/v1/Set".to_owned(),
            platform: None,
            digest: None,
            detail: "container x:v1: no digest; run `krm-catalog catalog lock`".to_owned(),
        });
        assert_eq!((v.platform, v.digest), (None, None));
    }
}

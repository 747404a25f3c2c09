//! The runtime stage: verify the runtime of every function-backed item its schema admitted
//! (`admit`) and decide what it becomes (SPEC §7.3): pinned, run as a step, or left as it is
//! with an error (`functions::prepare`).

use std::collections::HashMap;

use serde_json::Value;

use super::admit::Admission;
use super::classify::Role;
use super::input::RunContext;
use crate::catalog::{Catalog, Origin};
use crate::config::Settings;
use crate::functions::{self, Step};
use crate::remote::LazyRemote;
use crate::results::Results;

/// What a function-backed item becomes, and the item as its kind's schema admitted it when
/// that changed it (defaults added, unknown fields pruned): what is run, as the pinned item
/// already is.
pub(super) struct Verified {
    /// Pinned, run or failed.
    pub step: Step,
    /// The admitted item, when it differs from the input.
    pub admitted: Option<Value>,
}

/// The step of each function-backed item, by its index (a map, not one slot per item: most
/// items are not function-backed, and memory per item counts with many small items). Their
/// results come apart: the run reports them after expansion's, where they have always been.
/// `remote` is the run's: the first function-backed item makes it, if the catalogs have not.
pub(super) fn verify(
    admission: &Admission<'_>,
    catalog: &Catalog,
    settings: &Settings,
    ctx: &RunContext,
    remote: &LazyRemote,
) -> (HashMap<usize, Verified>, Results) {
    let mut results = Results::default();
    let dirs = functions::Dirs {
        cwd: &ctx.cwd,
        package: ctx.package(),
    };
    let steps = admission
        .items
        .iter()
        .zip(&admission.classified.roles)
        .enumerate()
        .filter_map(|(i, (item, role))| {
            if !matches!(role, Role::Function(..) | Role::Explicit(_)) {
                return None;
            }
            if admission.rejected(i) {
                return Some((
                    i,
                    Verified {
                        step: Step::Failed,
                        admitted: None,
                    },
                ));
            }
            let value = item.value();
            let admitted = admission.changed(i).cloned();
            let item = admitted.as_ref().unwrap_or(&value);
            let step = match role {
                Role::Function(runtime, bundle) => functions::prepare(
                    item,
                    runtime,
                    // Unknown provenance gets the strictest treatment (inline).
                    catalog
                        .bundles
                        .get(*bundle)
                        .map_or(&Origin::Inline, |b| &b.origin),
                    settings,
                    remote.get(),
                    dirs,
                    &mut results,
                ),
                // The item's own runtime (KEP-2906): the catalog's is not used.
                Role::Explicit(explicit) => functions::prepare_explicit(
                    item,
                    explicit,
                    settings,
                    remote.get(),
                    dirs,
                    &mut results,
                ),
                _ => return None,
            };
            Some((i, Verified { step, admitted }))
        })
        .collect();
    (steps, results)
}

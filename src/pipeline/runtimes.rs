//! The runtime stage: verify the runtime of every function-backed item (SPEC §7.3) and decide
//! what it becomes (pinned, run as a step, or left as it is with an error).

use std::collections::HashMap;

use crate::resource_list::Item;

use super::classify::Role;
use super::input::RunContext;
use crate::catalog::{Catalog, Origin};
use crate::config::Settings;
use crate::functions::{self, Step};
use crate::remote::LazyRemote;
use crate::results::Results;

/// The step of each function-backed item, by its index (a map, not one slot per item: most
/// items are not function-backed, and memory per item counts with many small items). Their
/// results come apart: the run reports them after expansion's, where they have always been.
/// `remote` is the run's: the first function-backed item makes it, if the catalogs have not.
pub(super) fn verify(
    items: &[Item],
    roles: &[Role],
    catalog: &Catalog,
    settings: &Settings,
    ctx: &RunContext,
    remote: &LazyRemote,
) -> (HashMap<usize, Step>, Results) {
    let mut results = Results::default();
    let steps = items
        .iter()
        .zip(roles)
        .enumerate()
        .filter_map(|(i, (item, role))| {
            let Role::Function(runtime, bundle) = role else {
                return None;
            };
            Some((
                i,
                functions::prepare(
                    &item.value(),
                    runtime,
                    // Unknown provenance gets the strictest treatment (inline).
                    catalog
                        .bundles
                        .get(*bundle)
                        .map_or(&Origin::Inline, |b| &b.origin),
                    settings,
                    remote.get(),
                    &ctx.cwd,
                    &mut results,
                ),
            ))
        })
        .collect();
    (steps, results)
}

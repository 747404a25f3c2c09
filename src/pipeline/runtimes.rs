//! The runtime stage: admit every function-backed item by its kind's schema (pruned, defaulted
//! and validated like a service config, SPEC §4.1), verify its runtime (SPEC §7.3) and decide
//! what it becomes (pinned, run as a step, or left as it is with an error).

use std::collections::HashMap;

use serde_json::Value;

use crate::resource_list::Item;

use super::classify::Role;
use super::input::{RunContext, gvk_of};
use crate::catalog::{Catalog, Kind, Origin};
use crate::config::Settings;
use crate::functions::{self, Step};
use crate::remote::LazyRemote;
use crate::results::{KrmResult, Results, Warning};
use crate::service::instance;

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
    items: &[Item],
    roles: &[Role],
    catalog: &Catalog,
    settings: &Settings,
    ctx: &RunContext,
    remote: &LazyRemote,
) -> (HashMap<usize, Verified>, Results) {
    let mut results = Results::default();
    let steps = items
        .iter()
        .zip(roles)
        .enumerate()
        .filter_map(|(i, (item, role))| {
            let Role::Function(runtime, bundle) = role else {
                return None;
            };
            let value = item.value();
            let admitted = match admit(&value, catalog, settings, &mut results) {
                Ok(admitted) => admitted.filter(|a| *a != *value),
                Err(()) => {
                    return Some((
                        i,
                        Verified {
                            step: Step::Failed,
                            admitted: None,
                        },
                    ));
                }
            };
            let step = functions::prepare(
                admitted.as_ref().unwrap_or(&value),
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
            );
            Some((i, Verified { step, admitted }))
        })
        .collect();
    (steps, results)
}

/// The item admitted by the schema of its kind's version, if that has one (`Ok(None)`: the
/// item stays as it is); its problems reported as a service config's are, at the item and
/// the field path; `Err` when it is rejected (nothing is pinned or run).
fn admit(
    item: &Value,
    catalog: &Catalog,
    settings: &Settings,
    results: &mut Results,
) -> Result<Option<Value>, ()> {
    let Some(Kind::Function {
        schema: Some(schema),
        ..
    }) = catalog.kind_for(&gvk_of(item))
    else {
        return Ok(None);
    };
    match instance::admit_object(schema, item, settings.unknown_fields) {
        Ok(admitted) => {
            for w in admitted.warnings {
                results.push(KrmResult::of(&Warning(w), Some(item)));
            }
            Ok(Some(admitted.value))
        }
        Err(rejected) => {
            for w in rejected.warnings {
                results.push(KrmResult::of(&Warning(w), Some(item)));
            }
            for e in &rejected.errors {
                results.push(KrmResult::of(e, Some(item)));
            }
            Err(())
        }
    }
}

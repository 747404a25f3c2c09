//! The admission stage (SPEC §4.1): every item whose kind's catalog version declares an
//! `openAPIV3Schema` — the function config of a function-backed kind, or a service object of a
//! KEP `service` runtime — is admitted by it as an apiserver admits a custom resource: pruned
//! under the `unknownFields` policy, defaulted, validated (CEL included). The later stages read
//! the admitted item: it is what is pinned, run or expanded. A rejected item is none of those;
//! its problems are results at the item and the field path.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::classify::{Classified, Role};
use super::input::gvk_of;
use crate::catalog::{Catalog, Kind};
use crate::config::Settings;
use crate::resource_list::Item;
use crate::results::{KrmResult, Results, Warning};
use crate::service::instance;

/// The items as the earlier stages left them: their roles (`classify`) and what admission
/// decided, by input index. Maps, not a slot per item: most items have no schema, and memory
/// per item counts with many small items.
pub(super) struct Admission<'a> {
    /// The items.
    pub items: &'a [Item],
    /// Their roles.
    pub classified: &'a Classified,
    /// The admitted item, where admission changed it (defaults added, unknown fields pruned).
    changed: HashMap<usize, Value>,
    /// The items their schema rejected.
    rejected: HashSet<usize>,
}

impl Admission<'_> {
    /// Whether the item's schema rejected it.
    pub fn rejected(&self, index: usize) -> bool {
        self.rejected.contains(&index)
    }

    /// The admitted item, when admission changed it.
    pub fn changed(&self, index: usize) -> Option<&Value> {
        self.changed.get(&index)
    }
}

/// Admit every function-backed item and service object by its kind's version schema.
pub(super) fn admit<'a>(
    items: &'a [Item],
    classified: &'a Classified,
    catalog: &Catalog,
    settings: &Settings,
    results: &mut Results,
) -> Admission<'a> {
    let mut admission = Admission {
        items,
        classified,
        changed: HashMap::new(),
        rejected: HashSet::new(),
    };
    for (i, (item, role)) in items.iter().zip(&classified.roles).enumerate() {
        if !matches!(
            role,
            Role::Function(..) | Role::Expand(Some(_)) | Role::Explicit(_)
        ) {
            continue;
        }
        let value = item.value();
        if let Some(warning) = catalog.deprecation(&gvk_of(&*value)) {
            results.push(KrmResult::warning(warning).about(&*value).at("apiVersion"));
        }
        let admitted = if matches!(role, Role::Explicit(_)) {
            admit_beside_runtime(&value, catalog, settings, results)
        } else {
            admit_one(&value, catalog, settings, results)
        };
        match admitted {
            Ok(Some(admitted)) if admitted != *value => {
                admission.changed.insert(i, admitted);
            }
            Ok(_) => {}
            Err(Rejected) => {
                admission.rejected.insert(i);
            }
        }
    }
    admission
}

/// An item with an explicit `runtime` (KEP-2906), admitted by its kind's schema without it:
/// the field is the orchestrator's, not the config's, so the schema neither prunes nor
/// rejects it, and it is put back where it was.
fn admit_beside_runtime(
    item: &Value,
    catalog: &Catalog,
    settings: &Settings,
    results: &mut Results,
) -> Result<Option<Value>, Rejected> {
    let Value::Object(map) = item else {
        return admit_one(item, catalog, settings, results);
    };
    let Some(at) = map.keys().position(|k| k == "runtime") else {
        return admit_one(item, catalog, settings, results);
    };
    let mut without = map.clone();
    let runtime = without.shift_remove("runtime").unwrap_or(Value::Null);
    let admitted = admit_one(&Value::Object(without), catalog, settings, results)?;
    Ok(admitted.map(|mut admitted| {
        if let Value::Object(out) = &mut admitted {
            out.shift_insert(at.min(out.len()), "runtime".to_owned(), runtime);
        }
        admitted
    }))
}

/// An item its kind's schema rejected (the results say why).
pub(super) struct Rejected;

/// The item admitted by the schema of its kind's version, if that has one (`Ok(None)`: the
/// item stays as it is); its problems reported at the item and the field path.
pub(super) fn admit_one(
    item: &Value,
    catalog: &Catalog,
    settings: &Settings,
    results: &mut Results,
) -> Result<Option<Value>, Rejected> {
    let Some(
        Kind::Function {
            schema: Some(schema),
            ..
        }
        | Kind::Service {
            schema: Some(schema),
            ..
        },
    ) = catalog.kind_for(&gvk_of(item))
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
            Err(Rejected)
        }
    }
}

//! The assemble stage: write every item back in input order, source objects marked
//! local-config with their generated objects right after them, objects of earlier runs replaced,
//! function-backed items pinned or run; items that leave unchanged keep their input text.

use std::collections::HashMap;

use super::classify::{Classified, Role};
use super::expand::Expansion;
use super::input::hydrate;
use super::runtimes::Verified;
use crate::functions::{self, Step};
use crate::resource_list::{self, Item, Verbatim};
use crate::results::Results;

/// The output items. `verified` holds the step of each function-backed item (see `runtimes`);
/// when one runs, the items come from the functions and `verbatim` is dropped.
pub(super) fn assemble(
    items: Vec<Item>,
    classified: Classified,
    mut verified: HashMap<usize, Verified>,
    expansion: Expansion,
    verbatim: &mut Option<Verbatim>,
    results: &mut Results,
) -> Vec<Item> {
    let Expansion {
        generated,
        trailing,
        expanded_sources,
    } = expansion;
    // Every item passes through (a large input with nothing for us): the output is the input,
    // without a second item vector alongside the first.
    let all_pass = classified
        .roles
        .iter()
        .all(|r| matches!(r, Role::PassThrough));
    if all_pass && trailing.is_empty() && verified.is_empty() {
        if let Some(v) = verbatim.as_mut() {
            v.ranges.resize(items.len(), None);
            v.whole.clear();
        }
        return items;
    }
    // Assemble. Items that leave unchanged keep their input text (see `Verbatim`).
    let mut input_ranges = verbatim
        .as_mut()
        .map(|v| std::mem::take(&mut v.ranges))
        .unwrap_or_default();
    input_ranges.resize(items.len(), None);
    let mut out = Vec::with_capacity(items.len() + trailing.len());
    let mut ranges = Vec::with_capacity(items.len() + trailing.len());
    let mut steps = Vec::new();
    let rows = items
        .into_iter()
        .zip(input_ranges)
        .zip(classified.roles)
        // (`generated` is empty when nothing was expanded.)
        .zip(
            generated
                .into_iter()
                .chain(std::iter::repeat_with(Vec::new)),
        )
        .enumerate();
    for (i, (((mut item, range), role), produced)) in rows {
        match role {
            Role::Generated(from) => {
                if !expanded_sources.contains(&from) && classified.sources_present.contains(&from) {
                    out.push(item);
                    ranges.push(range);
                }
            }
            Role::PassThrough => {
                out.push(item);
                ranges.push(range);
            }
            Role::Function(..) | Role::Explicit(_) => match verified.remove(&i) {
                Some(Verified {
                    step: Step::Pinned(pinned),
                    ..
                }) => {
                    out.push(Item::from(pinned));
                    ranges.push(None);
                }
                Some(Verified {
                    step: Step::Run(program),
                    admitted,
                }) => {
                    // The runtime gets the item its kind's schema admitted (defaulted).
                    if let Some(admitted) = admitted {
                        item = Item::from(admitted);
                    }
                    if resource_list::annotation(&item, resource_list::LOCAL_CONFIG).is_none() {
                        item = local_config(item);
                    }
                    steps.push((out.len(), program));
                    out.push(item);
                    ranges.push(None);
                }
                Some(Verified {
                    step: Step::Failed, ..
                })
                | None => {
                    out.push(item);
                    ranges.push(range);
                }
            },
            Role::Source | Role::Expand(_) => {
                let unchanged =
                    resource_list::annotation(&item, resource_list::LOCAL_CONFIG).is_some();
                if !unchanged {
                    item = local_config(item);
                }
                out.push(item);
                ranges.push(if unchanged { range } else { None });
                ranges.extend(std::iter::repeat_n(None, produced.len()));
                out.extend(produced.into_iter().map(Item::from));
            }
        }
    }
    ranges.extend(std::iter::repeat_n(None, trailing.len()));
    out.extend(trailing.into_iter().map(Item::from));
    if let Some(v) = verbatim.as_mut() {
        v.ranges = ranges;
        // The flags were by input index; every item that needed its body has it by now.
        v.whole.clear();
    }
    if !steps.is_empty() {
        // The items now come from the functions: nothing is a verbatim copy of the input any more.
        hydrate(&mut out, verbatim.as_ref(), |_, _| true);
        let whole = out.into_iter().map(Item::into_value).collect();
        out = functions::run_steps(whole, &steps, results)
            .into_iter()
            .map(Item::from)
            .collect();
        *verbatim = None;
    }
    out
}

/// The item marked local-config (items changed here were read in full by `classify`).
fn local_config(item: Item) -> Item {
    let mut value = item.into_value();
    resource_list::set_annotation(&mut value, resource_list::LOCAL_CONFIG, "true");
    Item::from(value)
}

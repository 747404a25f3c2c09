//! Writing a ResourceList: untouched items copied from the input, the rest emitted, in pieces.

use serde_json::{Map, Value};

use super::{API_VERSION, AsValue, ResourceList};
use crate::yaml;

/// Write a ResourceList with results. Items with a verbatim range are copied from the input.
pub fn write<I: AsValue>(list: ResourceList<I>, results: Option<Vec<Value>>) -> String {
    let capacity = list.verbatim.as_ref().map_or(4096, |v| v.text.len() + 4096);
    let mut out = String::with_capacity(capacity);
    write_into(list, results, &mut out, |_| {});
    out
}

/// How much of the output [`write_pieces`] gathers before handing it on.
const PIECE: usize = 64 * 1024;

/// [`write`] in pieces of about 64 KiB, each handed to `put` as soon as it is complete, so
/// that the output is never whole in memory (it is about as large as the input).
pub fn write_pieces<I: AsValue>(
    list: ResourceList<I>,
    results: Option<Vec<Value>>,
    mut put: impl FnMut(&str),
) {
    let mut out = String::with_capacity(2 * PIECE);
    write_into(list, results, &mut out, |out| {
        if out.len() >= PIECE {
            put(out);
            out.clear();
        }
    });
    put(&out);
}

/// Append the output to `out`, calling `piece` after each item (it may take what `out` holds).
fn write_into<I: AsValue>(
    list: ResourceList<I>,
    results: Option<Vec<Value>>,
    out: &mut String,
    mut piece: impl FnMut(&mut String),
) {
    let ResourceList {
        items,
        function_config,
        verbatim,
    } = list;
    out.push_str("apiVersion: ");
    out.push_str(API_VERSION);
    out.push_str("\nkind: ResourceList\n");
    if items.is_empty() {
        out.push_str("items: []\n");
    } else {
        out.push_str("items:\n");
    }
    for (i, item) in items.iter().enumerate() {
        let range = verbatim
            .as_ref()
            .and_then(|v| v.ranges.get(i).cloned().flatten().map(|r| (v, r)));
        match range {
            Some((v, range)) if !v.reemit => {
                push_dedented(out, &v.text[range], v.dash_column);
            }
            // One item at a time, so a flow-style input is never whole in memory. The text
            // parsed when it was read, so it parses again; the skeleton is the last resort.
            Some((v, range)) => match v.item_at(&range) {
                Some(full) => yaml::emit_into(out, std::slice::from_ref(&full)),
                None => yaml::emit_into(out, std::slice::from_ref(&*item.as_value())),
            },
            None => yaml::emit_into(out, std::slice::from_ref(&*item.as_value())),
        }
        piece(out);
    }
    let mut rest = Map::new();
    if let Some(fc) = function_config {
        rest.insert("functionConfig".into(), fc);
    }
    if let Some(results) = results.filter(|r| !r.is_empty()) {
        rest.insert("results".into(), Value::Array(results));
    }
    if !rest.is_empty() {
        yaml::emit_into(out, &Value::Object(rest));
    }
}

/// Append an item's input text with its sequence indentation removed (we write `-` at
/// column 0), ending with a newline.
fn push_dedented(out: &mut String, text: &str, column: usize) {
    if column == 0 {
        out.push_str(text);
    } else {
        for line in text.split_inclusive('\n') {
            let spaces = line.len() - line.trim_start_matches(' ').len();
            out.push_str(&line[spaces.min(column)..]);
        }
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
}

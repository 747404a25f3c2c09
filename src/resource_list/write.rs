//! Writing a ResourceList: untouched items copied from the input, the rest emitted, in pieces.

use serde_json::{Map, Value};

use super::{API_VERSION, AsValue, ResourceList, Span, Verbatim};
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
    match verbatim.as_ref() {
        Some(v) if v.stream => write_streamed(&items, v, out, &mut piece),
        _ => {
            for (i, item) in items.iter().enumerate() {
                let range = verbatim
                    .as_ref()
                    .and_then(|v| v.ranges.get(i).copied().flatten().map(|r| (v, r)));
                match range {
                    Some((v, span)) if !v.reemit => match v.text.get(span.range()) {
                        Some(text) => push_dedented(out, text, v.dash_column, &mut piece),
                        None => yaml::emit_into(out, std::slice::from_ref(&*item.as_value())),
                    },
                    // One item at a time, so a flow-style input is never whole in memory. The
                    // text parsed when it was read, so it parses again; the skeleton is the
                    // last resort.
                    Some((v, span)) => write_alone(out, item, Some(span), v),
                    None => yaml::emit_into(out, std::slice::from_ref(&*item.as_value())),
                }
                piece(out);
            }
        }
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

/// The items over a streamed text ([`Verbatim::stream`]): those with a span are read again
/// from it in one pass (the pipeline keeps them in input order), each written as soon as it is
/// read; the others are written from their values, in their places.
fn write_streamed<I: AsValue>(
    items: &[I],
    v: &Verbatim,
    out: &mut String,
    piece: &mut impl FnMut(&mut String),
) {
    let span = |i: usize| v.ranges.get(i).copied().flatten();
    let (mut next, mut j) = (0, 0);
    v.each_item(|full| {
        let mut full = Some(full);
        while let Some(item) = items.get(next) {
            match span(next).map(|s| s.range().start) {
                Some(at) if at > j => break,
                Some(at) if at == j && full.is_some() => {
                    if let Some(full) = full.take() {
                        yaml::emit_into(out, std::slice::from_ref(&full));
                    }
                }
                // Out of input order (or twice the same): read again on its own.
                Some(_) => write_alone(out, item, span(next), v),
                None => write_alone(out, item, None, v),
            }
            next += 1;
            piece(out);
        }
        j += 1;
        next < items.len()
    });
    for (i, item) in items.iter().enumerate().skip(next) {
        write_alone(out, item, span(i), v);
        piece(out);
    }
}

/// One item: read from the text at `span`, else (no span, or nothing there) its value.
fn write_alone<I: AsValue>(out: &mut String, item: &I, span: Option<Span>, v: &Verbatim) {
    match span.and_then(|span| v.item_at(span)) {
        Some(full) => yaml::emit_into(out, std::slice::from_ref(&full)),
        None => yaml::emit_into(out, std::slice::from_ref(&*item.as_value())),
    }
}

/// Append an item's input text with its sequence indentation removed (we write `-` at
/// column 0), ending with a newline. `piece` is called after every [`PIECE`] bytes or so: one
/// item may be most of the input (issue 20: a 25 MB item was copied whole beside the input).
fn push_dedented(out: &mut String, text: &str, column: usize, piece: &mut impl FnMut(&mut String)) {
    let mut ends_line = out.ends_with('\n');
    let mut pending = 0;
    let mut push = |out: &mut String, mut rest: &str| {
        while !rest.is_empty() {
            let mut at = rest.len().min(PIECE);
            while !rest.is_char_boundary(at) {
                at -= 1;
            }
            let (head, tail) = rest.split_at(at);
            out.push_str(head);
            ends_line = head.ends_with('\n');
            pending += head.len();
            if pending >= PIECE {
                piece(out);
                pending = 0;
            }
            rest = tail;
        }
    };
    if column == 0 {
        push(out, text);
    } else {
        for line in text.split_inclusive('\n') {
            let spaces = line.len() - line.trim_start_matches(' ').len();
            push(out, &line[spaces.min(column)..]);
        }
    }
    if !ends_line {
        out.push('\n');
    }
}

#[cfg(test)]
mod issue20_writing {
    use super::*;
    use crate::resource_list::{Item, read, read_owned, read_owned_keeping};
    use std::fmt::Write as _;

    const ANCHORED: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    labels: &l {team: a}\n  data: {x: 'on'}\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: b\n    labels: *l\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c, labels: *l}\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: f}\n";

    /// Issue 20: an input whose items' text cannot be copied (anchors) is kept once, not
    /// beside a copy of every item as YAML; the writer reads the items again.
    #[test]
    fn issue20_streamed_items_are_read_again_when_written() {
        let lazy = read_owned(ANCHORED.to_owned()).unwrap();
        let v = lazy.verbatim.as_ref().unwrap();
        assert!(v.stream);
        assert_eq!(v.text, ANCHORED);
        assert!(lazy.items.iter().all(|i| matches!(i, Item::Skeleton(_))));
        let eager = read(ANCHORED).unwrap();
        let spans: Vec<Span> = v.ranges.iter().map(|s| s.unwrap()).collect();
        // Any order, twice the same: each the item at its place.
        let picked = [spans[2], spans[0], spans[2], spans[1]];
        let found = v.items_at(&picked);
        let expected = [2, 0, 2, 1].map(|i| Some(eager.items[i].clone()));
        assert_eq!(found, expected);
        assert_eq!(v.item_at(spans[1]), Some(eager.items[1].clone()));
        assert_eq!(write(lazy, None), write(eager, None));
    }

    /// Items the pipeline moved, added or doubled are written in their places all the same.
    #[test]
    fn issue20_streamed_items_out_of_input_order() {
        let lazy = read_owned(ANCHORED.to_owned()).unwrap();
        let eager = read(ANCHORED).unwrap();
        let v = lazy.verbatim.clone().unwrap();
        let spans: Vec<Span> = v.ranges.iter().map(|s| s.unwrap()).collect();
        let added =
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}});
        let order = [Some(2), None, Some(0), Some(1), Some(1), None];
        let items: Vec<Item> = order
            .iter()
            .map(|i| i.map_or_else(|| Item::from(added.clone()), |i| lazy.items[i].clone()))
            .collect();
        let ranges = order.iter().map(|i| i.map(|i| spans[i])).collect();
        let moved = ResourceList {
            items,
            function_config: None,
            verbatim: Some(Verbatim { ranges, ..v }),
        };
        let whole: Vec<Value> = order
            .iter()
            .map(|i| i.map_or_else(|| added.clone(), |i| eager.items[i].clone()))
            .collect();
        let expected = ResourceList {
            items: whole,
            function_config: None,
            verbatim: None,
        };
        assert_eq!(write(moved, None), write(expected, None));
    }

    /// Items the reader is asked to keep whole are whole in a streamed input too.
    #[test]
    fn issue20_streamed_items_kept_whole() {
        let keep =
            |item: &Map<String, Value>| item.get("kind").and_then(Value::as_str) == Some("Secret");
        let lazy = read_owned_keeping(ANCHORED.to_owned(), keep).unwrap();
        let v = lazy.verbatim.as_ref().unwrap();
        assert!(matches!(lazy.items[1], Item::Whole(_)));
        assert!(v.is_whole(1) && !v.is_whole(0) && !v.is_whole(2));
        assert_eq!(lazy.items[1].value()["metadata"]["labels"]["team"], "a");
    }

    /// One item of most of the input is handed on in pieces, never whole beside the input.
    #[test]
    fn issue20_a_huge_item_is_written_in_pieces() {
        for indent in ["", "  "] {
            let mut input = format!(
                "kind: ResourceList\nitems:\n{indent}- apiVersion: v1\n{indent}  kind: ConfigMap\n{indent}  metadata: {{name: huge}}\n{indent}  data:\n{indent}    values: [0"
            );
            for i in 0..200_000 {
                input.push_str(if i % 2 == 0 { ", é1" } else { ", 2" });
            }
            input.push_str("]\n");
            for i in 0..2000 {
                let _ = writeln!(input, "{indent}    k{i}: v");
            }
            let whole = write(read_owned(input.clone()).unwrap(), None);
            let mut pieces = Vec::new();
            write_pieces(read_owned(input).unwrap(), None, |p| {
                pieces.push(p.to_owned());
            });
            assert_eq!(pieces.concat(), whole);
            let largest = pieces.iter().map(String::len).max().unwrap();
            assert!(largest <= 2 * PIECE, "{largest}");
            assert!(pieces.len() > 10);
        }
    }
}

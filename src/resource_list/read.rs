//! Reading a ResourceList: skeletons and verbatim ranges for the plain block layout, a
//! streaming reader for other layouts, and the eager reader.

use serde_json::{Map, Value};

use super::item::{Types, skeleton};
use super::verbatim::{Build, ItemsText, NoScan, scan_items};
use super::{InputError, Item, ResourceList, Span, Verbatim, stream};
use crate::yaml;

/// Check the top-level fields of a ResourceList and take out its function config.
fn function_config_of(map: &mut Map<String, Value>) -> Result<Option<Value>, InputError> {
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind != "ResourceList" && kind != "List" {
        let shown = if kind.is_empty() {
            "no kind".to_owned()
        } else {
            format!("kind {kind}")
        };
        return Err(InputError(format!(
            "input is not a ResourceList: expected kind ResourceList or List, found {shown}"
        )));
    }
    match map.shift_remove("functionConfig") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) if m.is_empty() => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(v)),
        Some(other) => Err(InputError(format!(
            "input is not a ResourceList: functionConfig must be an object, not {}",
            crate::strict::type_name(&other)
        ))),
    }
}

/// Read a ResourceList for the pipeline with memory near the input size: when the items are in
/// the plain block layout, each is parsed on its own and kept as a skeleton (see [`skeleton`]),
/// since items the function leaves alone are copied from the input text
/// anyway; [`Verbatim::item_at`] reads an item in full when the pipeline needs its body.
/// Anything else (another layout, anchors, an error to report) goes through [`read`].
pub fn read_owned(text: String) -> Result<ResourceList<Item>, InputError> {
    read_owned_keeping(text, |_| false)
}

/// [`read_owned`], keeping whole the items `keep` picks (those the pipeline will read in
/// full anyway, such as service objects): each item is parsed once, not once as a skeleton
/// and again when a stage needs its body. `keep` must decide from what a skeleton holds
/// (`apiVersion`, `kind`, `metadata`): of the items it leaves, the reader builds no more,
/// and it asks early, with the fields read before the first other one (see
/// [`yaml::NodeBuilder::lean`]).
pub fn read_owned_keeping(
    mut text: String,
    keep: impl Fn(&Map<String, Value>) -> bool,
) -> Result<ResourceList<Item>, InputError> {
    addressable(text.len())?;
    // stdin was read into a buffer that grew by doubling; the text is kept for the whole run.
    text.shrink_to_fit();
    let skeletons = match read_skeletons(&text, &keep, true) {
        Err(NoScan::Redo) => read_skeletons(&text, &keep, false),
        other => other,
    };
    if let Ok((items, whole, function_config, scan)) = skeletons {
        if scan.reemit {
            faithful(&text)?;
        }
        return Ok(ResourceList {
            items,
            function_config,
            verbatim: Some(Verbatim {
                text,
                dash_column: scan.dash_column,
                ranges: scan.ranges.into_iter().map(Some).collect(),
                reemit: scan.reemit,
                stream: false,
                whole,
            }),
        });
    }
    let streamed = read_streaming(&text, &keep).and_then(|(items, whole, function_config)| {
        // Item `j` is read again as the `j`th item of the text (see `Verbatim::stream`).
        let spans: Option<Vec<Span>> = (0..items.len()).map(|j| Span::new(j..j + 1)).collect();
        Some((items, whole, function_config, spans?))
    });
    match streamed {
        Some((items, whole, function_config, spans)) => {
            faithful(&text)?;
            Ok(ResourceList {
                items,
                function_config,
                verbatim: Some(Verbatim {
                    text,
                    dash_column: 0,
                    ranges: spans.into_iter().map(Some).collect(),
                    reemit: false,
                    stream: true,
                    whole,
                }),
            })
        }
        None => read(&text).map(ResourceList::from),
    }
}

/// Refuse an input longer than [`Span::MAX_TEXT`]: the items' places in it are 32-bit offsets
/// (8 bytes an item instead of 24), and no orchestrator sends a function 4 GiB.
fn addressable(len: usize) -> Result<(), InputError> {
    if len <= Span::MAX_TEXT {
        return Ok(());
    }
    Err(InputError(format!(
        "input is {len} bytes, more than the {} bytes (4 GiB - 1) a function reads whatever KRM_CATALOG_MAX_INPUT_BYTES allows: the items' places in it are 32-bit offsets",
        Span::MAX_TEXT
    )))
}

/// Refuse an input whose items are written back from their values (anchors, aliases, merge
/// keys, flow or JSON layouts: their text cannot be copied) when a value would change on the
/// way (issue 21 M5): never a silent change to an item the run leaves alone.
fn faithful(text: &str) -> Result<(), InputError> {
    match yaml::fidelity::first_change(text) {
        None => Ok(()),
        Some(change) => Err(InputError(format!(
            "input {change}: the items of this input are written back from their values (it uses anchors, aliases, merge keys or flow style, so their text cannot be copied), and this value would change on the way; quote it, or write the items in block style without anchors"
        ))),
    }
}

/// The reader for every other layout (anchors and aliases, tags, CRLF, ...): one pass of the
/// parser in which each item, as soon as it is parsed, is kept as a skeleton (or whole, if
/// `keep` picks it). Its text cannot be copied, so the writer reads the items again
/// ([`Verbatim::stream`]); memory stays near the input size instead of holding every item
/// whole, or a copy of every item as YAML. The items, which were kept whole and the function
/// config; `None` on anything [`read`] would refuse (it reports the error).
fn read_streaming(
    text: &str,
    keep: &dyn Fn(&Map<String, Value>) -> bool,
) -> Option<(Vec<Item>, Vec<bool>, Option<Value>)> {
    let mut items = Vec::new();
    let mut whole = Vec::new();
    let mut types = Types::default();
    let mut map = stream::each_item(text, &mut |item| {
        if keep(&item) {
            whole.resize(items.len(), false);
            whole.push(true);
            items.push(Item::from(Value::Object(item)));
        } else {
            items.push(skeleton(item, &mut types));
        }
        true
    })?;
    let function_config = function_config_of(&mut map).ok()?;
    Some((items, whole, function_config))
}

/// The items, which of them were kept whole, the function config and the items' text.
type Skeletons = (Vec<Item>, Vec<bool>, Option<Value>, ItemsText);

/// The plain block (or flow) layout read as skeletons. `lean`: build only what skeletons of
/// items `keep` leaves alone hold ([`Build::Lean`]); `Err(NoScan::Redo)` then asks for a
/// read without it.
fn read_skeletons(
    text: &str,
    keep: &dyn Fn(&Map<String, Value>) -> bool,
    lean: bool,
) -> Result<Skeletons, NoScan> {
    let build = if lean { Build::Lean(keep) } else { Build::Full };
    let mut redo = false;
    match read_skeletons_with(text, keep, build, &mut redo) {
        Some(skeletons) => Ok(skeletons),
        None if redo => Err(NoScan::Redo),
        None => Err(NoScan::Layout),
    }
}

/// [`read_skeletons`]; `redo` is set when the scan answers [`NoScan::Redo`].
fn read_skeletons_with(
    text: &str,
    keep: &dyn Fn(&Map<String, Value>) -> bool,
    build: Build<'_>,
    redo: &mut bool,
) -> Option<Skeletons> {
    yaml::check_input_size(text).ok()?;
    let chunks = yaml::split_documents(text);
    let [(_, doc)] = chunks.as_slice() else {
        return None;
    };
    let doc_start = doc.as_ptr() as usize - text.as_ptr() as usize;
    // Each item is built from the events of the scan itself and made a skeleton at once (so
    // memory stays near the input size); items the scan's builder leaves alone (`None`) are
    // parsed from their text below (`pending`; a null stands in for them until then).
    let mut items: Vec<Item> = Vec::new();
    let mut pending: Vec<usize> = Vec::new();
    let mut whole = Vec::new();
    let mut types = Types::default();
    let mut take = |item: Map<String, Value>, types: &mut Types, at: usize| {
        if keep(&item) {
            // (Pending items come after later ones: mark, never truncate.)
            if whole.len() <= at {
                whole.resize(at + 1, false);
            }
            if let Some(flag) = whole.get_mut(at) {
                *flag = true;
            }
            Item::from(Value::Object(item))
        } else {
            skeleton(item, types)
        }
    };
    let mut on_item = |value: Option<Value>| {
        let item = match value {
            Some(Value::Object(item)) => take(item, &mut types, items.len()),
            _ => {
                pending.push(items.len());
                Item::from(Value::Null)
            }
        };
        items.push(item);
    };
    let scan = scan_items(doc_start, doc, Some(&mut on_item), build)
        .map_err(|e| *redo = e == NoScan::Redo)
        .ok()?;
    let (first, last) = (scan.ranges.first()?.range(), scan.ranges.last()?.range());
    // Everything but the items: the header and whatever follows the sequence.
    let mut header = String::with_capacity(first.start - doc_start + 256);
    header.push_str(&text[doc_start..first.start]);
    header.push_str(&text[last.end..doc_start + doc.len()]);
    let (value, shape) = yaml::parse_with_shape(&header).ok()?;
    let plain = |s: yaml::Shape| s.aliases == 0 && s.anchors == 0 && s.merge_keys == 0;
    let Value::Object(mut map) = value else {
        return None;
    };
    // Without the items' text, `items` is empty: `items:` (block) or `items: []` (flow).
    let emptied = match map.get("items") {
        None | Some(Value::Null) => !scan.reemit,
        Some(Value::Array(a)) => scan.reemit && a.is_empty(),
        Some(_) => false,
    };
    if !plain(shape) || !emptied || items.len() != scan.ranges.len() {
        return None;
    }
    let function_config = function_config_of(&mut map).ok()?;
    for at in pending {
        let range = scan.ranges.get(at)?.range();
        let (value, shape) = yaml::parse_with_shape(text.get(range)?).ok()?;
        if !plain(shape) {
            return None;
        }
        let item = match value {
            Value::Object(item) if scan.reemit => item,
            Value::Array(mut one) if !scan.reemit && one.len() == 1 => match one.pop() {
                Some(Value::Object(item)) => item,
                _ => return None,
            },
            _ => return None,
        };
        let item = take(item, &mut types, at);
        *items.get_mut(at)? = item;
    }
    Some((items, whole, function_config, scan))
}

/// Read a ResourceList (`config.kubernetes.io/v1`, `v1beta1`, `v1alpha1`, or a `List`).
pub fn read(text: &str) -> Result<ResourceList, InputError> {
    yaml::check_input_size(text).map_err(|e| InputError(e.to_string()))?;
    let chunks = yaml::split_documents(text);
    if chunks.len() != 1 {
        return Err(InputError(format!(
            "input is not a ResourceList: expected one YAML document of kind ResourceList, found {} documents",
            chunks.len()
        )));
    }
    let (first_line, doc) = chunks[0];
    let (value, shape) = yaml::parse_with_shape(doc).map_err(|e| {
        let e = yaml::YamlError {
            line: e.line.map(|l| l + first_line - 1),
            message: e.message,
        };
        InputError(format!("input is not valid YAML: {e}"))
    })?;
    let Value::Object(mut map) = value else {
        let what = if value.is_null() {
            "empty"
        } else {
            "not a mapping"
        };
        return Err(InputError(format!(
            "input is not a ResourceList: the document is {what}"
        )));
    };
    let doc_start = doc.as_ptr() as usize - text.as_ptr() as usize;
    let function_config = function_config_of(&mut map)?;
    let items = match map.shift_remove("items") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(InputError(format!(
                "input is not a ResourceList: items must be a list, not {}",
                crate::strict::type_name(&other)
            )));
        }
    };
    if let Some(i) = items.iter().position(|item| !item.is_object()) {
        return Err(InputError(format!(
            "input is not a ResourceList: items[{i}] is not an object"
        )));
    }
    // Aliases and merge keys tie items' text to other places; re-emit in that case.
    let plain = shape.aliases == 0 && shape.anchors == 0 && shape.merge_keys == 0;
    // (Flow layouts have nothing to copy, and the items are already whole.)
    let verbatim = plain
        .then(|| scan_items(doc_start, doc, None, Build::Full).ok())
        .flatten()
        .filter(|scan| !scan.reemit && scan.ranges.len() == items.len())
        .map(|scan| Verbatim {
            text: text.to_owned(),
            dash_column: scan.dash_column,
            ranges: scan.ranges.into_iter().map(Some).collect(),
            reemit: false,
            stream: false,
            whole: Vec::new(),
        });
    if verbatim.is_none() {
        faithful(text)?;
    }
    Ok(ResourceList {
        items,
        function_config,
        verbatim,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 20: items' places are 32-bit offsets, so function mode refuses a longer input by
    /// name, whatever the input limit allows (4 GiB cannot be allocated in a test: the check
    /// itself, at its edge).
    #[test]
    fn issue20_inputs_past_4_gib_are_refused() {
        assert_eq!(addressable(0), Ok(()));
        assert_eq!(addressable(Span::MAX_TEXT), Ok(()));
        let err = addressable(Span::MAX_TEXT + 1).unwrap_err().to_string();
        assert!(err.contains("input is 4294967296 bytes"), "{err}");
        assert!(err.contains("4 GiB"), "{err}");
        assert!(err.contains("KRM_CATALOG_MAX_INPUT_BYTES"), "{err}");
    }

    /// An item the scan's builder leaves to `yaml::parse` (a tag deep inside) is parsed from its
    /// text after later items were read; the items kept whole stay marked so.
    #[test]
    fn items_left_by_the_builder_are_parsed_from_their_text() {
        let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: Keep\n  metadata: {name: a}\n  data: {n: !!str 1}\n- apiVersion: v1\n  kind: Keep\n  metadata: {name: b}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n";
        let keep = |item: &Map<String, Value>| item.get("kind") == Some(&Value::from("Keep"));
        let list = read_owned_keeping(input.to_owned(), keep).unwrap();
        let verbatim = list.verbatim.as_ref().unwrap();
        assert_eq!(verbatim.whole, vec![true, true]);
        assert_eq!(list.items[0].value()["data"]["n"], "1");
        assert_eq!(list.items[1].value()["metadata"]["name"], "b");
        assert_eq!(list.items[2].value()["metadata"]["name"], "c");
        let eager = read(input).unwrap();
        assert_eq!(*list.items[0].value(), eager.items[0]);
    }

    /// The lean scan (values of items left alone checked, not built) reads what the full scan
    /// reads, or asks for it: same items, same items kept whole, same ranges.
    #[test]
    fn the_lean_scan_reads_what_the_full_scan_reads() {
        let keep = |item: &Map<String, Value>| item.get("kind") == Some(&Value::from("Keep"));
        let item = |body: &str| {
            format!(
                "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    labels: {{x: y}}\n    annotations: {{config.kubernetes.io/path: p.yaml, other: o}}\n{body}"
            )
        };
        let bodies = [
            "  data: {a: '1', b: [x, {c: d}]}\n",
            "  data: {a: 1, a: 2}\n",
            "  data: {a: !!str 1}\n",
            "  data: {a: .inf}\n",
            "  data: {<<: {a: 1}}\n",
            "  spec: 1\n  spec: 2\n",
            "  data: {? [k]: v}\n",
        ];
        for body in bodies {
            for kind in ["ConfigMap", "Keep"] {
                let items = format!(
                    "{}{}",
                    item(body).replace("ConfigMap", kind),
                    item("  data: {z: y}\n")
                );
                let input = format!(
                    "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}"
                );
                let full = read_skeletons(&input, &keep, false);
                let lean = match read_skeletons(&input, &keep, true) {
                    Err(NoScan::Redo) => {
                        assert!(body.contains("<<"), "{input}");
                        continue;
                    }
                    other => other,
                };
                match (full, lean) {
                    (Ok(full), Ok(lean)) => {
                        assert_eq!(full.0, lean.0, "{input}");
                        assert_eq!(full.1, lean.1, "{input}");
                        assert_eq!(full.2, lean.2, "{input}");
                        assert_eq!(full.3.ranges, lean.3.ranges, "{input}");
                    }
                    (Err(full), Err(lean)) => assert_eq!(full, lean, "{input}"),
                    (full, lean) => panic!("{input}: {:?} / {:?}", full.is_ok(), lean.is_ok()),
                }
            }
        }
    }
}

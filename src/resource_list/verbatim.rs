//! Where each item's text sits in the input, from the parser's own event positions, so
//! untouched items are copied to the output as they came.

use serde_json::Value;

use crate::yaml;

/// Where each item's text sits in the input.
///
/// kpt restores comments and key order of what a function returns, but takes scalar styles
/// from the function's output: re-emitting an untouched `flag: 'on'` as `flag: "on"` would
/// show up as a diff in files the function has nothing to do with. So untouched items are
/// copied from the input instead of re-emitted (which is also faster).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verbatim {
    /// The whole input (function mode holds it for the whole run anyway).
    pub text: String,
    /// Column of the items' `-` markers in the input.
    pub dash_column: usize,
    /// For each item (aligned with `items`), its text, or `None` to emit it anew.
    pub ranges: Vec<Option<Span>>,
    /// The ranges are the items' nodes in a flow sequence (JSON, `items: [...]`): they are
    /// parsed and re-emitted one at a time when written, never copied, so that memory stays
    /// near the input size for these layouts too.
    pub reemit: bool,
    /// The items were read by the streaming reader (anchors and aliases, tags, CRLF, ...):
    /// `text` is the input, whose items' text cannot be copied, and the span of an item is
    /// `j..j + 1`, its place among the items of `text`. They are read again, in one pass, when
    /// written ([`Verbatim::each_item`]) or hydrated ([`Verbatim::items_at`]).
    pub stream: bool,
    /// Items (by index, aligned with `ranges`) that were read whole: their value is the full
    /// item already, so nothing needs to read their text again. Empty when none are.
    pub whole: Vec<bool>,
}

/// Where an item's text is in [`Verbatim::text`]: a non-empty range with 32-bit offsets, 8
/// bytes per item (and as an `Option`), where a `Range<usize>` took 16 and its `Option` 24
/// (issue 20). Texts of more than [`Span::MAX_TEXT`] bytes have no spans: `read_owned`
/// refuses such inputs, `read` re-emits their items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    start: u32,
    end: std::num::NonZeroU32,
}

impl Span {
    /// The longest text spans reach into: 4 GiB - 1.
    pub const MAX_TEXT: usize = u32::MAX as usize;

    /// The span of `range`; `None` if it is empty or ends past [`Span::MAX_TEXT`].
    pub fn new(range: std::ops::Range<usize>) -> Option<Self> {
        let start = u32::try_from(range.start).ok()?;
        let end = u32::try_from(range.end).ok()?;
        (start < end).then_some(Span {
            start,
            end: std::num::NonZeroU32::new(end)?,
        })
    }

    /// The span as a range of byte offsets.
    pub fn range(self) -> std::ops::Range<usize> {
        // (u32 to usize: lossless on the 32- and 64-bit targets Rust's std supports here.)
        let wide = |n: u32| usize::try_from(n).unwrap_or(usize::MAX);
        wide(self.start)..wide(self.end.get())
    }
}

/// The top-level block sequence `items:` as text: the column of its `-` markers and the range
/// of every entry. `None` whenever the layout is not the plain block form orchestrators write
/// (flow style, JSON, CRLF, anchors, tags on the sequence); callers then parse everything.
pub(super) struct ItemsText {
    pub(super) dash_column: usize,
    pub(super) ranges: Vec<Span>,
    /// Flow sequence: the ranges are the items' nodes, to be re-emitted (see [`Verbatim`]).
    pub(super) reemit: bool,
}

/// What [`item_nodes`] found: the `items` key, its entries and whether it is in flow style.
type Found = (std::ops::Range<usize>, Vec<Span>, bool);

/// How [`scan_items`] builds the items it hands to its `on_item`.
#[derive(Clone, Copy)]
pub(super) enum Build<'k> {
    /// Whole values.
    Full,
    /// [`yaml::NodeBuilder::lean`] values: items the function does not keep hold what a
    /// skeleton reads, not necessarily more.
    Lean(&'k dyn Fn(&serde_json::Map<String, Value>) -> bool),
}

/// Why [`scan_items`] has no answer.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum NoScan {
    /// The layout is not one we copy (or the text does not parse).
    Layout,
    /// A lean builder met what it does not mirror: scan again with [`Build::Full`].
    Redo,
}

/// The entries of the top-level `items` sequence as the YAML parser itself sees them
/// (serde-saphyr's parser, granit-parser, so the positions are those of the very parse that
/// produced the items). A text scanner looking for `items:` can be fooled by another key
/// spelled to look like it (`"items:#x":`, a string holding a fake list): this cannot.
/// `None` for anything but an untagged, unanchored sequence of mappings without aliases;
/// the flag says whether the sequence is in flow style. With `on_item`, each item's value is
/// built from the same events and handed over as soon as it is complete (`None` where the
/// builder leaves the item to [`yaml::parse`]), so the text is parsed once.
fn item_nodes(
    doc: &str,
    on_item: Option<&mut dyn FnMut(Option<Value>)>,
    build: Build<'_>,
) -> Result<Found, NoScan> {
    let mut redo = false;
    item_events(doc, on_item, build, &mut redo).ok_or(if redo {
        NoScan::Redo
    } else {
        NoScan::Layout
    })
}

/// [`item_nodes`]; `redo` is set where a lean builder gives up.
fn item_events(
    doc: &str,
    mut on_item: Option<&mut dyn FnMut(Option<Value>)>,
    build: Build<'_>,
    redo: &mut bool,
) -> Option<Found> {
    use granit_parser::{Event, StructureStyle};
    let mut parser = granit_parser::Parser::new_from_str(doc);
    let mut depth = 0usize;
    // At depth 1 (the top-level mapping), whether the next node is a key.
    let mut expect_key = true;
    let mut items_key: Option<std::ops::Range<usize>> = None;
    let mut in_items = false;
    let mut flow = false;
    let mut found: Option<Found> = None;
    // Where the parser saw each entry of `items`: its node's first and last byte (relative to
    // the document; a block mapping ends where the next token starts).
    let mut nodes: Vec<Span> = Vec::new();
    let mut open_item: Option<usize> = None;
    // The value of the open item, while it builds; `None` once the builder gave up.
    let mut building: Option<yaml::NodeBuilder> = None;
    let mut documents = 0usize;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.ok()?;
        let bytes = span.byte_range()?;
        match &event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => continue,
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return None;
                }
                continue;
            }
            // Aliases and anchors tie an item's text to other places.
            Event::Alias(_) | Event::Anchor(..) | Event::UnresolvedAlias(_) => return None,
            Event::Scalar(_, _, anchor, _)
            | Event::SequenceStart(_, anchor, _)
            | Event::MappingStart(_, anchor, _)
                if *anchor != 0 =>
            {
                return None;
            }
            _ => {}
        }
        let is_start = matches!(event, Event::SequenceStart(..) | Event::MappingStart(..));
        let is_end = matches!(event, Event::SequenceEnd | Event::MappingEnd);
        // A node begins at `depth`; record items' entries (depth 2 inside `items`).
        if !is_end {
            match depth {
                0 if !matches!(event, Event::MappingStart(..)) => return None,
                1 => {
                    if expect_key {
                        let Event::Scalar(key, _, _, tag) = &event else {
                            return None;
                        };
                        if key == "items" {
                            if tag.is_some() || items_key.is_some() {
                                return None;
                            }
                            items_key = Some(bytes.clone());
                        }
                    } else if items_key.is_some() && found.is_none() && !in_items {
                        let Event::SequenceStart(style, _, None) = &event else {
                            return None;
                        };
                        flow = *style == StructureStyle::Flow;
                        in_items = true;
                    }
                    expect_key = !expect_key;
                }
                2 if in_items => {
                    // A tag is outside the node's span (and may change what it means).
                    let Event::MappingStart(_, _, None) = event else {
                        return None;
                    };
                    open_item = Some(bytes.start);
                    if on_item.is_some() {
                        // The budgets are the document's: the item's start event is a few
                        // bytes, and a budget from it (the 1M-node floor) gave up on every
                        // item of more than a million nodes, which then was parsed whole
                        // (issue 21 F8: one 24 MiB item took 20 times its size).
                        building = Some(match build {
                            Build::Full => yaml::NodeBuilder::new(doc.len()),
                            Build::Lean(keep) => yaml::NodeBuilder::lean(
                                doc.len(),
                                keep,
                                &super::item::wanted_annotation,
                            ),
                        });
                    }
                }
                _ => {}
            }
        }
        if let Some(builder) = building.as_mut()
            && builder.feed(event).is_none()
        {
            if builder.needs_full() {
                *redo = true;
                return None;
            }
            building = None;
            if let Some(on_item) = on_item.as_mut() {
                on_item(None);
            }
        }
        if is_start {
            depth += 1;
        } else if is_end {
            depth = depth.checked_sub(1)?;
            if depth == 2
                && let Some(start) = open_item.take()
            {
                if let (Some(builder), Some(on_item)) = (building.take(), on_item.as_mut()) {
                    on_item(builder.finish());
                }
                nodes.push(Span::new(start..bytes.end)?);
            } else if depth == 1 && in_items {
                in_items = false;
                found = Some((items_key.clone()?, std::mem::take(&mut nodes), flow));
            }
        }
    }
    found
}

/// Skip YAML trivia (spaces, tabs, line breaks, comments) from `at`; returns where it stops.
/// A `#` starts a comment only at the start of a line or after whitespace.
fn skip_trivia(text: &str, mut at: usize) -> usize {
    let bytes = text.as_bytes();
    while at < bytes.len() {
        match bytes[at] {
            b' ' | b'\t' | b'\n' => at += 1,
            b'#' if at == 0 || matches!(bytes[at - 1], b' ' | b'\t' | b'\n') => {
                at = text[at..].find('\n').map_or(bytes.len(), |n| at + n);
            }
            _ => break,
        }
    }
    at
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |n| n + 1)
}

/// The verbatim range of every entry of `items`, from the parser's positions: entry `i` runs
/// from the start of the line of its `-` to the start of the line of the next `-` (comments
/// between entries go with the one above), the last one to the end of the trivia after it.
/// Everything in a range besides the parsed node must be trivia and the one `-`, or the
/// layout is not one we copy.
///
/// `on_item` receives each item's value as [`item_nodes`] builds it.
pub(super) fn scan_items(
    doc_start: usize,
    doc: &str,
    on_item: Option<&mut dyn FnMut(Option<Value>)>,
    build: Build<'_>,
) -> Result<ItemsText, NoScan> {
    let (key, nodes, flow) = item_nodes(doc, on_item, build)?;
    ranges_of(doc_start, doc, &key, &nodes, flow).ok_or(NoScan::Layout)
}

/// The ranges of [`scan_items`] from the parser's positions.
fn ranges_of(
    doc_start: usize,
    doc: &str,
    key: &std::ops::Range<usize>,
    nodes: &[Span],
    flow: bool,
) -> Option<ItemsText> {
    let span =
        |range: std::ops::Range<usize>| Span::new(doc_start + range.start..doc_start + range.end);
    if flow {
        return Some(ItemsText {
            dash_column: 0,
            ranges: nodes
                .iter()
                .map(|n| span(n.range()))
                .collect::<Option<_>>()?,
            reemit: true,
        });
    }
    if doc.contains('\r') {
        return None;
    }
    let bytes = doc.as_bytes();
    // The `:` after the key, then trivia.
    let colon = skip_trivia(doc, key.end);
    if bytes.get(colon) != Some(&b':') {
        return None;
    }
    let mut cursor = colon + 1;
    let mut dash_column = None;
    // Entry `i` runs from its line's start to the next entry's (pushed when that is found).
    let mut ranges = Vec::with_capacity(nodes.len());
    let mut open: Option<usize> = None;
    for node in nodes {
        let node = node.range();
        let dash = skip_trivia(doc, cursor);
        if bytes.get(dash) != Some(&b'-') || node.start <= dash {
            return None;
        }
        // `-` must be followed by whitespace and only trivia up to the node.
        if !matches!(bytes.get(dash + 1), Some(b' ' | b'\t' | b'\n'))
            || skip_trivia(doc, dash + 1) != node.start
        {
            return None;
        }
        let start = line_start(doc, dash);
        if !doc[start..dash].bytes().all(|b| b == b' ') {
            return None;
        }
        if *dash_column.get_or_insert(dash - start) != dash - start {
            return None;
        }
        if let Some(before) = open.replace(start) {
            ranges.push(span(before..start)?);
        }
        cursor = node.end;
    }
    let last_end = nodes.last()?.range().end;
    // The last entry takes the rest of its line and the blank and comment lines after it.
    let mut end = if doc[line_start(doc, last_end)..last_end]
        .bytes()
        .all(|b| b == b' ')
    {
        line_start(doc, last_end)
    } else {
        let after = skip_trivia_in_line(doc, last_end);
        match bytes.get(after) {
            None => doc.len(),
            Some(b'\n') => after + 1,
            Some(_) => return None,
        }
    };
    while end < doc.len() {
        let next = doc[end..].find('\n').map_or(doc.len(), |n| end + n + 1);
        let line = doc[end..next].trim_start_matches([' ', '\t']);
        if line.trim_end().is_empty() || line.starts_with('#') {
            end = next;
        } else {
            break;
        }
    }
    ranges.push(span(open?..end)?);
    Some(ItemsText {
        dash_column: dash_column.unwrap_or(0),
        ranges,
        reemit: false,
    })
}

/// Skip spaces, tabs and a comment on the current line.
fn skip_trivia_in_line(text: &str, mut at: usize) -> usize {
    let bytes = text.as_bytes();
    while at < bytes.len() {
        match bytes[at] {
            b' ' | b'\t' => at += 1,
            b'#' if at == 0 || matches!(bytes[at - 1], b' ' | b'\t') => {
                return text[at..].find('\n').map_or(bytes.len(), |n| at + n);
            }
            _ => break,
        }
    }
    at
}

impl Verbatim {
    /// Whether item `i` was read whole (see [`Verbatim::whole`]).
    pub fn is_whole(&self, i: usize) -> bool {
        self.whole.get(i).copied().unwrap_or(false)
    }

    /// The full item whose text is at `span` (items read by [`read_owned`] are skeletons).
    /// For several items, [`Verbatim::items_at`]: of a streamed text, it reads them in one pass.
    pub fn item_at(&self, span: Span) -> Option<Value> {
        if self.stream {
            return self.items_at(&[span]).pop().flatten();
        }
        let (value, _) = yaml::parse_with_shape(self.text.get(span.range())?).ok()?;
        match value {
            Value::Array(mut one) if !self.reemit && one.len() == 1 => one.pop(),
            item @ Value::Object(_) if self.reemit => Some(item),
            _ => None,
        }
    }
}

impl Verbatim {
    /// [`Verbatim::item_at`] of each span, in the order given.
    pub fn items_at(&self, spans: &[Span]) -> Vec<Option<Value>> {
        if !self.stream {
            return spans.iter().map(|span| self.item_at(*span)).collect();
        }
        let mut found: Vec<Option<Value>> = vec![None; spans.len()];
        let mut wanted: Vec<(usize, usize)> = spans
            .iter()
            .enumerate()
            .map(|(at, span)| (span.range().start, at))
            .collect();
        wanted.sort_unstable();
        if wanted.is_empty() {
            return found;
        }
        let (mut next, mut j) = (0, 0);
        self.each_item(|item| {
            let mut item = Some(item);
            while let Some(&(_, at)) = wanted.get(next).filter(|(index, _)| *index == j) {
                next += 1;
                let again = wanted.get(next).is_some_and(|(index, _)| *index == j);
                let value = if again { item.clone() } else { item.take() };
                if let Some(slot) = found.get_mut(at) {
                    *slot = value.map(Value::Object);
                }
            }
            j += 1;
            next < wanted.len()
        });
        found
    }

    /// Each item of a streamed text (see [`Verbatim::stream`]), in order, as its full value;
    /// `each` answers whether to go on.
    pub(super) fn each_item(&self, mut each: impl FnMut(serde_json::Map<String, Value>) -> bool) {
        let _ = super::stream::each_item(&self.text, &mut each);
    }
}

#[cfg(test)]
mod verbatim_tests {
    use crate::resource_list::{read, write};

    fn round_trip(input: &str) -> String {
        write(read(input).unwrap(), None)
    }

    #[test]
    fn untouched_items_keep_their_text() {
        let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- # header comment\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a # trailing\n  data: {flag: 'on'}\n\n# between items\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: f}\n";
        let out = round_trip(input);
        assert!(
            out.contains("- # header comment\n  apiVersion: v1\n"),
            "{out}"
        );
        assert!(out.contains("  data: {flag: 'on'}\n"), "{out}");
        assert!(
            out.contains(
                "# between items\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n"
            ),
            "{out}"
        );
        assert_eq!(read(&out).unwrap().items, read(input).unwrap().items);
    }

    #[test]
    fn indented_sequences_are_dedented() {
        let input = "kind: ResourceList\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: a\n    data:\n      script: |\n        line\n          indented\n";
        let out = round_trip(input);
        assert!(
            out.contains("items:\n- apiVersion: v1\n  kind: ConfigMap\n"),
            "{out}"
        );
        assert_eq!(read(&out).unwrap().items, read(input).unwrap().items);
    }

    #[test]
    fn other_layouts_are_re_emitted() {
        for input in [
            "{\"kind\": \"ResourceList\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}}]}",
            "kind: ResourceList\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}]\n",
            "kind: ResourceList\r\nitems:\r\n- apiVersion: v1\r\n  kind: ConfigMap\r\n  metadata: {name: a}\r\n",
            "kind: ResourceList\nitems:\n- &a\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- *a\n",
        ] {
            let list = read(input).unwrap();
            assert!(list.verbatim.is_none(), "{input:?}");
            let out = write(list.clone(), None);
            assert_eq!(read(&out).unwrap().items, list.items, "{input:?}");
        }
    }
}

#[cfg(test)]
mod issue9_f1 {
    use crate::resource_list::{read, read_owned, str_at, write};

    /// The real key is `items :`; a second top-level key `items:#x` starts like `items:` and
    /// carries a ClusterRoleBinding. Only the ConfigMap is an item.
    const SPOOF: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems :\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: harmless\nitems:#x:\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRoleBinding\n  metadata:\n    name: evil\n  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n  subjects: [{kind: User, name: mallory}]\n";

    #[test]
    fn issue9_f1_a_key_spelled_like_items_cannot_replace_an_item() {
        for list in [
            read(SPOOF).unwrap().into(),
            read_owned(SPOOF.to_owned()).unwrap(),
        ] {
            let out = write(list, None);
            assert!(!out.contains("ClusterRoleBinding"), "{out}");
            let back = read(&out).unwrap();
            assert_eq!(back.items.len(), 1, "{out}");
            assert_eq!(str_at(&back.items[0], &["kind"]), "ConfigMap", "{out}");
        }
    }
}

/// For generated top-level layouts, what we write back parses to the items we read.
#[cfg(test)]
mod layout_properties {
    use super::*;
    use crate::resource_list::{Item, ResourceList, read, read_owned, write};
    use proptest::prelude::*;
    use std::fmt::Write as _;

    #[derive(Debug, Clone)]
    struct Layout {
        /// How the `items` key is written.
        key: &'static str,
        /// Between `items:` and the first entry.
        after_key: &'static str,
        /// Column of the `-` markers (block style), or flow style.
        indent: Option<usize>,
        /// Per item: its name, whether it is written as a flow mapping, a comment before it,
        /// whether it has a tricky scalar.
        items: Vec<(u8, bool, bool, bool)>,
        /// Other top-level entries and where `items` goes among them.
        decoys: Vec<&'static str>,
        items_position: usize,
        /// An anchor in the header and an alias to it in the first item.
        anchored: bool,
    }

    const KEYS: &[&str] = &[
        "items:",
        "items :",
        "\"items\":",
        "'items':",
        "? items\n:",
        "!!str items:",
    ];
    const AFTER_KEY: &[&str] = &["", " # comment", "\n# comment line", " !!seq", "\n\n"];
    const DECOYS: &[&str] = &[
        "apiVersion: config.kubernetes.io/v1",
        "kind: ResourceList",
        "items:#x:\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRoleBinding\n  metadata: {name: evil}",
        "\"items:#y\":\n- {apiVersion: v1, kind: Secret, metadata: {name: evil}}",
        "itemsx:\n- kind: Evil",
        "note: \"items:\n  - kind: Evil\"",
        "script: |\n  items:\n  - kind: Evil",
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: fc}",
        "# items:\n# - kind: Evil",
    ];

    fn render(layout: &Layout) -> String {
        let mut items_text = String::new();
        let _ = write!(items_text, "{}{}", layout.key, layout.after_key);
        match layout.indent {
            None => {
                items_text.push_str("\n  [");
                for (i, (name, _, _, tricky)) in layout.items.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    let data = if *tricky { ", data: {f: 'on'}" } else { "" };
                    let _ = write!(
                        items_text,
                        "{sep}{{apiVersion: v1, kind: ConfigMap, metadata: {{name: n{name}}}{data}}}"
                    );
                }
                items_text.push_str("]\n");
            }
            Some(col) => {
                items_text.push('\n');
                let pad = " ".repeat(col);
                for (i, (name, flow, comment, tricky)) in layout.items.iter().enumerate() {
                    if *comment {
                        let _ = writeln!(items_text, "{pad}# before {name}\n");
                    }
                    let labels = if layout.anchored && i == 0 {
                        ", labels: *l"
                    } else {
                        ""
                    };
                    if *flow {
                        let data = if *tricky { ", data: {f: 'on'}" } else { "" };
                        let _ = writeln!(
                            items_text,
                            "{pad}- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: n{name}{labels}}}{data}}} # after"
                        );
                    } else {
                        let _ = writeln!(
                            items_text,
                            "{pad}- apiVersion: v1\n{pad}  kind: ConfigMap\n{pad}  metadata: {{name: n{name}{labels}}}"
                        );
                        if *tricky {
                            let _ = writeln!(
                                items_text,
                                "{pad}  data:\n{pad}    s: |\n{pad}      items:\n{pad}      - kind: Evil\n{pad}    q: \"a\n{pad}      b\""
                            );
                        }
                    }
                }
            }
        }
        let mut out = String::new();
        if layout.anchored {
            out.push_str("labels: &l {team: a}\n");
        }
        let position = layout.items_position.min(layout.decoys.len());
        for (i, decoy) in layout.decoys.iter().enumerate() {
            if i == position {
                out.push_str(&items_text);
            }
            let _ = writeln!(out, "{decoy}");
        }
        if position == layout.decoys.len() {
            out.push_str(&items_text);
        }
        if !layout.decoys.contains(&"kind: ResourceList") {
            out.push_str("kind: ResourceList\n");
        }
        out
    }

    fn layout() -> impl Strategy<Value = Layout> {
        (
            prop::sample::select(KEYS),
            prop::sample::select(AFTER_KEY),
            prop_oneof![Just(None), (0usize..4).prop_map(Some)],
            prop::collection::vec(
                (any::<u8>(), any::<bool>(), any::<bool>(), any::<bool>()),
                1..5,
            ),
            prop::sample::subsequence(DECOYS, 0..DECOYS.len()).prop_shuffle(),
            0usize..8,
            any::<bool>(),
        )
            .prop_map(
                |(key, after_key, indent, items, decoys, items_position, anchored)| Layout {
                    key,
                    after_key,
                    indent,
                    items,
                    decoys,
                    items_position,
                    anchored,
                },
            )
    }

    /// The pipeline reads skeletons' bodies when it needs them; here, all of them.
    fn hydrated(mut list: ResourceList<Item>) -> Vec<Value> {
        if let Some(v) = &list.verbatim {
            for (item, range) in list.items.iter_mut().zip(&v.ranges) {
                if let Some(full) = range.and_then(|r| v.item_at(r)) {
                    *item = Item::from(full);
                }
            }
        }
        list.items.into_iter().map(Item::into_value).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(768))]

        #[test]
        fn written_items_are_the_items_read(layout in layout()) {
            let input = render(&layout);
            let eager = read(&input);
            let eager = eager.map_err(|e| TestCaseError::fail(format!("{e}\ninput:\n{input}")))?;
            prop_assert_eq!(eager.items.len(), layout.items.len(), "input:\n{}", input);
            let lazy = read_owned(input.clone()).unwrap();
            prop_assert_eq!(&hydrated(lazy.clone()), &eager.items, "lazy read of:\n{}", input);
            for list in [eager.clone().into(), lazy] {
                let out = write::<Item>(list, None);
                let back = read(&out).unwrap();
                prop_assert_eq!(&back.items, &eager.items, "input:\n{}\noutput:\n{}", input, out);
            }
        }
    }
}

#[cfg(test)]
mod issue15_f8 {
    use super::{Build, scan_items};
    use serde_json::Value;

    /// One item of more than a million nodes (the builder's floor) in a document of a few MB:
    /// the lean builder must finish it, not give up and leave it to a whole parse, which held
    /// 20 times the item's size (a 24 MiB item peaked at 480 MiB).
    #[test]
    fn issue15_f8_one_huge_item_is_built_lean() {
        let mut doc = String::from(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: huge\n  data:\n    values: [0",
        );
        for i in 1..1_200_000 {
            doc.push_str(if i % 2 == 0 { ", 1" } else { ", 2" });
        }
        doc.push_str("]\n");
        let mut built: Vec<Option<Value>> = Vec::new();
        let mut on_item = |value: Option<Value>| built.push(value);
        let keep_none = |_: &serde_json::Map<String, Value>| false;
        let scan = scan_items(0, &doc, Some(&mut on_item), Build::Lean(&keep_none));
        assert!(scan.is_ok(), "the plain layout is scanned");
        let [Some(Value::Object(item))] = built.as_slice() else {
            panic!("the builder gave up on the huge item: {built:?}");
        };
        assert_eq!(item["metadata"]["name"], "huge");
        // Lean: what a skeleton reads, nothing of the 1.2M values.
        assert!(
            item.get("data")
                .is_none_or(|data| data.to_string().len() < 100),
            "data was built: {}",
            item["data"].to_string().len()
        );
    }
}

//! A `Value` built straight from the parser's events (issue 13).
//!
//! Going through serde-saphyr's serde deserializer costs most of a pass-through run: every key
//! is captured as a replayable node, fingerprinted and hashed twice, every scalar goes through
//! a visitor. This reader walks granit-parser's events (serde-saphyr's own parser) once and
//! builds the `serde_json::Value` directly, resolving scalars exactly as serde-saphyr does into
//! a `serde_json::Value` with the options of [`super::options_for`] (YAML 1.2 core schema,
//! strict booleans, `null`/`~`/empty as null, `0x`/`0o`/`0b` ints, big ints as floats,
//! non-finite floats refused), with merge keys (`<<`) and aliases as it has them.
//!
//! It handles what Kubernetes YAML is made of. Whatever it does not handle the same way, or
//! would refuse (tags, complex or null keys, duplicate keys, recursive aliases, a budget
//! breach, a syntax error, several documents), makes it answer `None`: the caller then runs
//! serde-saphyr on the same text, whose value or error is the answer. So results and errors are
//! serde-saphyr's own by construction; the property tests in `yaml.rs` check that the values
//! agree wherever this reader answers.

use std::borrow::Cow;
use std::collections::HashSet;

use granit_parser::{Event, Parser, ScalarStyle};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::{EXPANSION_FACTOR, MAX_DEPTH, MIN_EXPANDED_NODES, Shape};

pub(super) mod scalar;
use scalar::{Plain, plain, resolve};

/// serde-saphyr's `AliasLimits::max_total_replayed_events` default (not scaled to the input).
const MAX_REPLAYED_EVENTS: usize = 1_000_000;

/// What was counted while reading, as serde-saphyr's budget counts it (aliases expanded).
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    nodes: usize,
    events: usize,
    scalar_bytes: usize,
}

/// A finished anchored node: its value and what expanding it again costs.
struct Anchored {
    value: Value,
    counts: Counts,
    /// Nesting levels the value adds where it is expanded.
    depth: usize,
}

/// Where the next node of a mapping goes.
enum Slot {
    Key,
    Value(String),
    Merge,
    /// A lean builder checks the value without building it (see [`NodeBuilder::lean`]).
    Skip,
}

/// Which keys of a mapping a lean builder builds; the others' values are only checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// Every key (a full builder, or below the levels a skeleton reads).
    All,
    /// The item itself: `apiVersion`, `kind`, `metadata`.
    Item,
    /// The item's `metadata`: `name`, `namespace`, `annotations`.
    Metadata,
    /// The item's `metadata.annotations`: those the lean builder's `annotation` picks.
    Annotations,
}

impl Level {
    fn wants(self, key: &str, annotation: &dyn Fn(&str) -> bool) -> bool {
        match self {
            Level::All => true,
            Level::Item => matches!(key, "apiVersion" | "kind" | "metadata"),
            Level::Metadata => matches!(key, "name" | "namespace" | "annotations"),
            Level::Annotations => annotation(key),
        }
    }
}

enum Frame {
    Seq {
        items: Vec<Value>,
        anchor: usize,
        start: Counts,
    },
    Map {
        map: Map<String, Value>,
        slot: Slot,
        /// `<<` values, in order: merged after the explicit keys, first one wins.
        merges: Vec<Value>,
        anchor: usize,
        start: Counts,
        level: Level,
        /// Where its keys whose values were skipped start in [`Lean::skipped`] (duplicate
        /// keys are refused all the same).
        skipped_from: usize,
    },
}

/// Keys of a skipped mapping are compared one by one up to this many, then hashed.
const LINEAR_KEYS: usize = 16;

/// A collection inside a skipped value.
enum Skipped<'a> {
    Seq,
    Map {
        /// Where its keys start in [`Lean::keys`].
        keys_from: usize,
        expect_key: bool,
        /// Its keys, once there are more than [`LINEAR_KEYS`].
        set: Option<HashSet<Cow<'a, str>>>,
    },
}

/// The state of a lean builder (see [`NodeBuilder::lean`]).
struct Lean<'a> {
    /// Whether an item is built whole, from the keys read so far.
    keep: &'a dyn Fn(&Map<String, Value>) -> bool,
    /// Which annotations are built (the others' values are skipped like other keys').
    annotation: &'a dyn Fn(&str) -> bool,
    /// Whether the values of keys other than those a skeleton reads are skipped; decided at
    /// the first such key.
    skip: Option<bool>,
    /// The open collections of the value being skipped.
    frames: Vec<Skipped<'a>>,
    /// Keys of the open skipped mappings.
    keys: Vec<Cow<'a, str>>,
    /// Keys of the open built mappings whose values were skipped, innermost last (one vector
    /// for all, not one per mapping: most items have a few such keys in three mappings).
    skipped: Vec<Cow<'a, str>>,
    /// Something the skipping does not mirror was met: build the item in full instead.
    redo: bool,
}

/// The limits of [`super::options_for`], as far as they are known before the parse.
struct Limits {
    /// Nodes alias expansion may produce while reading (the final check uses the written nodes).
    nodes: usize,
    scalar_bytes: usize,
    aliases: usize,
    anchors: usize,
}

struct Reader<'a> {
    stack: Vec<Frame>,
    root: Option<Value>,
    anchors: Vec<Option<Anchored>>,
    counts: Counts,
    written: usize,
    replayed: usize,
    recorded: usize,
    shape: Shape,
    documents: usize,
    limits: Limits,
    lean: Option<Lean<'a>>,
}

fn expanded_nodes(written: usize) -> usize {
    written
        .saturating_mul(EXPANSION_FACTOR)
        .max(MIN_EXPANDED_NODES)
}

/// Read one YAML document (or none) into a value, or `None` when serde-saphyr must decide (see
/// the module documentation).
pub(super) fn read(text: &str) -> Option<(Option<Value>, Shape)> {
    let mut reader = Reader::new(text.len());
    let mut parser = Parser::new_from_str(text);
    while let Some(next) = parser.next_event() {
        let (event, _) = next.ok()?;
        reader.counts.events += 1;
        reader.event(event)?;
    }
    reader.end(text.contains('&') && text.contains('*'))
}

/// A value built from the events of one node inside a larger parse (the ResourceList reader
/// builds each item while it looks for where the items are, so the text is parsed once). The
/// node must hold no anchor or alias (the caller refuses those layouts); `None` from
/// [`NodeBuilder::feed`] or [`NodeBuilder::finish`] means: parse the node's text with
/// [`super::parse`] instead, which decides (unless [`NodeBuilder::needs_full`]).
pub struct NodeBuilder<'a>(Reader<'a>);

impl<'a> NodeBuilder<'a> {
    /// A builder under the budgets [`super::parse`] gives a text of `len` bytes.
    pub fn new(len: usize) -> Self {
        let mut reader = Reader::new(len);
        // As if the node were a document of its own.
        reader.documents = 1;
        NodeBuilder(reader)
    }

    /// A builder for a ResourceList item (a mapping) the run may leave alone. At the first
    /// key other than `apiVersion`, `kind` and `metadata` (in `metadata`: `name`,
    /// `namespace`, `annotations`; in `annotations`: those `annotation` picks), `keep` is
    /// asked with the item's keys read so far; if it refuses, the values of such keys are
    /// from then on checked as [`NodeBuilder::new`] would read them (tags, keys, duplicates,
    /// scalars, depth, budgets) but not built. So
    /// `None` comes exactly where the full builder's would, and the value has every key the
    /// full one has but those skipped. If `keep` takes the finished value after all, the
    /// builder answers `None` (parse the item's text). Where the check does not mirror the
    /// full builder (a `<<` merge key in those mappings or below them), `feed` answers `None`
    /// and [`NodeBuilder::needs_full`] says to build the item with [`NodeBuilder::new`].
    pub fn lean(
        len: usize,
        keep: &'a dyn Fn(&Map<String, Value>) -> bool,
        annotation: &'a dyn Fn(&str) -> bool,
    ) -> Self {
        let mut builder = NodeBuilder::new(len);
        builder.0.lean = Some(Lean {
            keep,
            annotation,
            skip: None,
            frames: Vec::new(),
            keys: Vec::new(),
            skipped: Vec::new(),
            redo: false,
        });
        builder
    }

    /// Whether a lean builder gave up on something it does not mirror (see
    /// [`NodeBuilder::lean`]): its `None` means nothing, the item needs a full builder.
    pub fn needs_full(&self) -> bool {
        self.0.lean.as_ref().is_some_and(|lean| lean.redo)
    }

    /// The next event of the node, from its start event to its end event.
    pub fn feed(&mut self, event: Event<'a>) -> Option<()> {
        self.0.counts.events += 1;
        self.0.event(event)
    }

    /// The node's value, once its end event was fed.
    pub fn finish(self) -> Option<Value> {
        let lean = self.0.lean.as_ref().map(|lean| (lean.keep, lean.skip));
        let value = self.0.end(false)?.0?;
        if let (Some((keep, Some(true))), Value::Object(map)) = (lean, &value)
            && keep(map)
        {
            // Kept after all, but values were skipped.
            return None;
        }
        Some(value)
    }
}

impl Reader<'_> {
    fn new(len: usize) -> Self {
        Reader {
            stack: Vec::new(),
            root: None,
            anchors: Vec::new(),
            counts: Counts::default(),
            written: 0,
            replayed: 0,
            recorded: 0,
            shape: Shape::default(),
            documents: 0,
            limits: Limits {
                // Without anchors this is the budget itself; with them, the written nodes
                // (counted as the parse goes) are checked at the end.
                nodes: expanded_nodes(len),
                scalar_bytes: len.saturating_mul(EXPANSION_FACTOR).saturating_add(1 << 20),
                aliases: len.max(50_000),
                anchors: len.max(50_000),
            },
            lean: None,
        }
    }

    /// The budget checks that need the whole parse: the node budget of `options_for` is
    /// relative to the written nodes when the text has anchors and aliases; events are bounded
    /// by twice the nodes.
    fn end(self, anchored: bool) -> Option<(Option<Value>, Shape)> {
        let nodes = if anchored {
            expanded_nodes(self.written)
        } else {
            self.limits.nodes
        };
        let c = self.counts;
        if c.nodes > nodes
            || c.events > nodes.saturating_mul(2).saturating_add(1_000)
            || self.recorded > nodes
            || !self.stack.is_empty()
        {
            return None;
        }
        Some((self.root, self.shape))
    }
}

impl<'a> Reader<'a> {
    fn event(&mut self, event: Event<'a>) -> Option<()> {
        if self.skipping() {
            return self.skip(event);
        }
        match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => Some(()),
            Event::DocumentStart(..) => {
                self.documents += 1;
                (self.documents == 1).then_some(())
            }
            Event::Scalar(value, style, anchor, tag) => {
                if tag.is_some() {
                    return None;
                }
                let start = self.before();
                self.node()?;
                self.counts.scalar_bytes = self.counts.scalar_bytes.saturating_add(value.len());
                if self.counts.scalar_bytes > self.limits.scalar_bytes {
                    return None;
                }
                let skip = self.skips(&value);
                if let Some(Frame::Map {
                    slot,
                    level,
                    map,
                    skipped_from,
                    ..
                }) = self.stack.last_mut()
                    && matches!(slot, Slot::Key)
                {
                    // Keys are read as strings: null-like keys are an error for serde-saphyr,
                    // anchored keys would need their value form.
                    if anchor != 0
                        || style == ScalarStyle::Plain
                            && (value.is_empty()
                                || value == "~"
                                || value.eq_ignore_ascii_case("null"))
                    {
                        return None;
                    }
                    if style == ScalarStyle::Plain && value == "<<" {
                        if *level != Level::All
                            && let Some(lean) = self.lean.as_mut()
                        {
                            // Merged keys would fill in skipped ones.
                            lean.redo = true;
                            return None;
                        }
                        self.shape.merge_keys += 1;
                        *slot = Slot::Merge;
                    } else if skip && let Some(lean) = self.lean.as_mut() {
                        // serde-saphyr reports duplicate keys with their position.
                        let skipped = lean.skipped.get(*skipped_from..).unwrap_or_default();
                        if map.contains_key(&*value) || skipped.contains(&value) {
                            return None;
                        }
                        lean.skipped.push(value);
                        *slot = Slot::Skip;
                    } else {
                        *slot = Slot::Value(value.into_owned());
                    }
                    return Some(());
                }
                let value = resolve(value, style)?;
                self.finish(value, anchor, start, 0)
            }
            Event::SequenceStart(_, anchor, tag) => {
                let start = self.open(tag.is_some())?;
                self.stack.push(Frame::Seq {
                    items: Vec::new(),
                    anchor,
                    start,
                });
                Some(())
            }
            Event::MappingStart(_, anchor, tag) => {
                let start = self.open(tag.is_some())?;
                let level = match self.stack.last() {
                    _ if self.lean.is_none() => Level::All,
                    None => Level::Item,
                    Some(Frame::Map {
                        level: Level::Item,
                        slot: Slot::Value(key),
                        ..
                    }) if key == "metadata" => Level::Metadata,
                    Some(Frame::Map {
                        level: Level::Metadata,
                        slot: Slot::Value(key),
                        ..
                    }) if key == "annotations" => Level::Annotations,
                    Some(_) => Level::All,
                };
                self.stack.push(Frame::Map {
                    map: Map::new(),
                    slot: Slot::Key,
                    merges: Vec::new(),
                    anchor,
                    start,
                    level,
                    skipped_from: self.lean.as_ref().map_or(0, |lean| lean.skipped.len()),
                });
                Some(())
            }
            Event::SequenceEnd => {
                let Some(Frame::Seq {
                    items,
                    anchor,
                    start,
                }) = self.stack.pop()
                else {
                    return None;
                };
                self.finish(Value::Array(items), anchor, start, 1)
            }
            Event::MappingEnd => {
                let Some(Frame::Map {
                    mut map,
                    slot: Slot::Key,
                    merges,
                    anchor,
                    start,
                    skipped_from,
                    ..
                }) = self.stack.pop()
                else {
                    return None;
                };
                if let Some(lean) = self.lean.as_mut() {
                    lean.skipped.truncate(skipped_from);
                }
                for source in merges {
                    merge(&mut map, source)?;
                }
                self.finish(Value::Object(map), anchor, start, 1)
            }
            Event::Alias(id) => {
                self.shape.aliases += 1;
                if self.shape.aliases > self.limits.aliases {
                    return None;
                }
                if let Some(Frame::Map {
                    slot: Slot::Key, ..
                }) = self.stack.last()
                {
                    return None;
                }
                // (An anchor still open is a recursive alias.) The budgets are checked before
                // the copy is made, so no expansion outgrows them.
                let anchored = self.anchors.get(id)?.as_ref()?;
                let (counts, depth) = (anchored.counts, anchored.depth);
                self.replayed = self.replayed.saturating_add(counts.events);
                self.counts.nodes = self.counts.nodes.saturating_add(counts.nodes);
                self.counts.events = self.counts.events.saturating_add(counts.events);
                self.counts.scalar_bytes =
                    self.counts.scalar_bytes.saturating_add(counts.scalar_bytes);
                if self.replayed > MAX_REPLAYED_EVENTS
                    || self.counts.nodes > self.limits.nodes
                    || self.counts.scalar_bytes > self.limits.scalar_bytes
                    || self.stack.len() + depth > MAX_DEPTH
                {
                    return None;
                }
                let value = self.anchors.get(id)?.as_ref()?.value.clone();
                self.place(value)
            }
            // Not emitted with the default options; anything new is serde-saphyr's call.
            _ => None,
        }
    }

    /// The counts before the current event (already counted as an event) began a node.
    fn before(&self) -> Counts {
        Counts {
            events: self.counts.events - 1,
            ..self.counts
        }
    }

    /// Count one written node.
    fn node(&mut self) -> Option<()> {
        self.written += 1;
        self.counts.nodes += 1;
        (self.counts.nodes <= self.limits.nodes).then_some(())
    }

    /// A collection starts: it may not be a key, nor be tagged, nor nest too deep. Returns the
    /// counts before it.
    fn open(&mut self, tagged: bool) -> Option<Counts> {
        if tagged || self.stack.len() >= MAX_DEPTH {
            return None;
        }
        if let Some(Frame::Map {
            slot: Slot::Key, ..
        }) = self.stack.last()
        {
            return None;
        }
        let start = self.before();
        self.node()?;
        Some(start)
    }

    /// A node is complete: remember it when anchored, then put it where it goes.
    fn finish(
        &mut self,
        value: Value,
        anchor: usize,
        start: Counts,
        own_depth: usize,
    ) -> Option<()> {
        if anchor != 0 {
            let counts = Counts {
                nodes: self.counts.nodes - start.nodes,
                events: self.counts.events - start.events,
                scalar_bytes: self.counts.scalar_bytes - start.scalar_bytes,
            };
            self.recorded = self.recorded.saturating_add(counts.events);
            let depth = own_depth + nested_depth(&value);
            if self.anchors.len() <= anchor {
                // Anchor IDs count up from 1 in the order of definition.
                if anchor > self.limits.anchors {
                    return None;
                }
                self.anchors.resize_with(anchor + 1, || None);
            }
            let slot = &mut self.anchors[anchor];
            if slot.is_none() {
                self.shape.anchors += 1;
            }
            *slot = Some(Anchored {
                value: value.clone(),
                counts,
                depth,
            });
        }
        self.place(value)
    }

    fn place(&mut self, value: Value) -> Option<()> {
        match self.stack.last_mut() {
            None => {
                if self.root.is_some() {
                    return None;
                }
                self.root = Some(value);
            }
            Some(Frame::Seq { items, .. }) => items.push(value),
            Some(Frame::Map {
                map, slot, merges, ..
            }) => match std::mem::replace(slot, Slot::Key) {
                Slot::Key | Slot::Skip => return None,
                Slot::Merge => merges.push(value),
                Slot::Value(key) => match map.entry(key) {
                    Entry::Vacant(entry) => {
                        entry.insert(value);
                    }
                    // serde-saphyr reports duplicate keys with their position.
                    Entry::Occupied(_) => return None,
                },
            },
        }
        Some(())
    }

    /// Whether a lean builder skips the value of this key of the mapping being read (see
    /// [`NodeBuilder::lean`]); the first key that could be skipped decides for the item.
    fn skips(&mut self, key: &str) -> bool {
        let Some(lean) = self.lean.as_mut() else {
            return false;
        };
        let Some(Frame::Map {
            level,
            slot: Slot::Key,
            ..
        }) = self.stack.last()
        else {
            return false;
        };
        if level.wants(key, lean.annotation) || key == "<<" {
            return false;
        }
        *lean.skip.get_or_insert_with(|| match self.stack.first() {
            Some(Frame::Map { map, .. }) => !(lean.keep)(map),
            _ => false,
        })
    }

    /// Whether the next event belongs to a value a lean builder skips.
    fn skipping(&self) -> bool {
        match &self.lean {
            None => false,
            Some(lean) => {
                !lean.frames.is_empty()
                    || matches!(
                        self.stack.last(),
                        Some(Frame::Map {
                            slot: Slot::Skip,
                            ..
                        })
                    )
            }
        }
    }

    /// One event of a skipped value: checked as [`Reader::event`] reads it, nothing built.
    /// The counts and limits are the same; keys are compared, not stored as `String`s.
    fn skip(&mut self, event: Event<'a>) -> Option<()> {
        let is_map = matches!(event, Event::MappingStart(..));
        match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => Some(()),
            Event::DocumentStart(..) => {
                self.documents += 1;
                (self.documents == 1).then_some(())
            }
            Event::Scalar(value, style, anchor, tag) => {
                if tag.is_some() {
                    return None;
                }
                self.node()?;
                self.counts.scalar_bytes = self.counts.scalar_bytes.saturating_add(value.len());
                if self.counts.scalar_bytes > self.limits.scalar_bytes {
                    return None;
                }
                let lean = self.lean.as_mut()?;
                if anchor != 0 {
                    // (The caller refuses anchors before they get here.)
                    lean.redo = true;
                    return None;
                }
                if let Some(Skipped::Map {
                    keys_from,
                    expect_key,
                    set,
                }) = lean.frames.last_mut()
                {
                    if *expect_key {
                        if style == ScalarStyle::Plain
                            && (value.is_empty()
                                || value == "~"
                                || value.eq_ignore_ascii_case("null"))
                        {
                            return None;
                        }
                        if style == ScalarStyle::Plain && value == "<<" {
                            lean.redo = true;
                            return None;
                        }
                        *expect_key = false;
                        return insert_key(&mut lean.keys, *keys_from, set, value);
                    }
                    *expect_key = true;
                }
                if style == ScalarStyle::Plain && matches!(plain(&value), Plain::Refused) {
                    return None;
                }
                self.skipped_node_done();
                Some(())
            }
            Event::SequenceStart(_, anchor, tag) | Event::MappingStart(_, anchor, tag) => {
                let open = self.lean.as_ref().map_or(0, |lean| lean.frames.len());
                if tag.is_some() || self.stack.len() + open >= MAX_DEPTH {
                    return None;
                }
                let lean = self.lean.as_mut()?;
                if anchor != 0 {
                    lean.redo = true;
                    return None;
                }
                if let Some(Skipped::Map { expect_key, .. }) = lean.frames.last_mut() {
                    if *expect_key {
                        return None;
                    }
                    *expect_key = true;
                }
                let frame = if is_map {
                    Skipped::Map {
                        keys_from: lean.keys.len(),
                        expect_key: true,
                        set: None,
                    }
                } else {
                    Skipped::Seq
                };
                lean.frames.push(frame);
                self.node()
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let lean = self.lean.as_mut()?;
                match (lean.frames.pop()?, event) {
                    (Skipped::Seq, Event::SequenceEnd) => {}
                    (
                        Skipped::Map {
                            keys_from,
                            expect_key: true,
                            ..
                        },
                        Event::MappingEnd,
                    ) => lean.keys.truncate(keys_from),
                    _ => return None,
                }
                self.skipped_node_done();
                Some(())
            }
            // An alias needs an anchor, which the caller refuses; anything else is serde-saphyr's.
            _ => None,
        }
    }

    /// A node of a skipped value ended: when it was the value itself, the mapping it belongs
    /// to expects a key again.
    fn skipped_node_done(&mut self) {
        if self
            .lean
            .as_ref()
            .is_some_and(|lean| lean.frames.is_empty())
            && let Some(Frame::Map { slot, .. }) = self.stack.last_mut()
        {
            *slot = Slot::Key;
        }
    }
}

/// A key of a skipped mapping, refused when it is there already (serde-saphyr refuses
/// duplicate keys). Small mappings compare their keys one by one; large ones hash them.
fn insert_key<'a>(
    keys: &mut Vec<Cow<'a, str>>,
    from: usize,
    set: &mut Option<HashSet<Cow<'a, str>>>,
    key: Cow<'a, str>,
) -> Option<()> {
    if let Some(set) = set {
        return set.insert(key).then_some(());
    }
    let mine = keys.get(from..)?;
    if mine.contains(&key) {
        return None;
    }
    if mine.len() < LINEAR_KEYS {
        keys.push(key);
        return Some(());
    }
    let mut all: HashSet<Cow<'a, str>> = keys.drain(from..).collect();
    let fresh = all.insert(key);
    *set = Some(all);
    fresh.then_some(())
}

/// Nesting levels below a collection value (0 for a scalar or an empty collection).
fn nested_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => items
            .iter()
            .filter(|v| v.is_array() || v.is_object())
            .map(|v| 1 + nested_depth(v))
            .max()
            .unwrap_or(0),
        Value::Object(map) => map
            .values()
            .filter(|v| v.is_array() || v.is_object())
            .map(|v| 1 + nested_depth(v))
            .max()
            .unwrap_or(0),
        _ => 0,
    }
}

/// A `<<` value merged into its mapping: a mapping, a sequence of mappings (earlier ones win)
/// or null; keys already there stay.
fn merge(map: &mut Map<String, Value>, source: Value) -> Option<()> {
    match source {
        Value::Null => Some(()),
        Value::Object(entries) => {
            for (key, value) in entries {
                map.entry(key).or_insert(value);
            }
            Some(())
        }
        Value::Array(sources) => {
            for source in sources {
                let Value::Object(entries) = source else {
                    return None;
                };
                for (key, value) in entries {
                    map.entry(key).or_insert(value);
                }
            }
            Some(())
        }
        _ => None,
    }
}

/// Differential tests: wherever this reader answers, serde-saphyr (as [`super::options_for`]
/// configures it) gives the same value; where it does not, `parse` is serde-saphyr's.
#[cfg(test)]
mod tests {
    use super::super::{emit, parse, parse_with_shape, serde_parse, serde_parse_with_shape};
    use super::{NodeBuilder, read};
    use granit_parser::{Event, Parser};
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};
    use std::fmt::Write as _;

    /// The annotations the lean builder builds in these tests (the reader's own predicate is
    /// the skeleton's, in the main crate).
    const ANNOTATION: &dyn Fn(&str) -> bool = &|key| key.starts_with("config.kubernetes.io/");

    /// What a skeleton reads of an item: `apiVersion`, `kind`, and of a `metadata` mapping
    /// `name`, `namespace` and of `annotations` those [`ANNOTATION`] picks (another
    /// `metadata` or `annotations` whole).
    fn skeleton_fields(item: &Map<String, Value>) -> Map<String, Value> {
        let mut out = Map::new();
        for (key, value) in item {
            match (key.as_str(), value) {
                ("metadata", Value::Object(meta)) => {
                    let kept = meta
                        .iter()
                        .filter(|(k, _)| matches!(k.as_str(), "name" | "namespace" | "annotations"))
                        .map(|(k, v)| match (k.as_str(), v) {
                            ("annotations", Value::Object(a)) => {
                                let picked = a.iter().filter(|(k, _)| ANNOTATION(k));
                                let picked = picked.map(|(k, v)| (k.clone(), v.clone()));
                                (k.clone(), Value::Object(picked.collect()))
                            }
                            _ => (k.clone(), v.clone()),
                        })
                        .collect();
                    out.insert(key.clone(), Value::Object(kept));
                }
                ("apiVersion" | "kind" | "metadata", _) => {
                    out.insert(key.clone(), value.clone());
                }
                _ => {}
            }
        }
        out
    }

    /// The root node of `text` fed to a full and to a lean [`NodeBuilder`] (as the ResourceList
    /// reader feeds an item's events): the lean one answers `None` exactly where the full one
    /// does, or asks for the full one; otherwise it holds the skeleton's fields as the full one
    /// has them and no key the full one lacks. Returns whether the lean builder skipped
    /// something and answered. (Texts with anchors or aliases are the caller's to refuse.)
    fn lean_agrees(text: &str, keep: &dyn Fn(&Map<String, Value>) -> bool) -> bool {
        let mut events = Vec::new();
        for next in Parser::new_from_str(text) {
            let Ok((event, _)) = next else {
                return false;
            };
            match &event {
                Event::StreamStart
                | Event::StreamEnd
                | Event::DocumentStart(..)
                | Event::DocumentEnd => {}
                Event::Alias(_) => return false,
                Event::Scalar(_, _, anchor, _)
                | Event::SequenceStart(_, anchor, _)
                | Event::MappingStart(_, anchor, _)
                    if *anchor != 0 =>
                {
                    return false;
                }
                _ => events.push(event),
            }
        }
        if !matches!(events.first(), Some(Event::MappingStart(..))) {
            return false;
        }
        let mut full = Some(NodeBuilder::new(text.len()));
        let mut lean = Some(NodeBuilder::lean(text.len(), keep, ANNOTATION));
        let mut redo = false;
        for event in events {
            if let Some(b) = full.as_mut()
                && b.feed(event.clone()).is_none()
            {
                full = None;
            }
            if let Some(b) = lean.as_mut()
                && b.feed(event).is_none()
            {
                redo = b.needs_full();
                lean = None;
            }
        }
        let full = full.and_then(NodeBuilder::finish);
        if redo {
            return false;
        }
        let lean = lean.map(NodeBuilder::finish);
        match (full, lean) {
            (None, None | Some(None)) => false,
            (Some(v), None) => {
                panic!("the lean builder refused what the full one read: {text:?} -> {v:?}")
            }
            (None, Some(v)) => {
                panic!("the lean builder read what the full one refuses: {text:?} -> {v:?}")
            }
            (Some(full), Some(None)) => {
                let Value::Object(full) = full else {
                    panic!("not a mapping: {text:?}");
                };
                assert!(keep(&full), "lean None for an item not kept: {text:?}");
                false
            }
            (Some(full), Some(Some(lean))) => {
                let (Value::Object(full), Value::Object(lean)) = (full, lean) else {
                    panic!("not a mapping: {text:?}");
                };
                assert_eq!(skeleton_fields(&lean), skeleton_fields(&full), "{text:?}");
                assert_eq!(keep(&lean), keep(&full), "{text:?}");
                for (key, value) in &lean {
                    if key != "metadata" {
                        assert_eq!(Some(value), full.get(key), "{key} in {text:?}");
                    }
                }
                if keep(&full) {
                    assert_eq!(lean, full, "a kept item is whole: {text:?}");
                }
                lean != full
            }
        }
    }

    const KEEP_NONE: &dyn Fn(&Map<String, Value>) -> bool = &|_| false;
    const KEEP_SERVICES: &dyn Fn(&Map<String, Value>) -> bool =
        &|item| item.get("apiVersion").and_then(Value::as_str) == Some("s.example/v1");
    const KEEP_KIND: &dyn Fn(&Map<String, Value>) -> bool =
        &|item| item.get("kind").and_then(Value::as_str) == Some("Keep");

    /// Items as the ResourceList reader meets them, with what the full builder refuses or
    /// defers in a skipped value and in a built one.
    const LEAN_ITEMS: &[&str] = &[
        "apiVersion: v1\nkind: X\nspec: 1\nmetadata:\n  labels: {}\n  annotations: {a: 1, b: 2}\n  labels: 3\n",
        "apiVersion: v1\nkind: X\nspec: 1\nmetadata:\n  labels: {}\n  annotations: {a: 1, b: 2}\nspec: 2\n",
        "apiVersion: v1\nkind: X\nspec: 1\nmetadata:\n  labels: 1\n  annotations: {spec: 1, labels: 2, config.kubernetes.io/p: q}\n  x: 1\ny: 2\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {a: 1}\n  annotations: {b: 1}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {a: {b: 1, b: 2}}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {config.kubernetes.io/p: {b: 1, b: 2}}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {a: {'<<': 1}, '<<': 2}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {1: a, '1': b}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {a: 1}\nmetadata: {}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations:\n    metadata: {annotations: {a: 1, a: 2}}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {a: 1}\n  x: [{a: 1}, {a: 1}]\n  a: 2\n",
        "metadata:\n  annotations: {a: b, config.kubernetes.io/p: q}\n  name: n\napiVersion: v1\nkind: Keep\nspec: {}\n",
        "kind: Keep\nmetadata:\n  annotations: {a: b}\napiVersion: v1\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {a: null, b: ~, c: 0x1F, d: .NaN, e: 'on'}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {a: 1e999}\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {x: y}\n  annotations: {a: b}\ndata: {k: v, n: [1, 2, {m: 3}]}\n",
        // Annotations: those not picked are skipped (checked as the full builder reads them).
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations: {a: b, config.kubernetes.io/path: p, c: [1, {d: e}]}\n  name: a\n",
        "apiVersion: s.example/v1\nkind: Keep\nmetadata:\n  annotations: {a: b, config.kubernetes.io/path: p}\nspec: {}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {a: 1, a: 2}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {a: 1, config.kubernetes.io/a: 2, 'a': 3}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {config.kubernetes.io/a: 1, config.kubernetes.io/a: 2}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {a: !!str 1, b: !custom x}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {<<: {a: 1}, config.kubernetes.io/b: 2}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: {~: 1}\n",
        "apiVersion: v1\nkind: X\nmetadata:\n  annotations: [a]\n  name: a\n",
        "metadata:\n  annotations: {a: b}\napiVersion: s.example/v1\nkind: Keep\n",
        "apiVersion: s.example/v1\nkind: Keep\nmetadata: {name: a}\nspec: {x: [1, 2]}\n",
        "kind: Keep\nspec: {x: 1}\napiVersion: v1\n",
        "spec: {x: 1}\napiVersion: v1\nkind: ConfigMap\n",
        "apiVersion: v1\nkind: X\nspec: {a: 1, a: 2}\n",
        "apiVersion: v1\nkind: X\nspec: 1\nspec: 2\n",
        "apiVersion: v1\nkind: X\nspec: 1\n'spec': 2\n",
        "apiVersion: v1\nkind: X\ndata: {}\nmetadata: {name: a, labels: {}, labels: {}}\n",
        "apiVersion: v1\nkind: X\nspec: {a: !!str 1}\n",
        "apiVersion: v1\nkind: X\nspec: !custom {a: 1}\n",
        "apiVersion: v1\nkind: X\nspec: [.inf]\n",
        "apiVersion: v1\nkind: X\nspec: {a: -.NaN, b: 1e999}\n",
        "apiVersion: v1\nkind: X\nspec: {~: 1}\n",
        "apiVersion: v1\nkind: X\nspec: {? [a]: 1}\n",
        "apiVersion: v1\nkind: X\nspec: {<<: {a: 1}, b: 2}\n",
        "apiVersion: v1\nkind: X\n<<: {spec: 1}\nspec: 2\n",
        "apiVersion: v1\nkind: X\nspec: {'<<': 1}\n",
        "apiVersion: v1\nkind: X\nmetadata: {name: 7, namespace: [a]}\nspec: {}\n",
        "apiVersion: 1\nkind: X\nmetadata: [a]\nspec: {}\n",
        "apiVersion: v1\nkind: X\nspec: {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10, k: 11, l: 12, m: 13, n: 14, o: 15, p: 16, q: 17, r: 18, a: 19}\n",
        "apiVersion: v1\nkind: X\nspec: {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10, k: 11, l: 12, m: 13, n: 14, o: 15, p: 16, q: 17, r: 18, s: {a: 1, a: 2}}\n",
        "apiVersion: v1\nkind: X\nspec: {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10, k: 11, l: 12, m: 13, n: 14, o: 15, p: 16, q: 17, r: 18, s: 19}\n",
    ];

    #[test]
    fn lean_builder_agrees_with_the_full_one() {
        let mut skipped = 0;
        for text in LEAN_ITEMS {
            for keep in [KEEP_NONE, KEEP_SERVICES, KEEP_KIND] {
                skipped += usize::from(lean_agrees(text, keep));
            }
        }
        assert!(skipped >= 10, "{skipped}");
        let deep = format!(
            "apiVersion: v1\nspec: {}{}\n",
            "[".repeat(127),
            "]".repeat(127)
        );
        assert!(lean_agrees(&deep, KEEP_NONE));
        let deeper = format!(
            "apiVersion: v1\nspec: {}{}\n",
            "[".repeat(128),
            "]".repeat(128)
        );
        assert!(!lean_agrees(&deeper, KEEP_NONE));
    }

    /// The reader's answer agrees with serde-saphyr's; returns whether the reader answered.
    fn agrees(text: &str) -> bool {
        let ours = read(text);
        let theirs = serde_parse_with_shape(text);
        // The public functions give serde-saphyr's value or error in every case.
        assert_eq!(parse(text), serde_parse(text), "parse of {text:?}");
        assert_eq!(
            parse_with_shape(text).map(|(v, _)| v),
            theirs.clone().map(|(v, _)| v),
            "parse_with_shape of {text:?}"
        );
        let Some((value, shape)) = ours else {
            return false;
        };
        let Ok((expected, expected_shape)) = theirs else {
            panic!(
                "the reader accepted what serde-saphyr refuses: {text:?} -> {value:?}: {theirs:?}"
            );
        };
        assert_eq!(value.unwrap_or(Value::Null), expected, "value of {text:?}");
        assert_eq!(shape.anchors, expected_shape.anchors, "anchors in {text:?}");
        assert_eq!(shape.aliases, expected_shape.aliases, "aliases in {text:?}");
        assert_eq!(
            shape.merge_keys == 0,
            expected_shape.merge_keys == 0,
            "merge keys in {text:?}"
        );
        true
    }

    /// Hand-written inputs the reader must answer itself (the fast path covers them).
    const ANSWERED: &[&str] = &[
        "a: 1\n",
        "a: {b: [1, 2, {c: d}], e: 'x'}\n",
        "{\"a\": [1, 2.5, -3, true, false, null, \"s\"]}",
        "- a\n- - b\n  - c\n- {}\n- []\n",
        // Anchors, aliases, merge keys (PyYAML's shared maps, precedence of explicit keys).
        "base: &b {x: 1, y: 2}\nuse: *b\n",
        "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n  z: 4\n",
        "a: &a {x: 1}\nb: &b {x: 2, y: 2}\nm:\n  <<: [*a, *b]\n  w: 0\n",
        "m:\n  <<: {k: v}\n  k: w\n",
        "m:\n  <<: ~\n  k: w\n",
        "l: &l [1, 2]\nm: [*l, *l]\ns: &s str\nt: *s\n",
        "items:\n- &x\n  a: 1\n- *x\n",
        // Block scalars with every chomping indicator and indentation indicators.
        "a: |\n  x\n  y\n\nb: |-\n  x\n\nc: |+\n  x\n\nd: >\n  folded\n  line\n\n  para\ne: >-\n  x\nf: >+\n  x\n\ng: |2\n   indented\n",
        // Quoted scalars with escapes.
        "a: \"tab\\tnl\\nuni\\u00e9 \\x41 \\\"q\\\"\"\nb: 'it''s'\nc: \"multi\n  line\"\nd: ''\ne: \"\"\n",
        // Comments and document markers.
        "# head\n---\na: 1 # trailing\n# between\nb: [1, # in flow\n  2]\n...\n",
        "%YAML 1.2\n---\na: 1\n",
        "\u{feff}a: 1\n",
        "a: 1\r\nb:\r\n  - x\r\n  - y\r\n",
        "a:\nb: ~\nc: null\nd: Null\ne: NULL\nf: ''\n",
        // Numbers as serde-saphyr reads them into a Value.
        "a: [0, -0, +1, 007, -012, +012, 0x1F, -0x1F, 0o17, 0b101, 1_000, 1__0, _1, 1_, 0x_1, 0x]\n",
        "a: [1.5, .5, 5., -.5, 1e3, 1E-3, 1.0e+3, 18446744073709551615, 18446744073709551616, -9223372036854775808, -9223372036854775809]\n",
        "a: [inf, nan, infinity, -inf, .Inf1, 1.2.3, 12:30, 2001-12-14, 1e, e3, +, .]\n",
        "a: [true, True, TRUE, false, False, yes, no, on, off, y, n, tRuE]\n",
        "key with spaces: v\n'quoted key': v\n\"dq\": v\n1: one\n1.5: x\ntrue: t\n",
        "\"<<\": not a merge\n",
        "a: b#c d\n",
    ];

    #[test]
    fn hand_written_inputs_agree_and_are_answered() {
        for text in ANSWERED {
            assert!(
                agrees(text),
                "the reader left {text:?} to serde-saphyr: {:?}",
                serde_parse(text)
            );
        }
    }

    /// Inputs serde-saphyr refuses or that need its tag handling: the reader defers (or
    /// agrees), and `parse` gives serde-saphyr's error.
    const DEFERRED: &[&str] = &[
        "a: b: c\n",
        "a: 1\na: 2\n",
        "a: 1\n'a': 2\n",
        "m:\n  <<: *nope\n",
        "a: .inf\n",
        "a: -.INF\n",
        "a: .nan\n",
        "a: 1e999\n",
        "a: !!str 1\nb: !!int '2'\nc: !!float 3\nd: !!bool true\ne: !!null ''\n",
        "a: !custom x\n",
        "!!map {a: 1}\n",
        "? [a, b]\n: c\n",
        "~: a\n",
        ": a\n",
        "a: 1\n---\nb: 2\n",
        "a: [\n",
        "a: 'unterminated\n",
        "\ta: 1\n",
        "a: &x [*x]\n",
        "m:\n  <<: 1\n",
        "m:\n  <<: [1]\n",
        "&k a: 1\nb: *k\n",
    ];

    #[test]
    fn refused_and_tagged_inputs_are_serde_saphyrs() {
        for text in DEFERRED {
            agrees(text);
        }
        assert!(parse("a: 1\na: 2\n").is_err());
        assert!(parse("a: .inf\n").is_err());
        assert_eq!(parse("a: !!str 1\n").unwrap(), json!({"a": "1"}));
    }

    #[test]
    fn depth_and_alias_budgets_defer() {
        // (serde-saphyr itself needs more than a test thread's stack for 130 levels in a debug
        // build; `yaml::tests::deep_nesting_is_rejected` checks the error at 1000.)
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert!(read(&deep).is_none());
        let deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(read(&deep).is_some());
        let ok = format!("{}{}", "[".repeat(30), "]".repeat(30));
        assert!(agrees(&ok));
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'] {
            let aliases = vec![format!("*{prev}"); 10].join(", ");
            let _ = writeln!(bomb, "{name}: &{name} [{aliases}]");
            prev = name;
        }
        assert!(read(&bomb).is_none());
        assert!(
            parse(&bomb)
                .unwrap_err()
                .message
                .contains("alias expansion limit")
        );
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            "[ -~\\t\\n\\rñé€\u{feff}\u{85}\u{2028}]{0,24}".prop_map(Value::String),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[ -~]{0,10}", inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// Plain scalar spellings near the edges of the core schema.
    fn plain_word() -> impl Strategy<Value = String> {
        "[-+._0-9a-fA-FxXoObBeEtTrRuUlLsSnNiI~]{0,8}"
    }

    /// Item-like mappings: the keys a skeleton reads and others, at the levels it reads.
    fn item() -> impl Strategy<Value = Value> {
        let key = prop::sample::select(vec![
            "apiVersion",
            "kind",
            "metadata",
            "name",
            "namespace",
            "annotations",
            "labels",
            "spec",
            "data",
            "<<",
            "a",
            "config.kubernetes.io/path",
            "config.kubernetes.io/x",
        ]);
        let object = |kv: Vec<(&str, Value)>| {
            Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
        };
        // Three levels: the item, `metadata`, `annotations`.
        let level = prop::collection::vec((key.clone(), value()), 0..6).prop_map(object);
        let level = prop::collection::vec((key.clone(), prop_oneof![level, value()]), 0..6)
            .prop_map(object);
        prop::collection::vec((key, prop_oneof![level, value()]), 0..8).prop_map(object)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// The lean builder against the full one, on item-like values in block and flow style.
        #[test]
        fn lean_builder_agrees(v in item(), api in prop::sample::select(vec!["v1", "s.example/v1"])) {
            let mut v = v;
            if let Value::Object(map) = &mut v && map.contains_key("apiVersion") {
                map.insert("apiVersion".to_owned(), json!(api));
            }
            for keep in [KEEP_NONE, KEEP_SERVICES, KEEP_KIND] {
                lean_agrees(&emit(&v), keep);
                lean_agrees(&serde_json::to_string(&v).unwrap_or_default(), keep);
            }
        }

        /// Item-like text made of YAML pieces (duplicate keys, tags, merge keys, odd scalars).
        #[test]
        fn lean_builder_agrees_on_pieces(pieces in prop::collection::vec(prop::sample::select(vec![
            "apiVersion: v1\n", "kind: Keep\n", "metadata:\n", "  name: a\n", "  labels:\n",
            "    x: y\n", "  annotations: {a: b}\n", "spec:\n", "  a: 1\n", "  a: [1]\n",
            "  b: !!str 1\n", "  c: .inf\n", "  <<: {d: 1}\n", "  ~: x\n", "  - 1\n", "data: {a: 1, a: 2}\n",
            "data: {'a': 1, \"b\": [x, {c: d}]}\n", "  ? [k]\n  : v\n", "spec: 1e999\n",
            "  e: |\n    t\n", "apiVersion: s.example/v1\n", "  f: 'on'\n",
            "  annotations:\n", "    config.kubernetes.io/path: p\n", "    b: [1, {c: d}]\n",
            "    g: !!str 1\n", "    h: .nan\n", "    <<: {i: 1}\n",
        ]), 1..12)) {
            let text = pieces.concat();
            for keep in [KEEP_NONE, KEEP_SERVICES, KEEP_KIND] {
                lean_agrees(&text, keep);
            }
        }

        /// Block style as `emit` writes it.
        #[test]
        fn emitted_values_agree(v in value()) {
            let text = emit(&v);
            prop_assert!(agrees(&text), "not answered: {}", text);
        }

        /// Flow style (JSON is YAML).
        #[test]
        fn json_text_agrees(v in value()) {
            let text = serde_json::to_string(&v).unwrap_or_default();
            agrees(&text);
            let pretty = serde_json::to_string_pretty(&v).unwrap_or_default();
            agrees(&pretty);
        }

        /// Plain scalars and keys as written by hand, in block and flow context.
        #[test]
        fn plain_scalars_agree(words in prop::collection::vec(plain_word(), 1..6)) {
            let mut block = String::new();
            for (i, w) in words.iter().enumerate() {
                let _ = write!(block, "k{i}: {w}\n{w}x{i}: v\n");
            }
            agrees(&block);
            agrees(&format!("[{}]", words.join(", ")));
        }

        /// Random text made of YAML pieces: whatever it is, the reader never answers what
        /// serde-saphyr refuses, nor differently.
        #[test]
        fn pieces_agree(pieces in prop::collection::vec(prop::sample::select(vec![
            "a", "b", ": ", ":", "\n", "  ", "- ", "[", "]", "{", "}", ", ", "&x ", "*x", "<<: ",
            "'q'", "\"d\\n\"", "|\n  t\n", ">-\n  f\n", "# c\n", "---\n", "1", "-2", "0x1",
            "~", "true", "? ", "!!str ", "\t", "\r\n", "1.5", "&y ", "*y",
        ]), 0..24)) {
            agrees(&pieces.concat());
        }
    }
}

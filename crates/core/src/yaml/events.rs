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

use granit_parser::{Event, Parser, ScalarStyle};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::{EXPANSION_FACTOR, MAX_DEPTH, MIN_EXPANDED_NODES, Shape};

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
    },
}

/// The limits of [`super::options_for`], as far as they are known before the parse.
struct Limits {
    /// Nodes alias expansion may produce while reading (the final check uses the written nodes).
    nodes: usize,
    scalar_bytes: usize,
    aliases: usize,
    anchors: usize,
}

struct Reader {
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
/// [`super::parse`] instead, which decides.
pub struct NodeBuilder(Reader);

impl NodeBuilder {
    /// A builder under the budgets [`super::parse`] gives a text of `len` bytes.
    pub fn new(len: usize) -> Self {
        let mut reader = Reader::new(len);
        // As if the node were a document of its own.
        reader.documents = 1;
        NodeBuilder(reader)
    }

    /// The next event of the node, from its start event to its end event.
    pub fn feed(&mut self, event: Event<'_>) -> Option<()> {
        self.0.counts.events += 1;
        self.0.event(event)
    }

    /// The node's value, once its end event was fed.
    pub fn finish(self) -> Option<Value> {
        self.0.end(false)?.0
    }
}

impl Reader {
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

impl Reader {
    fn event(&mut self, event: Event<'_>) -> Option<()> {
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
                if let Some(Frame::Map { slot, .. }) = self.stack.last_mut()
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
                        self.shape.merge_keys += 1;
                        *slot = Slot::Merge;
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
                self.stack.push(Frame::Map {
                    map: Map::new(),
                    slot: Slot::Key,
                    merges: Vec::new(),
                    anchor,
                    start,
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
                }) = self.stack.pop()
                else {
                    return None;
                };
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
                Slot::Key => return None,
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

/// serde-saphyr's `yaml_trim`.
fn yaml_trim(s: &str) -> &str {
    s.trim_matches([' ', '\t', '\r', '\n'])
}

/// An untagged scalar as serde-saphyr's `deserialize_any` gives it to `serde_json::Value`
/// (strict booleans, YAML 1.2 numbers, no legacy octal); `None` where it refuses the scalar
/// (non-finite floats).
fn resolve(text: Cow<'_, str>, style: ScalarStyle) -> Option<Value> {
    if style != ScalarStyle::Plain {
        return Some(Value::String(text.into_owned()));
    }
    if text.is_empty() || text == "~" || text.eq_ignore_ascii_case("null") {
        return Some(Value::Null);
    }
    let t = yaml_trim(&text);
    // Only these first bytes can start a boolean or a number: skip the rest quickly.
    match t.as_bytes().first() {
        Some(b'0'..=b'9' | b'+' | b'-' | b'.' | b't' | b'T' | b'f' | b'F') => {}
        _ => return Some(Value::String(text.into_owned())),
    }
    if t.eq_ignore_ascii_case("true") {
        return Some(Value::Bool(true));
    }
    if t.eq_ignore_ascii_case("false") {
        return Some(Value::Bool(false));
    }
    if let Some(n) = int(t) {
        return Some(n);
    }
    match float(t) {
        Float::Finite(f) => {
            Some(serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number))
        }
        Float::NonFinite => None,
        Float::Not => Some(Value::String(text.into_owned())),
    }
}

/// serde-saphyr's integer attempt: `parse_int_signed::<i64>` after a `-` (unless a decimal
/// with a leading zero), `parse_int_unsigned::<u64>` otherwise.
fn int(t: &str) -> Option<Value> {
    if let Some(rest) = t.strip_prefix('-') {
        let (radix, digits) = radix_and_digits(rest);
        if radix == 10 {
            if digits.starts_with('0') {
                // `-0` is zero; `-012` is no integer (leading zero).
                return (digits == "0").then(|| Value::from(0i64));
            }
            let magnitude = decimal(digits)?;
            let value = 0i128.checked_sub(i128::try_from(magnitude).ok()?)?;
            return i64::try_from(value).ok().map(Value::from);
        }
        let magnitude = prefixed(digits, radix)?;
        let value = if magnitude == i128::MAX.unsigned_abs() + 1 {
            i128::MIN
        } else {
            i128::try_from(magnitude).ok()?.checked_neg()?
        };
        return i64::try_from(value).ok().map(Value::from);
    }
    let rest = t.strip_prefix('+').unwrap_or(t);
    let (radix, digits) = radix_and_digits(rest);
    let value = if radix == 10 {
        if digits.starts_with('0') && digits != "0" {
            return None;
        }
        decimal(digits)?
    } else {
        prefixed(digits, radix)?
    };
    u64::try_from(value).ok().map(Value::from)
}

fn radix_and_digits(rest: &str) -> (u32, &str) {
    if let Some(r) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
        (16, r)
    } else if let Some(r) = rest.strip_prefix("0o").or_else(|| rest.strip_prefix("0O")) {
        (8, r)
    } else if let Some(r) = rest.strip_prefix("0b").or_else(|| rest.strip_prefix("0B")) {
        (2, r)
    } else {
        (10, rest)
    }
}

/// Digits with single `_` separators between them (not first, not last, not doubled).
fn digits_of(digits: &str, radix: u32) -> Option<u128> {
    let bytes = digits.as_bytes();
    let mut value: u128 = 0;
    let mut saw = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            if i == 0 || bytes[i - 1] == b'_' || bytes.get(i + 1).is_none_or(|&n| n == b'_') {
                return None;
            }
            continue;
        }
        let d = char::from(b).to_digit(radix)?;
        value = value
            .checked_mul(u128::from(radix))?
            .checked_add(u128::from(d))?;
        saw = true;
    }
    saw.then_some(value)
}

fn decimal(digits: &str) -> Option<u128> {
    digits_of(digits, 10)
}

fn prefixed(digits: &str, radix: u32) -> Option<u128> {
    digits_of(digits, radix)
}

enum Float {
    Finite(f64),
    /// `.inf`, `.nan`, or a literal that overflows: serde-saphyr refuses these for a `Value`.
    NonFinite,
    Not,
}

/// serde-saphyr's `try_parse_float_incl_overflow` (YAML 1.2 special values, then Rust's
/// `f64` parser; spelled-out `inf`/`nan` stay strings).
fn float(t: &str) -> Float {
    let special = [".nan", "+.nan", "-.nan", ".inf", "+.inf", "-.inf"];
    if special.iter().any(|s| t.eq_ignore_ascii_case(s)) {
        return Float::NonFinite;
    }
    match t.parse::<f64>() {
        Ok(f) if f.is_finite() => Float::Finite(f),
        Ok(f) if f.is_infinite() => {
            let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
            if unsigned.as_bytes().first().is_some_and(u8::is_ascii_digit) {
                Float::NonFinite
            } else {
                Float::Not
            }
        }
        _ => Float::Not,
    }
}

/// Differential tests: wherever this reader answers, serde-saphyr (as [`super::options_for`]
/// configures it) gives the same value; where it does not, `parse` is serde-saphyr's.
#[cfg(test)]
mod tests {
    use super::super::{emit, parse, parse_with_shape, serde_parse, serde_parse_with_shape};
    use super::read;
    use proptest::prelude::*;
    use serde_json::{Value, json};
    use std::fmt::Write as _;

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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

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

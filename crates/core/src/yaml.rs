//! YAML in and out, through one door.
//!
//! Reading uses serde-saphyr with YAML 1.2 booleans (kustomize and kpt write `yes` meaning the
//! string) and budgets scaled to the input, so alias bombs and absurd nesting fail fast with a
//! clear message instead of eating memory. Writing quotes every YAML 1.1 spelling (`on`, `y`,
//! `0777`, ...) so that kubectl's YAML 1.1 reader sees strings where we meant strings.

use std::fmt;
#[cfg(test)]
use std::fmt::Write as _;

use serde_json::Value;

mod events;
pub mod fidelity;
pub use events::NodeBuilder;

/// The largest input we accept in one read (a ResourceList, a catalog file, a template
/// output): `KRM_CATALOG_MAX_INPUT_BYTES`, default 256 MiB (see [`crate::env`]).
pub fn max_input_bytes() -> usize {
    crate::env::max_input_bytes()
}
/// Deepest nesting we accept; Kubernetes objects rarely go past 20 levels.
pub const MAX_DEPTH: usize = 128;

/// A YAML problem with the line it happened on (1-based, relative to the parsed text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// What went wrong, without location.
    pub message: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for YamlError {}

/// Nodes alias expansion may produce: [`EXPANSION_FACTOR`] times the nodes written, and at
/// least [`MIN_EXPANDED_NODES`] (issue 8 point 7: PyYAML writes one anchor and hundreds of
/// aliases for a shared map; a count ratio refused that, a size bound does not).
pub const MIN_EXPANDED_NODES: usize = 1_000_000;
/// See [`MIN_EXPANDED_NODES`].
pub const EXPANSION_FACTOR: usize = 10;

/// Nodes written in the text (aliases not expanded), counted by the parser alone; `None`
/// when the text does not parse (the real parse reports the error).
fn written_nodes(text: &str) -> Option<usize> {
    let mut nodes = 0usize;
    for event in granit_parser::Parser::new_from_str(text) {
        let (event, _) = event.ok()?;
        if matches!(
            event,
            granit_parser::Event::Scalar(..)
                | granit_parser::Event::SequenceStart(..)
                | granit_parser::Event::MappingStart(..)
        ) {
            nodes += 1;
        }
    }
    Some(nodes)
}

/// The node budget of a text: without anchors nothing expands and the text's length bounds
/// its nodes; with anchors, the written nodes are counted first.
fn node_budget(text: &str) -> usize {
    let written = if text.contains('&') && text.contains('*') {
        written_nodes(text).unwrap_or(text.len())
    } else {
        text.len()
    };
    written
        .saturating_mul(EXPANSION_FACTOR)
        .max(MIN_EXPANDED_NODES)
}

fn options_for(text: &str) -> serde_saphyr::Options {
    let len = text.len();
    let nodes = node_budget(text);
    // Alias expansion is bounded by what it expands to (nodes, events and scalar bytes, each
    // relative to what is written), not by how many aliases there are.
    let budget = serde_saphyr::budget! {
        max_reader_input_bytes: Some(max_input_bytes()),
        max_depth: MAX_DEPTH,
        max_nodes: nodes,
        max_events: nodes.saturating_mul(2).saturating_add(1_000),
        max_total_scalar_bytes: len.saturating_mul(EXPANSION_FACTOR).saturating_add(1 << 20),
        max_documents: len / 4 + 1_024,
        max_recorded_anchor_events: nodes,
        max_aliases: len.max(50_000),
        max_anchors: len.max(50_000),
        enforce_alias_anchor_ratio: false,
    };
    serde_saphyr::options! {
        budget: budget,
        strict_booleans: true,
        with_snippet: false,
    }
}

fn convert_error(text: &str, err: &serde_saphyr::Error) -> YamlError {
    let location = err.location();
    let line = location
        .map(|l| l.line())
        .and_then(|l| usize::try_from(l).ok())
        .filter(|l| *l > 0);
    // serde-saphyr's text names its own option ("set DuplicateKeyPolicy in Options"); users
    // read YAML errors as kubectl's go-yaml prints them (issue 22).
    if let (serde_saphyr::Error::DuplicateMappingKey { key, .. }, Some(location)) = (err, location)
    {
        let message = match key {
            Some(key) => {
                let column = usize::try_from(location.column()).unwrap_or(0);
                match line.and_then(|l| first_definition(text, l, column, key)) {
                    Some(first) => format!("mapping key {key:?} already defined at line {first}"),
                    None => format!("mapping key {key:?} already defined in this mapping"),
                }
            }
            None => "a mapping key is already defined in this mapping".to_owned(),
        };
        return YamlError { message, line };
    }
    let mut message = err.to_string();
    // serde-saphyr appends " at line X column Y"; we report the line separately.
    if let Some(idx) = message.find(" at line ") {
        message.truncate(idx);
    }
    let message = humanize(&message);
    YamlError { message, line }
}

/// The line (1-based) where the block mapping holding the key at `line`:`column` first
/// defines `key`: the nearest line above at the same column (after any `- ` of a sequence
/// entry) that starts with the key, before the mapping ends (a line starting further left).
/// `None` when it is not found that way (flow mappings, quoted or multi-line keys).
fn first_definition(text: &str, line: usize, column: usize, key: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().take(line.saturating_sub(1)).collect();
    for (i, l) in lines.iter().enumerate().rev() {
        let body = l.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let indent = l.len() - body.len();
        // `- - key:` entries: the key starts after every dash.
        let mut at = indent;
        let mut rest = body;
        while let Some(after) = rest.strip_prefix("- ") {
            let trimmed = after.trim_start_matches(' ');
            at += rest.len() - trimmed.len();
            rest = trimmed;
        }
        if at + 1 == column {
            let matches = rest
                .strip_prefix(key)
                .is_some_and(|tail| tail.trim_start_matches(' ').starts_with(':'));
            if matches {
                return Some(i + 1);
            }
        }
        if indent + 1 < column && at < column {
            return None;
        }
    }
    None
}

fn humanize(message: &str) -> String {
    if message.contains("budget breached") || message.contains("Budget") {
        if message.contains("Depth") {
            return format!("YAML nesting is deeper than {MAX_DEPTH} levels ({message})");
        }
        if message.contains("Nodes")
            || message.contains("Events")
            || message.contains("Alias")
            || message.contains("ScalarBytes")
        {
            return format!(
                "YAML aliases expand to far more data than is written (alias expansion limit: {EXPANSION_FACTOR} times the nodes written, at least {MIN_EXPANDED_NODES}; {message})"
            );
        }
    }
    message.to_owned()
}

/// Whether a file name has a YAML extension (`.yaml`, `.yml`, any case).
pub fn is_yaml_file(name: &str) -> bool {
    has_extension(name, &["yaml", "yml"])
}

/// Whether a file name ends in one of `extensions` (without dot, any case).
pub fn has_extension(name: &str, extensions: &[&str]) -> bool {
    std::path::Path::new(name)
        .extension()
        .and_then(std::ffi::OsStr::to_str)
        .is_some_and(|ext| extensions.iter().any(|e| ext.eq_ignore_ascii_case(e)))
}

/// Reject input over [`max_input_bytes`].
pub fn check_input_size(text: &str) -> Result<(), YamlError> {
    let limit = max_input_bytes();
    if text.len() > limit {
        return Err(YamlError {
            message: format!(
                "input is {} bytes, more than the limit of {limit} bytes (KRM_CATALOG_MAX_INPUT_BYTES)",
                text.len()
            ),
            line: None,
        });
    }
    Ok(())
}

/// Parse one YAML (or JSON) document into a value. An empty document is `null`.
///
/// The value is built straight from the parser's events ([`events`]); whatever that reader
/// leaves to serde-saphyr (errors, tags, budgets, ...) is parsed by serde-saphyr, so values and
/// errors are serde-saphyr's.
pub fn parse(text: &str) -> Result<Value, YamlError> {
    check_input_size(text)?;
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    if let Some((value, _)) = events::read(text) {
        return Ok(value.unwrap_or(Value::Null));
    }
    serde_parse(text)
}

/// [`parse`] through serde-saphyr's deserializer alone.
fn serde_parse(text: &str) -> Result<Value, YamlError> {
    let value: Option<Value> = serde_saphyr::from_str_with_options(text, options_for(text))
        .map_err(|e| convert_error(text, &e))?;
    Ok(value.unwrap_or(Value::Null))
}

/// Deserialize one document through a seed, under the same budgets as [`parse`]: the seed
/// sees values as the parser produces them, so a caller can keep less than the whole value
/// (the ResourceList reader keeps one item at a time).
pub fn parse_seed<'de, S>(text: &'de str, seed: S) -> Result<S::Value, YamlError>
where
    S: serde::de::DeserializeSeed<'de>,
{
    check_input_size(text)?;
    serde_saphyr::with_deserializer_from_str_with_options(text, options_for(text), |de| {
        seed.deserialize(de)
    })
    .map_err(|e| convert_error(text, &e))
}

/// What a parse saw besides the value: constructs that make the source text differ from
/// what the value alone would produce.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    /// `*alias` uses.
    pub aliases: usize,
    /// `&anchor` definitions.
    pub anchors: usize,
    /// `<<` merge keys.
    pub merge_keys: usize,
}

/// Parse one document and report its [`Shape`] (read as [`parse`] reads).
pub fn parse_with_shape(text: &str) -> Result<(Value, Shape), YamlError> {
    check_input_size(text)?;
    if text.trim().is_empty() {
        return Ok((Value::Null, Shape::default()));
    }
    if let Some((value, shape)) = events::read(text) {
        return Ok((value.unwrap_or(Value::Null), shape));
    }
    serde_parse_with_shape(text)
}

/// [`parse_with_shape`] through serde-saphyr's deserializer alone.
fn serde_parse_with_shape(text: &str) -> Result<(Value, Shape), YamlError> {
    let shape = std::rc::Rc::new(std::cell::Cell::new(Shape::default()));
    let sink = std::rc::Rc::clone(&shape);
    let options = options_for(text).with_budget_report(move |report| {
        sink.set(Shape {
            aliases: report.aliases,
            anchors: report.anchors,
            merge_keys: report.merge_keys,
        });
    });
    let value: Option<Value> =
        serde_saphyr::from_str_with_options(text, options).map_err(|e| convert_error(text, &e))?;
    Ok((value.unwrap_or(Value::Null), shape.get()))
}

/// One document of a multi-document stream, with the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The parsed value (`null` for an empty document).
    pub value: Value,
    /// 1-based line of the document's first line in the stream.
    pub line: usize,
}

/// Split a stream into documents the way kyaml does (on lines that are exactly `---`), then
/// parse each, so every error and every document knows its line in the whole stream.
pub fn parse_stream(text: &str) -> Result<Vec<Document>, YamlError> {
    check_input_size(text)?;
    let mut docs = Vec::new();
    for (start_line, chunk) in split_documents(text) {
        let value = parse(chunk).map_err(|e| YamlError {
            message: e.message,
            line: Some(e.line.map_or(start_line, |l| start_line + l - 1)),
        })?;
        docs.push(Document {
            value,
            line: start_line,
        });
    }
    Ok(docs)
}

/// Split on `---` separator lines (optionally followed by a comment), returning each chunk
/// with its 1-based starting line. `...` end markers and blank documents are dropped.
pub fn split_documents(text: &str) -> Vec<(usize, &str)> {
    let mut chunks = Vec::new();
    let mut start = 0usize;
    let mut start_line = 1usize;
    let bytes = text.as_bytes();
    // Only lines starting with `-` or `.` can separate documents: those are found with memchr's
    // substring search (a large ResourceList has hundreds of thousands of lines, few of them
    // starting so); line numbers are counted when a separator is found.
    let after = |needle: &'static [u8]| memchr::memmem::find_iter(bytes, needle).map(|n| n + 1);
    let (mut dashes, mut dots) = (after(b"\n-").peekable(), after(b"\n.").peekable());
    // The first line, then the lines starting with `-` or `.`, in order.
    let candidates =
        std::iter::once(0).chain(std::iter::from_fn(|| match (dashes.peek(), dots.peek()) {
            (Some(a), Some(b)) if b < a => dots.next(),
            (Some(_), _) => dashes.next(),
            (None, _) => dots.next(),
        }));
    let (mut counted, mut lines) = (0usize, 0usize);
    for offset in candidates {
        if !matches!(bytes.get(offset), Some(b'-' | b'.')) {
            continue;
        }
        let rest = &text[offset..];
        let len = memchr::memchr(b'\n', rest.as_bytes()).map_or(rest.len(), |n| n + 1);
        let trimmed = rest[..len].trim_end_matches(['\n', '\r']);
        let is_separator = trimmed == "---"
            || trimmed.starts_with("--- ")
            || trimmed.starts_with("---\t")
            || trimmed == "...";
        if is_separator {
            lines += memchr::memchr_iter(b'\n', &bytes[counted..offset]).count();
            counted = offset;
            chunks.push((start_line, &text[start..offset]));
            start = offset + len;
            // The line after the separator (`lines` is the separator's 0-based line).
            start_line = lines + 2;
        }
    }
    chunks.push((start_line, &text[start..]));
    chunks.retain(|(_, chunk)| !is_blank_document(chunk));
    chunks
}

fn is_blank_document(chunk: &str) -> bool {
    chunk.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t.starts_with('%')
    })
}

mod emit;

pub use emit::Emit;

/// The serializer options the writer reproduces (serde-saphyr is its oracle in tests).
#[cfg(test)]
fn serializer_options() -> serde_saphyr::SerializerOptions {
    serde_saphyr::ser_options! {
        // Never fold long lines: folding changes how diffs look and buys nothing.
        folded_wrap_chars: usize::MAX,
        min_fold_chars: usize::MAX,
        prefer_block_scalars: true,
        compact_list_indent: true,
        yaml_12: false,
    }
}

/// Emit a value as one YAML document (ends with a newline).
pub fn emit(value: &Value) -> String {
    let mut out = String::new();
    emit_into(&mut out, value);
    out
}

/// Emit a value (or a map, or a sequence of either) as YAML, appending to `out`: block style,
/// two-space indentation, `- ` items at their key's column, and every string a YAML 1.1 or 1.2
/// reader would not read back as the same string quoted (see `yaml/emit.rs`).
pub fn emit_into<T: Emit + ?Sized>(out: &mut String, value: &T) {
    value.emit_at(out, emit::At::ROOT);
}

/// Emit values as a multi-document stream separated by `---`.
pub fn emit_stream<'a>(values: impl IntoIterator<Item = &'a Value>) -> String {
    let mut out = String::new();
    for (i, value) in values.into_iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        emit_into(&mut out, value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_booleans_keep_yes_a_string() {
        let v = parse("a: yes\nb: on\nc: true\n").unwrap();
        assert_eq!(v, json!({"a": "yes", "b": "on", "c": true}));
    }

    #[test]
    fn ambiguous_strings_are_quoted() {
        for s in [
            "on", "yes", "no", "y", "n", "1.10", "0777", "~", "null", "", "true", "1_000",
        ] {
            let out = emit(&json!({ "k": s }));
            assert!(
                out.contains('"') || out.contains('\''),
                "{s:?} emitted unquoted: {out}"
            );
            assert_eq!(
                parse(&out).unwrap(),
                json!({ "k": s }),
                "round trip of {s:?}"
            );
        }
    }

    #[test]
    fn multiline_strings_use_literal_blocks() {
        let out = emit(&json!({"script": "echo a\necho b\n"}));
        assert!(out.contains("script: |"), "{out}");
    }

    #[test]
    fn long_lines_are_not_folded() {
        let long = "word ".repeat(40);
        let out = emit(&json!({ "k": long.trim() }));
        assert_eq!(out.lines().count(), 1, "{out}");
    }

    #[test]
    fn stream_documents_know_their_lines() {
        let docs = parse_stream("a: 1\n---\n# only a comment\n---\nb: 2\nc: 3\n").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].line, 1);
        assert_eq!(docs[1].line, 5);
        let err = parse_stream("a: 1\n---\nb: 2\nc: [\n").unwrap_err();
        assert!(err.line.unwrap() >= 3, "{err}");
    }

    #[test]
    fn alias_bomb_is_rejected() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] {
            let _ = writeln!(
                text,
                "{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]"
            );
            prev = name;
        }
        let err = parse(&text).unwrap_err();
        assert!(
            err.message.contains("alias") || err.message.contains("expands"),
            "{err}"
        );
    }

    #[test]
    fn issue8_p7_one_anchor_with_many_aliases_is_not_a_bomb() {
        // PyYAML's way of writing 300 objects that share one map.
        let mut text = String::from("items:\n");
        for i in 0..300 {
            if i == 0 {
                text.push_str("- name: a0\n  labels: &id001\n    team: a\n    tier: b\n");
            } else {
                let _ = writeln!(text, "- name: a{i}\n  labels: *id001");
            }
        }
        let value = parse(&text).unwrap();
        assert_eq!(value["items"][299]["labels"]["tier"], "b");
    }

    #[test]
    fn issue8_p7_billion_laughs_still_fails() {
        let mut text = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        let mut prev = 'a';
        for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'] {
            let aliases = vec![format!("*{prev}"); 10].join(", ");
            let _ = writeln!(text, "{name}: &{name} [{aliases}]");
            prev = name;
        }
        let err = parse(&text).unwrap_err();
        assert!(err.message.contains("alias expansion limit"), "{err}");
    }

    #[test]
    fn deep_nesting_is_rejected() {
        let text = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        assert!(parse(&text).is_err());
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let err = parse("a: 1\na: 2\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: mapping key \"a\" already defined at line 1"
        );
    }

    #[test]
    fn issue16_duplicate_keys_name_the_key_and_both_lines_as_go_yaml_does() {
        let text = "items:\n- kind: A\n  metadata:\n    name: a\n\n    labels:\n      x: y\n    # c\n    name: b\n";
        let err = parse(text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 9: mapping key \"name\" already defined at line 4"
        );
        let err = parse("- name: a\n  name: b\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: mapping key \"name\" already defined at line 1"
        );
        let err = parse("a:\n  b: 1\nb: 2\nb: 3\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 4: mapping key \"b\" already defined at line 3"
        );
        // A flow mapping: the first definition is not looked for.
        let err = parse("{a: 1, a: 2}\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1: mapping key \"a\" already defined in this mapping"
        );
    }
}

/// Property tests: emitted YAML means the same to us and to Kubernetes' YAML 1.1 readers.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// go-yaml v2's `resolve()` for a plain scalar (what kubectl's sigs.k8s.io/yaml reads):
    /// true when the scalar would NOT come back as a string.
    fn go_yaml_v2_reads_as_non_string(s: &str) -> bool {
        const MAP: &[&str] = &[
            "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N",
            "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null",
            "Null", "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf",
            "+.INF", "-.inf", "-.Inf", "-.INF", "<<",
        ];
        if MAP.contains(&s) {
            return true;
        }
        let Some(first) = s.chars().next() else {
            return true;
        };
        let float =
            regex::Regex::new(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$").unwrap();
        match first {
            '.' => float.is_match(s),
            '+' | '-' | '0'..='9' => {
                let plain = s.replace('_', "");
                // go-yaml v2 `resolve`: `0b…`/`-0b…` are ints only when `ParseInt(rest, 2)`
                // succeeds, so a bare `0b` stays a string.
                let binary = |rest: Option<&str>| {
                    rest.is_some_and(|d| !d.is_empty() && d.chars().all(|c| c == '0' || c == '1'))
                };
                go_parse_int(&plain)
                    || float.is_match(&plain)
                    || binary(plain.strip_prefix("0b"))
                    || binary(plain.strip_prefix("-0b"))
            }
            _ => false,
        }
    }

    /// Go's `strconv.ParseInt(s, 0, 64)` / `ParseUint` acceptance.
    fn go_parse_int(s: &str) -> bool {
        let body = s.strip_prefix(['+', '-']).unwrap_or(s);
        let (digits, radix) =
            if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
                (h, 16)
            } else if let Some(o) = body.strip_prefix("0o").or_else(|| body.strip_prefix("0O")) {
                (o, 8)
            } else if let Some(b) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
                (b, 2)
            } else if body.len() > 1 && body.starts_with('0') {
                (&body[1..], 8)
            } else {
                (body, 10)
            };
        !digits.is_empty() && u128::from_str_radix(digits, radix).is_ok()
    }

    const TRICKY: &[&str] = &[
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
        "yes",
        "Yes",
        "YES",
        "no",
        "No",
        "NO",
        "y",
        "Y",
        "n",
        "N",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "null",
        "Null",
        "NULL",
        "~",
        "",
        " ",
        "1",
        "-1",
        "+1",
        "1.0",
        "1.10",
        "0777",
        "08",
        "0o17",
        "0x1F",
        "0b101",
        "-0b1",
        "1_000",
        "0x_1",
        "1__0",
        "1e3",
        "1E-3",
        ".5",
        "5.",
        ".inf",
        "-.inf",
        "+.INF",
        ".nan",
        ".NaN",
        "12:30",
        "1:20:30",
        "190:20:30",
        "2001-12-14",
        "2001-12-14t21:59:43.10-05:00",
        "<<",
        "=",
        "a: b",
        "- x",
        "-",
        "#x",
        "x #y",
        "@x",
        "`x",
        "!x",
        "&x",
        "*x",
        "%x",
        "{x}",
        "[x]",
        "x,y",
        "?",
        "? x",
        ":",
        "a:",
        "\tx",
        "x\n",
        "x\ny",
        " x",
        "x ",
        "'x'",
        "\"x\"",
        "|",
        ">",
        "\\",
        "null ",
        "0.",
        "+",
        "e3",
        "1e",
        "0x",
        "0b",
        "0b2",
        "ñ",
        "x: y: z",
    ];

    #[test]
    fn tricky_strings_survive_yaml_1_1_readers() {
        for s in TRICKY {
            let value = json!({ "k": s });
            let out = emit(&value);
            assert_eq!(parse(&out).unwrap(), value, "round trip of {s:?}: {out}");
            if out == format!("k: {s}\n") {
                assert!(
                    !go_yaml_v2_reads_as_non_string(s),
                    "{s:?} was written plain but YAML 1.1 reads it as a non-string"
                );
            }
            let key = json!({ *s: 1 });
            let out = emit(&key);
            assert_eq!(parse(&out).unwrap(), key, "round trip of key {s:?}: {out}");
            if out == format!("{s}: 1\n") {
                assert!(
                    !go_yaml_v2_reads_as_non_string(s),
                    "key {s:?} was written plain"
                );
            }
        }
    }

    fn scalar() -> impl Strategy<Value = serde_json::Value> {
        prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            (-1.0e15f64..1.0e15).prop_map(|f| json!(f)),
            "[ -~\\t\\nñé€]{0,24}".prop_map(serde_json::Value::String),
            prop::sample::select(TRICKY).prop_map(|s| json!(s)),
        ]
    }

    /// What `split_documents` did before memchr (issue 13): every line looked at.
    fn split_documents_by_lines(text: &str) -> Vec<(usize, &str)> {
        let mut chunks = Vec::new();
        let (mut start, mut start_line, mut offset) = (0, 1, 0);
        for (idx, line) in text.split_inclusive('\n').enumerate() {
            let trimmed = line.trim_end_matches(['\n', '\r']);
            if trimmed == "---"
                || trimmed.starts_with("--- ")
                || trimmed.starts_with("---\t")
                || trimmed == "..."
            {
                chunks.push((start_line, &text[start..offset]));
                start = offset + line.len();
                start_line = idx + 2;
            }
            offset += line.len();
        }
        chunks.push((start_line, &text[start..]));
        chunks.retain(|(_, chunk)| !is_blank_document(chunk));
        chunks
    }

    fn value() -> impl Strategy<Value = serde_json::Value> {
        scalar().prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::vec(("[a-zA-Z0-9._/-]{0,12}|on|yes|y|~|1.10", inner), 0..6)
                    .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn emitted_yaml_reparses_to_the_same_value(v in value()) {
            let out = emit(&v);
            prop_assert_eq!(parse(&out).unwrap(), v, "emitted:\n{}", out);
        }

        #[test]
        fn plain_strings_are_strings_for_yaml_1_1(s in "[ -~]{0,12}") {
            let out = emit(&json!({ "k": &s }));
            if out == format!("k: {s}\n") {
                prop_assert!(!go_yaml_v2_reads_as_non_string(&s), "{:?} written plain", s);
            }
        }

        /// Issue 13: the same, on any text made of the bytes that matter to the split.
        #[test]
        fn documents_split_as_line_by_line_bytes(text in "[-.\\r\\n \\ta#]{0,40}") {
            prop_assert_eq!(split_documents(&text), split_documents_by_lines(&text), "{:?}", text);
        }

        /// Issue 13: the memchr scan splits as the line-by-line one did, line numbers included.
        #[test]
        fn documents_split_as_line_by_line(lines in prop::collection::vec(
            prop_oneof!["---", "--- # c", "---\t", "...", "-", "- a", "--", ".", "a: 1", "", "# x", "---x", "---\r"],
            0..12,
        ), last_newline: bool) {
            let mut text = lines.join("\n");
            if last_newline {
                text.push('\n');
            }
            prop_assert_eq!(split_documents(&text), split_documents_by_lines(&text), "{:?}", text);
        }

        #[test]
        fn streams_round_trip(docs in prop::collection::vec(value().prop_filter("documents are objects", serde_json::Value::is_object), 0..5)) {
            let text = emit_stream(&docs);
            let parsed: Vec<serde_json::Value> = parse_stream(&text).unwrap().into_iter().map(|d| d.value).collect();
            let expected: Vec<serde_json::Value> = docs.into_iter().filter(|d| !d.is_null()).collect();
            prop_assert_eq!(parsed, expected, "stream:\n{}", text);
        }
    }
}

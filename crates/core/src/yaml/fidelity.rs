//! Whether items written back from their values keep what a YAML 1.2 reader reads in the input
//! (issue 21 M5).
//!
//! Untouched items are copied from the input text. Where that cannot be done (anchors and
//! aliases, flow or JSON layouts), they are written from the values our reader made, and
//! those are serde-saphyr's reading: `1_000` is 1000, `017` is 17.0, an integer beyond 64 bits
//! is a float, a case-mixed `True` is a boolean, `!!binary` is decoded and other tags are
//! dropped. Written back, each is a different value for the next tool in the pipeline, which
//! reads YAML 1.2 (kyaml, kpt, kustomize). [`first_change`] finds the first scalar or tag whose
//! value would change, so the caller can refuse the input instead of changing it silently.

use granit_parser::{Event, Parser, ScalarStyle};
use serde_json::Value;

use super::events::scalar::Plain;
use super::events::scalar::plain;

/// A scalar (or a tag) that would not be written back as a YAML 1.2 reader reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// 1-based line of the scalar in the text given to [`first_change`].
    pub line: usize,
    /// The scalar as written (shortened), or the tag.
    pub text: String,
    /// What a YAML 1.2 reader reads and what would be written instead.
    pub why: String,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: `{}` {}", self.line, self.text, self.why)
    }
}

/// The first scalar or tag of `text` (one YAML document) whose value as written back would
/// differ from a YAML 1.2 core-schema reading; `None` when every value survives, or when the
/// text does not parse (the reader reports that).
#[must_use]
pub fn first_change(text: &str) -> Option<Change> {
    let mut parser = Parser::new_from_str(text);
    while let Some(next) = parser.next_event() {
        let (event, span) = next.ok()?;
        let line = span.start.line();
        let (tag, scalar) = match &event {
            Event::Scalar(value, style, _, tag) => (tag.as_deref(), Some((value, *style))),
            Event::SequenceStart(_, _, tag) | Event::MappingStart(_, _, tag) => {
                (tag.as_deref(), None)
            }
            _ => continue,
        };
        if let Some(tag) = tag {
            // `!!str`, `!!seq` and `!!map` only say what the node is anyway; every other tag
            // (`!!binary`, `!!int` on a quoted scalar, an application's `!foo`) is read and
            // then lost.
            let kept = match scalar {
                Some(_) => tag.is_yaml_core_schema_tag("str"),
                None => tag.is_yaml_core_schema_tag("seq") || tag.is_yaml_core_schema_tag("map"),
            };
            if !kept {
                let name = format!("{}{}", tag.original_handle(), tag.suffix());
                return Some(Change {
                    line,
                    text: shorten(&name),
                    why: "is a tag that would be dropped".to_owned(),
                });
            }
            continue;
        }
        let Some((value, ScalarStyle::Plain)) = scalar else {
            continue;
        };
        if let Some(why) = changes(value) {
            return Some(Change {
                line,
                text: shorten(value),
                why,
            });
        }
    }
    None
}

fn shorten(text: &str) -> String {
    const MAX: usize = 40;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// What YAML 1.2's core schema reads in a plain scalar.
#[derive(Debug, PartialEq)]
enum Core {
    Null,
    Bool(bool),
    /// An integer of any size, as its digits in base 10 with an optional `-`.
    Int(i128),
    /// An integer beyond 128 bits.
    BigInt,
    Float(f64),
    Str,
}

/// Why writing `text` back from our reading changes it, if it does.
fn changes(text: &str) -> Option<String> {
    let ours = match plain(text) {
        Plain::Value(value) => value,
        Plain::Str => Value::String(text.to_owned()),
        // Refused (a non-finite float): the reader reports it.
        Plain::Refused => return None,
    };
    let core = core(text);
    let same = match (&core, &ours) {
        (Core::Null, Value::Null) | (Core::Str, Value::String(_)) => true,
        (Core::Bool(a), Value::Bool(b)) => a == b,
        (Core::Int(a), Value::Number(n)) => {
            n.as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                == Some(*a)
        }
        #[allow(clippy::float_cmp)] // the same text read as f64 twice
        (Core::Float(a), Value::Number(n)) => n.as_f64() == Some(*a),
        _ => false,
    };
    if same {
        return None;
    }
    let read = match core {
        Core::Null => "null".to_owned(),
        Core::Bool(b) => format!("the boolean {b}"),
        Core::Int(i) => format!("the integer {i}"),
        Core::BigInt => "an integer beyond 64 bits".to_owned(),
        Core::Float(f) => format!("the float {f}"),
        Core::Str => format!("the string {}", serde_json::Value::String(text.to_owned())),
    };
    let written = match &ours {
        Value::String(s) => format!("the string {}", Value::String(s.clone())),
        other => super::emit(other).trim_end().to_owned(),
    };
    Some(format!(
        "is {read} to a YAML 1.2 reader, but would be written back as {written}"
    ))
}

/// YAML 1.2.2 core schema (§10.3.2) resolution of a plain scalar.
fn core(text: &str) -> Core {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Core::Null,
        "true" | "True" | "TRUE" => return Core::Bool(true),
        "false" | "False" | "FALSE" => return Core::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Core::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Core::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Core::Float(f64::NAN),
        _ => {}
    }
    let bytes = text.as_bytes();
    let all = |s: &[u8], f: fn(&u8) -> bool| !s.is_empty() && s.iter().all(f);
    if let Some(hex) = text.strip_prefix("0x")
        && all(hex.as_bytes(), u8::is_ascii_hexdigit)
    {
        return i128::from_str_radix(hex, 16).map_or(Core::BigInt, Core::Int);
    }
    if let Some(oct) = text.strip_prefix("0o")
        && all(oct.as_bytes(), |b| (b'0'..=b'7').contains(b))
    {
        return i128::from_str_radix(oct, 8).map_or(Core::BigInt, Core::Int);
    }
    let unsigned = match bytes.first() {
        Some(b'-' | b'+') => &bytes[1..],
        _ => bytes,
    };
    if all(unsigned, u8::is_ascii_digit) {
        return text
            .strip_prefix('+')
            .unwrap_or(text)
            .parse::<i128>()
            .map_or(Core::BigInt, Core::Int);
    }
    if is_core_float(unsigned) {
        return text.parse::<f64>().map_or(Core::Str, Core::Float);
    }
    Core::Str
}

/// `(\.[0-9]+ | [0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?` (the sign already taken off).
fn is_core_float(s: &[u8]) -> bool {
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let mut at = digits(s);
    let int_digits = at;
    let mut frac_digits = 0;
    if s.get(at) == Some(&b'.') {
        at += 1;
        frac_digits = digits(&s[at..]);
        at += frac_digits;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if matches!(s.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(s.get(at), Some(b'-' | b'+')) {
            at += 1;
        }
        let exp = digits(&s[at..]);
        if exp == 0 {
            return false;
        }
        at += exp;
    }
    at == s.len()
}

#[cfg(test)]
mod tests {
    use super::first_change;

    fn change(doc: &str) -> Option<String> {
        first_change(doc).map(|c| c.to_string())
    }

    #[test]
    fn issue15_m5_values_that_change_when_written_back() {
        for (doc, expected) in [
            (
                "a: 123456789012345678901234567890",
                "line 1: `123456789012345678901234567890` is the integer 123456789012345678901234567890 to a YAML 1.2 reader, but would be written back as 1.2345678901234568e+29",
            ),
            (
                "a: 1_000",
                "line 1: `1_000` is the string \"1_000\" to a YAML 1.2 reader, but would be written back as 1000",
            ),
            (
                "a:\n  b: 017",
                "line 2: `017` is the integer 17 to a YAML 1.2 reader, but would be written back as 17.0",
            ),
            (
                "a: !!binary aGk=",
                "line 1: `!!binary` is a tag that would be dropped",
            ),
            (
                "a: !foo bar",
                "line 1: `!foo` is a tag that would be dropped",
            ),
            (
                "a: !foo {b: c}",
                "line 1: `!foo` is a tag that would be dropped",
            ),
            (
                "a: tRUE",
                "line 1: `tRUE` is the string \"tRUE\" to a YAML 1.2 reader, but would be written back as true",
            ),
        ] {
            assert_eq!(change(doc).as_deref(), Some(expected), "{doc}");
        }
    }

    #[test]
    fn values_that_survive() {
        for doc in [
            "a: 1",
            "a: -12",
            "a: 0x1F",
            "a: 0o17",
            "a: 1.5",
            "a: 1e3",
            "a: .5",
            "a: true",
            "a: False",
            "a: ~",
            "a:",
            "a: NULL",
            "a: '1_000'",
            "a: \"017\"",
            "a: !!str 12",
            "a: !!map {b: c}",
            "a: on",
            "a: 18446744073709551615",
            "a: [1, two, 3.0]",
        ] {
            assert_eq!(change(doc), None, "{doc}");
        }
    }
}

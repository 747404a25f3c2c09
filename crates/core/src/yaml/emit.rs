//! The YAML writer: a `serde_json::Value` straight to block-style YAML text.
//!
//! It writes byte for byte what serde-saphyr 2.0.0's serializer writes with the options we used
//! through it (two-space indentation, compact `- ` lists under keys, `{}`/`[]` for empty
//! collections, literal blocks for multi-line strings, no folding, YAML 1.1-safe quoting), at a
//! fraction of the cost: no serde state machine, and one ASCII byte scan decides "plain" for the
//! common string; only strings with anything special go through the exact rules, which are
//! serde-saphyr's own (`ser/quoting.rs`, MIT OR Apache-2.0), ported unchanged. The property
//! tests below hold the writer to serde-saphyr's output on arbitrary values.

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

/// Something the writer can put into a document: a value, a map, or a sequence of either.
pub trait Emit {
    /// Write `self` at `at` (callers use [`super::emit_into`]).
    #[doc(hidden)]
    fn emit_at(&self, out: &mut String, at: At);
}

/// Where a node is written (opaque outside the writer).
#[derive(Debug, Clone, Copy)]
pub struct At(Pos);

impl At {
    /// The root of a document, at the start of a line.
    pub(super) const ROOT: Self = Self(Pos::Root);
}

#[derive(Debug, Clone, Copy)]
enum Pos {
    /// The document's root, at column 0 and the start of a line.
    Root,
    /// Right after `key:` of a block map whose keys are at this depth (2 columns a level).
    MapValue(usize),
    /// Right after the `:` line of an explicit `? key` entry of a map at this depth.
    ExplicitValue(usize),
    /// Right after `- ` of a sequence whose dashes are at this depth.
    AfterDash(usize),
}

impl Emit for Value {
    fn emit_at(&self, out: &mut String, at: At) {
        write_value(out, self, at.0);
    }
}

impl Emit for Map<String, Value> {
    fn emit_at(&self, out: &mut String, at: At) {
        write_map(out, self, at.0);
    }
}

impl<T: Emit> Emit for [T] {
    fn emit_at(&self, out: &mut String, at: At) {
        write_seq(out, self, at.0);
    }
}

impl<T: Emit> Emit for Vec<T> {
    fn emit_at(&self, out: &mut String, at: At) {
        write_seq(out, self, at.0);
    }
}

impl<T: Emit + ?Sized> Emit for &T {
    fn emit_at(&self, out: &mut String, at: At) {
        (**self).emit_at(out, at);
    }
}

/// Spaces per nesting level.
const INDENT: usize = 2;
/// The longest key written as `key:`; longer ones use the explicit `? key` form (YAML's
/// 1024-character limit on implicit keys).
const SIMPLE_KEY_MAX_LEN: usize = 1024;

fn indent(out: &mut String, depth: usize) {
    spaces(out, depth * INDENT);
}

fn spaces(out: &mut String, n: usize) {
    const SPACES: &str = "                                                                ";
    let mut n = n;
    while n > SPACES.len() {
        out.push_str(SPACES);
        n -= SPACES.len();
    }
    out.push_str(&SPACES[..n]);
}

/// What goes between a map key's `:` and a scalar value.
fn lead(out: &mut String, pos: Pos) {
    if matches!(pos, Pos::MapValue(_) | Pos::ExplicitValue(_)) {
        out.push(' ');
    }
}

fn write_value(out: &mut String, value: &Value, pos: Pos) {
    match value {
        Value::Null => scalar(out, pos, "null"),
        Value::Bool(true) => scalar(out, pos, "true"),
        Value::Bool(false) => scalar(out, pos, "false"),
        Value::Number(n) => {
            lead(out, pos);
            write_number(out, n);
            out.push('\n');
        }
        Value::String(s) => write_str(out, s, pos),
        Value::Array(items) => write_seq(out, items, pos),
        Value::Object(map) => write_map(out, map, pos),
    }
}

fn scalar(out: &mut String, pos: Pos, text: &str) {
    lead(out, pos);
    out.push_str(text);
    out.push('\n');
}

/// Integers as Rust prints them; floats as zmij's shortest form (what `Number` displays),
/// made a YAML 1.1 float: a `.` in the mantissa and a sign in the exponent (`4e-6` → `4.0e-6`,
/// `1e16` → `1.0e+16`, `3` → `3.0`). `Value` numbers are always finite.
fn write_number(out: &mut String, n: &Number) {
    let start = out.len();
    let _ = write!(out, "{n}");
    if !n.is_f64() {
        return;
    }
    let written = &out[start..];
    if let Some(exp) = written.find(['e', 'E']) {
        let has_dot = written[..exp].contains('.');
        let signed = matches!(written.as_bytes().get(exp + 1), Some(b'+' | b'-'));
        if !signed {
            out.insert(start + exp + 1, '+');
        }
        if !has_dot {
            out.insert_str(start + exp, ".0");
        }
    } else if !written.contains('.') {
        out.push_str(".0");
    }
}

fn write_str(out: &mut String, s: &str, pos: Pos) {
    if s.contains('\n') && is_block_scalar_content_safe(s) {
        write_literal_block(out, s, pos);
        return;
    }
    lead(out, pos);
    if let [c @ (b'.' | b'#' | b'-')] = s.as_bytes() {
        out.push('\'');
        out.push(char::from(*c));
        out.push('\'');
    } else if is_plain_value_safe(s) {
        out.push_str(s);
    } else {
        write_double_quoted(out, s);
    }
    out.push('\n');
}

/// A multi-line string as a literal block (`|`), its body one level deeper than its parent,
/// with the chomping that keeps its trailing newlines and an indentation indicator when the
/// first line starts with spaces.
fn write_literal_block(out: &mut String, s: &str, pos: Pos) {
    let base = match pos {
        Pos::Root => 0,
        Pos::MapValue(depth) | Pos::ExplicitValue(depth) | Pos::AfterDash(depth) => depth,
    };
    let body = base * INDENT + INDENT;
    lead(out, pos);
    let content = s.trim_end_matches('\n');
    let trailing = s.len() - content.len();
    out.push('|');
    if first_line_leading_spaces(content) > 0 {
        out.push('2');
    }
    match trailing {
        0 => out.push('-'),
        1 if !content.is_empty() => {}
        _ => out.push('+'),
    }
    out.push('\n');
    if content.is_empty() {
        for _ in 0..trailing {
            spaces(out, body);
            out.push('\n');
        }
        return;
    }
    for line in content.split('\n') {
        spaces(out, body);
        out.push_str(line);
        out.push('\n');
    }
    for _ in 1..trailing {
        spaces(out, body);
        out.push('\n');
    }
}

fn first_line_leading_spaces(s: &str) -> usize {
    s.split('\n')
        .find(|line| !line.is_empty())
        .map_or(0, |line| line.len() - line.trim_start_matches(' ').len())
}

fn write_map(out: &mut String, map: &Map<String, Value>, pos: Pos) {
    if map.is_empty() {
        lead(out, pos);
        out.push_str("{}\n");
        return;
    }
    let (depth, mut inline) = match pos {
        Pos::Root => (0, false),
        Pos::MapValue(depth) => {
            out.push('\n');
            (depth + 1, false)
        }
        Pos::ExplicitValue(depth) => {
            out.push(' ');
            (depth + 1, true)
        }
        Pos::AfterDash(depth) => (depth + 1, true),
    };
    for (key, value) in map {
        if !inline {
            indent(out, depth);
        }
        inline = false;
        let start = out.len();
        write_key(out, key);
        let text = &out[start..];
        if text.len() <= SIMPLE_KEY_MAX_LEN || text.chars().count() <= SIMPLE_KEY_MAX_LEN {
            out.push(':');
            write_value(out, value, Pos::MapValue(depth));
        } else {
            out.insert_str(start, "? ");
            out.push('\n');
            indent(out, depth);
            out.push(':');
            write_value(out, value, Pos::ExplicitValue(depth));
        }
    }
}

fn write_seq<T: Emit>(out: &mut String, items: &[T], pos: Pos) {
    if items.is_empty() {
        lead(out, pos);
        out.push_str("[]\n");
        return;
    }
    let (depth, mut inline) = match pos {
        Pos::Root => (0, false),
        Pos::MapValue(depth) | Pos::ExplicitValue(depth) => {
            out.push('\n');
            (depth, false)
        }
        Pos::AfterDash(depth) => (depth + 1, true),
    };
    for item in items {
        if !inline {
            indent(out, depth);
        }
        inline = false;
        out.push_str("- ");
        item.emit_at(out, At(Pos::AfterDash(depth)));
    }
}

fn write_key(out: &mut String, key: &str) {
    if is_plain_key_safe(key) {
        out.push_str(key);
    } else {
        write_double_quoted(out, key);
    }
}

fn write_double_quoted(out: &mut String, s: &str) {
    out.push('"');
    escape_double_quoted(s, out);
    out.push('"');
}

// ---------------------------------------------------------------------------------------------
// Quoting: the ASCII fast path, then serde-saphyr's exact rules.
// ---------------------------------------------------------------------------------------------

/// What the fast path can decide about a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fast {
    /// Plain is safe.
    Plain,
    /// The exact rules decide.
    Unsure,
}

/// Words that are not strings to some YAML reader when plain, for strings made of letters:
/// null, booleans (YAML 1.1 included), and the undotted float spellings.
fn is_reserved_word(s: &str) -> bool {
    s.len() <= 5
        && [
            "null", "true", "false", "nan", "inf", "y", "yes", "n", "no", "on", "off",
        ]
        .iter()
        .any(|w| s.eq_ignore_ascii_case(w))
}

/// One scan for the common string: it starts with an ASCII letter, holds only printable ASCII
/// and does not end with a space. Then no numeric, timestamp, indicator, document-marker or
/// whitespace rule can apply, and what is left is `#` after a space, `: ` and a final `:`
/// (and for keys any `:` and the flow indicators).
fn fast_plain(s: &str, key: bool) -> Fast {
    let bytes = s.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return Fast::Unsure;
    };
    if !first.is_ascii_alphabetic() || *last == b' ' || *last == b':' {
        return Fast::Unsure;
    }
    let mut prev = 0u8;
    for &b in bytes {
        let ok = match b {
            b'#' => prev != b' ',
            b':' | b',' | b'[' | b']' | b'{' | b'}' => !key,
            0x20..=0x7E => true,
            _ => false,
        };
        if !ok || (prev == b':' && b == b' ') {
            return Fast::Unsure;
        }
        prev = b;
    }
    if is_reserved_word(s) {
        return Fast::Unsure;
    }
    Fast::Plain
}

/// Whether a string may be written plain as a block value (YAML 1.1 rules).
pub(super) fn is_plain_value_safe(s: &str) -> bool {
    fast_plain(s, false) == Fast::Plain || exact::is_plain_value_safe(s, false, false)
}

/// Whether a string may be written plain as a map key: serde-saphyr's key rule, safe in
/// block and flow maps alike.
pub(super) fn is_plain_key_safe(s: &str) -> bool {
    fast_plain(s, true) == Fast::Plain
        || (exact::is_plain_safe(s) && exact::is_plain_value_safe(s, false, true))
}

/// Whether every character can be written literally inside a block scalar.
fn is_block_scalar_content_safe(s: &str) -> bool {
    s.chars().all(|ch| match ch {
        '\n' | '\t' => true,
        '\r' | '\u{0085}' | '\u{2028}' | '\u{2029}' | '\u{FEFF}' => false,
        c => matches!(
            c as u32,
            0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x0010_FFFF
        ),
    })
}

/// Characters that cannot survive a plain or single-quoted scalar.
fn needs_escaping(ch: char) -> bool {
    ch.is_control()
        || matches!(
            ch,
            '\u{FEFF}' | '\u{2028}' | '\u{2029}' | '\u{FFFE}' | '\u{FFFF}'
        )
}

/// The contents of a double-quoted scalar, without the quotes; runs without escapes are
/// copied whole.
fn escape_double_quoted(s: &str, out: &mut String) {
    let mut copied = 0;
    for (i, ch) in s.char_indices() {
        let escape: &str = match ch {
            '\\' => "\\\\",
            '"' => "\\\"",
            '\0' => "\\0",
            '\u{7}' => "\\a",
            '\u{8}' => "\\b",
            '\t' => "\\t",
            '\n' => "\\n",
            '\u{b}' => "\\v",
            '\u{c}' => "\\f",
            '\r' => "\\r",
            '\u{1b}' => "\\e",
            '\u{FEFF}' => "\\uFEFF",
            '\u{0085}' => "\\N",
            '\u{2028}' => "\\L",
            '\u{2029}' => "\\P",
            c if (c as u32) <= 0xFF && (c.is_control() || (0x7F..=0x9F).contains(&(c as u32))) => {
                out.push_str(&s[copied..i]);
                let _ = write!(out, "\\x{:02X}", c as u32);
                copied = i + c.len_utf8();
                continue;
            }
            c if (c as u32) <= 0xFFFF && needs_escaping(c) => {
                out.push_str(&s[copied..i]);
                let _ = write!(out, "\\u{:04X}", c as u32);
                copied = i + c.len_utf8();
                continue;
            }
            _ => continue,
        };
        out.push_str(&s[copied..i]);
        out.push_str(escape);
        copied = i + ch.len_utf8();
    }
    out.push_str(&s[copied..]);
}

/// serde-saphyr 2.0.0's quoting rules (`ser/quoting.rs`, `parse_scalars::parse_yaml11_bool`),
/// ported unchanged: the slow path for strings the fast scan is not sure about.
mod exact {
    use super::needs_escaping;

    fn parse_yaml11_bool(s: &str) -> bool {
        let t = s.trim_matches([' ', '\t', '\r', '\n']);
        ["true", "yes", "y", "on", "false", "no", "n", "off"]
            .iter()
            .any(|w| t.eq_ignore_ascii_case(w))
    }

    /// Numeric syntax, without constructing a value.
    fn is_numeric(s: &str, yaml_12: bool) -> bool {
        if !matches!(
            s.as_bytes().first(),
            Some(b'0'..=b'9' | b'+' | b'-' | b'.' | b'_')
        ) {
            return false;
        }
        let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
        if unsigned.eq_ignore_ascii_case(".inf") || unsigned.eq_ignore_ascii_case(".nan") {
            return true;
        }
        if !yaml_12 {
            if is_yaml11_sexagesimal(s) {
                return true;
            }
            if let Some((radix, digits)) = radix_digits(unsigned)
                && is_digit_run(digits, radix, false)
            {
                return true;
            }
        }
        let normalized;
        let s = if !yaml_12 && s.contains('_') {
            normalized = s.replace('_', "");
            normalized.as_str()
        } else {
            s
        };
        let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
        if let Some((radix, digits)) = radix_digits(unsigned) {
            let digits = if !yaml_12 && (s.starts_with("0b") || s.starts_with("0o")) {
                digits.strip_prefix(['+', '-']).unwrap_or(digits)
            } else {
                digits
            };
            return is_digit_run(digits, radix, true);
        }
        let mantissa = match unsigned.split_once(['e', 'E']) {
            Some((mantissa, exponent)) => {
                let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
                if !is_digit_run(exponent, 10, true) {
                    return false;
                }
                mantissa
            }
            None => unsigned,
        };
        match mantissa.split_once('.') {
            Some((whole, fraction)) => {
                if !whole.is_empty() && !is_digit_run(whole, 10, true) {
                    return false;
                }
                if !yaml_12 {
                    fraction.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                } else if fraction.is_empty() {
                    !whole.is_empty()
                } else {
                    is_digit_run(fraction, 10, true)
                }
            }
            None => is_digit_run(mantissa, 10, true),
        }
    }

    fn radix_digits(s: &str) -> Option<(u32, &str)> {
        match s.as_bytes() {
            [b'0', b'b' | b'B', ..] => Some((2, &s[2..])),
            [b'0', b'o' | b'O', ..] => Some((8, &s[2..])),
            [b'0', b'x' | b'X', ..] => Some((16, &s[2..])),
            _ => None,
        }
    }

    fn is_digit_run(s: &str, radix: u32, strict_underscores: bool) -> bool {
        let is_digit = |b: u8| b.is_ascii() && char::from(b).is_digit(radix);
        let bytes = s.as_bytes();
        !bytes.is_empty()
            && bytes.iter().enumerate().all(|(i, &b)| {
                is_digit(b)
                    || (b == b'_'
                        && (!strict_underscores
                            || (i > 0
                                && is_digit(bytes[i - 1])
                                && bytes.get(i + 1).is_some_and(|&next| is_digit(next)))))
            })
    }

    /// YAML 1.1 base-60 integers and floats.
    fn is_yaml11_sexagesimal(s: &str) -> bool {
        let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
        let (integer, fraction) = match unsigned.split_once('.') {
            Some((integer, fraction)) => (integer, Some(fraction)),
            None => (unsigned, None),
        };
        let Some((first, rest)) = integer.split_once(':') else {
            return false;
        };
        let Some(first_digit) = first.as_bytes().first() else {
            return false;
        };
        if !first_digit.is_ascii_digit()
            || (fraction.is_none() && *first_digit == b'0')
            || !first.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        {
            return false;
        }
        if !rest.split(':').all(|part| match part.as_bytes() {
            [digit] => digit.is_ascii_digit(),
            [tens, units] => matches!(tens, b'0'..=b'5') && units.is_ascii_digit(),
            _ => false,
        }) {
            return false;
        }
        fraction.is_none_or(|part| part.bytes().all(|b| b.is_ascii_digit() || b == b'_'))
    }

    fn digits(s: &mut &str, min: usize, max: usize) -> bool {
        let len = s.bytes().take_while(u8::is_ascii_digit).count();
        if !(min..=max).contains(&len) {
            return false;
        }
        *s = &s[len..];
        true
    }

    fn prefix(s: &mut &str, ch: char) -> bool {
        if let Some(rest) = s.strip_prefix(ch) {
            *s = rest;
            true
        } else {
            false
        }
    }

    /// Timestamp syntax without calendar validation.
    fn is_yaml11_timestamp(mut s: &str) -> bool {
        if !digits(&mut s, 4, 4)
            || !prefix(&mut s, '-')
            || !digits(&mut s, 1, 2)
            || !prefix(&mut s, '-')
            || !digits(&mut s, 1, 2)
        {
            return false;
        }
        if s.is_empty() {
            return true;
        }
        if let Some(rest) = s.strip_prefix(['T', 't']) {
            s = rest;
        } else {
            let rest = s.trim_start_matches([' ', '\t']);
            if rest.len() == s.len() {
                return false;
            }
            s = rest;
        }
        if !digits(&mut s, 1, 2)
            || !prefix(&mut s, ':')
            || !digits(&mut s, 1, 2)
            || !prefix(&mut s, ':')
            || !digits(&mut s, 1, 2)
        {
            return false;
        }
        if prefix(&mut s, '.') || prefix(&mut s, ',') {
            digits(&mut s, 0, usize::MAX);
        }
        s = s.trim_start_matches([' ', '\t']);
        if s.is_empty() || s == "Z" {
            return true;
        }
        if !(prefix(&mut s, '+') || prefix(&mut s, '-')) || !digits(&mut s, 1, 2) {
            return false;
        }
        if prefix(&mut s, ':') && !digits(&mut s, 2, 2) {
            return false;
        }
        s.is_empty()
    }

    /// Whether implicit scalar resolution can change a string's type or reject it.
    fn is_ambiguous(s: &str, yaml_12: bool) -> bool {
        s.is_empty()
            || s == "~"
            || s.eq_ignore_ascii_case("null")
            || s.eq_ignore_ascii_case("true")
            || s.eq_ignore_ascii_case("false")
            || is_numeric(s, yaml_12)
            || s.eq_ignore_ascii_case("nan")
            || s.eq_ignore_ascii_case("inf")
            || s.eq_ignore_ascii_case("+inf")
            || s.eq_ignore_ascii_case("-inf")
            || (!yaml_12
                && (parse_yaml11_bool(s) || is_yaml11_timestamp(s) || matches!(s, "<<" | "=")))
    }

    fn starts_with_document_marker(s: &str) -> bool {
        let Some(rest) = s.strip_prefix("---").or_else(|| s.strip_prefix("...")) else {
            return false;
        };
        rest.is_empty() || rest.as_bytes().first().is_some_and(u8::is_ascii_whitespace)
    }

    /// The key rule (with [`is_plain_value_safe`] in flow).
    pub(super) fn is_plain_safe(s: &str) -> bool {
        if is_ambiguous(s, true) || s == "<<" || starts_with_document_marker(s) {
            return false;
        }
        let bytes = s.as_bytes();
        if bytes.first().is_some_and(u8::is_ascii_whitespace)
            || bytes.last().is_some_and(u8::is_ascii_whitespace)
        {
            return false;
        }
        match bytes[0] {
            b'-' | b'?' if bytes.len() == 1 || bytes[1].is_ascii_whitespace() => return false,
            b',' | b':' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>'
            | b'\'' | b'"' | b'%' | b'@' | b'`' => return false,
            _ => {}
        }
        !contains_any_or_is_control(s, &[':']) && !has_comment_start(s)
    }

    /// The value rule.
    pub(super) fn is_plain_value_safe(s: &str, yaml_12: bool, in_flow: bool) -> bool {
        if is_ambiguous(s, yaml_12) || starts_with_document_marker(s) {
            return false;
        }
        let bytes = s.as_bytes();
        if bytes.first().is_some_and(u8::is_ascii_whitespace)
            || bytes.last().is_some_and(u8::is_ascii_whitespace)
        {
            return false;
        }
        match bytes {
            [b'-' | b'?', b1, ..] if b1.is_ascii_whitespace() => return false,
            [b'-' | b'?']
            | [
                b',' | b':' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>'
                | b'\'' | b'"' | b'%' | b'@' | b'`',
                ..,
            ] => return false,
            _ => {}
        }
        if s.contains(": ") || s.trim().ends_with(':') {
            return false;
        }
        if in_flow {
            !contains_any_or_is_control(s, &[',', '[', ']', '{', '}']) && !has_comment_start(s)
        } else {
            !contains_any_or_is_control(s, &[]) && !has_comment_start(s)
        }
    }

    fn contains_any_or_is_control(string: &str, values: &[char]) -> bool {
        string
            .chars()
            .any(|x| needs_escaping(x) || values.contains(&x))
    }

    fn has_comment_start(string: &str) -> bool {
        string
            .chars()
            .zip(string.chars().skip(1))
            .any(|(prev, curr)| prev.is_whitespace() && curr == '#')
    }
}

#[cfg(test)]
mod tests {
    use super::super::{emit, emit_into, parse, serializer_options};
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// What serde-saphyr writes for `value` with our options: the writer's oracle.
    fn oracle<T: serde::Serialize>(value: &T) -> String {
        let mut out = String::new();
        serde_saphyr::to_fmt_writer_with_options(&mut out, value, serializer_options())
            .expect("serde-saphyr serializes JSON values");
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out
    }

    fn same_as_oracle(value: &Value) -> Result<(), TestCaseError> {
        let ours = emit(value);
        let theirs = oracle(value);
        prop_assert_eq!(&ours, &theirs, "value: {:?}", value);
        let back = parse(&ours).map_err(|e| TestCaseError::fail(format!("{e}\n{ours}")))?;
        prop_assert_eq!(&back, value, "emitted:\n{}", ours);
        Ok(())
    }

    /// Strings that exercise every quoting rule.
    const SPECIAL: &[&str] = &[
        "",
        " ",
        "  ",
        "\t",
        "\n",
        "\n\n",
        "\n\nx",
        "x\n\n\n",
        " x\ny",
        "  x\n y\n",
        "\tx\ny",
        "x\r\ny",
        "a\u{85}b",
        "a\u{2028}b",
        "\u{FEFF}x",
        "a\u{FFFE}",
        "\u{7F}",
        "\u{9F}x",
        "\u{0}",
        "\u{1b}[0m",
        "~",
        "null",
        "NULL",
        "Null",
        "nUll",
        "true",
        "TRUE",
        "tRue",
        "false",
        "yes",
        "Yes",
        "YES",
        "yEs",
        "no",
        "NO",
        "on",
        "ON",
        "oN",
        "off",
        "OFF",
        "y",
        "Y",
        "n",
        "N",
        "nan",
        "NaN",
        "inf",
        "Inf",
        "+inf",
        "-inf",
        ".inf",
        "-.inf",
        "+.INF",
        ".nan",
        ".NaN",
        "0x1F",
        "0X1f",
        "0x",
        "0x_1",
        "0o17",
        "0o",
        "0b101",
        "0b",
        "0b2",
        "-0b1",
        "0b+1",
        "0o-7",
        "+0x1",
        "1e3",
        "1E-3",
        "1e",
        "e3",
        "1.5e+3",
        ".5",
        "5.",
        "0.",
        "1.10",
        "1.2.3",
        "1..2",
        "0777",
        "08",
        "09.5",
        "1_000",
        "_1",
        "1__0",
        "1_",
        "+",
        "-",
        ".",
        "#",
        "-1",
        "+1",
        "0",
        "00",
        "12:30",
        "1:20:30",
        "190:20:30",
        "0:30",
        "1:60",
        "1:5:",
        "1:20.5",
        "2001-12-14",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43.10 -5",
        "2001-12-14T21:59:43Z",
        "2001-1-1",
        "2001-12-14x",
        "<<",
        "=",
        "==",
        "a: b",
        "a:b",
        "a:",
        "a :",
        ":",
        ":a",
        "::",
        "- x",
        "-x",
        "--",
        "---",
        "--- x",
        "---x",
        "...",
        "... x",
        "? x",
        "?",
        "?x",
        "#x",
        "x #y",
        "x#y",
        "x\t#y",
        "@x",
        "`x",
        "!x",
        "&x",
        "*x",
        "%x",
        "{x}",
        "x{",
        "[x]",
        "x]",
        "x,y",
        ",x",
        "|",
        "|x",
        ">",
        ">x",
        "'x'",
        "x'y",
        "\"x\"",
        "x\"y",
        "\\",
        "x\\y",
        "null ",
        " null",
        "x ",
        " x",
        "x y",
        "ñ",
        "é: x",
        "€",
        "字",
        "😀",
        "x: y: z",
        "http://x.io/a?b=c#d",
        "quay.io/jetstack/cert-manager:v1.14.0",
        "cert-manager",
        "app.kubernetes.io/name",
        "10m",
        "v1",
        "1Gi",
        "*",
        "a\u{a0}",
        "\u{a0}a",
        "a\u{3000}#b",
        "a\u{2003}",
    ];

    fn string() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => prop::sample::select(SPECIAL).prop_map(str::to_owned),
            2 => "[ -~]{0,16}",
            2 => "[a-z0-9 .:#'\"-]{0,10}",
            2 => "[ \\t\\n\\r#:\\-?,\\[\\]{}'\"a0]{0,8}",
            1 => "\\PC{0,12}",
            1 => ".{0,12}",
            1 => "[0-9_.+eExXoObB:-]{1,10}",
            1 => "[ a-z\\n]{0,40}\\n{0,3}",
            1 => (prop::sample::select(SPECIAL), prop::sample::select(SPECIAL))
                .prop_map(|(a, b)| format!("{a}{b}")),
            // Around the 1024-character limit of implicit keys, ASCII and multi-byte.
            1 => (1020usize..1030, prop::sample::select(&["a", "é", "\t", "'", "x y"][..]))
                .prop_map(|(n, s)| s.repeat(n / s.chars().count())),
        ]
    }

    fn number() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            (-1.0e6f64..1.0e6).prop_map(|f| json!(f)),
            prop::sample::select(&[0.0, -0.0, 1e16, 1e-7, 4e-6, 1.5e300, 123_456_789.0][..])
                .prop_map(|f| json!(f)),
        ]
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            1 => Just(Value::Null),
            1 => any::<bool>().prop_map(Value::Bool),
            2 => number(),
            6 => string().prop_map(Value::String),
            1 => prop::sample::select(vec![
                json!({}),
                json!([]),
                json!([[]]),
                json!({"a": {}}),
                json!([{}]),
                json!([[{}], {"a": []}]),
            ]),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((string(), inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn writes_what_serde_saphyr_writes(v in value()) {
            same_as_oracle(&v)?;
        }

        #[test]
        fn strings_as_values_and_keys_match(s in string()) {
            same_as_oracle(&Value::String(s.clone()))?;
            same_as_oracle(&json!({ "k": &s, "l": [&s, [&s]], "m": {"n": &s} }))?;
            same_as_oracle(&json!([&s, { "k": &s }, [&s]]))?;
            same_as_oracle(&json!({ &s: &s }))?;
            same_as_oracle(&json!([{ &s: [&s, {}], "x": 1 }, { "y": { &s: { &s: &s } } }]))?;
        }

        #[test]
        fn sequences_and_maps_of_items_match(items in prop::collection::vec(value(), 0..4)) {
            let mut ours = String::new();
            emit_into(&mut ours, &items[..]);
            prop_assert_eq!(&ours, &oracle(&&items[..]));
            let maps: Vec<Map<String, Value>> =
                items.iter().filter_map(|v| v.as_object().cloned()).collect();
            let mut ours = String::new();
            emit_into(&mut ours, &std::slice::from_ref(&maps));
            prop_assert_eq!(&ours, &oracle(&std::slice::from_ref(&maps)));
        }
    }

    #[test]
    fn every_special_string_matches_in_every_position() {
        for s in SPECIAL {
            for v in [
                json!(s),
                json!({ "k": s }),
                json!({ *s: s }),
                json!([s, [s], { "k": [s] }]),
                json!([{ *s: { "a": s } }]),
            ] {
                assert_eq!(emit(&v), oracle(&v), "{v:?}");
                assert_eq!(parse(&emit(&v)).unwrap(), v, "{v:?}");
            }
        }
    }

    #[test]
    fn long_keys_use_the_explicit_form() {
        let key = "k".repeat(1025);
        for v in [
            json!({ &key: "v" }),
            json!({ &key: { "a": 1, "b": [1, 2] } }),
            json!({ &key: [1, { "a": "x\ny" }] }),
            json!({ &key: {} }),
            json!({ &key: [] }),
            json!({ &key: "multi\nline\n" }),
            json!([{ &key: { "a": { &key: 1 } } }]),
            json!({ "a": { &key: [[1, 2], { "b": 3 }] } }),
        ] {
            let out = emit(&v);
            assert!(out.contains("? "), "{out}");
            assert_eq!(out, oracle(&v));
            assert_eq!(parse(&out).unwrap(), v, "{out}");
        }
    }

    #[test]
    fn layout_examples() {
        let v = json!({
            "a": [1, [2, []], {"b": {}, "c": "x\n  y"}],
            "d": {"e": [{"f": "  lead\n"}]},
            "g": 1.0,
            "h": 1e300,
            "i": "",
        });
        let expected = concat!(
            "a:\n- 1\n- - 2\n  - []\n- b: {}\n  c: |-\n    x\n      y\n",
            "d:\n  e:\n  - f: |2\n        lead\n",
            "g: 1.0\nh: 1.0e+300\ni: \"\"\n",
        );
        assert_eq!(emit(&v), expected);
        assert_eq!(emit(&v), oracle(&v));
    }

    #[test]
    fn fast_path_agrees_with_the_exact_rules() {
        for s in SPECIAL
            .iter()
            .copied()
            .chain(["abc", "a b", "a:b", "a#b", "a,b", "ON"])
        {
            if fast_plain(s, false) == Fast::Plain {
                assert!(exact::is_plain_value_safe(s, false, false), "{s:?}");
            }
            if fast_plain(s, true) == Fast::Plain {
                assert!(
                    exact::is_plain_safe(s) && exact::is_plain_value_safe(s, false, true),
                    "key {s:?}"
                );
            }
        }
    }
}

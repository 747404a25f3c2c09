//! Values as Go's `fmt` and `strconv` print them, for messages that must read as the
//! apiserver's (`field.Error`, kube-openapi).

use std::fmt::Write as _;

/// A decoded JSON number as Go's `%v` prints it: an int64, or a float64 in `%g` form with the
/// shortest digits (exponent form from 1e+06 up and below 1e-04).
pub(super) fn go_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    let Some(f) = n.as_f64() else {
        return n.to_string();
    };
    // Rust's `{:e}` has the shortest digits: `1.5e6`, `1e-5`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        return format!("{f}");
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
}

/// Go's `strconv.Quote`: printable characters as they are, the rest escaped.
pub(super) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if c.is_control() || (c.is_whitespace() && c != ' ') => {
                let code = u32::from(c);
                let _ = match code {
                    0..0x80 => write!(out, "\\x{code:02x}"),
                    0x80..0x1_0000 => write!(out, "\\u{code:04x}"),
                    _ => write!(out, "\\U{code:08x}"),
                };
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

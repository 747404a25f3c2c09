//! Scalar resolution as serde-saphyr's `deserialize_any` does it for `serde_json::Value`:
//! strict booleans, YAML 1.2 numbers (no legacy octal), non-finite floats refused. Kept apart
//! from the event reader so the differential tests have one place to compare.

use std::borrow::Cow;

use granit_parser::ScalarStyle;
use serde_json::Value;

/// serde-saphyr's `yaml_trim`.
fn yaml_trim(s: &str) -> &str {
    s.trim_matches([' ', '\t', '\r', '\n'])
}

/// An untagged scalar as serde-saphyr's `deserialize_any` gives it to `serde_json::Value`
/// (strict booleans, YAML 1.2 numbers, no legacy octal); `None` where it refuses the scalar
/// (non-finite floats).
pub(super) fn resolve(text: Cow<'_, str>, style: ScalarStyle) -> Option<Value> {
    if style != ScalarStyle::Plain {
        return Some(Value::String(text.into_owned()));
    }
    match plain(&text) {
        Plain::Value(value) => Some(value),
        Plain::Str => Some(Value::String(text.into_owned())),
        Plain::Refused => None,
    }
}

/// What a plain scalar resolves to (see [`resolve`]).
pub(in crate::yaml) enum Plain {
    Value(Value),
    /// The text itself, as a string.
    Str,
    Refused,
}

pub(in crate::yaml) fn plain(text: &str) -> Plain {
    if text.is_empty() || text == "~" || text.eq_ignore_ascii_case("null") {
        return Plain::Value(Value::Null);
    }
    let t = yaml_trim(text);
    // Only these first bytes can start a boolean or a number: skip the rest quickly.
    match t.as_bytes().first() {
        Some(b'0'..=b'9' | b'+' | b'-' | b'.' | b't' | b'T' | b'f' | b'F') => {}
        _ => return Plain::Str,
    }
    if t.eq_ignore_ascii_case("true") {
        return Plain::Value(Value::Bool(true));
    }
    if t.eq_ignore_ascii_case("false") {
        return Plain::Value(Value::Bool(false));
    }
    if let Some(n) = int(t) {
        return Plain::Value(n);
    }
    match float(t) {
        Float::Finite(f) => {
            Plain::Value(serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number))
        }
        Float::NonFinite => Plain::Refused,
        Float::Not => Plain::Str,
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

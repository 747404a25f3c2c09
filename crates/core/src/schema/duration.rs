//! Go `time.ParseDuration` and the strfmt duration fallback, for `format: duration`.
//!
//! Imports nothing from the other schema files.

use std::sync::LazyLock;

use regex::Regex;

// strfmt `durationMatcher` `((\d+)\s*([A-Za-zµ]+))`; Go's \s and \d are ASCII. `None` would
// mean a bug in the pattern (the `format_duration` test covers it).
static RX_DURATION_PART: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)").ok());

/// Go `time.ParseDuration`; `None` on any error (including overflow).
pub(super) fn go_parse_duration(s: &str) -> Option<u64> {
    const LIMIT: u64 = 1 << 63;
    let mut rest = s.as_bytes();
    let mut negative = false;
    if let Some((&c, tail)) = rest.split_first()
        && (c == b'-' || c == b'+')
    {
        negative = c == b'-';
        rest = tail;
    }
    if rest == b"0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        if !(rest[0] == b'.' || rest[0].is_ascii_digit()) {
            return None;
        }
        let int_len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut value: u64 = 0;
        for &c in &rest[..int_len] {
            if value > LIMIT / 10 {
                return None;
            }
            value = value * 10 + u64::from(c - b'0');
            if value > LIMIT {
                return None;
            }
        }
        rest = &rest[int_len..];
        let mut fraction: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut frac_len = 0;
        if rest.first() == Some(&b'.') {
            rest = &rest[1..];
            frac_len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            let mut overflow = false;
            for &c in &rest[..frac_len] {
                // Like Go's leadingFraction: stop accumulating once precision runs out.
                if overflow || fraction > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                fraction = fraction * 10 + u64::from(c - b'0');
                scale *= 10.0;
            }
            rest = &rest[frac_len..];
        }
        if int_len == 0 && frac_len == 0 {
            return None;
        }
        let unit_len = rest
            .iter()
            .take_while(|c| !(**c == b'.' || c.is_ascii_digit()))
            .count();
        if unit_len == 0 {
            return None;
        }
        let unit: u64 = match &rest[..unit_len] {
            b"ns" => 1,
            // `µs` is U+00B5 and `μs` U+03BC, both accepted by Go.
            b"us" | b"\xc2\xb5s" | b"\xce\xbcs" => 1_000,
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            _ => return None,
        };
        rest = &rest[unit_len..];
        if value > LIMIT / unit {
            return None;
        }
        value *= unit;
        if fraction > 0 {
            #[allow(
                clippy::cast_precision_loss,
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss
            )]
            // Go does this step in float64 as well.
            let extra = (fraction as f64 * (unit as f64 / scale)) as u64;
            value = value.checked_add(extra)?;
            if value > LIMIT {
                return None;
            }
        }
        total = total.checked_add(value)?;
        if total > LIMIT {
            return None;
        }
    }
    if !negative && total > LIMIT - 1 {
        return None;
    }
    Some(total)
}

/// The strfmt fallback (kube-openapi `pkg/validation/strfmt/duration.go`, `ParseDuration`):
/// every `<n><space>*<letters>` found ANYWHERE in the text is read, and the text is a duration
/// when one of them names a unit (`3 days`, `2 hours`, even `in 3 days please`); a count that
/// overflows `strconv.Atoi` fails the whole text.
pub(super) fn strfmt_duration_fallback(s: &str) -> bool {
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let Some(parts) = RX_DURATION_PART.as_ref() else {
        return false;
    };
    let mut ok = false;
    for caps in parts.captures_iter(s) {
        if caps
            .get(1)
            .is_none_or(|m| m.as_str().parse::<i64>().is_err())
        {
            return false;
        }
        let unit = caps
            .get(2)
            .map_or(String::new(), |m| m.as_str().trim().to_lowercase());
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, variant) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(variant)) || variant.eq_ignore_ascii_case(&unit) {
                    ok = true;
                }
            }
        }
    }
    ok
}

//! The string formats Kubernetes validates (kube-openapi strfmt / govalidator semantics).
//!
//! Imports `duration` and `email`.

use std::sync::LazyLock;

use regex::Regex;

use super::duration::{go_parse_duration, strfmt_duration_fallback};
use super::email::is_email;

/// Prefix of the format names we register, so the crate's built-in (non-Kubernetes) checkers
/// never run for a CRD format.
pub(super) const FORMAT_PREFIX: &str = "krm-";

/// Check `value` against a Kubernetes string format (names as in CRDs, dashes ignored).
///
/// `None` when Kubernetes does not validate that format.
#[must_use]
pub fn check_format(format: &str, value: &str) -> Option<bool> {
    string_format(&format.replace('-', "")).map(|check| check(value))
}

/// A string format checker.
pub(super) type FormatCheck = fn(&str) -> bool;

/// The string formats Kubernetes validates, by normalised name.
pub(super) const STRING_FORMATS: &[(&str, FormatCheck)] = &[
    ("bsonobjectid", is_bson_object_id),
    ("uri", is_request_uri),
    ("email", is_email),
    ("hostname", is_hostname),
    ("ipv4", is_ipv4),
    ("ipv6", is_ipv6),
    ("cidr", is_cidr),
    ("mac", is_mac),
    ("uuid", is_uuid),
    ("uuid3", is_uuid3),
    ("uuid4", is_uuid4),
    ("uuid5", is_uuid5),
    ("isbn", is_isbn),
    ("isbn10", is_isbn10),
    ("isbn13", is_isbn13),
    ("creditcard", is_credit_card),
    ("ssn", is_ssn),
    ("hexcolor", is_hex_color),
    ("rgbcolor", is_rgb_color),
    ("byte", is_base64),
    ("password", |_| true),
    ("date", is_date),
    ("duration", is_duration),
    ("datetime", is_datetime),
    ("k8sshortname", is_k8s_short_name),
    ("k8slongname", is_k8s_long_name),
];

pub(super) fn string_format(normalized: &str) -> Option<FormatCheck> {
    STRING_FORMATS
        .iter()
        .find(|(name, _)| *name == normalized)
        .map(|(_, check)| *check)
}

/// A constant pattern compiled once; `None` would mean a bug in the pattern (tests cover each).
type StaticRegex = LazyLock<Option<Regex>>;

macro_rules! static_regex {
    ($name:ident, $re:expr) => {
        static $name: StaticRegex = LazyLock::new(|| Regex::new($re).ok());
    };
}

// strfmt HostnamePattern (unicode symbols and letters are accepted, as upstream).
static_regex!(
    RX_HOSTNAME,
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$"
);
static_regex!(
    RX_UUID,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
static_regex!(
    RX_UUID3,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
static_regex!(
    RX_UUID4,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
static_regex!(
    RX_UUID5,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
static_regex!(
    RX_CREDIT_CARD,
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$"
);
static_regex!(RX_SSN, r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$");
static_regex!(RX_HEX_COLOR, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$");
static_regex!(
    RX_RGB_COLOR,
    r"^rgb\([\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*,[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*,[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*\)$"
);
static_regex!(
    RX_BASE64,
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
);
static_regex!(
    RX_TIME,
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
);
static_regex!(RX_SHORT_NAME, r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
static_regex!(
    RX_LONG_NAME,
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
);

fn matches(rx: &StaticRegex, s: &str) -> bool {
    rx.as_ref().is_some_and(|r| r.is_match(s))
}

fn is_bson_object_id(s: &str) -> bool {
    s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_hostname(s: &str) -> bool {
    matches(&RX_HOSTNAME, s) && s.len() <= 255 && s.split('.').all(|label| label.len() <= 63)
}

/// strfmt `isIPv4` (kube-openapi `pkg/validation/strfmt/default.go`):
/// `netutils.ParseIPSloppy(s) != nil && strings.Contains(s, ".")`, which tolerates leading zeros
/// (`010.0.0.1`) for compatibility with Go before 1.17.
fn is_ipv4(s: &str) -> bool {
    parse_ip_sloppy(s.as_bytes()) && s.contains('.')
}

/// govalidator.IsIPv6: `net.ParseIP` succeeds and the text has a colon.
fn is_ipv6(s: &str) -> bool {
    s.parse::<std::net::IpAddr>().is_ok() && s.contains(':')
}

/// strfmt `isCIDR`: `netutils.ParseCIDRSloppy` (k8s.io/utils `net/ipnet.go`, Go 1.16
/// `net.ParseCIDR`): an address with leading zeros allowed, `/`, and a decimal prefix length.
fn is_cidr(s: &str) -> bool {
    let Some((addr, bits)) = s.split_once('/') else {
        return false;
    };
    let (addr, bits) = (addr.as_bytes(), bits.as_bytes());
    let max = if parse_ipv4_sloppy(addr) {
        32
    } else if parse_ipv6_sloppy(addr) {
        128
    } else {
        return false;
    };
    matches!(go_dtoi(bits), Some((n, len)) if len == bits.len() && n <= max)
}

/// Go 1.16 `net.ParseIP`, as k8s.io/utils `net.ParseIPSloppy` keeps it: the first `.` or `:`
/// decides the family.
fn parse_ip_sloppy(s: &[u8]) -> bool {
    match s.iter().find(|c| matches!(c, b'.' | b':')) {
        Some(b'.') => parse_ipv4_sloppy(s),
        Some(_) => parse_ipv6_sloppy(s),
        None => false,
    }
}

/// Go `net.dtoi`: a decimal prefix and its length; `None` without digits or past 0xFFFFFF.
fn go_dtoi(s: &[u8]) -> Option<(u32, usize)> {
    const BIG: u32 = 0x00FF_FFFF;
    let mut n: u32 = 0;
    let mut i = 0;
    while let Some(c) = s.get(i).filter(|c| c.is_ascii_digit()) {
        n = n * 10 + u32::from(c - b'0');
        if n >= BIG {
            return None;
        }
        i += 1;
    }
    (i > 0).then_some((n, i))
}

/// Go `net.xtoi`: a hexadecimal prefix and its length.
fn go_xtoi(s: &[u8]) -> Option<(u32, usize)> {
    const BIG: u32 = 0x00FF_FFFF;
    let mut n: u32 = 0;
    let mut i = 0;
    while let Some(d) = s.get(i).and_then(|c| char::from(*c).to_digit(16)) {
        n = n * 16 + d;
        if n >= BIG {
            return None;
        }
        i += 1;
    }
    (i > 0).then_some((n, i))
}

/// Go 1.16 `net.parseIPv4` (no leading-zero check): four decimal octets up to 255.
fn parse_ipv4_sloppy(mut s: &[u8]) -> bool {
    for i in 0..4 {
        if i > 0 {
            let Some(rest) = s.strip_prefix(b".") else {
                return false;
            };
            s = rest;
        }
        match go_dtoi(s) {
            Some((n, len)) if n <= 0xFF => s = &s[len..],
            _ => return false,
        }
    }
    s.is_empty()
}

/// Go 1.16 `net.parseIPv6` (without zone), with a sloppy embedded IPv4 part.
fn parse_ipv6_sloppy(mut s: &[u8]) -> bool {
    const LEN: usize = 16;
    let mut ellipsis = false;
    if let Some(rest) = s.strip_prefix(b"::") {
        ellipsis = true;
        s = rest;
        if s.is_empty() {
            return true;
        }
    }
    let mut i = 0;
    while i < LEN {
        let Some((n, len)) = go_xtoi(s) else {
            return false;
        };
        if n > 0xFFFF {
            return false;
        }
        if s.get(len) == Some(&b'.') {
            if (!ellipsis && i != LEN - 4) || i + 4 > LEN || !parse_ipv4_sloppy(s) {
                return false;
            }
            s = &[];
            i += 4;
            break;
        }
        i += 2;
        s = &s[len..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' || s.len() == 1 {
            return false;
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis {
                return false;
            }
            ellipsis = true;
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    s.is_empty() && (i == LEN) != ellipsis
}

/// `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx..`, `xx-xx..` or `xxxx.xxxx..`.
fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let valid_count = |n: usize| matches!(n, 6 | 8 | 20);
    let hex2 = |i: usize| {
        b.get(i..i + 2)
            .is_some_and(|p| p.iter().all(u8::is_ascii_hexdigit))
    };
    if b[2] == b':' || b[2] == b'-' {
        let sep = b[2];
        if !(b.len() + 1).is_multiple_of(3) || !valid_count((b.len() + 1) / 3) {
            return false;
        }
        (0..b.len())
            .step_by(3)
            .all(|x| hex2(x) && (x + 2 == b.len() || b[x + 2] == sep))
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) || !valid_count(2 * (b.len() + 1) / 5) {
            return false;
        }
        (0..b.len())
            .step_by(5)
            .all(|x| hex2(x) && hex2(x + 2) && (x + 4 == b.len() || b[x + 4] == b'.'))
    } else {
        false
    }
}

fn is_uuid(s: &str) -> bool {
    matches(&RX_UUID, s)
}

fn is_uuid3(s: &str) -> bool {
    matches(&RX_UUID3, s)
}

fn is_uuid4(s: &str) -> bool {
    matches(&RX_UUID4, s)
}

fn is_uuid5(s: &str) -> bool {
    matches(&RX_UUID5, s)
}

/// govalidator drops `[\s-]` before checking an ISBN.
fn isbn_digits(s: &str) -> Vec<u8> {
    s.bytes()
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'-'))
        .collect()
}

fn is_isbn10(s: &str) -> bool {
    let d = isbn_digits(s);
    if d.len() != 10
        || !d[..9].iter().all(u8::is_ascii_digit)
        || !(d[9].is_ascii_digit() || d[9] == b'X')
    {
        return false;
    }
    let mut sum: u32 = (0u32..9)
        .zip(&d[..9])
        .map(|(i, c)| (i + 1) * u32::from(c - b'0'))
        .sum();
    sum += 10
        * if d[9] == b'X' {
            10
        } else {
            u32::from(d[9] - b'0')
        };
    sum.is_multiple_of(11)
}

fn is_isbn13(s: &str) -> bool {
    let d = isbn_digits(s);
    if d.len() != 13 || !d.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = d[..12]
        .iter()
        .enumerate()
        .map(|(i, c)| if i % 2 == 0 { 1 } else { 3 } * u32::from(c - b'0'))
        .sum();
    u32::from(d[12] - b'0') == (10 - sum % 10) % 10
}

fn is_isbn(s: &str) -> bool {
    is_isbn10(s) || is_isbn13(s)
}

/// govalidator.IsCreditCard: digits only (others dropped), a known issuer pattern, and Luhn.
fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !matches(&RX_CREDIT_CARD, &digits) {
        return false;
    }
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, c)| {
            let n = u32::from(c - b'0');
            if i % 2 == 1 {
                let doubled = n * 2;
                if doubled >= 10 {
                    doubled % 10 + 1
                } else {
                    doubled
                }
            } else {
                n
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

fn is_ssn(s: &str) -> bool {
    s.len() == 11 && matches(&RX_SSN, s)
}

fn is_hex_color(s: &str) -> bool {
    matches(&RX_HEX_COLOR, s)
}

fn is_rgb_color(s: &str) -> bool {
    matches(&RX_RGB_COLOR, s)
}

/// govalidator.IsBase64: standard alphabet, padded.
fn is_base64(s: &str) -> bool {
    matches(&RX_BASE64, s)
}

fn is_k8s_short_name(s: &str) -> bool {
    s.len() <= 63 && matches(&RX_SHORT_NAME, s)
}

fn is_k8s_long_name(s: &str) -> bool {
    s.len() <= 253 && matches(&RX_LONG_NAME, s)
}

/// `time.Parse("2006-01-02")`: fixed widths and a day that exists in that month.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = &b[r];
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0, |acc, c| acc * 10 + u32::from(c - b'0')))
    };
    let (Some(year), Some(month), Some(day)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// strfmt.IsDateTime: a date, `T`, and `hh:mm:ss[.frac](Z|±hh:mm)`, case-insensitively.
fn is_datetime(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let Some(caps) = RX_TIME.as_ref().and_then(|r| r.captures(time)) else {
        return false;
    };
    let field = |i: usize| caps.get(i).map_or("", |m| m.as_str());
    field(1) <= "23" && field(2) <= "59" && field(3) <= "59"
}

/// strfmt.IsDuration: Go `time.ParseDuration`, else the Scala-style fallback.
fn is_duration(s: &str) -> bool {
    go_parse_duration(s).is_some() || strfmt_duration_fallback(s)
}

/// Go `url.ParseRequestURI`: an absolute URI or an absolute path (no fragment handling).
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if s == "*" {
        return true;
    }
    let Some((scheme, rest)) = split_scheme(s) else {
        return false;
    };
    let rest = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        &rest[..rest.len() - 1]
    } else {
        rest.split_once('?').map_or(rest, |(before, _)| before)
    };
    if !rest.starts_with('/') {
        // Rootless paths after a scheme are opaque (`mailto:x@y`); without a scheme, invalid.
        return !scheme.is_empty();
    }
    let mut path = rest;
    if !scheme.is_empty()
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, tail) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        if !valid_authority(authority) {
            return false;
        }
        path = tail;
    }
    unescape_ok(path, EscapeMode::Path)
}

/// Go `getScheme`: `Some((scheme, rest))`, scheme empty when there is none; `None` for `:x`.
fn split_scheme(s: &str) -> Option<(&str, &str)> {
    for (i, c) in s.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return None,
            b':' => return Some((&s[..i], &s[i + 1..])),
            _ => return Some(("", s)),
        }
    }
    Some(("", s))
}

fn valid_authority(authority: &str) -> bool {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    if !valid_host(host) {
        return false;
    }
    userinfo.is_none_or(|u| {
        u.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    '-' | '.'
                        | '_'
                        | ':'
                        | '~'
                        | '!'
                        | '$'
                        | '&'
                        | '\''
                        | '('
                        | ')'
                        | '*'
                        | '+'
                        | ','
                        | ';'
                        | '='
                        | '%'
                        | '@'
                )
        }) && unescape_ok(u, EscapeMode::Other)
    })
}

/// Go `parseHost`: bracketed IP literal with optional zone, or name with optional `:port`.
fn valid_host(host: &str) -> bool {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return false;
        };
        if !valid_optional_port(&host[close + 1..]) {
            return false;
        }
        if let Some(zone) = host[..close].find("%25") {
            return unescape_ok(&host[..zone], EscapeMode::Host)
                && unescape_ok(&host[zone..close], EscapeMode::Zone)
                && unescape_ok(&host[close..], EscapeMode::Host);
        }
    } else if let Some(colon) = host.rfind(':')
        && !valid_optional_port(&host[colon..])
    {
        return false;
    }
    unescape_ok(host, EscapeMode::Host)
}

fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EscapeMode {
    Host,
    Zone,
    Path,
    Other,
}

/// Go `unescape` error checks: well-formed `%XX`, and host/zone character rules.
fn unescape_ok(s: &str, mode: EscapeMode) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if i + 2 >= b.len() || !b[i + 1].is_ascii_hexdigit() || !b[i + 2].is_ascii_hexdigit() {
                return false;
            }
            let hex = |c: u8| char::from(c).to_digit(16).unwrap_or(0);
            let is_25 = &b[i..i + 3] == b"%25";
            if mode == EscapeMode::Host && hex(b[i + 1]) < 8 && !is_25 {
                return false;
            }
            if mode == EscapeMode::Zone {
                let v = u8::try_from(hex(b[i + 1]) << 4 | hex(b[i + 2])).unwrap_or(0);
                if !is_25 && v != b' ' && host_byte_needs_escape(v) {
                    return false;
                }
            }
            i += 3;
        } else {
            if matches!(mode, EscapeMode::Host | EscapeMode::Zone)
                && b[i] < 0x80
                && host_byte_needs_escape(b[i])
            {
                return false;
            }
            i += 1;
        }
    }
    true
}

/// Go `shouldEscape(c, encodeHost)`.
fn host_byte_needs_escape(c: u8) -> bool {
    !(c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
                | b'-'
                | b'_'
                | b'.'
                | b'~'
        ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::testutil::*;
    use serde_json::json;

    // --- Format checkers ---

    #[track_caller]
    fn check(format: &str, good: &[&str], bad: &[&str]) {
        for v in good {
            assert_eq!(
                check_format(format, v),
                Some(true),
                "{format} should accept {v:?}"
            );
        }
        for v in bad {
            assert_eq!(
                check_format(format, v),
                Some(false),
                "{format} should reject {v:?}"
            );
        }
    }

    #[test]
    fn format_bsonobjectid() {
        check(
            "bsonobjectid",
            &["507f1f77bcf86cd799439011"],
            &["507f1f77bcf86cd79943901", "507f1f77bcf86cd79943901z"],
        );
    }

    #[test]
    fn format_uri() {
        check(
            "uri",
            &[
                "https://acme-staging-v02.api.letsencrypt.org/directory",
                "/abs/path",
                "mailto:a@b.c",
                "http://[::1]:8080/x",
                "http://user:pa%20ss@host:1/p?q=1",
                "s3://bucket",
                "*",
                "http://h/a b",
            ],
            &[
                "",
                "relative/path",
                "example.com",
                ":nope",
                "http://host:port/",
                "http://a b.com/",
                "http://h/%zz",
                "http://[::1/",
            ],
        );
    }

    #[test]
    fn format_email() {
        check(
            "email",
            &[
                "yourname@your-domain.de",
                "a.b+c@d",
                "\"quoted name\"@x.org",
                "Name <n@x.org>",
                "<n@x.org>",
                "a@[127.0.0.1]",
                "a@b (comment)",
                " a@b ",
            ],
            &[
                "",
                "plain",
                "a@",
                "@b",
                "a..b@c",
                ".a@b",
                "a@b.",
                "Name <n@x.org",
                "a@b c",
                "a@[not-ip]",
                "a@b, c@d",
            ],
        );
    }

    #[test]
    fn format_hostname() {
        check(
            "hostname",
            &[
                "example.com",
                "a",
                "my-host.example.org",
                "xn--bcher-kva.example",
                "1.2.3.example",
            ],
            &[
                "-bad.com",
                "bad-.com",
                "a..b",
                "a_b.com",
                &format!("{}.com", "a".repeat(64)),
                "ex ample.com",
            ],
        );
    }

    #[test]
    fn format_ip_and_cidr() {
        // ParseIPSloppy: leading zeros are fine (read as decimal), as in Go before 1.17.
        check(
            "ipv4",
            &[
                "192.168.0.1",
                "::ffff:1.2.3.4",
                "01.2.3.4",
                "010.000.000.001",
                "::ffff:01.2.3.4",
            ],
            &[
                "256.1.1.1",
                "::1",
                "1.2.3",
                "1.2.3.4.5",
                "1.2.3.",
                "0x1.2.3.4",
                " 1.2.3.4",
            ],
        );
        check(
            "ipv6",
            &["::1", "2001:db8::ff00:42:8329"],
            &["1.2.3.4", "2001:db8::g", "::1%eth0"],
        );
        check(
            "cidr",
            &["10.0.0.0/8", "2001:db8::/32", "10.0.0.0/032", "010.0.0.0/8"],
            &[
                "10.0.0.0",
                "10.0.0.0/33",
                "10.0.0.0/",
                "10.0.0.0/+1",
                "::/129",
            ],
        );
    }

    #[test]
    fn format_mac() {
        check(
            "mac",
            &[
                "00:00:5e:00:53:01",
                "00-00-5E-00-53-01",
                "0000.5e00.5301",
                "00:00:00:00:fe:80:00:00",
                "0000.0000.fe80.0000",
            ],
            &[
                "00:00:5e:00:53",
                "00:00:5e:00:53:0g",
                "00:00-5e:00:53:01",
                "0000.5e00.530",
                "00005e005301",
            ],
        );
    }

    #[test]
    fn format_uuids() {
        check(
            "uuid",
            &[
                "123e4567-e89b-12d3-a456-426614174000",
                "123E4567E89B12D3A456426614174000",
            ],
            &[
                "123e4567-e89b-12d3-a456",
                "x23e4567-e89b-12d3-a456-426614174000",
            ],
        );
        check(
            "uuid3",
            &["a3bb189e-8bf9-3888-9912-ace4e6543002"],
            &["a3bb189e-8bf9-4888-9912-ace4e6543002"],
        );
        check(
            "uuid4",
            &["123e4567-e89b-42d3-a456-426614174000"],
            &["123e4567-e89b-42d3-c456-426614174000"],
        );
        check(
            "uuid5",
            &["74738ff5-5367-5958-9aee-98fffdcd1876"],
            &["74738ff5-5367-4958-9aee-98fffdcd1876"],
        );
    }

    #[test]
    fn format_isbn() {
        check(
            "isbn10",
            &["0321751043", "0-321-75104-3", "080442957X"],
            &["0321751044", "032175104"],
        );
        check(
            "isbn13",
            &["978-0321751041", "9780321751041"],
            &["9780321751042", "978032175104"],
        );
        check("isbn", &["0321751043", "978-0321751041"], &["123"]);
    }

    #[test]
    fn format_misc_patterns() {
        check(
            "creditcard",
            &["4111 1111 1111 1111", "5500-0000-0000-0004"],
            &["4111 1111 1111 1112", "1234"],
        );
        check(
            "ssn",
            &["123-45-6789", "123 45 6789"],
            &["123456789", "123-45-678"],
        );
        check(
            "hexcolor",
            &["#fff", "FFFFFF", "#a1b2c3"],
            &["#ffff", "#ggg"],
        );
        check(
            "rgbcolor",
            &["rgb(255,255,255)", "rgb( 0 , 10 , 200 )"],
            &["rgb(256,0,0)", "rgba(0,0,0,0)"],
        );
        check(
            "byte",
            &["aGVsbG8=", "aGVsbG8h", "aGk="],
            &["aGVsbG8", "aGVsbG8=!", "", "a-_b"],
        );
        check("password", &["", "anything"], &[]);
    }

    #[test]
    fn format_date_and_datetime() {
        check(
            "date",
            &["2024-02-29", "2023-12-31", "0001-01-01"],
            &[
                "2023-02-29",
                "2024-13-01",
                "2024-1-01",
                "2024-01-00",
                "2024-04-31",
                "20240101",
            ],
        );
        check(
            "date-time",
            &[
                "2024-01-02T03:04:05Z",
                "2024-01-02t03:04:05.123+01:00",
                "2024-01-02T23:59:59-08:00",
            ],
            &[
                "2024-01-02",
                "2024-01-02T24:00:00Z",
                "2024-01-02T03:04:05",
                "2024-01-02 03:04:05Z",
                "2024-02-30T00:00:00Z",
                "x",
            ],
        );
        assert_eq!(check_format("datetime", "2024-01-02T03:04:05Z"), Some(true));
    }

    #[test]
    fn format_duration() {
        check(
            "duration",
            &[
                "1h30m",
                "-1.5h",
                "300ms",
                "2\u{b5}s",
                "2\u{3bc}s",
                "0",
                ".5s",
                "1.s",
                "1h 30m",
                "3 days",
                "2 hours 5 min",
                "1w",
                "22 ns",
                // Upstream finds `<n> <unit>` anywhere in the text.
                "in 3 days please",
                "1 h 30 x y",
            ],
            &[
                "",
                "1",
                "h",
                ".s",
                "1x",
                "-",
                "99999999999999999999h",
                "9223372036854775808ns",
                "3 months",
            ],
        );
        assert_eq!(
            check_format("duration", "9223372036854775807ns"),
            Some(true)
        );
    }

    #[test]
    fn format_k8s_names() {
        check(
            "k8s-short-name",
            &["my-name", "a", "0abc"],
            &["My-name", "-a", "a.b", &"a".repeat(64)],
        );
        check(
            "k8s-long-name",
            &["my.name-1", "a.b.c", &"a".repeat(64)],
            &["a..b", "A.b", "a.", &format!("{}.b", "a".repeat(252))],
        );
    }

    #[test]
    fn unknown_formats_are_not_checked() {
        assert_eq!(check_format("uri-reference", "x"), None);
        assert_eq!(check_format("int32", "x"), None);
    }

    #[test]
    fn issue8_numeric_formats_do_not_range_check() {
        // kube-openapi has no int32/int64/float/double checker: 2^40 is a valid `int32` there.
        let schema = obj(json!({"i": {"type": "integer", "format": "int32"},
            "l": {"type": "integer", "format": "int64"}, "f": {"type": "number", "format": "float"}}));
        assert!(
            errors(
                &schema,
                &json!({"i": 1_099_511_627_776_i64, "l": u64::MAX, "f": 1e300})
            )
            .is_empty()
        );
    }
}

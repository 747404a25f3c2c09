//! The Sprig functions Helm chart authors use, with Sprig's semantics (differences are in
//! `docs/reference/templates.md`).
//!
//! Two forms where Helm users write either: a filter takes the value first, as a pipe
//! supplies it (`name | trunc(63)`), a function takes Sprig's argument order
//! (`trunc(63, name)`). Helpers on a dict or list take it first as a filter
//! (`d | get("k")`) and in Sprig's order as a function (`get(d, "k")`).
//!
//! Every helper that builds a value checks its size against the render's budget before
//! allocating (`minijinja::budget::fits`), so `repeat(1000000000, "x")` is a budget error, not
//! an allocation; the value returned is then charged by minijinja. Values are immutable:
//! `set`, `unset` and `merge` return a new dict instead of changing their argument.

use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind, State};

use super::display;

mod collections;
mod semver;
mod strings;

use collections::{register_collections, strings_of};
use strings::{register_regex, register_strings};

/// Size one list item takes (what minijinja charges per item).
const ITEM: usize = std::mem::size_of::<Value>();

/// Longest regular expression accepted, and the compiled size limits (the regex crate is
/// linear in its input; these bound compiling).
const MAX_REGEX_LEN: usize = 4096;
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// `tpl` inside `tpl` at most this deep (a template that renders itself).
const MAX_TPL_DEPTH: usize = 8;

/// Register the Sprig helpers.
pub fn register(env: &mut Environment<'_>) {
    register_logic(env);
    register_strings(env);
    register_regex(env);
    register_collections(env);
    register_conversion(env);
    register_encoding(env);
    env.add_function("tpl", tpl_function);
    env.add_filter("tpl", tpl_filter);
    env.add_function("semver", semver::parse_function);
    env.add_filter("semver", semver::parse_function);
    env.add_function("semverCompare", semver::compare_function);
    env.add_filter("semverCompare", semver::compare_filter);
    for name in NON_DETERMINISTIC {
        env.add_function(*name, move |_: Rest<Value>| -> Result<Value, Error> {
            Err(not_reproducible(name))
        });
        env.add_filter(*name, move |_: Rest<Value>| -> Result<Value, Error> {
            Err(not_reproducible(name))
        });
    }
}

/// Sprig helpers whose output changes from run to run.
const NON_DETERMINISTIC: &[&str] = &[
    "now",
    "date",
    "dateInZone",
    "unixEpoch",
    "randAlphaNum",
    "randAlpha",
    "randNumeric",
    "randAscii",
    "randBytes",
    "randInt",
    "shuffle",
    "uuidv4",
    "genPrivateKey",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "encryptAES",
    "htpasswd",
    "bcrypt",
];

fn not_reproducible(name: &str) -> Error {
    err(format!(
        "{name} is not available: rendered output must be reproducible (the same input must give the same output); pass the value in the service's config instead"
    ))
}

fn err(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

fn fits(bytes: usize) -> Result<(), Error> {
    minijinja::budget::fits(bytes)
}

/// A list of `n` items may be built.
fn fits_items(n: usize) -> Result<(), Error> {
    fits(n.saturating_mul(ITEM))
}

// ---------------------------------------------------------------------------------------
// Logic

fn register_logic(env: &mut Environment<'_>) {
    env.add_filter("default", default_filter);
    env.add_filter("d", default_filter);
    env.add_function("default", default_function);
    env.add_filter(
        "ternary",
        |cond: &Value, yes: Value, no: Value| {
            if cond.is_true() { yes } else { no }
        },
    );
    env.add_function(
        "ternary",
        |yes: Value, no: Value, cond: &Value| {
            if cond.is_true() { yes } else { no }
        },
    );
    env.add_function("coalesce", |values: Rest<Value>| {
        values
            .0
            .into_iter()
            .find(|v| !is_empty(v))
            .unwrap_or(Value::from(()))
    });
    env.add_filter("coalesce", |first: &Value, rest: Rest<Value>| {
        std::iter::once(first.clone())
            .chain(rest.0)
            .find(|v| !is_empty(v))
            .unwrap_or(Value::from(()))
    });
    env.add_function("empty", |value: Option<Value>| {
        value.as_ref().is_none_or(is_empty)
    });
    env.add_filter("empty", |value: &Value| is_empty(value));
}

/// Sprig's `empty`: none, false, 0, "" and empty lists and dicts.
fn is_empty(value: &Value) -> bool {
    match value.kind() {
        ValueKind::Undefined
        | ValueKind::None
        | ValueKind::Bool
        | ValueKind::Number
        | ValueKind::String
        | ValueKind::Bytes
        | ValueKind::Seq
        | ValueKind::Map => !value.is_true(),
        _ => false,
    }
}

/// `x | default(d)`: `d` when `x` is undefined, none, "" or an empty list or dict. `false` and
/// `0` are kept (Sprig replaces them: `default(true)` could never give `false`); the Jinja
/// form `default(d, true)` replaces every false value.
fn default_filter(value: &Value, fallback: Option<Value>, lax: Option<bool>) -> Value {
    let missing = value.is_undefined()
        || value.is_none()
        || (matches!(
            value.kind(),
            ValueKind::String | ValueKind::Bytes | ValueKind::Seq | ValueKind::Map
        ) && !value.is_true())
        || (lax.unwrap_or(false) && !value.is_true());
    if missing {
        fallback.unwrap_or_else(|| Value::from(""))
    } else {
        value.clone()
    }
}

/// `default(d, x)`: Sprig's, `d` when `x` is empty (none, false, 0, "", empty list or dict).
fn default_function(fallback: Value, value: Option<Value>) -> Value {
    match value {
        Some(value) if !is_empty(&value) => value,
        _ => fallback,
    }
}

/// `f(s)`, whose text is at most `factor` times as long as `s`, checked against the budget
/// before it is built.
fn grown(s: &str, factor: usize, f: impl Fn(&str) -> String) -> Result<Value, Error> {
    fits(s.len().saturating_mul(factor))?;
    Ok(Value::from(f(s)))
}

#[allow(clippy::unnecessary_wraps)] // the helpers return `Result`
fn ok<T: Into<Value>>(value: T) -> Result<Value, Error> {
    Ok(value.into())
}

// ---------------------------------------------------------------------------------------
// Conversion

fn register_conversion(env: &mut Environment<'_>) {
    env.add_function("toString", |v: &Value| to_string(v).map(Value::from));
    env.add_filter("toString", |v: &Value| to_string(v).map(Value::from));
    env.add_function("toStrings", |v: &Value| -> Result<Value, Error> {
        Ok(strings_of(v)?.into_iter().map(Value::from).collect())
    });
    env.add_filter("toStrings", |v: &Value| -> Result<Value, Error> {
        Ok(strings_of(v)?.into_iter().map(Value::from).collect())
    });
    // The `int` filter stays Jinja's (an error for text that is no number); the function
    // is Sprig's (0).
    env.add_function("int", to_int);
    for name in ["int64", "toInt", "toInt64"] {
        env.add_function(name, to_int);
        env.add_filter(name, to_int);
    }
    env.add_function("float64", to_float);
    env.add_filter("float64", to_float);
    env.add_function("toFloat64", to_float);
    env.add_filter("toFloat64", to_float);
    env.add_function("atoi", atoi);
    env.add_filter("atoi", atoi);
    env.add_function("toPrettyJson", to_pretty_json);
    env.add_filter("toPrettyJson", to_pretty_json);
}

/// Sprig's `toString`: strings as they are, `true`/`false`, numbers as Go prints them
/// (`1.0` is `1`), none as "", lists and dicts as minijinja prints them.
fn to_string(v: &Value) -> Result<String, Error> {
    match v.kind() {
        ValueKind::String => Ok(v.as_str().unwrap_or_default().to_owned()),
        ValueKind::None | ValueKind::Undefined => Ok(String::new()),
        ValueKind::Bool => Ok(if v.is_true() { "true" } else { "false" }.to_owned()),
        ValueKind::Number => Ok(match f64::try_from(v.clone()) {
            Ok(f) if !v.is_integer() => go_float(f),
            _ => v.to_string(),
        }),
        _ => display(v),
    }
}

/// A float as Go's `%v` prints it: no `.0` on whole numbers, exponent past 1e21.
fn go_float(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{f:.0}")
    } else if f.is_nan() {
        "NaN".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else {
        f.to_string()
    }
}

/// Sprig's `int`/`int64` (spf13/cast): numbers truncated, booleans 1/0, text parsed with
/// Go's base prefixes (`0x1f`, `0o17`, `0b101`, and a leading `0` is octal), anything else 0.
fn to_int(v: &Value) -> Value {
    Value::from(int_of(v))
}

fn int_of(v: &Value) -> i64 {
    match v.kind() {
        ValueKind::Bool => i64::from(v.is_true()),
        ValueKind::Number => {
            if let Some(i) = v.as_i64() {
                i
            } else {
                #[allow(clippy::cast_possible_truncation)]
                f64::try_from(v.clone()).map_or(0, |f| f.trunc() as i64)
            }
        }
        ValueKind::String => parse_go_int(v.as_str().unwrap_or_default()).unwrap_or(0),
        _ => 0,
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)` after cast's trimming of a zero decimal (`"10.0"`).
fn parse_go_int(s: &str) -> Option<i64> {
    let s = trim_zero_decimal(s);
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = if let Some(rest) = lower.strip_prefix("0x") {
        (16, rest.to_owned())
    } else if let Some(rest) = lower.strip_prefix("0o") {
        (8, rest.to_owned())
    } else if let Some(rest) = lower.strip_prefix("0b") {
        (2, rest.to_owned())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_owned())
    } else {
        (10, lower.clone())
    };
    let body = if radix == 10 {
        body
    } else {
        body.trim_start_matches('_').replace('_', "")
    };
    if body.is_empty() || body.starts_with(['+', '-']) {
        return None;
    }
    let magnitude = i128::from_str_radix(&body, radix).ok()?;
    i64::try_from(if neg { -magnitude } else { magnitude }).ok()
}

/// cast's `trimZeroDecimal`: `"10.00"` is `"10"`, `"1.50"` stays.
fn trim_zero_decimal(s: &str) -> &str {
    let mut found_zero = false;
    for (i, b) in s.bytes().enumerate().rev() {
        match b {
            b'.' if found_zero => return &s[..i],
            b'0' => found_zero = true,
            _ => return s,
        }
    }
    s
}

/// Sprig's `float64` (cast): numbers, booleans 1/0, text parsed, anything else 0.
fn to_float(v: &Value) -> Value {
    Value::from(match v.kind() {
        ValueKind::Bool => f64::from(u8::from(v.is_true())),
        ValueKind::Number => f64::try_from(v.clone()).unwrap_or(0.0),
        ValueKind::String => v.as_str().unwrap_or_default().parse::<f64>().unwrap_or(0.0),
        _ => 0.0,
    })
}

/// Sprig's `atoi`: decimal text to an integer, 0 when it is not one.
fn atoi(v: &Value) -> Result<Value, Error> {
    let s = to_string(v)?;
    Ok(Value::from(s.parse::<i64>().unwrap_or(0)))
}

/// `toPrettyJson`: JSON indented by two spaces, written within the budget.
fn to_pretty_json(v: &Value) -> Result<Value, Error> {
    struct Bounded(Vec<u8>);
    impl std::io::Write for Bounded {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            minijinja::budget::fits(self.0.len().saturating_add(buf.len()))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let json = super::to_json_value(v)?;
    let mut out = Bounded(Vec::new());
    serde_json::to_writer_pretty(&mut out, &json).map_err(|e| err(format!("toPrettyJson: {e}")))?;
    String::from_utf8(out.0)
        .map(Value::from_safe_string)
        .map_err(|_| err("toPrettyJson: not UTF-8"))
}

// ---------------------------------------------------------------------------------------
// Hashes and encodings

fn register_encoding(env: &mut Environment<'_>) {
    let text = |f: fn(&str) -> Result<Value, Error>| move |v: &Value| f(&display(v)?);
    for (name, f) in [
        ("sha1sum", sha1sum as fn(&str) -> Result<Value, Error>),
        ("adler32sum", adler32sum),
        ("b32enc", b32enc),
        ("b32dec", b32dec),
    ] {
        env.add_filter(name, text(f));
        env.add_function(name, text(f));
    }
    // Function forms of the existing filters.
    env.add_function("sha256sum", |v: &Value| super::sha256sum(v));
    env.add_function("b64enc", |v: &Value| super::b64enc(v));
    env.add_function("b64dec", |v: &Value| super::b64dec(&display(v)?));
    env.add_function("quote", |v: &Value| super::quote(v));
    env.add_function("toYaml", |v: &Value| super::to_yaml(v));
    env.add_function("toJson", |v: &Value| super::to_json(v));
    env.add_function("fromYaml", |v: &Value| super::from_yaml(&display(v)?));
    env.add_function("fromJson", |v: &Value| super::from_json(&display(v)?));
    env.add_function("indent", |width: usize, v: &Value| super::indent(v, width));
    env.add_function("nindent", |width: usize, v: &Value| {
        super::nindent(v, width)
    });
}

fn sha1sum(s: &str) -> Result<Value, Error> {
    use sha1::Digest as _;
    ok(crate::verify::hex(&sha1::Sha1::digest(s.as_bytes())))
}

/// `adler32sum`: the Adler-32 checksum as a decimal string (Sprig's).
fn adler32sum(s: &str) -> Result<Value, Error> {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    for byte in s.bytes() {
        a = (a + u32::from(byte)) % MOD;
        b = (b + a) % MOD;
    }
    ok(((b << 16) | a).to_string())
}

const BASE32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// `b32enc`: RFC 4648 base32 with padding (Go's `base32.StdEncoding`).
fn b32enc(s: &str) -> Result<Value, Error> {
    fits(s.len().div_ceil(5).saturating_mul(8))?;
    let mut out = String::with_capacity(s.len().div_ceil(5) * 8);
    for chunk in s.as_bytes().chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let bits = buf.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        let chars = match chunk.len() {
            1 => 2,
            2 => 4,
            3 => 5,
            4 => 7,
            _ => 8,
        };
        for i in 0..8 {
            if i < chars {
                let index = usize::try_from((bits >> (35 - 5 * i)) & 31).unwrap_or(0);
                out.push(char::from(BASE32[index]));
            } else {
                out.push('=');
            }
        }
    }
    ok(out)
}

/// `b32dec`: the reverse of `b32enc`; an error for text that is not base32 of UTF-8.
fn b32dec(s: &str) -> Result<Value, Error> {
    let s = s.trim();
    if !s.len().is_multiple_of(8) {
        return Err(err("b32dec: length is not a multiple of 8"));
    }
    let body = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(body.len() * 5 / 8);
    let (mut bits, mut count) = (0u64, 0u32);
    for c in body.bytes() {
        let Some(v) = BASE32.iter().position(|b| *b == c) else {
            return Err(err(format!(
                "b32dec: {:?} is not a base32 character",
                char::from(c)
            )));
        };
        bits = (bits << 5) | v as u64;
        count += 5;
        if count >= 8 {
            count -= 8;
            out.push(u8::try_from((bits >> count) & 0xff).unwrap_or(0));
        }
    }
    String::from_utf8(out)
        .map(Value::from)
        .map_err(|_| err("b32dec: decoded bytes are not UTF-8"))
}

// ---------------------------------------------------------------------------------------
// tpl

thread_local! {
    static TPL_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `tpl(text, ctx)`: render `text` as a template in the same environment (the same helpers,
/// templates to include, budget and time limit), with `ctx` as its variables; without `ctx`,
/// the variables of the template that calls it.
fn tpl_function(state: &State, text: &Value, ctx: Option<Value>) -> Result<Value, Error> {
    let text = display(text)?;
    let ctx = match ctx {
        Some(ctx) => ctx,
        None => current_variables(state)?,
    };
    let depth = TPL_DEPTH.with(std::cell::Cell::get);
    if depth >= MAX_TPL_DEPTH {
        return Err(err(format!(
            "tpl: templates rendered by tpl are nested more than {MAX_TPL_DEPTH} deep (a template that renders itself)"
        )));
    }
    TPL_DEPTH.with(|d| d.set(depth + 1));
    let rendered = state.env().render_named_str("tpl", &text, ctx);
    TPL_DEPTH.with(|d| d.set(depth));
    let rendered = rendered.map_err(|e| {
        // The budget's own error when it stopped the text (it may surface as a bare
        // write failure).
        if let Some(stopped) = minijinja::budget::error() {
            return stopped;
        }
        let detail = e
            .detail()
            .map_or_else(|| e.kind().to_string(), str::to_owned);
        match e.line() {
            Some(line) => err(format!("tpl: line {line} of the text: {detail}")),
            None => err(format!("tpl: {detail}")),
        }
    })?;
    ok(rendered)
}

fn tpl_filter(state: &State, text: &Value, ctx: Option<Value>) -> Result<Value, Error> {
    tpl_function(state, text, ctx)
}

/// The variables the calling template sees (its context and the ones it set).
fn current_variables(state: &State) -> Result<Value, Error> {
    let names = state.known_variables();
    fits_items(names.len().saturating_mul(2))?;
    let mut pairs = Vec::with_capacity(names.len());
    for name in names {
        if let Some(value) = state.lookup(&name) {
            pairs.push((name.into_owned(), value));
        }
    }
    minijinja::functions::dict(None, Kwargs::from_iter(pairs))
}

#[cfg(test)]
mod tests;

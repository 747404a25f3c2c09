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

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind, State};

use super::display;

mod semver;

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

// ---------------------------------------------------------------------------------------
// Strings

/// Register `name` as a filter taking the string first and a function taking it last.
macro_rules! string_helper {
    ($env:ident, $name:literal, $core:expr, ($($arg:ident: $ty:ty),*)) => {
        $env.add_filter($name, |s: &Value, $($arg: $ty),*| $core(&display(s)?, $($arg),*));
        $env.add_function($name, |$($arg: $ty,)* s: &Value| $core(&display(s)?, $($arg),*));
    };
}

fn register_strings(env: &mut Environment<'_>) {
    string_helper!(env, "trunc", trunc, (n: i64));
    string_helper!(env, "trimSuffix", |s: &str, suffix: &str| ok(s
        .strip_suffix(suffix)
        .unwrap_or(s)), (suffix: &str));
    string_helper!(env, "trimPrefix", |s: &str, prefix: &str| ok(s
        .strip_prefix(prefix)
        .unwrap_or(s)), (prefix: &str));
    string_helper!(env, "trimAll", |s: &str, cutset: &str| ok(
        s.trim_matches(|c| cutset.contains(c))
    ), (cutset: &str));
    string_helper!(env, "contains", |s: &str, part: &str| ok(s.contains(part)), (part: &str));
    string_helper!(env, "hasPrefix", |s: &str, p: &str| ok(s.starts_with(p)), (p: &str));
    string_helper!(env, "hasSuffix", |s: &str, p: &str| ok(s.ends_with(p)), (p: &str));
    string_helper!(env, "splitList", split_list, (sep: &str));
    string_helper!(env, "repeat", repeat, (count: i64));
    string_helper!(env, "substr", substr, (start: i64, end: i64));
    string_helper!(
        env,
        "nospace",
        |s: &str| ok(s.chars().filter(|c| !c.is_whitespace()).collect::<String>()),
        ()
    );
    string_helper!(env, "abbrev", abbrev, (width: i64));
    // A connector between every two characters at most doubles the text; changing case
    // changes a character's bytes by at most 3 times.
    string_helper!(
        env,
        "snakecase",
        |s: &str| grown(s, 2, |s| join_words(s, '_')),
        ()
    );
    string_helper!(
        env,
        "kebabcase",
        |s: &str| grown(s, 2, |s| join_words(s, '-')),
        ()
    );
    string_helper!(env, "camelcase", |s: &str| grown(s, 3, camelcase), ());
    // Function forms of Jinja's string filters, in Sprig's argument order.
    env.add_function("replace", |old: &str, new: &str, s: &Value| {
        let s = display(s)?;
        let count = if old.is_empty() {
            s.chars().count() + 1
        } else {
            s.matches(old).count()
        };
        fits(s.len().saturating_add(count.saturating_mul(new.len())))?;
        ok(s.replace(old, new))
    });
    env.add_function("upper", |s: &Value| {
        grown(&display(s)?, 3, str::to_uppercase)
    });
    env.add_function("lower", |s: &Value| {
        grown(&display(s)?, 3, str::to_lowercase)
    });
    env.add_function("title", |s: &Value| grown(&display(s)?, 3, title));
    env.add_function("trim", |s: &Value| ok(display(s)?.trim().to_owned()));
    env.add_function("join", |sep: &Value, list: &Value| {
        let sep = display(sep)?;
        let items = strings_of(list)?;
        let total = items.iter().map(String::len).sum::<usize>();
        fits(total.saturating_add(sep.len().saturating_mul(items.len())))?;
        ok(items.join(&sep))
    });
    env.add_function("first", |list: &Value| -> Result<Value, Error> {
        Ok(items_of(list)?
            .into_iter()
            .next()
            .unwrap_or(Value::from(())))
    });
    env.add_function("last", |list: &Value| -> Result<Value, Error> {
        Ok(items_of(list)?.pop().unwrap_or(Value::from(())))
    });
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

/// `trunc(n, s)`: the first `n` characters, or the last `-n` for a negative `n`.
#[allow(clippy::unnecessary_wraps)] // as every string helper
fn trunc(s: &str, n: i64) -> Result<Value, Error> {
    let len = s.chars().count();
    let n_abs = usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX);
    Ok(Value::from(if n < 0 {
        if n_abs < len {
            s.chars().skip(len - n_abs).collect::<String>()
        } else {
            s.to_owned()
        }
    } else if len > n_abs {
        s.chars().take(n_abs).collect::<String>()
    } else {
        s.to_owned()
    }))
}

/// `splitList(sep, s)`: Go's `strings.Split` (an empty separator splits into characters).
fn split_list(s: &str, sep: &str) -> Result<Value, Error> {
    let pieces = if sep.is_empty() {
        s.chars().count()
    } else {
        s.matches(sep).count() + 1
    };
    fits(s.len().saturating_add(pieces.saturating_mul(ITEM)))?;
    Ok(if sep.is_empty() {
        s.chars().map(|c| Value::from(c.to_string())).collect()
    } else {
        s.split(sep).map(Value::from).collect()
    })
}

/// `repeat(count, s)`, checked against the budget before it is built.
fn repeat(s: &str, count: i64) -> Result<Value, Error> {
    let count =
        usize::try_from(count).map_err(|_| err(format!("repeat: negative count {count}")))?;
    fits(s.len().saturating_mul(count))?;
    ok(s.repeat(count))
}

/// `substr(start, end, s)`: characters `start..end`; a negative start is 0, a negative or
/// too large end is the end of the string.
fn substr(s: &str, start: i64, end: i64) -> Result<Value, Error> {
    let len = s.chars().count();
    let start = usize::try_from(start).unwrap_or(0);
    let end = usize::try_from(end).map_or(len, |e| e.min(len));
    if start > end {
        return Err(err(format!(
            "substr: start {start} is after end {end} of a string of {len} characters"
        )));
    }
    ok(s.chars().skip(start).take(end - start).collect::<String>())
}

/// `abbrev(width, s)`: at most `width` characters, ending in "..." when cut.
fn abbrev(s: &str, width: i64) -> Result<Value, Error> {
    let len = s.chars().count();
    let width = usize::try_from(width).unwrap_or(0);
    if width < 4 {
        // Sprig returns "" when the width is under 4.
        return ok("");
    }
    if len <= width {
        return ok(s);
    }
    let mut out: String = s.chars().take(width - 3).collect();
    out.push_str("...");
    ok(out)
}

// Case conversion: a port of huandu/xstrings (what Sprig uses): `snakecase`/`kebabcase` are
// `ToSnakeCase`/`ToKebabCase`, `camelcase` is `ToPascalCase` (`http_server` → `HttpServer`).

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Word {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || c.is_whitespace()
}

/// xstrings' `isAlphabet`: a letter, but not a CJK ideograph.
fn is_alphabet(c: char) -> bool {
    c.is_alphabetic()
        && !matches!(u32::from(c), 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// Go's `unicode.IsPunct` for ASCII (symbols such as `$+<=>^|~` are not punctuation) and the
/// common punctuation blocks.
fn is_punct(c: char) -> bool {
    if c.is_ascii() {
        "!\"#%&'()*,-./:;?@[\\]_{}".contains(c)
    } else {
        matches!(u32::from(c), 0x2010..=0x2027 | 0x2030..=0x205E | 0x3001..=0x3003 | 0x3008..=0x3011 | 0xFF01..=0xFF0F)
    }
}

fn go_upper(c: char) -> char {
    let mut up = c.to_uppercase();
    if up.len() == 1 {
        up.next().unwrap_or(c)
    } else {
        c
    }
}

fn go_lower(c: char) -> char {
    let mut low = c.to_lowercase();
    if low.len() == 1 {
        low.next().unwrap_or(c)
    } else {
        c
    }
}

/// xstrings' `nextWord`: the kind and length of the word `s` starts with.
fn next_word(s: &[char]) -> (Word, usize) {
    let Some(&first) = s.first() else {
        return (Word::Invalid, 0);
    };
    let run = |from: usize, keep: &dyn Fn(char) -> bool| {
        from + s[from..].iter().take_while(|c| keep(**c)).count()
    };
    if is_connector(first) {
        (Word::Connector, run(1, &is_connector))
    } else if is_punct(first) {
        (Word::Punct, run(1, &is_punct))
    } else if first.is_uppercase() {
        match s.get(1) {
            Some(c) if c.is_uppercase() => {
                let end = run(1, &|c| c.is_uppercase());
                // `HTTPServer` is `HTTP` and `Server`.
                if end < s.len() && is_alphabet(s[end]) {
                    (Word::Upper, end - 1)
                } else {
                    (Word::Upper, end)
                }
            }
            Some(c) if is_alphabet(*c) => (
                Word::Upper,
                run(1, &|c| is_alphabet(c) && !c.is_uppercase()),
            ),
            _ => (Word::Upper, 1),
        }
    } else if is_alphabet(first) {
        (
            Word::Alphabet,
            run(1, &|c| is_alphabet(c) && !c.is_uppercase()),
        )
    } else if first.is_numeric() {
        (Word::Number, run(1, &char::is_numeric))
    } else {
        (
            Word::Other,
            run(1, &|c| {
                !(is_connector(c) || is_alphabet(c) || c.is_numeric() || is_punct(c))
            }),
        )
    }
}

/// xstrings' `toLower`: upper-case words and connectors lower-cased, others as they are.
fn push_lower(out: &mut String, kind: Word, word: &[char], connector: char) {
    if kind != Word::Upper && kind != Word::Connector {
        out.extend(word);
        return;
    }
    for &c in word {
        out.push(if is_connector(c) {
            connector
        } else if c.is_uppercase() {
            go_lower(c)
        } else {
            c
        });
    }
}

/// The next word of `rest`, which moves past it.
fn take<'a>(rest: &mut &'a [char]) -> (Word, &'a [char]) {
    let (kind, len) = next_word(rest);
    let (word, after) = rest.split_at(len);
    *rest = after;
    (kind, word)
}

/// xstrings' `camelCaseToLowerCase` (`ToSnakeCase`, `ToKebabCase`).
fn join_words(s: &str, connector: char) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + s.len() / 2);
    let mut rest: &[char] = &chars;
    let (mut kind, mut word) = take(&mut rest);
    while !rest.is_empty() {
        if kind != Word::Connector {
            push_lower(&mut out, kind, word, connector);
        }
        let (prev, last) = (kind, word);
        (kind, word) = take(&mut rest);
        match prev {
            Word::Number => {
                while kind == Word::Alphabet || kind == Word::Number {
                    push_lower(&mut out, kind, word, connector);
                    (kind, word) = take(&mut rest);
                }
                if !matches!(kind, Word::Invalid | Word::Punct | Word::Connector) {
                    out.push(connector);
                }
            }
            Word::Connector => push_lower(&mut out, prev, last, connector),
            Word::Punct => {}
            _ => {
                if kind != Word::Number {
                    if kind != Word::Connector && kind != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                if rest.is_empty() {
                    continue;
                }
                let number = word;
                (kind, word) = take(&mut rest);
                // A number is part of the word before it (`Bld4Floor` is `bld4_floor`),
                // unless lower-case letters follow it (`HTTP2xx` is `http_2xx`).
                if kind != Word::Alphabet {
                    push_lower(&mut out, Word::Number, number, connector);
                    if kind != Word::Connector && kind != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                out.push(connector);
                push_lower(&mut out, Word::Number, number, connector);
                while kind == Word::Alphabet || kind == Word::Number {
                    push_lower(&mut out, kind, word, connector);
                    (kind, word) = take(&mut rest);
                }
                if !matches!(kind, Word::Invalid | Word::Connector | Word::Punct) {
                    out.push(connector);
                }
            }
        }
    }
    push_lower(&mut out, kind, word, connector);
    out
}

/// xstrings' `ToPascalCase` (Sprig's `camelcase`): words separated by `_`, `-` or spaces,
/// each starting upper-case; an all-upper-case word is lower-cased after its first letter;
/// leading and doubled separators are kept.
fn camelcase(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    let mut first_upper = false;
    let mut r0 = None;
    for c in chars.by_ref() {
        if is_connector(c) {
            out.push(c);
        } else {
            first_upper = c.is_uppercase();
            r0 = Some(go_upper(c));
            break;
        }
    }
    let Some(mut r0) = r0 else {
        return out;
    };
    for next in chars {
        let r1 = r0;
        r0 = next;
        if is_connector(r0) && is_connector(r1) {
            out.push(r1);
            continue;
        }
        if is_connector(r1) {
            first_upper = r0.is_uppercase();
            r0 = go_upper(r0);
        } else {
            if first_upper {
                if r0.is_uppercase() {
                    r0 = go_lower(r0);
                } else {
                    first_upper = false;
                }
            }
            out.push(r1);
        }
    }
    out.push(r0);
    out
}

/// Jinja's `title`: each word's first letter upper-case, the rest lower-case.
fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut start = true;
    for c in s.chars() {
        if start {
            out.extend(c.to_uppercase());
        } else {
            out.extend(c.to_lowercase());
        }
        start = !c.is_alphanumeric();
    }
    out
}

// ---------------------------------------------------------------------------------------
// Regular expressions (Go's RE2 syntax is the regex crate's; both run in linear time)

thread_local! {
    static REGEXES: RefCell<HashMap<String, regex::Regex>> = RefCell::new(HashMap::new());
}

fn compile(pattern: &str) -> Result<regex::Regex, Error> {
    if pattern.len() > MAX_REGEX_LEN {
        return Err(err(format!(
            "regular expression of {} bytes is longer than the limit of {MAX_REGEX_LEN}",
            pattern.len()
        )));
    }
    if let Some(re) = REGEXES.with(|c| c.borrow().get(pattern).cloned()) {
        return Ok(re);
    }
    let re = regex::RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .nest_limit(64)
        .build()
        .map_err(|e| err(format!("invalid regular expression {pattern:?}: {e}")))?;
    REGEXES.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= 64 {
            cache.clear();
        }
        cache.insert(pattern.to_owned(), re.clone());
    });
    Ok(re)
}

fn register_regex(env: &mut Environment<'_>) {
    env.add_filter("regexMatch", |s: &Value, re: &str| {
        ok(compile(re)?.is_match(&display(s)?))
    });
    env.add_function("regexMatch", |re: &str, s: &Value| {
        ok(compile(re)?.is_match(&display(s)?))
    });
    env.add_filter("regexFind", |s: &Value, re: &str| {
        regex_find(re, &display(s)?)
    });
    env.add_function("regexFind", |re: &str, s: &Value| {
        regex_find(re, &display(s)?)
    });
    env.add_filter("regexFindAll", |s: &Value, re: &str, n: i64| {
        regex_find_all(re, &display(s)?, n)
    });
    env.add_function("regexFindAll", |re: &str, s: &Value, n: i64| {
        regex_find_all(re, &display(s)?, n)
    });
    env.add_filter("regexReplaceAll", |s: &Value, re: &str, repl: &str| {
        regex_replace(re, &display(s)?, repl, false)
    });
    env.add_function("regexReplaceAll", |re: &str, s: &Value, repl: &str| {
        regex_replace(re, &display(s)?, repl, false)
    });
    env.add_filter(
        "regexReplaceAllLiteral",
        |s: &Value, re: &str, repl: &str| regex_replace(re, &display(s)?, repl, true),
    );
    env.add_function(
        "regexReplaceAllLiteral",
        |re: &str, s: &Value, repl: &str| regex_replace(re, &display(s)?, repl, true),
    );
    env.add_filter("regexSplit", |s: &Value, re: &str, n: i64| {
        regex_split(re, &display(s)?, n)
    });
    env.add_function("regexSplit", |re: &str, s: &Value, n: i64| {
        regex_split(re, &display(s)?, n)
    });
}

fn regex_find(re: &str, s: &str) -> Result<Value, Error> {
    ok(compile(re)?.find(s).map_or("", |m| m.as_str()))
}

/// At most `n` matches (all for a negative `n`), as Go's `FindAllString`.
fn limit(n: i64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn regex_find_all(re: &str, s: &str, n: i64) -> Result<Value, Error> {
    let re = compile(re)?;
    let mut out = Vec::new();
    let mut bytes = 0usize;
    for m in re.find_iter(s).take(limit(n)) {
        bytes = bytes.saturating_add(m.len() + ITEM);
        fits(bytes)?;
        out.push(Value::from(m.as_str()));
    }
    Ok(Value::from(out))
}

fn regex_split(re: &str, s: &str, n: i64) -> Result<Value, Error> {
    let re = compile(re)?;
    if n == 0 {
        return Ok(Value::from(Vec::<Value>::new()));
    }
    let pieces: Box<dyn Iterator<Item = &str>> = if n < 0 {
        Box::new(re.split(s))
    } else {
        Box::new(re.splitn(s, limit(n)))
    };
    let mut out = Vec::new();
    let mut bytes = 0usize;
    for piece in pieces {
        bytes = bytes.saturating_add(piece.len() + ITEM);
        fits(bytes)?;
        out.push(Value::from(piece));
    }
    Ok(Value::from(out))
}

/// `regexReplaceAll(re, s, repl)`: `$1`, `${name}` in `repl` expand as in Go. Each
/// replacement is checked against the budget before it is added: a reference expands to at
/// most the match, so `repl` with many `$0` cannot build a huge string.
fn regex_replace(re: &str, s: &str, repl: &str, literal: bool) -> Result<Value, Error> {
    let re = compile(re)?;
    let refs = if literal {
        0
    } else {
        repl.bytes().filter(|b| *b == b'$').count()
    };
    let mut out = String::new();
    let mut last = 0;
    for caps in re.captures_iter(s) {
        let Some(m) = caps.get(0) else { continue };
        let bound = out
            .len()
            .saturating_add(m.start() - last)
            .saturating_add(repl.len())
            .saturating_add(refs.saturating_mul(m.len()));
        fits(bound)?;
        out.push_str(&s[last..m.start()]);
        if literal {
            out.push_str(repl);
        } else {
            caps.expand(repl, &mut out);
        }
        last = m.end();
    }
    fits(out.len().saturating_add(s.len() - last))?;
    out.push_str(&s[last..]);
    ok(out)
}

// ---------------------------------------------------------------------------------------
// Lists and dicts

/// The items of a list (a string, a dict's keys are not lists: Sprig wants a list).
fn items_of(list: &Value) -> Result<Vec<Value>, Error> {
    match list.kind() {
        ValueKind::Seq | ValueKind::Iterable => {}
        ValueKind::None | ValueKind::Undefined => return Ok(Vec::new()),
        kind => return Err(err(format!("expected a list, got {kind}"))),
    }
    fits_items(list.len().unwrap_or(0))?;
    let iter = list
        .try_iter()
        .map_err(|e| err(format!("expected a list: {e}")))?;
    let mut out = Vec::with_capacity(list.len().unwrap_or(0));
    for item in iter {
        if out.len() % 4096 == 4095 {
            fits_items(out.len())?;
            minijinja::budget::check_time()?;
        }
        out.push(item);
    }
    Ok(out)
}

fn strings_of(list: &Value) -> Result<Vec<String>, Error> {
    let items = items_of(list)?;
    let mut out = Vec::with_capacity(items.len());
    let mut bytes = 0usize;
    for item in &items {
        let s = to_string(item)?;
        bytes = bytes.saturating_add(s.len());
        fits(bytes)?;
        out.push(s);
    }
    Ok(out)
}

/// The key/value pairs of a dict, in order.
fn pairs_of(dict: &Value) -> Result<Vec<(Value, Value)>, Error> {
    match dict.kind() {
        ValueKind::Map => {}
        ValueKind::None | ValueKind::Undefined => return Ok(Vec::new()),
        kind => return Err(err(format!("expected a dict, got {kind}"))),
    }
    let len = dict.len().unwrap_or(0);
    fits(len.saturating_mul(2 * ITEM))?;
    let mut out = Vec::with_capacity(len);
    let iter = dict
        .try_iter()
        .map_err(|e| err(format!("expected a dict: {e}")))?;
    for key in iter {
        let value = dict.get_item(&key).unwrap_or_default();
        out.push((key, value));
    }
    Ok(out)
}

/// A dict with these pairs in this order (keys are strings, as in Sprig).
fn make_dict(pairs: Vec<(Value, Value)>) -> Result<Value, Error> {
    let mut bytes = pairs.len().saturating_mul(2 * ITEM);
    let mut named = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        let k = key_string(&k)?;
        bytes = bytes.saturating_add(k.len());
        fits(bytes)?;
        named.push((k, v));
    }
    minijinja::functions::dict(None, Kwargs::from_iter(named))
}

fn key_string(key: &Value) -> Result<String, Error> {
    key.as_str()
        .map_or_else(|| to_string(key), |s| Ok(s.to_owned()))
}

fn register_collections(env: &mut Environment<'_>) {
    env.add_function("list", |items: Rest<Value>| -> Result<Value, Error> {
        fits_items(items.0.len())?;
        Ok(Value::from(items.0))
    });
    env.add_function("dict", dict);
    env.add_function("get", get);
    env.add_filter("get", get);
    env.add_function("set", set);
    env.add_filter("set", set);
    env.add_function("unset", unset);
    env.add_filter("unset", unset);
    env.add_function("hasKey", has_key);
    env.add_filter("hasKey", has_key);
    env.add_function("keys", keys);
    env.add_filter("keys", keys);
    env.add_function("values", values);
    env.add_filter("values", values);
    env.add_function("pick", |d: &Value, names: Rest<Value>| {
        select_keys(d, &names, true)
    });
    env.add_filter("pick", |d: &Value, names: Rest<Value>| {
        select_keys(d, &names, true)
    });
    env.add_function("omit", |d: &Value, names: Rest<Value>| {
        select_keys(d, &names, false)
    });
    env.add_filter("omit", |d: &Value, names: Rest<Value>| {
        select_keys(d, &names, false)
    });
    env.add_function("merge", |d: &Value, srcs: Rest<Value>| {
        merge_all(d, &srcs, false)
    });
    env.add_filter("merge", |d: &Value, srcs: Rest<Value>| {
        merge_all(d, &srcs, false)
    });
    env.add_function("mergeOverwrite", |d: &Value, srcs: Rest<Value>| {
        merge_all(d, &srcs, true)
    });
    env.add_filter("mergeOverwrite", |d: &Value, srcs: Rest<Value>| {
        merge_all(d, &srcs, true)
    });
    env.add_function("pluck", |key: &Value, dicts: Rest<Value>| {
        pluck(key, &dicts)
    });
    env.add_filter("pluck", |d: &Value, key: &Value| {
        pluck(key, std::slice::from_ref(d))
    });
    env.add_function("dig", |args: Rest<Value>| dig(args.0));
    env.add_filter("dig", |d: &Value, args: Rest<Value>| {
        let mut args = args.0;
        args.push(d.clone());
        dig(args)
    });
    env.add_function("uniq", uniq);
    env.add_filter("uniq", uniq);
    env.add_function("has", |needle: &Value, list: &Value| has(list, needle));
    env.add_filter("has", has);
    env.add_function("without", |list: &Value, drop: Rest<Value>| {
        without(list, &drop)
    });
    env.add_filter("without", |list: &Value, drop: Rest<Value>| {
        without(list, &drop)
    });
    env.add_function("compact", compact);
    env.add_filter("compact", compact);
    env.add_function("concat", |lists: Rest<Value>| concat(&lists));
    env.add_filter("concat", |first: &Value, lists: Rest<Value>| {
        let mut all = vec![first.clone()];
        all.extend(lists.0);
        concat(&all)
    });
    for name in ["append", "push"] {
        env.add_function(name, |list: &Value, v: Value| add(list, v, false));
        env.add_filter(name, |list: &Value, v: Value| add(list, v, false));
    }
    env.add_function("prepend", |list: &Value, v: Value| add(list, v, true));
    env.add_filter("prepend", |list: &Value, v: Value| add(list, v, true));
}

/// `dict("a", 1, "b", 2)` (Sprig: pairs; an odd last key gets ""), or minijinja's
/// `dict(a=1)` / `dict(other, a=1)`.
fn dict(args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let args = args.0;
    let jinja_form = kwargs.args().next().is_some()
        || args.is_empty()
        || (args.len() == 1 && matches!(args[0].kind(), ValueKind::Map | ValueKind::Undefined));
    if jinja_form {
        if args.len() > 1 {
            return Err(err(
                "dict: give key/value pairs (dict(\"a\", 1)) or one dict and keyword arguments (dict(d, a=1))",
            ));
        }
        return minijinja::functions::dict(args.into_iter().next(), kwargs);
    }
    fits_items(args.len())?;
    let mut pairs = Vec::with_capacity(args.len() / 2 + 1);
    let mut iter = args.into_iter();
    while let Some(key) = iter.next() {
        let value = iter.next().unwrap_or_else(|| Value::from(""));
        pairs.push((key, value));
    }
    make_dict(dedup(pairs))
}

/// Later pairs replace earlier ones with the same key, keeping the first one's place.
fn dedup(pairs: Vec<(Value, Value)>) -> Vec<(Value, Value)> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<(Value, Value)> = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        let name = key_string(&k).unwrap_or_default();
        if let Some(&i) = index.get(&name) {
            out[i].1 = v;
        } else {
            index.insert(name, out.len());
            out.push((k, v));
        }
    }
    out
}

fn lookup(d: &Value, key: &Value) -> Result<Option<Value>, Error> {
    if !matches!(
        d.kind(),
        ValueKind::Map | ValueKind::None | ValueKind::Undefined
    ) {
        return Err(err(format!("expected a dict, got {}", d.kind())));
    }
    if d.is_none() || d.is_undefined() {
        return Ok(None);
    }
    let key = Value::from(key_string(key)?);
    Ok(Some(d.get_item(&key)?).filter(|v| !v.is_undefined()))
}

/// `get(d, "k")`: the value, or "" when missing (Sprig).
fn get(d: &Value, key: &Value) -> Result<Value, Error> {
    Ok(lookup(d, key)?.unwrap_or_else(|| Value::from("")))
}

fn has_key(d: &Value, key: &Value) -> Result<bool, Error> {
    Ok(lookup(d, key)?.is_some())
}

/// `set(d, "k", v)`: a new dict with `k` set (Sprig changes `d` in place).
fn set(d: &Value, key: &Value, value: Value) -> Result<Value, Error> {
    let mut pairs = pairs_of(d)?;
    pairs.push((key.clone(), value));
    make_dict(dedup(pairs))
}

/// `unset(d, "k")`: a new dict without `k`.
fn unset(d: &Value, key: &Value) -> Result<Value, Error> {
    let key = key_string(key)?;
    let mut pairs = pairs_of(d)?;
    pairs.retain(|(k, _)| k.as_str() != Some(key.as_str()));
    make_dict(pairs)
}

/// `keys(d, ...)`: the keys of every dict given, in order.
fn keys(d: &Value, more: Rest<Value>) -> Result<Value, Error> {
    let mut out = Vec::new();
    for d in std::iter::once(d.clone()).chain(more.0) {
        let pairs = pairs_of(&d)?;
        fits_items(out.len() + pairs.len())?;
        out.extend(pairs.into_iter().map(|(k, _)| k));
    }
    Ok(Value::from(out))
}

fn values(d: &Value) -> Result<Value, Error> {
    Ok(Value::from(
        pairs_of(d)?.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
    ))
}

/// `pick(d, "a", "b")` keeps, `omit(d, "a", "b")` drops these keys.
fn select_keys(d: &Value, names: &[Value], keep: bool) -> Result<Value, Error> {
    let names = names
        .iter()
        .map(key_string)
        .collect::<Result<HashSet<_>, _>>()?;
    let mut pairs = pairs_of(d)?;
    pairs.retain(|(k, _)| names.contains(&key_string(k).unwrap_or_default()) == keep);
    make_dict(pairs)
}

/// `merge(dst, src, ...)`: a deep merge where the first dict that has a key wins;
/// `mergeOverwrite`: the last one wins. Nested dicts merge; lists are replaced, not joined.
fn merge_all(dst: &Value, srcs: &[Value], overwrite: bool) -> Result<Value, Error> {
    let mut out = if dst.kind() == ValueKind::Map {
        dst.clone()
    } else {
        make_dict(Vec::new())?
    };
    for src in srcs {
        out = merge(&out, src, overwrite)?;
    }
    Ok(out)
}

fn merge(dst: &Value, src: &Value, overwrite: bool) -> Result<Value, Error> {
    let _walk = minijinja::budget::walk_checked(src.len().unwrap_or(0))?;
    let mut pairs = pairs_of(dst)?;
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, (k, _)) in pairs.iter().enumerate() {
        index.insert(key_string(k)?, i);
    }
    for (k, v) in pairs_of(src)? {
        let name = key_string(&k)?;
        match index.get(&name) {
            Some(&i) => {
                let current = &pairs[i].1;
                if current.kind() == ValueKind::Map && v.kind() == ValueKind::Map {
                    let merged = merge(current, &v, overwrite)?;
                    pairs[i].1 = merged;
                } else if overwrite || current.is_none() || current.is_undefined() {
                    pairs[i].1 = v;
                }
            }
            None => {
                index.insert(name, pairs.len());
                pairs.push((k, v));
            }
        }
    }
    make_dict(pairs)
}

/// `pluck("k", d1, d2)`: the values of `k` in the dicts that have it.
fn pluck(key: &Value, dicts: &[Value]) -> Result<Value, Error> {
    let mut out = Vec::new();
    for d in dicts {
        if let Some(v) = lookup(d, key)? {
            out.push(v);
        }
    }
    Ok(Value::from(out))
}

/// `dig("a", "b", default, d)`: `d.a.b`, or `default` when a key is missing.
fn dig(mut args: Vec<Value>) -> Result<Value, Error> {
    if args.len() < 3 {
        return Err(err(
            "dig: give at least one key, a default and a dict: dig(\"a\", \"b\", default, d)",
        ));
    }
    let Some(mut current) = args.pop() else {
        return Err(err("dig: missing dict"));
    };
    let fallback = args.pop().unwrap_or_default();
    for key in &args {
        if current.kind() != ValueKind::Map {
            return Ok(fallback);
        }
        match lookup(&current, key)? {
            Some(v) => current = v,
            None => return Ok(fallback),
        }
    }
    Ok(current)
}

fn uniq(list: &Value) -> Result<Value, Error> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for item in items_of(list)? {
        if seen.insert(item.clone()) {
            out.push(item);
        }
    }
    Ok(Value::from(out))
}

fn has(list: &Value, needle: &Value) -> Result<bool, Error> {
    Ok(items_of(list)?.iter().any(|v| v == needle))
}

fn without(list: &Value, drop: &[Value]) -> Result<Value, Error> {
    let mut items = items_of(list)?;
    items.retain(|v| !drop.contains(v));
    Ok(Value::from(items))
}

/// `compact(list)`: without its empty items.
fn compact(list: &Value) -> Result<Value, Error> {
    let mut items = items_of(list)?;
    items.retain(|v| !is_empty(v));
    Ok(Value::from(items))
}

/// `concat(l1, l2, ...)`: one list, sized against the budget first.
fn concat(lists: &[Value]) -> Result<Value, Error> {
    let total = lists
        .iter()
        .map(|l| l.len().unwrap_or(0))
        .fold(0usize, usize::saturating_add);
    fits_items(total)?;
    let mut out = Vec::with_capacity(total);
    for list in lists {
        out.extend(items_of(list)?);
    }
    Ok(Value::from(out))
}

/// `append(list, v)` / `prepend(list, v)`: a new list with `v` at the end / the start.
fn add(list: &Value, value: Value, front: bool) -> Result<Value, Error> {
    fits_items(list.len().unwrap_or(0).saturating_add(1))?;
    let mut items = items_of(list)?;
    if front {
        items.insert(0, value);
    } else {
        items.push(value);
    }
    Ok(Value::from(items))
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

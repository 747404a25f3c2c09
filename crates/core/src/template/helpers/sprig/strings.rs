//! Sprig's string and regular-expression helpers (see `sprig`).

use std::cell::RefCell;
use std::collections::HashMap;

use minijinja::value::Value;
use minijinja::{Environment, Error};

use super::collections::{items_of, strings_of};
use super::{ITEM, MAX_REGEX_LEN, REGEX_SIZE_LIMIT, display, err, fits, grown, ok};

/// Register `name` as a filter taking the string first and a function taking it last.
macro_rules! string_helper {
    ($env:ident, $name:literal, $core:expr, ($($arg:ident: $ty:ty),*)) => {
        $env.add_filter($name, |s: &Value, $($arg: $ty),*| $core(&display(s)?, $($arg),*));
        $env.add_function($name, |$($arg: $ty,)* s: &Value| $core(&display(s)?, $($arg),*));
    };
}

pub(super) fn register_strings(env: &mut Environment<'_>) {
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

/// `trunc(n, s)`: the first `n` characters, or the last `-n` for a negative `n`.
#[allow(clippy::unnecessary_wraps)] // as every string helper
pub(super) fn trunc(s: &str, n: i64) -> Result<Value, Error> {
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
pub(super) fn split_list(s: &str, sep: &str) -> Result<Value, Error> {
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
pub(super) fn repeat(s: &str, count: i64) -> Result<Value, Error> {
    let count =
        usize::try_from(count).map_err(|_| err(format!("repeat: negative count {count}")))?;
    fits(s.len().saturating_mul(count))?;
    ok(s.repeat(count))
}

/// `substr(start, end, s)`: characters `start..end`; a negative start is 0, a negative or
/// too large end is the end of the string.
pub(super) fn substr(s: &str, start: i64, end: i64) -> Result<Value, Error> {
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
pub(super) fn abbrev(s: &str, width: i64) -> Result<Value, Error> {
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
pub(super) enum Word {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

pub(super) fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || c.is_whitespace()
}

/// xstrings' `isAlphabet`: a letter, but not a CJK ideograph.
pub(super) fn is_alphabet(c: char) -> bool {
    c.is_alphabetic()
        && !matches!(u32::from(c), 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// Go's `unicode.IsPunct` for ASCII (symbols such as `$+<=>^|~` are not punctuation) and the
/// common punctuation blocks.
pub(super) fn is_punct(c: char) -> bool {
    if c.is_ascii() {
        "!\"#%&'()*,-./:;?@[\\]_{}".contains(c)
    } else {
        matches!(u32::from(c), 0x2010..=0x2027 | 0x2030..=0x205E | 0x3001..=0x3003 | 0x3008..=0x3011 | 0xFF01..=0xFF0F)
    }
}

pub(super) fn go_upper(c: char) -> char {
    let mut up = c.to_uppercase();
    if up.len() == 1 {
        up.next().unwrap_or(c)
    } else {
        c
    }
}

pub(super) fn go_lower(c: char) -> char {
    let mut low = c.to_lowercase();
    if low.len() == 1 {
        low.next().unwrap_or(c)
    } else {
        c
    }
}

/// xstrings' `nextWord`: the kind and length of the word `s` starts with.
pub(super) fn next_word(s: &[char]) -> (Word, usize) {
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
pub(super) fn push_lower(out: &mut String, kind: Word, word: &[char], connector: char) {
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
pub(super) fn take<'a>(rest: &mut &'a [char]) -> (Word, &'a [char]) {
    let (kind, len) = next_word(rest);
    let (word, after) = rest.split_at(len);
    *rest = after;
    (kind, word)
}

/// xstrings' `camelCaseToLowerCase` (`ToSnakeCase`, `ToKebabCase`).
pub(super) fn join_words(s: &str, connector: char) -> String {
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
pub(super) fn camelcase(s: &str) -> String {
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
pub(super) fn title(s: &str) -> String {
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

pub(super) fn compile(pattern: &str) -> Result<regex::Regex, Error> {
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

pub(super) fn register_regex(env: &mut Environment<'_>) {
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

pub(super) fn regex_find(re: &str, s: &str) -> Result<Value, Error> {
    ok(compile(re)?.find(s).map_or("", |m| m.as_str()))
}

/// At most `n` matches (all for a negative `n`), as Go's `FindAllString`.
pub(super) fn limit(n: i64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

pub(super) fn regex_find_all(re: &str, s: &str, n: i64) -> Result<Value, Error> {
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

pub(super) fn regex_split(re: &str, s: &str, n: i64) -> Result<Value, Error> {
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
pub(super) fn regex_replace(re: &str, s: &str, repl: &str, literal: bool) -> Result<Value, Error> {
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

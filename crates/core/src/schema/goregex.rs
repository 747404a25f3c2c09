//! Go `regexp` (RE2) syntax and semantics on the `regex` crate.
//!
//! The apiserver compiles a CRD `pattern` with Go's `regexp.Compile` (kube-openapi
//! `pkg/validation/validate/validator.go` → `pattern.go`). The `regex` crate reads the same
//! RE2 family of syntax, but differs in the details: `\d`, `\w`, `\s` and `\b` are Unicode-aware
//! there and ASCII in Go; Rust has class set operations (`[a&&b]`, `[a--b]`), nested classes and
//! `\<`/`\>` where Go has literals; Go has `\Q…\E`, octal escapes and `{` as a literal when it
//! does not start a repeat; Go rejects repeat counts above 1000, stacked repetition operators
//! (`a**`) and the `x`, `u`, `R` flags. So a pattern is parsed here the way Go's
//! `regexp/syntax` parser does (`parse.go`), Go's errors are reported with Go's wording, and an
//! equivalent `regex` pattern is written out in which every literal is escaped and every Perl
//! class is spelled out in ASCII.

use std::fmt::{self, Write as _};

use regex::{Regex, RegexBuilder};

/// Go's repeat-count limit (`regexp/syntax` `parseRepeat`).
const MAX_REPEAT: u32 = 1000;
/// POSIX class names Go knows (`regexp/syntax` `posixGroup`).
const POSIX_CLASSES: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

/// Go's `regexp/syntax.ErrorCode`: what kind of parse error (its text is Go's wording).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// `ErrInvalidCharRange`.
    InvalidCharRange,
    /// `ErrInvalidEscape`.
    InvalidEscape,
    /// `ErrInvalidNamedCapture`.
    InvalidNamedCapture,
    /// `ErrInvalidPerlOp`.
    InvalidPerlOp,
    /// `ErrInvalidRepeatOp`.
    InvalidRepeatOp,
    /// `ErrInvalidRepeatSize`.
    InvalidRepeatSize,
    /// `ErrMissingBracket`.
    MissingBracket,
    /// `ErrMissingParen`.
    MissingParen,
    /// `ErrMissingRepeatArgument`.
    MissingRepeatArgument,
    /// `ErrTrailingBackslash`.
    TrailingBackslash,
    /// `ErrUnexpectedParen`.
    UnexpectedParen,
}

impl ErrorCode {
    /// Go's text of the code.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidCharRange => "invalid character class range",
            Self::InvalidEscape => "invalid escape sequence",
            Self::InvalidNamedCapture => "invalid named capture",
            Self::InvalidPerlOp => "invalid or unsupported Perl syntax",
            Self::InvalidRepeatOp => "invalid nested repetition operator",
            Self::InvalidRepeatSize => "invalid repeat count",
            Self::MissingBracket => "missing closing ]",
            Self::MissingParen => "missing closing )",
            Self::MissingRepeatArgument => "missing argument to repetition operator",
            Self::TrailingBackslash => "trailing backslash at end of expression",
            Self::UnexpectedParen => "unexpected )",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Go's `regexp/syntax.Error`: the code and the offending part of the expression. Displays as
/// Go's `Error()` does, without its `error parsing regexp: ` prefix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: `{expr}`")]
pub struct SyntaxError {
    /// What kind of error.
    pub code: ErrorCode,
    /// The offending part of the expression.
    pub expr: String,
}

impl SyntaxError {
    fn new(code: ErrorCode, expr: impl Into<String>) -> Self {
        Self {
            code,
            expr: expr.into(),
        }
    }
}

/// Why a Go pattern does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// What Go's parser rejects.
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// Go accepts it, but the translated pattern exceeds the `regex` crate's limits (the
    /// crate's message, last line).
    #[error("{0}")]
    Limit(String),
}

/// Compile a Go regular expression with Go's semantics.
///
/// # Errors
/// Go's parse error (`invalid nested repetition operator: `**``), or the `regex` crate's
/// message when the translated pattern exceeds its limits.
pub fn compile(pattern: &str) -> Result<Regex, PatternError> {
    let translated = translate(pattern)?;
    RegexBuilder::new(&translated)
        .build()
        .map_err(|e| PatternError::Limit(last_line(&e.to_string())))
}

/// The last non-empty line of a `regex` error (the rest is an ASCII-art pointer).
fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map_or_else(String::new, |l| {
            l.trim().trim_start_matches("error: ").to_owned()
        })
}

/// Translate a Go pattern into `regex` crate syntax with the same meaning.
///
/// # Errors
/// What Go's `regexp.Compile` would say, without its `error parsing regexp: ` prefix.
pub fn translate(pattern: &str) -> Result<String, SyntaxError> {
    Translator {
        src: pattern.chars().collect(),
        pos: 0,
        out: String::with_capacity(pattern.len() * 2),
    }
    .run()
}

struct Translator {
    src: Vec<char>,
    pos: usize,
    out: String,
}

/// What the last emitted item allows after it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Nothing to repeat (start, after `(` or `|`, after a flag group).
    Nothing,
    /// An operand a repetition may follow.
    Operand,
    /// A repetition operator (Go forbids stacking another one).
    Repeat,
}

impl Translator {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.src.get(self.pos + ahead).copied()
    }

    fn rest_from(&self, start: usize) -> String {
        self.src[start..self.pos.min(self.src.len())]
            .iter()
            .collect()
    }

    fn run(mut self) -> Result<String, SyntaxError> {
        let mut depth = 0usize;
        let mut last = Last::Nothing;
        while let Some(c) = self.peek(0) {
            let start = self.pos;
            match c {
                '(' => {
                    self.pos += 1;
                    if self.peek(0) == Some('?') {
                        match self.group_prefix(start)? {
                            Some(opens) => {
                                depth += usize::from(opens);
                                last = Last::Nothing;
                            }
                            None => last = Last::Nothing,
                        }
                    } else {
                        self.out.push('(');
                        depth += 1;
                        last = Last::Nothing;
                    }
                }
                ')' => {
                    if depth == 0 {
                        return Err(SyntaxError::new(ErrorCode::UnexpectedParen, self.all()));
                    }
                    self.pos += 1;
                    depth -= 1;
                    self.out.push(')');
                    last = Last::Operand;
                }
                '|' => {
                    self.pos += 1;
                    self.out.push('|');
                    last = Last::Nothing;
                }
                '*' | '+' | '?' => {
                    self.pos += 1;
                    self.repeat(start, &c.to_string(), last)?;
                    last = Last::Repeat;
                }
                '{' => {
                    if let Some(op) = self.counted_repeat()? {
                        self.repeat(start, &op, last)?;
                        last = Last::Repeat;
                    } else {
                        // Go reads a `{` that does not start a valid repeat as a literal.
                        self.pos += 1;
                        push_literal(&mut self.out, '{');
                        last = Last::Operand;
                    }
                }
                '[' => {
                    self.class()?;
                    last = Last::Operand;
                }
                '\\' => {
                    last = self.escape_outside(last)?;
                }
                '.' | '^' | '$' => {
                    self.pos += 1;
                    self.out.push(c);
                    last = Last::Operand;
                }
                _ => {
                    self.pos += 1;
                    push_literal(&mut self.out, c);
                    last = Last::Operand;
                }
            }
        }
        if depth > 0 {
            return Err(SyntaxError::new(ErrorCode::MissingParen, self.all()));
        }
        Ok(self.out)
    }

    fn all(&self) -> String {
        self.src.iter().collect()
    }

    /// Emit a repetition operator `op` (already consumed from `start`) after `last`.
    fn repeat(&mut self, start: usize, op: &str, last: Last) -> Result<(), SyntaxError> {
        match last {
            Last::Nothing => {
                return Err(SyntaxError::new(
                    ErrorCode::MissingRepeatArgument,
                    self.rest_from(start),
                ));
            }
            Last::Repeat => {
                // Go names the stacked operators, e.g. `**`; find where the previous one began.
                let mut begin = start;
                while begin > 0 && matches!(self.src[begin - 1], '*' | '+' | '?' | '}') {
                    begin -= 1;
                    if self.src[begin] == '}' {
                        while begin > 0 && self.src[begin] != '{' {
                            begin -= 1;
                        }
                    }
                }
                return Err(SyntaxError::new(
                    ErrorCode::InvalidRepeatOp,
                    self.rest_from(begin),
                ));
            }
            Last::Operand => {}
        }
        self.out.push_str(op);
        if self.peek(0) == Some('?') {
            self.pos += 1;
            self.out.push('?');
        }
        Ok(())
    }

    /// `{n}`, `{n,}`, `{n,m}` at the cursor: `Some(op)` consumed, `None` when Go reads `{` as a
    /// literal (not a repeat, or a number with a leading zero).
    fn counted_repeat(&mut self) -> Result<Option<String>, SyntaxError> {
        let start = self.pos;
        let mut i = self.pos + 1;
        // Go's parseInt: digits, but "not a number" (so `{` is a literal) with a leading zero;
        // counts too large to hold are out of range.
        let number = |i: &mut usize, src: &[char]| -> Option<u32> {
            let begin = *i;
            while src.get(*i).is_some_and(char::is_ascii_digit) {
                *i += 1;
            }
            if *i == begin || (*i - begin >= 2 && src[begin] == '0') {
                return None;
            }
            let digits: String = src[begin..*i].iter().collect();
            Some(digits.parse::<u32>().unwrap_or(u32::MAX))
        };
        let Some(min) = number(&mut i, &self.src) else {
            return Ok(None);
        };
        let max = if self.src.get(i) == Some(&',') {
            i += 1;
            if self.src.get(i) == Some(&'}') {
                None
            } else {
                let Some(m) = number(&mut i, &self.src) else {
                    return Ok(None);
                };
                Some(m)
            }
        } else {
            Some(min)
        };
        if self.src.get(i) != Some(&'}') {
            return Ok(None);
        }
        self.pos = i + 1;
        let text = self.rest_from(start);
        let valid = min <= MAX_REPEAT && max.is_none_or(|m| m <= MAX_REPEAT && min <= m);
        if !valid {
            return Err(SyntaxError::new(ErrorCode::InvalidRepeatSize, text));
        }
        Ok(Some(text))
    }

    /// After `(?`: a named group, a flag group or an error. `Some(true)` opened a group,
    /// `Some(false)` only set flags for the rest of the enclosing group.
    fn group_prefix(&mut self, start: usize) -> Result<Option<bool>, SyntaxError> {
        // At `?`.
        let after = self.pos + 1;
        let named = match (self.src.get(after), self.src.get(after + 1)) {
            (Some('P'), Some('<')) => Some(after + 2),
            (Some('<'), Some(c)) if *c != '=' && *c != '!' => Some(after + 1),
            _ => None,
        };
        if let Some(name_start) = named {
            let Some(end) = self.src[name_start..].iter().position(|c| *c == '>') else {
                self.pos = self.src.len();
                return Err(SyntaxError::new(
                    ErrorCode::InvalidNamedCapture,
                    self.rest_from(start),
                ));
            };
            let name: String = self.src[name_start..name_start + end].iter().collect();
            self.pos = name_start + end + 1;
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(SyntaxError::new(
                    ErrorCode::InvalidNamedCapture,
                    self.rest_from(start),
                ));
            }
            self.out.push_str("(?P<");
            self.out.push_str(&name);
            self.out.push('>');
            return Ok(Some(true));
        }
        // Flags: [imsU]* (- [imsU]+)? then `:` or `)`.
        self.pos = after;
        let mut flags = String::new();
        let mut negated = false;
        let mut saw_flag = false;
        loop {
            let Some(c) = self.peek(0) else {
                return Err(SyntaxError::new(
                    ErrorCode::MissingParen,
                    self.rest_from(start),
                ));
            };
            self.pos += 1;
            match c {
                'i' | 'm' | 's' | 'U' => {
                    flags.push(c);
                    saw_flag = true;
                }
                '-' if !negated => {
                    flags.push('-');
                    negated = true;
                    saw_flag = false;
                }
                ':' | ')' => {
                    if negated && !saw_flag {
                        return Err(SyntaxError::new(
                            ErrorCode::InvalidPerlOp,
                            self.rest_from(start),
                        ));
                    }
                    if c == ':' {
                        self.out.push_str("(?");
                        self.out.push_str(&flags);
                        self.out.push(':');
                        return Ok(Some(true));
                    }
                    if !flags.is_empty() {
                        self.out.push_str("(?");
                        self.out.push_str(&flags);
                        self.out.push(')');
                    }
                    return Ok(None);
                }
                _ => {
                    return Err(SyntaxError::new(
                        ErrorCode::InvalidPerlOp,
                        self.rest_from(start),
                    ));
                }
            }
        }
    }

    /// A backslash outside a class.
    fn escape_outside(&mut self, last: Last) -> Result<Last, SyntaxError> {
        let start = self.pos;
        let Some(c) = self.peek(1) else {
            self.pos += 1;
            return Err(SyntaxError::new(ErrorCode::TrailingBackslash, ""));
        };
        let simple = match c {
            'A' => Some(r"\A"),
            'z' => Some(r"\z"),
            // Go's \b is an ASCII word boundary.
            'b' => Some(r"(?-u:\b)"),
            'B' => Some(r"(?-u:\B)"),
            _ => None,
        };
        if let Some(s) = simple {
            self.pos += 2;
            self.out.push_str(s);
            return Ok(Last::Operand);
        }
        match c {
            'Q' => {
                self.pos += 2;
                let mut any = false;
                while let Some(ch) = self.peek(0) {
                    if ch == '\\' && self.peek(1) == Some('E') {
                        self.pos += 2;
                        break;
                    }
                    self.pos += 1;
                    push_literal(&mut self.out, ch);
                    any = true;
                }
                Ok(if any { Last::Operand } else { last })
            }
            'p' | 'P' => {
                self.unicode_class()?;
                Ok(Last::Operand)
            }
            _ => {
                if let Some(class) = perl_class(c) {
                    self.pos += 2;
                    self.out.push_str(class);
                    return Ok(Last::Operand);
                }
                let ch = self.escape_char(start)?;
                push_literal(&mut self.out, ch);
                Ok(Last::Operand)
            }
        }
    }

    /// `\p{Name}`, `\pL`, `\P…`, `\p{^Name}`: passed on (the `regex` crate knows Go's names).
    fn unicode_class(&mut self) -> Result<(), SyntaxError> {
        let start = self.pos;
        self.pos += 2;
        match self.peek(0) {
            Some('{') => {
                let Some(end) = self.src[self.pos..].iter().position(|c| *c == '}') else {
                    self.pos = self.src.len();
                    return Err(SyntaxError::new(
                        ErrorCode::InvalidCharRange,
                        self.rest_from(start),
                    ));
                };
                self.pos += end + 1;
            }
            Some(_) => self.pos += 1,
            None => {
                return Err(SyntaxError::new(
                    ErrorCode::InvalidCharRange,
                    self.rest_from(start),
                ));
            }
        }
        let text = self.rest_from(start);
        self.out.push_str(&text);
        Ok(())
    }

    /// Go `parseEscape` at a backslash: the escaped character.
    fn escape_char(&mut self, start: usize) -> Result<char, SyntaxError> {
        self.pos += 1;
        let Some(c) = self.peek(0) else {
            return Err(SyntaxError::new(ErrorCode::TrailingBackslash, ""));
        };
        self.pos += 1;
        let invalid = |t: &Self| {
            Err(SyntaxError::new(
                ErrorCode::InvalidEscape,
                t.rest_from(start),
            ))
        };
        match c {
            '1'..='7' if !self.peek(0).is_some_and(|d| ('0'..='7').contains(&d)) => invalid(self),
            '0'..='7' => {
                let mut value = c.to_digit(8).unwrap_or(0);
                for _ in 1..3 {
                    match self.peek(0).and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            self.pos += 1;
                        }
                        None => break,
                    }
                }
                char::from_u32(value).map_or_else(|| invalid(self), Ok)
            }
            'x' => {
                if self.peek(0) == Some('{') {
                    self.pos += 1;
                    let begin = self.pos;
                    while self.peek(0).is_some_and(|d| d.is_ascii_hexdigit()) {
                        self.pos += 1;
                    }
                    let digits: String = self.src[begin..self.pos].iter().collect();
                    if digits.is_empty() || self.peek(0) != Some('}') {
                        return invalid(self);
                    }
                    self.pos += 1;
                    u32::from_str_radix(&digits, 16)
                        .ok()
                        .filter(|v| *v <= 0x0010_FFFF)
                        .and_then(char::from_u32)
                        .map_or_else(|| invalid(self), Ok)
                } else {
                    let hex: Option<u32> = (0..2)
                        .map(|i| self.peek(i).and_then(|d| d.to_digit(16)))
                        .try_fold(0, |acc, d| d.map(|d| acc * 16 + d));
                    match hex.and_then(char::from_u32) {
                        Some(ch) => {
                            self.pos += 2;
                            Ok(ch)
                        }
                        None => invalid(self),
                    }
                }
            }
            'a' => Ok('\u{7}'),
            'f' => Ok('\u{c}'),
            'n' => Ok('\n'),
            'r' => Ok('\r'),
            't' => Ok('\t'),
            'v' => Ok('\u{b}'),
            // Escaped ASCII punctuation is always itself.
            _ if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok(c),
            _ => invalid(self),
        }
    }

    /// A bracketed class, Go `parseClass`.
    fn class(&mut self) -> Result<(), SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        self.out.push('[');
        if self.peek(0) == Some('^') {
            self.pos += 1;
            self.out.push('^');
        }
        let missing = |t: &Self| {
            Err(SyntaxError::new(
                ErrorCode::MissingBracket,
                t.rest_from(start),
            ))
        };
        let mut first = true;
        let mut items = 0usize;
        loop {
            let Some(c) = self.peek(0) else {
                self.pos = self.src.len();
                return missing(self);
            };
            if c == ']' && !first {
                self.pos += 1;
                break;
            }
            first = false;
            items += 1;
            if c == '['
                && self.peek(1) == Some(':')
                && let Some(named) = self.named_class()?
            {
                self.out.push_str(&named);
                continue;
            }
            if c == '\\' {
                match self.peek(1) {
                    Some('p' | 'P') => {
                        self.unicode_class()?;
                        continue;
                    }
                    Some(e) => {
                        if let Some(class) = perl_class(e) {
                            self.pos += 2;
                            self.out.push_str(class);
                            continue;
                        }
                    }
                    None => {}
                }
            }
            let item_start = self.pos;
            let lo = self.class_char(start)?;
            let mut hi = lo;
            if self.peek(0) == Some('-') && self.peek(1).is_some_and(|n| n != ']') {
                self.pos += 1;
                hi = self.class_char(start)?;
                if hi < lo {
                    return Err(SyntaxError::new(
                        ErrorCode::InvalidCharRange,
                        self.rest_from(item_start),
                    ));
                }
            }
            push_class_char(&mut self.out, lo);
            if hi != lo {
                self.out.push('-');
                push_class_char(&mut self.out, hi);
            }
        }
        if items == 0 {
            return missing(self);
        }
        self.out.push(']');
        Ok(())
    }

    /// `[:name:]` / `[:^name:]` at the cursor; `None` when there is no closing `:]` (then `[` is
    /// a literal, as in Go).
    fn named_class(&mut self) -> Result<Option<String>, SyntaxError> {
        let rest: String = self.src[self.pos..].iter().collect();
        let Some(end) = rest[2..].find(":]") else {
            return Ok(None);
        };
        let inner = &rest[2..2 + end];
        let name = inner.strip_prefix('^').unwrap_or(inner);
        let text = &rest[..end + 4];
        if !POSIX_CLASSES.contains(&name) {
            return Err(SyntaxError::new(ErrorCode::InvalidCharRange, text));
        }
        self.pos += text.chars().count();
        Ok(Some(text.to_owned()))
    }

    /// Go `parseClassChar`.
    fn class_char(&mut self, class_start: usize) -> Result<char, SyntaxError> {
        match self.peek(0) {
            None => Err(SyntaxError::new(
                ErrorCode::MissingBracket,
                self.rest_from(class_start),
            )),
            Some('\\') => {
                let start = self.pos;
                self.escape_char(start)
            }
            Some(c) => {
                self.pos += 1;
                Ok(c)
            }
        }
    }
}

/// Go's Perl classes are ASCII-only (`regexp/syntax` `perl_groups.go`).
fn perl_class(c: char) -> Option<&'static str> {
    Some(match c {
        'd' => "[0-9]",
        'D' => "[^0-9]",
        's' => r"[\t\n\x{0C}\r ]",
        'S' => r"[^\t\n\x{0C}\r ]",
        'w' => "[0-9A-Za-z_]",
        'W' => "[^0-9A-Za-z_]",
        _ => return None,
    })
}

/// A literal outside a class: letters, digits and non-ASCII as they are, the rest as `\x{..}`.
fn push_literal(out: &mut String, c: char) {
    if c.is_alphanumeric() {
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:X}}}", u32::from(c));
    }
}

/// A literal inside a class (same spelling: `\x{..}` is never special there either).
fn push_class_char(out: &mut String, c: char) {
    push_literal(out, c);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(pattern: &str, yes: &[&str], no: &[&str]) {
        let re = match compile(pattern) {
            Ok(re) => re,
            Err(e) => panic!("{pattern:?} should compile: {e}"),
        };
        for s in yes {
            assert!(re.is_match(s), "{pattern:?} should match {s:?}");
        }
        for s in no {
            assert!(!re.is_match(s), "{pattern:?} should not match {s:?}");
        }
    }

    fn err(pattern: &str, message: &str) {
        match compile(pattern) {
            Ok(_) => panic!("{pattern:?} should not compile"),
            Err(e) => assert_eq!(e.to_string(), message, "{pattern:?}"),
        }
    }

    #[test]
    fn inline_flags_as_prometheus_operator_writes_them() {
        // monitoring.coreos.com PrometheusRule / AlertmanagerConfig.
        ok(
            "^(?i)(abort|warn)?$",
            &["", "abort", "WARN", "Abort"],
            &["fail", "abortx"],
        );
        ok("(?i:ab)c", &["ABc"], &["ABC"]);
        ok("(?s).", &["\n"], &[]);
        ok("(?U)a+", &["a"], &[]);
        ok("(?i-s:a.)", &["A!"], &["A\n"]);
        ok("a(?)b", &["ab"], &[]);
    }

    #[test]
    fn perl_classes_and_boundaries_are_ascii() {
        ok(r"^\d+$", &["0123"], &["٣", "１"]);
        ok(r"^\w+$", &["a_Z9"], &["é", "日本"]);
        ok(
            r"^\s$",
            &[" ", "\t", "\u{c}"],
            &["\u{b}", "\u{a0}", "\u{2003}"],
        );
        ok(r"^\S+$", &["é"], &["a b"]);
        ok(r"^[\d\s]+$", &["1 2"], &["x"]);
        ok(r"^[^\D]$", &["5"], &["x", "٣"]);
        ok(r"\bé", &[], &["é"]);
        ok(r"^[[:alpha:]]+$", &["abc"], &["é"]);
    }

    #[test]
    fn go_literals_that_rust_reads_otherwise() {
        ok(r"^[a&&b]$", &["&", "a", "b"], &["c"]);
        ok(r"^[a~~b]$", &["~"], &[]);
        ok(r"^[[a]$", &["[", "a"], &[]);
        ok(r"^\<a\>$", &["<a>"], &["a"]);
        ok(r"^a{$", &["a{"], &[]);
        ok(r"^a{x}$", &["a{x}"], &[]);
        ok(r"^a{01}$", &["a{01}"], &["a"]);
        ok(r"^a{,2}$", &["a{,2}"], &[]);
        ok(r"^\Q.*\E+$", &[".**"], &["ab"]);
        ok(r"^\101\0$", &["A\0"], &[]);
        ok(r"^\x41\x{1F600}$", &["A😀"], &[]);
        ok(r"^[]a]+$", &["]a"], &["b"]);
        ok(r"^[a-]+$", &["a-"], &["b"]);
        ok(r"^ #x$", &[" #x"], &[]);
        ok(r"^\p{Greek}\pL$", &["αb"], &["ab"]);
        ok(r"^(?P<a>x)(?<b>y)$", &["xy"], &[]);
        ok(r"^a{2,1000}?$", &["aa"], &["a"]);
    }

    #[test]
    fn what_go_rejects() {
        err("a**", "invalid nested repetition operator: `**`");
        err("a+?*", "invalid nested repetition operator: `+?*`");
        err("a{2}*", "invalid nested repetition operator: `{2}*`");
        err("*a", "missing argument to repetition operator: `*`");
        err("a|*", "missing argument to repetition operator: `*`");
        err("a{1001}", "invalid repeat count: `{1001}`");
        err("a{2,1}", "invalid repeat count: `{2,1}`");
        err(
            "a{1,99999999999}",
            "invalid repeat count: `{1,99999999999}`",
        );
        err("(?x)a", "invalid or unsupported Perl syntax: `(?x`");
        err("(?=a)", "invalid or unsupported Perl syntax: `(?=`");
        err("(?!a)", "invalid or unsupported Perl syntax: `(?!`");
        err("(?i-)a", "invalid or unsupported Perl syntax: `(?i-)`");
        err("(?P<a-b>x)", "invalid named capture: `(?P<a-b>`");
        err(r"\1", r"invalid escape sequence: `\1`");
        err(r"\e", r"invalid escape sequence: `\e`");
        err(r"\C", r"invalid escape sequence: `\C`");
        err(r"\xZ", r"invalid escape sequence: `\x`");
        err("a\\", "trailing backslash at end of expression: ``");
        err("(a", "missing closing ): `(a`");
        err("a)", "unexpected ): `a)`");
        err("[a", "missing closing ]: `[a`");
        err("[z-a]", "invalid character class range: `z-a`");
        err("[[:foo:]]", "invalid character class range: `[:foo:]`");
    }
}

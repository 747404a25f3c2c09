//! The size and nesting of a CEL expression, read from its text before it is parsed: the
//! parser, the tree it builds and the interpreter all recurse once per level of a chain of
//! operators (`1 + 1 + …`, `a.b().c()…`) or of nested brackets, so a deep expression would
//! overflow the stack where a limit should refuse it.
//!
//! The limits are cel-go's parser defaults, which the apiserver uses: 100,000 code points, and
//! a recursion limit of 250 per grammar rule (`maxRecursionDepth`, counted by its
//! `recursionListener` per rule type on the path from the root); brackets, calls and
//! conditionals nest at most 96 deep, the `cel` parser's own limit. The count here is an upper
//! bound of cel-go's: every operator of a comma-, `&&`-, `||`- or `?`-separated part counts
//! for every bracket inside it.
//!
//! Imports nothing of the folder.

/// apiserver (cel-go `parser.NewParser`) `expressionSizeCodePointLimit`.
pub(super) const MAX_CODE_POINTS: usize = 100_000;
/// cel-go `maxRecursionDepth`: a rule type may not recur this often on one path.
pub(super) const MAX_RECURSION: usize = 250;
/// The `cel` parser's limit of nested expressions (brackets, call arguments, `?:`).
pub(super) const MAX_NESTING: usize = 96;

/// The kinds of recursion counted: comparisons, arithmetic, member chains, nesting.
const KINDS: usize = 4;
const WHAT: [&str; KINDS] = [
    "comparisons (`==`, `<`, `in`, …) in a chain",
    "arithmetic operators (`+`, `-`, `*`, `/`, `%`) in a chain",
    "selections, calls and indexes (`.f()`, `.x`, `[i]`) in a chain",
    "brackets, calls and conditionals inside each other",
];
const RELATION: usize = 0;
const CALC: usize = 1;
const MEMBER: usize = 2;
const NESTING: usize = 3;

/// One bracket level: the operators of its current part, the deepest bracket inside that part,
/// the deepest part so far, and its `?`s.
#[derive(Default)]
struct Frame {
    part: [usize; KINDS],
    part_child: [usize; KINDS],
    best: [usize; KINDS],
    conditionals: usize,
    /// Whether anything is inside (`f()` has no expression to recurse into).
    used: bool,
}

impl Frame {
    fn end_part(&mut self) {
        for k in 0..KINDS {
            self.best[k] = self.best[k].max(self.part[k] + self.part_child[k]);
        }
        self.part = [0; KINDS];
        self.part_child = [0; KINDS];
    }

    /// The deepest path through this level, itself counted once per kind.
    fn close(mut self) -> [usize; KINDS] {
        if !self.used {
            return [0; KINDS];
        }
        self.end_part();
        let mut depth = self.best;
        for d in &mut depth {
            *d += 1;
        }
        depth[NESTING] += self.conditionals;
        depth
    }
}

/// Refuse an expression longer than [`MAX_CODE_POINTS`] or deeper than the recursion limits.
pub(super) fn check(source: &str) -> Result<(), String> {
    let chars: Vec<char> = source.chars().collect();
    if chars.len() > MAX_CODE_POINTS {
        return Err(format!(
            "expression code point size exceeds limit: size: {}, limit {MAX_CODE_POINTS}",
            chars.len()
        ));
    }
    let depth = depths(&chars);
    for k in 0..KINDS {
        let limit = if k == NESTING {
            MAX_NESTING
        } else {
            MAX_RECURSION - 1
        };
        if depth[k] > limit {
            let shown = if k == NESTING {
                MAX_NESTING
            } else {
                MAX_RECURSION
            };
            return Err(format!(
                "expression recursion limit exceeded: {shown} ({} {})",
                depth[k].saturating_sub(1),
                WHAT[k]
            ));
        }
    }
    Ok(())
}

/// The deepest path of each kind (see the module documentation).
fn depths(c: &[char]) -> [usize; KINDS] {
    let mut frames = vec![Frame::default()];
    // Whether the last token ends an operand (so `-` is binary, `[` indexes, `.` selects).
    let mut operand = false;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        let Some(top) = frames.last_mut() else {
            break;
        };
        if !matches!(ch, ' ' | '\t' | '\r' | '\n' | '\u{c}' | ')' | ']' | '}') {
            top.used = true;
        }
        match ch {
            ' ' | '\t' | '\r' | '\n' | '\u{c}' => {
                i += 1;
                continue;
            }
            '/' if next == Some('/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '"' | '\'' => {
                i = skip_string(c, i, false);
                operand = true;
                continue;
            }
            '`' => {
                i += 1;
                while i < c.len() && c[i] != '`' {
                    i += 1;
                }
                i += 1;
                operand = true;
                continue;
            }
            '0'..='9' => {
                i = skip_number(c, i);
                operand = true;
                continue;
            }
            '.' if !operand && next.is_some_and(|d| d.is_ascii_digit()) => {
                i = skip_number(c, i);
                operand = true;
                continue;
            }
            c0 if c0 == '_' || c0.is_alphabetic() => {
                let start = i;
                while i < c.len() && (c[i] == '_' || c[i].is_alphanumeric()) {
                    i += 1;
                }
                let word: String = c[start..i].iter().collect();
                let prefix = word.len() <= 2 && word.chars().all(|w| "rRbB".contains(w));
                if prefix && matches!(c.get(i), Some('"' | '\'')) {
                    let raw = word.contains(['r', 'R']);
                    i = skip_string(c, i, raw);
                    operand = true;
                } else if word == "in" {
                    top.part[RELATION] += 1;
                    operand = false;
                } else {
                    operand = true;
                }
                continue;
            }
            '(' | '[' | '{' => {
                // `a[i]` indexes; `f(` is a call, counted by its `.` if it is a method.
                if operand && ch == '[' {
                    top.part[MEMBER] += 1;
                }
                frames.push(Frame::default());
                // `[?` and `{?` (optional entries) are not conditionals.
                operand = false;
                i += 1;
                if next == Some('?') {
                    i += 1;
                }
                continue;
            }
            ')' | ']' | '}' => {
                if frames.len() > 1
                    && let Some(done) = frames.pop()
                {
                    let depth = done.close();
                    if let Some(parent) = frames.last_mut() {
                        raise(&mut parent.part_child, depth);
                    }
                }
                operand = true;
            }
            ',' | ':' => {
                top.end_part();
                operand = false;
            }
            '?' => {
                top.end_part();
                top.conditionals += 1;
                operand = false;
            }
            '&' | '|' if next == Some(ch) => {
                top.end_part();
                operand = false;
                i += 2;
                continue;
            }
            '=' | '!' | '<' | '>' if next == Some('=') => {
                top.part[RELATION] += 1;
                operand = false;
                i += 2;
                continue;
            }
            '<' | '>' => {
                top.part[RELATION] += 1;
                operand = false;
            }
            '+' | '*' | '/' | '%' => {
                top.part[CALC] += 1;
                operand = false;
            }
            '-' => {
                if operand {
                    top.part[CALC] += 1;
                }
                operand = false;
            }
            '.' => {
                if operand {
                    top.part[MEMBER] += 1;
                }
                operand = false;
                // `.?field` (optional selection)
                if next == Some('?') {
                    i += 1;
                }
            }
            _ => operand = false,
        }
        i += 1;
    }
    // Unclosed brackets: the parser reports them; count them as closed here.
    let mut depth = [0; KINDS];
    while let Some(done) = frames.pop() {
        let d = done.close();
        match frames.last_mut() {
            Some(parent) => raise(&mut parent.part_child, d),
            None => depth = d,
        }
    }
    depth
}

fn raise(into: &mut [usize; KINDS], from: [usize; KINDS]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(b);
    }
}

/// The index after the string literal whose quote is at `i`.
fn skip_string(c: &[char], mut i: usize, raw: bool) -> usize {
    let q = c[i];
    let triple = c.get(i + 1) == Some(&q) && c.get(i + 2) == Some(&q);
    i += if triple { 3 } else { 1 };
    while i < c.len() {
        if c[i] == '\\' && !raw {
            i += 2;
            continue;
        }
        if c[i] == q {
            if !triple {
                return i + 1;
            }
            if c.get(i + 1) == Some(&q) && c.get(i + 2) == Some(&q) {
                return i + 3;
            }
        }
        if !triple && c[i] == '\n' {
            return i;
        }
        i += 1;
    }
    i
}

/// The index after the number starting at `i` (digits, hex, fraction, exponent, `u`).
fn skip_number(c: &[char], mut i: usize) -> usize {
    if c[i] == '0' && matches!(c.get(i + 1), Some('x' | 'X')) {
        i += 2;
        while i < c.len() && c[i].is_ascii_hexdigit() {
            i += 1;
        }
    } else {
        while i < c.len() && c[i].is_ascii_digit() {
            i += 1;
        }
        if c.get(i) == Some(&'.') && c.get(i + 1).is_some_and(char::is_ascii_digit) {
            i += 1;
            while i < c.len() && c[i].is_ascii_digit() {
                i += 1;
            }
        }
        if matches!(c.get(i), Some('e' | 'E')) {
            let mut j = i + 1;
            if matches!(c.get(j), Some('+' | '-')) {
                j += 1;
            }
            if c.get(j).is_some_and(char::is_ascii_digit) {
                i = j;
                while i < c.len() && c[i].is_ascii_digit() {
                    i += 1;
                }
            }
        }
    }
    if matches!(c.get(i), Some('u' | 'U')) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(s: &str) -> [usize; KINDS] {
        depths(&s.chars().collect::<Vec<_>>())
    }

    #[test]
    fn chains_and_nesting_are_counted_like_the_grammar_recurses() {
        assert_eq!(depth("1"), [1, 1, 1, 1]);
        assert_eq!(depth("1 + 2 - 3"), [1, 3, 1, 1]);
        assert_eq!(depth("a.b.c() == 'x.y' + \"(\""), [2, 2, 3, 1]);
        assert_eq!(depth("f((1 + 1) * 2)"), [3, 5, 3, 3]);
        assert_eq!(depth("a && b || c ? d : e"), [1, 1, 1, 2]);
        assert_eq!(depth("[1, 2 + 3][0] in {'a': -1}"), [3, 3, 3, 2]);
        assert_eq!(depth("1e+5 + .5 - 0x1Fu"), [1, 3, 1, 1]);
        assert_eq!(depth("r'\\' + '''a\n'b'''"), [1, 2, 1, 1]);
        assert_eq!(depth("x // a comment (((\n + 1"), [1, 2, 1, 1]);
    }

    #[test]
    fn the_limits_are_cel_go_s() {
        let chain = |n: usize| format!("1{}", " + 1".repeat(n));
        assert!(check(&chain(248)).is_ok());
        assert_eq!(
            check(&chain(249)).unwrap_err(),
            "expression recursion limit exceeded: 250 (249 arithmetic operators (`+`, `-`, `*`, `/`, `%`) in a chain)"
        );
        let nested = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
        assert!(check(&nested(95)).is_ok());
        assert!(check(&nested(96)).is_err());
        assert!(check(&"x".repeat(100_001)).is_err());
        assert!(check(&"x".repeat(100_000)).is_ok());
    }
}

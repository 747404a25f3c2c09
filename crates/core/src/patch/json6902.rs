//! JSON patches (RFC 6902) with RFC 6901 pointers, as kustomize applies them (evanphx/json-patch
//! v4): `add` inserts into a list at an index or at `-` (the end) and sets a map key, `remove`
//! and `replace` need what they name to exist, `move` and `copy` read `from`, `test` compares
//! by value.

use serde_json::{Map, Value};

use crate::diagnostics::FieldPath;
use crate::strict::Problem;
use crate::suggest;

/// One operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    pub kind: OpKind,
    /// The pointer as written (for messages) and its tokens.
    pub path: String,
    tokens: Vec<String>,
}

/// What an operation does.
#[derive(Debug, Clone, PartialEq)]
pub enum OpKind {
    Add(Value),
    Remove,
    Replace(Value),
    Move { from: String, tokens: Vec<String> },
    Copy { from: String, tokens: Vec<String> },
    Test(Value),
}

impl OpKind {
    fn name(&self) -> &'static str {
        match self {
            Self::Add(_) => "add",
            Self::Remove => "remove",
            Self::Replace(_) => "replace",
            Self::Move { .. } => "move",
            Self::Copy { .. } => "copy",
            Self::Test(_) => "test",
        }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            OpKind::Move { from, .. } | OpKind::Copy { from, .. } => {
                write!(
                    f,
                    "{} from \"{from}\" to \"{}\"",
                    self.kind.name(),
                    self.path
                )
            }
            kind => write!(f, "{} \"{}\"", kind.name(), self.path),
        }
    }
}

const OPS: [&str; 6] = ["add", "remove", "replace", "move", "copy", "test"];

/// The tokens of an RFC 6901 pointer (`~1` is `/`, `~0` is `~`).
fn parse_pointer(text: &str) -> Result<Vec<String>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = text.strip_prefix('/') else {
        return Err(format!(
            "\"{text}\" is not a JSON pointer: it must be empty or start with \"/\""
        ));
    };
    rest.split('/')
        .map(|token| {
            let mut out = String::with_capacity(token.len());
            let mut chars = token.chars();
            while let Some(c) = chars.next() {
                if c == '~' {
                    match chars.next() {
                        Some('0') => out.push('~'),
                        Some('1') => out.push('/'),
                        _ => {
                            return Err(format!(
                                "\"{text}\" is not a JSON pointer: \"~\" must be followed by 0 or 1 (write ~0 for \"~\" and ~1 for \"/\")"
                            ));
                        }
                    }
                } else {
                    out.push(c);
                }
            }
            Ok(out)
        })
        .collect()
}

/// Read a list of operations; `base` is where the patch text sits (`…patches[0].patch`).
pub(super) fn parse(list: &[Value], base: &FieldPath) -> Result<Vec<Op>, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut ops = Vec::new();
    for (i, raw) in list.iter().enumerate() {
        let at = base.index(i);
        let Value::Object(map) = raw else {
            problems.push(Problem::new(
                at,
                format!(
                    "a JSON patch operation must be a map with op and path, not {}",
                    crate::strict::type_name(raw)
                ),
            ));
            continue;
        };
        match parse_op(map, &at) {
            Ok(op) => ops.push(op),
            Err(p) => problems.push(p),
        }
    }
    if problems.is_empty() {
        Ok(ops)
    } else {
        Err(problems)
    }
}

fn parse_op(map: &Map<String, Value>, at: &FieldPath) -> Result<Op, Problem> {
    for key in map.keys() {
        if !matches!(key.as_str(), "op" | "path" | "value" | "from") {
            let hint = suggest::hint(key, ["op", "path", "value", "from"]);
            return Err(Problem::new(
                at.key(key),
                format!("unknown field \"{key}\" in a JSON patch operation{hint}"),
            ));
        }
    }
    let op = match map.get("op") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return Err(Problem::new(
                at.key("op"),
                format!("must be a string, not {}", crate::strict::type_name(other)),
            ));
        }
        None => {
            return Err(Problem::new(
                at.key("op"),
                "missing op: one of add, remove, replace, move, copy, test",
            ));
        }
    };
    let pointer = |key: &str| -> Result<(String, Vec<String>), Problem> {
        match map.get(key) {
            Some(Value::String(s)) => parse_pointer(s)
                .map(|t| (s.clone(), t))
                .map_err(|m| Problem::new(at.key(key), m)),
            Some(other) => Err(Problem::new(
                at.key(key),
                format!(
                    "must be a JSON pointer string, not {}",
                    crate::strict::type_name(other)
                ),
            )),
            None => Err(Problem::new(
                at.key(key),
                format!("missing {key}: a \"{op}\" operation needs it"),
            )),
        }
    };
    let value = || -> Result<Value, Problem> {
        map.get("value").cloned().ok_or_else(|| {
            Problem::new(
                at.key("value"),
                format!("missing value: a \"{op}\" operation needs it"),
            )
        })
    };
    let (path, tokens) = pointer("path")?;
    let kind = match op {
        "add" => OpKind::Add(value()?),
        "remove" => OpKind::Remove,
        "replace" => OpKind::Replace(value()?),
        "test" => OpKind::Test(value()?),
        "move" | "copy" => {
            let (from, from_tokens) = pointer("from")?;
            if op == "move" {
                OpKind::Move {
                    from,
                    tokens: from_tokens,
                }
            } else {
                OpKind::Copy {
                    from,
                    tokens: from_tokens,
                }
            }
        }
        other => {
            let hint = suggest::hint(other, OPS);
            return Err(Problem::new(
                at.key("op"),
                format!(
                    "unknown op \"{other}\"{hint}; the ops are add, remove, replace, move, copy and test"
                ),
            ));
        }
    };
    Ok(Op { kind, path, tokens })
}

/// Why an operation failed (the caller names the op by index and pointer).
fn missing(token: &str) -> String {
    format!("\"{token}\" does not exist")
}

fn index_of(token: &str, len: usize, allow_end: bool) -> Result<usize, String> {
    if allow_end && token == "-" {
        return Ok(len);
    }
    // RFC 6901: digits without a leading zero.
    let ok = !token.is_empty()
        && token.bytes().all(|b| b.is_ascii_digit())
        && (token == "0" || !token.starts_with('0'));
    let i: usize = ok
        .then(|| token.parse().ok())
        .flatten()
        .ok_or_else(|| format!("\"{token}\" is not a list index"))?;
    let max = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    if i > max || (!allow_end && len == 0) {
        return Err(format!(
            "index {token} is out of range (the list has {len} elements)"
        ));
    }
    Ok(i)
}

/// The value a pointer names.
fn get<'a>(doc: &'a Value, tokens: &[String]) -> Result<&'a Value, String> {
    let mut at = doc;
    for token in tokens {
        at = match at {
            Value::Object(m) => m.get(token).ok_or_else(|| missing(token))?,
            Value::Array(a) => {
                let i = index_of(token, a.len(), false)?;
                a.get(i).ok_or_else(|| missing(token))?
            }
            _ => {
                return Err(format!(
                    "\"{token}\" is below a value that is neither a map nor a list"
                ));
            }
        };
    }
    Ok(at)
}

/// The parent of what a pointer names, and the last token.
fn parent<'a, 'b>(
    doc: &'a mut Value,
    tokens: &'b [String],
) -> Result<(&'a mut Value, &'b str), String> {
    let Some((last, up)) = tokens.split_last() else {
        return Err("the root has no parent".to_owned());
    };
    let mut at = doc;
    for token in up {
        at = match at {
            Value::Object(m) => m.get_mut(token).ok_or_else(|| missing(token))?,
            Value::Array(a) => {
                let i = index_of(token, a.len(), false)?;
                a.get_mut(i).ok_or_else(|| missing(token))?
            }
            _ => {
                return Err(format!(
                    "\"{token}\" is below a value that is neither a map nor a list"
                ));
            }
        };
    }
    Ok((at, last.as_str()))
}

fn add(doc: &mut Value, tokens: &[String], value: Value) -> Result<(), String> {
    if tokens.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = parent(doc, tokens)?;
    match parent {
        Value::Object(m) => {
            m.insert(last.to_owned(), value);
            Ok(())
        }
        Value::Array(a) => {
            let i = index_of(last, a.len(), true)?;
            a.insert(i, value);
            Ok(())
        }
        _ => Err(format!(
            "\"{last}\" is below a value that is neither a map nor a list"
        )),
    }
}

fn remove(doc: &mut Value, tokens: &[String]) -> Result<Value, String> {
    let (parent, last) = parent(doc, tokens)?;
    match parent {
        Value::Object(m) => m.shift_remove(last).ok_or_else(|| missing(last)),
        Value::Array(a) => {
            let i = index_of(last, a.len(), false)?;
            Ok(a.remove(i))
        }
        _ => Err(format!(
            "\"{last}\" is below a value that is neither a map nor a list"
        )),
    }
}

impl Op {
    /// Carry out the operation on `doc`.
    ///
    /// # Errors
    /// Why it does not apply (a path that does not exist, a failed test).
    pub fn apply(&self, doc: &mut Value) -> Result<(), String> {
        match &self.kind {
            OpKind::Add(v) => add(doc, &self.tokens, v.clone()),
            OpKind::Remove => remove(doc, &self.tokens).map(drop),
            OpKind::Replace(v) => {
                if self.tokens.is_empty() {
                    *doc = v.clone();
                    return Ok(());
                }
                get(doc, &self.tokens)?;
                let (parent, last) = parent(doc, &self.tokens)?;
                match parent {
                    Value::Object(m) => {
                        m.insert(last.to_owned(), v.clone());
                    }
                    Value::Array(a) => {
                        let i = index_of(last, a.len(), false)?;
                        if let Some(slot) = a.get_mut(i) {
                            *slot = v.clone();
                        }
                    }
                    _ => {}
                }
                Ok(())
            }
            OpKind::Move { tokens, .. } => {
                if self.tokens.starts_with(tokens) && self.tokens.len() > tokens.len() {
                    return Err("a value cannot be moved into itself".to_owned());
                }
                let value = remove(doc, tokens)?;
                add(doc, &self.tokens, value)
            }
            OpKind::Copy { tokens, .. } => {
                let value = get(doc, tokens)?.clone();
                add(doc, &self.tokens, value)
            }
            OpKind::Test(v) => {
                let actual = get(doc, &self.tokens)?;
                if actual == v {
                    Ok(())
                } else {
                    Err(format!("test failed: the value is {actual}, not {v}"))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(doc: Value, ops: Value) -> Result<Value, String> {
        let Value::Array(list) = ops else {
            panic!("ops")
        };
        let ops = parse(&list, &FieldPath::parse("patch")).map_err(|p| p[0].message.clone())?;
        let mut doc = doc;
        for op in &ops {
            op.apply(&mut doc).map_err(|e| format!("{op}: {e}"))?;
        }
        Ok(doc)
    }

    /// Cases from RFC 6902 appendix A and RFC 6901 §5.
    #[test]
    fn rfc_examples() {
        let table: Vec<(Value, Value, Result<Value, &str>)> = vec![
            (
                json!({"foo": "bar"}),
                json!([{"op": "add", "path": "/baz", "value": "qux"}]),
                Ok(json!({"foo": "bar", "baz": "qux"})),
            ),
            (
                json!({"foo": ["bar", "baz"]}),
                json!([{"op": "add", "path": "/foo/1", "value": "qux"}]),
                Ok(json!({"foo": ["bar", "qux", "baz"]})),
            ),
            (
                json!({"baz": "qux", "foo": "bar"}),
                json!([{"op": "remove", "path": "/baz"}]),
                Ok(json!({"foo": "bar"})),
            ),
            (
                json!({"foo": ["bar", "qux", "baz"]}),
                json!([{"op": "remove", "path": "/foo/1"}]),
                Ok(json!({"foo": ["bar", "baz"]})),
            ),
            (
                json!({"baz": "qux", "foo": "bar"}),
                json!([{"op": "replace", "path": "/baz", "value": "boo"}]),
                Ok(json!({"baz": "boo", "foo": "bar"})),
            ),
            (
                json!({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}}),
                json!([{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}]),
                Ok(json!({"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}})),
            ),
            (
                json!({"foo": ["all", "grass", "cows", "eat"]}),
                json!([{"op": "move", "from": "/foo/1", "path": "/foo/3"}]),
                Ok(json!({"foo": ["all", "cows", "eat", "grass"]})),
            ),
            (
                json!({"baz": "qux", "foo": ["a", 2, "c"]}),
                json!([{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}]),
                Ok(json!({"baz": "qux", "foo": ["a", 2, "c"]})),
            ),
            (
                json!({"baz": "qux"}),
                json!([{"op": "test", "path": "/baz", "value": "bar"}]),
                Err("test \"/baz\": test failed: the value is \"qux\", not \"bar\""),
            ),
            (
                json!({"foo": "bar"}),
                json!([{"op": "add", "path": "/child", "value": {"grandchild": {}}}]),
                Ok(json!({"foo": "bar", "child": {"grandchild": {}}})),
            ),
            (
                json!({"foo": ["bar"]}),
                json!([{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}]),
                Ok(json!({"foo": ["bar", ["abc", "def"]]})),
            ),
            (
                json!({"foo": "bar"}),
                json!([{"op": "add", "path": "/baz/bat", "value": "qux"}]),
                Err("add \"/baz/bat\": \"baz\" does not exist"),
            ),
            (
                json!({"/": 9, "~1": 10}),
                json!([{"op": "test", "path": "/~01", "value": 10}, {"op": "copy", "from": "/~1", "path": "/m~0n"}]),
                Ok(json!({"/": 9, "~1": 10, "m~n": 9})),
            ),
            (
                json!({"a": [1]}),
                json!([{"op": "replace", "path": "/a/1", "value": 2}]),
                Err("replace \"/a/1\": index 1 is out of range (the list has 1 elements)"),
            ),
            (
                json!({"a": [1]}),
                json!([{"op": "remove", "path": "/b"}]),
                Err("remove \"/b\": \"b\" does not exist"),
            ),
            (
                json!({"a": [1]}),
                json!([{"op": "replace", "path": "/a/01", "value": 2}]),
                Err("replace \"/a/01\": \"01\" is not a list index"),
            ),
            (
                json!({"a": 1}),
                json!([{"op": "move", "from": "/a", "path": "/a/b"}]),
                Err("move from \"/a\" to \"/a/b\": a value cannot be moved into itself"),
            ),
            (
                json!({}),
                json!([{"op": "ad", "path": "/a"}]),
                Err(
                    "unknown op \"ad\" (did you mean \"add\"?); the ops are add, remove, replace, move, copy and test",
                ),
            ),
            (
                json!({}),
                json!([{"op": "add", "path": "a", "value": 1}]),
                Err("\"a\" is not a JSON pointer: it must be empty or start with \"/\""),
            ),
            (
                json!({}),
                json!([{"op": "add", "path": "/a~2", "value": 1}]),
                Err(
                    "\"/a~2\" is not a JSON pointer: \"~\" must be followed by 0 or 1 (write ~0 for \"~\" and ~1 for \"/\")",
                ),
            ),
            (
                json!({}),
                json!([{"op": "add", "path": "/a"}]),
                Err("missing value: a \"add\" operation needs it"),
            ),
        ];
        for (doc, ops, want) in table {
            let got = run(doc.clone(), ops.clone());
            assert_eq!(got, want.map_err(str::to_owned), "{doc} {ops}");
        }
    }
}

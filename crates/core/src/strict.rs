//! Strict reading of typed fields out of untyped objects.
//!
//! Items stay `serde_json::Value` (typed round-trips reorder and drop fields), so the few
//! documents we do interpret (function configs, ServiceDefinitions, catalogs) are read through
//! these helpers: every unknown key and every wrong type becomes a problem with its field path,
//! and reading goes on so one run reports all of them.

use serde_json::{Map, Value};

use crate::diagnostics::FieldPath;
use crate::suggest;

/// One problem found while reading a document: where (a field path) and what.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    /// Where, e.g. `spec.catalogs[0].path`.
    pub path: FieldPath,
    /// What is wrong, without the path.
    pub message: String,
}

impl Problem {
    /// A problem at `path` (a [`FieldPath`], or a literal path such as `"spec.chartPath"`).
    pub fn new(path: impl Into<FieldPath>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Human name of a JSON type, for messages.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Reads the fields of one object, recording problems instead of stopping.
pub struct Reader<'a> {
    map: &'a Map<String, Value>,
    path: FieldPath,
    problems: &'a mut Vec<Problem>,
}

impl<'a> Reader<'a> {
    /// Start reading `value` at `path`; a non-object records a problem and reads as empty.
    pub fn new(
        value: &'a Value,
        path: impl Into<FieldPath>,
        problems: &'a mut Vec<Problem>,
    ) -> Self {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        let path = path.into();
        let map = match value {
            Value::Object(map) => map,
            Value::Null => EMPTY.get_or_init(Map::new),
            other => {
                problems.push(Problem::new(
                    &path,
                    format!("must be an object, not {}", type_name(other)),
                ));
                EMPTY.get_or_init(Map::new)
            }
        };
        Self {
            map,
            path,
            problems,
        }
    }

    /// The path of this object.
    pub fn path(&self) -> &FieldPath {
        &self.path
    }

    /// Path of a field of this object.
    pub fn field_path(&self, key: &str) -> FieldPath {
        self.path.key(key)
    }

    /// Record a problem at a field of this object.
    pub fn problem(&mut self, key: &str, message: impl Into<String>) {
        let path = if key.is_empty() {
            self.path.clone()
        } else {
            self.field_path(key)
        };
        self.problems.push(Problem::new(path, message));
    }

    /// Record every key not in `allowed` as an unknown field, with a suggestion.
    pub fn deny_unknown(&mut self, allowed: &[&str]) {
        for key in self.map.keys() {
            if !allowed.contains(&key.as_str()) {
                let hint = suggest::hint(key, allowed.iter().copied());
                // The full path, as for config fields (`unknown field "spec.config.x"`).
                let path = self.field_path(key);
                let message = format!("unknown field \"{path}\"{hint}");
                self.problems.push(Problem::new(path, message));
            }
        }
    }

    /// The raw value of a field (null counts as absent).
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// The problem list, for nested readers.
    pub fn problems(&mut self) -> &mut Vec<Problem> {
        self.problems
    }

    /// The underlying map.
    pub fn map(&self) -> &'a Map<String, Value> {
        self.map
    }

    /// An optional string field.
    pub fn string(&mut self, key: &str) -> Option<String> {
        match self.get(key)? {
            Value::String(s) => Some(s.clone()),
            other => {
                let msg = format!("must be a string, not {}", type_name(other));
                self.problem(key, msg);
                None
            }
        }
    }

    /// An optional boolean field. Strings "true"/"false" are accepted (kpt ConfigMaps).
    pub fn boolean(&mut self, key: &str) -> Option<bool> {
        match self.get(key)? {
            Value::Bool(b) => Some(*b),
            other => {
                let msg = format!("must be a boolean, not {}", type_name(other));
                self.problem(key, msg);
                None
            }
        }
    }

    /// An optional list of strings.
    pub fn strings(&mut self, key: &str) -> Option<Vec<String>> {
        match self.get(key)? {
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        other => {
                            let path = self.field_path(key).index(i);
                            self.problems.push(Problem::new(
                                path,
                                format!("must be a string, not {}", type_name(other)),
                            ));
                        }
                    }
                }
                Some(out)
            }
            other => {
                let msg = format!("must be a list of strings, not {}", type_name(other));
                self.problem(key, msg);
                None
            }
        }
    }

    /// An optional object field.
    pub fn object(&mut self, key: &str) -> Option<&'a Map<String, Value>> {
        match self.get(key)? {
            Value::Object(map) => Some(map),
            other => {
                let msg = format!("must be an object, not {}", type_name(other));
                self.problem(key, msg);
                None
            }
        }
    }

    /// An optional map of string to string.
    pub fn string_map(&mut self, key: &str) -> Option<Map<String, Value>> {
        let map = self.object(key)?;
        let mut out = Map::new();
        for (k, v) in map {
            match v {
                Value::String(_) => {
                    out.insert(k.clone(), v.clone());
                }
                other => {
                    let path = self.field_path(key).key(k);
                    self.problems.push(Problem::new(
                        path,
                        format!("must be a string, not {}", type_name(other)),
                    ));
                }
            }
        }
        Some(out)
    }

    /// An optional string that must be one of `allowed`.
    pub fn one_of(&mut self, key: &str, allowed: &[&str]) -> Option<String> {
        let value = self.string(key)?;
        if allowed.contains(&value.as_str()) {
            Some(value)
        } else {
            let list = allowed
                .iter()
                .map(|a| format!("\"{a}\""))
                .collect::<Vec<_>>()
                .join(", ");
            let hint = suggest::hint(&value, allowed.iter().copied());
            self.problem(
                key,
                format!("Unsupported value: \"{value}\": supported values: {list}{hint}"),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reader_collects_every_problem() {
        let doc = json!({"catalgos": [], "builtin": "yes", "tags": ["a", 1]});
        let mut problems = Vec::new();
        let mut r = Reader::new(&doc, "spec", &mut problems);
        assert_eq!(r.boolean("builtin"), None);
        assert_eq!(r.strings("tags"), Some(vec!["a".to_owned()]));
        r.deny_unknown(&["catalogs", "builtin", "tags"]);
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "spec.builtin: must be a boolean, not string",
                "spec.tags[1]: must be a string, not integer",
                "spec.catalgos: unknown field \"spec.catalgos\" (did you mean \"catalogs\"?)",
            ]
        );
    }
}

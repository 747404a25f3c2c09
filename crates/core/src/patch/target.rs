//! A patch's `target`: kustomize's `types.Selector` (api/types/selector.go). `group`,
//! `version`, `kind`, `name` and `namespace` are regular expressions anchored at both ends
//! (`^(?:…)$`); an empty or missing one matches everything. The namespace is compared as
//! kustomize's `EffectiveNamespace`: `default` for a namespaced object without one,
//! `_non_namespaceable_` for a cluster-scoped kind. `labelSelector` and `annotationSelector`
//! are label selectors in the apimachinery syntax (`a=b,c!=d,e in (f,g),h notin (i),j,!k`).

use std::fmt;

use regex::{Regex, RegexBuilder};
use serde_json::Value;

use crate::diagnostics::FieldPath;
use crate::strict::Problem;
use crate::suggest;

/// A bound on each compiled expression (a target is user input).
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// The longest selector string read.
const MAX_SELECTOR_BYTES: usize = 4096;

/// The fields of a target, in kustomize's order.
pub const FIELDS: [&str; 7] = [
    "group",
    "version",
    "kind",
    "name",
    "namespace",
    "labelSelector",
    "annotationSelector",
];

/// What a selector requirement asks of a label.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Gt(String, i64),
    Lt(String, i64),
}

/// A parsed label selector (every requirement must hold).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelSelector {
    text: String,
    requirements: Vec<Requirement>,
}

/// One anchored expression of a target.
#[derive(Debug, Clone)]
struct Pattern {
    text: String,
    regex: Regex,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// A patch target.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Selector {
    group: Option<Pattern>,
    version: Option<Pattern>,
    kind: Option<Pattern>,
    name: Option<Pattern>,
    namespace: Option<Pattern>,
    labels: Option<LabelSelector>,
    annotations: Option<LabelSelector>,
}

/// What a selector is matched against: an object's identity, labels and annotations.
pub struct Candidate<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    /// kustomize's effective namespace.
    pub namespace: &'a str,
    pub labels: Option<&'a serde_json::Map<String, Value>>,
    pub annotations: Option<&'a serde_json::Map<String, Value>>,
}

fn string_at<'a>(
    map: &'a serde_json::Map<String, Value>,
    key: &str,
    at: &FieldPath,
    problems: &mut Vec<Problem>,
) -> Option<&'a str> {
    match map.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.len() > MAX_SELECTOR_BYTES => {
            problems.push(Problem::new(
                at.key(key),
                format!(
                    "is {} bytes long; at most {MAX_SELECTOR_BYTES} are read",
                    s.len()
                ),
            ));
            None
        }
        Some(Value::String(s)) => Some(s.as_str()).filter(|s| !s.is_empty()),
        Some(other) => {
            problems.push(Problem::new(
                at.key(key),
                format!("must be a string, not {}", crate::strict::type_name(other)),
            ));
            None
        }
    }
}

fn pattern(text: Option<&str>, at: FieldPath, problems: &mut Vec<Problem>) -> Option<Pattern> {
    let text = text?;
    match RegexBuilder::new(&format!("^(?:{text})$"))
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
    {
        Ok(regex) => Some(Pattern {
            text: text.to_owned(),
            regex,
        }),
        Err(e) => {
            // The regex crate draws the pattern and a caret over several lines; its last line
            // says what is wrong.
            let e = e.to_string();
            let e = e
                .lines()
                .last()
                .unwrap_or_default()
                .trim_start_matches("error: ");
            problems.push(Problem::new(
                at,
                format!("\"{text}\" is not a valid regular expression (kustomize matches it anchored, as ^(?:…)$): {e}"),
            ));
            None
        }
    }
}

impl Selector {
    /// Read a `target` map at `at`.
    ///
    /// # Errors
    /// Every problem: unknown fields, wrong types, bad expressions or selectors.
    pub fn parse(value: &Value, at: &FieldPath) -> Result<Self, Vec<Problem>> {
        let mut problems = Vec::new();
        let Value::Object(map) = value else {
            return Err(vec![Problem::new(
                at,
                format!(
                    "must be a map of {}, not {}",
                    FIELDS.join(", "),
                    crate::strict::type_name(value)
                ),
            )]);
        };
        for key in map.keys() {
            if !FIELDS.contains(&key.as_str()) {
                let hint = suggest::hint(key, FIELDS);
                problems.push(Problem::new(
                    at.key(key),
                    format!(
                        "unknown field \"{key}\" in a patch target{hint}; a target has {}",
                        FIELDS.join(", ")
                    ),
                ));
            }
        }
        let mut s = Self::default();
        for (key, slot) in [
            ("group", &mut s.group),
            ("version", &mut s.version),
            ("kind", &mut s.kind),
            ("name", &mut s.name),
            ("namespace", &mut s.namespace),
        ] {
            let text = string_at(map, key, at, &mut problems);
            *slot = pattern(text, at.key(key), &mut problems);
        }
        for (key, slot) in [
            ("labelSelector", &mut s.labels),
            ("annotationSelector", &mut s.annotations),
        ] {
            if let Some(text) = string_at(map, key, at, &mut problems) {
                match LabelSelector::parse(text) {
                    Ok(sel) => *slot = Some(sel),
                    Err(e) => problems.push(Problem::new(at.key(key), e)),
                }
            }
        }
        if problems.is_empty() {
            Ok(s)
        } else {
            Err(problems)
        }
    }

    /// Whether the selector picks the object.
    pub fn matches(&self, c: &Candidate<'_>) -> bool {
        let hit = |p: &Option<Pattern>, v: &str| p.as_ref().is_none_or(|p| p.regex.is_match(v));
        hit(&self.group, c.group)
            && hit(&self.version, c.version)
            && hit(&self.kind, c.kind)
            && hit(&self.name, c.name)
            && hit(&self.namespace, c.namespace)
            && self.labels.as_ref().is_none_or(|s| s.matches(c.labels))
            && self
                .annotations
                .as_ref()
                .is_none_or(|s| s.matches(c.annotations))
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        for (key, p) in [
            ("group", &self.group),
            ("version", &self.version),
            ("kind", &self.kind),
            ("name", &self.name),
            ("namespace", &self.namespace),
        ] {
            if let Some(p) = p {
                parts.push(format!("{key}: {}", p.text));
            }
        }
        for (key, s) in [
            ("labelSelector", &self.labels),
            ("annotationSelector", &self.annotations),
        ] {
            if let Some(s) = s {
                parts.push(format!("{key}: \"{}\"", s.text));
            }
        }
        write!(f, "{{{}}}", parts.join(", "))
    }
}

/// A label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63
/// characters (alphanumerics, `-`, `_`, `.`, alphanumeric at both ends).
fn check_key(key: &str) -> Result<(), String> {
    let (prefix, name) = key.rsplit_once('/').map_or(("", key), |(p, n)| (p, n));
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    let prefix_ok = prefix.is_empty() && !key.contains('/') || crate::gvk::is_dns_subdomain(prefix);
    if name_ok && prefix_ok {
        Ok(())
    } else {
        Err(format!("\"{key}\" is not a valid label key"))
    }
}

fn check_value(value: &str) -> Result<(), String> {
    let ok = value.is_empty()
        || (value.len() <= 63
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && value.starts_with(|c: char| c.is_ascii_alphanumeric())
            && value.ends_with(|c: char| c.is_ascii_alphanumeric()));
    if ok {
        Ok(())
    } else {
        Err(format!("\"{value}\" is not a valid label value"))
    }
}

/// Split at the commas outside parentheses.
fn split_requirements(text: &str) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let mut depth = 0_u32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("unbalanced \")\" in \"{text}\""))?;
            }
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced \"(\" in \"{text}\""));
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn set_values(rest: &str, whole: &str) -> Result<Vec<String>, String> {
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| {
            format!("\"{whole}\": the values of in/notin go in parentheses, as `key in (a,b)`")
        })?;
    let values: Vec<String> = inner.split(',').map(|v| v.trim().to_owned()).collect();
    for v in &values {
        check_value(v)?;
    }
    Ok(values)
}

impl LabelSelector {
    /// Parse apimachinery's selector syntax (`labels.Parse`).
    ///
    /// # Errors
    /// What is wrong, naming the requirement.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for part in split_requirements(text)? {
            let part = part.trim();
            if part.is_empty() {
                return Err(format!(
                    "\"{text}\" has an empty requirement (two commas, or one at an end)"
                ));
            }
            let r = if let Some(key) = part.strip_prefix('!') {
                let key = key.trim();
                check_key(key)?;
                Requirement::NotExists(key.to_owned())
            } else if let Some((key, value)) = part.split_once("!=") {
                let (key, value) = (key.trim(), value.trim());
                check_key(key)?;
                check_value(value)?;
                Requirement::NotIn(key.to_owned(), vec![value.to_owned()])
            } else if let Some((key, value)) =
                part.split_once("==").or_else(|| part.split_once('='))
            {
                let (key, value) = (key.trim(), value.trim());
                check_key(key)?;
                check_value(value)?;
                Requirement::In(key.to_owned(), vec![value.to_owned()])
            } else if let Some((key, value)) = part.split_once('>').or_else(|| part.split_once('<'))
            {
                let key = key.trim();
                check_key(key)?;
                let n: i64 = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("\"{part}\": > and < compare with an integer"))?;
                if part.contains('>') {
                    Requirement::Gt(key.to_owned(), n)
                } else {
                    Requirement::Lt(key.to_owned(), n)
                }
            } else if let Some((key, rest)) = part.split_once(" notin ") {
                check_key(key.trim())?;
                Requirement::NotIn(key.trim().to_owned(), set_values(rest, part)?)
            } else if let Some((key, rest)) = part.split_once(" in ") {
                check_key(key.trim())?;
                Requirement::In(key.trim().to_owned(), set_values(rest, part)?)
            } else {
                check_key(part)?;
                Requirement::Exists(part.to_owned())
            };
            requirements.push(r);
        }
        Ok(Self {
            text: text.to_owned(),
            requirements,
        })
    }

    /// Whether a label (or annotation) map satisfies every requirement.
    pub fn matches(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        let get = |k: &str| labels.and_then(|m| m.get(k)).and_then(Value::as_str);
        self.requirements.iter().all(|r| match r {
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
            Requirement::In(k, vs) => get(k).is_some_and(|v| vs.iter().any(|x| x == v)),
            // apimachinery: `!=` and notin also match objects without the label.
            Requirement::NotIn(k, vs) => get(k).is_none_or(|v| !vs.iter().any(|x| x == v)),
            Requirement::Gt(k, n) => get(k)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v > *n),
            Requirement::Lt(k, n) => get(k)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v < *n),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> serde_json::Map<String, Value> {
        let Value::Object(m) = v else {
            panic!("labels")
        };
        m
    }

    #[test]
    fn label_selectors_as_apimachinery_reads_them() {
        let l = labels(json!({"app": "web", "tier": "front", "n": "5"}));
        let table = [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("missing!=x", true),
            ("app in (api, web)", true),
            ("app notin (web)", false),
            ("missing notin (web)", true),
            ("app,tier=front", true),
            ("!app", false),
            ("!missing", true),
            ("n>4,n<6", true),
            ("n>5", false),
            ("app=web,tier in (back)", false),
        ];
        for (text, want) in table {
            let s = LabelSelector::parse(text).unwrap();
            assert_eq!(s.matches(Some(&l)), want, "{text}");
        }
        for bad in [
            "app=",
            "a b=c",
            "app in web",
            "app in (a",
            ",app",
            "n>x",
            "-x=y",
        ] {
            if bad == "app=" {
                // An empty value is valid (`app=` matches the label set to "").
                assert!(LabelSelector::parse(bad).is_ok());
                continue;
            }
            assert!(LabelSelector::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_are_anchored_regular_expressions() {
        let s = Selector::parse(
            &json!({"kind": "Deploy.*", "name": "web|api"}),
            &FieldPath::parse("target"),
        )
        .unwrap();
        let c = |kind: &'static str, name: &'static str| Candidate {
            group: "apps",
            version: "v1",
            kind,
            name,
            namespace: "default",
            labels: None,
            annotations: None,
        };
        assert!(s.matches(&c("Deployment", "web")));
        assert!(!s.matches(&c("Deployment", "web-2")));
        assert!(!s.matches(&c("MyDeployment", "api")));
        assert_eq!(s.to_string(), "{kind: Deploy.*, name: web|api}");
        let err = Selector::parse(
            &json!({"kinds": "X", "name": "("}),
            &FieldPath::parse("target"),
        )
        .unwrap_err();
        let messages: Vec<String> = err
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(
            messages[0].starts_with(
                "target.kinds: unknown field \"kinds\" in a patch target (did you mean \"kind\"?)"
            ),
            "{messages:?}"
        );
        assert!(
            messages[1].starts_with("target.name: \"(\" is not a valid regular expression"),
            "{messages:?}"
        );
    }
}

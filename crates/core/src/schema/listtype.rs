//! `x-kubernetes-list-type: set | map` uniqueness, a port of apiextensions-apiserver
//! `pkg/apiserver/schema/listtype/validation.go` (kubernetes 8a5cb1c, 2019–2024 unchanged in
//! substance): every element of a `set` is unique, every element of a `map` is an object (or
//! null) whose `x-kubernetes-list-map-keys` values are unique. The apiserver runs it after the
//! OpenAPI validation and before the CEL rules; its errors do not block the rules.
//!
//! Values are compared as the apiserver compares the decoded JSON: scalars by Go equality
//! (an integer and a float differ), objects and arrays by their `json.Marshal` text (sorted
//! keys, so `1` and `1.0` inside them are the same). Error values print as apimachinery's
//! `field.Error` prints them: strings quoted, objects as Go's `%#v` (`map[string]interface
//! {}{"name":"a"}`).

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::gofmt::{go_number, go_quote};
use super::structural::{AdditionalProperties, FieldError, Structural};
use crate::diagnostics::FieldPath;

/// Every uniqueness error of `instance` under `s`, sorted by path.
#[must_use]
pub fn validate(s: &Structural, instance: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Value::Object(object) = instance {
        walk_object(&FieldPath::root(), s, object, &mut errors);
    }
    errors.sort();
    errors
}

fn walk_object(
    path: &FieldPath,
    s: &Structural,
    obj: &Map<String, Value>,
    out: &mut Vec<FieldError>,
) {
    if let Some(AdditionalProperties::Schema(ap)) = &s.additional_properties {
        for (k, v) in obj {
            walk(&path.key(k), ap, v, out);
        }
    }
    for (k, v) in obj {
        if let Some(sub) = s.property(k) {
            walk(&path.key(k), sub, v, out);
        }
    }
}

fn walk(path: &FieldPath, s: &Structural, value: &Value, out: &mut Vec<FieldError>) {
    match value {
        Value::Array(list) => walk_array(path, s, list, out),
        Value::Object(obj) => walk_object(path, s, obj, out),
        _ => {}
    }
}

fn walk_array(path: &FieldPath, s: &Structural, list: &[Value], out: &mut Vec<FieldError>) {
    match s.x_list_type.as_deref() {
        Some("set") => {
            let keys: Vec<Key<'_>> = list.iter().map(Key::Value).collect();
            for i in non_unique(&keys) {
                out.push(duplicate(path.index(i), &list[i]));
            }
        }
        Some("map") => list_map(path, s, list, out),
        _ => {}
    }
    if let Some(items) = &s.items {
        for (i, item) in list.iter().enumerate() {
            walk(&path.index(i), items, item, out);
        }
    }
}

/// A list-type map: only objects (or nulls), unique by their key fields.
fn list_map(path: &FieldPath, s: &Structural, list: &[Value], out: &mut Vec<FieldError>) {
    if let Some(i) = list.iter().position(|x| !x.is_object() && !x.is_null()) {
        out.push(FieldError::new(
            path.index(i),
            format!(
                "Invalid value: {}: must be an object for an array of list-type map",
                super::validate::go_value(&list[i])
            ),
        ));
        return;
    }
    if let [key_field] = s.x_list_map_keys.as_slice() {
        // One key: its value, or "unspecified" (an absent key or a null element), which
        // equals only itself.
        let keys: Vec<Key<'_>> = list
            .iter()
            .map(|x| x.get(key_field).map_or(Key::Unspecified, Key::Value))
            .collect();
        for i in non_unique(&keys) {
            let mut shown = Map::new();
            if let Key::Value(v) = keys[i] {
                shown.insert(key_field.clone(), v.clone());
            }
            out.push(duplicate(path.index(i), &Value::Object(shown)));
        }
        return;
    }
    // Several keys: the object of those present.
    let keys: Vec<Value> = list
        .iter()
        .map(|x| {
            let present = s
                .x_list_map_keys
                .iter()
                .filter_map(|k| Some((k.clone(), x.get(k)?.clone())));
            Value::Object(present.collect())
        })
        .collect();
    let compared: Vec<Key<'_>> = keys.iter().map(Key::Value).collect();
    for i in non_unique(&compared) {
        out.push(duplicate(path.index(i), &keys[i]));
    }
}

/// What `validateListSet` compares: a value, or the "unspecified key" marker.
#[derive(Clone, Copy)]
enum Key<'a> {
    Value(&'a Value),
    Unspecified,
}

/// Go's equality of decoded JSON scalars (`map[interface{}]int` keys), or the `json.Marshal`
/// text of an object or array.
#[derive(PartialEq, Eq, Hash)]
enum Identity {
    Unspecified,
    Null,
    Bool(bool),
    Int(i64),
    /// A float (or an integer beyond int64, which the apiserver decodes as float64), by its bits
    /// with -0 as 0.
    Float(u64),
    Str(String),
    Compound(String),
}

fn identity(key: Key<'_>) -> Identity {
    let Key::Value(value) = key else {
        return Identity::Unspecified;
    };
    match value {
        Value::Null => Identity::Null,
        Value::Bool(b) => Identity::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Identity::Int(i),
            None => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                Identity::Float(if f == 0.0 { 0 } else { f.to_bits() })
            }
        },
        Value::String(s) => Identity::Str(s.clone()),
        Value::Array(_) | Value::Object(_) => {
            let mut text = String::new();
            go_json(value, &mut text);
            Identity::Compound(text)
        }
    }
}

/// The index of the second appearance of every value that appears more than once, in order
/// (`validateListSet`: each value is reported once).
fn non_unique(keys: &[Key<'_>]) -> Vec<usize> {
    if keys.len() <= 1 {
        return Vec::new();
    }
    let mut seen: HashMap<Identity, usize> = HashMap::with_capacity(keys.len());
    let mut out = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let times = seen.entry(identity(*key)).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

/// Go's `json.Marshal` of a decoded value, as far as equality goes: object keys sorted, numbers
/// by value (an integral float prints as the integer it equals).
fn go_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(obj) => {
            let mut keys: Vec<&String> = obj.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(v) = obj.get(k) {
                    go_json(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(list) => {
            out.push('[');
            for (i, v) in list.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json(v, out);
            }
            out.push(']');
        }
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => {
                let _ = write!(out, "{i}");
            }
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e21 => {
                let _ = write!(out, "{f:.0}");
            }
            (None, Some(f)) => {
                let _ = write!(out, "{f:e}");
            }
            (None, None) => out.push_str(&n.to_string()),
        },
        other => out.push_str(&other.to_string()),
    }
}

/// `field.Duplicate(path, value)` as apimachinery prints it.
fn duplicate(path: FieldPath, value: &Value) -> FieldError {
    let shown = match value {
        // `ErrorBody` turns a nil value into the string "null", then quotes it.
        Value::Null => "\"null\"".to_owned(),
        Value::String(s) => go_quote(s),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::Array(_) | Value::Object(_) => go_sharp_v(value),
    };
    FieldError::new(path, format!("Duplicate value: {shown}"))
}

/// Go's `%#v` of a decoded JSON value inside an `interface{}`.
fn go_sharp_v(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::String(s) => go_quote(s),
        Value::Array(list) => {
            let items: Vec<String> = list.iter().map(go_sharp_v).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        Value::Object(obj) => {
            // fmt prints map keys sorted.
            let mut entries: Vec<(&String, &Value)> = obj.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let items: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", go_quote(k), go_sharp_v(v)))
                .collect();
            format!("map[string]interface {{}}{{{}}}", items.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(raw: &Value) -> Structural {
        Structural::from_json(raw).expect("structural")
    }

    fn errors(raw: &Value, instance: &Value) -> Vec<String> {
        validate(&schema(raw), instance)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn list(list_type: &str, items: &Value) -> Value {
        json!({"type": "object", "properties": {"l": {
            "type": "array", "x-kubernetes-list-type": list_type, "items": items}}})
    }

    fn map_list(keys: &[&str]) -> Value {
        json!({"type": "object", "properties": {"l": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys,
            "items": {"type": "object", "properties": {
                "k1": {"type": "string"}, "k2": {"type": "integer"}, "v": {"type": "string"}},
                "x-kubernetes-preserve-unknown-fields": true}}}})
    }

    /// Upstream `validation_test.go` cases: sets of scalars and of compounds, each duplicate
    /// reported once, at its second appearance.
    #[test]
    fn sets_report_each_duplicate_once() {
        let strings = list("set", &json!({"type": "string"}));
        assert!(errors(&strings, &json!({"l": ["a", "b"]})).is_empty());
        assert_eq!(
            errors(&strings, &json!({"l": ["a", "b", "a", "a", "b"]})),
            [
                r#"l[2]: Duplicate value: "a""#,
                r#"l[4]: Duplicate value: "b""#
            ]
        );
        let numbers = list("set", &json!({"type": "number"}));
        assert_eq!(
            errors(&numbers, &json!({"l": [1, 1.0, 1, 1.5, 1.5, 2e6, 2e6]})),
            [
                "l[2]: Duplicate value: 1",
                "l[4]: Duplicate value: 1.5",
                "l[6]: Duplicate value: 2e+06"
            ]
        );
        let objects = list(
            "set",
            &json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        );
        assert_eq!(
            errors(
                &objects,
                &json!({"l": [{"a": 1, "b": [1.0]}, {"b": [1], "a": 1.0}, null, null]})
            ),
            [
                r#"l[1]: Duplicate value: map[string]interface {}{"a":1, "b":[]interface {}{1}}"#,
                r#"l[3]: Duplicate value: "null""#
            ]
        );
    }

    /// One key: its value decides, an absent key (or a null element) equals only another such.
    #[test]
    fn maps_with_one_key() {
        let s = map_list(&["k1"]);
        assert!(errors(&s, &json!({"l": [{"k1": "a"}, {"k1": "b"}]})).is_empty());
        assert_eq!(
            errors(
                &s,
                &json!({"l": [{"k1": "a", "v": "x"}, {"k1": "a", "v": "y"}, {}, null, {"k1": null}]})
            ),
            [
                r#"l[1]: Duplicate value: map[string]interface {}{"k1":"a"}"#,
                r"l[3]: Duplicate value: map[string]interface {}{}"
            ]
        );
        assert_eq!(
            errors(&s, &json!({"l": [{"k1": "a"}, "x", 1]})),
            [r#"l[1]: Invalid value: "x": must be an object for an array of list-type map"#]
        );
    }

    /// Several keys: the object of the keys present decides.
    #[test]
    fn maps_with_several_keys() {
        let s = map_list(&["k1", "k2"]);
        assert!(
            errors(
                &s,
                &json!({"l": [{"k1": "a", "k2": 1}, {"k1": "a", "k2": 2}]})
            )
            .is_empty()
        );
        assert_eq!(
            errors(
                &s,
                &json!({"l": [{"k1": "a", "k2": 1}, {"k2": 1, "k1": "a", "v": "z"}, {"k1": "a"}, {"k1": "a"}]})
            ),
            [
                r#"l[1]: Duplicate value: map[string]interface {}{"k1":"a", "k2":1}"#,
                r#"l[3]: Duplicate value: map[string]interface {}{"k1":"a"}"#
            ]
        );
    }

    /// Lists inside items and under additionalProperties are checked at their own paths;
    /// atomic and undeclared lists are not.
    #[test]
    fn nested_lists_are_checked_where_they_are() {
        let inner = list("set", &json!({"type": "string"}));
        let s = json!({"type": "object", "properties": {
            "outer": {"type": "array", "items": inner},
            "byName": {"type": "object", "additionalProperties": inner},
            "atomic": {"type": "array", "items": {"type": "string"}}}});
        assert_eq!(
            errors(
                &s,
                &json!({"outer": [{"l": ["x", "x"]}], "byName": {"n": {"l": ["y", "y"]}},
                "atomic": ["z", "z"], "undeclared": ["w", "w"]})
            ),
            [
                r#"byName.n.l[1]: Duplicate value: "y""#,
                r#"outer[0].l[1]: Duplicate value: "x""#
            ]
        );
    }

    fn ty(t: &str) -> Structural {
        Structural {
            type_: t.to_owned(),
            ..Structural::default()
        }
    }

    fn nullable(t: &str) -> Structural {
        Structural {
            nullable: true,
            ..ty(t)
        }
    }

    fn array(list_type: Option<&str>, keys: &[&str], items: Option<Structural>) -> Structural {
        Structural {
            x_list_type: list_type.map(str::to_owned),
            x_list_map_keys: keys.iter().map(|k| (*k).to_owned()).collect(),
            items: items.map(Box::new),
            ..ty("array")
        }
    }

    fn object_of(values: Structural) -> Structural {
        Structural {
            additional_properties: Some(AdditionalProperties::Schema(Box::new(values))),
            ..ty("object")
        }
    }

    fn with_properties(props: Vec<(&str, Structural)>) -> Structural {
        Structural {
            properties: props.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            ..ty("object")
        }
    }

    /// The error kind and path of each error, as upstream's `validationMatch` compares them.
    fn kinds(s: &Structural, instance: &Value) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = validate(s, instance)
            .iter()
            .map(|e| {
                let kind = e.message.split(':').next().unwrap_or_default().to_owned();
                (e.path.to_string(), kind)
            })
            .collect();
        out.sort();
        out
    }

    fn expect(cases: &[(&str, usize, &str)]) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = cases
            .iter()
            .map(|(key, i, kind)| {
                (
                    FieldPath::root().key(key).index(*i).to_string(),
                    (*kind).to_owned(),
                )
            })
            .collect();
        out.sort();
        out
    }

    /// Upstream `TestValidateListSetsAndMaps`, "set list with compound map items".
    #[test]
    fn upstream_sets_of_compound_items() {
        let set = |items: Structural| array(Some("set"), &[], Some(items));
        let s = with_properties(vec![
            ("strings", set(ty("string"))),
            ("integers", set(ty("integer"))),
            ("booleans", set(ty("boolean"))),
            ("float64", set(ty("number"))),
            ("nil", set(nullable("string"))),
            ("empty maps", set(object_of(ty("string")))),
            ("map values", set(object_of(ty("string")))),
            ("nil values", set(object_of(nullable("string")))),
            ("array", set(array(None, &[], Some(ty("string"))))),
            ("nil array", set(array(None, &[], Some(nullable("string"))))),
            ("multiple duplicates", set(object_of(ty("string")))),
        ]);
        let instance = json!({
            "strings": ["a", "b", "a"],
            "integers": [1, 2, 1],
            "booleans": [false, true, true],
            "float64": [1.0, 2.0, 2.0],
            "nil": ["a", null, null],
            "empty maps": [{"a": "b"}, {}, {}],
            "map values": [{"a": "b"}, {"a": "c"}, {"a": "b"}],
            "nil values": [{"a": null}, {"b": "c", "a": null}],
            "array": [[], ["a"], ["b"], ["a"]],
            "nil array": [[], [null], [null, null], [null], ["a"]],
            "multiple duplicates": [{"a": "b"}, {"a": "c"}, {"a": "b"}, {"a": "c"}, {"a": "c"}],
        });
        let d = "Duplicate value";
        assert_eq!(
            kinds(&s, &instance),
            expect(&[
                ("strings", 2, d),
                ("integers", 2, d),
                ("booleans", 2, d),
                ("float64", 2, d),
                ("nil", 2, d),
                ("empty maps", 2, d),
                ("map values", 2, d),
                ("array", 3, d),
                ("nil array", 3, d),
                ("multiple duplicates", 2, d),
                ("multiple duplicates", 3, d),
            ])
        );
    }

    /// Upstream `TestValidateListSetsAndMaps`, "map list with compound map items".
    #[test]
    fn upstream_maps_of_compound_items() {
        let map = |keys: &[&str], items: Structural| array(Some("map"), keys, Some(items));
        let ac = || {
            with_properties(vec![
                (
                    "a",
                    Structural {
                        items: Some(Box::new(ty("string"))),
                        ..nullable("array")
                    },
                ),
                ("c", ty("string")),
            ])
        };
        let abc = {
            let mut s = ac();
            s.properties.insert(1, ("b".to_owned(), ty("string")));
            s
        };
        let s = with_properties(vec![
            ("strings", map(&["a"], ty("string"))),
            ("integers", map(&["a"], ty("integer"))),
            ("booleans", map(&["a"], ty("boolean"))),
            ("float64", map(&["a"], ty("number"))),
            ("nil", map(&["a"], nullable("string"))),
            ("array", map(&["a"], array(None, &[], Some(ty("string"))))),
            ("one key", map(&["a"], object_of(ty("string")))),
            ("two keys", map(&["a", "b"], object_of(ty("string")))),
            ("undefined key", map(&["a", "b"], object_of(ty("string")))),
            ("compound key", map(&["a"], object_of(nullable("string")))),
            ("nil key", map(&["a"], ac())),
            ("nil item", map(&["a"], ac())),
            ("nil item multiple keys", map(&["a", "b"], abc)),
            (
                "multiple duplicates",
                map(&["a"], object_of(nullable("string"))),
            ),
        ]);
        let instance = json!({
            "strings": ["a"],
            "integers": [1],
            "booleans": [false],
            "float64": [1.0],
            "nil": [null],
            "array": [["a"]],
            "one key": [{"a": "0", "c": "2"}, {"a": "1", "c": "1"}, {"a": "1", "c": "2"}, {}],
            "two keys": [{"a": "1", "b": "1", "c": "1"}, {"a": "1", "b": "2", "c": "2"}, {"a": "1", "b": "2", "c": "3"}, {}],
            "undefined key": [{"a": "1", "b": "1", "c": "1"}, {"a": "1", "c": "2"}, {"a": "1", "c": "3"}, {}],
            "compound key": [{"a": [], "c": "1"}, {"a": null, "c": "1"}, {"a": ["a"], "c": "1"},
                {"a": ["a", 42], "c": "2"}, {"a": ["a", 42], "c": ["3"]}],
            "nil key": [{"a": [], "c": "1"}, {"a": null, "c": "1"}, {"c": "1"}, {"a": null}],
            "nil item": [null, {"a": "0", "c": "1"}, {"a": null}, {"c": "1"}],
            "nil item multiple keys": [null, {"b": "0", "c": "1"}, {"a": null}, {"c": "1"}],
            "multiple duplicates": [{"a": [], "c": "1"}, {"a": null, "c": "1"}, {"a": ["a"], "c": "1"},
                {"a": ["a", 42], "c": "2"}, {"a": ["a", 42], "c": ["3"]}, {"a": ["a"], "c": "1", "d": "1"},
                {"a": ["a"], "c": "1", "d": "2"}],
        });
        let (d, i) = ("Duplicate value", "Invalid value");
        assert_eq!(
            kinds(&s, &instance),
            expect(&[
                ("strings", 0, i),
                ("integers", 0, i),
                ("booleans", 0, i),
                ("float64", 0, i),
                ("array", 0, i),
                ("one key", 2, d),
                ("two keys", 2, d),
                ("undefined key", 2, d),
                ("compound key", 4, d),
                ("nil key", 3, d),
                ("nil item", 3, d),
                ("nil item multiple keys", 3, d),
                ("multiple duplicates", 4, d),
                ("multiple duplicates", 5, d),
            ])
        );
    }

    #[test]
    fn values_print_as_go_prints_them() {
        assert_eq!(
            go_quote("a\"b\\c\n\u{1}é\u{a0}"),
            r#""a\"b\\c\n\x01é\u00a0""#
        );
        for (n, shown) in [
            (json!(123_456.0), "123456"),
            (json!(1_234_567.0), "1.234567e+06"),
            (json!(0.0001), "0.0001"),
            (json!(0.000_01), "1e-05"),
            (json!(-2.5), "-2.5"),
            (json!(1e100), "1e+100"),
            (json!(u64::MAX), "1.8446744073709552e+19"),
        ] {
            let Value::Number(n) = n else { unreachable!() };
            assert_eq!(go_number(&n), shown);
        }
        assert_eq!(
            go_sharp_v(&json!({"b": [null, true, "s"], "a": {}})),
            r#"map[string]interface {}{"a":map[string]interface {}{}, "b":[]interface {}{interface {}(nil), true, "s"}}"#
        );
    }
}

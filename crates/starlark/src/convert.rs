//! What a script leaves in `ctx.resource_list`, read back as JSON and checked like any
//! function's output: `items` a list of KRM objects, `results` a list of dicts, every value
//! one that YAML and krm-catalog keep exactly. Integers stay integers (and must fit 64 bits,
//! as Kubernetes integers do), floats must be finite, dict keys strings; nothing nests deeper
//! than the YAML reader takes, and the whole is bounded in size (a list that holds itself twice,
//! thirty times over, would otherwise expand to a billion values). Every refusal names the
//! path of the value (`ctx.resource_list["items"][0]["spec"]["n"]`).

use std::fmt::Write as _;

use serde_json::{Map, Number, Value as Json};
use starlark::values::dict::DictRef;
use starlark::values::float::StarlarkFloat;
use starlark::values::list::ListRef;
use starlark::values::structs::StructRef;
use starlark::values::tuple::TupleRef;
use starlark::values::{UnpackValue, Value};

/// The YAML reader's nesting limit (krm-catalog's and this binary's).
const YAML_MAX_DEPTH: usize = 128;

/// The deepest an item may nest: the YAML limit, less the ResourceList's map and `items`.
pub const MAX_ITEM_DEPTH: usize = YAML_MAX_DEPTH - 2;

/// What one value costs in memory besides its text: a `serde_json::Value` and its share of the
/// map or vector that holds it.
const VALUE_BYTES: usize = 64;

/// The ResourceList as the script left it, checked; `budget` bounds the bytes of the values
/// (strings, keys, and [`VALUE_BYTES`] for every value).
pub fn resource_list(list: Value, budget: usize) -> Result<Json, String> {
    let Some(dict) = DictRef::from_value(list) else {
        return Err("ctx.resource_list is no longer a dict".to_owned());
    };
    let mut walk = Walk {
        budget,
        limit: budget,
    };
    let mut out = Map::new();
    out.insert("apiVersion".into(), "config.kubernetes.io/v1".into());
    out.insert("kind".into(), "ResourceList".into());
    let items = walk.list_of_dicts(dict.get_str("items"), "items")?;
    for (i, item) in items.iter().enumerate() {
        krm_object(item).map_err(|what| {
            format!("ctx.resource_list[\"items\"][{i}] is not a KRM object: {what}")
        })?;
    }
    out.insert("items".into(), Json::Array(items));
    let results = walk.list_of_dicts(dict.get_str("results"), "results")?;
    if !results.is_empty() {
        out.insert("results".into(), Json::Array(results));
    }
    Ok(Json::Object(out))
}

/// Why an item is not a KRM object (`apiVersion`, `kind` and `metadata.name`, non-empty
/// strings), if it is not.
pub fn krm_object(item: &Json) -> Result<(), String> {
    let text = |v: Option<&Json>| v.and_then(Json::as_str).is_some_and(|s| !s.is_empty());
    for (field, value) in [
        ("apiVersion", item.get("apiVersion")),
        ("kind", item.get("kind")),
        (
            "metadata.name",
            item.get("metadata").and_then(|m| m.get("name")),
        ),
    ] {
        if !text(value) {
            return Err(format!("{field} is missing or not a non-empty string"));
        }
    }
    Ok(())
}

struct Walk {
    /// Bytes left.
    budget: usize,
    /// Bytes at the start.
    limit: usize,
}

impl Walk {
    /// `ctx.resource_list[key]`: `None`, or a list of dicts.
    fn list_of_dicts(&mut self, value: Option<Value>, key: &str) -> Result<Vec<Json>, String> {
        let Some(value) = value.filter(|v| !v.is_none()) else {
            return Ok(Vec::new());
        };
        let at = format!("ctx.resource_list[\"{key}\"]");
        let Some(list) = ListRef::from_value(value) else {
            return Err(format!("{at} must be a list of dicts, not {}", kind(value)));
        };
        let mut out = Vec::with_capacity(list.len());
        for (i, entry) in list.iter().enumerate() {
            let at = format!("{at}[{i}]");
            if DictRef::from_value(entry).is_none() {
                return Err(format!(
                    "{at} must be a dict (a Kubernetes object), not {}",
                    kind(entry)
                ));
            }
            let mut path = at.clone();
            let limit = self.limit;
            let json = self.value(entry, 1, &mut path).map_err(|e| match e {
                Refused::TooDeep => format!(
                    "{at} is nested more than {MAX_ITEM_DEPTH} levels deep (the YAML nesting depth limit is {YAML_MAX_DEPTH}, and the ResourceList takes two)"
                ),
                Refused::TooBig => format!(
                    "the output is larger than {limit} bytes (values that share structure expand when written; the limit is {})",
                    crate::error::MAX_INPUT_BYTES
                ),
                Refused::Bad(why) => format!("{path}: {why}"),
            })?;
            out.push(json);
        }
        Ok(out)
    }

    /// `value` as JSON; `depth` is its own nesting level if it is a container (an item is 1),
    /// `path` where it is (left pointing at a refused value).
    fn value(&mut self, value: Value, depth: usize, path: &mut String) -> Result<Json, Refused> {
        self.charge(VALUE_BYTES)?;
        if value.is_none() {
            return Ok(Json::Null);
        }
        if let Some(b) = value.unpack_bool() {
            return Ok(Json::Bool(b));
        }
        if let Some(s) = value.unpack_str() {
            self.charge(s.len())?;
            return Ok(Json::String(s.to_owned()));
        }
        if value.get_type() == "int" {
            if let Ok(Some(i)) = i64::unpack_value(value) {
                return Ok(Json::Number(i.into()));
            }
            if let Ok(Some(u)) = u64::unpack_value(value) {
                return Ok(Json::Number(u.into()));
            }
            return Err(Refused::Bad(format!(
                "the integer {value} does not fit in 64 bits (Kubernetes integers are int64)"
            )));
        }
        if let Ok(Some(f)) = StarlarkFloat::unpack_value(value) {
            return Number::from_f64(f.0).map(Json::Number).ok_or_else(|| {
                Refused::Bad(format!("{value} is not a number YAML and JSON can hold"))
            });
        }
        if depth > MAX_ITEM_DEPTH {
            return Err(Refused::TooDeep);
        }
        let mark = path.len();
        if let Some(dict) = DictRef::from_value(value) {
            let mut out = Map::new();
            for (k, v) in dict.iter() {
                let Some(key) = k.unpack_str() else {
                    return Err(Refused::Bad(format!(
                        "the key {k} is {}, and keys must be strings",
                        kind(k)
                    )));
                };
                self.charge(key.len())?;
                path.truncate(mark);
                let _ = write!(path, "[{key:?}]");
                out.insert(key.to_owned(), self.value(v, depth + 1, path)?);
            }
            path.truncate(mark);
            return Ok(Json::Object(out));
        }
        if let Some(fields) = StructRef::from_value(value) {
            let mut out = Map::new();
            for (k, v) in fields.iter() {
                let key = k.as_str();
                self.charge(key.len())?;
                path.truncate(mark);
                let _ = write!(path, ".{key}");
                out.insert(key.to_owned(), self.value(v, depth + 1, path)?);
            }
            path.truncate(mark);
            return Ok(Json::Object(out));
        }
        let elements = if let Some(list) = ListRef::from_value(value) {
            list.content()
        } else if let Some(tuple) = TupleRef::from_value(value) {
            tuple.content()
        } else {
            return Err(Refused::Bad(format!(
                "{} cannot be written back (only dicts, lists, tuples, structs, strings, numbers, booleans and None)",
                kind(value)
            )));
        };
        let mut out = Vec::with_capacity(elements.len().min(1 << 16));
        for (i, v) in elements.iter().enumerate() {
            path.truncate(mark);
            let _ = write!(path, "[{i}]");
            out.push(self.value(*v, depth + 1, path)?);
        }
        path.truncate(mark);
        Ok(Json::Array(out))
    }

    fn charge(&mut self, bytes: usize) -> Result<(), Refused> {
        self.budget = self.budget.checked_sub(bytes).ok_or(Refused::TooBig)?;
        Ok(())
    }
}

/// Why a value was refused.
enum Refused {
    /// Nested past [`MAX_ITEM_DEPTH`].
    TooDeep,
    /// Past the byte budget.
    TooBig,
    /// Not a value YAML and krm-catalog keep exactly.
    Bad(String),
}

/// "a dict", "an int", … for messages.
fn kind(value: Value) -> String {
    let name = value.get_type();
    if name == "NoneType" {
        return "None".to_owned();
    }
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

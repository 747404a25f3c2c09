//! Sprig's list and dict helpers (see `sprig`).

use std::collections::{HashMap, HashSet};

use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Environment, Error};

use super::{ITEM, err, fits, fits_items, is_empty, to_string};

/// The items of a list (a string, a dict's keys are not lists: Sprig wants a list).
pub(super) fn items_of(list: &Value) -> Result<Vec<Value>, Error> {
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

pub(super) fn strings_of(list: &Value) -> Result<Vec<String>, Error> {
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
pub(super) fn pairs_of(dict: &Value) -> Result<Vec<(Value, Value)>, Error> {
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
pub(super) fn make_dict(pairs: Vec<(Value, Value)>) -> Result<Value, Error> {
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

pub(super) fn key_string(key: &Value) -> Result<String, Error> {
    key.as_str()
        .map_or_else(|| to_string(key), |s| Ok(s.to_owned()))
}

pub(super) fn register_collections(env: &mut Environment<'_>) {
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
pub(super) fn dict(args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
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
pub(super) fn dedup(pairs: Vec<(Value, Value)>) -> Vec<(Value, Value)> {
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

pub(super) fn lookup(d: &Value, key: &Value) -> Result<Option<Value>, Error> {
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
pub(super) fn get(d: &Value, key: &Value) -> Result<Value, Error> {
    Ok(lookup(d, key)?.unwrap_or_else(|| Value::from("")))
}

pub(super) fn has_key(d: &Value, key: &Value) -> Result<bool, Error> {
    Ok(lookup(d, key)?.is_some())
}

/// `set(d, "k", v)`: a new dict with `k` set (Sprig changes `d` in place).
pub(super) fn set(d: &Value, key: &Value, value: Value) -> Result<Value, Error> {
    let mut pairs = pairs_of(d)?;
    pairs.push((key.clone(), value));
    make_dict(dedup(pairs))
}

/// `unset(d, "k")`: a new dict without `k`.
pub(super) fn unset(d: &Value, key: &Value) -> Result<Value, Error> {
    let key = key_string(key)?;
    let mut pairs = pairs_of(d)?;
    pairs.retain(|(k, _)| k.as_str() != Some(key.as_str()));
    make_dict(pairs)
}

/// `keys(d, ...)`: the keys of every dict given, in order.
pub(super) fn keys(d: &Value, more: Rest<Value>) -> Result<Value, Error> {
    let mut out = Vec::new();
    for d in std::iter::once(d.clone()).chain(more.0) {
        let pairs = pairs_of(&d)?;
        fits_items(out.len() + pairs.len())?;
        out.extend(pairs.into_iter().map(|(k, _)| k));
    }
    Ok(Value::from(out))
}

pub(super) fn values(d: &Value) -> Result<Value, Error> {
    Ok(Value::from(
        pairs_of(d)?.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
    ))
}

/// `pick(d, "a", "b")` keeps, `omit(d, "a", "b")` drops these keys.
pub(super) fn select_keys(d: &Value, names: &[Value], keep: bool) -> Result<Value, Error> {
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
pub(super) fn merge_all(dst: &Value, srcs: &[Value], overwrite: bool) -> Result<Value, Error> {
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

pub(super) fn merge(dst: &Value, src: &Value, overwrite: bool) -> Result<Value, Error> {
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
pub(super) fn pluck(key: &Value, dicts: &[Value]) -> Result<Value, Error> {
    let mut out = Vec::new();
    for d in dicts {
        if let Some(v) = lookup(d, key)? {
            out.push(v);
        }
    }
    Ok(Value::from(out))
}

/// `dig("a", "b", default, d)`: `d.a.b`, or `default` when a key is missing.
pub(super) fn dig(mut args: Vec<Value>) -> Result<Value, Error> {
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

pub(super) fn uniq(list: &Value) -> Result<Value, Error> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for item in items_of(list)? {
        if seen.insert(item.clone()) {
            out.push(item);
        }
    }
    Ok(Value::from(out))
}

pub(super) fn has(list: &Value, needle: &Value) -> Result<bool, Error> {
    Ok(items_of(list)?.iter().any(|v| v == needle))
}

pub(super) fn without(list: &Value, drop: &[Value]) -> Result<Value, Error> {
    let mut items = items_of(list)?;
    items.retain(|v| !drop.contains(v));
    Ok(Value::from(items))
}

/// `compact(list)`: without its empty items.
pub(super) fn compact(list: &Value) -> Result<Value, Error> {
    let mut items = items_of(list)?;
    items.retain(|v| !is_empty(v));
    Ok(Value::from(items))
}

/// `concat(l1, l2, ...)`: one list, sized against the budget first.
pub(super) fn concat(lists: &[Value]) -> Result<Value, Error> {
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
pub(super) fn add(list: &Value, value: Value, front: bool) -> Result<Value, Error> {
    fits_items(list.len().unwrap_or(0).saturating_add(1))?;
    let mut items = items_of(list)?;
    if front {
        items.insert(0, value);
    } else {
        items.push(value);
    }
    Ok(Value::from(items))
}

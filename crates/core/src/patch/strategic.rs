//! Strategic-merge patches as kustomize (kyaml `merge2`, `ListIncreaseDirection: Prepend`)
//! applies them: maps merge key by key, `null` deletes a key, scalars and lists are replaced,
//! except the lists Kubernetes' built-in types mark `x-kubernetes-patch-strategy: merge`
//! ([`merge_keys`](super::merge_keys)), whose elements merge by their merge keys (the patch's
//! elements first, in its order, then the object's others) or, for lists of scalars, are
//! unioned. Kinds the table does not know (custom resources) get no list merging: JSON merge
//! patch (RFC 7386) with the `$patch` directives.
//!
//! Directives: `$patch: delete` (a map or list element goes; at the top, the whole object),
//! `$patch: replace` (the map or list is the patch's, not a merge), `$patch: merge`.
//! `$retainKeys`, `$setElementOrder/…` and `$deleteFromPrimitiveList/…` are apimachinery's, not
//! kustomize's (kyaml writes them into the object as fields): refused.

use serde_json::{Map, Value};

use super::merge_keys::{CLUSTER_SCOPED, Field, KINDS, TYPES, Type};

const DIRECTIVE: &str = "$patch";

/// What went wrong merging (the message; the caller names the patch).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrategicError {
    /// `$patch` with a value other than delete, replace, merge.
    #[error(
        "unknown patch strategy \"{value}\" at {at}: use `$patch: delete`, `replace` or `merge`"
    )]
    UnknownDirective { at: String, value: String },
    /// An apimachinery directive kustomize does not carry out.
    #[error(
        "\"{key}\" at {at} is not supported: kustomize does not carry it out (it would be written into the object); write the whole list with `$patch: replace` instead"
    )]
    Unsupported { at: String, key: String },
}

fn type_named(name: &str) -> Option<&'static Type> {
    TYPES
        .binary_search_by(|t| t.name.cmp(name))
        .ok()
        .and_then(|i| TYPES.get(i))
}

/// The built-in type of `apiVersion`/`kind` (exact version, as kustomize looks it up).
pub(super) fn type_of(api_version: &str, kind: &str) -> Option<&'static Type> {
    KINDS
        .binary_search_by(|(a, k, _)| (*a, *k).cmp(&(api_version, kind)))
        .ok()
        .and_then(|i| KINDS.get(i))
        .and_then(|(_, _, t)| type_named(t))
}

/// Whether a kind is a cluster-scoped built-in kind (kustomize's `IsClusterScoped`).
pub(super) fn is_cluster_scoped(api_version: &str, kind: &str) -> bool {
    CLUSTER_SCOPED
        .binary_search_by(|(a, k)| (*a, *k).cmp(&(api_version, kind)))
        .is_ok()
}

fn field_of(ty: Option<&'static Type>, name: &str) -> Option<&'static Field> {
    ty.and_then(|t| t.fields.iter().find(|f| f.name == name))
}

/// What merging a map or list produced.
enum Outcome {
    Keep,
    Delete,
}

/// Apply a strategic-merge patch to `object` (a whole Kubernetes object). `Ok(false)`: the patch
/// deletes the object (`$patch: delete` at its top).
///
/// # Errors
/// A directive that is unknown or not supported.
pub fn apply(object: &mut Value, patch: &Map<String, Value>) -> Result<bool, StrategicError> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let ty = type_of(&api_version, &kind);
    let Value::Object(map) = object else {
        *object = Value::Object(Map::new());
        return apply(object, patch);
    };
    match merge_map(map, patch, ty, "the patch")? {
        Outcome::Keep => Ok(true),
        Outcome::Delete => Ok(false),
    }
}

/// The `$patch` directive of a map, if any.
fn directive<'a>(
    patch: &'a Map<String, Value>,
    at: &str,
) -> Result<Option<&'a str>, StrategicError> {
    match patch.get(DIRECTIVE) {
        None => Ok(None),
        Some(Value::String(s)) if matches!(s.as_str(), "delete" | "replace" | "merge") => {
            Ok(Some(s.as_str()))
        }
        Some(other) => Err(StrategicError::UnknownDirective {
            at: at.to_owned(),
            value: match other {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            },
        }),
    }
}

fn check_keys(patch: &Map<String, Value>, at: &str) -> Result<(), StrategicError> {
    for key in patch.keys() {
        if key == "$retainKeys"
            || key.starts_with("$setElementOrder/")
            || key.starts_with("$deleteFromPrimitiveList/")
        {
            return Err(StrategicError::Unsupported {
                at: at.to_owned(),
                key: key.clone(),
            });
        }
    }
    Ok(())
}

fn child(at: &str, key: &str) -> String {
    if at == "the patch" {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

fn merge_map(
    dest: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    ty: Option<&'static Type>,
    at: &str,
) -> Result<Outcome, StrategicError> {
    check_keys(patch, at)?;
    match directive(patch, at)? {
        Some("delete") => return Ok(Outcome::Delete),
        Some("replace") => {
            let mut fresh = Map::new();
            let mut rest = patch.clone();
            rest.shift_remove(DIRECTIVE);
            merge_map(&mut fresh, &rest, ty, at)?;
            *dest = fresh;
            return Ok(Outcome::Keep);
        }
        _ => {}
    }
    for (key, value) in patch {
        if key == DIRECTIVE {
            continue;
        }
        let at = child(at, key);
        let field = field_of(ty, key);
        let sub = field.and_then(|f| f.of).and_then(type_named);
        match value {
            Value::Null => {
                dest.shift_remove(key);
            }
            Value::Object(p) => {
                let entry = dest
                    .entry(key.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if !entry.is_object() {
                    *entry = Value::Object(Map::new());
                }
                if let Value::Object(d) = entry
                    && let Outcome::Delete = merge_map(d, p, sub, &at)?
                {
                    dest.shift_remove(key);
                }
            }
            Value::Array(p) => {
                let keys = field.and_then(|f| f.merge);
                let mut list = match dest.get_mut(key) {
                    Some(Value::Array(d)) if keys.is_some() => std::mem::take(d),
                    _ => Vec::new(),
                };
                match merge_list(&mut list, p, keys, sub, &at)? {
                    Outcome::Keep => {
                        dest.insert(key.clone(), Value::Array(list));
                    }
                    Outcome::Delete => {
                        dest.shift_remove(key);
                    }
                }
            }
            scalar => {
                dest.insert(key.clone(), scalar.clone());
            }
        }
    }
    Ok(Outcome::Keep)
}

/// The list directive: an element that is a map holding only `$patch`.
fn list_directive<'a>(patch: &'a [Value], at: &str) -> Result<Option<&'a str>, StrategicError> {
    for element in patch {
        if let Value::Object(m) = element
            && m.len() == 1
            && m.contains_key(DIRECTIVE)
        {
            return directive(m, at);
        }
    }
    Ok(None)
}

fn is_list_directive(element: &Value) -> bool {
    matches!(element, Value::Object(m) if m.len() == 1 && m.contains_key(DIRECTIVE))
}

/// A patch element as it lands where there was nothing to merge it into (directives carried
/// out, nulls dropped). `None`: the element deletes itself.
fn fresh(
    element: &Value,
    ty: Option<&'static Type>,
    at: &str,
) -> Result<Option<Value>, StrategicError> {
    match element {
        Value::Object(p) => {
            let mut out = Map::new();
            match merge_map(&mut out, p, ty, at)? {
                Outcome::Keep => Ok(Some(Value::Object(out))),
                Outcome::Delete => Ok(None),
            }
        }
        other => Ok(Some(other.clone())),
    }
}

/// The merge-key values of a list element (a missing key or a non-map element: `None`).
fn identity(element: &Value, keys: &[&str]) -> Vec<Option<Value>> {
    keys.iter()
        .map(|k| element.get(*k).filter(|v| !v.is_null()).cloned())
        .collect()
}

/// kyaml's rule for several merge keys (`ports` by `containerPort` and `protocol`): two
/// elements are the same when they share a value and differ in none that both have.
fn same(a: &[Option<Value>], b: &[Option<Value>]) -> bool {
    let mut common = false;
    for (x, y) in a.iter().zip(b) {
        match (x, y) {
            (Some(x), Some(y)) if x == y => common = true,
            (Some(_), Some(_)) => return false,
            _ => {}
        }
    }
    common
}

fn merge_list(
    dest: &mut Vec<Value>,
    patch: &[Value],
    keys: Option<&'static [&'static str]>,
    ty: Option<&'static Type>,
    at: &str,
) -> Result<Outcome, StrategicError> {
    match list_directive(patch, at)? {
        Some("delete") => return Ok(Outcome::Delete),
        Some("replace") => {
            let mut out = Vec::new();
            for element in patch.iter().filter(|e| !is_list_directive(e)) {
                out.extend(fresh(element, ty, at)?);
            }
            *dest = out;
            return Ok(Outcome::Keep);
        }
        _ => {}
    }
    let patch: Vec<&Value> = patch.iter().filter(|e| !is_list_directive(e)).collect();
    let Some(keys) = keys else {
        // Not a merge list: the patch's list replaces the object's.
        let mut out = Vec::new();
        for element in patch {
            out.extend(fresh(element, ty, at)?);
        }
        *dest = out;
        return Ok(Outcome::Keep);
    };
    if keys.is_empty() {
        // A list of scalars (finalizers): the patch's values, then the object's others.
        let mut out: Vec<Value> = Vec::new();
        for v in patch.into_iter().chain(dest.iter()) {
            if !out.contains(v) {
                out.push(v.clone());
            }
        }
        *dest = out;
        return Ok(Outcome::Keep);
    }
    let mut rest: Vec<Option<Value>> = std::mem::take(dest).into_iter().map(Some).collect();
    // Where each element of the result comes from, in kyaml's order: the patch's elements
    // first, in its order, then the object's others.
    let mut order: Vec<Slot> = Vec::new();
    for element in patch {
        let id = identity(element, keys);
        let found = if id.iter().all(Option::is_none) {
            // No merge key to find it by: kyaml appends it as it is.
            None
        } else {
            rest.iter()
                .position(|d| d.as_ref().is_some_and(|d| same(&identity(d, keys), &id)))
        };
        let (Some(i), Value::Object(p)) = (found, element) else {
            order.extend(fresh(element, ty, at)?.map(Slot::New));
            continue;
        };
        let Some(Value::Object(m)) = rest.get_mut(i).and_then(Option::as_mut) else {
            order.extend(fresh(element, ty, at)?.map(Slot::New));
            continue;
        };
        // kyaml drops an element deleted or merged down to nothing.
        if matches!(merge_map(m, p, ty, at)?, Outcome::Delete) || m.is_empty() {
            if let Some(slot) = rest.get_mut(i) {
                *slot = None;
            }
            continue;
        }
        for (k, v) in keys.iter().zip(&id) {
            if let Some(v) = v
                && !m.contains_key(*k)
            {
                m.insert((*k).to_owned(), v.clone());
            }
        }
        order.push(Slot::Old(i));
    }
    for (i, d) in rest.iter().enumerate() {
        if d.is_some() && !order.iter().any(|s| matches!(s, Slot::Old(j) if *j == i)) {
            order.push(Slot::Old(i));
        }
    }
    if keys.len() > 1 {
        // kyaml (`appendListNode` with several keys) takes each of the object's elements out
        // and appends it again: the patch's new elements come first, then the object's, in
        // the object's order.
        let (mut new, mut old): (Vec<Slot>, Vec<Slot>) =
            order.into_iter().partition(|s| matches!(s, Slot::New(_)));
        old.sort_by_key(|s| match s {
            Slot::Old(i) => *i,
            Slot::New(_) => usize::MAX,
        });
        new.extend(old);
        order = new;
    }
    *dest = order
        .into_iter()
        .filter_map(|s| match s {
            Slot::New(v) => Some(v),
            Slot::Old(i) => rest.get_mut(i).and_then(Option::take),
        })
        .collect();
    Ok(Outcome::Keep)
}

/// An element of a merged list: a patch element new to the list, or the object's `i`th.
enum Slot {
    New(Value),
    Old(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patched(object: Value, patch: Value) -> Option<Value> {
        let mut object = object;
        let Value::Object(p) = patch else {
            panic!("patch must be a map")
        };
        apply(&mut object, &p).unwrap().then_some(object)
    }

    #[allow(clippy::needless_pass_by_value)]
    fn deployment(containers: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"template": {"spec": {"containers": containers}}}})
    }

    #[test]
    fn the_table_is_sorted_and_closed() {
        assert!(TYPES.windows(2).all(|w| w[0].name < w[1].name));
        assert!(
            KINDS
                .windows(2)
                .all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1))
        );
        assert!(CLUSTER_SCOPED.windows(2).all(|w| w[0] < w[1]));
        for t in TYPES {
            for f in t.fields {
                if let Some(of) = f.of {
                    assert!(type_named(of).is_some(), "{}.{} names {of}", t.name, f.name);
                }
            }
        }
        for (a, k, t) in KINDS {
            assert!(type_named(t).is_some(), "{a} {k}");
        }
        assert!(is_cluster_scoped("v1", "Namespace"));
        assert!(!is_cluster_scoped("v1", "ConfigMap"));
    }

    #[test]
    fn containers_merge_by_name_patch_order_first() {
        let out = patched(
            deployment(json!([{"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]}, {"name": "b", "image": "b:1"}])),
            deployment(json!([{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}, {"name": "a", "env": [{"name": "Z", "value": "3"}, {"name": "X", "value": "9"}]}])),
        )
        .unwrap();
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"},
                   {"name": "a", "image": "a:1", "env": [{"name": "Z", "value": "3"}, {"name": "X", "value": "9"}, {"name": "Y", "value": "2"}]}])
        );
    }

    #[test]
    fn directives_and_nulls() {
        let base =
            deployment(json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]));
        // An element deleted, a key deleted by null.
        let out = patched(
            base.clone(),
            json!({"metadata": {"name": "web"}, "spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "delete"}, {"name": "b", "image": null}]}}}}),
        )
        .unwrap();
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "b"}])
        );
        // A list replaced.
        let out = patched(
            base.clone(),
            json!({"spec": {"template": {"spec": {"containers": [{"$patch": "replace"}, {"name": "z", "image": "z"}]}}}}),
        )
        .unwrap();
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "z", "image": "z"}])
        );
        // A map replaced, then the whole object deleted.
        let out = patched(
            base.clone(),
            json!({"spec": {"$patch": "replace", "replicas": 2}}),
        )
        .unwrap();
        assert_eq!(out["spec"], json!({"replicas": 2}));
        assert_eq!(patched(base.clone(), json!({"$patch": "delete"})), None);
        let Value::Object(p) = json!({"spec": {"$patch": "remove"}}) else {
            unreachable!()
        };
        let err = apply(&mut base.clone(), &p).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown patch strategy \"remove\" at spec: use `$patch: delete`, `replace` or `merge`"
        );
        let Value::Object(p) = json!({"spec": {"$setElementOrder/containers": []}}) else {
            unreachable!()
        };
        assert!(
            apply(&mut base.clone(), &p)
                .unwrap_err()
                .to_string()
                .starts_with("\"$setElementOrder/containers\" at spec is not supported")
        );
    }

    #[test]
    fn unknown_kinds_get_merge_patch_semantics() {
        let object = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                            "spec": {"items": [{"name": "a", "v": 1}], "keep": true, "drop": 1}});
        let out = patched(
            object,
            json!({"spec": {"items": [{"name": "b"}], "drop": null, "new": {"x": null, "y": 1}}}),
        )
        .unwrap();
        assert_eq!(
            out["spec"],
            json!({"items": [{"name": "b"}], "keep": true, "new": {"y": 1}})
        );
    }

    #[test]
    fn ports_merge_by_port_and_protocol_and_finalizers_union() {
        let object = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "finalizers": ["a", "b"]},
                            "spec": {"ports": [{"port": 80, "protocol": "TCP", "name": "http"}, {"port": 53, "protocol": "UDP"}]}});
        let out = patched(object, json!({"metadata": {"finalizers": ["c", "a"]}, "spec": {"ports": [{"port": 80, "name": "web"}, {"port": 53, "protocol": "TCP"}]}})).unwrap();
        assert_eq!(out["metadata"]["finalizers"], json!(["c", "a", "b"]));
        assert_eq!(
            out["spec"]["ports"],
            json!([{"port": 53, "protocol": "TCP"}, {"port": 80, "protocol": "TCP", "name": "web"}, {"port": 53, "protocol": "UDP"}])
        );
    }
}

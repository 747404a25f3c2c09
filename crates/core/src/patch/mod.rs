//! Patches on generated output (SPEC §6.6): kustomize's `patches:` entries, written on a
//! service object (`spec.patches`), a `ServiceSet` entry (`spec.services.<id>.patches`) or a
//! `ServiceDefinition` (`spec.patches`, applied first), and applied to that service's generated
//! objects after templating.
//!
//! An entry is `{target, patch, options}` as in a kustomization: `patch` holds a strategic-merge
//! patch (a YAML map, [`strategic`]) or a JSON 6902 patch (a YAML or JSON list of operations,
//! [`json6902`]); `target` selects objects ([`target`]). A strategic-merge patch without
//! `target` picks the object with its own apiVersion, kind and `metadata.name` (and
//! `metadata.namespace` when it has one). `path:` (a patch file) is refused: a catalog and a
//! package are read without file access, so the patch is written inline.
//!
//! Unlike kustomize, a patch that matches nothing is an error: in a catalog's output a typo in a
//! target would otherwise pass unseen.

mod json6902;
mod merge_keys;
mod strategic;
mod target;

use serde_json::{Map, Value};

use crate::diagnostics::FieldPath;
use crate::strict::Problem;
use crate::suggest;

pub use json6902::Op;
pub use strategic::StrategicError;
pub use target::{Candidate, FIELDS as TARGET_FIELDS, LabelSelector, Selector};

/// The most patches one service takes from one place.
pub const MAX_PATCHES: usize = 100;
/// The longest patch text read.
pub const MAX_PATCH_BYTES: usize = 256 * 1024;
/// The most operations one JSON patch holds.
pub const MAX_OPS: usize = 1000;

const ENTRY_FIELDS: [&str; 4] = ["target", "patch", "path", "options"];
const OPTION_FIELDS: [&str; 2] = ["allowNameChange", "allowKindChange"];

/// What a patch does.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// A strategic-merge patch.
    Strategic(Map<String, Value>),
    /// A JSON 6902 patch.
    Json6902(Vec<Op>),
}

/// One entry of `patches:`.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    /// Where it was written, relative to its document (`spec.patches[0]`).
    pub at: FieldPath,
    pub target: Option<Selector>,
    pub body: Body,
    /// kustomize's `options.allowNameChange`: a strategic-merge patch may rename the object.
    pub allow_name_change: bool,
    /// kustomize's `options.allowKindChange`.
    pub allow_kind_change: bool,
}

/// Why a patch did not apply. `at` is where the patch was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// No generated object matched.
    #[error(
        "{what} matches none of the objects service \"{service}\" generated ({generated}){hint}"
    )]
    NoMatch {
        /// Boxed: the largest variant otherwise.
        at: Box<FieldPath>,
        what: String,
        service: String,
        generated: String,
        hint: String,
    },
    /// A strategic-merge patch without target matched several objects.
    #[error(
        "{what} matches {count} objects of service \"{service}\"; add metadata.namespace to the patch or give it a target"
    )]
    Ambiguous {
        at: FieldPath,
        what: String,
        service: String,
        count: usize,
    },
    /// A JSON patch operation failed.
    #[error("op {index} ({op}) failed on {object}: {reason}")]
    Op {
        at: FieldPath,
        index: usize,
        op: String,
        object: String,
        reason: String,
    },
    /// A strategic-merge patch could not be carried out.
    #[error("cannot apply to {object}: {error}")]
    Strategic {
        at: FieldPath,
        object: String,
        error: StrategicError,
    },
    /// The result is not a Kubernetes object any more.
    #[error("leaves {object} without {what}")]
    Broken {
        at: FieldPath,
        object: String,
        what: &'static str,
    },
}

impl PatchError {
    /// Where the patch was written.
    pub fn at(&self) -> &FieldPath {
        match self {
            Self::NoMatch { at, .. } => at,
            Self::Ambiguous { at, .. }
            | Self::Op { at, .. }
            | Self::Strategic { at, .. }
            | Self::Broken { at, .. } => at,
        }
    }
}

fn read_bool(
    map: &Map<String, Value>,
    key: &str,
    at: &FieldPath,
    problems: &mut Vec<Problem>,
) -> bool {
    match map.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            problems.push(Problem::new(
                at.key(key),
                format!(
                    "must be true or false, not {}",
                    crate::strict::type_name(other)
                ),
            ));
            false
        }
    }
}

/// Read a `patches` list at `base` (`spec.patches`, `spec.services.web.patches`).
///
/// # Errors
/// Every problem found, each at its field.
pub fn parse_list(value: &Value, base: &FieldPath) -> Result<Vec<Patch>, Vec<Problem>> {
    let list = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(list) => list,
        other => {
            return Err(vec![Problem::new(
                base,
                format!(
                    "must be a list of patches (each with patch and an optional target), not {}",
                    crate::strict::type_name(other)
                ),
            )]);
        }
    };
    if list.len() > MAX_PATCHES {
        return Err(vec![Problem::new(
            base,
            format!("has {} patches; at most {MAX_PATCHES} are read", list.len()),
        )]);
    }
    let mut problems = Vec::new();
    let mut patches = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        match parse_one(entry, &base.index(i)) {
            Ok(p) => patches.push(p),
            Err(p) => problems.extend(p),
        }
    }
    if problems.is_empty() {
        Ok(patches)
    } else {
        Err(problems)
    }
}

fn parse_one(entry: &Value, at: &FieldPath) -> Result<Patch, Vec<Problem>> {
    let Value::Object(map) = entry else {
        return Err(vec![Problem::new(
            at,
            format!(
                "must be a map with patch and an optional target, not {}",
                crate::strict::type_name(entry)
            ),
        )]);
    };
    let mut problems = Vec::new();
    for key in map.keys() {
        if !ENTRY_FIELDS.contains(&key.as_str()) {
            let hint = suggest::hint(key, ENTRY_FIELDS);
            problems.push(Problem::new(
                at.key(key),
                format!("unknown field \"{key}\" in a patch{hint}; a patch has target, patch and options"),
            ));
        }
    }
    if map.contains_key("path") {
        problems.push(Problem::new(
            at.key("path"),
            "patch files are not read (a catalog or package is rendered without file access): write the patch inline under `patch:` as a string (`patch: |` and the YAML below it)",
        ));
    }
    let target = match map.get("target") {
        None | Some(Value::Null) => None,
        Some(t) => match Selector::parse(t, &at.key("target")) {
            Ok(s) => Some(s),
            Err(p) => {
                problems.extend(p);
                None
            }
        },
    };
    let (mut allow_name_change, mut allow_kind_change) = (false, false);
    match map.get("options") {
        None | Some(Value::Null) => {}
        Some(Value::Object(options)) => {
            let at = at.key("options");
            for key in options.keys() {
                if !OPTION_FIELDS.contains(&key.as_str()) {
                    let hint = suggest::hint(key, OPTION_FIELDS);
                    problems.push(Problem::new(at.key(key), format!("unknown option \"{key}\"{hint}; the options are allowNameChange and allowKindChange")));
                }
            }
            allow_name_change = read_bool(options, "allowNameChange", &at, &mut problems);
            allow_kind_change = read_bool(options, "allowKindChange", &at, &mut problems);
        }
        Some(other) => problems.push(Problem::new(
            at.key("options"),
            format!("must be a map, not {}", crate::strict::type_name(other)),
        )),
    }
    let body = match map.get("patch") {
        Some(Value::String(text)) => parse_body(
            text,
            &at.key("patch"),
            !matches!(map.get("target"), None | Some(Value::Null)),
        ),
        // A patch written as YAML rather than a string holding YAML: take it as it is.
        Some(value @ (Value::Object(_) | Value::Array(_))) => {
            body_of(value.clone(), &at.key("patch"), target.is_some())
        }
        Some(other) => Err(vec![Problem::new(
            at.key("patch"),
            format!(
                "must be the patch text (a string, `patch: |` and the patch below it), not {}",
                crate::strict::type_name(other)
            ),
        )]),
        None if map.contains_key("path") => Err(Vec::new()),
        None => Err(vec![Problem::new(
            at.key("patch"),
            "missing patch: a strategic-merge patch (a YAML map) or a JSON 6902 patch (a list of operations), as a string",
        )]),
    };
    let body = match body {
        Ok(b) => Some(b),
        Err(p) => {
            problems.extend(p);
            None
        }
    };
    match body {
        Some(body) if problems.is_empty() => Ok(Patch {
            at: at.clone(),
            target,
            body,
            allow_name_change,
            allow_kind_change,
        }),
        _ => Err(problems),
    }
}

fn parse_body(text: &str, at: &FieldPath, targeted: bool) -> Result<Body, Vec<Problem>> {
    if text.len() > MAX_PATCH_BYTES {
        return Err(vec![Problem::new(
            at,
            format!(
                "is {} bytes long; at most {MAX_PATCH_BYTES} are read",
                text.len()
            ),
        )]);
    }
    if text.trim().is_empty() {
        return Err(vec![Problem::new(
            at,
            "is empty: write a strategic-merge patch (a YAML map) or a JSON 6902 patch (a list of operations)",
        )]);
    }
    let documents = crate::yaml::parse_stream(text).map_err(|e| {
        vec![Problem::new(
            at,
            format!("is neither a strategic-merge patch nor a JSON 6902 patch: {e}"),
        )]
    })?;
    let mut values: Vec<Value> = documents
        .into_iter()
        .map(|d| d.value)
        .filter(|v| !v.is_null())
        .collect();
    if values.len() > 1 {
        return Err(vec![Problem::new(
            at,
            format!(
                "holds {} YAML documents; write one patches entry per document",
                values.len()
            ),
        )]);
    }
    match values.pop() {
        Some(value) => body_of(value, at, targeted),
        None => Err(vec![Problem::new(
            at,
            "is empty: write a strategic-merge patch (a YAML map) or a JSON 6902 patch (a list of operations)",
        )]),
    }
}

fn body_of(value: Value, at: &FieldPath, targeted: bool) -> Result<Body, Vec<Problem>> {
    match value {
        Value::Object(map) => {
            if !targeted {
                let name = map
                    .get("metadata")
                    .and_then(|m| m.get("name"))
                    .and_then(Value::as_str);
                let kind = map.get("kind").and_then(Value::as_str);
                let api = map.get("apiVersion").and_then(Value::as_str);
                if name.is_none_or(str::is_empty)
                    || kind.is_none_or(str::is_empty)
                    || api.is_none_or(str::is_empty)
                {
                    return Err(vec![Problem::new(
                        at,
                        "a strategic-merge patch without target must name its object: give it apiVersion, kind and metadata.name, or add a target",
                    )]);
                }
            }
            Ok(Body::Strategic(map))
        }
        Value::Array(list) => {
            if !targeted {
                return Err(vec![Problem::new(
                    at.parent_key("target"),
                    "a JSON 6902 patch needs a target (kind and name of the objects it applies to)",
                )]);
            }
            if list.len() > MAX_OPS {
                return Err(vec![Problem::new(
                    at,
                    format!("has {} operations; at most {MAX_OPS} are read", list.len()),
                )]);
            }
            json6902::parse(&list, at).map(Body::Json6902)
        }
        other => Err(vec![Problem::new(
            at,
            format!(
                "is neither a strategic-merge patch (a map) nor a JSON 6902 patch (a list of operations): it is {}",
                crate::strict::type_name(&other)
            ),
        )]),
    }
}

trait ParentKey {
    fn parent_key(&self, key: &str) -> FieldPath;
}

impl ParentKey for FieldPath {
    /// The sibling field `key` of this one.
    fn parent_key(&self, key: &str) -> FieldPath {
        let mut p = self.clone();
        p.pop();
        p.key(key)
    }
}

fn str_at<'a>(object: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(object, |v, k| v.get(*k))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `Kind/name` or `Kind/namespace/name`, for messages.
fn describe(object: &Value) -> String {
    let kind = str_at(object, &["kind"]);
    let name = str_at(object, &["metadata", "name"]);
    match str_at(object, &["metadata", "namespace"]) {
        "" => format!("{kind}/{name}"),
        ns => format!("{kind}/{ns}/{name}"),
    }
}

/// kustomize's effective namespace of an object.
fn effective_namespace(object: &Value) -> &str {
    let (api, kind) = (str_at(object, &["apiVersion"]), str_at(object, &["kind"]));
    if strategic::is_cluster_scoped(api, kind) {
        return "_non_namespaceable_";
    }
    match str_at(object, &["metadata", "namespace"]) {
        "" => "default",
        ns => ns,
    }
}

fn candidate(object: &Value) -> Candidate<'_> {
    let (group, version) = crate::gvk::split_api_version(str_at(object, &["apiVersion"]));
    let meta = object.get("metadata");
    Candidate {
        group,
        version,
        kind: str_at(object, &["kind"]),
        name: str_at(object, &["metadata", "name"]),
        namespace: effective_namespace(object),
        labels: meta
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object),
        annotations: meta
            .and_then(|m| m.get("annotations"))
            .and_then(Value::as_object),
    }
}

/// The objects a patch applies to (indexes into `objects`). `original` holds each object's
/// name and namespace before any patch: a target matches either, as kustomize's `Select`
/// matches the original and the current id.
fn select(
    patch: &Patch,
    objects: &[&Value],
    original: &[(String, String)],
    service: &str,
) -> Result<Vec<usize>, PatchError> {
    let (picked, what): (Vec<usize>, String) = match (&patch.target, &patch.body) {
        (Some(target), _) => (
            (0..objects.len())
                .filter(|&i| {
                    objects.get(i).is_some_and(|o| {
                        let current = candidate(o);
                        target.matches(&current)
                            || original.get(i).is_some_and(|(name, namespace)| {
                                target.matches(&Candidate {
                                    name,
                                    namespace,
                                    ..candidate(o)
                                })
                            })
                    })
                })
                .collect(),
            format!("its target {target}"),
        ),
        (None, Body::Strategic(p)) => {
            let own = Value::Object(p.clone());
            let (api, kind, name) = (
                str_at(&own, &["apiVersion"]),
                str_at(&own, &["kind"]),
                str_at(&own, &["metadata", "name"]),
            );
            let namespace = str_at(&own, &["metadata", "namespace"]);
            let picked: Vec<usize> = (0..objects.len())
                .filter(|&i| {
                    objects.get(i).is_some_and(|o| {
                        str_at(o, &["apiVersion"]) == api
                            && str_at(o, &["kind"]) == kind
                            && str_at(o, &["metadata", "name"]) == name
                            && (namespace.is_empty() || effective_namespace(o) == namespace)
                    })
                })
                .collect();
            let what = if namespace.is_empty() {
                format!("the patch (apiVersion: {api}, kind: {kind}, name: {name})")
            } else {
                format!(
                    "the patch (apiVersion: {api}, kind: {kind}, namespace: {namespace}, name: {name})"
                )
            };
            if picked.len() > 1 {
                return Err(PatchError::Ambiguous {
                    at: patch.at.clone(),
                    what,
                    service: service.to_owned(),
                    count: picked.len(),
                });
            }
            (picked, what)
        }
        // parse_one refuses a JSON patch without target.
        (None, Body::Json6902(_)) => (Vec::new(), "the patch".to_owned()),
    };
    if picked.is_empty() {
        let mut generated: Vec<String> = objects.iter().take(10).map(|o| describe(o)).collect();
        if objects.len() > 10 {
            generated.push(format!("and {} more", objects.len() - 10));
        }
        let names: Vec<&str> = objects
            .iter()
            .map(|o| str_at(o, &["metadata", "name"]))
            .collect();
        let wanted = match (&patch.target, &patch.body) {
            (None, Body::Strategic(p)) => Value::Object(p.clone())
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .map(str::to_owned),
            _ => None,
        };
        let hint = wanted
            .map(|w| suggest::hint(&w, names.iter().copied()))
            .unwrap_or_default();
        return Err(PatchError::NoMatch {
            at: Box::new(patch.at.clone()),
            what,
            service: service.to_owned(),
            generated: if generated.is_empty() {
                "none".to_owned()
            } else {
                generated.join(", ")
            },
            hint,
        });
    }
    Ok(picked)
}

fn apply_strategic(
    patch: &Patch,
    p: &Map<String, Value>,
    object: &mut Value,
) -> Result<bool, PatchError> {
    let before = describe(object);
    let keep = |o: &Value, path: &[&str]| o.pointer(&format!("/{}", path.join("/"))).cloned();
    let (api, kind, name, namespace) = (
        keep(object, &["apiVersion"]),
        keep(object, &["kind"]),
        keep(object, &["metadata", "name"]),
        keep(object, &["metadata", "namespace"]),
    );
    let kept = strategic::apply(object, p).map_err(|error| PatchError::Strategic {
        at: patch.at.clone(),
        object: before.clone(),
        error,
    })?;
    if !kept {
        return Ok(false);
    }
    // kustomize (resource.ApplySmPatch): the object keeps its apiVersion and namespace, and its
    // kind and name unless the options allow a change.
    let Value::Object(map) = object else {
        return Ok(true);
    };
    let mut restore = |key: &str, value: Option<Value>| match value {
        Some(v) => {
            map.insert(key.to_owned(), v);
        }
        None => {
            map.shift_remove(key);
        }
    };
    restore("apiVersion", api);
    if !patch.allow_kind_change {
        restore("kind", kind);
    }
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        if !patch.allow_name_change
            && let Some(name) = name
        {
            meta.insert("name".into(), name);
        }
        match namespace {
            Some(ns) => {
                meta.insert("namespace".into(), ns);
            }
            None => {
                meta.shift_remove("namespace");
            }
        }
    }
    Ok(true)
}

/// Apply `patches` in order to `objects`, the objects service `service` generated. A
/// strategic-merge patch may delete an object (`$patch: delete` at its top).
///
/// # Errors
/// The first patch that matches nothing or does not apply; `objects` is then partly patched
/// and must not be used.
pub fn apply(patches: &[Patch], objects: &mut Vec<Value>, service: &str) -> Result<(), PatchError> {
    apply_to(patches, objects, |o| o, |o| o, service)
}

/// [`apply`] on items that carry an object (`value`, `value_mut` reach it), so that what the
/// caller keeps beside each object stays with it when a patch deletes one.
///
/// # Errors
/// As [`apply`].
pub fn apply_to<T>(
    patches: &[Patch],
    items: &mut Vec<T>,
    value: impl Fn(&T) -> &Value,
    value_mut: impl Fn(&mut T) -> &mut Value,
    service: &str,
) -> Result<(), PatchError> {
    if patches.is_empty() {
        return Ok(());
    }
    let mut original: Vec<(String, String)> = items
        .iter()
        .map(|item| {
            let o = value(item);
            (
                str_at(o, &["metadata", "name"]).to_owned(),
                effective_namespace(o).to_owned(),
            )
        })
        .collect();
    for patch in patches {
        let objects: Vec<&Value> = items.iter().map(&value).collect();
        let picked = select(patch, &objects, &original, service)?;
        let mut deleted = Vec::new();
        for i in picked {
            let Some(object) = items.get_mut(i).map(&value_mut) else {
                continue;
            };
            match &patch.body {
                Body::Strategic(p) => {
                    if !apply_strategic(patch, p, object)? {
                        deleted.push(i);
                        continue;
                    }
                }
                Body::Json6902(ops) => {
                    let name = describe(object);
                    for (index, op) in ops.iter().enumerate() {
                        op.apply(object).map_err(|reason| PatchError::Op {
                            at: patch.at.key("patch"),
                            index,
                            op: op.to_string(),
                            object: name.clone(),
                            reason,
                        })?;
                    }
                }
            }
            check_object(patch, object)?;
        }
        for i in deleted.into_iter().rev() {
            items.remove(i);
            original.remove(i);
        }
    }
    Ok(())
}

/// A patched object must still be a Kubernetes object with apiVersion, kind and a name.
fn check_object(patch: &Patch, object: &Value) -> Result<(), PatchError> {
    let object_name = describe(object);
    let missing = if !object.is_object() {
        Some("being a map")
    } else if str_at(object, &["apiVersion"]).is_empty() {
        Some("apiVersion")
    } else if str_at(object, &["kind"]).is_empty() {
        Some("kind")
    } else if str_at(object, &["metadata", "name"]).is_empty() {
        Some("metadata.name")
    } else {
        None
    };
    match missing {
        Some(what) => Err(PatchError::Broken {
            at: patch.at.clone(),
            object: object_name,
            what,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;

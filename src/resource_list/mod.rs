//! The KRM wire format: reading a `ResourceList` from stdin and writing one to stdout, plus the
//! annotations orchestrators use to map items back to files.
//!
//! Items stay `serde_json::Value` from input to output: kpt and kustomize restore comments and
//! key order by the `internal.config.kubernetes.io/id` annotation, and any typed round trip
//! would reorder or drop fields they do not know. In function mode an item the run leaves alone
//! is not even parsed whole: it is a [`Skeleton`] plus its range in the input text, copied to
//! the output as it came (see [`read_owned`], [`Verbatim`]).

use std::fmt;

use serde_json::{Map, Value};

mod item;
mod order;
mod read;
mod round_trip;
mod stream;
mod verbatim;
mod write;

pub use item::{AsValue, Fields, Item, Skeleton};
pub use order::sort_like_kustomize;
pub use read::{read, read_owned, read_owned_keeping};
pub use round_trip::check_round_trip;
pub use verbatim::{Span, Verbatim};
pub use write::{write, write_pieces};

/// The API version we write.
pub const API_VERSION: &str = "config.kubernetes.io/v1";
/// Relative file path of an item (kpt/kustomize set it; we set it on generated items).
pub const PATH: &str = "internal.config.kubernetes.io/path";
/// Document index of an item within its file.
pub const INDEX: &str = "internal.config.kubernetes.io/index";
/// Legacy twin of [`PATH`], still read by orchestrators.
pub const LEGACY_PATH: &str = "config.kubernetes.io/path";
/// Legacy twin of [`INDEX`].
pub const LEGACY_INDEX: &str = "config.kubernetes.io/index";
/// Marks objects that are never applied to a cluster.
pub const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";
/// A function runtime on a resource (kustomize/kpt): such items belong to the orchestrator.
pub const FUNCTION: &str = "config.kubernetes.io/function";
/// Legacy spellings of [`FUNCTION`] that kyaml still parses.
pub const LEGACY_FUNCTIONS: &[&str] = &["config.k8s.io/function", "config.kubernetes.io/container"];
/// Annotations orchestrators own; standalone output strips them as kustomize does.
pub const ORCHESTRATOR_ANNOTATIONS: &[&str] = &[
    PATH,
    INDEX,
    LEGACY_PATH,
    LEGACY_INDEX,
    "internal.config.kubernetes.io/id",
    "config.k8s.io/id",
    "internal.config.kubernetes.io/seqindent",
    "internal.config.kubernetes.io/annotations-migration-resource-id",
    "internal.config.kubernetes.io/package-path",
    "kustomize.config.k8s.io/id",
];

/// The input is not something we can answer with a ResourceList.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError(pub String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

/// `file` of a result: where an item lives.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileRef {
    /// Slash-separated path relative to the package.
    pub path: String,
    /// Document index within the file.
    pub index: u64,
}

/// A ResourceList: items, the function config, and (on output) results. Items are whole
/// values ([`read`]) or, in function mode, [`Item`]s that may be skeletons ([`read_owned`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceList<I = Value> {
    /// The resources.
    pub items: Vec<I>,
    /// The function config, if any.
    pub function_config: Option<Value>,
    /// The input text of the items, so items nobody changed are written back byte for byte.
    pub verbatim: Option<Verbatim>,
}

impl<I> Default for ResourceList<I> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            function_config: None,
            verbatim: None,
        }
    }
}

impl From<ResourceList> for ResourceList<Item> {
    fn from(list: ResourceList) -> Self {
        Self {
            items: list.items.into_iter().map(Item::from).collect(),
            function_config: list.function_config,
            verbatim: list.verbatim,
        }
    }
}

/// The string at a path of object keys, or "".
pub fn str_at<'a, T: Fields + ?Sized>(item: &'a T, path: &[&str]) -> &'a str {
    item.str_at(path)
}

/// An annotation value.
pub fn annotation<'a, T: Fields + ?Sized>(item: &'a T, key: &str) -> Option<&'a str> {
    item.annotation(key)
}

/// Set an annotation, creating `metadata.annotations` as needed (appended at the end).
pub fn set_annotation(item: &mut Value, key: &str, value: &str) {
    set_in_metadata_map(item, "annotations", &[(key, value)]);
}

/// Set annotations in this order, with one lookup of `metadata.annotations` for all of them.
pub fn set_annotations(item: &mut Value, entries: &[(&str, &str)]) {
    set_in_metadata_map(item, "annotations", entries);
}

/// Set a label, creating `metadata.labels` as needed.
pub fn set_label(item: &mut Value, key: &str, value: &str) {
    set_in_metadata_map(item, "labels", &[(key, value)]);
}

fn set_in_metadata_map(item: &mut Value, map_key: &str, entries: &[(&str, &str)]) {
    let Value::Object(obj) = item else { return };
    let Some(map) = object_at(obj, "metadata").and_then(|metadata| object_at(metadata, map_key))
    else {
        return;
    };
    for (key, value) in entries {
        map.insert((*key).to_owned(), Value::String((*value).to_owned()));
    }
}

/// The object under `key`, put there (in place of anything else, keeping its position) when
/// there is none. Looked up before it is inserted: an entry would allocate the key each time,
/// and every generated object has its metadata maps already.
fn object_at<'a>(obj: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    if !obj.get(key).is_some_and(Value::is_object) {
        obj.insert(key.to_owned(), Value::Object(Map::new()));
    }
    obj.get_mut(key).and_then(Value::as_object_mut)
}

/// Remove annotations, dropping `metadata.annotations` when it becomes empty.
pub fn remove_annotations(item: &mut Value, keys: &[&str]) {
    let Some(Value::Object(metadata)) = item.get_mut("metadata") else {
        return;
    };
    let Some(Value::Object(annotations)) = metadata.get_mut("annotations") else {
        return;
    };
    for key in keys {
        annotations.shift_remove(*key);
    }
    if annotations.is_empty() {
        metadata.shift_remove("annotations");
    }
}

/// Where an item lives, from `internal.config.kubernetes.io/path|index` (or legacy twins).
pub fn file_of<T: Fields + ?Sized>(item: &T) -> Option<FileRef> {
    let path = annotation(item, PATH).or_else(|| annotation(item, LEGACY_PATH))?;
    let index = annotation(item, INDEX)
        .or_else(|| annotation(item, LEGACY_INDEX))
        .and_then(|i| i.parse().ok())
        .unwrap_or(0);
    Some(FileRef {
        path: path.to_owned(),
        index,
    })
}

/// Whether an item carries an explicit function runtime.
pub fn has_function_annotation<T: Fields + ?Sized>(item: &T) -> bool {
    annotation(item, FUNCTION).is_some()
        || LEGACY_FUNCTIONS
            .iter()
            .any(|k| annotation(item, k).is_some())
        || item.has_config_fn()
}

/// Whether an item is marked local-config.
pub fn is_local_config<T: Fields + ?Sized>(item: &T) -> bool {
    annotation(item, LOCAL_CONFIG).is_some_and(|v| v == "true")
}

/// `apiVersion/kind[/namespace]/name`: how sources and results name an object.
pub fn identity<T: Fields + ?Sized>(item: &T) -> String {
    let mut out = String::new();
    identity_into(item, &mut out);
    out
}

/// [`identity`], appended to `out` (a buffer reused across items).
pub fn identity_into<T: Fields + ?Sized>(item: &T, out: &mut String) {
    for (i, part) in identity_parts(item).enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(part);
    }
}

/// Whether [`identity`] of `item` is `id`, without building the string (asked of every item
/// of a large input).
pub fn has_identity<T: Fields + ?Sized>(item: &T, id: &str) -> bool {
    let mut rest = id;
    for (i, part) in identity_parts(item).enumerate() {
        let after_slash = if i == 0 {
            Some(rest)
        } else {
            rest.strip_prefix('/')
        };
        match after_slash.and_then(|r| r.strip_prefix(part)) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// The parts [`identity`] joins with `/`: apiVersion, kind, the namespace unless empty, name.
fn identity_parts<T: Fields + ?Sized>(item: &T) -> impl Iterator<Item = &str> {
    let ns = str_at(item, &["metadata", "namespace"]);
    [
        Some(str_at(item, &["apiVersion"])),
        Some(str_at(item, &["kind"])),
        (!ns.is_empty()).then_some(ns),
        Some(str_at(item, &["metadata", "name"])),
    ]
    .into_iter()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Issue 13: `has_identity` answers what comparing with `identity` answers.
    #[test]
    fn has_identity_agrees_with_identity() {
        let items = [
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a", "namespace": "ns"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": ""}}),
            json!({"kind": "ConfigMap", "metadata": {"name": "a/b"}}),
            json!({}),
        ];
        let ids = [
            "apps/v1/Deployment/ns/a",
            "apps/v1/Deployment/a",
            "v1/ConfigMap/a",
            "v1/ConfigMap//a",
            "v1/ConfigMap/a/",
            "/ConfigMap/a/b",
            "///",
            "//",
            "",
            "apps/v1/Deployment/ns/ab",
        ];
        for item in &items {
            for id in ids.iter().copied().chain([identity(item).as_str()]) {
                assert_eq!(has_identity(item, id), identity(item) == id, "{item} {id}");
            }
        }
    }

    #[test]
    fn reads_every_accepted_shape() {
        for api in [
            "config.kubernetes.io/v1",
            "config.kubernetes.io/v1beta1",
            "config.kubernetes.io/v1alpha1",
            "v1",
        ] {
            let text = format!(
                "apiVersion: {api}\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: a}}\n"
            );
            assert_eq!(read(&text).unwrap().items.len(), 1);
        }
        let list = read("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}").unwrap();
        assert!(list.items.is_empty());
        let crlf = read("apiVersion: v1\r\nkind: ResourceList\r\nitems: []\r\n").unwrap();
        assert!(crlf.function_config.is_none());
    }

    #[test]
    fn rejects_what_is_not_a_resource_list() {
        let cases = [
            ("", "found 0 documents"),
            ("apiVersion: v1\nkind: ConfigMap\n", "found kind ConfigMap"),
            ("- a\n", "not a mapping"),
            ("kind: ResourceList\nitems: 3\n", "items must be a list"),
            (
                "kind: ResourceList\nitems: [1]\n",
                "items[0] is not an object",
            ),
            ("kind: ResourceList\nitems: [\n", "not valid YAML"),
        ];
        for (input, expected) in cases {
            let err = read(input).unwrap_err().to_string();
            assert!(err.contains(expected), "{input:?}: {err}");
        }
    }

    #[test]
    fn annotations_round_trip() {
        let mut item = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        set_annotation(&mut item, LEGACY_PATH, "x/a.yaml");
        assert_eq!(
            file_of(&item),
            Some(FileRef {
                path: "x/a.yaml".into(),
                index: 0
            })
        );
        remove_annotations(&mut item, ORCHESTRATOR_ANNOTATIONS);
        assert_eq!(
            item,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
        );
        assert_eq!(identity(&item), "v1/ConfigMap/a");
    }

    /// Setting annotations keeps what is there in place, appends new keys in order, and makes
    /// `metadata` and the map where they are missing or not objects (issue 20: one lookup of
    /// each map for all the annotations a generated object gets).
    #[test]
    fn set_annotations_makes_the_maps_and_keeps_order() {
        let mut item = json!({"kind": "A", "metadata": {"annotations": {"b": "1"}, "name": "x"}});
        set_annotations(&mut item, &[("c", "2"), ("b", "3"), ("a", "4")]);
        assert_eq!(
            serde_json::to_string(&item).unwrap_or_default(),
            r#"{"kind":"A","metadata":{"annotations":{"b":"3","c":"2","a":"4"},"name":"x"}}"#
        );
        let mut item = json!({"metadata": "no", "kind": "A"});
        set_label(&mut item, "l", "v");
        assert_eq!(
            serde_json::to_string(&item).unwrap_or_default(),
            r#"{"metadata":{"labels":{"l":"v"}},"kind":"A"}"#
        );
        let mut item = json!({"metadata": {"labels": [1], "name": "x"}});
        set_label(&mut item, "l", "v");
        assert_eq!(
            item,
            json!({"metadata": {"labels": {"l": "v"}, "name": "x"}})
        );
        let mut item = json!({"kind": "A"});
        set_annotations(&mut item, &[("a", "1")]);
        assert_eq!(
            item,
            json!({"kind": "A", "metadata": {"annotations": {"a": "1"}}})
        );
        let mut not_an_object = json!([1]);
        set_annotation(&mut not_an_object, "a", "1");
        assert_eq!(not_an_object, json!([1]));
    }
}

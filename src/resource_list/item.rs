//! Items as the pipeline holds them: a whole value, or a compact skeleton of an item it may
//! leave alone (identity and role annotations), read through [`Fields`] alike.

use serde_json::{Map, Value};

use super::{FUNCTION, INDEX, LEGACY_FUNCTIONS, LEGACY_INDEX, LEGACY_PATH, LOCAL_CONFIG, PATH};

/// One item as the pipeline holds it: whole, or a [`Skeleton`] whose body stays in the input
/// text until a stage needs it (see [`read_owned`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// The whole object (boxed: most items of a large input are skeletons, and every slot of
    /// the item vector is as large as the largest variant).
    Whole(Box<Value>),
    /// What the pipeline reads of an item it may leave alone.
    Skeleton(Skeleton),
}

/// What the pipeline reads of an item it may leave alone: its identity and the annotations
/// that decide its role or its place in results (see [`skeleton`]). A `serde_json::Value` of
/// the same fields costs about 800 bytes (an ordered map per level, a `String` per key); this
/// costs about 90, so that with many small items memory stays near the input size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skeleton {
    /// `apiVersion` and `kind`, shared by every item of the same type.
    type_meta: std::sync::Arc<TypeMeta>,
    /// `name`, `namespace` (those present), then key and value of each kept annotation in
    /// input order, one after the other: one allocation instead of one per string, whose
    /// allocator overhead was as large as a small flow-style item's text (issue 13).
    text: Box<str>,
    /// Where each field of `text` ends (it starts where the one before ends).
    ends: Box<[u32]>,
    /// Which of [`NAME`], [`NAMESPACE`] and [`ANNOTATIONS`] (the field, even empty) are present.
    present: u8,
}

const NAME: u8 = 1;
const NAMESPACE: u8 = 2;
const ANNOTATIONS: u8 = 4;

/// `apiVersion` and `kind` of a [`Skeleton`] (`None`: the field is absent).
#[derive(Debug, PartialEq, Eq, Hash)]
struct TypeMeta {
    api_version: Option<Box<str>>,
    kind: Option<Box<str>>,
}

/// One [`TypeMeta`] per distinct type among the items of a read.
#[derive(Default)]
pub(super) struct Types {
    /// The first [`Types::FEW`] types, compared in place: inputs with a few kinds (most of
    /// them) cost neither an allocation nor a hash per item.
    few: Vec<std::sync::Arc<TypeMeta>>,
    more: std::collections::HashSet<std::sync::Arc<TypeMeta>>,
}

impl Types {
    const FEW: usize = 16;

    fn intern(
        &mut self,
        api_version: Option<&str>,
        kind: Option<&str>,
    ) -> std::sync::Arc<TypeMeta> {
        let same =
            |t: &TypeMeta| t.api_version.as_deref() == api_version && t.kind.as_deref() == kind;
        if let Some(shared) = self.few.iter().find(|t| same(t)) {
            return std::sync::Arc::clone(shared);
        }
        let type_meta = TypeMeta {
            api_version: api_version.map(Box::from),
            kind: kind.map(Box::from),
        };
        if let Some(shared) = self.more.get(&type_meta) {
            return std::sync::Arc::clone(shared);
        }
        let shared = std::sync::Arc::new(type_meta);
        if self.few.len() < Self::FEW {
            self.few.push(std::sync::Arc::clone(&shared));
        } else {
            self.more.insert(std::sync::Arc::clone(&shared));
        }
        shared
    }
}

impl Skeleton {
    /// Field `i` of `text` (see [`Skeleton::ends`]).
    fn field(&self, i: usize) -> Option<&str> {
        let end = usize::try_from(*self.ends.get(i)?).ok()?;
        let start = match i.checked_sub(1) {
            Some(before) => usize::try_from(*self.ends.get(before)?).ok()?,
            None => 0,
        };
        self.text.get(start..end)
    }

    fn name(&self) -> Option<&str> {
        if self.present & NAME == 0 {
            return None;
        }
        self.field(0)
    }

    fn namespace(&self) -> Option<&str> {
        if self.present & NAMESPACE == 0 {
            return None;
        }
        self.field(usize::from(self.present & NAME != 0))
    }

    /// The kept annotations in input order; `None` when the item has no `annotations` field.
    fn annotations(&self) -> Option<impl Iterator<Item = (&str, &str)>> {
        if self.present & ANNOTATIONS == 0 {
            return None;
        }
        let first =
            usize::from(self.present & NAME != 0) + usize::from(self.present & NAMESPACE != 0);
        Some(
            (first..self.ends.len())
                .step_by(2)
                .filter_map(|i| Some((self.field(i)?, self.field(i + 1)?))),
        )
    }

    /// The skeleton as the value it stands for: `apiVersion`, `kind` and `metadata` with
    /// `name`, `namespace` and the kept annotations.
    fn to_value(&self) -> Value {
        let text = |s: &str| Value::String(s.to_owned());
        let mut metadata = Map::new();
        if let Some(name) = self.name() {
            metadata.insert("name".to_owned(), text(name));
        }
        if let Some(namespace) = self.namespace() {
            metadata.insert("namespace".to_owned(), text(namespace));
        }
        if let Some(annotations) = self.annotations() {
            let map = annotations.map(|(k, v)| (k.to_owned(), text(v))).collect();
            metadata.insert("annotations".to_owned(), Value::Object(map));
        }
        let mut item = Map::new();
        if let Some(api_version) = &self.type_meta.api_version {
            item.insert("apiVersion".to_owned(), text(api_version));
        }
        if let Some(kind) = &self.type_meta.kind {
            item.insert("kind".to_owned(), text(kind));
        }
        item.insert("metadata".to_owned(), Value::Object(metadata));
        Value::Object(item)
    }
}

impl Item {
    /// The item as a value: the whole item, or what its skeleton holds.
    pub fn value(&self) -> std::borrow::Cow<'_, Value> {
        match self {
            Item::Whole(v) => std::borrow::Cow::Borrowed(v),
            Item::Skeleton(s) => std::borrow::Cow::Owned(s.to_value()),
        }
    }

    /// The item as a value it owns (see [`Item::value`]).
    pub fn into_value(self) -> Value {
        match self {
            Item::Whole(v) => *v,
            Item::Skeleton(s) => s.to_value(),
        }
    }
}

impl From<Value> for Item {
    fn from(value: Value) -> Self {
        Item::Whole(Box::new(value))
    }
}

/// What the pipeline reads of any item, whole ([`Value`]) or [`Item`] (skeletons included).
pub trait Fields {
    /// The string at a path of object keys, or "".
    fn str_at(&self, path: &[&str]) -> &str;
    /// An annotation value.
    fn annotation(&self, key: &str) -> Option<&str>;
    /// Whether `metadata.configFn` is set (a skeleton does not keep it).
    fn has_config_fn(&self) -> bool;
}

impl Fields for Value {
    fn str_at(&self, path: &[&str]) -> &str {
        let mut cur = self;
        for key in path {
            match cur.get(key) {
                Some(v) => cur = v,
                None => return "",
            }
        }
        cur.as_str().unwrap_or("")
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        self.get("metadata")?.get("annotations")?.get(key)?.as_str()
    }

    fn has_config_fn(&self) -> bool {
        self.get("metadata")
            .and_then(|m| m.get("configFn"))
            .is_some()
    }
}

impl Fields for Skeleton {
    fn str_at(&self, path: &[&str]) -> &str {
        let found = match path {
            ["apiVersion"] => self.type_meta.api_version.as_deref(),
            ["kind"] => self.type_meta.kind.as_deref(),
            ["metadata", "name"] => self.name(),
            ["metadata", "namespace"] => self.namespace(),
            ["metadata", "annotations", key] => self.annotation(key),
            _ => None,
        };
        found.unwrap_or("")
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations()?.find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    fn has_config_fn(&self) -> bool {
        false
    }
}

impl Fields for Item {
    fn str_at(&self, path: &[&str]) -> &str {
        match self {
            Item::Whole(v) => v.str_at(path),
            Item::Skeleton(s) => s.str_at(path),
        }
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        match self {
            Item::Whole(v) => Fields::annotation(&**v, key),
            Item::Skeleton(s) => Fields::annotation(s, key),
        }
    }

    fn has_config_fn(&self) -> bool {
        match self {
            Item::Whole(v) => v.has_config_fn(),
            Item::Skeleton(s) => s.has_config_fn(),
        }
    }
}

impl<T: Fields + ?Sized> Fields for &T {
    fn str_at(&self, path: &[&str]) -> &str {
        (**self).str_at(path)
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        (**self).annotation(key)
    }

    fn has_config_fn(&self) -> bool {
        (**self).has_config_fn()
    }
}

/// An item [`write`] can emit when it has no input text.
pub trait AsValue {
    /// The value to emit.
    fn as_value(&self) -> std::borrow::Cow<'_, Value>;
}

impl AsValue for Value {
    fn as_value(&self) -> std::borrow::Cow<'_, Value> {
        std::borrow::Cow::Borrowed(self)
    }
}

impl AsValue for Item {
    fn as_value(&self) -> std::borrow::Cow<'_, Value> {
        self.value()
    }
}

/// Whether a skeleton keeps an annotation: ours, the function annotation, local-config, path
/// and index. The lean reader builds only these (`yaml::NodeBuilder::lean`).
pub(super) fn wanted_annotation(k: &str) -> bool {
    k.starts_with("krm-catalog.dev/")
        || [
            PATH,
            INDEX,
            LEGACY_PATH,
            LEGACY_INDEX,
            LOCAL_CONFIG,
            FUNCTION,
        ]
        .contains(&k)
        || LEGACY_FUNCTIONS.contains(&k)
}

/// What the pipeline reads of an item it may leave alone: its identity and the annotations
/// that decide its role or its place in results ([`wanted_annotation`]). Everything else is
/// read from the input only when needed. A [`Skeleton`] when these fields are strings (and
/// `metadata` a mapping), as in any object Kubernetes accepts; else the same fields as a value.
pub(super) fn skeleton(item: Map<String, Value>, types: &mut Types) -> Item {
    let text = |v: Option<&Value>| v.is_none_or(Value::is_string);
    let compact = text(small_get(&item, "apiVersion"))
        && text(small_get(&item, "kind"))
        && small_get(&item, "metadata")
            .and_then(Value::as_object)
            .is_some_and(|meta| {
                text(small_get(meta, "name"))
                    && text(small_get(meta, "namespace"))
                    && match small_get(meta, "annotations") {
                        None => true,
                        Some(Value::Object(a)) => a
                            .iter()
                            .all(|(k, v)| v.is_string() || !wanted_annotation(k)),
                        Some(_) => false,
                    }
            });
    if !compact {
        return Item::Whole(Box::new(skeleton_value(item)));
    }
    let Some((text, ends, present)) = pack(&item) else {
        return Item::Whole(Box::new(skeleton_value(item)));
    };
    let field = |key: &str| small_get(&item, key).and_then(Value::as_str);
    let type_meta = types.intern(field("apiVersion"), field("kind"));
    Item::Skeleton(Skeleton {
        type_meta,
        text,
        ends,
        present,
    })
}

/// The `text`, `ends` and `present` of a [`Skeleton`] of an item whose kept fields are strings
/// (checked by [`skeleton`]); `None` if the text would be too long for `u32` offsets.
fn pack(item: &Map<String, Value>) -> Option<(Box<str>, Box<[u32]>, u8)> {
    let meta = small_get(item, "metadata").and_then(Value::as_object);
    let field = |key: &str| small_get(meta?, key)?.as_str();
    let annotations = meta
        .and_then(|m| small_get(m, "annotations"))
        .and_then(Value::as_object);
    let kept = || {
        annotations.into_iter().flatten().filter_map(|(k, v)| {
            let v = v.as_str()?;
            wanted_annotation(k).then_some((k.as_str(), v))
        })
    };
    let (name, namespace) = (field("name"), field("namespace"));
    let mut present = 0;
    let mut fields = 0;
    let mut len = 0;
    for (flag, value) in [(NAME, name), (NAMESPACE, namespace)] {
        if let Some(value) = value {
            present |= flag;
            fields += 1;
            len += value.len();
        }
    }
    if annotations.is_some() {
        present |= ANNOTATIONS;
    }
    for (k, v) in kept() {
        fields += 2;
        len += k.len() + v.len();
    }
    let mut text = String::with_capacity(len);
    let mut ends = Vec::with_capacity(fields);
    let strings = name.into_iter().chain(namespace);
    for s in strings.chain(kept().flat_map(|(k, v)| [k, v])) {
        text.push_str(s);
        ends.push(u32::try_from(text.len()).ok()?);
    }
    Some((text.into_boxed_str(), ends.into_boxed_slice(), present))
}

/// `map.get(key)` without hashing for the few keys of what the lean reader builds.
fn small_get<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m Value> {
    if map.len() <= 8 {
        map.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        map.get(key)
    }
}

/// The fields of [`skeleton`] as a value, for items whose fields are not all strings.
fn skeleton_value(mut item: Map<String, Value>) -> Value {
    let wanted = wanted_annotation;
    item.retain(|k, _| k == "apiVersion" || k == "kind" || k == "metadata");
    if let Some(Value::Object(meta)) = item.get_mut("metadata") {
        meta.retain(|k, _| k == "name" || k == "namespace" || k == "annotations");
        if let Some(Value::Object(annotations)) = meta.get_mut("annotations") {
            annotations.retain(|k, _| wanted(k));
            *annotations = compact(std::mem::take(annotations));
        }
        *meta = compact(std::mem::take(meta));
    }
    Value::Object(compact(item))
}

/// A map with exactly the capacity it needs: skeletons of every item are held for the whole
/// run, and maps keep the capacity of the full object they were cut from.
fn compact(map: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::with_capacity(map.len());
    out.extend(map);
    out
}

#[cfg(test)]
mod skeleton_tests {
    use super::*;
    use crate::resource_list::{check_round_trip, read, read_owned, write};

    const INPUT: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a # trailing\n    labels: {team: a}\n    annotations:\n      owner: me\n      config.kubernetes.io/path: a.yaml\n      krm-catalog.dev/generated-from: v1/X/a\n  data: {flag: 'on'}\n\n# between items\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: b}\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: f}\n  data: {x: y}\n";

    #[test]
    fn skeletons_keep_identity_and_role_annotations_and_write_the_same() {
        let lazy = read_owned(INPUT.to_owned()).unwrap();
        assert_eq!(
            *lazy.items[0].value(),
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
                "annotations": {"config.kubernetes.io/path": "a.yaml", "krm-catalog.dev/generated-from": "v1/X/a"}}})
        );
        let eager = read(INPUT).unwrap();
        assert_eq!(lazy.function_config, eager.function_config);
        // Hydrating gives the eager item back.
        let v = lazy.verbatim.as_ref().unwrap();
        for (i, range) in v.ranges.iter().enumerate() {
            assert_eq!(
                v.item_at(range.as_ref().unwrap()).as_ref(),
                Some(&eager.items[i])
            );
        }
        assert_eq!(write(lazy, None), write(eager, None));
    }

    /// Issue 9 F8: every item of a large input is one slot of the item vector.
    #[test]
    fn issue9_f8_an_item_slot_stays_small() {
        assert!(
            std::mem::size_of::<Item>() <= 56,
            "{}",
            std::mem::size_of::<Item>()
        );
        let lazy = read_owned(INPUT.to_owned()).unwrap();
        assert!(lazy.items.iter().all(|i| matches!(i, Item::Skeleton(_))));
        // Fields that are not strings keep the skeleton as a value, with the same fields.
        let odd = INPUT.replace("name: a # trailing", "name: 7");
        let lazy = read_owned(odd.clone()).unwrap();
        assert!(
            matches!(lazy.items[0], Item::Whole(_)),
            "{:?}",
            lazy.items[0]
        );
        assert_eq!(lazy.items[0].value()["metadata"]["name"], 7);
        assert_eq!(check_round_trip(&odd), Ok(()));
    }

    /// Issue 13: a skeleton's strings share one allocation; every field reads back as it was,
    /// present or absent, empty or not.
    #[test]
    fn issue13_packed_skeletons_read_back_every_field() {
        for item in [
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
                "namespace": "ns", "annotations": {"owner": "me", "config.kubernetes.io/path": "a.yaml",
                "config.kubernetes.io/index": "", "krm-catalog.dev/x": "1"}}}),
            serde_json::json!({"kind": "ConfigMap", "metadata": {"namespace": "only"}}),
            serde_json::json!({"apiVersion": "v1", "metadata": {"name": "", "annotations": {}}}),
            serde_json::json!({"apiVersion": "v1", "metadata": {"annotations": {"owner": "me"}}}),
            serde_json::json!({"metadata": {}}),
        ] {
            let Value::Object(map) = item.clone() else {
                unreachable!()
            };
            let Item::Skeleton(s) = skeleton(map, &mut Types::default()) else {
                panic!("not a skeleton: {item}");
            };
            let mut expected = item.clone();
            if let Some(Value::Object(a)) = expected.pointer_mut("/metadata/annotations") {
                a.retain(|k, _| wanted_annotation(k));
            }
            assert_eq!(s.to_value(), expected, "{item}");
            for path in [
                &["apiVersion"][..],
                &["kind"],
                &["metadata", "name"],
                &["metadata", "namespace"],
                &["metadata", "annotations", "config.kubernetes.io/path"],
                &["metadata", "annotations", "config.kubernetes.io/index"],
                &["metadata", "annotations", "owner"],
            ] {
                assert_eq!(s.str_at(path), expected.str_at(path), "{item} {path:?}");
            }
        }
    }

    #[test]
    fn flow_sequences_are_read_as_skeletons_and_re_emitted() {
        for input in [
            "kind: ResourceList\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {x: 'on'}},\n  {apiVersion: v1, kind: Secret, metadata: {name: b}}]\n",
            "{\"kind\": \"ResourceList\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}, \"data\": {\"x\": \"y\"}}]}",
        ] {
            let lazy = read_owned(input.to_owned()).unwrap();
            let v = lazy.verbatim.as_ref().unwrap();
            assert!(v.reemit, "{input:?}");
            assert!(
                lazy.items[0].value().get("data").is_none(),
                "a skeleton: {:?}",
                lazy.items[0]
            );
            assert_eq!(check_round_trip(input), Ok(()));
            assert_eq!(write(lazy, None), write(read(input).unwrap(), None));
        }
    }

    #[test]
    fn other_layouts_are_streamed_and_errors_are_the_eager_readers() {
        // Anchors, CRLF, a tagged list, an empty list: read in one streaming pass, skeletons
        // with the text the eager path would emit.
        for input in [
            "kind: ResourceList\nitems:\n- &a\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: {x: y}\n- *a\n",
            "kind: ResourceList\r\nitems:\r\n- apiVersion: v1\r\n  kind: ConfigMap\r\n  metadata: {name: a}\r\n  data: {x: y}\r\n",
            "kind: ResourceList\nitems: !!seq\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: {x: y}\n",
            "kind: ResourceList\nitems: []\n",
        ] {
            let lazy = read_owned(input.to_owned()).unwrap();
            assert!(
                lazy.items.iter().all(|i| i.value().get("data").is_none()),
                "{input:?}"
            );
            assert_eq!(check_round_trip(input), Ok(()), "{input:?}");
            assert_eq!(
                write(lazy, None),
                write(read(input).unwrap(), None),
                "{input:?}"
            );
        }
        // Errors are the eager reader's, with its line numbers.
        for input in [
            "kind: ResourceList\nitems:\n- apiVersion: v1\n  kind: [unclosed\n",
            "kind: Nope\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n",
            "kind: ResourceList\nitems:\n- just a string\n",
            "kind: ResourceList\nitems:\n- apiVersion: v1\nfunctionConfig: 3\n",
        ] {
            let eager = read(input).unwrap_err();
            assert_eq!(
                read_owned(input.to_owned()).unwrap_err(),
                eager,
                "{input:?}"
            );
        }
    }
}

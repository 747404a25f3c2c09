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
/// costs 32 bytes in the item vector and, when its strings are short (a name, perhaps a
/// namespace), nothing else (issue 20: the skeletons of 25 MB of small items held more than
/// the input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skeleton {
    /// `apiVersion` and `kind`, shared by every item of the same type.
    type_meta: std::sync::Arc<TypeMeta>,
    /// Which of [`NAME`], [`NAMESPACE`] and [`ANNOTATIONS`] (the field, even empty) are
    /// present, then `name` and `namespace` (those present) and the key and value of each kept
    /// annotation in input order, each as its length and its bytes (see [`Packed`]).
    packed: Packed,
}

/// The bytes of a [`Skeleton`]'s fields: a flags byte, then each string as its length
/// (LEB128: one byte below 128) and its UTF-8 bytes. In place up to [`Packed::INLINE`]
/// bytes, else one allocation of exactly its size (one instead of one per string, whose
/// allocator overhead was as large as a small flow-style item's text, issue 13).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Packed {
    /// `bytes[..len]`; the rest is zero, so that equal skeletons compare equal.
    Inline {
        len: u8,
        bytes: [u8; Packed::INLINE],
    },
    Heap(Box<[u8]>),
}

impl Packed {
    /// As many bytes as fit beside the tag and the length in the 24 bytes a `Box<[u8]>` and
    /// its tag take anyway.
    const INLINE: usize = 22;

    fn new(bytes: &[u8]) -> Self {
        let mut inline = [0; Self::INLINE];
        match (inline.get_mut(..bytes.len()), u8::try_from(bytes.len())) {
            (Some(place), Ok(len)) => {
                place.copy_from_slice(bytes);
                Packed::Inline { len, bytes: inline }
            }
            _ => Packed::Heap(Box::from(bytes)),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Packed::Inline { len, bytes } => bytes.get(..usize::from(*len)).unwrap_or_default(),
            Packed::Heap(bytes) => bytes,
        }
    }
}

/// Append `n` as LEB128: seven bits a byte, low bits first, the high bit set on all but the
/// last byte.
fn push_len(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n & 0x7f).to_le_bytes()[0] | 0x80);
        n >>= 7;
    }
    out.push(n.to_le_bytes()[0]);
}

/// A length written by [`push_len`] and the bytes after it; `None` if `bytes` does not start
/// with one.
fn take_len(bytes: &[u8]) -> Option<(usize, &[u8])> {
    let mut n = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        let bits = usize::from(b & 0x7f);
        let shift = u32::try_from(7 * i).ok()?;
        let shifted = bits.checked_shl(shift)?;
        if shifted >> shift != bits {
            return None;
        }
        n |= shifted;
        if b & 0x80 == 0 {
            return Some((n, bytes.get(i + 1..)?));
        }
    }
    None
}

/// A string of a [`Packed`] (written from a `str`, so this fails only if it was not).
fn text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// The strings of a [`Packed`] after its flags byte, in order.
struct Strings<'a>(&'a [u8]);

impl<'a> Iterator for Strings<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let (len, rest) = take_len(self.0)?;
        let (string, rest) = rest.split_at_checked(len)?;
        self.0 = rest;
        Some(string)
    }
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
    /// Where each skeleton's [`Packed`] bytes are put together before they are copied into
    /// it (one buffer for the whole read).
    scratch: Vec<u8>,
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
    fn present(&self) -> u8 {
        self.packed.bytes().first().copied().unwrap_or(0)
    }

    /// The strings after the flags byte, in order.
    fn strings(&self) -> Strings<'_> {
        Strings(self.packed.bytes().get(1..).unwrap_or_default())
    }

    fn name(&self) -> Option<&str> {
        if self.present() & NAME == 0 {
            return None;
        }
        text(self.strings().next()?)
    }

    fn namespace(&self) -> Option<&str> {
        let present = self.present();
        if present & NAMESPACE == 0 {
            return None;
        }
        text(self.strings().nth(usize::from(present & NAME != 0))?)
    }

    /// The kept annotations in input order, as bytes; `None` when the item has no
    /// `annotations` field.
    fn annotation_bytes(&self) -> Option<impl Iterator<Item = (&[u8], &[u8])>> {
        let present = self.present();
        if present & ANNOTATIONS == 0 {
            return None;
        }
        let before = usize::from(present & NAME != 0) + usize::from(present & NAMESPACE != 0);
        let mut strings = self.strings().skip(before);
        Some(std::iter::from_fn(move || {
            Some((strings.next()?, strings.next()?))
        }))
    }

    /// The kept annotations in input order; `None` when the item has no `annotations` field.
    fn annotations(&self) -> Option<impl Iterator<Item = (&str, &str)>> {
        let pairs = self.annotation_bytes()?;
        Some(pairs.map_while(|(k, v)| Some((text(k)?, text(v)?))))
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
        let (_, value) = self
            .annotation_bytes()?
            .find(|(k, _)| *k == key.as_bytes())?;
        text(value)
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
    let string = |v: Option<&Value>| v.is_none_or(Value::is_string);
    let compact = string(small_get(&item, "apiVersion"))
        && string(small_get(&item, "kind"))
        && small_get(&item, "metadata")
            .and_then(Value::as_object)
            .is_some_and(|meta| {
                string(small_get(meta, "name"))
                    && string(small_get(meta, "namespace"))
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
    let field = |key: &str| small_get(&item, key).and_then(Value::as_str);
    let type_meta = types.intern(field("apiVersion"), field("kind"));
    pack(&item, &mut types.scratch);
    Item::Skeleton(Skeleton {
        type_meta,
        packed: Packed::new(&types.scratch),
    })
}

/// The [`Packed`] bytes of a [`Skeleton`] of an item whose kept fields are strings (checked
/// by [`skeleton`]), into `out`.
fn pack(item: &Map<String, Value>, out: &mut Vec<u8>) {
    let meta = small_get(item, "metadata").and_then(Value::as_object);
    let field = |key: &str| small_get(meta?, key)?.as_str();
    let annotations = meta
        .and_then(|m| small_get(m, "annotations"))
        .and_then(Value::as_object);
    let (name, namespace) = (field("name"), field("namespace"));
    let mut present = 0;
    for (flag, value) in [(NAME, name), (NAMESPACE, namespace)] {
        if value.is_some() {
            present |= flag;
        }
    }
    if annotations.is_some() {
        present |= ANNOTATIONS;
    }
    out.clear();
    out.push(present);
    let kept = annotations.into_iter().flatten().filter_map(|(k, v)| {
        let v = v.as_str()?;
        wanted_annotation(k).then_some([k.as_str(), v])
    });
    let strings = name.into_iter().chain(namespace);
    for s in strings.chain(kept.flatten()) {
        push_len(out, s.len());
        out.extend_from_slice(s.as_bytes());
    }
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
            assert_eq!(v.item_at(range.unwrap()).as_ref(), Some(&eager.items[i]));
        }
        assert_eq!(write(lazy, None), write(eager, None));
    }

    /// Issue 9 F8: every item of a large input is one slot of the item vector.
    #[test]
    fn issue9_f8_an_item_slot_stays_small() {
        assert!(
            std::mem::size_of::<Item>() <= 32,
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

/// Issue 20: skeletons of any strings read back as they were, short (in place) or long (one
/// allocation), read from any YAML spelling of them (plain, quoted, escaped), and items are
/// still copied byte for byte.
#[cfg(test)]
mod issue20_packed {
    use super::*;
    use crate::resource_list::{Span, read, read_owned, write};
    use proptest::prelude::*;
    use std::fmt::Write as _;

    #[test]
    fn issue20_lengths_round_trip_and_bad_ones_are_refused() {
        for n in [0, 1, 127, 128, 255, 16_383, 16_384, 1 << 21, usize::MAX] {
            let mut out = Vec::new();
            push_len(&mut out, n);
            out.push(0xAA);
            assert_eq!(take_len(&out), Some((n, &[0xAA][..])), "{n}");
        }
        // Unfinished, or too large for a usize: no length.
        assert_eq!(take_len(&[]), None);
        assert_eq!(take_len(&[0x80]), None);
        assert_eq!(take_len(&[0xFF; 11]), None);
        let mut too_big = vec![0xFF; 9];
        too_big.push(0x7F);
        assert_eq!(take_len(&too_big), None);
        // A length past the end: no string, no panic.
        assert_eq!(Strings(&[5, b'a']).next(), None);
    }

    #[test]
    fn issue20_short_skeletons_are_kept_in_place() {
        for (name, inline) in [
            ("", true),
            ("c-0000000", true),
            (&"n".repeat(20), true),
            (&"n".repeat(21), false),
        ] {
            let item = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
            let Value::Object(map) = item else {
                unreachable!()
            };
            let Item::Skeleton(s) = skeleton(map, &mut Types::default()) else {
                panic!("not a skeleton");
            };
            assert_eq!(matches!(s.packed, Packed::Inline { .. }), inline, "{name}");
            assert_eq!(s.name(), Some(name));
        }
        assert!(std::mem::size_of::<Skeleton>() <= 32);
    }

    #[test]
    fn issue20_spans_are_non_empty_32_bit_ranges() {
        assert_eq!(Span::new(3..9).map(Span::range), Some(3..9));
        assert_eq!(Span::new(0..1).map(Span::range), Some(0..1));
        assert_eq!(Span::new(4..4), None);
        #[allow(clippy::reversed_empty_ranges)]
        let backwards = Span::new(5..4);
        assert_eq!(backwards, None);
        assert_eq!(
            Span::new(0..Span::MAX_TEXT).map(Span::range),
            Some(0..Span::MAX_TEXT)
        );
        assert_eq!(Span::new(0..Span::MAX_TEXT + 1), None);
        assert_eq!(Span::new(Span::MAX_TEXT + 1..Span::MAX_TEXT + 2), None);
        assert_eq!(std::mem::size_of::<Option<Span>>(), 8);
    }

    fn any_string() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9.-]{0,12}",
            "(\\PC|[\t\n\"\\\\' #:]){0,24}",
            // Past one length byte (128) and past the in-place bytes.
            "[a-zé😀]{100,300}",
        ]
    }

    /// A wanted annotation or one the skeleton leaves out.
    fn any_key() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(crate::resource_list::PATH.to_owned()),
            Just(crate::resource_list::LEGACY_INDEX.to_owned()),
            Just(crate::resource_list::FUNCTION.to_owned()),
            "krm-catalog\\.dev/[a-z]{1,8}",
            "[a-z]{1,8}\\.example/[a-z]{1,8}",
        ]
    }

    type Annotations = Option<Vec<(String, String)>>;

    fn any_metadata() -> impl Strategy<Value = (Option<String>, Option<String>, Annotations)> {
        (
            proptest::option::of(any_string()),
            proptest::option::of(any_string()),
            proptest::option::of(proptest::collection::vec((any_key(), any_string()), 0..5)),
        )
    }

    fn item_of(
        name: Option<&String>,
        namespace: Option<&String>,
        annotations: Option<&Annotations>,
    ) -> Value {
        let mut metadata = Map::new();
        if let Some(name) = name {
            metadata.insert("name".into(), Value::from(name.as_str()));
        }
        if let Some(namespace) = namespace {
            metadata.insert("namespace".into(), Value::from(namespace.as_str()));
        }
        if let Some(Some(annotations)) = annotations {
            let map = annotations
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect();
            metadata.insert("annotations".into(), Value::Object(map));
        }
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata})
    }

    /// A YAML scalar for `s`: JSON's double quotes, every character escaped, or single quotes.
    fn scalar(s: &str, style: u8) -> String {
        match style % 3 {
            0 => serde_json::to_string(s).unwrap_or_default(),
            1 => {
                let mut out = String::from("\"");
                for c in s.chars() {
                    let _ = match u32::from(c) {
                        n if n <= 0xFF => write!(out, "\\x{n:02x}"),
                        n if n <= 0xFFFF => write!(out, "\\u{n:04x}"),
                        n => write!(out, "\\U{n:08x}"),
                    };
                }
                out.push('"');
                out
            }
            // (Single quotes cannot hold a line break as itself.)
            _ if s.contains(['\n', '\t']) => serde_json::to_string(s).unwrap_or_default(),
            _ => format!("'{}'", s.replace('\'', "''")),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn issue20_packed_skeletons_read_back_every_field((name, namespace, annotations) in any_metadata()) {
            let item = item_of(name.as_ref(), namespace.as_ref(), Some(&annotations));
            let Value::Object(map) = item.clone() else { unreachable!() };
            let Item::Skeleton(s) = skeleton(map, &mut Types::default()) else {
                return Err(TestCaseError::fail(format!("not a skeleton: {item}")));
            };
            let mut expected = item.clone();
            if let Some(Value::Object(a)) = expected.pointer_mut("/metadata/annotations") {
                a.retain(|k, _| wanted_annotation(k));
            }
            prop_assert_eq!(s.to_value(), expected.clone());
            prop_assert_eq!(s.str_at(&["metadata", "name"]), expected.str_at(&["metadata", "name"]));
            prop_assert_eq!(s.str_at(&["metadata", "namespace"]), expected.str_at(&["metadata", "namespace"]));
            for (key, _) in annotations.iter().flatten() {
                prop_assert_eq!(Fields::annotation(&s, key), Fields::annotation(&expected, key), "{}", key);
            }
        }

        /// Names and annotations as plain, quoted or escaped YAML: the skeleton holds what the
        /// eager reader reads, and every item's text is copied as it came.
        #[test]
        fn issue20_skeletons_of_any_spelling_and_verbatim_copies(
            items in proptest::collection::vec((any_metadata(), any::<u8>()), 1..4),
        ) {
            let mut input = String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
            let mut texts = Vec::new();
            for ((name, namespace, annotations), style) in &items {
                let mut text = String::from("- apiVersion: v1\n  kind: ConfigMap\n  metadata:");
                // (A `metadata` of nothing would be null: not what a skeleton stands for.)
                text.push_str(if name.is_none() && namespace.is_none() && annotations.is_none() {
                    " {}\n"
                } else {
                    "\n"
                });
                if let Some(name) = name {
                    let _ = writeln!(text, "    name: {}", scalar(name, *style));
                }
                if let Some(namespace) = namespace {
                    let _ = writeln!(text, "    namespace: {}", scalar(namespace, style / 3));
                }
                if let Some(annotations) = annotations {
                    text.push_str("    annotations:");
                    if annotations.is_empty() {
                        text.push_str(" {}");
                    }
                    text.push('\n');
                    // (Duplicate keys are refused by both readers alike; keep the first.)
                    let mut seen = std::collections::HashSet::new();
                    for (k, v) in annotations.iter().filter(|(k, _)| seen.insert(k.clone())) {
                        let _ = writeln!(text, "      {k}: {}", scalar(v, style / 9));
                    }
                }
                text.push_str("  data: {flag: 'on'}\n");
                input.push_str(&text);
                texts.push(text);
            }
            let eager = read(&input).map_err(|e| TestCaseError::fail(format!("{e}\n{input}")))?;
            let lazy = read_owned(input.clone()).map_err(|e| TestCaseError::fail(format!("{e}\n{input}")))?;
            prop_assert_eq!(lazy.items.len(), eager.items.len());
            for (l, e) in lazy.items.iter().zip(&eager.items) {
                prop_assert!(matches!(l, Item::Skeleton(_)), "{:?}", l);
                for path in [&["metadata", "name"][..], &["metadata", "namespace"], &["kind"]] {
                    prop_assert_eq!(l.str_at(path), e.str_at(path), "{:?}\n{}", path, input);
                }
                for (k, _) in e.get("metadata").and_then(|m| m.get("annotations")).and_then(Value::as_object).into_iter().flatten() {
                    let want = wanted_annotation(k).then(|| Fields::annotation(e, k)).flatten();
                    prop_assert_eq!(Fields::annotation(l, k), want, "{}\n{}", k, input);
                }
            }
            let out = write(lazy, None);
            prop_assert_eq!(&out, &write(eager, None));
            for text in &texts {
                prop_assert!(out.contains(text.as_str()), "not copied:\n{}\nout:\n{}", text, out);
            }
        }
    }
}

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

use crate::yaml;

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
    name: Option<Box<str>>,
    namespace: Option<Box<str>>,
    /// The kept annotations in input order; `None` when the item has no `annotations` field.
    annotations: Option<Box<[Annotation]>>,
}

/// An annotation's key and value.
type Annotation = (Box<str>, Box<str>);

/// `apiVersion` and `kind` of a [`Skeleton`] (`None`: the field is absent).
#[derive(Debug, PartialEq, Eq, Hash)]
struct TypeMeta {
    api_version: Option<Box<str>>,
    kind: Option<Box<str>>,
}

/// One [`TypeMeta`] per distinct type among the items of a read.
#[derive(Default)]
struct Types(std::collections::HashSet<std::sync::Arc<TypeMeta>>);

impl Types {
    fn intern(&mut self, type_meta: TypeMeta) -> std::sync::Arc<TypeMeta> {
        if let Some(shared) = self.0.get(&type_meta) {
            return std::sync::Arc::clone(shared);
        }
        let shared = std::sync::Arc::new(type_meta);
        self.0.insert(std::sync::Arc::clone(&shared));
        shared
    }
}

impl Skeleton {
    /// The skeleton as the value it stands for: `apiVersion`, `kind` and `metadata` with
    /// `name`, `namespace` and the kept annotations.
    fn to_value(&self) -> Value {
        let text = |s: &str| Value::String(s.to_owned());
        let mut metadata = Map::new();
        if let Some(name) = &self.name {
            metadata.insert("name".to_owned(), text(name));
        }
        if let Some(namespace) = &self.namespace {
            metadata.insert("namespace".to_owned(), text(namespace));
        }
        if let Some(annotations) = &self.annotations {
            let map = annotations
                .iter()
                .map(|(k, v)| (k.to_string(), text(v)))
                .collect();
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
            ["metadata", "name"] => self.name.as_deref(),
            ["metadata", "namespace"] => self.namespace.as_deref(),
            ["metadata", "annotations", key] => self.annotation(key),
            _ => None,
        };
        found.unwrap_or("")
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations
            .as_deref()?
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
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

/// Where each item's text sits in the input.
///
/// kpt restores comments and key order of what a function returns, but takes scalar styles
/// from the function's output: re-emitting an untouched `flag: 'on'` as `flag: "on"` would
/// show up as a diff in files the function has nothing to do with. So untouched items are
/// copied from the input instead of re-emitted (which is also faster).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verbatim {
    /// The whole input, or (layouts read by the streaming reader) the items as emitted YAML.
    pub text: String,
    /// Column of the items' `-` markers in the input.
    pub dash_column: usize,
    /// For each item (aligned with `items`), its text range, or `None` to emit it anew.
    pub ranges: Vec<Option<std::ops::Range<usize>>>,
    /// The ranges are the items' nodes in a flow sequence (JSON, `items: [...]`): they are
    /// parsed and re-emitted one at a time when written, never copied, so that memory stays
    /// near the input size for these layouts too.
    pub reemit: bool,
}

/// The top-level block sequence `items:` as text: the column of its `-` markers and the range
/// of every entry. `None` whenever the layout is not the plain block form orchestrators write
/// (flow style, JSON, CRLF, anchors, tags on the sequence); callers then parse everything.
struct ItemsText {
    dash_column: usize,
    ranges: Vec<std::ops::Range<usize>>,
    /// Flow sequence: the ranges are the items' nodes, to be re-emitted (see [`Verbatim`]).
    reemit: bool,
}

/// Where the parser saw one entry of `items`: its node's first and last byte (relative to the
/// document). A block mapping ends where the next token starts.
struct ItemNode {
    start: usize,
    end: usize,
}

/// The entries of the top-level `items` sequence as the YAML parser itself sees them
/// (serde-saphyr's parser, granit-parser, so the positions are those of the very parse that
/// produced the items). A text scanner looking for `items:` can be fooled by another key
/// spelled to look like it (`"items:#x":`, a string holding a fake list): this cannot.
/// `None` for anything but an untagged, unanchored sequence of mappings without aliases;
/// the flag says whether the sequence is in flow style.
fn item_nodes(doc: &str) -> Option<(std::ops::Range<usize>, Vec<ItemNode>, bool)> {
    use granit_parser::{Event, StructureStyle};
    let mut parser = granit_parser::Parser::new_from_str(doc);
    let mut depth = 0usize;
    // At depth 1 (the top-level mapping), whether the next node is a key.
    let mut expect_key = true;
    let mut items_key: Option<std::ops::Range<usize>> = None;
    let mut in_items = false;
    let mut flow = false;
    let mut found: Option<(std::ops::Range<usize>, Vec<ItemNode>, bool)> = None;
    let mut nodes: Vec<ItemNode> = Vec::new();
    let mut open_item: Option<usize> = None;
    let mut documents = 0usize;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.ok()?;
        let bytes = span.byte_range()?;
        match &event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => continue,
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return None;
                }
                continue;
            }
            // Aliases and anchors tie an item's text to other places.
            Event::Alias(_) | Event::Anchor(..) | Event::UnresolvedAlias(_) => return None,
            Event::Scalar(_, _, anchor, _)
            | Event::SequenceStart(_, anchor, _)
            | Event::MappingStart(_, anchor, _)
                if *anchor != 0 =>
            {
                return None;
            }
            _ => {}
        }
        let is_start = matches!(event, Event::SequenceStart(..) | Event::MappingStart(..));
        let is_end = matches!(event, Event::SequenceEnd | Event::MappingEnd);
        // A node begins at `depth`; record items' entries (depth 2 inside `items`).
        if !is_end {
            match depth {
                0 if !matches!(event, Event::MappingStart(..)) => return None,
                1 => {
                    if expect_key {
                        let Event::Scalar(key, _, _, tag) = &event else {
                            return None;
                        };
                        if key == "items" {
                            if tag.is_some() || items_key.is_some() {
                                return None;
                            }
                            items_key = Some(bytes.clone());
                        }
                    } else if items_key.is_some() && found.is_none() && !in_items {
                        let Event::SequenceStart(style, _, None) = &event else {
                            return None;
                        };
                        flow = *style == StructureStyle::Flow;
                        in_items = true;
                    }
                    expect_key = !expect_key;
                }
                2 if in_items => {
                    // A tag is outside the node's span (and may change what it means).
                    let Event::MappingStart(_, _, None) = event else {
                        return None;
                    };
                    open_item = Some(bytes.start);
                }
                _ => {}
            }
        }
        if is_start {
            depth += 1;
        } else if is_end {
            depth = depth.checked_sub(1)?;
            if depth == 2
                && let Some(start) = open_item.take()
            {
                nodes.push(ItemNode {
                    start,
                    end: bytes.end,
                });
            } else if depth == 1 && in_items {
                in_items = false;
                found = Some((items_key.clone()?, std::mem::take(&mut nodes), flow));
            }
        }
    }
    found
}

/// Skip YAML trivia (spaces, tabs, line breaks, comments) from `at`; returns where it stops.
/// A `#` starts a comment only at the start of a line or after whitespace.
fn skip_trivia(text: &str, mut at: usize) -> usize {
    let bytes = text.as_bytes();
    while at < bytes.len() {
        match bytes[at] {
            b' ' | b'\t' | b'\n' => at += 1,
            b'#' if at == 0 || matches!(bytes[at - 1], b' ' | b'\t' | b'\n') => {
                at = text[at..].find('\n').map_or(bytes.len(), |n| at + n);
            }
            _ => break,
        }
    }
    at
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |n| n + 1)
}

/// The verbatim range of every entry of `items`, from the parser's positions: entry `i` runs
/// from the start of the line of its `-` to the start of the line of the next `-` (comments
/// between entries go with the one above), the last one to the end of the trivia after it.
/// Everything in a range besides the parsed node must be trivia and the one `-`, or the
/// layout is not one we copy.
fn scan_items(doc_start: usize, doc: &str) -> Option<ItemsText> {
    let (key, nodes, flow) = item_nodes(doc)?;
    if flow {
        return Some(ItemsText {
            dash_column: 0,
            ranges: nodes
                .iter()
                .map(|n| doc_start + n.start..doc_start + n.end)
                .collect(),
            reemit: true,
        });
    }
    if doc.contains('\r') {
        return None;
    }
    let bytes = doc.as_bytes();
    // The `:` after the key, then trivia.
    let colon = skip_trivia(doc, key.end);
    if bytes.get(colon) != Some(&b':') {
        return None;
    }
    let mut cursor = colon + 1;
    let mut dash_column = None;
    let mut starts = Vec::with_capacity(nodes.len());
    for node in &nodes {
        let dash = skip_trivia(doc, cursor);
        if bytes.get(dash) != Some(&b'-') || node.start <= dash {
            return None;
        }
        // `-` must be followed by whitespace and only trivia up to the node.
        if !matches!(bytes.get(dash + 1), Some(b' ' | b'\t' | b'\n'))
            || skip_trivia(doc, dash + 1) != node.start
        {
            return None;
        }
        let start = line_start(doc, dash);
        if !doc[start..dash].bytes().all(|b| b == b' ') {
            return None;
        }
        if *dash_column.get_or_insert(dash - start) != dash - start {
            return None;
        }
        starts.push(start);
        cursor = node.end;
    }
    let last_end = nodes.last()?.end;
    // The last entry takes the rest of its line and the blank and comment lines after it.
    let mut end = if doc[line_start(doc, last_end)..last_end]
        .bytes()
        .all(|b| b == b' ')
    {
        line_start(doc, last_end)
    } else {
        let after = skip_trivia_in_line(doc, last_end);
        match bytes.get(after) {
            None => doc.len(),
            Some(b'\n') => after + 1,
            Some(_) => return None,
        }
    };
    while end < doc.len() {
        let next = doc[end..].find('\n').map_or(doc.len(), |n| end + n + 1);
        let line = doc[end..next].trim_start_matches([' ', '\t']);
        if line.trim_end().is_empty() || line.starts_with('#') {
            end = next;
        } else {
            break;
        }
    }
    let mut ranges = Vec::with_capacity(starts.len());
    for (i, start) in starts.iter().enumerate() {
        let stop = starts.get(i + 1).copied().unwrap_or(end);
        ranges.push(doc_start + start..doc_start + stop);
    }
    Some(ItemsText {
        dash_column: dash_column.unwrap_or(0),
        ranges,
        reemit: false,
    })
}

/// Skip spaces, tabs and a comment on the current line.
fn skip_trivia_in_line(text: &str, mut at: usize) -> usize {
    let bytes = text.as_bytes();
    while at < bytes.len() {
        match bytes[at] {
            b' ' | b'\t' => at += 1,
            b'#' if at == 0 || matches!(bytes[at - 1], b' ' | b'\t') => {
                return text[at..].find('\n').map_or(bytes.len(), |n| at + n);
            }
            _ => break,
        }
    }
    at
}

/// Check the top-level fields of a ResourceList and take out its function config.
fn function_config_of(map: &mut Map<String, Value>) -> Result<Option<Value>, InputError> {
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind != "ResourceList" && kind != "List" {
        let shown = if kind.is_empty() {
            "no kind".to_owned()
        } else {
            format!("kind {kind}")
        };
        return Err(InputError(format!(
            "input is not a ResourceList: expected kind ResourceList or List, found {shown}"
        )));
    }
    match map.shift_remove("functionConfig") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) if m.is_empty() => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(v)),
        Some(other) => Err(InputError(format!(
            "input is not a ResourceList: functionConfig must be an object, not {}",
            crate::strict::type_name(&other)
        ))),
    }
}

/// Whether a skeleton keeps an annotation: ours, the function annotation, local-config, path
/// and index.
fn wanted_annotation(k: &str) -> bool {
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
fn skeleton(mut item: Map<String, Value>, types: &mut Types) -> Item {
    let text = |v: Option<&Value>| v.is_none_or(Value::is_string);
    let compact = text(item.get("apiVersion"))
        && text(item.get("kind"))
        && item
            .get("metadata")
            .and_then(Value::as_object)
            .is_some_and(|meta| {
                text(meta.get("name"))
                    && text(meta.get("namespace"))
                    && match meta.get("annotations") {
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
    let boxed = |v: Option<Value>| match v {
        Some(Value::String(s)) => Some(s.into_boxed_str()),
        _ => None,
    };
    let type_meta = types.intern(TypeMeta {
        api_version: boxed(item.remove("apiVersion")),
        kind: boxed(item.remove("kind")),
    });
    // (A mapping, as checked above.)
    let mut meta = match item.remove("metadata") {
        Some(Value::Object(meta)) => meta,
        _ => Map::new(),
    };
    let annotations = match meta.remove("annotations") {
        Some(Value::Object(a)) => Some(
            a.into_iter()
                .filter(|(k, _)| wanted_annotation(k))
                .filter_map(|(k, v)| match v {
                    Value::String(v) => Some((k.into_boxed_str(), v.into_boxed_str())),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    };
    Item::Skeleton(Skeleton {
        type_meta,
        name: boxed(meta.remove("name")),
        namespace: boxed(meta.remove("namespace")),
        annotations,
    })
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

/// Read a ResourceList for the pipeline with memory near the input size: when the items are in
/// the plain block layout, each is parsed on its own and kept as a skeleton (see [`skeleton`]),
/// since items the function leaves alone are copied from the input text
/// anyway; [`Verbatim::item_at`] reads an item in full when the pipeline needs its body.
/// Anything else (another layout, anchors, an error to report) goes through [`read`].
pub fn read_owned(mut text: String) -> Result<ResourceList<Item>, InputError> {
    // stdin was read into a buffer that grew by doubling; the text is kept for the whole run.
    text.shrink_to_fit();
    if let Some((items, function_config, scan)) = read_skeletons(&text) {
        return Ok(ResourceList {
            items,
            function_config,
            verbatim: Some(Verbatim {
                text,
                dash_column: scan.dash_column,
                ranges: scan.ranges.into_iter().map(Some).collect(),
                reemit: scan.reemit,
            }),
        });
    }
    match read_streaming(&text) {
        Some(list) => Ok(list),
        None => read(&text).map(ResourceList::from),
    }
}

/// The reader for every other layout (anchors and aliases, tags, CRLF, ...): one pass of the
/// parser in which each item, as soon as it is parsed, is emitted as YAML (what [`write`]
/// would emit for it) and kept as a skeleton; the emitted text then serves as the items'
/// verbatim text. Memory stays near the input size instead of holding every item whole.
/// `None` on anything [`read`] would refuse (it reports the error).
fn read_streaming(text: &str) -> Option<ResourceList<Item>> {
    let chunks = yaml::split_documents(text);
    let [(_, doc)] = chunks.as_slice() else {
        return None;
    };
    let mut sink = ItemSink::default();
    let Value::Object(mut map) = yaml::parse_seed(doc, TopLevel(&mut sink)).ok()? else {
        return None;
    };
    let function_config = function_config_of(&mut map).ok()?;
    sink.emitted.shrink_to_fit();
    Some(ResourceList {
        items: sink.items,
        function_config,
        verbatim: Some(Verbatim {
            text: sink.emitted,
            dash_column: 0,
            ranges: sink.ranges.into_iter().map(Some).collect(),
            reemit: false,
        }),
    })
}

/// Where [`read_streaming`] puts the items: skeletons, their emitted text and its ranges.
#[derive(Default)]
struct ItemSink {
    items: Vec<Item>,
    types: Types,
    emitted: String,
    ranges: Vec<std::ops::Range<usize>>,
    seen: bool,
}

/// The top-level mapping: every key but `items` as a value, `items` through [`Items`].
struct TopLevel<'a>(&'a mut ItemSink);

impl<'de> serde::de::DeserializeSeed<'de> for TopLevel<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for TopLevel<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a ResourceList mapping")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if key == "items" {
                if self.0.seen {
                    return Err(serde::de::Error::custom("duplicate key `items`"));
                }
                self.0.seen = true;
                access.next_value_seed(Items(self.0))?;
            } else {
                let value = access.next_value::<Value>()?;
                map.insert(key, value);
            }
        }
        Ok(Value::Object(map))
    }
}

/// The `items` sequence, one item at a time.
struct Items<'a>(&'a mut ItemSink);

impl<'de> serde::de::DeserializeSeed<'de> for Items<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Items<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let sink = self.0;
        while let Some(item) = seq.next_element::<Value>()? {
            let Value::Object(map) = item else {
                return Err(serde::de::Error::custom("an item is not an object"));
            };
            let start = sink.emitted.len();
            // A map serializes as its Value::Object does: the text `write` would emit.
            yaml::emit_into(&mut sink.emitted, &std::slice::from_ref(&map));
            sink.ranges.push(start..sink.emitted.len());
            sink.items.push(skeleton(map, &mut sink.types));
        }
        Ok(())
    }
}

type Skeletons = (Vec<Item>, Option<Value>, ItemsText);

fn read_skeletons(text: &str) -> Option<Skeletons> {
    yaml::check_input_size(text).ok()?;
    let chunks = yaml::split_documents(text);
    let [(_, doc)] = chunks.as_slice() else {
        return None;
    };
    let doc_start = doc.as_ptr() as usize - text.as_ptr() as usize;
    let scan = scan_items(doc_start, doc)?;
    let (first, last) = (scan.ranges.first()?, scan.ranges.last()?);
    // Everything but the items: the header and whatever follows the sequence.
    let mut header = String::with_capacity(first.start - doc_start + 256);
    header.push_str(&text[doc_start..first.start]);
    header.push_str(&text[last.end..doc_start + doc.len()]);
    let (value, shape) = yaml::parse_with_shape(&header).ok()?;
    let plain = |s: yaml::Shape| s.aliases == 0 && s.anchors == 0 && s.merge_keys == 0;
    let Value::Object(mut map) = value else {
        return None;
    };
    // Without the items' text, `items` is empty: `items:` (block) or `items: []` (flow).
    let emptied = match map.get("items") {
        None | Some(Value::Null) => !scan.reemit,
        Some(Value::Array(a)) => scan.reemit && a.is_empty(),
        Some(_) => false,
    };
    if !plain(shape) || !emptied {
        return None;
    }
    let function_config = function_config_of(&mut map).ok()?;
    let mut items = Vec::with_capacity(scan.ranges.len());
    let mut types = Types::default();
    for range in &scan.ranges {
        let (value, shape) = yaml::parse_with_shape(&text[range.clone()]).ok()?;
        if !plain(shape) {
            return None;
        }
        let item = match value {
            Value::Object(item) if scan.reemit => item,
            Value::Array(mut one) if !scan.reemit && one.len() == 1 => match one.pop() {
                Some(Value::Object(item)) => item,
                _ => return None,
            },
            _ => return None,
        };
        items.push(skeleton(item, &mut types));
    }
    Some((items, function_config, scan))
}

/// Read a ResourceList (`config.kubernetes.io/v1`, `v1beta1`, `v1alpha1`, or a `List`).
pub fn read(text: &str) -> Result<ResourceList, InputError> {
    yaml::check_input_size(text).map_err(|e| InputError(e.to_string()))?;
    let chunks = yaml::split_documents(text);
    if chunks.len() != 1 {
        return Err(InputError(format!(
            "input is not a ResourceList: expected one YAML document of kind ResourceList, found {} documents",
            chunks.len()
        )));
    }
    let (first_line, doc) = chunks[0];
    let (value, shape) = yaml::parse_with_shape(doc).map_err(|e| {
        let e = yaml::YamlError {
            line: e.line.map(|l| l + first_line - 1),
            message: e.message,
        };
        InputError(format!("input is not valid YAML: {e}"))
    })?;
    let Value::Object(mut map) = value else {
        let what = if value.is_null() {
            "empty"
        } else {
            "not a mapping"
        };
        return Err(InputError(format!(
            "input is not a ResourceList: the document is {what}"
        )));
    };
    let doc_start = doc.as_ptr() as usize - text.as_ptr() as usize;
    let function_config = function_config_of(&mut map)?;
    let items = match map.shift_remove("items") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(InputError(format!(
                "input is not a ResourceList: items must be a list, not {}",
                crate::strict::type_name(&other)
            )));
        }
    };
    if let Some(i) = items.iter().position(|item| !item.is_object()) {
        return Err(InputError(format!(
            "input is not a ResourceList: items[{i}] is not an object"
        )));
    }
    // Aliases and merge keys tie items' text to other places; re-emit in that case.
    let plain = shape.aliases == 0 && shape.anchors == 0 && shape.merge_keys == 0;
    // (Flow layouts have nothing to copy, and the items are already whole.)
    let verbatim = plain
        .then(|| scan_items(doc_start, doc))
        .flatten()
        .filter(|scan| !scan.reemit && scan.ranges.len() == items.len())
        .map(|scan| Verbatim {
            text: text.to_owned(),
            dash_column: scan.dash_column,
            ranges: scan.ranges.into_iter().map(Some).collect(),
            reemit: false,
        });
    Ok(ResourceList {
        items,
        function_config,
        verbatim,
    })
}

impl Verbatim {
    /// The full item whose text is at `range` (items read by [`read_owned`] are skeletons).
    pub fn item_at(&self, range: &std::ops::Range<usize>) -> Option<Value> {
        let (value, _) = yaml::parse_with_shape(self.text.get(range.clone())?).ok()?;
        match value {
            Value::Array(mut one) if !self.reemit && one.len() == 1 => one.pop(),
            item @ Value::Object(_) if self.reemit => Some(item),
            _ => None,
        }
    }
}

/// Write a ResourceList with results. Items with a verbatim range are copied from the input.
pub fn write<I: AsValue>(list: ResourceList<I>, results: Option<Vec<Value>>) -> String {
    let capacity = list.verbatim.as_ref().map_or(4096, |v| v.text.len() + 4096);
    let mut out = String::with_capacity(capacity);
    write_into(list, results, &mut out, |_| {});
    out
}

/// How much of the output [`write_pieces`] gathers before handing it on.
const PIECE: usize = 64 * 1024;

/// [`write`] in pieces of about 64 KiB, each handed to `put` as soon as it is complete, so
/// that the output is never whole in memory (it is about as large as the input).
pub fn write_pieces<I: AsValue>(
    list: ResourceList<I>,
    results: Option<Vec<Value>>,
    mut put: impl FnMut(&str),
) {
    let mut out = String::with_capacity(2 * PIECE);
    write_into(list, results, &mut out, |out| {
        if out.len() >= PIECE {
            put(out);
            out.clear();
        }
    });
    put(&out);
}

/// Append the output to `out`, calling `piece` after each item (it may take what `out` holds).
fn write_into<I: AsValue>(
    list: ResourceList<I>,
    results: Option<Vec<Value>>,
    out: &mut String,
    mut piece: impl FnMut(&mut String),
) {
    let ResourceList {
        items,
        function_config,
        verbatim,
    } = list;
    out.push_str("apiVersion: ");
    out.push_str(API_VERSION);
    out.push_str("\nkind: ResourceList\n");
    if items.is_empty() {
        out.push_str("items: []\n");
    } else {
        out.push_str("items:\n");
    }
    for (i, item) in items.iter().enumerate() {
        let range = verbatim
            .as_ref()
            .and_then(|v| v.ranges.get(i).cloned().flatten().map(|r| (v, r)));
        match range {
            Some((v, range)) if !v.reemit => {
                push_dedented(out, &v.text[range], v.dash_column);
            }
            // One item at a time, so a flow-style input is never whole in memory. The text
            // parsed when it was read, so it parses again; the skeleton is the last resort.
            Some((v, range)) => match v.item_at(&range) {
                Some(full) => yaml::emit_into(out, &std::slice::from_ref(&full)),
                None => yaml::emit_into(out, &std::slice::from_ref(&*item.as_value())),
            },
            None => yaml::emit_into(out, &std::slice::from_ref(&*item.as_value())),
        }
        piece(out);
    }
    let mut rest = Map::new();
    if let Some(fc) = function_config {
        rest.insert("functionConfig".into(), fc);
    }
    if let Some(results) = results.filter(|r| !r.is_empty()) {
        rest.insert("results".into(), Value::Array(results));
    }
    if !rest.is_empty() {
        yaml::emit_into(out, &Value::Object(rest));
    }
}

/// Append an item's input text with its sequence indentation removed (we write `-` at
/// column 0), ending with a newline.
fn push_dedented(out: &mut String, text: &str, column: usize) {
    if column == 0 {
        out.push_str(text);
    } else {
        for line in text.split_inclusive('\n') {
            let spaces = line.len() - line.trim_start_matches(' ').len();
            out.push_str(&line[spaces.min(column)..]);
        }
    }
    if !out.ends_with('\n') {
        out.push('\n');
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
    set_in_metadata_map(item, "annotations", key, value);
}

/// Set a label, creating `metadata.labels` as needed.
pub fn set_label(item: &mut Value, key: &str, value: &str) {
    set_in_metadata_map(item, "labels", key, value);
}

fn set_in_metadata_map(item: &mut Value, map_key: &str, key: &str, value: &str) {
    let Value::Object(obj) = item else { return };
    let metadata = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    let Value::Object(metadata) = metadata else {
        return;
    };
    let map = metadata
        .entry(map_key)
        .or_insert_with(|| Value::Object(Map::new()));
    if !map.is_object() {
        *map = Value::Object(Map::new());
    }
    if let Value::Object(map) = map {
        map.insert(key.to_owned(), Value::String(value.to_owned()));
    }
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
    let ns = str_at(item, &["metadata", "namespace"]);
    let api = str_at(item, &["apiVersion"]);
    let kind = str_at(item, &["kind"]);
    let name = str_at(item, &["metadata", "name"]);
    if ns.is_empty() {
        format!("{api}/{kind}/{name}")
    } else {
        format!("{api}/{kind}/{ns}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}

#[cfg(test)]
mod verbatim_tests {
    use super::*;

    fn round_trip(input: &str) -> String {
        write(read(input).unwrap(), None)
    }

    #[test]
    fn untouched_items_keep_their_text() {
        let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- # header comment\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a # trailing\n  data: {flag: 'on'}\n\n# between items\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: f}\n";
        let out = round_trip(input);
        assert!(
            out.contains("- # header comment\n  apiVersion: v1\n"),
            "{out}"
        );
        assert!(out.contains("  data: {flag: 'on'}\n"), "{out}");
        assert!(
            out.contains(
                "# between items\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n"
            ),
            "{out}"
        );
        assert_eq!(read(&out).unwrap().items, read(input).unwrap().items);
    }

    #[test]
    fn indented_sequences_are_dedented() {
        let input = "kind: ResourceList\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: a\n    data:\n      script: |\n        line\n          indented\n";
        let out = round_trip(input);
        assert!(
            out.contains("items:\n- apiVersion: v1\n  kind: ConfigMap\n"),
            "{out}"
        );
        assert_eq!(read(&out).unwrap().items, read(input).unwrap().items);
    }

    #[test]
    fn other_layouts_are_re_emitted() {
        for input in [
            "{\"kind\": \"ResourceList\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}}]}",
            "kind: ResourceList\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}]\n",
            "kind: ResourceList\r\nitems:\r\n- apiVersion: v1\r\n  kind: ConfigMap\r\n  metadata: {name: a}\r\n",
            "kind: ResourceList\nitems:\n- &a\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- *a\n",
        ] {
            let list = read(input).unwrap();
            assert!(list.verbatim.is_none(), "{input:?}");
            let out = write(list.clone(), None);
            assert_eq!(read(&out).unwrap().items, list.items, "{input:?}");
        }
    }
}

#[cfg(test)]
mod skeleton_tests {
    use super::*;

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

#[cfg(test)]
mod issue9_f1 {
    use super::*;

    /// The real key is `items :`; a second top-level key `items:#x` starts like `items:` and
    /// carries a ClusterRoleBinding. Only the ConfigMap is an item.
    const SPOOF: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems :\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: harmless\nitems:#x:\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRoleBinding\n  metadata:\n    name: evil\n  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n  subjects: [{kind: User, name: mallory}]\n";

    #[test]
    fn issue9_f1_a_key_spelled_like_items_cannot_replace_an_item() {
        for list in [
            read(SPOOF).unwrap().into(),
            read_owned(SPOOF.to_owned()).unwrap(),
        ] {
            let out = write(list, None);
            assert!(!out.contains("ClusterRoleBinding"), "{out}");
            let back = read(&out).unwrap();
            assert_eq!(back.items.len(), 1, "{out}");
            assert_eq!(str_at(&back.items[0], &["kind"]), "ConfigMap", "{out}");
        }
    }
}

/// For generated top-level layouts, what we write back parses to the items we read.
#[cfg(test)]
mod layout_properties {
    use super::*;
    use proptest::prelude::*;
    use std::fmt::Write as _;

    #[derive(Debug, Clone)]
    struct Layout {
        /// How the `items` key is written.
        key: &'static str,
        /// Between `items:` and the first entry.
        after_key: &'static str,
        /// Column of the `-` markers (block style), or flow style.
        indent: Option<usize>,
        /// Per item: its name, whether it is written as a flow mapping, a comment before it,
        /// whether it has a tricky scalar.
        items: Vec<(u8, bool, bool, bool)>,
        /// Other top-level entries and where `items` goes among them.
        decoys: Vec<&'static str>,
        items_position: usize,
        /// An anchor in the header and an alias to it in the first item.
        anchored: bool,
    }

    const KEYS: &[&str] = &[
        "items:",
        "items :",
        "\"items\":",
        "'items':",
        "? items\n:",
        "!!str items:",
    ];
    const AFTER_KEY: &[&str] = &["", " # comment", "\n# comment line", " !!seq", "\n\n"];
    const DECOYS: &[&str] = &[
        "apiVersion: config.kubernetes.io/v1",
        "kind: ResourceList",
        "items:#x:\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRoleBinding\n  metadata: {name: evil}",
        "\"items:#y\":\n- {apiVersion: v1, kind: Secret, metadata: {name: evil}}",
        "itemsx:\n- kind: Evil",
        "note: \"items:\n  - kind: Evil\"",
        "script: |\n  items:\n  - kind: Evil",
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: fc}",
        "# items:\n# - kind: Evil",
    ];

    fn render(layout: &Layout) -> String {
        let mut items_text = String::new();
        let _ = write!(items_text, "{}{}", layout.key, layout.after_key);
        match layout.indent {
            None => {
                items_text.push_str("\n  [");
                for (i, (name, _, _, tricky)) in layout.items.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    let data = if *tricky { ", data: {f: 'on'}" } else { "" };
                    let _ = write!(
                        items_text,
                        "{sep}{{apiVersion: v1, kind: ConfigMap, metadata: {{name: n{name}}}{data}}}"
                    );
                }
                items_text.push_str("]\n");
            }
            Some(col) => {
                items_text.push('\n');
                let pad = " ".repeat(col);
                for (i, (name, flow, comment, tricky)) in layout.items.iter().enumerate() {
                    if *comment {
                        let _ = writeln!(items_text, "{pad}# before {name}\n");
                    }
                    let labels = if layout.anchored && i == 0 {
                        ", labels: *l"
                    } else {
                        ""
                    };
                    if *flow {
                        let data = if *tricky { ", data: {f: 'on'}" } else { "" };
                        let _ = writeln!(
                            items_text,
                            "{pad}- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: n{name}{labels}}}{data}}} # after"
                        );
                    } else {
                        let _ = writeln!(
                            items_text,
                            "{pad}- apiVersion: v1\n{pad}  kind: ConfigMap\n{pad}  metadata: {{name: n{name}{labels}}}"
                        );
                        if *tricky {
                            let _ = writeln!(
                                items_text,
                                "{pad}  data:\n{pad}    s: |\n{pad}      items:\n{pad}      - kind: Evil\n{pad}    q: \"a\n{pad}      b\""
                            );
                        }
                    }
                }
            }
        }
        let mut out = String::new();
        if layout.anchored {
            out.push_str("labels: &l {team: a}\n");
        }
        let position = layout.items_position.min(layout.decoys.len());
        for (i, decoy) in layout.decoys.iter().enumerate() {
            if i == position {
                out.push_str(&items_text);
            }
            let _ = writeln!(out, "{decoy}");
        }
        if position == layout.decoys.len() {
            out.push_str(&items_text);
        }
        if !layout.decoys.contains(&"kind: ResourceList") {
            out.push_str("kind: ResourceList\n");
        }
        out
    }

    fn layout() -> impl Strategy<Value = Layout> {
        (
            prop::sample::select(KEYS),
            prop::sample::select(AFTER_KEY),
            prop_oneof![Just(None), (0usize..4).prop_map(Some)],
            prop::collection::vec(
                (any::<u8>(), any::<bool>(), any::<bool>(), any::<bool>()),
                1..5,
            ),
            prop::sample::subsequence(DECOYS, 0..DECOYS.len()).prop_shuffle(),
            0usize..8,
            any::<bool>(),
        )
            .prop_map(
                |(key, after_key, indent, items, decoys, items_position, anchored)| Layout {
                    key,
                    after_key,
                    indent,
                    items,
                    decoys,
                    items_position,
                    anchored,
                },
            )
    }

    /// The pipeline reads skeletons' bodies when it needs them; here, all of them.
    fn hydrated(mut list: ResourceList<Item>) -> Vec<Value> {
        if let Some(v) = &list.verbatim {
            for (item, range) in list.items.iter_mut().zip(&v.ranges) {
                if let Some(full) = range.as_ref().and_then(|r| v.item_at(r)) {
                    *item = Item::from(full);
                }
            }
        }
        list.items.into_iter().map(Item::into_value).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(768))]

        #[test]
        fn written_items_are_the_items_read(layout in layout()) {
            let input = render(&layout);
            let eager = read(&input);
            let eager = eager.map_err(|e| TestCaseError::fail(format!("{e}\ninput:\n{input}")))?;
            prop_assert_eq!(eager.items.len(), layout.items.len(), "input:\n{}", input);
            let lazy = read_owned(input.clone()).unwrap();
            prop_assert_eq!(&hydrated(lazy.clone()), &eager.items, "lazy read of:\n{}", input);
            for list in [eager.clone().into(), lazy] {
                let out = write::<Item>(list, None);
                let back = read(&out).unwrap();
                prop_assert_eq!(&back.items, &eager.items, "input:\n{}\noutput:\n{}", input, out);
            }
        }
    }
}

/// The pass-through property the fuzz target (`fuzz/fuzz_targets/resource_list.rs`) and the
/// seed-corpus tests check: reading never panics; the lazy and the eager reader agree; what
/// [`write`] produces reads back to the same items, whether the items came from the eager
/// reader or as skeletons with verbatim text. `Err` describes a violation.
pub fn check_round_trip(input: &str) -> Result<(), String> {
    let eager = read(input);
    let lazy = read_owned(input.to_owned());
    let (eager, lazy) = match (eager, lazy) {
        (Ok(eager), Ok(lazy)) => (eager, lazy),
        (Err(a), Err(b)) if a == b => return Ok(()),
        (a, b) => {
            return Err(format!(
                "eager and lazy readers disagree: {:?} vs {:?}",
                a.map(|l| l.items.len()),
                b.map(|l| l.items.len())
            ));
        }
    };
    let mut hydrated = lazy.items.clone();
    if let Some(v) = &lazy.verbatim {
        for (item, range) in hydrated.iter_mut().zip(&v.ranges) {
            if let Some(range) = range {
                *item = Item::from(v.item_at(range).ok_or_else(|| {
                    format!("verbatim range {range:?} does not parse to an item")
                })?);
            }
        }
    }
    let hydrated: Vec<Value> = hydrated.into_iter().map(Item::into_value).collect();
    if hydrated != eager.items {
        return Err("hydrated skeletons differ from the eagerly read items".to_owned());
    }
    if lazy.function_config != eager.function_config {
        return Err("the readers disagree on functionConfig".to_owned());
    }
    for (which, list) in [("eager", eager.clone().into()), ("lazy", lazy)] {
        let out = write::<Item>(list, None);
        let back =
            read(&out).map_err(|e| format!("{which} output does not read back: {e}\n{out}"))?;
        if back.items != eager.items {
            return Err(format!(
                "{which} output has other items than the input:\n{out}"
            ));
        }
        if back.function_config != eager.function_config {
            return Err(format!("{which} output has another functionConfig:\n{out}"));
        }
    }
    Ok(())
}

/// The fuzz target's property in the normal test suite: over the seed corpus, the golden
/// inputs, and byte-level mutations of them (no nightly or cargo-fuzz needed).
#[cfg(test)]
mod fuzz_corpus {
    use super::*;
    use proptest::prelude::*;

    fn seeds() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut seeds = Vec::new();
        let corpus = root.join("fuzz/corpus/resource_list");
        for entry in fs_err::read_dir(&corpus).unwrap() {
            let path = entry.unwrap().path();
            seeds.push((
                path.display().to_string(),
                fs_err::read_to_string(&path).unwrap(),
            ));
        }
        for entry in fs_err::read_dir(root.join("testdata/golden")).unwrap() {
            let path = entry.unwrap().path().join("input.yaml");
            if let Ok(text) = fs_err::read_to_string(&path) {
                seeds.push((path.display().to_string(), text));
            }
        }
        seeds.sort();
        assert!(seeds.len() > 20, "seed corpus is missing");
        seeds
    }

    /// Run the check with the main thread's stack size: debug builds of the parser need more
    /// than a test thread's 2 MiB for the deepest nesting we accept (`err-yaml-too-deep`).
    fn checked(text: String) -> Result<(), String> {
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || check_round_trip(&text))
            .map_err(|e| e.to_string())?
            .join()
            .map_err(|_| "the check panicked".to_owned())?
    }

    #[test]
    fn seed_corpus_round_trips() {
        for (name, text) in seeds() {
            if let Err(problem) = checked(text) {
                panic!("{name}: {problem}");
            }
        }
    }

    /// A mutation: at a position (a fraction of the length), delete some bytes and insert a
    /// snippet of YAML syntax.
    fn mutation() -> impl Strategy<Value = (f64, usize, &'static str)> {
        (
            0.0f64..1.0,
            0usize..4,
            prop::sample::select(
                &[
                    "",
                    " ",
                    "\n",
                    "-",
                    "- ",
                    ":",
                    ": ",
                    "#",
                    " #",
                    "&a ",
                    "*a",
                    "!!str ",
                    "{",
                    "}",
                    "[",
                    "]",
                    ",",
                    "'",
                    "\"",
                    "items:",
                    "items :",
                    "\n- ",
                    "\n  ",
                    "? ",
                    "|\n",
                    "---\n",
                    "\t",
                    "\r\n",
                    "items:#x:\n- kind: Evil\n",
                ][..],
            ),
        )
    }

    fn apply(text: &str, (at, delete, insert): (f64, usize, &str)) -> String {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let mut pos = ((text.len() as f64) * at) as usize;
        while !text.is_char_boundary(pos) {
            pos -= 1;
        }
        let mut end = (pos + delete).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        format!("{}{insert}{}", &text[..pos], &text[end..])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn mutated_seeds_round_trip(
            seed in any::<prop::sample::Index>(),
            mutations in prop::collection::vec(mutation(), 1..4),
        ) {
            static SEEDS: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
            let seeds = SEEDS.get_or_init(seeds);
            let (name, text) = &seeds[seed.index(seeds.len())];
            let mut text = text.clone();
            for m in mutations {
                text = apply(&text, m);
            }
            if let Err(problem) = checked(text.clone()) {
                return Err(TestCaseError::fail(format!("{name} mutated: {problem}\ninput:\n{text}")));
            }
        }
    }
}

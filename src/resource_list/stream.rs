//! The items of a ResourceList one at a time, as the parser reads them: for layouts whose
//! items' text cannot be copied (anchors and aliases, tags, CRLF, ...), the reader keeps
//! skeletons and the writer reads the items again in one more pass (issue 20: a copy of every
//! item as emitted YAML, kept beside the input, took more memory than the input itself).

use std::fmt;

use serde_json::{Map, Value};

use crate::yaml;

/// Parse the one document of `text` and hand each item of its `items` to `each`, in order,
/// as soon as it is read; `each` answers whether to go on. The top-level mapping without
/// `items` when every item was read; `None` when `each` stopped the parse or the text is not
/// a ResourceList the readers accept (`read` reports why).
pub(super) fn each_item(
    text: &str,
    each: &mut dyn FnMut(Map<String, Value>) -> bool,
) -> Option<Map<String, Value>> {
    let chunks = yaml::split_documents(text);
    let [(_, doc)] = chunks.as_slice() else {
        return None;
    };
    let mut sink = Sink {
        each,
        seen: false,
        stopped: false,
    };
    let parsed = yaml::parse_seed(doc, TopLevel(&mut sink)).ok();
    match parsed {
        Some(Value::Object(map)) if !sink.stopped => Some(map),
        _ => None,
    }
}

/// Where the items go, and what the parse has seen.
struct Sink<'a> {
    each: &'a mut dyn FnMut(Map<String, Value>) -> bool,
    /// `items` was met (a second one is an error).
    seen: bool,
    /// `each` asked to stop.
    stopped: bool,
}

/// The top-level mapping: every key but `items` as a value, `items` through [`Items`].
struct TopLevel<'s, 'a>(&'s mut Sink<'a>);

impl<'de> serde::de::DeserializeSeed<'de> for TopLevel<'_, '_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for TopLevel<'_, '_> {
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
                access.next_value_seed(Items(&mut *self.0))?;
            } else {
                let value = access.next_value::<Value>()?;
                map.insert(key, value);
            }
        }
        Ok(Value::Object(map))
    }
}

/// The `items` sequence, one item at a time.
struct Items<'s, 'a>(&'s mut Sink<'a>);

impl<'de> serde::de::DeserializeSeed<'de> for Items<'_, '_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Items<'_, '_> {
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
            if !(sink.each)(map) {
                sink.stopped = true;
                return Err(serde::de::Error::custom("stopped"));
            }
        }
        Ok(())
    }
}

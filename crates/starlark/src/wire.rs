//! The KRM function wire format: a ResourceList in (YAML or JSON), one out (YAML), and which
//! script to run. Two function configs name a script:
//!
//! - kpt's `StarlarkRun` (`fn.kpt.dev/v1alpha1`, the script in `source`), which the script
//!   sees as its `functionConfig`, as under kpt's own starlark function;
//! - krm-catalog's `StarlarkRun` (`krm-catalog.dev/v1alpha1`): `metadata.name` names the
//!   script in messages, `source` is its text, `functionConfig` is the function config the
//!   script sees (the catalog kind's item), and `redact: true` keeps the script's text out of
//!   error messages.

use serde::ser::{Serialize, SerializeMap as _, SerializeSeq as _, Serializer};
use serde_json::{Map, Value};

use crate::error::Error;

/// krm-catalog's wrapper: the script for a catalog kind, and that kind's item.
pub const CATALOG_API_VERSION: &str = "krm-catalog.dev/v1alpha1";
/// kpt's starlark function config.
pub const KPT_API_VERSION: &str = "fn.kpt.dev/v1alpha1";
/// The kind of both.
pub const KIND: &str = "StarlarkRun";

/// The ResourceList versions a KRM function reads.
const VERSIONS: [&str; 3] = [
    "config.kubernetes.io/v1",
    "config.kubernetes.io/v1beta1",
    "config.kubernetes.io/v1alpha1",
];

/// A ResourceList and the script its function config names.
#[derive(Debug)]
pub struct Input {
    /// The ResourceList the script sees as `ctx.resource_list`.
    pub list: Value,
    /// How messages name the script.
    pub script: String,
    /// The script's text.
    pub source: String,
    /// Whether errors may not quote the script (krm-catalog sets `redact: true` for a file an
    /// inline catalog names: the package chose it, and it may be anything).
    pub redact: bool,
}

/// Read a ResourceList (YAML, or JSON, which is YAML) and the script it names.
pub fn read(text: &str) -> Result<Input, Error> {
    let budget = serde_saphyr::budget! {
        max_depth: 128,
    };
    let options = serde_saphyr::options! {
        budget: budget,
        strict_booleans: true,
        with_snippet: false,
    };
    let value: Value = serde_saphyr::from_str_with_options(text, options)
        .map_err(|e| Error::NotAResourceList(e.to_string()))?;
    let Value::Object(mut list) = value else {
        return Err(Error::NotAResourceList("it is not a mapping".to_owned()));
    };
    let api_version = list.get("apiVersion").and_then(Value::as_str);
    if list.get("kind").and_then(Value::as_str) != Some("ResourceList")
        || !api_version.is_some_and(|v| VERSIONS.contains(&v))
    {
        return Err(Error::NotAResourceList(format!(
            "expected kind ResourceList of apiVersion {}",
            VERSIONS.join(", ")
        )));
    }
    match list.get("items") {
        None | Some(Value::Null) => {
            list.insert("items".to_owned(), Value::Array(Vec::new()));
        }
        Some(Value::Array(_)) => {}
        Some(_) => return Err(Error::NotAResourceList("items is not a list".to_owned())),
    }
    list.remove("results");
    let Some(Value::Object(mut config)) = list.remove("functionConfig") else {
        return Err(Error::Config("there is none".to_owned()));
    };
    let field = |config: &Map<String, Value>, name: &str| {
        config.get(name).and_then(Value::as_str).map(str::to_owned)
    };
    let api_version = field(&config, "apiVersion").unwrap_or_default();
    if field(&config, "kind").as_deref() != Some(KIND)
        || ![KPT_API_VERSION, CATALOG_API_VERSION].contains(&api_version.as_str())
    {
        return Err(Error::Config(format!(
            "it is {} {}",
            api_version,
            field(&config, "kind").unwrap_or_default()
        )));
    }
    let Some(source) = field(&config, "source") else {
        return Err(Error::Config(
            "`source` is missing or not a string".to_owned(),
        ));
    };
    let script = config
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
        .unwrap_or("script")
        .to_owned();
    let redact = config.get("redact").and_then(Value::as_bool) == Some(true);
    let seen = if api_version == CATALOG_API_VERSION {
        config.remove("functionConfig").unwrap_or(Value::Null)
    } else {
        Value::Object(config)
    };
    list.insert("functionConfig".to_owned(), seen);
    Ok(Input {
        list: Value::Object(list),
        script,
        source,
        redact,
    })
}

/// The ResourceList as YAML. Numbers go out as what they are (an integer as an integer), not
/// as serde_json's private form of `arbitrary_precision`, which starlark turns on.
pub fn write(list: &Value) -> Result<String, Error> {
    let options = serde_saphyr::ser_options! {
        folded_wrap_chars: usize::MAX,
        min_fold_chars: usize::MAX,
        prefer_block_scalars: true,
        compact_list_indent: true,
        yaml_12: false,
    };
    serde_saphyr::to_string_with_options(&Plain(list), options)
        .map_err(|e| Error::Setup(format!("cannot write the ResourceList: {e}")))
}

/// The ResourceList of a failed run: the items as they came, and the error as a result (kpt
/// shows results; krm-catalog reads the message from stderr).
pub fn failed(input: &Value, error: &Error) -> Value {
    let mut out = Map::new();
    out.insert("apiVersion".into(), "config.kubernetes.io/v1".into());
    out.insert("kind".into(), "ResourceList".into());
    out.insert(
        "items".into(),
        input
            .get("items")
            .cloned()
            .unwrap_or(Value::Array(Vec::new())),
    );
    let mut result = Map::new();
    result.insert("message".into(), error.to_string().into());
    result.insert("severity".into(), "error".into());
    out.insert("results".into(), Value::Array(vec![Value::Object(result)]));
    Value::Object(out)
}

/// A JSON value serialized with plain numbers.
struct Plain<'a>(&'a Value);

impl Serialize for Plain<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    s.serialize_i64(i)
                } else if let Some(u) = n.as_u64() {
                    s.serialize_u64(u)
                } else if let Some(f) = n.as_f64() {
                    s.serialize_f64(f)
                } else {
                    Err(serde::ser::Error::custom(format!(
                        "unrepresentable number {n}"
                    )))
                }
            }
            Value::String(text) => s.serialize_str(text),
            Value::Array(values) => {
                let mut seq = s.serialize_seq(Some(values.len()))?;
                for v in values {
                    seq.serialize_element(&Plain(v))?;
                }
                seq.end()
            }
            Value::Object(fields) => {
                let mut map = s.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    map.serialize_entry(k, &Plain(v))?;
                }
                map.end()
            }
        }
    }
}

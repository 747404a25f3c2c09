//! Template helpers users know from Helm/Sprig, with Helm's semantics where Jinja differs
//! (`indent` indents the first line too). The Sprig functions Helm chart authors use are in
//! [`sprig`] (`docs/reference/templates.md` lists every helper).

mod sprig;

use base64::Engine as _;
use minijinja::value::{Serde, Value};
use minijinja::{Environment, Error, ErrorKind};
use sha1::Sha1;
use sha2::{Digest as _, Sha256};
use sha3::Sha3_256;

use crate::verify::hex;

/// Register every helper on an environment.
pub fn register(env: &mut Environment<'_>) {
    env.add_filter("toYaml", to_yaml);
    env.add_filter("fromYaml", from_yaml);
    env.add_filter("toJson", to_json);
    env.add_filter("fromJson", from_json);
    env.add_filter("indent", indent);
    env.add_filter("nindent", nindent);
    env.add_filter("quote", quote);
    env.add_filter("b64enc", b64enc);
    env.add_filter("b64dec", b64dec);
    env.add_filter("sha256sum", sha256sum);
    env.add_filter("sha1short", sha1short);
    env.add_filter("sha3short", sha3short);
    env.add_filter("required", required_filter);
    env.add_function("required", required_function);
    env.add_function("fail", fail);
    env.add_function("sha1short", sha1short);
    env.add_function("sha3short", sha3short);
    sprig::register(env);
}

fn to_json_value(value: &Value) -> Result<serde_json::Value, Error> {
    if value.is_undefined() {
        return Err(Error::new(
            ErrorKind::UndefinedError,
            "cannot serialize an undefined value",
        ));
    }
    check_serialized_size(value)?;
    serde_json::to_value(value).map_err(|e| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("cannot serialize value: {e}"),
        )
    })
}

/// `toYaml`: YAML through our emitter (Kubernetes-safe quoting), no trailing newline.
fn to_yaml(value: &Value) -> Result<Value, Error> {
    let json = to_json_value(value)?;
    let text = crate::yaml::emit(&json);
    Ok(Value::from_safe_string(
        text.trim_end_matches('\n').to_owned(),
    ))
}

/// `fromYaml`: parse a YAML string (empty → none).
fn from_yaml(text: &str) -> Result<Value, Error> {
    let parsed = crate::yaml::parse(text)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("fromYaml: {e}")))?;
    Ok(Value::from(Serde(parsed)))
}

/// `toJson`: compact JSON.
fn to_json(value: &Value) -> Result<Value, Error> {
    let json = to_json_value(value)?;
    Ok(Value::from_safe_string(json.to_string()))
}

/// `fromJson`: parse a JSON string.
fn from_json(text: &str) -> Result<Value, Error> {
    let parsed: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("fromJson: {e}")))?;
    Ok(Value::from(Serde(parsed)))
}

/// Sprig-style indentation, checked against the render's budget before anything is built
/// (`indent(9223372036854775807)` must be an error, not an allocation failure).
fn pad_lines(text: &str, width: usize) -> Result<String, Error> {
    let lines = text.bytes().filter(|b| *b == b'\n').count() + 1;
    minijinja::budget::fits(text.len().saturating_add(lines.saturating_mul(width)))?;
    let pad = " ".repeat(width);
    let mut out = String::with_capacity(text.len() + pad.len());
    out.push_str(&pad);
    out.push_str(&text.replace('\n', &format!("\n{pad}")));
    Ok(out)
}

/// `indent(n)`: Sprig semantics, every line (the first too) gets `n` spaces.
fn indent(value: &Value, width: usize) -> Result<Value, Error> {
    Ok(Value::from_safe_string(pad_lines(&display(value)?, width)?))
}

/// `nindent(n)`: a newline, then `indent(n)`.
fn nindent(value: &Value, width: usize) -> Result<Value, Error> {
    Ok(Value::from_safe_string(format!(
        "\n{}",
        pad_lines(&display(value)?, width)?
    )))
}

/// A value as text, bounded by the render's budget (a list nested in itself many times has
/// a huge text for a small value).
fn display(value: &Value) -> Result<String, Error> {
    if value.is_none() || value.is_undefined() {
        Ok(String::new())
    } else if let Some(s) = value.as_str() {
        Ok(s.to_owned())
    } else {
        minijinja::budget::BoundedString::format(format_args!("{value}"))
    }
}

/// An error if a value would take more than what is left of the budget to serialize:
/// bytes of its strings plus a few per node, walked with a stop (shared nested lists have
/// few values but a huge expansion), and every container a step of the render's walk (its
/// time limit and nesting depth: the serializer recurses).
fn check_serialized_size(value: &Value) -> Result<(), Error> {
    fn walk(value: &Value, total: &mut usize) -> Result<(), Error> {
        *total = total.saturating_add(value.as_str().map_or(8, |s| s.len() + 2));
        minijinja::budget::fits(*total)?;
        if matches!(
            value.kind(),
            minijinja::value::ValueKind::Seq | minijinja::value::ValueKind::Map
        ) && let Ok(iter) = value.try_iter()
        {
            let _walk = minijinja::budget::walk_checked(value.len().unwrap_or(0))?;
            for key in iter {
                walk(&key, total)?;
                if value.kind() == minijinja::value::ValueKind::Map
                    && let Ok(v) = value.get_item(&key)
                {
                    walk(&v, total)?;
                }
            }
        }
        Ok(())
    }
    let mut total = 0;
    walk(value, &mut total)
}

/// `quote`: a double-quoted string (JSON escaping is valid YAML).
fn quote(value: &Value) -> Result<Value, Error> {
    let s = display(value)?;
    Ok(Value::from_safe_string(
        serde_json::Value::String(s).to_string(),
    ))
}

fn b64enc(value: &Value) -> Result<Value, Error> {
    let text = display(value)?;
    minijinja::budget::fits(text.len().div_ceil(3).saturating_mul(4))?;
    Ok(Value::from(
        base64::engine::general_purpose::STANDARD.encode(text),
    ))
}

fn b64dec(text: &str) -> Result<Value, Error> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("b64dec: {e}")))?;
    String::from_utf8(bytes).map(Value::from).map_err(|_| {
        Error::new(
            ErrorKind::InvalidOperation,
            "b64dec: decoded bytes are not UTF-8",
        )
    })
}

fn sha256sum(value: &Value) -> Result<Value, Error> {
    Ok(Value::from(hex(&Sha256::digest(
        display(value)?.as_bytes(),
    ))))
}

fn short(digest: &str, len: Option<usize>) -> Value {
    let len = len.unwrap_or(20).min(digest.len());
    Value::from(digest[..len].to_owned())
}

/// `sha1short`: the first 20 hex characters of SHA-1 (api-syncagent's `$remoteNameHash`).
fn sha1short(value: &Value, len: Option<usize>) -> Result<Value, Error> {
    Ok(short(&hex(&Sha1::digest(display(value)?.as_bytes())), len))
}

/// `sha3short`: the first 20 (or `len`) hex characters of SHA3-256.
fn sha3short(value: &Value, len: Option<usize>) -> Result<Value, Error> {
    Ok(short(
        &hex(&Sha3_256::digest(display(value)?.as_bytes())),
        len,
    ))
}

/// `x | required("msg")`: fail when undefined, none or empty.
fn required_filter(value: &Value, message: Option<&str>) -> Result<Value, Error> {
    require(value, message)
}

/// `required("msg", x)`: Sprig's argument order.
fn required_function(message: &str, value: &Value) -> Result<Value, Error> {
    require(value, Some(message))
}

fn require(value: &Value, message: Option<&str>) -> Result<Value, Error> {
    let missing = value.is_undefined() || value.is_none() || value.as_str() == Some("");
    if missing {
        let msg = message.unwrap_or("a required value is missing").to_owned();
        return Err(Error::new(ErrorKind::InvalidOperation, msg));
    }
    Ok(value.clone())
}

/// `fail("msg")`: stop rendering with a message.
fn fail(message: &str) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(template: &str, ctx: serde_json::Value) -> Result<String, Error> {
        let mut env = Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        register(&mut env);
        env.render_str(template, Value::from(Serde(ctx)))
    }

    #[test]
    fn yaml_helpers() {
        let ctx = serde_json::json!({"v": {"a": "on", "b": [1, 2]}});
        assert_eq!(
            render("{{ v | toYaml }}", ctx.clone()).unwrap(),
            "a: \"on\"\nb:\n- 1\n- 2"
        );
        assert_eq!(
            render("x:{{ v | toYaml | nindent(2) }}", ctx.clone()).unwrap(),
            "x:\n  a: \"on\"\n  b:\n  - 1\n  - 2"
        );
        assert_eq!(
            render("{{ v | toYaml | indent(2) }}", ctx).unwrap(),
            "  a: \"on\"\n  b:\n  - 1\n  - 2"
        );
        assert_eq!(
            render("{{ ('a: 1' | fromYaml).a }}", serde_json::json!({})).unwrap(),
            "1"
        );
        assert_eq!(
            render("{{ ('' | fromYaml) is none }}", serde_json::json!({})).unwrap(),
            "True"
        );
    }

    #[test]
    fn quoting_and_encoding() {
        let ctx = serde_json::json!({"s": "1.10", "n": 3});
        assert_eq!(
            render("{{ s | quote }} {{ n | quote }}", ctx).unwrap(),
            "\"1.10\" \"3\""
        );
        assert_eq!(
            render(
                "{{ 'hi' | b64enc }} {{ 'aGk=' | b64dec }}",
                serde_json::json!({})
            )
            .unwrap(),
            "aGk= hi"
        );
        assert_eq!(
            render("{{ {'a': 'b'} | toJson }}", serde_json::json!({})).unwrap(),
            "{\"a\":\"b\"}"
        );
    }

    #[test]
    fn hashes() {
        let out = render("{{ 'x' | sha256sum }}", serde_json::json!({})).unwrap();
        assert_eq!(
            out,
            "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
        );
        assert_eq!(
            render("{{ 'x' | sha1short }}", serde_json::json!({})).unwrap(),
            "11f6ad8ec52a2984abaa"
        );
        assert_eq!(
            render("{{ 'x' | sha3short(8) }}", serde_json::json!({}))
                .unwrap()
                .len(),
            8
        );
    }

    #[test]
    fn required_and_fail() {
        let err = render(
            "{{ missing | required('set missing') }}",
            serde_json::json!({}),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("set missing"), "{err}");
        let err = render("{{ required('need x', x) }}", serde_json::json!({"x": ""}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("need x"), "{err}");
        assert_eq!(
            render("{{ x | required('m') }}", serde_json::json!({"x": "ok"})).unwrap(),
            "ok"
        );
        let err = render("{{ fail('nope') }}", serde_json::json!({}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope"), "{err}");
    }
}

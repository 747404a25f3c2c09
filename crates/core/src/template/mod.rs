//! The template sandbox: one minijinja environment as every template runs in, the checks a
//! catalog's templates and manifests pass at load, and one template rendered into objects.
//! It knows no catalog: `catalog` checks with it, `render` renders services with it.
//!
//! Templates run sandboxed: no loader (only catalog templates can be included), strict
//! undefined (a typo fails instead of printing nothing), no auto-escaping (output is YAML, not
//! HTML), bounded by fuel, by a memory budget and a time limit per render (our minijinja
//! patch, `vendor/minijinja/PATCHES.md`: strings, lists and output are charged as they are
//! created, and comparing, hashing, sorting or printing a value counts as work against the
//! time limit, however much the value shares), and by output size. Output is parsed as YAML
//! and every document must be a KRM object; errors name the template and line.

pub mod helpers;

use std::fmt;

use minijinja::budget::Limits;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde_json::Value;

/// Instructions one template render may execute.
pub const FUEL: u64 = 5_000_000;
/// Largest output one template render may produce.
pub const MAX_OUTPUT_BYTES: usize = 16 * 1024 * 1024;

/// The budget of one template render: bytes it may allocate for strings, lists and output,
/// counted as they are created (a string built by doubling counts every step), and seconds it
/// may take (`KRM_CATALOG_TEMPLATE_MAX_BYTES`, `KRM_CATALOG_TEMPLATE_TIMEOUT`: [`crate::env`]).
pub fn limits() -> Limits {
    static LIMITS: std::sync::OnceLock<Limits> = std::sync::OnceLock::new();
    *LIMITS.get_or_init(|| Limits {
        max_bytes: crate::env::template_max_bytes(),
        // No single value is useful beyond what one render may output.
        max_value_bytes: MAX_OUTPUT_BYTES,
        max_output_bytes: MAX_OUTPUT_BYTES,
        max_duration: Some(crate::env::template_timeout()),
    })
}

/// A template that failed, with where.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RenderError {
    /// Template name (path inside its catalog).
    pub template: String,
    /// 1-based line in the template (or in its output, for output errors).
    pub line: Option<usize>,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "template {}:{line}: {}", self.template, self.message),
            None => write!(f, "template {}: {}", self.template, self.message),
        }
    }
}

impl RenderError {
    fn from_minijinja(template: &str, err: &minijinja::Error, limits: &Limits) -> Self {
        // Errors raised inside an included template carry that template's name and line.
        let name = err.name().unwrap_or(template).to_owned();
        // A walk over values that the budget stopped can surface as a bare write failure:
        // the budget keeps its error.
        let stopped = minijinja::budget::error();
        let detail = stopped
            .as_ref()
            .and_then(minijinja::Error::detail)
            .or(err.detail())
            .unwrap_or("");
        let mut message = if err.kind() == minijinja::ErrorKind::OutOfFuel {
            format!(
                "template ran out of fuel: it executed more than {FUEL} instructions (an endless or far too large loop)"
            )
        } else if minijinja::budget::output_exceeded() {
            format!("output is more than the limit of {MAX_OUTPUT_BYTES} bytes")
        } else if detail.contains("memory budget") || minijinja::budget::exhausted() {
            // A budget error can reach us wrapped (`cannot serialize to JSON`) or as a bare
            // write failure: the budget itself says whether it was the cause.
            format!(
                "template exceeded its memory budget: it created more than {} bytes of strings, lists and output, or one value over {MAX_OUTPUT_BYTES} bytes (a string or list growing in a loop, or a huge width or repeat count); fix the template or raise KRM_CATALOG_TEMPLATE_MAX_BYTES",
                limits.max_bytes
            )
        } else if detail.contains("time limit") {
            format!(
                "template ran longer than its time limit of {} seconds; fix the template or raise KRM_CATALOG_TEMPLATE_TIMEOUT",
                limits.max_duration.map_or(0, |d| d.as_secs())
            )
        } else if detail.contains("levels deep") {
            format!(
                "template values are nested more than {} levels deep (a list or map put inside itself in a loop); fix the template",
                minijinja::budget::MAX_WALK_DEPTH
            )
        } else {
            err.detail().map_or_else(
                || err.kind().to_string(),
                |d| format!("{}: {d}", err.kind()),
            )
        };
        if name != template {
            message = format!("{message} (included from {template})");
        }
        Self {
            template: name,
            line: err.line(),
            message,
        }
    }
}

/// A sandboxed environment with our settings and helpers, and no templates yet.
pub fn new_environment<'source>() -> Environment<'source> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_fuel(Some(FUEL));
    helpers::register(&mut env);
    env
}

/// Check that a template compiles (at catalog load, so a broken catalog fails early).
pub fn check_syntax(name: &str, text: &str) -> Result<(), RenderError> {
    let env = new_environment();
    env.template_from_named_str(name, text)
        .map(|_| ())
        .map_err(|e| RenderError::from_minijinja(name, &e, &limits()))
}

/// Why a document is not a KRM object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotKrmObject {
    /// Not a mapping at all (the JSON type it is instead).
    #[error("not a KRM object: expected a mapping, found {0}")]
    NotAMapping(&'static str),
    /// A mapping without these fields (or with them empty).
    #[error("not a KRM object: missing {}", .0.join(", "))]
    Missing(Vec<&'static str>),
}

/// Check that a document is a KRM object: `apiVersion`, `kind`, `metadata.name`.
///
/// # Errors
/// What it lacks.
pub fn check_krm_object(doc: &Value) -> Result<(), NotKrmObject> {
    let Value::Object(map) = doc else {
        return Err(NotKrmObject::NotAMapping(crate::strict::type_name(doc)));
    };
    let non_empty = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    };
    let mut missing = Vec::new();
    if !non_empty(map.get("apiVersion")) {
        missing.push("apiVersion");
    }
    if !non_empty(map.get("kind")) {
        missing.push("kind");
    }
    if !non_empty(map.get("metadata").and_then(|m| m.get("name"))) {
        missing.push("metadata.name");
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(NotKrmObject::Missing(missing))
    }
}

/// Render one template of an environment and parse its output into KRM objects.
pub fn render_one(
    env: &Environment<'_>,
    name: &str,
    ctx: &minijinja::Value,
) -> Result<Vec<Value>, RenderError> {
    render_within(env, name, ctx, &limits())
}

/// [`render_one`] within `limits` (tests use small ones).
fn render_within(
    env: &Environment<'_>,
    name: &str,
    ctx: &minijinja::Value,
    limits: &Limits,
) -> Result<Vec<Value>, RenderError> {
    let template = env
        .get_template(name)
        .map_err(|e| RenderError::from_minijinja(name, &e, limits))?;
    let text = {
        let _budget = minijinja::budget::enter(*limits);
        let text = template
            .render(ctx)
            .map_err(|e| RenderError::from_minijinja(name, &e, limits))?;
        // A walk stopped in the last instruction leaves a value cut short and no
        // instruction after it to report that.
        if let Some(e) = minijinja::budget::error() {
            return Err(RenderError::from_minijinja(name, &e, limits));
        }
        text
    };
    if text.len() > MAX_OUTPUT_BYTES {
        return Err(RenderError {
            template: name.to_owned(),
            line: None,
            message: format!(
                "output is {} bytes, more than the limit of {MAX_OUTPUT_BYTES} bytes",
                text.len()
            ),
        });
    }
    let docs = crate::yaml::parse_stream(&text).map_err(|e| RenderError {
        template: name.to_owned(),
        line: None,
        message: match e.line {
            Some(line) => format!("output line {line} is not valid YAML: {}", e.message),
            None => format!("output is not valid YAML: {}", e.message),
        },
    })?;
    let mut objects = Vec::with_capacity(docs.len());
    for doc in docs {
        if doc.value.is_null() {
            continue;
        }
        if let Err(msg) = check_krm_object(&doc.value) {
            return Err(RenderError {
                template: name.to_owned(),
                line: None,
                message: format!("output document at line {} is {msg}", doc.line),
            });
        }
        objects.push(doc.value);
    }
    Ok(objects)
}

#[cfg(test)]
mod tests;

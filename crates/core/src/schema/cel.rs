//! CEL `x-kubernetes-validations`: compiled when a schema is parsed, evaluated after the
//! OpenAPI validation, with the apiserver's semantics, messages, field paths and reasons.
//!
//! Mirrors apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go` and
//! `compilation.go` at commit 1aa2717a552ee6ca1e2a18f1f8ffccde981db923 (function names cited
//! below). The interpreter is the `cel` crate with the Kubernetes CEL libraries of `kube-cel`
//! (strings, lists, sets, regex, url, ip/cidr, quantity, semver, format, math, base64).
//!
//! Cost: the `cel` interpreter has no cost tracking, so every comprehension step (the loop of
//! `all`, `exists`, `exists_one`, `map`, `filter`) is routed through a metering function
//! inserted into the compiled program. A rule may take [`PER_CALL_LIMIT`] steps and one
//! validation [`VALIDATION_BUDGET`] in all, the apiserver's `PerCallLimit` and
//! `RuntimeCELCostBudget` numbers (our unit is one comprehension step, theirs a finer cost).
//!
//! Imports `structural` and `validate` (the rendering of a value in a message).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kube_cel::KubeCelExt;
use kube_cel::cel::common::ast::{CallExpr, EntryExpr, Expr, IdedExpr};
use kube_cel::cel::objects::{Key, Map};
use kube_cel::cel::{Context, ExecutionError, Program, Value as Cel};
use serde_json::Value;

use super::structural::{FieldError, SchemaProblem, Structural, quote};
use crate::diagnostics::FieldPath;

/// Steps one rule (or message expression) may take (apiserver `PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// Steps one validation of one object may take in all (apiserver `RuntimeCELCostBudget`).
pub const VALIDATION_BUDGET: u64 = 10_000_000;
/// The metering function; `@` cannot be written in CEL source, so no rule can call it.
const STEP_FN: &str = "@krm_step";
/// apiserver `celconfig.MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;
/// Identifiers a rule may use besides `self`, `oldSelf` and comprehension variables: the CEL
/// type denotations.
const TYPE_IDENTS: [&str; 11] = [
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
];
/// CEL reserved words: a property named so is `__name__` in CEL (apiserver `cel.Escape`).
const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// `reason` of a rule: which kind of field error a failure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
}

#[derive(Debug)]
struct Rule {
    /// The rule as written (trimmed), for "failed rule: …".
    source: String,
    message: Option<String>,
    program: IdedExpr,
    message_expression: Option<(String, IdedExpr)>,
    uses_old_self: bool,
    field_path: FieldPath,
    reason: Reason,
}

/// The rules of one schema node and of the nodes below it that carry any.
#[derive(Debug, Default)]
struct Node {
    rules: Vec<Rule>,
    properties: Vec<(String, Node)>,
    items: Option<Box<Node>>,
    additional_properties: Option<Box<Node>>,
    /// `allOf` entries with rules: evaluated against the same value (upstream `AllOfValidators`).
    all_of: Vec<Node>,
}

impl Node {
    fn is_empty(&self) -> bool {
        self.rules.is_empty()
            && self.properties.is_empty()
            && self.items.is_none()
            && self.additional_properties.is_none()
            && self.all_of.is_empty()
    }
}

/// The compiled `x-kubernetes-validations` of a whole schema.
#[derive(Debug)]
pub struct CelRules {
    root: Node,
}

impl CelRules {
    /// Compile every rule of `raw` (a schema whose structural part is `structural`); `None`
    /// when it has none.
    ///
    /// # Errors
    /// Every rule, `messageExpression` or `fieldPath` that does not compile, at its schema path.
    pub fn compile(
        raw: &Value,
        structural: &Structural,
    ) -> Result<Option<CelRules>, Vec<SchemaProblem>> {
        let mut problems = Vec::new();
        let root = compile_node(raw, structural, &FieldPath::root(), &mut problems);
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok((!root.is_empty()).then_some(CelRules { root }))
    }

    /// Evaluate the rules on `instance`, with the default budgets.
    #[must_use]
    pub fn validate(&self, structural: &Structural, instance: &Value) -> Vec<FieldError> {
        self.validate_with_limits(structural, instance, PER_CALL_LIMIT, VALIDATION_BUDGET)
    }

    fn validate_with_limits(
        &self,
        structural: &Structural,
        instance: &Value,
        per_call: u64,
        budget: u64,
    ) -> Vec<FieldError> {
        let meter = Arc::new(Meter::default());
        let mut ctx = Context::default();
        ctx.register_all();
        // The `cel` interpreter has no `type()` or type values: a type is its name here, so
        // `type(self) == string` (common on int-or-string fields) works; `dyn` is the identity.
        for name in TYPE_IDENTS {
            ctx.add_variable_from_value(name, name);
        }
        ctx.add_function("type", |v: Cel| -> Result<Cel, ExecutionError> {
            Ok(Cel::String(Arc::new(type_name(&v).to_owned())))
        });
        ctx.add_function("dyn", |v: Cel| -> Result<Cel, ExecutionError> { Ok(v) });
        let m = Arc::clone(&meter);
        ctx.add_function(STEP_FN, move |v: Cel| -> Result<Cel, ExecutionError> {
            let used = m.used.fetch_add(1, Ordering::Relaxed) + 1;
            if used > m.limit.load(Ordering::Relaxed) {
                Err(ExecutionError::function_error(
                    STEP_FN,
                    "actual cost limit exceeded",
                ))
            } else {
                Ok(v)
            }
        });
        let mut run = Run {
            ctx,
            meter,
            per_call,
            remaining: budget,
            out: Vec::new(),
            stopped: false,
        };
        run.node(&self.root, structural, instance, &FieldPath::root());
        run.out
    }
}

/// Steps taken by the current call, and its limit.
#[derive(Debug, Default)]
struct Meter {
    used: AtomicU64,
    limit: AtomicU64,
}

fn compile_node(
    raw: &Value,
    s: &Structural,
    path: &FieldPath,
    problems: &mut Vec<SchemaProblem>,
) -> Node {
    let mut node = Node::default();
    let Value::Object(m) = raw else {
        return node;
    };
    if let Some(Value::Array(rules)) = m.get("x-kubernetes-validations") {
        for (i, rule) in rules.iter().enumerate() {
            let rp = path.key("x-kubernetes-validations").index(i);
            if let Some(r) = compile_rule(rule, s, &rp, problems) {
                node.rules.push(r);
            }
        }
    }
    if let Some(Value::Object(props)) = m.get("properties") {
        for (k, v) in props {
            if let Some(ps) = s.property(k) {
                let child = compile_node(v, ps, &path.key("properties").key(k), problems);
                if !child.is_empty() {
                    node.properties.push((k.clone(), child));
                }
            }
        }
    }
    if let (Some(items), Some(si)) = (m.get("items"), &s.items) {
        let child = compile_node(items, si, &path.key("items"), problems);
        if !child.is_empty() {
            node.items = Some(Box::new(child));
        }
    }
    if let (Some(ap @ Value::Object(_)), Some(sa)) = (
        m.get("additionalProperties"),
        s.additional_properties.as_ref().and_then(|a| a.schema()),
    ) {
        let child = compile_node(ap, sa, &path.key("additionalProperties"), problems);
        if !child.is_empty() {
            node.additional_properties = Some(Box::new(child));
        }
    }
    if let Some(Value::Array(all_of)) = m.get("allOf") {
        for (i, entry) in all_of.iter().enumerate() {
            let child = compile_node(entry, s, &path.key("allOf").index(i), problems);
            if !child.is_empty() {
                node.all_of.push(child);
            }
        }
    }
    node
}

/// Upstream `compileRule`: the rule, its `messageExpression`, its `fieldPath`.
fn compile_rule(
    raw: &Value,
    s: &Structural,
    path: &FieldPath,
    problems: &mut Vec<SchemaProblem>,
) -> Option<Rule> {
    let source = raw.get("rule").and_then(Value::as_str)?.trim();
    if source.is_empty() {
        // Upstream compiles an empty rule to no program: it never runs.
        return None;
    }
    let text = |k: &str| raw.get(k).and_then(Value::as_str);
    let program = match compile_expression(source) {
        Ok(p) => p,
        Err(e) => {
            problems.push(SchemaProblem {
                path: path.key("rule"),
                message: format!("compilation failed: {e}"),
            });
            return None;
        }
    };
    let uses_old_self = references_ident(&program, "oldSelf");
    let mut ok = true;
    let message_expression = match text("messageExpression").map(str::trim) {
        Some(m) if !m.is_empty() => match compile_expression(m) {
            Ok(p) => Some((m.to_owned(), p)),
            Err(e) => {
                ok = false;
                problems.push(SchemaProblem {
                    path: path.key("messageExpression"),
                    message: format!("messageExpression compilation failed: {e}"),
                });
                None
            }
        },
        _ => None,
    };
    let field_path = match text("fieldPath") {
        Some(fp) if !fp.is_empty() => match valid_field_path(fp, s) {
            Ok(p) => p,
            Err(e) => {
                ok = false;
                problems.push(SchemaProblem {
                    path: path.key("fieldPath"),
                    message: format!("fieldPath {} must be a valid path: {e}", quote(fp)),
                });
                FieldPath::root()
            }
        },
        _ => FieldPath::root(),
    };
    let reason = match text("reason") {
        Some("FieldValueForbidden") => Reason::Forbidden,
        Some("FieldValueRequired") => Reason::Required,
        Some("FieldValueDuplicate") => Reason::Duplicate,
        _ => Reason::Invalid,
    };
    ok.then(|| Rule {
        source: source.to_owned(),
        message: text("message")
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_owned),
        program,
        message_expression,
        uses_old_self,
        field_path,
        reason,
    })
}

/// Parse, check what the interpreter cannot run, and insert the step meter.
fn compile_expression(source: &str) -> Result<IdedExpr, String> {
    let program = Program::compile(source).map_err(|e| e.to_string().replace('\n', "; "))?;
    let mut expr = program.expression().clone();
    let mut bound = vec!["self".to_owned(), "oldSelf".to_owned()];
    check(&expr, &mut bound)?;
    meter(&mut expr);
    Ok(expr)
}

/// What cel-go's checker would reject and the `cel` interpreter cannot run (it panics on
/// struct literals): undeclared identifiers and message construction.
fn check(e: &IdedExpr, bound: &mut Vec<String>) -> Result<(), String> {
    match &e.expr {
        Expr::Unspecified => Err("empty expression".to_owned()),
        Expr::Struct(s) => Err(format!(
            "undeclared reference to {} (struct construction is not supported)",
            quote(&s.type_name)
        )),
        Expr::Ident(name) => {
            if bound.iter().any(|b| b == name) || TYPE_IDENTS.contains(&name.as_str()) {
                Ok(())
            } else {
                Err(format!("undeclared reference to {}", quote(name)))
            }
        }
        Expr::Literal(_) => Ok(()),
        Expr::Select(s) => check(&s.operand, bound),
        Expr::List(l) => l.elements.iter().try_for_each(|x| check(x, bound)),
        Expr::Map(m) => m.entries.iter().try_for_each(|entry| match &entry.expr {
            EntryExpr::MapEntry(me) => {
                check(&me.key, bound)?;
                check(&me.value, bound)
            }
            EntryExpr::StructField(f) => check(&f.value, bound),
        }),
        Expr::Call(c) => {
            // A namespace in front of a function (`sets.contains`, `format.dns1123Label()`,
            // `math.ceil`) is an identifier here; it names no variable.
            if let Some(t) = &c.target
                && !matches!(t.expr, Expr::Ident(_))
            {
                check(t, bound)?;
            }
            c.args.iter().try_for_each(|x| check(x, bound))
        }
        Expr::Comprehension(c) => {
            check(&c.iter_range, bound)?;
            check(&c.accu_init, bound)?;
            let n = bound.len();
            bound.push(c.iter_var.clone());
            if let Some(v2) = &c.iter_var2 {
                bound.push(v2.clone());
            }
            bound.push(c.accu_var.clone());
            let r = check(&c.loop_cond, bound)
                .and_then(|()| check(&c.loop_step, bound))
                .and_then(|()| check(&c.result, bound));
            bound.truncate(n);
            r
        }
    }
}

fn references_ident(e: &IdedExpr, name: &str) -> bool {
    let any = |list: &mut dyn Iterator<Item = &IdedExpr>| {
        let mut found = false;
        for x in list {
            found |= references_ident(x, name);
        }
        found
    };
    match &e.expr {
        Expr::Ident(n) => n == name,
        Expr::Select(s) => references_ident(&s.operand, name),
        Expr::List(l) => any(&mut l.elements.iter()),
        Expr::Map(m) => m.entries.iter().any(|entry| match &entry.expr {
            EntryExpr::MapEntry(me) => {
                references_ident(&me.key, name) || references_ident(&me.value, name)
            }
            EntryExpr::StructField(f) => references_ident(&f.value, name),
        }),
        Expr::Call(c) => {
            c.target
                .as_deref()
                .is_some_and(|t| references_ident(t, name))
                || any(&mut c.args.iter())
        }
        Expr::Comprehension(c) => any(&mut [
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ]
        .into_iter()),
        Expr::Unspecified | Expr::Literal(_) | Expr::Struct(_) => false,
    }
}

/// Route every comprehension step through [`STEP_FN`].
fn meter(e: &mut IdedExpr) {
    match &mut e.expr {
        Expr::Select(s) => meter(&mut s.operand),
        Expr::List(l) => l.elements.iter_mut().for_each(meter),
        Expr::Map(m) => {
            for entry in &mut m.entries {
                match &mut entry.expr {
                    EntryExpr::MapEntry(me) => {
                        meter(&mut me.key);
                        meter(&mut me.value);
                    }
                    EntryExpr::StructField(f) => meter(&mut f.value),
                }
            }
        }
        Expr::Call(c) => {
            if let Some(t) = c.target.as_deref_mut() {
                meter(t);
            }
            c.args.iter_mut().for_each(meter);
        }
        Expr::Comprehension(c) => {
            meter(&mut c.iter_range);
            meter(&mut c.accu_init);
            meter(&mut c.loop_cond);
            meter(&mut c.loop_step);
            meter(&mut c.result);
            let step = std::mem::take(&mut c.loop_step);
            c.loop_step = IdedExpr {
                id: step.id,
                expr: Expr::Call(CallExpr {
                    func_name: STEP_FN.to_owned(),
                    target: None,
                    args: vec![step],
                }),
            };
        }
        Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) | Expr::Struct(_) => {}
    }
}

/// Upstream `ValidFieldPath`: `.a.b`, `['a.b']`, map keys under `additionalProperties`.
fn valid_field_path(json_path: &str, schema: &Structural) -> Result<FieldPath, String> {
    let mut path = FieldPath::root();
    let mut s = schema;
    let mut rest = json_path;
    while !rest.is_empty() {
        let name;
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[', ']']).unwrap_or(r.len());
            if end == 0 {
                return Err("unexpected end of JSON path".to_owned());
            }
            name = r[..end].to_owned();
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let mut end = None;
            let bytes = r.as_bytes();
            for i in 0..bytes.len() {
                if bytes[i] == b'\'' && (i == 0 || bytes[i - 1] != b'\\') {
                    end = Some(i);
                    break;
                }
            }
            let end = end.ok_or("unexpected end of JSON path")?;
            name = unescape_single_quote(&r[..end])?;
            rest = r[end + 1..]
                .strip_prefix(']')
                .ok_or("expected ] after the quoted name")?;
        } else if rest.starts_with('[') {
            return Err("expected single quoted string after [".to_owned());
        } else {
            return Err(format!(
                "expected [ or . but got: {}",
                rest.chars().next().unwrap_or(' ')
            ));
        }
        if !s.properties.is_empty() {
            s = s.property(&name).ok_or("does not refer to a valid field")?;
        } else if let Some(ap) = &s.additional_properties {
            s = match ap.schema() {
                Some(ap) => ap,
                None => return Err("does not refer to a valid field".to_owned()),
            };
        } else {
            return Err("does not refer to a valid field".to_owned());
        }
        path.push_key(name);
    }
    Ok(path)
}

fn unescape_single_quote(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next() {
            Some('a') => '\u{7}',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('v') => '\u{b}',
            Some('\'') => '\'',
            Some('\\') => '\\',
            other => {
                return Err(format!(
                    "invalid string literal: invalid escape char \\{}",
                    other.map(String::from).unwrap_or_default()
                ));
            }
        });
    }
    Ok(out)
}

/// A property name as CEL sees it (apiserver `pkg/cel/escaping.go` `Escape`); `None` when the
/// name cannot be used in CEL at all.
fn escape(name: &str) -> Option<String> {
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '.' | '-' | '/'));
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
    {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("__") {
            out.push_str("__underscores__");
            rest = r;
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// The CEL value of `v` typed by its schema (apiserver `model.UnstructuredToVal`): declared
/// properties under their escaped names, map keys as they are, `integer` as int, `number` as
/// double, `format: byte` as bytes.
fn to_cel(v: &Value, s: Option<&Structural>) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => {
            let integer = s.is_some_and(|s| s.type_ == "integer" || s.x_int_or_string);
            match n.as_i64() {
                Some(i) if integer || s.is_none() => Cel::Int(i),
                _ => match n.as_u64() {
                    Some(u) if integer => Cel::UInt(u),
                    _ => Cel::Float(n.as_f64().unwrap_or(f64::NAN)),
                },
            }
        }
        Value::String(text) => {
            if s.is_some_and(|s| s.type_ == "string" && s.format.as_deref() == Some("byte"))
                && let Ok(bytes) = base64_decode(text)
            {
                return Cel::Bytes(Arc::new(bytes));
            }
            Cel::String(Arc::new(text.clone()))
        }
        Value::Array(a) => {
            let item = s.and_then(|s| s.items.as_deref());
            Cel::List(Arc::new(a.iter().map(|x| to_cel(x, item)).collect()))
        }
        Value::Object(m) => {
            let mut out: HashMap<Key, Cel> = HashMap::with_capacity(m.len());
            for (k, x) in m {
                let declared = s.and_then(|s| s.property(k));
                let key = match (s, declared) {
                    (_, Some(_)) => match escape(k) {
                        Some(e) => e,
                        None => continue,
                    },
                    (Some(s), None) if !s.properties.is_empty() => match escape(k) {
                        Some(e) => e,
                        None => continue,
                    },
                    _ => k.clone(),
                };
                let sub = declared.or_else(|| {
                    s.and_then(|s| s.additional_properties.as_ref())
                        .and_then(|a| a.schema())
                });
                out.insert(Key::String(Arc::new(key)), to_cel(x, sub));
            }
            Cel::Map(Map { map: Arc::new(out) })
        }
    }
}

/// A value's CEL type name, for `type()`.
fn type_name(v: &Cel) -> &'static str {
    match v {
        Cel::List(_) => "list",
        Cel::Map(_) => "map",
        Cel::Int(_) => "int",
        Cel::UInt(_) => "uint",
        Cel::Float(_) => "double",
        Cel::String(_) => "string",
        Cel::Bytes(_) => "bytes",
        Cel::Bool(_) => "bool",
        Cel::Null => "null_type",
        _ => "type",
    }
}

fn base64_decode(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text)
}

/// One validation's state: the interpreter context, the meter, the remaining budget.
struct Run<'c> {
    ctx: Context<'c>,
    meter: Arc<Meter>,
    per_call: u64,
    remaining: u64,
    out: Vec<FieldError>,
    /// Set once the budget is gone (upstream returns `remainingBudget < 0`).
    stopped: bool,
}

/// How one evaluation ended.
enum Outcome {
    Value(Cel),
    Error(ExecutionError),
    /// The per-call limit was reached.
    CallLimit,
    /// The validation budget was reached.
    Budget,
}

impl Run<'_> {
    /// Upstream `Validator.validate`: this node's rules, its `allOf`, then its children.
    fn node(&mut self, node: &Node, s: &Structural, v: &Value, path: &FieldPath) {
        if self.stopped || v.is_null() {
            return;
        }
        self.expressions(node, s, v, path);
        for all_of in &node.all_of {
            self.node(all_of, s, v, path);
        }
        match v {
            Value::Array(list) => {
                if let (Some(items), Some(si)) = (&node.items, &s.items) {
                    for (i, x) in list.iter().enumerate() {
                        self.node(items, si, x, &path.index(i));
                    }
                }
            }
            Value::Object(m) => {
                if let (Some(ap), Some(sa)) = (
                    &node.additional_properties,
                    s.additional_properties.as_ref().and_then(|a| a.schema()),
                ) {
                    for (k, x) in m {
                        self.node(ap, sa, x, &path.key(k));
                    }
                }
                for (k, child) in &node.properties {
                    if let (Some(x), Some(ps)) = (m.get(k), s.property(k)) {
                        self.node(child, ps, x, &path.key(k));
                    }
                }
            }
            _ => {}
        }
    }

    /// Upstream `validateExpressions`.
    fn expressions(&mut self, node: &Node, s: &Structural, v: &Value, path: &FieldPath) {
        if node.rules.is_empty() {
            return;
        }
        let type_ = Value::String(s.type_.clone()).to_string();
        let invalid_type = |detail: String| FieldError {
            path: path.clone(),
            message: format!("Invalid value: {type_}: {detail}"),
        };
        if self.remaining == 0 {
            self.out.push(invalid_type(
                "validation failed due to running out of cost budget, no further validation rules will be run".to_owned(),
            ));
            self.stopped = true;
            return;
        }
        let this = to_cel(v, Some(s));
        let mut scope = self.ctx.new_inner_scope();
        scope.add_variable_from_value("self", this);
        // Borrow juggling: `scope` borrows `self.ctx`, so evaluate through a detached runner.
        let mut errs = Vec::new();
        let mut stop = false;
        let mut remaining = self.remaining;
        for rule in &node.rules {
            // Transition rules need the old object; a KRM function only ever creates.
            if rule.uses_old_self {
                continue;
            }
            let mut sub = Eval {
                meter: &self.meter,
                per_call: self.per_call,
                remaining: &mut remaining,
            };
            let detail_rule = rule.message.as_deref().unwrap_or(&rule.source);
            match sub.eval(&rule.program, &scope) {
                Outcome::Value(Cel::Bool(true)) => continue,
                Outcome::Value(Cel::Bool(false)) => {}
                Outcome::Value(_) => {
                    errs.push(invalid_type(format!(
                        "cel expression must evaluate to a bool evaluating rule: {detail_rule}"
                    )));
                    continue;
                }
                Outcome::Error(ExecutionError::NoSuchOverload) => {
                    errs.push(invalid_type(format!("'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {detail_rule}")));
                    continue;
                }
                Outcome::Error(e) => {
                    errs.push(invalid_type(format!(
                        "{} evaluating rule: {detail_rule}",
                        describe(&e)
                    )));
                    continue;
                }
                Outcome::CallLimit => {
                    errs.push(invalid_type(format!("'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {detail_rule}")));
                    stop = true;
                    break;
                }
                Outcome::Budget => {
                    errs.push(invalid_type("validation failed due to running out of cost budget, no further validation rules will be run".to_owned()));
                    stop = true;
                    break;
                }
            }
            let at = path.join(&rule.field_path);
            let mut detail = None;
            if let Some((src, expr)) = &rule.message_expression {
                match sub.eval(expr, &scope) {
                    Outcome::Value(Cel::String(m)) => {
                        let m = m.trim();
                        // Upstream falls back to `message` for these (and only logs why).
                        if !m.is_empty() && m.len() <= MAX_MESSAGE_BYTES && !m.contains('\n') {
                            detail = Some(m.to_owned());
                        }
                    }
                    Outcome::Value(_) | Outcome::Error(_) => {}
                    Outcome::CallLimit => {
                        errs.push(FieldError {
                            path: at,
                            message: format!("Invalid value: {type_}: no further validation rules will be run due to call cost exceeds limit for messageExpression: {}", quote(src)),
                        });
                        stop = true;
                        break;
                    }
                    Outcome::Budget => {
                        errs.push(FieldError {
                            path: at,
                            message: format!("Invalid value: {type_}: messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"),
                        });
                        stop = true;
                        break;
                    }
                }
            }
            let detail = detail.unwrap_or_else(|| match &rule.message {
                Some(m) => m.clone(),
                None => format!("failed rule: {}", rule.source),
            });
            errs.push(field_error(at, rule.reason, v, s, &detail));
        }
        drop(scope);
        self.remaining = remaining;
        self.out.append(&mut errs);
        self.stopped |= stop;
    }
}

/// An evaluation against the shared meter, charging `remaining`.
struct Eval<'a> {
    meter: &'a Meter,
    per_call: u64,
    remaining: &'a mut u64,
}

impl Eval<'_> {
    fn eval(&mut self, expr: &IdedExpr, scope: &Context<'_>) -> Outcome {
        if *self.remaining == 0 {
            return Outcome::Budget;
        }
        let limit = self.per_call.min(*self.remaining);
        self.meter.used.store(0, Ordering::Relaxed);
        self.meter.limit.store(limit, Ordering::Relaxed);
        let result = Cel::resolve(expr, scope);
        // Evaluating costs at least one step, so that a budget bounds rules on every list item.
        let used = self.meter.used.load(Ordering::Relaxed).max(1);
        if used > limit {
            *self.remaining = self.remaining.saturating_sub(limit);
            return if limit < self.per_call {
                Outcome::Budget
            } else {
                Outcome::CallLimit
            };
        }
        *self.remaining = self.remaining.saturating_sub(used);
        match result {
            Ok(v) => Outcome::Value(v),
            Err(e) => Outcome::Error(e),
        }
    }
}

/// cel-go's wording for the runtime errors rules meet most.
fn describe(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::IndexOutOfBounds(i) => format!("index out of bounds: {}", show_cel(i)),
        ExecutionError::UndeclaredReference(r) => {
            format!("undeclared reference to {}", quote(r))
        }
        other => other.to_string(),
    }
}

fn show_cel(v: &Cel) -> String {
    match v {
        Cel::Int(i) => i.to_string(),
        Cel::UInt(u) => u.to_string(),
        other => format!("{other:?}"),
    }
}

/// Upstream `fieldErrorForReason`, printed as `field.Error.ErrorBody` prints: objects and lists
/// are not shown (`field.OmitValueType`), scalars are.
fn field_error(
    path: FieldPath,
    reason: Reason,
    v: &Value,
    s: &Structural,
    detail: &str,
) -> FieldError {
    let omit = s.type_ == "object" || s.type_ == "array";
    let shown = || {
        if omit {
            String::new()
        } else {
            format!(": {}", super::validate::render_value(v))
        }
    };
    let message = match reason {
        Reason::Invalid => format!("Invalid value{}: {detail}", shown()),
        Reason::Forbidden => format!("Forbidden: {detail}"),
        Reason::Required => format!("Required value: {detail}"),
        Reason::Duplicate => format!("Duplicate value{}", shown()),
    };
    FieldError { path, message }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(schema: &Value) -> (Structural, CelRules) {
        let s = Structural::from_json(schema).unwrap();
        let r = CelRules::compile(schema, &s).unwrap().unwrap();
        (s, r)
    }

    fn errors(schema: &Value, instance: &Value) -> Vec<String> {
        let (s, r) = rules(schema);
        r.validate(&s, instance)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn compile_problems(schema: &Value) -> Vec<String> {
        let s = Structural::from_json(schema).unwrap();
        CelRules::compile(schema, &s)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn obj(props: Value, rules: Value) -> Value {
        json!({"type": "object", "properties": props, "x-kubernetes-validations": rules})
    }

    #[test]
    fn compile_errors_name_the_schema_path() {
        let schema = json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "x-kubernetes-validations": [
                {"rule": "self.a == "},
                {"rule": "has(self.a)", "messageExpression": "'x' +"},
                {"rule": "true", "fieldPath": ".b"},
                {"rule": "nope == 1"},
                {"rule": "Foo{a: 1} == 1"},
            ]
        }}});
        let problems = compile_problems(&schema);
        assert_eq!(problems.len(), 5, "{problems:?}");
        assert!(
            problems[0].starts_with(
                "properties.spec.x-kubernetes-validations[0].rule: compilation failed: "
            )
        );
        assert!(problems[1].starts_with(
            "properties.spec.x-kubernetes-validations[1].messageExpression: messageExpression compilation failed: "
        ));
        assert_eq!(
            problems[2],
            "properties.spec.x-kubernetes-validations[2].fieldPath: fieldPath \".b\" must be a valid path: does not refer to a valid field"
        );
        assert_eq!(
            problems[3],
            "properties.spec.x-kubernetes-validations[3].rule: compilation failed: undeclared reference to \"nope\""
        );
        assert!(problems[4].contains("struct construction is not supported"));
    }

    #[test]
    fn comprehension_variables_and_namespaces_are_declared() {
        let schema = obj(
            json!({"l": {"type": "array", "items": {"type": "string"}}}),
            json!([
                {"rule": "self.l.all(x, self.l.exists(y, x == y))"},
                {"rule": "sets.contains(self.l, ['a']) || true"},
                {"rule": "!format.dns1123Label().validate('ok').hasValue()"},
                {"rule": "self.l.map(x, x.size()).all(n, n >= 0) && type(self.l) == list"},
            ]),
        );
        let got = errors(&schema, &json!({"l": ["a", "b"]}));
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn each_reason_prints_like_the_apiserver() {
        let schema = obj(
            json!({"a": {"type": "string"}, "n": {"type": "integer",
                "x-kubernetes-validations": [{"rule": "self < 10"}]}}),
            json!([
                {"rule": "self.a != 'x'", "message": "a must not be x"},
                {"rule": "self.a != 'x'", "message": "forbidden x", "reason": "FieldValueForbidden", "fieldPath": ".a"},
                {"rule": "self.a != 'x'", "message": "need y", "reason": "FieldValueRequired"},
                {"rule": "self.a != 'x'", "message": "dup", "reason": "FieldValueDuplicate", "fieldPath": ".a"},
            ]),
        );
        assert_eq!(
            errors(&schema, &json!({"a": "x", "n": 12})),
            [
                "Invalid value: a must not be x",
                "a: Forbidden: forbidden x",
                "Required value: need y",
                "a: Duplicate value",
                "n: Invalid value: 12: failed rule: self < 10",
            ]
        );
    }

    #[test]
    fn message_expression_and_its_fallbacks() {
        let schema = obj(
            json!({"a": {"type": "string"}}),
            json!([
                {"rule": "self.a == 'ok'", "messageExpression": "'a is ' + self.a"},
                {"rule": "self.a == 'ok'", "message": "plain", "messageExpression": "''"},
                {"rule": "self.a == 'ok'", "messageExpression": "self.missing"},
            ]),
        );
        assert_eq!(
            errors(&schema, &json!({"a": "no"})),
            [
                "Invalid value: a is no",
                "Invalid value: plain",
                "Invalid value: failed rule: self.a == 'ok'",
            ]
        );
    }

    #[test]
    fn field_paths_with_quoted_names_and_map_keys() {
        let schema = json!({"type": "object", "properties": {
        "m": {"type": "object", "additionalProperties": {"type": "object",
            "properties": {"x.y": {"type": "string"}}}}},
        "x-kubernetes-validations": [
            {"rule": "false", "fieldPath": ".m['k.1']['x.y']", "message": "m"},
        ]});
        assert_eq!(
            errors(&schema, &json!({"m": {}})),
            ["m[k.1][x.y]: Invalid value: m"]
        );
    }

    #[test]
    fn transition_rules_are_skipped() {
        let schema = obj(
            json!({"a": {"type": "string"}}),
            json!([{"rule": "self.a == oldSelf.a"}, {"rule": "self.a == 'b'", "message": "m"}]),
        );
        assert_eq!(errors(&schema, &json!({"a": "x"})), ["Invalid value: m"]);
    }

    #[test]
    fn every_list_item_and_map_value_is_checked() {
        let item = json!({"type": "object", "properties": {"port": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.port > 0", "message": "port must be positive"}]});
        let schema = json!({"type": "object", "properties": {
            "l": {"type": "array", "items": item},
            "m": {"type": "object", "additionalProperties": {"type": "string",
                "x-kubernetes-validations": [{"rule": "self.startsWith('v')"}]}}}});
        assert_eq!(
            errors(
                &schema,
                &json!({"l": [{"port": 1}, {"port": 0}, {"port": -1}], "m": {"a": "v1", "b": "x"}})
            ),
            [
                "l[1]: Invalid value: port must be positive",
                "l[2]: Invalid value: port must be positive",
                "m.b: Invalid value: \"x\": failed rule: self.startsWith('v')",
            ]
        );
        // Absent and null values run no rule.
        assert!(errors(&schema, &json!({"l": null})).is_empty());
    }

    #[test]
    fn missing_fields_and_escaped_names() {
        let schema = obj(
            json!({"a": {"type": "string"}, "my-field": {"type": "integer"}, "namespace": {"type": "string"}}),
            json!([
                {"rule": "self.a == 'x'"},
                {"rule": "!has(self.a) || self.my__dash__field == 1 && self.__namespace__ == 'n'"},
            ]),
        );
        assert_eq!(
            errors(&schema, &json!({})),
            ["Invalid value: \"object\": no such key: a evaluating rule: self.a == 'x'"]
        );
        assert!(errors(&schema, &json!({"a": "x", "my-field": 1, "namespace": "n"})).is_empty());
    }

    #[test]
    fn int_or_string_and_kubernetes_libraries() {
        let schema = obj(
            json!({"q": {"x-kubernetes-int-or-string": true}, "ip": {"type": "string"},
                   "u": {"type": "string"}}),
            json!([
                {"rule": "type(self.q) == int ? self.q > 0 : quantity(self.q).isGreaterThan(quantity('1Gi'))", "message": "q"},
                {"rule": "isCIDR(self.ip) && cidr(self.ip).containsIP(ip('10.0.0.1'))", "message": "ip"},
                {"rule": "isURL(self.u) && url(self.u).getScheme() == 'https'", "message": "u"},
                {"rule": "self.u.matches('^https://') && self.ip.split('/').size() == 2", "message": "s"},
            ]),
        );
        let got = errors(
            &schema,
            &json!({"q": "2Gi", "ip": "10.0.0.0/8", "u": "https://a.example"}),
        );
        assert!(got.is_empty(), "{got:?}");
        assert_eq!(
            errors(
                &schema,
                &json!({"q": 0, "ip": "192.168.0.0/16", "u": "http://a"})
            ),
            [
                "Invalid value: q",
                "Invalid value: ip",
                "Invalid value: u",
                "Invalid value: s"
            ]
        );
    }

    #[test]
    fn an_expensive_rule_is_stopped_by_the_cost_limit() {
        let schema = obj(
            json!({"l": {"type": "array", "items": {"type": "integer"}}}),
            json!([
                {"rule": "self.l.all(x, self.l.all(y, self.l.all(z, x + y + z >= 0)))"},
                {"rule": "false", "message": "never reached"},
            ]),
        );
        let (s, r) = rules(&schema);
        let big = json!({"l": (0..200).collect::<Vec<i64>>()});
        // 200^3 = 8,000,000 steps: over the per-call limit of 1,000,000.
        let got: Vec<String> = r
            .validate_with_limits(&s, &big, 10_000, 100_000)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            [
                "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.l.all(x, self.l.all(y, self.l.all(z, x + y + z >= 0)))"
            ]
        );
        // Cheap rules on many items run out of the validation budget instead.
        let items = json!({"type": "object", "properties": {"l": {"type": "array",
            "items": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= 0"}]}}}});
        let (s, r) = rules(&items);
        let got: Vec<String> = r
            .validate_with_limits(&s, &big, 10_000, 50)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            [
                "l[50]: Invalid value: \"integer\": validation failed due to running out of cost budget, no further validation rules will be run"
            ]
        );
    }

    #[test]
    fn the_default_limits_stop_a_cubic_rule() {
        let schema = obj(
            json!({"l": {"type": "array", "items": {"type": "integer"}}}),
            json!([{"rule": "self.l.all(x, self.l.all(y, self.l.all(z, x >= 0)))"}]),
        );
        let big = json!({"l": (0..1000).collect::<Vec<i64>>()});
        let got = errors(&schema, &big);
        assert_eq!(got.len(), 1);
        assert!(got[0].contains("call cost exceeds limit"), "{got:?}");
    }

    #[test]
    fn escaping_matches_the_apiserver() {
        assert_eq!(
            escape("a.b-c/d").as_deref(),
            Some("a__dot__b__dash__c__slash__d")
        );
        assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
        assert_eq!(escape("in").as_deref(), Some("__in__"));
        assert_eq!(escape("a b"), None);
    }
}

//! CEL `x-kubernetes-validations`: compiled when a schema is parsed, evaluated after the
//! OpenAPI validation, with the apiserver's semantics, messages, field paths and reasons.
//!
//! Mirrors apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go` and
//! `compilation.go` at commit 1aa2717a552ee6ca1e2a18f1f8ffccde981db923 (function names cited
//! below). The interpreter is the `cel` crate with the Kubernetes CEL libraries of `kube-cel`
//! (strings, lists, sets, regex, url, ip/cidr, quantity, semver, format, math, base64).
//!
//! Cost: the `cel` interpreter has no cost tracking, so metering functions are inserted into
//! the compiled program: every comprehension step (the loop of `all`, `exists`, `exists_one`,
//! `map`, `filter`) costs one, and every call is charged, before it runs, for what it will
//! do from the values it is given (one per ten bytes or elements it reads, what it allocates,
//! the product of the sizes for the quadratic ones such as `distinct()` and `sets.*`); see
//! [`call_cost`]. A rule may cost [`PER_CALL_LIMIT`] and one validation [`VALIDATION_BUDGET`]
//! in all, the apiserver's `PerCallLimit` and `RuntimeCELCostBudget` numbers; a validation also
//! stops at the function timeout (`KRM_CATALOG_FUNCTION_TIMEOUT`), checked at every charge.
//!
//! Stack: an expression's nesting is limited before it is parsed (`scan`), and rules are
//! compiled and evaluated on a thread with a stack of [`STACK_BYTES`], which the deepest
//! expression the limits allow fits in.
//!
//! Files: `scan` (size and nesting of the source), `compile` (rules → metered programs,
//! `fieldPath`s), `value` (JSON → CEL values), this one (evaluation, budgets, field errors);
//! `scan` and `value` import nothing of the folder, `compile` imports `scan`.
//!
//! Imports `structural`, `duration` (in `value`) and `validate` (the rendering of a value in a
//! message).

mod compile;
mod cost;
mod scan;
mod value;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use kube_cel::KubeCelExt;
use kube_cel::cel::common::ast::IdedExpr;
use kube_cel::cel::{Context, ExecutionError, FunctionContext, ResolveResult, Value as Cel};
use serde_json::Value;

use compile::{
    ACC_LIST, ACC_NEW, ACC_PUSH, CALL_FN, Node, Reason, SIZE_FN, STEP_FN, TYPE_IDENTS, compile_node,
};
use cost::{Accumulator, Limits, Meter, accumulator, guarded_call, size_of};
use value::{to_cel, type_name};

use super::structural::{FieldError, SchemaProblem, Structural, quote};
use crate::diagnostics::FieldPath;

/// Steps one rule (or message expression) may take (apiserver `PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// Steps one validation of one object may take in all (apiserver `RuntimeCELCostBudget`).
pub const VALIDATION_BUDGET: u64 = 10_000_000;
/// apiserver `celconfig.MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;
/// The stack of the thread that compiles and evaluates rules: the deepest expression the
/// nesting limits allow (`issue15_h1_deep_chains_are_refused_when_compiled`) needs between 16
/// and 64 MiB in a debug build and a fraction of that in a release build (address space;
/// only what an evaluation reaches is touched).
const STACK_BYTES: usize = if cfg!(debug_assertions) {
    256 << 20
} else {
    64 << 20
};

/// Run `f` on a thread with a stack of [`STACK_BYTES`].
fn on_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T, String> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("cel".to_owned())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, f)
            .map_err(|e| format!("cannot start the CEL thread: {e}"))?;
        handle
            .join()
            .map_err(|_| "the CEL thread panicked".to_owned())
    })
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
        let compiled = on_big_stack(|| {
            let mut problems = Vec::new();
            let root = compile_node(raw, structural, &FieldPath::root(), &mut problems);
            (root, problems)
        });
        let (root, problems) = compiled.map_err(|message| {
            vec![SchemaProblem {
                path: FieldPath::root(),
                message,
            }]
        })?;
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok((!root.is_empty()).then_some(CelRules { root }))
    }

    /// Evaluate the rules on `instance`, with the default budgets and the function timeout.
    #[must_use]
    pub fn validate(&self, structural: &Structural, instance: &Value) -> Vec<FieldError> {
        let limits = Limits {
            per_call: PER_CALL_LIMIT,
            budget: VALIDATION_BUDGET,
            timeout: crate::env::function_timeout(),
        };
        on_big_stack(|| self.validate_with_limits(structural, instance, limits)).unwrap_or_else(
            |message| {
                vec![FieldError::new(
                    FieldPath::root(),
                    format!("Invalid value: {message}"),
                )]
            },
        )
    }

    fn validate_with_limits(
        &self,
        structural: &Structural,
        instance: &Value,
        limits: Limits,
    ) -> Vec<FieldError> {
        let meter = Arc::new(Meter {
            deadline: Instant::now().checked_add(limits.timeout),
            ..Meter::default()
        });
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
            m.charge(1)?;
            Ok(v)
        });
        let m = Arc::clone(&meter);
        ctx.add_function(SIZE_FN, move |v: Cel| -> Result<Cel, ExecutionError> {
            m.charge(1 + size_of(&v) / 10)?;
            Ok(v)
        });
        let m = Arc::clone(&meter);
        ctx.add_function(CALL_FN, move |ftx: &FunctionContext| -> ResolveResult {
            guarded_call(&m, ftx)
        });
        ctx.add_function(ACC_NEW, || -> Result<Cel, ExecutionError> {
            Ok(Cel::Opaque(Arc::new(Accumulator::default())))
        });
        ctx.add_function(
            ACC_PUSH,
            |acc: Cel, x: Cel| -> Result<Cel, ExecutionError> {
                accumulator(&acc)?.push(x);
                Ok(acc)
            },
        );
        ctx.add_function(ACC_LIST, |acc: Cel| -> Result<Cel, ExecutionError> {
            Ok(Cel::List(Arc::new(std::mem::take(&mut *accumulator(
                &acc,
            )?))))
        });
        let mut run = Run {
            ctx,
            meter,
            per_call: limits.per_call,
            timeout: limits.timeout,
            remaining: limits.budget,
            out: Vec::new(),
            stopped: false,
        };
        run.node(&self.root, structural, instance, &FieldPath::root());
        run.out
    }
}

/// One validation's state: the interpreter context, the meter, the remaining budget.
struct Run<'c> {
    ctx: Context<'c>,
    meter: Arc<Meter>,
    per_call: u64,
    timeout: Duration,
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
    /// The deadline passed.
    Timeout,
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
                    // The apiserver's `fldPath.Key(k)`: `ports[http]`, not `ports.http`.
                    for (k, x) in m {
                        self.node(ap, sa, x, &path.map_key(k));
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
        let invalid_type = |detail: String| {
            FieldError::new(path.clone(), format!("Invalid value: {type_}: {detail}"))
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
                Outcome::Timeout => {
                    errs.push(invalid_type(format!(
                        "'operation interrupted': {} for rule: {detail_rule}",
                        timeout_detail(self.timeout)
                    )));
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
                        errs.push(FieldError::new(at, format!("Invalid value: {type_}: no further validation rules will be run due to call cost exceeds limit for messageExpression: {}", quote(src))));
                        stop = true;
                        break;
                    }
                    Outcome::Budget => {
                        errs.push(FieldError::new(at, format!("Invalid value: {type_}: messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run")));
                        stop = true;
                        break;
                    }
                    Outcome::Timeout => {
                        errs.push(FieldError::new(at, format!("Invalid value: {type_}: 'operation interrupted': {} for messageExpression: {}", timeout_detail(self.timeout), quote(src))));
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
        if self.meter.timed_out.load(Ordering::Relaxed) {
            return Outcome::Timeout;
        }
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

/// Why a validation was interrupted.
fn timeout_detail(timeout: Duration) -> String {
    format!(
        "no further validation rules will be run due to the function timeout of {} seconds ({})",
        timeout.as_secs(),
        crate::env::FUNCTION_TIMEOUT
    )
}

/// cel-go's wording for the runtime errors rules meet most.
fn describe(e: &ExecutionError) -> String {
    let mut text = match e {
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::IndexOutOfBounds(i) => format!("index out of bounds: {}", show_cel(i)),
        ExecutionError::UndeclaredReference(r) => {
            format!("undeclared reference to {}", quote(r))
        }
        // Library messages may span lines (regex errors): one line in a result.
        other => other
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    };
    // Errors quote the values they met, which may be as large as the budget allows.
    if text.len() > MAX_ERROR_BYTES {
        let mut end = MAX_ERROR_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// The longest runtime error text kept in a field error.
const MAX_ERROR_BYTES: usize = 1024;

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
    FieldError::new(path, message)
}

#[cfg(test)]
mod tests {
    use super::value::escape;
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

    fn limits(per_call: u64, budget: u64) -> Limits {
        Limits {
            per_call,
            budget,
            timeout: Duration::from_secs(300),
        }
    }

    fn obj(props: Value, rules: Value) -> Value {
        let mut schema = serde_json::Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), props);
        schema.insert("x-kubernetes-validations".into(), rules);
        Value::Object(schema)
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
                "m[b]: Invalid value: \"x\": failed rule: self.startsWith('v')",
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
            .validate_with_limits(&s, &big, limits(10_000, 100_000))
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
            .validate_with_limits(&s, &big, limits(10_000, 50))
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

    #[test]
    fn edge_cases_never_panic_and_allocations_are_charged() {
        for rule in [
            "self.s.charAt(-1) == ''",
            "self.s.charAt(100) == ''",
            "self.s.substring(5, 2) == ''",
            "self.s.substring(-1) == ''",
            "self.s.indexOf('x', 100) == 0",
            "self.s.lastIndexOf('x', -5) == 0",
            "self.l[5] == 1",
            "self.l[-1] == 1",
            "lists.range(100000000).size() > 0",
            "self.s.split('', -1).size() > 0",
            "'%d'.format([]) == ''",
            "'%'.format([1]) == ''",
            "quantity('1e999999999').isInteger()",
            "quantity('9999999999999999999999999999999Ei').isInteger()",
            "self.s.matches('(') ",
            "self.s.find('(') == ''",
            "url('::').getHost() == ''",
            "cidr('1.2.3.4/99').prefixLength() == 1",
            "ip('1.2.3.4').family() == 4",
            "semver('1.2').major() == 1",
            "math.bitShiftLeft(1, 100) == 0",
            "math.bitShiftLeft(1, -1) == 0",
            "base64.decode('!!!') == b''",
            "self.l.slice(3, 1).size() == 0",
            "self.l.sort() == self.l",
            "[1, 'a'].sort().size() == 2",
            "self.l.min() == 1",
            "[].min() == 1",
            "lists.range(-5).size() == 0",
            "1 / 0 == 1",
            "-9223372036854775808 / -1 == 1",
            "-9223372036854775808 % -1 == 1",
            "'abc'.reverse() == 'cba'",
            "strings.quote('\\xff') == ''",
            "'\u{e9}'.charAt(0) == ''",
            "'\u{e9}x'.substring(1) == 'x'",
            "self.s.indexOf('') == 0",
            "'aé'.lastIndexOf('é', 1) == 1",
            "duration('1h') > duration('1m')",
            "timestamp('2020-01-01T00:00:00Z') > timestamp('2019-01-01T00:00:00Z')",
            "int('x') == 1",
            "double('x') == 1.0",
            "[1,2,3].flatten(-1).size() == 3",
            "dyn(1) == 1",
            "'%.999999999f'.format([1.0]) == ''",
            "'%.2f %s'.format([1.0, 'a']) == '1.00 a'",
            "lists.range(10).map(i, 'x').size() == 10",
            "{1: 2}.all(k, k == 1)",
        ] {
            let schema = json!({"type": "object", "properties": {"s": {"type": "string"},
                "l": {"type": "array", "items": {"type": "integer"}}},
                "x-kubernetes-validations": [{"rule": rule}]});
            // Every rule compiles and evaluates to a verdict or a field error, never a panic.
            let _ = errors(&schema, &json!({"s": "héllo", "l": [3, 1, 2]}));
        }
        let schema = obj(
            json!({}),
            json!([
                {"rule": "lists.range(100000000).size() > 0"},
                {"rule": "'%.999999999f'.format([1.0]) == ''"},
                {"rule": "'%.2f %s'.format([1.0, 'a']) == '1.00 a' && lists.range(3).size() == 3"},
            ]),
        );
        assert_eq!(
            errors(&schema, &json!({})),
            [
                "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: lists.range(100000000).size() > 0",
            ]
        );
        let schema = obj(
            json!({}),
            json!([{"rule": "'%.999999999f'.format([1.0]) == ''"}]),
        );
        assert_eq!(
            errors(&schema, &json!({})),
            [
                "Invalid value: \"object\": Error executing function 'format': precision over 1000 is not supported evaluating rule: '%.999999999f'.format([1.0]) == ''"
            ]
        );
        // A string doubled in a loop is charged by its size: stopped long before it is large.
        let schema = obj(
            json!({"s": {"type": "string"}}),
            json!([{"rule": "lists.range(100000).map(i, self.s + self.s + self.s).size() > 0"}]),
        );
        let big = "x".repeat(10_000);
        let got = errors(&schema, &json!({"s": big}));
        assert!(got[0].contains("call cost exceeds limit"), "{got:?}");
    }

    #[test]
    fn formatted_strings_are_timestamps_durations_and_bytes() {
        let schema = obj(
            json!({"at": {"type": "string", "format": "date-time"},
                   "every": {"type": "string", "format": "duration"},
                   "data": {"type": "string", "format": "byte"}}),
            json!([
                {"rule": "self.at > timestamp('2024-01-01T00:00:00Z')", "message": "at"},
                {"rule": "self.every <= duration('1h')", "message": "every"},
                {"rule": "self.data.size() == 3", "message": "data"},
            ]),
        );
        assert!(
            errors(
                &schema,
                &json!({"at": "2025-06-01T10:00:00+02:00", "every": "90m", "data": "YWJj"})
            )
            .iter()
            .eq(["Invalid value: every"].iter())
        );
        assert!(
            errors(
                &schema,
                &json!({"at": "2025-06-01T10:00:00Z", "every": "-5m", "data": "YWJj"})
            )
            .is_empty()
        );
    }

    /// The one error of a schema whose only rule is `rule`, evaluated on `{s: "héllo", l: [3, 1, 2]}`.
    fn verdict(rule: &str) -> Vec<String> {
        let schema = json!({"type": "object", "properties": {"s": {"type": "string"},
            "l": {"type": "array", "items": {"type": "integer"}}},
            "x-kubernetes-validations": [{"rule": rule}]});
        errors(&schema, &json!({"s": "héllo", "l": [3, 1, 2]}))
    }

    fn rule_problems(rule: &str) -> Vec<String> {
        compile_problems(&json!({"type": "object", "x-kubernetes-validations": [{"rule": rule}]}))
    }

    #[test]
    fn issue15_h1_deep_chains_are_refused_when_compiled() {
        let started = Instant::now();
        assert_eq!(
            rule_problems(&format!("1{} > 0", " + 1".repeat(5000))),
            [
                "x-kubernetes-validations[0].rule: compilation failed: expression recursion limit exceeded: 250 (5000 arithmetic operators (`+`, `-`, `*`, `/`, `%`) in a chain)"
            ]
        );
        assert_eq!(
            rule_problems(&format!("'A'{}.size() > 0", ".lowerAscii()".repeat(5000))),
            [
                "x-kubernetes-validations[0].rule: compilation failed: expression recursion limit exceeded: 250 (5001 selections, calls and indexes (`.f()`, `.x`, `[i]`) in a chain)"
            ]
        );
        assert_eq!(
            rule_problems(&format!("{}true{}", "(".repeat(200), ")".repeat(200))),
            [
                "x-kubernetes-validations[0].rule: compilation failed: expression recursion limit exceeded: 96 (200 brackets, calls and conditionals inside each other)"
            ]
        );
        assert_eq!(
            rule_problems(&format!("1{} == 1", " == 1".repeat(300))),
            [
                "x-kubernetes-validations[0].rule: compilation failed: expression recursion limit exceeded: 250 (301 comparisons (`==`, `<`, `in`, …) in a chain)"
            ]
        );
        assert_eq!(
            rule_problems(&"x".repeat(100_001)),
            [
                "x-kubernetes-validations[0].rule: compilation failed: expression code point size exceeds limit: size: 100001, limit 100000"
            ]
        );
        // What the apiserver accepts compiles and evaluates, the deepest of every kind at once.
        assert!(verdict(&format!("1{} == 249", " + 1".repeat(248))).is_empty());
        assert_eq!(
            verdict(
                &format!("self.s{}.size() == 5", ".lowerAscii()".repeat(244))
                    .replace("== 5", "== self.s.size()")
            ),
            Vec::<String>::new()
        );
        assert!(verdict(&format!("true{}", " == true".repeat(247))).is_empty());
        let deepest = format!(
            "{}self.s{} {}{}",
            "(".repeat(90),
            ".lowerAscii()".repeat(150),
            "+ 'x' ".repeat(150),
            ")".repeat(90)
        );
        assert!(verdict(&format!("{deepest}.size() > 0{}", " == true".repeat(150))).is_empty());
        let conditions = format!("{}{}", "true ? 1 : ".repeat(90), "0");
        assert!(verdict(&format!("({conditions}) == 1")).is_empty());
        // A long `&&` chain is balanced by the parser: not limited.
        assert!(verdict(&format!("true{}", " && true".repeat(5000))).is_empty());
        assert!(started.elapsed() < Duration::from_secs(60));
    }

    #[test]
    fn issue15_h2_lists_built_by_map_are_linear_and_quadratic_calls_are_charged_as_such() {
        let started = Instant::now();
        // `map` and `filter` append in place: 80,000 steps take well under a second.
        assert!(verdict("lists.range(80000).map(i, 1).size() == 80000").is_empty());
        assert!(verdict("lists.range(80000).filter(i, i % 2 == 0).size() == 40000").is_empty());
        assert!(
            verdict(
                "lists.range(3).map(i, lists.range(2).map(j, i * j)) == [[0, 0], [0, 1], [0, 2]]"
            )
            .is_empty()
        );
        assert!(verdict("self.l.map(x, x * 2).filter(y, y > 2) == [6, 4]").is_empty());
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        for rule in [
            "lists.range(20000).distinct().size() > 0",
            "sets.equivalent(lists.range(20000), lists.range(20000))",
            "sets.contains(lists.range(20000), lists.range(20000))",
            "lists.range(200000).map(i, 'abcdefghij').sort().size() > 0",
            "lists.range(300).map(i, lists.range(3000)).flatten().size() > 0",
        ] {
            let started = Instant::now();
            assert_eq!(
                verdict(rule),
                [format!(
                    "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {rule}"
                )]
            );
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{rule}: {:?}",
                started.elapsed()
            );
        }
        // Within the limit, they run.
        assert!(verdict("lists.range(1000).distinct().size() == 1000").is_empty());
        assert!(verdict("sets.equivalent(lists.range(1000), lists.range(1000))").is_empty());
        // The function timeout stops a validation at the next charge.
        let schema = obj(json!({}), json!([{"rule": "lists.range(10).all(i, true)"}]));
        let (s, r) = rules(&schema);
        let zero = Limits {
            timeout: Duration::ZERO,
            ..limits(PER_CALL_LIMIT, VALIDATION_BUDGET)
        };
        assert_eq!(
            r.validate_with_limits(&s, &json!({}), zero)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [
                "Invalid value: \"object\": 'operation interrupted': no further validation rules will be run due to the function timeout of 0 seconds (KRM_CATALOG_FUNCTION_TIMEOUT) for rule: lists.range(10).all(i, true)"
            ]
        );
    }

    #[test]
    fn issue15_h3_growing_calls_are_charged_before_they_allocate() {
        let l = "x".repeat(230);
        for rule in [
            format!(
                "(('{l}'.replace('', '{l}')).replace('', '{l}'.replace('', '{l}'))).size() > 0"
            ),
            format!("lists.range(1000).map(i, '{l}').join('{l}'.replace('', '{l}')).size() > 0"),
            format!("'%s%s'.format([lists.range(5000).map(i, '{l}'), 1]).size() > 0"),
            format!(
                "lists.range(20).map(i, '{l}'.replace('', '{l}')).join('').split('').size() > 0"
            ),
            format!("lists.range(100).map(i, '{l}'.replace('', '{l}')).map(s, s + s).size() > 0"),
        ] {
            let started = Instant::now();
            assert_eq!(
                verdict(&rule),
                [format!(
                    "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {rule}"
                )]
            );
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{rule}: {:?}",
                started.elapsed()
            );
        }
        // An error quoting a large value is cut.
        let got = verdict("{'a': 1}[lists.range(100000).map(i, 'x').join('')] == 1");
        assert_eq!(got.len(), 1);
        assert!(
            got[0].len() < 1200 && got[0].contains('…'),
            "{}",
            got[0].len()
        );
        // The results are the library's.
        assert!(
            verdict("'abc'.replace('', '-') == '-a-b-c-' && 'a,b'.split(',') == ['a', 'b']")
                .is_empty()
        );
        assert!(
            verdict("['a', 'b'].join('-') == 'a-b' && '%s=%d'.format(['x', 3]) == 'x=3'")
                .is_empty()
        );
        assert!(
            verdict("'aaa'.replace('a', 'bb', 2) == 'bbbba' && self.s.upperAscii() == 'HéLLO'")
                .is_empty()
        );
        assert!(verdict("sets.contains(self.l, [1]) && self.l.sort() == [1, 2, 3] && math.greatest(self.l) == 3").is_empty());
    }

    use proptest::prelude::*;

    /// Random expressions of random depth and width, from pieces that are cheap, deep, wide,
    /// quadratic or growing, well-typed or not.
    fn expression() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("1".to_owned()),
            Just("'ab'".to_owned()),
            Just("self.s".to_owned()),
            Just("self.l".to_owned()),
            Just("[1, 'a']".to_owned()),
            Just("lists.range(50)".to_owned()),
            Just("true".to_owned()),
        ];
        leaf.prop_recursive(6, 64, 4, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} + {b}")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) == ({b})")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(a, b, c)| format!("{a} ? {b} : {c}")),
                inner.clone().prop_map(|a| format!("({a}).lowerAscii()")),
                inner.clone().prop_map(|a| format!("({a}).size()")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("[{a}, {b}]")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}).map(x, {b})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}).all(x, {b})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}).replace('', {b})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}).join({b})")),
                inner.clone().prop_map(|a| format!("({a}).distinct()")),
                inner.clone().prop_map(|a| format!("({a}).split('')")),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| format!("sets.equivalent({a}, {b})")),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| format!("'%s%s'.format([{a}, {b}])")),
                inner
                    .clone()
                    .prop_map(|a| format!("lists.range(({a}).size() * 1000).map(i, {a})")),
            ]
        })
    }

    /// A chain or a nest of random length around a random expression.
    fn deep_expression() -> impl Strategy<Value = String> {
        (expression(), 0usize..400, 0usize..130, 0usize..4).prop_map(|(e, n, nest, kind)| {
            let chain = match kind {
                0 => format!("({e}){}", " + 1".repeat(n)),
                1 => format!("({e}){}", ".lowerAscii()".repeat(n)),
                2 => format!("({e}){}", " == 1".repeat(n)),
                _ => format!("({e}){}", "[0]".repeat(n)),
            };
            format!("{}{chain}{}", "(".repeat(nest), ")".repeat(nest))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn random_expressions_compile_and_evaluate_within_the_limits(rule in deep_expression()) {
            let started = Instant::now();
            let schema = json!({"type": "object", "properties": {"s": {"type": "string"},
                "l": {"type": "array", "items": {"type": "integer"}}},
                "x-kubernetes-validations": [{"rule": rule}]});
            let s = Structural::from_json(&schema).unwrap();
            match CelRules::compile(&schema, &s) {
                Ok(r) => {
                    let r = r.unwrap();
                    // A verdict or one field error; never a panic, an overflow or a hang.
                    let out = r.validate(&s, &json!({"s": "héllo", "l": [3, 1, 2]}));
                    prop_assert!(out.len() <= 1, "{out:?}");
                }
                Err(problems) => {
                    prop_assert_eq!(problems.len(), 1);
                    prop_assert!(problems[0].message.starts_with("compilation failed: "), "{:?}", problems);
                }
            }
            prop_assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
        }
    }
}

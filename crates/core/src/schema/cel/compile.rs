//! Compiling `x-kubernetes-validations` (apiextensions-apiserver `compilation.go`
//! `compileRule`, `validation.go` `ValidFieldPath`): each rule and `messageExpression` parsed,
//! checked for what the `cel` interpreter cannot run, and metered; the compiled tree.
//!
//! Imports `scan` (the size and nesting of an expression, checked before it is parsed).

use kube_cel::cel::Program;
use kube_cel::cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, ListExpr, LiteralValue, operators,
};
use serde_json::Value;

use super::scan;
use crate::diagnostics::FieldPath;
use crate::schema::structural::{SchemaProblem, Structural, quote};

/// The metering function; `@` cannot be written in CEL source, so no rule can call it.
pub(super) const STEP_FN: &str = "@krm_step";
/// The allocation meter around every other call: one step plus a tenth of the size of what the
/// call made (bytes of a string, elements of a list or map), as the apiserver charges.
pub(super) const SIZE_FN: &str = "@krm_size";
/// The guard around every call that may cost more than a step: `@krm_call('<how>', …)` with
/// the call's target (if any) and arguments; it charges what the call will cost, from the
/// values it is given, before making the call. `<how>` is `g:<function>` (a global call),
/// `m:<function>` (a method: the first argument is the target) or `q:<name>:<function>` (a call
/// on an identifier: a namespace such as `sets.` or a variable, as the interpreter decides).
pub(super) const CALL_FN: &str = "@krm_call";
/// `map` and `filter` build their result in place (cel-go appends to a mutable list; the `cel`
/// interpreter's `accu + [x]` copies the whole list every step): a new accumulator, …
pub(super) const ACC_NEW: &str = "@krm_acc";
/// … one element appended, …
pub(super) const ACC_PUSH: &str = "@krm_push";
/// … and the list it holds.
pub(super) const ACC_LIST: &str = "@krm_list";
/// Calls that cost one step whatever their arguments (or decide which arguments to evaluate):
/// not guarded.
const CONSTANT_CALLS: [&str; 19] = [
    operators::CONDITIONAL,
    operators::LOGICAL_AND,
    operators::LOGICAL_OR,
    operators::LOGICAL_NOT,
    operators::NEGATE,
    operators::NOT_STRICTLY_FALSE,
    operators::INDEX,
    operators::OPT_INDEX,
    operators::OPT_SELECT,
    "size",
    "hasValue",
    "value",
    "or",
    "orValue",
    "first",
    "last",
    "type",
    "dyn",
    "of",
];
/// Identifiers a rule may use besides `self`, `oldSelf` and comprehension variables: the CEL
/// type denotations.
pub(super) const TYPE_IDENTS: [&str; 11] = [
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

/// `reason` of a rule: which kind of field error a failure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reason {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
}

#[derive(Debug)]
pub(super) struct Rule {
    /// The rule as written (trimmed), for "failed rule: …".
    pub(super) source: String,
    pub(super) message: Option<String>,
    pub(super) program: IdedExpr,
    pub(super) message_expression: Option<(String, IdedExpr)>,
    pub(super) uses_old_self: bool,
    pub(super) field_path: FieldPath,
    pub(super) reason: Reason,
}

/// A program's tree is as deep as the expression nests: taken apart without recursion, so
/// that dropping it needs no more stack on whichever thread drops it.
impl Drop for Rule {
    fn drop(&mut self) {
        dismantle(std::mem::take(&mut self.program));
        if let Some((_, e)) = self.message_expression.take() {
            dismantle(e);
        }
    }
}

fn dismantle(e: IdedExpr) {
    let mut stack = vec![e];
    while let Some(mut e) = stack.pop() {
        match &mut e.expr {
            Expr::Call(c) => {
                if let Some(t) = c.target.take() {
                    stack.push(*t);
                }
                stack.append(&mut c.args);
            }
            Expr::Select(s) => stack.push(std::mem::take(&mut *s.operand)),
            Expr::List(l) => stack.append(&mut l.elements),
            Expr::Map(m) => {
                for entry in &mut m.entries {
                    match &mut entry.expr {
                        EntryExpr::MapEntry(me) => {
                            stack.push(std::mem::take(&mut me.key));
                            stack.push(std::mem::take(&mut me.value));
                        }
                        EntryExpr::StructField(f) => stack.push(std::mem::take(&mut f.value)),
                    }
                }
            }
            Expr::Comprehension(c) => {
                for part in [
                    &mut c.iter_range,
                    &mut c.accu_init,
                    &mut c.loop_cond,
                    &mut c.loop_step,
                    &mut c.result,
                ] {
                    stack.push(std::mem::take(part));
                }
            }
            Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) | Expr::Struct(_) => {}
        }
    }
}

/// The rules of one schema node and of the nodes below it that carry any.
#[derive(Debug, Default)]
pub(super) struct Node {
    pub(super) rules: Vec<Rule>,
    pub(super) properties: Vec<(String, Node)>,
    pub(super) items: Option<Box<Node>>,
    pub(super) additional_properties: Option<Box<Node>>,
    /// `allOf` entries with rules: evaluated against the same value (upstream `AllOfValidators`).
    pub(super) all_of: Vec<Node>,
}

impl Node {
    pub(super) fn is_empty(&self) -> bool {
        self.rules.is_empty()
            && self.properties.is_empty()
            && self.items.is_none()
            && self.additional_properties.is_none()
            && self.all_of.is_empty()
    }
}

pub(super) fn compile_node(
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
pub(super) fn compile_rule(
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

/// Check the size and nesting, parse, check what the interpreter cannot run, and insert the
/// meters.
pub(super) fn compile_expression(source: &str) -> Result<IdedExpr, String> {
    scan::check(source)?;
    let program = Program::compile(source).map_err(|e| e.to_string().replace('\n', "; "))?;
    let mut expr = program.expression().clone();
    let mut bound = vec!["self".to_owned(), "oldSelf".to_owned()];
    check(&expr, &mut bound)?;
    meter(&mut expr);
    Ok(expr)
}

/// What cel-go's checker would reject and the `cel` interpreter cannot run (it panics on
/// struct literals): undeclared identifiers and message construction.
pub(super) fn check(e: &IdedExpr, bound: &mut Vec<String>) -> Result<(), String> {
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

pub(super) fn references_ident(e: &IdedExpr, name: &str) -> bool {
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

/// Route every comprehension step through [`STEP_FN`], every call that may cost more than a
/// step through [`CALL_FN`] and every other call's result through [`SIZE_FN`], so that loops,
/// what calls compute and what they allocate are charged to the budget, before the work where
/// the size is known from the arguments.
pub(super) fn meter(e: &mut IdedExpr) {
    if let Expr::Comprehension(c) = &mut e.expr {
        accumulate_in_place(c);
    }
    meter_children(e);
    let Expr::Call(c) = &mut e.expr else {
        return;
    };
    if c.func_name.starts_with("@krm") {
        return;
    }
    let namespaced = matches!(
        c.target.as_deref(),
        Some(IdedExpr {
            expr: Expr::Ident(_),
            ..
        })
    );
    let constant =
        (namespaced || c.func_name != "of") && CONSTANT_CALLS.contains(&c.func_name.as_str());
    if constant {
        wrap(e, SIZE_FN);
        return;
    }
    let mut args = Vec::with_capacity(c.args.len() + 2);
    let how = match c.target.take().map(|t| *t) {
        None => format!("g:{}", c.func_name),
        Some(IdedExpr {
            expr: Expr::Ident(name),
            ..
        }) => format!("q:{name}:{}", c.func_name),
        Some(target) => {
            args.push(target);
            format!("m:{}", c.func_name)
        }
    };
    args.splice(0..0, [literal(e.id, &how)]);
    args.append(&mut c.args);
    CALL_FN.clone_into(&mut c.func_name);
    c.args = args;
}

fn literal(id: u64, text: &str) -> IdedExpr {
    IdedExpr {
        id,
        expr: Expr::Literal(LiteralValue::String(text.into())),
    }
}

fn call(id: u64, func: &str, args: Vec<IdedExpr>) -> IdedExpr {
    IdedExpr {
        id,
        expr: Expr::Call(CallExpr {
            func_name: func.to_owned(),
            target: None,
            args,
        }),
    }
}

fn wrap(e: &mut IdedExpr, func: &str) {
    let inner = std::mem::take(e);
    *e = call(inner.id, func, vec![inner]);
}

/// The `map` and `filter` macros' comprehension (`@result` starts as `[]`, each step is
/// `@result + [x]`, maybe under a condition, the result is `@result`) rewritten to append in
/// place: [`ACC_NEW`], [`ACC_PUSH`], [`ACC_LIST`].
fn accumulate_in_place(c: &mut ComprehensionExpr) {
    let accu = c.accu_var.clone();
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(n) if *n == accu);
    let empty_init = matches!(&c.accu_init.expr, Expr::List(l) if l.elements.is_empty());
    if accu != "@result" || !empty_init || !is_accu(&c.result) {
        return;
    }
    let is_append = |e: &IdedExpr| match &e.expr {
        Expr::Call(call) => {
            call.func_name == operators::ADD
                && call.target.is_none()
                && call.args.len() == 2
                && is_accu(&call.args[0])
                && matches!(&call.args[1].expr, Expr::List(l) if l.elements.len() == 1 && l.optional_indices.is_empty())
        }
        _ => false,
    };
    let filtered = match &c.loop_step.expr {
        _ if is_append(&c.loop_step) => false,
        Expr::Call(cond)
            if cond.func_name == operators::CONDITIONAL
                && cond.args.len() == 3
                && is_append(&cond.args[1])
                && is_accu(&cond.args[2]) =>
        {
            true
        }
        _ => return,
    };
    let append = match &mut c.loop_step.expr {
        Expr::Call(cond) if filtered => &mut cond.args[1],
        _ => &mut c.loop_step,
    };
    let Expr::Call(add) = &mut append.expr else {
        return;
    };
    let Some(Expr::List(ListExpr { elements, .. })) = add.args.pop().map(|a| a.expr) else {
        return;
    };
    let Some(accu_ident) = add.args.pop() else {
        return;
    };
    ACC_PUSH.clone_into(&mut add.func_name);
    add.args = vec![accu_ident];
    add.args.extend(elements);
    c.accu_init = call(c.accu_init.id, ACC_NEW, Vec::new());
    let result = std::mem::take(&mut c.result);
    c.result = call(result.id, ACC_LIST, vec![result]);
}

fn meter_children(e: &mut IdedExpr) {
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
            // A namespace (`sets` of `sets.contains`) stays an identifier for the interpreter.
            if let Some(t) = c.target.as_deref_mut()
                && !matches!(t.expr, Expr::Ident(_))
            {
                meter(t);
            }
            c.args.iter_mut().for_each(meter);
        }
        Expr::Comprehension(c) => {
            meter(&mut c.iter_range);
            meter(&mut c.accu_init);
            meter(&mut c.loop_cond);
            // The step itself is charged one step; what it calls is charged as any call.
            meter_children(&mut c.loop_step);
            wrap(&mut c.loop_step, STEP_FN);
            meter(&mut c.result);
        }
        Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) | Expr::Struct(_) => {}
    }
}

/// Upstream `ValidFieldPath`: `.a.b`, `['a.b']`, map keys under `additionalProperties`.
pub(super) fn valid_field_path(json_path: &str, schema: &Structural) -> Result<FieldPath, String> {
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

pub(super) fn unescape_single_quote(s: &str) -> Result<String, String> {
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

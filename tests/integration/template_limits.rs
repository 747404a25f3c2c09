//! Template limits against shared and nested values (issue 21 H4), end to end. A package's
//! own inline ServiceDefinition is enough: a list built from itself in a loop
//! (`ns.a = [ns.a, ns.a]`, 26 times) is 27 values but 2^26 leaves, and comparing, sorting,
//! hashing or printing it walked them all inside one instruction (41 s past a 10 s limit,
//! past 60 s, or until the process aborted on a failed allocation); a list nested in itself
//! 100,000 times overflowed the stack. Each must fail with the template and line, within the
//! limit, without an abort.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::util::{TestContext, stderr, stdout};

/// Two distinct lists doubled 26 times (lines 1 and 2 of every template).
const DOUBLED: &str = "{%- set ns = namespace(a=[1], b=[1]) %}
{%- for i in range(26) %}{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% endfor %}";

/// A list nested in itself 100,000 times (lines 1 and 2).
const NESTED: &str = "{%- set ns = namespace(a=[1]) %}
{%- for i in range(100000) %}{% set ns.a = [ns.a] %}{% endfor %}";

/// A ResourceList with an inline ServiceDefinition `h4` whose template `<name>.yaml.j2` is
/// `prelude`, then a ConfigMap whose value is `expr` (line 8), and one instance of it.
fn input(prelude: &str, templates: &[(&str, &str)]) -> String {
    let mut defs = String::new();
    for (name, expr) in templates {
        writeln!(defs, "      {name}.yaml.j2: |").expect("to a string");
        let body = format!(
            "{prelude}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  v: \"{{{{ {expr} }}}}\"\n"
        );
        for line in body.lines() {
            writeln!(defs, "        {line}").expect("to a string");
        }
    }
    format!(
        "apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: kubara.io/v1alpha1
  kind: ServiceDefinition
  metadata:
    name: h4
  spec:
    chartPath: h4
    status: enabled
    templates:
{defs}- apiVersion: services.krm-catalog.dev/v1alpha1
  kind: H4
  metadata:
    name: s
functionConfig:
  apiVersion: krm-catalog.dev/v1alpha1
  kind: ResolveCatalog
  metadata:
    name: x
  spec:
    builtin: false
"
    )
}

/// Run `input` under an address-space limit and a deadline; exit 1 with `message` for every
/// template, within `within`.
fn assert_fails(ctx: TestContext, input: &str, names: &[&str], message: &str, within: Duration) {
    let started = Instant::now();
    let out = ctx
        .with_address_space(2_000_000 * 1024)
        .with_deadline(Duration::from_secs(120))
        .run(&[], input);
    let took = started.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for name in names {
        let wanted = format!("template charts/h4/{name}.yaml.j2:8: {message}");
        assert!(err.contains(&wanted), "missing {wanted:?} in:\n{err}");
    }
    assert!(took < within, "took {took:?}:\n{err}");
}

#[test]
fn issue15_h4_template_walks_over_shared_lists_stop_at_the_time_limit() {
    let templates = [
        ("eq", "ns.a == ns.b"),
        ("unique", "[ns.a, ns.b] | unique | list"),
        ("sort", "[ns.a, ns.b] | sort"),
        ("in", "ns.a in [ns.b]"),
        ("keys", "{ns.a: 1, ns.b: 2}"),
        ("max", "[ns.a, ns.b] | max"),
    ];
    let names: Vec<&str> = templates.iter().map(|(name, _)| *name).collect();
    // Six renders of one second each, and the rest of the run.
    assert_fails(
        TestContext::new().with_env("KRM_CATALOG_TEMPLATE_TIMEOUT", "1"),
        &input(DOUBLED, &templates),
        &names,
        "template ran longer than its time limit of 1 seconds; fix the template or raise KRM_CATALOG_TEMPLATE_TIMEOUT",
        Duration::from_secs(30),
    );
}

#[test]
fn issue15_h4_template_printing_shared_lists_stays_within_the_memory_budget() {
    let templates = [
        ("format", "'%s' | format(ns.a)"),
        ("format2", "'%s%s' | format(ns.a, ns.b)"),
        ("in", "ns.a in 'x'"),
        ("upper", "ns.a | upper"),
    ];
    let names: Vec<&str> = templates.iter().map(|(name, _)| *name).collect();
    let input = input(DOUBLED, &templates);
    // The default budget, under an address-space limit the run aborted at. The clock is set
    // far off: formatting 128 MiB takes a debug build on a loaded machine more than the
    // default 10 s, and this test is about the budget (the time limit has its own test).
    assert_fails(
        TestContext::new().with_env("KRM_CATALOG_TEMPLATE_TIMEOUT", "100"),
        &input,
        &names,
        "template exceeded its memory budget: it created more than 134217728 bytes",
        Duration::from_secs(115),
    );
    // A smaller budget, named in the message.
    assert_fails(
        TestContext::new().with_env("KRM_CATALOG_TEMPLATE_MAX_BYTES", "4194304"),
        &input,
        &names,
        "template exceeded its memory budget: it created more than 4194304 bytes",
        Duration::from_secs(30),
    );
}

#[test]
fn issue15_h4_template_values_nested_in_a_loop_fail_without_a_stack_overflow() {
    let templates = [
        ("print", "ns.a"),
        ("eq", "ns.a == [ns.a]"),
        ("keys", "{ns.a: 1}"),
        ("tojson", "ns.a | toJson"),
    ];
    let names: Vec<&str> = templates.iter().map(|(name, _)| *name).collect();
    assert_fails(
        TestContext::new(),
        &input(NESTED, &templates),
        &names,
        "template values are nested more than 256 levels deep (a list or map put inside itself in a loop); fix the template",
        Duration::from_secs(30),
    );
    // Building and freeing such a value is fine.
    let out = TestContext::new()
        .with_deadline(Duration::from_secs(60))
        .run(&[], &input(NESTED, &[("length", "ns.a | length")]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("v: \"1\""), "{}", stdout(&out));
}

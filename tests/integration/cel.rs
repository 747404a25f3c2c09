//! CEL limits end to end (issue 21 H1–H3): a package's own inline ServiceDefinition carries
//! `x-kubernetes-validations` rules in its config schema. A rule of 5,000 chained `+ 1` or
//! `.lowerAscii()` overflowed the stack (exit 134, no output); `map` over 20,000 elements took
//! 51 s and `distinct()` or `sets.equivalent` over large ranges ran past 60 s; one `replace`
//! allocated 2.8 GB before anything charged it. Each must end in a clear error, quickly.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::util::{TestContext, stderr, stdout};

/// A ResourceList with one inline ServiceDefinition per rule (`r0`, `r1`, …; kind `R0`, …)
/// whose config schema carries that rule, and one instance of each (with a value: the rules
/// of an empty config do not run).
fn input(rules: &[&str]) -> String {
    let mut items = String::new();
    for (i, rule) in rules.iter().enumerate() {
        let rule = rule.replace('\'', "''");
        write!(
            items,
            "- apiVersion: kubara.io/v1alpha1
  kind: ServiceDefinition
  metadata:
    name: r{i}
  spec:
    chartPath: r{i}
    status: enabled
    configSchema:
      type: object
      properties:
        n:
          type: integer
      x-kubernetes-validations:
      - rule: '{rule}'
    templates:
      cm.yaml.j2: |
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: r{i}
- apiVersion: services.krm-catalog.dev/v1alpha1
  kind: R{i}
  metadata:
    name: s{i}
  spec:
    config:
      n: 1
"
        )
        .expect("to a string");
    }
    format!(
        "apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
{items}functionConfig:
  apiVersion: krm-catalog.dev/v1alpha1
  kind: ResolveCatalog
  metadata:
    name: x
  spec:
    builtin: false
"
    )
}

/// Run the rules under an address-space limit; exit 1 with every `wanted` message in the
/// output, within `within`.
fn assert_fails(ctx: TestContext, rules: &[&str], wanted: &[String], within: Duration) {
    let started = Instant::now();
    let out = ctx
        .with_address_space(2_000_000 * 1024)
        .with_deadline(Duration::from_secs(120))
        .run(&[], &input(rules));
    let took = started.elapsed();
    let all = format!("{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{all}");
    for w in wanted {
        assert!(all.contains(w.as_str()), "missing {w:?} in:\n{all}");
    }
    assert!(took < within, "took {took:?}:\n{all}");
}

#[test]
fn issue15_h1_deep_cel_rules_are_refused_at_load_not_a_crash() {
    let plus = format!("1{} > 0", " + 1".repeat(5000));
    let lower = format!("'a'{}.size() > 0", ".lowerAscii()".repeat(5000));
    assert_fails(
        TestContext::new(),
        &[&plus, &lower],
        &[
            "configSchema.x-kubernetes-validations[0].rule: compilation failed: expression recursion limit exceeded: 250 (5000 arithmetic operators (`+`, `-`, `*`, `/`, `%`) in a chain)".to_owned(),
            "expression recursion limit exceeded: 250 (5001 selections, calls and indexes (`.f()`, `.x`, `[i]`) in a chain)".to_owned(),
        ],
        Duration::from_secs(30),
    );
}

#[test]
fn issue15_h2_quadratic_cel_rules_stop_at_the_cost_limit() {
    let rules = [
        "lists.range(20000).map(i, 1).size() == 0",
        "lists.range(100000).distinct().size() > 0",
        "sets.equivalent(lists.range(100000), lists.range(100000))",
    ];
    assert_fails(
        TestContext::new(),
        &rules,
        &[
            // `map` is linear now: the rule runs, to its verdict.
            "Invalid value: failed rule: lists.range(20000).map(i, 1).size() == 0".to_owned(),
            format!(
                "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                rules[1]
            ),
            format!(
                "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                rules[2]
            ),
        ],
        Duration::from_secs(30),
    );
}

#[test]
fn issue15_h3_a_growing_cel_call_is_refused_before_it_allocates() {
    let l = "x".repeat(230);
    let rule =
        format!("(('{l}'.replace('', '{l}')).replace('', '{l}'.replace('', '{l}'))).size() > 0");
    assert_fails(
        TestContext::new(),
        &[&rule],
        &[format!(
            "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {rule}"
        )],
        Duration::from_secs(30),
    );
}

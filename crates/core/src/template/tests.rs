//! Template limits against shared and nested values (issue 21 H4). A list built from itself
//! in a loop (`ns.a = [ns.a, ns.a]`) is small, but a walk over it (comparing, hashing,
//! sorting, printing) visits every path, 2^n after n doublings; a list nested in itself a
//! hundred thousand times overflowed the stack. Every walk stops at the render's time limit,
//! memory budget or nesting limit, with the template and line.

use std::time::{Duration, Instant};

use minijinja::budget::Limits;
use proptest::prelude::*;

use super::*;

/// Two distinct lists, each doubled 26 times (2^26 leaves, 27 values): the expression under
/// test is on line 8.
const DOUBLED: &str = "{%- set ns = namespace(a=[1], b=[1]) %}
{%- for i in range(26) %}{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% endfor %}
";

/// A list nested in itself 100,000 times, and a namespace that holds itself.
const NESTED: &str = "{%- set ns = namespace(a=[1]) %}
{%- for i in range(100000) %}{% set ns.a = [ns.a] %}{% endfor %}{% set ns.c = ns %}
";

/// The prelude, then a ConfigMap whose value is `expr` (line 8).
fn template(prelude: &str, expr: &str) -> String {
    format!(
        "{prelude}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  v: \"{{{{ {expr} }}}}\"\n"
    )
}

fn limits(max_bytes: usize, max_duration: Duration) -> Limits {
    Limits {
        max_bytes,
        max_value_bytes: max_bytes / 2,
        max_output_bytes: 256 << 10,
        max_duration: Some(max_duration),
    }
}

/// Render `text` as `t.yaml.j2` within `limits`; the result and how long it took.
fn render(text: &str, limits: &Limits) -> (Result<Vec<Value>, RenderError>, Duration) {
    let mut env = new_environment();
    env.add_template("t.yaml.j2", text)
        .expect("template compiles");
    let started = Instant::now();
    let rv = render_within(&env, "t.yaml.j2", &minijinja::context! {}, limits);
    (rv, started.elapsed())
}

/// `expr` after `prelude` fails on line 8 with `wanted`, well within `within`.
fn assert_stops(prelude: &str, expr: &str, limits: &Limits, wanted: &str, within: Duration) {
    let (rv, took) = render(&template(prelude, expr), limits);
    let err = match rv {
        Ok(objects) => panic!("{expr}: rendered {objects:?}"),
        Err(err) => err,
    };
    assert_eq!(
        (err.template.as_str(), err.line),
        ("t.yaml.j2", Some(8)),
        "{expr}: {err}"
    );
    assert!(err.message.contains(wanted), "{expr}: {err}");
    assert!(took < within, "{expr}: took {took:?}");
}

fn assert_times_out(expr: &str) {
    assert_stops(
        DOUBLED,
        expr,
        &limits(64 << 20, Duration::from_secs(1)),
        "template ran longer than its time limit of 1 seconds; fix the template or raise KRM_CATALOG_TEMPLATE_TIMEOUT",
        Duration::from_secs(5),
    );
}

#[test]
fn issue15_h4_comparing_shared_lists_stops_at_the_time_limit() {
    for expr in [
        "ns.a == ns.b",
        "ns.a != ns.b",
        "ns.a < ns.b",
        "ns.a >= ns.b",
    ] {
        assert_times_out(expr);
    }
}

#[test]
fn issue15_h4_unique_sort_in_max_over_shared_lists_stop_at_the_time_limit() {
    for expr in [
        "[ns.a, ns.b] | unique | list",
        "[ns.a, ns.b] | sort",
        "[ns.a, ns.b] | sort(reverse=true)",
        "ns.a in [ns.b]",
        "[ns.a, ns.b] | max",
        "[ns.a, ns.b] | min",
        "[ns.a, ns.b] | select('eq', ns.b) | list",
        "{'x': ns.a, 'y': ns.b} | dictsort(by='value')",
    ] {
        assert_times_out(expr);
    }
}

#[test]
fn issue15_h4_shared_lists_as_dict_keys_stop_at_the_time_limit() {
    for expr in ["{ns.a: 1, ns.b: 2}", "ns.a in {ns.b: 1}"] {
        assert_times_out(expr);
    }
}

#[test]
fn issue15_h4_printing_shared_lists_stays_within_the_memory_budget() {
    let small = limits(2 << 20, Duration::from_secs(30));
    let memory = "template exceeded its memory budget: it created more than 2097152 bytes";
    for expr in [
        "'%s' | format(ns.a)",
        "'%s%s' | format(ns.a, ns.b)",
        "ns.a | string",
        "ns.a ~ ''",
        "ns.a | pprint",
        "ns.a | tojson",
        "ns.a | toJson",
        "ns.a | toYaml",
        "ns.a | join(',')",
        "ns.a | upper",
        "ns.a | replace('1', '2')",
        "ns.a | quote",
        "ns.a | sha256sum",
        "ns.a | indent(2)",
        "ns.a in 'x'",
    ] {
        assert_stops(DOUBLED, expr, &small, memory, Duration::from_secs(10));
    }
    // Printed into the output, it stops at the output limit.
    assert_stops(
        DOUBLED,
        "ns.a",
        &small,
        "output is more than the limit",
        Duration::from_secs(10),
    );
}

#[test]
fn issue15_h4_formatting_many_long_strings_stays_within_the_memory_budget() {
    // Each argument fits, all of them together do not.
    let prelude = "{%- set s = 'x' * 300000 %}\n\n";
    let args = vec!["s"; 100].join(", ");
    assert_stops(
        prelude,
        &format!("('%s' * 100) | format({args})"),
        &limits(2 << 20, Duration::from_secs(30)),
        "template exceeded its memory budget",
        Duration::from_secs(10),
    );
}

#[test]
fn issue15_h4_walking_long_shared_strings_stops_at_the_time_limit() {
    // Two equal long strings shared by a long list: every comparison and case fold reads
    // them whole.
    let prelude = "{%- set s = 'x' * 1000000 %}{% set t = s ~ '' %}\n\n";
    for expr in [
        "([s, t] * 50000) == ([t, s] * 50000)",
        "([s, t] * 50000) | unique | list",
        "([s, t] * 50000) | sort(case_sensitive=true) | length",
        "{'x': [s, t] * 50000, 'y': [t, s] * 50000} | dictsort(by='value')",
    ] {
        assert_stops(
            prelude,
            expr,
            &limits(64 << 20, Duration::from_secs(1)),
            "template ran longer than its time limit of 1 seconds",
            Duration::from_secs(5),
        );
    }
}

#[test]
fn issue15_h4_values_nested_in_a_loop_stop_at_the_nesting_limit() {
    let big = limits(64 << 20, Duration::from_secs(30));
    let deep = "template values are nested more than 256 levels deep (a list or map put inside itself in a loop); fix the template";
    for expr in [
        "ns.a",
        "ns.a | string",
        "ns.a == [ns.a]",
        "{ns.a: 1}",
        "ns.a | tojson",
        "ns.a | toJson",
        "[ns.a, [ns.a]] | sort",
        "ns.a | pprint",
        "ns",
        "ns | toYaml",
    ] {
        assert_stops(NESTED, expr, &big, deep, Duration::from_secs(10));
    }
    // Freeing such a value does not overflow the stack either.
    let (rv, _) = render(&template(NESTED, "ns.a | length"), &big);
    let objects = rv.expect("renders");
    assert_eq!(objects[0]["data"]["v"], "1");
}

#[test]
fn issue15_h4_a_stopped_comparison_fails_the_render_as_its_last_output() {
    // The comparison answers anything once stopped; nothing but the budget is left to
    // notice.
    let (rv, took) = render(
        &format!("{DOUBLED}{{{{ ns.a == ns.b }}}}"),
        &limits(64 << 20, Duration::from_secs(1)),
    );
    let err = rv.expect_err("the time limit");
    assert!(err.message.contains("time limit of 1 seconds"), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn issue15_h4_sorting_keeps_its_results() {
    // The sort behind `sort`, `dictsort` and `groupby` is our own (it must survive a
    // comparison that the budget stops): stable, as before.
    let mut env = new_environment();
    env.add_template(
        "t",
        "{{ [3, 1, 2] | sort }} {{ [3, 1, 2] | sort(reverse=true) }} \
         {{ ['b', 'A', 'a', 'B'] | sort }} {{ ['b', 'A', 'a', 'B'] | sort(case_sensitive=true) }} \
         {{ users | sort(attribute='age') | map(attribute='n') | join }} \
         {{ users | sort(attribute='age', reverse=true) | map(attribute='n') | join }} \
         {{ {'b': 2, 'a': 3, 'c': 1} | dictsort }} {{ {'b': 2, 'a': 3, 'c': 1} | dictsort(by='value') }} \
         {{ users | groupby('age') | map(attribute='grouper') | join(',') }} \
         {{ [[2, 1], [1, 2], [1, 1]] | sort }} {{ [] | sort }} {{ [1] | sort }} \
         {{ ['a', 'A', 'b', 'a'] | unique | list }} {{ range(40) | reverse | sort | first }}",
    )
    .expect("compiles");
    let users = minijinja::Value::from(minijinja::value::Serde(serde_json::json!([
        {"n": "a", "age": 3}, {"n": "b", "age": 1}, {"n": "c", "age": 3},
        {"n": "d", "age": 2}, {"n": "e", "age": 1}
    ])));
    let _budget = minijinja::budget::enter(limits(64 << 20, Duration::from_secs(10)));
    let out = env
        .get_template("t")
        .and_then(|t| t.render(minijinja::context! { users }))
        .expect("renders");
    assert_eq!(
        out,
        "[1, 2, 3] [3, 2, 1] ['A', 'a', 'b', 'B'] ['A', 'B', 'a', 'b'] bedac acdbe \
         [('a', 3), ('b', 2), ('c', 1)] [('c', 1), ('b', 2), ('a', 3)] 1,2,3 \
         [[1, 1], [1, 2], [2, 1]] [] [1] ['a', 'b'] 0"
    );
}

/// Filters the random expressions use (ours and minijinja's).
const FILTERS: &[&str] = &[
    "sort",
    "sort(reverse=true)",
    "unique",
    "list",
    "string",
    "tojson",
    "toJson",
    "toYaml",
    "length",
    "max",
    "min",
    "reverse",
    "first",
    "last",
    "pprint",
    "dictsort",
    "items",
    "join(',')",
    "upper",
    "quote",
    "sha256sum",
    "b64enc",
    "indent(2)",
    "batch(2)",
    "groupby(0)",
    "select('eq', ns.b)",
    "map('length')",
];

/// A template expression of random depth and width over nested lists and dicts, shared
/// lists, a long string, a deeply nested list, a namespace that holds itself, filters,
/// comparisons and operators.
fn expression() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        prop::sample::select(vec!["ns.a", "ns.b", "ns.d", "ns", "s", "none", "true"])
            .prop_map(str::to_owned),
        (0i64..100).prop_map(|n| n.to_string()),
        "[a-z]{0,3}".prop_map(|s| format!("'{s}'")),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec((inner.clone(), inner.clone()), 0..4).prop_map(|kv| {
                let pairs: Vec<String> = kv.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                format!("{{{}}}", pairs.join(", "))
            }),
            (
                inner.clone(),
                prop::sample::select(vec![
                    "==",
                    "!=",
                    "<",
                    ">=",
                    "in",
                    "not in",
                    "~",
                    "+",
                    "*",
                    "is sameas"
                ]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (inner.clone(), prop::sample::select(FILTERS))
                .prop_map(|(a, f)| format!("({a} | {f})")),
            prop::collection::vec(inner, 1..4).prop_map(|args| format!(
                "({:?} | format({}))",
                "%s".repeat(args.len()),
                args.join(", ")
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the expression, a render ends (with output or an error) within its time
    /// limit and a margin, without a panic, an abort or a stack overflow.
    #[test]
    fn issue15_h4_random_template_expressions_end_within_the_limits(
        doublings in 0usize..=28,
        nesting in 0usize..3000,
        long in 0usize..200_000,
        expr in expression(),
    ) {
        let prelude = format!(
            "{{%- set ns = namespace(a=[1], b=[1], d=[1]) %}}{{% set ns.c = ns %}}{{% set s = 'x' * {long} %}}\n\
             {{%- for i in range({doublings}) %}}{{% set ns.a = [ns.a, ns.a] %}}{{% set ns.b = [ns.b, ns.b] %}}{{% endfor %}}\
             {{% for i in range({nesting}) %}}{{% set ns.d = [ns.d] %}}{{% endfor %}}\n"
        );
        let timeout = Duration::from_millis(300);
        let (_, took) = render(&template(&prelude, &expr), &limits(4 << 20, timeout));
        prop_assert!(took < timeout + Duration::from_secs(3), "{} took {:?}", expr, took);
    }
}

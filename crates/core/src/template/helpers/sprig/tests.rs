//! Sprig's documented examples (masterminds.github.io/sprig), in both forms where both exist,
//! and a bound test for each helper that builds a value.

use std::time::{Duration, Instant};

use minijinja::budget::Limits;
use minijinja::value::{Serde, Value};
use serde_json::json;

const SMALL: Limits = Limits {
    max_bytes: 1 << 20,
    max_value_bytes: 1 << 20,
    max_output_bytes: 1 << 20,
    max_duration: Some(Duration::from_secs(5)),
};

fn render_in(template: &str, ctx: &serde_json::Value, limits: Limits) -> Result<String, String> {
    let env = crate::template::new_environment();
    let _budget = minijinja::budget::enter(limits);
    env.render_str(template, Value::from(Serde(ctx)))
        .map_err(|e| format!("{e:#}"))
}

fn render_with(template: &str, ctx: &serde_json::Value) -> String {
    render_in(template, ctx, SMALL).unwrap_or_else(|e| panic!("{template}: {e}"))
}

fn r(template: &str) -> String {
    render_with(template, &json!({}))
}

fn fails(template: &str) -> String {
    render_in(template, &json!({}), SMALL).expect_err(template)
}

/// A helper asked to build far more than the budget fails fast, with the budget's error.
fn bounded(template: &str) {
    let start = Instant::now();
    let e = fails(template);
    assert!(
        e.contains("memory budget"),
        "{template}: expected a budget error, got {e}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{template} took {:?}",
        start.elapsed()
    );
}

#[test]
fn issue23_none_default_falls_back() {
    // issue 23: `none | default("d")` gave "None".
    assert_eq!(r(r#"{{ none | default("d") }}"#), "d");
    assert_eq!(r(r#"{{ "" | default("d") }}"#), "d");
    assert_eq!(r(r#"{{ [] | default("d") }}"#), "d");
    assert_eq!(r(r#"{{ {} | default("d") }}"#), "d");
    assert_eq!(r(r#"{{ missing | default("d") }}"#), "d");
    assert_eq!(r(r#"{{ "x" | default("d") }}"#), "x");
    // The filter keeps false and 0 (templates write `enabled | default(true)`).
    assert_eq!(r(r"{{ false | default(true) }}"), "False");
    assert_eq!(r(r"{{ 0 | default(1) }}"), "0");
    assert_eq!(r(r"{{ 0 | default(1, true) }}"), "1");
    // The function is Sprig's: every empty value falls back.
    assert_eq!(r(r#"{{ default("foo", "") }}"#), "foo");
    assert_eq!(r(r#"{{ default("foo", none) }}"#), "foo");
    assert_eq!(r(r"{{ default(1, 0) }}"), "1");
    assert_eq!(r(r"{{ default(true, false) }}"), "True");
    assert_eq!(r(r#"{{ default("foo", "bar") }}"#), "bar");
    assert_eq!(r(r#"{{ default("foo", missing) }}"#), "foo");
}

#[test]
fn issue23_logic() {
    assert_eq!(r(r#"{{ ternary("foo", "bar", true) }}"#), "foo");
    assert_eq!(r(r#"{{ true | ternary("foo", "bar") }}"#), "foo");
    assert_eq!(r(r#"{{ false | ternary("foo", "bar") }}"#), "bar");
    assert_eq!(r(r"{{ coalesce(0, 1, 2) }}"), "1");
    assert_eq!(r(r#"{{ coalesce(none, "", "x") }}"#), "x");
    assert_eq!(r(r#"{{ coalesce(none, "") is none }}"#), "True");
    assert_eq!(
        r(r#"{{ empty("") }} {{ empty(0) }} {{ empty([1]) }}"#),
        "True True False"
    );
    assert_eq!(r(r#"{{ {} | empty }} {{ "a" | empty }}"#), "True False");
}

#[test]
fn issue23_non_deterministic_helpers_are_errors() {
    for t in [
        "{{ now() }}",
        "{{ randAlphaNum(5) }}",
        "{{ uuidv4() }}",
        "{{ genPrivateKey('rsa') }}",
    ] {
        let e = fails(t);
        assert!(
            e.contains("rendered output must be reproducible"),
            "{t}: {e}"
        );
    }
}

#[test]
fn issue23_strings() {
    assert_eq!(r(r#"{{ trunc(5, "hello world") }}"#), "hello");
    assert_eq!(r(r#"{{ trunc(-5, "hello world") }}"#), "world");
    assert_eq!(r(r#"{{ "hello world" | trunc(5) }}"#), "hello");
    assert_eq!(
        r(r#"{{ "hi" | trunc(5) }}|{{ "hi" | trunc(-5) }}"#),
        "hi|hi"
    );
    assert_eq!(r(r#"{{ trimSuffix("-", "hello-") }}"#), "hello");
    assert_eq!(r(r#"{{ "hello-" | trimSuffix("-") }}"#), "hello");
    assert_eq!(r(r#"{{ trimPrefix("-", "-hello") }}"#), "hello");
    assert_eq!(r(r#"{{ trimAll("$", "$5.00") }}"#), "5.00");
    assert_eq!(r(r#"{{ contains("cat", "catch") }}"#), "True");
    assert_eq!(r(r#"{{ "catch" | contains("dog") }}"#), "False");
    assert_eq!(r(r#"{{ hasPrefix("cat", "catch") }}"#), "True");
    assert_eq!(r(r#"{{ hasSuffix("cat", "catch") }}"#), "False");
    assert_eq!(
        r(r#"{{ splitList("$", "foo$bar$baz") | toJson }}"#),
        r#"["foo","bar","baz"]"#
    );
    assert_eq!(r(r#"{{ "a,b" | splitList(",") | length }}"#), "2");
    assert_eq!(r(r#"{{ repeat(3, "hello") }}"#), "hellohellohello");
    assert_eq!(r(r#"{{ "ab" | repeat(2) }}"#), "abab");
    assert_eq!(r(r#"{{ substr(0, 5, "hello world") }}"#), "hello");
    assert_eq!(r(r#"{{ "hello world" | substr(6, -1) }}"#), "world");
    assert_eq!(r(r#"{{ nospace("hello w o r l d") }}"#), "helloworld");
    assert_eq!(r(r#"{{ abbrev(5, "hello world") }}"#), "he...");
    assert_eq!(r(r#"{{ "hello" | abbrev(5) }}"#), "hello");
    assert_eq!(r(r#"{{ snakecase("FirstName") }}"#), "first_name");
    assert_eq!(r(r#"{{ "HTTPServer" | snakecase }}"#), "http_server");
    assert_eq!(r(r#"{{ "NoHTTPS" | snakecase }}"#), "no_https");
    assert_eq!(r(r#"{{ "GO_PATH" | snakecase }}"#), "go_path");
    assert_eq!(r(r#"{{ "GO PATH" | snakecase }}"#), "go_path");
    assert_eq!(r(r#"{{ "GO-PATH" | snakecase }}"#), "go_path");
    assert_eq!(r(r#"{{ kebabcase("FirstName") }}"#), "first-name");
    assert_eq!(r(r#"{{ camelcase("http_server") }}"#), "HttpServer");
    for (input, want) in [
        ("http2xx", "http_2xx"),
        ("HTTP20xOK", "http_20x_ok"),
        ("Duration2m3s", "duration_2m3s"),
        ("Bld4Floor3rd", "bld4_floor_3rd"),
        ("FirstName", "first_name"),
    ] {
        assert_eq!(super::strings::join_words(input, '_'), want, "{input}");
    }
    assert_eq!(super::strings::join_words("HTTPServer", '-'), "http-server");
    for (input, want) in [
        ("some_words", "SomeWords"),
        ("no_https", "NoHttps"),
        ("_complex__case_", "_Complex_Case_"),
        ("some words", "SomeWords"),
        ("GOLANG_IS_GREAT", "GolangIsGreat"),
    ] {
        assert_eq!(super::strings::camelcase(input), want, "{input}");
    }
    assert_eq!(
        r(r#"{{ replace(" ", "-", "I Am Henry VIII") }}"#),
        "I-Am-Henry-VIII"
    );
    assert_eq!(
        r(r#"{{ upper("hello") }} {{ lower("HELLO") }}"#),
        "HELLO hello"
    );
    assert_eq!(r(r#"{{ title("hello world") }}"#), "Hello World");
    assert_eq!(r(r#"{{ join("+", [1, 2, 3]) }}"#), "1+2+3");
    assert_eq!(r(r"{{ first([1, 2, 3]) }} {{ last([1, 2, 3]) }}"), "1 3");
}

#[test]
fn issue23_strings_bounded() {
    bounded(r#"{{ repeat(1000000000, "x") }}"#);
    bounded(r#"{{ "xy" | repeat(9223372036854775807) }}"#);
    bounded(r#"{{ splitList("", repeat(400000, "x")) }}"#);
    bounded(
        r#"{{ replace("", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", repeat(100000, "x")) }}"#,
    );
    bounded(r#"{{ join(repeat(100000, "x"), range(100)) }}"#);
    let e = fails(r#"{{ repeat(-1, "x") }}"#);
    assert!(e.contains("repeat: negative count -1"), "{e}");
    let e = fails(r#"{{ substr(5, 2, "hello") }}"#);
    assert!(e.contains("substr: start 5 is after end 2"), "{e}");
}

#[test]
fn issue23_regexes() {
    assert_eq!(
        r(
            r#"{{ regexMatch("^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[A-Za-z]{2,}$", "test@acme.com") }}"#
        ),
        "True"
    );
    assert_eq!(r(r#"{{ "abc" | regexMatch("^x") }}"#), "False");
    assert_eq!(r(r#"{{ regexFind("[a-zA-Z][1-9]", "abcd1234") }}"#), "d1");
    assert_eq!(r(r#"{{ regexFind("z", "abcd1234") }}"#), "");
    assert_eq!(
        r(r#"{{ regexFindAll("[2,4,6,8]", "123456789", -1) | toJson }}"#),
        r#"["2","4","6","8"]"#
    );
    assert_eq!(
        r(r#"{{ regexFindAll("[2,4,6,8]", "123456789", 2) | toJson }}"#),
        r#"["2","4"]"#
    );
    assert_eq!(
        r(r#"{{ regexReplaceAll("a(x*)b", "-ab-axxb-", "${1}W") }}"#),
        "-W-xxW-"
    );
    assert_eq!(
        r(r#"{{ "-ab-axxb-" | regexReplaceAll("a(x*)b", "${1}W") }}"#),
        "-W-xxW-"
    );
    assert_eq!(
        r(r#"{{ regexReplaceAllLiteral("a(x*)b", "-ab-axxb-", "${1}") }}"#),
        "-${1}-${1}-"
    );
    assert_eq!(
        r(r#"{{ regexSplit("z+", "pizza", -1) | toJson }}"#),
        r#"["pi","a"]"#
    );
    let e = fails(r#"{{ regexMatch("(", "x") }}"#);
    assert!(e.contains("invalid regular expression \"(\""), "{e}");
}

#[test]
fn issue23_regexes_bounded() {
    // 2,000 `$0` per match of 100,000 bytes: each replacement is checked before it is added.
    bounded(&format!(
        r#"{{{{ regexReplaceAll("x+", repeat(100000, "x"), "{}") }}}}"#,
        "$0".repeat(2000)
    ));
    bounded(r#"{{ regexReplaceAll("", repeat(300000, "x"), "yyyy") }}"#);
    bounded(r#"{{ regexFindAll("", repeat(500000, "x"), -1) }}"#);
    let e = fails(&format!(
        r#"{{{{ regexMatch("{}", "x") }}}}"#,
        "a".repeat(5000)
    ));
    assert!(e.contains("longer than the limit of 4096"), "{e}");
    // A pattern that compiles to a huge program is refused, not built.
    let e = fails(r#"{{ regexMatch("(\\w{100}){100}", "x") }}"#);
    assert!(e.contains("invalid regular expression"), "{e}");
}

#[test]
fn issue23_lists_and_dicts() {
    assert_eq!(r(r"{{ list(1, 2, 3) | toJson }}"), "[1,2,3]");
    assert_eq!(
        r(r#"{{ dict("name1", "value1", "name2", "value2") | toJson }}"#),
        r#"{"name1":"value1","name2":"value2"}"#
    );
    assert_eq!(r(r#"{{ dict("a") | toJson }}"#), r#"{"a":""}"#);
    // minijinja's forms still work.
    assert_eq!(r(r"{{ dict(a=1) | toJson }}"), r#"{"a":1}"#);
    assert_eq!(
        r(r#"{{ dict({"a": 1}, b=2) | toJson }}"#),
        r#"{"a":1,"b":2}"#
    );
    assert_eq!(r(r"{{ dict() | toJson }}"), "{}");
    let ctx = json!({"d": {"name1": "value1", "name2": "value2", "name3": "value3"}});
    let t = |s: &str| render_with(s, &ctx);
    assert_eq!(t(r#"{{ get(d, "name1") }}"#), "value1");
    assert_eq!(t(r#"{{ d | get("nope") }}|"#), "|");
    assert_eq!(t(r#"{{ set(d, "name4", "value4").name4 }}"#), "value4");
    assert_eq!(
        t(r#"{{ unset(d, "name1") | toJson }}"#),
        r#"{"name2":"value2","name3":"value3"}"#
    );
    assert_eq!(
        t(r#"{{ hasKey(d, "name1") }} {{ d | hasKey("x") }}"#),
        "True False"
    );
    assert_eq!(t(r"{{ keys(d) | toJson }}"), r#"["name1","name2","name3"]"#);
    assert_eq!(
        t(r"{{ values(d) | toJson }}"),
        r#"["value1","value2","value3"]"#
    );
    assert_eq!(
        t(r#"{{ pick(d, "name1", "name2") | toJson }}"#),
        r#"{"name1":"value1","name2":"value2"}"#
    );
    assert_eq!(
        t(r#"{{ omit(d, "name1", "name3") | toJson }}"#),
        r#"{"name2":"value2"}"#
    );
    assert_eq!(
        r(
            r#"{{ pluck("name1", dict("name1", "a"), dict("name2", "b"), dict("name1", "c")) | toJson }}"#
        ),
        r#"["a","c"]"#
    );
    let merge_ctx = json!({
        "dst": {"default": "default", "overwrite": "me", "key": "true"},
        "src": {"overwrite": "overwritten", "key": "false", "nested": {"a": 1}},
    });
    assert_eq!(
        render_with(r"{{ merge(dst, src) | toJson }}", &merge_ctx),
        r#"{"default":"default","overwrite":"me","key":"true","nested":{"a":1}}"#
    );
    assert_eq!(
        render_with(r"{{ mergeOverwrite(dst, src) | toJson }}", &merge_ctx),
        r#"{"default":"default","overwrite":"overwritten","key":"false","nested":{"a":1}}"#
    );
    assert_eq!(
        r(r#"{{ merge({"a": {"x": 1}}, {"a": {"y": 2}}) | toJson }}"#),
        r#"{"a":{"x":1,"y":2}}"#
    );
    let dig_ctx = json!({"d": {"user": {"role": {"humanName": "admin"}}}});
    assert_eq!(
        render_with(
            r#"{{ dig("user", "role", "humanName", "guest", d) }}"#,
            &dig_ctx
        ),
        "admin"
    );
    assert_eq!(
        render_with(r#"{{ dig("user", "nope", "guest", d) }}"#, &dig_ctx),
        "guest"
    );
    assert_eq!(
        render_with(r#"{{ d | dig("user", "role", "x", "guest") }}"#, &dig_ctx),
        "guest"
    );
    assert_eq!(r(r"{{ uniq(list(1, 2, 2, 1, 3)) | toJson }}"), "[1,2,3]");
    assert_eq!(r(r"{{ has(4, list(1, 2, 3, 4)) }}"), "True");
    assert_eq!(r(r"{{ [1, 2] | has(5) }}"), "False");
    assert_eq!(
        r(r"{{ without(list(1, 2, 3, 4, 5), 1, 3, 5) | toJson }}"),
        "[2,4]"
    );
    assert_eq!(
        r(r#"{{ compact(list(1, "a", "foo", "")) | toJson }}"#),
        r#"[1,"a","foo"]"#
    );
    assert_eq!(
        r(r"{{ concat(list(1, 2, 3), list(4, 5), list(6)) | toJson }}"),
        "[1,2,3,4,5,6]"
    );
    assert_eq!(r(r"{{ append(list(1, 2, 3), 6) | toJson }}"), "[1,2,3,6]");
    assert_eq!(r(r"{{ [1] | append(2) | toJson }}"), "[1,2]");
    assert_eq!(r(r"{{ prepend(list(1, 2, 3), 0) | toJson }}"), "[0,1,2,3]");
    let e = fails(r#"{{ get([1], "a") }}"#);
    assert!(e.contains("expected a dict, got seq"), "{e}");
}

#[test]
fn issue23_lists_bounded() {
    // A list doubled in a loop, then concatenated and appended to: sized before it is built.
    bounded(
        r"{% set ns = namespace(l=[1]) %}{% for i in range(14) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ concat(ns.l, ns.l, ns.l, ns.l, ns.l, ns.l, ns.l, ns.l) | length }}",
    );
    bounded(
        r"{% set ns = namespace(l=[1]) %}{% for i in range(16) %}{% set ns.l = concat(ns.l, ns.l) %}{% endfor %}",
    );
    bounded(
        r#"{% set ns = namespace(d={}) %}{% for i in range(100000) %}{% set ns.d = set(ns.d, "k" ~ i, i) %}{% endfor %}"#,
    );
}

#[test]
fn issue23_conversion() {
    assert_eq!(
        r(r"{{ toString(1) }}|{{ 1.0 | toString }}|{{ toString(true) }}|{{ toString(none) }}"),
        "1|1|true|"
    );
    assert_eq!(r(r"{{ toString(1.5) }}"), "1.5");
    assert_eq!(
        r(r"{{ toStrings(list(1, 2, 3)) | toJson }}"),
        r#"["1","2","3"]"#
    );
    assert_eq!(r(r#"{{ int("42") + 1 }}"#), "43");
    assert_eq!(
        r(r#"{{ int("x") }} {{ int(3.9) }} {{ int(true) }}"#),
        "0 3 1"
    );
    assert_eq!(
        r(r#"{{ int64("0x1f") }} {{ int64("010") }} {{ int64("10.00") }}"#),
        "31 8 10"
    );
    assert_eq!(r(r#"{{ float64("1.5") }} {{ "x" | float64 }}"#), "1.5 0.0");
    assert_eq!(r(r#"{{ atoi("12") }} {{ atoi("0x1f") }}"#), "12 0");
    // The `int` filter stays Jinja's.
    assert_eq!(r(r#"{{ "42" | int }}"#), "42");
    assert_eq!(
        r(r#"{{ {"a": [1, 2]} | toPrettyJson }}"#),
        "{\n  \"a\": [\n    1,\n    2\n  ]\n}"
    );
}

#[test]
fn issue23_conversion_bounded() {
    bounded(
        r"{% set ns = namespace(l=[[[[[[[1]]]]]]]) %}{% for i in range(15) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ toPrettyJson(ns.l) | length }}",
    );
    bounded(r#"{{ toStrings(range(1000) | map("string") | map("repeat", 2000) | list) }}"#);
}

#[test]
fn issue23_hashes_and_encodings() {
    assert_eq!(
        r(r#"{{ sha1sum("Hello world!") }}"#),
        "d3486ae9136e7856bc42212385ea797094475802"
    );
    assert_eq!(r(r#"{{ "Hello world!" | adler32sum }}"#), "487130206");
    assert_eq!(
        r(r#"{{ b32enc("Hello world!") }}"#),
        "JBSWY3DPEB3W64TMMQQQ===="
    );
    assert_eq!(
        r(r#"{{ "foobar" | b32enc }} {{ "f" | b32enc }}"#),
        "MZXW6YTBOI====== MY======"
    );
    assert_eq!(
        r(r#"{{ b32dec("JBSWY3DPEB3W64TMMQQQ====") }}"#),
        "Hello world!"
    );
    assert_eq!(r(r#"{{ b64enc("hi") }} {{ b64dec("aGk=") }}"#), "aGk= hi");
    assert_eq!(
        r(r#"{{ sha256sum("x") }}"#),
        "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
    );
    let e = fails(r#"{{ b32dec("a1======") }}"#);
    assert!(e.contains("b32dec: 'a' is not a base32 character"), "{e}");
}

#[test]
fn issue23_encodings_bounded() {
    bounded(r#"{{ b32enc(repeat(700000, "x")) }}"#);
    bounded(r#"{{ b64enc(repeat(900000, "x")) }}"#);
}

#[test]
fn issue23_case_conversions_bounded() {
    bounded(r#"{{ snakecase(repeat(300000, "aB1")) }}"#);
    bounded(r#"{{ upper(repeat(400000, "ab")) }}"#);
    bounded(r#"{{ repeat(250000, "a_") | camelcase }}"#);
}

#[test]
fn issue23_semver_compare() {
    // Masterminds/semver v3's documented examples.
    let cases = [
        (">= 1.2.3", "1.2.3", true),
        (">= 1.2.3", "1.2.2", false),
        ("^1.2.3", "1.9.9", true),
        ("^1.2.3", "2.0.0", false),
        ("^0.2.3", "0.2.9", true),
        ("^0.2.3", "0.3.0", false),
        ("^0.0.3", "0.0.4", false),
        ("^0", "0.9.9", true),
        ("^1.x", "1.9.0", true),
        ("~1.2.3", "1.2.9", true),
        ("~1.2.3", "1.3.0", false),
        ("~1", "1.9.0", true),
        ("~1", "2.0.0", false),
        ("~2.3", "2.3.9", true),
        ("1.2.x", "1.2.7", true),
        ("1.2.x", "1.3.0", false),
        ("*", "4.5.6", true),
        ("1.2 - 1.4.5", "1.4.5", true),
        ("1.2 - 1.4.5", "1.4.6", false),
        ("2.3.4 - 4.5", "4.5.9", true),
        (">= 1.2, < 3.0.0 || >= 4.2.3", "3.1.0", false),
        (">= 1.2, < 3.0.0 || >= 4.2.3", "4.3.0", true),
        (">= 1.2 < 3.0.0", "2.0.0", true),
        ("!=4.1", "4.1.0", false),
        ("!=4.1", "4.2.0", true),
        ("!=4.1.2", "4.1.3", true),
        ("!=4.x", "4.1.0", false),
        (">1.x", "1.9.0", false),
        (">1.x", "2.0.0", true),
        ("<=2.x", "2.9.0", true),
        ("<=2.1", "2.1.9", true),
        ("<=2.1", "2.2.0", false),
        // Prereleases only match constraints with a prerelease.
        (">=1.2.3", "1.2.4-beta.1", false),
        (">=1.2.3-0", "1.2.4-beta.1", true),
        (">=1.2.3-alpha", "1.2.3-alpha.1", true),
        (">1.2.3-beta.2", "1.2.3-beta.11", true),
        ("v1.2.3", "1.2.3", true),
        (">=1.21.0-0", "v1.29.2-eks-a1b2c3", true),
    ];
    for (constraint, version, want) in cases {
        assert_eq!(
            super::semver::compare_function(constraint, version).unwrap(),
            want,
            "{constraint} {version}"
        );
    }
    assert_eq!(r(r#"{{ semverCompare("^1.2.0", "1.2.3") }}"#), "True");
    assert_eq!(r(r#"{{ "1.2.3" | semverCompare(">=1.3") }}"#), "False");
    assert_eq!(
        r(
            r#"{% set v = semver("v1.2.3-alpha.1+123") %}{{ v.Major }}.{{ v.Minor }}.{{ v.Patch }} {{ v.Prerelease }} {{ v.Metadata }}"#
        ),
        "1.2.3 alpha.1 123"
    );
    let e = fails(r#"{{ semverCompare(">= x.y.z.w", "1.2.3") }}"#);
    assert!(e.contains("improper constraint: >= x.y.z.w"), "{e}");
    let e = fails(r#"{{ semverCompare(">=1.0", "one") }}"#);
    assert!(e.contains("\"one\" is not a semantic version"), "{e}");
}

#[test]
fn issue23_tpl_renders_in_the_same_environment() {
    let ctx =
        json!({"values": {"name": "web", "t": "{{ values.name | upper }}-{{ trunc(2, 'abc') }}"}});
    assert_eq!(
        render_with(r#"{{ tpl(values.t, {"values": values}) }}"#, &ctx),
        "WEB-ab"
    );
    // Without a context, the caller's variables.
    assert_eq!(render_with(r"{{ tpl(values.t) }}", &ctx), "WEB-ab");
    assert_eq!(
        render_with(r#"{% set x = 5 %}{{ "{{ x + 1 }}" | tpl }}"#, &ctx),
        "6"
    );
    let e = render_in(r#"{{ tpl("{{ nope }}") }}"#, &ctx, SMALL).unwrap_err();
    assert!(e.contains("tpl: line 1 of the text"), "{e}");
    // A template that renders itself stops.
    let ctx = json!({"t": "{{ tpl(t) }}"});
    let e = render_in(r"{{ tpl(t) }}", &ctx, SMALL).unwrap_err();
    assert!(e.contains("nested more than 8 deep"), "{e}");
}

#[test]
fn issue23_tpl_bounded() {
    // The text's output counts against the caller's budget.
    bounded(r#"{{ tpl("{{ repeat(2000000, 'x') }}", {}) }}"#);
    let ctx = json!({"t": "{% for i in range(100000) %}{{ tpl(u, {}) }}{% endfor %}", "u": "{{ repeat(100, 'x') }}"});
    let e = render_in(r#"{{ tpl(t, {"u": u}) }}"#, &ctx, SMALL).unwrap_err();
    assert!(e.contains("memory budget") || e.contains("output"), "{e}");
}

//! Real CRDs and their projects' own example objects (`testdata/crds/`, sources and commits in
//! `testdata/crds/SOURCES.md`), taken through the apiserver's steps for a custom resource:
//! structural-schema checks, pruning with strict field validation, defaulting, validation.
//! Each schema is also used as a `ServiceDefinition` `configSchema` (its `spec`), so the
//! catalog loader and `instance::prepare` see the same schemas as the apiserver would.
//!
//! CEL rules (`x-kubernetes-validations`) are compiled with each schema and evaluated by
//! `ConfigSchema::validate` (issue 11); gateway-api's own invalid examples
//! (`gateway-api/invalid-examples/`) must fail with the messages of its rules.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use krm_catalog::catalog::{Bundle, Catalog, Origin};
use krm_catalog::diagnostics::FieldPath;
use krm_catalog::lint;
use krm_catalog::render::Renderer;
use krm_catalog::schema::defaulting;
use krm_catalog::schema::{self, ConfigSchema};
use krm_catalog::service::Schemas;
use krm_catalog::service::instance::{self, UnknownFields};
use krm_catalog::yaml;
use serde_json::{Value, json};

use crate::util::root;

/// One served version of a corpus CRD.
struct Version {
    file: String,
    group: String,
    kind: String,
    name: String,
    schema: ConfigSchema,
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs_err::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

fn corpus_dir() -> PathBuf {
    root().join("testdata/crds")
}

fn documents(path: &Path) -> Vec<Value> {
    let text = fs_err::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
    yaml::parse_stream(&text)
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
        .into_iter()
        .map(|d| d.value)
        .filter(|v| !v.is_null())
        .collect()
}

fn rel(path: &Path) -> String {
    path.strip_prefix(corpus_dir())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Every version of every CRD, each schema checked as the apiserver checks a CRD.
fn versions() -> Vec<Version> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for project in files(&corpus_dir()).into_iter().filter(|p| p.is_dir()) {
        for file in files(&project.join("crds")) {
            for crd in documents(&file) {
                assert_eq!(
                    crd["kind"],
                    "CustomResourceDefinition",
                    "{}",
                    file.display()
                );
                let group = crd["spec"]["group"].as_str().unwrap_or_default().to_owned();
                let kind = crd["spec"]["names"]["kind"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                for v in crd["spec"]["versions"].as_array().into_iter().flatten() {
                    let version = v["name"].as_str().unwrap_or_default().to_owned();
                    let raw = &v["schema"]["openAPIV3Schema"];
                    match ConfigSchema::parse(raw) {
                        Ok(schema) => out.push(Version {
                            file: rel(&file),
                            group: group.clone(),
                            kind: kind.clone(),
                            name: version,
                            schema,
                        }),
                        Err(found) => problems.push(format!(
                            "{} {version}: {}",
                            rel(&file),
                            found
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join("; ")
                        )),
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "real CRD schemas fail our structural checks:\n{}",
        problems.join("\n")
    );
    out
}

/// The example objects of every project, with the file they came from.
fn examples() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for project in files(&corpus_dir()).into_iter().filter(|p| p.is_dir()) {
        for file in files(&project.join("examples")) {
            for doc in documents(&file) {
                out.push((rel(&file), doc));
            }
        }
    }
    out
}

fn version_of<'a>(versions: &'a [Version], obj: &Value) -> Option<&'a Version> {
    let api_version = obj["apiVersion"].as_str()?;
    let kind = obj["kind"].as_str()?;
    let (group, version) = api_version.split_once('/')?;
    versions
        .iter()
        .find(|v| v.group == group && v.name == version && v.kind == kind)
}

/// What the apiserver does to a create request for a custom resource, in its order: prune
/// unknown fields (strict field validation reports them), default, validate. The errors
/// sorted.
fn admit(v: &Version, obj: &Value) -> Result<Value, Vec<String>> {
    admit_in_order(v, obj).map_err(|mut errors| {
        errors.sort();
        errors
    })
}

/// [`admit`] with the errors in the order the apiserver finds them, as far as it has one:
/// unknown fields, the schema's errors (kube-openapi walks properties in Go's map order; ours
/// are sorted, a composite error right after its branches' errors), list types, then the CEL
/// rules or the error that says they were not checked.
fn admit_in_order(v: &Version, obj: &Value) -> Result<Value, Vec<String>> {
    let structural = v.schema.structural();
    let mut x = obj.clone();
    let mut errors: Vec<String> = schema::prune(&mut x, Some(structural), true)
        .iter()
        .map(|removed| instance::unknown_field(&FieldPath::root(), structural, removed).to_string())
        .collect();
    defaulting::prune_non_nullable_nulls_without_defaults(&mut x, Some(structural));
    defaulting::default(&mut x, Some(structural));
    errors.extend(v.schema.validate_object(&x).iter().map(ToString::to_string));
    if errors.is_empty() {
        Ok(x)
    } else {
        Err(errors)
    }
}

/// The errors as the apiserver's `Invalid` status message lists them
/// (`field.ErrorList.ToAggregate`): duplicates dropped, one error alone, several as
/// `[e1, e2]`; what a project's test matches its strings in.
fn aggregate(errors: &[String]) -> String {
    let mut seen = BTreeSet::new();
    let unique: Vec<&str> = errors
        .iter()
        .filter(|e| seen.insert(e.as_str()))
        .map(String::as_str)
        .collect();
    match unique.as_slice() {
        [one] => (*one).to_owned(),
        all => format!("[{}]", all.join(", ")),
    }
}

/// The `ServiceDefinition` each schema's `spec` is put into as its `configSchema`.
const DEFINITION: &str = include_str!("../../testdata/crds/service-definition.yaml");

/// The chart of each corpus service (its config as Helm values) and the template that
/// renders it into a ConfigMap.
const CHART: &str = "{{ config | tojson }}\n";
const TEMPLATE: &str = r#"{%- set values %}{% include "charts/" ~ service.chartPath ~ "/_values.yaml.j2" %}{% endset -%}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ service.id | tojson }}
data:
  values: {{ values | tojson }}
"#;

/// The same schema's `spec` as a kubara `ServiceDefinition` `configSchema`, loaded as a catalog.
fn service_catalog(v: &Version) -> Catalog {
    let id = v.kind.to_lowercase();
    let spec_schema = &v.schema.raw()["properties"]["spec"];
    let mut definition = yaml::parse(DEFINITION).expect("service-definition.yaml is YAML");
    definition["metadata"]["name"] = json!(id);
    definition["spec"]["chartPath"] = json!(id);
    definition["spec"]["configSchema"] = spec_schema.clone();
    let text = yaml::emit(&definition);
    // A template and chart that render the config, so lint renders every service.
    let files = vec![
        ("services/crd.yaml".to_owned(), text.as_bytes()),
        ("templates/values.yaml.j2".to_owned(), TEMPLATE.as_bytes()),
        (format!("charts/{id}/_values.yaml.j2"), CHART.as_bytes()),
    ];
    let (catalog, errors) = Catalog::merge(
        vec![Bundle::from_files(Origin::Path(v.file.clone()), &files)],
        false,
    );
    let hard: Vec<String> = errors
        .iter()
        .filter(|e| !e.is_warning())
        .map(ToString::to_string)
        .collect();
    assert!(
        hard.is_empty(),
        "{} {}: the spec schema does not load as a configSchema:\n{}",
        v.file,
        v.name,
        hard.join("\n")
    );
    catalog
}

#[test]
fn issue8_every_corpus_schema_passes_the_structural_checks() {
    let versions = versions();
    let crds: BTreeSet<(&str, &str)> = versions
        .iter()
        .map(|v| (v.group.as_str(), v.kind.as_str()))
        .collect();
    // Nine projects, the (?i) patterns of prometheus-operator among them; the last four (issue
    // 22) are heavy CEL users.
    for expected in [
        ("cert-manager.io", "Certificate"),
        ("monitoring.coreos.com", "PrometheusRule"),
        ("monitoring.coreos.com", "AlertmanagerConfig"),
        ("source.toolkit.fluxcd.io", "GitRepository"),
        ("gateway.networking.k8s.io", "HTTPRoute"),
        ("kyverno.io", "PolicyException"),
        ("gateway.envoyproxy.io", "SecurityPolicy"),
        ("karpenter.sh", "NodePool"),
        ("karpenter.k8s.aws", "EC2NodeClass"),
        ("kueue.x-k8s.io", "ClusterQueue"),
        ("controlplane.cluster.x-k8s.io", "KubeadmControlPlane"),
    ] {
        assert!(crds.contains(&expected), "{expected:?} missing: {crds:?}");
    }
    assert!(versions.len() >= 30, "{} versions", versions.len());
    // Issue 11: CEL rules are compiled and enforced, no longer warned about.
    let git = versions
        .iter()
        .find(|v| v.kind == "GitRepository")
        .expect("GitRepository is in the corpus");
    assert!(git.schema.has_cel_rules());
    for v in &versions {
        assert!(
            v.schema
                .warnings()
                .iter()
                .all(|w| !w.path.to_string().contains("x-kubernetes-validations")),
            "{} {}: {:?}",
            v.file,
            v.name,
            v.schema.warnings()
        );
    }
    // Each lints (issue 22): `catalog lint`'s checks, a render with the defaults among them,
    // find nothing worse than a warning (a required value without a default).
    let mut lint_errors = Vec::new();
    for v in &versions {
        let catalog = service_catalog(v);
        assert_eq!(catalog.services().len(), 1, "{} {}", v.file, v.name);
        let renderer = Renderer::new(&catalog);
        let found = lint::lint(&renderer, &Schemas::new(), &serde_json::Map::new());
        lint_errors.extend(
            found
                .iter()
                .filter(|e| !e.is_warning())
                .map(|e| format!("{} {}: {e}", v.file, v.name)),
        );
    }
    assert!(lint_errors.is_empty(), "{}", lint_errors.join("\n"));
}

#[test]
fn issue8_every_corpus_example_is_admitted_and_its_spec_is_a_valid_config() {
    let versions = versions();
    let mut checked = BTreeSet::new();
    let mut failures = Vec::new();
    for (file, obj) in examples() {
        let Some(v) = version_of(&versions, &obj) else {
            continue;
        };
        let at = format!("{file} {} {}", obj["kind"], obj["metadata"]["name"]);
        let admitted = match admit(v, &obj) {
            Ok(admitted) => admitted,
            Err(e) => {
                failures.push(format!("{at} is rejected:\n  {}", e.join("\n  ")));
                continue;
            }
        };
        // Defaulting is idempotent.
        if admit(v, &admitted).as_ref() != Ok(&admitted) {
            failures.push(format!("{at}: a second admission changes it"));
        }
        checked.insert((
            file.split('/').next().unwrap_or_default().to_owned(),
            at.clone(),
        ));
        // The same spec as a service config: loaded, pruned, defaulted and validated alike. An
        // object without a spec is a config left out, which defaults as `{}` (the apiserver
        // adds no spec), so it is not compared.
        if obj["spec"].is_null() {
            continue;
        }
        let catalog = service_catalog(v);
        let service = &catalog.services()[0];
        match instance::prepare(
            &Schemas::new(),
            &service.definition,
            &json!({"config": obj["spec"]}),
            &FieldPath::parse("spec"),
            UnknownFields::Strict,
        ) {
            Ok(instance) if instance.config() == admitted["spec"] => {}
            Ok(instance) => failures.push(format!(
                "{at}: as a config it defaults to {}, not {}",
                instance.config(),
                admitted["spec"]
            )),
            Err(p) => failures.push(format!("{at}: the spec is rejected as a config: {p:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let projects: BTreeSet<&str> = checked.iter().map(|(p, _)| p.as_str()).collect();
    assert!(projects.len() >= 9, "examples of only {projects:?}");
    assert!(
        checked.len() >= 80,
        "only {} examples matched a corpus CRD",
        checked.len()
    );
}

/// What the projects show the apiserver stores for their objects (`<project>/defaults.yaml`:
/// an example by `file` and `name`, or the `object` a project's test creates, a JSON pointer
/// into it and the value found there after admission, with the upstream `source` showing it).
#[test]
fn issue22_defaults_are_what_the_projects_show_the_apiserver_stores() {
    let versions = versions();
    let mut failures = Vec::new();
    let mut checked = 0;
    for project in files(&corpus_dir()).into_iter().filter(|p| p.is_dir()) {
        let path = project.join("defaults.yaml");
        if !path.exists() {
            continue;
        }
        for entry in documents(&path)
            .iter()
            .flat_map(|d| d.as_array().cloned().unwrap_or_default())
        {
            let file = entry["file"].as_str().unwrap_or_default();
            let name = entry["name"].as_str().unwrap_or_default();
            let pointer = entry["pointer"].as_str().unwrap_or_default();
            let obj = if entry["object"].is_object() {
                entry["object"].clone()
            } else {
                example(file, name)
            };
            let (file, name) = (rel(&path), entry["source"].as_str().unwrap_or(name));
            let v = version_of(&versions, &obj).unwrap_or_else(|| panic!("no CRD for {file}"));
            match admit(v, &obj) {
                Ok(stored) if stored.pointer(pointer) == Some(&entry["value"]) => {}
                Ok(stored) => failures.push(format!(
                    "{file} {name} {pointer}: want {}, got {:?}",
                    entry["value"],
                    stored.pointer(pointer)
                )),
                Err(e) => failures.push(format!("{file} {name}: rejected: {e:?}")),
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 3, "only {checked} stored defaults checked");
}

/// Find one example object by file and name.
fn example(file: &str, name: &str) -> Value {
    examples()
        .into_iter()
        .find(|(f, o)| f.ends_with(file) && o["metadata"]["name"] == name)
        .map_or_else(|| panic!("no example {name} in {file}"), |(_, o)| o)
}

#[test]
fn issue8_defaulting_matches_hand_derived_apiserver_results() {
    let versions = versions();
    let defaulted = |obj: &Value| {
        let v = version_of(&versions, obj).unwrap_or_else(|| panic!("no CRD for {obj}"));
        admit(v, obj).unwrap_or_else(|e| panic!("{e:?}"))
    };
    // GitRepository v1: `spec.timeout` defaults to 60s; `spec.verify.mode` only when `verify`
    // is given; the root `status` default applies to an object without status.
    let git = example(
        "config_samples_source_v1_gitrepository.yaml",
        "gitrepository-sample",
    );
    assert_eq!(
        defaulted(&git),
        json!({
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "GitRepository",
            "metadata": {"name": "gitrepository-sample"},
            "spec": {"interval": "1m", "url": "https://github.com/stefanprodan/podinfo",
                "ref": {"branch": "master"}, "timeout": "60s"},
            "status": {"observedGeneration": -1},
        })
    );
    let mut verified = git.clone();
    verified["spec"]["verify"] = json!({"secretRef": {"name": "keys"}});
    assert_eq!(
        defaulted(&verified)["spec"]["verify"],
        json!({"secretRef": {"name": "keys"}, "mode": "HEAD"})
    );
    // HelmRepository v1: `spec.provider` defaults to generic.
    let helm = example(
        "config_samples_source_v1_helmrepository.yaml",
        "helmrepository-sample",
    );
    assert_eq!(
        defaulted(&helm)["spec"],
        json!({"interval": "1m", "url": "https://stefanprodan.github.io/podinfo", "provider": "generic"})
    );
    // HTTPRoute v1: `rules[].matches` defaults to a `/` prefix match, `backendRefs[]` get
    // `group: ""` and `kind: Service`; `weight` is kept as written; no parentRefs, so none of
    // their defaults appear.
    let route = example("examples_standard_http-filter.yaml", "http-filter-1");
    assert_eq!(
        defaulted(&route)["spec"],
        json!({
            "hostnames": ["my.filter.com"],
            "rules": [{
                "filters": [{"type": "RequestHeaderModifier",
                    "requestHeaderModifier": {"add": [{"name": "my-header", "value": "foo"}]}}],
                "backendRefs": [{"name": "my-filter-svc1", "weight": 1, "port": 80, "group": "", "kind": "Service"}],
                "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
            }],
        })
    );
    // An HTTPRoute without rules gets the `rules` default as a whole (one rule matching `/`),
    // and parentRefs get their group and kind.
    let mut bare = route.clone();
    bare["spec"] = json!({"parentRefs": [{"name": "gw"}]});
    assert_eq!(
        defaulted(&bare)["spec"],
        json!({
            "parentRefs": [{"name": "gw", "group": "gateway.networking.k8s.io", "kind": "Gateway"}],
            "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}],
        })
    );
}

/// A change to an example and the one error the apiserver gives for it.
enum Change {
    Set(&'static str, Value),
    Remove(&'static str),
}

fn mutate(obj: &Value, change: &Change) -> Value {
    let mut x = obj.clone();
    let (pointer, value) = match change {
        Change::Set(p, v) => (*p, Some(v.clone())),
        Change::Remove(p) => (*p, None),
    };
    let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", pointer));
    let target = x
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("no {parent} in the example"));
    match (target, value) {
        (Value::Object(m), Some(v)) => {
            m.insert(key.to_owned(), v);
        }
        (Value::Object(m), None) => {
            assert!(m.shift_remove(key).is_some(), "no {pointer} to remove");
        }
        (Value::Array(a), Some(v)) => {
            let i: usize = key.parse().unwrap_or(usize::MAX);
            a[i] = v;
        }
        (other, _) => panic!("cannot change {pointer} in {other}"),
    }
    x
}

#[test]
fn issue8_invalid_mutations_are_rejected_at_their_field_path() {
    let versions = versions();
    let cases: Vec<(&str, &str, Change, Result<(), &str>)> = vec![
        // --- cert-manager Certificate v1
        (
            "test_fixtures_cert-manager-resources.yaml",
            "test1",
            Change::Set("/spec/dnsNames", json!("example.com")),
            Err(
                r#"spec.dnsNames: Invalid value: "string": spec.dnsNames in body must be of type array: "string""#,
            ),
        ),
        (
            "test_fixtures_cert-manager-resources.yaml",
            "test1",
            Change::Set("/spec/privateKey", json!({"algorithm": "DSA"})),
            Err(
                r#"spec.privateKey.algorithm: Unsupported value: "DSA": supported values: "RSA", "ECDSA", "Ed25519""#,
            ),
        ),
        (
            "test_fixtures_cert-manager-resources.yaml",
            "test1",
            Change::Set("/spec/issuerRef/nmae", json!("x")),
            Err(
                r#"spec.issuerRef.nmae: unknown field "spec.issuerRef.nmae" (did you mean "name"?)"#,
            ),
        ),
        (
            "test_fixtures_cert-manager-resources.yaml",
            "test1",
            Change::Remove("/spec/secretName"),
            Err("spec.secretName: Required value"),
        ),
        (
            "test_fixtures_cert-manager-resources.yaml",
            "test1",
            Change::Set("/spec/duration", json!("90 days")),
            Ok(()),
        ),
        // --- prometheus-operator PrometheusRule v1: `^(?i)(abort|warn)?$` is Go syntax
        (
            "user-guides_alerting_prometheus-example-rules.yaml",
            "prometheus-example-rules",
            Change::Set("/spec/groups/0/partial_response_strategy", json!("WARN")),
            Ok(()),
        ),
        (
            "user-guides_alerting_prometheus-example-rules.yaml",
            "prometheus-example-rules",
            Change::Set("/spec/groups/0/partial_response_strategy", json!("fail")),
            Err(
                r#"spec.groups[0].partial_response_strategy: Invalid value: "fail": spec.groups[0].partial_response_strategy in body should match '^(?i)(abort|warn)?$'"#,
            ),
        ),
        (
            "user-guides_alerting_prometheus-example-rules.yaml",
            "prometheus-example-rules",
            Change::Set("/spec/groups/0/interval", json!(30)),
            Err(
                "spec.groups[0].interval: Invalid value: \"integer\": spec.groups[0].interval in body must be of type string: \"integer\"",
            ),
        ),
        (
            "user-guides_alerting_prometheus-example-rules.yaml",
            "prometheus-example-rules",
            Change::Remove("/spec/groups/0/name"),
            Err("spec.groups[0].name: Required value"),
        ),
        // --- prometheus-operator AlertmanagerConfig v1alpha1: `(?i)` inside a group only
        // applies to that group, so "MONday" matches and "MONDAY" does not (Go semantics).
        (
            "user-guides_alerting_alertmanager-config-example.yaml",
            "config-example",
            Change::Set(
                "/spec/muteTimeIntervals",
                json!([{"name": "weekend", "timeIntervals": [{"weekdays": ["MONday:friday"]}]}]),
            ),
            Ok(()),
        ),
        (
            "user-guides_alerting_alertmanager-config-example.yaml",
            "config-example",
            Change::Set(
                "/spec/muteTimeIntervals",
                json!([{"name": "weekend", "timeIntervals": [{"weekdays": ["MONDAY"]}]}]),
            ),
            Err(
                r#"spec.muteTimeIntervals[0].timeIntervals[0].weekdays[0]: Invalid value: "MONDAY": spec.muteTimeIntervals[0].timeIntervals[0].weekdays[0] in body should match '^((?i)sun|mon|tues|wednes|thurs|fri|satur)day(?:((:(sun|mon|tues|wednes|thurs|fri|satur)day)$)|$)'"#,
            ),
        ),
        (
            "user-guides_alerting_alertmanager-config-example.yaml",
            "config-example",
            Change::Set("/spec/route/groupWait", json!("30 seconds")),
            Err(
                r#"spec.route.groupWait: Invalid value: "30 seconds": spec.route.groupWait in body should match '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'"#,
            ),
        ),
        // --- flux GitRepository v1
        (
            "config_samples_source_v1_gitrepository.yaml",
            "gitrepository-sample",
            Change::Set("/spec/url", json!("ftp://example.com/repo")),
            Err(
                r#"spec.url: Invalid value: "ftp://example.com/repo": spec.url in body should match '^(http|https|ssh)://.*$'"#,
            ),
        ),
        (
            "config_samples_source_v1_gitrepository.yaml",
            "gitrepository-sample",
            Change::Set("/spec/ref/brnach", json!("main")),
            Err(r#"spec.ref.brnach: unknown field "spec.ref.brnach" (did you mean "branch"?)"#),
        ),
        (
            "config_samples_source_v1_gitrepository.yaml",
            "gitrepository-sample",
            Change::Set("/spec/provider", json!("gitlab")),
            // GitRepository has CEL rules: an enum error blocks them (issue 11, `hasBlockingErr`).
            Err(concat!(
                "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation\n",
                r#"spec.provider: Unsupported value: "gitlab": supported values: "generic", "aws", "azure", "github""#,
            )),
        ),
        (
            "config_samples_source_v1_gitrepository.yaml",
            "gitrepository-sample",
            Change::Remove("/spec/interval"),
            Err(concat!(
                "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation\n",
                "spec.interval: Required value"
            )),
        ),
        // --- gateway-api HTTPRoute v1
        (
            "examples_standard_http-filter.yaml",
            "http-filter-1",
            Change::Set("/spec/hostnames/0", json!("-bad.example.com")),
            Err(
                r#"spec.hostnames[0]: Invalid value: "-bad.example.com": spec.hostnames[0] in body should match '^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"#,
            ),
        ),
        (
            "examples_standard_http-filter.yaml",
            "http-filter-1",
            Change::Set("/spec/rules/0/backendRefs/0/port", json!(70000)),
            Err(
                "spec.rules[0].backendRefs[0].port: Invalid value: 70000: spec.rules[0].backendRefs[0].port in body should be less than or equal to 65535",
            ),
        ),
        (
            "examples_standard_http-filter.yaml",
            "http-filter-1",
            Change::Set("/spec/rules/0/backendRefs/0/weight", json!("1")),
            // A type error blocks the CEL rules (issue 11); a maximum (above) does not.
            Err(concat!(
                "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation\n",
                r#"spec.rules[0].backendRefs[0].weight: Invalid value: "string": spec.rules[0].backendRefs[0].weight in body must be of type integer: "string""#,
            )),
        ),
        // --- kyverno PolicyException v2
        (
            "test_cli_test-exceptions_exceptions-1_exception.yaml",
            "",
            Change::Remove("/spec/exceptions"),
            Err("spec.exceptions: Required value"),
        ),
    ];
    let mut failures = Vec::new();
    for (file, name, change, expected) in &cases {
        let obj = examples()
            .into_iter()
            .find(|(f, o)| f.ends_with(file) && (name.is_empty() || o["metadata"]["name"] == *name))
            .map_or_else(|| panic!("no example {name} in {file}"), |(_, o)| o);
        let v = version_of(&versions, &obj).unwrap_or_else(|| panic!("no CRD for {file}"));
        let got = admit(v, &mutate(&obj, change)).map(|_| ());
        // One expected error per line.
        let want = expected.map_err(|e| e.lines().map(str::to_owned).collect::<Vec<_>>());
        if got != want {
            failures.push(format!("{file} {name}: want {want:?}\n  got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every `x-kubernetes-validations` rule of a schema (its schema path and rule), found in the
/// raw JSON independently of `schema::cel`.
fn cel_rules(node: &Value, path: &str, out: &mut Vec<(String, String)>) {
    match node {
        Value::Object(m) => {
            if let Some(Value::Array(rules)) = m.get("x-kubernetes-validations") {
                for (i, r) in rules.iter().enumerate() {
                    out.push((
                        format!("{path}.x-kubernetes-validations[{i}]"),
                        r["rule"].as_str().unwrap_or_default().to_owned(),
                    ));
                }
            }
            for (k, v) in m {
                if k != "x-kubernetes-validations" {
                    cel_rules(v, &format!("{path}.{k}"), out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                cel_rules(v, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn issue11_every_corpus_cel_rule_compiles() {
    // `versions()` parses every schema with `ConfigSchema::parse`, which compiles every rule
    // (a rule that does not compile fails it with its schema path); count what was compiled.
    let versions = versions();
    let mut total = 0;
    for v in &versions {
        let mut rules = Vec::new();
        cel_rules(v.schema.raw(), "", &mut rules);
        assert_eq!(
            v.schema.has_cel_rules(),
            !rules.is_empty(),
            "{} {}",
            v.file,
            v.name
        );
        total += rules.len();
    }
    // gateway-api's HTTPRoute alone carries dozens; envoy gateway's CRDs hundreds.
    assert!(total >= 400, "only {total} CEL rules in the corpus");
    // A rule that does not compile fails the load with its schema path.
    let bad = json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [{"rule": "self.a ==", "message": "m"}]}}});
    let problems = ConfigSchema::parse(&bad).expect_err("a broken rule fails the schema");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0]
            .to_string()
            .starts_with("properties.spec.x-kubernetes-validations[0].rule: compilation failed: "),
        "{problems:?}"
    );
}

/// One entry of a project's `expected-errors.yaml`: an object of its `invalid-examples/` (by
/// file, and by `metadata.name` when the file holds several) and what the apiserver answers,
/// sorted as `admit` sorts them. `upstream` holds the strings the project's own test asserts
/// (a Go CEL test's `wantErrors`, matched as case-insensitive substrings there as here).
struct Expected {
    project: String,
    file: String,
    name: Option<String>,
    errors: Vec<String>,
    upstream: Vec<String>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            s.as_str()
                .unwrap_or_else(|| panic!("not a string: {s}"))
                .to_owned()
        })
        .collect()
}

fn expected_errors(project: &Path) -> Vec<Expected> {
    let path = project.join("expected-errors.yaml");
    if !path.exists() {
        return Vec::new();
    }
    let name = rel(project);
    documents(&path)
        .iter()
        .flat_map(|d| d.as_array().cloned().unwrap_or_default())
        .map(|e| Expected {
            project: name.clone(),
            file: e["file"].as_str().unwrap_or_default().to_owned(),
            name: e["name"].as_str().map(str::to_owned),
            errors: strings(&e["errors"]),
            upstream: strings(&e["upstream"]),
        })
        .collect()
}

/// Every project's own invalid examples (`<project>/invalid-examples/`): each is rejected with
/// exactly the errors its `expected-errors.yaml` entry lists, which hold the strings the
/// project's own test expects; every object has an entry and every entry an object.
#[test]
fn issue22_every_projects_invalid_examples_fail_with_the_apiservers_messages() {
    let versions = versions();
    let mut failures = Vec::new();
    let mut projects = BTreeSet::new();
    let mut checked = 0;
    for project in files(&corpus_dir()).into_iter().filter(|p| p.is_dir()) {
        let mut expected = expected_errors(&project);
        let mut seen = vec![false; expected.len()];
        for file in files(&project.join("invalid-examples")) {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let objects = documents(&file);
            for obj in &objects {
                let at = format!("{} {}", rel(&file), obj["metadata"]["name"]);
                let Some(v) = version_of(&versions, obj) else {
                    failures.push(format!("{at}: no corpus CRD for {}", obj["kind"]));
                    continue;
                };
                let Some(i) = expected.iter().position(|e| {
                    e.file == name
                        && (objects.len() == 1
                            || e.name.as_deref() == obj["metadata"]["name"].as_str())
                }) else {
                    let got = admit(v, obj).err().unwrap_or_default();
                    failures.push(format!(
                        "{at}: no entry in expected-errors.yaml; it gets {got:?}"
                    ));
                    continue;
                };
                seen[i] = true;
                let want = &expected[i];
                match admit_in_order(v, obj) {
                    Ok(_) => failures.push(format!("{at}: admitted, want {:?}", want.errors)),
                    Err(in_order) => {
                        let mut got = in_order.clone();
                        got.sort();
                        if got != want.errors {
                            failures
                                .push(format!("{at}:\n  want {:?}\n  got  {got:?}", want.errors));
                        }
                        // Matched as the projects' tests match them, in the apiserver's
                        // message: envoy gateway's lowercases both sides.
                        let all = aggregate(&in_order).to_lowercase();
                        for s in want
                            .upstream
                            .iter()
                            .filter(|s| !all.contains(&s.to_lowercase()))
                        {
                            failures
                                .push(format!("{at}: the project's test expects {s:?} in {all:?}"));
                        }
                    }
                }
                projects.insert(rel(&project));
                checked += 1;
            }
        }
        for (e, _) in expected.drain(..).zip(seen).filter(|(_, s)| !s) {
            failures.push(format!(
                "{}: {} {:?}: no such invalid example",
                e.project, e.file, e.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // gateway-api and the four heavy CEL users of issue 22.
    assert!(projects.len() >= 5, "invalid examples of only {projects:?}");
    assert!(checked >= 60, "only {checked} invalid examples");
}

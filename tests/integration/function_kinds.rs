//! Function kinds are first-class (issue 11): a function config (`kind: Resize` of a KEP-2906
//! catalog) is admitted by its version's `openAPIV3Schema` before pin or run, exactly as a
//! service config (pruned, defaulted, validated); `explain` and `schema` serve function kinds
//! of any catalog `--catalog` names (path, HTTPS on loopback); `KRMFunctionDefinition`
//! documents load in every source. The golden cases `function-config-defaulting`,
//! `err-function-config-validation`, `err-function-config-unknown-field` and
//! `krm-function-definition-inline` show the function-mode output as a user sees it.

use std::path::Path;

use krm_catalog::catalog::{Bundle, Catalog, Origin};
use krm_catalog::schema::{self, ConfigSchema};
use krm_catalog::service::instance::{self, UnknownFields};
use krm_catalog::verify::sha256_hex;
use krm_catalog::yaml;
use serde_json::{Value, json};

use crate::servers::{Server, tls};
use crate::util::{TestContext, have, root, stderr, stdout, test_name};

/// The KEP catalog of the golden cases: `fn.acme.dev/v1 Resize` with a schema.
const RESIZE_CATALOG: &str = "testdata/golden/function-config-defaulting/functions.yaml";

fn resize_catalog() -> String {
    fs_err::read_to_string(root().join(RESIZE_CATALOG)).expect("the golden case's catalog")
}

/// A `KRMFunctionDefinition` (one function, `example.com/v1 SetNamespace`) with a schema.
const SET_NAMESPACE: &str = "apiVersion: config.kubernetes.io/v1alpha1
kind: KRMFunctionDefinition
metadata:
  name: set-namespace
spec:
  group: example.com
  names:
    kind: SetNamespace
  description: Sets the namespace of every namespaced object.
  publisher: example.com
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [namespace]
            properties:
              namespace:
                type: string
                description: The namespace to set.
                minLength: 1
    runtime:
      container:
        image: docker.example.co/functions/set-namespace:v1.2.3
        sha256: a428de44a9059f56a7d7f35a6fbbe6db4fae6a4e5a5ee1cd5fdc0a5bca3e54fe
";

fn json_of(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_str(&stdout(out)).expect("JSON on stdout")
}

/// Validate `doc` (YAML) against an editor schema the way a JSON Schema draft-07 client
/// (yaml-language-server) does: the `if`/`then` dispatch on apiVersion and kind included.
fn editor_errors(editor_schema: &Value, doc: &str) -> Vec<String> {
    let validator = schema::compile(editor_schema).expect("the editor schema compiles");
    let value = yaml::parse(doc).expect("YAML");
    schema::validate_with(&validator, editor_schema, &value)
        .iter()
        .map(ToString::to_string)
        .collect()
}

const GOOD_RESIZE: &str =
    "apiVersion: fn.acme.dev/v1\nkind: Resize\nmetadata:\n  name: r\nspec:\n  size: small\n";
const BAD_RESIZE: &str = "apiVersion: fn.acme.dev/v1\nkind: Resize\nmetadata:\n  name: r\nspec:\n  size: huge\n  replicas: 0\n";

#[test]
fn issue11_explain_and_schema_of_a_function_kind_with_catalog_path() {
    let repo = TestContext::new().in_repo_root();
    let catalog = ["--catalog", RESIZE_CATALOG];
    let explain = repo.run(&[&["explain", "Resize.spec"][..], &catalog].concat(), "");
    assert!(explain.status.success(), "{}", stderr(&explain));
    let text = stdout(&explain);
    for needle in [
        "GROUP:      fn.acme.dev",
        "KIND:       Resize",
        "VERSION:    v1",
        "FIELD: spec <Object>",
        "What to resize and to which size.",
        "size\t<string> -required-",
        "Values: \"small\", \"medium\", \"large\"",
        "replicas\t<integer>",
        "Default: 2",
    ] {
        assert!(text.contains(needle), "explain lacks {needle:?}:\n{text}");
    }
    // Case-insensitive like the other kinds; a typo gets a hint naming the function kind.
    let deeper = repo.run(
        &[&["explain", "resize.spec.selector"][..], &catalog].concat(),
        "",
    );
    assert!(
        stdout(&deeper).contains("Default: \"Deployment\""),
        "{}",
        stdout(&deeper)
    );
    let typo = repo.run(
        &[&["explain", "Resize.spec.sise"][..], &catalog].concat(),
        "",
    );
    assert_eq!(typo.status.code(), Some(1));
    assert!(
        stderr(&typo)
            .contains("field \"sise\" does not exist in Resize.spec (did you mean \"size\"?)"),
        "{}",
        stderr(&typo)
    );
    let unknown = repo.run(&[&["explain", "Resiz"][..], &catalog].concat(), "");
    assert!(
        stderr(&unknown).contains("(did you mean \"Resize\"?)"),
        "{}",
        stderr(&unknown)
    );
    // A function kind without a schema is not an unknown kind.
    let no_schema = repo.run(
        &[
            "explain",
            "SetLabels",
            "--catalog",
            "testdata/golden/function-pin/functions.yaml",
        ],
        "",
    );
    assert_eq!(no_schema.status.code(), Some(1));
    assert_eq!(
        stderr(&no_schema),
        "error: function kind \"SetLabels\" (fn.acme.dev/v1/SetLabels) has no schema: its catalog sets no versions[].schema.openAPIV3Schema, so its config is neither checked nor explained; the function's own documentation (usage) describes it\n"
    );

    // `schema KIND`: the kind's own schema, apiVersion and kind fixed.
    let one = json_of(&repo.run(&[&["schema", "Resize"][..], &catalog].concat(), ""));
    assert_eq!(one["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(one["properties"]["kind"]["enum"], json!(["Resize"]));
    assert_eq!(
        one["properties"]["apiVersion"]["enum"],
        json!(["fn.acme.dev/v1"])
    );
    assert!(editor_errors(&one, GOOD_RESIZE).is_empty());
    // `schema`: every kind, the function kind among them, and it works as an editor schema.
    let all = json_of(&repo.run(&[&["schema"][..], &catalog].concat(), ""));
    let defs = all["definitions"].as_object().expect("definitions");
    for key in [
        "fn.acme.dev/v1/Resize",
        "services.krm-catalog.dev/v1alpha1/ServiceSet",
        "krm-catalog.dev/v1alpha1/ResolveCatalog",
    ] {
        assert!(defs.contains_key(key), "missing {key}");
    }
    assert_eq!(editor_errors(&all, GOOD_RESIZE), Vec::<String>::new());
    assert_eq!(
        editor_errors(&all, BAD_RESIZE),
        [
            "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
            "spec.size: Unsupported value: \"huge\": supported values: \"small\", \"medium\", \"large\"",
        ]
    );
    // Other kinds are still dispatched to their own schemas.
    assert_eq!(
        editor_errors(
            &all,
            "apiVersion: services.krm-catalog.dev/v1alpha1\nkind: ServiceSet\nmetadata:\n  name: s\nspec:\n  services: {}\n"
        ),
        Vec::<String>::new()
    );
}

#[test]
fn issue11_explain_and_schema_with_an_https_catalog_on_loopback() {
    let case = test_name!();
    if !have("python3", case) || !have("openssl", case) {
        return;
    }
    let tls = tls();
    let server = Server::start(Some(&tls), None);
    // One remote file with a KEP catalog and a KRMFunctionDefinition beside it.
    let body = format!("{}---\n{SET_NAMESPACE}", resize_catalog());
    server.put("functions.yaml", body.as_bytes());
    let url = server.url("functions.yaml");
    let pinned = format!("{url}#sha256={}", sha256_hex(body.as_bytes()));
    let ctx = TestContext::new().with_ca(&tls.ca);
    for reference in [url.as_str(), pinned.as_str()] {
        let out = ctx.run(&["explain", "Resize.spec", "--catalog", reference], "");
        assert!(out.status.success(), "{reference}: {}", stderr(&out));
        assert!(
            stdout(&out).contains("size\t<string> -required-"),
            "{}",
            stdout(&out)
        );
        let out = ctx.run(
            &[
                "explain",
                "SetNamespace.spec.namespace",
                "--catalog",
                reference,
            ],
            "",
        );
        assert!(out.status.success(), "{reference}: {}", stderr(&out));
        assert!(
            stdout(&out).contains("The namespace to set."),
            "{}",
            stdout(&out)
        );
        let all = json_of(&ctx.run(&["schema", "--catalog", reference], ""));
        assert!(all["definitions"]["example.com/v1/SetNamespace"].is_object());
        assert_eq!(
            editor_errors(
                &all,
                "apiVersion: example.com/v1\nkind: SetNamespace\nmetadata:\n  name: n\nspec:\n  namespace: \"\"\n"
            ),
            [
                "spec.namespace: Invalid value: \"\": spec.namespace in body should be at least 1 chars long"
            ]
        );
    }
    // A pin that does not match is refused; a pin that is not a digest is a usage error.
    let wrong = format!("{url}#sha256={}", sha256_hex(b"other"));
    let out = ctx.run(&["schema", "Resize", "--catalog", &wrong], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(&format!(
            "catalog {url}: sha256 mismatch: expected {}, downloaded {}",
            sha256_hex(b"other"),
            sha256_hex(body.as_bytes())
        )),
        "{}",
        stderr(&out)
    );
    let out = ctx.run(&["schema", "--catalog", &format!("{url}#sha256=abc")], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("{url}: sha256 pin \"abc\" is not a sha256 digest")),
        "{}",
        stderr(&out)
    );
    // A function config does not trust it unless trustedCatalogs says so: the trust given on
    // the command line is the command's.
    let config = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: krm-catalog.dev/v1alpha1\n  kind: ResolveCatalog\n  metadata:\n    name: c\n  spec:\n    catalogs:\n    - url: {url}\n"
    );
    let out = ctx.run(&[], &config);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("trustedCatalogs"), "{}", stdout(&out));
}

/// A ResourceList with one `Resize` item and a function config over `catalog.yaml`.
fn resize_input(functions: &str) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: demo
    annotations:
      internal.config.kubernetes.io/path: demo.yaml
  data:
    greeting: hello
- apiVersion: fn.acme.dev/v1
  kind: Resize
  metadata:
    name: step
    annotations:
      internal.config.kubernetes.io/path: fn.yaml
  spec:
    size: small
functionConfig:
  apiVersion: krm-catalog.dev/v1alpha1
  kind: ResolveCatalog
  metadata:
    name: fns
  spec:
    builtin: false
    catalogs:
    - path: catalog.yaml
    functions: {functions}
"
    )
}

/// Run mode hands the runtime the admitted (defaulted) item as its function config, and the
/// output keeps that item as the step's source.
#[test]
fn issue11_run_mode_hands_the_defaulted_config_to_the_runtime() {
    // The function copies its input to a file and returns it unchanged.
    const TEE: &[u8] = b"#!/bin/sh\nexec /usr/bin/tee got.yaml\n";
    let pkg = TestContext::new();
    pkg.write("tee-fn", TEE);
    let (os, arch) = krm_catalog::functions::exec::this_platform();
    let catalog = resize_catalog().replace(
        "      runtime:\n        container:\n          image: ghcr.io/acme/resize:v1.0.0\n          sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n",
        &format!(
            "      runtime:\n        exec:\n          platforms:\n          - bin: tee-fn\n            os: {os}\n            arch: {arch}\n            uri: file://tee-fn\n            sha256: {}\n",
            sha256_hex(TEE)
        ),
    );
    assert!(
        catalog.contains("file://tee-fn"),
        "the runtime was not replaced"
    );
    pkg.write("catalog.yaml", catalog);
    let out = pkg.run(&[], &resize_input("{mode: run, allowExec: true}"));
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    let got = fs_err::read_to_string(pkg.path().join("got.yaml")).expect("the function ran");
    let got = yaml::parse(&got).expect("YAML");
    assert_eq!(
        got["functionConfig"]["spec"],
        json!({"size": "small", "replicas": 2, "selector": {"kind": "Deployment"}})
    );
    // The step's own config stays as a source, defaulted and marked local-config.
    let output = yaml::parse(&stdout(&out)).expect("YAML");
    let step = output["items"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["kind"] == "Resize"))
        .expect("the Resize item");
    assert_eq!(step["spec"]["replicas"], 2);
    assert_eq!(
        step["metadata"]["annotations"]["config.kubernetes.io/local-config"],
        "true"
    );
    // A config its schema rejects is not run.
    let _ = fs_err::remove_file(pkg.path().join("got.yaml"));
    let bad = resize_input("{mode: run, allowExec: true}").replace("size: small", "size: 3");
    let out = pkg.run(&[], &bad);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains(r#"message: "Invalid value: \"integer\": spec.size in body must be of type string: \"integer\"""#)
            && stdout(&out).contains("path: spec.size"),
        "{}",
        stdout(&out)
    );
    assert!(
        !pkg.path().join("got.yaml").exists(),
        "a rejected config ran"
    );
}

/// The problems of a catalog that is one file, as printed.
fn problems_of(name: &str, text: &str) -> Vec<String> {
    let bundle = Bundle::from_single_file(Origin::Path(name.to_owned()), name, text.as_bytes());
    bundle.problems.iter().map(ToString::to_string).collect()
}

/// KEP-2985's two `KRMFunctionDefinition` examples (verbatim in `testdata/kep/`) are not
/// YAML (a bare `...` line stands for more versions); without that line, they load up to
/// exactly their placeholders (`true|false`, `openAPIV3Schema: ...`), each at its path, and
/// every field they use is read (`configMap`, `usage`, `examples`, `license`, `home`, ...).
#[test]
fn issue11_the_keps_function_definition_examples_load_up_to_their_placeholders() {
    let dir = root().join("testdata/kep");
    for (file, line) in [
        ("krm-function-definition-container.yaml", 27),
        ("krm-function-definition-exec.yaml", 34),
    ] {
        let text = fs_err::read_to_string(dir.join(file)).expect("testdata/kep");
        let found = problems_of(file, &text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with(&format!(
                "catalog {file}: {file}: invalid YAML: line {line}:"
            )),
            "{found:?}"
        );
        let valid = text.replace("\n      ...\n", "\n");
        let mut expected = vec![
            "spec.versions[0].configMap: must be a boolean, not string",
            "spec.versions[0].idempotent: must be a boolean, not string",
            "spec.versions[0].schema.openAPIV3Schema: must be a schema object",
        ];
        if file.contains("container") {
            expected.extend([
                "spec.versions[0].runtime.container.requireNetwork: must be a boolean, not string",
                "spec.versions[0].runtime.container.requireStorageMount: must be a boolean, not string",
            ]);
        }
        expected.push("spec.versions[1].runtime: missing runtime (container, exec or service), in this version or beside versions");
        let expected: Vec<String> = expected
            .iter()
            .map(|m| format!("catalog {file}: {file}: {m}"))
            .collect();
        assert_eq!(problems_of(file, &valid), expected);
    }
}

/// A `KRMFunctionDefinition` loads next to `Catalog` documents: in one file, in a directory,
/// and inline next to a KEP catalog item; both kinds resolve and are admitted.
#[test]
fn issue11_function_definitions_load_beside_catalog_documents() {
    let one_file = format!("{}---\n{SET_NAMESPACE}", resize_catalog());
    let bundle =
        Bundle::from_single_file(Origin::Path("f.yaml".into()), "f.yaml", one_file.as_bytes());
    assert!(bundle.problems.is_empty(), "{:?}", bundle.problems);
    let dir = [
        ("resize.yaml".to_owned(), resize_catalog().into_bytes()),
        (
            "set-namespace.yaml".to_owned(),
            SET_NAMESPACE.as_bytes().to_vec(),
        ),
    ];
    let borrowed: Vec<(String, &[u8])> =
        dir.iter().map(|(n, b)| (n.clone(), b.as_slice())).collect();
    let from_dir = Bundle::from_files(Origin::Path("fns".into()), &borrowed);
    for bundle in [bundle, from_dir] {
        let (catalog, errors) = Catalog::merge(vec![bundle], false);
        assert!(errors.is_empty(), "{errors:?}");
        let kinds: Vec<String> = catalog.kinds().iter().map(|(g, _)| g.to_string()).collect();
        assert_eq!(
            kinds,
            ["example.com/v1/SetNamespace", "fn.acme.dev/v1/Resize"]
        );
    }
    // Inline, pinned: both items admitted (the SetNamespace one rejected for its empty
    // namespace), the definition kept as a source.
    let indent = |text: &str| {
        text.lines()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    format!("- {l}")
                } else {
                    format!("  {l}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let uncommented: Vec<String> = resize_catalog()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    let catalog_item = indent(&uncommented.join("\n"));
    let input = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{catalog_item}\n{}\n- apiVersion: fn.acme.dev/v1\n  kind: Resize\n  metadata:\n    name: r\n  spec:\n    size: large\n- apiVersion: example.com/v1\n  kind: SetNamespace\n  metadata:\n    name: n\n  spec:\n    namespace: \"\"\nfunctionConfig:\n  apiVersion: krm-catalog.dev/v1alpha1\n  kind: ResolveCatalog\n  metadata:\n    name: c\n  spec:\n    builtin: false\n    functions:\n      mode: pin\n",
        indent(SET_NAMESPACE)
    );
    let out = TestContext::new().run(&[], &input);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let output = yaml::parse(&stdout(&out)).expect("YAML");
    let items = output["items"].as_array().expect("items");
    let resize = items
        .iter()
        .find(|i| i["kind"] == "Resize")
        .expect("Resize");
    assert_eq!(resize["spec"]["replicas"], 2);
    assert!(resize["metadata"]["annotations"]["config.kubernetes.io/function"].is_string());
    let definition = items
        .iter()
        .find(|i| i["kind"] == "KRMFunctionDefinition")
        .expect("the definition");
    assert_eq!(
        definition["metadata"]["annotations"]["config.kubernetes.io/local-config"],
        "true"
    );
    let results: Vec<String> = output["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["field"]["path"].as_str().unwrap_or(""),
                r["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            "spec.namespace Invalid value: \"\": spec.namespace in body should be at least 1 chars long"
        ]
    );
}

/// Every served version of every real CRD of the corpus (`testdata/crds/`), used as a
/// function kind's schema, admits its project's own examples as the apiserver does: nothing
/// unknown, defaults applied (a second pass changes nothing).
#[test]
fn issue11_real_crd_examples_are_admitted_as_function_configs() {
    let corpus = root().join("testdata/crds");
    let docs = |path: &Path| -> Vec<Value> {
        let text = fs_err::read_to_string(path).expect("corpus file");
        yaml::parse_stream(&text)
            .expect("YAML")
            .into_iter()
            .map(|d| d.value)
            .filter(|v| !v.is_null())
            .collect()
    };
    let sorted = |dir: &Path| {
        let mut out: Vec<_> = fs_err::read_dir(dir)
            .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        out.sort();
        out
    };
    let mut schemas = Vec::new();
    let mut examples = Vec::new();
    for project in sorted(&corpus).into_iter().filter(|p| p.is_dir()) {
        for file in sorted(&project.join("crds")) {
            for crd in docs(&file) {
                let group = crd["spec"]["group"].as_str().unwrap_or_default().to_owned();
                let kind = crd["spec"]["names"]["kind"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                for v in crd["spec"]["versions"].as_array().into_iter().flatten() {
                    let api_version = format!("{group}/{}", v["name"].as_str().unwrap_or_default());
                    let schema = ConfigSchema::parse(&v["schema"]["openAPIV3Schema"])
                        .expect("checked in crd_corpus");
                    schemas.push((api_version, kind.clone(), schema));
                }
            }
        }
        for file in sorted(&project.join("examples")) {
            examples.extend(docs(&file).into_iter().map(|d| (file.clone(), d)));
        }
    }
    let mut admitted = 0;
    let mut defaulted = 0;
    for (file, example) in &examples {
        let Some((_, _, schema)) = schemas
            .iter()
            .find(|(a, k, _)| example["apiVersion"] == a.as_str() && example["kind"] == k.as_str())
        else {
            continue;
        };
        let first = instance::admit_object(schema, example, UnknownFields::Strict)
            .unwrap_or_else(|r| panic!("{}: {:?}", file.display(), r.errors));
        let again = instance::admit_object(schema, &first.value, UnknownFields::Strict)
            .unwrap_or_else(|r| panic!("{}: {:?}", file.display(), r.errors));
        assert_eq!(again.value, first.value, "{}", file.display());
        if example["kind"] == "GitRepository"
            && example["apiVersion"] == "source.toolkit.fluxcd.io/v1"
            && example["spec"]["timeout"].is_null()
        {
            assert_eq!(first.value["spec"]["timeout"], "60s");
            defaulted += 1;
        }
        admitted += 1;
    }
    assert!(
        admitted >= 20,
        "only {admitted} examples matched a corpus CRD"
    );
    assert!(
        defaulted >= 1,
        "no GitRepository example got its default timeout"
    );
}

//! The command line: help, version, fatal input errors, human commands.

use crate::util::{root, run, stderr, stdout};

#[test]
fn help_describes_function_mode_and_config() {
    let out = run(&["--help"], "", &root());
    assert!(out.status.success());
    let text = stdout(&out);
    for needle in [
        "ResourceList",
        "kpt fn eval",
        "ResolveCatalog",
        "ConfigMap",
        "Exit codes",
        "render",
        "explain",
        "schema",
        "catalog",
    ] {
        assert!(text.contains(needle), "--help lacks {needle}:\n{text}");
    }
}

#[test]
fn version_names_the_builtin_catalog() {
    let out = run(&["version"], "", &root());
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.starts_with("krm-catalog "), "{text}");
    assert!(text.contains("built-in catalog: builtin@"), "{text}");
}

#[test]
fn input_that_is_not_a_resource_list_writes_nothing_to_stdout() {
    for input in [
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
        "a: [\n",
        "",
        "- 1\n",
    ] {
        let out = run(&[], input, &root());
        assert_eq!(out.status.code(), Some(1), "{input:?}");
        assert!(out.stdout.is_empty(), "{input:?}: {}", stdout(&out));
        assert!(
            stderr(&out).contains("krm-catalog error:"),
            "{input:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let out = run(&["no-such-command"], "", &root());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn empty_resource_list_passes_through() {
    let out = run(
        &[],
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n",
        &root(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
    );
}

#[test]
fn schema_is_json_schema_for_every_kind() {
    let out = run(&["schema"], "", &root());
    assert!(out.status.success(), "{}", stderr(&out));
    let schema: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    let defs = schema["definitions"].as_object().expect("definitions");
    for key in [
        "services.krm-catalog.dev/v1alpha1/ServiceSet",
        "services.krm-catalog.dev/v1alpha1/CertManager",
        "krm-catalog.dev/v1alpha1/ResolveCatalog",
    ] {
        assert!(defs.contains_key(key), "missing {key}");
    }
    let one = run(&["schema", "CertManager"], "", &root());
    let one: serde_json::Value = serde_json::from_str(&stdout(&one)).expect("JSON");
    assert_eq!(one["properties"]["kind"]["enum"][0], "CertManager");
    let bad = run(&["schema", "CertManagr"], "", &root());
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("did you mean \"CertManager\""),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn explain_walks_into_the_config_schema() {
    let out = run(
        &["explain", "CertManager.spec.config.clusterIssuer"],
        "",
        &root(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for needle in [
        "KIND:       CertManager",
        "FIELD: clusterIssuer <Object>",
        "email\t<string> -required-",
        "Default: \"letsencrypt-staging\"",
    ] {
        assert!(text.contains(needle), "explain lacks {needle:?}:\n{text}");
    }
    let out = run(&["explain", "ServiceSet.spec.services"], "", &root());
    assert!(
        stdout(&out).contains("cert-manager\t<Object>"),
        "{}",
        stdout(&out)
    );
    let out = run(&["explain", "CertManager.spec.confg"], "", &root());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("did you mean \"config\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn catalog_lint_passes_on_the_builtin_catalog() {
    let out = run(&["catalog", "lint", "catalogs/builtin"], "", &root());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("ok: catalogs/builtin: 7 services"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn catalog_lint_fails_with_file_and_schema_path() {
    let out = run(
        &["catalog", "lint", "testdata/catalogs/broken"],
        "",
        &root(),
    );
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    for needle in [
        "error: catalog testdata/catalogs/broken: services/bad-schema.yaml: spec.configSchema.properties.replicas.default:",
        "error: catalog testdata/catalogs/broken: services/bad-schema.yaml: spec.configSchema.properties.ref.$ref:",
        "error: catalog testdata/catalogs/broken: services/bad-name.yaml: metadata.name:",
    ] {
        assert!(
            text.contains(needle),
            "lint output lacks {needle:?}:\n{text}"
        );
    }
}

#[test]
fn catalog_lint_reports_templates_that_fail_with_defaults() {
    let out = run(
        &["catalog", "lint", "testdata/catalogs/broken-template"],
        "",
        &root(),
    );
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains(
            "templates/configmap.yaml.j2:4: rendering \"demo\" with its defaults: undefined value"
        ),
        "{text}"
    );
}

#[test]
fn catalog_view_shows_what_a_user_trusts() {
    let out = run(&["catalog", "view", "builtin"], "", &root());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for needle in [
        "Name:      builtin",
        "Digest:    sha256:",
        "cert-manager",
        "services.krm-catalog.dev/v1alpha1/CertManager",
        "templates/application.yaml.j2",
    ] {
        assert!(text.contains(needle), "view lacks {needle:?}:\n{text}");
    }
}

#[test]
fn render_standalone_prints_manifests_without_sources() {
    let out = run(
        &["render", "-f", "functions/examples/serviceset.yaml"],
        "",
        &root(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("kind: Application"), "{text}");
    assert!(
        !text.contains("kind: ServiceSet"),
        "sources must be dropped:\n{text}"
    );
    assert!(
        !text.contains("config.kubernetes.io/path"),
        "orchestrator annotations must be dropped:\n{text}"
    );
}

#[test]
fn input_over_the_size_limit_is_refused() {
    let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n# padding padding padding\n";
    let out = crate::util::run_env(
        &[],
        input,
        &root(),
        &[("KRM_CATALOG_MAX_INPUT_BYTES", "40")],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("more than the limit of 40 bytes"),
        "{}",
        stderr(&out)
    );
}

/// `functions/krm-catalog.yaml` is generated from the code; it must be current.
/// `UPDATE_GOLDEN=1` rewrites it.
#[test]
fn function_metadata_is_current() {
    let out = run(&["schema", "--function-catalog"], "", &root());
    assert!(out.status.success(), "{}", stderr(&out));
    let generated = stdout(&out);
    let path = root().join("functions/krm-catalog.yaml");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs_err::write(&path, &generated).expect("write");
    }
    let checked_in = fs_err::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "functions/krm-catalog.yaml is stale; regenerate it with `UPDATE_GOLDEN=1 cargo test --test integration function_metadata`:\n{}",
        crate::util::diff(&checked_in, &generated)
    );
    let doc = krm_catalog::yaml::parse(&generated).expect("YAML");
    assert_eq!(doc["kind"], "KRMFunctionCatalog");
    assert_eq!(
        doc["spec"]["krmFunctions"][0]["names"]["kind"],
        "ResolveCatalog"
    );
}

#[test]
fn function_metadata_loads_as_a_catalog_and_lints_clean() {
    // Our own KEP metadata must pass our own loader: structural schemas, image and binaries
    // side by side. Unpinned release artifacts are warnings until a release locks them.
    let out = run(
        &["catalog", "lint", "functions/krm-catalog.yaml"],
        "",
        &root(),
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("ok: functions/krm-catalog.yaml: 0 services, 2 function kinds, 0 templates"),
        "{err}"
    );
    assert!(
        err.contains("warning: ")
            && err.contains(
                "has no sha256; function mode refuses it until `krm-catalog catalog lock` pins it"
            ),
        "{err}"
    );
    let out = run(
        &["catalog", "view", "functions/krm-catalog.yaml"],
        "",
        &root(),
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text.contains("container ghcr.io/krm-catalog/krm-catalog:") && text.contains("| exec"),
        "{text}"
    );
    assert!(
        text.contains("NOT PINNED (no sha256) | linux/amd64 NOT PINNED, linux/arm64 NOT PINNED"),
        "{text}"
    );
}

#[test]
fn the_example_function_configs_render() {
    // functions/examples/: the typed config (with a kubara catalog) and the kpt ConfigMap form
    // (its cluster values reach a ServiceSet that sets none of its own).
    let out = run(
        &[
            "render",
            "--fn-config",
            "functions/examples/resolvecatalog.yaml",
            "-f",
            "functions/examples/kpt-eval/services.yaml",
        ],
        "",
        &root(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("krm-catalog.dev/service: argo-cd"),
        "{}",
        stdout(&out)
    );
    let set = "apiVersion: services.krm-catalog.dev/v1alpha1\nkind: ServiceSet\nmetadata:\n  name: edge\nspec:\n  services:\n    cert-manager: {config: {clusterIssuer: {email: ops@example.com}}}\n";
    let out = run(
        &[
            "render",
            "--fn-config",
            "functions/examples/configmap.yaml",
            "-f",
            "-",
        ],
        set,
        &root(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("name: edge-1-cert-manager"),
        "{}",
        stdout(&out)
    );
    assert!(
        !stdout(&out).contains("krm-catalog.dev/service: argocd\n"),
        "argocd is hub-only:\n{}",
        stdout(&out)
    );
}

#[test]
fn the_ci_job_example_runs() {
    // functions/examples/ci-job/ci.sh: lint, render, fail on drift of the committed output.
    let out = std::process::Command::new(root().join("functions/examples/ci-job/ci.sh"))
        .env("KRM_CATALOG", crate::util::bin())
        .output()
        .expect("ci.sh");
    assert!(
        out.status.success(),
        "ci.sh failed (UPDATE_GOLDEN=1 rewrites rendered/hub.yaml):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

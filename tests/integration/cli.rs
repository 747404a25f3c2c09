//! The command line: help, version, fatal input errors, human commands.

use std::fmt::Write as _;

use crate::util::{TestContext, bin, diff, root, stderr, stdout};

#[test]
fn help_describes_function_mode_and_config() {
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(&["--help"], "");
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
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(&["version"], "");
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.starts_with("krm-catalog "), "{text}");
    assert!(text.contains("built-in catalog: builtin@"), "{text}");
    // Issue 22: `-o json|yaml` for machines, the same document in both forms.
    let json = repo.run(&["version", "-o", "json"], "");
    assert!(json.status.success(), "{}", stderr(&json));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    assert_eq!(doc["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        doc["builtinCatalog"]["reference"]
            .as_str()
            .is_some_and(|r| r.starts_with("builtin@")),
        "{doc}"
    );
    assert!(
        text.contains(doc["builtinCatalog"]["digest"].as_str().expect("digest")),
        "{text}"
    );
    let yaml = repo.run(&["version", "-o", "yaml"], "");
    assert!(yaml.status.success(), "{}", stderr(&yaml));
    assert_eq!(krm_catalog::yaml::parse(&stdout(&yaml)).expect("yaml"), doc);
}

#[test]
fn input_that_is_not_a_resource_list_writes_nothing_to_stdout() {
    let repo = TestContext::new().in_repo_root();
    for input in [
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
        "a: [\n",
        "",
        "- 1\n",
    ] {
        let out = repo.run(&[], input);
        assert_eq!(out.status.code(), Some(1), "{input:?}");
        assert!(out.stdout.is_empty(), "{input:?}: {}", stdout(&out));
        assert!(
            stderr(&out).starts_with("error: "),
            "{input:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(&["no-such-command"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn empty_resource_list_passes_through() {
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(
        &[],
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
    );
}

#[test]
fn schema_is_json_schema_for_every_kind() {
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(&["schema"], "");
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
    let one = repo.run(&["schema", "CertManager"], "");
    let one: serde_json::Value = serde_json::from_str(&stdout(&one)).expect("JSON");
    assert_eq!(one["properties"]["kind"]["enum"][0], "CertManager");
    let bad = repo.run(&["schema", "CertManagr"], "");
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("did you mean \"CertManager\""),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn explain_walks_into_the_config_schema() {
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(&["explain", "CertManager.spec.config.clusterIssuer"], "");
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
    let out = repo.run(&["explain", "ServiceSet.spec.services"], "");
    assert!(
        stdout(&out).contains("cert-manager\t<Object>"),
        "{}",
        stdout(&out)
    );
    let out = repo.run(&["explain", "CertManager.spec.confg"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("did you mean \"config\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn catalog_lint_passes_on_the_builtin_catalog() {
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(&["catalog", "lint", "catalogs/builtin"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    // cert-manager is enabled by default and its ACME e-mail has no default (issue 8: a value
    // a user must choose is required): a warning for the catalog author, never an error.
    assert!(
        stderr(&out).contains(
            "warning: catalog catalogs/builtin: services/cert-manager.yaml: config.clusterIssuer"
        ),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("ok: catalogs/builtin: 7 services"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn catalog_lint_fails_with_file_and_schema_path() {
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(&["catalog", "lint", "testdata/catalogs/broken"], "");
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
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(
        &["catalog", "lint", "testdata/catalogs/broken-template"],
        "",
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
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(&["catalog", "view", "builtin"], "");
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
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(&["render", "-f", "functions/examples/serviceset.yaml"], "");
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
    let out = TestContext::new()
        .in_repo_root()
        .with_env("KRM_CATALOG_MAX_INPUT_BYTES", "40")
        .run(&[], input);
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
    let repo = TestContext::new().in_repo_root();
    let out = repo.run(&["schema", "--function-catalog"], "");
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
        diff(&checked_in, &generated)
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
    let repo = TestContext::new().in_repo_root();
    // Our own KEP metadata must pass our own loader: structural schemas, image and binaries
    // side by side. Unpinned release artifacts are warnings until a release locks them.
    let out = repo.run(&["catalog", "lint", "functions/krm-catalog.yaml"], "");
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
    let out = repo.run(&["catalog", "view", "functions/krm-catalog.yaml"], "");
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
    let repo = TestContext::new().in_repo_root();
    // functions/examples/: the typed config (with a kubara catalog) and the kpt ConfigMap form
    // (its cluster values reach a ServiceSet that sets none of its own).
    let out = repo.run(
        &[
            "render",
            "--fn-config",
            "functions/examples/resolvecatalog.yaml",
            "-f",
            "functions/examples/kpt-eval/services.yaml",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("krm-catalog.dev/service: argo-cd"),
        "{}",
        stdout(&out)
    );
    let set = "apiVersion: services.krm-catalog.dev/v1alpha1\nkind: ServiceSet\nmetadata:\n  name: edge\nspec:\n  services:\n    cert-manager: {config: {clusterIssuer: {email: ops@example.com}}}\n";
    let out = repo.run(
        &[
            "render",
            "--fn-config",
            "functions/examples/configmap.yaml",
            "-f",
            "-",
        ],
        set,
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
    let out = TestContext::new()
        .in_repo_root()
        .command(root().join("functions/examples/ci-job/ci.sh"))
        .env("KRM_CATALOG", bin())
        .output()
        .expect("ci.sh");
    assert!(
        out.status.success(),
        "ci.sh failed (UPDATE_GOLDEN=1 rewrites rendered/hub.yaml):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 8 point 1: every catalog of the KEP-2906 text (the `kep-2906-*` golden cases carry
/// them verbatim) loads: `catalog view` and `catalog lint` succeed and show each runtime, an
/// unpinned one marked as such (refusing it is for resolution time).
#[test]
fn issue8_p1_kep_catalogs_view_and_lint_succeed_and_show_their_runtimes() {
    let base = root().join("testdata/golden");
    let mut seen = 0;
    let mut dirs: Vec<_> = fs_err::read_dir(&base)
        .expect("testdata/golden")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("kep-2906-"))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let text = fs_err::read_to_string(dir.join("catalog.yaml")).expect("catalog.yaml");
        let doc = krm_catalog::yaml::parse(&text).expect("the KEP catalog is YAML");
        let case = TestContext::new().in_dir(&dir);
        let out = case.run(&["catalog", "view", "catalog.yaml"], "");
        let view = stdout(&out);
        assert!(out.status.success(), "{}: {}", dir.display(), stderr(&out));
        let out = case.run(&["catalog", "lint", "catalog.yaml"], "");
        let lint = stderr(&out);
        assert!(out.status.success(), "{}: {lint}", dir.display());
        assert!(lint.contains("ok: catalog.yaml: 0 services"), "{lint}");
        let functions = doc["spec"]["krmFunctions"]
            .as_array()
            .expect("krmFunctions");
        for f in functions {
            let runtime = &f["runtime"];
            let kind = format!(
                "{}/v1/{}",
                f["group"].as_str().unwrap_or(""),
                f["names"]["kind"].as_str().unwrap_or("")
            );
            if let Some(image) = runtime["container"]["image"].as_str() {
                let row = format!("  {kind}  container {image}  NOT PINNED (no sha256)");
                assert!(view.contains(&row), "view lacks {row:?}:\n{view}");
                assert!(
                    lint.contains(&format!("{kind}: image {image} has no sha256")),
                    "{lint}"
                );
            } else if let Some(url) = runtime["starlark"].as_str() {
                let row = format!("  {kind}  starlark {url}  NOT PINNED (no sha256)");
                assert!(view.contains(&row), "view lacks {row:?}:\n{view}");
                assert!(
                    lint.contains(&format!("{kind}: starlark script {url} has no sha256")),
                    "{lint}"
                );
            } else {
                panic!("{}: unexpected runtime {runtime}", dir.display());
            }
            seen += 1;
        }
    }
    // Proposal (2), Stories 1, 5, 6, 7: 1 + 1 + 3 + 1 + 2 + 3 functions.
    assert_eq!(seen, 11);
}

/// Issue 8 point 1: the KEP's catalogs resolve their kinds; a runtime without a digest is
/// refused only at resolution, and `allowUnpinned` turns that into a warning.
#[test]
fn issue8_p1_kep_catalogs_resolve_and_unpinned_runtimes_are_warnings_with_allow_unpinned() {
    let base = root().join("testdata/golden");
    let mut resolved = 0;
    for section in ["proposal", "story-1", "story-5", "story-6", "story-7"] {
        let dir = base.join(format!("kep-2906-{section}"));
        let text = fs_err::read_to_string(dir.join("catalog.yaml")).expect("catalog.yaml");
        let doc = krm_catalog::yaml::parse(&text).expect("YAML");
        let functions = doc["spec"]["krmFunctions"]
            .as_array()
            .expect("krmFunctions");
        let mut items = String::new();
        for f in functions {
            let kind = f["names"]["kind"].as_str().unwrap_or("");
            let _ = write!(
                items,
                "- apiVersion: {}/v1\n  kind: {kind}\n  metadata:\n    name: {}\n",
                f["group"].as_str().unwrap_or(""),
                kind.to_lowercase()
            );
        }
        // Story 7's JavaApplication requires storage: the mount allows it (issue 22).
        let list = |allow: bool| {
            format!(
                "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}functionConfig:\n  apiVersion: krm-catalog.dev/v1alpha1\n  kind: ResolveCatalog\n  metadata: {{name: kep}}\n  spec:\n    builtin: false\n    catalogs: [{{path: catalog.yaml}}]\n    functions: {{mode: pin, allowNetwork: true, mounts: [{{src: ., dst: /data}}], allowUnpinned: {allow}}}\n"
            )
        };
        let case = TestContext::new().in_dir(&dir);
        let out = case.run(&[], &list(true));
        let text = stdout(&out);
        assert!(out.status.success(), "{section}: {}", stderr(&out));
        let strict = case.run(&[], &list(false));
        assert_eq!(strict.status.code(), Some(1), "{section}");
        let strict_text = stdout(&strict);
        for f in functions {
            let image = f["runtime"]["container"]["image"].as_str().expect("image");
            assert!(text.contains("config.kubernetes.io/function: |"), "{text}");
            assert!(
                text.contains("image: ")
                    && text.contains(image.rsplit('/').next().unwrap_or(image)),
                "{text}"
            );
            assert!(
                text.contains(&format!(
                    "image {image} is not pinned by digest (allowed by functions.allowUnpinned)"
                )),
                "{text}"
            );
            assert!(
                strict_text.contains(&format!("image {image} has no digest; add sha256")),
                "{strict_text}"
            );
            resolved += 1;
        }
    }
    assert_eq!(resolved, 10);
}

/// Issue 8 point 4: one rule for which files belong to a catalog, so the built-in catalog has
/// one digest whether it is named `builtin` or by its directory (README.md is not content).
#[test]
fn issue8_p4_catalog_view_builtin_and_its_directory_give_the_same_digest() {
    let repo = TestContext::new().in_repo_root();
    let digest = |reference: &str| {
        let out = repo.run(&["catalog", "view", reference], "");
        assert!(out.status.success(), "{reference}: {}", stderr(&out));
        stdout(&out)
            .lines()
            .find_map(|l| l.strip_prefix("Digest:    ").map(str::to_owned))
            .expect("a Digest line")
    };
    let builtin = digest("builtin");
    assert!(builtin.starts_with("sha256:"), "{builtin}");
    assert_eq!(builtin, digest("catalogs/builtin"));
    assert_eq!(builtin, digest("./catalogs/builtin/"));
}

/// Issue 8 point 4: a catalog baked into the image (`KRM_CATALOG_CATALOGS`) and listed in the
/// function config again is the same catalog (same content digest): loaded once, no conflict.
#[test]
fn issue8_p4_catalog_from_the_environment_and_the_config_is_loaded_once() {
    let dir = root().join("testdata/golden/team-catalog-beside-builtin");
    let input = fs_err::read_to_string(dir.join("input.yaml")).expect("input.yaml");
    let team = dir.join("team");
    let out = TestContext::new()
        .in_dir(&dir)
        .with_env("KRM_CATALOG_CATALOGS", team.to_str().expect("UTF-8 path"))
        .run(&[], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = fs_err::read_to_string(dir.join("expected.yaml")).expect("expected.yaml");
    assert_eq!(stdout(&out), expected, "{}", diff(&expected, &stdout(&out)));
    // A different catalog with the same service is still a conflict.
    let other = TestContext::new().in_dir(&dir);
    other.write(
        "services/greeter.yaml",
        "apiVersion: kubara.io/v1alpha1\nkind: ServiceDefinition\nmetadata:\n  name: greeter\nspec:\n  chartPath: other\n  status: enabled\n",
    );
    let other_catalog = other.path().to_str().expect("UTF-8 path").to_owned();
    let out = other
        .with_env("KRM_CATALOG_CATALOGS", &other_catalog)
        .run(&[], &input);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("service definition \"greeter\" already exists in catalog "),
        "{}",
        stderr(&out)
    );
}

/// Issue 8 point 6 (acceptance review): `render -f DIR` with the function config in DIR (a
/// ResolveCatalog next to the services) rendered without it, exit 0, with other settings than
/// the user wrote (its cluster name, catalogs, `builtin: false` were ignored). It is an error
/// unless it is the --fn-config file; a --fn-config file of several documents is named as such.
#[test]
fn issue8_render_refuses_a_resolvecatalog_it_would_ignore() {
    let pkg = TestContext::new();
    pkg.write(
        "metrics.yaml",
        "apiVersion: services.krm-catalog.dev/v1alpha1\nkind: MetricsServer\nmetadata:\n  name: m\nspec:\n  status: enabled\n",
    );
    pkg.write(
        "krm-catalog.yaml",
        "apiVersion: krm-catalog.dev/v1alpha1\nkind: ResolveCatalog\nmetadata:\n  name: hub\nspec:\n  cluster:\n    name: hub-7\n",
    );
    let out = pkg.run(&["render", "-f", "."], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(
        stderr(&out),
        "error: ./krm-catalog.yaml: document 0 (line 1): a ResolveCatalog among the inputs is not used as the function config; give its file with `--fn-config FILE` (it may stay among the inputs)\n"
    );
    assert_eq!(stdout(&out), "");
    // Given as --fn-config, it may stay in the directory (the Argo CD plugin does this).
    let out = pkg.run(
        &["render", "--fn-config", "krm-catalog.yaml", "-f", "."],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("name: hub-7-metrics-server"),
        "{}",
        stdout(&out)
    );
    // A function config file of two documents.
    pkg.write(
        "two.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
    );
    let out = pkg.run(
        &["render", "--fn-config", "two.yaml", "-f", "metrics.yaml"],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: two.yaml: expected one YAML document (the function config), found 2; give the function config a file of its own\n"
    );
}

/// A limit variable that is not a number falls back to its default, but never silently: a typo
/// in `KRM_CATALOG_MAX_INPUT_BYTES` used to be ignored without a word.
#[test]
fn an_unparsable_limit_variable_is_a_warning_once() {
    let list = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n";
    let out = TestContext::new()
        .in_repo_root()
        .with_env("KRM_CATALOG_MAX_INPUT_BYTES", "12x")
        .with_env("KRM_CATALOG_HTTP_RETRIES", "")
        .run(&[], list);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stderr(&out);
    let warning = "warning: KRM_CATALOG_MAX_INPUT_BYTES=\"12x\" is not a number; using the default";
    assert_eq!(text.matches(warning).count(), 1, "{text}");
    // Empty is unset, as before.
    assert!(!text.contains("KRM_CATALOG_HTTP_RETRIES"), "{text}");
    assert_eq!(stdout(&out), list);
}

//! The function: ResourceList in, ResourceList and results out.
//!
//! One run is a row of stages, each in its own file: read the function config; load and merge
//! the catalogs (`catalogs`: built-in, `spec.catalogs`, inline); classify every item
//! (`classify`: explicit runtime, source object, service object, claimed group, pass-through);
//! admit function-backed items and service objects by their kind's version schema (`admit`:
//! pruned, defaulted, validated as an apiserver admits a custom resource); verify the runtimes
//! of function-backed items (`runtimes`); expand service objects and
//! `ServiceSet`s (`expand`, with what generated objects carry and may be in `output`); write
//! every item back (`assemble`): source objects marked local-config, generated objects right
//! after their source, objects of earlier runs replaced. `input` holds what every stage reads.

mod admit;
mod assemble;
mod catalogs;
mod classify;
mod depends;
mod expand;
mod input;
mod output;
mod runtimes;

use serde_json::Value;

use crate::config;
use crate::remote::LazyRemote;
use crate::render::Renderer;
use crate::resource_list::{self, Item, ResourceList, Verbatim};
use crate::results::{KrmResult, Results};
use crate::service::Schemas;

pub use catalogs::load_catalogs;
pub use input::{RunContext, read_whole};
pub use output::{CATALOG_ANNOTATION, GENERATED_FROM, MANAGED_BY, SERVICE_ANNOTATION};

/// What a run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The output ResourceList (without results).
    pub list: ResourceList<Item>,
    /// Every result, unsorted.
    pub results: Results,
}

/// Run the function over a ResourceList (of whole items, or as `read_owned` reads it).
pub fn run(list: impl Into<ResourceList<Item>>, ctx: &RunContext) -> Outcome {
    let mut results = Results::default();
    let ResourceList {
        mut items,
        function_config,
        mut verbatim,
    } = list.into();
    let config_ref = function_config.as_ref();
    let mut fc = config::parse(config_ref);
    // Relative paths of the config resolve where the file that declares it is (issue 22).
    let (run_ctx, base) = ctx.for_function_config(config_ref);
    let ctx = &run_ctx;
    fc.settings.rebase(&base);
    for p in &fc.problems {
        results.push(KrmResult::of(p, config_ref));
    }
    if !fc.problems.is_empty() {
        // A broken config must not reach for catalogs (or the network) it may not mean.
        return untouched(items, function_config, verbatim, results);
    }
    // What the run makes on first need and its stages share: one remote (catalogs, runtimes),
    // one template environment per bundle and one instance schema per service (expand).
    let remote = LazyRemote::new(fc.settings.offline);
    let Some(catalog) = catalogs::load(
        &fc,
        &mut items,
        verbatim.as_ref(),
        config_ref,
        ctx,
        &remote,
        &mut results,
    ) else {
        // Expanding against a broken catalog would only add misleading errors (unknown
        // services, missing templates): report the catalog and give every item back untouched.
        return untouched(items, function_config, verbatim, results);
    };
    let config_identity = config_ref.map(resource_list::identity);
    let classified = classify::classify(
        &mut items,
        verbatim.as_ref(),
        &catalog,
        &fc,
        config_identity.as_deref(),
        &mut results,
    );
    let admission = admit::admit(&items, &classified, &catalog, &fc.settings, &mut results);
    let (verified, runtime_results) =
        runtimes::verify(&admission, &catalog, &fc.settings, ctx, &remote);
    let renderer = Renderer::new(&catalog);
    let schemas = Schemas::new();
    let expansion = expand::expand(
        &admission,
        &renderer,
        &schemas,
        &fc,
        config_ref,
        &mut results,
    );
    drop(admission);
    results.extend(runtime_results.iter().cloned());
    let expanded = expansion.expanded_sources.len();
    let out = assemble::assemble(
        items,
        classified,
        verified,
        expansion,
        &mut verbatim,
        &mut results,
    );
    crate::log!(
        crate::logger::Level::Info,
        "{} sources expanded, {} items out",
        expanded,
        out.len()
    );
    Outcome {
        list: ResourceList {
            items: out,
            function_config,
            verbatim,
        },
        results,
    }
}

/// Every item back as it came, with the results that say why.
fn untouched(
    items: Vec<Item>,
    function_config: Option<Value>,
    verbatim: Option<Verbatim>,
    results: Results,
) -> Outcome {
    let list = ResourceList {
        items,
        function_config,
        verbatim,
    };
    Outcome { list, results }
}

/// No input makes the function panic, and its output is always a readable ResourceList.
#[cfg(test)]
mod properties {
    use super::*;
    use crate::results::KrmResult;
    use proptest::prelude::*;
    use serde_json::json;

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-5i64..5).prop_map(|n| json!(n)),
            prop::sample::select(vec![
                "",
                "enabled",
                "disabled",
                "hub",
                "spoke",
                "x@y.z",
                "cert-manager",
                "1.10",
                "on"
            ])
            .prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop::sample::select(vec![
                            "status",
                            "config",
                            "storage",
                            "networking",
                            "services",
                            "clusterType",
                            "cluster",
                            "clusterIssuer",
                            "email",
                            "name",
                            "className",
                            "annotations",
                            "catalogs",
                            "path",
                            "cert-manager",
                            "traefik",
                            "certManager",
                            "ingress",
                            "builtin",
                            "replicas",
                            "provider",
                        ]),
                        inner,
                    ),
                    0..5,
                )
                .prop_map(|kv| Value::Object(
                    kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                )),
            ]
        })
    }

    fn item() -> impl Strategy<Value = Value> {
        let api = prop::sample::select(vec![
            "services.krm-catalog.dev/v1alpha1",
            "services.krm-catalog.dev/v1",
            "kubara.io/v1alpha1",
            "krm-catalog.dev/v1alpha1",
            "v1",
            "",
        ]);
        let kind = prop::sample::select(vec![
            "ServiceSet",
            "CertManager",
            "Traefik",
            "Argocd",
            "ServiceDefinition",
            "Catalog",
            "ResolveCatalog",
            "ConfigMap",
            "Nope",
        ]);
        let annotations = prop::collection::vec(
            (
                prop::sample::select(vec![
                    "krm-catalog.dev/generated-from",
                    "config.kubernetes.io/function",
                    "config.kubernetes.io/local-config",
                    "internal.config.kubernetes.io/path",
                    "internal.config.kubernetes.io/index",
                ]),
                prop::sample::select(vec![
                    "true",
                    "a.yaml",
                    "0",
                    "x",
                    "services.krm-catalog.dev/v1alpha1/ServiceSet/a",
                ]),
            ),
            0..3,
        );
        (api, kind, prop::sample::select(vec!["a", "b", "cert-manager"]), annotations, any_json()).prop_map(
            |(api, kind, name, annotations, spec)| {
                let annotations: serde_json::Map<String, Value> =
                    annotations.into_iter().map(|(k, v)| (k.to_owned(), json!(v))).collect();
                json!({"apiVersion": api, "kind": kind, "metadata": {"name": name, "annotations": annotations}, "spec": spec})
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn any_items_and_config_give_a_readable_resource_list(
            items in prop::collection::vec(item(), 0..6),
            config in prop::option::of(item()),
        ) {
            let list = ResourceList { items, function_config: config, verbatim: None };
            let outcome = run(list, &RunContext::default());
            let text = resource_list::write(outcome.list, None);
            let again = resource_list::read(&text);
            prop_assert!(again.is_ok(), "output is not a ResourceList:\n{}", text);
            let second = run(again.unwrap(), &RunContext::default());
            prop_assert!(resource_list::read(&resource_list::write(second.list, None)).is_ok());
            // Reading items as skeletons (function mode) changes nothing in what is written.
            let eager = run(resource_list::read(&text).unwrap(), &RunContext::default());
            let lazy = run(resource_list::read_owned(text.clone()).unwrap(), &RunContext::default());
            prop_assert_eq!(
                resource_list::write(lazy.list, Some(lazy.results.sorted().iter().map(KrmResult::to_value).collect())),
                resource_list::write(eager.list, Some(eager.results.sorted().iter().map(KrmResult::to_value).collect()))
            );
        }
    }
}

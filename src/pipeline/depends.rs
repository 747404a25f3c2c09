//! Dependencies between services at expansion (SPEC §6.5).
//!
//! A `ServiceSet` is a whole cluster: a service it enables needs each of its `dependsOn` enabled
//! in the same set ([`check_set`]). A single service object is one piece of a package: its
//! dependency must be enabled by some source of the package, or, when no source of the package
//! mentions it, by the catalog's defaults: the dependency's `spec.status` is `enabled` and its
//! `clusterTypes` include the object's cluster type, so the cluster's own `ServiceSet` (or
//! whoever deploys the catalog's defaults) brings it ([`Record::check_singles`]).
//!
//! With `applyOrder: kpt`, [`annotate`] writes `config.kubernetes.io/depends-on` on generated
//! objects, naming every object generated for the services their service depends on.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value};

use super::output::{CLUSTER_SCOPED, GENERATED_FROM, SERVICE_ANNOTATION};
use crate::catalog::{Catalog, Service};
use crate::diagnostics::FieldPath;
use crate::resource_list;
use crate::results::{KrmResult, Results};
use crate::service::definition::Status;

/// kpt's (cli-utils') dependency annotation.
pub(super) const DEPENDS_ON: &str = "config.kubernetes.io/depends-on";

/// The most bytes a `depends-on` value may hold: the apiserver refuses an object whose
/// annotations together exceed 256 KiB.
const MAX_DEPENDS_ON_BYTES: usize = 256 * 1024;

/// A single service object that rendered, kept until every source has been seen.
struct Single {
    item: Value,
    service: usize,
    cluster_type: Option<String>,
}

/// What the package's sources say about each service, gathered during expansion.
#[derive(Default)]
pub(super) struct Record {
    /// Service ID → identities of the sources that enable it.
    enabled: BTreeMap<String, Vec<String>>,
    /// Service ID → identities of the sources that leave it disabled.
    disabled: BTreeMap<String, Vec<String>>,
    singles: Vec<Single>,
    /// Identities of the `ServiceSet`s expanded: their objects depend on their own set's.
    sets: HashSet<String>,
}

impl Record {
    /// A `ServiceSet`'s effective statuses (every catalog service: those it leaves out count
    /// as disabled).
    pub(super) fn set(&mut self, item: &Value, statuses: &BTreeMap<String, Status>) {
        let source = resource_list::identity(item);
        for (id, status) in statuses {
            self.status(id, *status, &source);
        }
        self.sets.insert(source);
    }

    /// A single service object's status; an enabled one is checked by [`Self::check_singles`].
    pub(super) fn single(
        &mut self,
        item: &Value,
        service: usize,
        status: Status,
        cluster_type: Option<&str>,
        catalog: &Catalog,
    ) {
        let Some(def) = catalog.services().get(service).map(|s| &s.definition) else {
            return;
        };
        self.status(&def.id, status, &resource_list::identity(item));
        if status == Status::Enabled && !def.depends_on.is_empty() {
            self.singles.push(Single {
                item: item.clone(),
                service,
                cluster_type: cluster_type.map(str::to_owned),
            });
        }
    }

    fn status(&mut self, id: &str, status: Status, source: &str) {
        let map = match status {
            Status::Enabled => &mut self.enabled,
            Status::Disabled => &mut self.disabled,
        };
        map.entry(id.to_owned())
            .or_default()
            .push(source.to_owned());
    }

    /// Check the dependencies of every enabled single service object against the package and
    /// the catalog's defaults. Returns the identities of the objects that fail (their
    /// generated objects are dropped).
    pub(super) fn check_singles(
        &self,
        catalog: &Catalog,
        results: &mut Results,
    ) -> HashSet<String> {
        let mut failed = HashSet::new();
        for single in &self.singles {
            let Some(service) = catalog.services().get(single.service) else {
                continue;
            };
            let def = &service.definition;
            for dep_id in &def.depends_on {
                if self.enabled.contains_key(dep_id) {
                    continue;
                }
                let Some(dep) = catalog.service(dep_id).map(|s| &s.definition) else {
                    continue;
                };
                let t = single.cluster_type.as_deref();
                let reason = if let Some(sources) = self.disabled.get(dep_id) {
                    format!(
                        "which this package disables ({}); enable it there",
                        sources.join(", ")
                    )
                } else if dep.status == Status::Disabled {
                    format!(
                        "which no source of this package enables and which is disabled by default; add a {} object with `spec.status: enabled`",
                        dep.gvk.kind
                    )
                } else if !dep.applies_to(t) {
                    format!(
                        "which no source of this package enables and which its catalog does not deploy by default on cluster type \"{}\" (its clusterTypes: {}); add a {} object with `spec.status: enabled`",
                        t.unwrap_or_default(),
                        dep.cluster_types.join(", "),
                        dep.gvk.kind
                    )
                } else {
                    continue;
                };
                let mut result = KrmResult::error(format!(
                    "service \"{}\" depends on \"{dep_id}\" (its spec.dependsOn), {reason}, or disable \"{}\"",
                    def.id, def.id
                ))
                .about(&single.item);
                if single
                    .item
                    .get("spec")
                    .and_then(|s| s.get("status"))
                    .is_some()
                {
                    result = result.at("spec.status");
                }
                results.push(result);
                failed.insert(resource_list::identity(&single.item));
            }
        }
        failed
    }
}

/// In a `ServiceSet`, every enabled service's dependencies must be enabled in the same set.
/// `entries` are the set's `spec.services` (migrated), `statuses` the effective status of every
/// catalog service (those the cluster type leaves out are disabled). Returns whether it holds.
pub(super) fn check_set(
    item: &Value,
    catalog: &Catalog,
    entries: &Map<String, Value>,
    statuses: &BTreeMap<String, Status>,
    cluster_type: Option<&str>,
    results: &mut Results,
) -> bool {
    let listed = |id: &str| {
        entries
            .get(id)
            .and_then(|v| v.get("status"))
            .and_then(Value::as_str)
    };
    let mut ok = true;
    for service in catalog.services() {
        let def = &service.definition;
        if statuses.get(&def.id) != Some(&Status::Enabled) {
            continue;
        }
        for dep_id in &def.depends_on {
            if statuses.get(dep_id) == Some(&Status::Enabled) {
                continue;
            }
            let Some(dep) = catalog.service(dep_id).map(|s| &s.definition) else {
                continue;
            };
            let dep_status = FieldPath::parse("spec.services").key(dep_id).key("status");
            let reason = if !dep.applies_to(cluster_type) && listed(dep_id) != Some("disabled") {
                format!(
                    "which does not apply to cluster type \"{}\" (its clusterTypes: {}); set `{dep_status}: enabled` to include it anyway",
                    cluster_type.unwrap_or_default(),
                    dep.cluster_types.join(", ")
                )
            } else if listed(dep_id) == Some("disabled") {
                format!("which this ServiceSet disables (`{dep_status}`); enable it")
            } else {
                format!("which is disabled by default; set `{dep_status}: enabled`")
            };
            let entry = FieldPath::parse("spec.services").key(&def.id);
            let (at, how) = if listed(&def.id) == Some("enabled") {
                (entry.key("status"), "")
            } else {
                (entry.clone(), " (enabled by default)")
            };
            results.push(
                KrmResult::error(format!(
                    "service \"{}\"{how} depends on \"{dep_id}\" (its spec.dependsOn), {reason}, or disable \"{}\" (`{}: disabled`)",
                    def.id,
                    def.id,
                    entry.key("status")
                ))
                .about(item)
                .at(at.to_string()),
            );
            ok = false;
        }
    }
    ok
}

/// How cli-utils names an object in `depends-on`: `group/namespaces/ns/Kind/name`, or
/// `group/Kind/name` for an object without a namespace.
fn reference(object: &Value) -> String {
    let (group, _) = crate::gvk::split_api_version(resource_list::str_at(object, &["apiVersion"]));
    let kind = resource_list::str_at(object, &["kind"]);
    let name = resource_list::str_at(object, &["metadata", "name"]);
    match resource_list::str_at(object, &["metadata", "namespace"]) {
        "" => format!("{group}/{kind}/{name}"),
        ns => format!("{group}/namespaces/{ns}/{kind}/{name}"),
    }
}

/// `applyOrder: kpt`: every generated object of a service that depends on others gets
/// `config.kubernetes.io/depends-on` naming every object generated for those services: from the
/// same `ServiceSet` when it came from one, else from any source of the package. A value the
/// template wrote is kept, ours appended.
pub(super) fn annotate(
    batches: &mut [&mut Vec<Value>],
    catalog: &Catalog,
    record: &Record,
    results: &mut Results,
) {
    let service_of =
        |o: &Value| resource_list::annotation(o, SERVICE_ANNOTATION).map(str::to_owned);
    let source_of = |o: &Value| {
        resource_list::annotation(o, GENERATED_FROM)
            .unwrap_or_default()
            .to_owned()
    };
    let mut from_set: HashMap<(String, String), Vec<String>> = HashMap::new();
    let mut anywhere: HashMap<String, Vec<String>> = HashMap::new();
    let mut unscoped: BTreeSet<String> = BTreeSet::new();
    for object in batches.iter().flat_map(|b| b.iter()) {
        let Some(id) = service_of(object) else {
            continue;
        };
        let r = reference(object);
        let kind = resource_list::str_at(object, &["kind"]);
        if resource_list::str_at(object, &["metadata", "namespace"]).is_empty()
            && !CLUSTER_SCOPED.contains(&kind)
        {
            unscoped.insert(r.clone());
        }
        from_set
            .entry((source_of(object), id.clone()))
            .or_default()
            .push(r.clone());
        anywhere.entry(id).or_default().push(r);
    }
    let mut warned: BTreeSet<String> = BTreeSet::new();
    for object in batches.iter_mut().flat_map(|b| b.iter_mut()) {
        let Some(service) = service_of(object).and_then(|id| catalog.service(&id)) else {
            continue;
        };
        let source = source_of(object);
        let mut refs: Vec<String> = resource_list::annotation(object, DEPENDS_ON)
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        for dep in &service.definition.depends_on {
            let found = if record.sets.contains(&source) {
                from_set.get(&(source.clone(), dep.clone()))
            } else {
                anywhere.get(dep)
            };
            for r in found.into_iter().flatten() {
                if !refs.contains(r) {
                    refs.push(r.clone());
                }
            }
        }
        if refs.is_empty() {
            continue;
        }
        let value = refs.join(",");
        if value.len() > MAX_DEPENDS_ON_BYTES {
            results.push(too_long(service, object, value.len()));
            continue;
        }
        for r in refs.iter().filter(|r| unscoped.contains(*r)) {
            if warned.insert(r.clone()) {
                results.push(
                    KrmResult::warning(format!(
                        "{DEPENDS_ON} names {r} without a namespace, which kpt reads as a cluster-scoped object; set metadata.namespace in the template that generates it"
                    ))
                    .about(object)
                    .tag("service", service.definition.id.clone()),
                );
            }
        }
        resource_list::set_annotation(object, DEPENDS_ON, &value);
    }
}

fn too_long(service: &Service, object: &Value, len: usize) -> KrmResult {
    KrmResult::error(format!(
        "service \"{}\": the {DEPENDS_ON} annotation would be {len} bytes, more than the {MAX_DEPENDS_ON_BYTES} the apiserver accepts for all annotations; its dependencies generate too many objects for applyOrder: kpt (use applyOrder: none and the phases instead)",
        service.definition.id
    ))
    .about(object)
}

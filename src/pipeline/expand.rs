//! The expand stage: each `ServiceSet` and service object (and the function config when it is
//! one) becomes the objects its services render, in input order, checked by `output`.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value};

use super::admit::{Admission, admit_one};
use super::classify::{Role, config_role};
use super::depends::{self, Record};
use super::output::{Provenance, drop_duplicates, generated_path, invalid_names, stamp};
use crate::catalog::{Catalog, Service};
use crate::config::{self, ConfigKind, FunctionConfig, Settings};
use crate::diagnostics::{FieldPath, PathSegment};
use crate::patch;
use crate::render::{Renderer, Scope};
use crate::resource_list;
use crate::results::{Diagnostic, KrmResult, Results, Warning};
use crate::service::definition::{self, Status};
use crate::service::{Schemas, instance, legacy};
use crate::strict::{Problem, Reader};
use crate::suggest;

/// What expansion produced.
pub(super) struct Expansion {
    /// Per input item, the objects generated from it; empty when no item was expanded (a slot
    /// per item of a large pass-through input would cost memory for nothing).
    pub generated: Vec<Vec<Value>>,
    /// Generated from the function config when it is not among the items.
    pub trailing: Vec<Value>,
    /// Identities of the sources expanded.
    pub expanded_sources: HashSet<String>,
}

/// Expand the sources in input order, then the function config when it is a `ServiceSet` or
/// service object not among the items; warn about catalogs whose services rendered nothing;
/// keep one object per identity. `renderer` and `schemas` are the run's caches for its catalog.
pub(super) fn expand(
    admission: &Admission<'_>,
    renderer: &Renderer<'_>,
    schemas: &Schemas,
    fc: &FunctionConfig,
    config_ref: Option<&Value>,
    results: &mut Results,
) -> Expansion {
    let Admission {
        items, classified, ..
    } = *admission;
    let catalog = renderer.catalog();
    let config_identity = config_ref.map(resource_list::identity);
    let mut expander = Expander {
        catalog,
        renderer,
        schemas,
        settings: &fc.settings,
        results,
        paths: HashMap::new(),
        produced: BTreeMap::new(),
        templates: HashMap::new(),
        record: Record::default(),
    };
    let mut generated: Vec<Vec<Value>> = Vec::new();
    let mut expanded_sources: HashSet<String> = HashSet::new();
    for (i, (item, role)) in items.iter().zip(&classified.roles).enumerate() {
        if let Role::Expand(service) = role {
            let identity = resource_list::identity(item);
            let is_config = config_identity.as_deref() == Some(identity.as_str());
            if generated.is_empty() {
                generated.resize_with(items.len(), Vec::new);
            }
            // A service object its kind's version schema rejected renders nothing; one it
            // admitted renders as admitted (its defaults applied).
            if !admission.rejected(i) {
                generated[i] = match admission.changed(i) {
                    Some(admitted) => expander.expand(admitted, *service, is_config),
                    None => expander.expand(&item.value(), *service, is_config),
                };
            }
            expanded_sources.insert(identity);
        }
    }
    // The function config itself, when it is a ServiceSet or service object not among the items.
    let mut trailing = Vec::new();
    if let (Some(cfg), Some(identity)) = (config_ref, &config_identity)
        && matches!(fc.kind, ConfigKind::ServiceSet | ConfigKind::Other)
        && !classified.sources_present.contains(identity)
    {
        match config_role(cfg, catalog, fc) {
            Ok(service) => {
                if let Ok(admitted) = admit_one(cfg, catalog, &fc.settings, expander.results) {
                    trailing = expander.expand(admitted.as_ref().unwrap_or(cfg), service, true);
                }
                expanded_sources.insert(identity.clone());
            }
            Err(result) => expander.results.push(*result),
        }
    }

    let Expander {
        produced,
        templates,
        results,
        record,
        ..
    } = expander;
    // A single service object's dependencies are checked once every source has been seen.
    let failed = record.check_singles(catalog, results);
    if !failed.is_empty() {
        for (item, objects) in items.iter().zip(generated.iter_mut()) {
            if failed.contains(&resource_list::identity(item)) {
                objects.clear();
            }
        }
        if config_identity.as_ref().is_some_and(|c| failed.contains(c)) {
            trailing.clear();
        }
    }
    for (bundle, (ids, objects)) in produced {
        if objects == 0
            && let Some(info) = catalog.bundles.get(bundle)
        {
            let mut r = KrmResult::warning(nothing_rendered(info, &ids))
                .tag("catalog", info.origin.label());
            if let Some(cfg) = config_ref {
                r = r.about(cfg);
            }
            results.push(r);
        }
    }

    {
        let passing = items
            .iter()
            .zip(&classified.roles)
            .filter(|(_, r)| matches!(r, Role::PassThrough))
            .map(|(item, _)| item);
        let mut batches: Vec<(&dyn resource_list::Fields, &mut Vec<Value>)> = items
            .iter()
            .map(|item| item as &dyn resource_list::Fields)
            .zip(generated.iter_mut())
            // Only batches with objects in them can hold a duplicate.
            .filter(|(_, objects)| !objects.is_empty())
            .collect();
        if let Some(cfg) = config_ref {
            batches.push((cfg, &mut trailing));
        }
        drop_duplicates(passing, batches, &templates, results);
    }
    if fc.settings.apply_order == config::ApplyOrder::Kpt {
        let mut batches: Vec<&mut Vec<Value>> = generated.iter_mut().collect();
        batches.push(&mut trailing);
        depends::annotate(&mut batches, catalog, &record, results);
    }

    Expansion {
        generated,
        trailing,
        expanded_sources,
    }
}

/// A config value the catalog leaves to the user (required, no default) is reported with
/// where to set it: the full field path of each value still to choose under the missing one,
/// in the object the user writes (`base` is where the instance sits in it).
fn where_to_set(
    item: &Value,
    service: &Service,
    base: &FieldPath,
    problems: Vec<Problem>,
) -> Vec<Problem> {
    let Some(schema) = &service.definition.config_schema else {
        return problems;
    };
    let kind = resource_list::str_at(item, &["kind"]);
    let config = base.key("config");
    problems
        .into_iter()
        .map(|mut p| {
            if p.message != "Required value" {
                return p;
            }
            if !p.path.starts_with(&config) {
                return p;
            }
            // Only keys: list indexes are not property paths of the schema.
            let mut keys: Vec<String> = Vec::new();
            for segment in &p.path.segments()[config.segments().len()..] {
                match segment {
                    PathSegment::Key(k) => keys.push(k.clone()),
                    PathSegment::Index(_) | PathSegment::MapKey(_) => return p,
                }
            }
            let Some(sub) = definition::subschema(schema.raw(), &keys) else {
                return p;
            };
            let mut fields: Vec<FieldPath> = definition::must_choose(sub)
                .into_iter()
                .map(|inner| inner.iter().fold(p.path.clone(), |path, k| path.key(k)))
                .collect();
            if fields.is_empty() {
                fields.push(p.path.clone());
            }
            let fields: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
            p.message = format!(
                "Required value: service \"{}\" has no default for it; set {} in this {kind}",
                service.definition.id,
                fields.join(" and ")
            );
            p
        })
        .collect()
}

struct Expander<'a, 'c> {
    catalog: &'a Catalog,
    /// The run's template environments and instance schemas (built on first use, kept).
    renderer: &'a Renderer<'c>,
    schemas: &'a Schemas,
    settings: &'a Settings,
    results: &'a mut Results,
    /// Generated file paths already used, with the source that used them.
    paths: HashMap<String, String>,
    /// Per catalog (bundle index): the enabled services rendered and how many objects they made.
    produced: BTreeMap<usize, (Vec<String>, usize)>,
    /// The template of each generated object, by its file path and index (for messages).
    templates: HashMap<(String, String), String>,
    /// What each source says about each service, for `dependsOn` (SPEC §6.5).
    record: Record,
}

/// Why a catalog whose enabled services rendered produced nothing, and what to do.
fn nothing_rendered(info: &crate::catalog::BundleInfo, ids: &[String]) -> String {
    let mut ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    ids.sort_unstable();
    ids.dedup();
    let label = info.origin.label();
    let services = ids.join(", ");
    if info.pattern.is_none() {
        format!(
            "{label}: its enabled services ({services}) produced no objects: the catalog has no standard pattern (templates/) of its own and its charts/ hold nothing to render for them (a service renders the files under charts/<its chartPath>/: check each chartPath); to render them with the built-in catalog's pattern (an Argo CD Application and a Namespace per service) set standardPattern: builtin on its entry in spec.catalogs, or spec.standardPattern: builtin in its kubara Catalog document"
        )
    } else {
        format!(
            "{label}: its enabled services ({services}) produced no objects: every template rendered to empty documents; check the conditions in its templates"
        )
    }
}

/// Item-level settings of a source object.
struct ItemScope {
    cluster_type: Option<String>,
    /// Whether the cluster type is the item's own `spec.clusterType` (not the function config's).
    cluster_type_from_item: bool,
    cluster: Value,
}

impl Expander<'_, '_> {
    fn push_problems<D: Diagnostic>(
        &mut self,
        item: &Value,
        problems: impl IntoIterator<Item = D>,
    ) {
        for p in problems {
            self.results.push(KrmResult::of(&p, Some(item)));
        }
    }

    /// Read `spec.clusterType`/`spec.cluster` (item wins over the function config) and
    /// reject settings keys on items that are not the function config.
    fn item_scope(
        &mut self,
        spec: &Value,
        extra_allowed: &[&str],
        is_config: bool,
        item: &Value,
    ) -> (ItemScope, Map<String, Value>) {
        let mut problems = Vec::new();
        let mut r = Reader::new(spec, "spec", &mut problems);
        let cluster_type = r.string("clusterType").filter(|t| !t.trim().is_empty());
        let item_cluster = r.object("cluster").cloned().unwrap_or_default();
        let map = r.map().clone();
        drop(r);
        let mut rest = Map::new();
        for (key, value) in map {
            let k = key.as_str();
            if config::ITEM_SETTING_KEYS.contains(&k) {
                continue;
            }
            if config::SETTING_KEYS.contains(&k) {
                if !is_config {
                    problems.push(Problem::new(
                        FieldPath::parse("spec").key(k),
                        format!("{k} is only valid on the function config"),
                    ));
                }
                continue;
            }
            if !extra_allowed.is_empty() && !extra_allowed.contains(&k) {
                let mut candidates: Vec<&str> = extra_allowed.to_vec();
                candidates.extend(config::ITEM_SETTING_KEYS);
                let hint = suggest::hint(k, candidates);
                let path = FieldPath::parse("spec").key(k);
                let message = format!("unknown field \"{path}\"{hint}");
                problems.push(Problem::new(path, message));
                continue;
            }
            rest.insert(key, value);
        }
        self.push_problems(item, problems);
        let cluster_type_from_item = cluster_type.is_some();
        let cluster_type = cluster_type.or_else(|| self.settings.cluster_type.clone());
        let mut cluster = self.settings.cluster.clone();
        for (k, v) in item_cluster {
            cluster.insert(k, v);
        }
        if let Some(t) = &cluster_type {
            cluster
                .entry("type")
                .or_insert_with(|| Value::String(t.clone()));
        }
        (
            ItemScope {
                cluster_type,
                cluster_type_from_item,
                cluster: Value::Object(cluster),
            },
            rest,
        )
    }

    fn expand(&mut self, item: &Value, service: Option<usize>, is_config: bool) -> Vec<Value> {
        if !self.has_name(item) {
            return Vec::new();
        }
        match service {
            Some(index) => self.expand_object(item, index, is_config),
            None => self.expand_set(item, is_config),
        }
    }

    /// A source object must be named: the name identifies the instance (templates read
    /// `instance.name`), the objects generated from it and the file they are written to.
    fn has_name(&mut self, item: &Value) -> bool {
        let kind = resource_list::str_at(item, &["kind"]);
        let message = match item.get("metadata").and_then(|m| m.get("name")) {
            Some(Value::String(name)) if !name.trim().is_empty() => return true,
            None | Some(Value::Null) => format!(
                "missing metadata.name: a {kind} object needs a name (it names the instance, its generated objects and their file); set `metadata.name`"
            ),
            Some(Value::String(_)) => format!(
                "metadata.name is empty: a {kind} object needs a name (it names the instance, its generated objects and their file); set `metadata.name`"
            ),
            Some(other) => format!(
                "metadata.name must be a string, not {}",
                crate::strict::type_name(other)
            ),
        };
        self.results
            .push(KrmResult::error(message).about(item).at("metadata.name"));
        false
    }

    /// A cluster type must be one that a loaded catalog declares: a typo would otherwise
    /// silently select the services without `clusterTypes` only.
    fn known_cluster_type(&mut self, item: &Value, scope: &ItemScope) -> bool {
        let Some(t) = scope.cluster_type.as_deref() else {
            return true;
        };
        let mut declared: Vec<&str> = self
            .catalog
            .services()
            .iter()
            .flat_map(|s| s.definition.cluster_types.iter().map(String::as_str))
            .collect();
        declared.sort_unstable();
        declared.dedup();
        if declared.contains(&t) {
            return true;
        }
        let hint = suggest::hint(t, declared.iter().copied());
        let known = if declared.is_empty() {
            "no loaded catalog declares any cluster type (ServiceDefinition `spec.clusterTypes`); remove `clusterType`".to_owned()
        } else {
            format!(
                "the loaded catalogs declare: {}",
                declared
                    .iter()
                    .map(|d| format!("\"{d}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let result = if scope.cluster_type_from_item {
            KrmResult::error(format!("unknown cluster type \"{t}\"{hint}; {known}"))
                .about(item)
                .at("spec.clusterType")
        } else {
            // The function config set it; the result names the item it was applied to.
            KrmResult::error(format!(
                "unknown cluster type \"{t}\" (the function config's clusterType){hint}; {known}"
            ))
            .about(item)
        };
        self.results.push(result);
        false
    }

    /// The item's `spec` (null when absent); one that is not an object is an error.
    fn object_spec(&mut self, item: &Value) -> Option<Value> {
        let spec = item.get("spec").cloned().unwrap_or(Value::Null);
        if !spec.is_object() && !spec.is_null() {
            self.results.push(
                KrmResult::error(format!(
                    "must be an object, not {}",
                    crate::strict::type_name(&spec)
                ))
                .about(item)
                .at("spec"),
            );
            return None;
        }
        Some(spec)
    }

    fn expand_object(&mut self, item: &Value, index: usize, is_config: bool) -> Vec<Value> {
        let catalog = self.catalog;
        let service = &catalog.services()[index];
        let def = &service.definition;
        let Some(spec) = self.object_spec(item) else {
            return Vec::new();
        };
        let (scope, rest) = self.item_scope(&spec, &[], is_config, item);
        if !self.known_cluster_type(item, &scope) {
            return Vec::new();
        }
        let unknown = self.settings.unknown_fields;
        let raw = Value::Object(rest);
        let prepared =
            match instance::prepare(self.schemas, def, &raw, &FieldPath::parse("spec"), unknown) {
                Ok(p) => {
                    self.push_problems(item, p.warnings.iter().cloned().map(Warning));
                    p
                }
                Err(rejected) => {
                    self.push_problems(item, rejected.warnings.into_iter().map(Warning));
                    let problems =
                        where_to_set(item, service, &FieldPath::parse("spec"), rejected.errors);
                    self.push_problems(item, problems);
                    return Vec::new();
                }
            };
        let cluster_type = scope.cluster_type.as_deref();
        self.record
            .single(item, index, prepared.status, cluster_type, catalog);
        if prepared.status == Status::Disabled {
            // An object of a service that is disabled by default renders nothing unless it
            // enables it: said, since an object written for nothing is most likely a mistake.
            if raw.get("status").is_none_or(Value::is_null) {
                self.results.push(
                    KrmResult::warning(format!(
                        "service \"{}\" is disabled by default and this {} object does not enable it: nothing is rendered; set spec.status: enabled",
                        def.id, def.gvk.kind
                    ))
                    .about(item)
                    .at("spec.status"),
                );
            }
            return Vec::new();
        }
        // clusterTypes only decides what a ServiceSet includes by default (kubara ADR): an
        // object of the service is an explicit choice, so it renders, and says so.
        if let Some(t) = scope.cluster_type.as_deref()
            && !def.applies_to(Some(t))
        {
            let field = if scope.cluster_type_from_item {
                "spec.clusterType"
            } else {
                "kind"
            };
            self.results.push(
                KrmResult::warning(format!(
                    "service \"{}\" renders although its clusterTypes ({}) do not include cluster type \"{t}\": this {} object asks for it explicitly",
                    def.id,
                    def.cluster_types.join(", "),
                    def.gvk.kind
                ))
                .about(item)
                .at(field),
            );
        }
        let namespace = item
            .get("metadata")
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let statuses = BTreeMap::new();
        let render_scope = Scope {
            source: item,
            instance_namespace: namespace,
            cluster: &scope.cluster,
            statuses: &statuses,
        };
        self.render_service(item, service, &prepared, &render_scope, "spec")
    }

    fn expand_set(&mut self, item: &Value, is_config: bool) -> Vec<Value> {
        let catalog = self.catalog;
        let Some(spec) = self.object_spec(item) else {
            return Vec::new();
        };
        let (scope, rest) = self.item_scope(&spec, &["services"], is_config, item);
        let mut services = match rest.get("services") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(other) => {
                self.results.push(
                    KrmResult::error(format!(
                        "must be a map of service ID to service, not {}",
                        crate::strict::type_name(other)
                    ))
                    .about(item)
                    .at("spec.services"),
                );
                return Vec::new();
            }
        };
        let ids: Vec<&str> = catalog
            .services()
            .iter()
            .map(|s| s.definition.id.as_str())
            .collect();
        let migration = legacy::migrate(&mut services, &FieldPath::parse("spec.services"), &ids);
        self.push_problems(item, migration.notes.into_iter().map(Warning));
        if !migration.errors.is_empty() {
            self.push_problems(item, migration.errors);
            return Vec::new();
        }
        if !self.known_cluster_type(item, &scope) {
            return Vec::new();
        }
        let cluster_type = scope.cluster_type.as_deref();
        // clusterTypes is the ADR's default-inclusion filter: a service for other cluster types
        // is materialised only when the set lists it with `status: enabled`.
        let listed_enabled = |id: &str| {
            services
                .get(id)
                .and_then(|v| v.get("status"))
                .and_then(Value::as_str)
                == Some("enabled")
        };
        let included =
            |s: &Service| s.definition.applies_to(cluster_type) || listed_enabled(&s.definition.id);
        let mut failed = false;
        let mut outside = Vec::new();
        for key in services.keys() {
            match catalog.service(key) {
                None => {
                    let hint = suggest::hint(key, ids.iter().copied());
                    self.results.push(
                        KrmResult::error(format!("unknown service \"{key}\"{hint}"))
                            .about(item)
                            .at(FieldPath::parse("spec.services").key(key).to_string()),
                    );
                    failed = true;
                }
                Some(s) if !s.definition.applies_to(cluster_type) => outside.push(s),
                Some(_) => {}
            }
        }
        let mut prepared = Vec::new();
        let mut statuses = BTreeMap::new();
        for s in outside {
            let id = &s.definition.id;
            let t = cluster_type.unwrap_or_default();
            let types = s.definition.cluster_types.join(", ");
            let explicit = services
                .get(id)
                .and_then(|v| v.get("status"))
                .and_then(Value::as_str);
            let message = match explicit {
                Some("enabled") => format!(
                    "service \"{id}\" renders although its clusterTypes ({types}) do not include cluster type \"{t}\": it is listed with `status: enabled`"
                ),
                // Listed but disabled: nothing would render anyway, nothing to say.
                Some("disabled") => continue,
                _ => format!(
                    "service \"{id}\" is left out: its clusterTypes ({types}) do not include cluster type \"{t}\"; set `status: enabled` to include it anyway"
                ),
            };
            self.results.push(
                KrmResult::warning(message)
                    .about(item)
                    .at(FieldPath::parse("spec.services").key(id).to_string()),
            );
        }
        for service in catalog.services() {
            if !included(service) {
                // Templates see the services this set leaves out as disabled.
                statuses.insert(service.definition.id.clone(), Status::Disabled);
                continue;
            }
            let id = &service.definition.id;
            let raw = services
                .get(id)
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            let unknown = self.settings.unknown_fields;
            let field = FieldPath::parse("spec.services").key(id);
            match instance::prepare(self.schemas, &service.definition, &raw, &field, unknown) {
                Ok(p) => {
                    self.push_problems(item, p.warnings.iter().cloned().map(Warning));
                    statuses.insert(id.clone(), p.status);
                    prepared.push((service, p));
                }
                Err(rejected) => {
                    self.push_problems(item, rejected.warnings.into_iter().map(Warning));
                    let problems = where_to_set(item, service, &field, rejected.errors);
                    self.push_problems(item, problems);
                    failed = true;
                }
            }
        }
        if failed {
            return Vec::new();
        }
        self.record.set(item, &statuses);
        if !depends::check_set(
            item,
            catalog,
            &services,
            &statuses,
            cluster_type,
            self.results,
        ) {
            return Vec::new();
        }
        let render_scope = Scope {
            source: item,
            instance_namespace: None,
            cluster: &scope.cluster,
            statuses: &statuses,
        };
        let mut out = Vec::new();
        for (service, p) in prepared {
            if p.status == Status::Enabled {
                let field = FieldPath::parse("spec.services")
                    .key(&service.definition.id)
                    .to_string();
                out.extend(self.render_service(item, service, &p, &render_scope, &field));
            }
        }
        out
    }

    fn render_service(
        &mut self,
        item: &Value,
        service: &Service,
        prepared: &instance::Instance,
        scope: &Scope<'_>,
        field: &str,
    ) -> Vec<Value> {
        let generated = match self.renderer.render_instance(service, prepared, scope) {
            Ok(g) => g,
            Err(errors) => {
                for e in errors {
                    self.results.push(KrmResult::of(&e, Some(item)).at(field));
                }
                return Vec::new();
            }
        };
        let source_identity = resource_list::identity(item);
        let path = match generated_path(item, &service.definition.id) {
            Ok(path) => path,
            Err(e) => {
                self.results.push(KrmResult::of(&e, Some(item)));
                return Vec::new();
            }
        };
        if let Some(other) = self.paths.get(&path)
            && *other != source_identity
        {
            self.results.push(
                    KrmResult::error(format!(
                        "generated file {path} is also generated from {other}; give the sources distinct names or put them in different directories"
                    ))
                    .about(item)
                    .at(field),
                );
            return Vec::new();
        }
        self.paths.insert(path.clone(), source_identity.clone());
        let counted = self.produced.entry(service.bundle).or_default();
        counted.0.push(service.definition.id.clone());
        counted.1 += generated.len();
        let catalog_ref = self.catalog.bundle_of(service).reference.clone();
        let provenance = Provenance {
            instance_namespace: scope.instance_namespace,
            service_id: &service.definition.id,
            catalog: &catalog_ref,
            source: &source_identity,
            path: &path,
        };
        let mut objects: Vec<(Value, String)> = generated
            .into_iter()
            .enumerate()
            .map(|(i, g)| {
                let mut object = g.object;
                stamp(&mut object, &provenance, i);
                (object, g.template)
            })
            .collect();
        // Patches see the stamped objects (namespace, labels) and may change or drop them;
        // stamping again restores provenance and numbers the objects left.
        if !self.patch(item, service, prepared, field, &mut objects) {
            return Vec::new();
        }
        for (i, (object, _)) in objects.iter_mut().enumerate() {
            stamp(object, &provenance, i);
        }
        let mut valid = true;
        for (object, template) in &objects {
            for message in invalid_names(object, template, item) {
                self.results.push(
                    KrmResult::error(message)
                        .about(item)
                        .at(field)
                        .tag("template", template.clone()),
                );
                valid = false;
            }
        }
        if !valid {
            return Vec::new();
        }
        objects
            .into_iter()
            .enumerate()
            .map(|(i, (object, template))| {
                self.templates
                    .insert((path.clone(), i.to_string()), template);
                object
            })
            .collect()
    }

    /// The catalog's patches of the service, then the user's (`<field>.patches`), on its
    /// generated objects (SPEC §6.6); false, with the errors reported, when one does not apply.
    fn patch(
        &mut self,
        item: &Value,
        service: &Service,
        prepared: &instance::Instance,
        field: &str,
        objects: &mut Vec<(Value, String)>,
    ) -> bool {
        let def = &service.definition;
        let base = FieldPath::parse(field).key("patches");
        let user = match prepared.value.get("patches") {
            None => Vec::new(),
            Some(value) => match patch::parse_list(value, &base) {
                Ok(p) => p,
                Err(problems) => {
                    self.push_problems(item, problems);
                    return false;
                }
            },
        };
        if let Err(e) = patch::apply_to(&def.patches, objects, value, value_mut, &def.id) {
            self.results.push(
                KrmResult::error(format!(
                    "the catalog's patch {} of ServiceDefinition \"{}\" does not apply: {e}; the catalog must be fixed",
                    e.at(),
                    def.id
                ))
                .about(item)
                .at(field),
            );
            return false;
        }
        if let Err(e) = patch::apply_to(&user, objects, value, value_mut, &def.id) {
            self.results.push(
                KrmResult::error(e.to_string())
                    .about(item)
                    .at(e.at().to_string()),
            );
            return false;
        }
        true
    }
}

/// The object of a generated `(object, template)` pair (what patches change).
fn value(o: &(Value, String)) -> &Value {
    &o.0
}

fn value_mut(o: &mut (Value, String)) -> &mut Value {
    &mut o.0
}

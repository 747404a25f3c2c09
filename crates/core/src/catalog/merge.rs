//! The merged catalog a run resolves through.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::bundle::{Bundle, FunctionEntry, Origin, StaticFile};
use super::kep::Runtime;
use super::{CatalogError, is_partial};
use crate::gvk::Gvk;
use crate::schema::ConfigSchema;
use crate::service::definition::{SERVICES_GROUP, ServiceDefinition};
use std::sync::Arc;

/// Summary of one merged bundle.
#[derive(Debug, Clone)]
pub struct BundleInfo {
    /// Where it came from.
    pub origin: Origin,
    /// kubara `Catalog` name, if any.
    pub name: Option<String>,
    /// kubara `Catalog` version, if any.
    pub version: Option<String>,
    /// Content digest (hex sha256).
    pub digest: String,
    /// `name@version` or `sha256:<digest>`: what generated objects record.
    pub reference: String,
    /// Publishers named by its KEP entries, sorted.
    pub publishers: Vec<String>,
    /// What pins a remote catalog's fetched bytes.
    pub pin: Option<crate::catalog_ref::Digest>,
    /// Index of the bundle whose standard pattern (`templates/**`) renders this bundle's
    /// services: itself when it has one, the bundle its `standardPattern` names, else none.
    pub pattern: Option<usize>,
}

/// A service of the merged catalog.
#[derive(Debug)]
pub struct Service {
    /// Its definition.
    pub definition: ServiceDefinition,
    /// Index of the bundle it came from in [`Catalog::bundles`].
    pub bundle: usize,
    /// File it was read from.
    pub file: Option<String>,
    /// Input item it was read from (inline catalogs).
    pub item: Option<usize>,
    /// Its dependency depth (`spec.dependsOn`; 0 for none): its apply phase (SPEC §6.5).
    pub phase: usize,
}

/// What a group/version/kind resolves to.
#[derive(Debug, Clone)]
pub enum Kind {
    /// A service (index into [`Catalog::services`]); KEP `service` runtimes may add a schema
    /// for the whole object of that version.
    Service {
        /// The service.
        index: usize,
        /// Schema of the whole object (KEP `versions[].schema`), if any.
        schema: Option<Arc<ConfigSchema>>,
    },
    /// A function-backed kind: a container or exec runtime.
    Function {
        /// How it runs.
        runtime: Runtime,
        /// Schema of the whole object, if any.
        schema: Option<Arc<ConfigSchema>>,
        /// Index of its bundle.
        bundle: usize,
    },
}

/// One template or static manifest of the merged catalog.
#[derive(Debug, Clone)]
pub enum TemplateRef<'a> {
    /// A template to render, by name.
    Template(&'a str),
    /// A static manifest file, by name.
    Static(&'a str, &'a StaticFile),
}

/// The merged catalog: every service, template and manifest of every source, conflicts resolved.
#[derive(Debug, Default)]
pub struct Catalog {
    /// The bundles in resolution order.
    pub bundles: Vec<BundleInfo>,
    services: Vec<Service>,
    by_id: HashMap<String, usize>,
    kinds: HashMap<Gvk, Kind>,
    groups: BTreeMap<String, BTreeSet<(String, String)>>,
    /// Each bundle's standard pattern (`templates/**`), by bundle index: it renders for the
    /// services of that bundle and of bundles that borrow it, never for anyone else's.
    patterns: Vec<BTreeMap<String, String>>,
    /// Chart templates (`charts/<chartPath>/**`) by name: equal names in two catalogs are a
    /// conflict unless catalogOverwrite lets the later one replace the file.
    templates: BTreeMap<String, (String, usize)>,
    statics: BTreeMap<String, (StaticFile, usize)>,
    /// The bundles whose tree holds each chart file (the first and those that replaced it):
    /// a service sees only its own catalog's chart files, so a borrowed pattern includes the
    /// borrower's `_values.yaml.j2`, never a same-named chart's of the lender.
    holders: BTreeMap<String, BTreeSet<usize>>,
    /// The warning of each deprecated function or service version (KEP `deprecated`).
    deprecations: HashMap<Gvk, String>,
}

/// Where one bundle's chart files (templates and static manifests) go in the merged catalog.
struct ChartFiles<'a> {
    holders: &'a mut BTreeMap<String, BTreeSet<usize>>,
    bundles: &'a [BundleInfo],
    /// The bundle's label and index.
    label: &'a str,
    index: usize,
    overwrite: bool,
}

impl ChartFiles<'_> {
    /// Add the file `name` (a `noun`: template or manifest) to `files`; a file of the same name
    /// from an earlier bundle is a conflict unless `catalogOverwrite` lets this one replace it.
    fn add<T>(
        &mut self,
        files: &mut BTreeMap<String, (T, usize)>,
        noun: &str,
        name: String,
        file: T,
    ) -> Option<CatalogError> {
        if let Some((_, prev)) = files.get(&name)
            && !self.overwrite
        {
            let prev_label = self.bundles[*prev].origin.label();
            return Some(
                CatalogError::new(
                    self.label,
                    format!(
                        "{noun} \"{name}\" already exists in {prev_label}; set catalogOverwrite: true to replace it"
                    ),
                )
                .in_file(name),
            );
        }
        self.holders
            .entry(name.clone())
            .or_default()
            .insert(self.index);
        files.insert(name, (file, self.index));
        None
    }
}

impl Catalog {
    /// Merge bundles in resolution order. Later bundles may replace earlier entries only when
    /// `overwrite` is set; otherwise every collision is an error.
    pub fn merge(bundles: Vec<Bundle>, overwrite: bool) -> (Catalog, Vec<CatalogError>) {
        let mut catalog = Catalog::default();
        let mut errors = Vec::new();
        let mut services: BTreeMap<String, Service> = BTreeMap::new();
        let mut pending: Vec<(usize, FunctionEntry, Vec<String>)> = Vec::new();
        let mut requests: Vec<Option<String>> = Vec::new();
        for (index, bundle) in bundles.into_iter().enumerate() {
            requests.push(bundle.standard_pattern.clone());
            let own_ids: Vec<String> = bundle
                .definitions
                .iter()
                .map(|d| d.definition.id.clone())
                .collect();
            let label = bundle.origin.label();
            let reference = bundle.reference();
            let mut publishers: Vec<String> = bundle
                .functions
                .iter()
                .filter_map(|f| f.function.publisher.clone())
                .collect();
            publishers.sort();
            publishers.dedup();
            pending.extend(
                bundle
                    .functions
                    .into_iter()
                    .map(|f| (index, f, own_ids.clone())),
            );
            errors.extend(bundle.problems.iter().cloned());
            for entry in bundle.definitions {
                let id = entry.definition.id.clone();
                if let Some(prev) = services.get(&id)
                    && !overwrite
                {
                    let prev_label = catalog.bundles[prev.bundle].origin.label();
                    let mut e = CatalogError::new(
                            &label,
                            format!(
                                "service definition \"{id}\" already exists in {prev_label}; set catalogOverwrite: true \
                                 to replace it"
                            ),
                        )
                        .at("metadata.name")
                        .for_item(entry.item);
                    e.file.clone_from(&entry.file);
                    errors.push(e);
                    continue;
                }
                services.insert(
                    id,
                    Service {
                        definition: entry.definition,
                        bundle: index,
                        file: entry.file,
                        item: entry.item,
                        phase: 0,
                    },
                );
            }
            let mut chart = ChartFiles {
                holders: &mut catalog.holders,
                bundles: &catalog.bundles,
                label: &label,
                index,
                overwrite,
            };
            let mut pattern = BTreeMap::new();
            for (name, text) in bundle.templates {
                if name.starts_with("templates/") {
                    // kubara's overlay: with catalogOverwrite a later catalog's file replaces
                    // an earlier catalog's file of the same path. Without it, equal names in
                    // two patterns are no conflict: each renders only for its own services.
                    if overwrite {
                        for earlier in &mut catalog.patterns {
                            if let Some(t) = earlier.get_mut(&name) {
                                t.clone_from(&text);
                            }
                        }
                    }
                    pattern.insert(name, text);
                    continue;
                }
                errors.extend(chart.add(&mut catalog.templates, "template", name, text));
            }
            catalog.patterns.push(pattern);
            for (name, file) in bundle.statics {
                errors.extend(chart.add(&mut catalog.statics, "manifest", name, file));
            }
            catalog.bundles.push(BundleInfo {
                origin: bundle.origin,
                name: bundle.name,
                version: bundle.version,
                digest: bundle.digest,
                reference,
                publishers,
                pin: bundle.pin,
                pattern: None,
            });
        }
        catalog.resolve_patterns(&requests, &mut errors);
        catalog
            .groups
            .entry(SERVICES_GROUP.to_owned())
            .or_default()
            .insert(("v1alpha1".to_owned(), "ServiceSet".to_owned()));
        for service in services.into_values() {
            let gvk = service.definition.gvk.clone();
            let reserved = gvk.group == SERVICES_GROUP && gvk.kind == "ServiceSet";
            if reserved || catalog.kinds.contains_key(&gvk) {
                let other = if reserved {
                    "the ServiceSet kind".to_owned()
                } else {
                    catalog.describe_kind(&gvk)
                };
                let label = catalog.bundles[service.bundle].origin.label();
                let mut e = CatalogError::new(
                    &label,
                    format!(
                        "service \"{}\" is exposed as {gvk}, which is already taken by {other}; set spec.names.kind",
                        service.definition.id
                    ),
                )
                .at("spec.names.kind")
                .for_item(service.item);
                e.file.clone_from(&service.file);
                errors.push(e);
                continue;
            }
            let index = catalog.services.len();
            catalog.claim(&gvk);
            catalog.kinds.insert(
                gvk,
                Kind::Service {
                    index,
                    schema: None,
                },
            );
            catalog.by_id.insert(service.definition.id.clone(), index);
            catalog.services.push(service);
        }
        catalog.resolve_dependencies(&mut errors);
        // KEP entries, in resolution order: a later catalog may replace a kind only with
        // catalogOverwrite.
        let mut kind_origin: HashMap<Gvk, usize> = HashMap::new();
        for (bundle, entry, own_ids) in pending {
            let label = catalog.bundles[bundle].origin.label();
            let located = |e: CatalogError| {
                let mut e = e.for_item(entry.item);
                e.file.clone_from(&entry.file);
                e
            };
            for (vi, version) in entry.function.versions.iter().enumerate() {
                let gvk = entry.function.gvk(version);
                let path = entry.function.path.key("versions").index(vi);
                if let Some(prev) = kind_origin
                    .get(&gvk)
                    .copied()
                    .or_else(|| catalog.kinds.contains_key(&gvk).then_some(usize::MAX))
                {
                    let replaceable = overwrite && prev != bundle && prev != usize::MAX;
                    if !replaceable {
                        let other = catalog.describe_kind(&gvk);
                        errors.push(located(
                            CatalogError::new(&label, format!("kind {gvk} is already defined by {other}; set catalogOverwrite: true to replace it"))
                                .at(path.clone()),
                        ));
                        continue;
                    }
                }
                let schema = version.schema.clone().map(Arc::new);
                let kind = match &version.runtime {
                    Runtime::Service { name } => {
                        let found = own_ids
                            .iter()
                            .any(|id| id == name)
                            .then(|| catalog.by_id.get(name).copied())
                            .flatten();
                        match found {
                            Some(index) => Kind::Service { index, schema },
                            None => {
                                errors.push(located(
                                    CatalogError::new(
                                        &label,
                                        format!("runtime service \"{name}\" is not a ServiceDefinition of this catalog"),
                                    )
                                    .at(path.key("runtime").key("service").key("name")),
                                ));
                                continue;
                            }
                        }
                    }
                    runtime => Kind::Function {
                        runtime: runtime.clone(),
                        schema,
                        bundle,
                    },
                };
                catalog.claim(&gvk);
                if let Some(warning) = &version.deprecation {
                    // The apiserver's text for a deprecated CRD version without a warning.
                    let text = warning.clone().unwrap_or_else(|| {
                        format!("{}/{} {} is deprecated", gvk.group, gvk.version, gvk.kind)
                    });
                    catalog.deprecations.insert(gvk.clone(), text);
                }
                kind_origin.insert(gvk.clone(), bundle);
                catalog.kinds.insert(gvk, kind);
            }
        }
        (catalog, errors)
    }

    /// The warning of a deprecated kind version (KEP `versions[].deprecated`), if it is one.
    pub fn deprecation(&self, gvk: &Gvk) -> Option<&str> {
        self.deprecations.get(gvk).map(String::as_str)
    }

    /// Set each service's phase from `spec.dependsOn`; unknown IDs and cycles are errors of
    /// the service that names them (`depends`).
    fn resolve_dependencies(&mut self, errors: &mut Vec<CatalogError>) {
        let definitions: Vec<&ServiceDefinition> =
            self.services.iter().map(|s| &s.definition).collect();
        let (phases, findings) = super::depends::resolve(&definitions);
        for (i, path, message) in findings {
            let s = &self.services[i];
            let mut e = CatalogError::new(&self.bundles[s.bundle].origin.label(), message)
                .at(path)
                .for_item(s.item);
            e.file.clone_from(&s.file);
            errors.push(e);
        }
        for (service, phase) in self.services.iter_mut().zip(phases) {
            service.phase = phase;
        }
    }

    /// Every service, sorted by ID.
    pub fn services(&self) -> &[Service] {
        &self.services
    }

    /// A service by ID.
    pub fn service(&self, id: &str) -> Option<&Service> {
        self.by_id.get(id).map(|i| &self.services[*i])
    }

    /// The service exposed under a group/version/kind.
    pub fn service_for(&self, gvk: &Gvk) -> Option<&Service> {
        match self.kinds.get(gvk)? {
            Kind::Service { index, .. } => self.services.get(*index),
            Kind::Function { .. } => None,
        }
    }

    /// Every kind, sorted by group/version/kind.
    pub fn kinds(&self) -> Vec<(&Gvk, &Kind)> {
        let mut kinds: Vec<(&Gvk, &Kind)> = self.kinds.iter().collect();
        kinds.sort_by(|a, b| a.0.cmp(b.0));
        kinds
    }

    /// What a group/version/kind resolves to.
    pub fn kind_for(&self, gvk: &Gvk) -> Option<&Kind> {
        self.kinds.get(gvk)
    }

    fn claim(&mut self, gvk: &Gvk) {
        self.groups
            .entry(gvk.group.clone())
            .or_default()
            .insert((gvk.version.clone(), gvk.kind.clone()));
    }

    fn describe_kind(&self, gvk: &Gvk) -> String {
        match self.kinds.get(gvk) {
            Some(Kind::Service { index, .. }) => {
                format!("service \"{}\"", self.services[*index].definition.id)
            }
            Some(Kind::Function { bundle, .. }) => {
                format!("a function of {}", self.bundles[*bundle].origin.label())
            }
            None => "nothing".to_owned(),
        }
    }

    /// Whether some catalog entry uses this group (unknown kinds in it are errors).
    pub fn claims_group(&self, group: &str) -> bool {
        self.groups.contains_key(group)
    }

    /// The groups the catalogs claim, sorted.
    pub fn claimed_groups(&self) -> impl Iterator<Item = &str> {
        self.groups.keys().map(String::as_str)
    }

    /// Every `(group, version)` that defines `kind`, sorted.
    pub fn groups_defining(&self, kind: &str) -> Vec<(&str, &str)> {
        self.groups
            .iter()
            .flat_map(|(g, set)| {
                set.iter()
                    .filter(move |(_, k)| k == kind)
                    .map(move |(v, _)| (g.as_str(), v.as_str()))
            })
            .collect()
    }

    /// The kinds a claimed group knows, as `version/Kind`, sorted.
    pub fn known_kinds(&self, group: &str) -> Vec<String> {
        self.groups
            .get(group)
            .map(|set| set.iter().map(|(v, k)| format!("{v}/{k}")).collect())
            .unwrap_or_default()
    }

    /// The bundle a service came from.
    pub fn bundle_of(&self, service: &Service) -> &BundleInfo {
        &self.bundles[service.bundle]
    }

    /// Decide whose standard pattern renders each bundle's services: its own `templates/`,
    /// else the catalog its `standardPattern` names (`builtin` or a catalog name), else none.
    fn resolve_patterns(&mut self, requests: &[Option<String>], errors: &mut Vec<CatalogError>) {
        for (index, request) in requests.iter().enumerate() {
            let own = !self.patterns[index].is_empty();
            let label = self.bundles[index].origin.label();
            let pattern = match request.as_deref().map(str::trim) {
                None => own.then_some(index),
                Some(wanted) if own => {
                    errors.push(CatalogError::new(
                        &label,
                        format!(
                            "standardPattern \"{wanted}\" is set, but this catalog has a standard pattern (templates/) of its own; remove one of them"
                        ),
                    ));
                    Some(index)
                }
                Some(wanted) => self.borrowed_pattern(index, wanted, &label, errors),
            };
            self.bundles[index].pattern = pattern;
        }
    }

    fn borrowed_pattern(
        &self,
        index: usize,
        wanted: &str,
        label: &str,
        errors: &mut Vec<CatalogError>,
    ) -> Option<usize> {
        let is_builtin = wanted == "builtin";
        let found = self.bundles.iter().enumerate().find(|(i, b)| {
            *i != index
                && if is_builtin {
                    b.origin == Origin::Builtin
                } else {
                    b.name.as_deref() == Some(wanted)
                }
        });
        let Some((lender, info)) = found else {
            let mut names: Vec<&str> = self
                .bundles
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != index)
                .filter_map(|(_, b)| match b.origin {
                    Origin::Builtin => Some("builtin"),
                    _ => b.name.as_deref(),
                })
                .collect();
            names.sort_unstable();
            names.dedup();
            let message = if is_builtin {
                "standardPattern \"builtin\" names the built-in catalog, which is not loaded (builtin: false); load it or name another catalog".to_owned()
            } else {
                let hint = crate::suggest::hint(wanted, names.iter().copied());
                format!(
                    "standardPattern \"{wanted}\" names no loaded catalog{hint}; expected \"builtin\" or the metadata.name of another loaded catalog ({})",
                    if names.is_empty() {
                        "none is loaded".to_owned()
                    } else {
                        names.join(", ")
                    }
                )
            };
            errors.push(CatalogError::new(label, message));
            return None;
        };
        if self.patterns[lender].is_empty() {
            errors.push(CatalogError::new(
                label,
                format!(
                    "standardPattern \"{wanted}\": {} has no standard pattern (templates/) to lend",
                    info.origin.label()
                ),
            ));
            return None;
        }
        Some(lender)
    }

    /// Every template, by name, with its text: every standard pattern, then the charts.
    pub fn templates(&self) -> impl Iterator<Item = (&str, &str)> {
        self.patterns
            .iter()
            .flat_map(|p| p.iter().map(|(n, t)| (n.as_str(), t.as_str())))
            .chain(
                self.templates
                    .iter()
                    .map(|(n, (t, _))| (n.as_str(), t.as_str())),
            )
    }

    /// How many templates bundle `index` brings itself: its own standard pattern and the
    /// chart templates it defined (not a pattern it borrows).
    pub fn own_template_count(&self, index: usize) -> usize {
        self.patterns.get(index).map_or(0, BTreeMap::len)
            + self.templates.values().filter(|(_, b)| *b == index).count()
    }

    /// The templates a bundle's services render with: its standard pattern (own or borrowed)
    /// and the chart templates of its own tree.
    pub(crate) fn environment_templates(
        &self,
        bundle: usize,
    ) -> impl Iterator<Item = (&str, &str)> {
        self.bundles
            .get(bundle)
            .and_then(|b| b.pattern)
            .and_then(|p| self.patterns.get(p))
            .into_iter()
            .flat_map(|p| p.iter().map(|(n, t)| (n.as_str(), t.as_str())))
            .chain(
                self.templates
                    .iter()
                    .filter(move |(n, _)| self.holds(bundle, n))
                    .map(|(n, (t, _))| (n.as_str(), t.as_str())),
            )
    }

    /// Whether a chart file is in a bundle's tree (its own, or replacing its own).
    fn holds(&self, bundle: usize, name: &str) -> bool {
        self.holders.get(name).is_some_and(|h| h.contains(&bundle))
    }

    /// Whose standard pattern renders a service (see [`BundleInfo::pattern`]).
    pub fn pattern_of(&self, service: &Service) -> Option<usize> {
        self.bundles.get(service.bundle).and_then(|b| b.pattern)
    }

    /// What renders for a service, in path order: the standard pattern of its catalog (its
    /// own or the borrowed one) and the service's `charts/<chartPath>/**`, partials excluded.
    pub fn outputs_for(&self, service: &Service) -> Vec<TemplateRef<'_>> {
        let chart_prefix = format!("charts/{}/", service.definition.chart_path);
        let mut out: Vec<(&str, TemplateRef<'_>)> = Vec::new();
        if let Some(pattern) = self.pattern_of(service).and_then(|p| self.patterns.get(p)) {
            for name in pattern.keys().filter(|n| !is_partial(n)) {
                out.push((name, TemplateRef::Template(name)));
            }
        }
        for name in self.templates.keys() {
            if name.starts_with(&chart_prefix)
                && !is_partial(name)
                && self.holds(service.bundle, name)
            {
                out.push((name, TemplateRef::Template(name)));
            }
        }
        for (name, (file, _)) in &self.statics {
            if name.starts_with(&chart_prefix) && self.holds(service.bundle, name) {
                out.push((name, TemplateRef::Static(name, file)));
            }
        }
        out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        out.into_iter().map(|(_, t)| t).collect()
    }

    /// The bundles' references joined, for `version` and logs.
    pub fn describe(&self) -> String {
        self.bundles
            .iter()
            .map(|b| format!("{} ({})", b.reference, b.origin.label()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVC: &str = "apiVersion: kubara.io/v1alpha1\nkind: ServiceDefinition\nmetadata:\n  name: NAME\nspec:\n  chartPath: NAME\n  status: enabled\n";

    fn bundle(label: &str, name: Option<&str>, files: &[(&str, &str)]) -> Bundle {
        let mut files: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|(p, t)| ((*p).to_owned(), t.as_bytes().to_vec()))
            .collect();
        if let Some(n) = name {
            files.push((
                "Catalog.yaml".into(),
                format!("apiVersion: kubara.io/v1alpha1\nkind: Catalog\nmetadata:\n  name: {n}\nspec:\n  version: 1.0.0\n").into_bytes(),
            ));
        }
        let borrowed: Vec<(String, &[u8])> = files
            .iter()
            .map(|(p, b)| (p.clone(), b.as_slice()))
            .collect();
        let b = Bundle::from_files(Origin::Path(label.into()), &borrowed);
        assert!(b.problems.is_empty(), "{:?}", b.problems);
        b
    }

    fn outputs(catalog: &Catalog, id: &str) -> Vec<String> {
        let service = catalog.service(id).expect("service");
        catalog
            .outputs_for(service)
            .into_iter()
            .map(|t| match t {
                TemplateRef::Template(n) | TemplateRef::Static(n, _) => n.to_owned(),
            })
            .collect()
    }

    /// Issue 8 point 4: a catalog's templates/ render for its own services, never for another
    /// catalog's; equal names in two patterns are no conflict.
    #[test]
    fn issue8_p4_standard_pattern_applies_to_its_own_catalog_only() {
        let a = bundle(
            "a",
            Some("a"),
            &[
                ("services/x.yaml", &SVC.replace("NAME", "x")),
                ("templates/app.yaml.j2", "a"),
            ],
        );
        let b = bundle(
            "b",
            Some("b"),
            &[
                ("services/y.yaml", &SVC.replace("NAME", "y")),
                ("templates/app.yaml.j2", "b"),
                ("charts/y/extra.yaml.j2", "e"),
            ],
        );
        let c = bundle("c", None, &[("services/z.yaml", &SVC.replace("NAME", "z"))]);
        let (catalog, errors) = Catalog::merge(vec![a, b, c], false);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(outputs(&catalog, "x"), ["templates/app.yaml.j2"]);
        assert_eq!(
            outputs(&catalog, "y"),
            ["charts/y/extra.yaml.j2", "templates/app.yaml.j2"]
        );
        assert!(outputs(&catalog, "z").is_empty());
        let patterns: Vec<Option<usize>> = catalog.bundles.iter().map(|b| b.pattern).collect();
        assert_eq!(patterns, [Some(0), Some(1), None]);
    }

    #[test]
    fn issue8_p4_standard_pattern_is_borrowed_only_when_asked() {
        let a = bundle("a", Some("platform"), &[("templates/app.yaml.j2", "a")]);
        let mut c = bundle("c", None, &[("services/z.yaml", &SVC.replace("NAME", "z"))]);
        c.standard_pattern = Some("platform".into());
        let (catalog, errors) = Catalog::merge(vec![a, c], false);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(outputs(&catalog, "z"), ["templates/app.yaml.j2"]);
        assert_eq!(catalog.bundles[1].pattern, Some(0));
    }

    /// A borrowed pattern renders with the borrower's chart files only: the lender's chart of
    /// the same chartPath belongs to the lender's own service.
    #[test]
    fn issue8_p4_chart_files_belong_to_their_own_catalog() {
        let lender = bundle(
            "a",
            Some("platform"),
            &[
                ("services/x.yaml", &SVC.replace("NAME", "x")),
                (
                    "templates/app.yaml.j2",
                    "{% include 'charts/' ~ service.chartPath ~ '/_values.yaml.j2' ignore missing %}",
                ),
                ("charts/shared/_values.yaml.j2", "lender"),
                (
                    "charts/shared/extra.yaml",
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lender\n",
                ),
            ],
        );
        let mut borrower = bundle(
            "c",
            None,
            &[(
                "services/z.yaml",
                &SVC.replace("NAME", "z")
                    .replace("chartPath: z", "chartPath: shared"),
            )],
        );
        borrower.standard_pattern = Some("platform".into());
        let (catalog, errors) = Catalog::merge(vec![lender, borrower], false);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(outputs(&catalog, "z"), ["templates/app.yaml.j2"]);
        let names: Vec<&str> = catalog.environment_templates(1).map(|(n, _)| n).collect();
        assert_eq!(names, ["templates/app.yaml.j2"]);
        let names: Vec<&str> = catalog.environment_templates(0).map(|(n, _)| n).collect();
        assert_eq!(
            names,
            ["templates/app.yaml.j2", "charts/shared/_values.yaml.j2"]
        );
    }

    #[test]
    fn issue8_p4_standard_pattern_errors_say_what_to_do() {
        let message = |bundles: Vec<Bundle>| {
            let (_, errors) = Catalog::merge(bundles, false);
            errors.iter().map(ToString::to_string).collect::<Vec<_>>()
        };
        let asking = |pattern: &str| {
            let mut c = bundle("c", None, &[("services/z.yaml", &SVC.replace("NAME", "z"))]);
            c.standard_pattern = Some(pattern.into());
            c
        };
        assert_eq!(
            message(vec![asking("builtin")]),
            [
                "catalog c: standardPattern \"builtin\" names the built-in catalog, which is not loaded (builtin: false); load it or name another catalog"
            ]
        );
        assert_eq!(
            message(vec![
                bundle("a", Some("platform"), &[("templates/t.yaml.j2", "t")]),
                asking("platfrom")
            ]),
            [
                "catalog c: standardPattern \"platfrom\" names no loaded catalog (did you mean \"platform\"?); expected \"builtin\" or the metadata.name of another loaded catalog (platform)"
            ]
        );
        assert_eq!(
            message(vec![
                bundle(
                    "a",
                    Some("bare"),
                    &[("services/x.yaml", &SVC.replace("NAME", "x"))]
                ),
                asking("bare")
            ]),
            [
                "catalog c: standardPattern \"bare\": catalog a has no standard pattern (templates/) to lend"
            ]
        );
        let mut own = bundle("o", None, &[("templates/t.yaml.j2", "t")]);
        own.standard_pattern = Some("x".into());
        assert_eq!(
            message(vec![own]),
            [
                "catalog o: standardPattern \"x\" is set, but this catalog has a standard pattern (templates/) of its own; remove one of them"
            ]
        );
    }

    /// catalogOverwrite keeps kubara's overlay: a later catalog's template replaces an earlier
    /// catalog's template of the same path (the `catalog-overwrite-templates` golden case).
    #[test]
    fn overwrite_replaces_pattern_templates_on_equal_paths() {
        let a = bundle(
            "a",
            None,
            &[
                ("services/x.yaml", &SVC.replace("NAME", "x")),
                ("templates/app.yaml.j2", "from a"),
                ("templates/keep.yaml.j2", "kept"),
            ],
        );
        let b = bundle("b", None, &[("templates/app.yaml.j2", "from b")]);
        let (catalog, errors) = Catalog::merge(vec![a, b], true);
        assert!(errors.is_empty(), "{errors:?}");
        let texts: Vec<(&str, &str)> = catalog.environment_templates(0).collect();
        assert_eq!(
            texts,
            [
                ("templates/app.yaml.j2", "from b"),
                ("templates/keep.yaml.j2", "kept")
            ]
        );
    }
}

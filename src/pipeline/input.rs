//! What every stage reads: where the run happens, which items are what, and the bodies of
//! items read as skeletons.

use std::path::{Path, PathBuf};

use crate::gvk::Gvk;
use crate::resource_list::{self, Fields, Item};
use crate::service::definition::SERVICES_GROUP;

/// Where the run happens.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// The working directory: relative paths resolve here once the config's are rebased.
    pub cwd: PathBuf,
    /// The directory of the file that declares the function config, when the caller read it
    /// from a file (`render --fn-config`): its relative paths resolve there.
    pub config_dir: Option<PathBuf>,
    /// The package whose files the items are, when it is not the working directory: what
    /// the items' paths are relative to.
    pub package: Option<PathBuf>,
}

impl Default for RunContext {
    fn default() -> Self {
        Self {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            config_dir: None,
            package: None,
        }
    }
}

/// kpt's annotation on every item of `kpt fn render`, the function config included: the
/// package's absolute directory. kpt runs exec functions in its own directory, so this is the
/// only way to know where the package is.
const PACKAGE_PATH: &str = "internal.config.kubernetes.io/package-path";

impl RunContext {
    /// The context of a function config read from `file`: its relative paths resolve against
    /// the file's directory, whatever the current directory is (issue 22).
    pub fn for_config_file(file: &Path) -> Self {
        Self {
            config_dir: file.parent().map(Path::to_path_buf),
            ..Self::default()
        }
    }

    /// The package the items' paths are relative to.
    pub(super) fn package(&self) -> &Path {
        self.package.as_deref().unwrap_or(&self.cwd)
    }

    /// This context for a run of `config`, and the directory its relative paths resolve
    /// against: the directory the caller gave, else the one kpt names (the package joined
    /// with the config file's directory in it), else none (the working directory).
    pub(super) fn for_function_config(
        &self,
        config: Option<&serde_json::Value>,
    ) -> (Self, PathBuf) {
        let annotation = |key: &str| {
            config
                .and_then(|c| c.pointer("/metadata/annotations"))
                .and_then(|a| a.get(key))
                .and_then(serde_json::Value::as_str)
        };
        let kpt_package = annotation(PACKAGE_PATH)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        let mut ctx = self.clone();
        if ctx.package.is_none() {
            ctx.package.clone_from(&kpt_package);
        }
        let base = match (&self.config_dir, &kpt_package) {
            (Some(dir), _) => dir.clone(),
            (None, Some(package)) => {
                let file = annotation(resource_list::PATH)
                    .or_else(|| annotation(resource_list::LEGACY_PATH))
                    .unwrap_or_default();
                let dir = Path::new(file).parent().unwrap_or(Path::new(""));
                // A path that climbs out of the package is not kpt's: use the package itself.
                if dir
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
                {
                    package.join(dir)
                } else {
                    package.clone()
                }
            }
            (None, None) => return (ctx, PathBuf::new()),
        };
        ctx.config_dir = Some(base.clone());
        (ctx, base)
    }
}

/// A catalog given among the items (kubara `ServiceDefinition`/`Catalog`, KEP-2906 catalog or
/// `KRMFunctionDefinition`).
pub(super) fn is_inline_catalog_item<T: Fields + ?Sized>(item: &T) -> bool {
    let api = resource_list::str_at(item, &["apiVersion"]);
    let kind = resource_list::str_at(item, &["kind"]);
    (api.starts_with("kubara.io/") && (kind == "ServiceDefinition" || kind == "Catalog"))
        || (api.starts_with("config.kubernetes.io/")
            && matches!(
                kind,
                "Catalog" | "KRMFunctionCatalog" | "KRMFunctionDefinition"
            ))
}

/// A `ServiceSet` of our services group.
pub(super) fn is_service_set<T: Fields + ?Sized>(item: &T) -> bool {
    is_service_set_gvk(&gvk_of(item))
}

/// [`is_service_set`] of an item whose group, version and kind are read already.
pub(super) fn is_service_set_gvk(gvk: &Gvk) -> bool {
    gvk.group == SERVICES_GROUP && gvk.kind == "ServiceSet"
}

/// The group, version and kind an item declares.
pub(super) fn gvk_of<T: Fields + ?Sized>(item: &T) -> Gvk {
    Gvk::from_api_version(
        resource_list::str_at(item, &["apiVersion"]),
        resource_list::str_at(item, &["kind"]),
    )
}

/// Groups of Kubernetes itself, which no catalog defines: items of these never need a catalog.
pub(super) fn is_kubernetes_group(group: &str) -> bool {
    const BUILTIN: &[&str] = &["", "apps", "batch", "autoscaling", "policy", "extensions"];
    BUILTIN.contains(&group) || group.ends_with(".k8s.io") || group.ends_with(".kubernetes.io")
}

/// Whether the reader keeps an item whole (`resource_list::read_owned_keeping`): objects of
/// our services group are expanded, so the pipeline reads their body anyway.
pub fn read_whole(item: &serde_json::Map<String, serde_json::Value>) -> bool {
    let api_version = item.get("apiVersion").and_then(serde_json::Value::as_str);
    api_version.is_some_and(|api| crate::gvk::split_api_version(api).0 == SERVICES_GROUP)
}

/// Replace the items `wanted` picks with their full text from the input (they may be
/// skeletons, see `resource_list::read_owned`); items without input text are already whole.
pub(super) fn hydrate(
    items: &mut [Item],
    verbatim: Option<&resource_list::Verbatim>,
    wanted: impl Fn(usize, &Item) -> bool,
) {
    let Some(v) = verbatim else {
        return;
    };
    // All at once: the items of a streamed input are read in one pass (`Verbatim::items_at`).
    let (at, spans): (Vec<usize>, Vec<resource_list::Span>) = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let span = v.ranges.get(i).copied().flatten()?;
            (!v.is_whole(i) && wanted(i, item)).then_some((i, span))
        })
        .unzip();
    for (i, full) in at.into_iter().zip(v.items_at(&spans)) {
        if let (Some(item), Some(full)) = (items.get_mut(i), full) {
            *item = Item::from(full);
        }
    }
}

#[cfg(test)]
mod context_tests {
    use super::RunContext;
    use serde_json::json;
    use std::path::{Path, PathBuf};

    fn config(package: &str, path: &str) -> serde_json::Value {
        json!({"apiVersion": "krm-catalog.dev/v1alpha1", "kind": "ResolveCatalog",
            "metadata": {"name": "c", "annotations": {
                "internal.config.kubernetes.io/package-path": package,
                "internal.config.kubernetes.io/path": path}}})
    }

    /// Issue 22: under `kpt fn render` the config's paths resolve against its file in the
    /// package kpt names, whatever the working directory is.
    #[test]
    fn issue16_kpt_names_the_package_and_the_config_file() {
        let ctx = RunContext {
            cwd: PathBuf::from("/elsewhere"),
            config_dir: None,
            package: None,
        };
        let (run, base) = ctx.for_function_config(Some(&config("/pkg", "fns/fn.yaml")));
        assert_eq!(base, Path::new("/pkg/fns"));
        assert_eq!(run.package(), Path::new("/pkg"));
        assert_eq!(run.cwd, Path::new("/elsewhere"));
        // A path that climbs out of the package: the package itself.
        let (_, base) = ctx.for_function_config(Some(&config("/pkg", "../x/fn.yaml")));
        assert_eq!(base, Path::new("/pkg"));
        // A relative package path is not kpt's: nothing changes.
        let (run, base) = ctx.for_function_config(Some(&config("pkg", "fn.yaml")));
        assert_eq!(
            (run.package(), base),
            (Path::new("/elsewhere"), PathBuf::new())
        );
        // A file the caller named wins over the annotations.
        let named = RunContext::for_config_file(Path::new("conf/fn.yaml"));
        let (_, base) = named.for_function_config(Some(&config("/pkg", "fn.yaml")));
        assert_eq!(base, Path::new("conf"));
    }
}

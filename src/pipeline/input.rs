//! What every stage reads: where the run happens, which items are what, and the bodies of
//! items read as skeletons.

use std::path::PathBuf;

use crate::gvk::Gvk;
use crate::resource_list::{self, Fields, Item};
use crate::service::definition::SERVICES_GROUP;

/// Where the run happens: relative catalog paths resolve against `cwd`.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// Working directory.
    pub cwd: PathBuf,
}

impl Default for RunContext {
    fn default() -> Self {
        Self {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
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

//! `ServiceDefinition.spec.dependsOn` across the merged catalog (SPEC §6.5): every ID must name
//! a service some loaded catalog defines, the dependencies must not form a cycle, and each
//! service's phase is its dependency depth (0 for none, else one more than its deepest
//! dependency). A service may depend on a service of another catalog (a team catalog's service
//! on the built-in cert-manager): the check runs once every bundle is merged.

use std::collections::HashMap;

use super::CatalogError;
use super::merge::{BundleInfo, Service};
use crate::diagnostics::FieldPath;

/// Check every `dependsOn` of the merged `services` (sorted by ID) and set their phases.
/// Unknown IDs and cycles are catalog errors at the file and `spec.dependsOn` entry of the
/// service that names them.
pub(super) fn resolve(
    services: &mut [Service],
    bundles: &[BundleInfo],
    errors: &mut Vec<CatalogError>,
) {
    let index: HashMap<&str, usize> = services
        .iter()
        .enumerate()
        .map(|(i, s)| (s.definition.id.as_str(), i))
        .collect();
    let located = |service: &Service, e: CatalogError| {
        let mut e = e.for_item(service.item);
        e.file.clone_from(&service.file);
        e
    };
    let label = |service: &Service| {
        bundles
            .get(service.bundle)
            .map(|b| b.origin.label())
            .unwrap_or_default()
    };
    let mut edges: Vec<Vec<usize>> = Vec::with_capacity(services.len());
    for service in services.iter() {
        let mut known = Vec::new();
        for (i, dep) in service.definition.depends_on.iter().enumerate() {
            if let Some(&target) = index.get(dep.as_str()) {
                known.push(target);
                continue;
            }
            let hint = crate::suggest::hint(dep, index.keys().copied());
            errors.push(located(
                service,
                CatalogError::new(
                    &label(service),
                    format!(
                        "service \"{}\" depends on \"{dep}\", which no loaded catalog defines{hint}; name a service ID of a loaded catalog or remove the entry",
                        service.definition.id
                    ),
                )
                .at(FieldPath::parse("spec.dependsOn").index(i)),
            ));
        }
        edges.push(known);
    }
    let (phases, cycles) = walk(&edges);
    for (service, phase) in services.iter_mut().zip(phases) {
        service.phase = phase;
    }
    for cycle in cycles {
        let Some(&first) = cycle.first() else {
            continue;
        };
        let names: Vec<&str> = cycle
            .iter()
            .chain([&first])
            .map(|&i| services[i].definition.id.as_str())
            .collect();
        let service = &services[first];
        errors.push(located(
            service,
            CatalogError::new(
                &label(service),
                format!(
                    "spec.dependsOn forms a cycle: {}; a service cannot be applied before itself, remove one of these dependencies",
                    names.join(" -> ")
                ),
            )
            .at("spec.dependsOn"),
        ));
    }
}

/// Depth-first over the dependency edges, without recursion (a long chain must not exhaust the
/// stack): each node's phase (an edge back into the path counts as no dependency, the cycle is
/// reported instead) and every cycle found, as the nodes on it starting at its smallest index.
fn walk(edges: &[Vec<usize>]) -> (Vec<usize>, Vec<Vec<usize>>) {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        OnPath,
        Done,
    }
    let mut state = vec![State::New; edges.len()];
    let mut phase = vec![0; edges.len()];
    let mut cycles = Vec::new();
    for start in 0..edges.len() {
        if state[start] != State::New {
            continue;
        }
        state[start] = State::OnPath;
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        while let Some((node, next)) = path.last_mut() {
            let node = *node;
            if let Some(&dep) = edges[node].get(*next) {
                *next += 1;
                match state[dep] {
                    State::New => {
                        state[dep] = State::OnPath;
                        path.push((dep, 0));
                    }
                    State::OnPath => {
                        let from = path.iter().position(|(n, _)| *n == dep).unwrap_or(0);
                        let mut cycle: Vec<usize> = path[from..].iter().map(|(n, _)| *n).collect();
                        if let Some(min) = cycle
                            .iter()
                            .enumerate()
                            .min_by_key(|(_, n)| **n)
                            .map(|(i, _)| i)
                        {
                            cycle.rotate_left(min);
                        }
                        cycles.push(cycle);
                    }
                    State::Done => {}
                }
            } else {
                phase[node] = edges[node]
                    .iter()
                    .filter(|d| state[**d] == State::Done)
                    .map(|d| phase[*d] + 1)
                    .max()
                    .unwrap_or(0);
                state[node] = State::Done;
                path.pop();
            }
        }
    }
    cycles.sort();
    cycles.dedup();
    (phase, cycles)
}

#[cfg(test)]
mod tests {
    use super::walk;

    #[test]
    fn issue23_phases_are_dependency_depths() {
        // 0 <- 1 <- 2, 3 -> {0, 2}, 4 alone
        let (phases, cycles) = walk(&[vec![], vec![0], vec![1], vec![0, 2], vec![]]);
        assert_eq!(phases, [0, 1, 2, 3, 0]);
        assert!(cycles.is_empty());
    }

    #[test]
    fn issue23_cycles_are_found_once_starting_at_their_smallest_node() {
        let (_, cycles) = walk(&[vec![1], vec![2], vec![0], vec![3]]);
        assert_eq!(cycles, [vec![0, 1, 2], vec![3]]);
        let (_, cycles) = walk(&[vec![], vec![2], vec![1]]);
        assert_eq!(cycles, [vec![1, 2]]);
    }

    #[test]
    fn issue23_a_long_chain_does_not_recurse() {
        let edges: Vec<Vec<usize>> = (0..100_000)
            .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
            .collect();
        let (phases, _) = walk(&edges);
        assert_eq!(phases[99_999], 99_999);
    }
}

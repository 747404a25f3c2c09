//! `ServiceDefinition.spec.dependsOn` across the merged catalog (SPEC §6.5): every ID must name
//! a service some loaded catalog defines, the dependencies must not form a cycle, and each
//! service's phase is its dependency depth (0 for none, else one more than its deepest
//! dependency). A service may depend on a service of another catalog (a team catalog's service
//! on the built-in cert-manager): the check runs once every bundle is merged.

use std::collections::HashMap;

use crate::diagnostics::FieldPath;
use crate::service::ServiceDefinition;

/// A problem with one service's `spec.dependsOn`: the service (index into the definitions),
/// the field path, the message.
pub(super) type Finding = (usize, FieldPath, String);

/// Check every `dependsOn` of the merged definitions and compute their phases (in the same
/// order). Unknown IDs are reported at their `spec.dependsOn` entry, each cycle once at the
/// service of the cycle that comes first.
pub(super) fn resolve(definitions: &[&ServiceDefinition]) -> (Vec<usize>, Vec<Finding>) {
    let index: HashMap<&str, usize> = definitions
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    let mut findings = Vec::new();
    let mut edges: Vec<Vec<usize>> = Vec::with_capacity(definitions.len());
    for (at, def) in definitions.iter().enumerate() {
        let mut known = Vec::new();
        for (i, dep) in def.depends_on.iter().enumerate() {
            if let Some(&target) = index.get(dep.as_str()) {
                known.push(target);
                continue;
            }
            let hint = crate::suggest::hint(dep, index.keys().copied());
            findings.push((
                at,
                FieldPath::parse("spec.dependsOn").index(i),
                format!(
                    "service \"{}\" depends on \"{dep}\", which no loaded catalog defines{hint}; name a service ID of a loaded catalog or remove the entry",
                    def.id
                ),
            ));
        }
        edges.push(known);
    }
    let (phases, cycles) = walk(&edges);
    for cycle in cycles {
        let Some(&first) = cycle.first() else {
            continue;
        };
        let names: Vec<&str> = cycle
            .iter()
            .chain([&first])
            .map(|&i| definitions[i].id.as_str())
            .collect();
        findings.push((
            first,
            FieldPath::parse("spec.dependsOn"),
            format!(
                "the services depend on each other in a cycle: {}; a service cannot be applied before itself, remove one of these dependencies",
                names.join(" -> ")
            ),
        ));
    }
    (phases, findings)
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

//! "Did you mean" hints for typos in keys, kinds and service IDs.

/// The closest candidate to `input`, if it is close enough to be a plausible typo.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let needle = input.to_lowercase();
    let limit = (needle.chars().count() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .filter(|c| *c != input)
        .map(|c| (distance(&needle, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)))
        .map(|(_, c)| c)
}

/// ` (did you mean "x"?)` or the empty string.
pub fn hint<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(input, candidates).map_or_else(String::new, |c| format!(" (did you mean \"{c}\"?)"))
}

/// Levenshtein distance over chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_close_typos_only() {
        let keys = ["catalogs", "trustedCatalogs", "clusterType", "cluster"];
        assert_eq!(closest("catalgos", keys), Some("catalogs"));
        assert_eq!(closest("clustertype", keys), Some("clusterType"));
        assert_eq!(closest("zzz", keys), None);
        assert_eq!(
            hint("cert-manger", ["cert-manager", "traefik"]),
            " (did you mean \"cert-manager\"?)"
        );
    }
}

//! "Did you mean" hints for typos in keys, kinds and service IDs.

/// The closest candidate to `input`, if it is close enough to be a plausible typo.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let needle = input.to_lowercase();
    let len = needle.chars().count();
    let limit = (len / 3).clamp(1, 3);
    candidates
        .into_iter()
        .filter(|c| *c != input)
        // The distance is at least the difference in length: most candidates of a long list
        // (API groups against every item's group) are ruled out without computing it.
        .filter(|c| c.to_lowercase().chars().count().abs_diff(len) <= limit)
        .map(|c| (distance(&needle, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)))
        .map(|(_, c)| c)
}

/// ` (did you mean "x"?)` or the empty string.
pub fn hint<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(input, candidates).map_or_else(String::new, |c| format!(" (did you mean \"{c}\"?)"))
}

/// Edit distance over chars where swapping two neighbours counts as one edit (optimal string
/// alignment): `emial` is one typo away from `email`, not two.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
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
        // A swap of two neighbours is one typo (issue 8: `emial`).
        assert_eq!(closest("emial", ["email", "name", "server"]), Some("email"));
        assert_eq!(
            hint("cert-manger", ["cert-manager", "traefik"]),
            " (did you mean \"cert-manager\"?)"
        );
    }
}

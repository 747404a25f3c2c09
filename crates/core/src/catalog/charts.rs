//! `charts/<chartPath>/`: a service's chart directory, checked against the directories a
//! catalog holds. A `chartPath` one typo away from a chart directory that no service claims
//! rendered nothing for that service, exit 0, with a hint towards the standard pattern
//! (issue 22); it is an error that names both.

use std::collections::BTreeSet;

use super::CatalogError;

/// A service as far as its chart goes: its ID, `chartPath`, and where it is defined.
pub(super) struct ChartUser<'a> {
    pub id: &'a str,
    pub chart_path: &'a str,
    pub file: Option<&'a str>,
    pub item: Option<usize>,
}

/// The errors for services whose `charts/<chartPath>/` holds no file while a chart directory
/// of the same catalog that no service claims is a near miss of it. `files` are the catalog's
/// file names (`charts/…` among them).
pub(super) fn chart_path_typos<'a>(
    source: &str,
    users: &[ChartUser<'_>],
    files: impl IntoIterator<Item = &'a str>,
) -> Vec<CatalogError> {
    let chart_files: Vec<&str> = files
        .into_iter()
        .filter_map(|f| f.strip_prefix("charts/"))
        .collect();
    // Every directory that holds a chart file, at any depth (a chartPath may be `apps/web`).
    let mut dirs: BTreeSet<&str> = BTreeSet::new();
    for file in &chart_files {
        let mut end = 0;
        while let Some(i) = file[end..].find('/') {
            end += i;
            dirs.insert(&file[..end]);
            end += 1;
        }
    }
    let related = |a: &str, b: &str| {
        a == b
            || a.strip_prefix(b).is_some_and(|r| r.starts_with('/'))
            || b.strip_prefix(a).is_some_and(|r| r.starts_with('/'))
    };
    let unclaimed: Vec<&str> = dirs
        .iter()
        .copied()
        .filter(|d| !users.iter().any(|u| related(d, u.chart_path)))
        .collect();
    let mut errors = Vec::new();
    for user in users {
        let prefix = format!("{}/", user.chart_path);
        if chart_files.iter().any(|f| f.starts_with(&prefix)) {
            continue;
        }
        let Some(meant) = crate::suggest::closest(user.chart_path, unclaimed.iter().copied())
        else {
            continue;
        };
        let mut e = CatalogError::new(
            source,
            format!(
                "service \"{}\": chartPath \"{}\" has no files under charts/{}/ (did you mean \"{meant}\"? charts/{meant}/ belongs to no service)",
                user.id, user.chart_path, user.chart_path
            ),
        )
        .at("spec.chartPath")
        .for_item(user.item);
        e.file = user.file.map(str::to_owned);
        errors.push(e);
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user<'a>(id: &'a str, chart_path: &'a str) -> ChartUser<'a> {
        ChartUser {
            id,
            chart_path,
            file: Some("services/x.yaml"),
            item: None,
        }
    }

    fn messages(users: &[ChartUser<'_>], files: &[&str]) -> Vec<String> {
        chart_path_typos("catalog team", users, files.iter().copied())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn issue16_a_chart_path_typo_names_the_directory_meant() {
        assert_eq!(
            messages(&[user("hello", "helo")], &["charts/hello/cm.yaml.j2"]),
            [
                "catalog team: services/x.yaml: spec.chartPath: service \"hello\": chartPath \"helo\" has no files under charts/helo/ (did you mean \"hello\"? charts/hello/ belongs to no service)"
            ]
        );
    }

    #[test]
    fn claimed_nested_and_unrelated_directories_are_no_typo() {
        // Claimed by another service.
        assert!(
            messages(
                &[user("a", "web1"), user("b", "web2")],
                &["charts/web2/x.j2"]
            )
            .is_empty()
        );
        // A nested chartPath with files.
        assert!(
            messages(
                &[user("a", "apps/web")],
                &["charts/apps/web/x.j2", "charts/apps/webb/y.j2"]
            )
            .is_empty()
        );
        // A service without a chart of its own (the standard pattern renders it), no near miss.
        assert!(
            messages(
                &[user("a", "external-dns")],
                &["charts/shared/_values.yaml.j2"]
            )
            .is_empty()
        );
        // A nested typo.
        assert_eq!(
            messages(&[user("a", "apps/wbe")], &["charts/apps/web/x.j2"]).len(),
            1
        );
    }
}

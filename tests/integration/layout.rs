//! The module map in DEVELOPERS.md is the code's: every top-level module of both crates is in
//! it, imports only what its line allows, the allowed imports form no cycle, the files of a
//! folder import each other without a cycle, and no file holds more than 800 lines of code
//! before its tests (issue 10, "One house").

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::util::root;

/// The most lines of non-test code a source file may hold.
const MAX_CODE_LINES: usize = 800;

/// `module → allowed imports`, read from the `## Module map` table of DEVELOPERS.md: rows
/// `` | `module` | what it owns | `a`, `b` | `` (`—` for none).
fn declared() -> BTreeMap<String, BTreeSet<String>> {
    let text = fs_err::read_to_string(root().join("DEVELOPERS.md")).expect("DEVELOPERS.md");
    let section = text
        .split("\n## Module map")
        .nth(1)
        .expect("DEVELOPERS.md has a `## Module map` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut map = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 3, "module map row with three cells: {line}");
        let names = |cell: &str| -> BTreeSet<String> {
            cell.split(',')
                .map(|n| n.trim().trim_matches('`').to_owned())
                .filter(|n| !n.is_empty() && n != "—")
                .collect()
        };
        let module = cells[0].trim_matches('`').to_owned();
        assert!(
            map.insert(module.clone(), names(cells[2])).is_none(),
            "{module} is listed twice in the module map"
        );
    }
    assert!(!map.is_empty(), "the module map lists no module");
    map
}

/// The source files of a crate's `src`, with the top-level module each belongs to.
fn files(src: &Path) -> Vec<(String, PathBuf)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs_err::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(src, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(src).ok()?;
            let first = rel.components().next()?.as_os_str().to_str()?;
            let module = first.strip_suffix(".rs").unwrap_or(first).to_owned();
            Some((module, path))
        })
        .collect()
}

/// The code of a file before its unit tests (`#[cfg(test)]` starts them, by our convention).
fn code(path: &Path) -> String {
    let text = fs_err::read_to_string(path).expect("source");
    match text.find("\n#[cfg(test)]") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// The top-level modules a piece of code names: `crate::x` and `krm_catalog_core::x`
/// (`crate::log!` is the logger's macro).
fn imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for prefix in ["crate::", "krm_catalog_core::"] {
        let mut rest = code;
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().next_back();
            rest = &rest[i + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if name.is_empty() {
                continue;
            }
            // `crate::log!` (and a doc link to it) is the logger's macro.
            let is_macro = rest[name.len()..].starts_with('!') || name == "log";
            out.insert(if is_macro { "logger".to_owned() } else { name });
        }
    }
    out
}

/// Modules that are the crate root's business, not layers: the binary's entry points.
const ROOTS: [&str; 2] = ["lib", "main"];

#[test]
fn issue10_module_map_matches_the_code() {
    let declared = declared();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for src in [root().join("crates/core/src"), root().join("src")] {
        for (module, path) in files(&src) {
            if ROOTS.contains(&module.as_str()) {
                continue;
            }
            seen.insert(module.clone());
            let Some(allowed) = declared.get(&module) else {
                problems.push(format!(
                    "{}: module `{module}` is not in DEVELOPERS.md's module map",
                    path.display()
                ));
                continue;
            };
            for import in imports(&code(&path)) {
                if import != module && !allowed.contains(&import) {
                    problems.push(format!(
                        "{}: `{module}` imports `{import}`, which its module map line does not allow",
                        path.display()
                    ));
                }
            }
        }
    }
    for module in declared.keys() {
        if !seen.contains(module) {
            problems.push(format!(
                "the module map lists `{module}`, which is not in the code"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Depth-first search for a back edge; the path found is the cycle.
fn visit<'a>(
    node: &'a str,
    graph: &'a BTreeMap<String, BTreeSet<String>>,
    stack: &mut Vec<&'a str>,
    done: &mut BTreeSet<&'a str>,
) -> Option<String> {
    if let Some(i) = stack.iter().position(|n| *n == node) {
        let mut cycle = stack[i..].to_vec();
        cycle.push(node);
        return Some(cycle.join(" → "));
    }
    if !done.insert(node) {
        return None;
    }
    stack.push(node);
    for next in graph.get(node).into_iter().flatten() {
        if let Some(cycle) = visit(next, graph, stack, done) {
            return Some(cycle);
        }
    }
    stack.pop();
    None
}

#[test]
fn issue10_module_map_has_no_cycle() {
    let declared = declared();
    let mut done = BTreeSet::new();
    for module in declared.keys() {
        let mut stack = Vec::new();
        if let Some(cycle) = visit(module, &declared, &mut stack, &mut done) {
            panic!("the module map has a cycle: {cycle}");
        }
    }
}

#[test]
fn issue10_no_file_holds_more_than_800_lines_of_code() {
    let mut long = Vec::new();
    for src in [root().join("crates/core/src"), root().join("src")] {
        for (_, path) in files(&src) {
            let lines = code(&path).lines().count();
            if lines > MAX_CODE_LINES {
                long.push(format!("{}: {lines} lines", path.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_CODE_LINES} lines of code (split them by concern):\n{}",
        long.join("\n")
    );
}

/// The first path segments a piece of code names after `prefix` (`super::`, `crate::dir::`):
/// `prefix::a::…` gives `a`, `prefix::{a, b::c}` gives `a` and `b`.
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(list) = rest.strip_prefix('{') {
            let end = list.find('}').unwrap_or(list.len());
            out.extend(list[..end].split(',').map(ident));
        } else {
            out.insert(ident(rest));
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

#[test]
fn issue10_files_of_a_folder_import_each_other_without_cycle() {
    for src in [root().join("crates/core/src"), root().join("src")] {
        let mut dirs: Vec<PathBuf> = fs_err::read_dir(&src)
            .expect("read_dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            let folder = dir.file_name().and_then(|n| n.to_str()).expect("name");
            let siblings: BTreeSet<String> = fs_err::read_dir(&dir)
                .expect("read_dir")
                .filter_map(|e| {
                    let path = e.expect("entry").path();
                    let stem = path.file_stem()?.to_str()?.to_owned();
                    (path.extension().is_some_and(|x| x == "rs") && stem != "mod").then_some(stem)
                })
                .collect();
            // What mod.rs re-exports from which file: `use file::{A, B}` (any visibility). A
            // folder beside its module file (`yaml.rs` + `yaml/`) has that file as its index.
            let mod_rs = dir.join("mod.rs");
            let index = code(&if mod_rs.exists() {
                mod_rs
            } else {
                dir.with_extension("rs")
            });
            let mut owner = BTreeMap::new();
            for file in &siblings {
                for name in names_after(&index, &format!("use {file}::")) {
                    owner.insert(name, file.clone());
                }
            }
            let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for file in &siblings {
                let text = code(&dir.join(format!("{file}.rs")));
                let named = names_after(&text, "super::")
                    .into_iter()
                    .chain(names_after(&text, &format!("crate::{folder}::")));
                let targets = named
                    .filter_map(|n| {
                        if siblings.contains(&n) {
                            Some(n)
                        } else {
                            owner.get(&n).cloned()
                        }
                    })
                    .filter(|t| t != file)
                    .collect();
                graph.insert(file.clone(), targets);
            }
            let mut done = BTreeSet::new();
            for file in graph.keys() {
                if let Some(cycle) = visit(file, &graph, &mut Vec::new(), &mut done) {
                    panic!(
                        "{}: its files import each other in a cycle: {cycle}",
                        dir.display()
                    );
                }
            }
        }
    }
}

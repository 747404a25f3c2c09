//! Every console block of README.md and `docs/` is a transcript the tests run (issue 24): a
//! page cannot go stale. A block is the text between a "```console" fence and the closing
//! fence; each `$ ` line is a command (a trailing `\` continues it on the next line, and a
//! here-document `<<'EOF'` takes the lines up to `EOF`) and the lines after it, up to the next
//! command, are what it prints (stdout and stderr together). `UPDATE_DOCS=1` rewrites the
//! output of every transcript that differs with what its command printed (keeping a final
//! `...` and the lines it stands for out), so a changed message is one run away; read the diff.
//! In the expected text a line `...` stands for any number of lines and `[..]` for any text
//! within a line (timings, temporary paths). Instructions that are not transcripts (installing,
//! downloading, commands that need a cluster) are written in `sh` blocks, which are not run.
//!
//! The commands of one page run in order (each in its own `bash`; a `cd` carries over to the
//! next command, nothing else does) in one directory of their own, holding a copy of the
//! repository's `functions/` and `catalogs/` and links to `testdata/` and `docs/`, with the
//! binaries under test first on `PATH` (`cargo run --release --quiet --` stands for
//! `krm-catalog`), a private cache and home, and no network. A block whose command needs a
//! tool this machine lacks (kpt, kubectl, docker) is skipped from there, with a visible line.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{bin, root, skipped};

/// One command of a transcript and what it prints.
struct Step {
    /// Where it is: `FILE:LINE`.
    at: String,
    command: String,
    expected: Vec<String>,
    /// The 0-based line numbers of the expected output in the page.
    lines: std::ops::Range<usize>,
}

/// The console blocks of a page, each as its steps.
fn transcripts(page: &Path) -> Vec<Vec<Step>> {
    let text = fs_err::read_to_string(page).expect("read page");
    let name = page
        .strip_prefix(root())
        .unwrap_or(page)
        .display()
        .to_string();
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((_, line)) = lines.next() {
        if line.trim_end() != "```console" {
            continue;
        }
        let mut steps: Vec<Step> = Vec::new();
        let mut continued = false;
        let mut heredoc: Option<String> = None;
        for (number, line) in lines.by_ref() {
            if line.starts_with("```") {
                break;
            }
            if continued || heredoc.is_some() {
                if let Some(step) = steps.last_mut() {
                    step.command.push('\n');
                    step.command.push_str(line);
                    step.lines = number + 1..number + 1;
                }
                if heredoc.as_deref() == Some(line.trim_end()) {
                    heredoc = None;
                } else if heredoc.is_none() {
                    continued = line.ends_with('\\');
                }
            } else if let Some(command) = line.strip_prefix("$ ") {
                steps.push(Step {
                    at: format!("{name}:{}", number + 1),
                    command: command.to_owned(),
                    expected: Vec::new(),
                    lines: number + 1..number + 1,
                });
                continued = line.ends_with('\\');
                heredoc = here_document(command);
            } else if let Some(step) = steps.last_mut() {
                step.expected.push(line.trim_end().to_owned());
                step.lines.end = number + 1;
            } else {
                panic!(
                    "{name}:{}: a console block starts with `$ ` (a command)",
                    number + 1
                );
            }
        }
        blocks.push(steps);
    }
    blocks
}

/// The delimiter of a here-document the command starts (`<<'EOF'`, `<<EOF`), if any.
fn here_document(command: &str) -> Option<String> {
    let after = command.split("<<").nth(1)?;
    let word = after
        .trim_start_matches('-')
        .split_whitespace()
        .next()?
        .trim_matches(|c| c == '\'' || c == '"');
    (!word.is_empty()).then(|| word.to_owned())
}

/// Whether `actual` is what `expected` describes (`...` lines, `[..]` within a line).
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, more)| line_matches(first, line) && matches(rest, more)),
    }
}

fn line_matches(expected: &str, actual: &str) -> bool {
    let mut parts = expected.split("[..]");
    let Some(head) = parts.next() else {
        return actual.is_empty();
    };
    let Some(mut rest) = actual.strip_prefix(head) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// The tools a command needs that may be missing here.
const OPTIONAL_TOOLS: [&str; 5] = ["kpt", "kubectl", "docker", "skopeo", "openssl"];

/// The image name the examples use (`functions/examples/*`), and what in a command means it
/// runs that image: the image under test (`KRM_CATALOG_IMAGE`, which `scripts/test` builds) is
/// tagged so for the transcripts, and they are skipped without it.
const EXAMPLE_IMAGE: &str = "localhost/krm-catalog:dev";
const RUNS_THE_IMAGE: [&str; 3] = [
    EXAMPLE_IMAGE,
    "kubectl kustomize --enable-alpha-plugins",
    "kpt fn render",
];

/// Whether the example image is there: the image under test, tagged as the examples name it.
fn example_image() -> Result<(), String> {
    static TAGGED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    TAGGED
        .get_or_init(|| {
            let image = std::env::var("KRM_CATALOG_IMAGE")
                .map_err(|_| "no image under test (KRM_CATALOG_IMAGE; scripts/test builds one)")?;
            let tagged = Command::new("docker")
                .args(["tag", &image, EXAMPLE_IMAGE])
                .status()
                .map_err(|e| format!("docker: {e}"))?;
            if tagged.success() {
                Ok(())
            } else {
                Err(format!("docker tag {image} {EXAMPLE_IMAGE} failed"))
            }
        })
        .clone()
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
}

/// A directory for one page's commands: copies of what they may change, links to the rest.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for copied in ["functions", "catalogs"] {
        let status = Command::new("cp")
            .arg("-a")
            .arg(root().join(copied))
            .arg(dir.path())
            .status()
            .expect("cp");
        assert!(status.success(), "cp {copied}");
    }
    for linked in ["testdata", "docs"] {
        std::os::unix::fs::symlink(root().join(linked), dir.path().join(linked)).expect("link");
    }
    dir
}

/// Run the transcripts of `page`; every failure, with the command and both texts. With
/// `UPDATE_DOCS`, the page is rewritten with what the commands printed instead.
fn run_page(page: &Path, case: &str) -> Vec<String> {
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    let mut rewrites: Vec<(std::ops::Range<usize>, Vec<String>)> = Vec::new();
    let blocks = transcripts(page);
    if blocks.is_empty() {
        return Vec::new();
    }
    let dir = workspace();
    let home = tempfile::tempdir().expect("home");
    let bins: PathBuf = bin().parent().expect("bin dir").to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bins).chain(
            std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
                .unwrap_or_default(),
        ),
    )
    .expect("PATH");
    let mut failures = Vec::new();
    let mut cwd = dir.path().to_path_buf();
    let cwd_file = home.path().join(".docs-cwd");
    'blocks: for steps in blocks {
        for step in steps {
            let command = step
                .command
                .replace("cargo run --release --quiet --", "krm-catalog");
            if let Some(tool) = OPTIONAL_TOOLS.iter().find(|tool| {
                command
                    .split(|c: char| c.is_whitespace() || c == '|' || c == '(')
                    .any(|word| word == **tool)
                    && !on_path(tool)
            }) {
                skipped(case, &format!("{}: `{tool}` is not installed", step.at));
                continue 'blocks;
            }
            if RUNS_THE_IMAGE.iter().any(|m| command.contains(m))
                && let Err(why) = example_image()
            {
                skipped(case, &format!("{}: {why}", step.at));
                continue 'blocks;
            }
            // The command, then where it left the shell, for the next one.
            let script = format!(
                "set -o pipefail\n{command}\nstatus=$?\npwd > \"$DOCS_CWD_FILE\"\nexit $status"
            );
            let out = Command::new("bash")
                .arg("-c")
                .arg(script)
                .current_dir(&cwd)
                .env("DOCS_CWD_FILE", &cwd_file)
                .env("PATH", &path)
                .env("HOME", home.path())
                .env("KRM_CATALOG_CACHE", home.path().join("cache"))
                .env("KRM_CATALOG_HTTP_TIMEOUT", "5")
                .env_remove("KRM_CATALOG_CATALOGS")
                .output()
                .expect("bash");
            if let Ok(next) = fs_err::read_to_string(&cwd_file) {
                cwd = PathBuf::from(next.trim_end());
            }
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let actual: Vec<&str> = text.lines().map(str::trim_end).collect();
            if !matches(&step.expected, &actual) {
                if update {
                    rewrites.push((step.lines.clone(), rewritten(&step.expected, &actual)));
                    continue;
                }
                failures.push(format!(
                    "{}: `{}` printed:\n{}\n--- but the page shows:\n{}\n",
                    step.at,
                    step.command,
                    actual.join("\n"),
                    step.expected.join("\n")
                ));
                continue 'blocks;
            }
        }
    }
    if !rewrites.is_empty() {
        let text = fs_err::read_to_string(page).expect("read page");
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        for (range, new) in rewrites.into_iter().rev() {
            lines.splice(range, new);
        }
        fs_err::write(page, lines.join("\n") + "\n").expect("write page");
    }
    failures
}

/// What a transcript's output becomes under `UPDATE_DOCS`: the command's output, cut where the
/// page cut it with a final `...`.
fn rewritten(expected: &[String], actual: &[&str]) -> Vec<String> {
    let mut new: Vec<String> = actual.iter().map(|l| (*l).to_owned()).collect();
    if expected.last().is_some_and(|l| l == "...") {
        let shown = expected.len() - 1;
        if new.len() > shown {
            new.truncate(shown);
            new.push("...".to_owned());
        }
    }
    new
}

/// The pages: README.md and every Markdown file under docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

#[test]
fn issue24_every_console_block_of_the_docs_runs_as_shown() {
    let test = crate::util::test_name!();
    let mut failures = Vec::new();
    for page in pages() {
        failures.extend(run_page(&page, test));
    }
    assert!(
        failures.is_empty(),
        "{} transcript(s) differ from what the commands print:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn transcripts_match_with_ellipses_and_wildcards() {
    let lines = |text: &str| text.lines().map(str::to_owned).collect::<Vec<_>>();
    assert!(matches(&lines("a\n...\nd"), &["a", "b", "c", "d"]));
    assert!(matches(&lines("a\n...\nd"), &["a", "d"]));
    assert!(!matches(&lines("a\n...\nd"), &["a", "b"]));
    assert!(matches(&lines("a\n..."), &["a", "b"]));
    assert!(!matches(&lines("a"), &["a", "b"]));
    assert!(line_matches(
        "[PASS] \"x\" in [..]",
        "[PASS] \"x\" in 500ms"
    ));
    assert!(line_matches("[..]/cache/[..].yaml", "/tmp/x/cache/y.yaml"));
    assert!(!line_matches("in [..]ms", "in 5s"));
    assert!(line_matches("plain", "plain"));
    assert!(!line_matches("plain", "plainer"));
    assert_eq!(
        here_document("cat > a.yaml <<'EOF'"),
        Some("EOF".to_owned())
    );
    assert_eq!(here_document("cat <<-END > x"), Some("END".to_owned()));
    assert_eq!(here_document("echo hi"), None);
}

//! Text edits of `catalog lock`: a line inserted beside a `key: value` line of a block
//! mapping (or a pin added inside a one-line flow mapping), so comments and layout of the rest
//! of the file stay byte for byte; and the atomic replacement of the file. The caller proves
//! each edit by parsing the result (`lock::prove_edit`).

use std::path::{Path, PathBuf};

use super::RuntimeError;

/// One line of what `catalog lock` did: `locked` (a pin written) or `ok` (already pinned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    /// `locked` or `ok`.
    pub status: &'static str,
    /// The file, what was pinned and to what.
    pub detail: String,
}

impl Locked {
    pub(super) fn written(detail: String) -> Self {
        Self {
            status: "locked",
            detail,
        }
    }

    pub(super) fn ok(detail: String) -> Self {
        Self {
            status: "ok",
            detail,
        }
    }
}

impl std::fmt::Display for Locked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status, self.detail)
    }
}

/// Indentation of a line, in bytes.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn blank_or_comment(line: &str) -> bool {
    line.trim().is_empty() || line.trim_start().starts_with('#')
}

/// A block-style `key: value` line: the key's column (after a `- `), the key, and the value
/// without quotes or a trailing comment.
pub(super) fn key_of(line: &str) -> Option<(usize, String, String)> {
    let body = line.trim();
    let (col, body) = match body.strip_prefix("- ") {
        Some(rest) => (indent(line) + 2, rest),
        None => (indent(line), body),
    };
    let (k, v) = body.split_once(':')?;
    let v = v
        .split(" #")
        .next()
        .unwrap_or("")
        .trim()
        .trim_matches(|c| c == '"' || c == '\'')
        .to_owned();
    Some((col, k.trim().to_owned(), v))
}

/// The other keys and values of the block mapping whose key at `col` is on line `i`.
pub(super) fn siblings(lines: &[&str], i: usize, col: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // Before the line, unless it starts a list item (then it is the mapping's first key).
    if !lines[i].trim_start().starts_with("- ") {
        for l in lines[..i].iter().rev() {
            if blank_or_comment(l) {
                continue;
            }
            if let Some((c, k, v)) = key_of(l)
                && c == col
            {
                out.push((k, v));
                if l.trim_start().starts_with("- ") {
                    break;
                }
                continue;
            }
            if indent(l) < col {
                break;
            }
        }
    }
    for l in &lines[i + 1..] {
        if blank_or_comment(l) {
            continue;
        }
        if indent(l) < col {
            break;
        }
        // A `- ` at the mapping's column is a list under one of its keys.
        if indent(l) == col
            && !l.trim_start().starts_with("- ")
            && let Some((_, k, v)) = key_of(l)
        {
            out.push((k, v));
        }
    }
    out
}

/// After the first block-style `key: value` line whose mapping has no `new_key` yet, insert
/// `new_key: new_value` at the same indentation; looking only at lines from index `from`
/// (0-based) on (the document being locked, not the same text earlier in the file, a
/// template, say) and only at mappings whose other keys `fits`.
pub(super) fn insert_sibling_where(
    text: &str,
    from: usize,
    key: &str,
    value: &str,
    new_key: &str,
    new_value: &str,
    fits: impl Fn(&[(String, String)]) -> bool,
) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate().skip(from) {
        let Some((col, k, v)) = key_of(line) else {
            continue;
        };
        if k != key || v != value {
            continue;
        }
        let others = siblings(&lines, i, col);
        if others.iter().any(|(k, _)| k == new_key) || !fits(&others) {
            continue;
        }
        let mut out: String = lines[..=i].concat();
        if !out.ends_with('\n') {
            out.push('\n');
        }
        push_entry(&mut out, col, new_key, new_value);
        out.push_str(&lines[i + 1..].concat());
        return Some(out);
    }
    None
}

/// One block-style `key: value` line at `indent` columns.
fn push_entry(out: &mut String, indent: usize, key: &str, value: &str) {
    out.push_str(&" ".repeat(indent));
    out.push_str(key);
    out.push_str(": ");
    out.push_str(value);
    out.push('\n');
}

/// Turn the first block-style `key: <value>` line (from line `from` on) into a mapping of
/// `value_key: <value as written>` and `new_key: new_value` one level deeper; a comment after
/// the value stays on the `key:` line (two lines more).
pub(super) fn expand_scalar(
    text: &str,
    from: usize,
    key: &str,
    value: &str,
    value_key: &str,
    new_key: &str,
    new_value: &str,
) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate().skip(from) {
        let Some((col, k, v)) = key_of(line) else {
            continue;
        };
        if k != key || v != value {
            continue;
        }
        let content = line.trim_end_matches(['\n', '\r']);
        let colon = content.find(&format!("{key}:"))? + key.len() + 1;
        let (written, comment) = match content[colon..].find(" #") {
            Some(at) => (&content[colon..colon + at], &content[colon + at..]),
            None => (&content[colon..], ""),
        };
        let mut out: String = lines[..i].concat();
        out.push_str(&content[..colon]);
        out.push_str(comment);
        out.push('\n');
        push_entry(&mut out, col + 2, value_key, written.trim());
        push_entry(&mut out, col + 2, new_key, new_value);
        out.push_str(&lines[i + 1..].concat());
        return Some(out);
    }
    None
}

/// Insert `insert` right after the first occurrence (from line `from` on) of `needle` that
/// `accept(line, start, end)` takes, on one line. For pins inside one-line flow mappings and
/// in string lists.
pub(super) fn insert_after(
    text: &str,
    from: usize,
    needle: &str,
    insert: &str,
    accept: impl Fn(&str, usize, usize) -> bool,
) -> Option<String> {
    if needle.is_empty() {
        return None;
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate().skip(from) {
        let mut start = 0;
        while let Some(at) = line[start..].find(needle) {
            let begin = start + at;
            let end = begin + needle.len();
            if accept(line, begin, end) {
                let mut out: String = lines[..i].concat();
                out.push_str(&line[..end]);
                out.push_str(insert);
                out.push_str(&line[end..]);
                out.push_str(&lines[i + 1..].concat());
                return Some(out);
            }
            start = end;
        }
    }
    None
}

/// Replace `file` with `text` atomically, never writing through a link: the new content goes
/// to a temporary file created exclusively (`O_EXCL`, a random name, so nothing planted at a
/// predictable path is followed) in the same directory, then renamed over `file`. A `file`
/// that is itself a symbolic link is refused: renaming over it would silently turn a link
/// into a copy, and writing through it would edit a file outside the catalog.
pub(super) fn replace_file(file: &Path, text: &str) -> Result<(), RuntimeError> {
    check_writable(file)?;
    let meta = fs_err::symlink_metadata(file)?;
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (tmp, mut out) = create_exclusive(&dir, &name)?;
    let result = (|| {
        use std::io::Write as _;
        out.write_all(text.as_bytes())?;
        out.sync_all()?;
        drop(out);
        // The lock changes the content, not who may read it.
        fs_err::set_permissions(&tmp, meta.permissions())?;
        fs_err::rename(&tmp, file)
    })();
    result.map_err(|e| {
        let _ = fs_err::remove_file(&tmp);
        e.into()
    })
}

/// `file` is a regular file, not a link: checked for every file before any is written, and
/// again just before each write.
pub(super) fn check_writable(file: &Path) -> Result<(), RuntimeError> {
    let meta = fs_err::symlink_metadata(file)?;
    if meta.file_type().is_symlink() {
        let target =
            fs_err::read_link(file).map_or_else(|_| "?".to_owned(), |t| t.display().to_string());
        return Err(RuntimeError::Symlink {
            file: file.display().to_string(),
            target,
        });
    }
    if !meta.is_file() {
        return Err(RuntimeError::NotAFile(file.display().to_string()));
    }
    Ok(())
}

/// A new file `.<name>.<random>.lock-tmp` in `dir`, created with `O_EXCL` (`create_new`), so
/// an existing file or link at that path is an error, never opened.
fn create_exclusive(dir: &Path, name: &str) -> Result<(PathBuf, fs_err::File), RuntimeError> {
    super::create_with_random_name(
        |random| dir.join(format!(".{name}.{random:016x}.lock-tmp")),
        |tmp| {
            fs_err::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(tmp)
        },
    )
    .map_err(|e| match e {
        super::Unnamed::Failed(e) => e.into(),
        // fs_err's message names the file.
        super::Unnamed::Taken(_, e) => RuntimeError::TempFile(e.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insert_sibling(
        text: &str,
        key: &str,
        value: &str,
        new_key: &str,
        new: &str,
    ) -> Option<String> {
        insert_sibling_where(text, 0, key, value, new_key, new, |_| true)
    }

    #[test]
    fn inserts_a_sibling_and_keeps_comments() {
        let text = "runtime:\n  container:\n    # the labeller\n    image: ghcr.io/acme/fn:v1 # pinned below\n    requireNetwork: false\n";
        let out = insert_sibling(text, "image", "ghcr.io/acme/fn:v1", "sha256", "abc").unwrap();
        assert_eq!(
            out,
            "runtime:\n  container:\n    # the labeller\n    image: ghcr.io/acme/fn:v1 # pinned below\n    sha256: abc\n    requireNetwork: false\n"
        );
        // Already pinned (before or after): nothing to do.
        assert!(insert_sibling(&out, "image", "ghcr.io/acme/fn:v1", "sha256", "abc").is_none());
        let list = "platforms:\n- bin: fn\n  os: linux\n  uri: https://x/fn\n- bin: fn\n  os: darwin\n  uri: https://x/fn-mac\n";
        let out = insert_sibling(list, "uri", "https://x/fn-mac", "sha256", "def").unwrap();
        assert!(
            out.ends_with("  uri: https://x/fn-mac\n  sha256: def\n"),
            "{out}"
        );
        let out2 = insert_sibling(&out, "uri", "https://x/fn", "sha256", "123").unwrap();
        assert!(
            out2.contains("  uri: https://x/fn\n  sha256: 123\n- bin: fn\n"),
            "{out2}"
        );
        // A pin of the next list item is not this item's.
        let pinned_next = "- uri: https://x/a\n- uri: https://x/b\n  sha256: 1\n";
        let out = insert_sibling(pinned_next, "uri", "https://x/a", "sha256", "2").unwrap();
        assert_eq!(
            out,
            "- uri: https://x/a\n  sha256: 2\n- uri: https://x/b\n  sha256: 1\n"
        );
    }

    #[test]
    fn siblings_are_the_keys_of_the_same_mapping() {
        let text = "catalogs:\n- git:\n    url: https://h/r\n    # the tag\n    ref: v1\n    path: c\n  standardPattern: builtin\n- git:\n    url: https://h/s\n    ref: v1\n";
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let got = siblings(&lines, 4, 4);
        let keys: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["url", "path"]);
        let out = insert_sibling_where(text, 0, "ref", "v1", "commit", "c0", |s| {
            s.iter().any(|(k, v)| k == "url" && v == "https://h/s")
        })
        .unwrap();
        assert!(
            out.ends_with("    url: https://h/s\n    ref: v1\n    commit: c0\n"),
            "{out}"
        );
    }

    #[test]
    fn expands_a_scalar_into_a_mapping() {
        let text = "runtime:\n  starlark: \"https://h/x.star\" # the KEP's form\nnext: 1\n";
        let out = expand_scalar(
            text,
            0,
            "starlark",
            "https://h/x.star",
            "url",
            "sha256",
            "ab",
        )
        .unwrap();
        assert_eq!(
            out,
            "runtime:\n  starlark: # the KEP's form\n    url: \"https://h/x.star\"\n    sha256: ab\nnext: 1\n"
        );
    }

    #[test]
    fn inserts_after_an_accepted_occurrence() {
        let text = "a: git::u?ref=v10, git::u?ref=v1\n";
        let out = insert_after(text, 0, "git::u?ref=v1", "&commit=c", |line, _, end| {
            !line[end..].starts_with(|c: char| c.is_ascii_alphanumeric())
        })
        .unwrap();
        assert_eq!(out, "a: git::u?ref=v10, git::u?ref=v1&commit=c\n");
    }
}

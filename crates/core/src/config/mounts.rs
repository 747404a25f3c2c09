//! `functions.mounts` (issue 22): the storage a runtime that declares `requireStorageMount`
//! gets, written as kpt writes `--mount` (`type=bind,src=DIR,dst=PATH[,rw=true]`) and
//! kustomize the `mounts` of its function annotation (`{type: bind, src, dst, rw}`). Listing a
//! mount is what allows such a runtime: without one it is refused, in pin and run mode alike.
//! Sources are directories of the package, relative to it (kustomize's rule for annotation
//! mounts), so the same setting pins and runs.

use serde_json::Value;

use crate::diagnostics::FieldPath;
use crate::strict::{Problem, Reader};

/// One bind mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The directory on this machine, relative to the package, as written.
    pub src: String,
    /// Where the container sees it (absolute).
    pub dst: String,
    /// Writable (`rw: true`); read-only otherwise, as kpt and kustomize mount by default.
    pub rw: bool,
}

impl Mount {
    /// kpt's `--mount` form, for messages.
    pub fn flag(&self) -> String {
        format!(
            "type=bind,src={},dst={}{}",
            self.src,
            self.dst,
            if self.rw { ",rw=true" } else { "" }
        )
    }
}

/// The problem with a mount's `src` and `dst`, if any.
fn check(src: &str, dst: &str) -> Option<String> {
    if src.is_empty() {
        return Some("missing src (a directory of the package, relative to it)".to_owned());
    }
    if src.starts_with('/') || src.split(['/', '\\']).any(|part| part == "..") {
        return Some(format!(
            "src \"{src}\" must be a relative path inside the package, without `..` (kustomize mounts only directories of the kustomization)"
        ));
    }
    if !dst.starts_with('/') {
        return Some(format!(
            "dst \"{dst}\" must be an absolute path in the container"
        ));
    }
    None
}

/// The object form: `{type: bind, src, dst, rw}` (`type` may be left out).
pub(super) fn read_object(
    value: &Value,
    path: &FieldPath,
    problems: &mut Vec<Problem>,
) -> Option<Mount> {
    let before = problems.len();
    let mut r = Reader::new(value, path, problems);
    r.deny_unknown(&["type", "src", "dst", "rw"]);
    r.one_of("type", &["bind"]);
    let src = r.string("src").unwrap_or_default();
    let dst = r.string("dst").unwrap_or_default();
    let rw = r.boolean("rw").unwrap_or(false);
    drop(r);
    if let Some(message) = check(&src, &dst) {
        problems.push(Problem::new(path, message));
    }
    (problems.len() == before).then_some(Mount { src, dst, rw })
}

/// kpt's `--mount` form, `type=bind,src=DIR,dst=PATH[,rw=true]` (also `source`/`target`, as
/// docker and kpt take them); several are separated by `;` in a ConfigMap value.
pub(super) fn read_flags(text: &str, path: &FieldPath, problems: &mut Vec<Problem>) -> Vec<Mount> {
    let mut mounts = Vec::new();
    for (i, spec) in text
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .enumerate()
    {
        let field = path.index(i);
        let (mut src, mut dst, mut rw) = (String::new(), String::new(), false);
        let mut bad = None;
        for part in spec.split(',').map(str::trim) {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            match key {
                "type" if value == "bind" => {}
                "type" => bad = Some(format!("type \"{value}\" is not supported: only type=bind")),
                "src" | "source" => value.clone_into(&mut src),
                "dst" | "target" | "destination" => value.clone_into(&mut dst),
                "rw" if value == "true" || value == "false" => rw = value == "true",
                "readonly" | "ro" => rw = false,
                _ => {
                    bad = Some(format!(
                        "\"{part}\" is not part of a mount: write type=bind,src=DIR,dst=PATH[,rw=true] (kpt's --mount)"
                    ));
                }
            }
        }
        match bad.or_else(|| check(&src, &dst)) {
            Some(message) => problems.push(Problem::new(&field, message)),
            None => mounts.push(Mount { src, dst, rw }),
        }
    }
    mounts
}

/// `functions.mounts`: a list of objects, or of kpt `--mount` strings.
pub(super) fn read_list(
    value: &Value,
    path: &FieldPath,
    problems: &mut Vec<Problem>,
) -> Vec<Mount> {
    let Value::Array(list) = value else {
        problems.push(Problem::new(
            path,
            format!(
                "must be a list of mounts ({{type: bind, src: DIR, dst: PATH}}), not {}",
                crate::strict::type_name(value)
            ),
        ));
        return Vec::new();
    };
    let mut mounts = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let field = path.index(i);
        match entry {
            Value::String(text) => {
                let mut one = read_flags(text, &field, problems);
                mounts.append(&mut one);
            }
            other => mounts.extend(read_object(other, &field, problems)),
        }
    }
    mounts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(problems: &[Problem]) -> Vec<String> {
        problems.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn issue16_mounts_read_as_kpt_and_kustomize_write_them() {
        let mut problems = Vec::new();
        let path = FieldPath::parse("spec.functions.mounts");
        let mounts = read_list(
            &json!([{"type": "bind", "src": "data", "dst": "/data"}, "type=bind,src=./out,dst=/out,rw=true"]),
            &path,
            &mut problems,
        );
        assert!(problems.is_empty(), "{:?}", messages(&problems));
        assert_eq!(
            mounts,
            vec![
                Mount {
                    src: "data".into(),
                    dst: "/data".into(),
                    rw: false
                },
                Mount {
                    src: "./out".into(),
                    dst: "/out".into(),
                    rw: true
                },
            ]
        );
        assert_eq!(mounts[1].flag(), "type=bind,src=./out,dst=/out,rw=true");
    }

    #[test]
    fn issue16_mounts_outside_the_package_or_relative_in_the_container_are_refused() {
        let mut problems = Vec::new();
        let path = FieldPath::parse("data.mounts");
        let mounts = read_flags(
            "type=bind,src=/etc,dst=/etc; type=bind,src=../x,dst=/x;type=volume,src=a,dst=/a;src=a,dst=a",
            &path,
            &mut problems,
        );
        assert!(mounts.is_empty());
        let text = messages(&problems).join("\n");
        assert!(
            text.contains("data.mounts[0]")
                && text.contains("src \"/etc\" must be a relative path inside the package"),
            "{text}"
        );
        assert!(
            text.contains("src \"../x\" must be a relative path"),
            "{text}"
        );
        assert!(text.contains("only type=bind"), "{text}");
        assert!(
            text.contains("dst \"a\" must be an absolute path"),
            "{text}"
        );
    }
}

//! `scripts/check-vendor` (issue 20): `vendor/minijinja` is the released crate plus
//! `krm-catalog.patch`, and the check fails when one byte of a copy of it changes.

use std::path::Path;
use std::process::{Command, Output};

use crate::util::{root, skipped, stderr, stdout, test_name};

/// The exit status of `scripts/check-vendor` when cargo cannot fetch the release.
const CANNOT_FETCH: i32 = 3;

fn check(dir: &Path) -> Output {
    Command::new(root().join("scripts/check-vendor"))
        .arg("--vendor")
        .arg(dir)
        .output()
        .expect("run scripts/check-vendor")
}

/// Copy the directory `from` to `to` (files and folders: the vendored tree has no links).
fn copy_tree(from: &Path, to: &Path) {
    fs_err::create_dir_all(to).expect("mkdir");
    for entry in fs_err::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs_err::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Flip the lowest bit of the byte in the middle of `file` (twice restores it).
fn flip_one_byte(file: &Path) {
    let mut bytes = fs_err::read(file).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    fs_err::write(file, bytes).expect("write");
}

#[test]
fn issue20_check_vendor_passes_on_a_copy_and_fails_on_one_changed_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("minijinja");
    copy_tree(&root().join("vendor/minijinja"), &copy);
    let out = check(&copy);
    if out.status.code() == Some(CANNOT_FETCH) {
        let err = stderr(&out);
        let cause = err.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        skipped(
            test_name!(),
            &format!(
                "cargo cannot fetch minijinja from the registry: {}",
                cause.trim()
            ),
        );
        return;
    }
    let text = |out: &Output| format!("{}{}", stdout(out), stderr(out));
    assert!(
        out.status.success(),
        "the unchanged copy passes:\n{}",
        text(&out)
    );
    // A file the patch leaves alone, one it adds, our notes (the patch adds them too), and the
    // patch itself (checked by being regenerated).
    for file in [
        "LICENSE",
        "src/budget.rs",
        "PATCHES.md",
        "krm-catalog.patch",
    ] {
        flip_one_byte(&copy.join(file));
        let out = check(&copy);
        let said = text(&out);
        assert_eq!(
            out.status.code(),
            Some(1),
            "a byte changed in {file}:\n{said}"
        );
        assert!(said.contains("FAILED"), "{file}:\n{said}");
        if file != "krm-catalog.patch" {
            assert!(
                said.contains(&format!("changed: {file}")),
                "{file}:\n{said}"
            );
        }
        flip_one_byte(&copy.join(file));
    }
}

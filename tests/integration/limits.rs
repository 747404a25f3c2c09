//! Resource limits on hostile input (issue 9): templates that would allocate or run without
//! bound, run under an address-space limit so a regression fails the test instead of taking
//! the machine down.

use std::process::{Command, Stdio};

use crate::util::{bin, root, run_env, skipped, stderr, stdout};

/// Run the binary under `prlimit --as=<bytes>`; `None` when prlimit is missing.
fn run_limited(
    address_space: u64,
    input: &str,
    env: &[(&str, &str)],
    test: &str,
) -> Option<std::process::Output> {
    if Command::new("prlimit")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        skipped(
            test,
            "`prlimit` (util-linux) is not installed on this machine",
        );
        return None;
    }
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={address_space}"))
        .arg("--")
        .arg(bin())
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn prlimit");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = input.to_owned();
    let writer = std::thread::spawn(move || {
        use std::io::Write as _;
        let _ = pipe.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    Some(out)
}

#[test]
fn issue9_f2_templates_stop_at_the_memory_budget_under_an_address_space_limit() {
    let input =
        fs_err::read_to_string(root().join("testdata/golden/err-template-budget/input.yaml"))
            .expect("golden input");
    let Some(out) = run_limited(
        1_000_000_000,
        &input,
        &[],
        "issue9_f2_templates_stop_at_the_memory_budget_under_an_address_space_limit",
    ) else {
        return;
    };
    let (stdout, stderr) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(stdout.contains("kind: ResourceList"), "{stdout}");
    for (template, line) in [
        ("indent-max", 4),
        ("indent-4g", 4),
        ("doubling", 3),
        ("replace", 3),
        ("format", 4),
        ("list-growth", 3),
        ("repeat", 3),
        ("nested", 8),
        ("captured", 3),
        ("toyaml", 10),
    ] {
        let wanted = format!(
            "template charts/greedy/{template}.yaml.j2:{line}: template exceeded its memory budget"
        );
        assert!(stderr.contains(&wanted), "missing {wanted:?} in:\n{stderr}");
    }
    assert!(!stderr.contains("fine.yaml.j2"), "{stderr}");
}

#[test]
fn issue9_f2_templates_stop_at_the_time_limit() {
    let input = "apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: kubara.io/v1alpha1
  kind: ServiceDefinition
  metadata:
    name: slow
  spec:
    chartPath: slow
    status: enabled
    templates:
      slow.yaml.j2: |
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: slow
        data:
        {%- for i in range(5000) %}
          k{{ i }}: \"{{ i }}\"
        {%- endfor %}
- apiVersion: services.krm-catalog.dev/v1alpha1
  kind: Slow
  metadata:
    name: s
functionConfig:
  apiVersion: krm-catalog.dev/v1alpha1
  kind: ResolveCatalog
  metadata:
    name: x
  spec:
    builtin: false
";
    // The same template renders within the default limit ...
    let out = run_env(&[], input, &root(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // ... and stops at a limit of zero seconds, naming template and line.
    let out = run_env(
        &[],
        input,
        &root(),
        &[("KRM_CATALOG_TEMPLATE_TIMEOUT", "0")],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("template charts/slow/slow.yaml.j2:6: template ran longer than its time limit of 0 seconds; fix the template or raise KRM_CATALOG_TEMPLATE_TIMEOUT"),
        "{err}"
    );
}

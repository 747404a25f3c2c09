//! Resource limits on hostile input (issue 9): templates that would allocate or run without
//! bound, run under an address-space limit so a regression fails the test instead of taking
//! the machine down.

use std::process::{Command, Stdio};

use crate::util::{bin, root, run_env, skipped, stderr, stdout, test_name};

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
    let Some(out) = run_limited(1_000_000_000, &input, &[], test_name!()) else {
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
    let wanted =
        "template charts/greedy/output.yaml.j2:2: output is more than the limit of 16777216 bytes";
    assert!(stderr.contains(wanted), "missing {wanted:?} in:\n{stderr}");
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

/// Peak RSS in bytes of the binary on `input`, from GNU time; `None` when it is missing.
fn peak_rss(input: &std::path::Path, test: &str) -> Option<u64> {
    if !std::path::Path::new("/usr/bin/time").exists() {
        skipped(
            test,
            "GNU time (`/usr/bin/time`) is not installed on this machine",
        );
        return None;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let rss_file = dir.path().join("rss");
    let out = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&rss_file)
        .arg(bin())
        .stdin(Stdio::from(
            fs_err::File::open(input).expect("input").into_parts().0,
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("run under /usr/bin/time");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kib: u64 = fs_err::read_to_string(&rss_file)
        .expect("rss")
        .split_whitespace()
        .last()
        .and_then(|s| s.parse().ok())
        .expect("a number");
    Some(kib * 1024)
}

fn generate(shape: &str, target: usize) -> String {
    use std::fmt::Write as _;
    let mut text = String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n");
    text.push_str(if shape == "flow" {
        "items: [\n"
    } else {
        "items:\n"
    });
    let mut i = 0;
    while text.len() < target {
        let name = format!("app-{i:06}");
        let _ = match shape {
            "flow" => write!(
                text,
                "{}{{apiVersion: v1, kind: ConfigMap, metadata: {{name: {name}, namespace: team-{}, labels: {{app: {name}, part-of: shop}}}}, data: {{LOG_LEVEL: info, FLAG: 'on', url: 'jdbc:postgresql://db-{}.svc:5432/shop'}}}}",
                if i == 0 { "" } else { ",\n" },
                i % 97,
                i % 13
            ),
            "small" => writeln!(
                text,
                "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c-{i:07}\n  data: {{k: v}}"
            ),
            _ => writeln!(
                text,
                "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: {name}\n    namespace: team-{}\n    labels: {}\n  data:\n    LOG_LEVEL: info\n    FLAG: 'on'\n    url: jdbc:postgresql://db-{}.svc:5432/shop\n    application.properties: |\n      server.port=8080\n      logging.level.root=INFO",
                i % 97,
                if i == 0 {
                    "&id001\n      app: shop\n      tier: backend"
                } else {
                    "*id001"
                },
                i % 13
            ),
        };
        i += 1;
    }
    if shape == "flow" {
        text.push_str("\n]\n");
    }
    text
}

#[test]
fn issue9_f8_peak_memory_stays_near_the_input_size() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Input size; the binary's own footprint (about 17 MiB for a debug build) is allowed on top.
    let size = 8 << 20;
    let base = 24 << 20;
    // 10x on every shape, many tiny items (80 bytes each) included: an item the function leaves
    // alone is held as a compact skeleton (`resource_list::Skeleton`, about 90 bytes).
    for (shape, factor) in [("flow", 10), ("anchored", 10), ("small", 10)] {
        let path = dir.path().join(format!("{shape}.yaml"));
        fs_err::write(&path, generate(shape, size)).expect("write input");
        let Some(rss) = peak_rss(&path, test_name!()) else {
            return;
        };
        let limit = factor * size as u64 + base;
        assert!(
            rss <= limit,
            "{shape}: peak RSS {} MiB for {} MiB of input, more than {factor}x",
            rss >> 20,
            size >> 20
        );
    }
}

/// Issue 13: stdin that is a regular file is read into a buffer of its size; the output is the
/// one a pipe gives, for block and flow layouts, and an input above the size limit is still
/// refused.
#[test]
fn issue13_stdin_from_a_file_reads_as_from_a_pipe() {
    let dir = tempfile::tempdir().expect("tempdir");
    let from_file = |path: &std::path::Path, env: &[(&str, &str)]| {
        Command::new(bin())
            .envs(env.iter().copied())
            .env_remove("RUST_LOG")
            .stdin(Stdio::from(
                fs_err::File::open(path).expect("input").into_parts().0,
            ))
            .output()
            .expect("run")
    };
    for shape in ["flow", "anchored"] {
        let input = generate(shape, 64 << 10);
        let path = dir.path().join(format!("{shape}.yaml"));
        fs_err::write(&path, &input).expect("write input");
        let piped = run_env(&[], &input, dir.path(), &[]);
        let filed = from_file(&path, &[]);
        assert!(filed.status.success(), "{shape}: {}", stderr(&filed));
        assert_eq!(stdout(&filed), stdout(&piped), "{shape}");
        assert!(stdout(&filed).contains("name: app-000100"), "{shape}");
    }
    let path = dir.path().join("anchored.yaml");
    let out = from_file(&path, &[("KRM_CATALOG_MAX_INPUT_BYTES", "1000")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

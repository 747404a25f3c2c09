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

/// Issue 13: a non-PIE link would keep ~3 MiB less resident at startup (the loader's
/// relocations), but the binary reads untrusted packages and links crates with `unsafe` code
/// (the Starlark heap, gix): its code and data stay randomised. The ELF type is at byte 16;
/// a PIE and a static-pie are both `ET_DYN`.
#[test]
fn issue13_the_binary_stays_position_independent() {
    const ET_DYN: u16 = 3;
    if !cfg!(target_os = "linux") {
        skipped(test_name!(), "ELF check, Linux only");
        return;
    }
    let header = fs_err::read(bin()).expect("read the binary");
    assert_eq!(
        header.get(16..18).map(|t| u16::from_le_bytes([t[0], t[1]])),
        Some(ET_DYN),
        "{} is not ET_DYN (position independent)",
        bin().display()
    );
}

/// The section headers and symbols of an ELF64 little-endian file, as far as the layout tests
/// below read them. Offsets come from the file: arithmetic saturates and reads past the end
/// give 0, so a corrupt file fails an assertion instead of panicking here.
struct Elf {
    bytes: Vec<u8>,
}

/// One section header.
struct Section {
    name: String,
    kind: u32,
    offset: usize,
    size: usize,
    link: usize,
    entry_size: usize,
}

impl Elf {
    fn read(path: &std::path::Path) -> Elf {
        let bytes = fs_err::read(path).expect("read the binary");
        assert_eq!(
            bytes.get(..5),
            Some(&b"\x7fELF\x02"[..]),
            "not an ELF64 file"
        );
        Elf { bytes }
    }

    fn uint(&self, at: usize, width: usize) -> usize {
        let mut value = [0u8; 8];
        if let Some(b) = self.bytes.get(at..at.saturating_add(width)) {
            value[..width].copy_from_slice(b);
        }
        usize::try_from(u64::from_le_bytes(value)).unwrap_or(usize::MAX)
    }

    fn cstr(&self, at: usize) -> String {
        let tail = self.bytes.get(at..).unwrap_or_default();
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        String::from_utf8_lossy(&tail[..end]).into_owned()
    }

    /// Up to `count` table entries of `entry_size` bytes from `offset`, never more than fit.
    fn entries(&self, offset: usize, count: usize, entry_size: usize) -> Vec<usize> {
        let fit = self.bytes.len() / entry_size.max(1);
        (0..count.min(fit))
            .map(|i| offset.saturating_add(i.saturating_mul(entry_size)))
            .collect()
    }

    fn sections(&self) -> Vec<Section> {
        let (table, entry_size) = (self.uint(0x28, 8), self.uint(0x3A, 2));
        let (count, names) = (self.uint(0x3C, 2), self.uint(0x3E, 2));
        let headers = self.entries(table, count, entry_size);
        let names_at = headers
            .get(names)
            .map_or(0, |h| self.uint(h.saturating_add(0x18), 8));
        headers
            .iter()
            .map(|&h| Section {
                name: self.cstr(names_at.saturating_add(self.uint(h, 4))),
                kind: u32::try_from(self.uint(h.saturating_add(4), 4)).unwrap_or(0),
                offset: self.uint(h.saturating_add(0x18), 8),
                size: self.uint(h.saturating_add(0x20), 8),
                link: self.uint(h.saturating_add(0x28), 4),
                entry_size: self.uint(h.saturating_add(0x38), 8),
            })
            .collect()
    }

    /// `(name, section index)` of every symbol in `.symtab` (none in a stripped binary).
    fn symbols(&self) -> Vec<(String, usize)> {
        const SHT_SYMTAB: u32 = 2;
        let sections = self.sections();
        let Some(table) = sections.iter().find(|s| s.kind == SHT_SYMTAB) else {
            return Vec::new();
        };
        let strings = sections.get(table.link).map_or(0, |s| s.offset);
        let count = table.size / table.entry_size.max(1);
        self.entries(table.offset, count, table.entry_size)
            .into_iter()
            .map(|sym| {
                (
                    self.cstr(strings.saturating_add(self.uint(sym, 4))),
                    self.uint(sym.saturating_add(6), 2),
                )
            })
            .collect()
    }
}

/// Whether build.rs linked the binary with `what` (its decision, `yes` or `no: <reason>`, reaches
/// the tests at compile time); says why not otherwise.
fn linked(test: &str, decision: Option<&str>, what: &str) -> bool {
    let decision = decision.unwrap_or("no: build.rs did not say");
    let Some(reason) = decision.strip_prefix("no: ") else {
        return true;
    };
    skipped(
        test,
        &format!("the binary is linked without {what}: {reason}"),
    );
    false
}

/// Whether `name` matches a linker-script pattern whose only wildcard is `*`.
fn glob_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Issue 13: the binary's relative relocations are packed (`DT_RELR`, `build.rs`), so the
/// loader reads a few KB instead of 1.9 MB of `.rela.dyn` at every start. Read from the ELF64
/// section headers: the `SHT_DYNAMIC` section must hold a `DT_RELR` entry and `.rela.dyn`
/// must be small.
#[test]
fn issue13_the_binary_packs_its_relocations() {
    const SHT_RELA: u32 = 4;
    const SHT_DYNAMIC: u32 = 6;
    const DT_RELR: usize = 36;
    if !linked(
        test_name!(),
        option_env!("KRM_CATALOG_RELOCS_PACKED"),
        "DT_RELR",
    ) {
        return;
    }
    let elf = Elf::read(&bin());
    let mut tags = Vec::new();
    let mut rela_bytes = 0;
    for section in elf.sections() {
        match section.kind {
            SHT_DYNAMIC => tags.extend(
                elf.entries(section.offset, section.size / 16, 16)
                    .into_iter()
                    .map(|entry| elf.uint(entry, 8)),
            ),
            SHT_RELA => rela_bytes += section.size,
            _ => {}
        }
    }
    assert!(
        tags.contains(&DT_RELR),
        "{} has no DT_RELR entry (dynamic tags {tags:?}): build.rs links with -z pack-relative-relocs",
        bin().display()
    );
    assert!(
        rela_bytes < 256 << 10,
        "{}: {rela_bytes} bytes of RELA relocations left",
        bin().display()
    );
}

/// Issue 13: the code every run executes is gathered in `.text.hot` (`link/hot-code.ld`, passed
/// by `build.rs`), so a run keeps that code resident instead of the 64 KiB around each function
/// scattered over `.text`. The section must hold the reader, the classifier and the writer by
/// name, and most of the script's patterns must match a function in it: a stale script (renamed
/// functions, legacy symbol names) fails here, and `bench/hot-code` regenerates it.
#[test]
fn issue13_the_binary_gathers_its_hot_code() {
    if !linked(
        test_name!(),
        option_env!("KRM_CATALOG_HOT_CODE_LINKED"),
        "link/hot-code.ld",
    ) {
        return;
    }
    let elf = Elf::read(&bin());
    let Some(hot) = elf.sections().iter().position(|s| s.name == ".text.hot") else {
        panic!(
            "{} has no .text.hot section although build.rs linked it with link/hot-code.ld",
            bin().display()
        );
    };
    let mut gathered: Vec<String> = elf
        .symbols()
        .into_iter()
        .filter(|(_, section)| *section == hot)
        .map(|(name, _)| name)
        .collect();
    gathered.sort();
    for function in [
        "4yaml15split_documents",
        "13resource_list4read14read_skeletons",
        "8pipeline8classify8classify",
        "13resource_list5write12write_pieces",
    ] {
        assert!(
            gathered
                .iter()
                .any(|name| name.starts_with("_R") && name.contains(function)),
            "no function named like `{function}` in .text.hot (is link/hot-code.ld stale? run bench/hot-code)"
        );
    }
    // A debug build inlines less than the release build the script was made from, so not every
    // pattern has its function here; a stale script matches far fewer.
    let script = fs_err::read_to_string(root().join("link/hot-code.ld")).expect("read the script");
    let patterns: Vec<&str> = script
        .lines()
        .filter_map(|l| l.trim().strip_prefix("*(.text.")?.split(' ').next())
        .collect();
    let matched = patterns
        .iter()
        .filter(|p| {
            let literal = p.split('*').next().unwrap_or_default();
            let from = gathered.partition_point(|name| name.as_str() < literal);
            gathered[from..]
                .iter()
                .take_while(|name| name.starts_with(literal))
                .any(|name| glob_matches(p, name))
        })
        .count();
    assert!(
        matched * 2 >= patterns.len(),
        "only {matched} of {} patterns of link/hot-code.ld match a function in .text.hot: run bench/hot-code",
        patterns.len()
    );
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

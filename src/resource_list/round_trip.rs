//! The pass-through property the fuzz target and the seed-corpus tests check.

use serde_json::Value;

use super::{Item, read, read_owned, write};

/// How a round trip went wrong: what differed, for a human (a fuzzer's crash report).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Violation(pub String);

impl From<String> for Violation {
    fn from(description: String) -> Self {
        Self(description)
    }
}

/// The pass-through property the fuzz target (`fuzz/fuzz_targets/resource_list.rs`) and the
/// seed-corpus tests check: reading never panics; the lazy and the eager reader agree; what
/// [`write`] produces reads back to the same items, whether the items came from the eager
/// reader or as skeletons with verbatim text. `Err` describes a violation.
pub fn check_round_trip(input: &str) -> Result<(), Violation> {
    let eager = read(input);
    let lazy = read_owned(input.to_owned());
    let (eager, lazy) = match (eager, lazy) {
        (Ok(eager), Ok(lazy)) => (eager, lazy),
        (Err(a), Err(b)) if a == b => return Ok(()),
        (a, b) => {
            return Err(Violation(format!(
                "eager and lazy readers disagree: {:?} vs {:?}",
                a.map(|l| l.items.len()),
                b.map(|l| l.items.len())
            )));
        }
    };
    let mut hydrated = lazy.items.clone();
    if let Some(v) = &lazy.verbatim {
        let (at, spans): (Vec<usize>, Vec<super::Span>) = v
            .ranges
            .iter()
            .enumerate()
            .filter_map(|(i, span)| Some((i, (*span)?)))
            .unzip();
        for ((i, span), full) in at.into_iter().zip(&spans).zip(v.items_at(&spans)) {
            let full =
                full.ok_or_else(|| format!("verbatim range {span:?} does not parse to an item"))?;
            if let Some(item) = hydrated.get_mut(i) {
                *item = Item::from(full);
            }
        }
    }
    let hydrated: Vec<Value> = hydrated.into_iter().map(Item::into_value).collect();
    if hydrated != eager.items {
        return Err(Violation(
            "hydrated skeletons differ from the eagerly read items".to_owned(),
        ));
    }
    if lazy.function_config != eager.function_config {
        return Err(Violation(
            "the readers disagree on functionConfig".to_owned(),
        ));
    }
    for (which, list) in [("eager", eager.clone().into()), ("lazy", lazy)] {
        let out = write::<Item>(list, None);
        let back =
            read(&out).map_err(|e| format!("{which} output does not read back: {e}\n{out}"))?;
        if back.items != eager.items {
            return Err(Violation(format!(
                "{which} output has other items than the input:\n{out}"
            )));
        }
        if back.function_config != eager.function_config {
            return Err(Violation(format!(
                "{which} output has another functionConfig:\n{out}"
            )));
        }
    }
    Ok(())
}

/// The fuzz target's property in the normal test suite: over the seed corpus, the golden
/// inputs, and byte-level mutations of them (no nightly or cargo-fuzz needed).
#[cfg(test)]
mod fuzz_corpus {
    use super::*;
    use proptest::prelude::*;

    fn seeds() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut seeds = Vec::new();
        let corpus = root.join("fuzz/corpus/resource_list");
        for entry in fs_err::read_dir(&corpus).unwrap() {
            let path = entry.unwrap().path();
            seeds.push((
                path.display().to_string(),
                fs_err::read_to_string(&path).unwrap(),
            ));
        }
        for entry in fs_err::read_dir(root.join("testdata/golden")).unwrap() {
            let path = entry.unwrap().path().join("input.yaml");
            if let Ok(text) = fs_err::read_to_string(&path) {
                seeds.push((path.display().to_string(), text));
            }
        }
        seeds.sort();
        assert!(seeds.len() > 20, "seed corpus is missing");
        seeds
    }

    /// Run the check with the main thread's stack size: debug builds of the parser need more
    /// than a test thread's 2 MiB for the deepest nesting we accept (`err-yaml-too-deep`).
    fn checked(text: String) -> Result<(), Violation> {
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || check_round_trip(&text))
            .map_err(|e| e.to_string())?
            .join()
            .map_err(|_| "the check panicked".to_owned())?
    }

    #[test]
    fn seed_corpus_round_trips() {
        for (name, text) in seeds() {
            if let Err(problem) = checked(text) {
                panic!("{name}: {problem}");
            }
        }
    }

    /// A mutation: at a position (a fraction of the length), delete some bytes and insert a
    /// snippet of YAML syntax.
    fn mutation() -> impl Strategy<Value = (f64, usize, &'static str)> {
        (
            0.0f64..1.0,
            0usize..4,
            prop::sample::select(
                &[
                    "",
                    " ",
                    "\n",
                    "-",
                    "- ",
                    ":",
                    ": ",
                    "#",
                    " #",
                    "&a ",
                    "*a",
                    "!!str ",
                    "{",
                    "}",
                    "[",
                    "]",
                    ",",
                    "'",
                    "\"",
                    "items:",
                    "items :",
                    "\n- ",
                    "\n  ",
                    "? ",
                    "|\n",
                    "---\n",
                    "\t",
                    "\r\n",
                    "items:#x:\n- kind: Evil\n",
                ][..],
            ),
        )
    }

    fn apply(text: &str, (at, delete, insert): (f64, usize, &str)) -> String {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let mut pos = ((text.len() as f64) * at) as usize;
        while !text.is_char_boundary(pos) {
            pos -= 1;
        }
        let mut end = (pos + delete).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        format!("{}{insert}{}", &text[..pos], &text[end..])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn mutated_seeds_round_trip(
            seed in any::<prop::sample::Index>(),
            mutations in prop::collection::vec(mutation(), 1..4),
        ) {
            static SEEDS: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
            let seeds = SEEDS.get_or_init(seeds);
            let (name, text) = &seeds[seed.index(seeds.len())];
            let mut text = text.clone();
            for m in mutations {
                text = apply(&text, m);
            }
            if let Err(problem) = checked(text.clone()) {
                return Err(TestCaseError::fail(format!("{name} mutated: {problem}\ninput:\n{text}")));
            }
        }
    }
}

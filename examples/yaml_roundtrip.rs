//! Bare parse + emit of stdin with the crate's YAML door, nothing else: the baseline that
//! `bench/run` compares function-mode pass-through against (SPEC §9).
//!
//! `cargo build --release --example yaml_roundtrip && target/release/examples/yaml_roundtrip < list.yaml`

use std::io::{self, Read, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut text = String::new();
    if let Err(err) = io::stdin().read_to_string(&mut text) {
        eprintln!("yaml_roundtrip: cannot read stdin: {err}");
        return ExitCode::FAILURE;
    }
    let value = match krm_catalog::yaml::parse(&text) {
        Ok(value) => value,
        Err(err) => {
            eprintln!("yaml_roundtrip: {err}");
            return ExitCode::FAILURE;
        }
    };
    let out = krm_catalog::yaml::emit(&value);
    let mut stdout = io::stdout().lock();
    if let Err(err) = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        eprintln!("yaml_roundtrip: cannot write stdout: {err}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

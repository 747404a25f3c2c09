//! The `krm-catalog` binary: everything lives in the library; see `cli::main`.

fn main() -> std::process::ExitCode {
    krm_catalog::cli::main()
}

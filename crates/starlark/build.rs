//! Packs the binary's relative relocations (`DT_RELR`), as krm-catalog's own `build.rs` does
//! (the same condition and the same `KRM_CATALOG_PACK_RELOCS=0` opt-out for targets with glibc
//! older than 2.36): 0.65 MB of `.rela.dyn` become a few KB, which keeps the image with both
//! binaries under 24 MB. `.ci/image` checks it with `readelf -d`.

fn main() {
    println!("cargo:rerun-if-env-changed=KRM_CATALOG_PACK_RELOCS");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let arch = var("CARGO_CFG_TARGET_ARCH");
    if var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && (arch == "x86_64" || arch == "aarch64")
        && var("KRM_CATALOG_PACK_RELOCS") != "0"
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

//! The ResourceList reader and the pass-through round trip: read -> write -> read gives the
//! same items, from the eager reader and from the lazy one (skeletons + verbatim text).
//! The same property runs in the normal test suite over `fuzz/corpus/resource_list/` and
//! the golden inputs (`resource_list::fuzz_corpus` tests).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Err(problem) = krm_catalog::resource_list::check_round_trip(text)
    {
        panic!("{problem}\ninput:\n{text}");
    }
});

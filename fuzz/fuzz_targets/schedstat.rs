//! /proc/schedstat text (what `report` reads from a run directory).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = schedlab_output::schedstat::parse_schedstat(text);
});

//! The rt-app JSON dialect and its lowering: any bytes as a workload file.
//! A file that loads must also build a simulator (set-up checks, program
//! validation) without a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::{Sim, SimConfig};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(loaded) = schedlab_workload::load_rtapp("fuzz.json", text, 2) else {
        return;
    };
    // Building a simulator allocates per thread: stay small.
    if loaded.workload.tasks.len() > 256 {
        return;
    }
    let m = preset("vm-2cpu").expect("preset");
    let _ = Sim::new(m, &loaded.workload, SimConfig::default(), NullSink);
});

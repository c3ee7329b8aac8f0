//! ftrace text (`trace-cmd report` / tracefs `trace`) for replay.
#![no_main]
use libfuzzer_sys::fuzz_target;
use schedlab_workload::replay::{replay_trace, ReplayOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = replay_trace(text, "fuzz.txt", &ReplayOptions::default());
});

//! Machine files (`--machine FILE.toml`) and the inline form
//! (`--machine layout:...`): any text is read or refused, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use schedlab_core::machine::layout_file::{from_layout_spec, from_toml};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = from_toml("m.toml", text);
    if let Some(line) = text.lines().next() {
        let _ = from_layout_spec(line);
    }
});

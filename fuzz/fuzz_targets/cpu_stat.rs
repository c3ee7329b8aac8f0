//! cgroup `cpu.stat` text (what `report` reads from a run directory).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(s) = schedlab_output::cgroup::read_cpu_stat(text) {
        // What is read writes back, and that text reads and writes the
        // same (absent keys are written as 0, so the first round may add
        // them).
        let text = schedlab_output::cgroup::write_cpu_stat(&s);
        let again = schedlab_output::cgroup::read_cpu_stat(&text).expect("written text reads");
        assert_eq!(schedlab_output::cgroup::write_cpu_stat(&again), text);
    }
});

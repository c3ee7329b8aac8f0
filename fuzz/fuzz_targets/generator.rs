//! Generator specs (`hackbench:...`, `oltp:...`): any text after `run`.
//! The CPU count comes from the first byte.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&cpus, rest)) = data.split_first() else {
        return;
    };
    let Ok(spec) = std::str::from_utf8(rest) else {
        return;
    };
    let nr_cpus = 1 + cpus as usize;
    // Specs past 10 000 threads are refused here (the `--max-tasks` limit,
    // whose refusal is fuzzed too): an OLTP backend holds 32 pre-drawn
    // transactions, ~42 KB, so the default cap of 100 000 threads builds
    // ~4.2 GB, past libFuzzer's 2 GB RSS limit (docs/limits.md).
    schedlab_workload::limits::set_max_tasks(10_000);
    let _ = schedlab_workload::generators::unknown_generator(spec);
    let _ = schedlab_workload::generators::generator_name(spec);
    let _ = schedlab_workload::generators::generator(spec, nr_cpus);
});

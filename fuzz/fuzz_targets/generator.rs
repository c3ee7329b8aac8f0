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
    let _ = schedlab_workload::generators::unknown_generator(spec);
    let _ = schedlab_workload::generators::generator_name(spec);
    let _ = schedlab_workload::generators::generator(spec, nr_cpus);
});

//! Generator specs (`hackbench:...`, `oltp:...`, `schbench:...`, `specjbb:...`): any text
//! after `run`. The CPU count comes from the first byte.
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
    // The default thread cap (100 000, `--max-tasks`), and a memory budget
    // for the threads' programs under libFuzzer's 2 GB RSS limit: 1 GiB
    // counted twice, so at most 512 MiB built (an `oltp:` backend is
    // ~35 KiB: ~15 000 of them), as the CLI sets the machine's memory.
    // The budget's refusal is fuzzed too.
    schedlab_workload::limits::set_max_tasks(schedlab_workload::limits::DEFAULT_MAX_TASKS);
    schedlab_workload::limits::set_max_build_bytes(1 << 30);
    let _ = schedlab_workload::generators::unknown_generator(spec);
    let _ = schedlab_workload::generators::generator_name(spec);
    let _ = schedlab_workload::generators::generator(spec, nr_cpus);
});

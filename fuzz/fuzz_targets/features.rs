//! `--features` strings. A list that parses also runs a small simulation
//! (2 ms on 2 CPUs with --check), so every feature combination the
//! fuzzer reaches meets the model's invariants.
#![no_main]
use libfuzzer_sys::fuzz_target;
use schedlab_core::features::Features;
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::{Sim, SimConfig};

const WORKLOAD: &str = r#"{"tasks": {"a": {"instance": 3, "run": 700, "sleep": 300},
 "b": {"run": 2000, "timer": {"ref": "t", "period": 2500}}},
 "global": {"calibration": 100}}"#;

fuzz_target!(|data: &[u8]| {
    let Ok(list) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(features) = Features::parse(list) else {
        return;
    };
    let _ = features.debugfs_line();
    let loaded = schedlab_workload::load_rtapp("w.json", WORKLOAD, 2).expect("workload");
    let cfg = SimConfig {
        features,
        check: true,
        duration_ns: Some(2_000_000),
        ..SimConfig::default()
    };
    let m = preset("vm-2cpu").expect("preset");
    let Ok(mut sim) = Sim::new(m, &loaded.workload, cfg, NullSink) else {
        return;
    };
    let res = sim.run();
    assert!(res.violation.is_none(), "{list:?}: {:?}", res.violation);
});

//! `--sysctl NAME=VALUE` settings (and a kernel release to resolve them
//! against). The first byte picks the release (or none: the default), the
//! rest is one setting per line, applied in order as the CLI applies
//! repeated `--sysctl` flags. A list that is accepted must give tunables
//! every reader of them can use: their values on 1, 2 and 4096 CPUs, the
//! RR timeslice at every HZ, and a small simulation (2 ms on 2 CPUs with
//! --check: fair, RR and FIFO tasks and a group with a quota, under both
//! fair classes) that keeps the model's invariants.
#![no_main]
use libfuzzer_sys::fuzz_target;
use schedlab_core::features::FairClass;
use schedlab_core::kernels::{resolve, KERNELS};
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::{Sim, SimConfig};

const WORKLOAD: &str = r#"{"taskgroups": {"/q": {"cpu.max": "1000 5000"}},
 "tasks": {"a": {"instance": 2, "run": 700, "sleep": 300},
 "q": {"taskgroup": "/q", "run": 3000},
 "rr": {"policy": "SCHED_RR", "priority": 5, "run": 900, "sleep": 100},
 "b": {"policy": "SCHED_FIFO", "priority": 9, "run": 400, "timer": {"ref": "t", "period": 1000}}},
 "global": {"calibration": 100}}"#;

fuzz_target!(|data: &[u8]| {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let kernel = KERNELS.get(k as usize % (KERNELS.len() + 1)).copied();
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let items: Vec<String> = text.lines().map(str::to_string).collect();
    let Ok(opts) = resolve(kernel, "", &[], &items) else {
        return;
    };
    for n in [1, 2, 4096] {
        let _ = opts.tunables.values(n);
    }
    for hz in [100u64, 250, 300, 1000, 10_000] {
        assert!(opts.tunables.rr_timeslice_ns(1_000_000_000 / hz) > 0);
    }
    let loaded = schedlab_workload::load_rtapp("w.json", WORKLOAD, 2).expect("workload");
    for cfs in [false, true] {
        let mut features = opts.features.clone();
        if cfs {
            features.fair_class = FairClass::Cfs;
        }
        let cfg = SimConfig {
            features,
            tunables: opts.tunables.clone(),
            kernel: opts.kernel,
            check: true,
            duration_ns: Some(2_000_000),
            ..SimConfig::default()
        };
        let Ok(mut sim) = Sim::new(preset("vm-2cpu").expect("preset"), &loaded.workload, cfg, NullSink)
        else {
            return;
        };
        let res = sim.run();
        assert!(res.violation.is_none(), "{kernel:?} {items:?}: {:?}", res.violation);
    }
});

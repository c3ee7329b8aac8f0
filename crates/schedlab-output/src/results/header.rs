//! The lines that open a run's printout: what ran, where, under which
//! release, and what differs from that release's defaults.

use schedlab_core::config::SimConfig;
use schedlab_core::features::FeatureValue;
use schedlab_core::kernels;

/// What a header names besides the configuration.
pub struct HeaderFacts<'a> {
    /// The workload as given (a file or a generator spec).
    pub workload: &'a str,
    /// The machine as given (`--machine`).
    pub machine: &'a str,
    /// Its CPU count.
    pub cpus: usize,
    /// `--machine` was left to its default.
    pub default_machine: bool,
}

/// `# ...` lines: the workload, machine, kernel release, HZ, preemption
/// model, seed and duration; then the features and tunables that differ
/// from the release's defaults (or that none do).
pub fn run_header(f: &HeaderFacts, cfg: &SimConfig) -> Vec<String> {
    let length = match cfg.duration_ns {
        Some(ns) => format!("{} s", schedlab_core::time::fmt_secs_exact(ns)),
        None => "until the workload ends".to_string(),
    };
    let machine = if f.default_machine {
        format!(
            "{} ({} CPUs; the default machine, --machine picks another)",
            f.machine, f.cpus
        )
    } else {
        format!("{} ({} CPUs)", f.machine, f.cpus)
    };
    let mut lines = vec![format!(
        "# {} on {}: kernel {}, HZ {}, preempt {}, seed {}, {}",
        f.workload, machine, cfg.kernel, cfg.hz, cfg.preempt, cfg.seed, length
    )];
    let changed = differences(cfg);
    lines.push(if changed.is_empty() {
        format!("# features and tunables: {}'s defaults", cfg.kernel)
    } else {
        format!("# not {}'s defaults: {}", cfg.kernel, changed.join(", "))
    });
    lines
}

/// Features (`NAME`, `NO_NAME`, `NAME=value`) and tunables (`name=value`)
/// that differ from the defaults of `cfg.kernel`.
pub fn differences(cfg: &SimConfig) -> Vec<String> {
    let Some((features, tunables)) = kernels::defaults(cfg.kernel) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for ((name, v), (_, d)) in cfg.features.values().into_iter().zip(features.values()) {
        if v != d {
            out.push(match v {
                FeatureValue::Bool(true) => name.to_string(),
                FeatureValue::Bool(false) => format!("NO_{name}"),
                FeatureValue::Enum(e) => format!("{name}={e}"),
            });
        }
    }
    // Tunables as set, before scaling by the CPU count.
    for ((name, v), (_, d)) in cfg.tunables.values(1).into_iter().zip(tunables.values(1)) {
        if v != d {
            out.push(format!("{name}={v}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(kernel: &str) -> SimConfig {
        let k = kernels::canonical(kernel).unwrap();
        let (features, tunables) = kernels::defaults(k).unwrap();
        SimConfig {
            kernel: k,
            features,
            tunables,
            duration_ns: Some(2_500_000_000),
            ..SimConfig::default()
        }
    }

    #[test]
    fn a_header_names_what_ran_and_what_differs() {
        let f = HeaderFacts {
            workload: "hackbench:groups=2",
            machine: "vm-2cpu",
            cpus: 2,
            default_machine: true,
        };
        let mut c = cfg("6.12");
        let h = run_header(&f, &c);
        assert!(
            h[0].starts_with("# hackbench:groups=2 on vm-2cpu (2 CPUs; the default machine, --machine picks another): kernel 6.12, HZ "),
            "{h:?}"
        );
        assert!(h[0].ends_with(", 2.5 s"), "{h:?}");
        assert_eq!(h[1], "# features and tunables: 6.12's defaults");
        c.features = c
            .features
            .apply("NO_RUN_TO_PARITY,STEAL,THROTTLE=unified")
            .unwrap();
        c.tunables.set("base_slice_ns=3000000").unwrap();
        let h = run_header(&f, &c);
        assert_eq!(
            h[1],
            "# not 6.12's defaults: NO_RUN_TO_PARITY, STEAL, THROTTLE=unified, base_slice_ns=3000000"
        );
        c.duration_ns = None;
        assert!(run_header(&f, &c)[0].ends_with(", until the workload ends"));
    }
}

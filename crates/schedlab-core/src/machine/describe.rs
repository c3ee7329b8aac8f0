//! Human-readable rendering of a [`Machine`] for `schedlab machines NAME`.
//!
//! The text stays short for big machines: nodes and LLCs are listed one per
//! line only up to [`MAX_LINES`]; past that the first and last few are shown
//! with a count of the rest, and clusters and cores are only summarised
//! (how many, of what size). CPU sets use the kernel's list format.

use super::{CpuMask, Distance, Machine};
use crate::time::Nanos;
use std::fmt::Write;

/// Most per-item lines printed for one level before eliding the middle.
const MAX_LINES: usize = 16;

/// `"80 x 2 CPUs"` when every span has the same size, else
/// `"80 spans of 1-4 CPUs"`.
fn sizes(spans: &[CpuMask], what: &str) -> String {
    let min = spans.iter().map(|s| s.weight()).min().unwrap_or(0);
    let max = spans.iter().map(|s| s.weight()).max().unwrap_or(0);
    if min == max {
        format!(
            "{} {what} x {min} CPU{}",
            spans.len(),
            if min == 1 { "" } else { "s" }
        )
    } else {
        format!("{} {what} of {min}-{max} CPUs", spans.len())
    }
}

/// Time in the unit that reads best: `700 ns`, `1.5 us`, `250 us`, `2.7 ms`.
fn fmt_ns(ns: Nanos) -> String {
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        if (ns / 1_000) * 1_000 == ns {
            format!("{} us", ns / 1_000)
        } else {
            format!("{:.1} us", ns as f64 / 1e3)
        }
    } else if (ns / 1_000_000) * 1_000_000 == ns {
        format!("{} ms", ns / 1_000_000)
    } else {
        format!("{:.1} ms", ns as f64 / 1e6)
    }
}

/// Pushes `lines`, eliding the middle when there are more than [`MAX_LINES`].
fn push_elided(out: &mut String, lines: Vec<String>) {
    if lines.len() <= MAX_LINES {
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        return;
    }
    let head = MAX_LINES - 4;
    for l in &lines[..head] {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(out, "    ... {} more ...", lines.len() - head - 2);
    for l in &lines[lines.len() - 2..] {
        let _ = writeln!(out, "{l}");
    }
}

impl Machine {
    /// A multi-line description: name, counts, node CPU lists, LLC spans,
    /// the node distance matrix, costs and idle states. Readable for
    /// machines of hundreds of CPUs (long lists are elided).
    pub fn describe(&self) -> String {
        let mut o = String::new();
        let (cores, clusters, llcs, nodes, pkgs) = self.counts();
        let n = self.nr_cpus();
        let _ = writeln!(o, "{}: {}", self.name, self.description);
        let smt = self.max_threads_per_core();
        let smt_text = if smt > 1 {
            format!("SMT{smt}")
        } else {
            "no SMT".to_string()
        };
        let cl_text = if clusters == cores {
            format!("{clusters} (= cores)")
        } else {
            clusters.to_string()
        };
        let pl = |k: usize, w: &str| format!("{k} {w}{}", if k == 1 { "" } else { "s" });
        let _ = writeln!(
            o,
            "  {n} CPUs, {cores} cores ({smt_text}), {cl_text} clusters, {}, {}, {}",
            pl(llcs, "LLC"),
            pl(nodes, "node"),
            pl(pkgs, "package")
        );
        let cap_min = self.cpus.iter().map(|c| c.capacity).min().unwrap_or(0);
        let cap_max = self.cpus.iter().map(|c| c.capacity).max().unwrap_or(0);
        if cap_min == cap_max {
            let _ = writeln!(o, "  capacity {cap_max} on every CPU");
        } else {
            let _ = writeln!(o, "  capacity {cap_min}..{cap_max} (asymmetric)");
        }

        let _ = writeln!(o, "Cores: {}", sizes(&self.spans.core, "cores"));
        if smt > 1 {
            let first = &self.spans.core[0];
            let _ = writeln!(o, "  e.g. core 0 = CPUs {}", first.to_list());
        }
        let _ = writeln!(o, "Clusters: {}", sizes(&self.spans.cluster, "clusters"));

        let _ = writeln!(o, "Nodes:");
        let lines = (0..nodes)
            .map(|i| {
                let s = &self.spans.node[i];
                let pkg = self.cpus[s.first().unwrap().idx()].package;
                let llc_n = self.spans.llc.iter().filter(|l| l.is_subset(s)).count();
                format!(
                    "  node {i:<3} package {pkg:<2} {:>4} CPUs, {llc_n} LLC(s): {}",
                    s.weight(),
                    s.to_list()
                )
            })
            .collect();
        push_elided(&mut o, lines);

        let _ = writeln!(o, "LLCs: {}", sizes(&self.spans.llc, "LLCs"));
        let lines = (0..llcs)
            .map(|i| {
                let s = &self.spans.llc[i];
                let node = self.cpus[s.first().unwrap().idx()].node;
                format!("  llc {i:<4} node {node:<3} {}", s.to_list())
            })
            .collect();
        push_elided(&mut o, lines);

        let _ = writeln!(o, "Node distances (SLIT):");
        if nodes <= MAX_LINES {
            let mut head = String::from("        ");
            for b in 0..nodes {
                let _ = write!(head, "{b:>4}");
            }
            let _ = writeln!(o, "{head}");
            for (a, row) in self.node_distance.iter().enumerate() {
                let mut l = format!("  {a:>4}: ");
                for d in row {
                    let _ = write!(l, "{d:>4}");
                }
                let _ = writeln!(o, "{l}");
            }
        } else {
            let mut vals: Vec<u32> = self.node_distance.iter().flatten().copied().collect();
            vals.sort_unstable();
            vals.dedup();
            let _ = writeln!(
                o,
                "  {nodes}x{nodes} matrix, distinct values {vals:?}; row 0: {:?}",
                self.node_distance[0]
            );
        }

        let _ = writeln!(o, "Costs:");
        let names = [
            (Distance::SameCpu, "same CPU"),
            (Distance::SameCore, "same core"),
            (Distance::SameCluster, "same cluster"),
            (Distance::SameLlc, "same LLC"),
            (Distance::SameNode, "same node"),
            (Distance::SamePackage, "same package"),
            (Distance::OtherPackage, "other package"),
        ];
        let parts: Vec<String> = names
            .iter()
            .map(|(d, s)| format!("{s} {}", self.costs.line_transfer_ns[*d as usize]))
            .collect();
        let _ = writeln!(o, "  cache-line transfer (ns): {}", parts.join(", "));
        let _ = writeln!(
            o,
            "  context switch {}, wakeup {}, IPI {}",
            fmt_ns(self.costs.context_switch_ns),
            fmt_ns(self.costs.wakeup_ns),
            fmt_ns(self.costs.ipi_latency_ns)
        );

        let _ = writeln!(o, "Idle states:");
        for (i, s) in self.idle_states.iter().enumerate() {
            let _ = writeln!(
                o,
                "  {i}  {:<14} exit {:>8}  target residency {:>8}",
                s.name,
                fmt_ns(s.exit_latency_ns),
                fmt_ns(s.target_residency_ns)
            );
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets::{preset, PRESET_NAMES};

    #[test]
    fn machine_describe_small_and_large() {
        let icx = preset("icx-2s-80c-ht").unwrap().describe();
        assert!(icx.contains("160 CPUs, 80 cores (SMT2)"), "{icx}");
        assert!(icx.contains("0-39,80-119"), "{icx}");
        assert!(icx.contains("C6"), "{icx}");
        let epyc = preset("epyc-2s-256c-smt").unwrap().describe();
        // 32 LLCs: elided, and the whole text stays short.
        assert!(epyc.contains("32 LLCs x 16 CPUs"), "{epyc}");
        assert!(epyc.contains("... 18 more ..."), "{epyc}");
        assert!(epyc.lines().count() < 50, "{epyc}");
        for n in PRESET_NAMES {
            let d = preset(n).unwrap().describe();
            assert!(d.starts_with(n), "{d}");
            assert!(d.lines().count() < 60, "{n}: {} lines", d.lines().count());
        }
        assert_eq!(fmt_ns(700), "700 ns");
        assert_eq!(fmt_ns(1_500), "1.5 us");
        assert_eq!(fmt_ns(2_700_000), "2.7 ms");
    }
}

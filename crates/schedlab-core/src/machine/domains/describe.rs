//! `schedlab machine --domains`: the domains rendered like the kernel's
//! `sched_domain_debug` output, after a one-line-per-level summary.

use super::*;
use std::fmt::Write;

/// Renders the domains like the kernel's `sched_domain_debug` output (one
/// block per CPU, indented by depth, flags and tunables added on each domain
/// line), after a one-line-per-level summary of the whole machine.
///
/// `cpus` selects the CPUs to print; by default every CPU of a machine of
/// up to 16 CPUs, else CPU 0 and the last CPU.
pub fn describe_domains(m: &Machine, d: &SchedDomains, cpus: Option<&[CpuId]>) -> String {
    let n = d.nr_cpus();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "sched domains of {} ({} CPUs, HZ={}, max_load_balance_interval={} jiffies = {} ms)",
        m.name,
        n,
        d.hz,
        d.max_load_balance_interval,
        d.max_load_balance_interval * 1000 / d.hz.max(1) as u64
    );
    summary_table(&mut out, d);
    let llc_sizes: Vec<u32> = d.llc_shared.iter().map(|l| l.weight).collect();
    let (lo, hi) = (
        llc_sizes.iter().min().copied().unwrap_or(1),
        llc_sizes.iter().max().copied().unwrap_or(1),
    );
    let _ = writeln!(
        out,
        "LLC domains (sd_llc): {} x {} CPUs",
        d.llc_shared.len(),
        if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        }
    );
    let default: Vec<CpuId>;
    let list = match cpus {
        Some(l) => l,
        None => {
            default = if n <= 16 {
                (0..n as u32).map(CpuId).collect()
            } else {
                vec![CpuId(0), CpuId(n as u32 - 1)]
            };
            &default
        }
    };
    for &cpu in list {
        if cpu.idx() >= n {
            let _ = writeln!(out, "CPU{cpu}: no such CPU");
            continue;
        }
        describe_cpu(&mut out, d, cpu);
    }
    out
}

fn describe_cpu(out: &mut String, d: &SchedDomains, cpu: CpuId) {
    let doms = d.domains(cpu);
    if doms.is_empty() {
        let _ = writeln!(out, "CPU{cpu} attaching NULL sched-domain.");
        return;
    }
    let _ = writeln!(out, "CPU{cpu} attaching sched-domain(s):");
    for (k, sd) in doms.iter().enumerate() {
        let _ = write!(
            out,
            "{:k$} domain-{k}: span={} level={} flags={} imbalance_pct={} interval={}-{}ms busy_factor={} cache_nice_tries={}",
            "",
            sd.span.to_list(),
            sd.name,
            sd.flags,
            sd.imbalance_pct,
            sd.min_interval_ms,
            sd.max_interval_ms,
            sd.busy_factor,
            sd.cache_nice_tries,
        );
        if let Some(dist) = sd.numa_distance {
            let _ = write!(out, " distance={dist}");
        }
        if sd.imb_numa_nr > 0 {
            let _ = write!(out, " imb_numa_nr={}", sd.imb_numa_nr);
        }
        out.push('\n');
        let groups: Vec<String> = sd
            .groups
            .iter()
            .map(|g| {
                let mut s = format!(
                    "{}:{{ span={}",
                    g.span.first().map_or(0, |c| c.0),
                    g.span.to_list()
                );
                if g.balance_mask != g.span {
                    let _ = write!(s, " mask={}", g.balance_mask.to_list());
                }
                if g.capacity != 1024 {
                    let _ = write!(s, " cap={}", g.capacity);
                }
                s.push_str(" }");
                s
            })
            .collect();
        let _ = writeln!(out, "{:w$} groups: {}", "", groups.join(", "), w = k + 1);
    }
}

/// Aggregate of one level over the machine.
struct LevelAgg {
    min_w: u32,
    max_w: u32,
    domains: usize,
    flags: SdFlags,
    flags_vary: bool,
    pct: u32,
    nice: u32,
    busy_factor: u32,
    min_imb: u32,
    max_imb: u32,
}

fn summary_table(out: &mut String, d: &SchedDomains) {
    let mut agg: BTreeMap<Level, LevelAgg> = BTreeMap::new();
    for (cpu, doms) in d.per_cpu.iter().enumerate() {
        for sd in doms {
            let owner = sd.first_cpu().idx() == cpu;
            let a = agg.entry(sd.level).or_insert(LevelAgg {
                min_w: sd.span_weight,
                max_w: sd.span_weight,
                domains: 0,
                flags: sd.flags,
                flags_vary: false,
                pct: sd.imbalance_pct,
                nice: sd.cache_nice_tries,
                busy_factor: sd.busy_factor,
                min_imb: sd.imb_numa_nr,
                max_imb: sd.imb_numa_nr,
            });
            a.min_w = a.min_w.min(sd.span_weight);
            a.max_w = a.max_w.max(sd.span_weight);
            a.domains += owner as usize;
            a.flags_vary |= a.flags != sd.flags;
            a.min_imb = a.min_imb.min(sd.imb_numa_nr);
            a.max_imb = a.max_imb.max(sd.imb_numa_nr);
        }
    }
    let range = |a: u64, b: u64| {
        if a == b {
            a.to_string()
        } else {
            format!("{a}-{b}")
        }
    };
    let _ = writeln!(
        out,
        "{:<8} {:>7} {:>7} {:>7} {:>10} {:>12} {:>10} {:>8}  flags",
        "level", "span", "domains", "imb_pct", "interval", "busy_ms", "cache_nice", "imb_numa"
    );
    for (level, a) in &agg {
        let (lo, hi) = (a.min_w as u64, a.max_w as u64);
        let _ = writeln!(
            out,
            "{:<8} {:>7} {:>7} {:>7} {:>10} {:>12} {:>10} {:>8}  {}{}",
            level.to_string(),
            range(lo, hi),
            a.domains,
            a.pct,
            format!("{}-{}ms", lo, 2 * hi),
            format!(
                "{}-{}",
                lo * a.busy_factor as u64,
                2 * hi * a.busy_factor as u64
            ),
            a.nice,
            range(a.min_imb as u64, a.max_imb as u64),
            a.flags,
            if a.flags_vary { " (varies)" } else { "" }
        );
    }
}

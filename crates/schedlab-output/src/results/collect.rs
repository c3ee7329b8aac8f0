//! Reading a finished [`Sim`]: every figure of [`RunResults`] is taken
//! from the simulator's state here, and only here (so a change of the
//! core's layout touches this one file).

use schedlab_core::features::FeatureValue;
use schedlab_core::ids::CpuId;
use schedlab_core::observe::Sink;
use schedlab_core::program::{Policy, TaskSpec, Uclamp, Workload, DEFAULT_BW_PERIOD_NS};
use schedlab_core::stats::{LogRow, SampleStats, SlackStats};
use schedlab_core::task::Task;
use schedlab_core::{RunResult, Sim};
use serde_json::{json, Map, Value};

use super::{Headline, LatencyGroup, RunError, RunResults, ThreadLog};
use crate::rtapp_log::log_file_name;
use crate::schedstat::{CpuSchedstat, DomainSchedstat, LbIdleCounters};
use crate::summary::{
    CpuSummary, GroupCpuStat, GroupSummary, MachineSummary, PathsNs, ProfileSummary, Summary,
    TaskSummary,
};

impl RunResults {
    /// Everything a finished run leaves behind, read from `sim` after
    /// `sim.run()` returned `res`; `workload` is the one `sim` was built
    /// from (it names the log files). Infallible: see [`check_outcome`]
    /// for whether the run ended well.
    pub fn collect<S: Sink>(sim: &Sim<S>, res: &RunResult, workload: &Workload) -> RunResults {
        let mut summary = summary(sim, res);
        if let Some(v) = super::schbench::report(sim, res, workload) {
            summary.extra.insert("schbench".into(), v);
        }
        if let Some(v) = super::specjbb::report(sim, res, workload) {
            // SPECjbb's throughput is the injectors' completed
            // transactions, not every thread's loops.
            summary
                .extra
                .insert("throughput_per_s".into(), v["jops"].clone());
            summary.extra.insert("specjbb".into(), v);
        }
        let cgroup_cpu_stat = summary
            .groups
            .iter()
            .map(|g| (format!("cgroup{}/cpu.stat", g.path), g.cpu_stat.clone()))
            .collect();
        let base = crate::log_stream::log_basename(workload);
        let logs = sim
            .threads()
            .iter()
            .filter(|t| t.existed())
            .map(|t| ThreadLog {
                file_name: log_file_name(base, &t.spec.name),
                rows: t.log.clone(),
            })
            .collect();
        RunResults {
            summary,
            schedstat_jiffies: res.end_ns / sim.cfg.tick_ns(),
            schedstat: schedstat(sim),
            cgroup_cpu_stat,
            logs,
            wakeup_latency: latency_groups(sim),
            headline: Headline::of(sim, res),
            counters: sim.acct.counters.rows.clone(),
        }
    }
}

/// Whether the run ended well: `Err` for a deadlock (every remaining
/// thread waits for something no thread will do) or a broken invariant
/// (`--check`; a bug in the model), in that order.
pub fn check_outcome<S: Sink>(sim: &Sim<S>, res: &RunResult) -> Result<(), RunError> {
    if sim.deadlock {
        return Err(RunError::Deadlock { at_ns: res.end_ns });
    }
    if let Some(v) = &res.violation {
        return Err(RunError::Violation(v.to_string()));
    }
    Ok(())
}

/// hackbench's own time: from the start barrier's release to the last
/// thread's exit, truncated to µs; `None` unless the run has a start
/// barrier and every thread exited.
fn workload_time_us<S: Sink>(sim: &Sim<S>) -> Option<u64> {
    let rel = sim.t_release?;
    (sim.live_tasks_left() == 0 && sim.last_exit >= rel).then(|| (sim.last_exit - rel) / 1000)
}

impl Headline {
    /// The headline figures of a finished run (what `schedlab compare`
    /// tabulates), without building the rest of [`RunResults`].
    pub fn of<S: Sink>(sim: &Sim<S>, res: &RunResult) -> Headline {
        let threads = sim.threads();
        let bws: Vec<_> = sim
            .sched
            .groups
            .iter()
            .filter_map(|g| g.bw.as_ref())
            .collect();
        let throttled = (!bws.is_empty()).then(|| {
            (
                bws.iter().map(|b| b.stats.throttled_ns).sum::<u64>(),
                bws.iter().map(|b| b.stats.nr_throttled).sum::<u64>(),
            )
        });
        Headline {
            duration_ns: res.end_ns - sim.t_start,
            workload_time_us: workload_time_us(sim),
            throttled_ns: throttled.map(|t| t.0),
            nr_throttled: throttled.map(|t| t.1),
            wakeup_latency: merged_latency(threads.iter()),
            periods: threads.iter().map(|t| t.slack.periods).sum(),
            missed_periods: threads.iter().map(|t| t.slack.missed).sum(),
            runtime_ns: threads.iter().map(|t| t.stats.runtime_ns).sum(),
            switches: threads.iter().map(|t| t.stats.switches).sum(),
            migrations: threads.iter().map(|t| t.stats.migrations).sum(),
            loops: threads.iter().map(|t| t.stats.loops).sum(),
        }
    }
}

/// summary.json's content (field meanings: the [module docs](super)).
pub fn summary<S: Sink>(sim: &Sim<S>, res: &RunResult) -> Summary {
    let cfg = &sim.cfg;
    let mut features = Map::new();
    for (n, v) in cfg.features.values() {
        let v = match v {
            FeatureValue::Bool(b) => Value::Bool(b),
            FeatureValue::Enum(e) => Value::String(e.to_string()),
        };
        features.insert(n.to_string(), v);
    }
    let tasks = sim
        .threads()
        .iter()
        .filter(|t| t.existed())
        .map(|t| {
            let lat = t.latency.stats();
            let rt = matches!(t.policy, Policy::Fifo | Policy::Rr);
            let fair = t.policy.is_fair();
            let mut ts = TaskSummary::from_stats(
                &t.spec.name,
                t.pid,
                t.policy.name(),
                if fair { t.nice } else { 0 },
                &t.spec.group,
                &t.stats,
                &lat,
            );
            // The part of runtime_ns (sum_exec_runtime) that was scheduler
            // work in the task's context; the CPUs count it as overhead.
            ts.extra
                .insert("sched_work_ns".into(), Value::from(t.stats.sched_work_ns));
            // Switches out while still runnable (nivcsw).
            ts.extra.insert(
                "involuntary_switches".into(),
                Value::from(t.stats.preempted),
            );
            if let Some(u) = uclamp_json(&t.spec) {
                ts.extra.insert("uclamp".into(), u);
            }
            if let Some(d) = slack_json(&t.slack) {
                ts.extra.insert("deadlines".into(), d);
            }
            if rt {
                ts.extra.insert("rt_priority".into(), Value::from(t.nice));
            }
            if let Some(p) = t.dl.params.or(t.spec.dl) {
                ts.extra.insert(
                    "sched_deadline".into(),
                    json!({
                        "runtime_us": p.runtime_ns / 1000,
                        "deadline_us": p.deadline_ns / 1000,
                        "period_us": p.period_ns / 1000,
                        "replenishments": t.dl.periods,
                        "late_replenishments": t.dl.misses,
                    }),
                );
            }
            ts
        })
        .collect();
    let cpus: Vec<CpuSummary> = sim
        .acct
        .cpu_stats
        .iter()
        .enumerate()
        .map(|(c, st)| CpuSummary::from_stats(c as u32, st))
        .collect();
    let task_ns = sim.acct.cpu_stats.iter().map(|c| c.busy_ns).sum();
    let idle_ns = sim.acct.cpu_stats.iter().map(|c| c.idle_ns).sum();
    let mut s = Summary {
        schedlab_version: env!("CARGO_PKG_VERSION").to_string(),
        machine: MachineSummary {
            name: sim.machine.name.clone(),
            cpus: sim.machine.nr_cpus() as u32,
            ..Default::default()
        },
        features,
        seed: cfg.seed,
        hz: cfg.hz,
        duration_ns: res.end_ns - sim.t_start,
        tasks,
        cpus,
        groups: group_summaries(sim),
        profile: ProfileSummary {
            task_ns,
            idle_ns,
            paths_ns: PathsNs {
                context_switch: sim.acct.profile.context_switch_ns,
                wakeup: sim.acct.profile.wakeup_ns,
                balance: sim.acct.profile.balance_ns,
                newidle: sim.acct.profile.newidle_ns,
                balance_atomic: sim.acct.profile.balance_atomic_ns,
                steal: sim.acct.profile.steal_ns,
                throttle: sim.acct.profile.throttle_ns,
                available_idle_cpu: sim.acct.profile.available_idle_ns,
                sched_idle_cpu: sim.acct.profile.sched_idle_ns,
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    };
    s.extra
        .insert("preempt".into(), Value::String(cfg.preempt.name().into()));
    s.extra.insert("events".into(), Value::from(res.events));
    // The kernel release the run's defaults came from, and every tunable
    // in effect (tunable_scaling applied for this machine's CPU count).
    s.extra
        .insert("kernel".into(), Value::String(cfg.kernel.to_string()));
    let mut tun = Map::new();
    for (n, v) in cfg.tunables.values(sim.machine.nr_cpus()) {
        tun.insert(n.to_string(), Value::from(v));
    }
    s.extra.insert("tunables".into(), Value::Object(tun));
    // hackbench's own time, in seconds truncated to ms (hackbench itself
    // prints 3 decimals, truncated).
    // The same time to the µs, for comparisons finer than hackbench's ms.
    if let Some(us) = workload_time_us(sim) {
        s.extra.insert(
            "workload_time_s".into(),
            Value::from((us / 1000) as f64 / 1000.0),
        );
        s.extra.insert("workload_time_us".into(), Value::from(us));
    }
    // Throughput: completed iterations (transactions for generators, log
    // rows for rt-app) of all threads but OLTP's clients per simulated
    // second.
    let secs = (res.end_ns - sim.t_start) as f64 / 1e9;
    let loops: u64 = sim
        .threads()
        .iter()
        .filter(|t| !t.spec.name.starts_with("client-"))
        .map(|t| t.stats.loops)
        .sum();
    if secs > 0.0 {
        s.extra
            .insert("throughput_per_s".into(), Value::from(loops as f64 / secs));
    }
    // The simulator's helper tasks (rt-app's main thread): their CPU time is
    // part of the CPUs' busy time.
    let helpers: Vec<Value> = sim
        .sched
        .tasks
        .iter()
        .filter(|t| t.internal)
        .map(|t| {
            json!({"name": t.spec.name, "pid": t.pid,
                "runtime_ns": t.stats.runtime_ns, "sched_work_ns": t.stats.sched_work_ns,
                "switches": t.stats.switches})
        })
        .collect();
    s.extra.insert("helpers".into(), Value::Array(helpers));
    // Wasted idle time (idle while a CPU it could help had waiting tasks).
    let w = &sim.acct.waste;
    s.extra
        .insert("wasted_idle_ns".into(), Value::from(w.total()));
    let mut by_level = Map::new();
    let names = sim.sched.domains.domains(CpuId(0));
    for (l, v) in w.per_level.iter().enumerate() {
        let name = names.get(l).map_or("?", |d| d.name);
        by_level.insert(format!("domain{l}:{name}"), Value::from(*v));
    }
    s.extra
        .insert("wasted_idle_by_level_ns".into(), Value::Object(by_level));
    for (c, cs) in s.cpus.iter_mut().enumerate() {
        cs.extra.insert(
            "wasted_idle_ns".into(),
            Value::from(w.per_cpu.get(c).copied().unwrap_or(0)),
        );
        let st = &sim.acct.cpu_stats[c];
        cs.extra
            .insert("sched_count".into(), Value::from(st.sched_count));
        cs.extra
            .insert("sched_goidle".into(), Value::from(st.sched_goidle));
        cs.extra
            .insert("ttwu_count".into(), Value::from(st.ttwu_count));
        cs.extra.insert("steal".into(), Value::from(st.steal));
        // RT class counters, only where they happened (fair-only runs keep
        // their summary unchanged).
        for (k, v) in [
            ("rt_throttled", st.rt_throttled),
            ("rt_push", st.rt_push),
            ("rt_pull", st.rt_pull),
            ("dl_push", st.dl_push),
            ("dl_pull", st.dl_pull),
            ("pi_setprio", st.pi_setprio),
        ] {
            if v > 0 {
                cs.extra.insert(k.into(), Value::from(v));
            }
        }
    }
    // Load-balance passes of the whole run, by idle type (not idle, idle,
    // newly idle), the totals of /proc/schedstat's per-domain counters.
    let mut lb = [[0u64; 3]; 3];
    for ss in sim.sched.sd_state.iter().flatten() {
        for (row, counts) in lb
            .iter_mut()
            .zip([&ss.lb.count, &ss.lb.balanced, &ss.lb.failed])
        {
            for (x, c) in row.iter_mut().zip(counts) {
                *x += c;
            }
        }
    }
    s.extra.insert(
        "load_balance".into(),
        json!({"lb_count": lb[0], "lb_balanced": lb[1], "lb_failed": lb[2]}),
    );
    let f = &sim.sched.balance_flag;
    s.extra.insert(
        "sched_balance_running".into(),
        json!({"attempts": f.attempts, "acquired": f.acquired, "cpu_ns": f.cost_ns}),
    );
    s
}

/// `groups`: every task group but the root, with its cpu.stat figures
/// and settings.
fn group_summaries<S: Sink>(sim: &Sim<S>) -> Vec<GroupSummary> {
    sim.sched
        .groups
        .iter()
        .skip(1)
        .map(|g| {
            let b = g.bw.as_ref().map(|b| b.stats).unwrap_or_default();
            let mut cpu_stat = GroupCpuStat::default();
            for (k, v) in [
                ("usage_usec", g.usage_ns / 1000),
                ("user_usec", (g.usage_ns - g.system_ns) / 1000),
                ("system_usec", g.system_ns / 1000),
                ("nr_periods", b.nr_periods),
                ("nr_throttled", b.nr_throttled),
                ("throttled_usec", b.throttled_ns / 1000),
                ("nr_bursts", b.nr_bursts),
                ("burst_usec", b.burst_ns / 1000),
            ] {
                cpu_stat.set(k, v);
            }
            let mut gs = GroupSummary {
                path: g.path.clone(),
                cpu_stat,
                ..Default::default()
            };
            let max = match &g.bw {
                Some(b) => format!("{} {}", b.quota / 1000, b.period / 1000),
                None => format!("max {}", DEFAULT_BW_PERIOD_NS / 1000),
            };
            gs.extra.insert("cpu.max".into(), Value::String(max));
            let burst = g.bw.as_ref().map_or(0, |b| b.burst / 1000);
            gs.extra.insert("cpu.max.burst".into(), Value::from(burst));
            gs.extra.insert("shares".into(), Value::from(g.shares));
            gs.extra
                .insert("cpu.idle".into(), Value::from(g.idle as u8));
            gs
        })
        .collect()
}

/// /proc/schedstat (version 17) of a finished run.
pub fn schedstat<S: Sink>(sim: &Sim<S>) -> Vec<CpuSchedstat> {
    sim.acct
        .cpu_stats
        .iter()
        .enumerate()
        .map(|(c, st)| {
            let cpu = CpuId(c as u32);
            let domains = sim
                .sched
                .domains
                .domains(cpu)
                .iter()
                .zip(&sim.sched.sd_state[c])
                .map(|(sd, ss)| {
                    let lb = std::array::from_fn(|i| LbIdleCounters {
                        lb_count: ss.lb.count[i],
                        lb_balanced: ss.lb.balanced[i],
                        lb_failed: ss.lb.failed[i],
                        lb_imbalance_load: ss.lb.imbalance_load[i],
                        lb_imbalance_util: ss.lb.imbalance_util[i],
                        lb_imbalance_task: ss.lb.imbalance_task[i],
                        lb_imbalance_misfit: 0,
                        lb_gained: ss.lb.gained[i],
                        lb_hot_gained: ss.lb.hot_gained[i],
                        lb_nobusyq: ss.lb.nobusyq[i],
                        lb_nobusyg: ss.lb.nobusyg[i],
                    });
                    DomainSchedstat {
                        name: sd.name.to_string(),
                        span_cpus: sd.span.iter().map(|c| c.0).collect(),
                        lb,
                        alb_count: ss.alb_count,
                        alb_pushed: ss.alb_pushed,
                        ttwu_wake_remote: ss.ttwu_wake_remote,
                        ttwu_move_affine: ss.ttwu_move_affine,
                        ..Default::default()
                    }
                })
                .collect();
            CpuSchedstat {
                cpu: c as u32,
                yld_count: 0,
                sched_count: st.sched_count,
                sched_goidle: st.sched_goidle,
                ttwu_count: st.ttwu_count,
                ttwu_local: st.ttwu_local,
                rq_cpu_time_ns: st.rq_cpu_time_ns,
                run_delay_ns: st.run_delay_ns,
                pcount: st.pcount,
                domains,
            }
        })
        .collect()
}

/// The wakeup-latency statistics of `threads`' samples together.
fn merged_latency<'a>(threads: impl Iterator<Item = &'a Task>) -> SampleStats {
    let mut all = schedlab_core::stats::LatencySamples::default();
    for t in threads {
        all.merge(&t.latency);
    }
    all.stats()
}

/// Wakeup latency per rt-app task (thread name without its `-<n>`
/// suffix), in order of first appearance; threads without timer rows are
/// left out.
fn latency_groups<S: Sink>(sim: &Sim<S>) -> Vec<LatencyGroup> {
    // The threads of each task, in thread order (their samples are read
    // in that order, as one sequence per task).
    let mut groups: Vec<(String, Vec<&Task>)> = Vec::new();
    for t in sim.threads().iter().filter(|t| t.existed()) {
        if t.latency.is_empty() {
            continue;
        }
        let key = t
            .spec
            .name
            .rsplit_once('-')
            .map_or(t.spec.name.as_str(), |(a, _)| a)
            .to_string();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(t),
            None => groups.push((key, vec![t])),
        }
    }
    groups
        .into_iter()
        .map(|(name, ts)| LatencyGroup {
            name,
            stats: merged_latency(ts.iter().copied()),
        })
        .collect()
}

/// The task's utilisation clamps as requested (task level, and each phase
/// that sets one), or `None` when it requests none.
fn uclamp_json(spec: &TaskSpec) -> Option<Value> {
    fn one(u: &Uclamp) -> Map<String, Value> {
        let mut m = Map::new();
        if let Some(v) = u.min {
            m.insert("util_min".into(), Value::from(v));
        }
        if let Some(v) = u.max {
            m.insert("util_max".into(), Value::from(v));
        }
        m
    }
    let phases: Map<String, Value> = spec
        .program
        .phases
        .iter()
        .filter(|p| !p.uclamp.is_empty())
        .map(|p| (p.name.clone(), Value::Object(one(&p.uclamp))))
        .collect();
    if spec.uclamp.is_empty() && phases.is_empty() {
        return None;
    }
    let mut m = one(&spec.uclamp);
    if !phases.is_empty() {
        m.insert("phases".into(), Value::Object(phases));
    }
    Some(Value::Object(m))
}

/// rt-app-style deadline figures of a periodic thread, from its log rows
/// that waited on a timer: how many periods, how many were missed (the
/// work ended after the timer's expiry: negative slack) and the slack's
/// spread. `None` for threads without timer rows (or without log rows).
pub fn deadlines_json(log: &[LogRow]) -> Option<Value> {
    slack_json(&SlackStats::of(log))
}

/// [`deadlines_json`] from the figures a thread kept as its rows completed.
pub fn slack_json(s: &SlackStats) -> Option<Value> {
    if s.periods == 0 {
        return None;
    }
    Some(json!({
        "periods": s.periods,
        "missed": s.missed,
        "slack_us": {
            "min": s.min,
            "mean": s.sum / s.periods as i64,
            "max": s.max,
        },
    }))
}

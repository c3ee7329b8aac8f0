//! `schedlab run`: simulate, then write summary.json, the rt-app logs and
//! (with --trace) trace.txt into the output directory, all staged and
//! renamed into place only when everything is written.

use crate::resolve::{self, RunArgs};
use crate::user;
use anyhow::{Context, Result};
use schedlab_core::features::FeatureValue;
use schedlab_core::machine::Machine;
use schedlab_core::observe::{NullSink, Sink};
use schedlab_core::program::{Policy, Workload};
use schedlab_core::stats::SampleStats;
use schedlab_core::{RunResult, Sim, SimConfig};
use schedlab_output::ftrace_text::SpooledTraceWriter;
use schedlab_output::outdir::StagedOutDir;
use schedlab_output::pftrace::PftraceWriter;
use schedlab_output::rtapp_log::{log_file_name, write_log};
use schedlab_output::schedstat::{write_schedstat, CpuSchedstat, DomainSchedstat, LbIdleCounters};
use schedlab_output::summary::{
    CpuSummary, GroupCpuStat, GroupSummary, MachineSummary, PathsNs, ProfileSummary, Summary,
    TaskSummary,
};
use schedlab_output::table;
use schedlab_output::trace_dat::TraceDatWriter;
use serde_json::Value;
use std::io::Write;
use std::process::ExitCode;

/// Builds summary.json's content from a finished simulation.
pub fn summary<S: Sink>(sim: &Sim<S>, res: &RunResult) -> Summary {
    let cfg = &sim.cfg;
    let mut features = serde_json::Map::new();
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
            let lat = SampleStats::of(t.wakeup_latency_samples());
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
            if let Some(u) = uclamp_json(&t.spec) {
                ts.extra.insert("uclamp".into(), u);
            }
            if let Some(d) = deadlines_json(&t.log) {
                ts.extra.insert("deadlines".into(), d);
            }
            if rt {
                ts.extra.insert("rt_priority".into(), Value::from(t.nice));
            }
            if let Some(p) = t.dl.params.or(t.spec.dl) {
                ts.extra.insert(
                    "sched_deadline".into(),
                    serde_json::json!({
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
        .cpu_stats
        .iter()
        .enumerate()
        .map(|(c, st)| CpuSummary::from_stats(c as u32, st))
        .collect();
    let task_ns = sim.cpu_stats.iter().map(|c| c.busy_ns).sum();
    let idle_ns = sim.cpu_stats.iter().map(|c| c.idle_ns).sum();
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
                context_switch: sim.profile.context_switch_ns,
                wakeup: sim.profile.wakeup_ns,
                balance: sim.profile.balance_ns,
                newidle: sim.profile.newidle_ns,
                balance_atomic: sim.profile.balance_atomic_ns,
                steal: sim.profile.steal_ns,
                throttle: sim.profile.throttle_ns,
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    };
    s.extra
        .insert("preempt".into(), Value::String(cfg.preempt.name().into()));
    s.extra.insert("events".into(), Value::from(res.events));
    // hackbench's own time: from the start barrier's release to the last
    // thread's exit, in seconds with µs resolution (hackbench itself prints
    // 3 decimals, truncated).
    if let Some(rel) = sim.t_release {
        if sim.live_tasks_left() == 0 && sim.last_exit >= rel {
            let us = (sim.last_exit - rel) / 1000;
            s.extra.insert(
                "workload_time_s".into(),
                Value::from((us / 1000) as f64 / 1000.0),
            );
        }
    }
    // Throughput: completed iterations (transactions for generators, log
    // rows for rt-app) of all threads per simulated second.
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
        .tasks
        .iter()
        .filter(|t| t.internal)
        .map(|t| {
            serde_json::json!({"name": t.spec.name, "pid": t.pid,
                "runtime_ns": t.stats.runtime_ns, "switches": t.stats.switches})
        })
        .collect();
    s.extra.insert("helpers".into(), Value::Array(helpers));
    // Wasted idle time (idle while a CPU it could help had waiting tasks).
    let w = &sim.waste;
    s.extra
        .insert("wasted_idle_ns".into(), Value::from(w.total()));
    let mut by_level = serde_json::Map::new();
    let names = sim.domains.domains(schedlab_core::ids::CpuId(0));
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
        let st = &sim.cpu_stats[c];
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
    for ss in sim.sd_state.iter().flatten() {
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
        serde_json::json!({"lb_count": lb[0], "lb_balanced": lb[1], "lb_failed": lb[2]}),
    );
    let f = &sim.balance_flag;
    s.extra.insert(
        "sched_balance_running".into(),
        serde_json::json!({"attempts": f.attempts, "acquired": f.acquired, "cpu_ns": f.cost_ns}),
    );
    s
}

/// `groups`: every task group but the root, with its cpu.stat figures
/// and settings.
fn group_summaries<S: Sink>(sim: &Sim<S>) -> Vec<GroupSummary> {
    sim.groups
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
                None => format!(
                    "max {}",
                    schedlab_core::program::DEFAULT_BW_PERIOD_NS / 1000
                ),
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
    sim.cpu_stats
        .iter()
        .enumerate()
        .map(|(c, st)| {
            let cpu = schedlab_core::ids::CpuId(c as u32);
            let domains = sim
                .domains
                .domains(cpu)
                .iter()
                .zip(&sim.sd_state[c])
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

/// The `profile` file: where the CPU time of all CPUs went.
pub fn profile_text(s: &Summary) -> String {
    let p = &s.profile;
    let paths = [
        ("context_switch", p.paths_ns.context_switch),
        ("wakeup", p.paths_ns.wakeup),
        ("balance", p.paths_ns.balance),
        ("balance_atomic", p.paths_ns.balance_atomic),
        ("newidle", p.paths_ns.newidle),
        ("steal", p.paths_ns.steal),
        ("throttle", p.paths_ns.throttle),
    ];
    let total: u64 = p.task_ns + p.idle_ns + paths.iter().map(|x| x.1).sum::<u64>();
    let pct = |v: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * v as f64 / total as f64
        }
    };
    let mut out =
        String::from("# schedlab profile: CPU time of all CPUs by path (ns, share of the total)\n");
    out.push_str(&format!(
        "{:<16} {:>18} {:>9.4}%\n",
        "task",
        p.task_ns,
        pct(p.task_ns)
    ));
    out.push_str(&format!(
        "{:<16} {:>18} {:>9.4}%\n",
        "idle",
        p.idle_ns,
        pct(p.idle_ns)
    ));
    for (n, v) in paths {
        out.push_str(&format!("{n:<16} {v:>18} {:>9.4}%\n", pct(v)));
    }
    out.push_str(&format!("{:<16} {:>18} {:>9.4}%\n", "total", total, 100.0));
    out
}

fn latency_report<S: Sink>(sim: &Sim<S>) -> String {
    // Per task name prefix (rt-app task), then all tasks with a timer.
    let mut groups: Vec<(String, Vec<u64>)> = Vec::new();
    for t in sim.threads().iter().filter(|t| t.existed()) {
        let samples: Vec<u64> = t.wakeup_latency_samples().collect();
        if samples.is_empty() {
            continue;
        }
        let key = t
            .spec
            .name
            .rsplit_once('-')
            .map_or(t.spec.name.as_str(), |(a, _)| a)
            .to_string();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.extend(samples),
            None => groups.push((key, samples)),
        }
    }
    let stats: Vec<(String, SampleStats)> = groups
        .into_iter()
        .map(|(k, v)| (k, SampleStats::of(v)))
        .collect();
    let mut out = String::new();
    if stats.is_empty() {
        return out;
    }
    out.push_str("\nwakeup latency (us, rt-app wu_lat)\n");
    let rows: Vec<(&str, &SampleStats)> = stats.iter().map(|(k, s)| (k.as_str(), s)).collect();
    out.push_str(&table::latency_table(&rows));
    for (k, s) in &stats {
        out.push_str(&format!("{k}: {}\n", table::latency_line(s)));
    }
    out
}

/// Runs the simulation with a given sink.
pub fn simulate<S: Sink>(
    m: Machine,
    w: &Workload,
    cfg: SimConfig,
    sink: S,
) -> Result<(Sim<S>, RunResult)> {
    let mut sim = Sim::new(m, w, cfg, sink).map_err(|e| user(e.to_string()))?;
    let res = sim.run();
    Ok((sim, res))
}

/// `schedlab run`.
pub fn run(a: &RunArgs) -> Result<ExitCode> {
    let m = resolve::machine(&a.machine)?;
    let (w, warnings) = resolve::run_workload(a, m.nr_cpus())?;
    let cfg = resolve::config(a, &w)?;
    if a.trace && a.out.is_none() {
        return Err(user("--trace needs --out DIR"));
    }
    if a.trace {
        let spool =
            TraceSinks::new(m.nr_cpus() as u32).context("cannot create the trace spools")?;
        execute(a, &w, warnings, Sim::new(m, &w, cfg, spool))
    } else {
        execute(a, &w, warnings, Sim::new(m, &w, cfg, NullSink))
    }
}

fn execute<S: Finish>(
    a: &RunArgs,
    w: &Workload,
    warnings: Vec<String>,
    sim: Result<Sim<S>, schedlab_core::engine::SimError>,
) -> Result<ExitCode> {
    // Set-up errors name the workload file.
    let mut sim = sim.map_err(|e| user(format!("{}: {e}", a.workload)))?;
    // Warnings only once the run is known to start, so that an error is
    // always the only line.
    if !a.quiet {
        for wmsg in &warnings {
            eprintln!("schedlab: {wmsg}");
        }
    }
    let stage = match &a.out {
        Some(dir) => Some(
            StagedOutDir::stage(dir)
                .with_context(|| format!("{}: cannot create", dir.display()))?,
        ),
        None => None,
    };
    let res = run_with_bar(&mut sim, a.quiet);
    finish(sim, &res, a, w, stage)?;
    Ok(exit_for(&res))
}

/// Runs the simulation, with a progress bar on a terminal (indicatif;
/// nothing when stderr is not a TTY or with --quiet).
fn run_with_bar<S: Sink>(sim: &mut Sim<S>, quiet: bool) -> RunResult {
    use std::io::IsTerminal;
    let (Some(end), false, true) = (sim.end, quiet, std::io::stderr().is_terminal()) else {
        return sim.run();
    };
    let start = sim.t_start;
    let total_ms = (end - start) / 1_000_000;
    let bar = indicatif::ProgressBar::new(total_ms.max(1));
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} simulated {pos}/{len} ms [{bar:40}] {elapsed_precise} (eta {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let res = sim.run_with_progress(|now| bar.set_position(now.saturating_sub(start) / 1_000_000));
    bar.finish_and_clear();
    res
}

fn exit_for(res: &RunResult) -> ExitCode {
    if res.violation.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Trace sinks that can be written out at the end.
pub trait Finish: Sink {
    /// Writes the trace file into the stage, if this sink has one.
    fn write_trace(self, nr_cpus: u32, stage: &StagedOutDir) -> Result<()>;
}
impl Finish for NullSink {
    fn write_trace(self, _: u32, _: &StagedOutDir) -> Result<()> {
        Ok(())
    }
}
/// The three timelines `--trace` writes, fed from one run: ftrace text,
/// trace-cmd's trace.dat, Perfetto protobuf.
pub struct TraceSinks {
    text: SpooledTraceWriter,
    dat: TraceDatWriter,
    pftrace: PftraceWriter,
}

impl TraceSinks {
    /// Spools in the system's temp directory.
    pub fn new(nr_cpus: u32) -> std::io::Result<TraceSinks> {
        Ok(TraceSinks {
            text: SpooledTraceWriter::new()?,
            dat: TraceDatWriter::new()?,
            pftrace: PftraceWriter::new()?.with_nr_cpus(nr_cpus),
        })
    }
}

impl Sink for TraceSinks {
    fn wants_trace(&self) -> bool {
        true
    }
    fn trace(&mut self, rec: &schedlab_core::observe::TraceRecord<'_>) {
        self.text.trace(rec);
        self.dat.trace(rec);
        self.pftrace.trace(rec);
    }
}

impl Finish for TraceSinks {
    fn write_trace(self, nr_cpus: u32, stage: &StagedOutDir) -> Result<()> {
        let mut f = stage.create_file("trace.txt")?;
        self.text.finish(nr_cpus, &mut f).context("trace.txt")?;
        f.flush()?;
        let mut f = stage.create_file("trace.dat")?;
        self.dat.finish(nr_cpus, &mut f).context("trace.dat")?;
        f.flush()?;
        let mut f = stage.create_file("trace.pftrace")?;
        self.pftrace.finish(&mut f).context("trace.pftrace")?;
        f.flush()?;
        Ok(())
    }
}

fn finish<S: Finish>(
    sim: Sim<S>,
    res: &RunResult,
    a: &RunArgs,
    w: &Workload,
    stage: Option<StagedOutDir>,
) -> Result<()> {
    if sim.deadlock {
        return Err(user(format!(
            "{}: every remaining thread waits for something no thread will do (deadlock at {} ns)",
            a.workload, res.end_ns
        )));
    }
    if let Some(v) = &res.violation {
        // A broken invariant is a bug in the model: say where, write nothing.
        eprintln!("schedlab: check failed: {v}");
        return Ok(());
    }
    let s = summary(&sim, res);
    let mut text = table::task_table(&s.tasks);
    if !s.groups.is_empty() {
        text.push('\n');
        text.push_str(&table::group_table(&s.groups));
    }
    text.push_str(&latency_report(&sim));
    if let Some(stage) = stage {
        stage.write("summary.json", s.to_json_string().as_bytes())?;
        stage.write("profile", profile_text(&s).as_bytes())?;
        let jiffies = res.end_ns / sim.cfg.tick_ns();
        let nr = sim.machine.nr_cpus();
        let mut text = Vec::new();
        write_schedstat(&mut text, jiffies, nr, &schedstat(&sim))?;
        stage.write("schedstat", &text)?;
        // cgroupfs layout: cgroup/<path>/cpu.stat.
        for g in &s.groups {
            let name = format!("cgroup{}/cpu.stat", g.path);
            stage.write(
                &name,
                schedlab_output::cgroup::write_cpu_stat(&g.cpu_stat).as_bytes(),
            )?;
        }
        let base = if w.log_basename.is_empty() {
            "rt-app"
        } else {
            &w.log_basename
        };
        for t in sim.threads().iter().filter(|t| t.existed()) {
            let name = log_file_name(base, &t.spec.name);
            stage.write_with(&name, |f| write_log(f, &t.log))?;
        }
        let nr = sim.machine.nr_cpus() as u32;
        sim.into_sink().write_trace(nr, &stage)?;
        stage.commit()?;
    }
    if !a.quiet {
        print!("{text}");
    }
    Ok(())
}

/// The task's utilisation clamps as requested (task level, and each phase
/// that sets one), or `None` when it requests none.
fn uclamp_json(spec: &schedlab_core::program::TaskSpec) -> Option<Value> {
    fn one(u: &schedlab_core::program::Uclamp) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        if let Some(v) = u.min {
            m.insert("util_min".into(), Value::from(v));
        }
        if let Some(v) = u.max {
            m.insert("util_max".into(), Value::from(v));
        }
        m
    }
    let phases: serde_json::Map<String, Value> = spec
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
fn deadlines_json(log: &[schedlab_core::stats::LogRow]) -> Option<Value> {
    let slack: Vec<i64> = log
        .iter()
        .filter(|r| r.c_period > 0)
        .map(|r| r.slack)
        .collect();
    let n = slack.len() as i64;
    if n == 0 {
        return None;
    }
    let missed = slack.iter().filter(|&&s| s < 0).count();
    let sum: i64 = slack.iter().sum();
    Some(serde_json::json!({
        "periods": n,
        "missed": missed,
        "slack_us": {
            "min": slack.iter().min(),
            "mean": sum / n,
            "max": slack.iter().max(),
        },
    }))
}

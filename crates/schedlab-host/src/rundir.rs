//! A host run's output directory in the simulator's own layout, so every
//! reader of `schedlab run --out DIR` (report, compare, validate, scripts)
//! reads a real run too.
//!
//! [`write_run_dir`] writes, from an [`ExecResult`] (and, after
//! [`record()`](crate::record()), its trace and host facts):
//!
//! | file | content |
//! |---|---|
//! | `<log_basename>-<thread>.log` | each started thread's rt-app log (schedlab-output's writer and file-name rule) |
//! | `summary.json` | the contract of `docs/summary-json.md` where the host can give it, plus `"source": "host"` |
//! | `cgroup/<path>/cpu.stat` | each group's `cpu.stat` change over the run (after − before), v2 keys |
//!
//! Where the summary's host figures come from:
//!
//! | field | host source |
//! |---|---|
//! | `tasks[].pid` | the kernel tid |
//! | `policy`, `nice` | `/proc/.../sched` policy and prio (nice = prio − 120) at the thread's end; the workload's when unreadable |
//! | `runtime_ns`, `wait_ns` | `/proc/.../schedstat` |
//! | `switches` | `/proc/.../status` voluntary + nonvoluntary context switches (switch-outs; a thread's switch-ins are the same ±1) |
//! | `migrations` | `/proc/.../sched` `se.nr_migrations` |
//! | `wakeups` | the trace's `sched_wakeup` lines for the tid when there is a trace, else the voluntary switches (each voluntary sleep ends in one wake-up) |
//! | `loops`, `wakeup_latency_us`, `deadlines` | the log rows, exactly as the simulator computes them (rows with a timer; population stddev; missed = negative slack) |
//! | `cpus[]` | from the trace over `[t_start, end]`: `busy_ns` = any task but idle, `idle_ns` = idle; added `workload_ns` (the workload's threads only) and `other_ns` (everything else on the host). `[]` without a trace |
//! | `groups[].cpu_stat` | after − before of each counter |
//! | `workload_time_s` | release of the start barrier → last thread's exit, truncated to ms, when every thread finished before the end |
//! | `duration_ns` | `t_start` → the end (or the last exit when the run had no end) |
//! | `hz`, `preempt` | host.json's facts (0 / absent when unknown) |
//!
//! Left at 0 or empty, since the host cannot see them: `seed`,
//! `sched_overhead_ns`, `profile.paths_ns`, `features`, `helpers`,
//! `load_balance`.

use crate::error::HostError;
use crate::exec::ExecResult;
use crate::host_json::HostJson;
use crate::tracestat::{trace_stats, TraceStats};
use schedlab_core::program::{Policy, Workload};
use schedlab_core::stats::SampleStats;
use schedlab_output::rtapp_log::{log_file_name, write_log};
use schedlab_output::summary::{
    CpuSummary, GroupCpuStat, GroupSummary, MachineSummary, ProfileSummary, Summary, TaskSummary,
    WakeupLatencyUs,
};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The policy name of a kernel policy number.
pub fn policy_name(n: u64) -> Option<&'static str> {
    Some(match n {
        0 => "SCHED_NORMAL",
        1 => "SCHED_FIFO",
        2 => "SCHED_RR",
        3 => "SCHED_BATCH",
        5 => "SCHED_IDLE",
        6 => "SCHED_DEADLINE",
        _ => return None,
    })
}

/// The run's window on CLOCK_MONOTONIC (ns): t_start → end, or → the last
/// exit when the run had no end.
pub fn run_window(r: &ExecResult) -> (u64, u64) {
    let end = if r.end_ns > 0 {
        r.end_ns
    } else {
        r.last_exit_ns
    };
    (r.t_start_ns, end.max(r.t_start_ns))
}

/// The trace's figures over the run's window for the run's threads.
pub fn run_trace_stats(r: &ExecResult, trace: &Path) -> Result<TraceStats, HostError> {
    let pids: BTreeSet<u32> = r
        .threads
        .iter()
        .filter(|t| t.tid > 0)
        .map(|t| t.tid as u32)
        .collect();
    trace_stats(trace, &pids, Some(run_window(r))).map_err(|e| {
        HostError::io(
            trace,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
        )
    })
}

/// Builds summary.json for a host run.
pub fn host_summary(
    w: &Workload,
    r: &ExecResult,
    host: Option<&HostJson>,
    trace: Option<&TraceStats>,
) -> Summary {
    let (t0, t1) = run_window(r);
    let tasks = r
        .threads
        .iter()
        .filter(|t| t.started)
        .map(|t| {
            let spec = w
                .tasks
                .iter()
                .find(|s| s.index == t.index && s.name == t.name);
            let policy = t
                .stats
                .policy
                .and_then(policy_name)
                .map(str::to_string)
                .or_else(|| spec.map(|s| s.policy.name().to_string()))
                .unwrap_or_else(|| "SCHED_NORMAL".into());
            let fair = Policy::parse(&policy).is_some_and(|p| p.is_fair());
            let nice = if !fair {
                0
            } else {
                match t.stats.prio {
                    Some(p) if (100..140).contains(&p) => (p - 120) as i32,
                    _ => spec.map_or(0, |s| s.nice),
                }
            };
            let lat = SampleStats::of(t.log.iter().filter(|r| r.c_period > 0).map(|r| r.wu_lat));
            let wakeups = trace
                .and_then(|ts| ts.pids.get(&(t.tid as u32)))
                .map_or(t.stats.voluntary_switches, |c| c.wakeups);
            let mut ts = TaskSummary {
                name: t.name.clone(),
                pid: t.tid.max(0) as u32,
                policy: policy.clone(),
                nice,
                group: spec.map_or("/".into(), |s| s.group.clone()),
                runtime_ns: t.stats.run_ns,
                wait_ns: t.stats.wait_ns,
                switches: t.stats.voluntary_switches + t.stats.involuntary_switches,
                migrations: t.stats.migrations.unwrap_or(0),
                wakeups,
                loops: t.loops,
                wakeup_latency_us: WakeupLatencyUs::from_stats(&lat),
                extra: Default::default(),
            };
            if let Some(d) = schedlab_output::results::deadlines_json(&t.log) {
                ts.extra.insert("deadlines".into(), d);
            }
            ts.extra.insert(
                "involuntary_switches".into(),
                Value::from(t.stats.involuntary_switches),
            );
            if matches!(policy.as_str(), "SCHED_FIFO" | "SCHED_RR") {
                if let Some(p) = t.stats.prio {
                    ts.extra.insert("rt_priority".into(), Value::from(99 - p));
                }
            }
            ts
        })
        .collect();
    let cpus: Vec<CpuSummary> = trace
        .map(|ts| {
            ts.cpus
                .iter()
                .map(|c| {
                    let mut cs = CpuSummary {
                        cpu: c.cpu,
                        busy_ns: c.watched_ns + c.other_ns,
                        idle_ns: c.idle_ns,
                        sched_overhead_ns: 0,
                        extra: Default::default(),
                    };
                    cs.extra
                        .insert("workload_ns".into(), Value::from(c.watched_ns));
                    cs.extra.insert("other_ns".into(), Value::from(c.other_ns));
                    cs
                })
                .collect()
        })
        .unwrap_or_default();
    let groups = r
        .groups
        .iter()
        .map(|g| {
            let mut cpu_stat = GroupCpuStat::default();
            for k in [
                "usage_usec",
                "user_usec",
                "system_usec",
                "nr_periods",
                "nr_throttled",
                "throttled_usec",
                "nr_bursts",
                "burst_usec",
            ] {
                let a = g.after.get(k).copied();
                let b = g.before.get(k).copied().unwrap_or(0);
                if let Some(a) = a {
                    cpu_stat.set(k, a.saturating_sub(b));
                } else if matches!(
                    k,
                    "usage_usec" | "nr_periods" | "nr_throttled" | "throttled_usec"
                ) {
                    cpu_stat.set(k, 0);
                }
            }
            GroupSummary {
                path: g.path.clone(),
                cpu_stat,
                extra: Default::default(),
            }
        })
        .collect();
    let nr_cpus = crate::sys::online_cpus().len() as u32;
    let task_ns = cpus.iter().map(|c| c.busy_ns).sum();
    let idle_ns = cpus.iter().map(|c| c.idle_ns).sum();
    let mut s = Summary {
        schedlab_version: env!("CARGO_PKG_VERSION").to_string(),
        machine: MachineSummary {
            name: format!(
                "host:{}",
                host.map_or_else(
                    || "localhost".to_string(),
                    |h| h.host.kernel.nodename.clone()
                )
            ),
            cpus: nr_cpus,
            extra: Default::default(),
        },
        features: Default::default(),
        seed: 0,
        hz: host.and_then(|h| h.host.hz.value).unwrap_or(0),
        duration_ns: t1 - t0,
        tasks,
        cpus,
        groups,
        profile: ProfileSummary {
            task_ns,
            idle_ns,
            ..Default::default()
        },
        extra: Default::default(),
    };
    s.extra.insert("source".into(), Value::from("host"));
    if let Some(p) = host.and_then(|h| h.host.preempt.value.clone()) {
        s.extra.insert("preempt".into(), Value::from(p));
    }
    let all_done = r.threads.iter().filter(|t| t.started).all(|t| t.finished);
    if all_done && r.released_ns > 0 && r.last_exit_ns >= r.released_ns {
        let us = (r.last_exit_ns - r.released_ns) / 1000;
        s.extra.insert(
            "workload_time_s".into(),
            Value::from((us / 1000) as f64 / 1000.0),
        );
    }
    let secs = (t1 - t0) as f64 / 1e9;
    if secs > 0.0 {
        let loops: u64 = r
            .threads
            .iter()
            .filter(|t| !t.name.starts_with("client-"))
            .map(|t| t.loops)
            .sum();
        s.extra
            .insert("throughput_per_s".into(), Value::from(loops as f64 / secs));
    }
    s
}

fn wr(p: &Path, bytes: &[u8]) -> Result<(), HostError> {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).map_err(|e| HostError::io(d, e))?;
    }
    std::fs::write(p, bytes).map_err(|e| HostError::io(p, e))
}

/// Writes the rt-app logs, summary.json and `cgroup/<path>/cpu.stat` of a
/// host run into `dir` (created if needed). With `host` (a recording),
/// the trace DIR/trace.txt gives the CPUs' times and the wake-ups.
pub fn write_run_dir(
    dir: &Path,
    w: &Workload,
    r: &ExecResult,
    host: Option<&HostJson>,
) -> Result<Summary, HostError> {
    std::fs::create_dir_all(dir).map_err(|e| HostError::io(dir, e))?;
    let trace_path = dir.join("trace.txt");
    let ts = if host.is_some() && trace_path.exists() {
        Some(run_trace_stats(r, &trace_path)?)
    } else {
        None
    };
    let s = host_summary(w, r, host, ts.as_ref());
    wr(&dir.join("summary.json"), s.to_json_string().as_bytes())?;
    for g in &s.groups {
        let p = dir.join(format!("cgroup{}/cpu.stat", g.path));
        wr(
            &p,
            schedlab_output::cgroup::write_cpu_stat(&g.cpu_stat).as_bytes(),
        )?;
    }
    let base = if w.log_basename.is_empty() {
        "rt-app"
    } else {
        &w.log_basename
    };
    for t in r.threads.iter().filter(|t| t.started) {
        let p = dir.join(log_file_name(base, &t.name));
        let mut buf = Vec::new();
        write_log(&mut buf, &t.log).map_err(|e| HostError::io(&p, e))?;
        wr(&p, &buf)?;
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::Calibration;
    use crate::cgroup::GroupStat;
    use crate::exec::{ChannelConfig, ThreadResult};
    use crate::sys::ProcTaskStats;
    use schedlab_core::stats::LogRow;
    use std::collections::BTreeMap;

    fn row(wu_lat: u64, slack: i64, c_period: u64) -> LogRow {
        LogRow {
            idx: 0,
            perf: 20,
            run: 2000,
            period: 10_000,
            start: 1,
            end: 2,
            rel_st: 0,
            slack,
            c_duration: 2000,
            c_period,
            wu_lat,
        }
    }

    fn thread(
        name: &str,
        index: u32,
        tid: i32,
        log: Vec<LogRow>,
        policy: u64,
        prio: i64,
    ) -> ThreadResult {
        ThreadResult {
            name: name.into(),
            index,
            tid,
            forked: false,
            started: true,
            finished: true,
            loops: log.len() as u64,
            log,
            stats: ProcTaskStats {
                run_ns: 5_000_000,
                wait_ns: 100_000,
                timeslices: 4,
                voluntary_switches: 3,
                involuntary_switches: 1,
                migrations: Some(2),
                policy: Some(policy),
                prio: Some(prio),
                slice_ns: None,
            },
            started_ns: 0,
            ended_ns: 0,
        }
    }

    #[test]
    fn summary_fields_as_the_simulator_names_them() {
        let w = schedlab_workload::load_rtapp(
            "t.json",
            r#"{ "tasks": { "p": { "run": 2000, "timer": { "ref": "unique", "period": 10000 } },
                 "hog": { "policy": "SCHED_IDLE", "run": 1000 } },
                 "global": { "duration": 1 } }"#,
            2,
        )
        .unwrap()
        .workload;
        let r = ExecResult {
            calibration: Calibration {
                ns_per_loop: 100.0,
                cpu: None,
                batch_loops: 0,
                samples: vec![],
            },
            t_start_ns: 1_000_000_000,
            t0_ns: 1_000_100_000,
            released_ns: 1_000_100_000,
            end_ns: 2_000_000_000,
            last_exit_ns: 1_500_123_456,
            channels: ChannelConfig::default(),
            cgroup_version: None,
            groups: vec![GroupStat {
                path: "/g".into(),
                dir: "/x".into(),
                before: BTreeMap::from([("usage_usec".into(), 100), ("nr_throttled".into(), 1)]),
                after: BTreeMap::from([("usage_usec".into(), 600), ("nr_throttled".into(), 4)]),
            }],
            threads: vec![
                thread(
                    "p-0",
                    0,
                    77,
                    vec![row(10, 5, 10_000), row(30, -2, 10_000)],
                    0,
                    125,
                ),
                thread("hog-1", 1, 78, vec![row(0, 0, 0)], 5, 120),
            ],
            warnings: vec![],
        };
        let s = host_summary(&w, &r, None, None);
        assert_eq!(s.extra["source"], "host");
        assert_eq!(s.duration_ns, 1_000_000_000);
        let p = &s.tasks[0];
        assert_eq!(
            (p.name.as_str(), p.pid, p.policy.as_str(), p.nice),
            ("p-0", 77, "SCHED_NORMAL", 5)
        );
        assert_eq!(
            (
                p.runtime_ns,
                p.wait_ns,
                p.switches,
                p.migrations,
                p.wakeups,
                p.loops
            ),
            (5_000_000, 100_000, 4, 2, 3, 2)
        );
        let l = &p.wakeup_latency_us;
        assert_eq!(
            (l.n, l.min, l.max, l.sum, l.mean, l.stddev),
            (2, 10, 30, 40, 20.0, 10.0)
        );
        assert_eq!(p.extra["deadlines"]["missed"], 1);
        let h = &s.tasks[1];
        assert_eq!(
            (h.policy.as_str(), h.nice, h.wakeup_latency_us.n),
            ("SCHED_IDLE", 0, 0)
        );
        assert!(h.extra.get("deadlines").is_none());
        assert_eq!(s.groups[0].cpu_stat.usage_usec, 500);
        assert_eq!(s.groups[0].cpu_stat.nr_throttled, 3);
        // Every thread finished: hackbench's time, truncated to ms.
        assert_eq!(s.extra["workload_time_s"], 0.5);
        assert!(s.cpus.is_empty());

        let d = tempfile::tempdir().unwrap();
        write_run_dir(d.path(), &w, &r, None).unwrap();
        let back = schedlab_output::summary::Summary::from_json_str(
            &std::fs::read_to_string(d.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(back, s);
        let log = std::fs::read_to_string(d.path().join("rt-app-p-0.log")).unwrap();
        assert_eq!(
            schedlab_output::rtapp_log::parse_rtapp_log(&log)
                .unwrap()
                .len(),
            2
        );
        assert!(d.path().join("rt-app-hog-1.log").exists());
        let cs = std::fs::read_to_string(d.path().join("cgroup/g/cpu.stat")).unwrap();
        assert!(cs.contains("usage_usec 500\n"), "{cs}");
    }
}

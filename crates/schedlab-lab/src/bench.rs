//! The benchmark suite's engine (`schedlab bench`): its cases, each a fixed
//! workload on a preset, and the figures of one case run in this process
//! (events per wall second, simulated seconds per wall second, CPU time,
//! peak resident memory). The command line runs each case in a child
//! process of its own and prints the table.

use schedlab_core::machine::preset;
use schedlab_core::observe::{DiscardRows, NullSink};
use schedlab_core::program::{Op, Policy, TaskSpec, TimerRef, TimerSpec, Workload};
use schedlab_core::time::{NSEC_PER_SEC, NSEC_PER_USEC};
use schedlab_core::{Sim, SimConfig};
use std::time::Instant;

/// A case that could not be built: its one-line message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BenchError(pub String);

/// One bench case: a workload on a preset.
pub struct Case {
    /// Its name (`--case`).
    pub name: &'static str,
    /// What it runs.
    pub label: &'static str,
    /// The preset it runs on.
    pub machine: &'static str,
    /// Simulated seconds without `--seconds`.
    pub default_s: f64,
}

/// The cases, in running order.
pub const CASES: &[Case] = &[
    Case {
        name: "sched-idle-8",
        label: "sched-idle 8cpu: 8 periodic + 5 SCHED_IDLE",
        machine: "a7-octa",
        default_s: 10.0,
    },
    Case {
        name: "periodic-8-dense",
        label: "periodic 8cpu, 4096-case shape: 96 + 2 idle",
        machine: "a7-octa",
        default_s: 10.0,
    },
    Case {
        name: "periodic-160",
        label: "periodic 160cpu: 320 periodic + 40 SCHED_IDLE",
        machine: "icx-2s-80c-ht",
        default_s: 10.0,
    },
    Case {
        name: "hackbench-160",
        label: "hackbench 160cpu: 8 groups, socket, msg by msg",
        machine: "icx-2s-80c-ht",
        default_s: 0.1,
    },
    Case {
        name: "oltp-384",
        label: "oltp 384cpu gnr-2s-snc3 (defaults)",
        machine: "gnr-2s-snc3",
        default_s: 1.0,
    },
    Case {
        name: "oltp-512",
        label: "oltp 512cpu epyc-2s-256c-smt (defaults)",
        machine: "epyc-2s-256c-smt",
        default_s: 1.0,
    },
    Case {
        name: "quota-512",
        label: "hackbench 512cpu, 3-level cgroups with cpu.max",
        machine: "epyc-2s-256c-smt",
        default_s: 1.0,
    },
    Case {
        name: "periodic-4096",
        label: "periodic 4096cpu: 48976 periodic + 1024 idle",
        machine: "big-8s-4096",
        // rt-app's main thread creates the 50 000 threads 30 µs apart
        // (sched/init.rs): 1.5 simulated s of start-up before they run.
        default_s: 2.0,
    },
];

/// Periodic tasks of the 4096-CPU case (and of its 8-CPU twin, scaled to
/// the same tasks per CPU): 50 000 tasks in all, ~12 per CPU, each running
/// 100 µs every 4 ms (~30 % busy), plus one SCHED_IDLE looper per 4 CPUs
/// as in the 160-CPU case. Light enough that the machine is not
/// overloaded even with every task on one board of 4 sockets, where fork
/// placement leaves them (no SD_BALANCE_FORK above SLIT 30, as in the
/// kernel) until the machine-wide NUMA balance (4-8 s interval) moves some.
const BIG_PERIODIC: u32 = 48_976;
const BIG_IDLE: u32 = 1_024;

/// `n` periodic threads (run `run_us` every `period_us`, unique timers) plus
/// `idle` SCHED_IDLE threads looping on `idle_run_us` runs: the shape of the
/// SCHED_IDLE rt-app experiment, scaled.
pub fn periodic(n: u32, run_us: u64, period_us: u64, idle: u32, idle_run_us: u64) -> Workload {
    let mut w = Workload {
        log_basename: "rt-app".into(),
        calibration_ns: 100,
        ..Default::default()
    };
    for i in 0..n + idle {
        let is_idle = i >= n;
        let name = if is_idle {
            format!("idle_thread-{i}")
        } else {
            format!("cfs_thread-{i}")
        };
        let mut ops = vec![Op::Run {
            work_ns: if is_idle { idle_run_us } else { run_us } * NSEC_PER_USEC,
            config_us: if is_idle { idle_run_us } else { run_us },
            perf: 0,
        }];
        if !is_idle {
            w.timers.push(TimerSpec {
                name: format!("unique@{name}"),
                absolute: false,
            });
            ops.push(Op::Timer {
                timer: TimerRef(w.timers.len() as u32 - 1),
                period_ns: period_us * NSEC_PER_USEC,
            });
        }
        let policy = if is_idle {
            Policy::Idle
        } else {
            Policy::Normal
        };
        w.tasks.push(TaskSpec::looping(name, i, policy, ops));
    }
    w
}

/// The workload of case `name`.
pub fn workload(name: &str, nr_cpus: usize) -> Workload {
    match name {
        "sched-idle-8" => periodic(8, 5333, 7777, 5, 3000),
        "periodic-8-dense" => {
            let per = BIG_PERIODIC as usize * nr_cpus / 4096;
            let idle = BIG_IDLE as usize * nr_cpus / 4096;
            periodic(per as u32, 100, 4000, idle as u32, 3000)
        }
        "periodic-160" => periodic(320, 2000, 5000, 40, 3000),
        "periodic-4096" => periodic(BIG_PERIODIC, 100, 4000, BIG_IDLE, 3000),
        // The STEAL experiment's 8-group row, every message a write() and a
        // read() (with the exact fast-forward `schedlab run` uses by default).
        "hackbench-160" => {
            schedlab_workload::generators::hackbench(
                "hackbench:",
                "groups=8,loops=100000,mode=process,ipc=socket",
            )
            .expect("hackbench spec")
            .workload
        }
        "oltp-384" | "oltp-512" => {
            schedlab_workload::generators::oltp("oltp:", "", nr_cpus)
                .expect("default oltp")
                .workload
        }
        // hackbench in a 3-level hierarchy with quotas on every level (the
        // bandwidth-hierarchy experiment's shape), looping for the whole run.
        "quota-512" => {
            let mut w = schedlab_workload::generators::hackbench(
                "hackbench:",
                "groups=16,loops=1000000,mode=process,ipc=pipe,cgroup=/hb/l2/g%g",
            )
            .expect("hackbench spec")
            .workload;
            let mut args = vec![
                "/hb:cpu.max=480000,20000".to_string(),
                "/hb/l2:cpu.max=320000,20000".into(),
            ];
            args.extend((0..16).map(|g| format!("/hb/l2/g{g}:cpu.max=30000,20000")));
            let args: Vec<_> = args
                .iter()
                .map(|a| schedlab_workload::cgroup::parse_arg(a).expect("cgroup arg"))
                .collect();
            schedlab_workload::cgroup::apply_overrides(&mut w, &args).expect("cgroup settings");
            w
        }
        _ => unreachable!("case names are checked before"),
    }
}

/// The figures of one case.
#[derive(Debug, Clone)]
pub struct Figures {
    pub name: String,
    pub label: String,
    pub machine: String,
    pub cpus: usize,
    pub tasks: usize,
    pub sim_s: f64,
    pub events: u64,
    /// Wall seconds of `Sim::new` (domains, tasks, queues).
    pub setup_s: f64,
    /// Wall seconds of the run itself; the rates below divide by it.
    pub wall_s: f64,
    /// CPU seconds (user + system) of the run itself: on a machine shared
    /// with other jobs, the steadier figure.
    pub cpu_s: f64,
    pub events_per_s: f64,
    pub ns_per_event: f64,
    pub sim_s_per_wall_s: f64,
    /// Peak resident set of the case's own process, bytes (`VmHWM`); None
    /// in-process.
    pub peak_rss_bytes: Option<u64>,
}

impl Figures {
    /// The figures as `schedlab bench --json` prints them.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name, "label": self.label, "machine": self.machine,
            "cpus": self.cpus, "tasks": self.tasks, "sim_s": self.sim_s,
            "events": self.events, "setup_s": self.setup_s, "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "events_per_s": self.events_per_s, "ns_per_event": self.ns_per_event,
            "sim_s_per_wall_s": self.sim_s_per_wall_s,
            "peak_rss_bytes": self.peak_rss_bytes,
        })
    }
    /// The figures back from [`Figures::to_json`].
    pub fn from_json(v: &serde_json::Value) -> Option<Figures> {
        let s = |k: &str| v[k].as_str().map(String::from);
        let f = |k: &str| v[k].as_f64();
        let u = |k: &str| v[k].as_u64();
        Some(Figures {
            name: s("name")?,
            label: s("label")?,
            machine: s("machine")?,
            cpus: u("cpus")? as usize,
            tasks: u("tasks")? as usize,
            sim_s: f("sim_s")?,
            events: u("events")?,
            setup_s: f("setup_s")?,
            wall_s: f("wall_s")?,
            cpu_s: f("cpu_s")?,
            events_per_s: f("events_per_s")?,
            ns_per_event: f("ns_per_event")?,
            sim_s_per_wall_s: f("sim_s_per_wall_s")?,
            peak_rss_bytes: u("peak_rss_bytes"),
        })
    }
}

/// User + system CPU seconds of this process so far.
pub fn cpu_time() -> f64 {
    // SAFETY: getrusage fills the struct it is given; zeroed is a valid
    // initial value for this plain C struct.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(r.ru_utime) + tv(r.ru_stime)
}

/// `VmHWM` of this process, in bytes (Linux only).
pub fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Callgrind's client requests (valgrind's callgrind.h: the tool base
/// `'C' << 24 | 'T' << 16`, then DUMP_STATS, ZERO_STATS, TOGGLE_COLLECT,
/// DUMP_STATS_AT, START_INSTRUMENTATION, STOP_INSTRUMENTATION).
const CALLGRIND_BASE: u64 = (b'C' as u64) << 24 | (b'T' as u64) << 16;
const CALLGRIND_START_INSTRUMENTATION: u64 = CALLGRIND_BASE + 4;
const CALLGRIND_STOP_INSTRUMENTATION: u64 = CALLGRIND_BASE + 5;

/// Issues one valgrind client request (valgrind.h's x86-64 magic sequence:
/// four rotations of rdi by 128 bits in all, then `xchg rbx, rbx`, with
/// rax pointing at the request and its five arguments). Natively the
/// sequence changes nothing and the default (0) comes back.
#[cfg(target_arch = "x86_64")]
pub fn valgrind_request(req: u64) -> u64 {
    let args: [u64; 6] = [req, 0, 0, 0, 0, 0];
    let mut res: u64 = 0;
    // SAFETY: the rotations leave rdi as it was (declared clobbered all
    // the same), xchg of rbx with itself changes nothing; valgrind, when
    // present, reads the six words at rax and writes rdx only.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") res,
            in("rax") args.as_ptr(),
            out("rdi") _,
        );
    }
    res
}

#[cfg(not(target_arch = "x86_64"))]
pub fn valgrind_request(_req: u64) -> u64 {
    0
}

/// Builds and runs one case in this process.
pub fn run_case(c: &Case, secs: f64) -> Result<Figures, BenchError> {
    run_case_window(c, secs, None)
}

/// [`run_case`], with callgrind's instrumentation on only from the first
/// progress point at or after `from_ns` (see `--callgrind-from`).
pub fn run_case_window(c: &Case, secs: f64, from_ns: Option<u64>) -> Result<Figures, BenchError> {
    let machine = preset(c.machine).expect("preset exists");
    let cpus = machine.nr_cpus();
    let w = workload(c.name, cpus);
    let cfg = SimConfig {
        duration_ns: Some((secs * NSEC_PER_SEC as f64).round() as u64),
        ..SimConfig::default()
    };
    let t0 = Instant::now();
    let mut sim = Sim::new(machine, &w, cfg, NullSink).map_err(|e| BenchError(e.to_string()))?;
    // Log rows dropped as they complete, as `run` without --out does (held,
    // they made peak memory grow with the simulated time: periodic-160
    // 12 MiB after 1 s, 75 MiB after 10 s).
    sim.stream_rows(Box::new(DiscardRows));
    let setup_s = t0.elapsed().as_secs_f64();
    let (t1, c1) = (Instant::now(), cpu_time());
    let res = match from_ns {
        None => sim.run(),
        Some(from) => {
            // `progress` is called before the 2^16 k-th event is counted:
            // the window starts at event 2^16 (calls - 1).
            let (mut calls, mut start): (u64, Option<(u64, u64)>) = (0, None);
            let res = sim.run_with_progress(|t| {
                calls += 1;
                if start.is_none() && t >= from {
                    start = Some(((calls - 1) << 16, t));
                    valgrind_request(CALLGRIND_START_INSTRUMENTATION);
                }
            });
            valgrind_request(CALLGRIND_STOP_INSTRUMENTATION);
            match start {
                Some((ev0, t0)) => eprintln!(
                    "callgrind window: {} events, from event {ev0} at {t0} ns to event {} at {} ns",
                    res.events - ev0,
                    res.events,
                    res.end_ns
                ),
                None => eprintln!("callgrind window: empty (the run ended before {from} ns)"),
            }
            res
        }
    };
    let wall_s = t1.elapsed().as_secs_f64();
    let cpu_s = cpu_time() - c1;
    Ok(Figures {
        name: c.name.into(),
        label: c.label.into(),
        machine: c.machine.into(),
        cpus,
        tasks: w.tasks.len(),
        sim_s: secs,
        events: res.events,
        setup_s,
        wall_s,
        cpu_s,
        events_per_s: res.events as f64 / wall_s,
        ns_per_event: wall_s * 1e9 / res.events.max(1) as f64,
        sim_s_per_wall_s: secs / wall_s,
        peak_rss_bytes: None,
    })
}

//! Tests that really run on this host. They need Linux and root, so they
//! are `#[ignore]`d: a plain `cargo test` reports them as ignored, with
//! the reason; scripts/test.sh runs them (`-- --ignored`) as root on Linux
//! where tracefs is usable, and lists the ones it left out and why
//! otherwise. Run by hand:
//! `cargo test --release -p schedlab-host --test host -- --ignored`.
//! They run one at a time (a shared lock) and every bound is generous: the
//! host is a shared 2-vCPU VM.

use schedlab_core::program::{GroupSpec, Op, Policy, TaskSpec, Workload};
use schedlab_host::cgroup::CgroupVersion;
use schedlab_host::{ExecOptions, ExecResult, HostError, RecordOptions, RecordResult};
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

const MS: u64 = 1_000_000;

/// A line on the real stderr: the test harness captures `eprintln!` of
/// passing tests, and a relaxed check must be seen.
fn loud(msg: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("{msg}\n").as_bytes());
}

/// Fails at once, saying why, when an ignored host test is run (`--ignored`)
/// where it cannot: not Linux, or not root.
fn require_host(test: &str) {
    assert!(
        cfg!(target_os = "linux"),
        "{test} needs Linux: leave it ignored here"
    );
    assert!(
        unsafe { libc::geteuid() } == 0,
        "{test} needs root (host tests set policies, cgroups and tracefs): run as root or leave it ignored"
    );
}

/// How long a host run may take before the test calls it a hang (a run of
/// at most 300 ms plus calibration; generous for a loaded 2-vCPU VM).
const WATCHDOG_S: u64 = 60;

/// Runs `f` on a thread of its own and fails the test if it does not end
/// within [`WATCHDOG_S`]: a hang in a real run (a thread stuck on a futex)
/// fails one test instead of stalling the whole suite. Process exit at the
/// end of the test binary ends the stuck threads.
fn watchdog<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(WATCHDOG_S)) {
        Ok(v) => v,
        Err(_) => panic!("{what} did not finish within {WATCHDOG_S} s: a hang"),
    }
}

fn exec(w: &Workload, o: &ExecOptions) -> Result<ExecResult, HostError> {
    let (w, o) = (w.clone(), o.clone());
    watchdog("exec", move || schedlab_host::exec(&w, &o))
}

fn record(
    w: &Workload,
    dir: &std::path::Path,
    o: &RecordOptions,
) -> Result<RecordResult, HostError> {
    let (w, d, o) = (w.clone(), dir.to_path_buf(), o.clone());
    watchdog("record", move || schedlab_host::record(&w, &d, &o))
}

/// CPU time (ns) all CPUs spent busy, from /proc/stat, and this process's
/// own CPU time: their difference over a run is what other tasks of the
/// host took.
fn busy_ns() -> (u64, u64) {
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let all: u64 = stat
        .lines()
        .next()
        .map(|l| {
            l.split_whitespace()
                .skip(1)
                .enumerate()
                // user nice system idle iowait irq softirq steal: not idle (3), not iowait (4)
                .filter(|&(i, _)| i != 3 && i != 4 && i < 8)
                .filter_map(|(_, v)| v.parse::<u64>().ok())
                .sum()
        })
        .unwrap_or(0);
    let me = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's ')': state, ppid, pgrp, session, tty_nr,
    // tpgid (may be -1), flags, minflt, cminflt, majflt, cmajflt, utime,
    // stime: utime and stime are the 12th and 13th.
    let f: Vec<&str> = me
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let own = num(11) + num(12);
    let to_ns = 1_000_000_000 / hz.max(1);
    (all * to_ns, own * to_ns)
}

/// Runs `f` and says whether the host was quiet enough meanwhile for timing
/// bounds to mean anything: other tasks took under half a CPU on average.
/// When it was not, the test says so loudly and checks structure only.
fn quiet_while<T>(test: &str, f: impl FnOnce() -> T) -> (T, bool) {
    let t0 = std::time::Instant::now();
    let (a0, m0) = busy_ns();
    let v = f();
    let (a1, m1) = busy_ns();
    let wall = t0.elapsed().as_nanos() as u64;
    let foreign = (a1 - a0).saturating_sub(m1 - m0) as f64 / wall.max(1) as f64;
    let quiet = foreign < 0.5;
    if !quiet {
        loud(&format!(
            "!!! {test}: the host was busy (other tasks took {foreign:.2} CPUs during the run): timing bounds not checked, structure only"
        ));
    }
    (v, quiet)
}

fn load(json: &str) -> Workload {
    schedlab_workload::load_rtapp("test.json", json, 2)
        .expect("workload loads")
        .workload
}

fn opts(ms: u64) -> ExecOptions {
    ExecOptions {
        duration_ns: Some(ms * MS),
        ..Default::default()
    }
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

const PERIODIC: &str = r#"{ "tasks": { "p": { "instance": 2, "run": 2000,
    "timer": { "ref": "unique", "period": 10000 } } },
    "global": { "duration": 1, "calibration": "CPU0" } }"#;

#[test]
#[ignore = "needs root on Linux; scripts/test.sh runs it as root where tracefs is usable"]
fn periodic_two_threads() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_host("periodic_two_threads");
    let w = load(PERIODIC);
    let (r, quiet) = quiet_while("periodic_two_threads", || exec(&w, &opts(300)).unwrap());
    assert!(r.calibration.ns_per_loop > 0.0);
    assert_eq!(r.threads.len(), 2);
    for t in &r.threads {
        assert!(t.tid > 0 && t.started, "{t:?}");
        let n = t.log.len();
        assert!((1..=31).contains(&n), "{}: {n} rows", t.name);
        for row in &t.log {
            assert_eq!((row.c_period, row.c_duration), (10_000, 2000));
            assert!(row.perf > 0);
            assert!(row.end >= row.start && row.rel_st < 400_000);
        }
        if !quiet {
            continue;
        }
        assert!((15..=31).contains(&n), "{}: {n} rows", t.name);
        let period = median(t.log.iter().map(|x| x.period).collect());
        let run = median(t.log.iter().map(|x| x.run).collect());
        assert!(
            (7_000..=14_000).contains(&period),
            "{}: median period {period}",
            t.name
        );
        assert!(
            (1_500..=6_000).contains(&run),
            "{}: median run {run}",
            t.name
        );
        // schedstat: ~60 ms of CPU in 300 ms.
        let run_ms = t.stats.run_ns / MS;
        assert!(
            (30..=150).contains(&run_ms),
            "{}: {run_ms} ms on CPU",
            t.name
        );
        // Every iteration whose timer had not expired yet slept in
        // clock_nanosleep: a voluntary switch. Late iterations (a busy
        // host, e.g. parallel builds) do not sleep, so count only those.
        let slept = t.log.iter().filter(|x| x.slack > 0).count() as u64;
        assert!(
            t.stats.voluntary_switches >= slept / 2,
            "{} iterations slept, {:?}",
            slept,
            t.stats
        );
    }
    if quiet {
        assert!(r.last_exit_ns - r.t_start_ns < 600 * MS);
    }
}

#[test]
#[ignore = "needs root on Linux; scripts/test.sh runs it as root where tracefs is usable"]
fn idle_hog_beside_periodic() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_host("idle_hog_beside_periodic");
    let w = load(
        r#"{ "tasks": {
        "p": { "cpus": [0], "run": 2000, "timer": { "ref": "unique", "period": 10000 } },
        "hog": { "cpus": [0], "policy": "SCHED_IDLE", "run": 50000 } },
        "global": { "duration": 1, "calibration": "CPU0" } }"#,
    );
    let (r, quiet) = quiet_while("idle_hog_beside_periodic", || exec(&w, &opts(300)).unwrap());
    let p = &r.threads[0];
    let hog = &r.threads[1];
    assert_eq!(hog.name, "hog-1");
    assert!(!p.log.is_empty(), "the periodic thread logged nothing");
    if !quiet {
        return;
    }
    assert!((15..=31).contains(&p.log.len()), "{} rows", p.log.len());
    let run = median(p.log.iter().map(|x| x.run).collect());
    assert!(
        run <= 6_000,
        "periodic median run {run} µs beside an idle hog"
    );
    let lat = schedlab_host::exec::wu_lat_percentiles(&p.log).unwrap();
    assert!(lat[0] < 5_000, "periodic wake-up latency p50 {} µs", lat[0]);
    // The hog gets most of what is left of CPU 0; other tasks of the host
    // (fair, so above it) can still take CPU 0 from it, but it must run.
    let hog_ms = hog.stats.run_ns / MS;
    assert!(hog_ms >= 5, "SCHED_IDLE hog ran {hog_ms} ms of 300");
}

#[test]
#[ignore = "needs root on Linux; scripts/test.sh runs it as root where tracefs is usable"]
fn capped_group_is_throttled_and_removed() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_host("capped_group_is_throttled_and_removed");
    let mut hog = TaskSpec::looping(
        "capped-hog",
        0,
        Policy::Normal,
        vec![Op::Run {
            work_ns: 20 * MS,
            config_us: 20_000,
            perf: 0,
        }],
    );
    hog.cpus = Some(vec![0]);
    hog.group = "/capped".into();
    let mut g = GroupSpec::new("/capped");
    g.quota_ns = Some(4 * MS);
    g.period_ns = 20 * MS;
    let w = Workload {
        tasks: vec![hog],
        groups: vec![g],
        log_basename: "t".into(),
        calibration_ns: 100,
        ..Default::default()
    };
    let r = exec(&w, &opts(300)).unwrap();
    let t = &r.threads[0];
    let share = t.stats.run_ns as f64 / (t.ended_ns - t.started_ns) as f64;
    assert!(
        (0.08..=0.35).contains(&share),
        "capped hog got {share:.3} of a CPU"
    );
    assert_eq!(r.groups.len(), 1);
    let gs = &r.groups[0];
    let key = match r.cgroup_version {
        Some(CgroupVersion::V1) | Some(CgroupVersion::V2) => "nr_throttled",
        None => panic!("no cgroup interface recorded"),
    };
    let d = gs.after.get(key).copied().unwrap_or(0) - gs.before.get(key).copied().unwrap_or(0);
    assert!(d >= 5, "nr_throttled grew by {d}: {gs:?}");
    let delta = |k: &str| {
        gs.after
            .get(k)
            .copied()
            .unwrap_or(0)
            .saturating_sub(gs.before.get(k).copied().unwrap_or(0))
    };
    assert!(delta("throttled_usec") > 0, "{gs:?}");
    // The group's usage is the hog's CPU time (within 20%).
    let usage_us = delta("usage_usec");
    let run_us = t.stats.run_ns / 1000;
    assert!(
        usage_us.abs_diff(run_us) * 5 <= run_us.max(1),
        "usage {usage_us} µs vs the hog's {run_us} µs"
    );
    assert!(!gs.dir.exists(), "{} was not removed", gs.dir.display());
    assert!(
        !gs.dir.parent().unwrap().exists(),
        "private cgroup dir left behind"
    );
}

#[test]
#[ignore = "needs root on Linux; scripts/test.sh runs it as root where tracefs is usable"]
fn sync_objects_channels_and_forks() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_host("sync_objects_channels_and_forks");
    let w = load(
        r#"{ "tasks": {
        "poster": { "sem_post": "s", "run": 200, "sleep": 2000 },
        "waiter": { "sem_wait": "s", "run": 100 },
        "b1": { "barrier": "bar", "run": 300, "sleep": 1000 },
        "b2": { "barrier": "bar", "run": 100 },
        "locker": { "lock": "m", "run": 100, "signal": "c", "unlock": "m", "sleep": 3000 },
        "cw": { "lock": "m", "wait": { "ref": "c", "mutex": "m" }, "unlock": "m", "run": 50 },
        "forker": { "loop": 1, "fork": "child", "sleep": 1000 },
        "child": { "instance": 0, "loop": 3, "run": 100, "sleep": 100 } },
        "global": { "duration": 1, "calibration": "CPU0" } }"#,
    );
    let r = exec(&w, &opts(200)).unwrap();
    let by = |n: &str| r.threads.iter().find(|t| t.name.starts_with(n)).unwrap();
    let (poster, waiter) = (by("poster"), by("waiter"));
    assert!(poster.loops >= 30, "{}", poster.loops);
    assert!(
        waiter.loops.abs_diff(poster.loops) <= 2,
        "{} vs {}",
        waiter.loops,
        poster.loops
    );
    let (b1, b2) = (by("b1"), by("b2"));
    assert!(
        b1.loops >= 50 && b1.loops.abs_diff(b2.loops) <= 2,
        "{} {}",
        b1.loops,
        b2.loops
    );
    let (lk, cw) = (by("locker"), by("cw"));
    assert!(
        lk.loops >= 20 && cw.loops + 2 >= lk.loops / 2,
        "{} {}",
        lk.loops,
        cw.loops
    );
    let child = by("child");
    assert!(
        child.started && child.forked && child.finished && child.loops == 3,
        "{child:?}"
    );
    assert!(by("forker").finished);

    let hb =
        schedlab_workload::generators::generator("hackbench:groups=1,fds=4,loops=50,ipc=pipe", 2)
            .unwrap()
            .unwrap()
            .workload;
    for kind in ["ipc=pipe", "ipc=socket"] {
        let mut o = opts(1500);
        o.channels = schedlab_host::ChannelConfig::from_spec(&format!("hackbench:{kind}"));
        let r = exec(&hb, &o).unwrap();
        assert!(
            r.threads.iter().all(|t| t.finished),
            "{kind}: {:?}",
            r.threads
        );
        assert!(r.last_exit_ns - r.t0_ns < 1000 * MS, "{kind}");
    }
}

#[test]
fn bad_workloads_are_refused_before_running() {
    let w = Workload {
        tasks: vec![TaskSpec::looping(
            "t",
            0,
            Policy::Normal,
            vec![Op::Lock { mutex: 3 }],
        )],
        ..Default::default()
    };
    let e = exec(&w, &opts(10)).unwrap_err();
    assert!(matches!(e, HostError::Workload(_)), "{e}");
    assert!(e.to_string().contains("Lock"), "{e}");
    let mut t = TaskSpec::looping("t", 0, Policy::Normal, vec![Op::Yield]);
    t.cpus = Some(vec![4000]);
    let w = Workload {
        tasks: vec![t],
        ..Default::default()
    };
    let e = exec(&w, &opts(10)).unwrap_err();
    assert!(e.to_string().contains("CPU 4000"), "{e}");
}

#[test]
#[ignore = "needs root on Linux and tracefs; scripts/test.sh runs it where both hold"]
fn record_periodic_run() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_host("record_periodic_run");
    let dir = tempfile::tempdir().unwrap();
    let w = load(&PERIODIC.replace(
        r#""calibration": "CPU0""#,
        r#""calibration": "CPU0", "ftrace": "main,task,loop,event,stats""#,
    ));
    assert_ne!(w.ftrace, 0);
    let mut o = RecordOptions::default();
    o.exec.duration_ns = Some(300 * MS);
    let r = match record(&w, dir.path(), &o) {
        Ok(r) => r,
        Err(e @ (HostError::NoTracefs(_) | HostError::NoTraceEvent(_))) => {
            panic!("this host cannot trace ({e}): leave record_periodic_run ignored here")
        }
        Err(e) => panic!("{e}"),
    };
    let trace = std::fs::read_to_string(dir.path().join("trace.txt")).unwrap();
    // Switches *out* of each thread (idle -> task switch-in lines can be
    // missing on this kernel, so they are not counted on).
    for t in &r.exec.threads {
        let needle = format!("prev_pid={} ", t.tid);
        let n = trace
            .lines()
            .filter(|l| l.contains("sched_switch:") && l.contains(&needle))
            .count();
        assert!(n >= 15, "{}: {n} switches out of tid {}", t.name, t.tid);
    }
    assert!(trace.contains("sched_waking:") && trace.contains("sched_wakeup:"));
    // rt-app's markers, written by the threads themselves.
    let stats = trace
        .lines()
        .filter(|l| l.contains("rtapp_stats: period="))
        .count();
    assert!(stats >= 30, "{stats} rtapp_stats markers");
    assert!(trace.contains("rtapp_main: event=clock_ref data="));
    assert!(trace.contains("rtapp_loop: event=start thread_loop=0 phase=0 phase_loop=0"));
    assert!(
        trace.contains("rtapp_event: id=0 type=6 desc=run"),
        "no run event marker"
    );
    assert!(r.exec.warnings.is_empty(), "{:?}", r.exec.warnings);
    let hj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("host.json")).unwrap())
            .unwrap();
    let host = &hj["host"];
    assert!(host["kernel"]["release"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    assert!(host["hz"]["value"].as_u64().is_some(), "{}", host["hz"]);
    assert!(
        host["preempt"]["value"].as_str().is_some(),
        "{}",
        host["preempt"]
    );
    assert!(host["autogroup"].is_boolean());
    assert!(host["tunables"].as_object().is_some_and(|m| !m.is_empty()));
    assert!(host["cpuidle_driver"].is_string() || host["cpuidle_driver"].is_null());
    assert!(
        host["sysfs_import"]
            .as_str()
            .is_some_and(|s| s.starts_with("ok")),
        "{}",
        host["sysfs_import"]
    );
    assert_eq!(hj["threads"].as_array().unwrap().len(), 2);
    assert!(hj["groups"].is_array());
    assert!(hj["trace"]["per_cpu"]
        .as_array()
        .is_some_and(|v| !v.is_empty()));
    // The copied topology imports as a machine.
    let sysfs = dir.path().join("sysfs");
    assert!(sysfs.join("devices/system/cpu/online").exists());
    // No instance left behind.
    assert!(!r.host.trace.instance.exists());
    // DIR is also a run directory in the simulator's layout.
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(s["source"], "host");
    assert_eq!(s["tasks"].as_array().unwrap().len(), 2);
    for (t, e) in s["tasks"].as_array().unwrap().iter().zip(&r.exec.threads) {
        assert_eq!(t["pid"].as_i64(), Some(e.tid as i64));
        let n = t["wakeup_latency_us"]["n"].as_u64().unwrap();
        assert!(n >= 15, "{t}");
        assert_eq!(t["deadlines"]["periods"].as_u64(), Some(n));
        assert!(t["wakeups"].as_u64().unwrap() >= 15, "{t}");
        assert!(dir.path().join(format!("rt-app-{}.log", e.name)).exists());
    }
    let cpus = s["cpus"].as_array().unwrap();
    assert!(!cpus.is_empty());
    for c in cpus {
        let covered = c["busy_ns"].as_u64().unwrap() + c["idle_ns"].as_u64().unwrap();
        assert!(covered > 250 * MS && covered <= 310 * MS, "{c}");
    }
    // The trace's switch-ins of each thread match /proc's switches.
    let ts =
        schedlab_host::rundir::run_trace_stats(&r.exec, &dir.path().join("trace.txt")).unwrap();
    for e in &r.exec.threads {
        let c = &ts.pids[&(e.tid as u32)];
        let proc_sw = e.stats.voluntary_switches + e.stats.involuntary_switches;
        assert!(
            c.switch_ins + 3 >= proc_sw && c.switch_ins <= proc_sw + 3,
            "{}: trace {} switch-ins ({} inferred), /proc {proc_sw}",
            e.name,
            c.switch_ins,
            c.inferred
        );
    }
}

#[test]
#[ignore = "needs root on Linux; scripts/test.sh runs it as root where tracefs is usable"]
fn policies_nice_slices_are_set() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_host("policies_nice_slices_are_set");
    let w = load(
        r#"{ "tasks": {
        "fifo": { "policy": "SCHED_FIFO", "priority": 10, "run": 100, "sleep": 5000 },
        "rr": { "policy": "SCHED_RR", "priority": 20, "run": 100, "sleep": 5000 },
        "dl": { "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 10000, "run": 200, "sleep": 5000 },
        "nice": { "priority": 5, "run": 100, "sleep": 5000 },
        "batch": { "policy": "SCHED_BATCH", "priority": -3, "run": 100, "sleep": 5000 },
        "idle": { "policy": "SCHED_IDLE", "run": 100, "sleep": 5000 },
        "slice": { "dl-runtime": 3000, "run": 100, "sleep": 5000 } },
        "global": { "duration": 1, "calibration": "CPU0" } }"#,
    );
    let r = exec(&w, &opts(60)).unwrap();
    let got: Vec<(String, Option<u64>, Option<i64>)> = r
        .threads
        .iter()
        .map(|t| (t.name.clone(), t.stats.policy, t.stats.prio))
        .collect();
    if got.iter().all(|g| g.1.is_none()) {
        loud("!!! policies_nice_slices_are_set: /proc/thread-self/sched is not readable here: the policies were set without error, their values not read back");
        return;
    }
    let want: [(u64, Option<i64>); 7] = [
        (1, Some(89)),
        (2, Some(79)),
        (6, None),
        (0, Some(125)),
        (3, Some(117)),
        (5, None),
        (0, Some(120)),
    ];
    for ((name, pol, prio), (wp, wprio)) in got.iter().zip(want) {
        assert_eq!(*pol, Some(wp), "{name}: policy");
        if wprio.is_some() {
            assert_eq!(*prio, wprio, "{name}: prio");
        }
    }
    let slice = r.threads[6].stats.slice_ns;
    assert_eq!(slice, Some(3_000_000), "custom slice");
}

//! The `schbench:` generator: Chris Mason's scheduler latency benchmark
//! (kernel.org `mason/schbench`, mirrored at github.com/masoncl/schbench;
//! the semantics followed are those of its current line, v1.0 and later,
//! read at commit 24e32b8 of 2025-12-23). No code is taken from it
//! (GPL): the behaviour below is described from reading it.
//!
//! # Spec
//!
//! `schbench:m=M,t=T,r=R,s=S,n=N,F=KB,L,M=auto,R=RPS,w=W,cgroup=PATH`,
//! the keys named after schbench's options (case matters: `-F` and `-R`
//! are not `-f`, `-r`); `L` needs no value (`L=1`, `L=0` also work).
//!
//! | key | schbench | default | meaning |
//! |---|---|---|---|
//! | `m` | `-m` | 1 | message threads |
//! | `t` | `-t` | ⌈CPUs / m⌉ | worker threads per message thread |
//! | `r` | `-r` | 30 | runtime, seconds (the run's length) |
//! | `s` | `-s` | 100 | sleep per request, µs (`usleep`) |
//! | `n` | `-n` | 5 | matrix multiplies per request |
//! | `F` | `-F` | 256 | cache footprint, kB (sets the matrix size) |
//! | `L` | `-L` | off | no per-CPU lock around the CPU work |
//! | `M` | `-M` | none | `auto`, a CPU, or a range `a-b`: message thread pinning |
//! | `R` | `-R` | 0 | requests per second (0: as fast as the workers go) |
//! | `w` | `-w` | 0 | warmup, seconds: statistics reset then (ignored when `r` < 30 or with `R`, as schbench does) |
//!
//! # What each thread does
//!
//! Default mode (`R=0`): message thread `i` and its workers hand one futex
//! word each back and forth (`schedlab-core` `sched/futex_word.rs`). A
//! worker arms its word, reads the clock (its own wake time), prepends
//! itself to its message thread's wake list, posts the message thread's
//! word and waits on its own; once running again it records the wakeup
//! latency (now − the wake time the message thread wrote), then serves
//! one request: it reads the clock, sleeps `s` µs, does the CPU work, and
//! records the request latency (now − that read), one completed request
//! (schbench's `loop_count`). The message thread arms its word, splices
//! its wake list, reads the clock once and, for each worker in the list
//! (newest first), writes that time as the worker's wake time and posts
//! its word; then it waits on its own word.
//!
//! Rate mode (`R>0`): each message thread gets `R / m` requests per second
//! (integer division, as schbench). At the start of each second it reads
//! the clock, then posts its requests to its workers in turn (a worker
//! holding more than 128 queued requests makes it sleep 100 µs and drop
//! that request), then sleeps until a second after its clock read. A
//! worker splices its queue; with requests it serves them one after
//! another; without, it posts the message thread's word, waits on its
//! own, records the wakeup latency (from the post that woke it) and
//! splices again.
//!
//! `M=auto` pins message thread `i` to CPU `i`. The workers stay on every
//! CPU: schbench's auto pinning clears the message CPUs from the worker
//! set and then, with a loop counter that its inner loop shadowed, sets
//! every CPU again. `M=a-b` pins message thread `i` to the `i`-th CPU of
//! the list (modulo its length).
//!
//! # The per-CPU lock (schbench's default; `L` turns it off)
//!
//! Around the CPU work a worker takes the lock of the CPU it runs on
//! (`Op::CpuLock`, `sched/futex_word.rs`): it spins (busy, on its CPU)
//! while another thread holds it; having taken it, it checks it still
//! runs on that CPU, else releases it and starts over. A worker preempted
//! or migrated while holding the lock keeps it, and whoever wants that
//! CPU's lock spins until the work is done: schbench's penalty for
//! preemption. The trylock and unlock each cost one atomic.
//!
//! # CPU work per request
//!
//! schbench multiplies two `k × k` matrices of `unsigned long` into a
//! third, `n` times, with `k = ⌊√(F·1024 / 3 / 8)⌋` (104 for 256 kB): `n·k³`
//! multiply-adds. Their time is an **independent measurement** on the
//! build host (`scripts/measure/schbench-work.c`, the same loop written for this
//! project, `cc -O2` as schbench's Makefile; AMD EPYC KVM guest, 2.6 GHz,
//! Linux 6.18, 2026-11-25, SCHED_FIFO, pinned, min of 40 batches of 20
//! requests): 1.90–1.92 ms per default request (5 × 104³), 0.343 ns per
//! multiply-add. Other sizes are scaled by `n·k³` from that figure (the
//! same host measured 0.336 ns at 64 kB, 0.371 ns at 1 MB, 0.426 ns at
//! 4 MB: caches make big footprints up to 25% slower than this rule).
//! The figure is a host CPU time: each machine gets it scaled by the
//! syscall costs' rule (`Workload::host_work`, `sched/syscall_cost.rs`).
//!
//! # Deviations
//!
//! * Clock reads and `malloc` cost nothing; schbench's `-i` interval
//!   reports are not printed (only the final one), and `-C`, `-A`, `-p`,
//!   `-W`, `-z`, `--split` are not offered.
//! * The run ends at `r` seconds; the threads' exit is not modelled.

use crate::spec_params::{cgroup_template, err, list_groups, number};
use crate::{Loaded, WorkloadError};
use schedlab_core::program::{Op, Phase, Policy, RequestQueueSpec, TaskSpec, Workload};
use schedlab_core::time::{Nanos, NSEC_PER_SEC, NSEC_PER_USEC};

/// Host time of one multiply-add of schbench's matrix loop, picoseconds
/// (module docs: measured, 1.93 ms / (5 × 104³)).
pub const HOST_PS_PER_MULTIPLY_ADD: u64 = 343;

/// A worker's queue limit in rate mode before the message thread backs
/// off (schbench's `batch`).
pub const RPS_QUEUE_CAP: u64 = 128;

/// The message thread's back-off sleep in rate mode (schbench: 100 µs).
pub const RPS_BACKOFF_NS: Nanos = 100 * NSEC_PER_USEC;

/// Slot of a thread's wake time.
pub const SLOT_WAKE: u8 = 0;
/// Slot of a request's start.
pub const SLOT_REQUEST: u8 = 1;
/// Probe of the wakeup latencies.
pub const PROBE_WAKEUP: u32 = 0;
/// Probe of the request latencies.
pub const PROBE_REQUEST: u32 = 1;

/// The longest run accepted (seconds).
const MAX_RUNTIME_S: u64 = 86_400;

/// Message thread pinning (`-M`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pinning {
    /// No pinning.
    None,
    /// `auto`: message thread `i` on CPU `i`.
    Auto,
    /// A CPU list: message thread `i` on its `i`-th CPU (modulo).
    Cpus(Vec<u32>),
}

/// A parsed `schbench:` spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// `-m`.
    pub message_threads: u64,
    /// `-t`.
    pub workers: u64,
    /// `-r`, seconds.
    pub runtime_s: u64,
    /// `-s`, µs.
    pub sleep_us: u64,
    /// `-n`.
    pub operations: u64,
    /// `-F`, kB.
    pub footprint_kb: u64,
    /// Not `-L`: the per-CPU lock is asked for.
    pub locking: bool,
    /// `-M`.
    pub pinning: Pinning,
    /// `-R`, all message threads together.
    pub rps: u64,
    /// `-w`, seconds, after schbench's rules (0 when `r` < 30 or `R` > 0).
    pub warmup_s: u64,
}

impl Params {
    /// Matrix side for the footprint (schbench's `sqrt(F*1024/3/8)`).
    pub fn matrix_size(&self) -> u64 {
        ((self.footprint_kb * 1024 / 3 / 8) as f64).sqrt() as u64
    }

    /// CPU work of one request on the build host, ns.
    pub fn work_ns(&self) -> Nanos {
        let k = self.matrix_size() as u128;
        let ps = k * k * k * self.operations as u128 * HOST_PS_PER_MULTIPLY_ADD as u128;
        (ps / 1000).min(u64::MAX as u128) as Nanos
    }
}

fn cpu_list(spec: &str, v: &str, nr_cpus: usize) -> Result<Pinning, WorkloadError> {
    if v == "auto" {
        return Ok(Pinning::Auto);
    }
    let bad = || {
        err(
            spec,
            format!("key 'M': '{v}' is not auto, a CPU or a range a-b"),
        )
    };
    let (a, b) = match v.split_once('-') {
        Some((a, b)) => (a, b),
        None => (v, v),
    };
    let a: u32 = a.parse().map_err(|_| bad())?;
    let b: u32 = b.parse().map_err(|_| bad())?;
    if a > b {
        return Err(bad());
    }
    if b as usize >= nr_cpus {
        return Err(err(
            spec,
            format!("key 'M': CPU {b} is not on the machine ({nr_cpus} CPUs)"),
        ));
    }
    Ok(Pinning::Cpus((a..=b).collect()))
}

/// Parses the part after `schbench:`.
pub fn parse(spec: &str, rest: &str, nr_cpus: usize) -> Result<(Params, String), WorkloadError> {
    let known = ["m", "t", "r", "s", "n", "F", "L", "M", "R", "w", "cgroup"];
    let mut seen: Vec<&str> = Vec::new();
    let mut cgroup = crate::cgroup::ROOT.to_string();
    let mut vals: Vec<(&str, u64)> = Vec::new();
    let mut locking = true;
    let mut pin = Pinning::None;
    for item in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=').unwrap_or((item, ""));
        if !known.contains(&k) {
            let hint = match k.to_ascii_lowercase().as_str() {
                "f" => " (the footprint is F, as schbench's -F)",
                _ => "",
            };
            return Err(err(
                spec,
                format!("unknown key '{k}' (valid: {}){hint}", known.join(", ")),
            ));
        }
        if seen.contains(&k) {
            return Err(err(spec, format!("key '{k}' is given twice")));
        }
        seen.push(k);
        match k {
            "L" => {
                locking = match v {
                    "" | "1" => false,
                    "0" => true,
                    _ => {
                        return Err(err(
                            spec,
                            format!("key 'L': '{v}' is not 1 or 0 (or write L alone)"),
                        ))
                    }
                }
            }
            "M" => pin = cpu_list(spec, v, nr_cpus)?,
            "cgroup" => cgroup = cgroup_template(spec, v, false)?,
            _ => {
                if !item.contains('=') {
                    return Err(err(spec, format!("'{item}' is not key=value")));
                }
                vals.push((k, number(spec, k, v)?));
            }
        }
    }
    let get = |k: &str| vals.iter().find(|x| x.0 == k).map(|x| x.1);
    let m = get("m").unwrap_or(1);
    if m == 0 {
        return Err(err(spec, "key 'm': at least 1 message thread".into()));
    }
    let t = match get("t") {
        Some(0) | None => (nr_cpus as u64).div_ceil(m).max(1),
        Some(t) => t,
    };
    let r = get("r").unwrap_or(30);
    if r == 0 || r > MAX_RUNTIME_S {
        return Err(err(
            spec,
            format!("key 'r': {r} s is outside 1..={MAX_RUNTIME_S} (schbench's r=0, run until killed, has no end to simulate)"),
        ));
    }
    let (s, n, f) = (
        get("s").unwrap_or(100),
        get("n").unwrap_or(5),
        get("F").unwrap_or(256),
    );
    for (k, v, max) in [
        ("s", s, 10_000_000),
        ("n", n, 1_000_000),
        ("F", f, 16 << 20),
    ] {
        if v > max {
            return Err(err(spec, format!("key '{k}': {v} is outside 0..={max}")));
        }
    }
    let rps = get("R").unwrap_or(0);
    if rps > 100_000_000 {
        return Err(err(
            spec,
            format!("key 'R': {rps} is outside 0..=100000000"),
        ));
    }
    let mut w = get("w").unwrap_or(0);
    if w >= r && w > 0 && r >= 30 && rps == 0 {
        return Err(err(
            spec,
            format!("key 'w': warmup {w} s is not shorter than the runtime r={r} s"),
        ));
    }
    // schbench: no warmup for runs under 30 s, none in rate mode.
    if r < 30 || rps > 0 {
        w = 0;
    }
    // Checked both ways: `t=18446744073709551615` must not wrap `t + 1`
    // to 0 threads under the cap (it built for ever; found probing the
    // keys' extremes, now a seed of the `generator` fuzz target).
    match t.checked_add(1).and_then(|n| m.checked_mul(n)) {
        Some(x) if x <= crate::limits::max_tasks() => {}
        x => {
            let x = x.map_or_else(|| format!("{m} x ({t} + 1)"), |x| x.to_string());
            let (max, hint) = (crate::limits::max_tasks(), crate::limits::max_tasks_hint());
            return Err(err(
                spec,
                format!("{x} threads is absurd (at most {max}; {hint})"),
            ));
        }
    }
    if pin == Pinning::Auto && m as usize > nr_cpus {
        return Err(err(
            spec,
            format!("key 'M': auto pins message thread i to CPU i, but m={m} is more than the machine's {nr_cpus} CPUs"),
        ));
    }
    Ok((
        Params {
            message_threads: m,
            workers: t,
            runtime_s: r,
            sleep_us: s,
            operations: n,
            footprint_kb: f,
            locking,
            pinning: pin,
            rps,
            warmup_s: w,
        },
        cgroup,
    ))
}

fn run(ns: Nanos) -> Op {
    Op::Run {
        work_ns: ns,
        config_us: ns / NSEC_PER_USEC,
        perf: ns / NSEC_PER_USEC,
    }
}

/// One request: clock read, sleep, CPU work, latency recorded.
fn request_ops(p: &Params, ops: &mut Vec<Op>) {
    ops.push(Op::Stamp { slot: SLOT_REQUEST });
    if p.sleep_us > 0 {
        ops.push(Op::Sleep {
            ns: p.sleep_us * NSEC_PER_USEC,
        });
    }
    let work = p.work_ns();
    if p.locking {
        ops.push(Op::CpuLock { first: 0 });
    }
    if work > 0 {
        ops.push(run(work));
    }
    if p.locking {
        ops.push(Op::CpuUnlock);
    }
    ops.push(Op::Record {
        slot: SLOT_REQUEST,
        probe: PROBE_REQUEST,
    });
}

/// Builds the workload (threads `schbench-msg-<i>` then its workers
/// `schbench-worker-<i*t+j>`, message thread by message thread; futex word
/// `k` belongs to thread `k`).
pub fn build(p: &Params, cgroup: &str, nr_cpus: usize) -> Workload {
    let (m, t) = (p.message_threads, p.workers);
    let mut w = Workload {
        log_basename: "schbench".into(),
        calibration_ns: 1000,
        duration_ns: Some(p.runtime_s * NSEC_PER_SEC),
        futex_words: (m * (t + 1)) as u32,
        wake_lists: m as u32,
        host_work: true,
        spinlocks: if p.locking { nr_cpus as u32 } else { 0 },
        probes: vec!["wakeup".into(), "request".into()],
        ..Default::default()
    };
    let per_msg_rps = p.rps / m;
    for i in 0..m {
        let mi = (i * (t + 1)) as u32;
        let mut msg = if p.rps == 0 {
            TaskSpec::looping(
                format!("schbench-msg-{i}"),
                mi,
                Policy::Normal,
                vec![
                    Op::FutexArm { word: mi },
                    Op::ListWakeAll { list: i as u32 },
                    Op::FutexWait { word: mi },
                ],
            )
        } else {
            let mut phases = vec![Phase::once("second", vec![Op::Stamp { slot: SLOT_WAKE }])];
            if per_msg_rps > 0 {
                let mut post = Phase::once(
                    "post",
                    vec![Op::RequestPost {
                        first: w.request_queues.len() as u32,
                        count: t as u32,
                        cap: RPS_QUEUE_CAP,
                        backoff_ns: RPS_BACKOFF_NS,
                    }],
                );
                post.loops = per_msg_rps;
                phases.push(post);
            }
            phases.push(Phase::once(
                "rest",
                vec![Op::SleepUntil {
                    slot: SLOT_WAKE,
                    ns: NSEC_PER_SEC,
                }],
            ));
            let mut s = TaskSpec::looping(format!("schbench-msg-{i}"), mi, Policy::Normal, vec![]);
            s.program.phases = phases;
            s
        };
        msg.cpus = match &p.pinning {
            Pinning::None => None,
            Pinning::Auto => Some(vec![i as u32 % nr_cpus as u32]),
            Pinning::Cpus(l) => Some(vec![l[(i as usize) % l.len()]]),
        };
        msg.log_rows = false;
        w.tasks.push(msg);
        for j in 0..t {
            let wi = mi + 1 + j as u32;
            let mut ops = if p.rps == 0 {
                vec![
                    Op::FutexArm { word: wi },
                    Op::Stamp { slot: SLOT_WAKE },
                    Op::ListAdd {
                        list: i as u32,
                        word: wi,
                        slot: SLOT_WAKE,
                    },
                    Op::FutexPost { word: mi },
                    Op::FutexWait { word: wi },
                    Op::Record {
                        slot: SLOT_WAKE,
                        probe: PROBE_WAKEUP,
                    },
                ]
            } else {
                let q = w.request_queues.len() as u32;
                w.request_queues.push(RequestQueueSpec {
                    consumer: wi,
                    word: wi,
                    slot: SLOT_WAKE,
                });
                vec![Op::RequestTake {
                    queue: q,
                    post_word: mi,
                    probe: PROBE_WAKEUP,
                }]
            };
            request_ops(p, &mut ops);
            let mut wk = TaskSpec::looping(
                format!("schbench-worker-{}", i * t + j),
                wi,
                Policy::Normal,
                ops,
            );
            wk.log_rows = false;
            w.tasks.push(wk);
        }
    }
    for task in &mut w.tasks {
        task.group = cgroup.to_string();
    }
    w
}

/// The `schbench:` generator (module docs).
pub fn schbench(spec: &str, rest: &str, nr_cpus: usize) -> Result<Loaded, WorkloadError> {
    let (p, cgroup) = parse(spec, rest, nr_cpus)?;
    let mut w = build(&p, &cgroup, nr_cpus);
    w.probe_reset_ns = warmup_ns(&p);
    list_groups(spec, &mut w)?;
    Ok(Loaded {
        workload: w,
        warnings: Vec::new(),
    })
}

/// The warmup reset of a spec's run (ns after the start), if any.
pub fn warmup_ns(p: &Params) -> Option<Nanos> {
    (p.warmup_s > 0).then(|| p.warmup_s * NSEC_PER_SEC)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(rest: &str, cpus: usize) -> Params {
        parse("schbench:x", rest, cpus).unwrap().0
    }

    #[test]
    fn defaults_follow_schbench() {
        let d = p("", 160);
        assert_eq!((d.message_threads, d.workers, d.runtime_s), (1, 160, 30));
        assert_eq!((d.sleep_us, d.operations, d.footprint_kb), (100, 5, 256));
        assert!(d.locking && d.rps == 0 && d.warmup_s == 0 && d.pinning == Pinning::None);
        assert_eq!(d.matrix_size(), 104);
        assert_eq!(d.work_ns(), 1_929_141);
        // t = ceil(CPUs / m).
        assert_eq!(p("m=3", 8).workers, 3);
        assert!(!p("L", 8).locking && !p("L=1", 8).locking && p("L=0", 8).locking);
        // Warmup only for r >= 30 and without R.
        assert_eq!(p("r=60,w=5", 8).warmup_s, 5);
        assert_eq!(p("r=10,w=5", 8).warmup_s, 0);
        assert_eq!(p("r=60,w=5,R=100", 8).warmup_s, 0);
        assert_eq!(p("M=auto,m=2", 8).pinning, Pinning::Auto);
        assert_eq!(p("M=2-3", 8).pinning, Pinning::Cpus(vec![2, 3]));
        assert_eq!(p("n=0", 8).work_ns(), 0);
    }

    #[test]
    fn shape_of_both_modes() {
        let w = build(&p("m=2,t=3,r=2", 8), "/", 8);
        assert_eq!(w.tasks.len(), 8);
        assert_eq!(w.tasks[4].name, "schbench-msg-1");
        assert_eq!(w.tasks[5].name, "schbench-worker-3");
        assert_eq!((w.futex_words, w.wake_lists), (8, 2));
        assert_eq!(w.duration_ns, Some(2 * NSEC_PER_SEC));
        assert!(w.host_work && w.request_queues.is_empty());
        // A worker of message thread 1 enlists on list 1 and posts word 4.
        let ops = &w.tasks[5].program.phases[0].ops;
        assert!(ops.contains(&Op::FutexPost { word: 4 }));
        assert!(ops.contains(&Op::ListAdd {
            list: 1,
            word: 5,
            slot: SLOT_WAKE
        }));
        let r = build(&p("m=2,t=3,r=2,R=250", 8), "/", 8);
        assert_eq!(r.request_queues.len(), 6);
        // 125 posts a second per message thread, to its own 3 workers.
        let ph = &r.tasks[4].program.phases;
        assert_eq!(ph[1].loops, 125);
        assert_eq!(
            ph[1].ops[0],
            Op::RequestPost {
                first: 3,
                count: 3,
                cap: 128,
                backoff_ns: RPS_BACKOFF_NS
            }
        );
    }

    #[test]
    fn broken_specs() {
        for (rest, needle) in [
            ("m=0", "key 'm'"),
            ("r=0", "key 'r'"),
            ("r=100000", "key 'r'"),
            ("f=1", "the footprint is F"),
            ("w=40,r=30", "warmup"),
            ("M=a", "not auto"),
            ("L=x", "key 'L'"),
            ("s", "not key=value"),
            ("s=1,s=2", "twice"),
        ] {
            let e = parse("schbench:x", rest, 8).unwrap_err().to_string();
            assert!(e.contains(needle), "{rest}: {e}");
            assert!(!e.contains('\n'));
        }
    }
}

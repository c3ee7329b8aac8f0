//! The `specjbb:` generator: SPECjbb2015's backend as the scheduler sees
//! it: transaction injectors handing requests to a backend's shared
//! queue, a pool of worker threads serving them (sometimes with a nested
//! hand-off to a second pool), and stop-the-world GC pauses run by
//! parallel GC threads. No SPEC or JDK code is used; the shape is taken
//! from the documents named below.
//!
//! # What SPECjbb2015 is (SPECjbb2015 User Guide, §1.2–1.4)
//!
//! Three components: the **Controller** (directs the run: raises the
//! injection rate step by step, the "RT-curve"), **Transaction Injectors**
//! (TxI: issue requests to a backend at the rate the controller sets and
//! measure each response time) and **Backends** (the business logic: a
//! supermarket company's point-of-sale, online purchases and data-mining
//! requests, served by fork/join thread pools). In the Composite category
//! all three run in one JVM, in MultiJVM each in its own JVM on one host.
//! The metrics are **max-jOPS** (the highest injection rate the backend
//! sustains) and **critical-jOPS** (the geometric mean of the rates that
//! meet response-time SLAs of 10, 25, 50, 75 and 100 ms at the 99th
//! percentile). This generator does not search the RT-curve: it runs one
//! injection rate (or a closed loop) and reports what an engineer reads
//! at one RT-curve step: completed transactions per second (jOPS) and
//! the response-time percentiles.
//!
//! # Spec
//!
//! `specjbb:injectors=I,workers=W,stage2=S,tx_us=X,stage2_us=Y,stage2_every=K,poll_us=P,rate=R,gc_threads=G,gc_us=U,gc_every_us=E,warmup_us=T,cgroup=PATH`
//!
//! | key | default | source |
//! |---|---|---|
//! | `workers` | CPUs | the Tier-1 fork/join pool (`specjbb.forkjoin.workers.Tier1`); AnandTech's published MultiJVM runs set it to the machine's hardware threads (Xeon 3rd gen review, 2021) |
//! | `stage2` | 16 | the pool a nested hand-off goes to; AnandTech's runs set the third tier to 16 (`...Tier3=16`): **a stated choice** |
//! | `injectors` | CPUs | TxI threads, each one request in flight: **a stated guess** (enough to keep every worker busy in a closed loop) |
//! | `tx_us` | 500 | Tier-1 CPU per transaction: **a stated guess** (no per-transaction CPU figure of SPECjbb2015 was found) |
//! | `stage2_us` | 100 | CPU of a nested request: **a stated guess** |
//! | `stage2_every` | 4 | every K-th transaction of a worker makes a nested hand-off (0: never): **a stated guess** |
//! | `poll_us` | 250 | longest run between two safepoint polls: **a stated guess** (HotSpot polls at method returns and loop back-edges; the model polls between chunks of at most this much CPU, so time-to-safepoint is up to one chunk) |
//! | `rate` | 0 | requests per second over all injectors; 0 is a closed loop (each injector sends its next request as soon as the reply is in) |
//! | `gc_threads` | `ParallelGCThreads` | HotSpot's rule: N CPUs if N ≤ 8, else 8 + (N − 8)·5/8 (Oracle, "HotSpot Virtual Machine Garbage Collection Tuning Guide", Parallel Collector: "a fixed fraction of N … approximately 5/8 for large values of N. At values of N below 8, the number used is N") |
//! | `gc_us` | 10 000 | CPU each GC thread runs per pause (a perfectly parallel young collection): **a stated guess** |
//! | `gc_every_us` | 99 × `gc_us` | time between the end of one pause and the start of the next: the parallel collector's default throughput goal, `-XX:GCTimeRatio=99`, "1/(1+N)" = 1 % of the time in GC (same guide) |
//!
//! `gc_every_us=0` turns GC off. The run's length is `--duration`;
//! `warmup_us=T` (default 0) starts the measurement T µs into the run
//! (SPECjbb measures each RT-curve step after a settling period): only
//! transactions answered later count. The model's start places most
//! threads on one CPU (they are forked by one thread and sleep at once),
//! and the load balancer takes a while to spread a pool whose threads
//! stay runnable, so short runs without a warm-up mostly measure that.
//!
//! # Threads and hand-offs
//!
//! * `jbb-txi-<i>`: reads the clock, posts the request semaphore with
//!   its own reply semaphore as the address (one request queued; a
//!   `sem_post` that wakes one idle worker if one waits), waits on its
//!   reply semaphore and reads the clock again (probe `response`). With
//!   `rate=R` each injector starts a request every `I/R` s on a fixed
//!   grid (its own absolute timer, rt-app's `timer` op); a request that
//!   starts late (the previous reply came after the next tick) starts at
//!   once and the grid is kept: none is dropped or queued ahead.
//! * `jbb-worker-<w>` (Tier 1): waits on the request semaphore; the token
//!   it takes carries the requesting injector's address. It runs the
//!   transaction's CPU in chunks of at most `poll_us`, polling for a
//!   safepoint between chunks; on every K-th transaction it then posts
//!   the stage-2 semaphore with its own stage-2 reply semaphore as the
//!   address and waits on that; then it posts the injector's reply
//!   semaphore.
//! * `jbb-stage2-<s>`: waits on the stage-2 semaphore, runs `stage2_us`
//!   (polling likewise), posts the reply semaphore of the worker whose
//!   request it took.
//! * `jbb-vm-0` (HotSpot's VM thread) and `jbb-gc-<g>` (GC workers): see
//!   below.
//!
//! **Wakeups.** Every hand-off is a futex wake from task context, not a
//! WF_SYNC wakeup: `sem_post` wakes with `FUTEX_WAKE`, as does Java's
//! `LockSupport.unpark` (a pthread mutex and condition on Linux), and
//! the kernel's futex wake path does not pass WF_SYNC. This is the
//! in-process (Composite) hand-off. In MultiJVM the injector and backend
//! talk over loopback TCP, whose socket wakeups are sync wakeups
//! (`sock_def_readable`): not modelled.
//!
//! **Addressed replies.** A request is an object in a queue that names
//! its requester (SPECjbb's transaction objects carry their response
//! slot), so each reply goes to the thread that asked, and an injector's
//! response time is what it measures itself: from its clock read before
//! the post to its clock read once woken by its reply, scheduling delay
//! included. The queue is `Op::SemSend` / `Op::SemReply` (the simulator's
//! addressed semaphore: tokens carry reply addresses, first in, first
//! out; the kernel sees the same `sem_post` / futex calls). Before these
//! ops existed, replies went to one shared semaphore and response times
//! were paired k-th request to k-th reply, which shuffled times between
//! requests in flight together.
//!
//! # Stop-the-world GC
//!
//! Every Java thread of the backend (workers and stage-2 threads) holds
//! its own safepoint mutex while it runs Java code and releases it when it
//! blocks in native code (the semaphore waits). A poll between two CPU
//! chunks releases the mutex, passes the safepoint gate (a semaphore with
//! one token per Java thread: take one, give it back) and takes the mutex
//! again. `jbb-vm-0` sleeps `gc_every_us`, then
//!
//! 1. arms the safepoint: takes every token of the gate, so any later
//!    poll blocks on the gate;
//! 2. waits for every Java thread to stop: takes each thread's safepoint
//!    mutex in turn (a thread running a chunk hands it over at its next
//!    poll: the mutexes hand over, `pi_mutexes`; among equal-nice threads
//!    priority inheritance changes nothing); probe `ttsp` records the
//!    time from arming to here;
//! 3. posts the GC semaphore once per GC thread and waits on the
//!    done semaphore as many times (each GC thread runs `gc_us` and
//!    posts it; HotSpot's dispatcher has only the last one post);
//! 4. releases: gives back every safepoint mutex (waking threads that
//!    returned from native during the pause), then every gate token
//!    (waking the threads blocked at a poll), one futex wake each from
//!    the VM thread's context, as HotSpot's end of safepoint wakes its
//!    waiters; probe `pause` records arming to release.
//!
//! Injectors are not stopped: they stand for MultiJVM's TxI JVM, which
//! has its own heap and collections (not modelled).

use crate::spec_params::{cgroup_template, err, list_groups, number};
use crate::{Loaded, WorkloadError};
use schedlab_core::program::{Op, Phase, Policy, TaskSpec, TimerRef, TimerSpec, Workload};
use schedlab_core::time::{Nanos, NSEC_PER_SEC, NSEC_PER_USEC};

/// Semaphore: the backend's request queue (addressed: each token carries
/// its injector's reply semaphore, `Op::SemSend`).
pub const SEM_REQUEST: u32 = 0;
/// Semaphore: the stage-2 pool's queue (addressed: each token carries its
/// worker's stage-2 reply semaphore).
pub const SEM_STAGE2: u32 = 1;
/// Semaphore: the GC threads' start signal.
pub const SEM_GC_GO: u32 = 2;
/// Semaphore: the GC threads' done signal.
pub const SEM_GC_DONE: u32 = 3;
/// Semaphore: the safepoint gate (one token per Java thread).
pub const SEM_GATE: u32 = 4;
/// Semaphores shared by the backend; after them, one reply semaphore per
/// injector, then one stage-2 reply semaphore per worker.
const SHARED_SEMS: u32 = 5;

/// Injector `i`'s reply semaphore.
pub fn reply_sem(i: u64) -> u32 {
    SHARED_SEMS + i as u32
}

/// Worker `w`'s stage-2 reply semaphore.
pub fn stage2_reply_sem(p: &Params, w: u64) -> u32 {
    SHARED_SEMS + (p.injectors + w) as u32
}

/// Probe of the responses, as an injector measures them: (clock read
/// before its request's post, clock read once its reply is in).
pub const PROBE_RESPONSE: u32 = 0;
/// Probe of the time to safepoint (arming to every thread stopped).
pub const PROBE_TTSP: u32 = 1;
/// Probe of the whole pause (arming to release).
pub const PROBE_PAUSE: u32 = 2;

/// Slot of a request's start (injector) or a pause's start (VM thread).
const SLOT_START: u8 = 0;

/// Largest CPU amount accepted per key (µs): 10 s.
const MAX_US: u64 = 10_000_000;

/// A parsed `specjbb:` spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// Injector threads.
    pub injectors: u64,
    /// Tier-1 workers.
    pub workers: u64,
    /// Stage-2 threads (0: none; then `stage2_every` must be 0).
    pub stage2: u64,
    /// Tier-1 CPU per transaction, µs.
    pub tx_us: u64,
    /// Stage-2 CPU per nested request, µs.
    pub stage2_us: u64,
    /// Every K-th transaction of a worker hands off to stage 2 (0: never).
    pub stage2_every: u64,
    /// Longest CPU chunk between safepoint polls, µs.
    pub poll_us: u64,
    /// Requests per second over all injectors (0: closed loop).
    pub rate: u64,
    /// Parallel GC threads.
    pub gc_threads: u64,
    /// CPU per GC thread per pause, µs.
    pub gc_us: u64,
    /// Time between pauses, µs (0: no GC).
    pub gc_every_us: u64,
    /// Measurement starts this long after the run's start, µs.
    pub warmup_us: u64,
}

/// HotSpot's default `ParallelGCThreads` for `n` CPUs: `n` up to 8, then
/// 8 + (n − 8)·5/8 (module docs).
pub fn parallel_gc_threads(n: u64) -> u64 {
    if n <= 8 {
        n
    } else {
        8 + (n - 8) * 5 / 8
    }
}

/// Parses the part after `specjbb:`.
pub fn parse(spec: &str, rest: &str, nr_cpus: usize) -> Result<(Params, String), WorkloadError> {
    let known = [
        "injectors",
        "workers",
        "stage2",
        "tx_us",
        "stage2_us",
        "stage2_every",
        "poll_us",
        "rate",
        "gc_threads",
        "gc_us",
        "gc_every_us",
        "warmup_us",
        "cgroup",
    ];
    let mut cgroup = crate::cgroup::ROOT.to_string();
    let mut vals: Vec<(&str, u64)> = Vec::new();
    crate::spec_params::each_param(spec, rest, &known, |k, v| {
        if k == "cgroup" {
            cgroup = cgroup_template(spec, v, false)?;
        } else {
            vals.push((k, number(spec, k, v)?));
        }
        Ok(())
    })?;
    let get = |k: &str, d: u64| vals.iter().find(|x| x.0 == k).map_or(d, |x| x.1);
    let n = (nr_cpus as u64).max(1);
    let stage2 = get("stage2", 16);
    let gc_us = get("gc_us", 10_000);
    let p = Params {
        injectors: get("injectors", n),
        workers: get("workers", n),
        stage2,
        tx_us: get("tx_us", 500),
        stage2_us: get("stage2_us", 100),
        stage2_every: get("stage2_every", if stage2 == 0 { 0 } else { 4 }),
        poll_us: get("poll_us", 250),
        rate: get("rate", 0),
        gc_threads: get("gc_threads", parallel_gc_threads(n)),
        gc_us,
        gc_every_us: get("gc_every_us", gc_us.saturating_mul(99)),
        warmup_us: get("warmup_us", 0),
    };
    for (k, v) in [
        ("injectors", p.injectors),
        ("workers", p.workers),
        ("tx_us", p.tx_us),
        ("poll_us", p.poll_us),
    ] {
        if v == 0 {
            return Err(err(spec, format!("key '{k}': must be at least 1")));
        }
    }
    for (k, v) in [
        ("tx_us", p.tx_us),
        ("stage2_us", p.stage2_us),
        ("poll_us", p.poll_us),
        ("gc_us", p.gc_us),
        ("gc_every_us", p.gc_every_us),
    ] {
        if v > MAX_US {
            return Err(err(
                spec,
                format!("key '{k}': {v} us is outside 0..={MAX_US}"),
            ));
        }
    }
    if p.warmup_us > 86_400 * 1_000_000 {
        return Err(err(
            spec,
            format!("key 'warmup_us': {} us is more than a day", p.warmup_us),
        ));
    }
    if p.stage2_every > 0 && p.stage2 == 0 {
        return Err(err(
            spec,
            format!(
                "key 'stage2_every': {} hands off to a stage-2 pool, but stage2=0 threads",
                p.stage2_every
            ),
        ));
    }
    if p.stage2_every > 1_000_000 {
        return Err(err(
            spec,
            format!(
                "key 'stage2_every': {} is outside 0..=1000000",
                p.stage2_every
            ),
        ));
    }
    if p.rate > 0 && p.injectors.saturating_mul(NSEC_PER_SEC) / p.rate == 0 {
        return Err(err(
            spec,
            format!(
                "key 'rate': {} requests/s gives each of the {} injectors a period under 1 ns",
                p.rate, p.injectors
            ),
        ));
    }
    if p.gc_every_us > 0 && p.gc_threads == 0 {
        return Err(err(
            spec,
            "key 'gc_threads': GC is on (gc_every_us > 0) but has no threads (set gc_every_us=0 to turn it off)".into(),
        ));
    }
    // Threads: injectors, workers, stage 2, GC threads and the VM thread,
    // summed without wrapping.
    let total = [p.injectors, p.workers, p.stage2, p.gc_threads, 1]
        .into_iter()
        .try_fold(0u64, u64::checked_add);
    match total {
        Some(x) if x <= crate::limits::max_tasks() => {}
        x => {
            let x = x.map_or_else(|| "more than 2^64".to_string(), |x| x.to_string());
            let (max, hint) = (crate::limits::max_tasks(), crate::limits::max_tasks_hint());
            return Err(err(
                spec,
                format!("{x} threads is absurd (at most {max}; {hint})"),
            ));
        }
    }
    // Semaphore counts and mutex numbers are u32.
    if p.workers + p.stage2 > u32::MAX as u64 / 2 {
        return Err(err(spec, "too many Java threads".into()));
    }
    Ok((p, cgroup))
}

fn run(ns: Nanos) -> Op {
    Op::Run {
        work_ns: ns,
        config_us: ns / NSEC_PER_USEC,
        perf: ns / NSEC_PER_USEC,
    }
}

/// `us` of CPU in chunks of at most `poll_us`, with a safepoint poll of
/// Java thread `m` (its mutex) between chunks. The thread holds its
/// mutex before and after.
fn java_cpu(us: u64, poll_us: u64, m: u32, ops: &mut Vec<Op>) {
    if us == 0 {
        return;
    }
    let chunks = us.div_ceil(poll_us);
    let (q, r) = (us * NSEC_PER_USEC / chunks, us * NSEC_PER_USEC % chunks);
    for c in 0..chunks {
        if c > 0 {
            ops.push(Op::Unlock { mutex: m });
            ops.push(Op::SemWait { sem: SEM_GATE });
            ops.push(Op::SemPost { sem: SEM_GATE });
            ops.push(Op::Lock { mutex: m });
        }
        ops.push(run(q + u64::from(c < r)));
    }
}

/// Ops of [`java_cpu`] for `us` (to allocate exactly).
fn java_cpu_ops(us: u64, poll_us: u64) -> usize {
    if us == 0 {
        0
    } else {
        let chunks = us.div_ceil(poll_us) as usize;
        chunks + 4 * (chunks - 1)
    }
}

/// One Tier-1 transaction of worker `w` (mutex `w`), nested or not.
fn transaction(p: &Params, w: u64, nested: bool) -> Vec<Op> {
    let m = w as u32;
    let mut ops = Vec::with_capacity(transaction_ops(p, nested));
    // The request taken brings its injector's reply address.
    ops.push(Op::SemWait { sem: SEM_REQUEST });
    ops.push(Op::Lock { mutex: m });
    java_cpu(p.tx_us, p.poll_us, m, &mut ops);
    ops.push(Op::Unlock { mutex: m });
    if nested {
        let own = stage2_reply_sem(p, w);
        ops.push(Op::SemSend {
            sem: SEM_STAGE2,
            reply: own,
        });
        ops.push(Op::SemWait { sem: own });
    }
    ops.push(Op::SemReply);
    debug_assert_eq!(ops.len(), ops.capacity());
    ops
}

fn transaction_ops(p: &Params, nested: bool) -> usize {
    4 + java_cpu_ops(p.tx_us, p.poll_us) + if nested { 2 } else { 0 }
}

/// The Tier-1 worker `w` (mutex `w`): phases `tx` (K − 1 plain
/// transactions) and `tx-stage2` (one nested), or one of them.
fn worker(p: &Params, w: u64, index: u32) -> TaskSpec {
    let mut t = TaskSpec::looping(format!("jbb-worker-{w}"), index, Policy::Normal, vec![]);
    t.log_rows = false;
    let k = p.stage2_every;
    let mut phases = Vec::with_capacity(if k > 1 { 2 } else { 1 });
    if k != 1 {
        let mut ph = Phase::once("tx", transaction(p, w, false));
        ph.loops = if k == 0 { 1 } else { k - 1 };
        phases.push(ph);
    }
    if k > 0 {
        phases.push(Phase::once("tx-stage2", transaction(p, w, true)));
    }
    t.program.phases = phases;
    t
}

fn stage2_ops(p: &Params) -> usize {
    4 + java_cpu_ops(p.stage2_us, p.poll_us)
}

/// Stage-2 thread `s` (mutex `workers + s`).
fn stage2(p: &Params, s: u64, index: u32) -> TaskSpec {
    let m = (p.workers + s) as u32;
    let mut ops = Vec::with_capacity(stage2_ops(p));
    ops.push(Op::SemWait { sem: SEM_STAGE2 });
    ops.push(Op::Lock { mutex: m });
    java_cpu(p.stage2_us, p.poll_us, m, &mut ops);
    ops.push(Op::Unlock { mutex: m });
    // To the worker whose request this was.
    ops.push(Op::SemReply);
    debug_assert_eq!(ops.len(), ops.capacity());
    let mut t = TaskSpec::looping(format!("jbb-stage2-{s}"), index, Policy::Normal, ops);
    t.log_rows = false;
    t
}

/// Injector `i`'s ops.
fn injector_ops(p: &Params, i: u64) -> Vec<Op> {
    let mut ops = Vec::with_capacity(if p.rate > 0 { 5 } else { 4 });
    // Rate mode: timer `i`, absolute (a late request does not shift the
    // grid).
    if let Some(period_ns) = p.injectors.saturating_mul(NSEC_PER_SEC).checked_div(p.rate) {
        ops.push(Op::Timer {
            timer: TimerRef(i as u32),
            period_ns,
        });
    }
    let own = reply_sem(i);
    ops.push(Op::Stamp { slot: SLOT_START });
    ops.push(Op::SemSend {
        sem: SEM_REQUEST,
        reply: own,
    });
    ops.push(Op::SemWait { sem: own });
    ops.push(Op::Record {
        slot: SLOT_START,
        probe: PROBE_RESPONSE,
    });
    ops
}

/// Ops of the VM thread: N = Java threads, G = GC threads.
fn vm_ops(p: &Params) -> usize {
    let n = (p.workers + p.stage2) as usize;
    let g = p.gc_threads as usize;
    // release (n gate posts), sleep, stamp, arm (n), stop (n locks),
    // record, go (g), done (g), unlock (n), record.
    n + 1 + 1 + n + n + 1 + g + g + n + 1
}

/// The VM thread's program (one phase: release the gate, sleep, pause).
fn vm_thread(p: &Params, index: u32) -> TaskSpec {
    let n = (p.workers + p.stage2) as u32;
    let mut ops = Vec::with_capacity(vm_ops(p));
    // The gate's tokens: given at start, and back at each pause's end.
    ops.extend((0..n).map(|_| Op::SemPost { sem: SEM_GATE }));
    ops.push(Op::Sleep {
        ns: p.gc_every_us * NSEC_PER_USEC,
    });
    ops.push(Op::Stamp { slot: SLOT_START });
    ops.extend((0..n).map(|_| Op::SemWait { sem: SEM_GATE }));
    ops.extend((0..n).map(|m| Op::Lock { mutex: m }));
    ops.push(Op::Record {
        slot: SLOT_START,
        probe: PROBE_TTSP,
    });
    ops.extend((0..p.gc_threads).map(|_| Op::SemPost { sem: SEM_GC_GO }));
    ops.extend((0..p.gc_threads).map(|_| Op::SemWait { sem: SEM_GC_DONE }));
    ops.extend((0..n).map(|m| Op::Unlock { mutex: m }));
    ops.push(Op::Record {
        slot: SLOT_START,
        probe: PROBE_PAUSE,
    });
    debug_assert_eq!(ops.len(), ops.capacity());
    let mut t = TaskSpec::looping("jbb-vm-0", index, Policy::Normal, ops);
    t.log_rows = false;
    t
}

/// The VM thread without GC: only the gate's tokens, then park.
fn vm_thread_no_gc(p: &Params, index: u32) -> TaskSpec {
    let n = (p.workers + p.stage2) as usize;
    let mut ops = Vec::with_capacity(n + 1);
    ops.extend((0..n).map(|_| Op::SemPost { sem: SEM_GATE }));
    ops.push(Op::Park);
    let mut t = TaskSpec::looping("jbb-vm-0", index, Policy::Normal, ops);
    t.log_rows = false;
    t
}

fn gc_thread(p: &Params, g: u64, index: u32) -> TaskSpec {
    let mut t = TaskSpec::looping(
        format!("jbb-gc-{g}"),
        index,
        Policy::Normal,
        vec![
            Op::SemWait { sem: SEM_GC_GO },
            run(p.gc_us * NSEC_PER_USEC),
            Op::SemPost { sem: SEM_GC_DONE },
        ],
    );
    t.log_rows = false;
    t
}

fn injector(p: &Params, i: u64, index: u32) -> TaskSpec {
    let mut t = TaskSpec::looping(
        format!("jbb-txi-{i}"),
        index,
        Policy::Normal,
        injector_ops(p, i),
    );
    t.log_rows = false;
    t
}

/// Bytes the workload [`build`] makes for `p` will take (threads'
/// programs and names, [`crate::limits::task_bytes`]), computed without
/// building it: every thread of a kind has the shape of the first (names
/// differ by a few digits: counted at the widest).
pub fn built_bytes(p: &Params) -> u64 {
    use crate::limits::{heap_block, task_bytes};
    let ops = |n: usize| heap_block(n.saturating_mul(std::mem::size_of::<Op>()));
    let gc = p.gc_every_us > 0;
    // The widest index's name, for every thread of a kind.
    let wide = |t: TaskSpec, base: u64, n: u64| {
        let digits = n.max(1).to_string().len();
        let extra = heap_block(t.name.len() - 1 + digits) - heap_block(t.name.len());
        n.saturating_mul(base.saturating_add(extra))
    };
    // Programs are sized from their op counts, not built: one worker of
    // `tx_us=10000000,poll_us=1` holds 50 million ops. A small twin is
    // built for the rest (names, phases), its op vectors swapped for the
    // real ones' sizes.
    let small = Params {
        workers: 1,
        stage2: p.stage2.min(1),
        tx_us: 1,
        stage2_us: p.stage2_us.min(1),
        poll_us: 1,
        ..p.clone()
    };
    let k = p.stage2_every;
    let mut per_worker = task_bytes(&worker(&small, 0, 0));
    for (nested, on) in [(false, k != 1), (true, k > 0)] {
        if on {
            per_worker =
                per_worker - ops(transaction_ops(&small, nested)) + ops(transaction_ops(p, nested));
        }
    }
    let per_stage2 =
        task_bytes(&stage2(&small, 0, 0)) - ops(stage2_ops(&small)) + ops(stage2_ops(p));
    let mut vm = TaskSpec::looping("jbb-vm-0", 0, Policy::Normal, vec![]);
    vm.log_rows = false;
    let vm = task_bytes(&vm)
        + if gc {
            ops(vm_ops(p))
        } else {
            ops((p.workers + p.stage2) as usize + 1)
        };
    let gcb = task_bytes(&gc_thread(p, 0, 0));
    let inj = task_bytes(&injector(p, 0, 0));
    [
        wide(injector(p, 0, 0), inj, p.injectors),
        wide(worker(&small, 0, 0), per_worker, p.workers),
        wide(stage2(&small, 0, 0), per_stage2, p.stage2),
        if gc {
            wide(gc_thread(p, 0, 0), gcb, p.gc_threads)
        } else {
            0
        },
        vm,
    ]
    .into_iter()
    .fold(0u64, u64::saturating_add)
}

/// Builds the workload: threads `jbb-txi-*`, `jbb-worker-*`,
/// `jbb-stage2-*`, `jbb-gc-*` (with GC), `jbb-vm-0`; mutexes: one per Java
/// thread (workers, then stage 2).
pub fn build(p: &Params, cgroup: &str) -> Workload {
    let gc = p.gc_every_us > 0;
    let mut w = Workload {
        log_basename: "specjbb".into(),
        calibration_ns: 1000,
        sems: SHARED_SEMS + (p.injectors + p.workers) as u32,
        mutexes: (p.workers + p.stage2) as u32,
        pi_mutexes: true,
        probes: vec!["response".into(), "ttsp".into(), "pause".into()],
        probe_reset_ns: (p.warmup_us > 0).then(|| p.warmup_us * NSEC_PER_USEC),
        ..Default::default()
    };
    let n = p.injectors + p.workers + p.stage2 + if gc { p.gc_threads } else { 0 } + 1;
    w.tasks.reserve_exact(n as usize);
    let mut index = 0u32;
    let mut next = || {
        index += 1;
        index - 1
    };
    for i in 0..p.injectors {
        w.tasks.push(injector(p, i, next()));
        if p.rate > 0 {
            w.timers.push(TimerSpec {
                name: format!("txi-{i}"),
                absolute: true,
            });
        }
    }
    for k in 0..p.workers {
        w.tasks.push(worker(p, k, next()));
    }
    for s in 0..p.stage2 {
        w.tasks.push(stage2(p, s, next()));
    }
    if gc {
        for g in 0..p.gc_threads {
            w.tasks.push(gc_thread(p, g, next()));
        }
        w.tasks.push(vm_thread(p, next()));
    } else {
        w.tasks.push(vm_thread_no_gc(p, next()));
    }
    for t in &mut w.tasks {
        t.group = cgroup.to_string();
    }
    w
}

/// The `specjbb:` generator (module docs).
pub fn specjbb(spec: &str, rest: &str, nr_cpus: usize) -> Result<Loaded, WorkloadError> {
    let (p, cgroup) = parse(spec, rest, nr_cpus)?;
    // Refused before building when the machine cannot hold it.
    let built = built_bytes(&p);
    let threads = p.injectors + p.workers + p.stage2 + p.gc_threads + 1;
    crate::limits::check_build_bytes(
        built,
        &format!(
            "{:.1} KiB per thread on average; a worker's transaction is {} ops, tx_us/poll_us = {} CPU chunks",
            built as f64 / threads as f64 / 1024.0,
            transaction_ops(&p, false),
            p.tx_us.div_ceil(p.poll_us)
        ),
    )
    .map_err(|e| err(spec, e))?;
    let mut w = build(&p, &cgroup);
    list_groups(spec, &mut w)?;
    Ok(Loaded {
        workload: w,
        warnings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(rest: &str, cpus: usize) -> Params {
        parse("specjbb:x", rest, cpus).unwrap().0
    }

    #[test]
    fn gc_threads_follow_hotspot() {
        assert_eq!(parallel_gc_threads(1), 1);
        assert_eq!(parallel_gc_threads(8), 8);
        assert_eq!(parallel_gc_threads(16), 13);
        // gnr-2s-snc3 (384 CPUs) and cwf-2s-240c (240 CPUs).
        assert_eq!(parallel_gc_threads(384), 243);
        assert_eq!(parallel_gc_threads(240), 153);
    }

    #[test]
    fn defaults() {
        let d = p("", 16);
        assert_eq!((d.injectors, d.workers, d.stage2), (16, 16, 16));
        assert_eq!(
            (d.tx_us, d.stage2_us, d.stage2_every, d.poll_us),
            (500, 100, 4, 250)
        );
        assert_eq!(
            (d.rate, d.gc_threads, d.gc_us, d.gc_every_us),
            (0, 13, 10_000, 990_000)
        );
        assert_eq!(p("stage2=0", 4).stage2_every, 0);
        assert_eq!(p("gc_us=2000", 4).gc_every_us, 198_000);
    }

    #[test]
    fn shape() {
        let q = p(
            "injectors=3,workers=2,stage2=1,tx_us=600,poll_us=250,stage2_every=3,gc_threads=2",
            8,
        );
        let w = build(&q, "/");
        let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "jbb-txi-0",
                "jbb-txi-1",
                "jbb-txi-2",
                "jbb-worker-0",
                "jbb-worker-1",
                "jbb-stage2-0",
                "jbb-gc-0",
                "jbb-gc-1",
                "jbb-vm-0"
            ]
        );
        // 5 shared, 3 injectors' and 2 workers' reply semaphores.
        assert_eq!((w.sems, w.mutexes), (10, 3));
        assert_eq!((reply_sem(2), stage2_reply_sem(&q, 1)), (7, 9));
        let txi = &w.tasks[2].program.phases[0].ops;
        assert_eq!(
            txi[1..3],
            [
                Op::SemSend {
                    sem: SEM_REQUEST,
                    reply: 7
                },
                Op::SemWait { sem: 7 }
            ]
        );
        assert!(w.pi_mutexes);
        // 600 µs in 3 chunks of 200 µs, two polls; two plain transactions,
        // then a nested one.
        let wk = &w.tasks[4].program.phases;
        assert_eq!((wk[0].loops, wk[1].loops), (2, 1));
        let ops = &wk[0].ops;
        assert_eq!(ops[0], Op::SemWait { sem: SEM_REQUEST });
        assert_eq!(ops[1], Op::Lock { mutex: 1 });
        assert_eq!(
            ops.iter()
                .filter(|o| matches!(
                    o,
                    Op::Run {
                        work_ns: 200_000,
                        ..
                    }
                ))
                .count(),
            3
        );
        assert_eq!(
            ops.iter()
                .filter(|o| **o == Op::SemWait { sem: SEM_GATE })
                .count(),
            2
        );
        assert_eq!(*ops.last().unwrap(), Op::SemReply);
        // Worker 1's nested transaction asks stage 2 to answer to its own
        // semaphore (9), waits there, then answers its injector.
        let nested = &wk[1].ops;
        assert_eq!(
            nested[nested.len() - 3..],
            [
                Op::SemSend {
                    sem: SEM_STAGE2,
                    reply: 9
                },
                Op::SemWait { sem: 9 },
                Op::SemReply
            ]
        );
        // Locks and unlocks pair up.
        for ph in wk {
            let l = ph
                .ops
                .iter()
                .filter(|o| matches!(o, Op::Lock { .. }))
                .count();
            let u = ph
                .ops
                .iter()
                .filter(|o| matches!(o, Op::Unlock { .. }))
                .count();
            assert_eq!(l, u);
        }
        // The stage-2 thread polls with its own mutex (2) and answers the
        // worker it took the request from.
        let st = &w.tasks[5].program.phases[0].ops;
        assert!(st.contains(&Op::Lock { mutex: 2 }));
        assert_eq!(st[0], Op::SemWait { sem: SEM_STAGE2 });
        assert_eq!(*st.last().unwrap(), Op::SemReply);
        // The VM thread: 3 gate tokens, 3 locks, 2 GC posts.
        let vm = &w.tasks[8].program.phases[0].ops;
        assert_eq!(vm.len(), vm_ops(&q));
        assert_eq!(
            vm.iter()
                .filter(|o| **o == Op::SemPost { sem: SEM_GC_GO })
                .count(),
            2
        );
        assert_eq!(
            vm.iter().filter(|o| matches!(o, Op::Lock { .. })).count(),
            3
        );
    }

    #[test]
    fn the_size_is_known_before_building() {
        for rest in [
            "injectors=3,workers=2,stage2=1,gc_threads=2",
            "injectors=120,workers=100,stage2=16",
            "injectors=1,workers=1,stage2=0,gc_every_us=0",
            "workers=12,tx_us=5000,poll_us=10,rate=1000",
            "workers=3,stage2=2,stage2_every=1,tx_us=777,stage2_us=333,poll_us=100",
            "workers=3,stage2=2,stage2_every=0,stage2_us=0",
        ] {
            let q = p(rest, 64);
            let w = build(&q, "/");
            let built: u64 = w.tasks.iter().map(crate::limits::task_bytes).sum();
            let est = built_bytes(&q);
            // Exact but for names: counted at the widest index.
            assert!(
                est >= built && est - built <= 32 * w.tasks.len() as u64,
                "{rest}: {est} vs {built}"
            );
        }
        // A huge program is sized without being built: 10 s in 1 µs
        // chunks is 10 million chunks, ~50 million ops per worker.
        let huge = p("workers=64,tx_us=10000000,poll_us=1", 64);
        assert!(built_bytes(&huge) > 64 * 49_000_000 * std::mem::size_of::<Op>() as u64);
    }

    #[test]
    fn broken_specs() {
        for (rest, needle) in [
            ("workers=0", "key 'workers'"),
            ("injectors=0", "key 'injectors'"),
            ("tx_us=0", "key 'tx_us'"),
            ("poll_us=0", "key 'poll_us'"),
            ("tx_us=99999999", "key 'tx_us'"),
            ("stage2=0,stage2_every=2", "stage2=0"),
            ("gc_threads=0", "gc_threads"),
            ("rate=99999999999999999", "key 'rate'"),
            ("workers=x", "not a non-negative integer"),
            ("workers", "not key=value"),
            ("workers=1,workers=2", "twice"),
            ("worker=1", "unknown key 'worker'"),
            ("workers=18446744073709551615", "absurd"),
            ("workers=60000,injectors=60000", "absurd"),
            ("cgroup=x", "key 'cgroup'"),
        ] {
            let e = parse("specjbb:x", rest, 8).unwrap_err().to_string();
            assert!(e.contains(needle), "{rest}: {e}");
            assert!(!e.contains('\n'));
        }
    }
}

//! The behaviour program: what a task does, in one form for every workload
//! source (rt-app JSON, built-in generators, later trace replay).
//!
//! A [`Workload`] is a list of [`TaskSpec`]s plus the shared objects they
//! name (timers). Each task runs a [`Program`]: an ordered list of
//! [`Phase`]s, each repeated `loops` times, the whole list repeated
//! `Program::loops` times (rt-app's loop semantics, formats-spec.md 1.6). One
//! execution of a phase is one *iteration* and produces one rt-app log row.
//!
//! Workload readers build this form before the run; the simulator never sees
//! JSON.

use crate::time::Nanos;

/// Scheduling policy of a task (`sched_setscheduler`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    /// SCHED_OTHER / SCHED_NORMAL.
    Normal,
    /// SCHED_BATCH: normal weights, never wakeup-preempts.
    Batch,
    /// SCHED_IDLE: weight 3, treated as idle by placement.
    Idle,
    /// SCHED_FIFO: strict priority above fair.
    Fifo,
    /// SCHED_RR: SCHED_FIFO with a 100 ms timeslice.
    Rr,
    /// SCHED_DEADLINE: EDF with CBS budgets, above RT.
    Deadline,
}

impl Policy {
    /// The kernel's spelling, as rt-app and summary.json write it.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Normal => "SCHED_NORMAL",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Deadline => "SCHED_DEADLINE",
        }
    }

    /// Parses rt-app / kernel policy names (`SCHED_OTHER` is SCHED_NORMAL).
    pub fn parse(s: &str) -> Option<Policy> {
        Some(match s {
            "SCHED_OTHER" | "SCHED_NORMAL" => Policy::Normal,
            "SCHED_BATCH" => Policy::Batch,
            "SCHED_IDLE" => Policy::Idle,
            "SCHED_FIFO" => Policy::Fifo,
            "SCHED_RR" => Policy::Rr,
            "SCHED_DEADLINE" => Policy::Deadline,
            _ => return None,
        })
    }

    /// True for the policies of the fair class.
    pub fn is_fair(self) -> bool {
        matches!(self, Policy::Normal | Policy::Batch | Policy::Idle)
    }
}

/// Index of a timer in [`Workload::timers`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerRef(pub u32);

/// One step of a behaviour program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// A fixed amount of CPU work (rt-app `run`): `work_ns` of execution at
    /// capacity 1024. `perf` is rt-app's loop count in thousands, reported in
    /// the log's `perf` column.
    Run {
        /// CPU work in nanoseconds.
        work_ns: Nanos,
        /// Configured duration in µs (the log's `c_duration`).
        config_us: u64,
        /// Thousands of calibrated loops (the log's `perf`).
        perf: u64,
    },
    /// Stay runnable until `wall_ns` of wall-clock time has passed since the
    /// op began (rt-app `runtime`).
    Runtime {
        /// Wall-clock time in nanoseconds.
        wall_ns: Nanos,
        /// Configured duration in µs (the log's `c_duration`).
        config_us: u64,
    },
    /// Block for a relative time (rt-app `sleep`, `nanosleep`).
    Sleep {
        /// Sleep length in nanoseconds.
        ns: Nanos,
    },
    /// Wait for the next expiry of a periodic timer (rt-app `timer`,
    /// algorithm of formats-spec.md 1.8).
    Timer {
        /// Which timer.
        timer: TimerRef,
        /// Period in nanoseconds.
        period_ns: Nanos,
    },
    /// `sched_yield()`.
    Yield,
    /// Create and start the workload's thread number `task` (the fork done
    /// by rt-app's main thread at start-up).
    Spawn {
        /// Index of the thread in `Workload::tasks`.
        task: u32,
    },
    /// rt-app `fork`: start the next unstarted thread of fork pool `pool`
    /// (`Workload::fork_pools`); nothing once the pool is used up (rt-app
    /// stops forking after 1024 forks of one event).
    Fork {
        /// Index into `Workload::fork_pools`.
        pool: u32,
    },
    /// Sleep until the end of the run (rt-app's main thread after start-up).
    Park,
    /// Write one message to each channel `first .. first + count` in turn
    /// (one round of a hackbench sender): one `write()` syscall each,
    /// sleeping while a channel is full.
    Send {
        /// First channel (index into `Workload::channels`).
        first: u32,
        /// Number of channels.
        count: u32,
    },
    /// Take a mutex (rt-app `lock`), blocking while another thread holds it.
    Lock {
        /// Mutex index.
        mutex: u32,
    },
    /// Release a mutex (rt-app `unlock`); the first waiter gets it.
    Unlock {
        /// Mutex index.
        mutex: u32,
    },
    /// Wait on a condition variable, releasing the mutex meanwhile and
    /// taking it back after (rt-app `wait`).
    Wait {
        /// Condition variable index.
        cond: u32,
        /// Mutex index.
        mutex: u32,
    },
    /// Wake one (`all` false: rt-app `signal`) or every (`broad`) waiter;
    /// lost if nobody waits.
    Signal {
        /// Condition variable index.
        cond: u32,
        /// Broadcast.
        all: bool,
    },
    /// Signal then wait (rt-app `sync`).
    Sync {
        /// Condition variable index.
        cond: u32,
        /// Mutex index.
        mutex: u32,
    },
    /// Sleep until resumed: lock, wait, unlock on the task's own condition
    /// variable and mutex (rt-app `suspend`).
    Suspend {
        /// Condition variable index.
        cond: u32,
        /// Mutex index.
        mutex: u32,
    },
    /// Wake every thread suspended under a name: lock, broadcast, unlock
    /// (rt-app `resume`).
    Resume {
        /// Condition variable index.
        cond: u32,
        /// Mutex index.
        mutex: u32,
    },
    /// Rendezvous: the last of the barrier's participants wakes the others.
    Barrier {
        /// Barrier index.
        barrier: u32,
    },
    /// Counting semaphore post (rt-app `sem_post`): remembered if nobody waits.
    SemPost {
        /// Semaphore index.
        sem: u32,
    },
    /// Counting semaphore wait (rt-app `sem_wait`). The token taken from
    /// an addressed semaphore (posted by [`Op::SemSend`]) brings its
    /// reply address with it, for the taker's next [`Op::SemReply`].
    SemWait {
        /// Semaphore index.
        sem: u32,
    },
    /// Post a request that names where its answer goes: `sem_post` on
    /// `sem`, the token carrying the address `reply` (a semaphore index).
    /// A queue of request objects, each holding its requester's reply
    /// slot (SPECjbb's transaction hand-off; the in-kernel part is a
    /// `sem_post`). A semaphore is posted either only by `SemSend` (it is
    /// addressed) or never by it: tokens and addresses pair first in,
    /// first out. Costs as `SemPost`.
    SemSend {
        /// Semaphore posted (the request queue).
        sem: u32,
        /// Semaphore the reply goes to.
        reply: u32,
    },
    /// Answer the request the task took last: `sem_post` on the reply
    /// address its last token from an addressed semaphore carried. An
    /// error (the run stops) if it took none. Costs as `SemPost`.
    SemReply,
    /// CPU work that rt-app's log does not count as `run` (rt-app `mem`,
    /// `iorun`).
    Work {
        /// CPU work in nanoseconds.
        work_ns: Nanos,
    },
    /// Read `msgs` messages from a channel, one `read()` syscall each,
    /// sleeping while it is empty (a hackbench receiver).
    Recv {
        /// Channel (index into `Workload::channels`).
        chan: u32,
        /// Messages to read in all.
        msgs: u64,
    },
    /// Set a futex word to BLOCKED: a plain store (schbench's
    /// `td->futex = FUTEX_BLOCKED`). Free. (`sched/futex_word.rs`.)
    FutexArm {
        /// Futex word (index, `Workload::futex_words`).
        word: u32,
    },
    /// Post a futex word (schbench's `fpost`): a cmpxchg BLOCKED → RUNNING
    /// and, if it flipped, one `FUTEX_WAKE` syscall waking one sleeper.
    FutexPost {
        /// Futex word.
        word: u32,
    },
    /// Wait on a futex word (schbench's `fwait`): a cmpxchg RUNNING →
    /// BLOCKED returns at once; otherwise `FUTEX_WAIT` sleeps until posted.
    FutexWait {
        /// Futex word.
        word: u32,
    },
    /// Read the clock into one of the task's timestamp slots
    /// (`gettimeofday`, a vDSO call: free).
    Stamp {
        /// Slot (0 or 1).
        slot: u8,
    },
    /// Record one sample `(the slot's timestamp, now)` into a probe
    /// (`Workload::probes`): the latencies a benchmark measures itself.
    Record {
        /// Slot the interval starts at.
        slot: u8,
        /// Probe index.
        probe: u32,
    },
    /// Prepend the task to a wake list (schbench's `xlist_add`, a
    /// cmpxchg): whoever wakes the list stamps `slot` of this task and
    /// posts `word`.
    ListAdd {
        /// Wake list index (`Workload::wake_lists`).
        list: u32,
        /// The task's own futex word.
        word: u32,
        /// The task's slot the waker stamps.
        slot: u8,
    },
    /// Wake a wake list (schbench's `xlist_wake_all`): splice it (newest
    /// first), read the clock once, then for each member stamp its slot
    /// with that time and post its word, one member after another.
    ListWakeAll {
        /// Wake list index.
        list: u32,
    },
    /// Queue one request (schbench's `-R` message thread): to the next of
    /// request queues `first .. first + count` in turn; when that queue
    /// already holds more than `cap` requests, sleep `backoff_ns` instead
    /// (the request is dropped); else add it, stamp the consumer's slot
    /// and post its word (`Workload::request_queues`).
    RequestPost {
        /// First queue.
        first: u32,
        /// Queues taken in turn.
        count: u32,
        /// Requests a queue may hold before posting backs off.
        cap: u64,
        /// The back-off sleep.
        backoff_ns: Nanos,
    },
    /// Take one request from the task's queue (schbench's `-R` worker):
    /// from the batch spliced earlier if any; else arm its word, stamp its
    /// slot, splice the queue; if empty, post `post_word`, wait on its own
    /// word, record the wakeup into `probe`, and try again.
    RequestTake {
        /// The task's request queue.
        queue: u32,
        /// The word to post before sleeping (the message thread's).
        post_word: u32,
        /// Probe of the wakeup latency.
        probe: u32,
    },
    /// Take the per-CPU lock of the CPU the task runs on (schbench's
    /// `lock_this_cpu`): lock `first + cpu`; while another thread holds
    /// it, spin (stay running, burning CPU); once taken, if the task now
    /// runs on another CPU, release it and start again.
    CpuLock {
        /// Lock of CPU 0 (`Workload::spinlocks`).
        first: u32,
    },
    /// Release the per-CPU lock the task took with `Op::CpuLock`.
    CpuUnlock,
    /// Sleep until a slot's timestamp plus `ns` (returns at once if that
    /// time has passed): schbench's `-R` "rest of the second".
    SleepUntil {
        /// Slot.
        slot: u8,
        /// Offset from the slot's time.
        ns: Nanos,
    },
}

/// A request queue of `Op::RequestPost` / `Op::RequestTake`: its consumer
/// thread, whose futex word is posted and whose slot is stamped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestQueueSpec {
    /// The consumer (index into `Workload::tasks`).
    pub consumer: u32,
    /// The consumer's futex word.
    pub word: u32,
    /// The consumer's slot stamped at each post.
    pub slot: u8,
}

/// What kind of kernel object a channel is; its capacity and wakeups
/// follow that object's rules (`sched/pipe.rs`, `sched/unix_stream.rs`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ChannelKind {
    /// An anonymous pipe (pipe(2)).
    Pipe,
    /// An AF_UNIX SOCK_STREAM socket pair, written through one end.
    UnixStream,
}

/// A channel (pipe or stream socket) between tasks: every message is one
/// `write()` and one `read()` of `msg_bytes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelSpec {
    /// Pipe or socket.
    pub kind: ChannelKind,
    /// Bytes per message (hackbench's datasize).
    pub msg_bytes: u64,
}

/// A phase: ops run in order, `loops` times in a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// Phase name (the JSON key), for messages.
    pub name: String,
    /// Consecutive iterations of this phase (>= 1).
    pub loops: u64,
    /// The ops of one iteration.
    pub ops: Vec<Op>,
    /// Affinity applied at the start of each iteration, if given.
    pub cpus: Option<Vec<u32>>,
    /// Policy and nice applied at the start of each iteration, if given.
    pub sched: Option<(Policy, i32)>,
    /// With `sched`: the custom slice the phase requests (rt-app's
    /// phase-level `dl-runtime` passed as `sched_runtime` to
    /// `sched_setattr`); `None` there restores the base slice, as the
    /// kernel does for a fair `sched_setattr` with a zero runtime.
    pub slice_ns: Option<Nanos>,
    /// Utilisation clamps the phase requests (recorded only).
    pub uclamp: Uclamp,
    /// With a SCHED_DEADLINE `sched`: its parameters.
    pub dl: Option<DlParams>,
    /// Task group the thread moves to at the start of each iteration
    /// (rt-app phase-level `taskgroup`), if given.
    pub group: Option<String>,
    /// rt-app's `rtapp_event` marker of each op, when the workload came
    /// from an rt-app file (empty otherwise).
    pub marks: Vec<EventMark>,
}

impl Phase {
    /// A phase of `ops`, run once per loop, that changes nothing else
    /// (no affinity, policy, slice, group or markers).
    pub fn once(name: impl Into<String>, ops: Vec<Op>) -> Phase {
        Phase {
            name: name.into(),
            loops: 1,
            ops,
            cpus: None,
            sched: None,
            slice_ns: None,
            uclamp: Uclamp::default(),
            dl: None,
            group: None,
            marks: Vec::new(),
        }
    }
}

/// What rt-app's `rtapp_event: id= type= desc=` marker says about an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventMark {
    /// rt-app's event type number (formats-spec.md 1.8).
    pub kind: u8,
    /// The event's JSON key.
    pub desc: String,
}

/// Utilisation clamps requested with `sched_setattr` (rt-app `util_min`,
/// `util_max`, 0..=1024). Recorded only: the model has no frequency
/// scaling and its machines have symmetric capacities, the two places
/// where the kernel's fair class reads uclamp (schedutil, and
/// `util_fits_cpu` on asymmetric systems).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Uclamp {
    /// `util_min`.
    pub min: Option<u32>,
    /// `util_max`.
    pub max: Option<u32>,
}

impl Uclamp {
    /// True when neither clamp is set.
    pub fn is_empty(&self) -> bool {
        self.min.is_none() && self.max.is_none()
    }
}

/// SCHED_DEADLINE parameters (rt-app `dl-runtime`, `dl-deadline`,
/// `dl-period`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DlParams {
    /// Runtime per period.
    pub runtime_ns: Nanos,
    /// Relative deadline.
    pub deadline_ns: Nanos,
    /// Period.
    pub period_ns: Nanos,
}

/// A task's whole program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The phases, in order.
    pub phases: Vec<Phase>,
    /// Passes over the phase list; `None` runs until the workload ends.
    pub loops: Option<u64>,
}

/// A thread of the workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskSpec {
    /// Thread name (`<task>-<index>` for rt-app), also the comm.
    pub name: String,
    /// rt-app's global thread index (the log's `idx` column).
    pub index: u32,
    /// Scheduling policy.
    pub policy: Policy,
    /// Nice value (-20..=19) for fair policies; rt priority for FIFO/RR.
    pub nice: i32,
    /// Allowed CPUs; `None` = every CPU of the machine.
    pub cpus: Option<Vec<u32>>,
    /// Start delay after the common start T0.
    pub delay_ns: Nanos,
    /// Custom slice (rt-app `dl-runtime` on SCHED_OTHER, 6.12+).
    pub custom_slice_ns: Option<Nanos>,
    /// SCHED_DEADLINE parameters (policy Deadline).
    pub dl: Option<DlParams>,
    /// Utilisation clamps (recorded only, see [`Uclamp`]).
    pub uclamp: Uclamp,
    /// Started by an `Op::Fork` while the run goes on, not at start-up
    /// (such threads skip the start barrier; one never forked never exists).
    pub forked: bool,
    /// Task group path (`/` = root).
    pub group: String,
    /// Keep one rt-app log row per iteration (off for generated threads
    /// that iterate millions of times).
    pub log_rows: bool,
    /// What the task does.
    pub program: Program,
}

/// A timer object of the workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerSpec {
    /// Name (rt-app `ref`; unique timers get `<ref>@<thread>`).
    pub name: String,
    /// Absolute mode keeps the grid after overruns; relative re-anchors.
    pub absolute: bool,
}

/// rt-app ftrace category `main` (`rtapp_main:` markers).
pub const FTRACE_MAIN: u8 = 1;
/// rt-app ftrace category `task` (`rtapp_task:`).
pub const FTRACE_TASK: u8 = 2;
/// rt-app ftrace category `loop` (`rtapp_loop:`).
pub const FTRACE_LOOP: u8 = 4;
/// rt-app ftrace category `event` (`rtapp_event:`).
pub const FTRACE_EVENT: u8 = 8;
/// rt-app ftrace category `stats` (`rtapp_stats:`).
pub const FTRACE_STATS: u8 = 16;
/// rt-app's internal `attrs` category (`rtapp_attrs:`; only with `true`).
pub const FTRACE_ATTRS: u8 = 32;

/// Default `cpu.max` period (`default_bw_period_us`).
pub const DEFAULT_BW_PERIOD_NS: Nanos = 100_000_000;

/// A task group (a cgroup with the cpu controller) and its settings.
///
/// The root group `/` is implicit and never listed; its settings cannot
/// change (as in cgroupfs, where the root has no `cpu.max` or `cpu.weight`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpec {
    /// Absolute cgroup path (`/a/b`), no trailing `/`.
    pub path: String,
    /// `shares` in user units (1024 = `cpu.weight` 100 = nice 0).
    pub shares: u64,
    /// `cpu.idle`: the group's entities count as SCHED_IDLE.
    pub idle: bool,
    /// `cpu.max` quota; `None` = `max` (no limit).
    pub quota_ns: Option<Nanos>,
    /// `cpu.max` period.
    pub period_ns: Nanos,
    /// `cpu.max.burst`.
    pub burst_ns: Nanos,
}

impl GroupSpec {
    /// A group with the cgroup defaults (weight 100, no limit).
    pub fn new(path: impl Into<String>) -> GroupSpec {
        GroupSpec {
            path: path.into(),
            shares: 1024,
            idle: false,
            quota_ns: None,
            period_ns: DEFAULT_BW_PERIOD_NS,
            burst_ns: 0,
        }
    }

    /// The parent's path (`/` for a top-level group).
    pub fn parent_path(&self) -> &str {
        match self.path.rfind('/') {
            Some(0) | None => "/",
            Some(i) => &self.path[..i],
        }
    }
}

/// CPU time the engine charges each semaphore op of a workload whose
/// waits always sleep (`Workload::sem_waits_sleep`, a replayed trace): the
/// calls they stand for are in the traced runs; 1 ns, the engine's
/// minimum, so that no op is free.
pub const REPLAYED_SYNC_OP_NS: Nanos = 1;

/// A complete workload, ready to simulate.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Workload {
    /// Threads in creation order.
    pub tasks: Vec<TaskSpec>,
    /// Timers named by `Op::Timer`.
    pub timers: Vec<TimerSpec>,
    /// Run length from the workload (`global.duration`); `None` = until all
    /// tasks finish.
    pub duration_ns: Option<Nanos>,
    /// Prefix of the per-thread log files (`global.log_basename`).
    pub log_basename: String,
    /// rt-app's `log_size` as a number: each thread's log is a ring of this
    /// many bytes in memory, written when the run ends (the oldest rows
    /// are lost when it overflows). None: rows are written as produced.
    pub log_ring_bytes: Option<u64>,
    /// rt-app's ns per calibrated loop (pLoad).
    pub calibration_ns: u64,
    /// Channels named by `Op::Send` / `Op::Recv`.
    pub channels: Vec<ChannelSpec>,
    /// Number of mutexes.
    pub mutexes: u32,
    /// Number of condition variables.
    pub conds: u32,
    /// Participants of each barrier.
    pub barriers: Vec<u32>,
    /// Number of semaphores.
    pub sems: u32,
    /// Threads each `Op::Fork` starts, in order (their specs are in
    /// `tasks`, marked `forked`).
    pub fork_pools: Vec<Vec<u32>>,
    /// rt-app `cumulative_slack`: the log's slack column sums every timer
    /// of the iteration instead of keeping the last one.
    pub cumulative_slack: bool,
    /// rt-app `pi_enabled`: mutexes are PI futexes, whose unlock hands the
    /// lock to the first waiter; otherwise glibc's normal mutexes, whose
    /// woken waiter must compete again.
    pub pi_mutexes: bool,
    /// Semaphore waits always sleep (trace replay, `schedlab_workload::replay`):
    /// a post made before the wait it releases is held, and wakes the waiter
    /// as it goes to sleep. The trace shows each such activation began with
    /// a sleep and a wakeup; a counting semaphore would let a waiter that
    /// runs late take an early post without sleeping, merging two traced
    /// activations. The semaphore ops stand for the calls the traced task
    /// made to sleep and to wake (pipe reads and writes, futexes...), whose
    /// CPU time the traced runs already hold: each costs
    /// [`REPLAYED_SYNC_OP_NS`], not a libc and futex call on top.
    pub sem_waits_sleep: bool,
    /// rt-app `global.ftrace` categories whose `trace_marker` lines the
    /// trace gets (bit set of the `FTRACE_*` constants).
    pub ftrace: u8,
    /// Task groups other than the root, every parent before its children
    /// (intermediate groups of a path are listed too). A task's or phase's
    /// group names one of these paths or `/`.
    pub groups: Vec<GroupSpec>,
    /// Scheduler tunables the workload sets (`global.sysctl`: kernel name
    /// → value), applied before `--sysctl` (`kernels::resolve`).
    pub sysctls: Vec<(String, String)>,
    /// Number of futex words (`Op::FutexArm` and friends), all BLOCKED
    /// at start.
    pub futex_words: u32,
    /// Number of spinning locks (`Op::CpuLock`).
    pub spinlocks: u32,
    /// Number of wake lists (`Op::ListAdd`, `Op::ListWakeAll`).
    pub wake_lists: u32,
    /// Request queues (`Op::RequestPost`, `Op::RequestTake`).
    pub request_queues: Vec<RequestQueueSpec>,
    /// `Run` / `Work` amounts are CPU times measured on the build host
    /// (a generator's documented figure): each machine gets them scaled by
    /// the syscall costs' rule (`sched/syscall_cost.rs`), so a preset whose
    /// context switch is 4x the reference runs them 4x longer.
    pub host_work: bool,
    /// Names of the probes `Op::Record` fills (benchmark-measured
    /// intervals, e.g. schbench's wakeup and request latencies).
    pub probes: Vec<String>,
    /// When the benchmark resets its statistics (schbench's warmup), ns
    /// after the run's start: probe samples that end earlier are not
    /// reported.
    pub probe_reset_ns: Option<Nanos>,
}

impl TaskSpec {
    /// A SCHED_NORMAL/BATCH/IDLE thread at nice 0 on every CPU that repeats
    /// one phase of `ops` until the run ends (generators and helper tasks).
    pub fn looping(name: impl Into<String>, index: u32, policy: Policy, ops: Vec<Op>) -> TaskSpec {
        TaskSpec {
            name: name.into(),
            index,
            policy,
            nice: 0,
            cpus: None,
            delay_ns: 0,
            custom_slice_ns: None,
            dl: None,
            uclamp: Uclamp::default(),
            forked: false,
            group: "/".into(),
            log_rows: true,
            program: Program {
                phases: vec![Phase::once("loop", ops)],
                loops: None,
            },
        }
    }
}

impl Program {
    /// Does the program ever block (sleep/timer)? Used by generators' sanity checks.
    pub fn blocks(&self) -> bool {
        self.phases.iter().any(|p| {
            p.ops
                .iter()
                .any(|o| matches!(o, Op::Sleep { .. } | Op::Timer { .. }))
        })
    }
}

/// Smallest runtime accepted (`1 << DL_SCALE` ns).
pub const DL_MIN_RUNTIME_NS: Nanos = 1024;
/// `sysctl_sched_dl_period_min` (100 µs).
pub const DL_PERIOD_MIN_NS: Nanos = 100_000;
/// `sysctl_sched_dl_period_max` (4 s).
pub const DL_PERIOD_MAX_NS: Nanos = 4_000_000_000;

/// Checks one parameter set as `sched_setattr` does (`__checkparam_dl`).
pub fn check_dl_params(p: &DlParams) -> Result<(), String> {
    if p.runtime_ns < DL_MIN_RUNTIME_NS {
        return Err(format!("dl-runtime {} ns is below 1024 ns", p.runtime_ns));
    }
    if p.deadline_ns < p.runtime_ns {
        return Err(format!(
            "dl-deadline {} µs is shorter than dl-runtime {} µs",
            p.deadline_ns / 1000,
            p.runtime_ns / 1000
        ));
    }
    if p.period_ns < p.deadline_ns {
        return Err(format!(
            "dl-period {} µs is shorter than dl-deadline {} µs",
            p.period_ns / 1000,
            p.deadline_ns / 1000
        ));
    }
    if p.period_ns < DL_PERIOD_MIN_NS || p.period_ns > DL_PERIOD_MAX_NS {
        return Err(format!(
            "dl-period {} µs is outside 100 µs..4 s",
            p.period_ns / 1000
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(q: u64, d: u64, per: u64) -> DlParams {
        DlParams {
            runtime_ns: q * 1000,
            deadline_ns: d * 1000,
            period_ns: per * 1000,
        }
    }

    #[test]
    fn parameter_checks() {
        assert!(check_dl_params(&p(10_000, 100_000, 100_000)).is_ok());
        assert!(check_dl_params(&p(10_000, 5_000, 100_000))
            .unwrap_err()
            .contains("shorter than dl-runtime"));
        assert!(check_dl_params(&p(10_000, 100_000, 50_000))
            .unwrap_err()
            .contains("shorter than dl-deadline"));
        assert!(check_dl_params(&p(10, 50, 50))
            .unwrap_err()
            .contains("outside"));
        assert!(check_dl_params(&p(10_000, 100_000, 5_000_000))
            .unwrap_err()
            .contains("outside"));
        assert!(check_dl_params(&DlParams {
            runtime_ns: 1000,
            deadline_ns: 1_000_000,
            period_ns: 1_000_000
        })
        .unwrap_err()
        .contains("1024"));
    }
}

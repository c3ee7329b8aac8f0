//! The simulator object: [`Sim`] and its scheduler-state part
//! [`SchedState`] (the runtime part is [`crate::runtime::Runtime`], the
//! accounting part [`crate::stats::Accounting`]). Nothing here has
//! behaviour: the mechanism files under `sched/` add `impl Sim` blocks, and
//! the event loop (`engine.rs`) drives them.

use crate::atomics::BalanceFlag;
use crate::config::SimConfig;
use crate::event::queue::EventQueue;
use crate::fair::eevdf::EevdfParams;
use crate::fair::group::TaskGroup;
use crate::fair::select::{NumaForkRule, NumaLbRule};
use crate::ids::CpuId;
use crate::machine::domains::SchedDomains;
use crate::machine::Machine;
use crate::observe::Sink;
use crate::rq::{CfsRq, LlcState, Rq, SchedEntity, SdState};
use crate::runtime::Runtime;
use crate::stats::{Accounting, CounterSamples, CountersAt};
use crate::task::Task;
use crate::time::Nanos;

/// Why a simulation could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The workload does not fit the machine (affinity, sizes).
    #[error("{0}")]
    Workload(String),
}

/// A simulation in progress.
pub struct Sim<S: Sink> {
    /// Scheduler state: runqueues, entities, groups, tasks, domains,
    /// LLC and balance state.
    pub sched: SchedState,
    /// The behaviour programs' runtime: channels, locks, conditions,
    /// barriers, semaphores, timers, fork pools, start barrier.
    pub prog: Runtime,
    /// Accounting: CPU stats, the profile, waste, charges pending.
    pub acct: Accounting,
    /// Configuration.
    pub cfg: SimConfig,
    /// The machine.
    pub machine: Machine,
    /// CPU time of the syscalls behaviour programs make on this machine.
    pub(crate) sys: crate::sched::syscall_cost::SyscallCosts,
    /// Current time.
    pub now: Nanos,
    pub(crate) queue: EventQueue,
    /// rt-app's `t_start` (just before thread creation).
    pub t_start: Nanos,
    /// rt-app's T0: thread 0's clock read before the start barrier; the
    /// base of every thread's timers (`t_first = T0 + delay`).
    pub t0: Option<Nanos>,
    /// When the start barrier released the threads (hackbench's start).
    pub t_release: Option<Nanos>,
    /// When the last thread exited.
    pub last_exit: Nanos,
    /// The run stopped because every live thread waited for something that
    /// could never happen.
    pub deadlock: bool,
    /// End of the run (duration), if fixed.
    pub end: Option<Nanos>,
    /// Events handled (a syscall folded into a fast-forward counts as the
    /// event it would have been, so this is the same with and without
    /// `SimConfig::fast_forward`).
    pub events: u64,
    /// Of `events`, the channel syscalls fast-forwarded in closed form
    /// (never popped from the queue). Not in any output.
    pub fast_forwarded: u64,
    /// Syscall folds split before their end (sched/fold.rs): each one's
    /// calls not started were priced for nothing. Not in any output.
    pub fold_splits: u64,
    /// Pending syscall folds (sched/fold.rs).
    pub(crate) folds: crate::folds::Folds,
    pub(crate) swapper_names: Vec<String>,
    pub(crate) sink: S,
    pub(crate) violation: Option<Violation>,
    pub(crate) trace: bool,
    /// Trace only: set while a task's own burst end is accounted, so the
    /// time is held in `Task::stat_unreported` rather than reported.
    pub(crate) stat_quiet: bool,
    /// The CPU whose code runs while another CPU's runqueue is worked on
    /// (`smp_processor_id()` in a remote `ttwu_do_activate`): a reschedule
    /// that work asks for (update_curr finding the remote curr past its
    /// deadline or protected slice) is an IPI from this CPU. None: each
    /// CPU's own code.
    pub(crate) exec_ctx: Option<CpuId>,
    /// Trace only: the idle state each CPU's last `cpu_idle` record entered
    /// (`None` once its exit is recorded), and whether the initial states
    /// were recorded.
    pub(crate) idle_traced: Vec<Option<u32>>,
    pub(crate) idle_trace_started: bool,
    /// Host noise (`sched/noise.rs`); None: the clean model.
    pub(crate) noise: Option<crate::noise::NoiseState>,
    /// Where completed iterations' log rows go instead of `Task::log`
    /// ([`Sim::stream_rows`]).
    pub(crate) rows: Option<Box<dyn crate::observe::RowSink>>,
    /// The release's NUMA rules for fork placement and the load balancer,
    /// decided once from `cfg.kernel` (every balancing pass and NUMA fork
    /// reads them).
    pub(crate) numa_fork_rule: NumaForkRule,
    pub(crate) numa_lb_rule: NumaLbRule,
}

/// The scheduler's state (what `kernel/sched` keeps in `struct rq`,
/// `struct task_struct`'s scheduling fields, task groups and sched
/// domains).
pub struct SchedState {
    /// Tasks.
    pub tasks: Vec<Task>,
    /// Entity arena: task entities (index = task id), then group entities.
    pub ents: Vec<SchedEntity>,
    /// cfs_rq arena.
    pub cfs: Vec<CfsRq>,
    /// Per-CPU runqueues.
    pub rqs: Vec<Rq>,
    /// What balancing reads about each CPU, one dense entry per CPU,
    /// refreshed where its figures change (`sched/lb_snapshot.rs`).
    pub(crate) lb_cpus: Vec<crate::fair::select::LbSnapshot>,
    /// CPUs that are idle (`available_idle_cpu`) with their tick stopped:
    /// the ones `nohz_balancer_kick` may kick, kept with `lb_cpus`.
    pub(crate) nohz_idle: crate::machine::CpuMask,
    /// `--check`: the first CPU whose entry was read stale.
    pub(crate) lb_stale_read: std::cell::Cell<Option<crate::ids::CpuId>>,
    /// Running sums of `lb_cpus` over the group spans `lb_sum_kept`
    /// names, indexed by `SchedGroup::span_id` (the others' entries are
    /// unused), kept by the same refreshes (`sched/lb_snapshot.rs`).
    pub(crate) lb_sums: Vec<crate::fair::select::LbSums>,
    /// Per span id: has sums (`fair::select::lb_group_summed` of some
    /// group with that span).
    pub(crate) lb_sum_kept: Vec<bool>,
    /// Some span has sums.
    pub(crate) lb_sums_any: bool,
    /// The span ids whose sums hold CPU `c`: `lb_sum_ids[lb_sum_start[c]..
    /// lb_sum_start[c + 1]]`.
    pub(crate) lb_sum_start: Vec<u32>,
    /// See `lb_sum_start`.
    pub(crate) lb_sum_ids: Vec<u32>,
    /// `--check`: the first group span whose sums were read stale.
    pub(crate) lb_stale_sum: std::cell::Cell<Option<u32>>,
    /// Task groups; `GroupId(0)` is the root.
    pub groups: Vec<TaskGroup>,
    /// EEVDF knobs derived from cfg and machine.
    pub(crate) p: EevdfParams,
    /// CFS knobs derived from cfg and machine (read under `FAIR_CLASS=cfs`).
    pub(crate) cfs_p: crate::fair::cfs::CfsParams,
    /// Tick grid phase.
    pub(crate) tick_offset: Nanos,
    /// Sched domains of the machine.
    pub domains: SchedDomains,
    /// Run-time state of every CPU's domains (parallel to `domains.per_cpu`).
    pub sd_state: Vec<Vec<SdState>>,
    /// Per-LLC shared state (`sched_domain_shared`), by LlcShared index.
    pub llc_state: Vec<LlcState>,
    /// `rd->overloaded`: some CPU has more than one runnable task.
    pub(crate) rd_overloaded: bool,
    /// The global `sched_balance_running` flag.
    pub balance_flag: BalanceFlag,
    /// Per CPU, (event time, CPU clock then) of its first access to the
    /// flag at that event time: its later accesses at the same time are
    /// issued after the CPU time charged since (see `balance_flag_clock`).
    pub(crate) flag_clock_base: Vec<(Nanos, Nanos)>,
    /// A newidle balance is running (its costs are charged after the switch).
    pub(crate) in_newidle: bool,
    /// NI_RANDOM's draws.
    pub(crate) ni_rng: rand_chacha::ChaCha8Rng,
    /// `nohz.next_balance` (jiffies).
    pub(crate) nohz_next_balance: u64,
    /// A NOHZ balance kick is on its way.
    pub(crate) nohz_kick_pending: bool,
    /// The CPU balancing on behalf of idle CPUs (pays for their passes).
    pub(crate) ilb_cpu: Option<CpuId>,
    /// Counter behind `Task::cfs_tasks_stamp`.
    pub(crate) cfs_tasks_seq: u64,
    /// Every CPU's `cfs_tasks` list, in `cfs_tasks_stamp` order.
    pub cfs_tasks: crate::cfs_tasks::CfsTasks,
    /// Arrival stamps of the RT and deadline queues.
    pub(crate) rt_seq: u64,
    /// Every CPU of the machine: the affinity [`SchedState::allowed`]
    /// answers for a task allowed everywhere.
    pub(crate) all_cpus: crate::machine::CpuMask,
}

impl SchedState {
    /// Task `t`'s affinity: for a task allowed everywhere, the one mask of
    /// every CPU (the same set, and in cache) instead of its own copy.
    #[inline]
    pub(crate) fn allowed(&self, t: crate::ids::TaskId) -> &crate::machine::CpuMask {
        let task = &self.tasks[t.idx()];
        if task.allowed_everywhere() {
            &self.all_cpus
        } else {
            &task.cpus_allowed
        }
    }
}

/// What a finished run hands back (the simulator keeps the details; see
/// [`Sim`]'s public fields).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunResult {
    /// Simulated time at the end.
    pub end_ns: Nanos,
    /// Events handled.
    pub events: u64,
    /// First invariant violation, with `--check`.
    pub violation: Option<Violation>,
}

/// The first broken invariant of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Simulated time.
    pub time: Nanos,
    /// The event just handled.
    pub event: String,
    /// What is wrong.
    pub what: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "invariant violated at {} ns after {}: {}",
            self.time, self.event, self.what
        )
    }
}

impl<S: Sink> Sim<S> {
    /// The workload's threads (the simulator's own helper tasks, such as
    /// rt-app's main thread, excluded), in workload order. Forked threads
    /// that were never forked are included: filter with
    /// [`crate::task::Task::existed`].
    pub fn threads(&self) -> &[Task] {
        let n = self.sched.tasks.iter().take_while(|t| !t.internal).count();
        &self.sched.tasks[..n]
    }

    /// CPU `c`'s task, idle and scheduler time up to now, the intervals in
    /// progress included: they add up to the elapsed time.
    pub fn cpu_times(&self, c: CpuId) -> (Nanos, Nanos, Nanos) {
        self.cpu_times_at(c, self.now)
    }

    /// [`Sim::cpu_times`] at `now`, a moment at or after the current time
    /// and before the next event (nothing changes in between).
    fn cpu_times_at(&self, c: CpuId, now: Nanos) -> (Nanos, Nanos, Nanos) {
        let rq = &self.sched.rqs[c.idx()];
        let st = &self.acct.cpu_stats[c.idx()];
        let mut busy = st.busy_ns;
        if let Some(t) = rq.curr {
            let se = &self.sched.ents[self.sched.tasks[t.idx()].se.idx()];
            busy += now.saturating_sub(se.exec_start);
        }
        let mut idle = st.idle_ns;
        if let Some(s) = rq.idle_since {
            idle += now.saturating_sub(s);
        }
        let ovh = st.sched_overhead_ns - rq.ovh_until.saturating_sub(now);
        (busy, idle, ovh)
    }

    /// The run's cumulative counters at `at` ([`CountersAt`]), a moment at
    /// or after the current time and before the next event.
    pub(crate) fn counters_at(&self, at: Nanos) -> CountersAt {
        let mut k = CountersAt {
            at_ns: at,
            ..CountersAt::default()
        };
        for t in &self.sched.tasks {
            if t.internal {
                k.helper_switches += t.stats.switches;
            } else {
                k.switches += t.stats.switches;
                k.involuntary_switches += t.stats.preempted;
                k.migrations += t.stats.migrations;
            }
        }
        for c in 0..self.sched.rqs.len() {
            let (busy, idle, ovh) = self.cpu_times_at(CpuId(c as u32), at);
            k.busy_ns += busy;
            k.idle_ns += idle;
            k.sched_overhead_ns += ovh;
            k.sched_goidle += self.acct.cpu_stats[c].sched_goidle;
        }
        k
    }

    /// Samples the run's cumulative counters every `every` ns of simulated
    /// time (0: never), into [`Accounting::counters`]. Sampling only reads
    /// the state: the run is the same with or without it. Call before
    /// [`Sim::run`].
    pub fn sample_counters_every(&mut self, every: Nanos) {
        self.acct.counters = CounterSamples::new(every);
    }

    /// Takes the samples due before an event at `t`.
    #[inline]
    pub(crate) fn sample_counters_before(&mut self, t: Nanos) {
        while self.acct.counters.next < t {
            let at = self.acct.counters.next;
            let k = self.counters_at(at.max(self.now));
            self.acct.counters.rows.push(k);
            self.acct.counters.next = at + self.acct.counters.every;
        }
    }

    /// Threads of the workload that have not exited.
    pub fn live_tasks_left(&self) -> usize {
        self.prog.live_tasks
    }

    /// Streams every completed iteration's log row to `rows` as it
    /// completes instead of keeping it in [`Task::log`] (which then stays
    /// empty), so a run's memory does not grow with its length. The
    /// wakeup-latency samples and slack figures are kept either way
    /// ([`Task::latency`], [`Task::slack`]). Call before [`Sim::run`].
    pub fn stream_rows(&mut self, rows: Box<dyn crate::observe::RowSink>) {
        self.rows = Some(rows);
    }

    /// Takes the row sink back (to finish it) after the run.
    pub fn take_row_sink(&mut self) -> Option<Box<dyn crate::observe::RowSink>> {
        self.rows.take()
    }

    /// Consumes the simulator, returning the sink.
    pub fn into_sink(self) -> S {
        self.sink
    }

    /// The sink, to take a finished trace out while keeping the state
    /// (replay's round-trip tests read both).
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }
}

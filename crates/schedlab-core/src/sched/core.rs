//! The scheduler core (`kernel/sched/core.c` vocabulary): `schedule`,
//! `try_to_wake_up`, `wake_up_new_task`, `sched_tick`, `resched_curr`, the
//! idle loop's entry and exit, and the cost charging that turns scheduler
//! work into CPU time. It owns every runqueue state transition and calls
//! the fair class's functions.
//!
//! Preemption model (kernel-model.md §3.3). A reschedule request for the
//! CPU it is made on (tick, a wakeup in an interrupt or by the running
//! task) takes effect at once: user-mode code is preempted on the return
//! from interrupt or syscall under every model, and the simulated tasks run
//! their work in user mode. A request for another CPU needs an IPI, which
//! `resched_curr` sends under none/voluntary/full; under `lazy` the fair
//! class's request only sets the lazy flag, so it waits for that CPU's next
//! tick (or its next return to user). Kernel-mode sections, where the
//! models differ further, come with the workloads that have them.
//!
//! Costs: `charge` adds scheduler CPU time to a CPU. A running task makes
//! no progress while its CPU is busy with scheduler work, so the task loses
//! exactly the time the scheduler takes. Idle-exit and IPI latencies are
//! delays, not CPU time.

use crate::event::Event;
use crate::fair::eevdf::{CurrUpdate, Dequeued, EnqueueKind};
use crate::features::PreemptModel;
use crate::ids::{CpuId, TaskId};
use crate::observe::{PrevState, Sink, TaskView, TraceEvent, TraceRecord, CPU_IDLE_EXIT};
use crate::rq::Class;
use crate::sched::fair::FairPick;
use crate::sim::Sim;
use crate::stats::Path;
use crate::task::{Resume, TaskState};
use crate::time::Nanos;

/// A tracepoint to emit, by ids.
pub(super) enum Tp {
    Switch {
        prev: Option<TaskId>,
        state: PrevState,
        next: Option<TaskId>,
    },
    Waking(TaskId, CpuId),
    Wakeup(TaskId, CpuId),
    WakeupNew(TaskId, CpuId),
    Migrate(TaskId, CpuId, CpuId),
    /// A `trace_marker` write by the running task.
    Print(String),
    /// `sched_process_fork` of `child` by `parent` (the running task;
    /// `None`: the idle task starts the workload's first thread).
    Fork {
        parent: Option<TaskId>,
        child: TaskId,
    },
    /// `task_rename` of `task` from `parent`'s comm to its own.
    Rename {
        task: TaskId,
        parent: TaskId,
    },
    /// `sched_process_exit`.
    Exit(TaskId),
    /// `sched_process_free`.
    Free(TaskId),
    /// `sched_stat_runtime`.
    StatRuntime(TaskId, Nanos),
    /// `cpu_idle` (a state index, or `CPU_IDLE_EXIT`).
    Idle(u32),
}

impl<S: Sink> Sim<S> {
    // ---------------------------------------------------------------- tracing

    pub(super) fn emit(&mut self, cpu: CpuId, irq: bool, tp: Tp) {
        if !self.trace {
            return;
        }
        self.idle_trace_init();
        // Code runs on a CPU that was in an idle state: it left the state
        // first.
        self.trace_idle_exit(cpu);
        self.emit_at(cpu, self.now, irq, tp);
    }

    /// Before the first record: the CPUs boot idle, in the states init gave
    /// them.
    fn idle_trace_init(&mut self) {
        if self.idle_trace_started {
            return;
        }
        self.idle_trace_started = true;
        for c in 0..self.sched.rqs.len() {
            let rq = &self.sched.rqs[c];
            if let (None, Some(st)) = (rq.curr, rq.idle_state) {
                let at = rq.idle_since.unwrap_or(0).min(self.now);
                self.idle_traced[c] = Some(st as u32);
                self.emit_at(CpuId(c as u32), at, false, Tp::Idle(st as u32));
            }
        }
    }

    /// `cpu_idle` exit of `cpu`'s traced idle state, if it is in one. It is
    /// recorded when code next runs there: the interrupt that woke the CPU
    /// runs once its idle state's exit latency has passed (`irq_time`), so
    /// that is when the state was left. (Records stay in time order.)
    fn trace_idle_exit(&mut self, cpu: CpuId) {
        if self.idle_traced[cpu.idx()].take().is_some() {
            self.emit_at(cpu, self.now, false, Tp::Idle(CPU_IDLE_EXIT));
        }
    }

    /// `cpu_idle` entry of `cpu`'s current idle state (after the exit of
    /// the previous one, when the CPU woke for an interrupt and sleeps
    /// again).
    fn trace_idle_enter(&mut self, cpu: CpuId) {
        if !self.trace {
            return;
        }
        let Some(st) = self.sched.rqs[cpu.idx()].idle_state else {
            return;
        };
        self.idle_trace_init();
        self.trace_idle_exit(cpu);
        self.idle_traced[cpu.idx()] = Some(st as u32);
        self.emit_at(cpu, self.now, false, Tp::Idle(st as u32));
    }

    fn emit_at(&mut self, cpu: CpuId, time: Nanos, irq: bool, tp: Tp) {
        let rq = &self.sched.rqs[cpu.idx()];
        let nr = if rq.need_resched {
            b'N'
        } else if rq.need_resched_lazy {
            b'L'
        } else {
            b'.'
        };
        let flags = match tp {
            // A write(2) to trace_marker from user space: interrupts on,
            // no preemption count.
            Tp::Print(_) => [b'.', nr, b'.', b'.', b'.'],
            // The idle loop calls into cpuidle with interrupts off.
            Tp::Idle(_) => [b'd', nr, b'.', b'.', b'.'],
            // Process life-cycle events run in task context, preemptible.
            Tp::Fork { .. } | Tp::Rename { .. } | Tp::Exit(_) => [b'.', nr, b'.', b'.', b'.'],
            _ => [b'd', nr, if irq { b'h' } else { b'.' }, b'2', b'.'],
        };
        let (tasks, names) = (&self.sched.tasks, &self.swapper_names);
        let view = |t: Option<TaskId>, c: CpuId| match t {
            Some(t) => {
                let task = &tasks[t.idx()];
                TaskView {
                    pid: task.pid,
                    comm: &task.spec.name,
                    prio: task.prio,
                }
            }
            None => TaskView {
                pid: 0,
                comm: &names[c.idx()],
                prio: 120,
            },
        };
        let event = match tp {
            Tp::Switch { prev, state, next } => TraceEvent::SchedSwitch {
                prev: view(prev, cpu),
                prev_state: if prev.is_some() {
                    state
                } else {
                    PrevState::Runnable
                },
                next: view(next, cpu),
            },
            Tp::Waking(t, c) => TraceEvent::SchedWaking {
                task: view(Some(t), cpu),
                target_cpu: c,
            },
            Tp::Wakeup(t, c) => TraceEvent::SchedWakeup {
                task: view(Some(t), cpu),
                target_cpu: c,
            },
            Tp::WakeupNew(t, c) => TraceEvent::SchedWakeupNew {
                task: view(Some(t), cpu),
                target_cpu: c,
            },
            Tp::Migrate(t, orig_cpu, dest_cpu) => TraceEvent::SchedMigrateTask {
                task: view(Some(t), cpu),
                orig_cpu,
                dest_cpu,
            },
            Tp::Print(ref text) => TraceEvent::Print { text },
            Tp::Fork { parent, child } => {
                let p = view(parent, cpu);
                let mut c = view(Some(child), cpu);
                if parent.is_some() {
                    // The kernel copies the parent's comm into the child.
                    c.comm = p.comm;
                }
                TraceEvent::SchedProcessFork {
                    parent: p,
                    child: c,
                }
            }
            Tp::Rename { task, parent } => TraceEvent::TaskRename {
                task: view(Some(task), cpu),
                oldcomm: &tasks[parent.idx()].spec.name,
            },
            Tp::Exit(t) => TraceEvent::SchedProcessExit {
                task: view(Some(t), cpu),
            },
            Tp::Free(t) => TraceEvent::SchedProcessFree {
                task: view(Some(t), cpu),
            },
            Tp::StatRuntime(t, runtime) => TraceEvent::SchedStatRuntime {
                task: view(Some(t), cpu),
                runtime,
            },
            Tp::Idle(state) => TraceEvent::CpuIdle { state, cpu_id: cpu },
        };
        let ctx = view(rq.curr, cpu);
        let rec = TraceRecord {
            time,
            cpu,
            ctx,
            flags,
            event,
        };
        self.sink.trace(&rec);
    }

    // ------------------------------------------------------------ accounting

    /// A `trace_marker` write by the running task of `cpu` (rt-app's
    /// markers of the categories in `global.ftrace`).
    pub(crate) fn mark(&mut self, cpu: CpuId, category: u8, text: impl FnOnce() -> String) {
        if self.trace && self.prog.ftrace & category != 0 {
            let t = text();
            self.emit(cpu, false, Tp::Print(t));
        }
    }

    /// Applies an `update_curr` result to the running task of `cpu`.
    pub(crate) fn account(&mut self, cpu: CpuId, u: CurrUpdate) {
        if u.delta_exec == 0 {
            if self.trace && !self.stat_quiet {
                self.report_unreported(cpu);
            }
            if u.resched {
                self.resched_curr(cpu, true, self.exec_ctx.unwrap_or(cpu));
            }
            return;
        }
        if let Some(t) = self.sched.rqs[cpu.idx()].curr {
            if self.trace {
                let task = &mut self.sched.tasks[t.idx()];
                if self.stat_quiet {
                    task.stat_unreported += u.delta_exec;
                } else {
                    let runtime = u.delta_exec + std::mem::take(&mut task.stat_unreported);
                    self.emit(cpu, false, Tp::StatRuntime(t, runtime));
                }
            }
            let task = &mut self.sched.tasks[t.idx()];
            task.stats.runtime_ns += u.delta_exec;
            task.work_left = task.work_left.saturating_sub(u.delta_exec);
            let cs = &mut self.acct.cpu_stats[cpu.idx()];
            cs.busy_ns += u.delta_exec;
            cs.rq_cpu_time_ns += u.delta_exec;
            let kernel = self.sched.tasks[t.idx()].group.0 != 0 && self.in_kernel(t);
            self.account_group_usage(t, u.delta_exec, kernel);
        }
        if u.resched {
            // update_curr's resched_curr_lazy: from another CPU's code
            // (a remote enqueue) it is an IPI.
            self.resched_curr(cpu, true, self.exec_ctx.unwrap_or(cpu));
        }
    }

    /// `cgroup_account_cputime`: `ns` of `t`'s execution time added to
    /// the usage of its group and every ancestor (cgroup cpu usage is
    /// hierarchical; cpu.stat `usage_usec`, cpuacct.usage), and to their
    /// `system_usec` part when it was spent in the kernel. (The root
    /// group's usage is the CPUs' time; not kept.)
    fn account_group_usage(&mut self, t: TaskId, ns: Nanos, kernel: bool) {
        self.for_task_groups(t, |grp| {
            grp.usage_ns += ns;
            if kernel {
                grp.system_ns += ns;
            }
        });
    }

    /// `f` on `t`'s group and each of its ancestors below the root.
    fn for_task_groups(
        &mut self,
        t: TaskId,
        mut f: impl FnMut(&mut crate::fair::group::TaskGroup),
    ) {
        let mut g = Some(self.sched.tasks[t.idx()].group).filter(|g| g.0 != 0);
        while let Some(gi) = g {
            let grp = &mut self.sched.groups[gi.idx()];
            f(grp);
            g = grp.parent.filter(|g| g.0 != 0);
        }
    }

    /// Reports the running task's run time held back at op boundaries
    /// (`Task::stat_unreported`) as one `sched_stat_runtime`.
    pub(crate) fn report_unreported(&mut self, cpu: CpuId) {
        if let Some(t) = self.sched.rqs[cpu.idx()].curr {
            let pending = std::mem::take(&mut self.sched.tasks[t.idx()].stat_unreported);
            if pending > 0 {
                self.emit(cpu, false, Tp::StatRuntime(t, pending));
            }
        }
    }

    /// `update_curr` at every level of the running task's hierarchy, the
    /// task's own time accounted to it (and its groups), each level's to
    /// that level's bandwidth.
    pub(crate) fn update_curr_task(&mut self, cpu: CpuId) {
        self.fold_touch_cpu(cpu);
        let Some(t) = self.sched.rqs[cpu.idx()].curr else {
            return;
        };
        match self.sched.class_of(t) {
            Class::Fair => self.update_curr_fair(cpu, t),
            Class::Rt => self.update_curr_rt(cpu),
            Class::Dl => self.update_curr_dl(cpu),
        }
    }

    /// When a task set running on `cpu` now starts running user code: after
    /// the scheduler work already pending there (not the task's time).
    #[inline]
    pub(crate) fn run_start(&self, cpu: CpuId) -> Nanos {
        self.now.max(self.sched.rqs[cpu.idx()].ovh_until)
    }

    /// Charges `cost` of scheduler CPU time to `cpu` at `now`.
    pub(crate) fn charge(&mut self, cpu: CpuId, cost: Nanos, path: Path, rearm: bool) {
        if cost == 0 {
            return;
        }
        match path {
            Path::ContextSwitch => self.acct.profile.context_switch_ns += cost,
            Path::Wakeup => self.acct.profile.wakeup_ns += cost,
            Path::Balance => self.acct.profile.balance_ns += cost,
            Path::Newidle => self.acct.profile.newidle_ns += cost,
            Path::BalanceAtomic => self.acct.profile.balance_atomic_ns += cost,
            Path::Steal => self.acct.profile.steal_ns += cost,
            Path::Throttle => self.acct.profile.throttle_ns += cost,
            Path::AvailableIdle => self.acct.profile.available_idle_ns += cost,
            Path::SchedIdle => self.acct.profile.sched_idle_ns += cost,
        }
        self.stall(cpu, cost, rearm);
    }

    /// Charges `cost` of a wake-up's work to the waking CPU: in the waker's
    /// task context when `in_task` ([`Self::charge_task_ctx`]), else as an
    /// interrupt's time ([`Self::charge`]).
    pub(crate) fn charge_waker(&mut self, cpu: CpuId, cost: Nanos, path: Path, in_task: bool) {
        if in_task {
            self.charge_task_ctx(cpu, cost, path, true);
        } else {
            self.charge(cpu, cost, path, true);
        }
    }

    /// [`Self::charge`] for scheduler work done in the running task's own
    /// context (a context switch, as the task switched to; a wake-up it
    /// makes and the IPI that sends): the CPU is as unavailable to the
    /// task's program as for any scheduler work, and the task is also
    /// charged the time ([`Self::charge_sched_work`]).
    pub(crate) fn charge_task_ctx(&mut self, cpu: CpuId, cost: Nanos, path: Path, rearm: bool) {
        self.charge(cpu, cost, path, rearm);
        if cost == 0 {
            return;
        }
        if let Some(t) = self.sched.rqs[cpu.idx()].curr {
            self.charge_sched_work(cpu, t, cost);
            let now = self.now;
            let rq = &mut self.sched.rqs[cpu.idx()];
            while rq.ctx_work.front().is_some_and(|&(_, end, _)| end <= now) {
                rq.ctx_work.pop_front();
            }
            let end = rq.ovh_until;
            rq.ctx_work.push_back((end - cost, end, t));
        }
    }

    /// Scheduler work of `cost` done in the context of `t`, the running
    /// task of `cpu`, is `t`'s execution time: the kernel's `update_curr`
    /// (and `update_curr_common` of RT and deadline) charges the task
    /// clock since `exec_start`, which runs through that work; only IRQ
    /// time (IRQ_TIME_ACCOUNTING) and steal are taken out. The model
    /// keeps the work off the program (`stall` moves `exec_start` past it,
    /// so a run op still gets its full length and `busy_ns` stays the
    /// programs' time), so the work is added here to everything the
    /// kernel's delta reaches:
    ///
    /// * `sum_exec_runtime` and the task's `runtime_ns` (its schedstat
    ///   first field), with the part kept apart in `sched_work_ns`;
    /// * the cgroup usage of its group and ancestors
    ///   (`cgroup_account_cputime`), as system time: the work runs in the
    ///   kernel;
    /// * the CPU's schedstat `rq_cpu_time` (`sched_info_depart`'s time
    ///   from the task's arrival on the CPU to its departure, which
    ///   includes the work);
    /// * the class's own use of the delta: vruntime and CFS quota of a
    ///   fair task (`charge_sched_work_fair`), RT time or deadline runtime
    ///   of an RT or deadline task at its next update_curr
    ///   (`charge_sched_work_rt_dl`).
    ///
    /// Not the program's progress: the work does not shorten the task's
    /// run op (`work_left`), and rt-app's log columns, which rt-app
    /// measures itself on the wall clock (`run`, `perf` loops), already
    /// see the work as the delay `stall` makes.
    ///
    /// Not yet `sched_stat_runtime` either, where the kernel's next
    /// update_curr delta would carry it: the trace replay
    /// (`ReplayOptions::for_schedlab_trace`) reads a schedlab trace's
    /// `sched_stat_runtime` lines as the program's time, and cannot take
    /// the work back out of them exactly (an `on_cpu` spin is invisible
    /// in the trace), so its exact round trips would break. The records
    /// keep the program's time: a task's records sum to
    /// `runtime_ns − sched_work_ns`.
    pub(crate) fn charge_sched_work(&mut self, cpu: CpuId, t: TaskId, cost: Nanos) {
        let task = &mut self.sched.tasks[t.idx()];
        task.stats.runtime_ns += cost;
        task.stats.sched_work_ns += cost;
        self.acct.cpu_stats[cpu.idx()].rq_cpu_time_ns += cost;
        self.account_group_usage(t, cost, true);
        match self.sched.class_of(t) {
            Class::Fair => self.charge_sched_work_fair(t, cost),
            Class::Rt | Class::Dl => self.charge_sched_work_rt_dl(t, cost),
        }
    }

    /// At the end of the run (`now`): the work charged to tasks in `cpu`'s
    /// context that lies past now did not happen within the run; it comes
    /// off the accounts [`Self::charge_sched_work`] added it to (not the
    /// fair class's vruntime and quota, which no output reads at the end),
    /// as the CPU's overhead past the end comes off its own.
    pub(crate) fn uncharge_work_past_end(&mut self, cpu: CpuId) {
        let now = self.now;
        let log = std::mem::take(&mut self.sched.rqs[cpu.idx()].ctx_work);
        for (start, end, t) in log {
            if end <= now {
                continue;
            }
            let part = end - start.max(now);
            let task = &mut self.sched.tasks[t.idx()];
            task.stats.runtime_ns -= part;
            task.stats.sched_work_ns -= part;
            self.acct.cpu_stats[cpu.idx()].rq_cpu_time_ns -= part;
            if self.sched.class_of(t) == Class::Fair {
                for &se in self.sched.task_path(t).as_slice() {
                    self.sched.ents[se.idx()].sum_exec_runtime -= part;
                }
            } else {
                let task = &mut self.sched.tasks[t.idx()];
                task.sched_work_pending = task.sched_work_pending.saturating_sub(part);
                self.sched.ents[task.se.idx()].sum_exec_runtime -= part;
            }
            self.for_task_groups(t, |grp| {
                grp.usage_ns -= part;
                grp.system_ns -= part;
            });
        }
    }

    /// Makes `cpu` unavailable to tasks for `cost` from `now` (after the
    /// overhead already pending): scheduler work ([`Self::charge`]) or host
    /// noise (`sched/noise.rs`). Counted as the CPU's overhead.
    pub(crate) fn stall(&mut self, cpu: CpuId, cost: Nanos, rearm: bool) {
        if cost == 0 {
            return;
        }
        self.fold_touch_cpu(cpu);
        self.acct.cpu_stats[cpu.idx()].sched_overhead_ns += cost;
        let now = self.now;
        if let Some(t) = self.sched.rqs[cpu.idx()].curr {
            // A fair task's time is charged without update_curr's decisions
            // (see `charge_curr_quiet`): the kernel reschedules a task past
            // its deadline only at its update_curr points (the tick,
            // enqueue/dequeue, the wake-up preemption check, put_prev).
            // RT and deadline tasks keep the full update (runtime
            // enforcement, as with HRTICK_DL, on time).
            if self.sched.class_of(t) == Class::Fair {
                self.charge_curr_quiet(cpu, t);
            } else {
                self.update_curr_task(cpu);
            }
            let rq = &mut self.sched.rqs[cpu.idx()];
            let start = now.max(rq.ovh_until);
            rq.ovh_until = start + cost;
            let until = rq.ovh_until;
            let curr = rq.curr.unwrap();
            if self.sched.class_of(curr) == Class::Fair {
                let path = self.sched.task_path(curr);
                for &se in path.as_slice() {
                    let e = &mut self.sched.ents[se.idx()];
                    e.exec_start = e.exec_start.max(until);
                }
            } else {
                let e = &mut self.sched.ents[self.sched.tasks[curr.idx()].se.idx()];
                e.exec_start = e.exec_start.max(until);
            }
            if rearm {
                self.arm_burst(cpu);
            }
        } else {
            let rq = &mut self.sched.rqs[cpu.idx()];
            let start = now.max(rq.ovh_until);
            if let Some(s) = rq.idle_since {
                self.acct.cpu_stats[cpu.idx()].idle_ns += start.saturating_sub(s);
            }
            rq.ovh_until = start + cost;
            rq.idle_since = Some(rq.ovh_until);
        }
    }

    // ------------------------------------------------------------- the tick

    fn next_tick_after(&self, t: Nanos) -> Nanos {
        let tick = self.cfg.tick_ns();
        let off = self.sched.tick_offset;
        if t < off {
            return off;
        }
        off + ((t - off) / tick + 1) * tick
    }

    fn start_tick(&mut self, cpu: CpuId) {
        let rq = &mut self.sched.rqs[cpu.idx()];
        rq.tick_stopped = false;
        rq.tick_gen = rq.tick_gen.wrapping_add(1);
        self.lb_refresh(cpu);
        self.push_tick(cpu);
    }

    /// Arms `cpu`'s next tick: the next point of the jiffies grid after
    /// now. The tick is that CPU's hrtimer interrupt (tick_sched_timer),
    /// so with host noise it runs as late as any timer interrupt of the
    /// CPU (`timer_interrupt_at`, sched/noise.rs) — which also decides the
    /// order of ticks due at the same instant on different CPUs (without
    /// noise, push order).
    fn push_tick(&mut self, cpu: CpuId) {
        let due = self.next_tick_after(self.now);
        let at = self.timer_interrupt_at(cpu, due);
        let gen = self.sched.rqs[cpu.idx()].tick_gen;
        self.queue.push(at, Event::Tick { cpu, gen });
    }

    fn stop_tick(&mut self, cpu: CpuId) {
        let rq = &mut self.sched.rqs[cpu.idx()];
        rq.tick_stopped = true;
        rq.tick_gen = rq.tick_gen.wrapping_add(1);
        self.lb_refresh(cpu);
    }

    /// `sched_tick`: lazy upgrade, `task_tick_fair`, re-arm.
    pub(crate) fn sched_tick(&mut self, cpu: CpuId) {
        let Some(t) = self.sched.rqs[cpu.idx()].curr else {
            // A tick on an idle CPU (the tick was kept for a short idle
            // period): idle balancing, then stop the tick if the CPU now
            // expects a long sleep.
            let next_timer = self.sched.rqs[cpu.idx()].timers.first().map(|&(t, _)| t);
            let long = next_timer.is_none_or(|t| t.saturating_sub(self.now) >= self.cfg.tick_ns());
            if long {
                self.stop_tick(cpu);
            } else {
                self.push_tick(cpu);
            }
            self.sched_balance_trigger(cpu);
            self.reidle_keep_tick(cpu);
            return;
        };
        if self.sched.rqs[cpu.idx()].need_resched_lazy {
            self.sched.rqs[cpu.idx()].need_resched = true;
            self.post_resched(cpu, self.now);
        }
        self.update_curr_task(cpu);
        match self.sched.class_of(t) {
            Class::Fair => self.task_tick_fair(t),
            Class::Rt => self.task_tick_rt(cpu, t),
            Class::Dl => {}
        }
        self.update_idle_cpu_scan(cpu);
        self.push_tick(cpu);
        self.sched_balance_trigger(cpu);
        self.nohz_balancer_kick(cpu);
        self.flush_throttle_cost(cpu, true);
    }

    // -------------------------------------------------------- rescheduling

    /// `resched_curr` / `resched_curr_lazy` for `cpu`, requested from
    /// `from` (see the module doc for the preemption model).
    pub(crate) fn resched_curr(&mut self, cpu: CpuId, lazy: bool, from: CpuId) {
        let local = cpu == from;
        let ipi = self.machine.costs.ipi_latency_ns;
        let rq = &mut self.sched.rqs[cpu.idx()];
        if rq.curr.is_none() {
            // An idle CPU that polls (`set_nr_if_polling`) or is already
            // woken needs no IPI; one in a halting state does.
            let need_resched = rq.need_resched;
            if !local && self.halted(cpu) && !need_resched {
                self.charge_ipi_send(from);
            }
            let rq = &mut self.sched.rqs[cpu.idx()];
            rq.need_resched = true;
            let t = if local { self.now } else { self.now + ipi };
            let t = self.irq_time(cpu, t);
            self.post_resched(cpu, t);
            return;
        }
        if rq.need_resched {
            return;
        }
        if lazy && self.cfg.preempt == PreemptModel::Lazy {
            rq.need_resched_lazy = true;
            if local {
                self.post_resched(cpu, self.now);
            }
            return;
        }
        rq.need_resched = true;
        let t = if local { self.now } else { self.now + ipi };
        self.post_resched(cpu, t);
        if !local {
            self.charge_ipi_send(from);
        }
    }

    /// The sender's CPU time of one reschedule/wakeup IPI
    /// (`MachineCosts::ipi_send_ns`; 0 on the bare-metal presets).
    pub(crate) fn charge_ipi_send(&mut self, from: CpuId) {
        let cost = self.machine.costs.ipi_send_ns;
        self.charge_task_ctx(from, cost, Path::Wakeup, true);
    }

    pub(crate) fn post_resched(&mut self, cpu: CpuId, t: Nanos) {
        let rq = &mut self.sched.rqs[cpu.idx()];
        if rq.resched_posted.is_some_and(|p| p <= t) {
            return;
        }
        rq.resched_posted = Some(t);
        self.queue.push(t, Event::Resched { cpu });
    }

    pub(crate) fn resched_event(&mut self, cpu: CpuId) {
        let rq = &mut self.sched.rqs[cpu.idx()];
        if rq.resched_posted.is_some_and(|p| p <= self.now) {
            rq.resched_posted = None;
        }
        if rq.curr.is_none() {
            if let Some(a) = rq.awake_at.filter(|&a| a > self.now) {
                // Still leaving its idle state: run schedule() once awake.
                // (An earlier resched for this CPU may have absorbed the one
                // posted for the wake-up time, so post it again.)
                self.post_resched(cpu, a);
                return;
            }
            if rq.nr_running > 0 {
                self.schedule(cpu, PrevState::Runnable);
            } else {
                rq.need_resched = false;
                self.reidle(cpu);
            }
            return;
        }
        if rq.need_resched || rq.need_resched_lazy {
            self.schedule(cpu, PrevState::Preempted);
        }
    }

    // ------------------------------------------------------------ idle

    /// When code triggered by an interrupt at `t` runs on `cpu`: at once if
    /// the CPU is awake, after the exit latency of its idle state if not.
    pub(crate) fn irq_time(&mut self, cpu: CpuId, t: Nanos) -> Nanos {
        let rq = &mut self.sched.rqs[cpu.idx()];
        if rq.curr.is_some() {
            return t;
        }
        match (rq.awake_at, rq.idle_state) {
            (Some(a), _) => a.max(t),
            (None, Some(s)) => {
                let a = t + self.machine.idle_states[s].exit_latency_ns;
                rq.awake_at = Some(a);
                a
            }
            (None, None) => t,
        }
    }

    /// The menu governor's prediction of the coming idle period: the
    /// distance to the next timer, or less when the recent idle periods
    /// show a pattern (`sched/cpuidle_menu.rs`).
    fn predicted_idle(&self, cpu: CpuId) -> Nanos {
        let rq = &self.sched.rqs[cpu.idx()];
        let next_timer = rq.timers.first().map(|&(t, _)| t);
        let timer = next_timer.map_or(Nanos::MAX, |t| t.saturating_sub(self.now));
        rq.menu
            .typical_interval_ns()
            .map_or(timer, |p| p.min(timer))
    }

    /// A CPU leaving the idle state it is in: the governor records how
    /// long it stayed (`menu_update`).
    fn menu_record(&mut self, cpu: CpuId) {
        let now = self.now;
        let rq = &mut self.sched.rqs[cpu.idx()];
        if let Some(s) = rq.idle_state {
            let end = rq.awake_at.unwrap_or(now).min(now);
            let exit = self.machine.idle_states[s].exit_latency_ns;
            rq.menu.record(end.saturating_sub(rq.idle_entry), exit);
        }
    }

    /// The CPU has nothing to run: pick an idle state by the governor's
    /// prediction and stop the tick.
    fn enter_idle(&mut self, cpu: CpuId) {
        let now = self.now;
        let predicted = self.predicted_idle(cpu);
        let rq = &mut self.sched.rqs[cpu.idx()];
        rq.idle_state = Some(self.machine.idle_state_for(predicted));
        rq.idle_entry = now;
        rq.awake_at = None;
        if rq.idle_since.is_none() {
            rq.idle_since = Some(now.max(rq.ovh_until));
            rq.idle_stamp = now;
        }
        self.trace_idle_enter(cpu);
        // NO_HZ idle stops the tick only when the CPU expects to sleep at
        // least a tick (tick_nohz_idle_stop_tick after the governor's
        // prediction); short idle periods keep it, and its idle ticks run
        // idle load balancing.
        if predicted >= self.cfg.tick_ns() {
            self.stop_tick(cpu);
        } else if self.sched.rqs[cpu.idx()].tick_stopped {
            self.start_tick(cpu);
        }
        self.update_idle_core(cpu);
    }

    /// After an idle tick: back to sleep unless work arrived; the tick
    /// state is left as the tick handler set it.
    fn reidle_keep_tick(&mut self, cpu: CpuId) {
        let rq = &self.sched.rqs[cpu.idx()];
        if rq.is_idle() && rq.resched_posted.is_none() {
            let now = self.now;
            self.menu_record(cpu);
            let predicted = self.predicted_idle(cpu);
            let rq = &mut self.sched.rqs[cpu.idx()];
            rq.idle_state = Some(self.machine.idle_state_for(predicted));
            rq.idle_entry = now;
            rq.awake_at = None;
            self.trace_idle_enter(cpu);
        }
    }

    /// An idle CPU that handled an interrupt goes back to sleep if it has
    /// nothing to run.
    pub(crate) fn reidle(&mut self, cpu: CpuId) {
        let rq = &self.sched.rqs[cpu.idx()];
        if rq.is_idle() && rq.resched_posted.is_none() {
            self.menu_record(cpu);
            self.enter_idle(cpu);
        }
    }

    // ------------------------------------------------------------ schedule

    /// Arms the running task's next burst end (also used to run the program
    /// at the moment the task gets the CPU).
    pub(crate) fn arm_burst(&mut self, cpu: CpuId) {
        let rq = &mut self.sched.rqs[cpu.idx()];
        rq.burst_gen = rq.burst_gen.wrapping_add(1);
        let Some(t) = rq.curr else { return };
        let gen = rq.burst_gen;
        let task = &self.sched.tasks[t.idx()];
        let start = self.sched.ents[task.se.idx()].exec_start.max(self.now);
        let at = match task.resume {
            Resume::Op => match task.current_op() {
                Some(crate::program::Op::Run { .. }) => start + task.work_left,
                Some(crate::program::Op::Runtime { .. }) => start.max(task.runtime_end),
                _ => start,
            },
            Resume::CompleteBlock => start,
            Resume::Continue => start + task.work_left,
        };
        self.queue.push(at, Event::BurstEnd { cpu, gen });
    }

    /// `__schedule`'s `picked:` point: `clear_tsk_need_resched(prev)` and
    /// `clear_preempt_need_resched()` come after `pick_next_task`, so a
    /// reschedule asked for while picking (the `update_curr` of put_prev
    /// finding the slice used up, a newidle pull) is absorbed by this very
    /// schedule instead of forcing another one at the same instant.
    fn clear_need_resched(&mut self, cpu: CpuId) {
        let rq = &mut self.sched.rqs[cpu.idx()];
        rq.need_resched = false;
        rq.need_resched_lazy = false;
    }

    /// `__schedule`: put prev, pick next, switch.
    pub(crate) fn schedule(&mut self, cpu: CpuId, prev_state: PrevState) {
        let now = self.now;
        let c = cpu.idx();
        self.acct.cpu_stats[c].sched_count += 1;
        let rq = &mut self.sched.rqs[c];
        rq.need_resched = false;
        rq.need_resched_lazy = false;
        let prev = rq.curr;
        if prev.is_some() {
            self.update_curr_task(cpu);
        }
        // pick_next_entity: a delayed entity that gets picked finishes its
        // dequeue now, and the pick repeats.
        let active = self.take_active_balance(cpu, prev);
        // balance_rt: an RT prev whose priority is no longer the CPU's best
        // (it blocked, or lost to a lower one) pulls from overloaded CPUs.
        if let Some(p) = prev {
            if self.sched.class_of(p) == Class::Rt
                && self.sched.rqs[c].rt.highest_prio() > self.sched.tasks[p.idx()].prio
            {
                self.pull_rt_task(cpu);
            }
            // balance_dl: likewise when the earliest deadline got later.
            if self.sched.class_of(p) == Class::Dl {
                let pd = self.sched.tasks[p.idx()].dl.deadline;
                let still_first = self.sched.rqs[c]
                    .dl
                    .queue
                    .first()
                    .is_some_and(|&(d, _, _)| d <= pd);
                if !still_first {
                    self.pull_dl_task(cpu);
                }
            }
        }
        let mut tried_newidle = false;
        let next = loop {
            // Classes in order: deadline, RT, fair.
            if let Some(t) = self.pick_dl(cpu) {
                break Some(t);
            }
            if let Some(t) = self.pick_rt(cpu) {
                break Some(t);
            }
            match self.pick_next_task_fair(cpu, &mut tried_newidle) {
                FairPick::Task(t) => break Some(t),
                FairPick::Again => continue,
                FairPick::Idle => break None,
            }
        };
        if next.is_some() && next == prev {
            self.clear_need_resched(cpu);
            // Re-picked: no switch (put_prev_set_next_task returns early), but
            // the trip through __schedule still costs CPU time — a guess of
            // half a context switch, which also guarantees that a task that
            // yields in a loop lets simulated time advance.
            let cost = self.machine.costs.context_switch_ns / 2;
            self.charge_task_ctx(cpu, cost.max(1), Path::ContextSwitch, true);
            self.post_task_work(cpu);
            return;
        }
        // Put prev (the fair class keeps curr per level; RT and deadline
        // queues keep their curr in place).
        let fair_next = next.filter(|&n| self.sched.class_of(n) == Class::Fair);
        let fair_prev = prev.filter(|&p| self.sched.class_of(p) == Class::Fair);
        if let Some(p) = prev {
            if fair_prev.is_some() {
                self.put_prev_task_fair(p, fair_next);
            }
            let task = &mut self.sched.tasks[p.idx()];
            if task.state == TaskState::Runnable {
                task.wait_since = Some(now);
                if prev_state == PrevState::Preempted {
                    task.stats.preempted += 1;
                }
            }
        }
        // Set next.
        if let Some(n) = next {
            self.sched.cfs_tasks_seq += 1;
            self.sched.tasks[n.idx()].cfs_tasks_stamp = self.sched.cfs_tasks_seq;
            if fair_next.is_some() {
                // pick_next_task_fair's list_move to the head of cfs_tasks.
                self.sched.cfs_tasks.move_to_head(cpu, n);
                self.set_next_task_fair(n, fair_prev);
            } else {
                self.sched.ents[self.sched.tasks[n.idx()].se.idx()].exec_start =
                    self.run_start(cpu);
            }
        }
        self.clear_need_resched(cpu);
        let dead = prev.filter(|_| prev_state == PrevState::Dead);
        if let Some(p) = dead {
            self.emit(cpu, false, Tp::Exit(p));
        }
        self.emit(
            cpu,
            false,
            Tp::Switch {
                prev,
                state: prev_state,
                next,
            },
        );
        self.sched.rqs[c].curr = next;
        self.lb_refresh(cpu);
        if let Some(p) = dead {
            // The last reference goes once the task is off the CPU (the
            // kernel frees it after an RCU grace period; not modelled).
            self.emit(cpu, false, Tp::Free(p));
        }
        self.sched.rqs[c].last_switch = now;
        match next {
            Some(n) => {
                self.menu_record(cpu);
                let rq = &mut self.sched.rqs[c];
                if let Some(s) = rq.idle_since.take() {
                    self.acct.cpu_stats[c].idle_ns += now.saturating_sub(s);
                }
                rq.idle_state = None;
                rq.awake_at = None;
                let stopped = rq.tick_stopped;
                let task = &mut self.sched.tasks[n.idx()];
                if let Some(w) = task.wait_since.take() {
                    task.stats.wait_ns += now - w;
                    self.acct.cpu_stats[c].run_delay_ns += now - w;
                }
                task.stats.switches += 1;
                self.acct.cpu_stats[c].pcount += 1;
                if stopped {
                    self.start_tick(cpu);
                }
            }
            None => {
                self.acct.cpu_stats[c].sched_goidle += 1;
                self.enter_idle(cpu);
            }
        }
        let xcpu = next.map_or(0, |n| self.remote_switch_in_ns(n, cpu));
        let cost = self.machine.costs.context_switch_ns + xcpu;
        self.charge_task_ctx(cpu, cost, Path::ContextSwitch, false);
        if let Some(ab) = active {
            self.complete_active_balance(cpu, ab);
        }
        let nc = std::mem::take(&mut self.acct.newidle_cost);
        self.charge(cpu, nc, Path::Newidle, false);
        let na = std::mem::take(&mut self.acct.newidle_atomic_cost);
        self.charge(cpu, na, Path::BalanceAtomic, false);
        let sc = std::mem::take(&mut self.acct.steal_cost);
        self.charge(cpu, sc, Path::Steal, false);
        self.flush_throttle_cost(cpu, false);
        // prev stays on_cpu until this CPU has switched away from it.
        if let Some(p) =
            prev.filter(|_| matches!(prev_state, PrevState::Sleeping | PrevState::Uninterruptible))
        {
            self.sched.tasks[p.idx()].on_cpu_until = self.sched.rqs[c].ovh_until;
        }
        self.arm_burst(cpu);
        self.post_task_work(cpu);
        // post_schedule: push the RT and deadline tasks this CPU cannot
        // run now.
        if self.sched.rqs[c].rt.queue.len() >= 2 {
            self.push_rt_tasks(cpu);
        }
        if self.sched.rqs[c].dl.queue.len() >= 2 {
            self.push_dl_tasks(cpu);
        }
    }

    // ------------------------------------------------------ enqueue/dequeue

    /// `enqueue_task_fair`: queue `t`'s entity on its group's queue of
    /// `cpu`, then each group entity above that is not queued yet, and add
    /// the task to every level's counts.
    pub(crate) fn enqueue_task(&mut self, t: TaskId, cpu: CpuId, kind: EnqueueKind) {
        debug_assert_eq!(self.sched.tasks[t.idx()].cpu, cpu);
        match self.sched.class_of(t) {
            Class::Fair => self.enqueue_task_fair(t, cpu, kind),
            Class::Rt => {
                self.update_curr_task(cpu);
                self.enqueue_rt(t, cpu);
            }
            Class::Dl => {
                self.update_curr_task(cpu);
                self.enqueue_dl(t, cpu, kind != EnqueueKind::Migrate);
            }
        }
    }

    /// Takes `t` off its CPU's queue of its class (see
    /// [`Self::dequeue_task_fair`] for the fair class's delayed dequeue).
    pub(crate) fn dequeue_task(&mut self, t: TaskId, sleep: bool) -> Dequeued {
        match self.sched.class_of(t) {
            Class::Fair => self.dequeue_task_fair(t, sleep),
            Class::Rt => {
                self.update_curr_task(self.sched.tasks[t.idx()].cpu);
                self.dequeue_rt(t);
                Dequeued::Gone
            }
            Class::Dl => {
                self.update_curr_task(self.sched.tasks[t.idx()].cpu);
                self.dequeue_dl(t);
                Dequeued::Gone
            }
        }
    }

    /// Moves a task that is on no runqueue to `dest` (`set_task_cpu`).
    pub(crate) fn set_task_cpu(&mut self, t: TaskId, dest: CpuId, from_cpu: CpuId) {
        let orig = self.sched.tasks[t.idx()].cpu;
        if orig == dest {
            return;
        }
        self.emit(from_cpu, false, Tp::Migrate(t, orig, dest));
        // PELT: detach from the old queue; attach at the next enqueue.
        self.detach_task_load(t);
        let task = &mut self.sched.tasks[t.idx()];
        task.cpu = dest;
        task.stats.migrations += 1;
        self.sched.set_task_rq(t);
    }

    // ----------------------------------------------------------- timers

    /// Arms `t`'s hrtimer on its CPU for `expiry`, with the task's timer
    /// slack: the timer fires at the first hrtimer interrupt of that CPU
    /// after `expiry` (the tick, while it runs) or at `expiry + slack`.
    pub(crate) fn arm_task_timer(&mut self, t: TaskId, expiry: Nanos) {
        let cpu = self.sched.tasks[t.idx()].cpu;
        let slack = self.timer_slack(t);
        let hard = expiry + slack;
        let mut fire = hard;
        if !self.sched.rqs[cpu.idx()].tick_stopped {
            let tick = if expiry <= self.sched.tick_offset {
                self.sched.tick_offset
            } else {
                self.next_tick_after(expiry - 1)
            };
            if tick < hard {
                fire = tick;
            }
        }
        let fire = self.timer_interrupt_at(cpu, fire.max(self.now));
        let task = &mut self.sched.tasks[t.idx()];
        task.timer_gen = task.timer_gen.wrapping_add(1);
        task.timer_cpu = cpu;
        task.timer_expiry = expiry;
        let gen = task.timer_gen;
        self.sched.rqs[cpu.idx()].timers.insert((hard, t));
        self.queue.push(
            fire,
            Event::TaskTimer {
                task: t,
                gen,
                handler: false,
            },
        );
    }

    /// The task's hrtimer slack: `timer_slack_ns` for fair tasks, none for
    /// RT and deadline tasks (the kernel's sleep paths, `hrtimer_nanosleep`
    /// and `schedule_hrtimeout_range`, use zero slack for them; recent
    /// kernels also report their timer_slack_ns as 0). The host validation
    /// shows it: a SCHED_FIFO periodic thread's median wake-up latency on
    /// the 2-vCPU guest is 34 µs, below the 50 µs slack (docs/validation.md,
    /// fifo1-fair).
    fn timer_slack(&self, t: TaskId) -> Nanos {
        use crate::program::Policy;
        match self.sched.tasks[t.idx()].policy {
            Policy::Fifo | Policy::Rr | Policy::Deadline => 0,
            _ => self.cfg.tunables.timer_slack_ns,
        }
    }

    pub(crate) fn task_timer(&mut self, t: TaskId, handler: bool) {
        let task = &self.sched.tasks[t.idx()];
        let cpu = task.timer_cpu;
        let hard = task.timer_expiry + self.timer_slack(t);
        let gen = task.timer_gen;
        if !handler {
            // Coalesced with a tick that did not happen (CPU went idle):
            // the hardware timer fires at the hard expiry.
            if self.now < hard && self.sched.rqs[cpu.idx()].tick_stopped {
                self.queue.push(
                    hard,
                    Event::TaskTimer {
                        task: t,
                        gen,
                        handler: false,
                    },
                );
                return;
            }
            let h = self.irq_time(cpu, self.now);
            if h > self.now {
                self.queue.push(
                    h,
                    Event::TaskTimer {
                        task: t,
                        gen,
                        handler: true,
                    },
                );
                return;
            }
        }
        self.sched.rqs[cpu.idx()].timers.remove(&(hard, t));
        let task = &mut self.sched.tasks[t.idx()];
        task.timer_gen = task.timer_gen.wrapping_add(1);
        self.try_to_wake_up(t, cpu, false, false);
        self.reidle(cpu);
    }

    /// Puts a task that is on no runqueue onto `dest` (affinity change),
    /// waking or preempting there as a wakeup would.
    pub(crate) fn move_task(&mut self, t: TaskId, from: CpuId, dest: CpuId, kind: EnqueueKind) {
        self.set_task_cpu(t, dest, from);
        self.enqueue_task(t, dest, kind);
        let task = &mut self.sched.tasks[t.idx()];
        task.state = TaskState::Runnable;
        task.wait_since = Some(self.now);
        self.wakeup_preempt(dest, t, from, true, false);
    }
}

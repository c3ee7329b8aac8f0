//! The behaviour-program interpreter: what a task does when it has the CPU.
//!
//! It follows rt-app's thread body (formats-spec.md 1.6–1.8, 2.3): phases and
//! loops, `run` as a fixed amount of work, `runtime` as wall time, `sleep`,
//! the `timer` algorithm with its slack and wake-up latency, `yield`, and
//! one log row per phase iteration. Every op runs in the task's own
//! context at the time the task really has the CPU (after the context
//! switch cost), so measured latencies include the scheduler's own costs.

use crate::fair::eevdf;
use crate::fair::eevdf::EnqueueKind;
use crate::fair::weight::{task_weight, NICE_0_LOAD};
use crate::folds::Landing;
use crate::ids::{CpuId, TaskId};
use crate::machine::CpuMask;
use crate::observe::{PrevState, Sink};
use crate::program::{Op, FTRACE_EVENT, FTRACE_LOOP, FTRACE_MAIN, FTRACE_STATS, FTRACE_TASK};
use crate::rq::Class;
use crate::runtime::ChannelState;
use crate::sched::chan_lock::ChanLock;
use crate::sim::Sim;
use crate::stats::LogRow;
use crate::task::{ChanRetry, Iteration, Resume, TaskState};
use crate::time::{Nanos, NSEC_PER_USEC};

fn us(ns: Nanos) -> u64 {
    ns / NSEC_PER_USEC
}

impl<S: Sink> Sim<S> {
    /// The running task of `cpu` reached the end of its burst (or got the
    /// CPU with something to do).
    pub(crate) fn burst_end(&mut self, cpu: CpuId) {
        let Some(t) = self.sched.rqs[cpu.idx()].curr else {
            return;
        };
        // The task's own step: not a kernel entry (rt-app's busy loop ends
        // in user space), so not an update_curr point either. A fair task's
        // time is charged without update_curr's decisions (no new deadline,
        // no reschedule: `charge_curr_quiet`), reported at the next update
        // (see Task::stat_unreported); a task past its deadline is
        // rescheduled at the next tick or syscall, as in the kernel. RT and
        // deadline tasks keep the full update (runtime enforcement).
        if self.sched.class_of(t) == Class::Fair {
            self.charge_curr_quiet(cpu, t);
        } else {
            self.stat_quiet = self.trace;
            self.update_curr_task(cpu);
            self.stat_quiet = false;
        }
        let now = self.now;
        let task = &mut self.sched.tasks[t.idx()];
        match task.resume {
            Resume::Op => {
                // Progress is linear, so an early event means the burst was
                // pushed back (scheduler work on this CPU): re-arm.
                let unfinished = match task.current_op() {
                    Some(Op::Run { .. }) => task.work_left > 0,
                    Some(Op::Runtime { .. }) => now < task.runtime_end,
                    _ => false,
                };
                if unfinished {
                    self.arm_burst(cpu);
                    return;
                }
                self.op_done(t);
            }
            Resume::CompleteBlock => {
                // Leaving the blocking syscall returns to user space, which
                // runs pending task_work first (exit_to_user_mode): a task
                // woken into a throttled hierarchy parks there before its
                // wake-up completes, so the throttled time is wake-up
                // latency, not run time, as on the host (bw-* shapes in
                // docs/validation.md).
                if task.throttle_work && self.throttle_task_work(cpu, t) {
                    return;
                }
                let task = &mut self.sched.tasks[t.idx()];
                if task.wake_is_timer {
                    let exp = task.wake_expiry.unwrap_or(now);
                    task.iter.wu_lat_us += us(now.saturating_sub(exp));
                    task.iter.timer_slept = true;
                }
                task.wake_expiry = None;
                self.op_done(t);
            }
            Resume::Continue => {
                // A syscall's CPU time (channel ops) not yet all spent: the
                // burst was pushed back by scheduler work on this CPU.
                if task.work_left > 0 {
                    self.arm_burst(cpu);
                    return;
                }
            }
        }
        self.run_program(cpu, t);
        // Back in user space (or still running user code): a throttle
        // task_work posted meanwhile runs now.
        self.post_task_work(cpu);
    }

    /// Is the task inside a syscall (spending a channel operation's CPU
    /// time)? Everything else the simulated tasks do runs in user space.
    pub(crate) fn in_kernel(&self, t: TaskId) -> bool {
        let task = &self.sched.tasks[t.idx()];
        task.resume == Resume::Continue && task.paid > 0 && task.work_left > 0
    }

    /// Accounts the finished op into the iteration and moves the program on.
    fn op_done(&mut self, t: TaskId) {
        let now = self.now;
        let task = &mut self.sched.tasks[t.idx()];
        match task.current_op().cloned() {
            Some(Op::Run {
                config_us, perf, ..
            }) => {
                task.iter.run_us += us(now - task.op_start);
                task.iter.perf += perf;
                task.iter.c_duration_us += config_us;
            }
            Some(Op::Runtime { config_us, .. }) => {
                task.iter.run_us += us(now - task.op_start);
                task.iter.c_duration_us += config_us;
            }
            _ => {}
        }
        task.pc.op += 1;
        task.pc.op_started = false;
        let nops = task.spec.program.phases[task.pc.phase].ops.len();
        if task.pc.op == nops {
            self.end_iteration(t);
        }
    }

    /// Closes the iteration: one rt-app log row; then the loop counters.
    /// rt-app's markers at the start of an iteration (and of the thread).
    fn mark_iteration_start(&mut self, cpu: CpuId, t: TaskId) {
        let task = &self.sched.tasks[t.idx()];
        let (pc, main) = (task.pc.clone(), task.internal);
        if pc.task_loop == 0 && pc.phase == 0 && pc.phase_iter == 0 {
            let (cat, text) = if main {
                (FTRACE_MAIN, "rtapp_main: event=start")
            } else {
                (FTRACE_TASK, "rtapp_task: event=start")
            };
            self.mark(cpu, cat, || text.to_string());
        }
        if !main {
            self.mark(cpu, FTRACE_LOOP, || {
                format!(
                    "rtapp_loop: event=start thread_loop={} phase={} phase_loop={}",
                    pc.task_loop, pc.phase, pc.phase_iter
                )
            });
        }
    }

    /// rt-app's markers at the end of an iteration (stats, then loop end).
    fn mark_iteration_end(&mut self, t: TaskId) {
        let now = self.now;
        let task = &self.sched.tasks[t.idx()];
        if !task.internal {
            let cpu = task.cpu;
            let (it, pc) = (task.iter.clone(), task.pc.clone());
            self.mark(cpu, FTRACE_STATS, || {
                format!(
                    "rtapp_stats: period={} run={} wu_lat={} slack={} c_period={} c_run={}",
                    us(now - it.start),
                    it.run_us,
                    it.wu_lat_us,
                    it.slack_us,
                    it.c_period_us,
                    it.c_duration_us
                )
            });
            self.mark(cpu, FTRACE_LOOP, || {
                format!(
                    "rtapp_loop: event=end thread_loop={} phase={} phase_loop={}",
                    pc.task_loop, pc.phase, pc.phase_iter
                )
            });
        }
    }

    fn end_iteration(&mut self, t: TaskId) {
        let now = self.now;
        if self.trace && self.prog.ftrace & (FTRACE_LOOP | FTRACE_STATS) != 0 {
            self.mark_iteration_end(t);
        }
        let t_start = self.t_start;
        let task = &mut self.sched.tasks[t.idx()];
        let it = std::mem::take(&mut task.iter);
        let keep = task.spec.log_rows;
        let row = LogRow {
            idx: task.spec.index,
            perf: it.perf,
            run: it.run_us,
            period: us(now - it.start),
            start: us(it.start),
            end: us(now),
            rel_st: us(it.start.saturating_sub(t_start)),
            slack: it.slack_us,
            c_duration: it.c_duration_us,
            c_period: it.c_period_us,
            wu_lat: it.wu_lat_us,
        };
        if keep {
            if row.c_period > 0 {
                task.latency.push(row.wu_lat);
            }
            task.slack.push(&row);
            match self.rows.as_mut() {
                Some(out) => out.row(t, &task.spec.name, &row),
                None => task.log.push(row),
            }
        }
        task.stats.loops += 1;
        let prog = &task.spec.program;
        let pc = &mut task.pc;
        pc.iter_open = false;
        pc.op = 0;
        pc.phase_iter += 1;
        if pc.phase_iter >= prog.phases[pc.phase].loops {
            pc.phase_iter = 0;
            pc.phase += 1;
            if pc.phase == prog.phases.len() {
                pc.phase = 0;
                pc.task_loop += 1;
                if prog.loops.is_some_and(|l| pc.task_loop >= l) {
                    pc.done = true;
                }
            }
        }
    }

    /// Runs the program from the current op until the task needs CPU time,
    /// blocks, yields or exits.
    pub(crate) fn run_program(&mut self, cpu: CpuId, t: TaskId) {
        loop {
            let now = self.now;
            let task = &mut self.sched.tasks[t.idx()];
            task.resume = Resume::Op;
            if !task.barrier_done {
                task.barrier_done = true;
                if self.start_barrier_wait(cpu, t) {
                    return;
                }
            }
            let task = &self.sched.tasks[t.idx()];
            // Timers start at T0 (or, for a forked thread, when it was
            // forked) plus the thread's delay.
            let base = task.fork_time.or(self.t0).unwrap_or(self.t_start);
            let t_first = base + task.spec.delay_ns;
            let task = &mut self.sched.tasks[t.idx()];
            if !task.delay_done {
                task.delay_done = true;
                // clock_nanosleep(TIMER_ABSTIME) to T0 + delay; returns at
                // once if that time has passed.
                if t_first > now {
                    self.block(cpu, t, t_first, false, Resume::Continue);
                    return;
                }
            }
            if task.pc.done {
                self.task_exit(cpu, t);
                return;
            }
            if !task.pc.iter_open {
                if self.apply_phase_attrs(cpu, t) {
                    return; // migrated; it carries on where it lands
                }
                if self.trace && self.prog.ftrace != 0 {
                    self.mark_iteration_start(cpu, t);
                }
                let task = &mut self.sched.tasks[t.idx()];
                task.pc.iter_open = true;
                task.iter = Iteration {
                    start: now,
                    ..Default::default()
                };
            }
            let task = &mut self.sched.tasks[t.idx()];
            let op = task
                .current_op()
                .cloned()
                .expect("a phase has at least one op");
            let fresh = !task.pc.op_started;
            task.pc.op_started = true;
            if fresh && self.trace && self.prog.ftrace & FTRACE_EVENT != 0 {
                let pc = &task.pc;
                if let Some(m) = task.spec.program.phases[pc.phase].marks.get(pc.op) {
                    let text = format!("rtapp_event: id={} type={} desc={}", pc.op, m.kind, m.desc);
                    self.mark(cpu, FTRACE_EVENT, || text);
                }
            }
            let task = &mut self.sched.tasks[t.idx()];
            match op {
                Op::Work { work_ns } => {
                    let task = &mut self.sched.tasks[t.idx()];
                    if fresh && work_ns > 0 {
                        task.work_left = work_ns;
                        task.resume = Resume::Continue;
                        self.arm_burst(cpu);
                        return;
                    }
                    self.op_done(t);
                }
                Op::Lock { .. }
                | Op::Unlock { .. }
                | Op::Wait { .. }
                | Op::Signal { .. }
                | Op::Sync { .. }
                | Op::Suspend { .. }
                | Op::Resume { .. }
                | Op::Barrier { .. }
                | Op::SemPost { .. }
                | Op::SemWait { .. }
                | Op::SemSend { .. }
                | Op::SemReply => {
                    if fresh {
                        let task = &mut self.sched.tasks[t.idx()];
                        task.sync_stage = 0;
                        task.paid = 0;
                    }
                    // Each attempt first spends the CPU time of the calls it
                    // makes (libc fast path, futex syscalls), then acts.
                    if self.sched.tasks[t.idx()].paid == 0 {
                        let c = self.sync_cost(t, &op);
                        self.pay(cpu, t, 1, c);
                        return;
                    }
                    if self.sync_op(cpu, t, &op) {
                        // Asleep in the futex call already paid for: the
                        // retry once woken completes within that call.
                        return;
                    }
                    self.sched.tasks[t.idx()].paid = 0;
                    self.op_done(t);
                }
                Op::FutexArm { .. }
                | Op::FutexPost { .. }
                | Op::FutexWait { .. }
                | Op::Stamp { .. }
                | Op::Record { .. }
                | Op::ListAdd { .. }
                | Op::ListWakeAll { .. }
                | Op::RequestPost { .. }
                | Op::RequestTake { .. }
                | Op::SleepUntil { .. }
                | Op::CpuLock { .. }
                | Op::CpuUnlock => {
                    if fresh {
                        let task = &mut self.sched.tasks[t.idx()];
                        task.sync_stage = 0;
                        task.paid = 0;
                    }
                    if self.futex_word_op(cpu, t, &op) {
                        return;
                    }
                    self.sched.tasks[t.idx()].paid = 0;
                    self.op_done(t);
                }
                Op::Send { first, count } => {
                    if fresh {
                        self.sched.tasks[t.idx()].chan_pos = 0;
                        self.sched.tasks[t.idx()].paid = 0;
                    }
                    if self.channel_send(cpu, t, first, count) {
                        return; // paying for the writes, or blocked
                    }
                    self.op_done(t);
                }
                Op::Recv { chan, msgs } => {
                    if fresh {
                        self.sched.tasks[t.idx()].chan_pos = msgs;
                        self.sched.tasks[t.idx()].paid = 0;
                    }
                    if self.channel_recv(cpu, t, chan) {
                        return;
                    }
                    self.op_done(t);
                }
                Op::Run { work_ns, .. } => {
                    task.work_left = work_ns;
                    task.op_start = now;
                    self.arm_burst(cpu);
                    return;
                }
                Op::Runtime { wall_ns, .. } => {
                    task.op_start = now;
                    task.runtime_end = now + wall_ns;
                    self.arm_burst(cpu);
                    return;
                }
                Op::Sleep { ns: 0 } => {
                    // nanosleep(0) returns at once.
                    self.op_done(t);
                }
                Op::Sleep { ns } => {
                    self.block(cpu, t, now + ns, false, Resume::CompleteBlock);
                    return;
                }
                Op::Timer { timer, period_ns } => {
                    task.iter.c_period_us += us(period_ns);
                    let ts = &mut self.prog.timers[timer.0 as usize];
                    let next = ts.next.unwrap_or(t_first) + period_ns;
                    ts.next = Some(next);
                    let task = &mut self.sched.tasks[t.idx()];
                    let s = (next as i64 - now as i64) / NSEC_PER_USEC as i64;
                    task.iter.slack_us = if self.prog.cumulative_slack {
                        task.iter.slack_us + s
                    } else {
                        s
                    };
                    if now < next {
                        self.block(cpu, t, next, true, Resume::CompleteBlock);
                        return;
                    }
                    // Overrun: no sleep; relative timers re-anchor.
                    if !ts_absolute(&self.prog.timers[timer.0 as usize]) {
                        self.prog.timers[timer.0 as usize].next = Some(now);
                    }
                    self.sched.tasks[t.idx()].iter.wu_lat_us = 0;
                    self.op_done(t);
                }
                Op::Spawn { task } => {
                    self.op_done(t);
                    self.wake_up_new_task(TaskId(task), cpu);
                    if self.sched.rqs[cpu.idx()].curr != Some(t) {
                        return; // cannot happen before the next schedule, but be safe
                    }
                }
                Op::Fork { pool } => {
                    self.op_done(t);
                    let p = pool as usize;
                    let Some(&child) = self.prog.fork_pools[p].get(self.prog.fork_next[p]) else {
                        continue; // pool used up: rt-app forks no more
                    };
                    self.prog.fork_next[p] += 1;
                    self.prog.live_tasks += 1;
                    self.sched.tasks[child as usize].fork_time = Some(now);
                    self.wake_up_new_task(TaskId(child), cpu);
                    if self.sched.rqs[cpu.idx()].curr != Some(t) {
                        return; // the child preempted its parent at once
                    }
                }
                Op::Park => {
                    let task = &mut self.sched.tasks[t.idx()];
                    task.resume = Resume::Continue;
                    self.dequeue_task(t, true);
                    self.sched.tasks[t.idx()].state = TaskState::Sleeping;
                    self.schedule(cpu, PrevState::Sleeping);
                    return;
                }
                Op::Yield => {
                    // The sched_yield syscall's own CPU time, then the yield
                    // (the scheduler's part is charged by schedule()).
                    if fresh {
                        self.sched.tasks[t.idx()].paid = 0;
                    }
                    if self.sched.tasks[t.idx()].paid == 0 {
                        let c = self.sys.syscall;
                        self.pay(cpu, t, 1, c);
                        return;
                    }
                    self.sched.tasks[t.idx()].paid = 0;
                    self.op_done(t);
                    self.update_curr_task(cpu);
                    match self.sched.class_of(t) {
                        Class::Fair if self.sched.cfs_p.active => self.yield_task_cfs(t),
                        Class::Fair => {
                            let q = self.sched.task_cfs_rq(t).idx();
                            eevdf::yield_entity(
                                &mut self.sched.cfs[q],
                                &mut self.sched.ents,
                                now,
                                &self.sched.p,
                            );
                        }
                        // yield_task_rt: to the tail of its priority.
                        Class::Rt => self.requeue_rt_tail(t),
                        // yield_task_dl: the rest of the runtime is given up.
                        Class::Dl => self.yield_dl(cpu, t),
                    }
                    self.sched.tasks[t.idx()].resume = Resume::Continue;
                    // If it is re-picked, schedule() armed its burst end after
                    // the scheduler's own time: it carries on from there.
                    self.schedule(cpu, PrevState::Runnable);
                    return;
                }
            }
        }
    }

    /// rt-app's start barrier: thread 0 reads T0 on its way in; every
    /// thread but the last sleeps there; the last one wakes them all (in
    /// task context, from its CPU). Returns true when `t` went to sleep.
    fn start_barrier_wait(&mut self, cpu: CpuId, t: TaskId) -> bool {
        if self.sched.tasks[t.idx()].spec.index == 0 || self.t0.is_none() {
            if self.t0.is_none() {
                let t0 = self.now / 1000;
                self.mark(cpu, FTRACE_MAIN, || {
                    format!("rtapp_main: event=clock_ref data={t0}")
                });
            }
            self.t0.get_or_insert(self.now);
        }
        self.prog.barrier_arrived += 1;
        if self.prog.barrier_arrived < self.prog.startup_threads {
            self.prog.start_barrier.push(t);
            let task = &mut self.sched.tasks[t.idx()];
            task.resume = Resume::Continue;
            self.dequeue_task(t, true);
            self.sched.tasks[t.idx()].state = TaskState::Sleeping;
            self.schedule(cpu, PrevState::Sleeping);
            return true;
        }
        self.t_release = Some(self.now);
        for w in std::mem::take(&mut self.prog.start_barrier) {
            self.try_to_wake_up(w, cpu, true, false);
        }
        false
    }

    /// Blocks the running task until `expiry` (sleep, timer, start delay);
    /// `expiry` is in the future.
    pub(crate) fn block(
        &mut self,
        cpu: CpuId,
        t: TaskId,
        expiry: Nanos,
        is_timer: bool,
        resume: Resume,
    ) {
        debug_assert!(expiry > self.now, "blocking until a time that has passed");
        let task = &mut self.sched.tasks[t.idx()];
        task.wake_expiry = Some(expiry);
        task.wake_is_timer = is_timer;
        task.resume = resume;
        self.dequeue_task(t, true);
        self.sched.tasks[t.idx()].state = TaskState::Sleeping;
        self.arm_task_timer(t, expiry);
        self.schedule(cpu, PrevState::Sleeping);
    }

    fn task_exit(&mut self, cpu: CpuId, t: TaskId) {
        self.mark(cpu, FTRACE_TASK, || "rtapp_task: event=end".to_string());
        self.last_exit = self.now;
        self.dequeue_task(t, false);
        self.sched.tasks[t.idx()].state = TaskState::Dead;
        self.prog.live_tasks -= 1;
        self.schedule(cpu, PrevState::Dead);
    }

    /// Phase-level policy/nice and affinity, applied at the start of each
    /// iteration when they differ. Returns true when the task had to leave
    /// this CPU.
    fn apply_phase_attrs(&mut self, cpu: CpuId, t: TaskId) -> bool {
        let n = self.machine.nr_cpus();
        let task = &self.sched.tasks[t.idx()];
        let phase = &task.spec.program.phases[task.pc.phase];
        let (sched, slice_ns, dl) = (phase.sched, phase.slice_ns, phase.dl);
        let cpus = phase.cpus.clone();
        let group = phase.group.clone();
        let (cur_policy, cur_nice) = (task.policy, task.nice);
        if let Some(path) = group {
            let g = crate::sched::group::group_by_path(&self.sched.groups, &path)
                .expect("checked at set-up");
            self.move_task_group(cpu, t, g);
        }
        if let Some((policy, nice)) = sched {
            let fair_now = cur_policy.is_fair() && self.sched.class_of(t) == Class::Fair;
            if policy.is_fair() && fair_now {
                if (policy, nice) != (cur_policy, cur_nice) {
                    self.set_fair_policy(cpu, t, policy, nice);
                }
                self.set_fair_slice(cpu, t, slice_ns);
            } else if (policy, nice) != (cur_policy, cur_nice)
                || (policy == crate::program::Policy::Deadline
                    && dl != self.sched.tasks[t.idx()].dl.params)
            {
                self.sched_setscheduler(cpu, t, policy, nice, dl);
                if policy.is_fair() && self.sched.class_of(t) == Class::Fair {
                    self.set_fair_slice(cpu, t, slice_ns);
                }
            }
        }
        let Some(list) = cpus else { return false };
        let mask = CpuMask::from_cpus(n, &list).expect("checked at set-up");
        if mask == self.sched.tasks[t.idx()].cpus_allowed {
            return false;
        }
        self.sched.tasks[t.idx()].set_cpus_allowed(mask.clone());
        if mask.test(cpu) {
            return false;
        }
        // Move the running task (the stopper's move_queued_task).
        let now = self.now;
        self.dequeue_task(t, false);
        self.sched.tasks[t.idx()].resume = Resume::Continue;
        self.schedule(cpu, PrevState::Preempted);
        let dest = self.select_task_rq_fork(t, cpu);
        self.migrate_to(t, cpu, dest);
        let task = &mut self.sched.tasks[t.idx()];
        task.state = TaskState::Runnable;
        task.wait_since = Some(now);
        true
    }

    /// Policy/nice change of a running fair task (`__sched_setscheduler`).
    fn set_fair_policy(
        &mut self,
        cpu: CpuId,
        t: TaskId,
        policy: crate::program::Policy,
        nice: i32,
    ) {
        let now = self.now;
        let q = self.sched.task_cfs_rq(t);
        let se = self.sched.tasks[t.idx()].se;
        self.update_curr_task(cpu);
        let w = task_weight(policy, nice);
        let _ = now;
        self.fair_reweight_entity(q, se, w);
        let was_idle = self.sched.ents[se.idx()].idle;
        let idle = policy == crate::program::Policy::Idle;
        self.sched.ents[se.idx()].idle = idle;
        if self.sched.ents[se.idx()].on_rq && was_idle != idle {
            self.add_h_counts(q, 0, 0, if idle { 1 } else { -1 });
        }
        let task = &mut self.sched.tasks[t.idx()];
        task.policy = policy;
        task.nice = nice;
    }

    /// The slice part of `sched_setattr` on the running fair task: a
    /// runtime sets a custom slice, none restores the base slice. The
    /// kernel dequeues and re-enqueues the task around the change, which
    /// keeps its lag and gives it a fresh deadline one (new) slice ahead.
    fn set_fair_slice(&mut self, cpu: CpuId, t: TaskId, slice_ns: Option<Nanos>) {
        let se = self.sched.tasks[t.idx()].se;
        let (slice, custom) = match slice_ns {
            Some(ns) => (ns, true),
            None => (self.sched.p.base_slice_ns, false),
        };
        let e = &self.sched.ents[se.idx()];
        if (e.slice, e.custom_slice) == (slice, custom) {
            return;
        }
        // Phase attributes are applied by the running task itself.
        let q = self.sched.task_cfs_rq(t).idx();
        self.update_curr_task(cpu);
        if self.sched.cfs_p.active {
            // CFS has no requests: the slice is kept for a later switch only.
            let e = &mut self.sched.ents[se.idx()];
            e.slice = slice;
            e.custom_slice = custom;
            return;
        }
        eevdf::set_curr_slice(
            &self.sched.cfs[q],
            &mut self.sched.ents,
            se,
            slice,
            custom,
            &self.sched.p,
        );
    }

    /// Puts a dequeued, not running task on `dest` and wakes that CPU.
    fn migrate_to(&mut self, t: TaskId, from: CpuId, dest: CpuId) {
        self.move_task(t, from, dest, EnqueueKind::Migrate);
    }
}

fn ts_absolute(ts: &crate::runtime::TimerState) -> bool {
    ts.absolute
}

impl<S: Sink> Sim<S> {
    /// CPU time of one `write()` (`write` true) or `read()` on channel `ch`
    /// made on `cpu`, its message aside: the call, plus moving the
    /// channel's shared state from the CPU that used it last
    /// (`sched/syscall_cost.rs`).
    pub(crate) fn chan_cost(&self, ch: usize, write: bool, cpu: CpuId) -> Nanos {
        let (base, kind, last) = self.chan_call(ch, write);
        base + last.map_or(0, |o| self.sys.xcpu_ns(self.machine.distance(o, cpu), kind))
    }

    /// The call's own CPU time, its kind (`SyscallCosts::xcpu` column) and
    /// the CPU that used the channel last.
    fn chan_call(&self, ch: usize, write: bool) -> (Nanos, usize, Option<CpuId>) {
        match (&self.prog.channels[ch], write) {
            (ChannelState::Pipe(p, _), true) => (self.sys.pipe_write, 0, p.last_cpu),
            (ChannelState::Pipe(p, _), false) => (self.sys.pipe_read, 1, p.last_cpu),
            (ChannelState::Unix(s, _), true) => (self.sys.unix_write, 2, s.last_cpu),
            (ChannelState::Unix(s, _), false) => (self.sys.unix_read, 3, s.last_cpu),
        }
    }

    /// The writing CPUs of channel `ch`'s unread bytes.
    fn chan_origins(&self, ch: usize) -> &super::msg_origin::MsgOrigins {
        match &self.prog.channels[ch] {
            ChannelState::Pipe(p, _) => &p.origins,
            ChannelState::Unix(s, _) => &s.origins,
        }
    }

    /// The writing CPU of channel `ch`'s next message, if one is queued,
    /// and the size of a message.
    fn chan_next_msg(&self, ch: usize) -> (Option<CpuId>, u64) {
        match &self.prog.channels[ch] {
            ChannelState::Pipe(p, n) => (p.origins.front(), *n),
            ChannelState::Unix(s, n) => (s.origins.front(), *n),
        }
    }

    /// What a call of kind `kind` on channel `ch` by `cpu` pays for the
    /// message it takes (`msg_cost`), if it is a read and one is queued.
    #[inline]
    fn read_msg_cost(&self, ch: usize, write: bool, kind: usize, cpu: CpuId) -> (Nanos, Nanos) {
        if write {
            return (0, 0);
        }
        match self.chan_next_msg(ch).0 {
            Some(from) => self.msg_cost(kind, from, cpu),
            None => (0, 0),
        }
    }

    /// What a read of kind `kind` by `cpu` pays for a message written on
    /// `from` (`SyscallCosts::xmsg`), and the part of it under the
    /// channel's lock: a pipe copies its data under `pipe->mutex`; a
    /// socket's reader copies and frees the skb after taking it off the
    /// queue, outside `unix_state_lock` and the queue's lock.
    fn msg_cost(&self, kind: usize, from: CpuId, cpu: CpuId) -> (Nanos, Nanos) {
        let x = self.sys.xmsg_ns(self.machine.distance(from, cpu), kind);
        (x, if kind == 1 { x } else { 0 })
    }

    /// The price of one `write()` or `read()` on channel `ch` by `cpu`
    /// starting at `start`, as a landing ending `cost` later: the call and
    /// its cache lines (`chan_cost`; a read's message's too, from the CPU
    /// that wrote it, when one is queued), plus the wait for the channel's
    /// lock if a hold decided before it is not over by `start`
    /// (`sched/chan_lock.rs`); its own hold is its time under the lock plus
    /// the lines it takes there.
    pub(crate) fn chan_price(&self, ch: usize, write: bool, cpu: CpuId, start: Nanos) -> Landing {
        // The lines and the lock wait are what a woken call's second pass
        // pays too; the call adds its own time and its time under the lock.
        let (base, kind, last) = self.chan_call(ch, write);
        let mut l = self.chan_lines_price(ch, write, kind, last, cpu, start);
        l.cost += base;
        l.at += base;
        l.hold += self.sys.in_lock[kind];
        l
    }

    /// The second pass of a `write()` or `read()` by `cpu` that slept on
    /// channel `ch` and was woken, starting at `start`. The kernel's
    /// blocking paths loop: pipe_read and pipe_write take `pipe->mutex`
    /// again and look at the ring once more, and unix_stream_read_generic
    /// takes the socket's state lock again and peeks its queue (its
    /// `redo`); a unix writer wakes in the send-buffer wait and goes on to
    /// queue its skb. The call's instructions were priced once, when it
    /// started (`chan_price`). What the second pass adds is what other
    /// CPUs wrote while it slept: the channel's shared state, from its
    /// last user (`SyscallCosts::xcpu`: the waker, mostly), and for a read
    /// its message, from the CPU that wrote it (`SyscallCosts::xmsg`),
    /// both the lockstep measurements' lines (docs/syscall-costs.md), plus
    /// the wait for the lock. Without this pass, a woken read would pay
    /// for neither: its first pass found no message and the state on its
    /// own CPU. Its hold is the lines it takes under the lock. The
    /// call's sleep path comes first (`pay_retry`).
    pub(crate) fn chan_retry_price(
        &self,
        ch: usize,
        write: bool,
        cpu: CpuId,
        start: Nanos,
    ) -> Landing {
        let (_, kind, last) = self.chan_call(ch, write);
        self.chan_lines_price(ch, write, kind, last, cpu, start)
    }

    /// The lines and the lock wait of a call of kind `kind` (whose channel
    /// `last` used) on `ch` by `cpu` from `start`: `chan_retry_price`, and
    /// the part of `chan_price` besides the call's own time.
    fn chan_lines_price(
        &self,
        ch: usize,
        write: bool,
        kind: usize,
        last: Option<CpuId>,
        cpu: CpuId,
        start: Nanos,
    ) -> Landing {
        let x = last.map_or(0, |o| self.sys.xcpu_ns(self.machine.distance(o, cpu), kind));
        let (msg, msg_held) = self.read_msg_cost(ch, write, kind, cpu);
        let wait = self.chan_lock(ch).wait(start, |o| {
            self.sys.handoff[self.machine.distance(o, cpu) as usize]
        });
        let cost = x + msg + wait;
        Landing {
            at: start + cost,
            cost,
            chan: ch as u32,
            wait,
            hold: x + msg_held,
            msg,
        }
    }

    /// Channel `ch`'s lock.
    pub(crate) fn chan_lock(&self, ch: usize) -> &ChanLock {
        match &self.prog.channels[ch] {
            ChannelState::Pipe(p, _) => &p.lock,
            ChannelState::Unix(s, _) => &s.lock,
        }
    }

    /// Channel `ch`'s lock, to take or restore.
    pub(crate) fn chan_lock_mut(&mut self, ch: usize) -> &mut ChanLock {
        match &mut self.prog.channels[ch] {
            ChannelState::Pipe(p, _) => &mut p.lock,
            ChannelState::Unix(s, _) => &mut s.lock,
        }
    }

    /// The calls just priced in `folds.buf` by `cpu` (their own landings),
    /// now paid for, take their channels' locks, in order.
    fn take_chan_locks(&mut self, cpu: CpuId) {
        let land = std::mem::take(&mut self.folds.buf);
        let now = self.now;
        for l in &land {
            self.chan_lock_mut(l.chan as usize)
                .take(now, cpu, l.at - l.cost, l.wait, l.hold);
        }
        self.folds.buf = land;
    }

    /// A `write()` or `read()` on `cpu` takes channel `ch`'s cache lines.
    fn chan_touch(&mut self, ch: usize, cpu: CpuId) {
        match &mut self.prog.channels[ch] {
            ChannelState::Pipe(p, _) => p.last_cpu = Some(cpu),
            ChannelState::Unix(s, _) => s.last_cpu = Some(cpu),
        }
    }

    /// One round of writes (`Op::Send`): one `write()` syscall to each
    /// channel from the task's position on. Each write first costs its CPU
    /// time; then it takes effect (sleeping while the channel is full, and
    /// waking sleepers as the kernel does: `sched/pipe.rs`,
    /// `sched/unix_stream.rs`). A write woken from sleep completes without
    /// paying again (it is the same syscall). Returns true when the task
    /// stopped (paying or asleep), false when the round is complete.
    fn channel_send(&mut self, cpu: CpuId, t: TaskId, first: u32, count: u32) -> bool {
        loop {
            let pos = self.sched.tasks[t.idx()].chan_pos as u32;
            if pos >= count {
                return false;
            }
            if self.sched.tasks[t.idx()].paid == 0 {
                let (k, work) = self.writes_to_pay(cpu, t, first, pos, count);
                self.pay(cpu, t, k, work);
                if self.sched.tasks[t.idx()].paid == 0 {
                    return true; // throttled on the way in: not started
                }
                self.take_chan_locks(cpu);
                // The fold horizon (sched/fold.rs): the last call lands on
                // its channel, and the next one is priced, at its landing.
                // (The round's end: hackbench's next op is the next round,
                // from its first channel; a guess that costs only a
                // shorter fold of another task if wrong.)
                if self.cfg.fast_forward {
                    let last = *self.folds.buf.last().expect("a call was paid");
                    self.fold_note_use(last.chan as usize, t, last.at);
                    let next = pos as u64 + k;
                    let next = if next < u64::from(count) { next } else { 0 };
                    self.fold_note_use((u64::from(first) + next) as usize, t, last.at);
                }
                if k > 1 {
                    self.fold_begin(cpu, t, true);
                }
                return true;
            }
            let ch = (first + pos) as usize;
            if self.sched.tasks[t.idx()].chan_retry != ChanRetry::Paid
                && self.pay_retry(cpu, t, ch, true)
            {
                return true;
            }
            if !self.chan_write(cpu, t, ch) {
                return true;
            }
            let task = &mut self.sched.tasks[t.idx()];
            task.chan_pos += 1;
            task.paid -= 1;
        }
    }

    /// Reading (`Op::Recv`): one `read()` syscall per message, each paid
    /// before it takes effect; a read of an empty channel sleeps until a
    /// writer wakes it. Returns true when the task stopped.
    fn channel_recv(&mut self, cpu: CpuId, t: TaskId, chan: u32) -> bool {
        loop {
            let left = self.sched.tasks[t.idx()].chan_pos;
            if left == 0 {
                return false;
            }
            if self.sched.tasks[t.idx()].paid == 0 {
                let (k, work) = self.reads_to_pay(cpu, t, chan as usize, left);
                self.pay(cpu, t, k, work);
                if self.sched.tasks[t.idx()].paid == 0 {
                    return true; // throttled on the way in: not started
                }
                self.take_chan_locks(cpu);
                // The fold horizon: the last read lands at its time, and
                // the next one (if any) is priced then.
                if self.cfg.fast_forward {
                    let last = *self.folds.buf.last().expect("a call was paid");
                    self.fold_note_use(chan as usize, t, last.at);
                }
                if k > 1 {
                    self.fold_begin(cpu, t, false);
                }
                return true;
            }
            if self.sched.tasks[t.idx()].chan_retry != ChanRetry::Paid
                && self.pay_retry(cpu, t, chan as usize, false)
            {
                return true;
            }
            if !self.chan_read(cpu, t, chan as usize) {
                return true;
            }
            let task = &mut self.sched.tasks[t.idx()];
            task.chan_pos -= 1;
            task.paid -= 1;
        }
    }

    /// A `write()` or `read()` of `t` on channel `ch`, woken from sleep
    /// there, first pays for its sleep path (`SyscallCosts::chan_sleep`:
    /// leaving the wait queue, with the part before the sleep, until it
    /// asks for the channel's lock again), then for its second pass
    /// (`chan_retry_price`), priced when the sleep path is done: the lock
    /// and the lines as they are then. True when it stopped to pay, false
    /// when nothing is left to pay (the lines on this CPU already) and the
    /// call goes on at once.
    fn pay_retry(&mut self, cpu: CpuId, t: TaskId, ch: usize, write: bool) -> bool {
        if self.sched.tasks[t.idx()].chan_retry == ChanRetry::SleepPath {
            self.sched.tasks[t.idx()].chan_retry = ChanRetry::SecondPass;
            let sleep = self.sys.chan_sleep[self.chan_call(ch, write).1 / 2];
            if sleep > 0 {
                let task = &mut self.sched.tasks[t.idx()];
                task.work_left = sleep;
                task.resume = Resume::Continue;
                self.arm_burst(cpu);
                return true;
            }
        }
        self.sched.tasks[t.idx()].chan_retry = ChanRetry::Paid;
        let start = self.call_start(t);
        let l = self.fold_settle_chan(ch, t, start, |s| s.chan_retry_price(ch, write, cpu, start));
        if l.cost == 0 {
            return false;
        }
        if l.wait + l.hold > 0 {
            let now = self.now;
            self.chan_lock_mut(ch).take(now, cpu, start, l.wait, l.hold);
        }
        if self.cfg.fast_forward {
            self.fold_note_use(ch, t, l.at);
        }
        let task = &mut self.sched.tasks[t.idx()];
        task.work_left = l.cost;
        task.resume = Resume::Continue;
        self.arm_burst(cpu);
        true
    }

    /// Wakes, in order, the tasks a socket's wait queue held (swapped into
    /// `wake_scratch`), then keeps the emptied list for the next swap.
    fn wake_swapped_list(&mut self, cpu: CpuId) {
        let mut list = std::mem::take(&mut self.prog.wake_scratch);
        for &w in &list {
            self.try_to_wake_up(w, cpu, true, true);
        }
        list.clear();
        self.prog.wake_scratch = list;
    }

    /// Runs `call` (a write or a read by `t` on channel `ch`) with the
    /// pending fold's bookkeeping around it: a fold holding the channel is
    /// settled up to now before, and rechecked after (sched/fold.rs).
    fn with_fold_on_chan(
        &mut self,
        t: TaskId,
        ch: usize,
        read: bool,
        call: impl FnOnce(&mut Self) -> bool,
    ) -> bool {
        let held = self.fold_touch_chan(ch, t);
        let done = call(self);
        if let Some(h) = held {
            self.fold_recheck(h, ch, read);
        }
        done
    }

    /// The effect of one paid `write()` on channel `ch`: false when the
    /// channel is full and the writer went to sleep on it.
    fn chan_write(&mut self, cpu: CpuId, t: TaskId, ch: usize) -> bool {
        self.with_fold_on_chan(t, ch, false, |s| s.chan_write_now(cpu, t, ch))
    }

    /// `chan_write` without the pending fold's bookkeeping
    /// (sched/fold.rs settles its own landings with it).
    pub(crate) fn chan_write_now(&mut self, cpu: CpuId, t: TaskId, ch: usize) -> bool {
        self.chan_touch(ch, cpu);
        let waited = self.sched.tasks[t.idx()].chan_waited;
        let mut wake: [Option<TaskId>; 2] = [None, None];
        let mut wake_all = false;
        match &mut self.prog.channels[ch] {
            ChannelState::Pipe(p, n) => {
                if !p.writable(*n) {
                    p.writers.push_back(t);
                    self.block_on_channel(cpu, t);
                    return false;
                }
                // pipe_write: wake a reader if the pipe was empty; a writer
                // that had waited wakes the next one unless it left the
                // pipe full.
                if p.write(*n) {
                    wake[0] = p.readers.pop_front();
                }
                p.origins.push(*n, cpu);
                if waited && !p.full() {
                    wake[1] = p.writers.pop_front();
                }
            }
            ChannelState::Unix(s, n) => {
                if !s.writable() {
                    s.writers.push(t);
                    self.block_on_channel(cpu, t);
                    return false;
                }
                s.write(*n);
                s.origins.push(*n, cpu);
                // sock_def_readable: every sleeping reader.
                std::mem::swap(&mut s.readers, &mut self.prog.wake_scratch);
                wake_all = true;
            }
        }
        self.sched.tasks[t.idx()].chan_waited = false;
        for w in wake.into_iter().flatten() {
            self.try_to_wake_up(w, cpu, true, true);
        }
        if wake_all {
            self.wake_swapped_list(cpu);
        }
        true
    }

    /// The effect of one paid `read()` on channel `ch`: false when it is
    /// empty and the reader went to sleep on it.
    fn chan_read(&mut self, cpu: CpuId, t: TaskId, ch: usize) -> bool {
        self.with_fold_on_chan(t, ch, true, |s| s.chan_read_now(cpu, t, ch))
    }

    /// `chan_read` without the pending fold's bookkeeping.
    pub(crate) fn chan_read_now(&mut self, cpu: CpuId, t: TaskId, ch: usize) -> bool {
        self.chan_touch(ch, cpu);
        let rule = self.prog.pipe_writer_wake;
        let waited = self.sched.tasks[t.idx()].chan_waited;
        let mut wake: [Option<TaskId>; 2] = [None, None];
        let mut wake_all = false;
        match &mut self.prog.channels[ch] {
            ChannelState::Pipe(p, n) => {
                if p.unread() < *n {
                    p.readers.push_back(t);
                    self.block_on_channel(cpu, t);
                    return false;
                }
                // pipe_read: wake a writer if the pipe was full (from 6.14:
                // and the read freed a slot); a reader that had waited
                // wakes the next one if data is left.
                p.origins.take(*n);
                if p.read(*n, rule) {
                    wake[0] = p.writers.pop_front();
                }
                if waited && !p.empty() {
                    wake[1] = p.readers.pop_front();
                }
            }
            ChannelState::Unix(s, n) => {
                if s.queued() == 0 {
                    s.readers.push(t);
                    self.block_on_channel(cpu, t);
                    return false;
                }
                s.origins.take(*n);
                // sock_wfree -> unix_write_space: every sleeping writer,
                // once at most a quarter of the send buffer is in use.
                if s.read() {
                    std::mem::swap(&mut s.writers, &mut self.prog.wake_scratch);
                    wake_all = true;
                }
            }
        }
        self.sched.tasks[t.idx()].chan_waited = false;
        for w in wake.into_iter().flatten() {
            self.try_to_wake_up(w, cpu, true, true);
        }
        if wake_all {
            self.wake_swapped_list(cpu);
        }
        true
    }

    /// Latest time before which the running task's syscall runs can be
    /// fast-forwarded, or `None` when they cannot be.
    ///
    /// Closed form is exact only where nothing observable happens between
    /// the writes (or reads) folded together:
    /// * nobody looks at the channels or this CPU before a landing: the
    ///   fold is kept pending and settled, landing by landing at their own
    ///   times, as soon as someone does (sched/fold.rs); all landings are
    ///   before the run's end;
    /// * the skipped `update_curr` calls would do nothing but add time: a
    ///   fair task whose entities all weigh NICE_0_LOAD (so virtual time
    ///   is wall time, with no rounding to split), with no CPU bandwidth
    ///   limit on its path, and whose vruntime reaches neither its
    ///   deadline nor (with others queued) its protected slice before the
    ///   last intermediate landing (update_deadline / the resched check).
    ///
    /// `span` is the CPU time of the first two syscalls: a fold needs the
    /// second to land before the run's end, tested before the walk up the
    /// task's hierarchy.
    ///
    /// Returns `(start, horizon, sched_limit)`: when the first syscall
    /// starts, the run's end (or `Nanos::MAX`), and the time every
    /// intermediate landing must precede.
    fn fast_forward_window(
        &self,
        cpu: CpuId,
        t: TaskId,
        span: Nanos,
    ) -> Option<(Nanos, Nanos, Nanos)> {
        if !self.cfg.fast_forward || self.sched.class_of(t) != Class::Fair {
            return None;
        }
        let task = &self.sched.tasks[t.idx()];
        // A quota on the task's path refuses at its level of the walk
        // below; that fact is fixed per group, so it is looked up first
        // (quota-512's silent syscalls all end here; found later, each
        // would first load the task's entity and queue).
        if task.throttle_work || self.folds.bw_on_path(&self.sched.groups, task.group) {
            return None;
        }
        let start = self.sched.ents[task.se.idx()].exec_start.max(self.now);
        let horizon = self.end.unwrap_or(Nanos::MAX);
        if start.saturating_add(span) >= horizon {
            return None;
        }
        let mut limit = Nanos::MAX;
        // Up the hierarchy one level at a time: in a task group the first
        // levels usually refuse (a quota, a group weight), and the rest of
        // the path is not needed.
        let mut next = Some(task.se);
        while let Some(se) = next {
            next = self.sched.se_parent(se);
            let e = &self.sched.ents[se.idx()];
            let q = self.sched.se_cfs_rq(se);
            let cfs = &self.sched.cfs[q.idx()];
            if e.weight != NICE_0_LOAD || cfs.bw.enabled || cfs.curr != Some(se) {
                return None;
            }
            let mut room = e.deadline - e.vruntime;
            if cfs.nr_queued > 1 {
                room = room.min(e.vprot - e.vruntime);
            }
            if room <= 0 {
                return None;
            }
            limit = limit.min(e.exec_start + room as Nanos);
        }
        let _ = cpu;
        Some((start, horizon, limit))
    }

    /// Messages waiting in channel `ch`, and whether no writer sleeps on
    /// it (then a read wakes nobody).
    pub(crate) fn chan_avail(&self, ch: usize) -> (u64, bool) {
        match &self.prog.channels[ch] {
            ChannelState::Pipe(p, n) => (p.unread() / *n, p.writers.is_empty()),
            ChannelState::Unix(s, _) => (s.queued(), s.writers.is_empty()),
        }
    }

    /// Is a `write()` to channel `ch` silent now: it finds room and wakes
    /// nobody (no reader sleeps on the channel)?
    pub(crate) fn silent_write(&self, ch: usize) -> bool {
        match &self.prog.channels[ch] {
            ChannelState::Pipe(p, n) => p.writable(*n) && p.readers.is_empty(),
            ChannelState::Unix(s, _) => s.writable() && s.readers.is_empty(),
        }
    }

    /// How many writes of the round to pay for now, and their CPU time.
    /// One, message by message; more when the fast-forward window
    /// (`fast_forward_window`) holds them and every write but the last
    /// is silent: it finds room and wakes nobody. The last may sleep or
    /// wake: it lands at the end of the paid time, as it would alone.
    ///
    /// The conditions a fold of two needs (a second write in the round,
    /// a silent first one on a channel no other fold holds, both landing
    /// before the run's end) are tested first, cheapest first. The fold
    /// stops before a channel another pending fold holds (`fold_claimed`).
    /// The landings are left in `folds.buf` for `fold_begin`.
    fn writes_to_pay(
        &mut self,
        cpu: CpuId,
        t: TaskId,
        first: u32,
        pos: u32,
        count: u32,
    ) -> (u64, Nanos) {
        let ch0 = (first + pos) as usize;
        let start = self.call_start(t);
        let l0 = self.fold_settle_chan(ch0, t, start, |s| s.chan_price(ch0, true, cpu, start));
        let mut land = std::mem::take(&mut self.folds.buf);
        land.clear();
        land.push(l0);
        self.folds.buf = land;
        if pos + 1 >= count || self.fold_claimed(ch0) || !self.silent_write(ch0) {
            return (1, l0.cost);
        }
        let ch1 = (first + pos + 1) as usize;
        if self.fold_used_before(ch1, t, l0.at) {
            return (1, l0.cost);
        }
        let c1 = self.chan_price(ch1, true, cpu, l0.at).cost;
        let Some((start, horizon, limit)) = self.fast_forward_window(cpu, t, l0.cost + c1) else {
            return (1, l0.cost);
        };
        let mut land = std::mem::take(&mut self.folds.buf);
        land.clear();
        let mut work = 0;
        for j in pos..count {
            let ch = (first + j) as usize;
            // Not past another task's known use of the channel (the fold
            // horizon, sched/fold.rs): tested before the call is priced.
            if !land.is_empty() && self.fold_used_before(ch, t, start + work) {
                break;
            }
            let l = self.chan_price(ch, true, cpu, start + work);
            let c = l.cost;
            if !land.is_empty()
                && (start + work + c >= horizon || start + work >= limit || self.fold_claimed(ch))
            {
                break;
            }
            work += c;
            land.push(l);
            if !self.silent_write(ch) {
                break;
            }
        }
        let k = land.len() as u64;
        self.folds.buf = land;
        (k, work)
    }

    /// When a call the running task `t` pays for now starts (as
    /// `arm_burst` starts its burst).
    fn call_start(&self, t: TaskId) -> Nanos {
        let se = self.sched.tasks[t.idx()].se;
        self.sched.ents[se.idx()].exec_start.max(self.now)
    }

    /// Does another task's pending fold have a landing on channel `ch`?
    /// A fold does not take a channel another fold holds: it would split
    /// that fold (sched/fold.rs), and the two would split each other in
    /// turn.
    fn fold_claimed(&self, ch: usize) -> bool {
        self.folds.active > 0 && self.folds.chan[ch].is_some()
    }

    /// How many of the `left` reads from `ch` to pay for now (as
    /// `writes_to_pay`): silent reads find a message and wake nobody
    /// (no writer sleeps on the channel).
    fn reads_to_pay(&mut self, cpu: CpuId, t: TaskId, ch: usize, left: u64) -> (u64, Nanos) {
        // The first read may find the channel's lines on another CPU and
        // its lock held; after it, this CPU holds the lines, and the lock,
        // which nobody else takes while the fold is pending (another
        // party's call on the channel splits it first, sched/fold.rs), is
        // free when each next read starts (a hold is never longer than its
        // call) until a call decided earlier starts (the fence below). A
        // round's writes go to distinct channels, so `writes_to_pay` needs
        // no such split.
        let start = self.call_start(t);
        let l1 = self.fold_settle_chan(ch, t, start, |s| s.chan_price(ch, false, cpu, start));
        let c1 = l1.cost;
        let mut land = std::mem::take(&mut self.folds.buf);
        land.clear();
        land.push(l1);
        self.folds.buf = land;
        if left < 2 || self.fold_claimed(ch) {
            return (1, c1);
        }
        let (c, kind, _) = self.chan_call(ch, false);
        let (avail, quiet) = self.chan_avail(ch);
        if !quiet || avail == 0 {
            return (1, c1);
        }
        // Each read after the first finds the shared state on this CPU and
        // pays for its own message's lines, from the CPU that wrote it. The
        // writers of the next reads are walked one read at a time, as far
        // as the fold goes (often one step: most folds stop early).
        let size = self.chan_next_msg(ch).1;
        let want = avail.min(left);
        let mut cur = self.chan_origins(ch).reads();
        // Read 1's message, priced above.
        let _ = self.chan_origins(ch).next_read(&mut cur, size);
        // Read j (2-based, j <= want) at the walk's position: its writing
        // CPU, if one is queued.
        let next_from = |s: &Self, cur: &mut super::msg_origin::ReadCursor, j: u64| {
            if j <= want {
                s.chan_origins(ch).next_read(cur, size)
            } else {
                None
            }
        };
        let read = |s: &Self, from: Option<CpuId>| -> (Nanos, Nanos, Nanos) {
            // Cost, message part, its part under the lock.
            match from {
                Some(from) => {
                    let (x, held) = s.msg_cost(kind, from, cpu);
                    (c + x, x, held)
                }
                None => (c, 0, 0),
            }
        };
        let mut from = next_from(self, &mut cur, 2);
        let Some((start, horizon, limit)) =
            self.fast_forward_window(cpu, t, c1 + read(self, from).0)
        else {
            return (1, c1);
        };
        // Reads 1..=avail find a message. Read avail + 1 would find none
        // (and sleep) unless a writer queues one before it starts, and
        // then it pays for that message's lines: it is left out, to be
        // priced at its start. Read k + 1 starts when read k
        // lands: before another task's known use of the channel (the fold
        // horizon, sched/fold.rs), and before the next call on the channel
        // decided ahead of its start (a writer still paying scheduler
        // work, sched/chan_lock.rs): from then on a read may queue behind
        // it. It must land before the run's end.
        let used = self.folds.soon[ch].first_other(self.now, t);
        let fence = self.chan_lock(ch).next_arrival_after(start);
        let hold = self.sys.in_lock[kind];
        let mut land = std::mem::take(&mut self.folds.buf);
        let mut k = 1u64;
        let mut end = start + c1;
        while k < left.min(avail) {
            // `from`: read k + 1's writer.
            let (ck, msg, held) = read(self, from);
            if end + ck >= horizon || end >= limit || end >= used || end >= fence {
                break;
            }
            k += 1;
            from = next_from(self, &mut cur, k + 1);
            end += ck;
            land.push(Landing {
                at: end,
                cost: ck,
                chan: ch as u32,
                wait: 0,
                hold: hold + held,
                msg,
            });
        }
        self.folds.buf = land;
        (k, end - start)
    }

    /// The running task spends `work` of CPU time in `n` syscalls, then
    /// carries on with its current op (which applies their effects).
    pub(crate) fn pay(&mut self, cpu: CpuId, t: TaskId, n: u64, work: Nanos) {
        // Entering the kernel from user space: a pending throttle task_work
        // ran on the way out of the previous syscall.
        if self.sched.tasks[t.idx()].throttle_work {
            let task = &mut self.sched.tasks[t.idx()];
            task.resume = Resume::Continue;
            task.work_left = 0;
            task.paid = 0;
            if self.throttle_task_work(cpu, t) {
                return;
            }
        }
        let task = &mut self.sched.tasks[t.idx()];
        task.work_left = work;
        task.paid = n;
        task.resume = Resume::Continue;
        self.arm_burst(cpu);
    }

    /// Blocks the running task on a channel (no timer); a channel operation
    /// wakes it and it retries its op.
    fn block_on_channel(&mut self, cpu: CpuId, t: TaskId) {
        let task = &mut self.sched.tasks[t.idx()];
        task.resume = Resume::Continue;
        task.wake_expiry = None;
        task.wake_is_timer = false;
        task.chan_waited = true;
        task.chan_retry = ChanRetry::SleepPath;
        self.dequeue_task(t, true);
        self.sched.tasks[t.idx()].state = TaskState::Sleeping;
        self.schedule(cpu, PrevState::Sleeping);
    }
}

impl<S: Sink> Sim<S> {
    /// Runs a synchronisation op (rt-app's pthread-based events) in the
    /// task's context; returns true when the task blocked (it re-enters the
    /// op when woken, at the stage `sync_stage` recorded).
    ///
    /// Mutexes hand ownership to the first waiter on unlock (no stealing);
    /// condition-variable waiters re-take the mutex after waking; barriers
    /// count arrivals and the last one wakes the rest; semaphores remember
    /// posts. All wakeups are from task context on this CPU.
    fn sync_op(&mut self, cpu: CpuId, t: TaskId, op: &Op) -> bool {
        match *op {
            Op::Lock { mutex } => self.mutex_lock(cpu, t, mutex),
            Op::Unlock { mutex } => {
                self.mutex_unlock(cpu, t, mutex);
                false
            }
            Op::Signal { cond, all } => {
                self.cond_signal(cpu, cond, all);
                false
            }
            Op::Wait { cond, mutex } => self.cond_wait(cpu, t, cond, mutex, 0),
            Op::Sync { cond, mutex } => {
                if self.sched.tasks[t.idx()].sync_stage == 0 {
                    self.cond_signal(cpu, cond, false);
                }
                self.cond_wait(cpu, t, cond, mutex, 0)
            }
            Op::Suspend { cond, mutex } => {
                // lock(m); wait(c, m); unlock(m)
                if self.sched.tasks[t.idx()].sync_stage < 10 {
                    if self.mutex_lock(cpu, t, mutex) {
                        return true;
                    }
                    self.sched.tasks[t.idx()].sync_stage = 10;
                }
                if self.cond_wait(cpu, t, cond, mutex, 10) {
                    return true;
                }
                self.mutex_unlock(cpu, t, mutex);
                false
            }
            Op::Resume { cond, mutex } => {
                // lock(m); broadcast(c); unlock(m)
                if self.mutex_lock(cpu, t, mutex) {
                    return true;
                }
                self.cond_signal(cpu, cond, true);
                self.mutex_unlock(cpu, t, mutex);
                false
            }
            Op::Barrier { barrier } => {
                let task = &mut self.sched.tasks[t.idx()];
                if task.sync_stage == 1 {
                    return false; // released
                }
                let Some(waiters) = self.prog.barriers[barrier as usize].arrive(t) else {
                    task.sync_stage = 1;
                    self.block_sync(cpu, t);
                    return true;
                };
                for w in waiters.into_iter().filter(|&w| w != t) {
                    self.try_to_wake_up(w, cpu, true, false);
                }
                false
            }
            Op::SemPost { sem } => {
                // glibc: the value goes up and one waiter is woken; the
                // token is not reserved for it, so a thread that reaches
                // sem_wait first takes it (the waiter then waits again).
                if let Some(w) = self.prog.sems[sem as usize].post() {
                    self.try_to_wake_up(w, cpu, true, false);
                }
                false
            }
            Op::SemSend { sem, reply } => {
                // The same post; the token carries its reply address.
                if let Some(w) = self.prog.sems[sem as usize].send(reply) {
                    self.try_to_wake_up(w, cpu, true, false);
                }
                false
            }
            Op::SemReply => {
                let sem = self
                    .prog
                    .reply_address(t)
                    .expect("SemReply after taking an addressed token (check_addressed_sems, the generators)");
                if let Some(w) = self.prog.sems[sem as usize].post() {
                    self.try_to_wake_up(w, cpu, true, false);
                }
                false
            }
            Op::SemWait { sem } if self.prog.sem_waits_sleep => {
                // Stage 0: sleep. With a post held for it, the held wakeup
                // comes as it sleeps (stage 2, token taken); else it waits
                // for the post (stage 1) and the retry takes the token.
                let stage = self.sched.tasks[t.idx()].sync_stage;
                if stage == 2 {
                    return false;
                }
                if stage == 1 {
                    let took = self.prog.sems[sem as usize].wait(t);
                    debug_assert!(took, "a woken waiter finds its post");
                    if took {
                        self.prog.took_token(sem, t);
                    }
                    return !took;
                }
                let s = &mut self.prog.sems[sem as usize];
                let held = s.count > 0;
                if held {
                    s.count -= 1;
                    self.prog.took_token(sem, t);
                } else {
                    s.waiters.push_back(t);
                }
                self.sched.tasks[t.idx()].sync_stage = if held { 2 } else { 1 };
                self.block_sync(cpu, t);
                if held {
                    self.try_to_wake_up(t, cpu, false, false);
                }
                true
            }
            Op::SemWait { sem } => {
                // Also the retry of a woken waiter.
                if self.prog.sems[sem as usize].wait(t) {
                    self.prog.took_token(sem, t);
                    return false;
                }
                self.block_sync(cpu, t);
                true
            }
            _ => false,
        }
    }

    /// CPU time of one attempt at a synchronisation op, from the state it
    /// finds (`sched/syscall_cost.rs`): each pthread call costs its
    /// uncontended libc path, plus one futex syscall when it must sleep or
    /// wake a waiter. A glibc barrier always sleeps or wakes by futex.
    fn sync_cost(&self, t: TaskId, op: &Op) -> Nanos {
        let c = &self.sys;
        let stage = self.sched.tasks[t.idx()].sync_stage;
        let lock = |m: u32| {
            let st = &self.prog.mutexes[m as usize];
            c.mutex
                + if st.owner.is_none() || st.owner == Some(t) {
                    0
                } else {
                    c.futex
                }
        };
        let unlock = |m: u32| {
            c.mutex
                + if self.prog.mutexes[m as usize].waiters.is_empty() {
                    0
                } else {
                    c.futex
                }
        };
        let signal = |cv: u32| {
            c.cond
                + if self.prog.conds[cv as usize].is_empty() {
                    0
                } else {
                    c.futex
                }
        };
        // pthread_cond_wait: release the mutex and sleep (stage `base`),
        // or take the mutex back once woken.
        let wait = |m: u32, base: u8| {
            if stage <= base {
                unlock(m) + c.futex
            } else {
                lock(m)
            }
        };
        match *op {
            Op::Lock { mutex } => lock(mutex),
            Op::Unlock { mutex } => unlock(mutex),
            Op::Signal { cond, .. } => signal(cond),
            Op::Wait { mutex, .. } => wait(mutex, 0),
            Op::Sync { cond, mutex } => {
                if stage == 0 {
                    signal(cond) + wait(mutex, 0)
                } else {
                    wait(mutex, 0)
                }
            }
            Op::Suspend { mutex, .. } => {
                if stage < 10 {
                    // lock, then the wait's unlock and futex sleep
                    lock(mutex) + c.mutex + c.futex
                } else {
                    wait(mutex, 10) + if stage > 10 { unlock(mutex) } else { 0 }
                }
            }
            Op::Resume { cond, mutex } => lock(mutex) + signal(cond) + unlock(mutex),
            Op::Barrier { .. } => c.mutex + c.futex,
            Op::SemPost { .. } | Op::SemWait { .. } | Op::SemSend { .. } | Op::SemReply
                if self.prog.sem_waits_sleep =>
            {
                // A replayed dependency (`Workload::sem_waits_sleep`): the
                // calls it stands for are in the traced runs already.
                crate::program::REPLAYED_SYNC_OP_NS
            }
            Op::SemPost { sem } | Op::SemSend { sem, .. } => {
                c.sem
                    + if self.prog.sems[sem as usize].waiters.is_empty() {
                        0
                    } else {
                        c.futex
                    }
            }
            Op::SemReply => match self.prog.reply_address(t) {
                Some(sem) if !self.prog.sems[sem as usize].waiters.is_empty() => c.sem + c.futex,
                _ => c.sem,
            },
            Op::SemWait { sem } => {
                c.sem
                    + if self.prog.sems[sem as usize].count > 0 {
                        0
                    } else {
                        c.futex
                    }
            }
            _ => 0,
        }
    }

    /// Takes `mutex` for `t`; true if it had to block. The op is retried
    /// when the task is woken: with PI mutexes the unlocker has handed it
    /// over (FUTEX_UNLOCK_PI), so the retry finds it owned; with glibc's
    /// normal mutexes the woken waiter competes again and a running thread
    /// that locks first takes it (barging), sending the waiter back to the
    /// end of the queue.
    fn mutex_lock(&mut self, cpu: CpuId, t: TaskId, mutex: u32) -> bool {
        match self.prog.mutex_lock(mutex as usize, t) {
            Ok(()) => false,
            Err(owner) => {
                if self.prog.pi_mutexes {
                    // rt_mutex: waiters by priority (FIFO among equals), and
                    // the owner inherits the top waiter's priority.
                    let prio = |s: &Self, x: TaskId| s.sched.tasks[x.idx()].prio;
                    let mut w: Vec<TaskId> = self.prog.mutexes[mutex as usize]
                        .waiters
                        .drain(..)
                        .collect();
                    w.sort_by_key(|&x| prio(self, x));
                    self.prog.mutexes[mutex as usize].waiters = w.into();
                    self.pi_adjust_chain(owner, cpu);
                }
                self.block_sync(cpu, t);
                true
            }
        }
    }

    fn mutex_unlock(&mut self, cpu: CpuId, t: TaskId, mutex: u32) {
        let pi = self.prog.pi_mutexes;
        let Some(next) = self.prog.mutex_unlock(mutex as usize, t, pi) else {
            return; // unlocking a mutex one does not hold: rt-app's bug, ignored
        };
        if self.prog.pi_mutexes {
            // The releaser drops what it inherited through this mutex; the
            // new owner inherits from the waiters left.
            self.pi_adjust_chain(t, cpu);
            if let Some(w) = next {
                self.pi_adjust_chain(w, cpu);
            }
        }
        if let Some(w) = next {
            self.try_to_wake_up(w, cpu, true, false);
        }
    }

    fn cond_signal(&mut self, cpu: CpuId, cond: u32, all: bool) {
        for w in self.prog.cond_signal(cond, all) {
            self.try_to_wake_up(w, cpu, true, false);
        }
    }

    /// `pthread_cond_wait`: stages base+0 release and wait, base+1 woken
    /// (take the mutex back), base+2 done. True while blocked.
    fn cond_wait(&mut self, cpu: CpuId, t: TaskId, cond: u32, mutex: u32, base: u8) -> bool {
        let stage = self.sched.tasks[t.idx()].sync_stage;
        if stage <= base {
            self.mutex_unlock(cpu, t, mutex);
            self.prog.conds[cond as usize].push_back(t);
            self.sched.tasks[t.idx()].sync_stage = base + 1;
            self.block_sync(cpu, t);
            return true;
        }
        if stage == base + 1 {
            self.sched.tasks[t.idx()].sync_stage = base + 2;
        }
        // Stage base+2: (re)take the mutex until it is ours.
        self.mutex_lock(cpu, t, mutex)
    }

    pub(crate) fn block_sync(&mut self, cpu: CpuId, t: TaskId) {
        let task = &mut self.sched.tasks[t.idx()];
        task.resume = Resume::Continue;
        task.wake_expiry = None;
        task.wake_is_timer = false;
        task.work_left = 0;
        self.dequeue_task(t, true);
        self.sched.tasks[t.idx()].state = TaskState::Sleeping;
        self.schedule(cpu, PrevState::Sleeping);
    }
}

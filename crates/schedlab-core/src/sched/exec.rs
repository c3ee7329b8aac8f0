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
use crate::fair::weight::task_weight;
use crate::ids::{CpuId, TaskId};
use crate::machine::CpuMask;
use crate::observe::{PrevState, Sink};
use crate::program::{Op, FTRACE_EVENT, FTRACE_LOOP, FTRACE_MAIN, FTRACE_STATS, FTRACE_TASK};
use crate::rq::Class;
use crate::sim::Sim;
use crate::stats::LogRow;
use crate::task::{Iteration, Resume, TaskState};
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

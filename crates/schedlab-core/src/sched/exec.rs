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
        self.update_curr_task(cpu);
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
        task.resume == Resume::Continue && task.chan_budget > 0 && task.work_left > 0
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
            task.log.push(row);
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
                | Op::SemWait { .. } => {
                    if fresh {
                        self.sched.tasks[t.idx()].sync_stage = 0;
                    }
                    if self.sync_op(cpu, t, &op) {
                        return; // blocked
                    }
                    self.op_done(t);
                }
                Op::Send { first, count } => {
                    if fresh {
                        self.sched.tasks[t.idx()].chan_pos = 0;
                        self.sched.tasks[t.idx()].chan_budget = 0;
                    }
                    if self.channel_send(cpu, t, first, count) {
                        return; // paying for the writes, or blocked
                    }
                    self.op_done(t);
                }
                Op::Recv { chan, msgs } => {
                    if fresh {
                        self.sched.tasks[t.idx()].chan_pos = msgs;
                        self.sched.tasks[t.idx()].chan_budget = 0;
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
    fn block(&mut self, cpu: CpuId, t: TaskId, expiry: Nanos, is_timer: bool, resume: Resume) {
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
        self.sched.tasks[t.idx()].cpus_allowed = mask.clone();
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

/// Most messages a reader takes from a channel in one step (it pays for
/// each read before taking the next batch, so writers see space freed in
/// step with the reader's progress).
const RECV_BATCH: u64 = 20;

impl<S: Sink> Sim<S> {
    /// One round of writes (`Op::Send`): one message to each channel from
    /// the task's position on. Writes are paid for (`pipe_msg_ns` of the
    /// writer's CPU time each) before they take effect, in runs that end at
    /// the first write that will wake a sleeping reader or find the channel
    /// full; a write to a full channel blocks until the reader frees space;
    /// a write to a channel whose reader sleeps wakes it (a sync wakeup from
    /// task context). Returns true when the task stopped (paying or
    /// blocked), false when the round is complete.
    fn channel_send(&mut self, cpu: CpuId, t: TaskId, first: u32, count: u32) -> bool {
        let cost = self.machine.costs.pipe_msg_ns;
        loop {
            let pos = self.sched.tasks[t.idx()].chan_pos as u32;
            if pos >= count {
                return false;
            }
            if self.sched.tasks[t.idx()].chan_budget == 0 {
                let k = self.prog.writes_in_one_go(first, pos, count);
                self.pay(cpu, t, k.max(1), cost);
                return true;
            }
            let ch = (first + pos) as usize;
            let Ok(reader) = self.prog.channels[ch].send(t) else {
                self.block_on_channel(cpu, t);
                return true;
            };
            let task = &mut self.sched.tasks[t.idx()];
            task.chan_pos += 1;
            task.chan_budget -= 1;
            if let Some(r) = reader {
                self.try_to_wake_up(r, cpu, true, true);
            }
        }
    }

    /// Reading (`Op::Recv`): pay for up to [`RECV_BATCH`] of the messages
    /// waiting, then take them and wake the writers waiting for space; block
    /// while the channel is empty. Returns true when the task stopped.
    fn channel_recv(&mut self, cpu: CpuId, t: TaskId, chan: u32) -> bool {
        let left = self.sched.tasks[t.idx()].chan_pos;
        if left == 0 {
            return false;
        }
        let budget = self.sched.tasks[t.idx()].chan_budget;
        let c = &mut self.prog.channels[chan as usize];
        if budget == 0 {
            if c.msgs == 0 {
                c.reader = Some(t);
                self.block_on_channel(cpu, t);
                return true;
            }
            let k = c.msgs.min(left).min(RECV_BATCH);
            self.pay(cpu, t, k, self.machine.costs.pipe_msg_ns);
            return true;
        }
        let (k, writers) = c.recv(budget);
        let task = &mut self.sched.tasks[t.idx()];
        task.chan_pos -= k;
        task.chan_budget = 0;
        for w in writers {
            self.try_to_wake_up(w, cpu, true, true);
        }
        self.channel_recv(cpu, t, chan)
    }

    /// The running task spends `n × per_op` of CPU time in syscalls (n
    /// channel operations paid for), then carries on with its current op.
    fn pay(&mut self, cpu: CpuId, t: TaskId, n: u64, per_op: Nanos) {
        // Entering the kernel from user space: a pending throttle task_work
        // ran on the way out of the previous syscall.
        if self.sched.tasks[t.idx()].throttle_work {
            let task = &mut self.sched.tasks[t.idx()];
            task.resume = Resume::Continue;
            task.work_left = 0;
            task.chan_budget = 0;
            if self.throttle_task_work(cpu, t) {
                return;
            }
        }
        let task = &mut self.sched.tasks[t.idx()];
        task.work_left = n * per_op;
        task.chan_budget = n;
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
            Op::SemWait { sem } => {
                // Also the retry of a woken waiter.
                if self.prog.sems[sem as usize].wait(t) {
                    return false;
                }
                self.block_sync(cpu, t);
                true
            }
            _ => false,
        }
    }

    /// Takes `mutex` for `t`; true if it had to block. The op is retried
    /// when the task is woken: with PI mutexes the unlocker has handed it
    /// over (FUTEX_UNLOCK_PI), so the retry finds it owned; with glibc's
    /// normal mutexes the woken waiter competes again and a running thread
    /// that locks first takes it (barging), sending the waiter back to the
    /// end of the queue.
    fn mutex_lock(&mut self, cpu: CpuId, t: TaskId, mutex: u32) -> bool {
        match self.prog.mutexes[mutex as usize].lock(t) {
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
        let Some(next) = self.prog.mutexes[mutex as usize].unlock(t, pi) else {
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

    fn block_sync(&mut self, cpu: CpuId, t: TaskId) {
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

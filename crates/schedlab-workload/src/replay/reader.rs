//! Reading the trace: each line into the per-task activations and the
//! per-CPU state the lowering works from.

use super::*;

impl<'a> Reader<'a> {
    pub(super) fn err(&self, kind: ReplayErrorKind, msg: String) -> ReplayError {
        ReplayError {
            file: self.file.to_string(),
            line: self.line,
            kind,
            msg,
        }
    }

    fn task(&mut self, pid: u32) -> &mut TaskTrace {
        if !self.tasks.contains_key(&pid) {
            self.order.push(pid);
        }
        self.tasks.entry(pid).or_insert_with(|| TaskTrace::new(pid))
    }

    /// Notes the comm and prio a payload gives a task.
    fn name_task(&mut self, pid: u32, comm: &str, prio: i32) {
        if pid == 0 {
            return;
        }
        let t = self.task(pid);
        if !comm.is_empty() && comm != "<...>" {
            t.comm = comm.to_string();
        }
        if t.prio.is_none() {
            t.prio = Some(prio);
        }
    }

    /// `pid` stops running at `at`; `sleeps` ends its activation.
    fn switch_out(&mut self, pid: u32, at: Nanos, state: State) {
        if pid == 0 {
            return;
        }
        let t = self.tasks.entry(pid).or_insert_with(|| TaskTrace::new(pid));
        if let Some((cpu, since)) = t.running.take() {
            let c = self
                .cpus
                .get_mut(&cpu)
                .expect("a running task's CPU is known");
            let ovh = c.overhead(since, at);
            c.windows.retain(|w| w.1 > at);
            if let Some(a) = t.cur.as_mut() {
                a.cpu_ns += at.saturating_sub(since).saturating_sub(ovh);
            }
        }
        t.state = state;
        if state != State::Runnable {
            if let Some(a) = t.cur.take() {
                t.done.push(a.closed(self.opts.runtime_lines_complete));
            }
            t.pending = None;
        }
    }

    /// `pid` becomes current on `cpu` at `at`.
    fn switch_in(&mut self, pid: u32, cpu: u32, at: Nanos) -> Result<(), ReplayError> {
        if pid == 0 {
            return Ok(());
        }
        let t = self.task(pid);
        if let Some((other, _)) = t.running {
            if other != cpu {
                let msg = format!(
                    "pid {pid} ({}) runs on CPU {cpu} while it is still running on CPU {other} (no switch away from it there)",
                    t.comm
                );
                return Err(self.err(ReplayErrorKind::TwoCpus, msg));
            }
            return Ok(());
        }
        t.running = Some((cpu, at));
        t.first_run.get_or_insert(at);
        if t.cur.is_none() {
            let cause = t
                .pending
                .take()
                .unwrap_or(Cause::Timed { at, woken: false });
            t.cur = Some(Activation {
                cause,
                cpu_ns: 0,
                stat_ns: 0,
                marks: Vec::new(),
            });
        }
        t.state = State::Running;
        Ok(())
    }

    /// A mark in `pid`'s running activation at time `at`; false if it is not
    /// running.
    fn mark(&mut self, pid: u32, at: Nanos, m: Mark) -> bool {
        let Some(t) = self.tasks.get_mut(&pid) else {
            return false;
        };
        let (Some((cpu, since)), Some(a)) = (t.running, t.cur.as_mut()) else {
            return false;
        };
        let ovh = self.cpus.get(&cpu).map_or(0, |c| c.overhead(since, at));
        let off = a.cpu_ns + at.saturating_sub(since).saturating_sub(ovh);
        a.marks.push((off, m));
        true
    }

    /// A wakeup of `pid` at `at`; `waker` is the context task when it may
    /// be the waker.
    /// `early` (a timed wakeup only) is how long before `at` the timer
    /// expired, as far as the trace tells (see [`ReplayOptions::idle_exit_ns`]).
    fn wake(&mut self, pid: u32, at: Nanos, waker: Option<u32>, count_ignored: bool, early: Nanos) {
        if pid == 0 {
            return;
        }
        let t = self.task(pid);
        match t.state {
            State::Sleeping | State::Fresh if t.pending.is_none() => {}
            State::Sleeping | State::Fresh => return, // sched_wakeup after sched_waking
            _ => {
                if count_ignored {
                    self.report.ignored_wakeups += 1;
                }
                return;
            }
        }
        t.woken_at = Some(at);
        let waker = waker.filter(|&w| w != 0 && w != pid);
        match waker {
            Some(w) => {
                self.tasks.get_mut(&pid).expect("just made").pending =
                    Some(Cause::Dep { waker: w, at });
                if !self.mark(w, at, Mark::Post(pid)) {
                    // The context task is not known to run: treat as timed.
                    self.tasks.get_mut(&pid).expect("just made").pending =
                        Some(Cause::Timed { at, woken: true });
                }
            }
            None => {
                t.pending = Some(Cause::Timed {
                    at: at.saturating_sub(early),
                    woken: true,
                })
            }
        }
        // A woken task is runnable, not fresh.
        let t = self.tasks.get_mut(&pid).expect("just made");
        t.state = State::Sleeping;
    }

    pub(super) fn record(&mut self, r: &OwnedRecord) -> Result<(), ReplayError> {
        let t = r.time_ns;
        self.report.lines += 1;
        if self.first_ns.is_none() {
            self.first_ns = Some(t);
        }
        self.last_ns = self.last_ns.max(t);
        let cpu = r.cpu;
        // Per-CPU clock.
        let prev = self.cpus.get(&cpu).map(|c| (c.last_ns, c.current));
        if let Some((last_ns, _)) = prev {
            if t < last_ns {
                return Err(self.err(
                    ReplayErrorKind::TimeBackwards,
                    format!(
                        "time goes backwards on CPU {cpu}: {} after {} on the same CPU",
                        fmt_secs_us(t),
                        fmt_secs_us(last_ns)
                    ),
                ));
            }
        }
        // The context column: the CPU's current task.
        if r.ctx_pid != 0 {
            let comm = r.ctx_comm.clone();
            let ctx_task = self.task(r.ctx_pid);
            if !comm.is_empty() && comm != "<...>" && ctx_task.comm.is_empty() {
                ctx_task.comm = comm;
            }
        }
        match prev {
            None => {
                self.cpus.insert(
                    cpu,
                    CpuState {
                        last_ns: t,
                        current: r.ctx_pid,
                        ..Default::default()
                    },
                );
                self.switch_in(r.ctx_pid, cpu, t)?;
            }
            Some((last_ns, current)) if current != r.ctx_pid => {
                self.report.inferred_switches += 1;
                self.switch_out(current, last_ns, State::Sleeping);
                let woke = self.tasks.get(&r.ctx_pid).and_then(|x| x.woken_at);
                let start = woke.map_or(last_ns, |w| w.clamp(last_ns, t));
                self.switch_in(r.ctx_pid, cpu, start)?;
                self.cpus.get_mut(&cpu).expect("seen").current = r.ctx_pid;
            }
            Some(_) => {}
        }
        let irq = interrupt_context(&r.flags);
        let ctx_waker = (!irq && r.ctx_pid != 0).then_some(r.ctx_pid);
        // A wakeup handled by the interrupt that made this CPU leave an
        // idle state (its lines follow the exit line at the same time, in
        // idle context): that state's exit latency late.
        let c = self.cpus.get_mut(&cpu).expect("seen");
        let early = match c.idle_exit {
            Some((at, state)) if at == t && r.ctx_pid == 0 => {
                if irq {
                    self.opts.idle_exit_ns.get(state).copied().unwrap_or(0)
                } else {
                    0
                }
            }
            _ => {
                c.idle_exit = None;
                0
            }
        };
        match &r.event {
            OwnedEvent::SchedSwitch {
                prev,
                prev_state,
                next,
            } => {
                self.report.events_used += 1;
                if prev.pid != r.ctx_pid {
                    return Err(self.err(
                        ReplayErrorKind::BrokenLine,
                        format!(
                            "sched_switch: prev_pid={} but the line's context pid is {}",
                            prev.pid, r.ctx_pid
                        ),
                    ));
                }
                self.name_task(prev.pid, &prev.comm, prev.prio);
                self.name_task(next.pid, &next.comm, next.prio);
                let state = match prev_state.trim_end_matches('+') {
                    "R" => State::Runnable,
                    s if s.starts_with('Z') || s.starts_with('X') => State::Dead,
                    _ => State::Sleeping,
                };
                self.switch_out(prev.pid, t, state);
                self.switch_in(next.pid, cpu, t)?;
                let cost = self.opts.switch_cost_ns;
                let c = self.cpus.get_mut(&cpu).expect("seen");
                c.current = next.pid;
                c.charge(t, cost);
            }
            OwnedEvent::SchedWaking { task, .. } => {
                self.report.events_used += 1;
                self.name_task(task.pid, &task.comm, task.prio);
                self.wake(task.pid, t, ctx_waker, true, early);
                let cost = self.opts.wakeup_cost_ns;
                self.cpus.get_mut(&cpu).expect("seen").charge(t, cost);
            }
            OwnedEvent::SchedWakeup { task, .. } => {
                self.report.events_used += 1;
                self.name_task(task.pid, &task.comm, task.prio);
                // Only when no sched_waking was seen for this sleep (the
                // wake() call ignores a second wakeup of the same sleep).
                self.wake(task.pid, t, ctx_waker, false, early);
            }
            OwnedEvent::SchedWakeupNew { task, .. } => {
                self.report.events_used += 1;
                self.name_task(task.pid, &task.comm, task.prio);
                let parent = self
                    .tasks
                    .get(&task.pid)
                    .and_then(|c| c.fork_parent)
                    .or(ctx_waker)
                    .filter(|&p| p != task.pid);
                let child = self.task(task.pid);
                if child.state == State::Fresh && child.done.is_empty() && child.cur.is_none() {
                    child.woken_at = Some(t);
                    child.state = State::Sleeping;
                    child.pending = Some(Cause::Timed {
                        at: t,
                        woken: false,
                    });
                    if let Some(p) = parent {
                        if self.mark(p, t, Mark::Fork(task.pid)) {
                            self.tasks.get_mut(&task.pid).expect("made").pending =
                                Some(Cause::Forked { parent: p, at: t });
                        }
                    }
                }
            }
            OwnedEvent::SchedMigrateTask { task, .. } => {
                self.report.events_used += 1;
                self.name_task(task.pid, &task.comm, task.prio);
            }
            OwnedEvent::Other { name, payload } => match name.as_str() {
                "sched_process_fork" => {
                    let child = payload_value(payload, "child_pid").and_then(|v| v.parse().ok());
                    let parent = payload_value(payload, "pid").and_then(|v| v.parse().ok());
                    let (Some(child), Some(parent)) = (child, parent) else {
                        return Err(self.err(
                            ReplayErrorKind::BrokenLine,
                            "sched_process_fork: no pid=/child_pid=".into(),
                        ));
                    };
                    self.report.events_used += 1;
                    let comm = payload_value(payload, "child_comm")
                        .unwrap_or("")
                        .to_string();
                    let c = self.task(child);
                    if c.comm.is_empty() {
                        c.comm = comm;
                    }
                    c.fork_parent = Some(parent);
                }
                "sched_process_exit" => {
                    let Some(pid) = payload_value(payload, "pid").and_then(|v| v.parse().ok())
                    else {
                        return Err(self.err(
                            ReplayErrorKind::BrokenLine,
                            "sched_process_exit: no pid=".into(),
                        ));
                    };
                    self.report.events_used += 1;
                    if pid != 0 {
                        self.task(pid).exited = true;
                    }
                }
                "cpu_idle" => {
                    let state = payload_value(payload, "state").and_then(|v| v.parse::<u64>().ok());
                    let Some(state) = state else {
                        return Err(
                            self.err(ReplayErrorKind::BrokenLine, "cpu_idle: no state=".into())
                        );
                    };
                    self.report.events_used += 1;
                    let c = self.cpus.get_mut(&cpu).expect("seen");
                    if state == u64::from(u32::MAX) {
                        // PWR_EVENT_EXIT: the CPU runs again.
                        c.idle_exit = c.idle_state.take().map(|s| (t, s));
                    } else {
                        c.idle_state = usize::try_from(state).ok();
                    }
                }
                "sched_stat_runtime" => {
                    let pid = payload_value(payload, "pid").and_then(|v| v.parse::<u32>().ok());
                    let ns =
                        payload_value(payload, "runtime").and_then(|v| v.parse::<Nanos>().ok());
                    let (Some(pid), Some(ns)) = (pid, ns) else {
                        return Err(self.err(
                            ReplayErrorKind::BrokenLine,
                            "sched_stat_runtime: no pid=/runtime=".into(),
                        ));
                    };
                    // A task cannot run longer than the time that passes:
                    // its runtimes sum to at most the time the trace covers
                    // up to this line plus what it ran unreported before
                    // the first line (`RUNTIME_BEFORE_TRACE_NS`).
                    let covered = t - self.first_ns.unwrap_or(t);
                    let total = self.tasks.get(&pid).map_or(0, |k| k.stat_total_ns);
                    let limit = covered.saturating_add(RUNTIME_BEFORE_TRACE_NS);
                    if total.saturating_add(ns) > limit {
                        return Err(self.err(
                            ReplayErrorKind::BrokenLine,
                            format!(
                                "sched_stat_runtime: runtime={ns} would make pid {pid}'s CPU time {} s, more than the {} s the trace covers up to this line plus 1 s before it: not a real runtime",
                                fmt_secs_us(total.saturating_add(ns)),
                                fmt_secs_us(covered)
                            ),
                        ));
                    }
                    self.report.events_used += 1;
                    if let Some(k) = self.tasks.get_mut(&pid) {
                        k.stat_total_ns += ns;
                        if let Some(a) = k.cur.as_mut() {
                            a.stat_ns += ns;
                        }
                    }
                }
                _ => *self.report.skipped.entry(name.clone()).or_default() += 1,
            },
        }
        self.cpus.get_mut(&cpu).expect("seen").last_ns = t;
        Ok(())
    }

    /// Closes every open activation at its CPU's last line.
    pub(super) fn finish(&mut self) {
        let ends: Vec<(u32, Nanos)> = self
            .tasks
            .values()
            .filter_map(|t| t.running.map(|(c, _)| (t.pid, self.cpus[&c].last_ns)))
            .collect();
        for (pid, at) in ends {
            self.switch_out(pid, at, State::Sleeping);
        }
        // Still running at the trace's end: its last runtime update may
        // not have been traced yet, so the span counts.
        for t in self.tasks.values_mut() {
            if let Some(a) = t.cur.take() {
                t.done.push(a.closed(false));
            }
        }
    }
}

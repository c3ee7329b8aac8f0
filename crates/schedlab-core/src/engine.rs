//! The event loop: pop the earliest event, advance `now`, hand the event
//! to one entry point of `sched/` (`sched_tick`, `try_to_wake_up`'s remote
//! half, the bandwidth and RT/deadline timers, ...), optionally check
//! invariants ([`crate::check`]), and close the accounting at the end.
//! Set-up is in `sched/init.rs`; the engine knows events and time, nothing
//! about EEVDF.

use crate::check;
use crate::event::Event;
use crate::ids::CpuId;
use crate::observe::Sink;
use crate::sim::Violation;
use crate::stats::WASTE_SAMPLE_NS;
use crate::time::Nanos;

use crate::sim::{RunResult, Sim};

impl<S: Sink> Sim<S> {
    /// Runs to the end (duration, or every task finished, or the first
    /// invariant violation with `check`).
    pub fn run(&mut self) -> RunResult {
        self.run_with_progress(|_| {})
    }

    /// [`Sim::run`], calling `progress(now)` every 2^16 events (for a
    /// progress bar; the callback cannot change the run).
    pub fn run_with_progress(&mut self, mut progress: impl FnMut(Nanos)) -> RunResult {
        self.run_while(|now| {
            progress(now);
            true
        })
    }

    /// [`Sim::run_with_progress`] whose callback can stop the run early by
    /// returning false (an output limit reached, for example); the run
    /// then ends there, as if its duration were up. A callback that always
    /// returns true leaves the run exactly as [`Sim::run`].
    pub fn run_while(&mut self, mut progress: impl FnMut(Nanos) -> bool) -> RunResult {
        while let Some(entry) = self.queue.pop_entry() {
            let (t, ev) = crate::event::queue::decode(entry);
            if let Event::BurstEnd { cpu, gen } = ev {
                if self.folds.active + self.folds.phantom_count > 0 {
                    if self.folds.take_phantom(cpu, gen) {
                        // A split fold's event: message by message never
                        // had it (sched/fold.rs).
                        continue;
                    }
                    let f = &self.folds.cpu[cpu.idx()];
                    if f.live && f.gen == gen {
                        self.fold_complete(cpu);
                    }
                }
            }
            if self.events & 0xffff == 0 && !progress(t) {
                break;
            }
            if let Some(e) = self.end {
                if t > e {
                    break;
                }
            }
            if t < self.now {
                // An event scheduled in the past is a model bug.
                self.violation = Some(Violation {
                    time: self.now,
                    event: format!("{ev:?}"),
                    what: format!("event scheduled at {t} ns, before the current time"),
                });
                break;
            }
            self.sample_counters_before(t);
            self.now = t;
            self.events += 1;
            if self.folds.active > 0 {
                self.folds.hw = self.folds.hw.max(entry);
                self.fold_touch_event(ev);
            }
            if ev == Event::End {
                break;
            }
            self.handle(ev);
            if self.cfg.check {
                if let Err(what) = check::check_all(self) {
                    self.violation = Some(Violation {
                        time: t,
                        event: format!("{ev:?}"),
                        what,
                    });
                    break;
                }
            }
            if (self.prog.live_tasks == 0 || self.deadlock) && self.end.is_none() {
                break;
            }
        }
        let end = self.end.unwrap_or(self.now).max(self.now);
        if self.violation.is_none() {
            self.sample_counters_before(end);
            self.now = end;
        }
        self.finish_accounting();
        RunResult {
            end_ns: self.now,
            events: self.events,
            violation: self.violation.clone(),
        }
    }

    /// Splits the pending fold an event is about to look at: any event on
    /// its CPU, and every fold at the end (sched/fold.rs). A fold's own
    /// event completed it before this.
    fn fold_touch_event(&mut self, ev: Event) {
        match ev {
            Event::Tick { cpu, .. }
            | Event::BurstEnd { cpu, .. }
            | Event::Resched { cpu }
            | Event::RemoteWakeup { cpu, .. }
            | Event::NohzIdleBalance { cpu }
            | Event::CfsbCsd { cpu }
            | Event::TaskWork { cpu, .. }
            | Event::Noise { cpu, .. } => self.fold_touch_cpu(cpu),
            Event::End => self.fold_split_all(),
            Event::TaskTimer { .. }
            | Event::TaskStart { .. }
            | Event::BwPeriod { .. }
            | Event::BwSlack { .. }
            | Event::RtPeriod
            | Event::DlTimer { .. }
            | Event::WasteSample => {}
        }
    }

    // Inlined into the loop, with `from_tie_key`: the key's class then
    // selects the handler in one dispatch, instead of an `Event` built by
    // one jump table, spilled, reloaded and matched by a second (the
    // reload stalls on the spill: 2 % of quota-512's profile).
    #[inline(always)]
    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Tick { cpu, gen } => {
                if self.sched.rqs[cpu.idx()].tick_gen == gen {
                    self.sched_tick(cpu);
                }
            }
            Event::BurstEnd { cpu, gen } => {
                if self.sched.rqs[cpu.idx()].burst_gen == gen {
                    self.burst_end(cpu);
                }
            }
            Event::Resched { cpu } => self.resched_event(cpu),
            Event::TaskTimer { task, gen, handler } => {
                if self.sched.tasks[task.idx()].timer_gen == gen {
                    self.task_timer(task, handler);
                }
            }
            Event::RemoteWakeup { cpu, task } => self.remote_wakeup(cpu, task),
            Event::TaskStart { task } => self.wake_up_new_task(task, CpuId(0)),
            Event::NohzIdleBalance { cpu } => self.nohz_idle_balance(cpu),
            Event::BwPeriod { group, gen } => self.bw_period_timer(group, gen),
            Event::BwSlack { group, gen } => self.bw_slack_timer(group, gen),
            Event::CfsbCsd { cpu } => self.cfsb_csd(cpu),
            Event::TaskWork { cpu, task } => self.task_work(cpu, task),
            Event::RtPeriod => self.rt_period_timer(),
            Event::DlTimer { task, gen } => self.dl_timer(task, gen),
            Event::Noise { cpu, steal } => self.noise_burst(cpu, steal),
            Event::WasteSample => {
                if self.queue.is_empty() && self.prog.live_tasks > 0 && self.end.is_none() {
                    // Nothing else can ever happen: every live thread waits
                    // for something no one will do.
                    self.deadlock = true;
                    return;
                }
                self.waste_sample();
                let at = self.now + WASTE_SAMPLE_NS;
                self.queue.push(at, Event::WasteSample);
            }
            Event::End => {}
        }
    }

    /// Closes every open accounting interval at `now`.
    fn finish_accounting(&mut self) {
        let now = self.now;
        for c in 0..self.sched.rqs.len() {
            let cpu = CpuId(c as u32);
            if self.sched.rqs[c].curr.is_some() {
                self.update_curr_task(cpu);
            }
            let rq = &mut self.sched.rqs[c];
            if let Some(s) = rq.idle_since {
                if now > s {
                    self.acct.cpu_stats[c].idle_ns += now - s;
                }
                rq.idle_since = Some(now.max(s));
            }
            // Overhead charged beyond the end did not happen within the run.
            if rq.ovh_until > now {
                self.uncharge_work_past_end(cpu);
                let rq = &mut self.sched.rqs[c];
                let future = rq.ovh_until - now;
                self.acct.cpu_stats[c].sched_overhead_ns -=
                    future.min(self.acct.cpu_stats[c].sched_overhead_ns);
                rq.ovh_until = now;
            }
        }
        for t in &mut self.sched.tasks {
            if let Some(w) = t.wait_since.take() {
                if now > w {
                    t.stats.wait_ns += now - w;
                    self.acct.cpu_stats[t.cpu.idx()].run_delay_ns += now - w;
                }
            }
        }
    }
}

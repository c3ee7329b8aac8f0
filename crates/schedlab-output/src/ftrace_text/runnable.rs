//! How many tasks are runnable (running or queued) on each CPU over time,
//! from a trace's sched events: what the report's run-queue heat map
//! draws, where a utilisation map of an overloaded machine is uniformly
//! full.
//!
//! Rules, applied to records in file order:
//!
//! * `sched_wakeup` / `sched_wakeup_new`: the task is runnable on
//!   `target_cpu` (moved there if it was counted elsewhere).
//! * `sched_migrate_task`: a runnable task moves from `orig_cpu` to
//!   `dest_cpu`; a sleeping one only changes its CPU.
//! * `sched_switch` on CPU c: `prev` stops being runnable unless its
//!   `prev_state` is `R` or `R+` (preempted); `next` is runnable on c.
//!
//! The idle task (pid 0) is never counted. A trace that starts in the
//! middle of a run misses the tasks already queued until they switch or
//! wake: the counts are a lower bound until each task has shown up once.

use std::collections::BTreeMap;

use super::{OwnedEvent, OwnedRecord};

/// Per CPU, the count of runnable tasks as a step function: `(time_ns,
/// count)` from that time on, in time order (only changes are kept).
pub type RunnableSteps = BTreeMap<u32, Vec<(u64, u32)>>;

/// The tasks seen so far and the counts they make.
#[derive(Default)]
struct Counter {
    /// pid -> (CPU, runnable).
    tasks: BTreeMap<u32, (u32, bool)>,
    /// Runnable tasks per CPU now.
    counts: BTreeMap<u32, u32>,
    steps: RunnableSteps,
}

impl Counter {
    /// At `t`, task `pid` is on `cpu`, runnable or not.
    fn set(&mut self, t: u64, pid: u32, cpu: u32, runnable: bool) {
        if pid == 0 {
            return;
        }
        let old = self.tasks.insert(pid, (cpu, runnable));
        if let Some((c, true)) = old {
            if !(runnable && c == cpu) {
                self.touch(t, c, -1);
            }
        }
        if runnable && old != Some((cpu, true)) {
            self.touch(t, cpu, 1);
        }
    }

    /// Whether `pid` is counted runnable.
    fn runnable(&self, pid: u32) -> bool {
        self.tasks.get(&pid).is_some_and(|&(_, r)| r)
    }

    fn touch(&mut self, t: u64, cpu: u32, delta: i32) {
        let n = self.counts.entry(cpu).or_insert(0);
        *n = n.saturating_add_signed(delta);
        let v = self.steps.entry(cpu).or_default();
        match v.last_mut() {
            Some(last) if last.0 == t => last.1 = *n,
            _ => v.push((t, *n)),
        }
    }
}

/// Derives [`RunnableSteps`] from records in file order (module docs).
pub fn runnable_steps<'a>(records: impl IntoIterator<Item = &'a OwnedRecord>) -> RunnableSteps {
    let mut c = Counter::default();
    for r in records {
        let t = r.time_ns;
        match &r.event {
            OwnedEvent::SchedWakeup { task, target_cpu }
            | OwnedEvent::SchedWakeupNew { task, target_cpu } => {
                c.set(t, task.pid, *target_cpu, true);
            }
            OwnedEvent::SchedMigrateTask { task, dest_cpu, .. } => {
                let runnable = c.runnable(task.pid);
                c.set(t, task.pid, *dest_cpu, runnable);
            }
            OwnedEvent::SchedSwitch {
                prev,
                prev_state,
                next,
            } => {
                let still = prev_state == "R" || prev_state == "R+";
                c.set(t, prev.pid, r.cpu, still);
                c.set(t, next.pid, r.cpu, true);
            }
            OwnedEvent::SchedWaking { .. } | OwnedEvent::Other { .. } => {}
        }
    }
    c.steps
}

/// Time-weighted mean of a step function over `[a, b)` (0 before its
/// first step).
pub fn mean_over(steps: &[(u64, u32)], a: u64, b: u64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let mut sum = 0u128;
    let i = steps.partition_point(|s| s.0 <= a);
    let mut level = if i == 0 { 0 } else { steps[i - 1].1 };
    let mut t = a;
    for &(ts, n) in &steps[i..] {
        if ts >= b {
            break;
        }
        sum += level as u128 * (ts - t) as u128;
        t = ts;
        level = n;
    }
    sum += level as u128 * (b - t) as u128;
    sum as f64 / (b - a) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftrace_text::parse_ftrace_text;

    /// Two CPUs by hand: a wakes on 0 and runs, b wakes on 0 and waits, a
    /// is preempted (R) and b runs, a is pulled to CPU 1 and runs there, b
    /// sleeps (S).
    #[test]
    fn counts_follow_wakeups_switches_and_migrations() {
        let text = "\
          <idle>-0       [000] d..2.     1.000000: sched_wakeup: comm=a pid=10 prio=120 target_cpu=000
          <idle>-0       [000] d..2.     1.000001: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
               a-10      [000] d..2.     1.000002: sched_wakeup: comm=b pid=11 prio=120 target_cpu=000
               a-10      [000] d..2.     1.000004: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=R+ ==> next_comm=b next_pid=11 next_prio=120
          <idle>-0       [001] d..2.     1.000005: sched_migrate_task: comm=a pid=10 prio=120 orig_cpu=0 dest_cpu=1
          <idle>-0       [001] d..2.     1.000006: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
               b-11      [000] d..2.     1.000008: sched_switch: prev_comm=b prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
";
        let recs = parse_ftrace_text(text).unwrap();
        let s = runnable_steps(&recs);
        let us = |x: u64| 1_000_000_000 + x * 1000;
        assert_eq!(s[&0], vec![(us(0), 1), (us(2), 2), (us(5), 1), (us(8), 0)]);
        assert_eq!(s[&1], vec![(us(5), 1)]);
        // CPU 0 over [1.000000, 1.000010): 1 for 2 us, 2 for 3, 1 for 3, 0 for 2.
        let m = mean_over(&s[&0], us(0), us(10));
        assert!((m - (2.0 + 6.0 + 3.0) / 10.0).abs() < 1e-9, "{m}");
    }
}

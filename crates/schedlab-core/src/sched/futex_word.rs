//! User-space futex words and the hand-off structures schbench builds on
//! them (Chris Mason's schbench, `schedlab-workload` `schbench.rs`): a
//! word is BLOCKED or RUNNING; posting flips it to RUNNING with a cmpxchg
//! and, when it flipped, makes one `FUTEX_WAKE` syscall that wakes one
//! sleeper; waiting flips it back to BLOCKED, or sleeps in `FUTEX_WAIT`
//! until posted. Wake lists are cmpxchg-prepended lists of waiters that
//! one thread splices and posts in turn; request queues count requests
//! posted to one consumer. Probes record the intervals a benchmark
//! measures with its own clock reads.
//!
//! Costs (`sched/syscall_cost.rs`): each cmpxchg is priced as one
//! uncontended atomic (`mutex`, the pthread fast path's single atomic),
//! each `FUTEX_WAKE` / `FUTEX_WAIT` that is made as one futex syscall
//! (`futex`); as for the other ops, the cost is decided from the state
//! the step finds when it starts, and the step takes effect once paid.
//! Clock reads (`gettimeofday`, vDSO) and plain stores are free.
//! A futex wake is a plain wakeup from task context (not WF_SYNC).

use crate::ids::{CpuId, TaskId};
use crate::observe::Sink;
use crate::program::Op;
use crate::sim::Sim;
use crate::task::Resume;
use crate::time::Nanos;

/// A spin's CPU time before it is ended by a release: longer than any run.
const SPIN_NS: Nanos = 1 << 50;

impl<S: Sink> Sim<S> {
    /// CPU time of a post of `word`: the cmpxchg, plus the wake syscall
    /// when the word is BLOCKED (the cmpxchg will flip it).
    fn post_cost(&self, word: u32) -> Nanos {
        let w = &self.prog.futex_words[word as usize];
        self.sys.mutex + if w.running { 0 } else { self.sys.futex }
    }

    /// CPU time of a wait on `word`: the cmpxchg, plus `FUTEX_WAIT` when
    /// the word is BLOCKED (it will sleep).
    fn wait_cost(&self, word: u32) -> Nanos {
        self.post_cost(word)
    }

    /// The effect of a post: BLOCKED → RUNNING wakes one sleeper.
    fn post_word(&mut self, cpu: CpuId, word: u32) {
        let w = &mut self.prog.futex_words[word as usize];
        if w.running {
            return;
        }
        w.running = true;
        if let Some(s) = w.sleepers.pop_front() {
            self.try_to_wake_up(s, cpu, true, false);
        }
    }

    /// The effect of a wait: true when `t` went to sleep on the word.
    fn wait_word(&mut self, cpu: CpuId, t: TaskId, word: u32) -> bool {
        let w = &mut self.prog.futex_words[word as usize];
        if w.running {
            w.running = false;
            return false;
        }
        w.sleepers.push_back(t);
        self.block_sync(cpu, t);
        true
    }

    /// Starts paying `cost` for the next step unless it is paid; true
    /// when the task must stop to pay (the step then runs on re-entry).
    fn pay_step(&mut self, cpu: CpuId, t: TaskId, cost: Nanos) -> bool {
        if self.sched.tasks[t.idx()].paid > 0 {
            return false;
        }
        if cost == 0 {
            self.sched.tasks[t.idx()].paid = 1;
            return false;
        }
        self.pay(cpu, t, 1, cost);
        true
    }

    fn record(&mut self, t: TaskId, slot: u8, probe: u32) {
        let start = self.sched.tasks[t.idx()].stamps[slot as usize];
        self.prog.probes[probe as usize].push((start, self.now));
    }

    /// Runs one futex-word op (see [`Op::FutexArm`] and the ops after it)
    /// in the task's context; true when the task stopped (paying for a
    /// step, or asleep), false when the op is complete. The caller resets
    /// `sync_stage` and `paid` when the op is fresh.
    pub(crate) fn futex_word_op(&mut self, cpu: CpuId, t: TaskId, op: &Op) -> bool {
        let now = self.now;
        match *op {
            Op::FutexArm { word } => {
                self.prog.futex_words[word as usize].running = false;
                false
            }
            Op::Stamp { slot } => {
                self.sched.tasks[t.idx()].stamps[slot as usize] = now;
                false
            }
            Op::Record { slot, probe } => {
                self.record(t, slot, probe);
                false
            }
            Op::SleepUntil { slot, ns } => {
                let target = self.sched.tasks[t.idx()].stamps[slot as usize] + ns;
                if target > now {
                    self.block(cpu, t, target, false, Resume::CompleteBlock);
                    return true;
                }
                false
            }
            Op::FutexPost { word } => {
                let c = self.post_cost(word);
                if self.pay_step(cpu, t, c) {
                    return true;
                }
                self.post_word(cpu, word);
                false
            }
            Op::FutexWait { word } => {
                let c = self.wait_cost(word);
                if self.pay_step(cpu, t, c) {
                    return true;
                }
                // Also the retry once woken (the same FUTEX_WAIT call).
                self.wait_word(cpu, t, word)
            }
            Op::ListAdd { list, word, slot } => {
                let c = self.sys.mutex;
                if self.pay_step(cpu, t, c) {
                    return true;
                }
                self.prog.wake_lists[list as usize].push((t, word, slot));
                false
            }
            Op::ListWakeAll { list } => self.list_wake_all(cpu, t, list),
            Op::RequestPost {
                first,
                count,
                cap,
                backoff_ns,
            } => {
                let task = &mut self.sched.tasks[t.idx()];
                if task.sync_stage == 0 {
                    let q = first as u64 + task.rr_next % count as u64;
                    task.rr_next += 1;
                    task.chan_pos = q;
                    task.sync_stage = 1;
                    if self.prog.request_queues[q as usize].1 > cap {
                        // usleep(backoff), and this request is not sent.
                        self.block(cpu, t, now + backoff_ns, false, Resume::CompleteBlock);
                        return true;
                    }
                }
                let q = self.sched.tasks[t.idx()].chan_pos as usize;
                let word = self.prog.request_queues[q].0.word;
                // request_add's cmpxchg, then the post.
                let c = self.sys.mutex + self.post_cost(word);
                if self.pay_step(cpu, t, c) {
                    return true;
                }
                let (spec, pending) = &mut self.prog.request_queues[q];
                *pending += 1;
                let (consumer, slot) = (spec.consumer, spec.slot);
                self.sched.tasks[consumer as usize].stamps[slot as usize] = now;
                self.post_word(cpu, word);
                false
            }
            Op::RequestTake {
                queue,
                post_word,
                probe,
            } => self.request_take(cpu, t, queue, post_word, probe),
            Op::CpuLock { first } => self.cpu_lock(cpu, t, first),
            Op::CpuUnlock => {
                let c = self.sys.mutex;
                if self.pay_step(cpu, t, c) {
                    return true;
                }
                let l = self.sched.tasks[t.idx()].spin_lock;
                self.spin_unlock(t, l);
                false
            }
            _ => unreachable!("not a futex-word op: {op:?}"),
        }
    }

    /// `Op::CpuLock`: stage 0 picks the lock of the CPU the task runs on
    /// and pays the trylock (one atomic); stage 1 takes it if free, else
    /// spins: the task keeps its CPU with unbounded work until a release
    /// ends the spin (`spin_unlock`), then tries again. A lock taken after
    /// a migration is released and the op starts over on the new CPU.
    fn cpu_lock(&mut self, cpu: CpuId, t: TaskId, first: u32) -> bool {
        loop {
            if self.sched.tasks[t.idx()].sync_stage == 0 {
                let c = self.sys.mutex;
                if self.pay_step(cpu, t, c) {
                    return true;
                }
                let task = &mut self.sched.tasks[t.idx()];
                task.spin_lock = first + cpu.0;
                task.sync_stage = 1;
            }
            let l = self.sched.tasks[t.idx()].spin_lock;
            let lock = &mut self.prog.spinlocks[l as usize];
            if lock.0.is_some() {
                if !lock.1.contains(&t) {
                    lock.1.push(t);
                }
                let task = &mut self.sched.tasks[t.idx()];
                task.work_left = SPIN_NS;
                task.resume = Resume::Continue;
                self.arm_burst(cpu);
                return true;
            }
            lock.0 = Some(t);
            let cur = self.sched.tasks[t.idx()].cpu;
            if first + cur.0 == l {
                return false;
            }
            // Got the lock but migrated: release it, start again.
            self.spin_unlock(t, l);
            let task = &mut self.sched.tasks[t.idx()];
            task.sync_stage = 0;
            task.paid = 0;
        }
    }

    /// Releases spinning lock `l` held by `t`; every spinner's spin ends
    /// now (a running one at once, a preempted one when it next runs), and
    /// each tries again.
    fn spin_unlock(&mut self, t: TaskId, l: u32) {
        let lock = &mut self.prog.spinlocks[l as usize];
        if lock.0 != Some(t) {
            return;
        }
        lock.0 = None;
        for s in std::mem::take(&mut lock.1) {
            let c = self.sched.tasks[s.idx()].cpu;
            let running = self.sched.rqs[c.idx()].curr == Some(s);
            if running {
                self.update_curr_task(c);
            }
            self.sched.tasks[s.idx()].work_left = 0;
            if running {
                self.arm_burst(c);
            }
        }
    }

    /// `Op::ListWakeAll`: stage 0 splices (one cmpxchg) and reads the
    /// clock; stage 1 posts the members one by one, newest first.
    fn list_wake_all(&mut self, cpu: CpuId, t: TaskId, list: u32) -> bool {
        if self.sched.tasks[t.idx()].sync_stage == 0 {
            let c = self.sys.mutex;
            if self.pay_step(cpu, t, c) {
                return true;
            }
            let mut members = std::mem::take(&mut self.prog.wake_lists[list as usize]);
            members.reverse();
            let task = &mut self.sched.tasks[t.idx()];
            task.wake_batch = members;
            task.wake_now = self.now;
            task.chan_pos = 0;
            task.sync_stage = 1;
            task.paid = 0;
        }
        loop {
            let task = &self.sched.tasks[t.idx()];
            let Some(&(m, word, slot)) = task.wake_batch.get(task.chan_pos as usize) else {
                self.sched.tasks[t.idx()].wake_batch.clear();
                return false;
            };
            let c = self.post_cost(word);
            if self.pay_step(cpu, t, c) {
                return true;
            }
            let stamp = self.sched.tasks[t.idx()].wake_now;
            self.sched.tasks[m.idx()].stamps[slot as usize] = stamp;
            self.post_word(cpu, word);
            let task = &mut self.sched.tasks[t.idx()];
            task.chan_pos += 1;
            task.paid = 0;
        }
    }

    /// `Op::RequestTake`: stage 0 arms the word, stamps the slot and
    /// splices the queue (one cmpxchg); stage 1 posts `post_word`; stage 2
    /// waits on the own word (stage 3 once asleep), records the wakeup
    /// and starts again at stage 0.
    fn request_take(
        &mut self,
        cpu: CpuId,
        t: TaskId,
        queue: u32,
        post_word: u32,
        probe: u32,
    ) -> bool {
        let q = queue as usize;
        let (word, slot) = {
            let s = &self.prog.request_queues[q].0;
            (s.word, s.slot)
        };
        {
            let task = &mut self.sched.tasks[t.idx()];
            if task.sync_stage == 0 && task.paid == 0 && task.batch > 0 {
                task.batch -= 1;
                return false;
            }
        }
        loop {
            match self.sched.tasks[t.idx()].sync_stage {
                0 => {
                    let c = self.sys.mutex;
                    if self.pay_step(cpu, t, c) {
                        return true;
                    }
                    self.prog.futex_words[word as usize].running = false;
                    let n = std::mem::take(&mut self.prog.request_queues[q].1);
                    let now = self.now;
                    let task = &mut self.sched.tasks[t.idx()];
                    task.stamps[slot as usize] = now;
                    task.paid = 0;
                    if n > 0 {
                        task.batch = n - 1;
                        self.prog.futex_words[word as usize].running = true;
                        return false;
                    }
                    task.sync_stage = 1;
                }
                1 => {
                    let c = self.post_cost(post_word);
                    if self.pay_step(cpu, t, c) {
                        return true;
                    }
                    self.post_word(cpu, post_word);
                    let task = &mut self.sched.tasks[t.idx()];
                    task.sync_stage = 2;
                    task.paid = 0;
                }
                stage => {
                    if stage == 2 {
                        let c = self.wait_cost(word);
                        if self.pay_step(cpu, t, c) {
                            return true;
                        }
                    }
                    if self.wait_word(cpu, t, word) {
                        self.sched.tasks[t.idx()].sync_stage = 3;
                        return true;
                    }
                    self.record(t, slot, probe);
                    let task = &mut self.sched.tasks[t.idx()];
                    task.sync_stage = 0;
                    task.paid = 0;
                }
            }
        }
    }
}

//! The lazily settled syscall fold: a run of silent channel
//! syscalls of the running task is paid as one burst, and its
//! intermediate landings are settled only when another party looks.
//!
//! `writes_to_pay` / `reads_to_pay` (sched/channel_io.rs) decide a fold: k
//! syscalls of one op, every one but the last silent (it finds room or a
//! message and wakes nobody), all before the run's end and before the
//! task's vruntime reaches its deadline or protected slice. The task
//! pays them as one burst (one `BurstEnd` at the last landing); this
//! module keeps the fold's landings so that, until that event, the run is
//! the one message by message would have given:
//!
//! * **Nobody looks, nothing to do.** Landings change only the task's own
//!   accounting and its channels. If the fold's event pops first, the
//!   op applies the k effects at once (what `pay` of k has always done).
//! * **Somebody looks: split.** Before anything touches the fold's CPU
//!   (an event on it, `update_curr` of its task, a stall, a balancer
//!   looking at its queue), the fold is split: the landings message by message
//!   would already have handled are settled at their own times (charge,
//!   effect), and the task is left paying the next syscall alone with its
//!   `BurstEnd` queued at that landing's time -- the state message by
//!   message has there. The fold's own event stays queued but is a
//!   phantom: the engine drops it uncounted.
//! * **Which landings came first** is decided by the tie rule
//!   (event/order.rs): message by message, a landing (t, BurstEnd on this
//!   CPU) pops before every event whose (time, tie key) is greater, so the
//!   settled landings are those below the largest (time, key) popped so
//!   far (`hw`; pops are not monotone in key within one ns, since an event
//!   pushed for now with a lower key pops next).
//!
//! Events are counted as message by message counts them: a settled
//! landing when it is settled, the rest when the fold's event pops.
//!
//! Exactness rests on every reader of a channel, of the running task's
//! time or of its CPU's state going through a hook: `Sim::fold_touch_cpu`
//! (events on the CPU, `update_curr_task`, `stall`, and the balancer's
//! candidate walk, whose eligibility test reads the queue's avg_vruntime
//! and so the running task's vruntime) and `Sim::fold_touch_chan`
//! (`chan_write`, `chan_read`). Another task's operation on a held channel
//! settles the fold up to now and keeps it pending if its remaining
//! landings on that channel are still silent afterwards and keep their
//! price (the cross-CPU channel cost: the operation may have taken the
//! channel's cache lines; `Sim::fold_recheck`); a call is priced after the
//! fold holding its channel settled (`Sim::fold_settle_chan`); a fold never
//! takes a channel another fold holds. Channel locks (`sched/chan_lock.rs`):
//! a fold takes the locks of all its calls when it is decided, each at its
//! own start time; another party about to price a call on a channel where
//! a call of the fold has not started splits the fold, which gives back
//! the locks of its calls not started (message by message they would be
//! decided after that party's call).
//!
//! **The per-channel horizon.** A split throws away the pricing of every
//! call not started, so a fold is not begun beyond a channel another task
//! is known to use first: every paid call notes (`fold_note_use`) that its
//! task lands on its channel at its landing and prices its next call then
//! (a write round's next channel, or the round's first after its last;
//! the same channel for reads), and a fold stops before a call on a
//! channel another task's noted use comes at or before that call's start
//! (`fold_used_before`). This only shortens folds, so the outputs do not
//! depend on it. On `hackbench:groups=8,loops=1000,mode=process` on
//! icx-2s-80c-ht it took the splits from 991 K of 1.18 M folds to 123 K
//! of 312 K (socket), from 1.32 M of 1.57 M to 88 K of 317 K (pipe).
//!
//! The fold on/off tests (tests/it/hackbench.rs: 132 seeded cases with
//! `--trace --check`, and the event count of 8 x 4000 on 160 CPUs)
//! compare the outputs.

use crate::event::Event;
use crate::folds::Landing;
use crate::ids::{CpuId, TaskId};
use crate::observe::Sink;
use crate::sim::Sim;
use crate::task::Resume;
use crate::time::Nanos;

/// The tie key of a landing on `cpu` (a `BurstEnd`; the generation, which
/// only orders it against stale events of the same CPU, is left at 0).
#[inline]
fn landing_entry(at: Nanos, cpu: CpuId) -> u128 {
    let key = crate::event::order::tie_key(&Event::BurstEnd { cpu, gen: 0 });
    (u128::from(at) << 64) | u128::from(key)
}

impl<S: Sink> Sim<S> {
    /// Records the fold just paid by `t` on `cpu` (its event armed with
    /// the current `burst_gen`): the k >= 2 landings in `folds.buf`, which
    /// become the fold's (the buffers are swapped, not copied: a read fold
    /// can have hundreds of landings; whoever fills `folds.buf` next clears
    /// it first).
    pub(crate) fn fold_begin(&mut self, cpu: CpuId, t: TaskId, write: bool) {
        let gen = self.sched.rqs[cpu.idx()].burst_gen;
        for l in &self.folds.buf {
            self.folds.chan[l.chan as usize] = Some(cpu);
        }
        let f = &mut self.folds.cpu[cpu.idx()];
        debug_assert!(!f.live);
        f.live = true;
        f.task = t;
        f.gen = gen;
        f.write = write;
        f.next = 0;
        std::mem::swap(&mut f.landings, &mut self.folds.buf);
        self.folds.active += 1;
    }

    /// The fold's own event popped: every landing left was silent and
    /// unseen; the op applies them now. Counts the folded events.
    pub(crate) fn fold_complete(&mut self, cpu: CpuId) {
        let f = &mut self.folds.cpu[cpu.idx()];
        f.live = false;
        self.folds.active -= 1;
        let left = (f.landings.len() - f.next) as u64;
        for l in &f.landings[f.next..] {
            if self.folds.chan[l.chan as usize] == Some(cpu) {
                self.folds.chan[l.chan as usize] = None;
            }
        }
        self.events += left - 1;
        self.fast_forwarded += left - 1;
    }

    /// Task `t` will use channel `ch` at `at`: its call paid now lands
    /// there (the effect takes the channel's lines), or its next call on
    /// `ch` is priced then. The per-channel fold horizon: a fold of
    /// another task does not take a call on `ch` that starts at or after
    /// `at` ([`Sim::fold_used_before`]). The channel keeps a few such uses
    /// (`folds.rs`, `ChanUses`).
    #[inline]
    pub(crate) fn fold_note_use(&mut self, ch: usize, t: TaskId, at: Nanos) {
        let now = self.now;
        self.folds.soon[ch].note(now, t, at);
    }

    /// Is another task than `t` known to use channel `ch` (price a call on
    /// it, or land one there) from now up to `at`? A fold's call on `ch`
    /// that starts at `at` would then be split (another party's price on a
    /// channel where a call of the fold has not started, `fold_settle_chan`)
    /// or re-priced (the lines taken, `fold_recheck`) before it starts: the
    /// fold stops before it. Only the fold's length depends on this (its
    /// outputs are message by message's whatever its length), so a use
    /// that does not happen (its task preempted, say) costs only a shorter
    /// fold.
    #[inline]
    pub(crate) fn fold_used_before(&self, ch: usize, t: TaskId, at: Nanos) -> bool {
        self.folds.soon[ch].first_other(self.now, t) <= at
    }

    /// Something is about to look at `cpu`: split its pending fold.
    #[inline]
    pub(crate) fn fold_touch_cpu(&mut self, cpu: CpuId) {
        if self.folds.active > 0 && self.folds.cpu[cpu.idx()].live {
            self.fold_split(cpu);
        }
    }

    /// Task `by` is about to read or write channel `ch`: the pending fold
    /// of another task with a landing on it settles what happened before
    /// now (it stays pending). Returns that fold, for
    /// [`Sim::fold_recheck`] once `by`'s operation is done.
    #[inline]
    pub(crate) fn fold_touch_chan(&mut self, ch: usize, by: TaskId) -> Option<(CpuId, u32)> {
        if self.folds.active == 0 {
            return None;
        }
        let c = self.folds.chan[ch]?;
        let f = &self.folds.cpu[c.idx()];
        if f.task == by {
            return None;
        }
        let gen = f.gen;
        self.fold_settle(c);
        Some((c, gen))
    }

    /// Task `by` is about to price a call on channel `ch` (by `cpu`,
    /// starting at `start`; `price` gives its landing, whose cost depends
    /// on the CPU that used the channel last and on its lock): the pending
    /// fold of another task with a landing on it settles what happened
    /// before now, so the price sees the channel as message by message
    /// would. A call of the fold on `ch` still to start would, message by
    /// message, be decided after this one; the fold took its lock's hold
    /// already. That changes nothing unless this call would wait for such
    /// a hold (it is the one ahead of it), or such a call starts while
    /// this one holds the lock (message by message it would wait): then
    /// the fold is split there, and the split gives back the holds of the
    /// calls not started (`sched/chan_lock.rs`). Returns the call's
    /// landing, priced after the split if there was one.
    #[inline]
    pub(crate) fn fold_settle_chan(
        &mut self,
        ch: usize,
        by: TaskId,
        start: Nanos,
        price: impl Fn(&Self) -> Landing,
    ) -> Landing {
        if self.folds.active == 0 {
            return price(self);
        }
        let Some(c) = self.folds.chan[ch] else {
            return price(self);
        };
        if self.folds.cpu[c.idx()].task == by {
            return price(self);
        }
        self.fold_settle(c);
        let f = &self.folds.cpu[c.idx()];
        let mut pending = f.landings[f.next + 1..]
            .iter()
            .filter(|l| l.chan as usize == ch)
            .map(|l| l.at - l.cost)
            .peekable();
        if pending.peek().is_none() {
            return price(self);
        }
        let l = price(self);
        let end = start + l.wait + l.hold;
        let now = self.now;
        let waits_for_pending = self
            .chan_lock(ch)
            .ahead(start)
            .is_some_and(|h| h.owner == c && h.arrival > now);
        if waits_for_pending || pending.any(|a| a >= start && a <= end) {
            self.fold_split(c);
            return price(self);
        }
        l
    }

    /// After another task's operation on channel `ch`: are the pending
    /// landings of fold `held` on `ch` still silent, and still priced as
    /// message by message would price them (`fold_costs_moved`)? If not,
    /// split it (what it settled before the operation stays). The price
    /// test covers the fold's own event too: a write round's last write
    /// goes to a channel the other senders write, and its call may start
    /// after one of them took that channel's lines. Another reader's read
    /// (`read`) splits a read fold: it took a message the fold's reads
    /// were priced for (each read pays for its own message's lines).
    pub(crate) fn fold_recheck(&mut self, held: (CpuId, u32), ch: usize, read: bool) {
        let (c, gen) = held;
        let f = &self.folds.cpu[c.idx()];
        if !f.live || f.gen != gen {
            return;
        }
        if read && !f.write {
            self.fold_split(c);
            return;
        }

        // Intermediate landings (all but the fold's event) on `ch` must
        // stay silent; every landing left on `ch`, the fold's event
        // included, must keep its price.
        let k = f.landings.len();
        let mut on_ch = f.landings[f.next.min(k - 1)..k - 1]
            .iter()
            .filter(|l| l.chan as usize == ch);
        let ok = if f.write {
            // Whether one is there is enough.
            on_ch.next().is_none() || self.silent_write(ch)
        } else {
            let n = on_ch.count() as u64;
            n == 0 || {
                let (avail, quiet) = self.chan_avail(ch);
                quiet && avail >= n
            }
        };
        if !ok || self.fold_costs_moved(c, ch) {
            self.fold_split(c);
        }
    }

    /// Whether a call of `cpu`'s fold on `ch` that starts after another
    /// party's touch of `ch` now costs other than the fold priced it: the
    /// toucher took the channel's cache lines (sched/syscall_cost.rs, the
    /// cross-CPU channel cost), and the call finds them there unless one of
    /// the fold's own landings on `ch` has brought them back first. (A
    /// read's message's part does not move: the toucher's write queues
    /// behind the messages the fold's reads take.) The call
    /// of the first unsettled landing is under way: its cost was decided
    /// when it started.
    fn fold_costs_moved(&self, cpu: CpuId, ch: usize) -> bool {
        let f = &self.folds.cpu[cpu.idx()];
        let k = f.landings.len();
        // Only the first landing left on `ch` can find the lines moved:
        // it brings them back for the ones after it. The lock's wait is
        // not the toucher's doing: it took no lock the fold's calls not
        // started would meet (it would have split the fold when it priced
        // its call).
        match f.landings[f.next.min(k)..]
            .iter()
            .position(|l| l.chan as usize == ch)
        {
            Some(i) if i > 0 => {
                let l = &f.landings[f.next.min(k) + i];
                l.cost - l.wait - l.msg != self.chan_cost(ch, f.write, cpu)
            }
            _ => false,
        }
    }

    /// Splits every pending fold (the end of the run).
    pub(crate) fn fold_split_all(&mut self) {
        if self.folds.active == 0 {
            return;
        }
        for c in 0..self.folds.cpu.len() {
            if self.folds.cpu[c].live {
                self.fold_split(CpuId(c as u32));
            }
        }
    }

    /// Settles, at their own times, the landings of `cpu`'s fold that
    /// message by message would have handled by now (below `hw`); the fold
    /// stays pending with the rest, its task owing their CPU time.
    fn fold_settle(&mut self, cpu: CpuId) {
        let hw = self.folds.hw;
        let f = &self.folds.cpu[cpu.idx()];
        let (t, write, k, from) = (f.task, f.write, f.landings.len(), f.next);
        // The last landing is the fold's event, which would have popped
        // already were it below hw.
        let mut j = from;
        while j < k - 1 && landing_entry(self.folds.cpu[cpu.idx()].landings[j].at, cpu) < hw {
            j += 1;
        }
        if j == from {
            return;
        }
        let now = self.now;
        for i in from..j {
            let l = self.folds.cpu[cpu.idx()].landings[i];
            // The landing's BurstEnd: charge up to it, then the op's
            // effect (silent: no wakeup, no sleep).
            self.now = l.at;
            let task = &mut self.sched.tasks[t.idx()];
            task.work_left = l.cost;
            task.paid = 1;
            self.charge_curr_quiet(cpu, t);
            let ch = l.chan as usize;
            let done = if write {
                self.chan_write_now(cpu, t, ch)
            } else {
                self.chan_read_now(cpu, t, ch)
            };
            debug_assert!(done, "a folded syscall was not silent");
            let task = &mut self.sched.tasks[t.idx()];
            if write {
                task.chan_pos += 1;
                if self.folds.chan[ch] == Some(cpu) {
                    self.folds.chan[ch] = None;
                }
            } else {
                task.chan_pos -= 1;
            }
            task.paid = 0;
        }
        self.now = now;
        self.events += (j - from) as u64;
        self.fast_forwarded += (j - from) as u64;
        // Still folded: the rest paid in one burst, up to the fold's event.
        let last = self.folds.cpu[cpu.idx()].landings[k - 1].at;
        self.folds.cpu[cpu.idx()].next = j;
        let task = &mut self.sched.tasks[t.idx()];
        task.paid = (k - j) as u64;
        task.resume = Resume::Continue;
        task.work_left = last - self.sched.ents[task.se.idx()].exec_start;
    }

    /// Settles what happened of `cpu`'s fold ([`Sim::fold_settle`]) and
    /// leaves its task paying the next syscall alone, its `BurstEnd`
    /// queued at that landing: the state message by message has now. The
    /// fold's own event becomes a phantom.
    fn fold_split(&mut self, cpu: CpuId) {
        self.fold_settle(cpu);
        let mut f = std::mem::take(&mut self.folds.cpu[cpu.idx()]);
        self.fold_splits += 1;
        f.live = false;
        self.folds.active -= 1;
        for l in &f.landings[f.next..] {
            if self.folds.chan[l.chan as usize] == Some(cpu) {
                self.folds.chan[l.chan as usize] = None;
            }
        }
        // The calls after the next one have not started: they give back the
        // holds they took when the fold was decided (each found by its CPU
        // and start, `ChanLock::give_back`).
        for l in &f.landings[f.next + 1..] {
            self.chan_lock_mut(l.chan as usize)
                .give_back(cpu, l.at - l.cost);
        }
        let t = f.task;
        let next = f.landings[f.next];
        let task = &mut self.sched.tasks[t.idx()];
        task.paid = 1;
        task.resume = Resume::Continue;
        // What is left of the next syscall: its cost, less what was
        // charged beyond its start (nothing: landings are charged at
        // their own times and the fold is not charged otherwise).
        let charged_to = self.sched.ents[task.se.idx()].exec_start;
        let begin = next.at - next.cost;
        task.work_left = next.cost - charged_to.saturating_sub(begin).min(next.cost);
        self.folds.add_phantom(cpu, f.gen);
        let rq = &mut self.sched.rqs[cpu.idx()];
        rq.burst_gen = rq.burst_gen.wrapping_add(1);
        let gen = rq.burst_gen;
        self.queue.push(next.at, Event::BurstEnd { cpu, gen });
        self.folds.cpu[cpu.idx()] = f; // keep the landing buffer
    }
}

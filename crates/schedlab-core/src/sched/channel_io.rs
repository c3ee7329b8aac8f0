//! Channel I/O in the task's context: pipe and AF_UNIX stream writes and
//! reads (`write()`/`read()` ops), what each call costs (the call, its
//! message, moving the channel's shared state between CPUs, the channel's
//! lock), blocking on a full or empty channel, and the exact fast-forward
//! of runs of calls nothing can observe (`sched/fold.rs`).

use crate::fair::weight::NICE_0_LOAD;
use crate::folds::Landing;
use crate::ids::{CpuId, TaskId};
use crate::observe::{PrevState, Sink};
use crate::rq::Class;
use crate::runtime::ChannelState;
use crate::sched::chan_lock::ChanLock;
use crate::sim::Sim;
use crate::task::{ChanRetry, Resume, TaskState};
use crate::time::Nanos;

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
    pub(super) fn channel_send(&mut self, cpu: CpuId, t: TaskId, first: u32, count: u32) -> bool {
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
    pub(super) fn channel_recv(&mut self, cpu: CpuId, t: TaskId, chan: u32) -> bool {
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

//! The pending syscall folds' bookkeeping: per CPU the fold
//! in flight and its landings, per channel the CPU whose fold holds it,
//! and the split folds' events the engine drops. Plain state, kept in
//! [`crate::sim::Sim`]; the mechanism that decides, splits and settles
//! folds is `sched/fold.rs` (as `cfs_tasks.rs` is the list and the
//! balancer its user).

use crate::fair::group::TaskGroup;
use crate::ids::{CpuId, GroupId, TaskId};
use crate::time::Nanos;

/// One landing of a fold: when, what its syscall cost, on which channel;
/// the part of the cost spent waiting for the channel's lock and the
/// lock's hold (given back when a split leaves the call undecided:
/// `sched/fold.rs`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Landing {
    pub at: Nanos,
    pub cost: Nanos,
    pub chan: u32,
    pub wait: Nanos,
    pub hold: Nanos,
    /// Of the cost, what a read pays for its message's lines (from the
    /// CPU that wrote it: `SyscallCosts::xmsg`); 0 for a write.
    pub msg: Nanos,
}

/// A pending fold on one CPU.
#[derive(Debug, Default)]
pub(crate) struct Fold {
    pub live: bool,
    pub task: TaskId,
    /// `burst_gen` of the fold's `BurstEnd` (at the last landing).
    pub gen: u32,
    /// Writes (`Op::Send`) or reads.
    pub write: bool,
    /// All k landings, the last one the fold's event.
    pub landings: Vec<Landing>,
    /// The first landing not settled yet.
    pub next: usize,
}

/// How many known uses a channel keeps ([`ChanUses`]).
const USES: usize = 4;

/// The next uses of one channel that tasks are known to make: the time
/// and the task of up to [`USES`] of them (a slot whose time has passed
/// is free). On hackbench the senders of a group write the same channels
/// in the same order, several at a time, so one slot (the earliest use)
/// would lose the next ones once it passes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChanUses {
    at: [Nanos; USES],
    by: [TaskId; USES],
}

/// The task of an empty [`ChanUses`] slot.
const NOBODY: TaskId = TaskId(u32::MAX);

impl Default for ChanUses {
    fn default() -> Self {
        Self {
            at: [0; USES],
            by: [NOBODY; USES],
        }
    }
}

impl ChanUses {
    /// Task `t` will use the channel at `at` (`now` is the current time):
    /// it replaces `t`'s own slot (its plan now), else a free one, else
    /// the latest use if `at` is earlier.
    #[inline]
    pub fn note(&mut self, now: Nanos, t: TaskId, at: Nanos) {
        let mut slot = None;
        let mut latest = 0;
        for i in 0..USES {
            if self.by[i] == t {
                slot = Some(i);
                break;
            }
            if self.at[i] < now || self.by[i] == NOBODY {
                slot = slot.or(Some(i));
            } else if slot.is_none() && self.at[i] > self.at[latest] {
                latest = i;
            }
        }
        let i = match slot {
            Some(i) => i,
            None if at < self.at[latest] => latest,
            None => return,
        };
        self.at[i] = at;
        self.by[i] = t;
    }

    /// The earliest use known from `now` on by a task other than `t`
    /// (`Nanos::MAX` if none; an empty slot is [`NOBODY`]'s).
    #[inline]
    pub fn first_other(&self, now: Nanos, t: TaskId) -> Nanos {
        let mut first = Nanos::MAX;
        for i in 0..USES {
            if self.by[i] != t && self.by[i] != NOBODY && self.at[i] >= now {
                first = first.min(self.at[i]);
            }
        }
        first
    }
}

/// Pending folds, per CPU, and what the engine needs to settle them.
#[derive(Debug, Default)]
pub(crate) struct Folds {
    /// Per CPU.
    pub cpu: Vec<Fold>,
    /// Per channel: the CPU whose pending fold has a landing on it.
    pub chan: Vec<Option<CpuId>>,
    /// Per channel: the next uses of it known (a call to be priced on it,
    /// or a call landing there), by whom; the per-channel fold horizon
    /// (`sched/fold.rs`, `fold_note_use`).
    pub soon: Vec<ChanUses>,
    /// Per CPU: generations of split folds' events, dropped uncounted
    /// (pushed by [`Folds::add_phantom`], taken by [`Folds::take_phantom`]).
    phantoms: Vec<Vec<u32>>,
    /// How many `phantoms` there are on all CPUs: the engine looks at a
    /// CPU's list only when some exist (the per-CPU list's header
    /// would be a load per `BurstEnd`, cold on 512 CPUs).
    pub phantom_count: usize,
    /// Pending folds.
    pub active: usize,
    /// The largest (time << 64 | tie key) popped so far.
    pub hw: u128,
    /// The landings of the fold being decided (a buffer swapped with the
    /// fold's own when it begins: `sched/fold.rs`, `fold_begin`).
    pub buf: Vec<Landing>,
    /// Per task group: a group on the way from it up to the root has a CPU
    /// bandwidth limit (`cpu.max`), so its tasks never fold
    /// (`fast_forward_window` refuses at that level). Filled on first use
    /// from the groups, whose quotas are set up once (sched/init.rs) and
    /// never switched on or off during a run; a task that moves group
    /// reads its new group's entry.
    pub bw_path: std::cell::OnceCell<Vec<bool>>,
}

impl Folds {
    /// Sized for `n` CPUs and `chans` channels.
    pub fn new(n: usize, chans: usize) -> Self {
        Self {
            cpu: (0..n).map(|_| Fold::default()).collect(),
            chan: vec![None; chans],
            soon: vec![ChanUses::default(); chans],
            phantoms: vec![Vec::new(); n],
            phantom_count: 0,
            active: 0,
            hw: 0,
            buf: Vec::new(),
            bw_path: std::cell::OnceCell::new(),
        }
    }

    /// Is `BurstEnd { cpu, gen }` a split fold's event (then forgets it)?
    #[inline]
    pub fn take_phantom(&mut self, cpu: CpuId, gen: u32) -> bool {
        let p = &mut self.phantoms[cpu.idx()];
        if let Some(i) = p.iter().position(|&g| g == gen) {
            p.swap_remove(i);
            self.phantom_count -= 1;
            return true;
        }
        false
    }

    /// `BurstEnd { cpu, gen }` is a split fold's event: drop it when it pops.
    #[inline]
    pub fn add_phantom(&mut self, cpu: CpuId, gen: u32) {
        self.phantoms[cpu.idx()].push(gen);
        self.phantom_count += 1;
    }

    /// Does a group on the way from `g` up to the root of `groups` have a
    /// CPU bandwidth limit? (Cached: see [`Folds::bw_path`].)
    #[inline]
    pub fn bw_on_path(&self, groups: &[TaskGroup], g: GroupId) -> bool {
        self.bw_path.get_or_init(|| bw_paths(groups))[g.idx()]
    }
}

/// Per group: it or an ancestor has a CPU bandwidth limit.
fn bw_paths(groups: &[TaskGroup]) -> Vec<bool> {
    (0..groups.len())
        .map(|g| {
            let mut at = Some(g);
            while let Some(i) = at {
                if groups[i].bw.is_some() {
                    return true;
                }
                at = groups[i].parent.map(|p| p.idx());
            }
            false
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_use_is_seen_by_other_tasks_until_it_passes() {
        let mut u = ChanUses::default();
        assert_eq!(u.first_other(0, TaskId(1)), Nanos::MAX);
        u.note(100, TaskId(1), 500);
        assert_eq!(u.first_other(100, TaskId(2)), 500);
        assert_eq!(u.first_other(100, TaskId(1)), Nanos::MAX, "its own use");
        assert_eq!(u.first_other(500, TaskId(2)), 500);
        assert_eq!(u.first_other(501, TaskId(2)), Nanos::MAX, "passed");
    }

    #[test]
    fn a_task_keeps_one_use_and_a_full_channel_keeps_the_earliest() {
        let mut u = ChanUses::default();
        u.note(0, TaskId(1), 500);
        u.note(0, TaskId(1), 900); // its plan now: the 500 is gone
        assert_eq!(u.first_other(0, TaskId(2)), 900);
        for (t, at) in [(2, 300), (3, 700), (4, 800)] {
            u.note(0, TaskId(t), at);
        }
        // Full (900, 300, 700, 800): a later use is dropped, an earlier one
        // replaces the latest.
        u.note(0, TaskId(5), 1000);
        assert_eq!(u.first_other(0, TaskId(2)), 700);
        u.note(0, TaskId(6), 200);
        assert_eq!(u.first_other(0, TaskId(9)), 200);
        let mut kept = u.at;
        kept.sort_unstable();
        assert_eq!(kept, [200, 300, 700, 800], "the 900 was replaced");
        // A passed slot is free again.
        u.note(750, TaskId(7), 760);
        assert_eq!(u.first_other(750, TaskId(9)), 760);
        assert_eq!(u.first_other(761, TaskId(9)), 800);
    }
}

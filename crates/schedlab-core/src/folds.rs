//! The pending syscall folds' bookkeeping (issue 17): per CPU the fold
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

/// Pending folds, per CPU, and what the engine needs to settle them.
#[derive(Debug, Default)]
pub(crate) struct Folds {
    /// Per CPU.
    pub cpu: Vec<Fold>,
    /// Per channel: the CPU whose pending fold has a landing on it.
    pub chan: Vec<Option<CpuId>>,
    /// Per CPU: generations of split folds' events, dropped uncounted
    /// (pushed by [`Folds::add_phantom`], taken by [`Folds::take_phantom`]).
    phantoms: Vec<Vec<u32>>,
    /// How many `phantoms` there are on all CPUs: the engine looks at a
    /// CPU's list only when some exist (issue 17: the per-CPU list's
    /// header was a load per `BurstEnd`, cold on 512 CPUs).
    pub phantom_count: usize,
    /// Pending folds.
    pub active: usize,
    /// The largest (time << 64 | tie key) popped so far.
    pub hw: u128,
    /// The landings of the fold being decided (a reused buffer).
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

//! Group scheduling on the simulator: walking a task's entities from its own queue up to
//! `rq->cfs`, hierarchical task counts, group entity weights
//! (`update_cfs_group`), group load publishing and `task_h_load`, and
//! moving a task between groups (`sched_move_task`).
//!
//! Kernel reference: fair.c `for_each_sched_entity`, `find_matching_se`,
//! `update_cfs_group`, `update_tg_load_avg`, `task_h_load`,
//! core.c `sched_move_task` (kernel-model.md §13). The arithmetic is in
//! `fair::group`; bandwidth control in `sched/bandwidth.rs`.
//!
//! Deviations:
//! * Group entities are never delayed (DELAY_DEQUEUE acts on task entities
//!   only): a group entity leaves its parent as soon as its queue is empty.
//! * A group entity's slice stays the base slice (no `cfs_rq_min_slice`
//!   propagation of custom slices up the hierarchy).
//! * The root-level task load the balancer moves is the task's own
//!   `load_avg` (as without CONFIG_FAIR_GROUP_SCHED); tasks in groups use
//!   `task_h_load`.

use crate::fair::eevdf::EnqueueKind;
use crate::fair::group::{calc_group_shares, tg_load_delta, TaskGroup};
use crate::ids::{CfsRqId, CpuId, EntityId, GroupId, TaskId};
use crate::observe::Sink;
use crate::rq::Class;
use crate::sim::{SchedState, Sim};
use crate::task::TaskState;

/// Deepest hierarchy accepted (levels below the root).
pub const MAX_GROUP_DEPTH: usize = 15;

/// A task's entities from its own up to depth 0 (at most
/// `MAX_GROUP_DEPTH + 1`), without allocating.
#[derive(Copy, Clone, Debug)]
pub struct SePath {
    ents: [EntityId; MAX_GROUP_DEPTH + 1],
    len: usize,
}

impl SePath {
    /// Bottom-up: the task's entity first.
    pub fn as_slice(&self) -> &[EntityId] {
        &self.ents[..self.len]
    }
}

/// The group a path names.
pub(crate) fn group_by_path(groups: &[TaskGroup], path: &str) -> Option<GroupId> {
    groups
        .iter()
        .position(|g| g.path == path)
        .map(|i| GroupId(i as u32))
}

/// Walks of the entity hierarchy that need nothing but the scheduler state.
impl SchedState {
    /// The queue task `t`'s entity sits on: its group's queue on its CPU.
    #[inline]
    pub(crate) fn task_cfs_rq(&self, t: TaskId) -> CfsRqId {
        self.ents[self.tasks[t.idx()].se.idx()].cfs_rq
    }

    /// `cfs_rq_of(se)`.
    #[inline]
    pub(crate) fn se_cfs_rq(&self, e: EntityId) -> CfsRqId {
        self.ents[e.idx()].cfs_rq
    }

    /// `parent_entity(se)`.
    #[inline]
    pub(crate) fn se_parent(&self, e: EntityId) -> Option<EntityId> {
        self.ents[e.idx()].parent
    }

    /// `set_task_rq`: point a task's entity at its group's queue and group
    /// entity on its CPU (after a CPU or group change).
    pub(crate) fn set_task_rq(&mut self, t: TaskId) {
        let task = &self.tasks[t.idx()];
        let g = &self.groups[task.group.idx()];
        let (q, parent, depth) = (
            g.cfs_rq[task.cpu.idx()],
            g.se.get(task.cpu.idx()).copied(),
            g.depth,
        );
        let se = &mut self.ents[task.se.idx()];
        if self.cfs_p.active && !se.on_rq {
            // CFS: a sleeping task's vruntime moves with the min_vruntime
            // of its queue (migrate_task_rq_fair's renormalisation).
            crate::fair::cfs::renormalize(&self.cfs, se, se.cfs_rq, q);
        }
        se.cfs_rq = q;
        se.parent = parent;
        se.depth = depth;
    }

    /// `t`'s entities, its own first, up to depth 0.
    pub(crate) fn task_path(&self, t: TaskId) -> SePath {
        let mut p = SePath {
            ents: [EntityId(0); MAX_GROUP_DEPTH + 1],
            len: 0,
        };
        let mut e = Some(self.tasks[t.idx()].se);
        while let Some(x) = e {
            p.ents[p.len] = x;
            p.len += 1;
            e = self.se_parent(x);
        }
        p
    }

    /// Entity depth (`se->depth`).
    #[inline]
    pub(crate) fn se_depth(&self, e: EntityId) -> u32 {
        self.ents[e.idx()].depth
    }

    /// `find_matching_se`: walks `se` and `pse` up to the first level where
    /// they share a queue.
    pub(crate) fn find_matching_se(
        &self,
        mut se: EntityId,
        mut pse: EntityId,
    ) -> (EntityId, EntityId) {
        let (mut d, mut pd) = (self.se_depth(se), self.se_depth(pse));
        while d > pd {
            se = self.se_parent(se).expect("depth > 0 has a parent");
            d -= 1;
        }
        while pd > d {
            pse = self.se_parent(pse).expect("depth > 0 has a parent");
            pd -= 1;
        }
        while self.se_cfs_rq(se) != self.se_cfs_rq(pse) {
            se = self
                .se_parent(se)
                .expect("same depth, different queues: not at root");
            pse = self
                .se_parent(pse)
                .expect("same depth, different queues: not at root");
        }
        (se, pse)
    }

    /// Queued tasks of `cpu` that are not running (the kernel's
    /// `cfs_tasks` minus curr), found by walking the queues: the tasks of
    /// every timeline, down through the group entities waiting there and
    /// the group entity running at each level. The reference `--check`
    /// compares [`Self::cfs_tasks_from_tail`] with; the simulator itself
    /// walks the list.
    pub(crate) fn queued_tasks(&self, cpu: CpuId) -> Vec<TaskId> {
        let mut out = Vec::new();
        self.walk_queue(self.rqs[cpu.idx()].cfs, &mut out);
        out
    }

    fn walk_queue(&self, q: CfsRqId, out: &mut Vec<TaskId>) {
        let c = &self.cfs[q.idx()];
        for (_, e) in &c.timeline {
            let se = &self.ents[e.idx()];
            match (se.task, se.my_q) {
                (Some(t), _) => out.push(t),
                (None, Some(mq)) => self.walk_queue(mq, out),
                (None, None) => {}
            }
        }
        if let Some(e) = c.curr {
            if let Some(mq) = self.ents[e.idx()].my_q {
                self.walk_queue(mq, out);
            }
        }
    }

    /// Does the queue walk ([`Self::queued_tasks`]) visit `t`? Its
    /// entity waits in its queue's timeline (queued, and not that queue's
    /// curr), and every group entity above it is in its parent's timeline
    /// or is its parent's curr. Under legacy throttling a throttled group's
    /// entity is neither, so its tasks are not visited although they stay
    /// on `cfs_tasks` (as in the kernel, where `can_migrate_task` refuses
    /// them).
    pub(crate) fn walk_visits(&self, t: TaskId) -> bool {
        let e = self.tasks[t.idx()].se;
        let se = &self.ents[e.idx()];
        let mut q = se.cfs_rq;
        if !se.on_rq || self.cfs[q.idx()].curr == Some(e) {
            return false;
        }
        while let Some(ge) = self.cfs[q.idx()].se {
            let g = &self.ents[ge.idx()];
            q = g.cfs_rq;
            if !g.on_rq && self.cfs[q.idx()].curr != Some(ge) {
                return false;
            }
        }
        true
    }

    /// The queued, not running tasks of `cpu` (those
    /// [`Self::queued_tasks`] finds), least recently enqueued or
    /// picked first: `cfs_tasks` from the tail, less the tasks the queue
    /// walk would not visit (curr, tasks under a throttled group). Visits
    /// only the list entries up to the last task taken.
    pub(crate) fn cfs_tasks_from_tail(&self, cpu: CpuId) -> impl Iterator<Item = TaskId> + '_ {
        self.cfs_tasks
            .from_tail(cpu)
            .filter(move |&t| self.walk_visits(t))
    }

    /// The class of `t` (from its effective prio).
    #[inline]
    pub(crate) fn class_of(&self, t: TaskId) -> Class {
        Class::of_prio(self.tasks[t.idx()].prio)
    }
}

impl<S: Sink> Sim<S> {
    /// Adds to the hierarchical task counts from queue `q` upward. Above an
    /// idle group every task counts as idle. Under legacy throttling the
    /// walk stops at a throttled queue (its group entity is off its parent).
    /// Returns true when the walk reached the root (the caller changes
    /// `rq->nr_running`).
    pub(crate) fn add_h_counts(&mut self, mut q: CfsRqId, dq: i32, dr: i32, mut di: i32) -> bool {
        let legacy = self.cfg.features.throttle == crate::features::Throttle::Legacy;
        loop {
            let c = &mut self.sched.cfs[q.idx()];
            c.h_nr_queued = c.h_nr_queued.wrapping_add_signed(dq);
            c.h_nr_runnable = c.h_nr_runnable.wrapping_add_signed(dr);
            c.h_nr_idle = c.h_nr_idle.wrapping_add_signed(di);
            if self.sched.groups[c.tg.idx()].idle {
                di = dq;
            }
            if legacy && c.bw.throttled {
                return false;
            }
            match c.se {
                None => return true,
                Some(ge) => q = self.sched.ents[ge.idx()].cfs_rq,
            }
        }
    }

    /// PELT of entity `e` and of the queue it sits on, up to `now`.
    pub(crate) fn update_load_avg_se(&mut self, e: EntityId) {
        let now = self.now;
        let q = self.sched.se_cfs_rq(e);
        let (running, runnable) = {
            let cfs = &self.sched.cfs[q.idx()];
            let se = &self.sched.ents[e.idx()];
            let runnable = match se.my_q {
                Some(mq) => self.sched.cfs[mq.idx()].h_nr_runnable as u64,
                None => se.on_rq as u64,
            };
            (cfs.curr == Some(e), runnable)
        };
        let se = &mut self.sched.ents[e.idx()];
        let on = se.on_rq as u64;
        se.avg.update(now, on, runnable.min(1), running, se.weight);
        let cfs = &mut self.sched.cfs[q.idx()];
        // The averages change only when a period boundary is crossed.
        let refreshed = cfs.avg.update(
            now,
            cfs.load_weight,
            cfs.h_nr_queued as u64,
            cfs.curr.is_some(),
            1,
        );
        if refreshed {
            self.lb_refresh_cfs(q);
        }
        self.update_tg_load_avg(q);
    }

    /// `update_tg_load_avg`: publish a group queue's load into its group.
    fn update_tg_load_avg(&mut self, q: CfsRqId) {
        let c = &self.sched.cfs[q.idx()];
        if c.se.is_none() {
            return;
        }
        if let Some(d) = tg_load_delta(
            c.avg.load_avg,
            c.tg_load_avg_contrib,
            self.now,
            c.last_tg_update,
        ) {
            let tg = c.tg;
            let c = &mut self.sched.cfs[q.idx()];
            c.tg_load_avg_contrib = c.avg.load_avg;
            c.last_tg_update = self.now;
            let g = &mut self.sched.groups[tg.idx()];
            g.load_avg = g.load_avg.saturating_add_signed(d);
        }
    }

    /// `update_cfs_group`: recompute group entity `ge`'s weight from its
    /// queue's load and reweight it on its parent queue.
    pub(crate) fn update_cfs_group(&mut self, ge: EntityId) {
        let Some(gq) = self.sched.ents[ge.idx()].my_q else {
            return;
        };
        let c = &self.sched.cfs[gq.idx()];
        let g = &self.sched.groups[c.tg.idx()];
        let shares = calc_group_shares(
            g.effective_shares(),
            c.load_weight,
            c.avg.load_avg,
            g.load_avg,
            c.tg_load_avg_contrib,
        );
        if shares == self.sched.ents[ge.idx()].weight {
            return;
        }
        let pq = self.sched.ents[ge.idx()].cfs_rq;
        self.fair_reweight_entity(pq, ge, shares);
    }

    /// `task_h_load`: the share of its CPU's root load a task stands for.
    pub(crate) fn task_h_load(&self, t: TaskId) -> u64 {
        let se = self.sched.tasks[t.idx()].se;
        let load = self.sched.ents[se.idx()].avg.load_avg;
        let mut q = self.sched.task_cfs_rq(t);
        if self.sched.cfs[q.idx()].se.is_none() {
            return load;
        }
        // h_load(q) = h_load(parent) × ge.load_avg / (parent.load_avg + 1),
        // h_load(root) = root.load_avg; computed top-down along the path.
        let mut chain = Vec::with_capacity(4);
        while let Some(ge) = self.sched.cfs[q.idx()].se {
            chain.push((q, ge));
            q = self.sched.ents[ge.idx()].cfs_rq;
        }
        let mut h = self.sched.cfs[q.idx()].avg.load_avg as u128;
        let mut parent_load = self.sched.cfs[q.idx()].avg.load_avg as u128;
        for &(cq, ge) in chain.iter().rev() {
            h = h * self.sched.ents[ge.idx()].avg.load_avg as u128 / (parent_load + 1);
            parent_load = self.sched.cfs[cq.idx()].avg.load_avg as u128;
        }
        (load as u128 * h / (parent_load + 1)) as u64
    }

    /// `sched_move_task`: the running task `t` of `cpu` moves to group `g`
    /// (rt-app's phase-level `taskgroup`). It is taken off its hierarchy,
    /// re-queued in the new one and stays curr; a reschedule lets the pick
    /// decide between it and the rest.
    pub(crate) fn move_task_group(&mut self, cpu: CpuId, t: TaskId, g: GroupId) {
        if self.sched.tasks[t.idx()].group == g {
            return;
        }
        debug_assert_eq!(self.sched.rqs[cpu.idx()].curr, Some(t));
        self.update_curr_task(cpu);
        let fair = self.sched.class_of(t) == crate::rq::Class::Fair;
        if fair {
            self.put_prev_task_fair(t, None);
        }
        self.dequeue_task(t, false);
        self.sched.tasks[t.idx()].group = g;
        self.sched.set_task_rq(t);
        self.enqueue_task(t, cpu, EnqueueKind::Migrate);
        if fair {
            self.set_next_task_fair(t, None);
        }
        debug_assert_eq!(self.sched.tasks[t.idx()].state, TaskState::Runnable);
        self.resched_curr(cpu, true, cpu);
    }
}

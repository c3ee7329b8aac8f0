//! `rq->cfs_tasks`: each CPU's list of its queued fair tasks, the most
//! recently enqueued or picked at the head. The kernel adds a task at the
//! head in `account_entity_enqueue`, moves it to the head when
//! `pick_next_task_fair` picks it and takes it off in
//! `account_entity_dequeue`; `detach_tasks` (and STEAL's
//! `detach_next_task`) walk it from the tail, least recently run first,
//! and look at no more than `sched_nr_migrate` tasks.
//!
//! Intrusive and allocation-free: one `next`/`prev` link per task and a
//! head and tail per CPU, all indices into the task table, so adding,
//! moving and removing a task are O(1) and a walk from the tail visits
//! only the tasks it looks at. Plain state: the simulator decides when a
//! task goes in, moves or leaves (`sched/fair.rs`, `sched/core.rs`).

use crate::ids::{CpuId, TaskId};

/// No task / no CPU.
const NIL: u32 = u32::MAX;

/// Every CPU's `cfs_tasks` list.
#[derive(Clone, Debug, Default)]
pub struct CfsTasks {
    /// Per CPU: the task at the head (most recently enqueued or picked).
    head: Vec<u32>,
    /// Per CPU: the task at the tail (least recently).
    tail: Vec<u32>,
    /// Per task: its neighbour towards the tail.
    next: Vec<u32>,
    /// Per task: its neighbour towards the head.
    prev: Vec<u32>,
    /// Per task: the CPU whose list holds it.
    on: Vec<u32>,
}

impl CfsTasks {
    /// Empty lists for `nr_cpus` CPUs and `nr_tasks` tasks.
    pub fn new(nr_cpus: usize, nr_tasks: usize) -> Self {
        CfsTasks {
            head: vec![NIL; nr_cpus],
            tail: vec![NIL; nr_cpus],
            next: vec![NIL; nr_tasks],
            prev: vec![NIL; nr_tasks],
            on: vec![NIL; nr_tasks],
        }
    }

    /// The CPU whose list holds `t`, if any.
    #[inline]
    pub fn cpu_of(&self, t: TaskId) -> Option<CpuId> {
        let c = self.on[t.idx()];
        (c != NIL).then_some(CpuId(c))
    }

    /// Puts `t` at the head of `cpu`'s list (`list_move` / `list_add`),
    /// taking it off the list it was on.
    pub fn move_to_head(&mut self, cpu: CpuId, t: TaskId) {
        self.remove(t);
        let c = cpu.idx();
        let old = self.head[c];
        self.next[t.idx()] = old;
        self.prev[t.idx()] = NIL;
        if old == NIL {
            self.tail[c] = t.0;
        } else {
            self.prev[old as usize] = t.0;
        }
        self.head[c] = t.0;
        self.on[t.idx()] = cpu.0;
    }

    /// Takes `t` off its list (`list_del_init`); nothing if it is on none.
    pub fn remove(&mut self, t: TaskId) {
        let c = self.on[t.idx()];
        if c == NIL {
            return;
        }
        let c = c as usize;
        let (p, n) = (self.prev[t.idx()], self.next[t.idx()]);
        if p == NIL {
            self.head[c] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail[c] = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.next[t.idx()] = NIL;
        self.prev[t.idx()] = NIL;
        self.on[t.idx()] = NIL;
    }

    /// `cpu`'s list from the tail (least recently enqueued or picked
    /// first) to the head.
    pub fn from_tail(&self, cpu: CpuId) -> FromTail<'_> {
        FromTail {
            list: self,
            at: self.tail[cpu.idx()],
        }
    }

    /// `cpu`'s list from the head to the tail.
    pub fn from_head(&self, cpu: CpuId) -> impl Iterator<Item = TaskId> + '_ {
        let mut at = self.head[cpu.idx()];
        std::iter::from_fn(move || {
            (at != NIL).then(|| {
                let t = at;
                at = self.next[t as usize];
                TaskId(t)
            })
        })
    }
}

/// A walk of one CPU's list from its tail ([`CfsTasks::from_tail`]).
pub struct FromTail<'a> {
    list: &'a CfsTasks,
    at: u32,
}

impl Iterator for FromTail<'_> {
    type Item = TaskId;

    #[inline]
    fn next(&mut self) -> Option<TaskId> {
        if self.at == NIL {
            return None;
        }
        let t = self.at;
        self.at = self.list.prev[t as usize];
        Some(TaskId(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tail_first(l: &CfsTasks, cpu: u32) -> Vec<u32> {
        l.from_tail(CpuId(cpu)).map(|t| t.0).collect()
    }

    fn head_first(l: &CfsTasks, cpu: u32) -> Vec<u32> {
        l.from_head(CpuId(cpu)).map(|t| t.0).collect()
    }

    #[test]
    fn the_tail_is_the_least_recently_moved() {
        let mut l = CfsTasks::new(2, 5);
        for t in [3, 1, 4] {
            l.move_to_head(CpuId(0), TaskId(t));
        }
        assert_eq!(tail_first(&l, 0), vec![3, 1, 4]);
        assert_eq!(head_first(&l, 0), vec![4, 1, 3]);
        // A pick moves it to the head.
        l.move_to_head(CpuId(0), TaskId(3));
        assert_eq!(tail_first(&l, 0), vec![1, 4, 3]);
        // Moving the head again changes nothing.
        l.move_to_head(CpuId(0), TaskId(3));
        assert_eq!(tail_first(&l, 0), vec![1, 4, 3]);
        assert_eq!(l.cpu_of(TaskId(1)), Some(CpuId(0)));
        assert_eq!(l.cpu_of(TaskId(0)), None);
        assert!(tail_first(&l, 1).is_empty());
    }

    #[test]
    fn removal_from_head_middle_tail_and_none() {
        let mut l = CfsTasks::new(1, 5);
        for t in 0..5 {
            l.move_to_head(CpuId(0), TaskId(t));
        }
        l.remove(TaskId(2));
        assert_eq!(tail_first(&l, 0), vec![0, 1, 3, 4]);
        l.remove(TaskId(0));
        assert_eq!(tail_first(&l, 0), vec![1, 3, 4]);
        l.remove(TaskId(4));
        assert_eq!(tail_first(&l, 0), vec![1, 3]);
        assert_eq!(head_first(&l, 0), vec![3, 1]);
        // Not on a list: nothing happens.
        l.remove(TaskId(4));
        assert_eq!(tail_first(&l, 0), vec![1, 3]);
        l.remove(TaskId(1));
        l.remove(TaskId(3));
        assert!(tail_first(&l, 0).is_empty());
        assert!(head_first(&l, 0).is_empty());
        assert_eq!(l.cpu_of(TaskId(3)), None);
        // The emptied list takes tasks again.
        l.move_to_head(CpuId(0), TaskId(2));
        assert_eq!(tail_first(&l, 0), vec![2]);
    }

    #[test]
    fn a_migrated_task_leaves_its_old_list() {
        let mut l = CfsTasks::new(2, 4);
        for t in 0..3 {
            l.move_to_head(CpuId(0), TaskId(t));
        }
        l.move_to_head(CpuId(1), TaskId(3));
        l.move_to_head(CpuId(1), TaskId(1));
        assert_eq!(tail_first(&l, 0), vec![0, 2]);
        assert_eq!(tail_first(&l, 1), vec![3, 1]);
        assert_eq!(l.cpu_of(TaskId(1)), Some(CpuId(1)));
    }

    /// Against a plain vector model over random operations.
    #[test]
    fn random_operations_match_a_vector() {
        let (cpus, tasks) = (3usize, 12usize);
        let mut l = CfsTasks::new(cpus, tasks);
        // Per CPU, head first.
        let mut model: Vec<Vec<u32>> = vec![Vec::new(); cpus];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = (x % tasks as u64) as u32;
            let c = ((x >> 20) % cpus as u64) as u32;
            for m in model.iter_mut() {
                m.retain(|&y| y != t);
            }
            if (x >> 40) % 3 == 0 {
                l.remove(TaskId(t));
            } else {
                l.move_to_head(CpuId(c), TaskId(t));
                model[c as usize].insert(0, t);
            }
            for c in 0..cpus as u32 {
                assert_eq!(head_first(&l, c), model[c as usize]);
                let mut rev = model[c as usize].clone();
                rev.reverse();
                assert_eq!(tail_first(&l, c), rev);
            }
        }
    }
}

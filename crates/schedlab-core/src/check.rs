//! `--check`: invariants verified after every event. A violation is a bug
//! in the model, reported with the time and the event that exposed it.

use crate::fair::eevdf;
use crate::ids::{CpuId, EntityId, TaskId};
use crate::observe::Sink;
use crate::sim::Sim;
use crate::task::TaskState;

/// Runs every check; the first failure's message.
pub fn check_all<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    task_in_at_most_one_runqueue(sim)?;
    runqueue_counts_match(sim)?;
    vruntime_sums_consistent(sim)?;
    cpu_time_adds_up(sim)?;
    overload_bitmaps_match(sim)?;
    idle_cpu_with_work_is_woken(sim)?;
    bandwidth_within_quota(sim)?;
    affinity_counts_match(sim)?;
    cfs_tasks_match_the_queues(sim)?;
    addressed_tokens_pair(sim)?;
    lb_snapshots_match(sim)?;
    Ok(())
}

/// The load-balance snapshot array (`sched/lb_snapshot.rs`) holds what
/// the runqueues say, for every CPU after the event, and every entry read
/// during it was current when read.
pub fn lb_snapshots_match<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    let s = &sim.sched;
    if let Some(cpu) = s.lb_stale_read.get() {
        return Err(format!(
            "CPU {cpu}: balancing read a stale load-balance snapshot"
        ));
    }
    for rq in &s.rqs {
        let cpu = rq.cpu;
        let fresh = s.lb_snapshot_fresh(cpu, sim.machine.cpu(cpu).capacity as u64);
        let have = s.lb_cpus[cpu.idx()];
        if have != fresh {
            return Err(format!(
                "CPU {cpu}: load-balance snapshot {have:?}, runqueues say {fresh:?}"
            ));
        }
        let (have, fresh) = (s.nohz_idle.test(cpu), s.nohz_idle_fresh(cpu));
        if have != fresh {
            return Err(format!(
                "CPU {cpu}: in the NOHZ idle mask {have}, idle with its tick stopped {fresh}"
            ));
        }
    }
    if let Some(id) = s.lb_stale_sum.get() {
        return Err(format!(
            "group span {id} (CPUs {}): balancing read stale load-balance sums",
            s.domains.group_spans[id as usize].to_list()
        ));
    }
    // The snapshot entries are current (above): every kept sum is theirs.
    for (id, span) in s.domains.group_spans.iter().enumerate() {
        if !s.lb_sum_kept[id] {
            continue;
        }
        let have = s.lb_sums[id];
        let fresh = crate::fair::select::LbSums::of(span, |c| s.lb_cpus[c.idx()]);
        if have != fresh {
            return Err(format!(
                "group span {id} (CPUs {}): load-balance sums {have:?}, its CPUs' snapshots sum to {fresh:?}",
                span.to_list()
            ));
        }
    }
    Ok(())
}

/// An addressed semaphore (`Op::SemSend`) holds one reply address per
/// token not yet taken.
pub fn addressed_tokens_pair<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    for (i, s) in sim.prog.sems.iter().enumerate() {
        if s.addressed && s.addresses.len() as u64 != s.count {
            return Err(format!(
                "semaphore {i}: {} tokens but {} reply addresses",
                s.count,
                s.addresses.len()
            ));
        }
    }
    Ok(())
}

/// Each CPU's `cfs_tasks` list holds exactly its queued fair tasks (entity
/// on a queue of that CPU, delayed ones and curr included), in
/// `cfs_tasks_stamp` order, the largest at the head; and walked from the
/// tail, less the tasks the queue walk does not visit, it is that walk
/// sorted by stamp: the candidates load balancing and STEAL look at.
pub fn cfs_tasks_match_the_queues<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    let s = &sim.sched;
    let name = |t: TaskId| &s.tasks[t.idx()].spec.name;
    for rq in &s.rqs {
        let cpu = rq.cpu;
        let mut above: Option<u64> = None;
        for (i, t) in s.cfs_tasks.from_head(cpu).enumerate() {
            let task = &s.tasks[t.idx()];
            if i >= s.tasks.len() || s.cfs_tasks.cpu_of(t) != Some(cpu) {
                return Err(format!("CPU {cpu}: cfs_tasks is not a list of its own"));
            }
            let class = s.class_of(t);
            let queued = s.ents[task.se.idx()].on_rq;
            if task.cpu != cpu || class != crate::rq::Class::Fair || !queued {
                return Err(format!(
                    "CPU {cpu}: task {} is on its cfs_tasks but is {class:?} on CPU {}, queued {queued}",
                    name(t),
                    task.cpu
                ));
            }
            if above.is_some_and(|a| a <= task.cfs_tasks_stamp) {
                return Err(format!(
                    "CPU {cpu}: cfs_tasks out of stamp order at task {} (stamp {}, the one nearer the head {})",
                    name(t),
                    task.cfs_tasks_stamp,
                    above.unwrap_or(0)
                ));
            }
            above = Some(task.cfs_tasks_stamp);
        }
        let mut walk: Vec<(u64, TaskId)> = s
            .queued_tasks(cpu)
            .into_iter()
            .map(|t| (s.tasks[t.idx()].cfs_tasks_stamp, t))
            .collect();
        walk.sort_unstable();
        let walk: Vec<TaskId> = walk.into_iter().map(|(_, t)| t).collect();
        let listed: Vec<TaskId> = s.cfs_tasks_from_tail(cpu).collect();
        if listed != walk {
            return Err(format!(
                "CPU {cpu}: cfs_tasks from the tail {:?}, the queue walk by stamp {:?}",
                listed.iter().map(|&t| name(t)).collect::<Vec<_>>(),
                walk.iter().map(|&t| name(t)).collect::<Vec<_>>()
            ));
        }
    }
    for task in &s.tasks {
        let fair = s.class_of(task.id) == crate::rq::Class::Fair;
        if fair && s.ents[task.se.idx()].on_rq && s.cfs_tasks.cpu_of(task.id) != Some(task.cpu) {
            return Err(format!(
                "task {} is queued on CPU {} but on cfs_tasks of {:?}",
                task.spec.name,
                task.cpu,
                s.cfs_tasks.cpu_of(task.id)
            ));
        }
    }
    Ok(())
}

/// Every task's cached `nr_cpus_allowed` is the weight of its mask.
pub fn affinity_counts_match<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    for t in &sim.sched.tasks {
        if t.nr_cpus_allowed as usize != t.cpus_allowed.weight() {
            return Err(format!(
                "task {}: nr_cpus_allowed {} but {} CPUs allowed",
                t.spec.name,
                t.nr_cpus_allowed,
                t.cpus_allowed.weight()
            ));
        }
    }
    Ok(())
}

/// Bandwidth: a group's pool never holds more than quota + burst, and the
/// runtime handed out in one period (net of slack returned) never exceeds
/// quota + burst; the throttled list and the queues' flags agree.
pub fn bandwidth_within_quota<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    for g in &sim.sched.groups {
        let Some(b) = &g.bw else { continue };
        if b.runtime > b.cap() || b.handed_out > b.cap() {
            return Err(format!(
                "group {}: pool {} ns, handed out {} ns this period, quota+burst {} ns",
                g.path,
                b.runtime,
                b.handed_out,
                b.cap()
            ));
        }
        for &q in &g.cfs_rq {
            let listed = b.throttled.contains(&q);
            if listed != sim.sched.cfs[q.idx()].bw.throttled {
                return Err(format!(
                    "group {} CPU {}: throttled {} but on the throttled list: {listed}",
                    g.path,
                    sim.sched.cfs[q.idx()].cpu,
                    sim.sched.cfs[q.idx()].bw.throttled
                ));
            }
        }
    }
    Ok(())
}

/// An idle CPU with runnable tasks has a reschedule on its way (else the
/// tasks would wait for ever: a lost wakeup).
pub fn idle_cpu_with_work_is_woken<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    for rq in &sim.sched.rqs {
        let stuck = if rq.rt.throttled {
            rq.rt.queue.len() as u32
        } else {
            0
        };
        if rq.curr.is_none() && rq.nr_running > stuck && rq.resched_posted.is_none() {
            return Err(format!(
                "CPU {} is idle with {} runnable tasks and no reschedule pending",
                rq.cpu, rq.nr_running
            ));
        }
    }
    Ok(())
}

/// STEAL's per-LLC overload bitmap holds exactly the CPUs with at least
/// two runnable fair tasks.
pub fn overload_bitmaps_match<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    for rq in &sim.sched.rqs {
        let Some(i) = sim.sched.domains.shortcuts(rq.cpu).llc_shared else {
            continue;
        };
        let nr = sim.sched.cfs[rq.cfs.idx()].h_nr_runnable;
        let set = sim.sched.llc_state[i].overload.test(rq.cpu);
        if set != (nr >= 2) {
            return Err(format!(
                "CPU {}: overload bit {set} with {nr} runnable tasks",
                rq.cpu
            ));
        }
    }
    Ok(())
}

/// Every queued entity is in exactly one cfs_rq (timeline or curr), and it
/// is the queue of its task's CPU; sleeping and dead tasks are in none.
pub fn task_in_at_most_one_runqueue<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    let mut seen: Vec<Option<usize>> = vec![None; sim.sched.ents.len()];
    for (qi, q) in sim.sched.cfs.iter().enumerate() {
        let listed = q
            .timeline
            .iter()
            .map(|(_, id)| id)
            .chain(q.curr.filter(|c| sim.sched.ents[c.idx()].on_rq));
        for id in listed {
            if let Some(prev) = seen[id.idx()] {
                return Err(format!(
                    "entity {id} is queued on cfs_rq {prev} and cfs_rq {qi}"
                ));
            }
            seen[id.idx()] = Some(qi);
        }
        if let Some(c) = q.curr {
            if q.timeline.iter().any(|(_, id)| id == c) {
                return Err(format!(
                    "cfs_rq {qi}: curr entity {c} is also in the timeline"
                ));
            }
        }
    }
    let mut running_on: Vec<Option<CpuId>> = vec![None; sim.sched.tasks.len()];
    for rq in &sim.sched.rqs {
        if let Some(t) = rq.curr {
            if let Some(other) = running_on[t.idx()] {
                return Err(format!(
                    "task {} runs on CPU {other} and CPU {}",
                    sim.sched.tasks[t.idx()].spec.name,
                    rq.cpu
                ));
            }
            running_on[t.idx()] = Some(rq.cpu);
            let task = &sim.sched.tasks[t.idx()];
            if task.cpu != rq.cpu {
                return Err(format!(
                    "task {} runs on CPU {} but says CPU {}",
                    task.spec.name, rq.cpu, task.cpu
                ));
            }
        }
    }
    for task in &sim.sched.tasks {
        let q = seen[task.se.idx()];
        let class = sim.sched.class_of(task.id);
        if class != crate::rq::Class::Fair {
            // RT / deadline: on its CPU's queue of that class iff runnable
            // (a throttled deadline task waits for its timer off-queue).
            let rq = &sim.sched.rqs[task.cpu.idx()];
            let on_rt = rq.rt.queue.iter().any(|&(_, _, t)| t == task.id);
            let on_dl = rq.dl.queue.iter().any(|&(_, _, t)| t == task.id);
            let want_rt = task.state == TaskState::Runnable && class == crate::rq::Class::Rt;
            let want_dl = task.state == TaskState::Runnable
                && class == crate::rq::Class::Dl
                && !task.dl.throttled;
            if q.is_some() || on_rt != want_rt || on_dl != want_dl {
                return Err(format!(
                    "{:?} task {} is {:?}: on a cfs_rq {:?}, on the RT queue {on_rt}, on the deadline queue {on_dl}",
                    class, task.spec.name, task.state, q
                ));
            }
            for (c, other) in sim.sched.rqs.iter().enumerate() {
                if c != task.cpu.idx()
                    && (other.rt.queue.iter().any(|&(_, _, t)| t == task.id)
                        || other.dl.queue.iter().any(|&(_, _, t)| t == task.id))
                {
                    return Err(format!(
                        "task {} is queued on CPU {c}, not its CPU {}",
                        task.spec.name, task.cpu
                    ));
                }
            }
            continue;
        }
        let g = &sim.sched.groups[task.group.idx()];
        let want = g.cfs_rq[task.cpu.idx()].idx();
        let se = &sim.sched.ents[task.se.idx()];
        if se.cfs_rq.idx() != want
            || se.parent != g.se.get(task.cpu.idx()).copied()
            || se.depth != g.depth
        {
            return Err(format!(
                "task {}: its entity points at cfs_rq {} / parent {:?}, not its group's on CPU {}",
                task.spec.name, se.cfs_rq, se.parent, task.cpu
            ));
        }
        match task.state {
            TaskState::Runnable => {
                if q != Some(want) {
                    return Err(format!(
                        "runnable task {} is not queued on its group's queue of CPU {}",
                        task.spec.name, task.cpu
                    ));
                }
            }
            TaskState::Sleeping if sim.sched.ents[task.se.idx()].sched_delayed => {
                if q != Some(want) {
                    return Err(format!(
                        "delayed task {} is not queued on CPU {}",
                        task.spec.name, task.cpu
                    ));
                }
            }
            _ => {
                if let Some(q) = q {
                    return Err(format!(
                        "task {} is {:?} but queued on cfs_rq {q}",
                        task.spec.name, task.state
                    ));
                }
                if sim.sched.ents[task.se.idx()].sched_delayed {
                    return Err(format!(
                        "task {} is {:?} and marked delayed",
                        task.spec.name, task.state
                    ));
                }
                let parked = sim.sched.cfs[want].bw.limbo.contains(&task.id);
                if parked != (task.state == TaskState::Throttled) {
                    return Err(format!(
                        "task {} is {:?} but on its queue's limbo list: {parked}",
                        task.spec.name, task.state
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `nr_running`, `nr_queued`, `h_nr_queued`, `h_nr_idle` and `load_weight`
/// agree with what is queued.
pub fn runqueue_counts_match<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    let legacy = sim.cfg.features.throttle == crate::features::Throttle::Legacy;
    for (qi, q) in sim.sched.cfs.iter().enumerate() {
        let mut ents: Vec<EntityId> = q.timeline.iter().map(|(_, id)| id).collect();
        if let Some(c) = q.curr.filter(|c| sim.sched.ents[c.idx()].on_rq) {
            ents.push(c);
        }
        let n = ents.len() as u32;
        let w: u64 = ents.iter().map(|e| sim.sched.ents[e.idx()].weight).sum();
        // Hierarchical counts: tasks queued here plus what queued group
        // entities stand for (above an idle group every task is idle).
        let (mut hq, mut hr, mut hi) = (0u32, 0u32, 0u32);
        for e in &ents {
            let se = &sim.sched.ents[e.idx()];
            match se.my_q {
                None => {
                    hq += 1;
                    hr += !se.sched_delayed as u32;
                    hi += se.idle as u32;
                }
                Some(c) => {
                    let cq = &sim.sched.cfs[c.idx()];
                    hq += cq.h_nr_queued;
                    hr += cq.h_nr_runnable;
                    hi += if sim.sched.groups[cq.tg.idx()].idle {
                        cq.h_nr_queued
                    } else {
                        cq.h_nr_idle
                    };
                }
            }
        }
        let cpu = q.cpu;
        let path = sim.sched.groups[q.tg.idx()].path.as_str();
        if q.nr_queued != n || q.h_nr_queued != hq || q.h_nr_runnable != hr || q.h_nr_idle != hi {
            return Err(format!(
                "CPU {cpu} group {path} (cfs_rq {qi}): {n} entities / {hq} tasks / {hr} runnable / {hi} idle queued, but nr_queued {} h_nr_queued {} h_nr_runnable {} h_nr_idle {}",
                q.nr_queued, q.h_nr_queued, q.h_nr_runnable, q.h_nr_idle
            ));
        }
        if q.load_weight != w {
            return Err(format!(
                "CPU {cpu} group {path}: load weight {} but queued weights sum to {w}",
                q.load_weight
            ));
        }
        if let Some(ge) = q.se {
            let on = sim.sched.ents[ge.idx()].on_rq;
            let off_by_throttle = legacy && q.bw.throttled;
            if on && n == 0 {
                return Err(format!(
                    "CPU {cpu} group {path}: group entity queued with an empty queue"
                ));
            }
            if !on && n > 0 && !off_by_throttle {
                return Err(format!(
                    "CPU {cpu} group {path}: {n} entities queued but the group entity is not"
                ));
            }
        }
    }
    for rq in &sim.sched.rqs {
        let cpu = rq.cpu;
        let root = &sim.sched.cfs[rq.cfs.idx()];
        let (nrt, ndl) = (rq.rt.queue.len() as u32, rq.dl.queue.len() as u32);
        if rq.nr_running != root.h_nr_queued + nrt + ndl {
            return Err(format!(
                "CPU {cpu}: nr_running {} but h_nr_queued {} + {nrt} RT + {ndl} deadline",
                rq.nr_running, root.h_nr_queued
            ));
        }
        match rq.curr {
            Some(t) if sim.sched.class_of(t) != crate::rq::Class::Fair => {
                if root.curr.is_some() {
                    return Err(format!(
                        "CPU {cpu}: runs an RT/deadline task but the fair root queue has a curr"
                    ));
                }
            }
            Some(t) => {
                // Every level of the running task's path has it as curr.
                let mut e = Some(sim.sched.tasks[t.idx()].se);
                while let Some(x) = e {
                    let qx = sim.sched.se_cfs_rq(x);
                    if sim.sched.cfs[qx.idx()].curr != Some(x) {
                        return Err(format!(
                            "CPU {cpu}: entity {x} of the running task's path is not its queue's curr"
                        ));
                    }
                    e = sim.sched.se_parent(x);
                }
            }
            None => {
                if root.curr.is_some() {
                    return Err(format!("CPU {cpu}: idle but the queue has a curr"));
                }
            }
        }
    }
    Ok(())
}

/// The incremental EEVDF sums equal a recomputation, the timeline's kept
/// minimum slice equals its entities' slices, the timeline's tree is
/// sound (order, balance, subtree minima), it is keyed by each entity's
/// real deadline and holds each entity's real vruntime and slice, and
/// queued entities are marked on_rq.
pub fn vruntime_sums_consistent<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    for (qi, q) in sim.sched.cfs.iter().enumerate() {
        let (s, w) = eevdf::recompute_sums(q, &sim.sched.ents);
        if (s, w) != (q.sum_w_vruntime, q.sum_weight) {
            return Err(format!(
                "cfs_rq {qi}: sum_w_vruntime/sum_weight {}/{} but recomputed {s}/{w}",
                q.sum_w_vruntime, q.sum_weight
            ));
        }
        let walked = q
            .timeline
            .iter()
            .map(|(_, id)| sim.sched.ents[id.idx()].slice)
            .min();
        if walked != q.timeline.min_slice() {
            return Err(format!(
                "cfs_rq {qi}: timeline min_slice {:?} but the entities' slices give {walked:?}",
                q.timeline.min_slice()
            ));
        }
        q.timeline
            .validate()
            .map_err(|e| format!("cfs_rq {qi}: {e}"))?;
        for ((d, id), v, slice) in q.timeline.entries() {
            let se = &sim.sched.ents[id.idx()];
            if se.deadline != d || !se.on_rq {
                return Err(format!(
                    "cfs_rq {qi}: entity {id} keyed at deadline {d} (has {}, on_rq {})",
                    se.deadline, se.on_rq
                ));
            }
            if (se.vruntime, se.slice) != (v, slice) {
                return Err(format!(
                    "cfs_rq {qi}: entity {id} stored with vruntime {v}, slice {slice} \
                     (has {}, {})",
                    se.vruntime, se.slice
                ));
            }
        }
    }
    Ok(())
}

/// Per CPU: task time + idle time + scheduler time = elapsed time.
pub fn cpu_time_adds_up<S: Sink>(sim: &Sim<S>) -> Result<(), String> {
    let now = sim.now;
    for c in 0..sim.sched.rqs.len() {
        let (busy, idle, ovh) = sim.cpu_times(CpuId(c as u32));
        if busy + idle + ovh != now {
            return Err(format!(
                "CPU {c}: busy {busy} + idle {idle} + overhead {ovh} = {} ns, but {now} ns have passed",
                busy + idle + ovh
            ));
        }
    }
    Ok(())
}

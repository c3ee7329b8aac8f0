//! Typed rt-app description → [`Workload`].
//!
//! This module owns everything that needs the whole file or the machine:
//!
//! * threads: global index in text order, instances consecutive, named
//!   `<task>-<index>` (formats-spec.md 1.8); `instance: 0` tasks are templates
//!   and create no thread;
//! * units: µs → ns, `run t` → `floor(t*1000/pLoad)*pLoad` ns of work with
//!   `perf = floor(t/pLoad)` (formats-spec.md 1.9, 2.3);
//! * loops (formats-spec.md 1.6): with `phases`, the task `loop` counts passes
//!   (default for ever) and each phase `loop` defaults to 1; without
//!   `phases`, the only phase runs `loop` times (absent or -1: for ever);
//! * timers: a `ref` beginning with `unique` gives one timer per thread,
//!   named `<ref>@<thread>`; any other `ref` is one timer shared by every
//!   thread; a timer is absolute if any event naming it says so;
//! * policies and nice: `priority` is the nice value for OTHER/BATCH, the
//!   RT priority (1..=99, default 10) for FIFO/RR, and is ignored for IDLE
//!   and DEADLINE; `dl-runtime` (or the legacy task-level `runtime`) on
//!   OTHER/BATCH is a custom slice, clamped like the kernel to 0.1..100 ms;
//! * SCHED_DEADLINE: `dl-runtime` (required), `dl-period` (default the
//!   runtime), `dl-deadline` (default the period), each falling back to the
//!   legacy task-level `runtime` / `period` / `deadline` when absent or 0,
//!   checked with the kernel's rules ([`schedlab_core::program::check_dl_params`]);
//!   a phase that is SCHED_DEADLINE without its own `dl-runtime` keeps the
//!   parameters in force (the last earlier phase's, else the task's);
//! * `taskgroup` only with OTHER, BATCH or IDLE, as rt-app requires;
//! * affinity: `cpus` must name CPUs of the machine; when some phases set
//!   `cpus`, the others get the task's set (or every CPU), because rt-app
//!   re-applies the task default in phases that give none;
//! * task groups: a task-level `taskgroup` is the thread's group from its
//!   start (the root `/` without one); a phase-level `taskgroup` moves the
//!   thread at the start of each iteration of that phase, and a phase
//!   without one leaves it where it is (rt-app's tutorial example11). The
//!   workload lists every group named by a task, a phase or `taskgroups`,
//!   with their ancestors ([`crate::cgroup::build_groups`]);
//! * `mem`, `iorun` and `memrun` are [`Op::Work`] (CPU work the log does
//!   not count as `run`), `memrun`'s amount from [`super::memcost`];
//! * fork pools: unstarted threads made for every fork event of every
//!   thread that can run, forked threads included (nested forks), breadth
//!   first; cycles of forks are refused (`check_forks`).

use std::collections::{HashMap, VecDeque};

use schedlab_core::program::{
    DlParams, EventMark, Op, Phase, Policy, Program, TaskSpec, TimerRef, TimerSpec, Uclamp,
    Workload,
};
use schedlab_core::time::{NSEC_PER_SEC, NSEC_PER_USEC};

use super::memcost;
use super::raw::{At, Calibration, RawEvent, RawFile, RawPhase, RawSched, RawTask};
use super::{intern, Cx, DEFAULT_PLOAD_NS, MAX_SLICE_US, MIN_SLICE_US};
use crate::json::Pos;
use crate::{ErrorKind, WorkloadError};

/// Builds the workload. `nr_cpus` bounds `cpus` and the calibration CPU.
pub fn lower(cx: &mut Cx, raw: &RawFile, nr_cpus: usize) -> Result<Workload, WorkloadError> {
    let g = &raw.global;
    let pload = match g.calibration {
        Calibration::Missing => {
            let msg = format!("no \"calibration\" in \"global\" (rt-app calibrates CPU0); using pLoad {DEFAULT_PLOAD_NS} ns");
            cx.warn(Pos { line: 1, col: 1 }, msg);
            DEFAULT_PLOAD_NS
        }
        Calibration::Ns(ns, pos) => {
            if ns <= 0 {
                let msg = format!("pLoad {ns} ns must be greater than 0");
                return Err(cx.key_err(pos, "calibration", ErrorKind::Invalid, &msg));
            }
            ns as u64
        }
        Calibration::Cpu(cpu, pos) => {
            if cpu as usize >= nr_cpus {
                let msg = format!("CPU{cpu} does not exist (the machine has {nr_cpus} CPUs)");
                return Err(cx.key_err(pos, "calibration", ErrorKind::Invalid, &msg));
            }
            DEFAULT_PLOAD_NS
        }
    };
    let duration_ns = match g.duration_s {
        Some(s) if s > 0 => Some((s as u64).saturating_mul(NSEC_PER_SEC)),
        _ => None,
    };
    let mut out = Workload {
        tasks: Vec::new(),
        timers: Vec::new(),
        duration_ns,
        log_basename: g.log_basename.clone().unwrap_or_else(|| "rt-app".into()),
        log_ring_bytes: match g.log_size {
            super::raw::LogSize::RingMib(n) => Some(n << 20),
            _ => None,
        },
        calibration_ns: pload,
        channels: Vec::new(),
        mutexes: 0,
        conds: 0,
        barriers: Vec::new(),
        sems: 0,
        fork_pools: Vec::new(),
        cumulative_slack: g.cumulative_slack,
        pi_mutexes: g.pi_enabled,
        sem_waits_sleep: false,
        ftrace: g.ftrace,
        groups: Vec::new(),
        sysctls: g.sysctls.clone(),
        ..Default::default()
    };
    let absolute = timer_modes(raw);
    let mut timer_ids: HashMap<String, TimerRef> = HashMap::new();
    let mut next_index: u64 = 0;
    let mut lowered = Vec::with_capacity(raw.tasks.len());
    // (thread, task) of every start-up thread, for the fork pass.
    let mut startup: Vec<(usize, usize)> = Vec::new();
    for (ti, task) in raw.tasks.iter().enumerate() {
        let (instances, ipos) = task.instance;
        if instances < 0 {
            let msg = format!("{instances} must not be negative (0 makes a fork template)");
            return Err(cx.key_err(ipos, "instance", ErrorKind::Invalid, &msg));
        }
        let max_threads = crate::limits::max_tasks();
        if next_index.saturating_add(instances as u64) > max_threads {
            let hint = crate::limits::max_tasks_hint();
            let msg = format!("{instances} instances bring the file to more than {max_threads} threads, which is absurd ({hint})");
            return Err(cx.key_err(ipos, "instance", ErrorKind::Invalid, &msg));
        }
        let spec = TaskLowering::new(cx, task, g.default_policy, nr_cpus)?;
        let phases = lower_phases(cx, task, &spec, nr_cpus, pload)?;
        let first = next_index;
        for _ in 0..instances {
            let name = format!("{}-{}", task.name, next_index);
            if next_index == first && name.chars().count() > 15 {
                cx.warn(task.pos, format!("thread name \"{name}\" is longer than 15 characters; real rt-app threads then keep the comm \"rt-app\""));
            }
            let th = Thread {
                task,
                spec: &spec,
                phases: &phases,
                absolute: &absolute,
            };
            let t = th.build(
                name,
                next_index as u32,
                false,
                &mut out.timers,
                &mut timer_ids,
            );
            startup.push((out.tasks.len(), ti));
            out.tasks.push(t);
            next_index += 1;
        }
        lowered.push((spec, phases));
    }
    // Fork pools: each fork event of each thread that can run (start-up
    // threads, then the threads of their pools, breadth first) gets as many
    // threads of the template as the event can run (its phase's loops times
    // the task's, at most rt-app's 1024), created unstarted. A forked
    // thread whose template forks is queued in turn, so nested forks get
    // pools of their own; `check_forks` has refused cycles, so this ends.
    check_forks(cx, raw, startup.iter().map(|&(_, ti)| ti))?;
    let mut queue: VecDeque<(usize, usize)> = startup.into();
    while let Some((thread, ti)) = queue.pop_front() {
        for pi in 0..out.tasks[thread].program.phases.len() {
            for oi in 0..out.tasks[thread].program.phases[pi].ops.len() {
                if !matches!(
                    out.tasks[thread].program.phases[pi].ops[oi],
                    Op::Fork { .. }
                ) {
                    continue;
                }
                let raw_phase = &raw.tasks[ti].phases[pi];
                let RawEvent::Fork(target) = &raw_phase.events[oi] else {
                    unreachable!("a fork op comes from a fork event")
                };
                let (key, pos) = &raw_phase.event_keys[oi];
                let tt = raw
                    .tasks
                    .iter()
                    .position(|t| &t.name == target)
                    .expect("check_forks found every fork target");
                let template = &raw.tasks[tt];
                let per_pass = out.tasks[thread].program.phases[pi].loops;
                let count = match out.tasks[thread].program.loops {
                    Some(passes) => (passes.saturating_mul(per_pass)).min(MAX_FORKS),
                    None => MAX_FORKS,
                };
                let max_threads = crate::limits::max_tasks();
                if next_index.saturating_add(count) > max_threads {
                    let by = if out.tasks[thread].forked {
                        format!(" (this fork is made by every forked thread \"{}\"; nested forks multiply)", raw.tasks[ti].name)
                    } else {
                        String::new()
                    };
                    let msg = format!("the {count} threads this fork can create bring the file to more than {max_threads} threads{by}");
                    return Err(cx.key_err(*pos, key, ErrorKind::Invalid, &msg));
                }
                let (spec, phases) = &lowered[tt];
                let th = Thread {
                    task: template,
                    spec,
                    phases,
                    absolute: &absolute,
                };
                let forks = forks_of(template);
                let mut pool = Vec::with_capacity(count as usize);
                for n in 1..=count {
                    let name = format!("{}-{}-{:04}", template.name, next_index, n);
                    pool.push(out.tasks.len() as u32);
                    if forks {
                        queue.push_back((out.tasks.len(), tt));
                    }
                    let t = th.build(
                        name,
                        next_index as u32,
                        true,
                        &mut out.timers,
                        &mut timer_ids,
                    );
                    out.tasks.push(t);
                    next_index += 1;
                }
                out.tasks[thread].program.phases[pi].ops[oi] = Op::Fork {
                    pool: out.fork_pools.len() as u32,
                };
                out.fork_pools.push(pool);
            }
        }
    }
    // Synchronisation objects: counts, and each barrier's participants (one
    // per thread per referencing event, as rt-app counts them at parse time).
    out.mutexes = cx.sync.mutexes.len() as u32;
    out.conds = cx.sync.conds.len() as u32;
    out.sems = cx.sync.sems.len() as u32;
    out.barriers = vec![0; cx.sync.barriers.len()];
    for t in &out.tasks {
        for ph in &t.program.phases {
            for op in &ph.ops {
                if let Op::Barrier { barrier } = op {
                    out.barriers[*barrier as usize] += 1;
                }
            }
        }
    }
    out.groups = crate::cgroup::build_groups(
        crate::cgroup::used_paths(&out).collect::<Vec<_>>(),
        &raw.taskgroups,
    )
    .map_err(|e| cx.err(Pos { line: 1, col: 1 }, ErrorKind::Invalid, e))?;
    if g.log_size == super::raw::LogSize::Disable {
        for t in &mut out.tasks {
            t.log_rows = false;
        }
    }
    Ok(out)
}

/// rt-app stops forking after this many forks of one fork event.
const MAX_FORKS: u64 = 1024;

/// True when the task has a `fork` event.
fn forks_of(task: &RawTask) -> bool {
    task.phases
        .iter()
        .any(|p| p.events.iter().any(|e| matches!(e, RawEvent::Fork(_))))
}

/// Checks the fork events of every task a thread can run: the start-up
/// tasks `roots` and, transitively, every task they fork. Each target must
/// exist, must not use a barrier (rt-app counts barrier participants at
/// start-up), and the forks must not come back to a task already on the
/// way (a task that forks itself, directly or through others): pools are
/// made at load time, so such forks would nest without end. Tasks no
/// thread runs (templates nobody forks) are not checked, as before.
fn check_forks(
    cx: &Cx,
    raw: &RawFile,
    roots: impl Iterator<Item = usize>,
) -> Result<(), WorkloadError> {
    // 0: not seen, 1: on the current path, 2: done.
    let mut state = vec![0u8; raw.tasks.len()];
    // Depth-first, explicit stack: (task, next phase, next event).
    for root in roots {
        if state[root] != 0 {
            continue;
        }
        let mut path: Vec<(usize, usize, usize)> = vec![(root, 0, 0)];
        state[root] = 1;
        while let Some(top) = path.last_mut() {
            let (ti, pi, ei) = *top;
            let task = &raw.tasks[ti];
            let Some(p) = task.phases.get(pi) else {
                state[ti] = 2;
                path.pop();
                continue;
            };
            let Some(e) = p.events.get(ei) else {
                *top = (ti, pi + 1, 0);
                continue;
            };
            *top = (ti, pi, ei + 1);
            let RawEvent::Fork(target) = e else { continue };
            let (key, pos) = &p.event_keys[ei];
            let Some(tt) = raw.tasks.iter().position(|t| &t.name == target) else {
                let msg = format!("there is no task \"{target}\" to fork");
                return Err(cx.key_err(*pos, key, ErrorKind::Invalid, &msg));
            };
            for p in &raw.tasks[tt].phases {
                for (e, (k, at)) in p.events.iter().zip(&p.event_keys) {
                    if matches!(e, RawEvent::Barrier(_)) {
                        let msg = format!("task \"{target}\" is forked: barrier cannot be combined with fork (rt-app counts barrier participants at start-up)");
                        return Err(cx.key_err(*at, k, ErrorKind::Invalid, &msg));
                    }
                }
            }
            match state[tt] {
                2 => continue,
                1 => {
                    let from = path.iter().position(|&(t, _, _)| t == tt).unwrap_or(0);
                    let chain: Vec<&str> = path[from..]
                        .iter()
                        .map(|&(t, _, _)| raw.tasks[t].name.as_str())
                        .chain(std::iter::once(target.as_str()))
                        .collect();
                    let how = if path.len() - from == 1 {
                        "forks itself"
                    } else {
                        "is forked again by a thread it forks"
                    };
                    let msg = format!("task \"{target}\" {how} ({}), so forks would nest without end: not supported yet (schedlab makes every forked thread at load time)", chain.join(" -> "));
                    return Err(cx.key_err(*pos, key, ErrorKind::Unsupported, &msg));
                }
                _ => {}
            }
            state[tt] = 1;
            path.push((tt, 0, 0));
        }
    }
    Ok(())
}

/// What is needed to make threads of one task.
struct Thread<'a> {
    task: &'a RawTask,
    spec: &'a TaskLowering,
    phases: &'a [PhaseTemplate],
    absolute: &'a HashMap<(Option<&'a str>, &'a str), bool>,
}

impl Thread<'_> {
    /// One thread of the task: its phases with timers resolved (shared refs
    /// by name, unique refs per thread).
    fn build(
        &self,
        name: String,
        index: u32,
        forked: bool,
        timers: &mut Vec<TimerSpec>,
        timer_ids: &mut HashMap<String, TimerRef>,
    ) -> TaskSpec {
        let (task, spec) = (self.task, self.spec);
        let mut thread_phases = Vec::with_capacity(self.phases.len());
        for (p, tmpl) in self.phases {
            let mut ph = p.clone();
            for (op, (tname, period_ns)) in ph.ops.iter_mut().zip(tmpl) {
                let Some(tname) = tname else { continue };
                let (full, abs) = if tname.starts_with("unique") {
                    let abs = self.absolute[&(Some(task.name.as_str()), tname.as_str())];
                    (format!("{tname}@{name}"), abs)
                } else {
                    (tname.clone(), self.absolute[&(None, tname.as_str())])
                };
                let id = *timer_ids.entry(full.clone()).or_insert_with(|| {
                    timers.push(TimerSpec {
                        name: full,
                        absolute: abs,
                    });
                    TimerRef(timers.len() as u32 - 1)
                });
                *op = Op::Timer {
                    timer: id,
                    period_ns: *period_ns,
                };
            }
            thread_phases.push(ph);
        }
        TaskSpec {
            name,
            index,
            policy: spec.policy,
            nice: spec.nice,
            cpus: spec.cpus.clone(),
            delay_ns: task.delay_us * NSEC_PER_USEC,
            custom_slice_ns: spec.slice_us.map(|us| us * NSEC_PER_USEC),
            dl: spec.dl,
            uclamp: spec.uclamp,
            forked,
            log_rows: true,
            group: spec.group.clone(),
            program: Program {
                phases: thread_phases,
                loops: spec.loops,
            },
        }
    }
}

/// Absolute flag per timer: key (Some(task), ref) for unique refs, (None, ref)
/// for shared ones. Template tasks count too: rt-app parses them.
fn timer_modes(raw: &RawFile) -> HashMap<(Option<&str>, &str), bool> {
    let mut m: HashMap<(Option<&str>, &str), bool> = HashMap::new();
    for t in &raw.tasks {
        for p in &t.phases {
            for e in &p.events {
                if let RawEvent::Timer { name, absolute, .. } = e {
                    let owner = name.starts_with("unique").then_some(t.name.as_str());
                    *m.entry((owner, name.as_str())).or_default() |= absolute;
                }
            }
        }
    }
    m
}

/// Task-level settings resolved against the global defaults.
struct TaskLowering {
    policy: Policy,
    /// Nice (OTHER/BATCH) or RT priority (FIFO/RR).
    nice: i32,
    slice_us: Option<u64>,
    /// SCHED_DEADLINE parameters (policy Deadline only).
    dl: Option<DlParams>,
    uclamp: Uclamp,
    cpus: Option<Vec<u32>>,
    loops: Option<u64>,
    /// Loops of the single phase of a phase-less task.
    own_phase_loops: u64,
    /// Task group at start (`/` = root).
    group: String,
}

impl TaskLowering {
    fn new(
        cx: &mut Cx,
        task: &RawTask,
        default: Option<(Policy, Pos)>,
        nr_cpus: usize,
    ) -> Result<Self, WorkloadError> {
        let s = &task.sched;
        // Where the policy was written, for errors about it.
        let (policy, from) = match (s.policy, default) {
            (Some((p, pos)), _) => (p, Some(("policy", pos))),
            (None, Some((p, pos))) => (p, Some(("default_policy", pos))),
            (None, None) => (Policy::Normal, None),
        };
        let at = SchedAt {
            key: from.map_or(("policy", task.pos), |f| f),
            who: if s.policy.is_none() && default.is_some() {
                format!(" (the default policy of task \"{}\")", task.name)
            } else {
                String::new()
            },
            runtime_is_event: !task.has_phases,
            phase: false,
        };
        check_taskgroup(cx, policy, &s.taskgroup)?;
        let SchedParams { nice, slice_us, dl } = sched_params(cx, policy, s, &at, None)?;
        let uclamp = uclamp_for(cx, s)?;
        let cpus = match &s.cpus {
            Some(c) => Some(check_cpus(cx, c, nr_cpus)?),
            None => None,
        };
        let (loops, own_phase_loops) = match (task.has_phases, task.loops) {
            (true, None) => (None, 1),
            (true, Some((n, pos))) => (loop_count(cx, n, pos)?, 1),
            (false, None) => (None, 1),
            (false, Some((n, pos))) => match loop_count(cx, n, pos)? {
                None => (None, 1),
                Some(n) => (Some(1), n),
            },
        };
        Ok(TaskLowering {
            policy,
            nice,
            slice_us,
            dl,
            uclamp,
            cpus,
            loops,
            own_phase_loops,
            group: s
                .taskgroup
                .as_ref()
                .map_or_else(|| crate::cgroup::ROOT.to_string(), |(g, _)| g.clone()),
        })
    }
}

/// Task `loop`: -1 = for ever, else at least 1.
fn loop_count(cx: &Cx, n: i64, pos: Pos) -> Result<Option<u64>, WorkloadError> {
    match n {
        -1 => Ok(None),
        n if n >= 1 => Ok(Some(n as u64)),
        n => {
            let msg = format!("{n} is not a loop count (use -1 for ever, or 1 or more)");
            Err(cx.key_err(pos, "loop", ErrorKind::Invalid, &msg))
        }
    }
}

/// Default `priority` of SCHED_FIFO and SCHED_RR (rt-app's).
pub const DEFAULT_RT_PRIORITY: i32 = 10;

/// The `nice` field of a [`TaskSpec`] or phase: nice for OTHER/BATCH, RT
/// priority for FIFO/RR, 0 for IDLE and DEADLINE (their `priority` is
/// ignored).
fn prio_for(cx: &mut Cx, policy: Policy, prio: Option<At<i64>>) -> Result<i32, WorkloadError> {
    if matches!(policy, Policy::Fifo | Policy::Rr) {
        let Some((p, pos)) = prio else {
            return Ok(DEFAULT_RT_PRIORITY);
        };
        if !(1..=99).contains(&p) {
            let msg = format!(
                "priority {p} is out of range for {} (expected 1..=99)",
                policy.name()
            );
            return Err(cx.key_err(pos, "priority", ErrorKind::Invalid, &msg));
        }
        return Ok(p as i32);
    }
    let Some((p, pos)) = prio else { return Ok(0) };
    if policy == Policy::Idle {
        cx.warn(
            pos,
            "key \"priority\": ignored for SCHED_IDLE (rt-app sets no nice)",
        );
        return Ok(0);
    }
    if policy == Policy::Deadline {
        cx.warn(
            pos,
            "key \"priority\": ignored for SCHED_DEADLINE (its tasks have no priority)",
        );
        return Ok(0);
    }
    if !(-20..=19).contains(&p) {
        let msg = format!(
            "nice {p} is out of range for {} (expected -20..=19)",
            policy.name()
        );
        return Err(cx.key_err(pos, "priority", ErrorKind::Invalid, &msg));
    }
    Ok(p as i32)
}

fn slice_for(cx: &mut Cx, policy: Policy, s: &RawSched) -> Result<Option<u64>, WorkloadError> {
    let (us, pos, key) = match (s.dl_runtime, s.legacy_runtime) {
        (Some((us, pos)), _) if us != 0 => (us, pos, "dl-runtime"),
        (_, Some((us, pos))) => (us, pos, "runtime"),
        _ => return Ok(None),
    };
    if us < 0 {
        let msg = format!("{us} must not be negative (µs)");
        return Err(cx.key_err(pos, key, ErrorKind::Invalid, &msg));
    }
    if policy == Policy::Idle {
        cx.warn(
            pos,
            format!("key \"{key}\": a custom slice is ignored for SCHED_IDLE"),
        );
        return Ok(None);
    }
    if key == "runtime" {
        cx.warn(pos, "key \"runtime\": at task level rt-app also reads it as the legacy scheduling runtime, which requests a custom slice");
    }
    let clamped = (us as u64).clamp(MIN_SLICE_US, MAX_SLICE_US);
    if clamped != us as u64 {
        cx.warn(pos, format!("key \"{key}\": custom slice {us} µs clamped to {clamped} µs (the kernel allows 100..=100000 µs)"));
    }
    Ok(Some(clamped))
}

/// `util_min` / `util_max`; the kernel refuses a minimum above the maximum.
fn uclamp_for(cx: &Cx, s: &RawSched) -> Result<Uclamp, WorkloadError> {
    if let (Some((lo, _)), Some((hi, pos))) = (s.util_min, s.util_max) {
        if lo > hi {
            let msg = format!("{hi} is below util_min {lo} (sched_setattr would fail with EINVAL)");
            return Err(cx.key_err(pos, "util_max", ErrorKind::Invalid, &msg));
        }
    }
    Ok(Uclamp {
        min: s.util_min.map(|(v, _)| v),
        max: s.util_max.map(|(v, _)| v),
    })
}

fn check_cpus(cx: &Cx, c: &At<Vec<i64>>, nr_cpus: usize) -> Result<Vec<u32>, WorkloadError> {
    let (list, pos) = c;
    let mut out: Vec<u32> = Vec::with_capacity(list.len());
    for &cpu in list {
        if cpu < 0 || cpu as u64 >= nr_cpus as u64 {
            let msg = format!(
                "CPU {cpu} does not exist (the machine has CPUs 0..={})",
                nr_cpus.saturating_sub(1)
            );
            return Err(cx.key_err(*pos, "cpus", ErrorKind::Invalid, &msg));
        }
        if !out.contains(&(cpu as u32)) {
            out.push(cpu as u32);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// Per phase: the phase with timer ops still unresolved, and per op the
/// timer name and period (None for other ops).
type PhaseTemplate = (Phase, Vec<(Option<String>, u64)>);

fn lower_phases(
    cx: &mut Cx,
    task: &RawTask,
    spec: &TaskLowering,
    nr_cpus: usize,
    pload: u64,
) -> Result<Vec<PhaseTemplate>, WorkloadError> {
    let any_cpus = task.phases.iter().any(|p| p.sched.cpus.is_some());
    let fallback = spec
        .cpus
        .clone()
        .unwrap_or_else(|| (0..nr_cpus as u32).collect());
    let mut out = Vec::with_capacity(task.phases.len());
    // SCHED_DEADLINE parameters a DEADLINE phase without dl-runtime keeps.
    let mut dl_in_force = spec.dl;
    for (i, p) in task.phases.iter().enumerate() {
        let loops = match (task.has_phases, p.loops) {
            (false, _) => spec.own_phase_loops,
            (true, None) => 1,
            (true, Some((n, _))) if n >= 1 => n as u64,
            (true, Some((n, pos))) => {
                let msg = format!("{n} is not a phase loop count (expected 1 or more)");
                return Err(cx.key_err(pos, "loop", ErrorKind::Invalid, &msg));
            }
        };
        let cpus = match &p.sched.cpus {
            Some(c) => Some(check_cpus(cx, c, nr_cpus)?),
            None if any_cpus => Some(fallback.clone()),
            None => None,
        };
        let policy = policy_at(task, i, spec.policy);
        check_taskgroup(cx, policy, &p.sched.taskgroup)?;
        let (sched, slice_ns, dl) = match phase_sched(cx, task, i, policy, dl_in_force)? {
            Some((policy, nice, slice_us, dl)) => {
                dl_in_force = dl.or(dl_in_force);
                let slice_ns = slice_us.map(|us| us * NSEC_PER_USEC);
                (Some((policy, nice)), slice_ns, dl)
            }
            None => (None, None, None),
        };
        let mut ops = Vec::with_capacity(p.events.len());
        let mut timers = Vec::with_capacity(p.events.len());
        let mut marks = Vec::with_capacity(p.events.len());
        for (e, (key, _)) in p.events.iter().zip(&p.event_keys) {
            let (op, timer) = lower_event(cx, p, e, pload, &task.name);
            ops.push(op);
            timers.push(timer);
            marks.push(EventMark {
                kind: event_type(e),
                desc: key.clone(),
            });
        }
        out.push((
            Phase {
                name: p.name.clone(),
                loops,
                ops,
                cpus,
                sched,
                slice_ns,
                uclamp: uclamp_for(cx, &p.sched)?,
                dl,
                group: p.sched.taskgroup.as_ref().map(|(g, _)| g.clone()),
                marks,
            },
            timers,
        ));
    }
    // A thread that loops for ever through events that all take no time
    // would stop the simulated clock (the simulator loops on the spot).
    let zero = |op: &Op| {
        matches!(
            op,
            Op::Sleep { ns: 0 } | Op::Work { work_ns: 0 } | Op::Run { work_ns: 0, .. }
        )
    };
    if spec.loops.is_none() && out.iter().all(|(ph, _)| ph.ops.iter().all(zero)) {
        let msg = "every event of the task takes no time (a memrun with count 0, a mem of under 10 bytes, a run shorter than one calibrated loop, sleep 0) and it loops for ever, so simulated time would stop";
        return Err(cx.key_err(task.pos, &task.name, ErrorKind::Invalid, msg));
    }
    Ok(out)
}

/// The policy of phase `i`: its own `policy`, else that of the last
/// earlier phase that sets one, else the task's.
fn policy_at(task: &RawTask, i: usize, task_policy: Policy) -> Policy {
    task.phases[..=i]
        .iter()
        .rev()
        .find_map(|p| p.sched.policy.map(|(p, _)| p))
        .unwrap_or(task_policy)
}

/// What a phase passes to `sched_setattr`: policy, nice or RT priority,
/// custom slice in µs, deadline parameters.
type PhaseSched = (Policy, i32, Option<u64>, Option<DlParams>);

/// Scheduling change of phase `i`, if it sets any of `policy`, `priority`,
/// `dl-runtime` (or, for a SCHED_DEADLINE phase, `dl-period` /
/// `dl-deadline`). Like rt-app, a phase with scheduling keys passes all of
/// them to `sched_setattr`: a key it leaves out takes its default (nice 0,
/// RT priority 10, no custom slice), not the task's value. SCHED_DEADLINE
/// parameters are the exception: without its own `dl-runtime` the phase
/// keeps `in_force`.
fn phase_sched(
    cx: &mut Cx,
    task: &RawTask,
    i: usize,
    policy: Policy,
    in_force: Option<DlParams>,
) -> Result<Option<PhaseSched>, WorkloadError> {
    let s = &task.phases[i].sched;
    let keys = s.policy.is_some() || s.priority.is_some() || s.dl_runtime.is_some();
    let Some(key) = [
        ("policy", s.policy.map(|(_, pos)| pos)),
        ("priority", s.priority.map(|(_, pos)| pos)),
        ("dl-runtime", s.dl_runtime.map(|(_, pos)| pos)),
        ("dl-period", s.dl_period.map(|(_, pos)| pos)),
        ("dl-deadline", s.dl_deadline.map(|(_, pos)| pos)),
    ]
    .into_iter()
    .find_map(|(k, pos)| pos.map(|p| (k, p))) else {
        return Ok(None);
    };
    let at = SchedAt {
        key,
        who: format!(" (phase \"{}\")", task.phases[i].name),
        runtime_is_event: false,
        phase: true,
    };
    let SchedParams { nice, slice_us, dl } = sched_params(cx, policy, s, &at, in_force)?;
    if !keys && policy != Policy::Deadline {
        // Only dl-period / dl-deadline, ignored (with a warning) here.
        return Ok(None);
    }
    Ok(Some((policy, nice, slice_us, dl)))
}

/// Where a task's or phase's scheduling keys come from, for messages.
struct SchedAt {
    /// Key (and its position) to blame when a required key is missing.
    key: (&'static str, Pos),
    /// Put after "SCHED_DEADLINE" in messages: which task or phase.
    who: String,
    /// The task-level `runtime` is also a `runtime` event (phase-less task).
    runtime_is_event: bool,
    /// Phase-level keys: SCHED_DEADLINE parameters may be kept from before.
    phase: bool,
}

/// Resolved scheduling keys of a task or phase.
struct SchedParams {
    /// Nice (OTHER/BATCH) or RT priority (FIFO/RR); 0 otherwise.
    nice: i32,
    /// Custom slice in µs (OTHER/BATCH).
    slice_us: Option<u64>,
    /// SCHED_DEADLINE parameters (DEADLINE).
    dl: Option<DlParams>,
}

/// The deadline keys of `s` as written, current names first.
fn dl_keys(s: &RawSched) -> [(&'static str, Option<At<i64>>); 6] {
    [
        ("dl-runtime", s.dl_runtime),
        ("dl-period", s.dl_period),
        ("dl-deadline", s.dl_deadline),
        ("runtime", s.legacy_runtime),
        ("period", s.legacy_period),
        ("deadline", s.legacy_deadline),
    ]
}

/// `priority` and the deadline keys of a task or phase under `policy`;
/// keys the policy does not use are ignored with a warning.
fn sched_params(
    cx: &mut Cx,
    policy: Policy,
    s: &RawSched,
    at: &SchedAt,
    in_force: Option<DlParams>,
) -> Result<SchedParams, WorkloadError> {
    let nice = prio_for(cx, policy, s.priority)?;
    for (key, v) in dl_keys(s) {
        if let Some((us, pos)) = v {
            if us < 0 {
                let msg = format!("{us} must not be negative (µs)");
                return Err(cx.key_err(pos, key, ErrorKind::Invalid, &msg));
            }
        }
    }
    let ignored = |cx: &mut Cx, key: &str, pos: Pos| {
        let msg = format!(
            "key \"{key}\": ignored for {} (it is a SCHED_DEADLINE parameter)",
            policy.name()
        );
        cx.warn(pos, msg);
    };
    let (slice_us, dl) = match policy {
        Policy::Normal | Policy::Batch | Policy::Idle => {
            let slice = slice_for(cx, policy, s)?;
            for (key, v) in &dl_keys(s)[..] {
                if matches!(*key, "dl-runtime" | "runtime") {
                    continue;
                }
                if let Some((_, pos)) = v {
                    ignored(cx, key, *pos);
                }
            }
            (slice, None)
        }
        Policy::Fifo | Policy::Rr => {
            for (key, v) in dl_keys(s) {
                if key == "runtime" && at.runtime_is_event {
                    continue;
                }
                if let Some((_, pos)) = v {
                    ignored(cx, key, pos);
                }
            }
            (None, None)
        }
        Policy::Deadline => (None, Some(dl_for(cx, s, at, in_force)?)),
    };
    Ok(SchedParams { nice, slice_us, dl })
}

/// SCHED_DEADLINE parameters: `dl-runtime` (required), `dl-period`
/// (default the runtime), `dl-deadline` (default the period); a key that is
/// absent or 0 takes its legacy task-level name (`runtime`, `period`,
/// `deadline`) when given. Checked with the kernel's rules; a failure is
/// the EINVAL `sched_setattr` would return, reported at the key to blame.
fn dl_for(
    cx: &mut Cx,
    s: &RawSched,
    at: &SchedAt,
    in_force: Option<DlParams>,
) -> Result<DlParams, WorkloadError> {
    type Given = (&'static str, u64, Pos);
    let given = |a: Option<At<i64>>, an, b: Option<At<i64>>, bn| -> Option<Given> {
        match (a, b) {
            (Some((us, pos)), _) if us != 0 => Some((an, us as u64, pos)),
            (_, Some((us, pos))) if us != 0 => Some((bn, us as u64, pos)),
            _ => None,
        }
    };
    let runtime = given(s.dl_runtime, "dl-runtime", s.legacy_runtime, "runtime");
    let period = given(s.dl_period, "dl-period", s.legacy_period, "period");
    let deadline = given(s.dl_deadline, "dl-deadline", s.legacy_deadline, "deadline");
    let Some(rt) = runtime else {
        let mut note = "";
        if at.phase {
            if let Some((key, _, pos)) = period.or(deadline) {
                let msg = format!("a phase that sets {key} must set dl-runtime too (sched_setattr takes the SCHED_DEADLINE parameters together)");
                return Err(cx.key_err(pos, key, ErrorKind::Invalid, &msg));
            }
            if let Some(p) = in_force {
                return Ok(p);
            }
            note = ", and there are no earlier SCHED_DEADLINE parameters to keep";
        }
        let (key, pos) = match s.dl_runtime {
            Some((_, pos)) => ("dl-runtime", pos),
            None => at.key,
        };
        let msg = format!(
            "SCHED_DEADLINE{} needs dl-runtime, a runtime above 0 µs{note} (sched_setattr would fail with EINVAL)",
            at.who
        );
        return Err(cx.key_err(pos, key, ErrorKind::Invalid, &msg));
    };
    if rt.0 == "runtime" {
        cx.warn(rt.2, "key \"runtime\": at task level rt-app also reads it as the legacy SCHED_DEADLINE runtime");
    }
    let period_us = period.map_or(rt.1, |p| p.1);
    let deadline_us = deadline.map_or(period_us, |d| d.1);
    let ns = |us: u64| us.saturating_mul(NSEC_PER_USEC);
    let p = DlParams {
        runtime_ns: ns(rt.1),
        deadline_ns: ns(deadline_us),
        period_ns: ns(period_us),
    };
    if let Err(e) = schedlab_core::program::check_dl_params(&p) {
        // The key to blame, in check_dl_params' order of rules.
        let (key, _, pos) = if p.runtime_ns < schedlab_core::program::DL_MIN_RUNTIME_NS {
            rt
        } else if p.deadline_ns < p.runtime_ns {
            deadline.or(period).unwrap_or(rt)
        } else if p.period_ns < p.deadline_ns {
            period.or(deadline).unwrap_or(rt)
        } else {
            period.unwrap_or(rt)
        };
        let msg = format!("{e} (sched_setattr would fail with EINVAL)");
        return Err(cx.key_err(pos, key, ErrorKind::Invalid, &msg));
    }
    Ok(p)
}

/// rt-app allows `taskgroup` only with SCHED_OTHER, SCHED_BATCH and
/// SCHED_IDLE.
fn check_taskgroup(
    cx: &Cx,
    policy: Policy,
    group: &Option<At<String>>,
) -> Result<(), WorkloadError> {
    match group {
        Some((path, pos)) if !policy.is_fair() => {
            let msg = format!("\"{path}\": a task group is allowed only with SCHED_OTHER, SCHED_BATCH or SCHED_IDLE, not {} (rt-app refuses the combination)", policy.name());
            Err(cx.key_err(*pos, "taskgroup", ErrorKind::Invalid, &msg))
        }
        _ => Ok(()),
    }
}

/// CPU cost of `mem` / `iorun` per byte: memset and a write to a null
/// device both run at about 10 GB/s on these machines (a guess; rt-app
/// writes in `mem_buffer_size` chunks, whose syscall cost is ignored).
const MEM_NS_PER_BYTE_X10: u64 = 1;

fn lower_event(
    cx: &mut Cx,
    p: &RawPhase,
    e: &RawEvent,
    pload: u64,
    task_name: &str,
) -> (Op, (Option<String>, u64)) {
    let none = (None, 0);
    let sync = &mut cx.sync;
    match e {
        RawEvent::Lock(name, true) => (
            Op::Lock {
                mutex: intern(&mut sync.mutexes, name),
            },
            none,
        ),
        RawEvent::Lock(name, false) => (
            Op::Unlock {
                mutex: intern(&mut sync.mutexes, name),
            },
            none,
        ),
        RawEvent::Signal(name, all) => (
            Op::Signal {
                cond: intern(&mut sync.conds, name),
                all: *all,
            },
            none,
        ),
        RawEvent::Wait {
            cond,
            mutex,
            sync: true,
        } => (
            Op::Sync {
                cond: intern(&mut sync.conds, cond),
                mutex: intern(&mut sync.mutexes, mutex),
            },
            none,
        ),
        RawEvent::Wait {
            cond,
            mutex,
            sync: false,
        } => (
            Op::Wait {
                cond: intern(&mut sync.conds, cond),
                mutex: intern(&mut sync.mutexes, mutex),
            },
            none,
        ),
        RawEvent::Barrier(name) => (
            Op::Barrier {
                barrier: intern(&mut sync.barriers, name),
            },
            none,
        ),
        RawEvent::Sem(name, true) => (
            Op::SemPost {
                sem: intern(&mut sync.sems, name),
            },
            none,
        ),
        RawEvent::Sem(name, false) => (
            Op::SemWait {
                sem: intern(&mut sync.sems, name),
            },
            none,
        ),
        // suspend/resume: the condition variable and mutex named after the
        // task's JSON key (rt-app's own naming, kept apart from user names).
        RawEvent::Suspend => {
            let key = format!("suspend@{task_name}");
            (
                Op::Suspend {
                    cond: intern(&mut sync.conds, &key),
                    mutex: intern(&mut sync.mutexes, &key),
                },
                none,
            )
        }
        RawEvent::Resume(name) => {
            let key = format!("suspend@{name}");
            (
                Op::Resume {
                    cond: intern(&mut sync.conds, &key),
                    mutex: intern(&mut sync.mutexes, &key),
                },
                none,
            )
        }
        // The pool is made once every thread exists (see `lower`).
        RawEvent::Fork(_) => (Op::Fork { pool: u32::MAX }, none),
        RawEvent::Mem(bytes, _) => (
            Op::Work {
                work_ns: bytes * MEM_NS_PER_BYTE_X10 / 10,
            },
            none,
        ),
        // Work by the cost model; like `mem`, not a `run` event for the
        // log (no perf, c_duration or run column). The reader bounded it.
        RawEvent::MemRun(m) => (
            Op::Work {
                work_ns: memcost::work_ns(m.access, m.size, m.count, m.random) as u64,
            },
            none,
        ),
        RawEvent::Run(t) => {
            let loops = t * 1000 / pload;
            if loops == 0 {
                cx.warn(p.pos, format!("phase \"{}\": run {t} µs is less than one calibrated loop ({pload} ns) and does no work", p.name));
            }
            (
                Op::Run {
                    work_ns: loops * pload,
                    config_us: *t,
                    perf: t / pload,
                },
                none,
            )
        }
        RawEvent::Runtime(t) => (
            Op::Runtime {
                wall_ns: t * NSEC_PER_USEC,
                config_us: *t,
            },
            none,
        ),
        RawEvent::Sleep(t) => (
            Op::Sleep {
                ns: t * NSEC_PER_USEC,
            },
            none,
        ),
        RawEvent::Yield => (Op::Yield, none),
        RawEvent::Timer {
            name, period_us, ..
        } => {
            let period_ns = period_us * NSEC_PER_USEC;
            // Placeholder; replaced per thread once the timer id is known.
            let op = Op::Timer {
                timer: TimerRef(u32::MAX),
                period_ns,
            };
            (op, (Some(name.clone()), period_ns))
        }
    }
}

/// rt-app's event type number (formats-spec.md 1.8) for the `rtapp_event`
/// trace marker.
fn event_type(e: &RawEvent) -> u8 {
    match e {
        RawEvent::Run(_) => 6,
        RawEvent::Runtime(_) => 19,
        RawEvent::Sleep(_) => 5,
        RawEvent::Timer { name, .. } if name.starts_with("unique") => 11,
        RawEvent::Timer { .. } => 10,
        RawEvent::Yield => 20,
        RawEvent::Lock(_, true) => 8,
        RawEvent::Lock(_, false) => 9,
        RawEvent::Signal(_, false) => 3,
        RawEvent::Signal(_, true) => 4,
        RawEvent::Wait { sync: false, .. } => 2,
        RawEvent::Wait { sync: true, .. } => 7,
        RawEvent::Barrier(_) => 21,
        RawEvent::Suspend => 12,
        RawEvent::Resume(_) => 13,
        RawEvent::Sem(_, true) => 24,
        RawEvent::Sem(_, false) => 23,
        RawEvent::Mem(_, false) => 14,
        RawEvent::Mem(_, true) => 18,
        RawEvent::Fork(_) => 22,
        RawEvent::MemRun(m) => match m.access {
            memcost::MemAccess::Write => 15,
            memcost::MemAccess::Read => 16,
            memcost::MemAccess::Chase => 17,
        },
    }
}

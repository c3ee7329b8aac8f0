//! Typed rt-app description → [`Workload`].
//!
//! This module owns everything that needs the whole file or the machine:
//!
//! * threads: global index in text order, instances consecutive, named
//!   `<task>-<index>` (formats.md 1.8); `instance: 0` tasks are templates
//!   and create no thread;
//! * units: µs → ns, `run t` → `floor(t*1000/pLoad)*pLoad` ns of work with
//!   `perf = floor(t/pLoad)` (formats.md 1.9, 2.3);
//! * loops (formats.md 1.6): with `phases`, the task `loop` counts passes
//!   (default for ever) and each phase `loop` defaults to 1; without
//!   `phases`, the only phase runs `loop` times (absent or -1: for ever);
//! * timers: a `ref` beginning with `unique` gives one timer per thread,
//!   named `<ref>@<thread>`; any other `ref` is one timer shared by every
//!   thread; a timer is absolute if any event naming it says so;
//! * policies and nice: `priority` is the nice value for OTHER/BATCH and is
//!   ignored for IDLE; `dl-runtime` (or the legacy task-level `runtime`) on
//!   OTHER/BATCH is a custom slice, clamped like the kernel to 0.1..100 ms;
//! * affinity: `cpus` must name CPUs of the machine; when some phases set
//!   `cpus`, the others get the task's set (or every CPU), because rt-app
//!   re-applies the task default in phases that give none;
//! * task groups: a task-level `taskgroup` is the thread's group from its
//!   start (the root `/` without one); a phase-level `taskgroup` moves the
//!   thread at the start of each iteration of that phase, and a phase
//!   without one leaves it where it is (rt-app's tutorial example11). The
//!   workload lists every group named by a task, a phase or `taskgroups`,
//!   with their ancestors ([`crate::cgroup::build_groups`]).

use std::collections::HashMap;

use schedlab_core::program::{
    Op, Phase, Policy, Program, TaskSpec, TimerRef, TimerSpec, Uclamp, Workload,
};
use schedlab_core::time::{NSEC_PER_SEC, NSEC_PER_USEC};

use super::raw::{At, Calibration, RawEvent, RawFile, RawPhase, RawSched, RawTask};
use super::{intern, Cx, DEFAULT_PLOAD_NS, MAX_SLICE_US, MAX_THREADS, MIN_SLICE_US};
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
        calibration_ns: pload,
        channels: Vec::new(),
        mutexes: 0,
        conds: 0,
        barriers: Vec::new(),
        sems: 0,
        fork_pools: Vec::new(),
        cumulative_slack: g.cumulative_slack,
        pi_mutexes: g.pi_enabled,
        groups: Vec::new(),
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
        if next_index + instances as u64 > MAX_THREADS {
            let msg = format!("{instances} instances bring the file to more than {MAX_THREADS} threads, which is absurd");
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
    // Fork pools: each fork event of each start-up thread gets as many
    // threads of the template as the event can run (its phase's loops times
    // the task's, at most rt-app's 1024), created unstarted.
    for (thread, ti) in startup {
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
                let Some(tt) = raw.tasks.iter().position(|t| &t.name == target) else {
                    let msg = format!("there is no task \"{target}\" to fork");
                    return Err(cx.key_err(*pos, key, ErrorKind::Invalid, &msg));
                };
                let template = &raw.tasks[tt];
                for p in &template.phases {
                    for (e, (k, at)) in p.events.iter().zip(&p.event_keys) {
                        let msg = match e {
                            RawEvent::Fork(_) => "a forked thread that forks again is not supported yet",
                            RawEvent::Barrier(_) => "barrier cannot be combined with fork (rt-app counts barrier participants at start-up)",
                            _ => continue,
                        };
                        let kind = if matches!(e, RawEvent::Fork(_)) {
                            ErrorKind::Unsupported
                        } else {
                            ErrorKind::Invalid
                        };
                        let msg = format!("task \"{target}\" is forked: {msg}");
                        return Err(cx.key_err(*at, k, kind, &msg));
                    }
                }
                let per_pass = out.tasks[thread].program.phases[pi].loops;
                let count = match out.tasks[thread].program.loops {
                    Some(passes) => (passes.saturating_mul(per_pass)).min(MAX_FORKS),
                    None => MAX_FORKS,
                };
                if next_index + count > MAX_THREADS {
                    let msg = format!("the {count} threads this fork can create bring the file to more than {MAX_THREADS} threads");
                    return Err(cx.key_err(*pos, key, ErrorKind::Invalid, &msg));
                }
                let (spec, phases) = &lowered[tt];
                let th = Thread {
                    task: template,
                    spec,
                    phases,
                    absolute: &absolute,
                };
                let mut pool = Vec::with_capacity(count as usize);
                for n in 1..=count {
                    let name = format!("{}-{}-{:04}", template.name, next_index, n);
                    pool.push(out.tasks.len() as u32);
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
    Ok(out)
}

/// rt-app stops forking after this many forks of one fork event.
const MAX_FORKS: u64 = 1024;

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
            dl: None,
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
    nice: i32,
    slice_us: Option<u64>,
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
        let policy = match (s.policy, default) {
            (Some((p, _)), _) => p,
            (None, Some((p, pos))) if !p.is_fair() => {
                let msg = format!("policy {} (the default of task \"{}\") is not supported yet (real-time and deadline classes come with a later issue)", p.name(), task.name);
                return Err(cx.key_err(pos, "default_policy", ErrorKind::Unsupported, &msg));
            }
            (None, Some((p, _))) => p,
            (None, None) => Policy::Normal,
        };
        let nice = nice_for(cx, policy, s.priority)?;
        let slice_us = slice_for(cx, policy, s)?;
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

fn nice_for(cx: &mut Cx, policy: Policy, prio: Option<At<i64>>) -> Result<i32, WorkloadError> {
    let Some((p, pos)) = prio else { return Ok(0) };
    if policy == Policy::Idle {
        cx.warn(
            pos,
            "key \"priority\": ignored for SCHED_IDLE (rt-app sets no nice)",
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
        let (sched, slice_ns) = match phase_sched(cx, task, i, spec.policy)? {
            Some((policy, nice, slice_us)) => {
                (Some((policy, nice)), slice_us.map(|us| us * NSEC_PER_USEC))
            }
            None => (None, None),
        };
        let mut ops = Vec::with_capacity(p.events.len());
        let mut timers = Vec::with_capacity(p.events.len());
        for e in &p.events {
            let (op, timer) = lower_event(cx, p, e, pload, &task.name);
            ops.push(op);
            timers.push(timer);
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
                dl: None,
                group: p.sched.taskgroup.as_ref().map(|(g, _)| g.clone()),
            },
            timers,
        ));
    }
    Ok(out)
}

/// `(policy, nice, custom slice in µs)` for phase `i`, if it sets any of
/// `policy`, `priority`, `dl-runtime`. Like rt-app, a phase with scheduling
/// keys passes all of them to `sched_setattr`: a key it leaves out takes
/// its default (nice 0, no custom slice), not the task's value.
fn phase_sched(
    cx: &mut Cx,
    task: &RawTask,
    i: usize,
    task_policy: Policy,
) -> Result<Option<(Policy, i32, Option<u64>)>, WorkloadError> {
    let s = &task.phases[i].sched;
    if s.policy.is_none() && s.priority.is_none() && s.dl_runtime.is_none() {
        return Ok(None);
    }
    let policy = match s.policy {
        Some((p, _)) => p,
        None => task.phases[..i]
            .iter()
            .rev()
            .find_map(|p| p.sched.policy.map(|(p, _)| p))
            .unwrap_or(task_policy),
    };
    let nice = nice_for(cx, policy, s.priority)?;
    Ok(Some((policy, nice, slice_for(cx, policy, s)?)))
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

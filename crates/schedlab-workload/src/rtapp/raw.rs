//! JSON tree → typed rt-app description ([`RawFile`]).
//!
//! This module owns key recognition and value types: which key is legal in
//! which object, event prefixes, the repeated-key rule, and the checks that
//! need no knowledge of the machine or of other tasks. Values stay in rt-app
//! units (µs, nice, raw loop counts) and keep their positions so that
//! [`super::lower`] can still report errors at the right place.
//!
//! Errors come in text order inside an object: a non-event key is handled
//! at its first occurrence, with the value of its last occurrence (json-c).

use std::collections::HashMap;

use schedlab_core::program::{GroupSpec, Policy};

use super::memcost::{self, MemAccess};
use super::{event_kind, Cx, EventKind};
use crate::json::{Kind, Member, Pos, Value};
use crate::{ErrorKind, WorkloadError};

/// The whole file.
#[derive(Clone, Debug)]
pub struct RawFile {
    /// Tasks in text order (repeated names collapsed, json-c rule).
    pub tasks: Vec<RawTask>,
    /// The `global` object (defaults when absent).
    pub global: RawGlobal,
    /// schedlab's `taskgroups` object: configured groups, each checked
    /// with [`crate::cgroup::finish`], in text order.
    pub taskgroups: Vec<GroupSpec>,
}

/// `global`, in rt-app units.
#[derive(Clone, Debug, Default)]
pub struct RawGlobal {
    /// `duration` in seconds (`-1` default).
    pub duration_s: Option<i64>,
    /// `default_policy` and where it was written.
    pub default_policy: Option<(Policy, Pos)>,
    /// `calibration`.
    pub calibration: Calibration,
    /// `log_basename`.
    pub log_basename: Option<String>,
    /// `cumulative_slack`.
    pub cumulative_slack: bool,
    /// `pi_enabled`.
    pub pi_enabled: bool,
    /// `ftrace` categories (bit set of `schedlab_core::program::FTRACE_*`).
    pub ftrace: u8,
    /// `sysctl` (schedlab's own key): scheduler tunables by kernel name,
    /// checked here against the kernel's ranges.
    pub sysctls: Vec<(String, String)>,
    /// `log_size`.
    pub log_size: LogSize,
}

/// rt-app's `log_size`: where each thread's log rows go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogSize {
    /// `"file"` (the default) or `"auto"`: every row written as it is
    /// produced.
    #[default]
    File,
    /// `"disable"` or `0`: no logs.
    Disable,
    /// `N` (MiB): an in-memory ring per thread, written when the run
    /// ends; the oldest rows are lost when it overflows.
    RingMib(u64),
}

/// Largest `log_size` ring accepted, MiB per thread.
pub const MAX_LOG_RING_MIB: i64 = 1 << 16;

/// The `calibration` setting.
#[derive(Clone, Debug, Default)]
pub enum Calibration {
    /// Absent (rt-app: calibrate CPU0, logging an error).
    #[default]
    Missing,
    /// pLoad given in ns.
    Ns(i64, Pos),
    /// Measure on this CPU.
    Cpu(u32, Pos),
}

/// A value with the position of its key.
pub type At<T> = (T, Pos);

/// Scheduling keys of a task or phase.
#[derive(Clone, Debug, Default)]
pub struct RawSched {
    /// `policy`.
    pub policy: Option<At<Policy>>,
    /// `priority` (nice for OTHER/BATCH, RT priority for FIFO/RR).
    pub priority: Option<At<i64>>,
    /// `dl-runtime` in µs (SCHED_DEADLINE runtime; custom slice for
    /// OTHER/BATCH).
    pub dl_runtime: Option<At<i64>>,
    /// `dl-period` in µs.
    pub dl_period: Option<At<i64>>,
    /// `dl-deadline` in µs.
    pub dl_deadline: Option<At<i64>>,
    /// Legacy task-level `runtime` in µs (also a custom slice request).
    pub legacy_runtime: Option<At<i64>>,
    /// Legacy task-level `period` in µs.
    pub legacy_period: Option<At<i64>>,
    /// Legacy task-level `deadline` in µs.
    pub legacy_deadline: Option<At<i64>>,
    /// `cpus`, not yet checked against the machine.
    pub cpus: Option<At<Vec<i64>>>,
    /// `util_min`, checked to be in 0..=1024.
    pub util_min: Option<At<u32>>,
    /// `util_max`, checked to be in 0..=1024.
    pub util_max: Option<At<u32>>,
    /// `taskgroup`: a checked cgroup path (`/` = the root); `""` (rt-app's
    /// "none") leaves it unset.
    pub taskgroup: Option<At<String>>,
}

/// One event in rt-app units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawEvent {
    /// `run`: µs of work.
    Run(u64),
    /// `runtime`: µs of wall time.
    Runtime(u64),
    /// `sleep`: µs.
    Sleep(u64),
    /// `timer`.
    Timer {
        /// `ref` (default "unknown").
        name: String,
        /// `period` in µs.
        period_us: u64,
        /// `mode` is "absolute".
        absolute: bool,
    },
    /// `yield`.
    Yield,
    /// `lock` (true) / `unlock` (false) of a named mutex.
    Lock(String, bool),
    /// `signal` (false) / `broad` (true) of a named condition variable.
    Signal(String, bool),
    /// `wait` (false) / `sync` (true): condition variable and mutex.
    Wait {
        /// `ref`.
        cond: String,
        /// `mutex`.
        mutex: String,
        /// `sync`: signal first.
        sync: bool,
    },
    /// `barrier`.
    Barrier(String),
    /// `suspend` (on the task's own name).
    Suspend,
    /// `resume` of a task name.
    Resume(String),
    /// `sem_post` (true) / `sem_wait` (false).
    Sem(String, bool),
    /// `mem` (false) / `iorun` (true): bytes.
    Mem(u64, bool),
    /// `fork` of a task's JSON key.
    Fork(String),
    /// `memrun`: memory work, costed by [`super::memcost`].
    MemRun(RawMemRun),
}

/// A `memrun` event's object, checked (formats-spec.md 1.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawMemRun {
    /// `type` (default `"read"`).
    pub access: MemAccess,
    /// `size`: buffer bytes, at least 1.
    pub size: u64,
    /// `count`: bytes touched (read/write) or hops (chase), at least 0.
    pub count: u64,
    /// `stride`: bytes between chain links, 1..=size (default 64, or
    /// `size` when the buffer is smaller).
    pub stride: u64,
    /// `pattern` is `"random"` (the default) rather than `"sequential"`.
    pub random: bool,
    /// `ref`: the name of a buffer shared by every event that names it.
    pub shared: Option<String>,
}

/// One phase (or the task itself when it has no `phases`).
#[derive(Clone, Debug)]
pub struct RawPhase {
    /// Phase name (task name for a phase-less task).
    pub name: String,
    /// Position of the phase's key.
    pub pos: Pos,
    /// Phase `loop` (absent for phase-less tasks: the task's loop applies).
    pub loops: Option<At<i64>>,
    /// Events in text order.
    pub events: Vec<RawEvent>,
    /// Each event's key and its position (parallel to `events`).
    pub event_keys: Vec<(String, Pos)>,
    /// Phase-level scheduling keys (empty for phase-less tasks).
    pub sched: RawSched,
}

/// One task (a JSON key under `tasks`).
#[derive(Clone, Debug)]
pub struct RawTask {
    /// Task name.
    pub name: String,
    /// Position of the task's key.
    pub pos: Pos,
    /// `instance` (default 1) and its position.
    pub instance: At<i64>,
    /// `delay` in µs.
    pub delay_us: u64,
    /// Task `loop`.
    pub loops: Option<At<i64>>,
    /// True when the task has a `phases` object.
    pub has_phases: bool,
    /// The phases (exactly one for a phase-less task).
    pub phases: Vec<RawPhase>,
    /// Task-level scheduling keys.
    pub sched: RawSched,
}

/// Where an object is, for key rules.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Level {
    /// A task object with a `phases` object.
    TaskWithPhases,
    /// A task object that is also its only phase.
    TaskOnly,
    /// An object under `phases`.
    Phase,
}

/// Members in text order, events kept, other repeated keys collapsed to
/// their first position with their last value (warning per repeat).
fn collapse(cx: &mut Cx, members: &[Member], keep_all: impl Fn(&str) -> bool) -> Vec<Member> {
    let mut last: HashMap<&str, usize> = HashMap::new();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (i, m) in members.iter().enumerate() {
        if !keep_all(&m.key) {
            last.insert(&m.key, i);
            *count.entry(&m.key).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    let mut seen: HashMap<&str, ()> = HashMap::new();
    for m in members {
        if keep_all(&m.key) {
            out.push(m.clone());
            continue;
        }
        if seen.insert(&m.key, ()).is_some() {
            continue;
        }
        let n = count[m.key.as_str()];
        let winner = &members[last[m.key.as_str()]];
        if n > 1 {
            cx.warn(
                winner.key_pos,
                format!(
                    "key \"{}\" appears {n} times in one object; using the last value at the first position (json-c's rule; workgen would keep the first)",
                    m.key
                ),
            );
        }
        out.push(Member {
            key: m.key.clone(),
            key_pos: m.key_pos,
            value: winner.value.clone(),
        });
    }
    out
}

/// Reads the root of an rt-app file.
pub fn read_file(cx: &mut Cx, root: &Value) -> Result<RawFile, WorkloadError> {
    let not_workload = "this is not an rt-app workload: it has no \"tasks\" object (fragments such as the examples' merge/ files must be merged into a complete file first)";
    let Kind::Object(members) = &root.kind else {
        return Err(cx.err(root.pos, ErrorKind::NotAWorkload, not_workload));
    };
    let members = collapse(cx, members, |_| false);
    if !members.iter().any(|m| m.key == "tasks") {
        return Err(cx.err(root.pos, ErrorKind::NotAWorkload, not_workload));
    }
    let mut tasks = Vec::new();
    let mut global = RawGlobal::default();
    let mut taskgroups = Vec::new();
    for m in &members {
        match m.key.as_str() {
            "tasks" => {
                let obj = cx.object("tasks", &m.value)?;
                // Too many tasks are refused before any is read.
                let max = crate::limits::max_tasks();
                if obj.len() as u64 > max {
                    let msg = format!(
                        "{} tasks is more than {max} ({})",
                        obj.len(),
                        crate::limits::max_tasks_hint()
                    );
                    return Err(cx.key_err(m.key_pos, "tasks", ErrorKind::Invalid, &msg));
                }
                let list = collapse(cx, obj, |_| false);
                if list.is_empty() {
                    let msg = "the workload has no tasks";
                    return Err(cx.key_err(m.key_pos, "tasks", ErrorKind::Invalid, msg));
                }
                for t in &list {
                    tasks.push(read_task(cx, t)?);
                }
            }
            "global" => {
                let obj = cx.object("global", &m.value)?;
                global = read_global(cx, obj)?;
            }
            "resources" => {
                // Legacy declarations of named objects; events create their
                // objects by name anyway, so it has no effect (formats-spec.md 1.4).
                cx.object("resources", &m.value)?;
            }
            // schedlab's extension: real rt-app ignores this key (it would
            // skip any unknown top-level key), so a file using it still runs
            // there, with unconfigured groups.
            "taskgroups" => taskgroups = read_taskgroups(cx, &m.value)?,
            k => return Err(unknown(cx, m.key_pos, k, "the top level")),
        }
    }
    // Names become file names: checked here, not when writing after the run.
    let basename = global.log_basename.as_deref().unwrap_or("rt-app");
    for t in &tasks {
        crate::limits::check_log_name(basename, &t.name)
            .map_err(|e| cx.err(t.pos, ErrorKind::Invalid, e))?;
    }
    Ok(RawFile {
        tasks,
        global,
        taskgroups,
    })
}

/// Most distinct `taskgroup` values rt-app accepts in one file.
pub const MAX_TASKGROUPS: usize = 32;

/// Most groups the `taskgroups` object may configure (each becomes a task
/// group of the model and a `cgroup/` folder of the output).
pub const MAX_CONFIGURED_TASKGROUPS: usize = 4096;

/// rt-app refuses more than [`MAX_TASKGROUPS`] distinct `taskgroup` values
/// (templates count: rt-app parses them). Groups only named under
/// `taskgroups` do not count: rt-app never sees them.
/// The whole-file limits a read file must meet (after the
/// synchronisation check, `sync_check`): taskgroup count, shared buffers.
pub fn check_limits(cx: &Cx, file: &RawFile) -> Result<(), WorkloadError> {
    check_taskgroup_count(cx, &file.tasks)?;
    check_shared_buffers(cx, &file.tasks)
}

fn check_taskgroup_count(cx: &Cx, tasks: &[RawTask]) -> Result<(), WorkloadError> {
    let mut seen: Vec<&str> = Vec::new();
    let all = tasks.iter().flat_map(|t| {
        std::iter::once(&t.sched.taskgroup).chain(t.phases.iter().map(|p| &p.sched.taskgroup))
    });
    for (path, pos) in all.flatten() {
        if seen.contains(&path.as_str()) {
            continue;
        }
        seen.push(path);
        if seen.len() > MAX_TASKGROUPS {
            let msg = format!(
                "\"{path}\" makes more than {MAX_TASKGROUPS} distinct task groups, rt-app's limit"
            );
            return Err(cx.key_err(*pos, "taskgroup", ErrorKind::Invalid, &msg));
        }
    }
    Ok(())
}

/// schedlab's top-level `taskgroups` object (real rt-app does not know
/// this key and would ignore it): `{"/path": {"cpu.max": "20000 100000",
/// "cpu.weight": 50, ...}, ...}`, cgroup v2 or v1 file names whose values
/// are ints or strings, written as to cgroupfs ([`crate::cgroup`]).
fn read_taskgroups(cx: &mut Cx, v: &Value) -> Result<Vec<GroupSpec>, WorkloadError> {
    let obj = cx.object("taskgroups", v)?;
    if obj.len() > MAX_CONFIGURED_TASKGROUPS {
        let msg = format!(
            "{} configured task groups is more than {MAX_CONFIGURED_TASKGROUPS}",
            obj.len()
        );
        return Err(cx.err(
            v.pos,
            ErrorKind::Invalid,
            format!("key \"taskgroups\": {msg}"),
        ));
    }
    let mut out = Vec::new();
    for g in collapse(cx, obj, |_| false) {
        let path = g.key.as_str();
        crate::cgroup::validate_group_path(path)
            .map_err(|e| cx.key_err(g.key_pos, path, ErrorKind::Invalid, &e))?;
        let files = cx.object(path, &g.value)?;
        let mut spec = GroupSpec::new(path);
        for f in collapse(cx, files, |_| false) {
            let (file, fv) = (f.key.as_str(), &f.value);
            let text = match &fv.kind {
                Kind::Int(i) => i.to_string(),
                Kind::Str(s) => s.clone(),
                _ => return Err(cx.type_err(file, fv, "an int or a string")),
            };
            let pos = if crate::cgroup::FILES.contains(&file) {
                fv.pos
            } else {
                f.key_pos
            };
            crate::cgroup::setting(&mut spec, file, &text).map_err(|e| {
                let msg = format!("{e} (taskgroup \"{path}\")");
                cx.key_err(pos, file, ErrorKind::Invalid, &msg)
            })?;
        }
        crate::cgroup::finish(&spec)
            .map_err(|e| cx.key_err(g.key_pos, path, ErrorKind::Invalid, &e))?;
        out.push(spec);
    }
    Ok(out)
}

fn unknown(cx: &Cx, pos: Pos, key: &str, place: &str) -> WorkloadError {
    cx.err(
        pos,
        ErrorKind::UnknownKey,
        format!("unknown key \"{key}\" in {place} (rt-app would ignore it; schedlab rejects it to catch typos)"),
    )
}

/// Longest `global.duration` the simulator accepts, in seconds (one year;
/// the limit in force is [`crate::limits::max_duration_s`]).
pub const MAX_DURATION_S: i64 = crate::limits::MAX_DURATION_S as i64;

fn read_global(cx: &mut Cx, members: &[Member]) -> Result<RawGlobal, WorkloadError> {
    let mut g = RawGlobal::default();
    for m in collapse(cx, members, |_| false) {
        let (k, v) = (m.key.as_str(), &m.value);
        match k {
            "duration" => {
                let d = cx.int(k, v)?;
                // One simulated day unless --max-duration raised it.
                let max_ns = crate::limits::max_duration_ns();
                if d > 0 && (d as u64).saturating_mul(1_000_000_000) > max_ns {
                    let hint = if max_ns < crate::limits::MAX_DURATION_NS {
                        format!(" (--max-duration raises the limit, up to {MAX_DURATION_S} s)")
                    } else {
                        String::new()
                    };
                    let max = crate::limits::duration_limit_text(max_ns);
                    let msg = format!(
                        "duration {d} s is more than the {max} the simulator accepts{hint}"
                    );
                    return Err(cx.err(v.pos, ErrorKind::Invalid, format!("key \"{k}\": {msg}")));
                }
                g.duration_s = Some(d);
            }
            "default_policy" => {
                let s = cx.string(k, v)?;
                let p = Policy::parse(s).ok_or_else(|| bad_policy(cx, v.pos, k, s))?;
                g.default_policy = Some((p, m.key_pos));
            }
            "calibration" => {
                g.calibration = match &v.kind {
                    Kind::Int(i) => Calibration::Ns(*i, v.pos),
                    Kind::Str(s) => {
                        let cpu = s.strip_prefix("CPU").and_then(|n| n.parse::<u32>().ok());
                        let cpu = cpu.ok_or_else(|| {
                            let msg =
                                format!("expected \"CPU<n>\" or an int pLoad in ns, found \"{s}\"");
                            cx.key_err(v.pos, k, ErrorKind::Invalid, &msg)
                        })?;
                        Calibration::Cpu(cpu, v.pos)
                    }
                    _ => return Err(cx.type_err(k, v, "\"CPU<n>\" or an int")),
                }
            }
            "log_basename" => {
                let b = cx.string(k, v)?;
                crate::limits::check_file_name_part("log_basename", b)
                    .map_err(|e| cx.err(v.pos, ErrorKind::Invalid, e))?;
                g.log_basename = Some(b.to_string());
            }
            "logdir" | "io_device" => {
                cx.string(k, v)?;
            }
            "pi_enabled" => g.pi_enabled = cx.boolean(k, v)?,
            "gnuplot" | "lock_pages" => {
                cx.boolean(k, v)?;
            }
            "mem_buffer_size" => {
                cx.int(k, v)?;
            }
            "log_size" => {
                g.log_size = match &v.kind {
                    Kind::Int(_) => match cx.int_in(k, v, 0, MAX_LOG_RING_MIB)? {
                        0 => LogSize::Disable,
                        n => LogSize::RingMib(n as u64),
                    },
                    Kind::Str(s) => match s.as_str() {
                        "file" | "auto" => LogSize::File,
                        "disable" => LogSize::Disable,
                        _ => {
                            let msg = format!("\"{s}\" is not a log mode (expected \"file\", \"auto\", \"disable\" or a ring size in MiB)");
                            return Err(cx.key_err(v.pos, k, ErrorKind::Invalid, &msg));
                        }
                    },
                    _ => return Err(cx.type_err(k, v, "an int (MiB) or a string")),
                }
            }
            "ftrace" => g.ftrace = ftrace_categories(cx, m.key_pos, v)?,
            "cumulative_slack" => g.cumulative_slack = cx.boolean(k, v)?,
            "frag" => cx.warn(m.key_pos, "key \"frag\": legacy global key, ignored"),
            "sysctl" => g.sysctls = read_sysctls(cx, v)?,
            _ => return Err(unknown(cx, m.key_pos, k, "\"global\"")),
        }
    }
    Ok(g)
}

/// `global.sysctl` (not an rt-app key: schedlab's way to carry the
/// tunables a workload was measured with): an object of kernel tunable
/// name → int (or string) value, e.g. `{"kernel.sched_rt_runtime_us": -1,
/// "base_slice_ns": 3000000}`. Each is checked in order on top of the
/// current kernel's defaults (`schedlab_core::tunables`).
fn read_sysctls(cx: &mut Cx, v: &Value) -> Result<Vec<(String, String)>, WorkloadError> {
    let members = cx.object("sysctl", v)?;
    let mut scratch = schedlab_core::tunables::Tunables::default();
    let mut out = Vec::new();
    for m in members {
        let value = match &m.value.kind {
            Kind::Int(i) => i.to_string(),
            Kind::Str(s) => s.clone(),
            _ => return Err(cx.type_err(&m.key, &m.value, "an int or a string")),
        };
        scratch
            .set_value(&m.key, &value)
            .map_err(|e| cx.err(m.value.pos, ErrorKind::Invalid, format!("\"sysctl\": {e}")))?;
        out.push((m.key.clone(), value));
    }
    Ok(out)
}

/// `global.ftrace`: comma-separated categories, case-insensitive (`main`,
/// `task`, `loop`, `event` — the tutorial's `run` —, `stats`, `none`), or
/// the deprecated bool (`true` = every category, the internal `attrs`
/// included).
fn ftrace_categories(cx: &mut Cx, key_pos: Pos, v: &Value) -> Result<u8, WorkloadError> {
    use schedlab_core::program::{
        FTRACE_ATTRS, FTRACE_EVENT, FTRACE_LOOP, FTRACE_MAIN, FTRACE_STATS, FTRACE_TASK,
    };
    match &v.kind {
        Kind::Bool(true) => Ok(FTRACE_MAIN
            | FTRACE_TASK
            | FTRACE_LOOP
            | FTRACE_EVENT
            | FTRACE_STATS
            | FTRACE_ATTRS),
        Kind::Bool(false) => Ok(0),
        Kind::Str(s) => {
            let mut bits = 0;
            for c in s.split(',').map(|c| c.trim().to_ascii_lowercase()) {
                bits |= match c.as_str() {
                    "main" => FTRACE_MAIN,
                    "task" => FTRACE_TASK,
                    "loop" => FTRACE_LOOP,
                    "event" | "run" => FTRACE_EVENT,
                    "stats" => FTRACE_STATS,
                    "none" | "" => 0,
                    other => {
                        cx.warn(
                            key_pos,
                            format!("key \"ftrace\": unknown category \"{other}\" ignored (main, task, loop, event, stats, none)"),
                        );
                        0
                    }
                };
            }
            Ok(bits)
        }
        _ => Err(cx.type_err("ftrace", v, "a string of categories or a boolean")),
    }
}

fn bad_policy(cx: &Cx, pos: Pos, key: &str, s: &str) -> WorkloadError {
    let msg = format!("unknown policy \"{s}\" (expected SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR or SCHED_DEADLINE)");
    cx.key_err(pos, key, ErrorKind::Invalid, &msg)
}

fn read_task(cx: &mut Cx, m: &Member) -> Result<RawTask, WorkloadError> {
    crate::limits::check_file_name_part("task name", &m.key)
        .map_err(|e| cx.err(m.key_pos, ErrorKind::Invalid, e))?;
    let members = cx.object(&m.key, &m.value)?;
    let has_phases = members.iter().any(|x| x.key == "phases");
    let level = if has_phases {
        Level::TaskWithPhases
    } else {
        Level::TaskOnly
    };
    let mut task = RawTask {
        name: m.key.clone(),
        pos: m.key_pos,
        instance: (1, m.key_pos),
        delay_us: 0,
        loops: None,
        has_phases,
        phases: Vec::new(),
        sched: RawSched::default(),
    };
    let mut own = RawPhase {
        name: m.key.clone(),
        pos: m.key_pos,
        loops: None,
        events: Vec::new(),
        event_keys: Vec::new(),
        sched: RawSched::default(),
    };
    let mut loops = None;
    let keep = |k: &str| event_kind(k).is_some() && !(has_phases && k == "runtime");
    for x in collapse(cx, members, keep) {
        let (k, v) = (x.key.as_str(), &x.value);
        match k {
            "instance" => task.instance = (cx.int(k, v)?, v.pos),
            "delay" => task.delay_us = cx.int_in(k, v, 0, MAX_US)? as u64,
            "phases" => {
                let obj = cx.object(k, v)?;
                // Too many phases are refused before any is read (phases
                // are not threads: --max-tasks does not count them).
                let max = crate::limits::MAX_PHASES;
                if obj.len() as u64 > max {
                    let msg = format!("{} phases in one task is more than {max}", obj.len());
                    return Err(cx.key_err(x.key_pos, "phases", ErrorKind::Invalid, &msg));
                }
                let list = collapse(cx, obj, |_| false);
                if list.is_empty() {
                    return Err(cx.key_err(x.key_pos, k, ErrorKind::Invalid, "no phases"));
                }
                for p in &list {
                    task.phases.push(read_phase(cx, p)?);
                }
            }
            _ => read_common(cx, &x, level, &mut own, &mut task.sched, &mut loops)?,
        }
    }
    task.loops = loops;
    if !has_phases {
        if own.events.is_empty() {
            let msg = format!("task \"{}\" has no events (it would do nothing)", m.key);
            return Err(cx.err(m.key_pos, ErrorKind::Invalid, msg));
        }
        task.phases.push(own);
    }
    Ok(task)
}

fn read_phase(cx: &mut Cx, m: &Member) -> Result<RawPhase, WorkloadError> {
    let members = cx.object(&m.key, &m.value)?;
    let mut phase = RawPhase {
        name: m.key.clone(),
        pos: m.key_pos,
        loops: None,
        events: Vec::new(),
        event_keys: Vec::new(),
        sched: RawSched::default(),
    };
    let mut sched = RawSched::default();
    let mut loops = None;
    for x in collapse(cx, members, |k| event_kind(k).is_some()) {
        read_common(cx, &x, Level::Phase, &mut phase, &mut sched, &mut loops)?;
    }
    phase.sched = sched;
    phase.loops = loops;
    if phase.events.is_empty() {
        let msg = format!(
            "phase \"{}\" has no events (rt-app requires at least one)",
            m.key
        );
        return Err(cx.err(m.key_pos, ErrorKind::Invalid, msg));
    }
    Ok(phase)
}

/// Keys shared by task and phase objects: events, `loop`, scheduling keys.
fn read_common(
    cx: &mut Cx,
    x: &Member,
    level: Level,
    phase: &mut RawPhase,
    sched: &mut RawSched,
    loops: &mut Option<At<i64>>,
) -> Result<(), WorkloadError> {
    let (k, v) = (x.key.as_str(), &x.value);
    let unsupported = |what: &str| {
        let msg = format!("{what} is not supported yet");
        Err(cx.key_err(x.key_pos, k, ErrorKind::Unsupported, &msg))
    };
    if level == Level::TaskWithPhases && k == "runtime" {
        sched.legacy_runtime = Some((cx.int(k, v)?, v.pos));
        return Ok(());
    }
    if let Some(ev) = event_kind(k) {
        if level == Level::TaskWithPhases {
            let msg = "events at task level are ignored when the task has \"phases\" (rt-app skips them); move it into a phase";
            return Err(cx.key_err(x.key_pos, k, ErrorKind::Invalid, msg));
        }
        if level == Level::TaskOnly && k == "runtime" {
            sched.legacy_runtime = Some((cx.int(k, v)?, v.pos));
        }
        phase.events.push(read_event(cx, x, ev)?);
        phase.event_keys.push((x.key.clone(), x.key_pos));
        return Ok(());
    }
    match k {
        "loop" => *loops = Some((cx.int(k, v)?, v.pos)),
        "policy" => {
            let s = cx.string(k, v)?;
            let p = Policy::parse(s).ok_or_else(|| bad_policy(cx, v.pos, k, s))?;
            sched.policy = Some((p, x.key_pos));
        }
        "priority" => sched.priority = Some((cx.int(k, v)?, v.pos)),
        // Deadline parameters; which of them matter depends on the policy,
        // known only once the file is read ([`super::lower`]).
        "dl-runtime" => sched.dl_runtime = Some((cx.int(k, v)?, v.pos)),
        "dl-period" => sched.dl_period = Some((cx.int(k, v)?, v.pos)),
        "dl-deadline" => sched.dl_deadline = Some((cx.int(k, v)?, v.pos)),
        "period" if level != Level::Phase => sched.legacy_period = Some((cx.int(k, v)?, v.pos)),
        "deadline" if level != Level::Phase => sched.legacy_deadline = Some((cx.int(k, v)?, v.pos)),
        "cpus" => {
            let Kind::Array(items) = &v.kind else {
                return Err(cx.type_err(k, v, "an array of ints"));
            };
            if items.is_empty() {
                return Err(cx.key_err(v.pos, k, ErrorKind::Invalid, "empty CPU list"));
            }
            let cpus = items
                .iter()
                .map(|i| cx.int(k, i))
                .collect::<Result<Vec<_>, _>>()?;
            sched.cpus = Some((cpus, v.pos));
        }
        "taskgroup" => {
            let path = cx.string(k, v)?;
            if !path.is_empty() {
                crate::cgroup::validate_path(path)
                    .map_err(|e| cx.key_err(v.pos, k, ErrorKind::Invalid, &e))?;
                sched.taskgroup = Some((path.to_string(), v.pos));
            }
        }
        "util_min" => sched.util_min = Some((cx.int_in(k, v, 0, 1024)? as u32, v.pos)),
        "util_max" => sched.util_max = Some((cx.int_in(k, v, 0, 1024)? as u32, v.pos)),
        "nodes_membind" => return unsupported("NUMA memory binding"),
        "exec" | "lock_order" | "resources" if level != Level::Phase => {
            let msg = "this task is written in the old grammar of the merge.py fragments (exec, lock_order, resources); such a merge/ fragment is not an rt-app workload";
            return Err(cx.key_err(x.key_pos, k, ErrorKind::NotAWorkload, msg));
        }
        "instance" | "delay" | "phases" | "period" | "deadline" => {
            let msg = format!("key \"{k}\" is only valid at task level, not in a phase");
            return Err(cx.err(x.key_pos, ErrorKind::Invalid, msg));
        }
        _ => {
            let place = if level == Level::Phase {
                "a phase"
            } else {
                "a task"
            };
            return Err(unknown(cx, x.key_pos, k, place));
        }
    }
    Ok(())
}

/// Largest µs value accepted, so that the value in ns fits in 63 bits.
pub const MAX_US: i64 = i64::MAX / 1000;

/// A positive int of µs, or an error naming the key.
fn positive_us(cx: &Cx, key: &str, v: &Value) -> Result<u64, WorkloadError> {
    let t = cx.int(key, v)?;
    if t <= 0 {
        let msg = format!("{t} must be greater than 0 (µs)");
        return Err(cx.key_err(v.pos, key, ErrorKind::Invalid, &msg));
    }
    Ok(cx.int_in(key, v, 1, MAX_US)? as u64)
}

fn read_event(cx: &mut Cx, x: &Member, ev: EventKind) -> Result<RawEvent, WorkloadError> {
    let (k, v) = (x.key.as_str(), &x.value);
    Ok(match ev {
        EventKind::Unsupported(name, note) => {
            let bare = if v.kind == Kind::Bare {
                "; bare key form of the old workgen"
            } else {
                ""
            };
            let msg = format!("event '{name}' is not supported yet ({note}{bare})");
            return Err(cx.key_err(x.key_pos, k, ErrorKind::Unsupported, &msg));
        }
        EventKind::Run => RawEvent::Run(positive_us(cx, k, v)?),
        EventKind::Runtime => RawEvent::Runtime(positive_us(cx, k, v)?),
        EventKind::Sleep => {
            let t = cx.int(k, v)?;
            let t = if t < 0 {
                t
            } else {
                cx.int_in(k, v, 0, MAX_US)?
            };
            if t < 0 {
                let msg = format!("{t} must not be negative (µs)");
                return Err(cx.key_err(v.pos, k, ErrorKind::Invalid, &msg));
            }
            if t == 0 {
                cx.warn(
                    v.pos,
                    format!("key \"{k}\": a sleep of 0 µs only enters and leaves the kernel"),
                );
            }
            RawEvent::Sleep(t as u64)
        }
        EventKind::Yield => {
            if v.kind == Kind::Bare {
                return Err(cx.type_err(k, v, "a value"));
            }
            RawEvent::Yield
        }
        EventKind::Timer => read_timer(cx, k, v)?,
        EventKind::Lock(lock) => RawEvent::Lock(cx.string(k, v)?.to_string(), lock),
        EventKind::Signal(all) => RawEvent::Signal(cx.string(k, v)?.to_string(), all),
        EventKind::Barrier => RawEvent::Barrier(cx.string(k, v)?.to_string()),
        EventKind::Fork => RawEvent::Fork(cx.string(k, v)?.to_string()),
        EventKind::MemRun => read_memrun(cx, k, v)?,
        EventKind::Resume => RawEvent::Resume(cx.string(k, v)?.to_string()),
        EventKind::Sem(post) => RawEvent::Sem(cx.string(k, v)?.to_string(), post),
        EventKind::Suspend => {
            // suspend ignores its value, so the old workgen's bare form
            // (which rewrote it to the task's name) means the same thing.
            if v.kind == Kind::Bare {
                cx.warn(
                    x.key_pos,
                    format!("key \"{k}\": bare key read as a suspend of the thread itself (the old workgen's form; current rt-app rejects it: write \"{k}\" : \"\")"),
                );
            }
            RawEvent::Suspend
        }
        EventKind::Mem(io) => {
            let n = cx.int(k, v)?;
            if n <= 0 {
                let msg = format!("{n} must be greater than 0 (bytes)");
                return Err(cx.key_err(v.pos, k, ErrorKind::Invalid, &msg));
            }
            RawEvent::Mem(n as u64, io)
        }
        EventKind::Wait(sync) => {
            let obj = cx.object(k, v)?;
            let (mut cond, mut mutex) = ("unknown".to_string(), "unknown".to_string());
            for m in obj {
                match m.key.as_str() {
                    "ref" => cond = cx.string("ref", &m.value)?.to_string(),
                    "mutex" => mutex = cx.string("mutex", &m.value)?.to_string(),
                    other => {
                        let msg =
                            format!("unknown key \"{other}\" in a {k} event (valid: ref, mutex)");
                        return Err(cx.key_err(m.key_pos, other, ErrorKind::UnknownKey, &msg));
                    }
                }
            }
            RawEvent::Wait { cond, mutex, sync }
        }
    })
}

/// Default `stride` of a `memrun` chain: one cache line.
pub const MEMRUN_DEFAULT_STRIDE: u64 = 64;

/// Most CPU work one `memrun` may cost, in ns (as for `run`, the value
/// must fit in 63 bits).
const MAX_MEMRUN_NS: u128 = i64::MAX as u128;

/// `memrun`: `{"type", "size", "count", "stride", "pattern", "ref"}`.
/// Every problem is reported as `key "<event key>": ...`.
fn read_memrun(cx: &mut Cx, key: &str, v: &Value) -> Result<RawEvent, WorkloadError> {
    let obj = cx.object(key, v)?;
    let members = collapse(cx, obj, |_| false);
    let bad = |pos: Pos, msg: String| cx.key_err(pos, key, ErrorKind::Invalid, &msg);
    let int = |name: &str, mv: &Value| match mv.kind {
        Kind::Int(i) => Ok(i),
        _ => Err(bad(
            mv.pos,
            format!("\"{name}\" expected an int, found {}", mv.kind.type_name()),
        )),
    };
    let string = |name: &str, mv: &'_ Value| match &mv.kind {
        Kind::Str(s) => Ok(s.clone()),
        _ => Err(bad(
            mv.pos,
            format!(
                "\"{name}\" expected a string, found {}",
                mv.kind.type_name()
            ),
        )),
    };
    let mut access = MemAccess::Read;
    let (mut size, mut count, mut stride) = (None, None, None);
    let mut random = true;
    let mut shared = None;
    for m in &members {
        let (name, mv) = (m.key.as_str(), &m.value);
        match name {
            "type" => {
                access = match string(name, mv)?.as_str() {
                    "read" => MemAccess::Read,
                    "write" => MemAccess::Write,
                    "chase" => MemAccess::Chase,
                    s => {
                        let msg = format!(
                            "unknown \"type\" \"{s}\" (expected \"read\", \"write\" or \"chase\")"
                        );
                        return Err(bad(mv.pos, msg));
                    }
                }
            }
            "pattern" => {
                random = match string(name, mv)?.as_str() {
                    "random" => true,
                    "sequential" => false,
                    s => {
                        let msg = format!(
                            "unknown \"pattern\" \"{s}\" (expected \"random\" or \"sequential\")"
                        );
                        return Err(bad(mv.pos, msg));
                    }
                }
            }
            "size" => {
                let n = int(name, mv)?;
                if n <= 0 {
                    return Err(bad(
                        mv.pos,
                        format!("\"size\" {n} must be greater than 0 (bytes)"),
                    ));
                }
                size = Some((n as u64, mv.pos));
            }
            "count" => {
                let n = int(name, mv)?;
                if n < 0 {
                    return Err(bad(mv.pos, format!("\"count\" {n} must not be negative")));
                }
                count = Some((n as u64, mv.pos));
            }
            "stride" => {
                let n = int(name, mv)?;
                if n < 1 {
                    return Err(bad(
                        mv.pos,
                        format!("\"stride\" {n} must be at least 1 (bytes)"),
                    ));
                }
                stride = Some((n as u64, mv.pos));
            }
            "ref" => shared = Some(string(name, mv)?),
            other => {
                let msg = format!("unknown key \"{other}\" in a memrun event (valid: type, size, count, stride, pattern, ref)");
                return Err(cx.key_err(m.key_pos, key, ErrorKind::UnknownKey, &msg));
            }
        }
    }
    let Some((size, _)) = size else {
        return Err(bad(
            v.pos,
            "memrun has no \"size\" (the buffer size in bytes is required)".into(),
        ));
    };
    let Some((count, count_pos)) = count else {
        let msg = "memrun has no \"count\" (bytes to touch, or hops for \"chase\", is required)";
        return Err(bad(v.pos, msg.into()));
    };
    let stride = match stride {
        Some((s, pos)) if s > size => {
            let msg = format!(
                "\"stride\" {s} is larger than \"size\" {size} (the chain needs at least one link)"
            );
            return Err(bad(pos, msg));
        }
        Some((s, _)) => s,
        None => MEMRUN_DEFAULT_STRIDE.min(size),
    };
    if memcost::work_ns(access, size, count, random) > MAX_MEMRUN_NS {
        let msg = format!("\"count\" {count} costs more CPU work than the simulator accepts");
        return Err(bad(count_pos, msg));
    }
    if count == 0 {
        cx.warn(
            v.pos,
            format!("key \"{key}\": a memrun with \"count\" 0 does no work"),
        );
    }
    Ok(RawEvent::MemRun(RawMemRun {
        access,
        size,
        count,
        stride,
        random,
        shared,
    }))
}

/// Every `memrun` naming one `ref` shares one buffer, so they must agree
/// on its `size`, `stride` and `pattern` (templates count: rt-app parses
/// them). The error is at the first event that disagrees with an earlier
/// one.
fn check_shared_buffers(cx: &Cx, tasks: &[RawTask]) -> Result<(), WorkloadError> {
    let mut first: HashMap<&str, (&RawMemRun, Pos)> = HashMap::new();
    for p in tasks.iter().flat_map(|t| &t.phases) {
        for (e, (key, pos)) in p.events.iter().zip(&p.event_keys) {
            let RawEvent::MemRun(m) = e else { continue };
            let Some(name) = &m.shared else { continue };
            let Some(&(f, at)) = first.get(name.as_str()) else {
                first.insert(name, (m, *pos));
                continue;
            };
            let pattern = |r: bool| if r { "random" } else { "sequential" };
            let diff = if f.size != m.size {
                format!("\"size\" {} here, {}", m.size, f.size)
            } else if f.stride != m.stride {
                format!("\"stride\" {} here, {}", m.stride, f.stride)
            } else if f.random != m.random {
                format!(
                    "\"pattern\" \"{}\" here, \"{}\"",
                    pattern(m.random),
                    pattern(f.random)
                )
            } else {
                continue;
            };
            let msg = format!("buffer \"{name}\" is shared, but its users disagree: {diff} in the memrun at {at} (every user of a \"ref\" must give the same size, stride and pattern)");
            return Err(cx.key_err(*pos, key, ErrorKind::Invalid, &msg));
        }
    }
    Ok(())
}

fn read_timer(cx: &mut Cx, key: &str, v: &Value) -> Result<RawEvent, WorkloadError> {
    let obj = cx.object(key, v)?;
    let members = collapse(cx, obj, |_| false);
    let (mut name, mut period, mut absolute) = ("unknown".to_string(), None, false);
    for m in &members {
        let (k, tv) = (m.key.as_str(), &m.value);
        match k {
            "ref" => name = cx.string(k, tv)?.to_string(),
            "period" => period = Some(positive_us(cx, k, tv)?),
            "mode" => {
                absolute = match cx.string(k, tv)? {
                    "absolute" => true,
                    "relative" => false,
                    s => {
                        let msg = format!(
                            "unknown timer mode \"{s}\" (expected \"relative\" or \"absolute\")"
                        );
                        return Err(cx.key_err(tv.pos, k, ErrorKind::Invalid, &msg));
                    }
                }
            }
            _ => return Err(unknown(cx, m.key_pos, k, "a timer")),
        }
    }
    let Some(period_us) = period else {
        let msg = "timer has no \"period\" (rt-app's default 0 never sleeps)";
        return Err(cx.key_err(v.pos, key, ErrorKind::Invalid, msg));
    };
    Ok(RawEvent::Timer {
        name,
        period_us,
        absolute,
    })
}

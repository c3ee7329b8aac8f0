//! rt-app workload files (formats-spec.md section 1).
//!
//! This module owns the rt-app grammar: which keys exist where, how event
//! keys are recognised (by prefix, in rt-app's resolution order), units and
//! defaults. [`raw`] reads the JSON tree into typed tasks, phases and events;
//! [`lower`] expands instances into threads, allocates timers and converts
//! units into a [`schedlab_core::program::Workload`].
//!
//! ## Where schedlab deviates from rt-app (on purpose)
//!
//! * **Unknown keys are errors** (`unknown key "X"`). rt-app skips them
//!   silently; we prefer catching typos such as `"prioriry"`. The legacy
//!   global key `"frag"`, which several shipped examples still carry, is
//!   accepted and ignored with a warning.
//! * **Events at task level in a task with `"phases"`** are an error; rt-app
//!   ignores them silently. (The exact key `"runtime"` there is the legacy
//!   scheduling key and is accepted.)
//! * **Repeated event keys** are separate events at their text position
//!   (workgen's rule, formats-spec.md 1.3). **Repeated non-event keys**, and
//!   repeated task or phase names, follow json-c: the *last* value wins at
//!   the *first* position; each repeat adds a warning (workgen would make the
//!   first value win for one-line keys).
//! * **Bare keys** (`"suspend",`, the old workgen input form) are read; a
//!   bare `suspend` is a suspend of the thread itself (`suspend` ignores its
//!   value; the old workgen rewrote it to the task's name), with a warning
//!   because current rt-app refuses the form; any other bare key is an
//!   error.
//! * **Synchronisation mistakes that would hang or misbehave in rt-app are
//!   errors** ([`sync_check`]): a `lock` without its `unlock` in the same
//!   phase, an `unlock` of a mutex the phase does not hold, a `wait`/`sync`
//!   whose mutex is not held, a `wait` on a condition nobody signals, a
//!   `sem_wait` on a semaphore nobody posts and a `suspend` nobody resumes.
//! * `"sleep": 0` is accepted with a warning (the shipped template uses it);
//!   zero or negative `run`, `runtime` and timer periods are errors.
//! * `loop` must be `-1` (for ever) or at least 1; a phase `loop` must be at
//!   least 1. rt-app accepts other values with odd effects.
//! * `"calibration": "CPUn"` uses [`DEFAULT_PLOAD_NS`]; a missing
//!   `calibration` does the same with a warning (rt-app logs an error and
//!   calibrates CPU0).
//! * A phase-level `priority` without `policy` is applied with the policy in
//!   force at that point of the phase list (the last earlier phase that sets
//!   one, else the task's).
//!
//! * `taskgroup` with SCHED_FIFO, SCHED_RR or SCHED_DEADLINE is an error,
//!   as in rt-app. For a phase-level `taskgroup` the policy is the one in
//!   force at that phase (see above).
//! * Negative `dl-runtime`, `dl-period`, `dl-deadline` (and their legacy
//!   names) are errors whatever the policy.
//! * A task whose every event takes no time (`memrun` count 0, `sleep`
//!   0, ...) and that loops for ever is an error: simulated time would
//!   stop.
//!
//! ## Scheduling policies
//!
//! Every rt-app policy is read, at task level, phase level and as
//! `global.default_policy` ([`lower`] has the details):
//!
//! * SCHED_OTHER / SCHED_BATCH: `priority` is the nice value (-20..=19);
//!   `dl-runtime` (or the legacy task-level `runtime`) requests a custom
//!   slice; `dl-period` / `dl-deadline` are ignored with a warning.
//! * SCHED_IDLE: `priority` and the slice are ignored with a warning.
//! * SCHED_FIFO / SCHED_RR: `priority` is the RT priority, 1..=99, default
//!   10; the deadline keys are ignored with a warning.
//! * SCHED_DEADLINE: `dl-runtime` is required (> 0), `dl-period` defaults
//!   to it and `dl-deadline` to the period; at task level the legacy
//!   `runtime` / `period` / `deadline` stand in for an absent or zero
//!   `dl-*` key. The kernel's `sched_setattr` rules are checked at load
//!   time ([`schedlab_core::program::check_dl_params`]: 1024 ns <= runtime <=
//!   deadline <= period, 100 µs <= period <= 4 s) and reported at the key
//!   to blame. `priority` is ignored with a warning. A phase that is
//!   SCHED_DEADLINE without its own `dl-runtime` keeps the parameters in
//!   force (the last earlier phase's, else the task's); with none it is an
//!   error. Admission control (total bandwidth at most 95 % of the CPUs)
//!   is the simulator's, at set-up.
//!
//! ## Not supported yet (one-line error naming the key)
//!
//! Key `nodes_membind`; forks that nest without end (a task that forks
//! itself, directly or through the tasks it forks), because forked
//! threads are made at load time.
//!
//! ## `memrun`
//!
//! `{"type", "size", "count", "stride", "pattern", "ref"}` is CPU work
//! whose amount is given by the cost model of [`memcost`] (guessed figures
//! for a current x86/Arm core, by the cache level `size` fits in); it is
//! lowered like `mem` to work that rt-app's log does not count as `run`
//! (no `perf`, `run` or `c_duration`). `size` (> 0) and `count` (>= 0) are
//! required; `type` defaults to `"read"`, `pattern` to `"random"`,
//! `stride` to 64 (or `size` when smaller) and must be 1..=`size`. All
//! users of one `ref` must agree on size, stride and pattern (checked
//! across the file, templates included). Errors are
//! `key "<event key>": problem`; a `count` of 0 only warns.
//!
//! ## Task groups
//!
//! `taskgroup` (task or phase level) is a cgroup path, `/` being the root;
//! rt-app creates it in the cpu controller's hierarchy. At task level it is
//! the thread's group from its start; at phase level the thread moves there
//! at the start of each iteration of the phase, and a phase without one
//! leaves the thread where it is. `""` is rt-app's "none". Paths follow
//! [`crate::cgroup::validate_path`]; more than 32 distinct values are an
//! error (rt-app's limit).
//!
//! The top-level object `"taskgroups"` is **schedlab's extension** (real
//! rt-app does not know it and skips it): it configures groups by path with
//! cgroup v2 or v1 cpu controller file names, values as ints or strings,
//! e.g. `"taskgroups": {"/capped": {"cpu.max": "20000 100000",
//! "cpu.max.burst": 0, "cpu.weight": 100}}`. Semantics and limits are
//! [`crate::cgroup`]'s; the root `/` cannot be configured. A configured
//! group no task names still exists (empty).
//!
//! `fork` makes, at load time, one unstarted thread of the template per
//! fork the event can make (loops of its phase times the task's, at most
//! rt-app's 1024); the run starts them in order. A forked thread whose
//! template forks in turn gets pools of its own, the same way, to any
//! depth: pools are made breadth first (the start-up threads' pools, then
//! those of the threads in them, ...), and the start-up threads plus every
//! pre-made thread may not exceed [`MAX_THREADS`]. A forked thread is named
//! `<template>-<i>-<nnnn>` with `i` its own global index (after the
//! start-up threads, in the order the pools are made) and `nnnn` the
//! fork's count for that event of that thread: formats-spec.md does not say
//! which index rt-app uses there, so this is our choice.
//!
//! `util_min` / `util_max` are read (0..=1024, min <= max) and recorded in
//! summary.json; nothing modelled reads them (see
//! [`schedlab_core::program::Uclamp`]).

pub mod lower;
pub mod memcost;
pub mod raw;
pub mod sync_check;

use crate::json::{Kind, Pos, Value};
use crate::{ErrorKind, WorkloadError};

/// pLoad (ns per calibrated loop) used when the file asks for run-time
/// calibration (`"calibration": "CPUn"`) or gives none.
///
/// The simulator executes `run` work exactly, so this value only decides
/// the truncation of `run` to whole loops and the numbers in the log's
/// `perf` column (`floor(t_us / pLoad)`); 100 ns is a typical pLoad of a
/// current big core.
pub const DEFAULT_PLOAD_NS: u64 = 100;

/// Most threads a file may create, at start plus every thread its forks
/// (nested or not) can create; more is surely a mistake.
pub const MAX_THREADS: u64 = crate::limits::DEFAULT_MAX_TASKS;

/// Kernel bounds of a custom slice (`sched_runtime` on a fair task): 0.1 ms.
pub const MIN_SLICE_US: u64 = 100;
/// Kernel bounds of a custom slice: 100 ms.
pub const MAX_SLICE_US: u64 = 100_000;

/// What an event key is, after prefix resolution.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// `run*` (but not `runtime*`): fixed work.
    Run,
    /// `runtime*`: fixed wall-clock time.
    Runtime,
    /// `sleep*`.
    Sleep,
    /// `timer*`.
    Timer,
    /// `yield*`.
    Yield,
    /// `lock*` / `unlock*`.
    Lock(bool),
    /// `signal*` (false) / `broad*` (true).
    Signal(bool),
    /// `wait*` (false) / `sync*` (true).
    Wait(bool),
    /// `barrier*`.
    Barrier,
    /// `suspend*`.
    Suspend,
    /// `resume*`.
    Resume,
    /// `sem_post*` (true) / `sem_wait*` (false).
    Sem(bool),
    /// `mem*` (false) / `iorun*` (true).
    Mem(bool),
    /// `fork`.
    Fork,
    /// `memrun`.
    MemRun,
    /// A real rt-app event not modelled yet: (canonical name, why/when).
    Unsupported(&'static str, &'static str),
}

/// Resolves an event key by prefix, in rt-app's order (formats-spec.md 1.7).
/// `None`: not an event key.
pub fn event_kind(key: &str) -> Option<EventKind> {
    use EventKind::*;
    let table: [(&str, EventKind); 18] = [
        ("runtime", Runtime),
        ("run", Run),
        ("sleep", Sleep),
        ("memrun", MemRun),
        ("mem", Mem(false)),
        ("iorun", Mem(true)),
        ("lock", Lock(true)),
        ("unlock", Lock(false)),
        ("signal", Signal(false)),
        ("broad", Signal(true)),
        ("wait", Wait(false)),
        ("sync", Wait(true)),
        ("barrier", Barrier),
        ("timer", Timer),
        ("resume", Resume),
        ("suspend", Suspend),
        ("yield", Yield),
        ("fork", Fork),
    ];
    if let Some((_, k)) = table.iter().find(|(p, _)| key.starts_with(p)) {
        return Some(*k);
    }
    if key.starts_with("sem_post") {
        return Some(Sem(true));
    }
    if key.starts_with("sem_wait") {
        return Some(Sem(false));
    }
    None
}

/// Error and warning context: the file name and the warnings so far.
#[derive(Debug)]
pub struct Cx {
    /// File name for messages.
    pub file: String,
    /// Warnings, one line each.
    pub warnings: Vec<String>,
    /// Names of mutexes, condition variables, barriers and semaphores, in
    /// the order first met (their index is the id the ops carry).
    pub sync: SyncNames,
}

/// Named synchronisation objects; rt-app keys them by (name, kind).
#[derive(Debug, Default)]
pub struct SyncNames {
    /// Mutex names.
    pub mutexes: Vec<String>,
    /// Condition variable names.
    pub conds: Vec<String>,
    /// Barrier names.
    pub barriers: Vec<String>,
    /// Semaphore names.
    pub sems: Vec<String>,
}

/// Index of `name` in `list`, added if new.
pub fn intern(list: &mut Vec<String>, name: &str) -> u32 {
    match list.iter().position(|n| n == name) {
        Some(i) => i as u32,
        None => {
            list.push(name.to_string());
            (list.len() - 1) as u32
        }
    }
}

impl Cx {
    /// A fresh context for `file`.
    pub fn new(file: &str) -> Self {
        Cx {
            file: file.to_string(),
            warnings: Vec::new(),
            sync: SyncNames::default(),
        }
    }

    /// Builds an error at `pos`.
    pub fn err(&self, pos: Pos, kind: ErrorKind, msg: impl Into<String>) -> WorkloadError {
        WorkloadError::new(&self.file, pos, kind, msg)
    }

    /// Builds an error about `key` at `pos`: `key "K": msg`.
    pub fn key_err(&self, pos: Pos, key: &str, kind: ErrorKind, msg: &str) -> WorkloadError {
        self.err(pos, kind, format!("key \"{key}\": {msg}"))
    }

    /// Records a warning at `pos`.
    pub fn warn(&mut self, pos: Pos, msg: impl AsRef<str>) {
        let line = format!("{}:{}: warning: {}", self.file, pos, msg.as_ref());
        self.warnings.push(line);
    }

    fn type_err(&self, key: &str, v: &Value, want: &str) -> WorkloadError {
        let msg = match v.kind {
            Kind::Bare => "has no value (json-c needs ': value')".to_string(),
            _ => format!("expected {want}, found {}", v.kind.type_name()),
        };
        self.key_err(v.pos, key, ErrorKind::Invalid, &msg)
    }

    /// The value as an int, or a one-line type error naming `key`.
    pub fn int(&self, key: &str, v: &Value) -> Result<i64, WorkloadError> {
        match v.kind {
            Kind::Int(i) => Ok(i),
            _ => Err(self.type_err(key, v, "an int")),
        }
    }

    /// The value as an int in `lo..=hi`.
    pub fn int_in(&self, key: &str, v: &Value, lo: i64, hi: i64) -> Result<i64, WorkloadError> {
        let i = self.int(key, v)?;
        if i < lo || i > hi {
            let msg = format!("{i} is out of range (expected {lo}..={hi})");
            return Err(self.key_err(v.pos, key, ErrorKind::Invalid, &msg));
        }
        Ok(i)
    }

    /// The value as a string.
    pub fn string<'v>(&self, key: &str, v: &'v Value) -> Result<&'v str, WorkloadError> {
        match &v.kind {
            Kind::Str(s) => Ok(s),
            _ => Err(self.type_err(key, v, "a string")),
        }
    }

    /// The value as a boolean.
    pub fn boolean(&self, key: &str, v: &Value) -> Result<bool, WorkloadError> {
        match v.kind {
            Kind::Bool(b) => Ok(b),
            _ => Err(self.type_err(key, v, "a boolean")),
        }
    }

    /// The value as an object's members.
    pub fn object<'v>(
        &self,
        key: &str,
        v: &'v Value,
    ) -> Result<&'v [crate::json::Member], WorkloadError> {
        match &v.kind {
            Kind::Object(m) => Ok(m),
            _ => Err(self.type_err(key, v, "an object")),
        }
    }
}

//! # schedlab-workload: workload readers
//!
//! Turns workload descriptions into the simulator's behaviour program
//! ([`schedlab_core::program::Workload`]). The simulator never sees JSON.
//!
//! ```text
//!  text ──json::parse──► ordered multimap tree (positions, repeated keys)
//!        ──rtapp::raw──► typed tasks / phases / events (key rules, types)
//!        ──rtapp::lower► Workload (threads, timers, units, policies)
//! ```
//!
//! * [`json`] owns the json-c non-strict dialect and nothing rt-app specific.
//! * [`rtapp`] owns the rt-app grammar (formats-spec.md section 1), and lists
//!   every place where it deviates from rt-app.
//! * [`scenario`] owns the seeded random scenarios of `schedlab montecarlo`.
//! * [`replay`] owns trace replay: an ftrace text trace into a workload
//!   (`schedlab replay`).
//! * [`cgroup`] owns task-group paths and the cpu controller's files
//!   (formats-spec.md section 6), for every source: rt-app `taskgroup` /
//!   `taskgroups`, generator `cgroup=` parameters, the CLI's `--cgroup`.
//!
//! Errors are one line, `FILE:LINE:COL: <problem>`, naming the JSON key where
//! there is one, so they can be pasted into an editor's "go to" box.
#![warn(missing_docs)]

pub mod cgroup;
pub mod generators;
pub mod json;
pub mod limits;
pub mod oltp;
pub mod replay;
pub mod rtapp;
pub mod scenario;
pub mod schbench;
mod spec_params;
pub mod specjbb;

use schedlab_core::program::Workload;

pub use rtapp::DEFAULT_PLOAD_NS;

/// A workload read successfully, with the warnings produced on the way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// The workload, ready to simulate.
    pub workload: Workload,
    /// One-line warnings (`FILE:LINE:COL: ...`), in the order found.
    pub warnings: Vec<String>,
}

/// What class of problem stopped the load.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text is not JSON in json-c's dialect.
    Syntax,
    /// Valid JSON, but not a workload (no `"tasks"`; e.g. a merge fragment).
    NotAWorkload,
    /// A real rt-app feature schedlab does not model yet.
    Unsupported,
    /// A key rt-app does not know (rt-app would skip it silently).
    UnknownKey,
    /// A value of the wrong type or out of range.
    Invalid,
}

/// Why a workload could not be loaded. `Display` is exactly one line:
/// `FILE:LINE:COL: <problem>`, or `SPEC: <problem>` for a generator spec
/// (line 0: a one-line spec has no position worth giving).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.one_line())]
pub struct WorkloadError {
    /// The file name as given to the loader.
    pub file: String,
    /// 1-based line of the offending key or value.
    pub line: u32,
    /// 1-based column (characters) of the offending key or value.
    pub col: u32,
    /// Class of problem.
    pub kind: ErrorKind,
    /// The problem, starting with `key "K": ` when a key is involved.
    pub msg: String,
}

impl WorkloadError {
    /// Builds an error at a position.
    pub fn new(file: &str, pos: json::Pos, kind: ErrorKind, msg: impl Into<String>) -> Self {
        WorkloadError {
            file: file.to_string(),
            line: pos.line,
            col: pos.col,
            kind,
            msg: one_line(msg.into()),
        }
    }

    /// The `Display` line.
    fn one_line(&self) -> String {
        if self.line == 0 {
            format!("{}: {}", self.file, self.msg)
        } else {
            format!("{}:{}:{}: {}", self.file, self.line, self.col, self.msg)
        }
    }

    /// True when the workload uses a feature that is not modelled yet.
    pub fn is_unsupported(&self) -> bool {
        self.kind == ErrorKind::Unsupported
    }
}

/// Reads an rt-app workload file (formats-spec.md section 1) and lowers it.
///
/// * `file` is only used in messages;
/// * `nr_cpus` is the simulated machine's CPU count: `cpus` entries must be
///   below it, and phases that do not set `cpus` in a task where other phases
///   do get the task's set (or every CPU), as rt-app does.
pub fn load_rtapp(file: &str, text: &str, nr_cpus: usize) -> Result<Loaded, WorkloadError> {
    // A file with more tasks than allowed is refused before it is parsed.
    if let Some((n, line, col)) = limits::quick_task_count(text) {
        let max = limits::max_tasks();
        if n > max {
            let msg = format!(
                "key \"tasks\": {n} tasks is more than {max} ({})",
                limits::max_tasks_hint()
            );
            return Err(WorkloadError::new(
                file,
                json::Pos { line, col },
                ErrorKind::Invalid,
                msg,
            ));
        }
    }
    let opts = json::Options {
        allow_bare_keys: true,
    };
    let root = json::parse_with(text, opts)
        .map_err(|e| WorkloadError::new(file, e.pos, ErrorKind::Syntax, e.msg))?;
    let mut cx = rtapp::Cx::new(file);
    let raw = rtapp::raw::read_file(&mut cx, &root)?;
    rtapp::sync_check::check(&mut cx, &raw.tasks)?;
    rtapp::raw::check_limits(&cx, &raw)?;
    let workload = rtapp::lower::lower(&mut cx, &raw, nr_cpus)?;
    Ok(Loaded {
        workload,
        warnings: cx.warnings,
    })
}

/// Keeps a message on one line: control characters (a key or string that
/// holds a newline) are shown escaped.
fn one_line(msg: String) -> String {
    if !msg.chars().any(char::is_control) {
        return msg;
    }
    msg.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

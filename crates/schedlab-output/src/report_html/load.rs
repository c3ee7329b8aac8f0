//! Loading a run directory for the report: summary.json, the rt-app logs'
//! latencies, schedstat and the trace, with one error type for all.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::ftrace_text::{parse_ftrace_text, running_task_timeline, OwnedEvent, RunningTimeline};
use crate::rtapp_log::parse_rtapp_log;
use crate::schedstat::{parse_schedstat, Schedstat};
use crate::summary::Summary;

/// Why a run directory could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be read (or `summary.json` is missing).
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// `summary.json` is not valid.
    #[error("{}: not a schedlab summary.json: {source}", path.display())]
    Summary {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: serde_json::Error,
    },
    /// A log, trace or schedstat file is malformed.
    #[error("{}:{message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// `LINE: problem`.
        message: String,
    },
    /// The report or its plots could not be written.
    #[error("{}: {what}: {source}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// `cannot create`, `cannot write`, `cannot write plots`.
        what: &'static str,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// The wakeup latencies of one task (the `wu_lat` column of its log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskLatency {
    /// Task (thread) name.
    pub task: String,
    /// Samples in µs, sorted ascending.
    pub wu_lat_us: Vec<u64>,
}

/// What `trace.txt` says, reduced to what the report draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceData {
    /// Running task per CPU.
    pub timeline: RunningTimeline,
    /// Runnable tasks per CPU over time.
    pub runnable: crate::ftrace_text::RunnableSteps,
    /// comm of every pid seen in the trace.
    pub comms: BTreeMap<u32, String>,
    /// Number of trace lines.
    pub records: usize,
}

/// Everything the report shows about one run directory.
#[derive(Clone, Debug)]
pub struct RunData {
    /// The directory.
    pub dir: PathBuf,
    /// Name in legends and table headers (the directory's last component;
    /// change it freely before rendering).
    pub label: String,
    /// `summary.json`.
    pub summary: Summary,
    /// Per task with a log, in `summary.json` task order.
    pub latencies: Vec<TaskLatency>,
    /// `trace.txt`, if the run had `--trace`.
    pub trace: Option<TraceData>,
    /// `schedstat`, if present.
    pub schedstat: Option<Schedstat>,
    /// `profile` text, if present.
    pub profile_text: Option<String>,
}

fn read(path: &Path) -> Result<String, ReportError> {
    std::fs::read_to_string(path).map_err(|source| ReportError::Io {
        path: path.to_owned(),
        source,
    })
}

fn read_optional(path: &Path) -> Result<Option<String>, ReportError> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ReportError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

fn parse_err(path: &Path, e: impl std::fmt::Display) -> ReportError {
    ReportError::Parse {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

/// Loads a run output directory: `summary.json` is required, every other
/// file is optional, but a file that is present and malformed is an error.
pub fn load_run(dir: &Path) -> Result<RunData, ReportError> {
    let summary_path = dir.join("summary.json");
    let summary =
        Summary::from_json_str(&read(&summary_path)?).map_err(|source| ReportError::Summary {
            path: summary_path.clone(),
            source,
        })?;

    // rt-app logs: `<basename>-<task>.log`; the longest matching task name wins.
    let mut by_task: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let entries = std::fs::read_dir(dir).map_err(|source| ReportError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let mut files: Vec<PathBuf> = Vec::new();
    for e in entries {
        let e = e.map_err(|source| ReportError::Io {
            path: dir.to_owned(),
            source,
        })?;
        files.push(e.path());
    }
    files.sort();
    for path in files {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(".log") else {
            continue;
        };
        let task = summary
            .tasks
            .iter()
            .map(|t| t.name.as_str())
            .filter(|t| stem.ends_with(&format!("-{t}")))
            .max_by_key(|t| t.len());
        let Some(task) = task else { continue };
        if by_task.contains_key(task) {
            continue;
        }
        let rows = parse_rtapp_log(&read(&path)?).map_err(|e| parse_err(&path, e))?;
        let mut lat: Vec<u64> = rows.iter().map(|r| r.wu_lat).collect();
        lat.sort_unstable();
        by_task.insert(task.to_owned(), lat);
    }
    // Only tasks that sleep on timers or wait for events have wakeup
    // latencies: a thread with no timer samples and every wu_lat 0 (a
    // SCHED_IDLE hog that never sleeps) is left out, else its zeros would
    // pile up at the low end of the pooled plots.
    let latencies = summary
        .tasks
        .iter()
        .filter_map(|t| {
            by_task.remove(&t.name).map(|wu_lat_us| TaskLatency {
                task: t.name.clone(),
                wu_lat_us,
            })
        })
        .filter(|l| {
            let n = summary
                .tasks
                .iter()
                .find(|t| t.name == l.task)
                .map_or(0, |t| t.wakeup_latency_us.n);
            n > 0 || l.wu_lat_us.iter().any(|&v| v > 0)
        })
        .collect();

    let trace_path = dir.join("trace.txt");
    let trace = match read_optional(&trace_path)? {
        None => None,
        Some(text) => {
            let records = parse_ftrace_text(&text).map_err(|e| parse_err(&trace_path, e))?;
            let mut comms = BTreeMap::new();
            for r in &records {
                comms.insert(r.ctx_pid, r.ctx_comm.clone());
                match &r.event {
                    OwnedEvent::SchedSwitch { prev, next, .. } => {
                        comms.insert(prev.pid, prev.comm.clone());
                        comms.insert(next.pid, next.comm.clone());
                    }
                    OwnedEvent::SchedWaking { task, .. }
                    | OwnedEvent::SchedWakeup { task, .. }
                    | OwnedEvent::SchedWakeupNew { task, .. }
                    | OwnedEvent::SchedMigrateTask { task, .. } => {
                        comms.insert(task.pid, task.comm.clone());
                    }
                    OwnedEvent::Other { .. } => {}
                }
            }
            Some(TraceData {
                timeline: running_task_timeline(&records),
                runnable: crate::ftrace_text::runnable_steps(&records),
                comms,
                records: records.len(),
            })
        }
    };

    let ss_path = dir.join("schedstat");
    let schedstat = match read_optional(&ss_path)? {
        None => None,
        Some(text) => Some(parse_schedstat(&text).map_err(|e| parse_err(&ss_path, e))?),
    };
    let profile_text = read_optional(&dir.join("profile"))?;

    let label = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    Ok(RunData {
        dir: dir.to_owned(),
        label,
        summary,
        latencies,
        trace,
        schedstat,
        profile_text,
    })
}

// ---------------------------------------------------------------- helpers

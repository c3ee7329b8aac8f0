//! Which pid runs on each CPU, from a parsed trace.
//!
//! Evidence used, per CPU, in line order:
//!
//! 1. Every line's TASK-PID column names the task that is current on that
//!    CPU at that instant (interrupt-context lines included: the interrupted
//!    task is still `current`).
//! 2. A `sched_switch` line ends the span of `prev_pid` and starts the span
//!    of `next_pid` at its timestamp.
//!
//! Real kernels skip about half of the idle→task `sched_switch` lines
//! (fixture README: Linux 6.18 in a KVM guest). When a line's context names
//! task P while the timeline says another pid runs, the missing switch is
//! inferred: the old span ends, and P's span starts, at that line's time;
//! the true switch happened somewhere after the previous line on that CPU,
//! which is kept as [`SpanStart::Inferred::after_ns`]. Inferred switches
//! are counted separately by the pid they replace: idle→task (the README's
//! case) and task→task. The real fixture has one of the latter: on CPU 0,
//! `tokio-rt-worker` (pid 70) is switched in at 2503.850530 and the next
//! line, at 2503.851134, already runs `idle_thread-2` with no switch line in
//! between (perhaps two untraced switches through idle; the text cannot
//! tell).
//!
//! Evidence that cannot be explained by missing lines is a
//! [`Contradiction`]: a `sched_switch` whose `prev_pid` is not its own
//! context pid, or time going backwards on a CPU. The timeline still
//! follows the newest evidence after a contradiction.

use std::collections::BTreeMap;

use super::owned::{OwnedEvent, OwnedRecord};

/// How a span began.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanStart {
    /// The first line seen on this CPU.
    TraceStart,
    /// A `sched_switch` line.
    Switch,
    /// No `sched_switch` was traced; the context column showed the new task.
    /// The switch happened in `(after_ns, start_ns]`.
    Inferred {
        /// Time of the last line that still showed the previous task.
        after_ns: u64,
    },
}

/// One stretch of time during which `pid` was current on a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunSpan {
    /// The running task (0 is idle).
    pub pid: u32,
    /// Start (ns).
    pub start_ns: u64,
    /// End (ns): the next span's start, or the CPU's last line for the final
    /// span.
    pub end_ns: u64,
    /// What evidence started it.
    pub start: SpanStart,
    /// Whether a traced `sched_switch` ended it.
    pub ended_by_switch: bool,
}

/// Evidence that does not fit the timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contradiction {
    /// Index of the offending record in the input sequence.
    pub record: usize,
    /// Its CPU.
    pub cpu: u32,
    /// Its time (ns).
    pub time_ns: u64,
    /// What is wrong.
    pub what: String,
}

/// Per-CPU running-task timeline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunningTimeline {
    /// Spans per CPU, in time order, contiguous (`end_ns` of one is
    /// `start_ns` of the next).
    pub cpus: BTreeMap<u32, Vec<RunSpan>>,
    /// Number of idle→task switches inferred from the context column.
    pub inferred_switches: usize,
    /// Number of task→task switches inferred from the context column (not
    /// included in `inferred_switches`).
    pub inferred_task_switches: usize,
    /// Everything that did not fit.
    pub contradictions: Vec<Contradiction>,
}

impl RunningTimeline {
    /// Builds the timeline from records in file order.
    pub fn from_records<'a>(records: impl IntoIterator<Item = &'a OwnedRecord>) -> Self {
        let mut tl = RunningTimeline::default();
        for (i, r) in records.into_iter().enumerate() {
            tl.push(i, r);
        }
        tl
    }

    fn push(&mut self, idx: usize, r: &OwnedRecord) {
        let t = r.time_ns;
        let spans = self.cpus.entry(r.cpu).or_default();
        let mut bad = Vec::new();
        match spans.last_mut() {
            None => spans.push(RunSpan {
                pid: r.ctx_pid,
                start_ns: t,
                end_ns: t,
                start: SpanStart::TraceStart,
                ended_by_switch: false,
            }),
            Some(cur) => {
                if t < cur.end_ns {
                    bad.push(format!(
                        "time goes backwards on this CPU ({} ns after {} ns)",
                        t, cur.end_ns
                    ));
                }
                if cur.pid != r.ctx_pid {
                    if cur.pid == 0 {
                        self.inferred_switches += 1;
                    } else {
                        self.inferred_task_switches += 1;
                    }
                    let after_ns = cur.end_ns;
                    cur.end_ns = t;
                    spans.push(RunSpan {
                        pid: r.ctx_pid,
                        start_ns: t,
                        end_ns: t,
                        start: SpanStart::Inferred { after_ns },
                        ended_by_switch: false,
                    });
                } else {
                    cur.end_ns = cur.end_ns.max(t);
                }
            }
        }
        if let OwnedEvent::SchedSwitch { prev, next, .. } = &r.event {
            if prev.pid != r.ctx_pid {
                bad.push(format!(
                    "sched_switch prev_pid={} but the context pid is {}",
                    prev.pid, r.ctx_pid
                ));
            }
            let cur = spans.last_mut().expect("a span was just ensured");
            cur.end_ns = t;
            cur.ended_by_switch = true;
            spans.push(RunSpan {
                pid: next.pid,
                start_ns: t,
                end_ns: t,
                start: SpanStart::Switch,
                ended_by_switch: false,
            });
        }
        self.contradictions
            .extend(bad.into_iter().map(|what| Contradiction {
                record: idx,
                cpu: r.cpu,
                time_ns: t,
                what,
            }));
    }

    /// Spans of one CPU (empty if the CPU never appears).
    pub fn spans(&self, cpu: u32) -> &[RunSpan] {
        self.cpus.get(&cpu).map_or(&[], Vec::as_slice)
    }

    /// The pid running on `cpu` at `time_ns` (spans are half-open
    /// `[start, end)`, so at a switch instant this is the next task; the final
    /// span includes its end). `None` outside the traced range.
    pub fn running_at(&self, cpu: u32, time_ns: u64) -> Option<u32> {
        let spans = self.spans(cpu);
        let k = spans.partition_point(|s| s.start_ns <= time_ns);
        if k == 0 {
            return None;
        }
        // Several zero-length spans may share a start; the last one wins.
        let s = &spans[k - 1];
        if time_ns < s.end_ns || (k == spans.len() && time_ns == s.end_ns) {
            Some(s.pid)
        } else {
            None
        }
    }
}

/// The per-CPU running-task timeline of `records` (see [`RunningTimeline`]).
pub fn running_task_timeline<'a>(
    records: impl IntoIterator<Item = &'a OwnedRecord>,
) -> RunningTimeline {
    RunningTimeline::from_records(records)
}

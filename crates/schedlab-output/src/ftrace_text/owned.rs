//! Owned records: a trace line's fields held by value (read from text or
//! converted from the simulator's records), and written back as the same
//! line.

use std::io::{self, Write};

use schedlab_core::observe::{TaskView, TraceEvent, TraceRecord};

use super::write::{
    ctx_comm, payload_comm, push_migrate, push_other_payload, push_prefix, push_switch,
    push_wakeup, round_to_us, write_header, FtraceTextWriter,
};

/// A task named in a payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedTask {
    /// Thread id.
    pub pid: u32,
    /// comm as printed.
    pub comm: String,
    /// Kernel priority.
    pub prio: i32,
}

/// An event's payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedEvent {
    /// `sched_switch`.
    SchedSwitch {
        /// Task leaving the CPU.
        prev: OwnedTask,
        /// `prev_state` text as printed (`R`, `R+`, `S`, `D`, `I`, `S|D`...);
        /// [`PrevState::parse`](schedlab_core::observe::PrevState::parse)
        /// maps the common ones.
        prev_state: String,
        /// Task taking the CPU.
        next: OwnedTask,
    },
    /// `sched_waking`.
    SchedWaking {
        /// The wakee.
        task: OwnedTask,
        /// `target_cpu`.
        target_cpu: u32,
    },
    /// `sched_wakeup`.
    SchedWakeup {
        /// The wakee.
        task: OwnedTask,
        /// `target_cpu`.
        target_cpu: u32,
    },
    /// `sched_wakeup_new`.
    SchedWakeupNew {
        /// The new task.
        task: OwnedTask,
        /// `target_cpu`.
        target_cpu: u32,
    },
    /// `sched_migrate_task`.
    SchedMigrateTask {
        /// The task moved.
        task: OwnedTask,
        /// `orig_cpu`.
        orig_cpu: u32,
        /// `dest_cpu`.
        dest_cpu: u32,
    },
    /// Any other event (`tracing_mark_write`, `sched_process_fork`...), kept
    /// as text.
    Other {
        /// Event name.
        name: String,
        /// Everything after `name: `.
        payload: String,
    },
}

impl OwnedEvent {
    /// The event name as printed.
    pub fn name(&self) -> &str {
        match self {
            OwnedEvent::SchedSwitch { .. } => "sched_switch",
            OwnedEvent::SchedWaking { .. } => "sched_waking",
            OwnedEvent::SchedWakeup { .. } => "sched_wakeup",
            OwnedEvent::SchedWakeupNew { .. } => "sched_wakeup_new",
            OwnedEvent::SchedMigrateTask { .. } => "sched_migrate_task",
            OwnedEvent::Other { name, .. } => name,
        }
    }
}

/// One parsed trace line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedRecord {
    /// Time in ns (the text has µs resolution, so a multiple of 1000 for
    /// 6-decimal files).
    pub time_ns: u64,
    /// CPU column.
    pub cpu: u32,
    /// TASK column comm (`<idle>` for pid 0).
    pub ctx_comm: String,
    /// TASK column pid.
    pub ctx_pid: u32,
    /// Flag characters (empty if the file has no flags column).
    pub flags: String,
    /// The event.
    pub event: OwnedEvent,
}

fn owned_task(t: &TaskView<'_>, cpu: u32) -> OwnedTask {
    OwnedTask {
        pid: t.pid,
        comm: payload_comm(t, cpu).into_owned(),
        prio: t.prio,
    }
}

impl OwnedRecord {
    /// The record exactly as [`FtraceTextWriter`](super::FtraceTextWriter)
    /// prints it: comms sanitised, idle named `<idle>`/`swapper/<cpu>`, and
    /// time rounded to the nearest µs.
    pub fn from_record(rec: &TraceRecord<'_>) -> OwnedRecord {
        let cpu = rec.cpu.0;
        let event = match rec.event {
            TraceEvent::SchedSwitch {
                prev,
                prev_state,
                next,
            } => OwnedEvent::SchedSwitch {
                prev: owned_task(&prev, cpu),
                prev_state: prev_state.as_str().to_string(),
                next: owned_task(&next, cpu),
            },
            TraceEvent::SchedWaking { task, target_cpu } => OwnedEvent::SchedWaking {
                task: owned_task(&task, cpu),
                target_cpu: target_cpu.0,
            },
            TraceEvent::SchedWakeup { task, target_cpu } => OwnedEvent::SchedWakeup {
                task: owned_task(&task, cpu),
                target_cpu: target_cpu.0,
            },
            TraceEvent::SchedWakeupNew { task, target_cpu } => OwnedEvent::SchedWakeupNew {
                task: owned_task(&task, cpu),
                target_cpu: target_cpu.0,
            },
            TraceEvent::SchedMigrateTask {
                task,
                orig_cpu,
                dest_cpu,
            } => OwnedEvent::SchedMigrateTask {
                task: owned_task(&task, cpu),
                orig_cpu: orig_cpu.0,
                dest_cpu: dest_cpu.0,
            },
            TraceEvent::Print { text } => OwnedEvent::Other {
                name: "tracing_mark_write".into(),
                payload: text.to_string(),
            },
            ref e => {
                let mut payload = String::new();
                push_other_payload(&mut payload, e, cpu);
                OwnedEvent::Other {
                    name: e.name().into(),
                    payload,
                }
            }
        };
        OwnedRecord {
            time_ns: round_to_us(rec.time) * 1000,
            cpu,
            ctx_comm: ctx_comm(&rec.ctx).into_owned(),
            ctx_pid: rec.ctx.pid,
            flags: rec
                .flags
                .iter()
                .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
                .collect(),
            event,
        }
    }

    /// The line in kernel layout, without newline. Comms are printed as
    /// stored (a parsed file is reproduced byte for byte).
    pub fn to_line(&self) -> String {
        let mut s = String::with_capacity(160);
        self.push_line(&mut s);
        s
    }

    pub(super) fn push_line(&self, s: &mut String) {
        push_prefix(
            s,
            &self.ctx_comm,
            self.ctx_pid,
            self.cpu,
            &self.flags,
            self.time_ns,
            self.event.name(),
        );
        match &self.event {
            OwnedEvent::SchedSwitch {
                prev,
                prev_state,
                next,
            } => push_switch(
                s, &prev.comm, prev.pid, prev.prio, prev_state, &next.comm, next.pid, next.prio,
            ),
            OwnedEvent::SchedWaking { task, target_cpu }
            | OwnedEvent::SchedWakeup { task, target_cpu }
            | OwnedEvent::SchedWakeupNew { task, target_cpu } => {
                push_wakeup(s, &task.comm, task.pid, task.prio, *target_cpu)
            }
            OwnedEvent::SchedMigrateTask {
                task,
                orig_cpu,
                dest_cpu,
            } => push_migrate(s, &task.comm, task.pid, task.prio, *orig_cpu, *dest_cpu),
            OwnedEvent::Other { payload, .. } => s.push_str(payload),
        }
    }
}

impl<W: Write> FtraceTextWriter<W> {
    /// Writes one already-owned record (parsed or converted) verbatim.
    pub fn write_owned(&mut self, rec: &OwnedRecord) -> io::Result<()> {
        self.line.clear();
        rec.push_line(&mut self.line);
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())?;
        self.written += 1;
        Ok(())
    }
}

/// Writes a complete `trace` file (header and lines) for records already in
/// memory; convenient for tests and small traces.
pub fn write_trace_text<W: Write + ?Sized>(
    out: &mut W,
    nr_cpus: u32,
    records: &[OwnedRecord],
) -> io::Result<()> {
    write_header(out, records.len() as u64, nr_cpus)?;
    let mut line = String::with_capacity(256);
    for r in records {
        line.clear();
        r.push_line(&mut line);
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

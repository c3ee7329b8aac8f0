//! Writing: header, line prefix and the payloads of every event (the five
//! scheduler ones, rt-app's markers, and the process life-cycle,
//! `sched_stat_runtime` and `cpu_idle` events of [`push_other_payload`]).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use schedlab_core::observe::{Sink, TaskView, TraceEvent, TraceRecord};

use crate::spool::{FirstError, Spool, SpoolError};

/// The ten fixed lines of the header that follow the `entries-in-buffer`
/// line (formats-spec.md 4.1: nop tracer, irq-info on, 5 flag columns).
pub const FTRACE_HEADER_COLUMNS: &str = "\
#
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
";

/// Writes the `trace` file header for `entries` lines on `nr_cpus` CPUs:
/// `# tracer: nop`, `#`, `# entries-in-buffer/entries-written: N/N   #P:C`
/// and the column legend.
pub fn write_header<W: Write + ?Sized>(out: &mut W, entries: u64, nr_cpus: u32) -> io::Result<()> {
    write!(
        out,
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: {entries}/{entries}   #P:{nr_cpus}\n{FTRACE_HEADER_COLUMNS}"
    )
}

/// The comm as schedlab prints it: whitespace, control characters and `=`
/// become `_` (Perfetto splits arguments on spaces and `=`, formats-spec.md 4.5);
/// an empty comm becomes `<...>` (the kernel's "unknown comm").
pub fn sanitize_comm(comm: &str) -> Cow<'_, str> {
    if comm.is_empty() {
        return Cow::Borrowed("<...>");
    }
    let bad = |c: char| c.is_whitespace() || c.is_control() || c == '=';
    if comm.contains(bad) {
        Cow::Owned(comm.chars().map(|c| if bad(c) { '_' } else { c }).collect())
    } else {
        Cow::Borrowed(comm)
    }
}

/// The comm printed in the TASK-PID column (`<idle>` for pid 0).
pub(super) fn ctx_comm<'a>(task: &TaskView<'a>) -> Cow<'a, str> {
    if task.pid == 0 {
        Cow::Borrowed("<idle>")
    } else {
        sanitize_comm(task.comm)
    }
}

/// The comm printed inside a payload (`swapper/<cpu>` for pid 0).
pub(super) fn payload_comm<'a>(task: &TaskView<'a>, cpu: u32) -> Cow<'a, str> {
    if task.pid == 0 {
        Cow::Owned(format!("swapper/{cpu}"))
    } else {
        sanitize_comm(task.comm)
    }
}

/// Flag bytes as printed: anything that is not a graphic ASCII character
/// becomes `.`.
fn flag_char(b: u8) -> char {
    if b.is_ascii_graphic() {
        b as char
    } else {
        '.'
    }
}

/// ns to µs, rounded to nearest as the kernel's `ns2usecs` does.
pub(super) fn round_to_us(ns: u64) -> u64 {
    ns / 1000 + u64::from(ns % 1000 >= 500)
}

/// Appends the line prefix up to and including `": "` after the event name:
/// `%16s-%-7d [%03d] FLAGS %5lu.%06lu: EVENT: `.
///
/// `time_ns` is rounded to the nearest µs (the kernel's `ns2usecs`).
pub(super) fn push_prefix(
    s: &mut String,
    comm: &str,
    pid: u32,
    cpu: u32,
    flags: &str,
    time_ns: u64,
    event: &str,
) {
    let us = round_to_us(time_ns);
    let (secs, usecs) = (us / 1_000_000, us % 1_000_000);
    let _ = write!(s, "{comm:>16}-{pid:<7} [{cpu:03}] ");
    if !flags.is_empty() {
        s.push_str(flags);
        s.push(' ');
    }
    let _ = write!(s, "{secs:>5}.{usecs:06}: {event}: ");
}

/// `sched_switch` payload (formats-spec.md 4.2).
#[allow(clippy::too_many_arguments)]
pub(super) fn push_switch(
    s: &mut String,
    prev_comm: &str,
    prev_pid: u32,
    prev_prio: i32,
    prev_state: &str,
    next_comm: &str,
    next_pid: u32,
    next_prio: i32,
) {
    let _ = write!(
        s,
        "prev_comm={prev_comm} prev_pid={prev_pid} prev_prio={prev_prio} prev_state={prev_state} ==> next_comm={next_comm} next_pid={next_pid} next_prio={next_prio}"
    );
}

/// `sched_waking` / `sched_wakeup` / `sched_wakeup_new` payload.
pub(super) fn push_wakeup(s: &mut String, comm: &str, pid: u32, prio: i32, target_cpu: u32) {
    let _ = write!(
        s,
        "comm={comm} pid={pid} prio={prio} target_cpu={target_cpu:03}"
    );
}

/// `sched_migrate_task` payload.
pub(super) fn push_migrate(s: &mut String, comm: &str, pid: u32, prio: i32, orig: u32, dest: u32) {
    let _ = write!(
        s,
        "comm={comm} pid={pid} prio={prio} orig_cpu={orig} dest_cpu={dest}"
    );
}

/// Appends one complete line (with `\n`) for `rec`.
fn push_record(s: &mut String, rec: &TraceRecord<'_>) {
    let cpu = rec.cpu.0;
    // Every byte is mapped to graphic ASCII, so this is valid UTF-8.
    let flag_bytes = rec.flags.map(|b| flag_char(b) as u8);
    let flags = std::str::from_utf8(&flag_bytes).unwrap_or(".....");
    let name = match rec.event {
        TraceEvent::SchedSwitch { .. } => "sched_switch",
        TraceEvent::SchedWaking { .. } => "sched_waking",
        TraceEvent::SchedWakeup { .. } => "sched_wakeup",
        TraceEvent::SchedWakeupNew { .. } => "sched_wakeup_new",
        TraceEvent::SchedMigrateTask { .. } => "sched_migrate_task",
        // A trace_marker write shows under the function that wrote it.
        TraceEvent::Print { .. } => "tracing_mark_write",
        ref e => e.name(),
    };
    push_prefix(
        s,
        &ctx_comm(&rec.ctx),
        rec.ctx.pid,
        cpu,
        flags,
        rec.time,
        name,
    );
    match rec.event {
        TraceEvent::SchedSwitch {
            prev,
            prev_state,
            next,
        } => push_switch(
            s,
            &payload_comm(&prev, cpu),
            prev.pid,
            prev.prio,
            prev_state.as_str(),
            &payload_comm(&next, cpu),
            next.pid,
            next.prio,
        ),
        TraceEvent::SchedWaking { task, target_cpu }
        | TraceEvent::SchedWakeup { task, target_cpu }
        | TraceEvent::SchedWakeupNew { task, target_cpu } => push_wakeup(
            s,
            &payload_comm(&task, cpu),
            task.pid,
            task.prio,
            target_cpu.0,
        ),
        TraceEvent::SchedMigrateTask {
            task,
            orig_cpu,
            dest_cpu,
        } => push_migrate(
            s,
            &payload_comm(&task, cpu),
            task.pid,
            task.prio,
            orig_cpu.0,
            dest_cpu.0,
        ),
        TraceEvent::Print { text } => s.push_str(text),
        ref e => push_other_payload(s, e, cpu),
    }
    s.push('\n');
}

/// The payloads of the process life-cycle, `sched_stat_runtime` and
/// `cpu_idle` events, in the kernel's print formats (`docs/formats.md` 7.2):
///
/// * `sched_process_fork`: `comm=%s pid=%d child_comm=%s child_pid=%d`
/// * `task_rename`: `pid=%d oldcomm=%s newcomm=%s oom_score_adj=%hd`
/// * `sched_process_exit`, `sched_process_free`: `comm=%s pid=%d prio=%d`
/// * `sched_stat_runtime`: `comm=%s pid=%d runtime=%Lu [ns]` (Linux 6.8+,
///   without `vruntime`)
/// * `cpu_idle`: `state=%lu cpu_id=%lu` (state 4294967295 on exit)
///
/// Nothing for the five sched events and `print`, which have their own.
pub(super) fn push_other_payload(s: &mut String, ev: &TraceEvent<'_>, cpu: u32) {
    let _ = match *ev {
        TraceEvent::SchedProcessFork { parent, child } => write!(
            s,
            "comm={} pid={} child_comm={} child_pid={}",
            payload_comm(&parent, cpu),
            parent.pid,
            payload_comm(&child, cpu),
            child.pid
        ),
        TraceEvent::TaskRename { task, oldcomm } => write!(
            s,
            "pid={} oldcomm={} newcomm={} oom_score_adj=0",
            task.pid,
            sanitize_comm(oldcomm),
            payload_comm(&task, cpu)
        ),
        TraceEvent::SchedProcessExit { task } | TraceEvent::SchedProcessFree { task } => write!(
            s,
            "comm={} pid={} prio={}",
            payload_comm(&task, cpu),
            task.pid,
            task.prio
        ),
        TraceEvent::SchedStatRuntime { task, runtime } => write!(
            s,
            "comm={} pid={} runtime={runtime} [ns]",
            payload_comm(&task, cpu),
            task.pid
        ),
        TraceEvent::CpuIdle { state, cpu_id } => write!(s, "state={state} cpu_id={}", cpu_id.0),
        _ => Ok(()),
    };
}

/// One record as its trace line, without the trailing newline.
pub fn format_record(rec: &TraceRecord<'_>) -> String {
    let mut s = String::with_capacity(160);
    push_record(&mut s, rec);
    s.pop();
    s
}

/// Streams event lines (no header, like `trace_pipe`) to `W`.
///
/// [`Sink::trace`] cannot fail, so the first I/O error is kept, later
/// records are dropped, and [`finish`](Self::finish) returns the error.
#[derive(Debug)]
pub struct FtraceTextWriter<W: Write> {
    pub(super) out: W,
    pub(super) line: String,
    pub(super) written: u64,
    error: FirstError,
}

impl<W: Write> FtraceTextWriter<W> {
    /// A writer over `out`. Wrap files in a `BufWriter`: one `write_all`
    /// is issued per line.
    pub fn new(out: W) -> Self {
        FtraceTextWriter {
            out,
            line: String::with_capacity(256),
            written: 0,
            error: FirstError::new(),
        }
    }

    /// Lines written so far.
    pub fn entries(&self) -> u64 {
        self.written
    }

    /// Writes one record (the same as [`Sink::trace`], but reports errors).
    pub fn write_record(&mut self, rec: &TraceRecord<'_>) -> io::Result<()> {
        self.line.clear();
        push_record(&mut self.line, rec);
        self.out.write_all(self.line.as_bytes())?;
        self.written += 1;
        Ok(())
    }

    /// Flushes and returns the inner writer and the number of lines, or the
    /// first error met while streaming.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        self.error.take()?;
        self.out.flush()?;
        Ok((self.out, self.written))
    }
}

impl<W: Write> Sink for FtraceTextWriter<W> {
    fn wants_trace(&self) -> bool {
        true
    }
    fn trace(&mut self, rec: &TraceRecord<'_>) {
        if !self.error.is_set() {
            let r = self.write_record(rec);
            self.error.keep(r);
        }
    }
}

/// The `trace.txt` writer: streams lines into a [`Spool`] (an anonymous
/// temporary file), then [`finish`](Self::finish) writes the header (which
/// needs the final count) and copies the body behind it. Memory use is
/// constant.
///
/// The temporary file has no name (`O_TMPFILE` where available), so nothing
/// is left behind if the process dies.
#[derive(Debug)]
pub struct SpooledTraceWriter {
    inner: FtraceTextWriter<Spool>,
}

impl SpooledTraceWriter {
    /// Spools in `dir`; pick a directory on the same file system as the
    /// output (for example [`StagedOutDir::stage_dir`](crate::outdir::StagedOutDir::stage_dir)).
    pub fn new_in(dir: impl AsRef<Path>) -> Result<Self, SpoolError> {
        Ok(Self::with_spool(Spool::new_in(dir)?))
    }

    /// Spools in the system temporary directory.
    pub fn new() -> Result<Self, SpoolError> {
        Ok(Self::with_spool(Spool::new()?))
    }

    fn with_spool(spool: Spool) -> Self {
        SpooledTraceWriter {
            inner: FtraceTextWriter::new(spool),
        }
    }

    /// Lines written so far.
    pub fn entries(&self) -> u64 {
        self.inner.entries()
    }

    /// Writes the header for `nr_cpus` CPUs and then the body to `out`;
    /// returns the number of event lines.
    pub fn finish<W: Write + ?Sized>(self, nr_cpus: u32, out: &mut W) -> io::Result<u64> {
        let (spool, n) = self.inner.finish()?;
        write_header(out, n, nr_cpus)?;
        spool.copy_to(out)?;
        out.flush()?;
        Ok(n)
    }
}

impl Sink for SpooledTraceWriter {
    fn wants_trace(&self) -> bool {
        true
    }
    fn trace(&mut self, rec: &TraceRecord<'_>) {
        self.inner.trace(rec)
    }
}

//! ftrace text output: the layout of `/sys/kernel/tracing/trace`.
//!
//! What this module owns:
//!
//! * [`FtraceTextWriter`]: a [`Sink`](schedlab_core::observe::Sink) that
//!   streams one kernel-layout line per [`TraceRecord`](schedlab_core::observe::TraceRecord)
//!   (the body only, like `trace_pipe`), and [`write_header`], the 12-line
//!   header the `trace` file starts with.
//! * [`SpooledTraceWriter`]: the writer used for `trace.txt`. The header
//!   contains the number of entries, which is unknown until the run ends, so
//!   the body is streamed into an anonymous temporary file and copied behind
//!   the header by [`SpooledTraceWriter::finish`]. Memory use stays constant
//!   however long the trace is.
//! * [`parse_ftrace_text`] / [`FtraceLines`]: a reader for the same layout
//!   (and for real kernels' files) into [`OwnedRecord`]s, and
//!   [`parse_ftrace_header`] for the `entries`/`#P:` line.
//! * [`RunningTimeline`]: which pid runs on each CPU over time, derived from
//!   sched_switch lines **and** from every line's TASK-PID column, because
//!   real kernels skip some idle→task sched_switch lines (fixture README).
//!
//! Source of every format fact: `docs/formats.md` section 4 (4.1 line
//! grammar and header, 4.2 payloads, 4.3 `prev_state`, 4.5 Perfetto's text
//! importer, 4.6 checklist), checked against the real Linux 6.18 sample in
//! `fixtures/real-kernel/ftrace_sched_idle_2cpu_sample.txt`.
//!
//! Deviations from the kernel, all deliberate:
//!
//! * **comm sanitising** ([`sanitize_comm`]): whitespace, control characters
//!   and `=` are replaced with `_`, and an empty comm is written as `<...>`.
//!   The kernel prints comms raw, but Perfetto splits arguments on spaces and
//!   `=` (formats-spec.md 4.5), so a raw `Web Content` would be cut.
//! * **comm length**: the kernel truncates comms to 15 bytes; schedlab keeps
//!   the full name (core's `TaskView` contract). `%16s` does not truncate, so a
//!   long comm simply widens its line, which both the kernel's own readers
//!   and Perfetto accept.
//! * **idle comm**: pid 0 is always printed as `<idle>` in the TASK-PID
//!   column and as `swapper/<cpu of the record>` inside payloads, whatever
//!   comm the simulator passed.
//! * **timestamps** are printed in µs, rounded to the nearest µs
//!   (`(ns + 500) / 1000`), which is what we remember the kernel's
//!   `ns2usecs` doing; formats-spec.md only says "µs resolution", so this is
//!   **(unverified)**. Note that `schedlab_core::time::fmt_secs_us`
//!   truncates instead; the two agree on every µs-aligned time.

mod owned;
mod parse;
mod runnable;
mod timeline;
mod write;

pub use owned::{write_trace_text, OwnedEvent, OwnedRecord, OwnedTask};
pub use parse::{
    parse_ftrace_header, parse_ftrace_line, parse_ftrace_text, FtraceHeader, FtraceLines,
    ParseError,
};
pub use runnable::{mean_over, runnable_steps, RunnableSteps};
pub use timeline::{running_task_timeline, Contradiction, RunSpan, RunningTimeline, SpanStart};
pub use write::{
    format_record, sanitize_comm, write_header, FtraceTextWriter, SpooledTraceWriter,
    FTRACE_HEADER_COLUMNS,
};

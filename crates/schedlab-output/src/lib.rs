//! # schedlab-output: what a run leaves behind
//!
//! Writers and readers for the files in `--out DIR` (architecture.md
//! section 2), each in the format scheduler engineers already use:
//!
//! ```text
//!  engine ──Sink──► tee::TraceSinks ─┬► ftrace_text::SpooledTraceWriter ► trace.txt
//!                                    ├► trace_dat::TraceDatWriter ───────► trace.dat
//!                                    └► pftrace::PftraceWriter ──────────► trace.pftrace
//!                         (each streams into a spool::Spool until the end)
//!  finished Sim ──► results::RunResults::collect ──┬► summary::Summary ─► summary.json
//!                                                  ├► schedstat ────────► schedstat
//!                                                  ├► cgroup ───────────► cgroup/<path>/cpu.stat
//!                                                  └► rtapp_log ────────► <log_basename>-<thread>.log
//!  run dirs   ────► report_html ──────────────────────► report.html, *.svg
//!  N runs × 2 ────► results::Headline ─► compare::RunFigures ─► mmtests table
//!  RunResults ────► table, results::RunResults::text_report ─► what `run` prints
//!  all files go through outdir::StagedOutDir (all or nothing) or OutDir
//! ```
//!
//! | module | owns | format source |
//! |---|---|---|
//! | [`ftrace_text`] | `/sys/kernel/tracing/trace` layout, reader, running-task timeline | formats-spec.md 4 |
//! | [`rtapp_log`] | rt-app per-thread logs | formats-spec.md 2 |
//! | [`log_stream`] | the logs streamed into the stage while the run goes | — |
//! | [`results`] | a finished run → all of the above; summary.json's field reference | — |
//! | [`summary`] | `summary.json` | architecture.md 5 |
//! | [`outdir`] | atomic output directory | architecture.md 2 |
//! | [`limit`] | `--max-output` on the bytes really written | — |
//! | [`table`] | human tables, `%g` | — |
//! | [`tee`] | the `--trace` tee of the three trace writers | — |
//! | [`spool`] | the trace writers' temporary spool files | — |
//! | [`trace_dat`] | trace-cmd's trace.dat (v6, flyrecord) | formats-spec.md 4.4, trace-cmd.dat docs |
//! | [`pftrace`] | Perfetto protobuf ftrace bundles | Perfetto's trace proto |
//! | [`schedstat`] | `/proc/schedstat` v17 writer, v15–17 reader | formats-spec.md 5 |
//! | [`cgroup`] | cgroup v2 `cpu.stat` writer and reader | formats-spec.md 6 |
//! | [`compare`] | mmtests-style comparison statistics and table | formats-spec.md 7 |
//! | [`report_html`] | self-contained HTML report and SVG plots | — |
//! | [`parquet`] | minimal Parquet writer (sweep datasets) | Parquet format specification |
//!
//! Nothing here copies kernel, trace-cmd or Perfetto code; formats are
//! implemented from `docs/formats.md` and checked against the real-kernel
//! fixtures.
#![warn(missing_docs)]

pub mod cgroup;
pub mod compare;
pub mod ftrace_text;
pub mod limit;
pub mod log_stream;
pub mod outdir;
pub mod parquet;
pub mod pftrace;
pub mod report_html;
pub mod results;
pub mod rtapp_log;
pub mod schedstat;
pub mod spool;
pub mod summary;
pub mod table;
pub mod tee;
pub mod trace_dat;

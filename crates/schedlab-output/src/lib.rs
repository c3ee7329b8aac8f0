//! # schedlab-output: what a run leaves behind
//!
//! Writers and readers for the files in `--out DIR` (architecture.md
//! section 2), each in the format scheduler engineers already use:
//!
//! ```text
//!  engine ──Sink──► ftrace_text::SpooledTraceWriter ──► trace.txt
//!  run result ────► summary::Summary ─────────────────► summary.json
//!             ────► rtapp_log ────────────────────────► <log_basename>-<thread>.log
//!             ────► table ────────────────────────────► stdout
//!  all files go through outdir::StagedOutDir (all or nothing) or OutDir
//! ```
//!
//! | module | owns | format source |
//! |---|---|---|
//! | [`ftrace_text`] | `/sys/kernel/tracing/trace` layout, reader, running-task timeline | formats.md 4 |
//! | [`rtapp_log`] | rt-app per-thread logs | formats.md 2 |
//! | [`summary`] | `summary.json` | architecture.md 5 |
//! | [`outdir`] | atomic output directory | architecture.md 2 |
//! | [`table`] | human tables, `%g` | — |
//!
//! Nothing here copies kernel, trace-cmd or Perfetto code; formats are
//! implemented from `docs/formats.md` and checked against the real-kernel
//! fixtures.
#![warn(missing_docs)]

pub mod compare;
pub mod ftrace_text;
pub mod outdir;
pub mod pftrace;
pub mod report_html;
pub mod rtapp_log;
pub mod schedstat;
pub mod summary;
pub mod table;
pub mod trace_dat;

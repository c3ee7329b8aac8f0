//! rt-app per-thread log files (`<log_basename>-<thread>.log`).
//!
//! What it owns: the header line, the row layout, a writer and a reader for
//! [`LogRow`]s, and the file-name rule.
//!
//! Source: `docs/formats.md` 2.1–2.3 (rt-app `src/rt-app.c` and
//! `src/rt-app_utils.c` as read there). Checked against the real log
//! `fixtures/real-kernel/rtapp_cfs_thread-0_sched_idle_2cpu.log`, whose
//! header is exactly [`RTAPP_LOG_HEADER`] and which this module reproduces
//! byte for byte (test `real_log_round_trips_byte_identical`).
//!
//! Row layout (printf): `%4d %8lu %8lu %8lu %15llu %15llu %15llu %10ld %10lu
//! %10lu %10lu`. Numbers wider than their field simply grow, as with printf.
//!
//! Deviations: none in the output. The reader is lenient in one way: it
//! splits rows on any whitespace, so it also reads logs whose columns have
//! overflowed their widths; and it skips every `#` line (pre-2017 rt-app
//! wrote an extra `# Policy : ...` line, formats-spec.md 2.2).

use std::fmt;
use std::io::{self, Write};

use schedlab_core::stats::LogRow;

/// The single header line current rt-app writes (without newline).
pub const RTAPP_LOG_HEADER: &str = "#idx     perf      run   period           start             end          rel_st      slack c_duration   c_period     wu_lat";

/// The log file name: `<log_basename>-<thread>.log` (formats-spec.md 2.1), for
/// example `rt-app-cfs_thread-0.log`.
pub fn log_file_name(log_basename: &str, thread: &str) -> String {
    format!("{log_basename}-{thread}.log")
}

/// One row as rt-app prints it (without newline).
pub fn format_log_row(r: &LogRow) -> String {
    format!(
        "{:4} {:8} {:8} {:8} {:15} {:15} {:15} {:10} {:10} {:10} {:10}",
        r.idx,
        r.perf,
        r.run,
        r.period,
        r.start,
        r.end,
        r.rel_st,
        r.slack,
        r.c_duration,
        r.c_period,
        r.wu_lat
    )
}

/// Writes the header line.
pub fn write_log_header<W: Write + ?Sized>(out: &mut W) -> io::Result<()> {
    writeln!(out, "{RTAPP_LOG_HEADER}")
}

/// Writes one row line.
pub fn write_log_row<W: Write + ?Sized>(out: &mut W, r: &LogRow) -> io::Result<()> {
    writeln!(out, "{}", format_log_row(r))
}

/// Writes a whole log: header, then one line per row.
pub fn write_log<W: Write + ?Sized>(out: &mut W, rows: &[LogRow]) -> io::Result<()> {
    write_log_header(out)?;
    for r in rows {
        write_log_row(out, r)?;
    }
    Ok(())
}

/// A streaming log writer: the header on creation, then rows as they come.
#[derive(Debug)]
pub struct RtAppLogWriter<W: Write> {
    out: W,
    rows: u64,
}

impl<W: Write> RtAppLogWriter<W> {
    /// Writes the header to `out`.
    pub fn new(mut out: W) -> io::Result<Self> {
        write_log_header(&mut out)?;
        Ok(RtAppLogWriter { out, rows: 0 })
    }

    /// Appends one row.
    pub fn row(&mut self, r: &LogRow) -> io::Result<()> {
        write_log_row(&mut self.out, r)?;
        self.rows += 1;
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flushes and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A malformed log line; `Display` is `LINE: problem`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LogParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.line, self.message)
    }
}

impl std::error::Error for LogParseError {}

const COLUMNS: [&str; 11] = [
    "idx",
    "perf",
    "run",
    "period",
    "start",
    "end",
    "rel_st",
    "slack",
    "c_duration",
    "c_period",
    "wu_lat",
];

/// Parses one row (not a `#` line); the error has no line number.
pub fn parse_log_row(line: &str) -> Result<LogRow, String> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() != COLUMNS.len() {
        return Err(format!(
            "expected {} columns, found {}",
            COLUMNS.len(),
            f.len()
        ));
    }
    fn n<T: std::str::FromStr>(f: &[&str], i: usize) -> Result<T, String> {
        f[i].parse()
            .map_err(|_| format!("column {} '{}' is not a valid number", COLUMNS[i], f[i]))
    }
    Ok(LogRow {
        idx: n(&f, 0)?,
        perf: n(&f, 1)?,
        run: n(&f, 2)?,
        period: n(&f, 3)?,
        start: n(&f, 4)?,
        end: n(&f, 5)?,
        rel_st: n(&f, 6)?,
        slack: n(&f, 7)?,
        c_duration: n(&f, 8)?,
        c_period: n(&f, 9)?,
        wu_lat: n(&f, 10)?,
    })
}

/// Parses a log: `#` lines and blank lines are skipped.
pub fn parse_rtapp_log(text: &str) -> Result<Vec<LogRow>, LogParseError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        rows.push(parse_log_row(line).map_err(|message| LogParseError {
            line: i + 1,
            message,
        })?);
    }
    Ok(rows)
}

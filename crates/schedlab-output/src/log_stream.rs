//! The rt-app logs streamed into a staged output directory while the run
//! goes, so that a run's memory does not grow with its length.
//!
//! [`LogStream`] is the simulator's [`RowSink`]: each completed iteration's
//! row is formatted at once into its thread's buffer (the bytes the file
//! will hold: the header, then one line per row, exactly what
//! [`write_log`](crate::rtapp_log::write_log) writes). When the buffers
//! together pass [`BUFFER_BUDGET`], the largest are appended to their files
//! in the stage ([`StageAppender`]) until half the budget is left; the rest
//! is appended by [`finish`](RowSink::finish). Files are opened per append
//! and closed again, so 100 000 threads need no 100 000 descriptors, and a
//! thread with few rows is written once, at the end. Only threads with
//! rows get a file (as before). The stage is still committed whole or
//! removed, so a killed run leaves no partial log.
//!
//! Memory: at most [`BUFFER_BUDGET`] bytes of buffered text (plus, per
//! thread that logged, its file name and an empty buffer), whatever the
//! run's length.
//!
//! With rt-app's `log_size` set to a number of MiB
//! ([`Workload::log_ring_bytes`]) each thread's rows go instead into a ring
//! of that many bytes, as rt-app's in-memory log buffer: when a row does
//! not fit, the oldest rows are dropped, and each file (the header, then
//! the rows the ring still holds) is written when the run ends. Those
//! bytes count against the output limit then.

use std::collections::VecDeque;
use std::io;

use schedlab_core::ids::TaskId;
use schedlab_core::observe::RowSink;
use schedlab_core::program::Workload;
use schedlab_core::stats::LogRow;

use crate::outdir::StageAppender;
use crate::rtapp_log::{log_file_name, write_log_header, write_log_row};

/// rt-app's default `log_basename`, used when the workload sets none.
pub const DEFAULT_LOG_BASENAME: &str = "rt-app";

/// Bytes of formatted rows held before the largest buffers are written
/// out (a choice: large enough that a write moves at least tens of KiB per
/// file opened for the usual thread counts, small against any machine).
pub const BUFFER_BUDGET: usize = 32 << 20;

/// The `log_basename` of `w` (rt-app's default when it sets none).
pub fn log_basename(w: &Workload) -> &str {
    if w.log_basename.is_empty() {
        DEFAULT_LOG_BASENAME
    } else {
        &w.log_basename
    }
}

/// One thread's log in the making.
#[derive(Debug)]
struct ThreadBuf {
    file: String,
    buf: Vec<u8>,
    /// Ring mode: the rows kept, oldest first, and each one's length.
    ring: VecDeque<u8>,
    lens: VecDeque<usize>,
}

impl ThreadBuf {
    /// A new log of `file`, its header written.
    fn new(file: String) -> ThreadBuf {
        let mut buf = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = write_log_header(&mut buf);
        ThreadBuf {
            file,
            buf,
            ring: VecDeque::new(),
            lens: VecDeque::new(),
        }
    }
}

/// Streams the rt-app logs into a stage (see the [module docs](self)).
#[derive(Debug)]
pub struct LogStream {
    out: StageAppender,
    basename: String,
    threads: Vec<Option<ThreadBuf>>,
    buffered: usize,
    budget: usize,
    error: Option<io::Error>,
    /// Appends done (files opened), for tests and measurements.
    appends: u64,
    /// `log_size` in bytes: each thread keeps its last rows in a ring of
    /// this size (None: rows are streamed).
    ring: Option<usize>,
    /// Scratch for one formatted row (ring mode).
    line: Vec<u8>,
}

impl LogStream {
    /// Streams the logs of `w`'s threads into `out`.
    pub fn new(out: StageAppender, w: &Workload) -> LogStream {
        LogStream::with_budget(out, w, BUFFER_BUDGET)
    }

    /// The same with another buffer budget (tests).
    pub fn with_budget(out: StageAppender, w: &Workload, budget: usize) -> LogStream {
        LogStream {
            out,
            basename: log_basename(w).to_string(),
            threads: Vec::new(),
            buffered: 0,
            budget,
            error: None,
            appends: 0,
            ring: w
                .log_ring_bytes
                .map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
            line: Vec::new(),
        }
    }

    /// Ring mode: `row` into thread `i`'s ring, dropping its oldest rows
    /// until it fits (a row longer than the whole ring is not kept).
    fn ring_row(&mut self, i: usize, cap: usize, name: &str, row: &LogRow) {
        if self.threads[i].is_none() {
            self.threads[i] = Some(ThreadBuf::new(log_file_name(&self.basename, name)));
        }
        self.line.clear();
        let _ = write_log_row(&mut self.line, row);
        let Some(t) = self.threads[i].as_mut() else {
            return;
        };
        if self.line.len() > cap {
            return;
        }
        while t.ring.len() + self.line.len() > cap {
            let n = t.lens.pop_front().unwrap_or(t.ring.len());
            t.ring.drain(..n);
        }
        t.ring.extend(self.line.iter().copied());
        t.lens.push_back(self.line.len());
    }

    /// Ring mode, at the end: each thread's header and kept rows, charged
    /// to the output limit.
    fn flush_rings(&mut self) {
        for t in self.threads.iter_mut().flatten() {
            let (a, b) = t.ring.as_slices();
            let n = t.buf.len() + a.len() + b.len();
            if self.error.is_some() {
                return;
            }
            if let Err(e) = crate::limit::charge(n) {
                self.error = Some(io::Error::new(
                    e.kind(),
                    format!(
                        "{}: the rt-app logs' rings pass the output limit: {e}",
                        t.file
                    ),
                ));
                return;
            }
            let mut all = std::mem::take(&mut t.buf);
            all.extend_from_slice(a);
            all.extend_from_slice(b);
            self.appends += 1;
            if let Err(e) = self.out.append(&t.file, &all) {
                self.error = Some(io::Error::new(
                    e.kind(),
                    format!("{}: cannot write: {e}", t.file),
                ));
            }
            t.ring = VecDeque::new();
            t.lens = VecDeque::new();
        }
    }

    /// Appends done so far (each opens one file).
    pub fn appends(&self) -> u64 {
        self.appends
    }

    fn append(&mut self, i: usize) {
        let Some(t) = self.threads[i].as_mut() else {
            return;
        };
        if t.buf.is_empty() {
            return;
        }
        let buf = std::mem::take(&mut t.buf);
        self.buffered -= buf.len();
        self.appends += 1;
        if self.error.is_none() {
            if let Err(e) = self.out.append(&t.file, &buf) {
                self.error = Some(io::Error::new(
                    e.kind(),
                    format!("{}: cannot write: {e}", t.file),
                ));
            }
        }
    }

    /// Writes out the largest buffers until half the budget is left.
    fn spill(&mut self) {
        let mut order: Vec<(usize, usize)> = self
            .threads
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.as_ref().map(|t| (t.buf.len(), i)))
            .filter(|&(n, _)| n > 0)
            .collect();
        order.sort_unstable_by(|a, b| b.cmp(a));
        for (_, i) in order {
            if self.buffered <= self.budget / 2 {
                break;
            }
            self.append(i);
        }
    }
}

impl RowSink for LogStream {
    /// Each row's bytes are charged to the run's output limit
    /// ([`crate::limit`]); past it, rows are dropped (the run is stopped
    /// and its stage removed by the caller).
    fn row(&mut self, task: TaskId, name: &str, row: &LogRow) {
        if crate::limit::exceeded().is_some() {
            return;
        }
        let i = task.idx();
        if self.threads.len() <= i {
            self.threads.resize_with(i + 1, || None);
        }
        if let Some(cap) = self.ring {
            self.ring_row(i, cap, name, row);
            return;
        }
        if self.threads[i].is_none() {
            let t = ThreadBuf::new(log_file_name(&self.basename, name));
            if crate::limit::charge(t.buf.len()).is_err() {
                return;
            }
            self.buffered += t.buf.len();
            self.threads[i] = Some(t);
        }
        if let Some(t) = self.threads[i].as_mut() {
            let before = t.buf.len();
            let _ = write_log_row(&mut t.buf, row);
            if crate::limit::charge(t.buf.len() - before).is_err() {
                t.buf.truncate(before);
                return;
            }
            self.buffered += t.buf.len() - before;
        }
        if self.buffered > self.budget {
            self.spill();
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.ring.is_some() {
            self.flush_rings();
        }
        for i in 0..self.threads.len() {
            self.append(i);
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outdir::StagedOutDir;
    use crate::rtapp_log::write_log;

    fn row(i: u32, k: u64) -> LogRow {
        LogRow {
            idx: i,
            perf: k * 7,
            run: 1000 + k,
            period: 10_000,
            start: k * 10_000,
            end: k * 10_000 + 1000,
            rel_st: k * 10_000,
            slack: 9000 - k as i64,
            c_duration: 1000,
            c_period: 10_000,
            wu_lat: k % 5,
        }
    }

    /// Interleaved rows of three threads through a budget so small that
    /// every few rows spill: each file is exactly what `write_log` writes
    /// for its rows, and only threads with rows get a file.
    #[test]
    fn streamed_logs_equal_whole_logs_whatever_the_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        let w = Workload {
            log_basename: "lb".into(),
            ..Default::default()
        };
        for budget in [1, 300, 1 << 20] {
            let stage = StagedOutDir::stage_with(&target, true).unwrap();
            let mut s = LogStream::with_budget(stage.appender(), &w, budget);
            let mut want: Vec<Vec<LogRow>> = vec![Vec::new(); 3];
            for k in 0..200u64 {
                let t = (k * k % 3) as usize;
                let r = row(t as u32, k);
                s.row(TaskId(t as u32), &format!("th-{t}"), &r);
                want[t].push(r);
            }
            s.finish().unwrap();
            if budget == 1 {
                assert!(s.appends() >= 200, "every row spilled: {}", s.appends());
            }
            if budget == 1 << 20 {
                assert_eq!(s.appends(), 2, "one append per file at the end");
            }
            stage.write("summary.json", b"{}").unwrap();
            stage.commit().unwrap();
            // k² mod 3 is never 2: thread 2 has no rows and gets no file.
            assert!(want[2].is_empty());
            assert!(!target.join("lb-th-2.log").exists());
            for (t, rows) in want.iter().enumerate().take(2) {
                let mut text = Vec::new();
                write_log(&mut text, rows).unwrap();
                let got = std::fs::read(target.join(format!("lb-th-{t}.log"))).unwrap();
                assert_eq!(got, text, "budget {budget}, thread {t}");
            }
            assert_eq!(std::fs::read_dir(&target).unwrap().count(), 3);
        }
    }

    /// `log_size` N: each file holds the header and the last rows that fit
    /// in the ring, whole rows only, oldest dropped first.
    #[test]
    fn a_ring_keeps_the_last_rows_that_fit() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        let mut one = Vec::new();
        write_log_row(&mut one, &row(0, 10)).unwrap();
        // Room for about 3.5 rows of this length.
        let cap = one.len() * 7 / 2;
        let w = Workload {
            log_basename: "lb".into(),
            log_ring_bytes: Some(cap as u64),
            ..Default::default()
        };
        let stage = StagedOutDir::stage_with(&target, true).unwrap();
        let mut s = LogStream::new(stage.appender(), &w);
        let rows: Vec<LogRow> = (10..20u64).map(|k| row(0, k)).collect();
        for r in &rows {
            s.row(TaskId(0), "th-0", r);
        }
        s.finish().unwrap();
        stage.write("summary.json", b"{}").unwrap();
        stage.commit().unwrap();
        let mut want = Vec::new();
        write_log(&mut want, &rows[7..]).unwrap();
        let got = std::fs::read(target.join("lb-th-0.log")).unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want).unwrap()
        );
    }
}

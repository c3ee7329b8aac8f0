//! The trace tee: one run feeds the three timelines `--trace` writes.
//!
//! ```text
//!  engine ──Sink──► TraceSinks ─┬─► SpooledTraceWriter ─► trace.txt
//!                               ├─► TraceDatWriter ─────► trace.dat
//!                               └─► PftraceWriter ──────► trace.pftrace
//! ```
//!
//! What it owns: [`TraceSinks`] (the tee, a [`Sink`] forwarding every record
//! to the three writers, each spooling to its own [`Spool`](crate::spool::Spool)),
//! [`TraceOutput`] (a sink that can write its trace files into a staged
//! output directory at the end of a run: the tee writes three, a
//! [`NullSink`] none), the names of the trace files ([`TRACE_FILES`]) and
//! the typed [`TraceError`].

use std::io::{self, Write};
use std::path::Path;

use schedlab_core::observe::{NullSink, Sink, TraceRecord};

use crate::ftrace_text::SpooledTraceWriter;
use crate::outdir::StagedOutDir;
use crate::pftrace::PftraceWriter;
use crate::spool::SpoolError;
use crate::trace_dat::TraceDatWriter;

/// The trace files of `--trace`, in the order they are written.
pub const TRACE_FILES: [&str; 3] = ["trace.txt", "trace.dat", "trace.pftrace"];

/// Writing a trace failed.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A spool could not be created.
    #[error("cannot create the trace spools: {0}")]
    Spool(#[from] SpoolError),
    /// A trace file could not be written (or its spool failed while the
    /// run recorded it).
    #[error("{file}: {source}")]
    Write {
        /// The trace file ([`TRACE_FILES`]).
        file: &'static str,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// A sink that can write its trace files into the output directory once
/// the run is over.
pub trait TraceOutput: Sink {
    /// Writes this sink's trace files (if any) for a machine of `nr_cpus`
    /// CPUs into `stage`.
    fn write_trace(self, nr_cpus: u32, stage: &StagedOutDir) -> Result<(), TraceError>;
}

impl TraceOutput for NullSink {
    fn write_trace(self, _: u32, _: &StagedOutDir) -> Result<(), TraceError> {
        Ok(())
    }
}

/// The three timelines `--trace` writes, fed from one run: ftrace text,
/// trace-cmd's trace.dat, Perfetto protobuf.
#[derive(Debug)]
pub struct TraceSinks {
    text: SpooledTraceWriter,
    dat: TraceDatWriter,
    pftrace: PftraceWriter,
}

impl TraceSinks {
    /// Spools in the system's temp directory.
    pub fn new(nr_cpus: u32) -> Result<TraceSinks, TraceError> {
        Ok(TraceSinks {
            text: SpooledTraceWriter::new()?,
            dat: TraceDatWriter::new()?,
            pftrace: PftraceWriter::new()?.with_nr_cpus(nr_cpus),
        })
    }

    /// Spools in `dir` (for example the stage's directory, to stay on the
    /// output's file system).
    pub fn new_in(dir: impl AsRef<Path>, nr_cpus: u32) -> Result<TraceSinks, TraceError> {
        let dir = dir.as_ref();
        Ok(TraceSinks {
            text: SpooledTraceWriter::new_in(dir)?,
            dat: TraceDatWriter::new_in(dir)?,
            pftrace: PftraceWriter::new_in(dir)?.with_nr_cpus(nr_cpus),
        })
    }
}

impl Sink for TraceSinks {
    fn wants_trace(&self) -> bool {
        true
    }
    fn trace(&mut self, rec: &TraceRecord<'_>) {
        self.text.trace(rec);
        self.dat.trace(rec);
        self.pftrace.trace(rec);
    }
}

/// Creates `file` in the stage and writes it with `f`.
fn stage_file(
    stage: &StagedOutDir,
    file: &'static str,
    f: impl FnOnce(&mut dyn Write) -> io::Result<u64>,
) -> Result<(), TraceError> {
    let err = |source| TraceError::Write { file, source };
    let mut w = stage.create_file(file).map_err(err)?;
    f(&mut w).map_err(err)?;
    w.flush().map_err(err)
}

impl TraceOutput for TraceSinks {
    fn write_trace(self, nr_cpus: u32, stage: &StagedOutDir) -> Result<(), TraceError> {
        let [txt, dat, pf] = TRACE_FILES;
        stage_file(stage, txt, |w| self.text.finish(nr_cpus, w))?;
        stage_file(stage, dat, |w| self.dat.finish(nr_cpus, w))?;
        stage_file(stage, pf, |w| self.pftrace.finish(w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::ids::CpuId;
    use schedlab_core::observe::{PrevState, TaskView, TraceEvent};

    fn records(sink: &mut impl Sink) {
        let idle = TaskView {
            pid: 0,
            comm: "",
            prio: 120,
        };
        let t = TaskView {
            pid: 5,
            comm: "worker",
            prio: 120,
        };
        let ev = [
            TraceEvent::SchedSwitch {
                prev: idle,
                prev_state: PrevState::Runnable,
                next: t,
            },
            TraceEvent::SchedSwitch {
                prev: t,
                prev_state: PrevState::Sleeping,
                next: idle,
            },
        ];
        for (i, event) in ev.into_iter().enumerate() {
            sink.trace(&TraceRecord {
                time: 1_000_000 + i as u64 * 500_000,
                cpu: CpuId(1),
                ctx: if i == 0 { idle } else { t },
                flags: *b"d..2.",
                event,
            });
        }
    }

    #[test]
    fn the_tee_writes_the_same_files_as_each_writer_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let stage = StagedOutDir::stage(&out).unwrap();
        let mut tee = TraceSinks::new_in(stage.stage_dir(), 2).unwrap();
        assert!(tee.wants_trace());
        records(&mut tee);
        tee.write_trace(2, &stage).unwrap();
        let mut want = TRACE_FILES.map(std::path::PathBuf::from);
        want.sort();
        assert_eq!(stage.commit().unwrap(), want);

        let mut text = SpooledTraceWriter::new().unwrap();
        let mut dat = TraceDatWriter::new().unwrap();
        let mut pf = PftraceWriter::new().unwrap().with_nr_cpus(2);
        records(&mut text);
        records(&mut dat);
        records(&mut pf);
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        assert_eq!(text.finish(2, &mut a).unwrap(), 2);
        assert_eq!(dat.finish(2, &mut b).unwrap(), 2);
        assert_eq!(pf.finish(&mut c).unwrap(), 2);
        assert_eq!(std::fs::read(out.join("trace.txt")).unwrap(), a);
        assert_eq!(std::fs::read(out.join("trace.dat")).unwrap(), b);
        assert_eq!(std::fs::read(out.join("trace.pftrace")).unwrap(), c);
        let txt = String::from_utf8(a).unwrap();
        assert!(txt.contains("sched_switch"), "{txt}");
    }

    #[test]
    fn a_spool_in_a_missing_directory_is_a_typed_error() {
        let tmp = tempfile::tempdir().unwrap();
        let e = TraceSinks::new_in(tmp.path().join("gone"), 2).unwrap_err();
        assert!(
            matches!(e, TraceError::Spool(SpoolError::CreateIn { .. })),
            "{e:?}"
        );
        assert!(e
            .to_string()
            .starts_with("cannot create the trace spools: "));
    }

    #[test]
    fn a_trace_file_that_cannot_be_written_names_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let stage = StagedOutDir::stage(tmp.path().join("out")).unwrap();
        let mut tee = TraceSinks::new(2).unwrap();
        records(&mut tee);
        // The stage becomes a plain file: creating trace.txt fails.
        std::fs::remove_dir_all(stage.stage_dir()).unwrap();
        std::fs::write(stage.stage_dir(), b"").unwrap();
        let e = tee.write_trace(2, &stage).unwrap_err();
        match &e {
            TraceError::Write { file, source } => {
                assert_eq!(*file, "trace.txt");
                assert_ne!(source.kind(), io::ErrorKind::Other);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(e.to_string().starts_with("trace.txt: "));
        std::fs::remove_file(stage.stage_dir()).unwrap();
    }

    #[test]
    fn a_record_on_a_cpu_beyond_the_machine_fails_trace_dat() {
        let tmp = tempfile::tempdir().unwrap();
        let stage = StagedOutDir::stage(tmp.path().join("out")).unwrap();
        let mut tee = TraceSinks::new(1).unwrap();
        records(&mut tee); // CPU 1 on a 1-CPU machine
        let e = tee.write_trace(1, &stage).unwrap_err();
        assert!(
            matches!(
                e,
                TraceError::Write {
                    file: "trace.dat",
                    ..
                }
            ),
            "{e:?}"
        );
    }
}

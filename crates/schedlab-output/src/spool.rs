//! Spool files: the scaffolding the three trace writers share.
//!
//! `trace.txt`, `trace.dat` and `trace.pftrace` all need something that is
//! only known at the end of the run (the event count, the task list, every
//! CPU's page list) at the *start* of the file. Each writer therefore
//! streams its body into a [`Spool`] while the simulation runs and, in its
//! `finish`, writes the header and copies the spooled body behind it.
//!
//! What this module owns:
//!
//! * [`Spool`]: an anonymous temporary file (no name on disk, `O_TMPFILE`
//!   where available, so nothing is left behind if the process dies) behind
//!   a 64 KiB buffer, in the system temp directory or in a chosen one (pick
//!   one on the output's file system, such as
//!   [`StagedOutDir::stage_dir`](crate::outdir::StagedOutDir::stage_dir)).
//!   [`Spool::into_file`] flushes it and rewinds it for reading back.
//! * [`FirstError`]: `Sink::trace` cannot fail, so a writer keeps the first
//!   I/O error, drops later records, and returns the error from `finish`.
//! * [`SpoolError`]: the typed error of creating a spool.
//!
//! Used by [`SpooledTraceWriter`](crate::ftrace_text::SpooledTraceWriter),
//! [`TraceDatWriter`](crate::trace_dat::TraceDatWriter) and
//! [`PftraceWriter`](crate::pftrace::PftraceWriter).

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Buffer size in front of a spool file.
const SPOOL_BUFFER: usize = 1 << 16;

/// A spool file could not be created.
#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    /// In the system temporary directory.
    #[error("cannot create a spool file in the temporary directory: {0}")]
    CreateTemp(#[source] io::Error),
    /// In a given directory.
    #[error("{}: cannot create a spool file: {source}", dir.display())]
    CreateIn {
        /// The directory asked for.
        dir: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

impl From<SpoolError> for io::Error {
    fn from(e: SpoolError) -> io::Error {
        let kind = match &e {
            SpoolError::CreateTemp(s) | SpoolError::CreateIn { source: s, .. } => s.kind(),
        };
        io::Error::new(kind, e)
    }
}

/// An anonymous temporary file written through a buffer (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct Spool {
    out: BufWriter<File>,
}

impl Spool {
    /// A spool in the system temporary directory.
    pub fn new() -> Result<Spool, SpoolError> {
        let f = tempfile::tempfile().map_err(SpoolError::CreateTemp)?;
        Ok(Spool::from_file(f))
    }

    /// A spool in `dir`.
    pub fn new_in(dir: impl AsRef<Path>) -> Result<Spool, SpoolError> {
        let dir = dir.as_ref();
        let f = tempfile::tempfile_in(dir).map_err(|source| SpoolError::CreateIn {
            dir: dir.to_path_buf(),
            source,
        })?;
        Ok(Spool::from_file(f))
    }

    fn from_file(f: File) -> Spool {
        Spool {
            out: BufWriter::with_capacity(SPOOL_BUFFER, f),
        }
    }

    /// Flushes the buffer and returns the file, positioned at its start, for
    /// reading the body back (sequentially or by seeking).
    pub fn into_file(self) -> io::Result<File> {
        let mut f = self.out.into_inner().map_err(|e| e.into_error())?;
        f.seek(SeekFrom::Start(0))?;
        Ok(f)
    }

    /// Copies the whole spooled body to `out` (after flushing it).
    pub fn copy_to<W: Write + ?Sized>(self, out: &mut W) -> io::Result<u64> {
        let mut f = self.into_file()?;
        io::copy(&mut f, out)
    }
}

/// Every byte spooled is charged to the run's output limit
/// ([`crate::limit`]); past it, writes fail.
impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        crate::limit::charge(buf.len())?;
        self.out.write_all(buf)?;
        Ok(buf.len())
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        crate::limit::charge(buf.len())?;
        self.out.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The first I/O error of a writer whose records cannot report errors
/// (`Sink::trace`): kept until `finish`, which returns it.
#[derive(Debug, Default)]
pub struct FirstError(Option<io::Error>);

impl FirstError {
    /// No error yet.
    pub fn new() -> FirstError {
        FirstError(None)
    }

    /// Whether an error has been kept (later records are then dropped).
    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }

    /// Keeps `r`'s error if it is the first.
    pub fn keep<T>(&mut self, r: io::Result<T>) {
        if let Err(e) = r {
            if self.0.is_none() {
                self.0 = Some(e);
            }
        }
    }

    /// `Err` with the kept error (taking it), or `Ok`.
    pub fn take(&mut self) -> io::Result<()> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn spooled_bytes_read_back_from_the_start() {
        let mut s = Spool::new().unwrap();
        s.write_all(b"hello ").unwrap();
        s.write_all(b"world").unwrap();
        let mut f = s.into_file().unwrap();
        let mut text = String::new();
        f.read_to_string(&mut text).unwrap();
        assert_eq!(text, "hello world");
    }

    #[test]
    fn copy_to_writes_the_whole_body() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spool::new_in(dir.path()).unwrap();
        s.write_all(&[7u8; 100_000]).unwrap();
        let mut out = Vec::new();
        assert_eq!(s.copy_to(&mut out).unwrap(), 100_000);
        assert_eq!(out, vec![7u8; 100_000]);
        // Anonymous: nothing is visible in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_missing_directory_is_a_typed_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-dir");
        let e = Spool::new_in(&missing).unwrap_err();
        match &e {
            SpoolError::CreateIn { dir, source } => {
                assert_eq!(dir, &missing);
                assert_eq!(source.kind(), io::ErrorKind::NotFound);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(e.to_string().starts_with(&format!(
            "{}: cannot create a spool file",
            missing.display()
        )));
        let io: io::Error = e.into();
        assert_eq!(io.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn first_error_keeps_only_the_first() {
        let mut fe = FirstError::new();
        fe.keep(Ok::<_, io::Error>(()));
        assert!(!fe.is_set());
        fe.keep::<()>(Err(io::Error::other("one")));
        fe.keep::<()>(Err(io::Error::other("two")));
        assert!(fe.is_set());
        assert_eq!(fe.take().unwrap_err().to_string(), "one");
        assert!(fe.take().is_ok());
    }
}

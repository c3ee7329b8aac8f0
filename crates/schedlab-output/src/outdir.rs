//! Atomic output directories: nothing half-written is ever visible.
//!
//! Two modes:
//!
//! * [`OutDir`] (immediate): each file is written to `<name>.tmp` in the
//!   target directory and renamed onto `<name>` when complete. A reader sees
//!   the old file or the new one, never a torn one; a failed file leaves
//!   nothing (the `.tmp` is removed on drop).
//! * [`StagedOutDir`] (all or nothing): every file is written into a hidden
//!   sibling directory `.<dir name>.stage-<pid>-<n>` on the same file system.
//!   [`commit`](StagedOutDir::commit) moves them into place; dropping the stage
//!   without committing deletes it, so a failed run leaves no partial files.
//!
//! Commit: if the target does not exist yet, the stage directory itself is
//! renamed onto it, one atomic step. Otherwise each staged file is renamed
//! over its target path (each rename atomic; the set is not, but only
//! complete files are ever moved), and files of earlier runs that this run
//! did not write are left alone.
//!
//! Names are relative paths such as `summary.json` or
//! `cgroup/tg1/cpu.stat`; absolute paths and `..` are rejected.
//!
//! Source: architecture.md section 2 ("written atomically: temp file then
//! rename") and style.md ("nothing half-written").

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

fn check_name(name: &str) -> io::Result<&Path> {
    let p = Path::new(name);
    let ok = !name.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)));
    if ok {
        Ok(p)
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("output name '{name}' must be a relative path without '..'"),
        ))
    }
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// An output directory written file by file, each file atomically.
#[derive(Debug, Clone)]
pub struct OutDir {
    dir: PathBuf,
}

impl OutDir {
    /// Uses `path`, creating it (and its parents) if needed.
    pub fn create(path: impl AsRef<Path>) -> io::Result<OutDir> {
        let dir = path.as_ref().to_path_buf();
        fs::create_dir_all(&dir)?;
        Ok(OutDir { dir })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Opens `<name>.tmp` for writing; [`PendingFile::commit`] renames it to
    /// `<name>`.
    pub fn create_file(&self, name: &str) -> io::Result<PendingFile> {
        let path = self.dir.join(check_name(name)?);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        PendingFile::create(path)
    }

    /// Writes `bytes` to `name` atomically.
    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.write_with(name, |w| w.write_all(bytes))
    }

    /// Writes `name` atomically with `f`; if `f` fails, nothing is left.
    pub fn write_with<F>(&self, name: &str, f: F) -> io::Result<()>
    where
        F: FnOnce(&mut dyn Write) -> io::Result<()>,
    {
        let mut p = self.create_file(name)?;
        f(&mut p)?;
        p.commit()
    }
}

/// A file being written as `<final>.tmp`; renamed on [`commit`](Self::commit),
/// removed when dropped uncommitted.
#[derive(Debug)]
pub struct PendingFile {
    out: Option<BufWriter<File>>,
    tmp: PathBuf,
    dest: PathBuf,
}

impl PendingFile {
    fn create(dest: PathBuf) -> io::Result<PendingFile> {
        let tmp = tmp_path(&dest);
        let f = File::create(&tmp)?;
        Ok(PendingFile {
            out: Some(BufWriter::with_capacity(1 << 16, f)),
            tmp,
            dest,
        })
    }

    /// Where the file will appear.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Flushes, syncs and renames onto the final name.
    pub fn commit(mut self) -> io::Result<()> {
        let w = self.out.take().expect("not yet committed");
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        drop(f);
        fs::rename(&self.tmp, &self.dest)
    }
}

impl Write for PendingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.as_mut().expect("not yet committed").write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.as_mut().expect("not yet committed").write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.as_mut().expect("not yet committed").flush()
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

static STAGE_SEQ: AtomicU64 = AtomicU64::new(0);

/// An output directory whose files all appear at [`commit`](Self::commit),
/// or not at all.
#[derive(Debug)]
pub struct StagedOutDir {
    target: PathBuf,
    stage: PathBuf,
    committed: bool,
}

impl StagedOutDir {
    /// Starts staging for `path` (created at commit). The stage lives next
    /// to it, so the final renames stay on one file system.
    pub fn stage(path: impl AsRef<Path>) -> io::Result<StagedOutDir> {
        let target = path.as_ref().to_path_buf();
        let name = target
            .file_name()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("output directory '{}' has no name", target.display()),
                )
            })?
            .to_string_lossy()
            .into_owned();
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent)?;
        loop {
            let n = STAGE_SEQ.fetch_add(1, Ordering::Relaxed);
            let stage = parent.join(format!(".{name}.stage-{}-{n}", std::process::id()));
            match fs::create_dir(&stage) {
                Ok(()) => {
                    return Ok(StagedOutDir {
                        target,
                        stage,
                        committed: false,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The final directory.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The staging directory (same file system as the target; use it for
    /// spool files such as [`SpooledTraceWriter`](crate::ftrace_text::SpooledTraceWriter)).
    pub fn stage_dir(&self) -> &Path {
        &self.stage
    }

    /// Creates (truncates) `name` in the stage.
    pub fn create_file(&self, name: &str) -> io::Result<BufWriter<File>> {
        let path = self.stage.join(check_name(name)?);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        Ok(BufWriter::with_capacity(1 << 16, File::create(path)?))
    }

    /// Stages `name` with `bytes`.
    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.write_with(name, |w| w.write_all(bytes))
    }

    /// Stages `name` written by `f`.
    pub fn write_with<F>(&self, name: &str, f: F) -> io::Result<()>
    where
        F: FnOnce(&mut dyn Write) -> io::Result<()>,
    {
        let mut w = self.create_file(name)?;
        f(&mut w)?;
        w.flush()
    }

    /// Moves every staged file into the target; returns their relative
    /// names, sorted.
    pub fn commit(mut self) -> io::Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        collect_files(&self.stage, Path::new(""), &mut files)?;
        files.sort();
        for f in &files {
            File::open(self.stage.join(f))?.sync_all()?;
        }
        let fresh = match fs::symlink_metadata(&self.target) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => true,
            Err(e) => return Err(e),
            Ok(_) => false,
        };
        if fresh && fs::rename(&self.stage, &self.target).is_ok() {
            self.committed = true;
            return Ok(files);
        }
        fs::create_dir_all(&self.target)?;
        for f in &files {
            let dest = self.target.join(f);
            if let Some(parent) = dest.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::rename(self.stage.join(f), dest)?;
        }
        self.committed = true;
        let _ = fs::remove_dir_all(&self.stage);
        Ok(files)
    }
}

fn collect_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(root.join(rel))? {
        let entry = entry?;
        let r = rel.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            collect_files(root, &r, out)?;
        } else {
            out.push(r);
        }
    }
    Ok(())
}

impl Drop for StagedOutDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.stage);
        }
    }
}

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
//! Commit replaces the directory whole ([`StagedOutDir::commit`]): a new
//! target is the renamed stage; an existing one (empty, or a previous run
//! with `--force`) is swapped with the stage in one atomic
//! `renameat2(RENAME_EXCHANGE)`. Files are synced once (`syncfs`), not one
//! fsync each. Stage directories of dead processes are removed by the next
//! run that stages next to them ([`clean_dead_stages`]).
//! [`write_file_atomic`] is the single-file form (compare --json, report).
//!
//! Stages and temporary files are registered as unfinished while they
//! exist; [`remove_unfinished`] deletes them all, for a process about to
//! exit on a signal (the CLI calls it on SIGINT, SIGTERM and SIGHUP), and
//! keeps every later commit from happening.
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
use std::sync::{Mutex, MutexGuard};

/// What this process is writing and has not committed: stage directories
/// and temporary files. Commits rename under this lock, so a path is
/// either still here or already in place.
static UNFINISHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn unfinished_lock() -> MutexGuard<'static, Vec<PathBuf>> {
    UNFINISHED.lock().unwrap_or_else(|e| e.into_inner())
}

fn forget_unfinished(list: &mut Vec<PathBuf>, path: &Path) {
    if let Some(i) = list.iter().position(|p| p == path) {
        list.swap_remove(i);
    }
}

/// A path registered as unfinished until dropped ([`unfinished`]).
#[derive(Debug)]
pub struct Unfinished {
    path: PathBuf,
}

impl Unfinished {
    /// Runs `f` (the rename that puts the path in place) under the lock
    /// [`remove_unfinished`] takes, then forgets the path: either `f` runs
    /// whole or the path is removed, never both halves.
    pub fn finish<R>(self, f: impl FnOnce() -> R) -> R {
        let mut list = unfinished_lock();
        let r = f();
        forget_unfinished(&mut list, &self.path);
        drop(list);
        std::mem::forget(self);
        r
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        forget_unfinished(&mut unfinished_lock(), &self.path);
    }
}

/// Registers `path` (a file or a directory this process is writing) to be
/// removed by [`remove_unfinished`] until the returned guard is dropped or
/// [`finished`](Unfinished::finish).
pub fn unfinished(path: impl Into<PathBuf>) -> Unfinished {
    let path = path.into();
    unfinished_lock().push(path.clone());
    Unfinished { path }
}

/// Removes every unfinished stage directory and temporary file of this
/// process and returns how many there were. For a process about to exit
/// (on a signal): the registry stays locked, so no commit can happen
/// after this, and writers that go on meanwhile cannot recreate a stage
/// (each directory is renamed away before it is deleted, and files are
/// only ever created inside an existing stage).
pub fn remove_unfinished() -> usize {
    let list = unfinished_lock();
    for (i, path) in list.iter().enumerate() {
        let mut gone = path.as_os_str().to_owned();
        gone.push(format!("-gone{i}"));
        let gone = PathBuf::from(gone);
        let target = if fs::rename(path, &gone).is_ok() {
            gone
        } else {
            path.clone()
        };
        match fs::symlink_metadata(&target) {
            Ok(m) if m.is_dir() => {
                // Writers still running may add files until the exit.
                for _ in 0..20 {
                    if fs::remove_dir_all(&target).is_ok() || !target.exists() {
                        break;
                    }
                }
            }
            Ok(_) => {
                let _ = fs::remove_file(&target);
            }
            Err(_) => {}
        }
    }
    let n = list.len();
    std::mem::forget(list);
    n
}

/// Creates the directories of `rel` under `root`, which must exist (a
/// removed stage is never recreated).
fn create_dirs_under(root: &Path, rel: &Path) -> io::Result<()> {
    let mut d = root.to_path_buf();
    for c in rel.components() {
        d.push(c);
        match fs::create_dir(&d) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

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
    unfinished: Option<Unfinished>,
}

/// An error that names its path (one line, for the user).
fn path_err(kind: io::ErrorKind, path: &Path, msg: impl std::fmt::Display) -> io::Error {
    io::Error::new(kind, format!("{}: {msg}", path.display()))
}

/// The parent of `target` (`.` for a bare name) and the target's name.
fn split_target(target: &Path) -> io::Result<(PathBuf, String)> {
    let name = target
        .file_name()
        .ok_or_else(|| {
            path_err(
                io::ErrorKind::InvalidInput,
                target,
                "an output directory needs a name (not '.', '..' or '/')",
            )
        })?
        .to_string_lossy()
        .into_owned();
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((parent, name))
}

/// Is process `pid` alive? (`kill(pid, 0)`: EPERM means it exists.)
fn pid_alive(pid: u32) -> bool {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if p <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(p, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The pid in `<prefix><pid>-<n>` or `<prefix><pid>`.
fn pid_of(entry: &str, prefix: &str) -> Option<u32> {
    let rest = entry.strip_prefix(prefix)?;
    let pid = rest.split('-').next()?;
    pid.parse().ok()
}

/// Removes what dead runs left next to `<parent>/<name>`: stage
/// directories `.<name>.stage-<pid>-<n>/` and, from an interrupted
/// replacement without `RENAME_EXCHANGE`, `.<name>.old-<pid>-<n>/` (put
/// back as `<name>` if that is missing, so the old run reappears whole).
/// Entries of live processes (pid check) are left alone.
pub fn clean_dead_stages(parent: &Path, name: &str) {
    let Ok(rd) = fs::read_dir(parent) else {
        return;
    };
    let stage_prefix = format!(".{name}.stage-");
    let old_prefix = format!(".{name}.old-");
    let me = std::process::id();
    for e in rd.flatten() {
        let entry = e.file_name().to_string_lossy().into_owned();
        let (pid, old) = match (pid_of(&entry, &stage_prefix), pid_of(&entry, &old_prefix)) {
            (Some(p), _) => (p, false),
            (None, Some(p)) => (p, true),
            _ => continue,
        };
        if pid == me || pid_alive(pid) {
            continue;
        }
        let path = parent.join(&entry);
        let target = parent.join(name);
        if old && fs::symlink_metadata(&target).is_err() && fs::rename(&path, &target).is_ok() {
            continue;
        }
        let _ = fs::remove_dir_all(&path);
    }
}

/// [`clean_dead_stages`] for every name in `parent` (a folder of many
/// run directories, such as a sweep's `runs/`).
pub fn clean_all_dead_stages(parent: &Path) {
    let Ok(rd) = fs::read_dir(parent) else {
        return;
    };
    let mut names: Vec<String> = rd
        .flatten()
        .filter_map(|e| {
            let entry = e.file_name().to_string_lossy().into_owned();
            let rest = entry.strip_prefix('.')?;
            let i = rest.rfind(".stage-").or_else(|| rest.rfind(".old-"))?;
            Some(rest[..i].to_string())
        })
        .filter(|n| !n.is_empty())
        .collect();
    names.sort();
    names.dedup();
    for n in names {
        clean_dead_stages(parent, &n);
    }
}

/// Is `dir` a directory with no entries?
fn is_empty_dir(dir: &Path) -> io::Result<bool> {
    Ok(fs::read_dir(dir)?.next().is_none())
}

impl StagedOutDir {
    /// Starts staging for `path` (created at commit), refusing an existing
    /// non-empty directory: [`stage_with`](Self::stage_with)`(path, false)`.
    pub fn stage(path: impl AsRef<Path>) -> io::Result<StagedOutDir> {
        Self::stage_with(path, false)
    }

    /// Starts staging for `path`, checking first everything that could
    /// make the commit fail, so that a run is refused before it simulates:
    ///
    /// * the parent directory must exist and be writable (the stage is
    ///   created in it, next to the target, so the final rename stays on
    ///   one file system);
    /// * `path` must not be a file (or anything but a directory);
    /// * an existing non-empty directory is refused unless `replace`
    ///   (`--force`); even then only a previous run's directory (one with
    ///   a `summary.json`) is replaced, never an arbitrary one.
    ///
    /// Stage directories that dead processes left next to `path` are
    /// removed first ([`clean_dead_stages`]). Every error names its path.
    pub fn stage_with(path: impl AsRef<Path>, replace: bool) -> io::Result<StagedOutDir> {
        let target = path.as_ref().to_path_buf();
        let (parent, name) = split_target(&target)?;
        match fs::metadata(&parent) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(path_err(
                    io::ErrorKind::NotADirectory,
                    &parent,
                    "is not a directory (the parent of the output directory)",
                ))
            }
            Err(e) => {
                return Err(path_err(
                    e.kind(),
                    &parent,
                    format_args!("the parent of the output directory is not usable: {e}"),
                ))
            }
        }
        clean_dead_stages(&parent, &name);
        match fs::symlink_metadata(&target) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(path_err(e.kind(), &target, e)),
            Ok(m) if !m.is_dir() => {
                return Err(path_err(
                    io::ErrorKind::AlreadyExists,
                    &target,
                    "exists and is not a directory",
                ))
            }
            Ok(_) => {
                let empty = is_empty_dir(&target).map_err(|e| path_err(e.kind(), &target, e))?;
                if !empty && !replace {
                    return Err(path_err(
                        io::ErrorKind::AlreadyExists,
                        &target,
                        "exists and is not empty (--force replaces it)",
                    ));
                }
                if !empty && !target.join("summary.json").is_file() {
                    return Err(path_err(
                        io::ErrorKind::AlreadyExists,
                        &target,
                        "exists and holds no summary.json: not replacing a directory that is not a schedlab run",
                    ));
                }
            }
        }
        loop {
            let n = STAGE_SEQ.fetch_add(1, Ordering::Relaxed);
            let stage = parent.join(format!(".{name}.stage-{}-{n}", std::process::id()));
            let guard = unfinished(&stage);
            match fs::create_dir(&stage) {
                Ok(()) => {
                    return Ok(StagedOutDir {
                        target,
                        stage,
                        committed: false,
                        unfinished: Some(guard),
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(path_err(
                        e.kind(),
                        &parent,
                        format_args!("cannot create the output directory here: {e}"),
                    ))
                }
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

    /// A handle that appends to files of the stage while the run goes
    /// (the streamed rt-app logs, [`crate::log_stream`]); what it writes
    /// is committed with the rest, or removed with the stage.
    pub fn appender(&self) -> StageAppender {
        StageAppender {
            stage: self.stage.clone(),
        }
    }

    /// Creates (truncates) `name` in the stage.
    pub fn create_file(&self, name: &str) -> io::Result<BufWriter<File>> {
        let rel = check_name(name)?;
        if let Some(parent) = rel.parent() {
            create_dirs_under(&self.stage, parent)?;
        }
        Ok(BufWriter::with_capacity(
            1 << 16,
            File::create(self.stage.join(rel))?,
        ))
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

    /// Makes the staged directory the target, whole; returns the staged
    /// files' relative names, sorted.
    ///
    /// 1. Sync once: `syncfs` on the stage's file system (one call however
    ///    many files; if it fails, every file is fsynced in one pass).
    /// 2. No target: rename the stage onto it.
    /// 3. A target (an empty directory, or a run being replaced with
    ///    `--force`): swap the two with `renameat2(RENAME_EXCHANGE)`, one
    ///    atomic step, then remove the stage, which now holds the old run.
    ///    Where the file system cannot exchange, the old directory is
    ///    renamed aside (`.<name>.old-<pid>-<n>`), the stage renamed in, the
    ///    old removed; a kill between the two renames leaves the old aside,
    ///    and the next run puts it back ([`clean_dead_stages`]).
    /// 4. fsync the parent so the renames are durable.
    ///
    /// A kill at any moment leaves the old directory or the new one, never
    /// a mix, plus at most a stage directory the next run removes.
    pub fn commit(mut self) -> io::Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        collect_files(&self.stage, Path::new(""), &mut files)?;
        files.sort();
        if !syncfs(&self.stage) {
            for f in &files {
                File::open(self.stage.join(f))?.sync_all()?;
            }
        }
        let (parent, name) = split_target(&self.target)?;
        // Under the lock of the unfinished paths: a signal's clean-up
        // waits for the renames, or they never start.
        match self.unfinished.take() {
            Some(g) => g.finish(|| self.place(&parent, &name))?,
            None => self.place(&parent, &name)?,
        }
        self.committed = true;
        if let Ok(d) = File::open(&parent) {
            let _ = d.sync_all();
        }
        Ok(files)
    }

    /// The renames of [`commit`](Self::commit): the stage becomes the target.
    fn place(&mut self, parent: &Path, name: &str) -> io::Result<()> {
        match fs::symlink_metadata(&self.target) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::rename(&self.stage, &self.target)
                    .map_err(|e| path_err(e.kind(), &self.target, e))?;
            }
            Err(e) => return Err(path_err(e.kind(), &self.target, e)),
            Ok(m) if !m.is_dir() => {
                return Err(path_err(
                    io::ErrorKind::AlreadyExists,
                    &self.target,
                    "exists and is not a directory",
                ))
            }
            Ok(_) => {
                if exchange(&self.stage, &self.target)? {
                    // The stage now holds the old run.
                    self.committed = true;
                    let _ = fs::remove_dir_all(&self.stage);
                } else {
                    let n = STAGE_SEQ.fetch_add(1, Ordering::Relaxed);
                    let aside = parent.join(format!(".{name}.old-{}-{n}", std::process::id()));
                    fs::rename(&self.target, &aside)
                        .map_err(|e| path_err(e.kind(), &self.target, e))?;
                    if let Err(e) = fs::rename(&self.stage, &self.target) {
                        let _ = fs::rename(&aside, &self.target);
                        return Err(path_err(e.kind(), &self.target, e));
                    }
                    self.committed = true;
                    let _ = fs::remove_dir_all(&aside);
                }
            }
        }
        Ok(())
    }
}

/// Appends to files of a stage ([`StagedOutDir::appender`]).
#[derive(Debug, Clone)]
pub struct StageAppender {
    stage: PathBuf,
}

impl StageAppender {
    /// Appends `bytes` to `name` in the stage (created, with its parent
    /// directories, when missing); the file is closed again, so any number
    /// of files can be appended to without holding descriptors. No fsync:
    /// the commit syncs the stage once.
    pub fn append(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let rel = check_name(name)?;
        let path = self.stage.join(rel);
        let open = || fs::OpenOptions::new().append(true).create(true).open(&path);
        let mut f = match open() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Some(parent) = rel.parent() {
                    create_dirs_under(&self.stage, parent)?;
                }
                open()?
            }
            r => r?,
        };
        f.write_all(bytes)
    }
}

/// `syncfs(2)` on the file system holding `dir`; false if it failed.
fn syncfs(dir: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(d) = File::open(dir) else {
        return false;
    };
    // SAFETY: `d` is an open descriptor for the duration of the call.
    unsafe { libc::syncfs(d.as_raw_fd()) == 0 }
}

/// Atomically swaps `a` and `b` (`renameat2(RENAME_EXCHANGE)`). Ok(false)
/// when the kernel or file system cannot (EINVAL, ENOSYS).
fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let ca = CString::new(a.as_os_str().as_bytes())
        .map_err(|_| path_err(io::ErrorKind::InvalidInput, a, "contains a NUL byte"))?;
    let cb = CString::new(b.as_os_str().as_bytes())
        .map_err(|_| path_err(io::ErrorKind::InvalidInput, b, "contains a NUL byte"))?;
    // SAFETY: both are NUL-terminated paths valid for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => Ok(false),
        _ => Err(path_err(e.kind(), b, e)),
    }
}

/// Writes one file atomically: `.<name>.tmp-<pid>` in the same directory,
/// fsync, rename onto `path`. On any error the temporary file is removed;
/// temporaries that dead processes left for the same name (killed between
/// write and rename) are removed first, after a pid check. For single
/// files such as `compare --json` and `report.html`. The error does not
/// name `path`; the caller does.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (parent, name) = split_target(path)?;
    let prefix = format!(".{name}.tmp-");
    if let Ok(rd) = fs::read_dir(&parent) {
        for e in rd.flatten() {
            let entry = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = pid_of(&entry, &prefix) {
                if pid != std::process::id() && !pid_alive(pid) {
                    let _ = fs::remove_file(parent.join(&entry));
                }
            }
        }
    }
    let tmp = parent.join(format!("{prefix}{}", std::process::id()));
    let guard = unfinished(&tmp);
    let res = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        guard.finish(|| fs::rename(&tmp, path))
    })();
    if let Err(e) = res {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
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

#[cfg(test)]
mod replace_tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_run_dir_is_replaced_whole_only_with_replace() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("D");
        let s = StagedOutDir::stage(&d).unwrap();
        s.write("summary.json", b"{}").unwrap();
        s.write("old-only.log", b"a").unwrap();
        s.commit().unwrap();
        let e = StagedOutDir::stage(&d).unwrap_err().to_string();
        assert!(e.contains("not empty") && e.contains("D"), "{e}");
        let s = StagedOutDir::stage_with(&d, true).unwrap();
        s.write("summary.json", b"{\"new\": 1}").unwrap();
        s.write("cgroup/a/cpu.stat", b"x").unwrap();
        s.commit().unwrap();
        assert_eq!(names(&d), ["cgroup", "summary.json"]);
        assert_eq!(fs::read(d.join("summary.json")).unwrap(), b"{\"new\": 1}");
        assert_eq!(names(tmp.path()), ["D"], "no stage or old directory left");
        // Not a run: never replaced, even with replace.
        let other = tmp.path().join("home");
        fs::create_dir(&other).unwrap();
        fs::write(other.join("notes"), "mine").unwrap();
        let e = StagedOutDir::stage_with(&other, true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no summary.json"), "{e}");
        // A file, a missing parent.
        fs::write(tmp.path().join("f"), "x").unwrap();
        assert!(StagedOutDir::stage_with(tmp.path().join("f"), true).is_err());
        assert!(StagedOutDir::stage(tmp.path().join("no/parent/d")).is_err());
    }

    #[test]
    fn dead_stages_are_cleaned_and_an_interrupted_swap_is_undone() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path();
        // pid_max is at most 2^22: this pid is never alive.
        let dead = 1u32 << 30;
        fs::create_dir_all(p.join(format!(".D.stage-{dead}-0/sub"))).unwrap();
        fs::create_dir_all(p.join(format!(".D.old-{dead}-1"))).unwrap();
        fs::write(p.join(format!(".D.old-{dead}-1/summary.json")), "old").unwrap();
        // A live process's stage (ours, pid 1) stays.
        fs::create_dir_all(p.join(".D.stage-1-0")).unwrap();
        fs::write(p.join(format!(".x.json.tmp-{dead}")), "x").unwrap();
        clean_dead_stages(p, "D");
        assert_eq!(
            names(p),
            [".D.stage-1-0", format!(".x.json.tmp-{dead}").as_str(), "D"]
        );
        assert_eq!(fs::read_to_string(p.join("D/summary.json")).unwrap(), "old");
        write_file_atomic(&p.join("x.json"), b"new").unwrap();
        assert_eq!(names(p), [".D.stage-1-0", "D", "x.json"]);
    }
}

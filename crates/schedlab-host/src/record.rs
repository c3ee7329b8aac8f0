//! `record`: `exec` under a tracefs capture of the scheduler events, plus
//! the host's facts.
//!
//! The capture writes tracefs files directly (no trace-cmd: on kernels
//! under lockdown it fails). It uses a private trace instance
//! (`instances/schedlab-<pid>`) so the global buffer and other users are
//! untouched, with `trace_clock` `mono` by default so the trace's
//! timestamps are CLOCK_MONOTONIC seconds, the clock of the log rows.
//!
//! DIR gets:
//! * `trace.txt`: the instance's `trace` file after the run;
//! * `host.json`: [`HostFacts`](crate::facts::HostFacts), the capture's settings and per-CPU
//!   buffer statistics (overruns, dropped events), the calibration, the
//!   threads (name, index, tid) and each group's `cpu.stat` before/after;
//! * `sysfs/`: the topology files the simulator's sysfs importer reads;
//! * the run directory of [`crate::rundir`]: rt-app logs, `summary.json`
//!   (`"source": "host"`), `cgroup/<path>/cpu.stat`.
//!
//! Known kernel property: about half of the idle → task `sched_switch`
//! lines can be missing; readers should take the running task from each
//! line's context column, not from the switch lines alone.

use crate::cgroup::parse_mounts;
use crate::error::HostError;
use crate::exec::{exec, ExecOptions, ExecResult};
use crate::facts;
pub use crate::host_json::{CpuBufferStats, HostJson, ThreadId, TraceInfo};
use crate::sys;
use schedlab_core::program::Workload;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The events captured (group `sched`).
pub const EVENTS: [&str; 7] = [
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_process_fork",
    "sched_process_exit",
];

/// Options of [`record`].
#[derive(Clone, Debug, PartialEq)]
pub struct RecordOptions {
    /// The run.
    pub exec: ExecOptions,
    /// Per-CPU buffer size; None sizes it from the run's duration.
    pub buffer_size_kb: Option<u64>,
    /// `trace_clock` (`mono` makes timestamps CLOCK_MONOTONIC).
    pub trace_clock: String,
    /// Measure the host's noise first ([`crate::noise`]) into DIR/noise.json:
    /// (spin ns per CPU, timer samples per CPU); None skips it.
    pub noise: Option<(u64, usize)>,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            exec: ExecOptions::default(),
            buffer_size_kb: None,
            trace_clock: "mono".into(),
            noise: Some((300_000_000, 200)),
        }
    }
}

/// What [`record`] produced.
#[derive(Debug)]
pub struct RecordResult {
    /// The run.
    pub exec: ExecResult,
    /// What host.json holds.
    pub host: HostJson,
    /// DIR/trace.txt.
    pub trace_path: PathBuf,
    /// DIR/host.json.
    pub host_json_path: PathBuf,
}

/// The tracefs mount point from /proc/self/mounts text.
pub fn tracefs_mount(mounts: &str) -> Option<String> {
    parse_mounts(mounts)
        .into_iter()
        .find(|m| m.fstype == "tracefs")
        .map(|m| m.dir)
}

/// Finds tracefs, mounting it at /sys/kernel/tracing if needed. Returns
/// the mount point and whether this call mounted it.
pub fn ensure_tracefs() -> Result<(PathBuf, bool), HostError> {
    if !sys::is_root() {
        return Err(HostError::NotRoot {
            what: "record (tracefs capture)".into(),
        });
    }
    let mounts = std::fs::read_to_string("/proc/self/mounts")
        .map_err(|e| HostError::io("/proc/self/mounts", e))?;
    if let Some(d) = tracefs_mount(&mounts) {
        return Ok((PathBuf::from(d), false));
    }
    let target = "/sys/kernel/tracing";
    if !Path::new(target).is_dir() {
        return Err(HostError::NoTracefs(format!(
            "not mounted, and {target} does not exist (kernel without CONFIG_TRACING?)"
        )));
    }
    let c = |s: &str| std::ffi::CString::new(s).unwrap();
    let (src, tgt, fs) = (c("nodev"), c(target), c("tracefs"));
    // SAFETY: valid NUL-terminated strings; no data argument.
    let r = unsafe { libc::mount(src.as_ptr(), tgt.as_ptr(), fs.as_ptr(), 0, std::ptr::null()) };
    if r != 0 {
        return Err(HostError::NoTracefs(format!(
            "not mounted, and mounting it at {target} failed: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok((PathBuf::from(target), true))
}

fn write(p: &Path, v: &str) -> Result<(), HostError> {
    std::fs::write(p, v).map_err(|e| {
        HostError::io(
            p,
            std::io::Error::new(e.kind(), format!("writing '{v}': {e}")),
        )
    })
}

/// A trace instance; tracing off, events off and the instance removed on drop.
struct Instance {
    dir: PathBuf,
    own: bool,
}

impl Instance {
    fn open(tracefs: &Path) -> Result<Instance, HostError> {
        let dir = tracefs
            .join("instances")
            .join(format!("schedlab-{}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => Ok(Instance { dir, own: true }),
            Err(e) => Err(HostError::NoTracefs(format!(
                "cannot create trace instance {}: {e}",
                dir.display()
            ))),
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
        for e in EVENTS {
            let _ = std::fs::write(self.dir.join(format!("events/sched/{e}/enable")), "0");
        }
        if self.own {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// Parses a `per_cpu/cpuN/stats` file (`key: number [unit]` lines).
pub fn parse_buffer_stats(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((
                k.trim().to_string(),
                v.split_whitespace().next()?.parse().ok()?,
            ))
        })
        .collect()
}

/// The default per-CPU buffer: 16 MiB plus 16 MiB per second of run,
/// at most 256 MiB.
pub fn default_buffer_kb(duration_ns: Option<u64>) -> u64 {
    let secs = duration_ns.map_or(10.0, |d| d as f64 / 1e9);
    ((16.0 + 16.0 * secs) * 1024.0).min(256.0 * 1024.0) as u64
}

/// Runs `w` with [`exec`] while capturing the scheduler events, and writes
/// DIR/trace.txt, DIR/host.json and DIR/sysfs/.
pub fn record(w: &Workload, dir: &Path, opts: &RecordOptions) -> Result<RecordResult, HostError> {
    if !cfg!(target_os = "linux") {
        return Err(HostError::NotLinux(std::env::consts::OS));
    }
    let (tracefs, mounted_now) = ensure_tracefs()?;
    crate::exec::check(w)?;
    for e in EVENTS {
        let p = tracefs.join(format!("events/sched/{e}"));
        if !p.is_dir() {
            return Err(HostError::NoTraceEvent(format!("sched/{e}")));
        }
    }
    // A process restricted to CPUs 0..n-1 (`--cpus N`) records an n-CPU
    // machine: its threads inherit the affinity, and sysfs/ shows those
    // CPUs only.
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| schedlab_core::machine::sysfs::parse_cpu_list(&t).ok())
        .unwrap_or_else(crate::sys::online_cpus);
    let cpus =
        facts::affinity_prefix(&crate::sys::online_cpus(), &online).map_err(HostError::Affinity)?;
    std::fs::create_dir_all(dir).map_err(|e| HostError::io(dir, e))?;
    let host = facts::collect(&dir.join("sysfs"), cpus)
        .map_err(|e| HostError::io(dir.join("sysfs"), e))?;
    // The host's noise, measured before the capture (it would trace it).
    if let Some((spin, n)) = opts.noise {
        let m = crate::noise::measure(spin, n);
        let p = dir.join("noise.json");
        let text = serde_json::to_string_pretty(&m.to_json()).expect("noise.json serialises");
        std::fs::write(&p, text + "\n").map_err(|e| HostError::io(&p, e))?;
    }
    let inst = Instance::open(&tracefs)?;
    let d = &inst.dir;
    let kb = opts
        .buffer_size_kb
        .unwrap_or_else(|| default_buffer_kb(opts.exec.duration_ns.or(w.duration_ns)));
    write(&d.join("tracing_on"), "0")?;
    write(&d.join("buffer_size_kb"), &kb.to_string())?;
    write(&d.join("trace_clock"), &opts.trace_clock)?;
    write(&d.join("trace"), "")?;
    for e in EVENTS {
        write(&d.join(format!("events/sched/{e}/enable")), "1")?;
    }
    write(&d.join("tracing_on"), "1")?;
    let mut eo = opts.exec.clone();
    if w.ftrace != 0 && eo.trace_marker.is_none() {
        eo.trace_marker = Some(d.join("trace_marker"));
    }
    let run = exec(w, &eo);
    let _ = std::fs::write(d.join("tracing_on"), "0");
    let run = run?;
    let trace_path = dir.join("trace.txt");
    let src = d.join("trace");
    let lines = {
        let mut f = std::fs::File::open(&src).map_err(|e| HostError::io(&src, e))?;
        let out = std::fs::File::create(&trace_path).map_err(|e| HostError::io(&trace_path, e))?;
        let mut out = std::io::BufWriter::new(out);
        let mut counter = LineCount(&mut out, 0);
        std::io::copy(&mut f, &mut counter).map_err(|e| HostError::io(&trace_path, e))?;
        let n = counter.1;
        use std::io::Write;
        out.flush().map_err(|e| HostError::io(&trace_path, e))?;
        n
    };
    let mut per_cpu = Vec::new();
    for cpu in sys::online_cpus() {
        if let Ok(t) = std::fs::read_to_string(d.join(format!("per_cpu/cpu{cpu}/stats"))) {
            per_cpu.push(CpuBufferStats {
                cpu,
                stats: parse_buffer_stats(&t),
            });
        }
    }
    let trace = TraceInfo {
        tracefs,
        mounted_now,
        instance: d.clone(),
        clock: opts.trace_clock.clone(),
        buffer_size_kb: kb,
        events: EVENTS.iter().map(|e| format!("sched/{e}")).collect(),
        lines,
        per_cpu,
    };
    drop(inst);
    let hj = HostJson {
        version: 1,
        host,
        trace,
        calibration: run.calibration.clone(),
        clock: BTreeMap::from([
            ("t_start_ns".to_string(), run.t_start_ns),
            ("t0_ns".to_string(), run.t0_ns),
            ("released_ns".to_string(), run.released_ns),
            ("end_ns".to_string(), run.end_ns),
            ("last_exit_ns".to_string(), run.last_exit_ns),
        ]),
        cgroup_version: run.cgroup_version,
        groups: run.groups.clone(),
        threads: run
            .threads
            .iter()
            .map(|t| ThreadId {
                name: t.name.clone(),
                index: t.index,
                tid: t.tid,
            })
            .collect(),
        warnings: run.warnings.clone(),
    };
    let host_json_path = dir.join("host.json");
    let text = serde_json::to_string_pretty(&hj).expect("host.json serialises");
    std::fs::write(&host_json_path, text + "\n").map_err(|e| HostError::io(&host_json_path, e))?;
    crate::rundir::write_run_dir(dir, w, &run, Some(&hj))?;
    Ok(RecordResult {
        exec: run,
        host: hj,
        trace_path,
        host_json_path,
    })
}

/// A writer that counts newlines.
struct LineCount<'a, W: std::io::Write>(&'a mut W, u64);

impl<W: std::io::Write> std::io::Write for LineCount<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        self.1 += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tracefs() {
        let m = "sysfs /sys sysfs rw 0 0\ntracefs /sys/kernel/tracing tracefs rw,relatime 0 0\n";
        assert_eq!(tracefs_mount(m).as_deref(), Some("/sys/kernel/tracing"));
        assert_eq!(tracefs_mount("sysfs /sys sysfs rw 0 0\n"), None);
    }

    #[test]
    fn buffer_stats_and_size() {
        let s = parse_buffer_stats(
            "entries: 120\noverrun: 0\nbytes: 5000\noldest event ts:  5.123\ndropped events: 3\n",
        );
        assert_eq!(s["entries"], 120.0);
        assert_eq!(s["dropped events"], 3.0);
        assert_eq!(s["oldest event ts"], 5.123);
        assert_eq!(default_buffer_kb(Some(1_000_000_000)), 32 * 1024);
        assert_eq!(default_buffer_kb(Some(100_000_000_000)), 256 * 1024);
    }
}

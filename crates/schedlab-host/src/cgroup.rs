//! Task groups as real cgroups of the cpu controller.
//!
//! The workload's groups are made under a private directory
//! `<mount>/schedlab-<pid>/` (group `/a/b` is `<mount>/schedlab-<pid>/a/b`)
//! and removed when the [`CgroupSet`] is dropped, also after errors.
//!
//! * cgroup v2 (used when a cgroup2 mount lists `cpu` in
//!   `cgroup.controllers`): the private directory becomes a threaded root
//!   holding the whole process, every group is `threaded`, and threads move
//!   with `cgroup.threads`. Files: `cpu.max`, `cpu.max.burst`, `cpu.weight`
//!   (the kernel's shares → weight mapping, 1024 ↔ 100), `cpu.idle`. The
//!   process moves back to its cgroup at the end.
//! * cgroup v1 (else, the `cpu` hierarchy): `cpu.cfs_period_us`,
//!   `cpu.cfs_quota_us`, `cpu.cfs_burst_us`, `cpu.shares`, `cpu.idle`;
//!   threads move with `tasks`. Threads of the root group `/` stay in the
//!   process's own cgroup.
//!
//! `cpu.stat` is read as `key value` lines (v1: nr_periods, nr_throttled,
//! throttled_time ns, ...; v2: usage_usec, nr_throttled, throttled_usec, ...).
//! Under v1 two v2 names are added, derived: `throttled_usec` (from
//! `throttled_time`) and `usage_usec` (from `cpuacct.usage`: of the same
//! directory when cpuacct is co-mounted with cpu, else of a mirror of the
//! groups made in the separate cpuacct hierarchy, threads moved there too).

use crate::error::HostError;
use schedlab_core::program::GroupSpec;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which cgroup interface.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum CgroupVersion {
    /// The legacy `cpu` hierarchy.
    V1,
    /// The unified hierarchy with the cpu controller.
    V2,
}

/// One line of /proc/self/mounts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// Mount point.
    pub dir: String,
    /// File system type.
    pub fstype: String,
    /// Options, comma-separated.
    pub opts: String,
}

/// Parses /proc/self/mounts.
pub fn parse_mounts(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4).then(|| Mount {
                dir: f[1].replace("\\040", " "),
                fstype: f[2].to_string(),
                opts: f[3].to_string(),
            })
        })
        .collect()
}

/// Chooses the hierarchy: a cgroup2 mount whose `cgroup.controllers`
/// (read through `controllers`) lists `cpu`, else a v1 mount with the `cpu`
/// option.
pub fn choose(
    mounts: &[Mount],
    controllers: impl Fn(&str) -> Option<String>,
) -> Option<(CgroupVersion, String)> {
    for m in mounts.iter().filter(|m| m.fstype == "cgroup2") {
        if let Some(c) = controllers(&m.dir) {
            if c.split_whitespace().any(|x| x == "cpu") {
                return Some((CgroupVersion::V2, m.dir.clone()));
            }
        }
    }
    mounts
        .iter()
        .find(|m| m.fstype == "cgroup" && m.opts.split(',').any(|o| o == "cpu"))
        .map(|m| (CgroupVersion::V1, m.dir.clone()))
}

/// Parses `cpu.stat`.
pub fn parse_cpu_stat(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// cgroup v1 `cpu.shares` → v2 `cpu.weight` (the kernel's mapping:
/// weight × 1024 / 100 = shares, rounded).
pub fn shares_to_weight(shares: u64) -> u64 {
    ((shares * 100 + 512) / 1024).clamp(1, 10_000)
}

/// The process's cgroup in a hierarchy, from /proc/self/cgroup text:
/// v2 is the `0::` line, v1 the line whose controllers include `cpu`.
pub fn own_cgroup(text: &str, v: CgroupVersion) -> Option<String> {
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
        let hit = match v {
            CgroupVersion::V2 => ctl.is_empty(),
            CgroupVersion::V1 => ctl.split(',').any(|c| c == "cpu"),
        };
        hit.then(|| path.to_string())
    })
}

fn write(path: &Path, value: &str) -> Result<(), HostError> {
    std::fs::write(path, value).map_err(|e| {
        HostError::io(
            path,
            std::io::Error::new(e.kind(), format!("writing '{}': {e}", value.trim())),
        )
    })
}

/// `cpu.stat` of one group, before and after the run.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GroupStat {
    /// The workload's group path.
    pub path: String,
    /// Its directory on the host.
    pub dir: PathBuf,
    /// `cpu.stat` before the threads started.
    pub before: BTreeMap<String, u64>,
    /// `cpu.stat` after they ended.
    pub after: BTreeMap<String, u64>,
}

/// v1 cpuacct mirror: (private directory, the process's own cpuacct
/// cgroup, group path → directory).
pub type AcctMirror = (PathBuf, PathBuf, Vec<(String, PathBuf)>);

/// The nice of the calling process's autogroup (`/proc/self/autogroup`:
/// `/autogroup-N nice K`); None without autogroup.
pub fn autogroup_nice() -> Option<i32> {
    let t = std::fs::read_to_string("/proc/self/autogroup").ok()?;
    t.split_whitespace().last()?.parse().ok()
}

/// The workload's cgroups on the host; removed on drop.
#[derive(Debug)]
pub struct CgroupSet {
    /// Interface used.
    pub version: CgroupVersion,
    /// Mount point of the hierarchy.
    pub mount: PathBuf,
    /// The private directory (`<mount>/schedlab-<pid>`).
    pub base: PathBuf,
    /// The process's own cgroup directory (where `/` threads live in v1, and
    /// where the process returns in v2).
    pub home: PathBuf,
    /// Group path → directory, parents first.
    pub dirs: Vec<(String, PathBuf)>,
    /// v1 only: a separately mounted cpuacct hierarchy's mirror of the
    /// groups (private directory, group path → directory), for
    /// `cpuacct.usage`; None when cpuacct is co-mounted with cpu or absent.
    pub acct: Option<AcctMirror>,
    moved_process: bool,
}

impl CgroupSet {
    /// Finds the hierarchy with the cpu controller.
    pub fn detect() -> Result<(CgroupVersion, PathBuf), HostError> {
        let mounts = std::fs::read_to_string("/proc/self/mounts")
            .map_err(|e| HostError::io("/proc/self/mounts", e))?;
        let m = parse_mounts(&mounts);
        choose(&m, |d| {
            std::fs::read_to_string(Path::new(d).join("cgroup.controllers")).ok()
        })
        .map(|(v, d)| (v, PathBuf::from(d)))
        .ok_or_else(|| {
            HostError::NoCgroupCpu(
                "no cgroup2 mount offers cpu and no v1 cpu hierarchy is mounted".into(),
            )
        })
    }

    /// Creates every group of `groups` (parents first) with its settings.
    pub fn create(groups: &[GroupSpec]) -> Result<CgroupSet, HostError> {
        if !crate::sys::is_root() {
            return Err(HostError::NotRoot {
                what: "creating task groups (cgroups)".into(),
            });
        }
        let (version, mount) = Self::detect()?;
        let own = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| HostError::io("/proc/self/cgroup", e))?;
        let home_rel = own_cgroup(&own, version).unwrap_or_else(|| "/".into());
        let home = mount.join(home_rel.trim_start_matches('/'));
        let base = mount.join(format!("schedlab-{}", std::process::id()));
        let mut set = CgroupSet {
            version,
            mount: mount.clone(),
            base: base.clone(),
            home,
            dirs: Vec::new(),
            acct: None,
            moved_process: false,
        };
        if base.exists() {
            // A stale directory of an earlier run of this pid: reuse fails
            // loudly rather than mixing runs.
            return Err(HostError::io(
                &base,
                std::io::Error::new(std::io::ErrorKind::AlreadyExists, "already exists"),
            ));
        }
        std::fs::create_dir(&base).map_err(|e| HostError::io(&base, e))?;
        if version == CgroupVersion::V1 {
            // Under v1 with autogroup, the workload's ungrouped threads run
            // in the session's autogroup, whose weight is its nice's
            // (/proc/self/autogroup); the private directory gets the same
            // weight, so grouped and ungrouped threads meet at the top as
            // they do in the model, where both sit under the root. Nice 0
            // (the default) leaves cpu.shares at 1024.
            if let Some(nice) = autogroup_nice() {
                let w = schedlab_core::fair::weight::task_weight(
                    schedlab_core::program::Policy::Normal,
                    nice,
                );
                if w != 1024 {
                    write(&base.join("cpu.shares"), &w.to_string())?;
                }
            }
        }
        if version == CgroupVersion::V2 {
            // Best effort on the mount root; the check below decides.
            let _ = std::fs::write(mount.join("cgroup.subtree_control"), "+cpu");
            let ctl = std::fs::read_to_string(base.join("cgroup.controllers")).unwrap_or_default();
            if !ctl.split_whitespace().any(|c| c == "cpu") {
                return Err(HostError::NoCgroupCpu(format!(
                    "{}: the cpu controller is not enabled for it",
                    base.display()
                )));
            }
            write(&base.join("cgroup.subtree_control"), "+cpu")?;
        }
        let mut sorted: Vec<&GroupSpec> = groups.iter().collect();
        sorted.sort_by_key(|g| g.path.matches('/').count());
        for g in sorted {
            let dir = base.join(g.path.trim_start_matches('/'));
            std::fs::create_dir(&dir).map_err(|e| HostError::io(&dir, e))?;
            set.dirs.push((g.path.clone(), dir.clone()));
            set.configure(g, &dir)?;
        }
        if version == CgroupVersion::V1 && !base.join("cpuacct.usage").exists() {
            set.acct = Self::acct_mirror(&set.dirs, &own)?;
        }
        if version == CgroupVersion::V2 {
            write(&base.join("cgroup.procs"), &std::process::id().to_string())?;
            set.moved_process = true;
        }
        Ok(set)
    }

    /// Mirrors the groups in a separately mounted v1 cpuacct hierarchy.
    fn acct_mirror(dirs: &[(String, PathBuf)], own: &str) -> Result<Option<AcctMirror>, HostError> {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let Some(m) = parse_mounts(&mounts).into_iter().find(|m| {
            m.fstype == "cgroup"
                && m.opts.split(',').any(|o| o == "cpuacct")
                && !m.opts.split(',').any(|o| o == "cpu")
        }) else {
            return Ok(None);
        };
        let mount = PathBuf::from(&m.dir);
        let home_rel = own
            .lines()
            .find_map(|l| {
                let mut f = l.splitn(3, ':');
                let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
                ctl.split(',')
                    .any(|c| c == "cpuacct")
                    .then(|| path.to_string())
            })
            .unwrap_or_else(|| "/".into());
        let home = mount.join(home_rel.trim_start_matches('/'));
        let base = mount.join(format!("schedlab-{}", std::process::id()));
        std::fs::create_dir(&base).map_err(|e| HostError::io(&base, e))?;
        let mut out = Vec::new();
        for (p, _) in dirs {
            let d = base.join(p.trim_start_matches('/'));
            if let Err(e) = std::fs::create_dir(&d) {
                let _ = std::fs::remove_dir(&base);
                return Err(HostError::io(&d, e));
            }
            out.push((p.clone(), d));
        }
        Ok(Some((base, home, out)))
    }

    fn configure(&self, g: &GroupSpec, dir: &Path) -> Result<(), HostError> {
        let us = |ns: u64| ns / 1000;
        match self.version {
            CgroupVersion::V1 => {
                write(&dir.join("cpu.shares"), &g.shares.to_string())?;
                write(&dir.join("cpu.cfs_period_us"), &us(g.period_ns).to_string())?;
                let quota = g.quota_ns.map_or("-1".to_string(), |q| us(q).to_string());
                write(&dir.join("cpu.cfs_quota_us"), &quota)?;
                if g.burst_ns > 0 {
                    write(&dir.join("cpu.cfs_burst_us"), &us(g.burst_ns).to_string())?;
                }
                if g.idle {
                    write(&dir.join("cpu.idle"), "1")?;
                }
            }
            CgroupVersion::V2 => {
                write(&dir.join("cgroup.type"), "threaded")?;
                write(&dir.join("cgroup.subtree_control"), "+cpu")?;
                write(
                    &dir.join("cpu.weight"),
                    &shares_to_weight(g.shares).to_string(),
                )?;
                let max = match g.quota_ns {
                    Some(q) => format!("{} {}", us(q), us(g.period_ns)),
                    None => format!("max {}", us(g.period_ns)),
                };
                write(&dir.join("cpu.max"), &max)?;
                if g.burst_ns > 0 {
                    write(&dir.join("cpu.max.burst"), &us(g.burst_ns).to_string())?;
                }
                if g.idle {
                    write(&dir.join("cpu.idle"), "1")?;
                }
            }
        }
        Ok(())
    }

    /// The directory of a group path (`/` = where root-group threads live).
    pub fn dir_of(&self, path: &str) -> Option<&Path> {
        if path == "/" || path.is_empty() {
            return Some(match self.version {
                CgroupVersion::V1 => &self.home,
                CgroupVersion::V2 => &self.base,
            });
        }
        self.dirs
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, d)| d.as_path())
    }

    /// Moves thread `tid` into group `path`.
    pub fn move_thread(&self, path: &str, tid: i32) -> Result<(), HostError> {
        let dir = self
            .dir_of(path)
            .ok_or_else(|| HostError::Workload(format!("task group {path} is not defined")))?;
        let file = match self.version {
            CgroupVersion::V1 => "tasks",
            CgroupVersion::V2 => "cgroup.threads",
        };
        write(&dir.join(file), &tid.to_string())?;
        if let Some((_, home, dirs)) = &self.acct {
            let d = if path == "/" || path.is_empty() {
                Some(home.as_path())
            } else {
                dirs.iter()
                    .find(|(p, _)| p == path)
                    .map(|(_, d)| d.as_path())
            };
            if let Some(d) = d {
                write(&d.join("tasks"), &tid.to_string())?;
            }
        }
        Ok(())
    }

    /// `cpu.stat` of every group.
    pub fn stats(&self) -> Vec<(String, PathBuf, BTreeMap<String, u64>)> {
        self.dirs
            .iter()
            .map(|(p, d)| {
                let t = std::fs::read_to_string(d.join("cpu.stat")).unwrap_or_default();
                let mut m = parse_cpu_stat(&t);
                if self.version == CgroupVersion::V1 {
                    // v2's names, derived: throttled_usec, usage_usec.
                    if let Some(&ns) = m.get("throttled_time") {
                        m.insert("throttled_usec".into(), ns / 1000);
                    }
                    let acct = match &self.acct {
                        Some((_, _, dirs)) => {
                            dirs.iter().find(|(q, _)| q == p).map(|(_, a)| a.clone())
                        }
                        None => Some(d.clone()),
                    };
                    let usage = acct
                        .and_then(|a| std::fs::read_to_string(a.join("cpuacct.usage")).ok())
                        .and_then(|u| u.trim().parse::<u64>().ok());
                    if let Some(ns) = usage {
                        m.insert("usage_usec".into(), ns / 1000);
                    }
                }
                (p.clone(), d.clone(), m)
            })
            .collect()
    }

    fn remove(&mut self) {
        if let Some((base, home, dirs)) = self.acct.take() {
            let mut all: Vec<PathBuf> = dirs.into_iter().map(|(_, d)| d).collect();
            all.push(base);
            all.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
            for d in all {
                for attempt in 0..50 {
                    if let Ok(t) = std::fs::read_to_string(d.join("tasks")) {
                        for tid in t.split_whitespace() {
                            let _ = std::fs::write(home.join("tasks"), tid);
                        }
                    }
                    match std::fs::remove_dir(&d) {
                        Ok(()) => break,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                        Err(_) if attempt < 49 => {
                            std::thread::sleep(std::time::Duration::from_millis(10))
                        }
                        Err(e) => eprintln!("schedlab-host: cannot remove {}: {e}", d.display()),
                    }
                }
            }
        }
        if self.moved_process {
            let _ = std::fs::write(
                self.home.join("cgroup.procs"),
                std::process::id().to_string(),
            );
            self.moved_process = false;
        }
        let mut dirs: Vec<PathBuf> = self.dirs.drain(..).map(|(_, d)| d).collect();
        dirs.push(self.base.clone());
        // Deepest first; exited threads can take a moment to leave.
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        for d in dirs {
            for attempt in 0..50 {
                // Stragglers (threads still alive after an error) go home.
                let tasks = d.join(match self.version {
                    CgroupVersion::V1 => "tasks",
                    CgroupVersion::V2 => "cgroup.threads",
                });
                if let Ok(t) = std::fs::read_to_string(&tasks) {
                    let home_file = match self.version {
                        CgroupVersion::V1 => self.home.join("tasks"),
                        CgroupVersion::V2 => self.home.join("cgroup.procs"),
                    };
                    for tid in t.split_whitespace() {
                        let _ = std::fs::write(&home_file, tid);
                    }
                }
                match std::fs::remove_dir(&d) {
                    Ok(()) => break,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                    Err(_) if attempt < 49 => {
                        std::thread::sleep(std::time::Duration::from_millis(10))
                    }
                    Err(e) => eprintln!("schedlab-host: cannot remove {}: {e}", d.display()),
                }
            }
        }
    }
}

impl Drop for CgroupSet {
    fn drop(&mut self) {
        self.remove();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
";

    #[test]
    fn chooses_v1_when_v2_lacks_cpu() {
        let m = parse_mounts(MOUNTS);
        assert_eq!(m.len(), 4);
        let c = choose(&m, |_| Some("memory pids".into()));
        assert_eq!(c, Some((CgroupVersion::V1, "/sys/fs/cgroup/cpu".into())));
        let c = choose(&m, |_| Some("cpuset cpu io".into()));
        assert_eq!(
            c,
            Some((CgroupVersion::V2, "/sys/fs/cgroup/unified".into()))
        );
        assert_eq!(choose(&m[..1], |_| None), None);
        let combined = parse_mounts("cgroup /c cgroup rw,cpu,cpuacct 0 0\n");
        assert_eq!(choose(&combined, |_| None).unwrap().0, CgroupVersion::V1);
    }

    #[test]
    fn cpu_stat_and_own_cgroup() {
        let s = parse_cpu_stat("nr_periods 10\nnr_throttled 4\nthrottled_time 123456\n");
        assert_eq!(s["nr_throttled"], 4);
        assert_eq!(s["throttled_time"], 123456);
        let own = "12:pids:/x\n3:cpu:/user.slice\n0::/init.scope\n";
        assert_eq!(
            own_cgroup(own, CgroupVersion::V1).as_deref(),
            Some("/user.slice")
        );
        assert_eq!(
            own_cgroup(own, CgroupVersion::V2).as_deref(),
            Some("/init.scope")
        );
        let combined = "4:cpu,cpuacct:/\n";
        assert_eq!(
            own_cgroup(combined, CgroupVersion::V1).as_deref(),
            Some("/")
        );
    }

    #[test]
    fn weight_mapping() {
        assert_eq!(shares_to_weight(1024), 100);
        assert_eq!(shares_to_weight(2), 1);
        assert_eq!(shares_to_weight(262_144), 10_000);
        assert_eq!(shares_to_weight(512), 50);
    }
}

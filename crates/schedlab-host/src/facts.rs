//! The host's facts a recording keeps (host.json), with the parsers as pure
//! functions over file contents so they are tested on fixture strings.

use schedlab_core::machine::sysfs::{from_sysfs, parse_cpu_list, parse_cpu_mask, SysfsReader};
use schedlab_core::machine::CpuMask;
use schedlab_output::schedstat::format_cpumask;
use serde::Serialize;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A value and where it came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fact<T> {
    /// The value (None: could not be found).
    pub value: Option<T>,
    /// Where it came from (`config:/proc/config.gz`, `measured:/proc/timer_list`, ...),
    /// or why it is missing.
    pub source: String,
}

/// `uname` fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Kernel {
    /// `uname -s`.
    pub sysname: String,
    /// `uname -r`.
    pub release: String,
    /// `uname -v`.
    pub version: String,
    /// `uname -m`.
    pub machine: String,
    /// `uname -n`.
    pub nodename: String,
}

/// Everything host.json says about the host.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostFacts {
    /// uname.
    pub kernel: Kernel,
    /// CONFIG_HZ.
    pub hz: Fact<u32>,
    /// Preemption model (`none`, `voluntary`, `full`, `lazy`).
    pub preempt: Fact<String>,
    /// /proc/sys/kernel/sched_autogroup_enabled.
    pub autogroup: Option<bool>,
    /// Readable scheduler tunables: path → value (trimmed).
    pub tunables: BTreeMap<String, String>,
    /// /sys/devices/system/cpu/cpuidle/current_driver.
    pub cpuidle_driver: Option<String>,
    /// The kernel command line (`/proc/cmdline`): vendor scheduler options
    /// (this project's guest has `sched_vcpu_pack=15`) show up here.
    #[serde(default)]
    pub cmdline: Option<String>,
    /// /sys/devices/system/cpu/cpuidle/current_governor (or `_ro`).
    pub cpuidle_governor: Option<String>,
    /// /sys/devices/system/cpu/online.
    pub cpus_online: Option<String>,
    /// Files copied under `sysfs/` (relative to /sys), exactly those the
    /// simulator's sysfs importer reads.
    pub sysfs_files: Vec<String>,
    /// Whether the copied tree imports (`schedlab run --machine sysfs:DIR/sysfs`);
    /// the error otherwise.
    pub sysfs_import: String,
    /// When the recording ran restricted to CPUs 0..N-1 (`--cpus N`, or an
    /// inherited affinity), those CPUs: `sysfs/` then describes an N-CPU
    /// machine (see [`restrict_text`]). None: every online CPU.
    #[serde(default)]
    pub cpus_recorded: Option<String>,
}

/// `CONFIG_HZ=` from a kernel config text.
pub fn hz_from_config(text: &str) -> Option<u32> {
    text.lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
}

/// The preemption model a kernel config selects (`CONFIG_PREEMPT_*=y`),
/// and whether it is dynamic (boot parameter may override it).
pub fn preempt_from_config(text: &str) -> Option<(String, bool)> {
    let on = |k: &str| text.lines().any(|l| l.trim() == format!("{k}=y"));
    let model = if on("CONFIG_PREEMPT_NONE") {
        "none"
    } else if on("CONFIG_PREEMPT_VOLUNTARY") {
        "voluntary"
    } else if on("CONFIG_PREEMPT_LAZY") {
        "lazy"
    } else if on("CONFIG_PREEMPT") || on("CONFIG_PREEMPT_RT") {
        "full"
    } else {
        return None;
    };
    Some((model.to_string(), on("CONFIG_PREEMPT_DYNAMIC")))
}

/// `now at N nsecs` and the first `jiffies: N` of /proc/timer_list.
pub fn parse_timer_list(text: &str) -> Option<(u64, u64)> {
    let now = text.lines().find_map(|l| {
        l.strip_prefix("now at ")?
            .strip_suffix(" nsecs")?
            .trim()
            .parse()
            .ok()
    })?;
    let jiffies = text
        .lines()
        .find_map(|l| l.strip_prefix("jiffies: ")?.trim().parse().ok())?;
    Some((now, jiffies))
}

/// HZ from two (ns, jiffies) samples, snapped to the nearest usual value
/// (100, 250, 300, 1000) when within 5%, else rounded.
pub fn hz_from_samples(a: (u64, u64), b: (u64, u64)) -> Option<u32> {
    let dt = b.0.checked_sub(a.0)? as f64 / 1e9;
    let dj = b.1.checked_sub(a.1)? as f64;
    if dt <= 0.0 || dj <= 0.0 {
        return None;
    }
    let hz = dj / dt;
    for c in [100.0, 250.0, 300.0, 1000.0] {
        if ((hz - c) / c).abs() < 0.05 {
            return Some(c as u32);
        }
    }
    Some(hz.round() as u32)
}

/// The current model of /sys/kernel/debug/sched/preempt
/// (`none (voluntary) full lazy`: the one in parentheses).
pub fn preempt_from_debugfs(text: &str) -> Option<String> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('(')?.strip_suffix(')').map(str::to_string))
}

/// `Dynamic Preempt: X` from kernel log text.
pub fn preempt_from_dmesg(text: &str) -> Option<String> {
    text.lines().rev().find_map(|l| {
        let i = l.find("Dynamic Preempt: ")?;
        l[i + "Dynamic Preempt: ".len()..]
            .split_whitespace()
            .next()
            .map(str::to_string)
    })
}

/// What `uname -v` says about preemption (`PREEMPT_DYNAMIC`,
/// `PREEMPT_RT`, `PREEMPT`), as a hint only.
pub fn preempt_from_uname(version: &str) -> Option<String> {
    let words: Vec<&str> = version.split_whitespace().collect();
    if words.contains(&"PREEMPT_RT") {
        Some("full (PREEMPT_RT)".into())
    } else if words.contains(&"PREEMPT_DYNAMIC") {
        Some("dynamic (model not shown by uname)".into())
    } else if words.contains(&"PREEMPT") {
        Some("full".into())
    } else {
        None
    }
}

fn read_trim(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// `uname()`.
pub fn uname() -> Kernel {
    // SAFETY: utsname is plain data and uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return Kernel::default();
    }
    let s = |f: &[libc::c_char]| {
        let b: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&b).into_owned()
    };
    Kernel {
        sysname: s(&u.sysname),
        release: s(&u.release),
        version: s(&u.version),
        machine: s(&u.machine),
        nodename: s(&u.nodename),
    }
}

/// The kernel config text and where it was read, if readable.
pub fn kernel_config(release: &str) -> Option<(String, String)> {
    let boot = format!("/boot/config-{release}");
    if let Ok(t) = std::fs::read_to_string(&boot) {
        return Some((t, boot));
    }
    let out = std::process::Command::new("gzip")
        .args(["-dc", "/proc/config.gz"])
        .output()
        .ok()?;
    if out.status.success() && !out.stdout.is_empty() {
        return Some((
            String::from_utf8_lossy(&out.stdout).into_owned(),
            "/proc/config.gz".into(),
        ));
    }
    None
}

/// HZ: from the config, else measured from jiffies in /proc/timer_list
/// over `sample_ms`.
pub fn hz(config: Option<&(String, String)>, sample_ms: u64) -> Fact<u32> {
    if let Some((text, src)) = config {
        if let Some(h) = hz_from_config(text) {
            return Fact {
                value: Some(h),
                source: format!("config:{src}"),
            };
        }
    }
    let sample = || parse_timer_list(&std::fs::read_to_string("/proc/timer_list").ok()?);
    let a = sample();
    std::thread::sleep(std::time::Duration::from_millis(sample_ms));
    let b = sample();
    match (a, b) {
        (Some(a), Some(b)) => Fact {
            value: hz_from_samples(a, b),
            source: format!("measured:/proc/timer_list jiffies over {sample_ms} ms"),
        },
        _ => Fact {
            value: None,
            source: "no readable config and /proc/timer_list unreadable".into(),
        },
    }
}

/// The kernel log (klogctl READ_ALL).
fn kernel_log() -> Option<String> {
    // SAFETY: size query, then a read into a buffer of that size.
    let size = unsafe { libc::klogctl(10, std::ptr::null_mut(), 0) };
    if size <= 0 {
        return None;
    }
    let mut buf = vec![0u8; size as usize];
    let n = unsafe { libc::klogctl(3, buf.as_mut_ptr().cast(), size) };
    if n <= 0 {
        return None;
    }
    buf.truncate(n as usize);
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// The preemption model, from the best source that answers.
pub fn preempt(config: Option<&(String, String)>, version: &str) -> Fact<String> {
    let dbg = "/sys/kernel/debug/sched/preempt";
    if let Some(m) = read_trim(dbg).as_deref().and_then(preempt_from_debugfs) {
        return Fact {
            value: Some(m),
            source: dbg.into(),
        };
    }
    if let Some(m) = kernel_log().as_deref().and_then(preempt_from_dmesg) {
        return Fact {
            value: Some(m),
            source: "dmesg:Dynamic Preempt".into(),
        };
    }
    if let Some((m, dynamic)) = config.and_then(|(t, _)| preempt_from_config(t)) {
        let src = config.map(|c| c.1.clone()).unwrap_or_default();
        return Fact {
            value: Some(m),
            source: if dynamic {
                format!("config:{src} (PREEMPT_DYNAMIC: the build default; a boot parameter may differ)")
            } else {
                format!("config:{src}")
            },
        };
    }
    Fact {
        value: preempt_from_uname(version),
        source: "uname -v".into(),
    }
}

/// Readable scheduler tunables: /proc/sys/kernel/sched_* and the regular
/// files of /sys/kernel/debug/sched (its big `debug` dump excepted).
pub fn tunables() -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let mut scan = |dir: &str, filter: &dyn Fn(&str) -> bool| {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !filter(&name) || !e.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            if let Some(v) = read_trim(e.path()) {
                if v.len() <= 4096 {
                    m.insert(format!("{dir}/{name}"), v);
                }
            }
        }
    };
    scan("/proc/sys/kernel", &|n| n.starts_with("sched_"));
    scan("/sys/kernel/debug/sched", &|n| n != "debug");
    m
}

/// The kernel's list format for increasing CPU numbers (`0-3,8`):
/// [`CpuMask::to_list`].
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let nr = cpus.iter().max().map_or(0, |&c| c as usize + 1);
    CpuMask::from_cpus(nr, cpus)
        .expect("every CPU is below the mask's size")
        .to_list()
}

/// The kernel's mask format (32-bit hex chunks, most significant first),
/// whole chunks: [`format_cpumask`] of a bitmap rounded up to 32 bits.
fn format_cpu_mask(cpus: &[u32]) -> String {
    let chunks = cpus.iter().max().map_or(1, |&c| c as usize / 32 + 1);
    format_cpumask(cpus, chunks * 32)
}

/// A /sys file's text as seen by a recording restricted to CPUs 0..n-1:
/// CPU lists (`cpu/online`, `*_list`, a node's `cpulist`) and masks
/// (`*_map`) lose the CPUs >= n; other files are unchanged. The simulator
/// then imports an n-CPU machine with the host's caches, nodes and idle
/// states. Text that does not parse is kept as it is (the importer
/// reports it).
pub fn restrict_text(rel: &str, text: &str, n: u32) -> String {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let is_list =
        rel == "devices/system/cpu/online" || name.ends_with("_list") || name == "cpulist";
    if is_list {
        if let Ok(v) = parse_cpu_list(text) {
            let kept: Vec<u32> = v.into_iter().filter(|&c| c < n).collect();
            return format_cpu_list(&kept) + "\n";
        }
    } else if name.ends_with("_map") {
        if let Ok(v) = parse_cpu_mask(text) {
            let kept: Vec<u32> = v.into_iter().filter(|&c| c < n).collect();
            return format_cpu_mask(&kept) + "\n";
        }
    }
    text.to_string()
}

/// A /sys directory listing as seen by a recording restricted to CPUs
/// 0..n-1: `devices/system/cpu` loses its `cpuK` entries for K >= n.
pub fn restrict_listing(rel: &str, names: Vec<String>, n: u32) -> Vec<String> {
    if rel.trim_end_matches('/') != "devices/system/cpu" {
        return names;
    }
    names
        .into_iter()
        .filter(|e| {
            e.strip_prefix("cpu")
                .and_then(|k| k.parse::<u32>().ok())
                .is_none_or(|k| k < n)
        })
        .collect()
}

/// The prefix of CPUs the calling process is restricted to, if any:
/// `Ok(None)` when it may run on every online CPU, `Ok(Some(n))` when on
/// exactly CPUs 0..n-1, an error for any other set (a recording describes
/// its CPUs as a machine numbered from 0).
pub fn affinity_prefix(allowed: &[u32], online: &[u32]) -> Result<Option<u32>, String> {
    if allowed == online {
        return Ok(None);
    }
    let n = allowed.len() as u32;
    if n > 0 && allowed.iter().copied().eq(0..n) && allowed.iter().all(|c| online.contains(c)) {
        return Ok(Some(n));
    }
    Err(format!(
        "the process may run on CPUs {} of online {}: a restricted recording must run on CPUs 0..N-1 (--cpus N)",
        format_cpu_list(allowed),
        format_cpu_list(online)
    ))
}

/// A [`SysfsReader`] over a directory that remembers what it was asked
/// (restricted to CPUs 0..n-1 when `cpus` is set: [`restrict_text`]).
pub struct Recorder {
    root: PathBuf,
    /// Show only CPUs 0..n-1.
    pub cpus: Option<u32>,
    /// Files read (relative path → content).
    pub files: RefCell<BTreeMap<String, String>>,
    /// Directories listed.
    pub dirs: RefCell<Vec<String>>,
}

impl Recorder {
    /// Over `root` (e.g. `/sys`).
    pub fn new(root: impl Into<PathBuf>) -> Recorder {
        Recorder {
            root: root.into(),
            cpus: None,
            files: RefCell::default(),
            dirs: RefCell::default(),
        }
    }
}

impl SysfsReader for Recorder {
    fn read(&self, rel: &str) -> Option<String> {
        let t = std::fs::read_to_string(self.root.join(rel)).ok()?;
        let t = match self.cpus {
            Some(n) => restrict_text(rel, &t, n),
            None => t,
        };
        self.files.borrow_mut().insert(rel.to_string(), t.clone());
        Some(t)
    }
    fn list(&self, rel: &str) -> Option<Vec<String>> {
        let mut v: Vec<String> = std::fs::read_dir(self.root.join(rel))
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        v.sort();
        if let Some(n) = self.cpus {
            v = restrict_listing(rel, v, n);
        }
        self.dirs.borrow_mut().push(rel.to_string());
        Some(v)
    }
}

/// Copies into `dest` exactly the files of `root` (a /sys) that the
/// simulator's sysfs importer reads; directories it lists are created even
/// when empty. Returns the files copied and the import's outcome.
pub fn copy_sysfs(
    root: &Path,
    dest: &Path,
    cpus: Option<u32>,
) -> std::io::Result<(Vec<String>, String)> {
    let mut rec = Recorder::new(root);
    rec.cpus = cpus;
    let outcome = match from_sysfs(&root.to_string_lossy(), &rec) {
        Ok(m) => format!("ok: {} CPUs", m.nr_cpus()),
        Err(e) => format!("error: {e}"),
    };
    for d in rec.dirs.borrow().iter() {
        std::fs::create_dir_all(dest.join(d))?;
    }
    let files = rec.files.borrow();
    for (rel, text) in files.iter() {
        let p = dest.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, text)?;
    }
    Ok((files.keys().cloned().collect(), outcome))
}

/// Collects every fact; `sysfs_dest` receives the topology copy, of CPUs
/// 0..n-1 only when `cpus` is `Some(n)` ([`affinity_prefix`]).
pub fn collect(sysfs_dest: &Path, cpus: Option<u32>) -> std::io::Result<HostFacts> {
    let kernel = uname();
    let config = kernel_config(&kernel.release);
    let hz = hz(config.as_ref(), 200);
    let preempt = preempt(config.as_ref(), &kernel.version);
    let (sysfs_files, sysfs_import) = copy_sysfs(Path::new("/sys"), sysfs_dest, cpus)?;
    let cpuidle = "/sys/devices/system/cpu/cpuidle";
    Ok(HostFacts {
        hz,
        preempt,
        autogroup: read_trim("/proc/sys/kernel/sched_autogroup_enabled").map(|v| v == "1"),
        tunables: tunables(),
        cpuidle_driver: read_trim(format!("{cpuidle}/current_driver")),
        cmdline: read_trim("/proc/cmdline"),
        cpuidle_governor: read_trim(format!("{cpuidle}/current_governor"))
            .or_else(|| read_trim(format!("{cpuidle}/current_governor_ro"))),
        cpus_online: read_trim("/sys/devices/system/cpu/online"),
        sysfs_files,
        sysfs_import,
        cpus_recorded: cpus.map(|n| format_cpu_list(&(0..n).collect::<Vec<_>>())),
        kernel,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restricted_recordings_keep_cpus_below_n() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(
            restrict_text("devices/system/cpu/online", "0-3\n", 1),
            "0\n"
        );
        assert_eq!(
            restrict_text(
                "devices/system/cpu/cpu0/cache/index3/shared_cpu_list",
                "0-1\n",
                1
            ),
            "0\n"
        );
        assert_eq!(
            restrict_text("devices/system/node/node1/cpulist", "4-7\n", 4),
            "\n"
        );
        assert_eq!(
            restrict_text("devices/system/cpu/cpu0/topology/core_cpus_list", "0,40", 2),
            "0\n"
        );
        assert_eq!(
            restrict_text(
                "devices/system/cpu/cpu0/cache/index3/shared_cpu_map",
                "00000000,000000ff\n",
                3
            ),
            "00000007\n"
        );
        // Not a CPU list: unchanged, as is a list that does not parse.
        assert_eq!(
            restrict_text("devices/system/cpu/cpu0/cache/index3/level", "3\n", 1),
            "3\n"
        );
        assert_eq!(restrict_text("devices/system/cpu/online", "zz", 1), "zz");
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            restrict_listing(
                "devices/system/cpu",
                names(&["cpu0", "cpu1", "cpu10", "cpufreq", "online"]),
                2
            ),
            names(&["cpu0", "cpu1", "cpufreq", "online"])
        );
        assert_eq!(
            restrict_listing("devices/system/node", names(&["node0", "node1"]), 1),
            names(&["node0", "node1"])
        );
    }

    #[test]
    fn affinity_must_be_every_cpu_or_a_prefix() {
        assert_eq!(affinity_prefix(&[0, 1], &[0, 1]), Ok(None));
        assert_eq!(affinity_prefix(&[0], &[0, 1]), Ok(Some(1)));
        assert_eq!(affinity_prefix(&[0, 1, 2], &[0, 1, 2, 3]), Ok(Some(3)));
        let e = affinity_prefix(&[1], &[0, 1]).unwrap_err();
        assert!(e.contains("CPUs 1 of online 0-1"), "{e}");
        assert!(affinity_prefix(&[0, 2], &[0, 1, 2]).is_err());
        assert!(affinity_prefix(&[], &[0, 1]).is_err());
    }

    #[test]
    fn a_restricted_copy_imports_as_the_smaller_machine() {
        let root = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| {
            let p = root.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w("devices/system/cpu/online", "0-3\n");
        for c in 0..4 {
            let d = format!("devices/system/cpu/cpu{c}");
            w(&format!("{d}/topology/core_cpus_list"), &format!("{c}\n"));
            w(&format!("{d}/topology/physical_package_id"), "0\n");
            w(&format!("{d}/cache/index3/level"), "3\n");
            w(&format!("{d}/cache/index3/type"), "Unified\n");
            w(&format!("{d}/cache/index3/shared_cpu_list"), "0-3\n");
        }
        w("devices/system/node/online", "0\n");
        w("devices/system/node/node0/cpulist", "0-3\n");
        w("devices/system/node/node0/distance", "10\n");
        let dest = tempfile::tempdir().unwrap();
        let (files, outcome) = copy_sysfs(root.path(), dest.path(), Some(2)).unwrap();
        assert_eq!(outcome, "ok: 2 CPUs");
        assert!(
            files
                .iter()
                .all(|f| !f.contains("cpu2") && !f.contains("cpu3")),
            "{files:?}"
        );
        let text = std::fs::read_to_string(
            dest.path()
                .join("devices/system/cpu/cpu0/cache/index3/shared_cpu_list"),
        )
        .unwrap();
        assert_eq!(text, "0-1\n");
        let (_, whole) =
            copy_sysfs(root.path(), tempfile::tempdir().unwrap().path(), None).unwrap();
        assert_eq!(whole, "ok: 4 CPUs");
    }

    #[test]
    fn config_parsers() {
        let cfg = "# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_DYNAMIC=y\n";
        assert_eq!(hz_from_config(cfg), Some(250));
        assert_eq!(preempt_from_config(cfg), Some(("none".into(), true)));
        assert_eq!(
            preempt_from_config("CONFIG_PREEMPT=y\n"),
            Some(("full".into(), false))
        );
        assert_eq!(hz_from_config("CONFIG_HZ_1000=y\n"), None);
    }

    #[test]
    fn timer_list_and_measured_hz() {
        let t = "Timer List Version: v0.10\nHRTIMER_MAX_CLOCK_BASES: 8\nnow at 890571405989 nsecs\n\ncpu: 0\n  .last_jiffies   : 4295039080\njiffies: 4295039678\n";
        assert_eq!(parse_timer_list(t), Some((890_571_405_989, 4_295_039_678)));
        assert_eq!(hz_from_samples((0, 1000), (200_000_000, 1050)), Some(250));
        assert_eq!(hz_from_samples((0, 1000), (200_000_000, 1201)), Some(1000));
        assert_eq!(hz_from_samples((0, 0), (1_000_000_000, 123)), Some(123));
        assert_eq!(hz_from_samples((5, 0), (5, 10)), None);
    }

    #[test]
    fn preempt_parsers() {
        assert_eq!(
            preempt_from_debugfs("none (voluntary) full lazy\n").as_deref(),
            Some("voluntary")
        );
        assert_eq!(preempt_from_debugfs("full"), None);
        let log = "<6>[    0.217883] Dynamic Preempt: none\n<6>[    0.3] other\n";
        assert_eq!(preempt_from_dmesg(log).as_deref(), Some("none"));
        assert_eq!(
            preempt_from_uname("#1 SMP PREEMPT_DYNAMIC @0").as_deref(),
            Some("dynamic (model not shown by uname)")
        );
        assert_eq!(preempt_from_uname("#1 SMP").as_deref(), None);
    }
}

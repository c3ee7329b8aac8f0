//! Import of a sysfs-style topology tree (a live `/sys` or a captured copy).
//!
//! ```text
//!  root ─┬─ devices/system/ ─┬─ cpu/  online, cpuN/{topology,cache,cpuidle,cpu_capacity}
//!        │   (root = /sys)   └─ node/ online, nodeN/{cpulist,distance}
//!        └─ cpu/, node/ directly (root = /sys/devices/system)
//! ```
//!
//! Algorithm:
//! 1. Find the layout: `ROOT/devices/system/cpu` or `ROOT/cpu`.
//! 2. Online CPUs from `cpu/online`, else every `cpuN` directory whose
//!    `cpuN/online` is not `0`. They must be exactly `0..n-1`: the simulator
//!    uses dense CPU ids, and renumbering CPUs would silently change SMT
//!    sibling and node patterns, so a tree with offline CPUs is an error.
//! 3. Per CPU: `topology/physical_package_id`, `topology/core_cpus_list`
//!    (or the old `thread_siblings_list`), `topology/cluster_cpus_list` if
//!    present, the LLC from `cache/index*/` (highest `level` whose `type` is
//!    `Data` or `Unified`; its `shared_cpu_list`), `cpu_capacity` if present.
//! 4. Nodes from `node/online` (or the `nodeN` directories), each node's
//!    `cpulist` and `distance` row (columns are the online nodes in
//!    increasing order). No `node` directory means one node, distance 10.
//! 5. Idle states from the first CPU's `cpuidle/stateK/{name,latency,residency}`
//!    (µs), skipping states whose `disable` is 1; without `cpuidle`, the
//!    [`default_idle_states`] guess. Under the haltpoll governor
//!    (`cpu/cpuidle/current_governor`, or `current_governor_ro`) with
//!    `module/haltpoll/parameters/guest_halt_poll_ns` 0 (read only from a
//!    `/sys` root), the polling state is dropped: that governor never polls
//!    then (`Importer::haltpoll_never_polls`).
//! 6. Every level is renumbered to dense machine-wide ids in order of its
//!    first CPU, after checking that all CPUs of a span report the same span.
//!    [`Machine::new`] then checks the nesting.
//!
//! Deviations from what the kernel builds, chosen on purpose:
//! * The LLC span is narrowed to the CPU's node and package, as the kernel
//!   narrows its MC level (x86 refuses LLC sharing across SNC nodes; arm64
//!   clips the core group to the node). Without cache information the LLC
//!   is the package ∩ node, the kernel's fallback.
//! * A cluster span that is not inside the LLC (some arm64 firmware reports
//!   the whole package) is ignored for every CPU, like the kernel dropping
//!   a cluster level that is not below MC.
//! * Memory-only nodes (no online CPU) are dropped with their matrix rows.
//! * `die_id`, `book_id` and `drawer_id` are not read.
//! * Costs: see [`imported_costs`] — a documented guess by size.
//!
//! The library does no I/O: the caller supplies a [`SysfsReader`] (the CLI
//! implements one over `std::fs`; tests use [`MemReader`] or a directory).

use super::presets::{default_costs, default_idle_states};
use super::{CpuMask, CpuTopo, IdleState, Machine, MachineCosts, MachineError};
use crate::ids::CpuId;
use crate::time::NSEC_PER_USEC;
use std::collections::BTreeMap;

/// Reads a sysfs-style tree. Paths are relative to the `root` given to
/// [`from_sysfs`] and use `/` separators, e.g. `devices/system/cpu/online`.
pub trait SysfsReader {
    /// The whole content of a file, or `None` if it is missing or unreadable.
    fn read(&self, rel_path: &str) -> Option<String>;
    /// The entry names of a directory (any order), or `None` if it is
    /// missing. `""` is the root itself.
    fn list(&self, rel_dir: &str) -> Option<Vec<String>>;
    /// Why [`read`](Self::read) gave `None` for `rel_path`, when the file is
    /// there but unusable (`"not UTF-8 text"`, `"cannot read: ..."`);
    /// `None` means the file is missing. The default knows no better.
    fn why_unreadable(&self, _rel_path: &str) -> Option<String> {
        None
    }
}

/// An in-memory tree: file path → content; directories are implied by the
/// paths. For tests and for trees captured into one file.
#[derive(Clone, Debug, Default)]
pub struct MemReader {
    /// File contents by path relative to the root (`devices/system/cpu/online`).
    pub files: BTreeMap<String, String>,
}

impl MemReader {
    /// An empty tree.
    pub fn new() -> MemReader {
        MemReader::default()
    }
    /// Adds (or replaces) a file.
    pub fn insert(&mut self, path: &str, content: &str) -> &mut MemReader {
        self.files.insert(path.to_string(), content.to_string());
        self
    }
}

/// A reader over a real directory (a copy of `/sys/devices/system/cpu`):
/// what the CLI reads `--machine sysfs:DIR` with.
pub struct DirReader(pub std::path::PathBuf);

impl SysfsReader for DirReader {
    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(rel)).ok()
    }
    fn list(&self, rel: &str) -> Option<Vec<String>> {
        let mut v: Vec<String> = std::fs::read_dir(self.0.join(rel))
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        v.sort();
        Some(v)
    }
    fn why_unreadable(&self, rel: &str) -> Option<String> {
        match std::fs::read(self.0.join(rel)) {
            Ok(b) if std::str::from_utf8(&b).is_err() => Some("not UTF-8 text".into()),
            Ok(_) => None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => Some(format!("cannot read: {e}")),
        }
    }
}

impl SysfsReader for MemReader {
    fn read(&self, rel_path: &str) -> Option<String> {
        self.files.get(rel_path).cloned()
    }
    fn list(&self, rel_dir: &str) -> Option<Vec<String>> {
        let prefix = if rel_dir.is_empty() {
            String::new()
        } else {
            format!("{}/", rel_dir.trim_end_matches('/'))
        };
        let mut names: Vec<String> = self
            .files
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter_map(|(k, _)| k[prefix.len()..].split('/').next().map(str::to_string))
            .collect();
        names.dedup();
        if names.is_empty() {
            None
        } else {
            Some(names)
        }
    }
}

/// Largest CPU number a list or mask may name (far above any real
/// `nr_cpu_ids`; stops `0-4000000000` from allocating gigabytes).
const MAX_CPU_NUMBER: u32 = 1 << 20;

/// Largest idle-state exit latency or target residency accepted (µs): 1 s,
/// far above any real state (the deepest package states take a few ms).
/// Larger values are refused at import: ×1000 to ns would overflow, and
/// an idle exit ending after the run is over breaks the model's clock.
pub const MAX_IDLE_US: u64 = 1_000_000;

/// Parses the kernel's list format (`0-3,8-11`, `0,64`, empty for none)
/// into increasing, de-duplicated CPU numbers. A trailing newline is fine.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, String> {
    let t = text.trim();
    let mut out = Vec::new();
    if t.is_empty() {
        return Ok(out);
    }
    let num = |s: &str| -> Result<u32, String> {
        let v: u32 = s
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a CPU number"))?;
        if v >= MAX_CPU_NUMBER {
            return Err(format!("CPU number {v} is too large"));
        }
        Ok(v)
    };
    for item in t.split(',') {
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("range '{item}' goes backwards"));
                }
                out.extend(a..=b);
            }
            None => out.push(num(item)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Parses the kernel's mask format: hex in 32-bit chunks separated by
/// commas, most significant first (`0f`, `00000000,00000303`). A `0x`
/// prefix on a chunk (hwloc style) is accepted. Returns the CPUs set, in
/// increasing order.
pub fn parse_cpu_mask(text: &str) -> Result<Vec<u32>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty mask".into());
    }
    let chunks: Vec<&str> = t.split(',').collect();
    if chunks.len() as u64 * 32 > MAX_CPU_NUMBER as u64 {
        return Err("mask is too long".into());
    }
    let mut out = Vec::new();
    for (k, chunk) in chunks.iter().rev().enumerate() {
        let c = chunk.trim();
        let c = c
            .strip_prefix("0x")
            .or_else(|| c.strip_prefix("0X"))
            .unwrap_or(c);
        if c.is_empty() || c.len() > 8 {
            return Err(format!("'{chunk}' is not a 32-bit hex chunk"));
        }
        let w = u32::from_str_radix(c, 16).map_err(|_| format!("'{chunk}' is not hex"))?;
        for b in 0..32 {
            if w & (1 << b) != 0 {
                out.push(k as u32 * 32 + b);
            }
        }
    }
    Ok(out)
}

/// Costs given to an imported machine. There is no way to measure them
/// from sysfs, so this is a guess by size: machines of up to 16 CPUs on one
/// package are taken to be desktops/laptops (faster context switches,
/// smaller caches: 1.5 µs switch, 1 µs wakeup, 1.5 µs IPI; 40 ns within the
/// LLC); anything bigger gets [`default_costs`], a generic x86 server.
pub fn imported_costs(nr_cpus: usize, nr_packages: usize) -> MachineCosts {
    if nr_cpus <= 16 && nr_packages == 1 {
        MachineCosts {
            line_transfer_ns: [5, 10, 30, 40, 80, 80, 150],
            context_switch_ns: 1_500,
            wakeup_ns: 1_000,
            ipi_latency_ns: 1_500,
            ipi_send_ns: 0,
            syscall_scale: [1_500, super::REFERENCE_SWITCH_NS],
            channel_ns: None,
            channel_xcpu_ns: None,
            wakeup_xcpu_ns: None,
            switch_xcpu_ns: None,
            chan_sleep_ns: None,
        }
    } else {
        default_costs()
    }
}

/// Imports a sysfs tree. `root` is either a directory containing
/// `devices/system/cpu` (e.g. `/sys`) or one containing `cpu/` and `node/`
/// directly (e.g. `/sys/devices/system`); it is used for the machine's name
/// and in error messages, and `fs` reads paths relative to it.
///
/// Errors are one line naming the file and the problem.
pub fn from_sysfs(root: &str, fs: &dyn SysfsReader) -> Result<Machine, MachineError> {
    let base = if fs.list("devices/system/cpu").is_some() {
        "devices/system/"
    } else if fs.list("cpu").is_some() {
        ""
    } else {
        return Err(MachineError::Invalid(format!(
            "{root}: no devices/system/cpu or cpu directory (give /sys or /sys/devices/system)"
        )));
    };
    Importer { root, fs, base }.run()
}

struct Importer<'a> {
    root: &'a str,
    fs: &'a dyn SysfsReader,
    base: &'static str,
}

/// Is `name` `prefix` followed by a decimal number? Returns the number.
fn numbered(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

impl Importer<'_> {
    fn shown(&self, rel: &str) -> String {
        format!("{}/{}{}", self.root.trim_end_matches('/'), self.base, rel)
    }
    fn err(&self, rel: &str, msg: impl AsRef<str>) -> MachineError {
        MachineError::Invalid(format!("{}: {}", self.shown(rel), msg.as_ref()))
    }
    /// An optional file: `None` if missing; an error if it is there but
    /// unusable (not UTF-8, unreadable), which is not the same as missing.
    fn read_opt(&self, rel: &str) -> Result<Option<String>, MachineError> {
        let path = format!("{}{}", self.base, rel);
        match self.fs.read(&path) {
            Some(s) => Ok(Some(s.trim().to_string())),
            None => match self.fs.why_unreadable(&path) {
                Some(why) => Err(self.err(rel, why)),
                None => Ok(None),
            },
        }
    }
    fn read(&self, rel: &str) -> Result<String, MachineError> {
        self.read_opt(rel)?
            .ok_or_else(|| self.err(rel, "missing file"))
    }
    fn list(&self, rel: &str) -> Option<Vec<String>> {
        self.fs.list(&format!("{}{}", self.base, rel))
    }
    fn parse_list(&self, rel: &str, text: &str) -> Result<Vec<u32>, MachineError> {
        parse_cpu_list(text).map_err(|e| self.err(rel, format!("unparsable list '{text}': {e}")))
    }
    fn read_num<T: std::str::FromStr>(&self, rel: &str) -> Result<T, MachineError> {
        let s = self.read(rel)?;
        s.parse()
            .map_err(|_| self.err(rel, format!("'{s}' is not a number")))
    }
    /// A CPU list file as a mask over the `n` online CPUs (offline CPUs named
    /// in the list are dropped); it must contain `cpu` itself.
    fn span(&self, rel: &str, text: &str, n: usize, cpu: usize) -> Result<CpuMask, MachineError> {
        let mut m = CpuMask::new(n);
        for c in self.parse_list(rel, text)? {
            if (c as usize) < n {
                m.set(CpuId(c));
            }
        }
        if !m.test(CpuId(cpu as u32)) {
            return Err(self.err(rel, format!("'{text}' does not include CPU {cpu} itself")));
        }
        Ok(m)
    }

    fn online_cpus(&self) -> Result<Vec<u32>, MachineError> {
        if let Some(text) = self.read_opt("cpu/online")? {
            return self.parse_list("cpu/online", &text);
        }
        let mut cpus: Vec<u32> = Vec::new();
        for c in self
            .list("cpu")
            .unwrap_or_default()
            .iter()
            .filter_map(|n| numbered(n, "cpu"))
        {
            if self.read_opt(&format!("cpu/cpu{c}/online"))?.as_deref() != Some("0") {
                cpus.push(c);
            }
        }
        cpus.sort_unstable();
        Ok(cpus)
    }

    /// The LLC list of one CPU: `shared_cpu_list` of the highest-level data
    /// or unified cache, with the file it came from. `None` without caches.
    fn llc_list(&self, cpu: usize) -> Result<Option<(String, String)>, MachineError> {
        let dir = format!("cpu/cpu{cpu}/cache");
        let Some(mut entries) = self.list(&dir) else {
            return Ok(None);
        };
        entries.sort_by_key(|e| numbered(e, "index").unwrap_or(u32::MAX));
        let mut best: Option<(u32, String)> = None;
        for e in entries.iter().filter(|e| numbered(e, "index").is_some()) {
            let ty = self.read(&format!("{dir}/{e}/type"))?;
            if ty == "Instruction" {
                continue;
            }
            let level: u32 = self.read_num(&format!("{dir}/{e}/level"))?;
            if !matches!(&best, Some((l, _)) if level <= *l) {
                best = Some((level, e.clone()));
            }
        }
        match best {
            None => Ok(None),
            Some((_, e)) => {
                let rel = format!("{dir}/{e}/shared_cpu_list");
                let text = self.read(&rel)?;
                Ok(Some((rel, text)))
            }
        }
    }

    /// Raw node id of every CPU and the distance matrix over the nodes that
    /// have CPUs, indexed by raw id order.
    #[allow(clippy::type_complexity)]
    fn nodes(&self, n: usize) -> Result<(Vec<u32>, BTreeMap<u32, Vec<u32>>), MachineError> {
        let Some(entries) = self.list("node") else {
            return Ok((vec![0; n], BTreeMap::from([(0, vec![10])])));
        };
        let ids: Vec<u32> = match self.read_opt("node/online")? {
            Some(text) => self.parse_list("node/online", &text)?,
            None => {
                let mut v: Vec<u32> = entries.iter().filter_map(|e| numbered(e, "node")).collect();
                v.sort_unstable();
                v
            }
        };
        if ids.is_empty() {
            return Ok((vec![0; n], BTreeMap::from([(0, vec![10])])));
        }
        let mut of_cpu: Vec<Option<u32>> = vec![None; n];
        let mut rows = BTreeMap::new();
        for &id in &ids {
            let rel = format!("node/node{id}/cpulist");
            let text = self.read(&rel)?;
            let cpus = self.parse_list(&rel, &text)?;
            let mut has_cpu = false;
            for c in cpus.into_iter().filter(|&c| (c as usize) < n) {
                if let Some(other) = of_cpu[c as usize] {
                    return Err(self.err(&rel, format!("CPU {c} is also in node {other}")));
                }
                of_cpu[c as usize] = Some(id);
                has_cpu = true;
            }
            if !has_cpu {
                continue; // memory-only node: not modelled
            }
            let rel = format!("node/node{id}/distance");
            let text = self.read(&rel)?;
            let row: Vec<u32> = text
                .split_whitespace()
                .map(|d| d.parse::<u32>())
                .collect::<Result<_, _>>()
                .map_err(|_| self.err(&rel, format!("'{text}' is not a list of distances")))?;
            if row.len() != ids.len() {
                return Err(self.err(
                    &rel,
                    format!("{} distances for {} online nodes", row.len(), ids.len()),
                ));
            }
            rows.insert(id, row);
        }
        let mut out = Vec::with_capacity(n);
        for (c, node) in of_cpu.into_iter().enumerate() {
            match node {
                Some(id) => out.push(id),
                None => return Err(self.err("node", format!("CPU {c} is in no node's cpulist"))),
            }
        }
        // Keep only the columns of nodes with CPUs, in raw id order.
        let keep: Vec<usize> = ids
            .iter()
            .enumerate()
            .filter(|(_, id)| rows.contains_key(id))
            .map(|(k, _)| k)
            .collect();
        let rows = rows
            .into_iter()
            .map(|(id, r)| (id, keep.iter().map(|&k| r[k]).collect()))
            .collect();
        Ok((out, rows))
    }

    /// Dense ids, in order of first CPU, for per-CPU spans that must
    /// partition the CPUs. `file(cpu)` names the file a span came from.
    fn assign(
        &self,
        spans: &[CpuMask],
        file: &dyn Fn(usize) -> String,
    ) -> Result<Vec<u32>, MachineError> {
        let n = spans.len();
        let mut ids = vec![u32::MAX; n];
        let mut next = 0;
        for i in 0..n {
            if ids[i] != u32::MAX {
                continue;
            }
            for j in spans[i].iter() {
                if spans[j.idx()] != spans[i] {
                    return Err(self.err(
                        &file(j.idx()),
                        format!(
                            "CPU {} lists {} but CPU {i} lists {}, which includes it",
                            j.0,
                            spans[j.idx()].to_list(),
                            spans[i].to_list()
                        ),
                    ));
                }
                ids[j.idx()] = next;
            }
            next += 1;
        }
        Ok(ids)
    }

    /// An idle state's `latency` or `residency` (µs), at most
    /// [`MAX_IDLE_US`].
    fn idle_us(&self, rel: &str) -> Result<u64, MachineError> {
        let v: u64 = self.read_num(rel)?;
        if v > MAX_IDLE_US {
            return Err(self.err(
                rel,
                format!("{v} us is more than the {MAX_IDLE_US} us (1 s) an idle state may take"),
            ));
        }
        Ok(v)
    }

    fn idle_states(&self) -> Result<Vec<IdleState>, MachineError> {
        let dir = "cpu/cpu0/cpuidle";
        let Some(entries) = self.list(dir) else {
            return Ok(default_idle_states());
        };
        let mut ks: Vec<u32> = entries
            .iter()
            .filter_map(|e| numbered(e, "state"))
            .collect();
        if ks.is_empty() {
            return Ok(default_idle_states());
        }
        ks.sort_unstable();
        let mut out = Vec::new();
        for k in ks {
            let d = format!("{dir}/state{k}");
            if self.read_opt(&format!("{d}/disable"))?.as_deref() == Some("1") {
                continue;
            }
            let lat = self.idle_us(&format!("{d}/latency"))?;
            let res = self.idle_us(&format!("{d}/residency"))?;
            out.push(IdleState {
                name: self.read(&format!("{d}/name"))?,
                exit_latency_ns: lat * NSEC_PER_USEC,
                target_residency_ns: res * NSEC_PER_USEC,
            });
        }
        if out.len() > 1 && out[0].exit_latency_ns == 0 && self.haltpoll_never_polls()? {
            out.remove(0);
        }
        if out.is_empty() {
            // Every state disabled: the idle loop only polls.
            out.push(IdleState {
                name: "POLL".into(),
                exit_latency_ns: 0,
                target_residency_ns: 0,
            });
        }
        Ok(out)
    }

    /// Does the cpuidle governor never select the polling state? True for
    /// the haltpoll governor (drivers/cpuidle/governors/haltpoll.c) whose
    /// poll limit can never leave 0: it picks the halt state whenever its
    /// per-CPU poll limit is 0, and the limit only grows towards
    /// `guest_halt_poll_ns` (a block shorter than that after a halt), so
    /// with `guest_halt_poll_ns` 0 every idle period halts and a wake-up
    /// of an idle vCPU always takes an IPI (no `sched_wake_idle_without_ipi`:
    /// measured on the project's guest, docs/syscall-costs.md). The module
    /// parameter lives outside `devices/system`, so only a `/sys` root
    /// (or a recording's copy of one) shows it; without it the polling
    /// state stays.
    fn haltpoll_never_polls(&self) -> Result<bool, MachineError> {
        if self.base.is_empty() {
            return Ok(false);
        }
        let gov = match self.read_opt("cpu/cpuidle/current_governor")? {
            Some(g) => Some(g),
            None => self.read_opt("cpu/cpuidle/current_governor_ro")?,
        };
        if gov.as_deref() != Some("haltpoll") {
            return Ok(false);
        }
        let rel = "module/haltpoll/parameters/guest_halt_poll_ns";
        let Some(text) = self.fs.read(rel) else {
            return match self.fs.why_unreadable(rel) {
                Some(why) => Err(MachineError::Invalid(format!(
                    "{}/{rel}: {why}",
                    self.root.trim_end_matches('/')
                ))),
                None => Ok(false),
            };
        };
        let t = text.trim();
        let ns: u64 = t.parse().map_err(|_| {
            MachineError::Invalid(format!(
                "{}/{rel}: '{t}' is not a number",
                self.root.trim_end_matches('/')
            ))
        })?;
        Ok(ns == 0)
    }

    fn run(&self) -> Result<Machine, MachineError> {
        // 1-2. Online CPUs, which must be 0..n-1.
        let online = self.online_cpus()?;
        if online.is_empty() {
            return Err(self.err("cpu", "no online CPU found"));
        }
        if let Some(gap) = (0..online.len() as u32).find(|&i| online[i as usize] != i) {
            return Err(self.err(
                "cpu/online",
                format!(
                    "online CPUs are {}; the simulator needs CPUs numbered 0..n-1 with none offline (CPU {gap} is not online)",
                    list_of(&online)
                ),
            ));
        }
        let n = online.len();
        if n > super::MAX_CPUS {
            return Err(self.err(
                "cpu/online",
                format!("{n} CPUs is more than the {} supported", super::MAX_CPUS),
            ));
        }

        // 4. Nodes first: the LLC is clipped to them.
        let (node_raw, rows) = self.nodes(n)?;

        // 3. Per-CPU files.
        let mut pkg_raw = Vec::with_capacity(n);
        let mut core = Vec::with_capacity(n);
        let mut core_file = Vec::with_capacity(n);
        let mut cluster: Vec<Option<(String, CpuMask)>> = Vec::with_capacity(n);
        let mut llc = Vec::with_capacity(n);
        let mut llc_file = Vec::with_capacity(n);
        let mut capacity = Vec::with_capacity(n);
        for i in 0..n {
            let t = format!("cpu/cpu{i}/topology");
            pkg_raw.push(self.read_num::<i64>(&format!("{t}/physical_package_id"))?);
            let (rel, text) = match self.read_opt(&format!("{t}/core_cpus_list"))? {
                Some(s) => (format!("{t}/core_cpus_list"), s),
                None => {
                    let rel = format!("{t}/thread_siblings_list");
                    match self.read_opt(&rel)? {
                        Some(s) => (rel, s),
                        None => {
                            return Err(self.err(
                                &format!("{t}/core_cpus_list"),
                                "missing file (and no thread_siblings_list)",
                            ))
                        }
                    }
                }
            };
            core.push(self.span(&rel, &text, n, i)?);
            core_file.push(rel);
            let rel = format!("{t}/cluster_cpus_list");
            cluster.push(match self.read_opt(&rel)? {
                Some(text) => Some((rel.clone(), self.span(&rel, &text, n, i)?)),
                None => None,
            });
            match self.llc_list(i)? {
                Some((rel, text)) => {
                    llc.push(Some(self.span(&rel, &text, n, i)?));
                    llc_file.push(rel);
                }
                None => {
                    llc.push(None);
                    llc_file.push(format!("cpu/cpu{i}/cache"));
                }
            }
            let rel = format!("cpu/cpu{i}/cpu_capacity");
            capacity.push(match self.read_opt(&rel)? {
                Some(_) => self.read_num::<u32>(&rel)?,
                None => 1024,
            });
        }

        // Packages and nodes: dense ids by first CPU.
        let dense = |raw: &[i64]| -> Vec<u32> {
            let mut map = BTreeMap::new();
            raw.iter()
                .map(|r| {
                    let next = map.len() as u32;
                    *map.entry(*r).or_insert(next)
                })
                .collect()
        };
        let package = dense(&pkg_raw);
        let node_raw_i: Vec<i64> = node_raw.iter().map(|&x| x as i64).collect();
        let node = dense(&node_raw_i);
        let mask_of = |ids: &[u32], id: u32| -> CpuMask {
            let mut m = CpuMask::new(n);
            for (c, &x) in ids.iter().enumerate() {
                if x == id {
                    m.set(CpuId(c as u32));
                }
            }
            m
        };
        let node_masks: Vec<CpuMask> = (0..=*node.iter().max().unwrap())
            .map(|id| mask_of(&node, id))
            .collect();
        let pkg_masks: Vec<CpuMask> = (0..=*package.iter().max().unwrap())
            .map(|id| mask_of(&package, id))
            .collect();

        // LLC: clipped to node and package; package ∩ node without caches.
        let llc: Vec<CpuMask> = (0..n)
            .map(|i| {
                let np = node_masks[node[i] as usize].and(&pkg_masks[package[i] as usize]);
                match &llc[i] {
                    Some(m) => m.and(&np),
                    None => np,
                }
            })
            .collect();
        // Clusters: used only if every one sits inside its LLC and contains
        // its core; otherwise cluster = core everywhere.
        let use_clusters = cluster.iter().enumerate().all(|(i, c)| match c {
            Some((_, m)) => m.is_subset(&llc[i]) && core[i].is_subset(m),
            None => false,
        });
        let (cluster_spans, cluster_files): (Vec<CpuMask>, Vec<String>) = if use_clusters {
            cluster
                .into_iter()
                .map(|c| {
                    let (f, m) = c.expect("checked above");
                    (m, f)
                })
                .unzip()
        } else {
            (core.clone(), core_file.clone())
        };

        let core_ids = self.assign(&core, &|c| core_file[c].clone())?;
        let cluster_ids = self.assign(&cluster_spans, &|c| cluster_files[c].clone())?;
        let llc_ids = self.assign(&llc, &|c| llc_file[c].clone())?;

        let cpus: Vec<CpuTopo> = (0..n)
            .map(|i| CpuTopo {
                package: package[i],
                node: node[i],
                llc: llc_ids[i],
                cluster: cluster_ids[i],
                core: core_ids[i],
                capacity: capacity[i],
            })
            .collect();

        // Distance matrix in dense node order.
        let mut order: Vec<u32> = Vec::new(); // dense id -> raw id
        for (i, &raw) in node_raw.iter().enumerate() {
            if node[i] as usize == order.len() {
                order.push(raw);
            }
        }
        let raw_pos: BTreeMap<u32, usize> =
            rows.keys().enumerate().map(|(k, &id)| (id, k)).collect();
        let dist: Vec<Vec<u32>> = order
            .iter()
            .map(|a| {
                let row = &rows[a];
                order.iter().map(|b| row[raw_pos[b]]).collect()
            })
            .collect();

        let idle = self.idle_states()?;
        let nr_pkgs = pkg_masks.len();
        let name = format!("sysfs:{}", self.root);
        let desc = format!(
            "imported from {} ({n} CPUs, {nr_pkgs} package(s), {} node(s))",
            self.shown(""),
            order.len()
        );
        Machine::new(name, desc, cpus, dist, imported_costs(n, nr_pkgs), idle)
    }
}

fn list_of(cpus: &[u32]) -> String {
    let max = cpus.iter().max().copied().unwrap_or(0) as usize;
    CpuMask::from_cpus(max + 1, cpus)
        .map(|m| m.to_list())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Distance;
    use std::path::{Path, PathBuf};

    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name)
    }

    fn c(i: u32) -> CpuId {
        CpuId(i)
    }

    #[test]
    fn machine_sysfs_huge_idle_values_and_lists_are_refused() {
        let mut fs = MemReader::new();
        fs.insert("devices/system/cpu/online", "0");
        fs.insert("devices/system/cpu/cpu0/topology/core_cpus_list", "0");
        fs.insert("devices/system/cpu/cpu0/topology/physical_package_id", "0");
        fs.insert("devices/system/cpu/cpu0/cpuidle/state0/name", "C1");
        fs.insert(
            "devices/system/cpu/cpu0/cpuidle/state0/latency",
            "18446744073709551",
        );
        fs.insert("devices/system/cpu/cpu0/cpuidle/state0/residency", "1");
        let e = from_sysfs("T", &fs).unwrap_err().to_string();
        assert!(
            e.contains("state0/latency") && e.contains("18446744073709551"),
            "{e}"
        );
        fs.insert("devices/system/cpu/cpu0/cpuidle/state0/latency", "1");
        fs.insert(
            "devices/system/cpu/cpu0/cpuidle/state0/residency",
            "18446744073709551",
        );
        let e = from_sysfs("T", &fs).unwrap_err().to_string();
        assert!(e.contains("state0/residency"), "{e}");
        assert!(parse_cpu_list("0-4294967295")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn machine_sysfs_parse_lists_and_masks() {
        assert_eq!(
            parse_cpu_list("0-3,8-11\n").unwrap(),
            vec![0, 1, 2, 3, 8, 9, 10, 11]
        );
        assert_eq!(parse_cpu_list("0,64").unwrap(), vec![0, 64]);
        assert_eq!(parse_cpu_list("5").unwrap(), vec![5]);
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<u32>::new());
        assert_eq!(parse_cpu_list("3,1-2,2").unwrap(), vec![1, 2, 3]);
        assert!(parse_cpu_list("3-1").unwrap_err().contains("backwards"));
        assert!(parse_cpu_list("a-3").unwrap_err().contains("'a'"));
        assert!(parse_cpu_list("0,,1").is_err());
        assert!(parse_cpu_list("0-4000000000")
            .unwrap_err()
            .contains("too large"));
        // formats-spec.md 8.1 examples.
        assert_eq!(parse_cpu_mask("0f").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(
            parse_cpu_mask("00000000,00000303").unwrap(),
            vec![0, 1, 8, 9]
        );
        assert_eq!(parse_cpu_mask("1,00000001\n").unwrap(), vec![0, 32]);
        assert_eq!(parse_cpu_mask("0x0000c000,0x0").unwrap(), vec![46, 47]);
        assert!(parse_cpu_mask("").is_err());
        assert!(parse_cpu_mask("xyz").is_err());
        assert!(parse_cpu_mask("123456789").is_err());
        // Round trip with CpuMask's own list printer.
        let l = parse_cpu_list("0-39,80-119").unwrap();
        assert_eq!(
            CpuMask::from_cpus(160, &l).unwrap().to_list(),
            "0-39,80-119"
        );
    }

    fn check_2s4c2t(m: &Machine) {
        // 2 packages x 4 cores x 2 threads, Intel numbering: sibling of i is i+8.
        assert_eq!(m.nr_cpus(), 16);
        assert_eq!(m.counts(), (8, 8, 2, 2, 2));
        assert!(m.has_smt());
        assert_eq!(m.core_span(c(1)).to_list(), "1,9");
        assert_eq!(m.node_span(c(4)).to_list(), "4-7,12-15");
        assert_eq!(m.llc_span(c(0)).to_list(), "0-3,8-11");
        assert_eq!(m.package_span(c(15)).to_list(), "4-7,12-15");
        assert_eq!(m.distance(c(0), c(8)), Distance::SameCore);
        assert_eq!(m.distance(c(0), c(3)), Distance::SameLlc);
        assert_eq!(m.distance(c(0), c(4)), Distance::OtherPackage);
        assert_eq!(m.node_distance, vec![vec![10, 21], vec![21, 10]]);
        assert_eq!(m.idle_states.len(), 3);
        assert_eq!(m.idle_states[2].name, "C6");
        assert_eq!(m.idle_states[2].exit_latency_ns, 170_000);
    }

    #[test]
    fn machine_sysfs_import_captured_tree() {
        let root = data("sysfs-2s4c2t");
        let r = DirReader(root.clone());
        let m = from_sysfs(root.to_str().unwrap(), &r).unwrap();
        check_2s4c2t(&m);
        assert!(m.name.starts_with("sysfs:"));
        // The same tree given as .../devices/system.
        let sys = root.join("devices/system");
        let m2 = from_sysfs(sys.to_str().unwrap(), &DirReader(sys.clone())).unwrap();
        check_2s4c2t(&m2);
        assert_eq!(m.cpus, m2.cpus);
    }

    #[test]
    fn machine_sysfs_import_host() {
        let sys = Path::new("/sys");
        if !sys.join("devices/system/cpu").is_dir() {
            eprintln!("skipping: /sys/devices/system/cpu is missing on this host");
            return;
        }
        let r = DirReader(sys.to_path_buf());
        let online = parse_cpu_list(&r.read("devices/system/cpu/online").unwrap()).unwrap();
        match from_sysfs("/sys", &r) {
            Ok(m) => {
                assert_eq!(m.nr_cpus(), online.len());
                let d = m.describe();
                assert!(d.contains(&format!("{} CPUs", online.len())), "{d}");
            }
            // A host with offline CPUs is refused, honestly.
            Err(e) => {
                let dense = online.iter().enumerate().all(|(i, &c)| c == i as u32);
                assert!(!dense, "import of the host's /sys failed: {e}");
                assert!(e.to_string().contains("offline"), "{e}");
            }
        }
    }

    /// A 4-CPU, 2-core, 1-node in-memory tree, mutated by each error test.
    fn small() -> MemReader {
        let mut r = MemReader::new();
        r.insert("cpu/online", "0-3\n");
        for i in 0..4 {
            let t = format!("cpu/cpu{i}/topology");
            r.insert(&format!("{t}/physical_package_id"), "0");
            let sib = if i < 2 {
                format!("{i},{}", i + 2)
            } else {
                format!("{},{i}", i - 2)
            };
            r.insert(&format!("{t}/core_cpus_list"), &sib);
            let cache = format!("cpu/cpu{i}/cache");
            r.insert(&format!("{cache}/index0/level"), "1");
            r.insert(&format!("{cache}/index0/type"), "Data");
            r.insert(&format!("{cache}/index0/shared_cpu_list"), &sib);
            r.insert(&format!("{cache}/index1/level"), "3");
            r.insert(&format!("{cache}/index1/type"), "Unified");
            r.insert(&format!("{cache}/index1/shared_cpu_list"), "0-3");
        }
        r
    }

    #[test]
    fn machine_sysfs_memreader_defaults() {
        let m = from_sysfs("mem", &small()).unwrap();
        // No node dir: one node; no cpuidle: default states.
        assert_eq!(m.counts(), (2, 2, 1, 1, 1));
        assert_eq!(m.core_span(c(0)).to_list(), "0,2");
        assert_eq!(m.node_distance, vec![vec![10]]);
        assert_eq!(m.idle_states, default_idle_states());
        assert_eq!(m.costs, imported_costs(4, 1));
    }

    #[test]
    fn machine_sysfs_errors_are_one_line() {
        let e = |r: &MemReader| from_sysfs("/cap", r).unwrap_err().to_string();

        let msg = e(&MemReader::new());
        assert!(
            msg.contains("/cap: no devices/system/cpu or cpu directory"),
            "{msg}"
        );

        let mut r = small();
        r.insert("cpu/online", "0-1,3");
        let msg = e(&r);
        assert!(
            msg.starts_with("/cap/cpu/online: online CPUs are 0-1,3"),
            "{msg}"
        );
        assert!(msg.contains("CPU 2 is not online"), "{msg}");

        let mut r = small();
        r.files.remove("cpu/cpu2/topology/physical_package_id");
        let msg = e(&r);
        assert_eq!(
            msg,
            "/cap/cpu/cpu2/topology/physical_package_id: missing file"
        );

        let mut r = small();
        r.insert("cpu/cpu1/topology/core_cpus_list", "1-");
        let msg = e(&r);
        assert!(
            msg.starts_with("/cap/cpu/cpu1/topology/core_cpus_list: unparsable list '1-'"),
            "{msg}"
        );

        let mut r = small();
        r.insert("cpu/cpu1/topology/core_cpus_list", "1-3");
        let msg = e(&r);
        assert!(
            msg.contains("/cap/cpu/cpu2/topology/core_cpus_list: CPU 2 lists 0,2 but CPU 1 lists 1-3, which includes it"),
            "{msg}"
        );

        // Cores {0,2} and {1,3} in packages 0 and 7 but one node (no node
        // dir): a node spanning packages (NPS0-like) is rejected.
        let mut r = small();
        r.insert("cpu/cpu1/topology/physical_package_id", "7");
        r.insert("cpu/cpu3/topology/physical_package_id", "7");
        let msg = e(&r);
        assert_eq!(
            msg,
            "machine 'sysfs:/cap': CPU 1 and CPU 0 share a node but not a package"
        );

        // Core {0,2} split across packages.
        let mut r = small();
        r.insert("cpu/cpu2/topology/physical_package_id", "1");
        let msg = e(&r);
        assert!(
            msg.contains("CPU 2 and CPU 0 share a cluster but not an LLC"),
            "{msg}"
        );

        let mut r = small();
        r.insert("node/online", "0-1");
        r.insert("node/node0/cpulist", "0-1");
        r.insert("node/node0/distance", "10 20");
        r.insert("node/node1/cpulist", "2-3");
        r.insert("node/node1/distance", "20 ten");
        let msg = e(&r);
        assert!(
            msg.starts_with("/cap/node/node1/distance: '20 ten' is not a list"),
            "{msg}"
        );

        let mut r = small();
        r.insert("node/online", "0");
        r.insert("node/node0/cpulist", "0-2");
        r.insert("node/node0/distance", "10");
        let msg = e(&r);
        assert!(msg.contains("CPU 3 is in no node's cpulist"), "{msg}");

        let mut r = small();
        r.insert("cpu/cpu0/cpuidle/state0/name", "POLL");
        r.insert("cpu/cpu0/cpuidle/state0/latency", "0");
        let msg = e(&r);
        assert_eq!(msg, "/cap/cpu/cpu0/cpuidle/state0/residency: missing file");

        for m in [
            e(&MemReader::new()),
            e(&{
                let mut r = small();
                r.insert("cpu/online", "x");
                r
            }),
        ] {
            assert_eq!(m.lines().count(), 1, "{m}");
        }
    }

    #[test]
    fn machine_sysfs_snc_llc_clipped_and_memory_only_node() {
        // Two nodes in one package, L3 reported package-wide (SNC on older
        // Xeons); node 1 is memory-only (CXL) and sits between them in id
        // order. Node ids are sparse (0, 1, 2).
        let mut r = small();
        r.insert("node/online", "0-2");
        r.insert("node/node0/cpulist", "0,2");
        r.insert("node/node0/distance", "10 14 12");
        r.insert("node/node1/cpulist", "\n");
        r.insert("node/node1/distance", "14 10 14");
        r.insert("node/node2/cpulist", "1,3");
        r.insert("node/node2/distance", "12 14 10");
        r.insert("cpu/cpu0/cpuidle/state0/name", "POLL");
        r.insert("cpu/cpu0/cpuidle/state0/latency", "0");
        r.insert("cpu/cpu0/cpuidle/state0/residency", "0");
        r.insert("cpu/cpu0/cpuidle/state1/name", "C1");
        r.insert("cpu/cpu0/cpuidle/state1/latency", "1");
        r.insert("cpu/cpu0/cpuidle/state1/residency", "1");
        r.insert("cpu/cpu0/cpuidle/state1/disable", "1");
        r.insert("cpu/cpu0/cpuidle/state2/name", "C6");
        r.insert("cpu/cpu0/cpuidle/state2/latency", "170");
        r.insert("cpu/cpu0/cpuidle/state2/residency", "600");
        let m = from_sysfs("mem", &r).unwrap();
        assert_eq!(m.counts(), (2, 2, 2, 2, 1));
        assert_eq!(m.llc_span(c(0)).to_list(), "0,2");
        assert_eq!(m.node_distance, vec![vec![10, 12], vec![12, 10]]);
        assert_eq!(m.distance(c(0), c(1)), Distance::SamePackage);
        let names: Vec<&str> = m.idle_states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["POLL", "C6"]);
    }

    /// The project's guest (2026-11-26): haltpoll driver and governor,
    /// states POLL (0/0 us) and "haltpoll idle" (1/1 us), and
    /// guest_halt_poll_ns 0: the governor always halts, so the import keeps
    /// only the halt state; with polling allowed, or another governor, or
    /// no module parameter, POLL stays; a broken parameter is one error
    /// naming the file.
    #[test]
    fn machine_sysfs_haltpoll_without_polling_drops_poll() {
        let guest = |gov: Option<&str>, poll_ns: Option<&str>| {
            let mut fs = MemReader::new();
            let d = "devices/system/cpu";
            fs.insert(&format!("{d}/online"), "0-1");
            for k in 0..2 {
                fs.insert(
                    &format!("{d}/cpu{k}/topology/core_cpus_list"),
                    &k.to_string(),
                );
                fs.insert(&format!("{d}/cpu{k}/topology/physical_package_id"), "0");
            }
            fs.insert(&format!("{d}/cpu0/cpuidle/state0/name"), "POLL");
            fs.insert(&format!("{d}/cpu0/cpuidle/state0/latency"), "0");
            fs.insert(&format!("{d}/cpu0/cpuidle/state0/residency"), "0");
            fs.insert(&format!("{d}/cpu0/cpuidle/state1/name"), "haltpoll idle");
            fs.insert(&format!("{d}/cpu0/cpuidle/state1/latency"), "1");
            fs.insert(&format!("{d}/cpu0/cpuidle/state1/residency"), "1");
            if let Some(g) = gov {
                fs.insert(&format!("{d}/cpuidle/current_governor"), &format!("{g}\n"));
            }
            if let Some(p) = poll_ns {
                fs.insert(
                    "module/haltpoll/parameters/guest_halt_poll_ns",
                    &format!("{p}\n"),
                );
            }
            from_sysfs("/sys", &fs).map(|m| {
                m.idle_states
                    .iter()
                    .map(|s| s.name.clone())
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            guest(Some("haltpoll"), Some("0")).unwrap(),
            ["haltpoll idle"]
        );
        // Before the rule, the POLL state was kept, and a wake-up within the
        // menu prediction's first microsecond found the vCPU polling.
        assert_eq!(
            guest(Some("haltpoll"), Some("200000")).unwrap(),
            ["POLL", "haltpoll idle"]
        );
        assert_eq!(
            guest(Some("menu"), Some("0")).unwrap(),
            ["POLL", "haltpoll idle"]
        );
        assert_eq!(
            guest(Some("haltpoll"), None).unwrap(),
            ["POLL", "haltpoll idle"]
        );
        assert_eq!(guest(None, Some("0")).unwrap(), ["POLL", "haltpoll idle"]);
        let e = guest(Some("haltpoll"), Some("lots"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "/sys/module/haltpoll/parameters/guest_halt_poll_ns: 'lots' is not a number"
        );
    }
}

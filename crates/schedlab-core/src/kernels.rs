//! Kernel generations: `--kernel VERSION` picks a release's fair-class
//! variant, feature defaults and tunable defaults; `--features` and
//! `--sysctl` apply on top ([`resolve`], the one function the CLI, the
//! workload reader and the Python package call). docs/kernels.md gives the
//! table with the commit (title and id) behind every row.
//!
//! The rules are per change, not per release: each row of [`CHANGES`] says
//! from which release a switch exists or a default changed, and a release's
//! defaults are every row applied up to it. Switches of the CFS class
//! (GENTLE_FAIR_SLEEPERS, START_DEBIT, NEXT_BUDDY, LAST_BUDDY, ALT_PERIOD,
//! BASE_SLICE) keep their 6.5 values in later releases, where they are not
//! read, so that `FAIR_CLASS=cfs` on a later release runs the last CFS; the
//! EEVDF-only switches are off in CFS releases (they did not exist).

use crate::features::{FairClass, FeatureError, Features, LbSerialize, Throttle};
use crate::time::NSEC_PER_USEC;
use crate::tunables::{SysctlError, Tunables};

/// The release used when `--kernel` is not given (the current kernel).
pub const DEFAULT_KERNEL: &str = "tip";

/// The releases `--kernel` takes, oldest first.
pub const KERNELS: &[&str] = &[
    "5.4", "5.10", "5.15", "5.19", "6.1", "6.6", "6.12", "6.15", "6.18", "6.19", "tip",
];

/// One change between releases: from `since` on, what it does to the
/// defaults, and where it comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// First release with the change (`"5.4"`, ...; `"tip"` = not in a release yet).
    pub since: &'static str,
    /// What changes, in the words of `schedlab kernels`.
    pub what: &'static str,
    /// The kernel commit(s): title and id.
    pub source: &'static str,
}

/// What changes between releases, in release order (the base is the
/// 5.4 kernel: CFS, SIS_PROP, SCHED_IDLE-aware placement, legacy
/// throttling, the tunable defaults of [`Tunables::default`] except
/// base_slice).
pub const CHANGES: &[Change] = &[
    Change {
        since: "5.4",
        what: "SCHED_IDLE_AS_IDLE on: a CPU running only SCHED_IDLE tasks is an idle target for wakeup placement",
        source: "3c29e651e16d \"sched/fair: Fall back to sched-idle CPU if idle CPU isn't found\"",
    },
    Change {
        since: "5.5",
        what: "fork/exec placement between two has-spare NUMA groups stays on the parent's node while it has an idle CPU (before: find_idlest_group's load comparison, not modelled)",
        source: "57abff067a08 \"sched/fair: Rework find_idlest_group()\" (Vincent Guittot)",
    },
    Change {
        since: "5.6",
        what: "a CPU running only SCHED_IDLE tasks balances at the idle intervals (before: the busy ones), and one left with only SCHED_IDLE tasks by a dequeue balances at the next tick",
        source: "323af6deaf70 \"sched/fair: Load balance aggressively for SCHED_IDLE CPUs\" (Viresh Kumar, 5.6-rc1)",
    },
    Change {
        since: "5.6",
        what: "load balancing between has-spare NUMA groups: the tasks to move (the difference, halved) become 0 while the busiest group runs at most 2 tasks",
        source: "b396f52326de \"sched/fair: Allow a small load imbalance between low utilisation SD_NUMA domains\" (Mel Gorman)",
    },
    Change {
        since: "5.8",
        what: "ttwu's on_cpu wakelist: a wakeup of a task still switching out on another CPU is queued there (across LLCs, or in the LLC when that CPU runs at most one task) instead of the waker spinning until the switch is done",
        source: "c6e7bd7afaeb \"sched: Optimize ttwu() spinning on p->on_cpu\" (not re-checked against the trees)",
    },
    Change {
        since: "5.10",
        what: "busy_factor 32 -> 16; a busy balance interval one jiffy short; imbalance_pct 125 -> 117 at the package and NUMA levels; detach_tasks halves a task's load per failed balance before comparing it with the imbalance (before: half its load, relaxed after cache_nice_tries failures)",
        source: "Vincent Guittot's series \"sched/fair: Improve fairness between cfs tasks\": 6e7499135db7 \"sched/fair: Reduce busy load balance interval\", \"Minimize concurrent LBs between domain level\", \"Reduce minimal imbalance threshold\", \"Relax constraint on task's load during load balance\" (tip sched/core, Sep 2020)",
    },
    Change {
        since: "5.11",
        what: "the NUMA allowance by a quarter: fork stays local while the local group runs fewer tasks than a quarter of the NUMA domain's CPUs; the balancer's halved difference becomes 0 when at most 2 and the busiest group runs under a quarter of its CPUs",
        source: "23e6082a522e \"sched: Limit the amount of NUMA imbalance that can exist at fork time\"; 7d2b5dd0bcc4 \"sched/numa: Allow a floating imbalance between NUMA nodes\" (Mel Gorman)",
    },
    Change {
        since: "5.13",
        what: "ALT_PERIOD and BASE_SLICE on (CFS period from the CPU's h_nr_running; slice >= min_granularity); the CFS knobs move from kernel.sched_* to debugfs",
        source: "0c2de3f054a5 \"sched,fair: Alternative sched_slice()\"; 8a99b6833c88 \"sched: Move SCHED_DEBUG sysctl to debugfs\"",
    },
    Change {
        since: "5.18",
        what: "imb_numa_nr replaces the quarter: fork stays local while the local group would run at most imb_numa_nr tasks with the new one; the balancer's halved difference becomes 0 when at most 2 and local running + 1 <= imb_numa_nr; imb_numa_nr is a quarter of a single-LLC node's CPUs (no minimum), one per LLC with several",
        source: "e496132ebedd \"sched/fair: Adjust the allowed NUMA imbalance when SD_NUMA spans multiple LLCs\"; 2cfb7a1b031b \"sched/fair: Improve consistency of allowed NUMA balance calculations\" (Mel Gorman)",
    },
    Change {
        since: "6.0",
        what: "the NUMA allowance on the whole difference (halved after); fork stays local only while the groups' idle CPUs differ by at most 2, with imb_numa_nr capped by the task's allowed local CPUs; imb_numa_nr of a single-LLC node an eighth of its CPUs, at least 1 (was a quarter)",
        source: "cb29a5c19d2d \"sched/numa: Apply imbalance limitations consistently\", 026b98a93bbd \"sched/numa: Adjust imb_numa_nr to a better approximation of memory channels\" (Mel Gorman); f5b2eeb49991 \"sched/fair: Consider CPU affinity when allowing NUMA imbalance in find_idlest_group()\" (K Prateek Nayak)",
    },
    Change {
        since: "6.0",
        what: "SIS_UTIL on, SIS_PROP off: the LLC scan depth comes from the LLC's utilisation",
        source: "70fb5ccf2ebb \"sched/fair: Introduce SIS_UTIL to search idle CPU based on sum of util_avg\"",
    },
    Change {
        since: "6.0",
        what: "a wakeup onto a CPU of the waker's LLC with nothing to run (idle, or about to be) goes through its wakelist: its IPI handler enqueues the task",
        source: "f3dd3f674555 \"sched: Remove the limitation of WF_ON_CPU on wakelist if wakee cpu is idle\" (not re-checked against the trees)",
    },
    Change {
        since: "6.6",
        what: "FAIR_CLASS=eevdf (PLACE_LAG, PLACE_DEADLINE_INITIAL, RUN_TO_PARITY on); latency_ns, wakeup_granularity_ns gone, min_granularity_ns becomes base_slice_ns (0.75 ms normalised)",
        source: "147f3efaa241 \"sched/fair: Implement an EEVDF-like scheduling policy\"; 5e963f2bd465 \"sched/fair: Commit to EEVDF\"",
    },
    Change {
        since: "6.12",
        what: "DELAY_DEQUEUE, DELAY_ZERO and PREEMPT_SHORT on; with PREEMPT_SHORT, update_curr also reschedules a curr whose protection is over and that is no longer eligible (did_preempt_short; before: only a used-up request)",
        source: "152e11f6df29 \"sched/fair: Implement delayed dequeue\"; 54a58a787791 \"sched/fair: Implement DELAY_ZERO\"; 85e511df3cec \"sched/eevdf: Allow shorter slices to wakeup-preempt\"",
    },
    Change {
        since: "6.14",
        what: "pipe_read wakes a writer only when it freed a slot of a full pipe (before: whenever the pipe was full when the read began, so a writer woke for nothing 39 times in 40 with 100-byte messages)",
        source: "aaec5a95d596 \"pipe_read: don't wake up the writer if the pipe is still full\" (Oleg Nesterov; vfs-6.14 merge)",
    },
    Change {
        since: "6.15",
        what: "base_slice_ns 0.75 ms -> 0.70 ms normalised",
        source: "2ae891b82695 \"sched: Reduce the default slice to avoid tasks getting an extra tick\"",
    },
    Change {
        since: "6.18",
        what: "curr's protected window becomes the queue's shortest slice under RUN_TO_PARITY and the normalised base slice without it, and a non-preempting PREEMPT_SHORT wakeup shrinks it (before: the whole request, kept by the pick only under RUN_TO_PARITY); update_curr reschedules any curr past its window, eligible or not, whatever PREEMPT_SHORT says (6.17)",
        source: "Vincent Guittot, \"sched/fair: Limit run to parity to the min slice of enqueued entities\", \"sched/fair: Fix NO_RUN_TO_PARITY case\" and the series' final protect_slice form (merged for 6.17)",
    },
    Change {
        since: "6.18",
        what: "THROTTLE=per-task: a throttled group's tasks leave at return to user",
        source: "e1fad12dcb66 \"sched/fair: Switch to task based throttle model\" (Valentin Schneider, Aaron Lu)",
    },
    Change {
        since: "6.19",
        what: "LB_SERIALIZE=balancer-only; NI_RANDOM on; wakeup preemption reschedules an ineligible waker in task context and RUN_TO_PARITY shrinks curr's protection after every wakeup (before: only after a PREEMPT_SHORT one)",
        source: "3324b2180c17 (Tim Chen: take sched_balance_running only once the domain is due); 522fb20fbdbe (Peter Zijlstra: SD_SERIALIZE for newidle balancing too); 33cf66d88306 \"sched/fair: Proportional newidle balance\" (NI_RANDOM); e837456fdca8 \"sched/fair: Reimplement NEXT_BUDDY to align with EEVDF goals\" (Mel Gorman, the wakeup preemption rules); see docs/reference/kernel-model.md §2.9, §7.4, §9",
    },
];

/// `(major, minor)` of a release name (`tip` after every release).
fn version(name: &str) -> Option<(u32, u32)> {
    if name == "tip" {
        return Some((u32::MAX, 0));
    }
    let (a, b) = name.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// `(major, minor)` of a listed release name, at compile time ([`version`]
/// for the names of [`KERNELS`]).
const fn listed_version(name: &str) -> (u32, u32) {
    let b = name.as_bytes();
    if b.len() == 3 && b[0] == b't' && b[1] == b'i' && b[2] == b'p' {
        return (u32::MAX, 0);
    }
    let (mut maj, mut min, mut i, mut dot) = (0u32, 0u32, 0, false);
    while i < b.len() {
        let c = b[i];
        if c == b'.' {
            dot = true;
        } else if dot {
            min = min * 10 + (c - b'0') as u32;
        } else {
            maj = maj * 10 + (c - b'0') as u32;
        }
        i += 1;
    }
    (maj, min)
}

/// The version of `KERNELS[i]`, computed once at compile time.
const VERSIONS: [(u32, u32); KERNELS.len()] = {
    let mut v = [(0, 0); KERNELS.len()];
    let mut i = 0;
    while i < KERNELS.len() {
        v[i] = listed_version(KERNELS[i]);
        i += 1;
    }
    v
};

/// Is `kernel` (a [`KERNELS`] name or any form [`canonical`] takes) the
/// release `maj.min` or later? An unknown name counts as `tip`.
///
/// Asked on hot paths (every wakeup's preemption check, every pipe read),
/// always with the run's `SimConfig::kernel`, which [`resolve`] took from
/// [`KERNELS`] itself: that `&'static str` is found among the listed names
/// (by address, else by value) and its version read from a table built at
/// compile time, without parsing (a callgrind profile had the parse at 5.5 %
/// of a piped hackbench in cgroups). Any other string goes through
/// [`canonical`].
#[inline]
pub fn at_least(kernel: &str, maj: u32, min: u32) -> bool {
    let listed = KERNELS
        .iter()
        .position(|k| k.as_ptr() == kernel.as_ptr() && k.len() == kernel.len())
        .or_else(|| KERNELS.iter().position(|k| *k == kernel));
    if let Some(i) = listed {
        return VERSIONS[i] >= (maj, min);
    }
    canonical(kernel)
        .and_then(version)
        .is_none_or(|v| v >= (maj, min))
}

/// The value for release `kernel` from a table of the releases where it
/// changed, newest first (`((major, minor), value)`): the first row
/// `kernel` is [`at_least`], else `oldest`. For per-release rules decided
/// once per run (`NumaForkRule::for_kernel` and its like).
pub fn by_release<T: Copy>(kernel: &str, rows: &[((u32, u32), T)], oldest: T) -> T {
    rows.iter()
        .find(|((maj, min), _)| at_least(kernel, *maj, *min))
        .map_or(oldest, |&(_, v)| v)
}

/// The canonical name of a `--kernel` value (`v5.4`, `5.4.0` and
/// `linux-5.4` are 5.4), or None.
pub fn canonical(name: &str) -> Option<&'static str> {
    let n = name.trim();
    let n = n.strip_prefix("linux-").unwrap_or(n);
    let n = n.strip_prefix('v').unwrap_or(n);
    // `a.b.patch` is `a.b`; anything else is taken whole. Without
    // allocating: `wakeup_preempt` asks on every wakeup (`at_least`).
    let n = match n.split('.').count() {
        3 => &n[..n.rfind('.').expect("three parts have two dots")],
        _ => n,
    };
    KERNELS.iter().copied().find(|k| *k == n)
}

/// The feature and tunable defaults of `kernel` (a [`KERNELS`] name).
pub fn defaults(kernel: &str) -> Option<(Features, Tunables)> {
    let v = version(canonical(kernel)?)?;
    let at = |maj: u32, min: u32| v >= (maj, min);
    let eevdf = at(6, 6);
    let f = Features {
        fair_class: if eevdf {
            FairClass::Eevdf
        } else {
            FairClass::Cfs
        },
        place_lag: eevdf,
        place_deadline_initial: eevdf,
        run_to_parity: eevdf,
        preempt_short: at(6, 12),
        delay_dequeue: at(6, 12),
        delay_zero: at(6, 12),
        sis_util: at(6, 0),
        sis_prop: !at(6, 0),
        alt_period: at(5, 13),
        base_slice: at(5, 13),
        ni_random: at(6, 19),
        lb_serialize: if at(6, 19) {
            LbSerialize::BalancerOnly
        } else {
            LbSerialize::Eager
        },
        throttle: if at(6, 18) {
            Throttle::PerTask
        } else {
            Throttle::Legacy
        },
        ..Features::default()
    };
    let mut t = Tunables::default();
    if !at(6, 15) {
        t.base_slice.normalized_ns = 750 * NSEC_PER_USEC;
    }
    Some((f, t))
}

/// Which switches a release has (its features.h, or the project's
/// enum-valued mechanisms, which every release has).
pub fn has_feature(kernel: &str, name: &str) -> bool {
    let Some(v) = canonical(kernel).and_then(version) else {
        return false;
    };
    let at = |maj: u32, min: u32| v >= (maj, min);
    match name {
        "PLACE_LAG" | "PLACE_DEADLINE_INITIAL" | "RUN_TO_PARITY" => at(6, 6),
        "PREEMPT_SHORT" | "DELAY_DEQUEUE" | "DELAY_ZERO" => at(6, 12),
        "GENTLE_FAIR_SLEEPERS" | "START_DEBIT" | "LAST_BUDDY" => !at(6, 6),
        "ALT_PERIOD" | "BASE_SLICE" => at(5, 13) && !at(6, 6),
        "SIS_UTIL" => at(6, 0),
        "SIS_PROP" => !at(6, 7),
        "NI_RANDOM" => at(6, 19),
        "STEAL" => false,
        _ => true,
    }
}

/// Which tunables a release has (by [`crate::tunables::SYSCTL_TABLE`] name).
pub fn has_tunable(kernel: &str, name: &str) -> bool {
    let Some(v) = canonical(kernel).and_then(version) else {
        return false;
    };
    match name {
        "base_slice_ns" => v >= (6, 6),
        "latency_ns" | "wakeup_granularity_ns" | "min_granularity_ns" => v < (6, 6),
        _ => true,
    }
}

/// Why the options of a run were refused; the message names the flag.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// `--kernel` names no release.
    #[error("--kernel: unknown release '{0}' (known: {1})")]
    Kernel(String, String),
    /// `--features`.
    #[error("--features: {0}")]
    Features(FeatureError),
    /// `--sysctl` (or the workload's `sysctl` object, named in `.0`).
    #[error("{0}: {1}")]
    Sysctl(String, SysctlError),
}

/// The options of one run, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Canonical release name.
    pub kernel: &'static str,
    /// Feature switches in effect.
    pub features: Features,
    /// Tunables in effect.
    pub tunables: Tunables,
}

/// Resolves `--kernel` (None: [`DEFAULT_KERNEL`]), then `--features` on
/// top of its defaults, then the workload's sysctls (`workload`), then
/// every `--sysctl NAME=VALUE` in order.
pub fn resolve(
    kernel: Option<&str>,
    features: &str,
    workload: &[(String, String)],
    sysctls: &[String],
) -> Result<RunOptions, OptionError> {
    let k = kernel.unwrap_or(DEFAULT_KERNEL);
    let name =
        canonical(k).ok_or_else(|| OptionError::Kernel(k.to_string(), KERNELS.join(", ")))?;
    let (f, mut t) = defaults(name).expect("every KERNELS name has defaults");
    let features = f.apply(features).map_err(OptionError::Features)?;
    for (n, v) in workload {
        t.set_value(n, v)
            .map_err(|e| OptionError::Sysctl("workload global.sysctl".into(), e))?;
    }
    for s in sysctls {
        t.set(s)
            .map_err(|e| OptionError::Sysctl(format!("--sysctl {s}"), e))?;
    }
    Ok(RunOptions {
        kernel: name,
        features,
        tunables: t,
    })
}

/// The release the model runs for a host whose `uname -r` is `release`
/// (`schedlab validate` reads it from a recording's host.json):
///
/// * a listed release (`6.18.44-fc-v657`, `5.15.0-91-generic`): that one;
/// * between two listed releases (`6.8.0`): the newest listed release not
///   newer than it, with a note (the model's defaults are per change, and
///   changes merged after that release and up to the host's are missing);
/// * newer than the newest numbered release (`6.20`, `7.0`): `tip`, with a
///   note;
/// * older than the oldest listed release (`4.19`), or not `MAJOR.MINOR...`:
///   an error (the model has no class variant for it; `--kernel` picks one
///   anyway).
///
/// Returns the canonical name and the note, if any.
pub fn for_host_release(release: &str) -> Result<(&'static str, Option<String>), String> {
    let r = release.trim();
    let r = r.strip_prefix("linux-").unwrap_or(r);
    let r = r.strip_prefix('v').unwrap_or(r);
    let bad = || format!("kernel release '{release}' is not MAJOR.MINOR...");
    let mut parts = r.splitn(3, '.');
    let a = parts.next().unwrap_or("");
    let b = parts.next().unwrap_or("");
    let b_digits = &b[..b.find(|c: char| !c.is_ascii_digit()).unwrap_or(b.len())];
    if a.is_empty() || !a.bytes().all(|c| c.is_ascii_digit()) || b_digits.is_empty() {
        return Err(bad());
    }
    let v: (u32, u32) = match (a.parse::<u32>(), b_digits.parse::<u32>()) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return Err(bad()),
    };
    let numbered = || KERNELS.iter().copied().filter(|k| *k != "tip");
    let oldest = numbered().next().expect("KERNELS has releases");
    let newest = numbered().next_back().expect("KERNELS has releases");
    if v < version(oldest).expect("listed") {
        return Err(format!(
            "kernel release {release} is older than {oldest}, the oldest release the model has"
        ));
    }
    if v > version(newest).expect("listed") {
        return Ok((
            "tip",
            Some(format!(
                "{release} is newer than {newest}, the newest numbered release the model has: tip"
            )),
        ));
    }
    let floor = numbered()
        .rfind(|k| version(k).is_some_and(|k| k <= v))
        .expect("not older than the oldest");
    let note = (version(floor) != Some(v)).then(|| {
        format!("{release} is not a listed release: {floor}, the newest listed release before it")
    });
    Ok((floor, note))
}

/// The text of `schedlab kernels`: the releases with what changes at each,
/// then the feature defaults and the tunable defaults of every release
/// (`-`: the release has no such switch or knob).
pub fn listing() -> String {
    use crate::features::FEATURE_TABLE;
    use crate::tunables::SYSCTL_TABLE;
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Kernel releases (--kernel VERSION; default {DEFAULT_KERNEL}):"
    );
    for k in KERNELS {
        let (f, _) = defaults(k).expect("listed");
        let _ = writeln!(s, "  {k:<5} fair class {}", f.fair_class.name_str());
    }
    let _ = writeln!(s, "\nWhat changes, by release (sources: docs/kernels.md):");
    for c in CHANGES {
        let _ = writeln!(s, "  {:<5} {}", c.since, c.what);
    }
    let w = 22;
    let _ = write!(
        s,
        "\nFeature defaults (--features applies on top):\n  {:<w$}",
        ""
    );
    for k in KERNELS {
        let _ = write!(s, " {k:>13}");
    }
    s.push('\n');
    let all: Vec<_> = KERNELS
        .iter()
        .map(|k| defaults(k).expect("listed").0)
        .collect();
    for info in FEATURE_TABLE {
        let _ = write!(s, "  {:<w$}", info.name);
        for (k, f) in KERNELS.iter().zip(&all) {
            let v = f
                .values()
                .into_iter()
                .find(|(n, _)| *n == info.name)
                .map(|(_, v)| match v {
                    crate::features::FeatureValue::Bool(true) => "on".to_string(),
                    crate::features::FeatureValue::Bool(false) => "off".to_string(),
                    crate::features::FeatureValue::Enum(e) => e.to_string(),
                })
                .unwrap_or_default();
            let v = if has_feature(k, info.name) {
                v
            } else {
                "-".into()
            };
            let _ = write!(s, " {v:>13}");
        }
        s.push('\n');
    }
    let _ = write!(
        s,
        "\nTunable defaults (--sysctl NAME=VALUE; the four slice knobs are normalised, x the tunable_scaling factor of the machine):\n  {:<36}",
        ""
    );
    for k in KERNELS {
        let _ = write!(s, " {k:>8}");
    }
    s.push('\n');
    let tun: Vec<_> = KERNELS
        .iter()
        .map(|k| defaults(k).expect("listed").1)
        .collect();
    for info in SYSCTL_TABLE {
        let _ = write!(s, "  {:<36}", info.name);
        for (k, t) in KERNELS.iter().zip(&tun) {
            let v = t
                .values(1)
                .into_iter()
                .find(|(n, _)| *n == info.name)
                .map(|(_, v)| v.to_string())
                .unwrap_or_default();
            let v = if has_tunable(k, info.name) {
                v
            } else {
                "-".into()
            };
            let _ = write!(s, " {v:>8}");
        }
        s.push('\n');
    }
    let _ = writeln!(s, "\nTunables (name: range; what the model does with it):");
    for info in SYSCTL_TABLE {
        let _ = writeln!(s, "  {}: {}; {}", info.name, info.range, info.doc);
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_host_release_maps_to_a_listed_one() {
        use super::for_host_release as f;
        assert_eq!(f("6.18.44-fc-v657"), Ok(("6.18", None)));
        assert_eq!(f("5.15.0-91-generic"), Ok(("5.15", None)));
        assert_eq!(f("6.1"), Ok(("6.1", None)));
        assert_eq!(f("v5.10.12"), Ok(("5.10", None)));
        let (k, note) = f("6.8.0-45-generic").unwrap();
        assert_eq!(k, "6.6");
        assert!(note.unwrap().contains("6.6"));
        let (k, note) = f("7.0.1").unwrap();
        assert_eq!(k, "tip");
        assert!(note.unwrap().contains("newer than 6.19"));
        assert_eq!(f("6.20-rc1").unwrap().0, "tip");
        let e = f("4.19.0-27-amd64").unwrap_err();
        assert!(e.contains("older than 5.4"), "{e}");
        for bad in ["", "six", "6", "6.x", ".18", "6..1"] {
            assert!(f(bad).is_err(), "{bad}");
        }
    }

    use super::*;

    #[test]
    fn at_least_orders_releases() {
        assert!(at_least("6.19", 6, 19) && at_least("tip", 6, 19));
        assert!(!at_least("6.18", 6, 19) && !at_least("v6.18.2", 6, 19));
    }

    /// The compile-time table agrees with the parser, and a listed name
    /// (found by address) and a copy of it (parsed) answer alike.
    #[test]
    fn listed_versions_match_the_parser() {
        for (i, k) in KERNELS.iter().enumerate() {
            assert_eq!(Some(VERSIONS[i]), version(k), "{k}");
            let copy = k.to_string();
            for (maj, min) in [(5, 4), (5, 11), (6, 6), (6, 14), (6, 19), (7, 0)] {
                assert_eq!(
                    at_least(k, maj, min),
                    at_least(&copy, maj, min),
                    "{k} {maj}.{min}"
                );
                assert_eq!(
                    at_least(k, maj, min),
                    version(k).is_none_or(|v| v >= (maj, min)),
                    "{k} {maj}.{min}"
                );
            }
        }
        assert!(at_least("no-such-release", 7, 0), "unknown counts as tip");
    }

    #[test]
    fn tip_is_the_default_configuration() {
        let (f, t) = defaults("tip").unwrap();
        assert_eq!(f, Features::default());
        assert_eq!(t, Tunables::default());
        assert_eq!(defaults("6.19").unwrap().0, Features::default());
    }

    #[test]
    fn release_rows() {
        let (f, t) = defaults("5.4").unwrap();
        assert_eq!(f.fair_class, FairClass::Cfs);
        assert!(f.sched_idle_as_idle && f.sis_prop && !f.sis_util && !f.alt_period);
        assert_eq!(f.throttle, Throttle::Legacy);
        assert_eq!(f.lb_serialize, LbSerialize::Eager);
        assert_eq!(t.base_slice_ns(8), 3_000_000);
        // SIS_UTIL came in 6.0 (the v6.0 scheduler pull), so 5.19 scans with SIS_PROP.
        let (f, _) = defaults("5.19").unwrap();
        assert!(!f.sis_util && f.sis_prop && f.alt_period);
        assert!(!has_feature("5.19", "SIS_UTIL") && has_feature("6.1", "SIS_UTIL"));
        let (f, _) = defaults("6.1").unwrap();
        assert!(f.sis_util && !f.sis_prop && f.alt_period && f.fair_class == FairClass::Cfs);
        let (f, t) = defaults("6.6").unwrap();
        assert!(f.fair_class == FairClass::Eevdf && f.run_to_parity && !f.delay_dequeue);
        assert_eq!(t.base_slice_ns(1), 750_000);
        let (f, _) = defaults("6.12").unwrap();
        assert!(f.delay_dequeue && f.preempt_short && f.throttle == Throttle::Legacy);
        let (f, _) = defaults("6.18").unwrap();
        assert!(f.throttle == Throttle::PerTask && !f.ni_random);
        assert_eq!(canonical("v6.1.55"), Some("6.1"));
        assert_eq!(canonical("4.19"), None);
        for k in KERNELS {
            assert!(defaults(k).is_some());
        }
    }

    #[test]
    fn resolve_layers_and_errors() {
        let r = resolve(
            Some("5.4"),
            "NEXT_BUDDY",
            &[("migration_cost_ns".into(), "100000".into())],
            &["nr_migrate=4".into(), "migration_cost_ns=200000".into()],
        )
        .unwrap();
        assert!(r.features.next_buddy && r.features.fair_class == FairClass::Cfs);
        assert_eq!(r.tunables.migration_cost_ns, 200_000);
        assert_eq!(r.tunables.nr_migrate, 4);
        assert!(matches!(
            resolve(Some("2.6"), "", &[], &[]),
            Err(OptionError::Kernel(..))
        ));
        assert!(matches!(
            resolve(None, "", &[], &["nr_migrate".into()]),
            Err(OptionError::Sysctl(..))
        ));
        let e = resolve(None, "", &[], &["bogus=1".into()]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--sysctl bogus=1: unknown tunable"),
            "{e}"
        );
    }
}

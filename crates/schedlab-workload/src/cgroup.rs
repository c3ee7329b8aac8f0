//! Task groups: cgroup paths and the cpu controller's files (formats-spec.md §6,
//! kernel-model.md §1.2 and §12.1).
//!
//! This module is the one place that knows what a cgroup path may look like
//! and what writing a value to `cpu.max`, `cpu.weight`, ... means. Every
//! workload source goes through it: the rt-app reader (`taskgroup`,
//! `taskgroups`), the generators (`cgroup=PATH`) and the command line
//! (`--cgroup PATH:FILE=VALUE`).
//!
//! ```text
//!  "cpu.max" = "20000 100000" ──apply_setting──► GroupSpec { quota_ns: Some(20 ms),
//!                                                           period_ns: 100 ms, .. }
//!  all settings of a group written ──finish──► cross-file checks (burst ≤ quota)
//!  paths in use + configured groups ──build_groups──► Workload::groups
//!                                         (ancestors added, parents first)
//! ```
//!
//! ## Files and their limits
//!
//! | file | value | effect |
//! |---|---|---|
//! | `cpu.max` | `QUOTA PERIOD`, `max PERIOD`, `QUOTA`, `max` (µs) | bandwidth limit; one token changes the quota only |
//! | `cpu.max.burst` | µs, 0.. | carried-over quota, at most the quota |
//! | `cpu.weight` | 1..=10000 | `shares = round(weight × 1024 / 100)` |
//! | `cpu.weight.nice` | -20..=19 | shares = the nice-to-weight table entry |
//! | `cpu.idle` | 0 or 1 | the group counts as SCHED_IDLE towards its siblings |
//! | `cpu.shares` (v1) | 2..=262144 | shares directly |
//! | `cpu.cfs_quota_us` (v1) | -1 (no limit) or µs | the quota of `cpu.max` |
//! | `cpu.cfs_period_us` (v1) | µs | the period of `cpu.max` |
//! | `cpu.cfs_burst_us` (v1) | µs | as `cpu.max.burst` |
//!
//! Limits are the kernel's (`tg_set_cfs_bandwidth`): period 1 ms ..= 1 s,
//! quota at least 1 ms and at most [`MAX_QUOTA_US`] (the kernel's
//! `max_cfs_runtime`, 2^44 − 1 µs, which keeps its fixed-point runtime
//! arithmetic from overflowing), burst at most the quota and quota + burst
//! at most [`MAX_QUOTA_US`].
//!
//! ## Deviations from cgroupfs (on purpose)
//!
//! * The settings of one group are a *set*, checked together by [`finish`]
//!   after all are written: the kernel checks `burst ≤ quota` at every
//!   write, so there the order of writes matters.
//! * `cpu.shares` outside 2..=262144 is an error; the kernel clamps it
//!   silently. `cpu.cfs_quota_us` accepts `-1` for "no limit" but no other
//!   negative value (the kernel reads any negative value as no limit).
//! * While `cpu.idle` is 1 the weight has no effect (the group weighs 3);
//!   the kernel refuses a weight write while the group is idle, schedlab
//!   keeps the weight for the record.
//! * Paths are limited to ASCII letters, digits and `_ - . + @`, components
//!   to 255 bytes, whole paths to 4095 bytes; cgroupfs accepts any byte but
//!   `/` and newline.
//! * The root `/` can hold tasks but has no settings, as in cgroupfs.

use std::collections::BTreeMap;

use schedlab_core::fair::weight::PRIO_TO_WEIGHT;
use schedlab_core::program::{GroupSpec, Workload};
use schedlab_core::time::NSEC_PER_USEC;

/// The root group's path.
pub const ROOT: &str = "/";
/// Shortest `cpu.max` period (`min_cfs_quota_period`), µs.
pub const MIN_PERIOD_US: u64 = 1_000;
/// Longest `cpu.max` period (`max_cfs_quota_period`), µs.
pub const MAX_PERIOD_US: u64 = 1_000_000;
/// Smallest quota, µs (the kernel uses the minimum period here too).
pub const MIN_QUOTA_US: u64 = 1_000;
/// Largest quota, and largest quota + burst, µs: the kernel's
/// `max_cfs_runtime` (`MAX_BW` = 2^44 − 1 µs, about 203 days).
pub const MAX_QUOTA_US: u64 = (1 << 44) - 1;
/// `cpu.weight` range.
pub const MIN_WEIGHT: u64 = 1;
/// `cpu.weight` range.
pub const MAX_WEIGHT: u64 = 10_000;
/// `cpu.shares` range (`MIN_SHARES`).
pub const MIN_SHARES: u64 = 2;
/// `cpu.shares` range (`MAX_SHARES` = 2^18).
pub const MAX_SHARES: u64 = 1 << 18;
/// Longest path component (NAME_MAX).
pub const MAX_NAME_LEN: usize = 255;
/// Longest path (PATH_MAX − 1).
pub const MAX_PATH_LEN: usize = 4095;

/// Every file [`apply_setting`] knows, cgroup v2 first, then v1.
pub const FILES: [&str; 9] = [
    "cpu.max",
    "cpu.max.burst",
    "cpu.weight",
    "cpu.weight.nice",
    "cpu.idle",
    "cpu.shares",
    "cpu.cfs_quota_us",
    "cpu.cfs_period_us",
    "cpu.cfs_burst_us",
];

/// Checks a group path a task may be placed in: `/` (the root) or
/// `/a/b/...` with non-empty components other than `.` and `..`, no
/// trailing `/`, and only ASCII letters, digits and `_ - . + @`.
pub fn validate_path(path: &str) -> Result<(), String> {
    let show = path.escape_debug();
    if path == ROOT {
        return Ok(());
    }
    if !path.starts_with('/') {
        return Err(format!(
            "cgroup path \"{show}\" must start with '/' (it is absolute in the cpu hierarchy)"
        ));
    }
    if path.len() > MAX_PATH_LEN {
        return Err(format!(
            "cgroup path \"{show}\" is longer than {MAX_PATH_LEN} bytes"
        ));
    }
    if path.ends_with('/') {
        return Err(format!("cgroup path \"{show}\" must not end with '/'"));
    }
    for comp in path[1..].split('/') {
        if comp.is_empty() {
            return Err(format!(
                "cgroup path \"{show}\" has an empty component ('//')"
            ));
        }
        if comp == "." || comp == ".." {
            return Err(format!(
                "cgroup path \"{show}\" must not contain '{comp}' components"
            ));
        }
        if comp.len() > MAX_NAME_LEN {
            return Err(format!(
                "cgroup path \"{show}\": component longer than {MAX_NAME_LEN} bytes"
            ));
        }
        if let Some(c) = comp
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "_-.+@".contains(*c)))
        {
            return Err(format!(
                "cgroup path \"{show}\": character '{}' is not allowed (use letters, digits, '_', '-', '.', '+', '@')",
                c.escape_debug()
            ));
        }
    }
    Ok(())
}

/// Checks the path of a group that carries settings: a valid path other
/// than the root.
pub fn validate_group_path(path: &str) -> Result<(), String> {
    validate_path(path)?;
    if path == ROOT {
        return Err(
            "the root group \"/\" cannot be configured (cgroupfs has no cpu.max, cpu.weight, ... in the root)"
                .into(),
        );
    }
    Ok(())
}

/// Writes `value` to the cpu controller file `file` of `spec`, as a write
/// to cgroupfs would. Errors are one line starting with the file name.
/// Cross-file rules (burst ≤ quota) are left to [`finish`].
pub fn apply_setting(spec: &mut GroupSpec, file: &str, value: &str) -> Result<(), String> {
    setting(spec, file, value).map_err(|p| format!("{file}: {p}"))
}

/// [`apply_setting`] with the problem alone (no file name in front), for
/// callers that name the file themselves.
pub(crate) fn setting(spec: &mut GroupSpec, file: &str, value: &str) -> Result<(), String> {
    let v = value.trim();
    match file {
        "cpu.max" => {
            let toks: Vec<&str> = v.split_whitespace().collect();
            if toks.is_empty() || toks.len() > 2 {
                return Err(format!(
                    "\"{}\" is not \"QUOTA PERIOD\", \"max PERIOD\", \"QUOTA\" or \"max\" (µs)",
                    value.escape_debug()
                ));
            }
            let quota = quota_value(toks[0])?;
            let period = match toks.get(1) {
                Some(p) => Some(period_value(p)?),
                None => None,
            };
            spec.quota_ns = quota;
            if let Some(p) = period {
                spec.period_ns = p;
            }
        }
        "cpu.cfs_quota_us" => {
            if v == "-1" {
                spec.quota_ns = None;
            } else if v.starts_with('-') && v[1..].bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "{v} is negative (write -1 for no limit, or a quota of at least {MIN_QUOTA_US} µs)"
                ));
            } else {
                spec.quota_ns = quota_value(v)?;
                if spec.quota_ns.is_none() {
                    return Err(
                        "\"max\" is the cgroup v2 spelling; cpu.cfs_quota_us takes -1 for no limit"
                            .into(),
                    );
                }
            }
        }
        "cpu.cfs_period_us" => spec.period_ns = period_value(v)?,
        "cpu.max.burst" | "cpu.cfs_burst_us" => {
            let us = number(v)?;
            if us > MAX_QUOTA_US {
                return Err(format!(
                    "burst {us} µs is more than the kernel's limit of {MAX_QUOTA_US} µs"
                ));
            }
            spec.burst_ns = us * NSEC_PER_USEC;
        }
        "cpu.weight" => {
            let w = in_range(number(v)?, MIN_WEIGHT, MAX_WEIGHT, "weight")?;
            // DIV_ROUND_CLOSEST(weight × 1024, 100)
            spec.shares = (w * 1024 + 50) / 100;
        }
        "cpu.weight.nice" => {
            let n = signed(v)?;
            if !(-20..=19).contains(&n) {
                return Err(format!("nice {n} is out of range (expected -20..=19)"));
            }
            spec.shares = PRIO_TO_WEIGHT[(n + 20) as usize];
        }
        "cpu.shares" => {
            spec.shares = in_range(number(v)?, MIN_SHARES, MAX_SHARES, "shares")?;
        }
        "cpu.idle" => {
            spec.idle = match v {
                "0" => false,
                "1" => true,
                _ => {
                    signed(v)?;
                    return Err(format!("{v} is not 0 or 1"));
                }
            }
        }
        _ => {
            return Err(format!(
                "unknown cpu controller file (known: {})",
                FILES.join(", ")
            ))
        }
    }
    Ok(())
}

/// The rules that involve several files, checked once every setting of
/// the group is written: the burst is at most the quota, and quota +
/// burst at most [`MAX_QUOTA_US`]. With no quota (`max`) any burst up to
/// the limit is accepted and has no effect, as in the kernel.
pub fn finish(spec: &GroupSpec) -> Result<(), String> {
    validate_group_path(&spec.path)?;
    let burst_us = spec.burst_ns / NSEC_PER_USEC;
    if let Some(q) = spec.quota_ns {
        let quota_us = q / NSEC_PER_USEC;
        if spec.burst_ns > q {
            return Err(format!(
                "cgroup \"{}\": cpu.max.burst {burst_us} µs is more than the quota {quota_us} µs (the kernel refuses a burst above the quota)",
                spec.path
            ));
        }
        if quota_us + burst_us > MAX_QUOTA_US {
            return Err(format!(
                "cgroup \"{}\": quota {quota_us} µs + burst {burst_us} µs is more than the kernel's limit of {MAX_QUOTA_US} µs",
                spec.path
            ));
        }
    }
    Ok(())
}

/// The groups of `path` from the top down, the path itself last
/// (`/a/b` → `/a`, `/a/b`; nothing for the root).
pub fn lineage(path: &str) -> impl Iterator<Item = &str> {
    let ends = path
        .char_indices()
        .skip(1)
        .filter(|&(_, c)| c == '/')
        .map(|(i, _)| i)
        .chain((path != ROOT).then_some(path.len()));
    ends.map(move |i| &path[..i])
}

/// `Workload::groups` for the group paths in use (by tasks and phases; the
/// root may be among them) and the configured groups: every non-root group
/// named by either, with every ancestor, configured ones with their
/// settings and the rest with the defaults; sorted by path, which puts
/// every parent before its children.
///
/// Checks every path and every configured group ([`finish`]); a group
/// configured twice keeps the last spec.
pub fn build_groups<'a>(
    used: impl IntoIterator<Item = &'a str>,
    configured: &[GroupSpec],
) -> Result<Vec<GroupSpec>, String> {
    let mut out: BTreeMap<String, GroupSpec> = BTreeMap::new();
    let mut add = |path: &str| {
        for p in lineage(path) {
            out.entry(p.to_string())
                .or_insert_with(|| GroupSpec::new(p));
        }
    };
    for p in used {
        validate_path(p)?;
        add(p);
    }
    for g in configured {
        finish(g)?;
        add(&g.path);
    }
    for g in configured {
        out.insert(g.path.clone(), g.clone());
    }
    Ok(out.into_values().collect())
}

/// Every group path the workload's tasks and phases name, the root
/// included when named; in task order, with repeats.
pub fn used_paths(w: &Workload) -> impl Iterator<Item = &str> {
    w.tasks.iter().flat_map(|t| {
        std::iter::once(t.group.as_str())
            .chain(t.program.phases.iter().filter_map(|p| p.group.as_deref()))
    })
}

/// One `--cgroup PATH:FILE=VALUE[:FILE=VALUE...]` argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupArg {
    /// The group.
    pub path: String,
    /// `(file, value)` in the order given; commas in values already
    /// turned into spaces.
    pub settings: Vec<(String, String)>,
}

/// Parses `PATH:FILE=VALUE[:FILE=VALUE...]`; in a VALUE, commas stand for
/// spaces (`/capped:cpu.max=20000,100000`). The values themselves are
/// checked by [`apply_overrides`].
pub fn parse_arg(arg: &str) -> Result<CgroupArg, String> {
    let mut parts = arg.split(':');
    let path = parts.next().unwrap_or_default();
    validate_group_path(path)?;
    let mut settings = Vec::new();
    for item in parts {
        let Some((file, value)) = item.split_once('=') else {
            return Err(format!(
                "'{}' is not FILE=VALUE (expected PATH:FILE=VALUE[:FILE=VALUE...])",
                item.escape_debug()
            ));
        };
        settings.push((file.trim().to_string(), value.replace(',', " ")));
    }
    if settings.is_empty() {
        return Err(format!(
            "'{}' sets nothing (expected PATH:FILE=VALUE[:FILE=VALUE...], e.g. /capped:cpu.max=20000,100000)",
            arg.escape_debug()
        ));
    }
    Ok(CgroupArg {
        path: path.to_string(),
        settings,
    })
}

/// Applies command-line settings on top of the workload's: each argument
/// writes its files to its group (created with the defaults, ancestors
/// too, if the workload has none), in order; then every group is checked
/// with [`finish`] and `w.groups` rebuilt in its canonical order. On an
/// error `w` is left as it was.
pub fn apply_overrides(w: &mut Workload, args: &[CgroupArg]) -> Result<(), String> {
    if args.is_empty() {
        return Ok(());
    }
    let mut groups = w.groups.clone();
    for a in args {
        validate_group_path(&a.path)?;
        let i = match groups.iter().position(|g| g.path == a.path) {
            Some(i) => i,
            None => {
                groups.push(GroupSpec::new(a.path.clone()));
                groups.len() - 1
            }
        };
        for (file, value) in &a.settings {
            apply_setting(&mut groups[i], file, value)
                .map_err(|e| format!("cgroup \"{}\": {e}", a.path))?;
        }
    }
    let built = build_groups(used_paths(w), &groups)?;
    w.groups = built;
    Ok(())
}

/// A non-negative decimal number.
fn number(v: &str) -> Result<u64, String> {
    if v.is_empty() {
        return Err("empty value".into());
    }
    if let Some(rest) = v.strip_prefix('-') {
        if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("{v} is negative"));
        }
    }
    if !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "\"{}\" is not a non-negative integer",
            v.escape_debug()
        ));
    }
    v.parse()
        .map_err(|_| format!("{v} is too large (more than {})", u64::MAX))
}

/// A decimal number that may be negative.
fn signed(v: &str) -> Result<i64, String> {
    v.parse()
        .map_err(|_| format!("\"{}\" is not an integer", v.escape_debug()))
}

fn in_range(n: u64, lo: u64, hi: u64, what: &str) -> Result<u64, String> {
    if n < lo || n > hi {
        return Err(format!("{what} {n} is out of range (expected {lo}..={hi})"));
    }
    Ok(n)
}

/// A quota token: `max` (None) or µs within the kernel's limits, in ns.
fn quota_value(tok: &str) -> Result<Option<u64>, String> {
    if tok == "max" {
        return Ok(None);
    }
    let us = number(tok)?;
    if us < MIN_QUOTA_US {
        return Err(format!(
            "quota {us} µs is below the kernel's minimum of {MIN_QUOTA_US} µs (1 ms)"
        ));
    }
    if us > MAX_QUOTA_US {
        return Err(format!(
            "quota {us} µs is more than the kernel's limit of {MAX_QUOTA_US} µs"
        ));
    }
    Ok(Some(us * NSEC_PER_USEC))
}

/// A period in µs within 1 ms ..= 1 s, in ns.
fn period_value(tok: &str) -> Result<u64, String> {
    let us = number(tok)?;
    if !(MIN_PERIOD_US..=MAX_PERIOD_US).contains(&us) {
        return Err(format!(
            "period {us} µs is out of range (the kernel allows {MIN_PERIOD_US}..={MAX_PERIOD_US} µs, 1 ms to 1 s)"
        ));
    }
    Ok(us * NSEC_PER_USEC)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::program::{TaskSpec, DEFAULT_BW_PERIOD_NS};

    fn spec() -> GroupSpec {
        GroupSpec::new("/g")
    }

    fn set(file: &str, value: &str) -> Result<GroupSpec, String> {
        let mut g = spec();
        apply_setting(&mut g, file, value)?;
        Ok(g)
    }

    /// The error of `file = value`, which must name the file and `needle`.
    fn bad(file: &str, value: &str, needle: &str) {
        let e = set(file, value).expect_err(&format!("{file}={value:?} accepted"));
        assert!(e.starts_with(&format!("{file}: ")), "{e}");
        assert!(e.contains(needle), "{file}={value:?}: {e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn paths() {
        for ok in ["/", "/a", "/a/b/c", "/tg1/tg11", "/a.b-c_d+e@f", "/0"] {
            validate_path(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        for (p, needle) in [
            ("", "start with '/'"),
            ("a/b", "start with '/'"),
            ("/a/", "end with '/'"),
            ("//", "end with '/'"),
            ("/a//b", "empty component"),
            ("/a/./b", "'.'"),
            ("/..", "'..'"),
            ("/a b", "' '"),
            ("/a:b", "':'"),
            ("/a,b", "','"),
            ("/a\nb", "'\\n'"),
            ("/é", "'é'"),
        ] {
            let e = validate_path(p).expect_err(p);
            assert!(e.contains(needle), "{p:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let long = format!("/{}", "x".repeat(256));
        assert!(validate_path(&long).unwrap_err().contains("255"));
        let deep = "/abcdefg".repeat(600);
        assert!(validate_path(&deep).unwrap_err().contains("4095"));
        assert!(validate_group_path("/")
            .unwrap_err()
            .contains("cannot be configured"));
        validate_group_path("/a").unwrap();
    }

    #[test]
    fn cpu_max_forms() {
        let g = set("cpu.max", "20000 100000").unwrap();
        assert_eq!(g.quota_ns, Some(20_000_000));
        assert_eq!(g.period_ns, 100_000_000);
        let g = set("cpu.max", "max 50000").unwrap();
        assert_eq!((g.quota_ns, g.period_ns), (None, 50_000_000));
        // One token changes the quota only.
        let mut g = set("cpu.max", "5000 10000").unwrap();
        apply_setting(&mut g, "cpu.max", "7000").unwrap();
        assert_eq!((g.quota_ns, g.period_ns), (Some(7_000_000), 10_000_000));
        apply_setting(&mut g, "cpu.max", "max").unwrap();
        assert_eq!((g.quota_ns, g.period_ns), (None, 10_000_000));
        // Limits are inclusive; a trailing newline (echo) is fine.
        set("cpu.max", "1000 1000").unwrap();
        set("cpu.max", "1000 1000000\n").unwrap();
        let g = set("cpu.max", &format!("{MAX_QUOTA_US}")).unwrap();
        assert_eq!(g.quota_ns, Some(MAX_QUOTA_US * 1000));
    }

    #[test]
    fn cpu_max_broken() {
        bad(
            "cpu.max",
            "999 100000",
            "below the kernel's minimum of 1000",
        );
        bad("cpu.max", "0", "below");
        bad("cpu.max", "20000 999", "period 999");
        bad("cpu.max", "20000 1000001", "1 ms to 1 s");
        bad("cpu.max", "max 0", "period 0");
        bad("cpu.max", &format!("{}", MAX_QUOTA_US + 1), "limit");
        bad("cpu.max", "-20000 100000", "negative");
        bad("cpu.max", "20000 -100000", "negative");
        bad("cpu.max", "20ms", "not a non-negative integer");
        bad("cpu.max", "1 2 3", "QUOTA PERIOD");
        bad("cpu.max", "", "QUOTA PERIOD");
        bad("cpu.max", "99999999999999999999999", "too large");
        bad("cpu.max", "MAX", "not a non-negative integer");
    }

    #[test]
    fn burst_is_checked_with_the_quota() {
        let mut g = set("cpu.max", "20000 100000").unwrap();
        apply_setting(&mut g, "cpu.max.burst", "20000").unwrap();
        assert_eq!(g.burst_ns, 20_000_000);
        finish(&g).unwrap();
        apply_setting(&mut g, "cpu.max.burst", "20001").unwrap();
        let e = finish(&g).unwrap_err();
        assert!(e.contains("more than the quota 20000"), "{e}");
        assert!(e.contains("\"/g\""), "{e}");
        // Written in either order, only the final state counts.
        let mut g = set("cpu.max.burst", "30000").unwrap();
        finish(&g).unwrap(); // no quota: burst has no effect
        apply_setting(&mut g, "cpu.max", "40000").unwrap();
        finish(&g).unwrap();
        // quota + burst beyond the kernel's limit.
        let mut g = set("cpu.max", &format!("{MAX_QUOTA_US}")).unwrap();
        apply_setting(&mut g, "cpu.max.burst", "1").unwrap();
        assert!(finish(&g).unwrap_err().contains("limit"));
        bad("cpu.max.burst", "-1", "negative");
        bad("cpu.max.burst", "1.5", "not a non-negative integer");
        bad("cpu.max.burst", &format!("{}", MAX_QUOTA_US + 1), "limit");
        bad("cpu.cfs_burst_us", "x", "not a non-negative integer");
        assert!(finish(&GroupSpec::new("/")).is_err());
    }

    #[test]
    fn weights() {
        // Worked by hand: round(w × 1024 / 100).
        for (w, shares) in [
            ("100", 1024),
            ("1", 10),
            ("10000", 102_400),
            ("50", 512),
            ("3", 31),
            ("7", 72),
        ] {
            assert_eq!(set("cpu.weight", w).unwrap().shares, shares, "weight {w}");
        }
        bad("cpu.weight", "0", "out of range (expected 1..=10000)");
        bad("cpu.weight", "10001", "out of range");
        bad("cpu.weight", "-5", "negative");
        bad("cpu.weight", "heavy", "not a non-negative integer");
        for (n, shares) in [("0", 1024), ("-20", 88761), ("19", 15), ("5", 335)] {
            assert_eq!(set("cpu.weight.nice", n).unwrap().shares, shares);
        }
        bad("cpu.weight.nice", "20", "-20..=19");
        bad("cpu.weight.nice", "-21", "-20..=19");
        bad("cpu.weight.nice", "x", "not an integer");
        assert_eq!(set("cpu.shares", "2").unwrap().shares, 2);
        assert_eq!(set("cpu.shares", "262144").unwrap().shares, 262_144);
        bad("cpu.shares", "1", "2..=262144");
        bad("cpu.shares", "262145", "2..=262144");
        bad("cpu.shares", "-1024", "negative");
    }

    #[test]
    fn idle() {
        assert!(set("cpu.idle", "1").unwrap().idle);
        assert!(!set("cpu.idle", "0").unwrap().idle);
        bad("cpu.idle", "2", "not 0 or 1");
        bad("cpu.idle", "-1", "not 0 or 1");
        bad("cpu.idle", "yes", "not an integer");
    }

    #[test]
    fn cgroup_v1_files() {
        let g = set("cpu.cfs_quota_us", "25000").unwrap();
        assert_eq!(g.quota_ns, Some(25_000_000));
        assert_eq!(g.period_ns, DEFAULT_BW_PERIOD_NS);
        let mut g = set("cpu.cfs_period_us", "50000").unwrap();
        assert_eq!(g.period_ns, 50_000_000);
        apply_setting(&mut g, "cpu.cfs_quota_us", "5000").unwrap();
        apply_setting(&mut g, "cpu.cfs_quota_us", "-1").unwrap();
        assert_eq!(g.quota_ns, None);
        bad("cpu.cfs_quota_us", "-2", "write -1 for no limit");
        bad("cpu.cfs_quota_us", "999", "below");
        bad("cpu.cfs_quota_us", "max", "cgroup v2 spelling");
        bad("cpu.cfs_period_us", "999", "out of range");
        bad("cpu.cfs_period_us", "2000000", "out of range");
        bad("cpu.cfs_period_us", "-1", "negative");
        let g = set("cpu.cfs_burst_us", "100").unwrap();
        assert_eq!(g.burst_ns, 100_000);
    }

    #[test]
    fn unknown_files() {
        bad("cpu.uclamp.min", "10", "unknown cpu controller file");
        bad("memory.max", "1G", "cpu.max, cpu.max.burst");
        bad("", "1", "unknown");
    }

    #[test]
    fn lineage_and_build() {
        assert_eq!(
            lineage("/a/b/c").collect::<Vec<_>>(),
            ["/a", "/a/b", "/a/b/c"]
        );
        assert_eq!(lineage("/x").collect::<Vec<_>>(), ["/x"]);
        assert_eq!(lineage("/").count(), 0);
        let mut capped = GroupSpec::new("/b/capped");
        apply_setting(&mut capped, "cpu.max", "20000").unwrap();
        let groups = build_groups(
            ["/", "/a-x", "/a/b", "/a/b", "/a"],
            std::slice::from_ref(&capped),
        )
        .unwrap();
        let paths: Vec<&str> = groups.iter().map(|g| g.path.as_str()).collect();
        assert_eq!(paths, ["/a", "/a-x", "/a/b", "/b", "/b/capped"]);
        for (i, g) in groups.iter().enumerate() {
            let parent = g.parent_path();
            assert!(
                parent == "/" || groups[..i].iter().any(|p| p.path == parent),
                "{} before its parent",
                g.path
            );
        }
        assert_eq!(groups[4], capped);
        assert_eq!(groups[3], GroupSpec::new("/b"));
        assert!(build_groups(["a"], &[]).unwrap_err().contains("'/'"));
        assert!(build_groups([], &[GroupSpec::new("/")]).is_err());
        let mut over = GroupSpec::new("/o");
        over.quota_ns = Some(1_000_000);
        over.burst_ns = 2_000_000;
        assert!(build_groups([], &[over]).unwrap_err().contains("burst"));
        assert!(build_groups([], &[]).unwrap().is_empty());
    }

    #[test]
    fn cli_arguments() {
        let a = parse_arg("/capped:cpu.max=20000,100000:cpu.weight=50").unwrap();
        assert_eq!(a.path, "/capped");
        assert_eq!(
            a.settings,
            [
                ("cpu.max".to_string(), "20000 100000".to_string()),
                ("cpu.weight".to_string(), "50".to_string())
            ]
        );
        for (arg, needle) in [
            ("/capped", "sets nothing"),
            ("/capped:", "not FILE=VALUE"),
            ("/capped:cpu.max", "not FILE=VALUE"),
            ("capped:cpu.max=max", "start with '/'"),
            ("/:cpu.weight=100", "root"),
            ("", "start with '/'"),
        ] {
            let e = parse_arg(arg).expect_err(arg);
            assert!(e.contains(needle), "{arg}: {e}");
        }
    }

    #[test]
    fn overrides_on_a_workload() {
        let mut w = Workload::default();
        let mut t = TaskSpec::looping("t", 0, schedlab_core::program::Policy::Normal, vec![]);
        t.group = "/a/b".into();
        w.tasks.push(t);
        let mut ab = GroupSpec::new("/a/b");
        apply_setting(&mut ab, "cpu.max", "20000 100000").unwrap();
        apply_setting(&mut ab, "cpu.max.burst", "10000").unwrap();
        apply_setting(&mut ab, "cpu.weight", "50").unwrap();
        w.groups = build_groups(used_paths(&w), std::slice::from_ref(&ab)).unwrap();
        assert_eq!(w.groups.len(), 2);
        // Overrides write on top of the file's settings; a new group with
        // no task is created with its ancestors.
        let args = [
            parse_arg("/a/b:cpu.max=5000:cpu.max.burst=0").unwrap(),
            parse_arg("/c/d:cpu.idle=1").unwrap(),
        ];
        apply_overrides(&mut w, &args).unwrap();
        let paths: Vec<&str> = w.groups.iter().map(|g| g.path.as_str()).collect();
        assert_eq!(paths, ["/a", "/a/b", "/c", "/c/d"]);
        let g = &w.groups[1];
        assert_eq!(
            (g.quota_ns, g.period_ns, g.burst_ns),
            (Some(5_000_000), 100_000_000, 0)
        );
        assert_eq!(g.shares, 512, "the file's weight stays");
        assert!(w.groups[3].idle);
        // The cross-file check runs once everything is applied.
        let e =
            apply_overrides(&mut w, &[parse_arg("/a/b:cpu.max.burst=6000").unwrap()]).unwrap_err();
        assert!(e.contains("more than the quota"), "{e}");
        let e = apply_overrides(&mut w, &[parse_arg("/a/b:cpu.max=10").unwrap()]).unwrap_err();
        assert!(e.starts_with("cgroup \"/a/b\": cpu.max: quota 10"), "{e}");
        // Nothing to apply leaves the workload alone.
        let before = w.clone();
        apply_overrides(&mut w, &[]).unwrap();
        assert_eq!(w, before);
    }
}

//! Limits on what a workload may name and how big it may be, checked by
//! the readers before anything is simulated: everything that can fail is
//! checked before simulating.
//!
//! Names that become file names: a task name `T` becomes the rt-app log
//! `<log_basename>-T-<index>.log` (and `-<index>-<nnnn>` for forked
//! threads) in the output directory, so `T` and `log_basename` must be
//! usable as one path component: no NUL, no `/`, not `.` or `..`, and
//! short enough that the longest log file name stays within the 255-byte
//! `NAME_MAX` of Linux file systems. [`MAX_NAME_BYTES`] is what the two
//! may take together; the rest (55 bytes) is room for the `-`, the thread
//! index (at most 6 digits), a fork number and `.log`.

/// Bytes a task name and `log_basename` may take together (each alone
/// too): 255 (`NAME_MAX`) less room for `-<index>-<fork>.log`.
pub const MAX_NAME_BYTES: usize = 200;

/// Checks that `name` (what: `task name`, `log_basename`) can be one path
/// component of an output file name. The message names the problem, not
/// the place; the caller adds FILE:LINE:COL.
pub fn check_file_name_part(what: &str, name: &str) -> Result<(), String> {
    let shown = || {
        let s: String = name.chars().take(40).collect();
        let more = if name.chars().count() > 40 { "..." } else { "" };
        format!("\"{}{more}\"", s.escape_debug())
    };
    if name.contains('\0') {
        return Err(format!("{what} {} contains a NUL byte", shown()));
    }
    if name.contains('/') {
        return Err(format!(
            "{what} {} contains '/' (it becomes part of a file name)",
            shown()
        ));
    }
    if name == "." || name == ".." {
        return Err(format!("{what} must not be \"{name}\""));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "{what} {} is {} bytes, more than the {MAX_NAME_BYTES} a log file name allows",
            shown(),
            name.len()
        ));
    }
    Ok(())
}

/// Checks that `log_basename` and `task` together leave the longest log
/// file name within `NAME_MAX`.
pub fn check_log_name(log_basename: &str, task: &str) -> Result<(), String> {
    if log_basename.len() + task.len() > MAX_NAME_BYTES {
        return Err(format!(
            "task name ({} bytes) and log_basename ({} bytes) together are more than the {MAX_NAME_BYTES} bytes a log file name allows",
            task.len(),
            log_basename.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_cannot_be_file_names_are_refused() {
        for bad in ["a/b", "..", ".", "a\0b"] {
            assert!(check_file_name_part("task name", bad).is_err(), "{bad:?}");
        }
        let long = "x".repeat(250);
        let e = check_file_name_part("task name", &long).unwrap_err();
        assert!(e.contains("250 bytes"), "{e}");
        assert!(check_file_name_part("task name", "cfs_thread").is_ok());
        assert!(check_file_name_part("task name", "a..b").is_ok());
        assert!(check_log_name(&"b".repeat(100), &"t".repeat(101)).is_err());
        assert!(check_log_name("rt-app", &"t".repeat(194)).is_ok());
    }
}

/// The default of [`max_tasks`]: 100 000 threads.
pub const DEFAULT_MAX_TASKS: u64 = 100_000;

static MAX_TASKS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(DEFAULT_MAX_TASKS);

/// Most threads a workload may create (an rt-app file with its forks, a
/// generator): [`DEFAULT_MAX_TASKS`] unless the program raised it with
/// [`set_max_tasks`] (`schedlab --max-tasks`). The readers refuse more
/// before building per-task state.
pub fn max_tasks() -> u64 {
    MAX_TASKS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Sets [`max_tasks`] for the process (the CLI does this once, from
/// `--max-tasks`, before reading the workload).
pub fn set_max_tasks(n: u64) {
    MAX_TASKS.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// Most phases one rt-app task may have (phases are not threads, so
/// `--max-tasks` does not count them).
pub const MAX_PHASES: u64 = 100_000;

/// The hint appended to a refusal for too many tasks.
pub fn max_tasks_hint() -> &'static str {
    "--max-tasks raises the limit"
}

/// Longest run the simulator accepts, from the file (`global.duration`)
/// or the command line (`--duration`), even with `--max-duration`: 365
/// days, in seconds (`schedlab_core::sched::init::MAX_DURATION_NS`:
/// vruntime of a nice-19 task grows 68x faster than time, so much longer
/// runs near u64 overflow).
pub const MAX_DURATION_S: u64 = 365 * 24 * 3600;
/// [`MAX_DURATION_S`] in ns.
pub const MAX_DURATION_NS: u64 = MAX_DURATION_S * 1_000_000_000;
/// Longest run accepted unless `--max-duration` raises it: one day of
/// simulated time, seconds. A longer run is an explicit choice (it takes
/// hours of wall time and its logs grow with it).
pub const DEFAULT_MAX_DURATION_S: u64 = 24 * 3600;

static MAX_DURATION: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(DEFAULT_MAX_DURATION_S * 1_000_000_000);

/// Longest run accepted now, ns: [`DEFAULT_MAX_DURATION_S`] unless the
/// program changed it with [`set_max_duration_ns`] (`--max-duration`,
/// kept to the nanosecond: `--max-duration 1500ms` refuses 2 s).
pub fn max_duration_ns() -> u64 {
    MAX_DURATION.load(std::sync::atomic::Ordering::Relaxed)
}

/// [`max_duration_ns`] in whole seconds, rounded down (what a duration
/// in whole seconds, such as `global.duration`, may reach).
pub fn max_duration_s() -> u64 {
    max_duration_ns() / 1_000_000_000
}

/// Sets [`max_duration_ns`] for the process (capped at [`MAX_DURATION_NS`]).
pub fn set_max_duration_ns(ns: u64) {
    MAX_DURATION.store(
        ns.min(MAX_DURATION_NS),
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// Sets the limit in whole seconds ([`set_max_duration_ns`]).
pub fn set_max_duration_s(s: u64) {
    set_max_duration_ns(s.min(MAX_DURATION_S) * 1_000_000_000);
}

/// A duration limit for messages: `86400 s (1 day)`, `1.5 s`, `0.25 s`
/// (days only from one day up).
pub fn duration_limit_text(ns: u64) -> String {
    let s = format!("{} s", schedlab_core::time::fmt_secs_exact(ns));
    const DAY: u64 = 86_400 * 1_000_000_000;
    match ns {
        DAY => format!("{s} (1 day)"),
        n if n > DAY && n % DAY == 0 => format!("{s} ({} days)", n / DAY),
        n if n > DAY => format!("{s} ({:.2} days)", n as f64 / DAY as f64),
        _ => s,
    }
}

/// The default limit on the CPUs of a machine (`--max-cpus` raises it up
/// to `schedlab_core::machine::MAX_CPUS`): 4096, the largest machine the
/// property tests draw.
pub const DEFAULT_MAX_CPUS: usize = 4096;

/// The default limit on the rt-app logs a run may write (`--max-output`
/// raises it): 4 GiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 4 << 30;

/// Counts the members of the top-level `"tasks"` object of an rt-app file
/// without parsing it (no allocation; one pass over the bytes), so that a
/// file with a million tasks is refused before its syntax tree is built.
/// Returns the count and the 1-based line and column of the `tasks` key,
/// or `None` when there is no such object (the parser reports what is
/// wrong). Counts the `:` at the object's own depth, outside strings, so
/// bare keys count too; duplicates count each time.
pub fn quick_task_count(text: &str) -> Option<(u64, u32, u32)> {
    let b = text.as_bytes();
    let (mut line, mut col) = (1u32, 1u32);
    let mut depth = 0u32;
    let (mut in_str, mut esc) = (false, false);
    let mut str_start = (0usize, 1u32, 1u32);
    let mut bare: Option<(usize, u32, u32)> = None;
    let mut last_key: Option<(&str, u32, u32)> = None;
    let mut cur_key: Option<(&str, u32, u32)> = None;
    let mut tasks: Option<(u32, u32)> = None;
    let mut count = 0u64;
    for (i, &c) in b.iter().enumerate() {
        if in_str {
            if esc {
                esc = false;
            } else if c == b'\\' {
                esc = true;
            } else if c == b'"' {
                in_str = false;
                if depth == 1 {
                    last_key = Some((&text[str_start.0 + 1..i], str_start.1, str_start.2));
                }
            }
        } else {
            let ident = c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
            if let Some((s, l, k)) = bare {
                if !ident {
                    last_key = Some((&text[s..i], l, k));
                    bare = None;
                }
            }
            match c {
                b'"' => {
                    in_str = true;
                    str_start = (i, line, col);
                }
                b'{' | b'[' => {
                    depth += 1;
                    if depth == 2 && c == b'{' {
                        if let Some(("tasks", l, k)) = cur_key {
                            tasks = Some((l, k));
                        }
                    }
                }
                b'}' | b']' => {
                    if depth == 2 {
                        if let Some((l, k)) = tasks {
                            return Some((count, l, k));
                        }
                    }
                    depth = depth.saturating_sub(1);
                }
                b':' if depth == 1 => cur_key = last_key,
                b':' if depth == 2 && tasks.is_some() => count += 1,
                b',' if depth == 1 => cur_key = None,
                _ if depth == 1 && bare.is_none() && ident => bare = Some((i, line, col)),
                _ => {}
            }
        }
        if c == b'\n' {
            line += 1;
            col = 1;
        } else if c & 0xC0 != 0x80 {
            col += 1;
        }
    }
    tasks.map(|(l, k)| (count, l, k))
}

#[cfg(test)]
mod quick_count_tests {
    use super::quick_task_count;

    #[test]
    fn counts_the_tasks_members_only() {
        let t = "{\"global\": {\"a\": 1},\n \"tasks\": {\"x\": {\"run\": 1, \"p\": {\"q\": 2}}, y: {\"s:\": \"}\"}}}";
        assert_eq!(quick_task_count(t), Some((2, 2, 2)));
        assert_eq!(quick_task_count("{tasks: {}}"), Some((0, 1, 2)));
        assert_eq!(quick_task_count("[1]"), None);
    }
}

/// Bytes of a heap block of `n` bytes in glibc's malloc: the request plus
/// an 8-byte size header, rounded up to 16, at least 32 (malloc.c's
/// documented chunk layout on 64-bit); nothing for `n == 0` (an empty
/// `Vec` or `String` does not allocate).
pub fn heap_block(n: usize) -> u64 {
    if n == 0 {
        0
    } else {
        ((n + 8).div_ceil(16) * 16).max(32) as u64
    }
}

/// Bytes one thread of a built workload takes: its [`TaskSpec`] and what
/// it owns on the heap (names, CPU lists, phases and their ops, counted
/// by capacity). The simulator keeps a copy of every thread's spec
/// (`schedlab_core::task::Task::spec`), so a run holds this twice.
///
/// [`TaskSpec`]: schedlab_core::program::TaskSpec
pub fn task_bytes(t: &schedlab_core::program::TaskSpec) -> u64 {
    use schedlab_core::program::{EventMark, Op, Phase, TaskSpec};
    use std::mem::size_of;
    let cpus = |c: &Option<Vec<u32>>| c.as_ref().map_or(0, |v| heap_block(v.capacity() * 4));
    let phases: u64 = t
        .program
        .phases
        .iter()
        .map(|ph| {
            heap_block(ph.name.capacity())
                + heap_block(ph.ops.capacity() * size_of::<Op>())
                + cpus(&ph.cpus)
                + heap_block(ph.marks.capacity() * size_of::<EventMark>())
                + ph.marks
                    .iter()
                    .map(|m| heap_block(m.desc.capacity()))
                    .sum::<u64>()
                + ph.group.as_ref().map_or(0, |g| heap_block(g.capacity()))
        })
        .sum();
    size_of::<TaskSpec>() as u64
        + heap_block(t.name.capacity())
        + heap_block(t.group.capacity())
        + cpus(&t.cpus)
        + heap_block(t.program.phases.capacity() * size_of::<Phase>())
        + phases
}

static MAX_BUILD_BYTES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

/// Memory a generator's threads may take, counted twice (the workload as
/// built and the simulator's copy of each thread, [`task_bytes`]): no
/// limit unless the program set one with [`set_max_build_bytes`] (the CLI
/// sets the memory the machine has available; the fuzz targets, less than
/// libFuzzer's RSS limit).
pub fn max_build_bytes() -> u64 {
    MAX_BUILD_BYTES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Sets [`max_build_bytes`] for the process.
pub fn set_max_build_bytes(n: u64) {
    MAX_BUILD_BYTES.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// Refuses, before anything is built, a workload whose threads would take
/// `built` bytes as built (so twice that while simulating) when that is
/// more than [`max_build_bytes`]; `what` says what one thread holds.
pub fn check_build_bytes(built: u64, what: &str) -> Result<(), String> {
    let need = built.saturating_mul(2);
    let max = max_build_bytes();
    if need > max {
        let gib = |b: u64| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64);
        return Err(format!(
            "its threads would take about {} of memory ({} as built, as much again for the simulator's copy; {what}), more than the {} available: use fewer threads",
            gib(need),
            gib(built),
            gib(max)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod build_bytes_tests {
    use super::*;

    #[test]
    fn heap_blocks_follow_glibc_chunks() {
        assert_eq!(heap_block(0), 0);
        assert_eq!(heap_block(1), 32);
        assert_eq!(heap_block(24), 32);
        assert_eq!(heap_block(25), 48);
        assert_eq!(heap_block(832), 848);
    }

    #[test]
    fn a_build_past_the_limit_is_refused_with_both_sizes() {
        set_max_build_bytes(3 << 30);
        let e = check_build_bytes(2 << 30, "x").unwrap_err();
        assert!(
            e.contains("4.0 GiB") && e.contains("2.0 GiB") && e.contains("3.0 GiB"),
            "{e}"
        );
        assert!(check_build_bytes(1 << 30, "x").is_ok());
        set_max_build_bytes(u64::MAX);
        assert!(check_build_bytes(u64::MAX, "x").is_ok());
    }
}

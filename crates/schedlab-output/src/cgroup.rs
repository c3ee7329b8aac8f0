//! cgroup v2 `cpu.stat` files (formats-spec.md 6): one `key value` line per
//! counter, in the kernel's order, as `cat /sys/fs/cgroup/<path>/cpu.stat`
//! shows them with the cpu controller enabled (no core scheduling, so no
//! `core_sched.force_idle_usec`).

use crate::summary::GroupCpuStat;

/// The keys, in cpu.stat's order.
pub const CPU_STAT_KEYS: [&str; 8] = [
    "usage_usec",
    "user_usec",
    "system_usec",
    "nr_periods",
    "nr_throttled",
    "throttled_usec",
    "nr_bursts",
    "burst_usec",
];

/// The text of a `cpu.stat` file.
pub fn write_cpu_stat(s: &GroupCpuStat) -> String {
    let mut out = String::new();
    for k in CPU_STAT_KEYS {
        out.push_str(k);
        out.push(' ');
        out.push_str(&s.get(k).to_string());
        out.push('\n');
    }
    out
}

/// Reads a `cpu.stat` file (real or written by [`write_cpu_stat`]). Keys
/// it does not know (`core_sched.force_idle_usec`, newer ones) are skipped;
/// a malformed line is an error naming its line number.
pub fn read_cpu_stat(text: &str) -> Result<GroupCpuStat, String> {
    let mut s = GroupCpuStat::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut it = line.split_whitespace();
        let (Some(k), Some(v), None) = (it.next(), it.next(), it.next()) else {
            return Err(format!(
                "line {}: expected 'key value', got '{line}'",
                i + 1
            ));
        };
        let v: u64 = v
            .parse()
            .map_err(|_| format!("line {}: '{v}' is not a counter", i + 1))?;
        if CPU_STAT_KEYS.contains(&k) {
            s.set(k, v);
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// formats-spec.md's example, as a real kernel prints it.
    const REAL: &str = "usage_usec 7341200\nuser_usec 7100011\nsystem_usec 241189\nnr_periods 120\nnr_throttled 37\nthrottled_usec 2290034\nnr_bursts 0\nburst_usec 0\n";

    #[test]
    fn real_file_round_trips() {
        let s = read_cpu_stat(REAL).unwrap();
        assert_eq!(s.usage_usec, 7341200);
        assert_eq!(s.nr_throttled, 37);
        assert_eq!(s.throttled_usec, 2290034);
        assert_eq!(write_cpu_stat(&s), REAL);
    }

    #[test]
    fn unknown_keys_are_skipped() {
        let s = read_cpu_stat("usage_usec 5\ncore_sched.force_idle_usec 9\n").unwrap();
        assert_eq!(s.usage_usec, 5);
    }

    #[test]
    fn broken_lines_are_errors() {
        assert!(read_cpu_stat("usage_usec\n")
            .unwrap_err()
            .contains("line 1"));
        assert!(read_cpu_stat("usage_usec 5\nnr_periods x\n")
            .unwrap_err()
            .contains("line 2"));
        assert!(read_cpu_stat("a 1 2\n").is_err());
        assert!(read_cpu_stat("nr_periods -1\n").is_err());
    }
}

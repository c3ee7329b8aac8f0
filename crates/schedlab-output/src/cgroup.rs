//! cgroup v2 `cpu.stat` files (formats.md 6): one `key value` line per
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

fn values(s: &GroupCpuStat) -> [u64; 8] {
    [
        s.usage_usec,
        s.user_usec,
        s.system_usec,
        s.nr_periods,
        s.nr_throttled,
        s.throttled_usec,
        s.nr_bursts,
        s.burst_usec,
    ]
}

/// The text of a `cpu.stat` file.
pub fn write_cpu_stat(s: &GroupCpuStat) -> String {
    let mut out = String::new();
    for (k, v) in CPU_STAT_KEYS.iter().zip(values(s)) {
        out.push_str(k);
        out.push(' ');
        out.push_str(&v.to_string());
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
        match k {
            "usage_usec" => s.usage_usec = v,
            "user_usec" => s.user_usec = v,
            "system_usec" => s.system_usec = v,
            "nr_periods" => s.nr_periods = v,
            "nr_throttled" => s.nr_throttled = v,
            "throttled_usec" => s.throttled_usec = v,
            "nr_bursts" => s.nr_bursts = v,
            "burst_usec" => s.burst_usec = v,
            _ => {}
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// formats.md's example, as a real kernel prints it.
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

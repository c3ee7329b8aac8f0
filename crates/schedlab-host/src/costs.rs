//! The host's measured machine costs (`costs.json` of a recording), which
//! `validate` gives the machine it imports from the recording's sysfs copy
//! in place of the size-based guess of `machine::sysfs::imported_costs`.
//!
//! The file is written by `scripts/host/wakecost.c --json FILE` (method and
//! figures in docs/syscall-costs.md, "Wakeups, switches and IPIs"):
//!
//! ```json
//! { "version": 1, "context_switch_ns": 790, "wakeup_ns": 589,
//!   "ipi_send_ns": 8609, "ipi_latency_ns": 15704, "source": "..." }
//! ```
//!
//! Optionally also `pipe_write_ns`, `pipe_read_ns`, `unix_write_ns`,
//! `unix_read_ns` (all four or none): one 100-byte message's call in
//! hackbench's pattern on one CPU, replacing the scaled syscall figures.
//! Optionally also `pipe_write_xcpu_ns`, `pipe_read_xcpu_ns`,
//! `unix_write_xcpu_ns`, `unix_read_xcpu_ns` (all four or none): the extra
//! of each call when the two sides run on the two CPUs (wakecost's stream
//! cases on two CPUs minus on one), charged to a call whose channel was
//! last used on another CPU (`MachineCosts::channel_xcpu_ns`).
//! Optionally also `wakeup_xcpu_ns` and `switch_xcpu_ns` (both or none):
//! a remote wake-up onto a busy CPU against a local one (wakecost's
//! busy-target case, futex channel): the waker's extra for enqueueing on
//! the other CPU's runqueue, and the wakee's extra at its switch in there
//! (`MachineCosts::wakeup_xcpu_ns` / `switch_xcpu_ns`, sched/ttwu_xcpu.rs).
//!
//! Optionally also `pipe_sleep_ns` and `unix_sleep_ns` (both or none): the
//! sleep path of a pipe call and of a unix call that blocks (wakecost's
//! one-CPU hop less the two calls, the wakeup and the switch;
//! `MachineCosts::chan_sleep_ns`, charged by the woken call's second pass).
//!
//! Every figure is required and a non-negative integer; unknown keys are
//! refused, so a typo cannot silently leave a guess in place. The syscall
//! figures were measured on the same host, so they apply unscaled.

use schedlab_core::machine::MachineCosts;
use std::path::Path;

/// The four measured figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostCosts {
    /// One context switch.
    pub context_switch_ns: u64,
    /// One local `try_to_wake_up`.
    pub wakeup_ns: u64,
    /// The sender's CPU time of one IPI to a halted CPU.
    pub ipi_send_ns: u64,
    /// From the IPI's send to the target running, idle exit included.
    pub ipi_latency_ns: u64,
    /// Pipe write/read and AF_UNIX write/read of a 100-byte message in
    /// hackbench's pattern on one CPU (optional: all four or none).
    pub channel_ns: Option<[u64; 4]>,
    /// The cross-CPU extra of those four calls (optional: all or none).
    pub channel_xcpu_ns: Option<[u64; 4]>,
    /// A remote wake-up's extra for the waker and for the wakee's switch
    /// in (optional: both or none).
    pub ttwu_xcpu_ns: Option<[u64; 2]>,
    /// The sleep path of a blocking pipe call and unix call (optional:
    /// both or none).
    pub chan_sleep_ns: Option<[u64; 2]>,
}

const FIELDS: [&str; 4] = [
    "context_switch_ns",
    "wakeup_ns",
    "ipi_send_ns",
    "ipi_latency_ns",
];
const CHANNEL: [&str; 4] = [
    "pipe_write_ns",
    "pipe_read_ns",
    "unix_write_ns",
    "unix_read_ns",
];
const TTWU_XCPU: [&str; 2] = ["wakeup_xcpu_ns", "switch_xcpu_ns"];
const SLEEP: [&str; 2] = ["pipe_sleep_ns", "unix_sleep_ns"];
const XCPU: [&str; 4] = [
    "pipe_write_xcpu_ns",
    "pipe_read_xcpu_ns",
    "unix_write_xcpu_ns",
    "unix_read_xcpu_ns",
];

/// Parses the text of a costs.json; the error is one line naming `path`.
pub fn parse(path: &Path, text: &str) -> Result<HostCosts, String> {
    let at = path.display();
    let obj = crate::json_file::object(
        path,
        text,
        &[
            &FIELDS,
            &CHANNEL,
            &XCPU,
            &TTWU_XCPU,
            &SLEEP,
            &["version", "source"],
        ],
    )?;
    if obj.get("version").and_then(|x| x.as_u64()) != Some(1) {
        return Err(format!("{at}: 'version' must be 1"));
    }
    let get = |k: &str| {
        obj.get(k)
            .and_then(|x| x.as_u64())
            .ok_or_else(|| format!("{at}: '{k}' missing or not a non-negative integer"))
    };
    let four = |keys: &[&str; 4]| -> Result<Option<[u64; 4]>, String> {
        match keys.iter().filter(|k| obj.contains_key(**k)).count() {
            0 => Ok(None),
            4 => Ok(Some([
                get(keys[0])?,
                get(keys[1])?,
                get(keys[2])?,
                get(keys[3])?,
            ])),
            _ => Err(format!("{at}: give all of {} or none", keys.join(", "))),
        }
    };
    let channel_ns = four(&CHANNEL)?;
    let channel_xcpu_ns = four(&XCPU)?;
    let two = |keys: &[&str; 2]| -> Result<Option<[u64; 2]>, String> {
        match keys.iter().filter(|k| obj.contains_key(**k)).count() {
            0 => Ok(None),
            2 => Ok(Some([get(keys[0])?, get(keys[1])?])),
            _ => Err(format!("{at}: give both of {} or none", keys.join(", "))),
        }
    };
    let ttwu_xcpu_ns = two(&TTWU_XCPU)?;
    let chan_sleep_ns = two(&SLEEP)?;
    Ok(HostCosts {
        channel_ns,
        channel_xcpu_ns,
        ttwu_xcpu_ns,
        chan_sleep_ns,
        context_switch_ns: get(FIELDS[0])?,
        wakeup_ns: get(FIELDS[1])?,
        ipi_send_ns: get(FIELDS[2])?,
        ipi_latency_ns: get(FIELDS[3])?,
    })
}

impl HostCosts {
    /// `c` with the measured figures in place (cache-line figures stay).
    pub fn apply(&self, c: &mut MachineCosts) {
        c.context_switch_ns = self.context_switch_ns;
        c.wakeup_ns = self.wakeup_ns;
        c.ipi_send_ns = self.ipi_send_ns;
        c.ipi_latency_ns = self.ipi_latency_ns;
        c.syscall_scale = [1, 1];
        c.channel_ns = self.channel_ns;
        c.channel_xcpu_ns = self.channel_xcpu_ns;
        c.wakeup_xcpu_ns = self.ttwu_xcpu_ns.map(|x| x[0]);
        c.switch_xcpu_ns = self.ttwu_xcpu_ns.map(|x| x[1]);
        c.chan_sleep_ns = self.chan_sleep_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<HostCosts, String> {
        parse(Path::new("rec/costs.json"), s)
    }

    #[test]
    fn a_good_file_parses_and_applies() {
        let c = p(r#"{"version":1,"context_switch_ns":790,"wakeup_ns":589,"ipi_send_ns":8609,"ipi_latency_ns":15704,"source":"x"}"#).unwrap();
        let mut m = schedlab_core::machine::presets::default_costs();
        c.apply(&mut m);
        assert_eq!(
            (m.context_switch_ns, m.ipi_send_ns, m.syscall_scale),
            (790, 8609, [1, 1])
        );
        assert_eq!(m.channel_ns, None);
        let c = p(r#"{"version":1,"context_switch_ns":1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1,"pipe_write_ns":5,"pipe_read_ns":6,"unix_write_ns":7,"unix_read_ns":8}"#).unwrap();
        c.apply(&mut m);
        assert_eq!(m.channel_ns, Some([5, 6, 7, 8]));
        assert_eq!(m.channel_xcpu_ns, None);
        let c = p(r#"{"version":1,"context_switch_ns":1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1,"pipe_write_xcpu_ns":9,"pipe_read_xcpu_ns":10,"unix_write_xcpu_ns":11,"unix_read_xcpu_ns":12}"#).unwrap();
        c.apply(&mut m);
        assert_eq!(m.channel_xcpu_ns, Some([9, 10, 11, 12]));
        assert_eq!((m.wakeup_xcpu_ns, m.switch_xcpu_ns), (None, None));
        let c = p(r#"{"version":1,"context_switch_ns":1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1,"wakeup_xcpu_ns":1150,"switch_xcpu_ns":1030}"#).unwrap();
        c.apply(&mut m);
        assert_eq!(
            (m.wakeup_xcpu_ns, m.switch_xcpu_ns),
            (Some(1150), Some(1030))
        );
        assert_eq!(m.chan_sleep_ns, None);
        let c = p(r#"{"version":1,"context_switch_ns":1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1,"pipe_sleep_ns":640,"unix_sleep_ns":810}"#).unwrap();
        c.apply(&mut m);
        assert_eq!(m.chan_sleep_ns, Some([640, 810]));
    }

    #[test]
    fn broken_files_give_one_line_naming_the_file() {
        for (text, want) in [
            ("{", "rec/costs.json:1:"),
            ("[]", "expected a JSON object"),
            (r#"{"version":2}"#, "'version' must be 1"),
            (
                r#"{"version":1,"wakeup_ns":1}"#,
                "'context_switch_ns' missing",
            ),
            (
                r#"{"version":1,"context_switch_ns":-1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1}"#,
                "'context_switch_ns' missing or not",
            ),
            (
                r#"{"version":1,"context_switch":1}"#,
                "unknown key 'context_switch'",
            ),
            (
                r#"{"version":1,"context_switch_ns":1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1,"pipe_read_ns":3}"#,
                "give all of pipe_write_ns",
            ),
            (
                r#"{"version":1,"context_switch_ns":1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1,"unix_read_xcpu_ns":3}"#,
                "give all of pipe_write_xcpu_ns",
            ),
            (
                r#"{"version":1,"context_switch_ns":1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1,"pipe_write_xcpu_ns":1,"pipe_read_xcpu_ns":1,"unix_write_xcpu_ns":1,"unix_read_xcpu_ns":"x"}"#,
                "'unix_read_xcpu_ns' missing or not",
            ),
            (
                r#"{"version":1,"context_switch_ns":1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1,"switch_xcpu_ns":3}"#,
                "give both of wakeup_xcpu_ns, switch_xcpu_ns",
            ),
            (
                r#"{"version":1,"context_switch_ns":1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1,"wakeup_xcpu_ns":-3,"switch_xcpu_ns":3}"#,
                "'wakeup_xcpu_ns' missing or not",
            ),
            (
                r#"{"version":1,"context_switch_ns":1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1,"unix_sleep_ns":3}"#,
                "give both of pipe_sleep_ns, unix_sleep_ns",
            ),
            (
                r#"{"version":1,"context_switch_ns":1,"wakeup_ns":1,"ipi_send_ns":1,"ipi_latency_ns":1,"pipe_sleep_ns":1.5,"unix_sleep_ns":3}"#,
                "'pipe_sleep_ns' missing or not",
            ),
        ] {
            let e = p(text).unwrap_err();
            assert!(
                e.contains(want) && e.starts_with("rec/costs.json"),
                "{text}: {e}"
            );
            assert!(!e.contains('\n'));
        }
    }
}

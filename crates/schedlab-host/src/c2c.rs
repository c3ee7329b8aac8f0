//! The recording's vCPU placement (`c2c.json`), which `validate` gives the
//! machine it imports from the recording's sysfs copy as the cache-line
//! transfer latency between the two recorded CPUs, in place of the
//! import's size-based guess (`machine::sysfs::imported_costs`: 40 ns
//! within an LLC).
//!
//! On a VM the host places the vCPUs: on this project's 2-vCPU machine
//! they move between one core's two threads (~24-30 ns) and two cores
//! (~122 ns), and the guest's topology cannot tell. `scripts/host/validate-host.sh`
//! therefore measures the placement around every hackbench recording with
//! `scripts/host/c2c.c` (a CAS ping-pong of one line, round trip / 2) and writes:
//!
//! ```json
//! { "tool": "scripts/host/c2c.c", "cpus": [0, 1],
//!   "before_ns": 27.3, "before_range_ns": [26.5, 27.4],
//!   "after_ns": 29.7, "after_range_ns": [29.2, 29.8] }
//! ```
//!
//! The model takes the mean of the two medians, rounded to the ns, as the
//! line latency at the distance of the two CPUs (what the channel lock's
//! handoff, the contended flag of `atomics.rs` and the scans priced in
//! lines use). A recording whose placement moved during the run
//! (before and after differ) gets the mean, and the note says both.
//! Unknown keys are refused, as in `costs.json`.

use std::path::Path;

/// The measured placement of two CPUs.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// The two CPUs the ping-pong ran on.
    pub cpus: [usize; 2],
    /// Median one-way latency before the recording, ns.
    pub before_ns: f64,
    /// Median one-way latency after the recording, ns.
    pub after_ns: f64,
}

const KEYS: [&str; 6] = [
    "tool",
    "cpus",
    "before_ns",
    "before_range_ns",
    "after_ns",
    "after_range_ns",
];

/// Parses the text of a c2c.json; the error is one line naming `path`.
pub fn parse(path: &Path, text: &str) -> Result<Placement, String> {
    let at = path.display();
    let obj = crate::json_file::object(path, text, &[&KEYS])?;
    let ns = |k: &str| {
        obj.get(k)
            .and_then(|x| x.as_f64())
            .filter(|x| x.is_finite() && *x > 0.0 && *x < 1e6)
            .ok_or_else(|| format!("{at}: '{k}' missing or not a latency in ns (0 < x < 1e6)"))
    };
    let cpus = obj
        .get("cpus")
        .and_then(|c| c.as_array())
        .filter(|c| c.len() == 2)
        .and_then(|c| Some([c[0].as_u64()? as usize, c[1].as_u64()? as usize]))
        .filter(|c| c[0] != c[1])
        .ok_or_else(|| format!("{at}: 'cpus' missing or not two distinct CPU numbers"))?;
    Ok(Placement {
        cpus,
        before_ns: ns("before_ns")?,
        after_ns: ns("after_ns")?,
    })
}

impl Placement {
    /// The line latency the model takes: the mean of the two medians,
    /// rounded to the ns (at least 1).
    pub fn line_ns(&self) -> u64 {
        (((self.before_ns + self.after_ns) / 2.0).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Placement, String> {
        parse(Path::new("rec/c2c.json"), s)
    }

    #[test]
    fn a_good_file_parses() {
        let c = p(r#"{"tool":"scripts/host/c2c.c","cpus":[0,1],"before_ns":27.3,"before_range_ns":[26.5,27.4],"after_ns":29.7,"after_range_ns":[29.2,29.8]}"#).unwrap();
        assert_eq!(c.cpus, [0, 1]);
        // (27.3 + 29.7) / 2 = 28.5 -> 29 (round half away from zero).
        assert_eq!(c.line_ns(), 29);
        let c = p(r#"{"cpus":[1,0],"before_ns":122,"after_ns":24}"#).unwrap();
        assert_eq!(c.line_ns(), 73);
    }

    #[test]
    fn broken_files_give_one_line_naming_the_file() {
        for (text, want) in [
            ("{", "rec/c2c.json:1:"),
            ("[]", "expected a JSON object"),
            (r#"{"cpus":[0,1],"before":1}"#, "unknown key 'before'"),
            (r#"{"before_ns":1,"after_ns":1}"#, "'cpus' missing"),
            (
                r#"{"cpus":[0,0],"before_ns":1,"after_ns":1}"#,
                "two distinct",
            ),
            (
                r#"{"cpus":[0,-1],"before_ns":1,"after_ns":1}"#,
                "two distinct",
            ),
            (r#"{"cpus":[0,1],"after_ns":1}"#, "'before_ns' missing"),
            (
                r#"{"cpus":[0,1],"before_ns":0,"after_ns":1}"#,
                "'before_ns' missing or not",
            ),
            (
                r#"{"cpus":[0,1],"before_ns":3,"after_ns":"x"}"#,
                "'after_ns' missing or not",
            ),
        ] {
            let e = p(text).unwrap_err();
            assert!(
                e.contains(want) && e.starts_with("rec/c2c.json"),
                "{text}: {e}"
            );
            assert!(!e.contains('\n'));
        }
    }
}

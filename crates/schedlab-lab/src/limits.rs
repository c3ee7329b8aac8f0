//! The length limit of a run without a duration: where it is stopped, and
//! the error when it went past the limit.

use schedlab_workload::limits::{duration_limit_text, max_duration_ns};

/// A run without a duration went past the limit of simulated time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: without a duration the run went past the {limit} limit of simulated time; nothing was written: pass --duration, or --max-duration to raise the limit")]
pub struct PastLimit {
    /// The workload as named.
    pub what: String,
    /// The limit in force, as text (`1h`).
    pub limit: String,
}

/// Where a run stops at the latest: a run with an end (`end`) at its
/// end; one without, just past the duration limit in force, which the
/// command line's length check cannot always foresee (threads that wait on
/// one another).
pub fn length_cap(end: Option<u64>, t_start: u64) -> u64 {
    match end {
        Some(_) => u64::MAX,
        None => t_start.saturating_add(max_duration_ns()),
    }
}

/// After a run: an error when a run without a duration passed
/// [`length_cap`] (`at`: the last time it was seen at, or its end), and
/// was stopped there or ended after it.
pub fn check_passed_limit(
    what: &str,
    end: Option<u64>,
    t_start: u64,
    at: u64,
) -> Result<(), PastLimit> {
    if at > length_cap(end, t_start) {
        return Err(PastLimit {
            what: what.to_string(),
            limit: duration_limit_text(max_duration_ns()),
        });
    }
    Ok(())
}

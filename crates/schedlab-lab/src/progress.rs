//! Progress of a batch of independent runs, reported to the caller: the
//! library draws nothing itself.

/// What a batch of runs reports as it goes. Called from the worker
/// threads, so an implementation is `Sync`; every method has an empty
/// default.
pub trait Progress: Sync {
    /// The batch starts: `total` runs are to be made (`what`: `sweep`,
    /// `compare`).
    fn start(&self, what: &str, total: u64) {
        let _ = (what, total);
    }
    /// One more run has finished.
    fn advance(&self) {}
    /// The batch is over (all runs finished, or one failed).
    fn finish(&self) {}
}

/// Reports nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// The default number of simultaneous runs: one per CPU.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

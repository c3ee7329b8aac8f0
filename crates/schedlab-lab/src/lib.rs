//! schedlab's experiment engines, under the command line and the Python
//! package: what runs many simulations and gathers their figures.
//!
//! | module | owns |
//! |---|---|
//! | [`sweep`] | a spec's cross product of settings → points, their runs on local threads, rows, the resumable Hive-partitioned Parquet dataset |
//! | [`montecarlo`] | random scenarios per machine, both feature sets over seeds as a sweep, Welch screening of the differences |
//! | [`bench`] | the benchmark suite's cases and the figures of one case run in this process |
//! | [`compare`] | the runs of an A/B comparison on local threads, their figures in run order, the table's heading, legend and metrics |
//! | [`limits`] | the length limit of a run without a duration |
//! | [`preflight`] | the checks made before anything is simulated: `--out`, the limits on tasks, duration and output, the memory estimate |
//! | [`machine`] | a machine named the way `--machine` names it |
//! | [`progress`] | the [`Progress`] hooks a caller draws progress with |
//!
//! The library prints nothing: progress goes to a [`Progress`] the caller
//! gives, results come back as values, and every error is an enum whose
//! message is one line. How one run is made from its settings stays with
//! the caller where it is the command line's business (a sweep point is a
//! `schedlab run` command line, handed to a [`sweep::Runner`]).

pub mod bench;
pub mod compare;
pub mod limits;
pub mod machine;
pub mod montecarlo;
pub mod preflight;
pub mod progress;
pub mod sweep;

pub use progress::{default_jobs, NoProgress, Progress};

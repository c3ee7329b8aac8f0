//! schedlab's engines, under the command line (schedlab-cli) and the
//! Python package (schedlab-py): one run from its arguments, and what
//! runs many simulations and gathers their figures; and the command line
//! of those verbs in this process.
//!
//! | module | owns |
//! |---|---|
//! | [`resolve`] | `SimArgs` (shared by `run` and `compare`), `RunArgs`; arguments → machine, workload, `SimConfig` |
//! | [`run`] | one `schedlab run`: the checks, the simulation, the output directory written; the outcome and its text report |
//! | [`sweep`] | a spec's cross product of settings → points, their runs on local threads, rows, the resumable Hive-partitioned Parquet dataset |
//! | [`montecarlo`] | random scenarios per machine, both feature sets over seeds as a sweep, Welch screening of the differences |
//! | [`bench`](mod@bench) | the benchmark suite's cases and the figures of one case run in this process |
//! | [`compare`] | the runs of an A/B comparison on local threads, their figures in run order, the table's heading, legend and metrics |
//! | [`limits`] | the length limit of a run without a duration |
//! | [`preflight`] | the checks made before anything is simulated: `--out`, the limits on tasks, duration and output, the memory estimate |
//! | [`machine`] | a machine named the way `--machine` names it |
//! | [`progress`] | the [`Progress`] hooks a caller draws progress with |
//! | [`bars`] | the progress bars (indicatif, on stderr) of a batch of runs and of one run, for callers that draw them |
//! | [`user_error`] | a user error (one line, printed as it is) and any error as its one line |
//! | [`command`] | the command line of `run`, `replay`, `compare`, `report`, `machines`, `features`, `kernels`, `bench`, `sweep`, `montecarlo` in this process: clap's parsing, the output, the one-line errors |
//!
//! The engines print nothing: progress goes to a [`Progress`] (or a run's
//! [`run::RunHooks`]) the caller gives, results come back as values, and
//! every error's message is one line. [`command`] is where the library
//! prints: the binary runs those verbs through it, and the Python package
//! runs any of their command lines through [`command::run_argv`]. A sweep
//! point is a `schedlab run` command line, handed to a [`sweep::Runner`]
//! (that same `run_argv`).

pub mod bars;
pub mod bench;
pub mod command;
pub mod compare;
pub mod limits;
pub mod machine;
pub mod montecarlo;
pub mod preflight;
pub mod progress;
pub mod resolve;
pub mod run;
pub mod sweep;
pub mod user_error;

pub use progress::{default_jobs, NoProgress, Progress};

//! # schedlab-core: a deterministic model of the Linux fair-class scheduler
//!
//! Architecture tour (what drives what):
//!
//! ```text
//!  Workload (program.rs) ──► Sim::new ──► engine loop (engine.rs)
//!                                            │ pops (time, seq) events
//!                                            ▼
//!                              core.rs: schedule / try_to_wake_up / sched_tick
//!                                │ calls class ops          │ reports
//!                                ▼                          ▼
//!                 fair/{eevdf,pelt,select}.rs        observe::Sink (trace writers)
//! ```
//!
//! * Time is integer nanoseconds; events pop in (time, sequence) order.
//! * Every scheduler path charges simulated CPU time to its CPU (costs from
//!   the [`machine::Machine`]).
//! * `--check` ([`check`]) verifies invariants after every event.
#![warn(missing_docs)]

pub mod atomics;
pub mod check;
pub mod config;
pub mod engine;
pub mod event;
pub mod fair;
pub mod features;
pub mod ids;
pub mod machine;
pub mod observe;
pub mod program;
pub mod rng;
pub mod rq;
pub mod runtime;
pub mod sched;
pub mod sim;
pub mod stats;
pub mod task;
pub mod time;
pub mod waste;

pub use config::SimConfig;
pub use engine::{RunResult, Sim};

//! # schedlab-core: a deterministic model of the Linux fair-class scheduler
//!
//! Architecture tour (what drives what):
//!
//! ```text
//!  Workload (program.rs) ──► Sim::new (sched/init.rs) ──► Sim::run (engine.rs)
//!                                                           │ pops (time, seq) events
//!                                                           ▼
//!   sched/core.rs: schedule / sched_tick; sched/wakeup.rs: try_to_wake_up / wake_up_new_task
//!     │ class ops                    │ program ops        │ reports
//!     ▼                              ▼                    ▼
//!   sched/{fair,rt,deadline}.rs   sched/exec.rs      observe::Sink (trace writers)
//!                                 sched/{channel_io,sync_obj}.rs
//!   sched/{balance/*,bandwidth,group,select}.rs
//!     │ apply the pure policy of
//!     ▼
//!   fair/{eevdf,pelt,weight,preempt,select,balance,group,bandwidth}
//! ```
//!
//! ## Layers (a module imports only from its own layer or below, and
//! `scripts/test/modgraph.py` checks that the import graph has no circle)
//!
//! 1. Foundations: [`ids`], [`time`], [`rng`], [`features`], [`config`],
//!    [`program`] (the workload), [`machine`] (CPUs, costs, sched domains),
//!    [`event`], [`observe`], [`atomics`].
//! 2. Pure policy and plain state, no `impl Sim`: [`fair`] (functions of
//!    plain values, one queue and the entity arena, or a query trait) and
//!    the data it works on: [`rq`] (runqueues, entities, classes, domain
//!    and LLC state), [`cfs_tasks`] (each CPU's `cfs_tasks` list),
//!    [`task`], [`runtime`] (the program runtime's objects with their
//!    bookkeeping methods), [`stats`] (counters and
//!    [`stats::Accounting`]).
//! 3. The simulator object: [`sim`] ([`Sim`] and its [`sim::SchedState`]
//!    part), data only.
//! 4. Mechanism: [`sched`] — `impl Sim` blocks named after the kernel's
//!    (`core`, `fair`, `rt`, `deadline`, `balance/{periodic,pass,newidle,
//!    nohz,active,steal}`, `bandwidth`, `group`, `syscalls`, the program
//!    interpreter `exec`, set-up `init`). Observers of the state: [`check`],
//!    [`waste`].
//! 5. The event loop: [`engine`].
//!
//! ## Pure policy vs the simulator applying it
//!
//! The same kernel mechanism can have two files: its pure policy under
//! `fair/` (for example `fair/bandwidth.rs`: the runtime pool arithmetic)
//! and the simulator code that applies it under `sched/` (`sched/
//! bandwidth.rs`: timers as events, throttling the queues). The rule:
//! `fair/…` never names [`Sim`]; `sched/…` holds every `impl Sim`. Pairs:
//! `fair/bandwidth` – `sched/bandwidth`, `fair/group` – `sched/group`,
//! `fair/select` – `sched/select` (+ `select_task_rq_fair` in
//! `sched/fair`), `fair/balance/{lb,stats}` – `sched/balance/pass`,
//! `fair/balance/steal` – `sched/balance/steal`, `fair/eevdf` and
//! `fair/preempt` – `sched/fair`.
//!
//! ## Conventions
//!
//! * Time is integer nanoseconds; events pop in (time, sequence) order.
//! * Every scheduler path charges simulated CPU time to its CPU (costs from
//!   the [`machine::Machine`]).
//! * `--check` ([`check`]) verifies invariants after every event.
//! * The library reads no environment variable and writes nothing to
//!   stdout or stderr; everything configurable is in [`SimConfig`].
#![warn(missing_docs)]

pub mod atomics;
pub mod cfs_tasks;
pub mod check;
pub mod config;
pub mod engine;
pub mod event;
pub mod fair;
pub mod features;
pub(crate) mod folds;
pub mod ids;
pub mod kernels;
pub mod machine;
pub mod noise;
pub mod observe;
pub mod program;
pub mod rng;
pub mod rq;
pub mod runtime;
pub mod sched;
pub mod sim;
pub mod stats;
pub mod suggest;
pub mod task;
pub mod time;
pub mod tunables;
pub mod waste;

pub use config::{NoiseSetting, SimConfig};
pub use sim::{RunResult, Sim, SimError};

//! The core's side of load balancing: the SCHED_SOFTIRQ walk over a CPU's
//! domains (`sched_balance_trigger` → `sched_balance_domains`), one pass
//! (`sched_balance_rq`: decide with `fair::balance::lb`, then detach and
//! attach tasks), and newidle balancing (`sched_balance_newidle`).
//!
//! Kernel reference: kernel-model.md §7.1–7.3, §8.2, §8.8–8.9, §9,
//! tip-2026 (NI_RANDOM on by default: each domain's newidle pass runs
//! with a probability equal to its recent success ratio).
//!
//! Costs (charged as CPU time of the balancing CPU, guesses of the right
//! order for these machines, the same for every experiment): a pass costs
//! [`LB_PASS_NS`] plus [`LB_PER_CPU_NS`] per CPU whose statistics it reads
//! (none when it loses the SD_SERIALIZE race); each migrated task costs
//! [`LB_MIGRATE_NS`]. A newidle pass's cost as `update_newidle_cost` and
//! the avg_idle gate see it is all its CPU time, the flag's cmpxchg stall
//! included (the kernel times the pass with `sched_clock_cpu`).
//!
//! NOHZ idle balancing (§10): a busy CPU's tick kicks the first idle CPU
//! when idle CPUs are due and this CPU has two tasks or its LLC more than
//! one busy CPU; the kicked CPU (after IPI and idle-exit latency) balances
//! every due idle CPU on its behalf and pays for it.
//!
//! Active balance (§8.10): after more than `cache_nice_tries + 2` failed
//! task-count passes, the busiest CPU is made to switch out its running
//! task, which then moves to the balancing CPU.
//!
//! SD_SERIALIZE (`LB_SERIALIZE`, §7.4): NUMA domains take the global
//! `sched_balance_running` flag, a contended cache line (`atomics.rs`):
//! `eager` tries it for every domain the walk reaches and then checks
//! whether the domain is due (a lost race leaves it due); `when-due` tries
//! it only for a due domain; `balancer-only` tries it inside the pass after
//! should_we_balance chose this CPU, newidle passes included, and a lost
//! race is a balanced pass (interval doubles, last_balance set).
//!
//! Deviations: no `LBF_DST_PINNED` retry with another destination, and no
//! blocked-load decay kicks (idle CPUs' PELT decays when next updated).
//!
//! Files: `periodic` (the softirq walk), `pass` (one
//! `sched_balance_rq` pass, detach/attach, the serialize flag),
//! `newidle`, `nohz`, `active` and `steal` (STEAL's simulator
//! side; its pure policy is [`crate::fair::balance::steal`]).

use crate::time::Nanos;

mod active;
mod newidle;
mod nohz;
mod pass;
mod periodic;
mod steal;

pub use steal::STEAL_ATTEMPT_NS;

/// CPU time of one balance pass besides reading CPU statistics (a guess).
pub const LB_PASS_NS: Nanos = 1_000;
/// CPU time per CPU whose statistics a pass reads (a guess: a few cache
/// misses on remote runqueue fields).
pub const LB_PER_CPU_NS: Nanos = 40;
/// CPU time to detach and attach one task (a guess: two runqueue locks).
pub const LB_MIGRATE_NS: Nanos = 2_000;
/// `MAX_PINNED_INTERVAL` (fair.c, ms): how far a domain's
/// `balance_interval` keeps doubling while its passes end with every
/// candidate pinned by affinity (`LBF_ALL_PINNED`), instead of
/// `max_interval` (kernel-model.md §7.2).
pub const MAX_PINNED_INTERVAL_MS: u64 = 512;
// `sysctl_sched_migration_cost` and `sysctl_sched_nr_migrate` are
// tunables: `cfg.tunables.migration_cost_ns` / `.nr_migrate`.

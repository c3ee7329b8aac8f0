//! The fair class's pure policy (`kernel/sched/fair.c`), split by
//! mechanism. Nothing here knows the simulator: functions take plain
//! values, one cfs_rq and the entity arena, or a query trait
//! ([`select::CpuView`]). The simulator code that applies each part is
//! under `sched/` (see the crate doc for the convention).
//!
//! * [`weight`]: nice → weight, weighted time.
//! * [`eevdf`]: one cfs_rq's virtual time, lag, pick and placement (6.6+).
//! * [`cfs`]: the same for CFS (≤6.5, `FAIR_CLASS=cfs`): min_vruntime,
//!   period and ideal runtime, tick preemption, sleeper credit, buddies.
//! * [`pelt`]: load tracking arithmetic.
//! * [`select`]: wakeup placement (`select_task_rq_fair`).
//! * [`timeline`]: a cfs_rq's ordered waiting entities and their
//!   shortest slice (the augmented rb-tree).
//! * [`preempt`]: wakeup preemption (`wakeup_preempt_fair`).
//! * [`group`]: task groups, group shares.
//! * [`bandwidth`]: CFS bandwidth pool arithmetic.
//! * [`balance`]: load balancing's decisions and STEAL's rules.

pub mod balance;
pub mod bandwidth;
pub mod cfs;
pub mod eevdf;
pub mod group;
pub mod pelt;
pub mod preempt;
pub mod select;
pub mod timeline;
pub mod weight;

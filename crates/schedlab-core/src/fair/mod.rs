//! The fair class (`kernel/sched/fair.c`), split by mechanism.
//!
//! * [`weight`]: nice → weight, weighted time.
//! * [`eevdf`]: one cfs_rq's virtual time, lag, pick and placement.
//! * [`pelt`]: load tracking arithmetic.
//! * [`select`]: wakeup placement (`select_task_rq_fair`).
//! * [`preempt`]: wakeup preemption (`wakeup_preempt_fair`).
//! * [`group`]: task groups, group shares.
//! * [`bandwidth`]: CFS bandwidth pool arithmetic.

pub mod balance;
pub mod bandwidth;
pub mod eevdf;
pub mod group;
pub mod pelt;
pub mod preempt;
pub mod select;
pub mod weight;

//! Load balancing's pure policy (`sched_balance_*` decisions in fair.c):
//!
//! * [`stats`]: group statistics and classification (`sg_lb_stats`,
//!   `group_classify`), shared by the fork slow path and balancing.
//! * [`lb`]: one pass's decisions (busiest group and queue, imbalance,
//!   `should_we_balance`).
//! * [`steal`]: STEAL's rules (overload, who may be stolen, search order).
//!
//! The simulator side that applies them (the softirq walk, newidle, NOHZ,
//! active balancing, detaching and attaching tasks, STEAL's bitmap) is in
//! `sched/balance/`.

pub mod lb;
pub mod stats;
pub mod steal;

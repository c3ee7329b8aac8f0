//! Load balancing (`sched_balance_*`). This part: the group
//! statistics and classification shared by the fork slow path and, later,
//! periodic/newidle balancing.

pub mod lb;
pub mod stats;
pub mod steal;

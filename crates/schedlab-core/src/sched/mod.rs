//! The simulator side of `kernel/sched`: `impl Sim` blocks that apply the
//! pure policy of [`crate::fair`] (and the RT and deadline rules) to the
//! simulator's state, one file per kernel mechanism.

pub mod balance;
pub mod bandwidth;
pub mod chan_lock;
mod channel_io;
pub mod core;
pub mod cpuidle_menu;
pub mod deadline;
mod exec;
pub mod fair;
pub(crate) mod fold;
pub mod futex_word;
pub mod group;
mod init;
mod lb_snapshot;
pub mod msg_origin;
pub mod noise;
mod pi;
pub mod pipe;
pub mod rt;
mod select;
mod sync_obj;
pub mod syscall_cost;
pub mod syscalls;
pub mod ttwu_xcpu;
pub mod unix_stream;
mod wakeup;

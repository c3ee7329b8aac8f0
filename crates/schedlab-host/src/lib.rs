//! # schedlab-host: the workload on the real kernel
//! (docs: see the end of this file's module list)
#![warn(missing_docs)]

pub mod calib;
pub mod cgroup;
pub mod error;
pub mod exec;
pub mod sync;
pub mod sys;
pub mod timing;

pub use error::HostError;
pub use exec::{exec, ChannelConfig, CalibrationMode, ExecOptions, ExecResult, ThreadResult};

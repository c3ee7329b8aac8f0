//! # schedlab-host: the workload on the real kernel
#![warn(missing_docs)]

pub mod calib;
pub mod cgroup;
pub mod error;
pub mod exec;
pub mod facts;
pub mod record;
pub mod sync;
pub mod sys;
pub mod timing;

pub use error::HostError;
pub use exec::{exec, CalibrationMode, ChannelConfig, ExecOptions, ExecResult, ThreadResult};
pub use record::{record, RecordOptions, RecordResult};

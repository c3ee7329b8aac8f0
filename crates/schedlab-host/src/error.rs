//! The crate's one error type. Every variant's `Display` is one line that
//! names what went wrong and, where there is one, how to fix it.

use std::path::PathBuf;

/// Why `exec` or `record` could not run (or could not finish).
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The host is not Linux (this crate drives Linux syscalls and files).
    #[error("host execution needs Linux (this is {0})")]
    NotLinux(&'static str),
    /// An operation that needs root (or CAP_SYS_NICE / CAP_SYS_ADMIN) was
    /// attempted without it.
    #[error("{what} needs root (run as root, or with CAP_SYS_NICE and CAP_SYS_ADMIN)")]
    NotRoot {
        /// What needed the privilege.
        what: String,
    },
    /// The workload uses something the host runner cannot do (yet).
    #[error("thread {thread}: {what} is not supported by the host runner")]
    Unsupported {
        /// Thread name ("-" for workload-wide features).
        thread: String,
        /// The op or attribute, named as in the workload.
        what: String,
    },
    /// The workload is not runnable as given (bad index, no end, ...).
    #[error("workload: {0}")]
    Workload(String),
    /// The process's CPU affinity cannot describe a machine
    /// ([`crate::facts::affinity_prefix`]).
    #[error("record: {0}")]
    Affinity(String),
    /// A syscall failed.
    #[error("{call}: {err}")]
    Sys {
        /// The call and its arguments, e.g. `sched_setattr(SCHED_FIFO, prio 10)`.
        call: String,
        /// The OS error.
        err: std::io::Error,
    },
    /// A file could not be read or written.
    #[error("{}: {err}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        err: std::io::Error,
    },
    /// No cgroup hierarchy with the cpu controller.
    #[error("no cgroup cpu controller: {0} (mount one: `mount -t cgroup -o cpu cgroup /sys/fs/cgroup/cpu`, or enable +cpu in a cgroup2 subtree_control)")]
    NoCgroupCpu(String),
    /// tracefs is not mounted and could not be mounted.
    #[error("no tracefs: {0} (mount it: `mount -t tracefs nodev /sys/kernel/tracing`; needs root and CONFIG_FTRACE)")]
    NoTracefs(String),
    /// A recording directory's file is missing a field, or is not what
    /// `schedlab record` writes: the one-line message names the file.
    #[error("{0}")]
    Recording(String),
    /// A scheduler trace event the recording needs is missing.
    #[error("tracefs has no event {0} (kernel built without it?)")]
    NoTraceEvent(String),
    /// A thread of the workload failed while running.
    #[error("thread {thread}: {err}")]
    Thread {
        /// Thread name.
        thread: String,
        /// What failed.
        err: Box<HostError>,
    },
}

impl HostError {
    /// A failed syscall, reading `errno` now.
    pub(crate) fn last_os(call: impl Into<String>) -> HostError {
        HostError::Sys {
            call: call.into(),
            err: std::io::Error::last_os_error(),
        }
    }

    /// A failed syscall with an explicit error number.
    pub(crate) fn errno(call: impl Into<String>, code: i32) -> HostError {
        HostError::Sys {
            call: call.into(),
            err: std::io::Error::from_raw_os_error(code),
        }
    }

    /// A failed file operation.
    pub(crate) fn io(path: impl Into<PathBuf>, err: std::io::Error) -> HostError {
        HostError::Io {
            path: path.into(),
            err,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_is_missing_and_how_to_get_it() {
        let e = HostError::NoTracefs("not mounted".into()).to_string();
        assert!(
            e.contains("not mounted") && e.contains("mount -t tracefs nodev /sys/kernel/tracing"),
            "{e}"
        );
        let e = HostError::NotRoot {
            what: "record (tracefs capture)".into(),
        }
        .to_string();
        assert!(e.contains("record") && e.contains("root"), "{e}");
        let e = HostError::NoCgroupCpu("x".into()).to_string();
        assert!(e.contains("cgroup") && e.contains("mount"), "{e}");
        assert!(!e.contains('\n'));
    }
}

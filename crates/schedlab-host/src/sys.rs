//! Thin wrappers over the Linux syscalls the runner uses: CLOCK_MONOTONIC,
//! clock_nanosleep, sched_setattr (raw: glibc has no wrapper),
//! sched_setaffinity, gettid, and the per-thread /proc files.

use crate::error::HostError;
use schedlab_core::program::{DlParams, Policy, Uclamp};

/// CLOCK_MONOTONIC in nanoseconds.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_REALTIME in nanoseconds.
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub(crate) fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) until `at`, resumed
/// after signals.
pub fn sleep_until(at: u64) {
    let ts = timespec(at);
    loop {
        // SAFETY: ts is valid; the remainder pointer may be null with ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            return;
        }
    }
}

/// Relative clock_nanosleep(CLOCK_MONOTONIC) of `ns` (rt-app's `sleep` is
/// a relative nanosleep), resumed with the remainder after signals.
pub fn sleep_for(ns: u64) {
    let mut ts = timespec(ns);
    loop {
        let mut rem = timespec(0);
        // SAFETY: both pointers are valid.
        let r = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, &mut rem) };
        if r != libc::EINTR {
            return;
        }
        ts = rem;
    }
}

/// The calling thread's kernel tid.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Is the effective user root?
pub fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() == 0 }
}

/// `struct sched_attr` (SCHED_ATTR_SIZE_VER1, with the uclamp fields).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct SchedAttr {
    /// Size of the struct.
    pub size: u32,
    /// SCHED_* number.
    pub sched_policy: u32,
    /// SCHED_FLAG_* bits.
    pub sched_flags: u64,
    /// Nice (fair policies).
    pub sched_nice: i32,
    /// RT priority (FIFO/RR).
    pub sched_priority: u32,
    /// DEADLINE runtime, or the custom slice of a fair task.
    pub sched_runtime: u64,
    /// DEADLINE relative deadline.
    pub sched_deadline: u64,
    /// DEADLINE period.
    pub sched_period: u64,
    /// uclamp min.
    pub sched_util_min: u32,
    /// uclamp max.
    pub sched_util_max: u32,
}

const SCHED_FLAG_UTIL_CLAMP_MIN: u64 = 0x20;
const SCHED_FLAG_UTIL_CLAMP_MAX: u64 = 0x40;

/// The kernel's policy number.
pub fn policy_number(p: Policy) -> u32 {
    match p {
        Policy::Normal => 0,
        Policy::Fifo => 1,
        Policy::Rr => 2,
        Policy::Batch => 3,
        Policy::Idle => 5,
        Policy::Deadline => 6,
    }
}

/// What a thread asks `sched_setattr` for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedRequest {
    /// Policy.
    pub policy: Policy,
    /// Nice for fair policies, RT priority for FIFO/RR (the workload's
    /// `nice` field, as rt-app's `priority`).
    pub nice: i32,
    /// Custom slice (fair) as `sched_runtime`.
    pub slice_ns: Option<u64>,
    /// DEADLINE parameters.
    pub dl: Option<DlParams>,
    /// uclamp.
    pub uclamp: Uclamp,
}

impl SchedRequest {
    /// The `sched_attr` for this request. Errors name what is missing.
    pub fn attr(&self) -> Result<SchedAttr, String> {
        let mut a = SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            sched_policy: policy_number(self.policy),
            ..Default::default()
        };
        match self.policy {
            Policy::Normal | Policy::Batch | Policy::Idle => {
                a.sched_nice = self.nice;
                if self.policy != Policy::Idle {
                    a.sched_runtime = self.slice_ns.unwrap_or(0);
                }
            }
            Policy::Fifo | Policy::Rr => {
                if !(1..=99).contains(&self.nice) {
                    return Err(format!(
                        "{} priority {} is outside 1..=99",
                        self.policy.name(),
                        self.nice
                    ));
                }
                a.sched_priority = self.nice as u32;
            }
            Policy::Deadline => {
                let dl = self
                    .dl
                    .ok_or_else(|| "SCHED_DEADLINE without runtime/deadline/period".to_string())?;
                a.sched_runtime = dl.runtime_ns;
                a.sched_deadline = dl.deadline_ns;
                a.sched_period = dl.period_ns;
            }
        }
        if let Some(m) = self.uclamp.min {
            a.sched_flags |= SCHED_FLAG_UTIL_CLAMP_MIN;
            a.sched_util_min = m;
        }
        if let Some(m) = self.uclamp.max {
            a.sched_flags |= SCHED_FLAG_UTIL_CLAMP_MAX;
            a.sched_util_max = m;
        }
        Ok(a)
    }

    /// One-line description for errors.
    pub fn describe(&self) -> String {
        let mut s = format!("sched_setattr({}", self.policy.name());
        match self.policy {
            Policy::Fifo | Policy::Rr => s += &format!(", prio {}", self.nice),
            Policy::Deadline => {
                if let Some(d) = self.dl {
                    s += &format!(
                        ", runtime {} deadline {} period {}",
                        d.runtime_ns, d.deadline_ns, d.period_ns
                    )
                }
            }
            _ => s += &format!(", nice {}", self.nice),
        }
        if let Some(sl) = self.slice_ns {
            s += &format!(", slice {sl} ns");
        }
        s + ")"
    }
}

/// `sched_setattr(tid, attr, 0)`.
pub fn sched_setattr(tid: i32, req: &SchedRequest) -> Result<(), HostError> {
    let attr = req
        .attr()
        .map_err(|e| HostError::Workload(format!("{}: {e}", req.describe())))?;
    // SAFETY: attr is a valid sched_attr of the size it states.
    let r = unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            tid as libc::c_long,
            &attr as *const SchedAttr,
            0 as libc::c_long,
        )
    };
    if r != 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EPERM) && !is_root() {
            return Err(HostError::NotRoot {
                what: req.describe(),
            });
        }
        return Err(HostError::Sys {
            call: req.describe(),
            err,
        });
    }
    Ok(())
}

/// `sched_setaffinity(tid, cpus)`.
pub fn set_affinity(tid: i32, cpus: &[u32]) -> Result<(), HostError> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c as usize >= libc::CPU_SETSIZE as usize {
            return Err(HostError::Workload(format!("CPU {c} is out of range")));
        }
        // SAFETY: c is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    // SAFETY: set is a valid cpu_set_t of the size given.
    let r = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r != 0 {
        return Err(HostError::last_os(format!("sched_setaffinity({cpus:?})")));
    }
    Ok(())
}

/// The CPUs the calling process may run on.
pub fn online_cpus() -> Vec<u32> {
    // SAFETY: zeroed cpu_set_t is valid; the call fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return vec![0];
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .map(|c| c as u32)
        .collect()
}

/// `sched_yield()`.
pub fn yield_now() {
    // SAFETY: no arguments.
    unsafe { libc::sched_yield() };
}

/// Per-thread figures read from /proc at the thread's end.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ProcTaskStats {
    /// `schedstat` field 1: time on CPU (ns).
    pub run_ns: u64,
    /// `schedstat` field 2: time runnable, waiting (ns).
    pub wait_ns: u64,
    /// `schedstat` field 3: timeslices run.
    pub timeslices: u64,
    /// `status` voluntary_ctxt_switches.
    pub voluntary_switches: u64,
    /// `status` nonvoluntary_ctxt_switches.
    pub involuntary_switches: u64,
    /// `sched` se.nr_migrations (None when /proc/.../sched is absent).
    pub migrations: Option<u64>,
    /// `sched` policy number at the end (0 OTHER, 1 FIFO, 2 RR, 3 BATCH,
    /// 5 IDLE, 6 DEADLINE).
    pub policy: Option<u64>,
    /// `sched` prio at the end (kernel prio: 100 + 20 + nice for fair,
    /// 99 - rt_priority for RT, -1 for DEADLINE is shown as a huge number).
    pub prio: Option<i64>,
    /// `sched` se.slice (ns) at the end.
    pub slice_ns: Option<u64>,
}

/// Parses `/proc/.../schedstat` ("run wait slices").
pub fn parse_schedstat(text: &str) -> Option<(u64, u64, u64)> {
    let mut it = text.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some((it.next()??, it.next()??, it.next()??))
}

/// Parses `key: value` (status) or `key : value` (sched) lines; the first
/// number of the value.
pub fn proc_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        let v = v.trim();
        // `sched` prints some values as ms with a fraction; we read integers.
        v.split_whitespace().next()?.parse().ok()
    })
}

/// Reads the calling thread's /proc figures.
pub fn read_self_stats() -> ProcTaskStats {
    let dir = "/proc/thread-self";
    let mut s = ProcTaskStats::default();
    if let Ok(t) = std::fs::read_to_string(format!("{dir}/schedstat")) {
        if let Some((r, w, n)) = parse_schedstat(&t) {
            (s.run_ns, s.wait_ns, s.timeslices) = (r, w, n);
        }
    }
    if let Ok(t) = std::fs::read_to_string(format!("{dir}/status")) {
        s.voluntary_switches = proc_field(&t, "voluntary_ctxt_switches").unwrap_or(0);
        s.involuntary_switches = proc_field(&t, "nonvoluntary_ctxt_switches").unwrap_or(0);
    }
    if let Ok(t) = std::fs::read_to_string(format!("{dir}/sched")) {
        s.migrations = proc_field(&t, "se.nr_migrations");
        s.policy = proc_field(&t, "policy");
        s.slice_ns = proc_field(&t, "se.slice");
        s.prio = t.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "prio").then(|| v.trim().parse().ok())?
        });
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_and_status() {
        assert_eq!(parse_schedstat("123 456 7\n"), Some((123, 456, 7)));
        assert_eq!(parse_schedstat("123 x 7\n"), None);
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(proc_field(status, "voluntary_ctxt_switches"), Some(12));
        assert_eq!(proc_field(status, "nonvoluntary_ctxt_switches"), Some(3));
        let sched = "se.nr_migrations                             :                    5\n";
        assert_eq!(proc_field(sched, "se.nr_migrations"), Some(5));
    }

    #[test]
    fn attr_layout() {
        assert_eq!(std::mem::size_of::<SchedAttr>(), 56);
        let r = SchedRequest {
            policy: Policy::Normal,
            nice: 5,
            slice_ns: Some(3_000_000),
            dl: None,
            uclamp: Uclamp::default(),
        };
        let a = r.attr().unwrap();
        assert_eq!(
            (a.sched_policy, a.sched_nice, a.sched_runtime),
            (0, 5, 3_000_000)
        );
        let f = SchedRequest {
            policy: Policy::Fifo,
            nice: 0,
            ..r.clone()
        };
        assert!(f.attr().is_err());
        let d = SchedRequest {
            policy: Policy::Deadline,
            nice: 0,
            slice_ns: None,
            dl: Some(DlParams {
                runtime_ns: 1,
                deadline_ns: 2,
                period_ns: 3,
            }),
            uclamp: Uclamp::default(),
        };
        let a = d.attr().unwrap();
        assert_eq!(
            (
                a.sched_policy,
                a.sched_runtime,
                a.sched_deadline,
                a.sched_period
            ),
            (6, 1, 2, 3)
        );
    }
}

//! # schedlab-host: the workload on the real kernel
//!
//! The simulator's behaviour programs ([`schedlab_core::program::Workload`],
//! from an rt-app JSON file or a generator) run here as real threads on the
//! Linux host, so a simulated run and a real one can be compared row for
//! row. Two entry points:
//!
//! * [`exec()`] runs the workload and returns an [`ExecResult`]: per thread
//!   its rt-app log rows ([`schedlab_core::stats::LogRow`]), its tid, and
//!   what `/proc/thread-self/{schedstat,status,sched}` say at its end (run
//!   and wait ns, timeslices, voluntary/involuntary switches, migrations,
//!   policy, prio, slice); per task group its `cpu.stat` before and after.
//! * [`record()`] runs [`exec()`] under a tracefs capture of sched_switch,
//!   sched_waking, sched_wakeup, sched_wakeup_new, sched_migrate_task,
//!   sched_process_fork and sched_process_exit, and writes DIR/trace.txt,
//!   DIR/host.json and DIR/sysfs/ (see [`record`](mod@record)).
//! * [`recording`] reads what a recording directory says beside its trace
//!   for `validate`: record.json checked, the measured vCPU placement
//!   (c2c.json) applied to the model's machine, the release to simulate.
//!
//! ```text
//!  Workload ──exec──► calibrate pLoad ─► cgroups (CgroupSet, removed on drop)
//!                     ─► threads: attrs → start barrier (T0) → delay → phases × loops
//!                     ─► join ─► ExecResult { threads: [ThreadResult { log, stats }], groups }
//!  record = tracefs instance on ─► exec ─► off ─► trace.txt + host.json + sysfs/
//! ```
//!
//! ## What is real
//!
//! | workload | on the host |
//! |---|---|
//! | policy, nice, RT priority, DEADLINE runtime/deadline/period, custom slice (`sched_runtime` on SCHED_OTHER/BATCH), uclamp | `sched_setattr` (raw syscall) by the thread on itself, before the start barrier; phase-level changes at the start of each iteration when they differ |
//! | `cpus` | `sched_setaffinity` |
//! | `run` ([`Op::Run`]) | `work_ns / pLoad` calibrated busy loops ([`calib`]); `run` column = wall time around it; `perf` = loops / 1000 |
//! | `runtime` | busy loops in ~5 µs chunks until CLOCK_MONOTONIC shows `wall_ns` passed |
//! | `mem`/`iorun` ([`Op::Work`]) | calibrated busy loops, not counted in `run` |
//! | `sleep` | relative `clock_nanosleep(CLOCK_MONOTONIC)` |
//! | `timer` | rt-app's algorithm ([`timing::timer_step`]): grid from T0 + delay, shared timers move on with every user, relative timers re-anchor after an overrun, absolute ones keep the grid; `clock_nanosleep(TIMER_ABSTIME)`; `wu_lat` = first clock reading after the wait − expiry, reset to 0 by an overrun; `slack` = expiry − now before sleeping |
//! | `yield` | `sched_yield` |
//! | `lock`/`unlock`/`wait`/`signal`/`broad`/`sync`/`suspend`/`resume` | glibc `pthread_mutex_t` (PTHREAD_PRIO_INHERIT with `pi_enabled`) and `pthread_cond_t` on CLOCK_MONOTONIC, held across ops as in rt-app |
//! | `barrier`, `sem_post`/`sem_wait` | futex-based std `Mutex`+`Condvar`: a generation barrier whose last arrival wakes the rest; a counting semaphore that remembers posts |
//! | `fork` | a real thread, T0 = its fork time; at most the pool's threads |
//! | channels ([`Op::Send`]/[`Op::Recv`], hackbench) | blocking pipes or AF_UNIX stream socketpairs, as hackbench's (a pipe wakes one waiting reader or writer); interrupted at the run's end by a signal; kind and message size from [`ChannelConfig`] |
//! | task groups | real cgroups ([`cgroup`]): v2 when a cgroup2 mount offers `cpu` (threaded subtree), else v1's `cpu` hierarchy; quota/period, shares/weight, burst, idle; threads moved by tid |
//!
//! Time base as rt-app: `t_start` just before the threads are created; T0 =
//! the first arrival at the start barrier (the simulator's choice; rt-app
//! uses thread 0's stamp); a thread's timers start at T0 + delay. The run
//! stops at `t_start + duration`: busy loops check the clock every ~50 µs,
//! and every wait is bounded by the end, so an iteration cut by the end
//! gives no row (as rt-app, whose threads are cancelled).
//!
//! ## Deviations from rt-app
//!
//! * pLoad is measured on a helper thread pinned to the calibration CPU at
//!   SCHED_FIFO 99 (when permitted), as the minimum of ten ~1 ms batches,
//!   and kept unrounded; a loop is 64 rounds of an integer hash, not
//!   rt-app's floating-point loop. [`CalibrationMode::Fixed`] skips it.
//! * `Op::Run` executes the workload's `work_ns` (rt-app's
//!   `floor(t / pLoad_file) × pLoad_file`), not `config_us`, to match the
//!   simulator; with the default pLoad the two differ by < 1 ns.
//! * Threads of the root group `/` stay in the process's own cgroup
//!   (under cgroup v1 with autogroup on, that makes the whole run one
//!   autogroup competing with other sessions as one entity: record
//!   `host.json`'s autogroup and take it into account when comparing).
//! * No `mlockall`, no memory buffers (`mem`/`iorun` are busy loops), no
//!   switch back to SCHED_OTHER at the thread's end.
//! * rt-app's ftrace markers (`global.ftrace`) are written, in the
//!   simulator's text, only when a `trace_marker` file is given
//!   ([`ExecOptions::trace_marker`]; `record` gives its instance's); else a
//!   warning says they were not.
//! * `pthread_mutex_timedlock` (CLOCK_REALTIME) and bounded condition
//!   waits replace rt-app's unbounded ones so the run can end on time; a
//!   condition wait that outlives the run's end returns without a signal.
//! * The workload records only channel capacities: the host uses the
//!   kernel's own pipe and socket buffers.
//! * The comm is the thread name cut to 15 bytes (rt-app keeps the
//!   parent's comm when the name is longer).
//!
//! Nothing is silently skipped: every [`Op`] has an implementation; a
//! setting the kernel refuses (EPERM without root, EBUSY for DEADLINE
//! admission, EINVAL for a v1 child quota above its parent's, ...) stops
//! the run with a [`HostError`] naming the thread and the call.
//!
//! [`Op`]: schedlab_core::program::Op
//! [`Op::Run`]: schedlab_core::program::Op::Run
//! [`Op::Work`]: schedlab_core::program::Op::Work
//! [`Op::Send`]: schedlab_core::program::Op::Send
//! [`Op::Recv`]: schedlab_core::program::Op::Recv
#![warn(missing_docs)]

pub mod c2c;
pub mod calib;
pub mod cgroup;
pub mod costs;
pub mod error;
pub mod exec;
pub mod facts;
pub mod host_json;
pub mod json_file;
pub mod noise;
pub mod record;
pub mod recording;
pub mod rundir;
pub mod sync;
pub mod sys;
pub mod timing;
pub mod tracestat;
pub mod validate;

pub use error::HostError;
pub use exec::{exec, CalibrationMode, ChannelConfig, ExecOptions, ExecResult, ThreadResult};
pub use record::{record, RecordOptions, RecordResult};

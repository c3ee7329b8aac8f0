//! `trace.pftrace`: the scheduler tracepoints as a Perfetto protobuf trace
//! made of *ftrace event bundles*, the form `traced_probes` writes, so
//! Perfetto's importer builds its real per-CPU scheduling tracks and the
//! `thread_state` table (Running / R / R+ / S / D ...), not the generic
//! slices a JSON trace would give.
//!
//! The protobuf is encoded by hand (a varint and length-delimited encoder of
//! a few lines); nothing here copies Perfetto code. Field numbers come from
//! Perfetto's published protos (`protos/perfetto/trace/...`), checked
//! against the descriptors of the official `perfetto` Python package
//! (0.59.1, `perfetto.protos.perfetto.trace.perfetto_trace_pb2`); each
//! constant in [`field`] names its message and file.
//!
//! # File layout
//!
//! The file is a `Trace` message: a concatenation of `packet` (field 1)
//! records, every packet on trusted sequence [`SEQUENCE_ID`]:
//!
//! ```text
//! Trace
//! ├─ packet: SystemInfo { utsname { sysname "Linux", release KERNEL_RELEASE, version },
//! │                       num_cpus }
//! ├─ packet: ClockSnapshot { clocks [BOOTTIME=t0, MONOTONIC=t0], primary_trace_clock BOOTTIME }
//! ├─ packet: timestamp t0, ProcessTree { processes [{pid, cmdline [comm], cmdline_is_comm}],
//! │                                      threads   [{tid, tgid = tid, name}] }
//! ├─ packet: FtraceEventBundle { cpu, event [FtraceEvent {
//! │              timestamp, pid (context task), common_flags,
//! │              sched_switch | sched_waking | sched_wakeup
//! │              | sched_wakeup_new | sched_migrate_task | print
//! │              | sched_process_fork | sched_process_exit | sched_process_free
//! │              | task_rename | cpu_idle | generic (sched_stat_runtime) }] }
//! ├─ packet: FtraceEventBundle { ... }         one per CPU per `flush_every` events,
//! └─ ...                                      in the order they filled up
//! ```
//!
//! `t0` is the earliest record's time. Event timestamps are the simulated
//! nanoseconds since boot, in the ftrace default clock (the bundle's
//! `ftrace_clock` is left unset, which Perfetto reads as BOOTTIME); the
//! clock snapshot states that MONOTONIC equals BOOTTIME (a simulated machine
//! never suspends).
//!
//! # Choices
//!
//! * **prev_state** is the integer the kernel's `sched_switch` tracepoint
//!   records since Linux 4.14 (commit 8ef9925b02, `TASK_REPORT`):
//!   `R` = 0, `S` = 0x1 (TASK_INTERRUPTIBLE), `D` = 0x2
//!   (TASK_UNINTERRUPTIBLE), `Z` = 0x20 (EXIT_ZOMBIE) and `R+` (preempted)
//!   = `TASK_REPORT_MAX` = 0x100. The meaning of the bits above 0x20 depends
//!   on the kernel version (before 4.14 preemption was 0x800 or 0x1000), and
//!   Perfetto decodes them by the kernel release it finds in
//!   `SystemInfo.utsname` (`src/trace_processor/types/task_state.cc`,
//!   defaulting to the 4.4 layout when there is none). So the trace states a
//!   release >= 4.14, [`KERNEL_RELEASE`], and Perfetto shows `R+`.
//! * **Names**: a `ProcessTree` packet at `t0` names every task seen in the
//!   run. schedlab has no thread groups, so each task is reported as a
//!   single-threaded process (`tgid == pid`, `cmdline == [comm]`,
//!   `cmdline_is_comm`). Perfetto also takes thread names from the comms of
//!   `sched_switch` and the wakeup events. The idle task (pid 0) is left out
//!   (Perfetto reserves it as `swapper`); inside events it is named
//!   `swapper/<cpu>` as in the text trace.
//! * Comms are written verbatim (not truncated to 15 bytes, not sanitized:
//!   protobuf strings need no escaping), except that pid 0 is `swapper/N`.
//! * **common_flags** carries the kernel's `TRACE_FLAG_*` bits rebuilt from
//!   the five latency-format characters (`d` irqs-off 0x01, `b` BH-off 0x80,
//!   `N`/`n`/`p` need-resched 0x04 / preempt-resched 0x20, `h` hardirq 0x08,
//!   `s` softirq 0x10, `z` NMI 0x40); Perfetto uses the hardirq/softirq bits
//!   for `thread_state.irq_context` of wakeups. The preempt depth has no
//!   field in `FtraceEvent` and is dropped.
//! * `sched_waking` & co. leave out `success` (a constant 1 since Linux 4.3,
//!   and absent from current kernels' event format).
//! * **trace_marker writes** (rt-app's `rtapp_*` markers) are `print`
//!   events (`PrintFtraceEvent`), as `traced_probes` records them: `pid` is
//!   the writing task, `buf` the text followed by the newline the kernel
//!   appends (unless the text ends with one), `ip` the same made-up
//!   address as in trace.dat ([`PRINT_IP`](crate::trace_dat::PRINT_IP)).
//!   Texts are not cut (trace.dat cuts those over 4054 bytes).
//!
//! * **sched_stat_runtime** has no typed proto in Perfetto: it is a
//!   `GenericFtraceEvent` named `sched_stat_runtime` with the fields `comm`
//!   (string), `pid` (int) and `runtime` (uint, ns). `sched_process_exit`'s
//!   `tgid` is the pid (single-threaded processes, as above).
//!
//! # Memory
//!
//! Each CPU keeps one open bundle; it is written to an anonymous temporary
//! file when it holds `flush_every` events (default
//! [`DEFAULT_FLUSH_EVENTS`]) or [`MAX_BUNDLE_BYTES`] bytes.
//! [`finish`](PftraceWriter::finish) writes the header packets (which need
//! the complete task list) and copies the spooled bundles behind them.
//! Memory is bounded by CPUs x bundle size plus one name per task.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use schedlab_core::observe::{PrevState, Sink, TaskView, TraceEvent, TraceRecord};

use crate::spool::{FirstError, Spool, SpoolError};

/// The kernel release stated in `SystemInfo.utsname.release`. Any release
/// from 4.14 on makes Perfetto decode `prev_state` with the `TASK_REPORT`
/// layout used here (`R+` = 0x100).
pub const KERNEL_RELEASE: &str = "6.6.0-schedlab";

/// `trusted_packet_sequence_id` of every packet.
pub const SEQUENCE_ID: u32 = 1;

/// Events per CPU bundle before it is written out.
pub const DEFAULT_FLUSH_EVENTS: usize = 1000;

/// Encoded bytes per CPU bundle before it is written out, whatever the
/// event count (keeps memory bounded on machines with hundreds of CPUs).
pub const MAX_BUNDLE_BYTES: usize = 64 * 1024;

/// Protobuf field numbers, from Perfetto's `.proto` files (paths relative to
/// `protos/perfetto/`), checked against `perfetto_trace_pb2.DESCRIPTOR` of
/// the `perfetto` Python package 0.59.1.
#[allow(missing_docs)]
pub mod field {
    // trace/trace.proto: message Trace
    pub const TRACE_PACKET: u32 = 1;

    // trace/trace_packet.proto: message TracePacket
    pub const PACKET_FTRACE_EVENTS: u32 = 1; // FtraceEventBundle ftrace_events
    pub const PACKET_PROCESS_TREE: u32 = 2; // ProcessTree process_tree
    pub const PACKET_CLOCK_SNAPSHOT: u32 = 6; // ClockSnapshot clock_snapshot
    pub const PACKET_TIMESTAMP: u32 = 8; // optional uint64 timestamp
    pub const PACKET_TRUSTED_SEQUENCE_ID: u32 = 10; // uint32 trusted_packet_sequence_id
    pub const PACKET_SYSTEM_INFO: u32 = 45; // SystemInfo system_info

    // trace/ftrace/ftrace_event_bundle.proto: message FtraceEventBundle
    pub const BUNDLE_CPU: u32 = 1; // optional uint32 cpu
    pub const BUNDLE_EVENT: u32 = 2; // repeated FtraceEvent event

    // trace/ftrace/ftrace_event.proto: message FtraceEvent
    pub const EVENT_TIMESTAMP: u32 = 1; // optional uint64 timestamp (ns)
    pub const EVENT_PID: u32 = 2; // optional uint32 pid (context task)
    pub const EVENT_COMMON_FLAGS: u32 = 5; // optional uint32 common_flags
    pub const EVENT_PRINT: u32 = 3; // oneof event
    pub const EVENT_SCHED_SWITCH: u32 = 4;
    pub const EVENT_SCHED_WAKEUP: u32 = 17;
    pub const EVENT_SCHED_WAKING: u32 = 20;
    pub const EVENT_SCHED_WAKEUP_NEW: u32 = 114;
    pub const EVENT_SCHED_MIGRATE_TASK: u32 = 491;
    pub const EVENT_CPU_IDLE: u32 = 13;
    pub const EVENT_TASK_RENAME: u32 = 236;
    pub const EVENT_SCHED_PROCESS_EXIT: u32 = 238;
    pub const EVENT_SCHED_PROCESS_FORK: u32 = 239;
    pub const EVENT_SCHED_PROCESS_FREE: u32 = 240;
    pub const EVENT_GENERIC: u32 = 327; // GenericFtraceEvent generic

    // trace/ftrace/power.proto: message CpuIdleFtraceEvent
    pub const IDLE_STATE: u32 = 1; // uint32
    pub const IDLE_CPU_ID: u32 = 2; // uint32

    // trace/ftrace/task.proto: message TaskRenameFtraceEvent
    pub const RENAME_PID: u32 = 1; // int32
    pub const RENAME_OLDCOMM: u32 = 2; // string
    pub const RENAME_NEWCOMM: u32 = 3; // string
    pub const RENAME_OOM_SCORE_ADJ: u32 = 4; // int32

    // trace/ftrace/sched.proto: message SchedProcessForkFtraceEvent
    pub const FORK_PARENT_COMM: u32 = 1; // string
    pub const FORK_PARENT_PID: u32 = 2; // int32
    pub const FORK_CHILD_COMM: u32 = 3; // string
    pub const FORK_CHILD_PID: u32 = 4; // int32

    // trace/ftrace/sched.proto: SchedProcessExitFtraceEvent (comm 1, pid 2,
    // tgid 3, prio 4) and SchedProcessFreeFtraceEvent (comm 1, pid 2, prio 3)
    pub const PROC_COMM: u32 = 1; // string
    pub const PROC_PID: u32 = 2; // int32
    pub const EXIT_TGID: u32 = 3; // int32
    pub const EXIT_PRIO: u32 = 4; // int32
    pub const FREE_PRIO: u32 = 3; // int32

    // trace/ftrace/generic.proto: GenericFtraceEvent, GenericFtraceEvent.Field
    pub const GENERIC_EVENT_NAME: u32 = 1; // string
    pub const GENERIC_FIELD: u32 = 2; // repeated Field
    pub const GENERIC_FIELD_NAME: u32 = 1; // string
    pub const GENERIC_FIELD_STR: u32 = 3; // string
    pub const GENERIC_FIELD_INT: u32 = 4; // int64
    pub const GENERIC_FIELD_UINT: u32 = 5; // uint64

    // trace/ftrace/ftrace.proto: message PrintFtraceEvent
    pub const PRINT_IP: u32 = 1; // uint64
    pub const PRINT_BUF: u32 = 2; // string

    // trace/ftrace/sched.proto: message SchedSwitchFtraceEvent
    pub const SWITCH_PREV_COMM: u32 = 1; // string
    pub const SWITCH_PREV_PID: u32 = 2; // int32
    pub const SWITCH_PREV_PRIO: u32 = 3; // int32
    pub const SWITCH_PREV_STATE: u32 = 4; // int64
    pub const SWITCH_NEXT_COMM: u32 = 5; // string
    pub const SWITCH_NEXT_PID: u32 = 6; // int32
    pub const SWITCH_NEXT_PRIO: u32 = 7; // int32

    // trace/ftrace/sched.proto: SchedWakingFtraceEvent, SchedWakeupFtraceEvent,
    // SchedWakeupNewFtraceEvent (same numbering; field 4 `success` unused)
    pub const WAKE_COMM: u32 = 1; // string
    pub const WAKE_PID: u32 = 2; // int32
    pub const WAKE_PRIO: u32 = 3; // int32
    pub const WAKE_TARGET_CPU: u32 = 5; // int32

    // trace/ftrace/sched.proto: SchedMigrateTaskFtraceEvent
    pub const MIGRATE_COMM: u32 = 1; // string
    pub const MIGRATE_PID: u32 = 2; // int32
    pub const MIGRATE_PRIO: u32 = 3; // int32
    pub const MIGRATE_ORIG_CPU: u32 = 4; // int32
    pub const MIGRATE_DEST_CPU: u32 = 5; // int32

    // trace/ps/process_tree.proto: message ProcessTree
    pub const TREE_PROCESSES: u32 = 1; // repeated Process
    pub const TREE_THREADS: u32 = 2; // repeated Thread
                                     // ProcessTree.Process
    pub const PROCESS_PID: u32 = 1; // int32
    pub const PROCESS_CMDLINE: u32 = 3; // repeated string
    pub const PROCESS_CMDLINE_IS_COMM: u32 = 9; // bool
                                                // ProcessTree.Thread
    pub const THREAD_TID: u32 = 1; // int32
    pub const THREAD_NAME: u32 = 2; // string
    pub const THREAD_TGID: u32 = 3; // int32

    // trace/system_info.proto: message SystemInfo, message Utsname
    pub const SYSINFO_UTSNAME: u32 = 1; // Utsname
    pub const SYSINFO_NUM_CPUS: u32 = 8; // uint32
    pub const UTSNAME_SYSNAME: u32 = 1; // string
    pub const UTSNAME_VERSION: u32 = 2; // string
    pub const UTSNAME_RELEASE: u32 = 3; // string

    // trace/clock_snapshot.proto: message ClockSnapshot, ClockSnapshot.Clock
    pub const SNAPSHOT_CLOCKS: u32 = 1; // repeated Clock
    pub const SNAPSHOT_PRIMARY_TRACE_CLOCK: u32 = 2; // BuiltinClock
    pub const CLOCK_ID: u32 = 1; // uint32
    pub const CLOCK_TIMESTAMP: u32 = 2; // uint64

    // common/builtin_clock.proto: enum BuiltinClock
    pub const BUILTIN_CLOCK_MONOTONIC: u64 = 3;
    pub const BUILTIN_CLOCK_BOOTTIME: u64 = 6;
}

/// Kernel `prev_state` bits as `sched_switch` records them on Linux >= 4.14
/// (`include/linux/sched.h`, `__trace_sched_switch_state`).
mod task_state {
    pub const TASK_RUNNING: i64 = 0;
    pub const TASK_INTERRUPTIBLE: i64 = 0x1;
    pub const TASK_UNINTERRUPTIBLE: i64 = 0x2;
    pub const EXIT_ZOMBIE: i64 = 0x20;
    /// `TASK_REPORT_MAX` (= `TASK_REPORT_IDLE << 1`): set for a preempted task.
    pub const TASK_REPORT_MAX: i64 = 0x100;
}

/// The `prev_state` integer of `sched_switch` for a [`PrevState`] (see the
/// module documentation for the kernel-version dependence).
pub fn prev_state_bits(state: PrevState) -> i64 {
    use task_state::*;
    match state {
        PrevState::Runnable => TASK_RUNNING,
        PrevState::Preempted => TASK_REPORT_MAX,
        PrevState::Sleeping => TASK_INTERRUPTIBLE,
        PrevState::Uninterruptible => TASK_UNINTERRUPTIBLE,
        PrevState::Dead => EXIT_ZOMBIE,
    }
}

/// Kernel `TRACE_FLAG_*` bits (`include/linux/trace_events.h`) rebuilt from
/// the five latency-format characters of a [`TraceRecord`]
/// (`kernel/trace/trace_output.c`, `trace_print_lat_fmt`).
pub fn common_flags(lat: &[u8; 5]) -> u32 {
    const IRQS_OFF: u32 = 0x01;
    const NEED_RESCHED: u32 = 0x04;
    const HARDIRQ: u32 = 0x08;
    const SOFTIRQ: u32 = 0x10;
    const PREEMPT_RESCHED: u32 = 0x20;
    const NMI: u32 = 0x40;
    const BH_OFF: u32 = 0x80;
    let irqs = match lat[0] {
        b'D' => IRQS_OFF | BH_OFF,
        b'd' => IRQS_OFF,
        b'b' => BH_OFF,
        _ => 0,
    };
    let resched = match lat[1] {
        b'N' => NEED_RESCHED | PREEMPT_RESCHED,
        b'n' => NEED_RESCHED,
        b'p' => PREEMPT_RESCHED,
        _ => 0,
    };
    let ctx = match lat[2] {
        b'Z' => NMI | HARDIRQ,
        b'z' => NMI,
        b'H' => HARDIRQ | SOFTIRQ,
        b'h' => HARDIRQ,
        b's' => SOFTIRQ,
        _ => 0,
    };
    irqs | resched | ctx
}

// ---------------------------------------------------------------------------
// Protobuf wire encoding (https://protobuf.dev/programming-guides/encoding/).

const WIRE_VARINT: u8 = 0;
const WIRE_LEN: u8 = 2;

fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn put_tag(buf: &mut Vec<u8>, field: u32, wire: u8) {
    put_varint(buf, (u64::from(field) << 3) | u64::from(wire));
}

/// `uint32`, `uint64`, `bool` and enum fields.
fn put_uint(buf: &mut Vec<u8>, field: u32, v: u64) {
    put_tag(buf, field, WIRE_VARINT);
    put_varint(buf, v);
}

/// `int32` and `int64` fields: negative values are sign-extended to 64 bits
/// (ten bytes), as protobuf requires for `int32`.
fn put_int(buf: &mut Vec<u8>, field: u32, v: i64) {
    put_uint(buf, field, v as u64);
}

fn put_str(buf: &mut Vec<u8>, field: u32, s: &str) {
    put_tag(buf, field, WIRE_LEN);
    put_varint(buf, s.len() as u64);
    buf.extend_from_slice(s.as_bytes());
}

/// A nested message: `body` appends the message's fields, then its length
/// is inserted in front of them.
fn put_message(buf: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    put_tag(buf, field, WIRE_LEN);
    let start = buf.len();
    body(buf);
    let len = (buf.len() - start) as u64;
    let mut prefix = Vec::with_capacity(varint_len(len));
    put_varint(&mut prefix, len);
    buf.splice(start..start, prefix);
}

/// The comm inside an event payload: `swapper/<cpu>` for the idle task.
fn payload_comm<'a>(task: &TaskView<'a>, cpu: u32) -> Cow<'a, str> {
    if task.pid == 0 {
        Cow::Owned(format!("swapper/{cpu}"))
    } else {
        Cow::Borrowed(task.comm)
    }
}

/// Appends the fields of one `FtraceEvent` for `rec` (no outer tag).
fn encode_event(buf: &mut Vec<u8>, rec: &TraceRecord<'_>) {
    use field::*;
    let cpu = rec.cpu.0;
    put_uint(buf, EVENT_TIMESTAMP, rec.time);
    put_uint(buf, EVENT_PID, u64::from(rec.ctx.pid));
    put_uint(buf, EVENT_COMMON_FLAGS, u64::from(common_flags(&rec.flags)));
    let wake = |buf: &mut Vec<u8>, id: u32, task: &TaskView<'_>, target: u32| {
        put_message(buf, id, |b| {
            put_str(b, WAKE_COMM, &payload_comm(task, cpu));
            put_int(b, WAKE_PID, i64::from(task.pid));
            put_int(b, WAKE_PRIO, i64::from(task.prio));
            put_int(b, WAKE_TARGET_CPU, i64::from(target));
        })
    };
    match rec.event {
        TraceEvent::SchedSwitch {
            prev,
            prev_state,
            next,
        } => put_message(buf, EVENT_SCHED_SWITCH, |b| {
            put_str(b, SWITCH_PREV_COMM, &payload_comm(&prev, cpu));
            put_int(b, SWITCH_PREV_PID, i64::from(prev.pid));
            put_int(b, SWITCH_PREV_PRIO, i64::from(prev.prio));
            put_int(b, SWITCH_PREV_STATE, prev_state_bits(prev_state));
            put_str(b, SWITCH_NEXT_COMM, &payload_comm(&next, cpu));
            put_int(b, SWITCH_NEXT_PID, i64::from(next.pid));
            put_int(b, SWITCH_NEXT_PRIO, i64::from(next.prio));
        }),
        TraceEvent::SchedWaking { task, target_cpu } => {
            wake(buf, EVENT_SCHED_WAKING, &task, target_cpu.0)
        }
        TraceEvent::SchedWakeup { task, target_cpu } => {
            wake(buf, EVENT_SCHED_WAKEUP, &task, target_cpu.0)
        }
        TraceEvent::SchedWakeupNew { task, target_cpu } => {
            wake(buf, EVENT_SCHED_WAKEUP_NEW, &task, target_cpu.0)
        }
        TraceEvent::SchedMigrateTask {
            task,
            orig_cpu,
            dest_cpu,
        } => put_message(buf, EVENT_SCHED_MIGRATE_TASK, |b| {
            put_str(b, MIGRATE_COMM, &payload_comm(&task, cpu));
            put_int(b, MIGRATE_PID, i64::from(task.pid));
            put_int(b, MIGRATE_PRIO, i64::from(task.prio));
            put_int(b, MIGRATE_ORIG_CPU, i64::from(orig_cpu.0));
            put_int(b, MIGRATE_DEST_CPU, i64::from(dest_cpu.0));
        }),
        TraceEvent::Print { text } => put_message(buf, EVENT_PRINT, |b| {
            put_uint(b, PRINT_IP, crate::trace_dat::PRINT_IP);
            // The kernel's trace_marker buffer: the text and a newline.
            put_tag(b, PRINT_BUF, WIRE_LEN);
            let nl = !text.ends_with('\n');
            put_varint(b, (text.len() + usize::from(nl)) as u64);
            b.extend_from_slice(text.as_bytes());
            if nl {
                b.push(b'\n');
            }
        }),
        TraceEvent::SchedProcessFork { parent, child } => {
            put_message(buf, EVENT_SCHED_PROCESS_FORK, |b| {
                put_str(b, FORK_PARENT_COMM, &payload_comm(&parent, cpu));
                put_int(b, FORK_PARENT_PID, i64::from(parent.pid));
                put_str(b, FORK_CHILD_COMM, &payload_comm(&child, cpu));
                put_int(b, FORK_CHILD_PID, i64::from(child.pid));
            })
        }
        TraceEvent::TaskRename { task, oldcomm } => put_message(buf, EVENT_TASK_RENAME, |b| {
            put_int(b, RENAME_PID, i64::from(task.pid));
            put_str(b, RENAME_OLDCOMM, oldcomm);
            put_str(b, RENAME_NEWCOMM, &payload_comm(&task, cpu));
            put_int(b, RENAME_OOM_SCORE_ADJ, 0);
        }),
        TraceEvent::SchedProcessExit { task } => put_message(buf, EVENT_SCHED_PROCESS_EXIT, |b| {
            put_str(b, PROC_COMM, &payload_comm(&task, cpu));
            put_int(b, PROC_PID, i64::from(task.pid));
            // Single-threaded processes (see Names above).
            put_int(b, EXIT_TGID, i64::from(task.pid));
            put_int(b, EXIT_PRIO, i64::from(task.prio));
        }),
        TraceEvent::SchedProcessFree { task } => put_message(buf, EVENT_SCHED_PROCESS_FREE, |b| {
            put_str(b, PROC_COMM, &payload_comm(&task, cpu));
            put_int(b, PROC_PID, i64::from(task.pid));
            put_int(b, FREE_PRIO, i64::from(task.prio));
        }),
        TraceEvent::CpuIdle { state, cpu_id } => put_message(buf, EVENT_CPU_IDLE, |b| {
            put_uint(b, IDLE_STATE, u64::from(state));
            put_uint(b, IDLE_CPU_ID, u64::from(cpu_id.0));
        }),
        // Perfetto has no typed proto for sched_stat_runtime: a generic
        // event, as traced_probes records events it has no proto for.
        TraceEvent::SchedStatRuntime { task, runtime } => put_message(buf, EVENT_GENERIC, |b| {
            put_str(b, GENERIC_EVENT_NAME, "sched_stat_runtime");
            put_message(b, GENERIC_FIELD, |f| {
                put_str(f, GENERIC_FIELD_NAME, "comm");
                put_str(f, GENERIC_FIELD_STR, &payload_comm(&task, cpu));
            });
            put_message(b, GENERIC_FIELD, |f| {
                put_str(f, GENERIC_FIELD_NAME, "pid");
                put_int(f, GENERIC_FIELD_INT, i64::from(task.pid));
            });
            put_message(b, GENERIC_FIELD, |f| {
                put_str(f, GENERIC_FIELD_NAME, "runtime");
                put_uint(f, GENERIC_FIELD_UINT, runtime);
            });
        }),
    }
}

/// Writes one `Trace.packet` holding `FtraceEventBundle { cpu, events }`,
/// where `events` is already a run of encoded `event` fields.
fn write_bundle_packet<W: Write + ?Sized>(out: &mut W, cpu: u32, events: &[u8]) -> io::Result<()> {
    use field::*;
    let bundle_len = 1 + varint_len(u64::from(cpu)) + events.len();
    let mut head = Vec::with_capacity(32);
    put_uint(
        &mut head,
        PACKET_TRUSTED_SEQUENCE_ID,
        u64::from(SEQUENCE_ID),
    );
    put_tag(&mut head, PACKET_FTRACE_EVENTS, WIRE_LEN);
    put_varint(&mut head, bundle_len as u64);
    put_uint(&mut head, BUNDLE_CPU, u64::from(cpu));
    let packet_len = head.len() + events.len();
    let mut outer = Vec::with_capacity(12);
    put_tag(&mut outer, TRACE_PACKET, WIRE_LEN);
    put_varint(&mut outer, packet_len as u64);
    out.write_all(&outer)?;
    out.write_all(&head)?;
    out.write_all(events)
}

/// Appends one complete `Trace.packet` whose body `body` writes (the
/// sequence id is added first).
fn put_packet(buf: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    put_message(buf, field::TRACE_PACKET, |p| {
        put_uint(p, field::PACKET_TRUSTED_SEQUENCE_ID, u64::from(SEQUENCE_ID));
        body(p);
    });
}

#[derive(Debug, Default)]
struct CpuBundle {
    /// Encoded `event` fields of the open bundle.
    events: Vec<u8>,
    count: usize,
}

/// The `trace.pftrace` writer: a [`Sink`] that encodes each record into its
/// CPU's open `FtraceEventBundle`, spools full bundles to an anonymous
/// temporary file, and on [`finish`](Self::finish) writes the header
/// packets and then every bundle (see the [module docs](self)).
///
/// [`Sink::trace`] cannot fail, so the first I/O error is kept, later
/// records are dropped, and `finish` returns the error.
#[derive(Debug)]
pub struct PftraceWriter {
    spool: Spool,
    cpus: Vec<CpuBundle>,
    flush_every: usize,
    nr_cpus: Option<u32>,
    /// pid -> first comm seen (pid 0 excluded).
    names: BTreeMap<u32, String>,
    first_time: Option<u64>,
    events: u64,
    error: FirstError,
}

impl PftraceWriter {
    /// Spools in `dir`; pick a directory on the same file system as the
    /// output (for example
    /// [`StagedOutDir::stage_dir`](crate::outdir::StagedOutDir::stage_dir)).
    pub fn new_in(dir: impl AsRef<Path>) -> Result<Self, SpoolError> {
        Ok(Self::with_spool(Spool::new_in(dir)?))
    }

    /// Spools in the system temporary directory.
    pub fn new() -> Result<Self, SpoolError> {
        Ok(Self::with_spool(Spool::new()?))
    }

    fn with_spool(spool: Spool) -> Self {
        PftraceWriter {
            spool,
            cpus: Vec::new(),
            flush_every: DEFAULT_FLUSH_EVENTS,
            nr_cpus: None,
            names: BTreeMap::new(),
            first_time: None,
            events: 0,
            error: FirstError::new(),
        }
    }

    /// Writes a CPU's bundle out once it holds `n` events (at least 1;
    /// default [`DEFAULT_FLUSH_EVENTS`]).
    pub fn with_flush_every(mut self, n: usize) -> Self {
        self.flush_every = n.max(1);
        self
    }

    /// The machine's CPU count for `SystemInfo.num_cpus`; without it the
    /// highest CPU that recorded an event plus one is reported.
    pub fn with_nr_cpus(mut self, nr_cpus: u32) -> Self {
        self.nr_cpus = Some(nr_cpus);
        self
    }

    /// Events recorded so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Encodes one record (the same as [`Sink::trace`], but reports errors).
    pub fn write_record(&mut self, rec: &TraceRecord<'_>) -> io::Result<()> {
        self.first_time = Some(self.first_time.map_or(rec.time, |t| t.min(rec.time)));
        self.note_task(&rec.ctx);
        for t in rec.event.tasks() {
            self.note_task(t);
        }
        let cpu = rec.cpu.0 as usize;
        if cpu >= self.cpus.len() {
            self.cpus.resize_with(cpu + 1, CpuBundle::default);
        }
        let b = &mut self.cpus[cpu];
        put_message(&mut b.events, field::BUNDLE_EVENT, |e| encode_event(e, rec));
        b.count += 1;
        self.events += 1;
        if b.count >= self.flush_every || b.events.len() >= MAX_BUNDLE_BYTES {
            write_bundle_packet(&mut self.spool, cpu as u32, &b.events)?;
            b.events.clear();
            b.count = 0;
        }
        Ok(())
    }

    fn note_task(&mut self, task: &TaskView<'_>) {
        if task.pid != 0 && !self.names.contains_key(&task.pid) {
            self.names.insert(task.pid, task.comm.to_owned());
        }
    }

    /// The `SystemInfo`, `ClockSnapshot` and `ProcessTree` packets.
    fn header(&self) -> Vec<u8> {
        use field::*;
        let t0 = self.first_time.unwrap_or(0);
        let nr_cpus = self.nr_cpus.unwrap_or(self.cpus.len() as u32);
        let mut buf = Vec::with_capacity(256 + 64 * self.names.len());
        put_packet(&mut buf, |p| {
            put_message(p, PACKET_SYSTEM_INFO, |s| {
                put_message(s, SYSINFO_UTSNAME, |u| {
                    put_str(u, UTSNAME_SYSNAME, "Linux");
                    put_str(u, UTSNAME_VERSION, "#1 SMP schedlab simulation");
                    put_str(u, UTSNAME_RELEASE, KERNEL_RELEASE);
                });
                put_uint(s, SYSINFO_NUM_CPUS, u64::from(nr_cpus));
            });
        });
        put_packet(&mut buf, |p| {
            put_message(p, PACKET_CLOCK_SNAPSHOT, |c| {
                for id in [BUILTIN_CLOCK_BOOTTIME, BUILTIN_CLOCK_MONOTONIC] {
                    put_message(c, SNAPSHOT_CLOCKS, |k| {
                        put_uint(k, CLOCK_ID, id);
                        put_uint(k, CLOCK_TIMESTAMP, t0);
                    });
                }
                put_uint(c, SNAPSHOT_PRIMARY_TRACE_CLOCK, BUILTIN_CLOCK_BOOTTIME);
            });
        });
        put_packet(&mut buf, |p| {
            put_uint(p, PACKET_TIMESTAMP, t0);
            put_message(p, PACKET_PROCESS_TREE, |t| {
                for (&pid, comm) in &self.names {
                    put_message(t, TREE_PROCESSES, |m| {
                        put_int(m, PROCESS_PID, i64::from(pid));
                        put_str(m, PROCESS_CMDLINE, comm);
                        put_uint(m, PROCESS_CMDLINE_IS_COMM, 1);
                    });
                }
                for (&pid, comm) in &self.names {
                    put_message(t, TREE_THREADS, |m| {
                        put_int(m, THREAD_TID, i64::from(pid));
                        put_str(m, THREAD_NAME, comm);
                        put_int(m, THREAD_TGID, i64::from(pid));
                    });
                }
            });
        });
        buf
    }

    /// Writes the complete trace to `out`: header packets, spooled bundles,
    /// then each CPU's last bundle. Returns the number of ftrace events, or
    /// the first error met while recording.
    pub fn finish<W: Write + ?Sized>(mut self, out: &mut W) -> io::Result<u64> {
        self.error.take()?;
        out.write_all(&self.header())?;
        let PftraceWriter {
            spool,
            cpus,
            events,
            ..
        } = self;
        spool.copy_to(out)?;
        for (cpu, b) in cpus.iter().enumerate() {
            if b.count > 0 {
                write_bundle_packet(out, cpu as u32, &b.events)?;
            }
        }
        out.flush()?;
        Ok(events)
    }
}

impl Sink for PftraceWriter {
    fn wants_trace(&self) -> bool {
        true
    }
    fn trace(&mut self, rec: &TraceRecord<'_>) {
        if !self.error.is_set() {
            let r = self.write_record(rec);
            self.error.keep(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::ids::CpuId;

    fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut v = Vec::new();
        f(&mut v);
        v
    }

    #[test]
    fn varints() {
        assert_eq!(enc(|b| put_varint(b, 0)), [0x00]);
        assert_eq!(enc(|b| put_varint(b, 1)), [0x01]);
        assert_eq!(enc(|b| put_varint(b, 127)), [0x7f]);
        assert_eq!(enc(|b| put_varint(b, 128)), [0x80, 0x01]);
        assert_eq!(enc(|b| put_varint(b, 300)), [0xac, 0x02]);
        assert_eq!(
            enc(|b| put_varint(b, u64::MAX)),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        for v in [0, 1, 127, 128, 16383, 16384, u64::MAX] {
            assert_eq!(varint_len(v), enc(|b| put_varint(b, v)).len());
        }
    }

    #[test]
    fn fields() {
        // field 1 varint 150: the protobuf guide's example `08 96 01`.
        assert_eq!(enc(|b| put_uint(b, 1, 150)), [0x08, 0x96, 0x01]);
        // int32 -1: sign-extended to ten bytes.
        assert_eq!(
            enc(|b| put_int(b, 2, -1)),
            [0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        // string field 2 "testing": `12 07 74 65 73 74 69 6e 67`.
        assert_eq!(
            enc(|b| put_str(b, 2, "testing")),
            [0x12, 0x07, b't', b'e', b's', b't', b'i', b'n', b'g']
        );
        // field 491 (sched_migrate_task), wire type 2: (491 << 3) | 2 = 3930.
        assert_eq!(
            enc(|b| put_message(b, 491, |m| put_uint(m, 1, 3))),
            [0xda, 0x1e, 0x02, 0x08, 0x03]
        );
        // nested length over 127 takes two bytes.
        let long = "x".repeat(200);
        let m = enc(|b| put_message(b, 1, |m| put_str(m, 1, &long)));
        assert_eq!(&m[..5], &[0x0a, 0xcb, 0x01, 0x0a, 0xc8]);
        assert_eq!(m.len(), 2 + 1 + 203);
    }

    #[test]
    fn sched_switch_event_bytes() {
        let rec = TraceRecord {
            time: 1_000,
            cpu: CpuId(1),
            ctx: TaskView {
                pid: 7,
                comm: "a",
                prio: 120,
            },
            flags: *b"dNh2.",
            event: TraceEvent::SchedSwitch {
                prev: TaskView {
                    pid: 7,
                    comm: "a",
                    prio: 120,
                },
                prev_state: PrevState::Preempted,
                next: TaskView {
                    pid: 0,
                    comm: "idle",
                    prio: 120,
                },
            },
        };
        let got = enc(|b| encode_event(b, &rec));
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            0x08, 0xe8, 0x07,           // timestamp 1000
            0x10, 0x07,                 // pid 7
            0x28, 0x2d,                 // common_flags 0x01|0x04|0x20|0x08
            0x22, 0x19,                 // sched_switch, 25 bytes
              0x0a, 0x01, b'a',         //   prev_comm "a"
              0x10, 0x07,               //   prev_pid 7
              0x18, 0x78,               //   prev_prio 120
              0x20, 0x80, 0x02,         //   prev_state 0x100 (R+)
              0x2a, 0x09, b's', b'w', b'a', b'p', b'p', b'e', b'r', b'/', b'1',
              0x30, 0x00,               //   next_pid 0
              0x38, 0x78,               //   next_prio 120
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn print_event_bytes() {
        let rt = TaskView {
            pid: 300,
            comm: "rt-app",
            prio: 120,
        };
        let rec = |text| TraceRecord {
            time: 5,
            cpu: CpuId(0),
            ctx: rt,
            flags: *b".....",
            event: TraceEvent::Print { text },
        };
        let got = enc(|b| encode_event(b, &rec("hi")));
        let mut want: Vec<u8> = vec![
            0x08,
            0x05, // timestamp 5
            0x10,
            0xac,
            0x02, // pid 300
            0x28,
            0x00, // common_flags 0
            0x1a, // print (field 3)
            (1 + varint_len(crate::trace_dat::PRINT_IP) + 5) as u8,
            0x08, // ip (field 1)
        ];
        want.extend(enc(|b| put_varint(b, crate::trace_dat::PRINT_IP)));
        want.extend([0x12, 0x03, b'h', b'i', b'\n']); // buf: text + newline
        assert_eq!(got, want);
        // No second newline.
        let got = enc(|b| encode_event(b, &rec("x\n")));
        assert!(got.ends_with(&[0x12, 0x02, b'x', b'\n']), "{got:x?}");
    }

    #[test]
    fn states_and_flags() {
        assert_eq!(prev_state_bits(PrevState::Runnable), 0);
        assert_eq!(prev_state_bits(PrevState::Preempted), 0x100);
        assert_eq!(prev_state_bits(PrevState::Sleeping), 1);
        assert_eq!(prev_state_bits(PrevState::Uninterruptible), 2);
        assert_eq!(prev_state_bits(PrevState::Dead), 0x20);
        assert_eq!(common_flags(b"....."), 0);
        assert_eq!(common_flags(b"d..2."), 0x01);
        assert_eq!(common_flags(b"dNs1."), 0x01 | 0x24 | 0x10);
        assert_eq!(common_flags(b"Dnh3."), 0x81 | 0x04 | 0x08);
    }
}

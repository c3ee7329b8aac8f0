//! `trace.dat`: trace-cmd's binary file format (version 6, "flyrecord").
//!
//! What this module owns: [`TraceDatWriter`], a
//! [`Sink`] that encodes every
//! [`TraceRecord`] the way the kernel's ring buffer stores it, so that
//! `trace-cmd report trace.dat` prints the simulated events and KernelShark
//! opens the file. It is the binary twin of
//! [`SpooledTraceWriter`](crate::ftrace_text::SpooledTraceWriter): same
//! comms, same `prev_state` letters, same idle naming.
//!
//! Source of every format fact: the `trace-cmd.dat.v6(5)` man page (file
//! layout), the kernel's `events/header_page`, `events/header_event` and
//! `events/sched/*/format`, `events/task/task_rename/format`,
//! `events/power/cpu_idle/format` and `events/ftrace/print/format` files
//! (ring-buffer page and event layout, field offsets and print formats of
//! the sched events and of `trace_marker` writes on x86-64), and
//! `docs/formats.md` 4.3 (`prev_state`). Everything was checked against the
//! real `trace-cmd report` (see the integration tests); no trace-cmd or
//! libtraceevent code was used.
//!
//! # File layout
//!
//! All numbers are little endian; "long" is 8 bytes; pages are 4096 bytes.
//!
//! ```text
//!  offset 0 ┌──────────────────────────────────────────────────────────────┐
//!           │ 17 08 44 "tracing"  "6\0"  endian=0  long=8  page_size u32   │ initial format
//!           │ "header_page\0"  u64 len  text (page header fields)          │
//!           │ "header_event\0" u64 len  text (event header bit layout)     │
//!           │ u32 1  u64 len  events/ftrace/print/format text (ftrace)     │
//!           │ u32 3  "sched\0" u32 9, "task\0" u32 1, "power\0" u32 1      │
//!           │        each event: { u64 len, events/<sys>/<event>/format }  │
//!           │ u32 len  kallsyms text ("<addr> T tracing_mark_write\n")     │
//!           │ u32 0 (printk formats)                                       │
//!           │ u64 len  cmdlines text: "<pid> <comm>\n" per task seen       │
//!           │ u32 nr_cpus                                                  │
//!           │ "options  \0"  { u16 id, u32 len, data }*  u16 0             │ trace clock "local"
//!           │ "flyrecord\0"  nr_cpus × { u64 offset, u64 size }            │
//!           ├─ zero padding to a page boundary ────────────────────────────┤
//!           │ CPU 0 pages │ CPU 1 pages │ ... (each CPU's pages contiguous) │
//!           └──────────────────────────────────────────────────────────────┘
//!
//!  one ring-buffer page (4096 bytes)
//!  ┌───────────────┬───────────────┬────────────────────────────────────┐
//!  │ u64 timestamp │ u64 commit    │ events (commit bytes), zeros after │
//!  └───────────────┴───────────────┴────────────────────────────────────┘
//!    absolute time   bytes used in data (at most 4080)
//!
//!  one event: u32 header = type_len (bits 0-4) | time_delta << 5 (27 bits)
//!    type_len 1..=28 : data record of type_len × 4 bytes follows
//!    type_len 0      : next u32 holds 4 + the data length, data follows
//!                      (records over 112 bytes: long `print` texts)
//!    type_len 30     : TIME_EXTEND, next u32 holds delta >> 27 (8 bytes in all)
//!  data record = the event's fields at the offsets of its format file:
//!    u16 common_type (event id), u8 common_flags, u8 common_preempt_count,
//!    i32 common_pid, then the event's own fields
//!  print (trace_marker write) = common fields, u64 ip at 8, then at 16 the
//!    text, "\n" (unless it ends with one), NUL, zeros to a multiple of 4
//! ```
//!
//! The delta of the first event of a page is 0 (the page timestamp is the
//! event's time); later events carry the delta to the previous event of the
//! page, preceded by a TIME_EXTEND when it needs more than 27 bits. A new
//! page is started when an event does not fit, when its delta needs more
//! than 59 bits, or when time goes backwards on a CPU (which the ring buffer
//! format cannot express within a page).
//!
//! # Spooling
//!
//! Each CPU keeps one page in memory. Full pages go, in the order they fill,
//! to one anonymous temporary file; only their page numbers are remembered
//! per CPU (4 bytes per 4 KiB page). [`TraceDatWriter::finish`] writes the
//! header and then copies each CPU's pages in order. Memory use is one page
//! per CPU plus the cmdline table, however long the trace; one file
//! descriptor is used whatever the CPU count.
//!
//! # Differences from a trace.dat recorded on a real kernel
//!
//! * Only the events schedlab emits are described: the `sched` system's
//!   five plus `sched_process_fork`/`_exit`/`_free` and `sched_stat_runtime`,
//!   `task`'s `task_rename`, `power`'s `cpu_idle` ([`EXTRA_EVENTS`]), and the
//!   ftrace `print` event; kallsyms holds the one symbol
//!   `print` records point at ([`PRINT_IP`], named `tracing_mark_write`, so
//!   `trace-cmd report` prints `print: tracing_mark_write: <text>`), there
//!   are no printk formats, and the only option is the trace clock
//!   (`local`). Event ids are fixed (see [`EVENT_IDS`], and
//!   [`PRINT_EVENT_ID`] = 5, the kernel's `TRACE_PRINT`), not the
//!   machine-specific ones.
//! * A `print` text longer than a page can hold (4054 bytes) is cut to fit,
//!   like the kernel cuts a long `trace_marker` write; `trace.txt` keeps it
//!   whole.
//! * Pages end where their events end (`commit`); the kernel's padding
//!   events and "missed events" flags are never written. Every page of a CPU
//!   is present (no overwritten pages).
//! * Comms are sanitised exactly as in `trace.txt` ([`sanitize_comm`]:
//!   whitespace, control characters and `=` become `_`, empty becomes
//!   `<...>`) and cut to 15 bytes (the kernel's `TASK_COMM_LEN` - 1); pid 0
//!   is `swapper/<cpu>` in payloads. The cmdline table holds the last comm
//!   seen per pid, so a task renamed mid-run shows its last name in
//!   trace-cmd's TASK column.
//! * The latency flags of [`TraceRecord::flags`] become the kernel's
//!   `common_flags` bits (`d`/`D`/`b`/`X`, `N`/`n`/`p`, `H`/`h`/`s`/`Z`/`z`)
//!   and preempt count byte (preempt depth in the low nibble,
//!   migrate-disable depth in the high nibble, as since Linux 5.13). The
//!   lazy-preemption characters of 6.13+ kernels (`B`, `L`, `l`, `b` in the
//!   second column) have no bit here and are dropped. libtraceevent 1.7
//!   (`trace-cmd report -l`) prints back only `d`/`X`, `N`, `H`/`h`/`s` and
//!   the two digits, so `D`, `b`, `n`, `p`, `z`, `Z` show up simplified
//!   there, as they would for a real kernel's file.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use schedlab_core::observe::{PrevState, Sink, TaskView, TraceEvent, TraceRecord};

use crate::ftrace_text::sanitize_comm;
use crate::spool::{FirstError, Spool, SpoolError};

/// The file magic: `0x17 0x08 0x44` then `tracing`.
pub const MAGIC: &[u8; 10] = b"\x17\x08\x44tracing";
/// The page size written in the header and used for the data pages.
pub const PAGE_SIZE: usize = 4096;
/// Bytes of the page header (timestamp and commit).
const PAGE_HEADER: usize = 16;
/// Bytes of event data a page holds.
const PAGE_DATA: usize = PAGE_SIZE - PAGE_HEADER;
/// Event header `type_len` of a time extend.
const TYPE_TIME_EXTEND: u32 = 30;
/// Largest `type_len` of a data record (data of at most 112 bytes).
const MAX_DATA_TYPE_LEN: usize = 28;
/// Bits of the delta in the event header.
const DELTA_BITS: u32 = 27;
/// Largest delta a time extend can carry (27 + 32 bits).
const MAX_EXTENDED_DELTA: u64 = (1 << (DELTA_BITS + 32)) - 1;
/// `TASK_COMM_LEN` of the kernel: comm fields are 16 bytes, NUL included.
const COMM_LEN: usize = 16;
/// Offset of `buf` in the `print` event (after the common fields and `ip`).
const PRINT_BUF_OFFSET: usize = 16;
/// Longest data record: a long-form event (header and length word, 8
/// bytes) alone in a page.
const MAX_DATA_LEN: usize = PAGE_DATA - 8;
/// Longest text of a `print` record: the rest of [`MAX_DATA_LEN`] after
/// the fixed fields, the newline and the NUL. Longer texts are cut, as the
/// kernel cuts `trace_marker` writes to what fits in a ring-buffer page.
const MAX_PRINT_TEXT: usize = MAX_DATA_LEN - PRINT_BUF_OFFSET - 2;

/// Id of the ftrace `print` event (`TRACE_PRINT` of the kernel's
/// `enum trace_type`, the id it has on every kernel).
pub const PRINT_EVENT_ID: u16 = 5;
/// The `ip` of every `print` record: a made-up kernel text address, named
/// `tracing_mark_write` in the file's kallsyms section so that the `%ps` of
/// the print format shows the function the kernel names there.
pub const PRINT_IP: u64 = 0xffff_ffff_8120_0000;
/// The kallsyms section: the one symbol `print` records point at.
const KALLSYMS: &str = "ffffffff81200000 T tracing_mark_write\n";

/// Event ids, in the order sched_switch, sched_waking, sched_wakeup,
/// sched_wakeup_new, sched_migrate_task. Real kernels assign ids at boot;
/// any ids work because the format files carry them.
pub const EVENT_IDS: [u16; 5] = [316, 319, 318, 317, 311];

/// Ids of the other events, in the order of [`EXTRA_EVENTS`]. Any unused
/// ids work (see [`EVENT_IDS`]).
pub const EXTRA_EVENT_IDS: [u16; 6] = [306, 308, 309, 301, 143, 180];

/// The other events (system, name, fields, print format), with the field
/// layout and print format of their `events/<system>/<name>/format` files on
/// x86-64 (`sched_stat_runtime` as since Linux 6.8, without `vruntime`;
/// `task_rename` with its `pid` field, as before 6.13, which LISA reads).
pub const EXTRA_EVENTS: [(&str, &str, &[Field], &str); 6] = [
    (
        "sched",
        "sched_process_fork",
        &[
            ("char parent_comm[16]", 8, 16, 0),
            ("pid_t parent_pid", 24, 4, 1),
            ("char child_comm[16]", 28, 16, 0),
            ("pid_t child_pid", 44, 4, 1),
        ],
        "\"comm=%s pid=%d child_comm=%s child_pid=%d\", REC->parent_comm, REC->parent_pid, REC->child_comm, REC->child_pid",
    ),
    ("sched", "sched_process_exit", &PROCESS_FIELDS, PROCESS_FMT),
    ("sched", "sched_process_free", &PROCESS_FIELDS, PROCESS_FMT),
    (
        "sched",
        "sched_stat_runtime",
        &[
            ("char comm[16]", 8, 16, 0),
            ("pid_t pid", 24, 4, 1),
            ("u64 runtime", 32, 8, 0),
        ],
        "\"comm=%s pid=%d runtime=%Lu [ns]\", REC->comm, REC->pid, (unsigned long long)REC->runtime",
    ),
    (
        "task",
        "task_rename",
        &[
            ("pid_t pid", 8, 4, 1),
            ("char oldcomm[16]", 12, 16, 0),
            ("char newcomm[16]", 28, 16, 0),
            ("short oom_score_adj", 44, 2, 1),
        ],
        "\"pid=%d oldcomm=%s newcomm=%s oom_score_adj=%hd\", REC->pid, REC->oldcomm, REC->newcomm, REC->oom_score_adj",
    ),
    (
        "power",
        "cpu_idle",
        &[("u32 state", 8, 4, 0), ("u32 cpu_id", 12, 4, 0)],
        "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id",
    ),
];

/// The fields of `sched_process_exit` and `sched_process_free`.
const PROCESS_FIELDS: [Field; 3] = [
    ("char comm[16]", 8, 16, 0),
    ("pid_t pid", 24, 4, 1),
    ("int prio", 28, 4, 1),
];
const PROCESS_FMT: &str = "\"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio";

/// `prev_state` bits of the kernel's report encoding (4.14 and later):
/// one bit per state letter, `TASK_REPORT_MAX` (0x100) for a preemption.
fn prev_state_bits(s: PrevState) -> i64 {
    match s {
        PrevState::Runnable => 0,
        PrevState::Preempted => 0x100,
        PrevState::Sleeping => 0x1,
        PrevState::Uninterruptible => 0x2,
        PrevState::Dead => 0x20,
    }
}

/// The ftrace `header_page` file of a 64-bit kernel with 4 KiB pages.
fn header_page_text() -> String {
    format!(
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
         \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
         \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
         \tfield: char data;\toffset:16;\tsize:{PAGE_DATA};\tsigned:1;\n"
    )
}

/// The ftrace `header_event` file (the ring buffer event header layout).
const HEADER_EVENT: &str = "# compressed entry header\n\
\ttype_len    :    5 bits\n\
\ttime_delta  :   27 bits\n\
\tarray       :   32 bits\n\
\n\
\tpadding     : type == 29\n\
\ttime_extend : type == 30\n\
\ttime_stamp : type == 31\n\
\tdata max type_len  == 28\n";

/// One line of a format file: (declaration, offset, size, signed).
pub type Field = (&'static str, u32, u32, u8);

/// The fields every event starts with.
const COMMON_FIELDS: [Field; 4] = [
    ("unsigned short common_type", 0, 2, 0),
    ("unsigned char common_flags", 2, 1, 0),
    ("unsigned char common_preempt_count", 3, 1, 0),
    ("int common_pid", 4, 4, 1),
];

/// The kernel's sched_switch print format (report-encoded `prev_state`).
const SWITCH_FMT: &str = "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", \
REC->prev_comm, REC->prev_pid, REC->prev_prio, \
(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? \
__print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", \
{ 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, \
{ 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", \
REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", \
REC->next_comm, REC->next_pid, REC->next_prio";

/// The fields of the three wakeup events.
const WAKEUP_FIELDS: [Field; 4] = [
    ("char comm[16]", 8, 16, 0),
    ("pid_t pid", 24, 4, 1),
    ("int prio", 28, 4, 1),
    ("int target_cpu", 32, 4, 1),
];
const WAKEUP_FMT: &str =
    "\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu";

/// Appends one `field:` line of a format file.
fn push_field(s: &mut String, (decl, off, size, signed): &Field) {
    s.push_str(&format!(
        "\tfield:{decl};\toffset:{off};\tsize:{size};\tsigned:{signed};\n"
    ));
}

/// The format file of event `i` (index into [`EVENT_IDS`]).
fn format_text(i: usize) -> String {
    let (name, fields, fmt): (&str, &[Field], &str) = match i {
        0 => (
            "sched_switch",
            &[
                ("char prev_comm[16]", 8, 16, 0),
                ("pid_t prev_pid", 24, 4, 1),
                ("int prev_prio", 28, 4, 1),
                ("long prev_state", 32, 8, 1),
                ("char next_comm[16]", 40, 16, 0),
                ("pid_t next_pid", 56, 4, 1),
                ("int next_prio", 60, 4, 1),
            ],
            SWITCH_FMT,
        ),
        1 => ("sched_waking", &WAKEUP_FIELDS, WAKEUP_FMT),
        2 => ("sched_wakeup", &WAKEUP_FIELDS, WAKEUP_FMT),
        3 => ("sched_wakeup_new", &WAKEUP_FIELDS, WAKEUP_FMT),
        _ => (
            "sched_migrate_task",
            &[
                ("char comm[16]", 8, 16, 0),
                ("pid_t pid", 24, 4, 1),
                ("int prio", 28, 4, 1),
                ("int orig_cpu", 32, 4, 1),
                ("int dest_cpu", 36, 4, 1),
            ],
            "\"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", REC->comm, REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu",
        ),
    };
    event_format(name, EVENT_IDS[i], fields, fmt)
}

/// The format file of event `name`.
fn event_format(name: &str, id: u16, fields: &[Field], fmt: &str) -> String {
    let mut s = format!("name: {name}\nID: {id}\nformat:\n");
    for f in &COMMON_FIELDS {
        push_field(&mut s, f);
    }
    s.push('\n');
    for f in fields {
        push_field(&mut s, f);
    }
    s.push_str(&format!("\nprint fmt: {fmt}\n"));
    s
}

/// The format file of the ftrace `print` event (`events/ftrace/print/format`
/// of a 64-bit kernel): a `trace_marker` write.
fn print_format_text() -> String {
    let mut s = format!("name: print\nID: {PRINT_EVENT_ID}\nformat:\n");
    for f in &COMMON_FIELDS {
        push_field(&mut s, f);
    }
    s.push('\n');
    push_field(&mut s, &("unsigned long ip", 8, 8, 0));
    push_field(&mut s, &("char buf[]", PRINT_BUF_OFFSET as u32, 0, 1));
    s.push_str("\nprint fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n");
    s
}

/// The text of a `print` record's `buf`: cut to [`MAX_PRINT_TEXT`] bytes on
/// a character boundary.
fn print_text(text: &str) -> &str {
    let mut end = text.len().min(MAX_PRINT_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The comm as stored in a 16-byte field: cut to 15 bytes on a character
/// boundary, then sanitised like `trace.txt` (which never lengthens a
/// non-empty comm).
fn kernel_comm(comm: &str) -> Cow<'_, str> {
    let mut end = comm.len().min(COMM_LEN - 1);
    while !comm.is_char_boundary(end) {
        end -= 1;
    }
    sanitize_comm(&comm[..end])
}

/// The comm of `task` in a payload: `swapper/<cpu>` for pid 0.
fn payload_comm<'a>(task: &TaskView<'a>, cpu: u32) -> Cow<'a, str> {
    if task.pid == 0 {
        Cow::Owned(kernel_comm(&format!("swapper/{cpu}")).into_owned())
    } else {
        kernel_comm(task.comm)
    }
}

/// Latency flag characters (formats-spec.md 4.1) to the kernel's
/// `common_flags` bits and preempt count.
fn common_flags(flags: &[u8; 5]) -> (u8, u8) {
    const IRQS_OFF: u8 = 0x01;
    const IRQS_NOSUPPORT: u8 = 0x02;
    const NEED_RESCHED: u8 = 0x04;
    const HARDIRQ: u8 = 0x08;
    const SOFTIRQ: u8 = 0x10;
    const PREEMPT_RESCHED: u8 = 0x20;
    const NMI: u8 = 0x40;
    const BH_OFF: u8 = 0x80;
    let mut f = match flags[0] {
        b'd' => IRQS_OFF,
        b'D' => IRQS_OFF | BH_OFF,
        b'b' => BH_OFF,
        b'X' => IRQS_NOSUPPORT,
        _ => 0,
    };
    f |= match flags[1] {
        b'N' => NEED_RESCHED | PREEMPT_RESCHED,
        b'n' => NEED_RESCHED,
        b'p' => PREEMPT_RESCHED,
        _ => 0,
    };
    f |= match flags[2] {
        b'Z' => NMI | HARDIRQ,
        b'z' => NMI,
        b'H' => HARDIRQ | SOFTIRQ,
        b'h' => HARDIRQ,
        b's' => SOFTIRQ,
        _ => 0,
    };
    // Since Linux 5.13 the preempt count byte holds the preempt depth in
    // its low nibble and the migrate-disable depth in its high nibble.
    let nibble = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
    (f, nibble(flags[3]) | nibble(flags[4]) << 4)
}

/// Encodes the data record of `rec` into `buf` (cleared first), zero padded
/// to a multiple of 4 bytes.
fn encode(rec: &TraceRecord<'_>, buf: &mut Vec<u8>) {
    let cpu = rec.cpu.0;
    buf.clear();
    let (flags, pc) = common_flags(&rec.flags);
    let put = |buf: &mut Vec<u8>, off: usize, bytes: &[u8]| {
        if buf.len() < off + bytes.len() {
            buf.resize(off + bytes.len(), 0);
        }
        buf[off..off + bytes.len()].copy_from_slice(bytes)
    };
    let put_comm = |buf: &mut Vec<u8>, off: usize, t: &TaskView<'_>| {
        buf.resize(buf.len().max(off + COMM_LEN), 0);
        put(buf, off, payload_comm(t, cpu).as_bytes());
    };
    let put_i32 = |buf: &mut Vec<u8>, off: usize, v: i32| put(buf, off, &v.to_le_bytes());
    let id = match rec.event {
        TraceEvent::SchedSwitch {
            prev,
            prev_state,
            next,
        } => {
            put_comm(buf, 8, &prev);
            put_i32(buf, 24, prev.pid as i32);
            put_i32(buf, 28, prev.prio);
            put(buf, 32, &prev_state_bits(prev_state).to_le_bytes());
            put_comm(buf, 40, &next);
            put_i32(buf, 56, next.pid as i32);
            put_i32(buf, 60, next.prio);
            EVENT_IDS[0]
        }
        TraceEvent::SchedWaking { task, target_cpu }
        | TraceEvent::SchedWakeup { task, target_cpu }
        | TraceEvent::SchedWakeupNew { task, target_cpu } => {
            put_comm(buf, 8, &task);
            put_i32(buf, 24, task.pid as i32);
            put_i32(buf, 28, task.prio);
            put_i32(buf, 32, target_cpu.0 as i32);
            EVENT_IDS[match rec.event {
                TraceEvent::SchedWaking { .. } => 1,
                TraceEvent::SchedWakeup { .. } => 2,
                _ => 3,
            }]
        }
        TraceEvent::SchedMigrateTask {
            task,
            orig_cpu,
            dest_cpu,
        } => {
            put_comm(buf, 8, &task);
            put_i32(buf, 24, task.pid as i32);
            put_i32(buf, 28, task.prio);
            put_i32(buf, 32, orig_cpu.0 as i32);
            put_i32(buf, 36, dest_cpu.0 as i32);
            EVENT_IDS[4]
        }
        TraceEvent::Print { text } => {
            // As the kernel's trace_marker: the text, a newline unless it
            // ends with one, and a NUL.
            let text = print_text(text);
            put(buf, 8, &PRINT_IP.to_le_bytes());
            put(buf, PRINT_BUF_OFFSET, text.as_bytes());
            if !text.ends_with('\n') {
                buf.push(b'\n');
            }
            buf.push(0);
            PRINT_EVENT_ID
        }
        TraceEvent::SchedProcessFork { parent, child } => {
            put_comm(buf, 8, &parent);
            put_i32(buf, 24, parent.pid as i32);
            put_comm(buf, 28, &child);
            put_i32(buf, 44, child.pid as i32);
            EXTRA_EVENT_IDS[0]
        }
        TraceEvent::SchedProcessExit { task } | TraceEvent::SchedProcessFree { task } => {
            put_comm(buf, 8, &task);
            put_i32(buf, 24, task.pid as i32);
            put_i32(buf, 28, task.prio);
            EXTRA_EVENT_IDS[if matches!(rec.event, TraceEvent::SchedProcessExit { .. }) {
                1
            } else {
                2
            }]
        }
        TraceEvent::SchedStatRuntime { task, runtime } => {
            put_comm(buf, 8, &task);
            put_i32(buf, 24, task.pid as i32);
            put(buf, 32, &runtime.to_le_bytes());
            EXTRA_EVENT_IDS[3]
        }
        TraceEvent::TaskRename { task, oldcomm } => {
            put_i32(buf, 8, task.pid as i32);
            buf.resize(buf.len().max(12 + COMM_LEN), 0);
            put(buf, 12, kernel_comm(oldcomm).as_bytes());
            put_comm(buf, 28, &task);
            put(buf, 44, &0i16.to_le_bytes()); // oom_score_adj
            EXTRA_EVENT_IDS[4]
        }
        TraceEvent::CpuIdle { state, cpu_id } => {
            put(buf, 8, &state.to_le_bytes());
            put(buf, 12, &cpu_id.0.to_le_bytes());
            EXTRA_EVENT_IDS[5]
        }
    };
    put(buf, 0, &id.to_le_bytes());
    buf[2] = flags;
    buf[3] = pc;
    put_i32(buf, 4, rec.ctx.pid as i32);
    buf.resize(buf.len().next_multiple_of(4), 0);
}

/// One CPU's page under construction and the spool pages it owns.
#[derive(Debug)]
struct CpuBuf {
    page: Box<[u8; PAGE_SIZE]>,
    /// Data bytes used in `page`.
    used: usize,
    /// Time of the last event written to `page`.
    last: u64,
    /// Spool page numbers of this CPU's full pages, in order.
    pages: Vec<u32>,
}

impl CpuBuf {
    fn new() -> Self {
        CpuBuf {
            page: Box::new([0; PAGE_SIZE]),
            used: 0,
            last: 0,
            pages: Vec::new(),
        }
    }
}

/// The `trace.dat` writer: a [`Sink`] that encodes records into per-CPU
/// ring-buffer pages spooled in an anonymous temporary file, and
/// [`finish`](Self::finish), which writes the complete file.
///
/// [`Sink::trace`] cannot fail, so the first I/O error is kept, later
/// records are dropped, and `finish` returns the error.
#[derive(Debug)]
pub struct TraceDatWriter {
    spool: Spool,
    spool_pages: u32,
    cpus: Vec<CpuBuf>,
    cmdlines: BTreeMap<u32, String>,
    /// The record being encoded (reused).
    data: Vec<u8>,
    entries: u64,
    error: FirstError,
}

impl TraceDatWriter {
    /// Spools in `dir`; pick a directory on the same file system as the
    /// output (for example [`StagedOutDir::stage_dir`](crate::outdir::StagedOutDir::stage_dir)).
    pub fn new_in(dir: impl AsRef<Path>) -> Result<Self, SpoolError> {
        Ok(Self::with_spool(Spool::new_in(dir)?))
    }

    /// Spools in the system temporary directory.
    pub fn new() -> Result<Self, SpoolError> {
        Ok(Self::with_spool(Spool::new()?))
    }

    fn with_spool(spool: Spool) -> Self {
        TraceDatWriter {
            spool,
            spool_pages: 0,
            cpus: Vec::new(),
            cmdlines: BTreeMap::new(),
            data: Vec::with_capacity(128),
            entries: 0,
            error: FirstError::new(),
        }
    }

    /// Events written so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    fn note_task(&mut self, t: &TaskView<'_>) {
        if t.pid == 0 {
            return; // libtraceevent names pid 0 `<idle>` itself
        }
        // Stored sanitised and cut, like the payload fields.
        let comm = kernel_comm(t.comm);
        match self.cmdlines.get_mut(&t.pid) {
            Some(c) if *c == comm => {}
            Some(c) => *c = comm.into_owned(),
            None => {
                self.cmdlines.insert(t.pid, comm.into_owned());
            }
        }
    }

    /// Writes CPU `cpu`'s current page to the spool and starts a new one.
    fn flush_page(&mut self, cpu: usize) -> io::Result<()> {
        let c = &mut self.cpus[cpu];
        if c.used == 0 {
            return Ok(());
        }
        c.page[8..16].copy_from_slice(&(c.used as u64).to_le_bytes());
        self.spool.write_all(&c.page[..])?;
        c.pages.push(self.spool_pages);
        self.spool_pages = self
            .spool_pages
            .checked_add(1)
            .ok_or_else(|| io::Error::other("trace.dat spool exceeds 2^32 pages"))?;
        c.page.fill(0);
        c.used = 0;
        Ok(())
    }

    /// Encodes one record (the same as [`Sink::trace`], but reports errors).
    pub fn write_record(&mut self, rec: &TraceRecord<'_>) -> io::Result<()> {
        let cpu = rec.cpu.0 as usize;
        if self.cpus.len() <= cpu {
            self.cpus.resize_with(cpu + 1, CpuBuf::new);
        }
        self.note_task(&rec.ctx);
        for t in rec.event.tasks() {
            self.note_task(t);
        }
        encode(rec, &mut self.data);
        let len = self.data.len();
        debug_assert!(len.is_multiple_of(4) && len <= MAX_DATA_LEN);
        // Up to 112 bytes the length is the header's type_len; longer
        // records have type_len 0 and their length in a word of their own.
        let long = len > MAX_DATA_TYPE_LEN * 4;
        let head = if long { 8 } else { 4 };
        let t = rec.time;
        // Decide whether the event continues the current page.
        let delta = {
            let c = &self.cpus[cpu];
            if c.used == 0 || t < c.last || t - c.last > MAX_EXTENDED_DELTA {
                None
            } else {
                let d = t - c.last;
                let need = len + head + if d >> DELTA_BITS != 0 { 8 } else { 0 };
                (c.used + need <= PAGE_DATA).then_some(d)
            }
        };
        if delta.is_none() {
            self.flush_page(cpu)?;
            self.cpus[cpu].page[..8].copy_from_slice(&t.to_le_bytes());
        }
        let c = &mut self.cpus[cpu];
        let mut d = delta.unwrap_or(0);
        let push_u32 = |c: &mut CpuBuf, v: u32| {
            c.page[PAGE_HEADER + c.used..PAGE_HEADER + c.used + 4]
                .copy_from_slice(&v.to_le_bytes());
            c.used += 4;
        };
        if d >> DELTA_BITS != 0 {
            let low = (d & ((1 << DELTA_BITS) - 1)) as u32;
            push_u32(c, TYPE_TIME_EXTEND | (low << 5));
            push_u32(c, (d >> DELTA_BITS) as u32);
            d = 0;
        }
        if long {
            // The length word counts itself (kernel `rb_update_event`).
            push_u32(c, (d as u32) << 5);
            push_u32(c, (len + 4) as u32);
        } else {
            push_u32(c, (len / 4) as u32 | ((d as u32) << 5));
        }
        c.page[PAGE_HEADER + c.used..PAGE_HEADER + c.used + len].copy_from_slice(&self.data);
        c.used += len;
        c.last = t;
        self.entries += 1;
        Ok(())
    }

    /// Writes the complete `trace.dat` for `nr_cpus` CPUs to `out` and
    /// returns the number of events. Fails with `InvalidInput` if a record
    /// named a CPU `>= nr_cpus`, and with the first error met while
    /// spooling, if any.
    pub fn finish<W: Write + ?Sized>(mut self, nr_cpus: u32, out: &mut W) -> io::Result<u64> {
        self.error.take()?;
        if self.cpus.len() > nr_cpus as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "trace.dat: a record names CPU {} but the machine has {nr_cpus} CPUs",
                    self.cpus.len() - 1
                ),
            ));
        }
        for cpu in 0..self.cpus.len() {
            self.flush_page(cpu)?;
        }
        let mut spool = self.spool.into_file()?;

        let mut h = Vec::with_capacity(16 * 1024);
        h.extend_from_slice(MAGIC);
        h.extend_from_slice(b"6\0");
        h.push(0); // little endian
        h.push(8); // long size
        h.extend_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
        let hp = header_page_text();
        h.extend_from_slice(b"header_page\0");
        h.extend_from_slice(&(hp.len() as u64).to_le_bytes());
        h.extend_from_slice(hp.as_bytes());
        h.extend_from_slice(b"header_event\0");
        h.extend_from_slice(&(HEADER_EVENT.len() as u64).to_le_bytes());
        h.extend_from_slice(HEADER_EVENT.as_bytes());
        let pf = print_format_text();
        h.extend_from_slice(&1u32.to_le_bytes()); // ftrace formats: print
        h.extend_from_slice(&(pf.len() as u64).to_le_bytes());
        h.extend_from_slice(pf.as_bytes());
        // Event systems: sched (the five, then the extra sched events),
        // task, power.
        let mut systems: Vec<(&str, Vec<String>)> =
            vec![("sched", (0..EVENT_IDS.len()).map(format_text).collect())];
        for (i, (sys, name, fields, fmt)) in EXTRA_EVENTS.iter().enumerate() {
            let f = event_format(name, EXTRA_EVENT_IDS[i], fields, fmt);
            match systems.iter_mut().find(|(s, _)| s == sys) {
                Some((_, v)) => v.push(f),
                None => systems.push((sys, vec![f])),
            }
        }
        h.extend_from_slice(&(systems.len() as u32).to_le_bytes());
        for (sys, formats) in &systems {
            h.extend_from_slice(sys.as_bytes());
            h.push(0);
            h.extend_from_slice(&(formats.len() as u32).to_le_bytes());
            for f in formats {
                h.extend_from_slice(&(f.len() as u64).to_le_bytes());
                h.extend_from_slice(f.as_bytes());
            }
        }
        h.extend_from_slice(&(KALLSYMS.len() as u32).to_le_bytes());
        h.extend_from_slice(KALLSYMS.as_bytes());
        h.extend_from_slice(&0u32.to_le_bytes()); // printk formats
        let mut cmdlines = String::new();
        for (pid, comm) in &self.cmdlines {
            cmdlines.push_str(&format!("{pid} {comm}\n"));
        }
        h.extend_from_slice(&(cmdlines.len() as u64).to_le_bytes());
        h.extend_from_slice(cmdlines.as_bytes());
        h.extend_from_slice(&nr_cpus.to_le_bytes());
        h.extend_from_slice(b"options  \0");
        let clock = b"[local] global counter uptime perf mono mono_raw boot\n\0";
        h.extend_from_slice(&4u16.to_le_bytes()); // TRACECLOCK
        h.extend_from_slice(&(clock.len() as u32).to_le_bytes());
        h.extend_from_slice(clock);
        h.extend_from_slice(&0u16.to_le_bytes()); // end of options
        h.extend_from_slice(b"flyrecord\0");
        let table_end = h.len() + 16 * nr_cpus as usize;
        let mut offset = table_end.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        for cpu in 0..nr_cpus as usize {
            let size = self.cpus.get(cpu).map_or(0, |c| c.pages.len() * PAGE_SIZE);
            h.extend_from_slice(&(offset as u64).to_le_bytes());
            h.extend_from_slice(&(size as u64).to_le_bytes());
            offset += size;
        }
        h.resize(table_end.div_ceil(PAGE_SIZE) * PAGE_SIZE, 0);
        out.write_all(&h)?;

        let mut page = vec![0u8; PAGE_SIZE];
        for c in &self.cpus {
            for &p in &c.pages {
                spool.seek(SeekFrom::Start(p as u64 * PAGE_SIZE as u64))?;
                spool.read_exact(&mut page)?;
                out.write_all(&page)?;
            }
        }
        out.flush()?;
        Ok(self.entries)
    }
}

impl Sink for TraceDatWriter {
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

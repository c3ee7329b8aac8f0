//! trace.dat: byte-level checks, and a line-for-line comparison with the
//! real `trace-cmd report` when trace-cmd is installed.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use schedlab_core::ids::CpuId;
use schedlab_core::observe::{PrevState, Sink, TaskView, TraceEvent, TraceRecord};
use schedlab_output::ftrace_text::{parse_ftrace_line, OwnedEvent, OwnedRecord};
use schedlab_output::trace_dat::{
    TraceDatWriter, EVENT_IDS, MAGIC, PAGE_SIZE, PRINT_EVENT_ID, PRINT_IP,
};

fn tv(pid: u32, comm: &str, prio: i32) -> TaskView<'_> {
    TaskView { pid, comm, prio }
}

fn rec<'a>(t: u64, cpu: u32, ctx: TaskView<'a>, event: TraceEvent<'a>) -> TraceRecord<'a> {
    TraceRecord {
        time: t,
        cpu: CpuId(cpu),
        ctx,
        flags: *b"d..2.",
        event,
    }
}

fn write_dat(records: &[TraceRecord<'_>], nr_cpus: u32) -> Vec<u8> {
    let mut w = TraceDatWriter::new().unwrap();
    for r in records {
        w.trace(r);
    }
    assert!(w.wants_trace());
    assert_eq!(w.entries(), records.len() as u64);
    let mut out = Vec::new();
    let n = w.finish(nr_cpus, &mut out).unwrap();
    assert_eq!(n, records.len() as u64);
    out
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes(b[o..o + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}
fn find(b: &[u8], needle: &[u8]) -> usize {
    b.windows(needle.len())
        .position(|w| w == needle)
        .unwrap_or_else(|| panic!("{:?} not found", String::from_utf8_lossy(needle)))
}

#[test]
fn header_bytes_pages_and_time_extend() {
    let idle = tv(0, "idle", 120);
    let a = tv(101, "worker", 120);
    let long = tv(102, "a_very_long_comm_name", 115);
    let t0 = 5_000_000_123u64;
    let big = 1u64 << 28; // needs a time extend (> 27 bits)
    let records = vec![
        rec(
            t0,
            0,
            idle,
            TraceEvent::SchedSwitch {
                prev: idle,
                prev_state: PrevState::Runnable,
                next: a,
            },
        ),
        rec(
            t0 + 10,
            1,
            a,
            TraceEvent::SchedWaking {
                task: long,
                target_cpu: CpuId(1),
            },
        ),
        rec(
            t0 + big,
            0,
            a,
            TraceEvent::SchedSwitch {
                prev: a,
                prev_state: PrevState::Preempted,
                next: long,
            },
        ),
    ];
    let b = write_dat(&records, 2);
    assert_eq!(&b[..10], MAGIC);
    assert_eq!(&b[10..12], b"6\0");
    assert_eq!(b[12], 0, "little endian");
    assert_eq!(b[13], 8, "long size");
    assert_eq!(u32_at(&b, 14) as usize, PAGE_SIZE);
    assert_eq!(&b[18..30], b"header_page\0");
    assert_eq!(b.len() % PAGE_SIZE, 0);
    // Formats and cmdlines are present.
    find(&b, b"name: sched_switch\nID: 316\n");
    find(
        &b,
        b"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n",
    );
    find(&b, b"name: sched_migrate_task\n");
    find(&b, b"101 worker\n102 a_very_long_com\n");
    // The CPU table.
    let fly = find(&b, b"flyrecord\0") + 10;
    let (off0, size0) = (u64_at(&b, fly) as usize, u64_at(&b, fly + 8) as usize);
    let (off1, size1) = (u64_at(&b, fly + 16) as usize, u64_at(&b, fly + 24) as usize);
    assert_eq!(off0 % PAGE_SIZE, 0);
    assert_eq!((size0, size1), (PAGE_SIZE, PAGE_SIZE));
    assert_eq!(off1, off0 + size0);
    assert_eq!(off1 + size1, b.len());
    // CPU 0's page: switch (type_len 16, delta 0), time extend, switch.
    let p = &b[off0..off0 + PAGE_SIZE];
    assert_eq!(u64_at(p, 0), t0, "page timestamp");
    assert_eq!(u64_at(p, 8), (4 + 64 + 8 + 4 + 64) as u64, "commit");
    assert_eq!(u32_at(p, 16), 16, "type_len 16, delta 0");
    assert_eq!(u16_at(p, 20), EVENT_IDS[0]);
    assert_eq!(&p[20 + 8..20 + 8 + 10], b"swapper/0\0");
    let ext = u32_at(p, 16 + 4 + 64);
    assert_eq!(ext & 31, 30, "TIME_EXTEND");
    let delta = u64::from(ext >> 5) | (u64::from(u32_at(p, 16 + 4 + 64 + 4)) << 27);
    assert_eq!(delta, big);
    let h = 16 + 4 + 64 + 8;
    assert_eq!(u32_at(p, h), 16, "delta moved to the extend");
    let ev = h + 4;
    assert_eq!(&p[ev + 40..ev + 56], b"a_very_long_com\0", "comm cut to 15");
    assert_eq!(u64_at(p, ev + 32), 0x100, "preempted: TASK_REPORT_MAX");
    assert_eq!(u32_at(p, ev + 4), 101, "common_pid");
    assert_eq!(p[ev + 2], 0x01, "irqs off");
    assert_eq!(p[ev + 3], 2, "preempt count");
    // CPU 1's page: one waking (36 bytes, type_len 9).
    let p = &b[off1..off1 + PAGE_SIZE];
    assert_eq!(u64_at(p, 0), t0 + 10);
    assert_eq!(u64_at(p, 8), 40);
    assert_eq!(u32_at(p, 16), 9);
    assert_eq!(u16_at(p, 20), EVENT_IDS[1]);
}

/// `print` records: the ftrace format and kallsyms entry in the header,
/// the compact header up to 112 bytes of data, the long form (type_len 0,
/// length word) above, the kernel's trailing newline and NUL, and a text
/// too long for a page cut to fit.
#[test]
fn print_records_bytes() {
    let a = tv(42, "rt-app", 120);
    let long = "L".repeat(95);
    let huge = "é".repeat(3000); // 6000 bytes
    let records = [
        rec(1000, 0, a, TraceEvent::Print { text: "hi" }),
        rec(2000, 0, a, TraceEvent::Print { text: &long }),
        rec(3000, 0, a, TraceEvent::Print { text: "nl\n" }),
        rec(4000, 0, a, TraceEvent::Print { text: &huge }),
    ];
    let b = write_dat(&records, 1);
    // The ftrace section (after header_event) holds the print format.
    let ftrace = find(&b, b"data max type_len  == 28\n") + 25;
    assert_eq!(u32_at(&b, ftrace), 1, "one ftrace format");
    let flen = u64_at(&b, ftrace + 4) as usize;
    let fmt = std::str::from_utf8(&b[ftrace + 12..ftrace + 12 + flen]).unwrap();
    assert!(fmt.starts_with(&format!("name: print\nID: {PRINT_EVENT_ID}\nformat:\n")));
    assert!(fmt.contains("\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"));
    assert!(fmt.contains("\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:1;\n"));
    assert!(fmt.ends_with("\nprint fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n"));
    assert_eq!(
        &b[ftrace + 12 + flen..ftrace + 12 + flen + 10],
        b"\x03\0\0\0sched\0"
    );
    // kallsyms names the ip.
    let sym = format!("{PRINT_IP:x} T tracing_mark_write\n");
    let ks = find(&b, sym.as_bytes());
    assert_eq!(u32_at(&b, ks - 4) as usize, sym.len());
    assert_eq!(u32_at(&b, ks + sym.len()), 0, "no printk formats");

    let fly = find(&b, b"flyrecord\0") + 10;
    let (off, size) = (u64_at(&b, fly) as usize, u64_at(&b, fly + 8) as usize);
    assert_eq!(size, 2 * PAGE_SIZE, "the cut text fills a page of its own");
    let p = &b[off..off + PAGE_SIZE];
    // "hi": 16 + 2 + "\n\0" = 20 bytes, type_len 5.
    let mut e = 16;
    assert_eq!(u32_at(p, e), 5);
    let d = &p[e + 4..e + 24];
    assert_eq!(u16_at(d, 0), PRINT_EVENT_ID);
    assert_eq!((d[2], d[3]), (0x01, 2), "flags d..2.");
    assert_eq!(u32_at(d, 4), 42);
    assert_eq!(u64_at(d, 8), PRINT_IP);
    assert_eq!(&d[16..20], b"hi\n\0");
    e += 24;
    // 95 bytes: 16 + 95 + 2 = 113 > 112, long form: type_len 0, delta
    // 1000, then the length word (data rounded to 116, plus itself).
    assert_eq!(u32_at(p, e), 1000 << 5);
    assert_eq!(u32_at(p, e + 4), 120);
    let d = &p[e + 8..e + 8 + 116];
    assert_eq!(u16_at(d, 0), PRINT_EVENT_ID);
    assert_eq!(&d[16..16 + 95], long.as_bytes());
    assert_eq!(&d[111..116], b"\n\0\0\0\0");
    e += 8 + 116;
    // A text ending with a newline gets no second one.
    assert_eq!(u32_at(p, e), 5 | 1000 << 5);
    assert_eq!(&p[e + 4 + 16..e + 4 + 20], b"nl\n\0");
    e += 24;
    assert_eq!(u64_at(p, 8) as usize, e - 16, "commit");
    // The cut text: long form, alone in the next page, 4054 bytes at most
    // and on a character boundary (2 bytes per 'é': 2027 of them).
    let p = &b[off + PAGE_SIZE..off + 2 * PAGE_SIZE];
    assert_eq!(u64_at(p, 0), 4000);
    assert_eq!(u32_at(p, 16), 0);
    let len = u32_at(p, 20) as usize - 4;
    assert_eq!(len, (16 + 4054 + 2usize).next_multiple_of(4));
    assert_eq!(u64_at(p, 8) as usize, 8 + len, "commit");
    let text = &p[24 + 16..24 + 16 + 4054];
    assert_eq!(text, "é".repeat(2027).as_bytes());
    assert_eq!(&p[24 + 16 + 4054..24 + 16 + 4056], b"\n\0");

    if trace_cmd_available() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("trace.dat");
        std::fs::write(&file, &b).unwrap();
        let text = report(&file, &["-N"]);
        let got: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.split_once(": print:").expect("print line").1.trim_start())
            .collect();
        let want = [
            "tracing_mark_write: hi".to_string(),
            format!("tracing_mark_write: {long}"),
            "tracing_mark_write: nl".to_string(),
            format!("tracing_mark_write: {}", "é".repeat(2027)),
        ];
        assert_eq!(got, want);
    }
}

#[test]
fn time_going_backwards_starts_a_new_page() {
    let a = tv(7, "a", 120);
    let ev = TraceEvent::SchedWakeup {
        task: a,
        target_cpu: CpuId(0),
    };
    let b = write_dat(&[rec(1000, 0, a, ev), rec(500, 0, a, ev)], 1);
    let fly = find(&b, b"flyrecord\0") + 10;
    let (off, size) = (u64_at(&b, fly) as usize, u64_at(&b, fly + 8) as usize);
    assert_eq!(size, 2 * PAGE_SIZE);
    assert_eq!(u64_at(&b, off), 1000);
    assert_eq!(u64_at(&b, off + PAGE_SIZE), 500);
}

#[test]
fn cpu_outside_the_machine_is_an_error() {
    let a = tv(7, "a", 120);
    let r = rec(
        1,
        3,
        a,
        TraceEvent::SchedWakeup {
            task: a,
            target_cpu: CpuId(3),
        },
    );
    let mut w = TraceDatWriter::new().unwrap();
    w.trace(&r);
    let err = w.finish(2, &mut Vec::new()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A plausible scheduler trace on `nr_cpus` CPUs: `n` records over more
/// than 5 s, with gaps longer than 2^27 ns (time extends), pages filled
/// many times over, and `print` records with each text of `texts`.
fn realistic<'a>(
    tasks: &'a [(u32, String, i32)],
    texts: &'a [String],
    nr_cpus: u32,
    n: usize,
) -> Vec<TraceRecord<'a>> {
    let mut rng = Rng(0x5eed_1234_abcd);
    let idle = tv(0, "swapper", 120);
    let task = |i: usize| tv(tasks[i].0, &tasks[i].1, tasks[i].2);
    let mut curr: Vec<TaskView<'a>> = vec![idle; nr_cpus as usize];
    // The flag characters libtraceevent 1.7 can print back (it has no BH-off,
    // NMI, or split need-resched characters).
    let flags: [&[u8; 5]; 8] = [
        b"d..2.", b"dN.2.", b"d.h3.", b".....", b"dNs1.", b"d..21", b"dNH1.", b"X..1.",
    ];
    let states = [
        PrevState::Runnable,
        PrevState::Preempted,
        PrevState::Sleeping,
        PrevState::Uninterruptible,
        PrevState::Dead,
    ];
    let mut t = 1_234_567_891u64;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        t += match rng.below(100) {
            0..=1 => 150_000_000 + rng.below(400_000_000), // > 2^27 ns
            2..=10 => 0,                                   // same ns
            _ => rng.below(3_000_000),
        };
        let cpu = rng.below(u64::from(nr_cpus)) as u32;
        let c = cpu as usize;
        let ctx = curr[c];
        let f = *flags[rng.below(flags.len() as u64) as usize];
        let other = task(rng.below(tasks.len() as u64) as usize);
        let other_cpu = CpuId(rng.below(u64::from(nr_cpus)) as u32);
        let event = match rng.below(12) {
            0..=3 => {
                let next = if rng.below(5) == 0 { idle } else { other };
                let st = if ctx.pid == 0 {
                    PrevState::Runnable
                } else {
                    states[rng.below(5) as usize]
                };
                curr[c] = next;
                TraceEvent::SchedSwitch {
                    prev: ctx,
                    prev_state: st,
                    next,
                }
            }
            4..=5 => TraceEvent::SchedWaking {
                task: other,
                target_cpu: other_cpu,
            },
            6..=7 => TraceEvent::SchedWakeup {
                task: other,
                target_cpu: other_cpu,
            },
            8 => TraceEvent::SchedWakeupNew {
                task: other,
                target_cpu: other_cpu,
            },
            9 => TraceEvent::SchedMigrateTask {
                task: other,
                orig_cpu: CpuId(cpu),
                dest_cpu: other_cpu,
            },
            _ => TraceEvent::Print {
                text: &texts[rng.below(texts.len() as u64) as usize],
            },
        };
        out.push(TraceRecord {
            time: t,
            cpu: CpuId(cpu),
            ctx,
            flags: f,
            event,
        });
    }
    out
}

fn tasks() -> Vec<(u32, String, i32)> {
    (0..24)
        .map(|i| {
            let comm = match i % 4 {
                0 => format!("worker-{i}"),
                1 => format!("kworker/u{i}:1"),
                2 => format!("a_rather_long_thread_name-{i}"),
                _ => format!("cfs_thread-0-{i}"),
            };
            (1000 + i, comm, 100 + (i as i32 * 7) % 40)
        })
        .collect()
}

/// trace_marker texts: rt-app's markers, UTF-8, and lengths around the
/// compact event header's 112-byte limit (16 bytes of fixed fields + text +
/// newline + NUL): 94 bytes fit it exactly, 95 and more take the long form,
/// as does a text of nearly a page.
fn texts() -> Vec<String> {
    vec![
        "rtapp_main: event=start".into(),
        "rtapp_loop: event=start thread_loop=0 phase=0 phase_loop=3".into(),
        "rtapp_stats: period=10000 run=3000 wu_lat=12 slack=7000 c_period=10000 c_run=3000".into(),
        "x".into(),
        "marker with ünïcödé ✓".into(),
        "a".repeat(93),
        "b".repeat(94),
        "c".repeat(95),
        "d".repeat(96),
        format!("long: {}", "0123456789".repeat(30)),
        "e".repeat(4000),
    ]
}

/// What trace-cmd should print for `r`: the trace.txt record with comms cut
/// to 15 bytes and the TASK comm from the cmdline table. Plain `report`
/// prints no flags (`-l` does; compared separately).
fn expected(r: &TraceRecord<'_>) -> OwnedRecord {
    let mut o = OwnedRecord::from_record(r);
    let cut = |s: &mut String| s.truncate(s.len().min(15));
    cut(&mut o.ctx_comm);
    o.flags.clear();
    match &mut o.event {
        OwnedEvent::SchedSwitch { prev, next, .. } => {
            cut(&mut prev.comm);
            cut(&mut next.comm);
        }
        OwnedEvent::SchedWaking { task, .. }
        | OwnedEvent::SchedWakeup { task, .. }
        | OwnedEvent::SchedWakeupNew { task, .. }
        | OwnedEvent::SchedMigrateTask { task, .. } => cut(&mut task.comm),
        OwnedEvent::Other { name, .. } => assert_eq!(name, "tracing_mark_write"),
    }
    o
}

/// Runs `trace-cmd report ARGS FILE`; returns stdout.
fn report(file: &Path, args: &[&str]) -> String {
    let out = Command::new("trace-cmd")
        .arg("report")
        .args(args)
        .arg(file)
        .output()
        .expect("run trace-cmd");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "trace-cmd report {args:?} failed: {}\n{stderr}",
        out.status
    );
    String::from_utf8(out.stdout).expect("utf-8 report")
}

/// trace-cmd pads the event name after `name:` to 20 columns; the ftrace
/// text reader wants one space. A trace_marker write is the ftrace `print`
/// event, which trace-cmd prints as `print: tracing_mark_write: <text>`
/// and trace.txt as `tracing_mark_write: <text>`.
fn unpad(line: &str) -> String {
    let start = line
        .find(": sched_")
        .or_else(|| line.find(": print:"))
        .expect("sched or print event")
        + 2;
    let colon = start + line[start..].find(':').unwrap();
    let rest = line[colon + 1..].trim_start();
    if &line[start..colon] == "print" {
        let text = rest
            .strip_prefix("tracing_mark_write: ")
            .unwrap_or_else(|| panic!("print without tracing_mark_write: {line}"));
        return format!("{}tracing_mark_write: {text}", &line[..start]);
    }
    format!("{}: {}", &line[..colon], rest)
}

fn trace_cmd_available() -> bool {
    Command::new("trace-cmd")
        .arg("-h")
        .output()
        .map(|_| true)
        .unwrap_or(false)
}

#[test]
fn trace_cmd_report_matches_records() {
    if !trace_cmd_available() {
        eprintln!("SKIP trace_cmd_report_matches_records: trace-cmd is not on PATH (apt-get install trace-cmd)");
        return;
    }
    let nr_cpus = 3;
    let tasks = tasks();
    let texts = texts();
    let records = realistic(&tasks, &texts, nr_cpus, 2000);
    for t in &texts {
        assert!(
            records
                .iter()
                .any(|r| matches!(r.event, TraceEvent::Print { text } if text == t)),
            "no print of {t:?}"
        );
    }
    let span = records.last().unwrap().time - records[0].time;
    assert!(span > 5_000_000_000, "span {span} ns");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trace.dat");
    std::fs::write(&file, write_dat(&records, nr_cpus)).unwrap();
    // Keep a copy to open in KernelShark or `trace-cmd dump` by hand.
    if let Ok(keep) = std::env::var("SCHEDLAB_KEEP_TRACE_DAT") {
        std::fs::copy(&file, keep).unwrap();
    }

    let text = report(&file, &["-N"]);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(format!("cpus={nr_cpus}").as_str()));
    let mut got: BTreeMap<u32, Vec<OwnedRecord>> = BTreeMap::new();
    let mut last_t = 0;
    let mut count = 0;
    for line in lines {
        let r = parse_ftrace_line(&unpad(line))
            .unwrap_or_else(|e| panic!("{e}: {line}"))
            .unwrap_or_else(|| panic!("not an event: {line}"));
        assert!(r.time_ns >= last_t, "out of order: {line}");
        last_t = r.time_ns;
        got.entry(r.cpu).or_default().push(r);
        count += 1;
    }
    assert_eq!(count, records.len());
    let mut want: BTreeMap<u32, Vec<OwnedRecord>> = BTreeMap::new();
    for r in &records {
        want.entry(r.cpu.0).or_default().push(expected(r));
    }
    for (cpu, w) in &want {
        let g = &got[cpu];
        assert_eq!(g.len(), w.len(), "cpu {cpu}");
        for (i, (g, w)) in g.iter().zip(w).enumerate() {
            assert_eq!(g, w, "cpu {cpu} event {i}: {}", g.to_line());
        }
    }

    // Latency format: `comm-pid CPUFLAGS time: ...`, all five flag columns
    // (the fifth, migrate-disable, comes from the preempt count's high
    // nibble).
    let lat = report(&file, &["-l", "-N"]);
    let mut got_flags: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for line in lat.lines().skip(1) {
        let tok = line.split_whitespace().nth(1).expect("cpu+flags column");
        let digits = tok.bytes().take_while(u8::is_ascii_digit).count();
        let cpu: u32 = tok[..digits].parse().unwrap();
        got_flags
            .entry(cpu)
            .or_default()
            .push(tok[digits..].to_string());
    }
    for cpu in want.keys() {
        let w: Vec<String> = records
            .iter()
            .filter(|r| r.cpu.0 == *cpu)
            .map(|r| String::from_utf8(r.flags.to_vec()).unwrap())
            .collect();
        assert_eq!(got_flags[cpu], w, "flags on cpu {cpu}");
    }

    // With the sched plugin: payloads are rewritten, the events are the same.
    let plugin = report(&file, &[]);
    let n = plugin.lines().filter(|l| l.contains(": sched_")).count();
    let prints = records
        .iter()
        .filter(|r| matches!(r.event, TraceEvent::Print { .. }))
        .count();
    assert!(prints > 0);
    assert_eq!(n, records.len() - prints);
    let n = plugin
        .lines()
        .filter(|l| l.contains(": print:") && l.contains(" tracing_mark_write: "))
        .count();
    assert_eq!(n, prints);
    assert!(plugin.starts_with(&format!("cpus={nr_cpus}\n")));
}

/// The event systems after the ftrace formats: `sched` (9 events), `task`
/// (`task_rename`) and `power` (`cpu_idle`), with the kernel's field
/// layouts of the added events.
#[test]
fn added_event_formats_are_the_kernels() {
    use schedlab_output::trace_dat::{EXTRA_EVENTS, EXTRA_EVENT_IDS};
    let a = tv(42, "rt-app", 120);
    let b = write_dat(&[rec(1000, 0, a, TraceEvent::Print { text: "hi" })], 1);
    let text = String::from_utf8_lossy(&b);
    let sched = find(&b, b"sched\0");
    assert_eq!(u32_at(&b, sched + 6), 9, "sched events");
    for (want, id) in [
        ("name: task_rename\n", EXTRA_EVENT_IDS[4]),
        ("name: cpu_idle\n", EXTRA_EVENT_IDS[5]),
        ("name: sched_process_fork\n", EXTRA_EVENT_IDS[0]),
        ("name: sched_stat_runtime\n", EXTRA_EVENT_IDS[3]),
    ] {
        let i = text.find(want).unwrap_or_else(|| panic!("no {want}"));
        assert!(text[i..].starts_with(&format!("{want}ID: {id}\nformat:\n")));
    }
    for line in [
        "\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:char oldcomm[16];\toffset:12;\tsize:16;\tsigned:0;\n\tfield:char newcomm[16];\toffset:28;\tsize:16;\tsigned:0;\n\tfield:short oom_score_adj;\toffset:44;\tsize:2;\tsigned:1;\n",
        "\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n",
        "\tfield:u64 runtime;\toffset:32;\tsize:8;\tsigned:0;\n",
        "print fmt: \"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id\n",
        "print fmt: \"pid=%d oldcomm=%s newcomm=%s oom_score_adj=%hd\", REC->pid, REC->oldcomm, REC->newcomm, REC->oom_score_adj\n",
    ] {
        assert!(text.contains(line), "missing {line:?}");
    }
    assert!(
        text.contains("task\0\x01\0\0\0"),
        "task system with one event"
    );
    assert!(
        text.contains("power\0\x01\0\0\0"),
        "power system with one event"
    );
    assert_eq!(EXTRA_EVENTS.len(), EXTRA_EVENT_IDS.len());
}

/// cpu_idle and task_rename records: the bytes of their format files.
#[test]
fn added_event_records_bytes() {
    use schedlab_core::ids::CpuId;
    use schedlab_output::trace_dat::EXTRA_EVENT_IDS;
    let idle = tv(0, "swapper/1", 120);
    let a = tv(1001, "periodic-0", 120);
    let b = write_dat(
        &[
            rec(
                1000,
                1,
                idle,
                TraceEvent::CpuIdle {
                    state: u32::MAX,
                    cpu_id: CpuId(1),
                },
            ),
            rec(
                2000,
                1,
                a,
                TraceEvent::TaskRename {
                    task: a,
                    oldcomm: "rt-app",
                },
            ),
        ],
        2,
    );
    let id = EXTRA_EVENT_IDS[5].to_le_bytes();
    // common_type, common_flags (d), preempt count 2, common_pid 0, state
    // -1 as u32, cpu_id 1.
    let i = find(
        &b,
        &[
            id[0], id[1], 0x01, 0x02, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0,
        ],
    );
    assert!(i > 0);
    let id = EXTRA_EVENT_IDS[4].to_le_bytes();
    let mut want = vec![id[0], id[1], 0x01, 0x02];
    want.extend_from_slice(&1001i32.to_le_bytes());
    want.extend_from_slice(&1001i32.to_le_bytes());
    want.extend_from_slice(b"rt-app\0\0\0\0\0\0\0\0\0\0");
    want.extend_from_slice(b"periodic-0\0\0\0\0\0\0");
    want.extend_from_slice(&[0, 0, 0, 0]);
    assert!(find(&b, &want) > 0, "task_rename record");
}

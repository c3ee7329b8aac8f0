//! `trace.pftrace`: synthetic records through [`PftraceWriter`], decoded by
//! the official `perfetto` Python package (tests/perfetto_decode.py).

use std::path::Path;
use std::process::Command;

use schedlab_core::ids::CpuId;
use schedlab_core::observe::{PrevState, Sink, TaskView, TraceEvent, TraceRecord};
use schedlab_output::pftrace::PftraceWriter;

const NR_CPUS: u32 = 4;
const RECORDS: usize = 2000;

/// A tiny deterministic generator (64-bit LCG, high bits).
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// One synthetic record, owned (comm as an index into the name table).
#[derive(Clone, Copy)]
enum Ev {
    Switch(u32, PrevState, u32),
    Waking(u32, u32),
    Wakeup(u32, u32),
    WakeupNew(u32, u32),
    Migrate(u32, u32, u32),
    /// A trace_marker write: index into [`TEXTS`].
    Print(usize),
}

/// trace_marker texts: rt-app markers, UTF-8, one already ending with a
/// newline (the kernel adds none then), one longer than a bundle's varint
/// length byte.
const TEXTS: [&str; 5] = [
    "rtapp_loop: event=start thread_loop=0 phase=1 phase_loop=2",
    "rtapp_stats: period=10000 run=3000 wu_lat=12 slack=7000 c_period=10000 c_run=3000",
    "marker with ünïcödé ✓",
    "ends with a newline\n",
    "long 0123456789 0123456789 0123456789 0123456789 0123456789 0123456789 \
     0123456789 0123456789 0123456789 0123456789 0123456789 0123456789 end",
];

struct Rec {
    time: u64,
    cpu: u32,
    ctx: u32,
    flags: [u8; 5],
    ev: Ev,
}

/// ~2000 records on 4 CPUs: switches leaving in R, R+, S, D and Z, wakings,
/// wakeups, new tasks and migrations, in global time order.
fn synth() -> (Vec<String>, Vec<Rec>) {
    const MAX_PID: u32 = 200;
    // pid -> comm; a comm with a space and one over 15 bytes go through
    // verbatim.
    let names: Vec<String> = (0..=MAX_PID)
        .map(|p| match p {
            0 => "idle".to_string(),
            101 => "worker with space".to_string(),
            102 => "a-very-long-thread-name-0102".to_string(),
            p => format!("task-{p}"),
        })
        .collect();
    let mut rng = Lcg(0x5eed);
    let mut alive: Vec<u32> = (100..116).collect();
    let mut next_pid = 116;
    let mut curr = [0u32; NR_CPUS as usize];
    let mut t = 1_000_000_000u64;
    let flags = [*b"d..2.", *b"dNh3.", *b"d.s2.", *b".....", *b"dN.1."];
    let mut recs = Vec::with_capacity(RECORDS);
    while recs.len() < RECORDS {
        t += 1 + rng.below(20_000);
        let cpu = rng.below(u64::from(NR_CPUS)) as u32;
        let ctx = curr[cpu as usize];
        let fl = flags[rng.below(flags.len() as u64) as usize];
        let ev = match rng.below(12) {
            0..=4 => {
                let prev = ctx;
                let idle_next = rng.below(5) == 0;
                let cand = alive[rng.below(alive.len() as u64) as usize];
                let next = if idle_next || curr.contains(&cand) {
                    0
                } else {
                    cand
                };
                let state = if prev == 0 {
                    PrevState::Runnable
                } else {
                    match rng.below(5) {
                        0 => PrevState::Runnable,
                        1 => PrevState::Preempted,
                        2 => PrevState::Sleeping,
                        3 => PrevState::Uninterruptible,
                        _ if alive.len() > 8 => PrevState::Dead,
                        _ => PrevState::Sleeping,
                    }
                };
                if state == PrevState::Dead {
                    alive.retain(|&p| p != prev);
                }
                if prev == next {
                    continue;
                }
                curr[cpu as usize] = next;
                Ev::Switch(prev, state, next)
            }
            5 | 6 => {
                let task = alive[rng.below(alive.len() as u64) as usize];
                Ev::Waking(task, rng.below(u64::from(NR_CPUS)) as u32)
            }
            7 => {
                let task = alive[rng.below(alive.len() as u64) as usize];
                Ev::Wakeup(task, cpu)
            }
            8 if next_pid <= MAX_PID => {
                let task = next_pid;
                next_pid += 1;
                alive.push(task);
                Ev::WakeupNew(task, rng.below(u64::from(NR_CPUS)) as u32)
            }
            10 | 11 => Ev::Print(rng.below(TEXTS.len() as u64) as usize),
            _ => {
                let task = alive[rng.below(alive.len() as u64) as usize];
                let orig = rng.below(u64::from(NR_CPUS)) as u32;
                let dest = (orig + 1 + rng.below(u64::from(NR_CPUS) - 1) as u32) % NR_CPUS;
                Ev::Migrate(task, orig, dest)
            }
        };
        recs.push(Rec {
            time: t,
            cpu,
            ctx,
            flags: fl,
            ev,
        });
    }
    (names, recs)
}

fn view(names: &[String], pid: u32) -> TaskView<'_> {
    TaskView {
        pid,
        comm: &names[pid as usize],
        prio: if pid == 0 {
            120
        } else {
            100 + (pid % 40) as i32
        },
    }
}

fn record<'a>(names: &'a [String], r: &Rec) -> TraceRecord<'a> {
    let v = |pid| view(names, pid);
    let event = match r.ev {
        Ev::Switch(prev, prev_state, next) => TraceEvent::SchedSwitch {
            prev: v(prev),
            prev_state,
            next: v(next),
        },
        Ev::Waking(p, c) => TraceEvent::SchedWaking {
            task: v(p),
            target_cpu: CpuId(c),
        },
        Ev::Wakeup(p, c) => TraceEvent::SchedWakeup {
            task: v(p),
            target_cpu: CpuId(c),
        },
        Ev::WakeupNew(p, c) => TraceEvent::SchedWakeupNew {
            task: v(p),
            target_cpu: CpuId(c),
        },
        Ev::Migrate(p, o, d) => TraceEvent::SchedMigrateTask {
            task: v(p),
            orig_cpu: CpuId(o),
            dest_cpu: CpuId(d),
        },
        Ev::Print(i) => TraceEvent::Print { text: TEXTS[i] },
    };
    TraceRecord {
        time: r.time,
        cpu: CpuId(r.cpu),
        ctx: v(r.ctx),
        flags: r.flags,
        event,
    }
}

/// The expected sched_switch and print events for perfetto_decode.py.
fn expected_json(names: &[String], recs: &[Rec]) -> serde_json::Value {
    let comm = |pid: u32, cpu: u32| {
        if pid == 0 {
            format!("swapper/{cpu}")
        } else {
            names[pid as usize].clone()
        }
    };
    let prints: Vec<serde_json::Value> = recs
        .iter()
        .filter_map(|r| match r.ev {
            Ev::Print(i) => Some(serde_json::json!({
                "cpu": r.cpu,
                "ts_ns": r.time,
                "pid": r.ctx,
                // The kernel's buffer: the text and a newline.
                "buf": if TEXTS[i].ends_with('\n') {
                    TEXTS[i].to_string()
                } else {
                    format!("{}\n", TEXTS[i])
                },
            })),
            _ => None,
        })
        .collect();
    let switches: Vec<serde_json::Value> = recs
        .iter()
        .filter_map(|r| match r.ev {
            Ev::Switch(prev, st, next) => Some(serde_json::json!({
                "cpu": r.cpu,
                "ts_ns": r.time,
                "prev_pid": prev,
                "next_pid": next,
                "prev_state": st.as_str(),
                "prev_comm": comm(prev, r.cpu),
                "next_comm": comm(next, r.cpu),
            })),
            _ => None,
        })
        .collect();
    serde_json::json!({ "sched_switch": switches, "print": prints })
}

fn count(recs: &[Rec], f: impl Fn(&Ev) -> bool) -> usize {
    recs.iter().filter(|r| f(&r.ev)).count()
}

/// Writes the synthetic trace to `dir`, returns (trace path, json path).
fn write_fixture(
    dir: &Path,
    names: &[String],
    recs: &[Rec],
) -> (std::path::PathBuf, std::path::PathBuf) {
    // Small bundles, so every CPU spills several to the spool.
    let mut w = PftraceWriter::new_in(dir)
        .unwrap()
        .with_flush_every(64)
        .with_nr_cpus(NR_CPUS);
    assert!(w.wants_trace());
    for r in recs {
        w.trace(&record(names, r));
    }
    assert_eq!(w.events(), recs.len() as u64);
    let trace = dir.join("trace.pftrace");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&trace).unwrap());
    let n = w.finish(&mut f).unwrap();
    drop(f);
    assert_eq!(n, recs.len() as u64);
    let json = dir.join("expected.json");
    std::fs::write(&json, expected_json(names, recs).to_string()).unwrap();
    (trace, json)
}

const INSTALL_HINT: &str = "install Python 3 and the official package with \
    `python3 -m pip install perfetto` (scripts/test.sh should do this before \
    `cargo test`), or set SCHEDLAB_SKIP_PERFETTO=1 to skip this check";

#[test]
fn pftrace_decodes_with_official_perfetto_package() {
    let (names, recs) = synth();
    let kinds = [
        count(&recs, |e| matches!(e, Ev::Switch(..))),
        count(&recs, |e| {
            matches!(e, Ev::Switch(_, PrevState::Preempted, _))
        }),
        count(&recs, |e| matches!(e, Ev::Switch(_, PrevState::Dead, _))),
        count(&recs, |e| {
            matches!(e, Ev::Switch(_, PrevState::Uninterruptible, _))
        }),
        count(&recs, |e| matches!(e, Ev::WakeupNew(..))),
        count(&recs, |e| matches!(e, Ev::Migrate(..))),
        count(&recs, |e| matches!(e, Ev::Print(..))),
    ];
    assert!(
        kinds.iter().all(|&k| k > 0),
        "synthetic mix too thin: {kinds:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let (trace, json) = write_fixture(dir.path(), &names, &recs);

    if std::env::var("SCHEDLAB_SKIP_PERFETTO").as_deref() == Ok("1") {
        println!("skipped: perfetto decode check (SCHEDLAB_SKIP_PERFETTO=1)");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/perfetto_decode.py");
    let out = match Command::new("python3")
        .arg(&script)
        .arg(&trace)
        .arg(&json)
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("cannot run python3 ({e}): {INSTALL_HINT}"),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        Some(2) => panic!("perfetto package missing: {INSTALL_HINT}\n{stdout}{stderr}"),
        _ => panic!("perfetto_decode.py failed:\n{stdout}{stderr}"),
    }
    println!("{}", stdout.trim_end());
    let ok = stdout
        .lines()
        .find(|l| l.starts_with("OK "))
        .expect("OK line");
    // Every event kind arrived, with the counts written.
    for (kind, n) in [
        ("sched_switch", kinds[0]),
        (
            "sched_waking",
            count(&recs, |e| matches!(e, Ev::Waking(..))),
        ),
        (
            "sched_wakeup",
            count(&recs, |e| matches!(e, Ev::Wakeup(..))),
        ),
        ("sched_wakeup_new", kinds[4]),
        ("sched_migrate_task", kinds[5]),
        ("print", kinds[6]),
    ] {
        let item = format!("{kind}={n}");
        assert!(
            ok.contains(&format!("{item} ")) || ok.contains(&format!("{item})")),
            "{item} not in {ok:?}"
        );
    }
    assert!(ok.contains(&format!("{} events", recs.len())), "{ok}");
    assert!(
        ok.contains(&format!("{} print match", kinds[6])),
        "print events: {ok}"
    );
}

#[test]
fn pftrace_empty_run_is_valid_header_only() {
    let dir = tempfile::tempdir().unwrap();
    let w = PftraceWriter::new_in(dir.path()).unwrap();
    let mut buf = Vec::new();
    assert_eq!(w.finish(&mut buf).unwrap(), 0);
    // Three packets (SystemInfo, ClockSnapshot, ProcessTree), each a
    // `Trace.packet` field: tag 0x0a, then the trusted sequence id first.
    let mut i = 0;
    let mut packets = 0;
    while i < buf.len() {
        assert_eq!(buf[i], 0x0a, "packet tag at {i}");
        let (len, n) = read_varint(&buf[i + 1..]);
        assert_eq!(&buf[i + 1 + n..i + 3 + n], &[0x50, 0x01], "sequence id");
        i += 1 + n + len as usize;
        packets += 1;
    }
    assert_eq!(i, buf.len());
    assert_eq!(packets, 3);
}

fn read_varint(b: &[u8]) -> (u64, usize) {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate() {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return (v, i + 1);
        }
    }
    panic!("truncated varint");
}

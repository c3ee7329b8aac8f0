//! The events LISA's analyses need besides the five sched ones:
//! `task_rename`, `sched_process_fork` / `_exit` / `_free`, `cpu_idle` and
//! `sched_stat_runtime`, in each trace format: trace.txt (round trip and
//! agreement with summary.json), trace.dat (`trace-cmd report` prints the
//! same events) and trace.pftrace (the `perfetto` Python package decodes
//! the same events). LISA itself runs in `scripts/test/test-lisa.sh`.

use crate::common::{assert_success, summary_program_ns};
use schedlab_output::ftrace_text::{parse_ftrace_text, OwnedEvent, OwnedRecord};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `cpu_idle`'s state on exit: -1 as a u32.
const EXIT: u64 = 4_294_967_295;

/// The workload of scripts/test/test-lisa.sh: periodic threads, idle time and a
/// thread that exits.
fn lisa_workload() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/test/lisa/workload.json")
}

struct Run {
    _tmp: tempfile::TempDir,
    out: PathBuf,
    records: Vec<OwnedRecord>,
    summary: Value,
}

fn run(workload: &Path, machine: &str, extra: &[&str]) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut args = vec!["run", workload.to_str().unwrap(), "--machine", machine];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--trace", "--quiet", "--out", out.to_str().unwrap()]);
    assert_success(&crate::common::schedlab(&args));
    let text = std::fs::read_to_string(out.join("trace.txt")).unwrap();
    let records = parse_ftrace_text(&text).expect("trace.txt parses");
    let summary =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    Run {
        _tmp: tmp,
        out,
        records,
        summary,
    }
}

/// The `key=value` fields of a payload (values without spaces; a trailing
/// `[ns]` is dropped).
fn fields(payload: &str) -> BTreeMap<&str, &str> {
    payload
        .split(' ')
        .filter_map(|kv| kv.split_once('='))
        .collect()
}

fn other<'a>(r: &'a OwnedRecord, name: &str) -> Option<BTreeMap<&'a str, &'a str>> {
    match &r.event {
        OwnedEvent::Other { name: n, payload } if n == name => Some(fields(payload)),
        _ => None,
    }
}

fn num(f: &BTreeMap<&str, &str>, k: &str) -> u64 {
    f[k].parse().unwrap_or_else(|_| panic!("{k}={}", f[k]))
}

fn all_tasks(summary: &Value) -> Vec<Value> {
    summary["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .chain(summary["helpers"].as_array().unwrap())
        .cloned()
        .collect()
}

#[test]
fn sched_stat_runtime_sums_to_each_tasks_runtime() {
    for (machine, extra) in [
        ("vm-2cpu", &[][..]),
        ("a7-octa", &["--duration", "300ms"][..]),
    ] {
        let w = if machine == "vm-2cpu" {
            lisa_workload()
        } else {
            crate::common::example_workload()
        };
        let r = run(&w, machine, extra);
        let mut sum: BTreeMap<u64, u64> = BTreeMap::new();
        for rec in &r.records {
            if let Some(f) = other(rec, "sched_stat_runtime") {
                // Recorded in the running task's context, about itself.
                assert_eq!(num(&f, "pid"), u64::from(rec.ctx_pid), "{}", rec.to_line());
                *sum.entry(num(&f, "pid")).or_default() += num(&f, "runtime");
            }
        }
        for t in all_tasks(&r.summary) {
            let pid = t["pid"].as_u64().unwrap();
            assert_eq!(
                sum.get(&pid).copied().unwrap_or(0),
                // (The program's time: the scheduler work charged to the
                // task is not in its records yet; see Sim::charge_sched_work.)
                summary_program_ns(&t),
                "{machine}: {} sched_stat_runtime sum",
                t["name"]
            );
        }
    }
}

#[test]
fn every_thread_is_forked_renamed_woken_and_an_exiting_one_freed() {
    let r = run(&lisa_workload(), "vm-2cpu", &[]);
    let helper = &r.summary["helpers"][0];
    let helper_pid = helper["pid"].as_u64().unwrap();
    for t in r.summary["tasks"].as_array().unwrap() {
        let pid = t["pid"].as_u64().unwrap();
        let name = t["name"].as_str().unwrap();
        // The events naming this pid, in order.
        let seq: Vec<(&OwnedRecord, &str)> = r
            .records
            .iter()
            .filter_map(|rec| {
                let n = rec.event.name();
                let hit = match &rec.event {
                    OwnedEvent::SchedWakeupNew { task, .. } => u64::from(task.pid) == pid,
                    OwnedEvent::Other { payload, .. } => {
                        let f = fields(payload);
                        ["child_pid", "pid"]
                            .iter()
                            .any(|k| f.get(k).is_some_and(|v| v.parse() == Ok(pid)))
                    }
                    _ => false,
                };
                (hit && n != "sched_stat_runtime").then_some((rec, n))
            })
            .collect();
        let names: Vec<&str> = seq.iter().map(|(_, n)| *n).collect();
        assert_eq!(
            &names[..3],
            ["sched_process_fork", "task_rename", "sched_wakeup_new"],
            "{name}"
        );
        let fork = other(seq[0].0, "sched_process_fork").unwrap();
        assert_eq!(num(&fork, "pid"), helper_pid, "{name}: forked by rt-app");
        // The kernel copies the parent's comm into the child.
        assert_eq!(fork["child_comm"], "rt-app", "{name}");
        let rename = other(seq[1].0, "task_rename").unwrap();
        assert_eq!(
            (
                rename["oldcomm"],
                rename["newcomm"],
                rename["oom_score_adj"]
            ),
            ("rt-app", name, "0")
        );
        assert!(seq[..3]
            .iter()
            .all(|(rec, _)| rec.time_ns == seq[0].0.time_ns));
        let exits = names.iter().filter(|n| **n == "sched_process_exit").count();
        let frees = names.iter().filter(|n| **n == "sched_process_free").count();
        if name.starts_with("short") {
            // It ends: exit in its own context, then its last switch
            // (prev_state Z), then free; nothing names it afterwards.
            assert_eq!((exits, frees), (1, 1), "{name}");
            assert_eq!(names.last(), Some(&"sched_process_free"), "{name}");
            let exit = seq
                .iter()
                .find(|(_, n)| *n == "sched_process_exit")
                .unwrap()
                .0;
            assert_eq!(u64::from(exit.ctx_pid), pid);
            let free = seq.last().unwrap().0;
            let i = r
                .records
                .iter()
                .position(|x| std::ptr::eq(x, free))
                .unwrap();
            match &r.records[i - 1].event {
                OwnedEvent::SchedSwitch {
                    prev, prev_state, ..
                } => assert_eq!((u64::from(prev.pid), prev_state.as_str()), (pid, "Z")),
                e => panic!("{name}: free not right after the last switch: {e:?}"),
            }
            assert!(r.records[i + 1..]
                .iter()
                .all(|x| !x.to_line().contains(&format!("-{pid} "))
                    && !x.to_line().contains(&format!("pid={pid} "))));
        } else {
            assert_eq!((exits, frees), (0, 0), "{name} runs to the end");
        }
    }
}

#[test]
fn cpu_idle_alternates_enter_and_exit_and_covers_the_idle_time() {
    for (machine, w, extra) in [
        ("vm-2cpu", lisa_workload(), &[][..]),
        (
            "a7-octa",
            crate::common::example_workload(),
            &["--duration", "300ms"][..],
        ),
        (
            "icx-2s-80c-ht",
            lisa_workload(),
            &["--duration", "200ms"][..],
        ),
    ] {
        let r = run(&w, machine, extra);
        let ncpu = r.summary["machine"]["cpus"].as_u64().unwrap() as usize;
        // Per CPU: the state entered (None after an exit), when, and the
        // time spent in idle states.
        let mut state: Vec<Option<(u64, u64)>> = vec![None; ncpu];
        let mut seen = vec![false; ncpu];
        let mut idle = vec![0u64; ncpu];
        // Time in the idle task out of any idle state: from a cpu_idle exit
        // (the CPU woke) to the next switch to a task or idle state entry.
        let mut awake_since: Vec<Option<u64>> = vec![None; ncpu];
        let mut awake = vec![0u64; ncpu];
        let mut states_used = std::collections::BTreeSet::new();
        for rec in &r.records {
            let c = rec.cpu as usize;
            if let Some(f) = other(rec, "cpu_idle") {
                assert_eq!(num(&f, "cpu_id"), rec.cpu as u64, "{}", rec.to_line());
                assert_eq!(
                    rec.ctx_pid,
                    0,
                    "cpu_idle runs in the idle task: {}",
                    rec.to_line()
                );
                let s = num(&f, "state");
                if s == EXIT {
                    let (_, since) = state[c].take().unwrap_or_else(|| {
                        panic!("{machine}: exit without enter: {}", rec.to_line())
                    });
                    idle[c] += rec.time_ns - since;
                    awake_since[c] = Some(rec.time_ns);
                } else {
                    if let Some(a) = awake_since[c].take() {
                        awake[c] += rec.time_ns - a;
                    }
                    assert!(
                        state[c].is_none(),
                        "{machine}: enter twice: {}",
                        rec.to_line()
                    );
                    if !seen[c] {
                        assert_eq!(rec.time_ns, 0, "{machine}: CPUs boot idle");
                    }
                    state[c] = Some((s, rec.time_ns));
                    states_used.insert(s);
                }
                seen[c] = true;
                continue;
            }
            if let OwnedEvent::SchedSwitch { next, .. } = &rec.event {
                if next.pid != 0 {
                    if let Some(a) = awake_since[c].take() {
                        awake[c] += rec.time_ns - a;
                    }
                }
            }
            // Anything else on a CPU happens outside idle states.
            assert!(
                state[c].is_none(),
                "{machine}: event on a CPU in an idle state: {}",
                rec.to_line()
            );
        }
        assert!(seen.iter().all(|&s| s), "{machine}: a CPU without cpu_idle");
        assert!(states_used.len() >= 2, "{machine}: states {states_used:?}");
        // The run ends duration_ns after the first thread's creation (the
        // trace's first sched_wakeup_new).
        let start = r
            .records
            .iter()
            .find(|x| matches!(x.event, OwnedEvent::SchedWakeupNew { .. }))
            .unwrap()
            .time_ns;
        let end = start + r.summary["duration_ns"].as_u64().unwrap();
        for (c, cpu) in r.summary["cpus"].as_array().unwrap().iter().enumerate() {
            if let Some((_, since)) = state[c] {
                idle[c] += end - since;
            }
            // summary's idle_ns is the time no task runs, less the
            // scheduler work the idle CPU does: between idle_ns and idle_ns
            // plus that CPU's overhead lies the time in idle states plus the
            // time awake in the idle task.
            let want = cpu["idle_ns"].as_u64().unwrap();
            let ovh = cpu["sched_overhead_ns"].as_u64().unwrap();
            let got = idle[c] + awake[c];
            // (trace.txt rounds each time to the µs.)
            let slack = 1000 * 2 * r.records.len() as u64 / ncpu as u64;
            assert!(
                got + slack.min(want / 100) >= want && got <= want + ovh,
                "{machine} cpu{c}: cpu_idle residency {} ns + awake {} ns vs idle_ns {want} (+{ovh} overhead)",
                idle[c],
                awake[c]
            );
        }
    }
}

/// `trace-cmd report` reads the new events' formats in trace.dat and prints
/// each record as trace.txt has it (the shared checker of trace.rs).
#[test]
fn trace_dat_holds_the_new_events_like_the_text_trace() {
    let w = lisa_workload();
    let (n, _) = crate::trace::trace_dat_matches_text(w.to_str().unwrap(), "vm-2cpu", &[]);
    if n == 0 {
        return; // trace-cmd missing, said so
    }
    let r = run(&w, "vm-2cpu", &[]);
    let o = std::process::Command::new("trace-cmd")
        .args(["report", "-R"])
        .arg(r.out.join("trace.dat"))
        .output()
        .unwrap();
    let rep = String::from_utf8(o.stdout).unwrap();
    for (name, raw) in [
        (
            "task_rename",
            "pid=1001 oldcomm=rt-app newcomm=periodic-0 oom_score_adj=0",
        ),
        (
            "sched_process_fork",
            "parent_comm=rt-app parent_pid=1000 child_comm=rt-app child_pid=1001",
        ),
        ("sched_process_exit", "comm=short-3 pid=1004 prio=120"),
        ("sched_process_free", "comm=short-3 pid=1004 prio=120"),
        ("cpu_idle", "state=4294967295 cpu_id=0"),
        ("sched_stat_runtime", "comm=rt-app pid=1000 runtime=60000"),
    ] {
        // -R prints the raw fields by their format-file names.
        assert!(
            rep.lines()
                .any(|l| l.contains(&format!("{name}:")) && l.ends_with(raw)),
            "trace-cmd report -R: no {name} record ending {raw:?}"
        );
    }
}

/// The new events in trace.pftrace, decoded by the official `perfetto`
/// Python package: the same records as trace.txt (typed protos for
/// cpu_idle, task_rename and sched_process_*, a generic event for
/// sched_stat_runtime, which Perfetto has no proto for).
#[test]
fn pftrace_holds_the_new_events_of_the_text_trace() {
    if std::env::var("SCHEDLAB_SKIP_PERFETTO").as_deref() == Ok("1") {
        eprintln!("SKIP: perfetto decode (SCHEDLAB_SKIP_PERFETTO=1)");
        return;
    }
    let r = run(&lisa_workload(), "vm-2cpu", &[]);
    const NEW: [&str; 6] = [
        "task_rename",
        "sched_process_fork",
        "sched_process_exit",
        "sched_process_free",
        "cpu_idle",
        "sched_stat_runtime",
    ];
    // (cpu, µs, ctx pid, name, sorted key=value fields) of trace.txt.
    let mut want: Vec<(u32, u64, u32, String, String)> = r
        .records
        .iter()
        .filter_map(|rec| match &rec.event {
            OwnedEvent::Other { name, payload } if NEW.contains(&name.as_str()) => {
                let f: Vec<String> = fields(payload)
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                Some((
                    rec.cpu,
                    rec.time_ns / 1000,
                    rec.ctx_pid,
                    name.clone(),
                    f.join(" "),
                ))
            }
            _ => None,
        })
        .collect();
    const PY: &str = r#"
import json, sys
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb2
t = pb2.Trace()
t.ParseFromString(open(sys.argv[1], "rb").read())
# The text trace's key names for each proto field.
keys = {
    "sched_process_fork": {"parent_comm": "comm", "parent_pid": "pid"},
    "sched_process_exit": {"tgid": None},
}
for p in t.packet:
    if not p.HasField("ftrace_events"):
        continue
    for e in p.ftrace_events.event:
        kind = e.WhichOneof("event")
        if kind == "generic":
            name = e.generic.event_name
            f = {x.name: (x.str_value if x.HasField("str_value") else
                          x.int_value if x.HasField("int_value") else x.uint_value)
                 for x in e.generic.field}
        elif kind in ("task_rename", "sched_process_fork", "sched_process_exit",
                      "sched_process_free", "cpu_idle"):
            name = kind
            m = getattr(e, kind)
            f = {}
            for d, v in m.ListFields():
                k = keys.get(kind, {}).get(d.name, d.name)
                if k is not None:
                    f[k] = v
            if kind == "task_rename" and "oom_score_adj" not in f:
                f["oom_score_adj"] = 0
        else:
            continue
        fs = " ".join(f"{k}={v}" for k, v in sorted(f.items()))
        print(json.dumps([p.ftrace_events.cpu, e.timestamp, e.pid, name, fs]))
"#;
    let o = std::process::Command::new("python3")
        .args(["-c", PY])
        .arg(r.out.join("trace.pftrace"))
        .output()
        .expect("python3 (with `python3 -m pip install perfetto`)");
    assert!(
        o.status.success(),
        "perfetto decode failed (python3 -m pip install perfetto, or \
         SCHEDLAB_SKIP_PERFETTO=1):\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut got: Vec<(u32, u64, u32, String, String)> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (cpu, ts, pid, name, f): (u32, u64, u32, String, String) =
                serde_json::from_str(l).unwrap();
            (cpu, (ts + 500) / 1000, pid, name, f)
        })
        .collect();
    // trace.txt's sorted fields: BTreeMap order already.
    for w in &mut want {
        let mut f: Vec<&str> = w.4.split(' ').collect();
        f.sort();
        w.4 = f.join(" ");
    }
    want.sort();
    got.sort();
    for name in NEW {
        assert!(want.iter().any(|w| w.3 == name), "no {name} in trace.txt");
    }
    assert_eq!(got.len(), want.len(), "event count");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
}

//! `--trace`: trace.txt is complete ftrace text that our reader parses and
//! re-prints line for line, and its sched_switch lines form a consistent
//! per-CPU timeline that agrees with summary.json.

use crate::common::{assert_success, example_workload, schedlab};
use schedlab_output::ftrace_text::{
    parse_ftrace_header, parse_ftrace_text, running_task_timeline, OwnedEvent, OwnedRecord,
};
use serde_json::Value;
use std::collections::BTreeMap;

struct Traced {
    _tmp: tempfile::TempDir,
    text: String,
    summary: Value,
}

fn traced_run(machine: &str, extra: &[&str]) -> Traced {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut args: Vec<String> = vec![
        "run".into(),
        example_workload().to_string_lossy().into_owned(),
        "--machine".into(),
        machine.into(),
        "--out".into(),
        out.to_string_lossy().into_owned(),
        "--trace".into(),
        "--quiet".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    assert_success(&schedlab(&args));
    let text = std::fs::read_to_string(out.join("trace.txt")).expect("trace.txt");
    let summary =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    Traced {
        _tmp: tmp,
        text,
        summary,
    }
}

/// Every property of one traced run.
fn check_trace(machine: &str, extra: &[&str]) {
    let t = traced_run(machine, extra);
    let ctx = format!("{machine} {extra:?}");
    let records: Vec<OwnedRecord> = parse_ftrace_text(&t.text)
        .unwrap_or_else(|e| panic!("{ctx}: trace.txt does not parse: line {e}"));
    assert!(records.len() > 100, "{ctx}: only {} records", records.len());

    // Header: entry count and CPU count.
    let h = parse_ftrace_header(&t.text);
    assert_eq!(h.tracer.as_deref(), Some("nop"), "{ctx}: tracer");
    assert_eq!(
        h.entries_in_buffer,
        Some(records.len() as u64),
        "{ctx}: entries-in-buffer"
    );
    assert_eq!(
        h.entries_written,
        Some(records.len() as u64),
        "{ctx}: entries-written"
    );
    let nr_cpus = t.summary["machine"]["cpus"].as_u64().unwrap() as u32;
    assert_eq!(h.nr_cpus, Some(nr_cpus), "{ctx}: #P");

    // Re-formatting reproduces the file's event lines exactly.
    let body: Vec<&str> = t
        .text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert_eq!(body.len(), records.len(), "{ctx}: event lines vs records");
    for (i, (line, rec)) in body.iter().zip(&records).enumerate() {
        assert_eq!(
            &rec.to_line(),
            line,
            "{ctx}: event line {i} does not round-trip"
        );
    }

    // Time never goes backwards (the kernel merges per-CPU buffers by time).
    for w in records.windows(2) {
        assert!(
            w[0].time_ns <= w[1].time_ns,
            "{ctx}: time goes backwards:\n{}\n{}",
            w[0].to_line(),
            w[1].to_line()
        );
    }
    for r in &records {
        assert!(r.cpu < nr_cpus, "{ctx}: CPU out of range: {}", r.to_line());
    }

    let tl = running_task_timeline(&records);
    assert!(
        tl.contradictions.is_empty(),
        "{ctx}: {} timeline contradictions, first: {:?}",
        tl.contradictions.len(),
        tl.contradictions.first()
    );

    // Names and pids agree with summary.json.
    // Threads of the workload and the simulator's helper tasks (rt-app's
    // main thread) both appear in the trace.
    let all_tasks: Vec<serde_json::Value> = t.summary["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .chain(t.summary["helpers"].as_array().unwrap())
        .cloned()
        .collect();
    let names: BTreeMap<u32, String> = all_tasks
        .iter()
        .map(|x| {
            (
                x["pid"].as_u64().unwrap() as u32,
                x["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();

    // Perfetto's CPU-track rule: on each CPU, a switch's prev is the
    // previous switch's next; the first switch leaves the idle task.
    let mut last_next: BTreeMap<u32, u32> = BTreeMap::new();
    let mut task_switches_in: BTreeMap<u32, u64> = BTreeMap::new();
    let mut switches = 0;
    for r in &records {
        let OwnedEvent::SchedSwitch {
            prev,
            prev_state,
            next,
        } = &r.event
        else {
            continue;
        };
        switches += 1;
        let expect_prev = last_next.get(&r.cpu).copied().unwrap_or(0);
        assert_eq!(
            prev.pid,
            expect_prev,
            "{ctx}: CPU {} switches away from {} but {} was running:\n{}",
            r.cpu,
            prev.pid,
            expect_prev,
            r.to_line()
        );
        assert_ne!(
            prev.pid,
            next.pid,
            "{ctx}: switch to itself: {}",
            r.to_line()
        );
        assert_eq!(
            r.ctx_pid,
            prev.pid,
            "{ctx}: switch line context: {}",
            r.to_line()
        );
        if prev.pid == 0 {
            assert_eq!(prev_state, "R", "{ctx}: idle's prev_state: {}", r.to_line());
        }
        for task in [prev, next] {
            if task.pid != 0 {
                assert_eq!(
                    names.get(&task.pid),
                    Some(&task.comm),
                    "{ctx}: unknown pid or comm in {}",
                    r.to_line()
                );
            } else {
                assert_eq!(
                    task.comm,
                    format!("swapper/{}", r.cpu),
                    "{ctx}: {}",
                    r.to_line()
                );
            }
        }
        if next.pid != 0 {
            *task_switches_in.entry(next.pid).or_default() += 1;
        }
        last_next.insert(r.cpu, next.pid);
    }
    assert!(switches > 0, "{ctx}: no sched_switch at all");

    // Every switch-in of a task appears in the trace, and only those.
    let from_summary: BTreeMap<u32, u64> = all_tasks
        .iter()
        .map(|x| {
            (
                x["pid"].as_u64().unwrap() as u32,
                x["switches"].as_u64().unwrap(),
            )
        })
        .filter(|&(_, n)| n > 0)
        .collect();
    let total_trace: u64 = task_switches_in.values().sum();
    let total_summary: u64 = from_summary.values().sum();
    assert_eq!(
        total_trace, total_summary,
        "{ctx}: sched_switch lines to a task vs sum of tasks[].switches"
    );
    assert_eq!(task_switches_in, from_summary, "{ctx}: switches per pid");
}

#[test]
fn trace_a7_octa_default() {
    check_trace("a7-octa", &[]);
}

#[test]
fn trace_vm_2cpu_overloaded_voluntary() {
    check_trace(
        "vm-2cpu",
        &["--preempt", "voluntary", "--seed", "5", "--duration", "3s"],
    );
}

#[test]
fn trace_a7_octa_lazy_hz1000_no_wakeup_preemption() {
    check_trace(
        "a7-octa",
        &[
            "--preempt",
            "lazy",
            "--hz",
            "1000",
            "--seed",
            "11",
            "--features",
            "NO_WAKEUP_PREEMPTION,NO_RUN_TO_PARITY",
            "--duration",
            "2s",
        ],
    );
}

/// `trace-cmd report -N` on the trace.dat of a run prints the same events,
/// in the same order, with the same CPUs, times, contexts and fields as the
/// run's trace.txt (the project's test command installs trace-cmd).
#[test]
fn trace_dat_matches_the_text_trace_line_for_line() {
    let (n, _) = trace_dat_matches_text(
        crate::common::example_workload().to_str().unwrap(),
        "a7-octa",
        &["--duration", "300ms"],
    );
    if n > 0 {
        assert!(n > 100, "{n} events");
    }
}

/// rt-app's trace_marker writes (`global.ftrace`) are the ftrace `print`
/// event in trace.dat: `trace-cmd report` prints each as `print:
/// tracing_mark_write: <text>`, with the text, context and time of the
/// trace.txt line.
#[test]
fn trace_dat_prints_rt_app_markers_like_the_text_trace() {
    const W: &str = r#"{
  "tasks": {
    "a": { "loop": 4, "run": 1000, "sleep": 3000 },
    "b": { "instance": 2, "loop": 3, "run": 2500, "timer": { "ref": "t", "period": 5000 } }
  },
  "global": { "calibration": 100, "ftrace": "main,task,loop,stats" }
}"#;
    let src = tempfile::tempdir().unwrap();
    let w = src.path().join("markers.json");
    std::fs::write(&w, W).unwrap();
    let (n, marks) = trace_dat_matches_text(w.to_str().unwrap(), "vm-2cpu", &[]);
    if n > 0 {
        // rtapp_main start and clock_ref; task start and end for each of
        // the three threads (a and b's two instances); loop start, stats
        // and loop end for each iteration (4 of a, 3 of each b).
        assert_eq!(marks, 2 + 3 * 2 + (4 + 3 + 3) * 3, "markers");
    }
    // The corpus's periodic workload, with every marker category
    // (`event` markers too) and a shared absolute timer.
    let periodic = crate::common::corpus_dir().join("periodic.json");
    let (n, marks) = trace_dat_matches_text(
        periodic.to_str().unwrap(),
        "a7-octa",
        &["--duration", "0.5"],
    );
    if n > 0 {
        assert!(marks >= 10, "{marks} markers");
    }
}

/// Runs `schedlab run WORKLOAD --machine MACHINE EXTRA... --trace` and
/// checks that `trace-cmd report -N trace.dat` prints exactly the events of
/// trace.txt, the `tracing_mark_write` lines (rt-app markers) as ftrace
/// `print` events; returns the numbers of events and of markers.
pub(crate) fn trace_dat_matches_text(
    workload: &str,
    machine: &str,
    extra: &[&str],
) -> (usize, usize) {
    use schedlab_output::ftrace_text::{parse_ftrace_line, parse_ftrace_text};
    use std::process::Command;
    let ctx = format!("{workload} on {machine} {extra:?}");
    if Command::new("trace-cmd").arg("--version").output().is_err() {
        if std::env::var_os("SCHEDLAB_SKIP_TRACE_CMD").is_some() {
            eprintln!("SKIP: trace-cmd not installed");
            return (0, 0);
        }
        panic!(
            "trace-cmd is not installed (apt-get install -y trace-cmd; scripts/test.sh does it)"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut args = vec!["run", workload, "--machine", machine];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--trace", "--quiet", "--out", out.to_str().unwrap()]);
    let o = crate::common::schedlab(&args);
    assert_success(&o);
    let text = std::fs::read_to_string(out.join("trace.txt")).unwrap();
    let want = parse_ftrace_text(&text).unwrap();
    let marks = text.matches(": tracing_mark_write: ").count();
    let rep = Command::new("trace-cmd")
        .args(["report", "-N"])
        .arg(out.join("trace.dat"))
        .output()
        .unwrap();
    assert!(
        rep.status.success(),
        "{ctx}: {}",
        String::from_utf8_lossy(&rep.stderr)
    );
    let rep = String::from_utf8(rep.stdout).unwrap();
    let mut lines = rep.lines();
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let cpus = format!("cpus={}", summary["machine"]["cpus"]);
    assert_eq!(lines.next(), Some(cpus.as_str()), "{ctx}");
    // trace-cmd pads the event name ("sched_switch:     prev_comm=..."):
    // fold the padding to the kernel's single space before parsing. A
    // trace_marker write is the ftrace `print` event, printed
    // "print:    tracing_mark_write: <text>" (its "%ps: %s" format), where
    // trace.txt has "tracing_mark_write: <text>".
    let fold = |l: &str| -> String {
        let Some(i) = l.find(": ") else {
            return l.to_string();
        };
        let (head, rest) = l.split_at(i + 2);
        let Some(j) = rest.find(':') else {
            return l.to_string();
        };
        let (name, payload) = (&rest[..j], rest[j + 1..].trim_start());
        if name == "print" {
            assert!(
                payload.starts_with("tracing_mark_write: "),
                "{ctx}: print event without tracing_mark_write: {l}"
            );
            format!("{head}{payload}")
        } else {
            format!("{head}{name}: {payload}")
        }
    };
    let got: Vec<_> = lines
        .map(fold)
        .filter_map(|l| parse_ftrace_line(&l).unwrap_or_else(|e| panic!("{ctx}: {e}: {l}")))
        .collect();
    assert_eq!(got.len(), want.len(), "{ctx}: event count");
    // trace-cmd orders events of equal time by CPU; the text trace by
    // emission. Compare as multisets per timestamp.
    let key = |r: &schedlab_output::ftrace_text::OwnedRecord| {
        (r.time_ns, r.cpu, r.ctx_pid, format!("{:?}", r.event))
    };
    let mut a: Vec<_> = got.iter().map(key).collect();
    let mut b: Vec<_> = want.iter().map(key).collect();
    a.sort();
    b.sort();
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "{ctx}");
    }
    // Every marker of trace.txt came through as a print event.
    let got_marks = got
        .iter()
        .filter(|r| r.event.name() == "tracing_mark_write")
        .count();
    assert_eq!(got_marks, marks, "{ctx}: tracing_mark_write events");
    (got.len(), marks)
}

/// rt-app's trace_marker writes reach trace.pftrace as `print` events, as
/// decoded by the official `perfetto` Python package: one per
/// `tracing_mark_write` line of trace.txt, with its CPU, time, writer and
/// text (plus the newline the kernel appends).
#[test]
fn pftrace_holds_the_rt_app_markers_of_the_text_trace() {
    use schedlab_output::ftrace_text::{parse_ftrace_text, OwnedEvent};
    use std::process::Command;
    const W: &str = r#"{
  "tasks": { "t": { "instance": 2, "loop": 3, "run": 1000, "sleep": 4000 } },
  "global": { "calibration": 100, "ftrace": "main,task,loop,stats,event" }
}"#;
    let (_tmp, out) = crate::common::run_json(W, "vm-2cpu", &["--trace"]);
    let text = std::fs::read_to_string(out.join("trace.txt")).unwrap();
    // (cpu, µs, pid, buf) of every marker.
    let mut want: Vec<(u32, u64, u32, String)> = parse_ftrace_text(&text)
        .unwrap()
        .into_iter()
        .filter_map(|r| match r.event {
            OwnedEvent::Other { name, payload } if name == "tracing_mark_write" => {
                Some((r.cpu, r.time_ns / 1000, r.ctx_pid, format!("{payload}\n")))
            }
            _ => None,
        })
        .collect();
    assert!(want.len() > 20, "{} markers", want.len());
    if std::env::var("SCHEDLAB_SKIP_PERFETTO").as_deref() == Ok("1") {
        eprintln!("SKIP: perfetto decode (SCHEDLAB_SKIP_PERFETTO=1)");
        return;
    }
    const PY: &str = r#"
import json, sys
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb2
t = pb2.Trace()
t.ParseFromString(open(sys.argv[1], "rb").read())
for p in t.packet:
    if p.HasField("ftrace_events"):
        for e in p.ftrace_events.event:
            if e.WhichOneof("event") == "print":
                print(json.dumps([p.ftrace_events.cpu, e.timestamp, e.pid, e.print.buf]))
"#;
    let o = Command::new("python3")
        .args(["-c", PY])
        .arg(out.join("trace.pftrace"))
        .output()
        .expect("python3 (with `python3 -m pip install perfetto`)");
    assert!(
        o.status.success(),
        "perfetto decode failed (python3 -m pip install perfetto, or \
         SCHEDLAB_SKIP_PERFETTO=1):\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut got: Vec<(u32, u64, u32, String)> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (cpu, ts, pid, buf): (u32, u64, u32, String) = serde_json::from_str(l).unwrap();
            // trace.txt rounds to the nearest µs.
            (cpu, (ts + 500) / 1000, pid, buf)
        })
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);
}

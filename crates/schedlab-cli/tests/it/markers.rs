//! rt-app's trace_marker lines (`global.ftrace`) in trace.txt: the
//! categories asked for, in the running thread's context, in order.

use crate::common::run_json;

const W: &str = r#"{
  "tasks": { "t": { "loop": 3, "run": 1000, "sleep": 4000 } },
  "global": { "calibration": 100, "ftrace": "main,task,loop,stats" }
}"#;

fn markers(json: &str) -> Vec<(String, String)> {
    let (_tmp, out) = run_json(json, "vm-2cpu", &["--trace", "--check"]);
    let text = std::fs::read_to_string(out.join("trace.txt")).unwrap();
    text.lines()
        .filter_map(|l| {
            let (head, payload) = l.split_once(": tracing_mark_write: ")?;
            let comm = head.split_whitespace().next()?.to_string();
            Some((comm, payload.to_string()))
        })
        .collect()
}

#[test]
fn rt_app_markers_follow_the_thread() {
    let m = markers(W);
    let texts: Vec<&str> = m.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts[0], "rtapp_main: event=start");
    assert!(
        texts[1].starts_with("rtapp_main: event=clock_ref data="),
        "{texts:?}"
    );
    assert_eq!(texts[2], "rtapp_task: event=start");
    // Three iterations of the single phase (a phase-less task's `loop`
    // repeats its one phase): start, stats, end each.
    for i in 0..3 {
        let base = 3 + 3 * i;
        assert_eq!(
            texts[base],
            format!("rtapp_loop: event=start thread_loop=0 phase=0 phase_loop={i}")
        );
        assert!(
            texts[base + 1].starts_with("rtapp_stats: period="),
            "{texts:?}"
        );
        assert!(
            texts[base + 1].contains(" c_run=1000"),
            "{}",
            texts[base + 1]
        );
        assert_eq!(
            texts[base + 2],
            format!("rtapp_loop: event=end thread_loop=0 phase=0 phase_loop={i}")
        );
    }
    assert_eq!(texts[12], "rtapp_task: event=end");
    assert_eq!(m.len(), 13);
    // Written by the thread itself (the main thread for rtapp_main start).
    assert!(m[0].0.starts_with("rt-app-"), "{:?}", m[0]);
    assert!(m[2..].iter().all(|(c, _)| c.starts_with("t-0-")), "{m:?}");
}

#[test]
fn no_categories_no_markers() {
    let none = W.replace("main,task,loop,stats", "none");
    assert!(markers(&none).is_empty());
    let only_loop = W.replace("main,task,loop,stats", "LOOP");
    let m = markers(&only_loop);
    assert_eq!(m.len(), 6);
    assert!(m.iter().all(|(_, t)| t.starts_with("rtapp_loop:")));
}

#[test]
fn event_markers_name_each_event() {
    let ev = W.replace("main,task,loop,stats", "event");
    let m = markers(&ev);
    let texts: Vec<&str> = m.iter().map(|(_, t)| t.as_str()).collect();
    // Three iterations of run then sleep: rt-app's type 6 then 5.
    assert_eq!(texts.len(), 6, "{texts:?}");
    for pair in texts.chunks(2) {
        assert_eq!(pair[0], "rtapp_event: id=0 type=6 desc=run");
        assert_eq!(pair[1], "rtapp_event: id=1 type=5 desc=sleep");
    }
}

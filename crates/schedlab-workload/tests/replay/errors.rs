//! Broken traces: one error naming the line.

use super::hand_made::periodic;
use super::*;

pub(crate) fn err_of(text: &str) -> schedlab_workload::replay::ReplayError {
    replay_trace(text, "bad.txt", &opts()).unwrap_err()
}

#[test]
fn a_broken_line_gives_its_number() {
    let mut s = periodic(2, 10_000, 100);
    s.push_str("this is not a trace line\n");
    let e = err_of(&s);
    assert_eq!(e.kind, ReplayErrorKind::BrokenLine);
    assert_eq!(e.line, 11);
    let msg = e.to_string();
    assert!(msg.starts_with("bad.txt:11: "), "{msg}");
    assert_eq!(msg.lines().count(), 1);
    // A sched_switch with a bad number.
    let mut s = periodic(1, 10_000, 100);
    s.push_str(&line("<idle>", 0, 1, "d..2.", 9_000_000, "sched_switch: prev_comm=swapper/1 prev_pid=zero prev_prio=120 prev_state=R ==> next_comm=x next_pid=3 next_prio=120"));
    s.push('\n');
    let e = err_of(&s);
    assert_eq!((e.kind, e.line), (ReplayErrorKind::BrokenLine, 7));
}

#[test]
fn time_going_backwards_gives_its_number() {
    let mut s = periodic(2, 10_000, 100);
    // Another CPU may be behind (per-CPU buffers); the same CPU may not.
    s.push_str(&line(
        "<idle>",
        0,
        0,
        "d..2.",
        1_000_000,
        &switch("swapper/0", 0, "R", "x", 3),
    ));
    s.push('\n');
    s.push_str(&line(
        "x",
        3,
        0,
        "d..2.",
        999_999,
        &switch("x", 3, "S", "swapper/0", 0),
    ));
    s.push('\n');
    let e = err_of(&s);
    assert_eq!(
        (e.kind, e.line),
        (ReplayErrorKind::TimeBackwards, 12),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("bad.txt:12: time goes backwards on CPU 0"),
        "{e}"
    );
}

#[test]
fn one_pid_on_two_cpus_gives_its_number() {
    let mut s = String::from(HEADER);
    for l in [
        line(
            "<idle>",
            0,
            0,
            "d..2.",
            1_000_000,
            &switch("swapper/0", 0, "R", "x", 3),
        ),
        line(
            "x",
            3,
            0,
            "d..2.",
            1_000_010,
            &waking("sched_waking", "y", 4, 1),
        ),
        line(
            "x",
            3,
            1,
            "d..2.",
            1_000_020,
            &waking("sched_waking", "z", 5, 1),
        ),
    ] {
        s.push_str(&l);
        s.push('\n');
    }
    let e = err_of(&s);
    assert_eq!((e.kind, e.line), (ReplayErrorKind::TwoCpus, 5), "{e}");
    assert!(e.to_string().contains("pid 3"), "{e}");
    // The same by a sched_switch naming it as next.
    let mut s = String::from(HEADER);
    for l in [
        line(
            "<idle>",
            0,
            0,
            "d..2.",
            1_000_000,
            &switch("swapper/0", 0, "R", "x", 3),
        ),
        line(
            "<idle>",
            0,
            1,
            "d..2.",
            1_000_020,
            &switch("swapper/1", 0, "R", "x", 3),
        ),
    ] {
        s.push_str(&l);
        s.push('\n');
    }
    let e = err_of(&s);
    assert_eq!((e.kind, e.line), (ReplayErrorKind::TwoCpus, 4), "{e}");
}

#[test]
fn an_empty_trace_is_an_error() {
    let e = err_of(HEADER);
    assert_eq!(e.kind, ReplayErrorKind::Empty);
    assert!(e.to_string().starts_with("bad.txt:0: "));
}

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use schedlab_core::ids::CpuId;
use schedlab_core::observe::{PrevState, Sink, TaskView, TraceEvent, TraceRecord};
use schedlab_output::ftrace_text::SpooledTraceWriter;
use schedlab_output::outdir::*;

/// All entries under `dir`, relative, sorted (hidden ones included).
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(root: &Path, d: &Path, out: &mut Vec<String>) {
        for e in fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(root).unwrap().display().to_string());
            if p.is_dir() {
                walk(root, &p, out);
            }
        }
    }
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

#[test]
fn immediate_files_appear_complete_and_leave_no_tmp() {
    let tmp = tempfile::tempdir().unwrap();
    let out = OutDir::create(tmp.path().join("run")).unwrap();
    out.write("summary.json", b"{}\n").unwrap();
    out.write_with("cgroup/tg1/cpu.stat", |w| w.write_all(b"usage_usec 0\n"))
        .unwrap();
    let mut p = out.create_file("trace.txt").unwrap();
    p.write_all(b"# tracer: nop\n").unwrap();
    assert!(p.dest().ends_with("trace.txt"));
    assert!(
        !out.path().join("trace.txt").exists(),
        "not visible before commit"
    );
    p.commit().unwrap();
    assert_eq!(
        listing(out.path()),
        [
            "cgroup",
            "cgroup/tg1",
            "cgroup/tg1/cpu.stat",
            "summary.json",
            "trace.txt"
        ]
    );
    assert_eq!(fs::read(out.path().join("summary.json")).unwrap(), b"{}\n");
}

#[test]
fn immediate_failed_file_leaves_old_contents_and_no_tmp() {
    let tmp = tempfile::tempdir().unwrap();
    let out = OutDir::create(tmp.path()).unwrap();
    out.write("summary.json", b"old\n").unwrap();
    let e = out
        .write_with("summary.json", |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("simulation failed"))
        })
        .unwrap_err();
    assert_eq!(e.to_string(), "simulation failed");
    assert_eq!(listing(tmp.path()), ["summary.json"]);
    assert_eq!(fs::read(tmp.path().join("summary.json")).unwrap(), b"old\n");
    // A pending file dropped without commit is removed too.
    let mut p = out.create_file("schedstat").unwrap();
    p.write_all(b"version 17\n").unwrap();
    drop(p);
    assert_eq!(listing(tmp.path()), ["summary.json"]);
}

#[test]
fn bad_names_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let out = OutDir::create(tmp.path()).unwrap();
    for bad in ["", "../x", "/etc/passwd", "a/../../b"] {
        let e = out.write(bad, b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad}");
    }
    let st = StagedOutDir::stage(tmp.path().join("s")).unwrap();
    assert!(st.write("../escape", b"x").is_err());
}

#[test]
fn staged_commit_into_a_new_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("out");
    let st = StagedOutDir::stage(&target).unwrap();
    assert!(st.stage_dir().starts_with(tmp.path()));
    st.write("summary.json", b"{}\n").unwrap();
    st.write("cgroup/tg1/cpu.stat", b"usage_usec 0\n").unwrap();
    assert!(!target.exists(), "nothing visible before commit");
    let files = st.commit().unwrap();
    assert_eq!(
        files,
        [
            Path::new("cgroup/tg1/cpu.stat").to_path_buf(),
            Path::new("summary.json").to_path_buf()
        ]
    );
    assert_eq!(
        listing(tmp.path()),
        [
            "out",
            "out/cgroup",
            "out/cgroup/tg1",
            "out/cgroup/tg1/cpu.stat",
            "out/summary.json"
        ]
    );
}

#[test]
fn staged_commit_into_an_existing_directory_replaces_it_whole() {
    // Merging into an existing directory would mix two runs: a non-empty
    // directory is refused without `replace` (--force) and replaced whole
    // with it: files the new run does not write are gone.
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("out");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("summary.json"), b"old").unwrap();
    fs::write(target.join("rt-app-old-0.log"), b"old run").unwrap();
    let e = StagedOutDir::stage(&target).unwrap_err().to_string();
    assert!(e.contains("not empty"), "{e}");
    let st = StagedOutDir::stage_with(&target, true).unwrap();
    st.write("summary.json", b"new").unwrap();
    st.write("schedstat", b"version 17\n").unwrap();
    st.commit().unwrap();
    assert_eq!(
        listing(tmp.path()),
        ["out", "out/schedstat", "out/summary.json"]
    );
    assert_eq!(fs::read(target.join("summary.json")).unwrap(), b"new");
}

fn failing_run(target: &Path) -> io::Result<()> {
    let st = StagedOutDir::stage(target)?;
    st.write("summary.json", b"{}\n")?;
    st.write_with("rt-app-cfs_thread-0.log", |w| {
        w.write_all(b"#idx ...\n")?;
        Err(io::Error::other("workload error"))
    })?;
    st.commit().map(|_| ())
}

#[test]
fn a_failed_run_leaves_no_partial_files() {
    let tmp = tempfile::tempdir().unwrap();
    let e = failing_run(&tmp.path().join("out")).unwrap_err();
    assert_eq!(e.to_string(), "workload error");
    assert_eq!(listing(tmp.path()), Vec::<String>::new());
    // Same into an existing directory: its contents are untouched.
    let target = tmp.path().join("old");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("summary.json"), b"old").unwrap();
    failing_run(&target).unwrap_err();
    assert_eq!(listing(tmp.path()), ["old", "old/summary.json"]);
    assert_eq!(fs::read(target.join("summary.json")).unwrap(), b"old");
}

#[test]
fn spooled_trace_into_a_staged_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let st = StagedOutDir::stage(tmp.path().join("out")).unwrap();
    let mut w = SpooledTraceWriter::new_in(st.stage_dir()).unwrap();
    let idle = TaskView {
        pid: 0,
        comm: "",
        prio: 120,
    };
    let t = TaskView {
        pid: 5,
        comm: "t",
        prio: 120,
    };
    for i in 0..1000u64 {
        let (p, n) = if i % 2 == 0 { (idle, t) } else { (t, idle) };
        w.trace(&TraceRecord {
            time: i * 1000,
            cpu: CpuId(0),
            ctx: p,
            flags: *b"d..2.",
            event: TraceEvent::SchedSwitch {
                prev: p,
                prev_state: PrevState::Sleeping,
                next: n,
            },
        });
    }
    // The spool is anonymous: only the staged files are in the stage.
    let mut f = st.create_file("trace.txt").unwrap();
    assert_eq!(w.finish(1, &mut f).unwrap(), 1000);
    drop(f);
    st.commit().unwrap();
    let text = fs::read_to_string(tmp.path().join("out/trace.txt")).unwrap();
    assert!(text.contains("# entries-in-buffer/entries-written: 1000/1000   #P:1\n"));
    assert_eq!(text.lines().count(), 1012);
    assert_eq!(listing(tmp.path()), ["out", "out/trace.txt"]);
}

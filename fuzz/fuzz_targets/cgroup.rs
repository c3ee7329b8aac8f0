//! `--cgroup PATH:FILE=VALUE[:...]` settings, one argument per line,
//! applied to a workload whose tasks sit in /a, /a/b and /c (as the CLI
//! does after the workload is read).
#![no_main]
use libfuzzer_sys::fuzz_target;
use schedlab_workload::cgroup::{apply_overrides, parse_arg, validate_group_path};

const WORKLOAD: &str = r#"{"tasks": {
 "x": {"run": 100, "loop": 2, "taskgroup": "/a"},
 "y": {"run": 100, "loop": 2, "taskgroup": "/a/b"},
 "z": {"run": 100, "loop": 2, "taskgroup": "/c"}},
 "global": {"calibration": 100}}"#;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut args = Vec::new();
    for line in text.lines() {
        let _ = validate_group_path(line);
        match parse_arg(line) {
            Ok(a) => args.push(a),
            Err(_) => return,
        }
    }
    let mut w = schedlab_workload::load_rtapp("w.json", WORKLOAD, 4)
        .expect("workload")
        .workload;
    let _ = apply_overrides(&mut w, &args);
});

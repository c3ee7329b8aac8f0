//! summary.json as `report` reads it: the bytes become the summary.json of
//! a run directory in a temporary directory; `report` loads it and, when
//! it loads, writes report.html and its plots.
#![no_main]
use libfuzzer_sys::fuzz_target;
use schedlab_output::report_html::{load_run, write_report};

fuzz_target!(|data: &[u8]| {
    // Cheap rejection first: only JSON objects get the file-system round.
    if std::str::from_utf8(data).is_err() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("summary.json"), data).expect("write");
    let Ok(run) = load_run(dir.path()) else {
        return;
    };
    let _ = write_report(&[run], dir.path());
});

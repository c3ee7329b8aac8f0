//! Sweep specs (`schedlab sweep SPEC`): the first byte's low bit picks
//! the syntax (0: TOML, `spec.toml`; 1: JSON, `spec.json`), the rest is
//! the file, written into a temp directory and read by `sweep::read_spec`
//! as the CLI reads it (relative workload paths resolved against that
//! directory, which holds a `w.json` so that they can resolve), then each
//! point's command line is built. A spec is a cross product: past
//! `--max-points` (default 100 000) it must be refused, not built.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

fn dir() -> &'static tempfile::TempDir {
    static D: OnceLock<tempfile::TempDir> = OnceLock::new();
    D.get_or_init(|| {
        let d = tempfile::tempdir().expect("temp dir");
        std::fs::write(d.path().join("w.json"), r#"{"tasks": {"t": {"run": 10}}}"#)
            .expect("w.json");
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let name = if kind & 1 == 0 {
        "spec.toml"
    } else {
        "spec.json"
    };
    let path: PathBuf = dir().path().join(name);
    if std::fs::write(&path, rest).is_err() {
        return;
    }
    use schedlab_lab::sweep::{read_spec, DEFAULT_MAX_POINTS};
    if let Ok(spec) = read_spec(&path, DEFAULT_MAX_POINTS) {
        let out = dir().path().join("out");
        for p in spec.points.iter().take(1000) {
            let _ = p.argv(&p.workload, &out);
            let _ = p.to_json();
        }
    }
});

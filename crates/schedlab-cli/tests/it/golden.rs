//! Golden outputs of a tiny run: trace.txt, summary.json and one rt-app log
//! are compared byte for byte with the files in `tests/golden/tiny/`.
//! After an intended model change, re-bless them with
//! `SCHEDLAB_BLESS=1 cargo test --release -p schedlab-cli golden` and review
//! the diff like code.

use crate::common::BIN;
use std::path::Path;
use std::process::Command;

const FILES: &[&str] = &[
    "summary.json",
    "trace.txt",
    "rt-app-periodic-0.log",
    "rt-app-background-3.log",
];

#[test]
fn tiny_run_matches_golden_outputs() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/tiny");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let st = Command::new(BIN)
        .args(["run", golden.join("workload.json").to_str().unwrap()])
        .args([
            "--machine",
            "vm-2cpu",
            "--duration",
            "30ms",
            "--seed",
            "7",
            "--trace",
            "--check",
            "--quiet",
        ])
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    let bless = std::env::var_os("SCHEDLAB_BLESS").is_some();
    let mut diffs = Vec::new();
    for f in FILES {
        let got = std::fs::read_to_string(out.join(f)).unwrap();
        let path = golden.join(f);
        if bless {
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if got != want {
            let first = got.lines().zip(want.lines()).position(|(a, b)| a != b);
            diffs.push(format!(
                "{f}: differs (first differing line {:?}; got {} lines, golden {} lines)",
                first.map(|i| i + 1),
                got.lines().count(),
                want.lines().count()
            ));
        }
    }
    assert!(
        diffs.is_empty(),
        "golden outputs changed:\n{}\nre-bless with SCHEDLAB_BLESS=1 if intended",
        diffs.join("\n")
    );
}

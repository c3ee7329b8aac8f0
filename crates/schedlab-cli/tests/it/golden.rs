//! Golden outputs of a tiny run: trace.txt, summary.json and one rt-app log
//! are compared byte for byte with the files in `tests/golden/tiny/`.
//! After an intended model change, re-bless them with
//! `SCHEDLAB_BLESS=1 cargo test --release -p schedlab-cli golden` and review
//! the diff like code.

use crate::common::{list_tree, run_case_file, BIN};
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
            "--noise",
            "off",
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

/// The behaviour baseline (`tests/golden/baseline/cases.txt`): whole output
/// directories, every file byte for byte, of runs that cover every kind of
/// workload (rt-app periodic and synchronisation mixes, RT and deadline,
/// a quota hierarchy in each THROTTLE mode, hackbench, OLTP) with
/// `--trace`. A behaviour-neutral change proves itself here. Re-bless only for an
/// intended model change: `SCHEDLAB_BLESS=1 cargo test --release -p
/// schedlab-cli golden`.
#[test]
fn baseline_output_directories_are_unchanged() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/baseline");
    let bless = std::env::var_os("SCHEDLAB_BLESS").is_some();
    let tmp = tempfile::tempdir().unwrap();
    let mut diffs = Vec::new();
    let runs = run_case_file(&base, tmp.path(), &["--trace", "--check", "--quiet"], |w| {
        w.to_string()
    });
    let n = runs.len();
    for (name, out) in runs {
        let want_dir = base.join("out").join(&name);
        if bless {
            let _ = std::fs::remove_dir_all(&want_dir);
            copy_tree(&out, &want_dir);
            continue;
        }
        let got = list_tree(&out);
        let want = list_tree(&want_dir);
        if got != want {
            diffs.push(format!(
                "{name}: files differ: got {got:?}, golden {want:?}"
            ));
            continue;
        }
        for f in &got {
            let a = std::fs::read(out.join(f)).unwrap();
            let b = std::fs::read(want_dir.join(f)).unwrap();
            if a != b {
                let at = a
                    .iter()
                    .zip(&b)
                    .position(|(x, y)| x != y)
                    .unwrap_or(a.len().min(b.len()));
                diffs.push(format!(
                    "{name}/{f}: differs from byte {at} ({} bytes, golden {})",
                    a.len(),
                    b.len()
                ));
            }
        }
    }
    assert!(n >= 10, "cases.txt lists only {n} cases");
    assert!(
        diffs.is_empty(),
        "baseline outputs changed:\n{}\nre-bless with SCHEDLAB_BLESS=1 only for an intended model change",
        diffs.join("\n")
    );
}

fn copy_tree(from: &Path, to: &Path) {
    for f in list_tree(from) {
        let dst = to.join(&f);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&f), dst).unwrap();
    }
}

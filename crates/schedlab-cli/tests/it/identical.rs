//! The byte-identical-outputs test: an optimisation must leave every
//! output of the performance cases' shapes unchanged. The runs
//! of `tests/golden/hashes/cases.txt` (message-by-message and fast-forwarded
//! hackbench on 160 CPUs, the SCHED_IDLE example, periodic threads on 160
//! CPUs, OLTP on 384 and 512 CPUs, hackbench under a 3-level quota
//! hierarchy), all with `--trace`, are hashed file by file and compared
//! with `tests/golden/hashes/hashes.txt`. Their outputs are tens of MB, so
//! the hashes are committed rather than the files (the small baseline runs
//! in `golden.rs` commit whole directories). Re-bless only for an intended
//! model change: `SCHEDLAB_BLESS=1 cargo test --release -p schedlab-cli
//! --test it identical`.

use crate::common::{list_tree, run_case_file};
use std::fmt::Write as _;
use std::path::Path;

/// 64-bit FNV-1a: stable across Rust releases (std's hasher is not), and
/// enough to notice any change (the length is recorded as well).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[test]
fn fnv1a_known_values() {
    // The published test vectors of FNV-1a 64.
    assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
}

#[test]
fn performance_shapes_hash_as_committed() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/hashes");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let tmp = tempfile::tempdir().unwrap();
    let mut got = String::new();
    let ex = examples.to_str().unwrap();
    let runs = run_case_file(&base, tmp.path(), &["--trace", "--quiet"], |w| {
        w.replace("$EXAMPLES", ex)
    });
    let n = runs.len();
    for (name, out) in runs {
        let files = list_tree(&out);
        assert!(
            files.iter().any(|f| f == "trace.txt"),
            "{name}: no trace.txt among {files:?}"
        );
        for f in files {
            let bytes = std::fs::read(out.join(&f)).unwrap();
            writeln!(got, "{name}/{f} {} {:016x}", bytes.len(), fnv1a(&bytes)).unwrap();
        }
    }
    assert!(n >= 8, "cases.txt lists only {n} cases");
    let path = base.join("hashes.txt");
    if std::env::var_os("SCHEDLAB_BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    let diffs: Vec<String> = diff_lines(&got, &want);
    assert!(
        diffs.is_empty(),
        "outputs changed (file, bytes, FNV-1a 64):\n{}\nre-bless with SCHEDLAB_BLESS=1 only for an intended model change",
        diffs.join("\n")
    );
}

/// Lines present on one side only, marked `+` (got) or `-` (committed).
fn diff_lines(got: &str, want: &str) -> Vec<String> {
    let g: std::collections::BTreeSet<&str> = got.lines().collect();
    let w: std::collections::BTreeSet<&str> = want.lines().collect();
    let mut d: Vec<String> = g.difference(&w).map(|l| format!("+ {l}")).collect();
    d.extend(w.difference(&g).map(|l| format!("- {l}")));
    d
}

//! Machine files (`--machine FILE.toml`, `--machine layout:...`,
//! docs/formats.md §3.1) through the binary: `schedlab machines` on a file
//! prints what it prints for the preset the file writes out, with and
//! without `--domains`; a run on a preset's file is the run on the preset;
//! the inline form. Refusals are in `bad_input_table`.

use crate::common::{assert_success, schedlab, schedlab_in};
use std::path::PathBuf;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/machines")
}

#[test]
fn machines_on_each_example_file_prints_the_preset() {
    for name in schedlab_core::machine::PRESET_NAMES {
        let file = examples().join(format!("{name}.toml"));
        let file = file.to_str().unwrap();
        for extra in [
            &[][..],
            &["--domains"][..],
            &["--domains", "--cpu", "1"][..],
        ] {
            let mut a = vec!["machines", name];
            a.extend(extra);
            let want = assert_success(&schedlab(&a));
            a[1] = file;
            let got = assert_success(&schedlab(&a));
            assert_eq!(got, want, "schedlab machines {name}.toml {extra:?}");
        }
    }
}

#[test]
fn run_on_a_preset_file_is_the_run_on_the_preset() {
    let file = examples().join("a7-octa.toml");
    let run = |machine: &str| {
        assert_success(&schedlab([
            "run",
            "hackbench:groups=1,loops=20",
            "--machine",
            machine,
            "--seed",
            "3",
        ]))
    };
    // The same run; only the header names the machine as it was given.
    let body = |t: String| t.lines().skip(1).collect::<Vec<_>>().join("\n");
    let (from_file, preset) = (run(file.to_str().unwrap()), run("a7-octa"));
    assert!(from_file.starts_with(&format!(
        "# hackbench:groups=1,loops=20 on {} (8 CPUs)",
        file.display()
    )));
    assert!(preset.starts_with("# hackbench:groups=1,loops=20 on a7-octa (8 CPUs)"));
    assert_eq!(body(from_file), body(preset));
}

#[test]
fn a_user_machine_file_and_the_same_keys_inline() {
    // 2 x Xeon Platinum 8358 (Ice Lake-SP), 32C/64T per socket.
    let text = r#"name = "icl-2s-32c-ht"
description = "2 x Xeon Platinum 8358 (Ice Lake-SP), 32C/64T per socket"
source = "the vendor's product page: 32 cores, 64 threads"
sockets = 2
cores_per_llc = 32
threads_per_core = 2
numbering = "siblings-last"
distance_other_socket = 21
like = "icx-2s-80c-ht"

[costs]
wakeup_ns = 1600
"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("icl.toml"), text).unwrap();
    let out = assert_success(&schedlab_in(dir.path(), ["machines", "icl.toml"]));
    assert!(
        out.starts_with("icl-2s-32c-ht: 2 x Xeon Platinum 8358"),
        "{out}"
    );
    assert!(out.contains("128 CPUs, 64 cores (SMT2)"), "{out}");
    assert!(out.contains("wakeup 1.6 us"), "{out}");
    let dom = assert_success(&schedlab_in(
        dir.path(),
        ["machines", "icl.toml", "--domains"],
    ));
    assert!(dom.contains("CPU0"), "{dom}");
    // The same machine inline: the same topology and domains.
    let spec = "layout:sockets=2,cores_per_llc=32,threads_per_core=2,distance_other_socket=21,like=icx-2s-80c-ht";
    let inline = assert_success(&schedlab(["machines", spec, "--domains"]));
    let strip = |t: &str| t.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(&inline), strip(&dom));
    // A run on it.
    assert_success(&schedlab_in(
        dir.path(),
        ["run", "hackbench:groups=1,loops=5", "--machine", "icl.toml"],
    ));
}

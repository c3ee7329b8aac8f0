//! Bad inputs, one table across every reader: rt-app JSON
//! (names that become file names, limits), generator specs (overflow),
//! `--features`, `--cgroup`, timing flags, sysfs trees, `report` run
//! directories and `--out`. Each case must end with exit status 2, exactly
//! one stderr line `schedlab: error: ...` naming the place, nothing on
//! stdout, and nothing written: the working directory's whole tree (names
//! and contents) is unchanged. Cases named `why: ...` are regression
//! cases: the parenthesis names the failure each guards against.

use crate::common::{describe, schedlab_in};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A workload that is fine (finite, quiet).
const OK: &str = r#"{"tasks": {"t": {"run": 100, "loop": 3}}, "global": {"calibration": 100}}"#;

struct Case {
    kind: String,
    /// Files to create (a name ending in `/` is an empty directory).
    files: Vec<(String, Vec<u8>)>,
    /// The whole command line after `schedlab`.
    args: Vec<String>,
    /// Substrings the one line must contain.
    want: Vec<String>,
    /// Longest time the refusal may take.
    within: Duration,
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// `FILE:LINE:COL:` of the first `needle` in `text`.
fn loc(file: &str, text: &str, needle: &str) -> String {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} not in text"));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap().chars().count() + 1;
    format!("{file}:{line}:{col}:")
}

/// An rt-app file `bad.json` with `text`, refused at `needle`.
fn json(kind: &str, text: &str, needle: &str, more: &[&str]) -> Case {
    let mut want = vec![loc("bad.json", text, needle)];
    want.extend(s(more));
    Case {
        kind: kind.into(),
        files: vec![("bad.json".into(), text.as_bytes().to_vec())],
        args: s(&["run", "bad.json", "--out", "out"]),
        want,
        within: Duration::from_secs(20),
    }
}

/// `run WORKLOAD FLAGS --out out` with the good workload in ok.json.
fn run(kind: &str, workload: &str, flags: &[&str], want: &[&str]) -> Case {
    let mut args = s(&["run", workload]);
    args.extend(s(flags));
    args.extend(s(&["--out", "out"]));
    Case {
        kind: kind.into(),
        files: vec![("ok.json".into(), OK.as_bytes().to_vec())],
        args,
        want: s(want),
        within: Duration::from_secs(20),
    }
}

/// A flat sysfs tree of `n` CPUs (one package, one LLC), as files.
pub fn flat_sysfs(root: &str, n: usize) -> Vec<(String, Vec<u8>)> {
    let mut f = Vec::new();
    let cpu = format!("{root}/devices/system/cpu");
    f.push((
        format!("{cpu}/online"),
        format!("0-{}\n", n - 1).into_bytes(),
    ));
    for i in 0..n {
        let t = format!("{cpu}/cpu{i}/topology");
        f.push((format!("{t}/physical_package_id"), b"0\n".to_vec()));
        f.push((format!("{t}/core_cpus_list"), format!("{i}\n").into_bytes()));
        let c = format!("{cpu}/cpu{i}/cache/index0");
        f.push((format!("{c}/level"), b"3\n".to_vec()));
        f.push((format!("{c}/type"), b"Unified\n".to_vec()));
        f.push((
            format!("{c}/shared_cpu_list"),
            format!("0-{}\n", n - 1).into_bytes(),
        ));
    }
    f
}

/// A 2-CPU sysfs tree with `edits` (path under `cpu/` → content, or under
/// the tree's root when it starts with `/`; an empty content removes
/// nothing, it writes an empty file).
fn sysfs(kind: &str, edits: &[(&str, &[u8])], want: &[&str]) -> Case {
    let mut files: BTreeMap<String, Vec<u8>> = flat_sysfs("sys", 2).into_iter().collect();
    let idle = "sys/devices/system/cpu/cpu0/cpuidle/state0";
    files.insert(format!("{idle}/name"), b"C1\n".to_vec());
    files.insert(format!("{idle}/latency"), b"2\n".to_vec());
    files.insert(format!("{idle}/residency"), b"2\n".to_vec());
    for (p, c) in edits {
        let path = match p.strip_prefix('/') {
            Some(root) => format!("sys/{root}"),
            None => format!("sys/devices/system/cpu/{p}"),
        };
        files.insert(path, c.to_vec());
    }
    let mut files: Vec<(String, Vec<u8>)> = files.into_iter().collect();
    files.push(("ok.json".into(), OK.as_bytes().to_vec()));
    Case {
        kind: kind.into(),
        files,
        args: s(&["run", "ok.json", "--machine", "sysfs:sys", "--out", "out"]),
        want: s(want),
        within: Duration::from_secs(20),
    }
}

/// `run ok.json --machine m.toml FLAGS --out out` with the machine file
/// `m.toml` holding `text` (a name ending in `/` makes it a directory).
fn machine_file(kind: &str, text: &str, flags: &[&str], want: &[&str]) -> Case {
    let mut c = run(kind, "ok.json", &["--machine", "m.toml"], &["m.toml"]);
    c.args.truncate(c.args.len() - 2);
    c.args.extend(s(flags));
    c.args.extend(s(&["--out", "out"]));
    c.files.push(("m.toml".into(), text.as_bytes().to_vec()));
    c.want.extend(s(want));
    c
}

/// `c` changed by `f`.
fn edit(mut c: Case, f: impl FnOnce(&mut Case)) -> Case {
    f(&mut c);
    c
}

/// A machine file that is fine but for `more` (appended).
fn mfile(more: &str) -> String {
    format!("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 4\nlike = \"vm-2cpu\"\n{more}")
}

/// A good run directory's files (made once by a real run).
fn good_run_dir() -> &'static Vec<(String, Vec<u8>)> {
    static DIR: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("ok.json"), OK).unwrap();
        let o = schedlab_in(
            tmp.path(),
            ["run", "ok.json", "--out", "r", "-q", "--trace"],
        );
        assert!(o.status.success(), "{}", describe(&o));
        let mut v = Vec::new();
        for e in std::fs::read_dir(tmp.path().join("r")).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                let name = e.file_name().to_string_lossy().into_owned();
                v.push((format!("r/{name}"), std::fs::read(e.path()).unwrap()));
            }
        }
        v
    })
}

/// `report r` over the good run directory with `edits` (None removes).
fn report(kind: &str, edits: &[(&str, Option<&[u8]>)], want: &[&str]) -> Case {
    let mut files: BTreeMap<String, Vec<u8>> = good_run_dir().iter().cloned().collect();
    for (p, c) in edits {
        match c {
            Some(c) => files.insert(format!("r/{p}"), c.to_vec()),
            None => files.remove(&format!("r/{p}")),
        };
    }
    Case {
        kind: kind.into(),
        files: files.into_iter().collect(),
        args: s(&["report", "r"]),
        want: s(want),
        within: Duration::from_secs(20),
    }
}

/// One task named `name` (JSON-escaped by the caller).
fn named(name: &str) -> String {
    format!("{{\n  \"tasks\": {{\n    \"{name}\": {{ \"run\": 100, \"loop\": 1 }}\n  }}\n}}\n")
}

fn cases() -> Vec<Case> {
    let long65k = "n".repeat(65_534);
    let long250 = "n".repeat(250);
    let mut v = vec![
        // --- rt-app JSON: names that become file names (why: panic, errors too late)
        json("why: task name of 65 534 characters (table.rs panic)", &named(&long65k), "\"nnn", &["task name", "65534 bytes"]),
        json("why: task name of 250 bytes", &named(&long250), "\"nnn", &["task name", "250 bytes"]),
        json("why: task name with NUL", &named("a\\u0000b"), "\"a\\u", &["NUL"]),
        json("why: task name with '/'", &named("a/b"), "\"a/b\"", &["'/'"]),
        json("task name '..'", &named(".."), "\"..\"", &["\"..\""]),
        json("task name '.'", &named("."), "\".\"", &["\".\""]),
        json(
            "why: log_basename ../x",
            "{\"tasks\": {\"t\": {\"run\": 100, \"loop\": 1}},\n \"global\": {\"log_basename\": \"../x\"}}",
            "\"../x\"",
            &["log_basename", "'/'"],
        ),
        json(
            "log_size: not a log mode",
            "{\"tasks\": {\"t\": {\"run\": 100, \"loop\": 1}},\n \"global\": {\"log_size\": \"File\"}}",
            "\"File\"",
            &["log_size", "not a log mode"],
        ),
        json(
            "log_size: negative",
            "{\"tasks\": {\"t\": {\"run\": 100, \"loop\": 1}},\n \"global\": {\"log_size\": -1}}",
            "-1",
            &["log_size", "out of range"],
        ),
        json(
            "log_size: a boolean",
            "{\"tasks\": {\"t\": {\"run\": 100, \"loop\": 1}},\n \"global\": {\"log_size\": true}}",
            "true",
            &["log_size", "expected an int (MiB) or a string"],
        ),
        json(
            "log_basename with '/'",
            "{\"tasks\": {\"t\": {\"run\": 100, \"loop\": 1}},\n \"global\": {\"log_basename\": \"a/b\"}}",
            "\"a/b\"",
            &["log_basename"],
        ),
        json(
            "log_basename '..'",
            "{\"tasks\": {\"t\": {\"run\": 100, \"loop\": 1}},\n \"global\": {\"log_basename\": \"..\"}}",
            "\"..\"",
            &["log_basename"],
        ),
        json(
            "log_basename with NUL",
            "{\"tasks\": {\"t\": {\"run\": 100, \"loop\": 1}},\n \"global\": {\"log_basename\": \"a\\u0000\"}}",
            "\"a\\u0000\"",
            &["log_basename", "NUL"],
        ),
        json(
            "log_basename and task name together too long",
            &format!(
                "{{\"tasks\": {{\n \"{}\": {{\"run\": 100, \"loop\": 1}}}},\n \"global\": {{\"log_basename\": \"{}\"}}}}",
                "t".repeat(120),
                "b".repeat(120)
            ),
            "\"ttt",
            &["log_basename", "together"],
        ),
        json(
            "why: global.duration over 365 days",
            "{\"tasks\": {\"t\": {\"run\": 100}},\n \"global\": {\"duration\": 31536001}}",
            "31536001",
            &["31536000"],
        ),
        {
            let mut c = json(
                "instances over --max-tasks",
                "{\"tasks\": {\"t\": {\"instance\": 11, \"run\": 100, \"loop\": 1}}}",
                "11",
                &["instance", "--max-tasks"],
            );
            c.args.extend(s(&["--max-tasks", "10"]));
            c
        },
        // --- generator specs (why: overflow)
        run("why: oltp workers=u64::MAX + 1 client", "oltp:workers=18446744073709551615,clients=1", &[], &["oltp:workers=18446744073709551615,clients=1", "at most"]),
        run("oltp clients=u64::MAX", "oltp:workers=1,clients=18446744073709551615", &[], &["oltp:", "at most"]),
        run("oltp workers past u64", "oltp:workers=99999999999999999999999", &[], &["workers", "integer"]),
        run("oltp cpu_us too long", "oltp:cpu_us=10000001", &[], &["cpu_us"]),
        run("oltp key twice", "oltp:workers=1,workers=2", &[], &["twice"]),
        run("oltp over --max-tasks", "oltp:workers=11,clients=0", &["--max-tasks", "10"], &["at most 10", "--max-tasks"]),
        run("schbench t=u64::MAX (t + 1 wrapped to 0 threads)", "schbench:m=2,t=18446744073709551615", &[], &["schbench:m=2,t=18446744073709551615", "2 x (18446744073709551615 + 1) threads", "at most"]),
        run("schbench m x (t + 1) past u64", "schbench:m=4294967296,t=4294967296", &[], &["schbench:", "threads is absurd"]),
        run("schbench over --max-tasks", "schbench:m=2,t=5", &["--max-tasks", "10"], &["12 threads", "at most 10", "--max-tasks"]),
        run("schbench M past u32", "schbench:M=0-18446744073709551615", &[], &["key 'M'"]),
        run("schbench r past a day", "schbench:r=18446744073709551615", &[], &["key 'r'"]),
        run("specjbb thread sum past u64", "specjbb:workers=18446744073709551615,injectors=1", &[], &["specjbb:", "threads is absurd"]),
        run("specjbb over --max-tasks", "specjbb:workers=5,injectors=4,stage2=0,gc_threads=1", &["--max-tasks", "10"], &["11 threads", "at most 10", "--max-tasks"]),
        run("hackbench too many tasks", "hackbench:groups=10000,fds=1000", &[], &["hackbench:", "at most"]),
        run("hackbench loops=0", "hackbench:loops=0", &[], &["loops"]),
        run("hackbench datasize too big", "hackbench:datasize=65537", &[], &["datasize"]),
        run("hackbench unknown key", "hackbench:foo=1", &[], &["unknown key 'foo'"]),
        run(
            "hackbench misspelt key: a suggestion, and the spec with no position",
            "hackbench:group=2",
            &[],
            &["schedlab: error: hackbench:group=2: unknown key 'group' (did you mean 'groups'?)"],
        ),
        run("hackbench instances=0", "hackbench:instances=0", &[], &["instances"]),
        run("hackbench too many instances x groups", "hackbench:instances=1000,groups=1000", &[], &["hackbench:", "at most"]),
        // --- --features
        run("--features NO_ alone", "ok.json", &["--features", "NO_"], &["--features", "NO_"]),
        run("--features empty value", "ok.json", &["--features", "PLACE_LAG="], &["--features", "PLACE_LAG"]),
        run("--features NO_ with a value", "ok.json", &["--features", "NO_PLACE_LAG=1"], &["--features", "NO_PLACE_LAG"]),
        // --- --cgroup
        run("--cgroup without settings", "ok.json", &["--cgroup", "/a"], &["--cgroup /a", "sets nothing"]),
        run("--cgroup relative path", "ok.json", &["--cgroup", "a:cpu.weight=100"], &["--cgroup", "start with '/'"]),
        run("--cgroup weight 0", "ok.json", &["--cgroup", "/a:cpu.weight=0"], &["--cgroup", "cpu.weight"]),
        run("--cgroup weight past u64", "ok.json", &["--cgroup", "/a:cpu.weight=18446744073709551616"], &["--cgroup", "too large"]),
        run("--cgroup '..'", "ok.json", &["--cgroup", "/a/../b:cpu.weight=100"], &["--cgroup", "'..'"]),
        run("--cgroup unknown file", "ok.json", &["--cgroup", "/a:cpu.bogus=1"], &["--cgroup", "cpu.bogus"]),
        run("--cgroup burst past the kernel's", "ok.json", &["--cgroup", "/a:cpu.max.burst=99999999999999999"], &["--cgroup", "burst"]),
        // --- timing flags (why: --duration allowed ~146 years)
        run("why: --duration over 365 days", "ok.json", &["--duration", "31536001"], &["--duration", "31536000 s (365 days)"]),
        run("--duration of 200 years", "ok.json", &["--duration", "6311520000s"], &["--duration", "365 days"]),
        run("--duration u64::MAX ns", "ok.json", &["--duration", "18446744073709551615ns"], &["--duration"]),
        run("--duration 1e6", "ok.json", &["--duration", "1e6"], &["--duration", "e6"]),
        run("--duration below 1 ns", "ok.json", &["--duration", "0.0000000001s"], &["--duration"]),
        run("--hz 0", "ok.json", &["--hz", "0"], &["--hz"]),
        // --- limit flags (each limit has a flag to raise it)
        run("--duration over the default day", "ok.json", &["--duration", "86401"], &["--duration", "86400 s (1 day) limit", "--max-duration"]),
        run("--duration over --max-duration", "ok.json", &["--duration", "11s", "--max-duration", "10s"], &["--duration", "10 s limit", "--max-duration"]),
        run("--max-duration past 365 days", "ok.json", &["--max-duration", "31536001s"], &["--max-duration", "365 days"]),
        run("--max-duration 0", "ok.json", &["--max-duration", "0"], &["--max-duration", "greater than zero"]),
        run("--max-duration not a duration", "ok.json", &["--max-duration", "1d"], &["--max-duration", "unit"]),
        run("machine over --max-cpus", "ok.json", &["--machine", "a7-octa", "--max-cpus", "4"], &["a7-octa has 8 CPUs", "--max-cpus"]),
        run("--max-cpus past 16384", "ok.json", &["--max-cpus", "16385"], &["--max-cpus", "16384"]),
        run("--max-output not a size", "ok.json", &["--max-output", "5Q"], &["--max-output", "'5Q'"]),
        run("--max-output past u64", "ok.json", &["--max-output", "99999999999T"], &["--max-output"]),
        run("logs over --max-output", "ok.json", &["--max-output", "100"], &["ok.json", "rt-app logs", "--max-output"]),
        json(
            "global.duration over the default day",
            "{\"tasks\": {\"t\": {\"run\": 100}},\n \"global\": {\"duration\": 86401}}",
            "86401",
            &["86400 s", "--max-duration"],
        ),
        // --- machine files (--machine FILE.toml, layout:...)
        run("machine file missing", "ok.json", &["--machine", "none.toml"], &["none.toml", "cannot read"]),
        machine_file("machine file TOML syntax", "name = \"m\"\nsockets = [\n", &[], &["m.toml:2:"]),
        machine_file("machine file unknown key", &mfile("socket = 2\n"), &[], &["key 'socket'", "unknown"]),
        machine_file("machine file unknown costs key", &mfile("[costs]\nwakeup = 1\n"), &[], &["key 'costs.wakeup'", "unknown"]),
        machine_file("machine file missing name", "description = \"d\"\nsockets = 1\n", &[], &["key 'name'", "missing"]),
        machine_file("machine file missing cores_per_llc", "name = \"m\"\ndescription = \"d\"\nsockets = 1\nlike = \"vm-2cpu\"\n", &[], &["key 'cores_per_llc'", "missing"]),
        machine_file("machine file zero sockets", &mfile("").replace("sockets = 1", "sockets = 0"), &[], &["key 'sockets'", "at least 1"]),
        machine_file("machine file negative cores", &mfile("").replace("cores_per_llc = 4", "cores_per_llc = -4"), &[], &["key 'cores_per_llc'", "-4"]),
        machine_file("machine file threads 0", &mfile("threads_per_core = 0\n"), &[], &["key 'threads_per_core'"]),
        machine_file("machine file count as a string", &mfile("llcs_per_node = \"2\"\n"), &[], &["key 'llcs_per_node'", "integer"]),
        machine_file("machine file unknown like", &mfile("").replace("vm-2cpu", "vm-3cpu"), &[], &["key 'like'", "vm-3cpu"]),
        machine_file("machine file without like, costs or idle states", "name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 4\n", &[], &["key 'like'", "missing"]),
        machine_file("machine file cluster does not divide the LLC", &mfile("cores_per_cluster = 3\n"), &[], &["key 'cores_per_cluster'", "divide"]),
        machine_file("machine file two sockets without a distance", &mfile("").replace("sockets = 1", "sockets = 2"), &[], &["key 'distance_other_socket'", "missing"]),
        machine_file("machine file distance table of the wrong size", &mfile("distances = [[10]]\n").replace("sockets = 1", "sockets = 2"), &[], &["key 'distances'", "2 rows"]),
        machine_file("machine file capacity 0", &mfile("capacity = 0\n"), &[], &["key 'capacity'"]),
        machine_file("machine file idle states out of order", &mfile("[[idle_state]]\nname = \"C6\"\nexit_latency_us = 100\ntarget_residency_us = 600\n[[idle_state]]\nname = \"C1\"\nexit_latency_us = 1\ntarget_residency_us = 2\n"), &[], &["key 'idle_state'", "shallow to deep"]),
        machine_file("machine file past 16384 CPUs", &mfile("threads_per_core = 8\n").replace("cores_per_llc = 4", "cores_per_llc = 4096"), &[], &["32768 CPUs", "16384"]),
        machine_file("machine file over --max-cpus", &mfile(""), &["--max-cpus", "2"], &["has 4 CPUs", "--max-cpus"]),
        edit(machine_file("machine file not UTF-8", "", &[], &["not UTF-8"]), |c| c.files.last_mut().unwrap().1 = b"name = \"\xff\"\n".to_vec()),
        edit(machine_file("machine file is a directory", "", &[], &["directory"]), |c| c.files.last_mut().unwrap().0 = "m.toml/".into()),
        run("layout: zero cores", "ok.json", &["--machine", "layout:sockets=1,cores_per_llc=0,like=vm-2cpu"], &["layout:sockets=1,cores_per_llc=0,like=vm-2cpu: key 'cores_per_llc'", "at least 1"]),
        run("layout: unknown key", "ok.json", &["--machine", "layout:sockets=1,cores=4"], &["key 'cores'", "unknown"]),
        run("layout: not KEY=VALUE", "ok.json", &["--machine", "layout:sockets"], &["'sockets' is not KEY=VALUE"]),
        run("layout: over --max-cpus", "ok.json", &["--machine", "layout:sockets=1,cores_per_llc=4,like=vm-2cpu", "--max-cpus", "2"], &["layout:sockets=1,cores_per_llc=4,like=vm-2cpu: has 4 CPUs", "--max-cpus"]),
        Case {
            kind: "machines on a bad machine file".into(),
            files: vec![("m.toml".into(), mfile("").replace("sockets = 1", "sockets = 2").into_bytes())],
            args: s(&["machines", "m.toml", "--domains"]),
            want: s(&["m.toml: key 'distance_other_socket'"]),
            within: Duration::from_secs(20),
        },
        // --- sysfs trees (why: sysfs trap, huge lists, non-UTF-8)
        sysfs("why: cpuidle latency 18446744073709551 us", &[("cpu0/cpuidle/state0/latency", b"18446744073709551\n")], &["sys/devices/system/cpu/cpu0/cpuidle/state0/latency", "18446744073709551"]),
        sysfs("cpuidle residency 18446744073709551 us", &[("cpu0/cpuidle/state0/residency", b"18446744073709551\n")], &["cpuidle/state0/residency", "18446744073709551"]),
        sysfs(
            "haltpoll guest_halt_poll_ns not a number",
            &[
                ("cpu0/cpuidle/state0/name", b"POLL\n"),
                ("cpu0/cpuidle/state0/latency", b"0\n"),
                ("cpu0/cpuidle/state0/residency", b"0\n"),
                ("cpu0/cpuidle/state1/name", b"haltpoll idle\n"),
                ("cpu0/cpuidle/state1/latency", b"1\n"),
                ("cpu0/cpuidle/state1/residency", b"1\n"),
                ("cpuidle/current_governor", b"haltpoll\n"),
                ("/module/haltpoll/parameters/guest_halt_poll_ns", b"lots\n"),
            ],
            &["sys/module/haltpoll/parameters/guest_halt_poll_ns", "'lots' is not a number"],
        ),
        sysfs("cpuidle latency not a number", &[("cpu0/cpuidle/state0/latency", b"abc\n")], &["cpuidle/state0/latency", "abc"]),
        sysfs("why: cpu/online 0-4294967295", &[("online", b"0-4294967295\n")], &["cpu/online", "too large"]),
        sysfs("cpu/online past u32", &[("online", b"0-99999999999\n")], &["cpu/online"]),
        sysfs("cpu/online backwards", &[("online", b"1-0\n")], &["cpu/online", "backwards"]),
        sysfs("cpu/online more CPUs than supported", &[("online", b"0-16384\n")], &["cpu/online", "16385 CPUs"]),
        sysfs("why: non-UTF-8 physical_package_id", &[("cpu1/topology/physical_package_id", b"\xff\xfe\n")], &["cpu1/topology/physical_package_id", "not UTF-8"]),
        sysfs("non-UTF-8 cpu/online", &[("online", b"0-\xff\n")], &["cpu/online", "not UTF-8"]),
        sysfs("non-UTF-8 idle state name", &[("cpu0/cpuidle/state0/name", b"C\xff\n")], &["state0/name", "not UTF-8"]),
        // --- report run directories
        report("report: no summary.json", &[("summary.json", None)], &["r/summary.json"]),
        report("report: summary.json not JSON", &[("summary.json", Some(b"{"))], &["r/summary.json"]),
        report("report: summary.json not UTF-8", &[("summary.json", Some(b"\xff"))], &["r/summary.json", "UTF-8"]),
        report("report: schedstat garbage", &[("schedstat", Some(b"version 99\nbogus\n"))], &["r/schedstat"]),
        report("report: trace.txt garbage", &[("trace.txt", Some(b"this is not a trace\n"))], &["r/trace.txt"]),
        // --- --out (why: --out at a file, checked late, no path)
        Case {
            kind: "why: --out pointing at an existing file".into(),
            files: vec![("ok.json".into(), OK.as_bytes().to_vec()), ("f".into(), b"x".to_vec())],
            args: s(&["run", "ok.json", "--out", "f"]),
            want: s(&["--out", "f: exists and is not a directory"]),
            within: Duration::from_secs(5),
        },
        Case {
            kind: "--out whose parent is missing".into(),
            files: vec![("ok.json".into(), OK.as_bytes().to_vec())],
            args: s(&["run", "ok.json", "--out", "no/such/parent/d"]),
            want: s(&["--out", "no/such/parent"]),
            within: Duration::from_secs(5),
        },
        Case {
            kind: "--out whose parent is a file".into(),
            files: vec![("ok.json".into(), OK.as_bytes().to_vec())],
            args: s(&["run", "ok.json", "--out", "ok.json/d"]),
            want: s(&["--out", "ok.json"]),
            within: Duration::from_secs(5),
        },
        Case {
            kind: "why: --out into a non-empty directory without --force".into(),
            files: vec![("ok.json".into(), OK.as_bytes().to_vec()), ("d/summary.json".into(), b"{}".to_vec())],
            args: s(&["run", "ok.json", "--out", "d"]),
            want: s(&["--out", "d: exists and is not empty", "--force"]),
            within: Duration::from_secs(5),
        },
        Case {
            kind: "--force over a directory that is not a run".into(),
            files: vec![("ok.json".into(), OK.as_bytes().to_vec()), ("d/notes.txt".into(), b"mine".to_vec())],
            args: s(&["run", "ok.json", "--out", "d", "--force"]),
            want: s(&["--out", "d: exists and holds no summary.json"]),
            within: Duration::from_secs(5),
        },
        Case {
            kind: "--out '.'".into(),
            files: vec![("ok.json".into(), OK.as_bytes().to_vec())],
            args: s(&["run", "ok.json", "--out", "."]),
            want: s(&["--out", "needs a name"]),
            within: Duration::from_secs(5),
        },
        Case {
            kind: "compare --json at a missing directory".into(),
            files: vec![("ok.json".into(), OK.as_bytes().to_vec())],
            args: s(&["compare", "ok.json", "--runs", "1", "--new", "NO_PLACE_LAG", "--json", "no/such/x.json"]),
            want: s(&["--json", "no/such"]),
            within: Duration::from_secs(5),
        },
        // --- inputs once silently accepted
        run("--noise machine on a preset without noise", "ok.json", &["--noise", "machine", "--machine", "a7-octa"], &["--noise machine", "a7-octa has no measured noise"]),
        run("--max-duration kept to the ns", "ok.json", &["--max-duration", "1500ms", "--duration", "2s"], &["--duration", "1.5 s limit", "--max-duration"]),
        run("--duration just over a whole-second --max-duration", "ok.json", &["--max-duration", "2s", "--duration", "2001ms"], &["--duration", "2 s limit"]),
        Case {
            kind: "compare seeds that wrap".into(),
            files: vec![("ok.json".into(), OK.as_bytes().to_vec())],
            args: s(&["compare", "ok.json", "--seed", "18446744073709551614", "--runs", "5", "--new", "NO_PLACE_LAG"]),
            want: s(&["--seed", "--runs 5", "largest seed"]),
            within: Duration::from_secs(5),
        },
    ];
    // 5 000 configured task groups (100 000 once took 49 s and 818 MB).
    let mut groups = String::from("{\"tasks\": {\"t\": {\"run\": 100, \"loop\": 3}},\n \"global\": {\"calibration\": 100},\n \"taskgroups\": {");
    for i in 0..5000 {
        if i > 0 {
            groups.push(',');
        }
        groups.push_str(&format!("\"/g{i}\": {{\"cpu.weight\": 100}}"));
    }
    groups.push_str("}}\n");
    v.push(json(
        "5000 configured taskgroups",
        &groups,
        "{\"/g0\"",
        &["key \"taskgroups\"", "5000 configured task groups", "4096"],
    ));
    // A replayed trace with more tasks than --max-tasks.
    let trace = "# tracer: nop\n#\n\
        <idle>-0 [000] d..2. 1000.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120\n\
        a-10 [000] d..2. 1000.001000: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=b next_pid=11 next_prio=120\n\
        b-11 [000] d..2. 1000.002000: sched_switch: prev_comm=b prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";
    v.push(Case {
        kind: "replay over --max-tasks".into(),
        files: vec![("t.txt".into(), trace.as_bytes().to_vec())],
        args: s(&["replay", "t.txt", "--max-tasks", "1", "--out", "out"]),
        want: s(&["t.txt", "the trace has 2 tasks, more than 1", "--max-tasks"]),
        within: Duration::from_secs(5),
    });
    // A replayed trace with 110 000 pids, over the default 100 000.
    let mut pids = String::from("# tracer: nop\n");
    for pid in 1..=110_000u32 {
        let ctx = if pid == 1 {
            "<idle>-0".to_string()
        } else {
            format!("w-{}", pid - 1)
        };
        let prev = pid - 1;
        let prev_comm = if pid == 1 { "swapper/0" } else { "w" };
        pids.push_str(&format!(
            "{ctx} [000] d..2. {}.{:06}: sched_switch: prev_comm={prev_comm} prev_pid={prev} prev_prio=120 prev_state=S ==> next_comm=w next_pid={pid} next_prio=120\n",
            10 + pid / 500_000,
            (pid % 500_000) * 2
        ));
    }
    v.push(Case {
        kind: "replay of 110 000 pids".into(),
        files: vec![("t.txt".into(), pids.into_bytes())],
        args: s(&["replay", "t.txt", "--out", "out"]),
        want: s(&[
            "t.txt",
            "the trace has 110000 tasks, more than 100000",
            "--max-tasks",
        ]),
        within: Duration::from_secs(20),
    });
    // A runtime update longer than the trace (once an invariant broken
    // at u64::MAX, a run for ever at i64::MAX).
    let runtime = "# tracer: nop\n\
        <idle>-0 [000] d..2. 10.000001: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=5 next_prio=120\n\
        a-5 [000] d..2. 10.000500: sched_stat_runtime: comm=a pid=5 runtime=18446744073709551615 [ns] vruntime=100 [ns]\n\
        a-5 [000] d..2. 10.001000: sched_switch: prev_comm=a prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";
    v.push(Case {
        kind: "replay of runtime=u64::MAX".into(),
        files: vec![("t.txt".into(), runtime.as_bytes().to_vec())],
        args: s(&["replay", "t.txt", "--out", "out"]),
        want: s(&[
            "t.txt:3: sched_stat_runtime: runtime=18446744073709551615",
            "not a real runtime",
        ]),
        within: Duration::from_secs(5),
    });
    // A 2-day run without a duration (ran for ever, no estimate).
    let mut c = json(
        "2-day run without a duration",
        "{\"tasks\": {\"t\": {\"loop\": 1, \"run\": 172800000000}},\n \"global\": {\"calibration\": 100}}\n",
        "{",
        &["without a duration the run lasts at least 172800 s (2 days)", "pass --duration", "--max-duration"],
    );
    c.want[0] = "bad.json: ".into();
    c.within = Duration::from_secs(5);
    v.push(c);
    // validate --seeds past 1000 (1000 wrote 1.5 GB; u64::MAX was taken).
    for n in ["1001", "18446744073709551615"] {
        v.push(Case {
            kind: format!("validate --seeds {n}"),
            files: vec![("rec/".into(), vec![])],
            args: s(&["validate", "rec", "--seeds", n]),
            want: s(&["--seeds", "more than 1000"]),
            within: Duration::from_secs(5),
        });
    }
    // why: 1e6 distinct tasks took 3.7 GB and 7.6 s before the refusal.
    let mut big = String::from("{\"tasks\": {\n");
    for i in 0..1_000_000 {
        big.push_str(&format!("\"t{i}\": {{\"run\": 1, \"loop\": 1}},\n"));
    }
    big.push_str("\"last\": {\"run\": 1, \"loop\": 1}}}\n");
    let mut c = json(
        "why: 1e6 distinct tasks",
        &big,
        "\"tasks\"",
        &["1000001 tasks", "--max-tasks"],
    );
    c.within = Duration::from_secs(10);
    v.push(c);
    v
}

/// Every file and directory under `dir` with its contents.
fn tree(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, rel: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        for e in std::fs::read_dir(root.join(rel)).unwrap() {
            let e = e.unwrap();
            let r = rel.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                out.insert(r.display().to_string() + "/", None);
                walk(root, &r, out);
            } else {
                out.insert(
                    r.display().to_string(),
                    Some(std::fs::read(e.path()).unwrap()),
                );
            }
        }
    }
    walk(dir, Path::new(""), &mut out);
    out
}

fn check(case: &Case) -> Result<(), String> {
    let tmp = tempfile::tempdir().unwrap();
    for (name, data) in &case.files {
        let p = tmp.path().join(name);
        if name.ends_with('/') {
            std::fs::create_dir_all(&p).unwrap();
        } else {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, data).unwrap();
        }
    }
    let before = tree(tmp.path());
    let t0 = Instant::now();
    let out = schedlab_in(tmp.path(), &case.args);
    let took = t0.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| a.chars().take(80).collect())
        .collect();
    let fail = |why: String| {
        let mut d = describe(&out);
        d.truncate(2000);
        Err(format!("[{}] {why}\nargs: {args:?}\n{d}", case.kind))
    };
    if out.status.code() != Some(2) {
        return fail(format!("exit status {:?}, expected 2", out.status.code()));
    }
    let lines: Vec<&str> = stderr.lines().collect();
    if lines.len() != 1 {
        return fail(format!(
            "{} lines on stderr, expected exactly 1",
            lines.len()
        ));
    }
    if !lines[0].starts_with("schedlab: error: ") {
        return fail("stderr does not start with 'schedlab: error: '".into());
    }
    for w in &case.want {
        if !lines[0].contains(w.as_str()) {
            return fail(format!("message does not mention {w:?}"));
        }
    }
    if !out.stdout.is_empty() {
        return fail("something was printed on stdout".into());
    }
    if took > case.within {
        return fail(format!("took {took:?}, more than {:?}", case.within));
    }
    let after = tree(tmp.path());
    if after != before {
        let added: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
        let gone: Vec<&String> = before.keys().filter(|k| !after.contains_key(*k)).collect();
        return fail(format!(
            "the tree changed: added {added:?}, removed {gone:?} (or contents)"
        ));
    }
    Ok(())
}

#[test]
fn each_bad_input_of_the_table_is_one_line_exit_2_and_nothing_written() {
    let cases = cases();
    let kinds: std::collections::BTreeSet<&str> = cases.iter().map(|c| c.kind.as_str()).collect();
    assert_eq!(kinds.len(), cases.len(), "case names must be distinct");
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} bad-input cases misbehave:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

//! The project's own rt-app corpus (`examples/rt-app/*.json`) covers every
//! key, event and enumerated value the rt-app loader accepts.
//!
//! Mechanism (so that a new key cannot land without an example):
//!
//! 1. The accepted set is read from the loader's source by a text scan:
//!    the string literals of every match arm in `src/rtapp/raw.rs` (keys
//!    of the top level, `global`, tasks, phases, timers, `wait`/`sync`,
//!    `memrun`, and the values of `mode`, `type`, `pattern`, `ftrace`),
//!    the event table of `event_kind` in `src/rtapp/mod.rs`, the cpu
//!    controller files of `cgroup::FILES` in `src/cgroup.rs` and the
//!    `SCHED_*` policy names `raw.rs` names. That set must equal the
//!    literals of [`ACCEPTED`] plus [`REFUSED`]: a key added to a match arm
//!    fails here until it is listed (and a listed key the loader dropped
//!    fails too).
//! 2. Every file of the corpus is parsed and walked with its context (top
//!    level, global, task, phase, event, timer, ...), and every
//!    `(context, key)` of [`ACCEPTED`] and [`FORMS`] must be used by at
//!    least one file: a listed key without an example fails here.
//! 3. Every corpus file loads, starts with a comment header, and only
//!    `legacy.json` (which shows the legacy spellings) warns.
//!
//! The CLI's `tests/it/corpus.rs` runs every corpus file under `--check`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use schedlab_workload::json::{self, Kind, Member, Value};
use schedlab_workload::load_rtapp;

/// Scheduling keys read at task level and at phase level alike.
const SCHED: &[&str] = &[
    "loop",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "cpus",
    "taskgroup",
    "util_min",
    "util_max",
];

/// Every accepted key or value, by the context the corpus must use it in.
/// `task+sched` and `phase+sched` stand for [`SCHED`] at that level.
const ACCEPTED: &[(&str, &[&str])] = &[
    ("top", &["tasks", "global", "resources", "taskgroups"]),
    (
        "global",
        &[
            "duration",
            "default_policy",
            "calibration",
            "log_basename",
            "logdir",
            "io_device",
            "pi_enabled",
            "gnuplot",
            "lock_pages",
            "mem_buffer_size",
            "log_size",
            "ftrace",
            "cumulative_slack",
            "frag",
            "sysctl",
        ],
    ),
    (
        "ftrace",
        &["main", "task", "loop", "event", "run", "stats", "none"],
    ),
    // Task-only keys (`runtime`, `period`, `deadline`: the legacy
    // scheduling keys of a task).
    (
        "task",
        &[
            "instance", "delay", "phases", "runtime", "period", "deadline",
        ],
    ),
    ("task+sched", &[]),
    ("phase+sched", &[]),
    (
        "event",
        &[
            "run", "runtime", "sleep", "timer", "yield", "lock", "unlock", "signal", "broad",
            "wait", "sync", "barrier", "suspend", "resume", "sem_post", "sem_wait", "mem", "iorun",
            "memrun", "fork",
        ],
    ),
    ("timer", &["ref", "period", "mode"]),
    ("timer.mode", &["relative", "absolute"]),
    ("log_size", &["file", "auto", "disable"]),
    ("wait", &["ref", "mutex"]),
    (
        "memrun",
        &["type", "size", "count", "stride", "pattern", "ref"],
    ),
    ("memrun.type", &["read", "write", "chase"]),
    ("memrun.pattern", &["random", "sequential"]),
    (
        "policy",
        &[
            "SCHED_OTHER",
            "SCHED_BATCH",
            "SCHED_IDLE",
            "SCHED_FIFO",
            "SCHED_RR",
            "SCHED_DEADLINE",
        ],
    ),
    (
        "cgroup",
        &[
            "cpu.max",
            "cpu.max.burst",
            "cpu.weight",
            "cpu.weight.nice",
            "cpu.idle",
            "cpu.shares",
            "cpu.cfs_quota_us",
            "cpu.cfs_period_us",
            "cpu.cfs_burst_us",
        ],
    ),
];

/// Forms the corpus must show that are not string literals of a match arm.
const FORMS: &[(&str, &str)] = &[
    ("calibration", "ns"),
    ("calibration", "CPU<n>"),
    ("ftrace", "bool"),
    ("log_size", "MiB"),
    ("timer.ref", "unique"),
    ("timer.ref", "shared"),
    ("policy", "SCHED_NORMAL"),
    ("event", "bare suspend"),
    ("event", "suffixed key"),
];

/// Literals of match arms that refuse a key (with a one-line error), and
/// the empty `ftrace` category.
const REFUSED: &[&str] = &["nodes_membind", "exec", "lock_order", ""];

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn corpus_dir() -> PathBuf {
    crate_dir().join("../../examples/rt-app")
}

fn corpus_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    assert!(v.len() >= 5, "corpus too small: {v:?}");
    v
}

fn source(rel: &str) -> String {
    let p = crate_dir().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The string literals of `text` (no escaped quotes inside, as in the
/// patterns scanned here).
fn literals(text: &str) -> impl Iterator<Item = &str> {
    text.split('"').skip(1).step_by(2)
}

/// The string literals of every match-arm pattern of a Rust source: lines
/// that start with a literal and have `=>`, the guard (`if ...`) cut off.
fn match_arm_literals(src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in src.lines().map(str::trim) {
        if !line.starts_with('"') {
            continue;
        }
        let Some((pat, _)) = line.split_once("=>") else {
            continue;
        };
        let pat = pat.split(" if ").next().unwrap();
        out.extend(literals(pat).map(String::from));
    }
    out
}

/// The body of `fn NAME` (to the first line that is `}` alone).
fn fn_body<'a>(src: &'a str, name: &str) -> &'a str {
    let start = src
        .find(&format!("fn {name}("))
        .unwrap_or_else(|| panic!("fn {name} not found"));
    let len = src[start..].find("\n}\n").expect("end of fn");
    &src[start..start + len]
}

/// The event names of `event_kind`, in its resolution order (an event key
/// is the first name it starts with).
fn event_names() -> Vec<String> {
    let src = source("src/rtapp/mod.rs");
    literals(fn_body(&src, "event_kind"))
        .map(String::from)
        .collect()
}

/// What the loader's source accepts, by the text scan described above.
fn scanned_from_source() -> BTreeSet<String> {
    let raw = source("src/rtapp/raw.rs");
    let mut set = match_arm_literals(&raw);
    set.extend(event_names());
    let cg = source("src/cgroup.rs");
    let at = cg.find("pub const FILES").expect("cgroup::FILES");
    let end = at + cg[at..].find("];").unwrap();
    set.extend(literals(&cg[at..end]).map(String::from));
    for (i, _) in raw.match_indices("SCHED_") {
        let name: String = raw[i..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || *c == '_')
            .collect();
        if name.len() > "SCHED_".len() {
            set.insert(name);
        }
    }
    set
}

fn listed() -> BTreeSet<String> {
    let mut set: BTreeSet<String> = ACCEPTED
        .iter()
        .flat_map(|(_, keys)| keys.iter())
        .chain(SCHED)
        .chain(REFUSED)
        .map(|s| s.to_string())
        .collect();
    set.extend(
        FORMS
            .iter()
            .filter(|(ctx, _)| *ctx == "policy")
            .map(|(_, k)| k.to_string()),
    );
    set
}

#[test]
fn accepted_list_matches_the_loader_source() {
    let scanned = scanned_from_source();
    let mut listed = listed();
    // SCHED_NORMAL is an alias parsed by schedlab-core, not named in raw.rs.
    listed.remove("SCHED_NORMAL");
    let new: Vec<_> = scanned.difference(&listed).collect();
    let gone: Vec<_> = listed.difference(&scanned).collect();
    assert!(
        new.is_empty(),
        "the loader accepts {new:?}, which this test does not list: add each to ACCEPTED (or REFUSED) in {} and use it in a file of examples/rt-app/",
        file!()
    );
    assert!(
        gone.is_empty(),
        "ACCEPTED/REFUSED list {gone:?}, which the loader's source no longer has"
    );
}

/// `(context, key)` pairs used by one corpus file.
#[derive(Default)]
struct Used(BTreeSet<(String, String)>);

impl Used {
    fn add(&mut self, ctx: &str, key: &str) {
        self.0.insert((ctx.to_string(), key.to_string()));
    }

    fn top(&mut self, root: &Value) {
        let Kind::Object(members) = &root.kind else {
            panic!("not an object")
        };
        for m in members {
            self.add("top", &m.key);
            match m.key.as_str() {
                "global" => self.global(obj(&m.value)),
                "tasks" => obj(&m.value).iter().for_each(|t| self.task(t)),
                "taskgroups" => {
                    for g in obj(&m.value) {
                        obj(&g.value)
                            .iter()
                            .for_each(|f| self.add("cgroup", &f.key));
                    }
                }
                _ => {}
            }
        }
    }

    fn global(&mut self, members: &[Member]) {
        for m in members {
            self.add("global", &m.key);
            match (m.key.as_str(), &m.value.kind) {
                ("ftrace", Kind::Str(s)) => s
                    .split(',')
                    .for_each(|c| self.add("ftrace", &c.trim().to_ascii_lowercase())),
                ("ftrace", Kind::Bool(_)) => self.add("ftrace", "bool"),
                ("calibration", Kind::Int(_)) => self.add("calibration", "ns"),
                ("calibration", Kind::Str(_)) => self.add("calibration", "CPU<n>"),
                ("default_policy", Kind::Str(s)) => self.add("policy", s),
                ("log_size", Kind::Str(s)) => self.add("log_size", s),
                ("log_size", Kind::Int(_)) => self.add("log_size", "MiB"),
                _ => {}
            }
        }
    }

    fn task(&mut self, task: &Member) {
        let members = obj(&task.value);
        let has_phases = members.iter().any(|m| m.key == "phases");
        for m in members {
            if m.key == "phases" {
                self.add("task", "phases");
                obj(&m.value).iter().for_each(|p| self.phase(p));
            } else if has_phases && m.key == "runtime" {
                self.add("task", "runtime");
            } else if !self.event(m) {
                self.add("task", &m.key);
                self.add("task+sched", &m.key);
                self.policy(m);
            }
        }
    }

    fn phase(&mut self, phase: &Member) {
        for m in obj(&phase.value) {
            if !self.event(m) {
                self.add("phase", &m.key);
                self.add("phase+sched", &m.key);
                self.policy(m);
            }
        }
    }

    fn policy(&mut self, m: &Member) {
        if let ("policy", Kind::Str(s)) = (m.key.as_str(), &m.value.kind) {
            self.add("policy", s);
        }
    }

    /// Records `m` if it is an event; false otherwise.
    fn event(&mut self, m: &Member) -> bool {
        let Some(name) = event_names()
            .into_iter()
            .find(|e| m.key.starts_with(e.as_str()))
        else {
            return false;
        };
        self.add("event", &name);
        if m.key != name {
            self.add("event", "suffixed key");
        }
        if name == "suspend" && m.value.kind == Kind::Bare {
            self.add("event", "bare suspend");
        }
        let sub = match name.as_str() {
            "timer" => "timer",
            "wait" | "sync" => "wait",
            "memrun" => "memrun",
            _ => return true,
        };
        for x in obj(&m.value) {
            self.add(sub, &x.key);
            match (sub, x.key.as_str(), &x.value.kind) {
                ("timer", "mode", Kind::Str(s)) => self.add("timer.mode", s),
                ("timer", "ref", Kind::Str(s)) => {
                    let kind = if s.starts_with("unique") {
                        "unique"
                    } else {
                        "shared"
                    };
                    self.add("timer.ref", kind);
                }
                ("memrun", "type", Kind::Str(s)) => self.add("memrun.type", s),
                ("memrun", "pattern", Kind::Str(s)) => self.add("memrun.pattern", s),
                _ => {}
            }
        }
        true
    }
}

fn obj(v: &Value) -> &[Member] {
    match &v.kind {
        Kind::Object(m) => m,
        k => panic!("expected an object, found {}", k.type_name()),
    }
}

fn parse(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let opts = json::Options {
        allow_bare_keys: true,
    };
    json::parse_with(&text, opts).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
}

#[test]
fn corpus_uses_every_accepted_key() {
    let mut used = Used::default();
    for f in corpus_files() {
        used.top(&parse(&f));
    }
    let mut missing = Vec::new();
    for (ctx, keys) in ACCEPTED {
        let keys: &[&str] = if ctx.ends_with("+sched") { SCHED } else { keys };
        for k in keys {
            if !used.0.contains(&(ctx.to_string(), k.to_string())) {
                missing.push(format!("{ctx}: {k}"));
            }
        }
    }
    for (ctx, k) in FORMS {
        if !used.0.contains(&(ctx.to_string(), k.to_string())) {
            missing.push(format!("{ctx}: {k}"));
        }
    }
    assert!(
        missing.is_empty(),
        "no file of examples/rt-app/ uses:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn corpus_files_load_with_a_header_and_no_surprise_warnings() {
    for f in corpus_files() {
        let name = f.file_name().unwrap().to_str().unwrap();
        let text = std::fs::read_to_string(&f).unwrap();
        let head: String = text.lines().take(3).collect::<Vec<_>>().join("\n");
        assert!(
            head.contains("/*") && head.contains(&format!("{name}:")),
            "{name}: must start with a comment header naming the file and what it shows"
        );
        let l = load_rtapp(name, &text, 2).unwrap_or_else(|e| panic!("{e}"));
        if name == "legacy.json" {
            for w in &l.warnings {
                assert!(
                    ["\"frag\"", "\"suspend\"", "\"runtime\""]
                        .iter()
                        .any(|k| w.contains(&format!("key {k}"))),
                    "{w}"
                );
            }
        } else {
            assert!(l.warnings.is_empty(), "{name}: {:?}", l.warnings);
        }
        assert!(
            l.workload.duration_ns.is_some(),
            "{name}: give it a duration"
        );
    }
}

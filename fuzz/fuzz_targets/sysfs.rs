//! sysfs trees: a structured input (arbitrary) builds a tree of up to 16
//! CPUs and 4 nodes in a temporary directory, each file either the value a
//! sane machine has, a drawn number or CPU list, or raw bytes (non-UTF-8
//! included); the machine is read from the directory through the real file
//! system, and a machine that reads must build its sched domains and
//! describe itself.
#![no_main]
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use schedlab_core::machine::domains::{describe_domains, SchedDomains};
use schedlab_core::machine::sysfs::{from_sysfs, DirReader};
use std::path::{Path, PathBuf};

/// One file's content.
#[derive(Arbitrary, Debug)]
enum Val {
    /// The value a sane machine has here.
    Sane,
    /// Missing.
    Absent,
    /// A number.
    Num(u64),
    /// A CPU list of ranges.
    List(Vec<(u16, u16)>),
    /// Anything.
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
struct Cpu {
    online: Val,
    package: Val,
    core_list: Val,
    cluster_list: Val,
    cache_level: Val,
    cache_type: Val,
    cache_list: Val,
    capacity: Val,
    idle: Vec<(Val, Val, Val, Val)>,
}

#[derive(Arbitrary, Debug)]
struct Tree {
    nr_cpus: u8,
    online: Val,
    cpus: Vec<Cpu>,
    nr_nodes: u8,
    node_online: Val,
    nodes: Vec<(Val, Val)>,
}

fn list(v: &[(u16, u16)]) -> String {
    let parts: Vec<String> = v
        .iter()
        .map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
        .collect();
    parts.join(",")
}

fn put(root: &Path, rel: &str, v: &Val, sane: impl FnOnce() -> String) {
    let bytes: Vec<u8> = match v {
        Val::Sane => sane().into_bytes(),
        Val::Absent => return,
        Val::Num(n) => format!("{n}\n").into_bytes(),
        Val::List(l) => format!("{}\n", list(l)).into_bytes(),
        Val::Raw(b) => b.clone(),
    };
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fuzz_target!(|t: Tree| {
    let n = 1 + (t.nr_cpus % 16) as usize;
    let nodes = (t.nr_nodes % 4) as usize;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let cpu = "devices/system/cpu";
    put(root, &format!("{cpu}/online"), &t.online, || format!("0-{}\n", n - 1));
    for (i, c) in t.cpus.iter().take(n).enumerate() {
        let sib = i ^ 1;
        let core = if sib < n { format!("{},{}\n", i.min(sib), i.max(sib)) } else { format!("{i}\n") };
        let d = format!("{cpu}/cpu{i}");
        put(root, &format!("{d}/online"), &c.online, || "1\n".into());
        put(root, &format!("{d}/topology/physical_package_id"), &c.package, || "0\n".into());
        put(root, &format!("{d}/topology/core_cpus_list"), &c.core_list, || core.clone());
        put(root, &format!("{d}/topology/cluster_cpus_list"), &c.cluster_list, || core.clone());
        put(root, &format!("{d}/cache/index0/level"), &c.cache_level, || "3\n".into());
        put(root, &format!("{d}/cache/index0/type"), &c.cache_type, || "Unified\n".into());
        put(root, &format!("{d}/cache/index0/shared_cpu_list"), &c.cache_list, || {
            format!("0-{}\n", n - 1)
        });
        put(root, &format!("{d}/cpu_capacity"), &c.capacity, || "1024\n".into());
        for (k, (name, lat, res, dis)) in c.idle.iter().take(4).enumerate() {
            let s = format!("{d}/cpuidle/state{k}");
            put(root, &format!("{s}/name"), name, || format!("C{k}\n"));
            put(root, &format!("{s}/latency"), lat, || format!("{}\n", k * 10));
            put(root, &format!("{s}/residency"), res, || format!("{}\n", k * 30));
            put(root, &format!("{s}/disable"), dis, || "0\n".into());
        }
    }
    if nodes > 0 {
        put(root, "devices/system/node/online", &t.node_online, || format!("0-{}\n", nodes - 1));
        for (id, (cpus, dist)) in t.nodes.iter().take(nodes).enumerate() {
            let per = n.div_ceil(nodes);
            let lo = (id * per).min(n - 1);
            let hi = ((id + 1) * per).min(n) - 1;
            let d = format!("devices/system/node/node{id}");
            put(root, &format!("{d}/cpulist"), cpus, || format!("{lo}-{}\n", hi.max(lo)));
            put(root, &format!("{d}/distance"), dist, || {
                let row: Vec<String> =
                    (0..nodes).map(|j| if j == id { "10".into() } else { "20".into() }).collect();
                format!("{}\n", row.join(" "))
            });
        }
    }
    let root_s = root.to_str().expect("utf-8 temp path");
    let Ok(m) = from_sysfs(root_s, &DirReader(root.to_path_buf())) else {
        return;
    };
    let _ = m.describe();
    let d = SchedDomains::build(&m, 250);
    let _ = describe_domains(&m, &d, None);
});

//! Built-in workload generators, named by a spec string
//! `NAME:key=value,key=value` on the command line (in place of a file).
//!
//! Every generator takes `cgroup=PATH`: the task group its threads run in
//! (default the root `/`; paths as [`crate::cgroup::validate_path`]). The
//! group gets the default settings; `--cgroup PATH:FILE=VALUE` on the
//! command line configures it. The workload lists the groups it uses.
//!
//! * `oltp:workers=W,clients=C,scale=S,cpu_us=X,client_us=U,io_us=Y,think_us=Z,cgroup=PATH` —
//!   pgbench's TPC-B-like transaction as request and reply (module
//!   [`crate::oltp`], which gives the shape and every constant's source):
//!   W connections, each a backend process; C client threads (pgbench
//!   `-j`) share the connections out; each transaction is seven statements,
//!   each a round trip on an AF_UNIX socket (sync wakeups both ways);
//!   backends take teller and branch row locks (S branches, 10 S tellers)
//!   from their `UPDATE` to the end of the commit, whose WAL flush waits
//!   `Y` µs. X is the backend's CPU per transaction, U the client's per
//!   connection. Throughput is the backends' completed transactions per
//!   second (each transaction is one iteration, one rt-app log row).
//!
//!   Defaults: one connection per CPU of the machine, one client thread
//!   per connection (`pgbench -c W -j W`); S = W (pgbench's rule: scale at least the number of
//!   clients); X = 420 µs and U = 70 µs (measured, pgbench 15 on the build
//!   host); Y = 120 µs (enterprise NVMe flush latency); `think_us` is not
//!   used. The same for every machine and every experiment.
//!
//!   `clients=0` keeps the earlier open loop without clients: each backend
//!   repeats `X/2` µs of CPU, `Y` µs of I/O, `X/2` µs of CPU and a pause of
//!   `Z` µs (default 60), with no locks and no wakeups between threads.
//!
//! * `schbench:m=M,t=T,r=R,s=S,n=N,F=KB,L,M=auto,R=RPS,w=W,cgroup=PATH` —
//!   Chris Mason's schbench: message threads waking worker threads by
//!   futex, each request a sleep and matrix-multiply CPU work, the
//!   wakeup and request latencies measured by the threads themselves
//!   (module [`crate::schbench`]).
//!
//! * `specjbb:injectors=I,workers=W,stage2=S,tx_us=X,stage2_us=Y,stage2_every=K,poll_us=P,rate=R,gc_threads=G,gc_us=U,gc_every_us=E,warmup_us=T,cgroup=PATH` —
//!   SPECjbb2015's backend as the scheduler sees it: injector threads
//!   hand requests to a shared queue (a semaphore: one idle worker woken,
//!   a futex wake, not WF_SYNC), a Tier-1 worker pool serves them, every
//!   K-th with a nested hand-off to a stage-2 pool, and periodic
//!   stop-the-world pauses park every Java thread at a safepoint while
//!   `ParallelGCThreads` GC threads run a burst (module
//!   [`crate::specjbb`], which gives every default's source).

use crate::spec_params::{cgroup_template, each_param, err, list_groups, number};
use crate::{Loaded, WorkloadError};
use schedlab_core::program::{ChannelSpec, Op, Policy, TaskSpec, Workload};
use schedlab_core::time::NSEC_PER_USEC;

pub(crate) fn looping_task(name: String, index: u32, ops: Vec<Op>) -> TaskSpec {
    TaskSpec::looping(name, index, Policy::Normal, ops)
}

pub(crate) fn run(us: u64) -> Op {
    Op::Run {
        work_ns: us * NSEC_PER_USEC,
        config_us: us,
        perf: us,
    }
}

/// The OLTP-like generator (see the module doc).
pub fn oltp(spec: &str, rest: &str, nr_cpus: usize) -> Result<Loaded, WorkloadError> {
    let known = [
        "workers",
        "clients",
        "scale",
        "cpu_us",
        "io_us",
        "think_us",
        "client_us",
        "cgroup",
    ];
    let mut cgroup = crate::cgroup::ROOT.to_string();
    let mut p: Vec<(String, u64)> = Vec::new();
    each_param(spec, rest, &known, |k, v| {
        if k == "cgroup" {
            cgroup = cgroup_template(spec, v, false)?;
        } else {
            p.push((k.to_string(), number(spec, k, v)?));
        }
        Ok(())
    })?;
    let get = |k: &str, d: u64| p.iter().find(|(x, _)| x == k).map_or(d, |x| x.1);
    let n = nr_cpus as u64;
    let workers = get("workers", n);
    let clients = get("clients", workers);
    let open_loop = clients == 0;
    // Sources of these defaults: crate::oltp's module doc.
    let cpu_us = get("cpu_us", if open_loop { 80 } else { 420 });
    let io_us = get("io_us", 120);
    let think_us = get("think_us", 60);
    let client_us = get("client_us", 70);
    let scale = get("scale", workers.max(1));
    if workers == 0 {
        return Err(err(spec, "workers must be at least 1".into()));
    }
    // Checked: `workers=18446744073709551615,clients=1` must not wrap
    // under the cap.
    match workers.checked_add(clients) {
        Some(n) if n <= crate::limits::max_tasks() => {}
        n => {
            let n = n.map_or_else(|| format!("{workers} + {clients}"), |n| n.to_string());
            let (max, hint) = (crate::limits::max_tasks(), crate::limits::max_tasks_hint());
            return Err(err(
                spec,
                format!("{n} threads is absurd (at most {max}; {hint})"),
            ));
        }
    }
    if clients > workers {
        return Err(err(
            spec,
            format!("clients={clients} is more than workers={workers} (each client thread drives at least one connection)"),
        ));
    }
    if scale == 0 || scale > 1_000_000 {
        return Err(err(
            spec,
            format!("key 'scale': {scale} is outside 1..=1000000"),
        ));
    }
    for (k, v) in [
        ("cpu_us", cpu_us),
        ("io_us", io_us),
        ("think_us", think_us),
        ("client_us", client_us),
    ] {
        if v == 0 || v > 10_000_000 {
            return Err(err(
                spec,
                format!("key '{k}': {v} us is outside 1..=10000000"),
            ));
        }
    }
    let mut w = Workload {
        log_basename: "oltp".into(),
        calibration_ns: 1000,
        ..Default::default()
    };
    if open_loop {
        let half = (cpu_us / 2).max(1);
        for k in 0..workers {
            let ops = vec![
                run(half),
                Op::Sleep {
                    ns: io_us * NSEC_PER_USEC,
                },
                run(cpu_us - half),
                Op::Sleep {
                    ns: think_us * NSEC_PER_USEC,
                },
            ];
            w.tasks
                .push(looping_task(format!("worker-{k}"), k as u32, ops));
        }
    } else {
        let params = crate::oltp::Params {
            workers,
            clients,
            scale,
            cpu_us,
            client_us,
            io_us,
        };
        // Refused before building when the machine cannot hold it.
        let built = crate::oltp::built_bytes(&params);
        crate::limits::check_build_bytes(
            built,
            &format!(
                "{:.1} KiB per connection, its backend's {} pre-drawn transactions",
                built as f64 / workers as f64 / 1024.0,
                crate::oltp::TX_TABLE
            ),
        )
        .map_err(|e| err(spec, e))?;
        crate::oltp::build(&params, &mut w);
    }
    for t in &mut w.tasks {
        t.group.clone_from(&cgroup);
    }
    list_groups(spec, &mut w)?;
    Ok(Loaded {
        workload: w,
        warnings: Vec::new(),
    })
}

/// The two lines hackbench prints before it starts, for a `hackbench:`
/// spec (None for another spec or a bad one): `Running in process mode
/// with 10 groups using 40 file descriptors each (== 400 tasks)` and `Each
/// sender will pass 100 messages of 100 bytes`, with the spec's values and
/// hackbench's defaults (process mode, 10 groups, 20 fds, 100 loops, 100
/// bytes). With `instances=N` the first line says how many copies ran.
pub fn hackbench_banner(spec: &str) -> Option<Vec<String>> {
    let rest = spec
        .trim()
        .strip_prefix("hackbench:")
        .or_else(|| (spec.trim() == "hackbench").then_some(""))?;
    let (mut mode, mut groups, mut fds, mut loops, mut size, mut inst) =
        ("process", 10u64, 20u64, 100u64, 100u64, 1u64);
    for item in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=')?;
        match k {
            "mode" => mode = if v == "thread" { "threaded" } else { "process" },
            "groups" => groups = v.parse().ok()?,
            "fds" => fds = v.parse().ok()?,
            "loops" => loops = v.parse().ok()?,
            "datasize" => size = v.parse().ok()?,
            "instances" => inst = v.parse().ok()?,
            _ => {}
        }
    }
    let copies = if inst > 1 {
        format!(", {inst} instances at once")
    } else {
        String::new()
    };
    Some(vec![
        format!(
            "Running in {mode} mode with {groups} groups using {} file descriptors each (== {} tasks){copies}",
            2 * fds,
            groups.checked_mul(2 * fds)?
        ),
        format!("Each sender will pass {loops} messages of {size} bytes"),
    ])
}

/// `hackbench:groups=G,loops=L,mode=process|thread,ipc=pipe|socket,fds=F,datasize=D,cgroup=PATH`
/// (rt-tests hackbench, formats-spec.md §3): per group F receivers, each reading
/// F×L messages of D bytes from its own channel, and F senders, each
/// writing L rounds of one message to every receiver of its group. All
/// threads are created at start and meet at the start barrier (hackbench's
/// ready/wake pipes); the run ends when every thread has finished, and the
/// hackbench time is from the barrier's release to the last exit.
///
/// `cgroup=PATH` puts every thread in that task group; `%g` in PATH is
/// replaced by the hackbench group number (0-based), so
/// `cgroup=/l1/l2/g%g` gives each hackbench group its own leaf under a
/// common parent.
///
/// `instances=N` (default 1) runs N independent hackbench commands side by
/// side, each with its own G groups, as a shell script starting N
/// `hackbench` processes in the background and timing `wait` does (the
/// per-task-throttle postings' "Testing" set-up: one instance per leaf
/// cgroup). `%i` in PATH is replaced by the instance number (0-based) and
/// `%g` by the group number within its instance; or `cgroup=` lists one
/// path per instance, separated by `;`
/// (`cgroup=/CG0/CG00/CG000;/CG0/CG00/CG001;/CG0/CG01/CG000;/CG0/CG01/CG001`),
/// for trees whose paths are not a function of the number. Thread names
/// carry the instance when N > 1 (`hb-r<i>.<g>-<r>`, `hb-s<i>.<g>-<s>`).
/// All instances meet at one start barrier (real instances start within
/// the shell's fork latency of each other) and the time is until the last
/// thread of any instance exits: the script's `time wait`.
///
/// Every message is one `write()` and one `read()` syscall with its CPU
/// cost; pipes and sockets keep the kernel's capacity and wakeup rules
/// (`schedlab-core` `sched/pipe.rs`, `sched/unix_stream.rs`,
/// `sched/syscall_cost.rs`).
///
/// Deviations: process and thread mode differ only in name (no address
/// spaces are modelled); messages are whole (no partial reads or writes).
pub fn hackbench(spec: &str, rest: &str) -> Result<Loaded, WorkloadError> {
    let known = [
        "groups",
        "loops",
        "mode",
        "ipc",
        "fds",
        "datasize",
        "cgroup",
        "instances",
        "pin",
        "split",
    ];
    let mut cgroup_raw: Option<&str> = None;
    let mut pin: Option<u64> = None;
    let mut split = false;
    let mut instances = 1u64;
    let mut groups = 10u64;
    let mut loops = 100u64;
    let mut fds = 20u64;
    let mut datasize = 100u64;
    let mut socket = true;
    each_param(spec, rest, &known, |k, v| {
        match k {
            "groups" => groups = number(spec, k, v)?,
            "loops" => loops = number(spec, k, v)?,
            "fds" => fds = number(spec, k, v)?,
            "datasize" => datasize = number(spec, k, v)?,
            "mode" => {
                if v != "process" && v != "thread" {
                    return Err(err(
                        spec,
                        format!("key 'mode': '{v}' is not process or thread"),
                    ));
                }
            }
            "ipc" => {
                socket = match v {
                    "socket" => true,
                    "pipe" => false,
                    _ => return Err(err(spec, format!("key 'ipc': '{v}' is not pipe or socket"))),
                }
            }
            "cgroup" => cgroup_raw = Some(v),
            "instances" => instances = number(spec, k, v)?,
            "pin" => pin = Some(number(spec, k, v)?),
            "split" => {
                split = match v {
                    "0" => false,
                    "1" => true,
                    _ => return Err(err(spec, format!("key 'split': '{v}' is not 0 or 1"))),
                }
            }
            _ => unreachable!("each_param checked the key"),
        }
        Ok(())
    })?;
    if let Some(n) = pin {
        if n == 0 || n > 16_384 {
            return Err(err(spec, format!("key 'pin': {n} is outside 1..=16384")));
        }
    }
    if split && pin.is_none() {
        return Err(err(spec, "key 'split' needs pin=N".to_string()));
    }
    // pin=N: receiver k and sender k of every group run on CPU k mod N
    // only. Not a hackbench option: it takes wake-up placement and
    // balancing out of a comparison with the real kernel while keeping
    // cross-CPU wakeups (schedlab record runs it with the same affinity).
    // split=1 moves sender k to CPU (k + 1) mod N, so that with fds=1 and
    // pin=2 the sender and the receiver each have a CPU of their own (the
    // under-loaded regime of hackbench on a large machine).
    let pinned = |k: u64| pin.map(|n| vec![(k % n) as u32]);
    let pinned_sender = |k: u64| pin.map(|n| vec![((k + u64::from(split)) % n) as u32]);
    for (k, v, max) in [
        ("groups", groups, 10_000),
        ("instances", instances, 1_000),
        ("fds", fds, 1_000),
        ("loops", loops, 100_000_000),
        ("datasize", datasize, 65_536),
    ] {
        if v == 0 || v > max {
            return Err(err(spec, format!("key '{k}': {v} is outside 1..={max}")));
        }
    }
    let cgroups = hackbench_cgroups(spec, cgroup_raw, instances)?;
    // Checked arithmetic, although the bounds above keep these small.
    let tasks = groups
        .checked_mul(fds)
        .and_then(|x| x.checked_mul(2))
        .and_then(|x| x.checked_mul(instances));
    match tasks {
        Some(n) if n <= crate::limits::max_tasks() => {}
        n => {
            let n = n.map_or_else(
                || format!("{instances} x {groups} x {fds} x 2"),
                |n| n.to_string(),
            );
            let (max, hint) = (crate::limits::max_tasks(), crate::limits::max_tasks_hint());
            return Err(err(
                spec,
                format!("{n} tasks is absurd (at most {max}; {hint})"),
            ));
        }
    }
    let Some(msgs_per_receiver) = fds.checked_mul(loops) else {
        return Err(err(
            spec,
            format!("fds x loops ({fds} x {loops}) overflows"),
        ));
    };
    let kind = if socket {
        schedlab_core::program::ChannelKind::UnixStream
    } else {
        schedlab_core::program::ChannelKind::Pipe
    };
    let mut w = Workload {
        log_basename: "hackbench".into(),
        calibration_ns: 1000,
        ..Default::default()
    };
    let mut index = 0u32;
    for (i, g) in (0..instances).flat_map(|i| (0..groups).map(move |g| (i, g))) {
        let group_path = cgroups[i as usize]
            .replace("%i", &i.to_string())
            .replace("%g", &g.to_string());
        // hackbench's own group number; with instances, `<instance>.<group>`.
        let gname = if instances > 1 {
            format!("{i}.{g}")
        } else {
            g.to_string()
        };
        let first_chan = w.channels.len() as u32;
        for _ in 0..fds {
            w.channels.push(ChannelSpec {
                kind,
                msg_bytes: datasize,
            });
        }
        for r in 0..fds {
            let mut t = TaskSpec::looping(
                format!("hb-r{gname}-{r}"),
                index,
                Policy::Normal,
                vec![Op::Recv {
                    chan: first_chan + r as u32,
                    msgs: msgs_per_receiver,
                }],
            );
            t.program.loops = Some(1);
            t.log_rows = false;
            t.group.clone_from(&group_path);
            t.cpus = pinned(r);
            w.tasks.push(t);
            index += 1;
        }
        for s in 0..fds {
            let mut t = TaskSpec::looping(
                format!("hb-s{gname}-{s}"),
                index,
                Policy::Normal,
                vec![Op::Send {
                    first: first_chan,
                    count: fds as u32,
                }],
            );
            t.program.phases[0].loops = loops;
            t.program.loops = Some(1);
            t.log_rows = false;
            t.group.clone_from(&group_path);
            t.cpus = pinned_sender(s);
            w.tasks.push(t);
            index += 1;
        }
    }
    list_groups(spec, &mut w)?;
    Ok(Loaded {
        workload: w,
        warnings: Vec::new(),
    })
}

/// hackbench's `cgroup=` value as one template per instance: absent, the
/// root for all; one path (with `%i` and `%g` replaced per instance and
/// group); or exactly `instances` paths separated by `;`. Each is checked
/// with its `%i` and `%g` replaced.
fn hackbench_cgroups(
    spec: &str,
    raw: Option<&str>,
    instances: u64,
) -> Result<Vec<String>, WorkloadError> {
    let Some(raw) = raw else {
        return Ok(vec![crate::cgroup::ROOT.to_string(); instances as usize]);
    };
    let list: Vec<&str> = raw.split(';').collect();
    if list.len() > 1 && list.len() as u64 != instances {
        return Err(err(
            spec,
            format!(
                "key 'cgroup': {} paths separated by ';' for instances={instances} (give one path per instance, or one path for all)",
                list.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(instances as usize);
    for i in 0..instances {
        let t = list[if list.len() == 1 { 0 } else { i as usize }];
        let probe = t.replace("%i", &i.to_string()).replace("%g", "0");
        crate::cgroup::validate_path(&probe).map_err(|e| {
            let hint = if probe.contains('%') {
                " (only %g, the hackbench group number, and %i, the instance number, are replaced)"
            } else {
                ""
            };
            err(spec, format!("key 'cgroup': {e}{hint}"))
        })?;
        out.push(t.to_string());
    }
    Ok(out)
}

/// The generators' names, as written before the `:` of a spec.
pub const GENERATOR_NAMES: &[&str] = &["oltp", "hackbench", "schbench", "specjbb"];

/// The name of the generator `spec` asks for, if it names one.
pub fn generator_name(spec: &str) -> Option<&'static str> {
    let (name, _) = spec.split_once(':')?;
    GENERATOR_NAMES.iter().copied().find(|g| *g == name)
}

/// The message for a spec shaped like a generator's (`NAME:key=value,...`,
/// NAME a plain word) whose NAME is no generator, e.g. a typo such as
/// `hackbnech:groups=2`, or a generator's name without its colon
/// (`hackbench`); `None` when `spec` does not look like one (a generator,
/// or a path). The caller checks first that no file `spec`
/// exists.
pub fn unknown_generator(spec: &str) -> Option<String> {
    // A generator's bare name (`hackbench`) lacks only the colon.
    if GENERATOR_NAMES.contains(&spec) {
        return Some(format!(
            "{spec}: no such file; for the {spec} generator write '{spec}:' (optionally with key=value,...)"
        ));
    }
    let (name, _) = spec.split_once(':')?;
    let word = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !word || generator_name(spec).is_some() {
        return None;
    }
    Some(format!(
        "{spec}: unknown generator '{name}' (generators: {}; or an rt-app JSON file)",
        GENERATOR_NAMES.join(", ")
    ))
}

/// Resolves a generator spec (`oltp:...`, `hackbench:...`); None if `spec`
/// names no generator.
pub fn generator(spec: &str, nr_cpus: usize) -> Option<Result<Loaded, WorkloadError>> {
    let (name, rest) = spec.split_once(':')?;
    match name {
        "oltp" => Some(oltp(spec, rest, nr_cpus)),
        "hackbench" => Some(hackbench(spec, rest)),
        "schbench" => Some(crate::schbench::schbench(spec, rest, nr_cpus)),
        "specjbb" => Some(crate::specjbb::specjbb(spec, rest, nr_cpus)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_generators_are_named() {
        let m = unknown_generator("hackbnech:groups=2").unwrap();
        assert!(
            m.contains("unknown generator 'hackbnech'")
                && m.contains("oltp, hackbench, schbench, specjbb")
        );
        assert!(unknown_generator("hackbench")
            .unwrap()
            .contains("'hackbench:'"));
        assert_eq!(unknown_generator("hackbench:groups=2"), None);
        assert_eq!(unknown_generator("dir/file.json"), None);
    }

    #[test]
    fn oltp_defaults_scale_with_the_machine() {
        let l = oltp("oltp:", "", 8).unwrap();
        let w = &l.workload;
        assert_eq!(
            w.tasks
                .iter()
                .filter(|t| t.name.starts_with("worker-"))
                .count(),
            8
        );
        assert_eq!(
            w.tasks
                .iter()
                .filter(|t| t.name.starts_with("client-"))
                .count(),
            8
        );
        // Seven round trips per transaction, one transaction per phase.
        assert_eq!(w.tasks[0].program.phases.len(), crate::oltp::TX_TABLE);
        assert_eq!(w.channels.len(), 16);
        assert_eq!(w.tasks[9].name, "client-1");
        assert_eq!(w.tasks[9].index, 9);
    }

    #[test]
    fn oltp_keys_are_checked() {
        let l = oltp(
            "oltp:workers=3,clients=0,cpu_us=100,io_us=50",
            "workers=3,clients=0,cpu_us=100,io_us=50",
            8,
        )
        .unwrap();
        assert_eq!(l.workload.tasks.len(), 3);
        // clients=0: the open loop of four ops, no channels.
        assert_eq!(l.workload.tasks[0].program.phases[0].ops.len(), 4);
        assert!(l.workload.channels.is_empty());
        for (rest, needle) in [
            ("workers=2,clients=3", "more than workers"),
            ("scale=0", "'scale'"),
            ("bogus=1", "unknown key 'bogus'"),
            ("workers", "is not key=value"),
            ("workers=x", "not a non-negative integer"),
            ("workers=0", "at least 1"),
            ("cpu_us=0", "outside"),
            ("workers=1,workers=2", "twice"),
            ("workers=200000", "absurd"),
            ("workers=18446744073709551615,clients=1", "absurd"),
            ("workers=1,clients=18446744073709551615", "absurd"),
        ] {
            let e = oltp("oltp:x", rest, 8).unwrap_err().to_string();
            assert!(e.contains(needle), "{rest}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn hackbench_banner_is_the_tool_s_own() {
        assert_eq!(
            hackbench_banner("hackbench:groups=4,loops=200,mode=thread,ipc=pipe").unwrap(),
            [
                "Running in threaded mode with 4 groups using 40 file descriptors each (== 160 tasks)",
                "Each sender will pass 200 messages of 100 bytes",
            ]
        );
        assert_eq!(
            hackbench_banner("hackbench").unwrap()[0],
            "Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)"
        );
        assert!(
            hackbench_banner("hackbench:instances=2,groups=1").unwrap()[0]
                .ends_with(", 2 instances at once")
        );
        assert_eq!(hackbench_banner("oltp:workers=4"), None);
    }

    #[test]
    fn hackbench_shape() {
        let l = hackbench("hackbench:x", "groups=2,loops=3,fds=4,ipc=pipe").unwrap();
        let w = &l.workload;
        assert_eq!(w.tasks.len(), 2 * 2 * 4);
        assert_eq!(w.channels.len(), 8);
        assert_eq!(
            w.channels[0],
            ChannelSpec {
                kind: schedlab_core::program::ChannelKind::Pipe,
                msg_bytes: 100
            }
        );
        // Receiver r of group 1 reads fds × loops = 12 messages from channel 4 + r.
        assert_eq!(w.tasks[9].name, "hb-r1-1");
        assert_eq!(
            w.tasks[9].program.phases[0].ops,
            vec![Op::Recv { chan: 5, msgs: 12 }]
        );
        // Senders write 3 rounds to their group's 4 channels.
        assert_eq!(w.tasks[12].name, "hb-s1-0");
        assert_eq!(
            w.tasks[12].program.phases[0].ops,
            vec![Op::Send { first: 4, count: 4 }]
        );
        assert_eq!(w.tasks[12].program.phases[0].loops, 3);
        let s = hackbench("hackbench:", "").unwrap().workload;
        assert_eq!(s.tasks.len(), 400, "defaults: 10 groups x 20 fds x 2");
        assert_eq!(
            s.channels[0].kind,
            schedlab_core::program::ChannelKind::UnixStream
        );
        // No affinity unless pin=N: then receiver k and sender k of every
        // group run on CPU k mod N.
        assert!(w.tasks.iter().all(|t| t.cpus.is_none()));
        let p = hackbench("hackbench:x", "groups=2,fds=3,pin=2")
            .unwrap()
            .workload;
        let cpus: Vec<u32> = p
            .tasks
            .iter()
            .map(|t| t.cpus.as_ref().unwrap()[0])
            .collect();
        assert_eq!(cpus, [0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0]);
        assert!(p.tasks.iter().all(|t| t.cpus.as_ref().unwrap().len() == 1));
        // split=1: sender k on CPU (k + 1) mod N, receivers as before.
        let q = hackbench("hackbench:x", "groups=1,fds=1,pin=2,split=1")
            .unwrap()
            .workload;
        let cpus: Vec<(String, u32)> = q
            .tasks
            .iter()
            .map(|t| (t.name.clone(), t.cpus.as_ref().unwrap()[0]))
            .collect();
        assert_eq!(
            cpus,
            [("hb-r0-0".to_string(), 0), ("hb-s0-0".to_string(), 1)]
        );
        let q = hackbench("hackbench:x", "groups=1,fds=3,pin=2,split=1")
            .unwrap()
            .workload;
        let cpus: Vec<u32> = q
            .tasks
            .iter()
            .map(|t| t.cpus.as_ref().unwrap()[0])
            .collect();
        assert_eq!(cpus, [0, 1, 0, 1, 0, 1]);
        for (rest, needle) in [
            ("split=1", "key 'split' needs pin=N"),
            ("pin=2,split=2", "key 'split': '2' is not 0 or 1"),
            ("mode=fork", "process or thread"),
            ("ipc=udp", "pipe or socket"),
            ("groups=0", "outside"),
            ("loops=x", "integer"),
            ("fdz=3", "unknown key"),
            ("pin=0", "key 'pin': 0 is outside 1..=16384"),
            ("pin=-1", "integer"),
        ] {
            let e = hackbench("hackbench:x", rest).unwrap_err().to_string();
            assert!(e.contains(needle), "{rest}: {e}");
        }
    }

    #[test]
    fn hackbench_cgroups() {
        let w = hackbench("hackbench:x", "groups=3,fds=2,loops=1,cgroup=/l1/l2/g%g")
            .unwrap()
            .workload;
        for t in &w.tasks {
            // hb-r1-0 -> group 1
            let g = &t.name[4..5];
            assert_eq!(t.group, format!("/l1/l2/g{g}"), "{}", t.name);
        }
        let paths: Vec<&str> = w.groups.iter().map(|g| g.path.as_str()).collect();
        assert_eq!(
            paths,
            ["/l1", "/l1/l2", "/l1/l2/g0", "/l1/l2/g1", "/l1/l2/g2"]
        );
        // Without %g every thread shares one group.
        let w = hackbench("hackbench:x", "groups=2,fds=1,loops=1,cgroup=/hb")
            .unwrap()
            .workload;
        assert!(w.tasks.iter().all(|t| t.group == "/hb"));
        assert_eq!(w.groups.len(), 1);
        // Default: the root, no groups.
        let w = hackbench("hackbench:x", "groups=1,fds=1,loops=1")
            .unwrap()
            .workload;
        assert!(w.tasks.iter().all(|t| t.group == "/") && w.groups.is_empty());
        for (rest, needle) in [
            (
                "cgroup=hb",
                "key 'cgroup': cgroup path \"hb\" must start with '/'",
            ),
            ("cgroup=/a/%d", "only %g"),
            ("cgroup=/a/", "end with '/'"),
            ("cgroup=/a/../b", "'..'"),
            ("cgroup=", "start with '/'"),
        ] {
            let e = hackbench("hackbench:x", rest).unwrap_err().to_string();
            assert!(e.contains(needle), "{rest}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn hackbench_instances() {
        // The posting's tree: four instances, one per leaf, two leaves per
        // middle group.
        let list = "/CG0/CG00/CG000;/CG0/CG00/CG001;/CG0/CG01/CG000;/CG0/CG01/CG001";
        let rest = format!("instances=4,groups=2,fds=1,loops=3,cgroup={list}");
        let w = hackbench("hackbench:x", &rest).unwrap().workload;
        assert_eq!(w.tasks.len(), 4 * 2 * 2);
        assert_eq!(w.channels.len(), 4 * 2);
        let leaves: Vec<&str> = list.split(';').collect();
        for (k, t) in w.tasks.iter().enumerate() {
            // Instance-major: instance k / 4, group (k / 2) % 2.
            let (i, g) = (k / 4, (k / 2) % 2);
            let role = if k % 2 == 0 { 'r' } else { 's' };
            assert_eq!(t.name, format!("hb-{role}{i}.{g}-0"));
            assert_eq!(t.group, leaves[i]);
            assert_eq!(t.index as usize, k);
        }
        // Each instance's receivers read their own channels.
        assert_eq!(
            w.tasks[4].program.phases[0].ops,
            vec![Op::Recv { chan: 2, msgs: 3 }]
        );
        let paths: Vec<&str> = w.groups.iter().map(|g| g.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/CG0",
                "/CG0/CG00",
                "/CG0/CG00/CG000",
                "/CG0/CG00/CG001",
                "/CG0/CG01",
                "/CG0/CG01/CG000",
                "/CG0/CG01/CG001"
            ]
        );
        // One template: %i and %g replaced.
        let w = hackbench(
            "hackbench:x",
            "instances=2,groups=2,fds=1,loops=1,cgroup=/b/i%i/g%g",
        )
        .unwrap()
        .workload;
        let g: Vec<&str> = w.tasks.iter().map(|t| t.group.as_str()).collect();
        assert_eq!(
            g,
            [
                "/b/i0/g0", "/b/i0/g0", "/b/i0/g1", "/b/i0/g1", "/b/i1/g0", "/b/i1/g0", "/b/i1/g1",
                "/b/i1/g1"
            ]
        );
        // instances=1 keeps the names and layout of a single hackbench.
        let a = hackbench("hackbench:x", "groups=2,fds=2,loops=2").unwrap();
        let b = hackbench("hackbench:x", "groups=2,fds=2,loops=2,instances=1").unwrap();
        assert_eq!(a, b);
        for (rest, needle) in [
            ("instances=0", "'instances': 0 is outside"),
            ("instances=1001", "outside 1..=1000"),
            ("instances=x", "integer"),
            (
                "instances=3,cgroup=/a;/b",
                "2 paths separated by ';' for instances=3",
            ),
            ("instances=2,cgroup=/a;", "must start with '/'"),
            ("instances=2,cgroup=/a;/b/%x", "and %i, the instance number"),
            ("instances=1000,groups=1000", "absurd"),
        ] {
            let e = hackbench("hackbench:x", rest).unwrap_err().to_string();
            assert!(e.contains(needle), "{rest}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn oltp_cgroup() {
        let w = oltp("oltp:x", "workers=2,clients=1,cgroup=/db/oltp", 4)
            .unwrap()
            .workload;
        assert!(w.tasks.iter().all(|t| t.group == "/db/oltp"));
        let paths: Vec<&str> = w.groups.iter().map(|g| g.path.as_str()).collect();
        assert_eq!(paths, ["/db", "/db/oltp"]);
        let e = oltp("oltp:x", "cgroup=/a/%g", 4).unwrap_err().to_string();
        assert!(e.contains("'%'"), "{e}");
    }

    #[test]
    fn unknown_generators_are_not_claimed() {
        assert!(generator("examples/x.json", 4).is_none());
        assert!(generator("oltp:workers=2", 4).is_some());
    }
}

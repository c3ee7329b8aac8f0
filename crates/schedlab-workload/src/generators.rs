//! Built-in workload generators, named by a spec string
//! `NAME:key=value,key=value` on the command line (in place of a file).
//!
//! * `oltp:workers=W,clients=C,cpu_us=X,io_us=Y,think_us=Z,client_us=U` —
//!   an OLTP-like closed loop on one box (kernel-model.md §15(a) item 6:
//!   "many short idle periods, so CPUs flip between busy and idle").
//!   W backend threads each loop over transactions: `X/2` µs of CPU, a
//!   blocking I/O wait of `Y` µs (commit / page read), `X/2` µs of CPU, then
//!   wait `Z` µs for the next request of its connection (network round
//!   trip). C client threads (a pgbench-like driver on the same machine)
//!   each loop over `U` µs of CPU and `Z` µs of waiting. Throughput is the
//!   backends' completed transactions per second (each transaction is one
//!   iteration, one rt-app log row).
//!
//!   Defaults, per CPU of the machine: one backend and a quarter of a
//!   client; X = 80 µs, Y = 120 µs, Z = 60 µs, U = 30 µs. A backend then
//!   wants the CPU about 31 % of the time and a client 33 %, i.e. ~40 % of
//!   each CPU on average, with idle gaps of 60–120 µs between bursts: the
//!   shape of a busy but not saturated OLTP server, where every CPU enters
//!   and leaves idle thousands of times a second. These figures are
//!   choices, not measurements, and are the same for every machine and
//!   every experiment.
//!
//! Deviations: backends and clients are not coupled (no request/reply
//! wakeups between them; the rt-app signal events that would couple them
//! come with the rt-app compatibility issue), so throughput follows each
//! backend's own cycle time, which the scheduler's CPU time stretches.

use crate::{ErrorKind, Loaded, WorkloadError};
use schedlab_core::program::{Op, Policy, TaskSpec, Workload};
use schedlab_core::time::NSEC_PER_USEC;

fn err(spec: &str, msg: String) -> WorkloadError {
    WorkloadError::new(
        spec,
        crate::json::Pos { line: 1, col: 1 },
        ErrorKind::Invalid,
        msg,
    )
}

/// Parses `key=value` pairs after `NAME:`; every key must be in `known`.
fn params(spec: &str, rest: &str, known: &[&str]) -> Result<Vec<(String, u64)>, WorkloadError> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for item in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| err(spec, format!("'{item}' is not key=value")))?;
        if !known.contains(&k) {
            return Err(err(
                spec,
                format!("unknown key '{k}' (valid: {})", known.join(", ")),
            ));
        }
        let n: u64 = v.parse().map_err(|_| {
            err(
                spec,
                format!("key '{k}': '{v}' is not a non-negative integer"),
            )
        })?;
        if out.iter().any(|(x, _)| x == k) {
            return Err(err(spec, format!("key '{k}' is given twice")));
        }
        out.push((k.to_string(), n));
    }
    Ok(out)
}

fn looping_task(name: String, index: u32, ops: Vec<Op>) -> TaskSpec {
    TaskSpec::looping(name, index, Policy::Normal, ops)
}

fn run(us: u64) -> Op {
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
        "cpu_us",
        "io_us",
        "think_us",
        "client_us",
    ];
    let p = params(spec, rest, &known)?;
    let get = |k: &str, d: u64| p.iter().find(|(x, _)| x == k).map_or(d, |x| x.1);
    let n = nr_cpus as u64;
    let workers = get("workers", n);
    let clients = get("clients", n.div_ceil(4));
    let cpu_us = get("cpu_us", 80);
    let io_us = get("io_us", 120);
    let think_us = get("think_us", 60);
    let client_us = get("client_us", 30);
    if workers == 0 {
        return Err(err(spec, "workers must be at least 1".into()));
    }
    if workers + clients > 100_000 {
        return Err(err(
            spec,
            format!("{} threads is absurd (at most 100000)", workers + clients),
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
    let half = (cpu_us / 2).max(1);
    let mut w = Workload {
        log_basename: "oltp".into(),
        calibration_ns: 1000,
        ..Default::default()
    };
    let mut i = 0u32;
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
        w.tasks.push(looping_task(format!("worker-{k}"), i, ops));
        i += 1;
    }
    for k in 0..clients {
        let ops = vec![
            run(client_us),
            Op::Sleep {
                ns: think_us * NSEC_PER_USEC,
            },
        ];
        w.tasks.push(looping_task(format!("client-{k}"), i, ops));
        i += 1;
    }
    Ok(Loaded {
        workload: w,
        warnings: Vec::new(),
    })
}

/// Resolves a generator spec (`oltp:...`); None if `spec` names no generator.
pub fn generator(spec: &str, nr_cpus: usize) -> Option<Result<Loaded, WorkloadError>> {
    let (name, rest) = spec.split_once(':')?;
    match name {
        "oltp" => Some(oltp(spec, rest, nr_cpus)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            2
        );
        assert_eq!(w.tasks[0].program.phases[0].ops.len(), 4);
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
        for (rest, needle) in [
            ("bogus=1", "unknown key 'bogus'"),
            ("workers", "is not key=value"),
            ("workers=x", "not a non-negative integer"),
            ("workers=0", "at least 1"),
            ("cpu_us=0", "outside"),
            ("workers=1,workers=2", "twice"),
            ("workers=200000", "absurd"),
        ] {
            let e = oltp("oltp:x", rest, 8).unwrap_err().to_string();
            assert!(e.contains(needle), "{rest}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn unknown_generators_are_not_claimed() {
        assert!(generator("examples/x.json", 4).is_none());
        assert!(generator("oltp:workers=2", 4).is_some());
    }
}

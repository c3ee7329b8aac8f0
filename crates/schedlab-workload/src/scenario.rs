//! Random scenarios for Monte-Carlo A/B screening (`schedlab montecarlo`):
//! one seeded rt-app file per (seed, machine, index), a mix of task kinds
//! the way a scheduler patch meets them in the field:
//!
//! | kind | shape |
//! |---|---|
//! | periodic | `run` then a per-thread `timer` (utilisation 5..60 %), sometimes SCHED_FIFO |
//! | bursty | a burst phase of back-to-back runs, then a long sleep |
//! | hackbench | pairs that ping-pong with `sync` on a shared mutex (short runs, many wakeups) |
//! | oltp | workers: CPU, a row lock from a small set, a short critical section, an I/O sleep |
//! | schbench | a message thread on a timer `broad`-casts to workers that run a request each |
//!
//! Each kind gets a random nice value, sometimes SCHED_BATCH or SCHED_IDLE,
//! sometimes a CPU affinity, and sometimes its own task group with a CFS
//! bandwidth quota (`cpu.max`) or a weight. The file is plain rt-app JSON
//! plus schedlab's `taskgroups` key (`docs/workload-format.md`); the same
//! arguments always give the same bytes. The mix is random on purpose: no
//! figure here models a particular workload, the ranges are wide so that
//! the scenarios cover the space.

/// SplitMix64: small, seedable, and stable across releases (the scenarios
/// must not change when a dependency's generator does).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in lo..=hi.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// FNV-1a of the machine name, to give each machine its own stream.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The task kinds a scenario mixes.
pub const KINDS: [&str; 5] = ["periodic", "bursty", "hackbench", "oltp", "schbench"];

/// The rt-app JSON text of scenario `index` for a machine named `machine`
/// with `nr_cpus` CPUs, from the master `seed`. Also returns the kinds it
/// mixes, for the report.
pub fn scenario(
    seed: u64,
    machine: &str,
    nr_cpus: usize,
    index: u64,
) -> (String, Vec<&'static str>) {
    let mut rng =
        Rng(seed ^ fnv(machine).rotate_left(17) ^ index.wrapping_mul(0x2545_f491_4f6c_dd1d));
    let cpus = nr_cpus.max(1) as u64;
    // 2..=4 distinct kinds.
    let mut kinds: Vec<&'static str> = Vec::new();
    let want = rng.range(2, 4) as usize;
    while kinds.len() < want {
        let k = KINDS[rng.range(0, KINDS.len() as u64 - 1) as usize];
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    let mut tasks: Vec<String> = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    for (ki, kind) in kinds.iter().enumerate() {
        // Scheduling attributes shared by the kind's threads.
        let fifo = *kind == "periodic" && rng.chance(15);
        let policy = if fifo {
            "SCHED_FIFO"
        } else {
            match rng.range(0, 9) {
                0 => "SCHED_BATCH",
                1 => "SCHED_IDLE",
                _ => "SCHED_OTHER",
            }
        };
        let mut attrs = format!("\"policy\": \"{policy}\"");
        if fifo {
            attrs += &format!(", \"priority\": {}", rng.range(1, 50));
        } else if policy != "SCHED_IDLE" {
            attrs += &format!(", \"priority\": {}", rng.range(0, 15) as i64 - 5);
        }
        if cpus > 1 && rng.chance(25) {
            let n = rng.range(1, cpus - 1);
            let first = rng.range(0, cpus - 1);
            let list: Vec<String> = (0..n).map(|i| ((first + i) % cpus).to_string()).collect();
            attrs += &format!(", \"cpus\": [{}]", list.join(", "));
        }
        if !fifo && rng.chance(40) {
            let path = format!("/mc{ki}");
            if rng.chance(60) {
                let period = [10_000u64, 50_000, 100_000][rng.range(0, 2) as usize];
                let quota = period * rng.range(20, 100 * cpus.min(8)) / 100;
                groups.push(format!(
                    "\"{path}\": {{ \"cpu.max\": \"{} {period}\" }}",
                    quota.max(1000)
                ));
            } else {
                groups.push(format!(
                    "\"{path}\": {{ \"cpu.weight\": {} }}",
                    rng.range(10, 500)
                ));
            }
            attrs += &format!(", \"taskgroup\": \"{path}\"");
        }
        let n = |rng: &mut Rng, per_cpu_max: u64| rng.range(1, (cpus * per_cpu_max).clamp(1, 64));
        match *kind {
            "periodic" => {
                let inst = n(&mut rng, 1);
                let run = rng.range(200, 5000);
                let util = rng.range(5, 60);
                let period = run * 100 / util;
                tasks.push(format!(
                    "\"periodic{ki}\": {{ {attrs}, \"instance\": {inst}, \"loop\": -1, \"run\": {run}, \"timer\": {{ \"ref\": \"unique\", \"period\": {period} }} }}"
                ));
            }
            "bursty" => {
                let inst = n(&mut rng, 1);
                let burst = rng.range(2, 20);
                let run = rng.range(500, 5000);
                let sleep = rng.range(10_000, 100_000);
                tasks.push(format!(
                    "\"bursty{ki}\": {{ {attrs}, \"instance\": {inst}, \"loop\": -1, \"phases\": {{ \"burst\": {{ \"loop\": {burst}, \"run\": {run} }}, \"rest\": {{ \"sleep\": {sleep} }} }} }}"
                ));
            }
            "hackbench" => {
                let pairs = n(&mut rng, 2);
                let run = rng.range(5, 100);
                for p in 0..pairs {
                    for side in ["ping", "pong"] {
                        tasks.push(format!(
                            "\"hb{ki}_{side}{p}\": {{ {attrs}, \"loop\": -1, \"run\": {run}, \"lock\": \"hb{ki}_m{p}\", \"sync\": {{ \"ref\": \"hb{ki}_c{p}\", \"mutex\": \"hb{ki}_m{p}\" }}, \"unlock\": \"hb{ki}_m{p}\" }}"
                        ));
                    }
                }
            }
            "oltp" => {
                let inst = n(&mut rng, 4);
                let rows = rng.range(1, 8);
                let row = rng.range(0, rows - 1);
                let cpu = rng.range(50, 400);
                let crit = rng.range(5, 50);
                let io = rng.range(100, 2000);
                tasks.push(format!(
                    "\"oltp{ki}\": {{ {attrs}, \"instance\": {inst}, \"loop\": -1, \"run\": {cpu}, \"lock\": \"oltp{ki}_row{row}\", \"runtime\": {crit}, \"unlock\": \"oltp{ki}_row{row}\", \"sleep\": {io} }}"
                ));
            }
            _ => {
                // schbench: message thread + workers.
                let inst = n(&mut rng, 2);
                let period = rng.range(1000, 5000);
                let req = rng.range(100, 2000);
                tasks.push(format!(
                    "\"sch{ki}_msg\": {{ {attrs}, \"loop\": -1, \"run\": 20, \"lock\": \"sch{ki}_m\", \"broad\": \"sch{ki}_go\", \"unlock\": \"sch{ki}_m\", \"timer\": {{ \"ref\": \"unique\", \"period\": {period} }} }}"
                ));
                tasks.push(format!(
                    "\"sch{ki}_worker\": {{ {attrs}, \"instance\": {inst}, \"loop\": -1, \"lock\": \"sch{ki}_m\", \"wait\": {{ \"ref\": \"sch{ki}_go\", \"mutex\": \"sch{ki}_m\" }}, \"unlock\": \"sch{ki}_m\", \"run\": {req} }}"
                ));
            }
        }
    }
    let mut text = format!(
        "{{\n  /* schedlab montecarlo scenario {index} for {machine} (seed {seed}): {} */\n",
        kinds.join(", ")
    );
    if !groups.is_empty() {
        text += &format!(
            "  \"taskgroups\": {{\n    {}\n  }},\n",
            groups.join(",\n    ")
        );
    }
    text += &format!(
        "  \"tasks\": {{\n    {}\n  }},\n  \"global\": {{ \"duration\": 1 }}\n}}\n",
        tasks.join(",\n    ")
    );
    (text, kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_arguments_same_bytes_different_index_different_file() {
        let a = scenario(1, "vm-2cpu", 2, 0);
        assert_eq!(a, scenario(1, "vm-2cpu", 2, 0));
        assert_ne!(a.0, scenario(1, "vm-2cpu", 2, 1).0);
        assert_ne!(a.0, scenario(1, "a7-octa", 8, 0).0);
    }

    #[test]
    fn every_scenario_loads() {
        for machine in [("vm-2cpu", 2), ("a7-octa", 8), ("one", 1)] {
            for i in 0..40 {
                let (text, kinds) = scenario(7, machine.0, machine.1, i);
                assert!((2..=4).contains(&kinds.len()));
                if let Err(e) = crate::load_rtapp("scenario.json", &text, machine.1) {
                    panic!("{}/{i}: {e}\n{text}", machine.0);
                }
            }
        }
    }
}

//! Placement decisions on constructed runqueue states.

use super::*;
use crate::machine::make_test_machine;

struct View {
    m: Machine,
    d: SchedDomains,
    /// Per CPU: 'I' truly idle, 'S' only SCHED_IDLE tasks, 'B' busy with normal work.
    state: Vec<char>,
    feature: bool,
    idle_cores: bool,
    scan: u32,
    sis_util: bool,
    numa_rule: NumaForkRule,
}

impl View {
    fn new(m: Machine, state: &str, feature: bool) -> View {
        let d = SchedDomains::build(&m, 250);
        View {
            m,
            d,
            state: state.chars().collect(),
            feature,
            idle_cores: true,
            scan: 64,
            sis_util: true,
            numa_rule: NumaForkRule::ImbNumaNrIdle,
        }
    }
}

impl CpuView for View {
    fn machine(&self) -> &Machine {
        &self.m
    }
    fn domains(&self) -> &SchedDomains {
        &self.d
    }
    fn sched_idle_as_idle(&self) -> bool {
        self.feature
    }
    fn numa_fork_rule(&self) -> NumaForkRule {
        self.numa_rule
    }
    fn available_idle_cpu(&self, c: CpuId) -> bool {
        self.state[c.idx()] == 'I'
    }
    fn sched_idle_cpu(&self, c: CpuId) -> bool {
        self.state[c.idx()] == 'S'
    }
    fn nr_running(&self, c: CpuId) -> u32 {
        (self.state[c.idx()] != 'I') as u32
    }
    fn h_nr_runnable(&self, c: CpuId) -> u32 {
        self.nr_running(c)
    }
    fn cpu_load(&self, c: CpuId) -> u64 {
        match self.state[c.idx()] {
            'B' => 1024,
            'S' => 3,
            _ => 0,
        }
    }
    fn cpu_util(&self, c: CpuId) -> u64 {
        if self.state[c.idx()] == 'I' {
            0
        } else {
            1000
        }
    }
    fn cpu_runnable(&self, c: CpuId) -> u64 {
        self.cpu_util(c)
    }
    fn idle_exit_latency(&self, _: CpuId) -> u64 {
        0
    }
    fn idle_stamp(&self, _: CpuId) -> u64 {
        0
    }
    fn has_idle_cores(&self, _: CpuId) -> bool {
        self.idle_cores
    }
    fn nr_idle_scan(&self, _: CpuId) -> u32 {
        self.scan
    }
    fn sis_util(&self) -> bool {
        self.sis_util
    }
    fn sis_prop(&self) -> bool {
        !self.sis_util
    }
}

fn task(allowed: &CpuMask, prev: u32) -> PlaceTask<'_> {
    PlaceTask {
        allowed,
        prev: CpuId(prev),
        recent_used_cpu: CpuId(prev),
        wakee_flips: 0,
        load: 512,
    }
}

fn waker(cpu: u32) -> Waker {
    Waker {
        cpu: CpuId(cpu),
        wakee_flips: 0,
        load: 0,
        sync: false,
    }
}

#[test]
fn idle_core_is_preferred_over_an_idle_smt_sibling() {
    // 1 LLC, 2 cores × 2 threads: core 0 = CPUs {0,1}, core 1 = {2,3}.
    // CPU 0 busy, CPU 1 idle (half-idle core), CPUs 2,3 idle (idle core).
    let m = make_test_machine(1, 1, 2, 2);
    assert_eq!(m.core_span(CpuId(0)).to_list(), "0-1");
    let v = View::new(m, "BIII", true);
    let all = CpuMask::full(4);
    let p = task(&all, 0);
    let out = place_wakeup(&v, &p, &waker(0));
    assert_eq!(out.cpu, CpuId(2), "whole idle core wins");
    // Without idle cores flagged, the SMT sibling of prev is taken first.
    let v = View {
        idle_cores: false,
        ..View::new(make_test_machine(1, 1, 2, 2), "BIII", true)
    };
    assert_eq!(place_wakeup(&v, &p, &waker(0)).cpu, CpuId(1));
}

#[test]
fn failed_idle_core_scan_clears_has_idle_cores() {
    // Every core has a busy thread: the idle-core scan fails, falls back to
    // the first idle CPU, and asks to clear has_idle_cores.
    let v = View::new(make_test_machine(1, 1, 2, 2), "BIBI", true);
    let all = CpuMask::full(4);
    let out = place_wakeup(&v, &task(&all, 0), &waker(0));
    assert_eq!(out.cpu, CpuId(1));
    assert_eq!(out.clear_idle_cores, Some(CpuId(0)));
}

#[test]
fn sched_idle_cpu_is_chosen_with_the_feature_and_not_without() {
    // 1 LLC, 4 cores, no SMT. prev = CPU 0 busy, CPU 2 runs only SCHED_IDLE.
    let all = CpuMask::full(4);
    let v = View::new(make_test_machine(1, 1, 4, 1), "BBSB", true);
    assert_eq!(place_wakeup(&v, &task(&all, 0), &waker(0)).cpu, CpuId(2));
    // NO_SCHED_IDLE_AS_IDLE: no truly idle CPU, so the wakee stays on prev.
    let v = View::new(make_test_machine(1, 1, 4, 1), "BBSB", false);
    assert_eq!(place_wakeup(&v, &task(&all, 0), &waker(0)).cpu, CpuId(0));
    // A truly idle CPU is taken in both modes.
    let v = View::new(make_test_machine(1, 1, 4, 1), "BBSI", false);
    assert_eq!(place_wakeup(&v, &task(&all, 0), &waker(0)).cpu, CpuId(3));
}

#[test]
fn prev_running_only_sched_idle_is_kept_with_the_feature() {
    let all = CpuMask::full(4);
    let v = View::new(make_test_machine(1, 1, 4, 1), "SIBB", true);
    assert_eq!(place_wakeup(&v, &task(&all, 0), &waker(0)).cpu, CpuId(0));
    let v = View::new(make_test_machine(1, 1, 4, 1), "SIBB", false);
    assert_eq!(place_wakeup(&v, &task(&all, 0), &waker(0)).cpu, CpuId(1));
}

#[test]
fn sis_util_zero_depth_stops_the_scan() {
    let all = CpuMask::full(4);
    let mut v = View::new(make_test_machine(1, 1, 4, 1), "BBBI", true);
    v.scan = 0;
    assert_eq!(place_wakeup(&v, &task(&all, 0), &waker(0)).cpu, CpuId(0));
}

#[test]
fn sis_util_zero_depth_stops_an_idle_core_scan_too() {
    // CPUs 2,3 form an idle core and the LLC says it has one, but SIS_UTIL
    // finds the LLC overloaded (depth 0): select_idle_cpu gives up before
    // scanning, so the wakee stays on prev (busy CPU 0, sibling CPU 1 busy).
    let all = CpuMask::full(4);
    let mut v = View::new(make_test_machine(1, 1, 2, 2), "BBII", true);
    v.scan = 0;
    assert_eq!(place_wakeup(&v, &task(&all, 0), &waker(0)).cpu, CpuId(0));
    // SIS_PROP's bound (SIS_UTIL off) never applied to the idle-core scan.
    v.sis_util = false;
    assert_eq!(place_wakeup(&v, &task(&all, 0), &waker(0)).cpu, CpuId(2));
}

#[test]
fn scan_respects_affinity() {
    let only_2_3 = CpuMask::from_cpus(4, &[2, 3]).unwrap();
    let v = View::new(make_test_machine(1, 1, 4, 1), "BIBI", true);
    let p = PlaceTask {
        prev: CpuId(2),
        recent_used_cpu: CpuId(2),
        ..task(&only_2_3, 2)
    };
    assert_eq!(place_wakeup(&v, &p, &waker(2)).cpu, CpuId(3));
}

#[test]
fn wake_wide_needs_many_flips_on_both_sides() {
    // LLC of 4: slave ≥ 4 and master ≥ slave·4.
    let v = View::new(make_test_machine(1, 1, 4, 1), "BBBB", true);
    let all = CpuMask::full(4);
    let mut p = task(&all, 0);
    let mut w = waker(1);
    p.wakee_flips = 4;
    w.wakee_flips = 16;
    assert!(wake_wide(&v, &p, &w));
    w.wakee_flips = 15;
    assert!(!wake_wide(&v, &p, &w));
    p.wakee_flips = 3;
    w.wakee_flips = 100;
    assert!(!wake_wide(&v, &p, &w));
}

#[test]
fn wake_affine_pulls_to_an_idle_waker_cpu_in_the_same_llc() {
    // Waker CPU 1 idle, prev CPU 0 busy, same LLC → this (1).
    let v = View::new(make_test_machine(1, 1, 4, 1), "BIBB", false);
    let all = CpuMask::full(4);
    let (c, moved) = wake_affine(&v, 117, &task(&all, 0), &waker(1), CpuId(0));
    assert_eq!((c, moved), (CpuId(1), true));
    // prev idle → prev.
    let v = View::new(make_test_machine(1, 1, 4, 1), "IBBB", false);
    let (c, moved) = wake_affine(&v, 117, &task(&all, 0), &waker(1), CpuId(0));
    assert_eq!((c, moved), (CpuId(0), false));
}

#[test]
fn fork_slow_path_prefers_sched_idle_then_idle_groups() {
    // 2 nodes × 1 LLC × 2 cores: CPUs {0,1} node 0, {2,3} node 1.
    let all = CpuMask::full(4);
    // Node 0 busy, node 1 has one SCHED_IDLE-only CPU and one busy.
    let v = View::new(make_test_machine(2, 1, 2, 1), "BBSB", true);
    assert_eq!(place_fork(&v, &task(&all, 0), CpuId(0)), CpuId(2));
    // Node 1 fully idle: it has spare capacity and more idle CPUs.
    let v = View::new(make_test_machine(2, 1, 2, 1), "BBII", false);
    let c = place_fork(&v, &task(&all, 0), CpuId(0));
    assert!(c == CpuId(2) || c == CpuId(3), "got {c}");
    // Everything idle: stay local.
    let v = View::new(make_test_machine(2, 1, 2, 1), "IIII", false);
    assert_eq!(place_fork(&v, &task(&all, 0), CpuId(0)), CpuId(0));
}

#[test]
fn fork_keeps_a_small_numa_imbalance_near_its_parent() {
    // 2 nodes × 1 LLC × 40 cores: CPUs 0-39 node 0, 40-79 node 1; the NUMA
    // domain's imb_numa_nr is 40 >> 3 = 5 (one LLC per node).
    let m = make_test_machine(2, 1, 40, 1);
    assert!(m.node_span(CpuId(0)).test(CpuId(39)) && !m.node_span(CpuId(0)).test(CpuId(40)));
    let node = |c: CpuId| c.0 / 40;
    let all = CpuMask::full(80);
    let state =
        |busy: u32| -> String { (0..80).map(|c| if c < busy { 'B' } else { 'I' }).collect() };
    let numa = View::new(m.clone(), &state(1), false);
    assert_eq!(numa.d.domains(CpuId(0)).last().unwrap().imb_numa_nr, 5);
    // The parent alone on CPU 0: node 0 has 39 idle CPUs, node 1 has 40.
    // Without the allowance node 1 wins on idle CPUs; with it (1 + 1 ≤ 5
    // running, idle CPUs 1 apart) the child stays on the parent's node.
    assert_eq!(node(place_fork(&numa, &task(&all, 0), CpuId(0))), 0);
    // Five running on node 0: 5 + 1 > 5, so the idle CPUs decide.
    let v = View::new(m.clone(), &state(5), false);
    assert_eq!(node(place_fork(&v, &task(&all, 0), CpuId(0))), 1);
    // Three running (3 + 1 ≤ 5) but idle CPUs 3 apart (> NUMA_IMBALANCE_MIN).
    let v = View::new(m.clone(), &state(3), false);
    assert_eq!(node(place_fork(&v, &task(&all, 0), CpuId(0))), 1);
    // Two running, idle CPUs 2 apart: still kept.
    let v = View::new(m.clone(), &state(2), false);
    assert_eq!(node(place_fork(&v, &task(&all, 0), CpuId(0))), 0);
    // The allowance is capped by the local CPUs the task may use: allowed
    // CPUs 0-1 and 40-41, parent on CPU 0 (cap 2: 1 + 1 ≤ 2, idle CPUs 1
    // apart, kept) ...
    let mut some = CpuMask::new(80);
    for c in [0, 1, 40, 41] {
        some.set(CpuId(c));
    }
    assert_eq!(node(place_fork(&numa, &task(&some, 0), CpuId(0))), 0);
    // ... and with CPUs 0 and 1 both running (2 + 1 > 2, where the
    // uncapped 5 would keep it) it goes.
    let v = View::new(m, &state(2), false);
    assert_eq!(node(place_fork(&v, &task(&some, 0), CpuId(0))), 1);
}

#[test]
fn fork_numa_rules_of_older_releases() {
    // The machine of the test above: 2 nodes × 40 CPUs, imb_numa_nr 5,
    // NUMA span 80 (a quarter is 20).
    let m = make_test_machine(2, 1, 40, 1);
    let node = |c: CpuId| c.0 / 40;
    let all = CpuMask::full(80);
    let state =
        |busy: u32| -> String { (0..80).map(|c| if c < busy { 'B' } else { 'I' }).collect() };
    let fork = |rule: NumaForkRule, busy: u32| {
        let mut v = View::new(m.clone(), &state(busy), false);
        v.numa_rule = rule;
        node(place_fork(&v, &task(&all, 0), CpuId(0)))
    };
    // Before 5.5 (no rule): the group with more idle CPUs.
    assert_eq!(fork(NumaForkRule::None, 1), 1);
    // 5.5-5.10: any idle CPU keeps it local, even with 39 of 40 running.
    assert_eq!(fork(NumaForkRule::LocalIdle, 39), 0);
    // 5.11-5.17: local while fewer than 80 / 4 = 20 run there.
    assert_eq!(fork(NumaForkRule::Quarter, 19), 0);
    assert_eq!(fork(NumaForkRule::Quarter, 20), 1);
    // 5.18-5.19: local while 1 + running <= 5, whatever the idle CPUs.
    assert_eq!(fork(NumaForkRule::ImbNumaNr, 4), 0);
    assert_eq!(fork(NumaForkRule::ImbNumaNrIdle, 4), 1);
    assert_eq!(fork(NumaForkRule::ImbNumaNr, 5), 1);
}

#[test]
fn the_scan_pays_a_line_per_cpu_read_and_one_more_per_sched_idle_check() {
    // 1 LLC, 4 cores, no SMT; the waker is CPU 0 and so is prev: target 0
    // is the waker's own runqueue (free). The scan from CPU 1 reads CPUs 1
    // and 2 (busy) and 3 (idle, taken). SCHED_IDLE_AS_IDLE asks
    // sched_idle_cpu of each busy one: 2 + 2 + 1 = 5 lines; without it 3.
    let all = CpuMask::full(4);
    let m = make_test_machine(1, 1, 4, 1);
    let line = m.line_transfer_ns(CpuId(0), CpuId(1));
    assert!(line > 0);
    let v = View::new(m, "BBBI", true);
    let out = place_wakeup(&v, &task(&all, 0), &waker(0));
    assert_eq!(out.cpu, CpuId(3));
    assert_eq!(out.probes.available_idle_ns, 3 * line);
    assert_eq!(out.probes.sched_idle_ns, 2 * line);
    assert_eq!(out.scan_ns, None, "SIS_UTIL: no avg_scan_cost to feed");
    let v = View::new(make_test_machine(1, 1, 4, 1), "BBBI", false);
    let out = place_wakeup(&v, &task(&all, 0), &waker(0));
    assert_eq!(out.cpu, CpuId(3));
    assert_eq!(out.probes.total(), 3 * line);
    assert_eq!(out.probes.sched_idle_ns, 0);
    // SIS_PROP: the loop's reads are the scan time it measures (the
    // target's read, the waker's own runqueue, is outside the loop and
    // free anyway).
    let mut v = View::new(make_test_machine(1, 1, 4, 1), "BBBI", true);
    v.sis_util = false;
    let out = place_wakeup(&v, &task(&all, 0), &waker(0));
    assert_eq!(out.scan_ns, Some((CpuId(0), 5 * line)));
}

#[test]
fn an_idle_prev_costs_one_line_and_ends_the_search() {
    // Waker on CPU 0 (busy), the wakee's prev CPU 2 idle: wake_affine
    // keeps prev (it is idle), the target check reads CPU 2 once.
    let all = CpuMask::full(4);
    let m = make_test_machine(1, 1, 4, 1);
    let line = m.line_transfer_ns(CpuId(0), CpuId(2));
    let v = View::new(m, "BBIB", true);
    let out = place_wakeup(&v, &task(&all, 2), &waker(0));
    assert_eq!(out.cpu, CpuId(2));
    assert_eq!(out.probes.total(), line);
}

#[test]
fn update_avg_moves_an_eighth_of_the_way() {
    assert_eq!(update_avg(0, 800), 100);
    assert_eq!(update_avg(100, 800), 187);
    assert_eq!(update_avg(187, 27), 167);
    assert_eq!(update_avg(5, 0), 5, "-5 / 8 truncates to 0");
}

//! Criterion micro-benchmarks of the simulator's hot mechanisms:
//! the event queue, the EEVDF pick, min_slice, enqueue + dequeue, select_idle_sibling,
//! one periodic balance pass's group statistics and decision, and the PELT
//! update. Each drives the public function the simulator calls, on a state
//! built here; figures go to BENCHMARKS.md, nothing is asserted.
//!
//!     cargo bench -p schedlab-core --bench micro            # all
//!     cargo bench -p schedlab-core --bench micro -- pelt    # a filter
//!
//! States are deterministic (a fixed-seed ChaCha stream), so two builds are
//! compared on the same work.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_core::event::queue::EventQueue;
use schedlab_core::event::Event;
use schedlab_core::fair::balance::lb::{find_src_group, sd_lb_stats, CpuIdle};
use schedlab_core::fair::eevdf::{
    dequeue_entity, enqueue_entity, enqueue_tree, min_slice, pick_eevdf, CurrResched, EevdfParams,
    EnqueueKind,
};
use schedlab_core::fair::pelt::SchedAvg;
use schedlab_core::fair::select::{select_idle_sibling, CpuView, PlaceTask};
use schedlab_core::ids::{CfsRqId, CpuId, EntityId};
use schedlab_core::machine::domains::SchedDomains;
use schedlab_core::machine::{preset, CpuMask, Machine};
use schedlab_core::rq::{CfsRq, SchedEntity};

/// The kernel defaults at HZ 250 (base slice 3 ms scaled for >= 8 CPUs,
/// tick 4 ms) with the default features.
const P: EevdfParams = EevdfParams {
    base_slice_ns: 3_000_000,
    base_slice_normalized_ns: 700_000,
    tick_ns: 4_000_000,
    place_lag: true,
    place_deadline_initial: true,
    run_to_parity: true,
    preempt_short: true,
    delay_dequeue: true,
    delay_zero: true,
    curr_resched: CurrResched::Unprotected,
};

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(17)
}

/// Pending events as in a busy run: `n` pending, each pop followed by one
/// push 0-4 ms later (ticks, burst ends, timers).
fn event_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue/pop_push");
    for n in [64usize, 4_096, 262_144] {
        let mut r = rng();
        let mut q = EventQueue::new();
        for i in 0..n {
            q.push(
                r.random_range(0..4_000_000),
                Event::Resched {
                    cpu: CpuId(i as u32 % 4096),
                },
            );
        }
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                let (t, e) = q.pop().unwrap();
                q.push(t + r.random_range(1..4_000_000), black_box(e));
            })
        });
    }
    g.finish();
}

/// `n` nice-0 entities with vruntimes and deadlines spread over a few
/// slices, all queued (none is curr).
fn queue_of(n: usize) -> (CfsRq, Vec<SchedEntity>) {
    let mut r = rng();
    let mut ents: Vec<SchedEntity> = (0..n)
        .map(|_| {
            let v = r.random_range(0..6_000_000i64);
            SchedEntity {
                weight: 1024,
                vruntime: v,
                deadline: v + 3_000_000,
                slice: 3_000_000,
                cfs_rq: CfsRqId(0),
                ..Default::default()
            }
        })
        .collect();
    let mut cfs = CfsRq::default();
    for i in 0..n {
        ents[i].on_rq = true;
        cfs.load_weight += ents[i].weight;
        cfs.nr_queued += 1;
        enqueue_tree(&mut cfs, &ents, EntityId(i as u32));
    }
    (cfs, ents)
}

fn eevdf_pick(c: &mut Criterion) {
    let mut g = c.benchmark_group("eevdf/pick");
    for n in [2usize, 16, 256] {
        let (cfs, ents) = queue_of(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| pick_eevdf(black_box(&cfs), &ents, false))
        });
    }
    g.finish();
}

/// The queue's shortest slice (`cfs_rq_min_slice`, read at every pick and
/// every wakeup that does not preempt under RUN_TO_PARITY): `kept` is
/// `eevdf::min_slice` (the timeline's kept minimum), `walk` the walk over
/// the queue it replaced.
fn eevdf_min_slice(c: &mut Criterion) {
    let mut g = c.benchmark_group("eevdf/min_slice");
    for n in [2usize, 16, 256] {
        let (cfs, ents) = queue_of(n);
        g.bench_with_input(BenchmarkId::new("kept", n), &n, |b, _| {
            b.iter(|| min_slice(black_box(&cfs), &ents))
        });
        g.bench_with_input(BenchmarkId::new("walk", n), &n, |b, _| {
            b.iter(|| {
                black_box(&cfs)
                    .timeline
                    .iter()
                    .map(|(_, id)| ents[id.idx()].slice)
                    .min()
            })
        });
    }
    g.finish();
}

/// A wakeup's enqueue and a sleep's dequeue of one more entity on a queue
/// of `n` (update_curr, placement with lag, the timeline insert/remove).
fn eevdf_enqueue_dequeue(c: &mut Criterion) {
    let mut g = c.benchmark_group("eevdf/enqueue_dequeue");
    for n in [2usize, 16, 256] {
        let (mut cfs, mut ents) = queue_of(n);
        ents.push(SchedEntity {
            weight: 1024,
            slice: 3_000_000,
            cfs_rq: CfsRqId(0),
            ..Default::default()
        });
        let id = EntityId(n as u32);
        let mut now = 1_000_000u64;
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                now += 1_000;
                enqueue_entity(&mut cfs, &mut ents, id, EnqueueKind::Wakeup, now, &P);
                let (_, gone) = dequeue_entity(&mut cfs, &mut ents, id, true, now, &P);
                // A delayed dequeue leaves it queued: finish it as a pick would.
                if ents[id.idx()].on_rq {
                    dequeue_entity(&mut cfs, &mut ents, id, false, now, &P);
                }
                gone
            })
        });
    }
    g.finish();
}

/// A machine state for placement and balancing: per CPU whether it is idle
/// and how many nice-0 tasks it runs.
struct View {
    m: Machine,
    d: SchedDomains,
    nr: Vec<u32>,
}

impl View {
    /// `busy_pct` % of the CPUs busy (one to three tasks), the rest idle,
    /// drawn from the fixed seed.
    fn new(name: &str, busy_pct: u32) -> View {
        let m = preset(name).expect("preset");
        let d = SchedDomains::build(&m, 250);
        let mut r = rng();
        let nr = (0..m.nr_cpus())
            .map(|_| {
                if r.random_range(0..100) < busy_pct {
                    r.random_range(1..4)
                } else {
                    0
                }
            })
            .collect();
        View { m, d, nr }
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
        false
    }
    fn available_idle_cpu(&self, c: CpuId) -> bool {
        self.nr[c.idx()] == 0
    }
    fn sched_idle_cpu(&self, _: CpuId) -> bool {
        false
    }
    fn nr_running(&self, c: CpuId) -> u32 {
        self.nr[c.idx()]
    }
    fn h_nr_runnable(&self, c: CpuId) -> u32 {
        self.nr[c.idx()]
    }
    fn cpu_load(&self, c: CpuId) -> u64 {
        self.nr[c.idx()] as u64 * 1024
    }
    fn cpu_util(&self, c: CpuId) -> u64 {
        (self.nr[c.idx()] as u64 * 1024).min(1024)
    }
    fn cpu_runnable(&self, c: CpuId) -> u64 {
        self.nr[c.idx()] as u64 * 1024
    }
    fn idle_exit_latency(&self, _: CpuId) -> u64 {
        0
    }
    fn idle_stamp(&self, _: CpuId) -> u64 {
        0
    }
    fn has_idle_cores(&self, _: CpuId) -> bool {
        true
    }
    fn nr_idle_scan(&self, c: CpuId) -> u32 {
        self.d.shortcuts(c).sd_llc_size
    }
    fn sis_util(&self) -> bool {
        true
    }
}

/// `select_idle_sibling` for a wakee whose previous CPU and target are
/// busy, on a mostly busy machine (90 %): the idle-core and idle-CPU scans
/// of the target's LLC run.
fn select_idle_sibling_bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("select_idle_sibling");
    for name in [
        "a7-octa",
        "icx-2s-80c-ht",
        "epyc-2s-256c-smt",
        "big-8s-4096",
    ] {
        let mut v = View::new(name, 90);
        let n = v.m.nr_cpus();
        v.nr[0] = 2;
        v.nr[1] = 1;
        let allowed = CpuMask::full(n);
        let p = PlaceTask {
            allowed: &allowed,
            prev: CpuId(1),
            recent_used_cpu: CpuId(1),
            wakee_flips: 0,
            load: 512,
        };
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| select_idle_sibling(&v, black_box(&p), CpuId(1), CpuId(0)))
        });
    }
    g.finish();
}

/// One periodic balance pass from an idle CPU 0 (CPU_IDLE): every domain
/// of CPU 0, bottom-up, computes its groups' statistics and looks for a
/// source group, as `sched_balance_rq` does before moving tasks. Half the
/// CPUs busy.
fn balance_pass(c: &mut Criterion) {
    let mut g = c.benchmark_group("balance/periodic_pass");
    for name in [
        "a7-octa",
        "icx-2s-80c-ht",
        "epyc-2s-256c-smt",
        "big-8s-4096",
    ] {
        let mut v = View::new(name, 50);
        v.nr[0] = 0;
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                let doms = v.d.domains(CpuId(0));
                let mut found = 0;
                for (k, sd) in doms.iter().enumerate() {
                    let child = k.checked_sub(1).map(|c| doms[c].flags);
                    let sds = sd_lb_stats(&v, sd, child, CpuId(0), None);
                    if find_src_group(sd, CpuIdle::Idle, &sds).is_some() {
                        found += 1;
                    }
                }
                black_box(found)
            })
        });
    }
    g.finish();
}

/// `___update_load_avg` of a running entity, 1-4 ms after its last update
/// (one to four PELT periods crossed), as at every tick or dequeue.
fn pelt_update(c: &mut Criterion) {
    let mut r = rng();
    let mut sa = SchedAvg::default();
    let mut now = 0u64;
    c.bench_function("pelt/update", |b| {
        b.iter(|| {
            now += r.random_range(1_000_000..4_000_000);
            sa.update(black_box(now), 1024, 1, true, 1024)
        })
    });
}

criterion_group!(
    benches,
    event_queue,
    eevdf_pick,
    eevdf_min_slice,
    eevdf_enqueue_dequeue,
    select_idle_sibling_bench,
    balance_pass,
    pelt_update
);
criterion_main!(benches);

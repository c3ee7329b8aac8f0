//! Trace replay (`schedlab_workload::replay`): hand-made traces, the real
//! kernel fixture, and the simulate -> trace -> replay -> simulate round trip.

use std::collections::HashMap;

use schedlab_core::features::PreemptModel;
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::program::{Op, Policy, TaskSpec, TimerRef, TimerSpec, Workload};
use schedlab_core::Sim;
use schedlab_core::SimConfig;
use schedlab_output::ftrace_text::SpooledTraceWriter;
use schedlab_workload::replay::{replay_trace, ReplayErrorKind, ReplayOptions};

// ------------------------------------------------------------ hand-made traces

/// One kernel-layout line.
fn line(ctx: &str, pid: u32, cpu: u32, flags: &str, t_us: u64, ev: &str) -> String {
    format!(
        "{:>16}-{:<7} [{:03}] {} {:>6}.{:06}: {}",
        ctx,
        pid,
        cpu,
        flags,
        t_us / 1_000_000,
        t_us % 1_000_000,
        ev
    )
}

fn switch(pc: &str, pp: u32, state: &str, nc: &str, np: u32) -> String {
    format!(
        "sched_switch: prev_comm={pc} prev_pid={pp} prev_prio=120 prev_state={state} ==> next_comm={nc} next_pid={np} next_prio=120"
    )
}

fn waking(kind: &str, c: &str, p: u32, cpu: u32) -> String {
    format!("{kind}: comm={c} pid={p} prio=120 target_cpu={cpu:03}")
}

const HEADER: &str = "# tracer: nop\n#\n";

fn opts() -> ReplayOptions {
    ReplayOptions::default()
}

// ---------------------------------------------------------- simulation glue

fn config(duration_ns: Option<u64>) -> SimConfig {
    SimConfig {
        hz: 250,
        preempt: PreemptModel::None,
        duration_ns,
        ..SimConfig::default()
    }
}

/// Simulates on a preset without a trace (as `schedlab run` does).
fn run(w: &Workload, machine: &str, duration_ns: Option<u64>) -> (Sim<NullSink>, u64) {
    run_with(w, machine, config(duration_ns))
}

/// [`run`] with a given configuration.
fn run_with(w: &Workload, machine: &str, cfg: SimConfig) -> (Sim<NullSink>, u64) {
    let m = preset(machine).unwrap();
    let mut sim = Sim::new(m, w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    assert!(!sim.deadlock, "the replay deadlocked at {} ns", res.end_ns);
    (sim, res.end_ns)
}

/// Simulates with `--trace`: the trace text as `trace.txt` holds it.
fn run_traced_with(
    w: &Workload,
    machine: &str,
    cfg: SimConfig,
) -> (Sim<SpooledTraceWriter>, String) {
    let m = preset(machine).unwrap();
    let nr = m.nr_cpus() as u32;
    let mut sim = Sim::new(m, w, cfg, SpooledTraceWriter::new().unwrap()).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none());
    assert!(!sim.deadlock);
    let mut out = Vec::new();
    // Keep the stats: take the sink out of a clone-free path by swapping.
    let sink = std::mem::replace(sim.sink_mut(), SpooledTraceWriter::new().unwrap());
    sink.finish(nr, &mut out).unwrap();
    (sim, String::from_utf8(out).unwrap())
}

mod errors;
mod hand_made;
mod real_and_round_trip;

//! The timeline's data: each traced run's slices per CPU as JSON for
//! the page's script.

use super::*;
// ---------------------------------------------------------------- timeline data

fn policy_of(run: &RunData, pid: u32) -> &str {
    if pid == 0 {
        return "idle";
    }
    run.summary
        .tasks
        .iter()
        .find(|t| t.pid == pid)
        .map_or("other", |t| t.policy.as_str())
}

/// Timeline JSON of one run: `tasks` (index 0 is idle) and per CPU a flat
/// array `[start_us, duration_us, task_index, ...]`.
pub(super) fn timeline_json(run: &RunData) -> Value {
    let Some(tr) = &run.trace else {
        return Value::Null;
    };
    let mut index: BTreeMap<u32, usize> = BTreeMap::new();
    let mut tasks = vec![json!({"name": "idle", "pid": 0, "policy": "idle"})];
    index.insert(0, 0);
    let mut cpus = Vec::new();
    let mut lanes = Vec::new();
    let (mut t0, mut t1) = (u64::MAX, 0u64);
    let ncpu = run.summary.machine.cpus;
    let all: BTreeSet<u32> = (0..ncpu).chain(tr.timeline.cpus.keys().copied()).collect();
    for cpu in all {
        let mut lane: Vec<u64> = Vec::new();
        for sp in tr.timeline.spans(cpu) {
            let k = *index.entry(sp.pid).or_insert_with(|| {
                let name = run
                    .summary
                    .tasks
                    .iter()
                    .find(|t| t.pid == sp.pid)
                    .map(|t| t.name.clone())
                    .or_else(|| tr.comms.get(&sp.pid).cloned())
                    .unwrap_or_else(|| format!("pid {}", sp.pid));
                tasks.push(json!({"name": name, "pid": sp.pid, "policy": policy_of(run, sp.pid)}));
                tasks.len() - 1
            });
            let (a, b) = (sp.start_ns / 1000, sp.end_ns / 1000);
            t0 = t0.min(a);
            t1 = t1.max(b);
            lane.extend([a, b - a, k as u64]);
        }
        cpus.push(cpu);
        lanes.push(lane);
    }
    if t0 > t1 {
        t0 = 0;
        t1 = run.summary.duration_ns / 1000;
    }
    json!({"cpus": cpus, "t0": t0, "t1": t1, "tasks": tasks, "lanes": lanes})
}

/// Names of the traced tasks (not idle) of a run.
pub(super) fn traced_tasks(run: &RunData) -> Vec<String> {
    let Some(tr) = &run.trace else {
        return Vec::new();
    };
    let pids: BTreeSet<u32> = tr
        .timeline
        .cpus
        .values()
        .flatten()
        .map(|s| s.pid)
        .filter(|&p| p != 0)
        .collect();
    pids.into_iter()
        .map(|pid| {
            run.summary
                .tasks
                .iter()
                .find(|t| t.pid == pid)
                .map(|t| t.name.clone())
                .or_else(|| tr.comms.get(&pid).cloned())
                .unwrap_or_else(|| format!("pid {pid}"))
        })
        .collect()
}

//! The text of a run: the `profile` file and what `schedlab run` prints.

use super::by_name::by_name;
use super::RunResults;
use crate::summary::Summary;
use crate::table;
use schedlab_core::stats::SampleStats;

/// The `profile` file: where the CPU time of all CPUs went.
pub fn profile_text(s: &Summary) -> String {
    let p = &s.profile;
    let paths = [
        ("context_switch", p.paths_ns.context_switch),
        ("wakeup", p.paths_ns.wakeup),
        ("balance", p.paths_ns.balance),
        ("balance_atomic", p.paths_ns.balance_atomic),
        ("newidle", p.paths_ns.newidle),
        ("steal", p.paths_ns.steal),
        ("throttle", p.paths_ns.throttle),
        ("available_idle_cpu", p.paths_ns.available_idle_cpu),
        ("sched_idle_cpu", p.paths_ns.sched_idle_cpu),
    ];
    let total: u64 = p.task_ns + p.idle_ns + paths.iter().map(|x| x.1).sum::<u64>();
    let pct = |v: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * v as f64 / total as f64
        }
    };
    let mut out =
        String::from("# schedlab profile: CPU time of all CPUs by path (ns, share of the total)\n");
    out.push_str(&format!(
        "{:<16} {:>18} {:>9.4}%\n",
        "task",
        p.task_ns,
        pct(p.task_ns)
    ));
    out.push_str(&format!(
        "{:<16} {:>18} {:>9.4}%\n",
        "idle",
        p.idle_ns,
        pct(p.idle_ns)
    ));
    for (n, v) in paths {
        out.push_str(&format!("{n:<16} {v:>18} {:>9.4}%\n", pct(v)));
    }
    out.push_str(&format!("{:<16} {:>18} {:>9.4}%\n", "total", total, 100.0));
    out
}

/// How `schedlab run` prints a run ([`RunResults::text_report_with`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TextOptions {
    /// One row per thread instead of one per task name.
    pub per_task: bool,
    /// The generator the workload came from (`hackbench`, `oltp`): its
    /// benchmark's own result line is printed last.
    pub generator: Option<String>,
    /// The machine's idle states, `(name, exit latency ns)`, shallowest
    /// first (for the note on constant wakeup latency).
    pub idle_states: Vec<(String, u64)>,
    /// The hrtimer slack of fair tasks (ns).
    pub timer_slack_ns: u64,
    /// The benchmark's own opening lines, printed just above its result
    /// line (hackbench's `Running in ... mode with N groups ...`).
    pub banner: Vec<String>,
}

/// A wakeup latency with at least this many samples and no spread gets a
/// note naming the cause.
const CONSTANT_LATENCY_MIN_SAMPLES: u64 = 10;

impl RunResults {
    /// What `schedlab run` prints by default ([`TextOptions::default`]).
    pub fn text_report(&self) -> String {
        self.text_report_with(&TextOptions::default())
    }

    /// What `schedlab run` prints: the task table (one row per task name,
    /// or per thread with `per_task`), the group table (if any group), the
    /// wakeup latency (if any thread waited on a timer), notes (constant
    /// wakeup latency, a benchmark cut short), then the generator's own
    /// result line (hackbench's `Time:`, OLTP's `tps =`).
    pub fn text_report_with(&self, o: &TextOptions) -> String {
        let s = &self.summary;
        let names = by_name(&s.tasks);
        let mut text = if o.per_task {
            table::task_table(&s.tasks)
        } else {
            let mut t = table::name_table(&names);
            if names.len() < s.tasks.len() {
                t.push_str(&format!(
                    "({} threads in {} rows: one per task name, sums over its threads; --per-task prints one row per thread)\n",
                    s.tasks.len(),
                    names.len()
                ));
            }
            t
        };
        if !s.groups.is_empty() {
            text.push('\n');
            text.push_str(&table::group_table(&s.groups));
        }
        // Latency rows: per task name (exact, from the raw samples) or per
        // thread; only rows with samples.
        let rows: Vec<(String, SampleStats)> = if o.per_task {
            s.tasks
                .iter()
                .filter(|t| t.wakeup_latency_us.n > 0)
                .map(|t| (t.name.clone(), t.wakeup_latency_us.to_stats()))
                .collect()
        } else {
            self.wakeup_latency
                .iter()
                .map(|g| (g.name.clone(), g.stats.clone()))
                .collect()
        };
        if !rows.is_empty() {
            text.push_str("\nwakeup latency (us, rt-app wu_lat)\n");
            let refs: Vec<(&str, &SampleStats)> =
                rows.iter().map(|(n, st)| (n.as_str(), st)).collect();
            text.push_str(&table::latency_table(&refs));
        }
        text.push_str(&missed_periods_table(s, o.per_task));
        let mut notes = Vec::new();
        for (name, st) in &rows {
            if st.n >= CONSTANT_LATENCY_MIN_SAMPLES && st.min == st.max {
                notes.push(constant_latency_note(name, st, o));
            }
        }
        let result = match o.generator.as_deref() {
            Some("hackbench") => hackbench_result(s, &mut notes),
            Some("oltp") => oltp_result(s),
            Some("schbench") => s.extra.get("schbench").map(|v| {
                let t = super::schbench::text(v);
                t.trim_end().to_string()
            }),
            Some("specjbb") => s
                .extra
                .get("specjbb")
                .map(|v| super::specjbb::text(v).trim_end().to_string()),
            _ => None,
        };
        if !notes.is_empty() {
            text.push('\n');
            for n in notes {
                text.push_str("note: ");
                text.push_str(&n);
                text.push('\n');
            }
        }
        if let Some(line) = result {
            text.push('\n');
            for b in &o.banner {
                text.push_str(b);
                text.push('\n');
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    }
}

/// The timer periods each task name (or thread, `per_task`) waited on and
/// how many it missed (its work ended after the timer's expiry: negative
/// slack), from summary.json's `deadlines`; empty when no thread waited
/// on a timer.
fn missed_periods_table(s: &Summary, per_task: bool) -> String {
    let mut rows: Vec<(String, u64, u64)> = Vec::new();
    for t in &s.tasks {
        let Some((periods, missed)) = t.periods_missed() else {
            continue;
        };
        let name = if per_task {
            t.name.clone()
        } else {
            super::by_name::task_name(&t.name).to_string()
        };
        match rows.iter_mut().find(|r| r.0 == name) {
            Some(r) => {
                r.1 += periods;
                r.2 += missed;
            }
            None => rows.push((name, periods, missed)),
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(4);
    let mut out = format!(
        "\nmissed periods (work ended after the timer's next expiry)\n{:<w$}  {:>8}  {:>8}  {:>7}\n",
        "task", "periods", "missed", "missed%"
    );
    for (name, periods, missed) in rows {
        let pct = if periods == 0 {
            0.0
        } else {
            100.0 * missed as f64 / periods as f64
        };
        out.push_str(&format!(
            "{name:<w$}  {periods:>8}  {missed:>8}  {pct:>6.1}%\n"
        ));
    }
    out
}

/// Why a wakeup latency is the same every period.
fn constant_latency_note(name: &str, st: &SampleStats, o: &TextOptions) -> String {
    let us = st.min;
    let slack_us = o.timer_slack_ns / 1000;
    let mut cause = String::from(
        "the model has no host noise yet (no interrupts, no other host load, no timer jitter), \
         so every period's wakeup pays the same fixed costs: the exit latency of the idle state \
         the CPU was in when the timer fired",
    );
    // The deepest state whose exit latency and the slack fit in the figure.
    let state = o
        .idle_states
        .iter()
        .filter(|(_, exit)| exit / 1000 + slack_us <= us)
        .max_by_key(|(_, exit)| *exit);
    match state {
        Some((state, exit)) if o.timer_slack_ns > 0 => {
            let exit_us = exit / 1000;
            cause.push_str(&format!(
                " (here {state}, {exit_us} us), the {slack_us} us timer slack, and the modelled \
                 wakeup and context-switch costs ({} us)",
                us - exit_us - slack_us
            ));
        }
        _ => cause.push_str(", the timer slack, and the modelled wakeup and context-switch costs"),
    }
    format!(
        "{name}: wakeup latency is {us} us in all {} samples (stddev 0): {cause}. \
         Real hardware spreads it (README: \"Why is a lone periodic task's latency constant?\").",
        st.n
    )
}

/// hackbench's own line, `Time: S.mmm` (seconds, 3 decimals, as hackbench
/// prints it); when the run ended before every thread finished, a note
/// saying so instead.
fn hackbench_result(s: &Summary, notes: &mut Vec<String>) -> Option<String> {
    if let Some(t) = s.extra.get("workload_time_s").and_then(|v| v.as_f64()) {
        return Some(format!("Time: {t:.3}"));
    }
    let receivers: Vec<_> = s
        .tasks
        .iter()
        .filter(|t| t.name.starts_with("hb-r"))
        .collect();
    let done = receivers.iter().filter(|t| t.loops > 0).count();
    notes.push(format!(
        "hackbench's Time: is not measured (summary.json has no workload_time_s): the run ended \
         at {} ms (--duration, or the workload's duration) before every thread finished its \
         loops ({done} of {} receivers done); hackbench reports a time only for a complete run",
        ms3(s.duration_ns),
        receivers.len()
    ));
    None
}

/// OLTP's throughput in pgbench's words: `tps = N` (the backends'
/// completed transactions per simulated second).
fn oltp_result(s: &Summary) -> Option<String> {
    let tps = s.extra.get("throughput_per_s").and_then(|v| v.as_f64())?;
    let workers = s
        .tasks
        .iter()
        .filter(|t| t.name.starts_with("worker-"))
        .count();
    Some(format!(
        "tps = {tps:.3} (transactions per simulated second: the {workers} workers' completed \
         transactions; summary.json throughput_per_s)"
    ))
}

fn ms3(ns: u64) -> String {
    format!("{}.{:03}", ns / 1_000_000, (ns % 1_000_000) / 1_000)
}

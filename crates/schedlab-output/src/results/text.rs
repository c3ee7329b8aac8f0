//! The text of a run: the `profile` file and what `schedlab run` prints.

use super::RunResults;
use crate::summary::Summary;
use crate::table;

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

impl RunResults {
    /// What `schedlab run` prints: the task table, the group table (if any
    /// group), and the wakeup latency per rt-app task (if any thread waited
    /// on a timer).
    pub fn text_report(&self) -> String {
        let s = &self.summary;
        let mut text = table::task_table(&s.tasks);
        if !s.groups.is_empty() {
            text.push('\n');
            text.push_str(&table::group_table(&s.groups));
        }
        if self.wakeup_latency.is_empty() {
            return text;
        }
        text.push_str("\nwakeup latency (us, rt-app wu_lat)\n");
        let rows: Vec<(&str, &_)> = self
            .wakeup_latency
            .iter()
            .map(|g| (g.name.as_str(), &g.stats))
            .collect();
        text.push_str(&table::latency_table(&rows));
        for g in &self.wakeup_latency {
            text.push_str(&format!("{}: {}\n", g.name, table::latency_line(&g.stats)));
        }
        text
    }
}

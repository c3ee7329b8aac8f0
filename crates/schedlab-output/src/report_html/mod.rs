//! `report.html`: one self-contained page for one or more run directories.
//!
//! ```text
//!  DIR/summary.json ──┐
//!  DIR/*-<task>.log ──┤ load_run ──► RunData ──┬─► render_report ──► report.html
//!  DIR/trace.txt ─────┤                        └─► write_plots_svg ─► *.svg
//!  DIR/schedstat ─────┤
//!  DIR/profile ───────┘
//! ```
//!
//! The page has no external references at all: styles and the one small
//! script are inline, plots are inline SVG, and a strict
//! `Content-Security-Policy` meta tag (`default-src 'none'`) makes the
//! browser refuse any fetch a future edit might add. Sections and the ids
//! tests (and users' scripts) can rely on:
//!
//! | id | what |
//! |---|---|
//! | `runs` | overview table: machine, duration, seed, which files were found |
//! | `features` | feature flags side by side, differing rows marked |
//! | `timeline` | zoomable per-CPU timeline (canvas, drawn by the inline script from the `report-data` JSON); `data-tasks` lists the traced tasks, the script sets `data-rendered="N tasks"` and `data-view="T0,T1"` (µs) |
//! | `timeline-tip` | hover text of the timeline |
//! | `latency-task` | `<select>`: sleeping tasks pooled, one task name (all its threads), or one thread |
//! | `latency-pool` | how many threads the pooled view holds (`data-sleeping`, `data-threads`) |
//! | `latency-cdf`, `latency-hist` | wakeup-latency CDF and histogram (inline SVG, one curve per run); `data-tasks` lists the tasks with samples |
//! | `util-heatmap` | per-CPU busy fraction over time, one SVG per run |
//! | `runnable-heatmap` | per-CPU mean runnable tasks over time, one SVG per traced run |
//! | `task-table` | one row per task name and run (threads summed) |
//! | `task-table-threads` | one row per thread and run, inside `<details id="task-threads">` |
//! | `schedstat-cpu`, `schedstat-domain`, `profile-table` (one row per path), `group-table` | tables |
//! | `report-data` | `<script type="application/json">` with the timeline data |
//!
//! What is drawn from what:
//!
//! * **timeline**: [`running_task_timeline`](crate::ftrace_text::running_task_timeline) of `trace.txt`, i.e. the
//!   `sched_switch` lines plus the context column; slices are coloured by
//!   the task's policy as `summary.json` states it (pid 0 is idle, pids not
//!   in the summary, such as rt-app's main thread, are "other").
//! * **latency**: the `wu_lat` column of the rt-app logs (µs), per thread,
//!   per task name and pooled over the threads of a run that sleep (timer
//!   samples in summary.json, or a non-zero `wu_lat`; never-sleeping
//!   threads such as SCHED_IDLE hogs are left out of every view). The x axis is logarithmic; a latency of
//!   0 µs is counted as 1 µs.
//! * **heatmap**: busy (non-idle) time per CPU per bin from the trace; bins
//!   are 10 ms, widened so that there are at most [`MAX_HEATMAP_BINS`]. A
//!   run without a trace gets one column, `busy_ns / (busy_ns + idle_ns)`
//!   from `summary.json`.
//! * **tables**: `summary.json` (tasks, groups, profile), `schedstat`.
//!
//! Limits: policies are per pid for the whole run (a `sched_setscheduler`
//! mid-run is not shown); the timeline data grows with the trace (about
//! 20 bytes per slice), so a long trace makes a large page; logs are
//! matched to tasks by the `-<task name>.log` suffix.

mod assets;
mod load;
mod plots;
mod timeline;

pub use load::*;

use assets::{CSP, SCRIPT, STYLE};
pub use plots::*;
use timeline::*;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::results::by_name::{by_name, task_name};

/// Default width of a heatmap bin (ns).
pub const HEATMAP_BIN_NS: u64 = 10_000_000;
/// Upper bound on the number of heatmap columns; bins widen to stay below.
pub const MAX_HEATMAP_BINS: u64 = 400;
/// The SVG namespace, only written into the standalone files (inline SVG in
/// HTML needs none, and the page stays free of `http` strings).
const SVG_NS: &str = "http://www.w3.org/2000/svg";
/// Upper bound on the points of one CDF curve (quantiles are kept).
const MAX_CDF_POINTS: usize = 400;
/// Histogram bins per decade of latency.
const HIST_BINS_PER_DECADE: usize = 4;

/// Colours of runs in overlaid plots, in run order (cycled).
pub const RUN_COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
];

/// Slice colours of the timeline, by policy (`idle` is pid 0, `other` a pid
/// the summary does not list).
pub const POLICY_COLORS: [(&str, &str); 6] = [
    ("SCHED_NORMAL", "#4e79a7"),
    ("SCHED_BATCH", "#f28e2b"),
    ("SCHED_IDLE", "#59a14f"),
    ("SCHED_FIFO", "#e15759"),
    ("idle", "#e6e6e6"),
    ("other", "#b07aa1"),
];

/// Escapes text for HTML/SVG element content and attribute values.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn run_color(i: usize) -> &'static str {
    RUN_COLORS[i % RUN_COLORS.len()]
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[u64], q: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn opt(v: Option<u64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "–".into())
}

/// Labels made unique by appending ` (n)` to repeats.
fn labels(runs: &[RunData]) -> Vec<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    runs.iter()
        .map(|r| {
            let n = seen.entry(r.label.as_str()).or_insert(0);
            *n += 1;
            if *n == 1 {
                r.label.clone()
            } else {
                format!("{} ({})", r.label, n)
            }
        })
        .collect()
}

/// Task names with latency samples, in first-seen order over the runs.
fn latency_tasks(runs: &[RunData]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for r in runs {
        for t in &r.latencies {
            if seen.insert(t.task.clone()) {
                out.push(t.task.clone());
            }
        }
    }
    out
}

/// Task names (thread names without their `-<n>` index) of at least two
/// threads with latency samples, in first-seen order over the runs.
fn latency_names(runs: &[RunData]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in runs {
        for t in &r.latencies {
            let name = task_name(&t.task);
            let threads = r
                .latencies
                .iter()
                .filter(|o| task_name(&o.task) == name)
                .count();
            if threads >= 2 && !out.iter().any(|o| o == name) {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// Sorted samples of `task` in `run`: one thread (`task` is a thread's
/// name), all threads of a task name (`cfs_thread`), or pooled over every
/// thread with samples (those that sleep) for `None`.
fn samples(run: &RunData, task: Option<&str>) -> Vec<u64> {
    let thread = task.is_some_and(|n| run.latencies.iter().any(|t| t.task == n));
    let mut v: Vec<u64> = run
        .latencies
        .iter()
        .filter(|t| match task {
            None => true,
            Some(n) if thread => n == t.task,
            Some(n) => n == task_name(&t.task),
        })
        .flat_map(|t| t.wu_lat_us.iter().copied())
        .collect();
    v.sort_unstable();
    v
}

/// Writes `report.html` ([`crate::outdir::write_file_atomic`]) and
/// the SVG plots ([`write_plots_svg`]) into `out_dir`, created if missing.
/// Returns the report's path and the plots written.
pub fn write_report(
    runs: &[RunData],
    out_dir: &Path,
) -> Result<(PathBuf, Vec<PathBuf>), ReportError> {
    let err = |path: &Path, what| {
        let path = path.to_path_buf();
        move |source| ReportError::Write { path, what, source }
    };
    std::fs::create_dir_all(out_dir).map_err(err(out_dir, "cannot create"))?;
    let html = render_report(runs);
    let path = out_dir.join("report.html");
    crate::outdir::write_file_atomic(&path, html.as_bytes()).map_err(err(&path, "cannot write"))?;
    let plots = write_plots_svg(runs, out_dir).map_err(err(out_dir, "cannot write plots"))?;
    Ok((path, plots))
}

/// Opens a table; the first `left` columns are text (left-aligned).
fn table_open(s: &mut String, id: &str, left: usize, heads: &[&str]) {
    let _ = write!(s, r#"<table id="{id}" data-left="{left}"><thead><tr>"#);
    for (i, h) in heads.iter().enumerate() {
        let class = if i < left { r#" class="l""# } else { "" };
        let _ = write!(s, "<th{class}>{}</th>", esc(h));
    }
    s.push_str("</tr></thead><tbody>");
}

fn row(s: &mut String, left: usize, cells: &[String], class: &str) {
    let _ = write!(s, r#"<tr class="{class}">"#);
    for (i, c) in cells.iter().enumerate() {
        let class = if i < left { r#" class="l""# } else { "" };
        let _ = write!(s, "<td{class}>{}</td>", esc(c));
    }
    s.push_str("</tr>");
}

/// The fixed parts of a [`side_by_side`] table.
struct Setting {
    id: &'static str,
    title: &'static str,
    head: &'static str,
    /// HTML of the paragraph under the title.
    note: &'static str,
}

/// A table of named settings (features, tunables), one column per run,
/// the rows where the runs differ highlighted; nothing when `keys` is
/// empty. `cell` gives a run's text for a key.
fn side_by_side(
    s: &mut String,
    names: &[String],
    runs: &[RunData],
    keys: &BTreeSet<&String>,
    t: Setting,
    cell: impl Fn(&RunData, &str) -> String,
) {
    if keys.is_empty() {
        return;
    }
    let _ = write!(s, "<h2>{}</h2><p>{}</p>", t.title, t.note);
    let mut heads = vec![t.head];
    heads.extend(names.iter().map(String::as_str));
    table_open(s, t.id, 1, &heads);
    for k in keys {
        let vals: Vec<String> = runs.iter().map(|r| cell(r, k)).collect();
        let differ = vals.iter().any(|v| *v != vals[0]);
        let mut cells = vec![(*k).clone()];
        cells.extend(vals);
        row(s, 1, &cells, if differ { "diff" } else { "" });
    }
    s.push_str("</tbody></table>");
}

/// A switch's value in `kernel`'s defaults, as summary.json writes it.
fn release_default(kernel: &str, name: &str) -> Option<Value> {
    let (f, _) = schedlab_core::kernels::defaults(kernel)?;
    f.values()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| match v {
            schedlab_core::features::FeatureValue::Bool(b) => Value::Bool(b),
            schedlab_core::features::FeatureValue::Enum(e) => Value::String(e.to_string()),
        })
}

/// A run's tunables (summary.json `tunables`), if it says.
fn tunables_of(r: &RunData) -> Option<&serde_json::Map<String, Value>> {
    r.summary.extra.get("tunables").and_then(Value::as_object)
}

/// The kernel release a run simulated (`summary.json`'s `kernel`), if it
/// says.
fn run_kernel(r: &RunData) -> Option<&str> {
    r.summary.extra.get("kernel").and_then(Value::as_str)
}

fn feature_text(v: Option<&Value>) -> String {
    match v {
        None => "–".into(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// Renders the report page for `runs` (at least one is expected; none gives
/// a page saying so).
pub fn render_report(runs: &[RunData]) -> String {
    let names = labels(runs);
    let mut s = String::new();
    let title = format!("schedlab report: {}", names.join(", "));
    let _ = write!(
        s,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{}</title><style>{STYLE}</style></head><body>
<h1>{}</h1>
"#,
        esc(&title),
        esc(&title)
    );
    if runs.is_empty() {
        s.push_str(r#"<p class="note">No runs given.</p></body></html>"#);
        return s;
    }

    // Overview.
    s.push_str("<h2>Runs</h2>");
    table_open(
        &mut s,
        "runs",
        2,
        &[
            "run",
            "directory",
            "machine",
            "CPUs",
            "kernel",
            "preempt",
            "duration (s)",
            "seed",
            "HZ",
            "tasks",
            "trace",
            "logs",
            "schedstat",
            "profile",
        ],
    );
    for (i, r) in runs.iter().enumerate() {
        let sm = &r.summary;
        let _ = write!(
            s,
            r#"<tr><td class="l" style="color:{}">{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            run_color(i),
            esc(&names[i]),
            esc(&r.dir.display().to_string()),
            esc(&sm.machine.name),
            sm.machine.cpus,
            esc(run_kernel(r).unwrap_or("–")),
            esc(sm
                .extra
                .get("preempt")
                .and_then(Value::as_str)
                .unwrap_or("–")),
            sm.duration_ns as f64 / 1e9,
            sm.seed,
            sm.hz,
            sm.tasks.len(),
            r.trace
                .as_ref()
                .map_or("no".into(), |t| format!("{} lines", t.records)),
            r.latencies.len(),
            if r.schedstat.is_some() { "yes" } else { "no" },
            if r.profile_text.is_some() {
                "yes"
            } else {
                "no"
            },
        );
    }
    s.push_str("</tbody></table>");

    // Features and tunables side by side.
    let feats: BTreeSet<&String> = runs
        .iter()
        .flat_map(|r| r.summary.features.keys())
        .collect();
    side_by_side(
        &mut s,
        &names,
        runs,
        &feats,
        Setting {
            id: "features",
            title: "Features",
            head: "feature",
            note: "Rows where the runs differ are highlighted; <em>absent</em> marks a switch the run's kernel release does not have (<code>schedlab kernels</code>), unless the run set it.",
        },
        |r, f| {
            let v = r.summary.features.get(f);
            match run_kernel(r) {
                Some(k)
                    if !schedlab_core::kernels::has_feature(k, f)
                        && v == release_default(k, f).as_ref() =>
                {
                    format!("absent ({k})")
                }
                _ => feature_text(v),
            }
        },
    );
    let tunables: BTreeSet<&String> = runs
        .iter()
        .filter_map(tunables_of)
        .flat_map(|m| m.keys())
        .collect();
    side_by_side(
        &mut s,
        &names,
        runs,
        &tunables,
        Setting {
            id: "tunables",
            title: "Tunables",
            head: "tunable",
            note: "The scheduler tunables each run used (<code>--sysctl</code>, <code>global.sysctl</code>, or the release's defaults); rows where the runs differ are highlighted; <em>absent</em> marks a tunable the run's kernel release does not have.",
        },
        |r, t| match run_kernel(r) {
            Some(k) if !schedlab_core::kernels::has_tunable(k, t) => format!("absent ({k})"),
            _ => feature_text(tunables_of(r).and_then(|m| m.get(t))),
        },
    );

    // Timeline.
    let traced: BTreeSet<String> = runs.iter().flat_map(traced_tasks).collect();
    let traced_list: Vec<&str> = traced.iter().map(String::as_str).collect();
    s.push_str("<h2>CPU timeline</h2><p>Slices from <code>trace.txt</code> (sched_switch and the context column). Mouse wheel zooms, drag pans, hover names the task.");
    for (p, c) in POLICY_COLORS {
        let _ = write!(
            s,
            r#"<span class="swatch" style="background:{c}"></span>{p}"#
        );
    }
    s.push_str(r#"</p><p><button id="tl-in" type="button">zoom in</button> <button id="tl-out" type="button">zoom out</button> <button id="tl-reset" type="button">reset</button></p>"#);
    for (i, r) in runs.iter().enumerate() {
        if r.trace.is_none() {
            let _ = write!(
                s,
                r#"<p class="note no-trace" data-run="{}">Run {} has no trace.txt (run it with --trace for a timeline and a time-resolved heatmap).</p>"#,
                esc(&names[i]),
                esc(&names[i])
            );
        }
    }
    let _ = write!(
        s,
        r#"<div id="timeline" data-tasks="{}" data-rendered="no script"></div><div id="timeline-tip"></div>"#,
        esc(&traced_list.join(" "))
    );

    // Latency.
    let lat_tasks = latency_tasks(runs);
    let lat_names = latency_names(runs);
    let all_threads: usize = runs
        .iter()
        .map(|r| r.summary.tasks.len())
        .max()
        .unwrap_or(0);
    let sleeping: usize = runs.iter().map(|r| r.latencies.len()).max().unwrap_or(0);
    s.push_str("<h2>Wakeup latency</h2><p>From the <code>wu_lat</code> column of the rt-app logs; one colour per run. Only tasks that sleep on timers or wait for events are plotted: tasks that never sleep (e.g. SCHED_IDLE hogs, whose rows all read 0) are left out. Show: ");
    s.push_str(r#"<select id="latency-task"><option value="">sleeping tasks pooled</option>"#);
    for n in &lat_names {
        let _ = write!(
            s,
            r#"<option value="{}">{} (all threads)</option>"#,
            esc(n),
            esc(n)
        );
    }
    for t in &lat_tasks {
        let _ = write!(s, r#"<option value="{}">{}</option>"#, esc(t), esc(t));
    }
    s.push_str("</select></p>");
    if lat_tasks.is_empty() {
        s.push_str(r#"<p class="note">No rt-app log rows of sleeping tasks found.</p>"#);
    } else {
        let _ = write!(
            s,
            r#"<p id="latency-pool" data-sleeping="{sleeping}" data-threads="{all_threads}">Pooled: {sleeping} of {all_threads} threads (the others never slept).</p>"#
        );
    }
    let mut views: Vec<Option<&str>> = vec![None];
    views.extend(lat_names.iter().map(|t| Some(t.as_str())));
    views.extend(lat_tasks.iter().map(|t| Some(t.as_str())));
    let tasks_attr = esc(&lat_tasks.join(" "));
    let _ = write!(s, r#"<div id="latency-cdf" data-tasks="{tasks_attr}">"#);
    for v in &views {
        let _ = write!(
            s,
            r#"<div class="lat-view" data-task="{}">{}</div>"#,
            esc(v.unwrap_or("")),
            svg_latency_cdf(runs, *v)
        );
    }
    let _ = write!(
        s,
        r#"</div><div id="latency-hist" data-tasks="{tasks_attr}">"#
    );
    for v in &views {
        let _ = write!(
            s,
            r#"<div class="lat-view" data-task="{}">{}</div>"#,
            esc(v.unwrap_or("")),
            svg_latency_hist(runs, *v)
        );
    }
    s.push_str("</div>");

    // Heatmap.
    s.push_str(r#"<h2>CPU utilisation</h2><div id="util-heatmap">"#);
    for (i, r) in runs.iter().enumerate() {
        s.push_str(&svg_util_heatmap(r, i));
    }
    s.push_str("</div>");
    let queues: Vec<String> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| svg_runnable_heatmap(r, i))
        .collect();
    if !queues.is_empty() {
        s.push_str(r#"<h2>Run queues</h2><p>Mean runnable tasks (running and queued) per CPU and bin, from the trace's wake-ups, migrations and switches: how evenly the load is spread where every CPU is busy.</p><div id="runnable-heatmap">"#);
        for q in queues {
            s.push_str(&q);
        }
        s.push_str("</div>");
    }

    // Tasks: one row per task name (threads summed), per thread below.
    s.push_str("<h2>Tasks</h2><p>One row per task name (rt-app's thread name without its <code>-&lt;n&gt;</code> index; sums over its threads, latency over all their samples).</p>");
    table_open(
        &mut s,
        "task-table",
        2,
        &[
            "task",
            "run",
            "threads",
            "policy",
            "nice",
            "runtime ms",
            "wait ms",
            "switches",
            "migrations",
            "wakeups",
            "loops",
            "wu_lat n",
            "mean µs",
            "p50",
            "p90",
            "p99",
            "max",
        ],
    );
    let per_run_names: Vec<Vec<crate::results::by_name::NameRow>> =
        runs.iter().map(|r| by_name(&r.summary.tasks)).collect();
    let mut names_order: Vec<&str> = Vec::new();
    for rows in &per_run_names {
        for n in rows {
            if !names_order.contains(&n.name.as_str()) {
                names_order.push(&n.name);
            }
        }
    }
    for name in &names_order {
        for (i, r) in runs.iter().enumerate() {
            let Some(n) = per_run_names[i].iter().find(|n| n.name == *name) else {
                continue;
            };
            let mut lat: Vec<u64> = r
                .latencies
                .iter()
                .filter(|l| task_name(&l.task) == *name)
                .flat_map(|l| l.wu_lat_us.iter().copied())
                .collect();
            lat.sort_unstable();
            let w = &n.latency;
            let has = w.n > 0;
            let dash = || "–".to_string();
            row(
                &mut s,
                2,
                &[
                    n.name.clone(),
                    names[i].clone(),
                    n.threads.to_string(),
                    n.policy.clone(),
                    n.nice.clone(),
                    ms(n.runtime_ns),
                    ms(n.wait_ns),
                    n.switches.to_string(),
                    n.migrations.to_string(),
                    n.wakeups.to_string(),
                    n.loops.to_string(),
                    w.n.to_string(),
                    if has {
                        format!("{:.1}", w.mean)
                    } else {
                        dash()
                    },
                    if has {
                        opt(percentile(&lat, 0.5))
                    } else {
                        dash()
                    },
                    if has {
                        opt(percentile(&lat, 0.9))
                    } else {
                        dash()
                    },
                    if has {
                        opt(percentile(&lat, 0.99))
                    } else {
                        dash()
                    },
                    if has { w.max.to_string() } else { dash() },
                ],
                "",
            );
        }
    }
    s.push_str("</tbody></table>");
    s.push_str(r#"<details id="task-threads"><summary>One row per thread</summary>"#);
    table_open(
        &mut s,
        "task-table-threads",
        2,
        &[
            "task",
            "run",
            "pid",
            "policy",
            "nice",
            "group",
            "runtime ms",
            "wait ms",
            "switches",
            "migrations",
            "wakeups",
            "loops",
            "wu_lat n",
            "mean µs",
            "p50",
            "p90",
            "p99",
            "max",
            "missed / periods",
            "slack min µs",
        ],
    );
    let mut task_names: Vec<&str> = Vec::new();
    for r in runs {
        for t in &r.summary.tasks {
            if !task_names.contains(&t.name.as_str()) {
                task_names.push(&t.name);
            }
        }
    }
    for name in &task_names {
        for (i, r) in runs.iter().enumerate() {
            let Some(t) = r.summary.tasks.iter().find(|t| t.name == *name) else {
                continue;
            };
            let lat = r
                .latencies
                .iter()
                .find(|l| l.task == *name)
                .map_or(&[][..], |l| &l.wu_lat_us[..]);
            let w = &t.wakeup_latency_us;
            // summary.json `deadlines` (threads with timers only).
            let dl = t.extra.get("deadlines");
            let field = |f: &dyn Fn(&serde_json::Value) -> Option<String>| {
                dl.and_then(f).unwrap_or_else(|| "–".to_string())
            };
            let missed = field(&|d| Some(format!("{} / {}", d.get("missed")?, d.get("periods")?)));
            let slack_min = field(&|d| Some(d.get("slack_us")?.get("min")?.to_string()));
            row(
                &mut s,
                2,
                &[
                    t.name.clone(),
                    names[i].clone(),
                    t.pid.to_string(),
                    t.policy.clone(),
                    t.nice.to_string(),
                    t.group.clone(),
                    ms(t.runtime_ns),
                    ms(t.wait_ns),
                    t.switches.to_string(),
                    t.migrations.to_string(),
                    t.wakeups.to_string(),
                    t.loops.to_string(),
                    w.n.to_string(),
                    format!("{:.1}", w.mean),
                    opt(percentile(lat, 0.5)),
                    opt(percentile(lat, 0.9)),
                    opt(percentile(lat, 0.99)),
                    w.max.to_string(),
                    missed,
                    slack_min,
                ],
                "",
            );
        }
    }
    s.push_str("</tbody></table></details><p>p50/p90/p99 are nearest-rank percentiles of the log's wu_lat column (µs); n, mean and max come from summary.json (timer rows); missed / periods counts the timer periods whose work ended after the expiry (negative slack).</p>");

    // Groups.
    if runs.iter().any(|r| !r.summary.groups.is_empty()) {
        s.push_str("<h2>Groups (cpu.stat)</h2>");
        table_open(
            &mut s,
            "group-table",
            2,
            &[
                "group",
                "run",
                "usage_usec",
                "nr_periods",
                "nr_throttled",
                "throttled_usec",
            ],
        );
        for (i, r) in runs.iter().enumerate() {
            for g in &r.summary.groups {
                let c = &g.cpu_stat;
                row(
                    &mut s,
                    2,
                    &[
                        g.path.clone(),
                        names[i].clone(),
                        c.usage_usec.to_string(),
                        c.nr_periods.to_string(),
                        c.nr_throttled.to_string(),
                        c.throttled_usec.to_string(),
                    ],
                    "",
                );
            }
        }
        s.push_str("</tbody></table>");
    }

    // Profile.
    s.push_str("<h2>Profile (CPU time by path)</h2>");
    // One row per path; per run its time (ms) and its share of the total.
    let run_heads: Vec<String> = names
        .iter()
        .flat_map(|n| [format!("{n} ms"), format!("{n} %")])
        .collect();
    let mut heads = vec!["path"];
    heads.extend(run_heads.iter().map(String::as_str));
    table_open(&mut s, "profile-table", 1, &heads);
    let profile_rows = |r: &RunData| -> Vec<(String, u64)> {
        let p = &r.summary.profile;
        let pn = &p.paths_ns;
        let mut v = vec![
            ("task".to_owned(), p.task_ns),
            ("idle".into(), p.idle_ns),
            ("context_switch".into(), pn.context_switch),
            ("wakeup".into(), pn.wakeup),
            ("balance".into(), pn.balance),
            ("balance_atomic".into(), pn.balance_atomic),
            ("newidle".into(), pn.newidle),
            ("steal".into(), pn.steal),
            ("throttle".into(), pn.throttle),
            ("available_idle_cpu".into(), pn.available_idle_cpu),
            ("sched_idle_cpu".into(), pn.sched_idle_cpu),
        ];
        for (k, val) in &pn.extra {
            if let Some(n) = val.as_u64() {
                v.push((k.clone(), n));
            }
        }
        v
    };
    let per_run: Vec<Vec<(String, u64)>> = runs.iter().map(profile_rows).collect();
    let mut paths: Vec<String> = Vec::new();
    for pr in &per_run {
        for (k, _) in pr {
            if !paths.contains(k) {
                paths.push(k.clone());
            }
        }
    }
    for path in &paths {
        let mut cells = vec![path.clone()];
        for pr in &per_run {
            let total: u64 = pr.iter().map(|x| x.1).sum();
            let v = pr.iter().find(|x| &x.0 == path).map(|x| x.1);
            cells.push(v.map_or("–".into(), ms));
            cells.push(v.map_or("–".into(), |v| {
                format!("{:.4}", v as f64 * 100.0 / total.max(1) as f64)
            }));
        }
        row(&mut s, 1, &cells, "");
    }
    s.push_str("</tbody></table>");
    for (i, r) in runs.iter().enumerate() {
        if let Some(p) = &r.profile_text {
            let _ = write!(
                s,
                "<details><summary>profile file of {}</summary><pre>{}</pre></details>",
                esc(&names[i]),
                esc(p)
            );
        }
    }

    // Schedstat.
    s.push_str("<h2>schedstat</h2>");
    if runs.iter().all(|r| r.schedstat.is_none()) {
        s.push_str(r#"<p class="note">No schedstat files.</p>"#);
    } else {
        table_open(
            &mut s,
            "schedstat-cpu",
            2,
            &[
                "cpu",
                "run",
                "yld_count",
                "sched_count",
                "sched_goidle",
                "ttwu_count",
                "ttwu_local",
                "rq_cpu_time (ms)",
                "run_delay (ms)",
                "pcount",
            ],
        );
        let cpus: BTreeSet<u32> = runs
            .iter()
            .filter_map(|r| r.schedstat.as_ref())
            .flat_map(|s| s.cpus.iter().map(|c| c.cpu))
            .collect();
        for cpu in &cpus {
            for (i, r) in runs.iter().enumerate() {
                let Some(c) = r
                    .schedstat
                    .as_ref()
                    .and_then(|s| s.cpus.iter().find(|c| c.cpu == *cpu))
                else {
                    continue;
                };
                row(
                    &mut s,
                    2,
                    &[
                        format!("cpu{cpu}"),
                        names[i].clone(),
                        c.yld_count.to_string(),
                        c.sched_count.to_string(),
                        c.sched_goidle.to_string(),
                        c.ttwu_count.to_string(),
                        c.ttwu_local.to_string(),
                        ms(c.rq_cpu_time_ns),
                        ms(c.run_delay_ns),
                        c.pcount.to_string(),
                    ],
                    "",
                );
            }
        }
        s.push_str("</tbody></table>");
        table_open(
            &mut s,
            "schedstat-domain",
            2,
            &[
                "cpu/domain",
                "run",
                "lb_count",
                "lb_balanced",
                "lb_failed",
                "lb_imbalance",
                "lb_gained",
                "lb_hot_gained",
                "alb_count",
                "alb_pushed",
                "ttwu_wake_remote",
                "ttwu_move_affine",
                "ttwu_move_balance",
            ],
        );
        for cpu in &cpus {
            let ndom = runs
                .iter()
                .filter_map(|r| r.schedstat.as_ref())
                .filter_map(|s| s.cpus.iter().find(|c| c.cpu == *cpu))
                .map(|c| c.domains.len())
                .max()
                .unwrap_or(0);
            for d in 0..ndom {
                for (i, r) in runs.iter().enumerate() {
                    let Some(dom) = r
                        .schedstat
                        .as_ref()
                        .and_then(|s| s.cpus.iter().find(|c| c.cpu == *cpu))
                        .and_then(|c| c.domains.get(d))
                    else {
                        continue;
                    };
                    let sum = |f: fn(&crate::schedstat::LbIdleCounters) -> u64| {
                        dom.lb.iter().map(f).sum::<u64>().to_string()
                    };
                    row(
                        &mut s,
                        2,
                        &[
                            format!("cpu{cpu} domain{d} {}", dom.name),
                            names[i].clone(),
                            sum(|l| l.lb_count),
                            sum(|l| l.lb_balanced),
                            sum(|l| l.lb_failed),
                            sum(|l| l.lb_imbalance_total()),
                            sum(|l| l.lb_gained),
                            sum(|l| l.lb_hot_gained),
                            dom.alb_count.to_string(),
                            dom.alb_pushed.to_string(),
                            dom.ttwu_wake_remote.to_string(),
                            dom.ttwu_move_affine.to_string(),
                            dom.ttwu_move_balance.to_string(),
                        ],
                        "",
                    );
                }
            }
        }
        s.push_str("</tbody></table><p>lb_* columns are summed over the busy, idle and newly-idle balancing types.</p>");
    }

    // Data and script.
    let colors: serde_json::Map<String, Value> = POLICY_COLORS
        .iter()
        .map(|(p, c)| (p.to_string(), json!(c)))
        .collect();
    let data = json!({
        "policy_colors": colors,
        "runs": runs.iter().enumerate().map(|(i, r)| json!({
            "label": names[i],
            "color": run_color(i),
            "timeline": timeline_json(r),
        })).collect::<Vec<_>>(),
    });
    // `<` never appears raw inside the script element (no `</script>` break-out).
    let data = data.to_string().replace('<', "\\u003c");
    let _ = write!(
        s,
        r#"<script type="application/json" id="report-data">{data}</script>
<script>{SCRIPT}</script>
</body></html>
"#
    );
    s
}

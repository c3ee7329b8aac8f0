//! Sweeps: the cross product of machines, kernels, feature sets, sysctl
//! sets, workloads and seeds, each point one `schedlab run` made by a
//! [`Runner`] the caller gives ([`crate::command::run_argv`]), on
//! local threads, into one Parquet dataset. The Python package runs the
//! same points on Ray through the same functions: [`spec::parse_spec`],
//! [`dataset::run_point`], [`dataset::save_row`], [`dataset::write_dataset`].
//!
//! A sweep directory holds
//! - `points.json`: the plan, every point with its id;
//! - `runs/<id>/`: each run's output directory (`schedlab run --out`);
//! - `runs/<id>.row.json`: its row, written atomically once the run is
//!   over, successful or not (`status`, `error`): a point with a row is
//!   finished and is skipped when the sweep runs again, so an interrupted
//!   sweep resumes where it stopped;
//! - `dataset/`: one Hive-partitioned Parquet dataset
//!   (`machine=M/kernel=K/part-0.parquet` by default), one row per finished
//!   point, rewritten whole (and atomically) at the end of every invocation.
//!
//! The row's metrics are figures of summary.json summed or averaged over
//! tasks and CPUs ([`metrics::METRICS`], `docs/python.md` lists them); each
//! has the direction Monte-Carlo screening judges it by.
//!
//! | file | owns |
//! |---|---|
//! | mod.rs | [`sweep`] (a spec file, start to end), [`run_local`] (points on threads), [`SweepError`] |
//! | spec.rs | the spec's keys, [`Point`], its id and command line, the point limit |
//! | metrics.rs | the row's metric columns and their directions |
//! | dataset.rs | a point's run and row, the plan file, the Parquet dataset |

pub mod dataset;
mod error;
pub mod metrics;
pub mod spec;

pub use dataset::{load_rows, run_dir, run_point, save_plan, save_row, write_dataset};
pub use metrics::{metrics, Better, Metric, METRICS};
pub use spec::{
    check_points, fnv64, parse_spec, read_spec, Point, Spec, DEFAULT_MAX_POINTS, PARTITION_KEYS,
};

use crate::progress::{default_jobs, Progress};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

pub use error::{Runner, SweepError};

/// Counts of an invocation.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Points in the plan.
    pub total: usize,
    /// Finished before this invocation (skipped).
    pub skipped: usize,
    /// Run now.
    pub ran: usize,
    /// Rows with status "error" (all invocations).
    pub failed: usize,
}

/// Points to run in a sweep directory on local threads.
pub struct LocalRun<'a> {
    /// The sweep directory.
    pub root: &'a Path,
    /// The plan (finished points are skipped).
    pub points: &'a [Point],
    /// Partition columns of the dataset.
    pub partition_by: &'a [String],
    /// Simultaneous runs (0 is taken as 1).
    pub jobs: usize,
    /// Makes each run.
    pub runner: Runner<'a>,
    /// Told of each finished run.
    pub progress: &'a dyn Progress,
}

/// What an invocation did and where its dataset is.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Points run, skipped and failed.
    pub counts: Counts,
    /// The dataset directory (`ROOT/dataset`).
    pub dataset: PathBuf,
}

/// Runs the unfinished points on `jobs` threads, recording each row as it
/// finishes, then writes the dataset.
pub fn run_local(r: &LocalRun) -> Result<Finished, SweepError> {
    let (root, points, partition_by) = (r.root, r.points, r.partition_by);
    save_plan(root, points, partition_by)?;
    let done = load_rows(root, points);
    let todo: Vec<&Point> = points
        .iter()
        .zip(&done)
        .filter(|(_, r)| r.is_none())
        .map(|(p, _)| p)
        .collect();
    r.progress.start("sweep", todo.len() as u64);
    let next = AtomicUsize::new(0);
    let first_err: Mutex<Option<SweepError>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..r.jobs.max(1).min(todo.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = todo.get(i) else { break };
                let row = run_point(p, root, r.runner);
                if let Err(e) = save_row(root, &row) {
                    first_err.lock().unwrap().get_or_insert(e);
                    break;
                }
                r.progress.advance();
            });
        }
    });
    r.progress.finish();
    if let Some(e) = first_err.into_inner().unwrap() {
        return Err(e);
    }
    let dataset = write_dataset(root, points, partition_by)?;
    let rows = load_rows(root, points);
    let failed = rows
        .iter()
        .flatten()
        .filter(|r| r["status"] != "ok")
        .count();
    Ok(Finished {
        counts: Counts {
            total: points.len(),
            skipped: points.len() - todo.len(),
            ran: todo.len(),
            failed,
        },
        dataset,
    })
}

/// A sweep of a spec file.
pub struct SweepOptions<'a> {
    /// The spec: a TOML (or JSON) file; workload files are relative to its
    /// directory, its `out` to the current one.
    pub spec: PathBuf,
    /// The sweep directory (default: the spec's `out`, else the spec's
    /// file name with `.sweep`, in the current directory).
    pub out: Option<PathBuf>,
    /// Simultaneous runs (default: one per CPU; 0 is refused).
    pub jobs: Option<usize>,
    /// Most points the spec may make.
    pub max_points: u64,
    /// Makes each run.
    pub runner: Runner<'a>,
    /// Told of each finished run.
    pub progress: &'a dyn Progress,
}

/// A finished sweep.
#[derive(Debug, Clone)]
pub struct SweepReport {
    /// The sweep directory.
    pub root: PathBuf,
    /// Points run, skipped and failed.
    pub counts: Counts,
    /// The dataset directory.
    pub dataset: PathBuf,
}

/// The sweep directory: `out`, else the spec's `out`, else the spec's file
/// name with `.sweep`; a relative one is relative to the current
/// directory, as every other output place, so that a sweep of a spec kept
/// in a source tree writes nothing into it.
pub fn sweep_root(spec_path: &Path, out: Option<&Path>, spec: &Spec) -> PathBuf {
    if let Some(o) = out {
        return o.to_path_buf();
    }
    if let Some(o) = &spec.out {
        return PathBuf::from(o);
    }
    let name = spec_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "spec".into());
    PathBuf::from(format!("{name}.sweep"))
}

/// Runs a spec file: reads it, runs its unfinished points, writes the
/// dataset. A sweep none of whose points could run is an error
/// ([`SweepError::NoneRan`]); one with some failed points is not (their
/// rows say `status` "error").
pub fn sweep(o: &SweepOptions) -> Result<SweepReport, SweepError> {
    let spec = read_spec(&o.spec, o.max_points)?;
    let root = sweep_root(&o.spec, o.out.as_deref(), &spec);
    let jobs = o.jobs.unwrap_or_else(default_jobs);
    if jobs == 0 {
        return Err(SweepError::NoJobs);
    }
    // What killed sweeps left in runs/ (stages of processes now gone).
    schedlab_output::outdir::clean_all_dead_stages(&root.join("runs"));
    let f = run_local(&LocalRun {
        root: &root,
        points: &spec.points,
        partition_by: &spec.partition_by,
        jobs,
        runner: o.runner,
        progress: o.progress,
    })?;
    let c = f.counts;
    if c.total > 0 && c.failed == c.total {
        let rows = load_rows(&root, &spec.points);
        let first = rows
            .iter()
            .flatten()
            .find_map(|r| {
                Some(format!(
                    "{}: {}",
                    r["point_id"].as_str()?,
                    r["error"].as_str()?
                ))
            })
            .unwrap_or_default();
        return Err(SweepError::NoneRan {
            spec: o.spec.clone(),
            total: c.total,
            first,
            dataset: f.dataset,
        });
    }
    Ok(SweepReport {
        root,
        counts: c,
        dataset: f.dataset,
    })
}

#[cfg(test)]
mod tests {
    use super::dataset::hive_value;
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_is_a_cross_product_with_stable_ids() {
        let v = json!({"machines": ["vm-2cpu", "a7-octa"], "features": ["", "STEAL"],
                       "workloads": ["hackbench:groups=1,loops=5"], "seeds": 3});
        let s = parse_spec(&v, "s.toml", DEFAULT_MAX_POINTS).unwrap();
        assert_eq!(s.points.len(), 12);
        let ids: std::collections::BTreeSet<_> = s.points.iter().map(|p| &p.id).collect();
        assert_eq!(ids.len(), 12);
        assert_eq!(
            s.points[0].id,
            parse_spec(&v, "s.toml", DEFAULT_MAX_POINTS).unwrap().points[0].id
        );
        let back = Point::from_json(&s.points[5].to_json()).unwrap();
        assert_eq!(back, s.points[5]);
    }

    #[test]
    fn bad_specs_are_one_line_errors_naming_the_key() {
        for (v, want) in [
            (
                json!({"workloads": ["x"], "machine": ["a"]}),
                "key \"machine\": unknown",
            ),
            (json!({"machines": ["a"]}), "key \"workloads\": missing"),
            (
                json!({"workloads": []}),
                "key \"workloads\": a non-empty list",
            ),
            (json!({"workloads": ["x"], "seeds": "3"}), "key \"seeds\""),
            (json!({"workloads": ["x"], "seeds": [-1]}), "key \"seeds\""),
            (
                json!({"workloads": ["x"], "partition_by": ["colour"]}),
                "\"colour\" is not one of",
            ),
            (json!({"workloads": [3]}), "key \"workloads\": every entry"),
            (json!([1]), "a sweep spec is a table"),
            (
                // 20 x 1e6 points: refused before any is built (it used to
                // allocate until malloc aborted).
                json!({"workloads": ["x"], "seeds": 1_000_000,
                       "features": ["", "A", "B", "C", "D", "E", "F", "G", "H", "I",
                                    "J", "K", "L", "M", "N", "O", "P", "Q", "R", "S"]}),
                "20000000 points (1 machines x 1 kernels x 20 features x 1 sysctls x 1 workloads x 1000000 seeds), more than the limit of 100000: --max-points raises it",
            ),
        ] {
            let e = parse_spec(&v, "s.toml", DEFAULT_MAX_POINTS).unwrap_err().to_string();
            assert!(e.starts_with("s.toml: ") && e.contains(want), "{e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn hive_values_are_percent_encoded() {
        assert_eq!(hive_value("vm-2cpu"), "vm-2cpu");
        assert_eq!(hive_value("sysfs:/a b"), "sysfs%3A%2Fa%20b");
        assert_eq!(hive_value(""), "__HIVE_DEFAULT_PARTITION__");
    }

    #[test]
    fn argv_passes_kernel_and_sysctl_only_when_set() {
        let v = json!({"workloads": ["w.json"], "kernels": ["default", "cfs"],
                       "sysctls": ["", "a=1,b=2"]});
        let s = parse_spec(&v, "s.toml", DEFAULT_MAX_POINTS).unwrap();
        let a0 = s.points[0].argv("w.json", Path::new("o")).join(" ");
        assert!(!a0.contains("--kernel") && !a0.contains("--sysctl"), "{a0}");
        let a3 = s.points[3].argv("w.json", Path::new("o")).join(" ");
        assert!(
            a3.contains("--kernel cfs --sysctl a=1 --sysctl b=2"),
            "{a3}"
        );
    }
}

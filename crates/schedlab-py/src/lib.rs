//! `schedlab._native`: the Rust side of the Python package (python/schedlab).
//! Thin, and over the libraries only (schedlab-lab, schedlab-workload),
//! not the binary's crate: every run goes through the library's command
//! line (`schedlab_lab::command::run_argv`: the binary's argument parsing
//! of `run`, `replay`, `compare`, `report`, `machines`, `features`,
//! `kernels`, `bench`, `sweep` and `montecarlo`), so the package accepts exactly the
//! flags the binary accepts and raises the binary's one-line error
//! messages; sweeps and Monte-Carlo screening call the library's engines
//! (`schedlab_lab::sweep`, `schedlab_lab::montecarlo`) with `run_argv` as
//! the runner of each point, so the Python backends (local, Ray) produce
//! the same rows and the same Parquet dataset as `schedlab sweep`. The
//! binary's own verbs (`exec`, `record`, `validate`: a workload on this
//! host) are not here: `run_argv` refuses them with a line that says so.
//! Values cross the boundary as JSON text. The GIL is released while
//! simulating, so Python threads run simulations in parallel.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use schedlab_lab::bars::RunsBar;
use schedlab_lab::command;
use schedlab_lab::montecarlo::{self, Plan, Thresholds};
use schedlab_lab::sweep::{self, Better, LocalRun, Point, DEFAULT_MAX_POINTS};
use serde_json::{json, Value};
use std::path::Path;

create_exception!(
    _native,
    SchedlabError,
    PyException,
    "A schedlab error; its message is the command line's one-line message (without `schedlab: error: `)."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    SchedlabError::new_err(e.to_string().replace('\n', " "))
}

fn parse_points(points_json: &str) -> PyResult<Vec<Point>> {
    let v: Value = serde_json::from_str(points_json).map_err(err)?;
    v.as_array()
        .ok_or_else(|| err("points: a JSON list"))?
        .iter()
        .map(|p| Point::from_json(p).map_err(err))
        .collect()
}

/// Runs the command line `args` (args[0] is the program name) of one of
/// the library's verbs in this process. Returns True on exit status 0, False on 1 (a broken model
/// invariant under --check); raises SchedlabError with the one-line message
/// on a user error (status 2).
#[pyfunction]
fn run_argv(py: Python<'_>, args: Vec<String>) -> PyResult<bool> {
    py.allow_threads(|| command::run_argv(&args)).map_err(err)
}

/// The points of a sweep spec (JSON text of a dict), as JSON:
/// {"points": [...], "partition_by": [...], "out": str|null}.
#[pyfunction]
fn sweep_plan(spec_json: &str, label: &str) -> PyResult<String> {
    let v: Value = serde_json::from_str(spec_json).map_err(err)?;
    let spec = sweep::parse_spec(&v, label, DEFAULT_MAX_POINTS).map_err(err)?;
    Ok(json!({
        "points": spec.points.iter().map(Point::to_json).collect::<Vec<_>>(),
        "partition_by": spec.partition_by,
        "out": spec.out,
    })
    .to_string())
}

/// The points of a Monte-Carlo screening, as JSON
/// {"points": [...], "partition_by": [...]}.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn montecarlo_plan(
    base: String,
    new: String,
    scenarios: u64,
    machines: Vec<String>,
    seeds: u64,
    seed: u64,
    duration: String,
) -> PyResult<String> {
    let plan = Plan {
        base,
        new,
        scenarios,
        machines,
        seeds,
        seed,
        duration,
        max_points: DEFAULT_MAX_POINTS,
    };
    let pts = montecarlo::points(&plan).map_err(err)?;
    Ok(json!({
        "points": pts.iter().map(Point::to_json).collect::<Vec<_>>(),
        "partition_by": montecarlo::partition_by(),
    })
    .to_string())
}

/// Runs one point into ROOT/runs/<id>/ and returns its row (JSON text);
/// a failed run is a row with status "error", not an exception.
#[pyfunction]
fn run_point(py: Python<'_>, point_json: &str, root: &str) -> PyResult<String> {
    let v: Value = serde_json::from_str(point_json).map_err(err)?;
    let p = Point::from_json(&v).map_err(err)?;
    let row = py.allow_threads(|| sweep::run_point(&p, Path::new(root), &command::run_argv));
    Ok(row.to_string())
}

/// Records a row (atomically) in the sweep directory ROOT.
#[pyfunction]
fn save_row(root: &str, row_json: &str) -> PyResult<()> {
    let v: Value = serde_json::from_str(row_json).map_err(err)?;
    sweep::save_row(Path::new(root), &v).map_err(err)
}

/// Writes the plan (points.json) into ROOT.
#[pyfunction]
fn save_plan(root: &str, points_json: &str, partition_by: Vec<String>) -> PyResult<()> {
    let pts = parse_points(points_json)?;
    sweep::save_plan(Path::new(root), &pts, &partition_by).map_err(err)
}

/// The ids of the points of POINTS_JSON that have no row yet in ROOT.
#[pyfunction]
fn unfinished(root: &str, points_json: &str) -> PyResult<Vec<String>> {
    let pts = parse_points(points_json)?;
    let rows = sweep::load_rows(Path::new(root), &pts);
    Ok(pts
        .iter()
        .zip(rows)
        .filter(|(_, r)| r.is_none())
        .map(|(p, _)| p.id.clone())
        .collect())
}

/// Writes ROOT/dataset from the recorded rows; returns its path.
#[pyfunction]
fn write_dataset(root: &str, points_json: &str, partition_by: Vec<String>) -> PyResult<String> {
    let pts = parse_points(points_json)?;
    let d = sweep::write_dataset(Path::new(root), &pts, &partition_by).map_err(err)?;
    Ok(d.to_string_lossy().into_owned())
}

/// Runs the unfinished points on JOBS local threads (the library's engine) and
/// writes the dataset; returns {"total","skipped","ran","failed","dataset"}.
#[pyfunction]
fn run_local(
    py: Python<'_>,
    root: &str,
    points_json: &str,
    partition_by: Vec<String>,
    jobs: usize,
    progress: bool,
) -> PyResult<String> {
    let pts = parse_points(points_json)?;
    let bar = RunsBar::new(progress);
    let f = py
        .allow_threads(|| {
            sweep::run_local(&LocalRun {
                root: Path::new(root),
                points: &pts,
                partition_by: &partition_by,
                jobs,
                runner: &command::run_argv,
                progress: &bar,
            })
        })
        .map_err(err)?;
    let (c, d) = (f.counts, f.dataset);
    Ok(
        json!({"total": c.total, "skipped": c.skipped, "ran": c.ran, "failed": c.failed,
              "dataset": d.to_string_lossy()})
        .to_string(),
    )
}

/// The Monte-Carlo findings (JSON list) from the recorded rows.
#[pyfunction]
fn montecarlo_findings(root: &str, points_json: &str, alpha: f64, rel: f64) -> PyResult<String> {
    let pts = parse_points(points_json)?;
    let f = montecarlo::findings(Path::new(root), &pts, Thresholds { alpha, rel });
    Ok(Value::Array(f).to_string())
}

/// The row metrics: (name, is_int, better "lower"|"higher"|"", absolute threshold).
#[pyfunction]
fn metrics() -> Vec<(String, bool, String, f64)> {
    sweep::METRICS
        .iter()
        .map(|m| {
            let b = match m.better {
                Better::Lower => "lower",
                Better::Higher => "higher",
                Better::Neither => "",
            };
            (m.name.to_string(), m.int, b.to_string(), m.min_abs)
        })
        .collect()
}

/// Welch's two-sided t-test of two samples: (t, df, p).
#[pyfunction]
fn welch(a: Vec<f64>, b: Vec<f64>) -> PyResult<(f64, f64, f64)> {
    if a.len() < 2 || b.len() < 2 {
        return Err(err("welch: two values per sample at least"));
    }
    Ok(montecarlo::welch(&a, &b))
}

/// The rt-app text of a Monte-Carlo scenario.
#[pyfunction]
fn scenario(seed: u64, machine: &str, nr_cpus: usize, index: u64) -> String {
    schedlab_workload::scenario::scenario(seed, machine, nr_cpus, index).0
}

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SchedlabError", m.py().get_type::<SchedlabError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(run_argv, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_plan, m)?)?;
    m.add_function(wrap_pyfunction!(montecarlo_plan, m)?)?;
    m.add_function(wrap_pyfunction!(run_point, m)?)?;
    m.add_function(wrap_pyfunction!(save_row, m)?)?;
    m.add_function(wrap_pyfunction!(save_plan, m)?)?;
    m.add_function(wrap_pyfunction!(unfinished, m)?)?;
    m.add_function(wrap_pyfunction!(write_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(run_local, m)?)?;
    m.add_function(wrap_pyfunction!(montecarlo_findings, m)?)?;
    m.add_function(wrap_pyfunction!(metrics, m)?)?;
    m.add_function(wrap_pyfunction!(welch, m)?)?;
    m.add_function(wrap_pyfunction!(scenario, m)?)?;
    Ok(())
}

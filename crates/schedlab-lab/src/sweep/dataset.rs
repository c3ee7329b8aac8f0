//! The sweep directory: a point's run and row, the plan, and the
//! Hive-partitioned Parquet dataset made from the rows.

use super::error::{Runner, SweepError};
use super::metrics::{metrics, METRICS};
use super::spec::Point;
use schedlab_output::parquet::{self, Column};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// Where a point's run directory and row live.
pub fn run_dir(root: &Path, p: &Point) -> PathBuf {
    root.join("runs").join(&p.id)
}
fn row_path(root: &Path, id: &str) -> PathBuf {
    root.join("runs").join(format!("{id}.row.json"))
}

/// Runs one point (its run directory is replaced whole) and returns its
/// row; a failed run is a row with `status` "error" and the runner's
/// message. `runner` makes the run from the point's `schedlab run` command
/// line ([`Point::argv`]).
pub fn run_point(p: &Point, root: &Path, runner: Runner) -> Value {
    let dir = run_dir(root, p);
    let result = (|| -> std::result::Result<Value, String> {
        std::fs::create_dir_all(root.join("runs"))
            .map_err(|e| format!("{}: {e}", root.display()))?;
        let workload = match &p.workload_text {
            Some(text) => {
                let f = root.join("runs").join(format!("{}.workload.json", p.id));
                std::fs::write(&f, text).map_err(|e| format!("{}: {e}", f.display()))?;
                f.to_string_lossy().into_owned()
            }
            None => p.workload.clone(),
        };
        match runner(&p.argv(&workload, &dir))? {
            true => {}
            false => return Err("check failed: a model invariant broke (see stderr)".into()),
        }
        let f = dir.join("summary.json");
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))
    })();
    let mut row = Map::new();
    row.insert("point_id".into(), json!(p.id));
    row.insert("index".into(), json!(p.index));
    for (k, v) in [
        ("machine", &p.machine),
        ("kernel", &p.kernel),
        ("features", &p.features),
        ("sysctl", &p.sysctl),
        ("workload", &p.workload),
    ] {
        row.insert(k.into(), json!(v));
    }
    row.insert("seed".into(), json!(p.seed));
    row.insert("duration".into(), json!(p.duration));
    for (k, v) in &p.tags {
        row.insert(k.clone(), json!(v));
    }
    let (status, error, values) = match result {
        Ok(summary) => ("ok", None, metrics(&summary)),
        // Paths inside the sweep directory relative to it, so that a
        // dataset does not depend on where the directory is.
        Err(e) => (
            "error",
            Some(e.replace(&format!("{}/", root.display()), "")),
            vec![None; METRICS.len()],
        ),
    };
    row.insert("status".into(), json!(status));
    row.insert("error".into(), json!(error));
    row.insert("out_dir".into(), json!(format!("runs/{}", p.id)));
    for (metric, v) in METRICS.iter().zip(values) {
        let v = match v {
            Some(x) if metric.int => json!(x.round() as i64),
            Some(x) => json!(x),
            None => Value::Null,
        };
        row.insert(metric.name.into(), v);
    }
    Value::Object(row)
}

/// Writes `path` atomically (a temporary file renamed over it).
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SweepError> {
    schedlab_output::outdir::write_file_atomic(path, bytes).map_err(|e| SweepError::io(path, e))
}

/// Records a finished point's row (atomically: a row file is whole or absent).
pub fn save_row(root: &Path, row: &Value) -> Result<(), SweepError> {
    let id = row["point_id"].as_str().ok_or(SweepError::RowWithoutId)?;
    std::fs::create_dir_all(root.join("runs"))?;
    let text = serde_json::to_string(row).expect("JSON value");
    write_atomic(&row_path(root, id), text.as_bytes())
}

/// The rows already recorded for `points` (in plan order, `None` when the
/// point has not finished).
pub fn load_rows(root: &Path, points: &[Point]) -> Vec<Option<Value>> {
    points
        .iter()
        .map(|p| {
            std::fs::read_to_string(row_path(root, &p.id))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
        })
        .collect()
}

/// Writes the plan (`points.json`) into the sweep directory.
pub fn save_plan(root: &Path, points: &[Point], partition_by: &[String]) -> Result<(), SweepError> {
    std::fs::create_dir_all(root).map_err(|e| SweepError::io(root, e))?;
    let v = json!({
        "partition_by": partition_by,
        "points": points.iter().map(Point::to_json).collect::<Vec<_>>(),
    });
    write_atomic(
        &root.join("points.json"),
        serde_json::to_string_pretty(&v)
            .expect("JSON value")
            .as_bytes(),
    )
}

/// A Hive partition value: bytes other than `[A-Za-z0-9._-]` percent-encoded
/// (pyarrow decodes them), the empty string as Hive's null.
pub(super) fn hive_value(s: &str) -> String {
    if s.is_empty() {
        return "__HIVE_DEFAULT_PARTITION__".into();
    }
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Writes `root/dataset` from the recorded rows of `points`: one Parquet
/// file per partition, columns in a fixed order, rows in plan order. The
/// old dataset is replaced whole. Returns the dataset's path.
pub fn write_dataset(
    root: &Path,
    points: &[Point],
    partition_by: &[String],
) -> Result<PathBuf, SweepError> {
    let rows: Vec<Value> = load_rows(root, points).into_iter().flatten().collect();
    let mut tag_keys: Vec<String> = Vec::new();
    for p in points {
        for (k, _) in &p.tags {
            if !tag_keys.contains(k) {
                tag_keys.push(k.clone());
            }
        }
    }
    // (name, kind): 0 string, 1 int, 2 float.
    let mut cols: Vec<(String, u8)> = vec![("point_id".into(), 0), ("index".into(), 1)];
    for k in ["machine", "kernel", "features", "sysctl", "workload"] {
        cols.push((k.into(), 0));
    }
    cols.push(("seed".into(), 1));
    cols.push(("duration".into(), 0));
    for k in &tag_keys {
        cols.push((k.clone(), 0));
    }
    for k in ["status", "error", "out_dir"] {
        cols.push((k.into(), 0));
    }
    for metric in METRICS {
        cols.push((metric.name.into(), if metric.int { 1 } else { 2 }));
    }
    let cols: Vec<(String, u8)> = cols
        .into_iter()
        .filter(|(n, _)| !partition_by.contains(n))
        .collect();
    // Partitions in first-seen (plan) order.
    let mut parts: Vec<(Vec<String>, Vec<&Value>)> = Vec::new();
    for r in &rows {
        let key: Vec<String> = partition_by
            .iter()
            .map(|k| match &r[k.as_str()] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                v => v.to_string(),
            })
            .collect();
        match parts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => parts.push((key, vec![r])),
        }
    }
    let final_dir = root.join("dataset");
    let tmp = root.join(format!("dataset.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    // Removed if a signal stops the sweep before it is in place.
    let unfinished = schedlab_output::outdir::unfinished(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| SweepError::io(&tmp, e))?;
    for (key, rows) in &parts {
        let mut dir = tmp.clone();
        for (k, v) in partition_by.iter().zip(key) {
            dir.push(format!("{k}={}", hive_value(v)));
        }
        std::fs::create_dir_all(&dir)?;
        let columns: Vec<(String, Column)> = cols
            .iter()
            .map(|(name, kind)| {
                let vals = rows.iter().map(|r| &r[name.as_str()]);
                let col = match kind {
                    0 => Column::Str(
                        vals.map(|v| match v {
                            Value::Null => None,
                            Value::String(s) => Some(s.clone()),
                            v => Some(v.to_string()),
                        })
                        .collect(),
                    ),
                    1 => Column::I64(vals.map(Value::as_i64).collect()),
                    _ => Column::F64(vals.map(Value::as_f64).collect()),
                };
                (name.clone(), col)
            })
            .collect();
        parquet::write_file(&dir.join("part-0.parquet"), &columns)?;
    }
    // Replace the old dataset: move it aside, move the new one in, drop it.
    let old = root.join(format!("dataset.old{}", std::process::id()));
    unfinished.finish(|| -> std::io::Result<()> {
        if final_dir.exists() {
            std::fs::rename(&final_dir, &old)?;
        }
        std::fs::rename(&tmp, &final_dir)?;
        Ok(())
    })?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(final_dir)
}

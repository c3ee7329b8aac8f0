//! What a sweep runs its points with, and why a sweep fails.

use std::path::{Path, PathBuf};

/// Makes one run from its `schedlab run` command line (`argv[0]` is the
/// program's name): `Ok(true)` when it succeeded, `Ok(false)` when a model
/// invariant broke under `--check`, `Err` with the one-line message of a
/// run that could not be made. [`crate::command::run_argv`] is one.
pub type Runner<'a> = &'a (dyn Fn(&[String]) -> Result<bool, String> + Sync);

/// Why a sweep (or a screening's plan) failed. Each message is one line.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The spec cannot be read or has a wrong key or value; the message
    /// names the file (and line or key).
    #[error("{0}")]
    Spec(String),
    /// The plan has more points than allowed.
    #[error(
        "{what}: {points} points ({product}), more than the limit of {max}: --max-points raises it"
    )]
    TooManyPoints {
        /// The spec file, or `montecarlo`.
        what: String,
        /// How many points (or "more than 2^64").
        points: String,
        /// The factors, `2 machines x 3 seeds`.
        product: String,
        /// The limit.
        max: u64,
    },
    /// A point's JSON is not a point.
    #[error("point: {0}")]
    Point(String),
    /// A row without its point's id.
    #[error("row without point_id")]
    RowWithoutId,
    /// No simultaneous runs asked for.
    #[error("--jobs: at least 1")]
    NoJobs,
    /// A file of the sweep directory could not be written.
    #[error("{}", io_text(.path.as_deref(), .source))]
    Io {
        /// The file or directory, when known.
        path: Option<PathBuf>,
        /// What went wrong.
        source: std::io::Error,
    },
    /// No point of the spec could run; each point's error is in the
    /// dataset.
    #[error("{}", none_ran_text(.spec, *.total, .first, .dataset))]
    NoneRan {
        /// The spec file.
        spec: PathBuf,
        /// Its points.
        total: usize,
        /// The first point's id and error, `ID: MESSAGE`.
        first: String,
        /// The dataset holding every point's error.
        dataset: PathBuf,
    },
}

impl SweepError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> SweepError {
        SweepError::Io {
            path: Some(path.to_path_buf()),
            source,
        }
    }
}

impl From<std::io::Error> for SweepError {
    fn from(source: std::io::Error) -> SweepError {
        SweepError::Io { path: None, source }
    }
}

fn io_text(path: Option<&Path>, e: &std::io::Error) -> String {
    match path {
        Some(p) => format!("{}: {e}", p.display()),
        None => e.to_string(),
    }
}

fn none_ran_text(spec: &Path, total: usize, first: &str, dataset: &Path) -> String {
    let none = match total {
        1 => "its one point could not run: ".to_string(),
        n => format!("none of its {n} points could run (the first: "),
    };
    let close = if total == 1 { "" } else { ")" };
    format!(
        "{}: {none}{first}{close}; each point's error is in {}",
        spec.display(),
        dataset.display()
    )
}

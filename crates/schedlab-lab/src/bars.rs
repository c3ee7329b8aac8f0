//! The progress bars on stderr, drawn with indicatif for the callers that
//! ask for them (the command line, the Python package): [`RunsBar`], a
//! batch of independent runs (`WHAT pos/len runs [...]`, the [`Progress`]
//! hooks of sweeps, screenings and comparisons), and [`SimBar`], the
//! simulated time of one run.

use crate::progress::Progress;
use std::sync::OnceLock;

/// A bar drawn when `show` is true, created when the batch starts.
pub struct RunsBar {
    show: bool,
    bar: OnceLock<indicatif::ProgressBar>,
}

impl RunsBar {
    /// A bar shown when `show` is true (hidden otherwise).
    pub fn new(show: bool) -> RunsBar {
        RunsBar {
            show,
            bar: OnceLock::new(),
        }
    }

    /// A bar shown when stderr is a terminal and `quiet` is false.
    pub fn on_terminal(quiet: bool) -> RunsBar {
        use std::io::IsTerminal;
        RunsBar::new(!quiet && std::io::stderr().is_terminal())
    }
}

impl Progress for RunsBar {
    fn start(&self, what: &str, total: u64) {
        let _ = self.bar.set(runs_bar(what, total, self.show));
    }
    fn advance(&self) {
        if let Some(b) = self.bar.get() {
            b.inc(1);
        }
    }
    fn finish(&self) {
        if let Some(b) = self.bar.get() {
            b.finish_and_clear();
        }
    }
}

/// The bar of `len` independent runs, or a hidden one when `show` is false.
fn runs_bar(what: &str, len: u64, show: bool) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {{pos}}/{{len}} runs [{{bar:40}}] {{elapsed_precise}} (eta {{eta}}) {{msg}}"
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar
}

/// The bar of one run's simulated time (`simulated pos/len ms [...]`).
pub struct SimBar(indicatif::ProgressBar);

impl SimBar {
    /// A bar over `total_ms` simulated milliseconds, shown.
    pub fn new(total_ms: u64) -> SimBar {
        let bar = indicatif::ProgressBar::new(total_ms.max(1));
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} simulated {pos}/{len} ms [{bar:40}] {elapsed_precise} (eta {eta})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        SimBar(bar)
    }

    /// The run is at `ms` simulated milliseconds.
    pub fn at(&self, ms: u64) {
        self.0.set_position(ms);
    }

    /// The run is over: the bar is cleared.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

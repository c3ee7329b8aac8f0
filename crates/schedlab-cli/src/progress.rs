//! The progress bar of a batch of independent runs (`WHAT pos/len runs
//! [...]`) on stderr: the library's `Progress` hooks drawn with indicatif.

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

impl schedlab_lab::Progress for RunsBar {
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

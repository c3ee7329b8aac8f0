//! `schedlab run`: the library's run (`schedlab_lab::run`: resolve the
//! arguments, simulate, write the output directory), with its warnings
//! and, on a terminal, a progress bar on stderr while it goes; then its
//! text report, or the broken invariant, printed.

use anyhow::Result;
use schedlab_lab::resolve::RunArgs;
use schedlab_lab::run::{RunHooks, RunOutcome};
use std::process::ExitCode;

/// What `schedlab run` shows while the run goes: its warnings on stderr
/// and, on a terminal, the progress bar; nothing with `--quiet`.
struct Shown {
    quiet: bool,
}

impl RunHooks for Shown {
    fn started(&self, warnings: &[String]) {
        if !self.quiet {
            for wmsg in warnings {
                eprintln!("schedlab: {wmsg}");
            }
        }
    }
    fn show_bar(&self) -> bool {
        use std::io::IsTerminal;
        !self.quiet && std::io::stderr().is_terminal()
    }
}

/// `schedlab run`: the text report on stdout (unless `--quiet`); a broken
/// invariant is one line on stderr and exit status 1.
pub fn run(a: &RunArgs) -> Result<ExitCode> {
    match schedlab_lab::run::run(a, &Shown { quiet: a.quiet })? {
        RunOutcome::Finished { report } => {
            if let Some(text) = report {
                print!("{text}");
            }
            Ok(ExitCode::SUCCESS)
        }
        RunOutcome::Violation(msg) => {
            eprintln!("schedlab: {msg}");
            Ok(ExitCode::from(1))
        }
    }
}

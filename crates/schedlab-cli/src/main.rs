//! `schedlab`: the command-line front end, a thin binary over the library
//! schedlab-lab. The verbs the library serves (`run`, `replay`, `compare`,
//! `report`, `machines`, `features`, `kernels`, `bench`, `sweep`,
//! `montecarlo`) are `schedlab_lab::command`'s: their arguments, the
//! engines they call, what they print. This crate adds the verbs that run
//! a workload on this host (host.rs) and the process around them all: the
//! parsing of the whole command line, the one error line, exit codes,
//! signals. What a run produces and how it is written is the libraries'
//! (`schedlab_lab::run`, `schedlab_output::results`,
//! `schedlab_output::tee`). Every user error is one line on stderr and
//! exit status 2; nothing half-written is left behind; an argument error
//! from clap is that one line too, with clap's tip or the usage folded in
//! after `; `, also exit status 2, while `--help` and `--version` print as
//! clap prints them. SIGINT, SIGTERM and SIGHUP remove what was being
//! written (the stage of `--out`) and exit with 130, 143 and 129 after one
//! line.
//!
//! | file | owns |
//! |---|---|
//! | main.rs | the subcommands (the library's, flattened, and host.rs's); error printing (clap's errors too), exit codes, signals |
//! | host.rs | `schedlab exec`, `record`, `validate`: the workload on this kernel, its recording, real against simulated |
//!
//! The Python package (crates/schedlab-py) binds the library, not this
//! crate: `python -m schedlab` is `schedlab_lab::command::run_argv`, every
//! verb but `exec`, `record` and `validate`.

mod host;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use schedlab_lab::command::{self, clap_error};
use schedlab_lab::user_error::one_line;
use std::process::ExitCode;

/// A deterministic simulator of the Linux fair-class CPU scheduler.
#[derive(Parser, Debug)]
#[command(name = "schedlab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// The library's verbs (`schedlab_lab::command::Cmd`).
    #[command(flatten)]
    Lab(Box<command::Cmd>),
    /// Run a workload as real threads on this host's kernel.
    Exec(host::ExecArgs),
    /// Run a workload on this host under a tracefs capture (root), keeping the host's facts.
    Record(host::ExecArgs),
    /// Simulate a recording's workload on its machine and compare with the real run.
    Validate(host::ValidateArgs),
}

/// The command line: [`Cli`], with `sweep` and `montecarlo` listed last
/// in `--help` (after this crate's verbs, where they always were).
fn cli_command() -> clap::Command {
    let n = Cli::command().get_subcommands().count();
    Cli::command()
        .mut_subcommand("sweep", |c| c.display_order(n))
        .mut_subcommand("montecarlo", |c| c.display_order(n + 1))
}

fn main() -> ExitCode {
    // Like other command-line tools, end quietly when the reader of our
    // output goes away (`schedlab ... | head`) instead of panicking on EPIPE.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread
    // exists has no other effect on the program.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    on_signal_remove_unfinished();
    let mut cmd = cli_command();
    let cli = match cmd
        .try_get_matches_from_mut(std::env::args_os())
        .and_then(|m| Cli::from_arg_matches(&m).map_err(|e| e.format(&mut cmd.clone())))
    {
        Ok(cli) => cli,
        Err(e) => return clap_error::report(e, &cmd),
    };
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("schedlab: error: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP: remove what the run was writing (the
/// stage of `--out DIR`, temporary files; `schedlab_output::outdir::
/// remove_unfinished`), print one line and exit with 128 + the signal's
/// number, as a shell reports a process the signal killed (130, 143, 129).
/// The handlers only wake a thread (signal-hook); the clean-up runs there.
fn on_signal_remove_unfinished() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // A signal the parent set to be ignored stays ignored (`nohup` ignores
    // SIGHUP, a shell's background job SIGINT).
    let handled: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&sig| {
            // SAFETY: with a null new action, sigaction only reads the
            // current one into `old`.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction != libc::SIG_IGN
            }
        })
        .collect();
    let Ok(mut signals) = signal_hook::iterator::Signals::new(handled) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let name = match sig {
                    SIGINT => "SIGINT",
                    SIGTERM => "SIGTERM",
                    _ => "SIGHUP",
                };
                let removed = schedlab_output::outdir::remove_unfinished();
                let what = if removed > 0 {
                    "; the unfinished output was removed"
                } else {
                    ""
                };
                // One line, over any progress bar on the terminal.
                use std::io::IsTerminal;
                let clear = if std::io::stderr().is_terminal() {
                    "\r\x1b[2K"
                } else {
                    ""
                };
                eprintln!("{clear}schedlab: stopped by {name}{what}");
                std::process::exit(128 + sig);
            }
        });
    drop(spawned);
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Lab(c) => command::dispatch(*c),
        Cmd::Exec(args) => host::exec(&args),
        Cmd::Record(args) => host::record(&args),
        Cmd::Validate(args) => host::validate(&args),
    }
}

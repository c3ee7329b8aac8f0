//! `schedlab`: the command-line front end. Thin: it parses arguments
//! (clap), runs the library (the arguments of a run and their resolution
//! into a machine, a workload and a `SimConfig` are
//! `schedlab_lab::resolve`'s, the run itself `schedlab_lab::run`'s), shows
//! progress bars (`schedlab_lab::bars`) and prints. What a run produces
//! and how it is written is the libraries' (`schedlab_lab::run`,
//! `schedlab_output::results`, `schedlab_output::tee`). Every user error is
//! one line on stderr and exit status 2; nothing half-written is left
//! behind; an argument error from clap is that one line too, with clap's
//! tip or the usage folded in after `; `, also exit status 2,
//! while `--help` and `--version` print as clap prints them. SIGINT,
//! SIGTERM and SIGHUP remove what was being written (the stage of `--out`)
//! and exit with 130, 143 and 129 after one line.
//!
//! | file | owns |
//! |---|---|
//! | main.rs | the subcommands; `report`, `machines` (with `--domains`), `features`, `kernels`; error printing (clap's errors too), exit codes |
//! | run.rs | `schedlab run`: the library's run (`schedlab_lab::run`), its warnings, progress bar and text report printed, outcome → exit code |
//! | compare.rs | `schedlab compare`: checks the arguments, resolves each run; the library (`schedlab_lab::compare`) runs the sides; prints the table |
//! | clap_error.rs | clap's argument errors as one `schedlab: error:` line, hint folded in |
//! | machines.rs | `schedlab machines NAME --domains`: the CPUs shown, what was left out |
//! | bench.rs | `schedlab bench`: its arguments, one child process per case (the cases and their figures are `schedlab_lab::bench`), the table |
//! | host.rs | `schedlab exec`, `record`, `validate`: the workload on this kernel, its recording, real against simulated |
//! | sweep.rs | `schedlab sweep`: the library's sweep (`schedlab_lab::sweep`), each point through [`run_argv`] |
//! | montecarlo.rs | `schedlab montecarlo`: the library's screening (`schedlab_lab::montecarlo`), the findings' table |
//!
//! The engines that run many simulations (sweeps, Monte-Carlo screening,
//! the compare runner) are the library schedlab-lab's; this crate gives
//! them a [`run_argv`] to make each sweep point with, one compare run's
//! resolved settings, and a progress bar (`schedlab_lab::bars::RunsBar`).
//!
//! This file is also the root of the crate's library (Cargo.toml's `[lib]`
//! points here), for the Python package (crates/schedlab-py): [`run_argv`]
//! is the whole command line in-process, the runner of its sweep points.

mod bench;
mod clap_error;
mod compare;
mod host;
mod machines;
mod montecarlo;
use schedlab_lab::preflight;
mod run;
mod sweep;

use anyhow::Result;
use clap::{Parser, Subcommand};
use schedlab_lab::resolve;
use schedlab_lab::user_error::one_line;
pub use schedlab_lab::user_error::{user, UserError};
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
    /// Simulate a workload on a machine and write its outputs.
    Run(resolve::RunArgs),
    /// Replay a real ftrace text trace as a workload on any machine and
    /// features (the same as `run replay:TRACE`; takes `run`'s options).
    Replay(resolve::RunArgs),
    /// A/B comparison: N runs per side differing only by seed, mmtests table.
    Compare(compare::CompareArgs),
    /// Write one self-contained report.html for one or more run directories.
    Report {
        /// Output directories of `schedlab run` (several: compared side by side).
        #[arg(required = true)]
        dirs: Vec<std::path::PathBuf>,
        /// Where to write report.html and the SVG plots (created if
        /// missing; an earlier report there is replaced). Default:
        /// `schedlab-report` in the current directory, so the run
        /// directories stay as `schedlab run` wrote them.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// A run's name in the tables and legends, one per DIR in order
        /// (default: the directory's name).
        #[arg(long = "label", value_name = "NAME")]
        labels: Vec<String>,
    },
    /// List the machine presets, or print one machine's topology.
    Machines {
        /// A preset name, `sysfs:DIR`, a machine file (`FILE.toml`) or
        /// `layout:KEY=VALUE,...`.
        name: Option<String>,
        /// Print the sched domains (per CPU, like the kernel's debug output;
        /// above 16 CPUs only CPU 0 and the last CPU unless --cpu is given).
        #[arg(long, requires = "name")]
        domains: bool,
        /// With --domains: print this CPU's domains (repeatable).
        #[arg(long = "cpu", value_name = "N", requires = "domains")]
        cpus: Vec<u32>,
        /// With --domains: the release whose domain set-up to apply
        /// (busy_factor and imbalance_pct changed in 5.10, imb_numa_nr
        /// appeared in 5.18 and shrank in 6.0); default tip.
        #[arg(long, value_name = "VERSION", requires = "domains")]
        kernel: Option<String>,
    },
    /// List every scheduler feature switch with its default.
    Features,
    /// List the kernel releases (--kernel), what changes at each, and
    /// their feature and tunable defaults.
    Kernels,
    /// Run the performance suite and print events/s and simulated s per wall s.
    Bench(bench::BenchArgs),
    /// Run a workload as real threads on this host's kernel.
    Exec(host::ExecArgs),
    /// Run a workload on this host under a tracefs capture (root), keeping the host's facts.
    Record(host::ExecArgs),
    /// Simulate a recording's workload on its machine and compare with the real run.
    Validate(host::ValidateArgs),
    /// Run a sweep spec (cross product of machines, kernels, features,
    /// sysctls, workloads, seeds) on local cores; one Parquet dataset.
    Sweep(sweep::SweepArgs),
    /// Monte-Carlo A/B screening: random scenarios per machine, both
    /// feature sets over several seeds, the differences beyond noise.
    Montecarlo(montecarlo::MonteCarloArgs),
}

#[allow(dead_code)] // in the library build
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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error::report(e, &<Cli as clap::CommandFactory>::command()),
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

/// The whole command line on `args` (`args[0]` is the program's name), in
/// this process, for the Python package and the sweep runner: the same
/// parsing and the same errors as the binary. `Ok(true)`: exit status 0;
/// `Ok(false)`: 1 (a model invariant broke under `--check`); `Err`: the
/// one-line message the binary prints after `schedlab: error: `.
#[allow(dead_code)]
pub fn run_argv(args: &[String]) -> std::result::Result<bool, String> {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return Ok(true);
            }
            let cmd = <Cli as clap::CommandFactory>::command();
            return Err(clap_error::one_line(
                e.kind(),
                &e.render().to_string(),
                &cmd,
            ));
        }
    };
    match dispatch(cli) {
        Ok(code) => Ok(code == ExitCode::SUCCESS),
        Err(e) => Err(one_line(&e)),
    }
}

/// Where `schedlab report` writes without `--out` (relative to the
/// current directory).
const DEFAULT_REPORT_DIR: &str = "schedlab-report";

/// `schedlab report`: load every run directory, then the library writes
/// report.html and the SVG plots.
fn html_report(
    dirs: &[std::path::PathBuf],
    out: Option<std::path::PathBuf>,
    labels: &[String],
) -> Result<ExitCode> {
    use schedlab_output::report_html::{load_run, write_report};
    if !labels.is_empty() && labels.len() != dirs.len() {
        return Err(user(format!(
            "--label: {} labels for {} run directories (give one per DIR, in order)",
            labels.len(),
            dirs.len()
        )));
    }
    let mut runs = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        let mut run = load_run(d).map_err(|e| user(e.to_string()))?;
        if let Some(l) = labels.get(i) {
            run.label = l.clone();
        }
        runs.push(run);
    }
    let out = out.unwrap_or_else(|| std::path::PathBuf::from(DEFAULT_REPORT_DIR));
    let (path, plots) = write_report(&runs, &out).map_err(|e| user(e.to_string()))?;
    println!("wrote {} and {} SVG plots", path.display(), plots.len());
    Ok(ExitCode::SUCCESS)
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Run(args) => run::run(&args),
        Cmd::Replay(mut args) => {
            if !args.sim.workload.starts_with("replay:") {
                args.sim.workload = format!("replay:{}", args.sim.workload);
            }
            run::run(&args)
        }
        Cmd::Compare(args) => compare::run(&args),
        Cmd::Report { dirs, out, labels } => html_report(&dirs, out, &labels),
        Cmd::Machines {
            name,
            domains,
            cpus,
            kernel,
        } => {
            match name {
                None => {
                    for (n, d) in schedlab_core::machine::preset_list() {
                        println!("{n:<18} {d}");
                    }
                }
                Some(n) if domains => {
                    print!(
                        "{}",
                        machines::domains_text(&resolve::machine(&n)?, &cpus, kernel.as_deref())?
                    )
                }
                Some(n) => print!("{}", resolve::machine(&n)?.describe()),
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Features => {
            println!("{:<24} {:<14} description  [values]", "feature", "default");
            for f in schedlab_core::features::FEATURE_TABLE {
                println!(
                    "{:<24} {:<14} {}  [{}]",
                    f.name,
                    f.default,
                    f.doc.trim(),
                    f.values.join("|")
                );
            }
            println!(
                "\nSet with --features NAME,NO_NAME,NAME=value,... ; debugfs view of the defaults:\n{}",
                schedlab_core::features::Features::default().debugfs_line()
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Kernels => {
            print!("{}", schedlab_core::kernels::listing());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bench(args) => bench::run(&args),
        Cmd::Exec(args) => host::exec(&args),
        Cmd::Record(args) => host::record(&args),
        Cmd::Validate(args) => host::validate(&args),
        Cmd::Sweep(args) => sweep::run(&args),
        Cmd::Montecarlo(args) => montecarlo::run(&args),
    }
}

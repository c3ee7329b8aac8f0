//! The command line of the verbs the library serves, in this process:
//! `run`, `replay`, `compare`, `report`, `machines`, `features`,
//! `kernels`, `bench`, `sweep` and `montecarlo`, with the binary's argument parsing
//! (clap), its output and its one-line errors. The binary (schedlab-cli)
//! parses these verbs with [`Cmd`] and runs them with [`dispatch`]; the
//! Python package and the sweep points go through [`run_argv`]. This is the
//! one module of the library that prints: what the engines return, as the
//! binary prints it.
//!
//! | file | owns |
//! |---|---|
//! | mod.rs | [`Cmd`], [`dispatch`], [`run_argv`]; `run` and `replay` (the engine is [`crate::run`]), `report`, `machines`, `features`, `kernels` |
//! | bench.rs | `bench`: its arguments, one child process per case when this is the `schedlab` binary (the cases and their figures are [`crate::bench`]), the table |
//! | compare.rs | `compare`: checks the arguments, resolves each run; the engine ([`crate::compare`]) runs the sides; prints the table |
//! | sweep.rs | `sweep`: the engine's sweep ([`crate::sweep`]), the counts |
//! | montecarlo.rs | `montecarlo`: the engine's screening ([`crate::montecarlo`]), the findings' table |
//! | machines.rs | `machines NAME --domains`: the CPUs shown, what was left out |
//! | clap_error.rs | clap's argument errors as one `schedlab: error:` line, hint folded in |

pub mod bench;
pub mod clap_error;
pub mod compare;
pub mod machines;
pub mod montecarlo;
pub mod sweep;

use crate::resolve::{self, RunArgs};
use crate::run::{RunHooks, RunOutcome};
use crate::user_error::{one_line, user};
use anyhow::Result;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// The binary's description, the first line of `schedlab --help`.
pub const ABOUT: &str = "The schedlab command-line tool";

/// The verbs of the binary that the library does not serve: they run the
/// workload as real threads on this host, its recording, and the model
/// checked against it (schedlab-cli's host.rs over schedlab-host).
pub const BINARY_ONLY: [&str; 3] = ["exec", "record", "validate"];

/// The command line of the library's verbs.
#[derive(Parser, Debug)]
#[command(name = "schedlab", version, about = ABOUT, long_about = None)]
struct Line {
    #[command(subcommand)]
    cmd: Cmd,
}

/// The verbs the library serves (the binary flattens them into its own
/// subcommands).
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Simulate a workload on a machine and write its outputs.
    Run(RunArgs),
    /// Replay a real ftrace text trace as a workload on any machine and
    /// features (the same as `run replay:TRACE`; takes `run`'s options).
    Replay(RunArgs),
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
    /// Run a sweep spec (cross product of machines, kernels, features,
    /// sysctls, workloads, seeds) on local cores; one Parquet dataset.
    Sweep(sweep::SweepArgs),
    /// Monte-Carlo A/B screening: random scenarios per machine, both
    /// feature sets over several seeds, the differences beyond noise.
    Montecarlo(montecarlo::MonteCarloArgs),
}

/// The command line `args` (`args[0]` is the program's name) of one of
/// the library's verbs, in this process: the binary's parsing, output and
/// errors. `Ok(true)`: exit status 0; `Ok(false)`: 1 (a model invariant
/// broke under `--check`); `Err`: the one-line message the binary prints
/// after `schedlab: error: `. The binary's own verbs ([`BINARY_ONLY`])
/// are refused with a line that says so.
pub fn run_argv(args: &[String]) -> std::result::Result<bool, String> {
    if let Some(verb) = args.get(1).filter(|v| BINARY_ONLY.contains(&v.as_str())) {
        return Err(format!(
            "{verb}: a command of the schedlab binary only ({}); in this process: run, replay, compare, report, machines, features, kernels, bench, sweep, montecarlo",
            BINARY_ONLY.join(", ")
        ));
    }
    let line = match Line::try_parse_from(args) {
        Ok(line) => line,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return Ok(true);
            }
            let cmd = <Line as clap::CommandFactory>::command();
            return Err(clap_error::one_line(
                e.kind(),
                &e.render().to_string(),
                &cmd,
            ));
        }
    };
    match dispatch(line.cmd) {
        Ok(code) => Ok(code == ExitCode::SUCCESS),
        Err(e) => Err(one_line(&e)),
    }
}

/// Runs one of the library's verbs, printing what the binary prints; an
/// error is for the caller to print (one line: [`one_line`]).
pub fn dispatch(cmd: Cmd) -> Result<ExitCode> {
    match cmd {
        Cmd::Run(args) => run(&args),
        Cmd::Replay(mut args) => {
            if !args.sim.workload.starts_with("replay:") {
                args.sim.workload = format!("replay:{}", args.sim.workload);
            }
            run(&args)
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
        Cmd::Sweep(args) => sweep::run(&args, &run_argv),
        Cmd::Montecarlo(args) => montecarlo::run(&args, &run_argv),
    }
}

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

/// `schedlab run`: the engine ([`crate::run`]), then its text report on
/// stdout; a broken invariant is one line on stderr and exit status 1.
fn run(a: &RunArgs) -> Result<ExitCode> {
    match crate::run::run(a, &Shown { quiet: a.quiet })? {
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

/// Where `schedlab report` writes without `--out` (relative to the
/// current directory).
const DEFAULT_REPORT_DIR: &str = "schedlab-report";

/// `schedlab report`: load every run directory, then
/// `schedlab_output::report_html` writes report.html and the SVG plots.
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

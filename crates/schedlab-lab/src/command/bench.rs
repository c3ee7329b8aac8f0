//! `schedlab bench`: the performance suite (the cases and the figures of
//! one case are [`crate::bench`]'s). Each case is a fixed workload on a
//! preset; the figures are events per wall second, simulated seconds per
//! wall second and the peak resident memory of the run. Figures go to
//! BENCHMARKS.md, never asserted.
//!
//! Every case runs in a child process of its own (this binary again, with
//! the hidden `--child NAME`), which builds the simulation, runs it and then
//! reads its own peak resident set (`VmHWM` of /proc/self/status): the
//! figure is the high-water mark of a process that did nothing but that
//! case, start-up included (about 2-5 MB for the binary itself). With
//! `--in-process` (or when this is not the `schedlab` binary, e.g. inside
//! the Python package) the cases run in this process and no memory figure is
//! given.

use crate::bench::{peak_rss, run_case, run_case_window, Case, Figures, CASES};
use crate::user_error::user;
use anyhow::{Context, Result};
use clap::Args;
use schedlab_core::time::NSEC_PER_SEC;
use std::process::ExitCode;

/// What the peak-memory column says when the cases ran in this process.
const IN_PROCESS: &str = "not measured: the cases ran in-process (--in-process, or a binary \
     whose file name does not start with `schedlab`, which cannot be re-run as a child)";

/// `schedlab bench` arguments.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Simulated seconds of every case (a decimal number, e.g. 0.1).
    /// Without it each case runs its default length (the `default s`
    /// column of `--list`): 10 s for the small periodic cases, 1 s for
    /// OLTP and the quota hierarchy, 0.1 s for the message-by-message
    /// hackbench, 2 s for the 4096-CPU case (1.5 s of it thread start-up).
    #[arg(long)]
    pub seconds: Option<String>,
    /// Run only this case (repeatable); `--list` names them.
    #[arg(long = "case", value_name = "NAME")]
    pub cases: Vec<String>,
    /// List the cases and exit.
    #[arg(long)]
    pub list: bool,
    /// Print the results as one JSON document instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Run the cases in this process (no child processes; no peak-RSS
    /// figure, since the high-water mark would mix the cases).
    #[arg(long)]
    pub in_process: bool,
    /// Internal: run one case and print its figures as one JSON line.
    #[arg(long, hide = true)]
    pub child: Option<String>,
    /// With `--child`: under `valgrind --tool=callgrind --instr-atstart=no`,
    /// switch callgrind's instrumentation on at the first progress point
    /// (every 2^16 events) at or after this simulated second, and off when
    /// the run ends, so that callgrind counts a steady-state window only
    /// (and the start-up runs at native speed). The window's first event
    /// and its event count go to stderr. Outside valgrind the requests are
    /// no-ops and the run is the same.
    #[arg(long, value_name = "S", requires = "child")]
    pub callgrind_from: Option<String>,
}

/// Runs one case in a child process (this binary, `bench --child`).
fn run_child(exe: &std::path::Path, c: &Case, secs: f64) -> Result<Figures> {
    let out = std::process::Command::new(exe)
        .args(["bench", "--child", c.name, "--seconds", &format!("{secs}")])
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("starting {} for case {}", exe.display(), c.name))?;
    if !out.status.success() {
        anyhow::bail!("case {}: child process failed ({})", c.name, out.status);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str::<serde_json::Value>(text.trim())
        .ok()
        .as_ref()
        .and_then(Figures::from_json)
        .with_context(|| format!("case {}: child output {:?}", c.name, text.trim()))
}

/// Parses the value `s` of option `opt` (`--seconds`, `--callgrind-from`):
/// a positive, finite number of simulated seconds.
fn parse_seconds(opt: &str, s: &str) -> Result<f64> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => Ok(v),
        _ => Err(user(format!(
            "{opt}: {s:?} is not a number of seconds greater than zero (at most 1e6)"
        ))),
    }
}

fn find_case(name: &str) -> Result<&'static Case> {
    CASES.iter().find(|c| c.name == name).ok_or_else(|| {
        let names: Vec<_> = CASES.iter().map(|c| c.name).collect();
        user(format!(
            "--case: no case {name:?}; the cases are {}",
            names.join(", ")
        ))
    })
}

fn mib(b: Option<u64>) -> String {
    b.map_or_else(|| "-".into(), |b| format!("{:.1}", b as f64 / 1048576.0))
}

/// `schedlab bench`.
pub fn run(a: &BenchArgs) -> Result<ExitCode> {
    let seconds = a
        .seconds
        .as_deref()
        .map(|s| parse_seconds("--seconds", s))
        .transpose()?;
    if let Some(name) = &a.child {
        let c = find_case(name)?;
        let from_ns = a
            .callgrind_from
            .as_deref()
            .map(|s| parse_seconds("--callgrind-from", s))
            .transpose()?
            .map(|s| (s * NSEC_PER_SEC as f64).round() as u64);
        let mut f = run_case_window(c, seconds.unwrap_or(c.default_s), from_ns)?;
        f.peak_rss_bytes = peak_rss();
        println!("{}", f.to_json());
        return Ok(ExitCode::SUCCESS);
    }
    if a.list {
        println!("{:<18} {:<18} {:>9}  what", "case", "machine", "default s");
        for c in CASES {
            println!(
                "{:<18} {:<18} {:>9}  {}",
                c.name, c.machine, c.default_s, c.label
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let selected: Vec<&Case> = if a.cases.is_empty() {
        CASES.iter().collect()
    } else {
        a.cases
            .iter()
            .map(|n| find_case(n))
            .collect::<Result<_>>()?
    };
    // Child processes only when this is the schedlab binary itself (a test
    // harness or a copy under another name runs the cases in-process).
    let exe = std::env::current_exe().ok().filter(|p| {
        p.file_stem()
            .is_some_and(|s| s.to_string_lossy().starts_with("schedlab"))
    });
    let exe = if a.in_process { None } else { exe };
    if !a.json {
        println!(
            "{:<48} {:>8} {:>12} {:>8} {:>9} {:>9} {:>12} {:>9} {:>12} {:>9}",
            "case",
            "sim s",
            "events",
            "setup s",
            "wall s",
            "cpu s",
            "events/s",
            "ns/event",
            "sim-s/wall-s",
            "peak MiB"
        );
    }
    let mut all = Vec::new();
    for c in selected {
        let secs = seconds.unwrap_or(c.default_s);
        let f = match &exe {
            Some(exe) => run_child(exe, c, secs)?,
            None => run_case(c, secs)?,
        };
        if !a.json {
            println!(
                "{:<48} {:>8} {:>12} {:>8.3} {:>9.3} {:>9.3} {:>12.0} {:>9.1} {:>12.3} {:>9}",
                f.label,
                f.sim_s,
                f.events,
                f.setup_s,
                f.wall_s,
                f.cpu_s,
                f.events_per_s,
                f.ns_per_event,
                f.sim_s_per_wall_s,
                mib(f.peak_rss_bytes)
            );
        }
        all.push(f);
    }
    if a.json {
        let doc = serde_json::json!({
            "peak_rss": if exe.is_some() {
                "VmHWM of a child process that ran only this case"
            } else {
                IN_PROCESS
            },
            "cases": all.iter().map(Figures::to_json).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else if seconds.is_none() {
        println!(
            "(default lengths per case: `schedlab bench --list`; --seconds N runs every case N simulated s; \
             rates divide by the run's wall time, setup excluded; peak MiB: {})",
            if exe.is_some() { "VmHWM of the case's own child process" } else { IN_PROCESS }
        );
    }
    Ok(ExitCode::SUCCESS)
}

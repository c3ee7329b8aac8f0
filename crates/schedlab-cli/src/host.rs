//! `schedlab exec`, `record` and `validate`: the workload on this host's
//! kernel (schedlab-host), and the model checked against it.
//!
//! * `exec WORKLOAD [--out DIR]`: runs the workload as real threads; with
//!   `--out`, DIR is a run directory in the simulator's layout.
//! * `record WORKLOAD --out DIR`: the same under a tracefs capture; DIR
//!   also gets trace.txt, host.json, sysfs/ and the workload itself
//!   (`workload.json`, a copy of the file, or `workload.spec`, the
//!   generator spec) so `validate` can simulate it again.
//! * `validate DIR [--seeds N] [--json FILE]`: simulates the recorded
//!   workload on the recorded machine (`sysfs:DIR/sysfs`), HZ and
//!   preemption model for seeds 1..N, N at most 1000 (run directories
//!   DIR/sim-seedN/, with traces, staged and committed together after the
//!   last seed; their bytes count against `--max-output` as they are
//!   written), then compares ([`schedlab_host::validate`]).

use anyhow::Result;
use clap::Args;
use schedlab_core::features::PreemptModel;
use schedlab_core::program::Workload;
use schedlab_core::time::parse_duration;
use schedlab_core::{Sim, SimConfig};
use schedlab_host::recording::{apply_placement, check_record_json, validate_kernel};
use schedlab_host::validate::{compare, load_recording, load_sim};
use schedlab_host::{ChannelConfig, ExecOptions, RecordOptions};
use schedlab_lab::resolve;
use schedlab_lab::user_error::user;
use schedlab_output::limit;
use schedlab_output::log_stream::LogStream;
use schedlab_output::outdir::StagedOutDir;
use schedlab_output::results::{check_outcome, RunResults};
use schedlab_output::tee::{TraceOutput, TraceSinks};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `schedlab exec` / `schedlab record` arguments.
#[derive(Args, Debug, Clone)]
pub struct ExecArgs {
    /// Workload: an rt-app JSON file or a generator spec (`hackbench:groups=2,ipc=pipe`).
    pub workload: String,
    /// Output directory (a run directory in the simulator's layout).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run length (500ms, 2s; bare number = seconds); overrides the workload's.
    #[arg(long)]
    pub duration: Option<String>,
    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run on CPUs 0..N-1 only (the process's CPU affinity, which every
    /// thread inherits); `record` then describes an N-CPU machine in
    /// DIR/sysfs, so `validate` simulates N CPUs.
    #[arg(long, value_name = "N")]
    pub cpus: Option<u32>,
}

/// `schedlab validate` arguments.
#[derive(Args, Debug, Clone)]
pub struct ValidateArgs {
    /// A recording (`schedlab record ... --out DIR`).
    pub dir: PathBuf,
    /// Simulated runs to compare with (seeds 1..N, at most 1000).
    #[arg(long, default_value_t = 3)]
    pub seeds: u64,
    /// Most bytes the simulated runs' folders (DIR/sim-seedN/) may take
    /// together (4G, 500M, bytes; default 4 GiB), counted as they are
    /// written; past it validate stops and writes nothing.
    #[arg(long, value_name = "SIZE")]
    pub max_output: Option<String>,
    /// Also write the report as JSON to FILE (`-`: stdout instead of the table).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Feature switches for the simulation: NAME, NO_NAME, comma-separated.
    #[arg(long, default_value = "")]
    pub features: String,
    /// Kernel release to simulate (`schedlab kernels`). Default: the
    /// recorded host's (host.json's `uname -r`, mapped to a listed release).
    #[arg(long, value_name = "VERSION")]
    pub kernel: Option<String>,
    /// Host noise for the simulation: `recorded` (DIR/noise.json, the
    /// host's measured noise; the clean model when the recording has none),
    /// `off`, or a noise.json file.
    #[arg(long, default_value = "recorded", value_name = "recorded|off|FILE")]
    pub noise: String,
}

/// `--cpus N`: restricts this process to CPUs 0..N-1.
fn restrict_cpus(n: u32) -> Result<()> {
    let allowed = schedlab_host::sys::online_cpus();
    if n == 0 {
        return Err(user("--cpus 0: needs at least one CPU"));
    }
    if let Some(c) = (0..n).find(|c| !allowed.contains(c)) {
        return Err(user(format!(
            "--cpus {n}: CPU {c} is not available to this process (allowed: {})",
            schedlab_host::facts::format_cpu_list(&allowed)
        )));
    }
    let cpus: Vec<u32> = (0..n).collect();
    schedlab_host::sys::set_affinity(0, &cpus).map_err(host_err)
}

fn host_workload(a: &ExecArgs) -> Result<(Workload, ExecOptions)> {
    if let Some(n) = a.cpus {
        restrict_cpus(n)?;
    }
    let ncpu = schedlab_host::sys::online_cpus().len().max(1);
    let (w, warnings) = resolve::workload(&a.workload, ncpu)?;
    if !a.quiet {
        for m in warnings {
            eprintln!("schedlab: {m}");
        }
    }
    let mut o = ExecOptions {
        channels: ChannelConfig::from_spec(&a.workload),
        ..Default::default()
    };
    if let Some(d) = &a.duration {
        let ns = parse_duration(d).map_err(|e| user(format!("--duration: {e}")))?;
        if ns == 0 {
            return Err(user("--duration: must be greater than zero"));
        }
        o.duration_ns = Some(ns);
    }
    Ok((w, o))
}

fn host_err(e: schedlab_host::HostError) -> anyhow::Error {
    user(e.to_string())
}

/// `schedlab exec`.
pub fn exec(a: &ExecArgs) -> Result<ExitCode> {
    let (w, o) = host_workload(a)?;
    let r = schedlab_host::exec(&w, &o).map_err(host_err)?;
    let s = match &a.out {
        Some(dir) => schedlab_host::rundir::write_run_dir(dir, &w, &r, None).map_err(host_err)?,
        None => schedlab_host::rundir::host_summary(&w, &r, None, None),
    };
    if !a.quiet {
        for m in &r.warnings {
            eprintln!("schedlab: {m}");
        }
        print!("{}", schedlab_output::table::task_table(&s.tasks));
    }
    Ok(ExitCode::SUCCESS)
}

/// `schedlab record`.
pub fn record(a: &ExecArgs) -> Result<ExitCode> {
    let Some(dir) = &a.out else {
        return Err(user("record needs --out DIR"));
    };
    let (w, o) = host_workload(a)?;
    let opts = RecordOptions {
        exec: o.clone(),
        ..Default::default()
    };
    let r = schedlab_host::record(&w, dir, &opts).map_err(host_err)?;
    // The workload itself, so `validate` can simulate it again.
    if Path::new(&a.workload).is_file() {
        std::fs::copy(&a.workload, dir.join("workload.json"))
            .map_err(|e| user(format!("{}: cannot copy: {e}", a.workload)))?;
    } else {
        std::fs::write(dir.join("workload.spec"), format!("{}\n", a.workload))
            .map_err(|e| user(format!("{}: cannot write: {e}", dir.display())))?;
    }
    let args = serde_json::json!({
        "workload": a.workload,
        "duration_ns": o.duration_ns,
        "cpus": a.cpus,
    });
    std::fs::write(
        dir.join("record.json"),
        serde_json::to_string_pretty(&args).unwrap_or_default() + "\n",
    )
    .map_err(|e| user(format!("{}: cannot write: {e}", dir.display())))?;
    if !a.quiet {
        for m in &r.exec.warnings {
            eprintln!("schedlab: {m}");
        }
        let s: schedlab_output::summary::Summary =
            schedlab_output::summary::Summary::from_json_str(
                &std::fs::read_to_string(dir.join("summary.json")).unwrap_or_default(),
            )
            .unwrap_or_default();
        print!("{}", schedlab_output::table::task_table(&s.tasks));
        println!(
            "recorded {} trace lines into {}",
            r.host.trace.lines,
            dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The recorded workload: DIR/workload.json or DIR/workload.spec.
fn recorded_workload(dir: &Path, m: &schedlab_core::machine::Machine) -> Result<Workload> {
    let json = dir.join("workload.json");
    let spec = dir.join("workload.spec");
    let src = if json.is_file() {
        json.display().to_string()
    } else if spec.is_file() {
        let t = std::fs::read_to_string(&spec)
            .map_err(|e| user(format!("{}: cannot read: {e}", spec.display())))?;
        let t = t.trim().to_string();
        if schedlab_workload::generators::generator(&t, m.nr_cpus()).is_none() {
            return Err(user(format!(
                "{}:1: '{t}' is not a generator spec",
                spec.display()
            )));
        }
        t
    } else {
        return Err(user(format!(
            "{}: missing (and no workload.spec): the recording does not say what ran",
            json.display()
        )));
    };
    Ok(resolve::workload(&src, m.nr_cpus())?.0)
}

/// Most seeds `validate` simulates: as many as `compare` runs a side
/// (`--runs`); each is a whole run written with its traces.
const MAX_SEEDS: u64 = 1000;

/// Bytes of the files in `dir` (recursively).
fn dir_bytes(dir: &Path) -> std::io::Result<u64> {
    let mut n = 0;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let m = e.metadata()?;
        n += if m.is_dir() {
            dir_bytes(&e.path())?
        } else {
            m.len()
        };
    }
    Ok(n)
}

pub fn validate(a: &ValidateArgs) -> Result<ExitCode> {
    if a.seeds == 0 {
        return Err(user("--seeds: must be at least 1"));
    }
    if a.seeds > MAX_SEEDS {
        return Err(user(format!(
            "--seeds: {} is more than {MAX_SEEDS}, the most validate simulates (as compare's --runs): each seed is a whole run written with its traces",
            a.seeds
        )));
    }
    let max_output = match &a.max_output {
        Some(t) => schedlab_lab::preflight::size_flag("--max-output", t)?,
        None => schedlab_workload::limits::DEFAULT_MAX_OUTPUT_BYTES,
    };
    // Bad recordings fail here, before any simulation.
    let real = load_recording(&a.dir).map_err(|e| user(e.to_string()))?;
    let hp = a.dir.join("host.json");
    let host: Value = serde_json::from_str(&std::fs::read_to_string(&hp).unwrap_or_default())
        .map_err(|e| user(format!("{}:{}: {e}", hp.display(), e.line())))?;
    if !host["host"].is_object() {
        return Err(user(format!(
            "{}: no \"host\" object: not the host.json `schedlab record` writes",
            hp.display()
        )));
    }
    check_record_json(&a.dir.join("record.json")).map_err(host_err)?;
    let hz = host["host"]["hz"]["value"].as_u64().unwrap_or(250) as u32;
    let preempt_name = host["host"]["preempt"]["value"].as_str().unwrap_or("none");
    let preempt = PreemptModel::parse(preempt_name).ok_or_else(|| {
        user(format!(
            "{}: unknown preemption model '{preempt_name}'",
            hp.display()
        ))
    })?;
    // The host's measured noise (before the machine: a bad noise.json is
    // the recording's fault whatever else is missing).
    let (noise, noise_note) = match a.noise.as_str() {
        "recorded" => {
            let np = a.dir.join("noise.json");
            if np.is_file() {
                (
                    resolve::noise(&np.display().to_string())?,
                    "recorded (the recording's noise.json)".to_string(),
                )
            } else {
                (
                    schedlab_core::NoiseSetting::Off,
                    "off (the recording has no noise.json)".to_string(),
                )
            }
        }
        "off" => (
            schedlab_core::NoiseSetting::Off,
            "off (--noise off)".to_string(),
        ),
        other => (resolve::noise(other)?, format!("{other} (--noise)")),
    };
    let sysfs = a.dir.join("sysfs");
    // The host's measured costs when the recording has them
    // (scripts/host/wakecost.c --json; schedlab_host::costs), read before the
    // machine like noise.json.
    let cp = a.dir.join("costs.json");
    let host_costs = if cp.is_file() {
        let text = std::fs::read_to_string(&cp)
            .map_err(|e| user(format!("{}: cannot read: {e}", cp.display())))?;
        Some(schedlab_host::costs::parse(&cp, &text).map_err(user)?)
    } else {
        None
    };
    let mut machine = resolve::machine(&format!("sysfs:{}", sysfs.display()))?;
    let costs_note = if let Some(hc) = &host_costs {
        hc.apply(&mut machine.costs);
        format!(
            "model machine costs: measured (the recording's costs.json: switch {} ns, wakeup {} ns, IPI send {} ns, IPI latency {} ns)",
            hc.context_switch_ns, hc.wakeup_ns, hc.ipi_send_ns, hc.ipi_latency_ns
        ) + &hc.channel_ns.map_or(String::new(), |c| {
            format!(
                "; pipe write/read {}/{} ns, unix write/read {}/{} ns",
                c[0], c[1], c[2], c[3]
            )
        }) + &hc.ttwu_xcpu_ns.map_or(String::new(), |x| {
            format!(
                "; remote wake-up extra: waker {} ns, wakee's switch in {} ns",
                x[0], x[1]
            )
        }) + &{
            let s = schedlab_core::sched::syscall_cost::SyscallCosts::for_machine(&machine.costs)
                .chan_sleep;
            let from = if hc.chan_sleep_ns.is_some() {
                "measured"
            } else {
                "the host's share of the switch"
            };
            format!(
                "; sleep path of a blocking pipe/unix call {}/{} ns ({from})",
                s[0], s[1]
            )
        }
    } else {
        "model machine costs: the sysfs import's guess (the recording has no costs.json)"
            .to_string()
    };
    let placement_note = apply_placement(&a.dir, &mut machine).map_err(host_err)?;
    let w = recorded_workload(&a.dir, &machine)?;
    // The recorded run's length when it had an end; else the workload's own.
    let had_end = host["clock"]["end_ns"].as_u64().unwrap_or(0) > 0;
    let duration_ns = had_end.then_some(real.duration_ns).filter(|&d| d > 0);
    let (kernel, kernel_note) =
        validate_kernel(a.kernel.as_deref(), &host, &hp).map_err(host_err)?;
    resolve::parse_features("--features", &a.features)?;
    let opts = schedlab_core::kernels::resolve(Some(kernel), &a.features, &w.sysctls, &[])
        .map_err(|e| user(e.to_string()))?;
    // Every seed's folder is staged and all are committed together once
    // the last is written: an error leaves the recording as it was. What
    // they write counts against --max-output as it is written (logs and
    // trace spools by `limit`, the other files once written).
    let _limit = limit::Scope::enter(max_output);
    let over = |seed: u64| {
        user(format!(
            "{}: the simulated runs reached the --max-output limit of {} at seed {seed} of {}; nothing was written (--max-output raises the limit)",
            a.dir.display(),
            schedlab_lab::preflight::size(max_output),
            a.seeds
        ))
    };
    let mut stages = Vec::new();
    let mut sims = Vec::new();
    for seed in 1..=a.seeds {
        let cfg = SimConfig {
            seed,
            hz,
            preempt,
            duration_ns,
            kernel: opts.kernel,
            features: opts.features.clone(),
            tunables: opts.tunables.clone(),
            noise: noise.clone(),
            ..SimConfig::default()
        };
        let out = a.dir.join(format!("sim-seed{seed}"));
        // A previous validate's folder is replaced (only a run's).
        let stage = StagedOutDir::stage_with(&out, true)
            .map_err(|e| user(format!("{}: cannot create: {e}", out.display())))?;
        let tee = TraceSinks::new(machine.nr_cpus() as u32)?;
        let mut sim = Sim::new(machine.clone(), &w, cfg, tee)
            .map_err(|e| user(format!("{}: {e}", a.dir.display())))?;
        sim.stream_rows(Box::new(LogStream::new(stage.appender(), &w)));
        let used_before = limit::used();
        let res = sim.run_while(|_| limit::exceeded().is_none());
        if limit::exceeded().is_some() {
            return Err(over(seed));
        }
        if let Some(mut rows) = sim.take_row_sink() {
            rows.finish()?;
        }
        check_outcome(&sim, &res).map_err(|e| user(format!("{}: {e}", a.dir.display())))?;
        let results = RunResults::collect(&sim, &res, &w);
        let charged = limit::used() - used_before;
        results.write_dir(&stage)?;
        sim.into_sink()
            .write_trace(results.summary.machine.cpus, &stage)?;
        // What the folder holds and was not counted yet (summary.json,
        // schedstat, profile, the trace files beyond their spools).
        let all = dir_bytes(stage.stage_dir())
            .map_err(|e| user(format!("{}: cannot read: {e}", stage.stage_dir().display())))?;
        let rest = usize::try_from(all.saturating_sub(charged)).unwrap_or(usize::MAX);
        if limit::charge(rest).is_err() {
            return Err(over(seed));
        }
        let mut run = load_sim(stage.stage_dir()).map_err(|e| user(e.to_string()))?;
        run.dir = out;
        sims.push(run);
        stages.push(stage);
    }
    for stage in stages {
        stage.commit().map_err(|e| user(e.to_string()))?;
    }
    let mut report = compare(&real, &sims);
    report.notes.push(format!("model noise: {noise_note}"));
    report
        .notes
        .push(format!("model kernel: {} ({kernel_note})", opts.kernel));
    report.notes.push(costs_note);
    report.notes.push(placement_note);
    let mut j = report.to_json();
    j["kernel"] = serde_json::json!({ "release": opts.kernel, "source": kernel_note });
    let json = serde_json::to_string_pretty(&j).unwrap_or_default() + "\n";
    match &a.json {
        Some(p) if p.as_os_str() == "-" => print!("{json}"),
        Some(p) => {
            schedlab_output::outdir::write_file_atomic(p, json.as_bytes())
                .map_err(|e| user(format!("{}: cannot write: {e}", p.display())))?;
            print!("{}", report.to_text());
        }
        None => print!("{}", report.to_text()),
    }
    Ok(ExitCode::SUCCESS)
}

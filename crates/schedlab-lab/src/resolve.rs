//! Arguments → resolved objects (ripgrep's LowArgs → HiArgs split): the
//! machine, the workload, the run configuration. The arguments are
//! `schedlab run`'s (clap's derive: the in-process command line,
//! [`crate::command`], flattens them into its subcommands).

use crate::user_error::user;
use anyhow::Result;
use clap::Args;

/// `--machine` when none is given.
pub const DEFAULT_MACHINE: &str = "vm-2cpu";
use schedlab_core::features::{Features, PreemptModel};
use schedlab_core::machine::layout_file::LAYOUT_PREFIX;
use schedlab_core::machine::Machine;
use schedlab_core::program::Workload;
use schedlab_core::SimConfig;
use std::path::{Path, PathBuf};

/// What describes one simulated run, shared by `schedlab run` and
/// `schedlab compare` (flattened into both).
#[derive(Args, Debug, Clone)]
pub struct SimArgs {
    /// Workload: an rt-app JSON file, a generator spec such as
    /// `oltp:workers=64,cpu_us=80,io_us=120`, or an ftrace text trace to
    /// replay (`replay:TRACE.txt`, or any file that starts `# tracer:`).
    pub workload: String,
    /// Machine: a preset name (see `schedlab machines`), `sysfs:DIR`, a
    /// machine file (`FILE.toml`, docs/formats.md §3.1) or the same keys
    /// inline (`layout:sockets=2,cores_per_llc=32,like=icx-2s-80c-ht`).
    #[arg(long, default_value = DEFAULT_MACHINE)]
    pub machine: String,
    /// Master seed; runs differ only by it.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run length (250us, 500ms, 0.5s, 10s; bare number = seconds);
    /// overrides the workload's own.
    #[arg(long, allow_hyphen_values = true)]
    pub duration: Option<String>,
    /// CONFIG_HZ.
    #[arg(long, default_value_t = 250)]
    pub hz: u32,
    /// Preemption model: none, voluntary, full, lazy.
    #[arg(long, default_value = "full")]
    pub preempt: String,
    /// Simulate every pipe/socket read and write as its own event, without
    /// the closed-form fast-forward (same outputs, slower; for testing it).
    #[arg(long)]
    pub message_by_message: bool,
    /// Task-group settings, `PATH:FILE=VALUE[:FILE=VALUE...]` with cgroup
    /// v2/v1 cpu file names; commas in VALUE stand for spaces
    /// (`/capped:cpu.max=20000,100000`). Repeatable; applied on top of the
    /// workload's settings, creating the group if needed.
    #[arg(long = "cgroup", value_name = "PATH:FILE=VALUE")]
    pub cgroup: Vec<String>,
    /// Most threads the workload may create; more is refused before
    /// anything is built (see preflight.rs).
    #[arg(long, default_value_t = schedlab_workload::limits::DEFAULT_MAX_TASKS)]
    pub max_tasks: u64,
    // --- kernel generations: kept together ---
    /// Kernel release whose fair class (CFS up to 6.5, EEVDF from 6.6),
    /// feature defaults and tunable defaults the run starts from: 5.4,
    /// 5.10, 5.15, 5.19, 6.1, 6.6, 6.12, 6.15, 6.18, 6.19, tip (the
    /// default). See `schedlab kernels`.
    #[arg(long, value_name = "VERSION")]
    pub kernel: Option<String>,
    /// A scheduler tunable under its kernel name (kernel.sched_rt_runtime_us,
    /// debugfs base_slice_ns, latency_ns, migration_cost_ns, ...; see
    /// `schedlab kernels`). Repeatable; applied after the workload's
    /// global.sysctl.
    #[arg(long = "sysctl", value_name = "NAME=VALUE")]
    pub sysctl: Vec<String>,
    /// Longest run accepted, from the file or --duration (default one
    /// day; at most 365 days).
    #[arg(long, value_name = "DURATION")]
    pub max_duration: Option<String>,
    /// Most CPUs a machine may have (at most 16384).
    #[arg(long, default_value_t = schedlab_workload::limits::DEFAULT_MAX_CPUS)]
    pub max_cpus: usize,
    /// Most bytes a run may write to --out (4G, 500M, ...; default 4G):
    /// rt-app logs and --trace files, counted as they are written; the run
    /// stops at the limit and writes nothing.
    #[arg(long, value_name = "SIZE")]
    pub max_output: Option<String>,
    /// Host noise (interrupts, timer lateness, steal; docs/noise.md):
    /// `off` (the clean model, the default), `machine` (the machine's
    /// measured noise; only vm-2cpu has one), or a recording's noise.json.
    #[arg(long, default_value = "off", value_name = "off|machine|FILE")]
    pub noise: String,
}

impl SimArgs {
    /// `--max-output` in bytes.
    pub fn max_output_bytes(&self) -> Result<u64> {
        match &self.max_output {
            Some(t) => Ok(crate::preflight::size_flag("--max-output", t)?),
            None => Ok(schedlab_workload::limits::DEFAULT_MAX_OUTPUT_BYTES),
        }
    }
}

/// `schedlab run` arguments.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The run.
    #[command(flatten)]
    pub sim: SimArgs,
    /// Feature switches: NAME, NO_NAME, comma-separated.
    #[arg(long, default_value = "")]
    pub features: String,
    /// Output directory (written atomically; an existing non-empty one is
    /// refused unless --force).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an existing --out directory of an earlier run, whole.
    #[arg(long)]
    pub force: bool,
    /// Also write the scheduler trace, three files in --out DIR:
    /// trace.txt (ftrace text, as `trace-cmd report` prints it), trace.dat
    /// (trace-cmd's binary format, for KernelShark) and trace.pftrace
    /// (Perfetto, for ui.perfetto.dev).
    #[arg(long)]
    pub trace: bool,
    /// Also write counters.csv in --out DIR: the run's cumulative switches,
    /// involuntary switches, migrations, switches to idle and CPU time
    /// (task, idle, scheduler), sampled at this period of simulated time
    /// (1ms, 100us; at least 10us), for rates over any window of the run.
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub counters_every: Option<String>,
    /// Print one row per thread (default: one row per task name, the
    /// thread name without its `-<n>` index, e.g. `cfs_thread`).
    #[arg(long)]
    pub per_task: bool,
    /// Verify the model's invariants after every event.
    #[arg(long)]
    pub check: bool,
    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Resolves `--machine`: a preset, `sysfs:DIR`, `layout:KEY=VALUE,...`,
/// or a machine file (a value ending in `.toml` or containing a `/`).
pub fn machine(spec: &str) -> Result<Machine> {
    crate::machine::resolve(spec).map_err(|e| user(e.0))
}

pub use crate::machine::is_machine_file;

/// Shortest `--counters-every`: a sample costs a pass over every thread
/// and CPU, so a period much below a scheduling event's spacing would
/// cost more than the run.
const MIN_COUNTERS_EVERY_NS: u64 = 10_000;

/// `--counters-every`: the sampling period in ns.
pub fn counters_every(text: &str) -> Result<u64> {
    if text.trim_start().starts_with('-') {
        return Err(user(format!(
            "--counters-every: {text} is negative: give a period of at least 10us"
        )));
    }
    let ns = schedlab_core::time::parse_duration(text)
        .map_err(|e| user(format!("--counters-every: {e}")))?;
    if ns < MIN_COUNTERS_EVERY_NS {
        return Err(user(format!(
            "--counters-every: {text} is below the shortest period, 10us"
        )));
    }
    Ok(ns)
}

/// What a refusal about the resolved machine names: the file or the
/// `layout:` string when there is one, else the flag.
pub fn machine_what(spec: &str) -> String {
    if is_machine_file(spec) || spec.starts_with(LAYOUT_PREFIX) {
        spec.to_string()
    } else {
        "--machine".to_string()
    }
}

/// Reads and lowers the workload for a machine of `nr_cpus` CPUs.
pub fn workload(path: &str, nr_cpus: usize) -> Result<(Workload, Vec<String>)> {
    use schedlab_workload::generators;
    if let Some(trace) = path.strip_prefix("replay:") {
        return replay(trace);
    }
    if let Some(r) = generators::generator(path, nr_cpus) {
        let loaded = r.map_err(|e| user(e.to_string()))?;
        return Ok((loaded.workload, loaded.warnings));
    }
    // `NAME:...` that names no generator and no file: a mistyped generator.
    if !Path::new(path).exists() {
        if let Some(msg) = generators::unknown_generator(path) {
            return Err(user(msg));
        }
    }
    let text = std::fs::read(path).map_err(|e| user(format!("{path}: cannot read: {e}")))?;
    let text = String::from_utf8(text).map_err(|_| user(format!("{path}: not UTF-8 text")))?;
    if text.trim_start().starts_with("# tracer:") {
        return replay_text(path, &text);
    }
    let loaded =
        schedlab_workload::load_rtapp(path, &text, nr_cpus).map_err(|e| user(e.to_string()))?;
    Ok((loaded.workload, loaded.warnings))
}

/// A real ftrace text trace (the layout of `/sys/kernel/tracing/trace`) as
/// a workload: schedlab-workload's replay (run bursts, sleeps, wakeup
/// dependencies, timers, forks). What it found is said as warnings.
fn replay(path: &str) -> Result<(Workload, Vec<String>)> {
    let text = std::fs::read(path).map_err(|e| user(format!("{path}: cannot read: {e}")))?;
    let text = String::from_utf8(text).map_err(|_| user(format!("{path}: not UTF-8 text")))?;
    replay_text(path, &text)
}

fn replay_text(path: &str, text: &str) -> Result<(Workload, Vec<String>)> {
    use schedlab_workload::replay::{replay_trace, ReplayOptions};
    let opts = ReplayOptions::default();
    let r = replay_trace(text, path, &opts).map_err(|e| user(e.to_string()))?;
    let (n, max) = (
        r.workload.tasks.len() as u64,
        schedlab_workload::limits::max_tasks(),
    );
    if n > max {
        return Err(user(format!(
            "{path}: the trace has {n} tasks, more than {max} ({})",
            schedlab_workload::limits::max_tasks_hint()
        )));
    }
    let rep = &r.report;
    let mut warnings = vec![format!(
        "{path}: replayed {} tasks from {} event lines ({} used, {} switches inferred from the context column, {:.3} s traced)",
        r.workload.tasks.len(),
        rep.lines,
        rep.events_used,
        rep.inferred_switches,
        rep.span_ns as f64 / 1e9
    )];
    if !rep.skipped.is_empty() {
        let list: Vec<String> = rep
            .skipped
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        warnings.push(format!("{path}: events skipped: {}", list.join(", ")));
    }
    Ok((r.workload, warnings))
}

/// Reads and lowers the workload of a run, then applies its `--cgroup`
/// settings ([`cgroups`]).
pub fn run_workload(
    a: &SimArgs,
    m: &schedlab_core::machine::Machine,
) -> Result<(Workload, Vec<String>)> {
    schedlab_workload::limits::set_max_tasks(a.max_tasks);
    // A generator whose threads the machine cannot hold is refused before
    // it builds them (preflight.rs, "the workload as built").
    schedlab_workload::limits::set_max_build_bytes(crate::preflight::build_budget());
    if let Some(d) = &a.max_duration {
        crate::preflight::max_duration_flag(d)?;
    }
    let (mut w, warnings) = workload(&a.workload, m.nr_cpus())?;
    cgroups(&mut w, &a.cgroup)?;
    Ok((w, warnings))
}

/// Applies `--cgroup PATH:FILE=VALUE[:FILE=VALUE...]` arguments to the
/// workload's task groups (semantics: `schedlab_workload::cgroup`).
pub fn cgroups(w: &mut Workload, args: &[String]) -> Result<()> {
    use schedlab_workload::cgroup;
    let parsed = args
        .iter()
        .map(|a| cgroup::parse_arg(a).map_err(|e| user(format!("--cgroup {a}: {e}"))))
        .collect::<Result<Vec<_>>>()?;
    cgroup::apply_overrides(w, &parsed).map_err(|e| user(format!("--cgroup: {e}")))
}

/// Parses a feature list given with `flag`. `NO_NAME` of a switch that
/// takes values (`NO_THROTTLE`) is answered with those values.
pub fn parse_features(flag: &str, list: &str) -> Result<Features> {
    use schedlab_core::features::FEATURE_TABLE;
    for item in list.split(',').map(str::trim) {
        let Some(rest) = item.strip_prefix("NO_") else {
            continue;
        };
        if let Some(f) = FEATURE_TABLE
            .iter()
            .find(|f| f.name == rest && f.values != ["on", "off"])
        {
            return Err(user(format!(
                "{flag}: {item}: {rest} is not an on/off switch; choose one of its values: {}",
                f.values
                    .iter()
                    .map(|v| format!("{rest}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Features::parse(list).map_err(|e| user(format!("{flag}: {e}")))
}

/// Resolves the run configuration (with the feature switches `features`
/// and `--check`); checks the run has an end.
pub fn config(a: &SimArgs, features: &str, check: bool, w: &Workload) -> Result<SimConfig> {
    config_for(a, a.kernel.as_deref(), "--features", features, check, w)
}

/// [`config`] with the kernel release and the feature list (named `flag`
/// in errors) of one side of a comparison.
#[allow(clippy::needless_update)]
pub fn config_for(
    a: &SimArgs,
    kernel: Option<&str>,
    flag: &str,
    features: &str,
    check: bool,
    w: &Workload,
) -> Result<SimConfig> {
    parse_features(flag, features)?;
    let opts = schedlab_core::kernels::resolve(kernel, features, &w.sysctls, &a.sysctl)
        .map_err(|e| user(e.to_string()))?;
    let preempt = PreemptModel::parse(&a.preempt).ok_or_else(|| {
        user(format!(
            "--preempt: unknown model '{}' (none, voluntary, full, lazy)",
            a.preempt
        ))
    })?;
    if !(100..=10_000).contains(&a.hz) {
        return Err(user(format!("--hz: {} is outside 100..=10000", a.hz)));
    }
    let duration_ns = match &a.duration {
        Some(d) => Some(crate::preflight::duration_flag(d)?),
        None => None,
    };
    let forever = w.tasks.iter().any(|t| t.program.loops.is_none());
    if duration_ns.is_none() && w.duration_ns.is_none() && forever {
        return Err(user(format!(
            "{}: the workload loops for ever and has no duration: set global.duration or --duration",
            a.workload
        )));
    }
    Ok(SimConfig {
        seed: a.seed,
        hz: a.hz,
        preempt,
        duration_ns,
        features: opts.features,
        tunables: opts.tunables,
        kernel: opts.kernel,
        check,
        // Kept so that fields other branches add need no edit here.
        noise: noise(&a.noise)?,
        fast_forward: !a.message_by_message,
        ..SimConfig::default()
    })
}

/// `--noise machine` needs a machine with measured noise: refused on the
/// others rather than silently the clean model.
pub fn check_noise(a: &SimArgs, m: &schedlab_core::machine::Machine) -> Result<()> {
    if a.noise == "machine" && m.noise.is_none() {
        return Err(user(format!(
            "--noise machine: {} has no measured noise (only vm-2cpu has one); give off or a recording's noise.json",
            a.machine
        )));
    }
    Ok(())
}

/// Resolves `--noise`: `machine`, `off`, or a noise.json file.
pub fn noise(spec: &str) -> Result<schedlab_core::NoiseSetting> {
    use schedlab_core::NoiseSetting;
    match spec {
        "machine" => Ok(NoiseSetting::Machine),
        "off" => Ok(NoiseSetting::Off),
        f => {
            let t = std::fs::read_to_string(f).map_err(|e| {
                user(format!(
                    "--noise: {f}: cannot read ({e}); give machine, off or a noise.json"
                ))
            })?;
            schedlab_host::noise::params_from_json(&t)
                .map(NoiseSetting::Given)
                .map_err(|(l, m)| {
                    if l > 0 {
                        user(format!("{f}:{l}: {m}"))
                    } else {
                        user(format!("{f}: {m}"))
                    }
                })
        }
    }
}

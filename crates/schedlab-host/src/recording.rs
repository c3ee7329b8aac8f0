//! What a recording directory says beside its trace, for `validate`: its
//! record.json checked, its measured vCPU placement (c2c.json) applied to
//! the model's machine, and the kernel release to simulate.

use crate::error::HostError;
use serde_json::Value;
use std::path::Path;

fn recording_err(msg: impl Into<String>) -> HostError {
    HostError::Recording(msg.into())
}

/// The recording's measured vCPU placement (`c2c.json`, written by
/// scripts/host/validate-host.sh around hackbench recordings;
/// `schedlab_host::c2c`) as the line latency between its two CPUs; the
/// note says what the model took.
pub fn apply_placement(
    dir: &Path,
    machine: &mut schedlab_core::machine::Machine,
) -> Result<String, HostError> {
    let p = dir.join("c2c.json");
    if !p.is_file() {
        return Ok(
            "model line latency: the sysfs import's guess (the recording has no c2c.json)"
                .to_string(),
        );
    }
    let text = std::fs::read_to_string(&p)
        .map_err(|e| recording_err(format!("{}: cannot read: {e}", p.display())))?;
    let c = crate::c2c::parse(&p, &text).map_err(recording_err)?;
    let n = machine.nr_cpus();
    if c.cpus.iter().any(|&x| x >= n) {
        // A recording confined to fewer CPUs (`record --cpus`): the
        // placement was measured, but not between two of its CPUs.
        return Ok(format!(
            "model line latency: the sysfs import's guess (the recording's c2c.json measured CPUs {}-{}, not both on the recorded machine of {n} CPU(s))",
            c.cpus[0], c.cpus[1]
        ));
    }
    let d = machine.distance(
        schedlab_core::ids::CpuId(c.cpus[0] as u32),
        schedlab_core::ids::CpuId(c.cpus[1] as u32),
    );
    let was = machine.costs.line_transfer_ns[d as usize];
    machine.costs.line_transfer_ns[d as usize] = c.line_ns();
    // The channel calls' cross-CPU extras then come from the lines the
    // lockstep measurement isolates, at this latency: costs.json's come
    // from wakecost's stream cases, which do not isolate the transfer
    // (docs/syscall-costs.md, "Lines per call": 0 to +425 ns for the same
    // call an hour apart) and cannot split a read's message from the
    // channel's state.
    let stream = machine.costs.channel_xcpu_ns.take();
    let dropped = match stream {
        Some(x) => format!(
            "; channel cross-CPU extras: the host lines at it, not costs.json's stream figures {x:?}"
        ),
        None => String::new(),
    };
    Ok(format!(
        "model line latency: measured (the recording's c2c.json: CPUs {}-{} {:.1} ns before, {:.1} ns after; {} ns at distance {:?}, the import's guess {} ns){dropped}",
        c.cpus[0], c.cpus[1], c.before_ns, c.after_ns, c.line_ns(), d, was
    ))
}

/// The release `validate` simulates, and where it came from: `--kernel`
/// when given, else the recorded host's `uname -r` (host.json
/// `host.kernel.release`) mapped by `kernels::for_host_release` (a release
/// between two listed ones takes the older, one newer than the newest
/// numbered takes `tip`, one older than the oldest is an error). A
/// recording without a release (none made by `schedlab record`) runs the
/// default release, and says so.
pub fn validate_kernel<'a>(
    flag: Option<&'a str>,
    host: &Value,
    hp: &Path,
) -> Result<(&'a str, String), HostError> {
    use schedlab_core::kernels;
    if let Some(k) = flag {
        let name = kernels::canonical(k).ok_or_else(|| {
            recording_err(format!(
                "--kernel: unknown release '{k}' (one of {})",
                kernels::KERNELS.join(", ")
            ))
        })?;
        return Ok((name, "--kernel".into()));
    }
    let Some(release) = host["host"]["kernel"]["release"].as_str() else {
        return Ok((
            kernels::DEFAULT_KERNEL,
            format!(
                "{}: no host.kernel.release; the default release",
                hp.display()
            ),
        ));
    };
    match kernels::for_host_release(release) {
        Ok((name, None)) => Ok((name, format!("the recorded host's release {release}"))),
        Ok((name, Some(note))) => Ok((name, format!("the recorded host's release: {note}"))),
        Err(e) => Err(recording_err(format!(
            "{}: host.kernel.release: {e}; pass --kernel VERSION to validate against one of {}",
            hp.display(),
            kernels::KERNELS.join(", ")
        ))),
    }
}

/// A recording's record.json, when there is one, must be what `schedlab
/// record` writes: `workload` a string, `duration_ns` null or a count of
/// ns, `cpus` null or a count.
pub fn check_record_json(path: &Path) -> Result<(), HostError> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| recording_err(format!("{}:{}: {e}", path.display(), e.line())))?;
    let bad = |key: &str, want: &str| {
        recording_err(format!(
            "{}: key '{key}' must be {want} (not the record.json `schedlab record` writes)",
            path.display()
        ))
    };
    if !v.is_object() {
        return Err(recording_err(format!(
            "{}: not a JSON object (not the record.json `schedlab record` writes)",
            path.display()
        )));
    }
    if !v["workload"].is_string() {
        return Err(bad("workload", "a string"));
    }
    if !(v["duration_ns"].is_null() || v["duration_ns"].is_u64()) {
        return Err(bad("duration_ns", "null or a non-negative integer"));
    }
    if !(v["cpus"].is_null() || v["cpus"].is_u64()) {
        return Err(bad("cpus", "null or a count of CPUs"));
    }
    Ok(())
}

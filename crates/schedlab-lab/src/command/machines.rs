//! `schedlab machines NAME --domains [--cpu N]... [--kernel VERSION]`.

use crate::user_error::user;
use anyhow::Result;

/// `schedlab machines NAME --domains [--cpu N]...`: the domains of the
/// chosen CPUs (default: all up to 16 CPUs, else the first and the last),
/// and a closing line naming the CPUs left out; `kernel` applies that
/// release's `sd_init` (default tip).
pub fn domains_text(
    m: &schedlab_core::machine::Machine,
    cpus: &[u32],
    kernel: Option<&str>,
) -> Result<String> {
    use schedlab_core::ids::CpuId;
    use schedlab_core::machine::domains::{describe_domains, SchedDomains};
    let n = m.nr_cpus() as u32;
    if let Some(bad) = cpus.iter().find(|&&c| c >= n) {
        return Err(user(format!(
            "--cpu {bad}: {} has CPUs 0-{}",
            m.name,
            n - 1
        )));
    }
    let release = match kernel {
        None => schedlab_core::kernels::DEFAULT_KERNEL,
        Some(k) => schedlab_core::kernels::canonical(k).ok_or_else(|| {
            user(format!(
                "--kernel: unknown release '{k}' (one of {})",
                schedlab_core::kernels::KERNELS.join(", ")
            ))
        })?,
    };
    let d = SchedDomains::for_release(m, 250, release);
    let list: Vec<CpuId> = cpus.iter().map(|&c| CpuId(c)).collect();
    let shown = if list.is_empty() {
        None
    } else {
        Some(list.as_slice())
    };
    let mut text = describe_domains(m, &d, shown);
    let printed = match shown {
        Some(_) => cpus.len() as u32,
        None if n <= 16 => n,
        None => 2,
    };
    if printed < n {
        let what = if shown.is_none() {
            format!("CPUs 1-{} are left out", n - 2)
        } else {
            format!("{} of {n} CPUs are left out", n - printed)
        };
        text.push_str(&format!(
            "({what}; the summary above covers every CPU; --cpu N prints CPU N's domains)\n"
        ));
    }
    Ok(text)
}

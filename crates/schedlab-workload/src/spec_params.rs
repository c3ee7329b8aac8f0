//! The parameters of a generator spec (`NAME:key=value,...`): walking
//! them, reading numbers and cgroup templates, one-line errors naming the
//! spec, and the task groups a generated workload names.

use crate::{ErrorKind, WorkloadError};
use schedlab_core::program::Workload;

pub(crate) fn err(spec: &str, msg: String) -> WorkloadError {
    WorkloadError::new(
        spec,
        crate::json::Pos { line: 0, col: 0 },
        ErrorKind::Invalid,
        msg,
    )
}

/// Walks the `key=value` pairs after `NAME:` in order, checking that each
/// is `key=value`, that the key is in `known` and not given twice, and
/// hands each pair to `f`.
pub(crate) fn each_param<'a>(
    spec: &str,
    rest: &'a str,
    known: &[&str],
    mut f: impl FnMut(&'a str, &'a str) -> Result<(), WorkloadError>,
) -> Result<(), WorkloadError> {
    let mut seen: Vec<&str> = Vec::new();
    for item in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| err(spec, format!("'{item}' is not key=value")))?;
        if !known.contains(&k) {
            let hint = schedlab_core::suggest::closest(k, known.iter().copied())
                .map(|c| format!(" (did you mean '{c}'?)"))
                .unwrap_or_default();
            return Err(err(
                spec,
                format!("unknown key '{k}'{hint} (valid: {})", known.join(", ")),
            ));
        }
        if seen.contains(&k) {
            return Err(err(spec, format!("key '{k}' is given twice")));
        }
        seen.push(k);
        f(k, v)?;
    }
    Ok(())
}

/// The value of key `k` as a non-negative integer.
pub(crate) fn number(spec: &str, k: &str, v: &str) -> Result<u64, WorkloadError> {
    v.parse().map_err(|_| {
        err(
            spec,
            format!("key '{k}': '{v}' is not a non-negative integer"),
        )
    })
}

/// The `cgroup=` template of a generator checked: `%g`, if `groups`, is
/// replaced by a number, the rest must be a valid path.
pub(crate) fn cgroup_template(spec: &str, v: &str, groups: bool) -> Result<String, WorkloadError> {
    let probe = if groups {
        v.replace("%g", "0")
    } else {
        v.to_string()
    };
    crate::cgroup::validate_path(&probe).map_err(|e| {
        let hint = if groups && probe.contains('%') {
            " (only %g, the hackbench group number, is replaced)"
        } else {
            ""
        };
        err(spec, format!("key 'cgroup': {e}{hint}"))
    })?;
    Ok(v.to_string())
}

/// Fills `w.groups` from the groups its tasks name.
pub(crate) fn list_groups(spec: &str, w: &mut Workload) -> Result<(), WorkloadError> {
    w.groups = crate::cgroup::build_groups(crate::cgroup::used_paths(w).collect::<Vec<_>>(), &[])
        .map_err(|e| err(spec, format!("key 'cgroup': {e}")))?;
    Ok(())
}

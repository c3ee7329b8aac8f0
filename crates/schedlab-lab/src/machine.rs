//! A machine named the way `--machine` names it: a preset, `sysfs:DIR`,
//! `layout:KEY=VALUE,...`, or a machine file (`FILE.toml`).

use schedlab_core::machine::layout_file::{from_layout_spec, from_toml, LAYOUT_PREFIX};
use schedlab_core::machine::sysfs::{from_sysfs, DirReader};
use schedlab_core::machine::{preset, Machine, PRESET_NAMES};
use std::path::{Path, PathBuf};

/// A machine that cannot be resolved: one line naming the preset, the
/// directory or the file and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MachineError(pub String);

/// Largest machine file read (a machine file is a few dozen lines).
const MAX_MACHINE_FILE_BYTES: u64 = 1 << 20;

/// Resolves a machine spec: a preset, `sysfs:DIR`, `layout:KEY=VALUE,...`,
/// or a machine file (a value ending in `.toml` or containing a `/`).
pub fn resolve(spec: &str) -> Result<Machine, MachineError> {
    let err = |m: String| MachineError(m);
    if let Some(dir) = spec.strip_prefix("sysfs:") {
        if !Path::new(dir).is_dir() {
            return Err(err(format!(
                "{dir}: no such directory (for --machine sysfs:DIR)"
            )));
        }
        return from_sysfs(dir, &DirReader(PathBuf::from(dir))).map_err(|e| err(e.to_string()));
    }
    if spec.starts_with(LAYOUT_PREFIX) {
        return from_layout_spec(spec).map_err(|e| err(e.to_string()));
    }
    if is_machine_file(spec) {
        return machine_file(spec);
    }
    preset(spec).ok_or_else(|| {
        err(format!(
            "unknown machine '{spec}'{} (presets: {}; or sysfs:DIR, FILE.toml, layout:KEY=VALUE,...)",
            schedlab_core::suggest::hint(spec, PRESET_NAMES.iter().copied()),
            PRESET_NAMES.join(", ")
        ))
    })
}

/// True when a machine spec names a machine file rather than a preset.
pub fn is_machine_file(spec: &str) -> bool {
    !spec.starts_with("sysfs:")
        && !spec.starts_with(LAYOUT_PREFIX)
        && (spec.ends_with(".toml") || spec.contains('/'))
}

fn machine_file(path: &str) -> Result<Machine, MachineError> {
    let err = |m: String| MachineError(m);
    let meta = std::fs::metadata(path).map_err(|e| err(format!("{path}: cannot read: {e}")))?;
    if meta.is_dir() {
        return Err(err(format!("{path}: is a directory, not a machine file")));
    }
    if meta.len() > MAX_MACHINE_FILE_BYTES {
        return Err(err(format!(
            "{path}: {} bytes, more than the 1 MiB a machine file may have",
            meta.len()
        )));
    }
    let text = std::fs::read(path).map_err(|e| err(format!("{path}: cannot read: {e}")))?;
    let text = String::from_utf8(text).map_err(|_| err(format!("{path}: not UTF-8 text")))?;
    from_toml(path, &text).map_err(|e| err(e.to_string()))
}

//! Built-in machine presets. (Filled in by the machines work item.)

use super::Machine;

/// Names of every preset, in listing order.
pub const PRESET_NAMES: &[&str] = &[];

/// Looks up a preset by name.
pub fn preset(_name: &str) -> Option<Machine> {
    None
}

//! Limits on what a workload may name and how big it may be, checked by
//! the readers before anything is simulated (issue 18: "everything that
//! can fail is checked before simulating").
//!
//! Names that become file names: a task name `T` becomes the rt-app log
//! `<log_basename>-T-<index>.log` (and `-<index>-<nnnn>` for forked
//! threads) in the output directory, so `T` and `log_basename` must be
//! usable as one path component: no NUL, no `/`, not `.` or `..`, and
//! short enough that the longest log file name stays within the 255-byte
//! `NAME_MAX` of Linux file systems. [`MAX_NAME_BYTES`] is what the two
//! may take together; the rest (55 bytes) is room for the `-`, the thread
//! index (at most 6 digits), a fork number and `.log`.

/// Bytes a task name and `log_basename` may take together (each alone
/// too): 255 (`NAME_MAX`) less room for `-<index>-<fork>.log`.
pub const MAX_NAME_BYTES: usize = 200;

/// Checks that `name` (what: `task name`, `log_basename`) can be one path
/// component of an output file name. The message names the problem, not
/// the place; the caller adds FILE:LINE:COL.
pub fn check_file_name_part(what: &str, name: &str) -> Result<(), String> {
    let shown = || {
        let s: String = name.chars().take(40).collect();
        let more = if name.chars().count() > 40 { "..." } else { "" };
        format!("\"{}{more}\"", s.escape_debug())
    };
    if name.contains('\0') {
        return Err(format!("{what} {} contains a NUL byte", shown()));
    }
    if name.contains('/') {
        return Err(format!(
            "{what} {} contains '/' (it becomes part of a file name)",
            shown()
        ));
    }
    if name == "." || name == ".." {
        return Err(format!("{what} must not be \"{name}\""));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "{what} {} is {} bytes, more than the {MAX_NAME_BYTES} a log file name allows",
            shown(),
            name.len()
        ));
    }
    Ok(())
}

/// Checks that `log_basename` and `task` together leave the longest log
/// file name within `NAME_MAX`.
pub fn check_log_name(log_basename: &str, task: &str) -> Result<(), String> {
    if log_basename.len() + task.len() > MAX_NAME_BYTES {
        return Err(format!(
            "task name ({} bytes) and log_basename ({} bytes) together are more than the {MAX_NAME_BYTES} bytes a log file name allows",
            task.len(),
            log_basename.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_cannot_be_file_names_are_refused() {
        for bad in ["a/b", "..", ".", "a\0b"] {
            assert!(check_file_name_part("task name", bad).is_err(), "{bad:?}");
        }
        let long = "x".repeat(250);
        let e = check_file_name_part("task name", &long).unwrap_err();
        assert!(e.contains("250 bytes"), "{e}");
        assert!(check_file_name_part("task name", "cfs_thread").is_ok());
        assert!(check_file_name_part("task name", "a..b").is_ok());
        assert!(check_log_name(&"b".repeat(100), &"t".repeat(101)).is_err());
        assert!(check_log_name("rt-app", &"t".repeat(194)).is_ok());
    }
}

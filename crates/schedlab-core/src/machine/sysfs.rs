//! Import of a sysfs-style topology tree. (Filled in by the machines work item.)

//! Integration tests of the `schedlab` binary and of the model properties
//! it relies on. One test binary (`autotests = false`), one module per area:
//!
//! | module | what |
//! |---|---|
//! | `cli_run` | `schedlab run` on the SCHED_IDLE example: files, stdout, summary contract, logs |
//! | `determinism` | same seed → byte-identical outputs; other seed → other numbers |
//! | `trace` | trace.txt parses, round-trips, and is a consistent CPU timeline |
//! | `shares` | CPU shares follow the nice/SCHED_IDLE weights (library level) |
//! | `bad_input` | every user error: exit 2, one line, nothing written |
//! | `bad_input_table` | bad inputs across every reader (rt-app names, generators, flags, sysfs, report, --out) |
//! | `kill_out` | `run --out D --force` killed at any point leaves D old or new, whole; stages cleaned; SIGINT/SIGTERM/SIGHUP remove the stage at once (run and sweep) |
//! | `output_limit` | `--max-output` counts the bytes really written (logs, traces): zero-time loops and traces stop at it, nothing written |
//! | `run_length` | runs without a duration are held to `--max-duration`: refused before they start when their loops need longer, stopped when they go past it |
//! | `cgroup_input` | task groups: `taskgroup(s)`, hackbench `cgroup=`, `--cgroup`; bad values refused |
//! | `corpus` | the project's own rt-app corpus (`examples/rt-app/`) runs under `--check` |
//! | `fixtures` | rt-app's own examples (`../shared`; ignored where absent) run or are refused cleanly |
//! | `proptest_check` | random workloads never break an invariant under `--check` |
//! | `sweep_cli` | `schedlab sweep` / `montecarlo`: dataset layout, resume, failed points, bad specs |
//! | `oltp_memory` | an `oltp:` workload the memory cannot hold is refused before it is built |
//! | `time_free` | loops of rt-app events alone advance time and end, rows bounded |
//! | `golden` | a tiny run's trace, summary and logs byte for byte |
//! | `identical` | the performance cases' shapes at small scale, every output file (traces too) hashed against committed hashes |
//! | `schbench` | the schbench generator: hand-checked latencies, rate mode, its tables under --check on icx and a7, determinism, bad specs |
//! | `specjbb` | the specjbb generator: hand-counted hand-offs and GC pauses on vm-2cpu, polls bound time to safepoint, nested hand-off, its table under --check, determinism, bad specs |
//! | `machine_file` | machine files and `layout:...`: `machines` on each preset's file prints the preset, runs on them, a user's file |
//! | `compare` | `schedlab compare`: schbench's percentiles and RPS and rt-app's wakeup-latency percentiles and missed periods, with their directions and the run's own values; per-group rows only with `--per-task` |
//! | `counters` | `--counters-every`: counters.csv leaves the run byte-identical, adds up at every row, agrees with summary.json; bad periods refused |
//! | `kernels` | every `--kernel` runs the corpus under `--check`; `--sysctl`, `global.sysctl`, `schedlab kernels`, kernel compare; bad values |

mod common;

mod all_pinned;
mod bad_input;
mod bad_input_table;
mod balance_release;
mod cgroup_input;
mod cli_run;
mod compare;
mod corpus;
mod counters;
mod determinism;
mod first_hour;
mod fixtures;
mod fork;
mod golden;
mod groups;
mod hackbench;
mod identical;
mod kernels;
mod kill_out;
mod lisa_events;
mod machine_file;
mod markers;
mod memrun;
mod oltp_memory;
mod output_limit;
mod phase_slice;
mod proptest_check;
mod replay_cli;
mod rt;
mod run_length;
mod schbench;
mod sched_work;
mod shares;
mod specjbb;
mod sweep_cli;
mod sync;
mod time_free;
mod trace;
mod ttwu_xcpu;
mod update_curr_points;
mod wakelist;

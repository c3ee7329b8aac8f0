//! Figures out of an ftrace text trace (a recording's `trace.txt`, or a
//! simulated run's): per CPU the time a set of pids ran, other tasks ran
//! and idle; per pid its switch-ins, migrations and wake-ups.
//!
//! One streaming pass, per CPU in line order, with the evidence rules of
//! [`schedlab_output::ftrace_text::RunningTimeline`]: a `sched_switch`
//! line ends `prev_pid`'s span and starts `next_pid`'s; any line whose
//! context pid is not the task the CPU is known to run starts that pid's
//! span at the line's time (an untraced switch: real kernels drop about
//! half of the idle → task `sched_switch` lines). Such inferred switch-ins
//! count as switch-ins. Time before a CPU's first line is not counted.
//!
//! Only what falls inside the window counts: spans are clipped to it,
//! events outside it are ignored. Errors name the file and the line.

use schedlab_output::ftrace_text::{parse_ftrace_line, OwnedEvent};
use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// A bad input file: `FILE:LINE: problem` (`FILE: problem` when no line
/// applies). The validation's and the run directory reader's one error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, if the problem is on one.
    pub line: Option<usize>,
    /// What is wrong.
    pub problem: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file.display(), self.problem),
            None => write!(f, "{}: {}", self.file.display(), self.problem),
        }
    }
}

impl std::error::Error for InputError {}

impl InputError {
    /// An error on a line of `file`.
    pub fn at(file: impl Into<PathBuf>, line: usize, problem: impl Into<String>) -> Self {
        InputError {
            file: file.into(),
            line: Some(line),
            problem: problem.into(),
        }
    }
    /// An error about the whole of `file`.
    pub fn file(file: impl Into<PathBuf>, problem: impl Into<String>) -> Self {
        InputError {
            file: file.into(),
            line: None,
            problem: problem.into(),
        }
    }
}

/// One CPU's time in the window.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuTime {
    /// CPU.
    pub cpu: u32,
    /// Time the watched pids ran (ns).
    pub watched_ns: u64,
    /// Time other tasks ran (ns).
    pub other_ns: u64,
    /// Time idle (pid 0) (ns).
    pub idle_ns: u64,
    /// Length of the window this CPU's lines cover (ns).
    pub covered_ns: u64,
}

/// Per pid counts in the window.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PidCounts {
    /// Switch-ins (traced and inferred).
    pub switch_ins: u64,
    /// Of which inferred from the context column.
    pub inferred: u64,
    /// `sched_migrate_task` lines.
    pub migrations: u64,
    /// `sched_wakeup` lines.
    pub wakeups: u64,
    /// Time on CPU (ns).
    pub run_ns: u64,
}

/// What [`trace_stats`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceStats {
    /// The window used (ns): `[start, end)`.
    pub window: (u64, u64),
    /// Per CPU seen in the trace, in CPU order.
    pub cpus: Vec<CpuTime>,
    /// Per watched pid.
    pub pids: BTreeMap<u32, PidCounts>,
    /// Event lines read (all, in and out of the window).
    pub lines: u64,
    /// Time of the first and last event line (ns).
    pub extent: (u64, u64),
}

#[derive(Default)]
struct CpuState {
    cur: Option<u32>,
    last: u64,
    t: CpuTime,
    /// Tasks woken onto this CPU while it was idle: (pid, when, idle time
    /// counted since). The kernel can lose the idle -> task sched_switch
    /// line; when one of them then shows up in the context column, it has
    /// been running since about its wake-up, not since that line, and the
    /// idle time counted in between is its run time. (A timer interrupt can
    /// wake several; the one that shows up ran first.)
    woken: Vec<(u32, u64, u64)>,
}

impl CpuState {
    fn account(
        &mut self,
        to: u64,
        win: (u64, u64),
        watched: &BTreeSet<u32>,
        pids: &mut BTreeMap<u32, PidCounts>,
    ) {
        if let Some(p) = self.cur {
            let a = self.last.max(win.0);
            let b = to.min(win.1);
            if b > a {
                let d = b - a;
                self.t.covered_ns += d;
                if p == 0 {
                    self.t.idle_ns += d;
                    for (_, since, acc) in &mut self.woken {
                        *acc += b.saturating_sub(a.max(*since));
                    }
                } else if watched.contains(&p) {
                    self.t.watched_ns += d;
                    pids.entry(p).or_default().run_ns += d;
                } else {
                    self.t.other_ns += d;
                }
            }
        }
        self.last = to;
    }
}

/// Reads `path` (ftrace text) and counts for the pids in `watched`, inside
/// `window` (ns, `[start, end)`; None: the whole trace).
pub fn trace_stats(
    path: &Path,
    watched: &BTreeSet<u32>,
    window: Option<(u64, u64)>,
) -> Result<TraceStats, InputError> {
    let f = std::fs::File::open(path)
        .map_err(|e| InputError::file(path, format!("cannot open: {e}")))?;
    let mut rd = std::io::BufReader::new(f);
    let win = window.unwrap_or((0, u64::MAX));
    let mut cpus: BTreeMap<u32, CpuState> = BTreeMap::new();
    let mut pids: BTreeMap<u32, PidCounts> =
        watched.iter().map(|&p| (p, PidCounts::default())).collect();
    let mut buf = String::new();
    let mut lineno = 0usize;
    let mut lines = 0u64;
    let mut extent = (u64::MAX, 0u64);
    loop {
        buf.clear();
        lineno += 1;
        let n = rd
            .read_line(&mut buf)
            .map_err(|e| InputError::at(path, lineno, format!("read error: {e}")))?;
        if n == 0 {
            break;
        }
        let l = buf.trim_end_matches(['\n', '\r']);
        let rec = match parse_ftrace_line(l) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(m) => return Err(InputError::at(path, lineno, m)),
        };
        lines += 1;
        let t = rec.time_ns;
        extent = (extent.0.min(t), extent.1.max(t));
        let st = cpus.entry(rec.cpu).or_insert_with(|| CpuState {
            t: CpuTime {
                cpu: rec.cpu,
                ..Default::default()
            },
            ..Default::default()
        });
        if st.cur.is_some() && t < st.last {
            return Err(InputError::at(
                path,
                lineno,
                format!(
                    "time goes backwards on CPU {} ({} ns after {} ns)",
                    rec.cpu, t, st.last
                ),
            ));
        }
        let inside = t >= win.0 && t < win.1;
        st.account(t, win, watched, &mut pids);
        // The context column names the current task.
        if st.cur != Some(rec.ctx_pid) {
            let was_known = st.cur.is_some();
            // Its switch-in line was lost: if it was woken onto this idle
            // CPU, it has run since then (see `CpuState::woken`).
            if st.cur == Some(0) {
                let woken = std::mem::take(&mut st.woken);
                if let Some(&(pid, _, acc)) = woken.iter().find(|w| w.0 == rec.ctx_pid) {
                    if acc > 0 {
                        st.t.idle_ns -= acc;
                        if watched.contains(&pid) {
                            st.t.watched_ns += acc;
                            pids.entry(pid).or_default().run_ns += acc;
                        } else {
                            st.t.other_ns += acc;
                        }
                    }
                }
            }
            st.cur = Some(rec.ctx_pid);
            if was_known && inside && watched.contains(&rec.ctx_pid) {
                let c = pids.entry(rec.ctx_pid).or_default();
                c.switch_ins += 1;
                c.inferred += 1;
            }
        }
        let mut woken_onto = None;
        match &rec.event {
            OwnedEvent::SchedSwitch { next, .. } => {
                st.woken.clear();
                st.cur = Some(next.pid);
                if inside && watched.contains(&next.pid) {
                    pids.entry(next.pid).or_default().switch_ins += 1;
                }
            }
            OwnedEvent::SchedMigrateTask { task, .. } if inside && watched.contains(&task.pid) => {
                pids.entry(task.pid).or_default().migrations += 1;
            }
            OwnedEvent::SchedWakeup { task, target_cpu } => {
                if inside && watched.contains(&task.pid) {
                    pids.entry(task.pid).or_default().wakeups += 1;
                }
                woken_onto = Some((*target_cpu, task.pid));
            }
            OwnedEvent::SchedWakeupNew { task, target_cpu } => {
                woken_onto = Some((*target_cpu, task.pid));
            }
            _ => {}
        }
        if let Some((cpu, pid)) = woken_onto {
            if let Some(dst) = cpus.get_mut(&cpu) {
                if dst.cur == Some(0) && !dst.woken.iter().any(|w| w.0 == pid) {
                    dst.woken.push((pid, t, 0));
                }
            }
        }
    }
    if lines == 0 {
        return Err(InputError::file(path, "no trace event lines"));
    }
    // Close every CPU at the window's end, or at the trace's last line.
    let close = if win.1 == u64::MAX {
        extent.1
    } else {
        win.1.max(extent.1)
    };
    let mut out = Vec::new();
    for (_, mut st) in cpus {
        let to = close.min(win.1);
        if to > st.last {
            st.account(to, win, watched, &mut pids);
        }
        out.push(st.t);
    }
    Ok(TraceStats {
        window: (win.0, if win.1 == u64::MAX { extent.1 } else { win.1 }),
        cpus: out,
        pids,
        lines,
        extent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "\
# tracer: nop
#
            a-101     [000] d..2.   10.000000: sched_switch: prev_comm=a prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [000] d.h2.   10.001000: sched_waking: comm=a pid=101 prio=120 target_cpu=000
          <idle>-0       [000] dNh3.   10.001000: sched_wakeup: comm=a pid=101 prio=120 target_cpu=000
               a-101     [000] d..2.   10.003000: sched_switch: prev_comm=a prev_pid=101 prev_prio=120 prev_state=R ==> next_comm=b next_pid=102 next_prio=120
               b-102     [000] d..2.   10.004000: sched_migrate_task: comm=a pid=101 prio=120 orig_cpu=0 dest_cpu=1
            x-55       [001] d..2.   10.000000: sched_switch: prev_comm=x prev_pid=55 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
               a-101     [001] d..2.   10.005000: sched_switch: prev_comm=a prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
               b-102     [000] d..2.   10.006000: sched_switch: prev_comm=b prev_pid=102 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
";

    fn file(text: &str) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), text).unwrap();
        f
    }

    #[test]
    fn counts_spans_switches_and_inferred_switch_ins() {
        let f = file(T);
        let w: BTreeSet<u32> = [101, 102].into();
        let s = trace_stats(f.path(), &w, None).unwrap();
        assert_eq!(s.lines, 8);
        // CPU 0: idle 10.000-10.001, then the idle->a switch line is
        // missing: the line at 10.003 has context a, so a was switched in
        // (inferred), and it has run since its wake-up onto the idle CPU at
        // 10.001, not since 10.003.
        let a = &s.pids[&101];
        assert_eq!(
            (a.switch_ins, a.inferred, a.migrations, a.wakeups),
            (2, 2, 1, 1)
        );
        let b = &s.pids[&102];
        assert_eq!((b.switch_ins, b.inferred), (1, 0));
        assert_eq!(b.run_ns, 3_000_000);
        assert_eq!(a.run_ns, 2_000_000);
        let c0 = &s.cpus[0];
        assert_eq!(c0.idle_ns, 1_000_000);
        assert_eq!(c0.watched_ns, 5_000_000);
        // CPU 1: idle from 10.000 to 10.005 (a's inferred span is 0 long),
        // then idle to the trace's end (10.006).
        let c1 = &s.cpus[1];
        assert_eq!((c1.idle_ns, c1.watched_ns, c1.other_ns), (6_000_000, 0, 0));
    }

    #[test]
    fn a_traced_switch_in_keeps_the_idle_time_before_it() {
        // The same wake-up, but the idle->a switch is traced at 10.0015:
        // CPU 0 was idle until then.
        let t = T.replace(
            "               a-101     [000] d..2.   10.003000: sched_switch",
            "          <idle>-0       [000] d..2.   10.001500: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=101 next_prio=120\n               a-101     [000] d..2.   10.003000: sched_switch",
        );
        let f = file(&t);
        let w: BTreeSet<u32> = [101, 102].into();
        let s = trace_stats(f.path(), &w, None).unwrap();
        assert_eq!(s.pids[&101].run_ns, 1_500_000);
        assert_eq!(s.cpus[0].idle_ns, 1_500_000);
        assert_eq!(s.pids[&101].inferred, 1);
    }

    #[test]
    fn two_woken_in_one_interrupt_the_one_that_shows_up_ran_first() {
        // b is woken onto idle CPU 0 in the same interrupt as a, after it;
        // the idle -> a switch is lost; a shows up at 10.003: a ran from
        // 10.001, b from its traced switch-in.
        let t = T.replace(
            "          <idle>-0       [000] dNh3.   10.001000: sched_wakeup: comm=a pid=101 prio=120 target_cpu=000\n",
            "          <idle>-0       [000] dNh3.   10.001000: sched_wakeup: comm=a pid=101 prio=120 target_cpu=000\n          <idle>-0       [000] dNh3.   10.001000: sched_wakeup: comm=b pid=102 prio=120 target_cpu=000\n",
        );
        let f = file(&t);
        let w: BTreeSet<u32> = [101, 102].into();
        let s = trace_stats(f.path(), &w, None).unwrap();
        assert_eq!(s.pids[&101].run_ns, 2_000_000);
        assert_eq!(s.pids[&102].run_ns, 3_000_000);
        assert_eq!(s.cpus[0].idle_ns, 1_000_000);
    }

    #[test]
    fn window_clips() {
        let f = file(T);
        let w: BTreeSet<u32> = [101, 102].into();
        let s = trace_stats(f.path(), &w, Some((10_002_000_000, 10_005_000_000))).unwrap();
        assert_eq!(s.pids[&102].run_ns, 2_000_000);
        assert_eq!(s.pids[&101].wakeups, 0);
        assert_eq!(s.cpus[0].covered_ns, 3_000_000);
    }

    #[test]
    fn broken_line_and_time_backwards_name_the_line() {
        let mut t = T.to_string();
        t.push_str("   b-102 [000] d..2. garbage\n");
        let f = file(&t);
        let e = trace_stats(f.path(), &BTreeSet::new(), None).unwrap_err();
        assert_eq!(e.line, Some(11));
        assert!(
            e.to_string()
                .starts_with(&format!("{}:11: ", f.path().display())),
            "{e}"
        );
        let t = T.replace("10.006000", "9.000000");
        let f = file(&t);
        let e = trace_stats(f.path(), &BTreeSet::new(), None).unwrap_err();
        assert!(e.problem.contains("backwards"), "{e}");
    }
}

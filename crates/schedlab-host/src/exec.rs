//! `exec`: a workload's behaviour programs as real threads on this kernel.

use crate::calib::{self, Calibration};
use crate::cgroup::{CgroupSet, CgroupVersion, GroupStat};
use crate::error::HostError;
use crate::sync::{
    install_interrupt_handler, Barrier, Blockers, Channel, ChannelKind, PCond, PMutex, Sem,
    StopClock, Stopped,
};
use crate::sys::{self, ProcTaskStats, SchedRequest};
use crate::timing::{self, Iteration, TimerState};
use schedlab_core::program::{
    Op, Policy, TaskSpec, Workload, FTRACE_EVENT, FTRACE_LOOP, FTRACE_MAIN, FTRACE_STATS,
    FTRACE_TASK,
};
use schedlab_core::stats::LogRow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;

/// How pLoad (ns per calibrated loop) is found.
#[derive(Clone, Debug, PartialEq)]
pub enum CalibrationMode {
    /// Measure on this CPU at start-up (rt-app's `"calibration": "CPU0"`).
    Measure {
        /// CPU to calibrate on.
        cpu: u32,
    },
    /// Use this pLoad (ns per loop) without measuring.
    Fixed(f64),
}

/// How `Op::Send` / `Op::Recv` channels are built on the host (the
/// workload records only their capacity).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ChannelConfig {
    /// Pipes or AF_UNIX stream sockets.
    pub kind: ChannelKind,
    /// Bytes per message (hackbench's `datasize`).
    pub msg_bytes: usize,
}

impl Default for ChannelConfig {
    fn default() -> Self {
        ChannelConfig {
            kind: ChannelKind::Socket,
            msg_bytes: 100,
        }
    }
}

impl ChannelConfig {
    /// Reads `ipc=` and `datasize=` out of a hackbench generator spec
    /// (`hackbench:groups=2,ipc=pipe,datasize=64`); defaults (socket, 100
    /// bytes, as hackbench's) for what it does not give.
    pub fn from_spec(spec: &str) -> ChannelConfig {
        let mut c = ChannelConfig::default();
        let rest = spec.split_once(':').map_or("", |x| x.1);
        for kv in rest.split(',') {
            match kv.split_once('=') {
                Some(("ipc", "pipe")) => c.kind = ChannelKind::Pipe,
                Some(("ipc", "socket")) => c.kind = ChannelKind::Socket,
                Some(("datasize", v)) => {
                    if let Ok(n) = v.parse::<usize>() {
                        c.msg_bytes = n.max(1);
                    }
                }
                _ => {}
            }
        }
        c
    }
}

/// Options of [`exec`].
#[derive(Clone, Debug, PartialEq)]
pub struct ExecOptions {
    /// Run length; overrides `Workload::duration_ns`. With neither, the
    /// run lasts until every thread has finished its loops.
    pub duration_ns: Option<u64>,
    /// pLoad.
    pub calibration: CalibrationMode,
    /// Channels.
    pub channels: ChannelConfig,
    /// Write rt-app's ftrace markers (the categories of
    /// `Workload::ftrace`, same text as the simulator's) to this
    /// `trace_marker` file; [`crate::record()`] sets its instance's.
    pub trace_marker: Option<std::path::PathBuf>,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            duration_ns: None,
            calibration: CalibrationMode::Measure { cpu: 0 },
            channels: ChannelConfig::default(),
            trace_marker: None,
        }
    }
}

/// One thread's outcome.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ThreadResult {
    /// Thread name (the kernel comm, truncated to 15 bytes there).
    pub name: String,
    /// rt-app's global index.
    pub index: u32,
    /// Kernel tid (0 if never started).
    pub tid: i32,
    /// Started by an `Op::Fork`.
    pub forked: bool,
    /// False for a fork-pool thread never forked.
    pub started: bool,
    /// True when its program ended before the run did.
    pub finished: bool,
    /// Iterations completed.
    pub loops: u64,
    /// One row per completed iteration (when the task keeps log rows).
    #[serde(skip)]
    pub log: Vec<LogRow>,
    /// /proc figures at the thread's end.
    pub stats: ProcTaskStats,
    /// CLOCK_MONOTONIC when the thread started its program and ended (ns).
    pub started_ns: u64,
    /// CLOCK_MONOTONIC at the thread's end (ns).
    pub ended_ns: u64,
}

/// What a run produced.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ExecResult {
    /// pLoad used.
    pub calibration: Calibration,
    /// CLOCK_MONOTONIC just before the threads were created (rt-app's t_start).
    pub t_start_ns: u64,
    /// The common start stamp T0 (first arrival at the start barrier).
    pub t0_ns: u64,
    /// When the last start-up thread arrived at the start barrier and
    /// released the others (hackbench's time runs from here to
    /// `last_exit_ns`).
    pub released_ns: u64,
    /// The run's end (0 when it ran until the threads finished).
    pub end_ns: u64,
    /// Last thread's end.
    pub last_exit_ns: u64,
    /// Channels used.
    pub channels: ChannelConfig,
    /// The cgroup interface, if groups were made.
    pub cgroup_version: Option<CgroupVersion>,
    /// `cpu.stat` of every group, before and after.
    pub groups: Vec<GroupStat>,
    /// Per thread, in workload order.
    pub threads: Vec<ThreadResult>,
    /// Things the run did not do that a real rt-app would (e.g. ftrace
    /// markers), one line each.
    pub warnings: Vec<String>,
}

struct StartBarrier {
    state: Mutex<(usize, bool)>,
    cv: Condvar,
    n: usize,
}

struct Shared {
    w: Workload,
    calib: Calibration,
    chan_cfg: ChannelConfig,
    marker: Option<std::fs::File>,
    t_start: u64,
    stop: StopClock,
    t0: OnceLock<u64>,
    released: OnceLock<u64>,
    start: StartBarrier,
    timers: Vec<Mutex<TimerState>>,
    mutexes: Vec<PMutex>,
    conds: Vec<PCond>,
    sems: Vec<Sem>,
    barriers: Vec<Barrier>,
    channels: Vec<Channel>,
    /// The threads, to interrupt at the run's end in a blocked channel
    /// call (`sync.rs`).
    blockers: Blockers,
    fork_next: Vec<AtomicUsize>,
    cgroups: Option<CgroupSet>,
    handles: Mutex<Vec<JoinHandle<()>>>,
    results: Mutex<Vec<Option<ThreadResult>>>,
    errors: Mutex<Vec<HostError>>,
    spawned: Vec<AtomicBool>,
}

impl Shared {
    /// Writes one rt-app ftrace marker line if its category is on.
    fn mark(&self, cat: u8, text: impl FnOnce() -> String) {
        if self.w.ftrace & cat == 0 {
            return;
        }
        if let Some(f) = &self.marker {
            use std::io::Write;
            let mut line = text();
            line.push('\n');
            let _ = (&*f).write(line.as_bytes());
        }
    }
}

/// Every group path the workload's threads use.
fn used_groups(w: &Workload) -> bool {
    !w.groups.is_empty()
        || w.tasks.iter().any(|t| {
            t.group != "/"
                || t.program
                    .phases
                    .iter()
                    .any(|p| p.group.as_deref().is_some_and(|g| g != "/"))
        })
}

/// Checks what can be checked before anything starts.
pub fn check(w: &Workload) -> Result<(), HostError> {
    let ncpu = sys::online_cpus();
    let bad = |what: String| Err(HostError::Workload(what));
    for (i, t) in w.tasks.iter().enumerate() {
        if w.tasks[..i].iter().any(|x| x.index == t.index) {
            return bad(format!("thread index {} is used twice", t.index));
        }
        let mut cpu_lists: Vec<&Vec<u32>> = t.cpus.iter().collect();
        cpu_lists.extend(t.program.phases.iter().filter_map(|p| p.cpus.as_ref()));
        for l in cpu_lists {
            if let Some(c) = l.iter().find(|c| !ncpu.contains(c)) {
                return bad(format!(
                    "{}: CPU {c} is not available on this host (online: {ncpu:?})",
                    t.name
                ));
            }
        }
        if t.program.phases.is_empty() {
            return bad(format!("{}: no phases", t.name));
        }
        for p in &t.program.phases {
            for op in &p.ops {
                let ok = match *op {
                    Op::Timer { timer, .. } => (timer.0 as usize) < w.timers.len(),
                    Op::Spawn { task } => (task as usize) < w.tasks.len(),
                    Op::Fork { pool } => (pool as usize) < w.fork_pools.len(),
                    Op::Send { first, count } => (first + count) as usize <= w.channels.len(),
                    Op::Recv { chan, .. } => (chan as usize) < w.channels.len(),
                    Op::Lock { mutex } | Op::Unlock { mutex } => mutex < w.mutexes,
                    Op::Wait { cond, mutex }
                    | Op::Sync { cond, mutex }
                    | Op::Suspend { cond, mutex }
                    | Op::Resume { cond, mutex } => cond < w.conds && mutex < w.mutexes,
                    Op::Signal { cond, .. } => cond < w.conds,
                    Op::Barrier { barrier } => (barrier as usize) < w.barriers.len(),
                    Op::SemPost { sem } | Op::SemWait { sem } => sem < w.sems,
                    Op::FutexArm { .. }
                    | Op::FutexPost { .. }
                    | Op::FutexWait { .. }
                    | Op::Stamp { .. }
                    | Op::Record { .. }
                    | Op::ListAdd { .. }
                    | Op::ListWakeAll { .. }
                    | Op::RequestPost { .. }
                    | Op::RequestTake { .. }
                    | Op::SleepUntil { .. }
                    | Op::CpuLock { .. }
                    | Op::CpuUnlock => {
                        return bad(format!(
                            "{}: the host runner does not run futex-word ops ({op:?}; the schbench generator) yet: run the real schbench instead",
                            t.name
                        ));
                    }
                    Op::SemSend { .. } | Op::SemReply => {
                        return bad(format!(
                            "{}: the host runner does not run addressed semaphores ({op:?}; the specjbb generator)",
                            t.name
                        ));
                    }
                    _ => true,
                };
                if !ok {
                    return bad(format!(
                        "{}: {op:?} names an object the workload does not have",
                        t.name
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Runs the workload on this host and returns what each thread measured.
///
/// Errors: not Linux; a workload that names missing objects or CPUs;
/// groups without root or without a cpu controller; a thread whose
/// `sched_setattr`, affinity or cgroup move failed (the run stops, every
/// thread is joined and the groups are removed before returning).
pub fn exec(w: &Workload, opts: &ExecOptions) -> Result<ExecResult, HostError> {
    if !cfg!(target_os = "linux") {
        return Err(HostError::NotLinux(std::env::consts::OS));
    }
    check(w)?;
    let duration = opts.duration_ns.or(w.duration_ns);
    let calib = match opts.calibration {
        CalibrationMode::Measure { cpu } => calib::calibrate(cpu, 10, 1_000_000),
        CalibrationMode::Fixed(ns) => Calibration::fixed(ns),
    };
    let cgroups = if used_groups(w) {
        Some(CgroupSet::create(&w.groups)?)
    } else {
        None
    };
    let mut warnings = Vec::new();
    let marker = match (&opts.trace_marker, w.ftrace) {
        (_, 0) => None,
        (Some(p), _) => Some(
            std::fs::OpenOptions::new()
                .write(true)
                .open(p)
                .map_err(|e| HostError::io(p, e))?,
        ),
        (None, _) => {
            warnings.push(
                "rt-app ftrace markers (global.ftrace) were not written: no trace_marker given"
                    .into(),
            );
            None
        }
    };
    let groups_before = cgroups.as_ref().map(|c| c.stats()).unwrap_or_default();
    let channels = (0..w.channels.len())
        .map(|_| Channel::open(opts.channels.kind))
        .collect::<Result<Vec<_>, _>>()?;
    if !channels.is_empty() {
        install_interrupt_handler()?;
    }
    let startup = w.tasks.iter().filter(|t| !t.forked).count();
    let t_start = sys::now_ns();
    let sh = Arc::new(Shared {
        w: w.clone(),
        calib: calib.clone(),
        chan_cfg: opts.channels,
        marker,
        t_start,
        stop: StopClock {
            end: duration.map_or(u64::MAX, |d| t_start + d),
            flag: AtomicBool::new(false),
        },
        t0: OnceLock::new(),
        released: OnceLock::new(),
        start: StartBarrier {
            state: Mutex::new((0, false)),
            cv: Condvar::new(),
            n: startup,
        },
        timers: w
            .timers
            .iter()
            .map(|t| {
                Mutex::new(TimerState {
                    next: None,
                    absolute: t.absolute,
                })
            })
            .collect(),
        mutexes: (0..w.mutexes).map(|_| PMutex::new(w.pi_mutexes)).collect(),
        conds: (0..w.conds).map(|_| PCond::new()).collect(),
        sems: (0..w.sems).map(|_| Sem::default()).collect(),
        barriers: w.barriers.iter().map(|&n| Barrier::new(n)).collect(),
        channels,
        blockers: Blockers::default(),
        fork_next: w.fork_pools.iter().map(|_| AtomicUsize::new(0)).collect(),
        cgroups,
        handles: Mutex::new(Vec::new()),
        results: Mutex::new(vec![None; w.tasks.len()]),
        errors: Mutex::new(Vec::new()),
        spawned: w.tasks.iter().map(|_| AtomicBool::new(false)).collect(),
    });
    sh.mark(FTRACE_MAIN, || "rtapp_main: event=start".into());
    for (i, t) in w.tasks.iter().enumerate() {
        if !t.forked {
            spawn(&sh, i, None);
        }
    }
    // The kicker: once the run has ended, it interrupts the threads still
    // asleep in a blocking channel call, again every 2 ms (a signal that
    // comes just before a call is lost) until every thread has left.
    let all_joined = Arc::new(AtomicBool::new(false));
    let kicker = (!sh.channels.is_empty()).then(|| {
        let (sh, all_joined) = (sh.clone(), all_joined.clone());
        std::thread::spawn(move || {
            while !all_joined.load(Ordering::SeqCst) {
                let now = sys::now_ns();
                let pause_ns = if sh.stop.stopped() {
                    sh.blockers.kick_all();
                    2_000_000
                } else {
                    sh.stop
                        .slice_deadline()
                        .saturating_sub(now)
                        .clamp(1_000_000, 100_000_000)
                };
                std::thread::sleep(std::time::Duration::from_nanos(pause_ns));
            }
        })
    });
    loop {
        let h = sh.handles.lock().unwrap().pop();
        match h {
            Some(h) => {
                let _ = h.join();
            }
            None => break,
        }
    }
    all_joined.store(true, Ordering::SeqCst);
    if let Some(k) = kicker {
        let _ = k.join();
    }
    let groups_after = sh.cgroups.as_ref().map(|c| c.stats()).unwrap_or_default();
    let mut sh = Arc::try_unwrap(sh).unwrap_or_else(|_| panic!("every thread was joined"));
    let cgroup_version = sh.cgroups.as_ref().map(|c| c.version);
    // Remove the groups now (also done by Drop on the error path).
    drop(sh.cgroups.take());
    if let Some(e) = sh.errors.get_mut().unwrap().drain(..).next() {
        return Err(e);
    }
    let groups = groups_before
        .into_iter()
        .zip(groups_after)
        .map(|((path, dir, before), (_, _, after))| GroupStat {
            path,
            dir,
            before,
            after,
        })
        .collect();
    let results = std::mem::take(sh.results.get_mut().unwrap());
    let threads: Vec<ThreadResult> = results
        .into_iter()
        .zip(&w.tasks)
        .map(|(r, t)| {
            r.unwrap_or_else(|| ThreadResult {
                name: t.name.clone(),
                index: t.index,
                tid: 0,
                forked: t.forked,
                started: false,
                finished: false,
                loops: 0,
                log: Vec::new(),
                stats: ProcTaskStats::default(),
                started_ns: 0,
                ended_ns: 0,
            })
        })
        .collect();
    let last_exit_ns = threads.iter().map(|t| t.ended_ns).max().unwrap_or(t_start);
    Ok(ExecResult {
        calibration: calib,
        t_start_ns: t_start,
        t0_ns: sh.t0.get().copied().unwrap_or(t_start),
        released_ns: sh.released.get().copied().unwrap_or(t_start),
        end_ns: if sh.stop.end == u64::MAX {
            0
        } else {
            sh.stop.end
        },
        last_exit_ns,
        channels: opts.channels,
        cgroup_version,
        groups,
        threads,
        warnings,
    })
}

fn spawn(sh: &Arc<Shared>, ti: usize, fork_time: Option<u64>) {
    if sh.spawned[ti].swap(true, Ordering::SeqCst) {
        return;
    }
    let name: String = sh.w.tasks[ti].name.chars().take(15).collect();
    let sh2 = sh.clone();
    let h = std::thread::Builder::new()
        .name(name)
        .stack_size(256 * 1024)
        .spawn(move || thread_main(sh2, ti, fork_time));
    match h {
        Ok(h) => sh.handles.lock().unwrap().push(h),
        Err(e) => {
            sh.errors.lock().unwrap().push(HostError::Sys {
                call: format!("creating thread {}", sh.w.tasks[ti].name),
                err: e,
            });
            sh.stop.flag.store(true, Ordering::SeqCst);
            // Release the start barrier for the others.
            let mut g = sh.start.state.lock().unwrap();
            g.1 = true;
            sh.start.cv.notify_all();
        }
    }
}

/// The running thread's view of its scheduling attributes.
struct Attrs {
    req: SchedRequest,
    cpus: Option<Vec<u32>>,
    group: String,
}

fn thread_main(sh: Arc<Shared>, ti: usize, fork_time: Option<u64>) {
    let spec = &sh.w.tasks[ti];
    let tid = sys::gettid();
    let mut res = ThreadResult {
        name: spec.name.clone(),
        index: spec.index,
        tid,
        forked: spec.forked,
        started: true,
        finished: false,
        loops: 0,
        log: Vec::new(),
        stats: ProcTaskStats::default(),
        started_ns: sys::now_ns(),
        ended_ns: 0,
    };
    let blocker = sh.blockers.register();
    let out = run_thread(&sh, spec, tid, fork_time, &mut res);
    drop(blocker);
    sh.mark(FTRACE_TASK, || "rtapp_task: event=end".into());
    res.stats = sys::read_self_stats();
    res.ended_ns = sys::now_ns();
    if let Err(e) = out {
        sh.stop.flag.store(true, Ordering::SeqCst);
        let mut g = sh.start.state.lock().unwrap();
        g.1 = true;
        sh.start.cv.notify_all();
        drop(g);
        sh.errors.lock().unwrap().push(HostError::Thread {
            thread: spec.name.clone(),
            err: Box::new(e),
        });
    }
    sh.results.lock().unwrap()[ti] = Some(res);
}

/// Control flow of one op.
enum Flow {
    Next,
    Stop,
}

impl From<Stopped> for Flow {
    fn from(_: Stopped) -> Flow {
        Flow::Stop
    }
}

fn flow<T>(r: Result<T, Stopped>) -> Flow {
    match r {
        Ok(_) => Flow::Next,
        Err(_) => Flow::Stop,
    }
}

/// The mutexes a thread holds (rt-app `lock` without its `unlock` yet),
/// unlocked when it leaves [`run_thread`] by any path.
struct HeldMutexes<'a> {
    sh: &'a Shared,
    held: Vec<u32>,
}

impl HeldMutexes<'_> {
    /// After `op` completed.
    fn note(&mut self, op: &Op) {
        match *op {
            Op::Lock { mutex } => self.held.push(mutex),
            Op::Unlock { mutex } => {
                if let Some(i) = self.held.iter().rposition(|&m| m == mutex) {
                    self.held.remove(i);
                }
            }
            _ => {}
        }
    }
}

impl Drop for HeldMutexes<'_> {
    fn drop(&mut self) {
        for &m in self.held.iter().rev() {
            let _ = self.sh.mutexes[m as usize].unlock();
        }
    }
}

fn run_thread(
    sh: &Arc<Shared>,
    spec: &TaskSpec,
    tid: i32,
    fork_time: Option<u64>,
    res: &mut ThreadResult,
) -> Result<(), HostError> {
    // Attributes first, as rt-app sets them before the start barrier.
    let mut attrs = Attrs {
        req: SchedRequest {
            policy: spec.policy,
            nice: spec.nice,
            slice_ns: spec.custom_slice_ns,
            dl: spec.dl,
            uclamp: spec.uclamp,
        },
        cpus: spec.cpus.clone(),
        group: spec.group.clone(),
    };
    if spec.group != "/" {
        cg(sh)?.move_thread(&spec.group, tid)?;
    }
    if let Some(c) = &spec.cpus {
        sys::set_affinity(0, c)?;
    }
    if !(spec.policy == Policy::Normal
        && spec.nice == 0
        && spec.custom_slice_ns.is_none()
        && spec.uclamp.is_empty())
    {
        sys::sched_setattr(0, &attrs.req)?;
    }
    // The start barrier: the first arrival reads T0; the last releases all.
    if !spec.forked {
        let mut first = false;
        let t0 = *sh.t0.get_or_init(|| {
            first = true;
            sys::now_ns()
        });
        if first {
            sh.mark(FTRACE_MAIN, || {
                format!("rtapp_main: event=clock_ref data={}", t0 / 1000)
            });
        }
        let mut g = sh.start.state.lock().unwrap();
        g.0 += 1;
        if g.0 >= sh.start.n {
            sh.released.get_or_init(sys::now_ns);
            g.1 = true;
            sh.start.cv.notify_all();
        }
        while !g.1 {
            if sh.stop.stopped() {
                return Ok(());
            }
            let left = sh.stop.slice_deadline().saturating_sub(sys::now_ns());
            g = sh
                .start
                .cv
                .wait_timeout(g, std::time::Duration::from_nanos(left.max(1)))
                .unwrap()
                .0;
        }
    }
    let base = fork_time.unwrap_or_else(|| *sh.t0.get_or_init(sys::now_ns));
    let t_first = base + spec.delay_ns;
    if spec.delay_ns > 0 && t_first > sys::now_ns() {
        if t_first >= sh.stop.end {
            sys::sleep_until(sh.stop.end);
            return Ok(());
        }
        sys::sleep_until(t_first);
    }
    res.started_ns = sys::now_ns();
    sh.mark(FTRACE_TASK, || "rtapp_task: event=start".into());
    let prog = &spec.program;
    let mut buf = vec![0u8; sh.chan_cfg.msg_bytes.max(1)];
    // The mutexes this thread holds, released however it leaves: a thread
    // stopped at the run's end while holding one would otherwise leave a
    // condition waiter unable to re-acquire it, blocked for ever (a hang
    // seen in tests/host.rs sync_objects_channels_and_forks under load).
    let mut held = HeldMutexes {
        sh: sh.as_ref(),
        held: Vec::new(),
    };
    let mut task_loop = 0u64;
    loop {
        if prog.loops.is_some_and(|l| task_loop >= l) {
            res.finished = true;
            return Ok(());
        }
        for (pi, phase) in prog.phases.iter().enumerate() {
            for k in 0..phase.loops {
                if sh.stop.stopped() {
                    return Ok(());
                }
                apply_phase(sh, phase, tid, &mut attrs)?;
                let loop_mark = |what: &str| {
                    format!("rtapp_loop: event={what} thread_loop={task_loop} phase={pi} phase_loop={k}")
                };
                sh.mark(FTRACE_LOOP, || loop_mark("start"));
                // The iteration's clock readings feed only its log row and
                // its stats mark. A thread that keeps neither (hackbench's,
                // one message an iteration) skips them: two clock reads a
                // message were enough to make hackbench's receiver outrun
                // its sender, empty the channel and sleep every ~100
                // messages where real hackbench's hardly sleeps, doubling
                // both ends' CPU per message on the project's guest
                // (scripts/investigate/hb1x1.c -w 30, docs/syscall-costs.md).
                let timed = spec.log_rows || sh.w.ftrace & FTRACE_STATS != 0;
                let mut it = Iteration::new(if timed { sys::now_ns() } else { 0 });
                for (oi, op) in phase.ops.iter().enumerate() {
                    if let Some(m) = phase.marks.get(oi) {
                        sh.mark(FTRACE_EVENT, || {
                            format!("rtapp_event: id={oi} type={} desc={}", m.kind, m.desc)
                        });
                    }
                    match do_op(sh, spec, op, t_first, &mut it, &mut buf)? {
                        Flow::Next => held.note(op),
                        Flow::Stop => return Ok(()),
                    }
                }
                if !timed {
                    sh.mark(FTRACE_LOOP, || loop_mark("end"));
                    res.loops += 1;
                    continue;
                }
                let end = sys::now_ns();
                sh.mark(FTRACE_STATS, || {
                    format!(
                        "rtapp_stats: period={} run={} wu_lat={} slack={} c_period={} c_run={}",
                        timing::us(end - it.start),
                        it.run_us,
                        it.wu_lat_us,
                        it.slack_us,
                        it.c_period_us,
                        it.c_duration_us
                    )
                });
                sh.mark(FTRACE_LOOP, || loop_mark("end"));
                let row = it.row(spec.index, end, sh.t_start);
                if spec.log_rows {
                    res.log.push(row);
                }
                res.loops += 1;
            }
        }
        task_loop += 1;
    }
}

fn cg(sh: &Shared) -> Result<&CgroupSet, HostError> {
    sh.cgroups
        .as_ref()
        .ok_or_else(|| HostError::Workload("a task group is used but none was created".into()))
}

/// Phase-level attributes, at the start of each iteration, when they differ.
fn apply_phase(
    sh: &Shared,
    phase: &schedlab_core::program::Phase,
    tid: i32,
    a: &mut Attrs,
) -> Result<(), HostError> {
    if let Some(g) = &phase.group {
        if *g != a.group {
            cg(sh)?.move_thread(g, tid)?;
            a.group.clone_from(g);
        }
    }
    if let Some((policy, nice)) = phase.sched {
        let req = SchedRequest {
            policy,
            nice,
            slice_ns: phase.slice_ns,
            dl: phase.dl.or(a.req.dl),
            uclamp: if phase.uclamp.is_empty() {
                a.req.uclamp
            } else {
                phase.uclamp
            },
        };
        if req != a.req {
            sys::sched_setattr(0, &req)?;
            a.req = req;
        }
    }
    if let Some(c) = &phase.cpus {
        if a.cpus.as_ref() != Some(c) {
            sys::set_affinity(0, c)?;
            a.cpus = Some(c.clone());
        }
    }
    Ok(())
}

/// Burns `loops` loops in chunks, stopping at the run's end. Returns the
/// loops done, or None if the run ended first.
fn burn_loops(sh: &Shared, loops: u64) -> Option<u64> {
    let chunk = sh.calib.loops_for(50_000).max(1);
    let mut done = 0;
    while done < loops {
        let n = chunk.min(loops - done);
        std::hint::black_box(calib::burn(n, done));
        done += n;
        if sh.stop.stopped() {
            return None;
        }
    }
    Some(done)
}

fn sleep_bounded(sh: &Shared, until: u64) -> Flow {
    if until >= sh.stop.end {
        sys::sleep_until(sh.stop.end);
        return Flow::Stop;
    }
    sys::sleep_until(until);
    Flow::Next
}

fn do_op(
    sh: &Arc<Shared>,
    spec: &TaskSpec,
    op: &Op,
    t_first: u64,
    it: &mut Iteration,
    buf: &mut [u8],
) -> Result<Flow, HostError> {
    let stop = &sh.stop;
    Ok(match *op {
        Op::Run {
            work_ns, config_us, ..
        } => {
            let t0 = sys::now_ns();
            let loops = sh.calib.loops_for(work_ns);
            let Some(done) = burn_loops(sh, loops) else {
                return Ok(Flow::Stop);
            };
            it.add_run(t0, sys::now_ns(), config_us, done);
            Flow::Next
        }
        Op::Runtime { wall_ns, config_us } => {
            let t0 = sys::now_ns();
            let chunk = sh.calib.loops_for(5_000).max(1);
            let mut seed = 0;
            loop {
                let now = sys::now_ns();
                if now >= t0 + wall_ns {
                    break;
                }
                if stop.stopped() {
                    return Ok(Flow::Stop);
                }
                std::hint::black_box(calib::burn(chunk, seed));
                seed += 1;
            }
            it.add_run(t0, sys::now_ns(), config_us, 0);
            Flow::Next
        }
        Op::Work { work_ns } => match burn_loops(sh, sh.calib.loops_for(work_ns)) {
            Some(_) => Flow::Next,
            None => Flow::Stop,
        },
        Op::Sleep { ns } => {
            if ns == 0 {
                return Ok(Flow::Next);
            }
            let now = sys::now_ns();
            if now + ns >= stop.end {
                sys::sleep_until(stop.end);
                return Ok(Flow::Stop);
            }
            sys::sleep_for(ns);
            Flow::Next
        }
        Op::Timer { timer, period_ns } => {
            let now = sys::now_ns();
            let step = {
                let mut ts = sh.timers[timer.0 as usize].lock().unwrap();
                timing::timer_step(&mut ts, t_first, period_ns, now)
            };
            it.add_timer(period_ns, step, sh.w.cumulative_slack);
            if let Some(exp) = step.sleep_until {
                if let Flow::Stop = sleep_bounded(sh, exp) {
                    return Ok(Flow::Stop);
                }
                it.add_wakeup(exp, sys::now_ns());
            }
            Flow::Next
        }
        Op::Yield => {
            sys::yield_now();
            Flow::Next
        }
        Op::Spawn { task } => {
            spawn(sh, task as usize, None);
            Flow::Next
        }
        Op::Fork { pool } => {
            let p = &sh.w.fork_pools[pool as usize];
            let k = sh.fork_next[pool as usize].fetch_add(1, Ordering::SeqCst);
            if let Some(&child) = p.get(k) {
                spawn(sh, child as usize, Some(sys::now_ns()));
            }
            Flow::Next
        }
        Op::Park => {
            while !stop.stopped() {
                if stop.end == u64::MAX {
                    sys::sleep_until(stop.slice_deadline());
                } else {
                    sys::sleep_until(stop.end);
                }
            }
            Flow::Stop
        }
        Op::Send { first, count } => {
            let msg = &buf[..sh.chan_cfg.msg_bytes];
            for c in first..first + count {
                if let Err(Stopped) = sh.channels[c as usize].send(msg, stop)? {
                    return Ok(Flow::Stop);
                }
            }
            Flow::Next
        }
        Op::Recv { chan, msgs } => {
            let len = sh.chan_cfg.msg_bytes * msgs as usize;
            flow(sh.channels[chan as usize].recv(len, buf, stop)?)
        }
        Op::Lock { mutex } => flow(sh.mutexes[mutex as usize].lock(stop)?),
        Op::Unlock { mutex } => {
            sh.mutexes[mutex as usize].unlock().map_err(|e| {
                HostError::Workload(format!(
                    "{}: unlock of mutex {mutex} it does not hold: {e}",
                    spec.name
                ))
            })?;
            Flow::Next
        }
        Op::Signal { cond, all } => {
            sh.conds[cond as usize].signal(all);
            Flow::Next
        }
        Op::Wait { cond, mutex } => {
            flow(sh.conds[cond as usize].wait(&sh.mutexes[mutex as usize], stop)?)
        }
        Op::Sync { cond, mutex } => {
            sh.conds[cond as usize].signal(false);
            flow(sh.conds[cond as usize].wait(&sh.mutexes[mutex as usize], stop)?)
        }
        Op::Suspend { cond, mutex } => {
            let m = &sh.mutexes[mutex as usize];
            if let Err(Stopped) = m.lock(stop)? {
                return Ok(Flow::Stop);
            }
            let r = sh.conds[cond as usize].wait(m, stop)?;
            m.unlock()?;
            flow(r)
        }
        Op::Resume { cond, mutex } => {
            let m = &sh.mutexes[mutex as usize];
            if let Err(Stopped) = m.lock(stop)? {
                return Ok(Flow::Stop);
            }
            sh.conds[cond as usize].signal(true);
            m.unlock()?;
            Flow::Next
        }
        Op::Barrier { barrier } => flow(sh.barriers[barrier as usize].wait(stop)),
        Op::SemPost { sem } => {
            sh.sems[sem as usize].post();
            Flow::Next
        }
        Op::SemWait { sem } => flow(sh.sems[sem as usize].wait(stop)),
        Op::FutexArm { .. }
        | Op::FutexPost { .. }
        | Op::FutexWait { .. }
        | Op::Stamp { .. }
        | Op::Record { .. }
        | Op::ListAdd { .. }
        | Op::ListWakeAll { .. }
        | Op::RequestPost { .. }
        | Op::RequestTake { .. }
        | Op::SleepUntil { .. }
        | Op::CpuLock { .. }
        | Op::CpuUnlock => unreachable!("check() rejects futex-word ops"),
        Op::SemSend { .. } | Op::SemReply => unreachable!("check() rejects addressed semaphores"),
    })
}

/// Wake-up latency statistics of a thread's rows (µs): p50, p90, p99, max
/// over the rows whose iteration slept on a timer (`c_period > 0`).
pub fn wu_lat_percentiles(rows: &[LogRow]) -> Option<[u64; 4]> {
    let mut v: Vec<u64> = rows
        .iter()
        .filter(|r| r.c_period > 0)
        .map(|r| r.wu_lat)
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let q = |p: f64| v[(((v.len() - 1) as f64) * p).round() as usize];
    Some([q(0.5), q(0.9), q(0.99), *v.last().unwrap()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_config_from_spec() {
        let c = ChannelConfig::from_spec("hackbench:groups=2,ipc=pipe,datasize=64");
        assert_eq!(
            c,
            ChannelConfig {
                kind: ChannelKind::Pipe,
                msg_bytes: 64
            }
        );
        assert_eq!(
            ChannelConfig::from_spec("hackbench:"),
            ChannelConfig::default()
        );
    }

    #[test]
    fn percentiles() {
        let rows: Vec<LogRow> = (1..=100)
            .map(|i| LogRow {
                wu_lat: i,
                c_period: 10,
                ..Default::default()
            })
            .collect();
        assert_eq!(wu_lat_percentiles(&rows), Some([51, 90, 99, 100]));
        assert_eq!(wu_lat_percentiles(&[]), None);
    }
}

//! Lowering the read trace into a workload: which tasks become threads,
//! their phases (runs, sleeps, timers on a detected period), and the
//! sync costs taken out of the runs.

use super::*;

pub(super) fn lower(
    mut rd: Reader<'_>,
    t_begin: Nanos,
    opts: &ReplayOptions,
) -> Result<Replay, ReplayError> {
    let pload = crate::DEFAULT_PLOAD_NS;
    // Which tasks become threads: run at least once, not dropped.
    let mut kept: HashSet<u32> = HashSet::new();
    for &pid in &rd.order {
        let t = &rd.tasks[&pid];
        let kthread = is_kernel_thread_comm(&t.comm) || pid == 2;
        if (!kthread || opts.kernel_threads) && !t.done.is_empty() {
            kept.insert(pid);
        }
    }
    // Launchers: one activation, not forked by a kept task, that only
    // forks. Their children become start-up tasks, in fork order.
    let mut launchers: HashSet<u32> = HashSet::new();
    let mut started: Vec<u32> = Vec::new();
    if opts.launchers {
        for &pid in &rd.order {
            let t = &rd.tasks[&pid];
            let [a] = t.done.as_slice() else { continue };
            let forked = matches!(a.cause, Cause::Forked { parent, .. } if kept.contains(&parent));
            let only_forks = a.marks.iter().all(|(_, m)| matches!(m, Mark::Fork(_)));
            if !kept.contains(&pid) || forked || a.marks.is_empty() || !only_forks {
                continue;
            }
            launchers.insert(pid);
            for (_, m) in &a.marks {
                let Mark::Fork(c) = *m else { continue };
                let child_of_l = rd.tasks.get(&c).and_then(|c| c.done.first()).is_some_and(
                    |ca| matches!(ca.cause, Cause::Forked { parent, .. } if parent == pid),
                );
                if kept.contains(&c) && child_of_l {
                    started.push(c);
                }
            }
        }
        for l in &launchers {
            kept.remove(l);
        }
    }
    let started_set: HashSet<u32> = started.iter().copied().collect();
    // The start barrier: a started task's second activation woken by
    // another started task still in its first one (the last to start
    // releases the others, as rt-app's threads do) is the release the
    // simulator's own start-up performs at T0. Kept, it would be released
    // twice: once by the start-up, then again by the replayed post.
    let released_at_start = |pid: u32| -> Option<u32> {
        let t = &rd.tasks[&pid];
        let Some(Cause::Dep { waker, .. }) = t.done.get(1).map(|a| a.cause) else {
            return None;
        };
        let in_first = rd.tasks[&waker]
            .done
            .first()
            .is_some_and(|a| a.marks.iter().any(|&(_, m)| m == Mark::Post(pid)));
        (started_set.contains(&pid) && started_set.contains(&waker) && in_first).then_some(waker)
    };
    let start_release: HashSet<(u32, u32)> = started
        .iter()
        .filter_map(|&p| released_at_start(p).map(|w| (w, p)))
        .collect();
    // The timers' origin: the trace's first line, or with launchers the
    // first started task's first run (rt-app's T0 is read there).
    // (after the switch's overhead, when it has one).
    let t_begin = started
        .first()
        .and_then(|c| rd.tasks[c].first_run)
        .map_or(t_begin, |r| r + opts.switch_cost_ns);
    // A forked child is kept only if its first activation has a kept
    // parent; otherwise it is a delayed start-up task.
    let forked_by = |t: &TaskTrace| match t.done.first().map(|a| a.cause) {
        Some(Cause::Forked { parent, .. }) if kept.contains(&parent) => Some(parent),
        _ => None,
    };
    let order: Vec<u32> = started
        .iter()
        .copied()
        .chain(
            rd.order
                .iter()
                .copied()
                .filter(|p| kept.contains(p) && !started_set.contains(p)),
        )
        .collect();
    if order.is_empty() {
        return Err(ReplayError {
            file: rd.file.to_string(),
            line: 0,
            kind: ReplayErrorKind::Empty,
            msg: "no task runs in the trace".into(),
        });
    }
    // Names: the comm when unique, else comm-0, comm-1... (rt-app's
    // name-index), never "rt-app" (the simulator's main thread).
    let mut count: HashMap<String, u32> = HashMap::new();
    for pid in &order {
        *count
            .entry(base_name(&rd.tasks[pid].comm, *pid))
            .or_default() += 1;
    }
    let mut taken: HashSet<String> = HashSet::from(["rt-app".to_string()]);
    let mut names: HashMap<u32, String> = HashMap::new();
    let mut next_idx: HashMap<String, u32> = HashMap::new();
    for pid in &order {
        let base = base_name(&rd.tasks[pid].comm, *pid);
        let name = if count[&base] == 1 && !taken.contains(&base) {
            base
        } else {
            loop {
                let k = next_idx.entry(base.clone()).or_default();
                let n = format!("{base}-{k}");
                *k += 1;
                if !taken.contains(&n) {
                    break n;
                }
            }
        };
        taken.insert(name.clone());
        names.insert(*pid, name);
    }
    let index: HashMap<u32, u32> = order
        .iter()
        .enumerate()
        .map(|(i, &p)| (p, i as u32))
        .collect();
    let mut w = Workload {
        log_basename: "replay".into(),
        calibration_ns: pload,
        sem_waits_sleep: true,
        ..Default::default()
    };
    // Semaphores: one per task that waits on one.
    let mut sem_of: HashMap<u32, u32> = HashMap::new();
    // Fork pools: one per forked child.
    let mut pool_of: HashMap<u32, u32> = HashMap::new();
    for &pid in &order {
        let t = &rd.tasks[&pid];
        if t.done
            .iter()
            .any(|a| matches!(a.cause, Cause::Dep { waker, .. } if kept.contains(&waker)))
        {
            sem_of.insert(pid, w.sems);
            w.sems += 1;
        }
        if forked_by(t).is_some() {
            pool_of.insert(pid, w.fork_pools.len() as u32);
            w.fork_pools.push(vec![index[&pid]]);
        }
    }
    for &pid in &order {
        let t = &rd.tasks[&pid];
        let name = names[&pid].clone();
        let parent = forked_by(t);
        // The timer's base: the trace start, or the fork for a forked task.
        let base = match (parent, t.done.first().map(|a| a.cause)) {
            (Some(_), Some(Cause::Forked { at, .. })) => at,
            _ => t_begin,
        };
        let mut timer: Option<TimerRef> = None;
        let mut last_target: Nanos = 0;
        let period = detect_period(t, opts);
        let grid = period.map_or_else(HashMap::new, |p| grid_times(t, p, opts));
        let mut phases = Vec::new();
        for (k, a) in t.done.iter().enumerate() {
            let mut ops = Vec::new();
            let wait_until = match a.cause {
                Cause::Dep { waker, .. } if k == 1 && start_release.contains(&(waker, pid)) => None,
                Cause::Dep { waker, at } => {
                    if kept.contains(&waker) {
                        ops.push(Op::SemWait { sem: sem_of[&pid] });
                        None
                    } else {
                        Some((at, true))
                    }
                }
                Cause::Timed { at, woken } => Some((grid.get(&k).copied().unwrap_or(at), woken)),
                Cause::Forked { parent: p, at } => {
                    if k == 0 && (parent == Some(p) || launchers.contains(&p)) {
                        None
                    } else {
                        Some((at, false))
                    }
                }
            };
            if let Some((at, woken)) = wait_until {
                let slack = if woken { opts.timer_slack_ns } else { 0 };
                let target = at.saturating_sub(base).saturating_sub(slack);
                let tr = *timer.get_or_insert_with(|| {
                    w.timers.push(TimerSpec {
                        name: format!("replay@{name}"),
                        absolute: true,
                    });
                    TimerRef(w.timers.len() as u32 - 1)
                });
                ops.push(Op::Timer {
                    timer: tr,
                    period_ns: target.saturating_sub(last_target),
                });
                last_target = last_target.max(target);
            }
            let mut marks = a.marks.clone();
            // A periodic task that overran: the activation did the work of
            // `n` periods; its timer expiries in between become timer
            // waits at equal shares of the work.
            if let (Some(p), Cause::Timed { at, woken: true }) = (period, a.cause) {
                if let Some(Cause::Timed {
                    at: next,
                    woken: true,
                }) = t.done.get(k + 1).map(|b| b.cause)
                {
                    let n = periods_between(at, next, p);
                    for j in 1..n {
                        marks.push((a.cpu_ns * j / n, Mark::Tick));
                    }
                }
            }
            marks.sort_by_key(|m| m.0);
            let mut done_ns = 0;
            // The start barrier's post to each task it releases: only the
            // first post to it (the same activation may wake it again).
            let mut released: HashSet<u32> = HashSet::new();
            for (off, m) in marks {
                let op = match m {
                    Mark::Tick => {
                        let (Some(tr), Some(p)) = (timer, period) else {
                            continue;
                        };
                        last_target += p;
                        Op::Timer {
                            timer: tr,
                            period_ns: p,
                        }
                    }
                    Mark::Post(p)
                        if k == 0 && start_release.contains(&(pid, p)) && released.insert(p) =>
                    {
                        continue
                    }
                    Mark::Post(p) if kept.contains(&p) && sem_of.contains_key(&p) => {
                        // Only posts that release a replayed wait.
                        Op::SemPost { sem: sem_of[&p] }
                    }
                    Mark::Fork(c)
                        if pool_of.contains_key(&c) && forked_by(&rd.tasks[&c]) == Some(pid) =>
                    {
                        Op::Fork { pool: pool_of[&c] }
                    }
                    _ => continue,
                };
                let off = off.min(a.cpu_ns);
                if off > done_ns {
                    ops.push(run_op(off - done_ns, pload));
                    done_ns = off;
                }
                ops.push(op);
            }
            if a.cpu_ns > done_ns {
                ops.push(run_op(a.cpu_ns - done_ns, pload));
            }
            if ops.is_empty() {
                continue;
            }
            phases.push(Phase::once(format!("a{k}"), ops));
        }
        deduct_sync_costs(&mut phases, pload);
        if phases.is_empty() {
            // Ran for no measurable time: a one-µs run keeps the pid's
            // posts and forks (none here, or it would have ops) valid.
            phases.push(Phase::once("a0", vec![run_op(1000, pload)]));
        }
        let (policy, nice) = policy_of(t.prio);
        let mut spec = TaskSpec::looping(name, index[&pid], policy, Vec::new());
        spec.nice = nice;
        spec.forked = parent.is_some();
        spec.program = Program {
            phases,
            loops: Some(1),
        };
        w.tasks.push(spec);
    }
    // Report.
    let mut tasks = Vec::new();
    for &pid in &rd.order {
        let t = &rd.tasks[&pid];
        let kthread = is_kernel_thread_comm(&t.comm) || pid == 2;
        let parent = if kept.contains(&pid) {
            forked_by(t)
        } else {
            None
        };
        let deps = t
            .done
            .iter()
            .filter(|a| matches!(a.cause, Cause::Dep { waker, .. } if kept.contains(&waker)))
            .count() as u64;
        let act = t.done.len() as u64;
        let forks = u64::from(parent.is_some());
        tasks.push(ReplayedTask {
            pid,
            name: names.get(&pid).cloned(),
            comm: t.comm.clone(),
            kernel_thread: kthread,
            runtime_ns: t.done.iter().map(|a| a.cpu_ns).sum(),
            activations: act,
            dependency_wakeups: deps,
            timed_wakeups: act - deps - forks,
            forked_by: parent,
            period_ns: detect_period(t, opts),
            launcher: launchers.contains(&pid),
        });
    }
    rd.report.tasks = tasks;
    Ok(Replay {
        workload: w,
        report: rd.report,
    })
}

/// Takes the CPU time the emitted semaphore ops will cost out of the task's
/// runs (module doc, "Syscall costs"): the engine charges each op of a
/// replay [`REPLAYED_SYNC_OP_NS`] (the calls they stand for are in the
/// traced runs). The cost is paid just before the op, so it comes out of
/// the runs before it, nearest first, across activations; what a post
/// cannot find before it comes out of the runs after it. A wait with no run
/// before it (the task's first) was paid before the trace began: nothing is
/// taken. A run is never taken below 1 ns.
fn deduct_sync_costs(phases: &mut [Phase], pload: u64) {
    let cost = REPLAYED_SYNC_OP_NS;
    // (phase, op) of every op, in program order.
    let pos: Vec<(usize, usize)> = phases
        .iter()
        .enumerate()
        .flat_map(|(p, ph)| (0..ph.ops.len()).map(move |o| (p, o)))
        .collect();
    for (i, &(p, o)) in pos.iter().enumerate() {
        let forward = match phases[p].ops[o] {
            Op::SemPost { .. } => true,
            Op::SemWait { .. } => false,
            _ => continue,
        };
        let mut debt = cost;
        let before = pos[..i].iter().rev();
        let after = pos[i + 1..].iter().filter(|_| forward);
        for &(q, r) in before.chain(after) {
            if debt == 0 {
                break;
            }
            if let Op::Run { work_ns, .. } = phases[q].ops[r] {
                let take = debt.min(work_ns.saturating_sub(1));
                debt -= take;
                phases[q].ops[r] = run_op(work_ns - take, pload);
            }
        }
    }
}

/// Neighbours on each side whose wakeups bound a periodic task's timer
/// expiry ([`grid_times`]): enough that some wakeup among them came at its
/// expiry plus the least latency, few enough that an error of the period
/// estimate (a fraction of the trace's µs resolution over the grid's
/// length) does not add up.
const GRID_NEIGHBOURS: usize = 8;

/// A periodic task's timed wakeups put back on its timer's grid: by
/// activation index, the time to replay the wakeup at. Each timed wakeup
/// came at its timer's expiry plus that wakeup's latency (the slack, or
/// the tick, an idle exit, the CPU busy waking for another interrupt...);
/// wakeups a whole number of periods apart (within the timer slack plus
/// 2 %) are on one grid. On a grid, the firing time most wakeups share
/// (to the ns, less whole periods) is the undisturbed one: a timer fires
/// at its expiry plus slack, unless another interrupt inside its slack
/// takes it earlier (on a busy CPU the tick does, at a phase that repeats
/// every few periods) or a busy or idle CPU handles it later. When that
/// phase is a beat (its periods all in one residue class, as the tick's
/// every other period) and every firing of the other periods is later,
/// their most common phase, if within one slack, is the hard expiry
/// instead. With no two
/// alike, the earliest of up to [`GRID_NEIGHBOURS`] neighbours on each
/// side, moved by whole periods, the best bound on this one's expiry plus
/// the least latency.
/// It is kept no later than the traced wakeup plus the slack (the soft
/// expiry cannot come after the wakeup). The replaying machine adds
/// each wakeup's latency again, its own way (module doc, "Periodic
/// tasks"). A gap off the grid (a relative timer re-anchored after an
/// overrun) starts a new grid.
fn grid_times(t: &TaskTrace, period: Nanos, opts: &ReplayOptions) -> HashMap<usize, Nanos> {
    let tol = opts.timer_slack_ns + period / 50;
    // (activation index, time, grid id, period number on that grid)
    let mut pts: Vec<(usize, Nanos, u32, i128)> = Vec::new();
    for (i, a) in t.done.iter().enumerate() {
        let Cause::Timed { at, woken: true } = a.cause else {
            continue;
        };
        let (grid, k) = match pts.last() {
            Some(&(_, prev, g, k)) if at > prev => {
                let n = periods_between(prev, at, period);
                if (at - prev).abs_diff(n * period) <= tol {
                    (g, k + n as i128)
                } else {
                    (g + 1, 0)
                }
            }
            Some(&(_, _, g, _)) => (g + 1, 0),
            None => (0, 0),
        };
        pts.push((i, at, grid, k));
    }
    // Per grid, the phase (firing time less whole periods) most wakeups
    // share, when two or more share one: the undisturbed firing.
    let mut phases: HashMap<u32, HashMap<i128, usize>> = HashMap::new();
    for &(_, b, g, k) in &pts {
        *phases
            .entry(g)
            .or_default()
            .entry(b as i128 - k * period as i128)
            .or_default() += 1;
    }
    let mut common: HashMap<u32, i128> = phases
        .iter()
        .filter_map(|(&g, m)| {
            m.iter()
                .filter(|&(_, &n)| n >= 2)
                .max_by_key(|&(&ph, &n)| (n, std::cmp::Reverse(ph)))
                .map(|(&ph, _)| (g, ph))
        })
        .collect();
    // The most common phase may be a periodic interrupt's (the tick's)
    // rather than the hard expiry: a timer fires at the first interrupt
    // inside [soft expiry, hard expiry], so an interrupt of another period
    // takes it early whenever the beat of the two periods brings it inside
    // the window: every g-th period, one residue class of the period
    // numbers. With g = 2 the early phase and the hard expiry alternate and
    // are equally common but for periods lost to overruns. So when the
    // most common phase's firings (three or more) all share one residue
    // class mod the gcd g >= 2 of their period numbers, the firings of the
    // other periods tell where the timer fires undisturbed: their most
    // common phase, if within one slack (the hard expiry's window reaches
    // back over the interrupt) and every firing of the other periods is
    // later than the beat's (the periods the interrupt misses fire at the
    // hard expiry or after it: a handling delay only makes a timer later).
    // Otherwise the beat class is the hard expiry's own, and the other
    // periods fire early (at an interrupt) or late.
    let slack = opts.timer_slack_ns as i128;
    for (&g, ph) in common.iter_mut() {
        let phase = |x: &(usize, Nanos, u32, i128)| x.1 as i128 - x.3 * period as i128;
        let beat = pts
            .iter()
            .filter(|x| x.2 == g && phase(x) == *ph)
            .map(|x| x.3)
            .collect::<Vec<_>>();
        if beat.len() < 3 {
            continue;
        }
        let step = beat.windows(2).fold(0i128, |a, w| gcd(a, w[1] - w[0]));
        if step < 2 {
            continue;
        }
        let class = beat[0].rem_euclid(step);
        let mut other: HashMap<i128, usize> = HashMap::new();
        for x in pts
            .iter()
            .filter(|x| x.2 == g && x.3.rem_euclid(step) != class)
        {
            *other.entry(phase(x)).or_default() += 1;
        }
        let hard = other
            .iter()
            .map(|(&q, &n)| (q, n))
            .filter(|&(_, n)| n >= 2)
            .max_by_key(|&(q, n)| (n, std::cmp::Reverse(q)))
            .map(|(q, _)| q);
        let after = other.keys().all(|&q| q > *ph);
        if let Some(q) = hard.filter(|&q| after && q - *ph <= slack) {
            *ph = q;
        }
    }
    let mut out = HashMap::new();
    for (n, &(i, at, g, k)) in pts.iter().enumerate() {
        let best = match common.get(&g) {
            Some(&ph) => ph + k * period as i128,
            None => {
                // No two alike: the earliest neighbour.
                let lo = n.saturating_sub(GRID_NEIGHBOURS);
                let hi = (n + GRID_NEIGHBOURS + 1).min(pts.len());
                pts[lo..hi]
                    .iter()
                    .filter(|x| x.2 == g)
                    .map(|&(_, b, _, kb)| b as i128 - (kb - k) * period as i128)
                    .min()
                    .unwrap_or(at as i128)
            }
        };
        // A timer never fires before its soft expiry (the grid point less
        // the slack), so that stays at or before the traced wakeup.
        let slack = opts.timer_slack_ns;
        let best = u64::try_from(best).map_or(at, |b| b.min(at + slack));
        out.insert(i, best);
    }
    out
}

/// Greatest common divisor (of period-number differences, `gcd(0, x)` = |x|).
fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The wakeups `at` and `next` of a periodic task are this many periods
/// apart (at least 1, at most 1000).
fn periods_between(at: Nanos, next: Nanos, period: Nanos) -> u64 {
    ((next.saturating_sub(at) + period / 2) / period).clamp(1, 1000)
}

/// The period of a timer-driven task: at least 4 timed wakeups, and 90 % of
/// the gaps between consecutive ones within a tolerance (the timer slack
/// plus 2 %) of a whole number (< 1000) of periods; the others are taken
/// for a relative timer re-anchored after an overrun (rt-app's default
/// timer mode). The period is first the mean of the gaps about as long as
/// the shortest, then the sum of the gaps on the grid over the sum of their
/// whole numbers of periods (long gaps pin it down), and last the exact
/// slope most pairs of nearby wakeups share, when three or more do
/// (wakeups with equal latencies are exactly whole periods apart).
fn detect_period(t: &TaskTrace, opts: &ReplayOptions) -> Option<Nanos> {
    let woken: Vec<Option<Nanos>> = t
        .done
        .iter()
        .map(|a| match a.cause {
            Cause::Timed { at, woken: true } => Some(at),
            _ => None,
        })
        .collect();
    let gaps: Vec<Nanos> = woken
        .windows(2)
        .filter_map(|w| match (w[0], w[1]) {
            (Some(a), Some(b)) if b > a => Some(b - a),
            _ => None,
        })
        .collect();
    if gaps.len() < 3 {
        return None;
    }
    let min = *gaps.iter().min()?;
    let tol = |p: Nanos| opts.timer_slack_ns + p / 50;
    let ones: Vec<Nanos> = gaps
        .iter()
        .copied()
        .filter(|&g| g <= min + tol(min))
        .collect();
    let mut p = ones.iter().sum::<Nanos>() / ones.len() as Nanos;
    if p <= 2 * tol(p) {
        return None;
    }
    for _ in 0..2 {
        let near = |g: Nanos| g.abs_diff(periods_between(0, g, p) * p) <= tol(p);
        let n: u64 = gaps
            .iter()
            .filter(|&&g| near(g))
            .map(|&g| periods_between(0, g, p))
            .sum();
        let sum: Nanos = gaps.iter().filter(|&&g| near(g)).sum();
        if let Some(q) = sum.checked_div(n) {
            p = q;
        }
    }
    if p <= 2 * tol(p) {
        return None;
    }
    // Wakeups with equal latencies lie exactly whole periods apart, however
    // late each was: the most common exact slope between nearby wakeups is
    // the period to the ns, where the mean carries the first and last
    // latencies it spans and the grid multiplies that error by up to
    // GRID_NEIGHBOURS periods. Kept when at least three pairs agree.
    let times: Vec<Nanos> = woken.iter().flatten().copied().collect();
    let mut slopes: Vec<Nanos> = Vec::new();
    for (i, &a) in times.iter().enumerate() {
        for &b in times.iter().skip(i + 1).take(2 * GRID_NEIGHBOURS) {
            let Some(dt) = b.checked_sub(a).filter(|&d| d > 0) else {
                continue;
            };
            let k = periods_between(0, dt, p);
            if dt.abs_diff(k * p) <= tol(p) && dt % k == 0 {
                slopes.push(dt / k);
            }
        }
    }
    slopes.sort_unstable();
    let common = slopes
        .chunk_by(|a, b| a == b)
        .max_by_key(|run| (run.len(), std::cmp::Reverse(run[0].abs_diff(p))))
        .filter(|run| run.len() >= 3)
        .map(|run| run[0]);
    if let Some(c) = common {
        p = c;
    }
    let on_grid = |g: Nanos| {
        let n = (g + p / 2) / p;
        (1..1000).contains(&n) && g.abs_diff(n * p) <= tol(p)
    };
    let fits = gaps.iter().filter(|&&g| on_grid(g)).count();
    (fits * 10 >= gaps.len() * 9).then_some(p)
}

/// A task name from a comm: printable, no blanks (rt-app names are JSON
/// keys and log file names), `pid<N>` when the comm is unknown.
fn base_name(comm: &str, pid: u32) -> String {
    let s: String = comm
        .chars()
        .map(|c| {
            if c.is_whitespace() || c.is_control() || c == '/' {
                '_'
            } else {
                c
            }
        })
        .collect();
    if s.is_empty() {
        format!("pid{pid}")
    } else {
        s
    }
}

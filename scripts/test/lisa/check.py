"""Runs LISA's tasks, wakeup-latency, idle and rt-app analyses on a schedlab
run directory's trace.dat and checks their numbers against the run's
summary.json and rt-app logs. Run by scripts/test/test-lisa.sh inside the virtual
environment that holds lisa-linux (scripts/test/lisa/requirements.txt).

Usage: python check.py OUTDIR

Prints one line per check, `lisa: ANALYSIS: WHAT: lisa=X schedlab=Y ok|FAIL`,
and exits 1 if any check failed (or an analysis raised).

What each check compares, and why the bound holds:

* tasks (`ana.tasks.df_tasks_runtime`): LISA's runtime is wall time from a
  task's switch-in to its switch-out, so it also holds the scheduler's own
  CPU time charged while the task was current (summary.json's runtime_ns
  does not). Checked: within 1 % of runtime_ns, or 10 us per switch for a
  task that hardly ran. (The exact check, the sum of `sched_stat_runtime`
  equals runtime_ns, is in the Rust trace-cmd test: LISA 3.1's bundled
  trace-cmd v3.1.5 prints that event's u64 `runtime` empty.)
* latency (`ana.latency.df_latency_wakeup`, `df_latency_preemption`, and
  `ana.tasks.df_task_states` for the preempted `R+` state LISA 3.1 keeps
  apart): the time from each sched_wakeup / switch-out while runnable to
  the next switch-in, summed (plus a wait still open at the run's end),
  equals summary.json's wait_ns (the run delay) to the nanosecond, and the
  number of wakeup latencies is wakeups + 1 (the first is sched_wakeup_new;
  one less if a wakeup is pending at the end).
* rt-app wakeup latency (`ana.rta.df_rtapp_stats`, rt-app's wu_lat):
  count, min, max and sum equal summary.json's wakeup_latency_us.
* idle (`ana.idle.df_cpu_idle_state_residency`): the time in idle states
  per CPU against summary.json's idle_ns. idle_ns leaves out the scheduler
  work done while idle (wakeups run by the idle CPU), cpu_idle does not, so
  LISA's figure is larger by at most that CPU's sched_overhead_ns; it may be
  smaller by the idle tail after the trace's last event.
* rt-app (`ana.rta.df_rtapp_stats`): slack min/mean/max equal summary.json's
  deadlines.slack_us; every row's slack and LISA's perf_index
  (slack / (c_period - c_run)) match the rt-app log's row.
"""

import json
import math
import os
import sys
import warnings

warnings.filterwarnings("ignore")

from lisa.trace import Trace  # noqa: E402
from lisa.analysis.tasks import TaskState  # noqa: E402

failures = []


def check(analysis, what, lisa, schedlab, ok):
    print(f"lisa: {analysis}: {what}: lisa={lisa} schedlab={schedlab} {'ok' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"{analysis}: {what}")


def read_log(path):
    rows = []
    with open(path) as f:
        header = None
        for line in f:
            if line.startswith("#"):
                header = line[1:].split()
                continue
            if line.strip():
                rows.append(dict(zip(header, map(int, line.split()))))
    return rows


def main(outdir):
    summary = json.load(open(os.path.join(outdir, "summary.json")))
    trace = Trace(os.path.join(outdir, "trace.dat"))
    ana = trace.ana
    tasks = summary["tasks"]
    duration_s = summary["duration_ns"] / 1e9

    # ---- tasks
    runtime = ana.tasks.df_tasks_runtime()
    for t in tasks + summary["helpers"]:
        lisa = float(runtime.loc[t["pid"], "runtime"])
        want = t["runtime_ns"] / 1e9
        bound = max(0.01 * want, 10e-6 * t["switches"])
        check("tasks", f"{t['name']} runtime s", f"{lisa:.6f}", f"{want:.6f}",
              abs(lisa - want) <= bound)

    # ---- wakeup latency
    # The run ends duration_ns after the main thread's creation (its
    # sched_wakeup_new, the trace's first); a task still waiting then has
    # its last wait counted in wait_ns up to that end.
    end = float(trace.df_event("sched_wakeup_new").index[0]) + duration_s
    for t in tasks:
        task = (t["pid"], t["name"])
        wake = ana.latency.df_latency_wakeup(task)
        pre = ana.latency.df_latency_preemption(task)
        states = ana.tasks.df_task_states(task)
        preempted = states[(states.curr_state == TaskState.TASK_WAKEKILL)
                           & (states.next_state == TaskState.TASK_ACTIVE)]
        total = wake.wakeup_latency.sum() + pre.preempt_latency.sum() + preempted.delta.sum()
        last = states.iloc[-1]
        waiting = last.curr_state in (TaskState.TASK_WAKING, TaskState.TASK_RUNNING,
                                      TaskState.TASK_WAKEKILL)
        open_wait = end - float(states.index[-1]) if waiting else 0.0
        got = int(round((total + open_wait) * 1e9))
        check("latency", f"{t['name']} wakeup+preemption latency ns (open at end: {open_wait * 1e6:.0f} us)",
              got, t["wait_ns"], abs(got - t["wait_ns"]) <= 1)
        # wakeups counts sched_wakeup; LISA also counts sched_wakeup_new,
        # and not a wakeup still pending at the end.
        # A wakeup and the switch-in it leads to can share a timestamp (a
        # zero wakeup latency); LISA then may sort the switch-in first and
        # pair nothing with that wakeup: count those apart.
        waking = states[(states.curr_state == TaskState.TASK_WAKING)
                        & (states.next_state != TaskState.TASK_ACTIVE)]
        active_at = states[states.curr_state == TaskState.TASK_ACTIVE].index.to_numpy()
        if waiting and last.curr_state == TaskState.TASK_WAKING:
            waking = waking.iloc[:-1]
        # (LISA moves duplicate timestamps apart by a few ulp.)
        ties = int(sum(bool((abs(active_at - ts) < 1e-9).any()) for ts in waking.index))
        want_n = t["wakeups"] + 1 - int(last.curr_state == TaskState.TASK_WAKING)
        check("latency", f"{t['name']} wakeup latencies (n, + {ties} tied with their switch-in)",
              len(wake) + ties, want_n, len(wake) + ties == want_n and ties == len(waking))
        print(f"lisa: latency: {t['name']} wakeup latency us: n={len(wake)} "
              f"mean={wake.wakeup_latency.mean() * 1e6:.2f} max={wake.wakeup_latency.max() * 1e6:.2f}; "
              f"preempted waits n={len(pre) + len(preempted)}")

    # ---- idle
    for c in summary["cpus"]:
        res = ana.idle.df_cpu_idle_state_residency(c["cpu"])
        lisa = float(res[res.index >= 0].time.sum())
        want = c["idle_ns"] / 1e9
        tail = max(0.0, duration_s - trace.end)
        ok = -tail - 1e-9 <= lisa - want <= c["sched_overhead_ns"] / 1e9 + 1e-9
        per_state = {int(k): round(float(v), 6) for k, v in res.time.items()}
        check("idle", f"cpu{c['cpu']} idle residency s {per_state}", f"{lisa:.6f}",
              f"{want:.6f} (+{c['sched_overhead_ns'] / 1e9:.6f} overhead, -{tail:.6f} tail)", ok)

    # ---- rt-app
    stats = ana.rta.df_rtapp_stats()
    for t in tasks:
        rows = stats[stats["__pid"] == t["pid"]]
        wl = t["wakeup_latency_us"]
        dl = t.get("deadlines")
        if dl:
            n = len(rows)
            check("rt-app", f"{t['name']} wu_lat n/min/max/sum us",
                  (n, int(rows.wu_lat.min()), int(rows.wu_lat.max()), int(rows.wu_lat.sum())),
                  (wl["n"], wl["min"], wl["max"], wl["sum"]),
                  (n, rows.wu_lat.min(), rows.wu_lat.max(), rows.wu_lat.sum())
                  == (wl["n"], wl["min"], wl["max"], wl["sum"]))
            s = dl["slack_us"]
            got = (int(rows.slack.min()), int(math.floor(rows.slack.mean())), int(rows.slack.max()))
            want = (s["min"], s["mean"], s["max"])
            check("rt-app", f"{t['name']} slack min/mean/max us", got, want,
                  got[0] == want[0] and got[2] == want[2] and abs(got[1] - want[1]) <= 1)
        log = read_log(os.path.join(outdir, f"rt-app-{t['name']}.log"))
        ok = len(log) == len(rows) == t["loops"]
        bad = 0
        for r, (_, row) in zip(log, rows.iterrows()):
            den = r["c_period"] - r["c_duration"]
            perf_ok = den == 0 or abs(r["slack"] / den - row.perf_index) <= 1e-9
            if r["slack"] != row.slack or not perf_ok:
                bad += 1
        check("rt-app", f"{t['name']} rows, slack and perf_index vs the log ({bad} differ)",
              f"{len(rows)} rows, perf_index mean {rows.perf_index.mean():.4f}",
              f"{len(log)} log rows, {t['loops']} loops", ok and bad == 0)

    if failures:
        print(f"lisa: {len(failures)} check(s) failed: {'; '.join(failures)}")
        return 1
    print("lisa: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

#!/usr/bin/env python3
"""SimSo (global EDF) against schedlab on the same periodic shape.

    python3 scripts/bench/bench_simso.py                       # 8, 64, 160 CPUs, 1 s, 3 repeats
    python3 scripts/bench/bench_simso.py --cpus 160 --repeat 1
    python3 scripts/bench/bench_simso.py --markdown            # the BENCHMARKS.md table

The shape, the same on both sides: N CPUs and N periodic tasks, each
running 2 ms every 5 ms (40 % of a CPU), from time 0, for 1 simulated
second.
* SimSo 0.8.5 (`pip install simso`; the script makes a virtual environment
  in ~/.cache/schedlab-simso-venv on first use unless `--python` names an
  interpreter that has it): N identical processors without overheads, its
  global EDF (`simso.schedulers.EDF`), the tasks as "Periodic" with wcet
  2 ms, period and deadline 5 ms. SimSo's EDF prints a line per decision;
  its standard output goes to /dev/null.
* schedlab: the release binary (`cargo build --release -p schedlab-cli`
  first), `schedlab run WORKLOAD.json --machine sysfs:DIR --quiet`, the
  workload an rt-app file of N threads `run 2000 / timer unique period
  5000`, `--duration 1s`; the machine a generated sysfs tree of one socket,
  one node, one LLC and N cores without SMT (the closest to SimSo's flat
  processors). At 160 CPUs the icx-2s-80c-ht preset is timed too.
  schedlab models much more (the fair class with EEVDF, PELT, sched
  domains, load balancing, idle states, rt-app's thread start-up): the
  ratio is of the tools as they are, not of equal work.

Timing: SimSo from building its Model to the end of run_model() (imports
and interpreter start excluded); schedlab the whole process (start-up,
machine import and domains included). Both wall and CPU time (user + sys:
SimSo's process_time(), schedlab's rusage as a child) are measured; the
ratio is of CPU times, which a machine shared with other jobs disturbs far
less than wall times (on a loaded 2-core machine a process may get a third
of a core). The minimum of the repeats is the figure; all runs are printed.
Run it at nice -20 and say the load average (printed at the end).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_MS, PERIOD_MS = 2, 5
VENV = os.path.expanduser("~/.cache/schedlab-simso-venv")

SIMSO_CHILD = r"""
import os, sys, time
from simso.core import Model
from simso.configuration import Configuration
n, run_ms, period_ms, seconds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
devnull = open(os.devnull, "w")
t0, c0 = time.perf_counter(), time.process_time()
c = Configuration()
c.duration = int(seconds * 1000 * c.cycles_per_ms)
for i in range(n):
    c.add_task(name="T%d" % i, identifier=i + 1, task_type="Periodic", period=period_ms,
               activation_date=0, wcet=run_ms, deadline=period_ms)
for i in range(n):
    c.add_processor(name="CPU %d" % i, identifier=i + 1)
c.scheduler_info.clas = "simso.schedulers.EDF"
c.check_all()
m = Model(c)
out, sys.stdout = sys.stdout, devnull
m.run_model()
sys.stdout = out
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
jobs = sum(len(t.jobs) for t in m.results.tasks.values())
print(wall, cpu, jobs)
"""


def simso_python(arg):
    """An interpreter with simso importable: --python, this one, or a venv."""
    for py in [arg, sys.executable, os.path.join(VENV, "bin", "python")]:
        if py and os.path.exists(py) and subprocess.run([py, "-c", "import simso"], capture_output=True).returncode == 0:
            return py
    print(f"installing simso into {VENV} ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q", "simso==0.8.5"], check=True)
    return os.path.join(VENV, "bin", "python")


def flat_sysfs(root, n):
    """A sysfs tree: one package, one node, one LLC, n cores, no SMT."""
    allc = f"0-{n - 1}"
    files = {
        "cpu/possible": allc, "cpu/online": allc, "cpu/present": allc, "cpu/offline": "",
        "node/possible": "0", "node/online": "0", "node/has_cpu": "0",
        "node/node0/distance": "10", "node/node0/cpulist": allc,
    }
    # intel_idle's ICX table (POLL, C1 1/1, C6 170/600 µs), as the presets.
    idle = [("POLL", 0, 0), ("C1", 1, 1), ("C6", 170, 600)]
    for c in range(n):
        d = f"cpu/cpu{c}"
        for k, v in {
            "topology/physical_package_id": "0", "topology/die_id": "0",
            "topology/core_id": str(c), "topology/thread_siblings_list": str(c),
            "topology/core_cpus_list": str(c), "topology/cluster_cpus_list": str(c),
            "topology/core_siblings_list": allc, "topology/package_cpus_list": allc,
            "cache/index2/level": "2", "cache/index2/type": "Unified", "cache/index2/id": str(c),
            "cache/index2/size": "2048K", "cache/index2/shared_cpu_list": str(c),
            "cache/index3/level": "3", "cache/index3/type": "Unified", "cache/index3/id": "0",
            "cache/index3/size": "32768K", "cache/index3/shared_cpu_list": allc,
        }.items():
            files[f"{d}/{k}"] = v
        for i, (name, lat, res) in enumerate(idle):
            for k, v in {"name": name, "latency": lat, "residency": res, "disable": 0}.items():
                files[f"{d}/cpuidle/state{i}/{k}"] = str(v)
    for rel, text in files.items():
        p = os.path.join(root, "devices/system", rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text + "\n")


def workload(path, n, seconds):
    tasks = {
        f"task{i}": {"loop": -1, "run": RUN_MS * 1000,
                     "timer": {"ref": "unique", "period": PERIOD_MS * 1000}}
        for i in range(n)
    }
    with open(path, "w") as f:
        json.dump({"tasks": tasks, "global": {"calibration": 100}}, f)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_schedlab(binary, wl, machine, seconds):
    """(wall, CPU) seconds of one whole `schedlab run` process."""
    t0, c0 = time.perf_counter(), children_cpu()
    subprocess.run([binary, "run", wl, "--machine", machine, "--duration", f"{seconds}s",
                    "--quiet"], check=True)
    return time.perf_counter() - t0, children_cpu() - c0


def time_simso(py, n, seconds):
    out = subprocess.run([py, "-c", SIMSO_CHILD, str(n), str(RUN_MS), str(PERIOD_MS), str(seconds)],
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1]), int(out[2])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cpus", type=int, nargs="+", default=[8, 64, 160])
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--schedlab", default=os.path.join(ROOT, "target/release/schedlab"))
    ap.add_argument("--python", help="an interpreter with simso installed")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    a = ap.parse_args()
    if not os.access(a.schedlab, os.X_OK):
        sys.exit(f"{a.schedlab}: not found; run `cargo build --release -p schedlab-cli` first")
    py = simso_python(a.python)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in a.cpus:
            wl = os.path.join(tmp, f"periodic-{n}.json")
            workload(wl, n, a.seconds)
            sysfs = os.path.join(tmp, f"sysfs-{n}")
            flat_sysfs(sysfs, n)
            machines = [(f"flat {n} CPUs (sysfs)", f"sysfs:{sysfs}")]
            if n == 160:
                machines.append(("icx-2s-80c-ht", "icx-2s-80c-ht"))
            simso = [time_simso(py, n, a.seconds) for _ in range(a.repeat)]
            s_wall, s_cpu = min(w for w, _, _ in simso), min(c for _, c, _ in simso)
            print(f"# {n} CPUs: SimSo global EDF wall {[round(w, 3) for w, _, _ in simso]} s, "
                  f"CPU {[round(c, 3) for _, c, _ in simso]} s, {simso[0][2]} jobs",
                  file=sys.stderr)
            for label, m in machines:
                runs = [time_schedlab(a.schedlab, wl, m, a.seconds) for _ in range(a.repeat)]
                b_wall, b_cpu = min(w for w, _ in runs), min(c for _, c in runs)
                print(f"# {n} CPUs: schedlab on {label} wall {[round(w, 4) for w, _ in runs]} s, "
                      f"CPU {[round(c, 4) for _, c in runs]} s", file=sys.stderr)
                rows.append((n, label, s_wall, b_wall, s_cpu, b_cpu))
        rows = [(n, l, sw, bw, sc, bc, sc / max(bc, 1e-4)) for n, l, sw, bw, sc, bc in rows]
    load = os.getloadavg()
    if a.markdown:
        print("| CPUs = tasks | schedlab machine | SimSo wall s | schedlab wall s | SimSo CPU s "
              "| schedlab CPU s | ratio (CPU) |")
        print("|---|---|---|---|---|---|---|")
        for n, label, sw, bw, sc, bc, r in rows:
            print(f"| {n} | {label} | {sw:.3f} | {bw:.4f} | {sc:.3f} | {bc:.4f} | {r:.0f}x |")
    else:
        print(f"{'cpus':>5} {'schedlab machine':<24} {'simso wall':>10} {'sl wall':>8} "
              f"{'simso cpu':>10} {'sl cpu':>8} {'ratio':>7}")
        for n, label, sw, bw, sc, bc, r in rows:
            print(f"{n:>5} {label:<24} {sw:>10.3f} {bw:>8.4f} {sc:>10.3f} {bc:>8.4f} {r:>6.0f}x")
    print(f"(minimum of {a.repeat} runs each, {a.seconds} simulated s; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")


if __name__ == "__main__":
    main()

"""Single runs and A/B comparisons: :func:`run`, :class:`RunResult`, :func:`compare`.

Every run goes through the command line's own argument parsing, in this
process (``schedlab._native.run_argv``, the library's command line): the keyword arguments become the
flags of ``schedlab run``, the output directory is read back into pandas.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _native

SchedlabError = _native.SchedlabError

#: A workload: a path to an rt-app JSON file, a generator spec string
#: (``"hackbench:groups=2,loops=100"``), or an rt-app document as a dict.
Workload = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def _features_arg(features: Union[None, str, Iterable[str], Mapping[str, Any]]) -> Optional[str]:
    """``--features`` text from a string, a list of switches or a dict."""
    if features is None:
        return None
    if isinstance(features, str):
        return features
    if isinstance(features, Mapping):
        items = []
        for k, v in features.items():
            if v is True:
                items.append(k)
            elif v is False:
                items.append(f"NO_{k}")
            else:
                items.append(f"{k}={v}")
        return ",".join(items)
    return ",".join(features)


def _sysctl_items(sysctl: Union[None, str, Iterable[str], Mapping[str, Any]]) -> List[str]:
    """``NAME=VALUE`` items, one ``--sysctl`` each."""
    if sysctl is None:
        return []
    if isinstance(sysctl, str):
        return [s.strip() for s in sysctl.split(",") if s.strip()]
    if isinstance(sysctl, Mapping):
        return [f"{k}={v}" for k, v in sysctl.items()]
    return list(sysctl)


def _duration_arg(duration: Union[None, str, float, int]) -> Optional[str]:
    if duration is None:
        return None
    if isinstance(duration, (int, float)):
        return f"{duration}s"
    return str(duration)


def _workload_arg(workload: Workload, scratch: Path) -> str:
    """A path or spec the CLI reads; a dict is written to a file in SCRATCH."""
    if isinstance(workload, Mapping):
        scratch.mkdir(parents=True, exist_ok=True)
        f = scratch / "workload.json"
        f.write_text(json.dumps(workload, indent=2))
        return str(f)
    return os.fspath(workload)


def _sim_flags(
    machine: str,
    kernel: Optional[str],
    features: Any,
    sysctl: Any,
    seed: int,
    duration: Any,
    hz: Optional[int],
    preempt: Optional[str],
    cgroup: Sequence[str],
) -> List[str]:
    a = ["--machine", machine, "--seed", str(seed)]
    f = _features_arg(features)
    if f:
        a += ["--features", f]
    d = _duration_arg(duration)
    if d:
        a += ["--duration", d]
    # --kernel/--sysctl only when asked for: a CLI without them still runs
    # everything else, and one that lacks them says so in its own words.
    if kernel is not None:
        a += ["--kernel", kernel]
    for s in _sysctl_items(sysctl):
        a += ["--sysctl", s]
    if hz is not None:
        a += ["--hz", str(hz)]
    if preempt is not None:
        a += ["--preempt", preempt]
    for c in cgroup:
        a += ["--cgroup", c]
    return a


def cli(*args: str) -> bool:
    """Runs ``schedlab ARGS...`` in this process (stdout and stderr are the
    process's); every verb but ``exec``, ``record`` and ``validate``, which
    only the binary has. Returns True on exit status 0, False on 1 (a broken model
    invariant under ``--check``); raises :class:`SchedlabError` with the
    command line's one-line message on a user error."""
    return _native.run_argv(["schedlab", *args])


_TRACE_LINE = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+(?P<ts>\d+\.\d+):\s+(?P<event>[\w:]+):\s?(?P<body>.*)$"
)
_FIELD = re.compile(r"(\w+)=((?:\S| (?![\w]+=)(?!==>))*)")


class RunResult:
    """One finished run: the raw summary (:attr:`summary`, summary.json as a
    dict), the output directory (:attr:`out`), and pandas DataFrames named
    after LISA's analyses. Times are in seconds, as LISA's are."""

    def __init__(self, out: Path, argv: List[str]):
        self.out = Path(out)
        #: The command line that produced the run.
        self.argv = argv
        with open(self.out / "summary.json") as f:
            #: summary.json (docs/summary-json.md) as a dict.
            self.summary: Dict[str, Any] = json.load(f)
        self._events: Optional[pd.DataFrame] = None

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<schedlab.RunResult {s['machine']['name']} seed={s['seed']} "
            f"{len(s['tasks'])} tasks, {s['duration_ns'] / 1e9:g} s simulated, out={self.out}>"
        )

    # -- tasks -------------------------------------------------------------
    @property
    def df_tasks_runtime(self) -> pd.DataFrame:
        """Per thread, indexed by pid (LISA's ``tasks.df_tasks_runtime``):
        ``comm``, ``runtime`` (s), plus ``wait``, ``switches``,
        ``migrations``, ``wakeups``, ``loops``, ``policy``, ``nice``, ``group``."""
        rows = []
        for t in self.summary["tasks"]:
            rows.append(
                {
                    "pid": t["pid"],
                    "comm": t["name"],
                    "runtime": t["runtime_ns"] / 1e9,
                    "wait": t["wait_ns"] / 1e9,
                    "switches": t["switches"],
                    "migrations": t["migrations"],
                    "wakeups": t["wakeups"],
                    "loops": t["loops"],
                    "policy": t["policy"],
                    "nice": t["nice"],
                    "group": t["group"],
                }
            )
        return pd.DataFrame(rows).set_index("pid")

    @property
    def df_latency_wakeup(self) -> pd.DataFrame:
        """Wakeup latency of every timer wakeup (LISA's
        ``latency.df_latency_wakeup``, over all tasks): index ``Time`` (s,
        the row's start), columns ``comm``, ``pid``, ``wakeup_latency`` (s):
        the ``wu_lat`` column of the rt-app logs' timer rows, the samples of
        summary.json's ``wakeup_latency_us``."""
        pids = {t["name"]: t["pid"] for t in self.summary["tasks"]}
        frames = []
        for log in sorted(self.out.glob("rt-app-*.log")):
            comm = log.name[len("rt-app-") : -len(".log")]
            df = pd.read_csv(log, sep=r"\s+")
            df.columns = [c.lstrip("#") for c in df.columns]
            if df.empty or "wu_lat" not in df.columns:
                continue
            # Rows of iterations with a timer (c_period > 0), as summary.json.
            df = df[df["c_period"] > 0]
            if df.empty:
                continue
            frames.append(
                pd.DataFrame(
                    {
                        "Time": df["start"] / 1e6,
                        "comm": comm,
                        "pid": pids.get(comm, -1),
                        "wakeup_latency": df["wu_lat"] / 1e6,
                    }
                )
            )
        if not frames:
            return pd.DataFrame(columns=["comm", "pid", "wakeup_latency"], index=pd.Index([], name="Time"))
        return pd.concat(frames).sort_values(["Time", "pid"], kind="stable").set_index("Time")

    @property
    def df_task_states(self) -> pd.DataFrame:
        """Every task's state changes (LISA's ``tasks.df_task_states``, all
        tasks): index ``Time`` (s), columns ``pid``, ``comm``, ``cpu``,
        ``target_cpu``, ``curr_state`` (``A`` running, ``R`` preempted,
        ``S``/``D`` sleeping, ``W`` woken), ``next_state``, ``delta`` (s
        until the next change). Needs the trace (``run(..., trace=True)``)."""
        sw = self.df_event("sched_switch")
        wk = pd.concat([self.df_event("sched_wakeup"), self.df_event("sched_wakeup_new")])
        parts = []
        if not sw.empty:
            out_ = pd.DataFrame(
                {
                    "Time": sw.index,
                    "pid": sw["prev_pid"].astype(int).values,
                    "comm": sw["prev_comm"].values,
                    "cpu": sw["__cpu"].values,
                    "target_cpu": -1,
                    "curr_state": sw["prev_state"].str[0].values,
                }
            )
            in_ = pd.DataFrame(
                {
                    "Time": sw.index,
                    "pid": sw["next_pid"].astype(int).values,
                    "comm": sw["next_comm"].values,
                    "cpu": sw["__cpu"].values,
                    "target_cpu": -1,
                    "curr_state": "A",
                }
            )
            parts += [out_, in_]
        if not wk.empty:
            parts.append(
                pd.DataFrame(
                    {
                        "Time": wk.index,
                        "pid": wk["pid"].astype(int).values,
                        "comm": wk["comm"].values,
                        "cpu": wk["__cpu"].values,
                        "target_cpu": wk["target_cpu"].astype(int).values,
                        "curr_state": "W",
                    }
                )
            )
        if not parts:
            return pd.DataFrame(
                columns=["pid", "comm", "cpu", "target_cpu", "curr_state", "next_state", "delta"],
                index=pd.Index([], name="Time"),
            )
        df = pd.concat(parts, ignore_index=True)
        df = df[df["pid"] != 0].sort_values(["pid", "Time"], kind="stable")
        df["next_state"] = df.groupby("pid")["curr_state"].shift(-1)
        df["delta"] = df.groupby("pid")["Time"].shift(-1) - df["Time"]
        return df.sort_values(["Time", "pid"], kind="stable").set_index("Time")

    # -- CPUs ----------------------------------------------------------------
    @property
    def df_cpus(self) -> pd.DataFrame:
        """Per CPU, indexed by ``cpu``: ``utilisation`` (busy share of the
        run), ``busy``, ``idle``, ``sched_overhead``, ``wasted_idle`` (s),
        ``steal`` (tasks stolen), ``sched_count``, ``sched_goidle``,
        ``ttwu_count``."""
        dur = self.summary["duration_ns"] or 1
        rows = []
        for c in self.summary["cpus"]:
            rows.append(
                {
                    "cpu": c["cpu"],
                    "utilisation": c["busy_ns"] / dur,
                    "busy": c["busy_ns"] / 1e9,
                    "idle": c["idle_ns"] / 1e9,
                    "sched_overhead": c.get("sched_overhead_ns", 0) / 1e9,
                    "wasted_idle": c.get("wasted_idle_ns", 0) / 1e9,
                    "steal": c.get("steal", 0),
                    "sched_count": c.get("sched_count"),
                    "sched_goidle": c.get("sched_goidle"),
                    "ttwu_count": c.get("ttwu_count"),
                }
            )
        return pd.DataFrame(rows).set_index("cpu")

    @property
    def df_schedstat(self) -> pd.DataFrame:
        """The ``cpuN`` lines of the run's /proc/schedstat (v17), indexed by
        ``cpu``: ``yld_count``, ``sched_count``, ``sched_goidle``,
        ``ttwu_count``, ``ttwu_local``, ``rq_cpu_time`` (ns), ``run_delay``
        (ns), ``pcount``. The domain lines: :attr:`df_schedstat_domains`."""
        names = ["yld_count", "legacy", "sched_count", "sched_goidle", "ttwu_count", "ttwu_local", "rq_cpu_time", "run_delay", "pcount"]
        rows = []
        for line in (self.out / "schedstat").read_text().splitlines():
            if line.startswith("cpu"):
                f = line.split()
                rows.append({"cpu": int(f[0][3:]), **{n: int(v) for n, v in zip(names, f[1:])}})
        return pd.DataFrame(rows).drop(columns=["legacy"]).set_index("cpu")

    @property
    def df_schedstat_domains(self) -> pd.DataFrame:
        """The ``domainN`` lines of /proc/schedstat: ``cpu``, ``domain``,
        ``name``, ``span`` and the counters as ``f0`` .. ``fN`` in file order
        (docs/formats.md has their meaning)."""
        rows = []
        cpu = -1
        for line in (self.out / "schedstat").read_text().splitlines():
            f = line.split()
            if line.startswith("cpu"):
                cpu = int(f[0][3:])
            elif line.startswith("domain"):
                rows.append({"cpu": cpu, "domain": int(f[0][6:]), "name": f[1], "span": f[2], **{f"f{i}": int(v) for i, v in enumerate(f[3:])}})
        return pd.DataFrame(rows)

    @property
    def df_cpu_stat(self) -> pd.DataFrame:
        """Each task group's cpu.stat (cgroup v2 names), indexed by ``path``;
        empty when the run has no groups."""
        rows = [{"path": g["path"], **g["cpu_stat"]} for g in self.summary.get("groups", [])]
        if not rows:
            return pd.DataFrame(index=pd.Index([], name="path"))
        return pd.DataFrame(rows).set_index("path")

    @property
    def df_profile(self) -> pd.DataFrame:
        """CPU time of all CPUs by kernel path (the ``profile`` file):
        index ``path`` (``task``, ``idle``, ``context_switch``, ...),
        columns ``time`` (s) and ``share`` (of the total)."""
        p = self.summary["profile"]
        rows = [("task", p["task_ns"]), ("idle", p["idle_ns"])] + list(p["paths_ns"].items())
        df = pd.DataFrame(rows, columns=["path", "ns"])
        total = df["ns"].sum() or 1
        df["time"] = df["ns"] / 1e9
        df["share"] = df["ns"] / total
        return df.drop(columns=["ns"]).set_index("path")

    # -- trace ----------------------------------------------------------------
    def _trace_events(self) -> pd.DataFrame:
        if self._events is None:
            f = self.out / "trace.txt"
            if not f.exists():
                raise SchedlabError(f"{self.out}: no trace.txt (run with trace=True)")
            rows = []
            with open(f) as fh:
                for line in fh:
                    if line.startswith("#"):
                        continue
                    m = _TRACE_LINE.match(line.rstrip("\n"))
                    if m:
                        rows.append((float(m["ts"]), int(m["cpu"]), int(m["pid"]), m["comm"].strip(), m["event"], m["body"]))
            self._events = pd.DataFrame(rows, columns=["Time", "__cpu", "__pid", "__comm", "event", "body"])
        return self._events

    def df_event(self, name: str) -> pd.DataFrame:
        """The trace events named NAME (``sched_switch``, ``sched_wakeup``,
        ``cpu_idle``, ...), as LISA's ``trace.df_event``: index ``Time``
        (s), columns ``__cpu``, ``__pid``, ``__comm`` and one per field of
        the event (numbers where every value is a number). Needs the trace."""
        ev = self._trace_events()
        sel = ev[ev["event"] == name]
        fields = [dict(_FIELD.findall(b)) for b in sel["body"]]
        df = pd.DataFrame(fields, index=sel.index)
        for c in df.columns:
            conv = pd.to_numeric(df[c], errors="coerce")
            if conv.notna().all():
                df[c] = conv
        out = pd.concat([sel[["Time", "__cpu", "__pid", "__comm"]], df], axis=1)
        if out.empty:
            out = pd.DataFrame(columns=["Time", "__cpu", "__pid", "__comm"])
        return out.set_index("Time")

    def to_lisa(self) -> Any:
        """The run's trace.dat as a LISA ``Trace`` (needs ``lisa-linux``
        installed and a run with ``trace=True``)."""
        try:
            from lisa.trace import Trace  # type: ignore
        except ImportError as e:  # pragma: no cover - depends on the host
            raise ImportError("to_lisa() needs LISA: pip install lisa-linux") from e
        dat = self.out / "trace.dat"
        if not dat.exists():
            raise SchedlabError(f"{self.out}: no trace.dat (run with trace=True)")
        return Trace(str(dat))


def run(
    workload: Workload,
    machine: str = "vm-2cpu",
    kernel: Optional[str] = None,
    features: Union[None, str, Iterable[str], Mapping[str, Any]] = None,
    sysctl: Union[None, str, Iterable[str], Mapping[str, Any]] = None,
    seed: int = 1,
    duration: Union[None, str, float] = None,
    *,
    out: Union[None, str, "os.PathLike[str]"] = None,
    trace: bool = True,
    hz: Optional[int] = None,
    preempt: Optional[str] = None,
    cgroup: Sequence[str] = (),
    check: bool = False,
) -> RunResult:
    """Simulates WORKLOAD and returns a :class:`RunResult`.

    WORKLOAD is a path to an rt-app JSON file, a generator spec string
    (``"hackbench:groups=2,loops=100"``, ``"oltp:workers=16"``) or an rt-app
    document as a dict. The other arguments are ``schedlab run``'s flags:
    MACHINE a preset or ``sysfs:DIR``; KERNEL a kernel variant
    (``--kernel``); FEATURES a ``--features`` string, a list of switches or
    a dict ``{"STEAL": True, "LB_SERIALIZE": "off"}``; SYSCTL a dict or
    ``NAME=VALUE`` items (one ``--sysctl`` each); DURATION ``"2s"`` or
    seconds. OUT is the output directory (default: a temporary directory
    removed with the returned object; give OUT to keep the files); TRACE also writes trace.txt/trace.dat/trace.pftrace
    (needed by :meth:`RunResult.df_event`, ``df_task_states``, ``to_lisa``).

    Raises :class:`SchedlabError` with the command line's one-line message
    when the arguments or the workload are wrong.
    """
    tmp = None
    if out is None:
        # Removed with the RunResult (its data frames read the files).
        tmp = tempfile.TemporaryDirectory(prefix="schedlab-run-")
        outp = Path(tmp.name)
        target = outp / "run"
    else:
        target = Path(out)
        outp = target.parent
        outp.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="schedlab-wl-") as wl:
        w = _workload_arg(workload, Path(wl) if isinstance(workload, Mapping) else outp)
        argv = ["run", w, *_sim_flags(machine, kernel, features, sysctl, seed, duration, hz, preempt, cgroup)]
        argv += ["--out", str(target), "--force", "--quiet"]
        if trace:
            argv.append("--trace")
        if check:
            argv.append("--check")
        if not cli(*argv):
            raise SchedlabError(f"{w}: check failed: a model invariant broke (see stderr)")
    r = RunResult(target, ["schedlab", *argv])
    r._tmp = tmp
    return r


def compare(
    workload: Workload,
    new: Union[str, Iterable[str], Mapping[str, Any]],
    base: Union[None, str, Iterable[str], Mapping[str, Any]] = None,
    runs: int = 5,
    machine: str = "vm-2cpu",
    kernel: Optional[str] = None,
    sysctl: Union[None, str, Iterable[str], Mapping[str, Any]] = None,
    seed: int = 1,
    duration: Union[None, str, float] = None,
    *,
    per_task: Union[bool, str] = False,
    show: bool = False,
) -> pd.DataFrame:
    """``schedlab compare``: RUNS runs per side (seeds SEED..SEED+RUNS-1),
    features BASE against NEW, as the mmtests table: one row per
    (statistic, metric), a column per side with the value and a
    ``<side>_delta_pct`` column (mmtests' percentage, positive = better),
    plus ``unit``, ``better`` and ``significant``. The metrics are the
    run-wide ones (the workload's own benchmark figures first); PER_TASK
    True (or ``"names"``) adds rows per task name, ``"threads"`` per
    thread (``--per-task``). The whole JSON report is in
    ``df.attrs["report"]``. SHOW also prints the table as the command line
    does; nothing is left in the temporary directory."""
    with tempfile.TemporaryDirectory(prefix="schedlab-compare-") as tmp:
        scratch = Path(tmp)
        w = _workload_arg(workload, scratch)
        j = scratch / "compare.json"
        argv = ["compare", w, *_sim_flags(machine, kernel, None, sysctl, seed, duration, None, None, ())]
        argv += ["--base", _features_arg(base) or "", "--new", _features_arg(new) or "", "--runs", str(runs), "--json", str(j)]
        if per_task is True:
            argv.append("--per-task")
        elif per_task:
            argv.append(f"--per-task={per_task}")
        if not show:
            argv.append("--quiet")
        cli(*argv)
        report = json.loads(j.read_text())
    rows = []
    for m in report["metrics"]:
        stats = list(m["variants"][0]["stats"].keys())
        for st in stats:
            row: Dict[str, Any] = {"stat": st, "metric": m["name"], "unit": m.get("unit"), "better": m.get("better")}
            for v in m["variants"]:
                row[v["variant"]] = v["stats"].get(st)
                row[f"{v['variant']}_delta_pct"] = v["delta_pct"].get(st)
            row["significant"] = any(v.get("significant") for v in m["variants"][1:])
            rows.append(row)
    df = pd.DataFrame(rows).set_index(["stat", "metric"])
    df.attrs["report"] = report
    return df

"""Sweeps and Monte-Carlo A/B screening, on local cores or on Ray.

Both use the engines of ``schedlab sweep`` and ``schedlab montecarlo``
(the schedlab-lab library): the same points, ids, rows and Parquet
dataset. The local backend *is* the command line's runner (threads in this
process, the GIL released);
the Ray backend runs each unfinished point as one Ray task (``num_cpus=1``)
on whatever cluster ``ray.init`` reaches, records each row on the driver
as it arrives (so killing the driver loses only the points in flight), and
then writes the dataset with the same writer.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _native

SchedlabError = _native.SchedlabError

Spec = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def _load_spec(spec: Spec) -> tuple:
    """(spec dict, label for errors, directory relative paths are in)."""
    if isinstance(spec, Mapping):
        return dict(spec), "spec", Path.cwd()
    p = Path(spec)
    try:
        text = p.read_text()
    except OSError as e:
        raise SchedlabError(f"{p}: {e.strerror}") from None
    if p.suffix == ".json":
        d = json.loads(text)
    else:
        try:
            import tomllib  # type: ignore  # Python >= 3.11
        except ImportError:  # pragma: no cover
            import tomli as tomllib  # type: ignore
        try:
            d = tomllib.loads(text)
        except Exception as e:  # noqa: BLE001 - parse errors as one line
            raise SchedlabError(f"{p}: {e}") from None
    return d, str(p), p.parent


def _absolute_workloads(d: Dict[str, Any], base: Path) -> Dict[str, Any]:
    """Workload paths that exist relative to BASE become absolute, so Ray
    workers (another working directory) find them."""
    ws = d.get("workloads")
    if isinstance(ws, list):
        out = []
        for w in ws:
            if isinstance(w, str) and (base / w).is_file():
                w = str((base / w).resolve())
            out.append(w)
        d = {**d, "workloads": out}
    return d


def read_dataset(path: Union[str, "os.PathLike[str]"]) -> pd.DataFrame:
    """A sweep's Parquet dataset (``DIR/dataset`` or the sweep directory) as
    one DataFrame, rows in plan order (``index``), partition columns as
    strings."""
    import pyarrow.dataset as ds

    p = Path(path)
    if (p / "dataset").is_dir():
        p = p / "dataset"
    if not p.exists():
        return pd.DataFrame()
    t = ds.dataset(str(p), format="parquet", partitioning="hive").to_table()
    df = t.to_pandas()
    if "index" in df.columns:
        df = df.sort_values("index", kind="stable").reset_index(drop=True)
    return df


class SweepResult:
    """A finished sweep: :attr:`root` (the sweep directory), :attr:`df` (the
    dataset, one row per point, summary metrics as columns), :attr:`counts`
    (total, skipped, ran, failed) and :meth:`run_dir`."""

    def __init__(self, root: Path, counts: Dict[str, Any]):
        self.root = Path(root)
        self.counts = counts
        self.dataset = self.root / "dataset"
        self.df = read_dataset(self.dataset)

    def run_dir(self, point_id: str) -> Path:
        """The output directory of a point (``schedlab run --out``)."""
        return self.root / "runs" / point_id

    def __repr__(self) -> str:
        return f"<schedlab.SweepResult {self.root}: {self.counts}>"


def _run_points(
    root: Path,
    points: List[Dict[str, Any]],
    partition_by: List[str],
    backend: str,
    jobs: Optional[int],
    progress: bool,
    ray_address: Optional[str],
) -> Dict[str, Any]:
    pj = json.dumps(points)
    root.mkdir(parents=True, exist_ok=True)
    if backend == "local":
        return json.loads(_native.run_local(str(root), pj, partition_by, jobs or (os.cpu_count() or 1), progress))
    if backend != "ray":
        raise SchedlabError(f'backend "{backend}": "local" or "ray"')
    try:
        import ray  # type: ignore
    except ImportError as e:
        raise ImportError('backend="ray" needs Ray: pip install "ray"') from e
    if not ray.is_initialized():
        ray.init(address=ray_address)
    _native.save_plan(str(root), pj, partition_by)
    todo = set(_native.unfinished(str(root), pj))
    pending = [p for p in points if p["id"] in todo]
    remote = ray.remote(num_cpus=1)(_ray_point)
    cwd = os.getcwd()
    refs = [remote.remote(json.dumps(p), str(root), cwd) for p in pending]
    failed = 0
    bar = None
    if progress:
        try:
            from tqdm import tqdm  # type: ignore

            bar = tqdm(total=len(refs), desc="sweep (ray)")
        except ImportError:
            bar = None
    while refs:
        done, refs = ray.wait(refs, num_returns=1)
        for r in done:
            row = ray.get(r)
            _native.save_row(str(root), row)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    dataset = _native.write_dataset(str(root), pj, partition_by)
    df = read_dataset(dataset)
    if not df.empty:
        failed = int((df["status"] != "ok").sum())
    return {"total": len(points), "skipped": len(points) - len(pending), "ran": len(pending), "failed": failed, "dataset": dataset}


def _ray_point(point_json: str, root: str, cwd: str) -> str:
    """One point, inside a Ray worker: the run directory is written under
    ROOT on the worker's node; the row goes back to the driver."""
    from schedlab import _native as native

    if os.path.isdir(cwd):
        os.chdir(cwd)
    return native.run_point(point_json, root)


def sweep(
    spec: Spec,
    backend: str = "local",
    out: Union[None, str, "os.PathLike[str]"] = None,
    jobs: Optional[int] = None,
    progress: bool = False,
    ray_address: Optional[str] = None,
) -> SweepResult:
    """Runs a sweep: the cross product of the spec's ``machines``,
    ``kernels``, ``features``, ``sysctls``, ``workloads`` and ``seeds``
    (plus ``duration``, ``partition_by``, ``out``), as ``schedlab sweep``.

    SPEC is a TOML/JSON file or a dict (workloads may be rt-app dicts).
    BACKEND ``"local"`` runs JOBS simulations at a time in this process;
    ``"ray"`` runs one Ray task per point on the cluster ``ray.init``
    reaches (``ray_address``, or an already initialised Ray). OUT is the
    sweep directory (default: the spec's ``out``, else a temporary
    directory removed with the returned object). Finished points in it are skipped, so running again resumes
    an interrupted sweep; a failed point is a row with status ``"error"``.
    """
    d, label, base = _load_spec(spec)
    d = _absolute_workloads(d, base)
    plan = json.loads(_native.sweep_plan(json.dumps(d), label))
    tmp = None
    if out is None and plan.get("out"):
        out = plan["out"]
    elif out is None:
        # Removed with the SweepResult.
        tmp = tempfile.TemporaryDirectory(prefix="schedlab-sweep-")
        out = tmp.name
    root = Path(out)
    counts = _run_points(root, plan["points"], plan["partition_by"], backend, jobs, progress, ray_address)
    r = SweepResult(root, counts)
    r._tmp = tmp
    return r


class MonteCarloResult:
    """A finished screening: :attr:`findings` (one row per scenario and
    metric where the sides differ beyond noise, with ``verdict`` better,
    worse or error), :attr:`runs` (the dataset of every run) and
    :attr:`root`."""

    def __init__(self, root: Path, findings: List[Dict[str, Any]], counts: Dict[str, Any]):
        self.root = Path(root)
        self.counts = counts
        cols = ["machine", "scenario", "metric", "base_mean", "new_mean", "diff", "rel", "t", "df", "p", "n_base", "n_new", "verdict", "error"]
        self.findings = pd.DataFrame(findings, columns=cols)
        self.runs = read_dataset(self.root)

    def scenario(self, machine: str, index: int) -> str:
        """The rt-app text of a scenario (json-c dialect: it opens with a
        comment naming its task kinds)."""
        row = self.runs[(self.runs["machine"] == machine) & (self.runs["scenario"] == str(index))].iloc[0]
        return (self.root / "runs" / f"{row['point_id']}.workload.json").read_text()

    def __repr__(self) -> str:
        return f"<schedlab.MonteCarloResult {self.root}: {len(self.findings)} findings, {self.counts}>"


def montecarlo(
    new: str,
    base: str = "",
    scenarios: int = 10,
    machines: Sequence[str] = ("vm-2cpu",),
    seeds: int = 3,
    seed: int = 1,
    duration: Union[str, float] = "1s",
    alpha: float = 0.05,
    rel: float = 0.05,
    backend: str = "local",
    out: Union[None, str, "os.PathLike[str]"] = None,
    jobs: Optional[int] = None,
    progress: bool = False,
    ray_address: Optional[str] = None,
) -> MonteCarloResult:
    """Monte-Carlo A/B screening, as ``schedlab montecarlo``: SCENARIOS
    seeded random workloads per machine (periodic, bursty, hackbench-like,
    OLTP-like and schbench-like tasks; random nice, policies, affinities,
    groups with quotas), features BASE and NEW each over SEEDS seeds.
    Reports every scenario and metric whose means differ by more than the
    metric's absolute threshold, by more than REL relatively, and with
    Welch's two-sided p below ALPHA. Backends as :func:`sweep`."""
    if isinstance(duration, (int, float)):
        duration = f"{duration}s"
    plan = json.loads(_native.montecarlo_plan(base, new, scenarios, list(machines), seeds, seed, duration))
    # Without OUT: a temporary directory removed with the result.
    tmp = None if out is not None else tempfile.TemporaryDirectory(prefix="schedlab-montecarlo-")
    root = Path(out) if out is not None else Path(tmp.name)
    counts = _run_points(root, plan["points"], plan["partition_by"], backend, jobs, progress, ray_address)
    findings = json.loads(_native.montecarlo_findings(str(root), json.dumps(plan["points"]), alpha, rel))
    (root / "findings.json").write_text(json.dumps(findings, indent=2))
    r = MonteCarloResult(root, findings, counts)
    r._tmp = tmp
    return r

"""schedlab.sweep: the CLI verb and the Python backends give the same
dataset; Ray on a real local instance; resume after killing the driver."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import schedlab

SPEC = {
    "machines": ["vm-2cpu", "a7-octa"],
    "features": ["", "STEAL"],
    "workloads": ["hackbench:groups=1,loops=20"],
    "seeds": [1, 2],
    "duration": "300ms",
}


def _parquet_files(d: Path) -> dict:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*.parquet"))}


def _summary_metrics(s: dict) -> dict:
    """A row's metrics recomputed from a single run's summary.json."""
    t, c = s["tasks"], s["cpus"]
    return {
        "duration_ns": s["duration_ns"],
        "events": s["events"],
        "throughput_per_s": s["throughput_per_s"],
        "runtime_ns": sum(x["runtime_ns"] for x in t),
        "wait_ns": sum(x["wait_ns"] for x in t),
        "switches": sum(x["switches"] for x in t),
        "migrations": sum(x["migrations"] for x in t),
        "wakeups": sum(x["wakeups"] for x in t),
        "loops": sum(x["loops"] for x in t),
        "busy_ns": sum(x["busy_ns"] for x in c),
        "idle_ns": sum(x["idle_ns"] for x in c),
        "wasted_idle_ns": s["wasted_idle_ns"],
        "workload_time_s": s.get("workload_time_s"),
    }


def test_cli_verb_and_python_local_write_the_same_dataset(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        'machines = ["vm-2cpu", "a7-octa"]\nfeatures = ["", "STEAL"]\n'
        'workloads = ["hackbench:groups=1,loops=20"]\nseeds = [1, 2]\nduration = "300ms"\n'
    )
    assert schedlab.cli("sweep", str(spec), "--out", str(tmp_path / "cli"), "--quiet")
    res = schedlab.sweep(SPEC, out=tmp_path / "py", jobs=2)
    assert res.counts["ran"] == 8 and res.counts["failed"] == 0
    a, b = _parquet_files(tmp_path / "cli" / "dataset"), _parquet_files(tmp_path / "py" / "dataset")
    assert sorted(a) == ["machine=a7-octa/kernel=default/part-0.parquet", "machine=vm-2cpu/kernel=default/part-0.parquet"]
    assert a == b
    df = res.df
    assert len(df) == 8 and df["point_id"].is_unique
    assert set(df["status"]) == {"ok"}
    # Each row's out_dir is that run's output directory.
    for _, row in df.iterrows():
        s = json.loads((res.root / row["out_dir"] / "summary.json").read_text())
        assert s["events"] == row["events"]
    # A second invocation runs nothing and rewrites the same bytes.
    again = schedlab.sweep(SPEC, out=tmp_path / "py", jobs=2)
    assert again.counts["ran"] == 0 and again.counts["skipped"] == 8
    assert _parquet_files(tmp_path / "py" / "dataset") == b


def test_failed_points_are_rows_not_a_stop(tmp_path):
    spec = {"workloads": ["hackbench:groups=1,loops=10", str(tmp_path / "missing.json")], "seeds": 2, "duration": "100ms"}
    res = schedlab.sweep(spec, out=tmp_path / "f")
    df = res.df
    assert len(df) == 4
    bad = df[df["status"] == "error"]
    assert len(bad) == 2
    assert (bad["error"] == f"{tmp_path / 'missing.json'}: cannot read: No such file or directory (os error 2)").all()
    assert bad["events"].isna().all()
    assert (df[df["status"] == "ok"]["events"] > 0).all()


def test_bad_spec_is_one_line(tmp_path):
    with pytest.raises(schedlab.SchedlabError, match=r'^spec: key "machine": unknown'):
        schedlab.sweep({"machine": ["x"], "workloads": ["w"]}, out=tmp_path / "b")
    bad = tmp_path / "bad.toml"
    bad.write_text('workloads = ["x"]\nseeds = "many"\n')
    with pytest.raises(schedlab.SchedlabError) as e:
        schedlab.cli("sweep", str(bad), "--out", str(tmp_path / "o"))
    assert str(e.value).startswith(f"{bad}: key \"seeds\"") and "\n" not in str(e.value)
    assert not (tmp_path / "o").exists()


def test_ray_sweep_matches_single_runs(tmp_path):
    ray = pytest.importorskip("ray")
    spec = dict(SPEC, seeds=[1, 2, 3])  # 12 points
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        assert ray.cluster_resources().get("CPU") == 2
        res = schedlab.sweep(spec, backend="ray", out=tmp_path / "ray")
    finally:
        ray.shutdown()
    df = res.df
    assert len(df) == 12 and res.counts["ran"] == 12 and df["point_id"].is_unique
    for _, row in df.iterrows():
        single = schedlab.run(
            row["workload"], machine=row["machine"], features=row["features"] or None,
            seed=int(row["seed"]), duration=row["duration"], trace=False,
            out=tmp_path / "single" / row["point_id"],
        )
        want = _summary_metrics(single.summary)
        for k, v in want.items():
            got = row[k]
            if v is None:
                assert pd.isna(got), k
            else:
                assert got == v, (row["point_id"], k, got, v)
    # And the Ray dataset is byte for byte the local one.
    local = schedlab.sweep(spec, out=tmp_path / "local", jobs=2)
    assert _parquet_files(tmp_path / "ray" / "dataset") == _parquet_files(local.dataset)


def test_killed_driver_resumes_without_lost_or_duplicated_rows(tmp_path):
    spec = tmp_path / "k.toml"
    spec.write_text(
        'machines = ["vm-2cpu", "a7-octa"]\nfeatures = ["", "STEAL"]\n'
        'workloads = ["hackbench:groups=2,loops=200"]\nseeds = 6\nduration = "1s"\n'
    )
    out = tmp_path / "k.sweep"
    runs = out / "runs"
    p = subprocess.Popen([sys.executable, "-m", "schedlab", "sweep", str(spec), "--out", str(out), "-j", "1", "--quiet"])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        if runs.is_dir() and len(list(runs.glob("*.row.json"))) >= 3:
            break
        time.sleep(0.02)
    assert p.poll() is None, "the sweep ended before it could be killed: make its points longer"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    before = len(list(runs.glob("*.row.json")))
    assert 3 <= before < 24
    assert not (out / "dataset").exists()
    p = subprocess.run([sys.executable, "-m", "schedlab", "sweep", str(spec), "--out", str(out), "-j", "2"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"{before} finished before, {24 - before} run now, 0 failed" in p.stdout
    df = schedlab.read_dataset(out)
    plan = json.loads((out / "points.json").read_text())["points"]
    assert len(df) == 24 and df["point_id"].is_unique
    assert sorted(df["point_id"]) == sorted(pt["id"] for pt in plan)
    # Nothing differs from a sweep that was never interrupted.
    clean = tmp_path / "clean"
    assert schedlab.cli("sweep", str(spec), "--out", str(clean), "--quiet")
    assert _parquet_files(out / "dataset") == _parquet_files(clean / "dataset")


def test_montecarlo_cli_and_python_agree(tmp_path):
    args = dict(new="STEAL", scenarios=3, machines=["vm-2cpu"], seeds=3, duration="300ms")
    res = schedlab.montecarlo(**args, out=tmp_path / "py", jobs=2)
    assert len(res.runs) == 3 * 2 * 3 and set(res.runs["side"]) == {"base", "new"}
    f = res.findings
    assert set(f["verdict"]) <= {"better", "worse", "error"}
    ok = f[f["verdict"] != "error"]
    assert (ok["p"] < 0.05).all() and (ok["rel"].abs() >= 0.05).all()
    # Each finding is the t-test of the runs in the dataset.
    for _, x in ok.iterrows():
        runs = res.runs[res.runs["scenario"] == x["scenario"]]
        b = runs[runs["side"] == "base"][x["metric"]].tolist()
        n = runs[runs["side"] == "new"][x["metric"]].tolist()
        assert x["base_mean"] == pytest.approx(sum(b) / len(b))
        assert x["new_mean"] == pytest.approx(sum(n) / len(n))
        assert schedlab._native.welch(b, n)[2] == pytest.approx(x["p"])
    assert "kinds" not in f.columns
    assert res.scenario("vm-2cpu", 0).lstrip().startswith("{")
    assert schedlab.cli("montecarlo", "--new", "STEAL", "--scenarios", "3", "--machines", "vm-2cpu", "--seeds", "3",
                        "--duration", "300ms", "--out", str(tmp_path / "cli"), "--quiet")
    cli_f = json.loads((tmp_path / "cli" / "findings.json").read_text())
    py_f = json.loads((tmp_path / "py" / "findings.json").read_text())
    assert cli_f == py_f
    assert _parquet_files(tmp_path / "cli" / "dataset") == _parquet_files(tmp_path / "py" / "dataset")


def test_welch_against_the_t_table():
    # Means 1 and 4, variances 1: t = 3 / sqrt(2/3) = 3.674, df = 4; the
    # t table gives two-sided p = 0.0213 there (0.02 at t = 3.747).
    t, df, p = schedlab._native.welch([0.0, 1.0, 2.0], [3.0, 4.0, 5.0])
    assert t == pytest.approx(3 / (2 / 3) ** 0.5)
    assert df == pytest.approx(4.0)
    assert p == pytest.approx(0.0213, abs=2e-4)

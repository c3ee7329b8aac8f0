"""schedlab.run, its DataFrames, errors, python -m schedlab, compare."""

import gc
import json
import subprocess
import sys
import tempfile

import pandas as pd
import pytest

import schedlab


def test_run_dataframes_match_the_summary(sched_idle, tmp_path):
    r = schedlab.run(sched_idle, machine="a7-octa", duration="0.5s", seed=3, out=tmp_path / "r")
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert r.summary == s
    rt = r.df_tasks_runtime
    assert list(rt.index) == [t["pid"] for t in s["tasks"]]
    assert rt["runtime"].sum() == pytest.approx(sum(t["runtime_ns"] for t in s["tasks"]) / 1e9)
    lat = r.df_latency_wakeup
    # Every timer row of every thread, and the same mean as summary.json.
    n = sum(t["wakeup_latency_us"]["n"] for t in s["tasks"])
    assert len(lat) == n
    total = sum(t["wakeup_latency_us"]["sum"] for t in s["tasks"])
    assert lat["wakeup_latency"].sum() * 1e6 == pytest.approx(total)
    cpus = r.df_cpus
    assert len(cpus) == s["machine"]["cpus"] == len(r.df_schedstat)
    assert (cpus["utilisation"] <= 1.0).all() and (cpus["utilisation"] > 0).any()
    assert list(r.df_schedstat["sched_count"]) == [c["sched_count"] for c in s["cpus"]]
    prof = r.df_profile
    assert prof.loc["task", "time"] == pytest.approx(s["profile"]["task_ns"] / 1e9)
    assert prof["share"].sum() == pytest.approx(1.0)
    assert r.df_cpu_stat.empty  # no groups in this workload
    # The trace: every switch-in of a task is an "A" state, and the
    # switches counted in summary.json are the trace's.
    sw = r.df_event("sched_switch")
    assert len(sw) > 0 and {"prev_pid", "next_pid", "prev_state", "__cpu"} <= set(sw.columns)
    switches_in = sw[sw["next_pid"].isin(rt.index)].groupby("next_pid").size()
    for pid, n in switches_in.items():
        assert n == rt.loc[pid, "switches"], pid
    st = r.df_task_states
    assert set(st["curr_state"].dropna()) <= {"A", "R", "S", "D", "W", "X", "T"}
    assert (st["delta"].dropna() >= 0).all()
    assert r.df_event("no_such_event").empty


def test_run_inline_dict_and_groups(tmp_path):
    doc = {
        "taskgroups": {"/capped": {"cpu.max": "20000 100000"}},
        "tasks": {"hog": {"instance": 2, "loop": -1, "run": 10000, "taskgroup": "/capped"}},
        "global": {"duration": 1},
    }
    r = schedlab.run(doc, machine="vm-2cpu", duration=0.3, trace=False, out=tmp_path / "g")
    cs = r.df_cpu_stat
    assert list(cs.index) == ["/capped"]
    assert cs.loc["/capped", "nr_throttled"] > 0
    with pytest.raises(schedlab.SchedlabError, match="no trace.txt"):
        r.df_event("sched_switch")


def test_same_inputs_same_numbers(tmp_path):
    a = schedlab.run("hackbench:groups=1,loops=30", seed=5, trace=False, out=tmp_path / "a")
    b = schedlab.run("hackbench:groups=1,loops=30", seed=5, trace=False, out=tmp_path / "b")
    assert (tmp_path / "a" / "summary.json").read_bytes() == (tmp_path / "b" / "summary.json").read_bytes()
    pd.testing.assert_frame_equal(a.df_tasks_runtime, b.df_tasks_runtime)


def test_errors_carry_the_cli_line(tmp_path):
    with pytest.raises(schedlab.SchedlabError) as e:
        schedlab.run(str(tmp_path / "missing.json"))
    assert str(e.value) == f"{tmp_path / 'missing.json'}: cannot read: No such file or directory (os error 2)"
    with pytest.raises(schedlab.SchedlabError, match="machine"):
        schedlab.run("hackbench:groups=1", machine="no-such-machine")
    with pytest.raises(schedlab.SchedlabError, match="unknown"):
        schedlab.run("hackbench:groups=1", features="NO_SUCH_FEATURE")
    # The binary's own line, byte for byte.
    p = subprocess.run([sys.executable, "-m", "schedlab", "run", str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr == f"schedlab: error: {tmp_path / 'missing.json'}: cannot read: No such file or directory (os error 2)\n"


def test_kernel_and_sysctl_reach_the_cli(tmp_path):
    """kernel= and sysctl= become the CLI's --kernel/--sysctl: the summary
    records the release and the tunable in effect; a bad release is the
    CLI's own one-line error."""
    r = schedlab.run("hackbench:groups=1,loops=10", kernel="5.4", sysctl={"sched_migration_cost_ns": 500000}, trace=False, out=tmp_path / "k")
    assert r.summary["kernel"] == "5.4"
    assert r.summary["tunables"]["migration_cost_ns"] == 500000
    with pytest.raises(schedlab.SchedlabError) as e:
        schedlab.run("hackbench:groups=1,loops=10", kernel="default", trace=False)
    assert str(e.value).startswith("--kernel: unknown release 'default'")


def test_python_m_schedlab_is_the_cli():
    p = subprocess.run([sys.executable, "-m", "schedlab", "features"], capture_output=True, text=True)
    assert p.returncode == 0 and "STEAL" in p.stdout
    p = subprocess.run([sys.executable, "-m", "schedlab", "run"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.startswith("schedlab: error: ") and p.stderr.count("\n") == 1


def test_compare_is_the_mmtests_table():
    df = schedlab.compare("hackbench:groups=1,loops=20", new="STEAL", runs=3)
    assert ("amean", "time_s") in df.index
    assert {"base", "new", "new_delta_pct", "better"} <= set(df.columns)
    rep = df.attrs["report"]
    m = next(m for m in rep["metrics"] if m["name"] == "time_s")
    assert df.loc[("amean", "time_s"), "new"] == m["variants"][1]["stats"]["amean"]
    with pytest.raises(schedlab.SchedlabError, match="unknown"):
        schedlab.compare("hackbench:groups=1", new="NOPE", runs=2)


def test_compare_has_the_benchmark_figures_and_per_task_rows_on_request():
    hb = "hackbench:groups=2,loops=10"
    df = schedlab.compare(hb, new="STEAL", runs=2)
    metrics = set(df.index.get_level_values("metric"))
    assert {"time_s", "loops_per_s"} <= metrics
    assert not any(m.startswith("hb-") for m in metrics)
    df = schedlab.compare(hb, new="STEAL", runs=2, per_task=True)
    assert ("amean", "hb-r0.runtime_ms") in df.index
    df = schedlab.compare(hb, new="STEAL", runs=2, per_task="threads")
    assert ("amean", "hb-r0-0.runtime_ms") in df.index
    sb = schedlab.compare("schbench:m=1,t=2,r=1", new="STEAL", runs=2, machine="a7-octa")
    assert sb.loc[("amean", "wakeup_p99_us"), "better"] == "lower"
    assert sb.loc[("amean", "rps_avg"), "better"] == "higher"


def test_calls_leave_no_temporary_folder_and_compare_is_quiet(capfd, monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    df = schedlab.compare("hackbench:groups=1,loops=10", new="STEAL", runs=2)
    assert ("amean", "time_s") in df.index
    assert "AMean" not in capfd.readouterr().out
    schedlab.compare("hackbench:groups=1,loops=10", new="STEAL", runs=2, show=True)
    assert "AMean" in capfd.readouterr().out
    assert list(tmp_path.iterdir()) == []
    # A run without OUT lives as long as its result; an rt-app dict's
    # file is gone once the run is done.
    doc = {"tasks": {"t": {"loop": 5, "run": 1000, "sleep": 1000}}}
    r = schedlab.run(doc, trace=False)
    out = r.out
    assert (out / "summary.json").is_file()
    assert [p.name.split("-")[1] for p in tmp_path.iterdir()] == ["run"]
    del r
    gc.collect()
    assert not out.exists() and list(tmp_path.iterdir()) == []
    kept = schedlab.run("hackbench:groups=1,loops=5", trace=False, out=tmp_path / "keep" / "run")
    del kept
    gc.collect()
    assert (tmp_path / "keep" / "run" / "summary.json").is_file()


def test_example_script_saves_a_figure(repo, tmp_path):
    pytest.importorskip("matplotlib")
    p = subprocess.run(
        [sys.executable, str(repo / "examples" / "sweep_plot.py"), "--out", str(tmp_path / "demo")],
        capture_output=True, text=True,
    )
    assert p.returncode == 0, p.stderr
    png = tmp_path / "demo" / "sweep.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "24 runs" in p.stdout

"""Tests of run.py's case reader and verdicts (python3 -m unittest, from
experiments/published/). Broken case files must give one CaseError line
naming the file and the key; the verdict logic is checked on hand-made
runs."""
import os
import tempfile
import textwrap
import unittest

import run

GOOD = """
id = "x"
[source]
kind = "posting"
[machine]
name = "a7-octa"
[change]
base = { kernel = "6.6" }
new = { kernel = "6.12" }
[workload]
spec = "hackbench:groups=2,loops=10"
[[figure]]
metric = "time_s"
headline = true
base = 1.0
new = 0.9
"""


def load(text):
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(textwrap.dedent(text))
    try:
        return run.load_case(f.name)
    finally:
        os.unlink(f.name)


class CaseReader(unittest.TestCase):
    def test_good_case_loads(self):
        c = load(GOOD)
        self.assertEqual(c["id"], "x")
        self.assertEqual(run.side_args(c, "new")[:4], ["--machine", "a7-octa", "--kernel", "6.12"])

    def assertRefused(self, text, words):
        with self.assertRaises(run.CaseError) as e:
            load(text)
        msg = str(e.exception)
        self.assertNotIn("\n", msg)
        self.assertIn(".toml", msg)
        for w in words:
            self.assertIn(w, msg)

    def test_broken_toml(self):
        self.assertRefused(GOOD.replace('id = "x"', 'id = "x'), ["line"])

    def test_missing_table(self):
        self.assertRefused(GOOD.replace("[workload]\nspec = \"hackbench:groups=2,loops=10\"\n", ""), ["[workload]"])

    def test_missing_key(self):
        self.assertRefused(GOOD.replace('name = "a7-octa"', ""), ["machine.name"])

    def test_unknown_side_key(self):
        self.assertRefused(GOOD.replace('new = { kernel = "6.12" }', 'new = { kernal = "6.12" }'), ["change.new.kernal"])

    def test_unknown_metric(self):
        self.assertRefused(GOOD.replace('metric = "time_s"', 'metric = "speed"'), ["speed"])

    def test_no_headline(self):
        self.assertRefused(GOOD.replace("headline = true\n", ""), ["headline"])

    def test_figure_without_value(self):
        self.assertRefused(GOOD.replace("base = 1.0\nnew = 0.9\n", ""), ["no value"])


class Verdicts(unittest.TestCase):
    def case(self, **fig):
        c = load(GOOD)
        c["figure"][0].update(fig)
        return c

    def test_clear_agreement(self):
        runs = {"base": [{"time_s": x} for x in (1.00, 1.01, 0.99, 1.00)],
                "new": [{"time_s": x} for x in (0.90, 0.91, 0.89, 0.90)]}
        v = run.verdict(self.case(), runs)
        self.assertAlmostEqual(v["model"], -10.0, places=6)
        self.assertTrue(v["significant"] and v["sign_ok"] and v["size_ok"])
        self.assertAlmostEqual(v["size_ratio"], 1.0, places=6)

    def test_noise_is_no_change(self):
        runs = {"base": [{"time_s": x} for x in (1.0, 1.2, 0.8)],
                "new": [{"time_s": x} for x in (1.1, 0.9, 1.05)]}
        v = run.verdict(self.case(), runs)
        self.assertFalse(v["significant"])
        self.assertEqual(v["model_sign"], 0)
        self.assertFalse(v["sign_ok"])  # the publication saw -10 %
        # +2.9 % with a 95 % interval of +-~26 %: wider than the -10 %.
        self.assertEqual(v["miss"], "noise")
        self.assertGreater(v["ci_pct"], 10)

    def test_published_no_change_agrees_with_noise(self):
        runs = {"base": [{"time_s": x} for x in (1.0, 1.2, 0.8)],
                "new": [{"time_s": x} for x in (1.1, 0.9, 1.05)]}
        v = run.verdict(self.case(significant=False), runs)
        self.assertTrue(v["sign_ok"] and v["size_ok"])

    def test_size_outside_2x(self):
        runs = {"base": [{"time_s": x} for x in (1.00, 1.001, 0.999)],
                "new": [{"time_s": x} for x in (0.97, 0.971, 0.969)]}
        v = run.verdict(self.case(), runs)
        self.assertTrue(v["sign_ok"])
        self.assertFalse(v["size_ok"])  # -3 % against -10 %
        self.assertEqual(v["miss"], "size")

    def test_miss_kinds(self):
        same = [{"time_s": x} for x in (1.0, 1.1, 0.9)]
        v = run.verdict(self.case(), {"base": same, "new": same})
        self.assertEqual(v["miss"], "no lever")
        # A tight interval around no change: the model has no -10 % effect.
        v = run.verdict(self.case(), {"base": [{"time_s": x} for x in (1.0, 1.01, 0.99)],
                                      "new": [{"time_s": x} for x in (1.0, 1.011, 0.991)]})
        self.assertEqual(v["miss"], "no effect")
        # Significant and of the other sign.
        v = run.verdict(self.case(), {"base": [{"time_s": x} for x in (1.0, 1.001, 0.999)],
                                      "new": [{"time_s": x} for x in (1.1, 1.101, 1.099)]})
        self.assertEqual(v["miss"], "opposite")
        # Agreement is no miss.
        v = run.verdict(self.case(), {"base": [{"time_s": x} for x in (1.0, 1.001, 0.999)],
                                      "new": [{"time_s": x} for x in (0.9, 0.901, 0.899)]})
        self.assertIsNone(v["miss"])

    def test_welch_matches_a_hand_computation(self):
        # means 2 and 5, variances 1 and 1, n 3 and 3: t = 3 / sqrt(2/3) = 3.674, df = 4.
        t, df = run.welch([1, 2, 3], [4, 5, 6])
        self.assertAlmostEqual(t, 3.6742346, places=6)
        self.assertAlmostEqual(df, 4.0, places=9)
        self.assertAlmostEqual(run.t_crit(4), 2.776, places=3)

    def test_counters_window_is_the_middle_half_of_the_working_period(self):
        # 1 ms rows to 100 ms; the working period is the last 80 ms
        # (release at 20 ms), so the window is 40 -> 80 ms. Switches grow
        # 10 per ms before 60 ms and 30 per ms after; 2 CPUs, idle 1/4.
        rows = []
        for i in range(101):
            t = i * 1_000_000
            sw = 10 * min(i, 60) + 30 * max(0, i - 60)
            rows.append({"time_ns": t, "switches": sw, "involuntary_switches": sw // 10,
                         "migrations": i, "helper_switches": 1, "sched_goidle": 2 * i,
                         "busy_ns": 3 * t // 2, "idle_ns": t // 2, "sched_overhead_ns": 0})
        w = run.counters_window(rows, {"duration_ns": 100_000_000}, 80_000)
        self.assertAlmostEqual(w["dt"], 0.040)
        self.assertEqual(w["sw"], 200 + 600)
        self.assertEqual(w["cs"], 800 + 80)
        self.assertEqual(w["mig"], 40)
        self.assertEqual((w["busy"], w["idle"]), (60_000_000, 20_000_000))
        short = {"raw": {"dur": 0.05, "cs": 0, "inv": 0, "sw": 0, "mig": 0, "busy": 0,
                         "idle": 0, "nonidle": 0, "loops": 0, "wt": None}}
        long_ = {"raw": dict(short["raw"], dur=0.1, window=w)}
        f = run.steady(short, long_)
        self.assertAlmostEqual(f["cs_per_s"], 880 / 0.040)
        self.assertAlmostEqual(f["idle_pct"], 25.0)
        # Without the counters' rows, the difference of the two lengths.
        self.assertIsNone(run.counters_window(None, {"duration_ns": 1}, None))

    def test_longer_doubles_the_length(self):
        self.assertEqual(run.longer("hackbench:groups=2,loops=10", None), ("hackbench:groups=2,loops=20", None))
        self.assertEqual(run.longer("x.json", "5s"), ("x.json", "10s"))
        self.assertEqual(run.longer("oltp:", None), (None, None))


class Arguments(unittest.TestCase):
    def refused(self, *argv):
        import contextlib
        import io
        import sys
        err = io.StringIO()
        saved = sys.argv
        sys.argv = ["run.py", *argv]
        try:
            with contextlib.redirect_stderr(err):
                rc = run.main()
        finally:
            sys.argv = saved
        return rc, err.getvalue()

    def test_max_seeds_below_seeds_is_one_line_and_status_2(self):
        rc, err = self.refused("--seeds", "5", "--max-seeds", "3")
        self.assertEqual(rc, 2)
        self.assertEqual(err.count("\n"), 1)
        self.assertIn("--max-seeds >= --seeds", err)


if __name__ == "__main__":
    unittest.main()

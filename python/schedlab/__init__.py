"""schedlab: a deterministic simulator of the Linux fair-class CPU scheduler,
from Python.

- :func:`run` simulates one workload and returns a :class:`RunResult` with
  the raw summary and pandas DataFrames named after LISA's analyses
  (``df_tasks_runtime``, ``df_latency_wakeup``, ``df_task_states``,
  ``df_cpus``, ``df_schedstat``, ``df_cpu_stat``, ``df_profile``,
  ``df_event(name)``, ``to_lisa()``).
- :func:`compare` is ``schedlab compare``: the mmtests table as a DataFrame.
- :func:`sweep` runs a cross product of settings locally or on Ray into one
  Hive-partitioned Parquet dataset; :func:`montecarlo` screens a change
  over random scenarios.
- :func:`cli` runs a ``schedlab`` command line in this process (every verb
  but ``exec``, ``record`` and ``validate``, the binary's own);
  ``python -m schedlab`` is the command line.

Errors raise :class:`SchedlabError` carrying the command line's one-line
message. docs/python.md has the whole guide.
"""

from ._native import SchedlabError, __version__
from ._run import RunResult, cli, compare, run
from ._sweep import MonteCarloResult, SweepResult, montecarlo, read_dataset, sweep

__all__ = [
    "SchedlabError",
    "RunResult",
    "SweepResult",
    "MonteCarloResult",
    "run",
    "compare",
    "sweep",
    "montecarlo",
    "read_dataset",
    "cli",
    "__version__",
]

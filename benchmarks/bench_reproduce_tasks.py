"""Where ``reproduce all --scale paper`` spends its CPU, task by task (issue 9).

The pool of tasks that ``reproduce`` submits to its workers (``simulation.sweep.task_plan``
on the figures' panel jobs, ``experiments.panel_jobs``: the same merges and cuts for
``--workers`` workers, Appendix I's tuning by default at the paper scale) is run here in
this process, one task after the other, with one BLAS thread (as each Dask worker has):
CPU seconds per task, then per algorithm and size with its share of the whole.  The PAC
figure, which ``reproduce`` computes in its own process, is not a task and is not counted.

A paper-scale run takes about as much CPU as ``reproduce all`` itself (~6 minutes on the
2-core machine, one core busy).  Usage::

    python benchmarks/bench_reproduce_tasks.py [--scale paper] [--horizon T] [--runs R]
        [--tune auto|yes|no] [--workers 2] [--figures all]

prints a JSON dict: ``total_cpu_s``, ``groups`` (algorithm and size, CPU seconds, share,
tasks, repetition-rounds and microseconds per repetition-round) and ``tasks``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one BLAS thread, as a worker

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dashboard.simulation.experiments import panel_jobs
from dashboard.simulation.figures import figure_names
from dashboard.simulation.sweep import run_tasks, task_plan

#: Spec fields that name a task's size in the report.
SIZE_FIELDS = ("d", "K", "m", "reward")


def _label(unit: dict[str, Any]) -> str:
    spec = unit["spec"]
    size = ", ".join(f"{k}={spec[k]}" for k in SIZE_FIELDS if k in spec)
    return f"{unit['algorithm']} ({size})"


def run(
    figures: list[str],
    scale: str = "paper",
    horizon: int | None = None,
    runs: int | None = None,
    tune: bool | None = None,
    workers: int = 2,
) -> dict[str, Any]:
    """Time every task of ``figures``' pool as ``workers`` workers would get it."""
    jobs = panel_jobs(figures, scale, 0, horizon, runs, None, tune)
    sweeps = [job.sweep for job in jobs]
    plan = task_plan(sweeps, workers, [0] * len(sweeps))
    tasks = []
    for units, reps, _ in plan:
        start = time.process_time()
        run_tasks(units, reps)
        cpu = time.process_time() - start
        rounds = sum(u["horizon"] for u in units) * len(reps)
        tasks.append(
            {
                "task": _label(units[0]),
                "units": len(units),
                "reps": len(reps),
                "cpu_s": round(cpu, 3),
                "us_per_rep_round": round(cpu / rounds * 1e6, 3),
            }
        )
    total = sum(t["cpu_s"] for t in tasks)
    groups: dict[str, dict[str, Any]] = {}
    for t, (units, reps, _) in zip(tasks, plan):
        g = groups.setdefault(t["task"], {"cpu_s": 0.0, "tasks": 0, "rep_rounds": 0})
        g["cpu_s"] += t["cpu_s"]
        g["tasks"] += 1
        g["rep_rounds"] += sum(u["horizon"] for u in units) * len(reps)
    rows = []
    for name, g in sorted(groups.items(), key=lambda kv: -kv[1]["cpu_s"]):
        rows.append(
            {
                "group": name,
                "cpu_s": round(g["cpu_s"], 2),
                "share": round(g["cpu_s"] / total, 4) if total > 0 else 0.0,
                "tasks": g["tasks"],
                "rep_rounds": g["rep_rounds"],
                "us_per_rep_round": round(g["cpu_s"] / max(g["rep_rounds"], 1) * 1e6, 3),
            }
        )
    return {
        "figures": figures,
        "scale": scale,
        "workers": workers,
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "total_cpu_s": round(total, 2),
        "groups": rows,
        "tasks": tasks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="paper")
    parser.add_argument("--horizon", type=int, default=None)
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--tune", choices=("auto", "yes", "no"), default="auto")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--figures", default="all", help="comma-separated figure names or all")
    args = parser.parse_args()
    names = figure_names() if args.figures == "all" else args.figures.split(",")
    tune = {"auto": None, "yes": True, "no": False}[args.tune]
    out = run(names, args.scale, args.horizon, args.runs, tune, args.workers)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

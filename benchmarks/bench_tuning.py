"""Appendix I's tuning with the four values of c in one batched engine (issue 9).

``semi-regret``'s panels (paper constants, R = 10, ``--horizon`` rounds) with Appendix I's
protocol (BOSE, SP-TS and SBE at c in {1, 2, 4, 8}), their sweep tasks run in process three
ways, interleaved ``--repeats`` times (best CPU seconds of each kept):

* ``per_c``: tasks that differ only in the shift share an engine, each c on its own (the
  code before this round: ``merge_plan`` on each value of c separately);
* ``merged``: tasks that differ in the shift or c share an engine (``shared_batch.py``:
  BOSE's and SP-TS's ``per_repetition`` c, SP-TS's draws shared by the eight rows of a
  stream);
* ``cut``: as ``merged``, with the plan a 2-worker pool would run (long groups cut by
  repetitions into two pieces), run here one piece after the other: what the pieces cost
  in all against one task.

Per algorithm and size (``--per-task``), the same comparison for one group alone.  Every
way must give identical rows (regret curves and tuning choices).

Usage: ``python benchmarks/bench_tuning.py [--horizon T] [--repeats N] [--per-task]``
prints a JSON dict.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_batched's panels

from bench_batched import _semi_regret_panels

from dashboard.simulation import shared_batch, sweep
from dashboard.simulation.figures import get_figure
from dashboard.simulation.tuning import panel_job


def _jobs(horizon: int, only: tuple[str, int] | None = None) -> list[Any]:
    """semi-regret's tuned panel sweeps (``only``: one algorithm at one d)."""
    tuned = get_figure("semi-regret").tuned
    jobs = []
    for problem, spec, algs, T, runs, seed, params in _semi_regret_panels(horizon):
        if only is not None:
            if spec.get("d") != only[1]:
                continue
            algs = [only[0]]
            params = {k: v for k, v in params.items() if k.lower() == only[0].lower()}
        tune = tuple(a for a in tuned if a in algs)
        jobs.append(panel_job(problem, spec, algs, T, runs, seed, params=params, tune=tune))
    return jobs


def _per_c(tasks: Any, workers: int = 1) -> list[tuple[list[int], list[int]]]:
    """The former plan: ``merge_plan`` on the tasks of each value of c separately."""
    by_c: dict[Any, list[int]] = {}
    for i, task in enumerate(tasks):
        by_c.setdefault(repr(task[2].get("params", {}).get("c")), []).append(i)
    plan = []
    for idx in by_c.values():
        for g, reps in shared_batch.merge_plan([tasks[i] for i in idx], workers):
            plan.append(([idx[k] for k in g], reps))
    plan.sort(key=lambda entry: entry[0][0])
    return plan


def _cut(tasks: Any, workers: int = 1) -> list[tuple[list[int], list[int]]]:
    return shared_batch.merge_plan(tasks, 2)


def _rows(results: list[Any]) -> list[Any]:
    return [
        [(row.point, [a.regret.tolist() for a in row.result.results]) for row in r.rows]
        for r in results
    ]


def compare(jobs: list[Any], repeats: int) -> dict[str, Any]:
    sweeps = [job.sweep for job in jobs]
    ways = {"per_c": _per_c, "merged": shared_batch.merge_plan, "cut": _cut}
    real = sweep.merge_plan
    best = {w: float("inf") for w in ways}
    rows: dict[str, Any] = {}
    try:
        sweep.merge_plan = _per_c
        sweep.run_sweeps(sweeps, scheduler="inprocess")  # imports and caches off the clock
        for k in range(repeats):
            order = list(ways)[k % len(ways) :] + list(ways)[: k % len(ways)]
            for w in order:
                sweep.merge_plan = ways[w]
                start = time.process_time()
                res = sweep.run_sweeps(sweeps, scheduler="inprocess")
                best[w] = min(best[w], time.process_time() - start)
                rows[w] = _rows(res)
    finally:
        sweep.merge_plan = real
    return {
        "per_c_cpu_s": round(best["per_c"], 2),
        "merged_cpu_s": round(best["merged"], 2),
        "cut_cpu_s": round(best["cut"], 2),
        "speedup_merged": round(best["per_c"] / best["merged"], 2),
        "speedup_cut": round(best["per_c"] / best["cut"], 2),
        "identical": rows["per_c"] == rows["merged"] == rows["cut"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--per-task", action="store_true")
    args = parser.parse_args()
    out: dict[str, Any] = {"T": args.horizon, "R": 10}
    if args.per_task:
        for alg in ("SP-TS", "BOSE"):
            for d in (20, 5):
                out[f"{alg} d={d}"] = compare(_jobs(args.horizon, (alg, d)), args.repeats)
    else:
        out["semi-regret tuned"] = compare(_jobs(args.horizon), args.repeats)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

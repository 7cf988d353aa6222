"""Benchmark: the same sweep on a local Dask cluster of 2 worker processes vs 1 worker.

The sweep (LinUCB, a per-round baseline, and SBE on Appendix I-like instances, ``d`` and ``K``
swept, 4 repetitions) is split into tasks of one repetition each (a fraction of a second to a
second of work); both clusters run exactly the same tasks.  Cluster start-up is excluded (the
clusters are started and warmed up with one task per worker first), so the ratio is the
sweep's throughput ratio ``time(1 worker) / time(2 workers)`` (target >= 1.7 on a machine with
2 free cores).  The check that both give
the same rows number for number is part of the output.

Usage: ``python benchmarks/bench_sweep.py [--quick]`` prints a JSON dict; ``run(quick)``
returns it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np

from dashboard.simulation.engine import local_cluster
from dashboard.simulation.sweep import make_sweep, run_sweep, run_task


def _sweep(quick: bool) -> Any:
    return make_sweep(
        "semiparametric",
        ["LinUCB", "SBE"],
        horizon=2_000 if quick else 5_000,
        runs=4,
        seed=0,
        grid={"d": [3, 5], "K": [10, 20]} if quick else {"d": [3, 5, 8], "K": [10, 20, 30]},
        shift="log",
    )


def _timed(sweep: Any, n_workers: int) -> tuple[float, Any]:
    from distributed import Client

    with local_cluster(n_workers) as cluster, Client(cluster, set_as_default=False) as client:
        # warm up: every worker imports the package and runs one small task
        unit = dict(next(iter(sweep.units.values())), horizon=100)
        futs = [
            client.submit(run_task, unit, [0], pure=False, workers=[w])
            for w in client.scheduler_info()["workers"]
        ]
        client.gather(futs)
        start = time.perf_counter()
        res = run_sweep(sweep, client=client, block=1)
        return time.perf_counter() - start, res


def _same(a: Any, b: Any) -> bool:
    return all(
        np.array_equal(x.regret, y.regret) and np.array_equal(x.queries, y.queries)
        for ra, rb in zip(a.rows, b.rows)
        for x, y in zip(ra.result.results, rb.result.results)
    )


def run(quick: bool = False) -> dict[str, Any]:
    """Time the sweep on 1 and on 2 local workers; return times, ratio and the check."""
    sweep = _sweep(quick)
    t1, r1 = _timed(sweep, 1)
    t2, r2 = _timed(sweep, 2)
    tasks = r1.tasks_run
    return {
        "points": len(sweep.rows),
        "algorithms": len(sweep.algorithms),
        "runs": sweep.runs,
        "tasks": tasks,
        "cores": os.cpu_count(),
        "seconds_1_worker": round(t1, 3),
        "seconds_2_workers": round(t2, 3),
        "tasks_per_second_1_worker": round(tasks / t1, 3),
        "tasks_per_second_2_workers": round(tasks / t2, 3),
        "throughput_ratio": round(t1 / t2, 3),
        "target_ratio": 1.7,
        "identical_rows": _same(r1, r2),
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(json.dumps(run(quick=ap.parse_args().quick), indent=2))

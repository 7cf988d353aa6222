"""Benchmark: how close the linear CMAB policies get to the cost of their random numbers.

Measured side by side in one process on the Section 6 setting (``d = 20``, ``m = 3``, linear
rewards):

* **AROQ / SROQ vs the draw floor** -- one full run of ``T = 10^6`` rounds of AROQ-CMAB and of
  SROQ-CMAB, against the time to draw the ``T x m`` feedback values they consume with the same
  counter-based generator (``LinearRewards.sample`` on ``(T, m)`` index arrays built before the
  clock starts).  Target: each policy <= 3x the draw time.
* **Batched vs sequential CUCB** -- ``R = 32`` repetitions of CUCB at ``T = 2 * 10^4`` run as one
  :class:`~dashboard.algorithms.cmab.policies.cucb.BatchedCUCB` and as 32 separate
  :class:`~dashboard.algorithms.cmab.policies.cucb.CUCB` runs (which must give identical
  regrets; checked).  Target: batched throughput >= 8x sequential.

* ``--reproduce`` (issue 9, ``reproduce all --scale paper``): the paper tasks of SDCB
  (``cmab-fig4``) and OLS-UCB-C (``cmab-fig3``), R = 10, ``--reproduce-horizon`` rounds, with
  the former kernels (:mod:`former_reproduce`) and the current ones side by side in one
  process: CPU seconds, ratio, identical records required.

Usage: ``python benchmarks/bench_cmab.py [--quick] [--reproduce]`` prints a JSON dict;
``run(quick)`` returns it (``quick`` uses ``T = 10^5`` / ``T = 2000`` and ``R = 16``, a few
seconds).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from dashboard.algorithms.cmab.actions import MSets
from dashboard.algorithms.cmab.policies.aroq import AROQ
from dashboard.algorithms.cmab.policies.cucb import CUCB, BatchedCUCB
from dashboard.algorithms.cmab.policies.sroq import SROQ
from dashboard.algorithms.cmab.rewards import LinearRewards

D, M, SEED = 20, 3, 0


def _best_of(fn: Any, repeat: int) -> float:
    """Smallest wall time of ``repeat`` calls of ``fn()`` (the machine is shared)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def draw_time(model: LinearRewards, T: int, m: int, repeat: int) -> float:
    """Seconds to draw ``T x m`` outcomes with ``model.sample`` (index arrays prebuilt)."""
    arms = np.broadcast_to(np.arange(m, dtype=np.int64), (T, m))
    pulls = np.broadcast_to(np.arange(T, dtype=np.int64)[:, None], (T, m))
    t = pulls + 1
    return _best_of(lambda: model.sample(0, arms, pulls, t), repeat)


def run(quick: bool = False) -> dict[str, Any]:
    """Run the benchmark and return the measured times and ratios."""
    T = 10**5 if quick else 10**6
    T_cucb, R = (2000, 16) if quick else (20_000, 32)
    repeat = 3
    family, model = MSets(D, M), LinearRewards(D, seed=SEED)

    def policy_time(cls: type) -> tuple[float, float]:
        holder: dict[str, float] = {}

        def once() -> None:
            p = cls().run(model.environment(family, 0), T)
            holder["regret"] = p.cum_regret

        return _best_of(once, repeat), holder["regret"]

    t_draw = draw_time(model, T, M, repeat)
    t_aroq, reg_aroq = policy_time(AROQ)
    t_sroq, reg_sroq = policy_time(SROQ)

    start = time.perf_counter()
    batched = BatchedCUCB().run([model.environment(family, r) for r in range(R)], T_cucb)
    t_batched = time.perf_counter() - start
    start = time.perf_counter()
    seq = [CUCB().run(model.environment(family, r), T_cucb) for r in range(R)]
    t_seq = time.perf_counter() - start
    identical = bool(np.array_equal(batched.cum_regret, [p.cum_regret for p in seq]))

    return {
        "setting": {"d": D, "m": M, "T": T, "T_cucb": T_cucb, "R": R, "quick": quick},
        "draw_seconds": t_draw,
        "aroq_seconds": t_aroq,
        "sroq_seconds": t_sroq,
        "aroq_over_draw": t_aroq / t_draw,
        "sroq_over_draw": t_sroq / t_draw,
        "aroq_regret": reg_aroq,
        "sroq_regret": reg_sroq,
        "cucb_batched_seconds": t_batched,
        "cucb_sequential_seconds": t_seq,
        "cucb_batched_speedup": t_seq / t_batched,
        "cucb_batched_identical": identical,
        "targets": {"aroq_over_draw": "<= 3", "sroq_over_draw": "<= 3", "speedup": ">= 8"},
    }


#: ``--reproduce`` rows: (former kernels, figure, algorithm, panel).
REPRODUCE_ROWS = [("sdcb", "cmab-fig4", "SDCB", 0), ("ols-ucb-c", "cmab-fig3", "OLS-UCB-C", 0)]


def run_reproduce(horizon: int = 4000, repeats: int = 2) -> list[dict[str, Any]]:
    """The ``--reproduce`` rows (see the module docstring)."""
    from former_reproduce import side_by_side

    return [
        side_by_side(row, fig, alg, panel, horizon, 10, repeats)
        for row, fig, alg, panel in REPRODUCE_ROWS
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    parser.add_argument("--reproduce", action="store_true", help="former vs current paper tasks")
    parser.add_argument("--reproduce-horizon", type=int, default=4000)
    args = parser.parse_args()
    if args.reproduce:
        print(json.dumps(run_reproduce(args.reproduce_horizon), indent=2))
        return
    print(json.dumps(run(args.quick), indent=2))


if __name__ == "__main__":
    main()

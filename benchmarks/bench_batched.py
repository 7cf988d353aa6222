"""Benchmark: batched per-round semiparametric baselines vs sequential single runs.

For BOSE, SP-TS and LinUCB on the Appendix I instances (gap ``Delta* = 1/2``, sigma = 1) at
``d = 5, K = 10`` and ``d = 20, K = 30``, time

* **sequential** -- ``R = 16`` single-repetition runs one after the other
  (``cls().run(env_r, T)`` for ``r = 0..15``), what the runner did before;
* **batched** -- one ``Batched<cls>().run([env_0, ..., env_15], T)``,

and report the throughput ratio ``sequential / batched`` (target >= 5) together with a check
that both give exactly the same cumulative regrets.  The shift is the oblivious log-alternating
one of Appendix I; the full run also measures the adaptive (adversarial) shift, where every
repetition's environment is asked for ``nu_t`` each round, so the ratio is lower.  Each timing
is the best of ``repeats`` runs (1 with ``--quick``, 2 otherwise).

SP-TS draws ``(n_mc + 1) d`` standard normals per round and repetition (2020 at d = 20); the
counter-based uniforms cost ~5 ns each, a floor that batching cannot remove.  Their inverse
normal CDF (``ndtri``, ~16 ns) is now paid only where needed: the draws are scored with table
normals and their arg-maxima certified (``policies/certified_argmax.py``).  ``sampler`` rows
time that engine against the exact computation for every repetition (``certify = False``, the
former sampler: ``ndtri`` of every uniform and the exact products), both batched over R = 16,
interleaved, best of ``repeats``; the numbers must be identical, and ``recomputed`` is the
fraction of repetition-rounds the certificate sent to the exact path.

Usage: ``python benchmarks/bench_batched.py [--quick] [--sampler]`` prints a JSON dict
(``--sampler``: only the SP-TS sampler rows); ``run(quick)`` returns it.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from dashboard.algorithms.semiparametric import SemiparametricEnvironment, gap_instance, make_shift
from dashboard.algorithms.semiparametric.policies.bose import BOSE, BatchedBOSE
from dashboard.algorithms.semiparametric.policies.linear_foils import BatchedLinUCB, LinUCB
from dashboard.algorithms.semiparametric.policies.spts import (
    BatchedSemiparametricTS,
    SemiparametricTS,
)

PAIRS = [(BOSE, BatchedBOSE), (SemiparametricTS, BatchedSemiparametricTS), (LinUCB, BatchedLinUCB)]
SIZES = [(5, 10), (20, 30)]
R = 16


def _envs(inst: Any, shift: str, seed: int) -> list[SemiparametricEnvironment]:
    return [
        SemiparametricEnvironment(inst, make_shift(shift, seed=seed), 1.0, seed=seed, rep=r)
        for r in range(R)
    ]


def _time(fn: Any, repeats: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def measure(
    single: type, batched: type, d: int, K: int, T: int, shift: str, repeats: int, seed: int = 0
) -> dict[str, Any]:
    """Time R sequential single runs and one batched run of ``T`` rounds; compare regrets."""
    inst = gap_instance(d, K, gap=0.5, seed=seed)

    def sequential() -> np.ndarray:
        return np.array([single().run(e, T).cum_regret for e in _envs(inst, shift, seed)])

    def together() -> np.ndarray:
        return batched().run(_envs(inst, shift, seed), T).cum_regret.copy()

    t_seq, reg_seq = _time(sequential, repeats)
    t_bat, reg_bat = _time(together, repeats)
    return {
        "algorithm": single.name,
        "d": d,
        "K": K,
        "T": T,
        "R": R,
        "shift": shift,
        "sequential_s": round(t_seq, 4),
        "batched_s": round(t_bat, 4),
        "us_per_round_rep_sequential": round(t_seq / (T * R) * 1e6, 2),
        "us_per_round_rep_batched": round(t_bat / (T * R) * 1e6, 2),
        "ratio": round(t_seq / t_bat, 2),
        "identical_regret": bool(np.array_equal(reg_seq, reg_bat)),
    }


def measure_sampler(d: int, K: int, T: int, repeats: int, seed: int = 0) -> dict[str, Any]:
    """SP-TS batched over R: certified sampler vs the exact one, same process, interleaved."""
    inst = gap_instance(d, K, gap=0.5, seed=seed)
    best = {True: float("inf"), False: float("inf")}
    out: dict[bool, Any] = {}
    for _ in range(repeats):
        for certify in (False, True):
            eng = BatchedSemiparametricTS()
            eng.certify = certify
            t, _ = _time(lambda eng=eng: eng.run(_envs(inst, "log", seed), T), 1)
            best[certify] = min(best[certify], t)
            out[certify] = eng
    new, old = out[True], out[False]
    return {
        "algorithm": "SP-TS sampler",
        "d": d,
        "K": K,
        "T": T,
        "R": R,
        "exact_s": round(best[False], 4),
        "certified_s": round(best[True], 4),
        "us_per_round_exact": round(best[False] / T * 1e6, 1),
        "us_per_round_certified": round(best[True] / T * 1e6, 1),
        "ratio": round(best[False] / best[True], 2),
        "recomputed": round(new.recomputed / (R * T), 4),
        "identical": bool(
            np.array_equal(new.cum_regret, old.cum_regret)
            and np.array_equal(new.B, old.B)
            and np.array_equal(new.y, old.y)
        ),
    }


def run_sampler(quick: bool = False, seed: int = 0) -> list[dict[str, Any]]:
    """The SP-TS sampler rows at d = 5 / K = 10 and d = 20 / K = 30."""
    T = 150 if quick else 600
    return [measure_sampler(d, K, T, 2 if quick else 3, seed) for d, K in SIZES]


def run(quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Run the benchmark; returns ``{"rows": [...], "min_ratio": ..., "target": 5}``."""
    T = 150 if quick else 600
    repeats = 1 if quick else 2
    shifts = ["log"] if quick else ["log", "adversarial"]
    rows = [
        measure(single, batched, d, K, T, shift, repeats, seed)
        for shift in shifts
        for d, K in SIZES
        for single, batched in PAIRS
    ]
    oblivious = [r["ratio"] for r in rows if r["shift"] == "log"]
    return {
        "rows": rows,
        "sampler": run_sampler(quick, seed),
        "min_ratio_oblivious_shift": min(oblivious),
        "all_identical": all(r["identical_regret"] for r in rows),
        "target": 5.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 150 instead of 600")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sampler", action="store_true", help="only the SP-TS sampler rows")
    args = parser.parse_args()
    if args.sampler:
        out: Any = {"sampler": run_sampler(quick=args.quick, seed=args.seed)}
    else:
        out = run(quick=args.quick, seed=args.seed)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

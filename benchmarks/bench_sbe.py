"""Benchmark: SBE's vectorised phases vs the floor of drawing its random numbers.

Problem (Appendix I): ``d = 20, K = 30``, gap ``Delta* = 1/2``, sigma = 1, sine shift,
``T = 10^6`` (``10^5`` with ``--quick``).

* **SBE** -- ``SBE(c=1).run(env, T)``: DEO design solves, categorical draws of the arms from
  the design, rewards (means + shift + noise) from the environment, per-arm sufficient
  statistics, the orthogonalized estimate and elimination at each phase end, then the declared
  arm until T.
* **floor** -- in the same process, only drawing the ``T`` arm indices from a (DEO-like)
  categorical distribution and the ``T`` Gaussian noises with the same counter-based generator
  (:mod:`dashboard.algorithms.randomness`); nothing else.  Any simulator of the same random
  experiment has to produce these numbers.

The ratio ``SBE / floor`` is printed (target: <= 3).  On the gap-1/2 instance SBE declares
the best arm after ~10^4 rounds and then needs no arm draws, so it can beat the floor; the
``ratio_undeclared`` entry times SBE on a gap-0.01 instance where it never declares within T
(every round is drawn from a phase design), the honest worst case.  Each timing is the best of
three runs.

``--compare`` also runs the full-size Appendix I comparison (SBE vs BOSE vs SP-TS at d=20,
K=30, both shifts) that is too slow for the unit tests; expect minutes.

Usage: ``python benchmarks/bench_sbe.py [--quick] [--compare]`` prints a JSON dict;
``run(quick)`` returns it.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from dashboard.algorithms import randomness as rnd
from dashboard.algorithms.semiparametric import (
    BOSE,
    SBE,
    SemiparametricEnvironment,
    SemiparametricTS,
    gap_instance,
    make_shift,
)

D, K, GAP = 20, 30, 0.5


def _best_of(fn: Any, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def run(quick: bool = False, compare: bool = False, seed: int = 0) -> dict[str, Any]:
    """Time SBE against the random-number floor; optionally the full regret comparison.

    Parameters
    ----------
    quick : bool
        ``T = 10^5`` instead of ``10^6``.
    compare : bool
        Also run SBE, BOSE and SP-TS (c = 1) at d=20, K=30 for both paper shifts.
    seed : int
        Instance and noise seed.

    Returns
    -------
    dict
        ``T, sbe_seconds, floor_seconds, ratio, declared_arm, best_arm, declaration_time,
        phases, design_solves, cum_regret`` (and ``comparison`` with ``compare=True``).
    """
    T = 10**5 if quick else 10**6
    repeats = 3
    inst = gap_instance(D, K, GAP, seed=seed)
    shift = make_shift("sine")

    policy: dict[str, SBE] = {}

    def sbe() -> None:
        env = SemiparametricEnvironment(inst, shift, noise_sigma=1.0, seed=seed, rep=0)
        policy["p"] = SBE(c=1.0).run(env, T)

    # a categorical distribution like DEO's (half on one arm), same generator and counters
    p = np.full(K, 0.5 / (K - 1))
    p[0] = 0.5
    cdf = np.cumsum(p)
    arm_key = rnd.stream_key(seed, 0, "SBE", "arms")
    noise_key = rnd.stream_key(seed, 0, "sp-noise")

    def floor() -> None:
        t = np.arange(1, T + 1, dtype=np.int64)
        rnd.categorical(arm_key, t, cdf)
        rnd.normal(noise_key, t)

    hard = gap_instance(D, K, 0.01, seed=seed)

    def sbe_hard() -> None:
        env = SemiparametricEnvironment(hard, shift, noise_sigma=1.0, seed=seed, rep=0)
        policy["hard"] = SBE(c=1.0).run(env, T)

    sbe()  # warm-up (imports, caches)
    floor()
    sbe_s = _best_of(sbe, repeats)
    floor_s = _best_of(floor, repeats)
    hard_s = _best_of(sbe_hard, repeats)
    pol = policy["p"]
    out: dict[str, Any] = {
        "T": T,
        "d": D,
        "K": K,
        "sbe_seconds": sbe_s,
        "floor_seconds": floor_s,
        "ratio": sbe_s / floor_s,
        "declared_arm": pol.declared_arm,
        "best_arm": inst.best_arm,
        "declaration_time": pol.declaration_time,
        "phases": sum(e.kind == "phase" for e in pol.events),
        "design_solves": int(
            np.sum(pol.log.arrays()["purpose_code"] == pol.log.purposes.index("DEO design"))
        ),
        "cum_regret": pol.cum_regret,
        # gap 0.01: SBE never declares, every round is drawn from a phase design
        "sbe_undeclared_seconds": hard_s,
        "ratio_undeclared": hard_s / floor_s,
        "undeclared_phases": sum(e.kind == "phase" for e in policy["hard"].events),
    }
    if compare:
        out["comparison"] = compare_regret(T=20_000 if quick else 50_000, seed=seed)
    return out


def compare_regret(T: int = 50_000, seed: int = 0) -> dict[str, dict[str, float]]:
    """Final regret of SBE, BOSE and SP-TS (c = 1) at d=20, K=30, gap 1/2, both shifts."""
    inst = gap_instance(D, K, GAP, seed=seed)
    res: dict[str, dict[str, float]] = {}
    for key in ("sine", "log"):
        res[key] = {}
        for cls in (SBE, BOSE, SemiparametricTS):
            env = SemiparametricEnvironment(inst, make_shift(key), 1.0, seed=seed, rep=0)
            start = time.perf_counter()
            pol = cls(c=1.0).run(env, T)
            res[key][cls.name] = pol.cum_regret
            res[key][cls.name + " seconds"] = time.perf_counter() - start
    return res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 10^5 instead of 10^6")
    parser.add_argument("--compare", action="store_true", help="also SBE vs BOSE vs SP-TS")
    args = parser.parse_args()
    out = run(quick=args.quick, compare=args.compare)
    print(json.dumps(out, indent=2, default=float))
    print(
        f"SBE / random-number floor = {out['ratio']:.2f}x (declares early), "
        f"{out['ratio_undeclared']:.2f}x (never declares); target <= 3x"
    )


if __name__ == "__main__":
    main()

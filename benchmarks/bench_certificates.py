"""Two certificates that skip work without changing a number (issue 9, session 19).

``semi-regret``'s per-round baselines at paper constants (R = 10 repetitions x Appendix I's
c in {1, 2, 4, 8} x both shifts: 80 rows, as ``reproduce --tune auto`` batches them), two
engines advanced in turn in chunks of ``--chunk`` rounds in one process (so both see the
same load), CPU seconds and their ratio, identical state required:

* ``bose``: :class:`BatchedBOSE` computing every repetition's ``(K, K)`` widths
  (``certify = False``) against the engine that skips them where
  ``policies/elimination_bound.py`` proves that no arm is eliminated; ``certified`` is the
  fraction of repetition-rounds settled by the bound;
* ``spts_table``: SP-TS's certified sampler with a normal table of ``--old-bits`` mantissa
  bits (9, the former table) against the current :data:`MANTISSA_BITS` (11): a finer table
  leaves a smaller certificate margin, so fewer repetition-rounds need the exact
  recomputation (``recomputed``, each engine's fraction).  The module's table is swapped
  before each engine's turn.

Usage: ``python benchmarks/bench_certificates.py [--horizon T] [--chunk N] [--only bose|spts]``
prints a JSON dict (one row per algorithm and size).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dashboard.algorithms.semiparametric import SemiparametricEnvironment, gap_instance, make_shift
from dashboard.algorithms.semiparametric.policies import certified_argmax as ca
from dashboard.algorithms.semiparametric.policies.bose import BatchedBOSE
from dashboard.algorithms.semiparametric.policies.spts import BatchedSemiparametricTS

SIZES = ((20, 30), (5, 10))
C_VALUES = (1.0, 2.0, 4.0, 8.0)


def _reset(engine: Any, d: int, K: int) -> Any:
    """``engine`` reset on the 80 rows at the paper's horizon (its constants depend on T);
    the benchmark advances it ``--horizon`` rounds."""
    inst = gap_instance(d, K, gap=0.5, seed=0)
    envs, cs = [], []
    for shift in ("sine", "log"):
        for c in C_VALUES:
            for r in range(10):
                env = SemiparametricEnvironment(inst, make_shift(shift, seed=0), 1.0, seed=0, rep=r)
                envs.append(env)
                cs.append(c)
    engine.reset(envs, 100_000, {"c": cs})
    return engine


def _lockstep(engines: list[Any], horizon: int, chunk: int, before=None) -> list[float]:
    """CPU seconds of each engine, advanced in turn (who goes first rotates)."""
    cpu = [0.0] * len(engines)
    for j, until in enumerate(range(chunk, horizon + 1, chunk)):
        for k in [(j + i) % len(engines) for i in range(len(engines))]:
            if before is not None:
                before(k)
            start = time.process_time()
            engines[k].advance(until)
            cpu[k] += time.process_time() - start
    return cpu


def _same(a: Any, b: Any, names: tuple[str, ...]) -> bool:
    return all(np.array_equal(getattr(a, n), getattr(b, n)) for n in names)


def bose_rows(horizon: int, chunk: int) -> list[dict[str, Any]]:
    rows = []
    for d, K in SIZES:
        exact = BatchedBOSE()
        exact.certify = False
        engines = [_reset(exact, d, K), _reset(BatchedBOSE(), d, K)]
        cpu = _lockstep(engines, horizon, chunk)
        bound = engines[1]
        rows.append(
            {
                "row": f"bose d={d} K={K}",
                "horizon": horizon,
                "widths_cpu_s": round(cpu[0], 2),
                "bound_cpu_s": round(cpu[1], 2),
                "ratio": round(cpu[0] / cpu[1], 2),
                "certified": round(bound.certified / (bound.R * bound.t), 3),
                "identical": _same(exact, bound, ("Gamma_inv", "b", "cum_regret", "surviving")),
            }
        )
    return rows


def spts_rows(horizon: int, chunk: int, old_bits: int) -> list[dict[str, Any]]:
    saved_bits = ca.MANTISSA_BITS
    current = (ca._SHIFT, ca._LO, ca._A, ca._B, ca.TABLE_ERROR)
    tables = [(52 - old_bits, *ca._build(old_bits)), current]

    def use(k: int) -> None:
        ca._SHIFT, ca._LO, ca._A, ca._B, ca.TABLE_ERROR = tables[k]

    rows = []
    try:
        for d, K in SIZES:
            engines = []
            for k in range(2):
                use(k)
                engines.append(_reset(BatchedSemiparametricTS(), d, K))
            cpu = _lockstep(engines, horizon, chunk, before=use)
            a, b = engines
            rows.append(
                {
                    "row": f"spts_table d={d} K={K}",
                    "horizon": horizon,
                    f"bits{old_bits}_cpu_s": round(cpu[0], 2),
                    f"bits{saved_bits}_cpu_s": round(cpu[1], 2),
                    "ratio": round(cpu[0] / cpu[1], 2),
                    f"recomputed_bits{old_bits}": round(a.recomputed / (a.R * a.t), 4),
                    f"recomputed_bits{saved_bits}": round(b.recomputed / (b.R * b.t), 4),
                    "identical": _same(a, b, ("B", "y", "cum_regret")),
                }
            )
    finally:
        use(1)
    return rows


def run(horizon: int = 5000, chunk: int = 120, only: str | None = None, old_bits: int = 9):
    rows = []
    if only in (None, "bose"):
        rows += bose_rows(horizon, chunk)
    if only in (None, "spts"):
        rows += spts_rows(horizon, chunk, old_bits)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--chunk", type=int, default=120)
    parser.add_argument("--only", choices=("bose", "spts"))
    parser.add_argument("--old-bits", type=int, default=9)
    args = parser.parse_args()
    print(json.dumps(run(args.horizon, args.chunk, args.only, args.old_bits), indent=1))


if __name__ == "__main__":
    main()

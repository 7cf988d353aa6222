"""A :class:`~dashboard.simulation.results.SimulationResult` as a JSON-able record and back
(curves and finals; no per-call oracle logs or policy events).  Floats are written with
Python's shortest round-trip ``repr``, so a loaded result equals the computed one bit for
bit.  Saved experiment files (:mod:`.store`) and sweep pieces (:mod:`.sweep`) hold these.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .results import AlgorithmResult, SimulationResult

__all__ = ["result_from_record", "result_to_record"]


def _floats(a: np.ndarray | None) -> list[Any] | None:
    if a is None:
        return None
    arr = np.asarray(a, dtype=float)
    return (
        [None if not np.isfinite(x) else float(x) for x in arr.ravel()]
        if arr.ndim == 1
        else [_floats(row) for row in arr]
    )


def _ints(a: np.ndarray | None) -> list[Any] | None:
    return None if a is None else np.asarray(a, dtype=np.int64).tolist()


def _array(x: Any, dtype: type, ncols: int | None = None) -> np.ndarray:
    arr = np.array(x, dtype=dtype) if x is not None else None
    if arr is not None and ncols is not None and arr.size == 0:
        arr = arr.reshape(0, ncols)
    return arr


def _pair(p: tuple[np.ndarray, np.ndarray] | None) -> list[Any] | None:
    return None if p is None else [_floats(np.asarray(a, dtype=float)) for a in p]


def _unpair(p: Any) -> tuple[np.ndarray, np.ndarray] | None:
    return None if p is None else (np.array(p[0], dtype=float), np.array(p[1], dtype=float))


def result_to_record(res: SimulationResult, arrays: bool = False) -> dict[str, Any]:
    """JSON-able record of a result: curves and finals, no per-call logs or events.

    ``arrays`` also keeps the plots' instance arrays (``features`` = (X, theta*), ``shift`` =
    the recent shift trace) of a semiparametric run: done for a single saved run, not for the
    many pieces of a sweep (they would repeat them)."""
    extra = {"features": _pair(res.features), "shift": _pair(res.shift)} if arrays else {}
    return {
        **extra,
        "spec": res.spec,
        "horizon": res.horizon,
        "runs": res.runs,
        "seed": res.seed,
        "t": res.t,
        "reps": list(res.reps or range(res.runs)),
        "instance": res.instance,
        "algorithms": [
            {
                "algorithm": r.algorithm,
                "paper": r.paper,
                "t": r.t,
                "times": _ints(r.times),
                "regret": _floats(r.regret),
                "queries": _ints(r.queries),
                "adaptivity": _ints(r.adaptivity),
                "wall_seconds": _floats(r.wall_seconds),
                "oracle_seconds": _floats(r.oracle_seconds),
                "declared_arm": _ints(r.declared_arm),
                "declaration_time": _floats(r.declaration_time),
                "best_arm": r.best_arm,
                "params": r.params,
                "alpha_regret": _floats(r.alpha_regret),
            }
            for r in res.results
        ],
    }


def result_from_record(rec: dict[str, Any]) -> SimulationResult:
    """The :class:`SimulationResult` a record describes (ValueError if malformed)."""
    try:
        results = []
        for a in rec["algorithms"]:
            times = np.array(a["times"], dtype=np.int64)
            g = times.size
            results.append(
                AlgorithmResult(
                    algorithm=a["algorithm"],
                    paper=a["paper"],
                    times=times,
                    regret=np.array(a["regret"], dtype=float).reshape(-1, g),
                    queries=np.array(a["queries"], dtype=np.int64).reshape(-1, g),
                    adaptivity=np.array(a["adaptivity"], dtype=np.int64).reshape(-1, g),
                    t=int(a["t"]),
                    wall_seconds=np.array(a["wall_seconds"], dtype=float),
                    oracle_seconds=np.array(a["oracle_seconds"], dtype=float),
                    declared_arm=_array(a.get("declared_arm"), np.int64),
                    declaration_time=_array(a.get("declaration_time"), float),
                    best_arm=a.get("best_arm"),
                    params=dict(a.get("params") or {}),
                    alpha_regret=None
                    if a.get("alpha_regret") is None
                    else np.array(a["alpha_regret"], dtype=float).reshape(-1, g),
                )
            )
        return SimulationResult(
            spec=dict(rec["spec"]),
            horizon=int(rec["horizon"]),
            runs=int(rec["runs"]),
            seed=int(rec["seed"]),
            t=int(rec["t"]),
            results=results,
            instance=dict(rec.get("instance") or {}),
            features=_unpair(rec.get("features")),
            shift=_unpair(rec.get("shift")),
            reps=[int(r) for r in rec["reps"]],
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"malformed result record ({type(exc).__name__}: {exc})") from None

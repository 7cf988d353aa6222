"""The worst files the dashboard's upload accepts, for load tests and benchmarks.

:func:`worst_allowed_upload` builds a saved experiment that passes every limit of
:mod:`.uploads` as closely as it can: the most algorithms, runs and numbers a file of at most
:data:`~.uploads.MAX_UPLOAD_BYTES` can hold (a saved run), or the most grid points and pieces
(a sweep).  Its numbers are made up (curves of small integers, the cheapest to write and so the
most per byte), but its shape is what ``simulate --save`` and ``sweep --out`` write, so the
loader reads all of it and the overlay draws all of it.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from .store import FORMAT, FORMAT_VERSION, _package_version
from .uploads import MAX_UPLOAD_ALGORITHMS, MAX_UPLOAD_BYTES, MAX_UPLOAD_POINTS, MAX_UPLOAD_RUNS

__all__ = ["worst_allowed_upload"]


def _line(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":")) + "\n"


def _record(algorithms: int, runs: int, rounds: int, horizon: int) -> dict[str, Any]:
    times = [max(1, (k + 1) * horizon // rounds) for k in range(rounds)]
    times[-1] = horizon
    curve = [[(k * (r + 1)) % 97 for k in range(rounds)] for r in range(runs)]
    zeros = [[0] * rounds for _ in range(runs)]
    return {
        "spec": {"problem": "cmab", "d": 20, "m": 3, "actions": "m-sets", "reward": "linear"},
        "horizon": horizon,
        "runs": runs,
        "seed": 0,
        "t": horizon,
        "reps": list(range(runs)),
        "instance": {},
        "algorithms": [
            {
                "algorithm": f"Saved-{i:02d}",
                "paper": "",
                "t": horizon,
                "times": times,
                "regret": curve,
                "queries": zeros,
                "adaptivity": zeros,
                "wall_seconds": [0.0] * runs,
                "oracle_seconds": [0.0] * runs,
            }
            for i in range(algorithms)
        ],
    }


def _simulation(max_bytes: int) -> bytes:
    """A saved run: 16 algorithms x 256 runs, as many recorded rounds as fit."""
    header = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "kind": "simulation",
        "package_version": _package_version(),
        "created": "2000-01-01T00:00:00+00:00",
        "definition": {},
    }

    def build(rounds: int) -> bytes:
        # one algorithm's JSON written once and repeated under each name (same bytes as
        # json.dumps of the whole record)
        rec = _record(1, MAX_UPLOAD_RUNS, rounds, 10_000)
        one = json.dumps(rec["algorithms"][0], separators=(",", ":"))
        marker = '"algorithm":"Saved-00"'
        algorithms = ",".join(
            one.replace(marker, f'"algorithm":"Saved-{i:02d}"', 1)
            for i in range(MAX_UPLOAD_ALGORITHMS)
        )
        rec["algorithms"] = []
        body = json.dumps({"piece": {"reps": rec["reps"]}, "result": rec}, separators=(",", ":"))
        body = body.replace('"algorithms":[]', f'"algorithms":[{algorithms}]', 1)
        return (_line(header) + body + "\n").encode()

    # the size grows linearly with the rounds: estimate from two small files, then step down
    a, b = len(build(20)), len(build(40))
    per_round = (b - a) / 20
    rounds = max(2, int(20 + (max_bytes - a) / per_round))
    data = build(rounds)
    while len(data) > max_bytes and rounds > 2:
        rounds -= max(1, int((len(data) - max_bytes) / per_round) + 1)
        data = build(max(rounds, 2))
    return data


def _sweep() -> bytes:
    """A sweep of the most grid points the upload opens, over every linear cmab algorithm
    (at most 16), every piece one (point, algorithm) unit of 50 recorded rounds."""
    from . import catalogue
    from .sweep import make_sweep

    names = catalogue.algorithm_names("cmab", "linear")[:MAX_UPLOAD_ALGORITHMS]
    values = [1000 + 10 * k for k in range(MAX_UPLOAD_POINTS)]
    sweep = make_sweep("cmab", names, horizon=None, runs=2, seed=0, grid={"horizon": values})
    header = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "kind": "sweep",
        "package_version": _package_version(),
        "created": "2000-01-01T00:00:00+00:00",
        "definition": sweep.definition(),
    }
    out = [_line(header)]
    for ukey, unit in sweep.units.items():
        rec = _record(1, sweep.runs, 50, int(unit["horizon"]))
        rec["spec"] = unit["spec"]
        rec["algorithms"][0]["algorithm"] = unit["algorithm"]
        out.append(_line({"piece": {"unit": ukey, "reps": rec["reps"]}, "result": rec}))
    return "".join(out).encode()


@functools.lru_cache(maxsize=4)
def worst_allowed_upload(kind: str = "simulation", max_bytes: int = MAX_UPLOAD_BYTES) -> bytes:
    """The bytes of the worst file the upload accepts: ``kind="simulation"`` (default) a saved
    run of the most algorithms and runs with as many rounds as fit in ``max_bytes``;
    ``kind="sweep"`` a sweep of the most grid points the upload opens.  (Cached: a few
    seconds to build.)"""
    if kind == "simulation":
        return _simulation(max_bytes)
    if kind == "sweep":
        return _sweep()
    raise ValueError(f"kind must be 'simulation' or 'sweep', not {kind!r}")

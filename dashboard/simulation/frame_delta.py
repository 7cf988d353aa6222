"""Frames that cross the network carry only what is new since the previous frame.

A streamed frame is the whole :class:`~dashboard.simulation.results.SimulationResult` up to
round ``t``.  Most of it is small (curves on a fixed grid of rounds), but two parts are not:

* the policies' *events* (one :class:`~dashboard.algorithms.base.PolicyEvent` per epoch,
  oracle query or phase, each holding a few arrays) only grow: AROQ's reach ~10^4 small arrays
  per run, and pickling them again at every frame cost the worker ~15 ms and the server's Dask
  thread ~6 ms per frame and session (measured at d = 20, R = 8, t ~ 10^4), more as t grows;
* the semiparametric instance's features ``(X, theta*)`` never change (K x d floats: 3 MB at
  K = 2000, d = 200);
* the expensive-computation logs (:class:`~dashboard.algorithms.base.ExpensiveLog`, five
  arrays per algorithm and repetition: 120 arrays at 3 algorithms x R = 8) rarely change
  between two frames for the rare-query algorithms, and each array cost the server's Dask
  thread an object to rebuild on every frame.

* the curves (regret, oracle queries and adaptive rounds per repetition, on the grid of
  recorded rounds) only grow too: a recorded grid round's values never change.  Sent whole,
  they were most of a running frame's bytes (66-77 KB at 3 algorithms x R = 8, d = 20, from
  t ~ 4000 on), and counting the logs' queries at every grid round again was a third of the
  worker's time per frame.

So a run on a Dask worker sends, per algorithm and repetition, only the events added since the
frame before, a log only when its ``version`` changed (``None`` in its place otherwise), the
curves' grid rounds recorded since the frame before (the worker computes only those:
``Simulation.result(since=...)``), and the features only once; the server joins them back.
The joined result is the one the worker holds, object for object
(``tests/simulation/test_frame_delta.py``).  Frames
are asked for and returned one at a time, in order, so "since the frame before" is well
defined; a lost frame means a lost run (a new actor), which starts over.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .results import AlgorithmResult, SimulationResult

__all__ = ["DeltaJoiner", "DeltaTrimmer", "ResultDelta"]


#: The curves of an :class:`AlgorithmResult`, with the axis of their grid rounds.
_CURVES: tuple[tuple[str, int], ...] = (
    ("times", 0),
    ("regret", 1),
    ("queries", 1),
    ("adaptivity", 1),
    ("alpha_regret", 1),
)


def _grid_length(result: SimulationResult) -> int:
    return len(result.results[0].times) if result.results else 0


def _curves_from(r: AlgorithmResult, cut: int) -> dict[str, Any]:
    """``r``'s curves without their first ``cut`` grid rounds."""
    out: dict[str, Any] = {}
    for name, axis in _CURVES:
        v = getattr(r, name)
        if v is not None:
            out[name] = v[cut:] if axis == 0 else v[:, cut:]
    return out


@dataclass(frozen=True)
class ResultDelta:
    """A result with, per algorithm and repetition, only the events from ``offsets`` on
    (``offsets[g][r]`` events were sent before), its curves only from grid round
    ``grid_offset`` on, and ``features`` only if ``new_features``."""

    result: SimulationResult
    offsets: tuple[tuple[int, ...], ...]
    new_features: bool
    grid_offset: int = 0


class DeltaTrimmer:
    """Worker side: remembers how much of each event list and of the curves was sent."""

    def __init__(self) -> None:
        self._sent: list[list[int]] | None = None
        self._log_versions: list[list[int]] = []
        self._features_sent = False
        self.grid_sent = 0

    def trim(self, result: SimulationResult, since: int = 0) -> ResultDelta:
        """``result`` without what earlier frames already carried.  ``since``: the grid round
        ``result``'s curves start at (``Simulation.result(since=...)``; at most
        :attr:`grid_sent`, which is what the next frame needs)."""
        if since > self.grid_sent:
            raise ValueError(f"curves from grid round {since}: only {self.grid_sent} were sent")
        total = since + _grid_length(result)
        start = self.grid_sent if total >= self.grid_sent else since
        cut = start - since
        sent = self._sent
        if sent is None or len(sent) != len(result.results):
            sent = [[0] * len(r.events) for r in result.results]
        trimmed, offsets = [], []
        versions = self._log_versions
        if len(versions) != len(result.results):
            versions = [[] for _ in result.results]
        for g, r in enumerate(result.results):
            done = sent[g] if len(sent[g]) == len(r.events) else [0] * len(r.events)
            seen = versions[g] if len(versions[g]) == len(r.logs) else [-1] * len(r.logs)
            logs = [None if log.version == v else log for log, v in zip(r.logs, seen)]
            events = [ev[k:] for ev, k in zip(r.events, done)]
            curves = _curves_from(r, cut) if cut else {}
            trimmed.append(replace(r, events=events, logs=logs, **curves))
            offsets.append(tuple(done))
        self._sent = [[len(ev) for ev in r.events] for r in result.results]
        self._log_versions = [[log.version for log in r.logs] for r in result.results]
        self.grid_sent = total
        new_features = not self._features_sent and result.features is not None
        self._features_sent = self._features_sent or new_features
        out = replace(result, results=trimmed, features=result.features if new_features else None)
        return ResultDelta(out, tuple(offsets), new_features, start)


class DeltaJoiner:
    """Server side: joins each delta onto the events and features received before."""

    def __init__(self) -> None:
        self._events: list[list[list[Any]]] = []
        self._logs: list[list[Any]] = []
        self._curves: list[dict[str, Any]] = []
        self._features: Any = None

    def join(self, delta: ResultDelta) -> SimulationResult:
        """The full result the worker holds (ValueError if a frame went missing)."""
        result = delta.result
        if delta.new_features:
            self._features = result.features
        if len(self._events) != len(result.results):
            self._events = [[[] for _ in r.events] for r in result.results]
        if len(self._logs) != len(result.results):
            self._logs = [[None] * len(r.logs) for r in result.results]
        grid_k = delta.grid_offset
        if grid_k == 0 or len(self._curves) != len(result.results):
            if grid_k:
                raise ValueError(f"frame out of order: curves from grid round {grid_k}, none held")
            self._curves = [{} for _ in result.results]
        joined = []
        for g, (r, offsets) in enumerate(zip(result.results, delta.offsets)):
            held = self._events[g]
            if len(held) != len(r.events):
                held = self._events[g] = [[] for _ in r.events]
            for i, (new, k) in enumerate(zip(r.events, offsets)):
                if k != len(held[i]):
                    raise ValueError(
                        f"frame out of order: {k} events were sent before, {len(held[i])} held"
                    )
                held[i] = held[i] + list(new)  # a new list: earlier results stay unchanged
            logs = self._logs[g]
            if len(logs) != len(r.logs):
                logs = self._logs[g] = [None] * len(r.logs)
            for i, log in enumerate(r.logs):
                if log is not None:
                    logs[i] = log
                elif logs[i] is None:
                    raise ValueError("frame out of order: a log was never sent")
            curves = self._join_curves(g, r, grid_k)
            joined.append(replace(r, events=list(held), logs=list(logs), **curves))
        return replace(result, results=joined, features=self._features)

    def _join_curves(self, g: int, r: AlgorithmResult, k: int) -> dict[str, Any]:
        """Algorithm ``g``'s whole curves: those held (``k`` grid rounds) and ``r``'s after
        them (new arrays: earlier results stay unchanged)."""
        held = self._curves[g]
        if k and len(held["times"]) != k:
            raise ValueError(
                f"frame out of order: curves from grid round {k}, {len(held['times'])} held"
            )
        whole = {}
        for name, axis in _CURVES:
            v = getattr(r, name)
            if v is None:
                continue
            whole[name] = np.concatenate([held[name], v], axis=axis) if k else v
        self._curves[g] = whole
        return whole

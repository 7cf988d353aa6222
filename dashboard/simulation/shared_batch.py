"""Sweep tasks that differ only by the shift, run as one batch (issue 9, ``reproduce``).

``semi-regret`` runs each per-round baseline (BOSE, SP-TS, ...) on two panels per instance
that differ only in the shift ``nu_t``: the same features ``X``, seed, horizon, constants and
repetition ids.  Their batched engines (:class:`~dashboard.algorithms.semiparametric.policies.
per_round.PerRoundBatch`) compute every repetition with its own stacked BLAS/LAPACK calls, the
same whatever the batch, so one engine over both panels' environments gives each repetition
exactly the numbers of its own panel's run, at a fraction of the per-round Python and numpy
call overhead; SP-TS's repetitions of one stream (rep ``r`` of each panel) also share their
draws (measured for SP-TS at R = 10 + 10 vs two batches of 10: 1.24-1.39x at d = 5, K = 10;
1.2-1.33x at d = 20, K = 30).

:func:`run_shared_task` builds each unit's :class:`~.runner.Simulation` exactly as a task
run alone (:func:`run_alone`, which is :func:`~.sweep.run_task`), replaces their engines by
slices of one engine over all their environments, advances the simulations in lockstep over
their common time grid and returns one record per unit; wall and oracle seconds are shared
equally among all repetitions (as a batched engine shares them among its own).
:func:`merge_plan` decides which tasks to merge: only tasks whose combined estimated cost
stays within the longest task's or the ideal time per worker, so a merged task does not
become the pool's critical path.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["make_simulation", "merge_key", "merge_plan", "run_alone", "run_shared_task"]

#: Spec fields that only change the shift (environments of one instance ``X``).
_SHIFT_FIELDS = ("shift", "magnitude")


def merge_key(unit: dict[str, Any], reps: Sequence[int]) -> str | None:
    """A key shared by the tasks that can run as one batch, or None: semiparametric units of
    an algorithm with a per-round batched engine, equal but for the shift fields."""
    if unit.get("problem") != "semiparametric":
        return None
    from ..algorithms.registry import algorithm_info
    from ..algorithms.semiparametric.policies.per_round import PerRoundBatch
    from .specs import make_spec

    spec = make_spec(unit["problem"], **{k: v for k, v in unit["spec"].items() if k != "problem"})
    info = algorithm_info(unit["algorithm"], spec.problem)
    batched = getattr(info.declaration, "batched", None)
    if batched is None or not issubclass(batched, PerRoundBatch):
        return None
    rest = {k: v for k, v in unit.items() if k != "spec"}
    spec_rest = {k: v for k, v in unit["spec"].items() if k not in _SHIFT_FIELDS}
    return json.dumps([rest, spec_rest, list(reps)], sort_keys=True, default=repr)


def merge_plan(
    tasks: Sequence[tuple[float, Any, dict[str, Any], list[int]]], workers: int = 1
) -> list[list[int]]:
    """Indices of ``tasks`` (``(seconds, priority, unit, reps)``) grouped into merged tasks, in
    the order of each group's first task; only tasks of one priority merge, and a group's
    estimated seconds (the sum) stay within the longest single task's or the ideal time per
    worker (all tasks' seconds / ``workers``), whichever is larger: a merged task never
    becomes longer than the pool would take anyway."""
    if not tasks:
        return []
    longest = max(max(task[0] for task in tasks), sum(task[0] for task in tasks) / workers)
    groups: list[list[int]] = []
    open_group: dict[str, int] = {}  # key -> index in groups of the group still filling
    cost: list[float] = []
    for i, (seconds, priority, unit, reps) in enumerate(tasks):
        key = merge_key(unit, reps)
        key = None if key is None else f"{priority!r} {key}"
        g = open_group.get(key) if key is not None else None
        if g is not None and cost[g] + seconds <= longest:
            groups[g].append(i)
            cost[g] += seconds
            continue
        groups.append([i])
        cost.append(seconds)
        if key is not None:
            open_group[key] = len(groups) - 1
    return groups


def make_simulation(unit: dict[str, Any], reps: Sequence[int]) -> Any:
    """The :class:`~.runner.Simulation` of one sweep task: one algorithm at one setting, the
    repetition ids ``reps`` (not run yet; a context manager)."""
    from .runner import Simulation
    from .specs import make_spec

    spec = make_spec(unit["problem"], **{k: v for k, v in unit["spec"].items() if k != "problem"})
    alg = unit["algorithm"]
    params = {alg: unit["params"]} if unit["params"] else None
    return Simulation(
        spec,
        [alg],
        unit["horizon"],
        runs=unit["runs"],
        seed=unit["seed"],
        params=params,
        grid_points=unit["grid_points"],
        reps=list(reps),
        max_work=None,  # a sweep task: the sweep was asked for explicitly, in pieces
    )


def run_alone(unit: dict[str, Any], reps: Sequence[int]) -> dict[str, Any]:
    """One task run on its own (:func:`~.sweep.run_task`): its record."""
    from .records import result_to_record

    with make_simulation(unit, reps) as sim:
        return result_to_record(sim.run())


class _Slice:
    """Repetitions ``lo .. hi - 1`` of a shared per-round engine, as one group's engine."""

    def __init__(self, engine: Any, lo: int, hi: int) -> None:
        self._engine, self._lo, self._hi = engine, lo, hi

    @property
    def t(self) -> int:
        return int(self._engine.t)

    def advance(self, until: int) -> int:
        return int(self._engine.advance(until))

    @property
    def cum_regret(self) -> np.ndarray:
        return self._engine.cum_regret[self._lo : self._hi]

    @property
    def logs(self) -> list[Any]:
        return self._engine.logs[self._lo : self._hi]

    @property
    def events(self) -> list[list[Any]]:
        return self._engine.events[self._lo : self._hi]


def run_shared_task(units: Sequence[dict[str, Any]], reps: Sequence[int]) -> list[dict[str, Any]]:
    """Run the tasks ``(unit, reps)`` of ``units`` (see :func:`merge_key`) as one batch; one
    record per unit, each equal to :func:`~.sweep.run_task`'s for that unit (wall and oracle
    seconds aside).  Units whose environments cannot share an engine (different features)
    run one after the other instead."""
    from .records import result_to_record

    if len(units) == 1:
        return [run_alone(units[0], reps)]
    with contextlib.ExitStack() as stack:
        sims = [stack.enter_context(make_simulation(u, reps)) for u in units]
        groups = [s.groups[0] for s in sims]
        if any(len(s.groups) != 1 or g.batched is None for s, g in zip(sims, groups)):
            return [run_alone(u, reps) for u in units]
        envs = [e for g in groups for e in g.envs]
        engine = groups[0].batched
        try:
            engine.reset(envs, sims[0].horizon)
        except ValueError:  # not one feature matrix: no shared engine
            return [run_alone(u, reps) for u in units]
        lo = 0
        for g in groups:
            g.batched = _Slice(engine, lo, lo + g.R)
            lo += g.R
        for stop in sims[0].grid:
            for s in sims:
                s.advance_to(int(stop))
        for s in sims:
            s.advance_to(s.horizon)
        # the engine's wall time, measured by whichever group advanced it, shared equally
        total = sum(float(g.wall.sum()) for g in groups)
        for g in groups:
            g.wall[:] = total / len(envs)
        return [result_to_record(s.result()) for s in sims]

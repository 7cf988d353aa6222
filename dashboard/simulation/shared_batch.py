"""Sweep tasks that differ only by the shift or c, run as one batch (issue 9, ``reproduce``).

``semi-regret`` runs each per-round baseline (BOSE, SP-TS, ...) on two panels per instance
that differ only in the shift ``nu_t``: the same features ``X``, seed, horizon, constants and
repetition ids.  Their batched engines (:class:`~dashboard.algorithms.semiparametric.policies.
per_round.PerRoundBatch`) compute every repetition with its own stacked BLAS/LAPACK calls, the
same whatever the batch, so one engine over both panels' environments gives each repetition
exactly the numbers of its own panel's run, at a fraction of the per-round Python and numpy
call overhead; SP-TS's repetitions of one stream (rep ``r`` of each panel) also share their
draws (measured for SP-TS at R = 10 + 10 vs two batches of 10: 1.24-1.39x at d = 5, K = 10;
1.2-1.33x at d = 20, K = 30).  Appendix I's tuning (``reproduce --tune``) runs BOSE and SP-TS
with four values of c: their engines take c per repetition (``per_repetition``), so the four
values run as one batch too, SP-TS's draws shared by all eight rows of a stream (measured at
R = 80 against four tasks of 20 over the same streams: 1.4x at d = 20, K = 30 and 1.5-1.8x at
d = 5, K = 10; BOSE 1.05x and 2.0x).

:func:`run_shared_task` builds each unit's :class:`~.runner.Simulation` exactly as a task
run alone (:func:`run_alone`, which is :func:`~.sweep.run_task`), replaces their engines by
slices of one engine over all their environments, advances the simulations in lockstep over
their common time grid and returns one record per unit; wall and oracle seconds are shared
equally among all repetitions (as a batched engine shares them among its own).
:func:`merge_plan` decides which tasks to merge: only tasks whose combined estimated cost
stays within the longest task's or the ideal time per worker, and a long merged task is cut
by repetitions among the workers, so a merged task does not become the pool's critical path.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["make_simulation", "merge_key", "merge_plan", "run_alone", "run_shared_task"]

#: Spec fields that only change the shift (environments of one instance ``X``).
_SHIFT_FIELDS = ("shift", "magnitude")


def merge_key(unit: dict[str, Any], reps: Sequence[int]) -> str | None:
    """A key shared by the tasks that can run as one batch, or None: semiparametric units of
    an algorithm with a per-round batched engine, equal but for the shift fields and the
    constants that engine takes per repetition (its ``per_repetition``: Appendix I's c)."""
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
    varying = batched.per_repetition
    rest["params"] = {k: v for k, v in (unit.get("params") or {}).items() if k not in varying}
    spec_rest = {k: v for k, v in unit["spec"].items() if k not in _SHIFT_FIELDS}
    return json.dumps([rest, spec_rest, list(reps)], sort_keys=True, default=repr)


#: A merged task is cut by repetitions (every unit, a block of the repetitions: the pieces
#: still share their streams across units) only into pieces of at least this many engine
#: rows (units x repetitions): below it the per-round call overhead is shared by too few
#: rows (SP-TS at d = 20, K = 30: a pair of panels of 10 repetitions as two halves costs
#: 1.12x one task of 20 rows; 4 values of c x 2 panels as two halves of 40 rows, 1.0x).
MIN_PIECE_ROWS = 32


def merge_plan(
    tasks: Sequence[tuple[float, Any, dict[str, Any], list[int]]], workers: int = 1
) -> list[tuple[list[int], list[int]]]:
    """Merged tasks, as ``(indices, reps)``: indices of ``tasks`` (``(seconds, priority,
    unit, reps)``) run as one batch on the repetitions ``reps``, in the order of each
    group's first task.

    Tasks of one priority and one :func:`merge_key` form a group.  No merged task is
    estimated longer (its share of the group's seconds) than the longest single task or the
    ideal time per worker (all tasks' seconds / ``workers``), whichever is larger: a merged
    task never becomes longer than the pool would take anyway.  A group is cut by
    repetitions (every unit, a block of the repetitions: the pieces still share their
    streams across units) into pieces of at least :data:`MIN_PIECE_ROWS` rows, as many as
    that bound needs and, for a group longer than half the ideal time per worker, up to
    ``workers`` so that the workers share it (Appendix I's four values of c over two panels
    form one group of 80 rows: SP-TS at d = 20 would otherwise be one task as long as all
    the others together).  Where pieces that large cannot respect the bound, the group is
    cut by units instead, in order, each part within the bound."""
    if not tasks:
        return []
    total = sum(task[0] for task in tasks)
    longest = max(max(task[0] for task in tasks), total / workers)
    groups: list[list[int]] = []
    by_key: dict[str, int] = {}  # key -> index in groups
    for i, (_, priority, unit, reps) in enumerate(tasks):
        key = merge_key(unit, reps)
        if key is None:
            groups.append([i])
            continue
        key = f"{priority!r} {key}"
        if key in by_key:
            groups[by_key[key]].append(i)
        else:
            by_key[key] = len(groups)
            groups.append([i])
    plan: list[tuple[list[int], list[int]]] = []
    for group in groups:
        seconds = sum(tasks[i][0] for i in group)
        reps = list(tasks[group[0]][3])
        n = len(reps)
        wanted = workers if len(group) > 1 and seconds > total / workers / 2 else 1
        # at most n // r pieces, r = the repetitions a piece needs for MIN_PIECE_ROWS rows:
        # array_split makes pieces of floor(n / k) or ceil(n / k) repetitions, and the smaller
        # must be large enough too (3 units x 32 repetitions in 3 pieces: one of 30 rows)
        limit = max(1, n // -(-MIN_PIECE_ROWS // len(group)))
        # the fewest pieces from min(wanted, limit) whose largest (ceil(n / k) repetitions)
        # is within the bound
        pieces = next(
            (
                k
                for k in range(min(wanted, limit), limit + 1)
                if math.ceil(n / k) * seconds / n <= longest * (1 + 1e-12)
            ),
            None,
        )
        if pieces is not None:
            for block in np.array_split(np.asarray(reps, dtype=np.int64), pieces):
                plan.append((group, block.tolist()))
            continue
        part: list[int] = []  # cut by units: consecutive parts within the bound
        cost = 0.0
        for i in group:
            if part and cost + tasks[i][0] > longest:
                plan.append((part, reps))
                part, cost = [], 0.0
            part.append(i)
            cost += tasks[i][0]
        plan.append((part, reps))
    # longest first as ``tasks`` are: by each merged task's first index (stable: a group's
    # pieces stay together)
    plan.sort(key=lambda entry: entry[0][0])
    return plan


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


def run_alone(
    unit: dict[str, Any],
    reps: Sequence[int],
    stop: Callable[[], bool] | None = None,
    slice_seconds: float = 0.5,
) -> dict[str, Any] | None:
    """One task run on its own (:func:`~.sweep.run_task`): its record.

    ``stop``: asked after every ``slice_seconds`` of simulation; True returns None at once (the
    sweep was cancelled).  Slices never change a number (:meth:`~.runner.Simulation.
    advance_for`): the record is the one of a run in one go."""
    from .records import result_to_record

    with make_simulation(unit, reps) as sim:
        if stop is None:
            return result_to_record(sim.run())
        while not sim.done:
            sim.advance_for(slice_seconds)
            if not sim.done and stop():
                return None
        return result_to_record(sim.result())


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
        # the constants the engine takes per repetition, each unit's own (merge_key: the
        # units agree on every other constant); none: the plain call (an engine of a plug-in
        # may override reset(envs, horizon) without them)
        constants = {
            name: [getattr(g.batched, name) for g in groups for _ in g.envs]
            for name in getattr(engine, "per_repetition", ())
        }
        extra = {"constants": constants} if constants else {}
        try:
            engine.reset(envs, sims[0].horizon, **extra)
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

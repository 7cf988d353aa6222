"""Sweeps: a grid of problem settings x algorithm constants x algorithms, R repetitions each,
run on Dask (dask.distributed), saved as they complete and resumable.

A sweep point is one combination of the grid's values (problem fields such as ``d`` or
``horizon``, and algorithm constants such as ``AROQ-CMAB:C``).  Each point is what
:func:`~dashboard.simulation.runner.simulate` would run with those settings and the sweep's
seed, and its row equals simulate's output number for number (wall times aside).

The work is split into tasks by (problem setting, algorithm with its constants, block of
repetition ids).  Counter-based random numbers make repetition ``r``'s numbers independent of
the split, so the tasks' pieces merge (:func:`~dashboard.simulation.results.merge_results`)
into the same rows whatever the block size, the number of workers or the order of completion.
An algorithm whose constants are not swept at a point is run once and shared by the points
that differ only in other algorithms' constants.

Where the tasks run (:func:`get_client`): ``scheduler="tcp://host:8786"`` (or the environment
variable ``BANDIT_DASHBOARD_SCHEDULER``) uses a running cluster; otherwise a
``LocalCluster`` (one single-threaded worker process per core) is started lazily on first use
and shared; ``scheduler="inprocess"`` (the default for tiny sweeps) runs them in this process.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..algorithms.base import validate_int
from .engine import (
    ENV_SCHEDULER,
    cancelled_by,
    check_address,
    close_clients,
    get_client,
    run_on_dask,
)
from .results import SimulationResult, merge_results
from .selection import accepted_kwargs, check_algorithms, resolve_info
from .specs import MAX_HORIZON, MAX_RUNS, make_spec
from .store import ExperimentWriter, result_from_record, result_to_record

__all__ = [
    "ENV_SCHEDULER",
    "MAX_POINTS",
    "Sweep",
    "SweepProgress",
    "SweepResult",
    "close_clients",
    "get_client",
    "make_sweep",
    "run_sweep",
    "run_task",
]

#: Most grid points a sweep may have.
MAX_POINTS = 100_000
#: Most bytes of curves a sweep may hold in memory (its estimate, see :meth:`Sweep.memory`).
MAX_MEMORY = 2 * 2**30
#: Sweeps with at most this many rounds x repetitions in all run in-process by default.
TINY_WORK = 200_000
#: Problem fields a grid may sweep, per problem (plus ``horizon``, alias ``T``).
GRID_FIELDS: dict[str, tuple[str, ...]] = {
    "cmab": ("d", "m", "actions", "reward", "oracle_delay", "alpha"),
    "semiparametric": ("d", "K", "instance", "shift", "magnitude", "gap", "noise"),
}


# ------------------------------------------------------------------------------ definition
@dataclass
class Sweep:
    """A validated sweep (build it with :func:`make_sweep`)."""

    problem: str
    algorithms: list[str]
    base: dict[str, Any]
    horizon: int | None
    grid: list[tuple[str, list[Any]]]
    params: dict[str, dict[str, Any]]
    runs: int
    seed: int
    grid_points: int = 400
    units: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    rows: list[tuple[dict[str, Any], list[str]]] = field(default_factory=list, repr=False)

    def definition(self) -> dict[str, Any]:
        """Everything that determines the numbers (saved in the file's header)."""
        return json.loads(
            json.dumps(
                {
                    "problem": self.problem,
                    "algorithms": self.algorithms,
                    "base": self.base,
                    "horizon": self.horizon,
                    "grid": [[k, v] for k, v in self.grid],
                    "params": self.params,
                    "runs": self.runs,
                    "seed": self.seed,
                    "grid_points": self.grid_points,
                }
            )
        )

    @property
    def points(self) -> list[dict[str, Any]]:
        """The grid points, in order (each a ``{field: value}`` dict)."""
        return [p for p, _ in self.rows]

    def work(self) -> int:
        """Rounds x repetitions over all distinct (setting, algorithm) units."""
        return sum(u["horizon"] * self.runs for u in self.units.values())

    def memory(self) -> int:
        """Estimated bytes of curves held (3 curves of ~grid_points rounds per repetition)."""
        per_unit = self.runs * (self.grid_points + 2) * 3 * 8
        return len(self.rows) * len(self.algorithms) * per_unit


def _grid_key(problem: str, key: str, algorithms: Sequence[str]) -> str:
    """Canonical name of a grid key: a problem field, ``horizon`` or ``ALGORITHM:NAME``."""
    k = str(key).strip()
    if ":" in k:
        alg, _, name = k.partition(":")
        match = [a for a in algorithms if a.lower() == alg.strip().lower()]
        if not match or not name.strip():
            raise ValueError(
                f"grid key {key!r} names no chosen algorithm; chosen: {', '.join(algorithms)}"
            )
        return f"{match[0]}:{name.strip()}"
    if k in ("horizon", "T"):
        return "horizon"
    allowed = GRID_FIELDS[problem]
    for f in allowed:
        if f.lower() == k.lower():
            return f
    raise ValueError(
        f"unknown grid field {key!r} for the {problem} problem; choose from: "
        f"{', '.join(('horizon', *allowed))}, or ALGORITHM:CONSTANT"
    )


def _check_constants(info: Any, params: dict[str, Any], spec: Any) -> None:
    """Build the algorithm once with these constants (cheap) so bad ones fail now."""
    info.declaration.validate(params)  # declared constants only, within their bounds
    cls = info.load()
    common: dict[str, Any] = {}
    if spec.problem == "cmab":
        common = {"oracle_delay": spec.oracle_delay, "executor": None, "alpha": spec.alpha}
    accepted = accepted_kwargs(cls, params)
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"{info.name} has no constant {', '.join(map(repr, unknown))}")
    try:
        cls(**{**accepted_kwargs(cls, common), **params})
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{info.name}: {str(exc).splitlines()[0]}") from None


def make_sweep(
    problem: str,
    algorithms: Sequence[str],
    horizon: int | None = None,
    runs: int = 1,
    seed: int = 0,
    grid: dict[str, Sequence[Any]] | Sequence[tuple[str, Sequence[Any]]] | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    grid_points: int = 400,
    **base: Any,
) -> Sweep:
    """Validate a sweep completely before any work (ValueError with one clear line).

    Parameters
    ----------
    problem : ``"cmab"`` or ``"semiparametric"``.
    algorithms : registered algorithm names.
    horizon : T of every point (unless ``horizon`` is swept).
    runs, seed : R repetitions per point; the seed of every point (as in ``simulate``).
    grid : ``{field: values}`` in order: problem fields (``d``, ``m``, ``K``, ``actions``,
        ``reward``, ``shift``, ``magnitude``, ``gap``, ``noise`` ...), ``horizon`` (or ``T``),
        or an algorithm constant ``"AROQ-CMAB:C"``.
    params : fixed constants per algorithm (as ``simulate``'s ``params``).
    **base : fixed problem fields (as :func:`~dashboard.simulation.specs.make_spec`).
    """
    problem = str(problem).strip().lower()
    if problem not in GRID_FIELDS:
        raise ValueError(f"unknown problem {problem!r}; choose from: cmab, semiparametric")
    runs = validate_int("runs", runs, 1, MAX_RUNS)
    seed = validate_int("seed", seed, 0)
    grid_points = validate_int("grid_points", grid_points, 2, 10_000)
    base_spec = make_spec(problem, **base)
    if isinstance(algorithms, str):
        algorithms = [algorithms]
    names = [resolve_info(a, problem).name for a in algorithms]
    if not names:
        raise ValueError("choose at least one algorithm")
    if len(set(names)) != len(names):
        raise ValueError(f"an algorithm is listed twice: {', '.join(names)}")
    items = list(grid.items()) if isinstance(grid, dict) else list(grid or [])
    keys: list[tuple[str, list[Any]]] = []
    for key, values in items:
        k = _grid_key(problem, key, names)
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            values = [values]
        vals = list(values)
        if not vals:
            raise ValueError(f"grid {k} has an empty list of values")
        if len({json.dumps(v, sort_keys=True, default=str) for v in vals}) != len(vals):
            raise ValueError(f"grid {k} lists a value twice: {vals}")
        if any(k == other for other, _ in keys):
            raise ValueError(f"grid field {k} is given twice")
        keys.append((k, vals))
    n_points = math.prod(len(v) for _, v in keys)
    if n_points > MAX_POINTS:
        raise ValueError(f"the grid has {n_points:,} points; at most {MAX_POINTS:,} are allowed")
    if horizon is None and not any(k == "horizon" for k, _ in keys):
        raise ValueError("give a horizon T or sweep it (grid horizon=...)")
    fixed = {k.lower(): dict(v) for k, v in (params or {}).items()}
    unknown = set(fixed) - {n.lower() for n in names}
    if unknown:
        raise ValueError(f"parameters given for algorithms not chosen: {sorted(unknown)}")
    params = {n: fixed.get(n.lower(), {}) for n in names if fixed.get(n.lower())}
    gridded = {k for k, _ in keys}
    sweep = Sweep(
        problem=problem,
        algorithms=names,
        base={k: v for k, v in base_spec.to_dict().items() if k not in gridded | {"problem"}},
        horizon=None if horizon is None else validate_int("horizon T", horizon, 1, MAX_HORIZON),
        grid=keys,
        params=params,
        runs=runs,
        seed=seed,
        grid_points=grid_points,
    )
    # memory before enumerating (points x algorithms x runs x recorded rounds)
    sweep.rows = [({}, [])] * n_points
    if sweep.memory() > MAX_MEMORY:
        raise ValueError(
            f"the sweep would hold about {sweep.memory() / 2**30:.1f} GiB of curves "
            f"(limit {MAX_MEMORY / 2**30:.0f} GiB): use fewer points, algorithms or runs"
        )
    sweep.rows = []
    checked: set[str] = set()
    specs: dict[str, Any] = {}
    for combo in itertools.product(*[v for _, v in keys]):
        point = {k: v for (k, _), v in zip(keys, combo)}
        fields = {k: v for k, v in point.items() if k != "horizon" and ":" not in k}
        T = point.get("horizon", sweep.horizon)
        T = validate_int("horizon T", T, 1, MAX_HORIZON)
        skey = json.dumps(fields, sort_keys=True)
        if skey not in specs:
            spec = make_spec(problem, **{**base, **fields})
            check_algorithms(spec, names)
            specs[skey] = spec
        spec = specs[skey]
        unit_keys = []
        for name in names:
            consts = dict(params.get(name, {}))
            for k, v in point.items():
                if k.startswith(name + ":"):
                    consts[k.split(":", 1)[1]] = v
            ckey = json.dumps([name, consts, spec.reward if problem == "cmab" else ""], default=str)
            if ckey not in checked:
                _check_constants(resolve_info(name, problem), consts, spec)
                checked.add(ckey)
            unit = {
                "problem": problem,
                "spec": spec.to_dict(),
                "horizon": T,
                "algorithm": name,
                "params": consts,
                "runs": runs,
                "seed": seed,
                "grid_points": grid_points,
            }
            ukey = json.dumps(unit, sort_keys=True)
            sweep.units.setdefault(ukey, unit)
            unit_keys.append(ukey)
        sweep.rows.append((point, unit_keys))
    return sweep


# ------------------------------------------------------------------------------ one task
def run_task(unit: dict[str, Any], reps: Sequence[int]) -> dict[str, Any]:
    """Run one task: one algorithm at one setting, the repetition ids ``reps``.

    A plain top-level function (Dask pickles it by reference): returns the piece's record.
    """
    from .runner import Simulation

    spec = make_spec(unit["problem"], **{k: v for k, v in unit["spec"].items() if k != "problem"})
    alg = unit["algorithm"]
    params = {alg: unit["params"]} if unit["params"] else None
    with Simulation(
        spec,
        [alg],
        unit["horizon"],
        runs=unit["runs"],
        seed=unit["seed"],
        params=params,
        grid_points=unit["grid_points"],
        reps=list(reps),
        max_work=None,  # a sweep task: the sweep was asked for explicitly, in pieces
    ) as sim:
        return result_to_record(sim.run())


# ------------------------------------------------------------------------------ running
@dataclass
class SweepProgress:
    """Progress reported after each finished task."""

    tasks_done: int
    tasks_total: int
    rows_done: int
    rows_total: int
    #: rows this task completed (several when a shared unit finishes; on the first report of
    #: a resumed sweep, the rows already complete in the file)
    new_rows: list[SweepRow] = field(default_factory=list)


@dataclass
class SweepRow:
    """One grid point and its result (all algorithms, all repetitions)."""

    index: int
    point: dict[str, Any]
    result: SimulationResult

    def to_dict(self) -> dict[str, Any]:
        """simulate's JSON fields plus ``point``."""
        return {"point": self.point, **self.result.to_dict()}


@dataclass
class SweepResult:
    """The rows of a sweep, in grid order (only finished rows if cancelled)."""

    sweep: Sweep
    rows: list[SweepRow]
    cancelled: bool = False
    tasks_run: int = 0
    tasks_skipped: int = 0

    @property
    def complete(self) -> bool:
        return len(self.rows) == len(self.sweep.rows)

    def to_json(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]

    def to_table(self) -> str:
        """One line per (point, algorithm)."""
        pkeys = [k for k, _ in self.sweep.grid]
        head = [*pkeys, "algorithm", "regret (mean)", "regret (std)", "queries", "adaptivity"]
        table = [head]
        for row in self.rows:
            for s in row.result.to_dict()["results"]:
                table.append(
                    [
                        *(str(row.point[k]) for k in pkeys),
                        s["algorithm"],
                        f"{s['final_regret_mean']:.1f}",
                        f"{s['final_regret_std']:.1f}",
                        f"{s['oracle_queries_mean']:.0f}",
                        f"{s['oracle_adaptivity_mean']:.0f}",
                    ]
                )
        widths = [max(len(r[i]) for r in table) for i in range(len(head))]
        lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in table]
        lines.insert(1, "  ".join("-" * w for w in widths))
        s = self.sweep
        status = "" if self.complete else f" ({len(self.rows)} of {len(s.rows)} points done)"
        title = (
            f"{s.problem} sweep, {len(s.rows)} point(s) x {len(s.algorithms)} algorithm(s), "
            f"{s.runs} run(s), seed {s.seed}{status}"
        )
        return title + "\n" + "\n".join(lines)


def _blocks(reps: list[int], size: int) -> list[list[int]]:
    return [reps[i : i + size] for i in range(0, len(reps), size)]


def _default_block(sweep: Sweep, n_units: int, workers: int) -> int:
    """Whole repetition batches when there are enough units to keep the workers busy, else
    split the repetitions so that there are about two tasks per worker."""
    if n_units >= 2 * workers:
        return sweep.runs
    per_unit = math.ceil(2 * workers / max(n_units, 1))
    return max(1, math.ceil(sweep.runs / per_unit))


class _Rows:
    """Collects pieces per unit and assembles rows as soon as all their units are complete."""

    def __init__(self, sweep: Sweep) -> None:
        self.sweep = sweep
        self.pieces: dict[str, list[SimulationResult]] = {k: [] for k in sweep.units}
        self.have: dict[str, set[int]] = {k: set() for k in sweep.units}
        self.rows: dict[int, SweepRow] = {}
        self.waiting: dict[str, list[int]] = {}
        for i, (_, ukeys) in enumerate(sweep.rows):
            for u in ukeys:
                self.waiting.setdefault(u, []).append(i)

    def add(self, ukey: str, res: SimulationResult) -> list[SweepRow]:
        """Add a piece (a duplicate repetition is ignored); return rows it completed."""
        reps = set(res.reps or [])
        if ukey not in self.pieces or reps & self.have[ukey]:
            return []
        self.pieces[ukey].append(res)
        self.have[ukey] |= reps
        if not self.complete(ukey):
            return []
        done = []
        for i in self.waiting.get(ukey, []):
            point, ukeys = self.sweep.rows[i]
            if i not in self.rows and all(self.complete(u) for u in ukeys):
                parts = [p for u in ukeys for p in self.pieces[u]]
                merged = merge_results(parts, algorithms=self.sweep.algorithms)
                self.rows[i] = SweepRow(i, point, merged)
                done.append(self.rows[i])
        return done

    def complete(self, ukey: str) -> bool:
        return len(self.have[ukey]) == self.sweep.runs

    def missing(self, ukey: str) -> list[int]:
        return [r for r in range(self.sweep.runs) if r not in self.have[ukey]]


def load_sweep(header: dict[str, Any], pieces: list[dict[str, Any]]) -> SweepResult:
    """Rows of a saved sweep (only the finished ones if it was interrupted)."""
    d = header["definition"]
    sweep = make_sweep(
        d["problem"],
        d["algorithms"],
        horizon=d["horizon"],
        runs=d["runs"],
        seed=d["seed"],
        grid=[(k, v) for k, v in d["grid"]],
        params=d["params"],
        grid_points=d["grid_points"],
        **d["base"],
    )
    rows = _Rows(sweep)
    for p in pieces:
        rows.add(p["piece"]["unit"], result_from_record(p["result"]))
    return SweepResult(sweep, [rows.rows[i] for i in sorted(rows.rows)])


def run_sweep(
    sweep: Sweep,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    client: Any = None,
    block: int | None = None,
    out: str | Path | None = None,
    progress: Callable[[SweepProgress], None] | None = None,
    cancel: Any = None,
    retries: int = 2,
) -> SweepResult:
    """Run a sweep; return its rows in grid order.

    Parameters
    ----------
    scheduler : ``"tcp://host:port"`` of a running Dask scheduler, ``"inprocess"``, or None
        (``$BANDIT_DASHBOARD_SCHEDULER`` if set, else in-process for tiny sweeps and a shared
        local cluster otherwise).
    workers : size of the local cluster (default: one per core); giving it uses the cluster
        even for a tiny sweep.
    client : an existing ``distributed.Client`` to use instead.
    block : repetitions per task (default: whole batches, or smaller to feed the workers).
    out : experiment file: finished pieces are appended as they complete; if it exists and
        was made by the same sweep, its pieces are reused and only missing ones run.
    progress : called after each finished task with a :class:`SweepProgress`.
    cancel : a ``threading.Event`` (or a callable returning True) to stop: pending tasks
        are cancelled, finished pieces stay in ``out``, and the result has ``cancelled``.
    retries : Dask retries of a failed task (a lost worker's tasks are rescheduled anyway).
    """
    if scheduler not in (None, "inprocess"):
        check_address(scheduler)
    rows = _Rows(sweep)
    writer: ExperimentWriter | None = None
    if out is not None:
        if Path(out).exists() and Path(out).stat().st_size > 0:
            writer, pieces = ExperimentWriter.resume(out, "sweep", sweep.definition())
            for p in pieces:
                rows.add(p["piece"]["unit"], result_from_record(p["result"]))
        else:
            writer = ExperimentWriter.create(out, "sweep", sweep.definition())
    skipped = sum(len(v) for v in rows.pieces.values())
    todo_units = [u for u in sweep.units if not rows.complete(u)]
    inprocess = client is None and (
        scheduler == "inprocess"
        or (
            scheduler is None
            and workers is None
            and not os.environ.get(ENV_SCHEDULER)
            and sweep.work() <= TINY_WORK
        )
    )
    if not inprocess and client is None and todo_units:
        client = get_client(scheduler, workers)
    n_workers = 1
    if client is not None:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    size = validate_int("block", block, 1) if block is not None else None
    size = size or _default_block(sweep, len(todo_units), n_workers)
    tasks = [(u, b) for u in todo_units for b in _blocks(rows.missing(u), size)]
    total = len(tasks)
    state = {"done": 0}
    cancelled = False

    def finish(ukey: str, rec: dict[str, Any]) -> None:
        res = result_from_record(rec)
        if writer is not None:
            writer.append({"unit": ukey, "reps": res.reps}, rec)
        new = rows.add(ukey, res)
        state["done"] += 1
        if progress is not None:
            progress(SweepProgress(state["done"], total, len(rows.rows), len(sweep.rows), new))

    try:
        if progress is not None:
            done = [rows.rows[i] for i in sorted(rows.rows)]
            progress(SweepProgress(0, total, len(rows.rows), len(sweep.rows), done))
        if inprocess:
            for ukey, reps in tasks:
                if cancelled_by(cancel):
                    cancelled = True
                    break
                finish(ukey, run_task(sweep.units[ukey], reps))
        elif tasks:
            cancelled = run_on_dask(
                client,
                [(run_task, (sweep.units[u], reps), u) for u, reps in tasks],
                finish,
                cancel,
                retries,
            )
    finally:
        if writer is not None:
            writer.close()
    return SweepResult(
        sweep,
        [rows.rows[i] for i in sorted(rows.rows)],
        cancelled=cancelled,
        tasks_run=state["done"],
        tasks_skipped=skipped,
    )

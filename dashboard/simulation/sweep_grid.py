"""A sweep's definition: the grid of problem settings x algorithm constants x algorithms,
validated completely before any work (:func:`make_sweep`), and its split into units (one
algorithm at one setting) that points share.  Running it: :mod:`.sweep`.

Its work estimate (:func:`estimate_sweep`) is the Live tab's and ``simulate``'s
(:func:`~.budget.estimate_run`), unit by unit: a point alone is estimated exactly as the same
settings would be in one run, and the sweep as the sum over its distinct units (a unit shared
by several points counts once, as it runs once).  :func:`check_sweep_work` refuses a sweep
above a limit with that estimate in the message.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from ..algorithms.base import validate_int
from .budget import DEFAULT_MAX_MEMORY, Estimate, bytes_text, duration_text, estimate_run
from .selection import accepted_kwargs, check_algorithms, resolve_info
from .specs import MAX_HORIZON, MAX_RUNS, make_spec

__all__ = [
    "GRID_FIELDS",
    "MAX_MEMORY",
    "MAX_POINTS",
    "Sweep",
    "SweepEstimate",
    "check_sweep_work",
    "estimate_sweep",
    "make_sweep",
    "unit_estimate",
]

#: Most grid points a sweep may have.
MAX_POINTS = 100_000
#: Most bytes of curves a sweep may hold in memory (its estimate, see :meth:`Sweep.memory`).
MAX_MEMORY = 2 * 2**30
#: Problem fields a grid may sweep, per problem (plus ``horizon``, alias ``T``).
GRID_FIELDS: dict[str, tuple[str, ...]] = {
    "cmab": ("d", "m", "actions", "reward", "oracle_delay", "alpha"),
    "semiparametric": ("d", "K", "instance", "shift", "magnitude", "gap", "noise"),
}


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


# ------------------------------------------------------------------------------ estimates
def _unit_spec(unit: dict[str, Any], cache: dict[str, Any] | None = None) -> Any:
    """The unit's problem fields as attributes (a unit's spec was validated by
    :func:`make_sweep`; the estimate reads only its sizes and options)."""
    return SimpleNamespace(**unit["spec"])


def unit_estimate(
    unit: dict[str, Any], n_reps: int, cache: dict[str, Any] | None = None
) -> Estimate:
    """The estimate of one unit (one algorithm at one setting) on ``n_reps`` repetitions:
    :func:`~.budget.estimate_run`'s for that algorithm alone (``cache``: specs already built,
    by their JSON)."""
    spec = _unit_spec(unit, cache)
    name = f"algorithm {unit['algorithm']} {spec.problem}"
    if cache is None or name not in cache:
        info = resolve_info(unit["algorithm"], spec.problem)
        if cache is not None:
            cache[name] = info
    else:
        info = cache[name]
    params = {info.name.lower(): dict(unit["params"] or {})}
    return estimate_run(spec, [info], unit["horizon"], n_reps, params, unit["grid_points"])


@dataclass(frozen=True)
class SweepEstimate:
    """A sweep's estimated work: ``seconds`` of simulation over all its tasks (each distinct
    unit once), ``points``, the ``largest`` point's seconds alone (what the Live tab would
    estimate for its settings) and that point (``largest_point``), and ``memory``: the
    largest point's run memory (a worker holds at most one point's run of an algorithm)."""

    seconds: float
    memory: float
    points: int
    largest: float
    largest_point: dict[str, Any]

    def size(self) -> str:
        """``"3 points, the largest about 21.9 h alone"`` (one point: ``"1 point"``)."""
        if self.points == 1:
            return "1 point"
        return f"{self.points:,} points, the largest about {duration_text(self.largest)} alone"


def estimate_sweep(sweep: Sweep) -> SweepEstimate:
    """The sweep's work and memory estimate (see the module docstring)."""
    cache: dict[str, Any] = {}
    per_unit = {k: unit_estimate(u, sweep.runs, cache) for k, u in sweep.units.items()}
    seconds = sum(e.seconds for e in per_unit.values())
    largest, largest_point, memory = 0.0, {}, 0.0
    held: dict[str, float] = {}
    for point, keys in sweep.rows:
        ests = [per_unit[k] for k in keys]
        s = sum(e.seconds for e in ests)
        if s > largest or not largest_point:
            largest, largest_point = s, dict(point)
        # one run of the point's algorithms (as the Live tab would hold it): one feature
        # matrix, every algorithm's states and curves (the same for every point of one
        # setting and horizon)
        units = [sweep.units[k] for k in keys]
        mkey = json.dumps([units[0]["spec"], units[0]["horizon"]], default=str) if units else ""
        if units and mkey not in held:
            spec = _unit_spec(units[0], cache)
            infos = [resolve_info(u["algorithm"], spec.problem) for u in units]
            T = units[0]["horizon"]
            held[mkey] = estimate_run(spec, infos, T, sweep.runs, None, sweep.grid_points).memory
            memory = max(memory, held[mkey])
    return SweepEstimate(seconds, memory, len(sweep.rows), largest, largest_point)


def check_sweep_work(
    sweep: Sweep,
    max_work: float | None,
    max_memory: float | None = DEFAULT_MAX_MEMORY,
    override: str | None = None,
) -> SweepEstimate:
    """The sweep's estimate, or ValueError when it is above ``max_work`` seconds (in all) or
    ``max_memory`` bytes (at its largest point), naming the estimate and the way out
    (``override``: how to lift the limit; None: there is none, only a smaller sweep)."""
    est = estimate_sweep(sweep)
    how = "" if override is None else f", or override with {override}"
    if max_work is not None and est.seconds > max_work:
        raise ValueError(
            f"this sweep would take about {duration_text(est.seconds)} of simulation "
            f"({est.size()}), above the limit of {duration_text(max_work)}; lower T, R or "
            f"the number of points{how}"
        )
    if max_memory is not None and est.memory > max_memory:
        raise ValueError(
            f"this sweep would need about {bytes_text(est.memory)} of memory at one point, "
            f"above the limit of {bytes_text(max_memory)}; lower R, d or K{how}"
        )
    return est

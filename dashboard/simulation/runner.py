"""Run several algorithms for R repetitions on one instance: batch and streaming paths.

:class:`Simulation` owns ``R`` runs of every chosen algorithm on the instance a spec builds
from ``seed``.  It advances them together to increasing rounds and records the exact cumulative
pseudo-regret at a fixed grid of rounds (:func:`time_grid`).  The batch path
(:func:`simulate`) and the streaming path (:func:`stream`, or the dashboard calling
:meth:`Simulation.advance_for` on a timer) run the very same code, and all randomness is
counter based, so both give identical numbers for the same seed whatever the chunking.

The checks of what to run live in :mod:`.selection`, the R runs of one algorithm in
:mod:`.group` (:class:`~.group.AlgorithmGroup`); this module is the run loop.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np

from ..algorithms.cmab.oracle import make_executor
from . import budget
from .fields import check_bool, check_int
from .group import AlgorithmGroup, check_engine
from .results import AlgorithmResult, SimulationResult, merge_results
from .selection import check_algorithms, check_names, check_params, rep_ids
from .specs import FIELDS, MAX_HORIZON, MAX_RUNS, ProblemSpec, check_spec

__all__ = [
    "MAX_HORIZON",
    "MAX_RUNS",
    "Simulation",
    "check_algorithms",
    "merge_results",
    "rep_ids",
    "simulate",
    "stream",
    "time_grid",
]

#: Allowed ``grid_points`` (recorded rounds per curve).
MAX_GRID_POINTS = 100_000
#: Longest ``advance_for`` slice, in seconds.
MAX_SLICE_SECONDS = 3600.0


def time_grid(horizon: int, points: int = 400) -> np.ndarray:
    """Rounds at which curves are recorded: half log-spaced, half linear, always ending at T.

    The log half keeps early behaviour visible on log axes, the linear half keeps the curve
    smooth on linear axes; the union has at most ``points`` + 1 distinct rounds.
    """
    horizon = FIELDS["horizon"].check(horizon)
    points = check_int("grid_points", points, 2, MAX_GRID_POINTS)
    half = max(2, points // 2)
    g = np.unique(
        np.concatenate(
            [
                np.geomspace(1, horizon, half),
                np.linspace(1, horizon, half),
                [horizon],
            ]
        ).round()
    ).astype(np.int64)
    return g[(g >= 1) & (g <= horizon)]


_OPTIONS = ("params", "grid_points", "batched", "max_work", "reps", "engine")


def _check_kwargs(kwargs: dict[str, Any]) -> None:
    unknown = sorted(set(kwargs) - set(_OPTIONS))
    if unknown:
        raise ValueError(f"unknown option(s): {', '.join(unknown)}; allowed: {', '.join(_OPTIONS)}")


def _dims(built: tuple[Any, Any]) -> tuple[int, int]:
    """``(d, K)`` of a built instance (cmab: ``K`` = 0)."""
    first = built[0]
    if hasattr(first, "X"):
        return int(first.d), int(first.K)
    return int(first.d), 0


def _check_seconds(seconds: Any) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, int | float | np.floating):
        raise ValueError(f"seconds must be a number from 0 to 3600, got {seconds!r}")
    try:
        v = float(seconds)
    except OverflowError:
        v = math.inf
    if not (0.0 <= v <= MAX_SLICE_SECONDS):
        raise ValueError(f"seconds must be a number from 0 to 3600, got {seconds!r}")
    return v


class Simulation:
    """``runs`` repetitions of several algorithms on the instance ``spec`` builds from ``seed``.

    Parameters
    ----------
    spec : CMABSpec or SemiparametricSpec
        The problem.
    algorithms : sequence of str
        Registered algorithm names (case-insensitive), all of the spec's problem.
    horizon : int
        T, the number of rounds.
    runs : int
        R, the number of repetitions; repetition ``r`` uses noise streams ``(seed, r)``.
    seed : int
        Instance and noise seed.
    params : dict, optional
        Per-algorithm constructor arguments, ``{"AROQ-CMAB": {"C": 1.5}}``.
    grid_points : int
        About how many rounds are recorded (see :func:`time_grid`).
    batched : bool
        Use a batched implementation across repetitions where one exists (same numbers).
    engine : {"fast", "textbook"}
        ``"fast"`` (default): each algorithm's fast engine where it has one; ``"textbook"``:
        the textbook engines, one repetition at a time, round by round as the paper reads
        (the same numbers, more slowly; ``registry.AlgorithmInfo.textbook_file``).
    max_work : float or None
        Refuse (ValueError, before anything is built) a run whose estimated wall time exceeds
        this many seconds or whose memory exceeds :data:`~.budget.DEFAULT_MAX_MEMORY`
        (:func:`~.budget.estimate_run`); ``None`` removes both limits.

    Every argument is checked before anything runs: wrong types and out-of-range values
    raise ValueError.  After :meth:`close` the results stay readable but advancing raises
    ValueError.
    reps : sequence of int, optional
        Run only these repetition ids (each in ``0 .. runs-1``); default all.  Repetition
        ``r``'s numbers do not depend on which others run (counter-based randomness), so the
        results of disjoint subsets merge (:func:`merge_results`) into the result of all R.
    """

    def __init__(
        self,
        spec: ProblemSpec,
        algorithms: Sequence[str],
        horizon: int,
        runs: int = 1,
        seed: int = 0,
        params: dict[str, dict[str, Any]] | None = None,
        grid_points: int = 400,
        batched: bool = True,
        max_work: float | None = budget.DEFAULT_MAX_WORK,
        reps: Sequence[int] | None = None,
        engine: str = "fast",
    ) -> None:
        self._closed = False
        self._executor: Executor | None = None
        spec = check_spec(spec)
        self.horizon = FIELDS["horizon"].check(horizon)
        self.runs = FIELDS["runs"].check(runs)
        self.seed = FIELDS["seed"].check(seed)
        grid_points = check_int("grid_points", grid_points, 2, MAX_GRID_POINTS)
        batched = check_bool("batched", batched)
        self.engine = check_engine(engine)
        max_work = budget.check_limit("max_work", max_work)
        self.reps = rep_ids(reps, self.runs)
        self.spec = spec
        infos = check_algorithms(spec, check_names(algorithms), params)
        params = check_params(params, infos)
        self.grid = time_grid(self.horizon, grid_points)
        self.built = spec.build(self.seed)  # cheap: O(K d); a features CSV is read capped
        self.estimate = budget.estimate_run(
            spec, infos, self.horizon, len(self.reps), params, grid_points, dims=_dims(self.built)
        )
        budget.enforce(
            self.estimate,
            max_work,
            None if max_work is None else budget.DEFAULT_MAX_MEMORY,
            override="max_work=None (CLI: --max-work SECONDS or --force)",
        )
        common: dict[str, Any] = {}
        if spec.problem == "cmab":
            self._executor = make_executor(spec.executor, spec.workers)
            common = {
                "oracle_delay": spec.oracle_delay,
                "executor": self._executor,
                "alpha": spec.alpha,
            }
        self.groups: list[AlgorithmGroup] = []
        for info in infos:
            envs = [spec.environment(self.built, self.seed, r) for r in self.reps]
            self.groups.append(
                AlgorithmGroup(
                    info,
                    params.get(info.name.lower(), {}),
                    common,
                    envs,
                    self.horizon,
                    batched,
                    self.engine,
                )
            )
        self.t = 0
        self._times: list[int] = []
        self._regret: list[np.ndarray] = []
        self._alpha: list[list[np.ndarray | None]] = []  # per grid round, per group
        self._rate = 0.0  # rounds per second, measured

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Release the oracle executor (idempotent); the results stay readable."""
        self._closed = True
        if getattr(self, "_executor", None) is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def __enter__(self) -> Simulation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (advancing then raises ValueError)."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("this Simulation is closed; create a new one to simulate again")

    @property
    def done(self) -> bool:
        """Whether the whole horizon has been simulated."""
        return self.t >= self.horizon

    @property
    def algorithms(self) -> list[str]:
        """Names of the simulated algorithms."""
        return [g.info.name for g in self.groups]

    # ------------------------------------------------------------------ advancing
    def _next_grid(self) -> int:
        i = int(np.searchsorted(self.grid, self.t, side="right"))
        return int(self.grid[i]) if i < len(self.grid) else self.horizon

    def advance_to(self, target: int) -> int:
        """Advance every run to round ``min(target, T)``, recording grid points on the way."""
        self._check_open()
        target = min(check_int("target round", target, 0, None), self.horizon)
        while self.t < target:
            nxt = self._next_grid()
            stop = min(nxt, target)
            for g in self.groups:
                g.advance(stop)
            self.t = stop
            if stop == nxt:
                self._times.append(stop)
                self._regret.append(np.stack([g.cum_regret() for g in self.groups]))
                self._alpha.append([g.alpha_regret() for g in self.groups])
        return self.t

    def advance_for(self, seconds: float, until: int | None = None) -> int:
        """Advance towards round ``until`` (default T) for about ``seconds`` of wall time.

        The one frame pacer: the dashboard's frames (in-process or on a Dask worker, see
        :mod:`.remote`) and timed streaming all come here.  Every call plays at least one
        chunk; chunks aim at 70% of the remaining budget from the measured rate (it
        fluctuates), so a frame rarely overruns.  Chunking never changes the numbers.
        """
        self._check_open()
        seconds = _check_seconds(seconds)
        target = self.horizon
        if until is not None:
            target = min(check_int("until", until, 0, None), self.horizon)
        deadline = time.perf_counter() + seconds
        while self.t < target:
            budget = deadline - time.perf_counter()
            rate = self._rate
            chunk = max(1, min(target - self.t, int(0.7 * rate * budget))) if rate > 0 else 1
            before, start = self.t, time.perf_counter()
            self.advance_to(self.t + chunk)
            elapsed = time.perf_counter() - start
            if elapsed > 0 and self.t > before:
                r = (self.t - before) / elapsed
                self._rate = r if rate == 0 else 0.5 * rate + 0.5 * r
            if time.perf_counter() >= deadline:
                break
        return self.t

    def step(self) -> int:
        """Advance to the next decision point (oracle call, epoch or phase) of the first
        algorithm's first repetition, bringing every other run to the same round.

        It stops where that policy's ``advance`` stops early (just before a decision) or at the
        first recorded round after a new oracle call / event, whichever comes first.
        """
        self._check_open()
        g0 = self.groups[0]
        if g0.batched is not None:
            return self.advance_to(self._next_grid())
        p = g0.policies[0]
        calls, events = p.log.queries, len(p.events)
        while not self.done:
            nxt = self._next_grid()
            start = time.perf_counter()
            p.advance(nxt)
            g0.wall[0] += time.perf_counter() - start
            if p.t < nxt:
                self.advance_to(p.t)
                break
            self.advance_to(nxt)
            if p.log.queries != calls or len(p.events) != events:
                break
        return self.t

    def run(self) -> SimulationResult:
        """Batch path: simulate the whole horizon and return the result."""
        self._check_open()
        self.advance_to(self.horizon)
        return self.result()

    # ------------------------------------------------------------------ results
    def instance_summary(self) -> dict[str, Any]:
        """Plain description of the instance (optimal action / best arm, means ...)."""
        env = self.groups[0].envs[0]
        out: dict[str, Any] = {}
        for attr in ("optimal_action", "optimal_reward", "best_arm"):
            v = getattr(env, attr, None)
            if v is None and hasattr(env, "instance"):
                v = getattr(env.instance, attr, None)
            if v is not None:
                v = np.asarray(v)
                if v.dtype == bool:
                    v = np.flatnonzero(v)
                out[attr] = v.tolist()
        model = getattr(env, "model", None)
        if model is not None and getattr(model, "mu", None) is not None:
            out["mu"] = np.round(model.mu, 6).tolist()
        return out

    def instance_arrays(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(X, theta*)`` of a semiparametric instance, else ``None``."""
        if self.spec.problem != "semiparametric":
            return None
        inst = self.built[0]
        return np.asarray(inst.X, dtype=float), np.asarray(inst.theta, dtype=float)

    def shift_trace(self, rounds: int = 300) -> tuple[np.ndarray, np.ndarray] | None:
        """``(t, nu_t)`` of run 1 over the last ``rounds`` simulated rounds (semiparametric
        only; ``None`` otherwise)."""
        if self.spec.problem != "semiparametric":
            return None
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0))
        env = self.groups[0].envs[0] if self.groups else None
        if self.t < 1 or env is None or not hasattr(env, "shift_values"):
            return empty
        hi = min(self.t, int(getattr(env, "t_played", self.t)))
        t = np.arange(max(1, hi - rounds + 1), hi + 1, dtype=np.int64)
        try:
            return t, np.asarray(env.shift_values(t), dtype=float)
        except ValueError:
            return empty

    @property
    def grid_recorded(self) -> int:
        """Grid rounds recorded so far (the curves' length in :meth:`result`)."""
        return len(self._times)

    def result(self, since: int = 0) -> SimulationResult:
        """The results so far (exact values at the recorded grid rounds up to ``t``).

        ``since`` > 0: the curves (``times``, ``regret``, ``queries``, ``adaptivity``,
        ``alpha_regret``) hold only the grid rounds from the ``since``-th on, those a streamed
        frame has not sent yet (:mod:`.frame_delta`: a recorded grid round's values never
        change); everything else is as for ``since = 0``.
        """
        since = check_int("since", since, 0, None)
        if since > len(self._times):
            raise ValueError(f"since={since}: only {len(self._times)} grid rounds are recorded")
        times = np.array(self._times[since:], dtype=np.int64)
        regret = (
            np.stack(self._regret[since:], axis=-1)
            if len(self._regret) > since
            else np.zeros((len(self.groups), len(self.reps), 0))
        )
        instance = self.instance_summary()
        best = instance.get("best_arm")
        out = []
        for gi, g in enumerate(self.groups):
            logs = g.logs()
            if len(times):
                cum = [log.cumulative(times) for log in logs]
                queries = np.array([c[0] for c in cum]).reshape(len(self.reps), len(times))
                adapt = np.array([c[1] for c in cum]).reshape(len(self.reps), len(times))
            else:  # a streamed frame without a new grid round (most frames of a class)
                queries = np.zeros((len(self.reps), 0), dtype=np.int64)
                adapt = np.zeros((len(self.reps), 0), dtype=np.int64)
            declared = g.declared()
            alpha = None
            if g.alpha_regret() is not None:  # (R, G) at the recorded rounds
                cols = [row[gi] for row in self._alpha[since:]]
                alpha = np.stack(cols, axis=-1) if cols else np.zeros((len(self.reps), 0))
            out.append(
                AlgorithmResult(
                    algorithm=g.info.name,
                    paper=g.info.paper,
                    times=times,
                    regret=regret[gi],
                    queries=queries,
                    adaptivity=adapt,
                    t=self.t,
                    wall_seconds=g.wall.copy(),
                    oracle_seconds=np.array([log.seconds for log in logs]),
                    logs=logs,
                    events=g.events(),
                    declared_arm=None if declared is None else declared[0],
                    declaration_time=None if declared is None else declared[1],
                    best_arm=None if best is None else int(best),
                    params=g.params,
                    alpha_regret=alpha,
                )
            )
        return SimulationResult(
            spec=self.spec.to_dict(),
            horizon=self.horizon,
            runs=len(self.reps),
            seed=self.seed,
            t=self.t,
            results=out,
            instance=instance,
            reps=list(self.reps),
            features=self.instance_arrays(),
            shift=self.shift_trace(),
        )


def simulate(
    spec: ProblemSpec,
    algorithms: Sequence[str],
    horizon: int,
    runs: int = 1,
    seed: int = 0,
    **kwargs: Any,
) -> SimulationResult:
    """Batch path: run everything to the horizon and return a :class:`SimulationResult`.

    ``kwargs``: ``params``, ``grid_points``, ``batched``, ``max_work``, ``reps``, ``engine`` (see
    :class:`Simulation`).
    """
    _check_kwargs(kwargs)
    with Simulation(spec, algorithms, horizon, runs, seed, **kwargs) as sim:
        return sim.run()


def stream(
    spec: ProblemSpec,
    algorithms: Sequence[str],
    horizon: int,
    runs: int = 1,
    seed: int = 0,
    frames: int = 50,
    **kwargs: Any,
) -> Iterator[SimulationResult]:
    """Streaming path: yield a :class:`SimulationResult` snapshot at ``frames`` increasing
    rounds (the last one at T).  The last frame equals :func:`simulate`'s result."""
    frames = check_int("frames", frames, 1, 10_000)
    _check_kwargs(kwargs)
    with Simulation(spec, algorithms, horizon, runs, seed, **kwargs) as sim:
        targets = np.unique(np.linspace(0, sim.horizon, frames + 1).round().astype(int)[1:])
        for target in targets:
            sim.advance_to(int(target))
            yield sim.result()

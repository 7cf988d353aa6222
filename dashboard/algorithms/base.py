"""Contracts shared by every policy of both paper families.

A *policy* is simulated against an *environment* for one repetition.  The simulation layer only
ever calls :meth:`Policy.reset` and :meth:`Policy.advance`; everything the plots need is read
from the public attributes listed on :class:`Policy`.

``advance(until)`` plays rounds ``t+1, ..., t'`` with ``t' <= until`` and returns ``t'``.  It
stops early at the policy's next *decision point* (an oracle call for AROQ, an epoch boundary for
SROQ, a phase boundary for SBE, every round for per-round baselines), so that

* the batch path is ``while p.t < T: p.advance(T)``;
* the streaming path calls ``advance(t_frame)`` for increasing frame times, and because all
  randomness is counter based (:mod:`dashboard.algorithms.randomness`) and a block may be split
  anywhere without changing any decision, both paths give identical numbers;
* the dashboard's *Step* button is one ``advance(T)``.
"""

from __future__ import annotations

import inspect
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .declare import AlgorithmDeclaration

__all__ = ["ExpensiveLog", "Policy", "PolicyEvent", "validate_int", "validate_probability"]


def validate_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """Return ``value`` as an int, or raise a ValueError saying what is allowed.

    Integers (any size: bounds are compared before conversion) and integral finite floats are
    accepted; strings, booleans and other types are refused."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        v = int(value)
    elif isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value) % 1 == 0:
        v = value  # compared as a float first, converted after the bounds check
    else:
        shown = repr(value) if len(repr(value)) < 60 else repr(value)[:57] + "..."
        raise ValueError(f"{name} must be an integer, got {shown}")
    if v < low or (high is not None and v > high):
        allowed = f">= {low}" if high is None else f"between {low} and {high}"
        shown = str(v) if abs(v) < 10**18 else f"a {len(str(int(abs(v))))}-digit number"
        raise ValueError(f"{name} must be {allowed}, got {shown}")
    return int(v)


def validate_positive(name: str, value: Any, allow_zero: bool = False) -> float:
    """Return ``value`` as a finite float > 0 (or >= 0 with ``allow_zero``), or raise a
    ValueError saying what is allowed (booleans are refused: ``True`` is not a constant)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = float("nan")
    if isinstance(value, bool) or not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        allowed = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {allowed}, got {value!r}")
    return v


def validate_probability(name: str, value: Any) -> float:
    """Return ``value`` as a float in the open interval (0, 1) (e.g. a confidence ``delta``),
    or raise a ValueError saying what is allowed."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}") from None
    if not 0.0 < v < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return v


#: Largest grid whose counts :meth:`ExpensiveLog.cumulative` keeps for the next call (a live
#: frame's grid has ~400 points; the largest allowed has 10^5).
COUNTS_CACHE_MAX = 4096


class ExpensiveLog:
    """Columnar record of expensive computations: oracle calls (combinatorial paper) or design
    solves / matrix inversions / per-round optimisations (semiparametric paper).

    Each record has the round ``t`` at which it was made, an *adaptivity round id* (records that
    may run in parallel share one id, Appendix A.1 of the combinatorial paper), a ``purpose``
    string, the base arm it concerns (``-1`` if none) and its wall time in seconds.

    Query complexity is :attr:`queries` (number of records) and adaptivity complexity is
    :attr:`adaptivity` (number of distinct round ids), exactly as defined in Section 2.
    Per-round baselines that record millions of calls use :meth:`record_many`.
    """

    def __init__(self) -> None:
        self._t: list[np.ndarray] = []
        self._round: list[np.ndarray] = []
        self._purpose: list[np.ndarray] = []
        self._arm: list[np.ndarray] = []
        self._seconds: list[np.ndarray] = []
        self._purposes: list[str] = []
        # compact runs of "one call in each of rounds t0..t1" (per-round baselines)
        self._ranges: list[tuple[int, int, int, float]] = []
        self._next_round = 0
        self._cache: dict[str, np.ndarray] | None = None
        #: bumped by every change (a copy with the same version holds the same records)
        self.version = 0
        # cumulative()'s sorted record rounds and its last answer, valid for one version
        self._counts: tuple[Any, ...] | None = None
        self._seconds_at: tuple[int, float] | None = None  # seconds, valid for one version

    def __getstate__(self) -> dict[str, Any]:
        # A pickled log (a live frame carries the logs that changed: a per-round baseline's
        # at every frame) leaves its caches, and record lists with no records go as empty
        # lists, not as empty arrays the server would rebuild one by one (40 of a frame's 56
        # arrays at 3 algorithms x R = 8).  arrays() rebuilds the same arrays from either.
        state = dict(self.__dict__)
        state["_counts"] = state["_seconds_at"] = state["_cache"] = None
        if not any(len(a) for a in self._t):
            for name in ("_t", "_round", "_purpose", "_arm", "_seconds"):
                state[name] = []
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("_counts", None)  # pickled before the caches existed
        state.setdefault("_seconds_at", None)
        self.__dict__.update(state)

    def new_round(self) -> int:
        """Open a new adaptivity round and return its id."""
        rid = self._next_round
        self._next_round += 1
        self.version += 1
        return rid

    def _purpose_code(self, purpose: str) -> int:
        if purpose not in self._purposes:
            self._purposes.append(purpose)
        return self._purposes.index(purpose)

    def record(
        self, t: int, round_id: int, purpose: str, seconds: float = 0.0, arm: int = -1
    ) -> None:
        """Record one call made at round ``t`` in adaptivity round ``round_id``."""
        # record_many's arrays, built directly (a batched engine records every repetition's
        # oracle calls one by one: its broadcasting cost ~28 us a call, this ~3 us)
        self._t.append(np.array([t], dtype=np.int64))
        self._round.append(np.array([round_id], dtype=np.int64))
        self._purpose.append(np.array([self._purpose_code(purpose)], dtype=np.int16))
        self._arm.append(np.array([arm], dtype=np.int64))
        self._seconds.append(np.array([seconds], dtype=float))
        self._cache = None
        self.version += 1

    def record_many(
        self,
        t: np.ndarray,
        round_id: np.ndarray,
        purpose: str | Sequence[str],
        seconds: np.ndarray | float = 0.0,
        arm: np.ndarray | int = -1,
    ) -> None:
        """Record several calls at once (arrays broadcast to the length of ``t``; ``purpose``
        one string for all or one per call)."""
        t = np.asarray(t, dtype=np.int64)
        n = t.shape[0]
        self._t.append(t)
        self._round.append(np.broadcast_to(np.asarray(round_id, dtype=np.int64), (n,)).copy())
        if isinstance(purpose, str):
            self._purpose.append(np.full(n, self._purpose_code(purpose), dtype=np.int16))
        else:
            codes = [self._purpose_code(x) for x in purpose]
            self._purpose.append(np.array(codes, dtype=np.int16).reshape(n))
        self._arm.append(np.broadcast_to(np.asarray(arm, dtype=np.int64), (n,)).copy())
        self._seconds.append(np.broadcast_to(np.asarray(seconds, dtype=float), (n,)).copy())
        self._cache = None
        self.version += 1

    def record_every_round(self, t0: int, t1: int, purpose: str, seconds: float = 0.0) -> None:
        """Record one call in each of rounds ``t0..t1`` (inclusive), each its own adaptivity
        round, stored compactly (a per-round baseline over T = 10^6 rounds costs O(1) memory).
        ``seconds`` is the total wall time of those calls."""
        if t1 < t0:
            return
        code = self._purpose_code(purpose)
        if self._ranges and self._ranges[-1][1] == t0 - 1 and self._ranges[-1][2] == code:
            a, _, c, s = self._ranges[-1]
            self._ranges[-1] = (a, t1, c, s + seconds)
        else:
            self._ranges.append((t0, t1, code, seconds))
        self._next_round += t1 - t0 + 1
        self._cache = None
        self.version += 1

    def arrays(self) -> dict[str, np.ndarray]:
        """All records as arrays ``t, round_id, purpose_code, arm, seconds``."""
        if self._cache is None:

            def cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
                return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

            self._t, self._round = [cat(self._t, np.int64)], [cat(self._round, np.int64)]
            self._purpose, self._arm = [cat(self._purpose, np.int16)], [cat(self._arm, np.int64)]
            self._seconds = [cat(self._seconds, float)]
            self._cache = {
                "t": self._t[0],
                "round_id": self._round[0],
                "purpose_code": self._purpose[0],
                "arm": self._arm[0],
                "seconds": self._seconds[0],
            }
        return self._cache

    @property
    def purposes(self) -> list[str]:
        """Purpose strings, indexed by ``purpose_code``."""
        return list(self._purposes)

    @property
    def ranges(self) -> list[tuple[int, int, str, float]]:
        """Compact per-round runs ``(t0, t1, purpose, seconds)``."""
        return [(a, b, self._purposes[c], s) for a, b, c, s in self._ranges]

    @property
    def queries(self) -> int:
        """Query complexity: total number of recorded calls."""
        return int(sum(len(a) for a in self._t) + sum(b - a + 1 for a, b, _, _ in self._ranges))

    @property
    def adaptivity(self) -> int:
        """Adaptivity complexity: number of distinct sequential rounds of calls."""
        r = self.arrays()["round_id"]
        return int(np.unique(r).size + sum(b - a + 1 for a, b, _, _ in self._ranges))

    @property
    def seconds(self) -> float:
        """Total wall time spent in the recorded calls."""
        memo = self._seconds_at  # (read for every log at every frame of a live run)
        if memo is None or memo[0] != self.version:
            total = float(self.arrays()["seconds"].sum() + sum(s for *_, s in self._ranges))
            memo = self._seconds_at = (self.version, total)
        return memo[1]

    def cumulative(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Query and adaptivity complexity counted up to (and including) each round in ``times``.

        Returns two int arrays shaped like ``times``.
        """
        times = np.asarray(times, dtype=np.int64)
        # A live run asks every frame for its grid so far, which only grows, while a rare-query
        # log seldom changes: the sorted rounds are kept per version, and the answer for a
        # longer grid with the same first rounds reuses the last one's counts (11% of a Dask
        # worker's time at 30 students otherwise).  The counts are the same integers.
        hit = self._counts
        if hit is None or hit[0] != self.version:
            a = self.arrays()
            t_sorted = np.sort(a["t"])
            if len(a["round_id"]):
                _, first = np.unique(a["round_id"], return_index=True)
                round_t = np.sort(a["t"][first])
            else:
                round_t = np.zeros(0, dtype=np.int64)
            hit = (self.version, t_sorted, round_t, b"", None, None)
        _, t_sorted, round_t, seen, seen_q, seen_a = hit
        flat = times.reshape(-1)
        n_old = len(seen) // 8  # (the grid asked last time, as bytes: a cheap comparison)
        if seen_q is None or n_old > flat.size or flat[:n_old].tobytes() != seen:
            n_old = 0
        tail = flat[n_old:]
        queries = np.searchsorted(t_sorted, tail, side="right").astype(np.int64)
        adaptivity = np.searchsorted(round_t, tail, side="right").astype(np.int64)
        for t0, t1, _, _ in self._ranges:
            n = np.minimum(np.maximum(tail - (t0 - 1), 0), t1 - t0 + 1)
            queries += n
            adaptivity += n
        if n_old:
            queries = np.concatenate((seen_q[:n_old], queries))
            adaptivity = np.concatenate((seen_a[:n_old], adaptivity))
        if flat.size <= COUNTS_CACHE_MAX:
            self._counts = (self.version, t_sorted, round_t, flat.tobytes(), queries, adaptivity)
        else:  # (a grid of up to 10^5 points: keep only the sorted rounds, not 3 copies)
            self._counts = (self.version, t_sorted, round_t, b"", None, None)
        return queries.reshape(times.shape).copy(), adaptivity.reshape(times.shape).copy()


@dataclass
class PolicyEvent:
    """Something a plot may show, recorded at a decision point.

    ``kind`` is e.g. ``"epoch"`` (SROQ), ``"phase"`` (SBE), ``"oracle"`` (AROQ), ``"declare"``
    (best arm declared).  ``data`` holds plain numpy/python values, e.g. ``{"surviving":
    array([...]), "weights": array([...]), "n_l": 1234}``.
    """

    t: int
    kind: str
    data: dict[str, Any] = field(default_factory=dict)


class Policy(ABC):
    """Base class of all policies (one repetition).

    Public state read by the simulation layer after each :meth:`advance`:

    ``t``
        rounds played so far (0 before the first round).
    ``cum_regret``
        cumulative pseudo-regret after ``t`` rounds (exact, not sampled).
    ``log``
        :class:`ExpensiveLog` of oracle calls / expensive computations.
    ``events``
        list of :class:`PolicyEvent`, appended at decision points.
    ``oracle_seconds``
        wall time spent inside expensive calls (the rest of the time is "simulation").
    """

    #: What the class says about itself (name, problem, reference, constants ...); see
    #: :mod:`dashboard.algorithms.declare`.  ``name`` and ``problem`` are copied from it.
    declaration: ClassVar[AlgorithmDeclaration | None] = None
    #: Display name, as in the paper (e.g. ``"AROQ-CMAB"``).
    name: ClassVar[str] = ""
    #: ``"cmab"`` or ``"semiparametric"``.
    problem: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        decl = cls.__dict__.get("declaration")
        if isinstance(decl, AlgorithmDeclaration):
            cls.name, cls.problem = decl.name, decl.problem

    def __new__(cls, *args: Any, **kwargs: Any) -> Policy:
        """Validate the declared constants before ``__init__`` runs (one ValueError naming
        the constant and its allowed values), so no constructor repeats the declaration."""
        decl = cls.declaration
        if decl is not None and (args or kwargs):
            try:
                bound = inspect.signature(cls.__init__).bind(None, *args, **kwargs)
            except TypeError:
                pass  # let __init__ raise its own TypeError
            else:
                given = bound.arguments
                decl.validate({c.name: given[c.name] for c in decl.constants if c.name in given})
        return super().__new__(cls)

    def __init__(self) -> None:
        self.t = 0
        self.cum_regret = 0.0
        self.horizon = 0
        self.log = ExpensiveLog()
        self.events: list[PolicyEvent] = []

    @property
    def oracle_seconds(self) -> float:
        """Seconds spent in expensive calls so far."""
        return self.log.seconds

    @abstractmethod
    def reset(self, env: Any, horizon: int) -> None:
        """Start a fresh run of ``horizon`` rounds on ``env`` (one repetition)."""

    @abstractmethod
    def advance(self, until: int) -> int:
        """Play rounds until ``until`` or the next decision point; return the new ``t``."""

    def run(self, env: Any, horizon: int) -> Policy:
        """Batch path: reset and play all ``horizon`` rounds. Returns ``self``."""
        self.reset(env, horizon)
        while self.t < horizon:
            self.advance(horizon)
        return self

    def params(self) -> dict[str, Any]:
        """The declared constants and their values (for reports and CSV export)."""
        decl = type(self).declaration
        if decl is None:
            return {}
        return {c.name: getattr(self, c.name, c.default) for c in decl.constants}

    @property
    def declared_arm(self) -> int | None:
        """Best arm declared by the policy, if any (semiparametric BAI)."""
        return None

    @property
    def declaration_time(self) -> int | None:
        """Round at which the best arm was declared, if any."""
        return None


class Stopwatch:
    """Tiny context manager measuring wall time: ``with Stopwatch() as sw: ...; sw.seconds``."""

    def __enter__(self) -> Stopwatch:
        self._start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start

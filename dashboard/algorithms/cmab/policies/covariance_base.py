"""State and warm-up shared by the covariance-adaptive policies (Section 4.1).

:class:`_CovBase` holds the statistics (:class:`~.covariance_index.CovStats`), the oracle and
Algorithm 3's pair warm-up, common to AROQ-C / SROQ-C (:mod:`.covariance`) and OLS-UCB-C
(:mod:`.ols_ucb_c`); the declared constants of the warm-up and the pair phase live here too.
See :mod:`.covariance` for the estimators.  A lower module: it imports no policy module.
"""

from __future__ import annotations

import math
import time
import weakref
from concurrent.futures import Executor
from typing import Any

import numpy as np

from ...base import Policy, PolicyEvent, validate_int, validate_positive
from ..oracle import Oracle, OracleRequest, solve_request
from .constants import PAIR, PAIR_FRACTION, WARMUP, WARMUP_FRACTION
from .covariance_index import (
    CovStats,
)
from .shared import RegretCounter, epoch_ends

__all__ = ["CovStats", "RegretCounter", "epoch_ends"]


#: Rounds simulated per vectorised block (bounds memory of (L, d) outcome matrices).
_CHUNK = 65_536


def _check_executor(executor: Executor | None) -> None:
    if executor is not None and not isinstance(executor, Executor):
        raise ValueError("executor must be a concurrent.futures.Executor or None")


#: The declared constants of the warm-up and the pair phase (in :mod:`.constants`).
_WARMUP, _WARMUP_FRACTION, _PAIR, _PAIR_FRACTION = WARMUP, WARMUP_FRACTION, PAIR, PAIR_FRACTION


#: Warm-up pair actions per action family (the answers of zero-score look-ups, exact solver).
_PAIR_ACTIONS: weakref.WeakKeyDictionary[Any, list[np.ndarray | None]] = weakref.WeakKeyDictionary()


def _fraction(name: str, value: float) -> float:
    v = validate_positive(name, value, allow_zero=True)
    if v > 1:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return v


def _pair_list(d: int, diagonal: bool) -> list[tuple[int, int]]:
    return [(i, j) for i in range(d) for j in range(i if diagonal else i + 1, d)]


class _CovBase(Policy):
    """Shared parameters and the warm-up pair actions of Algorithms 3-4."""

    problem = "cmab"

    def __init__(
        self,
        f_const: float,
        h_const: float,
        oracle_delay: float,
        executor: Executor | None,
    ) -> None:
        super().__init__()
        self.f_const = validate_positive("f_const", f_const, allow_zero=True)
        self.h_const = validate_positive("h_const", h_const, allow_zero=True)
        self.oracle_delay = validate_positive("oracle_delay", oracle_delay, allow_zero=True)
        _check_executor(executor)
        self.executor = executor

    def _start(self, env: Any, horizon: int) -> None:
        Policy.__init__(self)
        self.horizon = validate_int("horizon", horizon, 1)
        if not getattr(env.model, "linear", False):
            raise ValueError(
                f"{self.name} needs a linear reward model (linear or covariance), "
                f"got {type(env.model).__name__}"
            )
        self.env = env
        self.d = env.d
        self.oracle = Oracle(env.family, self.log, self.oracle_delay, self.executor)
        self.stats = CovStats(self.d)
        self.regret = RegretCounter(env)

    # -- warm-up of Algorithm 3, lines 4-9 (shared by AROQ-C and the OLS-UCB-C baseline) ------
    def _init_warmup(self, warmup_multiplier: float, warmup_fraction: float) -> None:
        self.warmup_multiplier = validate_positive("warmup_multiplier", warmup_multiplier, True)
        self.warmup_fraction = _fraction("warmup_fraction", warmup_fraction)

    def _reset_warmup(self) -> None:
        """Set ``W`` = :attr:`warmup_length` and record ``"warm-up clamped"`` if the cap binds.

        ``W = min(ceil(warmup_multiplier * ceil(d(d+1) log^3(T) / 2)), floor(warmup_fraction
        * T))``; :attr:`warmup_paper`, :attr:`warmup_requested` and :attr:`warmup_clamped`
        record the paper's length, the requested length and whether the cap bound.
        """
        d, T = self.d, self.horizon
        self.warmup_paper = math.ceil(d * (d + 1) * math.log(T) ** 3 / 2) if T > 1 else 0
        self.warmup_requested = math.ceil(self.warmup_multiplier * self.warmup_paper)
        cap = math.floor(self.warmup_fraction * T)
        self.warmup_length = min(self.warmup_requested, cap)
        self.warmup_clamped = self.warmup_requested > cap
        if self.warmup_clamped:
            self.events.append(
                PolicyEvent(
                    0,
                    "warm-up clamped",
                    {
                        "paper": self.warmup_paper,
                        "requested": self.warmup_requested,
                        "used": self.warmup_length,
                        "fraction": self.warmup_fraction,
                    },
                )
            )
        self._pair_acts: np.ndarray | None = None

    def _play_warmup(self, until: int) -> None:
        """Play warm-up rounds ``t+1 .. min(until, W)``: round ``t`` plays the action of the
        ``((t-1) mod P)``-th pair (the pair actions are looked up at the first warm-up round)."""
        W = self.warmup_length
        if self._pair_acts is None:
            self._pair_acts = self._pair_actions(self.t + 1)
            self.events.append(PolicyEvent(self.t + 1, "phase", {"phase": "warm-up", "length": W}))
        t0, t1 = self.t + 1, min(until, W)
        if t1 >= t0:
            rows = (np.arange(t0, t1 + 1) - 1) % len(self._pair_acts)
            self._play_rows(self._pair_acts[rows], t0)

    def warmup_action(self, t: int) -> np.ndarray:
        """The action played at warm-up round ``t`` (``1 <= t <= W``, after the warm-up began;
        AROQ-C and OLS-UCB-C only)."""
        W = getattr(self, "warmup_length", 0)
        if getattr(self, "_pair_acts", None) is None or not 1 <= t <= W:
            raise ValueError(f"t must be a warm-up round in 1..{W} that was reached, got {t}")
        return self._pair_acts[(t - 1) % len(self._pair_acts)].copy()

    def _pair_actions(self, t: int) -> np.ndarray:
        """One parallel oracle round: an action containing each pair ``(i, j)``, ``i <= j``
        ("any a in A s.t. i in a, j in a", Algorithm 3 line 7).  Infeasible pairs are skipped."""
        pairs = _pair_list(self.d, diagonal=True)
        oracle = self.oracle
        if oracle.delay or oracle.executor is not None or oracle.approximate is not None:
            reqs = [
                OracleRequest("warm-up pair action", scores=np.zeros(self.d), include=[i, j], arm=i)
                for i, j in pairs
            ]
            acts = [a for a in oracle.batch(reqs, t) if a is not None]
        else:
            acts = self._cached_pair_actions(pairs, t)
        if not acts:
            raise ValueError("the action family has no feasible action")
        return np.asarray(acts, dtype=bool)

    def _cached_pair_actions(self, pairs: list[tuple[int, int]], t: int) -> list[np.ndarray]:
        """The same parallel round through a per-family cache: the answers depend only on the
        family and the pair (zero scores, exact solver), so the ``R`` repetitions and the
        algorithms of a run look them up once (start-up at d = 20: 210 look-ups per
        repetition).  The log records the same ``P`` calls in one adaptivity round, with the
        wall time this call really took, shared equally."""
        start = time.perf_counter()
        family = self.env.family
        table = _PAIR_ACTIONS.get(family)
        if table is None or len(table) != len(pairs):
            table = [
                solve_request(
                    family,
                    OracleRequest("warm-up pair action", scores=np.zeros(self.d), include=[i, j]),
                )[0]
                for i, j in pairs
            ]
            _PAIR_ACTIONS[family] = table
        secs = (time.perf_counter() - start) / len(pairs)
        self.oracle.elapsed += secs * len(pairs)
        log = self.oracle.log
        rid = log.new_round()
        arms = np.array([i for i, _ in pairs], dtype=np.int64)
        log.record_many(np.full(len(pairs), t), rid, "warm-up pair action", secs, arms)
        return [a.copy() for a in table if a is not None]

    def _play_rows(self, actions: np.ndarray, t0: int) -> None:
        """Play a fixed schedule ``actions`` (rows) from round ``t0``; update stats and regret."""
        for s in range(0, actions.shape[0], _CHUNK):
            block = actions[s : s + _CHUNK]
            y = self.env.play(block, t0 + s)
            self.stats.add_rows(y)
            self._after_rows(block)
        self.t = t0 + actions.shape[0] - 1

    def _after_rows(self, block: np.ndarray) -> None:
        self.regret.add_rows(block)
        self.cum_regret = self.regret.value

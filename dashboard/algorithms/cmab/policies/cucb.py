"""The fast engine of CUCB (Chen, Wang & Yuan 2013): ``R`` repetitions at once, lock-step.

The algorithm itself, round by round, is :mod:`dashboard.algorithms.cmab.textbook.cucb`; this
engine reproduces its numbers exactly (``tests/unit/test_textbook_equals_fast.py``).

Every round ``t`` the oracle is queried for ``a_t = argmax_a sum_{i in a} UCB_{t,i}`` with the
same index as AROQ-CMAB (Eq. (1), CombUCB1 width ``sqrt(C log t / n_{t,i})``), so query and
adaptivity complexities are both ``T``.

:class:`BatchedCUCB` runs ``R`` repetitions at once on ``(R, d)`` state arrays with one
vectorised ``family.argmax_linear_batch`` per round.  :class:`CUCB` here (one repetition, the
textbook class's fast stand-in) is the same engine with ``R = 1``, which makes tie-breaking,
feedback and arithmetic identical: ``R`` separate CUCB runs give exactly the numbers of one
``BatchedCUCB`` run.

Feedback: for a pull-indexed model (outcome = f(rep, arm, pull number), e.g. LinearRewards) the
engine pre-draws, per repetition and arm, a window of the next ``B`` outcomes with one
``model.sample`` call and reads them from the table (refilled when used up); these are exactly
the values ``env.play_fixed`` would return (counter-based RNG), and each environment's
``pulls`` counter is kept in sync.  Other models go through ``env.play_fixed`` round by round.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np

from ...base import ExpensiveLog, PolicyEvent, validate_int
from ..rewards.base import RewardModel
from ..textbook import cucb as textbook
from .common import UNPLAYED_INDEX, check_linear_env, pull_indexed, validate_positive

__all__ = ["CUCB", "BatchedCUCB"]

_PURPOSE = "UCB argmax"


class BatchedCUCB:
    """CUCB for ``R`` repetitions at once (state arrays of shape ``(R, d)``).

    Parameters
    ----------
    C : float
        Confidence constant of the index ``mu_hat_{t,i} + sqrt(C log t / n_{t,i})``.
    oracle_delay : float
        Extra seconds per oracle call; the batch sleeps ``R * oracle_delay`` per round, as ``R``
        sequential calls would.
    executor : concurrent.futures.Executor, optional
        Accepted for a uniform constructor; unused (CUCB has one query per adaptivity round).
    window : int, optional
        Outcomes pre-drawn per (repetition, arm) for pull-indexed models; default
        ``clip(T // 8, 64, 1024)``.  Does not change any number, only speed and memory.

    Attributes
    ----------
    t : int
        Rounds played (common to all repetitions).
    cum_regret : ndarray (R,)
        Exact cumulative pseudo-regret of each repetition.
    logs : list of ExpensiveLog
        One log per repetition; each round is one call of purpose ``"UCB argmax"`` recorded in
        bulk with ``record_every_round``; the measured time of the vectorised call is shared
        equally among the repetitions.
    events : list of list of PolicyEvent
        Empty (CUCB has no epochs).
    """

    name = "CUCB"
    problem = "cmab"
    #: The textbook algorithm whose numbers this engine reproduces (the registry links them).
    speeds_up = "CUCB"

    def __init__(
        self,
        C: float = 1.5,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
        window: int | None = None,
    ) -> None:
        self.C = validate_positive("C", C)
        self.oracle_delay = validate_positive("oracle_delay", oracle_delay, allow_zero=True)
        self.executor = executor
        self.window = None if window is None else validate_int("window", window, 1)
        self.t = 0
        self.horizon = 0
        self.envs: list[Any] = []
        self.cum_regret = np.zeros(0)
        self.logs: list[ExpensiveLog] = []
        self.events: list[list[PolicyEvent]] = []

    def params(self) -> dict[str, Any]:
        """Tunable parameters."""
        return {"C": self.C, "oracle_delay": self.oracle_delay}

    def reset(self, envs: Sequence[Any], horizon: int) -> None:
        """Start ``len(envs)`` repetitions of ``horizon`` rounds.

        All environments must share one action family and one linear reward model (they differ
        by repetition number).
        """
        envs = list(envs)
        if not envs:
            raise ValueError("BatchedCUCB.reset needs at least one environment")
        for env in envs:
            check_linear_env(env, self.name)
        family, model = envs[0].family, envs[0].model
        if any(e.family is not family or e.model is not model for e in envs):
            raise ValueError("all environments of a batch must share one family and one model")
        self.horizon = validate_int("horizon", horizon, 1)
        self.envs, self.family, self.model = envs, family, model
        R, d = len(envs), family.d
        self.R, self.d = R, d
        self.t = 0
        self.cum_regret = np.zeros(R)
        self.logs = [ExpensiveLog() for _ in range(R)]
        self.events = [[] for _ in range(R)]
        self.n = np.zeros((R, d), dtype=np.int64)
        self.sums = np.zeros((R, d))
        # mu_hat (UNPLAYED_INDEX while n = 0, so the index is exactly UNPLAYED_INDEX) and 1/n
        self._mean = np.full((R, d), UNPLAYED_INDEX)
        self._inv_n = np.zeros((R, d))
        self._base_pulls = np.stack([np.asarray(e.pulls, dtype=np.int64).copy() for e in envs])
        self._opt = np.array([e.optimal_reward for e in envs])
        self._linear_mean = type(model).expected_reward is RewardModel.expected_reward
        self._mu = np.asarray(model.mu, dtype=float)
        self._fast = pull_indexed(model)
        if self._fast:
            B = self.window or int(np.clip(self.horizon // 8, 64, 1024))
            self._B = B
            self._table = np.zeros((R, d, B))
            self._w0 = np.zeros((R, d), dtype=np.int64)  # n at the start of each window
            self._flat0 = (np.arange(R * d, dtype=np.int64) * B).reshape(R, d)
            self._refill(np.ones((R, d), dtype=bool))

    def _refill(self, mask: np.ndarray) -> None:
        """Draw the next ``B`` outcomes of every (rep, arm) in ``mask`` from its current pull."""
        steps = np.arange(self._B, dtype=np.int64)
        for r in np.flatnonzero(mask.any(axis=1)):
            arms = np.flatnonzero(mask[r])
            start = self._base_pulls[r, arms] + self.n[r, arms]
            pulls = start[:, None] + steps[None, :]
            grid_arms = np.broadcast_to(arms[:, None], pulls.shape)
            self._table[r, arms] = self.model.sample(
                self.envs[r].rep, grid_arms, pulls, np.zeros_like(pulls)
            )
            self._w0[r, arms] = self.n[r, arms]
        self._countdown = 0

    def _feedback(self, actions: np.ndarray, t: int) -> np.ndarray:
        """Outcomes ``(R, d)`` of round ``t`` (values where ``actions`` is False are unused)."""
        if self._fast:
            # each (rep, arm) moves at most one step per round: check only when one may be due,
            # then refill every window that is at least half used
            if self._countdown <= 0:
                used_up = self.n - self._w0 >= max(1, self._B // 2)
                if used_up.any():
                    self._refill(used_up)
                self._countdown = int(self._B - (self.n - self._w0).max())
            self._countdown -= 1
            return self._table.reshape(-1)[self._flat0 + (self.n - self._w0)]
        y = np.zeros((self.R, self.d))
        for r, env in enumerate(self.envs):
            arms = np.flatnonzero(actions[r])
            y[r, arms] = env.play_fixed(actions[r], t, 1)[0]
        return y

    def _gaps(self, actions: np.ndarray) -> np.ndarray:
        """Per-round gaps for models whose mean reward is not ``<a, mu>``."""
        return np.array([e.gap(a) for e, a in zip(self.envs, actions)])

    def advance(self, until: int) -> int:
        """Play rounds ``t+1 .. min(until, T)`` (every round is a decision point)."""
        if not self.envs:
            raise RuntimeError("call reset(envs, horizon) before advance()")
        until = min(int(until), self.horizon)
        if until <= self.t:
            return self.t
        t0 = self.t + 1
        C, R = self.C, self.R
        n, sums, family = self.n, self.sums, self.family
        seconds = 0.0
        perf = time.perf_counter
        delay = self.oracle_delay * R
        mean, inv_n, cum = self._mean, self._inv_n, self.cum_regret
        opt, mu, linear = self._opt, self._mu, self._linear_mean
        log_t = np.log(np.arange(t0, until + 1, dtype=float)) * C
        # the index is built here (finite, no NaN): skip per-call validation where possible
        argmax = getattr(family, "argmax_linear_batch_trusted", family.argmax_linear_batch)
        for j in range(until - t0 + 1):
            # index = mu_hat + sqrt(C log t / n); never-played arms: mean = UNPLAYED, 1/n = 0
            index = inv_n * log_t[j]
            np.sqrt(index, out=index)
            index += mean
            start = perf()
            actions = argmax(index)
            if delay:
                time.sleep(delay)
            seconds += perf() - start
            y = self._feedback(actions, t0 + j)
            np.add(sums, y, out=sums, where=actions)
            n += actions
            np.divide(1.0, n, out=inv_n, where=actions)
            np.multiply(sums, inv_n, out=mean, where=actions)
            if not linear:
                cum += self._gaps(actions)
        self.t = until
        if linear:
            # linear means: sum_t <a_t, mu> = sum_i n_i mu_i, so the pseudo-regret follows
            # exactly from the integer counts (math.fsum: no per-round rounding, same for any
            # chunking and any batch size)
            for r in range(R):
                cum[r] = until * opt[r] - math.fsum(n[r] * mu)
        if self._fast:
            for r, env in enumerate(self.envs):
                env.pulls[:] = self._base_pulls[r] + n[r]
        for log in self.logs:
            log.record_every_round(t0, until, _PURPOSE, seconds / R)
        return self.t

    def run(self, envs: Sequence[Any], horizon: int) -> BatchedCUCB:
        """Batch path: reset and play all rounds. Returns ``self``."""
        self.reset(envs, horizon)
        self.advance(horizon)
        return self


class CUCB(textbook.CUCB):
    """One repetition of CUCB run by the fast engine (:class:`BatchedCUCB` with ``R = 1``).

    The same declaration, parameters and numbers as the textbook
    :class:`~dashboard.algorithms.cmab.textbook.cucb.CUCB`; the runner uses it for a single
    repetition (``engine="fast"``).  Oracle calls are logged in bulk (``record_every_round``),
    O(1) memory for any ``T``.
    """

    def __init__(
        self, C: float = 1.5, oracle_delay: float = 0.0, executor: Executor | None = None
    ) -> None:
        super().__init__(C=C, oracle_delay=oracle_delay, executor=executor)
        self._engine = BatchedCUCB(C=C, oracle_delay=oracle_delay, executor=executor)

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env`` (a linear-reward CMABEnvironment)."""
        self._engine.reset([env], horizon)
        self.env = env
        self.horizon = self._engine.horizon
        self.t = 0
        self.cum_regret = 0.0
        self.log = self._engine.logs[0]
        self.events = self._engine.events[0]

    def advance(self, until: int) -> int:
        """Play rounds up to ``until`` (every round is a decision point)."""
        if not self._engine.envs:
            raise RuntimeError(f"{self.name}: call reset(env, horizon) before advance()")
        self.t = self._engine.advance(until)
        self.cum_regret = float(self._engine.cum_regret[0])
        return self.t


#: The fast engine's one-repetition policy (the runner's choice for R = 1).
BatchedCUCB.one_repetition = CUCB

"""AROQ-CMAB (Algorithm 1) and alpha-AROQ-CMAB (Algorithm 5, Appendix A.3).

Adaptive Rare Oracle Queries: every base arm ``i`` has its own epoch counter ``tau_i``;
``T_i(tau)`` is the set of rounds of epoch ``tau`` in which arm ``i`` was played.  At the start
of round ``t``, every arm with

    |T_i(tau_i)| >= 1 + sqrt(T m |T_i(tau_i - 1)| / d)                     (Algorithm 1, line 5)

starts a new epoch, and if any did, the oracle is queried once for
``a_t = argmax_a r_t^UCB(a)`` with Eq. (1); otherwise ``a_t = a_{t-1}``.

Because the action is fixed between queries and only the arms of ``a_t`` gain counts, the next
round at which the condition fires is known in closed form: for each arm ``i`` of ``a_t``,
``ceil(threshold_i) - |T_i(tau_i)|`` more plays.  One :meth:`AROQ.advance` therefore plays the
whole block with one vectorised ``env.play_fixed`` and stops right before the next query round.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

import numpy as np

from ...base import Policy, PolicyEvent, validate_int
from ...declare import AlgorithmDeclaration
from ..oracle import Oracle, OracleRequest
from .common import (
    ArmStatistics,
    check_linear_env,
    play_fixed_sums,
    validate_positive,
)
from .constants import C_UCB, CMAB_LINEAR, EPOCH0, THRESHOLD_SCALE

__all__ = ["AROQ", "AlphaAROQ", "aroq_threshold"]


def aroq_threshold(
    prev: np.ndarray | int, T: int, m: int, d: int, scale: float = 1.0
) -> np.ndarray:
    """Epoch-end threshold of Algorithm 1, line 5: ``1 + scale * sqrt(T m |T_i(tau_i-1)| / d)``.

    ``scale = 1`` is the paper's condition; other values are a teaching knob.
    """
    prev = np.asarray(prev, dtype=float)
    return 1.0 + scale * np.sqrt(T * m * prev / d)


class AROQ(Policy):
    """Adaptive Rare Oracle Queries for combinatorial semi-bandits (Algorithm 1, Theorem 1).

    UCB index (Eq. (1)) with the CombUCB1 width of the proof (Appendix A.2):
    ``r_t^UCB(a) = sum_{i in a} (mu_hat_{t,i} + sqrt(C log t / n_{t,i}))``, where ``mu_hat`` is
    the empirical mean (Eq. (1) prints a sum; GUIDE section 3) and ``n_{t,i}`` counts plays of
    arm ``i`` in rounds ``1 .. t-1``.  Never-played arms get a large optimistic index.

    Parameters
    ----------
    C : float
        Confidence constant of Eq. (1) (paper: "some constant C > 0"; the proof uses 1.5).
    threshold_scale : float
        Multiplier ``c`` in ``|T_i(tau_i)| >= 1 + c sqrt(T m |T_i(tau_i-1)| / d)``; 1 is the
        paper's Algorithm 1.  Smaller values query more often.
    epoch0_size : int
        ``|T_i(0)|``, the size of the (virtual) epoch before the first one.  The paper
        initialises ``tau_i = 1`` and never defines ``T_i(0)``; Lemma 2 starts from
        ``x_0 >= 0`` and the regret proof needs ``n'_{t,i} >= |T_i(tau-1)|`` for ``t`` in
        ``T_i(tau)``, which holds for ``tau = 1`` only with ``|T_i(0)| = 0`` (the index used in
        epoch 1 may be the unplayed one).  Default 0: the first epoch of an arm ends after its
        first pull, so fresh information about a new arm triggers a query at once.
    oracle_delay : float
        Extra seconds per oracle call (simulated solver cost).
    executor : concurrent.futures.Executor, optional
        Passed to the :class:`~dashboard.algorithms.cmab.oracle.Oracle`; AROQ makes one call per
        adaptivity round, so it only matters for uniformity with SROQ.

    Notes
    -----
    * Round ``t = 1``: no threshold can fire (every ``|T_i(1)| = 0``), so ``a_1`` is undefined
      in the paper; we make an initial oracle call with the optimistic indices of the unplayed
      arms and count it (GUIDE section 3).
    * Events: one ``"oracle"`` :class:`~dashboard.algorithms.base.PolicyEvent` per query with
      ``advanced`` (arms whose epoch ended), ``counts`` (``|T_i(tau_i)|`` of every arm just
      before the update), ``prev`` (``|T_i(tau_i-1)|``), ``threshold`` (the line-5 right-hand
      sides), ``tau`` (epochs after the update) and ``action`` (the new ``a_t``).
    * Pseudo-regret is exact: ``L * (r(a*) - r(a_t))`` per block of ``L`` rounds.
    """

    declaration = AlgorithmDeclaration(
        name="AROQ-CMAB",
        problem="cmab",
        reference="Algorithm 1",
        constants=(C_UCB, THRESHOLD_SCALE, EPOCH0),
        rewards=CMAB_LINEAR,
        doc="adaptive rare oracle queries: query when an arm's epoch ends",
    )

    def __init__(
        self,
        C: float = 1.5,
        threshold_scale: float = 1.0,
        epoch0_size: int = 0,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
    ) -> None:
        super().__init__()
        # declared constants were validated by the declaration (Policy.__new__)
        self.C, self.threshold_scale = float(C), float(threshold_scale)
        self.epoch0_size = int(epoch0_size)
        self.oracle_delay = validate_positive("oracle_delay", oracle_delay, allow_zero=True)
        self.executor = executor
        self.env: Any = None

    # -- hooks for Algorithm 5 -------------------------------------------------------------
    def _approximate(self) -> Callable[..., Any] | None:
        return None

    def _on_block(self, length: int, action: np.ndarray) -> None:
        """Called after ``length`` rounds of ``action`` were played."""

    # -- Policy API --------------------------------------------------------------------------
    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env`` (a linear-reward CMABEnvironment)."""
        check_linear_env(env, self.name)
        self.horizon = validate_int("horizon", horizon, 1)
        self.env = env
        d = env.d
        self.t = 0
        self.cum_regret = 0.0
        self._regret_base = 0.0  # regret before the current block (chunking-invariant)
        self.log = type(self.log)()
        self.events = []
        self.oracle = Oracle(
            env.family, self.log, self.oracle_delay, self.executor, self._approximate()
        )
        self.stats = ArmStatistics(d)
        #: tau_i, |T_i(tau_i)| and |T_i(tau_i - 1)|
        self.tau = np.ones(d, dtype=np.int64)
        self.count = np.zeros(d, dtype=np.int64)
        self.prev = np.full(d, self.epoch0_size, dtype=np.int64)
        self._thr = self._thresholds(self.prev)
        self.action: np.ndarray | None = None
        self._gap = 0.0
        self._block_start = 1
        self._next_query = 1  # round at which the next oracle call happens

    def _thresholds(self, prev: np.ndarray) -> np.ndarray:
        """Integer form ``ceil(1 + c sqrt(T m prev / d))`` (counts are integers)."""
        x = aroq_threshold(prev, self.horizon, self.env.m, self.env.d, self.threshold_scale)
        return np.ceil(x).astype(np.int64)

    def _query(self, t: int) -> None:
        """Lines 5-11 of Algorithm 1 at round ``t`` (a round where a threshold fires, or t=1)."""
        fired = np.flatnonzero(self.count >= self._thr)
        data: dict[str, Any] = {
            "advanced": fired,
            "counts": self.count.copy(),
            "prev": self.prev.copy(),
            "threshold": aroq_threshold(
                self.prev, self.horizon, self.env.m, self.env.d, self.threshold_scale
            ),
        }
        if fired.size:
            self.tau[fired] += 1
            self.prev[fired] = self.count[fired]
            self.count[fired] = 0
            self._thr[fired] = self._thresholds(self.prev[fired])
        ucb, _ = self.stats.indices(self.C, math.log(t))
        purpose = "UCB argmax" if t > 1 else "initial UCB argmax"
        action = self.oracle.call(OracleRequest(purpose, scores=ucb), t)
        if action is None:
            raise RuntimeError(f"{self.name}: the oracle found no feasible action at t={t}")
        self.action = np.asarray(action, dtype=bool)
        self._gap = float(self.env.gap(self.action))
        self._block_start = t
        arms = np.flatnonzero(self.action)
        if arms.size:
            # first round >= t at whose start some arm of a_t has reached its threshold
            self._next_query = t + int(np.min(self._thr[arms] - self.count[arms]))
        else:
            self._next_query = self.horizon + 1
        data["tau"] = self.tau.copy()
        data["action"] = self.action.copy()
        self.events.append(PolicyEvent(t, "oracle", data))

    def advance(self, until: int) -> int:
        """Play up to ``until`` or up to the round before the next oracle query."""
        if self.env is None:
            raise RuntimeError(f"{self.name}: call reset(env, horizon) before advance()")
        until = min(int(until), self.horizon)
        if until <= self.t:
            return self.t
        if self.t + 1 == self._next_query:
            self._query(self.t + 1)
        end = min(until, self._next_query - 1)
        L = end - self.t
        arms = np.flatnonzero(self.action)
        sums = play_fixed_sums(self.env, self.action, self.t + 1, L)
        self.stats.add(arms, sums, L)
        self.count[arms] += L
        self._on_block(L, self.action)
        self.t = end
        played = self.t - self._block_start + 1
        self.cum_regret = self._regret_base + played * self._gap
        if self.t == self._next_query - 1 or self.t == self.horizon:
            self._regret_base = self.cum_regret
        return self.t


class AlphaAROQ(AROQ):
    """alpha-AROQ-CMAB (Algorithm 5, Appendix A.3, Theorem 7): Algorithm 1 with an
    alpha-approximation oracle ``O^alpha_t`` in place of the exact argmax.

    Parameters
    ----------
    alpha : float
        Approximation factor in (0, 1] of the oracle, used only for *reporting* the
        alpha-regret ``R^alpha(T) = sum_t (alpha r(a*) - r(a_t))`` (attribute
        :attr:`alpha_regret`); the algorithm itself does not use it.
    approximate : callable, optional
        ``approximate(family, request) -> action``; default the greedy oracle
        :func:`dashboard.algorithms.cmab.approx.greedy_oracle`.
    C, threshold_scale, epoch0_size, oracle_delay, executor
        As for :class:`AROQ`.

    Notes
    -----
    ``alpha_regret`` can be negative (an approximate oracle may do better than alpha); it is
    exact (``L * (alpha r(a*) - r(a_t))`` per block).
    """

    declaration = AlgorithmDeclaration(
        name="alpha-AROQ-CMAB",
        problem="cmab",
        reference="Algorithm 5",
        constants=(C_UCB, THRESHOLD_SCALE, EPOCH0),
        rewards=CMAB_LINEAR,
        doc="AROQ with an alpha-approximate oracle (Appendix A.3); alpha comes from the problem",
    )

    def __init__(
        self,
        alpha: float = 1.0,
        approximate: Callable[..., Any] | None = None,
        C: float = 1.5,
        threshold_scale: float = 1.0,
        epoch0_size: int = 0,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
    ) -> None:
        super().__init__(C, threshold_scale, epoch0_size, oracle_delay, executor)
        from ..approx import validate_alpha

        self.alpha = validate_alpha(alpha)
        if approximate is not None and not callable(approximate):
            raise ValueError("approximate must be a callable (family, request) -> action")
        self.approximate = approximate
        self.alpha_regret = 0.0

    def _approximate(self) -> Callable[..., Any]:
        if self.approximate is not None:
            return self.approximate
        from ..approx import greedy_oracle

        return greedy_oracle

    def reset(self, env: Any, horizon: int) -> None:
        super().reset(env, horizon)
        self.alpha_regret = 0.0
        self._alpha_base = 0.0

    def _on_block(self, length: int, action: np.ndarray) -> None:
        # exact, chunking-invariant: base at the block start + rounds played * per-round value
        per_round = self.alpha * self.env.optimal_reward - self.env.expected_reward(action)
        played = self.t + length - self._block_start + 1
        self.alpha_regret = self._alpha_base + played * per_round
        if self.t + length in (self._next_query - 1, self.horizon):
            self._alpha_base = self.alpha_regret

"""CUCB (Chen, Wang & Yuan 2013), the per-round baseline of Section 6, round by round.

This is the file to read to learn the algorithm.  Every round ``t = 1, 2, ..., T``:

1. for every base arm ``i``, the UCB index of Eq. (1) with the CombUCB1 width,
   ``UCB_{t,i} = mu_hat_{t,i} + sqrt(C log t / n_{t,i})`` (an optimistic
   :data:`UNPLAYED_INDEX` for an arm never played);
2. one oracle query ``a_t = argmax_a sum_{i in a} UCB_{t,i}``;
3. play ``a_t``, observe the outcome of each of its arms, update ``n_{t+1,i}`` and
   ``mu_hat_{t+1,i}``.

So query and adaptivity complexities are both ``T``.  The fast engine that runs ``R``
repetitions at once (:class:`~dashboard.algorithms.cmab.policies.cucb.BatchedCUCB`) gives
exactly these numbers; two arithmetic choices below keep it so: ``mu_hat`` and the width
divide by ``n`` as a multiplication by ``1 / n``, and the pseudo-regret of linear means is
``t r(a*) - sum_i n_i mu_i`` summed exactly (``math.fsum``) rather than round by round.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from typing import Any

import numpy as np

from ...base import Policy, validate_int, validate_positive
from ...declare import AlgorithmDeclaration
from ..oracle import Oracle, OracleRequest
from ..policies.common import UNPLAYED_INDEX, check_linear_env
from ..policies.constants import C_UCB, CMAB_LINEAR
from ..rewards.base import RewardModel

__all__ = ["CUCB"]


class CUCB(Policy):
    """CUCB: combinatorial UCB with one oracle call every round (Section 6 baseline).

    Parameters
    ----------
    C : float
        Confidence constant of the width ``sqrt(C log t / n_i)`` (default 1.5, as in the
        proofs).
    oracle_delay : float
        Extra seconds per oracle call (simulated solver cost).
    executor : concurrent.futures.Executor, optional
        Accepted for a uniform constructor; unused (one query per round).
    """

    declaration = AlgorithmDeclaration(
        name="CUCB",
        problem="cmab",
        reference="Chen et al. 2013 (baseline)",
        constants=(C_UCB,),
        rewards=CMAB_LINEAR,
        per_round=True,
        doc="combinatorial UCB: one oracle query per round (Section 6 baseline)",
    )

    def __init__(
        self, C: float = 1.5, oracle_delay: float = 0.0, executor: Executor | None = None
    ) -> None:
        super().__init__()
        self.C = validate_positive("C", C)
        self.oracle_delay = validate_positive("oracle_delay", oracle_delay, allow_zero=True)
        self.executor = executor
        self.env: Any = None

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env`` (a linear-reward CMABEnvironment)."""
        check_linear_env(env, self.name)
        self.horizon = validate_int("horizon", horizon, 1)
        self.env = env
        self.t = 0
        self.cum_regret = 0.0
        self.log = type(self.log)()
        self.events = []
        self.oracle = Oracle(env.family, self.log, self.oracle_delay, self.executor)
        d = env.d
        self.n = np.zeros(d, dtype=np.int64)  # n_{t,i}: plays of arm i so far
        self.sums = np.zeros(d)  # sum of arm i's outcomes so far
        self.mu_hat = np.full(d, UNPLAYED_INDEX)  # empirical means (optimistic if unplayed)
        self.inv_n = np.zeros(d)  # 1 / n_{t,i} (0 while unplayed: no width)
        # the mean reward is <a, mu> unless the model says otherwise
        self._linear = type(env.model).expected_reward is RewardModel.expected_reward

    def ucb(self, t: int) -> np.ndarray:
        """Step 1: ``UCB_{t,i} = mu_hat_{t,i} + sqrt(C log t / n_{t,i})`` for every arm."""
        return np.sqrt(self.inv_n * (np.log(float(t)) * self.C)) + self.mu_hat

    def round(self, t: int) -> np.ndarray:
        """Steps 1-3 of round ``t``; returns the action ``a_t`` played."""
        index = self.ucb(t)
        action = self.oracle.call(OracleRequest("UCB argmax", scores=index), t)  # step 2
        if action is None:
            raise RuntimeError(f"{self.name}: the oracle found no feasible action at t={t}")
        action = np.asarray(action, dtype=bool)
        arms = np.flatnonzero(action)
        y = self.env.play_fixed(action, t, 1)[0]  # step 3: the outcomes of a_t's arms
        self.sums[arms] += y
        self.n[arms] += 1
        self.inv_n[arms] = 1.0 / self.n[arms]
        self.mu_hat[arms] = self.sums[arms] * self.inv_n[arms]
        if not self._linear:
            self.cum_regret += float(self.env.gap(action))
        return action

    def advance(self, until: int) -> int:
        """Play rounds ``t+1 .. min(until, T)`` (every round is a decision point)."""
        if self.env is None:
            raise RuntimeError(f"{self.name}: call reset(env, horizon) before advance()")
        until = min(int(until), self.horizon)
        while self.t < until:
            self.t += 1
            self.round(self.t)
        if self._linear:  # sum_s <a_s, mu> = sum_i n_i mu_i: the regret from the counts
            mu = np.asarray(self.env.model.mu, dtype=float)
            self.cum_regret = self.t * self.env.optimal_reward - math.fsum(self.n * mu)
        return self.t

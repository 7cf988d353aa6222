"""AROQ-GR-CMAB, Adaptive Rare Oracle Queries for general rewards (Algorithm 6, Theorem 5,
Appendix A.7.1), round by round.

For each base arm ``i`` keep the empirical law of its outcomes (``F_hat_{t,i}``, its CDF, from
``n_{t,i}`` plays), its epoch ``tau_i``, ``|T_i(tau_i)|`` (the rounds it was played in its
current epoch) and ``|T_i(tau_i - 1)|`` (the length of its previous epoch).  Every round ``t``:

1. lines 4-7: every arm with ``|T_i(tau_i)| >= 1 + c sqrt(T m |T_i(tau_i - 1)| / d)`` starts a
   new epoch (``tau_i <- tau_i + 1``, ``T_i(tau_i) <- {}``) and sets ``Update``;
2. lines 8-12: if ``Update`` (and at ``t = 1``, where no arm can cross: one counted initial
   query), one oracle query ``a_t = argmax_a r_t^UCB(a)`` of Eq. (10), the expectation of
   ``r(a, y)`` with the arms' outcomes independent and distributed as ``D_under_{t,i}``: CDF
   ``max(F_hat_{t,i} - rho_{t,i}, 0)`` below the top of the support, 1 at it, with
   ``rho_{t,i} = sqrt(C ln t / n_{t,i})`` (a never-played arm: the point mass at the top).
   The oracle enumerates the actions (ties: the first); a linear reward needs only the
   optimistic means.  Otherwise ``a_t = a_{t-1}``;
3. lines 14-15: play ``a_t``, add its arms' outcomes to their laws and ``t`` to their
   ``T_i(tau_i)``.

The line-4 test is written in integers, ``|T_i(tau_i)| >= ceil(1 + c sqrt(...) - 1e-12)``
(``c = threshold_scale``, 1 in the paper; ``|T_i(0)| = epoch0_size``, which the paper leaves
open, default 0).  Laws with more than ``max_atoms`` distinct outcomes are rounded up to a
regular grid of the support (:class:`~..policies.empirical.EmpiricalDistributions`, which the
fast engine shares).  Pseudo-regret: play counts of each action times its gap, summed
exactly.  The fast engine (:class:`~dashboard.algorithms.cmab.policies.general.AROQGR`) scores
all actions at once with certified error bounds (exact expectations, cached by law, for close
calls) and plays the rounds between two queries as one block, so it gives these numbers.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from functools import partial
from typing import Any

import numpy as np

from ...base import Policy, PolicyEvent, validate_int
from ...declare import AlgorithmDeclaration
from ..oracle import Oracle, OracleRequest
from ..policies.constants import C_GR, CMAB_ANY, EPOCH0, MAX_ATOMS, THRESHOLD_SCALE
from ..policies.empirical import EmpiricalDistributions, number
from ..policies.shared import RegretCounter
from ..rewards.laws import expected_aggregate, reward_function_of

__all__ = ["AROQGR", "expected_reward"]


def expected_reward(laws: list, kind: str, action: np.ndarray) -> float:
    """``E[r(a, y)]`` with the outcomes of ``a``'s arms independent and distributed as
    ``laws`` (Lemma 9: folded arm by arm, in arm order).  Module level: picklable."""
    arms = np.flatnonzero(action)
    return expected_aggregate([laws[i][0] for i in arms], [laws[i][1] for i in arms], kind)


class AROQGR(Policy):
    """AROQ-GR-CMAB: the oracle is queried only when an arm ends its epoch (Algorithm 6).

    Parameters
    ----------
    C : float
        Radius constant of ``sqrt(C ln t / n)`` (default 1.5, the DKW constant of the proof).
    oracle_delay : float
        Simulated seconds per oracle call.
    executor : concurrent.futures.Executor, optional
        Unused by the sequential Algorithm 6 (accepted for a uniform interface).
    max_atoms : int
        Cap on the atoms of each optimistic law (continuous outcomes only).
    threshold_scale : float
        ``c`` of the line-4 test, > 0 (default 1, Algorithm 6 as printed).
    epoch0_size : int
        ``|T_i(0)|``, >= 0 (default 0: an arm's first epoch ends after its first play).
    """

    declaration = AlgorithmDeclaration(
        name="AROQ-GR-CMAB",
        problem="cmab",
        reference="Algorithm 6",
        constants=(C_GR, THRESHOLD_SCALE, EPOCH0, MAX_ATOMS),
        rewards=CMAB_ANY,
        doc="AROQ for general rewards with optimistic outcome distributions",
    )

    def __init__(
        self,
        C: float = 1.5,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
        max_atoms: int = 64,
        threshold_scale: float = 1.0,
        epoch0_size: int = 0,
    ) -> None:
        super().__init__()
        self.C = number("C", C, 0.0, allow_low=True)
        self.oracle_delay = number("oracle_delay", oracle_delay, 0.0, allow_low=True)
        if executor is not None and not isinstance(executor, Executor):
            raise ValueError("executor must be a concurrent.futures.Executor or None")
        self.executor = executor
        self.max_atoms = validate_int("max_atoms", max_atoms, 2)
        self.threshold_scale = number("threshold_scale", threshold_scale, 0.0, allow_low=False)
        self.epoch0_size = validate_int("epoch0_size", epoch0_size, 0)
        self.env: Any = None

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env`` (line 1: ``tau_i = 1``)."""
        Policy.__init__(self)
        if getattr(env, "model", None) is None or not hasattr(env, "family"):
            raise ValueError(f"{self.name} needs a CMABEnvironment (model.environment(...))")
        self.horizon = validate_int("horizon", horizon, 1)
        self.env, self.d, self.m = env, env.d, env.m
        self.kind = reward_function_of(env.model)  # "sum", "sqrt-sum" or "max"
        self.oracle = Oracle(env.family, self.log, self.oracle_delay, self.executor)
        self.laws = EmpiricalDistributions(self.d)  # F_hat_{t,i} and n_{t,i}
        self.regret = RegretCounter(env)
        self.atom_cap = self.max_atoms
        self.tau = np.ones(self.d, dtype=np.int64)
        self.count = np.zeros(self.d, dtype=np.int64)  # |T_i(tau_i)|
        self.prev = np.full(self.d, self.epoch0_size, dtype=np.int64)  # |T_i(tau_i - 1)|
        self.threshold = [self.epoch_threshold(int(p)) for p in self.prev]
        self.action: np.ndarray | None = None  # a_{t-1}

    def epoch_threshold(self, prev: int) -> int:
        """Line 4's bound ``1 + c sqrt(T m |T_i(tau_i - 1)| / d)``, rounded up to an integer
        (``|T_i(tau_i)|`` is one), in floating point as the fast engine computes it."""
        x = 1.0 + self.threshold_scale * math.sqrt(self.horizon * self.m * float(prev) / self.d)
        return math.ceil(x - 1e-12)

    def observe(self, arm: int, y: np.ndarray) -> None:
        """Line 14: add outcomes ``y`` of ``arm`` to its empirical law."""
        self.laws.add(arm, y)

    def optimistic_laws(self, t: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """``D_under_{t,i}`` of every arm (support points and probabilities), Eq. (10)."""
        n = self.laws.n
        with np.errstate(divide="ignore"):
            rho = np.where(n > 0, np.sqrt(self.C * math.log(max(t, 1)) / np.maximum(n, 1)), np.inf)
        return [self.laws.optimistic(i, float(rho[i]), self.atom_cap) for i in range(self.d)]

    def query(self, t: int, advanced: np.ndarray) -> None:
        """Line 9: ``a_t = argmax_a r_t^UCB(a)`` with (10), one oracle query."""
        laws = self.optimistic_laws(t)
        purpose = "UCB argmax (10)" if t > 1 else "initial UCB argmax (10)"
        if self.kind == "sum":  # linear: the expected reward is the sum of the means
            means = np.array([float(v @ p) for v, p in laws])
            request = OracleRequest(purpose, scores=means)
        else:
            request = OracleRequest(purpose, f=partial(expected_reward, laws, self.kind))
        a = self.oracle.call(request, t)
        if a is None:
            raise ValueError("the action family has no feasible action")
        self.action = np.asarray(a, dtype=bool)
        self.events.append(
            PolicyEvent(t, "oracle", {"advanced": advanced, "action": self.action.copy()})
        )

    def advance(self, until: int) -> int:
        """Play up to ``until``, stopping before a round that queries the oracle."""
        if self.env is None:
            raise RuntimeError(f"{self.name}: call reset(env, horizon) before advance()")
        until = min(int(until), self.horizon)
        played = 0
        while self.t < until:
            t = self.t + 1
            # lines 4-7: arms whose epoch is full start a new one
            advanced = np.flatnonzero(
                [self.count[i] >= self.threshold[i] for i in range(self.d)]
            ).astype(np.int64)
            update = advanced.size > 0 or self.action is None
            if update and played:
                break  # the query opens the next call (a decision point)
            for i in advanced:
                self.tau[i] += 1
                self.prev[i] = self.count[i]
                self.count[i] = 0
                self.threshold[i] = self.epoch_threshold(int(self.prev[i]))
            if update:  # lines 8-10 (else lines 11-12: a_t = a_{t-1})
                self.query(t, advanced)
            a = self.action
            y = self.env.play_fixed(a, t, 1)  # line 14: outcomes of a_t's arms, in arm order
            for k, i in enumerate(np.flatnonzero(a)):
                self.observe(int(i), y[:, k])
                self.count[i] += 1  # line 15: t joins T_i(tau_i)
            self.regret.add(a, 1)
            self.t, played = t, played + 1
        self.cum_regret = self.regret.value
        return self.t

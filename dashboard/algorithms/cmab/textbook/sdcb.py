"""SDCB, Stochastically Dominant Confidence Bound (Chen, Hu, Li, Li, Liu, Lu, NeurIPS 2016), the
per-round baseline of Section 5, round by round.

For each base arm ``i`` keep the empirical law of its outcomes (``F_hat_{t,i}``, its CDF, from
``n_{t,i}`` plays).  Every round ``t``:

1. the radius ``rho_{t,i} = sqrt(C ln t / n_{t,i})`` (``inf`` for a never-played arm) and the
   optimistic law ``D_under_{t,i}``, CDF ``max(F_hat_{t,i} - rho_{t,i}, 0)`` below the top of
   the support and 1 at it (Eq. (10); the mass taken off moves to the top);
2. one oracle query ``a_t = argmax_a E[r(a, y)]`` with the arms' outcomes independent and
   distributed as ``D_under`` (the oracle enumerates the actions; ties: the first); a linear
   reward needs only the optimistic means;
3. play ``a_t`` and add the outcomes of its arms to their laws.

Start (``initial_pass=True``, Chen et al.'s initialisation): round ``i + 1`` (``i = 0 .. d-1``)
plays the step-2 argmax over the actions containing arm ``i``.  Pseudo-regret: play counts of
each action times its gap, summed exactly.  Query and adaptivity complexities are ``T``.  The
fast engine (:class:`~dashboard.algorithms.cmab.policies.batched.BatchedSDCB`) scores every
action at once with certified error bounds and rechecks close calls with this exact
expectation, so it picks the same actions.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ...base import Policy, validate_int
from ...declare import AlgorithmDeclaration
from ..policies.constants import C_GR, CMAB_ANY, INITIAL_PASS, MAX_ATOMS
from ..policies.empirical import EmpiricalDistributions, number
from ..policies.shared import RegretCounter
from ..rewards.laws import expected_aggregate, reward_function_of

__all__ = ["SDCB"]


class SDCB(Policy):
    """SDCB: the oracle maximises the expected reward under optimistic laws every round.

    Parameters
    ----------
    C : float
        Radius constant (default 1.5; Chen et al. use 3/2).
    oracle_delay : float
        Simulated seconds per oracle call.
    max_atoms : int
        Cap on the atoms of each law (more distinct outcomes are rounded up to a grid).
    initial_pass : bool
        Play Chen et al.'s ``d``-round start (default True); False: a never-played arm gets
        the optimistic point mass at the top of the support instead.
    """

    declaration = AlgorithmDeclaration(
        name="SDCB",
        problem="cmab",
        reference="Chen et al. 2016 (baseline)",
        constants=(C_GR, MAX_ATOMS, INITIAL_PASS),
        rewards=CMAB_ANY,
        per_round=True,
        doc="per-round stochastically dominant confidence bound (baseline)",
    )

    def __init__(
        self,
        C: float = 1.5,
        oracle_delay: float = 0.0,
        max_atoms: int = 64,
        initial_pass: bool = True,
    ) -> None:
        super().__init__()
        self.C = number("C", C, 0.0, allow_low=True)
        self.oracle_delay = number("oracle_delay", oracle_delay, 0.0, allow_low=True)
        self.max_atoms = validate_int("max_atoms", max_atoms, 2)
        if not isinstance(initial_pass, (bool, np.bool_)):
            raise ValueError(f"initial_pass must be True or False, got {initial_pass!r}")
        self.initial_pass = bool(initial_pass)
        self.env: Any = None

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env`` (any CMAB reward model)."""
        Policy.__init__(self)
        if getattr(env, "model", None) is None or not hasattr(env, "family"):
            raise ValueError(f"{self.name} needs a CMABEnvironment (model.environment(...))")
        self.horizon = validate_int("horizon", horizon, 1)
        self.env, self.d = env, env.d
        self.kind = reward_function_of(env.model)  # "sum", "sqrt-sum" or "max"
        self.laws = EmpiricalDistributions(self.d)
        self.regret = RegretCounter(env)
        self.init_length = min(self.d, self.horizon) if self.initial_pass else 0

    def optimistic_laws(self, t: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Step 1: every arm's ``D_under`` (support points and probabilities)."""
        n = self.laws.n
        with np.errstate(divide="ignore"):
            rho = np.where(n > 0, np.sqrt(self.C * math.log(max(t, 1)) / np.maximum(n, 1)), np.inf)
        return [self.laws.optimistic(i, float(rho[i]), self.max_atoms) for i in range(self.d)]

    def choose(self, t: int) -> np.ndarray:
        """Step 2 (restricted to the actions containing arm ``t - 1`` in the start)."""
        laws = self.optimistic_laws(t)
        include = (t - 1,) if t <= self.init_length else ()
        family = self.env.family
        if self.kind == "sum":  # linear: the expected reward is the sum of the means
            means = np.array([float(v @ p) for v, p in laws])
            a = family.argmax_linear(means, include=include)
        else:

            def expected_reward(action: np.ndarray) -> float:
                arms = np.flatnonzero(action)
                values, probs = [laws[i][0] for i in arms], [laws[i][1] for i in arms]
                return expected_aggregate(values, probs, self.kind)

            a = family.argmax_set_function(expected_reward, include=include)
        if a is None:
            what = f" containing arm {t - 1}" if include else ""
            raise ValueError(f"the action family has no feasible action{what}")
        return np.asarray(a, dtype=bool)

    def advance(self, until: int) -> int:
        """Play up to ``until`` (the end of the start is a decision point)."""
        if self.env is None:
            raise RuntimeError(f"{self.name}: call reset(env, horizon) before advance()")
        until = min(int(until), self.horizon)
        if self.t >= until:
            return self.t
        in_start = self.t < self.init_length
        if in_start:
            until = min(until, self.init_length)
        t_first, seconds = self.t + 1, 0.0
        while self.t < until:
            t = self.t + 1
            begin = time.perf_counter()
            a = self.choose(t)
            if self.oracle_delay:
                time.sleep(self.oracle_delay)
            seconds += time.perf_counter() - begin
            y = self.env.play_fixed(a, t, 1)  # step 3: outcomes of a_t's arms, in arm order
            for k, i in enumerate(np.flatnonzero(a)):
                self.laws.add(int(i), y[:, k])
            self.regret.add(a, 1)
            self.t = t
        self.cum_regret = self.regret.value
        purpose = "SDCB initial pass" if in_start else "SDCB argmax"
        self.log.record_every_round(t_first, self.t, purpose, seconds)
        return self.t

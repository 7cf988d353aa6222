"""Epsilon-greedy for combinatorial semi-bandits: a per-round plug-in that learns.

    python -m dashboard simulate --plugin docs/examples/epsilon_greedy.py \
        --problem cmab --algorithm eps-greedy --horizon 5000 --param eps-greedy:epsilon=0.05

With probability ``epsilon`` a round explores (a uniformly random m-set), otherwise it exploits
the action with the best empirical means (unplayed arms count as 1, so each is tried).  Compare
it with CUCB and AROQ-CMAB: a constant exploration rate pays linear regret.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dashboard.algorithms import randomness as rnd
from dashboard.plugins import AlgorithmDeclaration, Constant, Policy


class EpsilonGreedy(Policy):
    """Explore with probability epsilon, else play argmax of the empirical means."""

    declaration = AlgorithmDeclaration(
        name="eps-greedy",
        problem="cmab",
        reference="Sutton & Barto 2018, Section 2.2 (combinatorial variant)",
        rewards=("linear", "covariance"),  # the empirical-mean argmax assumes linear rewards
        per_round=True,  # one oracle call every round
        doc="epsilon-greedy on the base arms' empirical means",
        constants=(
            Constant(
                "epsilon",
                0.1,
                low=0.0,
                high=1.0,
                doc="probability of exploring in a round (0: greedy, 1: uniformly random)",
                label="ε: exploration probability",
            ),
        ),
    )

    def __init__(self, epsilon: float = 0.1) -> None:
        super().__init__()
        self.epsilon = float(epsilon)

    def reset(self, env: Any, horizon: int) -> None:
        Policy.__init__(self)
        self.env, self.horizon = env, int(horizon)
        self.n = np.zeros(env.d, dtype=np.int64)
        self.sums = np.zeros(env.d)
        self._key = rnd.stream_key(env.model.seed, env.rep, "epsilon-greedy")

    def advance(self, until: int) -> int:
        d = self.env.d
        while self.t < until:  # a per-round policy decides every round
            t = self.t + 1
            coin, *scores = rnd.uniform(self._key, t * (d + 1) + np.arange(d + 1))
            if coin < self.epsilon:
                action = self.env.family.argmax_linear(np.asarray(scores))
            else:
                means = np.where(self.n > 0, self.sums / np.maximum(self.n, 1), 1.0)
                action = self.env.family.argmax_linear(means)
            self.log.record(t, self.log.new_round(), "argmax")
            y = self.env.play_fixed(action, t, 1)[0]
            arms = np.flatnonzero(action)
            self.n[arms] += 1
            self.sums[arms] += y
            self.cum_regret += self.env.gap(action)
            self.t = t
        return self.t

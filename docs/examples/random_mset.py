"""A uniformly random m-set policy: the smallest complete CMAB plug-in.

Run it (from the repository root):

    python -m dashboard simulate --plugin docs/examples/random_mset.py \
        --problem cmab --algorithm Random-m-set --horizon 2000 --runs 2 --seed 7

Every ``block`` rounds it draws fresh uniform scores and plays their top-m set, which on the
``m-sets`` family is a uniformly random m-subset (on paths and matchings: a random action).
It learns nothing, so its regret grows linearly: the floor every bandit algorithm must beat.

The contract (docs/PLUGINS.md) in five points, all visible below:

1. subclass ``Policy`` and implement ``reset(env, horizon)`` and ``advance(until)``;
2. declare yourself once, as data: ``declaration = AlgorithmDeclaration(...)`` with your name,
   problem, reference, supported reward models and your constants;
3. every declared constant is a keyword of ``__init__`` with the same default; store it under
   its own name (``self.block``) so ``params()`` reports it; the declaration validates values
   before ``__init__`` runs, so there is no validation code to write;
4. keep ``t`` (rounds played) and ``cum_regret`` (exact pseudo-regret) up to date, record
   oracle calls in ``self.log``;
5. draw randomness from ``dashboard.algorithms.randomness`` (counter based): the same seed
   gives the same numbers however the run is chunked (batch, stream, dashboard).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dashboard.algorithms import randomness as rnd
from dashboard.plugins import AlgorithmDeclaration, Constant, Policy


class RandomMSet(Policy):
    """Play a uniformly random m-set, redrawn every ``block`` rounds."""

    declaration = AlgorithmDeclaration(
        name="Random-m-set",
        problem="cmab",
        reference="uniform random baseline (no paper; the floor of Section 6's plots)",
        rewards=("linear", "covariance", "general", "continuous"),
        per_round=False,  # one oracle call per block, not per round
        doc="a uniformly random m-set, redrawn every block rounds",
        constants=(
            Constant(
                "block",
                1,
                "int",
                low=1,
                high=10_000_000,
                doc="rounds each random action is kept (1: a new one every round)",
                label="block: rounds per random action",
            ),
        ),
    )

    def __init__(self, block: int = 1, oracle_delay: float = 0.0, executor: Any = None) -> None:
        # oracle_delay / executor are injected by the simulation for cmab problems (optional:
        # accept them only if you use them); ``block`` was validated before we got here.
        super().__init__()
        self.block = int(block)

    def reset(self, env: Any, horizon: int) -> None:
        Policy.__init__(self)  # t = 0, cum_regret = 0, fresh log and events
        self.env, self.horizon = env, int(horizon)
        # one random stream per (instance seed, repetition): same numbers for every chunking
        self._key = rnd.stream_key(env.model.seed, env.rep, "random-m-set")

    def advance(self, until: int) -> int:
        # Blocks are fixed in time (rounds 1..block, block+1..2 block, ...), not by the calls:
        # the runner may stop us anywhere (frame times), and a split block must not change
        # any decision, so the action is a function of the block index and is kept between
        # calls.
        t0 = self.t + 1
        if self.t % self.block == 0:  # a block starts: one oracle call on random scores
            index = self.t // self.block
            scores = rnd.uniform(self._key, index * self.env.d + np.arange(self.env.d))
            self._action = self.env.family.argmax_linear(scores)  # top-m of random scores
            self.log.record(t0, self.log.new_round(), "random argmax")
        length = min(self.block - self.t % self.block, until - self.t)  # never past ``until``
        self.env.play_fixed(self._action, t0, length)  # outcomes ignored: nothing is learnt
        self.cum_regret += length * self.env.gap(self._action)
        self.t += length
        return self.t

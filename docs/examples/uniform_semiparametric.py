"""Uniform exploration for the semiparametric bandit, plus a square-wave shift: one file can
register several things (every declared class defined here is registered).

    python -m dashboard simulate --plugin docs/examples/uniform_semiparametric.py \
        --problem semiparametric --algorithm SP-uniform --shift square --horizon 3000

``SP-uniform`` plays arms uniformly at random in phases of ``phase`` rounds and declares the
arm with the best orthogonalised estimate at the end of each phase (it never stops exploring,
so its regret is linear; its declared arm is what to compare with SBE's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dashboard.algorithms import randomness as rnd
from dashboard.algorithms.semiparametric.shifts import Shift, ShiftContext
from dashboard.plugins import AlgorithmDeclaration, ComponentDeclaration, Constant, Policy


class SquareShift(Shift):
    """nu_t = +magnitude for 50 rounds, then -magnitude for 50 rounds, and so on."""

    declaration = ComponentDeclaration(
        "shift",
        "square",
        doc="nu_t = +/- magnitude, sign flipping every 50 rounds",
        reference="example plug-in (oblivious, |nu_t| <= 1 for magnitude <= 1)",
        fields=("magnitude",),
        problem="semiparametric",
    )

    def values(self, t: np.ndarray, context: ShiftContext | None = None) -> np.ndarray:
        t = np.asarray(t, dtype=np.int64)
        return self.magnitude * np.where((t // 50) % 2 == 0, 1.0, -1.0)


class UniformExploration(Policy):
    """Uniformly random arms; the centred least-squares estimate picks a declared arm."""

    declaration = AlgorithmDeclaration(
        name="SP-uniform",
        problem="semiparametric",
        reference="uniform exploration baseline (no paper)",
        doc="uniformly random arms, best orthogonalised estimate declared per phase",
        constants=(Constant("phase", 500, "int", low=1, high=10_000_000, doc="rounds per phase"),),
    )

    def __init__(self, phase: int = 500) -> None:
        super().__init__()
        self.phase = int(phase)

    def reset(self, env: Any, horizon: int) -> None:
        Policy.__init__(self)
        self.env, self.horizon = env, int(horizon)
        self._key = rnd.stream_key(env.seed, env.rep, "sp-uniform")
        self._V = np.eye(env.d) * 1e-3
        self._b = np.zeros(env.d)
        self._arm: int | None = None

    def advance(self, until: int) -> int:
        env = self.env
        t0 = self.t + 1
        L = min(self.phase - self.t % self.phase, until - self.t)
        t = np.arange(t0, t0 + L, dtype=np.int64)
        arms = np.minimum((rnd.uniform(self._key, t) * env.K).astype(np.int64), env.K - 1)
        probs = np.full(env.K, 1.0 / env.K)
        rewards = env.play(arms, t0, probs)
        # centring by the known mean feature removes the shift (Eq. 2's idea, uniform policy)
        x = env.X[arms] - env.X.mean(axis=0)
        self._V += x.T @ x
        self._b += x.T @ rewards
        self.cum_regret += float(np.sum(env.regret(arms)))
        self.t += L
        if self.t % self.phase == 0:
            theta = np.linalg.solve(self._V, self._b)
            self._arm = int(np.argmax(env.X @ theta))
        return self.t

    @property
    def declared_arm(self) -> int | None:
        return self._arm

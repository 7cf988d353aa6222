"""Semiparametric Thompson sampling (Kim & Paik, ICML 2019), the per-round TS baseline.

With ``B = I_d`` and ``y = 0``, every round ``t``:

1. ``mu_hat = B^-1 y``; draw ``mu~ ~ N(mu_hat, v^2 B^-1)`` and play
   ``a_t = argmax_i x_i^T mu~`` (first maximiser);
2. the action probabilities ``pi_{i,t} = P(a_t = i | H_{t-1})`` have no closed form: estimate
   them by Monte Carlo with ``n_mc`` further independent draws of ``mu~`` (the share of draws
   whose arg-max is ``i``); ``xbar_t = sum_i pi_{i,t} x_i``;
3. observe ``r_t``; ``B <- B + (x_{a_t} - xbar_t)(x_{a_t} - xbar_t)^T
   + sum_i pi_{i,t} (x_i - xbar_t)(x_i - xbar_t)^T`` and ``y <- y + 2 (x_{a_t} - xbar_t) r_t``
   (the expected-covariance term doubles the centred Gram matrix, hence the factor 2).

Exploration ``v = c sqrt(d log T)``, ``c in {1, 2, 4, 8}`` tuned (Appendix I of the
experimental-design paper).  The draws: with ``B = L L^T`` (Cholesky), ``mu~ = mu_hat + v L^-T
z`` where ``z`` are the standard normals ``ndtri(u)`` of the uniforms of the stream ``(seed,
rep, "SP-TS", "draws")`` at counters ``t (n_mc + 1) d, ...`` (draw 0 is played, draws 1..n_mc
estimate ``pi_t``): counter based, so chunking changes nothing.

The fast engine (:class:`~dashboard.algorithms.semiparametric.policies.spts.
BatchedSemiparametricTS`) scores the draws from table normals and certifies each arg-max
against these exact ones (recomputing the close calls exactly), so every arm, count and
number equals this file's.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy.special import ndtri

from ... import randomness as rnd
from ...base import Policy, validate_int, validate_positive
from ...declare import AlgorithmDeclaration, Constant
from ..policies.constants import MULTIPLIER_C

__all__ = ["SemiparametricTS"]

_C = MULTIPLIER_C("c: posterior scale", "scale of the posterior covariance (exploration)")
_N_MC = Constant(
    "n_mc",
    100,
    "int",
    low=1,
    high=100_000,
    doc="Monte Carlo draws per round estimating the action probabilities (cost per round)",
    label="n_mc: Monte Carlo draws per round",
)


class SemiparametricTS(Policy):
    """Semiparametric Thompson sampling with Monte Carlo action probabilities.

    Parameters
    ----------
    c : float
        Multiplier in ``v = c sqrt(d log T)`` (Appendix I), > 0.
    n_mc : int
        Monte Carlo draws estimating the action probabilities each round (>= 1; default 100).
    """

    declaration = AlgorithmDeclaration(
        name="SP-TS",
        problem="semiparametric",
        reference="Kim & Paik 2019 (baseline)",
        constants=(_C, _N_MC),
        per_round=True,
        doc="semiparametric Thompson sampling with Monte Carlo action probabilities",
    )
    #: Purpose of the per-round log records (one computation per round).
    purpose = "posterior sample + MC probabilities"

    def __init__(self, c: float = 1.0, n_mc: int = 100) -> None:
        super().__init__()
        self.c = validate_positive("c", c)
        self.n_mc = validate_int("n_mc", n_mc, 1, 100_000)
        self.env: Any = None

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env``."""
        self.env = env
        self.horizon = int(horizon)
        self.X = np.asarray(env.X, dtype=float)
        self.K, self.d = self.X.shape
        self.t = 0
        self.cum_regret = 0.0
        self.log = type(self.log)()
        self.events = []
        self.v = self.c * math.sqrt(self.d * math.log(max(self.horizon, 2)))
        self.B = np.eye(self.d)
        self.y = np.zeros(self.d)
        self._key = rnd.stream_key(env.seed, env.rep, "SP-TS", "draws")
        self._next: tuple[int, int, np.ndarray] | None = None  # (t, a_t, pi_t), steps 1-2

    def draws(self, t: int) -> tuple[int, np.ndarray]:
        """Steps 1-2 of round ``t``: the arm played and the Monte Carlo estimate of ``pi_t``."""
        if self._next is not None and self._next[0] == t:
            return self._next[1], self._next[2]
        L_inv = np.tril(np.linalg.inv(np.linalg.cholesky(self.B)))  # B = L L^T, L^-1
        mu_hat = L_inv.T @ (L_inv @ self.y)  # B^-1 y
        nd = (self.n_mc + 1) * self.d
        u = rnd.uniform(self._key, t * nd + np.arange(nd, dtype=np.int64))
        z = ndtri(u.reshape(self.n_mc + 1, self.d))  # row j: draw j's standard normals
        mu_tilde = mu_hat + self.v * (z @ L_inv)  # rows z^T L^-1: covariance v^2 B^-1
        best = np.argmax(mu_tilde @ self.X.T, axis=1)  # each draw's arg-max
        pi = np.bincount(best[1:], minlength=self.K) / self.n_mc
        self._next = (t, int(best[0]), pi)
        return int(best[0]), pi

    def action_distribution(self) -> np.ndarray:
        """Monte Carlo estimate of ``pi_{t+1}`` (the action probabilities of the next round)."""
        return self.draws(self.t + 1)[1].copy()

    def round(self, t: int) -> int:
        """Round ``t``: draw, play, update (step 3); returns the arm played."""
        a, pi = self.draws(t)
        r = self.env.play(np.array([a]), t, pi)[0]
        X = self.X
        xbar = pi @ X
        Zc = X - xbar  # x_i - xbar_t
        za = X[a] - xbar
        self.B += za[:, None] * za[None, :] + (Zc * pi[:, None]).T @ Zc
        self.y += 2.0 * za * r
        self.cum_regret += self.env.gaps[a]
        return a

    def advance(self, until: int) -> int:
        """Play rounds ``t+1 .. min(until, T)`` (every round is a decision point)."""
        until = min(int(until), self.horizon)
        if until <= self.t:
            return self.t
        start, t_first = time.perf_counter(), self.t + 1
        while self.t < until:
            self.t += 1
            self.round(self.t)
        self.log.record_every_round(t_first, self.t, self.purpose, time.perf_counter() - start)
        return self.t

"""Semiparametric Thompson sampling (Kim & Paik, ICML 2019), the per-round TS baseline.

Each round t, with ``B`` (initially ``I_d``) and ``y`` (initially 0):

1. ``mu_hat = B^-1 y``; draw ``mu~ ~ N(mu_hat, v^2 B^-1)`` and play ``a_t = argmax_i x_i^T mu~``;
2. the action probabilities ``pi_{i,t} = P(a_t = i | H_{t-1})`` have no closed form: they are
   estimated by Monte Carlo with ``n_mc`` further independent draws of ``mu~`` (GUIDE
   section 3); ``xbar_t = sum_i pi_{i,t} x_i``;
3. ``B <- B + (x_{a_t} - xbar_t)(x_{a_t} - xbar_t)^T
   + sum_i pi_{i,t} (x_i - xbar_t)(x_i - xbar_t)^T``
   and ``y <- y + 2 (x_{a_t} - xbar_t) r_t`` (the expected-covariance term doubles the centred
   Gram matrix, hence the factor 2).

Exploration ``v = c sqrt(d log T)`` with ``c in {1, 2, 4, 8}`` tuned (Appendix I of the
experimental-design paper).  All draws are counter based at round t, so the numbers do not
depend on chunking.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy.linalg.lapack import dpotrf as _potrf
from scipy.linalg.lapack import dtrtri as _trtri

from ... import randomness as rnd
from ...base import Policy, validate_int
from ..environment import CounterWindow
from .sbe import _positive

__all__ = ["SemiparametricTS"]


class SemiparametricTS(Policy):
    """Semiparametric Thompson sampling with Monte Carlo action probabilities.

    Parameters
    ----------
    c : float
        Multiplier in ``v = c sqrt(d log T)`` (Appendix I), > 0.
    n_mc : int
        Number of Monte Carlo draws used to estimate the action probabilities each round
        (>= 1; default 100).
    """

    name = "SP-TS"
    problem = "semiparametric"

    def __init__(self, c: float = 1.0, n_mc: int = 100) -> None:
        super().__init__()
        self.c = _positive("c", c)
        self.n_mc = validate_int("n_mc", n_mc, 1, 100_000)

    def params(self) -> dict[str, Any]:
        return {"c": self.c, "n_mc": self.n_mc}

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env``."""
        super().__init__()
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        self.env = env
        self.horizon = int(horizon)
        self.X = np.asarray(env.X, dtype=float)
        self.K, self.d = self.X.shape
        self._gaps = np.asarray(env.gaps, dtype=float)
        self._gap_list = self._gaps.tolist()
        self.v = self.c * math.sqrt(self.d * math.log(max(self.horizon, 2)))
        self.B = np.eye(self.d)
        self.y = np.zeros(self.d)
        key = rnd.stream_key(env.seed, env.rep, "SP-TS", "draws")
        nd = (self.n_mc + 1) * self.d
        # round t uses the standard normals at counters t*nd .. t*nd + nd - 1
        self._normals = CounterWindow(
            lambda t: rnd.normal(key, t[:, None] * nd + np.arange(nd)).reshape(len(t), -1, self.d),
            max(1, 65536 // nd),
        )
        self._cache_t = -1

    def _prepare(self) -> tuple[int, np.ndarray]:
        """Draw round t+1's sample and MC probabilities (cached until the round is played)."""
        if self._cache_t == self.t:
            return self._a, self._pi
        t = self.t + 1
        L, info = _potrf(self.B, lower=1)  # B = L L^T (LAPACK directly: low overhead)
        if info != 0:
            raise np.linalg.LinAlgError(f"B is not positive definite (potrf info={info})")
        L_inv, _ = _trtri(L, lower=1)
        L_inv = np.tril(L_inv)
        mu_hat = L_inv.T @ (L_inv @ self.y)
        z = self._normals(t)  # (n_mc + 1, d)
        # mu~ = mu_hat + v L^-T z has covariance v^2 (L L^T)^-1 = v^2 B^-1 (rows: z^T L^-1)
        draws = mu_hat + self.v * (z @ L_inv)
        best = np.argmax(draws @ self.X.T, axis=1)
        self._a = int(best[0])
        self._pi = np.bincount(best[1:], minlength=self.K) / self.n_mc
        self._cache_t = self.t
        return self._a, self._pi

    def action_distribution(self) -> np.ndarray:
        """Monte Carlo estimate of ``pi_{t+1}`` (the action probabilities of the next round)."""
        return self._prepare()[1].copy()

    def advance(self, until: int) -> int:
        """Play rounds t+1..until (every round is a decision point)."""
        until = min(int(until), self.horizon)
        start = time.perf_counter()
        t_first = self.t + 1
        X = self.X
        while self.t < until:
            a, pi = self._prepare()
            t = self.t + 1
            r = float(self.env.play(np.array([a]), t, pi)[0])
            xbar = pi @ X
            Zc = X - xbar
            za = X[a] - xbar
            self.B += np.outer(za, za) + (Zc * pi[:, None]).T @ Zc
            self.y += 2.0 * za * r
            self.t = t
            self.cum_regret += self._gap_list[a]
        self.log.record_every_round(
            t_first, self.t, "posterior sample + MC probabilities", time.perf_counter() - start
        )
        return self.t

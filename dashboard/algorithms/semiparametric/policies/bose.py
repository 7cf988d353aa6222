"""BOSE (Krishnamurthy, Wu & Syrgkanis 2018), the per-round semiparametric baseline.

Bandit Orthogonalized Semiparametric Estimation.  Each round t:

1. ``theta_hat = Gamma^-1 b`` with ``Gamma = lambda I + sum_s x~_s x~_s^T`` and
   ``b = sum_s x~_s r_s``, ``x~_s = x_{a_s} - xbar_{p_s}`` (the orthogonalized estimator, Eq. 2
   of the experimental-design paper, here with ridge ``lambda``);
2. surviving arms
   ``A_t = {i : for all j, theta_hat^T (x_j - x_i) <= gamma ||x_j - x_i||_{Gamma^-1}}``;
3. a distribution ``p_t`` over ``A_t``; draw ``a_t ~ p_t``, observe ``r_t``, update Gamma and b.

Step 3: the paper chooses ``p_t`` by solving a min-max quadratic program each round; the
authors' public code samples uniformly over the surviving arms.  We implement the uniform
version (``distribution="uniform"``, the only value accepted), as GUIDE section 3 notes.

Constants as in Appendix I of the experimental-design paper: ``lambda = 4 d log(9T) +
8 log(4T/delta)`` and ``gamma = c (sqrt(lambda) + sqrt(d log(T/d) + log(T/delta)))`` with
``c in {1, 2, 4, 8}`` tuned.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ... import randomness as rnd
from ...base import Policy
from ..environment import CounterWindow
from .sbe import _positive, _probability

__all__ = ["BOSE"]


class BOSE(Policy):
    """BOSE with uniform sampling over the surviving arms (per-round baseline).

    Parameters
    ----------
    c : float
        Exploration multiplier of ``gamma`` (Appendix I tunes ``c in {1, 2, 4, 8}``), > 0.
    delta : float
        Confidence level in (0, 1) used in ``lambda`` and ``gamma``; default 0.05.
    lam : float, optional
        Ridge ``lambda``; default ``4 d log(9T) + 8 log(4T/delta)`` (Appendix I).
    distribution : str
        ``"uniform"``: uniform over surviving arms (the authors' code; see module docstring).
    """

    name = "BOSE"
    problem = "semiparametric"

    def __init__(
        self,
        c: float = 1.0,
        delta: float = 0.05,
        lam: float | None = None,
        distribution: str = "uniform",
    ) -> None:
        super().__init__()
        self.c = _positive("c", c)
        self.delta = _probability("delta", delta)
        self.lam = None if lam is None else _positive("lam", lam)
        if str(distribution).lower() != "uniform":
            raise ValueError(
                f"distribution must be 'uniform' (the authors' code; the paper's per-round "
                f"quadratic program is not implemented), got {distribution!r}"
            )
        self.distribution = "uniform"

    def params(self) -> dict[str, Any]:
        return {"c": self.c, "delta": self.delta, "lam": self.lam, "distribution": "uniform"}

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env``."""
        super().__init__()
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        self.env = env
        self.horizon = T = int(horizon)
        self.X = np.asarray(env.X, dtype=float)
        self.K, self.d = d = self.X.shape[0], self.X.shape[1]
        d = self.d
        self._gaps = np.asarray(env.gaps, dtype=float)
        self._gap_list = self._gaps.tolist()
        self.lam_value = (
            self.lam
            if self.lam is not None
            else 4 * d * math.log(9 * T) + 8 * math.log(4 * T / self.delta)
        )
        self.gamma = self.c * (
            math.sqrt(self.lam_value)
            + math.sqrt(max(d * math.log(max(T / d, 1.0)) + math.log(T / self.delta), 0.0))
        )
        self.Gamma_inv = np.eye(d) / self.lam_value
        self.b = np.zeros(d)
        key = rnd.stream_key(env.seed, env.rep, "BOSE", "arms")
        self._uniform = CounterWindow(lambda t: rnd.uniform(key, t), 4096)
        self._cache_t = -1
        self._p = np.full(self.K, 1.0 / self.K)
        self.surviving = np.arange(self.K)

    def _distribution(self) -> np.ndarray:
        """Uniform distribution over the arms surviving the elimination test at round t+1."""
        if self._cache_t == self.t:
            return self._p
        theta = self.Gamma_inv @ self.b
        m = self.X @ theta
        M = self.X @ self.Gamma_inv @ self.X.T
        diag = np.diag(M)
        width = np.sqrt(np.maximum(diag[:, None] + diag[None, :] - 2.0 * M, 0.0))
        # dominated[i]: some j has theta^T (x_j - x_i) > gamma ||x_j - x_i||
        dominated = np.any(m[None, :] - m[:, None] > self.gamma * width, axis=1)
        surv = np.flatnonzero(~dominated)
        p = np.zeros(self.K)
        p[surv] = 1.0 / surv.size
        self._p, self.surviving, self._cache_t = p, surv, self.t
        return p

    def action_distribution(self) -> np.ndarray:
        """``p_t`` for the next round (uniform over surviving arms)."""
        return self._distribution().copy()

    def advance(self, until: int) -> int:
        """Play rounds t+1..until (every round is a decision point)."""
        until = min(int(until), self.horizon)
        start = time.perf_counter()
        t_first = self.t + 1
        X = self.X
        while self.t < until:
            p = self._distribution()
            t = self.t + 1
            u = float(self._uniform(t))
            a = int(self.surviving[min(int(u * self.surviving.size), self.surviving.size - 1)])
            r = float(self.env.play(np.array([a]), t, p)[0])
            z = X[a] - p @ X
            Gz = self.Gamma_inv @ z
            self.Gamma_inv -= np.outer(Gz, Gz) / (1.0 + z @ Gz)
            self.b += z * r
            self.t = t
            self.cum_regret += self._gap_list[a]
        self.log.record_every_round(
            t_first, self.t, "elimination + update", time.perf_counter() - start
        )
        return self.t

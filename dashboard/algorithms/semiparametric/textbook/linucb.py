"""LinUCB (OFUL, Abbasi-Yadkori, Pal & Szepesvari 2011), the linear foil, round by round.

LinUCB regresses raw rewards on raw features, ignoring the shift ``nu_t``: a shift with a
non-zero mean, or one that reacts to the learner, biases it (the point of showing it beside
the semiparametric algorithms).  With ``V = lambda I`` and ``b = 0``, every round ``t``:

1. ``theta_hat = V^-1 b``;
2. ``beta_t = sqrt(lambda) S + sigma sqrt(2 log(1/delta) + d log(1 + n / (lambda d)))`` with
   ``S = 1`` and ``n = t - 1`` the rounds played so far;
3. play ``a_t = argmax_i x_i^T theta_hat + alpha beta_t ||x_i||_{V^-1}`` (first maximiser);
4. observe ``r_t``; ``V <- V + x x^T`` kept as ``V^-1`` by Sherman-Morrison,
   ``V^-1 <- V^-1 - V^-1 x x^T V^-1 / (1 + x^T V^-1 x)``, and ``b <- b + x r_t``.

LinUCB is deterministic given the history, so it tells the environment ``probs=None`` (an
adaptive shift may read the arm about to be played).  The fast engine
(:class:`~dashboard.algorithms.semiparametric.policies.linear_foils.BatchedLinUCB`, ``R``
repetitions at once) gives exactly these numbers.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ...base import Policy, validate_positive, validate_probability
from ...declare import AlgorithmDeclaration, Constant
from ..policies.constants import DELTA, LAM

__all__ = ["LinUCB"]

_LAM = LAM(1.0, "ridge lambda of V = lambda I + sum x x^T")
_ALPHA = Constant(
    "alpha",
    1.0,
    low=0.0,
    low_open=True,
    high=1e3,
    doc="multiplier of the confidence width (1 = theory)",
    card=False,
)
_SIGMA = Constant(
    "sigma",
    1.0,
    low=0.0,
    low_open=True,
    high=1e3,
    doc="assumed sub-Gaussian noise level in beta_t (the environment's sigma is 1, Appendix I)",
    card=False,
)


class LinUCB(Policy):
    """OFUL-style LinUCB that ignores the shift (linear foil).

    Parameters
    ----------
    lam : float
        Ridge lambda > 0 of ``V = lambda I + sum x x^T``.
    delta : float
        Confidence level in (0, 1).
    alpha : float
        Multiplier of the confidence width (1 = theory), > 0.
    sigma : float
        Assumed sub-Gaussian noise level in ``beta_t`` (> 0; the environment's sigma is 1 in
        Appendix I).
    """

    declaration = AlgorithmDeclaration(
        name="LinUCB",
        problem="semiparametric",
        reference="Abbasi-Yadkori et al. 2011 (linear foil)",
        constants=(_LAM, DELTA, _ALPHA, _SIGMA),
        per_round=True,
        doc="OFUL-style LinUCB that ignores the shift (linear foil)",
    )
    #: Purpose of the per-round log records (one computation per round).
    purpose = "UCB argmax + update"

    def __init__(
        self, lam: float = 1.0, delta: float = 0.05, alpha: float = 1.0, sigma: float = 1.0
    ) -> None:
        super().__init__()
        self.lam = validate_positive("lam", lam)
        self.delta = validate_probability("delta", delta)
        self.alpha = validate_positive("alpha", alpha)
        self.sigma = validate_positive("sigma", sigma)
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
        self.V_inv = np.eye(self.d) / self.lam  # V = lambda I
        self.b = np.zeros(self.d)

    def choose(self, t: int) -> int:
        """Steps 1-3: the arm of round ``t``."""
        theta_hat = self.V_inv @ self.b  # step 1
        n = t - 1
        beta = math.sqrt(self.lam) + self.sigma * math.sqrt(  # step 2
            2 * math.log(1 / self.delta) + self.d * math.log(1 + n / (self.lam * self.d))
        )
        norms = np.sqrt(np.maximum(((self.X @ self.V_inv) * self.X).sum(axis=1), 0.0))
        ucb = self.X @ theta_hat + self.alpha * beta * norms  # step 3
        return int(np.argmax(ucb))

    def action_distribution(self) -> np.ndarray:
        """One-hot at the arm LinUCB will play next (it is deterministic)."""
        p = np.zeros(self.K)
        p[self.choose(self.t + 1)] = 1.0
        return p

    def round(self, t: int) -> int:
        """Round ``t``: choose, play, update (step 4); returns the arm played."""
        a = self.choose(t)
        r = self.env.play(np.array([a]), t, None)[0]
        x = self.X[a]
        Vx = self.V_inv @ x
        self.V_inv -= Vx[:, None] * Vx[None, :] / (1.0 + x @ Vx)
        self.b += x * r
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

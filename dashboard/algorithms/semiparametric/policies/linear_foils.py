"""The fast engine of LinUCB (``R`` repetitions at once); G-elimination re-exported.

The algorithms, round by round, are :mod:`dashboard.algorithms.semiparametric.textbook.linucb`
and :mod:`~dashboard.algorithms.semiparametric.textbook.g_elimination`; the engine below
reproduces LinUCB's numbers exactly (``tests/unit/test_textbook_equals_fast.py``).

Both regress raw rewards on raw features (plain least squares), so a shift with non-zero mean,
or one that reacts to the learner, biases them; the dashboard shows them next to the
semiparametric algorithms to make that point.

* :class:`LinUCB` -- OFUL (Abbasi-Yadkori, Pal & Szepesvari 2011): play
  ``argmax_i x_i^T theta_hat + alpha beta_t ||x_i||_{V^-1}`` with ``V = lambda I + sum x x^T`` and
  ``beta_t = sqrt(lambda) S + sigma sqrt(2 log(1/delta) + d log(1 + t/(lambda d)))``, ``S = 1``.
* :class:`GElimination` -- phased elimination with G-optimal exploration (Lattimore &
  Szepesvari 2020, Algorithm 12): phase l, ``epsilon_l = 2^-l``, G-optimal design ``pi`` of the
  surviving arms (Eq. 1, :func:`..design.g_optimal_design`), each support arm played
  ``T_l(a) = ceil(c 2 r pi(a) / epsilon_l^2 log(K l(l+1)/delta))`` times (``r`` = span
  dimension) in a fixed order, least squares on the phase's data, eliminate arms whose
  estimated gap exceeds ``2 epsilon_l``.

Both are deterministic given the history, so they pass ``probs=None`` to the environment (an
adaptive shift may read the arm about to be played).

:class:`BatchedLinUCB` runs ``R`` repetitions at once (``V^-1`` of shape ``(R, d, d)``,
Sherman-Morrison updates, stacked products); :class:`LinUCB` here (the textbook class's fast
stand-in for one repetition) is that engine with ``R = 1``, so both give identical numbers.
G-elimination is phase based (a few design solves per run, whole phases played in one
vectorised call) and has no batched version.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...base import validate_positive, validate_probability
from ..textbook import linucb as textbook
from ..textbook.g_elimination import GElimination
from .per_round import PerRoundBatch, single_advance, single_reset

__all__ = ["BatchedLinUCB", "GElimination", "LinUCB"]


class BatchedLinUCB(PerRoundBatch):
    """LinUCB (OFUL) for ``R`` repetitions at once: same parameters and numbers as
    :class:`LinUCB`, state ``V_inv (R, d, d)`` and ``b (R, d)``.

    Each round: ``theta_hat = V^-1 b``, ``beta_t`` (common to all repetitions), the UCB
    ``x_i^T theta_hat + alpha beta_t ||x_i||_{V^-1}`` of every arm in every repetition, the
    argmax (first maximiser), and the Sherman-Morrison update
    ``V^-1 <- V^-1 - V^-1 x x^T V^-1 / (1 + x^T V^-1 x)``.  Deterministic given the history:
    an adaptive shift reads the arm about to be played (``probs=None``).

    Parameters
    ----------
    lam, delta, alpha, sigma
        As :class:`LinUCB`.
    """

    name = "LinUCB"
    #: The textbook algorithm whose numbers this engine reproduces (the registry links them).
    speeds_up = "LinUCB"
    purpose = textbook.LinUCB.purpose
    randomised = False

    def __init__(
        self, lam: float = 1.0, delta: float = 0.05, alpha: float = 1.0, sigma: float = 1.0
    ) -> None:
        super().__init__()
        self.lam = validate_positive("lam", lam)
        self.delta = validate_probability("delta", delta)
        self.alpha = validate_positive("alpha", alpha)
        self.sigma = validate_positive("sigma", sigma)

    def params(self) -> dict[str, Any]:
        """Tunable parameters."""
        return {"lam": self.lam, "delta": self.delta, "alpha": self.alpha, "sigma": self.sigma}

    def _reset_state(self) -> None:
        self.V_inv = np.repeat((np.eye(self.d) / self.lam)[None], self.R, axis=0)
        self.b = np.zeros((self.R, self.d))

    def _decide(self) -> tuple[np.ndarray, None]:
        if self._cache_t == self.t:
            return self._a, None
        X, V = self.X, self.V_inv
        theta = (V @ self.b[:, :, None])[:, :, 0]
        n = self.t
        beta = math.sqrt(self.lam) + self.sigma * math.sqrt(
            2 * math.log(1 / self.delta) + self.d * math.log(1 + n / (self.lam * self.d))
        )
        quad = ((X @ V) * X).sum(axis=2)  # ||x_i||^2_{V^-1}, (R, K)
        width = np.sqrt(np.maximum(quad, 0.0))
        ucb = (X @ theta[:, :, None])[:, :, 0] + self.alpha * beta * width
        self._a = np.argmax(ucb, axis=1)
        self._cache_t = self.t
        return self._a, None

    def _update(self, arms: np.ndarray, rewards: np.ndarray) -> None:
        x = self.X[arms]
        V = self.V_inv
        Vx = (V @ x[:, :, None])[:, :, 0]
        denom = 1.0 + (x[:, None, :] @ Vx[:, :, None])[:, 0, 0]
        V -= Vx[:, :, None] * Vx[:, None, :] / denom[:, None, None]
        self.b += x * rewards[:, None]


class LinUCB(textbook.LinUCB):
    """One repetition of LinUCB run by the fast engine (:class:`BatchedLinUCB`, ``R = 1``).

    The textbook class's declaration, parameters and numbers; ``V_inv`` and ``b`` read the
    engine's state.
    """

    def __init__(
        self, lam: float = 1.0, delta: float = 0.05, alpha: float = 1.0, sigma: float = 1.0
    ) -> None:
        super().__init__(lam=lam, delta=delta, alpha=alpha, sigma=sigma)
        self._engine = BatchedLinUCB(lam=lam, delta=delta, alpha=alpha, sigma=sigma)
        self.lam, self.delta = self._engine.lam, self._engine.delta
        self.alpha, self.sigma = self._engine.alpha, self._engine.sigma

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env``."""
        single_reset(self, env, horizon)
        self.X, self.K, self.d = self._engine.X, self._engine.K, self._engine.d

    @property
    def V_inv(self) -> np.ndarray:
        """``V^-1``, shape ``(d, d)`` (a view of the engine's state)."""
        return self._engine.V_inv[0]

    @property
    def b(self) -> np.ndarray:
        """``b = sum_s x_s r_s``, shape ``(d,)``."""
        return self._engine.b[0]

    def action_distribution(self) -> np.ndarray:
        """One-hot at the arm LinUCB will play next (it is deterministic)."""
        return self._engine.action_distributions()[0]

    def advance(self, until: int) -> int:
        """Play rounds t+1..until (every round is a decision point)."""
        return single_advance(self, until)


#: The fast engine's one-repetition policy (the runner's choice for R = 1).
BatchedLinUCB.one_repetition = LinUCB

"""Linear-bandit foils that ignore the shift nu_t: LinUCB (OFUL) and G-optimal elimination.

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
Sherman-Morrison updates, stacked products); :class:`LinUCB` is that engine with ``R = 1``, so
both give identical numbers.  G-elimination is phase based (a few design solves per run, whole
phases played in one vectorised call) and has no batched version.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from ...base import Policy, PolicyEvent, Stopwatch, validate_positive, validate_probability
from ...declare import AlgorithmDeclaration, Constant
from ..design import g_optimal_design
from ..estimators import LeastSquares
from .constants import DELTA, DESIGN_TOL, ELIMINATION, LAM, MULTIPLIER_C
from .per_round import PerRoundBatch, single_advance, single_reset
from .phases import PhaseElimination

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
    purpose = "UCB argmax + update"
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
_C = MULTIPLIER_C("c: multiplier of the phase length", "multiplier of the phase length")
_ELIM2 = replace(ELIMINATION, default=2.0)


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

    Notes
    -----
    Implemented as :class:`BatchedLinUCB` with one repetition, so ``R`` LinUCB runs equal one
    batched run exactly; ``V_inv`` and ``b`` read the engine's state.
    """

    declaration = AlgorithmDeclaration(
        name="LinUCB",
        problem="semiparametric",
        reference="Abbasi-Yadkori et al. 2011 (linear foil)",
        constants=(_LAM, DELTA, _ALPHA, _SIGMA),
        per_round=True,
        batched=BatchedLinUCB,
        doc="OFUL-style LinUCB that ignores the shift (linear foil)",
    )

    def __init__(
        self, lam: float = 1.0, delta: float = 0.05, alpha: float = 1.0, sigma: float = 1.0
    ) -> None:
        super().__init__()
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


class GElimination(PhaseElimination):
    """Phased elimination with G-optimal exploration (Lattimore & Szepesvari 2020, Alg. 12).

    Parameters
    ----------
    c : float
        Multiplier of the phase lengths ``T_l(a)`` (1 = the book's constant), > 0.
    delta : float
        Confidence level in (0, 1).
    elimination_factor : float
        Eliminate arms whose estimated gap exceeds ``elimination_factor * epsilon_l``
        (the book: 2).
    design_tol : float
        Kiefer-Wolfowitz accuracy of the G-optimal design, > 0.
    """

    declaration = AlgorithmDeclaration(
        name="G-elimination",
        problem="semiparametric",
        reference="Lattimore & Szepesvari 2020, Alg. 12 (linear foil)",
        constants=(_C, DELTA, _ELIM2, DESIGN_TOL),
        doc="G-optimal phase elimination on raw rewards (linear foil)",
    )

    def __init__(
        self,
        c: float = 1.0,
        delta: float = 0.05,
        elimination_factor: float = 2.0,
        design_tol: float = 1e-3,
    ) -> None:
        super().__init__()
        # declared constants were validated by the declaration (Policy.__new__)
        self.c, self.delta = float(c), float(delta)
        self.elimination_factor, self.design_tol = float(elimination_factor), float(design_tol)

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env``."""
        self._reset_phases(env, horizon)
        self._start_phase()

    def _start_phase(self) -> None:
        if self._declare_if_one_left():
            return
        self.phase += 1
        l = self.phase
        eps = 2.0**-l
        with Stopwatch() as sw:
            res = g_optimal_design(self.X[self.surviving], tol=self.design_tol)
        self.log.record(self.t, self.log.new_round(), "G-optimal design", sw.seconds)
        r = max(res.span_dimension, 1)
        w = res.weights
        counts = np.where(
            w > 0,
            np.ceil(self.c * 2 * r * w / eps**2 * math.log(self.K * l * (l + 1) / self.delta)),
            0,
        ).astype(np.int64)
        self._weights = np.zeros(self.K)
        self._weights[self.surviving] = w
        self._schedule = np.repeat(self.surviving, counts)  # fixed order: by arm index
        self._phase_start = self.t + 1
        self._phase_end = self.t + self._schedule.size
        self._chunks_rewards: list[np.ndarray] = []

    def _finish_phase(self) -> None:
        l = self.phase
        played = self._schedule[: self.t - self._phase_start + 1]
        rewards = np.concatenate(self._chunks_rewards)
        truncated = self.t < self._phase_end
        with Stopwatch() as sw:
            ls = LeastSquares(self.X)
            ls.add_block(played, rewards)
            theta = ls.theta()
        self.log.record(self.t, self.log.new_round(), "least squares", sw.seconds)
        self.theta_hat = theta
        eps = 2.0**-l
        est_gaps, keep = self._eliminate(theta, eps)
        self.events.append(
            PolicyEvent(
                self.t,
                "phase",
                {
                    "phase": l,
                    "t_start": self._phase_start,
                    "t_end": self.t,
                    "epsilon": eps,
                    "rounds": int(played.size),
                    "truncated": truncated,
                    "surviving": self.surviving.copy(),
                    "eliminated": self.surviving[~keep].copy()
                    if not truncated
                    else np.zeros(0, int),
                    "weights": self._weights.copy(),
                    "theta_hat": theta.copy(),
                    "estimated_gaps": est_gaps,
                },
            )
        )
        self._close_phase(keep, truncated)

    def action_distribution(self) -> np.ndarray:
        """One-hot at the next scheduled arm (the schedule is deterministic)."""
        p = np.zeros(self.K)
        if self._declared is not None:
            p[self._declared] = 1.0
        else:
            p[self._schedule[min(self.t - self._phase_start + 1, self._schedule.size - 1)]] = 1.0
        return p

    def advance(self, until: int) -> int:
        """Play up to ``until`` or the end of the current phase."""
        until = min(int(until), self.horizon)
        if self.t >= until:
            return self.t
        if self._declared is not None:
            return self._play_declared(until, None)
        t0 = self.t + 1
        t1 = min(until, self._phase_end)
        i0 = t0 - self._phase_start
        arms = self._schedule[i0 : i0 + (t1 - t0 + 1)]
        self._chunks_rewards.append(self.env.play(arms, t0, None))
        self.pulls += np.bincount(arms, minlength=self.K)
        self.t = t1
        self.cum_regret = float(self.pulls @ self._gaps)
        if self.t == self._phase_end or self.t == self.horizon:
            self._finish_phase()
        return self.t

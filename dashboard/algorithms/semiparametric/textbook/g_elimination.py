"""G-optimal phased elimination (Lattimore & Szepesvari 2020, Algorithm 12), the linear foil.

It regresses raw rewards on raw features (plain least squares), ignoring the shift ``nu_t``:
a shift with a non-zero mean, or one that reacts to the learner, biases it.  Phase ``l``:

1. ``epsilon_l = 2^-l``; a G-optimal design ``pi`` of the surviving arms (Eq. 1,
   :func:`~dashboard.algorithms.semiparametric.design.g_optimal_design`), ``r`` its span
   dimension;
2. each support arm ``a`` is played ``T_l(a) = ceil(c 2 r pi(a) / epsilon_l^2
   log(K l (l+1) / delta))`` times, in a fixed order (by arm index);
3. least squares ``theta_hat`` on the phase's data;
4. eliminate the arms whose estimated gap exceeds ``elimination_factor epsilon_l`` (the
   book: 2); one arm left: declare it.

Deterministic given the history (``probs=None`` to the environment).  A phase is played as one
vectorised block (the schedule is fixed inside it); it has no separate fast engine.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from ...base import PolicyEvent, Stopwatch
from ...declare import AlgorithmDeclaration
from ..design import g_optimal_design
from ..estimators import LeastSquares
from ..policies.constants import DELTA, DESIGN_TOL, ELIMINATION, MULTIPLIER_C
from ..policies.phases import PhaseElimination

__all__ = ["GElimination"]

_C = MULTIPLIER_C("c: multiplier of the phase length", "multiplier of the phase length")
_ELIM2 = replace(ELIMINATION, default=2.0)


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

"""The phase-elimination skeleton shared by SBE (Algorithm 2, Section 5.1) and G-elimination
(Lattimore & Szepesvari 2020, Algorithm 12).

Both keep the surviving arms ``A_l``, play phase ``l`` (``epsilon_l = 2^-l``) from a design over
them, estimate ``theta_hat`` on the phase's data only, and keep the arms whose estimated gap to
the best estimate is at most ``elimination_factor * epsilon_l``.  A phase cut short by the
horizon eliminates nothing (Algorithm 2: "if t + 1 >= T, exit").  When one arm is left it is
declared the best arm (best-arm identification, Theorem 5) and played until ``T``.  What differs
(the design, the phase length, the estimator, how arms are drawn) stays in the subclasses.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...base import Policy, PolicyEvent

__all__ = ["PhaseElimination"]


class PhaseElimination(Policy):
    """Surviving arms, elimination and declaration of a phase-elimination policy.

    Subclasses set ``elimination_factor`` and implement ``_start_phase`` (which begins with
    :meth:`_declare_if_one_left`) and ``_finish_phase`` (which ends with :meth:`_eliminate`
    and :meth:`_close_phase`).
    """

    elimination_factor: float

    def _reset_phases(self, env: Any, horizon: int) -> None:
        """The common part of ``reset``: fresh counters, the arms ``X``, every arm alive."""
        Policy.__init__(self)
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        self.env = env
        self.horizon = int(horizon)
        self.X = np.asarray(env.X, dtype=float)
        self.K, self.d = self.X.shape
        self._gaps = np.asarray(env.gaps, dtype=float)
        self.pulls = np.zeros(self.K, dtype=np.int64)
        self.surviving = np.arange(self.K)
        self.phase = 0
        self.theta_hat: np.ndarray | None = None
        self._declared: int | None = None
        self._declared_at: int | None = None

    @property
    def declared_arm(self) -> int | None:
        return self._declared

    @property
    def declaration_time(self) -> int | None:
        return self._declared_at

    def _start_phase(self) -> None:
        raise NotImplementedError

    def _declare_if_one_left(self) -> bool:
        """Declare the only surviving arm (and record a ``declare`` event); whether it did."""
        if self.surviving.size != 1:
            return False
        self._declared = int(self.surviving[0])
        self._declared_at = self.t
        self.events.append(
            PolicyEvent(self.t, "declare", {"arm": self._declared, "phase": self.phase})
        )
        return True

    def _eliminate(self, theta: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
        """``(estimated gaps, keep)`` of the surviving arms under ``theta``: an arm is kept if
        its estimated gap is at most ``elimination_factor * eps``."""
        est = self.X[self.surviving] @ theta
        est_gaps = est.max() - est
        return est_gaps, est_gaps <= self.elimination_factor * eps

    def _close_phase(self, keep: np.ndarray, truncated: bool) -> None:
        """Apply ``keep`` and start the next phase, unless the horizon cut the phase short."""
        if truncated:  # no elimination on partial data
            return
        self.surviving = self.surviving[keep]
        if self.t < self.horizon or self.surviving.size == 1:
            self._start_phase()

    def _play_declared(self, until: int, p: np.ndarray | None) -> int:
        """Play the declared arm in rounds ``t+1..until`` (``p``: the distribution passed to
        the environment, as the policy's per-round playing does)."""
        L = until - self.t
        self.env.play(np.full(L, self._declared, dtype=np.int64), self.t + 1, p)
        self.pulls[self._declared] += L
        self.t = until
        self.cum_regret = float(self.pulls @ self._gaps)
        return self.t

"""SBE: Semiparametric Bandits with Elimination (Algorithm 2, Section 5.1).

Phases ``l = 1, 2, ...`` with ``epsilon_l = 2^-l``.  At the start of phase ``l`` the design
``p_l^deo`` is DEO (Algorithm 1) over the surviving arms ``A_l`` with anchor ``A_l(1)`` (the
smallest surviving index); arms are drawn i.i.d. from it for ``n_l`` rounds (Eq. 4); then
``theta_hat_(l) = (B + beta_(l) I)^-1 b`` is the orthogonalized estimator (Eq. 2) on the phase's
samples only, with ``beta_(l) = log(n_l l (l+1) / delta)``, and every arm whose estimated reward
is below the best estimate by more than ``epsilon_l`` is eliminated.  When one arm is left it is
declared the best arm (BAI, Theorem 5) and played until T.

Inside a phase the policy is fixed, so a phase is one vectorised block: arms are drawn with
counter-based uniforms at the round index, and the estimator only needs the per-arm counts and
reward sums (O(K d^2) per phase).  There are O(log T) design solves / matrix inversions
(Appendix H): one per phase.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import randomness as rnd
from ...base import PolicyEvent, Stopwatch
from ...declare import AlgorithmDeclaration, Constant
from ..design import deo_design
from ..estimators import OrthogonalizedRidge
from .constants import DELTA, DESIGN_TOL, ELIMINATION, MULTIPLIER_C
from .phases import PhaseElimination

__all__ = ["N_RULES", "SBE", "phase_length"]

#: Allowed values of ``n_rule``.
N_RULES = ("eq4", "appendix-e", "appendix-i")


def phase_length(l: int, d: int, K: int, delta: float, c: float = 1.0, n_rule: str = "eq4") -> int:
    """Number of rounds ``n_l`` of phase ``l`` (``epsilon_l = 2^-l``).

    ``"eq4"`` (Eq. 4, with ``c`` standing for the unknown ``4 C_2``)::

        n_l = c * ceil( d/eps^2 log(d K l(l+1) / (delta eps)) + d^1.5/eps log(d K l(l+1) / delta) )

    ``"appendix-e"`` (the K-independent variant of Appendix E, with ``C_2 = C_3`` and ``c`` for
    ``4 C_2``)::

        n_l = c * min( ceil(Eq. 4 bracket), ceil( d^2/eps^2 log(d l(l+1) / (delta eps)) ) )

    ``"appendix-i"`` (the formula used in the experiments of Appendix I: as appendix-e but with
    ``l`` instead of ``l(l+1)`` inside the logarithms).

    The result is rounded up to an integer and is at least 1.
    """
    if n_rule not in N_RULES:
        raise ValueError(f"n_rule must be one of {', '.join(N_RULES)}, got {n_rule!r}")
    eps = 2.0**-l
    ll = l if n_rule == "appendix-i" else l * (l + 1)
    bracket = d / eps**2 * math.log(d * K * ll / (delta * eps)) + d**1.5 / eps * math.log(
        d * K * ll / delta
    )
    n = math.ceil(bracket)
    if n_rule != "eq4":
        n = min(n, math.ceil(d**2 / eps**2 * math.log(d * ll / (delta * eps))))
    return max(1, math.ceil(c * n))


_C = MULTIPLIER_C("c: multiplier of n_l (Eq. 4, Appendix I)", "multiplier of the phase length n_l")
_N_RULE = Constant(
    "n_rule",
    "eq4",
    "choice",
    choices=N_RULES,
    doc="phase length rule: eq4 (Eq. 4 with C_2 = c), appendix-e (K-free min), appendix-i "
    "(the experiments' bracket)",
    label="n_rule: phase length rule",
)


class SBE(PhaseElimination):
    """SBE, Algorithm 2 of the experimental-design paper (Section 5.1).

    Parameters
    ----------
    c : float
        Multiplier of the phase length ``n_l`` (the unknown absolute constant ``4 C_2`` of
        Eq. 4; Appendix I tunes ``c in {1, 2, 4, 8}``), > 0.  Default 1.
    delta : float
        Confidence level delta in (0, 1) (in ``n_l`` and in ``beta_(l)``).  The paper does not
        state the value used in Appendix I; default 0.05.
    n_rule : str
        ``"eq4"`` (Eq. 4, default), ``"appendix-e"`` (K-independent ``min(...)`` of
        Appendix E) or ``"appendix-i"`` (the formula printed in Appendix I); see
        :func:`phase_length`.
    elimination_factor : float
        Arms are eliminated when their estimated gap exceeds ``elimination_factor *
        epsilon_l``.  Algorithm 2 uses ``epsilon_l`` (factor 1, default): Lemma D.9's good
        event bounds each anchored estimate by ``epsilon_l / 2``, so a difference of two is off
        by at most ``epsilon_l``.  (Lattimore & Szepesvari's linear elimination uses
        ``2 epsilon_l``.)
    design_tol : float
        Kiefer-Wolfowitz accuracy of the G-optimal step of DEO, > 0.

    Attributes
    ----------
    surviving : ndarray of int
        Current surviving arms ``A_l``.
    phase : int
        Current phase index ``l`` (1-based).
    theta_hat : ndarray or None
        Estimate of the last completed phase.
    """

    declaration = AlgorithmDeclaration(
        name="SBE",
        problem="semiparametric",
        reference="Algorithm 2",
        constants=(_C, DELTA, _N_RULE, ELIMINATION, DESIGN_TOL),
        doc="semiparametric best-arm elimination with DEO designs (Eq. 2, Eq. 4)",
    )

    def __init__(
        self,
        c: float = 1.0,
        delta: float = 0.05,
        n_rule: str = "eq4",
        elimination_factor: float = 1.0,
        design_tol: float = 1e-3,
    ) -> None:
        super().__init__()
        # declared constants were validated by the declaration (Policy.__new__)
        self.c, self.delta, self.n_rule = float(c), float(delta), n_rule
        self.elimination_factor, self.design_tol = float(elimination_factor), float(design_tol)
        self.env: Any = None

    # ------------------------------------------------------------------ lifecycle
    def reset(self, env: Any, horizon: int) -> None:
        """Start a run on a :class:`SemiparametricEnvironment` for ``horizon`` rounds."""
        self._reset_phases(env, horizon)
        self._key = rnd.stream_key(env.seed, env.rep, "SBE", "arms")
        self._start_phase()

    def action_distribution(self) -> np.ndarray:
        """The distribution of the next round's arm: DEO weights of the current phase, or the
        declared arm.  Constant within a phase."""
        if self._declared is not None:
            p = np.zeros(self.K)
            p[self._declared] = 1.0
            return p
        return self._p.copy()

    # ------------------------------------------------------------------ phases
    def _start_phase(self) -> None:
        """Begin phase l+1 at the current round: declare, or solve DEO and set n_l."""
        if self._declare_if_one_left():
            return
        self.phase += 1
        l = self.phase
        anchor = int(self.surviving[0])
        with Stopwatch() as sw:
            report = deo_design(self.X, anchor=anchor, tol=self.design_tol, arms=self.surviving)
        self.log.record(self.t, self.log.new_round(), "DEO design", sw.seconds)
        self._report = report
        p = np.asarray(report.weights, dtype=float)
        self._p = p / p.sum()
        self._cdf = np.cumsum(self._p)
        self._n_l = phase_length(l, self.d, self.K, self.delta, self.c, self.n_rule)
        self._phase_start = self.t + 1
        self._phase_end = self.t + self._n_l  # may exceed the horizon (then truncated)
        self._chunks_arms: list[np.ndarray] = []
        self._chunks_rewards: list[np.ndarray] = []

    def _finish_phase(self) -> None:
        """End of phase l: orthogonalized estimate (Eq. 2) on the phase's data, eliminate."""
        l = self.phase
        arms = np.concatenate(self._chunks_arms)
        rewards = np.concatenate(self._chunks_rewards)
        truncated = self.t < self._phase_end
        with Stopwatch() as sw:
            est = OrthogonalizedRidge(self.X, self.delta)
            est.add_block(arms, rewards, self._p)
            beta = math.log(self._n_l * l * (l + 1) / self.delta)
            theta = est.theta(beta)
        self.log.record(self.t, self.log.new_round(), "orthogonalized estimate", sw.seconds)
        self.theta_hat = theta
        eps = 2.0**-l
        est_gaps, keep = self._eliminate(theta, eps)
        r = self._report
        self.events.append(
            PolicyEvent(
                self.t,
                "phase",
                {
                    "phase": l,
                    "t_start": self._phase_start,
                    "t_end": self.t,
                    "epsilon": eps,
                    "n_l": self._n_l,
                    "rounds": int(arms.size),
                    "truncated": truncated,
                    "surviving": self.surviving.copy(),
                    "eliminated": self.surviving[~keep].copy()
                    if not truncated
                    else np.zeros(0, int),
                    "anchor": int(r.anchor),
                    "weights": self._p.copy(),
                    "theta_hat": theta.copy(),
                    "beta": beta,
                    "estimated_gaps": est_gaps,
                    "max_norm_to_anchor": float(r.max_norm_to_anchor),
                    "bound_2_sqrt_d": float(r.bound_2_sqrt_d),
                    "max_norm_to_mean": float(r.max_norm_to_mean),
                    "bound_4_sqrt_d": float(r.bound_4_sqrt_d),
                    "kw_max_leverage": float(r.kw_max_leverage),
                    "span_dimension": int(r.span_dimension),
                },
            )
        )
        self._close_phase(keep, truncated)  # Algorithm 2: "if t + 1 >= T, exit"

    # ------------------------------------------------------------------ playing
    def advance(self, until: int) -> int:
        """Play up to ``until`` or the end of the current phase, whichever comes first."""
        until = min(int(until), self.horizon)
        if self.t >= until:
            return self.t
        t0 = self.t + 1
        if self._declared is not None:
            return self._play_declared(until, self.action_distribution())
        t1 = min(until, self._phase_end)
        counters = np.arange(t0, t1 + 1, dtype=np.int64)
        arms = rnd.categorical(self._key, counters, self._cdf)
        rewards = self.env.play(arms, t0, self._p)
        self._chunks_arms.append(arms)
        self._chunks_rewards.append(rewards)
        self.pulls += np.bincount(arms, minlength=self.K)
        self.t = t1
        self.cum_regret = float(self.pulls @ self._gaps)
        if self.t == self._phase_end or self.t == self.horizon:
            self._finish_phase()
        return self.t

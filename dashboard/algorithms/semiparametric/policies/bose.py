"""The fast engine of BOSE (Krishnamurthy, Wu & Syrgkanis 2018): ``R`` repetitions at once.

The algorithm itself, round by round, is :mod:`dashboard.algorithms.semiparametric.textbook.bose`
(with the min-max program :func:`minmax_row`); the engine below reproduces its numbers exactly
(``tests/unit/test_textbook_equals_fast.py``).

Bandit Orthogonalized Semiparametric Estimation.  Each round t:

1. ``theta_hat = Gamma^-1 b`` with ``Gamma = lambda I + sum_s x~_s x~_s^T`` and
   ``b = sum_s x~_s r_s``, ``x~_s = x_{a_s} - xbar_{p_s}`` (the orthogonalized estimator, Eq. 2
   of the experimental-design paper, here with ridge ``lambda``);
2. surviving arms
   ``A_t = {i : for all j, theta_hat^T (x_j - x_i) <= gamma ||x_j - x_i||_{Gamma^-1}}``;
3. a distribution ``p_t`` over ``A_t``; draw ``a_t ~ p_t``, observe ``r_t``, update Gamma and b.

Step 3, two choices (``distribution``):

* ``"uniform"`` (default): uniform over ``A_t``, as the authors' public code does.  This keeps
  the pinned numbers and is what Appendix I's BOSE curves were most likely drawn with.
* ``"minmax"``: the paper's per-round distribution.  Krishnamurthy et al. (2018, Algorithm 1)
  ask for ``p_t in Delta(A_t)`` with, for every ``b in A_t``,

      ||x_b - mu_p||^2_{Gamma^-1} <= E_{a~p} ||x_a - mu_p||^2_{Gamma^-1},  mu_p = sum_a p_a x_a,

  which the experimental-design paper (Appendix H) describes as "a minimax quadratic
  optimization problem every time": ``min_p max_b v_b(p)`` with the violations
  ``v_b(p) = ||x_b - mu_p||^2 - tr Cov_p`` (norms in ``Gamma^-1``).  Since
  ``sum_b p_b v_b(p) = 0`` the min-max value is 0, and ``v_b = g_b - sum_a p_a g_a`` with
  ``g`` the gradient of the concave ``phi(p) = tr Cov_p``: the feasible distributions are
  exactly the maximisers of ``tr Cov_p`` (the dual of the minimum enclosing ball of
  ``A_t``).  We solve that quadratic program every round by a primal active-set method
  (:func:`minmax_row`, row by row in :func:`minmax_distribution`), warm-started at the
  previous round's distribution restricted to ``A_t`` (uniform in round 1) and stopped when
  ``max_b v_b <= qp_tol * tr Cov_p`` (or after ``qp_max_iter`` steps).  The solve is part
  of every round's logged computation (purpose ``"elimination + min-max QP"``), so the
  wall-time and expensive-computation plots show what Appendix H contrasts with SBE's
  once-per-phase design.

Constants as in Appendix I of the experimental-design paper: ``lambda = 4 d log(9T) +
8 log(4T/delta)`` and ``gamma = c (sqrt(lambda) + sqrt(d log(T/d) + log(T/delta)))`` with
``c in {1, 2, 4, 8}`` tuned.

Batched across repetitions: :class:`BatchedBOSE` runs ``R`` repetitions at once on state arrays
with a leading repetition axis (``Gamma^-1`` of shape ``(R, d, d)``, Sherman-Morrison rank-one
updates, stacked matrix products).  With the uniform distribution and ``K >=``
:data:`CERTIFY_MIN_K`, a repetition whose ``sqrt(b^T Gamma^-1 b)`` is below ``gamma`` (with a
margin for rounding) keeps every arm without its ``(K, K)`` widths being computed: by
Cauchy-Schwarz no pair can pass the test (:mod:`.elimination_bound`; the same numbers,
4.5x per round at d = 20, K = 30 over the first 3 * 10^4 rounds of Appendix I's tuned c).
:class:`BOSE` here (one repetition, the textbook class's fast stand-in) *is* that engine with
``R = 1``, so ``R`` separate BOSE runs give exactly the numbers of one batched run.  The
machinery shared by the batched per-round baselines (feedback, regret, logs) is
:class:`~.per_round.PerRoundBatch`, also used by :mod:`.spts` and :mod:`.linear_foils`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import randomness as rnd
from ...base import validate_positive, validate_probability
from ..textbook import bose as textbook
from ..textbook.bose import DISTRIBUTIONS, minmax_row
from .elimination_bound import arm_bounds, no_elimination
from .per_round import WINDOW_VALUES, PerRoundBatch, single_advance, single_reset

__all__ = ["BOSE", "DISTRIBUTIONS", "BatchedBOSE", "minmax_distribution", "minmax_row"]
#: Fewest arms at which :class:`BatchedBOSE` tries :func:`.no_elimination` before the widths:
#: the bound costs ~0.3 us per repetition-round, the (K, K) widths ~0.9 us at K = 10 (no gain
#: measured at d = 5, K = 10) and ~8 us at K = 30 (4.5x per round at d = 20, issue 9).
CERTIFY_MIN_K = 16


#: The textbook's min-max program (one problem), under its former name.
_minmax_row = minmax_row


def minmax_distribution(
    Q: np.ndarray,
    allowed: np.ndarray,
    tol: float = 1e-3,
    max_iter: int = 1000,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BOSE's per-round distribution for ``R`` problems at once (see the module docstring).

    Parameters
    ----------
    Q : ndarray (R, K, K)
        Gram matrices ``Q_ab = x_a^T Gamma^-1 x_b``.
    allowed : ndarray (R, K) of bool
        The surviving arms ``A_t`` (at least one per row).
    tol, max_iter
        Stop when ``max_{b in A_t} v_b <= tol * tr Cov_p`` (BOSE's condition relaxed to
        ``||x_b - mu_p||^2 <= (1 + tol) tr Cov_p``) or after ``max_iter`` steps.
    start : ndarray (R, K), optional
        Warm starts (e.g. the previous round's distributions); default uniform over ``A_t``.

    Returns
    -------
    p : ndarray (R, K)
        Distributions supported on ``A_t``.
    violation : ndarray (R,)
        ``max_{b in A_t} v_b(p)``, clipped at 0 (0 at the exact solution).
    iterations : ndarray (R,) of int
        Active-set steps taken per row.

    Each row is solved on its own (:func:`_minmax_row`), so a row's answer never depends on
    the other rows: a batch of ``R`` repetitions gives the numbers of ``R`` single runs.
    """
    Q = np.asarray(Q, dtype=float)
    allowed = np.asarray(allowed, dtype=bool)
    R, K = allowed.shape
    p = np.zeros((R, K))
    violation = np.zeros(R)
    iterations = np.zeros(R, dtype=np.int64)
    for r in range(R):
        idx = np.flatnonzero(allowed[r])
        p[r, idx], violation[r], iterations[r] = minmax_row(
            Q[r], idx, tol, max_iter, None if start is None else start[r]
        )
    return p, violation, iterations


class BatchedBOSE(PerRoundBatch):
    """BOSE for ``R`` repetitions at once (uniform or min-max distribution over ``A_t``).

    Same parameters and numbers as :class:`BOSE`; state ``Gamma_inv (R, d, d)`` and
    ``b (R, d)``.  Each round: ``theta_hat = Gamma^-1 b``, the elimination test on the
    ``(R, K, K)`` array of pairwise widths ``||x_j - x_i||_{Gamma^-1}`` (skipped for the
    repetitions where :func:`.no_elimination` proves that every arm survives), the uniform draw over
    ``A_t`` from the stream ``(seed, rep, "BOSE", "arms")`` at counter ``t``, and the
    Sherman-Morrison update ``Gamma^-1 <- Gamma^-1 - Gamma^-1 x~ x~^T Gamma^-1 / (1 + x~^T
    Gamma^-1 x~)``.

    Parameters
    ----------
    c, delta, lam, distribution, qp_tol, qp_max_iter
        As :class:`BOSE`.

    Attributes
    ----------
    surviving : ndarray (R, K) of bool
        ``A_{t+1}`` of every repetition (after :meth:`action_distributions` or a round).
    certified : int
        Repetition-rounds whose elimination test the bound settled (no widths computed).
    trace : ndarray (R,)
        ``tr Gamma = d lambda + sum_s ||x~_s||^2`` (for the bound; tracked only where the bound
        is used: uniform distribution, :attr:`certify`, ``K >=`` :data:`CERTIFY_MIN_K`).
    qp_iterations : ndarray (R,) of int
        Active-set steps spent on the min-max program so far (0 with ``"uniform"``).
    qp_violation : ndarray (R,)
        ``max_b v_b`` of the last solved program (0 with ``"uniform"``).
    """

    name = "BOSE"
    #: The textbook algorithm whose numbers this engine reproduces (the registry links them).
    speeds_up = "BOSE"
    purpose = "elimination + update"
    randomised = True
    #: Appendix I's c may differ per repetition (``gamma`` is then an array).
    per_repetition = ("c",)
    #: With the uniform distribution, skip the widths of the repetitions where a bound proves
    #: that no arm is eliminated (:mod:`.elimination_bound`; the same numbers either way:
    #: ``False`` computes every repetition's test).
    certify: bool = True

    def __init__(
        self,
        c: float = 1.0,
        delta: float = 0.05,
        lam: float | None = None,
        distribution: str = "uniform",
        qp_tol: float = 1e-3,
        qp_max_iter: int = 1000,
    ) -> None:
        super().__init__()
        self.c = validate_positive("c", c)
        self.delta = validate_probability("delta", delta)
        self.lam = None if lam is None else validate_positive("lam", lam)
        if not isinstance(distribution, str) or distribution.lower() not in DISTRIBUTIONS:
            raise ValueError(
                f"distribution must be one of {DISTRIBUTIONS} ('uniform': the authors' code; "
                f"'minmax': the paper's per-round quadratic program), got {distribution!r}"
            )
        self.distribution = distribution.lower()
        self.qp_tol = validate_positive("qp_tol", qp_tol)
        if isinstance(qp_max_iter, bool) or not isinstance(qp_max_iter, (int, np.integer)):
            raise ValueError(f"qp_max_iter must be an integer >= 1, got {qp_max_iter!r}")
        if qp_max_iter < 1:
            raise ValueError(f"qp_max_iter must be an integer >= 1, got {qp_max_iter!r}")
        self.qp_max_iter = int(qp_max_iter)
        if self.distribution == "minmax":
            self.purpose = "elimination + min-max QP"

    def params(self) -> dict[str, Any]:
        """Tunable parameters: every declared constant (``qp_tol`` and ``qp_max_iter`` only
        act with ``distribution="minmax"``)."""
        return {
            "c": self.c,
            "delta": self.delta,
            "lam": self.lam,
            "distribution": self.distribution,
            "qp_tol": self.qp_tol,
            "qp_max_iter": self.qp_max_iter,
        }

    def _reset_state(self) -> None:
        T, d, R = self.horizon, self.d, self.R
        self.lam_value = (
            self.lam
            if self.lam is not None
            else 4 * d * math.log(9 * T) + 8 * math.log(4 * T / self.delta)
        )
        root = math.sqrt(self.lam_value) + math.sqrt(
            max(d * math.log(max(T / d, 1.0)) + math.log(T / self.delta), 0.0)
        )
        #: gamma = c (sqrt(lambda) + ...) per repetition, (R,)
        self.gamma = np.array([c * root for c in self.constant("c")])
        self._gamma = self.gamma[:, None, None]
        self.Gamma_inv = np.repeat((np.eye(d) / self.lam_value)[None], R, axis=0)
        self.b = np.zeros((R, d))
        self._keys = np.array(
            [rnd.stream_key(e.seed, e.rep, "BOSE", "arms") for e in self.envs], dtype=np.uint64
        )
        self._u_w = max(64, min(4096, WINDOW_VALUES // R))
        self._u: np.ndarray | None = None
        self._u_t0 = 0
        self._XT = np.ascontiguousarray(self.X.T)
        self.surviving = np.ones((R, self.K), dtype=bool)
        #: tr Gamma = d lambda + sum_s ||x~_s||^2 per repetition (for the elimination bound:
        #: tracked only where it is used)
        self.trace = np.full(R, d * self.lam_value)
        self._use_bound = (
            self.certify and self.distribution == "uniform" and self.K >= CERTIFY_MIN_K
        )
        self._bounds = arm_bounds(self.X) if self._use_bound else None
        #: repetition-rounds whose elimination test the bound settled (no widths computed)
        self.certified = 0
        self.qp_iterations = np.zeros(R, dtype=np.int64)
        self.qp_violation = np.zeros(R)
        self._qp_start: np.ndarray | None = None

    def _uniforms(self, t: int) -> np.ndarray:
        i = t - self._u_t0
        if self._u is None or i >= self._u.shape[1] or i < 0:
            # counters t .. t + W - 1 of each repetition's stream, (R, W)
            self._u = rnd.uniform_run(self._keys, t, self._u_w)
            self._u_t0, i = t, 0
        return self._u[:, i]

    def _decide(self) -> tuple[np.ndarray, np.ndarray]:
        if self._cache_t == self.t:
            return self._a, self._p
        G = self.Gamma_inv
        theta = (G @ self.b[:, :, None])[:, :, 0]  # theta_hat = Gamma^-1 b, (R, d)
        m = (self.X @ theta[:, :, None])[:, :, 0]  # x_i^T theta_hat, (R, K)
        Q, n_free = None, 0
        if self._use_bound:
            free = no_elimination(G, self.b, theta, self.gamma, self.trace, self._bounds, self.t)
            n_free = int(np.count_nonzero(free))
            self.certified += n_free
        if self.distribution == "minmax":
            surv, Q = self._survivors(G, m, self._gamma, keep_gram=True)
        elif n_free == 0:
            surv, _ = self._survivors(G, m, self._gamma)
        else:  # the bound keeps every arm of the free repetitions; widths for the others
            surv = np.ones((self.R, self.K), dtype=bool)
            if n_free < self.R:
                rows = np.flatnonzero(~free)
                surv[rows], _ = self._survivors(G[rows], m[rows], self._gamma[rows])
        size = surv.sum(axis=1)
        u = self._uniforms(self.t + 1)
        if Q is None:
            p = surv / size[:, None]
            # the j-th surviving arm (in index order), j = floor(u |A_t|)
            j = np.minimum((u * size).astype(np.int64), size - 1)
            a = np.argmax(np.cumsum(surv, axis=1) > j[:, None], axis=1)
        else:
            p, self.qp_violation, its = minmax_distribution(
                Q, surv, self.qp_tol, self.qp_max_iter, self._qp_start
            )
            self._qp_start = p
            self.qp_iterations += its
            # inverse CDF over the arms in index order (last arm of the support on round-off)
            cdf = np.cumsum(p, axis=1)
            a = np.argmax(cdf > (u * cdf[:, -1])[:, None], axis=1)
        self._a, self._p, self.surviving, self._cache_t = a, p, surv, self.t
        return a, p

    def _survivors(
        self, G: np.ndarray, m: np.ndarray, gamma: np.ndarray, keep_gram: bool = False
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The surviving arms of the repetitions whose ``Gamma^-1`` are ``G`` (n, d, d) and
        scores ``m`` (n, K), by the pairwise widths (each repetition on its own: a subset of
        rows gives those rows' answers), and the Gram matrices ``x_i^T Gamma^-1 x_j`` if
        ``keep_gram`` (the min-max program's ``Q``)."""
        M = (self.X @ G) @ self._XT  # x_i^T Gamma^-1 x_j, (n, K, K)
        Q = M.copy() if keep_gram else None
        diag = np.diagonal(M, axis1=1, axis2=2)
        # gamma ||x_j - x_i||_{Gamma^-1} = gamma sqrt(M_ii + M_jj - 2 M_ij), computed in place
        width = diag[:, :, None] + diag[:, None, :]
        M *= 2.0
        width -= M
        np.maximum(width, 0.0, out=width)
        np.sqrt(width, out=width)
        width *= gamma
        # dominated[r, i]: some j has theta^T (x_j - x_i) > gamma ||x_j - x_i||_{Gamma^-1}
        diff = m[:, None, :] - m[:, :, None]
        return ~(diff > width).any(axis=2), Q

    def _update(self, arms: np.ndarray, rewards: np.ndarray) -> None:
        z = self.X[arms] - (self._p[:, None, :] @ self.X)[:, 0, :]  # x~ = x_a - xbar_p
        if self._use_bound:
            self.trace += np.einsum("rd,rd->r", z, z)
        G = self.Gamma_inv
        Gz = (G @ z[:, :, None])[:, :, 0]
        denom = 1.0 + (z[:, None, :] @ Gz[:, :, None])[:, 0, 0]
        G -= Gz[:, :, None] * Gz[:, None, :] / denom[:, None, None]
        self.b += z * rewards[:, None]


class BOSE(textbook.BOSE):
    """One repetition of BOSE run by the fast engine (:class:`BatchedBOSE`, ``R = 1``): the
    textbook class's declaration, parameters and numbers.  ``Gamma_inv``, ``b`` (shapes
    ``(d, d)``, ``(d,)``) and ``surviving`` (indices of ``A_{t+1}``) read the engine's state.
    """

    def __init__(
        self,
        c: float = 1.0,
        delta: float = 0.05,
        lam: float | None = None,
        distribution: str = "uniform",
        qp_tol: float = 1e-3,
        qp_max_iter: int = 1000,
    ) -> None:
        super().__init__(c, delta, lam, distribution, qp_tol, qp_max_iter)
        self._engine = BatchedBOSE(
            c=c,
            delta=delta,
            lam=lam,
            distribution=distribution,
            qp_tol=qp_tol,
            qp_max_iter=qp_max_iter,
        )
        self.c, self.delta = self._engine.c, self._engine.delta
        self.lam, self.distribution = self._engine.lam, self._engine.distribution

    def params(self) -> dict[str, Any]:
        """The declared constants (the QP's act only with ``distribution="minmax"``)."""
        return self._engine.params()

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env``."""
        single_reset(self, env, horizon)
        e = self._engine
        self.X, self.K, self.d = e.X, e.K, e.d
        self.lam_value, self.gamma = e.lam_value, float(e.gamma[0])

    @property
    def Gamma_inv(self) -> np.ndarray:
        """``Gamma^-1``, shape ``(d, d)`` (a view of the engine's state)."""
        return self._engine.Gamma_inv[0]

    @property
    def b(self) -> np.ndarray:
        """``b = sum_s x~_s r_s``, shape ``(d,)``."""
        return self._engine.b[0]

    @property
    def surviving(self) -> np.ndarray:
        """Indices of the arms surviving the elimination test for round t+1."""
        self._engine._decide()
        return np.flatnonzero(self._engine.surviving[0])

    def action_distribution(self) -> np.ndarray:
        """``p_t`` for the next round (uniform or min-max over the surviving arms)."""
        return self._engine.action_distributions()[0]

    def advance(self, until: int) -> int:
        """Play rounds t+1..until (every round is a decision point)."""
        return single_advance(self, until)


#: The fast engine's one-repetition policy (the runner's choice for R = 1).
BatchedBOSE.one_repetition = BOSE

"""BOSE (Krishnamurthy, Wu & Syrgkanis 2018), the per-round semiparametric baseline.

Bandit Orthogonalized Semiparametric Estimation.  With ``Gamma = lambda I`` and ``b = 0``, every
round ``t``:

1. ``theta_hat = Gamma^-1 b`` (the orthogonalized estimator, Eq. 2 of the experimental-design
   paper, with ridge ``lambda``);
2. the surviving arms ``A_t = {i : for all j, theta_hat^T (x_j - x_i) <= gamma ||x_j -
   x_i||_{Gamma^-1}}``;
3. a distribution ``p_t`` over ``A_t``: ``"uniform"`` (default, the authors' public code: the
   ``floor(u |A_t|)``-th surviving arm in index order for the uniform ``u`` of the stream
   ``(seed, rep, "BOSE", "arms")`` at counter ``t``) or ``"minmax"`` (Krishnamurthy et al.,
   Algorithm 1; Appendix H: "a minimax quadratic optimization problem every time"): ``p_t`` with
   ``||x_b - mu_p||^2 <= E_{a~p} ||x_a - mu_p||^2`` for every ``b in A_t`` (norms in
   ``Gamma^-1``, ``mu_p = sum_a p_a x_a``), i.e. a maximiser of ``tr Cov_p``, solved by
   :func:`minmax_row` warm-started at the previous round's ``p``; its arm by the inverse CDF
   of ``u`` over the arms in index order;
4. draw ``a_t ~ p_t``, observe ``r_t``; with ``x~ = x_{a_t} - xbar_{p_t}``, ``Gamma <- Gamma +
   x~ x~^T`` (kept as ``Gamma^-1`` by Sherman-Morrison) and ``b <- b + x~ r_t``.

Constants (Appendix I): ``lambda = 4 d log(9T) + 8 log(4T/delta)``, ``gamma = c (sqrt(lambda) +
sqrt(d log(T/d) + log(T/delta)))``, ``c in {1, 2, 4, 8}`` tuned.  The fast engine
(:class:`~dashboard.algorithms.semiparametric.policies.bose.BatchedBOSE`, ``R`` repetitions
at once, skipping the widths where a bound proves no arm is eliminated) gives exactly these
numbers.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ... import randomness as rnd
from ...base import Policy, validate_positive, validate_probability
from ...declare import AlgorithmDeclaration
from ..policies.constants import (
    BOSE_DISTRIBUTION,
    DELTA,
    DISTRIBUTIONS,
    LAM,
    MULTIPLIER_C,
    QP_MAX_ITER,
    QP_TOL,
)

__all__ = ["BOSE", "DISTRIBUTIONS", "minmax_row"]


def minmax_row(Q: np.ndarray, idx: np.ndarray, tol: float, max_iter: int, start=None):
    """Step 3's ``"minmax"`` distribution on the surviving arms ``idx`` (``Q``: the Gram
    matrix ``x_a^T Gamma^-1 x_b``): maximise ``tr Cov_p``, i.e. ``min_p p^T Q p - q^T p``
    (``q = diag Q``) over the simplex of ``idx``, by a primal active-set method from ``start``
    restricted to ``idx`` (uniform without one).  On the working set ``S`` it solves the KKT
    system ``[2 Q_SS, 1; 1^T, 0] [p; nu] = [q_S; 1]``, steps toward it until a weight reaches
    0 (that arm leaves ``S``) or moves there and adds the most violated arm; an inconsistent
    system (``S`` affinely dependent) is followed along its null direction.  Stops when
    ``max_b v_b <= tol tr Cov_p`` or after ``max_iter`` steps.  Returns ``(p over idx, max
    violation clipped at 0, steps)``.
    """
    Qs = Q[np.ix_(idx, idx)]
    # the solution does not depend on the scale of Q: work with max |Q_aa| = 1
    scale = float(np.max(np.abs(np.diag(Qs))))
    if not scale > 0:  # all surviving arms at the same point: any p is optimal
        return np.full(idx.size, 1.0 / idx.size), 0.0, 0
    Qs = Qs / scale
    q = np.diag(Qs).copy()
    n = idx.size
    p = None if start is None else np.asarray(start, dtype=float)[idx]
    if p is None or not p.sum() > 0:
        p = np.full(n, 1.0 / n)
    else:
        p = p / p.sum()
    its = 0
    while True:
        Qp = Qs @ p
        pQp = float(p @ Qp)
        g = q - 2.0 * Qp
        v = g - float(p @ g)  # BOSE's violations
        trace = float(p @ q) - pQp
        in_S = p > 0
        S = np.flatnonzero(in_S)
        outside = np.flatnonzero(~in_S)
        worst = float(np.max(v))
        if its >= max_iter or worst <= tol * max(trace, 1e-300):
            return p, max(worst, 0.0) * scale, its
        its += 1
        # equality-constrained minimiser on the working set S
        k = S.size
        kkt = np.zeros((k + 1, k + 1))
        kkt[:k, :k] = 2.0 * Qs[np.ix_(S, S)]
        kkt[:k, k] = kkt[k, :k] = 1.0
        rhs = np.empty(k + 1)
        rhs[:k], rhs[k] = q[S], 1.0
        sol, *_ = np.linalg.lstsq(kkt, rhs, rcond=None)
        consistent = np.linalg.norm(kkt @ sol - rhs) <= 1e-9 * (k + 1)
        if consistent:
            y = sol[:k]
            if np.all(y > 0) and np.max(np.abs(y - p[S])) <= 1e-14:
                # already optimal on S: bring in the most violated arm outside S
                if outside.size == 0:
                    return p, max(worst, 0.0) * scale, its
                j = int(outside[np.argmax(v[outside])])
                if v[j] <= tol * max(trace, 1e-300):
                    return p, max(worst, 0.0) * scale, its
                d_j = q[j] - 2.0 * Qp[j] + pQp  # ||x_j - mu_p||^2
                step = min(v[j] / (2.0 * d_j), 1.0) if d_j > 1e-300 else 1.0
                p = (1.0 - step) * p
                p[j] += step
                continue
            direction = np.zeros(n)
            direction[S] = y - p[S]
            limit = 1.0
        else:
            # f is linear along the null direction of the KKT system: follow its descent
            _, _, vt = np.linalg.svd(kkt)
            delta = vt[-1, :k]
            if float(q[S] @ delta) < 0:
                delta = -delta
            direction = np.zeros(n)
            direction[S] = delta  # f decreases (df/ds = -q_S^T delta < 0)
            limit = np.inf
        neg = direction < 0
        ratios = np.where(neg, p / np.where(neg, -direction, 1.0), np.inf)
        step = min(limit, float(np.min(ratios)))
        if not np.isfinite(step) or (step <= 0.0 and not np.any(neg & (p == 0))):
            return p, max(worst, 0.0) * scale, its  # no progress possible (round-off)
        p = p + step * direction
        p[np.abs(p) < 1e-15] = 0.0
        if step < limit:
            p[int(np.argmin(np.where(neg, ratios, np.inf)))] = 0.0  # the blocking arm leaves S
        p = np.maximum(p, 0.0)
        p /= p.sum()


_C = MULTIPLIER_C("c: multiplier of the confidence width", "multiplier of the confidence width")
_LAM = LAM(None, "ridge lambda of the centred design (null: the paper's choice from d and T)")


class BOSE(Policy):
    """BOSE, the per-round semiparametric baseline (uniform or min-max distribution).

    Parameters
    ----------
    c : float
        Exploration multiplier of ``gamma`` (Appendix I tunes ``c in {1, 2, 4, 8}``), > 0.
    delta : float
        Confidence level in (0, 1) used in ``lambda`` and ``gamma``; default 0.05.
    lam : float, optional
        Ridge ``lambda``; default ``4 d log(9T) + 8 log(4T/delta)`` (Appendix I).
    distribution : {"uniform", "minmax"}
        Step 3's distribution over ``A_t`` (see the module docstring).
    qp_tol : float
        ``"minmax"`` only: stop when every violation ``v_b <= qp_tol * tr Cov_p`` (> 0).
    qp_max_iter : int
        ``"minmax"`` only: cap on active-set steps per round (>= 1).
    """

    declaration = AlgorithmDeclaration(
        name="BOSE",
        problem="semiparametric",
        reference="Krishnamurthy et al. 2018 (baseline)",
        constants=(_C, DELTA, _LAM, BOSE_DISTRIBUTION, QP_TOL, QP_MAX_ITER),
        per_round=True,
        doc="action-centered semiparametric bandit: uniform or min-max surviving-arm play",
    )

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
        #: Purpose of the per-round log records (one computation per round).
        qp = self.distribution == "minmax"
        self.purpose = "elimination + " + ("min-max QP" if qp else "update")
        self.env: Any = None

    def params(self) -> dict[str, Any]:
        """The declared constants (the QP's act only with ``distribution="minmax"``)."""
        return {c.name: getattr(self, c.name) for c in self.declaration.constants}

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env``."""
        self.env = env
        T = self.horizon = int(horizon)
        self.X = np.asarray(env.X, dtype=float)
        self.K, d = self.X.shape
        self.d = d
        self.t = 0
        self.cum_regret = 0.0
        self.log = type(self.log)()
        self.events = []
        self.lam_value = (
            self.lam
            if self.lam is not None
            else 4 * d * math.log(9 * T) + 8 * math.log(4 * T / self.delta)
        )
        root = math.sqrt(self.lam_value) + math.sqrt(
            max(d * math.log(max(T / d, 1.0)) + math.log(T / self.delta), 0.0)
        )
        self.gamma = self.c * root
        self.Gamma_inv = np.eye(d) / self.lam_value
        self.b = np.zeros(d)
        self._key = rnd.stream_key(env.seed, env.rep, "BOSE", "arms")
        self._p_prev: np.ndarray | None = None  # the min-max program's warm start
        self._next: tuple[int, int, np.ndarray, np.ndarray] | None = None  # (t, a, p, A_t)

    def surviving_arms(self) -> tuple[np.ndarray, np.ndarray]:
        """Steps 1-2: the mask of ``A_t`` and the Gram matrix ``x_i^T Gamma^-1 x_j``."""
        theta_hat = self.Gamma_inv @ self.b
        m = self.X @ theta_hat  # x_i^T theta_hat
        gram = (self.X @ self.Gamma_inv) @ self.X.T
        sq = np.diagonal(gram)
        # gamma ||x_j - x_i||_{Gamma^-1} = gamma sqrt(M_ii + M_jj - 2 M_ij)
        width = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2.0 * gram, 0.0)) * self.gamma
        dominated = ((m[None, :] - m[:, None]) > width).any(axis=1)
        return ~dominated, gram

    def choose(self, t: int) -> tuple[int, np.ndarray, np.ndarray]:
        """Steps 1-3 of round ``t``: the arm, ``p_t`` and the mask of ``A_t``."""
        if self._next is not None and self._next[0] == t:
            return self._next[1:]
        surviving, gram = self.surviving_arms()
        u = float(rnd.uniform(self._key, np.array([t], dtype=np.int64))[0])
        if self.distribution == "uniform":
            size = int(surviving.sum())
            p = surviving / size
            j = min(int(u * size), size - 1)
            a = int(np.flatnonzero(surviving)[j])  # the j-th surviving arm
        else:
            idx = np.flatnonzero(surviving)
            p = np.zeros(self.K)
            p[idx], _, _ = minmax_row(gram, idx, self.qp_tol, self.qp_max_iter, self._p_prev)
            self._p_prev = p
            cdf = np.cumsum(p)
            a = int(np.argmax(cdf > u * cdf[-1]))  # inverse CDF over the arms in index order
        self._next = (t, a, p, surviving)
        return a, p, surviving

    @property
    def surviving(self) -> np.ndarray:
        """Indices of the arms surviving the elimination test for round t+1."""
        return np.flatnonzero(self.choose(self.t + 1)[2])

    def action_distribution(self) -> np.ndarray:
        """``p_t`` for the next round (uniform or min-max over the surviving arms)."""
        return self.choose(self.t + 1)[1].copy()

    def round(self, t: int) -> int:
        """Round ``t``: steps 1-4; returns the arm played."""
        a, p, _ = self.choose(t)
        r = self.env.play(np.array([a]), t, p)[0]
        z = self.X[a] - p @ self.X  # x~ = x_a - xbar_p
        Gz = self.Gamma_inv @ z
        self.Gamma_inv -= Gz[:, None] * Gz[None, :] / (1.0 + z @ Gz)
        self.b += z * r
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

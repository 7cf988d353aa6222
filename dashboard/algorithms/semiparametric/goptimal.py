"""The G-optimal design of Eq. (1) (experimental-design paper, Section 1.2) for standard
linear regression, computed in the span of the vectors (Wolfe-Atwood / Frank-Wolfe with
away steps, then a support reduction) with a Kiefer-Wolfowitz optimality certificate.

Kiefer-Wolfowitz (the "known result" quoted under Eq. 1): for vectors spanning an
``r``-dimensional space, ``min_p max_i v_i^T V(p)^+ v_i = r`` with ``V(p) = sum_i p_i v_i
v_i^T``, and ``p`` is optimal iff its max leverage equals ``r``.  So ``max leverage <= (1 + tol)
r`` certifies a ``(1 + tol)``-approximate G-optimal design.  The paper states the result with
``d``; we use the span dimension ``r <= d`` (the ``b_i`` of DEO need not span ``R^d``; GUIDE
section 3), which gives the stronger bounds ``2 sqrt(r)`` and ``4 sqrt(r)`` in Theorem 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base import validate_positive
from .span import DEFAULT_RANK_TOL, as_matrix, span_basis

__all__ = ["GOptimalResult", "g_optimal_design"]

_REFRESH_EVERY = 64  # recompute V(p)^{-1} from scratch this often (round-off control)


@dataclass
class GOptimalResult:
    """A G-optimal design (Eq. 1) with its Kiefer-Wolfowitz certificate.

    Attributes
    ----------
    weights : ndarray, shape (n,)
        Probability vector over the input vectors.
    max_leverage : float
        ``max_i v_i^T V(p)^+ v_i`` computed in the span (``v_star^2`` of Eq. 1 at ``p``).
    span_dimension : int
        Rank ``r`` of the vectors (Kiefer-Wolfowitz: the optimal max leverage).
    support : ndarray of int
        Indices with positive weight.
    iterations : int
        First-order iterations used.
    converged : bool
        ``max_leverage <= (1 + tol) * span_dimension``.
    """

    weights: np.ndarray
    max_leverage: float
    span_dimension: int
    support: np.ndarray
    iterations: int
    converged: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dictionary (lists instead of arrays)."""
        return {
            "weights": self.weights.tolist(),
            "max_leverage": float(self.max_leverage),
            "span_dimension": int(self.span_dimension),
            "support": self.support.tolist(),
            "iterations": int(self.iterations),
            "converged": bool(self.converged),
        }


def _leverages(Z: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(V(p)^{-1}, g)`` with ``g_i = z_i^T V(p)^{-1} z_i`` (``V`` full rank in the span)."""
    M = (Z.T * p) @ Z
    try:
        Minv = np.linalg.inv(M)
    except np.linalg.LinAlgError:
        Minv = np.linalg.pinv(M, hermitian=True)
    Minv = 0.5 * (Minv + Minv.T)
    g = np.einsum("ij,jk,ik->i", Z, Minv, Z)
    return Minv, g


#: Residual norms within this relative distance of the largest are a tie in
#: :func:`_initial_design` (broken by the smallest index): far above the rounding of the
#: norms (~1e-15), far below any real difference between them.
_PIVOT_TIE = 1e-9


def _initial_design(Z: np.ndarray) -> np.ndarray:
    """Sparse full-rank start: uniform weight on ``r`` well-conditioned vectors chosen by
    column pivoting (Businger-Golub: each time the vector with the largest residual norm
    after projecting out those chosen), so the support, and any later reduction, stays small.

    Ties go to the smallest index.  LAPACK's pivoted QR breaks an exact tie by rounding, which
    depends on the BLAS kernel the CPU selects: with unit-norm arms (every first pivot is a
    tie) an AVX-512 machine started the design elsewhere than an AVX2 one and reached
    another, equally certified, design (same seed, other numbers)."""
    n, r = Z.shape
    R = np.array(Z, dtype=float)
    p = np.zeros(n)
    for _ in range(r):
        norms2 = np.einsum("ij,ij->i", R, R)
        norms2[p > 0] = -1.0  # chosen: their residuals are zero up to rounding
        j = int(np.flatnonzero(norms2 >= norms2.max() * (1.0 - _PIVOT_TIE))[0])
        p[j] = 1.0 / r
        q = R[j] / np.sqrt(norms2[j])
        R -= np.outer(R @ q, q)
    return p


def _wolfe_atwood(
    Z: np.ndarray, p: np.ndarray, tol: float, max_iter: int
) -> tuple[np.ndarray, int]:
    """Frank-Wolfe (Fedorov-Wynn) with away steps on ``log det V(p)`` (Wolfe-Atwood).

    ``Z`` (n, r) has full column rank and no zero rows; ``p`` starts with full-rank ``V(p)``.
    Exact line search for ``log det``; ``V^{-1}`` and the leverages are updated by
    Sherman-Morrison in ``O(n r + r^2)`` per iteration and refreshed periodically.
    """
    r = Z.shape[1]
    target = (1.0 + tol) * r
    Minv, g = _leverages(Z, p)
    it = 0
    since_refresh = 0
    while it < max_iter:
        if since_refresh >= _REFRESH_EVERY:
            Minv, g = _leverages(Z, p)
            since_refresh = 0
        j = int(np.argmax(g))
        if g[j] <= target:
            # confirm on fresh numbers before stopping
            if since_refresh:
                Minv, g = _leverages(Z, p)
                since_refresh = 0
                if g.max() > target:
                    continue
            break
        it += 1
        since_refresh += 1
        supp = np.flatnonzero(p > 0)
        k = int(supp[np.argmin(g[supp])])
        away = g[j] - r < r - g[k] and p[k] < 1.0
        if away:
            # away step: p <- (1 + a) p - a e_k, a <= p_k / (1 - p_k) (drop step at the bound)
            gk = g[k]
            a_max = p[k] / (1.0 - p[k])
            a = a_max if gk <= 1.0 else min(a_max, (r - gk) / (r * (gk - 1.0)))
            gamma = a / (1.0 + a)
            denom = 1.0 - gamma * gk
            # denom ~ 0 would mean removing z_k makes V singular: take a toward step instead
            away = denom > 1e-12
        if away:
            u = Minv @ Z[k]
            w = Z @ u
            c = gamma / denom
            Minv = (Minv + c * np.outer(u, u)) / (1.0 + a)
            g = (g + c * w * w) / (1.0 + a)
            p *= 1.0 + a
            p[k] -= a
            if a >= a_max:
                p[k] = 0.0
        else:
            # toward step: p <- (1 - a) p + a e_j, a = (g_j - r) / (r (g_j - 1))
            gj = g[j]
            a = (gj - r) / (r * (gj - 1.0))
            u = Minv @ Z[j]
            w = Z @ u
            beta = a / (1.0 - a)
            c = beta / (1.0 + beta * gj)
            Minv = (Minv - c * np.outer(u, u)) / (1.0 - a)
            g = (g - c * w * w) / (1.0 - a)
            p *= 1.0 - a
            p[j] += a
        np.maximum(p, 0.0, out=p)
    p /= p.sum()
    return p, it


def _reduce_support(Z: np.ndarray, p: np.ndarray, max_points: int) -> np.ndarray:
    """Caratheodory reduction: move ``p`` along null directions of the moment map
    ``p -> sum_i p_i z_i z_i^T`` until the support has at most ``max_points`` points.

    ``V(p)`` is unchanged along each move; the direction's sign is chosen so that ``sum(p)``
    does not grow, so after renormalising ``V`` is scaled by ``1 / s >= 1`` and every leverage
    is multiplied by ``s <= 1``: the max leverage never increases.  Works on blocks of at most
    ``2 max_points + 1`` support points: one SVD gives a basis of the null space of their
    moments, and each move zeroes one weight, after which that coordinate is eliminated from
    the remaining null vectors (Gaussian elimination), so a block costs one SVD.
    """
    p = p.copy()
    r = Z.shape[1]
    iu = np.triu_indices(r)
    while True:
        supp = np.flatnonzero(p > 0)
        if supp.size <= max_points:
            return p
        sub = supp[: 2 * max_points + 1]
        Zs = Z[sub]
        A = (Zs[:, iu[0]] * Zs[:, iu[1]]).T  # (r(r+1)/2, |sub|) moment vectors
        _, sv, vt = np.linalg.svd(A, full_matrices=True)
        rank = int(np.sum(sv > sv[0] * 1e-12))
        N = vt[rank:].T.copy()  # (|sub|, m) null directions: sum_i delta_i z_i z_i^T = 0
        q = p[sub].copy()
        outside = supp.size - sub.size
        moved = False
        for c in range(N.shape[1]):
            if np.count_nonzero(q) + outside <= max_points:
                break
            delta = N[:, c] if N[:, c].sum() <= 0 else -N[:, c]
            neg = delta < -1e-12 * np.abs(delta).max()
            if not np.any(neg):
                continue
            ratios = q[neg] / -delta[neg]
            i = int(np.flatnonzero(neg)[np.argmin(ratios)])
            q = np.maximum(q + ratios.min() * delta, 0.0)
            q[i] = 0.0
            moved = True
            if c + 1 < N.shape[1]:  # keep coordinate i at zero in the remaining directions
                N[:, c + 1 :] -= np.outer(delta / delta[i], N[i, c + 1 :])
        p[sub] = q
        p /= p.sum()
        if not moved:  # numerically degenerate: no direction could remove a point
            return p


def g_optimal_design(
    vectors: np.ndarray,
    tol: float = 1e-3,
    max_iter: int = 10_000,
    reduce_support: bool = True,
    rank_tol: float = DEFAULT_RANK_TOL,
) -> GOptimalResult:
    """G-optimal design of Eq. (1) over the rows of ``vectors``, in their span.

    Solves ``min_{p in Delta} max_i ||v_i||^2_{V(p)^{-1}}``, ``V(p) = sum_i p_i v_i v_i^T``,
    through the equivalent D-optimal problem ``max_p log det V(p)`` (Kiefer-Wolfowitz), working
    in the coordinates of an orthonormal basis of the span (SVD, relative ``rank_tol``), so
    rank-deficient sets are handled and the certificate uses the span dimension ``r``.  The
    solver is Frank-Wolfe / Fedorov-Wynn with away steps (Wolfe-Atwood) and exact line search,
    started from uniform weights on ``r`` vectors chosen by pivoted QR; it stops once
    ``max_leverage <= (1 + tol) r``.  Then, optionally, a Caratheodory-type support reduction
    brings the support to at most ``r (r + 1) / 2`` points (the bound quoted under Eq. 1)
    without increasing the max leverage.

    Conventions: zero vectors (and vectors whose norm is below the rank tolerance) get weight 0
    and leverage 0; if all vectors are zero (``r = 0``) the design is uniform with max leverage
    0.  Components outside the span below the tolerance are treated as round-off.

    Parameters
    ----------
    vectors : array_like, shape (n, d)
        The vectors ``v_i`` (rows); finite, non-empty.
    tol : float
        Relative accuracy of the Kiefer-Wolfowitz certificate (``> 0``).
    max_iter : int
        Maximum number of Frank-Wolfe iterations (``>= 1``).
    reduce_support : bool
        Apply the Caratheodory support reduction.
    rank_tol : float
        Relative rank tolerance of the span SVD.

    Returns
    -------
    GOptimalResult

    Raises
    ------
    ValueError
        On NaN/inf, empty or non-2-D input, or non-positive ``tol`` / ``max_iter``.
    """
    V = as_matrix("vectors", vectors)
    tol = validate_positive("tol", tol)
    rank_tol = validate_positive("rank_tol", rank_tol)
    try:
        ok = float(max_iter).is_integer() and int(max_iter) >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok or isinstance(max_iter, bool):
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    max_iter = int(max_iter)
    n = V.shape[0]
    _, Z = span_basis(V, rank_tol)
    r = Z.shape[1]
    if r == 0:
        w = np.full(n, 1.0 / n)
        return GOptimalResult(w, 0.0, 0, np.arange(n), 0, True)
    norms = np.linalg.norm(Z, axis=1)
    nz = np.flatnonzero(norms > rank_tol * norms.max())
    Zn = Z[nz]
    p = _initial_design(Zn)
    p, iters = _wolfe_atwood(Zn, p, tol, max_iter)
    _, g = _leverages(Zn, p)
    if reduce_support and np.count_nonzero(p) > r * (r + 1) // 2:
        q = _reduce_support(Zn, p, r * (r + 1) // 2)
        _, gq = _leverages(Zn, q)
        if gq.max() <= max(g.max(), (1.0 + tol) * r) * (1.0 + 1e-9):
            p, g = q, gq
    weights = np.zeros(n)
    weights[nz] = p
    max_lev = float(g.max())
    return GOptimalResult(
        weights=weights,
        max_leverage=max_lev,
        span_dimension=r,
        support=np.flatnonzero(weights > 0),
        iterations=iters,
        converged=bool(max_lev <= (1.0 + tol) * r),
    )

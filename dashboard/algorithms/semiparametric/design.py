"""Experimental design for semiparametric bandits (experimental-design paper).

* :func:`g_optimal_design` -- the G-optimal design of Eq. (1) (Section 1.2) for standard linear
  regression, computed in the span of the vectors with a Kiefer-Wolfowitz optimality
  certificate.
* :func:`deo_design` -- DEO, Algorithm 1 (Section 3.3): the G-optimal design of
  ``b_i = x_i - x_1`` with half of the mass moved onto ``x_1``.
* :func:`design_report` -- the quantities of Theorem 1 (proved in Appendix A) for *any* design
  ``p`` over the arms.

Norms ``||z||_{A^{-1}}`` use the paper's extended matrix-inverse-weighted norm (Section 1.3),
``lim_{lambda -> 0} ||z||_{(A + lambda I)^{-1}}``: it equals ``sqrt(z^T A^+ z)`` when ``z`` lies
in the range of ``A`` and is ``+inf`` otherwise (the component ``z_perp`` outside the range
contributes ``|z_perp|^2 / lambda -> inf``).  Numerically, the range is spanned by the singular
directions above ``rank_tol`` times the largest singular value, and a component outside it
counts only if it exceeds ``rank_tol`` times the scale of the vectors (smaller components are
round-off and are dropped).

Kiefer-Wolfowitz (the "known result" quoted under Eq. 1): for vectors spanning an
``r``-dimensional space, ``min_p max_i v_i^T V(p)^+ v_i = r`` with ``V(p) = sum_i p_i v_i
v_i^T``, and ``p`` is optimal iff its max leverage equals ``r``.  So ``max leverage <= (1 + tol)
r`` certifies a ``(1 + tol)``-approximate G-optimal design.  The paper states the result with
``d``; we use the span dimension ``r <= d`` (the ``b_i`` of DEO need not span ``R^d``; GUIDE
section 3), which gives the stronger bounds ``2 sqrt(r)`` and ``4 sqrt(r)`` in Theorem 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg

from ..base import validate_int, validate_positive

__all__ = [
    "DesignReport",
    "GOptimalResult",
    "deo_design",
    "design_report",
    "extended_norms",
    "g_optimal_design",
    "span_basis",
]

#: Default relative rank tolerance (singular values below ``rank_tol * s_max`` are zero).
DEFAULT_RANK_TOL = 1e-9
_REFRESH_EVERY = 64  # recompute V(p)^{-1} from scratch this often (round-off control)


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------
#: Largest feature magnitude accepted: squares and sums of squares stay finite.
_MAX_ABS = 1e150


def _as_matrix(name: str, a: Any) -> np.ndarray:
    try:
        m = np.asarray(a, dtype=float)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name} must be a 2-D array of real numbers") from exc
    if m.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n, d), got shape {m.shape}")
    if m.shape[0] == 0 or m.shape[1] == 0:
        raise ValueError(f"{name} must be non-empty (at least one row and one column)")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{name} must contain only finite numbers (no NaN or inf)")
    top = float(np.abs(m).max())
    if top > _MAX_ABS:
        raise ValueError(
            f"{name} has values above {_MAX_ABS:g} in size: their squares (the design's Gram "
            "matrix) would overflow; rescale the features (e.g. --rescale)"
        )
    if 0 < top < 1 / _MAX_ABS:
        # designs and Theorem 1's norms are scale invariant: lift tiny features whose squares
        # would underflow (normal sizes are left bit for bit as they are)
        m = m / top
    return m


def _index(name: str, value: Any, k: int) -> int:
    return validate_int(name, value, 0, k - 1)  # any size, bounds before conversion


def _arms(arms: Any, k: int) -> np.ndarray:
    if arms is None:
        return np.arange(k)
    a = np.asarray(arms)
    if a.ndim != 1 or a.size == 0:
        raise ValueError("arms must be a non-empty 1-D array of arm indices")
    if a.dtype.kind == "b":
        raise ValueError("arms must hold integer arm indices, not a boolean mask")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a) & (a == np.round(a))):
        raise ValueError("arms must hold integer arm indices")
    if a.dtype.kind not in "iuf":
        raise ValueError("arms must hold integer arm indices")
    a = a.astype(np.int64)
    if a.min() < 0 or a.max() >= k:
        raise ValueError(f"arms must be indices between 0 and {k - 1}, got {a.tolist()}")
    if np.unique(a).size != a.size:
        raise ValueError("arms must not contain duplicates")
    return np.sort(a)


# --------------------------------------------------------------------------------------------
# span and extended norm
# --------------------------------------------------------------------------------------------
def span_basis(
    vectors: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL
) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal basis of the span of the rows of ``vectors`` and their coordinates in it.

    Parameters
    ----------
    vectors : ndarray, shape (n, d)
    rank_tol : float
        Relative tolerance: singular values ``<= rank_tol * s_max`` are treated as zero.

    Returns
    -------
    basis : ndarray, shape (d, r)
        Orthonormal columns spanning the rows (``r`` = span dimension, possibly 0).
    coords : ndarray, shape (n, r)
        ``vectors @ basis`` (the components outside the span, below the tolerance, dropped).
    """
    v = np.asarray(vectors, dtype=float)
    if v.size == 0 or not np.any(v):
        return np.zeros((v.shape[1], 0)), np.zeros((v.shape[0], 0))
    u, s, wt = np.linalg.svd(v, full_matrices=False)
    r = int(np.sum(s > rank_tol * s[0]))
    return wt[:r].T.copy(), u[:, :r] * s[:r]


def extended_norms(
    A_factor: np.ndarray, z: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL
) -> np.ndarray:
    """Extended norms ``||z_i||_{A^{-1}}`` (Section 1.3) with ``A = A_factor^T A_factor``.

    Parameters
    ----------
    A_factor : ndarray, shape (m, d)
        A square-root factor of the PSD matrix ``A`` (e.g. rows ``sqrt(p_i) (x_i - xbar)``),
        which lets the range of ``A`` be found from singular values at full precision.
    z : ndarray, shape (n, d)
        Vectors whose norms are wanted.
    rank_tol : float
        Relative rank tolerance on the singular values of ``A_factor``; a component of ``z_i``
        outside the range counts when it exceeds ``rank_tol`` times the scale
        ``max(max_i |z_i|, sigma_max)``.

    Returns
    -------
    ndarray, shape (n,)
        ``sqrt(z_i^T A^+ z_i)`` if ``z_i`` is in the range of ``A``, else ``inf``.
    """
    z = np.atleast_2d(np.asarray(z, dtype=float))
    F = np.asarray(A_factor, dtype=float)
    if F.size and np.any(F):
        _, sig, wt = np.linalg.svd(F, full_matrices=False)
        keep = sig > rank_tol * sig[0]
        sig, basis = sig[keep], wt[keep].T  # A = basis diag(sig^2) basis^T
    else:
        sig, basis = np.zeros(0), np.zeros((z.shape[1], 0))
    # coordinates of z in the range of A, and the residual outside it
    inside = z @ basis
    resid = np.linalg.norm(z - inside @ basis.T, axis=1)
    scale = max(float(np.max(np.linalg.norm(z, axis=1), initial=0.0)), float(sig.max(initial=0)))
    out = resid > rank_tol * scale if scale > 0 else np.zeros(len(z), dtype=bool)
    # z^T A^+ z = |diag(1 / sig) basis^T z|^2 (no squared condition number)
    sq = np.sum((inside / sig) ** 2, axis=1) if sig.size else np.zeros(len(z))
    norms = np.sqrt(sq)
    norms[out] = np.inf
    return norms


# --------------------------------------------------------------------------------------------
# G-optimal design (Eq. 1)
# --------------------------------------------------------------------------------------------
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


def _initial_design(Z: np.ndarray) -> np.ndarray:
    """Sparse full-rank start: uniform weight on ``r`` well-conditioned vectors chosen by
    QR with column pivoting (so the support, and any later reduction, stays small)."""
    n, r = Z.shape
    _, _, piv = scipy.linalg.qr(Z.T, mode="economic", pivoting=True)
    p = np.zeros(n)
    p[piv[:r]] = 1.0 / r
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
    V = _as_matrix("vectors", vectors)
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


# --------------------------------------------------------------------------------------------
# DEO (Algorithm 1) and Theorem 1 report
# --------------------------------------------------------------------------------------------
@dataclass
class DesignReport:
    """Theorem 1 quantities of a design ``p`` over arms ``X`` (Section 3.3, Appendix A).

    Attributes
    ----------
    weights : ndarray, shape (K,)
        The design ``p`` (zeros outside the arms considered).
    support : ndarray of int
        Arms with positive weight.
    anchor : int
        The arm playing the role of ``x_1`` (``mu = x_anchor``).
    max_norm_to_anchor : float
        ``max_i ||x_i - x_anchor||_{Sigma_p^{-1}}`` (extended norm; ``inf`` if some difference
        leaves the range of ``Sigma_p``), to compare with ``2 sqrt(r)``.
    bound_2_sqrt_d : float
        ``2 sqrt(r)``, ``r`` = span dimension (Theorem 1 with ``d`` replaced by ``r <= d``).
    max_norm_to_mean : float
        ``max_i ||x_i - xbar_p||_{Sigma_p^{-1}}``, to compare with ``4 sqrt(r)``.
    bound_4_sqrt_d : float
        ``4 sqrt(r)``.
    kw_max_leverage : float
        Max leverage ``max_i ||b_i||^2`` under the inner design ``p~`` (``p`` without the
        anchor, renormalised), i.e. the Kiefer-Wolfowitz value of the G-optimal step of DEO;
        ``r`` at the exact optimum.
    span_dimension : int
        ``r = rank{x_i - x_anchor}`` over the arms considered.
    """

    weights: np.ndarray
    support: np.ndarray
    anchor: int
    max_norm_to_anchor: float
    bound_2_sqrt_d: float
    max_norm_to_mean: float
    bound_4_sqrt_d: float
    kw_max_leverage: float
    span_dimension: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dictionary: lists instead of arrays; infinite norms become ``None``."""

        def num(x: float) -> float | None:
            return float(x) if math.isfinite(x) else None

        return {
            "weights": self.weights.tolist(),
            "support": self.support.tolist(),
            "anchor": int(self.anchor),
            "max_norm_to_anchor": num(self.max_norm_to_anchor),
            "bound_2_sqrt_d": float(self.bound_2_sqrt_d),
            "max_norm_to_mean": num(self.max_norm_to_mean),
            "bound_4_sqrt_d": float(self.bound_4_sqrt_d),
            "kw_max_leverage": num(self.kw_max_leverage),
            "span_dimension": int(self.span_dimension),
        }


def _weights(weights: Any, k: int) -> np.ndarray:
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError("weights must be an array of probabilities") from exc
    if w.shape != (k,):
        raise ValueError(f"weights must have shape ({k},) (one per arm), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and non-negative")
    if abs(w.sum() - 1.0) > 1e-8:
        raise ValueError(f"weights must sum to 1, got sum {w.sum()!r}")
    return w.copy()


def design_report(
    X: np.ndarray,
    weights: np.ndarray,
    anchor: int = 0,
    arms: np.ndarray | None = None,
    rank_tol: float = DEFAULT_RANK_TOL,
) -> DesignReport:
    """Theorem 1 quantities of any design ``p`` over the arms ``X``.

    ``Sigma_p = sum_i p_i (x_i - xbar_p)(x_i - xbar_p)^T`` (Definition 1) is built from all
    ``K`` weights; the maxima run over ``arms`` (default: all arms).  Norms are the extended
    norms of Section 1.3 (``inf`` outside the range of ``Sigma_p``).

    Parameters
    ----------
    X : array_like, shape (K, d)
        Arm features.
    weights : array_like, shape (K,)
        A probability vector (the design ``p``).
    anchor : int
        The arm used as ``x_1`` (``mu = x_anchor``); must be one of ``arms``.
    arms : array_like of int, optional
        Arms over which the maxima are taken (e.g. SBE's surviving arms).
    rank_tol : float
        Relative rank tolerance (see :func:`extended_norms`).

    Returns
    -------
    DesignReport
    """
    X = _as_matrix("X", X)
    K = X.shape[0]
    w = _weights(weights, K)
    anchor = _index("anchor", anchor, K)
    A = _arms(arms, K)
    if anchor not in A:
        raise ValueError(f"anchor {anchor} must be one of arms {A.tolist()}")
    rank_tol = validate_positive("rank_tol", rank_tol)
    xbar = w @ X
    factor = np.sqrt(w)[:, None] * (X - xbar)
    to_anchor = extended_norms(factor, X[A] - X[anchor], rank_tol)
    to_mean = extended_norms(factor, X[A] - xbar, rank_tol)
    others = A[A != anchor]
    B = X[others] - X[anchor]
    _, Zb = span_basis(B, rank_tol) if others.size else (None, np.zeros((0, 0)))
    r = Zb.shape[1]
    # inner design p~ = p without the anchor, renormalised, over all non-anchor arms
    rest = np.delete(np.arange(K), anchor)
    mass = w[rest].sum()
    if r == 0:
        kw = 0.0
    elif mass <= 0:
        kw = math.inf
    else:
        inner = np.sqrt(w[rest] / mass)[:, None] * (X[rest] - X[anchor])
        kw = float(np.max(extended_norms(inner, B, rank_tol) ** 2))
    return DesignReport(
        weights=w,
        support=np.flatnonzero(w > 0),
        anchor=anchor,
        max_norm_to_anchor=float(to_anchor.max()),
        bound_2_sqrt_d=2.0 * math.sqrt(r),
        max_norm_to_mean=float(to_mean.max()),
        bound_4_sqrt_d=4.0 * math.sqrt(r),
        kw_max_leverage=kw,
        span_dimension=r,
    )


def deo_design(
    X: np.ndarray,
    anchor: int = 0,
    tol: float = 1e-3,
    arms: np.ndarray | None = None,
    max_iter: int = 10_000,
    rank_tol: float = DEFAULT_RANK_TOL,
) -> DesignReport:
    """DEO, Algorithm 1 (Section 3.3): design of experiment for orthogonalized regression.

    With ``b_i = x_i - x_anchor`` for the arms ``i != anchor`` (the paper's anchor is ``x_1``;
    SBE, Algorithm 2, uses the smallest surviving index ``A_l(1)``), find the G-optimal design
    ``p~`` of Eq. (1) over the ``b_i`` (:func:`g_optimal_design`, in their span), then return
    ``p_anchor = 1/2`` and ``p_i = p~_i / 2``.  Theorem 1 then gives
    ``||x_i - x_anchor||_{Sigma_p^{-1}} <= 2 sqrt(r (1 + tol))`` and
    ``||x_i - xbar_p||_{Sigma_p^{-1}} <= 4 sqrt(r (1 + tol))`` with ``r = rank{b_i}`` (the
    proof only uses the KW value of the inner design, which is ``<= (1 + tol) r``), and support
    ``<= 1 + r (r + 1) / 2`` (the anchor plus the inner support; the paper's ``d(d+1)/2``
    forgets the anchor).

    Conventions: if every ``b_i`` is zero (a single arm, or all arms identical) the design puts
    all mass on the anchor (``Sigma_p = 0`` and every norm is 0).  ``b_i = 0`` (a repeat of the
    anchor) gets weight 0.

    Parameters
    ----------
    X : array_like, shape (K, d)
        Arm features ``x_1..x_K`` (rows), finite.
    anchor : int
        Index of the anchor arm (``x_1`` in the paper); must belong to ``arms``.
    tol : float
        Certificate accuracy of the inner G-optimal design.
    arms : array_like of int, optional
        Restrict the design to these arms (SBE's surviving set ``A_l``); the returned weights
        still have length ``K`` with zeros elsewhere.
    max_iter : int
        Iteration cap of the inner solver.
    rank_tol : float
        Relative rank tolerance for spans and extended norms.

    Returns
    -------
    DesignReport
        The DEO weights with the Theorem 1 quantities (see :func:`design_report`).
    """
    X = _as_matrix("X", X)
    K = X.shape[0]
    anchor = _index("anchor", anchor, K)
    A = _arms(arms, K)
    if anchor not in A:
        raise ValueError(
            f"anchor {anchor} must be one of arms {A.tolist()} "
            f"(SBE uses the smallest surviving index, here {int(A[0])})"
        )
    tol = validate_positive("tol", tol)
    others = A[A != anchor]
    w = np.zeros(K)
    w[anchor] = 1.0
    if others.size:
        res = g_optimal_design(X[others] - X[anchor], tol, max_iter, True, rank_tol)
        if res.span_dimension > 0:
            w[anchor] = 0.5
            w[others] = 0.5 * res.weights
    return design_report(X, w, anchor, A, rank_tol)

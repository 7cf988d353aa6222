"""The span of a set of vectors and the paper's extended matrix-inverse-weighted norm
(experimental-design paper, Section 1.3), with the feature checks the designs share.

Norms ``||z||_{A^{-1}}`` use the paper's extended matrix-inverse-weighted norm (Section 1.3),
``lim_{lambda -> 0} ||z||_{(A + lambda I)^{-1}}``: it equals ``sqrt(z^T A^+ z)`` when ``z`` lies
in the range of ``A`` and is ``+inf`` otherwise (the component ``z_perp`` outside the range
contributes ``|z_perp|^2 / lambda -> inf``).  Numerically, the range is spanned by the singular
directions above ``rank_tol`` times the largest singular value, and a component outside it
counts only if it exceeds ``rank_tol`` times the scale of the vectors (smaller components are
round-off and are dropped).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import validate_int

__all__ = [
    "DEFAULT_RANK_TOL",
    "as_matrix",
    "check_arms",
    "check_index",
    "extended_norms",
    "span_basis",
]

#: Default relative rank tolerance (singular values below ``rank_tol * s_max`` are zero).
DEFAULT_RANK_TOL = 1e-9


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------
#: Largest feature magnitude accepted: squares and sums of squares stay finite.
_MAX_ABS = 1e150


def as_matrix(name: str, a: Any) -> np.ndarray:
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


def check_index(name: str, value: Any, k: int) -> int:
    return validate_int(name, value, 0, k - 1)  # any size, bounds before conversion


def check_arms(arms: Any, k: int) -> np.ndarray:
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

"""Experimental design for semiparametric bandits (experimental-design paper).

* :func:`g_optimal_design` -- the G-optimal design of Eq. (1) (Section 1.2) for standard linear
  regression, computed in the span of the vectors with a Kiefer-Wolfowitz optimality
  certificate.
* :func:`deo_design` -- DEO, Algorithm 1 (Section 3.3): the G-optimal design of
  ``b_i = x_i - x_1`` with half of the mass moved onto ``x_1``.
* :func:`design_report` -- the quantities of Theorem 1 (proved in Appendix A) for *any* design
  ``p`` over the arms.

The span and the extended norm (Section 1.3) are in :mod:`.span`, the G-optimal design
with its Kiefer-Wolfowitz certificate in :mod:`.goptimal`; this module is DEO and Theorem 1's
report, and every name stays importable from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base import validate_positive
from .goptimal import GOptimalResult, g_optimal_design
from .span import (
    DEFAULT_RANK_TOL,
    as_matrix,
    check_arms,
    check_index,
    extended_norms,
    span_basis,
)

__all__ = [
    "DesignReport",
    "GOptimalResult",
    "deo_design",
    "design_report",
    "extended_norms",
    "g_optimal_design",
    "span_basis",
]


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
    X = as_matrix("X", X)
    K = X.shape[0]
    w = _weights(weights, K)
    anchor = check_index("anchor", anchor, K)
    A = check_arms(arms, K)
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
    X = as_matrix("X", X)
    K = X.shape[0]
    anchor = check_index("anchor", anchor, K)
    A = check_arms(arms, K)
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

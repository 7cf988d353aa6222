"""The papers' reference quantities the plots and the experiments compare against.

Domain math, not view code: the dashboard's plots (``dashboard/ui/plots/``) and the
reproduction experiments (:mod:`dashboard.simulation.experiments`) both use these.

* :func:`rate_shape`: the regret rate of each paper with its constants dropped;
  combinatorial paper (Theorems 1-2) ``sqrt(m d t log t)``, semiparametric paper (Theorem 2)
  ``sqrt(d t log K)``.
* :func:`estimation_error`: ``e_t = max_i |(x_i - x_1)^T (theta_hat_t - theta*)|``, the
  error of the estimated gaps to the anchor arm ``x_1`` (semiparametric paper, Section 4.2,
  Corollary 1), for one or many estimates at once.
* :func:`pac_bound`: the reference line ``10 sqrt(d log K)`` of Appendix I.2 for
  ``sqrt(t) e_t``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["estimation_error", "pac_bound", "rate_shape"]


def rate_shape(problem: str, t: Any, spec: Mapping[str, Any]) -> np.ndarray:
    """The theoretical regret rate at rounds ``t`` (constants dropped).

    Parameters
    ----------
    problem : str
        ``"cmab"`` (``sqrt(m d t log t)``, Theorems 1-2) or ``"semiparametric"``
        (``sqrt(d t log K)``, Theorem 2).
    t : array_like
        Rounds.
    spec : mapping
        The problem spec (``d``, ``m`` or ``K``; missing values count as 1 / 2).
    """
    t = np.asarray(t, dtype=float)
    d = float(spec.get("d", 1))
    if problem == "semiparametric":
        return np.sqrt(d * t * np.log(max(float(spec.get("K", 2)), 2.0)))
    m = float(spec.get("m", 1))
    return np.sqrt(m * d * t * np.log(np.maximum(t, np.e)))


def estimation_error(X: Any, theta: Any, theta_hat: Any, anchor: int = 0) -> np.ndarray | float:
    """``e_t = max_i |(x_i - x_anchor)^T (theta_hat - theta*)|`` (Section 4.2).

    Parameters
    ----------
    X : (K, d) array
        Arm features.
    theta : (d,) array
        theta*.
    theta_hat : (d,) or (..., d) array
        One estimate, or a stack of estimates (one error each).
    anchor : int
        The arm ``x_1``.

    Returns
    -------
    float or ndarray
        A float for one estimate, else an array of the stack's leading shape.
    """
    X = np.asarray(X, dtype=float)
    theta = np.asarray(theta, dtype=float)
    est = np.asarray(theta_hat, dtype=float)
    gaps = (est - theta) @ (X - X[int(anchor)]).T
    out = np.abs(gaps).max(axis=-1)
    return float(out) if out.ndim == 0 else out


def pac_bound(d: float, K: float) -> float:
    """Appendix I.2's reference for ``sqrt(t) e_t``: ``10 sqrt(d log K)`` (K at least 2)."""
    return 10.0 * math.sqrt(float(d) * math.log(max(float(K), 2.0)))

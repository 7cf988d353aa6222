"""BOSE's elimination test settled without its pairwise widths, where a bound proves it.

BOSE (:mod:`.bose`) keeps arm ``i`` unless some ``j`` has

    theta^T (x_j - x_i) > gamma ||x_j - x_i||_G,     G = Gamma^-1, theta = G b,

and computes it on the ``(K, K)`` array of widths every round: most of its cost per round.
By Cauchy-Schwarz in the inner product of ``G`` (symmetric positive definite),

    theta^T D = (G^-1/2 theta)^T (G^1/2 D) <= ||theta||_{G^-1} ||D||_G,
    ||theta||_{G^-1}^2 = theta^T G^-1 theta = b^T G b = b^T theta,

so while ``sqrt(b^T theta) < gamma`` no arm can be eliminated, whatever the pair: the
self-normalised size of the estimate is below the confidence width.  With Appendix I's
constants this holds for the whole run at c = 4 and 8 (d = 20, T = 10^5: no arm is ever
eliminated there) and for the first rounds at c = 1 and 2: ~70% of the repetition-rounds of
``semi-regret``'s BOSE at d = 20 (at d = 5 its K = 10 arms are below
:data:`~.bose.CERTIFY_MIN_K`: there the widths cost about what the bound costs).

**The same numbers.**  The engine computes the test in floating point; where
:func:`no_elimination` says True, that computation finds no dominated arm either, so skipping
it changes nothing (:class:`~.bose.BatchedBOSE` with ``certify = False`` computes every
repetition's test; the tests compare the two).  With ``u = 2^-53``, ``g_n = n u / (1 - n u)``,
``X1 = max_i ||x_i||_1``, ``Gmax = max_a G_aa`` (``>= max |G_ab|`` for ``G`` positive
definite) and the computed ``theta^`` (``= G b + e``, ``|e| <= g_d Gmax ||b||_1``):

* the computed scores ``m_k = fl(x_k^T theta^)`` err by at most ``g_d X1 max|theta^|``, and
  their difference is rounded once: ``fl(m_j - m_i) <= (1 + u) theta^^T D + E1`` with ``E1 = 3
  g_d X1 max|theta^|`` (the computed ``theta^`` throughout, not ``G b``);
* ``theta^^T D <= rho ||D||_G`` with ``rho^2 = theta^^T G^-1 theta^ <= s + g_d ||b||_1
  max|theta^| + g_d Gmax ||b||_1^2 + d (g_d Gmax ||b||_1)^2 / lambda_min(G)`` (``s`` the
  computed ``b^T theta^``; the terms are its rounding, ``b^T e`` and ``e^T G^-1 e``);
* the computed ``M = X G X^T`` errs by at most ``1.01 g_2d X1^2 Gmax`` per entry, so the
  computed ``M_ii + M_jj - 2 M_ij`` is within ``E_W = 9 g_2d X1^2 Gmax`` of ``||D||_G^2``,
  and the computed width is at least ``(1 - 2.5u) gamma sqrt(||D||_G^2 - E_W)`` (the square
  root of the subtraction's rounding, the root's and the product's);
* every pair has ``||D||_G^2 >= w^2 = delta^2 lambda_min(G)`` with ``delta`` the smallest
  distance between two arms, and ``lambda_min(G) >= 1 / (2 tr Gamma)``: BOSE's ``Gamma =
  lambda I + sum_s x~_s x~_s^T`` has trace ``d lambda + sum_s ||x~_s||^2`` (tracked by the
  engine) and ``G`` is its inverse up to the rounding of the Sherman-Morrison updates, a
  relative error of order ``t u kappa`` (a first-order estimate): the bound is used only
  where ``t u kappa <= 1e-3``, with ``kappa <= d Gmax tr Gamma`` (~1e-9 at Appendix I's
  constants, T = 10^5), and only for a positive ``Gmax``.

Hence, where ``E_W <= 1e-6 w^2`` and ``(1 + 1e-12) rho + E1 / w <= (1 - 3e-6) gamma``, every
computed difference is at most its computed width: no arm is dominated.  Arms at distance 0
(``delta = 0``) are never certified.  A repetition's rows are the same numbers whether its
widths are computed with all repetitions or with a subset (each stacked product is its own
BLAS call; OpenBLAS, numpy's own, does not depend on the data's alignment; MKL outside its
reproducibility mode might): the tests compare the two engines.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.distance import pdist

from .certified_argmax import feature_norms

__all__ = ["arm_bounds", "no_elimination"]

_U = 2.0**-53


def _g(n: int) -> float:
    """``gamma_n = n u / (1 - n u)``, Higham's bound on ``n`` rounded operations."""
    return n * _U / (1.0 - n * _U)


def arm_bounds(X: np.ndarray) -> tuple[float, float]:
    """``(delta, X1)`` of the arms ``X`` (K, d): a lower bound on the smallest distance
    between two arms (0 if two coincide) and ``max_i ||x_i||_1`` (constant over a run:
    engines compute them once)."""
    X = np.asarray(X, dtype=float)
    delta = float(pdist(X).min()) * (1.0 - 1e-9) if X.shape[0] > 1 else math.inf
    return max(delta, 0.0), feature_norms(X)[1]


def no_elimination(
    G: np.ndarray,
    b: np.ndarray,
    theta: np.ndarray,
    gamma: np.ndarray,
    trace: np.ndarray,
    bounds: tuple[float, float],
    t: int,
) -> np.ndarray:
    """Per repetition, whether the bound proves that BOSE's computed elimination test keeps
    every arm (see the module docstring).

    ``G`` (R, d, d) is ``Gamma^-1``, ``b`` (R, d), ``theta`` (R, d) the computed ``G b``,
    ``gamma`` (R,) the confidence multipliers, ``trace`` (R,) ``tr Gamma``, ``bounds`` =
    :func:`arm_bounds` of the arms, ``t`` the number of updates ``G`` has had.  Returns (R,)
    bool."""
    delta, X1 = bounds
    if delta == math.inf:  # one arm: nothing to eliminate
        return np.ones(b.shape[0], dtype=bool)
    if not delta > 0:
        return np.zeros(b.shape[0], dtype=bool)
    d = b.shape[1]
    g_d, g_2d = _g(d), _g(2 * d)
    # (R,) arrays, few passes: a dozen small operations per round at R = 80
    g_max = np.diagonal(G, axis1=1, axis2=2).max(axis=1)
    theta_max = np.abs(theta).max(axis=1)
    b1 = np.abs(b).sum(axis=1)
    e = b1 * g_max  # max|e| / g_d
    # rho^2 <= s + g_d b1 (theta_max + e) + 2 d g_d^2 tr(Gamma) e^2  (1/lambda_min <= 2 tr)
    rho2 = e * e
    rho2 *= trace
    rho2 *= 2.0 * d * g_d * g_d
    e += theta_max
    e *= b1
    e *= g_d
    rho2 += e
    rho2 += np.einsum("rd,rd->r", b, theta)
    rho = np.sqrt(np.maximum(rho2, 0.0, out=rho2), out=rho2)
    # E1 / w = 3 g_d X1 theta_max sqrt(2 tr Gamma) / delta
    root = np.sqrt(trace)
    rho += ((3.0 * g_d * X1 * math.sqrt(2.0)) / delta) * theta_max * root
    ok = rho <= ((1.0 - 3e-6) / (1.0 + 1e-12)) * gamma
    # E_W = 9 g_2d X1^2 g_max <= 1e-6 w^2 = 1e-6 delta^2 / (2 tr Gamma)
    spread = g_max * trace
    ok &= spread <= 1e-6 * delta * delta / (18.0 * g_2d * X1 * X1)
    # Sherman-Morrison's drift: t u kappa <= 1e-3 with kappa <= d g_max tr Gamma
    ok &= spread <= 1e-3 / (max(t, 1) * _U * d)
    ok &= g_max > 0  # G positive definite (a NaN fails every comparison)
    return ok

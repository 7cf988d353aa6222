"""SP-TS's Monte Carlo without its cost: arg-maxima certified on cheap approximate normals.

SP-TS (:mod:`.spts`) draws ``(n_mc + 1) d`` standard normals per round and repetition, as
``ndtri`` (scipy's inverse normal CDF) of counter-based uniforms, and uses each draw
``mu~ = mu_hat + v L^-T z`` *only* through ``argmax_i x_i^T mu~`` (the played arm and the
Monte Carlo counts of ``pi_t``).  ``ndtri`` is three quarters of that cost.  So the sampler:

1. replaces ``ndtri(u)`` by a table: ``Phi^-1`` linearly interpolated between nodes spaced by
   the top :data:`MANTISSA_BITS` mantissa bits of ``w = min(u, 1 - u)`` (a log-scale grid, fine
   in the tails; ``1 - u`` is exact for ``u >= 1/2``), with a certified error bound
   :data:`TABLE_ERROR` (``h^2 / 8 max |(Phi^-1)''|`` per segment, plus rounding);
2. computes the scores ``x_i^T mu~`` from those approximate normals;
3. certifies each arg-max: with ``|z~ - z| <= eps`` elementwise, the score difference of arms
   ``b`` and ``j`` moves by at most ``v eps ||L^-1 (x_b - x_j)||_1 <= 2 v eps max_i
   ||L^-1 x_i||_1``; floating-point rounding of both computations is below
   ``1e-9 S`` (``S`` bounds the terms' magnitudes, :func:`thresholds`).  Where the best and
   second-best scores are further apart than that, the exact computation has the same
   arg-max.  A repetition with any closer call (or a uniform of exactly 1, where ``ndtri`` is
   infinite) is recomputed with the exact ``ndtri`` and the original products.

The random numbers and their order are unchanged (the uniforms are those of
:func:`dashboard.algorithms.randomness.uniform`), and every arm played and every Monte Carlo
count equals the exact computation's, so ``pi_t``, ``B``, ``y`` and the regret are identical
(``tests/unit/test_semiparametric_spts_sampler.py`` compares with the former implementation).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

__all__ = [
    "MANTISSA_BITS",
    "TABLE_ERROR",
    "approx_normal",
    "certified_best",
    "certify",
    "feature_norms",
    "thresholds",
]

#: Mantissa bits of ``w`` resolved by the table (2^11 segments per octave, 54 octaves: 1.8 MB;
#: error <= 1.9e-8).  The error is most of the certificate's margin, and a close call costs an
#: exact recomputation (~50 us per repetition): 11 bits instead of 9 (4.4 times more
#: nodes, 16 times less error) send 0.3% of SP-TS's repetition-rounds to it at d = 20 instead
#: of 2%, 1.13x per round (d = 5: 0.07% instead of 0.75%, 1.09x; issue 9, measured side by
#: side; 12 bits gain nothing more).
MANTISSA_BITS = 11
_SHIFT = 52 - MANTISSA_BITS
#: Relative size of the rounding slack (exceeds ``2 gamma_{2d+2}`` by orders of magnitude).
ROUNDING_SLACK = 1e-9
#: Largest ``|ndtri(u)|`` for the uniforms of :func:`~dashboard.algorithms.randomness.uniform`
#: below 1 (``u >= 2^-54``: ``|Phi^-1(2^-54)| = 8.16``).
Z_MAX = 8.5


def _build(bits: int = MANTISSA_BITS) -> tuple[int, np.ndarray, np.ndarray, float]:
    """Nodes ``w_j`` = every float in ``[2^-55, 1/2]`` whose mantissa is zero below its top
    ``bits`` bits (:data:`MANTISSA_BITS`; another count builds another table, as
    ``benchmarks/bench_certificates.py`` compares them); per segment the line through ``(w_j,
    Phi^-1(w_j))`` and the next node, and the certified bound of the interpolation error over
    all segments."""
    shift = 52 - bits
    lo = int(np.float64(2.0**-55).view(np.int64)) >> shift
    hi = int(np.float64(0.5).view(np.int64)) >> shift
    nodes = (np.arange(lo, hi + 2, dtype=np.int64) << shift).view(np.float64)
    nodes = np.minimum(nodes, 0.5)  # the last segment [1/2, 1/2] is the single point 0
    f = ndtri(nodes)
    h = np.diff(nodes)
    slope = np.divide(np.diff(f), h, out=np.zeros_like(h), where=h > 0)
    intercept = f[:-1] - slope * nodes[:-1]
    # |(Phi^-1)''(w)| = |z| / phi(z)^2 = 2 pi |z| exp(z^2) grows as w falls to 0, so on a
    # segment it is largest at the left node; linear interpolation errs by <= h^2/8 max|f''|
    z0 = f[:-1]
    curvature = 2.0 * math.pi * np.abs(z0) * np.exp(z0 * z0)
    interp = float(np.max(h * h / 8.0 * curvature))
    # plus ndtri's own error at the nodes and at u, and the rounding of a + b w (~1e-15)
    return lo, intercept, slope, 1.5 * interp + 1e-12


_LO, _A, _B, TABLE_ERROR = _build()


def approx_normal(
    u: np.ndarray, out: np.ndarray | None = None, work: np.ndarray | None = None
) -> np.ndarray:
    """``Phi^-1(u)`` within :data:`TABLE_ERROR` for every ``u`` in ``(0, 1)`` (``u = 1``, where
    ``ndtri`` is infinite, returns a finite value: callers check for it).

    ``out`` (float64, ``u``'s shape) receives the result and ``work`` (float64, shape ``(2,
    *u.shape)``, C-contiguous) is scratch, so that a caller looping over rounds allocates
    nothing (arrays above glibc's mmap threshold would fault their pages in on every call)."""
    if work is None:
        work = np.empty((2, *u.shape))
    w, i = work[0], work[1].view(np.int64)
    np.subtract(1.0, u, out=w)  # exact for u >= 1/2 (Sterbenz)
    np.minimum(w, u, out=w)
    np.right_shift(w.view(np.int64), _SHIFT, out=i)
    i -= _LO  # only w = 0 (u = 1) falls below the table: clipped
    z = _B.take(i, mode="clip", out=out)
    z *= w
    z += _A.take(i, mode="clip", out=w)  # Phi^-1(w) <= 0; copysign keeps its magnitude
    return np.copysign(z, np.subtract(u, 0.5, out=w), out=z)


def feature_norms(X: np.ndarray) -> tuple[float, float]:
    """``(max_i ||x_i||_2, max_i ||x_i||_1)`` of the features ``X`` (K, d), for
    :func:`thresholds` (constant over a run: engines compute them once)."""
    x2 = float(np.sqrt((X * X).sum(axis=1)).max())
    x1 = float(np.abs(X).sum(axis=1).max())
    return x2, x1


def thresholds(
    v: float,
    w: np.ndarray,
    X: np.ndarray,
    norms: tuple[float, float] | None = None,
    slack: float = ROUNDING_SLACK,
) -> np.ndarray:
    """Per repetition, the score margin above which an arg-max of approximate scores is the
    exact one, for ``B >= I`` (so ``||L^-1||_2 <= 1``).

    The approximate scores are ``(z~ + w)^T L^-1 (v x_i)`` with ``w = L^-1 y / v`` (R, d), the
    exact ones ``x_i^T mu_hat + v z^T L^-1 x_i`` with ``mu_hat = L^-T L^-1 y``.  The normals'
    error moves a difference of two scores by at most ``2 v eps max_i ||L^-1 x_i||_1 <= 2 v
    eps sqrt(d) max_i ||x_i||_2``, and rounding by less than ``1e-9 (1 + S)`` with ``S = v
    sqrt(d) (max|w| + Z_MAX) max_i ||x_i||_1``, which bounds every term of both computations
    (``max|mu_hat| <= ||L^-1 y||_2 <= v sqrt(d) max|w|``).

    ``norms`` = :func:`feature_norms` of ``X`` if known; returns (R,).  Computed as ``a
    max|w| + b`` with the scalars ``a``, ``b`` of the bound's other factors (two array
    passes per round; the same bound up to the rounding of the factors, far inside the
    slacks above).  ``slack`` replaces :data:`ROUNDING_SLACK` (1e-9) where the caller's two
    computations differ by more than rounding (SP-TS's two inverses of ``L``)."""
    d = X.shape[1]
    root_d = 1.01 * math.sqrt(d)  # 1.01: B >= I holds up to rounding
    x2, x1 = feature_norms(X) if norms is None else norms
    a = slack * v * root_d * x1
    b = slack * ((Z_MAX * v * root_d) * x1 + 1.0) + 2.02 * v * TABLE_ERROR * root_d * x2
    size = np.maximum.reduce(np.abs(w), axis=1)
    size *= a
    size += b
    return size


def certified_best(scores: np.ndarray, threshold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Arg-max over the last axis of ``scores`` (R, S, K) and, per repetition, whether each of
    its ``S`` maxima is finite and the only score within ``threshold[r]`` of it (so the exact
    scores have the same arg-max).  ``scores`` is not modified.  (:func:`certify` on the
    draws-as-columns view, plus the arg-maxima.)"""
    _, ok, _ = certify(scores.transpose(0, 2, 1), threshold)
    return scores.argmax(axis=2), ok


def certify(
    scores: np.ndarray, threshold: np.ndarray, close: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Certify the arg-max of every column of ``scores`` (R, K, S): repetition ``r``'s draw
    ``s`` scores the ``K`` arms in ``scores[r, :, s]``.

    Returns ``close`` (bool, ``scores``' shape: the scores above their column's maximum minus
    ``threshold[r]``), per repetition whether each of its ``S`` maxima is finite and the only
    score that close (so the exact scores have the same arg-max, the one ``True`` of its
    column), and whether every repetition is (a Python bool, so that a caller looping over
    rounds tests the common case without another array pass).  ``close`` may be passed in
    (a buffer of that shape, reused).  ``scores`` is not modified.

    The maxima are one reduction over the arms' axis, which is not the last one: the columns
    are reduced elementwise, not one short row at a time (2-3x faster than an arg-max over a
    last axis of K = 10-30).  With positive thresholds and finite maxima every column has at
    least one score above ``top - threshold`` (its maximum), so a total of ``R S`` over the
    whole array certifies every repetition at once (the common case: one count); otherwise
    the count is per repetition."""
    R, _, S = scores.shape
    top = np.maximum.reduce(scores, axis=1)  # (R, S); NaN if a column has one
    # a finite sum means every maximum is finite (a sum that overflows only sends the round
    # to the per-repetition count below, which gives the same answer)
    all_finite = math.isfinite(top.sum())
    top -= threshold[:, None]
    close = np.greater(scores, top[:, None, :], out=close)
    if all_finite and np.minimum.reduce(threshold) > 0 and np.count_nonzero(close) == R * S:
        return close, np.ones(R, dtype=bool), True
    # each finite maximum counts itself: the total is S exactly when no runner-up is close
    finite = np.logical_and.reduce(np.isfinite(np.maximum.reduce(scores, axis=1)), axis=1)
    ok = finite & (close.reshape(R, -1).sum(axis=1) == S)
    return close, ok, False

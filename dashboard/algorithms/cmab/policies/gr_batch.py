"""Array kernels shared by the batched general-reward engines (SDCB, Disc-AROQ-GR).

A lower module: it imports no policy, so the policy modules (:mod:`.sdcb`, :mod:`.general`)
import it one way.

* :func:`optimistic_dense` -- the optimistic laws of Eq. (10) for ``R`` repetitions and ``d``
  arms at once, dense on a lattice grid, from integer count tables ``(R, d, G)``; exactly the
  probabilities of ``EmpiricalDistributions.optimistic`` (same elementwise operations; grid
  points without observations add exact zeros);
* :func:`refined_rows` -- the reference ``argmax`` (first maximiser of
  ``expected_aggregate``) of every repetition, from the approximate values of
  :func:`~..rewards.aggregate.values_dense` and their error bound, re-evaluating near-ties
  with the reference function exactly as ``ExpectedRewardIndex.argmax_rows`` does;
* :func:`upper_bounds`, :func:`pruned_values` -- an exact pruning of that scoring for
  ``sqrt`` of a sum: a variance-corrected Jensen bound discards all but a handful of the
  ``C(d, m)`` actions before any convolution;
* :class:`BetaIntervals` -- Algorithm 8's interval index of Beta outcomes straight from their
  uniforms (CDF comparisons instead of one inverse CDF per outcome), exactly the index of the
  inverse-CDF outcome.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import betainc

from ..rewards.aggregate import (
    FFT_LEVELS,
    _g,
    error_bound,
    fft_error,
    lattice,
    values_dense,
)
from ..rewards.laws import expected_aggregate

__all__ = [
    "BetaIntervals",
    "exact_laws",
    "optimistic_dense",
    "pruned_values",
    "refined_rows",
    "upper_bounds",
]


def optimistic_dense(
    counts: np.ndarray, n: np.ndarray, C: float, log_term: float | np.ndarray
) -> np.ndarray:
    """Optimistic laws ``(R, d, G)``: CDF ``max(F_hat - rho, 0)`` below the top of the grid,
    ``rho = sqrt(C log_term / n)`` (``log_term`` scalar or one per repetition); a never-played
    arm or ``rho >= 1`` is the point mass at the top."""
    lt = np.asarray(log_term, dtype=float)
    if lt.ndim:
        lt = lt[:, None]
    with np.errstate(divide="ignore"):
        rho = np.where(n > 0, np.sqrt(C * lt / np.maximum(n, 1)), np.inf)
    F = np.cumsum(counts.astype(float), axis=2) / np.maximum(n, 1)[..., None]
    Fu = np.maximum(F[..., :-1] - rho[..., None], 0.0)
    P = np.diff(Fu, axis=2, prepend=0.0, append=1.0)
    point = (n == 0) | (rho >= 1.0)
    P[point] = 0.0
    P[point, -1] = 1.0
    return P


def exact_laws(grid: np.ndarray, P: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per-arm ``(values, probs)`` of a dense ``(d, G)`` table (atoms with positive mass)."""
    return [(grid[p > 0], p[p > 0]) for p in P]


def refined_rows(
    grid: np.ndarray,
    P: np.ndarray,
    A: np.ndarray,
    arms: np.ndarray,
    kind: str,
    prefixes: tuple[np.ndarray, np.ndarray] | None,
    allowed: np.ndarray | None = None,
) -> tuple[np.ndarray, int]:
    """Row of ``A`` maximising ``E[r(a, y)]`` under the laws ``P`` (``(R, d, G)`` on the
    lattice ``grid``) for every repetition: the reference ``argmax`` (first maximiser in row
    order) among the rows where ``allowed`` (``(R, n)`` or ``(n,)``, default all).  Returns the
    rows ``(R,)`` and the number of actions re-evaluated with the reference function.

    With ``"sqrt-sum"`` on a lattice of non-negative values, only the actions whose upper
    bound (:func:`upper_bounds`) reaches the best approximate value found among the few
    highest bounds are scored (:func:`pruned_values`); the others cannot be within twice the
    error bound of the best, so the near-ties, hence the answer, are those of scoring all."""
    _, d, G = P.shape
    k = arms.shape[1]
    lat = lattice(grid)
    dev = 0.0 if lat is None else lat[3]
    scale = float(np.max(np.abs(grid))) * max(k, 1)
    prune = kind == "sqrt-sum" and lat is not None and k > 1 and float(grid[0]) >= 0.0
    extra = 0.0
    if kind != "max" and lat is not None and k > 1:
        if prune or int(lat[2][-1]) + 1 > FFT_LEVELS:  # a Fourier evaluation
            extra = fft_error(int(lat[2][-1]) + 1, k, math.sqrt(abs(scale)))
    gmin = grid[np.argmax(P.any(axis=1), axis=1)]  # smallest atom in use, per repetition
    bound_of = {g: error_bound(g, k, kind, dev, scale) + extra for g in set(gmin.tolist())}
    bounds = np.array([bound_of[g] for g in gmin.tolist()])
    if prune:
        approx = pruned_values(grid, P, arms, kind, allowed, bounds)
    else:
        approx = values_dense(grid, P, arms, kind, prefixes)
    if allowed is not None:
        approx = np.where(allowed, approx, -np.inf)
    best = approx.max(axis=1)
    close = approx >= (best - 2.0 * bounds)[:, None]
    rows = np.argmax(approx, axis=1)
    todo = np.flatnonzero(np.count_nonzero(close, axis=1) > 1)
    if todo.size == 0:
        return rows, 0
    # arms with bit-identical laws give actions bit-identical reference values: among the
    # near-ties keep the first action of each law signature (exact, no evaluation needed)
    flatP = np.ascontiguousarray(P[todo]).reshape(-1, G)
    law = np.unique(flatP.view(np.dtype((np.void, 8 * G))).ravel(), return_inverse=True)[1]
    law = law.reshape(todo.size, d)
    N = law.size + 1
    if float(N) ** k < 2.0**62:
        code = law[:, arms] @ (N ** np.arange(k, dtype=np.int64))  # (todo, n)
        code[~close[todo]] = -1
        srt = np.sort(code, axis=1)
        first = (srt >= 0) & np.concatenate(
            [np.ones((todo.size, 1), dtype=bool), srt[:, 1:] != srt[:, :-1]], axis=1
        )
        single = first.sum(axis=1) == 1
        rows[todo[single]] = np.argmax(close[todo[single]], axis=1)
        keep = ~single
        todo, law = todo[keep], law[keep]
    reevaluated = 0
    for q, r in enumerate(todo):
        cand = np.flatnonzero(close[r])
        _, first_idx = np.unique(law[q][arms[cand]], axis=0, return_index=True)
        cand = cand[np.sort(first_idx)]
        if cand.size == 1:
            rows[r] = cand[0]
            continue
        laws = exact_laws(grid, P[r])
        vals = [
            expected_aggregate([laws[i][0] for i in a], [laws[i][1] for i in a], kind)
            for a in arms[cand]
        ]
        rows[r] = cand[int(np.argmax(vals))]
        reevaluated += cand.size
    return rows, reevaluated


def interval_index(y: np.ndarray, s: int) -> np.ndarray:
    """Algorithm 8's ``j`` (``y`` in ``I_j``, ``1 <= j <= s``): the arithmetic of
    :func:`~.gr_stats.discretize`, as integers."""
    y = np.clip(y, 0.0, 1.0)
    return np.maximum(np.ceil(y * s - 1e-9), 1.0).astype(np.int64)


class BetaIntervals:
    """Interval index ``j`` of Algorithm 8 of ``y = F^-1(u)`` for Beta laws, from ``u``.

    ``j(y)`` (:func:`interval_index`) is non-decreasing in ``y`` and jumps only at
    ``x_k = (k + 1e-9) / s``: away from them by more than ``TAU`` (far more than the float
    error of ``y s - 1e-9``), ``j(y) <= k`` iff ``y < x_k``.  With the CDF ``F`` of the arm,
    ``u < lo_k = F(x_k - TAU) - MARGIN`` gives ``y < x_k - TAU`` for the computed inverse
    ``y`` of ``u`` (its backward error ``|F(y) - u|`` and the error of ``F`` itself are far
    below ``MARGIN``), and ``u > hi_k = F(x_k + TAU) + MARGIN`` gives ``y > x_k + TAU``.  So
    ``j = 1 + #{k : hi_k < u}`` whenever no ``k`` has ``lo_k <= u <= hi_k``; the rare
    outcomes inside a band (probability about ``s * 2e-9``) are computed with the inverse
    CDF itself.  The same index as the inverse-CDF path, bit for bit, at the cost of two
    binary searches per outcome (the inverse CDF costs ~2 us per outcome).

    Parameters
    ----------
    alpha, beta : arrays (d,)
        The Beta parameters of the arms.
    s : int
        Number of intervals.
    quantile : callable ``(arms, u) -> y``
        The model's inverse CDF (used inside the bands).
    """

    TAU = 1e-9
    MARGIN = 1e-12

    def __init__(self, alpha: np.ndarray, beta: np.ndarray, s: int, quantile: Any) -> None:
        self.s = int(s)
        self.quantile = quantile
        x = (np.arange(1, self.s) + 1e-9) / self.s  # the jumps x_1 .. x_{s-1}
        a, b = np.asarray(alpha, dtype=float)[:, None], np.asarray(beta, dtype=float)[:, None]
        lo = betainc(a, b, np.clip(x - self.TAU, 0.0, 1.0)) - self.MARGIN
        hi = betainc(a, b, np.clip(x + self.TAU, 0.0, 1.0)) + self.MARGIN
        # monotone envelopes (lowering lo / raising hi only widens the bands: still exact)
        self.lo = np.minimum.accumulate(lo[:, ::-1], axis=1)[:, ::-1].copy()
        self.hi = np.maximum.accumulate(hi, axis=1)
        self.exact_calls = 0

    def index(self, arms: np.ndarray, u: np.ndarray) -> np.ndarray:
        """``interval_index(quantile(arms, u), s)`` (same shape as ``u``)."""
        arms = np.asarray(arms, dtype=np.int64).ravel()
        u = np.asarray(u, dtype=float)
        shape, u = u.shape, u.ravel()
        out = np.empty(u.size, dtype=np.int64)
        order = np.argsort(arms, kind="stable")
        bounds = np.searchsorted(arms[order], np.arange(self.lo.shape[0] + 1))
        for i in np.flatnonzero(np.diff(bounds)):
            sel = order[bounds[i] : bounds[i + 1]]
            uu = u[sel]
            below = np.searchsorted(self.hi[i], uu, side="left")  # #{k : hi_k < u}
            upto = np.searchsorted(self.lo[i], uu, side="right")  # #{k : lo_k <= u}
            j = below + 1
            unsure = np.flatnonzero(below != upto)
            if unsure.size:
                self.exact_calls += unsure.size
                y = self.quantile(np.full(unsure.size, i), uu[unsure])
                j[unsure] = interval_index(y, self.s)
            out[sel] = j
        return out.reshape(shape)


#: Actions scored first (highest upper bounds) per repetition by :func:`pruned_values`.
PRUNE_FIRST = 4
#: Absolute slack on the upper bounds (their float error is below 1e-13).
PRUNE_SLACK = 1e-8


def upper_bounds(grid: np.ndarray, P: np.ndarray, arms: np.ndarray) -> np.ndarray:
    """Upper bound on ``E[sqrt(S_a)]`` for every action (``(R, n)``), ``S_a`` the sum of the
    outcomes of the arms of ``a`` under the independent laws ``P`` (``(R, d, G)``) on the
    non-negative ``grid``.

    For ``0 <= x <= X`` and ``m > 0``,
    ``sqrt(x) = sqrt(m) + (x - m) / (2 sqrt(m)) - (x - m)^2 / (2 sqrt(m) (sqrt(x) + sqrt(m))^2)``
    and the last term is at least ``(x - m)^2 / (2 sqrt(m) (sqrt(X) + sqrt(m))^2)``; with
    ``m = E[S]`` (Jensen plus a variance correction):
    ``E[sqrt(S)] <= sqrt(m) - Var(S) / (2 sqrt(m) (sqrt(X) + sqrt(m))^2)``, with ``X`` the
    largest possible sum; ``m = 0`` means ``S = 0``."""
    mu = P @ grid  # (R, d)
    var = np.einsum("rdg,rdg->rd", P, (grid[None, None, :] - mu[..., None]) ** 2)
    m = mu[:, arms].sum(axis=2)
    v = var[:, arms].sum(axis=2)
    top = math.sqrt(arms.shape[1] * float(grid[-1]))
    sm = np.sqrt(np.maximum(m, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        ub = sm - v / (2.0 * sm * (top + sm) ** 2)
    return np.where(m > 0, ub, 0.0)


def _spectra(grid: np.ndarray, P: np.ndarray, k: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Real FFTs of the laws on their lattice and of ``g`` at the sums of ``k`` arms, weighted
    for Parseval (the transform of :func:`~..rewards.aggregate.values_dense`'s Fourier path)."""
    b, h, pos, _ = lattice(grid)  # type: ignore[misc]
    L = int(pos[-1]) + 1
    Q = np.zeros((*P.shape[:2], L))
    Q[:, :, pos] = P
    gvals = _g(kind, k * b + h * np.arange(k * (L - 1) + 1))
    N = 1 << int(np.ceil(np.log2(gvals.size)))
    F = np.fft.rfft(Q, n=N, axis=2)  # (R, d, N/2 + 1)
    w = np.full(N // 2 + 1, 2.0 / N)
    w[0] = 1.0 / N
    w[-1] = 1.0 / N
    return F, np.conj(np.fft.rfft(gvals, n=N)) * w


def _values_at(F: np.ndarray, Gh: np.ndarray, reps: np.ndarray, acts: np.ndarray) -> np.ndarray:
    """Approximate ``E[g(sum)]`` of the actions ``acts`` (``(n, k)`` arms) under the laws of
    repetitions ``reps`` (``(n,)``): ``sum_f Re(conj(G^(f)) prod_j Q^_j(f))`` (Parseval)."""
    W = F[reps, acts[:, 0]] * Gh
    for j in range(1, acts.shape[1] - 1):
        W *= F[reps, acts[:, j]]
    last = F[reps, acts[:, -1]]
    return np.einsum("nf,nf->n", W.real, last.real) - np.einsum("nf,nf->n", W.imag, last.imag)


def pruned_values(
    grid: np.ndarray,
    P: np.ndarray,
    arms: np.ndarray,
    kind: str,
    allowed: np.ndarray | None,
    bounds: np.ndarray,
) -> np.ndarray:
    """Approximate values (``(R, n)``) of the actions that can be within ``2 * bounds`` of the
    best approximate value, ``-inf`` for the others (and for the rows not ``allowed``).

    The :data:`PRUNE_FIRST` actions of highest :func:`upper_bounds` are scored first; their
    best value ``v`` is within ``bound`` of a true value, and an action with
    ``upper bound < v - 3 bound - slack`` has an approximate value below
    ``v - 2 bound <= best - 2 bound`` (approximate <= true + bound <= upper bound + bound), so
    it is neither the best nor a near-tie.  When many actions remain (never-played arms, all
    at the top, tie), one action per multiset of arm laws is scored."""
    R, n = P.shape[0], arms.shape[0]
    ub = upper_bounds(grid, P, arms)
    if allowed is not None:
        ub = np.where(allowed, ub, -np.inf)
    F, Gh = _spectra(grid, P, arms.shape[1], kind)
    approx = np.full((R, n), -np.inf)
    k0 = min(PRUNE_FIRST, n)
    first = np.argpartition(-ub, k0 - 1, axis=1)[:, :k0]
    reps = np.repeat(np.arange(R), k0)
    acts = first.ravel()
    ok = np.isfinite(ub[reps, acts])
    reps, acts = reps[ok], acts[ok]
    approx[reps, acts] = _values_at(F, Gh, reps, arms[acts])
    floor = approx.max(axis=1) - 3.0 * bounds - PRUNE_SLACK
    cand = (ub >= floor[:, None]) & np.isneginf(approx) & np.isfinite(ub)
    reps, acts = np.nonzero(cand)
    if reps.size <= _DEDUP_ABOVE * R:
        if reps.size:
            approx[reps, acts] = _values_at(F, Gh, reps, arms[acts])
        return approx
    # many candidates (never-played arms share one law, so many actions tie): score one
    # action per multiset of laws (the same value up to rounding, far below the bound)
    law = law_ids(P)
    sig = np.sort(law[reps[:, None], arms[acts]], axis=1)
    key = np.concatenate([reps[:, None], sig], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    vals = _values_at(F, Gh, reps[first], arms[acts[first]])
    approx[reps, acts] = vals[np.asarray(inverse).ravel()]
    return approx


#: Candidates per repetition above which actions are grouped by their arms' laws.
_DEDUP_ABOVE = 16


def law_ids(P: np.ndarray) -> np.ndarray:
    """``(R, d)`` ids, equal for bit-identical laws (rows of ``P``, any repetitions)."""
    R, d, G = P.shape
    flat = np.ascontiguousarray(P).reshape(-1, G)
    ids = np.unique(flat.view(np.dtype((np.void, 8 * G))).ravel(), return_inverse=True)[1]
    return np.asarray(ids).reshape(R, d)

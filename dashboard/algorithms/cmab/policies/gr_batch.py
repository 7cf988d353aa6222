"""Array kernels shared by the batched general-reward engines (SDCB, Disc-AROQ-GR).

A lower module: it imports no policy, so the policy modules (:mod:`.sdcb`, :mod:`.general`)
import it one way.

* :func:`optimistic_dense` -- the optimistic laws of Eq. (10) for ``R`` repetitions and ``d``
  arms at once, dense on a lattice grid, from integer count tables ``(R, d, G)``; exactly the
  probabilities of ``EmpiricalDistributions.optimistic`` (same elementwise operations; grid
  points without observations add exact zeros); :func:`pessimistic_dense`, the same for
  Eq. (11);
* :func:`refined_rows` -- the reference ``argmax`` (first maximiser of
  ``expected_aggregate``) of every repetition, from the approximate values of
  :func:`~..rewards.aggregate.values_dense` and their error bound, re-evaluating near-ties
  with the reference function exactly as ``ExpectedRewardIndex.argmax_rows`` does;
* :func:`upper_bounds`, :func:`pruned_values` -- an exact pruning of that scoring for
  ``sqrt`` of a sum: a variance-corrected Jensen bound discards all but a handful of the
  ``C(d, m)`` actions before any convolution;
* :func:`refined_queries` -- the same for several queries per repetition (SROQ's
  representatives), with the approximate values of the answers and their error bounds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..rewards.aggregate import (
    FFT_LEVELS,
    _g,
    _hankel,
    error_bound,
    fft_error,
    lattice,
    values_dense,
)
from ..rewards.laws import expected_aggregate

__all__ = [
    "RoundScorer",
    "exact_laws",
    "optimistic_dense",
    "pessimistic_dense",
    "pruned_values",
    "refined_queries",
    "refined_rows",
    "upper_bounds",
]


def _empirical_cdf_and_width(
    counts: np.ndarray, n: np.ndarray, C: float, log_term: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(rho, F)``: the confidence width ``sqrt(C log_term / n)`` (infinite for a never-played
    arm) and the empirical CDFs ``(R, d, G)`` of the counts, shared by both laws below."""
    lt = np.asarray(log_term, dtype=float)
    if lt.ndim:
        lt = lt[:, None]
    with np.errstate(divide="ignore"):
        rho = np.where(n > 0, np.sqrt(C * lt / np.maximum(n, 1)), np.inf)
    F = np.cumsum(counts.astype(float), axis=2) / np.maximum(n, 1)[..., None]
    return rho, F


def optimistic_dense(
    counts: np.ndarray, n: np.ndarray, C: float, log_term: float | np.ndarray
) -> np.ndarray:
    """Optimistic laws ``(R, d, G)``: CDF ``max(F_hat - rho, 0)`` below the top of the grid,
    ``rho = sqrt(C log_term / n)`` (``log_term`` scalar or one per repetition); a never-played
    arm or ``rho >= 1`` is the point mass at the top."""
    if isinstance(log_term, float):  # one log term (SDCB, every round): fewer numpy calls
        # the same operations as _empirical_cdf_and_width: C * log_term / max(n, 1), sqrt,
        # infinite where n = 0 (no division by zero to silence: max(n, 1) >= 1)
        nmax = np.maximum(n, 1)
        rho = np.sqrt(C * log_term / nmax)
        unplayed = n == 0
        if unplayed.any():
            rho[unplayed] = np.inf
        F = np.cumsum(counts.astype(float), axis=2) / nmax[..., None]
    else:
        rho, F = _empirical_cdf_and_width(counts, n, C, log_term)
    Fu = np.maximum(F[..., :-1] - rho[..., None], 0.0)
    # np.diff(Fu, axis=2, prepend=0.0, append=1.0) without its concatenation: the same
    # subtractions, written in place
    P = np.empty(F.shape)
    np.subtract(Fu[..., :1], 0.0, out=P[..., :1])
    np.subtract(Fu[..., 1:], Fu[..., :-1], out=P[..., 1:-1])
    np.subtract(1.0, Fu[..., -1:], out=P[..., -1:])
    point = rho >= 1.0  # rho is infinite where n = 0
    if point.any():
        P[point] = 0.0
        P[point, -1] = 1.0
    return P


def pessimistic_dense(
    counts: np.ndarray, n: np.ndarray, C: float, log_term: float | np.ndarray
) -> np.ndarray:
    """Pessimistic laws ``(R, d, G)`` of Eq. (11) on a grid whose first point is the bottom of
    the support and last point its top: CDF ``min(F_hat + rho, 1)`` below the top, 1 at it; a
    never-played arm or ``rho >= 1`` is the point mass at the bottom.  Exactly the
    probabilities of ``EmpiricalDistributions.pessimistic`` (whose support starts at the
    bottom), with exact zeros at the grid points between its atoms."""
    rho, F = _empirical_cdf_and_width(counts, n, C, log_term)
    Fo = np.minimum(F + rho[..., None], 1.0)
    Fo[..., -1] = 1.0
    P = np.diff(Fo, axis=2, prepend=0.0)
    point = (n == 0) | (rho >= 1.0)
    P[point] = 0.0
    P[point, 0] = 1.0
    return P


def exact_laws(grid: np.ndarray, P: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per-arm ``(values, probs)`` of a dense ``(d, G)`` table (atoms with positive mass)."""
    return [(grid[p > 0], p[p > 0]) for p in P]


_SCALES: dict[bytes, float] = {}


def _grid_scale(grid: np.ndarray) -> float:
    """``max |grid|`` (cached per grid: asked every round of a run)."""
    key = grid.tobytes()
    hit = _SCALES.get(key)
    if hit is None:
        hit = float(np.max(np.abs(grid)))
        if len(_SCALES) >= 64:
            _SCALES.clear()
        _SCALES[key] = hit
    return hit


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
    rows ``(R,)`` and the number of actions re-evaluated with the reference function
    (:func:`refined_queries` with one query per repetition)."""
    rows, n_re, _, _ = refined_queries(grid, P, arms, kind, prefixes, None, allowed)
    return rows, n_re


def _scoring_plan(grid: np.ndarray, k: int, kind: str) -> tuple[Any, float, float, bool, float]:
    """What scoring actions of ``k`` arms on ``grid`` needs, whatever the laws: the lattice
    (or None), its deviation, the error-bound scale, whether to prune and the Fourier
    evaluation's extra error (:func:`refined_queries` per call, :class:`RoundScorer` once)."""
    lat = lattice(grid)
    dev = 0.0 if lat is None else lat[3]
    scale = _grid_scale(grid) * max(k, 1)
    levels = 0 if lat is None else int(lat[2][-1]) + 1
    # pruning pays where scoring every action is expensive (Algorithm 8's s levels); on a few
    # lattice points (SDCB's 6-point support) the direct scoring of all actions is cheaper
    prune = kind == "sqrt-sum" and k > 1 and levels > PRUNE_LEVELS and float(grid[0]) >= 0.0
    extra = 0.0
    if prune or (kind != "max" and k > 1 and levels > FFT_LEVELS):  # a Fourier evaluation
        extra = fft_error(levels, k, math.sqrt(abs(scale)))
    return lat, dev, scale, prune, extra


def refined_queries(
    grid: np.ndarray,
    P: np.ndarray,
    arms: np.ndarray,
    kind: str,
    prefixes: tuple[np.ndarray, np.ndarray] | None,
    owner: np.ndarray | None = None,
    allowed: np.ndarray | None = None,
) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """The reference ``argmax`` of several queries over the actions ``arms`` (``(n, k)``):
    query ``q`` maximises ``E[r(a, y)]`` under the laws ``P[owner[q]]`` among the actions
    where ``allowed[q]`` (``owner`` default: one query per repetition of ``P``; ``allowed``
    ``(n_q, n)`` or ``(n,)``, default all).  Returns the rows ``(n_q,)``, the number of
    actions re-evaluated with the reference function, the approximate values of the rows and
    their error bounds (``|approximate - reference| <= bound``).

    With ``"sqrt-sum"`` on a lattice of non-negative values with more than
    :data:`PRUNE_LEVELS` points, only the actions whose upper bound
    (:func:`upper_bounds`) reaches the best approximate value found among the few highest
    bounds are scored (:func:`pruned_values`); the others cannot be within twice the error
    bound of the best, so the near-ties, hence the answer, are those of scoring all."""
    R = P.shape[0]
    owner = np.arange(R) if owner is None else np.asarray(owner, dtype=np.int64)
    nq = owner.size
    k = arms.shape[1]
    _, dev, scale, prune, extra = _scoring_plan(grid, k, kind)
    gmin = grid[np.argmax(P.any(axis=1), axis=1)]  # smallest atom in use, per repetition
    bound_of = {g: error_bound(g, k, kind, dev, scale) + extra for g in set(gmin.tolist())}
    bounds = np.array([bound_of[g] for g in gmin.tolist()])[owner]
    if allowed is not None:
        allowed = np.broadcast_to(allowed, (nq, arms.shape[0]))
    if prune:
        approx = pruned_values(grid, P, arms, kind, allowed, bounds, owner)
    else:
        approx = values_dense(grid, P, arms, kind, prefixes)[owner]
    if allowed is not None:
        approx = np.where(allowed, approx, -np.inf)
    best = approx.max(axis=1)
    close = approx >= (best - 2.0 * bounds)[:, None]
    rows = np.argmax(approx, axis=1)
    todo = np.flatnonzero(np.count_nonzero(close, axis=1) > 1)
    reevaluated = 0
    if todo.size:
        reevaluated = _resolve_ties(grid, P, arms, kind, owner, close, rows, todo)
    return rows, reevaluated, approx[np.arange(nq), rows], bounds


class RoundScorer:
    """:func:`refined_rows` for one grid, action table and reward, called round after round
    (the batched SDCB oracle): the lattice, the error bound of every possible smallest atom
    and the pruning decision are worked out once.  Same approximate values, same near-ties,
    same rows and re-evaluation counts as :func:`refined_rows`."""

    def __init__(
        self,
        grid: np.ndarray,
        arms: np.ndarray,
        kind: str,
        prefixes: tuple[np.ndarray, np.ndarray] | None,
    ) -> None:
        self.grid, self.arms, self.kind, self.prefixes = grid, arms, kind, prefixes
        k = arms.shape[1]
        lat, dev, scale, self.prune, extra = _scoring_plan(grid, k, kind)
        # two arms on a lattice whose points are the grid itself: values_dense's prefix path
        # with its table set up once (Q is P, the prefixes are the first arms)
        self._pair = None
        if kind != "max" and k == 2 and lat is not None and prefixes is not None:
            b, h, pos, _ = lat
            L = int(pos[-1]) + 1
            if L <= FFT_LEVELS and L == grid.size:
                self._pair = (
                    prefixes[0][:, 0],
                    prefixes[1],
                    arms[:, 1],
                    _hankel(kind, 2, b, h, L, L),
                )
        # refined_queries' bound of a repetition whose smallest atom in use is grid[g]
        self.bound_of = np.array(
            [error_bound(g, k, kind, dev, scale) + extra for g in grid.tolist()]
        )

    def rows(self, P: np.ndarray, allowed: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """``refined_rows(grid, P, A, arms, kind, prefixes, allowed)``."""
        if self.prune:
            out = refined_queries(self.grid, P, self.arms, self.kind, self.prefixes, None, allowed)
            return out[0], out[1]
        R = P.shape[0]
        bounds = self.bound_of[np.argmax(P.any(axis=1), axis=1)]
        if self._pair is not None:
            first, inv, last, H = self._pair
            approx = ((P[:, first] @ H) @ P.transpose(0, 2, 1))[:, inv, last]
        else:
            approx = values_dense(self.grid, P, self.arms, self.kind, self.prefixes)
        if allowed is not None:
            approx = np.where(allowed, approx, -np.inf)
        rows = np.argmax(approx, axis=1)
        thr = approx.max(axis=1) - 2.0 * bounds
        close = approx >= thr[:, None]
        # without NaN every repetition's best row is close to itself: R close rows in all
        # means no near-ties (the usual round: one count instead of one per repetition)
        if np.count_nonzero(close) == R and not math.isnan(float(thr.sum())):
            return rows, 0
        count = np.count_nonzero(close, axis=1)
        if count.max() <= 1:
            return rows, 0
        todo = np.flatnonzero(count > 1)
        owner = np.arange(R)
        return rows, _resolve_ties(self.grid, P, self.arms, self.kind, owner, close, rows, todo)


def _resolve_ties(
    grid: np.ndarray,
    P: np.ndarray,
    arms: np.ndarray,
    kind: str,
    owner: np.ndarray,
    close: np.ndarray,
    rows: np.ndarray,
    todo: np.ndarray,
) -> int:
    """Queries ``todo`` have several near-ties (``close``): set ``rows`` to their reference
    ``argmax``; returns the number of reference evaluations."""
    k = arms.shape[1]
    # arms with bit-identical laws give actions bit-identical reference values: among the
    # near-ties keep the first action of each law signature (exact, no evaluation needed)
    Pt = P[owner[todo]]  # (todo, d, G)
    if Pt.size * P.shape[1] <= _EQ_TERMS:
        # ids by equal probabilities: the id of an arm is the first arm with its law (the
        # reference reads only the grid and the positive probabilities, so equal rows give
        # equal values; cheaper than the bytes of every row)
        law = np.argmax((Pt[:, :, None, :] == Pt[:, None, :, :]).all(axis=3), axis=2)
    else:
        used = np.unique(owner[todo])
        law = np.zeros((P.shape[0], P.shape[1]), dtype=np.int64)
        law[used] = law_ids(P[used])
        law = law[owner[todo]]
    N = int(law.max()) + 2
    code = None
    if k == 2:
        # two arms, one of them a single atom: the reference's outer sum (or max) and outer
        # product are then one row or one column, the same floats in the same order whichever
        # arm comes first, so (X, Y) and (Y, X) have bit-identical values (the optimistic law
        # of a well-played arm is often the point mass at the top): one unordered signature
        a0, a1 = arms[:, 0], arms[:, 1]
        atom = (Pt > 0).sum(axis=2) == 1  # (todo, d)
        l0, l1 = law[:, a0], law[:, a1]
        code = l0 + l1 * N
        sym = atom[:, a0] | atom[:, a1]
        if sym.any():
            code[sym] = np.minimum(l0, l1)[sym] + np.maximum(l0, l1)[sym] * N
    elif float(N) ** k < 2.0**62:
        # the usual round (SDCB: hundreds of exact ties among actions of arms whose optimistic
        # laws are equal): whether every near-tie has the first one's signature, position by
        # position, from boolean look-ups of the arms; the integer signatures below only for
        # the queries where some do not (the same answer as comparing those integers)
        near = close[todo]
        first = np.argmax(near, axis=1)
        sig = np.take_along_axis(law, arms[first], axis=1)  # (todo, k)
        same = (law == sig[:, :1])[:, arms[:, 0]]
        for j in range(1, k):
            same &= (law == sig[:, j : j + 1])[:, arms[:, j]]
        single = ~(near & ~same).any(axis=1)
        rows[todo[single]] = first[single]
        keep = ~single
        todo, law = todo[keep], law[keep]
        code = law[:, arms[:, 0]]  # (todo, n): one integer per law signature (a bijection)
        for j in range(1, k):
            code = code + law[:, arms[:, j]] * N**j
    if code is not None and k == 2:
        near = close[todo]
        lo = np.where(near, code, _INT_MAX).min(axis=1)
        hi = np.where(near, code, -1).max(axis=1)
        single = lo == hi  # all near-ties share one signature: the first one is the answer
        rows[todo[single]] = np.argmax(near[single], axis=1)
        keep = ~single
        todo, law, code = todo[keep], law[keep], code[keep]
    reevaluated = 0
    for q, r in enumerate(todo.tolist()):
        cand = np.flatnonzero(close[r])
        # the first candidate of each signature, in row order (np.unique(..., axis=0,
        # return_index=True) then sorted, without its cost: a few candidates per query)
        if code is not None:
            keys = code[q, cand].tolist()
        else:
            keys = list(map(tuple, law[q][arms[cand]].tolist()))
        first: dict[object, int] = {}
        for c, key in zip(cand.tolist(), keys):
            first.setdefault(key, c)
        firsts = list(first.values())  # increasing: cand is
        if len(firsts) == 1:
            rows[r] = firsts[0]
            continue
        Pr = P[owner[r]]
        laws: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # exact_laws, for the arms used
        for i in np.unique(arms[firsts]).tolist():
            p = Pr[i]
            laws[i] = (grid[p > 0], p[p > 0])
        vals = [
            expected_aggregate([laws[i][0] for i in a], [laws[i][1] for i in a], kind)
            for a in arms[firsts].tolist()
        ]
        rows[r] = firsts[int(np.argmax(vals))]
        reevaluated += len(firsts)
    return reevaluated


_INT_MAX = np.iinfo(np.int64).max
#: Largest ``(queries) d^2 G`` for which :func:`_resolve_ties` compares the laws directly
#: (cheaper than hashing every row's bytes for a few small laws, e.g. SDCB at d = 5; at
#: d = 20 with 16 queries the comparison costs more than the hashing)
_EQ_TERMS = 4096

#: Lattices with more points than this are scored through :func:`pruned_values`.
PRUNE_LEVELS = 16
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
    owner: np.ndarray | None = None,
) -> np.ndarray:
    """Approximate values (``(n_q, n)``) of the actions that can be within ``2 * bounds`` of
    the best approximate value of each query (laws ``P[owner[q]]``, default one query per
    repetition), ``-inf`` for the others (and for the rows not ``allowed``).

    The :data:`PRUNE_FIRST` actions of highest :func:`upper_bounds` are scored first; their
    best value ``v`` is within ``bound`` of a true value, and an action with
    ``upper bound < v - 3 bound - slack`` has an approximate value below
    ``v - 2 bound <= best - 2 bound`` (approximate <= true + bound <= upper bound + bound), so
    it is neither the best nor a near-tie.  When many actions remain (never-played arms, all
    at the top, tie), one action per multiset of arm laws is scored."""
    R, n = P.shape[0], arms.shape[0]
    owner = np.arange(R) if owner is None else owner
    nq = owner.size
    ub = upper_bounds(grid, P, arms)[owner]
    if allowed is not None:
        ub = np.where(allowed, ub, -np.inf)
    F, Gh = _spectra(grid, P, arms.shape[1], kind)
    approx = np.full((nq, n), -np.inf)
    k0 = min(PRUNE_FIRST, n)
    first = np.argpartition(-ub, k0 - 1, axis=1)[:, :k0]
    qs = np.repeat(np.arange(nq), k0)
    acts = first.ravel()
    ok = np.isfinite(ub[qs, acts])
    qs, acts = qs[ok], acts[ok]
    approx[qs, acts] = _values_at(F, Gh, owner[qs], arms[acts])
    floor = approx.max(axis=1) - 3.0 * bounds - PRUNE_SLACK
    cand = (ub >= floor[:, None]) & np.isneginf(approx) & np.isfinite(ub)
    qs, acts = np.nonzero(cand)
    if qs.size <= _DEDUP_ABOVE * nq:
        if qs.size:
            approx[qs, acts] = _values_at(F, Gh, owner[qs], arms[acts])
        return approx
    # many candidates (never-played arms share one law, so many actions tie): score one
    # action per multiset of laws (the same value up to rounding, far below the bound)
    law = law_ids(P)
    sig = np.sort(law[owner[qs][:, None], arms[acts]], axis=1)
    base = int(law.max()) + 1
    k = arms.shape[1]
    if float(base) ** k * nq < 2.0**62:  # one integer per (query, multiset of laws)
        key = qs * base**k + sig @ (base ** np.arange(k, dtype=np.int64))
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    else:
        key = np.concatenate([qs[:, None], sig], axis=1)
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    vals = _values_at(F, Gh, owner[qs[first]], arms[acts[first]])
    approx[qs, acts] = vals[np.asarray(inverse).ravel()]
    return approx


#: Candidates per repetition above which actions are grouped by their arms' laws.
_DEDUP_ABOVE = 16


#: Rows (at least) and levels (at most) for which :func:`law_ids` sorts the rows' bytes with
#: ``np.unique`` instead of hashing them (measured crossover: ~50 rows of a few levels).
_VOID_ROWS = 64
_VOID_LEVELS = 32


def law_ids(P: np.ndarray) -> np.ndarray:
    """``(R, d)`` ids, equal for bit-identical laws (rows of ``P``, any repetitions): the
    inverse of ``np.unique`` over the rows' bytes (ids in the order of the sorted bytes),
    computed with a set of ``bytes`` (a few dozen rows per call, every round of SDCB), or
    for many short rows (:data:`_VOID_ROWS`, :data:`_VOID_LEVELS`) with ``np.unique`` over
    the rows viewed as bytes, whose sort is that same byte order (2x faster at 320 rows of 6
    levels, SDCB's 16 repetitions at d = 20; 3.6x slower for rows of 246 levels)."""
    R, d, G = P.shape
    flat = np.ascontiguousarray(P).reshape(-1, G)
    if flat.shape[0] >= _VOID_ROWS and G <= _VOID_LEVELS:
        rows = flat.view(np.dtype((np.void, flat.itemsize * G))).ravel()
        return np.asarray(np.unique(rows, return_inverse=True)[1], dtype=np.int64).reshape(R, d)
    keys = [row.tobytes() for row in flat]
    index = {key: i for i, key in enumerate(sorted(set(keys)))}
    return np.array([index[key] for key in keys], dtype=np.int64).reshape(R, d)

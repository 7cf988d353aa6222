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
  with the reference function exactly as ``ExpectedRewardIndex.argmax_rows`` does.
"""

from __future__ import annotations

import math

import numpy as np

from ..rewards.aggregate import FFT_LEVELS, error_bound, fft_error, lattice, values_dense
from ..rewards.laws import expected_aggregate

__all__ = ["exact_laws", "optimistic_dense", "refined_rows"]


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
    rows ``(R,)`` and the number of actions re-evaluated with the reference function."""
    approx = values_dense(grid, P, arms, kind, prefixes)
    if allowed is not None:
        approx = np.where(allowed, approx, -np.inf)
    _, d, G = P.shape
    k = arms.shape[1]
    lat = lattice(grid)
    dev = 0.0 if lat is None else lat[3]
    scale = float(np.max(np.abs(grid))) * max(k, 1)
    extra = 0.0
    if kind != "max" and lat is not None and int(lat[2][-1]) + 1 > FFT_LEVELS and k > 1:
        extra = fft_error(int(lat[2][-1]) + 1, k, math.sqrt(abs(scale)))
    best = approx.max(axis=1)
    gmin = grid[np.argmax(P.any(axis=1), axis=1)]  # smallest atom in use, per repetition
    bound_of = {g: error_bound(g, k, kind, dev, scale) + extra for g in set(gmin.tolist())}
    bounds = np.array([bound_of[g] for g in gmin.tolist()])
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

"""Algorithm 8's interval index of Beta outcomes without the inverse CDF (issue 9).

The batched Disc-GR engines (:mod:`.disc_batched`, :mod:`.disc_sroq_batched`) need, for each
outcome of :class:`~..rewards.general.ContinuousRewards`, only the interval ``I_j`` of
Algorithm 8 it falls in, not the outcome itself.  :class:`BetaIntervals` finds ``j`` by
comparing the outcome's uniform with the Beta CDF at the interval ends (a binary search),
bit for bit the index of the inverse-CDF outcome.  A lower module: it imports no policy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import betainc

__all__ = ["BetaIntervals", "interval_index"]


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
    CDF itself.  The same index as the inverse-CDF path, bit for bit, at the cost of one
    look-up in a table of ``u``'s cells per outcome (a binary search and one comparison for
    the few in a cell that holds a threshold; the inverse CDF costs ~2 us per outcome).

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
        self._lo_padded = np.concatenate([self.lo, np.full((self.lo.shape[0], 1), np.inf)], 1)
        self.exact_calls = 0
        self._cells, self._table = self._cell_table()

    def _cell_table(self) -> tuple[int, np.ndarray]:
        """Per arm and cell ``[c / G, (c + 1) / G)`` of ``(0, 1)`` (``G`` a power of 2, so
        that ``floor(u G)`` is exact), the index ``j`` every ``u`` of the cell gets, or 0 where
        the cell holds a threshold ``hi_k`` or reaches a band (those ``u`` take the binary
        search).  ``j = 1 + #{k : hi_k < u}`` is the same for every ``u`` of the cell when
        ``#{k : hi_k < c / G} = #{k : hi_k < (c + 1) / G}``, and no ``u`` of it is in a band
        when the next ``lo`` is at least ``(c + 1) / G``: then the entry is that ``j``, the
        value :meth:`_search` gives, bit for bit.  ``G`` is about ``32 (s - 1)`` (a few
        percent of the cells are 0), at most ``2^16`` and ``2^23`` entries in all."""
        d = self.lo.shape[0]
        cells = 1 << max(4, min(16, (32 * max(self.s - 1, 1) - 1).bit_length()))
        while d * cells > 1 << 23 and cells > 16:
            cells //= 2
        edges = np.arange(cells + 1) / cells  # exact (a power of 2)
        table = np.zeros((d, cells), dtype=np.int32)
        for i in range(d):
            below = np.searchsorted(self.hi[i], edges, side="left")  # #{k : hi_k < edge}
            lo_next = self._lo_padded[i, below[:-1]]
            sure = (below[:-1] == below[1:]) & (lo_next >= edges[1:])
            table[i] = np.where(sure, below[:-1] + 1, 0)
        return cells, table.ravel()

    def index(self, arms: np.ndarray, u: np.ndarray) -> np.ndarray:
        """``interval_index(quantile(arms, u), s)`` (same shape as ``u``): one look-up in the
        cell table (:meth:`_cell_table`) per outcome, the binary search (:meth:`_search`)
        for the few in a cell the table leaves open."""
        arms = np.asarray(arms, dtype=np.int64).ravel()
        u = np.asarray(u, dtype=float)
        shape, u = u.shape, u.ravel()
        if u.size == 0 or not (u.min() >= 0.0 and u.max() < 1.0):  # NaN, or outside [0, 1)
            return self._search(arms, u).reshape(shape)
        cell = np.multiply(u, self._cells).astype(np.int64)  # floor(u G), exact
        cell += arms * self._cells
        out = self._table.take(cell).astype(np.int64)
        open_ = np.flatnonzero(out == 0)
        if open_.size:
            out[open_] = self._search(arms[open_], u[open_])
        return out.reshape(shape)

    def _search(self, arms: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The index of each outcome by a binary search over its arm's thresholds (1-D)."""
        out = np.empty(u.size, dtype=np.int64)
        if arms.size < 2 or bool(np.all(arms[1:] >= arms[:-1])):
            order = np.arange(arms.size)  # already grouped by arm (the SROQ engine's order)
        else:
            order = np.argsort(arms, kind="stable")
        bounds = np.searchsorted(arms[order], np.arange(self.lo.shape[0] + 1))
        for i in np.flatnonzero(np.diff(bounds)):
            sel = order[bounds[i] : bounds[i + 1]]
            uu = u[sel]
            below = np.searchsorted(self.hi[i], uu, side="left")  # #{k : hi_k < u}
            # lo_k <= hi_k < u for every k < below (lo, hi non-decreasing): u is in no band
            # iff the next lo is above it (or there is none)
            lo_next = self._lo_padded[i, below]
            j = below + 1
            unsure = np.flatnonzero(lo_next <= uu)
            if unsure.size:
                self.exact_calls += unsure.size
                y = self.quantile(np.full(unsure.size, i), uu[unsure])
                j[unsure] = interval_index(y, self.s)
            out[sel] = j
        return out

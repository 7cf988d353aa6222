"""Helpers shared by the covariance (Section 4) and general-reward (Section 5) policies.

* :func:`epoch_ends` -- the SROQ time grid of Algorithms 2, 4 and 7 as epoch ends;
* :class:`RegretCounter` -- exact, chunking-invariant cumulative pseudo-regret of any reward
  model (integer play counts per distinct action times its gap).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...base import validate_int
from .sroq import default_num_epochs, sroq_time_grid

__all__ = ["RegretCounter", "epoch_ends"]


def epoch_ends(T: int, M: int | None = None, kind: str | None = None) -> np.ndarray:
    """Last round of each epoch of the SROQ time grid over rounds ``1..T``.

    Delegates to ``sroq_time_grid(T, M, kind)`` and ``default_num_epochs(T)`` of :mod:`.sroq`
    so that every scheduled algorithm (Algorithms 2, 4, 7) shares one grid; epoch ``tau``
    covers ``g_{tau-1} .. g_tau - 1`` and the last one ends at ``T``.

    Returns
    -------
    ndarray of int64
        Strictly increasing epoch ends, the last equal to ``T``.
    """
    T = validate_int("horizon", T, 1)
    M = default_num_epochs(T) if M is None else validate_int("M (number of epochs)", M, 1)
    if M > T:
        M = T
    g = sroq_time_grid(T, M) if kind is None else sroq_time_grid(T, M, kind)
    return np.r_[np.asarray(g[1:M], dtype=np.int64) - 1, T].astype(np.int64)


class RegretCounter:
    """Exact, chunking-invariant cumulative pseudo-regret: integer play counts per distinct
    action times its gap, summed in first-play order."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self._index: dict[bytes, int] = {}
        self._counts: list[int] = []
        self._gaps: list[float] = []

    def add(self, action: np.ndarray, count: int) -> None:
        """Record ``count`` more rounds of ``action``."""
        key = np.packbits(np.asarray(action, dtype=bool)).tobytes()
        k = self._index.get(key)
        if k is None:
            k = self._index[key] = len(self._counts)
            self._counts.append(0)
            self._gaps.append(float(self.env.gap(np.asarray(action, dtype=bool))))
        self._counts[k] += int(count)

    def add_rows(self, actions: np.ndarray) -> None:
        """Record one round of each row of ``actions``."""
        actions = np.asarray(actions, dtype=bool)
        if actions.shape[0] <= 16:  # a few rows: one dict look-up each beats a unique
            for a in actions:
                self.add(a, 1)
            return
        # one integer (or byte string) per row, then one 1-D unique instead of a row-wise one
        packed = np.packbits(actions, axis=1)
        if packed.shape[1] <= 8:
            codes = np.zeros((packed.shape[0], 8), dtype=np.uint8)
            codes[:, : packed.shape[1]] = packed
            keys = codes.view(np.uint64).ravel()
        else:
            keys = np.ascontiguousarray(packed).view(f"V{packed.shape[1]}").ravel()
        _, first, counts = np.unique(keys, return_index=True, return_counts=True)
        for i, c in zip(first, counts):
            self.add(actions[i], int(c))

    @property
    def value(self) -> float:
        """Cumulative pseudo-regret."""
        # fsum is correctly rounded, hence independent of the order actions were first seen
        c = np.asarray(self._counts, dtype=float)
        return math.fsum((c * np.asarray(self._gaps, dtype=float)).tolist())

"""Action families of the combinatorial semi-bandit (Section 2) and their exact oracles.

An action is a boolean vector of length ``d`` (the base arms it activates); ``m`` is the largest
action size.  Every family answers the queries the algorithms make:

* :meth:`ActionFamily.argmax_linear`: ``argmax_a sum_{i in a} w_i`` (UCB/LCB indices),
* :meth:`ActionFamily.argmax_set_function`: ``argmax_a f(a)`` for an arbitrary set function,
  (general rewards, Algorithms 6-7),

both optionally restricted to actions that contain given arms (``include``: the representative
action of arm ``i`` in SROQ, Algorithm 2 line 6; pairs in SROQ-C) and avoid eliminated arms
(``exclude``: ``A_tau`` in Algorithm 2 line 8).  They return ``None`` when no action satisfies
the restriction.  :meth:`ActionFamily.enumerate` lists all actions (brute-force reference).
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

import numpy as np

from ..base import validate_int

__all__ = ["ActionFamily", "MSets", "restriction_masks"]

#: Enumeration refuses families with more actions than this (brute force is for tests).
MAX_ENUMERATION = 200_000


def restriction_masks(
    d: int, include: Sequence[int] | np.ndarray = (), exclude: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks ``(must, banned)`` of length ``d`` from ``include`` / ``exclude``."""
    must = np.zeros(d, dtype=bool)
    must[np.asarray(include, dtype=np.int64)] = True
    banned = np.zeros(d, dtype=bool) if exclude is None else np.asarray(exclude, dtype=bool)
    if banned.shape != (d,):
        raise ValueError(f"exclude must be a boolean mask of length {d}")
    return must, banned


class ActionFamily(ABC):
    """A set ``A`` of binary actions over ``d`` base arms with exact oracles.

    Subclasses implement :meth:`argmax_linear` (exactly) and :meth:`enumerate`.  The default
    :meth:`argmax_set_function` enumerates, which is exact for any set function.
    """

    #: Short name used by the CLI and dashboard (``m-sets``, ``paths`` ...).
    key: str = ""

    def __init__(self, d: int, m: int) -> None:
        self.d = validate_int("d", d, 1)
        self.m = validate_int("m", m, 1)
        if self.m > self.d:
            raise ValueError(f"m must be at most d (m={self.m}, d={self.d})")
        self._enum: np.ndarray | None = None

    @abstractmethod
    def argmax_linear(
        self,
        scores: np.ndarray,
        include: Sequence[int] | np.ndarray = (),
        exclude: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """Exact ``argmax_a <a, scores>`` over feasible actions containing ``include`` and no
        arm of ``exclude``; ``None`` if there is none."""

    @abstractmethod
    def _enumerate(self) -> np.ndarray:
        """All actions, shape ``(n_actions, d)``, bool."""

    def enumerate(self) -> np.ndarray:
        """All actions as a ``(n_actions, d)`` boolean array (cached; small families only)."""
        if self._enum is None:
            self._enum = self._enumerate()
        return self._enum

    def feasible(
        self, include: Sequence[int] | np.ndarray = (), exclude: np.ndarray | None = None
    ) -> np.ndarray:
        """Enumerated actions satisfying the restriction."""
        A = self.enumerate()
        must, banned = restriction_masks(self.d, include, exclude)
        ok = np.all(A[:, must], axis=1) & ~np.any(A[:, banned], axis=1)
        return A[ok]

    def argmax_set_function(
        self,
        f: Callable[[np.ndarray], float],
        include: Sequence[int] | np.ndarray = (),
        exclude: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """Exact ``argmax_a f(a)`` by enumeration (ties: first in enumeration order)."""
        A = self.feasible(include, exclude)
        if len(A) == 0:
            return None
        values = np.array([f(a) for a in A])
        return A[int(np.argmax(values))].copy()

    def argmax_linear_batch(self, scores: np.ndarray) -> np.ndarray:
        """Row-wise :meth:`argmax_linear` for a ``(R, d)`` score matrix (no restriction)."""
        return np.stack([self.argmax_linear(s) for s in scores])

    def brute_force_linear(
        self,
        scores: np.ndarray,
        include: Sequence[int] | np.ndarray = (),
        exclude: np.ndarray | None = None,
    ) -> float | None:
        """Best linear value by enumeration (reference for tests)."""
        A = self.feasible(include, exclude)
        if len(A) == 0:
            return None
        return float(np.max(A.astype(float) @ np.asarray(scores, dtype=float)))

    def describe(self) -> str:
        """One-line human description."""
        return f"{self.key} (d={self.d}, m={self.m})"


class MSets(ActionFamily):
    """All subsets of exactly ``m`` of the ``d`` base arms; the oracle is top-``m``.

    With non-negative scores "exactly m" and "at most m" coincide; UCB indices can be
    negative only for LCBs, where the paper's ``max_a r^LCB(a)`` is over ``A``, i.e. size-m sets.
    """

    key = "m-sets"

    def argmax_linear(self, scores, include=(), exclude=None):
        s = np.asarray(scores, dtype=float)
        must, banned = restriction_masks(self.d, include, exclude)
        if np.any(must & banned) or must.sum() > self.m or (~banned).sum() < self.m:
            return None
        free = ~must & ~banned
        k = self.m - int(must.sum())
        a = must.copy()
        if k > 0:
            idx = np.flatnonzero(free)
            top = idx[np.argsort(-s[idx], kind="stable")[:k]]
            a[top] = True
        return a

    def argmax_linear_batch(self, scores):
        s = np.asarray(scores, dtype=float)
        R = s.shape[0]
        a = np.zeros(s.shape, dtype=bool)
        if self.m == self.d:
            a[:] = True
            return a
        top = np.argpartition(-s, self.m - 1, axis=1)[:, : self.m]
        a[np.arange(R)[:, None], top] = True
        return a

    def _enumerate(self):
        n_actions = 1
        for j in range(self.m):
            n_actions = n_actions * (self.d - j) // (j + 1)
        if n_actions > MAX_ENUMERATION:
            raise ValueError(f"{self.describe()} has {n_actions} actions; too many to enumerate")
        A = np.zeros((n_actions, self.d), dtype=bool)
        for row, comb in enumerate(itertools.combinations(range(self.d), self.m)):
            A[row, list(comb)] = True
        return A

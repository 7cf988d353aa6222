"""Per-arm empirical outcome laws of the general-reward algorithms (Section 5), with the
optimistic (``D_under``, Eq. (10)) and pessimistic (``D_over``, Eq. (11)) laws built from them,
and Algorithm 8's outcome map (:func:`paper_intervals`, :func:`discretize`).

Statistics only (no oracle, no engine): the textbook engines and the fast ones share them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["EmpiricalDistributions", "discretize", "number", "paper_intervals"]


def number(name: str, value: Any, low: float, allow_low: bool) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = float("nan")
    if isinstance(value, bool) or not math.isfinite(v) or v < low or (v == low and not allow_low):
        rel = ">=" if allow_low else ">"
        raise ValueError(f"{name} must be a finite number {rel} {low}, got {value!r}")
    return v


def paper_intervals(m: int, T: int, lipschitz: float = 1.0) -> int:
    """Number of intervals of Algorithm 8, line 1: ``s = ceil(C sqrt(m T))``."""
    return max(1, math.ceil(lipschitz * math.sqrt(m * T)))


def discretize(y: np.ndarray, s: int) -> np.ndarray:
    """Algorithm 8, lines 2-8: the outcome in ``I_j`` (``I_1 = [0, 1/s]``,
    ``I_j = ((j-1)/s, j/s]``) is treated as ``j / s``.  Outcomes are clipped to [0, 1] first."""
    y = np.clip(np.asarray(y, dtype=float), 0.0, 1.0)
    j = np.maximum(np.ceil(y * s - 1e-9), 1.0)
    return j / s


class EmpiricalDistributions:
    """Per-arm empirical outcome distributions (distinct values and integer counts).

    Counts are integers and values are kept sorted, so the statistics after a set of rounds do
    not depend on how the rounds were chunked.  The (compressed) CDF of each arm is cached
    until the arm is observed again, so building the shifted distributions every round costs
    ``O(atoms)`` per arm.  Compressing (rounding values up to a grid) and then shifting mass to
    the top gives the same distribution as shifting and then compressing, because rounding is
    monotone; likewise for rounding down and shifting mass to the bottom.
    """

    def __init__(self, d: int) -> None:
        self.d = d
        self.values: list[np.ndarray] = [np.zeros(0) for _ in range(d)]
        self.counts: list[np.ndarray] = [np.zeros(0, dtype=np.int64) for _ in range(d)]
        self.n = np.zeros(d, dtype=np.int64)
        self.lo = 0.0
        self.hi = 1.0
        self._cache: dict[tuple[int, bool], tuple[float, float, np.ndarray, np.ndarray]] = {}

    def add(self, arm: int, y: np.ndarray) -> None:
        """Add observations ``y`` (1-D) of one arm."""
        if y.size == 0:
            return
        u, c = np.unique(y, return_counts=True)
        if self.values[arm].size:
            v = np.concatenate([self.values[arm], u])
            w = np.concatenate([self.counts[arm], c])
            u, inv = np.unique(v, return_inverse=True)
            c = np.bincount(inv, weights=w, minlength=u.size).astype(np.int64)
        self.values[arm], self.counts[arm] = u, c
        self.n[arm] += y.size
        self.lo = min(self.lo, float(u[0]))
        self.hi = max(self.hi, float(u[-1]))
        for up in (True, False):
            self._cache.pop((arm, up), None)

    def _base(self, arm: int, up: bool, max_atoms: int) -> tuple[np.ndarray, np.ndarray]:
        """Compressed support (rounded up or down) and empirical CDF of one arm."""
        hit = self._cache.get((arm, up))
        if hit is not None and hit[0] == self.lo and hit[1] == self.hi:
            return hit[2], hit[3]
        v, c = self.values[arm], self.counts[arm].astype(float)
        if v.size > max_atoms:
            k = max_atoms - 1
            x = (v - self.lo) / (self.hi - self.lo) * k
            j = np.ceil(x - 1e-12) if up else np.floor(x + 1e-12)
            grid, inv = np.unique(np.clip(j, 0, k), return_inverse=True)
            v = self.lo + grid / k * (self.hi - self.lo)
            c = np.bincount(inv, weights=c)
        F = np.cumsum(c) / self.n[arm]
        self._cache[(arm, up)] = (self.lo, self.hi, v, F)
        return v, F

    def optimistic(self, arm: int, rho: float, max_atoms: int) -> tuple[np.ndarray, np.ndarray]:
        """``D_under``: CDF ``max(F_hat - rho, 0)`` below the top of the support, 1 at it."""
        hi = self.hi
        if self.n[arm] == 0 or rho >= 1.0:
            return np.array([hi]), np.array([1.0])
        v, F = self._base(arm, True, max_atoms)
        below = v < hi
        Fu = np.maximum(F[below] - rho, 0.0)
        vals = np.concatenate([v[below], [hi]])
        probs = np.diff(np.concatenate([[0.0], Fu, [1.0]]))
        keep = probs > 0
        return vals[keep], probs[keep]

    def pessimistic(self, arm: int, rho: float, max_atoms: int) -> tuple[np.ndarray, np.ndarray]:
        """``D_over``: CDF ``min(F_hat + rho, 1)`` below the top of the support, 1 at it."""
        lo, hi = self.lo, self.hi
        if self.n[arm] == 0 or rho >= 1.0:
            return np.array([lo]), np.array([1.0])
        v, F = self._base(arm, False, max_atoms)
        if v[0] > lo:
            v, F = np.concatenate([[lo], v]), np.concatenate([[0.0], F])
        Fo = np.where(v < hi, np.minimum(F + rho, 1.0), 1.0)
        Fo[-1] = 1.0
        probs = np.diff(np.concatenate([[0.0], Fo]))
        keep = probs > 0
        return v[keep], probs[keep]

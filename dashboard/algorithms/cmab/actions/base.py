"""The action-family contract (:class:`ActionFamily`) and the score / restriction checks
every family's oracle shares (see the package docstring, :mod:`.actions`).
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from ...base import validate_int
from ...components import Declared

__all__ = ["MAX_ENUMERATION", "ActionFamily", "restriction_masks"]

#: Enumeration refuses families with more actions than this (brute force is for tests).
MAX_ENUMERATION = 200_000


def restriction_masks(
    d: int, include: Sequence[int] | np.ndarray = (), exclude: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks ``(must, banned)`` of length ``d`` from ``include`` / ``exclude``.

    Parameters
    ----------
    d : int
        Number of base arms.
    include : sequence of int
        Arms every returned action must contain (indices in ``0 .. d-1``).
    exclude : array of bool, shape (d,), optional
        Arms no returned action may contain.

    Raises
    ------
    ValueError
        If an index of ``include`` is outside ``0 .. d-1`` or ``exclude`` is not a length-``d``
        mask.
    """
    must = np.zeros(d, dtype=bool)
    inc = np.asarray(include, dtype=np.int64).ravel()
    if inc.size:
        if inc.min() < 0 or inc.max() >= d:
            raise ValueError(f"include must list arms between 0 and {d - 1}, got {inc.tolist()}")
        must[inc] = True
    if exclude is None:
        banned = np.zeros(d, dtype=bool)
    else:
        banned = np.asarray(exclude)
        if banned.shape != (d,):
            raise ValueError(
                f"exclude must be a boolean mask of length {d}, got shape {banned.shape}"
            )
        banned = banned.astype(bool)
    return must, banned


def _check_scores(scores: Any, d: int) -> np.ndarray:
    """``scores`` as a float vector of length ``d`` without NaN (ValueError otherwise)."""
    s = np.asarray(scores, dtype=float)
    if s.shape != (d,):
        raise ValueError(f"scores must be a vector of length d={d}, got shape {s.shape}")
    if np.isnan(s).any():
        raise ValueError(f"scores must not contain NaN (arms {np.flatnonzero(np.isnan(s))})")
    return s


def _check_score_matrix(scores: Any, d: int) -> np.ndarray:
    """``scores`` as a float ``(R, d)`` matrix without NaN (the batch twin of
    :func:`_check_scores`; ValueError otherwise)."""
    S = np.asarray(scores, dtype=float)
    if S.ndim != 2 or S.shape[1] != d:
        raise ValueError(f"scores must have shape (R, {d}), got {S.shape}")
    if np.isnan(S).any():
        raise ValueError("scores must not contain NaN")
    return S


def _finite_scores(s: np.ndarray, m: int) -> np.ndarray:
    """Replace ``+-inf`` by ``+-M`` with ``M`` larger than any ``m``-sum of finite scores, so
    that sums rank actions lexicographically (infinite arms first, then finite part)."""
    inf = np.isinf(s)
    if not inf.any():
        return s
    finite = s[~inf]
    big = 2.0 * (m + 1) * (float(np.abs(finite).max()) + 1.0 if finite.size else 1.0)
    return np.where(inf, np.sign(s) * big, s)


def _as_action(a: Any, d: int) -> np.ndarray:
    """Validate a candidate action / partial action as a boolean vector of length ``d``."""
    arr = np.asarray(a)
    if arr.shape != (d,):
        raise ValueError(f"an action must be a 0/1 vector of length d={d}, got shape {arr.shape}")
    return arr.astype(bool)


class ActionFamily(Declared, ABC):
    """A set ``A`` of binary actions over ``d`` base arms with exact oracles.

    Subclasses implement :meth:`argmax_linear` (exactly, honouring ``include``/``exclude``) and
    :meth:`_enumerate`.  The default :meth:`argmax_set_function` enumerates, which is exact for
    any set function.  The feasibility helpers used by the greedy approximate oracle have
    generic defaults built on the exact restricted oracle; families override them when they
    can do better.  Its ``declaration`` (name, construction, reference) sets ``key``.
    """

    @classmethod
    def build(cls, d: int | None, m: int | None, seed: int = 0, actions: Any = None) -> Any:
        """Build from the problem spec's fields (:func:`make_family`); families whose
        constructor takes a ``seed`` receive it."""
        if "seed" in inspect.signature(cls.__init__).parameters:
            return cls(d, m, seed=seed)  # type: ignore[call-arg]
        return cls(d, m)  # type: ignore[call-arg]

    #: Approximation factor of the greedy oracle on this family for non-negative scores
    #: (``None``: no constant guarantee); see ``approx.alpha_guarantee``.
    greedy_alpha: ClassVar[float | None] = None

    def __init__(self, d: int, m: int) -> None:
        self.d = validate_int("d", d, 1)
        self.m = validate_int("m", m, 1)
        if self.m > self.d:
            raise ValueError(f"m must be at most d (m={self.m}, d={self.d})")
        self._enum: np.ndarray | None = None

    # ------------------------------------------------------------------ exact oracles
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

    def n_actions(self) -> int:
        """``|A|``, the number of actions (by enumeration unless a subclass counts faster)."""
        return len(self.enumerate())

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
        """Exact ``argmax_a f(a)`` by enumeration (ties: first in enumeration order).

        A set function with an ``argmax_rows(A, mask) -> row`` method (e.g. the vectorised
        general-reward index, :class:`~.rewards.aggregate.ExpectedRewardIndex`) scores all
        rows at once and must return the feasible (``mask``) row this loop would return."""
        fast = getattr(f, "argmax_rows", None)
        if fast is not None:
            A = self.enumerate()
            must, banned = restriction_masks(self.d, include, exclude)
            ok = np.all(A[:, must], axis=1) & ~np.any(A[:, banned], axis=1)
            row = fast(A, ok) if ok.any() else None
            return None if row is None else A[int(row)].copy()
        A = self.feasible(include, exclude)
        if len(A) == 0:
            return None
        values = np.array([f(a) for a in A])
        return A[int(np.argmax(values))].copy()

    def argmax_linear_batch(self, scores: np.ndarray) -> np.ndarray:
        """Row-wise :meth:`argmax_linear` for a ``(R, d)`` score matrix (no restriction)."""
        S = _check_score_matrix(scores, self.d)
        return np.stack([self.argmax_linear(s) for s in S])

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

    # ------------------------------------------------------------------ feasibility queries
    def is_action(self, a: np.ndarray) -> bool:
        """Whether the boolean vector ``a`` is an action of the family (default: enumeration)."""
        a = _as_action(a, self.d)
        return bool(np.any(np.all(self.enumerate() == a, axis=1)))

    def is_extendable(
        self,
        partial: np.ndarray,
        include: Sequence[int] | np.ndarray = (),
        exclude: np.ndarray | None = None,
    ) -> bool:
        """Whether some action contains ``partial`` and ``include`` and avoids ``exclude``.

        Default: ask the exact restricted oracle with zero scores (exact for every family
        whose :meth:`argmax_linear` honours ``include``).
        """
        partial = _as_action(partial, self.d)
        must, banned = restriction_masks(self.d, include, exclude)
        req = np.flatnonzero(partial | must)
        return self.argmax_linear(np.zeros(self.d), req, banned) is not None

    def can_extend(
        self,
        partial: np.ndarray,
        arm: int,
        include: Sequence[int] | np.ndarray = (),
        exclude: np.ndarray | None = None,
    ) -> bool:
        """Whether ``partial + {arm}`` is contained in some feasible action."""
        arm = validate_int("arm", arm, 0, self.d - 1)
        grown = _as_action(partial, self.d).copy()
        grown[arm] = True
        return self.is_extendable(grown, include, exclude)

    def extendable_arms(
        self,
        partial: np.ndarray,
        include: Sequence[int] | np.ndarray = (),
        exclude: np.ndarray | None = None,
    ) -> np.ndarray:
        """Mask of the arms ``i`` not in ``partial`` such that ``partial + {i}`` is contained
        in a feasible action (default: one :meth:`can_extend` per candidate arm)."""
        partial = _as_action(partial, self.d)
        _, banned = restriction_masks(self.d, include, exclude)
        out = np.zeros(self.d, dtype=bool)
        for i in np.flatnonzero(~partial & ~banned):
            out[i] = self.can_extend(partial, int(i), include, banned)
        return out

    def describe(self) -> str:
        """One-line human description."""
        return f"{self.key} (d={self.d}, m={self.m})"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.describe()}>"

"""``explicit``: a user-supplied list of 0/1 actions; the oracle enumerates."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...declare import ComponentDeclaration
from .base import (
    ActionFamily,
    _as_action,
    _check_score_matrix,
    _check_scores,
    _finite_scores,
    restriction_masks,
)

__all__ = ["ExplicitActions"]


class ExplicitActions(ActionFamily):
    """A user-supplied list of binary actions (any ``A subset {0,1}^d``, Section 2).

    Parameters
    ----------
    actions : array-like of shape (n, d)
        Rows are actions; entries must be 0/1 (or bool).  Duplicate rows are removed (first
        occurrence kept); ``d`` is the number of columns and ``m`` the largest row size.

    The oracle enumerates (one matrix-vector product), which is exactly the "cost proportional
    to ``|A|``" the paper's oracle abstraction hides.  The greedy oracle has no guarantee here.

    Raises
    ------
    ValueError
        If the list is empty, ragged, not 2-D, has non-binary / NaN entries or an all-zero row
        (the message names the offending row and column).
    """

    declaration = ComponentDeclaration(
        "actions",
        "explicit",
        doc="a user-supplied list of 0/1 actions (enumeration oracle)",
        reference="Section 2 (any A subset {0,1}^d)",
        fields=("explicit_actions",),
    )
    greedy_alpha = None

    @classmethod
    def build(cls, d: int | None, m: int | None, seed: int = 0, actions: Any = None) -> Any:
        """The family of ``actions``; ``d`` / ``m`` must match them when given."""
        if actions is None:
            raise ValueError("the explicit action family needs actions=[[0/1, ...], ...]")
        fam = cls(actions)
        if d is not None and int(d) != fam.d:
            raise ValueError(f"d={d} does not match the explicit actions' {fam.d} columns")
        if m is not None and int(m) != fam.m:
            raise ValueError(
                f"m={m} does not match the largest explicit action size {fam.m}; "
                "pass m=None or the largest row size"
            )
        return fam

    def __init__(self, actions: Any) -> None:
        A = self._validate(actions)
        _, first = np.unique(A, axis=0, return_index=True)
        A = A[np.sort(first)]
        super().__init__(A.shape[1], int(A.sum(axis=1).max()))
        self._enum = A
        self._Af = A.astype(float)
        self._keys = {row.tobytes(): r for r, row in enumerate(A)}

    @staticmethod
    def _validate(actions: Any) -> np.ndarray:
        if actions is None:
            raise ValueError("explicit actions: give a non-empty list of 0/1 rows, got None")
        if isinstance(actions, np.ndarray):
            rows = list(actions) if actions.ndim >= 1 else [actions]
            if actions.ndim != 2:
                raise ValueError(
                    f"explicit actions must be a 2-D array (n_actions, d), got {actions.ndim}-D"
                )
        else:
            try:
                rows = list(actions)
            except TypeError:
                raise ValueError(
                    f"explicit actions must be a list of 0/1 rows, got {type(actions).__name__}"
                ) from None
        if len(rows) == 0:
            raise ValueError("explicit actions: the list is empty; give at least one action")
        d = None
        for r, row in enumerate(rows):
            try:
                vals = np.asarray(row, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(f"explicit actions: row {r} is not a list of numbers") from None
            if vals.ndim != 1:
                raise ValueError(f"explicit actions: row {r} must be a flat list of 0/1 entries")
            if d is None:
                d = len(vals)
                if d == 0:
                    raise ValueError("explicit actions: row 0 is empty; rows need d >= 1 entries")
            elif len(vals) != d:
                raise ValueError(
                    f"explicit actions: row {r} has {len(vals)} entries but row 0 has {d}; "
                    "all rows must have the same length d"
                )
            bad = np.flatnonzero(~((vals == 0) | (vals == 1)))
            if bad.size:
                c = int(bad[0])
                raise ValueError(
                    f"explicit actions: entry (row {r}, column {c}) is {vals[c]:g}; "
                    "only 0/1 (or True/False) are allowed"
                )
            if not vals.any():
                raise ValueError(
                    f"explicit actions: row {r} is all zeros; every action must activate an arm"
                )
        return np.array([np.asarray(row, dtype=float) for row in rows]).astype(bool)

    def _enumerate(self):
        return self._enum  # pragma: no cover - set in __init__

    def n_actions(self) -> int:
        return len(self._enum)

    def _values(self, s: np.ndarray) -> np.ndarray:
        return self._Af @ _finite_scores(s, self.m)

    def argmax_linear(self, scores, include=(), exclude=None):
        s = _check_scores(scores, self.d)
        must, banned = restriction_masks(self.d, include, exclude)
        A = self._enum
        ok = np.all(A[:, must], axis=1) & ~np.any(A[:, banned], axis=1)
        if not ok.any():
            return None
        v = np.where(ok, self._values(s), -np.inf)
        return A[int(np.argmax(v))].copy()

    def argmax_linear_batch(self, scores):
        S = _check_score_matrix(scores, self.d)
        if np.isinf(S).any():
            S = np.stack([_finite_scores(row, self.m) for row in S])
        return self._enum[np.argmax(S @ self._Af.T, axis=1)].copy()

    def is_action(self, a):
        return _as_action(a, self.d).tobytes() in self._keys

    def describe(self) -> str:
        return f"explicit ({self.n_actions()} actions, d={self.d}, m={self.m})"

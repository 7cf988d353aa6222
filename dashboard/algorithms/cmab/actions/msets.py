"""``m-sets``: all subsets of exactly ``m`` arms; the exact oracle is a top-``m`` sort."""

from __future__ import annotations

import itertools
import math

import numpy as np

from ...declare import ComponentDeclaration
from .base import (
    MAX_ENUMERATION,
    ActionFamily,
    _as_action,
    _check_score_matrix,
    _check_scores,
    restriction_masks,
)

__all__ = ["MSets"]


class MSets(ActionFamily):
    """All subsets of exactly ``m`` of the ``d`` base arms; the oracle is top-``m``.

    With non-negative scores "exactly m" and "at most m" coincide; UCB indices can be
    negative only for LCBs, where the paper's ``max_a r^LCB(a)`` is over ``A``, i.e. size-m sets.
    Ties are broken towards the lower arm index.
    """

    declaration = ComponentDeclaration(
        "actions",
        "m-sets",
        doc="all subsets of exactly m of the d base arms (top-m oracle)",
        reference="Section 6 (experiments)",
        fields=("d", "m"),
    )
    greedy_alpha = 1.0

    def argmax_linear(self, scores, include=(), exclude=None):
        s = _check_scores(scores, self.d)
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
        return self.argmax_linear_batch_trusted(_check_score_matrix(scores, self.d))

    def argmax_linear_batch_trusted(self, s: np.ndarray) -> np.ndarray:
        """:meth:`argmax_linear_batch` for a score matrix the caller guarantees is a float
        ``(R, d)`` array without NaN (policies validate once per run, not per call).

        Top-``m`` by partition, not a full sort: arms above the ``m``-th largest score, then
        the lowest-index arms equal to it -- the same set as a stable sort (ties to the lower
        arm index, like :meth:`argmax_linear`)."""
        m = self.m
        if m == self.d:
            return np.ones(s.shape, dtype=bool)
        thr = -np.partition(-s, m - 1, axis=1)[:, m - 1 : m]
        above = s > thr
        tie = s == thr
        need = m - above.sum(axis=1, keepdims=True)
        return above | (tie & (np.cumsum(tie, axis=1) <= need))

    def n_actions(self) -> int:
        return math.comb(self.d, self.m)

    def _enumerate(self):
        n_actions = math.comb(self.d, self.m)
        if n_actions > MAX_ENUMERATION:
            raise ValueError(f"{self.describe()} has {n_actions} actions; too many to enumerate")
        A = np.zeros((n_actions, self.d), dtype=bool)
        for row, comb in enumerate(itertools.combinations(range(self.d), self.m)):
            A[row, list(comb)] = True
        return A

    def is_action(self, a):
        return int(_as_action(a, self.d).sum()) == self.m

    def is_extendable(self, partial, include=(), exclude=None):
        partial = _as_action(partial, self.d)
        must, banned = restriction_masks(self.d, include, exclude)
        need = partial | must
        return (
            not np.any(need & banned)
            and int(need.sum()) <= self.m
            and int((~banned).sum()) >= self.m
        )

    def extendable_arms(self, partial, include=(), exclude=None):
        partial = _as_action(partial, self.d)
        must, banned = restriction_masks(self.d, include, exclude)
        need = partial | must
        if not self.is_extendable(partial, include, banned) or need.sum() >= self.m:
            return np.zeros(self.d, dtype=bool)
        # with room left, any allowed arm can be added (m <= number of allowed arms)
        return ~partial & ~banned

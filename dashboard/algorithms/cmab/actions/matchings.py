"""``matchings``: matchings of size ``m`` in a seeded bipartite graph whose edges are the
arms; the exact oracle solves an assignment problem."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linear_sum_assignment

from ...base import validate_int
from ...declare import ComponentDeclaration
from .base import (
    MAX_ENUMERATION,
    ActionFamily,
    _as_action,
    _check_scores,
    _finite_scores,
    restriction_masks,
)

__all__ = ["Matchings"]


class Matchings(ActionFamily):
    """Matchings of size exactly ``m`` in a bipartite graph whose *edges* are the base arms.

    Construction (deterministic given ``(d, m, seed)``; works for every ``d >= m >= 1``):

    * ``n = min(d, max(2m - 1, ceil(sqrt(2d))))`` left and ``n`` right nodes;
    * a *backbone* perfect matching ``(L_j, R_pi(j))`` (``pi`` a seeded permutation, so it is
      not visually obvious) plus ``d - n`` further edges drawn uniformly without replacement
      from the other ``n(n-1)`` pairs (``n^2 >= d`` always holds).

    Because the backbone has ``n >= 2m - 1`` edges (or the graph *is* the backbone, ``n = d``),
    every matching with fewer than ``m`` edges extends to one with ``m`` edges (a matching of
    size ``k`` blocks at most ``2k`` backbone edges).  Hence every edge lies on some action,
    and the feasible sets are exactly the matchings of size ``<= m`` (an intersection of two
    matroids), which is what makes the greedy oracle a 1/2-approximation for non-negative
    scores (:mod:`dashboard.algorithms.cmab.approx`).

    Attributes ``left``, ``right`` (node ids of each edge), ``n_left``, ``n_right`` describe
    the graph; arms are numbered by ``(left, right)``.

    The exact oracle solves a rectangular assignment problem with dummy nodes
    (``scipy.optimize.linear_sum_assignment``): ``n_R - k`` dummy rows and ``n_L - k`` dummy
    columns, dummy-dummy pairs forbidden, force exactly ``k`` real pairs.  ``include`` edges
    are fixed first (their endpoints removed, ``k = m - |include|``); ``exclude`` forbids
    edges.  Ties are broken by the solver (any maximiser is returned).

    Parameters
    ----------
    d : int
        Number of base arms (edges), ``d >= m``.
    m : int
        Matching size, ``m >= 1``.
    seed : int
        Seed of the random edges and node labels.
    """

    declaration = ComponentDeclaration(
        "actions",
        "matchings",
        doc="matchings of size m in a seeded bipartite graph (assignment oracle)",
        reference="Section 2 (matching example)",
        fields=("d", "m"),
    )
    greedy_alpha = 0.5

    def __init__(self, d: int, m: int, seed: int = 0) -> None:
        super().__init__(d, m)
        self.seed = validate_int("seed", seed, 0)
        d, m = self.d, self.m
        rng = np.random.default_rng(self.seed)
        n = min(d, max(2 * m - 1, math.ceil(math.sqrt(2 * d))))
        perm = rng.permutation(n)
        pairs = [(j, int(perm[j])) for j in range(n)]
        others = [(i, int(perm[j])) for i in range(n) for j in range(n) if i != j]
        if d > n:
            pick = rng.choice(len(others), size=d - n, replace=False)
            pairs += [others[i] for i in pick]
        pairs.sort()
        arr = np.array(pairs, dtype=np.int64)
        self.left, self.right = arr[:, 0], arr[:, 1]
        self.n_left = self.n_right = n
        self._edge_id = np.full((n, n), -1, dtype=np.int64)
        self._edge_id[self.left, self.right] = np.arange(d)

    def describe(self) -> str:
        return f"matchings (d={self.d} edges on {self.n_left}+{self.n_right} nodes, m={self.m})"

    def _fixed(self, must: np.ndarray, banned: np.ndarray) -> tuple[bool, np.ndarray, np.ndarray]:
        """Check the forced edges form a matching; return (ok, used left, used right)."""
        inc = np.flatnonzero(must)
        used_l = np.zeros(self.n_left, dtype=bool)
        used_r = np.zeros(self.n_right, dtype=bool)
        if np.any(must & banned) or len(inc) > self.m:
            return False, used_l, used_r
        L, Rr = self.left[inc], self.right[inc]
        if len(np.unique(L)) < len(inc) or len(np.unique(Rr)) < len(inc):
            return False, used_l, used_r
        used_l[L] = True
        used_r[Rr] = True
        return True, used_l, used_r

    def argmax_linear(self, scores, include=(), exclude=None):
        s = _finite_scores(_check_scores(scores, self.d), self.m)
        must, banned = restriction_masks(self.d, include, exclude)
        ok, used_l, used_r = self._fixed(must, banned)
        if not ok:
            return None
        k = self.m - int(must.sum())
        a = must.copy()
        if k == 0:
            return a
        free_l, free_r = np.flatnonzero(~used_l), np.flatnonzero(~used_r)
        p, q = len(free_l), len(free_r)
        if k > min(p, q):
            return None
        size = p + q - k
        C = np.full((size, size), np.inf)
        C[:p, q:] = 0.0  # real left node left unmatched (dummy column)
        C[p:, :q] = 0.0  # real right node left unmatched (dummy row)
        ids = self._edge_id[np.ix_(free_l, free_r)]
        usable = ids >= 0
        usable[usable] = ~banned[ids[usable]] & ~must[ids[usable]]
        sub = np.full((p, q), np.inf)
        sub[usable] = -s[ids[usable]]
        C[:p, :q] = sub
        try:
            rows, cols = linear_sum_assignment(C)
        except ValueError:  # scipy: "cost matrix is infeasible"
            return None
        real = (rows < p) & (cols < q)
        chosen = ids[rows[real], cols[real]]
        if len(chosen) != k or np.any(chosen < 0):  # pragma: no cover - solver guarantee
            return None
        a[chosen] = True
        return a

    def _enumerate(self):
        rows: list[tuple[int, ...]] = []
        L, R = self.left, self.right

        def grow(start: int, chosen: list[int], ul: set[int], ur: set[int]) -> None:
            if len(chosen) == self.m:
                rows.append(tuple(chosen))
                if len(rows) > MAX_ENUMERATION:
                    raise ValueError(f"{self.describe()} has too many matchings to enumerate")
                return
            for e in range(start, self.d):
                if L[e] in ul or R[e] in ur:
                    continue
                chosen.append(e)
                ul.add(int(L[e]))
                ur.add(int(R[e]))
                grow(e + 1, chosen, ul, ur)
                chosen.pop()
                ul.discard(int(L[e]))
                ur.discard(int(R[e]))

        grow(0, [], set(), set())
        A = np.zeros((len(rows), self.d), dtype=bool)
        for r, c in enumerate(rows):
            A[r, list(c)] = True
        return A

    def is_action(self, a):
        a = _as_action(a, self.d)
        idx = np.flatnonzero(a)
        return (
            len(idx) == self.m
            and len(np.unique(self.left[idx])) == self.m
            and len(np.unique(self.right[idx])) == self.m
        )

    def extendable_arms(self, partial, include=(), exclude=None):
        partial = _as_action(partial, self.d)
        must, banned = restriction_masks(self.d, include, exclude)
        out = np.zeros(self.d, dtype=bool)
        need = partial | must
        ok, used_l, used_r = self._fixed(need, banned)
        if not ok or need.sum() >= self.m:
            return out
        # only edges disjoint from the partial matching can extend it; test those exactly
        cand = ~need & ~banned & ~used_l[self.left] & ~used_r[self.right]
        for i in np.flatnonzero(cand):
            grown = need.copy()
            grown[i] = True
            out[i] = self.argmax_linear(np.zeros(self.d), np.flatnonzero(grown), banned) is not None
        return out

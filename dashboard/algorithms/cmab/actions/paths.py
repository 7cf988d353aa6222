"""``paths``: source-to-sink paths of a seeded layered DAG whose edges are the arms
(network routing); the exact oracle is a longest-path dynamic programme."""

from __future__ import annotations

import numpy as np

from ...base import validate_int
from ...declare import ComponentDeclaration
from .base import (
    MAX_ENUMERATION,
    ActionFamily,
    _as_action,
    _check_score_matrix,
    _check_scores,
    _finite_scores,
    restriction_masks,
)

__all__ = ["Paths"]


class Paths(ActionFamily):
    """Source-to-sink paths of a layered DAG whose *edges* are the base arms (network routing).

    Construction (deterministic given ``(d, m, seed)``; works for every ``d >= m >= 1``):

    * ``m + 1`` node layers ``0..m``; layer 0 is the single source, layer ``m`` the single
      sink, interior layers ``1..m-1`` have ``w`` nodes each.  Every path has exactly ``m``
      edges, one per edge layer ``k = 0..m-1`` (from node layer ``k`` to ``k + 1``).
    * ``w`` disjoint *lanes* ``source -> (1, j) -> ... -> (m-1, j) -> sink`` use ``m * w``
      edges.  For ``m >= 3``, ``w`` is the smallest width whose complete layered graph has at
      least ``d`` edges (``2w + (m-2) w^2 >= d``), capped at ``floor(d / m)``; so the graph is
      as "connected" as possible rather than many parallel lanes.  For ``m <= 2``,
      ``w = floor(d / m)`` (for ``m = 1`` the lanes are single source-sink links).
    * The remaining ``r = d - m w`` edges are *cross links* ``(k, j) -> (k+1, j')``,
      ``j != j'``, drawn uniformly without replacement (seeded) between interior layers.  When
      there is no room for them (``m <= 2`` or ``w = 1``, i.e. ``d < 2m``), they are parallel
      copies of distinct lane links instead (a multigraph: two links between the same
      routers).  ``m = 1`` gives ``d`` parallel source-sink links (equivalent to 1-sets).
    * Every node has an incoming and an outgoing edge, so every edge lies on some path.

    Arms are numbered by edge layer, then tail node, then head node.  Attributes ``tail``,
    ``head`` (node ids), ``edge_layer``, ``node_layer`` and ``node_pos`` (position within
    the layer) describe the graph for plotting; node 0 is the source and the last node the
    sink.

    The oracle is a longest-path dynamic programme over the layers (exact; ``O(d)`` per call),
    respecting ``include`` (the path must use those edges: at most one per layer) and
    ``exclude``.  Ties are broken towards lower edge indices.

    Parameters
    ----------
    d : int
        Number of base arms (edges), ``d >= m``.
    m : int
        Path length (number of edge layers), ``m >= 1``.
    seed : int
        Seed of the cross-link placement.
    """

    declaration = ComponentDeclaration(
        "actions",
        "paths",
        doc="source-to-sink paths of m edges in a seeded layered DAG (longest-path oracle)",
        reference="Section 2 (network routing example)",
        fields=("d", "m"),
    )
    greedy_alpha = None  # greedy edge selection has no constant guarantee on paths

    def __init__(self, d: int, m: int, seed: int = 0) -> None:
        super().__init__(d, m)
        self.seed = validate_int("seed", seed, 0)
        d, m = self.d, self.m
        rng = np.random.default_rng(self.seed)
        if m == 1:
            w = d
        elif m == 2:
            w = d // 2
        else:
            w = 1
            while 2 * w + (m - 2) * w * w < d:
                w += 1
            w = min(w, d // m)
        self.width = w
        # node ids: 0 = source, interior (k, j) -> 1 + (k-1) * w + j, sink = last
        n_nodes = 2 + (m - 1) * w
        sink = n_nodes - 1
        node_layer = np.zeros(n_nodes, dtype=np.int64)
        node_pos = np.zeros(n_nodes, dtype=np.int64)
        for k in range(1, m):
            ids = 1 + (k - 1) * w + np.arange(w)
            node_layer[ids] = k
            node_pos[ids] = np.arange(w)
        node_layer[sink] = m

        def node(k: int, j: int) -> int:
            if k == 0:
                return 0
            if k == m:
                return sink
            return 1 + (k - 1) * w + j

        edges = [(k, node(k, j), node(k + 1, j)) for k in range(m) for j in range(w)]
        r = d - m * w
        if r > 0:
            if m >= 3 and w >= 2:
                cand = [
                    (k, node(k, j), node(k + 1, jj))
                    for k in range(1, m - 1)
                    for j in range(w)
                    for jj in range(w)
                    if j != jj
                ]
                pick = rng.choice(len(cand), size=r, replace=False)
                edges += [cand[i] for i in pick]
            else:
                pick = rng.choice(len(edges), size=r, replace=False)
                edges += [edges[i] for i in pick]
        edges.sort()
        arr = np.array(edges, dtype=np.int64)
        self.edge_layer, self.tail, self.head = arr[:, 0], arr[:, 1], arr[:, 2]
        self.node_layer, self.node_pos = node_layer, node_pos
        self.n_nodes, self.source, self.sink = n_nodes, 0, sink
        # per layer: edge indices, and for each head node of the next layer its in-edges
        self._layer_edges = [np.flatnonzero(self.edge_layer == k) for k in range(m)]
        self._in_edges = [
            [(int(h), E[self.head[E] == h]) for h in np.unique(self.head[E])]
            for E in self._layer_edges
        ]

    def describe(self) -> str:
        return f"paths (d={self.d} links, m={self.m} hops, width {self.width})"

    def argmax_linear(self, scores, include=(), exclude=None):
        s = _finite_scores(_check_scores(scores, self.d), self.m)
        must, banned = restriction_masks(self.d, include, exclude)
        if np.any(must & banned):
            return None
        allowed = ~banned
        for E in self._layer_edges:
            forced = E[must[E]]
            if len(forced) > 1:
                return None  # a path uses one edge per layer
            if len(forced) == 1:
                allowed[E] = False
                allowed[forced[0]] = True
        val = np.zeros(self.n_nodes)
        reach = np.zeros(self.n_nodes, dtype=bool)
        reach[self.source] = True
        best_in = np.full(self.n_nodes, -1, dtype=np.int64)
        for E in self._layer_edges:
            E = E[allowed[E] & reach[self.tail[E]]]
            if len(E) == 0:
                return None
            cand = val[self.tail[E]] + s[E]
            heads = self.head[E]
            order = np.lexsort((E, -cand, heads))  # by head, best value, lowest index
            hs = heads[order]
            win = order[np.r_[True, hs[1:] != hs[:-1]]]  # first of each head group
            val[heads[win]] = cand[win]
            reach[heads[win]] = True
            best_in[heads[win]] = E[win]
        if not reach[self.sink]:
            return None
        return self._backtrack(best_in)

    def _backtrack(self, best_in: np.ndarray) -> np.ndarray:
        a = np.zeros(self.d, dtype=bool)
        node = self.sink
        for _ in range(self.m):
            e = best_in[node]
            a[e] = True
            node = self.tail[e]
        return a

    def argmax_linear_batch(self, scores):
        S = _check_score_matrix(scores, self.d)
        S = np.stack([_finite_scores(row, self.m) for row in S]) if np.isinf(S).any() else S
        R = S.shape[0]
        rows = np.arange(R)
        val = np.zeros((R, self.n_nodes))
        best_in = np.zeros((R, self.n_nodes), dtype=np.int64)
        for groups in self._in_edges:
            for h, E in groups:  # E ascending, argmax takes the first maximum
                cand = val[:, self.tail[E]] + S[:, E]
                j = np.argmax(cand, axis=1)
                val[:, h] = cand[rows, j]
                best_in[:, h] = E[j]
        a = np.zeros((R, self.d), dtype=bool)
        node = np.full(R, self.sink)
        for _ in range(self.m):
            e = best_in[rows, node]
            a[rows, e] = True
            node = self.tail[e]
        return a

    def n_actions(self) -> int:
        count = [0] * self.n_nodes
        count[self.source] = 1
        for e in range(self.d):  # edges are sorted by layer
            count[self.head[e]] += count[self.tail[e]]
        return count[self.sink]

    def _enumerate(self):
        n = self.n_actions()
        if n > MAX_ENUMERATION:
            raise ValueError(f"{self.describe()} has {n} paths; too many to enumerate")
        out_edges = [np.flatnonzero(self.tail == v) for v in range(self.n_nodes)]
        rows: list[list[int]] = []

        def walk(v: int, path: list[int]) -> None:
            if v == self.sink:
                rows.append(list(path))
                return
            for e in out_edges[v]:
                path.append(int(e))
                walk(int(self.head[e]), path)
                path.pop()

        walk(self.source, [])
        A = np.zeros((len(rows), self.d), dtype=bool)
        for r, p in enumerate(rows):
            A[r, p] = True
        return A

    def is_action(self, a):
        a = _as_action(a, self.d)
        return int(a.sum()) == self.m and self.is_extendable(a)

    def extendable_arms(self, partial, include=(), exclude=None):
        """One forward and one backward reachability pass (``O(d)``): edge ``e`` of a layer
        without a required edge extends ``partial`` iff its tail is reachable from the source
        and its head reaches the sink through allowed edges."""
        partial = _as_action(partial, self.d)
        must, banned = restriction_masks(self.d, include, exclude)
        need = partial | must
        out = np.zeros(self.d, dtype=bool)
        if np.any(need & banned):
            return out
        allowed = ~banned
        free_layer = np.ones(self.m, dtype=bool)
        for k, E in enumerate(self._layer_edges):
            forced = E[need[E]]
            if len(forced) > 1:
                return out
            if len(forced) == 1:
                allowed[E] = False
                allowed[forced[0]] = True
                free_layer[k] = False
        fwd = np.zeros(self.n_nodes, dtype=bool)
        bwd = np.zeros(self.n_nodes, dtype=bool)
        fwd[self.source] = bwd[self.sink] = True
        for E in self._layer_edges:
            E = E[allowed[E]]
            fwd[self.head[E[fwd[self.tail[E]]]]] = True
        for E in reversed(self._layer_edges):
            E = E[allowed[E]]
            bwd[self.tail[E[bwd[self.head[E]]]]] = True
        if not fwd[self.sink]:
            return out
        return allowed & ~need & free_layer[self.edge_layer] & fwd[self.tail] & bwd[self.head]

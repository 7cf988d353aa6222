"""Action families of the combinatorial semi-bandit (Section 2) and their exact oracles.

An action is a boolean vector of length ``d`` (the base arms it activates); ``m`` is the largest
action size, ``m = max_{a in A} ||a||_0`` (Section 2).  Every family answers the queries the
algorithms make:

* :meth:`ActionFamily.argmax_linear`: ``argmax_a sum_{i in a} w_i`` (UCB/LCB indices, Eq. (1)
  and (2)),
* :meth:`ActionFamily.argmax_set_function`: ``argmax_a f(a)`` for an arbitrary set function
  (general rewards, Algorithms 6-7),

both optionally restricted to actions that contain given arms (``include``: the representative
action of arm ``i`` in SROQ, Algorithm 2 line 6; pairs in SROQ-C) and avoid eliminated arms
(``exclude``: ``A_tau`` in Algorithm 2 line 8).  They return ``None`` when no action satisfies
the restriction.  :meth:`ActionFamily.enumerate` lists all actions (brute-force reference).

The paper allows any ``A subset {0,1}^d`` and motivates it with recommendation (sets of items),
ad slots and network routing (paths of links); its experiments only give ``d`` and ``m``.  We
provide four families:

========================  ===============================================  ==================
key                       actions                                          exact oracle
========================  ===============================================  ==================
``m-sets``                all subsets of exactly ``m`` arms                top-``m`` sort
``paths``                 source-sink paths of a layered DAG (arms=edges)  dynamic programming
``matchings``             matchings of size ``m`` (arms = bipartite edges) assignment problem
``explicit``              a user-supplied list of binary actions           enumeration
========================  ===============================================  ==================

Infinite scores (e.g. optimistic indices of unplayed arms) are allowed: ``+inf`` / ``-inf``
are compared lexicographically, i.e. an action is first ranked by (number of ``+inf`` arms)
minus (number of ``-inf`` arms), then by the sum of its finite scores.  ``NaN`` is rejected.

The greedy builder of :mod:`dashboard.algorithms.cmab.approx` (the alpha-approximation oracle
of Appendix A.3) uses the feasibility queries :meth:`ActionFamily.is_extendable`,
:meth:`ActionFamily.can_extend`, :meth:`ActionFamily.extendable_arms` and
:meth:`ActionFamily.is_action`.
"""

from __future__ import annotations

import inspect
import itertools
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..base import validate_int
from ..components import ComponentRegistry
from ..declare import ComponentDeclaration

__all__ = [
    "FAMILIES",
    "FAMILY_REGISTRY",
    "MAX_ENUMERATION",
    "ActionFamily",
    "ExplicitActions",
    "MSets",
    "Matchings",
    "Paths",
    "make_family",
    "restriction_masks",
]

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


class ActionFamily(ABC):
    """A set ``A`` of binary actions over ``d`` base arms with exact oracles.

    Subclasses implement :meth:`argmax_linear` (exactly, honouring ``include``/``exclude``) and
    :meth:`_enumerate`.  The default :meth:`argmax_set_function` enumerates, which is exact for
    any set function.  The feasibility helpers used by the greedy approximate oracle have
    generic defaults built on the exact restricted oracle; families override them when they
    can do better.
    """

    #: What the family says about itself (name, construction, reference); ``key`` is its name.
    declaration: ClassVar[ComponentDeclaration | None] = None
    #: Short name used by the CLI and dashboard (``m-sets``, ``paths`` ...).
    key: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        decl = cls.__dict__.get("declaration")
        if isinstance(decl, ComponentDeclaration):
            cls.key = decl.name

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
        """Exact ``argmax_a f(a)`` by enumeration (ties: first in enumeration order)."""
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
        s = _check_score_matrix(scores, self.d)
        R = s.shape[0]
        a = np.zeros(s.shape, dtype=bool)
        if self.m == self.d:
            a[:] = True
            return a
        # stable sort: same tie-breaking (lower arm index first) as argmax_linear
        top = np.argsort(-s, axis=1, kind="stable")[:, : self.m]
        a[np.arange(R)[:, None], top] = True
        return a

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


#: Registered action families (built-ins first); plug-ins use ``FAMILY_REGISTRY.register``.
FAMILY_REGISTRY: ComponentRegistry[ActionFamily] = ComponentRegistry(
    "actions", ActionFamily, "action family"
)
for _cls in (MSets, Paths, Matchings, ExplicitActions):
    FAMILY_REGISTRY.register(_cls, plugin=False)
#: Built-in keys accepted by :func:`make_family` (case-insensitive).
FAMILIES: tuple[str, ...] = FAMILY_REGISTRY.names()


def make_family(
    key: str,
    d: int | None,
    m: int | None,
    seed: int = 0,
    actions: Any = None,
) -> ActionFamily:
    """Build an action family from its user-facing key.

    Parameters
    ----------
    key : str
        One of :data:`FAMILIES` (``"m-sets"``, ``"paths"``, ``"matchings"``, ``"explicit"``),
        case-insensitive.
    d, m : int
        Number of base arms and action size.  For ``"explicit"`` they are read from
        ``actions``; pass ``None`` or the matching values (a mismatch raises ValueError).
    seed : int
        Seed of the random graph constructions (ignored by ``m-sets`` and ``explicit``).
    actions : array-like, optional
        The rows of an ``"explicit"`` family.

    Raises
    ------
    ValueError
        Unknown key (the message lists :data:`FAMILIES`), invalid ``d``/``m``, or a missing /
        inconsistent ``actions`` list.
    """
    return FAMILY_REGISTRY.get(key).build(d, m, seed=seed, actions=actions)

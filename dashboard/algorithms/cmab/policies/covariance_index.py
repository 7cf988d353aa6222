"""Statistics and the UCB/LCB index of the covariance-adaptive policies (Section 4.1).

:class:`CovStats` holds the sufficient statistics; :class:`CovIndex` (made by
:func:`index_function`) is Eq. (3)/(4) as the set function of AROQ-C / SROQ-C: called on one
action it is the reference value, and its ``argmax_rows`` lets the exact oracle score every
action at once (same answer as the reference loop; issue 9's start-up: one SROQ-C epoch at
d = 20 asks ~200 restricted queries of it); :func:`index_values` evaluates Eq. (3) for every
enumerated action with one ``einsum`` (the reference oracle of OLS-UCB-C).

:func:`argmax_index` is the fast oracle of the per-round baseline: it evaluates the index of
every action from the ``k x k`` blocks of ``B = D x G D x`` (``x = 1 / n``), ``O(n k^2)``
instead of ``O(n d^2)``, for ``R`` repetitions at once, together with a rigorous bound on its
difference from the reference values; only when another action comes within that bound of
the best one are the reference values computed, so the chosen action is always the
reference ``argmax`` (first maximiser), bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..actions import MAX_ENUMERATION, ActionFamily
from ..rewards.aggregate import action_arms
from .common import FIXED_POINT_SCALE, to_fixed

__all__ = [
    "CovIndex",
    "CovStats",
    "action_table",
    "argmax_index",
    "check_enumerable",
    "f_h",
    "index_function",
    "index_values",
]

#: Unit roundoff of float64.
_EPS = 2.0**-52


class CovStats:
    """Sufficient statistics of Section 4: ``n_i``, ``sum y_i``, ``n_(i,j)``, ``sum y_i y_j``.

    Sums are kept in fixed point (int64 multiples of ``2**-32``, as in :mod:`.common`), so
    any chunking of the same rounds gives bit-identical estimates and decisions.
    """

    def __init__(self, d: int) -> None:
        self.d = d
        self.n = np.zeros(d, dtype=np.int64)
        self.sy = np.zeros(d, dtype=np.int64)
        self.n2 = np.zeros((d, d), dtype=np.int64)
        self.syy = np.zeros((d, d), dtype=np.int64)

    def add_fixed(self, arms: np.ndarray, y: np.ndarray) -> None:
        """Add ``L`` rounds of one action (``y`` has shape ``(L, k)``)."""
        L = y.shape[0]
        self.n[arms] += L
        self.sy[arms] += to_fixed(y).sum(axis=0)
        ix = (arms[:, None], arms)  # np.ix_(arms, arms) without its checks
        self.n2[ix] += L
        self.syy[ix] += to_fixed(y[:, :, None] * y[:, None, :]).sum(axis=0)

    def add_rows(self, y: np.ndarray) -> None:
        """Add rounds given as a ``(L, d)`` array with ``nan`` for unplayed arms."""
        mask = ~np.isnan(y)
        y0 = np.where(mask, y, 0.0)
        mi = mask.astype(np.int64)
        self.n += mi.sum(axis=0)
        self.sy += to_fixed(y0).sum(axis=0)
        self.n2 += mi.T @ mi
        self.syy += to_fixed(y0[:, :, None] * y0[:, None, :]).sum(axis=0)

    def mu_hat(self) -> np.ndarray:
        """Empirical means (0 for unplayed arms)."""
        return self.sy / FIXED_POINT_SCALE / np.maximum(self.n, 1)

    def index_parts(self, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(mu_hat, G_bar, 1/n)`` with ``1/n = inf`` for unplayed arms."""
        mu = self.mu_hat()
        pos = self.n2 > 0
        N = np.maximum(self.n2, 1).astype(float)
        S_hat = self.syy / FIXED_POINT_SCALE / N
        bonus = (5.0 * h / np.sqrt(N) + h * h / N + 1.0 / N**2) / 4.0
        Sigma_bar = np.where(pos, S_hat - np.outer(mu, mu) + bonus, 0.0)
        G = Sigma_bar * self.n2 + np.diag(np.diag(Sigma_bar) * self.n) + np.eye(self.d)
        inv_n = np.where(self.n > 0, 1.0 / np.maximum(self.n, 1), np.inf)
        return mu, G, inv_n


class CovIndex:
    """Eq. (3)/(4) as a set function: ``a -> <a, mu> + sign * f ||D_n^{-1} a||_G`` (``-inf``
    for actions with a pair outside ``allowed_pairs``, ``sign * inf`` for actions with a
    never-played arm).

    Calling it on one action is the reference value (the ``k x k`` block of ``G``).
    :meth:`argmax_rows` (used by ``ActionFamily.argmax_set_function``) scores a whole feasible
    set at once with :func:`approx_index` and its rigorous bound and returns the row the
    reference ``argmax`` loop would return (first maximiser); only rows within twice the bound
    of the best are re-evaluated with the reference.  The approximate values of a family are
    computed once per index object and reused under other restrictions (one SROQ-C epoch asks
    the same index with ~200 ``include``/``exclude`` masks); reference values are memoised per
    action.  Picklable (process pools).
    """

    def __init__(
        self,
        mu: np.ndarray,
        G: np.ndarray,
        inv_n: np.ndarray,
        f: float,
        sign: float,
        allowed_pairs: np.ndarray | None = None,
    ) -> None:
        self.mu, self.G, self.inv_n = mu, G, inv_n
        self.f, self.sign = f, sign
        self.allowed = allowed_pairs
        #: reference evaluations made by :meth:`argmax_rows` (near-ties), for tests
        self.reevaluated = 0
        self._A: np.ndarray | None = None
        self._scored: list[tuple[np.ndarray, np.ndarray, float]] = []
        self._memo: dict[bytes, float] = {}

    def __getstate__(self) -> dict[str, Any]:  # process pools: no caches
        keep = ("mu", "G", "inv_n", "f", "sign", "allowed")
        return {k: getattr(self, k) for k in keep}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            state["mu"], state["G"], state["inv_n"], state["f"], state["sign"], state["allowed"]
        )

    def __call__(self, a: np.ndarray) -> float:
        a = np.asarray(a)
        key = a.astype(bool).tobytes()
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._value(a)
        return hit

    def _value(self, a: np.ndarray) -> float:
        """The reference value of one action."""
        idx = np.asarray(a).ravel().nonzero()[0]
        col = idx[:, None]  # [col, idx] is np.ix_(idx, idx), without its checks
        if self.allowed is not None and not self.allowed[col, idx].all():
            return -math.inf
        x = self.inv_n[idx]
        if np.isinf(x).any():
            return self.sign * math.inf
        q = float(x @ self.G[col, idx] @ x)
        return float(self.mu[idx].sum()) + self.sign * self.f * math.sqrt(max(q, 0.0))

    def _score(self, A: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """Per action size: ``(rows, approximate values, bound)`` of every row of ``A``, with
        the infinite values exact (banned pairs ``-inf``, unplayed arms ``sign * inf``)."""
        if self._A is A:
            return self._scored
        out = []
        unplayed = np.isinf(self.inv_n)
        for rows, arms in action_arms(A):
            v, bound = approx_index(
                arms, self.mu[None], self.G[None], self.inv_n[None], self.sign * self.f
            )
            v = v[0]
            if unplayed.any():
                v[np.take(unplayed, arms).any(axis=1)] = self.sign * math.inf
            if self.allowed is not None:
                ok = self.allowed[arms[:, :, None], arms[:, None, :]].all(axis=(1, 2))
                v[~ok] = -math.inf
            out.append((rows, v, float(bound[0, 0])))
        self._A, self._scored = A, out
        return out

    def argmax_rows(self, A: np.ndarray, mask: np.ndarray | None = None) -> int | None:
        """Row of ``A`` (boolean actions) maximising the reference value (first on ties),
        among the rows where ``mask`` is True (all by default; ``None`` if none).

        Why it is the reference row: a row's approximate value is within ``bound`` of its
        reference value, so every reference maximiser has an approximate value of at least
        ``best - 2 bound``; those candidates are re-evaluated exactly, in row order.
        Infinite values are exact flags, so ``+-inf`` maxima need no re-evaluation."""
        best_row, best_val = -1, -math.inf
        groups = self._score(A)
        for rows, v, bound in groups:
            sub = np.arange(rows.size) if mask is None else np.flatnonzero(mask[rows])
            if sub.size == 0:
                continue
            vals = v[sub]
            j = int(np.argmax(vals))
            top = vals[j]
            if math.isfinite(top):
                floor = top - 2.0 * bound
                if math.isnan(floor):  # a non-finite bound: every row is a candidate
                    floor = -math.inf
                cand = np.flatnonzero(vals >= floor)
                if cand.size > 1:
                    ref = [self(A[rows[sub[c]]]) for c in cand]
                    self.reevaluated += cand.size
                    j = int(cand[int(np.argmax(ref))])
            row = int(rows[sub[j]])
            if len(groups) == 1:
                return row
            val = self(A[row])
            if best_row < 0 or val > best_val or (val == best_val and row < best_row):
                best_row, best_val = row, val
        return None if best_row < 0 else best_row

    def argmax_rows_many(self, A: np.ndarray, masks: np.ndarray) -> list[int | None]:
        """``[argmax_rows(A, mask) for mask in masks]`` (``masks``: ``(Q, len(A))``), scored
        together: one SROQ-C epoch asks this index under ~200 restrictions at once.  Masks
        whose best approximate value has a near-tie are refined one by one, exactly as
        :meth:`argmax_rows` does."""
        masks = np.asarray(masks, dtype=bool)
        groups = self._score(A)
        if len(groups) != 1:
            return [self.argmax_rows(A, mask) for mask in masks]
        rows, v, bound = groups[0]  # one action size: rows are 0 .. n-1 in order
        W = np.where(masks, v[None, :], -math.inf)
        j = np.argmax(W, axis=1)
        top = W[np.arange(W.shape[0]), j]
        # every feasible row is -inf: the first feasible row, as the reference loop
        j = np.where(np.isneginf(top), np.argmax(masks, axis=1), j)
        floor = top - 2.0 * bound
        floor[np.isnan(floor)] = -math.inf
        near = np.count_nonzero(W >= floor[:, None], axis=1)
        feasible = masks.any(axis=1)
        out: list[int | None] = []
        for q in range(masks.shape[0]):
            if not feasible[q]:
                out.append(None)
            elif math.isfinite(top[q]) and near[q] > 1:
                out.append(self.argmax_rows(A, masks[q]))
            else:
                out.append(int(rows[j[q]]))
        return out


#: ``a -> <a, mu> + sign * f ||D_n^{-1} a||_G`` (``-inf`` for actions with a banned pair): the
#: name the policies build their index by; the set function is :class:`CovIndex` itself.
index_function = CovIndex


def index_values(
    Af: np.ndarray, mu: np.ndarray, G: np.ndarray, inv_n: np.ndarray, f: float
) -> np.ndarray:
    """Vectorised UCB index of Eq. (3) for every row of ``Af`` (actions as 0/1 floats); the
    exact oracle by enumeration, equal to ``family.argmax_set_function`` (ties: first row)."""
    unplayed = (Af[:, np.isinf(inv_n)] > 0).any(axis=1)
    X = Af * np.where(np.isinf(inv_n), 0.0, inv_n)[None, :]
    q = np.einsum("ij,jk,ik->i", X, G, X)
    v = Af @ mu + f * np.sqrt(np.maximum(q, 0.0))
    v[unplayed] = np.inf
    return v


def f_h(t: float, d: int, f_const: float, h_const: float) -> tuple[float, float]:
    lt = math.log(max(t, 3.0))
    return f_const * (lt + d * math.log(lt)), h_const * math.sqrt(lt + math.log(d))


_PLANS: dict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _block_plan(arms: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(flat, weight, ones)`` of :func:`approx_index` for the arm table ``arms`` (n, k):
    the flat indices ``(n, k(k+1)/2)`` of the upper triangle of each action's ``k x k`` block
    of a ``d x d`` matrix, the weights (1 on the diagonal, 2 off it) and ``ones(k)``.  The
    same arrays every round (OLS-UCB-C scores one table ~10^5 times): cached, read-only."""
    arms = np.ascontiguousarray(arms, dtype=np.int64)
    key = np.array([d, *arms.shape], dtype=np.int64).tobytes() + arms.tobytes()
    hit = _PLANS.get(key)
    if hit is None:
        k = arms.shape[1]
        iu, ju = np.triu_indices(k)
        flat = arms[:, iu] * d + arms[:, ju]
        weight = np.where(iu == ju, 1.0, 2.0)
        hit = (flat, weight, np.ones(k))
        for a in hit:
            a.flags.writeable = False
        if len(_PLANS) >= 64:
            _PLANS.clear()
        _PLANS[key] = hit
    return hit


def approx_index(
    arms: np.ndarray, mu: np.ndarray, G: np.ndarray, inv_n: np.ndarray, f: float
) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (3) for actions ``arms`` (``(n, k)``) of ``R`` repetitions (``mu``, ``inv_n``:
    ``(R, d)``, ``G``: ``(R, d, d)``, symmetric) from the ``k x k`` blocks of ``B``; returns the
    values ``(R, n)`` (``inf`` for actions with an unplayed arm) and a bound ``(R, 1)``, one
    per repetition, on their distance to :func:`index_values`.

    Per action, the rounding of ``<a, mu>`` (the reference sums ``d`` terms, we sum ``k``) is
    below ``4 (d + k) eps |mu|_max k``, that of ``q = x_a^T G x_a`` (the reference sums ``d^2``
    products of three factors, we sum ``k (k + 1) / 2``) below
    ``q_err = 4 (d^2 + k^2) eps k^2 |B|_max``, and ``|sqrt(q) - sqrt(q')|`` is at most
    ``q_err / sqrt(q)`` when ``q >= 4 q_err``, else ``sqrt(3 q_err)``.  The per-repetition
    bound takes the largest of these over the actions (the smallest ``q``, the largest
    ``sqrt(q)``): a larger bound only makes more rows near-ties, never a wrong answer, and
    saves a dozen elementwise passes over ``R x n`` per round."""
    R, d = mu.shape
    k = arms.shape[1]
    unplayed = np.isinf(inv_n)
    x = np.where(unplayed, 0.0, inv_n)
    B = (x[:, :, None] * G * x[:, None, :]).reshape(R, d * d)
    flat, weight, ones = _block_plan(arms, d)
    q = np.take(B, flat, axis=1) @ weight
    lin = np.take(mu, arms, axis=1) @ ones
    qabs = k * k * np.abs(B).max(axis=1)
    labs = k * np.abs(mu).max(axis=1)
    q_err = 4.0 * (d * d + k * k) * _EPS * qabs
    root = np.sqrt(np.maximum(q, 0.0))
    v = lin + f * root
    q_min = q.min(axis=1)
    safe = (q_min >= 4.0 * q_err) & (q_min > 0.0)
    s_err = np.where(safe, q_err / np.sqrt(np.where(safe, q_min, 1.0)), np.sqrt(3.0 * q_err))
    bound = 4.0 * (d + k) * _EPS * (labs + abs(f) * root.max(axis=1)) + abs(f) * s_err + 1e-300
    if unplayed.any():
        bad = np.take(unplayed, arms, axis=1).any(axis=2)
        v[bad] = np.inf
    return v, bound[:, None]


def argmax_index(
    A: np.ndarray,
    Af: np.ndarray,
    arms: np.ndarray,
    mu: np.ndarray,
    G: np.ndarray,
    inv_n: np.ndarray,
    f: float,
) -> tuple[np.ndarray, int]:
    """Rows of ``A`` maximising Eq. (3) for each of ``R`` repetitions, equal to
    ``argmax(index_values(Af, mu[r], G[r], inv_n[r], f))`` (ties: first row).

    ``arms`` is the ``(n, k)`` arm table of ``A`` (all actions of size ``k``).  Returns the
    rows and the number of repetitions whose reference values had to be computed."""
    v, bound = approx_index(arms, mu, G, inv_n, f)
    rows = np.argmax(v, axis=1)
    best = v[np.arange(v.shape[0]), rows][:, None]
    with np.errstate(invalid="ignore"):
        # the best row's reference value is above best - bound; a row can reach it only if
        # its value is at least best - 2 bound
        close = np.count_nonzero(v >= best - 2.0 * bound, axis=1)
    todo = np.flatnonzero(close != 1)  # near-ties (or, defensively, a non-finite bound)
    for r in todo:
        rows[r] = int(np.argmax(index_values(Af, mu[r], G[r], inv_n[r], f)))
    return rows, int(todo.size)


def check_enumerable(name: str, family: ActionFamily) -> None:
    """ValueError before a run starts if ``family`` is too large to enumerate every round."""
    try:
        n = int(family.n_actions())
    except ValueError as exc:
        raise ValueError(f"{name} scores every action each round, but {exc}") from None
    if n > MAX_ENUMERATION:
        raise ValueError(
            f"{name} scores every action each round and {family.describe()} has {n:,} actions "
            f"(limit {MAX_ENUMERATION:,}); use fewer arms (d) or a smaller m"
        )


def action_table(family: ActionFamily) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(A, A as floats, (n, k) arm table or None if the actions have several sizes)``."""
    A = family.enumerate()
    sizes = A.sum(axis=1)
    Af = A.astype(float)
    if A.shape[0] == 0 or np.any(sizes != sizes[0]):
        return A, Af, None
    return A, Af, np.nonzero(A)[1].reshape(A.shape[0], int(sizes[0]))

"""Vectorised ``E[r(a, y)]`` for every feasible action at once (the general-reward oracle).

The general-reward algorithms (Section 5, Algorithms 6-8 and SDCB) maximise, over the actions
``a`` of the family, the expectation of ``r(a, y) = g(agg_{i in a} y_i)`` under a product of
per-arm discrete distributions (Lemma 9).  :func:`~.general.expected_aggregate` computes it for
one action; calling it for each of the ``C(d, m)`` actions in Python costs ~20 us per action
(23 ms per round at d = 20, m = 3).  Here every action is scored in array operations:

* ``"sqrt-sum"`` with all atoms on a lattice ``b + h k`` (the paper's support
  ``{0.2, ..., 1}``, Algorithm 8's ``j / s``): the distribution of the sum of the first
  ``k - 1`` arms of each action is built by batched convolution over the lattice (one per
  distinct prefix), then ``E[g(sum)] = q_prefix^T H p_last`` with the Hankel matrix
  ``H[s, c] = g(k b + h (s + c))``; for actions of 3 arms on a small lattice the values of
  every ordered triple come from three small matmuls instead (:func:`_values_triples`);
* ``"sqrt-sum"`` off a lattice (raw continuous atoms): the product support of each action,
  chunked (``W^k`` terms for ``W`` atoms per arm);
* ``"max"``: ``E[max] = sum_x x (prod_i F_i(x) - prod_i F_i(x^-))`` on the union of the atoms.

These values are *approximations* of the reference ones (a different summation order; the
reference also rounds merged partial sums to 10 decimals), with a proven error bound
(:func:`error_bound`).  :func:`refined_argmax` keeps the answers identical to the reference
oracle: every action whose approximate value is within twice the bound of the best is
re-evaluated with the reference function and the first maximiser in enumeration order wins,
exactly like ``argmax`` over the reference values.  Rows are batched over repetitions
(leading axis ``R``) for the batched engines.

One idea: the kernels, their proven error bounds, the refined ``argmax`` that turns them into
the reference answer and the index object that serves them to the policies (with its cache of
reference values) only make sense together, so they stay in one module (~590 lines).  The
reward functions and the reference ``expected_aggregate`` are in the lower module :mod:`.laws`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..actions import MAX_ENUMERATION
from .reference import _reference, law_key

__all__ = [
    "FFT_LEVELS",
    "MAX_WORK",
    "ExpectedRewardIndex",
    "action_arms",
    "check_oracle_work",
    "dense_on_grid",
    "error_bound",
    "fft_error",
    "lattice",
    "prefix_table",
    "refined_argmax",
    "values_dense",
    "values_sparse",
    "work_estimate",
]

#: Largest number of elementary terms one vectorised evaluation of all actions may take
#: (about 10 s of numpy work); larger problems are refused with a ValueError.
MAX_WORK = 2_000_000_000
#: Terms per chunk of the product-support evaluation (bounds memory to ~100 MB).
_CHUNK_TERMS = 4_000_000
#: Half-width of the reference's merge rounding (``np.round(x, 10)``).
_MERGE_HALF_ULP = 5e-11


_TABLES: dict[bytes, list[tuple[np.ndarray, np.ndarray]]] = {}


def action_arms(A: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Group the rows of a boolean action matrix by size: ``[(rows, arms (n_k, k)), ...]``
    with the arms of each row in increasing order (the reference's fold order).  Cached (the
    same feasible set is scored round after round)."""
    A = np.ascontiguousarray(A, dtype=bool)
    key = A.shape[1].to_bytes(4, "little") + np.packbits(A).tobytes()
    hit = _TABLES.get(key)
    if hit is not None:
        return hit
    sizes = A.sum(axis=1)
    out = []
    for k in np.unique(sizes):
        rows = np.flatnonzero(sizes == k)
        arms = np.nonzero(A[rows])[1].reshape(rows.size, int(k))
        out.append((rows, arms))
    if len(_TABLES) >= 64:
        _TABLES.clear()
    _TABLES[key] = out
    return out


_PREFIXES: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}


def prefix_table(arms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``arms[:, :-1]`` and the inverse map (cached)."""
    key = arms.shape[1].to_bytes(4, "little") + arms.tobytes()
    hit = _PREFIXES.get(key)
    if hit is None:
        pref, inv = np.unique(arms[:, :-1], axis=0, return_inverse=True)
        hit = (pref, np.asarray(inv).reshape(-1))
        if len(_PREFIXES) >= 64:
            _PREFIXES.clear()
        _PREFIXES[key] = hit
    return hit


_LATTICES: dict[bytes, tuple[float, float, np.ndarray, float] | None] = {}


def lattice(grid: np.ndarray, rtol: float = 1e-12) -> tuple[float, float, np.ndarray, float] | None:
    """``(b, h, positions, deviation)`` if the sorted distinct values ``grid`` lie on
    ``b + h k`` (``k`` integer, at most 4096 lattice points), else ``None``.

    Cached by the grid's bytes (the batched engines ask it twice a round of the same grid;
    the positions array is read-only)."""
    grid = np.asarray(grid, dtype=float)
    key = grid.tobytes() + np.float64(rtol).tobytes()
    if key in _LATTICES:
        return _LATTICES[key]
    lat = _lattice(grid, rtol)
    if lat is not None:
        lat[2].flags.writeable = False
    if len(_LATTICES) >= 64:
        _LATTICES.clear()
    _LATTICES[key] = lat
    return lat


def _lattice(grid: np.ndarray, rtol: float) -> tuple[float, float, np.ndarray, float] | None:
    """:func:`lattice` without its cache."""
    if grid.size == 1:
        return float(grid[0]), 1.0, np.zeros(1, dtype=np.int64), 0.0
    b, span = float(grid[0]), float(grid[-1] - grid[0])
    step = float(np.min(np.diff(grid)))
    if not step > 0:
        return None
    n = round(span / step)
    if n > 4095 or n < 1:
        return None
    h = span / n
    k = np.rint((grid - b) / h)
    dev = float(np.max(np.abs(b + h * k - grid)))
    if dev > rtol * max(1.0, float(np.max(np.abs(grid)))):
        return None
    return b, h, k.astype(np.int64), dev


def dense_on_grid(dists: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The union grid of the atoms of ``dists`` and the ``(d, G)`` probabilities on it."""
    grid = np.unique(np.concatenate([np.asarray(v, dtype=float) for v, _ in dists]))
    P = np.zeros((len(dists), grid.size))
    for i, (v, p) in enumerate(dists):
        P[i, np.searchsorted(grid, v)] = p
    return grid, P


def _g(kind: str, x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.maximum(x, 0.0)) if kind == "sqrt-sum" else x


def values_dense(
    grid: np.ndarray,
    P: np.ndarray,
    arms: np.ndarray,
    kind: str,
    prefixes: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Approximate ``E[r(a, y)]`` for actions ``arms`` (``(n, k)`` arm indices) under per-arm
    laws ``P`` (``(R, d, G)`` or ``(d, G)``) on the sorted ``grid``; shape ``(R, n)``/``(n,)``.

    ``"max"`` works on any grid; ``"sqrt-sum"`` needs a :func:`lattice` grid (ValueError
    otherwise).  ``prefixes`` is ``prefix_table(arms)``, if the caller keeps it."""
    P = np.asarray(P, dtype=float)
    squeeze = P.ndim == 2
    if squeeze:
        P = P[None]
    arms = np.asarray(arms, dtype=np.int64)
    n, k = arms.shape
    R = P.shape[0]
    if k == 0 or n == 0:
        out = np.zeros((R, n))
        return out[0] if squeeze else out
    if kind == "max":
        F = np.cumsum(P, axis=2)
        prod = F[:, arms[:, 0]]
        for j in range(1, k):
            prod = prod * F[:, arms[:, j]]
        mass = np.diff(prod, axis=2, prepend=0.0)
        out = mass @ grid
        return out[0] if squeeze else out
    lat = lattice(grid)
    if lat is None:
        raise ValueError("values_dense: the atoms are not on a lattice")
    b, h, pos, _ = lat
    L = int(pos[-1]) + 1
    Q = np.zeros((R, P.shape[1], L))
    Q[:, :, pos] = P
    if k == 1:
        out = Q[:, arms[:, 0]] @ _g(kind, b + h * np.arange(L))
        return out[0] if squeeze else out
    if k == 3 and L <= FFT_LEVELS and R * P.shape[1] ** 3 <= _TRIPLE_TERMS:
        out = _values_triples(Q, arms, _g(kind, k * b + h * np.arange(k * (L - 1) + 1)))
        return out[0] if squeeze else out
    pref, inv = prefix_table(arms) if prefixes is None else prefixes
    if L > FFT_LEVELS:
        out = _values_fft(Q, arms, pref, inv, _g(kind, k * b + h * np.arange(k * (L - 1) + 1)))
        return out[0] if squeeze else out
    # distributions of the sum of the first k-1 arms, one per distinct prefix
    dist = Q[:, pref[:, 0]]  # (R, n_pref, L)
    for j in range(1, k - 1):
        dist = _convolve(dist, Q[:, pref[:, j]])
    H = _hankel(kind, k, b, h, dist.shape[2], L)  # (Lp, L) Hankel matrix of g at the total
    # value(prefix, last arm) for every pair at once, then one gather per action
    M = (dist @ H) @ Q.transpose(0, 2, 1)  # (R, n_pref, d)
    out = M[:, inv, arms[:, k - 1]]
    return out[0] if squeeze else out


_HANKELS: dict[tuple[str, int, float, float, int, int], np.ndarray] = {}


def _hankel(kind: str, k: int, b: float, h: float, Lp: int, L: int) -> np.ndarray:
    """``H[s, c] = g(k b + h (s + c))`` (``Lp x L``), the same array for every round of a
    run: cached (read-only)."""
    key = (kind, k, b, h, Lp, L)
    H = _HANKELS.get(key)
    if H is None:
        s = np.arange(Lp)[:, None] + np.arange(L)[None, :]
        H = _g(kind, k * b + h * s)
        H.flags.writeable = False
        if len(_HANKELS) >= 64:
            _HANKELS.clear()
        _HANKELS[key] = H
    return H


#: Lattices with more points than this are convolved in Fourier space (Algorithm 8's s levels).
FFT_LEVELS = 48
#: Largest ``R d^3`` for which actions of 3 arms are scored through the full triple table.
_TRIPLE_TERMS = 4_000_000


def _values_triples(Q: np.ndarray, arms: np.ndarray, gvals: np.ndarray) -> np.ndarray:
    """``E[g(sum)]`` of actions of 3 arms from the table of every ordered triple, by three
    small matmuls instead of one convolution per prefix: ``T[s, l] = sum_c g(s + c) Q_l[c]``,
    ``U[a, j, l] = sum_b Q_j[b] T[a + b, l]``, ``V[i, j, l] = sum_a Q_i[a] U[a, j, l]``."""
    R, d, L = Q.shape
    s = np.arange(2 * L - 1)[:, None] + np.arange(L)[None, :]
    T = gvals[s] @ Q.transpose(0, 2, 1)  # (R, 2L - 1, d)
    U = np.empty((R, L, d, d))
    for a in range(L):
        U[:, a] = Q @ T[:, a : a + L, :]  # (R, d, d)
    V = Q @ U.reshape(R, L, d * d)  # (R, d, d * d)
    return V[:, arms[:, 0], arms[:, 1] * d + arms[:, 2]]


def _values_fft(
    Q: np.ndarray, arms: np.ndarray, pref: np.ndarray, inv: np.ndarray, gvals: np.ndarray
) -> np.ndarray:
    """``E[g(sum)]`` through Parseval: ``sum_u g(u) P_S(u) = (1/N) sum_f conj(G^(f)) prod_j
    Q^_j(f)`` with real FFTs of length ``N >= k (L - 1) + 1`` (no wrap-around); one complex
    product per distinct prefix, then one real matmul (real and imaginary parts side by side)
    against every last arm."""
    k = arms.shape[1]
    N = 1 << int(np.ceil(np.log2(gvals.size)))
    F = np.fft.rfft(Q, n=N, axis=2)  # (R, d, N/2 + 1)
    w = np.full(N // 2 + 1, 2.0 / N)
    w[0] = 1.0 / N
    w[-1] = 1.0 / N
    Gh = np.conj(np.fft.rfft(gvals, n=N)) * w
    W = F[:, pref[:, 0]] * Gh
    for j in range(1, k - 1):
        W = W * F[:, pref[:, j]]
    # Re(W F^T) = Re W Re F^T - Im W Im F^T: one real matmul (half the flops of the complex
    # product, and BLAS on stacked real arrays)
    nf = W.shape[2]
    Wri = np.empty((*W.shape[:2], 2 * nf))
    Wri[..., :nf], Wri[..., nf:] = W.real, W.imag
    Fri = np.empty((F.shape[0], 2 * nf, F.shape[1]))
    Fri[:, :nf], Fri[:, nf:] = F.real.transpose(0, 2, 1), -F.imag.transpose(0, 2, 1)
    M = Wri @ Fri  # (R, n_pref, d)
    return M[:, inv, arms[:, k - 1]]


def fft_error(levels: int, k: int, gmax: float) -> float:
    """Generous bound on the rounding error of :func:`_values_fft` (FFT error grows like
    ``eps log N`` times the norms; here ``1e-12 N`` times the largest ``|g|``)."""
    N = 1 << int(np.ceil(np.log2(k * (levels - 1) + 1)))
    return 1e-12 * N * max(1.0, gmax)


_SUM_MATRICES: dict[tuple[int, int], np.ndarray] = {}


def _sum_matrix(La: int, Lb: int) -> np.ndarray:
    """0/1 matrix ``(La * Lb, La + Lb - 1)`` mapping the outer product to the sums ``a + b``."""
    S = _SUM_MATRICES.get((La, Lb))
    if S is None:
        s = (np.arange(La)[:, None] + np.arange(Lb)[None, :]).ravel()
        S = np.zeros((La * Lb, La + Lb - 1))
        S[np.arange(La * Lb), s] = 1.0
        _SUM_MATRICES[(La, Lb)] = S
    return S


def _convolve(a: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Row-wise full convolution of ``a`` (..., La) with ``p`` (..., Lb)."""
    La, Lb = a.shape[-1], p.shape[-1]
    if La * Lb <= 4096:  # outer product, then one matmul summing along anti-diagonals
        S = _sum_matrix(La, Lb)
        return (a[..., :, None] * p[..., None, :]).reshape(*a.shape[:-1], La * Lb) @ S
    out = np.zeros((*a.shape[:-1], La + Lb - 1))
    for c in np.flatnonzero(p.reshape(-1, Lb).any(axis=0)):
        out[..., c : c + La] += a * p[..., c : c + 1]
    return out


def values_sparse(
    dists: Sequence[tuple[np.ndarray, np.ndarray]], arms: np.ndarray, kind: str
) -> np.ndarray:
    """Approximate ``E[r(a, y)]`` for actions ``arms`` (``(n, k)``) by summing over the product
    support of each action (any atoms, any kind), in chunks."""
    arms = np.asarray(arms, dtype=np.int64)
    n, k = arms.shape
    if k == 0 or n == 0:
        return np.zeros(n)
    W = max(len(v) for v, _ in dists)
    V = np.zeros((len(dists), W))
    P = np.zeros((len(dists), W))
    for i, (v, p) in enumerate(dists):
        V[i, : len(v)], P[i, : len(p)] = v, p
        V[i, len(v) :] = v[-1]  # padding atoms have probability 0
    out = np.empty(n)
    chunk = max(1, _CHUNK_TERMS // W**k)
    for s in range(0, n, chunk):
        a = arms[s : s + chunk]
        tot = V[a[:, 0]]
        pr = P[a[:, 0]]
        for j in range(1, k):
            shape = (a.shape[0],) + (1,) * j + (W,)
            vj, pj = V[a[:, j]].reshape(shape), P[a[:, j]].reshape(shape)
            tot = np.maximum(tot[..., None], vj) if kind == "max" else tot[..., None] + vj
            pr = pr[..., None] * pj
        out[s : s + chunk] = (_g(kind, tot) * pr).reshape(a.shape[0], -1).sum(axis=1)
    return out


#: Above this many product-support terms, off-lattice laws are bracketed on a lattice instead.
BRACKET_TERMS = 2_000_000
#: Levels of the bracketing lattice.
BRACKET_LEVELS = 1024


def values_bracket(
    dists: Sequence[tuple[np.ndarray, np.ndarray]],
    arms: np.ndarray,
    kind: str,
    bound: float,
    gmax: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Values of off-lattice laws bracketed by rounding every atom down / up to a fine lattice:
    ``g`` is non-decreasing, so the two lattice values enclose the reference one (up to
    rounding); returns their midpoint and half-width plus ``bound`` (per action)."""
    lo = min(float(v[0]) for v, _ in dists)
    hi = max(float(v[-1]) for v, _ in dists)
    L = BRACKET_LEVELS
    h = (hi - lo) / (L - 1) if hi > lo else 1.0
    grid = lo + h * np.arange(L)
    down = np.zeros((len(dists), L))
    up = np.zeros((len(dists), L))
    for i, (v, p) in enumerate(dists):
        j = np.clip(np.floor((v - lo) / h).astype(np.int64), 0, L - 1)
        j -= grid[j] > v  # grid[j] <= v exactly
        j = np.maximum(j, 0)
        np.add.at(down[i], j, p)
        ju = np.clip(np.ceil((v - lo) / h).astype(np.int64), 0, L - 1)
        ju += (grid[ju] < v) & (ju < L - 1)  # grid[ju] >= v exactly
        np.add.at(up[i], ju, p)
    e_lo = values_dense(grid, down, arms, kind)
    e_hi = values_dense(grid, up, arms, kind)
    k = arms.shape[1]
    slack = bound + fft_error(L, k, gmax) + 1e-12 * k * max(abs(lo), abs(hi), 1.0)
    return (e_lo + e_hi) / 2.0, np.abs(e_hi - e_lo) / 2.0 + slack


def error_bound(grid_min: float, k: int, kind: str, lattice_dev: float, scale: float) -> float:
    """Bound on ``|approximate - reference|`` for actions of ``k`` arms.

    The reference rounds merged partial sums (``k >= 3``) to 10 decimals; under ``sqrt`` that
    moves the value by at most ``delta / (2 sqrt(S_min - delta))`` (``S_min``: the smallest
    possible total), or ``sqrt(delta)`` near 0.  Floating-point error of both computations
    is below ``1e-12 * scale``.
    """
    delta = (_MERGE_HALF_ULP if k >= 3 else 0.0) + k * lattice_dev
    fp = 1e-12 * max(1.0, scale)
    if kind == "max" or delta == 0.0:
        return delta + fp
    s_min = k * grid_min
    if s_min > 4 * delta:
        return delta / (2.0 * math.sqrt(s_min - delta)) + fp
    return math.sqrt(2.0 * delta) + fp


def _first_of_each(sig: np.ndarray) -> np.ndarray:
    """Positions (increasing) of the first row of each distinct row of ``sig`` (``(n, k)``
    non-negative ints): ``np.sort(np.unique(sig, axis=0, return_index=True)[1])``, through one
    integer per row when the ids fit (a 1-D ``unique`` is much cheaper than a row-wise one)."""
    n, k = sig.shape
    if n <= 1:
        return np.arange(n)
    if k == 0:
        return np.zeros(1, dtype=np.int64)
    base = int(sig.max()) + 1
    if base == 1:
        return np.zeros(1, dtype=np.int64)
    if k * math.log2(base) < 62:
        code = sig.astype(np.int64) @ (base ** np.arange(k, dtype=np.int64))
        _, first = np.unique(code, return_index=True)
    else:
        _, first = np.unique(sig, axis=0, return_index=True)
    return np.sort(first)


def refined_argmax(
    approx: np.ndarray,
    bound: float | np.ndarray,
    exact: Callable[[int], float],
    signature: np.ndarray | None = None,
) -> tuple[int, int]:
    """Index of the first maximiser of the *reference* values, from approximate ones.

    Every row within ``2 * bound`` of the best approximate value is re-evaluated with
    ``exact(row)``; any row achieving the reference maximum is among them (its approximate
    value is within ``bound`` of the maximum, the best approximate value at most ``bound``
    above it), so the first of them with the largest reference value is the reference
    ``argmax``.  Rows with equal ``signature`` rows (``(n, k)``: the per-arm law of each arm
    of the action, in fold order) have bit-identical reference values, so only the first of
    each signature is evaluated.  Returns ``(row, number of rows re-evaluated)``.
    """
    floor = float(np.max(approx - bound))  # the reference maximum is at least this
    cand = np.flatnonzero(approx + bound >= floor - 1e-300)
    if cand.size == 1:
        return int(cand[0]), 0
    if signature is not None:
        first = _first_of_each(signature[cand])
        cand = cand[first]
        if cand.size == 1:
            return int(cand[0]), 0
    vals = np.array([exact(int(r)) for r in cand])
    return int(cand[int(np.argmax(vals))]), int(cand.size)


def work_estimate(n_actions: int, k: int, atoms: int, on_lattice: bool) -> int:
    """Elementary terms of one vectorised evaluation of ``n_actions`` actions of ``k`` arms with
    ``atoms`` grid points (lattice) or atoms per arm (product support)."""
    if k <= 1:
        return n_actions * atoms
    if on_lattice and atoms > FFT_LEVELS:  # Fourier path: a few spectra per action
        return 4 * n_actions * (1 << int(np.ceil(np.log2(k * (atoms - 1) + 1))))
    if on_lattice:
        return n_actions * atoms * ((k - 1) * (atoms - 1) + 1) + n_actions * atoms
    return n_actions * atoms**k


def check_oracle_work(name: str, env: Any, atoms: int, on_lattice: bool) -> None:
    """ValueError before a run starts if scoring every action once would exceed
    :data:`MAX_WORK` terms (or the family is too large to enumerate), instead of a silent
    hour-long run."""
    family = env.family
    try:
        n = int(family.n_actions())
    except ValueError as exc:
        raise ValueError(
            f"{name} with a non-linear reward maximises over every action, but {exc}; "
            "use fewer arms (d) or a smaller action size (m)"
        ) from None
    if n > MAX_ENUMERATION:
        raise ValueError(
            f"{name} with a non-linear reward maximises over every action, and "
            f"{family.describe()} has {n:,} actions (limit {MAX_ENUMERATION:,}); "
            "use fewer arms (d) or a smaller action size (m)"
        )
    work = work_estimate(n, family.m, atoms, on_lattice)
    if work > MAX_WORK:
        raise ValueError(
            f"{name}: one oracle call would score {n:,} actions of {family.m} arms with up to "
            f"{atoms} outcome values each (~{work:.1e} terms, limit {MAX_WORK:.0e}); "
            "use fewer arms, a smaller m, a shorter horizon (fewer discretisation levels) "
            "or the linear reward"
        )


class ExpectedRewardIndex:
    """The set function ``a -> E[r(a, y)]`` under a product of per-arm laws (Eq. (10)/(11)).

    Calling it on one action is the reference :func:`~.general.expected_aggregate`;
    :meth:`argmax_rows` scores a whole feasible set at once and returns the row the reference
    ``argmax`` (first maximiser in row order) would return.  Picklable (process pools).

    Parameters
    ----------
    dists : list of (values, probs)
        One discrete law per base arm (sorted distinct values, positive probabilities).
    kind : str
        ``"sqrt-sum"`` or ``"max"`` (``"sum"`` is linear and goes through linear scores).
    """

    def __init__(self, dists: Sequence[tuple[np.ndarray, np.ndarray]], kind: str) -> None:
        self.dists = list(dists)
        self.kind = kind
        self.reevaluated = 0
        self._law: np.ndarray | None = None
        self._values: dict[int, tuple[np.ndarray, np.ndarray, Any]] = {}
        self._keys: list[bytes] | bool | None = None

    def __getstate__(self) -> dict[str, Any]:  # process pools: no caches
        return {"dists": self.dists, "kind": self.kind, "reevaluated": 0}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["dists"], state["kind"])  # type: ignore[misc]

    def __call__(self, a: np.ndarray) -> float:
        idx = np.flatnonzero(a)
        keys = self._law_keys()
        key = None if keys is None else (self.kind, tuple(keys[i] for i in idx))
        values = [self.dists[i][0] for i in idx]
        return _reference(key, values, [self.dists[i][1] for i in idx], self.kind)

    def _law_keys(self) -> list[bytes] | None:
        """Per arm, the bytes of its law (``None`` unless every law is float64 arrays)."""
        if self._keys is None:
            keys = [law_key(v, p) for v, p in self.dists]
            self._keys = False if any(k is None for k in keys) else keys  # type: ignore[assignment]
        return self._keys or None

    def law_ids(self) -> np.ndarray:
        """Per arm, an id shared by the arms with bit-identical laws."""
        seen: dict[bytes, int] = {}
        ids = np.empty(len(self.dists), dtype=np.int64)
        for i, (v, p) in enumerate(self.dists):
            key = np.asarray(v, dtype=float).tobytes() + b"|" + np.asarray(p, dtype=float).tobytes()
            ids[i] = seen.setdefault(key, len(seen))
        return ids

    def values(self, arms: np.ndarray) -> tuple[np.ndarray, float]:
        """Approximate values of the actions ``arms`` (``(n, k)``) and their error bound."""
        grid, P = dense_on_grid(self.dists)
        k = arms.shape[1]
        scale = float(np.max(np.abs(grid))) * max(k, 1)
        if self.kind == "max":
            return values_dense(grid, P, arms, "max"), error_bound(0, k, "max", 0.0, scale)
        lat = lattice(grid)
        if lat is not None:
            vals = values_dense(grid, P, arms, self.kind)
            bound = error_bound(float(grid[0]), k, self.kind, lat[3], scale)
            levels = int(lat[2][-1]) + 1
            if levels > FFT_LEVELS and k > 1:
                bound += fft_error(levels, k, math.sqrt(abs(scale)))
            return vals, bound
        bound = error_bound(float(grid[0]), k, self.kind, 0.0, scale)
        W = max(len(v) for v, _ in self.dists)
        if arms.shape[0] * W**k <= BRACKET_TERMS:
            return values_sparse(self.dists, arms, self.kind), bound
        return values_bracket(self.dists, arms, self.kind, bound, math.sqrt(abs(scale)))

    def argmax_rows(self, A: np.ndarray, mask: np.ndarray | None = None) -> int | None:
        """Row of ``A`` (boolean actions) maximising the reference value (first on ties),
        among the rows where ``mask`` is True (all by default; ``None`` if none).

        The approximate values of ``A`` are computed once per index object and reused by
        later calls with other masks (one SROQ epoch asks the same index under several
        restrictions)."""
        A = np.asarray(A, dtype=bool)
        groups = action_arms(A)
        best_row, best_val = -1, -math.inf
        if self._law is None:
            self._law = self.law_ids()
        law = self._law
        for rows, arms in groups:
            key = id(arms)
            hit = self._values.get(key)
            if hit is None or hit[0] is not arms:
                hit = self._values[key] = (arms, *self.values(arms))
            _, vals, bound = hit
            sub = np.arange(rows.size) if mask is None else np.flatnonzero(mask[rows])
            if sub.size == 0:
                continue
            b = bound if np.ndim(bound) == 0 else bound[sub]
            j, n_re = refined_argmax(
                vals[sub], b, lambda r, rows=rows, sub=sub: self(A[rows[sub[r]]]), law[arms[sub]]
            )
            self.reevaluated += n_re
            row = int(rows[sub[j]])
            if len(groups) == 1:
                return row
            v = self(A[row])
            if v > best_val or (v == best_val and row < best_row):
                best_row, best_val = row, v
        return None if best_row < 0 else best_row

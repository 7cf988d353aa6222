"""The per-round index of OLS-UCB-C (Eq. (3), Section 4.1) for ``R`` repetitions, kept on the
``P = d(d+1)/2`` pairs ``i <= j`` (issue 9: the batched engine's round costs ~a dozen
small numpy calls less and no ``(R, n, k(k+1)/2)`` gather).

A lower module of :class:`~.batched.BatchedOLSUCBC`; it imports no policy module.

The statistics ``n_(i,j)`` and ``sum y_i y_j`` are symmetric integer matrices (fixed point),
so their upper triangles hold them exactly.  Every entry of ``mu_hat``, ``G_bar`` (on the
pairs) and ``1/n`` is computed with the same elementwise operations as
:meth:`~.covariance_index.CovStats.index_parts` (``G``'s diagonal ``Sigma n_ii + Sigma n_i``
as the exact doubling ``Sigma (2 n_ii)``, since ``n_ii = n_i``), hence the same floats; only
the approximate values below depend on them.  The values of the
``n`` actions are two matrix products, ``B_pairs @ Wq`` (``Wq[p, a]`` = 1 on the diagonal
pairs of ``a``, 2 on its other pairs, 0 elsewhere) and ``mu @ Af^T`` (on large tables, the
gathers of each action's pairs and arms, as ``approx_index``); they differ from the
reference :func:`~.covariance_index.index_values` only by the summation order of the same
products (exact zeros add nothing), which :func:`~.covariance_index.approx_index`'s rigorous
bound covers (it charges the reference ``d^2`` and ``d`` terms plus ours).  Rows within twice
the bound of the best are refined with the reference values, computed by ``CovStats`` itself,
so the chosen action is the reference ``argmax`` (first maximiser), bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from .common import FIXED_POINT_SCALE
from .covariance_index import _EPS, CovStats, index_values

__all__ = ["PairIndex"]

#: Largest ``(pairs) x (actions)`` table scored by dense matrix products (else by gathers).
DENSE_TERMS = 16384


class PairIndex:
    """Statistics of ``R`` repetitions on the pairs ``i <= j`` and the argmax of Eq. (3).

    Parameters
    ----------
    stats : list of CovStats
        One per repetition (after the warm-up); copied, not kept.
    A : ndarray of bool (n, d)
        The actions, all of size ``k`` (``arms``: their sorted arm table ``(n, k)``).
    """

    def __init__(self, stats: list[CovStats], A: np.ndarray, arms: np.ndarray) -> None:
        d = A.shape[1]
        n_act, k = arms.shape
        self.R, self.d, self.k = len(stats), d, k
        self.A, self.Af, self.arms = A, A.astype(float), arms
        iu, ju = np.triu_indices(d)
        self.I, self.J = iu, ju
        pos = np.full((d, d), -1, dtype=np.int64)
        pos[iu, ju] = np.arange(iu.size)
        self.diag = pos[np.arange(d), np.arange(d)]
        ka, kb = np.triu_indices(k)
        self.ka, self.kb = ka, kb
        # pair positions of every action (arms sorted: arms[a] <= arms[b] for a <= b)
        self.pairs = pos[arms[:, ka], arms[:, kb]]  # (n, k(k+1)/2)
        Wq = np.zeros((iu.size, n_act))
        Wq[self.pairs, np.arange(n_act)[:, None]] = np.where(ka == kb, 1.0, 2.0)[None, :]
        self._w = np.where(ka == kb, 2.0, 1.0)[None, :] * np.ones((n_act, 1))  # N2w steps
        self._yy = np.empty((len(stats), k + ka.size))
        self.eye = np.zeros(iu.size)
        self.eye[self.diag] = 1.0
        self.Wq = Wq
        self.Wl = np.ascontiguousarray(self.Af.T)
        # dense products pay on small tables (d = 10, m = 3: 55 x 120); on large ones (d = 20,
        # m = 3: 210 x 1140, mostly zeros) gather each action's pairs and arms instead
        self._dense = iu.size * n_act <= DENSE_TERMS
        self._wq = np.where(ka == kb, 1.0, 2.0)
        self._ones = np.ones(k)
        P = iu.size
        # the state in two arrays, so that a round is one scatter-add into each:
        # S = [sum y_i | sum y_i y_j (pairs)] (int64 fixed point) and
        # C = [n_i | n_(i,j) | n_(i,j) with the diagonal doubled] (floats holding integers
        # exactly; the operations of CovStats.index_parts convert its int64 counts to the
        # same floats)
        self.S = np.concatenate(
            [np.stack([s.sy for s in stats]), np.stack([s.syy[iu, ju] for s in stats])], axis=1
        ).astype(np.int64)
        n2 = np.stack([s.n2[iu, ju] for s in stats]).astype(float)
        n2w = n2.copy()
        n2w[:, self.diag] *= 2.0
        self.C = np.concatenate([np.stack([s.n for s in stats]).astype(float), n2, n2w], axis=1)
        self.sy, self.syy = self.S[:, :d], self.S[:, d:]
        # flat views: a round's scatter-adds index them with r * width + column
        self._Sf, self._Cf = self.S.reshape(-1), self.C.reshape(-1)
        self._s_base = (np.arange(self.R) * self.S.shape[1])[:, None]
        self._c_base = (np.arange(self.R) * self.C.shape[1])[:, None]
        self.n, self.N, self.N2w = self.C[:, :d], self.C[:, d : d + P], self.C[:, d + P :]
        self._s_cols = np.concatenate([arms, d + self.pairs], axis=1)
        self._c_cols = np.concatenate([arms, d + self.pairs, d + P + self.pairs], axis=1)
        self._c_inc = np.concatenate(
            [np.ones((n_act, k)), np.ones(self.pairs.shape), self._w], axis=1
        )
        self._r = np.arange(self.R)
        self._ridx = self._r[:, None]
        self.refined = 0
        #: error-bound constants of approx_index for actions of size k among d arms
        self._lin_c = 4.0 * (d + k) * _EPS
        self._check_fast()
        # (times 1 + 8 eps: |B_ij| on the upper triangle may be an ulp below its mirror
        # image |B_ji|, which the reference's maximum also sees)
        self._q_c = 4.0 * (d * d + k * k) * _EPS * k * k * (1.0 + 8.0 * _EPS)

    # ------------------------------------------------------------------ reference parts
    def stats_of(self, r: int) -> CovStats:
        """Repetition ``r``'s statistics as a :class:`CovStats` (full symmetric matrices)."""
        s = CovStats(self.d)
        s.n[:] = self.n[r]
        s.sy[:] = self.sy[r]
        for full, half in ((s.n2, self.N[r]), (s.syy, self.syy[r])):
            full[self.I, self.J] = half
            full[self.J, self.I] = half
        return s

    # ------------------------------------------------------------------ one round
    def argmax(self, f: float, h: float) -> np.ndarray:
        """Rows ``(R,)`` of the reference ``argmax`` of Eq. (3) with constants ``f, h``."""
        if not self._fast:
            return self._argmax_general(f, h)
        # every arm and pair played, n_(i,i) = n_i: the same floats as the general path (see
        # _argmax_general) with the maxima by 1 and the masks dropped, and G's diagonal
        # (Sigma n2 + Sigma n) + 1 = Sigma (2 n2) + 1 (doubling is exact)
        n = self.n
        mu = self.sy / FIXED_POINT_SCALE / n
        N = self.N
        S_hat = self.syy / FIXED_POINT_SCALE / N
        bonus = 5.0 * h / np.sqrt(N)
        bonus += h * h / N
        bonus += 1.0 / N**2
        bonus /= 4.0
        Sigma_bar = S_hat - mu.take(self.I, axis=1) * mu.take(self.J, axis=1)
        Sigma_bar += bonus
        Gp = Sigma_bar * self.N2w
        Gp += self.eye
        x = 1.0 / n
        Bp = x.take(self.I, axis=1) * Gp
        Bp *= x.take(self.J, axis=1)
        return self._choose(Bp, mu, f, h)

    def _argmax_general(self, f: float, h: float) -> np.ndarray:
        """The same with unplayed arms or pairs (``CovStats.index_parts``, elementwise)."""
        n, n2 = self.n, self.N
        mu = self.sy / FIXED_POINT_SCALE / np.maximum(n, 1)
        N = np.maximum(n2, 1).astype(float)
        S_hat = self.syy / FIXED_POINT_SCALE / N
        bonus = (5.0 * h / np.sqrt(N) + h * h / N + 1.0 / N**2) / 4.0
        Sigma_bar = np.where(n2 > 0, S_hat - mu[:, self.I] * mu[:, self.J] + bonus, 0.0)
        Gp = Sigma_bar * n2
        dg = self.diag
        Gp[:, dg] = (Gp[:, dg] + Sigma_bar[:, dg] * n) + 1.0
        unplayed = n == 0
        x = np.where(unplayed, 0.0, 1.0 / np.maximum(n, 1))
        Bp = x[:, self.I] * Gp * x[:, self.J]
        return self._choose(Bp, mu, f, h, unplayed if unplayed.any() else None)

    def _choose(
        self,
        Bp: np.ndarray,
        mu: np.ndarray,
        f: float,
        h: float,
        unplayed: np.ndarray | None = None,
    ) -> np.ndarray:
        """Score the actions from ``B`` on the pairs, refine near-ties with the reference."""
        q = Bp @ self.Wq if self._dense else Bp.take(self.pairs, axis=1) @ self._wq
        np.maximum(q, 0.0, out=q)
        root = np.sqrt(q)
        v = mu @ self.Wl if self._dense else mu.take(self.arms, axis=1) @ self._ones
        v += f * root
        # approx_index's bound (see its docstring), the largest over the repetitions (a larger
        # bound only makes more rows near-ties, never a wrong answer)
        af = abs(f)
        q_err = self._q_c * max(float(Bp.max()), -float(Bp.min()))
        q_min = float(q.min())
        if q_min >= 4.0 * q_err and q_min > 0.0:
            s_err = q_err / math.sqrt(q_min)
        else:
            s_err = math.sqrt(3.0 * q_err)
        labs = self.k * max(float(mu.max()), -float(mu.min()))
        bound = self._lin_c * (labs + af * float(root.max())) + af * s_err + 1e-300
        if unplayed is not None:
            v[np.take(unplayed, self.arms, axis=1).any(axis=2)] = np.inf
        rows = v.argmax(axis=1)
        thr = v[self._r, rows]
        thr -= 2.0 * bound  # a finite float (or NaN): no invalid operation to silence
        near = v >= thr[:, None]  # comparisons with NaN are False, without a warning
        # without NaN each repetition's best row is near itself: R near rows in all means no
        # other row is within twice the bound of its best (the usual round: one count)
        if np.count_nonzero(near) != self.R or math.isnan(float(thr.sum())):
            close = np.count_nonzero(near, axis=1)
            for r in np.flatnonzero(close != 1).tolist():
                mu_r, G_r, inv_r = self.stats_of(r).index_parts(h)
                rows[r] = int(np.argmax(index_values(self.Af, mu_r, G_r, inv_r, f)))
                self.refined += 1
        return rows

    def add(self, rows: np.ndarray, y: np.ndarray) -> None:
        """Add one round: repetition ``r`` played action ``rows[r]`` and saw ``y[r]`` (k,)."""
        self._Cf[self._c_base + self._c_cols[rows]] += self._c_inc[rows]
        # [y_a | y_a y_b for a <= b] in fixed point: to_fixed of each, as CovStats.add_fixed
        yy = self._yy
        yy[:, : self.k] = y
        np.multiply(y[:, self.ka], y[:, self.kb], out=yy[:, self.k :])
        # to_fixed(yy) without its asarray (yy is float64)
        self._Sf[self._s_base + self._s_cols[rows]] += np.rint(yy * FIXED_POINT_SCALE).astype(
            np.int64
        )
        if not self._fast:
            self._check_fast()

    def _check_fast(self) -> None:
        """Switch to the fast path once every pair is played (then every arm is too)."""
        self._fast = bool(self.N.all()) and np.array_equal(self.N[:, self.diag], self.n)

"""The fast engine of semiparametric Thompson sampling (Kim & Paik, ICML 2019).

The algorithm itself, round by round, is
:mod:`dashboard.algorithms.semiparametric.textbook.spts`; the engine below reproduces its
numbers exactly (``tests/unit/test_textbook_equals_fast.py``).

Each round t, with ``B`` (initially ``I_d``) and ``y`` (initially 0):

1. ``mu_hat = B^-1 y``; draw ``mu~ ~ N(mu_hat, v^2 B^-1)`` and play ``a_t = argmax_i x_i^T mu~``;
2. the action probabilities ``pi_{i,t} = P(a_t = i | H_{t-1})`` have no closed form: they are
   estimated by Monte Carlo with ``n_mc`` further independent draws of ``mu~`` (GUIDE
   section 3); ``xbar_t = sum_i pi_{i,t} x_i``;
3. ``B <- B + (x_{a_t} - xbar_t)(x_{a_t} - xbar_t)^T
   + sum_i pi_{i,t} (x_i - xbar_t)(x_i - xbar_t)^T``
   and ``y <- y + 2 (x_{a_t} - xbar_t) r_t`` (the expected-covariance term doubles the centred
   Gram matrix, hence the factor 2).

Exploration ``v = c sqrt(d log T)`` with ``c in {1, 2, 4, 8}`` tuned (Appendix I of the
experimental-design paper).  All draws are counter based at round t, so the numbers do not
depend on chunking.

:class:`BatchedSemiparametricTS` runs ``R`` repetitions at once (stacked Cholesky factors and
products); :class:`SemiparametricTS` here (the textbook class's fast stand-in for one
repetition) is that engine with ``R = 1``, so both give identical numbers.  The exact draws
use ``L^-1`` from a stacked LU solve (``numpy.linalg.inv``, lower triangle kept), computed
for the repetitions that need them only; at ``d >=`` :data:`TRIANGULAR_MIN_D` the certified
scores use LAPACK ``trtri`` per repetition instead (7 against 3 us per factor at d = 20),
and the certificate's slack includes the two inverses' difference (a bound in ``d``, ``T``
and ``max ||x||``; it adds ~3e-10 to the 1e-9 rounding
slack at the paper's d = 20, T = 10^5).

Per-round overhead (issue 9, ``reproduce``'s SP-TS tasks): the table normals of a whole window
of rounds are computed in one pass when its uniforms are drawn (they do not depend on the
state), the stacked Cholesky factor and inverse call numpy's LAPACK gufuncs directly (the
calls of ``numpy.linalg.cholesky`` / ``inv``, without their per-call checks), each draw's K
scores form a column (R, K, n_mc + 1), so that the certificate reduces over the arms
elementwise and counts the arms from its own comparison (no arg-max over short rows), and the
certificate's per-round scratch is preallocated; the window's table normals are stored with
each round's draws as columns and a row of ones, so that one product per repetition gives every
draw's scores, posterior mean included (a contiguous operand, and one pass over the (R, K,
n_mc + 1) scores fewer: ~1.15x per round at R = 80), the counts are summed as bytes, and the
scores are stored arm by arm (K, R, n_mc + 1), so that the certificate's reductions over the
arms run along long rows (1.07x per round at d = 20, 1.12x at d = 5, side by side); every
LAPACK/BLAS call of the exact draws and of the update, its inputs, their memory layout and
their order are unchanged (``benchmarks/former_reproduce.py`` keeps the former
engine, ``tests/unit/test_spts_engine_former.py`` compares the two).  Repetitions that share
a stream (the same seed and repetition id: panels that differ only in the shift, batched
together by ``simulation/shared_batch.py``) draw each window of uniforms and table normals
once.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.linalg import _umath_linalg
from scipy.linalg.lapack import dtrtri
from scipy.special import ndtri

from ... import randomness as rnd
from ...base import validate_int, validate_positive
from ..textbook import spts as textbook
from .certified_argmax import (
    ROUNDING_SLACK,
    approx_normal,
    certify,
    feature_norms,
    thresholds,
)
from .per_round import WINDOW_VALUES, PerRoundBatch, single_advance, single_reset

__all__ = ["BatchedSemiparametricTS", "SemiparametricTS"]


def stacked_cholesky(B: np.ndarray) -> np.ndarray:
    """The Cholesky factors ``L`` of a stack ``B = L L^T`` (R, d, d): the LAPACK gufunc behind
    ``numpy.linalg.cholesky`` (the same call, so the same numbers) without that function's
    per-call type checks (``B`` is float64, C-contiguous).  A factorisation that fails fills
    its factor with NaN (numpy's convention): LinAlgError then, as ``numpy.linalg.cholesky``
    would raise."""
    with np.errstate(invalid="ignore"):
        L = _umath_linalg.cholesky_lo(B, signature="d->d")
    if np.isnan(L[:, 0, 0]).any():
        raise np.linalg.LinAlgError("B is not positive definite: Matrix is not positive definite")
    return L


def stacked_inverse(L: np.ndarray) -> np.ndarray:
    """``L^-1`` per factor of the stack ``L`` (R, d, d): the gufunc behind ``numpy.linalg.inv``
    (an LU solve; the same call, so the same numbers; its upper triangle is zero up to
    rounding).  The exact draws use it, row for row as before."""
    return _umath_linalg.inv(L, signature="d->d")


#: Smallest ``d`` at which SP-TS's certified scores use :func:`triangular_inverses`: below it
#: the one stacked gufunc call (:func:`stacked_inverse`, ~1 us per factor at d = 5) is
#: cheaper than a LAPACK call per repetition (~1.5 us); at d = 20 the per-repetition
#: triangular inverses take ~3 us against ~7 us (measured, one core).
TRIANGULAR_MIN_D = 10


def triangular_inverses(L: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``L^-1`` per lower-triangular factor of the stack ``L`` (R, d, d) into ``out`` (same
    shape, C-contiguous), by LAPACK ``dtrtri`` in place, one call per factor (scipy's
    wrapper; ``out[r].T`` is the Fortran-ordered upper factor ``L^T``, whose inverse is
    ``(L^-1)^T``).  The same matrix as :func:`stacked_inverse` up to rounding (both within
    ``c d u kappa(L) ||L^-1||`` of it, Higham 2002, ch. 8 and 14), with exact zeros above
    the diagonal."""
    np.copyto(out, L)
    for r in range(L.shape[0]):
        _, info = dtrtri(out[r].T, lower=0, overwrite_c=1)
        if info:
            raise np.linalg.LinAlgError("B is not positive definite: singular Cholesky factor")
    return out


class BatchedSemiparametricTS(PerRoundBatch):
    """Semiparametric TS for ``R`` repetitions at once: same parameters and numbers as
    :class:`SemiparametricTS`, state ``B (R, d, d)`` and ``y (R, d)``.

    Each round, for every repetition at once: the Cholesky factor ``B = L L^T`` and
    ``L^-1`` (stacked LAPACK calls, one per repetition), ``mu_hat = L^-T L^-1 y``, the
    ``n_mc + 1`` draws ``mu~ = mu_hat + v L^-T z`` with ``z`` the standard normals of the stream
    ``(seed, rep, "SP-TS", "draws")`` at counters ``t (n_mc+1) d ..`` (the first draw is played,
    the other ``n_mc`` estimate ``pi_t``), then the rank-``(K+1)`` update of ``B`` and ``y``
    (Kim & Paik 2019; see the module docstring).  ``B`` changes by a sum of ``K + 1`` outer
    products each round, so it is re-factorised rather than updated by Sherman-Morrison.

    The draws matter only through their arg-maxima: they are first scored with table normals
    and the arg-maxima certified against the exact ones; a repetition with a close call is
    recomputed exactly (:mod:`.certified_argmax`; ``recomputed`` counts those repetition-rounds).
    Every arm and Monte Carlo count, hence every number, is the exact computation's.

    Parameters
    ----------
    c, n_mc
        As :class:`SemiparametricTS`.
    """

    name = "SP-TS"
    #: The textbook algorithm whose numbers this engine reproduces (the registry links them).
    speeds_up = "SP-TS"
    purpose = textbook.SemiparametricTS.purpose
    randomised = True
    #: Appendix I's c may differ per repetition (``v`` is then an array): the streams do not
    #: depend on it, so one engine over the four values of c draws each window once.
    per_repetition = ("c",)
    #: Arg-maxima from table normals, certified, exact recomputation where not (the same
    #: numbers either way; ``False`` runs the exact computation for every repetition).
    certify: bool = True

    def __init__(self, c: float = 1.0, n_mc: int = 100) -> None:
        super().__init__()
        self.c = validate_positive("c", c)
        self.n_mc = validate_int("n_mc", n_mc, 1, 100_000)

    def params(self) -> dict[str, Any]:
        """Tunable parameters."""
        return {"c": self.c, "n_mc": self.n_mc}

    def _reset_state(self) -> None:
        R, d = self.R, self.d
        root = math.sqrt(d * math.log(max(self.horizon, 2)))
        #: v = c sqrt(d log T) per repetition, (R,) (each the float the scalar formula gives)
        self.v = np.array([c * root for c in self.constant("c")])
        self._inv_v = (1.0 / self.v)[:, None, None]
        self.B = np.repeat(np.eye(d)[None], R, axis=0)
        self.y = np.zeros((R, d))
        keys = np.array(
            [rnd.stream_key(e.seed, e.rep, "SP-TS", "draws") for e in self.envs], dtype=np.uint64
        )
        # repetitions of one stream (panels that differ only in the shift, batched together:
        # simulation/shared_batch.py) draw the same numbers: each stream's window is drawn
        # once and read by every repetition of it (row_of[r]: repetition r's stream row)
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        self._row_of: np.ndarray | None = None
        if first.size < R:
            order = np.argsort(first)
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            keys, self._row_of = keys[np.sort(first)], rank[inverse.reshape(-1)]
        self._keys = keys
        self._nd = (self.n_mc + 1) * d
        self._z_w = max(1, WINDOW_VALUES // (self._nd * keys.size))
        self._u: np.ndarray | None = None
        self._u_one = np.zeros((0, R), dtype=bool)
        self._u_any: list[bool] = []
        self._u_t0 = 0
        self.recomputed = 0
        self._XT = np.ascontiguousarray(self.X.T)
        self._vX = self.v[:, None, None] * self.X  # (R, K, d)
        self._offsets = (np.arange(R, dtype=np.int64) * self.K)[:, None]
        self._norms = feature_norms(self.X)
        # certified scores from per-repetition triangular inverses at d >= TRIANGULAR_MIN_D
        # (the exact draws keep numpy's LU inverse, for their repetitions only); the two
        # inverses differ by at most 2 c d u kappa(L) with ||L^-1|| <= 1 and kappa(L) <=
        # sqrt(trace B) <= sqrt(d + 8 T max||x||^2) (each round adds at most 8 max||x||^2 to
        # the trace), c = d: a difference of two scores moves by at most 4 times that times
        # the terms' bound S (certified_argmax.thresholds), added to the rounding slack
        self._triangular = d >= TRIANGULAR_MIN_D
        self._inv_buf = np.empty((R, d, d)) if self._triangular else None
        self._slack = ROUNDING_SLACK
        if self._triangular:
            kappa = math.sqrt(d + 8.0 * self.horizon * self._norms[0] ** 2)
            self._slack += 8.0 * d * d * 2.0**-53 * kappa
        # scratch of the certified path, allocated once per run (none in the round loop):
        # the window's table normals and their work arrays, L^-1 (v X^T), the scores
        S, n, U = self.n_mc + 1, self._z_w * self._nd, keys.size
        self._z_buf = np.empty((U, n))
        self._z_work = np.empty((2, U, n))
        # the window's table normals with each round's draws as columns and a last row of
        # ones, (W, U, d + 1, S): BLAS multiplies a contiguous (d + 1, S) operand ~1.7x faster
        # than a transposed view, and the row of ones adds the posterior means' scores (the
        # last column of _MT) inside the same product, not in another pass over the scores
        self._zT = np.empty((self._z_w, U, d + 1, S))
        self._zT[:, :, d, :] = 1.0
        # each repetition's table normals, gathered from its stream's (see _round_scores)
        self._z_round = np.empty((R, d + 1, S)) if self._row_of is not None else None
        # repetitions that are whole copies of the U streams in order (a shared batch's
        # panels): scored block by block from the streams' normals, without gathering them
        self._tiles = 0
        if self._row_of is not None and R % U == 0:
            if np.array_equal(self._row_of, np.tile(np.arange(U), R // U)):
                self._tiles = R // U
        # per repetition, (L^-1 v X^T)^T and the scores with one column per draw, (R, K, S),
        # stored arm by arm, (K, R, S): the certificate's maximum over the arms and its
        # comparison then run along rows of R S values, not S (~2.7x and ~1.3x faster at
        # R = 40, S = 101; BLAS writes each repetition's (K, S) block with a row stride of
        # R S, the same numbers)
        K = self.K
        self._MT = np.empty((R, K, d + 1))
        self._scores_km = np.empty((K, R, S))  # its views are taken per round (_round_scores)
        self._close = np.empty((K, R, S), dtype=bool).transpose(1, 0, 2)
        # the Monte Carlo counts are summed as small integers (exact): bytes for n_mc <= 255
        # (the bools' own memory, no cast: ~1.8x faster than int16), else int16 or int64
        self._count_type = next(
            t for t in (np.uint8, np.int16, np.int64) if S - 1 <= np.iinfo(t).max
        )
        self._counts = np.empty((R, K), dtype=self._count_type)

    def _uniforms(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Uniforms of round ``t`` per stream, shape ``(U, n_mc + 1, d)`` (``U`` streams; row
        ``r`` is repetition ``r``'s unless repetitions share streams, see :meth:`_rows`; their
        ``ndtri`` are the draws' standard normals), and per repetition whether one of them is
        exactly 1.  Round t of a stream uses its counters ``t nd .. t nd + nd - 1``, ``nd =
        (n_mc+1) d``, so a window of ``W`` rounds is one run of ``W nd`` consecutive counters
        per stream.  With :attr:`certify`, the window's table normals
        (:func:`.approx_normal`) are computed with its uniforms, in one pass, and
        :meth:`_table_normals` reads round ``t``'s."""
        i = t - self._u_t0
        if self._u is None or i >= self._u.shape[0] or i < 0:
            W, U = self._z_w, self._keys.size
            u = rnd.uniform_run(self._keys, t * self._nd, W * self._nd)  # (U, W nd)
            one = (u == 1.0).reshape(U, W, self._nd).any(axis=2).T  # (W, U)
            self._u_one = one if self._row_of is None else one[:, self._row_of]  # (W, R)
            self._u_any = self._u_one.any(axis=1).tolist()  # per round: any repetition
            # (W, U, n_mc + 1, d): a view, round i's draws u[i] are U contiguous pieces
            self._u = u.reshape(U, W, self.n_mc + 1, self.d).transpose(1, 0, 2, 3)
            if self.certify:
                z = approx_normal(u, out=self._z_buf, work=self._z_work)
                z = z.reshape(U, W, self.n_mc + 1, self.d).transpose(1, 0, 3, 2)
                np.copyto(self._zT[:, :, : self.d], z)
            self._u_t0, i = t, 0
        return self._u[i], self._u_one[i]

    def _rows(self, reps: np.ndarray) -> np.ndarray:
        """Rows of :meth:`_uniforms`'s array that hold repetitions ``reps``' draws."""
        return reps if self._row_of is None else self._row_of[reps]

    def _round_scores(self, t: int, MT: np.ndarray) -> np.ndarray:
        """``MT[r] [z_r^T; 1]`` for every repetition ``r``, ``(R, K, n_mc+1)``, with ``z_r``
        its table normals of round ``t`` (after :meth:`_uniforms` of ``t``; ``MT`` (R, K,
        d + 1), its last column the posterior means' scores; ``[z_r^T; 1]`` (d + 1, n_mc+1)
        is contiguous, as BLAS multiplies it fastest), into a buffer reused every round.
        Repetitions that are whole copies of the streams (a shared batch's panels) multiply
        the streams' own normals, broadcast, without gathering them."""
        z, base = self._zT[t - self._u_t0], self._scores_km
        out = base.transpose(1, 0, 2)  # (R, K, S), stored arm by arm
        if self._row_of is None:
            return np.matmul(MT, z, out=out)
        if self._tiles:  # R = tiles x U repetitions, the streams in order
            U, K, d = self._keys.size, self.K, self.d
            blocks = MT.reshape(self._tiles, U, K, d + 1)
            # the same memory as (tiles, U, K, S): a view of the contiguous (K, R, S) buffer
            tiles = base.reshape(K, self._tiles, U, -1).transpose(1, 2, 0, 3)
            np.matmul(blocks, z, out=tiles)
            return out
        z = np.take(z, self._row_of, axis=0, out=self._z_round)
        return np.matmul(MT, z, out=out)

    def _decide(self) -> tuple[np.ndarray, np.ndarray]:
        if self._cache_t == self.t:
            return self._a, self._pi
        L = stacked_cholesky(self.B)  # B = L L^T
        u, has_one = self._uniforms(self.t + 1)  # (U, n_mc + 1, d), per stream
        y = self.y[:, :, None]
        inv_L = None  # numpy's L^-1 of every repetition (the exact draws' own), if computed
        if self.certify:
            if self._triangular:
                tri = triangular_inverses(L, self._inv_buf)
            else:
                tri = inv_L = stacked_inverse(L)
            # scores x_i^T mu~ from table normals; arg-maxima certified (certified_argmax.py).
            # With w = L^-1 y / v, mu_hat = v L^-T w and mu~ = mu_hat + v L^-T z, so
            # x_i^T mu~ = (v x_i)^T L^-T (z + w): one product per repetition, one column of
            # K scores per draw (v folded into X once per run; the same scores up to
            # rounding, inside the certificate's slack).  _MT's last column is the posterior
            # means' scores (v x_i)^T L^-T w, added to every draw's by the table's row of ones
            d = self.d
            w = np.matmul(tri, y)
            w *= self._inv_v
            MT = np.matmul(self._vX, tri.transpose(0, 2, 1), out=self._MT[:, :, :d])
            np.matmul(MT, w, out=self._MT[:, :, d:])
            scores = self._round_scores(self.t + 1, self._MT)  # (R, K, S)
            size = thresholds(self.v, w[:, :, 0], self.X, self._norms, self._slack)
            close, ok, all_ok = certify(scores, size, self._close)
            # a certified draw has one score within the threshold of its maximum, the
            # maximum: its arm is the draw's arg-max (draw 0 is played, 1..n_mc are counted)
            a = close[:, :, 0].argmax(axis=1)
            draws = close.view(np.uint8)[:, :, 1:]  # the bools as bytes, 0 or 1
            # into C order: reduced in close's (K, R) order, pi would reach the B update's
            # products in another memory layout (another BLAS path, other roundings)
            counts = np.add.reduce(draws, axis=2, dtype=self._count_type, out=self._counts)
            if all_ok and not self._u_any[self.t + 1 - self._u_t0]:  # nothing to recompute
                redo = None
            else:
                redo = np.flatnonzero(~ok | has_one)
                self.recomputed += int(redo.size)
        else:
            a = np.empty(self.R, dtype=np.int64)
            counts = np.empty((self.R, self.K))
            redo = np.arange(self.R)
        if redo is not None and redo.size:
            # the exact draws: mu_hat = L^-T L^-1 y, z = ndtri(u), mu~ = mu_hat + v L^-T z
            # (covariance v^2 (L L^T)^-1 = v^2 B^-1; rows: z^T L^-1), with numpy's L^-1
            # (the gufunc treats each factor on its own: the same numbers for a subset)
            L_inv = np.tril(inv_L[redo] if inv_L is not None else stacked_inverse(L[redo]))
            mu_hat = (np.swapaxes(L_inv, 1, 2) @ (L_inv @ y[redo]))[:, :, 0]
            v = self.v[redo][:, None, None]
            draws = mu_hat[:, None, :] + v * (ndtri(u[self._rows(redo)]) @ L_inv)
            best = np.argmax(draws @ self._XT, axis=2)  # (redo, n_mc + 1)
            a[redo] = best[:, 0]
            n = redo.size
            flat = (best[:, 1:] + self._offsets[:n]).ravel()
            counts[redo] = np.bincount(flat, minlength=n * self.K).reshape(n, self.K)
        self._a = a
        self._pi = counts / self.n_mc
        self._cache_t = self.t
        return self._a, self._pi

    def _update(self, arms: np.ndarray, rewards: np.ndarray) -> None:
        X, pi = self.X, self._pi
        xbar = (pi[:, None, :] @ X)[:, 0, :]
        Zc = X[None, :, :] - xbar[:, None, :]  # x_i - xbar_t, (R, K, d)
        za = X[arms] - xbar
        self.B += za[:, :, None] * za[:, None, :] + (Zc * pi[:, :, None]).transpose(0, 2, 1) @ Zc
        self.y += 2.0 * za * rewards[:, None]


class SemiparametricTS(textbook.SemiparametricTS):
    """One repetition of SP-TS run by the fast engine (:class:`BatchedSemiparametricTS`,
    ``R = 1``): the textbook class's declaration, parameters and numbers; ``B``, ``y`` and
    ``v`` read the engine's state.
    """

    def __init__(self, c: float = 1.0, n_mc: int = 100) -> None:
        super().__init__(c=c, n_mc=n_mc)
        self._engine = BatchedSemiparametricTS(c=c, n_mc=n_mc)
        self.c, self.n_mc = self._engine.c, self._engine.n_mc

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env``."""
        single_reset(self, env, horizon)
        e = self._engine
        self.X, self.K, self.d, self.v = e.X, e.K, e.d, float(e.v[0])

    @property
    def B(self) -> np.ndarray:
        """``B``, shape ``(d, d)`` (a view of the engine's state)."""
        return self._engine.B[0]

    @property
    def y(self) -> np.ndarray:
        """``y``, shape ``(d,)``."""
        return self._engine.y[0]

    def action_distribution(self) -> np.ndarray:
        """Monte Carlo estimate of ``pi_{t+1}`` (the action probabilities of the next round)."""
        return self._engine.action_distributions()[0]

    def advance(self, until: int) -> int:
        """Play rounds t+1..until (every round is a decision point)."""
        return single_advance(self, until)


#: The fast engine's one-repetition policy (the runner's choice for R = 1).
BatchedSemiparametricTS.one_repetition = SemiparametricTS

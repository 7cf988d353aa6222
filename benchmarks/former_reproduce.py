"""Former implementations of the kernels sped up for ``reproduce all --scale paper`` (issue 9),
and a side-by-side harness: one paper task (one algorithm of one figure's panel, R = 10
repetitions, a reduced horizon) run with the former kernels patched in and with the current
ones, interleaved in one process, timed in process CPU seconds (the machine is shared), with a
check that both give the same record bit for bit (wall times aside).

Used by ``bench_cmab.py --reproduce`` (SDCB, OLS-UCB-C) and ``bench_batched.py --reproduce``
(SP-TS).  The copies below are the code as it was before each change, verbatim up to names.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from scipy.special import ndtri

from dashboard.algorithms import randomness as rnd
from dashboard.algorithms.cmab.policies import batched as cmab_batched
from dashboard.algorithms.cmab.policies import covariance_index, gr_batch, gr_stats
from dashboard.algorithms.cmab.rewards import aggregate
from dashboard.algorithms.cmab.rewards.laws import expected_aggregate
from dashboard.algorithms.semiparametric.policies import spts
from dashboard.algorithms.semiparametric.policies.certified_argmax import (
    ROUNDING_SLACK,
    TABLE_ERROR,
    Z_MAX,
    approx_normal,
    feature_norms,
)


# ----------------------------------------------------------------------------- SDCB (gr_batch)
def _former_lattice(
    grid: np.ndarray, rtol: float = 1e-12
) -> tuple[float, float, np.ndarray, float] | None:
    """``lattice`` before the cache: recomputed on every call."""
    return aggregate._lattice(np.asarray(grid, dtype=float), rtol)


def _former_law_ids(P: np.ndarray) -> np.ndarray:
    R, d, G = P.shape
    flat = np.ascontiguousarray(P).reshape(-1, G)
    ids = np.unique(flat.view(np.dtype((np.void, 8 * G))).ravel(), return_inverse=True)[1]
    return np.asarray(ids).reshape(R, d)


def _former_resolve_ties(
    grid: np.ndarray,
    P: np.ndarray,
    arms: np.ndarray,
    kind: str,
    owner: np.ndarray,
    close: np.ndarray,
    rows: np.ndarray,
    todo: np.ndarray,
) -> int:
    k = arms.shape[1]
    used = np.unique(owner[todo])
    law = np.zeros((P.shape[0], P.shape[1]), dtype=np.int64)
    law[used] = _former_law_ids(P[used])
    law = law[owner[todo]]
    N = int(law.max()) + 2
    if float(N) ** k < 2.0**62:
        code = law[:, arms[:, 0]]
        for j in range(1, k):
            code = code + law[:, arms[:, j]] * N**j
        near = close[todo]
        lo = np.where(near, code, np.iinfo(np.int64).max).min(axis=1)
        hi = np.where(near, code, -1).max(axis=1)
        single = lo == hi
        rows[todo[single]] = np.argmax(close[todo[single]], axis=1)
        keep = ~single
        todo, law = todo[keep], law[keep]
    reevaluated = 0
    for q, r in enumerate(todo):
        cand = np.flatnonzero(close[r])
        _, first_idx = np.unique(law[q][arms[cand]], axis=0, return_index=True)
        cand = cand[np.sort(first_idx)]
        if cand.size == 1:
            rows[r] = cand[0]
            continue
        laws = gr_batch.exact_laws(grid, P[owner[r]])
        vals = [
            expected_aggregate([laws[i][0] for i in a], [laws[i][1] for i in a], kind)
            for a in arms[cand]
        ]
        rows[r] = cand[int(np.argmax(vals))]
        reevaluated += cand.size
    return reevaluated


def _former_optimistic_dense(
    counts: np.ndarray, n: np.ndarray, C: float, log_term: float | np.ndarray
) -> np.ndarray:
    rho, F = gr_batch._empirical_cdf_and_width(counts, n, C, log_term)
    Fu = np.maximum(F[..., :-1] - rho[..., None], 0.0)
    P = np.diff(Fu, axis=2, prepend=0.0, append=1.0)
    point = (n == 0) | (rho >= 1.0)
    P[point] = 0.0
    P[point, -1] = 1.0
    return P


def _former_hankel(kind: str, k: int, b: float, h: float, Lp: int, L: int) -> np.ndarray:
    s = np.arange(Lp)[:, None] + np.arange(L)[None, :]
    return aggregate._g(kind, k * b + h * s)


def _former_grid_scale(grid: np.ndarray) -> float:
    return float(np.max(np.abs(grid)))


def _sdcb_patches() -> list[tuple[Any, str, Any]]:
    return [
        (aggregate, "_hankel", _former_hankel),
        (gr_batch, "_grid_scale", _former_grid_scale),
        (cmab_batched, "optimistic_dense", _former_optimistic_dense),
        (gr_batch, "_resolve_ties", _former_resolve_ties),
        (gr_batch, "law_ids", _former_law_ids),
        (gr_batch, "lattice", _former_lattice),
        (aggregate, "lattice", _former_lattice),
        (cmab_batched, "lattice", _former_lattice),
        (gr_stats, "lattice", _former_lattice),
    ]


# ----------------------------------------------------------------------------- SP-TS (spts)
# The engine before this session's per-round work (issue 9, second round): table normals per
# round, ``numpy.linalg.cholesky`` / ``inv``, the certificate's former thresholds and
# count.  (The first round's row, ``v`` folded into ``X^T``, is in the git history.)
def _former_spts_reset_state(self: Any) -> None:
    R, d = self.R, self.d
    self.v = self.c * math.sqrt(d * math.log(max(self.horizon, 2)))
    self.B = np.repeat(np.eye(d)[None], R, axis=0)
    self.y = np.zeros((R, d))
    self._keys = np.array(
        [rnd.stream_key(e.seed, e.rep, "SP-TS", "draws") for e in self.envs], dtype=np.uint64
    )
    self._nd = (self.n_mc + 1) * d
    self._z_w = max(1, spts.WINDOW_VALUES // (self._nd * R))
    self._u: np.ndarray | None = None
    self._u_one = np.zeros((0, R), dtype=bool)
    self._u_t0 = 0
    self.recomputed = 0
    self._XT = np.ascontiguousarray(self.X.T)
    self._vXT = self.v * self._XT
    self._offsets = (np.arange(R, dtype=np.int64) * self.K)[:, None]
    self._norms = feature_norms(self.X)
    # per-round scratch of the certified path (no large allocation in the round loop)
    S = self.n_mc + 1
    self._z_buf = np.empty((R, S, d))
    self._z_work = np.empty((2, R, S, d))
    self._scores = np.empty((R, S, self.K))


def _former_spts_uniforms(self: Any, t: int) -> tuple[np.ndarray, np.ndarray]:
    i = t - self._u_t0
    if self._u is None or i >= self._u.shape[0] or i < 0:
        W, R = self._z_w, self.R
        u = rnd.uniform_run(self._keys, t * self._nd, W * self._nd)  # (R, W nd)
        self._u_one = (u == 1.0).reshape(R, W, self._nd).any(axis=2).T  # (W, R)
        # (W, R, n_mc + 1, d): a view, round i's draws u[i] are R contiguous pieces
        self._u = u.reshape(R, W, self.n_mc + 1, self.d).transpose(1, 0, 2, 3)
        self._u_t0, i = t, 0
    return self._u[i], self._u_one[i]


def _former_spts_decide(self: Any) -> tuple[np.ndarray, np.ndarray]:
    if self._cache_t == self.t:
        return self._a, self._pi
    try:
        L = np.linalg.cholesky(self.B)  # B = L L^T, (R, d, d)
    except np.linalg.LinAlgError as err:
        raise np.linalg.LinAlgError(f"B is not positive definite: {err}") from None
    inv_L = np.linalg.inv(L)  # L^-1 (its upper triangle zero up to rounding)
    u, has_one = self._uniforms(self.t + 1)  # (R, n_mc + 1, d)
    y = self.y[:, :, None]
    if self.certify:
        # scores x_i^T mu~ from table normals; arg-maxima certified (certified_argmax.py)
        mu = (np.swapaxes(inv_L, 1, 2) @ (inv_L @ y))[:, :, 0]  # B^-1 y up to rounding
        z = approx_normal(u, out=self._z_buf, work=self._z_work)
        # x_i^T (mu~ - mu_hat) = z^T L^-1 (v x_i) (v folded into X^T once per run: the
        # same numbers up to rounding, inside the certificate's slack)
        scores = np.matmul(z, inv_L @ self._vXT, out=self._scores)
        scores += (mu @ self._XT)[:, None, :]
        best, ok = _former_certified_best(
            scores, _former_thresholds(self.v, mu, self.X, self._norms)
        )
        redo = np.flatnonzero(~ok | has_one)
        self.recomputed += int(redo.size)
    else:
        best = np.empty((self.R, self.n_mc + 1), dtype=np.int64)
        redo = np.arange(self.R)
    if redo.size:
        # the exact draws: mu_hat = L^-T L^-1 y, z = ndtri(u), mu~ = mu_hat + v L^-T z
        # (covariance v^2 (L L^T)^-1 = v^2 B^-1; rows: z^T L^-1)
        L_inv = np.tril(inv_L[redo])
        mu_hat = (np.swapaxes(L_inv, 1, 2) @ (L_inv @ y[redo]))[:, :, 0]
        draws = mu_hat[:, None, :] + self.v * (ndtri(u[redo]) @ L_inv)
        best[redo] = np.argmax(draws @ self._XT, axis=2)  # (R, n_mc + 1)
    self._a = best[:, 0]
    counts = np.bincount((best[:, 1:] + self._offsets).ravel(), minlength=self.R * self.K)
    self._pi = counts.reshape(self.R, self.K) / self.n_mc
    self._cache_t = self.t
    return self._a, self._pi


def _former_spts_update(self: Any, arms: np.ndarray, rewards: np.ndarray) -> None:
    X, pi = self.X, self._pi
    xbar = (pi[:, None, :] @ X)[:, 0, :]
    Zc = X[None, :, :] - xbar[:, None, :]  # x_i - xbar_t, (R, K, d)
    za = X[arms] - xbar
    self.B += za[:, :, None] * za[:, None, :] + np.swapaxes(Zc * pi[:, :, None], 1, 2) @ Zc
    self.y += 2.0 * za * rewards[:, None]


def _former_thresholds(
    v: float, mu_hat: np.ndarray, X: np.ndarray, norms: tuple[float, float] | None = None
) -> np.ndarray:
    d = X.shape[1]
    root_d = 1.01 * math.sqrt(d)  # 1.01: B >= I holds up to rounding
    x2, x1 = feature_norms(X) if norms is None else norms
    size = np.abs(mu_hat).max(axis=1)
    size += Z_MAX * v * root_d
    size *= x1
    size += 1.0
    size *= ROUNDING_SLACK
    size += 2.02 * v * TABLE_ERROR * root_d * x2
    return size


def _former_certified_best(
    scores: np.ndarray, threshold: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    R, S, K = scores.shape
    best = np.argmax(scores, axis=2)
    flat = best.reshape(-1) + np.arange(0, R * S * K, K)
    top = scores.reshape(-1).take(flat).reshape(R, S)
    finite = np.isfinite(top).all(axis=1)
    top -= threshold[:, None]
    close = scores > top[:, :, None]
    if finite.all() and (threshold > 0).all() and np.count_nonzero(close) == R * S:
        return best, finite
    # each finite maximum counts itself: the total is S exactly when no runner-up is close
    return best, finite & (close.reshape(R, -1).sum(axis=1) == S)


def _spts_patches() -> list[tuple[Any, str, Any]]:
    cls = spts.BatchedSemiparametricTS
    return [
        (cls, "_reset_state", _former_spts_reset_state),
        (cls, "_uniforms", _former_spts_uniforms),
        (cls, "_decide", _former_spts_decide),
        (cls, "_update", _former_spts_update),
    ]


# ------------------------------------------------------------------- OLS-UCB-C (batched.py)
def _former_ols_outcomes(
    self: Any, actions: np.ndarray, rows: np.ndarray, arms: np.ndarray, t: int
) -> np.ndarray:
    """The former ``_outcomes`` (``rows`` unused): a normal draw per round, a product and a
    pull update per repetition."""
    from dashboard.algorithms import randomness as rnd

    if not self._gauss:
        return np.stack([e.play_fixed(a, t, 1)[0] for e, a in zip(self.envs, actions)])
    model = self.model
    z = rnd.normal(self._keys[:, : arms.shape[1]], t)
    y = np.empty(arms.shape)
    for r in range(self.R):
        a = arms[r]
        y[r] = (model.mu[a][None, :] + z[r][None, :] @ model._factor(a).T)[0]
        self.envs[r].pulls[a] += 1
    return y


_EPS = covariance_index._EPS


def _former_approx_index(
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
    iu, ju = np.triu_indices(k)
    flat = arms[:, iu] * d + arms[:, ju]  # (n, k(k+1)/2): the upper triangle of each block
    weight = np.where(iu == ju, 1.0, 2.0)
    q = np.take(B, flat, axis=1) @ weight
    lin = np.take(mu, arms, axis=1) @ np.ones(k)
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


def _ols_patches() -> list[tuple[Any, str, Any]]:
    return [
        (cmab_batched.BatchedOLSUCBC, "_outcomes", _former_ols_outcomes),
        (covariance_index, "approx_index", _former_approx_index),
    ]


#: Former kernels per benchmark row: ``name -> () -> [(module, attribute, former value)]``.
FORMER: dict[str, Callable[[], list[tuple[Any, str, Any]]]] = {
    "sdcb": _sdcb_patches,
    "spts": _spts_patches,
    "ols-ucb-c": _ols_patches,
}


@contextlib.contextmanager
def former(name: str) -> Iterator[None]:
    """Install the former kernels of row ``name`` for the duration of the block."""
    patches = FORMER[name]()
    saved = [(mod, attr, getattr(mod, attr)) for mod, attr, _ in patches]
    try:
        for mod, attr, value in patches:
            setattr(mod, attr, value)
        yield
    finally:
        for mod, attr, value in saved:
            setattr(mod, attr, value)


# ----------------------------------------------------------------------------- the harness
def paper_unit(figure: str, algorithm: str, panel: int, horizon: int, runs: int) -> dict:
    """The sweep unit ``reproduce FIGURE --scale paper --tune no`` runs for ``algorithm`` on
    the figure's ``panel``-th panel, at ``horizon`` rounds and ``runs`` repetitions."""
    from dashboard.simulation.figures import get_figure
    from dashboard.simulation.tuning import panel_job

    fig = get_figure(figure)
    p = fig.panels[panel]
    spec = dict(p.spec)
    problem = spec.pop("problem")
    params = {k: dict(v) for k, v in p.params.items()}
    job = panel_job(problem, spec, list(p.algorithms), horizon, runs, 0, params=params)
    return next(u for u in job.sweep.units.values() if u["algorithm"] == algorithm)


def _numbers(rec: dict[str, Any]) -> str:
    for a in rec["algorithms"]:
        a.pop("wall_seconds", None)
        a.pop("oracle_seconds", None)
    return json.dumps(rec, sort_keys=True, default=repr)


def side_by_side(
    row: str, figure: str, algorithm: str, panel: int, horizon: int, runs: int, repeats: int
) -> dict[str, Any]:
    """CPU seconds of one paper task with the former kernels of ``row`` and with the current
    ones, interleaved (best of ``repeats`` each), their ratio, and whether the records are
    identical."""
    from dashboard.simulation.sweep import run_task

    unit = paper_unit(figure, algorithm, panel, horizon, runs)
    reps = list(range(runs))
    run_task(unit, reps[:1])  # imports and caches outside the clock
    best = {"former": float("inf"), "current": float("inf")}
    out: dict[str, str] = {}
    for _ in range(repeats):
        for which in ("former", "current"):
            ctx = former(row) if which == "former" else contextlib.nullcontext()
            with ctx:
                start = time.process_time()
                rec = run_task(unit, reps)
                best[which] = min(best[which], time.process_time() - start)
            out[which] = _numbers(rec)
    return {
        "row": row,
        "task": f"{figure} panel {panel} {algorithm}",
        "horizon": horizon,
        "runs": runs,
        "former_cpu_s": round(best["former"], 3),
        "current_cpu_s": round(best["current"], 3),
        "speedup": round(best["former"] / best["current"], 3),
        "identical": out["former"] == out["current"],
    }

"""Pure exploration with the DEO design (semiparametric paper, Section 4.2 and Appendix I.2):
the estimation error ``e_t = max_i |(x_i - x_1)^T (theta_hat_t - theta*)|`` over time, the
``semi-pac`` figure of :mod:`.figures` (:func:`pure_exploration_errors`, :class:`PACResult`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..algorithms import randomness as rnd
from ..algorithms.base import validate_int
from .runner import time_grid
from .specs import FIELDS
from .theory import estimation_error, pac_bound

__all__ = ["PACResult", "pure_exploration_errors"]


@dataclass
class PACResult:
    """``e_t`` of pure exploration with DEO (Section 4.2) over ``R`` repetitions.

    Attributes
    ----------
    d, K : int
        Dimension and number of arms.
    spec : dict
        The problem spec (shift, gap, noise ...).
    times : ndarray, shape (G,)
        Rounds ``t`` at which ``e_t`` is recorded.
    errors : ndarray, shape (R, G)
        ``e_t = max_i |(x_i - x_1)^T (theta_hat_t - theta*)|``.
    weights : ndarray, shape (K,)
        The DEO design ``p^deo`` (anchor ``x_1`` = arm ``anchor``).
    anchor : int
        The arm playing ``x_1``.
    delta : float
        Confidence level of the ridge ``beta_t = log(t / delta)``.
    """

    d: int
    K: int
    spec: dict[str, Any]
    times: np.ndarray
    errors: np.ndarray
    weights: np.ndarray
    anchor: int
    delta: float

    @property
    def runs(self) -> int:
        """Number of repetitions R."""
        return int(self.errors.shape[0])

    @property
    def scaled(self) -> np.ndarray:
        """``sqrt(t) e_t``, shape (R, G)."""
        return np.sqrt(self.times.astype(float))[None, :] * self.errors

    @property
    def bound(self) -> float:
        """The reference line of Appendix I.2, ``10 sqrt(d log K)``."""
        return pac_bound(self.d, self.K)

    def fraction_below_bound(self, t_min: int = 1) -> float:
        """Fraction of recorded (run, t >= t_min) values with ``sqrt(t) e_t <= bound``."""
        cols = self.times >= t_min
        vals = self.scaled[:, cols]
        return float(np.mean(vals <= self.bound)) if vals.size else 1.0


def pure_exploration_errors(
    X: np.ndarray,
    theta: np.ndarray,
    horizon: int,
    runs: int = 10,
    seed: int = 0,
    shift: str = "none",
    noise: float = 1.0,
    delta: float = 0.05,
    anchor: int = 0,
    times: np.ndarray | None = None,
    design_tol: float = 1e-3,
) -> PACResult:
    """Pure exploration with DEO (Section 4.2, Corollary 1): the estimation error over time.

    For each repetition ``r`` arms are drawn i.i.d. from ``p^deo`` (Algorithm 1 with anchor
    ``x_1`` = arm ``anchor``), counter-based at ``(seed, r, "DEO pure exploration", t)``, and
    rewards come from the same :class:`SemiparametricEnvironment` streams the policies see
    (noise at ``(seed, r, t)`` plus the shift).  Because the design is fixed, the
    orthogonalized estimator (Eq. 2) at round ``t`` depends only on the per-arm counts
    ``n_i(t)`` and reward sums ``R_i(t)``:
    ``theta_hat_t = (sum_i n_i z_i z_i^T + beta_t I)^-1 sum_i z_i R_i`` with
    ``z_i = x_i - xbar_p`` and ``beta_t = log(t / delta)``, so the whole curve is a few
    ``bincount``/``cumsum`` calls and one batched solve per repetition.

    Parameters
    ----------
    X : (K, d) array
        Arm features.
    theta : (d,) array
        theta*.
    horizon : int
        Number of rounds T.
    runs : int
        Repetitions R (Appendix I.2 uses 10).
    seed : int
        Seed of the arm draws and the environment's noise.
    shift : str
        Shift name (see :func:`~dashboard.algorithms.semiparametric.shifts.make_shift`).
    noise : float
        Noise standard deviation sigma.
    delta : float
        Confidence in the ridge ``beta_t = log(t / delta)``, in (0, 1).
    anchor : int
        The arm ``x_1`` of Algorithm 1 and of ``e_t``.
    times : int array, optional
        Rounds at which ``e_t`` is recorded (default :func:`time_grid`).
    design_tol : float
        Kiefer-Wolfowitz accuracy of DEO's G-optimal step.

    Returns
    -------
    PACResult
    """
    from ..algorithms.semiparametric.design import deo_design
    from ..algorithms.semiparametric.environment import SemiparametricEnvironment
    from ..algorithms.semiparametric.estimators import ridge_beta
    from ..algorithms.semiparametric.instances import SemiparametricInstance
    from ..algorithms.semiparametric.shifts import make_shift

    X = np.asarray(X, dtype=float)
    theta = np.asarray(theta, dtype=float)
    if X.ndim != 2 or theta.shape != (X.shape[1],):
        raise ValueError(
            f"X must be a (K, d) array and theta a (d,) vector, got {X.shape} and {theta.shape}"
        )
    horizon = FIELDS["horizon"].check(horizon)
    runs = FIELDS["runs"].check(runs)
    seed = FIELDS["seed"].check(seed)
    ridge_beta(1, delta)  # validates delta
    K, d = X.shape
    anchor = validate_int("anchor", anchor, 0, K - 1)
    grid = time_grid(horizon) if times is None else np.unique(np.asarray(times, dtype=np.int64))
    if grid.size == 0 or grid[0] < 1 or grid[-1] > horizon:
        raise ValueError(f"times must be rounds in 1..{horizon}")
    report = deo_design(X, anchor=anchor, tol=design_tol)
    p = np.asarray(report.weights, dtype=float)
    p = p / p.sum()
    cdf = np.cumsum(p)
    Z = X - p @ X  # centred features z_i = x_i - xbar_p
    inst = SemiparametricInstance(X, theta)
    shift_obj = make_shift(shift, seed=seed)
    t_all = np.arange(1, int(grid[-1]) + 1, dtype=np.int64)
    gidx = np.searchsorted(grid, t_all, side="left")  # round t -> first grid point >= t
    G = grid.size
    beta = np.array([ridge_beta(t, delta) for t in grid])
    eye = np.eye(d)
    errors = np.empty((runs, G))
    for r in range(runs):
        key = rnd.stream_key(seed, r, "DEO pure exploration")
        arms = rnd.categorical(key, t_all, cdf)
        env = SemiparametricEnvironment(inst, shift_obj, noise_sigma=noise, seed=seed, rep=r)
        rewards = env.play(arms, 1, p)
        flat = gidx * K + arms
        counts = np.bincount(flat, minlength=G * K).reshape(G, K).cumsum(axis=0)
        sums = np.bincount(flat, weights=rewards, minlength=G * K).reshape(G, K).cumsum(axis=0)
        V = np.einsum("gk,kd,ke->gde", counts.astype(float), Z, Z)
        b = sums @ Z
        theta_hat = np.linalg.solve(V + beta[:, None, None] * eye, b[:, :, None])[:, :, 0]
        errors[r] = estimation_error(X, theta, theta_hat, anchor)
    return PACResult(
        d=d,
        K=K,
        spec={},
        times=grid,
        errors=errors,
        weights=p,
        anchor=anchor,
        delta=float(delta),
    )

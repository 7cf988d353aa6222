"""BOSE (Krishnamurthy, Wu & Syrgkanis 2018), the per-round semiparametric baseline.

Bandit Orthogonalized Semiparametric Estimation.  Each round t:

1. ``theta_hat = Gamma^-1 b`` with ``Gamma = lambda I + sum_s x~_s x~_s^T`` and
   ``b = sum_s x~_s r_s``, ``x~_s = x_{a_s} - xbar_{p_s}`` (the orthogonalized estimator, Eq. 2
   of the experimental-design paper, here with ridge ``lambda``);
2. surviving arms
   ``A_t = {i : for all j, theta_hat^T (x_j - x_i) <= gamma ||x_j - x_i||_{Gamma^-1}}``;
3. a distribution ``p_t`` over ``A_t``; draw ``a_t ~ p_t``, observe ``r_t``, update Gamma and b.

Step 3: the paper chooses ``p_t`` by solving a min-max quadratic program each round; the
authors' public code samples uniformly over the surviving arms.  We implement the uniform
version (``distribution="uniform"``, the only value accepted), as GUIDE section 3 notes.

Constants as in Appendix I of the experimental-design paper: ``lambda = 4 d log(9T) +
8 log(4T/delta)`` and ``gamma = c (sqrt(lambda) + sqrt(d log(T/d) + log(T/delta)))`` with
``c in {1, 2, 4, 8}`` tuned.

Batched across repetitions: :class:`BatchedBOSE` runs ``R`` repetitions at once on state arrays
with a leading repetition axis (``Gamma^-1`` of shape ``(R, d, d)``, Sherman-Morrison rank-one
updates, stacked matrix products).  :class:`BOSE` (one repetition) *is* that engine with
``R = 1``, so ``R`` separate BOSE runs give exactly the numbers of one batched run.  The
machinery shared by the batched per-round baselines (feedback, regret, logs) is
:class:`PerRoundBatch`, also used by :mod:`.spts` and :mod:`.linear_foils`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ... import randomness as rnd
from ...base import ExpensiveLog, Policy, PolicyEvent
from ..shifts import ShiftContext
from .sbe import _positive, _probability

__all__ = ["BOSE", "BatchedBOSE", "PerRoundBatch"]

#: Target number of random values per pre-drawn window (keeps the arrays cache-sized).
_WINDOW_VALUES = 65536


class PerRoundBatch:
    """Engine of a per-round baseline run on ``R`` repetitions at once.

    Subclasses hold their statistics in arrays with a leading repetition axis and implement
    :meth:`_reset_state`, :meth:`_decide` (the arms and action distributions of round ``t+1``
    for every repetition) and :meth:`_update`.  Every per-repetition number is computed by
    elementwise numpy operations or *stacked* matrix products (one BLAS/LAPACK call per
    repetition, the same call whatever ``R``), so repetition ``r`` of a batch of ``R`` equals a
    batch of one on the same environment, bit for bit.

    Feedback.  For an oblivious shift the reward of round ``t`` is ``mean_rewards[a] + (noise_t
    + nu_t)`` read from pre-drawn windows of ``env.noise(t) + env.shift.values(t)`` (pure
    functions of ``(seed, rep, t)``: exactly what ``env.play`` returns), and each environment's
    ``t_played`` is kept in sync.  For an adaptive shift each repetition's environment decides
    ``nu_t`` from *that repetition's* action distribution through ``env.play`` (randomised
    learners pass ``p_t``, deterministic ones pass ``None`` and the arm).

    Attributes
    ----------
    t : int
        Rounds played (common to all repetitions).
    cum_regret : ndarray (R,)
        Exact cumulative pseudo-regret of each repetition (summed round by round).
    logs : list of ExpensiveLog
        One per repetition: one call per round (``record_every_round``), the measured wall time
        of the vectorised rounds shared equally among the repetitions.
    events : list of list of PolicyEvent
        Empty (per-round baselines have no epochs and declare no arm).
    """

    name: ClassVar[str] = ""
    problem: ClassVar[str] = "semiparametric"
    #: Purpose string of the per-round log records.
    purpose: ClassVar[str] = ""
    #: Whether the learner randomises (passes ``p_t`` to an adaptive shift) or not.
    randomised: ClassVar[bool] = True

    def __init__(self) -> None:
        self.t = 0
        self.horizon = 0
        self.R = 0
        self.envs: list[Any] = []
        self.cum_regret = np.zeros(0)
        self.logs: list[ExpensiveLog] = []
        self.events: list[list[PolicyEvent]] = []

    # ------------------------------------------------------------------ lifecycle
    def reset(self, envs: Sequence[Any], horizon: int) -> None:
        """Start ``len(envs)`` repetitions of ``horizon`` rounds.

        Parameters
        ----------
        envs : sequence of SemiparametricEnvironment
            Fresh environments (nothing played yet) sharing one feature matrix ``X``; they
            normally differ by repetition number ``rep``.
        horizon : int
            T >= 1.
        """
        envs = list(envs)
        if not envs:
            raise ValueError(f"{type(self).__name__}.reset needs at least one environment")
        try:
            T = int(horizon)
        except (TypeError, ValueError):
            raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}") from None
        if T < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        X = np.asarray(envs[0].X, dtype=float)
        for e in envs:
            if np.shape(e.X) != X.shape or not np.array_equal(np.asarray(e.X, dtype=float), X):
                raise ValueError("all environments of a batch must share one feature matrix X")
            if e.t_played != 0:
                raise ValueError(
                    f"environment rep={e.rep} has already played {e.t_played} rounds; "
                    "reset needs fresh environments"
                )
        self.envs = envs
        self.horizon = T
        self.R = R = len(envs)
        self.X = X
        self.K, self.d = X.shape
        self.t = 0
        self.cum_regret = np.zeros(R)
        self.logs = [ExpensiveLog() for _ in range(R)]
        self.events = [[] for _ in range(R)]
        self._gaps = np.stack([np.asarray(e.gaps, dtype=float) for e in envs]).reshape(-1)
        self._means = np.stack([np.asarray(e.mean_rewards, dtype=float) for e in envs])
        self._means_flat = self._means.reshape(-1)
        self._row = np.arange(R, dtype=np.int64) * self.K
        adaptive = np.array([bool(e.shift.adaptive) for e in envs])
        self._adaptive = np.flatnonzero(adaptive)
        self._oblivious = np.flatnonzero(~adaptive)
        self._noise_w = max(64, min(4096, _WINDOW_VALUES // R))
        self._noise: np.ndarray | None = None
        self._noise_t0 = 0
        self._cache_t = -1
        self._reset_state()

    def _reset_state(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _decide(self) -> tuple[np.ndarray, np.ndarray | None]:  # pragma: no cover - abstract
        """Arms ``(R,)`` and action distributions ``(R, K)`` (or None) of round ``t+1``."""
        raise NotImplementedError

    def _update(self, arms: np.ndarray, rewards: np.ndarray) -> None:  # pragma: no cover
        """Fold round ``t+1``'s arms and rewards into the statistics."""
        raise NotImplementedError

    # ------------------------------------------------------------------ feedback
    def _oblivious_window(self, t: int) -> np.ndarray:
        """``noise + nu`` of rounds ``t .. t + W - 1`` for every repetition, shape ``(R, W)``
        (rows of adaptive repetitions unused)."""
        tt = np.arange(t, t + self._noise_w, dtype=np.int64)
        out = np.zeros((self.R, tt.size))
        for r in self._oblivious:
            e = self.envs[r]
            # the environment's own expression (noise + oblivious shift), elementwise in t
            out[r] = e.noise(tt) + e.shift.values(tt, ShiftContext(rep=e.rep, best_arm=e.best_arm))
        return out

    def _feedback(self, t: int, arms: np.ndarray, probs: np.ndarray | None) -> np.ndarray:
        """Rewards ``(R,)`` of round ``t``."""
        i = t - self._noise_t0
        if self._noise is None or i >= self._noise.shape[1] or i < 0:
            self._noise = self._oblivious_window(t)
            self._noise_t0, i = t, 0
        rewards = self._means_flat[self._row + arms] + self._noise[:, i]
        for r in self._adaptive:
            p = probs[r] if (self.randomised and probs is not None) else None
            rewards[r] = self.envs[r].play(arms[r : r + 1], t, p)[0]
        return rewards

    # ------------------------------------------------------------------ playing
    def action_distributions(self) -> np.ndarray:
        """``p_{t+1}`` of every repetition, shape ``(R, K)`` (one-hot for deterministic
        learners)."""
        if not self.envs:
            raise RuntimeError("call reset(envs, horizon) first")
        arms, probs = self._decide()
        if probs is None:
            probs = np.zeros((self.R, self.K))
            probs[np.arange(self.R), arms] = 1.0
        return probs.copy()

    def advance(self, until: int) -> int:
        """Play rounds ``t+1 .. min(until, T)`` in every repetition; return the new ``t``.

        Every round is a decision point of a per-round baseline, so the whole block is played;
        never beyond ``until`` or the horizon.
        """
        if not self.envs:
            raise RuntimeError(f"{type(self).__name__}: call reset(envs, horizon) before advance()")
        until = min(int(until), self.horizon)
        if until <= self.t:
            return self.t
        start = time.perf_counter()
        t_first = self.t + 1
        cum, gaps, row = self.cum_regret, self._gaps, self._row
        while self.t < until:
            arms, probs = self._decide()
            t = self.t + 1
            rewards = self._feedback(t, arms, probs)
            self._update(arms, rewards)
            cum += gaps[row + arms]
            self.t = t
        for r in self._oblivious:
            self.envs[r].t_played = self.t
        seconds = (time.perf_counter() - start) / self.R
        for log in self.logs:
            log.record_every_round(t_first, self.t, self.purpose, seconds)
        return self.t

    def run(self, envs: Sequence[Any], horizon: int) -> PerRoundBatch:
        """Batch path: reset and play all rounds. Returns ``self``."""
        self.reset(envs, horizon)
        self.advance(horizon)
        return self


class BatchedBOSE(PerRoundBatch):
    """BOSE (uniform sampling over the surviving arms) for ``R`` repetitions at once.

    Same parameters and numbers as :class:`BOSE`; state ``Gamma_inv (R, d, d)`` and
    ``b (R, d)``.  Each round: ``theta_hat = Gamma^-1 b``, the elimination test on the
    ``(R, K, K)`` array of pairwise widths ``||x_j - x_i||_{Gamma^-1}``, the uniform draw over
    ``A_t`` from the stream ``(seed, rep, "BOSE", "arms")`` at counter ``t``, and the
    Sherman-Morrison update ``Gamma^-1 <- Gamma^-1 - Gamma^-1 x~ x~^T Gamma^-1 / (1 + x~^T
    Gamma^-1 x~)``.

    Parameters
    ----------
    c, delta, lam, distribution
        As :class:`BOSE`.

    Attributes
    ----------
    surviving : ndarray (R, K) of bool
        ``A_{t+1}`` of every repetition (after :meth:`action_distributions` or a round).
    """

    name = "BOSE"
    purpose = "elimination + update"
    randomised = True

    def __init__(
        self,
        c: float = 1.0,
        delta: float = 0.05,
        lam: float | None = None,
        distribution: str = "uniform",
    ) -> None:
        super().__init__()
        self.c = _positive("c", c)
        self.delta = _probability("delta", delta)
        self.lam = None if lam is None else _positive("lam", lam)
        if str(distribution).lower() != "uniform":
            raise ValueError(
                f"distribution must be 'uniform' (the authors' code; the paper's per-round "
                f"quadratic program is not implemented), got {distribution!r}"
            )
        self.distribution = "uniform"

    def params(self) -> dict[str, Any]:
        """Tunable parameters."""
        return {"c": self.c, "delta": self.delta, "lam": self.lam, "distribution": "uniform"}

    def _reset_state(self) -> None:
        T, d, R = self.horizon, self.d, self.R
        self.lam_value = (
            self.lam
            if self.lam is not None
            else 4 * d * math.log(9 * T) + 8 * math.log(4 * T / self.delta)
        )
        self.gamma = self.c * (
            math.sqrt(self.lam_value)
            + math.sqrt(max(d * math.log(max(T / d, 1.0)) + math.log(T / self.delta), 0.0))
        )
        self.Gamma_inv = np.repeat((np.eye(d) / self.lam_value)[None], R, axis=0)
        self.b = np.zeros((R, d))
        self._keys = np.array(
            [rnd.stream_key(e.seed, e.rep, "BOSE", "arms") for e in self.envs], dtype=np.uint64
        )
        self._u_w = max(64, min(4096, _WINDOW_VALUES // R))
        self._u: np.ndarray | None = None
        self._u_t0 = 0
        self._XT = np.ascontiguousarray(self.X.T)
        self.surviving = np.ones((R, self.K), dtype=bool)

    def _uniforms(self, t: int) -> np.ndarray:
        i = t - self._u_t0
        if self._u is None or i >= self._u.shape[1] or i < 0:
            tt = np.arange(t, t + self._u_w, dtype=np.int64)
            self._u = rnd.uniform(self._keys[:, None], tt[None, :])
            self._u_t0, i = t, 0
        return self._u[:, i]

    def _decide(self) -> tuple[np.ndarray, np.ndarray]:
        if self._cache_t == self.t:
            return self._a, self._p
        X, G = self.X, self.Gamma_inv
        theta = (G @ self.b[:, :, None])[:, :, 0]  # theta_hat = Gamma^-1 b, (R, d)
        m = (X @ theta[:, :, None])[:, :, 0]  # x_i^T theta_hat, (R, K)
        M = (X @ G) @ self._XT  # x_i^T Gamma^-1 x_j, (R, K, K)
        diag = np.diagonal(M, axis1=1, axis2=2)
        # gamma ||x_j - x_i||_{Gamma^-1} = gamma sqrt(M_ii + M_jj - 2 M_ij), computed in place
        width = diag[:, :, None] + diag[:, None, :]
        M *= 2.0
        width -= M
        np.maximum(width, 0.0, out=width)
        np.sqrt(width, out=width)
        width *= self.gamma
        # dominated[r, i]: some j has theta^T (x_j - x_i) > gamma ||x_j - x_i||_{Gamma^-1}
        diff = m[:, None, :] - m[:, :, None]
        dominated = (diff > width).any(axis=2)
        surv = ~dominated
        size = surv.sum(axis=1)
        p = surv / size[:, None]
        u = self._uniforms(self.t + 1)
        # the j-th surviving arm (in index order), j = floor(u |A_t|)
        j = np.minimum((u * size).astype(np.int64), size - 1)
        a = np.argmax(np.cumsum(surv, axis=1) > j[:, None], axis=1)
        self._a, self._p, self.surviving, self._cache_t = a, p, surv, self.t
        return a, p

    def _update(self, arms: np.ndarray, rewards: np.ndarray) -> None:
        z = self.X[arms] - (self._p[:, None, :] @ self.X)[:, 0, :]  # x~ = x_a - xbar_p
        G = self.Gamma_inv
        Gz = (G @ z[:, :, None])[:, :, 0]
        denom = 1.0 + (z[:, None, :] @ Gz[:, :, None])[:, 0, 0]
        G -= Gz[:, :, None] * Gz[:, None, :] / denom[:, None, None]
        self.b += z * rewards[:, None]


class BOSE(Policy):
    """BOSE with uniform sampling over the surviving arms (per-round baseline).

    Parameters
    ----------
    c : float
        Exploration multiplier of ``gamma`` (Appendix I tunes ``c in {1, 2, 4, 8}``), > 0.
    delta : float
        Confidence level in (0, 1) used in ``lambda`` and ``gamma``; default 0.05.
    lam : float, optional
        Ridge ``lambda``; default ``4 d log(9T) + 8 log(4T/delta)`` (Appendix I).
    distribution : str
        ``"uniform"``: uniform over surviving arms (the authors' code; see module docstring).

    Notes
    -----
    Implemented as :class:`BatchedBOSE` with one repetition, so ``R`` BOSE runs equal one
    batched run exactly.  ``Gamma_inv``, ``b`` (shapes ``(d, d)``, ``(d,)``) and ``surviving``
    (indices of ``A_{t+1}``) read the engine's state.
    """

    name = "BOSE"
    problem = "semiparametric"

    def __init__(
        self,
        c: float = 1.0,
        delta: float = 0.05,
        lam: float | None = None,
        distribution: str = "uniform",
    ) -> None:
        super().__init__()
        self._engine = BatchedBOSE(c=c, delta=delta, lam=lam, distribution=distribution)
        self.c, self.delta = self._engine.c, self._engine.delta
        self.lam, self.distribution = self._engine.lam, self._engine.distribution

    def params(self) -> dict[str, Any]:
        return self._engine.params()

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env``."""
        _single_reset(self, env, horizon)
        e = self._engine
        self.X, self.K, self.d = e.X, e.K, e.d
        self.lam_value, self.gamma = e.lam_value, e.gamma

    @property
    def Gamma_inv(self) -> np.ndarray:
        """``Gamma^-1``, shape ``(d, d)`` (a view of the engine's state)."""
        return self._engine.Gamma_inv[0]

    @property
    def b(self) -> np.ndarray:
        """``b = sum_s x~_s r_s``, shape ``(d,)``."""
        return self._engine.b[0]

    @property
    def surviving(self) -> np.ndarray:
        """Indices of the arms surviving the elimination test for round t+1."""
        self._engine._decide()
        return np.flatnonzero(self._engine.surviving[0])

    def action_distribution(self) -> np.ndarray:
        """``p_t`` for the next round (uniform over surviving arms)."""
        return self._engine.action_distributions()[0]

    def advance(self, until: int) -> int:
        """Play rounds t+1..until (every round is a decision point)."""
        return _single_advance(self, until)


def _single_reset(policy: Policy, env: Any, horizon: int) -> None:
    """Reset a single-repetition wrapper around its ``_engine`` (an R = 1 batch)."""
    engine: PerRoundBatch = policy._engine  # type: ignore[attr-defined]
    engine.reset([env], horizon)
    policy.env = env  # type: ignore[attr-defined]
    policy.horizon = engine.horizon
    policy.t = 0
    policy.cum_regret = 0.0
    policy.log = engine.logs[0]
    policy.events = engine.events[0]


def _single_advance(policy: Policy, until: int) -> int:
    """Advance a single-repetition wrapper; keeps ``t`` and ``cum_regret`` (a float) in sync."""
    engine: PerRoundBatch = policy._engine  # type: ignore[attr-defined]
    if not engine.envs:
        raise RuntimeError(f"{policy.name}: call reset(env, horizon) before advance()")
    policy.t = engine.advance(until)
    policy.cum_regret = float(engine.cum_regret[0])
    return policy.t

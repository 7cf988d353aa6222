"""The engine shared by the per-round semiparametric baselines (BOSE, SP-TS, LinUCB).

:class:`PerRoundBatch` runs ``R`` repetitions of a per-round policy at once on state arrays
with a leading repetition axis; each single-repetition policy class *is* such an engine with
``R = 1`` (see :func:`single_reset` / :func:`single_advance`), so ``R`` separate runs give
exactly the numbers of one batched run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from ...base import ExpensiveLog, Policy, PolicyEvent, validate_positive
from ..shifts import ShiftContext

__all__ = ["WINDOW_VALUES", "PerRoundBatch", "single_advance", "single_reset"]

#: Target number of random values per pre-drawn window (keeps the arrays cache-sized).
WINDOW_VALUES = 65536


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
    #: Constants (positive reals) that may differ between the repetitions of one batch, set by
    #: :meth:`reset`'s ``constants``: runs that differ only in them (and the shift) share one
    #: engine (``simulation/shared_batch.py``: Appendix I's four values of ``c``).
    per_repetition: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self.t = 0
        self.horizon = 0
        self.R = 0
        self.envs: list[Any] = []
        self.cum_regret = np.zeros(0)
        self.logs: list[ExpensiveLog] = []
        self.events: list[list[PolicyEvent]] = []
        self._constants: dict[str, list[float]] = {}

    # ------------------------------------------------------------------ lifecycle
    def reset(
        self,
        envs: Sequence[Any],
        horizon: int,
        constants: Mapping[str, Sequence[float]] | None = None,
    ) -> None:
        """Start ``len(envs)`` repetitions of ``horizon`` rounds.

        Parameters
        ----------
        envs : sequence of SemiparametricEnvironment
            Fresh environments (nothing played yet) sharing one feature matrix ``X``; they
            normally differ by repetition number ``rep``.
        horizon : int
            T >= 1.
        constants : mapping, optional
            Per repetition, the value of a constant of :attr:`per_repetition` (one value per
            environment, in order), instead of the engine's own for all: repetition ``r``
            then computes exactly what an engine constructed with ``constants[name][r]``
            computes for it.
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
        self._constants = self._check_constants(constants, len(envs))
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
        self._noise_w = max(64, min(4096, WINDOW_VALUES // R))
        self._noise: np.ndarray | None = None
        self._noise_t0 = 0
        self._cache_t = -1
        self._reset_state()

    def _check_constants(
        self, constants: Mapping[str, Sequence[float]] | None, R: int
    ) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for name, values in (constants or {}).items():
            if name not in self.per_repetition:
                allowed = ", ".join(self.per_repetition) or "none"
                raise ValueError(
                    f"{type(self).__name__} cannot vary {name!r} between repetitions "
                    f"(allowed: {allowed})"
                )
            values = list(values)
            if len(values) != R:
                raise ValueError(
                    f"constants[{name!r}] has {len(values)} values for {R} environments"
                )
            out[name] = [validate_positive(name, v) for v in values]
        return out

    def constant(self, name: str) -> list[float]:
        """Per repetition, the value of constant ``name`` (:attr:`per_repetition`): those
        given to :meth:`reset`, else the engine's own for every repetition."""
        values = self._constants.get(name)
        return list(values) if values is not None else [getattr(self, name)] * self.R

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


def single_reset(policy: Policy, env: Any, horizon: int) -> None:
    """Reset a single-repetition wrapper around its ``_engine`` (an R = 1 batch)."""
    engine: PerRoundBatch = policy._engine  # type: ignore[attr-defined]
    engine.reset([env], horizon)
    policy.env = env  # type: ignore[attr-defined]
    policy.horizon = engine.horizon
    policy.t = 0
    policy.cum_regret = 0.0
    policy.log = engine.logs[0]
    policy.events = engine.events[0]


def single_advance(policy: Policy, until: int) -> int:
    """Advance a single-repetition wrapper; keeps ``t`` and ``cum_regret`` (a float) in sync."""
    engine: PerRoundBatch = policy._engine  # type: ignore[attr-defined]
    if not engine.envs:
        raise RuntimeError(f"{policy.name}: call reset(env, horizon) before advance()")
    policy.t = engine.advance(until)
    policy.cum_regret = float(engine.cum_regret[0])
    return policy.t

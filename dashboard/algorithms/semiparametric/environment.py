"""The semiparametric environment of one repetition (Section 2.1).

Round ``t`` (1-based) returns ``r_t = x_{a_t}^T theta* + nu_t + sigma * eta_t`` with
``eta_t ~ N(0, 1)`` drawn counter-based at ``(seed, rep, t)``: every policy sees the same noise
(and the same oblivious shift) at round ``t`` (common random numbers), whatever the chunking.
"""

from __future__ import annotations

import numpy as np

from .. import randomness as rnd
from ..base import validate_int, validate_positive
from .instances import SemiparametricInstance
from .shifts import NoShift, Shift, ShiftContext

__all__ = ["CounterWindow", "SemiparametricEnvironment"]


class CounterWindow:
    """Cache of a pure function of the round, ``f(t0 .. t0 + window - 1)``, for per-round loops.

    Counter-based draws are pure functions of ``t``, so computing a window of them at once and
    reading them one round at a time gives exactly the same numbers, without paying numpy's
    per-call overhead every round.

    Parameters
    ----------
    fn : callable
        ``fn(t: int array) -> array`` whose first axis follows ``t``.
    window : int
        Rounds computed per refill.
    """

    def __init__(self, fn, window: int = 4096) -> None:
        self.fn = fn
        self.window = int(window)
        self._start = 0
        self._values: np.ndarray | None = None

    def __call__(self, t: int) -> np.ndarray:
        """``fn(t)`` for one round ``t``."""
        i = t - self._start
        if self._values is None or i < 0 or i >= self._values.shape[0]:
            self._start = t
            self._values = self.fn(np.arange(t, t + self.window, dtype=np.int64))
            i = 0
        return self._values[i]


class SemiparametricEnvironment:
    """What a semiparametric policy interacts with during one repetition.

    Parameters
    ----------
    instance : SemiparametricInstance
        Features X and theta*.
    shift : Shift, optional
        The shift nu_t (default: none).
    noise_sigma : float
        Standard deviation sigma of the Gaussian noise (Appendix I: sigma = 1), >= 0.
    seed : int
        Root of the noise (and random-shift) streams.
    rep : int
        Repetition index.

    Attributes
    ----------
    instance, shift, noise_sigma, seed, rep, K, d, X, best_arm, gaps, mean_rewards
    t_played : int
        Last round played so far (rounds must be played in order: 1, 2, ...).
    """

    def __init__(
        self,
        instance: SemiparametricInstance,
        shift: Shift | None = None,
        noise_sigma: float = 1.0,
        seed: int = 0,
        rep: int = 0,
    ) -> None:
        if not isinstance(instance, SemiparametricInstance):
            raise ValueError("instance must be a SemiparametricInstance")
        shift = NoShift() if shift is None else shift
        if not isinstance(shift, Shift):
            raise ValueError("shift must be a Shift (see shifts.make_shift)")
        noise_sigma = validate_positive("noise_sigma", noise_sigma, allow_zero=True)
        self.instance = instance
        self.shift = shift
        self.noise_sigma = noise_sigma
        self.seed = validate_int("seed", seed, 0)
        self.rep = validate_int("rep", rep, 0)
        self.K, self.d = instance.K, instance.d
        self.X = instance.X
        self.best_arm = instance.best_arm
        self.gaps = instance.gaps
        self.mean_rewards = instance.mean_rewards
        self._noise_key = rnd.stream_key(self.seed, self.rep, "sp-noise")
        self.t_played = 0
        # adaptive shifts cannot be recomputed from t alone: record them (amortised doubling)
        self._nu = np.zeros(1024 if shift.adaptive else 0)
        # per-round fast path: noise (+ oblivious shift) by windows of rounds
        self._window = CounterWindow(self._oblivious_part, 1024)

    def _oblivious_part(self, t: np.ndarray) -> np.ndarray:
        """``noise + nu`` for oblivious shifts, the noise alone for adaptive ones."""
        out = self.noise(t)
        if not self.shift.adaptive:
            out = out + self.shift.values(t, ShiftContext(rep=self.rep, best_arm=self.best_arm))
        return out

    # ------------------------------------------------------------------ playing
    def noise(self, t: np.ndarray) -> np.ndarray:
        """``sigma * eta_t`` at rounds ``t`` (pure function of (seed, rep, t))."""
        return self.noise_sigma * rnd.normal(self._noise_key, np.asarray(t, dtype=np.int64))

    def play(self, arms: np.ndarray, t0: int, probs: np.ndarray | None = None) -> np.ndarray:
        """Play ``arms[j]`` at round ``t0 + j``; return the rewards (vectorised).

        Parameters
        ----------
        arms : int array (L,)
            Arms in 0..K-1.
        t0 : int
            Round of ``arms[0]``; must be ``t_played + 1`` (rounds are played in order).
        probs : (K,) array, optional
            The learner's action distribution, constant over the block (needed by adaptive
            shifts).  ``None`` declares that the learner is deterministic given the history,
            so an adaptive shift may read the arms it is about to play.

        Returns
        -------
        rewards : float array (L,)
        """
        arms = np.asarray(arms, dtype=np.int64)
        if arms.ndim != 1:
            raise ValueError("arms must be a 1-D integer array")
        t0 = int(t0)
        if t0 != self.t_played + 1:
            raise ValueError(
                f"rounds must be played in order: expected t0={self.t_played + 1}, got {t0}"
            )
        L = arms.shape[0]
        if L == 0:
            return np.zeros(0)
        if arms.min() < 0 or arms.max() >= self.K:
            raise ValueError(f"arms must be in 0..{self.K - 1}")
        if L == 1 and not self.shift.adaptive:  # per-round policies: cached window
            self.t_played = t0
            return self.mean_rewards[arms] + self._window(t0)
        t = np.arange(t0, t0 + L, dtype=np.int64)
        ctx = ShiftContext(rep=self.rep, best_arm=self.best_arm, probs=probs, arms=arms)
        nu = np.asarray(self.shift.values(t, ctx), dtype=float)
        if self.shift.adaptive:
            end = t0 - 1 + L
            if end > self._nu.shape[0]:
                grown = np.zeros(max(end, 2 * self._nu.shape[0]))
                grown[: self._nu.shape[0]] = self._nu
                self._nu = grown
            self._nu[t0 - 1 : end] = nu
        self.t_played = t0 - 1 + L
        # same operation order as the cached window (noise + nu), so a round's reward does not
        # depend on the size of the block it is played in
        noise = self._window(t0)[None] if L == 1 else self.noise(t)
        return self.mean_rewards[arms] + (noise + nu)

    # ------------------------------------------------------------------ bookkeeping
    def regret(self, arm: int | np.ndarray) -> float | np.ndarray:
        """Per-round pseudo-regret ``(x_{a*} - x_a)^T theta*`` (the shift cancels)."""
        g = self.gaps[np.asarray(arm, dtype=np.int64)]
        return float(g) if np.ndim(g) == 0 else g

    def shift_values(self, t: np.ndarray) -> np.ndarray:
        """The shift nu_t used at already-played rounds ``t`` (for plotting nu_t).

        Oblivious shifts are recomputed from ``t``; adaptive ones are read from the record.
        """
        t = np.asarray(t, dtype=np.int64)
        if t.size and (t.min() < 1 or t.max() > self.t_played):
            raise ValueError(f"rounds must be in 1..{self.t_played} (rounds played so far)")
        if self.shift.adaptive:
            return self._nu[t - 1]
        return self.shift.values(t, ShiftContext(rep=self.rep, best_arm=self.best_arm))

    def shift_history(self) -> tuple[np.ndarray, np.ndarray]:
        """``(t, nu_t)`` for every round played so far."""
        t = np.arange(1, self.t_played + 1, dtype=np.int64)
        return t, self.shift_values(t)

"""Reward models (the distribution D of Section 2) and the per-run environment.

A :class:`RewardModel` holds one *instance* (means, covariance, outcome distributions), drawn
once from the user's seed and shared by every repetition and algorithm.  Each (algorithm,
repetition) run gets a fresh :class:`CMABEnvironment` from :meth:`RewardModel.environment`; its
noise is counter based (:mod:`dashboard.algorithms.randomness`), so every algorithm sees the same
outcome for the ``n``-th pull of base arm ``i`` in repetition ``r`` (common random numbers) and
the numbers never depend on how a run is chunked.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from ...base import validate_int
from ...declare import ComponentDeclaration
from ..actions import ActionFamily

__all__ = ["CMABEnvironment", "RewardModel"]


class RewardModel(ABC):
    """One instance of a reward distribution over ``d`` base arms.

    Subclasses set ``self.mu`` (length ``d``, the mean vector of D) and implement
    :meth:`sample` and, if the reward is not linear, :meth:`expected_reward`.
    """

    #: What the model says about itself (name, doc, reference); ``key`` is its name.
    declaration: ClassVar[ComponentDeclaration | None] = None
    #: CLI / dashboard name (``linear``, ``covariance``, ``general`` ...).
    key: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        decl = cls.__dict__.get("declaration")
        if isinstance(decl, ComponentDeclaration):
            cls.key = decl.name

    #: Whether r(a, y) = <a, y> (Sections 3-4) or a general function (Section 5).
    linear: bool = True
    #: Whether an outcome depends only on ``(rep, arm, pull number)`` (independent arms), so a
    #: block's per-arm sums do not depend on the order of its rounds (fast paths rely on it).
    pull_indexed: bool = False

    def __init__(self, d: int, seed: int = 0) -> None:
        self.d = validate_int("d", d, 1)
        self.seed = validate_int("seed", seed, 0)
        self.mu = np.zeros(self.d)

    def expected_reward(self, action: np.ndarray) -> float:
        """r_bar(a) = E[r(a, y)]; ``<a, mu>`` for linear models."""
        return float(np.asarray(action, dtype=float) @ self.mu)

    def reward(self, action: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Realised reward r(a, y) for rows ``y`` of shape ``(L, d)``."""
        return y @ np.asarray(action, dtype=float)

    @abstractmethod
    def sample(self, rep: int, arms: np.ndarray, pulls: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Outcomes y for pulls of base arms.

        ``arms``, ``pulls`` (the 0-based pull number of that arm in this run) and ``t`` (the
        1-based round of the pull) are integer arrays of equal shape ``(L, k)``, one row per
        round; returns float outcomes of that shape.  Independent models index by
        ``(rep, arm, pull)``, models with correlation across arms by ``(rep, t)``.
        """

    def environment(self, family: ActionFamily, rep: int) -> CMABEnvironment:
        """A fresh environment for one (algorithm, repetition) run."""
        return CMABEnvironment(family, self, rep)

    def describe(self) -> str:
        """One-line human description."""
        return f"{self.key} rewards (d={self.d}, seed={self.seed})"


class CMABEnvironment:
    """What a policy interacts with during one repetition.

    Attributes
    ----------
    family, model : the action family and reward model.
    d, m : problem sizes.
    optimal_action, optimal_reward : a* and r_bar(a*), found by the exact oracle (linear) or by
        enumeration (general rewards).
    pulls : int array (d,), how often each base arm was played so far in this run.
    """

    def __init__(self, family: ActionFamily, model: RewardModel, rep: int) -> None:
        if family.d != model.d:
            raise ValueError(f"action family has d={family.d} but reward model d={model.d}")
        self.family = family
        self.model = model
        self.rep = validate_int("repetition", rep, 0)
        self.d, self.m = family.d, family.m
        self.pulls = np.zeros(self.d, dtype=np.int64)
        self._reward_cache: dict[bytes, float] = {}
        if model.linear:
            self.optimal_action = family.argmax_linear(model.mu)
        else:
            self.optimal_action = family.argmax_set_function(model.expected_reward)
        self.optimal_reward = self.expected_reward(self.optimal_action)

    def expected_reward(self, action: np.ndarray) -> float:
        """r_bar(a), cached per action."""
        key = np.packbits(action).tobytes()
        v = self._reward_cache.get(key)
        if v is None:
            v = self._reward_cache[key] = self.model.expected_reward(action)
        return v

    def gap(self, action: np.ndarray) -> float:
        """Per-round pseudo-regret r_bar(a*) - r_bar(a)."""
        return self.optimal_reward - self.expected_reward(action)

    def play_fixed(self, action: np.ndarray, t0: int, length: int) -> np.ndarray:
        """Play one action for rounds ``t0 .. t0+length-1``.

        Returns outcomes of shape ``(length, k)`` for the ``k`` arms of ``action`` in increasing
        arm order, and advances the pull counters.
        """
        arms = np.flatnonzero(action)
        steps = np.arange(length, dtype=np.int64)[:, None]
        pulls = self.pulls[arms][None, :] + steps
        t = np.broadcast_to(t0 + steps, pulls.shape)
        y = self.model.sample(self.rep, np.broadcast_to(arms, pulls.shape), pulls, t)
        self.pulls[arms] += length
        return y

    def play(self, actions: np.ndarray, t0: int) -> np.ndarray:
        """Play rows of ``actions`` (shape ``(L, d)``, bool) at rounds ``t0 ..``.

        Returns a ``(L, d)`` array of outcomes, ``nan`` where an arm was not played.
        """
        actions = np.asarray(actions, dtype=bool)
        L = actions.shape[0]
        rows, arms = np.nonzero(actions)
        # pull number of each (row, arm): arm's count before the block + earlier rows in block
        before = np.cumsum(actions, axis=0) - actions
        pulls = self.pulls[arms] + before[rows, arms]
        y = np.full((L, self.d), np.nan)
        y[rows, arms] = self.model.sample(self.rep, arms, pulls, t0 + rows)
        self.pulls += actions.sum(axis=0)
        return y

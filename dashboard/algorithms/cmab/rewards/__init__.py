"""Reward models for combinatorial semi-bandits and :func:`make_reward` (name -> model)."""

from __future__ import annotations

from typing import Any

from .base import CMABEnvironment, RewardModel
from .covariance import CovarianceRewards
from .general import ContinuousRewards, GeneralRewards, expected_aggregate
from .linear import LinearRewards

__all__ = [
    "REWARDS",
    "CMABEnvironment",
    "ContinuousRewards",
    "CovarianceRewards",
    "GeneralRewards",
    "LinearRewards",
    "RewardModel",
    "expected_aggregate",
    "make_reward",
]

_CLASSES: dict[str, type[RewardModel]] = {
    "linear": LinearRewards,
    "covariance": CovarianceRewards,
    "general": GeneralRewards,
    "continuous": ContinuousRewards,
}

#: User-facing reward model names (CLI, dashboard, registry ``rewards`` tuples).
REWARDS: tuple[str, ...] = tuple(_CLASSES)


def make_reward(key: str, d: int, seed: int = 0, **kwargs: Any) -> RewardModel:
    """Build a reward model by name (case-insensitive).

    Parameters
    ----------
    key : str
        One of :data:`REWARDS`: ``"linear"``, ``"covariance"``, ``"general"``, ``"continuous"``.
    d : int
        Number of base arms.
    seed : int
        Instance seed.
    **kwargs
        Passed to the model's constructor (e.g. ``scale=`` for ``"covariance"``).

    Raises
    ------
    ValueError
        For an unknown name (the message lists the allowed ones) or bad parameters.
    """
    cls = _CLASSES.get(str(key).strip().lower())
    if cls is None:
        raise ValueError(f"unknown reward model {key!r}; choose from: {', '.join(REWARDS)}")
    return cls(d, seed, **kwargs)

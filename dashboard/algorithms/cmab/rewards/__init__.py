"""Reward models for combinatorial semi-bandits and :func:`make_reward` (name -> model).

The registry :data:`REWARD_MODELS` is built from the classes' declarations; a plug-in adds a
model with ``REWARD_MODELS.register(MyModel)``.
"""

from __future__ import annotations

from typing import Any

from ...components import ComponentRegistry
from .base import CMABEnvironment, RewardModel
from .covariance import CovarianceRewards
from .general import ContinuousRewards, GeneralRewards, expected_aggregate
from .linear import LinearRewards

__all__ = [
    "REWARDS",
    "REWARD_MODELS",
    "CMABEnvironment",
    "ContinuousRewards",
    "CovarianceRewards",
    "GeneralRewards",
    "LinearRewards",
    "RewardModel",
    "expected_aggregate",
    "make_reward",
    "reward_names",
]

#: Registered reward models (built-ins first).
REWARD_MODELS: ComponentRegistry[RewardModel] = ComponentRegistry(
    "reward", RewardModel, "reward model"
)
for _cls in (LinearRewards, CovarianceRewards, GeneralRewards, ContinuousRewards):
    REWARD_MODELS.register(_cls, plugin=False)

#: Built-in reward model names (CLI, dashboard, registry ``rewards`` tuples).
REWARDS: tuple[str, ...] = REWARD_MODELS.names()


def reward_names() -> tuple[str, ...]:
    """Every registered reward model name (built-ins and plug-ins)."""
    return REWARD_MODELS.names()


def make_reward(key: str, d: int, seed: int = 0, **kwargs: Any) -> RewardModel:
    """Build a reward model by name (case-insensitive).

    Parameters
    ----------
    key : str
        A registered name: ``"linear"``, ``"covariance"``, ``"general"``, ``"continuous"``.
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
    return REWARD_MODELS.get(key)(d, seed, **kwargs)

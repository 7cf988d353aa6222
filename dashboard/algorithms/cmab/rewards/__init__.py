"""Reward models for combinatorial semi-bandits."""

from .base import CMABEnvironment, RewardModel
from .linear import LinearRewards

__all__ = ["CMABEnvironment", "LinearRewards", "RewardModel"]

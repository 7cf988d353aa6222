"""Reward functions ``r(a, y) = g(agg(y_a))`` and the exact expectation under independent
discrete outcomes (Section 5, Lemma 9).

A lower module shared by the reward models (:mod:`.general`) and the vectorised oracle
(:mod:`.aggregate`): both import it, it imports neither (dependencies point one way).

:func:`expected_aggregate` computes ``E[r(a, y)]`` exactly for independent *discrete* outcomes by
combining the arms one at a time and merging equal partial sums (or maxima), so its cost is the
number of distinct partial values, not the size of the product support.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import RewardModel

__all__ = [
    "REWARD_FUNCTIONS",
    "check_reward",
    "expected_aggregate",
    "realised_reward",
    "reward_function_of",
]

#: Names of the supported reward functions r(a, y).
REWARD_FUNCTIONS = ("sqrt-sum", "sum", "max")

#: Decimals used to merge equal partial sums (sums of grid values are not bit-exact).
_MERGE_DECIMALS = 10


def check_reward(reward: str) -> str:
    key = str(reward).strip().lower()
    if key not in REWARD_FUNCTIONS:
        raise ValueError(f"unknown reward {reward!r}; choose from: {', '.join(REWARD_FUNCTIONS)}")
    return key


def realised_reward(reward: str, y: np.ndarray) -> np.ndarray:
    """``r(a, y)`` for rows ``y`` of shape ``(L, k)`` holding the outcomes of the ``k`` arms of a.

    Negative sums (possible only for Gaussian outcomes) are clipped at 0 under ``sqrt``.
    """
    y = np.atleast_2d(np.asarray(y, dtype=float))
    kind = check_reward(reward)
    if y.shape[1] == 0:
        return np.zeros(y.shape[0])
    if kind == "max":
        return y.max(axis=1)
    s = y.sum(axis=1)
    return np.sqrt(np.maximum(s, 0.0)) if kind == "sqrt-sum" else s


def expected_aggregate(
    values: Sequence[np.ndarray], probs: Sequence[np.ndarray], reward: str
) -> float:
    """Exact ``E[r(a, y)]`` when the outcomes of the arms of ``a`` are independent and discrete.

    Parameters
    ----------
    values, probs : sequences of 1-D arrays
        For each arm of the action, its support points and their probabilities.
    reward : str
        One of :data:`REWARD_FUNCTIONS`.

    Returns
    -------
    float
        The expectation, computed by folding the arms one at a time (outer sum or outer max)
        and merging equal partial values, which is exact and cheap for supports on a grid.
    """
    kind = check_reward(reward)
    if len(values) == 0:
        return 0.0
    if kind == "sum":
        return float(sum(np.dot(v, p) for v, p in zip(values, probs)))
    g = (lambda x: np.sqrt(np.maximum(x, 0.0))) if kind == "sqrt-sum" else (lambda x: x)
    acc_v = np.asarray(values[0], dtype=float)
    acc_p = np.asarray(probs[0], dtype=float)
    last = len(values) - 1
    for step, (v, p) in enumerate(zip(values[1:], probs[1:]), start=1):
        v = np.asarray(v, dtype=float)
        p = np.asarray(p, dtype=float)
        comb = np.maximum.outer(acc_v, v) if kind == "max" else np.add.outer(acc_v, v)
        weight = np.multiply.outer(acc_p, p)
        if step == last:  # no need to merge before taking the expectation
            return float(np.sum(g(comb) * weight))
        acc_v, inverse = np.unique(np.round(comb.ravel(), _MERGE_DECIMALS), return_inverse=True)
        acc_p = np.bincount(inverse, weights=weight.ravel(), minlength=acc_v.size)
    return float(np.dot(g(acc_v), acc_p))


def reward_function_of(model: RewardModel) -> str:
    """The reward function name of a model: ``"sum"`` for linear models (r(a, y) = <a, y>)."""
    if model.linear:
        return "sum"
    kind = getattr(model, "reward_kind", None)
    if kind is None:
        raise ValueError(f"{type(model).__name__} is non-linear but declares no reward_kind")
    return check_reward(kind)

"""Helpers of the statistical regret tests of the combinatorial policies (imported by the
``test_cmab_policies_*`` modules; pytest puts this folder on ``sys.path``)."""

from __future__ import annotations

from typing import Any

import numpy as np


def random_play_regret(env: Any, T: int) -> float:
    """Expected regret of playing a uniformly random action for ``T`` rounds."""
    return float(np.mean([env.gap(a) for a in env.family.enumerate()]) * T)


def half_and_total(policy: Any, env: Any, T: int) -> tuple[float, float]:
    """Cumulative regret of ``policy`` at ``T // 2`` and at ``T`` (one run on ``env``)."""
    policy.reset(env, T)
    half = None
    while policy.t < T:
        policy.advance(T // 2 if policy.t < T // 2 else T)
        if policy.t == T // 2:
            half = policy.cum_regret
    return half, policy.cum_regret

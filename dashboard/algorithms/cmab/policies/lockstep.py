"""The batched interface without vectorisation: ``R`` single policies advanced together.

:class:`LockstepBatch` is the fallback of every batched engine (identical numbers by
construction); :func:`check_envs` validates a batch of environments.  A lower module imported
by the engines (:mod:`.batched`, :mod:`.disc_batched`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...base import Policy

__all__ = ["LockstepBatch", "check_envs"]


class PlayToHorizon:
    """``run``: the batch path of an engine with ``reset(envs, horizon)``, ``advance(until)``,
    ``t`` and ``horizon`` (the batched SDCB, OLS-UCB-C and Disc engines share it)."""

    def run(self, envs: Any, horizon: int) -> Any:
        """Batch path: reset and play all rounds. Returns ``self``."""
        self.reset(envs, horizon)  # type: ignore[attr-defined]
        while self.t < self.horizon:  # type: ignore[attr-defined]
            self.advance(self.horizon)  # type: ignore[attr-defined]
        return self


class LockstepBatch:
    """``R`` single-repetition policies advanced together (the batched interface, no
    vectorisation): the fallback of every batched engine, identical numbers by construction."""

    def __init__(self, policies: Sequence[Policy]) -> None:
        self.policies = list(policies)
        self.logs = [p.log for p in self.policies]
        self.events = [p.events for p in self.policies]

    def reset(self, envs: Sequence[Any], horizon: int) -> None:
        for p, env in zip(self.policies, envs):
            p.reset(env, horizon)
        self.logs = [p.log for p in self.policies]
        self.events = [p.events for p in self.policies]

    @property
    def t(self) -> int:
        return min(p.t for p in self.policies)

    @property
    def cum_regret(self) -> np.ndarray:
        return np.array([p.cum_regret for p in self.policies], dtype=float)

    def advance(self, until: int) -> int:
        for p in self.policies:
            while p.t < min(until, p.horizon):
                before = p.t
                p.advance(until)
                if p.t <= before:
                    raise RuntimeError(f"{p.name} made no progress at t={before}")
        return self.t


def check_envs(envs: Sequence[Any], name: str) -> list[Any]:
    """The environments as a list; ValueError if empty or not sharing one family and model."""
    envs = list(envs)
    if not envs:
        raise ValueError(f"{name}.reset needs at least one environment")
    family, model = envs[0].family, envs[0].model
    if any(e.family is not family or e.model is not model for e in envs):
        raise ValueError("all environments of a batch must share one family and one model")
    return envs

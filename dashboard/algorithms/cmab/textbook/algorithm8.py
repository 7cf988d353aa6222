"""Algorithm 8 (discretisation for continuous outcomes, Appendix A.10), the part both
Disc- algorithms share: it wraps Algorithm 6 (:mod:`.disc_aroq_gr`) or Algorithm 7
(:mod:`.disc_sroq_gr`) and changes only the start and what an observed outcome is.

1. line 1: ``s = ceil(C sqrt(m T))`` intervals (``C`` is Assumption 2's Lipschitz constant,
   the ``lipschitz`` parameter; ``s`` may be given instead);
2. lines 2-4: ``I_1 = [0, 1/s]`` and ``I_j = ((j - 1)/s, j/s]`` for ``j = 2 .. s``;
3. lines 5-8: run the wrapped algorithm (unchanged) for ``T`` rounds, except that each
   observed ``y_{t,i}`` (clipped to ``[0, 1]``) in ``I_j`` is treated as ``j / s`` (rounding
   up, so the discretised law dominates the true one).

Every law then lives on the ``s + 1`` points ``0, 1/s, .., 1``, so the atom cap is raised to
``s + 1`` (no further rounding).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...base import validate_int
from ..policies.empirical import discretize, number, paper_intervals

__all__ = ["Discretized"]


class Discretized:
    """Algorithm 8 around the general-reward algorithm it is mixed into (listed after it)."""

    def _init_intervals(self, s: int | None, lipschitz: float) -> None:
        self.s = None if s is None else validate_int("s (number of intervals)", s, 1)
        self.lipschitz = number("lipschitz", lipschitz, 0.0, allow_low=False)

    def reset(self, env: Any, horizon: int) -> None:
        """The wrapped algorithm's start, with ``s`` of line 1."""
        super().reset(env, horizon)
        T, m = self.horizon, self.m
        self.intervals = self.s if self.s is not None else paper_intervals(m, T, self.lipschitz)
        self.atom_cap = max(self.max_atoms, self.intervals + 1)

    def observe(self, arm: int, y: np.ndarray) -> None:
        """Lines 6-8: the outcome in ``I_j`` is treated as ``j / s``."""
        super().observe(arm, discretize(y, self.intervals))

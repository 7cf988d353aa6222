"""Disc-AROQ-GR-CMAB: Algorithm 8 (discretisation for continuous outcomes, Appendix A.10)
around AROQ-GR-CMAB (Algorithm 6), round by round.

1. line 1: ``s = ceil(C sqrt(m T))`` intervals (``C`` is Assumption 2's Lipschitz constant,
   the ``lipschitz`` parameter; ``s`` may be given instead);
2. lines 2-4: ``I_1 = [0, 1/s]`` and ``I_j = ((j - 1)/s, j/s]`` for ``j = 2 .. s``;
3. lines 5-8: run Algorithm 6 (:mod:`.aroq_gr`, unchanged) for ``T`` rounds, except that each
   observed ``y_{t,i}`` (clipped to ``[0, 1]``) in ``I_j`` is treated as ``j / s`` (rounding
   up, so the discretised law dominates the true one).

Every law then lives on the ``s + 1`` points ``0, 1/s, .., 1``, so the atom cap is raised to
``s + 1`` (no further rounding).  The fast engine
(:class:`~dashboard.algorithms.cmab.policies.general.BatchedDiscretizedAROQGR`: count tables on
the grid, Beta outcomes read as interval indices, all actions scored at once with certified
bounds) gives these numbers.
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Any

import numpy as np

from ...base import validate_int
from ...declare import AlgorithmDeclaration
from ..policies.constants import (
    C_GR,
    CMAB_GENERAL,
    EPOCH0,
    INTERVALS,
    LIPSCHITZ,
    MAX_ATOMS,
    THRESHOLD_SCALE,
)
from ..policies.empirical import discretize, number, paper_intervals
from .aroq_gr import AROQGR

__all__ = ["DiscretizedAROQGR"]


class DiscretizedAROQGR(AROQGR):
    """Algorithm 8 with Algorithm 6: AROQ-GR-CMAB on outcomes discretised to ``s`` levels.

    Parameters
    ----------
    s : int, optional
        Number of intervals (default: the paper's ``ceil(lipschitz sqrt(m T))``).
    lipschitz : float
        The constant ``C`` of Assumption 2 used by the default ``s`` (default 1).
    C, oracle_delay, executor, max_atoms, threshold_scale, epoch0_size
        As :class:`~.aroq_gr.AROQGR`.
    """

    declaration = AlgorithmDeclaration(
        name="Disc-AROQ-GR-CMAB",
        problem="cmab",
        reference="Algorithm 8 with Algorithm 6",
        constants=(INTERVALS, LIPSCHITZ, C_GR, THRESHOLD_SCALE, EPOCH0, MAX_ATOMS),
        rewards=CMAB_GENERAL,
        doc="AROQ-GR on outcomes discretised to s intervals (continuous outcomes)",
    )

    def __init__(
        self,
        s: int | None = None,
        lipschitz: float = 1.0,
        C: float = 1.5,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
        max_atoms: int = 64,
        threshold_scale: float = 1.0,
        epoch0_size: int = 0,
    ) -> None:
        super().__init__(C, oracle_delay, executor, max_atoms, threshold_scale, epoch0_size)
        self.s = None if s is None else validate_int("s (number of intervals)", s, 1)
        self.lipschitz = number("lipschitz", lipschitz, 0.0, allow_low=False)

    def reset(self, env: Any, horizon: int) -> None:
        """Algorithm 6's start, with ``s`` of line 1."""
        super().reset(env, horizon)
        T, m = self.horizon, self.m
        self.intervals = self.s if self.s is not None else paper_intervals(m, T, self.lipschitz)
        self.atom_cap = max(self.max_atoms, self.intervals + 1)

    def observe(self, arm: int, y: np.ndarray) -> None:
        """Lines 6-8: the outcome in ``I_j`` is treated as ``j / s``."""
        super().observe(arm, discretize(y, self.intervals))

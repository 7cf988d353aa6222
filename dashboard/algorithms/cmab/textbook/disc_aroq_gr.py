"""Disc-AROQ-GR-CMAB: Algorithm 8 (discretisation for continuous outcomes, Appendix A.10)
around AROQ-GR-CMAB (Algorithm 6), round by round.

Algorithm 8's steps are in :mod:`.algorithm8`, unchanged for both algorithms.  The fast engine
(:class:`~dashboard.algorithms.cmab.policies.general.BatchedDiscretizedAROQGR`: count tables on
the grid, Beta outcomes read as interval indices, all actions scored at once with certified
bounds) gives these numbers.
"""

from __future__ import annotations

from concurrent.futures import Executor

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
from .algorithm8 import Discretized
from .aroq_gr import AROQGR

__all__ = ["DiscretizedAROQGR"]


class DiscretizedAROQGR(Discretized, AROQGR):
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
        self._init_intervals(s, lipschitz)

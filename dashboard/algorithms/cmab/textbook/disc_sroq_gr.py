"""Disc-SROQ-GR-CMAB: Algorithm 8 (discretisation for continuous outcomes, Appendix A.10)
around SROQ-GR-CMAB (Algorithm 7), round by round.

Algorithm 8's steps are in :mod:`.algorithm8`, unchanged for both algorithms.  The fast engine
(:class:`~dashboard.algorithms.cmab.policies.general.BatchedDiscretizedSROQGR`: count tables on
the grid, Beta outcomes read as interval indices, every epoch's queries of all repetitions
scored at once with certified bounds) gives these numbers.
"""

from __future__ import annotations

from concurrent.futures import Executor

from ...declare import AlgorithmDeclaration
from ..policies.constants import (
    C_GR,
    CMAB_GENERAL,
    GRID_OPTIONAL,
    INTERVALS,
    LIPSCHITZ,
    M_EPOCHS,
    MAX_ATOMS,
)
from .algorithm8 import Discretized
from .sroq_gr import SROQGR

__all__ = ["DiscretizedSROQGR"]


class DiscretizedSROQGR(Discretized, SROQGR):
    """Algorithm 8 with Algorithm 7: SROQ-GR-CMAB on outcomes discretised to ``s`` levels.

    Parameters
    ----------
    s : int, optional
        Number of intervals (default: the paper's ``ceil(lipschitz sqrt(m T))``).
    lipschitz : float
        The constant ``C`` of Assumption 2 used by the default ``s`` (default 1).
    C, M, grid_kind, oracle_delay, executor, max_atoms
        As :class:`~.sroq_gr.SROQGR` (line 6's query joins line 5's round).
    """

    declaration = AlgorithmDeclaration(
        name="Disc-SROQ-GR-CMAB",
        problem="cmab",
        reference="Algorithm 8 with Algorithm 7",
        constants=(INTERVALS, LIPSCHITZ, C_GR, M_EPOCHS, GRID_OPTIONAL, MAX_ATOMS),
        rewards=CMAB_GENERAL,
        doc="SROQ-GR on outcomes discretised to s intervals (continuous outcomes)",
    )

    def __init__(
        self,
        s: int | None = None,
        lipschitz: float = 1.0,
        C: float = 1.5,
        M: int | None = None,
        grid_kind: str | None = None,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
        max_atoms: int = 64,
    ) -> None:
        super().__init__(C, M, grid_kind, oracle_delay, executor, max_atoms)
        self._init_intervals(s, lipschitz)

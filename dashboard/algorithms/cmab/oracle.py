"""The combinatorial oracle as the algorithms see it: accounting, cost and parallel batches.

Every call goes through :class:`Oracle`, which records it in an
:class:`~dashboard.algorithms.base.ExpensiveLog` with the round ``t``, an adaptivity round id,
a purpose and its wall time (Section 2's query and adaptivity complexities).  Calls that the
paper lets run in parallel (Appendix A.1) are submitted together with :meth:`Oracle.batch`; they
share one round id and really run concurrently on a pluggable
:class:`concurrent.futures.Executor`.  An artificial ``delay`` (seconds per call, spent sleeping,
which releases the GIL like a real external solver would) makes runtime comparisons such as
Figure 2(d)-(e) meaningful on cheap families.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

import numpy as np

from ..base import ExpensiveLog
from .actions import ActionFamily

__all__ = ["Oracle", "OracleRequest"]


@dataclass
class OracleRequest:
    """One query: maximise a linear score (``scores``) or a set function (``f``).

    Exactly one of ``scores`` and ``f`` is given.  ``include``/``exclude`` restrict the actions
    as in :meth:`ActionFamily.argmax_linear`; ``arm`` is the base arm the query is about (for the
    timeline), ``purpose`` a short label such as ``"representative of arm i"``.
    """

    purpose: str
    scores: np.ndarray | None = None
    f: Callable[[np.ndarray], float] | None = None
    include: Sequence[int] | np.ndarray = field(default_factory=tuple)
    exclude: np.ndarray | None = None
    arm: int = -1


class Oracle:
    """Accounting wrapper around an :class:`ActionFamily`'s exact (or approximate) oracle.

    Parameters
    ----------
    family : ActionFamily
        The action set and its exact solvers.
    log : ExpensiveLog
        Where calls are recorded (usually the policy's ``log``).
    delay : float
        Extra seconds each call takes (simulated solver cost), default 0.
    executor : concurrent.futures.Executor, optional
        Runs the calls of one :meth:`batch` concurrently; ``None`` runs them one after another
        (they still share one adaptivity round id).
    approximate : callable, optional
        ``approximate(family, request) -> action`` replacing the exact linear solver (an
        alpha-approximation oracle, Algorithm 5).
    """

    def __init__(
        self,
        family: ActionFamily,
        log: ExpensiveLog,
        delay: float = 0.0,
        executor: Executor | None = None,
        approximate: Callable[[ActionFamily, OracleRequest], np.ndarray | None] | None = None,
    ) -> None:
        if delay < 0:
            raise ValueError(f"oracle delay must be >= 0 seconds, got {delay}")
        self.family = family
        self.log = log
        self.delay = float(delay)
        self.executor = executor
        self.approximate = approximate

    def _solve(self, req: OracleRequest) -> tuple[np.ndarray | None, float]:
        start = time.perf_counter()
        if req.f is not None:
            action = self.family.argmax_set_function(req.f, req.include, req.exclude)
        elif self.approximate is not None:
            action = self.approximate(self.family, req)
        else:
            action = self.family.argmax_linear(req.scores, req.include, req.exclude)
        if self.delay:
            time.sleep(self.delay)
        return action, time.perf_counter() - start

    def call(self, req: OracleRequest, t: int) -> np.ndarray | None:
        """One sequential call (its own adaptivity round)."""
        return self.batch([req], t)[0]

    def batch(self, requests: Sequence[OracleRequest], t: int) -> list[np.ndarray | None]:
        """Independent calls forming one adaptivity round; run concurrently if an executor is set.

        Returns the actions in request order.  Wall times recorded per call are those measured
        inside each call (so their sum is the sequential cost, while the batch's elapsed time is
        what parallel execution saves).
        """
        if not requests:
            return []
        rid = self.log.new_round()
        if self.executor is not None and len(requests) > 1:
            results = list(self.executor.map(self._solve, requests))
        else:
            results = [self._solve(r) for r in requests]
        for req, (_, secs) in zip(requests, results):
            self.log.record(t, rid, req.purpose, secs, req.arm)
        return [a for a, _ in results]

"""SROQ-CMAB (Algorithm 2, Theorem 2): Scheduled Rare Oracle Queries, and its time grid.

Epochs are fixed in advance by a grid ``t_1 < ... < t_M`` (:mod:`.sroq_grid`).  At the start
of epoch ``tau`` the policy computes the UCB/LCB indices of Eq. (2) from all rounds before
``t_tau`` and makes ONE parallel batch of oracle queries (Appendix A.1): a representative action

    a_tau^(i) = argmax_{a in A_{tau-1}, i in a} r_tau^UCB(a)        for every i in N_{tau-1}

plus ``a^dagger = argmax_{a in A_{tau-1}} r_tau^LCB(a)``.  Arms whose representative cannot
beat ``r_tau^LCB(a^dagger)`` are eliminated (``N_tau``), actions using them are removed
(``A_tau``), and the epoch plays the representatives of the surviving arms round-robin.

How many adaptivity rounds an epoch costs is read two ways by the paper: Appendix A.1 runs
the max-LCB query in the same parallel round as the representatives (one round per epoch,
``lcb_query="parallel"``, the default), while the oracle-complexity counts of Appendices A.4
and A.9 call it "one sequential oracle query" (two rounds per epoch,
``lcb_query="sequential"``).  Queries, actions and regret are the same under both readings.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from typing import Any

import numpy as np

from ...base import Policy, PolicyEvent, validate_int
from ...declare import AlgorithmDeclaration
from ..oracle import Oracle, OracleRequest
from .common import ArmStatistics, check_linear_env, play_schedule_sums, validate_positive
from .constants import C_UCB, CMAB_LINEAR, GRID, LCB_QUERY, M_EPOCHS
from .sroq_grid import GRID_KINDS, default_num_epochs, sroq_time_grid

__all__ = [
    "GRID_KINDS",
    "LCB_QUERY_KINDS",
    "SROQ",
    "default_num_epochs",
    "sroq_time_grid",
    "validate_lcb_query",
]

#: Allowed values of ``lcb_query``: the max-LCB query joins the representatives' parallel
#: round (Appendix A.1) or is its own sequential round (the counts of Appendices A.4, A.9).
LCB_QUERY_KINDS = ("parallel", "sequential")


def validate_lcb_query(value: Any) -> str:
    """``lcb_query`` as one of :data:`LCB_QUERY_KINDS` (ValueError otherwise)."""
    if not isinstance(value, str) or value.lower() not in LCB_QUERY_KINDS:
        raise ValueError(f"lcb_query must be one of {LCB_QUERY_KINDS}, got {value!r}")
    return value.lower()


def epoch_queries(oracle: Oracle, reps: list, lcb: Any, t: int, lcb_query: str) -> list:
    """One epoch's queries: the representatives ``reps`` and the max-LCB request ``lcb``.

    ``lcb_query="parallel"``: all in one :meth:`Oracle.batch` (one adaptivity round, A.1);
    ``"sequential"``: the representatives' batch, then the LCB query as its own round (A.4 /
    A.9 count it as "one sequential oracle query").  Returns the answers in request order.
    """
    if lcb_query == "parallel":
        return oracle.batch([*reps, lcb], t)
    return [*oracle.batch(reps, t), oracle.call(lcb, t)]


class SROQ(Policy):
    """Scheduled Rare Oracle Queries for combinatorial semi-bandits (Algorithm 2, Theorem 2).

    Indices (Eq. (2)) with the CombUCB1 width of the proof (Appendix A.4, GUIDE section 3):
    ``r^UCB/LCB_tau(a) = sum_{i in a} (mu_hat_{tau,i} +/- sqrt(C log T / n_{tau,i}))``, where
    ``mu_hat`` and ``n`` use rounds ``1 .. t_tau - 1``.

    Parameters
    ----------
    C : float
        Confidence constant of Eq. (2) (proof: 1.5).
    M : int, optional
        Number of epochs; ``None`` means :func:`default_num_epochs` (about ``log2 log2 T``),
        capped at ``T``.
    grid : {"gao", "paper"}
        Time-grid convention, see :func:`sroq_time_grid`.
    oracle_delay : float
        Extra seconds per oracle call (simulated solver cost).
    executor : concurrent.futures.Executor, optional
        Runs each epoch's batch of queries concurrently (Appendix A.1).
    lcb_query : {"parallel", "sequential"}
        Adaptivity reading of the max-LCB query: ``"parallel"`` (default, Appendix A.1: it
        joins the representatives' round, one adaptivity round per epoch) or
        ``"sequential"`` (Appendix A.4's count: one more sequential round, two per epoch).
        Only the adaptivity count changes; queries, actions and regret are identical.

    Notes
    -----
    * First epoch: nothing has been played, so ``n = 0`` indices are ``+large`` (UCB) and
      ``-large`` (LCB): nothing is eliminated and the representatives explore.
    * One adaptivity round per epoch (default): the representatives and the max-LCB query form
      one :meth:`~dashboard.algorithms.cmab.oracle.Oracle.batch` (A.1); two with
      ``lcb_query="sequential"``.  Queries per epoch are
      ``|N_{tau-1}| + 1``, so at most ``(d + 1) M`` in total.
    * An arm with no feasible action containing it inside ``A_{tau-1}`` (oracle returns
      ``None``) cannot be in ``a*`` and is eliminated.
    * Line 12 uses the absolute round: round ``t`` plays the representative of the
      ``(t mod |N_tau|)``-th surviving arm (arms in increasing order); the representatives are
      the ones computed over ``A_{tau-1}`` (line 6), as printed.
    * Events: one ``"epoch"`` event per epoch with ``epoch``, ``start``, ``end``,
      ``surviving`` (``N_tau``), ``eliminated`` (arms removed this epoch), ``representatives``
      (dict arm -> action), ``lcb_action`` and ``max_lcb``.
    """

    declaration = AlgorithmDeclaration(
        name="SROQ-CMAB",
        problem="cmab",
        reference="Algorithm 2",
        constants=(C_UCB, M_EPOCHS, GRID, LCB_QUERY),
        rewards=CMAB_LINEAR,
        doc="scheduled rare oracle queries: M epochs on a fixed time grid",
    )

    def __init__(
        self,
        C: float = 1.5,
        M: int | None = None,
        grid: str = "gao",
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
        lcb_query: str = "parallel",
    ) -> None:
        super().__init__()
        self.C = validate_positive("C", C)
        self.lcb_query = validate_lcb_query(lcb_query)
        self.M = None if M is None else validate_int("M", M, 1)
        if grid not in GRID_KINDS:
            raise ValueError(f"grid must be one of {GRID_KINDS}, got {grid!r}")
        self.grid_kind = grid
        self.oracle_delay = validate_positive("oracle_delay", oracle_delay, allow_zero=True)
        self.executor = executor
        self.env: Any = None

    def params(self) -> dict[str, Any]:
        return {"C": self.C, "M": self.M, "grid": self.grid_kind, "lcb_query": self.lcb_query}

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env`` (a linear-reward CMABEnvironment)."""
        check_linear_env(env, self.name)
        self.horizon = validate_int("horizon", horizon, 1)
        M = default_num_epochs(self.horizon) if self.M is None else self.M
        if M > self.horizon:
            raise ValueError(f"M must be at most the horizon T={self.horizon}, got {M}")
        self.num_epochs = M
        self.grid = sroq_time_grid(self.horizon, M, self.grid_kind)
        self.env = env
        self.t = 0
        self.cum_regret = 0.0
        self.log = type(self.log)()
        self.events = []
        self.oracle = Oracle(env.family, self.log, self.oracle_delay, self.executor)
        self.stats = ArmStatistics(env.d)
        self.surviving = np.arange(env.d)  # N_tau
        self.excluded = np.zeros(env.d, dtype=bool)  # arms not in N_tau (defines A_tau)
        self.epoch = 0  # tau of the current epoch (0 before the first)
        self._epoch_end = 0
        self._schedule: np.ndarray | None = None  # (|N_tau|, d) representatives
        self._gaps: np.ndarray | None = None
        self._regret_base = 0.0
        self._epoch_start = 1

    def epoch_bounds(self, tau: int) -> tuple[int, int]:
        """First and last round of epoch ``tau`` (1-based)."""
        start = int(self.grid[tau - 1])
        end = int(self.grid[tau]) - 1 if tau < self.num_epochs else self.horizon
        return start, end

    def _start_epoch(self) -> None:
        """Lines 5-8 of Algorithm 2 at the first round of the next epoch."""
        tau = self.epoch + 1
        start, end = self.epoch_bounds(tau)
        ucb, lcb = self.stats.indices(self.C, math.log(self.horizon))
        prev = self.surviving
        exclude = self.excluded.copy()
        requests = [
            OracleRequest(
                f"representative of arm {i}", scores=ucb, include=(int(i),), exclude=exclude, arm=i
            )
            for i in prev
        ]
        lcb_request = OracleRequest("max LCB", scores=lcb, exclude=exclude)
        results = epoch_queries(self.oracle, requests, lcb_request, start, self.lcb_query)
        lcb_action = results[-1]
        max_lcb = -np.inf if lcb_action is None else float(lcb[lcb_action].sum())
        reps: dict[int, np.ndarray] = {}
        keep = []
        for i, a in zip(prev, results[:-1]):
            if a is None:
                continue
            a = np.asarray(a, dtype=bool)
            if float(ucb[a].sum()) >= max_lcb:
                keep.append(int(i))
                reps[int(i)] = a
        if not keep:  # cannot happen with exact oracles (arms of a^dagger survive); be safe
            pairs = [(int(i), a) for i, a in zip(prev, results[:-1]) if a is not None]
            keep = [i for i, _ in pairs]
            reps = {i: np.asarray(a, dtype=bool) for i, a in pairs}
        surviving = np.array(keep, dtype=np.int64)
        eliminated = np.setdiff1d(prev, surviving)
        self.surviving = surviving
        self.excluded[eliminated] = True
        self._schedule = np.stack([reps[i] for i in keep])
        self._gaps = np.array([self.env.gap(a) for a in self._schedule])
        self.epoch = tau
        self._epoch_start, self._epoch_end = start, end
        self._plays = np.zeros(len(keep), dtype=np.int64)
        self.events.append(
            PolicyEvent(
                start,
                "epoch",
                {
                    "epoch": tau,
                    "start": start,
                    "end": end,
                    "surviving": surviving.copy(),
                    "eliminated": eliminated,
                    "representatives": {i: a.copy() for i, a in reps.items() if i in keep},
                    "lcb_action": None if lcb_action is None else np.asarray(lcb_action).copy(),
                    "max_lcb": max_lcb,
                },
            )
        )

    def advance(self, until: int) -> int:
        """Play up to ``until`` or to the end of the current epoch (a decision point)."""
        if self.env is None:
            raise RuntimeError(f"{self.name}: call reset(env, horizon) before advance()")
        until = min(int(until), self.horizon)
        if until <= self.t:
            return self.t
        if self.t == self._epoch_end:
            self._start_epoch()
        end = min(until, self._epoch_end)
        L = end - self.t
        sums, counts, plays = play_schedule_sums(self.env, self._schedule, self.t + 1, L)
        self.stats.add(slice(None), sums, counts)
        self._plays += plays
        self.t = end
        # exact and chunking-invariant: integer play counts times per-representative gaps
        self.cum_regret = self._regret_base + float(self._plays @ self._gaps)
        if self.t == self._epoch_end:
            self._regret_base = self.cum_regret
        return self.t

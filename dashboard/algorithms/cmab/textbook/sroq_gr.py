"""SROQ-GR-CMAB, Scheduled Rare Oracle Queries for general rewards (Algorithm 7, Theorem 6,
Appendix A.7.2), round by round.

For each base arm ``i`` keep the empirical law of its outcomes (``F_hat_{tau,i}``, its CDF, from
``n_{tau,i}`` plays).  The epochs follow SROQ-CMAB's time grid ``t_1 = 1 < ... < t_M``
(:func:`~..policies.shared.epoch_ends`, shared with Algorithms 2 and 4).  With
``rho_{tau,i} = sqrt(C ln T / n_{tau,i})``, ``D_under_{tau,i}`` has CDF
``max(F_hat_{tau,i} - rho, 0)`` below the top of the support and 1 at it, ``D_over_{tau,i}``
has CDF ``min(F_hat_{tau,i} + rho, 1)`` (a never-played arm: the point mass at the top, resp.
the bottom), and ``r^UCB_tau(a)``, ``r^LCB_tau(a)`` are the expectations of ``r(a, y)`` under
them (Eq. (11)).  At the start ``t`` of epoch ``tau`` (``N_0 = [d]``, ``A_0`` every action):

1. line 4: update ``F_hat_tau`` (every outcome of rounds ``1 .. t - 1``);
2. line 5: for every ``i in N_{tau-1}`` the representative
   ``a^(i) = argmax_{a in A_{tau-1}, i in a} r^UCB_tau(a)`` (one query each);
3. line 6: ``N_tau`` keeps the ``i`` with ``r^UCB_tau(a^(i)) >= max_{a in A_{tau-1}}
   r^LCB_tau(a)`` (one more query); line 7: ``A_tau`` drops the actions using another arm;
4. lines 8-12: each round ``t`` of the epoch plays ``a^(i)`` for ``i`` the
   ``(t mod |N_tau|)``-th element of ``N_tau`` (in increasing order, counted from 0).

The oracle enumerates the actions ``A_{tau-1}`` (ties: the first); a linear reward needs only
the laws' means.  The queries of lines 5 and 6 are independent: one parallel round
(Appendix A.1, ``lcb_query="parallel"``) or line 6 as its own round (``"sequential"``,
A.9's count).  Laws with more than ``max_atoms`` distinct outcomes are rounded up (UCB) or
down (LCB) to a grid of the support (:class:`~..policies.empirical.EmpiricalDistributions`,
shared with the fast engine).  Pseudo-regret: play counts of each action times its gap, summed
exactly.  The fast engine (:class:`~dashboard.algorithms.cmab.policies.general.SROQGR`) scores
all actions at once with certified error bounds (exact expectations, cached by law, for close
calls) and plays an epoch's schedule as one block, so it gives these numbers.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from functools import partial
from typing import Any

import numpy as np

from ...base import Policy, PolicyEvent, validate_int
from ...declare import AlgorithmDeclaration
from ..oracle import Oracle, OracleRequest
from ..policies.constants import C_GR, CMAB_ANY, GRID_OPTIONAL, LCB_QUERY, M_EPOCHS, MAX_ATOMS
from ..policies.empirical import EmpiricalDistributions, number
from ..policies.shared import RegretCounter, epoch_ends
from ..policies.sroq import validate_lcb_query
from ..rewards.laws import expected_aggregate, reward_function_of

__all__ = ["SROQGR", "expected_reward"]


def expected_reward(laws: list, kind: str, action: np.ndarray) -> float:
    """``E[r(a, y)]`` with the outcomes of ``a``'s arms independent and distributed as
    ``laws`` (Lemma 9: folded arm by arm, in arm order).  Module level: picklable."""
    arms = np.flatnonzero(action)
    return expected_aggregate([laws[i][0] for i in arms], [laws[i][1] for i in arms], kind)


class SROQGR(Policy):
    """SROQ-GR-CMAB: oracle queries only at the starts of scheduled epochs (Algorithm 7).

    Parameters
    ----------
    C : float
        Radius constant of ``sqrt(C ln T / n)`` (default 1.5).
    M : int, optional
        Number of epochs (default: SROQ-CMAB's, about ``log2 log2 T``).
    grid_kind : str, optional
        Time-grid convention of ``sroq_time_grid`` (``None``: its default).
    oracle_delay : float
        Simulated seconds per oracle call.
    executor : concurrent.futures.Executor, optional
        Runs each epoch's queries concurrently.
    max_atoms : int
        Cap on the atoms of each law (continuous outcomes only).
    lcb_query : {"parallel", "sequential"}
        Line 6's query joins line 5's round (default, A.1) or is its own round (A.9).
    """

    declaration = AlgorithmDeclaration(
        name="SROQ-GR-CMAB",
        problem="cmab",
        reference="Algorithm 7",
        constants=(C_GR, M_EPOCHS, GRID_OPTIONAL, MAX_ATOMS, LCB_QUERY),
        rewards=CMAB_ANY,
        doc="SROQ for general rewards with optimistic outcome distributions",
    )

    def __init__(
        self,
        C: float = 1.5,
        M: int | None = None,
        grid_kind: str | None = None,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
        max_atoms: int = 64,
        lcb_query: str = "parallel",
    ) -> None:
        super().__init__()
        self.C = number("C", C, 0.0, allow_low=True)
        self.M = None if M is None else validate_int("M (number of epochs)", M, 1)
        self.grid_kind = grid_kind
        self.oracle_delay = number("oracle_delay", oracle_delay, 0.0, allow_low=True)
        if executor is not None and not isinstance(executor, Executor):
            raise ValueError("executor must be a concurrent.futures.Executor or None")
        self.executor = executor
        self.max_atoms = validate_int("max_atoms", max_atoms, 2)
        self.lcb_query = validate_lcb_query(lcb_query)
        self.env: Any = None

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env`` (``N_0 = [d]``)."""
        Policy.__init__(self)
        if getattr(env, "model", None) is None or not hasattr(env, "family"):
            raise ValueError(f"{self.name} needs a CMABEnvironment (model.environment(...))")
        self.horizon = validate_int("horizon", horizon, 1)
        self.env, self.d, self.m = env, env.d, env.m
        self.kind = reward_function_of(env.model)  # "sum", "sqrt-sum" or "max"
        self.oracle = Oracle(env.family, self.log, self.oracle_delay, self.executor)
        self.laws = EmpiricalDistributions(self.d)  # F_hat and n
        self.regret = RegretCounter(env)
        self.atom_cap = self.max_atoms
        self.ends = epoch_ends(self.horizon, self.M, self.grid_kind)  # last round of each epoch
        self.N = np.ones(self.d, dtype=bool)  # N_tau as a mask (A_tau: no arm outside it)
        self.epoch = 0
        self.reps: list[np.ndarray] = []  # a^(i) for i in N_tau, in increasing i

    def observe(self, arm: int, y: np.ndarray) -> None:
        """Line 12: add outcomes ``y`` of ``arm`` to its empirical law."""
        self.laws.add(arm, y)

    def laws_of_eq_11(self) -> tuple[list, list]:
        """``D_under_tau`` and ``D_over_tau`` of every arm (Eq. (11), radius with ``ln T``)."""
        n = self.laws.n
        with np.errstate(divide="ignore"):
            rho = np.where(
                n > 0, np.sqrt(self.C * math.log(self.horizon) / np.maximum(n, 1)), np.inf
            )
        up = [self.laws.optimistic(i, float(rho[i]), self.atom_cap) for i in range(self.d)]
        down = [self.laws.pessimistic(i, float(rho[i]), self.atom_cap) for i in range(self.d)]
        return up, down

    def request(self, purpose: str, laws: list, include: tuple, arm: int = -1) -> OracleRequest:
        """``argmax`` over ``A_{tau-1}`` (no arm outside ``N_{tau-1}``) containing ``include``
        of the expected reward under ``laws``."""
        banned = ~self.N
        if self.kind == "sum":  # linear: the expected reward is the sum of the means
            means = np.array([float(v @ p) for v, p in laws])
            return OracleRequest(purpose, scores=means, include=include, exclude=banned, arm=arm)
        f = partial(expected_reward, laws, self.kind)
        return OracleRequest(purpose, f=f, include=include, exclude=banned, arm=arm)

    def start_epoch(self, t: int) -> None:
        """Lines 4-7 of epoch ``tau`` starting at round ``t``."""
        self.epoch += 1
        end = int(self.ends[self.epoch - 1])
        ucb_laws, lcb_laws = self.laws_of_eq_11()
        prev = np.flatnonzero(self.N)  # N_{tau-1}
        reps = [
            self.request(f"representative of arm {i}", ucb_laws, (int(i),), int(i)) for i in prev
        ]  # line 5
        lcb = self.request("LCB max (11)", lcb_laws, ())  # line 6's max
        if self.lcb_query == "parallel":  # one adaptivity round (A.1)
            out = self.oracle.batch([*reps, lcb], t)
        else:  # line 6 after line 5 (A.9)
            out = [*self.oracle.batch(reps, t), self.oracle.call(lcb, t)]
        a_lcb = out[-1]
        max_lcb = -math.inf if a_lcb is None else expected_reward(lcb_laws, self.kind, a_lcb)
        found = [(int(i), a) for i, a in zip(prev, out[:-1]) if a is not None]  # the a^(i)
        keep = [(i, a) for i, a in found if expected_reward(ucb_laws, self.kind, a) >= max_lcb]
        if not keep:  # impossible with an exact oracle (the LCB maximiser's arms survive)
            keep = found
        surviving = np.array([i for i, _ in keep], dtype=np.int64)
        self.N = np.zeros(self.d, dtype=bool)  # N_tau (line 6), hence A_tau (line 7)
        self.N[surviving] = True
        self.reps = [np.asarray(a, dtype=bool) for _, a in keep]
        self.events.append(
            PolicyEvent(
                t,
                "epoch",
                {
                    "epoch": self.epoch,
                    "start": t,
                    "end": end,
                    "surviving": surviving,
                    "eliminated": np.setdiff1d(prev, surviving),
                    "max_lcb": max_lcb,
                },
            )
        )

    def advance(self, until: int) -> int:
        """Play up to ``until``, stopping at the end of an epoch (a decision point)."""
        if self.env is None:
            raise RuntimeError(f"{self.name}: call reset(env, horizon) before advance()")
        until = min(int(until), self.horizon)
        if self.t >= until:
            return self.t
        if self.epoch == 0 or self.t >= self.ends[self.epoch - 1]:
            self.start_epoch(self.t + 1)
        until = min(until, int(self.ends[self.epoch - 1]))
        while self.t < until:
            t = self.t + 1
            a = self.reps[t % len(self.reps)]  # line 11: the (t mod |N_tau|)-th arm's a^(i)
            y = self.env.play_fixed(a, t, 1)  # line 12: outcomes of a_t's arms, in arm order
            for k, i in enumerate(np.flatnonzero(a)):
                self.observe(int(i), y[:, k])
            self.regret.add(a, 1)
            self.t = t
        self.cum_regret = self.regret.value
        return self.t

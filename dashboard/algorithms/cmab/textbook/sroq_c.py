"""SROQ-C-CMAB, scheduled rare oracle queries with covariance-adaptive widths (Algorithm 4 of
the oracle-efficient paper, Section 4.2 and Appendix A.6), round by round.

The statistics and the indices ``r^UCB`` (Eq. (3)) and ``r^LCB`` (Eq. (4)) are AROQ-C's
(:mod:`.aroq_c`, Section 4.1), evaluated with ``f_T, h_T`` (``log T``) and equal to ``-inf``
on an action with a pair outside ``N^(2)_(tau-1)``; the oracle maximises them by enumerating
the actions (ties: the first).

* lines 3-6 (initialisation): ``P = d(d+1)/2`` rounds, round ``t`` playing an action with the
  ``(t-1)``-th pair ``i <= j`` (one parallel round of look-ups; infeasible pairs are skipped);
* the remaining rounds follow SROQ-CMAB's time grid (shared with Algorithm 2), shifted to
  start after the initialisation; epoch ``tau`` covers ``t_tau .. t_(tau+1) - 1``;
* at ``t_tau``, one parallel oracle round (Appendix A.1): ``a^(i) = argmax r^UCB`` over the
  actions of ``A_(tau-1)`` containing ``i``, for ``i in N_(tau-1)`` (line 10), ``a^(i,j)`` for
  the pairs ``{i, j}`` of ``N^(2)_(tau-1)`` (line 11) and ``argmax_(A_(tau-1)) r^LCB``
  (line 12); ``N_tau = {i : r^UCB(a^(i)) >= max r^LCB}`` (line 13);
* a second, sequential round: ``max r^LCB`` over ``A'_tau`` (the actions inside ``N_tau``,
  line 14); ``N^(2)_tau = {(i, j) : i, j in N_tau, r^UCB(a^(i,j)) >= that max}`` and
  ``A_tau`` drops every action with an arm outside ``N_tau`` or a pair outside ``N^(2)_tau``
  (line 15);
* lines 16-26: round ``t`` of the epoch plays ``a^(i)``, ``i`` the ``(t mod |N_tau|)``-th arm
  of ``N_tau``; its last ``P_tau`` rounds play ``a^(i,j)``, ``(i, j)`` the
  ``(t mod |N^(2)_tau|)``-th kept pair.  The paper's pair phase ``(d^2 m^2 T_tau log T)^(2/3)``
  exceeds the epoch at classroom sizes, so ``P_tau = min(ceil(pair_multiplier paper),
  floor(pair_fraction T_tau))`` (0 without kept pairs; a ``"pair phase clamped"`` event when
  the cap binds).

The fast one-repetition policy (:class:`dashboard.algorithms.cmab.policies.covariance.SROQC`)
scores the actions with a certified error bound and rechecks close calls with these exact
values, so it gives these numbers.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from functools import partial
from typing import Any

import numpy as np

from ...base import Policy, PolicyEvent, validate_int, validate_positive
from ...declare import AlgorithmDeclaration
from ..oracle import Oracle, OracleRequest
from ..policies.constants import (
    CMAB_LINEAR,
    F_CONST,
    GRID_OPTIONAL,
    H_CONST,
    M_EPOCHS,
    PAIR,
    PAIR_FRACTION,
)
from ..policies.shared import RegretCounter, epoch_ends
from .aroq_c import CovarianceStatistics, f_h, fraction, r_index

__all__ = ["SROQC"]


class SROQC(Policy):
    """SROQ-C-CMAB: two adaptivity rounds of oracle queries per epoch of a fixed time grid.

    Parameters
    ----------
    f_const, h_const : float
        Constants of ``f_T`` and ``h_T`` (defaults 0.05 and 0.5, as AROQ-C).
    M : int, optional
        Number of epochs of the time grid (default: SROQ-CMAB's ``default_num_epochs``).
    grid_kind : str, optional
        Passed to ``sroq_time_grid`` (``None``: its default).
    pair_multiplier : float
        Multiplier of the paper's pair phase length, default 1.
    pair_fraction : float
        Cap of the pair phase as a share of the epoch, in [0, 1], default 0.3.
    oracle_delay : float
        Simulated seconds per oracle call.
    executor : concurrent.futures.Executor, optional
        Runs each parallel round concurrently.
    """

    declaration = AlgorithmDeclaration(
        name="SROQ-C-CMAB",
        problem="cmab",
        reference="Algorithm 4",
        constants=(F_CONST, H_CONST, M_EPOCHS, GRID_OPTIONAL, PAIR, PAIR_FRACTION),
        rewards=CMAB_LINEAR,
        doc="SROQ with covariance-aware widths and a pair phase (Section 4)",
    )

    def __init__(
        self,
        f_const: float = 0.05,
        h_const: float = 0.5,
        M: int | None = None,
        grid_kind: str | None = None,
        pair_multiplier: float = 1.0,
        pair_fraction: float = 0.3,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
    ) -> None:
        super().__init__()
        self.f_const = validate_positive("f_const", f_const, allow_zero=True)
        self.h_const = validate_positive("h_const", h_const, allow_zero=True)
        self.oracle_delay = validate_positive("oracle_delay", oracle_delay, allow_zero=True)
        if executor is not None and not isinstance(executor, Executor):
            raise ValueError("executor must be a concurrent.futures.Executor or None")
        self.executor = executor
        self.M = None if M is None else validate_int("M (number of epochs)", M, 1)
        self.grid_kind = grid_kind
        self.pair_multiplier = validate_positive("pair_multiplier", pair_multiplier, True)
        self.pair_fraction = fraction("pair_fraction", pair_fraction)
        self.env: Any = None

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env`` (linear or covariance rewards)."""
        Policy.__init__(self)
        self.horizon = validate_int("horizon", horizon, 1)
        if not getattr(env.model, "linear", False):
            raise ValueError(
                f"{self.name} needs a linear reward model (linear or covariance), "
                f"got {type(env.model).__name__}"
            )
        self.env, self.d = env, env.d
        d = env.d
        self.oracle = Oracle(env.family, self.log, self.oracle_delay, self.executor)
        self.stats = CovarianceStatistics(d)
        s = self.stats  # its arrays, updated in place, under their own names too
        self.n, self.sy, self.n2, self.syy = s.n, s.sy, s.n2, s.syy
        self.regret = RegretCounter(env)
        self.init_length = min(d * (d + 1) // 2, self.horizon)  # lines 3-6
        self.pair_actions: np.ndarray | None = None
        self.ends = self._grid()
        self.N = np.ones(d, dtype=bool)  # N_(tau-1)
        self.allowed = np.ones((d, d), dtype=bool)  # N^(2)_(tau-1) (the diagonal always)
        self.tau = 0
        self.end = 0  # last round of epoch tau
        self.pair_phases: list[int] = []

    def _grid(self) -> np.ndarray:
        """Last round of each epoch: the SROQ grid over the rounds after the initialisation."""
        rest = self.horizon - self.init_length
        if rest <= 0:
            return np.zeros(0, dtype=np.int64)
        return self.init_length + epoch_ends(rest, self.M, self.grid_kind)

    def _initial_round(self, t: int) -> None:
        """Lines 3-6 at round ``t``: an action containing the ``(t-1)``-th pair."""
        if self.pair_actions is None:  # "any a in A s.t. i in a, j in a", in parallel
            pairs = [(i, j) for i in range(self.d) for j in range(i, self.d)]
            reqs = [
                OracleRequest("warm-up pair action", scores=np.zeros(self.d), include=[i, j], arm=i)
                for i, j in pairs
            ]
            acts = [a for a in self.oracle.batch(reqs, t) if a is not None]
            if not acts:
                raise ValueError("the action family has no feasible action")
            self.pair_actions = np.asarray(acts, dtype=bool)
            self.init_length = min(self.init_length, len(acts))
            self.ends = self._grid()
        self._play(self.pair_actions[(t - 1) % len(self.pair_actions)], t)

    def _start_epoch(self, t: int) -> None:
        """Lines 8-15 at ``t = t_tau``: the two oracle rounds, ``N_tau`` and ``N^(2)_tau``."""
        d, T = self.d, self.horizon
        self.tau += 1
        self.end = end = int(self.ends[self.tau - 1])
        T_tau = end - t + 1
        f, h = f_h(T, d, self.f_const, self.h_const)
        mu, G, inv_n = self.stats.index_parts(h)
        ucb = partial(r_index, mu=mu, G=G, inv_n=inv_n, f=f, sign=1.0, allowed=self.allowed)
        lcb = partial(r_index, mu=mu, G=G, inv_n=inv_n, f=f, sign=-1.0, allowed=self.allowed)
        banned = ~self.N  # A_(tau-1): no arm outside N_(tau-1) (and no banned pair: -inf)
        arms = np.flatnonzero(self.N)
        pairs = [(i, j) for i in range(d) for j in range(i + 1, d)]
        pairs = [(i, j) for i, j in pairs if self.allowed[i, j] and self.N[i] and self.N[j]]
        reqs = [  # line 10
            OracleRequest(f"representative of arm {i}", f=ucb, include=[i], exclude=banned, arm=i)
            for i in arms
        ]
        reqs += [  # line 11
            OracleRequest("representative of pair", f=ucb, include=[i, j], exclude=banned, arm=i)
            for i, j in pairs
        ]
        reqs.append(OracleRequest("LCB max", f=lcb, exclude=banned))  # line 12
        out = self.oracle.batch(reqs, t)
        rep = {int(i): out[k] for k, i in enumerate(arms)}
        rep_pair = {p: out[len(arms) + k] for k, p in enumerate(pairs)}

        def ok(a: np.ndarray | None) -> bool:
            return a is not None and ucb(a) > -math.inf

        lcb_max = lcb(out[-1]) if ok(out[-1]) else -math.inf
        N = np.zeros(d, dtype=bool)  # line 13
        for i, a in rep.items():
            N[i] = ok(a) and ucb(a) >= lcb_max
        if not N.any():  # cannot happen with an exact oracle; keep the LCB action's arms
            N = np.asarray(out[-1], dtype=bool) & self.N
        # line 14, a second (sequential) round: max r^LCB over A'_tau
        a2 = self.oracle.call(OracleRequest("LCB max over A'", f=lcb, exclude=~N), t)
        lcb_restricted = lcb(a2) if ok(a2) else -math.inf
        allowed = np.eye(d, dtype=bool)  # line 15
        kept = []
        for (i, j), a in rep_pair.items():
            if N[i] and N[j] and ok(a) and ucb(a) >= lcb_restricted:
                allowed[i, j] = allowed[j, i] = True
                kept.append((i, j))
        self.N, self.allowed = N, allowed
        # lines 16-26: the epoch's schedule
        paper = (d * d * self.env.m**2 * T_tau * math.log(T)) ** (2.0 / 3.0)
        requested = math.ceil(self.pair_multiplier * paper) if kept else 0
        cap = math.floor(self.pair_fraction * T_tau)
        self.P_tau = min(requested, cap)
        if requested > cap:
            data = {"tau": self.tau, "paper": paper, "requested": requested, "used": self.P_tau}
            self.events.append(PolicyEvent(t, "pair phase clamped", data))
        surv = np.flatnonzero(N)
        self.representatives = np.asarray([rep[int(i)] for i in surv], dtype=bool)
        if self.P_tau > 0:
            self.pair_representatives = np.asarray([rep_pair[p] for p in kept], dtype=bool)
        self.pair_phases.append(self.P_tau)
        data = {"epoch": self.tau, "start": t, "end": end, "surviving": surv}
        data.update(pairs=len(kept), length=T_tau, pair_phase=self.P_tau)
        self.events.append(PolicyEvent(t, "epoch", data))

    def _epoch_round(self, t: int) -> None:
        """Lines 16-26 at round ``t`` of epoch ``tau``."""
        if t > self.end - self.P_tau:  # the pair phase
            acts = self.pair_representatives
        else:
            acts = self.representatives
        self._play(acts[t % len(acts)], t)

    def _play(self, action: np.ndarray, t: int) -> None:
        y = self.env.play(action[None], t)[0]
        self.stats.add(action, y[action])
        self.regret.add(action, 1)

    def advance(self, until: int) -> int:
        """Play up to ``until``, stopping early before an epoch's first round."""
        if self.env is None:
            raise RuntimeError(f"{self.name}: call reset(env, horizon) before advance()")
        until, start = min(int(until), self.horizon), self.t
        while self.t < until:
            t = self.t + 1
            if t <= self.init_length:
                self._initial_round(t)
            else:
                if t > self.end:
                    if self.t > start:
                        break  # a decision point: the next epoch's oracle rounds
                    self._start_epoch(t)
                self._epoch_round(t)
            self.t = t
        self.cum_regret = self.regret.value
        return self.t

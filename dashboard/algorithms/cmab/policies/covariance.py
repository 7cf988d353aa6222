"""Covariance-adaptive combinatorial semi-bandits (Section 4 of the oracle-efficient paper).

* :class:`AROQC` -- AROQ-C-CMAB, Algorithm 3 (adaptive rare oracle queries),
* :class:`SROQC` -- SROQ-C-CMAB, Algorithm 4 (scheduled rare oracle queries),
* :class:`OLSUCBC` -- OLS-UCB-C (Zhou et al. 2024), the per-round baseline of Appendix A.11.1.

All three use the estimators of Section 4.1: ``mu_hat = D_n^{-1} sum_s D_{a_s} y_s``,
``Sigma_hat = S_hat - mu_hat mu_hat^T`` with ``S_hat_(i,j)`` the mean of ``y_i y_j`` over the
``n_(i,j)`` rounds where both arms were played, the upper confidence bound

    Sigma_bar_(i,j) = Sigma_hat_(i,j) + (5 h / sqrt(n_(i,j)) + h^2 / n_(i,j) + 1 / n_(i,j)^2) / 4,

the Gram matrix ``G_bar = sum_s D_{a_s} Sigma_bar D_{a_s} + D_{Sigma_bar} D_n + I`` (entrywise
``Sigma_bar_(i,j) n_(i,j)`` plus ``Sigma_bar_(i,i) n_i`` on the diagonal, plus ``I``) and the
index of Eq. (3)/(4): ``<a, mu_hat> +/- f ||D_n^{-1} a||_{G_bar}``.  The index is not linear in
``a``, so every oracle call is ``argmax_a f(a)`` through ``OracleRequest(f=...)``.

The paper gives ``f_t = O(log t + d log log t)`` and ``h_t = O(sqrt(log t + log d))`` only up to
constants.  We use ``f_t = f_const (log t + d log log t)`` and
``h_t = h_const sqrt(log t + log d)`` with ``log t`` evaluated at ``max(t, 3)`` so that
``log log t > 0``; ``f_const`` and ``h_const`` are constructor parameters.  Entries with
``n_(i,j) = 0`` contribute nothing to ``G_bar`` (their weight ``n_(i,j)`` is 0), and an action
containing an arm with ``n_i = 0`` has an infinite UCB (and LCB ``-inf``).

The shared state and warm-up are in :mod:`.covariance_base`; OLS-UCB-C and its batched engine
in :mod:`.ols_ucb_c` (re-exported here).

Fast engines.  The algorithms, round by round, are the textbook files
:mod:`dashboard.algorithms.cmab.textbook.aroq_c` and
:mod:`dashboard.algorithms.cmab.textbook.sroq_c`;
:class:`AROQC` and :class:`SROQC` are their fast one-repetition policies (blocks of rounds
between decisions, epoch crossings in closed form, the index's arg-max certified by
:class:`~.covariance_index.CovIndex`) under the same declarations; :class:`BatchedAROQC` and
:class:`BatchedSROQC`, the registry's fast engines, name them (the runner plays ``R`` of them
side by side).
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from typing import Any

import numpy as np

from ...base import PolicyEvent, validate_int, validate_positive
from ..oracle import OracleRequest
from ..textbook import aroq_c as textbook_aroq_c
from ..textbook import sroq_c as textbook_sroq_c
from .covariance_base import (
    _CovBase,
    _fraction,
    _pair_list,
)
from .covariance_index import (
    CovStats,
    f_h,
    index_function,
)
from .ols_ucb_c import OLSUCBC, BatchedOLSUCBC
from .per_repetition import PerRepetition
from .shared import RegretCounter, epoch_ends

__all__ = [
    "AROQC",
    "OLSUCBC",
    "SROQC",
    "BatchedAROQC",
    "BatchedOLSUCBC",
    "BatchedSROQC",
    "CovStats",
    "RegretCounter",
    "epoch_ends",
]


class _Statistics:
    """The statistics under the textbook engines' names (the differential suite compares
    them): ``n_i``, ``sum y_i``, ``n_(i,j)``, ``sum y_i y_j`` (fixed point)."""

    stats: CovStats

    @property
    def n(self) -> np.ndarray:
        return self.stats.n

    @property
    def sy(self) -> np.ndarray:
        return self.stats.sy

    @property
    def n2(self) -> np.ndarray:
        return self.stats.n2

    @property
    def syy(self) -> np.ndarray:
        return self.stats.syy


# ----------------------------------------------------------------------------------------------
# Algorithm 3
# ----------------------------------------------------------------------------------------------
class AROQC(_Statistics, _CovBase):
    """AROQ-C-CMAB: adaptive rare oracle queries, covariance-adaptive (Algorithm 3, Section 4.1).

    Warm-up (lines 4-9): for ``t <= W`` play an action containing the ``((t-1) mod P)``-th pair
    of the ``P = d(d+1)/2`` pairs ``(i, j), i <= j`` (0-based enumeration of the paper's
    ``t mod d(d+1)/2``); the actions come from one parallel round of ``P`` oracle calls
    (purpose ``"warm-up pair action"``).  The paper's ``W = ceil(d(d+1) log^3(T) / 2)`` exceeds
    classroom horizons (d = 10, T = 10^4 gives 42 000), so ``W = min(ceil(warmup_multiplier *
    W_paper), floor(warmup_fraction * T))`` and an event ``"warm-up clamped"`` is recorded when
    the cap binds (also exposed as :attr:`warmup_clamped`).

    Epoch bookkeeping follows Algorithm 3 exactly: ``tau_(i,j)`` starts at 0 (line 1); at round
    ``t = W`` lines 8-9 set ``tau_(i,j) = 1`` *before* round ``W`` is played (line 27), so
    ``T_(i,j)(0)`` holds rounds ``1 .. W-1`` and round ``W`` is the first round of
    ``T_(i,j)(1)``.  Line 27 adds ``t`` to ``T_(i,j)`` for every ordered pair of ``a_t``, so
    ``T_(i,j)(tau) = T_(j,i)(tau)`` and ``tau_(i,j) = tau_(j,i)`` always: there are ``P``
    distinct counters, one per unordered pair ``{i, j}`` (the pairs of the warm-up).
    :attr:`tau` stores them on and above the diagonal (``tau[i, j]`` for ``i <= j``, the lower
    triangle is 0), so ``tau.sum()`` counts each pair's epochs once; the sum over all ordered
    pairs of ``[d] x [d]`` written in Appendix A.5 is ``2 tau.sum() - trace(tau)``.

    Main stage (lines 14-23): at the start of round ``t`` every pair with
    ``|T_(i,j)(tau)| >= 1 + 2 |T_(i,j)(tau - 1)|`` starts a new epoch and the oracle is queried
    for ``argmax_a r^UCB_t(a)`` of Eq. (3) with ``f_t, h_t`` (module docstring).  Right after
    the warm-up usually no condition holds, so ``a_{W+1}`` would be the last warm-up action; we
    then make one counted initial oracle call at ``t = W + 1`` (as for AROQ at ``t = 1``, GUIDE
    section 3; its ``"oracle"`` event has ``initial=True``).  Between calls the action is fixed
    and the next crossing is computed in closed form.

    Parameters
    ----------
    f_const : float
        Constant of ``f_t = f_const (log t + d log log t)``, default 0.05.
    h_const : float
        Constant of ``h_t = h_const sqrt(log t + log d)``, default 0.5.
    warmup_multiplier : float
        Multiplier of the paper's warm-up length ``ceil(d(d+1) log^3(T)/2)``, default 1.
    warmup_fraction : float
        Cap of the warm-up as a fraction of the horizon, in [0, 1], default 0.1.
    oracle_delay : float
        Simulated seconds per oracle call.
    executor : concurrent.futures.Executor, optional
        Runs the parallel warm-up lookups concurrently.
    """

    #: The textbook class's declaration (the registry links the fast engine to both).
    declaration = textbook_aroq_c.AROQC.declaration

    def __init__(
        self,
        f_const: float = 0.05,
        h_const: float = 0.5,
        warmup_multiplier: float = 1.0,
        warmup_fraction: float = 0.1,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
    ) -> None:
        super().__init__(f_const, h_const, oracle_delay, executor)
        self._init_warmup(warmup_multiplier, warmup_fraction)

    def reset(self, env: Any, horizon: int) -> None:
        self._start(env, horizon)
        d = self.d
        self._reset_warmup()
        # |T_(i,j)(tau_(i,j))| and |T_(i,j)(tau_(i,j) - 1)|, symmetric d x d
        self.cur = np.zeros((d, d), dtype=np.int64)
        self.prev = np.zeros((d, d), dtype=np.int64)
        self._upper = np.triu(np.ones((d, d), dtype=bool))
        self.tau = np.zeros((d, d), dtype=np.int64)  # tau_(i,j) for i <= j (upper triangle)
        self.action: np.ndarray | None = None

    def _after_rows(self, block: np.ndarray) -> None:
        super()._after_rows(block)
        bf = block.astype(np.int64)
        self.cur += bf.T @ bf

    def advance(self, until: int) -> int:
        until = min(int(until), self.horizon)
        if self.t >= until:
            return self.t
        W = self.warmup_length
        if self.t < W:
            # rounds 1 .. W-1 belong to T_(i,j)(0)
            self._play_warmup(min(until, W - 1))
            if self.t == W - 1 and until >= W:
                # lines 8-9 at t = W, before round W is played (line 27)
                self.prev, self.cur = self.cur.copy(), np.zeros_like(self.cur)
                self.tau[self._upper] += 1
                self._play_warmup(W)
            return self.t
        fire = self.cur >= 1 + 2 * self.prev
        if self.action is None or fire.any():
            self.prev[fire] = self.cur[fire]
            self.cur[fire] = 0
            self.tau[fire & self._upper] += 1
            self._query(self.t + 1, int((fire & self._upper).sum()))
        arms = np.flatnonzero(self.action)
        ix = (arms[:, None], arms)  # np.ix_(arms, arms) without its checks
        to_cross = int(np.min(1 + 2 * self.prev[ix] - self.cur[ix]))
        L = max(1, min(to_cross, until - self.t))
        self._play_fixed(arms, L)
        return self.t

    def _query(self, t: int, fired: int) -> None:
        f, h = f_h(t, self.d, self.f_const, self.h_const)
        mu, G, inv_n = self.stats.index_parts(h)
        ucb = index_function(mu, G, inv_n, f, +1.0)
        a = self.oracle.call(OracleRequest("UCB index (3)", f=ucb), t)
        if a is None:
            raise ValueError("the action family has no feasible action")
        self.action = np.asarray(a, dtype=bool)
        self.events.append(
            PolicyEvent(
                t,
                "oracle",
                {"action": np.flatnonzero(a), "pairs_updated": fired, "initial": fired == 0},
            )
        )

    def _play_fixed(self, arms: np.ndarray, L: int) -> None:
        y = self.env.play_fixed(self.action, self.t + 1, L)
        self.stats.add_fixed(arms, y)
        self.cur[arms[:, None], arms] += L
        self.regret.add(self.action, L)
        self.cum_regret = self.regret.value
        self.t += L


# ----------------------------------------------------------------------------------------------
# Algorithm 4
# ----------------------------------------------------------------------------------------------
class SROQC(_Statistics, _CovBase):
    """SROQ-C-CMAB: scheduled rare oracle queries, covariance-adaptive (Algorithm 4, Sec. 4.2).

    Initialisation (lines 3-6): ``P = d(d+1)/2`` rounds, one per pair ``(i, j), i <= j``, each
    playing an action containing the pair (one parallel round of lookups, as in :class:`AROQC`).
    The remaining ``T - P`` rounds are split by the SROQ time grid (:func:`epoch_ends`, shared
    with SROQ-CMAB, shifted to start after the initialisation).

    At the start of epoch ``tau`` (statistics as of ``t_tau - 1``, ``f_T, h_T`` with ``log T``):

    * adaptivity round 1 (parallel, Appendix A.1): ``a^(i)`` for ``i in N_{tau-1}`` (line 10),
      ``a^(i,j)`` for unordered pairs ``{i, j} in N^(2)_{tau-1}`` (line 11) and
      ``argmax_{A_{tau-1}} r^LCB`` (line 12), all maximising Eq. (4) over ``A_{tau-1}``;
      ``N_tau = {i : r^UCB(a^(i)) >= max r^LCB}``;
    * adaptivity round 2 (sequential): ``max_{A'_tau} r^LCB`` (line 14), then
      ``N^(2)_tau = {(i, j) in N^(2)_{tau-1}, i, j in N_tau : r^UCB(a^(i,j)) >= max r^LCB}`` and
      ``A_tau`` drops every action containing an arm outside ``N_tau`` or a pair outside
      ``N^(2)_tau`` (line 15; pair bans are enforced by the set function returning ``-inf``).

    The epoch of length ``T_tau`` then plays ``a^(i)`` round-robin over ``N_tau`` (``i`` is the
    ``(t mod |N_tau|)``-th element) and finally ``a^(i,j)`` round-robin over ``N^(2)_tau`` for
    ``P_tau`` rounds.  The paper's pair phase ``(d^2 m^2 T_tau log T)^(2/3)`` exceeds the epoch
    for any classroom size, so ``P_tau = min(ceil(pair_multiplier * paper), floor(pair_fraction
    * T_tau))`` (0 when ``N^(2)_tau`` is empty) and a ``"pair phase clamped"`` event is
    recorded when the cap binds.

    Parameters
    ----------
    f_const, h_const : float
        Constants of ``f_T`` and ``h_T`` (defaults 0.05 and 0.5, as :class:`AROQC`).
    M : int, optional
        Number of epochs of the time grid (default: SROQ-CMAB's ``default_num_epochs``).
    grid_kind : str, optional
        Passed to ``sroq_time_grid`` (``None``: its default).
    pair_multiplier : float
        Multiplier of the paper's pair phase length, default 1.
    pair_fraction : float
        Cap of the pair phase as a fraction of the epoch, in [0, 1], default 0.3.
    oracle_delay : float
        Simulated seconds per oracle call.
    executor : concurrent.futures.Executor, optional
        Runs each parallel round concurrently.
    """

    #: The textbook class's declaration (the registry links the fast engine to both).
    declaration = textbook_sroq_c.SROQC.declaration

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
        super().__init__(f_const, h_const, oracle_delay, executor)
        self.M = None if M is None else validate_int("M (number of epochs)", M, 1)
        self.grid_kind = grid_kind
        self.pair_multiplier = validate_positive("pair_multiplier", pair_multiplier, True)
        self.pair_fraction = _fraction("pair_fraction", pair_fraction)

    def reset(self, env: Any, horizon: int) -> None:
        self._start(env, horizon)
        d, T = self.d, self.horizon
        self.init_length = min(d * (d + 1) // 2, T)
        self.ends = self._grid()
        self._pair_acts: np.ndarray | None = None
        self.N = np.ones(d, dtype=bool)  # N_{tau-1}
        self.allowed = np.ones((d, d), dtype=bool)  # pairs in N^(2) (diagonal always allowed)
        self.tau = 0
        self.schedule: np.ndarray | None = None  # (T_tau, d) actions of the current epoch
        self.epoch_start = 0
        self.pair_phases: list[int] = []

    def _grid(self) -> np.ndarray:
        rest = self.horizon - self.init_length
        if rest <= 0:
            return np.zeros(0, dtype=np.int64)
        return self.init_length + epoch_ends(rest, self.M, self.grid_kind)

    def advance(self, until: int) -> int:
        until = min(int(until), self.horizon)
        if self.t >= until:
            return self.t
        if self.t < self.init_length:
            if self._pair_acts is None:
                self._pair_acts = self._pair_actions(self.t + 1)
                self.init_length = min(self.init_length, len(self._pair_acts))
                self.ends = self._grid()
            t0, t1 = self.t + 1, min(until, self.init_length)
            if t1 >= t0:
                rows = (np.arange(t0, t1 + 1) - 1) % len(self._pair_acts)
                self._play_rows(self._pair_acts[rows], t0)
                return self.t
        if self.schedule is None or self.t >= self.epoch_start + len(self.schedule) - 1:
            self._start_epoch(self.t + 1)
        end = self.epoch_start + len(self.schedule) - 1
        t0, t1 = self.t + 1, min(until, end)
        self._play_rows(self.schedule[t0 - self.epoch_start : t1 - self.epoch_start + 1], t0)
        return self.t

    def _start_epoch(self, t: int) -> None:
        d, T = self.d, self.horizon
        self.tau += 1
        end = int(self.ends[self.tau - 1])
        T_tau = end - t + 1
        f, h = f_h(T, d, self.f_const, self.h_const)
        mu, G, inv_n = self.stats.index_parts(h)
        ucb = index_function(mu, G, inv_n, f, +1.0, self.allowed)
        lcb = index_function(mu, G, inv_n, f, -1.0, self.allowed)
        banned = ~self.N
        arms = np.flatnonzero(self.N)
        pairs = [(i, j) for i, j in _pair_list(d, diagonal=False) if self.allowed[i, j]]
        pairs = [(i, j) for i, j in pairs if self.N[i] and self.N[j]]
        reqs = [
            OracleRequest(f"representative of arm {i}", f=ucb, include=[i], exclude=banned, arm=i)
            for i in arms
        ]
        reqs += [
            OracleRequest("representative of pair", f=ucb, include=[i, j], exclude=banned, arm=i)
            for i, j in pairs
        ]
        reqs.append(OracleRequest("LCB max", f=lcb, exclude=banned))
        out = self.oracle.batch(reqs, t)
        rep = {int(i): out[k] for k, i in enumerate(arms)}
        rep_pair = {p: out[len(arms) + k] for k, p in enumerate(pairs)}

        def ok(a: np.ndarray | None) -> bool:
            return a is not None and ucb(a) > -math.inf

        lcb_max = lcb(out[-1]) if ok(out[-1]) else -math.inf
        new_N = np.zeros(d, dtype=bool)
        for i, a in rep.items():
            new_N[i] = ok(a) and ucb(a) >= lcb_max
        if not new_N.any():  # cannot happen with an exact oracle; keep the LCB action's arms
            new_N = np.asarray(out[-1], dtype=bool) & self.N
        # second, sequential round: max LCB over A'_tau (line 14)
        a2 = self.oracle.call(OracleRequest("LCB max over A'", f=lcb, exclude=~new_N), t)
        lcb_restricted = lcb(a2) if ok(a2) else -math.inf
        allowed = np.zeros((d, d), dtype=bool)
        np.fill_diagonal(allowed, True)
        kept_pairs = []
        for (i, j), a in rep_pair.items():
            if new_N[i] and new_N[j] and ok(a) and ucb(a) >= lcb_restricted:
                allowed[i, j] = allowed[j, i] = True
                kept_pairs.append((i, j))
        self.N, self.allowed = new_N, allowed

        # schedule of the epoch (lines 16-26)
        paper_len = (d * d * self.env.m**2 * T_tau * math.log(T)) ** (2.0 / 3.0)
        requested = math.ceil(self.pair_multiplier * paper_len) if kept_pairs else 0
        cap = math.floor(self.pair_fraction * T_tau)
        P_tau = min(requested, cap)
        if requested > cap:
            self.events.append(
                PolicyEvent(
                    t,
                    "pair phase clamped",
                    {"tau": self.tau, "paper": paper_len, "requested": requested, "used": P_tau},
                )
            )
        surv = np.flatnonzero(new_N)
        rep_actions = np.asarray([rep[int(i)] for i in surv], dtype=bool)
        ts = np.arange(t, end + 1)
        sched = rep_actions[ts % len(surv)]
        if P_tau > 0:
            pair_actions = np.asarray([rep_pair[p] for p in kept_pairs], dtype=bool)
            tail = ts[T_tau - P_tau :]
            sched[T_tau - P_tau :] = pair_actions[tail % len(kept_pairs)]
        self.schedule = sched
        self.epoch_start = t
        self.pair_phases.append(P_tau)
        self.events.append(
            PolicyEvent(
                t,
                "epoch",
                {
                    "epoch": self.tau,
                    "start": t,
                    "end": end,
                    "surviving": surv,
                    "pairs": len(kept_pairs),
                    "length": T_tau,
                    "pair_phase": P_tau,
                },
            )
        )


# ----------------------------------------------------------------------------------------------
# Fast engines
# ----------------------------------------------------------------------------------------------
class BatchedAROQC(PerRepetition):
    """AROQ-C-CMAB's fast engine: ``R`` :class:`AROQC` policies side by side."""

    speeds_up = "AROQ-C-CMAB"
    one_repetition = AROQC


class BatchedSROQC(PerRepetition):
    """SROQ-C-CMAB's fast engine: ``R`` :class:`SROQC` policies side by side."""

    speeds_up = "SROQ-C-CMAB"
    one_repetition = SROQC

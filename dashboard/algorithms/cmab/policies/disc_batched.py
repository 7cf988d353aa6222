"""Batched engine of Disc-AROQ-GR-CMAB (Algorithm 8 with Algorithm 6), issue 9.

:class:`BatchedAROQGRCore` runs ``R`` repetitions of :class:`~.general.DiscretizedAROQGR`
with exactly the numbers of ``R`` separate runs (same actions, regrets, pull counters, query
logs and events up to wall times).  Each repetition keeps its own clock: the repetitions query
the oracle at different rounds, so the engine steps by *segments* -- in one step every
repetition that has not reached ``until`` makes its next query (if an epoch ended) and plays
its fixed action up to its next epoch crossing, as the single policy's ``advance`` does.  What
is vectorised across the repetitions:

* the statistics: integer count tables ``(R, d, s + 1)`` on the grid ``j / s`` (Algorithm 8's
  outcomes) instead of per-arm sorted value lists;
* the optimistic laws of Eq. (10) of all querying repetitions at once
  (:func:`~.gr_batch.optimistic_dense`, each with its own ``ln t``) and the oracle's scores of
  every action (one Fourier evaluation, :func:`~.gr_batch.refined_rows`, near-ties refined with
  the reference ``expected_aggregate``: the reference ``argmax``, as the single oracle);
* the outcomes of all segments of a step, as Algorithm 8's interval indices: for the Beta
  model (:class:`~..rewards.general.ContinuousRewards`) straight from the uniforms by
  comparing them with the Beta CDF at the interval ends (:class:`~.beta_levels.BetaIntervals`,
  exactly the index of its ``sample``; the inverse CDF, ~2 us per outcome, is evaluated
  only for the rare uniforms within ``1e-12`` of an interval end's CDF).

The epoch bookkeeping (thresholds, counts, events, query logs, regret counters) is that of the
``R`` single policies, kept in the single policies' own objects.  Other models (or families
whose actions have several sizes) run the single policies in lockstep (same numbers).

The engine is parameterised by its single policy class (``single``), which the policy module
sets: this module imports no policy module (dependencies point one way).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import randomness as rnd
from ...base import ExpensiveLog, Policy, PolicyEvent
from ..rewards.aggregate import action_arms, prefix_table
from .beta_levels import BetaIntervals, interval_index
from .gr_batch import optimistic_dense, refined_rows
from .lockstep import LockstepBatch, PlayToHorizon, check_envs

__all__ = ["BatchedAROQGRCore", "DiscBatchBase"]

#: Largest ``d * s`` for which the Beta CDF thresholds are tabulated (else the inverse CDF).
_MAX_THRESHOLDS = 2_000_000


class DiscBatchBase(PlayToHorizon):
    """What the batched Disc-GR engines share: the constructor (that of the single policy),
    the single policies that keep the logs, events and regret counters, the vectorised
    statistics (count tables on Algorithm 8's grid) and the outcomes' interval indices.

    Subclasses set ``single`` (a callable building the single-repetition policy from the
    constructor's keyword arguments) and implement ``_reset_fast`` / ``_advance_fast``.

    Attributes
    ----------
    t : int
        Rounds every repetition has played (the minimum over repetitions).
    cum_regret : ndarray (R,)
        Exact cumulative pseudo-regret of each repetition.
    logs, events : the single policies' query logs and event lists.
    """

    name = ""
    problem = "cmab"
    single: Callable[..., Policy]

    def __init__(self, **kwargs: Any) -> None:
        proto = type(self).single(**kwargs)  # validates the arguments
        self._kwargs = dict(kwargs)
        for key in kwargs:  # the declared constants, as validated by the policy
            setattr(self, key, getattr(proto, key))
        self.C, self.oracle_delay = proto.C, proto.oracle_delay
        self.t = 0
        self.horizon = 0
        self.cum_regret = np.zeros(0)
        self.logs: list[ExpensiveLog] = []
        self.events: list[list[PolicyEvent]] = []
        self._lockstep: LockstepBatch | None = None
        self.reevaluated = 0

    def params(self) -> dict[str, Any]:
        return dict(self._kwargs)

    def reset(self, envs: Sequence[Any], horizon: int) -> None:
        """Start ``len(envs)`` repetitions of ``horizon`` rounds (shared family and model)."""
        from ..rewards.general import ContinuousRewards

        envs = check_envs(envs, type(self).__name__)
        self.singles = [type(self).single(**self._kwargs) for _ in envs]
        for p, env in zip(self.singles, envs):
            p.reset(env, horizon)  # validates env and horizon, checks the oracle work
        p0 = self.singles[0]
        self.horizon = p0.horizon
        self.logs = [p.log for p in self.singles]
        self.events = [p.events for p in self.singles]
        self.cum_regret = np.zeros(len(envs))
        self.t = 0
        self.envs, self.family, self.model = envs, envs[0].family, envs[0].model
        A = self.family.enumerate()
        groups = action_arms(A) if A.shape[0] else []
        model = type(self.model)
        fast = (
            model.sample is ContinuousRewards.sample
            and model.quantile is ContinuousRewards.quantile
            and p0.kind != "sum"
            and len(groups) == 1
        )
        if not fast:
            self._lockstep = LockstepBatch(self.singles)
            return
        self._lockstep = None
        R, d, s = len(envs), p0.d, p0.intervals
        self.R, self.d, self.s, self.kind = R, d, s, p0.kind
        self.A, self.arms = A, groups[0][1]
        self._prefixes = prefix_table(self.arms) if self.arms.shape[1] > 1 else None
        self.grid = np.arange(s + 1) / s  # 0 and Algorithm 8's levels j / s (exactly)
        self.counts = np.zeros((R, d, s + 1), dtype=np.int64)
        self.n = np.zeros((R, d), dtype=np.int64)
        self._keys = np.stack([self.model._keys_for(e.rep) for e in envs])
        # CDF thresholds (2 (s - 1) per arm, computed once) unless s is huge
        self._levels = (
            BetaIntervals(self.model.alpha, self.model.beta, s, self.model.quantile)
            if d * s <= _MAX_THRESHOLDS
            else None
        )
        self._reset_fast()

    def _reset_fast(self) -> None:
        raise NotImplementedError

    def _advance_fast(self, until: int) -> None:
        raise NotImplementedError

    def _interval_indices(self, rr: np.ndarray, aa: np.ndarray, pulls: np.ndarray) -> np.ndarray:
        """Algorithm 8's index ``j`` (``0 < j <= s``, the outcome is treated as ``j / s``) of
        the outcome ``ContinuousRewards.sample`` draws for repetitions ``rr``, arms ``aa`` at
        pull numbers ``pulls`` (its inverse CDF at the same uniforms)."""
        u = rnd.uniform(self._keys[rr, aa], pulls)
        if self._levels is not None:
            return self._levels.index(aa, u)
        return interval_index(self.model.quantile(aa, u), self.s)

    def _observe(self, rr: np.ndarray, aa: np.ndarray, g: np.ndarray) -> None:
        """Add outcomes with indices ``g`` of arms ``aa`` of repetitions ``rr`` (1-D)."""
        G = self.s + 1
        flat = (rr * self.d + aa) * G + g
        if flat.size < self.counts.size // 8:
            np.add.at(self.counts.reshape(-1), flat, 1)
        else:
            self.counts += np.bincount(flat, minlength=self.counts.size).reshape(self.counts.shape)

    def advance(self, until: int) -> int:
        """Play every repetition to ``min(until, T)``."""
        if self._lockstep is not None:
            self.t = self._lockstep.advance(until)
            self.cum_regret = self._lockstep.cum_regret
            return self.t
        until = min(int(until), self.horizon)
        self._advance_fast(until)
        for r, p in enumerate(self.singles):
            p.cum_regret = p.regret.value
            self.cum_regret[r] = p.cum_regret
        return self.t


class BatchedAROQGRCore(DiscBatchBase):
    """Disc-AROQ-GR for ``R`` repetitions at once; same constructor as the single policy."""

    name = "Disc-AROQ-GR-CMAB"

    def _reset_fast(self) -> None:
        self.ts = np.zeros(self.R, dtype=np.int64)
        self.rows = np.full(self.R, -1, dtype=np.int64)
        # the epoch state of Algorithm 6 stacked (R, d); each single policy's arrays become
        # views of its row, so the single's own methods and attributes stay exact
        for name in ("tau", "count", "prev", "_thr"):
            stacked = np.stack([getattr(p, name) for p in self.singles])
            setattr(self, "_" + name.lstrip("_"), stacked)
            for r, p in enumerate(self.singles):
                setattr(p, name, stacked[r])

    def _advance_fast(self, until: int) -> None:
        while int(self.ts.min()) < until:
            self._step(until)
        self.t = int(self.ts.min())

    # ------------------------------------------------------------------ one step
    def _query(self, q: np.ndarray) -> None:
        """The oracle calls of repetitions ``q`` (each at its own round ``t_r + 1``)."""
        t = self.ts[q] + 1
        start = time.perf_counter()
        P = optimistic_dense(self.counts[q], self.n[q], self.C, np.log(np.maximum(t, 1)))
        rows, n_re = refined_rows(self.grid, P, self.A, self.arms, self.kind, self._prefixes)
        delay = self.oracle_delay
        if delay:
            time.sleep(delay * q.size)
        secs = (time.perf_counter() - start) / q.size
        self.reevaluated += n_re
        for r, tr, row in zip(q.tolist(), t.tolist(), rows.tolist()):
            p = self.singles[r]
            rid = p.log.new_round()
            purpose = "UCB argmax (10)" if tr > 1 else "initial UCB argmax (10)"
            p.log.record(tr, rid, purpose, secs, -1)
            p.action = self.A[row].copy()
            p.events.append(
                PolicyEvent(tr, "oracle", {"advanced": self._fired[r], "action": p.action.copy()})
            )
            self.rows[r] = row

    def _step(self, until: int) -> None:
        active = np.flatnonzero(self.ts < until)
        cnt, thr = self._count, self._thr
        fired_all = cnt[active] >= thr[active]  # (n_active, d): line 5 of Algorithm 6
        need = (self.rows[active] < 0) | fired_all.any(axis=1)
        q = active[need]
        self._fired: dict[int, np.ndarray] = {}
        if q.size:
            mask = np.zeros(cnt.shape, dtype=bool)
            mask[q] = fired_all[need]
            self._tau[mask] += 1
            self._prev[mask] = cnt[mask]
            cnt[mask] = 0
            thr[mask] = self.singles[0]._thresholds(self._prev[mask])  # same T, m, d, c
            for r in q.tolist():
                self._fired[r] = np.flatnonzero(mask[r])
            self._query(q)
        # segments: each active repetition plays its action up to its next crossing
        arms = self.arms[self.rows[active]]  # (n_active, k)
        ra = active[:, None]
        to_cross = np.min(thr[ra, arms] - cnt[ra, arms], axis=1)
        lengths = np.maximum(1, np.minimum(to_cross, until - self.ts[active]))
        tot = int(lengths.sum())
        seg = np.repeat(np.arange(active.size), lengths)  # segment of each round
        step = np.arange(tot) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        rr = np.repeat(active, lengths)[:, None]
        aa = arms[seg]  # (tot, k)
        pulls = np.stack([self.envs[r].pulls for r in active.tolist()])[seg[:, None], aa]
        pulls = pulls + step[:, None]
        rr = np.broadcast_to(rr, aa.shape)
        self._observe(rr.ravel(), aa.ravel(), self._interval_indices(rr, aa, pulls).ravel())
        self.n[ra, arms] += lengths[:, None]  # the arms of one action are distinct
        cnt[ra, arms] += lengths[:, None]
        self.ts[active] += lengths
        for j, r in enumerate(active.tolist()):
            p, L = self.singles[r], int(lengths[j])
            self.envs[r].pulls[arms[j]] += L
            p.regret.add(p.action, L)
            p.t = int(self.ts[r])

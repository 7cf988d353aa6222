"""Batched engine of Disc-SROQ-GR-CMAB (Algorithm 8 with Algorithm 7), issue 9.

:class:`BatchedSROQGRCore` runs ``R`` repetitions of :class:`~.general.DiscretizedSROQGR`
with exactly the numbers of ``R`` separate runs (same schedules, regrets, pull counters, query
logs and events up to wall times).  The SROQ time grid depends only on ``T`` and ``M``, so
every repetition starts its epochs at the same rounds and the engine moves all of them
together.  What is vectorised across the repetitions:

* the statistics: integer count tables ``(R, d, s + 1)`` on the grid ``j / s``;
* one epoch's queries of all repetitions at once: the optimistic and pessimistic laws of
  Eq. (11) (:func:`~.gr_batch.optimistic_dense`, :func:`~.gr_batch.pessimistic_dense`) and
  the reference ``argmax`` of every representative query (line 5: actions containing arm
  ``i`` and no eliminated arm) and of the max-LCB query (line 6) in one call of
  :func:`~.gr_batch.refined_queries`;
* the elimination test ``r^UCB(a^(i)) >= max r^LCB`` decided from the approximate values and
  their error bounds, with the reference ``expected_aggregate`` only when they cannot decide
  (the max-LCB value itself, which the epoch event reports, is always the reference one;
  reference values are read from the cache the single policies share,
  :func:`~..rewards.reference.reference_value`, so the repetitions' equal laws before any
  data are folded once);
* the outcomes of a chunk of rounds: outcomes depend only on ``(repetition, arm, pull
  number)`` and the statistics only on how many times each arm was pulled, so each arm's
  pulls are a range of pull numbers whose interval indices come from
  :class:`~.beta_levels.BetaIntervals` (no inverse CDF); the regret counters get the play
  count of each scheduled action in closed form (round ``t`` plays the ``(t mod K)``-th
  surviving representative).

Other models (or families whose actions have several sizes) run the single policies in
lockstep (same numbers).  The single policy class is set by the policy module (``single``).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...base import PolicyEvent
from ..rewards.reference import reference_value
from .disc_batched import DiscBatchBase
from .gr_batch import exact_laws, optimistic_dense, pessimistic_dense, refined_queries

__all__ = ["BatchedSROQGRCore"]


class BatchedSROQGRCore(DiscBatchBase):
    """Disc-SROQ-GR for ``R`` repetitions at once; same constructor as the single policy."""

    name = "Disc-SROQ-GR-CMAB"

    def _reset_fast(self) -> None:
        p0 = self.singles[0]
        self.ends = p0.ends
        self.lcb_query = p0.lcb_query
        self.N = np.ones((self.R, self.d), dtype=bool)
        self.epoch = 0
        self.epoch_end = 0
        self.keep: list[np.ndarray] = []  # per repetition: surviving representatives (K, d)

    def _advance_fast(self, until: int) -> None:
        while self.t < until:
            if self.t >= self.epoch_end:
                self._start_epoch(self.t + 1)
            end = min(until, self.epoch_end)
            self._play(self.t + 1, end)
            self.t = end
            for p in self.singles:
                p.t = end

    # ------------------------------------------------------------------ epoch start
    def _start_epoch(self, t: int) -> None:
        """Lines 5-7 of Algorithm 7 for every repetition (``SROQGR._start_epoch``)."""
        R = self.R
        self.epoch += 1
        end = int(self.ends[self.epoch - 1])
        start = time.perf_counter()
        logT = math.log(self.horizon)
        Pu = optimistic_dense(self.counts, self.n, self.C, logT)
        Pl = pessimistic_dense(self.counts, self.n, self.C, logT)
        arms = self.arms
        feasible = ~(~self.N)[:, arms].any(axis=2)  # no eliminated arm (both queries)
        qr, qi = np.nonzero(self.N)  # representative queries, arms in increasing order
        # (queries, actions): the action holds the query's arm (A's rows are arms' rows: one
        # action size on the fast path)
        contains = self.A.T[qi]
        owner = np.concatenate([qr, R + np.arange(R)])
        allowed = np.concatenate([feasible[qr] & contains, feasible])
        rows, n_re, approx, bounds = refined_queries(
            self.grid,
            np.concatenate([Pu, Pl]),
            arms,
            self.kind,
            self._prefixes,
            owner,
            allowed,
        )
        self.reevaluated += n_re
        found = allowed.any(axis=1)
        n_rep = qr.size
        kind = self.kind
        self.keep = []
        for r in range(R):
            p = self.singles[r]
            prev = np.flatnonzero(self.N[r])
            mine = np.flatnonzero(qr == r)
            lcb_q = n_rep + r
            max_lcb = -math.inf
            if found[lcb_q]:
                laws = exact_laws(self.grid, Pl[r])
                max_lcb = reference_value([laws[i] for i in arms[rows[lcb_q]]], kind)
            keep, answered = [], []
            ucb_laws = None
            for q in mine.tolist():
                if not found[q]:
                    continue
                answered.append(q)
                lo, hi = approx[q] - bounds[q], approx[q] + bounds[q]
                if lo > max_lcb:
                    ok = True
                elif hi < max_lcb:
                    ok = False
                else:  # too close to call from the approximation: the reference value
                    if ucb_laws is None:
                        ucb_laws = exact_laws(self.grid, Pu[r])
                    ok = reference_value([ucb_laws[i] for i in arms[rows[q]]], kind) >= max_lcb
                if ok:
                    keep.append(q)
            if not keep:  # impossible with an exact oracle (as in SROQGR)
                keep = answered
            surviving = qi[keep]
            self.N[r] = False
            self.N[r, surviving] = True
            self.keep.append(self.A[rows[keep]])
            p.N = self.N[r].copy()
            p.epoch = self.epoch
            p.epoch_start = t
            p.events.append(
                PolicyEvent(
                    t,
                    "epoch",
                    {
                        "epoch": self.epoch,
                        "start": t,
                        "end": end,
                        "surviving": surviving.astype(np.int64),
                        "eliminated": np.setdiff1d(prev, surviving),
                        "max_lcb": max_lcb,
                    },
                )
            )
        self._log_queries(t, qr, qi, time.perf_counter() - start)
        self.epoch_end = end

    def _log_queries(self, t: int, qr: np.ndarray, qi: np.ndarray, seconds: float) -> None:
        """The query records of ``epoch_queries``: one adaptivity round with every
        representative and the LCB query, or (``lcb_query="sequential"``) the LCB query in a
        round of its own."""
        calls = qr.size + self.R
        delay = self.oracle_delay
        if delay:
            time.sleep(delay * calls)
            seconds += delay * calls
        secs = seconds / calls
        for r, p in enumerate(self.singles):
            arms_r = qi[qr == r].tolist()
            log = p.log
            parallel = self.lcb_query == "parallel" and bool(arms_r)
            purposes = [f"representative of arm {i}" for i in arms_r]
            rids = [log.new_round()] * len(arms_r) if arms_r else []
            rids.append(rids[0] if parallel else log.new_round())
            log.record_many(
                np.full(len(rids), t),
                np.array(rids),
                [*purposes, "LCB max (11)"],
                secs,
                np.array([*arms_r, -1]),
            )

    # ------------------------------------------------------------------ playing
    def _play(self, t0: int, t1: int) -> None:
        """Rounds ``t0 .. t1`` of the current epoch for every repetition."""
        rr, aa, nn = [], [], []
        for r, p in enumerate(self.singles):
            reps = self.keep[r]
            K = reps.shape[0]
            c = np.arange(K)
            plays = (t1 - c) // K - (t0 - 1 - c) // K  # rounds t with t mod K == c
            pulls = plays @ reps.astype(np.int64)  # (d,)
            for j in np.flatnonzero(plays):
                p.regret.add(reps[j], int(plays[j]))
            arms = np.flatnonzero(pulls)
            rr.append(np.full(arms.size, r))
            aa.append(arms)
            nn.append(pulls[arms])
        r_of, a_of, n_of = np.concatenate(rr), np.concatenate(aa), np.concatenate(nn)
        by_arm = np.argsort(a_of, kind="stable")  # outcomes grouped by arm (BetaIntervals)
        r_of, a_of, n_of = r_of[by_arm], a_of[by_arm], n_of[by_arm]
        start = np.array([self.envs[r].pulls[a] for r, a in zip(r_of, a_of)], dtype=np.int64)
        total = int(n_of.sum())
        offset = np.arange(total) - np.repeat(np.cumsum(n_of) - n_of, n_of)
        r_flat = np.repeat(r_of, n_of)
        a_flat = np.repeat(a_of, n_of)
        pulls = np.repeat(start, n_of) + offset
        self._observe(r_flat, a_flat, self._interval_indices(r_flat, a_flat, pulls))
        self.n[r_of, a_of] += n_of
        for r, a, k in zip(r_of.tolist(), a_of.tolist(), n_of.tolist()):
            self.envs[r].pulls[a] += k

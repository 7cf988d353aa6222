"""OLS-UCB-C's fast one-repetition policy; its batched engine is :class:`~.batched.BatchedOLSUCBC`.

The algorithm, round by round, is :mod:`dashboard.algorithms.cmab.textbook.ols_ucb_c`; this
policy (the index scored with :func:`.covariance_index.argmax_index`'s certified block bound,
the warm-up played in vectorised blocks) gives its numbers for one repetition, and the runner
uses it for a single repetition (``engine="fast"``).

The estimators and the index of Eq. (3) are those of :mod:`.covariance` (Section 4.1); the
warm-up is Algorithm 3's, shared through :mod:`.covariance_base`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ...base import Stopwatch
from ..textbook import ols_ucb_c as textbook
from .batched import BatchedOLSUCBC
from .covariance_base import _CovBase
from .covariance_index import (
    action_table,
    argmax_index,
    check_enumerable,
    f_h,
    index_values,
)

__all__ = ["OLSUCBC", "BatchedOLSUCBC"]


# ----------------------------------------------------------------------------------------------
# Baseline: OLS-UCB-C
# ----------------------------------------------------------------------------------------------
class OLSUCBC(_CovBase):
    """OLS-UCB-C (Zhou et al., NeurIPS 2024): the covariance-adaptive per-round baseline.

    Faithful simplified version: every round ``t`` after the warm-up it calls the exact oracle
    (enumeration of ``A``, vectorised over actions) for ``argmax_a
    <a, mu_hat_t> + f_t ||D_{n_t}^{-1} a||_{G_bar_t}``, the index of Eq. (3) which the paper
    adopts from that work, with the same ``f_t, h_t`` constants as :class:`AROQC`.  Zhou et
    al.'s exact confidence function and their regularisation constants are not restated in the
    paper; we do not reproduce them.

    Warm-up: Appendix A.5 bounds both algorithms with Lemma 6 ("Proposition 1 in [32]"), which
    holds only for ``t >= d(d+1) log^3(T) / 2``, so the baseline's guarantee assumes the same
    pair warm-up as Algorithm 3.  We give it :class:`AROQC`'s warm-up: the same pair actions
    (one parallel round of ``P = d(d+1)/2`` lookups, purpose ``"warm-up pair action"``), the
    same length ``W = min(ceil(warmup_multiplier * ceil(d(d+1) log^3(T)/2)), floor(
    warmup_fraction * T))`` with the same defaults, and the same ``"warm-up clamped"`` event,
    so a Figure-3 style comparison pays the same exploration cost on both sides.
    ``warmup_fraction=0`` gives the warm-up-free variant (actions containing an unplayed arm
    then have an infinite index, which makes every arm be played first).  Per-round oracle
    calls are recorded with ``log.record_every_round``: ``T - W`` queries and adaptivity rounds
    after the warm-up, plus the ``P`` warm-up lookups (one adaptivity round) when ``W > 0``.

    Parameters
    ----------
    f_const, h_const : float
        Constants of ``f_t`` and ``h_t`` (defaults as :class:`AROQC`).
    warmup_multiplier : float
        Multiplier of the paper's warm-up length ``ceil(d(d+1) log^3(T)/2)``, default 1.
    warmup_fraction : float
        Cap of the warm-up as a fraction of the horizon, in [0, 1], default 0.1 (as
        :class:`AROQC`).
    oracle_delay : float
        Simulated seconds per oracle call.
    """

    #: The textbook class's declaration (the registry links the fast engine to both).
    declaration = textbook.OLSUCBC.declaration

    def __init__(
        self,
        f_const: float = 0.05,
        h_const: float = 0.5,
        oracle_delay: float = 0.0,
        warmup_multiplier: float = 1.0,
        warmup_fraction: float = 0.1,
    ) -> None:
        super().__init__(f_const, h_const, oracle_delay, None)
        self._init_warmup(warmup_multiplier, warmup_fraction)

    def reset(self, env: Any, horizon: int) -> None:
        self._start(env, horizon)
        self._reset_warmup()
        check_enumerable(self.name, env.family)

    def advance(self, until: int) -> int:
        until = min(int(until), self.horizon)
        if self.t >= until:
            return self.t
        if self.t < self.warmup_length:
            self._play_warmup(until)
            return self.t
        t0 = self.t + 1
        seconds = 0.0
        A, Af, arms_table = action_table(self.env.family)
        while self.t < until:
            t = self.t + 1
            with Stopwatch() as sw:
                f, h = f_h(t, self.d, self.f_const, self.h_const)
                mu, G, inv_n = self.stats.index_parts(h)
                if arms_table is None:  # actions of several sizes: the reference loop
                    a = A[int(np.argmax(index_values(Af, mu, G, inv_n, f)))]
                else:
                    rows, _ = argmax_index(A, Af, arms_table, mu[None], G[None], inv_n[None], f)
                    a = A[int(rows[0])]
                if self.oracle_delay:
                    time.sleep(self.oracle_delay)
            seconds += sw.seconds
            arms = np.flatnonzero(a)
            self.stats.add_fixed(arms, self.env.play_fixed(a, t, 1))
            self.regret.add(a, 1)
            self.t = t
        self.cum_regret = self.regret.value
        self.log.record_every_round(t0, self.t, "UCB index (3)", seconds)
        return self.t


BatchedOLSUCBC.single = OLSUCBC
#: The fast engine's one-repetition policy (the runner's choice for R = 1).
BatchedOLSUCBC.one_repetition = OLSUCBC

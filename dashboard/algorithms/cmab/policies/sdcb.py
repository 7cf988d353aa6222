"""SDCB's fast one-repetition policy (Chen et al. 2016); its batched engine is
:class:`~.batched.BatchedSDCB`.

The algorithm, round by round, is :mod:`dashboard.algorithms.cmab.textbook.sdcb`; this policy
(the oracle scoring every action at once with certified bounds) gives its numbers for one
repetition, and the runner uses it for a single repetition (``engine="fast"``);
:class:`~.batched.BatchedSDCB` runs ``R`` repetitions with the same numbers.  The optimistic
laws are those of :mod:`.gr_stats` (Eq. (10)), shared with AROQ-GR (:mod:`.general`).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ...base import Stopwatch
from ..textbook import sdcb as textbook
from .batched import BatchedSDCB
from .gr_stats import _GRBase

__all__ = ["SDCB", "BatchedSDCB"]


class SDCB(_GRBase):
    """SDCB, Stochastically Dominant Confidence Bound (Chen, Hu, Li, Li, Liu, Lu, NeurIPS 2016).

    The per-round baseline of Section 5: every round ``t`` the oracle returns ``argmax_a`` of the
    expected reward under the optimistic CDFs ``max(F_hat_{t,i} - sqrt(C ln t / n_{t,i}), 0)``
    (the same Eq. (10) as Algorithm 6, recomputed every round; Chen et al. use ``C = 3/2``).
    Queries are recorded with ``log.record_every_round`` (exactly ``T`` queries and ``T``
    adaptivity rounds).

    Start: Chen et al. initialise by playing, for each base arm ``i``, an action containing
    ``i`` (``d`` rounds, before any index is used).  By default (``initial_pass=True``) we play
    that start: round ``i + 1`` (``i = 0 .. d-1``) plays the index ``argmax`` over the actions
    containing arm ``i`` (that lookup is the round's oracle call, purpose
    ``"SDCB initial pass"``).  ``initial_pass=False`` instead gives a never-played arm the
    optimistic point mass at the top of the support (as in :class:`AROQGR`), so the oracle
    itself prefers actions with unplayed arms.  This is not the same start: an unplayed arm
    only *ties* with a played arm whose optimistic law is also at the top (radius ``>= 1``,
    i.e. ``n_i <= C ln t``, or outcomes already at the top), and ties go to the first action
    in enumeration order, so an arm may be tried later than round ``d`` or never (A.11.2
    setting, seed 2, T = 600: one arm is never played, at no regret cost).

    Parameters
    ----------
    C : float
        Radius constant (default 1.5).
    oracle_delay : float
        Simulated seconds per oracle call.
    max_atoms : int
        Cap on the atoms of each distribution (continuous outcomes only).
    initial_pass : bool
        Play Chen et al.'s ``d``-round initialisation (default True; False: optimistic
        unplayed arms instead).
    """

    #: The textbook class's declaration (the registry links the fast engine to both).
    declaration = textbook.SDCB.declaration

    def __init__(
        self,
        C: float = 1.5,
        oracle_delay: float = 0.0,
        max_atoms: int = 64,
        initial_pass: bool = True,
    ) -> None:
        super().__init__(C, oracle_delay, None, max_atoms)
        if not isinstance(initial_pass, (bool, np.bool_)):
            raise ValueError(f"initial_pass must be True or False, got {initial_pass!r}")
        self.initial_pass = bool(initial_pass)

    def reset(self, env: Any, horizon: int) -> None:
        self._start(env, horizon)
        self.init_length = min(self.d, self.horizon) if self.initial_pass else 0

    def _choose(self, t: int) -> np.ndarray | None:
        """The round-``t`` oracle call: ``argmax`` of the optimistic index (Eq. (10)),
        restricted to actions containing arm ``t - 1`` during the initial pass."""
        include = (t - 1,) if t <= self.init_length else ()
        req = self._request(
            "SDCB argmax", self._dists(math.log(max(t, 1)), upper=True), include=include
        )
        family = self.env.family
        if req.f is not None:
            return family.argmax_set_function(req.f, include=include)
        return family.argmax_linear(req.scores, include=include)

    def advance(self, until: int) -> int:
        until = min(int(until), self.horizon)
        if self.t >= until:
            return self.t
        in_init = self.t < self.init_length
        if in_init:
            until = min(until, self.init_length)
        t0 = self.t + 1
        seconds = 0.0
        while self.t < until:
            t = self.t + 1
            with Stopwatch() as sw:
                a = self._choose(t)
                if self.oracle_delay:
                    time.sleep(self.oracle_delay)
            seconds += sw.seconds
            if a is None:
                what = f" containing arm {t - 1}" if in_init else ""
                raise ValueError(f"the action family has no feasible action{what}")
            a = np.asarray(a, dtype=bool)
            self._observe_fixed(np.flatnonzero(a), self.env.play_fixed(a, t, 1))
            self.regret.add(a, 1)
            self.t = t
        self.cum_regret = self.regret.value
        purpose = "SDCB initial pass" if in_init else "SDCB argmax"
        self.log.record_every_round(t0, self.t, purpose, seconds)
        return self.t


BatchedSDCB.single = SDCB
#: The fast engine's one-repetition policy (the runner's choice for R = 1).
BatchedSDCB.one_repetition = SDCB

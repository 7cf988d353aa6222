"""General-reward combinatorial semi-bandits (Section 5, Appendix A.7 and A.10): the fast
one-repetition policies and the fast engines.

* :class:`AROQGR` -- AROQ-GR-CMAB, Algorithm 6 (adaptive rare oracle queries),
* :class:`SROQGR` -- SROQ-GR-CMAB, Algorithm 7 (scheduled rare oracle queries),
* :class:`SDCB` -- Stochastically Dominant Confidence Bound (Chen et al. 2016), per round
  (in :mod:`.sdcb`, re-exported; the shared statistics are in :mod:`.gr_stats`),
* :class:`DiscretizedAROQGR`, :class:`DiscretizedSROQGR` -- Algorithm 8 (discretisation for
  continuous outcomes) wrapped around Algorithms 6 and 7.

The algorithms, round by round, are the textbook engines
:mod:`dashboard.algorithms.cmab.textbook.aroq_gr`, :mod:`~dashboard.algorithms.cmab.textbook.
sroq_gr`, :mod:`~dashboard.algorithms.cmab.textbook.disc_aroq_gr` and
:mod:`~dashboard.algorithms.cmab.textbook.disc_sroq_gr` (the registered classes).  The policies
here give their numbers for one repetition (the oracle scoring every action at once with
certified bounds, reference values cached by law, the rounds between two queries played as
one block) and share their declarations; the runner uses them for a single repetition
(``engine="fast"``).  Their fast engines are :class:`BatchedAROQGR` and :class:`BatchedSROQGR`
(``R`` of these policies side by side, no lock-step batch) and :class:`BatchedDiscretizedAROQGR`,
:class:`BatchedDiscretizedSROQGR` (vectorised across repetitions).

All keep, for each base arm ``i``, the empirical distribution of its observed outcomes
(``F_hat_i``, exact integer counts per distinct value) and build, for a radius
``rho_i = sqrt(C ln(t) / n_i)`` (``ln T`` in Algorithm 7),

* the optimistic distribution ``D_under_i`` of Eq. (10)/(11): CDF
  ``max(F_hat_i(x) - rho_i, 0)`` for ``x < 1`` and 1 at ``x = 1`` -- mass ``rho_i`` is moved
  from the lowest outcomes to the top of the support (stochastically dominant);
* the pessimistic ``D_over_i`` of Eq. (11): CDF ``min(F_hat_i(x) + rho_i, 1)`` -- mass
  ``rho_i`` moved from the highest outcomes to the bottom of the support.

A never-played arm (``n_i = 0``) is a point mass at the top (UCB) or bottom (LCB).  The support
is ``[0, 1]`` as in Section 5; for Gaussian (covariance) outcomes it is widened to the observed
range.  ``r^UCB(a)`` is the exact expectation of ``r(a, y)`` under the product of the
optimistic distributions (Lemma 9), computed by
:func:`~dashboard.algorithms.cmab.rewards.general.expected_aggregate`, and the oracle maximises
it through ``OracleRequest(f=...)`` (``family.argmax_set_function``).  With a linear reward
model (``r(a, y) = <a, y>``) the expectation is the sum of the optimistic means, so the oracle
is queried with those as linear ``scores`` (same argmax, any family size).

The radius constant ``C`` is unspecified in the paper (the proofs use ``3/2``, from the DKW
inequality, Lemma 10); it is the ``C`` parameter, default 1.5.  For outcomes with many distinct
values (continuous models without Algorithm 8) each distribution is compressed to at most
``max_atoms`` atoms by rounding values *up* (UCB) or *down* (LCB) to a regular grid of the
support, which keeps the bounds optimistic/pessimistic (Assumption 1: monotone rewards).
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from typing import Any

import numpy as np

from ...base import PolicyEvent, validate_int
from ..textbook import aroq_gr, disc_aroq_gr, disc_sroq_gr, sroq_gr
from .aroq import aroq_threshold
from .disc_batched import BatchedAROQGRCore
from .disc_sroq_batched import BatchedSROQGRCore
from .gr_stats import EmpiricalDistributions, _GRBase, discretize, paper_intervals
from .gr_stats import number as _number
from .per_repetition import PerRepetition
from .sdcb import SDCB, BatchedSDCB
from .shared import epoch_ends
from .sroq import epoch_queries, validate_lcb_query

__all__ = [
    "AROQGR",
    "SDCB",
    "SROQGR",
    "BatchedAROQGR",
    "BatchedDiscretizedAROQGR",
    "BatchedDiscretizedSROQGR",
    "BatchedSDCB",
    "BatchedSROQGR",
    "DiscretizedAROQGR",
    "DiscretizedSROQGR",
    "EmpiricalDistributions",
    "discretize",
    "paper_intervals",
]


# ----------------------------------------------------------------------------------------------
class AROQGR(_GRBase):
    """AROQ-GR-CMAB: adaptive rare oracle queries for general rewards (Algorithm 6, Thm. 5).

    Same per-arm epochs as AROQ-CMAB (Algorithm 1): at the start of round ``t`` every arm with
    ``|T_i(tau_i)| >= 1 + sqrt(T m |T_i(tau_i - 1)| / d)`` starts a new epoch, and if any did
    the oracle returns ``argmax_a r_t^UCB(a)`` of Eq. (10), the expected reward under the
    optimistic CDFs ``max(F_hat_{t,i} - sqrt(C ln t / n_{t,i}), 0)``.  At ``t = 1`` no
    condition can hold, so one counted initial query is made (GUIDE section 3; all arms are
    unplayed, hence point masses at the top of the support).  Between queries the action is
    fixed and the next crossing is computed in closed form.

    The epoch rule has the same two teaching knobs as :class:`~.aroq.AROQ`, with the same
    meaning and defaults: ``threshold_scale`` ``c`` in
    ``|T_i(tau_i)| >= 1 + c sqrt(T m |T_i(tau_i - 1)| / d)`` (``c = 1`` is the paper's) and
    ``epoch0_size = |T_i(0)|``, which the paper leaves undefined (default 0: an arm's first
    epoch ends after its first pull).

    Parameters
    ----------
    C : float
        Radius constant (default 1.5, the DKW constant of the proof).
    oracle_delay : float
        Simulated seconds per oracle call.
    executor : concurrent.futures.Executor, optional
        Unused by the sequential Algorithm 6 (accepted for a uniform interface).
    max_atoms : int
        Cap on the atoms of each optimistic distribution (continuous outcomes only).
    threshold_scale : float
        Multiplier ``c`` of the epoch threshold, > 0 (default 1, Algorithm 6 as printed).
        Smaller values query more often.
    epoch0_size : int
        ``|T_i(0)|``, the size of the virtual epoch before the first one, >= 0 (default 0).
        Larger values make the first epochs longer, hence fewer queries.
    """

    #: The textbook class's declaration (the registry links the fast engine to both).
    declaration = aroq_gr.AROQGR.declaration

    def __init__(
        self,
        C: float = 1.5,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
        max_atoms: int = 64,
        threshold_scale: float = 1.0,
        epoch0_size: int = 0,
    ) -> None:
        super().__init__(C, oracle_delay, executor, max_atoms)
        self.threshold_scale = _number("threshold_scale", threshold_scale, 0.0, allow_low=False)
        self.epoch0_size = validate_int("epoch0_size", epoch0_size, 0)

    def reset(self, env: Any, horizon: int) -> None:
        self._start(env, horizon)
        d = self.d
        self.tau = np.ones(d, dtype=np.int64)
        self.count = np.zeros(d, dtype=np.int64)  # |T_i(tau_i)|
        self.prev = np.full(d, self.epoch0_size, dtype=np.int64)  # |T_i(tau_i - 1)|
        self._thr = self._thresholds(self.prev)
        self.action: np.ndarray | None = None

    def _thresholds(self, prev: np.ndarray) -> np.ndarray:
        """Integer form ``ceil(1 + c sqrt(T m prev / d))`` of the line-5 condition."""
        x = aroq_threshold(prev, self.horizon, self.m, self.d, self.threshold_scale)
        return np.ceil(x - 1e-12).astype(np.int64)

    def advance(self, until: int) -> int:
        until = min(int(until), self.horizon)
        if self.t >= until:
            return self.t
        fired = np.flatnonzero(self.count >= self._thr)
        if self.action is None or fired.size:
            self.tau[fired] += 1
            self.prev[fired] = self.count[fired]
            self.count[fired] = 0
            self._thr[fired] = self._thresholds(self.prev[fired])
            self._query(self.t + 1, fired)
        arms = np.flatnonzero(self.action)
        to_cross = int(np.min(self._thr[arms] - self.count[arms])) if arms.size else until
        L = max(1, min(to_cross, until - self.t))
        y = self.env.play_fixed(self.action, self.t + 1, L)
        self._observe_fixed(arms, y)
        self.count[arms] += L
        self.regret.add(self.action, L)
        self.cum_regret = self.regret.value
        self.t += L
        return self.t

    def _query(self, t: int, fired: np.ndarray) -> None:
        dists = self._dists(math.log(max(t, 1)), upper=True)
        purpose = "UCB argmax (10)" if t > 1 else "initial UCB argmax (10)"
        a = self.oracle.call(self._request(purpose, dists), t)
        if a is None:
            raise ValueError("the action family has no feasible action")
        self.action = np.asarray(a, dtype=bool)
        self.events.append(
            PolicyEvent(t, "oracle", {"advanced": fired, "action": self.action.copy()})
        )


# ----------------------------------------------------------------------------------------------
class SROQGR(_GRBase):
    """SROQ-GR-CMAB: scheduled rare oracle queries for general rewards (Algorithm 7, Thm. 6).

    Epochs follow the SROQ time grid (:func:`~.shared.epoch_ends`, shared with SROQ-CMAB).
    At the start of epoch ``tau`` one parallel round of queries (Appendix A.1) computes
    ``a^(i) = argmax_{a in A_{tau-1}, i in a} r^UCB_tau(a)`` for ``i in N_{tau-1}`` (line 5) and
    ``argmax_{A_{tau-1}} r^LCB_tau`` (line 6), with Eq. (11) (radius ``sqrt(C ln T / n)``);
    ``N_tau`` keeps the arms whose representative's UCB reaches the best LCB and ``A_tau``
    drops actions using other arms.  The epoch plays ``a^(i)`` for ``i`` the
    ``(t mod |N_tau|)``-th surviving arm.  Adaptivity: one round per epoch.

    Parameters
    ----------
    C : float
        Radius constant (default 1.5).
    M : int, optional
        Number of epochs (default: SROQ-CMAB's, about ``log2 log2 T``).
    grid_kind : str, optional
        Time-grid convention passed to ``sroq_time_grid`` (``None``: its default).
    oracle_delay : float
        Simulated seconds per oracle call.
    executor : concurrent.futures.Executor, optional
        Runs each epoch's batch concurrently.
    max_atoms : int
        Cap on the atoms of each distribution (continuous outcomes only).
    lcb_query : {"parallel", "sequential"}
        The max-LCB query joins the representatives' round (default, A.1) or is one more
        sequential round per epoch (A.9's count); only adaptivity changes (see ``sroq.py``).
    """

    #: The textbook class's declaration (the registry links the fast engine to both).
    declaration = sroq_gr.SROQGR.declaration

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
        super().__init__(C, oracle_delay, executor, max_atoms)
        self.M = None if M is None else validate_int("M (number of epochs)", M, 1)
        self.grid_kind = grid_kind
        self.lcb_query = validate_lcb_query(lcb_query)

    def reset(self, env: Any, horizon: int) -> None:
        self._start(env, horizon)
        self.ends = epoch_ends(self.horizon, self.M, self.grid_kind)
        self.N = np.ones(self.d, dtype=bool)
        self.epoch = 0
        self.schedule: np.ndarray | None = None
        self.epoch_start = 1

    def advance(self, until: int) -> int:
        until = min(int(until), self.horizon)
        if self.t >= until:
            return self.t
        if self.schedule is None or self.t >= self.epoch_start + len(self.schedule) - 1:
            self._start_epoch(self.t + 1)
        end = min(until, self.epoch_start + len(self.schedule) - 1)
        rows = self.schedule[self.t + 1 - self.epoch_start : end - self.epoch_start + 1]
        y = self.env.play(rows, self.t + 1)
        self._observe_rows(y)
        self.regret.add_rows(rows)
        self.cum_regret = self.regret.value
        self.t = end
        return self.t

    def _start_epoch(self, t: int) -> None:
        self.epoch += 1
        end = int(self.ends[self.epoch - 1])
        logT = math.log(self.horizon)
        ucb_d = self._dists(logT, upper=True)
        lcb_d = self._dists(logT, upper=False)
        ucb, lcb = self._value_fn(ucb_d), self._value_fn(lcb_d)
        banned = ~self.N
        prev = np.flatnonzero(self.N)
        reqs = [
            self._request(f"representative of arm {i}", ucb_d, (int(i),), banned, int(i))
            for i in prev
        ]
        lcb_req = self._request("LCB max (11)", lcb_d, (), banned)
        out = epoch_queries(self.oracle, reqs, lcb_req, t, self.lcb_query)
        max_lcb = -math.inf if out[-1] is None else lcb(out[-1])
        keep = [
            (int(i), np.asarray(a, dtype=bool))
            for i, a in zip(prev, out[:-1])
            if a is not None and ucb(a) >= max_lcb
        ]
        if not keep:  # impossible with an exact oracle (the LCB maximiser's arms survive)
            keep = [
                (int(i), np.asarray(a, dtype=bool)) for i, a in zip(prev, out[:-1]) if a is not None
            ]
        surviving = np.array([i for i, _ in keep], dtype=np.int64)
        self.N = np.zeros(self.d, dtype=bool)
        self.N[surviving] = True
        reps = np.stack([a for _, a in keep])
        ts = np.arange(t, end + 1)
        self.schedule = reps[ts % len(keep)]
        self.epoch_start = t
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


class BatchedAROQGR(PerRepetition):
    """AROQ-GR-CMAB for ``R`` repetitions: ``R`` :class:`AROQGR` policies side by side."""

    speeds_up = "AROQ-GR-CMAB"
    one_repetition = AROQGR


class BatchedSROQGR(PerRepetition):
    """SROQ-GR-CMAB for ``R`` repetitions: ``R`` :class:`SROQGR` policies side by side."""

    speeds_up = "SROQ-GR-CMAB"
    one_repetition = SROQGR


# ----------------------------------------------------------------------------------------------
class _Discretized:
    """Mixin implementing Algorithm 8: outcomes are mapped to ``j / s`` before the base
    algorithm sees them."""

    s: int | None
    lipschitz: float

    def _init_disc(self, s: int | None, lipschitz: float) -> None:
        self.s = None if s is None else validate_int("s (number of intervals)", s, 1)
        self.lipschitz = _number("lipschitz", lipschitz, 0.0, allow_low=False)

    def _atoms_hint(self) -> tuple[int, bool]:
        T, m = self.horizon, self.m  # type: ignore[attr-defined]
        s = self.s if self.s is not None else paper_intervals(m, T, self.lipschitz)
        return s + 1, True

    def _set_intervals(self, m: int, T: int) -> None:
        self.intervals = self.s if self.s is not None else paper_intervals(m, T, self.lipschitz)

    def _transform(self, y: np.ndarray) -> np.ndarray:
        return discretize(y, self.intervals)

    # cooperative: ``super()`` is the base algorithm (AROQGR or SROQGR) in the MRO
    def reset(self, env: Any, horizon: int) -> None:
        super().reset(env, horizon)  # type: ignore[misc]
        self._set_intervals(self.m, self.horizon)  # type: ignore[attr-defined]
        self._atom_cap = max(self.max_atoms, self.intervals + 1)  # type: ignore[attr-defined]


class BatchedDiscretizedAROQGR(BatchedAROQGRCore):
    """Disc-AROQ-GR-CMAB for ``R`` repetitions at once (:mod:`.disc_batched`), exactly the
    numbers of ``R`` :class:`DiscretizedAROQGR` runs."""

    speeds_up = "Disc-AROQ-GR-CMAB"


class DiscretizedAROQGR(_Discretized, AROQGR):
    """Algorithm 8 with Algorithm 6: AROQ-GR-CMAB on outcomes discretised to ``s`` levels.

    Each observed ``y_{t,i} in I_j`` (``I_1 = [0, 1/s]``, ``I_j = ((j-1)/s, j/s]``) is treated
    as ``j / s`` (rounding up, so the discretised law dominates the true one).  Default
    ``s = ceil(lipschitz * sqrt(m T))`` (line 1, ``C`` of Assumption 2 is ``lipschitz``).

    Parameters
    ----------
    s : int, optional
        Number of intervals (default: the paper's ``ceil(C sqrt(m T))``).
    lipschitz : float
        The constant ``C`` of Assumption 2 used by the default ``s`` (default 1).
    C, oracle_delay, executor, max_atoms, threshold_scale, epoch0_size
        As :class:`AROQGR`.
    """

    #: The textbook class's declaration (the registry links the fast engine to both).
    declaration = disc_aroq_gr.DiscretizedAROQGR.declaration

    def __init__(
        self,
        s: int | None = None,
        lipschitz: float = 1.0,
        C: float = 1.5,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
        max_atoms: int = 64,
        threshold_scale: float = 1.0,
        epoch0_size: int = 0,
    ) -> None:
        AROQGR.__init__(self, C, oracle_delay, executor, max_atoms, threshold_scale, epoch0_size)
        self._init_disc(s, lipschitz)


BatchedDiscretizedAROQGR.single = DiscretizedAROQGR
#: The fast engine's one-repetition policy (the runner's choice for R = 1).
BatchedDiscretizedAROQGR.one_repetition = DiscretizedAROQGR


class BatchedDiscretizedSROQGR(BatchedSROQGRCore):
    """Disc-SROQ-GR-CMAB for ``R`` repetitions at once (:mod:`.disc_sroq_batched`), exactly
    the numbers of ``R`` :class:`DiscretizedSROQGR` runs."""

    speeds_up = "Disc-SROQ-GR-CMAB"


class DiscretizedSROQGR(_Discretized, SROQGR):
    """Algorithm 8 with Algorithm 7: SROQ-GR-CMAB on outcomes discretised to ``s`` levels.

    Parameters
    ----------
    s : int, optional
        Number of intervals (default: the paper's ``ceil(C sqrt(m T))``).
    lipschitz : float
        The constant ``C`` of Assumption 2 used by the default ``s`` (default 1).
    C, M, grid_kind, oracle_delay, executor, max_atoms
        As :class:`SROQGR`.
    """

    #: The textbook class's declaration (the registry links the fast engine to both).
    declaration = disc_sroq_gr.DiscretizedSROQGR.declaration

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
        SROQGR.__init__(self, C, M, grid_kind, oracle_delay, executor, max_atoms)
        self._init_disc(s, lipschitz)


BatchedDiscretizedSROQGR.single = DiscretizedSROQGR
#: The fast engine's one-repetition policy (the runner's choice for R = 1).
BatchedDiscretizedSROQGR.one_repetition = DiscretizedSROQGR

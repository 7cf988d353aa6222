"""General-reward combinatorial semi-bandits (Section 5, Appendix A.7 and A.10).

* :class:`AROQGR` -- AROQ-GR-CMAB, Algorithm 6 (adaptive rare oracle queries),
* :class:`SROQGR` -- SROQ-GR-CMAB, Algorithm 7 (scheduled rare oracle queries),
* :class:`SDCB` -- Stochastically Dominant Confidence Bound (Chen et al. 2016), per round,
* :class:`DiscretizedAROQGR`, :class:`DiscretizedSROQGR` -- Algorithm 8 (discretisation for
  continuous outcomes) wrapped around Algorithms 6 and 7.

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
import time
from concurrent.futures import Executor
from typing import Any

import numpy as np

from ...base import Policy, PolicyEvent, Stopwatch, validate_int
from ...declare import AlgorithmDeclaration, Constant
from ..oracle import Oracle, OracleRequest
from ..rewards.aggregate import ExpectedRewardIndex, check_oracle_work, lattice
from ..rewards.general import reward_function_of
from .aroq import aroq_threshold
from .batched import BatchedSDCB
from .constants import (
    C_GR,
    CMAB_ANY,
    CMAB_GENERAL,
    EPOCH0,
    GRID_OPTIONAL,
    LCB_QUERY,
    LIPSCHITZ,
    M_EPOCHS,
    MAX_ATOMS,
    THRESHOLD_SCALE,
)
from .disc_batched import BatchedAROQGRCore
from .shared import RegretCounter, epoch_ends
from .sroq import epoch_queries, validate_lcb_query

__all__ = [
    "AROQGR",
    "SDCB",
    "SROQGR",
    "BatchedDiscretizedAROQGR",
    "BatchedSDCB",
    "DiscretizedAROQGR",
    "DiscretizedSROQGR",
    "EmpiricalDistributions",
    "discretize",
    "paper_intervals",
]

_S = Constant(
    "s",
    None,
    "int",
    low=1,
    high=10_000_000,
    doc="number of discretisation intervals (null: ceil(lipschitz sqrt(m T)), Algorithm 8)",
    card=False,
)
_INITIAL_PASS = Constant(
    "initial_pass",
    True,
    "bool",
    doc="play every base arm once before the first index (Chen et al. 2016's initialisation, "
    "the default); false: optimistic indices for never-played arms",
    card=False,
)


def _number(name: str, value: Any, low: float, allow_low: bool) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = float("nan")
    if isinstance(value, bool) or not math.isfinite(v) or v < low or (v == low and not allow_low):
        rel = ">=" if allow_low else ">"
        raise ValueError(f"{name} must be a finite number {rel} {low}, got {value!r}")
    return v


class EmpiricalDistributions:
    """Per-arm empirical outcome distributions (distinct values and integer counts).

    Counts are integers and values are kept sorted, so the statistics after a set of rounds do
    not depend on how the rounds were chunked.  The (compressed) CDF of each arm is cached
    until the arm is observed again, so building the shifted distributions every round costs
    ``O(atoms)`` per arm.  Compressing (rounding values up to a grid) and then shifting mass to
    the top gives the same distribution as shifting and then compressing, because rounding is
    monotone; likewise for rounding down and shifting mass to the bottom.
    """

    def __init__(self, d: int) -> None:
        self.d = d
        self.values: list[np.ndarray] = [np.zeros(0) for _ in range(d)]
        self.counts: list[np.ndarray] = [np.zeros(0, dtype=np.int64) for _ in range(d)]
        self.n = np.zeros(d, dtype=np.int64)
        self.lo = 0.0
        self.hi = 1.0
        self._cache: dict[tuple[int, bool], tuple[float, float, np.ndarray, np.ndarray]] = {}

    def add(self, arm: int, y: np.ndarray) -> None:
        """Add observations ``y`` (1-D) of one arm."""
        if y.size == 0:
            return
        u, c = np.unique(y, return_counts=True)
        if self.values[arm].size:
            v = np.concatenate([self.values[arm], u])
            w = np.concatenate([self.counts[arm], c])
            u, inv = np.unique(v, return_inverse=True)
            c = np.bincount(inv, weights=w, minlength=u.size).astype(np.int64)
        self.values[arm], self.counts[arm] = u, c
        self.n[arm] += y.size
        self.lo = min(self.lo, float(u[0]))
        self.hi = max(self.hi, float(u[-1]))
        for up in (True, False):
            self._cache.pop((arm, up), None)

    def _base(self, arm: int, up: bool, max_atoms: int) -> tuple[np.ndarray, np.ndarray]:
        """Compressed support (rounded up or down) and empirical CDF of one arm."""
        hit = self._cache.get((arm, up))
        if hit is not None and hit[0] == self.lo and hit[1] == self.hi:
            return hit[2], hit[3]
        v, c = self.values[arm], self.counts[arm].astype(float)
        if v.size > max_atoms:
            k = max_atoms - 1
            x = (v - self.lo) / (self.hi - self.lo) * k
            j = np.ceil(x - 1e-12) if up else np.floor(x + 1e-12)
            grid, inv = np.unique(np.clip(j, 0, k), return_inverse=True)
            v = self.lo + grid / k * (self.hi - self.lo)
            c = np.bincount(inv, weights=c)
        F = np.cumsum(c) / self.n[arm]
        self._cache[(arm, up)] = (self.lo, self.hi, v, F)
        return v, F

    def optimistic(self, arm: int, rho: float, max_atoms: int) -> tuple[np.ndarray, np.ndarray]:
        """``D_under``: CDF ``max(F_hat - rho, 0)`` below the top of the support, 1 at it."""
        hi = self.hi
        if self.n[arm] == 0 or rho >= 1.0:
            return np.array([hi]), np.array([1.0])
        v, F = self._base(arm, True, max_atoms)
        below = v < hi
        Fu = np.maximum(F[below] - rho, 0.0)
        vals = np.concatenate([v[below], [hi]])
        probs = np.diff(np.concatenate([[0.0], Fu, [1.0]]))
        keep = probs > 0
        return vals[keep], probs[keep]

    def pessimistic(self, arm: int, rho: float, max_atoms: int) -> tuple[np.ndarray, np.ndarray]:
        """``D_over``: CDF ``min(F_hat + rho, 1)`` below the top of the support, 1 at it."""
        lo, hi = self.lo, self.hi
        if self.n[arm] == 0 or rho >= 1.0:
            return np.array([lo]), np.array([1.0])
        v, F = self._base(arm, False, max_atoms)
        if v[0] > lo:
            v, F = np.concatenate([[lo], v]), np.concatenate([[0.0], F])
        Fo = np.where(v < hi, np.minimum(F + rho, 1.0), 1.0)
        Fo[-1] = 1.0
        probs = np.diff(np.concatenate([[0.0], Fo]))
        keep = probs > 0
        return v[keep], probs[keep]


def paper_intervals(m: int, T: int, lipschitz: float = 1.0) -> int:
    """Number of intervals of Algorithm 8, line 1: ``s = ceil(C sqrt(m T))``."""
    return max(1, math.ceil(lipschitz * math.sqrt(m * T)))


def discretize(y: np.ndarray, s: int) -> np.ndarray:
    """Algorithm 8, lines 2-8: the outcome in ``I_j`` (``I_1 = [0, 1/s]``,
    ``I_j = ((j-1)/s, j/s]``) is treated as ``j / s``.  Outcomes are clipped to [0, 1] first."""
    y = np.clip(np.asarray(y, dtype=float), 0.0, 1.0)
    j = np.maximum(np.ceil(y * s - 1e-9), 1.0)
    return j / s


class _GRBase(Policy):
    """Statistics, optimistic distributions and oracle requests shared by Algorithms 6-7 and
    SDCB."""

    problem = "cmab"

    def __init__(
        self,
        C: float = 1.5,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
        max_atoms: int = 64,
    ) -> None:
        super().__init__()
        self.C = _number("C", C, 0.0, allow_low=True)
        self.oracle_delay = _number("oracle_delay", oracle_delay, 0.0, allow_low=True)
        if executor is not None and not isinstance(executor, Executor):
            raise ValueError("executor must be a concurrent.futures.Executor or None")
        self.executor = executor
        self.max_atoms = validate_int("max_atoms", max_atoms, 2)
        self.env: Any = None

    def _start(self, env: Any, horizon: int) -> None:
        Policy.__init__(self)
        if getattr(env, "model", None) is None or not hasattr(env, "family"):
            raise ValueError(f"{self.name} needs a CMABEnvironment (model.environment(...))")
        self.horizon = validate_int("horizon", horizon, 1)
        self.env = env
        self.d, self.m = env.d, env.m
        self.kind = reward_function_of(env.model)
        self.oracle = Oracle(env.family, self.log, self.oracle_delay, self.executor)
        self.stats = EmpiricalDistributions(self.d)
        self.regret = RegretCounter(env)
        self._atom_cap = self.max_atoms
        if self.kind != "sum":
            check_oracle_work(self.name, env, *self._atoms_hint())

    def _atoms_hint(self) -> tuple[int, bool]:
        """Worst-case atoms per law and whether they lie on a lattice (work estimate)."""
        support = getattr(self.env.model, "support", None)
        if support is not None:
            grid = np.unique(np.r_[np.asarray(support, dtype=float), 0.0, 1.0])
            lat = lattice(grid)
            if lat is not None:
                return int(lat[2][-1]) + 1, True
            return grid.size, False
        return self.max_atoms, False

    # -- observations ---------------------------------------------------------------------
    def _transform(self, y: np.ndarray) -> np.ndarray:
        """Hook applied to outcomes before the algorithm sees them (Algorithm 8)."""
        return y

    def _observe_fixed(self, arms: np.ndarray, y: np.ndarray) -> None:
        y = self._transform(y)
        for k, i in enumerate(arms):
            self.stats.add(int(i), y[:, k])

    def _observe_rows(self, y: np.ndarray) -> None:
        for i in range(self.d):
            col = y[:, i]
            col = col[~np.isnan(col)]
            if col.size:
                self.stats.add(i, self._transform(col))

    # -- indices -----------------------------------------------------------------------------
    def _radius(self, log_term: float) -> np.ndarray:
        n = self.stats.n
        with np.errstate(divide="ignore"):
            return np.where(n > 0, np.sqrt(self.C * log_term / np.maximum(n, 1)), np.inf)

    def _dists(self, log_term: float, upper: bool) -> list[tuple[np.ndarray, np.ndarray]]:
        rho = self._radius(log_term)
        get = self.stats.optimistic if upper else self.stats.pessimistic
        return [get(i, float(rho[i]), self._atom_cap) for i in range(self.d)]

    def _value_fn(self, dists: list[tuple[np.ndarray, np.ndarray]]) -> ExpectedRewardIndex:
        """``a -> E[r(a, y)]`` under the product of ``dists`` (Eq. (10)/(11)); the oracle
        scores all feasible actions at once through its ``argmax_rows``."""
        return ExpectedRewardIndex(dists, self.kind)

    def _request(
        self,
        purpose: str,
        dists: list[tuple[np.ndarray, np.ndarray]],
        include: tuple[int, ...] = (),
        exclude: np.ndarray | None = None,
        arm: int = -1,
    ) -> OracleRequest:
        if self.kind == "sum":
            scores = np.array([float(v @ p) for v, p in dists])
            return OracleRequest(purpose, scores=scores, include=include, exclude=exclude, arm=arm)
        # the requests of one epoch share their laws: one index object, scored once
        cached = getattr(self, "_index_cache", None)
        if cached is None or cached[0] is not dists:
            cached = self._index_cache = (dists, self._value_fn(dists))
        return OracleRequest(purpose, f=cached[1], include=include, exclude=exclude, arm=arm)


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

    declaration = AlgorithmDeclaration(
        name="AROQ-GR-CMAB",
        problem="cmab",
        reference="Algorithm 6",
        constants=(C_GR, THRESHOLD_SCALE, EPOCH0, MAX_ATOMS),
        rewards=CMAB_ANY,
        doc="AROQ for general rewards with optimistic outcome distributions",
    )

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


# ----------------------------------------------------------------------------------------------
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

    declaration = AlgorithmDeclaration(
        name="SDCB",
        problem="cmab",
        reference="Chen et al. 2016 (baseline)",
        constants=(C_GR, MAX_ATOMS, _INITIAL_PASS),
        rewards=CMAB_ANY,
        per_round=True,
        batched=BatchedSDCB,
        doc="per-round stochastically dominant confidence bound (baseline)",
    )

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

    declaration = AlgorithmDeclaration(
        name="Disc-AROQ-GR-CMAB",
        problem="cmab",
        reference="Algorithm 8 with Algorithm 6",
        constants=(_S, LIPSCHITZ, C_GR, THRESHOLD_SCALE, EPOCH0, MAX_ATOMS),
        rewards=CMAB_GENERAL,
        batched=BatchedDiscretizedAROQGR,
        doc="AROQ-GR on outcomes discretised to s intervals (continuous outcomes)",
    )

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

    declaration = AlgorithmDeclaration(
        name="Disc-SROQ-GR-CMAB",
        problem="cmab",
        reference="Algorithm 8 with Algorithm 7",
        constants=(_S, LIPSCHITZ, C_GR, M_EPOCHS, GRID_OPTIONAL, MAX_ATOMS),
        rewards=CMAB_GENERAL,
        doc="SROQ-GR on outcomes discretised to s intervals (continuous outcomes)",
    )

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

"""Batched engines of the per-round baselines SDCB and OLS-UCB-C (issue 9).

Each engine runs ``R`` repetitions in one numpy pass per round and gives exactly the numbers of
``R`` separate runs of the single-repetition policy (same actions, same regret, same logs up to
wall times), like :class:`~.cucb.BatchedCUCB`:

* :class:`BatchedSDCB` -- SDCB (Chen et al. 2016) on outcomes with a known finite support on a
  lattice (the paper's general rewards, Appendix A.11.2): the empirical laws are integer count
  tables ``(R, d, G)``, the optimistic laws of Eq. (10) are built for all repetitions and arms
  at once, and every action is scored by :class:`~.gr_batch.RoundScorer` (the arithmetic of
  :func:`~..rewards.aggregate.values_dense`, set up once per run); near-ties are refined with
  the reference ``expected_aggregate`` exactly as the single policy's oracle does (the initial
  pass restricts round ``i + 1`` to the actions containing arm ``i``).  A round reads and
  counts only the played arms' pre-drawn outcomes.
  Other models (continuous outcomes, linear rewards) run the
  ``R`` single policies in lockstep (same numbers, no speed-up).
* :class:`BatchedOLSUCBC` -- OLS-UCB-C: the warm-up is shared code, then every round scores all
  actions of all repetitions with :class:`~.covariance_pairs.PairIndex` (the statistics on the
  pairs ``i <= j``, the index of Eq. (3) by two matrix products, refined on near-ties with the
  reference values).

Each engine is parameterised by its single policy class (``single``), which the policy module
(:mod:`.general`, :mod:`.covariance`) sets when it declares the engine: this module imports
no policy module, so the dependency points one way (policy module -> engine).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...base import ExpensiveLog, PolicyEvent
from ..rewards.aggregate import action_arms, lattice, prefix_table
from ..rewards.laws import reward_function_of
from .common import pull_indexed
from .gr_batch import RoundScorer, optimistic_dense
from .lockstep import LockstepBatch, PlayToHorizon, check_envs

__all__ = ["BatchedOLSUCBC", "BatchedSDCB", "LockstepBatch"]  # LockstepBatch: re-exported

#: Target number of normals per pre-drawn window of OLS-UCB-C's Gaussian outcomes.
NORMALS_WINDOW = 16384


class BatchedSDCB(PlayToHorizon):
    """SDCB for ``R`` repetitions at once; same constructor as
    :class:`~.general.SDCB` and exactly its numbers.

    Attributes
    ----------
    t : int
        Rounds played (common to all repetitions).
    cum_regret : ndarray (R,)
        Exact cumulative pseudo-regret of each repetition.
    logs, events : one :class:`ExpensiveLog` / event list per repetition (one ``"SDCB
        argmax"`` query per round; the time of the vectorised call is shared equally).
    reevaluated : int
        Actions re-scored with the reference function on near-ties (diagnostics).
    """

    name = "SDCB"
    problem = "cmab"
    #: The algorithm whose numbers this engine reproduces (the registry links them).
    speeds_up = "SDCB"
    #: the single-repetition policy class, set by :mod:`.general` (no import back)
    single: Callable[..., Any]

    def __init__(
        self,
        C: float = 1.5,
        oracle_delay: float = 0.0,
        max_atoms: int = 64,
        initial_pass: bool = True,
        window: int | None = None,
    ) -> None:
        SDCB = type(self).single
        self._kwargs = {
            "C": C,
            "oracle_delay": oracle_delay,
            "max_atoms": max_atoms,
            "initial_pass": initial_pass,
        }
        proto = SDCB(**self._kwargs)  # validates the arguments
        for name in self._kwargs:  # the declared constants, as validated by the policy
            setattr(self, name, getattr(proto, name))
        self.window = window
        self.t = 0
        self.horizon = 0
        self._lockstep: LockstepBatch | None = None
        self.logs: list[ExpensiveLog] = []
        self.events: list[list[PolicyEvent]] = []
        self.cum_regret = np.zeros(0)
        self.reevaluated = 0

    def params(self) -> dict[str, Any]:
        return dict(self._kwargs)

    # ------------------------------------------------------------------ set-up
    def _grid(self, model: Any) -> np.ndarray | None:
        """The outcome grid (support plus the bounds 0 and 1) if the fast path applies."""
        support = getattr(model, "support", None)
        if support is None or not pull_indexed(model):
            return None
        grid = np.unique(np.r_[np.asarray(support, dtype=float), 0.0, 1.0])
        if grid[0] < 0.0 or grid[-1] > 1.0 or lattice(grid) is None:
            return None
        return grid

    def reset(self, envs: Sequence[Any], horizon: int) -> None:
        """Start ``len(envs)`` repetitions of ``horizon`` rounds (shared family and model)."""
        envs = check_envs(envs, "BatchedSDCB")
        singles = [type(self).single(**self._kwargs) for _ in envs]
        for p, env in zip(singles, envs):
            p.reset(env, horizon)  # validates env and horizon, checks the oracle work
        family, model = envs[0].family, envs[0].model
        kind = reward_function_of(model)
        grid = None if kind == "sum" else self._grid(model)
        A = family.enumerate() if grid is not None else None
        groups = action_arms(A) if A is not None else []
        if grid is None or len(groups) != 1:
            self._lockstep = LockstepBatch(singles)
            self.logs, self.events = self._lockstep.logs, self._lockstep.events
            self.horizon = singles[0].horizon
            self.t, self.cum_regret = 0, np.zeros(len(envs))
            return
        self._lockstep = None
        self.horizon = singles[0].horizon
        self.envs, self.family, self.model, self.kind = envs, family, model, kind
        R, d = len(envs), family.d
        self.R, self.d, self.G = R, d, grid.size
        self.grid, self.A, self.arms = grid, A, groups[0][1]
        self.init_length = singles[0].init_length
        if self.init_length and not A[:, : self.init_length].any(axis=0).all():
            missing = int(np.flatnonzero(~A[:, : self.init_length].any(axis=0))[0])
            raise ValueError(f"the action family has no feasible action containing arm {missing}")
        self._prefixes = prefix_table(self.arms) if self.arms.shape[1] > 1 else None
        self._scorer = RoundScorer(grid, self.arms, kind, self._prefixes)
        self.t = 0
        self.cum_regret = np.zeros(R)
        self.logs = [ExpensiveLog() for _ in range(R)]
        self.events = [[] for _ in range(R)]
        self.counts = np.zeros((R, d, grid.size), dtype=np.int64)
        self.n = np.zeros((R, d), dtype=np.int64)
        self.plays = np.zeros((R, A.shape[0]), dtype=np.int64)
        self._gaps = np.full(A.shape[0], np.nan)
        self._base_pulls = np.stack([np.asarray(e.pulls, dtype=np.int64).copy() for e in envs])
        self._B = self.window or int(np.clip(self.horizon // 8, 64, 1024))
        self._table = np.zeros((R, d, self._B), dtype=np.int64)
        self._w0 = np.zeros((R, d), dtype=np.int64)
        self._refill(np.ones((R, d), dtype=bool))

    def _refill(self, mask: np.ndarray) -> None:
        """Draw the next ``B`` outcomes (as grid indices) of every (rep, arm) in ``mask``."""
        steps = np.arange(self._B, dtype=np.int64)
        for r in np.flatnonzero(mask.any(axis=1)):
            arms = np.flatnonzero(mask[r])
            pulls = (self._base_pulls[r, arms] + self.n[r, arms])[:, None] + steps[None, :]
            y = self.model.sample(
                self.envs[r].rep, np.broadcast_to(arms[:, None], pulls.shape), pulls, 0 * pulls
            )
            g = np.searchsorted(self.grid, y)
            if not np.array_equal(self.grid[np.minimum(g, self.G - 1)], y):
                raise RuntimeError("an outcome is not on the model's support")
            self._table[r, arms] = g
            self._w0[r, arms] = self.n[r, arms]

    # ------------------------------------------------------------------ rounds
    def _choose(self, t: int) -> np.ndarray:
        """Round ``t``'s oracle call for every repetition: the reference ``argmax`` of the
        optimistic index (Eq. (10)), restricted to actions containing arm ``t - 1`` during
        the initial pass."""
        P = optimistic_dense(self.counts, self.n, self.C, math.log(max(t, 1)))
        allowed = self.A[:, t - 1] if t <= self.init_length else None
        rows, n_re = self._scorer.rows(P, allowed)
        self.reevaluated += n_re
        return rows

    def advance(self, until: int) -> int:
        """Play rounds ``t+1 .. min(until, T)`` (every round is one oracle call)."""
        if self._lockstep is not None:
            self.t = self._lockstep.advance(until)
            self.cum_regret = self._lockstep.cum_regret
            return self.t
        until = min(int(until), self.horizon)
        if until <= self.t:
            return self.t
        in_init = self.t < self.init_length
        if in_init:
            until = min(until, self.init_length)
        t0 = self.t + 1
        R = self.R
        seconds = 0.0
        delay = self.oracle_delay * R
        ridx = np.arange(R)[:, None]
        B = self._B
        plays = self.plays.reshape(-1)  # a view: plays[r, j] is plays[r * n + j]
        pbase = np.arange(R) * self.plays.shape[1]
        for t in range(t0, until + 1):
            start = time.perf_counter()
            rows = self._choose(t)
            if delay:
                time.sleep(delay)
            seconds += time.perf_counter() - start
            # the arms of each repetition's action (one action size): their next outcomes
            arms = self.arms[rows]
            n_a = self.n[ridx, arms]
            used = n_a - self._w0[ridx, arms]
            if used.max() >= B:
                self._refill(self.A[rows] & (self.n - self._w0 >= B // 2))
                used = n_a - self._w0[ridx, arms]
            g = self._table[ridx, arms, used]
            self.counts[ridx, arms, g] += 1
            self.n[ridx, arms] = n_a + 1
            plays[pbase + rows] += 1
        self.t = until
        self._sync(t0, seconds, "SDCB initial pass" if in_init else "SDCB argmax")
        return self.t

    def _sync(self, t0: int, seconds: float, purpose: str) -> None:
        R = self.R
        played = np.flatnonzero(self.plays.any(axis=0))
        todo = played[np.isnan(self._gaps[played])]
        for j in todo:
            self._gaps[j] = float(self.envs[0].gap(self.A[j]))
        for r in range(R):
            js = np.flatnonzero(self.plays[r])
            self.cum_regret[r] = math.fsum(self.plays[r, js] * self._gaps[js])
            self.envs[r].pulls[:] = self._base_pulls[r] + self.n[r]
            self.logs[r].record_every_round(t0, self.t, purpose, seconds / R)


class BatchedOLSUCBC(PlayToHorizon):
    """OLS-UCB-C for ``R`` repetitions at once; same constructor as
    :class:`~.covariance.OLSUCBC` and exactly its numbers.

    The pair warm-up (Algorithm 3's, shared with AROQ-C) is played by the ``R`` single
    policies; from the first index round on, the statistics live in ``(R, d)`` / ``(R, d, d)``
    arrays, the index of Eq. (3) of every action of every repetition is scored at once
    (:class:`~.covariance_pairs.PairIndex`, reference-exact) and, for the covariance model,
    the round's Gaussian outcomes of all repetitions are drawn with one counter-based call.
    """

    name = "OLS-UCB-C"
    problem = "cmab"
    #: The algorithm whose numbers this engine reproduces (the registry links them).
    speeds_up = "OLS-UCB-C"
    #: the single-repetition policy class, set by :mod:`.covariance` (no import back)
    single: Callable[..., Any]

    def __init__(
        self,
        f_const: float = 0.05,
        h_const: float = 0.5,
        oracle_delay: float = 0.0,
        warmup_multiplier: float = 1.0,
        warmup_fraction: float = 0.1,
    ) -> None:
        OLSUCBC = type(self).single
        self._kwargs = {
            "f_const": f_const,
            "h_const": h_const,
            "oracle_delay": oracle_delay,
            "warmup_multiplier": warmup_multiplier,
            "warmup_fraction": warmup_fraction,
        }
        proto = OLSUCBC(**self._kwargs)  # validates the arguments
        for name in self._kwargs:  # the declared constants, as validated by the policy
            setattr(self, name, getattr(proto, name))
        self.t = 0
        self.horizon = 0
        self.logs: list[ExpensiveLog] = []
        self.events: list[list[PolicyEvent]] = []
        self.cum_regret = np.zeros(0)
        self.refined = 0

    def params(self) -> dict[str, Any]:
        return dict(self._kwargs)

    def reset(self, envs: Sequence[Any], horizon: int) -> None:
        """Start ``len(envs)`` repetitions of ``horizon`` rounds (shared family and model)."""
        from ..rewards.covariance import CovarianceRewards
        from .covariance_index import action_table

        envs = check_envs(envs, "BatchedOLSUCBC")
        self.singles = [type(self).single(**self._kwargs) for _ in envs]
        for p, env in zip(self.singles, envs):
            p.reset(env, horizon)
        self._lockstep = LockstepBatch(self.singles)
        self.logs, self.events = self._lockstep.logs, self._lockstep.events
        self.envs, self.family, self.model = envs, envs[0].family, envs[0].model
        self.R, self.d = len(envs), self.family.d
        self.horizon = self.singles[0].horizon
        self.warmup = self.singles[0].warmup_length
        self.t = 0
        self.cum_regret = np.zeros(self.R)
        self._main = False
        self.A, self.Af, self.arms = action_table(self.family)
        self._gauss = type(self.model).sample is CovarianceRewards.sample

    def _start_main(self) -> None:
        """Move the statistics of the single policies (after the warm-up) into arrays."""
        from .covariance_pairs import PairIndex

        self.index = PairIndex([p.stats for p in self.singles], self.A, self.arms)
        self.regrets = [p.regret for p in self.singles]
        if self._gauss:
            self._keys = np.stack([self.model._keys_for(e.rep) for e in self.envs])
            k = self.arms.shape[1]
            # the model's factor of every action; the stacked product below repeats each run's
            # own BLAS call only for C-ordered factors (Cholesky; an eigen-factor of a
            # singular Sigma may come in another layout: then one product per repetition)
            factors = [self.model._factor(a) for a in self.arms]
            self._factors = (
                np.stack(factors) if all(f.flags.c_contiguous for f in factors) else None
            )
            self._z: np.ndarray | None = None  # normals of rounds t0 .. t0 + W - 1
            self._z_t0 = 0
            self._z_w = max(16, min(1024, NORMALS_WINDOW // (self.R * max(k, 1))))
            self._n_synced = self.index.n.astype(np.int64)  # pulls already in the envs
        self._main = True

    def _normals(self, t: int, k: int) -> np.ndarray:
        """``rnd.normal(keys[:, :k], t)`` (R, k), read from a window of ``W`` rounds drawn at
        once (elementwise the same counters, hence the same bits)."""
        from ... import randomness as rnd

        i = t - self._z_t0
        if self._z is None or i >= self._z.shape[0] or i < 0:
            tt = np.arange(t, t + self._z_w, dtype=np.int64)[:, None, None]
            self._z = rnd.normal(self._keys[None, :, :k], tt)  # (W, R, k)
            self._z_t0, i = t, 0
        return self._z[i]

    def _outcomes(self, rows: np.ndarray, arms: np.ndarray, t: int) -> np.ndarray:
        """Outcomes ``(R, k)`` of the round's actions (exactly ``env.play_fixed(a, t, 1)``)."""
        if not self._gauss:
            actions = self.A[rows]
            return np.stack([e.play_fixed(a, t, 1)[0] for e, a in zip(self.envs, actions)])
        # play_fixed's mu[a] + z @ factor(a).T for every repetition: a stack of the same
        # (1, k) @ (k, k)^T products (one BLAS call per repetition, as each run's own)
        z = self._normals(t, arms.shape[1])
        if self._factors is not None:
            FT = self._factors[rows].transpose(0, 2, 1)
            return self.model.mu[arms] + np.matmul(z[:, None, :], FT)[:, 0, :]
        model = self.model
        y = np.empty(arms.shape)
        for r in range(self.R):
            a = arms[r]
            y[r] = (model.mu[a][None, :] + z[r][None, :] @ model._factor(a).T)[0]
        return y

    def _sync_pulls(self) -> None:
        """Add the pulls made since the last sync to the environments' counters (every arm
        of a played action is pulled once: the growth of ``n``)."""
        if self._gauss and self._main:
            n = self.index.n.astype(np.int64)
            for r in range(self.R):
                self.envs[r].pulls += n[r] - self._n_synced[r]
            self._n_synced = n

    def advance(self, until: int) -> int:
        """Play rounds ``t+1 .. min(until, T)``: warm-up rounds through the single policies,
        then one vectorised index round after another."""
        from .covariance_index import f_h

        until = min(int(until), self.horizon)
        if until <= self.t:
            return self.t
        if self.arms is None:  # actions of several sizes: no vectorised index
            self.t = self._lockstep.advance(until)
            self.cum_regret = self._lockstep.cum_regret
            return self.t
        if self.t < self.warmup:
            self.t = self._lockstep.advance(min(until, self.warmup))
            self.cum_regret = self._lockstep.cum_regret
            if self.t >= until:
                return self.t
        if not self._main:
            self._start_main()
        t0 = self.t + 1
        R, d = self.R, self.d
        index = self.index
        plays = np.zeros((R, self.A.shape[0]), dtype=np.int64)
        ravel = np.arange(R) * self.A.shape[0]
        seconds, delay = 0.0, self.oracle_delay * R
        for t in range(t0, until + 1):
            start = time.perf_counter()
            f, h = f_h(t, d, self.f_const, self.h_const)
            rows = index.argmax(f, h)
            if delay:
                time.sleep(delay)
            seconds += time.perf_counter() - start
            y = self._outcomes(rows, self.arms[rows], t)
            index.add(rows, y)
            plays.ravel()[ravel + rows] += 1
        self.refined = index.refined
        self.t = until
        self._sync_pulls()
        for r in range(R):
            for j in np.flatnonzero(plays[r]):
                self.regrets[r].add(self.A[j], int(plays[r, j]))
            self.cum_regret[r] = self.regrets[r].value
            self.logs[r].record_every_round(t0, until, "UCB index (3)", seconds / R)
        return self.t

"""Statistics shared by the general-reward policies (Section 5, Algorithms 6-8 and SDCB).

* :class:`EmpiricalDistributions` -- per-arm empirical outcome laws and the optimistic
  (``D_under``, Eq. (10)) and pessimistic (``D_over``, Eq. (11)) laws built from them;
* :func:`paper_intervals`, :func:`discretize` -- Algorithm 8's ``s`` and its outcome map
  (in :mod:`.empirical`, shared with the textbook engines; re-exported);
* :class:`_GRBase` -- the state, radii and oracle requests common to :mod:`.general` (AROQ-GR,
  SROQ-GR, the discretised variants) and :mod:`.sdcb`.

See :mod:`.general` for the paper's definitions.  A lower module: the policy modules import
it, it imports none of them.
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Any

import numpy as np

from ...base import Policy, validate_int
from ..oracle import Oracle, OracleRequest
from ..rewards.aggregate import ExpectedRewardIndex, check_oracle_work, lattice
from ..rewards.laws import reward_function_of
from .empirical import EmpiricalDistributions, discretize, number, paper_intervals
from .shared import RegretCounter

__all__ = ["EmpiricalDistributions", "discretize", "number", "paper_intervals"]


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
        self.C = number("C", C, 0.0, allow_low=True)
        self.oracle_delay = number("oracle_delay", oracle_delay, 0.0, allow_low=True)
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

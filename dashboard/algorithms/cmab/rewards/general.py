"""General (non-linear) rewards of Section 5 and Appendix A.10-A.11.

Outcomes ``y_{t,i}`` are independent across base arms (the product distribution of Section 5 /
Lemma 9) and the reward ``r(a, y)`` is a monotone function of the outcomes of the selected arms
(Assumption 1).  Three reward functions are available, all of the form ``g(agg(y_a))``:

* ``"sqrt-sum"``: ``sqrt(sum_{i in a} y_i)`` (the paper's experiment, Appendix A.11.2),
* ``"sum"``: ``sum_{i in a} y_i`` (linear, K-SUM),
* ``"max"``: ``max_{i in a} y_i`` (K-MAX).

:func:`expected_aggregate` (exact ``E[r(a, y)]`` for independent discrete outcomes) and the reward
functions live in the lower module :mod:`.laws` (shared with the vectorised oracle
:mod:`.aggregate`) and are re-exported here.  The policies of
:mod:`dashboard.algorithms.cmab.policies.general` use it for their optimistic indices (Eq. 10-11).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import betaincinv

from ... import randomness as rnd
from ...declare import ComponentDeclaration
from .aggregate import ExpectedRewardIndex
from .base import RewardModel
from .laws import (
    REWARD_FUNCTIONS,
    expected_aggregate,
    realised_reward,
    reward_function_of,
)
from .laws import check_reward as _check_reward

__all__ = [
    "REWARD_FUNCTIONS",
    "ContinuousRewards",
    "GeneralRewards",
    "expected_aggregate",
    "realised_reward",
    "reward_function_of",
]


class GeneralRewards(RewardModel):
    """Independent discrete outcomes per arm with a general reward (Appendix A.11.2).

    Each arm ``i`` has a categorical distribution on ``support``: one value, drawn uniformly at
    random per arm from the instance seed, gets probability ``peak_mass`` and the other values
    share ``1 - peak_mass`` equally.  The reward is ``r(a, y) = sqrt(sum_{i in a} y_i)`` by
    default.  Outcomes are indexed by ``(seed, rep, arm, pull)`` (common random numbers).

    ``expected_reward(a)`` is exact: it enumerates the product distribution of the ``|a|`` arms
    with :func:`expected_aggregate`, merging equal partial sums, so for a support on a grid its
    cost grows with the number of distinct sums (at most ``|a| * len(support)``), not with
    ``len(support) ** |a|``; no Monte Carlo is needed for any ``m``.

    Parameters
    ----------
    d : int
        Number of base arms.
    seed : int
        Instance seed (which value is each arm's peak), also the root of the outcome streams.
    support : sequence of float
        Distinct outcome values in [0, 1], default ``(0.2, 0.4, 0.6, 0.8, 1.0)`` as in the paper.
    peak_mass : float
        Probability of each arm's peak value, in (0, 1]; default 0.99 as in the paper.
    reward : str
        ``"sqrt-sum"`` (default, the paper's), ``"sum"`` (then the model is linear) or ``"max"``.
    probs : array (d, len(support)), optional
        Explicit per-arm probabilities instead of the random peak construction.
    """

    declaration = ComponentDeclaration(
        "reward",
        "general",
        doc="discrete outcomes on {0.2, ..., 1}, mass 0.99 on one value; "
        "r(a, y) = sqrt(sum of selected outcomes)",
        reference="Section 5, Appendix A.11.2",
        fields=("d",),
    )
    #: Outcomes depend only on (rep, arm, pull number) (see ``policies.common.pull_indexed``).
    pull_indexed = True

    def __init__(
        self,
        d: int,
        seed: int = 0,
        support: Sequence[float] = (0.2, 0.4, 0.6, 0.8, 1.0),
        peak_mass: float = 0.99,
        reward: str = "sqrt-sum",
        probs: np.ndarray | None = None,
    ) -> None:
        super().__init__(d, seed)
        sup = np.asarray(support, dtype=float)
        if sup.ndim != 1 or sup.size < 1 or not np.all(np.isfinite(sup)):
            raise ValueError("support must be a non-empty sequence of finite values in [0, 1]")
        if sup.min() < 0 or sup.max() > 1 or np.unique(sup).size != sup.size:
            raise ValueError(f"support values must be distinct and in [0, 1], got {sup.tolist()}")
        order = np.argsort(sup)
        self.support = sup[order]
        if not 0.0 < float(peak_mass) <= 1.0:
            raise ValueError(f"peak_mass must be in (0, 1], got {peak_mass}")
        self.peak_mass = float(peak_mass)
        self.reward_kind = _check_reward(reward)
        self.linear = self.reward_kind == "sum"
        K = self.support.size
        if probs is None:
            peaks = rnd.integers(rnd.stream_key(self.seed, "cmab-general-peaks"), np.arange(d), K)
            rest = (1.0 - self.peak_mass) / (K - 1) if K > 1 else 0.0
            probs = np.full((self.d, K), rest)
            probs[np.arange(self.d), peaks] = self.peak_mass if K > 1 else 1.0
            self.peaks = self.support[peaks]
        else:
            probs = np.asarray(probs, dtype=float)
            if probs.shape != (self.d, K) or np.any(probs < 0) or not np.all(np.isfinite(probs)):
                raise ValueError(f"probs must be a non-negative array of shape ({self.d}, {K})")
            if not np.allclose(probs.sum(axis=1), 1.0):
                raise ValueError("each row of probs must sum to 1")
            probs = probs[:, order]
            self.peaks = self.support[np.argmax(probs, axis=1)]
        self.probs = probs
        self.cdf = np.cumsum(probs, axis=1)
        self.mu = probs @ self.support
        self._rep_keys: dict[int, np.ndarray] = {}

    def _keys_for(self, rep: int) -> np.ndarray:
        k = self._rep_keys.get(rep)
        if k is None:
            k = rnd.stream_key(self.seed, "cmab-general-outcomes", rep, np.arange(self.d))
            self._rep_keys[rep] = k
        return k

    def sample(self, rep, arms, pulls, t):
        arms = np.asarray(arms, dtype=np.int64)
        u = rnd.uniform(self._keys_for(rep)[arms], pulls)
        idx = np.empty(arms.shape, dtype=np.int64)
        for i in np.unique(arms):  # at most d distinct CDFs
            sel = arms == i
            c = self.cdf[i]
            idx[sel] = np.minimum(np.searchsorted(c, u[sel] * c[-1], side="right"), c.size - 1)
        return self.support[idx]

    def expected_reward(self, action: np.ndarray) -> float:
        arms = np.flatnonzero(action)
        return expected_aggregate(
            [self.support] * arms.size, [self.probs[i] for i in arms], self.reward_kind
        )

    def expected_reward_index(self, family: Any = None) -> Any:
        """``expected_reward`` as a set function whose ``argmax_rows`` scores a whole family at
        once (same values, same argmax; used to find a* quickly)."""
        return ExpectedRewardIndex([(self.support, p) for p in self.probs], self.reward_kind)

    def reward(self, action: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Realised reward r(a, y) for rows ``y`` of shape ``(L, d)`` (or ``(d,)``)."""
        y = np.atleast_2d(np.asarray(y, dtype=float))
        return realised_reward(self.reward_kind, y[:, np.flatnonzero(action)])

    def describe(self) -> str:
        return (
            f"general rewards ({self.reward_kind}, d={self.d}, support={self.support.tolist()}, "
            f"peak mass {self.peak_mass}, seed={self.seed})"
        )


class ContinuousRewards(RewardModel):
    """Independent continuous outcomes in [0, 1] (Beta per arm) with a general reward (A.10).

    Arm ``i`` has ``y_i ~ Beta(mu_i kappa, (1 - mu_i) kappa)`` with mean ``mu_i ~ U[lo, hi]``
    (default ``U[0.05, 0.95]``, drawn from the seed) and concentration ``kappa``.  Outcomes are
    drawn by the inverse Beta CDF at counter-based uniforms indexed by ``(seed, rep, arm, pull)``.

    ``expected_reward(a)`` is quasi-exact and deterministic: each arm is replaced by ``q``
    equally likely atoms at its quantiles ``(j + 1/2) / q`` (midpoint rule) with ``q`` chosen so
    that ``q ** |a| <= 200000`` (``q = 447`` for two arms); when that would give ``q < 16``
    (``|a| >= 5``), a scrambled Sobol sequence with a fixed seed (``2**16`` points) is used.
    Values are cached per action.

    Parameters
    ----------
    d : int
        Number of base arms.
    seed : int
        Instance seed.
    kappa : float
        Beta concentration ``alpha + beta`` (> 0), default 4.
    mean_range : (float, float)
        Range of the uniform means, inside (0, 1).
    reward : str
        ``"sqrt-sum"`` (default), ``"sum"`` (linear) or ``"max"``.
    mu : array, optional
        Explicit means in (0, 1).
    """

    declaration = ComponentDeclaration(
        "reward",
        "continuous",
        doc="Beta outcomes in (0, 1), r(a, y) = sqrt(sum); for the discretised algorithms",
        reference="Algorithm 8 (Appendix A.9)",
        fields=("d",),
    )
    #: Outcomes depend only on (rep, arm, pull number).
    pull_indexed = True

    def __init__(
        self,
        d: int,
        seed: int = 0,
        kappa: float = 4.0,
        mean_range: tuple[float, float] = (0.05, 0.95),
        reward: str = "sqrt-sum",
        mu: np.ndarray | None = None,
    ) -> None:
        super().__init__(d, seed)
        if not np.isfinite(kappa) or kappa <= 0:
            raise ValueError(f"kappa must be a positive number, got {kappa}")
        lo, hi = (float(x) for x in mean_range)
        if not 0.0 < lo <= hi < 1.0:
            raise ValueError(f"mean_range must satisfy 0 < lo <= hi < 1, got {mean_range}")
        self.kappa = float(kappa)
        self.reward_kind = _check_reward(reward)
        self.linear = self.reward_kind == "sum"
        if mu is None:
            u = rnd.uniform(rnd.stream_key(self.seed, "cmab-continuous-means"), np.arange(d))
            mu = lo + (hi - lo) * u
        mu = np.asarray(mu, dtype=float)
        if mu.shape != (self.d,) or not np.all(np.isfinite(mu)) or mu.min() <= 0 or mu.max() >= 1:
            raise ValueError(f"mu must be {self.d} finite values strictly inside (0, 1)")
        self.mu = mu
        self.alpha = mu * self.kappa
        self.beta = (1.0 - mu) * self.kappa
        self._rep_keys: dict[int, np.ndarray] = {}
        self._cache: dict[bytes, float] = {}

    def _keys_for(self, rep: int) -> np.ndarray:
        k = self._rep_keys.get(rep)
        if k is None:
            k = rnd.stream_key(self.seed, "cmab-continuous-outcomes", rep, np.arange(self.d))
            self._rep_keys[rep] = k
        return k

    def quantile(self, arms: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Inverse CDF of the arms' Beta laws at ``u`` (broadcast)."""
        return betaincinv(self.alpha[arms], self.beta[arms], u)

    def sample(self, rep, arms, pulls, t):
        arms = np.asarray(arms, dtype=np.int64)
        return self.quantile(arms, rnd.uniform(self._keys_for(rep)[arms], pulls))

    def expected_reward(self, action: np.ndarray) -> float:
        key = np.packbits(np.asarray(action, dtype=bool)).tobytes()
        v = self._cache.get(key)
        if v is None:
            v = self._cache[key] = self._integrate(np.flatnonzero(action))
        return v

    def expected_reward_index(self, family: Any) -> Any:
        """``expected_reward`` over ``family`` as a vectorised set function (same values, same
        argmax), or ``None`` when the actions have several sizes or use the Sobol rule."""
        sizes = np.unique(family.enumerate().sum(axis=1))
        if sizes.size != 1 or self.reward_kind == "sum":
            return None
        q = int(np.floor(200_000 ** (1.0 / int(sizes[0])) + 1e-9))
        if q < 16:
            return None
        u = (np.arange(q) + 0.5) / q
        w = np.full(q, 1.0 / q)
        return ExpectedRewardIndex(
            [(self.quantile(np.array([i]), u), w) for i in range(self.d)], self.reward_kind
        )

    def _integrate(self, arms: np.ndarray) -> float:
        k = arms.size
        if k == 0:
            return 0.0
        if self.reward_kind == "sum":
            return float(self.mu[arms].sum())
        q = int(np.floor(200_000 ** (1.0 / k) + 1e-9))
        if q >= 16:
            u = (np.arange(q) + 0.5) / q
            atoms = [self.quantile(np.array([i]), u) for i in arms]
            return expected_aggregate(atoms, [np.full(q, 1.0 / q)] * k, self.reward_kind)
        from scipy.stats import qmc

        u = qmc.Sobol(d=k, scramble=True, seed=12345).random(2**16)
        y = self.quantile(arms[None, :], u)
        return float(realised_reward(self.reward_kind, y).mean())

    def reward(self, action: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Realised reward r(a, y) for rows ``y`` of shape ``(L, d)`` (or ``(d,)``)."""
        y = np.atleast_2d(np.asarray(y, dtype=float))
        return realised_reward(self.reward_kind, y[:, np.flatnonzero(action)])

    def describe(self) -> str:
        return (
            f"continuous rewards ({self.reward_kind}, Beta, kappa={self.kappa}, d={self.d}, "
            f"seed={self.seed})"
        )

"""AROQ-C-CMAB, adaptive rare oracle queries with covariance-adaptive widths (Algorithm 3 of
the oracle-efficient paper, Section 4.1), round by round.

Statistics (Section 4.1): ``n_i`` the plays of arm ``i``, ``n_(i,j)`` the rounds both ``i``
and ``j`` were played, ``mu_hat`` the empirical means, ``S_hat_(i,j)`` the mean of
``y_i y_j`` over those ``n_(i,j)`` rounds and ``Sigma_hat = S_hat - mu_hat mu_hat^T``.  With

    Sigma_bar = Sigma_hat + bonus,  bonus_(i,j) = (5 h_t / sqrt(n_(i,j)) + h_t^2 / n_(i,j)
                                                   + 1 / n_(i,j)^2) / 4,
    G_bar = Sigma_bar o N + diag(Sigma_bar_ii n_i) + I   (entries with n_(i,j) = 0 add nothing),

the index of Eq. (3) (Eq. (4), the LCB, takes the minus sign) is

    r_t^UCB(a) = <a, mu_hat> + f_t ||D_n^-1 a||_(G_bar),

``f_t = f_const (log t + d log log t)``, ``h_t = h_const sqrt(log t + log d)`` (``log t`` at
``max(t, 3)``); an action with a never-played arm has index ``+inf`` (LCB ``-inf``).  The
oracle maximises it by enumerating the actions (ties: the first).

Algorithm 3:

* lines 1-2: ``tau_(i,j) = 0`` and ``T_(i,j)(0) = {}`` for every pair;
* lines 4-9 (warm-up): round ``t <= W`` plays the action of the ``((t-1) mod P)``-th pair
  ``i <= j`` (``P = d(d+1)/2``; the actions come from one parallel round of ``P`` oracle
  look-ups, line 7); at ``t = W`` lines 8-9 set ``tau_(i,j) = 1`` before round ``W`` is played,
  so ``T_(i,j)(0)`` holds rounds ``1 .. W-1``.  ``W = min(ceil(warmup_multiplier
  ceil(d(d+1) log^3(T) / 2)), floor(warmup_fraction T))`` (a ``"warm-up clamped"`` event when
  the cap binds: the paper's length exceeds classroom horizons);
* lines 14-23: at the start of round ``t > W`` every pair with ``|T_(i,j)(tau)| >= 1 + 2
  |T_(i,j)(tau - 1)|`` starts epoch ``tau + 1``; if one did, the oracle is asked for
  ``a_t = argmax_a r_t^UCB(a)``, else ``a_t = a_(t-1)``.  Right after the warm-up usually no
  pair crosses; the first round ``W + 1`` then makes one initial oracle call (its ``"oracle"``
  event has ``initial=True``);
* line 27: play ``a_t``, add ``t`` to ``T_(i,j)(tau_(i,j))`` for every pair ``i, j in a_t``.

``T_(i,j) = T_(j,i)``, so :attr:`tau` keeps one counter per pair ``i <= j`` (upper triangle).
Outcome sums are kept in fixed point (multiples of ``2^-32``, as every CMAB policy keeps them)
and the regret as play counts times gaps, summed exactly, so the fast one-repetition policy
(:class:`dashboard.algorithms.cmab.policies.covariance.AROQC`) gives these numbers.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from functools import partial
from typing import Any

import numpy as np

from ...base import Policy, PolicyEvent, validate_int, validate_positive
from ...declare import AlgorithmDeclaration
from ..oracle import Oracle, OracleRequest
from ..policies.common import FIXED_POINT_SCALE, to_fixed
from ..policies.constants import CMAB_LINEAR, F_CONST, H_CONST, WARMUP, WARMUP_FRACTION
from ..policies.shared import RegretCounter

__all__ = ["AROQC", "CovarianceStatistics", "f_h", "fraction", "r_index"]


def f_h(t: float, d: int, f_const: float, h_const: float) -> tuple[float, float]:
    """``(f_t, h_t)`` of Section 4.1 (given up to the constants ``f_const``, ``h_const``)."""
    lt = math.log(max(t, 3.0))
    return f_const * (lt + d * math.log(lt)), h_const * math.sqrt(lt + math.log(d))


def fraction(name: str, value: float) -> float:
    """A constant in [0, 1] (the warm-up and pair-phase caps)."""
    v = validate_positive(name, value, allow_zero=True)
    if v > 1:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return v


class CovarianceStatistics:
    """``n_i``, ``sum y_i``, ``n_(i,j)``, ``sum y_i y_j`` (sums in fixed point) of Section 4.1."""

    def __init__(self, d: int) -> None:
        self.d = d
        self.n = np.zeros(d, dtype=np.int64)
        self.sy = np.zeros(d, dtype=np.int64)
        self.n2 = np.zeros((d, d), dtype=np.int64)
        self.syy = np.zeros((d, d), dtype=np.int64)

    def add(self, action: np.ndarray, y: np.ndarray) -> None:
        """One round: the outcomes ``y`` of the arms of ``action`` (increasing arm order)."""
        arms = np.flatnonzero(action)
        self.n[arms] += 1
        self.sy[arms] += to_fixed(y)
        ix = (arms[:, None], arms)
        self.n2[ix] += 1
        self.syy[ix] += to_fixed(y[:, None] * y[None, :])

    def index_parts(self, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(mu_hat, G_bar, 1/n)`` at ``h_t = h``, ``1/n = inf`` for never-played arms."""
        mu = self.sy / FIXED_POINT_SCALE / np.maximum(self.n, 1)
        pos = self.n2 > 0
        N = np.maximum(self.n2, 1).astype(float)
        S_hat = self.syy / FIXED_POINT_SCALE / N
        bonus = (5.0 * h / np.sqrt(N) + h * h / N + 1.0 / N**2) / 4.0
        Sigma_bar = np.where(pos, S_hat - np.outer(mu, mu) + bonus, 0.0)
        G = Sigma_bar * self.n2 + np.diag(np.diag(Sigma_bar) * self.n) + np.eye(self.d)
        inv_n = np.where(self.n > 0, 1.0 / np.maximum(self.n, 1), np.inf)
        return mu, G, inv_n


def r_index(
    a: np.ndarray,
    mu: np.ndarray,
    G: np.ndarray,
    inv_n: np.ndarray,
    f: float,
    sign: float,
    allowed: np.ndarray | None = None,
) -> float:
    """Eq. (3) (``sign = +1``) or Eq. (4) (``sign = -1``) of one action ``a``:
    ``sum_(i in a) mu_hat_i + sign f sqrt(x^T G_bar_(a,a) x)``, ``x = (1/n_i)_(i in a)``;
    ``-inf`` if a pair of ``a`` is outside ``allowed`` (SROQ-C's ``N^(2)``)."""
    idx = np.asarray(a).ravel().nonzero()[0]
    col = idx[:, None]
    if allowed is not None and not allowed[col, idx].all():
        return -math.inf
    x = inv_n[idx]
    if np.isinf(x).any():
        return sign * math.inf
    q = float(x @ G[col, idx] @ x)
    return float(mu[idx].sum()) + sign * f * math.sqrt(max(q, 0.0))


class AROQC(Policy):
    """AROQ-C-CMAB: the oracle maximises Eq. (3) only when a pair's epoch ends (Algorithm 3).

    Parameters
    ----------
    f_const, h_const : float
        Constants of ``f_t`` and ``h_t`` (Section 4 gives them up to constants).
    warmup_multiplier : float
        Multiplier of the warm-up length ``ceil(d(d+1) log^3(T) / 2)``, default 1.
    warmup_fraction : float
        Cap of the warm-up as a share of the horizon, in [0, 1], default 0.1.
    oracle_delay : float
        Simulated seconds per oracle call.
    executor : concurrent.futures.Executor, optional
        Runs the parallel warm-up look-ups concurrently.
    """

    declaration = AlgorithmDeclaration(
        name="AROQ-C-CMAB",
        problem="cmab",
        reference="Algorithm 3",
        constants=(F_CONST, H_CONST, WARMUP, WARMUP_FRACTION),
        rewards=CMAB_LINEAR,
        doc="AROQ with covariance-aware widths (Section 4)",
    )

    def __init__(
        self,
        f_const: float = 0.05,
        h_const: float = 0.5,
        warmup_multiplier: float = 1.0,
        warmup_fraction: float = 0.1,
        oracle_delay: float = 0.0,
        executor: Executor | None = None,
    ) -> None:
        super().__init__()
        self.f_const = validate_positive("f_const", f_const, allow_zero=True)
        self.h_const = validate_positive("h_const", h_const, allow_zero=True)
        self.warmup_multiplier = validate_positive("warmup_multiplier", warmup_multiplier, True)
        self.warmup_fraction = fraction("warmup_fraction", warmup_fraction)
        self.oracle_delay = validate_positive("oracle_delay", oracle_delay, allow_zero=True)
        if executor is not None and not isinstance(executor, Executor):
            raise ValueError("executor must be a concurrent.futures.Executor or None")
        self.executor = executor
        self.env: Any = None

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env`` (linear or covariance rewards)."""
        Policy.__init__(self)
        self.horizon = T = validate_int("horizon", horizon, 1)
        if not getattr(env.model, "linear", False):
            raise ValueError(
                f"{self.name} needs a linear reward model (linear or covariance), "
                f"got {type(env.model).__name__}"
            )
        self.env, self.d = env, env.d
        d = env.d
        self.oracle = Oracle(env.family, self.log, self.oracle_delay, self.executor)
        self.stats = CovarianceStatistics(d)
        s = self.stats  # its arrays, updated in place, under their own names too
        self.n, self.sy, self.n2, self.syy = s.n, s.sy, s.n2, s.syy
        self.regret = RegretCounter(env)
        # lines 1-2: tau_(i,j) = 0; |T_(i,j)(tau_(i,j))| (cur) and |T_(i,j)(tau_(i,j) - 1)| (prev)
        self.tau = np.zeros((d, d), dtype=np.int64)  # for i <= j (upper triangle)
        self.cur = np.zeros((d, d), dtype=np.int64)
        self.prev = np.zeros((d, d), dtype=np.int64)
        self.upper = np.triu(np.ones((d, d), dtype=bool))
        self.action: np.ndarray | None = None  # a_(t-1)
        # the warm-up's length W and its clamp
        self.warmup_paper = math.ceil(d * (d + 1) * math.log(T) ** 3 / 2) if T > 1 else 0
        self.warmup_requested = math.ceil(self.warmup_multiplier * self.warmup_paper)
        cap = math.floor(self.warmup_fraction * T)
        self.warmup_length = min(self.warmup_requested, cap)
        self.warmup_clamped = self.warmup_requested > cap
        if self.warmup_clamped:
            data = {"paper": self.warmup_paper, "requested": self.warmup_requested}
            data.update(used=self.warmup_length, fraction=self.warmup_fraction)
            self.events.append(PolicyEvent(0, "warm-up clamped", data))
        self.pair_actions: np.ndarray | None = None

    def warmup_action(self, t: int) -> np.ndarray:
        """The action played at warm-up round ``t`` (after the warm-up began)."""
        W = self.warmup_length
        if self.pair_actions is None or not 1 <= t <= W:
            raise ValueError(f"t must be a warm-up round in 1..{W} that was reached, got {t}")
        return self.pair_actions[(t - 1) % len(self.pair_actions)].copy()

    def _warmup_round(self, t: int) -> None:
        """Lines 4-9 at round ``t <= W``."""
        if self.pair_actions is None:  # line 7: "any a in A s.t. i in a, j in a", in parallel
            pairs = [(i, j) for i in range(self.d) for j in range(i, self.d)]
            reqs = [
                OracleRequest("warm-up pair action", scores=np.zeros(self.d), include=[i, j], arm=i)
                for i, j in pairs
            ]
            acts = [a for a in self.oracle.batch(reqs, t) if a is not None]
            if not acts:
                raise ValueError("the action family has no feasible action")
            self.pair_actions = np.asarray(acts, dtype=bool)
            self.events.append(
                PolicyEvent(t, "phase", {"phase": "warm-up", "length": self.warmup_length})
            )
        if t == self.warmup_length:  # lines 8-9: tau_(i,j) = 1 for every pair
            self.prev, self.cur = self.cur, np.zeros_like(self.cur)
            self.tau[self.upper] += 1
        action = self.warmup_action(t)
        y = self.env.play(action[None], t)[0]
        self._play(action, y[action])

    def _epochs_end(self) -> np.ndarray:
        """Line 16: the pairs with ``|T_(i,j)(tau)| >= 1 + 2 |T_(i,j)(tau - 1)|``."""
        return self.cur >= 1 + 2 * self.prev

    def _main_round(self, t: int) -> None:
        """Lines 14-27 at round ``t > W``."""
        new = self._epochs_end()
        if self.action is None or new.any():
            self.prev[new] = self.cur[new]  # lines 17-18: tau_(i,j) += 1, T_(i,j)(tau) = {}
            self.cur[new] = 0
            self.tau[new & self.upper] += 1
            fired = int((new & self.upper).sum())
            f, h = f_h(t, self.d, self.f_const, self.h_const)  # line 20: a_t = argmax r_t^UCB
            mu, G, inv_n = self.stats.index_parts(h)
            ucb = partial(r_index, mu=mu, G=G, inv_n=inv_n, f=f, sign=1.0)
            a = self.oracle.call(OracleRequest("UCB index (3)", f=ucb), t)
            if a is None:
                raise ValueError("the action family has no feasible action")
            self.action = np.asarray(a, dtype=bool)
            data = {"action": np.flatnonzero(a), "pairs_updated": fired, "initial": fired == 0}
            self.events.append(PolicyEvent(t, "oracle", data))
        self._play(self.action, self.env.play_fixed(self.action, t, 1)[0])

    def _play(self, action: np.ndarray, y: np.ndarray) -> None:
        """Line 27: the statistics, ``T_(i,j)(tau_(i,j)) += {t}`` for ``i, j in a_t``, regret."""
        self.stats.add(action, y)
        arms = np.flatnonzero(action)
        self.cur[arms[:, None], arms] += 1
        self.regret.add(action, 1)

    def advance(self, until: int) -> int:
        """Play up to ``until``, stopping early before a round that asks the oracle."""
        if self.env is None:
            raise RuntimeError(f"{self.name}: call reset(env, horizon) before advance()")
        until, start = min(int(until), self.horizon), self.t
        W = self.warmup_length
        while self.t < until:
            t = self.t + 1
            if t <= W:
                self._warmup_round(t)
            else:
                if self.t > start and (self.t == W or self._epochs_end().any()):
                    break  # a decision point: the warm-up's end or an oracle call
                self._main_round(t)
            self.t = t
        self.cum_regret = self.regret.value
        return self.t

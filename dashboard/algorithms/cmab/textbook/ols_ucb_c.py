"""OLS-UCB-C (Zhou et al., NeurIPS 2024), the covariance-adaptive per-round baseline, round by
round.

The index is Eq. (3) of the oracle-efficient paper (which adopts it from Zhou et al.): with
``n_i`` the plays of arm ``i``, ``n_(i,j)`` the rounds both ``i`` and ``j`` were played,
``mu_hat`` the empirical means and ``Sigma_hat_(i,j)`` the empirical second moments minus
``mu_hat_i mu_hat_j``,

    r_t^UCB(a) = <a, mu_hat> + f_t ||D_n^-1 a||_(G_bar)                              (Eq. 3)

    G_bar = Sigma_bar o N + diag(Sigma_bar_ii n_i) + I,   Sigma_bar = Sigma_hat + bonus,
    bonus_(i,j) = (5 h_t / sqrt(n_(i,j)) + h_t^2 / n_(i,j) + 1 / n_(i,j)^2) / 4,

``f_t = f_const (log t + d log log t)``, ``h_t = h_const sqrt(log t + log d)`` (``log t`` at
``max(t, 3)``), and an action with a never-played arm has index ``+inf``.

1. Warm-up (Algorithm 3, lines 4-9, which the baseline's guarantee needs): one parallel
   oracle round looks up an action containing each pair ``i <= j``; rounds ``1 .. W`` play
   them in turn, ``W = min(ceil(warmup_multiplier ceil(d(d+1) log^3(T) / 2)),
   floor(warmup_fraction T))`` (a ``"warm-up clamped"`` event when the cap binds).
2. Every later round ``t``: the oracle (enumeration of the actions, ties: the first) returns
   ``a_t = argmax_a r_t^UCB(a)``; play it and update the statistics.

Outcome sums are kept in fixed point (multiples of ``2^-32``, as every CMAB policy keeps them)
and the regret as integer play counts times gaps, summed exactly, so the fast engine
(:class:`~dashboard.algorithms.cmab.policies.batched.BatchedOLSUCBC`) gives these numbers.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ...base import Policy, PolicyEvent, validate_int, validate_positive
from ...declare import AlgorithmDeclaration
from ..actions import MAX_ENUMERATION
from ..oracle import Oracle, OracleRequest
from ..policies.common import FIXED_POINT_SCALE, to_fixed
from ..policies.constants import CMAB_LINEAR, F_CONST, H_CONST, WARMUP, WARMUP_FRACTION
from ..policies.shared import RegretCounter

__all__ = ["OLSUCBC", "f_h"]


def f_h(t: float, d: int, f_const: float, h_const: float) -> tuple[float, float]:
    """``(f_t, h_t)`` of Section 4.1 (given up to the constants ``f_const``, ``h_const``)."""
    lt = math.log(max(t, 3.0))
    return f_const * (lt + d * math.log(lt)), h_const * math.sqrt(lt + math.log(d))


class OLSUCBC(Policy):
    """OLS-UCB-C: the index of Eq. (3) maximised by the oracle every round after a warm-up.

    Parameters
    ----------
    f_const, h_const : float
        Constants of ``f_t`` and ``h_t`` (Section 4 gives them up to constants).
    oracle_delay : float
        Simulated seconds per oracle call.
    warmup_multiplier : float
        Multiplier of the warm-up length ``ceil(d(d+1) log^3(T) / 2)``, default 1.
    warmup_fraction : float
        Cap of the warm-up as a share of the horizon, in [0, 1], default 0.1.
    """

    declaration = AlgorithmDeclaration(
        name="OLS-UCB-C",
        problem="cmab",
        reference="Zhou et al. 2024 (baseline)",
        constants=(F_CONST, H_CONST, WARMUP, WARMUP_FRACTION),
        rewards=CMAB_LINEAR,
        per_round=True,
        doc="per-round covariance-aware UCB (Section 6 baseline)",
    )

    def __init__(
        self,
        f_const: float = 0.05,
        h_const: float = 0.5,
        oracle_delay: float = 0.0,
        warmup_multiplier: float = 1.0,
        warmup_fraction: float = 0.1,
    ) -> None:
        super().__init__()
        self.f_const = validate_positive("f_const", f_const, allow_zero=True)
        self.h_const = validate_positive("h_const", h_const, allow_zero=True)
        self.oracle_delay = validate_positive("oracle_delay", oracle_delay, allow_zero=True)
        self.warmup_multiplier = validate_positive("warmup_multiplier", warmup_multiplier, True)
        self.warmup_fraction = validate_positive("warmup_fraction", warmup_fraction, True)
        if self.warmup_fraction > 1:
            raise ValueError(f"warmup_fraction must be in [0, 1], got {warmup_fraction!r}")
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
        self.oracle = Oracle(env.family, self.log, self.oracle_delay)
        self.n = np.zeros(d, dtype=np.int64)  # n_i
        self.sy = np.zeros(d, dtype=np.int64)  # sum of y_i (fixed point)
        self.n2 = np.zeros((d, d), dtype=np.int64)  # n_(i,j)
        self.syy = np.zeros((d, d), dtype=np.int64)  # sum of y_i y_j (fixed point)
        self.regret = RegretCounter(env)
        # step 1's length W and its clamp
        self.warmup_paper = math.ceil(d * (d + 1) * math.log(T) ** 3 / 2) if T > 1 else 0
        self.warmup_requested = math.ceil(self.warmup_multiplier * self.warmup_paper)
        cap = math.floor(self.warmup_fraction * T)
        self.warmup_length = min(self.warmup_requested, cap)
        self.warmup_clamped = self.warmup_requested > cap
        if self.warmup_clamped:
            data = {"paper": self.warmup_paper, "requested": self.warmup_requested}
            data.update(used=self.warmup_length, fraction=self.warmup_fraction)
            self.events.append(PolicyEvent(0, "warm-up clamped", data))
        self._pair_acts: np.ndarray | None = None
        try:
            n_actions = int(env.family.n_actions())
        except ValueError as exc:
            raise ValueError(f"{self.name} scores every action each round, but {exc}") from None
        if n_actions > MAX_ENUMERATION:
            raise ValueError(
                f"{self.name} scores every action each round and {env.family.describe()} has "
                f"{n_actions:,} actions (limit {MAX_ENUMERATION:,}); use fewer arms (d) or a "
                "smaller m"
            )
        self.A = env.family.enumerate()  # every action, in the oracle's order

    def _update(self, action: np.ndarray, y: np.ndarray) -> None:
        """Fold one round's outcomes ``y`` (of the arms of ``action``) into the statistics."""
        arms = np.flatnonzero(action)
        self.n[arms] += 1
        self.sy[arms] += to_fixed(y)
        ix = (arms[:, None], arms)
        self.n2[ix] += 1
        self.syy[ix] += to_fixed(y[:, None] * y[None, :])
        self.regret.add(action, 1)

    def warmup_action(self, t: int) -> np.ndarray:
        """The action played at warm-up round ``t`` (after the warm-up began)."""
        W = self.warmup_length
        if self._pair_acts is None or not 1 <= t <= W:
            raise ValueError(f"t must be a warm-up round in 1..{W} that was reached, got {t}")
        return self._pair_acts[(t - 1) % len(self._pair_acts)].copy()

    def _warmup_round(self, t: int) -> None:
        """Step 1 at round ``t <= W``."""
        if self._pair_acts is None:  # "any a in A s.t. i in a, j in a" (Algorithm 3 line 7)
            pairs = [(i, j) for i in range(self.d) for j in range(i, self.d)]
            reqs = [
                OracleRequest("warm-up pair action", scores=np.zeros(self.d), include=[i, j], arm=i)
                for i, j in pairs
            ]
            acts = [a for a in self.oracle.batch(reqs, t) if a is not None]
            if not acts:
                raise ValueError("the action family has no feasible action")
            self._pair_acts = np.asarray(acts, dtype=bool)
            self.events.append(
                PolicyEvent(t, "phase", {"phase": "warm-up", "length": self.warmup_length})
            )
        action = self.warmup_action(t)
        y = self.env.play(action[None], t)[0]
        self._update(action, y[action])

    def index(self, t: int) -> np.ndarray:
        """``r_t^UCB(a)`` of Eq. (3) for every action (rows of :attr:`A`)."""
        f, h = f_h(t, self.d, self.f_const, self.h_const)
        mu = self.sy / FIXED_POINT_SCALE / np.maximum(self.n, 1)
        pos = self.n2 > 0
        N = np.maximum(self.n2, 1).astype(float)
        S_hat = self.syy / FIXED_POINT_SCALE / N
        bonus = (5.0 * h / np.sqrt(N) + h * h / N + 1.0 / N**2) / 4.0
        Sigma_bar = np.where(pos, S_hat - np.outer(mu, mu) + bonus, 0.0)
        G = Sigma_bar * self.n2 + np.diag(np.diag(Sigma_bar) * self.n) + np.eye(self.d)
        inv_n = np.where(self.n > 0, 1.0 / np.maximum(self.n, 1), np.inf)
        Af = self.A.astype(float)
        unplayed = (Af[:, np.isinf(inv_n)] > 0).any(axis=1)
        X = Af * np.where(np.isinf(inv_n), 0.0, inv_n)[None, :]  # rows D_n^-1 a
        q = np.einsum("ij,jk,ik->i", X, G, X)  # ||D_n^-1 a||^2_(G_bar)
        value = Af @ mu + f * np.sqrt(np.maximum(q, 0.0))
        value[unplayed] = np.inf
        return value

    def advance(self, until: int) -> int:
        """Play up to ``until`` (the warm-up's end is a decision point)."""
        if self.env is None:
            raise RuntimeError(f"{self.name}: call reset(env, horizon) before advance()")
        until = min(int(until), self.horizon)
        W = self.warmup_length
        if self.t < W:
            while self.t < min(until, W):
                self.t += 1
                self._warmup_round(self.t)
        else:
            t_first, seconds = self.t + 1, 0.0
            while self.t < until:
                t = self.t + 1
                start = time.perf_counter()
                a = self.A[int(np.argmax(self.index(t)))]  # step 2: the oracle (first maximiser)
                if self.oracle_delay:
                    time.sleep(self.oracle_delay)
                seconds += time.perf_counter() - start
                self._update(a, self.env.play_fixed(a, t, 1)[0])
                self.t = t
            self.log.record_every_round(t_first, self.t, "UCB index (3)", seconds)
        self.cum_regret = self.regret.value
        return self.t

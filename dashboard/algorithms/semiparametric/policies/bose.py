"""BOSE (Krishnamurthy, Wu & Syrgkanis 2018), the per-round semiparametric baseline.

Bandit Orthogonalized Semiparametric Estimation.  Each round t:

1. ``theta_hat = Gamma^-1 b`` with ``Gamma = lambda I + sum_s x~_s x~_s^T`` and
   ``b = sum_s x~_s r_s``, ``x~_s = x_{a_s} - xbar_{p_s}`` (the orthogonalized estimator, Eq. 2
   of the experimental-design paper, here with ridge ``lambda``);
2. surviving arms
   ``A_t = {i : for all j, theta_hat^T (x_j - x_i) <= gamma ||x_j - x_i||_{Gamma^-1}}``;
3. a distribution ``p_t`` over ``A_t``; draw ``a_t ~ p_t``, observe ``r_t``, update Gamma and b.

Step 3: the paper chooses ``p_t`` by solving a min-max quadratic program each round; the
authors' public code samples uniformly over the surviving arms.  We implement the uniform
version (``distribution="uniform"``, the only value accepted), as GUIDE section 3 notes.

Constants as in Appendix I of the experimental-design paper: ``lambda = 4 d log(9T) +
8 log(4T/delta)`` and ``gamma = c (sqrt(lambda) + sqrt(d log(T/d) + log(T/delta)))`` with
``c in {1, 2, 4, 8}`` tuned.

Batched across repetitions: :class:`BatchedBOSE` runs ``R`` repetitions at once on state arrays
with a leading repetition axis (``Gamma^-1`` of shape ``(R, d, d)``, Sherman-Morrison rank-one
updates, stacked matrix products).  :class:`BOSE` (one repetition) *is* that engine with
``R = 1``, so ``R`` separate BOSE runs give exactly the numbers of one batched run.  The
machinery shared by the batched per-round baselines (feedback, regret, logs) is
:class:`~.per_round.PerRoundBatch`, also used by :mod:`.spts` and :mod:`.linear_foils`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import randomness as rnd
from ...base import Policy, validate_positive, validate_probability
from ...declare import AlgorithmDeclaration, Constant
from .constants import DELTA, LAM, MULTIPLIER_C
from .per_round import WINDOW_VALUES, PerRoundBatch, single_advance, single_reset

__all__ = ["BOSE", "BatchedBOSE"]


class BatchedBOSE(PerRoundBatch):
    """BOSE (uniform sampling over the surviving arms) for ``R`` repetitions at once.

    Same parameters and numbers as :class:`BOSE`; state ``Gamma_inv (R, d, d)`` and
    ``b (R, d)``.  Each round: ``theta_hat = Gamma^-1 b``, the elimination test on the
    ``(R, K, K)`` array of pairwise widths ``||x_j - x_i||_{Gamma^-1}``, the uniform draw over
    ``A_t`` from the stream ``(seed, rep, "BOSE", "arms")`` at counter ``t``, and the
    Sherman-Morrison update ``Gamma^-1 <- Gamma^-1 - Gamma^-1 x~ x~^T Gamma^-1 / (1 + x~^T
    Gamma^-1 x~)``.

    Parameters
    ----------
    c, delta, lam, distribution
        As :class:`BOSE`.

    Attributes
    ----------
    surviving : ndarray (R, K) of bool
        ``A_{t+1}`` of every repetition (after :meth:`action_distributions` or a round).
    """

    name = "BOSE"
    purpose = "elimination + update"
    randomised = True

    def __init__(
        self,
        c: float = 1.0,
        delta: float = 0.05,
        lam: float | None = None,
        distribution: str = "uniform",
    ) -> None:
        super().__init__()
        self.c = validate_positive("c", c)
        self.delta = validate_probability("delta", delta)
        self.lam = None if lam is None else validate_positive("lam", lam)
        if str(distribution).lower() != "uniform":
            raise ValueError(
                f"distribution must be 'uniform' (the authors' code; the paper's per-round "
                f"quadratic program is not implemented), got {distribution!r}"
            )
        self.distribution = "uniform"

    def params(self) -> dict[str, Any]:
        """Tunable parameters."""
        return {"c": self.c, "delta": self.delta, "lam": self.lam, "distribution": "uniform"}

    def _reset_state(self) -> None:
        T, d, R = self.horizon, self.d, self.R
        self.lam_value = (
            self.lam
            if self.lam is not None
            else 4 * d * math.log(9 * T) + 8 * math.log(4 * T / self.delta)
        )
        self.gamma = self.c * (
            math.sqrt(self.lam_value)
            + math.sqrt(max(d * math.log(max(T / d, 1.0)) + math.log(T / self.delta), 0.0))
        )
        self.Gamma_inv = np.repeat((np.eye(d) / self.lam_value)[None], R, axis=0)
        self.b = np.zeros((R, d))
        self._keys = np.array(
            [rnd.stream_key(e.seed, e.rep, "BOSE", "arms") for e in self.envs], dtype=np.uint64
        )
        self._u_w = max(64, min(4096, WINDOW_VALUES // R))
        self._u: np.ndarray | None = None
        self._u_t0 = 0
        self._XT = np.ascontiguousarray(self.X.T)
        self.surviving = np.ones((R, self.K), dtype=bool)

    def _uniforms(self, t: int) -> np.ndarray:
        i = t - self._u_t0
        if self._u is None or i >= self._u.shape[1] or i < 0:
            tt = np.arange(t, t + self._u_w, dtype=np.int64)
            self._u = rnd.uniform(self._keys[:, None], tt[None, :])
            self._u_t0, i = t, 0
        return self._u[:, i]

    def _decide(self) -> tuple[np.ndarray, np.ndarray]:
        if self._cache_t == self.t:
            return self._a, self._p
        X, G = self.X, self.Gamma_inv
        theta = (G @ self.b[:, :, None])[:, :, 0]  # theta_hat = Gamma^-1 b, (R, d)
        m = (X @ theta[:, :, None])[:, :, 0]  # x_i^T theta_hat, (R, K)
        M = (X @ G) @ self._XT  # x_i^T Gamma^-1 x_j, (R, K, K)
        diag = np.diagonal(M, axis1=1, axis2=2)
        # gamma ||x_j - x_i||_{Gamma^-1} = gamma sqrt(M_ii + M_jj - 2 M_ij), computed in place
        width = diag[:, :, None] + diag[:, None, :]
        M *= 2.0
        width -= M
        np.maximum(width, 0.0, out=width)
        np.sqrt(width, out=width)
        width *= self.gamma
        # dominated[r, i]: some j has theta^T (x_j - x_i) > gamma ||x_j - x_i||_{Gamma^-1}
        diff = m[:, None, :] - m[:, :, None]
        dominated = (diff > width).any(axis=2)
        surv = ~dominated
        size = surv.sum(axis=1)
        p = surv / size[:, None]
        u = self._uniforms(self.t + 1)
        # the j-th surviving arm (in index order), j = floor(u |A_t|)
        j = np.minimum((u * size).astype(np.int64), size - 1)
        a = np.argmax(np.cumsum(surv, axis=1) > j[:, None], axis=1)
        self._a, self._p, self.surviving, self._cache_t = a, p, surv, self.t
        return a, p

    def _update(self, arms: np.ndarray, rewards: np.ndarray) -> None:
        z = self.X[arms] - (self._p[:, None, :] @ self.X)[:, 0, :]  # x~ = x_a - xbar_p
        G = self.Gamma_inv
        Gz = (G @ z[:, :, None])[:, :, 0]
        denom = 1.0 + (z[:, None, :] @ Gz[:, :, None])[:, 0, 0]
        G -= Gz[:, :, None] * Gz[:, None, :] / denom[:, None, None]
        self.b += z * rewards[:, None]


_C = MULTIPLIER_C("c: multiplier of the confidence width", "multiplier of the confidence width")
_LAM = LAM(None, "ridge lambda of the centred design (null: the paper's choice from d and T)")
_DISTRIBUTION = Constant(
    "distribution",
    "uniform",
    "choice",
    choices=("uniform",),
    doc="action distribution over surviving arms: uniform (the authors' code; the paper's "
    "per-round quadratic program is not implemented, see docs/DIFFERENCES.md)",
    card=False,
)


class BOSE(Policy):
    """BOSE with uniform sampling over the surviving arms (per-round baseline).

    Parameters
    ----------
    c : float
        Exploration multiplier of ``gamma`` (Appendix I tunes ``c in {1, 2, 4, 8}``), > 0.
    delta : float
        Confidence level in (0, 1) used in ``lambda`` and ``gamma``; default 0.05.
    lam : float, optional
        Ridge ``lambda``; default ``4 d log(9T) + 8 log(4T/delta)`` (Appendix I).
    distribution : str
        ``"uniform"``: uniform over surviving arms (the authors' code; see module docstring).

    Notes
    -----
    Implemented as :class:`BatchedBOSE` with one repetition, so ``R`` BOSE runs equal one
    batched run exactly.  ``Gamma_inv``, ``b`` (shapes ``(d, d)``, ``(d,)``) and ``surviving``
    (indices of ``A_{t+1}``) read the engine's state.
    """

    declaration = AlgorithmDeclaration(
        name="BOSE",
        problem="semiparametric",
        reference="Krishnamurthy et al. 2018 (baseline)",
        constants=(_C, DELTA, _LAM, _DISTRIBUTION),
        per_round=True,
        batched=BatchedBOSE,
        doc="action-centered semiparametric bandit with uniform surviving-arm play",
    )

    def __init__(
        self,
        c: float = 1.0,
        delta: float = 0.05,
        lam: float | None = None,
        distribution: str = "uniform",
    ) -> None:
        super().__init__()
        self._engine = BatchedBOSE(c=c, delta=delta, lam=lam, distribution=distribution)
        self.c, self.delta = self._engine.c, self._engine.delta
        self.lam, self.distribution = self._engine.lam, self._engine.distribution

    def reset(self, env: Any, horizon: int) -> None:
        """Start a run of ``horizon`` rounds on ``env``."""
        single_reset(self, env, horizon)
        e = self._engine
        self.X, self.K, self.d = e.X, e.K, e.d
        self.lam_value, self.gamma = e.lam_value, e.gamma

    @property
    def Gamma_inv(self) -> np.ndarray:
        """``Gamma^-1``, shape ``(d, d)`` (a view of the engine's state)."""
        return self._engine.Gamma_inv[0]

    @property
    def b(self) -> np.ndarray:
        """``b = sum_s x~_s r_s``, shape ``(d,)``."""
        return self._engine.b[0]

    @property
    def surviving(self) -> np.ndarray:
        """Indices of the arms surviving the elimination test for round t+1."""
        self._engine._decide()
        return np.flatnonzero(self._engine.surviving[0])

    def action_distribution(self) -> np.ndarray:
        """``p_t`` for the next round (uniform over surviving arms)."""
        return self._engine.action_distributions()[0]

    def advance(self, until: int) -> int:
        """Play rounds t+1..until (every round is a decision point)."""
        return single_advance(self, until)

"""Estimators of theta*: the orthogonalized ridge estimator (Eq. 2) and plain least squares.

Orthogonalized regression (Section 2.2, Eq. 2; Krishnamurthy et al. 2018): with the centred
feature ``x~_{a_s} = x_{a_s} - xbar_{p_s}``, ``xbar_{p_s} = sum_i p_{i,s} x_i`` (the mean of the
feature under the policy's distribution at round s),

    V_hat_t = sum_s x~_{a_s} x~_{a_s}^T,
    theta_hat_t = (V_hat_t + beta_t I)^-1 sum_s x~_{a_s} r_s,

with ridge ``beta_t = log(t / delta)`` (Section 3, "Ridge Regularizer Selection").  Because
``E[x~_{a_s} | H_{s-1}] = 0`` the shift nu_s (and the common part xbar^T theta*) multiply a
martingale difference and wash out, whatever the shift.

Sufficient statistics: inside a block where the policy ``p`` is fixed (an SBE phase), only the
per-arm counts ``n_i`` and reward sums ``R_i`` matter:

    sum x~ x~^T = sum_i n_i (x_i - xbar)(x_i - xbar)^T,    sum x~ r = sum_i (x_i - xbar) R_i,

so a whole phase costs O(K d^2) whatever its length.

Plain least squares (``theta = (sum x x^T + ridge I)^+ sum x r``) regresses raw rewards on raw
features; a shift with non-zero mean biases it (it is the estimator of the linear foils).
"""

from __future__ import annotations

import math

import numpy as np

from ..base import validate_positive, validate_probability

__all__ = ["LeastSquares", "OrthogonalizedRidge", "ridge_beta"]


def ridge_beta(t: float, delta: float) -> float:
    """The paper's ridge ``beta_t = log(t / delta)`` (Section 3); > 0 for t >= 1, delta < 1."""
    delta = validate_probability("delta", delta)
    return math.log(max(float(t), 1.0) / delta)


class OrthogonalizedRidge:
    """Orthogonalized ridge regression (Eq. 2) with O(K d^2) block updates.

    Parameters
    ----------
    X : (K, d) array
        Arm features.
    delta : float
        Confidence level in the ridge ``beta_t = log(t/delta)``, in (0, 1).

    Attributes
    ----------
    V_hat : (d, d) array, ``sum_s x~ x~^T``.
    b : (d,) array, ``sum_s x~ r_s``.
    n : int, number of samples ``t``.
    """

    def __init__(self, X: np.ndarray, delta: float = 0.05) -> None:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError("X must be a (K, d) array")
        self.X = X
        self.K, self.d = X.shape
        self.delta = validate_probability("delta", delta)
        self.reset()

    def reset(self) -> None:
        """Forget all samples (SBE: ``B_0 = 0, b_0 = 0`` at each phase)."""
        self.V_hat = np.zeros((self.d, self.d))
        self.b = np.zeros(self.d)
        self.n = 0

    def _check_probs(self, probs: np.ndarray) -> np.ndarray:
        p = np.asarray(probs, dtype=float)
        if p.shape[-1] != self.K or np.any(p < -1e-12) or not np.all(np.isfinite(p)):
            raise ValueError(f"probs must be probability vectors of length K={self.K}")
        return p

    def add_counts(self, counts: np.ndarray, reward_sums: np.ndarray, probs: np.ndarray) -> None:
        """Add a block played under one fixed policy ``probs`` from its sufficient statistics.

        Parameters
        ----------
        counts : (K,) array
            ``n_i``: how often arm i was played in the block.
        reward_sums : (K,) array
            ``R_i``: sum of rewards received when arm i was played in the block.
        probs : (K,) array
            The fixed policy p of the block (its mean ``xbar_p`` centres the features).
        """
        n = np.asarray(counts, dtype=float)
        R = np.asarray(reward_sums, dtype=float)
        p = self._check_probs(probs)
        xbar = p @ self.X
        Z = self.X - xbar  # (K, d) centred features
        self.V_hat += (Z * n[:, None]).T @ Z
        self.b += Z.T @ R
        self.n += round(float(n.sum()))

    def add_block(self, arms: np.ndarray, rewards: np.ndarray, probs: np.ndarray) -> None:
        """Add rounds played under one fixed policy ``probs`` (reduced to counts and sums)."""
        arms = np.asarray(arms, dtype=np.int64)
        counts = np.bincount(arms, minlength=self.K)
        sums = np.bincount(arms, weights=np.asarray(rewards, dtype=float), minlength=self.K)
        self.add_counts(counts, sums, probs)

    def add_rounds(self, arms: np.ndarray, rewards: np.ndarray, probs: np.ndarray) -> None:
        """Add rounds with a possibly different policy each round (``probs`` of shape (L, K))."""
        arms = np.asarray(arms, dtype=np.int64)
        p = self._check_probs(np.atleast_2d(probs))
        Z = self.X[arms] - p @ self.X  # (L, d)
        self.V_hat += Z.T @ Z
        self.b += Z.T @ np.asarray(rewards, dtype=float)
        self.n += arms.shape[0]

    def beta(self) -> float:
        """``beta_t = log(t / delta)`` with t = number of samples (at least 1)."""
        return ridge_beta(max(self.n, 1), self.delta)

    def theta(self, beta: float | None = None) -> np.ndarray:
        """``theta_hat = (V_hat + beta I)^-1 b`` (Eq. 2); ``beta`` defaults to :meth:`beta`."""
        beta = self.beta() if beta is None else float(beta)
        if not beta > 0:
            raise ValueError(f"ridge beta must be > 0, got {beta}")
        return np.linalg.solve(self.V_hat + beta * np.eye(self.d), self.b)


class LeastSquares:
    """Plain (non-orthogonalized) least squares ``theta = (sum x x^T + ridge I)^+ sum x r``.

    With ``ridge = 0`` the Moore-Penrose pseudo-inverse gives the minimum-norm solution in the
    span of the played features.  Block updates from counts and reward sums cost O(K d^2).

    Parameters
    ----------
    X : (K, d) array
        Arm features.
    ridge : float
        Ridge lambda >= 0.
    """

    def __init__(self, X: np.ndarray, ridge: float = 0.0) -> None:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError("X must be a (K, d) array")
        ridge = validate_positive("ridge", ridge, allow_zero=True)
        self.X = X
        self.K, self.d = X.shape
        self.ridge = ridge
        self.reset()

    def reset(self) -> None:
        """Forget all samples."""
        self.V = np.zeros((self.d, self.d))
        self.b = np.zeros(self.d)
        self.n = 0

    def add_counts(self, counts: np.ndarray, reward_sums: np.ndarray) -> None:
        """Add a block from per-arm counts and reward sums."""
        n = np.asarray(counts, dtype=float)
        self.V += (self.X * n[:, None]).T @ self.X
        self.b += self.X.T @ np.asarray(reward_sums, dtype=float)
        self.n += round(float(n.sum()))

    def add_block(self, arms: np.ndarray, rewards: np.ndarray) -> None:
        """Add rounds (arms, rewards)."""
        arms = np.asarray(arms, dtype=np.int64)
        counts = np.bincount(arms, minlength=self.K)
        sums = np.bincount(arms, weights=np.asarray(rewards, dtype=float), minlength=self.K)
        self.add_counts(counts, sums)

    def theta(self) -> np.ndarray:
        """The least-squares estimate."""
        A = self.V + self.ridge * np.eye(self.d)
        if self.ridge > 0:
            return np.linalg.solve(A, self.b)
        return np.linalg.pinv(A, hermitian=True) @ self.b

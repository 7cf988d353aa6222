"""Linear rewards with Gaussian outcomes correlated across arms (Section 4, Appendix A.11.1)."""

from __future__ import annotations

import numpy as np

from ... import randomness as rnd
from ...declare import ComponentDeclaration
from .base import RewardModel

__all__ = ["CovarianceRewards", "random_correlation"]


def random_correlation(d: int, seed: int) -> np.ndarray:
    """``normalised(A A^T + I)`` with ``A`` a ``d x d`` standard Gaussian matrix (A.11.1).

    "Normalised" is read as *scaled to unit diagonal*: ``R = D^{-1/2} (A A^T + I) D^{-1/2}``
    with ``D = diag(A A^T + I)``, i.e. a correlation matrix (positive definite).
    """
    key = rnd.stream_key(seed, "cmab-covariance-A")
    A = rnd.normal(key, np.arange(d * d)).reshape(d, d)
    M = A @ A.T + np.eye(d)
    s = 1.0 / np.sqrt(np.diag(M))
    R = M * s[:, None] * s[None, :]
    return (R + R.T) / 2.0


def _sqrt_factor(S: np.ndarray) -> np.ndarray:
    """A matrix ``L`` with ``L L^T = S`` (Cholesky; eigen-factor for singular PSD ``S``)."""
    try:
        return np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        w, V = np.linalg.eigh(S)
        return V * np.sqrt(np.maximum(w, 0.0))[None, :]


def _one_set_per_round(arms: np.ndarray, t: np.ndarray) -> bool:
    """Whether ``(arms, t)`` (shape ``(L, k)``) is one arm set (increasing) played at ``L``
    increasing rounds, one row each: then the general grouping is a single group, in order."""
    if arms.ndim != 2 or arms.shape[1] == 0:
        return False
    a = arms[0]
    return bool(
        np.all(arms == a[None, :])
        and np.all(a[1:] > a[:-1])
        and np.all(t == t[:, :1])
        and np.all(t[1:, 0] > t[:-1, 0])
    )


def _rounds_by_set(
    sa: np.ndarray, starts: np.ndarray, sizes: np.ndarray, d: int
) -> list[np.ndarray]:
    """Entry positions ``(rounds, k)`` of the rounds that played the same arm set, one array
    per set, rounds in order (``sa``: arms sorted by round then arm, ``starts``/``sizes``:
    each round's first entry and size)."""
    if d <= 62 and starts.size <= 256:  # few rounds: one integer per set, a dict
        codes = np.bitwise_or.reduceat(np.left_shift(np.int64(1), sa), starts).tolist()
        by: dict[int, list[int]] = {}
        for r, code in enumerate(codes):
            by.setdefault(code, []).append(r)
        out = []
        for rs in by.values():
            first = starts[rs]
            out.append(first[:, None] + np.arange(int(sizes[rs[0]]))[None, :])
        return out
    out = []
    for k in np.unique(sizes):
        rows = starts[sizes == k]
        pos = rows[:, None] + np.arange(k)[None, :]
        out.extend(_same_sets(sa[pos], pos, d))
    return out


def _same_sets(sets: np.ndarray, pos: np.ndarray, d: int) -> list[np.ndarray]:
    """The rows of ``pos`` grouped by equal rows of ``sets`` (sorted arm sets of one size),
    each group in row order.  Sets of arms below 63 are encoded as one integer each (one
    ``unique`` of integers instead of rows)."""
    if d <= 62:
        code = np.bitwise_or.reduce(np.left_shift(np.int64(1), sets), axis=1)
        _, inv = np.unique(code, return_inverse=True)
    else:
        _, inv = np.unique(sets, axis=0, return_inverse=True)
    inv = np.asarray(inv).reshape(-1)
    by = np.argsort(inv, kind="stable")
    cuts = np.flatnonzero(np.diff(inv[by])) + 1
    return [pos[g] for g in np.split(by, cuts)]


class CovarianceRewards(RewardModel):
    """Gaussian outcomes ``y_t ~ N(mu, Sigma)`` with linear reward r(a, y) = <a, y> (Section 4).

    Instance (Appendix A.11.1): ``mu_i ~ U[0, 1]`` and ``Sigma = scale**2 * R`` where ``R`` is
    ``A A^T + I`` normalised to unit diagonal (a correlation matrix, see
    :func:`random_correlation`), so every arm has noise standard deviation ``scale``.  The paper
    does not say how ``A A^T + I`` is normalised nor the noise level; both are our choice
    (``scale`` is the exposed knob).  Outcomes are Gaussian, hence not confined to [0, 1].

    Randomness is indexed by ``(seed, rep, t)`` because arms are correlated: at round ``t`` the
    ``k`` played arms ``a = (i_1 < ... < i_k)`` receive ``mu_a + L_a z`` where ``L_a`` is the
    Cholesky factor of ``Sigma_aa`` and ``z_j = normal(key(seed, rep, j), t)`` for
    ``j = 0..k-1``.  The marginal law of the observed coordinates is therefore *exactly*
    ``N(mu_a, Sigma_aa)``, the law of the observed part of a full draw ``y_t ~ N(mu, Sigma)``
    (unobserved coordinates are never generated), and rounds are independent.

    Parameters
    ----------
    d : int
        Number of base arms.
    seed : int
        Instance seed (means and ``A``), also the root of the noise streams.
    mu : array, optional
        Explicit means (finite) instead of ``U[0, 1]`` draws.
    Sigma : array (d, d), optional
        Explicit covariance (symmetric positive semi-definite); then ``scale`` is ignored.
    scale : float
        Noise standard deviation of every arm (> 0), default 0.25.
    """

    declaration = ComponentDeclaration(
        "reward",
        "covariance",
        doc="Gaussian outcomes N(mu, Sigma), Sigma = normalised(A A^T + I); r(a, y) = <a, y>",
        reference="Section 4, Appendix A.11.1",
        fields=("d",),
    )
    linear = True
    #: Outcomes depend on (rep, t, arm set), not on pull numbers alone.
    pull_indexed = False

    def __init__(
        self,
        d: int,
        seed: int = 0,
        mu: np.ndarray | None = None,
        Sigma: np.ndarray | None = None,
        scale: float = 0.25,
    ) -> None:
        super().__init__(d, seed)
        if not np.isfinite(scale) or scale <= 0:
            raise ValueError(f"scale must be a positive number, got {scale}")
        self.scale = float(scale)
        if mu is None:
            mu = rnd.uniform(rnd.stream_key(self.seed, "cmab-covariance-means"), np.arange(d))
        mu = np.asarray(mu, dtype=float)
        if mu.shape != (self.d,) or not np.all(np.isfinite(mu)):
            raise ValueError(f"mu must be {self.d} finite values")
        self.mu = mu
        if Sigma is None:
            Sigma = self.scale**2 * random_correlation(self.d, self.seed)
        Sigma = np.asarray(Sigma, dtype=float)
        if Sigma.shape != (self.d, self.d) or not np.all(np.isfinite(Sigma)):
            raise ValueError(f"Sigma must be a finite ({self.d}, {self.d}) matrix")
        if not np.allclose(Sigma, Sigma.T):
            raise ValueError("Sigma must be symmetric")
        if np.linalg.eigvalsh(Sigma).min() < -1e-10 * max(1.0, np.abs(Sigma).max()):
            raise ValueError("Sigma must be positive semi-definite")
        self.Sigma = (Sigma + Sigma.T) / 2.0
        self._factors: dict[bytes, np.ndarray] = {}
        self._rep_keys: dict[int, np.ndarray] = {}

    def sigma2(self, action: np.ndarray) -> np.ndarray:
        """``sigma_i^2(a) = sum_{j in a} (Sigma_ij)_+`` for every arm ``i`` (Section 4)."""
        a = np.asarray(action, dtype=bool)
        return np.maximum(self.Sigma[:, a], 0.0).sum(axis=1)

    def _keys_for(self, rep: int) -> np.ndarray:
        k = self._rep_keys.get(rep)
        if k is None:
            k = rnd.stream_key(self.seed, "cmab-covariance-noise", rep, np.arange(self.d))
            self._rep_keys[rep] = k
        return k

    def _factor(self, arms: np.ndarray) -> np.ndarray:
        key = arms.astype(np.int64).tobytes()
        L = self._factors.get(key)
        if L is None:
            L = self._factors[key] = _sqrt_factor(self.Sigma[np.ix_(arms, arms)])
        return L

    def sample(self, rep, arms, pulls, t):
        arms = np.asarray(arms, dtype=np.int64)
        t = np.broadcast_to(np.asarray(t, dtype=np.int64), arms.shape)
        flat_a, flat_t = arms.ravel(), t.ravel()
        out = np.empty(flat_a.size)
        if flat_a.size == 0:
            return out.reshape(arms.shape)
        if _one_set_per_round(arms, t):  # play_fixed: one arm set, rounds in order
            a = arms[0]
            z = rnd.normal(self._keys_for(rep)[: a.size][None, :], t[:, :1])
            return self.mu[a][None, :] + z @ self._factor(a).T
        # group entries by round; inside a round, arms in increasing order (``play`` passes
        # them in that order already: then no sort)
        da, dt = np.diff(flat_a), np.diff(flat_t)
        in_order = bool(np.all((dt > 0) | ((dt == 0) & (da > 0))))
        order = None if in_order else np.lexsort((flat_a, flat_t))
        sa, st = (flat_a, flat_t) if order is None else (flat_a[order], flat_t[order])
        new_round = np.empty(st.size, dtype=bool)
        new_round[0], new_round[1:] = True, st[1:] != st[:-1]
        starts = np.flatnonzero(new_round)
        sizes = np.diff(starts, append=st.size)
        keys = self._keys_for(rep)
        # z_j = normal(key_j, t) for the j-th played arm of round t: one draw for all entries
        j = np.arange(st.size) - np.repeat(starts, sizes)
        z_all = rnd.normal(keys[j], st)
        res = np.empty(st.size)
        for pos in _rounds_by_set(sa, starts, sizes, self.d):
            arm_set = sa[pos[0]]
            res[pos] = self.mu[arm_set][None, :] + z_all[pos] @ self._factor(arm_set).T
        if order is None:
            return res.reshape(arms.shape)
        out[order] = res
        return out.reshape(arms.shape)

    def describe(self) -> str:
        return f"covariance rewards (Gaussian, d={self.d}, scale={self.scale}, seed={self.seed})"

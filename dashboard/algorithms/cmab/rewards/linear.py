"""Linear rewards with independent bounded noise (Section 6 experiments)."""

from __future__ import annotations

import numpy as np

from ... import randomness as rnd
from ...declare import ComponentDeclaration
from .base import RewardModel

__all__ = ["LinearRewards"]


class LinearRewards(RewardModel):
    """Means mu_i ~ U[0, 1]; outcomes uniform around them, r(a, y) = <a, y> (Section 6).

    The paper says outcomes are "uniformly generated around these means" without a width.
    We draw ``y_i ~ U[mu_i - w_i, mu_i + w_i]`` with ``w_i = min(noise_width, mu_i, 1 - mu_i)``,
    so that outcomes stay in [0, 1] (Section 2) and the mean is exactly ``mu_i`` (no clipping
    bias).  ``noise_width`` (default 0.5, i.e. the widest such interval) is the exposed knob.

    Parameters
    ----------
    d : int
        Number of base arms.
    seed : int
        Instance seed (the means), also the root of the noise streams.
    noise_width : float
        Half-width cap of the uniform noise, in [0, 0.5].
    mu : array, optional
        Explicit means in [0, 1] instead of random ones.
    """

    declaration = ComponentDeclaration(
        "reward",
        "linear",
        doc="independent arms, means ~ U[0, 1], uniform noise; r(a, y) = <a, y>",
        reference="Section 6 (experiments)",
        fields=("d",),
    )
    pull_indexed = True

    def __init__(
        self, d: int, seed: int = 0, noise_width: float = 0.5, mu: np.ndarray | None = None
    ) -> None:
        super().__init__(d, seed)
        if not 0.0 <= noise_width <= 0.5:
            raise ValueError(f"noise_width must be in [0, 0.5], got {noise_width}")
        self.noise_width = float(noise_width)
        if mu is None:
            key = rnd.stream_key(self.seed, "cmab-linear-means")
            mu = rnd.uniform(key, np.arange(self.d))
        mu = np.asarray(mu, dtype=float)
        if mu.shape != (self.d,) or not np.all(np.isfinite(mu)) or mu.min() < 0 or mu.max() > 1:
            raise ValueError(f"mu must be {self.d} finite values in [0, 1]")
        self.mu = mu
        self.width = np.minimum(self.noise_width, np.minimum(mu, 1.0 - mu))
        self._rep_keys: dict[int, np.ndarray] = {}

    def _keys_for(self, rep: int) -> np.ndarray:
        k = self._rep_keys.get(rep)
        if k is None:
            k = self._rep_keys[rep] = rnd.stream_key(
                self.seed, "cmab-linear-noise", rep, np.arange(self.d)
            )
        return k

    def sample(self, rep, arms, pulls, t):
        u = rnd.uniform(self._keys_for(rep)[arms], pulls)
        return self.mu[arms] + self.width[arms] * (2.0 * u - 1.0)

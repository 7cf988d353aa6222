"""Small shared helpers of the CMAB policies: sufficient statistics, confidence indices and
vectorised block play.

Kept deliberately small and stable (other policy modules import it):

* :class:`ArmStatistics` -- the per-base-arm sufficient statistics ``n_i`` and ``sum_i`` of
  Eq. (1)/(2) (``mu_hat_i = sum_i / n_i``, the empirical mean; GUIDE section 3).  Sums are kept
  *exactly* in fixed point (:data:`FIXED_POINT_SCALE`) so that playing a block in one piece or
  in arbitrary chunks gives bit-identical estimates, hence identical decisions (the
  stream == batch contract of ``docs/ARCHITECTURE.md``).
* :func:`confidence_indices` -- ``mu_hat_i +/- sqrt(C log(.) / n_i)`` with a finite
  optimistic value :data:`UNPLAYED_INDEX` for arms that were never played.
* :func:`play_fixed_sums` / :func:`play_schedule_sums` -- play a fixed action (AROQ) or a
  round-robin schedule (SROQ) for many rounds with bounded memory and return only the
  sufficient statistics the policies need.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...base import validate_positive

__all__ = [
    "FIXED_POINT_SCALE",
    "UNPLAYED_INDEX",
    "ArmStatistics",
    "check_linear_env",
    "confidence_indices",
    "draw_pull_sums",
    "play_fixed_sums",
    "play_schedule_sums",
    "pull_indexed",
    "validate_positive",
]

#: Index given to a never-played arm: ``+UNPLAYED_INDEX`` in UCBs and ``-UNPLAYED_INDEX`` in
#: LCBs.  Finite (not ``inf``) so that every exact oracle (top-m, shortest path, assignment
#: solvers) accepts the scores; large enough to dominate any sum of ``d`` real indices.
UNPLAYED_INDEX = 1.0e6

#: Outcomes are accumulated as ``round(y * 2**32)`` in int64: integer sums are associative, so
#: any chunking of a block gives the same sums.  Resolution 2**-32 (about 2e-10) per outcome;
#: exact for ``|sum of outcomes of one arm| < 2**31`` (e.g. |y| <= 200 over 10^7 pulls).
FIXED_POINT_SCALE = 2.0**32

#: Rounds per vectorised piece when a block is played (bounds memory at T = 10^6).
CHUNK_ROUNDS = 1 << 17


def check_linear_env(env: Any, policy: str) -> None:
    """Raise a ValueError unless ``env`` is a CMAB environment with a linear reward model."""
    model = getattr(env, "model", None)
    if model is None or not hasattr(env, "family"):
        raise ValueError(f"{policy} needs a CMABEnvironment (model.environment(family, rep))")
    if not getattr(model, "linear", False):
        raise ValueError(
            f"{policy} needs a linear reward model (r(a, y) = <a, y>); got {model.key!r}. "
            "Use the general-reward algorithms (AROQ-GR-CMAB, SROQ-GR-CMAB, SDCB) instead."
        )


def pull_indexed(model: Any) -> bool:
    """Whether the model's outcome of a pull depends only on ``(rep, arm, pull number)``.

    Such models may be sampled in any grouping of rounds (the set of pull numbers each arm uses
    in a block, hence its sum of outcomes, does not depend on the order of the rounds).  A model
    declares it with a ``pull_indexed`` attribute; without one, only :class:`LinearRewards`'
    own ``sample`` (documented as indexed by ``(rep, arm, pull)``) is trusted.
    """
    flag = getattr(model, "pull_indexed", None)
    if flag is not None:
        return bool(flag)
    from ..rewards.linear import LinearRewards

    return type(model).sample is LinearRewards.sample


def to_fixed(y: np.ndarray) -> np.ndarray:
    """Outcomes in fixed point (int64 multiples of 2**-32)."""
    return np.rint(np.asarray(y, dtype=float) * FIXED_POINT_SCALE).astype(np.int64)


class ArmStatistics:
    """Sufficient statistics of the base arms: ``n_i`` and the (fixed-point) outcome sums.

    Parameters
    ----------
    d : int
        Number of base arms.

    Attributes
    ----------
    n : ndarray of int64, shape (d,)
        ``n_i``: number of rounds in which arm ``i`` was played (Eq. (1)).
    sums : ndarray of int64, shape (d,)
        Sum of the observed outcomes of arm ``i`` times :data:`FIXED_POINT_SCALE`.
    """

    def __init__(self, d: int) -> None:
        self.n = np.zeros(d, dtype=np.int64)
        self.sums = np.zeros(d, dtype=np.int64)

    def add(self, arms: np.ndarray, sums_fixed: np.ndarray, counts: np.ndarray | int) -> None:
        """Add fixed-point outcome sums and pull counts for the given arms."""
        self.sums[arms] += sums_fixed
        self.n[arms] += counts

    @property
    def mu_hat(self) -> np.ndarray:
        """Empirical means (0 for unplayed arms)."""
        return self.sums / FIXED_POINT_SCALE / np.maximum(self.n, 1)

    def indices(self, C: float, log_term: float) -> tuple[np.ndarray, np.ndarray]:
        """``(UCB, LCB)`` per arm, see :func:`confidence_indices`."""
        return confidence_indices(self.mu_hat, self.n, C, log_term)


def confidence_indices(
    mu_hat: np.ndarray, n: np.ndarray, C: float, log_term: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per-arm ``mu_hat_i +/- sqrt(C * log_term / n_i)`` (Eq. (1) with ``log t``, Eq. (2) with
    ``log T``); never-played arms get ``+/- UNPLAYED_INDEX``."""
    played = n > 0
    width = np.sqrt(C * log_term / np.maximum(n, 1))
    ucb = np.where(played, mu_hat + width, UNPLAYED_INDEX)
    lcb = np.where(played, mu_hat - width, -UNPLAYED_INDEX)
    return ucb, lcb


def play_fixed_sums(env: Any, action: np.ndarray, t0: int, length: int) -> np.ndarray:
    """Play ``action`` in rounds ``t0 .. t0+length-1`` via ``env.play_fixed`` (in pieces of at
    most :data:`CHUNK_ROUNDS` rounds) and return the fixed-point outcome sums of its arms (in
    increasing arm order)."""
    k = int(np.count_nonzero(action))
    total = np.zeros(k, dtype=np.int64)
    done = 0
    while done < length:
        L = min(CHUNK_ROUNDS, length - done)
        y = env.play_fixed(action, t0 + done, L)
        total += to_fixed(y).sum(axis=0)
        done += L
    return total


def play_schedule_sums(
    env: Any, actions: np.ndarray, t0: int, length: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Play the round-robin schedule of Algorithm 2 (line 12) for rounds ``t0 .. t0+length-1``.

    Round ``t`` plays row ``t mod K`` of ``actions`` (shape ``(K, d)``).

    Returns
    -------
    sums : int64 (d,)
        Fixed-point outcome sums per base arm.
    counts : int64 (d,)
        Pulls per base arm.
    plays : int64 (K,)
        How many rounds each row was played.

    For a :func:`pull_indexed` model only the per-arm pull counts matter: each arm uses the
    same pull numbers as in the interleaved order, so :func:`draw_pull_sums` gives identical
    sums with ``O(length * m)`` work and one model call for small blocks; otherwise the
    interleaved ``(L, d)`` schedule goes through ``env.play`` in pieces.
    """
    actions = np.asarray(actions, dtype=bool)
    K, d = actions.shape
    q, r = divmod(int(length), K)  # rounds t0 .. t0+length-1 with t mod K == k
    plays = q + ((np.arange(K) - t0) % K < r).astype(np.int64)
    sums = np.zeros(d, dtype=np.int64)
    counts = plays @ actions.astype(np.int64)
    if pull_indexed(env.model):
        sums = draw_pull_sums(env, counts, t0)
    else:
        done = 0
        while done < length:
            L = min(CHUNK_ROUNDS, length - done)
            rows = actions[np.arange(t0 + done, t0 + done + L, dtype=np.int64) % K]
            y = env.play(rows, t0 + done)
            sums += to_fixed(np.where(rows, y, 0.0)).sum(axis=0)
            done += L
    return sums, counts, plays


def draw_pull_sums(env: Any, counts: np.ndarray, t0: int) -> np.ndarray:
    """Fixed-point sums of the next ``counts[i]`` outcomes of every arm ``i`` of a
    :func:`pull_indexed` model, drawn with ``env.model.sample`` (one call for small blocks,
    pieces of :data:`CHUNK_ROUNDS` for large ones); advances ``env.pulls`` like ``env.play``.

    For such models the outcome of a pull depends only on ``(rep, arm, pull number)``, so this
    equals playing the rounds one by one in any order.  ``t0`` is passed as the round of every
    draw (ignored by pull-indexed models).
    """
    counts = np.asarray(counts, dtype=np.int64)
    d = counts.shape[0]
    sums = np.zeros(d, dtype=np.int64)
    total = int(counts.sum())
    base = np.asarray(env.pulls, dtype=np.int64)
    if 0 < total <= CHUNK_ROUNDS:
        arms = np.flatnonzero(counts)
        offsets = np.concatenate(([0], np.cumsum(counts[arms])[:-1]))
        rep_arms = np.repeat(arms, counts[arms])
        pulls = base[rep_arms] + np.arange(total) - np.repeat(offsets, counts[arms])
        y = env.model.sample(
            env.rep, rep_arms[:, None], pulls[:, None], np.full((total, 1), t0, dtype=np.int64)
        )
        sums[arms] = np.add.reduceat(to_fixed(y[:, 0]), offsets)
    elif total:
        for i in np.flatnonzero(counts):
            for start in range(0, int(counts[i]), CHUNK_ROUNDS):
                L = min(CHUNK_ROUNDS, int(counts[i]) - start)
                pulls = base[i] + start + np.arange(L, dtype=np.int64)
                y = env.model.sample(
                    env.rep,
                    np.full((L, 1), i),
                    pulls[:, None],
                    np.full((L, 1), t0, dtype=np.int64),
                )
                sums[i] += int(to_fixed(y).sum())
    env.pulls += counts
    return sums

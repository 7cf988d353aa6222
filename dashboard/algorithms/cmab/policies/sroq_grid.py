"""SROQ's time grid (Algorithm 2, Section 3.2): the epoch boundaries ``t_1 < ... < t_M`` fixed
in advance, in the two conventions the paper's text allows (docs/DIFFERENCES.md).
"""

from __future__ import annotations

import math

import numpy as np

from ...base import validate_int

__all__ = ["GRID_KINDS", "default_num_epochs", "sroq_time_grid"]

#: Allowed values of the ``grid`` parameter.
GRID_KINDS = ("gao", "paper")


def default_num_epochs(T: int) -> int:
    """``M = max(2, ceil(log2 log2 T))`` (Theorem 2 wants ``M = Theta(log log T)``; Gao et al.
    2019 use ``log2 log2 T`` batches), capped at ``T`` so that every epoch has a round."""
    T = validate_int("T", T, 1)
    if T <= 2:
        return T
    return min(T, max(2, math.ceil(math.log2(math.log2(T)))))


def sroq_time_grid(T: int, M: int, kind: str = "gao") -> np.ndarray:
    """Epoch boundaries of Algorithm 2: ``M + 1`` integers ``g_0 = 1 < g_1 < ... < g_M = T``.

    Epoch ``tau`` (1-based) covers rounds ``g_{tau-1} .. g_tau - 1`` for ``tau < M`` and the
    last epoch covers ``g_{M-1} .. T`` (inclusive).  ``eta = T^(1 / (2 - 2^(1-M)))`` in both
    conventions.

    ``kind="gao"`` (default; Gao et al. 2019, batched bandits): the *ends* of the epochs are
    ``t_1 = eta``, ``t_tau = eta sqrt(t_{tau-1})``, which gives ``t_M = eta^(2 - 2^(1-M)) = T``
    exactly, so epoch ``tau`` is ``(t_{tau-1}, t_tau]`` with ``t_0 = 0``.

    ``kind="paper"`` (Section 3.2 as printed, fixed up): the *starts* are ``t_1 = 1``,
    ``t_tau = eta sqrt(t_{tau-1})`` for ``tau = 2 .. M``.  As printed ("t_M = T") the grid does
    not close: with this ``eta`` the recursion reaches ``T`` at index ``M + 1``, not ``M``.  We
    read ``t_{M+1} = T`` as the end of the last epoch, so there are exactly ``M`` epochs and the
    last one is ``[t_M, T]``.  The two conventions then put each boundary at the same real
    value ``eta^(2 - 2^(2-tau))``, the paper's one round earlier.

    Real boundaries are rounded to integers and forced strictly increasing.

    Parameters
    ----------
    T : int
        Horizon (>= 1).
    M : int
        Number of epochs, ``1 <= M <= T``.
    kind : {"gao", "paper"}
        Grid convention (see above).

    Returns
    -------
    ndarray of int64, shape (M + 1,)
    """
    T = validate_int("T", T, 1)
    M = validate_int("M", M, 1)
    if M > T:
        raise ValueError(f"M (number of epochs) must be at most T={T}, got {M}")
    if kind not in GRID_KINDS:
        raise ValueError(f"grid must be one of {GRID_KINDS}, got {kind!r}")
    eta = float(T) ** (1.0 / (2.0 - 2.0 ** (1 - M)))
    # real boundary between epoch tau and tau+1 (tau = 1..M-1): eta^(2 - 2^(1-tau))
    tau = np.arange(1, M, dtype=float)
    x = eta ** (2.0 - 2.0 ** (1.0 - tau))
    inner = np.floor(x + 1e-9).astype(np.int64) + (1 if kind == "gao" else 0)
    g = np.empty(M + 1, dtype=np.int64)
    g[0], g[M] = 1, T
    g[1:M] = inner
    # strictly increasing starts, each epoch non-empty, last start <= T
    for j in range(1, M):
        g[j] = max(g[j], g[j - 1] + 1)
    for j in range(M - 1, 0, -1):
        g[j] = min(g[j], g[j + 1] - (1 if j + 1 < M else 0))
    return g

"""Reference values ``E[r(a, y)]`` shared by equal laws (issue 9).

The reference :func:`~.laws.expected_aggregate` folds an action's per-arm laws exactly and is
the slowest call of a general-reward query (~1 ms for three arms on Algorithm 8's 246
levels).  Its value is a pure function of the laws and the reward function, so it is cached
by their bytes: before any data every repetition of a run has the same laws, and the single
policies (:class:`~.aggregate.ExpectedRewardIndex`) and the batched engines
(:func:`reference_value`) read one cache.  A lower module: it imports only :mod:`.laws`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .laws import expected_aggregate

__all__ = ["law_key", "reference_value"]

#: Reference values by (kind, the bytes of each law of the action in fold order): a pure
#: function of its key, shared by the repetitions (before any data their laws are equal).
_REFERENCE: dict[tuple[str, tuple[bytes, ...]], float] = {}


def law_key(values: Any, probs: Any) -> bytes | None:
    """The bytes of one law, ``values | probs`` (``None`` unless both are float64 arrays)."""
    if not (isinstance(values, np.ndarray) and isinstance(probs, np.ndarray)):
        return None
    if values.dtype != np.float64 or probs.dtype != np.float64:
        return None
    return values.tobytes() + b"|" + probs.tobytes()


def _reference(
    key: tuple[str, tuple[bytes, ...]] | None, values: list, probs: list, kind: str
) -> float:
    """:func:`expected_aggregate` of the laws in fold order, read from :data:`_REFERENCE`
    when the same laws were folded before (``key``: the kind and every law's bytes)."""
    hit = None if key is None else _REFERENCE.get(key)
    if hit is not None:
        return hit
    value = expected_aggregate(values, probs, kind)
    if key is not None:
        if len(_REFERENCE) >= 8192:
            _REFERENCE.clear()
        _REFERENCE[key] = value
    return value


def reference_value(laws: Sequence[tuple[np.ndarray, np.ndarray]], kind: str) -> float:
    """``E[r(a, y)]`` of the action whose arms have ``laws`` (fold order): the reference
    :func:`expected_aggregate`, shared with :class:`ExpectedRewardIndex` through
    :data:`_REFERENCE` (the batched engines' repetitions ask equal laws before any data)."""
    keys = [law_key(v, p) for v, p in laws]
    key = None if any(k is None for k in keys) else (kind, tuple(keys))  # type: ignore[arg-type]
    return _reference(key, [v for v, _ in laws], [p for _, p in laws], kind)

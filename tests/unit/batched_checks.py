"""Shared check of the batched CMAB engines: R repetitions in one engine give exactly the
numbers of R separate single runs (imported by the batched-engine tests)."""

from __future__ import annotations

from typing import Any

import numpy as np


def same_as_single_runs(
    single_cls: Any,
    batched_cls: Any,
    model: Any,
    family: Any,
    T: int,
    R: int,
    chunks: list[int],
    kwargs: dict[str, Any] | None = None,
) -> Any:
    """Advance ``batched_cls`` over R environments and R ``single_cls`` runs chunk by chunk
    (the stops ``chunks``, then T); after every stop the cumulative regrets are equal, and at
    the end the query and adaptivity counts and every arm's pulls.  Returns the engine."""
    kwargs = kwargs or {}
    envs_b = [model.environment(family, r) for r in range(R)]
    envs_s = [model.environment(family, r) for r in range(R)]
    batched = batched_cls(**kwargs)
    batched.reset(envs_b, T)
    singles = [single_cls(**kwargs) for _ in range(R)]
    for p, e in zip(singles, envs_s):
        p.reset(e, T)
    for stop in [*sorted(set(chunks)), T]:
        while batched.t < min(stop, T):
            batched.advance(stop)
        for p in singles:
            while p.t < min(stop, T):
                p.advance(stop)
        assert np.array_equal(batched.cum_regret, [p.cum_regret for p in singles]), stop
    assert [log.queries for log in batched.logs] == [p.log.queries for p in singles]
    assert [log.adaptivity for log in batched.logs] == [p.log.adaptivity for p in singles]
    assert all(np.array_equal(a.pulls, b.pulls) for a, b in zip(envs_b, envs_s))
    return batched

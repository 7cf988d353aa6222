"""Shared check: two results hold the same numbers (wall and oracle seconds excluded)."""

from __future__ import annotations

import numpy as np


def _strip_seconds(summary):
    return {k: v for k, v in summary.items() if not k.endswith("seconds")}


def assert_same_numbers(a, b):
    """Equal curves, finals and summaries (wall and oracle seconds excluded)."""
    assert a.reps == b.reps and a.runs == b.runs and a.t == b.t
    assert [r.algorithm for r in a.results] == [r.algorithm for r in b.results]
    for ra, rb in zip(a.results, b.results):
        np.testing.assert_array_equal(ra.times, rb.times)
        np.testing.assert_array_equal(ra.regret, rb.regret)
        np.testing.assert_array_equal(ra.queries, rb.queries)
        np.testing.assert_array_equal(ra.adaptivity, rb.adaptivity)
        for name in ("declared_arm", "declaration_time"):
            x, y = getattr(ra, name), getattr(rb, name)
            assert (x is None) == (y is None)
            if x is not None:
                np.testing.assert_array_equal(x, y)
        assert _strip_seconds(ra.summary()) == _strip_seconds(rb.summary())
    da, db = a.to_dict(), b.to_dict()
    da["results"] = [_strip_seconds(r) for r in da["results"]]
    db["results"] = [_strip_seconds(r) for r in db["results"]]
    assert da == db

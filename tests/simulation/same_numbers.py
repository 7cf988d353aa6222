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


def _same_value(x, y) -> None:
    if isinstance(x, dict):
        assert isinstance(y, dict) and x.keys() == y.keys()
        for k in x:
            _same_value(x[k], y[k])
    elif isinstance(x, (list, tuple)):
        assert type(x) is type(y) and len(x) == len(y)
        for u, v in zip(x, y):
            _same_value(u, v)
    elif isinstance(x, np.ndarray):
        assert isinstance(y, np.ndarray) and x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)
    else:
        assert x == y


def assert_same_events(a, b):
    """Equal policy events (per repetition: time, kind and every value of their data)."""
    assert len(a) == len(b)
    for ea, eb in zip(a, b):
        assert [(e.t, e.kind) for e in ea] == [(e.t, e.kind) for e in eb]
        for x, y in zip(ea, eb):
            _same_value(x.data, y.data)

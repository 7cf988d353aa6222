"""``ExpensiveLog.cumulative`` keeps its sorted rounds and its last answer between calls (a live
run asks for its growing grid every frame): the counts must be those of a fresh log with the
same records, whatever the sequence of records and questions, and a pickled log (a live frame
carries the logs that changed) must answer the same without carrying the cache."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.algorithms.base import ExpensiveLog


def _fresh(log: ExpensiveLog) -> ExpensiveLog:
    """A log with the same records and no cache."""
    new = ExpensiveLog()
    a = log.arrays()
    if len(a["t"]):
        codes = a["purpose_code"]
        new.record_many(a["t"], a["round_id"], [log.purposes[c] for c in codes], a["seconds"])
    for t0, t1, purpose, seconds in log.ranges:
        new.record_every_round(t0, t1, purpose, seconds)
    return new


def _reference(log: ExpensiveLog, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The counts straight from the definition (Section 2): calls at rounds <= t, and distinct
    adaptivity rounds whose first call is at a round <= t."""
    a = log.arrays()
    times = np.asarray(times, dtype=np.int64)
    q = np.array([(a["t"] <= t).sum() for t in times.reshape(-1)], dtype=np.int64)
    first: dict[int, int] = {}
    for t, r in zip(a["t"].tolist(), a["round_id"].tolist()):
        first[r] = min(t, first.get(r, t))
    starts = np.array(sorted(first.values()), dtype=np.int64)
    ad = np.array([(starts <= t).sum() for t in times.reshape(-1)], dtype=np.int64)
    for t0, t1, _, _ in log.ranges:
        n = np.clip(times.reshape(-1) - t0 + 1, 0, t1 - t0 + 1)
        q += n
        ad += n
    return q.reshape(times.shape), ad.reshape(times.shape)


_step = st.one_of(
    st.tuples(st.just("record"), st.integers(1, 60), st.integers(1, 4)),
    st.tuples(st.just("every"), st.integers(1, 60), st.integers(0, 8)),
    st.tuples(st.just("grow"), st.integers(0, 6), st.integers(0, 0)),
    st.tuples(st.just("other"), st.integers(1, 80), st.integers(0, 5)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_step, min_size=1, max_size=25))
def test_counts_equal_a_fresh_log_whatever_the_sequence(steps: list[tuple[str, int, int]]) -> None:
    log = ExpensiveLog()
    grid = np.zeros(0, dtype=np.int64)
    for kind, a, b in steps:
        if kind == "record":  # b calls at round a sharing one adaptivity round
            rid = log.new_round()
            log.record_many(np.full(b, a), np.full(b, rid), "oracle", 0.001)
        elif kind == "every":  # a per-round run of calls
            last = max([t1 for _, t1, _, _ in log.ranges] + [0])
            log.record_every_round(last + a, last + a + b, "per-round")
        elif kind == "grow":  # the live grid grows by a points (the frame path)
            top = int(grid[-1]) if grid.size else 0
            grid = np.concatenate([grid, top + 1 + np.arange(a, dtype=np.int64) * 3])
        times = grid if kind != "other" else np.sort(np.arange(b + 1, dtype=np.int64) * a)
        got = log.cumulative(times)
        want = _reference(log, times)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        fresh = _fresh(log).cumulative(times)
        assert np.array_equal(got[0], fresh[0]) and np.array_equal(got[1], fresh[1])
        assert got[0].dtype == np.int64 and got[0].shape == times.shape
        assert log.seconds == _fresh(log).seconds  # (kept per version too)


def test_answers_are_fresh_arrays_and_shapes_follow_times() -> None:
    log = ExpensiveLog()
    rid = log.new_round()
    log.record_many(np.array([3, 3, 9]), np.array([rid, rid, rid]), "oracle")
    q, _ = log.cumulative(np.arange(1, 11))
    q[:] = -1  # a caller changing its answer does not change the next one
    q2, ad2 = log.cumulative(np.arange(1, 13))
    assert q2.tolist() == [0, 0, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3]
    assert ad2.tolist() == [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    q0, ad0 = log.cumulative(5)  # a scalar round: scalar-shaped answers
    assert q0.shape == () and int(q0) == 2 and int(ad0) == 1
    grid = np.array([[1, 5], [9, 12]])
    q4, _ = log.cumulative(grid)
    assert q4.tolist() == [[0, 2], [3, 3]]


def test_a_pickled_log_leaves_the_cache_and_counts_the_same() -> None:
    log = ExpensiveLog()
    rid = log.new_round()
    log.record_many(np.arange(1, 200, 7), np.full(29, rid), "oracle")
    log.record_every_round(300, 400, "per-round")
    times = np.arange(1, 500, 13)
    before = log.cumulative(times)
    assert log._counts is not None
    copy = pickle.loads(pickle.dumps(log))
    assert copy._counts is None and copy._seconds_at is None
    assert copy.seconds == log.seconds
    after = copy.cumulative(times)
    assert all(np.array_equal(x, y) for x, y in zip(before, after))
    # a log pickled before the cache existed still loads
    state = dict(log.__dict__)
    state.pop("_counts")
    state.pop("_seconds_at")
    old = ExpensiveLog.__new__(ExpensiveLog)
    old.__setstate__(state)
    assert np.array_equal(old.cumulative(times)[0], before[0])


@pytest.mark.parametrize("with_records", [False, True])
def test_a_pickled_log_holds_the_same_records(with_records: bool) -> None:
    log = ExpensiveLog()
    log.record_every_round(1, 50, "per-round", 0.25)
    if with_records:
        rid = log.new_round()
        log.record_many(np.array([60, 61]), np.array([rid, rid]), ["a", "b"], 0.5, arm=3)
    log.arrays()  # (consolidated: one array per field)
    copy = pickle.loads(pickle.dumps(log, protocol=pickle.HIGHEST_PROTOCOL))
    for k, v in log.arrays().items():
        w = copy.arrays()[k]
        assert w.dtype == v.dtype and np.array_equal(w, v), k
    assert copy.ranges == log.ranges and copy.purposes == log.purposes
    assert (copy.queries, copy.adaptivity, copy.version) == (
        log.queries,
        log.adaptivity,
        log.version,
    )
    assert copy.seconds == log.seconds
    times = np.arange(0, 70, 3)
    assert all(np.array_equal(x, y) for x, y in zip(copy.cumulative(times), log.cumulative(times)))
    copy.record_every_round(51, 55, "per-round")  # a copy goes on recording as the original
    log.record_every_round(51, 55, "per-round")
    assert copy.ranges == log.ranges and copy.queries == log.queries


def test_a_grid_above_the_cache_limit_is_counted_the_same_and_not_kept():
    from dashboard.algorithms.base import COUNTS_CACHE_MAX

    log = ExpensiveLog()
    rid = log.new_round()
    log.record_many(np.arange(1, 5000, 3), np.full(1667, rid), "oracle")
    log.record_every_round(6000, 6100, "per-round")
    big = np.arange(1, COUNTS_CACHE_MAX + 2, dtype=np.int64) * 2
    got = log.cumulative(big)
    assert log._counts[3] == b"" and log._counts[4] is None  # only the sorted rounds kept
    want = _reference(log, big)
    assert all(np.array_equal(x, y) for x, y in zip(got, want))
    small = big[:100]
    assert all(np.array_equal(x, y[:100]) for x, y in zip(log.cumulative(small), want))
    assert log._counts[3] == small.tobytes()


_call = st.tuples(
    st.integers(0, 10**12),
    st.integers(0, 10**6),
    st.sampled_from(["oracle", "LCB max (11)", "representative of arm 3"]),
    st.floats(0.0, 1e3, allow_nan=False),
    st.integers(-1, 10**4),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(_call, max_size=12))
def test_record_keeps_what_record_many_of_one_call_keeps(calls: list) -> None:
    """``record`` builds its arrays directly (batched engines call it per repetition): the
    records, their dtypes, counts, seconds and pickles equal those of ``record_many``."""
    one, many = ExpensiveLog(), ExpensiveLog()
    for t, rid, purpose, seconds, arm in calls:
        one.record(t, rid, purpose, seconds, arm)
        many.record_many(np.array([t]), np.array([rid]), purpose, np.array([seconds]), arm)
    a, b = one.arrays(), many.arrays()
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k
    assert one.purposes == many.purposes and one.version == many.version
    assert one.queries == many.queries and one.adaptivity == many.adaptivity
    assert one.seconds == many.seconds
    again = pickle.loads(pickle.dumps(one)).arrays()
    assert all(np.array_equal(again[k], a[k]) for k in a)

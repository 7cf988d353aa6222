"""Frames sent from a Dask worker carry only new events (and the features once); the server
joins them back into exactly the result the worker holds."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from same_numbers import assert_same_events, assert_same_numbers

from dashboard.simulation.frame_delta import DeltaJoiner, DeltaTrimmer
from dashboard.simulation.runner import Simulation
from dashboard.simulation.specs import make_spec

CASES = [
    (make_spec("cmab", d=12, m=3), ["CUCB", "AROQ-CMAB", "SROQ-CMAB"], 6000, 3),
    (make_spec("semiparametric", d=4, K=10, shift="log"), ["SBE", "BOSE", "LinUCB"], 3000, 2),
]


@pytest.mark.parametrize("spec, algorithms, horizon, runs", CASES)
def test_joined_frames_equal_the_workers_result(spec, algorithms, horizon, runs):
    sim = Simulation(spec, algorithms, horizon, runs=runs, seed=3)
    trimmer, joiner = DeltaTrimmer(), DeltaJoiner()
    sizes = []
    targets = [0, 1, 2, 50, 51, 400, horizon // 3, horizon // 3, horizon]
    for target in targets:
        sim.advance_to(target)
        full = sim.result()
        wire = pickle.dumps(trimmer.trim(full))  # as Dask sends it
        joined = joiner.join(pickle.loads(wire))
        assert_same_numbers(joined, full)
        for rj, rf in zip(joined.results, full.results):
            assert_same_events(rj.events, rf.events)
        if full.features is None:
            assert joined.features is None
        else:
            for a, b in zip(joined.features, full.features):
                np.testing.assert_array_equal(a, b)
        sizes.append((len(wire), len(pickle.dumps(full))))
    # a frame with nothing new (same target twice) carries no events again
    repeat = targets.index(horizon // 3) + 1
    assert sizes[repeat][0] < sizes[repeat][1]
    assert sum(s for s, _ in sizes) < sum(f for _, f in sizes)


def test_earlier_joined_results_do_not_change():
    sim = Simulation(make_spec("cmab", d=10, m=2), ["AROQ-CMAB"], 4000, runs=2, seed=1)
    trimmer, joiner = DeltaTrimmer(), DeltaJoiner()
    sim.advance_to(100)
    first = joiner.join(trimmer.trim(sim.result()))
    counts = [len(ev) for ev in first.results[0].events]
    sim.advance_to(4000)
    last = joiner.join(trimmer.trim(sim.result()))
    assert [len(ev) for ev in first.results[0].events] == counts
    assert sum(len(ev) for ev in last.results[0].events) > sum(counts)


def test_a_missing_frame_is_an_error_not_a_wrong_result():
    sim = Simulation(make_spec("cmab", d=10, m=2), ["AROQ-CMAB"], 3000, runs=1, seed=0)
    trimmer, joiner = DeltaTrimmer(), DeltaJoiner()
    sim.advance_to(10)
    joiner.join(trimmer.trim(sim.result()))
    sim.advance_to(200)
    trimmer.trim(sim.result())  # lost on the way
    sim.advance_to(3000)
    with pytest.raises(ValueError, match="out of order"):
        joiner.join(trimmer.trim(sim.result()))


def test_features_travel_once():
    spec = make_spec("semiparametric", d=5, K=40, shift="none")
    sim = Simulation(spec, ["SBE"], 500, runs=1, seed=0)
    trimmer = DeltaTrimmer()
    first = trimmer.trim(sim.result())
    sim.advance_to(500)
    second = trimmer.trim(sim.result())
    assert first.new_features and first.result.features is not None
    assert not second.new_features and second.result.features is None


def _same_logs(a, b) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.version == y.version and x.ranges == y.ranges and x.purposes == y.purposes
        for k, v in x.arrays().items():
            np.testing.assert_array_equal(v, y.arrays()[k])


@pytest.mark.parametrize("spec, algorithms, horizon, runs", CASES)
def test_logs_travel_only_when_they_changed_and_join_to_the_workers(
    spec, algorithms, horizon, runs
):
    sim = Simulation(spec, algorithms, horizon, runs=runs, seed=5)
    trimmer, joiner = DeltaTrimmer(), DeltaJoiner()
    sent_total = kept_total = 0
    for target in [0, 5, 5, 200, 201, horizon // 2, horizon // 2, horizon]:
        sim.advance_to(target)
        full = sim.result()
        delta = pickle.loads(pickle.dumps(trimmer.trim(full)))
        for r in delta.result.results:
            sent_total += sum(log is not None for log in r.logs)
            kept_total += sum(log is None for log in r.logs)
        joined = joiner.join(delta)
        for rj, rf in zip(joined.results, full.results):
            _same_logs(rj.logs, rf.logs)
            assert rj.queries.tolist() == rf.queries.tolist()
    assert sent_total > 0 and kept_total > 0  # the repeated targets resend no log
    # a target asked twice: nothing changed, so no log goes again
    again = trimmer.trim(sim.result())
    assert all(log is None for r in again.result.results for log in r.logs)


def test_a_log_never_sent_is_an_error_not_a_wrong_result():
    sim = Simulation(make_spec("cmab", d=10, m=2), ["AROQ-CMAB"], 300, runs=1, seed=0)
    trimmer = DeltaTrimmer()
    trimmer.trim(sim.result())  # the first frame, lost on the way
    with pytest.raises(ValueError, match="out of order"):
        DeltaJoiner().join(trimmer.trim(sim.result()))


def test_every_change_of_a_log_bumps_its_version():
    from dashboard.algorithms.base import ExpensiveLog

    log = ExpensiveLog()
    versions = [log.version]
    log.record(3, log.new_round(), "oracle")
    versions.append(log.version)
    log.record_many(np.array([4, 5]), 7, "oracle")
    versions.append(log.version)
    log.record_every_round(6, 9, "oracle")
    versions.append(log.version)
    log.arrays()  # reading changes nothing
    versions.append(log.version)
    assert versions == sorted(versions) and len(set(versions)) == 4


# ------------------------------------------------------------------ the curves' grid rounds
_CURVE_CASES = [
    (make_spec("cmab", d=8, m=2), ["CUCB", "alpha-AROQ-CMAB", "SROQ-CMAB"], 3000, 2),
    (make_spec("semiparametric", d=3, K=6, shift="sine"), ["SBE", "SP-TS"], 800, 2),
]


def _assert_same_curves(joined, full) -> None:
    assert_same_numbers(joined, full)
    for rj, rf in zip(joined.results, full.results):
        assert (rj.alpha_regret is None) == (rf.alpha_regret is None)
        if rf.alpha_regret is not None:
            np.testing.assert_array_equal(rj.alpha_regret, rf.alpha_regret)


@settings(max_examples=12, deadline=None)
@given(
    case=st.sampled_from(range(len(_CURVE_CASES))),
    steps=st.lists(st.integers(min_value=0, max_value=900), min_size=1, max_size=8),
    partial=st.booleans(),
)
def test_curves_travel_once_and_join_to_the_workers(case, steps, partial):
    """Each frame carries only the grid rounds recorded since the one before, computed either
    from the whole result or, as the worker does, from ``Simulation.result(since=...)``; the
    joined curves are the worker's whole curves, frame after frame (repeated targets and
    frames with no new grid round included)."""
    spec, algorithms, horizon, runs = _CURVE_CASES[case]
    sim = Simulation(spec, algorithms, horizon, runs=runs, seed=11)
    trimmer, joiner = DeltaTrimmer(), DeltaJoiner()
    target = 0
    for step in [*steps, horizon]:
        target = min(horizon, target + step)
        sim.advance_to(target)
        full = sim.result()
        since = trimmer.grid_sent if partial else 0
        before = trimmer.grid_sent
        delta = pickle.loads(pickle.dumps(trimmer.trim(sim.result(since=since), since=since)))
        assert delta.grid_offset == before
        assert len(delta.result.results[0].times) == len(full.results[0].times) - before
        _assert_same_curves(joiner.join(delta), full)
        assert trimmer.grid_sent == sim.grid_recorded


def test_a_late_frame_carries_a_few_grid_rounds_not_the_whole_curves():
    spec = make_spec("cmab", d=20, m=3)
    sim = Simulation(spec, ["CUCB", "AROQ-CMAB", "SROQ-CMAB"], 200_000, runs=8, seed=0)
    trimmer = DeltaTrimmer()
    sim.advance_to(20_000)
    trimmer.trim(sim.result())
    sim.advance_to(21_333)  # one frame at normal speed
    since = trimmer.grid_sent
    delta = trimmer.trim(sim.result(since=since), since=since)
    full = sim.result()
    n_new = len(delta.result.results[0].times)
    assert 0 < n_new < len(full.results[0].times) // 10
    for r in delta.result.results:
        assert r.regret.shape == (8, n_new) and r.queries.shape == (8, n_new)


def test_a_frame_without_a_new_grid_round_has_empty_curves_of_the_same_kind():
    """Most frames of a class add no grid round: the counts are not asked of any log, and the
    empty curves are what the logs would have given (int64, one row per repetition)."""
    spec = make_spec("cmab", d=8, m=2)
    sim = Simulation(spec, ["CUCB", "AROQ-CMAB", "SROQ-CMAB"], 5000, runs=3, seed=1)
    sim.advance_to(1000)
    since = sim.grid_recorded
    empty = sim.result(since=since)
    for r, g in zip(empty.results, sim.groups):
        asked = [log.cumulative(np.zeros(0, dtype=np.int64)) for log in g.logs()]
        for name, k in (("queries", 0), ("adaptivity", 1)):
            got = getattr(r, name)
            want = np.array([a[k] for a in asked]).reshape(3, 0)
            assert got.shape == want.shape == (3, 0) and got.dtype == want.dtype == np.int64
        assert r.times.shape == (0,) and r.regret.shape == (3, 0)
    assert empty.instance == sim.result().instance


def test_curves_out_of_order_are_an_error_not_a_wrong_result():
    spec = make_spec("cmab", d=10, m=2)
    sim = Simulation(spec, ["CUCB"], 3000, runs=1, seed=0)
    trimmer, joiner = DeltaTrimmer(), DeltaJoiner()
    sim.advance_to(100)
    joiner.join(trimmer.trim(sim.result()))
    sim.advance_to(200)
    lost = trimmer.trim(sim.result())  # lost on the way
    sim.advance_to(300)
    with pytest.raises(ValueError, match="out of order"):
        joiner.join(trimmer.trim(sim.result()))
    with pytest.raises(ValueError, match="out of order"):
        DeltaJoiner().join(lost)  # curves from a later grid round, none held
    with pytest.raises(ValueError, match="were sent"):
        trimmer.trim(sim.result(since=sim.grid_recorded), since=trimmer.grid_sent + 1)
    with pytest.raises(ValueError, match="recorded"):
        sim.result(since=sim.grid_recorded + 1)
    with pytest.raises(ValueError, match="since"):
        sim.result(since=-1)

"""Frames sent from a Dask worker carry only new events (and the features once); the server
joins them back into exactly the result the worker holds."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
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

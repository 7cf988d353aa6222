"""Running a subset of repetition ids and merging pieces gives the run of all R, number for number.

This is what lets a sweep split its work by blocks of repetitions (issue 10): counter-based
random numbers make repetition r's numbers independent of which other repetitions run, for
single-repetition policies and for the batched engines alike.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from same_numbers import assert_same_numbers

from dashboard.algorithms.registry import ALGORITHMS
from dashboard.simulation import Simulation, make_spec, simulate
from dashboard.simulation.results import merge_results

_CMAB_SPEC = {
    "linear": ({"d": 6, "m": 2}, 600),
    "covariance": ({"d": 5, "m": 2, "reward": "covariance"}, 400),
    "general": ({"d": 4, "m": 2, "reward": "general"}, 200),
    "continuous": ({"d": 4, "m": 2, "reward": "continuous"}, 150),
}


def _case(info):
    """A small spec and horizon each registered algorithm supports."""
    if info.problem == "semiparametric":
        return make_spec("semiparametric", d=3, K=6, shift="log"), 500
    kwargs, horizon = _CMAB_SPEC[info.rewards[0]]
    return make_spec("cmab", **kwargs), horizon


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_subsets_of_repetitions_merge_into_the_full_run(name):
    info = ALGORITHMS[name]
    spec, horizon = _case(info)
    full = simulate(spec, [info.name], horizon, runs=4, seed=3)
    # 1 + 2 + 1: single-repetition policies and (for 2) the batched engine where one exists
    pieces = [
        simulate(spec, [info.name], horizon, runs=4, seed=3, reps=reps)
        for reps in ([3], [0, 2], [1])
    ]
    assert [p.reps for p in pieces] == [[3], [0, 2], [1]]
    assert_same_numbers(merge_results(pieces), full)
    # a piece equals the matching rows of the full run
    np.testing.assert_array_equal(pieces[1].results[0].regret, full.results[0].regret[[0, 2]])


def test_batched_and_unbatched_pieces_agree():
    spec = make_spec("semiparametric", d=3, K=6, shift="sine")
    algs = ["BOSE", "SP-TS", "LinUCB"]
    full = simulate(spec, algs, 400, runs=4, seed=1, batched=False)
    halves = [simulate(spec, algs, 400, runs=4, seed=1, reps=r) for r in ([0, 1], [2, 3])]
    assert_same_numbers(merge_results(halves), full)


def test_algorithms_run_apart_merge_into_one_run():
    spec = make_spec("cmab", d=6, m=2)
    algs = ["CUCB", "AROQ-CMAB", "SROQ-CMAB"]
    params = {"AROQ-CMAB": {"C": 0.7}}
    full = simulate(spec, algs, 500, runs=3, seed=2, params=params)
    apart = [
        simulate(spec, ["SROQ-CMAB"], 500, runs=3, seed=2, reps=[1, 2]),
        simulate(spec, ["AROQ-CMAB"], 500, runs=3, seed=2, params=params),
        simulate(spec, ["CUCB"], 500, runs=3, seed=2),
        simulate(spec, ["SROQ-CMAB"], 500, runs=3, seed=2, reps=[0]),
    ]
    assert_same_numbers(merge_results(apart, algorithms=algs), full)


def test_csv_names_the_true_repetition_ids():
    spec = make_spec("semiparametric", d=3, K=6)
    piece = simulate(spec, ["SBE"], 50, runs=5, seed=0, reps=[4, 2])
    runs = {line.split(",")[1] for line in piece.to_csv().splitlines()[1:]}
    assert runs == {"2", "4"}


def test_invalid_repetition_ids_and_merges_raise():
    spec = make_spec("semiparametric", d=3, K=6)
    for bad in ([], [5], [-1], [1, 1], "01", 3):
        with pytest.raises(ValueError, match="repetition"):
            Simulation(spec, ["SBE"], 50, runs=5, reps=bad)
    a = simulate(spec, ["SBE"], 50, runs=4, seed=0, reps=[0, 1])
    with pytest.raises(ValueError, match="two pieces"):
        merge_results([a, a])
    other_seed = simulate(spec, ["SBE"], 50, runs=4, seed=1, reps=[2, 3])
    with pytest.raises(ValueError, match="different"):
        merge_results([a, other_seed])
    g = simulate(spec, ["G-elimination"], 50, runs=4, seed=0, reps=[2])
    with pytest.raises(ValueError, match="differ"):
        merge_results([a, g])
    with pytest.raises(ValueError, match="nothing"):
        merge_results([])


_FULL: dict[str, object] = {}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=st.lists(st.integers(0, 3), min_size=5, max_size=5))
def test_any_partition_of_repetitions_merges_into_the_full_run(blocks):
    """Property: whatever split of 5 repetitions into pieces (sizes 1 to 5, so single runs
    and batched engines mix), the merged pieces are the full run."""
    spec = make_spec("semiparametric", d=3, K=5, shift="random")
    algs = ["SBE", "BOSE"]
    if "full" not in _FULL:
        _FULL["full"] = simulate(spec, algs, 120, runs=5, seed=9)
    pieces = []
    for b in sorted(set(blocks)):
        reps = [r for r, blk in enumerate(blocks) if blk == b]
        pieces.append(simulate(spec, algs, 120, runs=5, seed=9, reps=reps[::-1]))
    assert_same_numbers(merge_results(pieces[::-1]), _FULL["full"])

"""Sweep tasks that differ only by the shift share one batched engine (issue 9,
``simulation/shared_batch.py``): each unit's record is exactly its own run's (wall and oracle
seconds aside), the merge plan never lengthens the longest task, and units that cannot share
an engine fall back to separate runs."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.simulation import shared_batch
from dashboard.simulation.shared_batch import merge_key, merge_plan, run_shared_task
from dashboard.simulation.sweep import make_sweep, run_sweeps, run_task, run_tasks


def _unit(alg, shift, d=3, K=5, T=60, gap=0.5, params=None):
    return {
        "problem": "semiparametric",
        "spec": {
            "problem": "semiparametric",
            "d": d,
            "K": K,
            "instance": "gap",
            "gap": gap,
            "noise": 1.0,
            "shift": shift,
        },
        "algorithm": alg,
        "params": params or {},
        "horizon": T,
        "runs": 3,
        "seed": 4,
        "grid_points": 20,
    }


def _numbers(rec):
    rec = json.loads(json.dumps(rec, default=repr))
    for a in rec["algorithms"]:
        a.pop("wall_seconds", None)
        a.pop("oracle_seconds", None)
    return json.dumps(rec, sort_keys=True)


@pytest.mark.parametrize(("alg", "params"), [("SP-TS", {"n_mc": 20}), ("BOSE", {}), ("LinUCB", {})])
def test_shared_records_equal_separate_runs(alg, params):
    units = [_unit(alg, s, params=params) for s in ("sine", "log", "adversarial")]
    reps = [0, 2]
    separate = [_numbers(run_task(u, reps)) for u in units]
    shared = [_numbers(r) for r in run_tasks(units, reps)]
    assert shared == separate
    assert len({merge_key(u, reps) for u in units}) == 1  # one key: they do merge


def test_units_without_one_feature_matrix_run_separately():
    units = [_unit("BOSE", "sine", gap=0.5), _unit("BOSE", "log", gap=0.25)]
    got = [_numbers(r) for r in run_shared_task(units, [1])]
    assert got == [_numbers(run_task(u, [1])) for u in units]


def test_only_semiparametric_per_round_engines_merge():
    assert merge_key(_unit("SP-TS", "sine"), [0]) is not None
    assert merge_key(_unit("SBE", "sine"), [0]) is None  # no per-round batched engine
    cmab = {**_unit("CUCB", "sine"), "problem": "cmab"}
    assert merge_key(cmab, [0]) is None
    # other repetitions, constants or sizes: other keys
    base = merge_key(_unit("SP-TS", "sine"), [0])
    assert merge_key(_unit("SP-TS", "log"), [1]) != base
    assert merge_key(_unit("SP-TS", "log", params={"c": 2.0}), [0]) != base
    assert merge_key(_unit("SP-TS", "log", d=4), [0]) != base


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0.1, 100.0),
            st.integers(0, 1),
            st.sampled_from(["SP-TS", "BOSE", "SBE"]),
            st.sampled_from(["sine", "log"]),
        ),
        min_size=1,
        max_size=8,
    ),
    st.integers(1, 4),
)
def test_merge_plan_partitions_and_never_exceeds_the_longest_task(spec, workers):
    tasks = [(sec, prio, _unit(alg, shift), [0]) for sec, prio, alg, shift in spec]
    plan = merge_plan(tasks, workers)
    assert sorted(i for g in plan for i in g) == list(range(len(tasks)))
    longest = max(max(t[0] for t in tasks), sum(t[0] for t in tasks) / workers)
    for g in plan:
        assert sum(tasks[i][0] for i in g) <= longest
        if len(g) > 1:
            keys = {(tasks[i][1], merge_key(tasks[i][2], tasks[i][3])) for i in g}
            assert len(keys) == 1 and None not in {k for _, k in keys}
    assert [g[0] for g in plan] == sorted(g[0] for g in plan)


def test_sweeps_with_shared_tasks_equal_sweeps_without(monkeypatch):
    sweeps = [
        make_sweep(
            "semiparametric",
            ["SP-TS", "BOSE"],
            horizon=50,
            runs=2,
            seed=3,
            d=3,
            K=5,
            shift=shift,
            params={"SP-TS": {"n_mc": 10}},
        )
        for shift in ("sine", "log")
    ]
    calls = []
    real = shared_batch.run_shared_task

    def spy(units, reps):
        calls.append(len(units))
        return real(units, reps)

    monkeypatch.setattr(shared_batch, "run_shared_task", spy)
    shared = run_sweeps(sweeps, scheduler="inprocess")
    assert calls and all(n == 2 for n in calls)
    from dashboard.simulation import sweep as sweep_mod

    monkeypatch.setattr(sweep_mod, "merge_plan", lambda tasks, w: [[i] for i in range(len(tasks))])
    alone = run_sweeps(sweeps, scheduler="inprocess")
    for x, y in zip(shared, alone):
        assert len(x.rows) == len(y.rows)
        for rx, ry in zip(x.rows, y.rows):
            for ax, ay in zip(rx.result.results, ry.result.results):
                assert ax.algorithm == ay.algorithm
                assert ax.regret.tolist() == ay.regret.tolist()

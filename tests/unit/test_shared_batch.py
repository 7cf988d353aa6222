"""Sweep tasks that differ only by the shift share one batched engine (issue 9,
``simulation/shared_batch.py``): each unit's record is exactly its own run's (wall and oracle
seconds aside), the merge plan never lengthens the longest task, and units that cannot share
an engine fall back to separate runs."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given, settings
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


@pytest.mark.parametrize("alg", ["SP-TS", "BOSE"])
def test_units_differing_in_c_and_shift_share_an_engine_and_equal_separate_runs(alg):
    # Appendix I's four values of c, two shifts (one adaptive), c = 1 also as the default
    params = {"SP-TS": {"n_mc": 20}, "BOSE": {}}[alg]
    units = [
        _unit(alg, s, d=4, K=6, params={**params, **({} if c is None else {"c": c})})
        for c in (None, 2.0, 4.0, 8.0)
        for s in ("sine", "adversarial")
    ]
    reps = [1, 2]
    assert len({merge_key(u, reps) for u in units}) == 1
    separate = [_numbers(run_task(u, reps)) for u in units]
    assert [_numbers(r) for r in run_shared_task(units, reps)] == separate
    assert len(set(separate)) > 2  # c changes the runs: the engine did not use one c for all


def test_units_without_one_feature_matrix_run_separately():
    units = [_unit("BOSE", "sine", gap=0.5), _unit("BOSE", "log", gap=0.25)]
    got = [_numbers(r) for r in run_shared_task(units, [1])]
    assert got == [_numbers(run_task(u, [1])) for u in units]


def test_only_semiparametric_per_round_engines_merge():
    assert merge_key(_unit("SP-TS", "sine"), [0]) is not None
    assert merge_key(_unit("SBE", "sine"), [0]) is None  # no per-round batched engine
    cmab = {**_unit("CUCB", "sine"), "problem": "cmab"}
    assert merge_key(cmab, [0]) is None
    # other repetitions, sizes or constants an engine does not take per repetition: other
    # keys; c (SP-TS's and BOSE's per-repetition constant) merges
    base = merge_key(_unit("SP-TS", "sine"), [0])
    assert merge_key(_unit("SP-TS", "log"), [1]) != base
    assert merge_key(_unit("SP-TS", "log", params={"c": 2.0}), [0]) == base
    assert merge_key(_unit("SP-TS", "log", params={"n_mc": 50}), [0]) != base
    assert merge_key(_unit("SP-TS", "log", d=4), [0]) != base
    assert merge_key(_unit("BOSE", "log", params={"c": 8.0}), [0]) == merge_key(
        _unit("BOSE", "sine"), [0]
    )
    assert merge_key(_unit("BOSE", "log", params={"delta": 0.1}), [0]) != merge_key(
        _unit("BOSE", "sine"), [0]
    )
    linucb = merge_key(_unit("LinUCB", "sine"), [0])
    assert merge_key(_unit("LinUCB", "log", params={"delta": 0.1}), [0]) != linucb


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0.1, 100.0),
            st.integers(0, 1),
            st.sampled_from(["SP-TS", "BOSE", "SBE"]),
            st.sampled_from(["sine", "log"]),
            st.sampled_from([1.0, 2.0, 4.0, 8.0]),
        ),
        min_size=1,
        max_size=12,
    ),
    st.integers(1, 4),
    st.integers(1, 40),
)
@example(  # found by hypothesis: 3 pieces of 11, 11, 10 repetitions, the last 30 rows < 32
    spec=[(1.0, 0, "SP-TS", "sine", 1.0)] * 3 + [(1.0, 0, "BOSE", "sine", 1.0)],
    workers=3,
    n=32,
)
def test_merge_plan_covers_every_task_once_and_never_exceeds_the_longest_task(spec, workers, n):
    reps = list(range(n))
    tasks = [
        (sec, prio, _unit(alg, shift, params={"c": c}), reps) for sec, prio, alg, shift, c in spec
    ]
    plan = merge_plan(tasks, workers)
    # every task's repetitions exactly once, over the pieces that hold it
    got: dict[int, list[int]] = {}
    for g, piece in plan:
        assert piece and piece == sorted(piece)
        for i in g:
            got.setdefault(i, []).extend(piece)
    assert {i: sorted(r) for i, r in got.items()} == {i: reps for i in range(len(tasks))}
    total = sum(t[0] for t in tasks)
    longest = max(max(t[0] for t in tasks), total / workers)
    groups: dict[tuple[int, ...], int] = {}
    for g, piece in plan:
        groups[tuple(g)] = groups.get(tuple(g), 0) + 1
        assert sum(tasks[i][0] for i in g) * len(piece) / n <= longest * (1 + 1e-9)
        if len(g) > 1:
            keys = {(tasks[i][1], merge_key(tasks[i][2], tasks[i][3])) for i in g}
            assert len(keys) == 1 and None not in {k for _, k in keys}
    for g, pieces in groups.items():
        # cut by repetitions only a merged group longer than half the ideal share or than
        # the bound, into pieces of at least MIN_PIECE_ROWS rows
        if pieces > 1:
            seconds = sum(tasks[i][0] for i in g)
            assert len(g) > 1 and len(g) * (n // pieces) >= shared_batch.MIN_PIECE_ROWS
            assert pieces <= workers or math.ceil(n / (pieces - 1)) * seconds / n > longest
            assert seconds > total / workers / 2
    # tasks of one key are in one merged task (or its pieces) unless that would exceed the
    # bound and pieces by repetitions could not respect it
    keyed: dict[tuple[int, str], list[tuple[int, ...]]] = {}
    for g in groups:
        key = merge_key(tasks[g[0]][2], reps)
        if key is not None:
            keyed.setdefault((tasks[g[0]][1], key), []).append(g)
    for parts in keyed.values():
        if len(parts) > 1:
            assert sum(tasks[i][0] for g in parts for i in g) > longest
            assert all(groups[g] == 1 for g in parts)
    firsts = [g[0] for g, _ in plan]
    assert firsts == sorted(firsts)  # longest first, as the tasks came


def test_merge_plan_cuts_appendix_i_tuning_by_repetitions():
    # four values of c x two shifts x 10 repetitions: 80 rows (800 s), longer than half a
    # worker's share (1600 s / 2 / 2): two pieces of 5 repetitions, every unit in both
    units = [
        _unit("SP-TS", s, params={"c": c}) for c in (1.0, 2.0, 4.0, 8.0) for s in ("sine", "log")
    ]
    tasks = [(100.0, 0, u, list(range(10))) for u in units]
    tasks.append((800.0, 0, _unit("SBE", "sine"), list(range(10))))
    every = list(range(10))
    assert merge_plan(tasks, 2) == [
        (list(range(8)), [0, 1, 2, 3, 4]),
        (list(range(8)), [5, 6, 7, 8, 9]),
        ([8], every),
    ]
    # three workers: still two pieces (three would hold 24-32 rows each)
    assert len(merge_plan(tasks, 3)) == 3
    # one worker: nothing to share, one task of 80 rows
    assert merge_plan(tasks, 1) == [(list(range(8)), every), ([8], every)]
    # one pair of panels (20 rows), longer than half the share: halves would share too little
    pair = [tasks[0], tasks[1], (250.0, 0, _unit("SBE", "sine"), every)]
    assert merge_plan(pair, 2) == [([0, 1], every), ([2], every)]


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

    monkeypatch.setattr(
        sweep_mod, "merge_plan", lambda tasks, w: [([i], t[3]) for i, t in enumerate(tasks)]
    )
    alone = run_sweeps(sweeps, scheduler="inprocess")
    for x, y in zip(shared, alone):
        assert len(x.rows) == len(y.rows)
        for rx, ry in zip(x.rows, y.rows):
            for ax, ay in zip(rx.result.results, ry.result.results):
                assert ax.algorithm == ay.algorithm
                assert ax.regret.tolist() == ay.regret.tolist()


def test_appendix_i_tuning_of_semi_regret_gives_the_same_rows_merged_or_per_c():
    """``semi-regret`` with Appendix I's tuning (every panel, R = 10, a short horizon), run
    with c merged into one engine, with the 2-worker plan's pieces, and with each c on its
    own (benchmarks/bench_tuning.py's three ways): identical regret rows."""
    from tests.conftest import load_benchmark

    bench = load_benchmark("bench_tuning", "bench_tuning_for_tests")
    got = bench.compare(bench._jobs(30), repeats=1)
    assert got["identical"] is True


def test_a_plugin_engine_whose_reset_takes_no_constants_still_shares(monkeypatch):
    """An engine without per-repetition constants is reset with the plain call, so a
    plug-in's engine that overrides ``reset(envs, horizon)`` merges as before."""
    import dataclasses

    from dashboard.algorithms import registry
    from dashboard.algorithms.semiparametric.policies.linear_foils import BatchedLinUCB, LinUCB

    class PlainBatch(BatchedLinUCB):
        def reset(self, envs, horizon):  # the former signature
            super().reset(envs, horizon)

    class PlainLinUCB(LinUCB):
        declaration = dataclasses.replace(
            LinUCB.declaration, name="Plain-LinUCB", batched=PlainBatch
        )

    registry.register_algorithm(PlainLinUCB)
    try:
        units = [_unit("Plain-LinUCB", s) for s in ("sine", "log")]
        assert merge_key(units[0], [0]) == merge_key(units[1], [0])
        calls = []
        monkeypatch.setattr(
            PlainBatch,
            "reset",
            lambda self, e, T: calls.append(len(e)) or BatchedLinUCB.reset(self, e, T),
        )
        shared = [_numbers(r) for r in run_shared_task(units, [0, 1])]
        assert calls[-1] == 4  # then one engine over both units' repetitions
        assert shared == [_numbers(run_task(u, [0, 1])) for u in units]
    finally:
        registry.unregister_algorithm("Plain-LinUCB")

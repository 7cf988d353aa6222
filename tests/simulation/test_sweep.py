"""Sweeps in-process: validation before work, rows equal simulate per point, saved files,
cancel and resume (the Dask side is in test_sweep_dask.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from same_numbers import assert_same_numbers

from dashboard.simulation import make_spec, simulate
from dashboard.simulation.store import ExperimentWriter, read_experiment, save_result
from dashboard.simulation.sweep import MAX_POINTS, make_sweep, run_sweep
from dashboard.sweep_cli import load


def _semi_sweep(**kw):
    args = {
        "problem": "semiparametric",
        "algorithms": ["SBE", "LinUCB"],
        "horizon": 200,
        "runs": 3,
        "seed": 5,
        "grid": {"d": [2, 3], "shift": ["none", "sine"], "SBE:c": [0.5, 1.0]},
        "K": 5,
    }
    args.update(kw)
    return make_sweep(**args)


def _simulate_point(sweep, point):
    fields = {k: v for k, v in point.items() if k != "horizon" and ":" not in k}
    params = {}
    for k, v in point.items():
        if ":" in k:
            alg, name = k.split(":")
            params.setdefault(alg, {})[name] = v
    for alg, consts in sweep.params.items():
        params.setdefault(alg, {}).update(consts)
    spec = make_spec(sweep.problem, **{**sweep.base, **fields})
    return simulate(
        spec,
        sweep.algorithms,
        point.get("horizon", sweep.horizon),
        runs=sweep.runs,
        seed=sweep.seed,
        params=params or None,
    )


@pytest.fixture(scope="module")
def reference():
    sweep = _semi_sweep()
    return sweep, run_sweep(sweep, scheduler="inprocess")


def test_rows_equal_simulate_for_each_point(reference):
    sweep, res = reference
    assert res.complete and not res.cancelled and len(res.rows) == 8
    assert [r.point for r in res.rows] == sweep.points
    assert res.rows[0].point == {"d": 2, "shift": "none", "SBE:c": 0.5}
    # LinUCB has no swept constant: one unit shared by the two SBE:c values
    assert len(sweep.units) == 4 * 2 + 4
    for row in res.rows:
        assert_same_numbers(row.result, _simulate_point(sweep, row.point))
        js = row.to_dict()
        assert js["point"] == row.point and js["runs"] == 3 and js["seed"] == 5


@pytest.mark.parametrize("block", [1, 2])
def test_rows_do_not_depend_on_the_block_size(reference, block):
    sweep, res = reference
    other = run_sweep(sweep, scheduler="inprocess", block=block)
    assert other.tasks_run == len(sweep.units) * (3 if block == 1 else 2)
    for a, b in zip(other.rows, res.rows):
        assert_same_numbers(a.result, b.result)


def test_cmab_horizon_and_constant_grid_rows_equal_simulate():
    sweep = make_sweep(
        "cmab",
        ["AROQ-CMAB", "CUCB"],
        runs=2,
        seed=1,
        grid=[("T", [200, 400]), ("AROQ-CMAB:C", [0.5, 2])],
        params={"aroq-cmab": {"threshold_scale": 0.5}},
        d=5,
        m=2,
    )
    assert sweep.params == {"AROQ-CMAB": {"threshold_scale": 0.5}}
    res = run_sweep(sweep, scheduler="inprocess")
    assert [r.point for r in res.rows][1] == {"horizon": 200, "AROQ-CMAB:C": 2}
    for row in res.rows:
        assert_same_numbers(row.result, _simulate_point(sweep, row.point))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"grid": {"colour": [1]}}, "unknown grid field 'colour'"),
        ({"grid": {"d": []}}, "empty list"),
        ({"grid": {"d": [2, 2]}}, "twice"),
        ({"grid": {"d": [0, 3]}}, "d must be"),
        ({"grid": {"K": [5, 1]}}, "K must be"),
        ({"grid": {"gap": [0.5, 7]}}, "gap must be"),
        ({"grid": {"shift": ["sine", "wobble"]}}, "unknown shift"),
        ({"grid": {"horizon": [10, 0]}}, "horizon"),
        ({"grid": {"BOSE:c": [1]}}, "names no chosen algorithm"),
        ({"grid": {"SBE:nope": [1]}}, "SBE has no constant 'nope'"),
        ({"grid": {"SBE:c": [1, -1]}}, "SBE"),
        ({"grid": {"d": list(range(1, 401)), "K": list(range(2, 402))}}, "at most 100,000"),
        ({"runs": 0}, "runs"),
        ({"horizon": None}, "give a horizon"),
        ({"algorithms": ["SBE", "sbe"]}, "twice"),
        ({"algorithms": ["AROQ-CMAB"]}, "unknown algorithm"),
        ({"params": {"BOSE": {"c": 1}}}, "not chosen"),
    ],
)
def test_bad_sweeps_fail_before_any_work(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _semi_sweep(**kwargs)


def test_reward_model_unsupported_at_one_point_and_memory_limit():
    with pytest.raises(ValueError, match="does not support the 'general' reward"):
        make_sweep("cmab", ["AROQ-CMAB"], horizon=10, grid={"reward": ["linear", "general"]})
    with pytest.raises(ValueError, match="m must be at most d"):
        make_sweep("cmab", ["CUCB"], horizon=10, grid={"d": [2, 5]}, m=3)
    big = {"d": list(range(1, 201)), "K": list(range(2, 402))}  # 80,400 points
    with pytest.raises(ValueError, match="GiB of curves"):
        make_sweep("semiparametric", ["SBE", "LinUCB"], horizon=10, runs=64, grid=big)
    assert MAX_POINTS == 100_000


def test_cancel_then_resume_with_the_same_file(reference, tmp_path):
    sweep, full = reference
    out = tmp_path / "sweep.jsonl"
    seen = []

    def progress(p):
        seen.append(p.tasks_done)

    part = run_sweep(
        sweep, scheduler="inprocess", out=out, progress=progress, cancel=lambda: len(seen) > 4
    )
    assert part.cancelled and not part.complete and part.tasks_run == 4
    loaded = load(str(out))
    assert not loaded.complete and len(loaded.rows) == len(part.rows)
    again = run_sweep(sweep, scheduler="inprocess", out=out)
    assert again.complete and again.tasks_skipped == 4
    assert again.tasks_run == len(sweep.units) - 4
    for a, b in zip(again.rows, full.rows):
        assert_same_numbers(a.result, b.result)
    header, pieces, _ = read_experiment(out)
    keys = [(p["piece"]["unit"], r) for p in pieces for r in p["piece"]["reps"]]
    assert len(keys) == len(set(keys)) == len(sweep.units) * 3  # nothing lost or twice
    assert header["kind"] == "sweep" and header["package_version"]
    assert header["definition"]["seed"] == 5
    # loading the finished file gives the same rows, bit for bit (wall times included)
    back = load(str(out))
    for a, b in zip(back.rows, again.rows):
        assert_same_numbers(a.result, b.result)
        for x, y in zip(a.result.results, b.result.results):
            np.testing.assert_array_equal(x.wall_seconds, y.wall_seconds)


def test_a_half_written_last_line_is_dropped_on_resume(reference, tmp_path):
    sweep, full = reference
    out = tmp_path / "s.jsonl"
    run_sweep(sweep, scheduler="inprocess", out=out, cancel=lambda: False, block=3)
    text = out.read_text().splitlines(keepends=True)
    out.write_text("".join(text[:3]) + text[3][:50])  # killed while writing piece 3
    again = run_sweep(sweep, scheduler="inprocess", out=out)
    assert again.tasks_skipped == 2 and again.complete
    for a, b in zip(again.rows, full.rows):
        assert_same_numbers(a.result, b.result)


def test_a_file_of_another_sweep_is_refused(reference, tmp_path):
    sweep, _ = reference
    out = tmp_path / "s.jsonl"
    run_sweep(_semi_sweep(grid={"d": [2]}), scheduler="inprocess", out=out)
    with pytest.raises(ValueError, match=r"different sweep \(differs in: base, grid\)"):
        run_sweep(sweep, scheduler="inprocess", out=out)
    with pytest.raises(ValueError, match="different sweep"):
        run_sweep(_semi_sweep(grid={"d": [2]}, seed=6), scheduler="inprocess", out=out)
    single = tmp_path / "one.jsonl"
    save_result(single, simulate(make_spec("semiparametric", d=2, K=4), ["SBE"], 50))
    with pytest.raises(ValueError, match="holds a simulation"):
        run_sweep(sweep, scheduler="inprocess", out=single)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hello": 1}\n')
    with pytest.raises(ValueError, match="not a saved experiment"):
        load(str(bad))
    with pytest.raises(ValueError, match="no such file"):
        load(str(tmp_path / "missing.jsonl"))


def test_saved_simulation_loads_back_identical(tmp_path):
    spec = make_spec("semiparametric", d=3, K=6, shift="adversarial")
    res = simulate(spec, ["SBE", "BOSE"], 400, runs=3, seed=2, params={"SBE": {"c": 0.5}})
    path = save_result(tmp_path / "run.jsonl", res)
    back = load(str(path))
    assert_same_numbers(back, res)
    for x, y in zip(back.results, res.results):
        np.testing.assert_array_equal(x.wall_seconds, y.wall_seconds)
        assert x.params == y.params and x.best_arm == y.best_arm
    assert back.to_dict() == json.loads(json.dumps(res.to_dict()))
    assert back.to_csv() == res.to_csv()
    for got, want in ((back.features, res.features), (back.shift, res.shift)):
        assert want is not None  # a semiparametric run carries its plots' arrays
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    with ExperimentWriter.create(tmp_path / "x.jsonl", "simulation", {"a": 1}) as w:
        assert w.path.name == "x.jsonl"


_VALUES = st.one_of(
    st.integers(-3, 700),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.none(),
    st.booleans(),
    st.sampled_from(["sine", "log", "gap", "random", "m-sets", "general"]),
)
_KEYS = st.one_of(
    st.sampled_from(["d", "K", "m", "T", "horizon", "shift", "gap", "noise", "SBE:c", "SBE:x"]),
    st.text(max_size=6),
)


@settings(max_examples=60, deadline=None)
@given(
    problem=st.sampled_from(["cmab", "semiparametric"]),
    grid=st.dictionaries(_KEYS, st.lists(_VALUES, max_size=3), max_size=3),
)
def test_any_grid_is_accepted_or_refused_with_a_value_error(problem, grid):
    """Property (API contract): make_sweep returns a sweep whose every point is a valid spec,
    or raises ValueError; never another exception."""
    algs = ["SBE"] if problem == "semiparametric" else ["CUCB"]
    try:
        sweep = make_sweep(problem, algs, horizon=50, grid=grid)
    except ValueError:
        return
    assert len(sweep.rows) == int(np.prod([len(v) for v in grid.values()]))
    for unit in sweep.units.values():
        spec = {k: v for k, v in unit["spec"].items() if k != "problem"}
        make_spec(problem, **spec)
        assert 1 <= unit["horizon"] <= 10_000_000


def test_resume_refuses_a_file_of_another_package_version(reference, tmp_path):
    sweep, _ = reference
    out = tmp_path / "s.jsonl"
    part = run_sweep(sweep, scheduler="inprocess", out=out, cancel=lambda: True)
    assert part.cancelled and part.tasks_run == 0
    lines = out.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["package_version"] = "0.0.1"
    out.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    with pytest.raises(ValueError, match=r"made by version 0\.0\.1"):
        run_sweep(sweep, scheduler="inprocess", out=out)


def test_progress_reports_every_row_once_even_when_one_task_completes_several(reference, tmp_path):
    sweep, _ = reference
    seen = []
    run_sweep(sweep, scheduler="inprocess", progress=lambda p: seen.extend(p.new_rows))
    assert sorted(r.index for r in seen) == list(range(len(sweep.rows)))
    # LinUCB's unit is shared by the two SBE:c points: drop one LinUCB piece from a saved
    # file, and resuming completes two rows with one task
    out = tmp_path / "s.jsonl"
    run_sweep(sweep, scheduler="inprocess", out=out, block=3)
    lines = out.read_text().splitlines(keepends=True)
    linucb = [i for i, line in enumerate(lines) if i and '"algorithm":"LinUCB"' in line]
    assert len(linucb) == 4
    out.write_text("".join(line for i, line in enumerate(lines) if i != linucb[0]))
    reports = []
    again = run_sweep(sweep, scheduler="inprocess", out=out, progress=reports.append, block=3)
    first, last = reports[0], reports[-1]
    # the first report carries the rows already complete in the file
    assert first.tasks_done == 0 and len(first.new_rows) == first.rows_done == 6
    assert len(reports) == 2 and last.tasks_done == 1 and len(last.new_rows) == 2
    indices = [r.index for p in reports for r in p.new_rows]
    assert sorted(indices) == list(range(len(sweep.rows))) and again.complete

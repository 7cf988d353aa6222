"""Headless tests of the dashboard's param models: configuration rules, presets, the run
state machine, reproducibility against the batch API and memory over run/reset cycles."""

from __future__ import annotations

import gc
import threading
import tracemalloc

import numpy as np
import pytest

from dashboard.algorithms.registry import algorithms_for
from dashboard.simulation import simulate
from dashboard.simulation.runner import MAX_HORIZON
from dashboard.simulation.specs import make_spec
from dashboard.ui.model import CONSTANTS, MAX_ALGORITHMS, PRESET_KEYS, Config, RunModel


def run_to_end(model: RunModel, max_ticks: int = 10_000) -> None:
    for _ in range(max_ticks):
        if model.status != "running":
            return
        model.tick(0.05)
    raise AssertionError(f"run did not finish (t={model.t})")


def chunks(names: list[str], size: int = MAX_ALGORITHMS) -> list[list[str]]:
    return [names[i : i + size] for i in range(0, len(names), size)]


# ---------------------------------------------------------------------------- valid combinations
CMAB_CASES = [
    (actions, reward, algos)
    for actions in ("m-sets", "paths", "matchings")
    for reward in ("linear", "covariance", "general")
    for algos in chunks([i.name for i in algorithms_for("cmab", reward)])
]


@pytest.mark.parametrize(("actions", "reward", "algos"), CMAB_CASES)
def test_every_cmab_combination_runs(actions, reward, algos):
    config = Config(problem="cmab", d=6, m=2, actions=actions, reward=reward, algorithms=algos)
    config.param.update(horizon=40, runs=1, seed=3)
    assert config.errors == [], config.errors
    assert set(algos) <= set(config.algorithm_options)
    model = RunModel(config)
    model.run()
    run_to_end(model)
    assert model.status == "done", model.error
    assert model.t == 40
    result = model.result
    assert [r.algorithm for r in result.results] == algos
    for r in result.results:
        assert r.times[-1] == 40
        assert np.all(np.isfinite(r.regret)) and np.all(r.regret >= -1e-9)


SP_CASES = [
    (shift, algos)
    for shift in ("none", "sine", "log", "random", "adversarial")
    for algos in chunks([i.name for i in algorithms_for("semiparametric")])
]


@pytest.mark.parametrize(("shift", "algos"), SP_CASES)
def test_every_semiparametric_combination_runs(shift, algos):
    config = Config(problem="semiparametric", d=3, K=5, shift=shift, algorithms=algos)
    config.param.update(horizon=60, runs=1, seed=1)
    assert config.errors == []
    model = RunModel(config)
    model.run()
    run_to_end(model)
    assert model.status == "done", model.error
    assert [r.algorithm for r in model.result.results] == algos
    t, nu = model.shift_window(20)
    assert list(t) == list(range(41, 61)) and nu.shape == (20,)
    if shift == "none":
        assert np.all(nu == 0)


def test_problem_switch_offers_only_valid_algorithms_and_defaults():
    config = Config()
    assert config.algorithms == ["CUCB", "AROQ-CMAB", "SROQ-CMAB"]
    assert "SBE" not in config.algorithm_options
    config.problem = "semiparametric"
    assert config.algorithms == ["SBE", "BOSE", "SP-TS", "LinUCB"]
    assert set(config.algorithm_options) == {i.name for i in algorithms_for("semiparametric")}
    config.problem = "cmab"
    config.reward = "general"
    # CUCB does not support general rewards: it is no longer offered nor kept
    assert "CUCB" not in config.algorithm_options
    assert config.algorithms and all(a in config.algorithm_options for a in config.algorithms)
    assert config.errors == []


# ---------------------------------------------------------------------------- invalid input
def test_m_larger_than_d_is_explained_and_blocks_run():
    config = Config(d=4, m=5)
    assert any("m must be at most d" in e for e in config.errors)
    assert not config.valid
    model = RunModel(config)
    model.run()
    assert model.status == "error" and "m must be at most d" in model.error
    assert model.sim is None


@pytest.mark.parametrize(
    ("setting", "value"),
    [("K", 1), ("horizon", 0), ("horizon", MAX_HORIZON + 1), ("d", 0), ("runs", 0), ("alpha", 2)],
)
def test_out_of_range_values_are_rejected_by_bounds(setting, value):
    config = Config()
    before = getattr(config, setting)
    with pytest.raises(ValueError, match=setting):
        setattr(config, setting, value)
    assert getattr(config, setting) == before


def test_algorithm_rules_are_explained():
    config = Config(algorithms=[])
    assert any("at least one" in e for e in config.errors)
    config.algorithms = ["CUCB", "AROQ-CMAB", "SROQ-CMAB", "alpha-AROQ-CMAB", "SDCB"]
    assert any(f"at most {MAX_ALGORITHMS}" in e for e in config.errors)
    config.param.update(reward="general")
    before = list(config.algorithms)
    assert before and set(before) <= set(config.param.algorithms.objects)
    # a name the problem (and reward model) does not offer is refused when set, with why and
    # what is allowed; it never becomes one of the picker's options
    refused = [
        (["CUCB"], "CUCB does not support the general reward model"),
        (["SBE"], "SBE is an algorithm for the semiparametric problem, not cmab"),
        (["nope"], "unknown algorithm 'nope'"),
        ([3], "must be a list of algorithm names"),
    ]
    for names, why in refused:
        with pytest.raises(ValueError, match=why) as info:
            config.algorithms = names
        assert "allowed: AROQ-GR-CMAB, SROQ-GR-CMAB, SDCB" in str(info.value)
        assert config.algorithms == before
    assert config.param.algorithms.objects == config.algorithm_options
    assert "nope" not in config.param.algorithms.objects
    config.algorithms = ["SDCB", "sdcb"]  # the registered spelling is stored
    assert any("twice" in e for e in config.errors)
    config.algorithms = ["SDCB"]
    assert config.errors == []


# ---------------------------------------------------------------------------- presets
def test_preset_round_trip_and_validation():
    source = Config(problem="semiparametric")
    source.param.update(d=4, K=12, shift="log", magnitude=0.5, gap=0.3, noise=0.5, seed=9)
    source.param.update(algorithms=["SBE", "LinUCB"], horizon=5000, runs=2)
    preset = source.preset()
    assert set(preset) == set(PRESET_KEYS)
    target = Config()
    target.apply_preset(preset)
    assert target.preset() == preset
    assert target.errors == []

    before = target.preset()
    with pytest.raises(ValueError, match=r"unknown preset key.*allowed"):
        target.apply_preset({"colour": "red"})
    with pytest.raises(ValueError, match="invalid preset"):
        target.apply_preset({"d": 3, "K": 1})
    assert target.preset() == before  # atomic: nothing changed
    target.apply_preset({"problem": "CMAB", "algorithms": ["cucb", "sroq-cmab"], "m": 2})
    assert target.problem == "cmab" and target.algorithms == ["CUCB", "SROQ-CMAB"]
    # names the preset's own problem / reward model does not offer: refused, nothing changed
    before = target.preset()
    refused = [
        ({"algorithms": ["<img src=x onerror=alert(1)>"]}, "Unknown algorithm '<img src=x"),
        ({"problem": "semiparametric", "algorithms": ["CUCB"]}, "CUCB is an algorithm for the"),
        ({"algorithms": ["CUCB"], "reward": "general"}, "CUCB does not support the general"),
        ({"algorithms": ["SBE"], "d": 3}, "SBE is an algorithm for the semi"),
    ]
    for preset, why in refused:
        with pytest.raises(ValueError, match=f"invalid preset: {why}") as info:
            target.apply_preset(preset)
        assert "; allowed: " in str(info.value)
        assert target.preset() == before
        assert target.param.algorithms.objects == target.algorithm_options
    target.apply_preset({"algorithms": ["SDCB"], "reward": "general", "problem": "cmab"})
    assert target.algorithms == ["SDCB"] and target.valid


def test_every_lesson_preset_applies_to_a_valid_configuration():
    lessons = pytest.importorskip("dashboard.ui.lessons")
    found = lessons.load_lessons()
    if not found:
        pytest.skip("no lessons yet")
    for lesson in found:
        config = Config()
        config.apply_preset(dict(lesson.preset))
        assert config.errors == [], (lesson.slug, config.errors)


# ---------------------------------------------------------------------------- state machine
def test_run_pause_step_reset_state_machine():
    config = Config(d=6, m=2, horizon=3000, runs=2)
    model = RunModel(config)
    assert model.status == "idle" and model.result is None

    model.step()  # from idle: starts a paused run at the first decision point
    assert model.status == "paused" and 0 < model.t < 3000
    t = model.t
    assert model.tick() is False and model.t == t  # paused: ticks do nothing

    model.resume()
    assert model.status == "running"
    assert model.tick(0.02) and model.t > t
    model.pause()
    assert model.status == "paused"
    t = model.t
    model.step()
    assert model.status == "paused" and model.t > t
    model.toggle_pause()
    assert model.status == "running"

    model.reset()
    assert (model.status, model.t, model.result, model.sim) == ("idle", 0, None, None)

    model.run()
    run_to_end(model)
    assert model.status == "done" and model.t == 3000
    assert model.tick() is False
    model.run()  # Run again after done: a fresh run from t = 0
    assert model.status == "running" and model.t == 0


def test_run_on_new_configuration_cancels_old_run():
    config = Config(d=6, m=2, horizon=2000)
    model = RunModel(config)
    model.run()
    model.tick(0.02)
    old = model.sim
    config.d = 7
    model.run()
    assert model.sim is not old and model.t == 0
    assert old._executor is None  # closed
    assert model.result.spec["d"] == 7


def test_overlapping_ticks_are_skipped():
    model = RunModel(Config(d=6, m=2, horizon=1000))
    model.run()
    model._lock.acquire()
    try:
        result = []
        worker = threading.Thread(target=lambda: result.append(model.tick()))
        worker.start()
        worker.join(5)
        assert result == [False] and model.t == 0
    finally:
        model._lock.release()
    assert model.tick() is True


def test_exception_in_run_stops_it_with_one_sentence(monkeypatch):
    model = RunModel(Config(d=6, m=2, horizon=1000))
    model.run()

    def boom(self, target):
        raise RuntimeError("oracle exploded\nTraceback (most recent call last): ...")

    monkeypatch.setattr("dashboard.simulation.runner.Simulation.advance_to", boom)
    assert model.tick() is True
    assert model.status == "error" and model.sim is None
    assert model.error.startswith("The run stopped: Oracle exploded")
    assert "\n" not in model.error and "Traceback" not in model.error


# ---------------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("problem", ["cmab", "semiparametric"])
def test_model_result_equals_simulate(problem):
    config = Config(problem=problem, d=5, horizon=1500, runs=2, seed=11)
    if problem == "cmab":
        config.param.update(m=2, actions="paths")
    else:
        config.param.update(K=6, shift="sine")
    model = RunModel(config)
    model.run()
    run_to_end(model)
    spec = make_spec(problem, **config.spec_kwargs)
    batch = simulate(spec, list(config.algorithms), 1500, runs=2, seed=11)
    assert [r.algorithm for r in batch.results] == [r.algorithm for r in model.result.results]
    for ours, theirs in zip(model.result.results, batch.results):
        np.testing.assert_array_equal(ours.times, theirs.times)
        np.testing.assert_array_equal(ours.regret, theirs.regret)
        np.testing.assert_array_equal(ours.queries, theirs.queries)
        np.testing.assert_array_equal(ours.adaptivity, theirs.adaptivity)


def test_memory_does_not_grow_over_run_reset_cycles():
    model = RunModel(Config(d=20, m=3, horizon=5000, runs=4))

    def cycle():
        model.run()
        for _ in range(3):
            model.tick(0.01)
        model.reset()

    for _ in range(3):  # warm up caches
        cycle()
    gc.collect()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        for _ in range(20):
            cycle()
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert model.sim is None and model.result is None
    # keeping each cycle's Simulation alive grows memory by ~10 MB here; dropping them
    # leaves a few kB of caches
    assert after - base < 1_500_000, after - base


def test_clamped_schedules_are_reported_as_notices():
    config = Config(reward="covariance", d=6, m=2, horizon=800, runs=1)
    model = RunModel(config)
    model.run()
    run_to_end(model)
    notices = model.notices()
    assert any(n.startswith("AROQ-C-CMAB: warm-up clamped (the paper asks") for n in notices)
    model.reset()
    assert model.notices() == []


# ---------------------------------------------------------------------------- algorithm constants
def test_the_constants_card_is_the_declarations_card_constants():
    """CONSTANTS is derived from the policies' declarations (no second list to keep in line):
    every algorithm with card constants appears, with exactly its ``card=True`` constants."""
    from dashboard.simulation import catalogue

    expected = {
        d.name: tuple(c for c in d.constants if c.card)
        for d in catalogue.declarations()
        if any(c.card for c in d.constants)
    }
    assert dict(CONSTANTS) == expected
    assert [k.name for k in CONSTANTS["SROQ-CMAB"]] == ["C", "M", "grid", "lcb_query"]
    assert all(k.label for knobs in CONSTANTS.values() for k in knobs)


def test_constants_reach_the_policies_and_change_the_run():
    config = Config(d=6, m=2, horizon=3000, runs=1, seed=2, algorithms=["SROQ-CMAB"])
    config.set_constant("SROQ-CMAB", "M", 2)
    config.set_constant("SROQ-CMAB", "grid", "paper")
    assert config.constants == {"SROQ-CMAB": {"M": 2, "grid": "paper"}}
    model = RunModel(config)
    model.run()
    policy = model.sim.groups[0].policies[0]
    assert (policy.M, policy.grid_kind) == (2, "paper")
    run_to_end(model)
    epochs = [e for e in model.result.results[0].events[0] if e.kind == "epoch"]
    assert len(epochs) == 2  # M = 2 epochs instead of the default ~log2 log2 T
    default = RunModel(Config(d=6, m=2, horizon=3000, runs=1, seed=2, algorithms=["SROQ-CMAB"]))
    default.run()
    run_to_end(default)
    assert len([e for e in default.result.results[0].events[0] if e.kind == "epoch"]) > 2


def test_default_values_are_not_stored_and_unchosen_algorithms_are_not_passed():
    config = Config(problem="semiparametric", algorithms=["SBE", "LinUCB"])
    config.set_constant("SBE", "c", 2.0)
    config.set_constant("SBE", "n_rule", "appendix-i")
    config.set_constant("BOSE", "delta", 0.1)  # kept for later, BOSE is not chosen
    assert config.algorithm_constants() == {"SBE": {"c": 2.0, "n_rule": "appendix-i"}}
    config.set_constant("SBE", "c", 1.0)  # back to the default: removed
    config.set_constant("SBE", "n_rule", "eq4")
    config.set_constant("BOSE", "delta", 0.05)
    assert config.constants is None and "constants" not in config.preset()
    with pytest.raises(ValueError, match="SBE has no constant 'C'; it has: c, delta, n_rule"):
        config.set_constant("SBE", "C", 1.0)


@pytest.mark.parametrize(
    ("algorithm", "name", "value", "message"),
    [
        ("CUCB", "C", -1.0, "CUCB: C must be in [0.001, 1000] (got -1.0)."),
        ("SROQ-CMAB", "M", 0, "SROQ-CMAB: M must be in [1, 10000000] or none (auto) (got 0)."),
        ("SROQ-CMAB", "M", 20_000, "M must be at most the horizon T = 10000 (got 20000)."),
        ("SROQ-CMAB", "grid", "daily", "grid must be one of gao, paper (got 'daily')."),
        ("AROQ-CMAB", "threshold_scale", 0.0, "threshold_scale must be in (0, 1000]"),
    ],
)
def test_invalid_constants_are_explained_and_block_run(algorithm, name, value, message):
    config = Config()
    config.set_constant(algorithm, name, value)
    assert any(message in e for e in config.errors), config.errors
    assert not config.valid
    model = RunModel(config)
    model.run()
    assert model.status == "error" and model.sim is None


def test_semiparametric_invalid_constants():
    config = Config(problem="semiparametric")
    config.set_constant("SBE", "delta", 1.5)
    config.set_constant("SP-TS", "n_mc", 0)
    assert config.errors == [
        "SBE: delta must be in (0, 1) (got 1.5).",
        "SP-TS: n_mc must be in [1, 100000] (got 0).",
    ]
    config.constants = {"SBE": {"colour": 1}}
    assert config.errors == [
        "SBE: unknown constant 'colour'; allowed: c, delta, n_rule, elimination_factor, design_tol."
    ]


def test_presets_carry_constants_only_when_changed_and_old_presets_stay_valid():
    source = Config(algorithms=["CUCB", "SROQ-CMAB"])
    old = source.preset()
    assert "constants" not in old  # old presets (and old URLs) have no constants key
    source.set_constant("SROQ-CMAB", "M", 3)
    preset = source.preset()
    assert preset["constants"] == {"SROQ-CMAB": {"M": 3}}
    target = Config()
    target.apply_preset(preset)
    assert target.constants == {"SROQ-CMAB": {"M": 3}} and target.preset() == preset
    target.apply_preset(old)  # a preset without constants keeps the current ones
    assert target.constants == {"SROQ-CMAB": {"M": 3}}
    target.apply_preset({"constants": None})
    assert target.constants is None
    with pytest.raises(ValueError, match="constants' must be a mapping"):
        target.apply_preset({"constants": {"SBE": 3}})
    target.apply_preset({"constants": {"sroq-cmab": {"grid": "paper"}}})
    assert target.constants == {"SROQ-CMAB": {"grid": "paper"}}

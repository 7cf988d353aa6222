"""Appendix I's protocol through the sweep engine: each algorithm's best c in {1, 2, 4, 8} is
picked per setting, reported, and the panel holds exactly the runs with those constants."""

from __future__ import annotations

import pytest
from same_numbers import assert_same_numbers

from dashboard.cli import main
from dashboard.simulation import make_spec, simulate
from dashboard.simulation.experiments import FIGURES, run_experiment
from dashboard.simulation.tuning import TUNE_VALUES, run_panel


@pytest.fixture(scope="module")
def tuned():
    return run_experiment("semi-regret", scale="test", horizon=200, runs=2, seed=1, tune=True)


def test_best_c_is_picked_per_setting_and_reported(tuned):
    fig = FIGURES["semi-regret"]
    assert fig.tuned == ("SBE", "BOSE", "SP-TS")
    assert set(tuned.tuning) == {p.key for p in fig.panels}
    for key, per_alg in tuned.tuning.items():
        assert set(per_alg) == {"SBE", "BOSE", "SP-TS"}
        for alg, info in per_alg.items():
            by_c = {float(c): r for c, r in info["final_regret_mean_by_c"].items()}
            assert sorted(by_c) == list(TUNE_VALUES)
            best = min(by_c.values())
            assert info["chosen_c"] == min(c for c, r in by_c.items() if r == best)
            # the panel's curves are the runs with the chosen constant
            got = tuned.panels[key][alg]
            assert got.params["c"] == info["chosen_c"]
            assert got.final_regret.mean() == pytest.approx(best, abs=0, rel=0)
        assert f"[{key}] Appendix I tuning" in tuned.we_get
    assert tuned.summary()["tuning"] == tuned.tuning


def test_tuned_panel_equals_simulate_with_the_chosen_constants(tuned):
    key = "d=5,K=10,log"
    chosen = {a: v["chosen_c"] for a, v in tuned.tuning[key].items()}
    spec = make_spec("semiparametric", d=5, K=10, instance="gap", gap=0.5, noise=1.0, shift="log")
    params = {"SBE": {"n_rule": "appendix-i", "c": chosen["SBE"]}}
    params.update({a: {"c": chosen[a]} for a in ("BOSE", "SP-TS")})
    alone = simulate(spec, ["SBE", "BOSE", "SP-TS"], 200, runs=2, seed=1, params=params)
    assert_same_numbers(tuned.panels[key], alone)


def test_without_tuning_the_panel_is_simulate():
    res = run_experiment("semi-regret", scale="test", horizon=150, runs=1, seed=0)
    assert res.tuning == {} and "Appendix I tuning" not in res.we_get
    run = run_panel("semiparametric", {"d": 3, "K": 5}, ["SBE", "LinUCB"], 150, 2, 0, tune=("SBE",))
    assert list(run.chosen) == ["SBE"]  # only listed algorithms are tuned
    assert "SBE c = " in run.describe("p")


def test_reproduce_cli_tunes_on_request_and_rejects_bad_schedulers(tmp_path, capsys):
    argv = ["reproduce", "semi-regret", "--out", str(tmp_path), "--scale", "test"]
    code = main([*argv, "--horizon", "120", "--tune", "yes", "--scheduler", "inprocess"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Appendix I tuning, best c in {1, 2, 4, 8}" in out
    code = main([*argv, "--scheduler", "nowhere"])
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith("error: scheduler address must look like")
    assert err.count("\n") == 1
    code = main([*argv, "--tune", "maybe"])
    _, err = capsys.readouterr()
    assert code == 2 and "--tune" in err

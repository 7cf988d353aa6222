"""The alpha-regret plot module: shown only when an algorithm with an approximate oracle is
chosen, draws exactly the recorded alpha-regret (mean +- sd, ddof = 1) beside the ordinary
regret, and keeps its layer structure for empty and partial results (in-place updates)."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.simulation import catalogue
from dashboard.simulation.runner import simulate, stream
from dashboard.simulation.specs import make_spec
from dashboard.ui.app import DashboardApp
from dashboard.ui.board import PlotBoard
from dashboard.ui.plots import PLOTS, alpha_regret_frames, alpha_regret_plot

ALGS = ["alpha-AROQ-CMAB", "CUCB"]


@pytest.fixture(scope="module")
def result():
    spec = make_spec("cmab", d=8, m=2, actions="matchings", alpha=0.5)
    return simulate(spec, ALGS, horizon=400, runs=3, seed=3)


def test_uses_alpha_names_exactly_the_approximate_oracle_algorithms() -> None:
    assert catalogue.uses_alpha("alpha-AROQ-CMAB")
    assert not any(catalogue.uses_alpha(a) for a in ("CUCB", "AROQ-CMAB", "SBE", "nope"))


def test_the_board_shows_it_only_when_such_an_algorithm_is_chosen() -> None:
    board = PlotBoard()
    board.rebuild(["CUCB", "AROQ-CMAB"], "cmab", False)
    assert "alpha-regret" not in board.plots
    board.rebuild(ALGS, "cmab", False)
    assert list(board.plots)[:2] == ["regret", "alpha-regret"]
    assert "alpha-regret-plot" in board.plots["alpha-regret"].pane.css_classes
    board.close()
    assert any(m.key == "alpha-regret" for m in PLOTS)


def test_frames_are_the_recorded_curves(result) -> None:
    frames = alpha_regret_frames(result, ALGS)
    assert len(frames) == 4  # CUCB reports no alpha-regret: not drawn
    band, curve, traces, plain = frames
    a = result["alpha-AROQ-CMAB"]
    np.testing.assert_allclose(curve["alpha_regret"], a.alpha_regret.mean(axis=0))
    sd = a.alpha_regret.std(axis=0, ddof=1)
    np.testing.assert_allclose(curve["band_hi"] - curve["alpha_regret"], sd)
    assert traces["t"].size == 0  # run traces only for band="runs"
    np.testing.assert_allclose(plain["alpha_regret"], a.regret.mean(axis=0))
    assert (band["alpha_regret"] <= band["alpha_regret_hi"]).all()
    # the gap between the two curves is (1 - alpha) t r(a*)
    gap = plain["alpha_regret"] - curve["alpha_regret"]
    np.testing.assert_allclose(gap, 0.5 * curve["t"] * result.instance["optimal_reward"])


def test_same_layers_for_empty_partial_and_final_results(result) -> None:
    spec = make_spec("cmab", d=8, m=2, actions="matchings", alpha=0.5)
    first = next(iter(stream(spec, ALGS, horizon=400, runs=3, seed=3, frames=4)))
    shapes = []
    for res in (None, first, result):
        plot = alpha_regret_plot(res, ALGS)
        shapes.append([type(e).__name__ for e in plot])
        assert len(alpha_regret_frames(res, ALGS)) == 4
    assert shapes[0] == shapes[1] == shapes[2] == ["Area", "Curve", "Curve", "Curve"]
    # the title stays short; the band and alpha go in the subtitle line under it
    import holoviews as hv

    fig = hv.renderer("bokeh").get_plot(alpha_regret_plot(result, ALGS)).state
    assert fig.title.text == "alpha-regret (Theorem 7)"
    (subtitle,) = [t.text for t in fig.above if getattr(t, "name", "") == "subtitle"]
    assert "alpha = 0.5" in subtitle


def test_the_headless_dashboard_streams_it_to_the_end() -> None:
    app = DashboardApp(autostart_timer=False)
    app.config.param.update(
        d=8, m=2, actions="matchings", alpha=0.5, horizon=500, runs=2, algorithms=ALGS
    )
    assert "alpha-regret" in app.plots
    app.run()
    while app.run_model.status == "running":
        app.tick()
    live = app.plots["alpha-regret"]
    assert live.pipe.data is app.run_model.result
    assert app.run_model.result["alpha-AROQ-CMAB"].alpha_regret is not None
    app.dispose()

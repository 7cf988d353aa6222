"""Plots as modules: the board iterates a list of plot modules; a toy plot defined here (one
module's worth of code) appears on the headless board and receives the run's results at its
declared cadence."""

from __future__ import annotations

import holoviews as hv
import numpy as np
from bokeh.document import Document

from dashboard.ui.app import DashboardApp
from dashboard.ui.board import PlotBoard
from dashboard.ui.live import LivePlot
from dashboard.ui.plots import PLOTS, PlotModule


def _toy_plot(result):
    """Final mean regret per algorithm as points (any builder: result -> element)."""
    if result is None:
        return hv.Scatter(([], []), "algorithm_index", "final_regret")
    finals = [float(r.regret.mean(axis=0)[-1]) if r.times.size else 0.0 for r in result.results]
    return hv.Scatter((np.arange(len(finals)), finals), "algorithm_index", "final_regret")


TOY = PlotModule(
    key="toy",
    caption="A plot defined in a test.",
    problems=("cmab",),
    every=3,
    make=lambda ctx: LivePlot("toy", _toy_plot, ctx.result),
)


def test_every_module_declares_a_key_caption_and_problems():
    keys = [m.key for m in PLOTS]
    assert len(set(keys)) == len(keys)
    assert keys[0] == "regret" and PLOTS[0].wide
    for module in PLOTS:
        assert module.problems and set(module.problems) <= {"cmab", "semiparametric"}
        assert module.wide or module.caption


def test_the_board_shows_the_plots_of_the_problem():
    board = PlotBoard()
    board.rebuild(["CUCB"], "cmab", False)
    assert list(board.plots) == ["regret", "timeline", "complexity", "surviving", "wall"]
    board.rebuild(["SBE"], "semiparametric", False)
    assert {"weights", "pac", "shift"} <= set(board.plots)


def test_a_toy_plot_module_appears_on_the_headless_board_and_streams():
    app = DashboardApp(autostart_timer=False, plot_modules=[*PLOTS, TOY])
    app.config.param.update(d=5, m=2, horizon=2000, runs=1, algorithms=["CUCB"], speed="normal")
    root = app.__panel__().get_root(Document())
    assert "toy" in app.plots and "toy-plot" in app.plots["toy"].pane.css_classes
    assert app.plots["toy"].pane in list(app.board.__panel__().select())
    assert any(getattr(m, "name", None) == "toy-plot" for m in root.references())
    app.run()
    toy = app.plots["toy"]
    sent = toy.sent
    for _ in range(6):
        app.tick()
    assert toy.sent - sent in (2, 3)  # every third frame (the last frame always)
    while app.run_model.status == "running":
        app.tick()
    assert toy.pipe.data is app.run_model.result  # the final frame reached it
    assert toy.element.data["final_regret"].iloc[0] > 0
    # it applies to cmab only: gone on the semiparametric board
    app.reset()
    app.config.problem = "semiparametric"
    assert "toy" not in app.plots and "weights" in app.plots
    app.dispose()


def test_an_idle_semiparametric_board_names_its_own_rate_shape():
    """The legend is drawn before any result: it must show the semiparametric rate."""
    board = PlotBoard()
    board.rebuild(["SBE"], "semiparametric", False)
    board.plots["regret"].ensure_rendered(Document())
    labels = [layer.label for layer in board.plots["regret"].element]
    assert "rate shape √(d t log K)" in labels

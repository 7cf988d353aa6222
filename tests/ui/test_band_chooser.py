"""The band chooser (issue 11): one Config parameter whose choices are bands.BANDS gives the
widget, the URL key and its check; each choice makes the live regret (and alpha-regret) plot's
Bokeh sources hold exactly what dashboard/simulation/bands.py computes (sd with ddof = 1), and
"runs" draws R thin NaN-separated lines per algorithm."""

from __future__ import annotations

import numpy as np
import pytest
from bokeh.document import Document

from dashboard.simulation.bands import BANDS, band
from dashboard.simulation.runner import simulate
from dashboard.simulation.specs import make_spec
from dashboard.ui.app import DashboardApp
from dashboard.ui.board import PlotBoard
from dashboard.ui.model import Config
from dashboard.ui.plots.common import BAND_POINTS, _thin
from dashboard.ui.settings import ProblemSettings
from dashboard.ui.urlstate import parse_query, url_keys

ALGS = ["CUCB", "alpha-AROQ-CMAB"]
RUNS = 4


@pytest.fixture(scope="module")
def result():
    spec = make_spec("cmab", d=6, m=2, actions="matchings", alpha=0.5)
    return simulate(spec, ALGS, horizon=600, runs=RUNS, seed=2)


def _split_runs(x: np.ndarray, y: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The NaN-separated traces of a 'runs' source."""
    cut = np.flatnonzero(np.isnan(x))
    return list(zip(np.split(x, cut), np.split(y, cut)))


def test_band_is_one_config_parameter_with_the_widget_and_url_key_derived():
    assert list(Config.param.band.objects) == list(BANDS) and Config().band == "sd"
    assert url_keys()["band"] == "band"
    settings = ProblemSettings(Config())
    assert list(settings.band_select.options.values()) == list(BANDS)
    settings.band_select.value = "ci95"
    assert settings.config.band == "ci95"  # the widget and the parameter are one value
    values, notices = parse_query({"band": "q10-90"}, Config())
    assert values == {"band": "q10-90"} and notices == []
    values, notices = parse_query({"band": "<b>iqr</b>"}, Config())
    assert "band" not in values and len(notices) == 1 and "sd, se, ci95" in notices[0]


@pytest.mark.parametrize("kind", list(BANDS))
def test_each_band_choice_plots_what_bands_py_computes(result, kind):
    board = PlotBoard()
    board.rebuild(ALGS, "cmab", False, None, horizon=600, band=kind)
    for live in board.plots.values():
        live.ensure_rendered(Document())
    board.push(result)
    regret_sources = board.plots["regret"].sources()
    alpha_sources = board.plots["alpha-regret"].sources()
    for k, name in enumerate(ALGS):
        r = result[name]
        b = band(r.regret, kind)
        area, curve, traces = regret_sources[3 * k : 3 * k + 3]
        np.testing.assert_allclose(curve.data["regret"], r.regret.mean(axis=0))
        np.testing.assert_allclose(curve.data["band_lo"], np.maximum(b.lo, 0.0))
        np.testing.assert_allclose(curve.data["band_hi"], b.hi)
        keep = _thin(r.times.size, BAND_POINTS)
        if kind == "runs":
            assert len(area.data["x"]) == 0
            lines = _split_runs(np.asarray(traces.data["t"]), np.asarray(traces.data["regret"]))
            assert len(lines) == RUNS  # R thin lines of this algorithm
            for run, (x, y) in enumerate(lines):
                x, y = x[np.isfinite(x)], y[np.isfinite(x)]
                np.testing.assert_allclose(x, r.times[keep])
                np.testing.assert_allclose(y, r.regret[run, keep])
        else:
            assert len(traces.data["t"]) == 0
            # the band's polygon: upper and lower bounds at the thinned rounds
            assert len(area.data["x"]) == 2 * keep.size <= 2 * (BAND_POINTS + 1)
            np.testing.assert_allclose(
                np.sort(area.data["y"]), np.sort(np.r_[b.hi[keep], np.maximum(b.lo, 0.0)[keep]])
            )
        if kind == "sd":  # ddof = 1, not numpy's default ddof = 0
            half = np.asarray(curve.data["band_hi"]) - np.asarray(curve.data["regret"])
            np.testing.assert_allclose(half, r.regret.std(axis=0, ddof=1), atol=1e-9)
            spread = r.regret.std(axis=0, ddof=0) > 1e-6
            assert spread.any()
            assert (half[spread] > 1.1 * r.regret.std(axis=0, ddof=0)[spread]).all()
    a = result["alpha-AROQ-CMAB"]
    b = band(a.alpha_regret, kind)
    np.testing.assert_allclose(alpha_sources[1].data["band_lo"], b.lo)
    np.testing.assert_allclose(alpha_sources[1].data["band_hi"], b.hi)
    runs_lines = [len(next(iter(s.data.values()))) > 0 for s in alpha_sources]
    assert runs_lines == [kind != "runs", True, kind == "runs", True]
    fig = board.plots["regret"].figure
    assert BANDS[kind] not in fig.title.text  # a short title, never cut on a small screen
    subtitles = [t.text for t in fig.above if getattr(t, "name", "") == "subtitle"]
    assert subtitles == [BANDS[kind]]
    board.close()


def test_the_bands_differ_from_each_other(result):
    his = {k: band(result["CUCB"].regret, k).hi for k in ("sd", "se", "ci95", "q10-90")}
    assert len({tuple(np.round(v[-5:], 9)) for v in his.values()}) == 4


def test_changing_the_band_in_the_app_redraws_the_finished_run():
    app = DashboardApp(autostart_timer=False)
    app.config.param.update(d=6, m=2, horizon=400, runs=3, algorithms=["CUCB", "AROQ-CMAB"])
    app.run()
    while app.run_model.status == "running":
        app.tick()
    res = app.run_model.result
    app.config.band = "runs"
    live = app.plots["regret"]
    live.ensure_rendered(Document())
    traces = live.sources()[2]
    lines = _split_runs(np.asarray(traces.data["t"]), np.asarray(traces.data["regret"]))
    assert len(lines) == 3
    keep = _thin(res["CUCB"].times.size, BAND_POINTS)
    np.testing.assert_allclose(lines[2][1][np.isfinite(lines[2][1])], res["CUCB"].regret[2, keep])
    app.config.band = "se"
    app.plots["regret"].ensure_rendered(Document())
    sources = app.plots["regret"].sources()
    assert len(sources[2].data["t"]) == 0
    b = band(res["CUCB"].regret, "se")
    np.testing.assert_allclose(sources[1].data["band_hi"], b.hi)
    app.dispose()

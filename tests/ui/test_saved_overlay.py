"""Open a saved result and overlay it (issue 10): a file written by ``simulate --save`` or
``sweep --out`` (made here by the CLI and the API in a tmp dir) is fed to the dashboard as the
bytes of an upload; its regret curves appear dashed on the live regret plot with the chosen
band, labelled with the saved seed and horizon; a sweep offers its points; bad files are an
escaped inline notice and leave the plot alone; Clear removes the overlay."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bokeh.document import Document

from dashboard.cli import main
from dashboard.simulation.bands import band
from dashboard.simulation.store import load_experiment
from dashboard.simulation.sweep import make_sweep, run_sweep
from dashboard.ui.app import DashboardApp


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("saved") / "run.jsonl"
    argv = ["simulate", "--problem", "cmab", "--algorithm", "AROQ-CMAB", "--algorithm", "CUCB"]
    argv += ["--d", "6", "--m", "2", "--horizon", "500", "--runs", "3", "--seed", "7"]
    assert main([*argv, "--format", "json", "--save", str(path)]) == 0
    return path.read_bytes()


@pytest.fixture(scope="module")
def saved_sweep(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("saved") / "sweep.jsonl"
    sweep = make_sweep("cmab", ["AROQ-CMAB"], horizon=300, runs=2, seed=1, grid={"d": [5, 7]}, m=2)
    run_sweep(sweep, scheduler="inprocess", out=path)
    return path.read_bytes()


@pytest.fixture
def app():
    a = DashboardApp(autostart_timer=False)
    a.config.param.update(d=6, m=2, horizon=500, runs=2, algorithms=["CUCB", "SROQ-CMAB"])
    yield a
    a.dispose()


def _layers(app) -> list:
    live = app.plots["regret"]
    live.ensure_rendered(Document())
    return list(live.element)


def test_a_saved_run_is_overlaid_dashed_with_the_chosen_band_and_cleared(app, saved_run):
    before = len(_layers(app))
    app.config.band = "ci95"
    assert app.saved_view.load(saved_run, "run.jsonl")
    layers = _layers(app)
    assert len(layers) == before + 2 * 3  # two saved algorithms: area, mean, traces each
    saved = load_experiment(saved_run)
    mean = [el for el in layers if el.label == "AROQ-CMAB (saved: seed 7, T=500)"]
    curve = next(el for el in mean if "band_lo" in [d.name for d in el.vdims])
    assert curve.opts.get().kwargs["line_dash"] == "dashed"
    b = band(saved["AROQ-CMAB"].regret, "ci95")
    np.testing.assert_allclose(curve.dimension_values("regret"), b.mean)
    np.testing.assert_allclose(curve.dimension_values("band_hi"), b.hi)
    assert "Overlaid" in app.saved_view.notice.object and not app.saved_view.clear_button.disabled
    # the overlay follows the band choice and survives a live run's frames
    app.config.band = "runs"
    app.run()
    while app.run_model.status == "running":
        app.tick()
    layers = _layers(app)
    traces = [el for el in layers if el.label == "CUCB (saved: seed 7, T=500)"][2]
    assert np.isnan(traces.dimension_values("regret")).sum() == 3 - 1  # 3 saved runs
    app.saved_view.clear()
    assert len(_layers(app)) == before and app.saved_view.notice.object == ""


def test_a_sweep_file_lets_the_user_pick_the_point(app, saved_sweep):
    assert app.saved_view.load(saved_sweep, "sweep.jsonl")
    select = app.saved_view.point_select
    assert select.visible and list(select.options) == ["d=5", "d=7"]
    labels = {el.label for el in _layers(app)}
    assert "AROQ-CMAB (saved: seed 1, T=300, d=5)" in labels
    select.value = 1
    labels = {el.label for el in _layers(app)}
    assert "AROQ-CMAB (saved: seed 1, T=300, d=7)" in labels
    assert "AROQ-CMAB (saved: seed 1, T=300, d=5)" not in labels


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00\xff\xfe garbage\n", "is not a saved experiment of this dashboard"),
        (json.dumps({"format": "something-else"}).encode() + b"\n", "is not a saved experiment"),
        (b"", "is not a saved experiment"),
    ],
)
def test_bad_files_are_an_escaped_notice_and_keep_the_overlay(app, saved_run, data, message):
    assert app.saved_view.load(saved_run, "run.jsonl")
    n = len(_layers(app))
    assert not app.saved_view.load(data, "<img src=x onerror=alert(1)>.jsonl")
    notice = app.saved_view.notice.object
    assert "Not overlaid" in notice and message.split()[0] in notice
    assert "<img" not in notice and "&#60;img" in notice  # the file name is text, not markup
    assert len(_layers(app)) == n  # the previous overlay stays


def test_a_too_big_file_is_refused_before_parsing(app, saved_run):
    app.saved_view.max_bytes = 100
    assert not app.saved_view.load(saved_run, "run.jsonl")
    notice = app.saved_view.notice.object
    assert "files up to 100 bytes can be opened here" in notice and "dashboard load" in notice


def test_a_truncated_sweep_file_overlays_its_finished_points(app, saved_sweep):
    lines = saved_sweep.split(b"\n")
    cut = b"\n".join(lines[:2]) + b"\n" + lines[2][:50]  # header, one piece, half a line
    assert app.saved_view.load(cut, "cut.jsonl")
    assert [point for point, _ in app.saved_view.entries] == [{"d": 5}]
    assert "AROQ-CMAB (saved: seed 1, T=300, d=5)" in {el.label for el in _layers(app)}

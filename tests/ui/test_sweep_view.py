"""Sweep Viewer, headless: the grid fills as points finish, plots with bands, errors as escaped
notices, the sweep runs in the background (Run returns at once) and Cancel stops it."""

from __future__ import annotations

import threading

import holoviews as hv
import numpy as np
import pytest

from dashboard.simulation import sweep as sweep_mod
from dashboard.ui.sweep_view import SweepView, parse_values, sweep_plot


def _view(**kw):
    args = {
        "problem": "semiparametric",
        "algorithms": ["SBE", "LinUCB"],
        "x_field": "d",
        "x_values": "2, 3",
        "horizon": 150,
        "runs": 2,
    }
    args.update(kw)
    return SweepView(scheduler="inprocess", **args)


def test_parse_values():
    assert parse_values("10, 2.5, 1e3, sine,, ") == [10, 2.5, 1000, "sine"]
    assert parse_values("") == []


def test_run_fills_the_grid_and_plots_bands():
    view = _view(group_field="shift", group_values="none, sine")
    assert view.run()
    view.wait(120)
    assert not view.running and view.progress == 100 and view.status == "done: 4 points"
    res = view.result
    assert res.complete and [r.point for r in res.rows][1] == {"d": 2, "shift": "sine"}
    grid = view._grid.object
    assert grid.count("<tr>") == 5 and "…" not in grid
    plot = view._plot.object
    curves = [e for e in plot if type(e) is hv.Curve]
    areas = [e for e in plot if isinstance(e, hv.Area)]
    assert len(curves) == len(areas) == 4  # 2 algorithms x 2 shifts, each with a band
    assert {c.label for c in curves} == {
        "SBE, shift = none",
        "SBE, shift = sine",
        "LinUCB, shift = none",
        "LinUCB, shift = sine",
    }
    # the plotted mean is the mean final regret over repetitions
    row = res.rows[0]
    sbe = next(c for c in curves if c.label == "SBE, shift = none")
    assert sbe.dimension_values(1)[0] == pytest.approx(row.result["SBE"].final_regret.mean())
    view.metric = "oracle queries"
    assert view._plot.object.opts.get().kwargs["title"] == "oracle queries against d"


def test_queries_against_horizon_have_a_log_axis_and_the_dloglogT_reference():
    view = SweepView(
        scheduler="inprocess",
        problem="cmab",
        algorithms=["AROQ-CMAB"],
        x_field="horizon",
        x_values="100, 300",
        runs=1,
        metric="oracle queries",
    )
    assert view.run()
    view.wait(120)
    plot = sweep_plot(view.result, "horizon", "oracle queries")
    labels = [e.label for e in plot if type(e) is hv.Curve]
    assert labels == ["AROQ-CMAB", "d log log T"]
    assert plot.opts.get().kwargs["logx"] is True


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"x_values": "2, <script>alert(1)</script>"}, "d must be"),
        ({"x_values": ""}, "empty list"),
        ({"x_values": "0, 3"}, "d must be"),
        ({"group_field": "d", "group_values": "2"}, "two different fields"),
    ],
)
def test_invalid_sweeps_show_an_escaped_notice_and_start_nothing(kw, message):
    view = _view(**kw)
    assert view.run() is False
    notice = view._notice.object
    assert message in notice and "<script>" not in notice
    assert view._thread is None and not view.running


def test_run_returns_at_once_and_cancel_stops_the_sweep(monkeypatch):
    gate = threading.Event()
    started = threading.Event()
    real = sweep_mod.run_task

    def gated(unit, reps):
        started.set()
        assert gate.wait(60)
        return real(unit, reps)

    monkeypatch.setattr(sweep_mod, "run_task", gated)
    view = _view(x_values="2, 3, 4")
    assert view.run()  # returns while the first task is still blocked
    assert started.wait(30) and view.running and view.result.rows == []
    assert view.run() is False  # one sweep at a time
    view.cancel()
    gate.set()
    view.wait(60)
    assert not view.running and view.status.startswith("cancelled")
    assert len(view.result.rows) < 3
    assert view._run_button.disabled is False


def test_a_failure_in_the_background_becomes_a_notice(monkeypatch):
    def boom(unit, reps):
        raise ValueError("<b>disk full</b>")

    monkeypatch.setattr(sweep_mod, "run_task", boom)
    view = _view()
    view.run()
    view.wait(30)
    assert view.status == "failed" and "&lt;b&gt;disk full" in view._notice.object


def test_empty_plot_and_problem_switch():
    plot = sweep_plot(None, "d")
    assert isinstance(plot, hv.Overlay)
    view = _view()
    view.problem = "cmab"
    assert "AROQ-CMAB" in view.param.algorithms.objects
    assert "K" not in view.param.x_field.objects and "m" in view.param.x_field.objects
    from bokeh.document import Document

    root = view.__panel__().get_root(Document())  # the whole view builds Bokeh models
    assert root is not None
    assert np.isfinite(view.seed)


def test_open_a_saved_sweep_file(tmp_path):
    from dashboard.simulation import make_spec, simulate
    from dashboard.simulation.store import save_result
    from dashboard.simulation.sweep import make_sweep, run_sweep

    sweep = make_sweep(
        "semiparametric",
        ["SBE"],
        horizon=100,
        runs=2,
        grid={"SBE:c": [1, 2], "K": [4, 6]},
        d=2,
    )
    out = tmp_path / "s.jsonl"
    ref = run_sweep(sweep, scheduler="inprocess", out=out)
    view = _view()
    assert view.open_saved(out.read_bytes(), "s.jsonl")
    assert view.status == "opened s.jsonl: 4 of 4 points"
    curves = [e for e in view._plot.object if type(e) is hv.Curve]
    assert sorted(c.label for c in curves) == ["SBE, K = 4", "SBE, K = 6"]
    assert view.result.rows[3].result["SBE"].regret.tolist() == (
        ref.rows[3].result["SBE"].regret.tolist()
    )
    view.metric = "oracle adaptivity"  # redraws against the file's own axes
    assert view._plot.object.opts.get().kwargs["title"] == "oracle adaptivity against SBE:c"
    single = tmp_path / "one.jsonl"
    save_result(single, simulate(make_spec("semiparametric", d=2, K=4), ["SBE"], 50))
    assert not view.open_saved(single.read_bytes(), "one.jsonl")
    assert "single run" in view._notice.object
    assert not view.open_saved(b"<i>junk</i>\n", "<x>.jsonl")
    assert "&lt;x&gt;" in view._notice.object and "<i>" not in view._notice.object


def test_updates_go_through_the_session_loop_and_stop_when_it_is_gone():
    from test_app import _ServedDoc

    view = _view()
    doc = view._doc = _ServedDoc()
    view._served = True  # as a view built in that served session
    applied = []
    worker = threading.Thread(target=lambda: view._schedule(applied.append, 1))
    worker.start()
    worker.join()
    assert applied == [] and len(doc.queued) == 1  # not applied from the worker thread
    doc.run_queued()
    assert applied == [1]
    doc.session_context.session.destroyed = True  # the tab closed
    view._schedule(applied.append, 2)  # no exception escapes the worker thread
    assert applied == [1] and doc.queued == [] and view._cancel.is_set()

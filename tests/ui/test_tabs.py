"""The main page's tabs, headless: Live run / Sweep / Play exist, Sweep and Play are built only
when first opened, the Sweep tab runs a tiny sweep to completion (in-process and on a real
``distributed.LocalCluster``) with its progress bar, the Play tab plays the Live settings'
problem (m of d arms, one of K) with escaped notices, and ``?tab=`` opens a tab."""

from __future__ import annotations

import pytest
from bokeh.document import Document
from panel.io.location import Location
from panel.io.state import set_curdoc
from ui_text import shown

from dashboard.ui.app import DashboardApp, create_app
from dashboard.ui.sweep_view import SweepView
from dashboard.ui.tabs import MAX_PLAY_ARMS, TABS
from dashboard.ui.urlstate import UrlSync

TINY = {
    "problem": "semiparametric",
    "algorithms": ["SBE", "LinUCB"],
    "x_field": "K",
    "x_values": "3, 4",
    "horizon": 60,
    "runs": 2,
}


def _app(**config) -> DashboardApp:
    app = DashboardApp(autostart_timer=False, sweep_options={"scheduler": "inprocess"})
    if config:
        app.config.param.update(**config)
    return app


def test_three_tabs_and_the_extra_ones_are_built_on_first_open():
    doc = Document()
    with set_curdoc(doc):
        template = create_app(autostart_timer=False)
        template.server_doc(doc)
    app = template.app
    assert app.tabs._names == list(TABS.values())
    assert app.tabs.active == 0 and app.pages.active == "live"
    # page load pays for neither the sweep nor the game
    assert app.pages.sweep is None and app.pages.play is None
    names = {getattr(m, "name", None) for m in doc.models}
    assert "sweep-plot" not in names
    assert app.sidebar.visible  # the Live settings are the sidebar
    app.tabs.active = 1  # a click on "Sweep" in the browser
    assert isinstance(app.pages.sweep.view, SweepView)
    assert not app.sidebar.visible and app.pages._sides["sweep"].visible
    assert app.pages.play is None
    sweep_side = app.pages._sides["sweep"]
    assert sweep_side.select(pn_css("sweep-run-button"))
    app.open_tab("play")
    assert app.pages.play is not None and app.pages.active == "play"
    assert not sweep_side.visible and app.pages._sides["play"].visible
    app.open_tab("sweep")  # built once, kept
    assert app.pages.sweep.view is app.pages.sweep.view
    # the notebook view (the Viewer itself) holds the tabs and renders without a server
    app.__panel__().get_root(Document())


def pn_css(css: str):
    return lambda o: css in (getattr(o, "css_classes", None) or [])


def test_sweep_tab_starts_from_the_live_problem_and_runs_a_tiny_sweep_in_process():
    app = _app(problem="semiparametric", algorithms=["SBE", "BOSE"])
    app.open_tab("sweep")
    view = app.pages.sweep.view
    assert view.problem == "semiparametric" and view.algorithms == ["SBE", "BOSE"]
    view.param.update(**TINY)
    view._run_button.clicks += 1  # the Run sweep button
    assert view.running and not view._cancel_button.disabled
    view.wait(120)
    assert view.status == "done: 2 points" and view.progress == 100 and view._bar.value == 100
    assert view.result.complete and [r.point for r in view.result.rows] == [{"K": 3}, {"K": 4}]
    assert view._grid.object.count("<tr>") == 3 and "…" not in view._grid.object


def test_sweep_tab_runs_on_a_local_cluster_and_cancel_is_wired():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        app = DashboardApp(autostart_timer=False, sweep_options={"client": client})
        app.open_tab("sweep")
        view = app.pages.sweep.view
        view.problem = "semiparametric"  # (its algorithms' options follow the problem)
        view.param.update(**TINY)
        assert view.run()
        view.wait(120)
        assert view.status == "done: 2 points" and view.result.complete
        # the same numbers as in-process
        ref = _app()
        ref.open_tab("sweep")
        ref.pages.sweep.view.problem = "semiparametric"
        ref.pages.sweep.view.param.update(**TINY)
        ref.pages.sweep.view.run()
        ref.pages.sweep.view.wait(120)
        for a, b in zip(view.result.rows, ref.pages.sweep.view.result.rows, strict=True):
            assert a.result["SBE"].final_regret.tolist() == b.result["SBE"].final_regret.tolist()
        # Cancel button -> the view's cancel event; dispose (session end) cancels too
        view._cancel_button.clicks += 1
        assert view._cancel.is_set()
        app.dispose()


def test_play_tab_plays_the_live_cmab_problem_with_an_invalid_choice():
    app = _app(problem="cmab", d=5, m=2, algorithms=["AROQ-CMAB"], seed=4)
    app.open_tab("play")
    play = app.pages.play
    play.rounds = 5
    assert play.new_game()  # New game reads the rounds and the Live settings again
    view = play.view
    g = view.game
    assert (g.problem, g.n_arms, g.horizon, g.algorithms) == ("cmab", 5, 5, ["AROQ-CMAB"])
    assert g.seed == app.config.seed + 1  # the second game: a fresh instance
    assert not play.notice.visible  # the Live settings are played as they are
    assert "d = 5, m = 2" in shown(play.summary)
    view.arms.value = [0]  # one arm is not an m-set of size 2 here
    view.submit.clicks += 1
    assert view.alert.visible and "not an action" in view.notice and g.t == 0
    for _ in range(5):
        assert view.play_round([1, 3])
    assert g.done and view.reveal.visible and "True means" in view.reveal.object
    assert app.pages.play.board.objects == [view.__panel__()]  # the game on show


def test_play_tab_semiparametric_and_the_small_game_when_the_live_one_cannot_be_played():
    app = _app(problem="semiparametric", d=3, K=4, algorithms=["SBE"])
    app.open_tab("play")
    play = app.pages.play
    g = play.view.game
    assert (g.problem, g.n_arms, g.algorithms) == ("semiparametric", 4, ["SBE"])
    assert not play.view.play_round([0, 1]) and "exactly one arm" in play.view.notice
    assert play.view.play_round([2])
    # too many arms to click: a small game of the same problem, and why
    app.config.K = MAX_PLAY_ARMS + 10
    assert play.new_game()
    assert play.view.game.n_arms == 5 and play.notice.visible
    assert f"K = {MAX_PLAY_ARMS + 10} arms" in shown(play.notice)
    # invalid Live settings (m > d): the small cmab game, the reason escaped
    app.config.param.update(problem="cmab", d=4, m=6)
    assert app.config.errors
    assert play.new_game() and play.view.game.n_arms == 6
    assert "cannot run" in shown(play.notice)


def test_tab_from_the_url_and_back_with_a_notice_for_a_bad_value():
    app = _app()
    link = Location(search="?tab=play&d=6")
    UrlSync(app.config, link, app.pages.url_notices(link, app.controls))
    assert app.pages.active == "play" and app.config.d == 6 and not app.url_notice.visible
    app.open_tab("sweep")
    assert "tab=sweep" in link.search and "d=6" in link.search
    other = _app()
    bad = Location(search="?tab=<img src=x onerror=alert(1)>")
    UrlSync(other.config, bad, other.pages.url_notices(bad, other.controls))
    assert other.pages.active == "live" and other.url_notice.visible
    assert "Ignored tab=" in shown(other.url_notice) and "<img" not in other.url_notice.object
    assert other.pages.apply_query({"tab": "LIVE"}) == []

"""The Panel app without a server: building, streaming through the Pipes with fake ticks,
errors as alerts, per-session isolation, lessons, CSV download, memory over Run/Reset."""

from __future__ import annotations

import collections
import gc

import holoviews as hv
import numpy as np
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.model import Model
from panel.io.location import Location
from ui_text import shown

from dashboard.simulation import Simulation
from dashboard.ui import plots
from dashboard.ui.app import DashboardApp, create_app
from dashboard.ui.urlstate import UrlSync

HOOKS = [
    "run-button",
    "pause-button",
    "step-button",
    "reset-button",
    "progress-text",
    "problem-select",
    "algorithm-select",
    "error-alert",
    "lesson-select",
    "load-preset-button",
    "download-csv",
]


def small_app(**config) -> DashboardApp:
    app = DashboardApp(autostart_timer=False, frame_seconds=0.02)
    app.config.param.update(**{"d": 6, "m": 2, "horizon": 3000, "runs": 2, **config})
    return app


def with_class(layout, css: str) -> list:
    return [o for o in layout.select() if css in (getattr(o, "css_classes", None) or [])]


def test_create_app_builds_a_template_with_the_test_hooks():
    template = create_app(autostart_timer=False)
    assert isinstance(template, pn.template.BootstrapTemplate)
    app = template.app
    assert isinstance(app, DashboardApp)
    # the hooks as the browser sees them: exactly one rendered Bokeh model carries each
    # (the progress line is a plain Bokeh Div, not a Panel component)
    rendered = app.__panel__().get_root(Document()).references()  # sidebar and main area
    for css in HOOKS:
        carriers = [m for m in rendered if css in (getattr(m, "css_classes", None) or [])]
        assert len(carriers) == 1, css
    assert with_class(app.main, "regret-plot")
    # a notebook displays the Viewer itself: a plain layout, not a template
    view = app.__panel__()
    assert isinstance(view, pn.layout.ListPanel)
    view.get_root(Document())  # renders without a server


def test_fake_ticks_stream_into_the_pipes_and_sources():
    app = small_app()
    app.__panel__().get_root(Document())  # plots render when first shown
    app.run()
    regret = app.plots["regret"]
    lengths, times = [], []
    for _ in range(6):
        app.tick()
        times.append(regret.pipe.data.t)
        lengths.append(len(regret.sources()[1].data["t"]))
    assert times == sorted(times) and times[-1] > times[0]
    assert lengths[-1] > lengths[0]
    assert regret.renders == 1  # updated in place, not re-rendered
    assert app.progress_text.value.startswith(f"<b>t = {app.run_model.t:,} / 3,000</b>")
    while app.run_model.status == "running":
        app.tick()
    assert app.run_model.status == "done"
    # the renderer / source handles documented for browser tests
    curve = regret.hv_plot.state.select_one({"name": "regret-CUCB"})
    assert curve is not None and curve.data_source.data["t"][-1] == 3000
    assert not app.download.disabled


def test_step_pause_and_reset_buttons():
    app = small_app()
    app.step_button.clicks += 1
    assert app.run_model.status == "paused" and app.run_model.t > 0
    assert app.pause_button.label == "Resume"
    app.pause_button.clicks += 1
    assert app.run_model.status == "running" and app.pause_button.label == "Pause"
    app.reset_button.clicks += 1
    assert app.run_model.status == "idle" and app.run_model.t == 0
    assert app.plots["regret"].pipe.data is None


def test_exception_inside_a_run_becomes_a_danger_alert(monkeypatch):
    app = small_app()
    app.run()

    def boom(self, target):
        raise ZeroDivisionError("division by zero in the oracle")

    monkeypatch.setattr("dashboard.simulation.runner.Simulation.advance_to", boom)
    app.tick()
    assert app.run_model.status == "error"
    assert app.alert.visible and app.alert.alert_type == "danger"
    assert "error-alert" in app.alert.css_classes
    text = shown(app.alert)
    assert text.startswith("The run stopped:") and "Traceback" not in text
    assert "\n" not in app.alert.object
    assert app.tick() is False  # the run stopped
    monkeypatch.undo()
    app.run()  # a new run clears the error
    assert app.run_model.status == "running" and not app.alert.visible


def test_invalid_configuration_disables_run_and_explains():
    app = small_app()
    assert not app.run_button.disabled
    app.config.m = 7
    assert app.run_button.disabled
    assert app.alert.visible and app.alert.alert_type == "warning"
    assert "m must be at most d" in shown(app.alert)
    app.algorithm_select.value = []
    assert "at least one algorithm" in shown(app.alert)
    app.config.m = 2
    app.algorithm_select.value = ["SROQ-CMAB"]
    assert not app.run_button.disabled and not app.alert.visible


def test_a_preset_naming_an_algorithm_not_offered_is_an_escaped_alert(monkeypatch):
    """A preset is applied whole or not at all: a name the problem does not offer (markup
    included) is the page's alert, as plain text, and the picker keeps its options."""
    app = small_app()
    lesson = app.lessons_view.lessons[0]
    app.lessons_view.select.value = lesson.slug
    bad = {"problem": "cmab", "d": 7, "algorithms": ["<img src=x onerror=alert(1)>"]}
    monkeypatch.setattr(type(lesson), "presets", property(lambda self: {"": bad}))
    before = app.config.preset()
    assert app.load_lesson_preset() is False
    assert app.alert.visible and app.alert.alert_type == "danger"
    assert "<img" not in app.alert.object  # escaped Markdown source
    assert "Unknown algorithm '<img src=x onerror=alert(1)>'" in shown(app.alert)
    assert app.config.preset() == before
    assert list(app.algorithm_select.options) == app.config.algorithm_options
    app.dispose()


def test_the_rendered_picker_never_passes_through_an_empty_or_stale_choice():
    """The picker is ``MultiChoice.from_param(Config.algorithms)``.  A rendered MultiChoice
    drops the values missing from new options and writes that back, so a problem or reward
    switch must never show it the new options before the new value: no empty choice, no
    other problem's algorithm with Run enabled (issue 12's half-applied link)."""
    app = small_app()
    c, picker = app.config, app.algorithm_select
    picker.get_root(Document())  # a Bokeh model exists: Panel filters on options
    seen, shown_values = [], []

    def record(*_):
        run = not app.run_button.disabled
        seen.append((c.problem, c.reward, list(c.algorithms), run))

    c.param.watch(record, ["algorithms", "errors", "problem", "reward"])
    picker.param.watch(lambda e: shown_values.append(list(e.new)), "value")
    steps = [
        lambda: setattr(app.problem_select, "value", "semiparametric"),
        lambda: setattr(picker, "value", ["LinUCB"]),
        lambda: setattr(app.problem_select, "value", "cmab"),
        lambda: c.param.update(reward="general"),
        lambda: c.param.update(problem="semiparametric", algorithms=["sbe", "BOSE"]),
        lambda: c.apply_preset({"problem": "cmab", "reward": "linear", "algorithms": ["CUCB"]}),
        lambda: UrlSync(c, Location(search='?problem=semiparametric&algorithms=["SP-TS"]'), print),
        lambda: UrlSync(c, Location(search="?reward=covariance&problem=cmab"), print),
    ]
    for step in steps:
        step()
        offer = c.options_for(c.problem, c.reward)
        assert c.algorithms and set(c.algorithms) <= set(offer) and c.valid, c.errors
        assert list(picker.options) == offer == list(c.param.algorithms.objects)
        assert picker.value == c.algorithms and not app.run_button.disabled
        for model, _parent in picker._models.values():  # what the browser is sent
            assert list(model.options) == offer and list(model.value) == c.algorithms
    assert c.problem == "cmab" and c.algorithms == ["OLS-UCB-C", "AROQ-C-CMAB", "SROQ-C-CMAB"]
    assert [] not in shown_values
    for problem, reward, algorithms, run in seen:
        assert algorithms, "an empty choice was written back"
        assert not run or set(algorithms) <= set(c.options_for(problem, reward))
    app.dispose()


def test_problem_widget_adapts_sidebar_and_algorithm_options():
    app = small_app()
    assert app.cmab_widgets.visible and not app.sp_widgets.visible
    app.problem_select.value = "semiparametric"
    assert app.sp_widgets.visible and not app.cmab_widgets.visible
    assert app.algorithm_select.value == ["SBE", "BOSE", "SP-TS", "LinUCB"]
    assert "CUCB" not in app.algorithm_select.options
    app.config.param.update(K=5, d=3, horizon=500)
    app.run()
    app.plots["shift"].ensure_rendered()
    assert {"weights", "shift", "pac"} <= set(app.plots)
    for _ in range(3):
        app.tick()
    assert len(app.plots["shift"].sources()[0].data["nu"]) > 0


def test_two_apps_do_not_share_state():
    first, second = small_app(), small_app()
    first.config.d = 9
    assert second.config.d == 6
    first.run()
    first.tick()
    assert second.run_model.status == "idle" and second.run_model.sim is None
    assert first.plots["regret"].pipe is not second.plots["regret"].pipe
    assert first.run_model._lock is not second.run_model._lock


def test_lesson_select_shows_markdown_and_loads_preset():
    app = small_app()
    if len(app.lesson_select.options) < 2:
        pytest.skip("no lessons available")
    assert app.load_preset_button.disabled and not app.lesson_column.visible
    slug = list(app.lesson_select.options.values())[-1]
    app.lesson_select.value = slug
    lesson = next(le for le in app._lessons if le.slug == slug)
    assert app.lesson_column.visible and not app.load_preset_button.disabled
    assert lesson.title in app.lesson_pane.object
    app.load_preset_button.clicks += 1
    for key, value in lesson.preset.items():
        got = getattr(app.config, key)
        assert (got == value) or (str(got).lower() == str(value).lower()) or key == "algorithms"
    assert app.config.errors == []


def test_csv_download_names_problem_and_seed():
    app = small_app(seed=4)
    assert app.download.filename == "bandit-cmab-seed4.csv"
    app.run()
    app.tick()
    csv = app.download.callback().getvalue()  # what the download button serves
    assert csv.startswith("algorithm,run,t,cumulative_regret")
    assert csv == app.run_model.result.to_csv()
    app.config.seed = 5
    assert app.download.filename == "bandit-cmab-seed5.csv"


def test_dispose_stops_the_run():
    app = small_app()
    app.run()
    app.dispose()
    assert app.run_model.sim is None and app.tick() is False


def live_objects() -> collections.Counter:
    gc.collect()
    return collections.Counter(
        type(o).__name__ for o in gc.get_objects() if isinstance(o, (Model, Simulation))
    )


def test_run_reset_cycles_of_the_app_leak_no_models_or_simulations():
    """Counting live objects is exact (tracemalloc over the HoloViews rendering is slow;
    test_model.py measures bytes over 20 cycles of the run model with tracemalloc)."""
    app = small_app(horizon=5000)
    app.__panel__().get_root(Document())

    def cycle():
        app.run()
        app.tick()
        # a full re-render: the fallback when a layer structure changes (PAC's first estimate)
        live = app.plots["surviving"]
        live._render(live.builder(live.pipe.data))
        app.reset()

    for _ in range(2):
        cycle()
    before = live_objects()
    for _ in range(6):
        cycle()
    after = live_objects()
    grown = {k: after[k] - before[k] for k in after if after[k] > before[k]}
    assert grown == {}, grown
    assert app.plots["surviving"].renders > 6  # really re-rendered each cycle


def test_configuration_round_trips_through_the_url():
    from panel.io.location import Location

    link = Location(search='?problem=semiparametric&d=4&K=12&algorithms=["SBE","LinUCB"]&seed=3')
    app = small_app()
    UrlSync(app.config, link, app.show_url_notices)
    c = app.config
    assert (c.problem, c.d, c.K, c.algorithms, c.seed) == (
        "semiparametric",
        4,
        12,
        ["SBE", "LinUCB"],
        3,
    )
    assert app.algorithm_select.value == ["SBE", "LinUCB"]
    c.horizon = 50_000
    assert "horizon=50000" in link.search
    # a link with a bad value leaves the valid configuration untouched
    other = small_app()
    UrlSync(other.config, Location(search="?K=1&d=5"), other.show_url_notices)
    assert other.config.K == 10 and other.config.d == 5  # key by key
    assert other.url_notice.visible and "Ignored K='1'" in shown(other.url_notice)


# ---------------------------------------------------------------------------- one click to a lesson
def test_welcome_card_starts_lesson_one_in_one_click():
    app = DashboardApp(autostart_timer=False, frame_seconds=0.02)
    if not app._lessons:
        pytest.skip("no lessons available")
    first = app._lessons[0]
    assert app.welcome.visible and "welcome-card" in app.welcome.css_classes
    (button,) = with_class(app.main, "start-lesson-button")
    assert button is app.start_lesson_button and button.label == f"Start lesson {first.number} ▶"
    assert len(with_class(app.main, "lesson-start-button")) == len(app._lessons)
    assert app.run_model.status == "idle" and not app.lesson_column.visible

    button.clicks += 1  # the one click
    assert app.lesson_select.value == first.slug and app.lesson_column.visible
    assert first.title in app.lesson_pane.object
    for key, value in first.preset.items():
        got = getattr(app.config, key)
        assert str(got).lower() == str(value).lower() or key == "algorithms", key
    assert app.run_model.status == "running"
    assert not app.welcome.visible  # the card gives way to the plots
    app.tick()
    assert app.run_model.t > 0


def test_each_lesson_button_loads_its_own_lesson():
    app = small_app()
    if len(app._lessons) < 2:
        pytest.skip("not enough lessons")
    last = app._lessons[-1]
    app.lesson_buttons[last.number].clicks += 1
    assert app.lesson_select.value == last.slug
    assert app.config.problem == last.preset["problem"]
    assert app.run_model.status == "running"
    assert [r.algorithm for r in app.run_model.result.results] == app.config.algorithms
    app.reset()
    assert not app.welcome.visible  # the lesson is still open beside the plots
    app.lesson_select.value = ""
    assert app.welcome.visible  # nothing has run, no lesson open: welcome again


@pytest.mark.parametrize("autorun", ["", "1"])
def test_lesson_query_selects_lesson_applies_preset_and_optionally_runs(autorun):
    app = small_app()
    if not app._lessons:
        pytest.skip("no lessons available")
    lesson = app._lessons[-1]
    query = {"lesson": str(lesson.number)}
    if autorun:
        query["autorun"] = autorun
    app.apply_query(query)
    assert app.lesson_select.value == lesson.slug and app.lesson_column.visible
    assert app.config.problem == lesson.preset["problem"]
    assert app.run_model.status == ("running" if autorun else "idle")


def test_lesson_query_for_a_missing_lesson_explains_and_changes_nothing():
    app = small_app()
    before = app.config.preset()
    app.apply_query({"lesson": "99", "autorun": "1"})
    assert app.alert.visible and "no lesson '99'" in shown(app.alert)
    assert app.config.preset() == before and app.run_model.status == "idle"
    app.apply_query({})  # no lesson key: nothing happens
    assert app.lesson_select.value == ""


# ---------------------------------------------------------------------------- speed (no timing)
def test_run_shows_a_first_frame_at_once_for_a_long_horizon():
    """T = 10^5: Run itself simulates a first short frame, the first tick adds more."""
    app = DashboardApp(autostart_timer=False, frame_seconds=0.02, first_frame_seconds=0.01)
    app.config.param.update(d=6, m=2, horizon=100_000, runs=2)
    app.__panel__().get_root(Document())
    app.run()
    regret = app.plots["regret"]
    first = app.run_model.t
    assert first > 0 and regret.pipe.data.t == first  # data before any tick
    source = regret.hv_plot.state.select_one({"name": "regret-CUCB"}).data_source
    assert len(source.data["t"]) > 0
    assert app.tick() and app.run_model.t > first
    assert source.data["t"][-1] == regret.pipe.data.results[0].times[-1]
    assert app.run_model.status == "running" and app.run_model.t < 100_000


def test_frame_budget_leaves_room_for_the_plot_update():
    app = DashboardApp(autostart_timer=False, frame_seconds=0.06, frame_target=0.09)
    assert app.frame_budget() == 0.06  # nothing measured yet
    app._overhead = 0.05
    assert app.frame_budget() == pytest.approx(0.04)
    app._overhead = 1.0
    assert app.frame_budget() == 0.01  # never starves the simulation


def test_event_plots_update_in_place_at_new_epochs_and_phases():
    app = small_app(problem="semiparametric", d=3, K=8, horizon=4000, algorithms=["SBE"])
    app.__panel__().get_root(Document())
    app.run()
    while app.run_model.status == "running":
        app.tick()
    phases = [e for e in app.run_model.result.results[0].events[0] if e.kind == "phase"]
    assert len(phases) >= 2
    for key in ("surviving", "weights", "wall"):
        live = app.plots[key]
        assert live.renders == 1, key  # new epochs / phases patched the sources, no re-render
    weights = app.plots["weights"]
    assert weights.figure.title.text == plots.design_weights_title(app.run_model.result)
    total = sum(sum(s.data["p"]) for s in weights.sources())
    assert total == pytest.approx(1.0)
    surviving = app.plots["surviving"]
    cells = sum(int(np.isfinite(s.data["arm"]).sum()) for s in surviving.sources())
    assert cells == 8 * len(phases)
    y_range = surviving.figure.y_range
    assert (y_range.start, y_range.end) == (-0.5, 7.5)  # exactly the 8 arms' cells
    assert surviving.figure.x_range.end == pytest.approx(
        phases[-1].data.get("phase", len(phases)) + 0.5
    )


# ---------------------------------------------------------------------------- algorithm constants
def test_constants_card_follows_the_chosen_algorithms():
    app = small_app()
    (card,) = with_class(app.sidebar, "constants-card")
    assert card.collapsed and card.title == "Algorithm constants"
    assert set(app._constant_widgets) == {
        ("CUCB", "C"),
        ("AROQ-CMAB", "C"),
        ("AROQ-CMAB", "threshold_scale"),
        ("SROQ-CMAB", "C"),
        ("SROQ-CMAB", "M"),
        ("SROQ-CMAB", "grid"),
        ("SROQ-CMAB", "lcb_query"),
    }
    assert with_class(app.sidebar, "constant-SROQ-CMAB-grid")
    app.config.problem = "semiparametric"
    assert ("SBE", "n_rule") in app._constant_widgets and ("CUCB", "C") not in app._constant_widgets


def test_constant_widgets_set_the_run_and_invalid_values_disable_run():
    app = small_app(algorithms=["SROQ-CMAB"])
    app._constant_widgets[("SROQ-CMAB", "M")].value = 2
    assert app.config.constants == {"SROQ-CMAB": {"M": 2}}
    app.run()
    assert app.run_model.sim.groups[0].policies[0].M == 2
    app.reset()

    widget = app._constant_widgets[("SROQ-CMAB", "C")]
    widget.value = -1.0
    assert app.run_button.disabled
    assert app.constants_alert.visible and "C must be in [0.001, 1000]" in shown(
        app.constants_alert
    )
    assert not app.constants_card.collapsed  # the problem is shown where it was made
    assert app.alert.visible and "C must be in [0.001, 1000]" in shown(app.alert)
    widget.value = 1.5  # back to the default
    assert not app.run_button.disabled and not app.constants_alert.visible
    assert app.config.constants == {"SROQ-CMAB": {"M": 2}}
    app.constants_reset.clicks += 1
    assert app.config.constants is None
    assert app._constant_widgets[("SROQ-CMAB", "M")].value is None


def test_constants_round_trip_through_the_url_only_when_changed():
    from panel.io.location import Location

    app = small_app()
    link = Location(search="?seed=2")
    UrlSync(app.config, link, app.show_url_notices)
    assert "constants" not in link.search  # defaults stay out of the link
    app._constant_widgets[("SROQ-CMAB", "grid")].value = "paper"
    assert "constants=" in link.search
    other = small_app()
    UrlSync(other.config, Location(search=link.search), other.show_url_notices)
    assert other.config.constants == {"SROQ-CMAB": {"grid": "paper"}}
    assert other._constant_widgets[("SROQ-CMAB", "grid")].value == "paper"


def test_a_lesson_starts_from_the_default_constants():
    app = small_app()
    if not app._lessons:
        pytest.skip("no lessons available")
    app.config.set_constant("SROQ-CMAB", "M", 2)
    app.start_lesson(app._lessons[0].number)
    assert app.config.constants is None


def test_idle_progress_follows_the_horizon():
    app = small_app()
    assert app.progress_text.value.startswith("<b>t = 0 / 3,000</b>")
    app.config.horizon = 5000
    assert app.progress_text.value.startswith("<b>t = 0 / 5,000</b>")


def _regret_labels(app) -> list[str]:
    """Labels of the mean curves of the regret plot on show (its legend entries)."""
    app.plots["regret"].ensure_rendered()  # plots render lazily, when first shown
    element = app.plots["regret"].element
    return sorted(
        el.label
        for el in element.values()
        if type(el) is hv.Curve
        and not el.label.startswith("rate shape")
        and "band_lo" in [d.name for d in el.vdims]  # the mean curve, not the run traces
    )


def test_idle_problem_change_draws_the_new_problems_plots_at_once():
    app = DashboardApp(autostart_timer=False)
    assert "weights" not in app.plots
    builds = []
    build = app._build_plots
    app._build_plots = lambda: (builds.append(app.config.problem), build())
    app.config.problem = "semiparametric"
    # the DEO weights, PAC and shift plots are there before any Run, with the new legend
    assert {"weights", "pac", "shift"} <= set(app.plots)
    assert _regret_labels(app) == sorted(app.config.algorithms)
    assert set(app.panes.values()) <= set(app.plot_area.select(pn.pane.PaneBase))
    assert not app.notice.visible  # nothing on screen is out of date
    # one rebuild per problem change, not one per intermediate algorithm list
    assert builds == ["semiparametric"]
    app.config.algorithms = ["SBE"]
    assert _regret_labels(app) == ["SBE"]
    app.config.problem = "cmab"
    assert "weights" not in app.plots
    assert _regret_labels(app) == sorted(app.config.algorithms)
    assert not app.notice.visible


def test_problem_change_after_a_run_keeps_its_plots_and_says_so():
    app = DashboardApp(autostart_timer=False)
    app.config.param.update(horizon=300, runs=1)
    app.run()
    while app.run_model.status == "running":
        app.tick()
    regret = app.plots["regret"]
    app.config.problem = "semiparametric"
    assert app.plots["regret"] is regret and "weights" not in app.plots  # the run stays
    assert app.notice.visible and "press Run" in shown(app.notice)
    app.reset()  # Reset clears the run: the new problem's plots, no notice
    assert "weights" in app.plots and not app.notice.visible


# ---------------------------------------------------------------------------- threads, closed pages
class _Session:
    def __init__(self, connections: int = 1) -> None:
        self.connection_count = connections
        self.destroyed = False


class _Context:
    def __init__(self, session: _Session) -> None:
        self.session = session


class _ServedDoc:
    """Stands in for a served session's document: records next-tick callbacks."""

    def __init__(self, connections: int = 1) -> None:
        self.session_context = _Context(_Session(connections))
        self.queued: list = []

    def add_next_tick_callback(self, callback) -> None:
        self.queued.append(callback)

    def run_queued(self) -> None:
        """Run the next-tick callbacks as the server's event loop would: in order, on a
        running loop, holding the lock (the stand-in session has no ``_pending_writes``)."""
        import asyncio

        async def loop() -> None:
            while self.queued:
                self.queued.pop(0)()

        asyncio.run(loop())


def _in_worker_thread(fn) -> None:
    import threading

    errors: list[BaseException] = []

    def target() -> None:
        try:
            fn()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(60)
    assert not errors, errors


def test_worker_thread_changes_the_document_only_in_a_next_tick_callback():
    # generous frame budgets: every frame simulates some rounds even on a loaded machine
    app = DashboardApp(autostart_timer=False, frame_seconds=0.3, first_frame_seconds=0.3)
    app.config.param.update(d=6, m=2, horizon=1_000_000, runs=2)  # never done in 0.3 s
    app.__panel__().get_root(Document())
    doc = _ServedDoc()
    app._doc = doc
    progress = app.progress_text.value
    _in_worker_thread(app.run)  # the Run handler on a --num-threads worker
    assert app.run_model.status == "running"
    regret = app.plots["regret"]
    assert regret.pipe.data is None  # nothing reached the plots (or their Range1d) yet
    assert app.progress_text.value == progress  # nor the progress line (a Bokeh Div)
    # the plots' first frame and one status update (however many status changes)
    assert len(doc.queued) == 2
    doc.run_queued()  # the event loop runs them, holding the document lock
    assert regret.pipe.data is not None and app.x_range.end == 1_000_000
    assert "running" in app.progress_text.value
    t_shown = regret.pipe.data.t
    _in_worker_thread(app.tick)
    assert regret.pipe.data.t == t_shown  # the frame is simulated, not yet shown
    progress = app.progress_text.value
    assert len(doc.queued) == 1
    doc.run_queued()
    assert regret.pipe.data.t == app.run_model.t > t_shown
    assert app.progress_text.value != progress  # the status arrives with its data
    app.dispose()


def test_a_closed_pages_tick_timer_stops():
    app = DashboardApp(autostart_timer=True, period_ms=10_000)
    app.config.param.update(d=6, m=2, horizon=10**6, runs=1)
    app.run()
    assert app._callback is not None and app._callback.running
    app._doc = _ServedDoc(connections=0)  # the browser tab closed
    assert app.tick() is False
    assert not app._callback.running  # no more callbacks for a page nobody sees
    app.dispose()


def test_no_frames_are_pushed_to_a_page_whose_socket_closed():
    app = small_app()
    app.run()
    t = app.run_model.t
    pushed = app.plots["regret"].sent
    app._doc = _ServedDoc(connections=0)  # the browser tab closed; the session lives on
    for _ in range(3):
        assert app.tick() is False
    assert app.run_model.t == t and app.plots["regret"].sent == pushed
    app._doc.session_context.session.connection_count = 1  # the page reconnected
    assert app.tick() is True and app.run_model.t > t
    app.dispose()


class _Stream:
    def __init__(self) -> None:
        self.busy = False

    def writing(self) -> bool:
        return self.busy


def _conn(stream: _Stream):
    class WS:
        pass

    class Socket:
        pass

    class Conn:
        pass

    ws, sock, conn = WS(), Socket(), Conn()
    ws.stream, sock.ws_connection, conn._socket = stream, ws, sock
    return conn


def test_no_frame_is_written_while_bokeh_writes_its_own_reply_to_the_page():
    import asyncio

    from tornado.locks import Lock

    app = small_app()
    app.run()
    conn = _conn(_Stream())
    conn._socket.write_lock = Lock()
    doc = _ServedDoc()
    doc.session_context.session._subscribed_connections = {conn}
    app._doc = doc
    t = app.run_model.t
    results: list[bool] = []

    async def reply_in_progress() -> None:
        with await conn._socket.write_lock.acquire():  # Bokeh mid-way through an OK reply
            results.extend(app.tick() for _ in range(3))

    asyncio.run(reply_in_progress())
    assert results == [False, False, False] and app.run_model.t == t
    assert app.tick() is True and app.run_model.t > t  # the reply is out: frames again
    app.dispose()


def test_a_page_that_has_not_taken_the_last_frame_gets_no_new_one():
    app = small_app()
    app.run()
    stream = _Stream()
    doc = _ServedDoc()
    doc.session_context.session._subscribed_connections = {_conn(stream)}
    app._doc = doc
    stream.busy = True  # the browser is still reading the previous frame
    t, pushed = app.run_model.t, app.plots["regret"].sent
    for _ in range(3):
        assert app.tick() is False
    assert app.run_model.t == t and app.plots["regret"].sent == pushed
    stream.busy = False  # it caught up
    assert app.tick() is True and app.run_model.t > t
    app.dispose()


def test_two_dashboards_render_into_two_documents_of_one_process():
    # a notebook cell run twice (or two cells showing the dashboard): each display is its own
    # Bokeh document, and a Bokeh model shared between plots of both (a module-level tick
    # formatter) made the second fail with "Models must be owned by only a single document"
    for _ in range(2):
        app = small_app(horizon=500, runs=1)
        doc = Document()
        doc.add_root(app.__panel__().get_root(doc))
        app.run()
        assert app.tick() in (True, False) and app.run_model.t > 0
        app.dispose()

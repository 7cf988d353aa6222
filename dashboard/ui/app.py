"""The live dashboard: small Viewers composed into one page, and the template.

:class:`DashboardApp` only composes: :class:`~dashboard.ui.settings.ProblemSettings` (the
sidebar's widgets, bound to :class:`~dashboard.ui.model.Config` with ``from_param``),
:class:`~dashboard.ui.constants.ConstantsEditor`, :class:`~dashboard.ui.controls.RunControls`
(buttons, progress, alerts, notices, download; the buttons, speed and progress shown in the
:class:`~dashboard.ui.toolbar.RunToolbar` at the top of the main area, with present mode,
the theme switch, the keys, the PNG / SVG export and the run report),
:class:`~dashboard.ui.lesson_view.LessonPane`
(lesson chooser, text and welcome card) and :class:`~dashboard.ui.board.PlotBoard` (the plot
modules of ``dashboard/ui/plots/``) into the "Live run" tab of
:class:`~dashboard.ui.tabs.PageTabs` (beside the Sweep and Play tabs, built on first open),
and runs the stream between the :class:`~dashboard.ui.model.RunModel` and the board.  It
works on its own in a notebook (``pn.extension(); DashboardApp()``); :func:`create_app`
builds a fresh one per browser session (nothing mutable at module level) in a
``BootstrapTemplate``; ``dashboard/main.py`` serves it.

Streaming: Run starts a periodic callback (every ``period_ms``) that calls
:meth:`DashboardApp.tick`: the run model advances the simulation for about ``frame_seconds``
and the board's live plots receive the snapshot inside ``pn.io.hold()`` (one batched message
per frame).  Overlapping ticks are skipped (lock); nothing is pushed to a page whose socket
closed; a worker thread changes the document only through a next-tick callback
(:mod:`dashboard.ui.document`).

Stable hooks for browser tests (CSS classes): see the Viewers' modules; every plot pane
carries a CSS class and name (``regret-plot``, ``timeline-plot``, ...); the regret plot's mean
curves are Bokeh ``GlyphRenderer``\\ s named ``regret-<algorithm>`` whose ``data_source`` holds
the columns ``t`` and ``regret`` (find them among the renderers of the newest figure named
``regret-plot``: BokehJS keeps replaced figures in its document, see docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import panel as pn
import param

from . import document
from .app_actions import AppActions
from .board import PlotBoard
from .constants import ConstantsEditor
from .controls import RunControls
from .frame_ack import FrameAck
from .frame_turns import frame_timer
from .keys import PAGE_CSS
from .lesson_view import LessonPane
from .model import Config, RunModel
from .pacing import PACER
from .patch_protocol import use_fast_patches
from .plots import PlotModule
from .saved_view import SavedOverlay
from .server import (
    guard_panel_query_parser,
    quiet_closed_connections,
    serve_panel_css_locally,
    session_query,
)
from .settings import ProblemSettings
from .tabs import PageTabs, live_parts
from .template import page_template
from .theme import current_theme
from .toolbar import RunToolbar
from .urlstate import UrlSync, sync_flag, truthy, url_keys
from .ws_frames import coalesce_panel_writes

__all__ = ["URL_PARAMETERS", "DashboardApp", "create_app"]

#: Configuration parameters kept in the URL (parameter name -> query key): Config's own
#: parameters (see :func:`dashboard.ui.urlstate.url_keys`), read key by key with a notice per
#: refused key by :class:`~dashboard.ui.urlstate.UrlSync`.
URL_PARAMETERS: dict[str, str] = url_keys(Config)

#: Page CSS: projector-sized widgets (Bokeh widgets read ``--bokeh-font-size`` through their
#: shadow roots; custom properties inherit), Markdown at 15px.
_CSS = """
:root { --bokeh-font-size: 15px; }
.bk-panel-models-markup-HTML, .markdown { font-size: 15px; }
"""

#: Names kept on the app for its components' widgets (tests, notebooks): name -> (part, attr).
_PARTS: dict[str, tuple[str, str]] = {
    **{
        n: ("settings", n)
        for n in "problem_select d_input cmab_widgets sp_widgets algorithm_select horizon_input "
        "runs_input seed_input speed_select log_toggle band_select".split()
    },
    **{
        n: ("controls", n)
        for n in "run_button pause_button step_button reset_button progress_text "
        "alert url_notice notice download show_url_notices".split()
    },
    "constants_card": ("constants", "card"),
    "constants_alert": ("constants", "alert"),
    "constants_reset": ("constants", "reset_button"),
    "_constant_widgets": ("constants", "widgets"),
    "lesson_select": ("lessons_view", "select"),
    "load_preset_button": ("lessons_view", "preset_button"),
    "lesson_pane": ("lessons_view", "text"),
    "lesson_column": ("lessons_view", "column"),
    "welcome": ("lessons_view", "welcome"),
    "start_lesson_button": ("lessons_view", "start_button"),
    "lesson_buttons": ("lessons_view", "buttons"),
    "_lessons": ("lessons_view", "lessons"),
    "plots": ("board", "plots"),
    "panes": ("board", "panes"),
    "x_range": ("board", "x_range"),
    "tabs": ("pages", "tabs"),
    "open_tab": ("pages", "open"),
    **{
        n: ("toolbar", n)
        for n in "present_button theme_button keys_button png_button svg_button "
        "report_download keys".split()
    },
}


class DashboardApp(AppActions, pn.viewable.Viewer):
    """The dashboard component: sidebar controls, live plots and lessons in the Live tab,
    beside the Sweep and Play tabs (:class:`~dashboard.ui.tabs.PageTabs`).

    Parameters
    ----------
    config : Config, optional
        The configuration model (a new one by default).
    autostart_timer : bool
        Start a periodic callback on Run (``False`` in headless tests, which call
        :meth:`tick` themselves).
    period_ms : int
        Period of the streaming callback in milliseconds (~10 frames per second).
    frame_seconds : float
        Largest simulation time budget of one frame.
    frame_target : float
        Wall time one frame should cost (simulation + snapshot + plot update): the simulation
        budget of a frame is ``frame_target`` minus the measured cost of the rest (a moving
        average), between ``min(0.01, frame_seconds)`` and ``frame_seconds``.
    first_frame_seconds : float
        Simulation budget of the first frame, computed inside the Run click itself (so the
        plots show data as soon as Run returns, whatever T is).
    plot_modules : list of PlotModule, optional
        The plots of the board (default :data:`dashboard.ui.plots.PLOTS`).
    sweep_options : dict, optional
        Keyword arguments of the Sweep tab's :class:`~dashboard.ui.sweep_view.SweepView`
        (``scheduler="inprocess"``, ``client=...``; default: the served engine's client).
    """

    config = param.ClassSelector(class_=Config, doc="The configuration model.")
    run_model = param.ClassSelector(class_=RunModel, doc="The run state machine.")
    present = param.Boolean(
        default=False,
        doc="Present mode: the sidebar hidden, projector fonts (button, key P, ?present=1).",
    )

    def __init__(
        self,
        config: Config | None = None,
        autostart_timer: bool = True,
        period_ms: int = 100,
        frame_seconds: float = 0.05,
        frame_target: float = 0.085,
        first_frame_seconds: float = 0.02,
        plot_modules: list[PlotModule] | None = None,
        sweep_options: dict[str, Any] | None = None,
        **params: Any,
    ) -> None:
        config = config if config is not None else Config()
        super().__init__(config=config, run_model=RunModel(config), **params)
        self.autostart_timer = autostart_timer
        self.period_ms = int(period_ms)
        self.frame_seconds = float(frame_seconds)
        self.frame_target = float(frame_target)
        self.first_frame_seconds = float(first_frame_seconds)
        self._overhead = 0.0  # moving average of a frame's cost outside the simulation
        self._callback: Any = None
        self._tick_lock = threading.Lock()
        self._push_queued = False  # a worker thread's frame waits for the event loop
        self._quiet_status = False
        self._status_later = document.Deferral(lambda: self._doc, self._on_status)
        #: the session's document (None headless); Bokeh models change only on its thread
        self._doc = pn.state.curdoc
        self._sim_id: int | None = None
        self.settings = ProblemSettings(config)
        self.constants = ConstantsEditor(config)
        self.controls = RunControls(
            on_run=self.run,
            on_pause=self.toggle_pause,
            on_step=self.step,
            on_reset=self.reset,
            csv=self._csv,
        )
        self.lessons_view = LessonPane(
            on_start=self.start_lesson, on_preset=self.load_lesson_preset
        )
        # the theme is read here, in the session: the figures are built later, off it
        self.board = PlotBoard(plot_modules, theme=current_theme())
        #: the page acknowledges frames; a slow one gets them at its own pace (frame_ack.py)
        self.frame_ack = FrameAck(served=lambda: document.served(self._doc))
        self.saved_view = SavedOverlay(
            lambda saved: self._in_document(lambda: self.board.set_saved(saved))
        )
        self.toolbar = RunToolbar(
            self.controls, self.settings.speed_select, self.toggle_present, self.report
        )
        self._build_plots()
        self.sidebar, self.plot_area, self.main = live_parts(
            self.settings,
            self.constants,
            self.controls,
            self.lessons_view,
            self.board,
            self.saved_view,
            self.toolbar,
        )
        # Live run / Sweep / Play tabs (the last two built on first open)
        self.pages = PageTabs(config, self.sidebar, self.main, sweep_options)
        self._layout = pn.Row(
            pn.Column(self.pages.side, width=340),
            self.pages,
            self.frame_ack,
            sizing_mode="stretch_width",
        )
        c = self.config
        c.param.watch(self._on_status, ["errors", "problem", "algorithm_options"])
        c.param.watch(self._on_names, ["problem", "seed"])
        c.param.watch(self._on_log_axes, ["log_axes", "band"])
        c.param.watch(self._on_idle_structure, ["problem", "algorithms"])
        # the idle progress shows T; the notice says when a run's plots show older settings
        c.param.watch(self._on_status, ["horizon", "algorithms"])
        self.run_model.param.watch(self._on_status, ["status", "error", "t", "queued"])
        self.lessons_view.param.watch(self._on_lesson, "slug")
        self.param.watch(self._on_present, "present")
        self._on_names()
        self._on_status()

    def __getattr__(self, name: str) -> Any:
        part = _PARTS.get(name)
        if part is None:
            raise AttributeError(name)
        return getattr(object.__getattribute__(self, part[0]), part[1])

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout

    # ------------------------------------------------------------------ plots
    def _build_plots(self) -> None:
        """(Re)create the live plots for the current configuration (the board iterates the
        plot modules; time plots share one x range, except the log-log regret plot)."""
        c, m = self.config, self.run_model
        self.board.rebuild(
            c.algorithms, c.problem, c.log_axes, m.result, m.horizon or c.horizon, c.band
        )

    @property
    def _plots_structure(self) -> tuple[Any, ...] | None:
        return self.board.structure

    # ------------------------------------------------------------------ actions
    def run(self) -> None:
        """Run the current configuration from scratch (cancelling any previous run).

        The first frame is simulated inside this call (``first_frame_seconds``), so the
        plots show data when Run returns, before the first timer tick.
        """
        self.run_model.run()
        if self.run_model.status == "running":
            self.run_model.tick(self.first_frame_seconds)
        self._after_start()
        if self.run_model.status == "running":
            self._start_timer()

    def toggle_pause(self) -> None:
        """Pause a running simulation, resume a paused one."""
        self.run_model.toggle_pause()
        if self.run_model.status == "running":
            self._start_timer()
        else:
            self._stop_timer()

    def step(self) -> None:
        """Advance to the next oracle call / epoch / phase and pause."""
        self._stop_timer()
        self.run_model.step()
        self._after_start()
        if self.run_model.busy:  # on Dask the step comes back with a later tick
            self._start_timer()

    def reset(self) -> None:
        """Stop the run and clear the plots."""
        self._stop_timer()
        self.run_model.reset()
        self._sim_id = None
        self._in_document(self._show_reset)

    def _show_reset(self) -> None:
        if self._structure() != self._plots_structure:
            self._build_plots()
        else:
            with pn.io.hold():
                self.board.clear()
        self._on_status()

    def dispose(self) -> None:
        """Stop streaming and release the simulation (the browser session ended)."""
        self._stop_timer()
        self._callback = None
        self.run_model.close()
        self.board.close()
        self.pages.dispose()

    def tick(self) -> bool:
        """One streaming frame: advance the simulation and push the snapshot to the plots.

        Returns whether new data was pushed.  Overlapping calls return ``False``.
        """
        if not self._tick_lock.acquire(blocking=False):
            return False
        try:
            if not document.page_connected(self._doc):
                # the page is gone: push nothing, and stop ticking (a closed session's timer
                # kept 30 closed pages at 300 callbacks/s until Bokeh discarded them); the
                # session reaper releases the run (lifecycle.py)
                self._stop_timer()
                return False
            use_fast_patches(self._doc)  # (patch_protocol.py; once per connection)
            if self._push_queued or document.page_behind(self._doc):
                return False  # the last frame is not on its way yet: skip this one
            if not self.frame_ack.may_send():
                return False  # the browser has not drawn the last frames yet (frame_ack.py)
            budget = self.frame_budget()
            start = time.perf_counter()
            if not document.needs_callback(self._doc):
                # one browser update per frame: the progress text ("done") and the data it
                # describes reach the page together, never the status first
                with pn.io.hold():
                    queued = self.run_model.queued
                    self._quiet_status = True  # the status is shown once, with the data
                    try:
                        changed = self.run_model.tick(budget)
                    finally:
                        self._quiet_status = False
                    pushed = time.perf_counter()
                    if changed:
                        self._push(full=self.run_model.status != "running")
                    elif queued != self.run_model.queued:
                        self._on_status()
                if changed:
                    end = time.perf_counter()
                    overhead = max(pushed - start - budget, 0.0) + (end - pushed)
                    self._overhead = 0.7 * self._overhead + 0.3 * overhead
            else:
                # a worker thread (``--num-threads``): simulate here, change the document on
                # the event loop under its lock; the status follows with the data
                self._quiet_status = True
                try:
                    changed = self.run_model.tick(budget)
                finally:
                    self._quiet_status = False
                if changed:
                    full = self.run_model.status != "running"
                    self._push_queued = True  # counted by frame_ack only when it is shown

                    def push() -> None:
                        self._push_queued = False
                        self._push(full=full)

                    self._in_document(push)
            if self.run_model.status != "running" and not self.run_model.busy:
                self._stop_timer()  # (a frame still on its way from a worker is collected)
            return changed
        finally:
            self._tick_lock.release()

    def frame_budget(self) -> float:
        """Simulation seconds of the next frame: ``frame_target`` minus the measured cost of
        the rest of a frame, within ``[min(0.01, frame_seconds), frame_seconds]``."""
        low = min(0.01, self.frame_seconds)
        return min(self.frame_seconds, max(low, self.frame_target - self._overhead))

    # ------------------------------------------------------------------ internals
    def _structure(self) -> tuple[Any, ...]:
        c = self.config
        return (c.problem, tuple(c.algorithms), bool(c.log_axes), c.band)

    def _after_start(self) -> None:
        """A new simulation started: reuse the plots if their layers still fit, else rebuild
        (on the document's thread, under its lock)."""
        self._in_document(self._show_start)

    def _show_start(self) -> None:
        sim = self.run_model.sim
        if sim is not None and id(sim) != self._sim_id:
            self._sim_id = id(sim)
            if self._structure() != self._plots_structure:
                self._build_plots()
            else:
                self.board.reset_range(sim.horizon)
        self._push()

    def _start_timer(self) -> None:
        if not self.autostart_timer:
            return
        if self._callback is None:
            # served by `python -m dashboard serve`: a turn on the process's frame line
            # (frame_turns.py); elsewhere a periodic callback without a busy flag
            self._callback = frame_timer(
                self._doc, self.tick, self.period_ms, wanted=self.run_model.frame_wanted
            )
        elif not self._callback.running:
            self._callback.start()

    def _stop_timer(self) -> None:
        cb = self._callback
        if cb is not None and cb.running:
            cb.stop()

    def _push(self, full: bool = True) -> None:
        """Send the latest snapshot to the plots due this frame (one batched Bokeh message);
        each plot module declares its cadence (see :class:`~dashboard.ui.board.PlotBoard`)."""
        with pn.io.hold():
            # a busy server updates the small plots every few frames (pacing.py)
            self.board.push(self.run_model.result, full=full, stride=PACER.stride)
            self._on_status()
            self.frame_ack.sent()  # numbered in the frame's own patch (frame_ack.py)

    def _in_document(self, change: Any) -> None:
        document.in_document(self._doc, change)

    def _on_lesson(self, *_: Any) -> None:
        lesson_open = self.lessons_view.lesson is not None
        self.board.ncols = 1 if lesson_open else 2  # plots stay wide beside the lesson
        self._on_status()

    def _on_names(self, *_: Any) -> None:
        self.controls.download.filename = f"bandit-{self.config.problem}-seed{self.config.seed}.csv"

    def _on_idle_structure(self, *_: Any) -> None:
        """Nothing has run yet (or Reset cleared it): draw the empty plots of the new problem /
        algorithms at once, so the legend and the problem's own plots (DEO weights, PAC, shift)
        are there before Run.  After a run its plots stay until the next Run or Reset."""
        c, m = self.config, self.run_model
        if (
            m.sim is None
            and m.result is None
            and set(c.algorithms) <= set(c.algorithm_options)  # not mid-update of the problem
            and self._structure() != self._plots_structure
        ):

            def rebuild() -> None:
                with pn.io.hold():
                    self._build_plots()
                self._on_status()

            self._in_document(rebuild)

    def _on_log_axes(self, *_: Any) -> None:
        def rebuild() -> None:
            self._build_plots()
            self._push()

        self._in_document(rebuild)

    def _on_status(self, *_: Any) -> None:
        if self._quiet_status:
            return  # a worker thread's frame: the document callback shows the status
        if self._status_later.deferred():
            return  # outside the document lock: the progress line (a Bokeh Div) a tick later
        m = self.run_model
        lessons = self.lessons_view
        welcome = m.status == "idle" and not lessons.column.visible
        if lessons.welcome.visible != welcome:  # (a parameter set costs ~0.2 ms a frame)
            lessons.welcome.visible = welcome
        # idle plots follow the settings at once; a run's plots stay until Run or Reset
        built = self._plots_structure
        stale = m.result is not None and built is not None and self._structure() != built
        self.controls.show_state(m, self.config, stale)
        report = self.toolbar.report_download
        if report.disabled != (m.result is None):
            report.disabled = m.result is None

    def _csv(self) -> str:
        result = self.run_model.result
        return "" if result is None else result.to_csv()


def create_app(**kwargs: Any) -> pn.template.BootstrapTemplate:
    """Build a fresh dashboard in a template (one per browser session).

    The configuration is synced with the URL query (shareable links); ``?lesson=N`` opens
    lesson N with its preset once the page has loaded, ``&autorun=1`` also starts it
    (:meth:`DashboardApp.apply_query`); ``?tab=sweep`` / ``play`` opens that tab.  Closing
    the browser tab stops the session's run.  Keyword arguments go to :class:`DashboardApp`.

    The template is Bootstrap rather than Fast: the Fast design always loads its font from
    fonts.googleapis.com, and a classroom may be offline; this page loads nothing external.
    """
    pn.extension("mathjax", "filedropper", raw_css=[_CSS, PAGE_CSS], notifications=False)
    serve_panel_css_locally()
    quiet_closed_connections()  # (pn.serve has no app_hooks; a no-op without a loop)
    guard_panel_query_parser()  # before pn.state.location parses the page's query
    coalesce_panel_writes()  # a page's update in one socket write (ws_frames.py)
    app = DashboardApp(**kwargs)
    query = session_query()
    location = pn.state.location
    if location is not None:
        app.url_sync = UrlSync(app.config, location, app.pages.url_notices(location, app.controls))
    else:
        app.controls.show_url_notices(app.pages.apply_query(query))
    app.present = truthy(query.get("present", ""))
    if location is not None:
        sync_flag(location, "present", app, "present")
    if query.get("lesson"):
        if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
            pn.state.onload(lambda: app.apply_query(query))  # after the URL sync, page loaded
        else:
            app.apply_query(query)
    if pn.state.curdoc is not None:  # served (or a notebook): stop the run with the session
        pn.state.curdoc.on_session_destroyed(lambda _ctx: app.dispose())
    template = page_template(
        "Bandit teaching dashboard: oracle-efficient and semiparametric bandits",
        sidebar=[app.pages.side],
        main=[app.pages, app.frame_ack],
        sidebar_width=320,
    )
    template.app = app  # handle for tests and notebooks
    return template

"""The live dashboard: a ``pn.viewable.Viewer`` rendering the param models, and the template.

:class:`DashboardApp` works on its own in a notebook (``pn.extension(); DashboardApp()``): its
``__panel__`` is a plain layout (sidebar column + main area).  :func:`create_app` builds a fresh
app (all state per session: nothing mutable lives at module level) and wraps it in a
``BootstrapTemplate``; ``dashboard/main.py`` serves it.

Streaming: Run starts a periodic callback (every ``period_ms``) that calls
:meth:`DashboardApp.tick`: the :class:`~dashboard.ui.model.RunModel` advances the simulation
for about ``frame_seconds`` and the plots' ``hv.streams.Pipe``\\ s receive the new snapshot
inside ``pn.io.hold()`` (one batched message per frame).  Overlapping ticks are skipped (lock).

Stable hooks for browser tests (CSS classes): ``run-button``, ``pause-button``,
``step-button``, ``reset-button``, ``progress-text``, ``problem-select``, ``algorithm-select``,
``error-alert`` (configuration problems as a warning, a failed run as a danger alert),
``lesson-select``, ``load-preset-button``, ``download-csv``; the welcome card shown before
anything has run: ``welcome-card``, ``start-lesson-button`` (starts lesson 1) and one
``lesson-start-button`` plus ``lesson-start-<N>`` per lesson; the collapsed "Algorithm
constants" card ``constants-card`` (one widget per constant, CSS class
``constant-<algorithm>-<name>``, its inline message ``constants-alert``).  Every plot pane
carries a CSS class and name (``regret-plot``, ``timeline-plot``, ...); the regret plot's
mean curves are Bokeh ``GlyphRenderer``\\ s named ``regret-<algorithm>`` whose
``data_source`` holds the columns ``t`` and ``regret`` (find them among the renderers of the
newest figure named ``regret-plot``: BokehJS keeps replaced figures in its document, see
docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import asyncio
import io
import threading
import time
from collections.abc import Callable
from typing import Any

import panel as pn
import param

from .board import PlotBoard
from .live import LivePlot
from .model import CONSTANTS, MAX_ALGORITHMS, SPEEDS, Config, Knob, RunModel
from .plots import PlotModule
from .safe import escape
from .server import guard_panel_query_parser, quiet_closed_connections
from .urlstate import UrlSync, url_keys

__all__ = ["URL_PARAMETERS", "DashboardApp", "create_app"]

#: Configuration parameters kept in the URL (parameter name -> query key): Config's own
#: parameters (see :func:`dashboard.ui.urlstate.url_keys`), read key by key with a notice per
#: refused key by :class:`~dashboard.ui.urlstate.UrlSync`.
URL_PARAMETERS: dict[str, str] = url_keys(Config)

_PROBLEM_LABELS = {"Combinatorial semi-bandit": "cmab", "Semiparametric bandit": "semiparametric"}
_SPEED_LABELS = {"slow": "slow", "normal": "normal", "fast": "fast", "max": "max"}

#: Page CSS: projector-sized widgets (Bokeh widgets read ``--bokeh-font-size`` through their
#: shadow roots; custom properties inherit), Markdown at 15px.
_CSS = """
:root { --bokeh-font-size: 15px; }
.bk-panel-models-markup-HTML, .markdown { font-size: 15px; }
"""

#: Lesson text headings sized for a 430 px column (the browser default h1 is 2em of 15px).
_LESSON_CSS = """
h1 { font-size: 25px; line-height: 1.2; margin-top: 4px; }
h2 { font-size: 20px; margin-top: 18px; }
h3 { font-size: 17px; }
"""


def _math_renderer(content: str, options: dict[str, Any]) -> str:
    """Render ``$...$`` / ``$$...$$`` as MathJax delimiters (typeset by Bokeh's MathJax).

    The TeX is not HTML-escaped: the Markdown model replaces every math span by MathJax's SVG
    before the text reaches the DOM, and escaping would show ``&amp;`` in aligned equations.
    """
    if options.get("display_mode"):
        return f'<div class="math">$${content}$$</div>'
    return f'<span class="math">\\({content}\\)</span>'


def _dollarmath(md: Any) -> None:
    """markdown-it plugin: dollar math (``$x$`` inline, ``$$`` blocks) for lesson text."""
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    dollarmath_plugin(md, double_inline=True, renderer=_math_renderer)


def _load_lessons() -> list[Any]:
    """The lessons (empty if the lesson module or files are unavailable)."""
    try:
        from .lessons import load_lessons
    except ImportError:
        return []
    try:
        return list(load_lessons())
    except (OSError, ValueError):
        return []


def _lesson_text(lesson: Any) -> str:
    try:
        from .lessons import lesson_markdown_without_preset

        return lesson_markdown_without_preset(lesson)
    except ImportError:
        return str(lesson.markdown)


class DashboardApp(pn.viewable.Viewer):
    """The dashboard component: sidebar controls, live plots and lessons.

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
    plot_modules : list of PlotModule, optional
        The plots of the board (default :data:`dashboard.ui.plots.PLOTS`).
    first_frame_seconds : float
        Simulation budget of the first frame, computed inside the Run click itself (so the
        plots show data as soon as Run returns, whatever T is).
    """

    config = param.ClassSelector(class_=Config, doc="The configuration model.")
    run_model = param.ClassSelector(class_=RunModel, doc="The run state machine.")

    def __init__(
        self,
        config: Config | None = None,
        autostart_timer: bool = True,
        period_ms: int = 100,
        frame_seconds: float = 0.05,
        frame_target: float = 0.085,
        first_frame_seconds: float = 0.02,
        plot_modules: list[PlotModule] | None = None,
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
        self._quiet_status = False
        #: the session's document (None headless); Bokeh models change only on its thread
        self._doc = pn.state.curdoc
        self._sim_id: int | None = None
        self.board = PlotBoard(plot_modules)
        self._lessons = _load_lessons()
        self._build_widgets()
        self._build_plots()
        self._build_layout()
        self.config.param.watch(self._on_config, ["errors", "problem", "algorithm_options"])
        self.config.param.watch(self._on_names, ["problem", "seed"])
        self.config.param.watch(self._on_log_axes, ["log_axes"])
        self.config.param.watch(self._on_idle_structure, ["problem", "algorithms"])
        # the idle progress shows T; the notice says when a run's plots show older settings
        self.config.param.watch(self._on_status, ["horizon", "algorithms"])
        self.run_model.param.watch(self._on_status, ["status", "error", "t", "queued"])
        self._on_config()
        self._on_status()

    # ------------------------------------------------------------------ widgets
    def _build_widgets(self) -> None:
        c = self.config
        self.problem_select = pn.widgets.Select.from_param(
            c.param.problem,
            label="Problem",
            options=_PROBLEM_LABELS,
            css_classes=["problem-select"],
        )
        self.d_input = pn.widgets.IntInput.from_param(c.param.d, label="d (arms / dimension)")
        self.cmab_widgets = pn.Column(
            pn.widgets.IntInput.from_param(c.param.m, label="m (max action size)"),
            pn.widgets.Select.from_param(c.param.actions, label="Action family"),
            pn.widgets.Select.from_param(c.param.reward, label="Reward model"),
            pn.widgets.FloatInput.from_param(
                c.param.oracle_delay, label="Oracle cost (seconds per call)", step=0.001
            ),
            pn.widgets.FloatSlider.from_param(
                c.param.alpha, label="alpha (approximate oracle)", step=0.05
            ),
            sizing_mode="stretch_width",
            margin=0,
        )
        self.sp_widgets = pn.Column(
            pn.widgets.IntInput.from_param(c.param.K, label="K (arms)"),
            pn.widgets.Select.from_param(c.param.shift, label="Shift type ν_t"),
            pn.widgets.FloatInput.from_param(c.param.magnitude, label="Shift magnitude", step=0.1),
            pn.widgets.FloatInput.from_param(c.param.gap, label="Gap Δ*", step=0.05),
            pn.widgets.FloatInput.from_param(c.param.noise, label="Noise level σ", step=0.1),
            sizing_mode="stretch_width",
            margin=0,
        )
        self.algorithm_select = pn.widgets.MultiChoice(
            label=f"Algorithms (up to {MAX_ALGORITHMS})",
            **_algorithm_choices(c),
            max_items=MAX_ALGORITHMS,
            css_classes=["algorithm-select"],
            sizing_mode="stretch_width",
        )
        self.algorithm_select.param.watch(self._on_algorithm_widget, "value")
        c.param.watch(self._on_algorithms_param, "algorithms")
        self.horizon_input = pn.widgets.IntInput.from_param(
            c.param.horizon, label="Horizon T", step=10_000
        )
        self.runs_input = pn.widgets.IntInput.from_param(c.param.runs, label="Repetitions")
        self.seed_input = pn.widgets.IntInput.from_param(c.param.seed, label="Seed")
        self.speed_select = pn.widgets.RadioButtonGroup.from_param(
            c.param.speed, label="Playback speed", options=list(SPEEDS)
        )
        self.log_toggle = pn.widgets.Checkbox.from_param(
            c.param.log_axes, label="Log-log regret axes"
        )

        self.run_button = pn.widgets.Button(
            label="▶ Run", color="primary", css_classes=["run-button"]
        )
        self.pause_button = pn.widgets.Button(
            label="Pause", color="default", css_classes=["pause-button"]
        )
        self.step_button = pn.widgets.Button(
            label="Step", color="default", css_classes=["step-button"]
        )
        self.reset_button = pn.widgets.Button(
            label="Reset", color="default", css_classes=["reset-button"]
        )
        self.run_button.on_click(lambda _e: self.run())
        self.pause_button.on_click(lambda _e: self.toggle_pause())
        self.step_button.on_click(lambda _e: self.step())
        self.reset_button.on_click(lambda _e: self.reset())
        self.progress_text = pn.pane.Markdown(
            "", css_classes=["progress-text"], margin=(0, 10), styles={"font-size": "16px"}
        )
        self.progress_bar = pn.indicators.Progress(
            value=0, max=100, sizing_mode="stretch_width", height=14
        )
        self.alert = pn.pane.Alert(
            "", alert_type="warning", css_classes=["error-alert"], visible=False
        )
        self.notice = pn.pane.Alert(
            "", alert_type="info", css_classes=["notice-alert"], visible=False
        )
        #: what the page address asked for and did not get (one escaped line per key)
        self.url_notice = pn.pane.Alert(
            "", alert_type="warning", css_classes=["url-notice"], visible=False
        )
        self.download = pn.widgets.FileDownload(
            callback=self._csv,
            filename=self._csv_name(),
            label="Download results (CSV)",
            color="success",
            css_classes=["download-csv"],
            disabled=True,
            sizing_mode="stretch_width",
        )
        titles = {"(no lesson)": ""}
        titles.update({f"{le.number}. {le.title}": le.slug for le in self._lessons})
        self.lesson_select = pn.widgets.Select(
            label="Lesson", options=titles, value="", css_classes=["lesson-select"]
        )
        self.load_preset_button = pn.widgets.Button(
            label="Load this lesson's preset",
            color="primary",
            css_classes=["load-preset-button"],
            disabled=True,
        )
        self.lesson_pane = pn.pane.Markdown(
            "",
            plugins=[_dollarmath],
            sizing_mode="stretch_width",
            styles={"font-size": "15px"},
            stylesheets=[_LESSON_CSS],
            css_classes=["lesson-text"],
        )
        self.lesson_select.param.watch(self._on_lesson, "value")
        self.load_preset_button.on_click(lambda _e: self.load_lesson_preset())
        self.welcome = self._welcome_card()
        self._constant_widgets: dict[tuple[str, str], Any] = {}
        self._syncing_constants = False
        self.constants_alert = pn.pane.Alert(
            "", alert_type="warning", css_classes=["constants-alert"], visible=False
        )
        self.constants_reset = pn.widgets.Button(
            label="All constants to the papers' defaults",
            color="default",
            css_classes=["constants-reset-button"],
        )
        self.constants_reset.on_click(lambda _e: setattr(self.config, "constants", None))
        self.constants_body = pn.Column(sizing_mode="stretch_width", margin=0)
        self.constants_card = pn.Card(
            pn.pane.Markdown(
                "Constants the papers leave open (see docs/DIFFERENCES.md). Changed values "
                "go into the link and the preset.",
                styles={"font-size": "14px"},
            ),
            self.constants_body,
            self.constants_alert,
            self.constants_reset,
            title="Algorithm constants",
            collapsed=True,
            css_classes=["constants-card"],
            sizing_mode="stretch_width",
        )
        self._build_constant_widgets()
        self.config.param.watch(self._on_constants_param, ["constants"])

    def _constant_widget(self, algorithm: str, knob: Knob) -> Any:
        value = self.config.constant(algorithm, knob.name)
        css = [f"constant-{algorithm}-{knob.name}".replace(" ", "-")]
        if knob.kind == "choice":
            widget = pn.widgets.Select(
                label=knob.label, options=list(knob.choices), css_classes=css
            )
        elif knob.kind == "bool":  # declared by plug-ins (no built-in card constant is one)
            widget = pn.widgets.Checkbox(label=knob.label, css_classes=css)
        elif knob.kind == "int":
            widget = pn.widgets.IntInput(
                label=knob.label, value=None, placeholder="auto", css_classes=css
            )
        else:
            widget = pn.widgets.FloatInput(label=knob.label, value=None, step=0.05, css_classes=css)
        _show_value(widget, value)
        widget.sizing_mode = "stretch_width"

        def changed(event: Any, algorithm: str = algorithm, name: str = knob.name) -> None:
            if not self._syncing_constants:
                self.config.set_constant(algorithm, name, event.new)

        widget.param.watch(changed, "value")
        return widget

    def _build_constant_widgets(self) -> None:
        """One group of widgets per chosen algorithm that has constants (CONSTANTS)."""
        self._constant_widgets = {}
        groups: list[Any] = []
        for algorithm in self.config.algorithms:
            knobs = CONSTANTS.get(algorithm, ())
            if not knobs:
                continue
            groups.append(pn.pane.Markdown(f"**{escape(algorithm)}**", margin=(8, 10, 0, 10)))
            for knob in knobs:
                widget = self._constant_widget(algorithm, knob)
                self._constant_widgets[(algorithm, knob.name)] = widget
                groups.append(widget)
        if not groups:
            groups = [pn.pane.Markdown("The chosen algorithms have no open constants.")]
        self.constants_body.objects = groups
        self._show_constant_errors()

    def _on_constants_param(self, *_: Any) -> None:
        """The constants changed (URL, preset, reset button): show them in the widgets."""
        self._syncing_constants = True
        try:
            for (algorithm, name), widget in self._constant_widgets.items():
                value = self.config.constant(algorithm, name)
                if widget.value != value:
                    _show_value(widget, value)
        finally:
            self._syncing_constants = False
        self._show_constant_errors()

    def _show_constant_errors(self) -> None:
        errors = self.config._check_constants()
        self.constants_alert.param.update(
            object=_escape_all(errors) + (" Fix this to enable Run." if errors else ""),
            visible=bool(errors),
        )
        if errors:
            self.constants_card.collapsed = False  # an invalid value never hides

    def _welcome_card(self) -> pn.Column:
        """The card shown in the main area while nothing has run: one click starts a lesson
        (its text opens beside the plots, its preset is applied and the run starts)."""
        first = self._lessons[0] if self._lessons else None
        self.start_lesson_button = pn.widgets.Button(
            label=f"Start lesson {first.number} ▶" if first else "No lessons found",
            color="primary",
            css_classes=["start-lesson-button"],
            disabled=first is None,
            height=54,
            width=260,
            stylesheets=[":host .bk-btn { font-size: 20px; font-weight: 600; }"],
        )
        if first is not None:
            self.start_lesson_button.on_click(lambda _e, n=first.number: self.start_lesson(n))
        rows = []
        self.lesson_buttons: dict[int, pn.widgets.Button] = {}
        for le in self._lessons:
            button = pn.widgets.Button(
                label=f"Lesson {le.number} ▶",
                color="light",
                css_classes=["lesson-start-button", f"lesson-start-{le.number}"],
                width=120,
                stylesheets=[":host .bk-btn { font-size: 15px; }"],
            )
            button.on_click(lambda _e, n=le.number: self.start_lesson(n))
            self.lesson_buttons[le.number] = button
            rows.append(
                pn.Row(
                    button,
                    pn.pane.Markdown(
                        escape(le.title), styles={"font-size": "16px"}, margin=(4, 10)
                    ),
                    sizing_mode="stretch_width",
                )
            )
        intro = (
            "## Welcome to the bandit teaching dashboard\n"
            "One click opens a lesson beside the plots, sets up its experiment and runs it. "
            "Or choose a problem and algorithms in the sidebar and press **▶ Run**."
        )
        return pn.Column(
            pn.pane.Markdown(intro, styles={"font-size": "17px"}, sizing_mode="stretch_width"),
            self.start_lesson_button,
            *rows,
            css_classes=["welcome-card"],
            sizing_mode="stretch_width",
            styles={
                "background": "#f2f7fb",
                "border": "1px solid #b9d3e8",
                "border-radius": "8px",
                "padding": "6px 12px 12px 12px",
            },
            margin=(5, 10, 15, 10),
        )

    # ------------------------------------------------------------------ plots
    def _build_plots(self) -> None:
        """(Re)create the live plots for the current configuration (the board iterates the
        plot modules; time plots share one x range, except the log-log regret plot)."""
        c, m = self.config, self.run_model
        self.board.rebuild(c.algorithms, c.problem, c.log_axes, m.result, m.horizon or c.horizon)

    @property
    def plots(self) -> dict[str, LivePlot]:
        """Plot key -> live plot on the board."""
        return self.board.plots

    @property
    def panes(self) -> dict[str, Any]:
        """Plot key -> its pane."""
        return self.board.panes

    @property
    def x_range(self) -> Any:
        """The time axis shared by the time plots."""
        return self.board.x_range

    @property
    def _plots_structure(self) -> tuple[Any, ...] | None:
        return self.board.structure

    def _build_layout(self) -> None:
        self.plot_area = pn.Column(self.welcome, self.board, sizing_mode="stretch_width")
        self.lesson_column = pn.Column(
            self.lesson_pane, width=430, visible=False, scroll=True, max_height=1400
        )
        self.sidebar = pn.Column(
            self.problem_select,
            self.d_input,
            self.cmab_widgets,
            self.sp_widgets,
            self.algorithm_select,
            pn.Row(self.horizon_input, self.runs_input, sizing_mode="stretch_width"),
            self.seed_input,
            pn.pane.Markdown("Playback speed", margin=(0, 10)),
            self.speed_select,
            self.log_toggle,
            self.constants_card,
            pn.layout.Divider(),
            pn.Row(self.run_button, self.pause_button, sizing_mode="stretch_width"),
            pn.Row(self.step_button, self.reset_button, sizing_mode="stretch_width"),
            self.progress_text,
            self.progress_bar,
            self.alert,
            self.url_notice,
            self.notice,
            self.download,
            pn.layout.Divider(),
            pn.pane.Markdown("### Lessons", margin=(0, 10)),
            self.lesson_select,
            self.load_preset_button,
            sizing_mode="stretch_width",
            name="controls",
        )
        self.main = pn.Row(
            self.plot_area, self.lesson_column, sizing_mode="stretch_width", name="main"
        )
        self._layout = pn.Row(
            pn.Column(self.sidebar, width=340), self.main, sizing_mode="stretch_width"
        )

        for widget in self.sidebar.select(pn.widgets.Widget):
            widget.sizing_mode = "stretch_width"

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout

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

    def tick(self) -> bool:
        """One streaming frame: advance the simulation and push the snapshot to the plots.

        Returns whether new data was pushed.  Overlapping calls return ``False``.
        """
        if not self._tick_lock.acquire(blocking=False):
            return False
        try:
            if not self._page_connected():
                return False  # the page is gone: push nothing (dispose() ends the run)
            budget = self.frame_budget()
            start = time.perf_counter()
            if not self._needs_document_callback():
                # one browser update per frame: the progress text ("done") and the data it
                # describes reach the page together, never the status first
                with pn.io.hold():
                    changed = self.run_model.tick(budget)
                    pushed = time.perf_counter()
                    if changed:
                        self._push(full=self.run_model.status != "running")
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
                    self._in_document(lambda: self._push(full=full))
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

    def load_lesson_preset(self) -> bool:
        """Apply the selected lesson's preset to the configuration; return whether it applied."""
        lesson = self._lesson()
        if lesson is None:
            return False
        try:
            # a lesson starts from the papers' constants unless its preset sets some
            self.config.apply_preset({"constants": None, **dict(lesson.preset)})
        except ValueError as exc:
            self._show_alert(str(exc), "danger")
            return False
        return True

    def start_lesson(self, number: int | str) -> bool:
        """One click to a running lesson: open lesson ``number`` (its number or slug) beside the
        plots, apply its preset and start the run.  Returns whether the run started."""
        lesson = self._find_lesson(number)
        if lesson is None:
            return False
        self.lesson_select.value = lesson.slug
        if not self.load_lesson_preset():
            return False
        self.run()
        return self.run_model.status == "running"

    def apply_query(self, query: dict[str, str]) -> None:
        """Handle the page URL's ``?lesson=N`` (open lesson N and apply its preset) and
        ``&autorun=1`` (also start the run).  Other keys are the configuration's URL sync.

        A lesson that does not exist is explained in the alert; nothing else changes then.
        """
        number = str(query.get("lesson", "")).strip()
        if not number:
            return
        lesson = self._find_lesson(number)
        if lesson is None:
            numbers = ", ".join(str(le.number) for le in self._lessons) or "none available"
            self._show_alert(
                f"There is no lesson {number!r} (lesson=N in the address); lessons: {numbers}.",
                "warning",
            )
            return
        self.lesson_select.value = lesson.slug
        applied = self.load_lesson_preset()
        autorun = str(query.get("autorun", "")).strip().lower() in ("1", "true", "yes", "on")
        if applied and autorun:
            self.run()

    # ------------------------------------------------------------------ internals
    def _structure(self) -> tuple[Any, ...]:
        c = self.config
        return (c.problem, tuple(c.algorithms), bool(c.log_axes))

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
            self._callback = pn.state.add_periodic_callback(self.tick, period=self.period_ms)
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
            self.board.push(self.run_model.result, full=full)
            self._on_status()

    def _session(self) -> Any:
        ctx = getattr(self._doc, "session_context", None)
        return None if ctx is None else ctx.session

    def _page_connected(self) -> bool:
        """False once a served page's socket closed (or its session ended): frames would be
        pushed to a closed websocket, which Tornado logs as tracebacks.  Always True without
        a server (notebook, headless)."""
        ctx = getattr(self._doc, "session_context", None)
        if ctx is None:
            return True
        session = ctx.session
        if session is None:  # the session is being created: no page yet, nothing streams
            return True
        return not session.destroyed and session.connection_count > 0

    def _needs_document_callback(self) -> bool:
        """Whether this thread must not change the served document directly (a worker
        thread of ``--num-threads``; the event loop's own callbacks hold the lock)."""
        if getattr(self._doc, "session_context", None) is None:
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return True
        return False

    def _in_document(self, change: Callable[[], None]) -> None:
        """Run ``change`` now if this thread may change the document, else on the event
        loop with the document lock held (Bokeh's next-tick callback); dropped if the session
        has ended."""
        if not self._needs_document_callback():
            change()
            return
        session = self._session()
        if session is not None and session.destroyed:
            return
        self._doc.add_next_tick_callback(change)

    def _lesson(self) -> Any:
        slug = self.lesson_select.value
        return next((le for le in self._lessons if le.slug == slug), None)

    def _find_lesson(self, key: int | str) -> Any:
        """The lesson with this number (``3``, ``"3"``, ``"03"``) or slug, else ``None``."""
        text = str(key).strip().lower()
        for le in self._lessons:
            if text == le.slug or (text.isdigit() and int(text) == le.number):
                return le
        return None

    def _on_lesson(self, *_: Any) -> None:
        lesson = self._lesson()
        self.load_preset_button.disabled = lesson is None
        self.lesson_column.visible = lesson is not None
        self.board.ncols = 1 if lesson is not None else 2  # plots stay wide beside the lesson
        self.lesson_pane.object = "" if lesson is None else _lesson_text(lesson)
        self._on_status()

    def _on_algorithm_widget(self, event: Any) -> None:
        if not getattr(self, "_showing_algorithms", False) and list(event.new) != list(
            self.config.algorithms
        ):
            self.config.algorithms = list(event.new)

    def _on_algorithms_param(self, event: Any) -> None:
        self._build_constant_widgets()
        if list(event.new) != list(self.algorithm_select.value):
            self._show_algorithms()

    def _show_algorithms(self) -> None:
        """The model's algorithms into the widget (never written back from here)."""
        self._showing_algorithms = True
        try:
            self.algorithm_select.param.update(**_algorithm_choices(self.config))
        finally:
            self._showing_algorithms = False

    def _on_config(self, *_: Any) -> None:
        c = self.config
        cmab = c.problem == "cmab"
        self.cmab_widgets.visible = cmab
        self.sp_widgets.visible = not cmab
        self._show_algorithms()
        if hasattr(self, "constants_alert"):
            self._show_constant_errors()
        self._on_status()

    def _on_names(self, *_: Any) -> None:
        self.download.filename = self._csv_name()

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
        m, c = self.run_model, self.config
        status = m.status
        self.run_button.disabled = not c.valid
        self.pause_button.disabled = status not in ("running", "paused")
        self.pause_button.label = "Resume" if status == "paused" else "Pause"
        self.step_button.disabled = not c.valid and m.sim is None
        horizon = m.horizon or c.horizon
        label = {"idle": "ready", "running": "running", "paused": "paused", "done": "done"}
        self.progress_text.object = (
            f"**t = {m.t:,} / {horizon:,}** &nbsp; ({label.get(status, 'stopped')})"
        )
        self.progress_bar.value = int(100 * m.t / horizon) if horizon else 0
        self.download.disabled = m.result is None
        self.welcome.visible = status == "idle" and not self.lesson_column.visible
        notices = m.notices()
        if (
            m.result is not None
            and self._plots_structure is not None
            and self._structure() != self._plots_structure
        ):
            # idle plots follow the settings at once; a run's plots stay until Run or Reset
            verb = "is still running" if status == "running" else "ran"
            notices.append(
                f"The plots show the run that {verb} with the previous problem or algorithms: "
                "press Run for the new settings (Reset clears the plots)."
            )
        self.notice.param.update(object=_escape_all(notices), visible=bool(notices))
        if status == "error" and m.error:
            self._show_alert(m.error, "danger")
        elif c.errors:
            self._show_alert(c.errors, "warning", suffix=" Fix this to enable Run.")
        else:
            self.alert.visible = False

    def show_url_notices(self, notices: list[str]) -> None:
        """Show what the page address asked for and did not get (one line per refused key,
        escaped: the address is user input); an empty list hides the notice."""
        text = "\n".join(f"- {escape(n, 400)}" for n in notices)
        self.url_notice.param.update(object=text, visible=bool(notices))

    def _show_alert(self, text: str | list[str], kind: str, suffix: str = "") -> None:
        """Show plain sentences in the alert; they are escaped (they quote user input)."""
        sentences = [text] if isinstance(text, str) else list(text)
        self.alert.param.update(
            object=_escape_all(sentences) + suffix, alert_type=kind, visible=True
        )

    def _csv_name(self) -> str:
        return f"bandit-{self.config.problem}-seed{self.config.seed}.csv"

    def _csv(self) -> io.StringIO:
        result = self.run_model.result
        return io.StringIO("" if result is None else result.to_csv())


def _algorithm_choices(config: Config) -> dict[str, list[str]]:
    """Options and value of the algorithm MultiChoice: the problem's algorithms plus any other
    *registered* name chosen (its alert explains why it does not fit).  A name that is not
    registered never reaches the widget: Bokeh's MultiChoice (Choices.js, ``allowHTML``)
    renders option labels as HTML; the alert names it, escaped."""
    options = list(config.algorithm_options)
    known = set(Config.options_for("cmab")) | set(Config.options_for("semiparametric"))
    extra = [a for a in config.algorithms if a not in options and a in known]
    return {"options": options + extra, "value": [a for a in config.algorithms if a in known]}


def _show_value(widget: Any, value: Any) -> None:
    """Show a constant's value in its widget; a value of the wrong type (set from code) leaves
    the widget as it is: the constants alert explains the value."""
    try:
        widget.value = value
    except (ValueError, TypeError):
        pass


def _escape_all(sentences: list[str]) -> str:
    """Plain sentences as one escaped Markdown paragraph (each cut to 400 characters)."""
    return " ".join(escape(s, 400) for s in sentences)


def _session_query() -> dict[str, str]:
    """The page's URL query of a served session (first value per key; empty otherwise)."""
    try:
        args = pn.state.session_args or {}
    except Exception:  # no session (notebook, headless)
        return {}
    out: dict[str, str] = {}
    for key, values in args.items():
        if values:
            value = values[0]
            out[key] = value.decode() if isinstance(value, bytes) else str(value)
    return out


def _serve_panel_css_locally() -> None:
    """Make every Panel stylesheet of this session come from this server, not the CDN.

    Panel points its stylesheets at ``cdn.holoviz.org`` while a session's document is built and
    rewrites them to the server's own copies only when it renders the page's HTML. A session
    that Bokeh creates from the websocket instead (the page's session expired before the
    socket connected, e.g. on a loaded machine, or after a reconnect) never gets that rewrite,
    so an offline classroom would see unstyled widgets. Telling the document its ``dist_url``
    up front (the value Panel would set, honouring ``pn.config.resources``) makes both paths
    load only local files. ``_template_variables`` is private Panel API; Panel itself reads and
    writes it for exactly this purpose (``panel/io/server.py``, ``panel/reactive.py``).
    """
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return  # notebooks and headless use have their own resource handling
    from panel.io.resources import get_dist_path

    doc._template_variables.setdefault("dist_url", get_dist_path())


def create_app(**kwargs: Any) -> pn.template.BootstrapTemplate:
    """Build a fresh dashboard in a template (one per browser session).

    The configuration is synced with the URL query (shareable links); ``?lesson=N`` opens
    lesson N with its preset once the page has loaded, ``&autorun=1`` also starts it
    (:meth:`DashboardApp.apply_query`).  Closing the browser tab stops the session's run.
    Keyword arguments go to :class:`DashboardApp`.

    The template is Bootstrap rather than Fast: the Fast design always loads its font from
    fonts.googleapis.com, and a classroom may be offline; this page loads nothing external.
    """
    pn.extension("mathjax", raw_css=[_CSS], notifications=False)
    _serve_panel_css_locally()
    quiet_closed_connections()  # (pn.serve has no app_hooks; a no-op without a loop)
    guard_panel_query_parser()  # before pn.state.location parses the page's query
    app = DashboardApp(**kwargs)
    if pn.state.location is not None:
        app.url_sync = UrlSync(app.config, pn.state.location, app.show_url_notices)
    query = _session_query()
    if query.get("lesson"):
        if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
            pn.state.onload(lambda: app.apply_query(query))  # after the URL sync, page loaded
        else:
            app.apply_query(query)
    if pn.state.curdoc is not None:  # served (or a notebook): stop the run with the session
        pn.state.curdoc.on_session_destroyed(lambda _ctx: app.dispose())
    template = pn.template.BootstrapTemplate(
        title="Bandit teaching dashboard: oracle-efficient and semiparametric bandits",
        sidebar=[app.sidebar],
        main=[app.main],
        sidebar_width=360,
        header_background="#0b3d63",
    )
    template.app = app  # handle for tests and notebooks
    return template

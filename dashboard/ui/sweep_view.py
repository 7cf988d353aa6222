"""Sweep Viewer: choose one or two swept fields and their values, watch the grid fill in live.

The view builds a sweep (:func:`~dashboard.simulation.sweep.make_sweep`: every check before
any work, errors shown as an escaped inline notice), then runs it on the Dask client
(:func:`~dashboard.simulation.sweep.run_sweep`: a shared local cluster, the cluster named by
``$BANDIT_DASHBOARD_SCHEDULER``, or in-process for tiny sweeps) from a background thread, so the
server's event loop never waits for work.  Each finished task reports progress; the updates are
handed to the session's event loop (:func:`~dashboard.ui.document.in_document`, thread-safe;
applied directly when there is no served document, e.g. in tests and notebooks).

Limits and fair share: a sweep is estimated before it starts with the Live tab's estimate
(:func:`~dashboard.simulation.sweep.estimate_sweep`, point by point) and refused above the
class's work limit (``serve --max-work``, :func:`~dashboard.ui.config.class_max_work`, the
same as one live run's) or memory limit, with the estimate in the notice.  It runs with a fair
share of the cluster (``run_sweep(share=True)``: a worker thread stays free for live runs,
tasks at a lower Dask priority).  Cancel, or a page closed for :data:`CLOSED_SECONDS` (or its
session destroyed), stops the queued tasks and the running ones on the workers.
:func:`largest_sweep` gives the settings of the biggest sweep a limit allows (load tests).

Plots (:mod:`dashboard.ui.sweep_plot`): the chosen metric (final regret, oracle queries or
adaptivity) against the first swept field, mean over repetitions with a +-1 sd band, one line
per algorithm (and per value of the second swept field).

Layout: :attr:`SweepView.controls` (settings, Run / Cancel, open a file) and
:attr:`SweepView.output` (notice, progress, plot, grid) are built once; the dashboard's Sweep
tab puts them in the page's sidebar and main area (:mod:`dashboard.ui.tabs`), the Viewer
itself shows them side by side (the ``/sweep`` page, a notebook).  CSS hooks for browser
tests: ``sweep-controls``, ``sweep-values``, ``sweep-run-button``, ``sweep-cancel-button``,
``sweep-progress``, ``sweep-status``, ``sweep-notice``, ``sweep-plot``, ``sweep-grid``.
"""

from __future__ import annotations

import html
import math
import threading
import time
from typing import Any

import panel as pn
import param

from ..simulation import catalogue
from ..simulation.budget import DEFAULT_MAX_MEMORY, bytes_text, duration_text
from ..simulation.store import load_upload
from ..simulation.sweep import (
    GRID_FIELDS,
    SweepEstimate,
    SweepProgress,
    SweepResult,
    estimate_sweep,
    make_sweep,
    run_sweep,
)
from .config import class_max_work
from .document import in_document, on_click, page_opened, served, session_ended
from .safe import escape, shorten
from .sweep_plot import METRICS, grid_html, parse_values, sweep_plot
from .upload import UploadDropper, read_off_loop, uploaded_file

__all__ = [
    "CLOSED_SECONDS",
    "MAX_TAB_CURVES",
    "MAX_TAB_POINTS",
    "METRICS",
    "SweepView",
    "largest_sweep",
    "parse_values",
    "sweep_plot",
]

#: Seconds a served page's socket must stay closed before its running sweep is stopped.
CLOSED_SECONDS = 1.0
#: Most points a sweep of the Sweep tab may have (its grid is built on the server's event
#: loop, and one row of the table per point must stay readable).
MAX_TAB_POINTS = 400
#: Longest list of values (characters) the Sweep tab reads.
MAX_VALUES_TEXT = 10_000
#: Most bytes of curves a Sweep tab's result may hold in the server (every session's rows
#: live in the one server process; ``Sweep.memory``).
MAX_TAB_CURVES = 128 * 1024**2

_ALL_ALGORITHMS = catalogue.algorithm_names()
_ALL_FIELDS = ["horizon", *dict.fromkeys(f for fs in GRID_FIELDS.values() for f in fs)]
#: The settings shown as widgets, in order.
_CONTROLS = (
    "problem",
    "algorithms",
    "x_field",
    "x_values",
    "group_field",
    "group_values",
    "horizon",
    "runs",
    "seed",
    "metric",
)
_BIG_BUTTON = ":host .bk-btn { font-size: 16px; padding: 8px 18px; }"


def largest_sweep(
    max_work: float | None = None,
    points: int = 3,
    runs: int = 256,
    problem: str = "cmab",
    algorithms: tuple[str, ...] = ("AROQ-CMAB", "SROQ-CMAB"),
) -> dict[str, Any]:
    """:class:`SweepView` settings of the biggest sweep of ``algorithms`` that ``max_work``
    estimated seconds allow (default: the class's limit): the horizon swept over ``points``
    values ``T / points, 2 T / points, ..., T`` with ``runs`` repetitions, T as large as the
    estimate allows (at most 10^7; at least ``points``, even if that is above the limit).
    ``SweepView(**largest_sweep(60)).run()`` starts it."""
    limit = class_max_work() if max_work is None else float(max_work)
    points = max(1, int(points))

    def settings(T: int) -> dict[str, Any]:
        values = sorted({max(1, T * (i + 1) // points) for i in range(points)})
        return {
            "problem": problem,
            "algorithms": list(algorithms),
            "x_field": "horizon",
            "x_values": ", ".join(str(v) for v in values),
            "runs": int(runs),
        }

    def seconds(T: int) -> float:
        s = settings(T)
        grid = {"horizon": parse_values(s["x_values"])}
        return estimate_sweep(make_sweep(problem, s["algorithms"], runs=runs, grid=grid)).seconds

    lo, hi = points, 10_000_000
    if seconds(hi) <= limit:
        return settings(hi)
    while hi - lo > max(1, lo // 1000):  # within 0.1 %
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if seconds(mid) <= limit else (lo, mid)
    return settings(lo)


class SweepView(pn.viewable.Viewer):
    """Choose the swept field(s), run the sweep on Dask, see the grid fill and the plots."""

    problem = param.ObjectSelector(default="cmab", objects=["cmab", "semiparametric"])
    algorithms = param.ListSelector(default=["AROQ-CMAB", "SROQ-CMAB"], objects=_ALL_ALGORITHMS)
    x_field = param.ObjectSelector(
        default="horizon", objects=_ALL_FIELDS, label="Swept field (x axis)"
    )
    x_values = param.String(default="1000, 3000, 10000", label="Its values (comma separated)")
    group_field = param.ObjectSelector(
        default="(none)", objects=["(none)", *_ALL_FIELDS], label="Second field (one line each)"
    )
    group_values = param.String(default="", label="Its values")
    horizon = param.Integer(
        default=2000, bounds=(1, 10_000_000), label="Horizon T (when not swept)"
    )
    runs = param.Integer(default=3, bounds=(1, 256), label="Runs (repetitions per point)")
    seed = param.Integer(default=0, bounds=(0, None))
    metric = param.ObjectSelector(default="final regret", objects=list(METRICS))
    progress = param.Integer(default=0, bounds=(0, 100))
    status = param.String(default="")
    running = param.Boolean(default=False)

    def __init__(self, client: Any = None, scheduler: str | None = None, **params: Any) -> None:
        super().__init__(**params)
        self._client = client
        self._scheduler = scheduler
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed_since: float | None = None  # when the page's socket was seen closed
        #: the estimate of the sweep last started (or refused)
        self.estimate: SweepEstimate | None = None
        self._doc = pn.state.curdoc if pn.state.curdoc is not None else None
        self._served = self._doc is not None and served(self._doc)  # (stays so once ended)
        self.result: SweepResult | None = None
        self._axes: tuple[str, str | None] | None = None  # plotted (x, group) of the result
        self._update_choices()
        self._plot = pn.pane.HoloViews(
            sweep_plot(None, self.x_field),
            sizing_mode="stretch_width",
            name="sweep-plot",
            css_classes=["sweep-plot"],
        )
        self._grid = pn.pane.HTML(
            "", sizing_mode="stretch_width", name="sweep-grid", css_classes=["sweep-grid"]
        )
        self._notice = pn.pane.HTML("", name="sweep-notice", css_classes=["sweep-notice"])
        self._bar = pn.indicators.Progress(
            value=0, max=100, sizing_mode="stretch_width", css_classes=["sweep-progress"]
        )
        self._run_button = pn.widgets.Button(
            label="Run sweep",
            color="primary",
            css_classes=["sweep-run-button"],
            stylesheets=[_BIG_BUTTON],
        )
        self._cancel_button = pn.widgets.Button(
            label="Cancel",
            color="default",
            disabled=True,
            css_classes=["sweep-cancel-button"],
            stylesheets=[_BIG_BUTTON],
        )
        self._file = UploadDropper(css_classes=["sweep-file"])
        self._file.param.watch(self._on_upload, "value")
        self._file.param.watch(lambda e: e.new and self._notify(e.new), "oversized")
        self._reading = False
        self._controls: pn.Column | None = None
        self._output: pn.Column | None = None
        on_click(self._run_button, lambda: self.run())
        on_click(self._cancel_button, lambda: self.cancel())
        if self._doc is not None and getattr(self._doc, "session_context", None) is not None:
            self._doc.on_session_destroyed(lambda _ctx: self.dispose())

    # ------------------------------------------------------------------ choices
    @param.depends("problem", watch=True)
    def _update_choices(self) -> None:
        names = catalogue.algorithm_names(self.problem)
        self.param.algorithms.objects = names
        self.algorithms = [a for a in self.algorithms if a in names] or names[:2]
        fields = ["horizon", *GRID_FIELDS[self.problem]]
        self.param.x_field.objects = fields
        self.param.group_field.objects = ["(none)", *fields]
        if self.x_field not in fields:
            self.x_field = "horizon"
        if self.group_field not in self.param.group_field.objects:
            self.group_field = "(none)"

    @param.depends("metric", watch=True)
    def _redraw(self) -> None:
        x, group = self._axes or (self.x_field, self._group())
        self._plot.object = sweep_plot(self.result, x, self.metric, group)

    def _group(self) -> str | None:
        return None if self.group_field == "(none)" else self.group_field

    # ------------------------------------------------------------------ running
    def build(self) -> Any:
        """The sweep the current choices describe (ValueError if invalid; at most
        :data:`MAX_TAB_POINTS` points, checked before the grid is built)."""
        for text in (self.x_values, self.group_values):
            if len(text) > MAX_VALUES_TEXT:
                raise ValueError(
                    f"a list of values is {len(text):,} characters long; the Sweep tab takes "
                    f"at most {MAX_VALUES_TEXT:,}"
                )
        grid = {self.x_field: parse_values(self.x_values)}
        if self._group() is not None:
            if self._group() == self.x_field:
                raise ValueError("choose two different fields to sweep")
            grid[self._group()] = parse_values(self.group_values)
        points = math.prod(len(v) for v in grid.values())
        if points > MAX_TAB_POINTS:
            raise ValueError(
                f"the grid has {points:,} points; the Sweep tab runs at most "
                f"{MAX_TAB_POINTS:,} (the command line's sweep takes larger grids)"
            )
        return make_sweep(
            self.problem,
            list(self.algorithms),
            horizon=self.horizon,
            runs=self.runs,
            seed=self.seed,
            grid=grid,
        )

    def refusal(self, sweep: Any) -> str | None:
        """Why ``sweep`` may not run in this class (its estimate above the class's work or
        memory limit, in the Live tab's words), or None."""
        est = self.estimate = estimate_sweep(sweep)
        limit = class_max_work()
        if est.seconds > limit:
            return (
                f"it would take about {duration_text(est.seconds)} of simulation "
                f"({est.size()}); this class allows at most {duration_text(limit)} per run: "
                f"lower T, R or the number of points."
            )
        if est.memory > DEFAULT_MAX_MEMORY:
            return (
                f"one of its points would need about {bytes_text(est.memory)} of memory; this "
                f"class allows at most {bytes_text(DEFAULT_MAX_MEMORY)}: lower R, d or K."
            )
        if sweep.memory() > MAX_TAB_CURVES:
            return (
                f"its curves would take about {bytes_text(sweep.memory())} of the server's "
                f"memory; the Sweep tab holds at most {bytes_text(MAX_TAB_CURVES)}: lower R, "
                f"the number of algorithms or of points."
            )
        return None

    def _notify(self, message: str, kind: str = "danger") -> None:
        text = html.escape(message)
        self._notice.object = f'<div class="alert alert-{kind}" role="alert">{text}</div>'

    def run(self) -> bool:
        """Validate and start the sweep in the background; False (with a notice) if invalid."""
        if self.running:
            return False
        try:
            sweep = self.build()
            refused = self.refusal(sweep)
        except ValueError as exc:
            self._notify(f"Cannot run this sweep: {str(exc).splitlines()[0]}")
            return False
        if refused is not None:
            self._notify(f"Cannot run this sweep: {refused}")
            return False
        self._notice.object = ""
        self._cancel = threading.Event()
        self._closed_since = None
        self.result = SweepResult(sweep, [])
        self._axes = (self.x_field, self._group())
        about = "" if self.estimate is None else duration_text(self.estimate.seconds)
        self.running, self.progress = True, 0
        self.status = f"starting (about {about} of simulation)"
        self._bar.value = 0
        self._run_button.disabled, self._cancel_button.disabled = True, False
        self._redraw()
        self._grid.object = self._grid_html()
        self._thread = threading.Thread(target=self._work, args=(sweep,), daemon=True)
        self._thread.start()
        return True

    def _work(self, sweep: Any) -> None:
        try:
            res = run_sweep(
                sweep,
                client=self._client,
                scheduler=self._scheduler,
                progress=lambda p: self._schedule(self._on_progress, p),
                cancel=self._should_stop,
                share=True,  # a class's live runs keep a worker and go first
            )
        except Exception as exc:  # shown to the user, never a traceback
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self._schedule(self._on_error, msg)
            return
        self._schedule(self._on_done, res)

    def _should_stop(self) -> bool:
        """Whether the sweep must stop (asked by the sweep's thread a few times a second):
        Cancel, or the served page's socket closed for :data:`CLOSED_SECONDS`, or its
        session destroyed (Bokeh destroys it only some 15-20 s after the tab closed)."""
        if self._cancel.is_set():
            return True
        if not self._served:
            return False
        doc = self._doc
        if not served(doc) or session_ended(doc):
            self._cancel.set()
            return True
        if page_opened(doc):
            self._closed_since = None
            return False
        now = time.monotonic()
        if self._closed_since is None:
            self._closed_since = now
        if now - self._closed_since >= CLOSED_SECONDS:
            self._cancel.set()
            return True
        return False

    def _schedule(self, fn: Any, arg: Any) -> None:
        """Apply an update on the session's event loop (directly when there is none), handed
        over thread-safely (:func:`~dashboard.ui.document.in_document`)."""
        doc = self._doc
        if self._served:
            if not served(doc) or session_ended(doc):  # the tab closed: nothing to update
                self._cancel.set()
                return
            in_document(doc, lambda: fn(arg))
        else:
            fn(arg)

    def _on_progress(self, p: SweepProgress) -> None:
        if self.result is None:
            return
        if p.new_rows:
            have = {r.index for r in self.result.rows}
            fresh = [r for r in p.new_rows if r.index not in have]
            self.result.rows = sorted([*self.result.rows, *fresh], key=lambda r: r.index)
            self._redraw()
            self._grid.object = self._grid_html()
        pct = int(100 * p.tasks_done / p.tasks_total) if p.tasks_total else 100
        self.progress = self._bar.value = pct
        about = "" if self.estimate is None else duration_text(self.estimate.seconds)
        self.status = (
            f"{p.rows_done} of {p.rows_total} points, {p.tasks_done}/{p.tasks_total} tasks"
            + (f" (about {about} of simulation in all)" if about else "")
        )

    def _finish(self) -> None:
        self.running = False
        self._run_button.disabled, self._cancel_button.disabled = False, True

    def _on_done(self, res: SweepResult) -> None:
        self.result = res
        self._redraw()
        self._grid.object = self._grid_html()
        if res.cancelled:
            self.status = f"cancelled: {len(res.rows)} of {len(res.sweep.rows)} points finished"
        else:
            self.progress = self._bar.value = 100
            self.status = f"done: {len(res.rows)} points"
        self._finish()

    def _on_error(self, message: str) -> None:
        self._notify(f"The sweep stopped: {message}")
        self.status = "failed"
        self._finish()

    def cancel(self) -> None:
        """Stop the running sweep: its queued tasks are cancelled and its running ones stop
        on their workers within a slice (``run_sweep``'s stop flag)."""
        self._cancel.set()

    def dispose(self) -> None:
        """Cancel and wait briefly (the session is closing; the sweep's thread stops its
        tasks within a fraction of a second)."""
        self.cancel()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def wait(self, timeout: float | None = None) -> None:
        """Block until the background sweep ends (tests, notebooks)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _on_upload(self, event: Any) -> None:
        upload = uploaded_file(event.new)
        if upload is not None:
            self._file.value = {}  # the bytes are read once: do not keep them
            self.open_saved(upload[1], upload[0])

    def open_saved(self, data: bytes, name: str | None = None) -> bool:
        """Show a saved sweep (the bytes of a ``sweep --out`` file): every upload limit
        checked before anything is built (:func:`~dashboard.simulation.store.load_upload`),
        read away from the event loop in a served page (:func:`~dashboard.ui.upload.read_off_loop`,
        one file per session at a time).  False with a notice if the file is refused; True if
        it was shown (headless) or is being read (served)."""
        label = shorten(name or "the file", 80)
        if self.running:
            self._notify("Wait for the running sweep to finish (or cancel it) first.")
            return False
        if self._reading:
            self._notify(f"{label} arrived while the previous file is still read; try again.")
            return False
        self._reading = True
        self.status = f"reading {label} …"
        shown: list[bool] = []

        def done(res: Any, error: ValueError | None) -> None:
            self._reading = False
            shown.append(self._show_saved(label, res, error))

        read_off_loop(self._doc, load_upload, (bytes(data), label), done)
        return shown[0] if shown else True

    def _show_saved(self, name: str, res: Any, error: ValueError | None) -> bool:
        if error is not None:
            self.status = ""
            self._notify(f"Cannot open this file: {str(error).splitlines()[0]}")
            return False
        if not isinstance(res, SweepResult):
            self.status = ""
            self._notify("This file holds a single run (simulate --save), not a sweep.")
            return False
        self._notice.object = ""
        sweep = res.sweep
        if not sweep.grid:
            self.status = ""
            self._notify("This sweep has no swept field to plot.")
            return False
        if self.running:
            self._notify("Wait for the running sweep to finish (or cancel it) first.")
            return False
        self.problem = sweep.problem
        self.algorithms = list(sweep.algorithms)
        self.runs, self.seed = sweep.runs, sweep.seed
        self.result = res
        self._axes = (sweep.grid[0][0], sweep.grid[1][0] if len(sweep.grid) > 1 else None)
        self.status = f"opened {name}: {len(res.rows)} of {len(sweep.rows)} points"
        self._redraw()
        self._grid.object = self._grid_html()
        return True

    # ------------------------------------------------------------------ view
    def _grid_html(self) -> str:
        """The grid: one row per point, one column per algorithm, filled as points finish."""
        return grid_html(self.result, self.metric)

    @property
    def controls(self) -> pn.Column:
        """The sweep's settings, Run / Cancel and the file opener (a page's sidebar)."""
        if self._controls is None:
            hooks = {"x_values": "sweep-values", "group_values": "sweep-group-values"}
            widgets: dict[str, Any] = {
                "algorithms": pn.widgets.MultiChoice,
                "horizon": pn.widgets.IntInput,  # (a slider over 1..10^7 cannot be aimed)
                "runs": pn.widgets.IntInput,
                "seed": pn.widgets.IntInput,
            }
            for name, css in hooks.items():
                widgets[name] = {"type": pn.widgets.TextInput, "css_classes": [css]}
            form = pn.Param(
                self.param,
                parameters=[*_CONTROLS],
                show_name=False,
                widgets=widgets,
                sizing_mode="stretch_width",
            )
            self._controls = pn.Column(
                form,
                pn.Row(self._run_button, self._cancel_button, sizing_mode="stretch_width"),
                pn.pane.Markdown("Open a saved sweep (`sweep --out FILE`):"),
                self._file,
                sizing_mode="stretch_width",
                css_classes=["sweep-controls"],
            )
        return self._controls

    @property
    def output(self) -> pn.Column:
        """Notice, progress bar and status, the plot and the grid (a page's main area)."""
        if self._output is None:
            status = pn.pane.Markdown(
                pn.bind(escape, self.param.status),
                css_classes=["sweep-status"],
                styles={"font-size": "18px"},
            )
            self._output = pn.Column(
                self._notice,
                self._bar,
                status,
                self._plot,
                self._grid,
                sizing_mode="stretch_width",
                css_classes=["sweep-output"],
            )
        return self._output

    def __panel__(self) -> Any:
        return pn.Row(pn.Column(self.controls, width=320), self.output, sizing_mode="stretch_width")

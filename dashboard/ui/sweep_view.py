"""Sweep Viewer: choose one or two swept fields and their values, watch the grid fill in live.

The view builds a sweep (:func:`~dashboard.simulation.sweep.make_sweep`: every check before
any work, errors shown as an escaped inline notice), then runs it on the Dask client
(:func:`~dashboard.simulation.sweep.run_sweep`: a shared local cluster, the cluster named by
``$BANDIT_DASHBOARD_SCHEDULER``, or in-process for tiny sweeps) from a background thread, so the
server's event loop never waits for work.  Each finished task reports progress; the updates are
handed to the session's event loop (:func:`~dashboard.ui.document.in_document`, thread-safe;
applied directly when there is no served document, e.g. in tests and notebooks).  Cancel (or
closing the session) cancels the pending tasks.

Plots: the chosen metric (final regret, oracle queries or adaptivity) against the first swept
field, mean over repetitions with a +-1 sd band, one line per algorithm (and per value of the
second swept field).  Against the horizon the x axis is logarithmic and, for queries and
adaptivity, the shape ``d log log T`` is drawn for reference (scaled to the first point).

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
from typing import Any

import holoviews as hv
import numpy as np
import panel as pn
import param

from ..simulation import catalogue
from ..simulation.sweep import GRID_FIELDS, SweepProgress, SweepResult, make_sweep, run_sweep
from .document import in_document, on_click, served, session_ended
from .safe import escape

__all__ = ["METRICS", "SweepView", "parse_values", "sweep_plot"]

if "bokeh" not in hv.Store.renderers:  # the Bokeh backend, without notebook output
    hv.renderer("bokeh")

#: Metric label -> summary key of a row's per-algorithm result.
METRICS: dict[str, str] = {
    "final regret": "final_regret",
    "oracle queries": "queries",
    "oracle adaptivity": "adaptivity",
}
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
#: The grid table and buttons, readable on a projector.
_GRID_CSS = (
    "table.sweep-grid { border-collapse: collapse; font-size: 16px; margin-top: 8px; }"
    "table.sweep-grid th, table.sweep-grid td { padding: 4px 14px; text-align: right;"
    " border-bottom: 1px solid #ddd; } table.sweep-grid th { background: #f2f7fb; }"
)
_BIG_BUTTON = ":host .bk-btn { font-size: 16px; padding: 8px 18px; }"
_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


def parse_values(text: str) -> list[Any]:
    """``"10, 20, 1e3, sine"`` -> ``[10, 20, 1000, "sine"]`` (ints, floats, else text)."""
    out: list[Any] = []
    for part in str(text).split(","):
        s = part.strip()
        if not s:
            continue
        try:
            f = float(s)
        except ValueError:
            out.append(s)
            continue
        out.append(int(f) if f.is_integer() and math.isfinite(f) else f)
    return out


def _metric_values(row: Any, algorithm: str, metric: str) -> np.ndarray:
    r = row.result[algorithm]
    if metric == "final_regret":
        return np.asarray(r.final_regret, dtype=float)
    curve = r.queries if metric == "queries" else r.adaptivity
    return np.asarray(curve[:, -1], dtype=float) if curve.size else np.zeros(r.runs)


def sweep_plot(
    result: SweepResult | None,
    x: str,
    metric: str = "final regret",
    group: str | None = None,
) -> hv.Overlay:
    """The metric against swept field ``x``: mean line, points and +-1 sd band per algorithm
    (and per value of ``group``).  Accepts a partial or empty result."""
    key = METRICS[metric]
    xdim = hv.Dimension(x, label="T" if x == "horizon" else x)
    ydim = hv.Dimension("value", label=metric)
    layers: list[Any] = []
    rows = result.rows if result is not None else []
    algs = result.sweep.algorithms if result is not None else []
    gvals = sorted({str(r.point.get(group)) for r in rows}) if group else [""]
    numeric = all(isinstance(r.point.get(x), (int, float)) for r in rows)
    i = 0
    for alg in algs:
        for g in gvals:
            sel = [r for r in rows if not group or str(r.point.get(group)) == g]
            if not sel or not numeric:
                i += 1
                continue
            xs = np.array([float(r.point[x]) for r in sel])
            vals = [_metric_values(r, alg, key) for r in sel]
            mean = np.array([v.mean() for v in vals])
            sd = np.array([v.std(ddof=1) if v.size > 1 else 0.0 for v in vals])
            order = np.argsort(xs)
            xs, mean, sd = xs[order], mean[order], sd[order]
            label = f"{alg}" + (f", {group} = {g}" if group else "")
            color = _COLORS[i % len(_COLORS)]
            i += 1
            layers.append(
                hv.Area((xs, mean - sd, mean + sd), kdims=[xdim], vdims=[ydim, "hi"]).opts(
                    color=color, alpha=0.2, line_alpha=0
                )
            )
            layers.append(
                hv.Curve((xs, mean), kdims=[xdim], vdims=[ydim], label=label).opts(
                    color=color, line_width=3, tools=["hover"]
                )
            )
            layers.append(
                hv.Scatter((xs, mean), kdims=[xdim], vdims=[ydim]).opts(color=color, size=7)
            )
    if x == "horizon" and key != "final_regret" and layers and rows:
        d = float(rows[0].result.spec.get("d", 1))
        xs = np.array(sorted({float(r.point[x]) for r in rows}))
        shape = d * np.log(np.log(np.maximum(xs, 3.0)))
        first = layers[1].dimension_values(1)[0] if len(layers) > 1 else 1.0
        scale = first / shape[0] if shape[0] > 0 else 1.0
        layers.append(
            hv.Curve((xs, scale * shape), kdims=[xdim], vdims=[ydim], label="d log log T").opts(
                color="#777777", line_dash="dashed", line_width=2
            )
        )
    if not layers:
        layers.append(hv.Curve([], kdims=[xdim], vdims=[ydim]))
    return hv.Overlay(layers).opts(
        title=f"{metric} against {x}",
        logx=x == "horizon",
        responsive=True,
        height=320,
        min_height=320,
        show_grid=True,
        legend_position="top_left",
        fontsize={"title": 14, "labels": 13, "xticks": 12, "yticks": 12, "legend": 12},
    )


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
        self._file = pn.widgets.FileInput(accept=".jsonl,.json", multiple=False)
        self._file.param.watch(
            lambda e: e.new and self.open_saved(e.new, self._file.filename), "value"
        )
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
        """The sweep the current choices describe (ValueError if invalid)."""
        grid = {self.x_field: parse_values(self.x_values)}
        if self._group() is not None:
            if self._group() == self.x_field:
                raise ValueError("choose two different fields to sweep")
            grid[self._group()] = parse_values(self.group_values)
        return make_sweep(
            self.problem,
            list(self.algorithms),
            horizon=self.horizon,
            runs=self.runs,
            seed=self.seed,
            grid=grid,
        )

    def _notify(self, message: str, kind: str = "danger") -> None:
        text = html.escape(message)
        self._notice.object = f'<div class="alert alert-{kind}" role="alert">{text}</div>'

    def run(self) -> bool:
        """Validate and start the sweep in the background; False (with a notice) if invalid."""
        if self.running:
            return False
        try:
            sweep = self.build()
        except ValueError as exc:
            self._notify(f"Cannot run this sweep: {str(exc).splitlines()[0]}")
            return False
        self._notice.object = ""
        self._cancel = threading.Event()
        self.result = SweepResult(sweep, [])
        self._axes = (self.x_field, self._group())
        self.running, self.progress, self.status = True, 0, "starting"
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
                cancel=self._cancel,
            )
        except Exception as exc:  # shown to the user, never a traceback
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self._schedule(self._on_error, msg)
            return
        self._schedule(self._on_done, res)

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
        self.status = (
            f"{p.rows_done} of {p.rows_total} points, {p.tasks_done}/{p.tasks_total} tasks"
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
        """Stop the running sweep (pending tasks are cancelled)."""
        self._cancel.set()

    def dispose(self) -> None:
        """Cancel and wait briefly (the session is closing)."""
        self.cancel()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def wait(self, timeout: float | None = None) -> None:
        """Block until the background sweep ends (tests, notebooks)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _on_upload(self, event: Any) -> None:
        if event.new:
            self.open_saved(event.new, self._file.filename)

    def open_saved(self, data: bytes, name: str | None = None) -> bool:
        """Show a saved sweep (the bytes of a ``sweep --out`` file); False with a notice if
        the file is not a sweep of this dashboard."""
        from ..simulation.store import load_experiment

        if self.running:
            self._notify("Wait for the running sweep to finish (or cancel it) first.")
            return False
        try:
            res = load_experiment(bytes(data), name or "the file")
        except ValueError as exc:
            self._notify(f"Cannot open this file: {str(exc).splitlines()[0]}")
            return False
        if not isinstance(res, SweepResult):
            self._notify("This file holds a single run (simulate --save), not a sweep.")
            return False
        self._notice.object = ""
        sweep = res.sweep
        if not sweep.grid:
            self._notify("This sweep has no swept field to plot.")
            return False
        self.problem = sweep.problem
        self.algorithms = list(sweep.algorithms)
        self.runs, self.seed = sweep.runs, sweep.seed
        self.result = res
        self._axes = (sweep.grid[0][0], sweep.grid[1][0] if len(sweep.grid) > 1 else None)
        self.status = f"opened {name or 'file'}: {len(res.rows)} of {len(sweep.rows)} points"
        self._redraw()
        self._grid.object = self._grid_html()
        return True

    # ------------------------------------------------------------------ view
    def _grid_html(self) -> str:
        """The grid: one row per point, one column per algorithm, filled as points finish."""
        if self.result is None:
            return ""
        sweep = self.result.sweep
        done = {r.index: r for r in self.result.rows}
        keys = [k for k, _ in sweep.grid]
        head = "".join(f"<th>{html.escape(str(k))}</th>" for k in [*keys, *sweep.algorithms])
        body = []
        key = METRICS[self.metric]
        for i, point in enumerate(sweep.points):
            cells = [f"<td>{html.escape(str(point[k]))}</td>" for k in keys]
            for alg in sweep.algorithms:
                if i in done:
                    v = _metric_values(done[i], alg, key)
                    cells.append(f"<td>{v.mean():,.1f}</td>")
                else:
                    cells.append("<td>…</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        return (
            f"<style>{_GRID_CSS}</style>"
            f'<table class="sweep-grid"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>"
        )

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

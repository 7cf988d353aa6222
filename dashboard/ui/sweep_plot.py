"""The Sweep tab's plot and table: a metric against the swept field, mean and +-1 sd band per
algorithm (and per value of a second swept field), the grid of means, and the parser of its
comma-separated values.

Against the horizon the x axis is logarithmic and, for queries and adaptivity, the shape
``d log log T`` is drawn for reference (scaled to the first point).  Plain functions of a
(possibly partial) :class:`~dashboard.simulation.sweep.SweepResult`; the view is
:mod:`dashboard.ui.sweep_view`.
"""

from __future__ import annotations

import html
import math
from typing import Any

import holoviews as hv
import numpy as np

from ..simulation.sweep import SweepResult
from .plots.common import PALETTE, REF_COLOR

__all__ = ["METRICS", "grid_html", "metric_values", "parse_values", "sweep_plot"]

if "bokeh" not in hv.Store.renderers:  # the Bokeh backend, without notebook output
    hv.renderer("bokeh")

#: Metric label -> summary key of a row's per-algorithm result.
METRICS: dict[str, str] = {
    "final regret": "final_regret",
    "oracle queries": "queries",
    "oracle adaptivity": "adaptivity",
}
#: The grid table, readable on a projector.
_GRID_CSS = (
    "table.sweep-grid { border-collapse: collapse; font-size: 16px; margin-top: 8px; }"
    "table.sweep-grid th, table.sweep-grid td { padding: 4px 14px; text-align: right;"
    " border-bottom: 1px solid #ddd; } table.sweep-grid th { background: #f2f7fb; }"
)
#: One colour per line (algorithm, or algorithm and group value): the dashboard's palette, every
#: colour >= 3:1 against both themes' plot backgrounds (:mod:`dashboard.ui.theme`).
_COLORS = PALETTE
#: Height with the legend below the frame (it never covers a line).
_HEIGHT = 440


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


def metric_values(row: Any, algorithm: str, metric: str) -> np.ndarray:
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
    (and per value of ``group``), colours from the dashboard's palette, the legend below the
    frame.  Accepts a partial or empty result."""
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
            vals = [metric_values(r, alg, key) for r in sel]
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
                color=REF_COLOR, line_dash="dashed", line_width=2
            )
        )
    if not layers:
        layers.append(hv.Curve([], kdims=[xdim], vdims=[ydim]))
    return hv.Overlay(layers).opts(
        title=f"{metric} against {x}",
        logx=x == "horizon",
        responsive=True,
        height=_HEIGHT,
        min_height=_HEIGHT,
        show_grid=True,
        legend_position="bottom",
        legend_cols=3,
        legend_opts={
            "margin": 8,
            "padding": 6,
            "spacing": 12,
            "label_height": 24,
            "glyph_height": 22,
        },
        fontsize={"title": 14, "labels": 13, "xticks": 12, "yticks": 12, "legend": 12},
    )


def grid_html(result: SweepResult | None, metric: str = "final regret") -> str:
    """The grid: one row per point, one column per algorithm, filled as points finish (the
    mean of ``metric``; every key and value escaped)."""
    if result is None:
        return ""
    sweep = result.sweep
    done = {r.index: r for r in result.rows}
    keys = [k for k, _ in sweep.grid]
    head = "".join(f"<th>{html.escape(str(k))}</th>" for k in [*keys, *sweep.algorithms])
    body = []
    key = METRICS[metric]
    for i, point in enumerate(sweep.points):
        cells = [f"<td>{html.escape(str(point[k]))}</td>" for k in keys]
        for alg in sweep.algorithms:
            if i in done:
                v = metric_values(done[i], alg, key)
                cells.append(f"<td>{v.mean():,.1f}</td>")
            else:
                cells.append("<td>…</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f"<style>{_GRID_CSS}</style>"
        f'<table class="sweep-grid"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )

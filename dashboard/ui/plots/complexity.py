"""Query and adaptivity complexity with the references T and d log log T."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import holoviews as hv
import numpy as np
from bokeh.core.properties import value

from ..live import LivePlot
from .base import PlotModule
from .common import (
    DT,
    REF_COLOR,
    T_DIM,
    _base_opts,
    _get,
    _legend_stub,
    _names,
    _positive,
    _spec,
    _xlim,
    algorithm_colors,
    t_format,
)


def complexity_frames(
    result: Any, algorithms: Sequence[str] | None = None
) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`complexity_plot`'s layers: per algorithm the mean cumulative
    queries then adaptivity ``{t, calls}``, then (if there are algorithms) two empty layers,
    the legend's line-style key, then the references ``T`` and ``d log log T``."""
    names = _names(result, algorithms)
    frames: list[dict[str, np.ndarray]] = []
    for name in names:
        r = _get(result, name)
        if r is not None and r.times.size:
            t = r.times.astype(float)
            q = r.queries.mean(axis=0).astype(float)
            a = r.adaptivity.mean(axis=0).astype(float)
        else:
            t = q = a = np.zeros(0)
        frames.append({"t": t, "calls": _positive(q)})
        frames.append({"t": t, "calls": _positive(a)})
    if names:  # the line-style key of the legend (empty: drawn in the legend only)
        frames += [_legend_stub({"t": np.zeros(0), "calls": np.zeros(0)}) for _ in _STYLE_KEY]
    T = float(result.horizon) if result is not None else 0.0
    rt = np.array([1.0, T]) if T >= 1 else np.zeros(0)
    frames.append({"t": rt, "calls": rt.copy()})
    frames.append({"t": rt, "calls": np.full(rt.size, max(_dloglog(result), 1.0))})
    return frames


def _dloglog(result: Any) -> float:
    if result is None:
        return 0.0
    d = float(_spec(result).get("d", 1))
    return d * np.log(max(np.log(max(float(result.horizon), 3.0)), 1.0))


#: Legend key of the complexity plot: line style -> quantity.
_STYLE_KEY = (("solid", "solid: queries"), ("dashed", "dashed: adaptivity"))


def complexity_plot(result: Any, algorithms: Sequence[str] | None = None) -> hv.Overlay:
    """Cumulative query complexity (solid) and adaptivity complexity (dashed), mean over runs,
    on a log y axis, with the references ``T`` (one call per round) and ``d log log T``
    (the order of SROQ's query complexity, Theorem 2 of the combinatorial paper).

    A compact legend: each algorithm's name in its colour (its solid queries curve is the
    legend entry), then the line-style key "solid: queries" / "dashed: adaptivity" in grey,
    then the two references (grey, dotted and dash-dotted).  Curve labels stay
    ``"<name> queries"`` / ``"<name> adaptivity"``; a hook renames the legend entries.
    """
    names = _names(result, algorithms)
    colors = algorithm_colors(names)
    problem = _spec(result).get("problem", "cmab")
    what = "oracle calls" if problem == "cmab" else "expensive computations"
    ydim = hv.Dimension("calls", label=f"cumulative {what}")
    frames = complexity_frames(result, names)
    layers: list[Any] = []
    for i, name in enumerate(names):
        for j, (kind, dash) in enumerate((("queries", "solid"), ("adaptivity", "dashed"))):
            layers.append(
                hv.Curve(
                    frames[2 * i + j],
                    kdims=[T_DIM],
                    vdims=[ydim],
                    label=f"{name} {kind}",
                    datatype=DT,
                ).opts(
                    color=colors[name],
                    line_width=3,
                    line_dash=dash,
                    tools=["hover"],
                    show_legend=kind == "queries",
                    clone=False,
                )
            )
    n = 2 * len(names)
    if names:
        for frame, (dash, label) in zip(frames[n : n + 2], _STYLE_KEY):
            layers.append(
                hv.Curve(frame, kdims=[T_DIM], vdims=[ydim], label=label, datatype=DT).opts(
                    color=REF_COLOR, line_dash=dash, line_width=3, clone=False
                )
            )
    for frame, label, dash in (
        (frames[-2], "T (one call per round)", "dotted"),
        (frames[-1], "d log log T", "dashdot"),
    ):
        layers.append(
            hv.Curve(frame, kdims=[T_DIM], vdims=[ydim], label=label, datatype=DT).opts(
                color=REF_COLOR, line_dash=dash, line_width=2, clone=False
            )
        )
    return hv.Overlay(layers).opts(
        **_base_opts(
            title="Queries and adaptivity",
            logy=True,
            legend_position="bottom",
            xlim=_xlim(result) or (None, None),
            xformatter=t_format(),
            hooks=[_legend_names(names)],
        )
    )


def _legend_names(names: Sequence[str]) -> Any:
    """A HoloViews hook renaming the legend entries ``"<name> queries"`` to ``"<name>"``."""
    renames = {f"{name} queries": name for name in names}

    def hook(plot: Any, _element: Any) -> None:
        for legend in plot.state.legend:
            for item in legend.items:
                label = item.label.get("value") if isinstance(item.label, dict) else None
                label = label if label is not None else getattr(item.label, "value", None)
                if label in renames:
                    item.label = value(renames[label])  # a value, not a column name

    return hook


PLOT = PlotModule(
    key="complexity",
    caption="Mean over runs. Solid: queries (number of calls); dashed: adaptivity "
    "(sequential rounds of calls). Grey: the references T and d log log T.",
    make=lambda ctx: LivePlot(
        "complexity",
        lambda data: complexity_plot(data, ctx.algorithms),
        ctx.result,
        frames=lambda data: complexity_frames(data, ctx.algorithms),
        y_keys=("calls",),
        x_range=ctx.x_range,
    ),
)

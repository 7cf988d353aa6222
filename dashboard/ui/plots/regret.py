"""Cumulative regret per algorithm with its band and the paper's rate shape."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import holoviews as hv
import numpy as np

from ...simulation.theory import rate_shape
from ..live import LivePlot
from .base import PlotContext, PlotModule
from .common import (
    BAND_POINTS,
    DT,
    REF_COLOR,
    T_DIM,
    T_FORMAT,
    T_LOG_DIM,
    _base_opts,
    _get,
    _names,
    _positive,
    _spec,
    _thin,
    _xlim,
    algorithm_colors,
)


def regret_frames(
    result: Any,
    algorithms: Sequence[str] | None = None,
    log_axes: bool = False,
    show_rate: bool = True,
    problem: str | None = None,
) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`regret_plot`'s layers, in layer order (plain numpy, no HoloViews):
    per algorithm a band ``{x, regret, regret_hi}`` then a curve ``{x, regret, std}``, then the
    rate shape ``{x, regret}``, where ``x`` is ``t`` (``t_log`` with log axes)."""
    names = _names(result, algorithms)
    x = "t_log" if log_axes else "t"
    frames: list[dict[str, np.ndarray]] = []
    finals: list[float] = []
    for name in names:
        r = _get(result, name)
        if r is not None and r.times.size:
            t = r.times.astype(float)
            mean = r.regret.mean(axis=0)
            std = r.regret.std(axis=0) if r.runs > 1 else np.zeros_like(mean)
            finals.append(float(mean[-1]))
        else:
            t = mean = std = np.zeros(0)
        keep = _thin(t.size, BAND_POINTS)
        lo = np.maximum(mean - std, 0.0)[keep]
        hi = (mean + std)[keep]
        if log_axes:
            lo, hi, mean = np.maximum(lo, 1e-3), np.maximum(hi, 1e-3), _positive(mean)
        frames.append({x: t[keep], "regret": lo, "regret_hi": hi})
        frames.append({x: t, "regret": mean, "std": std})
    if show_rate:
        problem = _spec(result).get("problem", problem or "cmab")
        rt = np.zeros(0)
        if result is not None and result.t > 0:
            rt = (
                np.geomspace(1, max(result.t, 1), 200)
                if log_axes
                else np.linspace(1, result.t, 200)
            )
        shape = rate_shape(problem, rt, _spec(result))
        if finals and shape.size and shape[-1] > 0:
            shape = shape * (float(np.median(finals)) / shape[-1])
        frames.append({x: rt, "regret": _positive(shape) if log_axes else shape})
    return frames


def regret_plot(
    result: Any,
    algorithms: Sequence[str] | None = None,
    log_axes: bool = False,
    show_rate: bool = True,
    problem: str | None = None,
) -> hv.Overlay:
    """Cumulative regret: mean over repetitions with a +-1 standard deviation band, per
    algorithm, and the theoretical rate shape scaled to the median final mean regret.

    Parameters
    ----------
    result : SimulationResult or None
        A (partial) result.
    algorithms : names, optional
        Fixes the layers (defaults to the result's algorithms).
    log_axes : bool
        Log-log axes (the x dimension is then ``t_log``, not linked to the linear plots).
    show_rate : bool
        Draw the "rate shape" reference curve.
    problem : str, optional
        The problem whose rate is drawn before any result exists (the legend's formula is
        fixed when the plot is first drawn; default: the result's, else cmab).
    """
    names = _names(result, algorithms)
    colors = algorithm_colors(names)
    tdim = T_LOG_DIM if log_axes else T_DIM
    ydim = hv.Dimension("regret", label="cumulative regret")
    frames = regret_frames(result, names, log_axes, show_rate, problem)
    layers: list[Any] = []
    for k, name in enumerate(names):
        band = hv.Area(
            frames[2 * k], kdims=[tdim], vdims=[ydim, "regret_hi"], label=name, datatype=DT
        ).opts(color=colors[name], alpha=0.18, line_alpha=0, show_legend=False, clone=False)
        curve = hv.Curve(
            frames[2 * k + 1],
            kdims=[tdim],
            vdims=[ydim, hv.Dimension("std", label="sd over runs")],
            label=name,
            datatype=DT,
        ).opts(color=colors[name], line_width=3, tools=["hover"], clone=False)
        layers += [band, curve]
    if show_rate:
        problem = _spec(result).get("problem", problem or "cmab")
        formula = "√(d t log K)" if problem == "semiparametric" else "√(m d t log t)"
        layers.append(
            hv.Curve(
                frames[-1],
                kdims=[tdim],
                vdims=[ydim],
                label=f"rate shape {formula}",
                datatype=DT,
            ).opts(color=REF_COLOR, line_dash="dashed", line_width=2, clone=False)
        )
    return hv.Overlay(layers).opts(
        **_base_opts(
            title="Cumulative regret (mean ± 1 sd over runs)",
            legend_position="right",
            logx=log_axes,
            logy=log_axes,
            xlim=_xlim(result, log_axes) or (None, None),
            xformatter=T_FORMAT,
        )
    )


def _name_renderers(names: Sequence[str]) -> Any:
    """Name the mean-curve renderers and sources ``regret-<algorithm>`` (a stable handle for
    browser tests and page scripts)."""

    def name(hv_plot: Any) -> None:
        for sub in getattr(hv_plot, "subplots", {}).values():
            element = sub.current_frame
            if type(element) is hv.Curve and element.label in names:
                for handle in ("glyph_renderer", "source"):
                    model = sub.handles.get(handle)
                    if model is not None:
                        model.name = f"regret-{element.label}" + (
                            "" if handle == "glyph_renderer" else "-source"
                        )

    return name


def _make(ctx: PlotContext) -> LivePlot:
    names, log = list(ctx.algorithms), ctx.log_axes
    return LivePlot(
        "regret",
        lambda data: regret_plot(data, names, log_axes=log, problem=ctx.problem),
        ctx.result,
        on_render=_name_renderers(names),
        frames=lambda data: regret_frames(data, names, log_axes=log, problem=ctx.problem),
        y_keys=("regret", "regret_hi"),
        x_range=None if log else ctx.x_range,  # the log-log plot has its own axis
    )


PLOT = PlotModule(key="regret", caption="", wide=True, make=_make)

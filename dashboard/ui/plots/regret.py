"""Cumulative regret per algorithm with its band and the paper's rate shape."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import holoviews as hv
import numpy as np

from ...simulation.theory import rate_shape
from ..live import LivePlot
from .base import PlotContext, PlotModule, Saved
from .common import (
    DT,
    REF_COLOR,
    T_DIM,
    T_LOG_DIM,
    _base_opts,
    _get,
    _names,
    _positive,
    _spec,
    _xlim,
    algorithm_colors,
    band_layers,
    band_title,
    subtitle_hook,
    t_format,
)


def _algorithm_frames(r: Any, x: str, band: str, log_axes: bool) -> list[dict[str, np.ndarray]]:
    """Band area, mean curve and run traces of one algorithm's regret (see ``band_layers``)."""
    if r is not None and r.times.size:
        area, curve, traces = band_layers(r.times, r.regret, band, floor=0.0)
    else:
        area, curve, traces = band_layers(np.zeros(0), None, band)
    if log_axes:
        area["lo"], area["hi"] = np.maximum(area["lo"], 1e-3), np.maximum(area["hi"], 1e-3)
        curve["mean"], traces["y"] = _positive(curve["mean"]), _positive(traces["y"])
    return [
        {x: area["x"], "regret": area["lo"], "regret_hi": area["hi"]},
        {x: curve["x"], "regret": curve["mean"], "band_lo": curve["lo"], "band_hi": curve["hi"]},
        {x: traces["x"], "regret": traces["y"]},
    ]


def regret_frames(
    result: Any,
    algorithms: Sequence[str] | None = None,
    log_axes: bool = False,
    show_rate: bool = True,
    problem: str | None = None,
    band: str = "sd",
    saved: Saved | None = None,
) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`regret_plot`'s layers, in layer order (plain numpy, no HoloViews):
    per algorithm a band area ``{x, regret, regret_hi}``, the mean curve ``{x, regret,
    band_lo, band_hi}`` and the run traces ``{x, regret}`` (every run, NaN-separated, only for
    ``band = "runs"``), then the rate shape ``{x, regret}``, then the same three layers per
    algorithm of the ``saved`` result; ``x`` is ``t`` (``t_log`` with log axes).  The band is
    :func:`dashboard.simulation.bands.band` of the frame's curves (``band``: a key of
    :data:`~dashboard.simulation.bands.BANDS`)."""
    names = _names(result, algorithms)
    x = "t_log" if log_axes else "t"
    frames: list[dict[str, np.ndarray]] = []
    finals: list[float] = []
    for name in names:
        r = _get(result, name)
        frames += _algorithm_frames(r, x, band, log_axes)
        if r is not None and r.times.size:
            finals.append(float(r.regret[:, -1].mean()))
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
    if saved is not None:
        for r in saved.result.results:
            frames += _algorithm_frames(r, x, band, log_axes)
    return frames


def regret_plot(
    result: Any,
    algorithms: Sequence[str] | None = None,
    log_axes: bool = False,
    show_rate: bool = True,
    problem: str | None = None,
    band: str = "sd",
    saved: Saved | None = None,
) -> hv.Overlay:
    """Cumulative regret: mean over repetitions with a band (``band``, default mean +- 1 sd,
    ddof = 1; ``"runs"``: every run as a thin line) per algorithm, and the theoretical rate
    shape scaled to the median final mean regret.

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
    band : str
        A key of :data:`dashboard.simulation.bands.BANDS`.
    saved : Saved, optional
        A saved result drawn dashed over the live one, labelled ``"<algorithm> (<note>)"``.
    """
    names = _names(result, algorithms)
    colors = algorithm_colors(names)
    tdim = T_LOG_DIM if log_axes else T_DIM
    ydim = hv.Dimension("regret", label="cumulative regret")
    frames = regret_frames(result, names, log_axes, show_rate, problem, band, saved)
    hover = [ydim, hv.Dimension("band_lo", label="band low"), "band_hi"]

    def banded(k: int, label: str, color: str, dash: str, width: float) -> list[Any]:
        area, curve, traces = frames[k : k + 3]
        return [
            hv.Area(area, kdims=[tdim], vdims=[ydim, "regret_hi"], label=label, datatype=DT).opts(
                color=color,
                alpha=0.18 if dash == "solid" else 0.1,
                line_alpha=0,
                show_legend=False,
                clone=False,
            ),
            hv.Curve(curve, kdims=[tdim], vdims=hover, label=label, datatype=DT).opts(
                color=color, line_width=width, line_dash=dash, tools=["hover"], clone=False
            ),
            hv.Curve(traces, kdims=[tdim], vdims=[ydim], label=label, datatype=DT).opts(
                color=color,
                line_width=1,
                line_alpha=0.45,
                line_dash=dash,
                show_legend=False,
                clone=False,
            ),
        ]

    layers: list[Any] = []
    for k, name in enumerate(names):
        layers += banded(3 * k, name, colors[name], "solid", 3)
    if show_rate:
        problem = _spec(result).get("problem", problem or "cmab")
        formula = "√(d t log K)" if problem == "semiparametric" else "√(m d t log t)"
        layers.append(
            hv.Curve(
                frames[3 * len(names)],
                kdims=[tdim],
                vdims=[ydim],
                label=f"rate shape {formula}",
                datatype=DT,
            ).opts(color=REF_COLOR, line_dash="dashed", line_width=2, clone=False)
        )
    if saved is not None:
        first = 3 * len(names) + int(show_rate)
        saved_colors = algorithm_colors([r.algorithm for r in saved.result.results])
        for k, r in enumerate(saved.result.results):
            label = f"{r.algorithm} ({saved.note})"
            layers += banded(first + 3 * k, label, saved_colors[r.algorithm], "dashed", 2.5)
    return hv.Overlay(layers).opts(
        **_base_opts(
            title="Cumulative regret",
            legend_position="bottom",
            legend_cols=3,
            logx=log_axes,
            logy=log_axes,
            xlim=_xlim(result, log_axes) or (None, None),
            xformatter=t_format(),
            hooks=[subtitle_hook(band_title(band))],
        )
    )


def _name_renderers(names: Sequence[str]) -> Any:
    """Name the mean-curve renderers and sources ``regret-<algorithm>`` (a stable handle for
    browser tests and page scripts)."""

    def name(hv_plot: Any) -> None:
        for sub in getattr(hv_plot, "subplots", {}).values():
            element = sub.current_frame
            mean_curve = "band_lo" in [d.name for d in getattr(element, "vdims", [])]
            if type(element) is hv.Curve and element.label in names and mean_curve:
                for handle in ("glyph_renderer", "source"):
                    model = sub.handles.get(handle)
                    if model is not None:
                        model.name = f"regret-{element.label}" + (
                            "" if handle == "glyph_renderer" else "-source"
                        )

    return name


def _make(ctx: PlotContext) -> LivePlot:
    names, log = list(ctx.algorithms), ctx.log_axes
    kw = {"log_axes": log, "problem": ctx.problem, "band": ctx.band, "saved": ctx.saved}
    return LivePlot(
        "regret",
        lambda data: regret_plot(data, names, **kw),
        ctx.result,
        on_render=_name_renderers(names),
        frames=lambda data: regret_frames(data, names, **kw),
        y_keys=("regret", "regret_hi"),
        x_range=None if log else ctx.x_range,  # the log-log plot has its own axis
    )


PLOT = PlotModule(key="regret", caption="", wide=True, make=_make)

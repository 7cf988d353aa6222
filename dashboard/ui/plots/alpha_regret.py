"""alpha-regret of the algorithms with an approximate oracle (Theorem 7, Appendix A.3).

alpha-AROQ-CMAB is analysed with ``R^alpha(T) = alpha T r(a*) - sum_t r(a_t)`` (Theorem 7), not
with the ordinary regret: an alpha-approximate oracle may settle on an action worth only alpha
of the best.  The plot draws, per such algorithm, the mean alpha-regret (solid, with the
chosen band over runs) beside its ordinary regret (dashed), so the student sees the gap
``(1 - alpha) t r(a*)`` and whether the greedy oracle did better than its guarantee
(alpha-regret below zero).  Shown only when such an algorithm is chosen (``catalogue.uses_alpha``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import holoviews as hv
import numpy as np

from ...simulation import catalogue
from ..live import LivePlot
from .base import PlotContext, PlotModule
from .common import (
    DT,
    T_DIM,
    _base_opts,
    _get,
    _names,
    _xlim,
    algorithm_colors,
    band_layers,
    band_title,
    subtitle_hook,
    t_format,
)


def _alpha_names(algorithms: Sequence[str]) -> list[str]:
    return [a for a in algorithms if catalogue.uses_alpha(a)]


def alpha_regret_frames(
    result: Any, algorithms: Sequence[str] | None = None, band: str = "sd"
) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`alpha_regret_plot`'s layers, per algorithm with an approximate
    oracle: a band area ``{t, alpha_regret, alpha_regret_hi}``, the mean alpha-regret
    ``{t, alpha_regret, band_lo, band_hi}``, the run traces ``{t, alpha_regret}`` (only for
    ``band = "runs"``) and the mean ordinary regret ``{t, alpha_regret}``.  The band is
    :func:`dashboard.simulation.bands.band` of the frame's curves."""
    names = _alpha_names(_names(result, algorithms))
    frames: list[dict[str, np.ndarray]] = []
    for name in names:
        r = _get(result, name)
        a = None if r is None else r.alpha_regret
        if a is not None and r.times.size:
            area, curve, traces = band_layers(r.times, a, band)
            plain = {"t": r.times.astype(float), "alpha_regret": r.regret.mean(axis=0)}
        else:
            area, curve, traces = band_layers(np.zeros(0), None, band)
            plain = {"t": np.zeros(0), "alpha_regret": np.zeros(0)}
        frames.append({"t": area["x"], "alpha_regret": area["lo"], "alpha_regret_hi": area["hi"]})
        frames.append(
            {
                "t": curve["x"],
                "alpha_regret": curve["mean"],
                "band_lo": curve["lo"],
                "band_hi": curve["hi"],
            }
        )
        frames.append({"t": traces["x"], "alpha_regret": traces["y"]})
        frames.append(plain)
    return frames


def alpha_regret_plot(
    result: Any, algorithms: Sequence[str] | None = None, band: str = "sd"
) -> hv.Overlay:
    """alpha-regret (mean with the chosen band over runs, default +- 1 sd, ddof = 1; or every
    run as a thin line) and ordinary regret (dashed) of each chosen algorithm with an
    approximate oracle; the others are not drawn."""
    names = _alpha_names(_names(result, algorithms))
    colors = algorithm_colors(_names(result, algorithms))
    ydim = hv.Dimension("alpha_regret", label="cumulative (alpha-)regret")
    frames = alpha_regret_frames(result, names, band)
    hover = [ydim, hv.Dimension("band_lo", label="band low"), "band_hi"]
    layers: list[Any] = []
    for k, name in enumerate(names):
        area, curve, traces, plain = frames[4 * k : 4 * k + 4]
        layers.append(
            hv.Area(area, kdims=[T_DIM], vdims=[ydim, "alpha_regret_hi"], datatype=DT).opts(
                color=colors[name], alpha=0.18, line_alpha=0, show_legend=False, clone=False
            )
        )
        layers.append(
            hv.Curve(
                curve, kdims=[T_DIM], vdims=hover, label=f"{name}: alpha-regret", datatype=DT
            ).opts(color=colors[name], line_width=3, tools=["hover"], clone=False)
        )
        layers.append(
            hv.Curve(traces, kdims=[T_DIM], vdims=[ydim], datatype=DT).opts(
                color=colors[name], line_width=1, line_alpha=0.45, show_legend=False, clone=False
            )
        )
        layers.append(
            hv.Curve(plain, kdims=[T_DIM], vdims=[ydim], label=f"{name}: regret", datatype=DT).opts(
                color=colors[name], line_dash="dashed", line_width=2, clone=False
            )
        )
    alpha = (result.spec or {}).get("alpha") if result is not None else None
    detail = band_title(band)
    if alpha is not None:
        detail += f"; alpha = {float(alpha):g}"
    return hv.Overlay(layers).opts(
        **_base_opts(
            title="alpha-regret (Theorem 7)",
            hooks=[subtitle_hook(detail)],
            legend_position="bottom",
            xlim=_xlim(result) or (None, None),
            xformatter=t_format(),
        )
    )


def _make(ctx: PlotContext) -> LivePlot:
    names = list(ctx.algorithms)
    return LivePlot(
        "alpha-regret",
        lambda data: alpha_regret_plot(data, names, ctx.band),
        ctx.result,
        frames=lambda data: alpha_regret_frames(data, names, ctx.band),
        y_keys=("alpha_regret", "alpha_regret_hi"),
        x_range=ctx.x_range,
    )


PLOT = PlotModule(
    key="alpha-regret",
    caption=(
        "alpha-AROQ-CMAB is judged by its alpha-regret (solid): alpha T r(a*) minus the reward "
        "collected. Dashed: its ordinary regret; the gap is (1 - alpha) t r(a*)."
    ),
    problems=("cmab",),
    make=_make,
    when=lambda ctx: bool(_alpha_names(ctx.algorithms)),
)

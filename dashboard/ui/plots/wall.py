"""Wall time per algorithm: inside oracle calls / expensive computations vs the rest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import holoviews as hv
import numpy as np

from ..live import LivePlot
from ..theme import ORACLE_COLOR, REST_COLOR
from .base import PlotModule
from .common import (
    DT,
    _base_opts,
    _get,
    _names,
    _spec,
)


def _wall_parts(result: Any) -> tuple[str, str]:
    problem = _spec(result).get("problem", "cmab")
    inside = "oracle calls" if problem == "cmab" else "expensive computations"
    return inside, "rest of the simulation"


def wall_time_frames(
    result: Any, algorithms: Sequence[str] | None = None
) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`wall_time_plot`'s two layers (time inside oracle calls /
    expensive computations, then the rest): horizontal bars
    ``{s0, row, s1, row_end, seconds}``, one row per algorithm (first on top)."""
    names = _names(result, algorithms)
    n = len(names)
    inside, rest = np.zeros(n), np.zeros(n)
    for i, name in enumerate(names):
        r = _get(result, name)
        wall = float(np.sum(r.wall_seconds)) if r is not None else 0.0
        oracle = float(np.sum(r.oracle_seconds)) if r is not None else 0.0
        inside[i] = min(oracle, wall) if wall > 0 else oracle
        rest[i] = max(wall - inside[i], 0.0)
    row = (n - 1 - np.arange(n)).astype(float)
    return [
        {
            "s0": np.zeros(n),
            "row": row - 0.35,
            "s1": inside,
            "row_end": row + 0.35,
            "seconds": inside,
        },
        {
            "s0": inside,
            "row": row - 0.35,
            "s1": inside + rest,
            "row_end": row + 0.35,
            "seconds": rest,
        },
    ]


def wall_time_plot(result: Any, algorithms: Sequence[str] | None = None) -> hv.Overlay:
    """Wall time per algorithm (summed over runs), split into time inside oracle calls /
    expensive computations (orange) and the rest of the simulation (blue): stacked
    horizontal bars, one row per algorithm (named on the y axis), updated in place."""
    names = _names(result, algorithms)
    parts = _wall_parts(result)
    kdims = [
        hv.Dimension("s0", label="wall time (s), summed over runs"),
        hv.Dimension("row", label="algorithm"),
        "s1",
        "row_end",
    ]
    layers = [
        hv.Rectangles(
            frame,
            kdims=kdims,
            vdims=[hv.Dimension("seconds", label="wall time (s)")],
            label=part,
            datatype=DT,
        ).opts(color=color, line_alpha=0, tools=["hover"], clone=False)
        for frame, part, color in zip(
            wall_time_frames(result, names), parts, (ORACLE_COLOR, REST_COLOR)
        )
    ]
    n = len(names)
    return hv.Overlay(layers).opts(
        **_base_opts(
            title="Wall time: oracle vs the rest",
            legend_position="bottom",
            show_grid=False,
            yticks=[(n - 1 - i, name) for i, name in enumerate(names)],
            ylim=(-0.6, max(n, 1) - 0.4),
            ylabel="",
        )
    )


PLOT = PlotModule(
    key="wall",
    caption="Seconds spent inside oracle calls / expensive computations vs the rest.",
    every=5,
    make=lambda ctx: LivePlot(
        "wall",
        lambda data: wall_time_plot(data, ctx.algorithms),
        ctx.result,
        frames=lambda data: wall_time_frames(data, ctx.algorithms),
        autoscale_x=True,
        x_keys=("s0", "s1"),
        x_pad=0.05,
    ),
)

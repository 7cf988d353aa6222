"""Oracle timeline: one tick per oracle call / expensive computation, run 1."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import holoviews as hv
import numpy as np

from ..live import LivePlot
from .base import PlotModule
from .common import (
    DT,
    T_DIM,
    _base_opts,
    _get,
    _names,
    _overlay,
    _spec,
    _xlim,
    algorithm_colors,
    t_format,
)


def _batches(log: Any) -> tuple[np.ndarray, np.ndarray]:
    """Round t and size of each adaptivity round (batch) of individually recorded calls."""
    a = log.arrays()
    if not a["t"].size:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ids, inverse, counts = np.unique(a["round_id"], return_inverse=True, return_counts=True)
    t = np.full(ids.size, np.iinfo(np.int64).max)
    np.minimum.at(t, inverse, a["t"])
    order = np.argsort(t, kind="stable")
    return t[order], counts[order]


def _bin_batches(
    t: np.ndarray, size: np.ndarray, max_ticks: int, horizon: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """At most ``max_ticks`` ticks: (x, calls, largest batch) per non-empty bin of rounds."""
    if t.size <= max_ticks:
        return t.astype(float), size, size
    edges = np.linspace(0.5, max(horizon, int(t.max())) + 0.5, max_ticks + 1)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, max_ticks - 1)
    calls = np.bincount(idx, weights=size, minlength=max_ticks)
    big = np.zeros(max_ticks)
    np.maximum.at(big, idx, size)
    nz = calls > 0
    centres = 0.5 * (edges[:-1] + edges[1:])
    return centres[nz], calls[nz].astype(np.int64), big[nz].astype(np.int64)


def timeline_frames(
    result: Any, algorithms: Sequence[str] | None = None, max_ticks: int = 1500
) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`oracle_timeline`'s layers: per algorithm a band of per-round
    ranges ``{t, row, t_end, row_end, calls}`` then the batch ticks
    ``{t, row, t_end, row_end, calls, batch}`` (first algorithm on the top row)."""
    names = _names(result, algorithms)
    data = []
    biggest = 1
    for name in names:
        r = _get(result, name)
        if r is not None and r.logs:
            t, size = _batches(r.logs[0])
            x, calls, big = _bin_batches(t, size, max_ticks, result.horizon)
            ranges = np.array([(a, b) for a, b, _, _ in r.logs[0].ranges], dtype=float)
        else:
            x = calls = big = np.zeros(0)
            ranges = np.zeros((0, 2))
        biggest = max(biggest, int(big.max()) if big.size else 1)
        data.append((x, calls, big, ranges.reshape(-1, 2)))
    frames: list[dict[str, np.ndarray]] = []
    n = len(names)
    for i, (x, calls, big, ranges) in enumerate(data):
        row = float(n - 1 - i)
        ones = np.ones(len(ranges))
        frames.append(
            {
                "t": ranges[:, 0] - 0.5,
                "row": (row - 0.3) * ones,
                "t_end": ranges[:, 1] + 0.5,
                "row_end": (row + 0.3) * ones,
                "calls": ranges[:, 1] - ranges[:, 0] + 1,
            }
        )
        h = 0.2 + 0.55 * np.log1p(big) / np.log1p(biggest) if big.size else np.zeros(0)
        frames.append(
            {
                "t": np.asarray(x, dtype=float),
                "row": row - h / 2,
                "t_end": np.asarray(x, dtype=float),
                "row_end": row + h / 2,
                "calls": np.asarray(calls, dtype=float),
                "batch": np.asarray(big, dtype=float),
            }
        )
    return frames


def oracle_timeline(
    result: Any,
    algorithms: Sequence[str] | None = None,
    max_ticks: int = 1500,
) -> hv.Overlay:
    """One tick per oracle call (cmab) / expensive computation (semiparametric), run 1.

    x is the round t, each algorithm has its own row.  Calls of one parallel adaptivity round
    form one tick whose height grows with the batch size (hover shows it).  Per-round
    baselines are drawn as a band over the ranges ``log.ranges`` (one call in every round),
    and more than ``max_ticks`` batches are binned, so the data sent to the browser stays
    bounded whatever T is.
    """
    names = _names(result, algorithms)
    colors = algorithm_colors(names)
    problem = _spec(result).get("problem", "cmab")
    what = "oracle calls" if problem == "cmab" else "expensive computations"
    ydim = hv.Dimension("row", label="algorithm")
    kdims = [T_DIM, ydim, "t_end", "row_end"]
    frames = timeline_frames(result, names, max_ticks)
    layers: list[Any] = []
    for i, name in enumerate(names):
        rect = hv.Rectangles(
            frames[2 * i],
            kdims=kdims,
            vdims=[hv.Dimension("calls", label=f"{what} (one per round)")],
            label=name,
            datatype=DT,
        ).opts(color=colors[name], alpha=0.35, line_alpha=0, tools=["hover"], clone=False)
        seg = hv.Segments(
            frames[2 * i + 1],
            kdims=kdims,
            vdims=[
                hv.Dimension("calls", label=what),
                hv.Dimension("batch", label="largest batch"),
            ],
            label=name,
            datatype=DT,
        ).opts(color=colors[name], line_width=2, tools=["hover"], clone=False)
        layers += [rect, seg]
    n = len(names)
    ticks = [(n - 1 - i, name) for i, name in enumerate(names)]
    return _overlay(layers, vdim=ydim).opts(
        **_base_opts(
            title=f"{what.capitalize()}, run 1",
            yticks=ticks,
            show_legend=False,
            xlim=_xlim(result) or (None, None),
            ylim=(-0.6, max(n, 1) - 0.4),
            ylabel="",
            xformatter=t_format(),
        )
    )


PLOT = PlotModule(
    key="timeline",
    caption="One tick per call at its round t; the calls of one parallel (adaptivity) round "
    "form one taller tick; a band means one call in every round.",
    every=2,
    make=lambda ctx: LivePlot(
        "timeline",
        lambda data: oracle_timeline(data, ctx.algorithms),
        ctx.result,
        frames=lambda data: timeline_frames(data, ctx.algorithms),
        x_range=ctx.x_range,
    ),
)

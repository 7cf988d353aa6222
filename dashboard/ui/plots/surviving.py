"""Surviving arms per SROQ epoch / SBE phase (run 1)."""

from __future__ import annotations

from typing import Any

import holoviews as hv
import numpy as np

from ..live import LivePlot
from ..theme import ALIVE_COLOR, ELIMINATED_COLOR, LOST_COLOR, LOST_HATCH, OPTIMAL_COLOR
from .base import PlotModule
from .common import (
    DT,
    _base_opts,
    _integer_ticks,
    _legend_stub,
    _optimal_arms,
    _problem,
    _spec,
)

_STATES = ("eliminated", "alive", "optimal, alive", "optimal, eliminated")
#: Fill of each state (the palette's roles, :mod:`dashboard.ui.theme`: every fill keeps 3:1
#: against both themes' backgrounds, so an eliminated cell is a mid grey, not a pale one).
_STATE_COLORS = (ELIMINATED_COLOR, ALIVE_COLOR, OPTIMAL_COLOR, LOST_COLOR)


def _hatch(plot: Any, _element: Any) -> None:
    """A HoloViews hook: the "optimal, eliminated" cells (and their legend swatch) are
    cross-hatched, a cue that does not rely on telling their colour from the grey."""
    renderer = plot.handles.get("glyph_renderer")
    if renderer is None:
        return
    for name in ("glyph", "selection_glyph", "nonselection_glyph", "muted_glyph", "hover_glyph"):
        glyph = getattr(renderer, name, None)
        if glyph is not None and not isinstance(glyph, str):  # "auto": derived from glyph
            for key, value in LOST_HATCH.items():
                setattr(glyph, key, value)


def _elimination_events(result: Any) -> tuple[str | None, list[Any]]:
    """The first algorithm whose run-1 events carry ``surviving`` arms, and those events."""
    if result is None:
        return None, []
    for r in result.results:
        if not r.events:
            continue
        evs = [
            e
            for e in r.events[0]
            if e.kind in ("epoch", "phase") and e.data.get("surviving") is not None
        ]
        if evs:
            return r.algorithm, evs
    return None, []


def surviving_frames(result: Any, problem: str | None = None) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`surviving_plot`'s four layers (one per state of
    :data:`_STATES`): cells ``{epoch, arm, epoch_end, arm_end, start, alive}`` of width 1
    centred on (epoch / phase number, arm); a state without cells has one NaN row (its
    legend swatch)."""
    _name, events = _elimination_events(result)
    kind = _problem(result, problem)
    n_arms = int(_spec(result).get("d" if kind == "cmab" else "K", 0))
    optimal = _optimal_arms(result)
    cells: list[list[tuple[float, float, float, float]]] = [[] for _ in _STATES]
    for k, e in enumerate(events):
        alive = {int(a) for a in np.asarray(e.data["surviving"]).ravel()}
        n_arms = max(n_arms, max(alive, default=-1) + 1)
        label = int(e.data.get("epoch", e.data.get("phase", k + 1)))
        t0 = int(e.data.get("start", e.data.get("t_start", e.t)))
        for arm in range(n_arms):
            s = (1 if arm in alive else 0) + (2 if arm in optimal else 0)
            cells[{0: 0, 1: 1, 2: 3, 3: 2}[s]].append((label, arm, t0, len(alive)))
    frames = []
    for rows in cells:
        a = np.asarray(rows, dtype=float).reshape(-1, 4)
        frames.append(
            _legend_stub(
                {
                    "epoch": a[:, 0] - 0.5,
                    "arm": a[:, 1] - 0.5,
                    "epoch_end": a[:, 0] + 0.5,
                    "arm_end": a[:, 1] + 0.5,
                    "start": a[:, 2],
                    "alive": a[:, 3],
                }
            )
        )
    return frames


def surviving_title(result: Any) -> str:
    """Title of :func:`surviving_plot` (it changes at every epoch / phase)."""
    name, events = _elimination_events(result)
    if name is None:
        return "Surviving arms\n(run SROQ-CMAB or SBE)"
    last = len(np.asarray(events[-1].data["surviving"]).ravel())
    return f"Surviving arms, run 1\n{name}: {last} left"


def surviving_plot(result: Any, problem: str | None = None) -> hv.Overlay:
    """Which arms are still alive at each SROQ epoch / SBE phase (run 1 of the first
    eliminating algorithm): a raster arm x epoch, one layer per state (legend): alive (blue),
    eliminated (grey), the optimal action's arms (cmab) or the best arm (semiparametric) in
    orange, cross-hatched purple if it was eliminated.  Rectangles (not a heat map) so a live
    plot can update the cells in place at each new epoch; no cell borders (a white border
    would be a line without contrast on the light theme)."""
    kind = "epoch" if _problem(result, problem) == "cmab" else "phase"
    frames = surviving_frames(result, problem)
    kdims = [
        hv.Dimension("epoch", label=f"{kind} (SROQ epoch / SBE phase)"),
        hv.Dimension("arm", label="arm"),
        "epoch_end",
        "arm_end",
    ]
    vdims = [hv.Dimension("start", label="starts at round"), hv.Dimension("alive", label="alive")]
    layers = [
        hv.Rectangles(frame, kdims=kdims, vdims=vdims, label=state, datatype=DT).opts(
            color=color,
            line_alpha=0,
            tools=["hover"],
            hooks=[_hatch] if color == LOST_COLOR else [],
            clone=False,
        )
        for frame, state, color in zip(frames, _STATES, _STATE_COLORS)
    ]
    return hv.Overlay(layers).opts(
        **_base_opts(
            title=surviving_title(result),
            show_grid=False,
            legend_position="bottom",
            legend_cols=4,
            xlabel=f"{kind} number",
            ylabel="arm",
            hooks=[_integer_ticks("x", "y")],
        )
    )


PLOT = PlotModule(
    key="surviving",
    caption="Blue: alive, grey: eliminated, orange: optimal action / best arm "
    "(hatched purple if it was eliminated).",
    on_events=True,
    make=lambda ctx: LivePlot(
        "surviving",
        lambda data: surviving_plot(data, ctx.problem),
        ctx.result,
        frames=lambda data: surviving_frames(data, ctx.problem),
        title=surviving_title,
        y_keys=("arm", "arm_end"),
        y_pad=0.0,
        autoscale_x=True,
        x_keys=("epoch", "epoch_end"),
    ),
)

"""DEO design weights of the latest SBE phase, with Theorem 1's check."""

from __future__ import annotations

from typing import Any

import holoviews as hv
import numpy as np

from ..live import LivePlot
from ..theme import ANCHOR_COLOR, OPTIMAL_COLOR, OTHER_COLOR
from .base import PlotModule
from .common import (
    DT,
    _base_opts,
    _integer_ticks,
    _legend_stub,
    _optimal_arms,
)

#: Legend entry and colour (the palette's roles, :mod:`dashboard.ui.theme`) of each layer.
_ROLES = (
    ("best arm", OPTIMAL_COLOR),
    ("anchor x_1", ANCHOR_COLOR),
    ("other arms", OTHER_COLOR),
)


def _latest_design(result: Any) -> tuple[str | None, Any]:
    """The algorithm and the latest phase event carrying DEO ``weights`` (run 1)."""
    if result is not None:
        for r in result.results:
            if not r.events:
                continue
            evs = [e for e in r.events[0] if e.kind == "phase" and "weights" in e.data]
            if evs:
                return r.algorithm, evs[-1]
    return None, None


def design_weights_frames(result: Any) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`design_weights_plot`'s three layers (best arm, anchor, other
    arms): bars ``{x0, y0, x1, y1, arm_id, p}`` of width 0.8 centred on the arm (one NaN
    row for a role without arms: its legend swatch)."""
    _name, ev = _latest_design(result)
    w = np.zeros(0) if ev is None else np.asarray(ev.data["weights"], dtype=float).ravel()
    arms = np.arange(w.size)
    best = _optimal_arms(result)
    anchor = int(ev.data.get("anchor", -1)) if ev is not None else -1
    role = np.array([0 if a in best else (1 if a == anchor else 2) for a in arms], dtype=int)
    frames = []
    for k in range(len(_ROLES)):
        sel = role == k
        x = arms[sel].astype(float)
        frames.append(
            _legend_stub(
                {
                    "x0": x - 0.4,
                    "y0": np.zeros(x.size),
                    "x1": x + 0.4,
                    "y1": w[sel],
                    "arm_id": x,
                    "p": w[sel],
                }
            )
        )
    return frames


def design_weights_title(result: Any) -> str:
    """Title of :func:`design_weights_plot`: phase and Theorem 1's check."""
    name, ev = _latest_design(result)
    if ev is None:
        return "DEO design weights (choose SBE)"
    title = f"DEO weights, {name} phase {ev.data.get('phase', '?')}"
    norm, bound = ev.data.get("max_norm_to_anchor"), ev.data.get("bound_2_sqrt_d")
    if norm is not None and bound is not None:
        ok = "≤" if float(norm) <= float(bound) + 1e-9 else ">"
        title += f"\nTheorem 1: max norm {float(norm):.2f} {ok} 2√d = {float(bound):.2f}"
    return title


def design_weights_plot(result: Any) -> hv.Overlay:
    """DEO design weights (Algorithm 1 of the semiparametric paper) of the latest SBE phase,
    run 1, with Theorem 1's achieved norm against its bound 2 sqrt(d) in the title.  Bars are
    rectangles, one layer per role (legend: best arm, anchor x_1, other arms), so a live plot
    updates them in place."""
    kdims = [
        hv.Dimension("x0", label="arm"),
        hv.Dimension("y0", label="design weight p_i"),
        "x1",
        "y1",
    ]
    vdims = [hv.Dimension("arm_id", label="arm"), hv.Dimension("p", label="p_i")]
    layers = [
        hv.Rectangles(frame, kdims=kdims, vdims=vdims, label=role, datatype=DT).opts(
            color=color, line_alpha=0, tools=["hover"], clone=False
        )
        for frame, (role, color) in zip(design_weights_frames(result), _ROLES)
    ]
    return hv.Overlay(layers).opts(
        **_base_opts(
            title=design_weights_title(result),
            legend_position="bottom",
            legend_cols=3,
            hooks=[_integer_ticks("x")],
        )
    )


PLOT = PlotModule(
    key="weights",
    caption="The design p the phase samples arms from. Orange: best arm, grey: anchor x_1, "
    "blue: other arms.",
    problems=("semiparametric",),
    on_events=True,
    make=lambda ctx: LivePlot(
        "weights",
        design_weights_plot,
        ctx.result,
        frames=design_weights_frames,
        title=design_weights_title,
        y_keys=("y1",),
        autoscale_x=True,
        x_keys=("x0", "x1"),
    ),
)

"""PAC view: sqrt(t) e_t at the end of each phase, with Appendix I's reference."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import holoviews as hv
import numpy as np

from ...simulation import catalogue
from ...simulation.theory import estimation_error, pac_bound
from ..live import LivePlot
from .base import PlotModule
from .common import (
    DT,
    REF_COLOR,
    T_DIM,
    _base_opts,
    _get,
    _names,
    _spec,
    _xlim,
    algorithm_colors,
    t_format,
)


def _phased(name: str) -> bool:
    """Whether ``name`` may record phase estimates: every algorithm that is not a per-round
    baseline (SBE, G-elimination, plug-ins) gets a layer from the first frame."""
    try:
        return not catalogue.declaration(name, "semiparametric").per_round
    except ValueError:
        return True


def pac_plot(
    result: Any,
    X: np.ndarray | None = None,
    theta: np.ndarray | None = None,
    algorithms: Sequence[str] | None = None,
) -> hv.Overlay:
    """PAC view: ``sqrt(t) e_t`` at the end of each phase, where
    ``e_t = max_i |(x_i - x_1)^T (theta_hat - theta*)|`` (x_1 the phase's anchor arm), for
    every algorithm whose phase events carry ``theta_hat``, with the ``10 sqrt(d log K)``
    reference of Appendix I.  Every phase-based algorithm has a layer (and a legend entry) from
    the start, empty until its first phase ends, and a per-round baseline one only if it has
    estimates: the layers stay the same while a run streams, so the live plot patches its
    sources instead of re-rendering the figure (~0.3 s, a visible hitch) when a phase ends.

    ``X`` and ``theta`` default to the instance the result carries (``result.features``);
    ``e_t`` and the reference are :mod:`dashboard.simulation.theory`'s."""
    if X is None and theta is None and getattr(result, "features", None) is not None:
        X, theta = result.features
    names = _names(result, algorithms)
    colors = algorithm_colors(names)
    ydim = hv.Dimension("pac", label="√t · e_t")
    layers: list[Any] = []
    for name in names:
        r = _get(result, name)
        ts: list[float] = []
        vals: list[float] = []
        if r is not None and X is not None and theta is not None:
            for rep_events in r.events:
                for e in rep_events:
                    th = e.data.get("theta_hat") if e.kind == "phase" else None
                    if th is None:
                        continue
                    e_t = estimation_error(X, theta, th, int(e.data.get("anchor", 0)))
                    ts.append(float(e.t))
                    vals.append(float(np.sqrt(max(e.t, 1)) * e_t))
        if not ts and not _phased(name):
            continue  # a per-round baseline without estimates (all of them): no legend entry
        layers.append(
            hv.Scatter((ts, vals), kdims=[T_DIM], vdims=[ydim], label=name, datatype=DT).opts(
                color=colors[name], size=9, tools=["hover"], clone=False
            )
        )
    d = float(_spec(result).get("d", 1))
    K = float(_spec(result).get("K", 2))
    ref = pac_bound(d, K)
    T = float(result.horizon) if result is not None else 0.0
    rt = np.array([1.0, T]) if T >= 1 else np.zeros(0)
    layers.append(
        hv.Curve(
            (rt, np.full(rt.size, ref)),
            kdims=[T_DIM],
            vdims=[ydim],
            label="10 √(d log K)",
            datatype=DT,
        ).opts(color=REF_COLOR, line_dash="dashed", line_width=2, clone=False)
    )
    return hv.Overlay(layers).opts(
        **_base_opts(
            title="PAC view: √t · e_t per phase",
            xformatter=t_format(),
            legend_position="bottom",
            xlim=_xlim(result) or (None, None),
        )
    )


PLOT = PlotModule(
    key="pac",
    caption="Each dot is one phase of one run: √t times the worst error of the estimated "
    "gaps to the anchor.",
    problems=("semiparametric",),
    on_events=True,
    make=lambda ctx: LivePlot(
        "pac",
        lambda data: pac_plot(data, algorithms=ctx.algorithms),
        ctx.result,
        x_range=ctx.x_range,
    ),
)

"""The shift nu_t over the most recent rounds (semiparametric)."""

from __future__ import annotations

from typing import Any

import holoviews as hv
import numpy as np
from bokeh.models import NumeralTickFormatter

from ..live import LivePlot
from .base import PlotModule
from .common import (
    DT,
    REF_COLOR,
    _base_opts,
)


def shift_frames(t: np.ndarray, nu: np.ndarray) -> list[dict[str, np.ndarray]]:
    """Column data of :func:`shift_plot`: ``[{t_recent, nu}]``."""
    return [{"t_recent": np.asarray(t, dtype=float), "nu": np.asarray(nu, dtype=float)}]


def shift_plot(t: np.ndarray, nu: np.ndarray) -> hv.Curve:
    """The shift nu_t over the most recent rounds (semiparametric reward model, Section 2.1)."""
    return hv.Curve(
        shift_frames(t, nu)[0],
        kdims=[hv.Dimension("t_recent", label="round t (most recent rounds)")],
        vdims=[hv.Dimension("nu", label="shift ν_t")],
        datatype=DT,
    ).opts(
        **_base_opts(
            title="Shift ν_t, latest rounds",
            color=REF_COLOR,
            line_width=2,
            tools=["hover"],
            xformatter=NumeralTickFormatter(format="0,0"),
            # before any round: a whole-number axis (a unit range would read "0 0 0 0")
            **({} if len(t) else {"xlim": (0, 100)}),
        )
    )


def _trace(result: Any) -> tuple[np.ndarray, np.ndarray]:
    """The ``(t, nu_t)`` trace a result carries (empty without one)."""
    trace = getattr(result, "shift", None)
    return trace if trace is not None else (np.zeros(0), np.zeros(0))


PLOT = PlotModule(
    key="shift",
    caption="The shift ν_t added to every arm's reward (it cancels in the regret).",
    problems=("semiparametric",),
    make=lambda ctx: LivePlot(
        "shift",
        lambda data: shift_plot(*_trace(data)),
        ctx.result,
        autoscale_x=True,
        frames=lambda data: shift_frames(*_trace(data)),
        y_keys=("nu",),
    ),
)

"""The dashboard's plots: one module per plot, and :data:`PLOTS`, the board's list.

Each module (``regret``, ``alpha_regret``, ``timeline``, ``complexity``, ``surviving``,
``weights``, ``pac``, ``shift``, ``wall``) holds plain builder functions (results -> HoloViews
elements, nothing about widgets or sessions; every builder accepts a partial, empty or ``None``
result and returns the same layer structure for the same algorithms, so a live plot updates the
browser's data sources in place) and one ``PLOT`` (:class:`~.base.PlotModule`: caption,
problems, cadence, how to build its live plot). Adding a plot is one new module plus one entry
in :data:`PLOTS`; a test or a notebook can also pass its own list to the board.

The builders are re-exported here (``from dashboard.ui import plots; plots.regret_plot``).
The papers' reference quantities (rate shapes, ``e_t``, the PAC bound) are the simulation
layer's (:mod:`dashboard.simulation.theory`).
"""

from __future__ import annotations

from ...simulation.theory import rate_shape
from . import alpha_regret, complexity, pac, regret, shift, surviving, timeline, wall, weights
from .alpha_regret import alpha_regret_frames, alpha_regret_plot
from .base import PlotContext, PlotModule
from .common import BAND_POINTS, FONTS, PALETTE, algorithm_colors
from .complexity import complexity_frames, complexity_plot
from .pac import pac_plot
from .regret import regret_frames, regret_plot
from .shift import shift_frames, shift_plot
from .surviving import _STATES, surviving_frames, surviving_plot, surviving_title
from .timeline import oracle_timeline, timeline_frames
from .wall import wall_time_frames, wall_time_plot
from .weights import design_weights_frames, design_weights_plot, design_weights_title

__all__ = [
    "BAND_POINTS",
    "FONTS",
    "PALETTE",
    "PLOTS",
    "PlotContext",
    "PlotModule",
    "algorithm_colors",
    "alpha_regret_frames",
    "alpha_regret_plot",
    "complexity_frames",
    "complexity_plot",
    "design_weights_frames",
    "design_weights_plot",
    "design_weights_title",
    "oracle_timeline",
    "pac_plot",
    "rate_shape",
    "regret_frames",
    "regret_plot",
    "shift_frames",
    "shift_plot",
    "surviving_frames",
    "surviving_plot",
    "surviving_title",
    "timeline_frames",
    "wall_time_frames",
    "wall_time_plot",
]

#: The board's plots, in order (the wide ones first, then two per row).
PLOTS: list[PlotModule] = [
    regret.PLOT,
    alpha_regret.PLOT,
    timeline.PLOT,
    complexity.PLOT,
    surviving.PLOT,
    weights.PLOT,
    pac.PLOT,
    shift.PLOT,
    wall.PLOT,
]

_ = _STATES  # kept importable as plots._STATES (the surviving plot's legend, used by tests)

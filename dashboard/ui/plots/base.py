"""What a plot module declares: :class:`PlotModule` (one per file in this package).

A plot is one module defining its builders (plain functions from a result to HoloViews
elements) and one ``PLOT = PlotModule(...)``: its key (CSS class ``<key>-plot``), its
caption, the problems it applies to, its update cadence and a ``make(ctx)`` that returns the
:class:`~dashboard.ui.live.LivePlot` for a :class:`PlotContext`.  Every live plot receives the
simulation result itself (the shift trace and the instance ``(X, theta*)`` travel on it), so a
plot needs nothing from the simulation's internals.  ``dashboard.ui.plots.PLOTS`` lists them;
the plot board (:mod:`dashboard.ui.board`) iterates that list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["PROBLEMS", "PlotContext", "PlotModule", "Saved"]

PROBLEMS: tuple[str, ...] = ("cmab", "semiparametric")


@dataclass(frozen=True)
class Saved:
    """A saved result drawn over the live plots (dashed): ``result`` (a SimulationResult) and
    ``note``, the legend's suffix, e.g. ``"saved: seed 0, T=10000"``."""

    result: Any
    note: str


@dataclass(frozen=True)
class PlotContext:
    """What a plot is built for.

    Attributes
    ----------
    algorithms : tuple of str
        The compared algorithms (fixes the layers).
    problem : str
        ``"cmab"`` or ``"semiparametric"``.
    log_axes : bool
        Log-log regret axes chosen.
    x_range : bokeh Range1d
        The time axis shared by the time plots (linked pan / zoom).
    result : SimulationResult or None
        The data to draw first.
    band : str
        How the spread over runs is drawn: a key of
        :data:`dashboard.simulation.bands.BANDS` (the Config's ``band``).
    saved : Saved or None
        A saved result to overlay on the regret plot.
    """

    algorithms: tuple[str, ...]
    problem: str
    log_axes: bool
    x_range: Any
    result: Any = None
    band: str = "sd"
    saved: Saved | None = None


@dataclass(frozen=True)
class PlotModule:
    """One plot of the board.

    Attributes
    ----------
    key : str
        Name of the plot (pane CSS class and name ``<key>-plot``).
    caption : str
        One line under the plot explaining its encoding (empty: none).
    make : callable
        ``make(ctx: PlotContext) -> LivePlot``.
    problems : tuple of str
        The problems it applies to.
    every : int
        Update cadence while streaming: every ``every``-th frame (the last frame always).
    on_events : bool
        Update only when a new epoch / phase event arrived (event plots), not every frame.
    wide : bool
        Across the full width above the grid of the other plots (the regret plot).
    when : callable, optional
        ``when(ctx) -> bool``: shown only if true for the chosen algorithms (e.g. the
        alpha-regret plot only when an algorithm with an approximate oracle is chosen).
    """

    key: str
    caption: str
    make: Callable[[PlotContext], Any]
    problems: tuple[str, ...] = PROBLEMS
    every: int = 1
    on_events: bool = False
    wide: bool = False
    when: Callable[[PlotContext], bool] | None = None

    def applies_to(self, problem: str) -> bool:
        """Whether this plot is shown for ``problem``."""
        return problem in self.problems

    def wanted(self, ctx: PlotContext) -> bool:
        """Whether this plot is shown for ``ctx`` (its problem and, if ``when``, the chosen
        algorithms)."""
        return self.applies_to(ctx.problem) and (self.when is None or bool(self.when(ctx)))

"""The plot board: the live plots of the chosen problem, built by iterating a list of plot
modules (:data:`dashboard.ui.plots.PLOTS` by default).

:class:`PlotBoard` (a ``pn.viewable.Viewer``) builds one :class:`~dashboard.ui.live.LivePlot`
per plot module that applies to the problem, lays out the wide ones (the regret plot) across
the full width and the others in a wrapping row of cards (each at least :data:`CARD_WIDTH`
pixels wide, so as many per row as fit: one beside an open lesson on a laptop, three on a
wide screen), each with its caption, and pushes results to them at each module's cadence:
every ``every``-th frame, or
only when a new epoch / phase event arrived (``on_events``).  Time plots share one x range.
Nothing here knows about runs or widgets: the app calls :meth:`rebuild`, :meth:`push` and
:meth:`clear`.  :attr:`PlotBoard.present` switches every figure's fonts to projector sizes
(:func:`~dashboard.ui.plots.common.style_figure`), in place and after every re-render.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import panel as pn
import param
from bokeh.models import Range1d

from .live import LivePlot
from .plots import PLOTS, PlotContext, PlotModule
from .plots.base import Saved
from .plots.common import style_figure
from .theme import apply_theme

__all__ = ["CARD_WIDTH", "PlotBoard"]

#: Smallest width of a plot card in the wrapping row (its frame then stays >= 320 px wide).
CARD_WIDTH = 420


def _cards(cards: list[Any]) -> pn.FlexBox:
    return pn.FlexBox(*cards, flex_wrap="wrap", sizing_mode="stretch_width", name="plots", margin=0)


def _event_counts(result: Any) -> dict[str, int]:
    """Number of epoch / phase events per algorithm (all runs)."""
    if result is None:
        return {}
    return {
        r.algorithm: sum(e.kind in ("epoch", "phase") for ev in r.events for e in ev)
        for r in result.results
    }


class PlotBoard(pn.viewable.Viewer):
    """The live plots of one configuration.

    Parameters
    ----------
    modules : sequence of PlotModule, optional
        The plots, in order (default :data:`dashboard.ui.plots.PLOTS`).
    """

    ncols = param.Integer(
        default=2,
        bounds=(1, 4),
        doc="Most plot cards per row (1: one per row, e.g. beside a lesson); the row wraps "
        "earlier when the cards would be narrower than CARD_WIDTH.",
    )
    present = param.Boolean(default=False, doc="Projector fonts on every figure.")
    theme = param.String(
        default=None,
        allow_None=True,
        doc="The page's theme (``dark`` or ``default``), read once where the session is known "
        "(figures are built later, outside it); None: read it at each build.",
    )

    def __init__(self, modules: Sequence[PlotModule] | None = None, **params: Any) -> None:
        super().__init__(**params)
        self.modules: list[PlotModule] = list(PLOTS if modules is None else modules)
        self.plots: dict[str, LivePlot] = {}
        self.x_range = Range1d(0, 1, name="time-range")
        self.structure: tuple[Any, ...] | None = None
        self.saved: Saved | None = None
        self._last: Any = None
        self._args: tuple[Any, ...] = ((), "cmab", False, 1, "sd")
        self._frames = 0
        self._event_counts: dict[str, int] | None = None
        self._events_shown = False
        self._cards: list[Any] = []
        self._grid = _cards([])
        self._layout = pn.Column(self._grid, sizing_mode="stretch_width", margin=0)
        self.param.watch(self._on_ncols, "ncols")
        self.param.watch(self._on_present, "present")

    @property
    def panes(self) -> dict[str, Any]:
        """Plot key -> its pane (CSS class ``<key>-plot``)."""
        return {key: lp.pane for key, lp in self.plots.items()}

    def rebuild(
        self,
        algorithms: Sequence[str],
        problem: str,
        log_axes: bool,
        result: Any = None,
        horizon: int = 1,
        band: str = "sd",
    ) -> None:
        """(Re)create the plots of ``problem`` for ``algorithms`` (the layers are fixed by
        them), drawing ``result`` first, the spread over runs as ``band`` (a key of
        :data:`dashboard.simulation.bands.BANDS`) and the :attr:`saved` overlay if any."""
        self.close()
        self._args = (tuple(algorithms), problem, bool(log_axes), horizon, band)
        self._last = result
        self.x_range = Range1d(0, max(int(horizon), 1), name="time-range")
        ctx = PlotContext(
            tuple(algorithms), problem, bool(log_axes), self.x_range, result, band, self.saved
        )
        wide, cards = [], []
        self.plots = {}
        for module in self.modules:
            if not module.wanted(ctx):
                continue
            live = module.make(ctx)
            live.restyle = self._style
            self.plots[module.key] = live
            if module.wide:
                wide.append(live.pane)
            else:
                caption = pn.pane.Markdown(
                    module.caption, styles={"font-size": "15px"}, margin=(0, 10)
                )
                cards.append(
                    pn.Column(
                        live.pane,
                        caption,
                        sizing_mode="stretch_width",
                        styles=self._card_style(),
                        css_classes=["plot-card"],
                    )
                )
        self.structure = (problem, tuple(algorithms), bool(log_axes), band)
        self._frames = 0
        self._event_counts = None
        self._events_shown = False
        self._cards = cards
        self._grid = _cards(cards)
        self._layout.objects = [*wide, self._grid]

    def _card_style(self) -> dict[str, str]:
        share = f"calc({100 / max(self.ncols, 1):.3f}% - 10px)"
        return {"flex": f"1 1 max({CARD_WIDTH}px, {share})", "min-width": "300px"}

    def _on_ncols(self, *_: Any) -> None:
        for card in self._cards:
            card.styles = self._card_style()

    def _style(self, fig: Any) -> None:
        # (before the fonts: the theme sets colours, style_figure sizes)
        apply_theme(fig, self.theme)
        style_figure(fig, self.present)

    def _on_present(self, *_: Any) -> None:
        for live in self.plots.values():
            if live.figure is not None:
                style_figure(live.figure, self.present)

    def reset_range(self, horizon: int) -> None:
        """A new run of the same layers: the shared time axis spans its horizon."""
        self.x_range.update(start=0, end=max(int(horizon), 1))
        self._event_counts = None

    def push(self, result: Any, full: bool = True, stride: int = 1) -> None:
        """Send ``result`` to the plots due this frame (``full``: to all of them); event
        plots only when a new epoch / phase event arrived.  ``stride > 1`` (a busy server)
        updates the plots in cards only every ``stride`` times their cadence; the wide plots
        (regret) keep theirs."""
        self._frames += 1
        self._last = result
        counts = _event_counts(result)
        events_changed = counts != self._event_counts
        if events_changed and not any(counts.values()) and not self._events_shown:
            events_changed = False  # still no epoch / phase: the event plots are already empty
        self._event_counts = counts
        if events_changed:
            self._events_shown = any(counts.values())
        for module in self.modules:
            live = self.plots.get(module.key)
            if live is None:
                continue
            if module.on_events:
                due = events_changed
            else:
                every = max(module.every, 1) * (1 if module.wide else max(int(stride), 1))
                due = full or self._frames % every == 0
            if due:
                live.send(result)

    def set_saved(self, saved: Saved | None) -> None:
        """Overlay a saved result on the regret plot (``None``: remove it).  Only the regret
        plot is rebuilt, with the latest data (its layers depend on the saved algorithms)."""
        self.saved = saved
        algorithms, problem, log_axes, _, band = self._args
        live = self.plots.get("regret")
        if live is None:
            return
        module = next(m for m in self.modules if m.key == "regret")
        ctx = PlotContext(algorithms, problem, log_axes, self.x_range, self._last, band, self.saved)
        fresh = module.make(ctx)  # the builders of the new layers; the pane stays
        live.builder, live.frames, live.on_render = fresh.builder, fresh.frames, fresh.on_render
        live.pipe.data = self._last
        if live.hv_plot is not None:
            live._render(live.builder(self._last))

    def clear(self) -> None:
        """Empty every plot (Reset)."""
        self._last = None
        for live in self.plots.values():
            live.send(None)
        self._event_counts = None
        self._events_shown = False

    def close(self) -> None:
        """Release the HoloViews plots."""
        for live in self.plots.values():
            live.close()

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout

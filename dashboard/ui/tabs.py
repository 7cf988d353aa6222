"""The page's three tabs: "Live run", "Sweep" and "Play: can you beat AROQ?".

:class:`PageTabs` composes the main area as ``pn.Tabs`` and the sidebar as the open tab's
settings (one column per tab; only the open tab's is visible, so a projector shows one set of
controls beside the output they drive).  The Live tab is the dashboard's own sidebar and plots
(given by :class:`~dashboard.ui.app.DashboardApp`, laid out by :func:`live_parts`).  The other
two are built **on first open** (a student who never opens them does not pay for them at page
load):

* :class:`SweepTab` -- the :class:`~dashboard.ui.sweep_view.SweepView` (its settings in the
  sidebar, progress, plot and grid in the main area), starting from the Live problem.  Its
  tasks run on the same Dask client as the ``/sweep`` page (``$BANDIT_DASHBOARD_SCHEDULER``
  of ``python -m dashboard serve``, else a shared local cluster, or in-process for tiny
  sweeps) from a background thread, never on the server's event loop; Cancel stops it.
* :class:`PlayTab` -- a :class:`~dashboard.ui.play.PlayView` game (its toolbar: the round,
  **Play this round** and **New game**) on the problem of the Live
  settings (``m`` of ``d`` base arms for cmab, one of ``K`` for semiparametric) against the
  chosen algorithms with their constants.  When the Live settings cannot be played (invalid,
  or more than :data:`MAX_PLAY_ARMS` buttons to click) a small game of the same problem is
  played instead and an escaped notice says why.  **New game** reads the Live settings again.

The open tab may be named in the URL (``?tab=sweep`` / ``play`` / ``live``, see
:meth:`PageTabs.apply_query`); an unknown value is refused with a notice.  CSS hooks:
``page-tabs``, ``play-controls``, ``play-new-game``, ``play-settings-notice``.
"""

from __future__ import annotations

import dataclasses
from typing import Any
from urllib.parse import urlencode

import panel as pn
import param

from ..simulation.play import MAX_GAME_HORIZON
from ..simulation.specs import make_spec
from .document import on_click
from .model import Config
from .play import PlayView
from .safe import escape, shorten
from .sweep_view import SweepView
from .urlstate import split_query

__all__ = ["MAX_PLAY_ARMS", "TABS", "PageTabs", "PlayTab", "SweepTab", "live_parts"]

#: URL value -> tab label, in tab order.
TABS: dict[str, str] = {
    "live": "Live run",
    "sweep": "Sweep",
    "play": "Play: can you beat AROQ?",
}
#: Most arm buttons a game shows (one per base arm / arm): more do not fit a projector row.
MAX_PLAY_ARMS = 30
#: The small game played when the Live settings cannot be (per problem).
SMALL_GAMES: dict[str, dict[str, Any]] = {
    "cmab": {"d": 6, "m": 2},
    "semiparametric": {"d": 3, "K": 5},
}
#: Tab headers readable from the back of a lecture hall.
_TAB_CSS = """
:host .bk-header .bk-tab { font-size: 18px; padding: 8px 18px; }
:host .bk-header .bk-tab.bk-active { font-weight: 600; }
"""


def live_parts(
    settings: Any,
    constants: Any,
    controls: Any,
    lessons: Any,
    board: Any,
    saved: Any,
    toolbar: Any = None,
) -> tuple[pn.Column, pn.Column, pn.Column]:
    """The Live tab's ``(sidebar, plot_area, main)``: the sidebar stacks the problem settings,
    the constants editor, the CSV download, the lesson chooser and the saved-result overlay
    (widgets as wide as the sidebar); the main area starts with the run ``toolbar`` and the
    run's messages, then the welcome card over the plot board with the lesson text beside
    them (below them when the window is too narrow for both: a wrapping row)."""
    plot_area = pn.Column(
        lessons.welcome,
        board,
        sizing_mode="stretch_width",
        styles={"flex": "1 1 540px", "min-width": "0"},
        css_classes=["plot-area"],
    )
    sidebar = pn.Column(
        settings,
        constants,
        pn.layout.Divider(),
        controls,
        pn.layout.Divider(),
        lessons,
        pn.layout.Divider(),
        saved,
        sizing_mode="stretch_width",
        name="controls",
    )
    for widget in sidebar.select(pn.widgets.Widget):
        widget.sizing_mode = "stretch_width"
    body = pn.FlexBox(
        plot_area, lessons.column, flex_wrap="wrap", sizing_mode="stretch_width", margin=0
    )
    top = [] if toolbar is None else [toolbar]
    main = pn.Column(
        *top, controls.messages(), body, sizing_mode="stretch_width", name="main", margin=0
    )
    return sidebar, plot_area, main


class SweepTab(pn.viewable.Viewer):
    """The Sweep view in two parts: settings (:attr:`side`) and output (main area), under a
    toolbar (CSS ``sweep-toolbar``): Run sweep, Cancel and the progress, the same actions as
    the sidebar's buttons (``SweepView.run`` / ``cancel``), always in the first screen."""

    def __init__(self, config: Config, **kwargs: Any) -> None:
        super().__init__()
        options = Config.options_for(config.problem)
        chosen = [a for a in config.algorithms if a in options][:2]
        extra = {"algorithms": chosen} if chosen else {}
        self.view = SweepView(problem=config.problem, **extra, **kwargs)
        self.side = self.view.controls
        big = [":host .bk-btn { font-size: 17px; padding: 6px 14px; }"]
        self.run_button = pn.widgets.Button(
            label="Run sweep", color="primary", css_classes=["sweep-toolbar-run"], stylesheets=big
        )
        self.cancel_button = pn.widgets.Button(
            label="Cancel", css_classes=["sweep-toolbar-cancel"], disabled=True, stylesheets=big
        )
        on_click(self.run_button, lambda: self.view.run())
        on_click(self.cancel_button, lambda: self.view.cancel())
        self.status = pn.pane.Markdown(
            "", css_classes=["sweep-toolbar-status"], styles={"font-size": "17px"}, margin=(4, 12)
        )
        self.view.param.watch(self._on_state, ["running", "progress", "status"])
        self.toolbar = pn.FlexBox(
            self.run_button,
            self.cancel_button,
            self.status,
            align_items="center",
            sizing_mode="stretch_width",
            css_classes=["sweep-toolbar"],
        )
        self._on_state()

    def _on_state(self, *_: Any) -> None:
        v = self.view
        self.run_button.disabled, self.cancel_button.disabled = v.running, not v.running
        self.status.object = escape(f"{v.progress}% · {v.status or 'ready'}", 200)

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self.toolbar, self.view.output, sizing_mode="stretch_width")

    def dispose(self) -> None:
        self.view.dispose()


class PlayTab(pn.viewable.Viewer):
    """A game on the Live settings: rounds and New game in :attr:`side`, the board in main."""

    rounds = param.Integer(
        default=30, bounds=(5, MAX_GAME_HORIZON), doc="Rounds of a game (clicks per player)."
    )

    def __init__(self, config: Config, **params: Any) -> None:
        super().__init__(**params)
        self.config = config
        self.games = 0
        self.rounds_input = pn.widgets.IntInput.from_param(
            self.param.rounds, label="Rounds of the game", sizing_mode="stretch_width"
        )
        self.new_button = pn.widgets.Button(
            label="New game",
            color="primary",
            css_classes=["play-new-game"],
            stylesheets=[":host .bk-btn { font-size: 16px; padding: 8px 18px; }"],
        )
        on_click(self.new_button, lambda: self.new_game())
        self.summary = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.notice = pn.pane.Alert(
            "", alert_type="info", visible=False, css_classes=["play-settings-notice"]
        )
        self.board = pn.Column(sizing_mode="stretch_width")
        self.view: PlayView | None = None
        self.side = pn.Column(
            pn.pane.Markdown(
                "Pick the arms each round; the algorithms play the same instance with the "
                "same random numbers. The game uses the problem, algorithms, constants and "
                "seed of the **Live run** settings; **New game** reads them again."
            ),
            self.rounds_input,
            self.notice,
            self.summary,
            sizing_mode="stretch_width",
            css_classes=["play-controls"],
        )
        self.new_game()

    def __panel__(self) -> pn.viewable.Viewable:
        return self.board

    def settings(self) -> tuple[Any, list[str], dict[str, dict[str, Any]], str]:
        """``(spec, algorithms, constants, why)`` of the next game: the Live settings when
        they can be played, else the problem's small game and the reason (plain text)."""
        c = self.config
        problem = c.problem if c.problem in SMALL_GAMES else "cmab"
        why = ""
        if c.errors:
            why = f"The Live settings cannot run ({shorten(c.errors[0], 200)})"
        else:
            arms = c.d if problem == "cmab" else c.K
            if arms > MAX_PLAY_ARMS:
                what = "d" if problem == "cmab" else "K"
                why = (
                    f"The Live settings have {what} = {arms} arms, more than the "
                    f"{MAX_PLAY_ARMS} buttons a game shows"
                )
        if not why:
            spec = c.spec()
            if problem == "cmab" and spec.oracle_delay:
                # the race is simulated in the click: the oracle's sleep would only stall it
                # (the delay changes no number; the game counts no wall time)
                spec = dataclasses.replace(spec, oracle_delay=0.0)
            return spec, list(c.algorithms), c.algorithm_constants(), ""
        small = SMALL_GAMES[problem]
        sizes = ", ".join(f"{k} = {v}" for k, v in small.items())
        options = Config.options_for(problem)
        algorithms = [a for a in c.algorithms if a in options] or Config.default_algorithms(problem)
        return (
            make_spec(problem, **small),
            algorithms[:2],
            {},
            f"{why}: playing a small game ({sizes}) instead.",
        )

    def new_game(self) -> bool:
        """Start a game on the current Live settings; False (with a notice) if none could."""
        spec, algorithms, constants, why = self.settings()
        seed = self.config.seed + self.games  # each New game is a fresh instance
        try:
            view = PlayView.new(spec, algorithms, self.rounds, seed, constants)
        except ValueError as exc:
            self._say(f"Cannot start a game: {str(exc).splitlines()[0]}", "danger")
            return False
        self.games += 1
        self.view = view
        self._say(why, "info")
        g = view.game
        fields = ", ".join(f"{k} = {v}" for k, v in _sizes(spec).items())
        self.summary.object = escape(
            f"Game {self.games}: {g.problem}, {fields}, {g.horizon} rounds, seed {seed}; "
            f"against {', '.join(g.algorithms) or 'nobody'}.",
            400,
        )
        view.toolbar.append(self.new_button)  # the game's toolbar: Play this round, New game
        self.board.objects = [view]
        return True

    def _say(self, text: str, kind: str) -> None:
        self.notice.param.update(object=escape(text, 400), alert_type=kind, visible=bool(text))


def _sizes(spec: Any) -> dict[str, Any]:
    keys = ("d", "m", "actions") if spec.problem == "cmab" else ("d", "K")
    return {k: getattr(spec, k) for k in keys if hasattr(spec, k)}


class PageTabs(pn.viewable.Viewer):
    """Live / Sweep / Play tabs with the open tab's settings in :attr:`side`.

    Parameters
    ----------
    config : Config
        The Live settings (the Sweep starts from its problem; the Play tab plays it).
    live_side, live_main : Panel objects
        The Live tab's sidebar and main area.
    sweep_options : dict, optional
        Keyword arguments of :class:`~dashboard.ui.sweep_view.SweepView` (``client=`` /
        ``scheduler=``; default: the served engine's client, as the ``/sweep`` page).
    """

    active = param.Selector(default="live", objects=list(TABS), doc="The open tab.")

    def __init__(
        self,
        config: Config,
        live_side: Any,
        live_main: Any,
        sweep_options: dict[str, Any] | None = None,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        self.config = config
        self.sweep_options = dict(sweep_options or {})
        self.sweep: SweepTab | None = None
        self.play: PlayTab | None = None
        self._live_side = live_side
        self._mains = {k: pn.Column(sizing_mode="stretch_width") for k in ("sweep", "play")}
        self._sides = {k: pn.Column(sizing_mode="stretch_width") for k in ("sweep", "play")}
        self.tabs = pn.Tabs(
            (TABS["live"], live_main),
            (TABS["sweep"], self._mains["sweep"]),
            (TABS["play"], self._mains["play"]),
            sizing_mode="stretch_width",
            css_classes=["page-tabs"],
            stylesheets=[_TAB_CSS],
        )
        self.side = pn.Column(
            live_side, self._sides["sweep"], self._sides["play"], sizing_mode="stretch_width"
        )
        self.tabs.param.watch(self._on_tabs, "active")
        self._show("live")

    def __panel__(self) -> pn.viewable.Viewable:
        return self.tabs

    def open(self, key: str) -> None:
        """Open tab ``key`` (``live``, ``sweep`` or ``play``), building it on first open."""
        self.tabs.active = list(TABS).index(key)  # the watcher builds and shows it

    def _on_tabs(self, event: Any) -> None:
        self._show(list(TABS)[event.new])

    def _show(self, key: str) -> None:
        if key == "sweep" and self.sweep is None:
            self.sweep = SweepTab(self.config, **self.sweep_options)
            self._sides["sweep"].objects = [self.sweep.side]
            self._mains["sweep"].objects = [self.sweep]
        elif key == "play" and self.play is None:
            self.play = PlayTab(self.config)
            self._sides["play"].objects = [self.play.side]
            self._mains["play"].objects = [self.play]
        with pn.io.hold():
            self._live_side.visible = key == "live"
            for k, column in self._sides.items():
                column.visible = k == key
        self.active = key

    def apply_query(self, query: dict[str, str]) -> list[str]:
        """Open the tab named by ``?tab=``; return a notice (plain text) for an unknown one."""
        raw = str(query.get("tab", "")).strip().lower()
        if not raw:
            return []
        if raw not in TABS:
            return [f"Ignored tab={shorten(raw, 60)!r}: allowed: {', '.join(TABS)}."]
        if raw != self.active:
            self.open(raw)
        return []

    def url_notices(self, location: Any, controls: Any) -> Any:
        """The ``on_notices`` callback of the page's :class:`~dashboard.ui.urlstate.UrlSync`:
        each address it applies also opens the tab named by ``tab=`` (its notice joins the
        configuration's), and opening a tab writes ``tab=`` into the address."""

        def on_notices(notices: list[str]) -> None:
            query = dict(split_query(location.search or ""))
            controls.show_url_notices([*notices, *self.apply_query(query)])

        def write(event: Any) -> None:
            pairs = [(k, v) for k, v in split_query(location.search or "") if k != "tab"]
            if event.new != "live" or "tab" in dict(split_query(location.search or "")):
                pairs.append(("tab", event.new))
            location.search = "?" + urlencode(pairs)

        self.param.watch(write, "active")
        return on_notices

    def dispose(self) -> None:
        """Cancel a running sweep (the session ended)."""
        if self.sweep is not None:
            self.sweep.dispose()

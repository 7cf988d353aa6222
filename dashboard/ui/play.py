""" "Can you beat AROQ?": the play-mode Viewer (issue 11).

:class:`PlayView` shows a :class:`~dashboard.simulation.play.Game`: one toggle button per arm
(``d`` base arms for the combinatorial problem, ``K`` arms for the semiparametric one), a
**Play this round** button, the outcome of each chosen base arm, the player's regret curve
beside the algorithms' (same instance, same random numbers) and, when the last round is
played, the true means.  The round counter, **Play this round** (and the tab's **New
game**) sit in one toolbar row under the title (CSS ``play-toolbar``), always in the first
screen.  The regret plot is a :class:`~dashboard.ui.live.LivePlot` updated in place after
every round (CSS ``play-plot``).  An invalid choice (wrong count, an infeasible action, a
click after
the end) changes nothing and shows an escaped inline notice.  It works on its own in a
notebook (``PlayView.new(spec, ["AROQ-CMAB"], horizon=50)``) or served with ``pn.serve``;
the dashboard is not required.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import panel as pn
import param

from ..simulation.play import PLAYER, Game
from ..simulation.specs import ProblemSpec
from . import plots
from .document import on_click
from .live import LivePlot
from .safe import escape

__all__ = ["PlayView"]

#: Arm and submit buttons a class can read on a projector (and hit without aiming).
_BIG_BUTTONS = ":host .bk-btn { font-size: 18px; padding: 10px 16px; }"
#: The arms wrap onto more rows instead of running off a narrow screen (d = 20 arms).
_WRAP_ARMS = ":host .bk-btn-group { flex-wrap: wrap; }"


class PlayView(pn.viewable.Viewer):
    """A game of the bandit against the algorithms, clickable.

    Parameters
    ----------
    game : Game
        The game to show (a new one for every game: see :meth:`new`).
    """

    game = param.ClassSelector(class_=Game, doc="The game being played.")
    notice = param.String(default="", doc="Last notice shown (escaped text).")

    def __init__(self, game: Game, **params: Any) -> None:
        super().__init__(game=game, **params)
        g = self.game
        self.arms = pn.widgets.CheckButtonGroup(
            label="arms",
            options={f"arm {i}": i for i in range(g.n_arms)},
            value=[],
            color="primary",
            variant="outline",
            css_classes=["play-arms"],
            sizing_mode="stretch_width",
            stylesheets=[_BIG_BUTTONS, _WRAP_ARMS],
        )
        self.submit = pn.widgets.Button(
            label="Play this round",
            color="success",
            css_classes=["play-submit"],
            stylesheets=[_BIG_BUTTONS],
        )
        on_click(self.submit, lambda: self.play_round())
        # projector-readable text: the rule, outcomes and the reveal are what a class reads
        big = {"font-size": "18px"}
        self.rule = pn.pane.Markdown(escape(f"Round 1 of {g.horizon}: {g.choose}."), styles=big)
        self.alert = pn.pane.Alert(
            "", alert_type="warning", visible=False, css_classes=["play-notice"]
        )
        self.outcome = pn.pane.Markdown("", css_classes=["play-outcome"], styles=big)
        self.reveal = pn.pane.Markdown("", visible=False, css_classes=["play-reveal"], styles=big)
        names = [PLAYER, *g.algorithms]
        self.live = LivePlot(
            "play-regret",
            lambda res: plots.regret_plot(res, names, show_rate=False),
            g.result(),
            frames=lambda res: plots.regret_frames(res, names, show_rate=False),
            y_keys=("regret", "regret_hi"),
        )
        self.plot = pn.Column(
            self.live.pane, sizing_mode="stretch_width", css_classes=["play-plot"]
        )
        self.toolbar = pn.FlexBox(
            self.submit,
            self.rule,
            align_items="center",
            sizing_mode="stretch_width",
            css_classes=["play-toolbar"],
        )
        self._layout = pn.Column(
            pn.pane.Markdown(
                "## Can you beat " + escape(", ".join(g.algorithms) or "chance") + "?"
            ),
            self.toolbar,
            self.arms,
            self.alert,
            self.outcome,
            self.plot,
            self.reveal,
            sizing_mode="stretch_width",
            css_classes=["play-view"],
        )

    @classmethod
    def new(
        cls,
        spec: ProblemSpec,
        algorithms: Sequence[str] = ("AROQ-CMAB",),
        horizon: int = 50,
        seed: int = 0,
        params: dict[str, dict[str, Any]] | None = None,
    ) -> PlayView:
        """A view of a new :class:`Game` (ValueError for invalid settings, as the game)."""
        return cls(Game(spec, algorithms, horizon, seed, params))

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout

    # ------------------------------------------------------------------ actions
    def _say(self, text: str) -> None:
        self.notice = text
        self.alert.object = escape(text, limit=300)
        self.alert.visible = bool(text)

    def play_round(self, arms: Sequence[int] | None = None) -> bool:
        """Play the selected arms (or ``arms``); return whether a round was played.  An
        invalid choice is reported in the notice and changes nothing."""
        chosen = list(self.arms.value if arms is None else arms)
        g = self.game
        try:
            out = g.play(chosen)
        except ValueError as exc:
            self._say(str(exc))
            return False
        self._say("")
        pairs = ", ".join(f"arm {a}: {y:.3f}" for a, y in zip(out.arms, out.outcomes))
        self.outcome.object = escape(
            f"Round {out.t}: you played {list(out.arms)}; outcomes {pairs}; "
            f"reward {out.reward:.3f}."
        )
        with pn.io.hold():
            self.live.send(g.result())
            if g.done:
                self.rule.object = escape(f"Game over after {g.horizon} rounds.")
                self.submit.disabled = True
                self.reveal.object = self._reveal_text()
                self.reveal.visible = True
            else:
                self.rule.object = escape(f"Round {g.t + 1} of {g.horizon}: {g.choose}.")
        return True

    def _reveal_text(self) -> str:
        g = self.game
        info = g.reveal()
        finals = g.final_regrets()
        lines = ["### The truth", ""]
        if g.problem == "cmab":
            means = ", ".join(f"arm {i}: {m:.3f}" for i, m in enumerate(info["mu"]))
            lines.append(escape(f"True means: {means}. Best action: {info['optimal_action']}."))
        else:
            means = ", ".join(f"arm {i}: {m:.3f}" for i, m in enumerate(info["mean_rewards"]))
            lines.append(escape(f"Mean rewards: {means}. Best arm: {info['best_arm']}."))
        lines.append("")
        for name, value in finals.items():
            lines.append("- " + escape(f"{name}: regret {value:.2f}"))
        best = min(finals, key=finals.get)
        lines += ["", escape(f"Lowest regret: {best}.")]
        return "\n".join(lines)

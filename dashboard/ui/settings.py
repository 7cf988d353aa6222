"""Problem settings: the sidebar's widgets, each bound to a :class:`~dashboard.ui.model.Config`
parameter with ``from_param`` (the widget and the parameter are one value), shown for the
chosen problem.

The one exception is the algorithm choice: Bokeh's MultiChoice renders option labels as HTML
(Choices.js ``allowHTML``), so its options are the problem's *registered* algorithms (plus
any other registered name chosen, which the alert explains) and a name that is not registered
never reaches it (see :func:`algorithm_choices`); the model's list is shown in the widget
without being written back, and a user's change is written to the model.
"""

from __future__ import annotations

from typing import Any

import panel as pn

from ..simulation.bands import BANDS
from .model import MAX_ALGORITHMS, SPEEDS, Config

__all__ = ["PROBLEM_LABELS", "ProblemSettings", "algorithm_choices"]

PROBLEM_LABELS = {"Combinatorial semi-bandit": "cmab", "Semiparametric bandit": "semiparametric"}


def algorithm_choices(config: Config) -> dict[str, list[str]]:
    """Options and value of the algorithm MultiChoice: the problem's algorithms plus any other
    *registered* name chosen (its alert explains why it does not fit).  A name that is not
    registered never reaches the widget: Bokeh's MultiChoice (Choices.js, ``allowHTML``)
    renders option labels as HTML; the alert names it, escaped."""
    options = list(config.algorithm_options)
    known = set(Config.options_for("cmab")) | set(Config.options_for("semiparametric"))
    extra = [a for a in config.algorithms if a not in options and a in known]
    return {"options": options + extra, "value": [a for a in config.algorithms if a in known]}


class ProblemSettings(pn.viewable.Viewer):
    """Problem, instance, algorithms, horizon, repetitions, seed, speed, axes and band."""

    def __init__(self, config: Config, **params: Any) -> None:
        super().__init__(**params)
        c = self.config = config
        self.problem_select = pn.widgets.Select.from_param(
            c.param.problem, label="Problem", options=PROBLEM_LABELS, css_classes=["problem-select"]
        )
        self.d_input = pn.widgets.IntInput.from_param(c.param.d, label="d (arms / dimension)")
        self.cmab_widgets = pn.Column(
            pn.widgets.IntInput.from_param(c.param.m, label="m (max action size)"),
            pn.widgets.Select.from_param(c.param.actions, label="Action family"),
            pn.widgets.Select.from_param(c.param.reward, label="Reward model"),
            pn.widgets.FloatInput.from_param(
                c.param.oracle_delay, label="Oracle cost (seconds per call)", step=0.001
            ),
            pn.widgets.FloatSlider.from_param(
                c.param.alpha, label="alpha (approximate oracle)", step=0.05
            ),
            sizing_mode="stretch_width",
            margin=0,
        )
        self.sp_widgets = pn.Column(
            pn.widgets.IntInput.from_param(c.param.K, label="K (arms)"),
            pn.widgets.Select.from_param(c.param.shift, label="Shift type ν_t"),
            pn.widgets.FloatInput.from_param(c.param.magnitude, label="Shift magnitude", step=0.1),
            pn.widgets.FloatInput.from_param(c.param.gap, label="Gap Δ*", step=0.05),
            pn.widgets.FloatInput.from_param(c.param.noise, label="Noise level σ", step=0.1),
            sizing_mode="stretch_width",
            margin=0,
        )
        self.algorithm_select = pn.widgets.MultiChoice(
            label=f"Algorithms (up to {MAX_ALGORITHMS})",
            **algorithm_choices(c),
            max_items=MAX_ALGORITHMS,
            css_classes=["algorithm-select"],
            sizing_mode="stretch_width",
        )
        self._showing = False
        self.algorithm_select.param.watch(self._on_widget, "value")
        c.param.watch(self._on_model, ["algorithms", "algorithm_options", "problem"])
        self.horizon_input = pn.widgets.IntInput.from_param(
            c.param.horizon, label="Horizon T", step=10_000
        )
        self.runs_input = pn.widgets.IntInput.from_param(c.param.runs, label="Repetitions")
        self.seed_input = pn.widgets.IntInput.from_param(c.param.seed, label="Seed")
        self.speed_select = pn.widgets.RadioButtonGroup.from_param(
            c.param.speed, label="Playback speed", options=list(SPEEDS)
        )
        self.log_toggle = pn.widgets.Checkbox.from_param(
            c.param.log_axes, label="Log-log regret axes"
        )
        self.band_select = pn.widgets.Select.from_param(
            c.param.band,
            label="Band over runs",
            options={text: key for key, text in BANDS.items()},
            css_classes=["band-select"],
        )
        self._layout = pn.Column(
            self.problem_select,
            self.d_input,
            self.cmab_widgets,
            self.sp_widgets,
            self.algorithm_select,
            pn.Row(self.horizon_input, self.runs_input, sizing_mode="stretch_width"),
            self.seed_input,
            pn.pane.Markdown("Playback speed", margin=(0, 10)),
            self.speed_select,
            self.log_toggle,
            self.band_select,
            sizing_mode="stretch_width",
            margin=0,
        )
        self._on_model()

    def _on_widget(self, event: Any) -> None:
        if not self._showing and list(event.new) != list(self.config.algorithms):
            self.config.algorithms = list(event.new)

    def _on_model(self, *_: Any) -> None:
        """The problem's widgets and the model's algorithms into the widgets."""
        cmab = self.config.problem == "cmab"
        self.cmab_widgets.visible = cmab
        self.sp_widgets.visible = not cmab
        self._showing = True
        try:
            self.algorithm_select.param.update(**algorithm_choices(self.config))
        finally:
            self._showing = False

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout

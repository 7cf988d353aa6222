"""Problem settings: the sidebar's widgets, each bound to a :class:`~dashboard.ui.model.Config`
parameter with ``from_param`` (the widget and the parameter are one value), shown for the
chosen problem.

The algorithm picker too: a MultiChoice made from ``Config.algorithms``, a ``ListSelector``
whose ``objects`` are the problem's registered algorithms (:class:`~dashboard.ui.config.
AlgorithmSelector`).  Panel keeps its options and value in step with the parameter; a name
that is not offered is refused by the parameter itself (URL, API, preset), so it never
reaches the widget, whose option labels Bokeh renders as HTML (Choices.js ``allowHTML``).
"""

from __future__ import annotations

from typing import Any

import panel as pn

from ..simulation.bands import BANDS
from .model import MAX_ALGORITHMS, SPEEDS, Config

__all__ = ["PROBLEM_LABELS", "ProblemSettings"]

PROBLEM_LABELS = {"Combinatorial semi-bandit": "cmab", "Semiparametric bandit": "semiparametric"}


class ProblemSettings(pn.viewable.Viewer):
    """Problem, instance, algorithms, horizon, repetitions, seed, axes and band; the playback
    speed (:attr:`speed_select`) is built here and shown in the run toolbar."""

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
        self.algorithm_select = pn.widgets.MultiChoice.from_param(
            c.param.algorithms,
            label=f"Algorithms (up to {MAX_ALGORITHMS})",
            max_items=MAX_ALGORITHMS,
            css_classes=["algorithm-select"],
            sizing_mode="stretch_width",
        )
        c.param.watch(self._on_problem, ["problem"])
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
            self.log_toggle,
            self.band_select,
            sizing_mode="stretch_width",
            margin=0,
        )
        self._on_problem()

    def _on_problem(self, *_: Any) -> None:
        """Show the chosen problem's widgets."""
        cmab = self.config.problem == "cmab"
        self.cmab_widgets.visible = cmab
        self.sp_widgets.visible = not cmab

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout

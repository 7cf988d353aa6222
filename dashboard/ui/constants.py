"""The constants editor: the collapsed "Algorithm constants" card, one widget per constant of
each chosen algorithm (the papers' open constants, GUIDE section 3), its inline message and a
reset button.  Values live in ``Config.constants`` (only what differs from the defaults, so
links and presets stay short); invalid values are kept and explained (Run is disabled).
"""

from __future__ import annotations

from typing import Any

import panel as pn

from .document import on_click
from .model import CONSTANTS, Config, Knob
from .safe import escape

__all__ = ["ConstantsEditor"]


def _show_value(widget: Any, value: Any) -> None:
    """Show a constant's value in its widget; a value of the wrong type (set from code) leaves
    the widget as it is: the constants alert explains the value."""
    try:
        widget.value = value
    except (ValueError, TypeError):
        pass


class ConstantsEditor(pn.viewable.Viewer):
    """The "Algorithm constants" card (CSS ``constants-card``; a widget per constant with CSS
    class ``constant-<algorithm>-<name>``; message ``constants-alert``)."""

    def __init__(self, config: Config, **params: Any) -> None:
        super().__init__(**params)
        self.config = config
        self.widgets: dict[tuple[str, str], Any] = {}
        self._syncing = False
        self.alert = pn.pane.Alert(
            "", alert_type="warning", css_classes=["constants-alert"], visible=False
        )
        self.reset_button = pn.widgets.Button(
            label="All constants to the papers' defaults",
            color="default",
            css_classes=["constants-reset-button"],
        )
        on_click(self.reset_button, lambda: setattr(self.config, "constants", None))
        self.body = pn.Column(sizing_mode="stretch_width", margin=0)
        self.card = pn.Card(
            pn.pane.Markdown(
                "Constants the papers leave open (see docs/DIFFERENCES.md). Changed values "
                "go into the link and the preset.",
                styles={"font-size": "14px"},
            ),
            self.body,
            self.alert,
            self.reset_button,
            title="Algorithm constants",
            collapsed=True,
            css_classes=["constants-card"],
            sizing_mode="stretch_width",
        )
        self.rebuild()
        config.param.watch(lambda *_: self.rebuild(), ["algorithms"])
        config.param.watch(self._on_constants, ["constants"])
        config.param.watch(lambda *_: self.show_errors(), ["errors", "problem"])

    def _widget(self, algorithm: str, knob: Knob) -> Any:
        value = self.config.constant(algorithm, knob.name)
        css = [f"constant-{algorithm}-{knob.name}".replace(" ", "-")]
        if knob.kind == "choice":
            widget = pn.widgets.Select(
                label=knob.label, options=list(knob.choices), css_classes=css
            )
        elif knob.kind == "bool":  # declared by plug-ins (no built-in card constant is one)
            widget = pn.widgets.Checkbox(label=knob.label, css_classes=css)
        elif knob.kind == "int":
            widget = pn.widgets.IntInput(
                label=knob.label, value=None, placeholder="auto", css_classes=css
            )
        else:
            widget = pn.widgets.FloatInput(label=knob.label, value=None, step=0.05, css_classes=css)
        _show_value(widget, value)
        widget.sizing_mode = "stretch_width"

        def changed(event: Any, algorithm: str = algorithm, name: str = knob.name) -> None:
            if not self._syncing:
                self.config.set_constant(algorithm, name, event.new)

        widget.param.watch(changed, "value")
        return widget

    def rebuild(self) -> None:
        """One group of widgets per chosen algorithm that has constants (CONSTANTS)."""
        self.widgets = {}
        groups: list[Any] = []
        for algorithm in self.config.algorithms:
            knobs = CONSTANTS.get(algorithm, ())
            if not knobs:
                continue
            groups.append(pn.pane.Markdown(f"**{escape(algorithm)}**", margin=(8, 10, 0, 10)))
            for knob in knobs:
                widget = self._widget(algorithm, knob)
                self.widgets[(algorithm, knob.name)] = widget
                groups.append(widget)
        if not groups:
            groups = [pn.pane.Markdown("The chosen algorithms have no open constants.")]
        self.body.objects = groups
        self.show_errors()

    def _on_constants(self, *_: Any) -> None:
        """The constants changed (URL, preset, reset button): show them in the widgets."""
        self._syncing = True
        try:
            for (algorithm, name), widget in self.widgets.items():
                value = self.config.constant(algorithm, name)
                if widget.value != value:
                    _show_value(widget, value)
        finally:
            self._syncing = False
        self.show_errors()

    def show_errors(self) -> None:
        """The constants' problems, escaped, in the card (opened: an invalid value never
        hides)."""
        errors = self.config._check_constants()
        text = " ".join(escape(e, 400) for e in errors)
        self.alert.param.update(
            object=text + (" Fix this to enable Run." if errors else ""), visible=bool(errors)
        )
        if errors:
            self.card.collapsed = False

    def __panel__(self) -> pn.viewable.Viewable:
        return self.card

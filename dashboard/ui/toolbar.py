"""The run toolbar: one row at the top of the Live tab's main area, always in the first screen.

Like TensorFlow Playground's bar: Run, Pause / Resume, Step, Reset, the playback speed and
the ``t / T`` progress line first, then Present, the theme switch, the keys overlay (``?``),
the plot board's PNG / SVG export and the run report.  It wraps onto a second line on a
narrow window rather than leave the screen, and it stays when present mode hides the
sidebar.

The buttons keep their accessible names (``Run``, ``Pause`` / ``Resume``, ``Step``,
``Reset``): their icons are CSS ``::before`` content with an empty alternative text, so a
screen reader and ``get_by_role("button", name="Run")`` read the word only.  The widgets are
the run controls' and the settings' own (:class:`~dashboard.ui.controls.RunControls`,
:class:`~dashboard.ui.settings.ProblemSettings`): moved here, not copied.  CSS hooks:
``run-toolbar``, ``present-button``, ``theme-button``, ``keys-button``, ``export-png``,
``export-svg``, ``download-report``.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import panel as pn

from .document import on_click
from .keys import PageKeys
from .theme import theme_switch

__all__ = ["RunToolbar", "icon_css"]

#: Toolbar buttons: big enough to hit on a projector from the lectern.
_BUTTON_CSS = ":host .bk-btn { font-size: 17px; padding: 6px 14px; white-space: nowrap; }"


def icon_css(icon: str) -> str:
    """A stylesheet putting ``icon`` before a button's label, left out of its accessible
    name (CSS generated content with an empty alternative text)."""
    return f':host .bk-btn::before {{ content: "{icon}\\00a0" / ""; }}'


#: The other buttons (present, theme, keys, export, report): a size smaller.
_SMALL_CSS = ":host .bk-btn { font-size: 15px; padding: 5px 10px; white-space: nowrap; }"


def _button(label: str, css: str, icon: str = "", **kwargs: Any) -> pn.widgets.Button:
    sheets = [_SMALL_CSS] + ([icon_css(icon)] if icon else [])
    return pn.widgets.Button(
        label=label, css_classes=[css], stylesheets=sheets, margin=(4, 3), **kwargs
    )


def _js_button(label: str, css: str, code: str, description: str) -> pn.widgets.Button:
    button = _button(label, css, description=description)
    button.js_on_click(code=code)
    return button


class RunToolbar(pn.viewable.Viewer):
    """The toolbar row of the Live tab.

    Parameters
    ----------
    controls : RunControls
        Whose Run / Pause / Step / Reset buttons and progress line the toolbar shows.
    speed : Panel widget
        The playback speed selector (the settings' own).
    on_present : callable
        ``on_present()``: the Present button was clicked (toggle present mode).
    report : callable
        ``report() -> (html_text, filename)`` of the run shown, for *Download report*.
    """

    def __init__(
        self,
        controls: Any,
        speed: Any,
        on_present: Callable[[], Any],
        report: Callable[[], tuple[str, str]],
        **params: Any,
    ) -> None:
        super().__init__(**params)
        for button, icon in (
            (controls.run_button, "▶"),
            (controls.pause_button, "❚❚"),
            (controls.step_button, "▸|"),
            (controls.reset_button, "↺"),
        ):
            button.stylesheets = [*button.stylesheets, _BUTTON_CSS, icon_css(icon)]
            button.margin = (4, 3)
        speed.param.update(margin=(4, 6), sizing_mode=None, width=230)
        speed.stylesheets = [*speed.stylesheets, ":host .bk-btn { font-size: 15px; }"]
        self.keys = PageKeys()
        self.present_button = _button("Present", "present-button")
        on_click(self.present_button, on_present)
        self.theme_button = theme_switch(stylesheets=[_SMALL_CSS], margin=(4, 3))
        self.keys_button = _js_button(
            "?",
            "keys-button",
            "window.dispatchEvent(new Event('bandit-keys-help'))",
            "Keyboard shortcuts",
        )
        self.png_button = _js_button(
            "PNG", "export-png", "window.banditExport('png')", "Save the plots as a PNG image"
        )
        self.svg_button = _js_button(
            "SVG", "export-svg", "window.banditExport('svg')", "Save the plots as an SVG image"
        )
        self._report = report
        self.report_download = pn.widgets.FileDownload(
            callback=self._report_file,
            filename="bandit-report.html",
            label="Report",
            button_type="success",
            css_classes=["download-report"],
            stylesheets=[_SMALL_CSS],
            disabled=True,
            margin=(4, 3),
            width=90,
        )
        controls.progress_text.model.width = 290
        controls.progress_text.model.sizing_mode = None
        self._row = pn.FlexBox(
            controls.run_button,
            controls.pause_button,
            controls.step_button,
            controls.reset_button,
            speed,
            pn.pane.Bokeh(controls.progress_text.model, margin=(6, 0), width=290),
            self.present_button,
            self.theme_button,
            self.keys_button,
            self.png_button,
            self.svg_button,
            self.report_download,
            self.keys,
            flex_wrap="wrap",
            align_items="center",
            sizing_mode="stretch_width",
            css_classes=["run-toolbar"],
            styles={"border-bottom": "1px solid rgba(128, 128, 128, 0.35)", "padding": "2px 0"},
            margin=(0, 0, 6, 0),
        )

    def _report_file(self) -> io.BytesIO:
        text, name = self._report()
        self.report_download.filename = name
        return io.BytesIO(text.encode("utf-8"))

    def __panel__(self) -> pn.viewable.Viewable:
        return self._row

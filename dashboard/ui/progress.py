"""The run's progress line, ``t = 12,345 / 200,000 (running)``, and its bar, as one Bokeh ``Div``.

It changes on every frame of every running page.  Two Panel components (a ``StaticText`` and
a ``Progress`` indicator) cost the server's loop ~0.5 ms each per change: Panel re-derives the
component's design and stylesheet paths on every property update.  On a served class of 30
that was ~10% of the loop's time.  A plain Bokeh ``Div`` sends only its new ``text``; the bar
is a CSS width inside it, so text and bar change in one property, in the frame's own patch.

The text is ours (numbers and a status word), never user input.  Hook for browser tests:
``progress-text``.
"""

from __future__ import annotations

from typing import Any

import panel as pn
from bokeh.models import Div

__all__ = ["ProgressLine"]

#: Inline styles, not a stylesheet: with an ``InlineStyleSheet`` on the Div the bar showed in a
#: static page but not in the served dashboard (no height: seen in a Chromium screenshot; the
#: cause inside the template was not pinned down).  The browser test checks the drawn bar.
_LINE = "font-size: 16px; margin: 0 10px 4px 10px"
_TRACK = (
    "width: 270px; max-width: calc(100vw - 40px); height: 14px; margin: 0 10px; "
    "border-radius: 7px; background: #e9ecef; overflow: hidden"
)
_FILL = "height: 100%; background: #0d6efd"


class ProgressLine(pn.viewable.Viewer):
    """``t / T (status)`` and a bar of ``percent``; :meth:`show` sets both at once."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._value = ""
        self._percent = 0
        self.model = Div(
            text=self._html(),
            css_classes=["progress-text"],
            sizing_mode="stretch_width",
        )

    @property
    def value(self) -> str:
        """The progress line's HTML (without the bar)."""
        return self._value

    @property
    def percent(self) -> int:
        """The bar's fill, 0-100."""
        return self._percent

    def show(self, value: str, percent: int) -> None:
        """Show ``value`` (our own HTML) over a bar ``percent`` full; no change, no event."""
        percent = int(min(max(percent, 0), 100))
        if value == self._value and percent == self._percent:
            return
        self._value, self._percent = value, percent
        self.model.text = self._html()

    def _html(self) -> str:
        return (
            f'<div class="progress-line" style="{_LINE}">{self._value}</div>'
            f'<div class="progress-track" role="progressbar" aria-valuenow="{self._percent}" '
            f'aria-valuemin="0" aria-valuemax="100" style="{_TRACK}">'
            f'<div class="progress-fill" style="{_FILL}; width: {self._percent}%"></div></div>'
        )

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.pane.Bokeh(self.model, sizing_mode="stretch_width", margin=0)

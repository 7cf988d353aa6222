"""Open a saved result and overlay it on the live regret plot (issue 10).

:class:`SavedOverlay` (a ``pn.viewable.Viewer``) is a file upload, never a server path: the
browser sends the bytes of a file written by ``python -m dashboard simulate --save FILE`` or
``sweep --out FILE``, and :func:`dashboard.simulation.store.saved_results` reads them (size cap,
format, malformed lines, non-finite curves: one ValueError sentence, shown escaped).  A sweep
file offers its finished grid points in a selector; the chosen result is handed to
``on_change`` as a :class:`~dashboard.ui.plots.base.Saved` (or ``None`` when cleared), which the
app passes to the plot board: the saved curves are drawn dashed, with the chosen band,
labelled ``"<algorithm> (saved: seed S, T=..., <point>)"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import panel as pn
import param

from ..simulation.store import MAX_UPLOAD_BYTES, saved_results
from .document import on_click
from .plots.base import Saved
from .safe import escape, shorten

__all__ = ["SavedOverlay", "saved_note"]


def saved_note(result: Any, point: dict[str, Any]) -> str:
    """The legend suffix of a saved result, e.g. ``"saved: seed 0, T=10000, d=10"``."""
    where = ", ".join(f"{k}={v}" for k, v in point.items())
    note = f"saved: seed {result.seed}, T={result.horizon}" + (f", {where}" if where else "")
    return shorten(note, 120)


class SavedOverlay(pn.viewable.Viewer):
    """Upload a saved run or sweep, pick a sweep point, overlay or clear it.

    Parameters
    ----------
    on_change : callable
        ``on_change(saved: Saved | None)``: the overlay to draw (``None``: remove it).
    """

    note = param.String(default="", doc="Plain-text status of the overlay (escaped when shown).")
    max_bytes = param.Integer(
        default=MAX_UPLOAD_BYTES, bounds=(1, None), doc="Largest file read (bytes)."
    )

    def __init__(self, on_change: Callable[[Saved | None], None], **params: Any) -> None:
        super().__init__(**params)
        self.on_change = on_change
        self.entries: list[tuple[dict[str, Any], Any]] = []
        self.filename = ""
        self.file_input = pn.widgets.FileInput(
            accept=".jsonl,.json,.txt", multiple=False, css_classes=["saved-file"]
        )
        self.point_select = pn.widgets.Select(
            label="Sweep point to overlay", options={}, visible=False, css_classes=["saved-point"]
        )
        self.clear_button = pn.widgets.Button(
            label="Clear overlay", disabled=True, css_classes=["saved-clear"]
        )
        self.notice = pn.pane.Markdown(
            "", styles={"font-size": "14px"}, margin=(0, 10), css_classes=["saved-notice"]
        )
        self.file_input.param.watch(self._on_file, "value")
        self.point_select.param.watch(self._on_point, "value")
        on_click(self.clear_button, lambda: self.clear())
        self._layout = pn.Column(
            pn.pane.Markdown(
                "**Overlay a saved result** (a file from `simulate --save` or `sweep --out`)",
                margin=(0, 10),
            ),
            self.file_input,
            self.point_select,
            self.clear_button,
            self.notice,
            sizing_mode="stretch_width",
            margin=0,
        )

    # ------------------------------------------------------------------ actions
    def load(self, data: bytes, filename: str = "the file") -> bool:
        """Read an uploaded file and overlay its (first) result; False and an escaped notice
        if it is refused (the previous overlay stays)."""
        name = shorten(filename or "the file", 80)
        try:
            entries = saved_results(data, name, self.max_bytes)
        except ValueError as exc:
            self._say(f"Not overlaid: {exc}")
            return False
        self.entries, self.filename = entries, name
        options = {
            (", ".join(f"{k}={v}" for k, v in point.items()) or "the run"): i
            for i, (point, _) in enumerate(entries)
        }
        self.point_select.param.update(options=options, value=0, visible=len(entries) > 1)
        self._show(0)
        return True

    def clear(self) -> None:
        """Remove the overlay."""
        self.entries, self.filename = [], ""
        self.point_select.param.update(options={}, value=None, visible=False)
        self.clear_button.disabled = True
        self._say("")
        self.on_change(None)

    # ------------------------------------------------------------------ internals
    def _on_file(self, event: Any) -> None:
        if event.new:
            self.load(bytes(event.new), str(self.file_input.filename or "the file"))

    def _on_point(self, event: Any) -> None:
        if event.new is not None and self.entries:
            self._show(int(event.new))

    def _show(self, index: int) -> None:
        point, result = self.entries[index]
        saved = Saved(result, saved_note(result, point))
        names = ", ".join(r.algorithm for r in result.results)
        spec = result.spec or {}
        problem = spec.get("problem", "?")
        self.clear_button.disabled = False
        self._say(
            f"Overlaid (dashed) from {self.filename}: {names}; {problem}, T = {result.horizon}, "
            f"{result.runs} run(s), seed {result.seed}"
            + (f" ({len(self.entries)} sweep points)" if len(self.entries) > 1 else "")
            + "."
        )
        self.on_change(saved)

    def _say(self, text: str) -> None:
        self.note = text
        self.notice.object = escape(text, 400) if text else ""

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout

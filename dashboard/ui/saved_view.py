"""Open a saved result and overlay it on the live regret plot.

:class:`SavedOverlay` (a ``pn.viewable.Viewer``) is a file upload, never a server path: the
browser sends the bytes of a file written by ``python -m dashboard simulate --save FILE`` or
``sweep --out FILE`` and :func:`dashboard.simulation.store.saved_results` reads them (size,
lines, algorithms, runs, rounds and sweep points checked line by line before anything is
built, :mod:`dashboard.simulation.uploads`; format, malformed lines, non-finite curves: one
ValueError sentence, shown escaped).

What one upload may cost a served class is bounded: the browser refuses a file above 10 MB
before sending it and sends the others in 1 MB chunks (:class:`~dashboard.ui.upload.UploadDropper`);
the file is read in another process (:func:`~dashboard.ui.upload.read_off_loop`), never on the
event loop the class shares, one upload per session at a time; its curves come back thinned to
:data:`SAVED_POINTS` rounds, and at most :data:`MAX_OVERLAY_ALGORITHMS` of its algorithms are
drawn, so the regret plot's rebuild on the loop (and its cost on every later frame) does not
grow with the file.

A sweep file offers its finished grid points in a selector; the chosen result is handed to
``on_change`` as a :class:`~dashboard.ui.plots.base.Saved` (or ``None`` when cleared), which the
app passes to the plot board: the saved curves are drawn dashed, with the chosen band,
labelled ``"<algorithm> (saved: seed S, T=..., <point>)"``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import panel as pn
import param

from ..simulation.store import MAX_UPLOAD_BYTES, saved_results
from .algorithm_choice import MAX_ALGORITHMS
from .document import on_click
from .plots.base import Saved
from .safe import escape, shorten
from .upload import UploadDropper, read_off_loop, uploaded_file

__all__ = ["MAX_OVERLAY_ALGORITHMS", "SAVED_POINTS", "SavedOverlay", "saved_note"]

#: Most algorithms of a saved result drawn over the live plot: as many as the live board
#: compares (each adds three layers to the regret plot, whose rebuild runs on the event loop:
#: measured on the loaded 2-core machine, about 0.4 s for the plot plus 0.1 s per algorithm).
MAX_OVERLAY_ALGORITHMS = MAX_ALGORITHMS
#: Most recorded rounds per saved curve drawn (the live curves' default is 400).
SAVED_POINTS = 2000


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
    reading = param.Boolean(default=False, doc="An upload is being read.")

    def __init__(self, on_change: Callable[[Saved | None], None], **params: Any) -> None:
        super().__init__(**params)
        self.on_change = on_change
        self.entries: list[tuple[dict[str, Any], Any]] = []
        self.filename = ""
        self._choosing = False
        self._doc = pn.state.curdoc
        self.file_input = UploadDropper(self.max_bytes, css_classes=["saved-file"])
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
        self.file_input.param.watch(self._on_oversized, "oversized")
        self.point_select.param.watch(self._on_point, "value")
        self.param.watch(self._on_max_bytes, "max_bytes")
        on_click(self.clear_button, lambda: self.clear())
        self._layout = pn.Column(
            pn.pane.Markdown(
                "**Overlay a saved result** (a file from `simulate --save` or `sweep --out`, "
                f"up to {self.max_bytes / 1e6:g} MB)",
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
        """Read a file's bytes here and now (notebooks, tests; a page's upload is read in
        another process) and overlay its (first) result; False and an escaped notice if it
        is refused (the previous overlay stays)."""
        name = shorten(filename or "the file", 80)
        try:
            entries, error = saved_results(data, name, self.max_bytes, SAVED_POINTS), None
        except ValueError as exc:
            entries, error = None, exc
        return self._apply(name, entries, error)

    def open_upload(self, data: bytes, filename: str = "the file") -> None:
        """Read an uploaded file away from the event loop, then overlay it (or say why not);
        while one is read, another upload of this session is refused with a notice."""
        name = shorten(filename or "the file", 80)
        if self.reading:
            self._say(f"Not overlaid: {name} arrived while the previous file is still read.")
            return
        self.reading = True
        self._say(f"Reading {name} …")

        def done(entries: Any, error: ValueError | None) -> None:
            self.reading = False
            self._apply(name, entries, error)

        args = (bytes(data), name, self.max_bytes, SAVED_POINTS)
        read_off_loop(self._doc, saved_results, args, done)

    def clear(self) -> None:
        """Remove the overlay."""
        self.entries, self.filename = [], ""
        self.point_select.param.update(options={}, value=None, visible=False)
        self.clear_button.disabled = True
        self._say("")
        self.on_change(None)

    # ------------------------------------------------------------------ internals
    def _apply(self, name: str, entries: Any, error: ValueError | None) -> bool:
        if error is not None or not entries:
            self._say(f"Not overlaid: {error or 'the file holds no result'}")
            return False
        self.entries, self.filename = entries, name
        options = {
            (", ".join(f"{k}={v}" for k, v in point.items()) or "the run"): i
            for i, (point, _) in enumerate(entries)
        }
        self._choosing = True  # one rebuild of the plot, not a second one from the watcher
        try:
            self.point_select.param.update(options=options, value=0, visible=len(entries) > 1)
        finally:
            self._choosing = False
        self._show(0)
        return True

    def _on_file(self, event: Any) -> None:
        upload = uploaded_file(event.new)
        if upload is None:
            return  # the file was removed from the drop area
        self.file_input.value = {}  # the bytes are read once: do not keep them
        self.open_upload(upload[1], upload[0])

    def _on_max_bytes(self, event: Any) -> None:
        self.file_input.max_bytes = int(event.new)
        self.file_input.max_file_size = str(int(event.new))

    def _on_oversized(self, event: Any) -> None:
        if event.new:
            self._say(f"Not overlaid: {event.new}")

    def _on_point(self, event: Any) -> None:
        if event.new is not None and self.entries and not self._choosing:
            self._show(int(event.new))

    def _show(self, index: int) -> None:
        point, result = self.entries[index]
        total = len(result.results)
        if total > MAX_OVERLAY_ALGORITHMS:
            result = dataclasses.replace(result, results=result.results[:MAX_OVERLAY_ALGORITHMS])
        saved = Saved(result, saved_note(result, point))
        names = ", ".join(r.algorithm for r in result.results)
        spec = result.spec or {}
        problem = spec.get("problem", "?")
        self.clear_button.disabled = False
        self._say(
            f"Overlaid (dashed) from {self.filename}: {names}; {problem}, T = {result.horizon}, "
            f"{result.runs} run(s), seed {result.seed}"
            + (f" ({len(self.entries)} sweep points)" if len(self.entries) > 1 else "")
            + (
                f"; the first {MAX_OVERLAY_ALGORITHMS} of its {total} algorithms are drawn"
                if total > MAX_OVERLAY_ALGORITHMS
                else ""
            )
            + "."
        )
        self.on_change(saved)

    def _say(self, text: str) -> None:
        self.note = text
        self.notice.object = escape(text, 400) if text else ""

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout

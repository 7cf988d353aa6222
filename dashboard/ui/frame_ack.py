"""Frame acknowledgement: a served page gets its next frame only after it took the last ones.

A browser that draws slower than the server sends (a weak laptop, the projector's machine,
headless Chromium on a busy box) otherwise falls behind by a growing queue of frames: the
server's socket, the kernel's buffers and the browser's own message queue all hold frames it
has not drawn yet, and the student's Pause shows only after all of them.  Measured before this
module: a page streaming at "max" speed showed "paused" 47 s after its Pause, although the
server had stopped at once (:func:`dashboard.ui.document.page_behind` sees only the server's
own socket buffer, not the kernel's or the browser's).

:class:`FrameAck` closes the loop with two hidden Bokeh ``Div`` models (plain Bokeh models, not
Panel widgets: Panel's widget machinery cost ~5 ms of the server's loop per frame and page,
measured with ``benchmarks/bench_classroom.py``):

* ``frame-sent``: the server sets its ``tags`` to ``[frame number]`` in the same document patch
  as the frame's data (the app calls :meth:`FrameAck.sent` inside its ``hold``);
* ``frame-ack``: a JavaScript callback on ``frame-sent`` copies the number to this model's
  ``tags`` once the browser has handled that patch and painted (``requestAnimationFrame`` or
  250 ms, whichever comes first, when the page is visible; a timer in a hidden tab, which
  browsers slow to about once a second), and Bokeh syncs the change back to the server.

The app asks :meth:`FrameAck.may_send` before each frame: at most ``in_flight`` frames may be
unacknowledged, so a slow page streams at its own pace and its Pause is at most that many
frames away.  An acknowledgement that never comes (lost, a script error in the page) never
freezes a page: after ``stall_after`` seconds without one the next frame goes out anyway, and
after ``stalls_to_stop`` such frames in a row the page is streamed to ungated until it
acknowledges again.
A client that never acknowledges (a ``bokeh.client`` script, a page without JavaScript) is
recognised after ``no_ack_after`` seconds without any acknowledgement and then streamed to
as before.  Headless (notebooks, tests: no served page) nothing is gated.

Every acknowledgement is a patch from the page, which Bokeh answers with an ``OK`` message
under the connection's write lock; no frame is written meanwhile
(:func:`dashboard.ui.document.bokeh_sending` says why).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import panel as pn
from bokeh.models import Column as BkColumn
from bokeh.models import CustomJS, Div

__all__ = ["ACK_JS", "FrameAck"]

#: Runs in the browser when ``frame-sent``'s tags change: acknowledge after the next paint.
ACK_JS = """
const n = Number(cb_obj.tags[0]);
const done = () => {
  const seen = ack.tags.length ? Number(ack.tags[0]) : 0;
  if (seen < n) { ack.tags = [n]; }
};
if (document.visibilityState === "visible") {
  requestAnimationFrame(() => setTimeout(done, 0));
  setTimeout(done, 250);  // whichever comes first: a page that paints no frames still answers
} else {
  setTimeout(done, 0);
}
"""


class FrameAck(pn.viewable.Viewer):
    """Count the frames sent to a page and the ones it acknowledged.

    Parameters
    ----------
    in_flight : int
        Frames that may be sent and not yet acknowledged (>= 1).
    no_ack_after : float
        Seconds after the first frame without any acknowledgement after which the client is
        taken for one that never acknowledges (then nothing is gated).
    stall_after : float
        Seconds without an acknowledgement after which one more frame is sent anyway.
    served : callable
        ``served() -> bool``: whether the page is a served one (gating only applies there).
    clock : callable
        Monotonic clock (tests pass their own).
    """

    def __init__(
        self,
        in_flight: int = 2,
        no_ack_after: float = 5.0,
        stall_after: float = 3.0,
        served: Callable[[], bool] = lambda: True,
        clock: Callable[[], float] = time.monotonic,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        if int(in_flight) < 1:
            raise ValueError(f"in_flight must be at least 1, got {in_flight}")
        self.in_flight = int(in_flight)
        self.no_ack_after = float(no_ack_after)
        self.stall_after = float(stall_after)
        self.stalls = 0  # frames sent although in_flight ones were not acknowledged
        self.stalls_to_stop = 3  # stalls in a row after which the page counts as silent
        self._stalls_in_row = 0
        self._silent = False  # the page stopped acknowledging: streamed to as before
        self._served = served
        self._clock = clock
        self.sent_count = 0
        self.acked = 0
        self._first_sent_at: float | None = None
        self._waiting_since: float | None = None  # last send or ack while frames are out
        self.sent_model = Div(visible=False, tags=[0], css_classes=["frame-sent"])
        self.ack_model = Div(visible=False, tags=[0], css_classes=["frame-ack"])
        self.sent_model.js_on_change("tags", CustomJS(args={"ack": self.ack_model}, code=ACK_JS))
        self.ack_model.on_change("tags", self._on_ack)

    @property
    def acknowledging(self) -> bool:
        """Whether the page acknowledges frames (or may still start to: the grace period
        after its first frame); ``False`` for a client that never did."""
        if self._silent:
            return False
        if self.acked > 0 or self._first_sent_at is None:
            return True
        return self._clock() - self._first_sent_at < self.no_ack_after

    def _window_full(self) -> bool:
        """A served, acknowledging page has ``in_flight`` frames awaiting acknowledgement."""
        return (
            self._served() and self.acknowledging and self.sent_count - self.acked >= self.in_flight
        )

    def may_send(self) -> bool:
        """Whether the next frame may go out now: fewer than ``in_flight`` frames await
        their acknowledgement, or ``stall_after`` seconds passed without one (a lost
        acknowledgement), or the page is not a served, acknowledging one."""
        if not self._window_full():
            return True
        since = self._waiting_since
        return since is not None and self._clock() - since >= self.stall_after

    def sent(self) -> None:
        """Number the frame being sent (call inside the frame's ``hold``: the number reaches
        the page in the frame's own patch).  A frame sent past ``in_flight`` unacknowledged
        ones is a stall; ``stalls_to_stop`` in a row and the page counts as one that stopped
        acknowledging (streamed to as before, until it acknowledges again)."""
        if self._window_full():
            self.stalls += 1
            self._stalls_in_row += 1
            if self._stalls_in_row >= self.stalls_to_stop:
                self._silent = True
        self.sent_count += 1
        now = self._clock()
        if self._first_sent_at is None:
            self._first_sent_at = now
        self._waiting_since = now
        self.sent_model.tags = [self.sent_count]

    def acknowledge(self, value: Any) -> None:
        """Take the page's acknowledgement ``value`` (its ``tags``: ``[frame number]``); any
        other value is ignored (it comes from the page, never trusted)."""
        try:
            n = int(value[0])
        except (TypeError, ValueError, IndexError, KeyError, OverflowError):
            return
        if 0 < n <= self.sent_count and n > self.acked:
            self.acked = n
            self._stalls_in_row = 0
            self._silent = False
            self._waiting_since = None if n == self.sent_count else self._clock()

    def _on_ack(self, _attr: str, _old: Any, new: Any) -> None:
        self.acknowledge(new)

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.pane.Bokeh(
            BkColumn(self.sent_model, self.ack_model, visible=False), visible=False, margin=0
        )

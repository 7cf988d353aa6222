"""Adaptive frame pacing for a served class: keep the server's event loop responsive.

Every frame a session shows costs the server's single event loop some time (the frame's
plot update and its serialisation to the page).  With a whole class running, those costs
add up and the loop falls behind: clicks (Pause, Reset) then wait behind frames, which is
what a student notices first.  :class:`LoopPacer` measures the loop's *lag* (how late a short
sleep wakes up: the time any callback, a click included, waits in the queue) and, while the lag
is above ``target_lag``, makes frames cheaper before it makes them rarer:

1. ``stride`` (1 to ``max_stride``): the small plots in cards are updated only every
   ``stride``-th frame; the regret plot and the progress keep every frame
   (:meth:`dashboard.ui.board.PlotBoard.push`);
2. ``interval``: one process-wide minimum time between a session's frames, grown
   multiplicatively once the stride is at its largest.

Both relax again, in the reverse order, once the loop is quiet.  All sessions share them, so
each gets the same frame rate (fair share), and fewer frame requests also leave the Dask
workers less to do.  Pacing changes only *when* frames are asked for and which plots are
redrawn, never what is simulated: the numbers are the same.

``python -m dashboard serve`` starts :data:`PACER` on the server's loop (through
:func:`dashboard.ui.lifecycle.watch_session`); ``RunModel.tick`` reads ``interval`` on the Dask
engine and the app reads ``stride``.  Without a started pacer both stay neutral (notebooks,
``panel serve dashboard``, tests).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

_LOG = logging.getLogger(__name__)

__all__ = ["PACER", "LoopPacer"]


class LoopPacer:
    """Event-loop lag -> the small plots' stride and the minimum time between two frames.

    Parameters
    ----------
    target_lag : float
        Loop lag (seconds) above which frames are made cheaper, then rarer.
    probe : float
        Sleep of the lag probe (seconds).
    max_interval : float
        Largest interval between a session's frames (seconds): pages keep updating.
    max_stride : int
        Largest stride of the small plots.
    settle : int
        Lag samples to wait after a stride change before the next one (the lag is a moving
        average: let it see the effect first).
    """

    def __init__(
        self,
        target_lag: float = 0.1,
        probe: float = 0.05,
        max_interval: float = 2.0,
        max_stride: int = 4,
        settle: int = 8,
    ) -> None:
        self.target_lag = float(target_lag)
        self.probe = float(probe)
        self.max_interval = float(max_interval)
        self.max_stride = int(max_stride)
        self.settle = int(settle)
        self.interval = 0.0
        self.stride = 1
        self.lag = 0.0
        self._since_stride = settle
        self._task: Any = None

    def update(self, lag: float) -> float:
        """Fold one lag sample in (an average over ~5 samples); return the new interval."""
        self.lag = 0.8 * self.lag + 0.2 * max(0.0, float(lag))
        self._since_stride += 1
        settled = self._since_stride >= self.settle
        if self.lag > self.target_lag:
            if self.stride < self.max_stride:
                if settled:
                    self.stride += 1
                    self._since_stride = 0
            else:
                self.interval = min(self.max_interval, max(0.1, self.interval * 1.25))
        elif self.lag < self.target_lag / 2:
            if self.interval > 0:
                self.interval = 0.0 if self.interval < 0.1 else self.interval * 0.9
            elif self.stride > 1 and settled:
                self.stride -= 1
                self._since_stride = 0
        return self.interval

    def start(self) -> bool:
        """Start probing the running event loop (idempotent); ``False`` without a loop."""
        if self._task is not None and not self._task.done():
            return True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        self._task = loop.create_task(self._run())
        return True

    async def _run(self) -> None:
        samples = 0
        while True:
            start = time.perf_counter()
            await asyncio.sleep(self.probe)
            self.update(time.perf_counter() - start - self.probe)
            samples += 1
            if samples % 100 == 0 and (self.stride > 1 or self.interval > 0):
                # every ~5 s while the server is behind (the instructor's terminal; the
                # classroom benchmark reads these lines)
                _LOG.info(
                    "busy server: loop lag %.0f ms, small plots every %d frames, "
                    "frames at least %.2f s apart",
                    1000 * self.lag,
                    self.stride,
                    self.interval,
                )


#: The process's pacer (one event loop per server process).
PACER = LoopPacer()

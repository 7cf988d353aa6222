"""Adaptive frame pacing for a served class: keep the server's event loop responsive.

Every frame a session shows costs the server's single event loop some time (the frame's
plot update and its serialisation to the page).  With a whole class running, those costs
add up and the loop falls behind: clicks (Pause, Reset) then wait behind frames, which is
what a student notices first.  :class:`LoopPacer` measures the loop's *lag* (how late a short
sleep wakes up: the time any callback, a click included, waits in the queue) and adjusts one
process-wide minimum interval between a session's frames: it grows multiplicatively while the
lag is above ``target_lag`` and shrinks back to zero once the loop is quiet again.  All
sessions share that interval, so each gets the same frame rate (fair share), and fewer frame
requests also leave the Dask workers less to do.  It changes only *when* frames are asked
for, never what is simulated: the numbers are the same.

``python -m dashboard serve`` starts :data:`PACER` on the server's loop (through
:func:`dashboard.ui.lifecycle.watch_session`); ``RunModel.tick`` reads it on the Dask engine.
Without a started pacer the interval stays 0 (notebooks, ``panel serve dashboard``, tests).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

__all__ = ["PACER", "LoopPacer"]


class LoopPacer:
    """Event-loop lag -> minimum seconds between two frames of one session.

    Parameters
    ----------
    target_lag : float
        Loop lag (seconds) above which frames are spaced out more.
    probe : float
        Sleep of the lag probe (seconds).
    max_interval : float
        Largest interval between a session's frames (seconds): pages keep updating.
    """

    def __init__(
        self, target_lag: float = 0.04, probe: float = 0.05, max_interval: float = 2.0
    ) -> None:
        self.target_lag = float(target_lag)
        self.probe = float(probe)
        self.max_interval = float(max_interval)
        self.interval = 0.0
        self.lag = 0.0
        self._task: Any = None

    def update(self, lag: float) -> float:
        """Fold one lag sample in (an average over ~5 samples) and return the new interval."""
        self.lag = 0.8 * self.lag + 0.2 * max(0.0, float(lag))
        if self.lag > self.target_lag:
            self.interval = min(self.max_interval, max(0.1, self.interval * 1.25))
        elif self.lag < self.target_lag / 2:
            self.interval = 0.0 if self.interval < 0.1 else self.interval * 0.9
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
        while True:
            start = time.perf_counter()
            await asyncio.sleep(self.probe)
            self.update(time.perf_counter() - start - self.probe)


#: The process's pacer (one event loop per server process).
PACER = LoopPacer()

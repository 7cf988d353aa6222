"""Garbage collection for a served class: no full collection pauses the event loop mid-lesson.

Each student's page is a few hundred Bokeh models and their HoloViews plots: about 46,000
objects the garbage collector tracks, on top of ~250,000 for the server itself.  Python's full
collection walks all of them; measured in-process it takes ~170 ms plus ~40 ms per open page,
so about 1.4 s with 30 students, and it runs every few seconds while frames stream.  Every
page waits during it: that was most of the multi-second Pause latencies of a class of 30.

:class:`SessionHeap` moves the objects of built pages out of the collector's way
(``gc.freeze``: frozen objects are still freed by reference counting, only the cycle detector
skips them) and gives the cycles of closed pages back in one collection once the class has
left (no page open) or after every ``collect_after`` closed pages, so the server's memory
does not grow from one class to the next.  ``python -m dashboard serve`` uses it
(:func:`dashboard.ui.lifecycle.watch_session`); notebooks and ``panel serve`` are untouched.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["HEAP", "SessionHeap"]


class SessionHeap:
    """Freeze after each page is built; unfreeze and collect after closed pages.

    Parameters
    ----------
    collect_after : int
        Closed pages after which their cycles are collected even while others stay open
        (one pause of a full collection, instead of memory held until the class leaves).
    """

    def __init__(self, collect_after: int = 10) -> None:
        self.collect_after = int(collect_after)
        self.open = 0
        self.closed_since_collect = 0
        self.collections = 0
        self._lock = threading.Lock()

    def page_built(self) -> None:
        """A page finished building: its objects (and all older ones) leave the collector."""
        with self._lock:
            self.open += 1
            gc.freeze()

    def page_closed(self) -> bool:
        """A page's session ended; returns whether the closed pages' cycles were collected
        now (no page left open, or ``collect_after`` closed since the last collection)."""
        with self._lock:
            self.open = max(0, self.open - 1)
            self.closed_since_collect += 1
            if self.open and self.closed_since_collect < self.collect_after:
                return False
            gc.unfreeze()
            gc.collect()
            self.collections += 1
            self.closed_since_collect = 0
            if self.open:
                gc.freeze()  # the pages still open go back out of the collector's way
            return True


#: The server process's heap policy.
HEAP = SessionHeap()

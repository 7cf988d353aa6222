"""Session lifecycle of a served class: closed pages and idle runs give their workers back.

Bokeh discards a session some time after its page closed (``serve`` sets
``unused_session_lifetime`` to 15 s, checked every 5 s), and the app's
``on_session_destroyed`` then ends its run.  That is too slow for a class: a closed tab's run
state would sit on a Dask worker for up to 20 s, and a tab left open on a paused or finished
run would hold it for the whole lesson.  :class:`SessionReaper`, one per served dashboard
session (``python -m dashboard serve`` attaches it, see :func:`watch_session`), checks its
session every half second from a periodic callback (on the event loop, under the document
lock, so every change it makes to the page is safe):

* the page's socket has been closed for ``closed_seconds`` (default 1 s): the run is released
  at once (:meth:`RunModel.release <dashboard.ui.run_model.RunModel.release>`), long before
  Bokeh discards the session;
* the run is not running and nobody pressed a button for ``idle_seconds`` (default
  :data:`DEFAULT_IDLE_MINUTES`, ``serve --idle-minutes``, the environment variable
  :data:`IDLE_ENV`): the run is released, its results stay on the page (a notice says why and
  that Run starts again).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from . import document
from .frame_turns import SCHEDULER
from .heap import HEAP
from .pacing import PACER
from .run_model import RunModel

__all__ = ["DEFAULT_IDLE_MINUTES", "IDLE_ENV", "SessionReaper", "idle_seconds", "watch_session"]

#: Minutes without a button press after which a run that is not running is released.
DEFAULT_IDLE_MINUTES = 10.0
#: Set by ``python -m dashboard serve --idle-minutes``.
IDLE_ENV = "BANDIT_DASHBOARD_IDLE_MINUTES"


def idle_seconds() -> float:
    """The class's idle limit in seconds: :data:`IDLE_ENV` when it is a positive number of
    minutes, else :data:`DEFAULT_IDLE_MINUTES`."""
    try:
        minutes = float(os.environ.get(IDLE_ENV, ""))
    except ValueError:
        minutes = DEFAULT_IDLE_MINUTES
    if not 0 < minutes < 10**6:
        minutes = DEFAULT_IDLE_MINUTES
    return 60.0 * minutes


class SessionReaper:
    """Releases one session's run when its page closed or it sat idle (see the module doc).

    Parameters
    ----------
    run_model : RunModel
        The session's run.
    doc : bokeh Document or None
        The session's document (``None`` headless: the page counts as open).
    idle : float, optional
        Seconds without a user action before a run that is not running is released
        (default :func:`idle_seconds`).
    closed_seconds : float
        Seconds a page's socket must stay closed before its run is released (a page that
        reconnects in between keeps it).
    clock : callable
        Monotonic clock (tests pass their own).
    """

    def __init__(
        self,
        run_model: RunModel,
        doc: Any = None,
        idle: float | None = None,
        closed_seconds: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.run_model = run_model
        self.doc = doc
        self.idle = idle_seconds() if idle is None else float(idle)
        self.closed_seconds = float(closed_seconds)
        self.clock = clock
        self._closed_since: float | None = None
        self._was_open = False  # the page's socket connected at least once
        #: the page closed for good and its run (if any) was released: nothing left to check
        self.finished = False

    def check(self) -> str | None:
        """Release the run if due; returns ``"closed"``, ``"idle"`` or ``None``."""
        now = self.clock()
        if not document.page_connected(self.doc):
            if self._closed_since is None:
                self._closed_since = now
            if now - self._closed_since >= self.closed_seconds:
                # a page that was open and closed stays closed (Panel's auto-reconnect is
                # off); one still loading (its socket not connected yet) is checked on
                self.finished = self._was_open
                if self.run_model.release("The page was closed; the run was released."):
                    return "closed"
            return None
        self._closed_since = None
        self._was_open = self._was_open or document.page_opened(self.doc)
        if self.run_model.release_if_idle(self.idle, now=now):
            return "idle"
        return None


def watch_session(app: Any, period_ms: int = 500, **kwargs: Any) -> SessionReaper:
    """Attach a :class:`SessionReaper` to a served dashboard (``app``: a
    :class:`~dashboard.ui.app.DashboardApp`), checked every ``period_ms`` by a periodic
    callback of the current session, start the process's frame pacer
    (:mod:`dashboard.ui.pacing`) and frame line (:mod:`dashboard.ui.frame_turns`) on the
    server's loop and keep the page's objects out of the
    garbage collector's full passes while it is open (:mod:`dashboard.ui.heap`); headless
    nothing is scheduled."""
    import panel as pn

    doc = pn.state.curdoc
    reaper = SessionReaper(app.run_model, doc, **kwargs)
    if doc is not None and doc.session_context is not None:
        callback: Any = None

        def check() -> None:
            reaper.check()
            if reaper.finished and callback is not None:
                callback.stop()  # a closed page costs the loop nothing until Bokeh discards it

        callback = document.periodic(check, int(period_ms))
        PACER.start()  # the server's loop: frames wait while it is behind (pacing.py)
        SCHEDULER.start()  # the server's loop: frames take turns (frame_turns.py)
        # built pages leave the garbage collector's full passes; closed ones return (heap.py)
        pn.state.onload(HEAP.page_built)
        doc.on_session_destroyed(lambda _ctx: HEAP.page_closed())
    app.reaper = reaper  # handle for tests
    return reaper

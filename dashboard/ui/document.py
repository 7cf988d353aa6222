"""Changing a served Bokeh document safely: from the right thread, only while a page is there.

Bokeh documents are not thread-safe: a worker thread (``panel serve --num-threads``) must not
change models directly but schedule the change on the event loop, which runs it holding the
document lock (Bokeh's "updating from threads").  And a session whose websocket closed must
not be pushed to (Tornado then logs ``WebSocketClosedError`` tracebacks).  Without a server
(notebooks, headless tests) every change happens at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

__all__ = [
    "Deferral",
    "bokeh_sending",
    "holds_lock",
    "in_document",
    "needs_callback",
    "on_click",
    "page_behind",
    "page_connected",
    "page_opened",
    "periodic",
    "run_locked",
    "served",
    "session_ended",
]


def _session(doc: Any) -> Any:
    ctx = getattr(doc, "session_context", None)
    return None if ctx is None else ctx.session


def served(doc: Any) -> bool:
    """Whether ``doc`` belongs to a served session (a page over a websocket); False
    headless (notebooks, tests)."""
    return getattr(doc, "session_context", None) is not None


def page_connected(doc: Any) -> bool:
    """False once a served page's socket closed (or its session ended); always True without
    a server, and while a session is being created."""
    return _session(doc) is None or page_opened(doc)


def session_ended(doc: Any) -> bool:
    """Whether ``doc``'s served session has been destroyed (its page closed for good).  Bokeh
    then clears the document's ``session_context``: a document that was served and is no
    longer (:func:`served`) has ended too."""
    session = _session(doc)
    return session is not None and session.destroyed


def page_opened(doc: Any) -> bool:
    """Whether a served page's socket is connected now (False headless, and while the page
    is still loading: Bokeh creates the session on the page's HTTP request, seconds before
    its websocket connects)."""
    session = _session(doc)
    return session is not None and not session.destroyed and session.connection_count > 0


def page_behind(doc: Any) -> bool:
    """True while a served page has not received everything already sent to it: its
    websocket still has bytes the socket would not take (Tornado's ``IOStream.writing()``).

    A browser that draws frames slower than the server sends them (a weak laptop, a
    projector's machine, headless Chromium on a busy box) otherwise gets a growing queue of
    frames, and its Pause shows up only after all of them: measured, a page still showed
    "running" 2 s after Pause with ~1,000 unsent writes queued.  The app skips a frame
    while the page is behind, and while Bokeh is mid-way through one of its own messages to
    the page (:func:`bokeh_sending`).  Reads Bokeh's ``ServerSession._subscribed_connections`` and
    ``ServerConnection._socket`` (private; ``tests/ui/test_canaries.py``); False without a
    server or when the streams cannot be seen.
    """
    session = _session(doc)
    if session is None:
        return False
    for conn in list(getattr(session, "_subscribed_connections", ()) or ()):
        socket = getattr(conn, "_socket", None)
        if bokeh_sending(socket):
            return True
        stream = getattr(getattr(socket, "ws_connection", None), "stream", None)
        writing = getattr(stream, "writing", None)
        if writing is not None and writing():
            return True
    return False


def bokeh_sending(socket: Any) -> bool:
    """Whether Bokeh is in the middle of writing one of its own messages to this socket.

    Bokeh writes its messages (among them the ``OK`` reply to every patch a page sends: a
    click, a frame acknowledgement) fragment by fragment under the connection's
    ``write_lock``.  Panel writes a frame at once unless that lock is held; then it turns the
    frame into a message and leaves it to a write task that polls the lock every 10 ms.  With
    pages acknowledging every frame (:mod:`dashboard.ui.frame_ack`), frames took that deferred
    path all the time, and measured with ``benchmarks/bench_classroom.py``, in 2 of 7 classes
    of 10 a student's page then received nothing more, not even its Pause's "paused" (5 of
    ~270 Pauses unanswered; with this check 0 of 150).  The exact failure in the deferred path
    is not pinned down; the app simply skips the frame while the lock is held (the next tick
    sends a fresh one).  Reads ``WSHandler.write_lock`` (a ``tornado.locks.Lock``) and its
    private semaphore count, as Panel itself does (``tests/ui/test_canaries.py``); False when
    they cannot be seen.
    """
    block = getattr(getattr(socket, "write_lock", None), "_block", None)
    value = getattr(block, "_value", None)
    return isinstance(value, int) and value <= 0


def holds_lock(session: Any) -> bool:
    """Whether the event loop is inside one of ``session``'s locked callbacks.

    Bokeh runs a session's callbacks under its document lock, except those marked ``nolock``:
    Panel marks its widget-event callbacks so (a button click that arrives before the page
    reported ``document_ready``, or while a widget change is still pending, runs on the event
    loop *without* the lock), and changing a Bokeh model there raises
    "_pending_writes should be non-None".  Bokeh's ``ServerSession._pending_writes`` is a list
    exactly while the lock is held (private; guarded by
    ``tests/ui/test_canaries.py::test_bokeh_session_pending_writes_marks_the_lock``).
    """
    pending = getattr(session, "_pending_writes", _UNKNOWN)
    return pending is _UNKNOWN or pending is not None


_UNKNOWN = object()


def needs_callback(doc: Any) -> bool:
    """Whether this code must not change the served document directly: a worker thread, or
    the event loop outside the session's document lock (Panel's unlocked event callbacks).
    The event loop's locked callbacks (periodic callbacks, next-tick callbacks, patches from
    the page) change it at once."""
    if getattr(doc, "session_context", None) is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    session = _session(doc)
    return session is not None and not session.destroyed and not holds_lock(session)


def _io_loop(doc: Any) -> Any:
    """The Tornado loop of ``doc``'s server (None without one)."""
    try:
        return doc.session_context.server_context.application_context.io_loop
    except AttributeError:
        return None


def _on_loop(loop: Any) -> bool:
    """Whether this thread runs ``loop`` (a Tornado ``IOLoop``)."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        return False
    return running is getattr(loop, "asyncio_loop", None)


def _add_next_tick(doc: Any, change: Callable[[], None]) -> None:
    """``doc.add_next_tick_callback(change)`` for a served ``doc``; dropped if its session
    has ended meanwhile (destroyed, or its context already cleared)."""
    if not served(doc) or session_ended(doc):
        return
    try:
        doc.add_next_tick_callback(change)
    except RuntimeError:  # "already-destroyed Document": the page is gone
        pass


def in_document(doc: Any, change: Callable[[], None]) -> None:
    """Run ``change`` now if this thread may change ``doc``, else as a next-tick callback (on
    the event loop, under the document lock); dropped if the session has ended.

    A worker thread does not call ``doc.add_next_tick_callback`` itself: that call reads and
    appends to the document's held events when the loop holds the document
    (``pn.io.hold``), and Bokeh's ``unhold`` on the loop swaps that list out unlocked, so an
    event appended in between is lost and ``change`` never runs (a sweep whose "done" never
    reached the page, once in a loaded test run).  The thread hands the call to the loop
    with Tornado's thread-safe ``add_callback`` instead; changes keep their order."""
    if not needs_callback(doc):
        change()
        return
    loop = _io_loop(doc)
    if loop is None or _on_loop(loop):
        _add_next_tick(doc, change)
    elif not session_ended(doc):
        loop.add_callback(_add_next_tick, doc, change)


def on_click(button: Any, handler: Callable[[], Any]) -> None:
    """``button.on_click``, with ``handler()`` always run where it may change the document.

    Panel runs a click *without* the document lock when it arrives while a widget change of
    the page is still pending (within Panel's debounce, ~50 ms: a student edits a setting
    and clicks Run at once) or before the page reported ``document_ready``
    (``Syncable._server_event``).  A handler that changes a plain Bokeh model there (the
    progress line, the frame counter, a plot) raises "_pending_writes should be non-None"
    half way: measured with a page that sent a change and the Run click together, the run
    started, never streamed and never showed "done", and the server logged a traceback.
    Such a click is handed to :func:`in_document` (a next-tick callback under the lock, after
    the pending change); any other click runs at once, as before.  Headless (notebooks,
    tests) the handler runs at once."""
    import panel as pn

    def clicked(_event: Any) -> None:
        in_document(pn.state.curdoc, handler)

    button.on_click(clicked)


class Deferral:
    """``fn`` moved under the document lock when called where it may not change the page.

    :meth:`deferred` returns False where this thread may change ``doc()`` (the caller goes on
    at once); elsewhere (a worker thread; the event loop outside the lock, e.g. a setting that
    Panel applies inside an unlocked click, see :func:`on_click`) it schedules ``fn()`` as one
    next-tick callback under the lock, once for any number of calls until that runs, and
    returns True (the caller stops there)."""

    def __init__(self, doc: Callable[[], Any], fn: Callable[[], Any]) -> None:
        self._doc, self._fn = doc, fn
        self._queued = False

    def deferred(self) -> bool:
        doc = self._doc()
        if not needs_callback(doc):
            return False
        if not self._queued:
            self._queued = True

            def run() -> None:
                self._queued = False
                self._fn()

            in_document(doc, run)
        return True


def run_locked(doc: Any, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` on the event loop under ``doc``'s lock, in a task of its own (as Bokeh runs
    a periodic callback: ``ServerSession.with_document_locked``, which then sends the changes
    to the page), with ``doc`` as Panel's current document.  Returns the task, or ``None``
    when ``doc`` is not a live served session.  Call it on the server's event loop."""
    session = _session(doc)
    if session is None or session.destroyed:
        return None
    from panel.io.state import set_curdoc

    def locked() -> Any:
        with set_curdoc(doc):
            return fn()

    return asyncio.ensure_future(session.with_document_locked(locked))


def periodic(callback: Callable[[], Any], period_ms: int) -> Any:
    """Start ``callback`` every ``period_ms`` in the current session, as a *background*
    periodic callback.

    ``pn.state.add_periodic_callback`` marks the whole server busy around every call (the
    process-wide ``pn.state.busy``), and Panel then sets the busy indicator of *every*
    session's template: with N streaming sessions that is N x N document updates per tick,
    which alone saturates a class's server.  A background callback skips that bookkeeping
    (``PeriodicCallback(background=True)``; the page still shows its own progress).
    """
    import panel as pn
    from panel.io.callbacks import PeriodicCallback

    cb = PeriodicCallback(callback=callback, period=int(period_ms), background=True)
    cb.start()
    doc = pn.state.curdoc
    registry = getattr(pn.state, "_periodic", None)  # (private) stopped with the session
    if doc is not None and registry is not None:
        registry.setdefault(doc, []).append(cb)
    return cb

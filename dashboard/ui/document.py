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

__all__ = ["in_document", "needs_callback", "page_connected"]


def _session(doc: Any) -> Any:
    ctx = getattr(doc, "session_context", None)
    return None if ctx is None else ctx.session


def page_connected(doc: Any) -> bool:
    """False once a served page's socket closed (or its session ended); always True without
    a server, and while a session is being created."""
    if getattr(doc, "session_context", None) is None:
        return True
    session = _session(doc)
    if session is None:
        return True
    return not session.destroyed and session.connection_count > 0


def needs_callback(doc: Any) -> bool:
    """Whether this thread must not change the served document directly (a worker thread;
    the event loop's own callbacks hold the lock)."""
    if getattr(doc, "session_context", None) is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False


def in_document(doc: Any, change: Callable[[], None]) -> None:
    """Run ``change`` now if this thread may change ``doc``, else as a next-tick callback (on
    the event loop, under the document lock); dropped if the session has ended."""
    if not needs_callback(doc):
        change()
        return
    session = _session(doc)
    if session is not None and session.destroyed:
        return
    doc.add_next_tick_callback(change)

"""A worker thread's changes reach a served document through its event loop, every one, in
order (``dashboard/ui/document.py`` ``in_document``; the Sweep tab's background thread).

A worker thread that called ``doc.add_next_tick_callback`` itself raced Bokeh's ``unhold`` on
the loop: an event appended to the document's held events while the loop swapped that list
out was lost, and its change never ran (a sweep whose "done" never reached the page)."""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace

from bokeh.document import Document
from bokeh.io import curdoc
from bokeh.models import Div
from bokeh.server.session import ServerSession
from bokeh.util.token import generate_jwt_token, generate_session_id
from tornado.ioloop import IOLoop

from dashboard.ui.document import holds_lock, in_document

CHANGES = 400


class _Context:
    """A served session's context: the session and its server's loop."""

    def __init__(self, session: ServerSession, loop: IOLoop) -> None:
        self.session = session
        self.server_context = SimpleNamespace(application_context=SimpleNamespace(io_loop=loop))


def _served_doc() -> tuple[Document, ServerSession, Div]:
    doc = Document()
    div = Div(text="0")
    doc.add_root(div)
    sid = generate_session_id()
    loop = IOLoop.current()
    session = ServerSession(sid, doc, loop, generate_jwt_token(sid))
    context = _Context(session, loop)
    doc._session_context = lambda: context  # (weakref-style accessor)
    return doc, session, div


def test_a_threads_changes_all_run_in_order_under_the_lock_while_the_loop_holds_the_document():
    async def scenario() -> tuple[list[int], set[bool], set[int], int]:
        doc, session, div = _served_doc()
        loop_thread = threading.get_ident()
        ran: list[int] = []
        locked: set[bool] = set()
        callers: set[int] = set()
        add = doc.add_next_tick_callback

        def recording_add(callback):  # who touches the document's callbacks
            callers.add(threading.get_ident())
            return add(callback)

        doc.add_next_tick_callback = recording_add

        def change(i: int) -> None:
            locked.add(holds_lock(session))
            div.text = str(i)  # a plain Bokeh model: raises outside the lock
            ran.append(i)

        def worker() -> None:
            for i in range(CHANGES):
                in_document(doc, lambda i=i: change(i))

        def held_for_a_while() -> None:  # as a callback in Panel's pn.io.hold does
            doc.hold("combine")
            deadline = time.perf_counter() + 0.002  # the thread runs meanwhile
            while time.perf_counter() < deadline:
                pass
            doc.unhold()

        thread = threading.Thread(target=worker)
        thread.start()
        while thread.is_alive():
            await session.with_document_locked(held_for_a_while)
            await asyncio.sleep(0)
        thread.join()
        for _ in range(500):  # the handed-over changes drain
            if len(ran) == CHANGES:
                break
            await asyncio.sleep(0.01)
        return ran, locked, callers - {loop_thread}, int(div.text)

    ran, locked, other_callers, last = asyncio.run(scenario())
    assert ran == list(range(CHANGES))  # none lost, in order
    assert locked == {True}  # each under the document lock
    assert other_callers == set()  # only the loop's thread added the callbacks
    assert last == CHANGES - 1


def test_a_change_for_a_session_that_ended_meanwhile_is_dropped():
    async def scenario() -> list[int]:
        doc, session, _div = _served_doc()
        ran: list[int] = []
        thread = threading.Thread(target=lambda: in_document(doc, lambda: ran.append(1)))
        thread.start()
        thread.join()  # handed to the loop, which has not run it yet
        session.destroy()  # the tab closed before the change's turn
        await asyncio.sleep(0.1)
        return ran

    assert asyncio.run(scenario()) == []
    curdoc()  # and nothing of the ended session is left as Bokeh's current document

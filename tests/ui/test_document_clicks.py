"""Button clicks change the document only under its lock (``dashboard/ui/document.py``
``on_click``): Panel runs a click without the lock when a widget change of the page is still
pending or the page is not ready, and a plain Bokeh model changed there raises."""

from __future__ import annotations

import asyncio

import panel as pn
from bokeh.document import Document
from bokeh.models import Div
from bokeh.server.session import ServerSession
from bokeh.util.token import generate_jwt_token, generate_session_id
from panel.io.state import set_curdoc
from test_app import _Context
from tornado.ioloop import IOLoop

from dashboard.ui.document import Deferral, holds_lock, on_click


def _served_doc() -> tuple[Document, ServerSession, Div]:
    doc = Document()
    div = Div(text="ready")
    doc.add_root(div)
    sid = generate_session_id()
    session = ServerSession(sid, doc, IOLoop.current(), generate_jwt_token(sid))
    doc._session_context = lambda: _Context(session)  # (weakref-style accessor)
    return doc, session, div


def test_a_click_outside_the_lock_changes_the_document_later_under_it():
    async def scenario() -> tuple[list[bool], str, str, list[bool]]:
        doc, session, div = _served_doc()
        locked: list[bool] = []

        def handler() -> None:
            locked.append(holds_lock(session))
            div.text = "running"  # a plain Bokeh model: raises outside the lock

        button = pn.widgets.Button(label="Run")
        on_click(button, handler)
        with set_curdoc(doc):
            button.clicks += 1  # as Panel's unlocked event path would (no lock held)
        right_after = div.text
        for _ in range(20):  # the next-tick callback runs under the lock
            await asyncio.sleep(0.01)
            if locked:
                break
        # and a click inside the lock runs at once
        inside: list[bool] = []

        def click_locked() -> None:
            with set_curdoc(doc):
                button.clicks += 1
            inside.append(len(locked) == 2)

        await session.with_document_locked(click_locked)
        return locked, right_after, div.text, inside

    locked, right_after, text, inside = asyncio.run(scenario())
    assert right_after == "ready"  # not run in the unlocked callback
    assert text == "running"
    assert locked == [True, True]  # both runs held the document lock
    assert inside == [True]  # inside the lock: at once


def test_a_click_without_a_server_runs_at_once():
    seen: list[int] = []
    button = pn.widgets.Button(label="Run")
    on_click(button, lambda: seen.append(1))
    button.clicks += 1
    assert seen == [1]


def test_a_deferral_folds_calls_outside_the_lock_into_one_locked_call():
    async def scenario() -> tuple[list[bool], list[bool], list[bool]]:
        doc, session, div = _served_doc()
        ran: list[bool] = []

        def show() -> None:
            if later.deferred():
                return
            ran.append(holds_lock(session))
            div.text = f"shown {len(ran)}"

        later = Deferral(lambda: doc, show)
        outside = [later.deferred() for _ in range(3)]  # three status changes, no lock
        for _ in range(20):
            await asyncio.sleep(0.01)
            if ran:
                break
        await asyncio.sleep(0.05)  # nothing else was queued
        inside: list[bool] = []
        await session.with_document_locked(lambda: inside.append(later.deferred()))
        return outside, ran, inside

    outside, ran, inside = asyncio.run(scenario())
    assert outside == [True, True, True]
    assert ran == [True]  # one call, under the lock
    assert inside == [False]  # under the lock: the caller goes on at once


def test_a_deferral_without_a_server_never_defers():
    later = Deferral(lambda: None, lambda: None)
    assert later.deferred() is False

"""Uploads in the app (``dashboard/ui/upload.py``, ``saved_view.py``, the Sweep tab): the drop
area's server side keeps at most the cap of one upload; an upload is read away from the event
loop, one per session at a time; the worst file allowed is overlaid while the loop keeps
running (measured with a heartbeat on a real asyncio loop and a served session); a saved run
of many algorithms draws as many as the live board compares, with a note; an empty upload gets
its message."""

from __future__ import annotations

import asyncio
import json
import time
from types import SimpleNamespace

import pytest
from bokeh.document import Document
from bokeh.server.session import ServerSession
from bokeh.util.token import generate_jwt_token, generate_session_id
from tornado.ioloop import IOLoop

from dashboard.simulation.store import FORMAT
from dashboard.simulation.upload_worst import worst_allowed_upload
from dashboard.ui.app import DashboardApp
from dashboard.ui.saved_view import MAX_OVERLAY_ALGORITHMS, SAVED_POINTS
from dashboard.ui.sweep_view import SweepView
from dashboard.ui.upload import UPLOAD_CHUNK_BYTES, UploadDropper, uploaded_file

#: Longest the event loop may stall while the worst allowed file is uploaded and drawn: the
#: regret plot's rebuild (on the loop, bounded by MAX_OVERLAY_ALGORITHMS and SAVED_POINTS);
#: measured 0.3-0.9 s on the loaded 2-core machine, with the reading in another process.
MAX_LOOP_STALL_S = 2.5
#: Longest stall while the file is read (the reading is in another process).
MAX_READING_STALL_S = 0.5


def _event(name: str, chunk: int, total: int, data: bytes) -> SimpleNamespace:
    info = {"name": name, "chunk": chunk, "total_chunks": total, "data": data, "type": ""}
    return SimpleNamespace(event_name="upload_event", data=info)


def test_the_drop_area_refuses_in_the_browser_and_keeps_at_most_the_cap():
    dropper = UploadDropper(max_bytes=2500)
    assert dropper.max_file_size == "2500" and not dropper.multiple
    assert dropper.chunk_size == UPLOAD_CHUNK_BYTES
    model = dropper.get_root(Document())  # what a page gets (no server-only property)
    assert model.max_file_size == "2500" and model.chunk_size == UPLOAD_CHUNK_BYTES
    for i in range(1, 4):  # 3 x 1000 bytes, the cap is 2500: dropped at the third chunk
        dropper._process_event(_event("big.jsonl", i, 3, b"x" * 1000))
    assert dropper.value == {} and dropper._file_buffer == {}
    assert "'big.jsonl' is over 2,500 bytes" in dropper.oversized
    dropper._process_event(_event("ok.jsonl", 1, 2, b"a" * 1000))
    dropper._process_event(_event("ok.jsonl", 2, 2, b"b" * 1000))
    assert dropper.value == {"ok.jsonl": b"a" * 1000 + b"b" * 1000}
    # a chunk of an upload that never started here is ignored
    dropper._process_event(_event("stray.jsonl", 5, 9, b"z"))
    assert "stray.jsonl" not in dropper.value and dropper._file_buffer == {}
    assert uploaded_file({"a.txt": "text é"}) == ("a.txt", "text é".encode())
    assert uploaded_file({}) is None


@pytest.fixture
def app():
    a = DashboardApp(autostart_timer=False)
    a.config.param.update(d=6, m=2, horizon=500, runs=2, algorithms=["CUCB", "SROQ-CMAB"])
    a.plots["regret"].ensure_rendered(Document())
    yield a
    a.dispose()


def test_an_upload_through_the_drop_area_is_overlaid_and_its_bytes_dropped(app):
    data = worst_allowed_upload()
    app.saved_view.file_input.value = {"worst.jsonl": data}
    view = app.saved_view
    assert view.file_input.value == {}
    assert "Overlaid (dashed) from worst.jsonl" in view.note
    assert f"the first {MAX_OVERLAY_ALGORITHMS} of its 16 algorithms are drawn" in view.note
    labels = {el.label for el in app.plots["regret"].element}
    assert "Saved-03 (saved: seed 0, T=10000)" in labels
    assert "Saved-04 (saved: seed 0, T=10000)" not in labels
    ((_, res),) = view.entries
    assert res.results[0].times.size <= SAVED_POINTS + 1


def test_an_empty_upload_and_an_oversized_one_get_their_message(app):
    app.saved_view.file_input.value = {"empty.jsonl": b""}
    assert "Not overlaid: 'empty.jsonl' is empty (0 bytes)" in app.saved_view.note
    app.saved_view.file_input.oversized = "'x.jsonl' is over 10,000,000 bytes; files up to"
    assert "Not overlaid: 'x.jsonl' is over 10,000,000 bytes" in app.saved_view.note


def _served_doc() -> tuple[Document, ServerSession]:
    """A served session's document on the running loop (as in test_document_threads)."""
    doc = Document()
    sid = generate_session_id()
    loop = IOLoop.current()
    session = ServerSession(sid, doc, loop, generate_jwt_token(sid))
    context = SimpleNamespace(
        id=sid,
        session=session,
        request=SimpleNamespace(arguments={}, cookies={}, headers={}),
        server_context=SimpleNamespace(application_context=SimpleNamespace(io_loop=loop)),
    )
    doc._session_context = lambda: context
    return doc, session


def test_the_worst_allowed_upload_is_read_off_the_loop_which_keeps_running(app):
    data = worst_allowed_upload()
    view = app.saved_view

    async def scenario() -> tuple[float, float, float, str]:
        doc, _ = _served_doc()
        view._doc = doc
        gaps: list[tuple[float, float]] = []  # (when, gap)
        stop = asyncio.Event()

        async def heartbeat() -> None:
            last = time.perf_counter()
            while not stop.is_set():
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                gaps.append((now, now - last))
                last = now

        beat = asyncio.ensure_future(heartbeat())
        await asyncio.sleep(0.05)
        t0 = time.perf_counter()
        view.open_upload(data, "worst.jsonl")  # as the drop area's handler does, on the loop
        handler_s = time.perf_counter() - t0
        view.open_upload(data, "second.jsonl")  # one at a time per session
        second = view.note
        deadline = time.perf_counter() + 60
        while view.reading and time.perf_counter() < deadline:
            await asyncio.sleep(0.02)
        read_done = time.perf_counter()
        while "Overlaid" not in view.note and time.perf_counter() < deadline:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.05)
        stop.set()
        await beat
        reading = max((g for when, g in gaps if t0 < when < read_done - 0.05), default=0.0)
        worst = max(g for _, g in gaps)
        return handler_s, reading, worst, second

    handler_s, reading, worst, second = asyncio.run(scenario())
    assert "arrived while the previous file is still read" in second
    assert "Overlaid (dashed) from worst.jsonl" in view.note, view.note
    assert handler_s < 0.2, handler_s  # the handler only hands the bytes over
    assert reading < MAX_READING_STALL_S, reading
    assert worst < MAX_LOOP_STALL_S, worst


def test_the_sweep_tab_opens_the_worst_allowed_sweep_and_refuses_an_empty_file():
    view = SweepView()
    view._file.value = {"sweep.jsonl": worst_allowed_upload("sweep")}
    assert view.status.startswith("opened sweep.jsonl: 200 of 200 points"), view.status
    assert view._file.value == {}
    view._file.value = {"empty.jsonl": b""}
    assert "empty (0 bytes)" in view._notice.object
    definition = {"algorithms": ["CUCB"], "grid": [["d", list(range(3, 300))]]}
    header = {"format": FORMAT, "version": 1, "kind": "sweep", "definition": definition}
    assert not view.open_saved((json.dumps(header) + "\n").encode(), "<b>big</b>.jsonl")
    assert "297 grid points; at most 200" in view._notice.object
    assert "<b>" not in view._notice.object

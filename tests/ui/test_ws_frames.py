"""``ws_frames.dispatch_coalesced`` puts on the wire exactly the bytes Panel's
``dispatch_tornado`` (through Tornado's ``WebSocketProtocol13``) puts there, in one socket
write: checked over real sockets, for messages with and without binary buffers, across the
websocket length encodings (< 126, 16-bit and 64-bit lengths), with non-ASCII text."""

from __future__ import annotations

import asyncio
import socket
from types import SimpleNamespace
from typing import Any

import numpy as np
import panel.io.document as panel_document
import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource, Div
from bokeh.protocol import Protocol
from hypothesis import given, settings
from hypothesis import strategies as st
from tornado.iostream import IOStream
from tornado.websocket import WebSocketClosedError, WebSocketProtocol13, _WebSocketParams

from dashboard.ui import ws_frames
from dashboard.ui.ws_frames import coalesce_panel_writes, dispatch_coalesced, websocket_frame

coalesce_panel_writes()  # (idempotent) the original is kept in ws_frames._PANEL_DISPATCH
PANEL_DISPATCH = ws_frames._PANEL_DISPATCH[0]


def _message(n_values: int, text: str, binary: bool) -> Any:
    """A PATCH-DOC message: a data column (a binary buffer, or inline numbers) and a text."""
    doc = Document()
    source = ColumnDataSource(data={"x": []})
    div = Div(text="")
    doc.add_root(source)
    doc.add_root(div)
    events: list[Any] = []
    doc.callbacks.on_change(events.append)
    values = np.arange(n_values, dtype=float) / 7
    source.data = {"x": values if binary else values.tolist()}
    div.text = text
    return Protocol().create("PATCH-DOC", events)


async def _wire(dispatch: Any, msg: Any, ws_kwargs: dict[str, Any] | None = None) -> tuple:
    """The bytes ``dispatch`` writes for ``msg`` to a real socket, and its ``send`` calls."""
    a, b = socket.socketpair()
    a.setblocking(False)
    b.setblocking(False)
    ws = WebSocketProtocol13(None, mask_outgoing=False, params=_WebSocketParams())
    ws.stream = IOStream(a)
    for k, v in (ws_kwargs or {}).items():
        setattr(ws, k, v)
    sends = []
    original = ws.stream.write_to_fd
    ws.stream.write_to_fd = lambda data: sends.append(len(data)) or original(data)
    conn = SimpleNamespace(_socket=SimpleNamespace(ws_connection=ws), protocol=Protocol())
    loop = asyncio.get_running_loop()
    got = bytearray()

    async def read() -> None:
        while True:
            chunk = await loop.sock_recv(b, 1 << 16)
            if not chunk:
                return
            got.extend(chunk)

    reader = asyncio.ensure_future(read())
    futures = dispatch(conn, msg=msg)
    for fut in futures:
        await fut
    ws.stream.close()
    await reader
    b.close()
    return bytes(got), sends, len(futures), ws


def _both(msg: Any) -> tuple:
    async def run() -> tuple:
        return await _wire(PANEL_DISPATCH, msg), await _wire(dispatch_coalesced, msg)

    return asyncio.run(run())


@settings(max_examples=20, deadline=None)
@given(
    n_values=st.sampled_from([0, 1, 3, 14, 15, 16, 200, 8191, 8192, 9000]),
    text=st.text(max_size=200),
    binary=st.booleans(),
)
def test_the_same_bytes_in_one_write(n_values: int, text: str, binary: bool) -> None:
    msg = _message(n_values, text, binary)
    (panel_bytes, panel_sends, _, _), (ours, our_sends, n_futures, ws) = _both(msg)
    assert ours == panel_bytes  # byte for byte what Panel + Tornado put on the wire
    assert n_futures == 1
    # Panel: one send per websocket message (3, + 2 per buffer); ours: one send of all of
    # it (then more only if the socket's buffer was full)
    assert len(panel_sends) >= 3 + 2 * len(msg._buffers)
    assert our_sends[0] == len(ours)
    if len(ours) < 100_000:
        assert len(our_sends) == 1
    assert ws._wire_bytes_out == len(ours)


@pytest.mark.parametrize("n", [0, 125, 126, 65535, 65536, 70000])
def test_frame_lengths_follow_rfc_6455(n: int) -> None:
    payload = bytes(range(256)) * (n // 256) + bytes(n % 256)
    frame = websocket_frame(payload, binary=True)
    assert frame[0] == 0x82  # final frame, binary
    if n < 126:
        assert frame[1] == n and frame[2:] == payload
    elif n <= 0xFFFF:
        assert frame[1] == 126 and int.from_bytes(frame[2:4], "big") == n
        assert frame[4:] == payload
    else:
        assert frame[1] == 127 and int.from_bytes(frame[2:10], "big") == n
        assert frame[10:] == payload
    assert websocket_frame(b"hi")[0] == 0x81  # text


def test_compressed_or_masked_connections_go_through_panel(monkeypatch) -> None:
    msg = _message(20, "x", True)
    calls = []

    def spy(conn: Any, events: Any = None, msg: Any = None) -> list[Any]:
        calls.append(msg)
        return PANEL_DISPATCH(conn, events, msg)

    monkeypatch.setattr(ws_frames, "_PANEL_DISPATCH", [spy])

    async def run() -> tuple:
        masked = await _wire(dispatch_coalesced, msg, {"mask_outgoing": True})
        plain = await _wire(dispatch_coalesced, msg)
        return masked, plain

    masked, plain = asyncio.run(run())
    assert len(calls) == 1  # only the masked connection went to Panel's function
    assert len(masked[1]) >= 3 + 2 * len(msg._buffers)
    assert len(plain[1]) == 1


def test_closed_connections_send_nothing_and_closing_streams_raise_as_panel() -> None:
    msg = _message(3, "x", False)

    async def run() -> None:
        a, b = socket.socketpair()
        ws = WebSocketProtocol13(None, mask_outgoing=False, params=_WebSocketParams())
        ws.stream = IOStream(a)
        conn = SimpleNamespace(_socket=SimpleNamespace(ws_connection=ws), protocol=Protocol())
        ws.server_terminated = True  # closing: nothing is written, as Panel's
        assert dispatch_coalesced(conn, msg=msg) == [] == PANEL_DISPATCH(conn, msg=msg)
        ws.server_terminated = False
        b.close()
        a.close()  # the socket under the stream is gone: the write fails
        with pytest.raises((WebSocketClosedError, OSError)):
            for fut in dispatch_coalesced(conn, msg=msg):
                await fut
        ws.stream.close()

    asyncio.run(run())


def test_installed_once_as_panels_dispatch() -> None:
    assert panel_document.dispatch_tornado is dispatch_coalesced
    assert coalesce_panel_writes() is False  # already installed
    assert ws_frames._PANEL_DISPATCH[0] is PANEL_DISPATCH

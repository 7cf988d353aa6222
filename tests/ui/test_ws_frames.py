"""``ws_frames.dispatch_coalesced`` puts on the wire the websocket messages Panel's
``dispatch_tornado`` (through Tornado's ``WebSocketProtocol13``) puts there, in one socket
write: checked over real sockets, for messages with and without binary buffers, across the
websocket length encodings (< 126, 16-bit and 64-bit lengths), with non-ASCII text.  Without
``orjson`` the bytes are Panel's exactly; with it, every message's header, metadata and buffers
are, and its content is the same JSON value (``content_bytes``, checked with hypothesis against
Bokeh's encoder).  Bokeh's own ``WSHandler.send_message`` goes through the same path."""

from __future__ import annotations

import asyncio
import json
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
from dashboard.ui.patch_protocol import JsonNumbers
from dashboard.ui.ws_frames import (
    coalesce_panel_writes,
    content_bytes,
    dispatch_coalesced,
    send_message_coalesced,
    websocket_frame,
)

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


async def _capture(send: Any, ws_kwargs: dict[str, Any] | None = None) -> tuple:
    """Run ``send(ws)`` for a server-side websocket over a real socket pair: the bytes it
    wrote, the sizes of its ``send`` calls, its result, and the websocket."""
    a, b = socket.socketpair()
    a.setblocking(False)
    b.setblocking(False)
    ws = WebSocketProtocol13(None, mask_outgoing=False, params=_WebSocketParams())
    ws.stream = IOStream(a)
    for k, v in (ws_kwargs or {}).items():
        setattr(ws, k, v)
    sends: list[int] = []
    original = ws.stream.write_to_fd
    ws.stream.write_to_fd = lambda data: sends.append(len(data)) or original(data)
    loop = asyncio.get_running_loop()
    got = bytearray()

    async def read() -> None:
        while True:
            chunk = await loop.sock_recv(b, 1 << 16)
            if not chunk:
                return
            got.extend(chunk)

    reader = asyncio.ensure_future(read())
    result = await send(ws)
    ws.stream.close()
    await reader
    b.close()
    return bytes(got), sends, result, ws


async def _wire(dispatch: Any, msg: Any, ws_kwargs: dict[str, Any] | None = None) -> tuple:
    """The bytes ``dispatch`` writes for ``msg`` to a real socket, its ``send`` calls, the
    number of futures it returned, and the websocket."""

    async def send(ws: Any) -> int:
        conn = SimpleNamespace(_socket=SimpleNamespace(ws_connection=ws), protocol=Protocol())
        futures = dispatch(conn, msg=msg)
        for fut in futures:
            await fut
        return len(futures)

    return await _capture(send, ws_kwargs)


def _both(msg: Any) -> tuple:
    async def run() -> tuple:
        return await _wire(PANEL_DISPATCH, msg), await _wire(dispatch_coalesced, msg)

    return asyncio.run(run())


def _messages(wire: bytes) -> list[tuple[int, bytes]]:
    """``(opcode, payload)`` of each websocket frame a server wrote (final, unmasked)."""
    out, i = [], 0
    while i < len(wire):
        head, n = wire[i], wire[i + 1]
        assert head & 0x80 and not n & 0x80  # final frame, unmasked
        i += 2
        if n == 126:
            n, i = int.from_bytes(wire[i : i + 2], "big"), i + 2
        elif n == 127:
            n, i = int.from_bytes(wire[i : i + 8], "big"), i + 8
        out.append((head & 0x0F, wire[i : i + n]))
        i += n
    return out


def _same_messages(ours: bytes, theirs: bytes) -> None:
    """The same websocket messages; the content (the third) as the same JSON value."""
    a, b = _messages(ours), _messages(theirs)
    assert [op for op, _ in a] == [op for op, _ in b]
    assert a[:2] == b[:2] and a[3:] == b[3:]  # header, metadata, buffers: the same bytes
    assert json.loads(a[2][1]) == json.loads(b[2][1])


class _NoOrjson:
    """Bokeh's encoder only, inside a hypothesis example (no function-scoped fixture)."""

    def __enter__(self) -> None:
        self.saved = ws_frames._orjson
        ws_frames._orjson = None

    def __exit__(self, *exc: object) -> None:
        ws_frames._orjson = self.saved


_SIZES = st.sampled_from([0, 1, 3, 14, 15, 16, 200, 8191, 8192, 9000])


@settings(max_examples=20, deadline=None)
@given(n_values=_SIZES, text=st.text(max_size=200), binary=st.booleans())
def test_the_same_messages_in_one_write(n_values: int, text: str, binary: bool) -> None:
    msg = _message(n_values, text, binary)
    (panel_bytes, _, _, _), (ours, our_sends, n_futures, ws) = _both(msg)
    _same_messages(ours, panel_bytes)
    assert n_futures == 1 and our_sends[0] == len(ours)
    assert ws._wire_bytes_out == len(ours)


@settings(max_examples=20, deadline=None)
@given(n_values=_SIZES, text=st.text(max_size=200), binary=st.booleans())
def test_without_orjson_the_same_bytes_in_one_write(n_values: int, text: str, binary: bool) -> None:
    msg = _message(n_values, text, binary)
    with _NoOrjson():
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
    from bokeh.server.views.ws import WSHandler

    assert WSHandler.send_message is send_message_coalesced
    assert ws_frames._BOKEH_SEND[0] is not send_message_coalesced


# ---------------------------------------------------------------- the content's JSON
def _json_trees() -> st.SearchStrategy[Any]:
    """What a Bokeh message's content may hold after Bokeh's serializer: dicts with string
    keys, lists and tuples, strings (any text), integers (beyond 64 bits too), finite floats,
    booleans, None, buffer references and plain-number columns; plus what it never holds
    (integer keys, dates), which must go to Bokeh's encoder."""
    from bokeh.core.serialization import Buffer

    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=20),
        st.builds(lambda i: Buffer(f"p{i}", b"\x00\x01"), st.integers(min_value=0, max_value=99)),
        st.builds(
            JsonNumbers,
            st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), max_size=8),
        ),
    )
    return st.recursive(
        leaves,
        lambda kids: st.one_of(
            st.lists(kids, max_size=4),
            st.tuples(kids, kids),
            st.dictionaries(st.text(max_size=8), kids, max_size=4),
            st.dictionaries(st.integers(0, 9), kids, min_size=1, max_size=2),
        ),
        max_leaves=25,
    )


def _message_of(content: Any) -> Any:
    msg = Protocol().create("OK", "1")
    msg._content = content
    msg._content_json = None
    return msg


@settings(max_examples=300, deadline=None)
@given(content=_json_trees())
def test_content_bytes_are_the_json_value_bokeh_writes(content: Any) -> None:
    from bokeh.core.json_encoder import serialize_json

    theirs = serialize_json(content)  # what Bokeh's encoder writes (its PayloadEncoder)
    ours = content_bytes(_message_of(content))
    assert json.loads(ours) == json.loads(theirs)
    with _NoOrjson():
        assert content_bytes(_message_of(content)) == theirs.encode()


def test_content_bytes_fall_back_where_orjson_would_differ() -> None:
    import datetime

    from bokeh.core.json_encoder import serialize_json

    for content in ({"a": 2**64}, {1: "x"}, [{"k": -(2**65)}]):
        assert content_bytes(_message_of(content)) == serialize_json(content).encode()
    # a float subclass: the same number either way
    assert json.loads(content_bytes(_message_of([np.float64(1.5)]))) == [1.5]
    for bad in ({"when": datetime.date(2026, 12, 1)}, [np.int64(3)]):
        with pytest.raises(TypeError):  # Bokeh's encoder refuses them: so do we
            content_bytes(_message_of(bad))
    # a cached content JSON is sent as it is
    msg = _message_of({"a": 1e-7})
    msg._content_json = '{"a":1e-07}'
    assert content_bytes(msg) == b'{"a":1e-07}'


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(
        st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=6
    )
)
def test_bokeh_never_leaves_a_non_finite_float_in_a_message(values: list[float]) -> None:
    """Where the two encoders would differ (NaN, infinity: ``null`` for orjson, an error for
    Bokeh's) never happens: Bokeh's serializer writes such numbers as objects, in a data
    column and in a plain property alike."""
    import math

    from bokeh.models import Range1d

    doc = Document()
    source = ColumnDataSource(data={"x": []})
    span = Range1d(start=0.0, end=1.0)
    doc.add_root(source)
    doc.add_root(span)
    events: list[Any] = []
    doc.callbacks.on_change(events.append)
    source.data = {"x": list(values)}
    span.start = values[0]
    msg = Protocol().create("PATCH-DOC", events)
    payload = msg.payload
    content = getattr(payload, "content", payload)

    def walk(node: Any) -> None:
        if isinstance(node, float):
            assert math.isfinite(node)
        elif isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, (list, tuple)):
            for v in node:
                walk(v)

    walk(content)
    parsed = json.loads(content_bytes(msg))
    assert parsed == json.loads(msg.content_json)


# ---------------------------------------------------------------- Bokeh's own messages
async def _handler_wire(msg: Any, ws_kwargs: dict[str, Any] | None = None) -> tuple:
    """The bytes ``send_message_coalesced`` writes for ``msg``, and its ``send`` calls."""
    from tornado.locks import Lock

    async def send(ws: Any) -> None:
        await send_message_coalesced(SimpleNamespace(ws_connection=ws, write_lock=Lock()), msg)

    got, sends, _, _ = await _capture(send, ws_kwargs)
    return got, sends


@settings(max_examples=10, deadline=None)
@given(n_values=_SIZES, text=st.text(max_size=50), binary=st.booleans())
def test_bokehs_messages_go_in_one_write_too(n_values: int, text: str, binary: bool) -> None:
    msg = _message(n_values, text, binary)

    async def run() -> tuple:
        return await _wire(PANEL_DISPATCH, msg), await _handler_wire(msg)

    (panel_bytes, *_), (ours, sends) = asyncio.run(run())
    _same_messages(ours, panel_bytes)
    assert sends[0] == len(ours)


def test_bokehs_messages_fall_back_and_closed_connections_only_warn(monkeypatch, caplog) -> None:
    msg = _message(5, "x", True)
    calls = []

    async def spy(handler: Any, message: Any) -> None:
        calls.append(message)

    monkeypatch.setattr(ws_frames, "_BOKEH_SEND", [spy])
    asyncio.run(_handler_wire(msg, {"mask_outgoing": True}))
    assert calls == [msg]  # a masking connection: Bokeh's own send

    async def closed() -> None:
        from tornado.locks import Lock

        a, b = socket.socketpair()
        ws = WebSocketProtocol13(None, mask_outgoing=False, params=_WebSocketParams())
        ws.stream = IOStream(a)
        b.close()
        a.close()
        handler = SimpleNamespace(ws_connection=ws, write_lock=Lock())
        await send_message_coalesced(handler, msg)  # no exception: a warning, as Bokeh's
        ws.server_terminated = True
        await send_message_coalesced(handler, msg)
        ws.stream.close()

    with caplog.at_level("WARNING"):
        asyncio.run(closed())
    assert caplog.text.count("Failed sending message as connection was closed") == 2


def test_canary_bokehs_send_message_and_write_lock() -> None:
    """What ``send_message_coalesced`` stands in for: Bokeh's coroutine
    ``WSHandler.send_message(self, message)``, writing under ``self.write_lock`` (a Tornado
    lock made in ``__init__``), and the test port it honours."""
    import inspect

    from bokeh.server.views import ws as bokeh_ws

    original = ws_frames._BOKEH_SEND[0]
    assert inspect.iscoroutinefunction(original)
    assert list(inspect.signature(original).parameters) == ["self", "message"]
    assert "write_lock" in inspect.getsource(bokeh_ws.WSHandler.__init__)
    assert hasattr(bokeh_ws, "_message_test_port")

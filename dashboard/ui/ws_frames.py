"""A page's update leaves the server in one socket write, not three.

A Bokeh message is at least three websocket messages (header, metadata, content; two more per
binary buffer).  Panel's ``dispatch_tornado`` writes them with three
``WebSocketHandler.write_message`` calls, and Tornado sends each at once: three ``send``
system calls, three asyncio tasks and three awaits per frame and page.  Profiled at 30
students, the socket writes alone were 12% of the server's loop (``IOStream.write_to_fd``),
more than encoding the frames' JSON.

:func:`coalesce_panel_writes` replaces ``panel.io.document.dispatch_tornado`` by
:func:`dispatch_coalesced`, which frames the same websocket messages exactly as Tornado's
``WebSocketProtocol13`` does for a server (final frame, no mask; RFC 6455, 5.2) and hands
their concatenation to the stream in one write: the same websocket messages on the wire, in
one ``send`` (``tests/ui/test_ws_frames.py`` compares them with Panel's and Tornado's own: the
same bytes when the content is encoded as Bokeh encodes it, see ``orjson`` below).
A connection it cannot frame the same way (per-message compression, a masking client side,
another protocol class) goes through Panel's function unchanged.

Bokeh's own messages (the ``OK`` reply to every frame acknowledgement a page sends, the
document a page pulls) leave through ``WSHandler.send_message``, which wrote them the same way,
three or more writes each; :func:`coalesce_panel_writes` routes them through the same one-write
path (:func:`send_message_coalesced`), under the connection's write lock as Bokeh's.

The content part of a message (the frame's JSON) is encoded with ``orjson`` when it is
installed (:func:`content_bytes`): 1.1 ms -> 0.08 ms for a 17 KB frame of the classroom
benchmark, where the standard library's encoder was 7.5% of the loop at 30 students.  The JSON
*values* are the same, not every byte: a float is written in its shortest round-trip form by
both, but ``1e-07`` becomes ``1e-7``, and non-ASCII text goes as UTF-8 rather than ``\\u``
escapes (the page parses both alike; ``tests/ui/test_ws_frames.py`` compares the parsed values
with hypothesis).  Anything ``orjson`` would write differently from Bokeh's encoder is handed to
Bokeh's encoder instead: objects other than Bokeh's buffer references (dates, dataclasses,
numpy values: Bokeh's serializer never leaves them in a message) and integers beyond 64 bits.
Non-finite floats never reach the encoder either: Bokeh's serializer writes them as
``{"type": "number", ...}`` (the standard encoder, with ``allow_nan=False``, would refuse them;
``orjson`` would write ``null``).  Without ``orjson`` (or with ``BOKEH_PRETTY``) the standard
encoder writes every message, and the bytes are exactly Panel's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import struct
from typing import Any

try:  # an optional speed-up (a dependency of the package; the standard encoder otherwise)
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is installed with the package
    _orjson = None

__all__ = [
    "coalesce_panel_writes",
    "content_bytes",
    "dispatch_coalesced",
    "message_bytes",
    "send_message_coalesced",
    "websocket_frame",
]

_LOG = logging.getLogger(__name__)

_FIN = 0x80
_TEXT, _BINARY = 0x1, 0x2


def websocket_frame(payload: bytes, binary: bool = False) -> bytes:
    """One final, unmasked websocket frame (a server's) carrying ``payload``."""
    opcode = _FIN | (_BINARY if binary else _TEXT)
    n = len(payload)
    if n < 126:
        head = struct.pack("BB", opcode, n)
    elif n <= 0xFFFF:
        head = struct.pack("!BBH", opcode, 126, n)
    else:
        head = struct.pack("!BBQ", opcode, 127, n)
    return head + payload


def _plain_connection(ws: Any) -> bool:
    """Whether ``ws`` frames messages as :func:`websocket_frame` does."""
    from tornado.iostream import BaseIOStream
    from tornado.websocket import WebSocketProtocol13

    return (
        type(ws) is WebSocketProtocol13
        and not ws.mask_outgoing
        and ws._compressor is None
        and isinstance(getattr(ws, "stream", None), BaseIOStream)
    )


def _buffer_ref(obj: Any) -> Any:
    """``orjson``'s hook for what it does not write itself: Bokeh's buffer references, as
    Bokeh's ``PayloadEncoder.default``; anything else goes back to Bokeh's encoder."""
    from bokeh.core.serialization import Buffer

    if isinstance(obj, Buffer):
        return obj.ref
    raise TypeError(f"not written by orjson: {type(obj).__name__}")


#: ``orjson`` options: write dates and dataclasses through the hook (which hands them back to
#: Bokeh's encoder, which refuses them, as before), never in orjson's own formats.
_ORJSON_OPTIONS = (
    0 if _orjson is None else _orjson.OPT_PASSTHROUGH_DATETIME | _orjson.OPT_PASSTHROUGH_DATACLASS
)


def content_bytes(msg: Any) -> bytes:
    """The UTF-8 JSON of ``msg``'s content: ``orjson`` when installed, else (or for anything
    ``orjson`` would not write as Bokeh's encoder does) ``msg.content_json``."""
    cached = getattr(msg, "_content_json", None)
    if cached:
        return cached.encode()
    if _orjson is not None:
        from bokeh.core.serialization import Serialized
        from bokeh.settings import settings

        if not settings.pretty():
            payload = msg.payload
            content = payload.content if isinstance(payload, Serialized) else payload
            try:
                return _orjson.dumps(content, default=_buffer_ref, option=_ORJSON_OPTIONS)
            except TypeError:  # orjson.JSONEncodeError included: Bokeh's encoder decides
                pass
    return msg.content_json.encode()


def message_bytes(ws: Any, msg: Any) -> bytes:
    """``msg``'s websocket frames (header, metadata, content, then each buffer's reference and
    bytes) as one ``bytes``, counted in ``ws``'s statistics as Tornado counts them."""
    parts: list[tuple[bytes, bool]] = [
        (msg.header_json.encode(), False),
        (msg.metadata_json.encode(), False),
        (content_bytes(msg), False),
    ]
    for buffer in msg._buffers:
        parts.append((json.dumps(buffer.ref).encode(), False))
        parts.append((bytes(buffer.to_bytes()), True))
    data = b"".join(websocket_frame(payload, binary) for payload, binary in parts)
    ws._message_bytes_out += sum(len(payload) for payload, _ in parts)
    ws._wire_bytes_out += len(data)
    return data


def dispatch_coalesced(conn: Any, events: Any = None, msg: Any = None) -> list[Any]:
    """Panel's ``dispatch_tornado`` (same arguments, same result: futures to await) with the
    message's websocket frames written to the socket at once."""
    from tornado.iostream import StreamClosedError
    from tornado.websocket import WebSocketClosedError

    socket = conn._socket
    ws = getattr(socket, "ws_connection", None)
    if not ws or ws.is_closing():
        return []
    if not _plain_connection(ws):
        return _PANEL_DISPATCH[0](conn, events, msg)
    if msg is None:
        if not events:
            return []
        msg = conn.protocol.create("PATCH-DOC", events)
    data = message_bytes(ws, msg)
    try:
        fut = ws.stream.write(data)
    except StreamClosedError:
        raise WebSocketClosedError() from None

    async def sent() -> None:
        try:
            await fut
        except StreamClosedError:
            raise WebSocketClosedError() from None

    return [asyncio.ensure_future(sent())]


async def send_message_coalesced(handler: Any, message: Any) -> None:
    """Bokeh's ``WSHandler.send_message`` (same argument, same outcome) with the message's
    websocket frames written at once, under the connection's write lock as Bokeh's."""
    from bokeh.server.views import ws as bokeh_ws
    from tornado.iostream import StreamClosedError
    from tornado.websocket import WebSocketClosedError

    ws = getattr(handler, "ws_connection", None)
    testing = getattr(bokeh_ws, "_message_test_port", None) is not None
    if not ws or testing or not _plain_connection(ws):
        return await _BOKEH_SEND[0](handler, message)
    try:
        with await handler.write_lock.acquire():
            if ws.is_closing():
                raise WebSocketClosedError()
            try:
                await ws.stream.write(message_bytes(ws, message))
            except StreamClosedError:
                raise WebSocketClosedError() from None
    except WebSocketClosedError:
        # as Bokeh's: on_close() is / will be called anyway
        _LOG.warning("Failed sending message as connection was closed")
    return None


_PANEL_DISPATCH: list[Any] = []
_BOKEH_SEND: list[Any] = []


def coalesce_panel_writes() -> bool:
    """Install :func:`dispatch_coalesced` as Panel's websocket dispatch and
    :func:`send_message_coalesced` as Bokeh's ``WSHandler.send_message`` (once); returns
    whether they were installed now."""
    import panel.io.document as document
    from bokeh.server.views.ws import WSHandler

    current = document.dispatch_tornado
    if getattr(current, "_dashboard_coalesced", False):
        return False
    _PANEL_DISPATCH[:] = [current]
    _BOKEH_SEND[:] = [WSHandler.send_message]
    dispatch_coalesced._dashboard_coalesced = True  # type: ignore[attr-defined]
    document.dispatch_tornado = dispatch_coalesced
    WSHandler.send_message = send_message_coalesced  # type: ignore[method-assign]
    return True

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
their concatenation to the stream in one write: the same bytes on the wire
(``tests/ui/test_ws_frames.py`` compares them with Panel's and Tornado's own), in one ``send``.
A connection it cannot frame the same way (per-message compression, a masking client side,
another protocol class) goes through Panel's function unchanged.
"""

from __future__ import annotations

import asyncio
import json
import struct
from typing import Any

__all__ = ["coalesce_panel_writes", "dispatch_coalesced", "websocket_frame"]

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
    parts: list[tuple[bytes, bool]] = [
        (msg.header_json.encode(), False),
        (msg.metadata_json.encode(), False),
        (msg.content_json.encode(), False),
    ]
    for buffer in msg._buffers:
        parts.append((json.dumps(buffer.ref).encode(), False))
        parts.append((bytes(buffer.to_bytes()), True))
    data = b"".join(websocket_frame(payload, binary) for payload, binary in parts)
    ws._message_bytes_out += sum(len(payload) for payload, _ in parts)
    ws._wire_bytes_out += len(data)
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


_PANEL_DISPATCH: list[Any] = []


def coalesce_panel_writes() -> bool:
    """Install :func:`dispatch_coalesced` as Panel's websocket dispatch (once); returns whether
    it was installed now."""
    import panel.io.document as document

    current = document.dispatch_tornado
    if getattr(current, "_dashboard_coalesced", False):
        return False
    _PANEL_DISPATCH[:] = [current]
    dispatch_coalesced._dashboard_coalesced = True  # type: ignore[attr-defined]
    document.dispatch_tornado = dispatch_coalesced
    return True

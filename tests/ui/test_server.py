"""Server hardening: unretrieved closed-websocket write errors become one debug line, every
other loop error is still reported; the header limit of a running HTTP server is raised."""

from __future__ import annotations

import asyncio
import logging

from tornado.httpserver import HTTPServer
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError

from dashboard.ui.server import MAX_HEADER_BYTES, quiet_closed_connections, raise_header_limit


def test_closed_socket_errors_are_quiet_and_others_are_not(caplog):
    loop = asyncio.new_event_loop()
    try:
        assert quiet_closed_connections(loop) is True
        assert quiet_closed_connections(loop) is False  # installed once
        caplog.set_level(logging.DEBUG)
        for exc in (WebSocketClosedError(), StreamClosedError()):
            loop.call_exception_handler(
                {"message": "Task exception was never retrieved", "exception": exc}
            )
        loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert loud == []
        assert any("page closed" in r.getMessage() for r in caplog.records)
        loop.call_exception_handler(
            {"message": "Task exception was never retrieved", "exception": ZeroDivisionError()}
        )
        assert any(
            r.levelno >= logging.ERROR and "never retrieved" in r.getMessage()
            for r in caplog.records
        )
    finally:
        loop.close()


def test_without_a_running_loop_nothing_is_installed():
    assert quiet_closed_connections() is False


def test_header_limit_of_running_servers_is_raised():
    server = HTTPServer(lambda request: None)
    try:
        assert server.conn_params.max_header_size < MAX_HEADER_BYTES
        assert raise_header_limit() >= 1
        assert server.conn_params.max_header_size == MAX_HEADER_BYTES
    finally:
        server.stop()

"""Server-side hardening of a served dashboard (``panel serve dashboard`` or ``pn.serve``).

* :func:`raise_header_limit`: Tornado refuses a request whose request line and headers
  exceed 64 kB (``HTTPServer(max_header_size=65536)``) and the browser shows a reset
  connection instead of the page.  A shared link with a very long query (issue 12: "a 200 kB
  query string does not load at all") must still load and say what it ignored.  Neither
  ``panel serve`` nor ``bokeh serve`` exposes the HTTP server's keyword arguments (only
  ``Server(http_server_kwargs=...)`` in code, bokeh/bokeh#6350), so the running
  ``HTTPServer`` is found among live objects once and its connection parameters
  (``conn_params.max_header_size``, read for each new connection) are raised.
* :func:`quiet_closed_connections`: when a page closes while a message to it is in flight,
  Tornado's write task ends with ``WebSocketClosedError`` (from ``StreamClosedError``) that
  nobody awaits, and asyncio logs it as "Task exception was never retrieved" with two
  tracebacks.  The dashboard stops pushing to sessions without a connection
  (``DashboardApp._page_connected``); this loop exception handler turns the unavoidable
  last in-flight write into one debug line, and passes every other error on unchanged.

* :func:`session_query`: the session's query as text, whatever bytes a link holds
  (``?d=%FF`` was a ``UnicodeDecodeError`` and a traceback in the page).

* :func:`guard_panel_query_parser`: Panel's ``Location`` parses the page's query whenever it
  changes (even with nothing synced) with ``panel.util.parse_query``, which converts digit
  strings with ``int()``: a value of more than 4300 digits raises ``ValueError`` inside
  ``pn.state.location`` and the page does not load at all.  The dashboard reads its query with
  :mod:`dashboard.ui.urlstate` (bounded), so Panel's parse only needs to never raise: the
  guard falls back to the plain string values.

``tests/ui/test_canaries.py`` fails loudly if Tornado or Panel rename what this relies on.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

import panel as pn

__all__ = [
    "MAX_HEADER_BYTES",
    "guard_panel_query_parser",
    "harden_server",
    "query_of",
    "quiet_closed_connections",
    "raise_header_limit",
    "serve_panel_css_locally",
    "session_query",
]

#: Largest request line + headers accepted (Chromium's own URL limit is 2 MB).
MAX_HEADER_BYTES = 1_048_576

log = logging.getLogger(__name__)


def raise_header_limit(limit: int = MAX_HEADER_BYTES) -> int:
    """Raise ``max_header_size`` of every running Tornado HTTP server of this process to at
    least ``limit`` bytes; return how many servers were updated."""
    from tornado.httpserver import HTTPServer

    updated = 0
    for obj in gc.get_objects():
        if isinstance(obj, HTTPServer):
            params = getattr(obj, "conn_params", None)
            if params is not None and (params.max_header_size or 0) < limit:
                params.max_header_size = limit
                updated += 1
    return updated


def _closed_socket_error(exc: BaseException | None) -> bool:
    from tornado.iostream import StreamClosedError
    from tornado.websocket import WebSocketClosedError

    return isinstance(exc, (WebSocketClosedError, StreamClosedError))


def quiet_closed_connections(loop: asyncio.AbstractEventLoop | None = None) -> bool:
    """Install (once) a loop exception handler that logs unretrieved closed-websocket write
    errors as one debug line; returns whether it was installed now."""
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
    previous = loop.get_exception_handler()
    if getattr(previous, "_dashboard_quiet", False):
        return False

    def handler(lp: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if _closed_socket_error(context.get("exception")):
            log.debug("a page closed while a message to it was in flight (ignored)")
            return
        if previous is not None:
            previous(lp, context)
        else:
            lp.default_exception_handler(context)

    handler._dashboard_quiet = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)
    return True


def guard_panel_query_parser() -> bool:
    """Make ``panel.io.location``'s query parser total (never raising); returns whether the
    guard was installed now."""
    from urllib.parse import parse_qsl

    import panel.io.location as location

    original = location.parse_query
    if getattr(original, "_dashboard_guard", False):
        return False

    def parse_query(query: str) -> dict[str, Any]:
        try:
            return original(query)
        except Exception:  # e.g. int() of > 4300 digits: keep the strings, unparsed
            return dict(parse_qsl(query[1:], keep_blank_values=True))

    parse_query._dashboard_guard = True  # type: ignore[attr-defined]
    location.parse_query = parse_query
    return True


def harden_server() -> None:
    """All of the above, for the running server (called when it has loaded the app), and
    Panel's ``/components/`` route limited to loaded or allowed modules and its
    ``autoload.js`` behind the login (:func:`dashboard.ui.routes.guard_routes`)."""
    from .routes import guard_routes

    guard_routes()
    if raise_header_limit() == 0:
        log.warning("could not raise the HTTP header limit: links over 64 kB will not load")
    quiet_closed_connections()
    guard_panel_query_parser()


def session_query() -> dict[str, str]:
    """The page's URL query of a served session (first value per key; empty otherwise).
    Never raises, whatever bytes the query holds (see :func:`query_of`)."""
    try:
        args = pn.state.session_args or {}
    except Exception:  # no session (notebook, headless)
        return {}
    return query_of(args)


def query_of(args: Any) -> dict[str, str]:
    """``{key: [bytes, ...]}`` (Tornado's parsed query) -> ``{key: first value as text}``.

    Any bytes at all (``?d=%FF``): the undecodable ones become U+FFFD, which no setting
    accepts, so the page loads and says what it ignored instead of failing to decode."""
    out: dict[str, str] = {}
    for key, values in dict(args or {}).items():
        if isinstance(key, bytes):
            key = key.decode("utf-8", "replace")
        if isinstance(values, (bytes, str)):
            values = [values]
        if values:
            value = values[0]
            out[str(key)] = (
                value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            )
    return out


def serve_panel_css_locally() -> None:
    """Make every Panel stylesheet of this session come from this server, not the CDN.

    Panel points its stylesheets at ``cdn.holoviz.org`` while a session's document is built and
    rewrites them to the server's own copies only when it renders the page's HTML. A session
    that Bokeh creates from the websocket instead (the page's session expired before the
    socket connected, e.g. on a loaded machine, or after a reconnect) never gets that rewrite,
    so an offline classroom would see unstyled widgets. Telling the document its ``dist_url``
    up front (the value Panel would set, honouring ``pn.config.resources``) makes both paths
    load only local files. ``_template_variables`` is private Panel API; Panel itself reads and
    writes it for exactly this purpose (``panel/io/server.py``, ``panel/reactive.py``).
    """
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return  # notebooks and headless use have their own resource handling
    from panel.io.resources import get_dist_path

    doc._template_variables.setdefault("dist_url", get_dist_path())

"""Server hooks of ``panel serve dashboard`` (Bokeh's directory-app ``app_hooks.py``).

Tornado refuses an HTTP request whose request line and headers exceed 64 kB
(``HTTPServer(max_header_size=65536)``): the browser then shows a reset connection, not the
page.  A shared link with a very long query (issue 12: a 200 kB query string "does not load
at all") must still load and say what it ignored, so :func:`on_server_loaded` raises the
limit of the server that serves this app to :data:`MAX_HEADER_BYTES`.  Neither ``panel
serve`` nor ``bokeh serve`` exposes the HTTP server's keyword arguments, so the running
``HTTPServer`` is found among live objects once at start-up and its connection parameters
(``conn_params.max_header_size``, read for every new connection) are updated;
``tests/ui/test_canaries.py`` fails loudly if Tornado renames them.  The app itself reads at
most the first 20,000 characters of a query (``dashboard.ui.urlstate``).
"""

from __future__ import annotations

import gc
import logging
from typing import Any

__all__ = ["MAX_HEADER_BYTES", "on_server_loaded", "raise_header_limit"]

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


def on_server_loaded(server_context: Any) -> None:
    """Bokeh calls this once the server is up (the HTTP server exists by then)."""
    if raise_header_limit() == 0:
        log.warning("could not raise the HTTP header limit: links over 64 kB will not load")

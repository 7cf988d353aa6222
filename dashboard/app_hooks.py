"""Server hooks of ``panel serve dashboard`` (Bokeh's directory-app ``app_hooks.py``):
links over 64 kB load, closed pages leave no tracebacks, Panel's ``/components/`` route imports
nothing a URL names and ``autoload.js`` needs the login (see :mod:`dashboard.ui.server`,
:mod:`dashboard.ui.routes`)."""

from __future__ import annotations

from typing import Any

from dashboard.ui.routes import guard_routes
from dashboard.ui.server import harden_server

__all__ = ["on_server_loaded"]

# Bokeh loads this file while it builds the application, before the server listens: the
# route is guarded before the first request can reach it.
guard_routes()


def on_server_loaded(server_context: Any) -> None:
    """Bokeh calls this on the event loop once the server is up (its HTTP server exists)."""
    harden_server()
